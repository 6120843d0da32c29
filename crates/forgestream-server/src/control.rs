//! What a running turn shares with the rest of the emulator: its cancel signal and token
//! totals ([`TurnControl`], held by the runtime and the turn's runner), and the simulated crash
//! it may be asked to die of ([`Crash`]). Kept apart from the runtime so that the runner depends
//! on this, not on the runtime.

use crate::wire::Totals;
use std::sync::{Mutex, MutexGuard};
use tokio::sync::watch;

/// Shared between a turn's runner, `/cancel` and the turn that freezes it.
pub struct TurnControl {
    cancel: watch::Sender<Option<String>>,
    totals: Mutex<Totals>,
}

impl TurnControl {
    /// A control with no cancel reason and zero totals.
    pub fn new() -> Self {
        Self {
            cancel: watch::channel(None).0,
            totals: Mutex::new(Totals::default()),
        }
    }
    fn lock(&self) -> MutexGuard<'_, Totals> {
        match self.totals.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }
    /// Token totals of completed model messages so far.
    pub fn totals(&self) -> Totals {
        *self.lock()
    }
    /// Replaces the totals.
    pub fn set_totals(&self, totals: Totals) {
        *self.lock() = totals;
    }
    /// Sets the cancel reason (`client-cancelled`, `cancelled-for-next-turn`, `abandoned`);
    /// the runner stops at once, or at the next unit boundary when frozen by a newer turn.
    pub fn cancel(&self, reason: &str) {
        self.cancel.send_replace(Some(reason.to_owned()));
    }
    /// Receives the cancel reason once one is set.
    pub fn cancel_receiver(&self) -> watch::Receiver<Option<String>> {
        self.cancel.subscribe()
    }
}

impl Default for TurnControl {
    fn default() -> Self {
        Self::new()
    }
}

/// A simulated crash of a turn's worker (`crash-after-events=N`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crash {
    /// The worker stops once the turn's stream holds this many frames.
    pub after_events: u64,
    /// Multi-replica mode: the crashed owner's live buffer stays (a subscribe on another
    /// replica gets a silent 200 until it expires) instead of vanishing (412).
    pub keep_buffer: bool,
}
