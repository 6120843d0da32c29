//! A turn's usage once its metrics came (PROTOCOL §6): the totals are the metrics', the input
//! breakdown the messages' — unless the messages count more input than the metrics do, when the
//! parts would exceed the whole (a trial: "Input 4,148" over parts adding up to 6,208, after a
//! crashed turn was cancelled by the next one). Then the breakdown is unknown (zero).
use forgestream_core::reduce::{BreakdownView, ReducerConfig, SessionView};
use serde_json::{json, Value};

fn view_with(metrics_input: u64) -> SessionView {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    let frames: [Value; 3] = [
        json!({"type":"turn.created","id":"c1","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}),
        json!({"type":"model.message","id":"m1","thread_id":"main","content":"Hello","finish_reason":"stop",
            "usage":{"input_tokens":6208,"output_tokens":9,"total_tokens":6217,
                "input_tokens_breakdown":{"harness":5532,"instructions":156,"tool_definitions":459,"messages":61}}}),
        json!({"type":"turn.done","id":"d1","thread_id":null,"turn_id":"t1","state":{"status":"cancelled","reason":"cancelled-for-next-turn",
            "metrics":{"total_input_tokens":metrics_input,"total_output_tokens":9,"total_tokens":metrics_input + 9}}}),
    ];
    for (i, f) in frames.iter().enumerate() {
        view.apply_live("t1", Some(i as u64 + 1), &f.to_string())
            .unwrap();
    }
    view
}

#[test]
fn the_breakdown_is_kept_when_it_fits_the_metrics_totals() {
    let view = view_with(6208);
    let usage = view.turn("t1").unwrap().usage.get();
    assert_eq!(usage.input_tokens, 6208);
    assert_eq!(usage.breakdown.harness, 5532);
    assert_eq!(usage.breakdown.messages, 61);
    assert_eq!(view.usage().breakdown, usage.breakdown, "the session's sum");
}

#[test]
fn a_breakdown_larger_than_the_metrics_input_is_unknown() {
    let view = view_with(4148);
    let usage = view.turn("t1").unwrap().usage.get();
    assert_eq!(usage.input_tokens, 4148, "the metrics' total");
    assert_eq!(usage.output_tokens, 9);
    assert_eq!(usage.breakdown, BreakdownView::default());
    assert_eq!(view.usage().input_tokens, 4148);
    assert_eq!(view.usage().breakdown, BreakdownView::default());
}
