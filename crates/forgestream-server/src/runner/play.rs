//! Playback: emits planned items into the turn's live buffer on a paced schedule, persists
//! what a listing holds (merged messages at their placeholder's position, standalone events),
//! keeps the turn's token totals, and stops for a cancel, a freeze or a simulated crash.

use super::plan::{Item, Persist};
use super::TurnContext;
use crate::clock::now_iso;
use crate::control::TurnControl;
use crate::event::EventBody;
use crate::live::LiveTurn;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::time::{sleep_until, Duration, Instant};

/// Why emission stopped early.
pub(super) enum Stop {
    /// `/cancel` (or another reason that stops at once).
    Now,
    /// Frozen by a newer turn: stopped at a unit boundary.
    Frozen,
    /// The simulated crash point was reached: the worker vanishes without a `turn.done`.
    Crash,
}

pub(super) struct Player<'a> {
    pub(super) ctx: &'a TurnContext,
    pub(super) turn_id: String,
    pub(super) live: Arc<LiveTurn>,
    pub(super) control: Arc<TurnControl>,
    pub(super) cancel: tokio::sync::watch::Receiver<Option<String>>,
    pub(super) placeholders: HashMap<String, (i64, Option<String>)>,
    pub(super) output: Option<Value>,
    pub(super) required_actions: Vec<Value>,
    /// Stop as crashed once the stream holds this many frames.
    pub(super) crash_after: Option<u64>,
    /// When the last paced emission of the current batch was due (`None` before the first one). Each item is due
    /// `delay_us` after the previous one's due time, not after it was actually emitted: a sleep
    /// overshoots by up to a timer tick (1 ms, more on a busy machine), and measuring from the
    /// wake-up would add that overshoot to every delta — at "0.5 ms" the stream ran at ~900
    /// deltas/s instead of 2,000. Items already due are emitted without sleeping.
    pub(super) due: Option<Instant>,
}

/// When the next paced item is due: `delay_us` after the previous item's due time, or after `now`
/// for the first item of a batch and after a stall longer than `MAX_LAG`.
fn next_due(previous: Option<Instant>, now: Instant, delay_us: u64) -> Instant {
    let base = match previous {
        Some(due) if now.saturating_duration_since(due) <= MAX_LAG => due,
        _ => now,
    };
    base + Duration::from_micros(delay_us)
}

/// How far behind its schedule the player may fall before it restarts the schedule from now:
/// after a long stall (a loaded machine, a debugger) the stream resumes at its pace instead of
/// bursting everything it owes.
const MAX_LAG: Duration = Duration::from_millis(100);

impl Player<'_> {
    /// Whether the simulated crash point is reached (nothing more may be written).
    pub(super) fn crashed(&self) -> bool {
        self.crash_after.is_some_and(|n| self.live.len() >= n)
    }

    pub(super) fn stop_reason(&self, at_boundary: bool) -> Option<Stop> {
        match self.cancel.borrow().as_deref() {
            None => None,
            Some("cancelled-for-next-turn") => at_boundary.then_some(Stop::Frozen),
            Some(_) => Some(Stop::Now),
        }
    }

    pub(super) async fn play(&mut self, items: Vec<Item>) -> Result<(), Stop> {
        // Whatever ran between two batches (a sleep step, a wait for the user) is not pacing the
        // next batch may catch up on.
        self.due = None;
        for mut item in items {
            if let Some(stop) = self.stop_reason(item.boundary) {
                return Err(stop);
            }
            if item.delay_us > 0 {
                let now = Instant::now();
                let due = next_due(self.due, now, item.delay_us);
                self.due = Some(due);
                if due > now {
                    tokio::select! {
                        _ = sleep_until(due) => {}
                        _ = self.cancel.changed() => {}
                    }
                    if let Some(stop) = self.stop_reason(item.boundary) {
                        return Err(stop);
                    }
                }
            }
            if self.crashed() {
                return Err(Stop::Crash);
            }
            if item.stamp {
                item.event.created_at = Some(now_iso());
            }
            let seq = self.live.append(&item.event.to_json(), false) as i64;
            if matches!(item.event.body, EventBody::ModelMessage(_)) {
                self.placeholders
                    .insert(item.event.id.clone(), (seq, item.event.created_at.clone()));
            }
            if item.required {
                self.required_actions.push(item.event.to_value());
            }
            match item.persist {
                Persist::No => {}
                Persist::AsIs => {
                    let _ = self
                        .ctx
                        .store
                        .persist_event(&self.turn_id, seq, &item.event);
                }
                Persist::Merged(mut merged) => {
                    let (pos, created_at) = self
                        .placeholders
                        .get(&merged.id)
                        .cloned()
                        .unwrap_or((seq, None));
                    merged.created_at = created_at.or_else(|| Some(now_iso()));
                    let message = merged.message().cloned().unwrap_or_default();
                    if let Some(usage) = &message.usage {
                        let mut totals = self.control.totals();
                        totals.input_tokens += usage["input_tokens"].as_u64().unwrap_or(0);
                        totals.output_tokens += usage["output_tokens"].as_u64().unwrap_or(0);
                        self.control.set_totals(totals);
                    }
                    if merged.thread_id.as_deref() == Some("main")
                        && message.finish_reason.as_deref() == Some("stop")
                    {
                        self.output = Some(merged.to_value());
                    }
                    let _ = self.ctx.store.persist_event(&self.turn_id, pos, &merged);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod pacing_tests {
    use super::{next_due, MAX_LAG};
    use tokio::time::{Duration, Instant};

    #[test]
    fn sub_millisecond_paces_keep_their_average_despite_late_wake_ups() {
        // 2,000 items at 0.5 ms, each wake-up 1 ms late (a coarse, busy timer): the schedule
        // still ends at 1 s, not at 3 s as when every delay counted from the wake-up.
        let start = Instant::now();
        let mut due = None;
        let mut now = start;
        for _ in 0..2000 {
            let d = next_due(due, now, 500);
            due = Some(d);
            now = now.max(d + Duration::from_millis(1)).min(d + MAX_LAG);
        }
        assert_eq!(due.map(|d| d - start), Some(Duration::from_secs(1)));
    }

    #[test]
    fn a_long_stall_restarts_the_schedule_instead_of_bursting() {
        let start = Instant::now();
        let first = next_due(None, start, 500);
        assert_eq!(first - start, Duration::from_micros(500));
        let late = first + MAX_LAG + Duration::from_millis(1);
        assert_eq!(
            next_due(Some(first), late, 500) - late,
            Duration::from_micros(500)
        );
        let on_time = first + MAX_LAG;
        assert_eq!(
            next_due(Some(first), on_time, 500),
            first + Duration::from_micros(500)
        );
    }
}
