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
