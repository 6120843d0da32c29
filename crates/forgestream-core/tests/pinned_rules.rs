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
