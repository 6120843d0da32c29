//! Small rules the whole-core mutation sample (RELIABILITY.md, shard 0/40) found unpinned:
//! `Retry-After` parsing (RFC 9110 §10.2.3) and the classification of a turn's input items
//! (PROTOCOL §3, `turn.created.input`). Each assertion fails on the mutant it was written for.
use forgestream_core::session::retry_after_ms;
use forgestream_core::wire::InputItem;
use serde_json::json;

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
