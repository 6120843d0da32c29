//! One live frame as the session engine applies it: [`SessionView::apply_live_frame`] is
//! [`SessionView::apply_live_into`] plus the turn's flags the engine decides on (has the turn
//! ended, was the event cap or a text bound reached), read on the same turn lookup.
//!
//! Why: the engine asked for these with three more map lookups per frame (the cap and the
//! text bound before, the status after). In wasm each lookup is a `memcmp` of the turn id, and
//! for a stream of small deltas that was a measurable part of W1 (issue 12: W1 slower than
//! before the engine). On the hot path (a text delta on a running turn) the flags come from the
//! turn the reducer already holds; only the general path (a few frames per turn) looks them up.
use super::{ChangeSet, ReduceError, SessionView, TurnStatus, TurnView};
use crate::wire;

/// A turn's state as the session engine reads it around one frame. A turn the view does not
/// have is all `false`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TurnFlags {
    /// The turn is no longer `running` (done, paused, cancelled, error).
    pub ended: bool,
    /// The per-turn event cap refused an event ([`super::ReducerConfig::max_events_per_turn`]).
    pub capped: bool,
    /// A text bound refused a delta ([`super::ReducerConfig::max_message_text_bytes`],
    /// `max_turn_text_bytes`).
    pub text_limited: bool,
}

impl TurnFlags {
    pub(super) fn of(turn: &TurnView) -> Self {
        TurnFlags {
            ended: turn.status != TurnStatus::Running,
            capped: turn.internal.capped(),
            text_limited: turn.internal.text_limited(),
        }
    }
}

/// What [`SessionView::apply_live_frame`] did.
#[derive(Debug, PartialEq)]
pub struct LiveFrame {
    /// The turn's flags before the frame.
    pub before: TurnFlags,
    /// The turn's flags after it.
    pub after: TurnFlags,
    /// As [`SessionView::apply_live_into`] returns.
    pub result: Result<(), ReduceError>,
}

impl SessionView {
    /// The flags of `turn_id` (all `false` for a turn the view does not have).
    pub fn turn_flags(&self, turn_id: &str) -> TurnFlags {
        self.turns
            .get(turn_id)
            .map(|t| TurnFlags::of(t))
            .unwrap_or_default()
    }

    /// [`Self::apply_live_into`], and the turn's flags before and after the frame. Same view,
    /// same change set, same result as `apply_live_into` on the same input.
    pub fn apply_live_frame(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        data: &str,
        changes: &mut ChangeSet,
    ) -> LiveFrame {
        self.apply_live_frame_read(
            turn_id,
            sequence_number,
            data,
            wire::fast::text_delta(data),
            changes,
        )
    }

    /// [`Self::apply_live_frame`] with `text` = `wire::fast::text_delta(data)` already read
    /// (the session engine shares that scan with the inspector's frame log).
    pub(crate) fn apply_live_frame_read(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        data: &str,
        text: Option<wire::fast::TextDelta<'_>>,
        changes: &mut ChangeSet,
    ) -> LiveFrame {
        if let Some(delta) = &text {
            if let Some(flags) = self.apply_text_delta_hot(turn_id, sequence_number, delta, changes)
            {
                self.settle(changes);
                // The hot path never ends a turn nor reaches a bound (it leaves those frames to
                // the general path), so the flags are the same before and after.
                return LiveFrame {
                    before: flags,
                    after: flags,
                    result: Ok(()),
                };
            }
        }
        let before = self.turn_flags(turn_id);
        let result = self.apply_live_general(turn_id, sequence_number, data, text, changes);
        LiveFrame {
            before,
            after: self.turn_flags(turn_id),
            result,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reduce::ReducerConfig;

    const TURN: &str = "t1";

    fn created() -> &'static str {
        r#"{"type":"turn.created","id":"e0","turn_id":"t1","previous_turn_id":null,"input":[],"state":{"status":"running"},"created_at":"2026-12-01T00:00:00Z","thread_id":null}"#
    }

    /// Every frame through `apply_live_frame` on one view and `apply_live_into` on another: same
    /// change sets and results, and flags equal to what the lookups say.
    fn check(config: ReducerConfig, frames: &[(u64, String)]) -> Vec<LiveFrame> {
        let mut a = SessionView::new("s", config.clone());
        let mut b = SessionView::new("s", config);
        let mut out = Vec::new();
        for (seq, data) in frames {
            let (mut ca, mut cb) = (ChangeSet::default(), ChangeSet::default());
            let before = b.turn_flags(TURN);
            let frame = a.apply_live_frame(TURN, Some(*seq), data, &mut ca);
            let result = b.apply_live_into(TURN, Some(*seq), data, &mut cb);
            ca.normalize();
            cb.normalize();
            assert_eq!(ca, cb, "frame {seq}");
            assert_eq!(frame.result, result, "frame {seq}");
            assert_eq!(frame.before, before, "frame {seq}");
            assert_eq!(frame.after, b.turn_flags(TURN), "frame {seq}");
            out.push(frame);
        }
        assert_eq!(a.summary(), b.summary());
        out
    }

    fn delta(text: &str) -> String {
        format!(
            r#"{{"type":"model.message.delta","id":"m1","thread_id":"main","content":"{text}"}}"#
        )
    }

    fn frames(deltas: usize) -> Vec<(u64, String)> {
        let mut f = vec![
            (1, created().to_string()),
            (
                2,
                r#"{"type":"model.message","id":"m1","thread_id":"main","created_at":"2026-12-01T00:00:01Z"}"#
                    .to_string(),
            ),
        ];
        for i in 0..deltas {
            f.push((3 + i as u64, delta("abcd")));
        }
        f
    }

    #[test]
    fn flags_follow_the_turn_to_its_end_and_through_replays() {
        let mut f = frames(3);
        let n = f.len() as u64;
        f.push((n + 1, r#"{"type":"turn.done","id":"e9","state":{"status":"done","output":null,"completed_at":"2026-12-01T00:00:05Z"}}"#.to_string()));
        // A replay of a delta after the end (the hot path's "already applied" branch).
        f.push((3, delta("abcd")));
        let out = check(ReducerConfig::default(), &f);
        assert!(!out[3].after.ended);
        assert!(
            out[5].after.ended && !out[5].before.ended,
            "turn.done ends the turn"
        );
        assert!(
            out[6].before.ended && out[6].after.ended,
            "a replay after the end"
        );
    }

    #[test]
    fn flags_show_the_event_cap_and_the_text_bound() {
        let capped = ReducerConfig {
            max_events_per_turn: 4,
            ..ReducerConfig::default()
        };
        let out = check(capped, &frames(5));
        assert!(out.iter().any(|f| !f.before.capped && f.after.capped));
        assert!(out.last().is_some_and(|f| f.before.capped));
        let bounded = ReducerConfig {
            max_message_text_bytes: 6,
            ..ReducerConfig::default()
        };
        let out = check(bounded, &frames(3));
        assert!(out
            .iter()
            .any(|f| !f.before.text_limited && f.after.text_limited));
        assert!(out.last().is_some_and(|f| f.before.text_limited));
    }
}
