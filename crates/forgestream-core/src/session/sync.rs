//! Catching up with turns made elsewhere: another browser or device on the same session, or a
//! script on the API. Tabs of one browser share their live connection (`tabs.rs`); nothing tells
//! a page about a turn another browser started, and the server then refuses this page's next
//! message (HTTP 422: the other turn waits for its approvals) over a view that showed nothing to
//! answer (a new-user trial, session 23: Refresh changed nothing, only a reload did).
//!
//! A sync lists the newest turn (`GET …/turns?limit=1&order=desc`). When the view does not have
//! it, or still shows it running although the server says it ended, the history is read again
//! (merged into the view: every event once) and the newest turn, if it runs, is followed. It
//! starts on [`Command::Refresh`](super::Command::Refresh) when there is no connection to try
//! again, and when the server refuses a new turn with 409 or 422 (its answer says the session
//! moved on).
use alloc::vec::Vec;

use super::{
    ConnectionStatus, ErrorCode, Method, Purpose, ResponseKind, Session, SessionError, StartMode,
    SYNC_FOLLOW_MS, SYNC_VISIBLE_MS,
};
use crate::reduce::TurnStatus;
use crate::wire;

impl Session {
    /// Lists the newest turn, unless a sync or a history load is already in flight.
    pub(super) fn sync(&mut self) {
        if self.closed || self.history.is_some() || self.syncing() {
            return;
        }
        let url = self.config.api.turns(&self.id, "?limit=1&order=desc");
        self.request(
            Purpose::Sync,
            Method::Get,
            url,
            None,
            None,
            ResponseKind::Whole,
        );
    }

    /// [`Input::Visible`](super::Input::Visible): the user is back on this page; turns another
    /// browser made meanwhile show now. Not while a turn is followed (its stream shows the
    /// session's newest state), nor before the history is in.
    pub(super) fn on_visible(&mut self) {
        let now = self.now_ms;
        let recent = self
            .visible_synced_ms
            .is_some_and(|at| now.saturating_sub(at) < SYNC_VISIBLE_MS);
        if self.closed || !self.loaded || self.turn_running() || recent {
            return;
        }
        self.visible_synced_ms = Some(now);
        self.sync();
    }

    fn syncing(&self) -> bool {
        self.requests.iter().any(|(_, p)| *p == Purpose::Sync)
    }

    /// The newest-turn listing answered (`None`: it failed or could not be read, which leaves
    /// the view as it is).
    pub(super) fn synced(&mut self, listed: Option<Vec<wire::Turn>>) {
        let Some(newest) = listed.as_ref().and_then(|turns| turns.first()) else {
            return;
        };
        let stale = match self.view.turn(&newest.id) {
            None => true,
            Some(turn) => turn.status == TurnStatus::Running && newest.state.is_terminal(),
        };
        if stale {
            self.load(None, false);
            if let Some(h) = self.history.as_mut() {
                h.for_sync = true;
            }
        }
    }

    /// After a sync's load: a new turn the server refused (it never existed) no longer stands
    /// for the session's state — its failure was the send's, which has settled — so the badge
    /// shows the turns the load found; and the newest turn, if it runs and nothing follows it
    /// yet, is followed.
    pub(super) fn follow_synced(&mut self) {
        let refused = self.run.as_ref().is_some_and(|r| {
            r.turn_id.is_none() && matches!(r.status, ConnectionStatus::Failed(_))
        });
        if refused {
            self.end_run(SessionError::new(
                ErrorCode::Aborted,
                "the session moved on elsewhere",
            ));
            self.last_error = None;
            self.cause = None;
        }
        let Some(turn) = self.newest_running_turn().map(alloc::string::String::from) else {
            return;
        };
        if !self.follows(&turn) {
            let at = self.now_ms.saturating_add(SYNC_FOLLOW_MS);
            self.sync_follow = Some((at, turn));
        }
    }

    /// The wait of [`SYNC_FOLLOW_MS`] is over: follow the turn unless something follows it now
    /// (another tab announced it) or it is no longer the newest running one.
    pub(super) fn follow_synced_due(&mut self) {
        let due = self
            .sync_follow
            .as_ref()
            .is_some_and(|(at, _)| *at <= self.now_ms);
        if !due {
            return;
        }
        let Some((_, turn)) = self.sync_follow.take() else {
            return;
        };
        if self.closed || self.follows(&turn) || self.newest_running_turn() != Some(turn.as_str()) {
            return;
        }
        self.start_run(StartMode::Attach { after: Some(0) }, Some(turn), None);
    }
}
