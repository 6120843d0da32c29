//! One action at a time per session across tabs (issue 14): when an action a tab was asked for
//! has become stale because another tab acted first.
//!
//! The executor holds a per-session lock (a Web Lock, `forgestream:action:{sessionId}`) for the
//! length of each `send` / `respond` / `cancel` request, so two tabs never POST for one session at
//! once. What the lock cannot settle is whether the action still makes sense once the lock is
//! held: two tabs that showed the same approval both had the user click Allow, and the second
//! tab's answer, posted after the first one's continuation, would start a second continuation —
//! on TrueForge it cancels the first (`cancelled-for-next-turn`). The rules, all refused with
//! [`ErrorCode::Conflict`](super::ErrorCode::Conflict) before anything is sent:
//!
//! - **In the view** (every `respond`, lock or not): a decision for a call that was pending in a
//!   turn a newer turn has continued ([`RespondError::Stale`](crate::respond::RespondError)) is
//!   an answer already given — by another tab, or by this one a moment ago. Checked before the
//!   `turn-running` rule, since the newer turn is usually still running.
//! - **After waiting for the lock** ([`Command::AfterWait`](super::Command::AfterWait): another
//!   tab held it when this one asked): this tab's view may not show the other tab's turn yet (the
//!   relayed frames and the lock travel separately), so the engine first lists the session's
//!   newest turn (`GET …/turns?limit=1&order=desc`, one read, never a POST) and applies
//!   [`stale_after_wait`]: a `respond` or `cancel` is stale when the newest listed turn is not
//!   the view's newest (the turn it answers or cancels was continued or replaced); a `send` when
//!   the newest listed turn is another one that still runs (posting would cancel a turn this tab
//!   has not shown). A listing that fails or cannot be read lets the action go on as before the
//!   lock existed (its POST meets the same server).
//!
//! Without Web Locks the executor runs every action at once, as before issue 14; only the view
//! rule applies.
use alloc::format;
use alloc::string::String;

use crate::wire;

/// Which action waited for the session's action lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionKind {
    /// `send` (`interrupt` as asked).
    Send {
        /// The app asked to interrupt a running turn.
        interrupt: bool,
    },
    /// `respond` / `continueAfterAuth`: a continuation of the view's newest (paused) turn.
    Respond,
    /// `cancel`.
    Cancel,
}

/// Whether an action that waited for another tab's action is stale, from the session's newest
/// turn as the server lists it (`listed`; `None` for a session without turns) and the newest
/// turn of this tab's view (`view_newest`). `Some(reason)` (a sentence for the `conflict`
/// error's message) when it is; `None` lets it run. See the module docs for the rules.
pub fn stale_after_wait(
    kind: ActionKind,
    view_newest: Option<&str>,
    listed: Option<&wire::Turn>,
) -> Option<String> {
    let listed = listed?;
    if Some(listed.id.as_str()) == view_newest {
        return None;
    }
    match kind {
        ActionKind::Respond => Some(format!(
            "another tab already continued this turn (the session's newest turn is {}): this answer was not sent",
            listed.id
        )),
        ActionKind::Cancel => Some(format!(
            "another tab started turn {} while this cancel waited: nothing was cancelled",
            listed.id
        )),
        ActionKind::Send { .. } if !listed.state.is_terminal() => Some(format!(
            "another tab started turn {} while this message waited, and it still runs: the message was not sent (it would cancel that turn)",
            listed.id
        )),
        ActionKind::Send { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(id: &str, state: &str) -> wire::Turn {
        let json = format!(
            r#"{{"id":"{id}","session_id":"s1","previous_turn_id":"t1","state":{state},"created_at":"2026-12-01T00:00:00Z"}}"#
        );
        serde_json::from_str(&json).unwrap()
    }

    const RUNNING: &str = r#"{"status":"running"}"#;
    const DONE: &str = r#"{"status":"done","output":null,"completed_at":"2026-12-01T00:00:03Z"}"#;

    #[test]
    fn an_answer_or_a_cancel_after_another_tabs_turn_is_stale() {
        for kind in [ActionKind::Respond, ActionKind::Cancel] {
            for state in [RUNNING, DONE] {
                let t2 = turn("t2", state);
                assert!(
                    stale_after_wait(kind, Some("t1"), Some(&t2)).is_some(),
                    "{kind:?} {state}"
                );
                // The view already shows the newest turn: not stale (the view's rules apply).
                assert_eq!(stale_after_wait(kind, Some("t2"), Some(&t2)), None);
            }
        }
    }

    #[test]
    fn a_message_is_stale_only_while_another_tabs_new_turn_runs() {
        for interrupt in [false, true] {
            let kind = ActionKind::Send { interrupt };
            assert!(stale_after_wait(kind, Some("t1"), Some(&turn("t2", RUNNING))).is_some());
            assert!(stale_after_wait(kind, None, Some(&turn("t2", RUNNING))).is_some());
            // Another tab's turn that finished: the message goes on after it.
            assert_eq!(
                stale_after_wait(kind, Some("t1"), Some(&turn("t2", DONE))),
                None
            );
            // Our own newest turn still running: `turn-running` / the interrupt decide.
            assert_eq!(
                stale_after_wait(kind, Some("t2"), Some(&turn("t2", RUNNING))),
                None
            );
        }
    }

    #[test]
    fn an_empty_session_makes_nothing_stale() {
        for kind in [
            ActionKind::Respond,
            ActionKind::Cancel,
            ActionKind::Send { interrupt: false },
        ] {
            assert_eq!(stale_after_wait(kind, None, None), None);
        }
    }
}
