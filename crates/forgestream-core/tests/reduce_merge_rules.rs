//! Merge rules a whole-core mutation sample (scripts/mutants, shard 0/40) found unpinned:
//! tool-call arguments parsed as soon as their JSON closes (PROTOCOL §5: `arguments` streams as
//! text fragments), and a message's merged form (`model.message` with the full body) replacing
//! the assembled one without looking like a change and without losing the reducer's links
//! (the call's result, spawned threads).
use forgestream_core::reduce::{ItemBody, ReducerConfig, SessionView, ToolCallView};
use forgestream_core::wire::JsonText;
use serde_json::json;

const CREATED: &str = r#"{"type":"turn.created","id":"e0","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}"#;
const PLACEHOLDER: &str = r#"{"type":"model.message","id":"m1","thread_id":"main"}"#;
const CALL_START: &str = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"Looking it up.","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":"{\"order_id\":"}}]}"#;
const CALL_END: &str = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","tool_calls":[{"index":0,"function":{"arguments":"\"ORD-1\"}"}}]}"#;
const FINISH: &str =
    r#"{"type":"model.message.delta","id":"m1","thread_id":"main","finish_reason":"tool_calls"}"#;
const RESULT: &str = r#"{"type":"tool.response","id":"e5","thread_id":"main","tool_call_id":"call_1","content":"{\"status\":\"shipped\"}"}"#;
/// The same message as the deltas above assembled it, sent whole.
const MERGED: &str = r#"{"type":"model.message","id":"m1","thread_id":"main","content":"Looking it up.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":"{\"order_id\":\"ORD-1\"}"}}],"finish_reason":"tool_calls"}"#;

fn call(view: &SessionView) -> ToolCallView {
    match &view.item("t1", "m1").expect("the message").body {
        ItemBody::Message(m) => m.tool_calls().first().expect("one call").clone(),
        other => panic!("not a message: {other:?}"),
    }
}

fn streamed() -> SessionView {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    for (seq, frame) in [CREATED, PLACEHOLDER, CALL_START, CALL_END]
        .iter()
        .enumerate()
    {
        view.apply_live("t1", Some(seq as u64 + 1), frame).unwrap();
    }
    view
}

