//! Small rules the whole-core mutation sample (RELIABILITY.md, shard 0/40) found unpinned:
//! `Retry-After` parsing (RFC 9110 §10.2.3) and the classification of a turn's input items
//! (PROTOCOL §3, `turn.created.input`). Each assertion fails on the mutant it was written for.
mod support;

use forgestream_core::reduce::{ReducerConfig, SessionView};
use forgestream_core::session::retry_after_ms;
use forgestream_core::wire::{InputItem, ToolCall};
use serde_json::{json, Value};

#[test]
fn retry_after_is_delta_seconds_in_ms_and_an_http_date_is_ignored() {
    assert_eq!(retry_after_ms("3"), Some(3_000));
    assert_eq!(retry_after_ms(" 120 "), Some(120_000));
    assert_eq!(retry_after_ms("0"), Some(0));
    // Saturates instead of overflowing.
    assert_eq!(retry_after_ms("18446744073709551615"), Some(u64::MAX));
    for ignored in ["Wed, 21 Oct 2015 07:28:00 GMT", "-1", "1.5", "", "soon"] {
        assert_eq!(retry_after_ms(ignored), None, "{ignored:?}");
    }
}

#[test]
fn a_tool_response_input_item_is_typed_and_a_malformed_one_stays_unknown() {
    let item = serde_json::from_value::<InputItem>(json!({
        "type": "user.tool_response",
        "thread_id": "main",
        "tool_call_id": "call_1",
        "content": "42 °C"
    }))
    .unwrap();
    assert_eq!(
        item,
        InputItem::ToolResponse {
            thread_id: "main".into(),
            tool_call_id: "call_1".into(),
            content: "42 °C".into(),
        }
    );
    // Without its content it is kept as received, never dropped.
    let raw =
        json!({ "type": "user.tool_response", "thread_id": "main", "tool_call_id": "call_1" });
    assert!(
        matches!(serde_json::from_value::<InputItem>(raw.clone()).unwrap(), InputItem::Unknown { item_type, raw: kept } if item_type == "user.tool_response" && kept == raw)
    );
}

// Shard 1/40 (RELIABILITY.md) found these unpinned.

#[test]
fn a_tool_call_without_a_type_is_a_function_call() {
    // PROTOCOL §5 "Tool call": `type` is always `function` today; a listing that omits it
    // still says so.
    let call = serde_json::from_value::<ToolCall>(json!({
        "id": "call_1",
        "function": { "name": "lookup", "arguments": "{}" }
    }))
    .unwrap();
    assert_eq!(call.call_type, "function");
    assert_eq!(call.function.name, "lookup");
}

#[test]
fn two_threads_spawned_by_one_call_are_both_listed_under_it() {
    let mut view = SessionView::new("s", ReducerConfig::default());
    let text = std::fs::read(support::fixtures_dir().join("recorded/subagent/create.sse")).unwrap();
    let frames = support::sse_frames(&text, &[]);
    let created = frames
        .iter()
        .position(|(_, data)| data.contains(r#""type":"thread.created""#))
        .unwrap();
    let turn_id = "t1";
    support::apply_frames(&mut view, turn_id, &frames[..=created]);
    // A second subagent of the same call (a call may fan out: PROTOCOL §5 `thread.created`).
    let (seq, first) = &frames[created];
    let second = first
        .replace(
            "bd99712c-2a5d-43cf-8b6e-36c2ebac4c94",
            "a second thread of the same call",
        )
        .replace("01m8nc63r98j11xrpymmeq70jp", "01m8nc63r98j11xrpymmeq70jq");
    assert_eq!(
        support::apply_frames(&mut view, turn_id, &[(seq.map(|n| n + 1), second)]),
        Vec::<String>::new()
    );
    let summary = view.summary();
    let threads: Vec<&Value> = summary["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|turn| turn["items"].as_array().into_iter().flatten())
        .flat_map(|item| item["toolCalls"].as_array().into_iter().flatten())
        .filter(|call| call["id"] == "call_d8ffb36ded9e44b1")
        .flat_map(|call| call["threads"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(
        threads,
        [
            "bd99712c-2a5d-43cf-8b6e-36c2ebac4c94",
            "a second thread of the same call"
        ]
    );
}

// Shard 2/40 (RELIABILITY.md) found this unpinned.

/// A turn's header `version` is "bumped on every header change" (`TurnView::version`, the
/// snapshot's `turn.version`): an app memoising a turn row on it must see a turn end
/// `cancelled` or `error`, whichever way the state arrives (its `turn.done` or a read of the
/// turn); a second terminal state changes nothing (PROTOCOL §6: the first one wins).
#[test]
fn a_turn_ending_in_any_state_moves_its_header_version_once() {
    use forgestream_core::reduce::TurnStatus;
    let created = r#"{"type":"turn.created","id":"e0","turn_id":"t1","previous_turn_id":null,"thread_id":null,"state":{"status":"running"}}"#;
    let base = r#"{"type":"model.message","id":"m1","thread_id":"main"}"#;
    let delta =
        r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"partial"}"#;
    let states = [
        (
            r#"{"status":"cancelled","reason":"client-cancelled","completed_at":"2026-12-01T00:00:05Z"}"#,
            TurnStatus::Cancelled,
        ),
        (
            r#"{"status":"error","message":"model unavailable","completed_at":"2026-12-01T00:00:05Z"}"#,
            TurnStatus::Error,
        ),
        (
            r#"{"status":"done","output":null,"completed_at":"2026-12-01T00:00:05Z"}"#,
            TurnStatus::Done,
        ),
    ];
    for (state, status) in states {
        for by_event in [true, false] {
            let mut view = SessionView::new("s", ReducerConfig::default());
            for (seq, frame) in [created, base, delta].iter().enumerate() {
                view.apply_live("t1", Some(seq as u64 + 1), frame).unwrap();
            }
            let before = view.turn("t1").unwrap().version;
            let changes = if by_event {
                let done = format!(r#"{{"type":"turn.done","id":"e9","state":{state}}}"#);
                view.apply_live("t1", Some(4), &done).unwrap()
            } else {
                let turn: forgestream_core::wire::Turn = serde_json::from_value(json!({
                    "id": "t1",
                    "session_id": "s",
                    "previous_turn_id": null,
                    "state": serde_json::from_str::<Value>(state).unwrap(),
                    "created_at": "2026-12-01T00:00:00Z",
                }))
                .unwrap();
                view.apply_turn(&turn)
            };
            let turn = view.turn("t1").unwrap();
            assert_eq!(turn.status, status, "{state}");
            assert!(
                turn.version > before,
                "{state} (event: {by_event}): version {} stayed {before}",
                turn.version
            );
            assert!(changes.turns.iter().any(|t| t == "t1"), "{state}");
            // The first terminal state wins: a later one is no header change.
            let after = turn.version;
            let late =
                r#"{"type":"turn.done","id":"e10","state":{"status":"error","message":"late"}}"#;
            view.apply_live("t1", Some(5), late).unwrap();
            let turn = view.turn("t1").unwrap();
            assert_eq!((turn.status, turn.version), (status, after), "{state}");
        }
    }
}
