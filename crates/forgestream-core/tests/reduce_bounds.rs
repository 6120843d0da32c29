//! The reducer's bounds (issue 18). The text bounds (item 3): a message's and a turn's streamed
//! text stop growing at their bound with `ReduceError::TextTooLong`, keeping what was received
//! (300 MB of deltas used to take a tab to 1.9 GB and kill it).
//!
//! The per-turn event cap (item 8): it never refuses `turn.done` (before, a capped turn
//! stayed `running`, was rebuilt one delta short, or replayed again and again while the server
//! still reported it running), and live and persisted events count apart, so a turn capped live
//! is rebuilt whole from its listing, once.
use forgestream_core::reduce::{
    ContentView, ItemBody, ReduceError, ReducerConfig, SessionView, TurnStatus,
};
use forgestream_core::wire;

const CREATED: &str = r#"{"type":"turn.created","id":"e0","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}"#;
const BASE: &str = r#"{"type":"model.message","id":"m1","thread_id":"main"}"#;
const MERGED: &str = r#"{"type":"model.message","id":"m1","thread_id":"main","content":"abcd","finish_reason":"stop"}"#;
const DONE: &str = r#"{"type":"turn.done","id":"e9","state":{"status":"done"}}"#;

fn delta(text: &str) -> String {
    format!(r#"{{"type":"model.message.delta","id":"m1","thread_id":"main","content":"{text}"}}"#)
}

fn capped_view() -> SessionView {
    let mut view = SessionView::new(
        "s1",
        ReducerConfig {
            max_events_per_turn: 4,
            ..ReducerConfig::default()
        },
    );
    view.apply_live("t1", Some(1), CREATED).unwrap();
    view.apply_live("t1", Some(2), BASE).unwrap();
    view.apply_live("t1", Some(3), &delta("a")).unwrap();
    view.apply_live("t1", Some(4), &delta("b")).unwrap();
    for (seq, frame) in [(5, delta("c")), (6, delta("d")), (7, String::from(MERGED))] {
        assert!(matches!(
            view.apply_live("t1", Some(seq), &frame),
            Err(ReduceError::EventCapExceeded { cap: 4, .. })
        ));
    }
    view
}

fn text(view: &SessionView) -> String {
    match view.item("t1", "m1").map(|i| &i.body) {
        Some(ItemBody::Message(m)) => match &m.content {
            Some(ContentView::Text(t)) => t.clone(),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

#[test]
fn turn_done_past_the_cap_is_applied() {
    let mut view = capped_view();
    assert!(view.event_cap_reached("t1"));
    view.apply_live("t1", Some(8), DONE)
        .expect("turn.done is never refused by the cap");
    assert_eq!(view.turn("t1").unwrap().status, TurnStatus::Done);
    assert_eq!(view.last_sequence_number("t1"), Some(8));
    assert_eq!(
        text(&view),
        "ab",
        "what was received before the cap is kept"
    );
}

#[test]
fn a_turn_capped_live_is_rebuilt_whole_from_its_listing() {
    let mut view = capped_view();
    view.apply_live("t1", Some(8), DONE).unwrap();
    let listing: Vec<wire::Event> = [CREATED, MERGED, DONE]
        .iter()
        .map(|e| wire::Event::from_json(e).unwrap())
        .collect();
    view.apply_turn_events("t1", listing)
        .expect("the listing's 3 events are under the cap of 4");
    assert_eq!(text(&view), "abcd");
    assert_eq!(view.turn("t1").unwrap().status, TurnStatus::Done);
}

#[test]
fn a_listing_over_the_cap_still_applies_its_turn_done() {
    let mut view = SessionView::new(
        "s1",
        ReducerConfig {
            max_events_per_turn: 2,
            ..ReducerConfig::default()
        },
    );
    let listing: Vec<wire::Event> = [CREATED, BASE, MERGED]
        .iter()
        .map(|e| wire::Event::from_json(e).unwrap())
        .collect();
    assert!(matches!(
        view.apply_turn_events("t1", listing),
        Err(ReduceError::EventCapExceeded { cap: 2, .. })
    ));
    let done = vec![wire::Event::from_json(DONE).unwrap()];
    view.apply_turn_events("t1", done).unwrap();
    assert_eq!(view.turn("t1").unwrap().status, TurnStatus::Done);
}

/// The connection machine's half: a capped turn's `turn.done` (`TurnDoneIncomplete`) closes the
/// stream and rebuilds once, then settles `Done` — instead of `Done` with a view a delta short.
#[test]
fn the_machine_rebuilds_a_capped_turn_once_then_settles() {
    use forgestream_core::resume::{
        Command, Config, Connection, ConnectionStatus, Input, StartMode,
    };
    let mut conn = Connection::new(Config::default());
    let drain =
        |conn: &mut Connection| std::iter::from_fn(|| conn.poll_command()).collect::<Vec<_>>();
    conn.handle(
        Input::Start {
            mode: StartMode::CreateTurn,
        },
        0,
    );
    assert!(drain(&mut conn).contains(&Command::PostTurn));
    conn.handle(
        Input::ResponseHeaders {
            status: 200,
            retry_after_ms: None,
        },
        1,
    );
    for seq in 1..=5 {
        conn.handle(
            Input::Event {
                sequence_number: Some(seq),
                turn_done: false,
            },
            2,
        );
    }
    drain(&mut conn);
    conn.handle(Input::TurnDoneIncomplete, 3);
    let commands = drain(&mut conn);
    assert!(commands.contains(&Command::Abort), "{commands:?}");
    assert!(commands.contains(&Command::Rebuild), "{commands:?}");
    assert_eq!(conn.status(), Some(&ConnectionStatus::Rebuilding));
    conn.handle(Input::RebuildDone { terminal: true }, 4);
    assert_eq!(conn.status(), Some(&ConnectionStatus::Done));
    assert!(drain(&mut conn).contains(&Command::ClearPersisted));
}

#[test]
fn text_stops_growing_at_the_message_and_turn_bounds_and_keeps_what_came() {
    let mut view = SessionView::new(
        "s1",
        ReducerConfig {
            max_message_text_bytes: 10,
            max_turn_text_bytes: 16,
            ..ReducerConfig::default()
        },
    );
    view.apply_live("t1", Some(1), CREATED).unwrap();
    view.apply_live("t1", Some(2), BASE).unwrap();
    view.apply_live("t1", Some(3), &delta("aaaa")).unwrap();
    view.apply_live("t1", Some(4), &delta("bbbbbb")).unwrap();
    assert!(!view.text_limit_reached("t1"));
    // 10 bytes is the message bound: one more byte is refused, whole (no half delta).
    assert_eq!(
        view.apply_live("t1", Some(5), &delta("c")),
        Err(ReduceError::TextTooLong {
            turn_id: "t1".into(),
            event_id: "m1".into(),
            bound: "message",
            limit_bytes: 10,
        })
    );
    assert!(view.text_limit_reached("t1"));
    assert_eq!(text(&view), "aaaabbbbbb", "what was received is kept");
    // A second message may grow until the turn's 16 bytes.
    let second = r#"{"type":"model.message","id":"m2","thread_id":"main"}"#;
    view.apply_live("t1", Some(6), second).unwrap();
    let delta2 = |t: &str| {
        format!(
            r#"{{"type":"model.message.delta","id":"m2","thread_id":"main","reasoning_content":"{t}"}}"#
        )
    };
    view.apply_live("t1", Some(7), &delta2("xxxxxx")).unwrap();
    assert!(matches!(
        view.apply_live("t1", Some(8), &delta2("y")),
        Err(ReduceError::TextTooLong {
            bound: "turn",
            limit_bytes: 16,
            ..
        })
    ));
    // Decoded events take the general path: the same rule.
    let event = wire::Event::from_json(&delta2("z")).unwrap();
    assert!(matches!(
        view.apply_event("t1", Some(9), event),
        Err(ReduceError::TextTooLong { bound: "turn", .. })
    ));
    view.apply_live("t1", Some(10), DONE).unwrap();
    assert_eq!(view.turn("t1").unwrap().status, TurnStatus::Done);
}