#[test]
fn arguments_are_parsed_when_their_json_closes_before_the_message_ends() {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    for (seq, frame) in [CREATED, PLACEHOLDER, CALL_START].iter().enumerate() {
        view.apply_live("t1", Some(seq as u64 + 1), frame).unwrap();
    }
    assert_eq!(call(&view).arguments, None, "an open object is not parsed");
    view.apply_live("t1", Some(4), CALL_END).unwrap();
    let c = call(&view);
    assert_eq!(c.arguments_text, r#"{"order_id":"ORD-1"}"#);
    assert_eq!(
        c.arguments.as_ref().map(JsonText::to_value),
        Some(json!({"order_id": "ORD-1"})),
        "parsed as soon as it closed, with the message still streaming"
    );
    assert_eq!(c.arguments_error(), None);
}

#[test]
fn the_merged_form_of_an_assembled_message_is_no_change_and_keeps_the_result_link() {
    let mut view = streamed();
    view.apply_live("t1", Some(5), FINISH).unwrap();
    view.apply_live("t1", Some(6), RESULT).unwrap();
    let before = view.item("t1", "m1").unwrap().version;
    assert_eq!(call(&view).result_event_id.as_deref(), Some("e5"));

    let changes = view.apply_live("t1", Some(7), MERGED).unwrap();
    assert_eq!(
        call(&view).result_event_id.as_deref(),
        Some("e5"),
        "the reducer's link to the result survives the replacement"
    );
    assert_eq!(
        view.item("t1", "m1").unwrap().version,
        before,
        "the same message sent whole is not a new version"
    );
    assert!(
        !changes.items.iter().any(|c| c.key == "m1"),
        "and is not reported as changed: {:?}",
        changes.items
    );
}

/// `finish_reason`: latest wins (PROTOCOL §5). The same reason again changes nothing, so the
/// message keeps its version and is not reported: the SDK re-renders only what the core reports
/// changed (`pkg/src/snapshot.ts`). Mutation shard 2/40 found this unpinned.
#[test]
fn a_repeated_finish_reason_is_no_change_and_a_new_one_is() {
    let mut view = streamed();
    view.apply_live("t1", Some(5), FINISH).unwrap();
    let before = view.item("t1", "m1").unwrap().version;
    let changes = view.apply_live("t1", Some(6), FINISH).unwrap();
    assert_eq!(view.item("t1", "m1").unwrap().version, before);
    assert!(
        !changes.items.iter().any(|c| c.key == "m1"),
        "{:?}",
        changes.items
    );
    let changes = view
        .apply_live("t1", Some(7), &FINISH.replace("tool_calls", "stop"))
        .unwrap();
    let item = view.item("t1", "m1").unwrap();
    assert!(item.version > before);
    assert!(
        matches!(&item.body, ItemBody::Message(m) if m.finish_reason().map(|r| r.as_str()) == Some("stop"))
    );
    assert!(changes.items.iter().any(|c| c.key == "m1"));
}

#[test]
fn a_merged_form_that_differs_is_a_new_version() {
    let mut view = streamed();
    view.apply_live("t1", Some(5), FINISH).unwrap();
    let before = view.item("t1", "m1").unwrap().version;
    let other = MERGED.replace("ORD-1", "ORD-2");
    let changes = view.apply_live("t1", Some(6), &other).unwrap();
    assert!(view.item("t1", "m1").unwrap().version > before);
    assert_eq!(
        call(&view).arguments.as_ref().map(JsonText::to_value),
        Some(json!({"order_id": "ORD-2"}))
    );
    assert!(changes.items.iter().any(|c| c.key == "m1"));
}

#[test]
fn the_view_names_its_session() {
    assert_eq!(
        SessionView::new("s-42", ReducerConfig::default()).session_id(),
        "s-42"
    );
}

/// Merging a later change set keeps every flag either side raised (a drain that merged a frame
/// announcing new pending actions into an earlier one must still say so).
#[test]
fn merged_change_sets_keep_every_raised_flag() {
    use forgestream_core::reduce::ChangeSet;
    let flags = |c: &ChangeSet| {
        [
            c.order_changed,
            c.pending_changed,
            c.threads_changed,
            c.usage_changed,
        ]
    };
    for raised in 0..4 {
        let mut later = ChangeSet::default();
        match raised {
            0 => later.order_changed = true,
            1 => later.pending_changed = true,
            2 => later.threads_changed = true,
            _ => later.usage_changed = true,
        }
        let mut earlier = ChangeSet::default();
        earlier.merge(later.clone());
        assert_eq!(
            flags(&earlier),
            flags(&later),
            "flag {raised} into a clear set"
        );
        let mut both = later.clone();
        both.merge(ChangeSet::default());
        assert_eq!(
            flags(&both),
            flags(&later),
            "flag {raised} kept by a clear merge"
        );
    }
}

/// A delta whose `content` is an array of parts (PROTOCOL §5: content is a string or parts)
/// appends its text parts to the text and keeps the other parts in order (shard 4/40 found the
/// parts arm unpinned: dropping it lost the text).
#[test]
fn a_delta_with_content_parts_appends_them() {
    use forgestream_core::reduce::{ContentPartView, ContentView};
    let mut view = SessionView::new("s1", ReducerConfig::default());
    let parts = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":[{"type":"text","text":" world"},{"type":"refusal","refusal":"no"}]}"#;
    let text = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"Hello"}"#;
    for (seq, frame) in [CREATED, PLACEHOLDER, text].iter().enumerate() {
        view.apply_live("t1", Some(seq as u64 + 1), frame).unwrap();
    }
    let before = view.item("t1", "m1").unwrap().version;
    let changes = view.apply_live("t1", Some(4), parts).unwrap();
    let item = view.item("t1", "m1").unwrap();
    assert!(item.version > before, "a parts delta is a change");
    assert!(changes.items.iter().any(|c| c.key == "m1"));
    let ItemBody::Message(m) = &item.body else {
        panic!("not a message: {:?}", item.body)
    };
    assert_eq!(
        m.content,
        Some(ContentView::Parts(
            vec![
                ContentPartView::Text {
                    text: "Hello world".into()
                },
                ContentPartView::Refusal {
                    refusal: "no".into()
                },
            ]
            .into()
        ))
    );
}

