//! A message still streaming when its turn is cancelled (stop, or interrupted by a newer turn) or
//! fails keeps the text that arrived and is marked `interrupted` (issue 13): the user was reading
//! it. Empty placeholders still go, the summary (equal for live and persisted views) leaves the
//! kept message out, and its calls never ran (no result, not uncertain, not in the call index).
use forgestream_core::reduce::{ItemBody, ReducerConfig, SessionView, Warning};

const CREATED: &str = r#"{"type":"turn.created","id":"e0","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}"#;
const PLACEHOLDER: &str = r#"{"type":"model.message","id":"m1","thread_id":"main"}"#;
const DELTA: &str = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"The refund for ORD-","reasoning_content":"Look up"}"#;
const CALL: &str = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":"{\"order"}}]}"#;

fn done(status: &str) -> String {
    let state = match status {
        "cancelled" => {
            r#"{"status":"cancelled","reason":"client-cancelled","completed_at":"2026-12-01T00:00:00Z"}"#
        }
        _ => r#"{"status":"error","message":"model failed","completed_at":"2026-12-01T00:00:00Z"}"#,
    };
    format!(r#"{{"type":"turn.done","id":"e9","thread_id":null,"turn_id":"t1","state":{state}}}"#)
}

fn streamed() -> SessionView {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    view.apply_live("t1", Some(1), CREATED).unwrap();
    view.apply_live("t1", Some(2), PLACEHOLDER).unwrap();
    view.apply_live("t1", Some(3), DELTA).unwrap();
    view
}

fn message(view: &SessionView) -> forgestream_core::reduce::MessageView {
    match &view.item("t1", "m1").expect("the message is kept").body {
        ItemBody::Message(m) => m.clone(),
        other => panic!("not a message: {other:?}"),
    }
}

#[test]
fn stop_keeps_the_streamed_text_marked_interrupted() {
    for status in ["cancelled", "error"] {
        let mut view = streamed();
        let before = view.item("t1", "m1").unwrap().version;
        let changes = view.apply_live("t1", Some(4), &done(status)).unwrap();
        let m = message(&view);
        assert!(m.interrupted, "{status}: marked");
        assert!(!m.complete, "{status}: never finished");
        assert_eq!(
            m.content,
            Some(forgestream_core::reduce::ContentView::Text(
                "The refund for ORD-".into()
            ))
        );
        assert_eq!(m.reasoning().map(|t| t.as_str()), Some("Look up"));
        let item = view.item("t1", "m1").unwrap();
        assert!(item.version > before, "{status}: the version moved");
        assert!(
            changes.items.iter().any(|c| c.key == "m1" && !c.removed),
            "{status}: reported as changed, not removed"
        );
        assert!(changes
            .warnings
            .contains(&Warning::UnfinishedMessageInterrupted {
                turn_id: "t1".into(),
                message_id: "m1".into()
            }));
    }
}

#[test]
fn the_summary_shows_the_servers_history_without_it() {
    let mut view = streamed();
    view.apply_live("t1", Some(4), &done("cancelled")).unwrap();
    let summary = view.summary();
    assert_eq!(summary["turns"][0]["items"], serde_json::json!([]));
    assert_eq!(summary["turns"][0]["status"], "cancelled");
}

#[test]
fn an_empty_placeholder_still_goes() {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    view.apply_live("t1", Some(1), CREATED).unwrap();
    view.apply_live("t1", Some(2), PLACEHOLDER).unwrap();
    let changes = view.apply_live("t1", Some(3), &done("error")).unwrap();
    assert!(view.item("t1", "m1").is_none());
    assert!(changes.items.iter().any(|c| c.key == "m1" && c.removed));
}

#[test]
fn its_calls_never_ran_and_are_not_uncertain() {
    let mut view = streamed();
    view.apply_live("t1", Some(4), CALL).unwrap();
    view.apply_live("t1", Some(5), &done("cancelled")).unwrap();
    let m = message(&view);
    assert!(m.interrupted);
    assert_eq!(m.tool_calls().len(), 1);
    let call = &m.tool_calls()[0];
    assert_eq!(call.arguments_text, "{\"order");
    assert!(
        !call.uncertain(),
        "a call whose arguments never finished was not dispatched"
    );
    assert!(call.result_event_id.is_none());
    assert!(view.pending_actions().is_empty());
}

#[test]
fn late_deltas_after_the_stop_do_not_grow_it() {
    let mut view = streamed();
    view.apply_live("t1", Some(4), &done("cancelled")).unwrap();
    let _ = view.apply_live("t1", Some(5), DELTA);
    assert_eq!(
        message(&view).content,
        Some(forgestream_core::reduce::ContentView::Text(
            "The refund for ORD-".into()
        ))
    );
}
