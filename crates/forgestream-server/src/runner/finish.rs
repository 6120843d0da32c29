//! Ending a turn: its one `turn.done` — done (with `output` or `required_actions` when
//! paused), error, or cancelled — stored first-terminal-state-wins, and the record the live
//! stream ends with.

use super::plan::StepEnd;
use super::play::{Player, Stop};
use super::{TurnContext, TurnJob};
use crate::clock::now_iso;
use crate::event::Event;
use crate::wire::{self, Totals};
use serde_json::Value;

pub(super) fn finish(
    ctx: &TurnContext,
    job: &TurnJob,
    player: &mut Player<'_>,
    outcome: Result<StepEnd, Stop>,
) {
    let totals: Totals = job.control.totals();
    let (state, pending) = match &outcome {
        Ok(StepEnd::Next) => (
            wire::done_state(player.output.take(), Vec::new(), totals),
            Vec::new(),
        ),
        Ok(StepEnd::Pause(pending)) => (
            wire::done_state(None, std::mem::take(&mut player.required_actions), totals),
            pending.clone(),
        ),
        Ok(StepEnd::Fail(message)) => (wire::error_state(message, totals), Vec::new()),
        Err(_) => {
            let reason = job
                .control
                .cancel_receiver()
                .borrow()
                .clone()
                .unwrap_or_else(|| "abandoned".into());
            (wire::cancelled_state(&reason, totals), Vec::new())
        }
    };
    let done = Event::turn_done(ctx.ids.next(), now_iso(), state.clone());
    let live_done = match ctx.store.finish_turn(&job.turn_id, &state, &pending, &done) {
        Ok(None) => done,
        Ok(Some((stored_state, stored_done))) => {
            if matches!(outcome, Err(Stop::Frozen))
                || stored_state.get("reason").and_then(Value::as_str)
                    == Some("cancelled-for-next-turn")
            {
                // The frozen turn's live stream ends later with its own turn.done record.
                Event::turn_done(ctx.ids.next(), now_iso(), stored_state)
            } else {
                stored_done
            }
        }
        Err(err) => {
            tracing::error!("finishing turn {}: {err}", job.turn_id);
            done
        }
    };
    job.live.append(&live_done.to_json(), true);
}