/// A tool result that arrived before its call (another thread's order, or a listing's) is linked
/// to the call's message once the call arrives, as a new version of the result item (shard 4/40:
/// the version bump was unpinned, so a consumer holding the old version kept the unlinked one).
#[test]
fn a_result_before_its_call_is_linked_as_a_new_version() {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    for (seq, frame) in [CREATED, PLACEHOLDER, RESULT].iter().enumerate() {
        view.apply_live("t1", Some(seq as u64 + 1), frame).unwrap();
    }
    let result = |view: &SessionView| {
        let turn = view.turn("t1").unwrap();
        let item = turn
            .items
            .values()
            .find(|i| matches!(i.body, ItemBody::ToolResult(_)))
            .expect("the result item")
            .clone();
        item
    };
    let before = result(&view);
    assert!(
        matches!(&before.body, ItemBody::ToolResult(r) if r.call_message_id.is_none()),
        "{before:?}"
    );
    let changes = view.apply_live("t1", Some(4), CALL_START).unwrap();
    let after = result(&view);
    assert!(
        after.version > before.version,
        "{} → {}",
        before.version,
        after.version
    );
    let ItemBody::ToolResult(r) = &after.body else {
        unreachable!()
    };
    assert_eq!(r.call_message_id.as_deref(), Some("m1"));
    assert_eq!(r.call_turn_id.as_deref(), Some("t1"));
    assert!(changes.items.iter().any(|c| c.key == after.key));
}

/// A subagent thread first seen through one of its events is a placeholder; its `thread.created`
/// (persisted order may put it later) fills in the title and agent as a new thread version and a
/// threads change, and the same `thread.created` again changes nothing (shard 5/40 found the
/// comparison unpinned).
#[test]
fn a_thread_created_after_its_events_fills_the_placeholder_as_a_new_version() {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    let child = r#"{"type":"model.message","id":"c1","thread_id":"sub-1","content":"child text"}"#;
    let created = r#"{"type":"thread.created","id":"th1","thread_id":"sub-1","title":"order-lookup","agent_info":{"type":"dynamic","name":"order-lookup"},"parent":{"tool_call_id":"call_1","thread_id":"main"}}"#;
    for (seq, frame) in [CREATED, child].iter().enumerate() {
        view.apply_live("t1", Some(seq as u64 + 1), frame).unwrap();
    }
    let before = view.threads().get("sub-1").expect("a placeholder").clone();
    assert!(before.placeholder && before.title.is_none(), "{before:?}");
    let changes = view.apply_live("t1", Some(3), created).unwrap();
    let after = view.threads().get("sub-1").unwrap().clone();
    assert!(!after.placeholder);
    assert_eq!(after.title.as_deref(), Some("order-lookup"));
    assert_eq!(after.agent_name.as_deref(), Some("order-lookup"));
    assert!(
        after.version > before.version,
        "{} → {}",
        before.version,
        after.version
    );
    assert!(changes.threads_changed);
    let again = view
        .apply_live("t1", Some(4), &created.replace("th1", "th2"))
        .unwrap();
    assert_eq!(view.threads().get("sub-1").unwrap().version, after.version);
    assert!(
        !again.threads_changed,
        "the same thread again is no thread change"
    );
}
