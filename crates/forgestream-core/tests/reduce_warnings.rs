//! Sequence numbers that jump or go back (RELIABILITY.md "sequence regressions and gaps"): a gap
//! is applied with a `SequenceGap` warning (the frames in between were never seen); a regression
//! at or below the high-water mark is skipped as a replay, changing nothing.
use forgestream_core::reduce::{ReducerConfig, SessionView, Warning};

const CREATED: &str = r#"{"type":"turn.created","id":"e0","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}"#;
const PLACEHOLDER: &str = r#"{"type":"model.message","id":"m1","thread_id":"main"}"#;
const DELTA: &str = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"Hi"}"#;

#[test]
fn a_gap_is_applied_with_a_warning() {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    view.apply_live("t1", Some(1), CREATED).unwrap();
    let changes = view.apply_live("t1", Some(3), PLACEHOLDER).unwrap();
    assert_eq!(
        changes.warnings,
        [Warning::SequenceGap {
            turn_id: "t1".into(),
            expected: 2,
            received: 3
        }]
    );
    assert_eq!(view.last_sequence_number("t1"), Some(3));
    assert!(
        view.item("t1", "m1").is_some(),
        "the frame after the gap is applied"
    );
    assert_eq!(view.warning_count(), 1);
}

#[test]
fn a_regression_is_skipped_as_a_replay() {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    view.apply_live("t1", Some(1), CREATED).unwrap();
    view.apply_live("t1", Some(2), PLACEHOLDER).unwrap();
    view.apply_live("t1", Some(3), DELTA).unwrap();
    let before = view.summary();
    for seq in [3, 2, 1] {
        let changes = view.apply_live("t1", Some(seq), DELTA).unwrap();
        assert!(
            changes.is_empty(),
            "seq {seq} at or below the high-water mark"
        );
    }
    assert_eq!(view.summary(), before, "no text doubled");
    assert_eq!(view.last_sequence_number("t1"), Some(3));
    assert_eq!(view.warning_count(), 0);
}

/// An event after the turn's `turn.done` is ignored with a warning naming its wire `type` (the
/// app's log says what came late; shard 4/40 found `Event::event_type` unpinned).
#[test]
fn an_event_after_turn_done_is_ignored_with_a_warning_naming_its_type() {
    const DONE: &str =
        r#"{"type":"turn.done","id":"e9","thread_id":null,"state":{"status":"done"}}"#;
    const LATE_TOOL: &str = r#"{"type":"tool.response","id":"e10","thread_id":"main","tool_call_id":"c1","content":"x"}"#;
    const LATE_UNKNOWN: &str = r#"{"type":"vendor.note","id":"e11","thread_id":"main"}"#;
    let mut view = SessionView::new("s1", ReducerConfig::default());
    for (seq, frame) in [CREATED, PLACEHOLDER, DELTA, DONE].iter().enumerate() {
        view.apply_live("t1", Some(seq as u64 + 1), frame).unwrap();
    }
    let before = view.item("t1", "m1").cloned();
    for (seq, frame, event_type) in [
        (5, DELTA, "model.message.delta"),
        (6, LATE_TOOL, "tool.response"),
        (7, LATE_UNKNOWN, "vendor.note"),
    ] {
        let changes = view.apply_live("t1", Some(seq), frame).unwrap();
        assert_eq!(
            changes.warnings,
            [Warning::EventAfterTurnDone {
                turn_id: "t1".into(),
                event_type: event_type.into()
            }]
        );
    }
    assert_eq!(
        view.item("t1", "m1").cloned(),
        before,
        "late events change no item"
    );
    assert!(view.item("t1", "e10").is_none());
}
