//! Loading the history (every page of `GET …/sessions/{sid}/events`, then of `GET …/turns`;
//! the gateway's listings in the other order) and the restore flow built on it.
//!
//! **Timeline first** (TrueForge): its session timeline holds each turn's `turn.created` (input,
//! previous turn) and `turn.done` (final state), so the newest page alone shows the newest turns
//! whole; the turns listing, oldest first 25 a page (PROTOCOL §4, §9), only adds the turns off
//! the active branch and the states that changed since, so it is read last. A turn the timeline
//! showed running that the listing shows ended persisted its last events in between, in neither
//! listing: it is rebuilt from its own events listing once the history is in. Read first, a long
//! session's listing had to be walked to its end before the first timeline page — 617 requests
//! for W2's 15,419 turns — while the screen showed its older turns, window after window (a
//! new-user trial: 16 windows over 0.4 s for 400 turns). The gateway's timeline lists content
//! events only, so there the listing comes first, as the turns' headers.
//!
//! **A restore follows its turn early**: once the timeline's newest page shows the turn to
//! follow, the live stream opens while the older pages and the listing go on loading
//! (`resume_while_loading`), so a reload mid-stream on a long session does not hold the reply
//! back for the whole history.
//!
//! **Progressive**: the session timeline comes newest first (PROTOCOL §4), so each page is
//! applied as it arrives and the view is published after it — the newest screen shows after the
//! first page or two, not after the thousandth (issue 16, W2-first-screen). A page's oldest turn
//! may go on in the next page, so the trailing run of its events is held back and applied with
//! the next page: every turn a snapshot shows is complete, and the events are applied in exactly
//! the order one apply of every page would take (`tests/history_progressive.rs` checks both).
//! The reducer's derived state (chain order, pending set, usage) is rebuilt after each apply,
//! which it does from scratch, so the final view is the all-at-once one. Once the view shows a
//! screenful of turns ([`Config::history_screen_turns`](super::Config::history_screen_turns)),
//! pages that arrive less than a gap after the last apply are gathered and applied with a later
//! one — the gap starts at [`HISTORY_APPLY_MS`] and doubles per apply up to
//! [`HISTORY_APPLY_MAX_MS`]: the rebuild is O(turns), and a loopback load of 1,000 pages would
//! otherwise pay it 1,000 times. Gathering stops at
//! [`Config::history_apply_max_events`](super::Config::history_apply_max_events), which bounds
//! the memory the waiting (decoded) events take.
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use super::paging::{NextPage, PageGuard};
use super::requests::parse_json;
use super::{
    api, CommandId, ErrorCode, History, Method, Purpose, RequestId, ResponseKind, RestoreState,
    Session, SessionError, Settled, StorageEffect, HISTORY_APPLY_MAX_MS, HISTORY_APPLY_MS,
    HISTORY_RETRY_MS, MAX_EVENT_PAGES, MAX_TURN_PAGES,
};
use crate::id::Id;
use crate::reduce::TurnStatus;
use crate::resume::StartMode;
use crate::wire;

impl Session {
    /// Starts a load, or joins the one in flight.
    pub(super) fn load(&mut self, command: Option<CommandId>, for_restore: bool) {
        if let Some(h) = self.history.as_mut() {
            h.waiters.extend(command);
            h.for_restore |= for_restore;
            return;
        }
        let events_first = self.timeline_first();
        let request = self.history_request(events_first, None);
        // The badge reads `loading` from now until the history is in.
        self.dirty = true;
        self.history = Some(History {
            request,
            events: events_first,
            pages: PageGuard::default(),
            held: Vec::new(),
            applied_at: None,
            applies: 0,
            apply_failed: false,
            waiters: command.into_iter().collect(),
            for_restore,
            for_sync: false,
            token: None,
            ended_after_timeline: Vec::new(),
            failures: 0,
            retry_at_ms: None,
        });
    }

    /// Whether the session timeline is read before the turns listing (see the module docs).
    fn timeline_first(&self) -> bool {
        self.config.api.flavor == api::Flavor::TrueForge
    }

    /// The listing being read ended: the other one is read next, or the history is in.
    fn listing_done(&mut self, events: bool) {
        if events == self.timeline_first() {
            if let Some(h) = self.history.as_mut() {
                h.pages = PageGuard::default();
            }
            self.next_history_page(!events, None);
        } else {
            self.history_done();
        }
    }

    /// Requests one page of the history: the turns listing (25 per page, TrueForge's maximum)
    /// or the session timeline, from `token` (the first page without one).
    fn history_request(&mut self, events: bool, token: Option<&str>) -> RequestId {
        let url = if events {
            self.config.api.session_events(&self.id, token)
        } else {
            let query = match token {
                Some(t) => format!("?limit=25&page_token={}", api::segment(t)),
                None => String::from("?limit=25"),
            };
            self.config.api.turns(&self.id, &query)
        };
        self.request(
            Purpose::History,
            Method::Get,
            url,
            None,
            None,
            ResponseKind::Whole,
        )
    }

    fn next_history_page(&mut self, events: bool, token: Option<&str>) {
        let request = self.history_request(events, token);
        if let Some(h) = self.history.as_mut() {
            h.request = request;
            h.events = events;
            h.token = token.map(String::from);
        }
    }

    /// A history request failed (`status: None`: no response): a transient failure, the first
    /// page's too, waits [`HISTORY_RETRY_MS`] and asks for the same page again; otherwise, or
    /// after the last wait, the load fails.
    pub(super) fn history_page_failed(&mut self, status: Option<u16>, error: SessionError) {
        let transient = matches!(status, None | Some(408 | 425 | 429 | 500..=599));
        let now = self.now_ms;
        if let Some(h) = self.history.as_mut().filter(|_| transient) {
            if let Some(wait) = HISTORY_RETRY_MS.get(h.failures as usize) {
                h.failures += 1;
                h.retry_at_ms = Some(now.saturating_add(*wait));
                return;
            }
        }
        self.history_failed(error);
    }

    /// The wait before asking again for a failed history page is over: the same page again.
    pub(super) fn retry_history_page(&mut self) {
        let now = self.now_ms;
        let Some(h) = self
            .history
            .as_mut()
            .filter(|h| h.retry_at_ms.is_some_and(|at| at <= now))
        else {
            return;
        };
        h.retry_at_ms = None;
        let (events, token) = (h.events, h.token.clone());
        self.next_history_page(events, token.as_deref());
    }

    pub(super) fn history_response(&mut self, status: u16, body: &[u8]) {
        let Some(events) = self.history.as_ref().map(|h| h.events) else {
            return;
        };
        if !(200..300).contains(&status) {
            self.history_page_failed(Some(status), SessionError::http(status, body));
            return;
        }
        if let Some(h) = self.history.as_mut() {
            h.failures = 0;
        }
        if !events {
            match parse_json::<wire::Listing<wire::Turn>>(body) {
                Ok(page) => {
                    if self.timeline_first() {
                        self.note_ended_after_timeline(&page.data);
                    }
                    let changes = self.view.apply_turns(&page.data);
                    self.record(changes);
                    let Some(h) = self.history.as_mut() else {
                        return;
                    };
                    let next = h.pages.after_page(
                        "turns",
                        page.pagination.next_page_token,
                        MAX_TURN_PAGES,
                    );
                    match next {
                        NextPage::Follow(t) => self.next_history_page(false, Some(&t)),
                        NextPage::Done | NextPage::Cut(_) => {
                            if let NextPage::Cut(warning) = next {
                                self.warn("protocol", warning);
                            }
                            self.listing_done(false);
                        }
                    }
                }
                Err(e) => self.history_failed(SessionError::new(
                    ErrorCode::InvalidResponse,
                    format!("malformed turn list: {e}"),
                )),
            }
            return;
        }
        match parse_json::<wire::SessionEventsPage>(body) {
            Ok(page) => {
                let screen_short = self.view.turn_ids().len() < self.config.history_screen_turns;
                let Some(h) = self.history.as_mut() else {
                    return;
                };
                let next = h.pages.after_page(
                    "session events",
                    page.pagination.next_page_token,
                    MAX_EVENT_PAGES,
                );
                let mut items = core::mem::take(&mut h.held);
                items.extend(page.data);
                if let NextPage::Follow(_) = next {
                    let due = screen_short
                        || items.len() >= self.config.history_apply_max_events
                        || h.applied_at.is_none_or(|at| {
                            self.now_ms >= at.saturating_add(apply_gap_ms(h.applies))
                        });
                    h.held = if due {
                        split_off_oldest_turn(&mut items)
                    } else {
                        core::mem::take(&mut items)
                    };
                }
                self.apply_history_page(items);
                self.resume_while_loading();
                match next {
                    NextPage::Follow(t) => self.next_history_page(true, Some(&t)),
                    NextPage::Done => self.listing_done(true),
                    NextPage::Cut(warning) => {
                        self.warn("protocol", warning);
                        self.listing_done(true);
                    }
                }
            }
            Err(e) => self.history_failed(SessionError::new(
                ErrorCode::InvalidResponse,
                format!("malformed session events: {e}"),
            )),
        }
    }

    /// Applies timeline events (newest first) and records the change for the next snapshot; the
    /// badge keeps reading `loading` until the last page is in.
    fn apply_history_page(&mut self, items: Vec<wire::SessionEventItem>) {
        if items.is_empty() || self.history.as_ref().is_none_or(|h| h.apply_failed) {
            return;
        }
        self.dirty = true;
        if let Some(h) = self.history.as_mut() {
            h.applied_at = Some(self.now_ms);
            h.applies = h.applies.saturating_add(1);
        }
        match self.view.apply_session_events(items) {
            Ok(changes) => self.record(changes),
            Err(e) => {
                if let Some(h) = self.history.as_mut() {
                    h.apply_failed = true;
                }
                self.warn("protocol", format!("{e}"));
            }
        }
    }

    /// Turns of a listing page that the timeline showed running and that have ended since: the
    /// events they persisted after the timeline was read (a message that finished, `turn.done`)
    /// are in neither listing (a soak run: a load during the turn's last moments showed it
    /// paused on an approval with the message asking for it missing).
    fn note_ended_after_timeline(&mut self, listed: &[wire::Turn]) {
        let ended: Vec<String> = listed
            .iter()
            .filter(|t| t.state.is_terminal())
            .filter(|t| {
                self.view
                    .turn(&t.id)
                    .is_some_and(|v| v.status == TurnStatus::Running)
            })
            .map(|t| t.id.clone())
            .collect();
        if let Some(h) = self.history.as_mut() {
            h.ended_after_timeline.extend(ended);
        }
    }

    /// The whole timeline is in: turns a newer turn replaced are checked, a turn that ended
    /// after the timeline was read is rebuilt, the waiters settle and a restore resumes the
    /// stream.
    fn history_done(&mut self) {
        let Some(h) = self.history.take() else {
            return;
        };
        self.dirty = true;
        self.loaded = true;
        // The newest turn that ended after the timeline was read (only the newest turn runs):
        // rebuilt from its events listing as a 412 would be (check, then `GET …/events`), when
        // no turn is followed.
        let idle = self.run.as_ref().is_none_or(|r| !r.active());
        if let Some(turn_id) = h.ended_after_timeline.last().filter(|_| idle) {
            self.start_run(
                StartMode::Attach { after: Some(0) },
                Some(turn_id.clone()),
                None,
            );
        }
        // Turns the history shows running that a newer turn replaced (an interrupt another tab
        // made, a crash): read their state rather than show them running forever.
        let ids: Vec<Id> = self.view.turn_ids().to_vec();
        for pair in ids.windows(2) {
            if self
                .view
                .turn(&pair[1])
                .and_then(|t| t.previous_turn_id.as_deref())
                == Some(pair[0].as_str())
            {
                let followed = self.connection().turn_id == Some(pair[0].as_str());
                if !followed {
                    self.check_if_running(&pair[0]);
                }
            }
        }
        for c in h.waiters {
            self.settle(c, Ok(Settled::Done));
        }
        if h.for_restore {
            self.resume_restore();
        }
        if h.for_sync {
            self.follow_synced();
        }
    }

    /// A restore follows its turn once the view shows it, while older pages still load: the
    /// newest timeline page holds it (the turn to follow is the newest running one, or the
    /// checkpoint's), so a reload mid-stream on a long session no longer waits for the whole
    /// history — every timeline page and the turns listing, 1,617 sequential requests for W2 —
    /// before the reply goes on. Not with a `creating` marker: whether the new turn exists is
    /// read from the whole listing (issue 14). The timeline comes newest first and a turn is
    /// applied only once an older turn's events follow it (`held`), so the turn followed is
    /// whole; the pages after it hold older turns only.
    fn resume_while_loading(&mut self) {
        if !self
            .history
            .as_ref()
            .is_some_and(|h| h.for_restore && h.applies > 0 && !h.apply_failed)
        {
            return;
        }
        let RestoreState::Loading {
            checkpoint: stored, ..
        } = &self.restore
        else {
            return;
        };
        if stored.as_ref().is_some_and(|c| c.creating.is_some()) {
            return;
        }
        let newest_running = self.newest_running_turn().is_some();
        let stored_shown = stored
            .as_ref()
            .and_then(|c| c.turn_id.as_deref())
            .is_some_and(|t| self.view.turn(t).is_some());
        if newest_running || stored_shown {
            self.resume_restore();
        }
    }

    /// The restore's load showed what it follows: the stored checkpoint's turn is followed (or
    /// the newest running one), or the restore settles with nothing to follow.
    fn resume_restore(&mut self) {
        let checkpoint = match core::mem::replace(&mut self.restore, RestoreState::Idle) {
            RestoreState::Loading {
                checkpoint,
                waiters,
            } => {
                self.restore = RestoreState::Resuming { waiters };
                checkpoint
            }
            other => {
                self.restore = other;
                return;
            }
        };
        if !self.resume(None, checkpoint) {
            self.restored(true);
        }
    }

    pub(super) fn history_failed(&mut self, error: SessionError) {
        let Some(h) = self.history.take() else {
            return;
        };
        self.dirty = true;
        for c in h.waiters {
            self.settle(c, Err(error.clone()));
        }
        if !h.for_restore {
            return;
        }
        if !matches!(self.restore, RestoreState::Loading { .. }) {
            // The restore followed its turn already (`resume_while_loading`) and settled: the
            // older history stays short of its end, which only this warning tells.
            self.warn(
                "history",
                format!("the older history could not be read: {}", error.message),
            );
            return;
        }
        if error.status == Some(404) {
            // The server no longer has the session (expired, an emulator restarted in memory):
            // restore resolves null and the stale records go, so the next load creates anew.
            let session_id = self.id.clone();
            self.store(StorageEffect::ClearPointer {
                session_id: session_id.clone(),
            });
            self.store(StorageEffect::RemoveCheckpoint { session_id });
            self.restored(false);
            return;
        }
        if let RestoreState::Loading { waiters, .. } =
            core::mem::replace(&mut self.restore, RestoreState::Idle)
        {
            for c in waiters {
                self.settle(c, Err(error.clone()));
            }
        }
    }
}

/// Splits off the trailing run of `items` (newest first) that belongs to its last (oldest) turn:
/// the next, older page may hold more of that turn. Empty when `items` is.
fn split_off_oldest_turn(items: &mut Vec<wire::SessionEventItem>) -> Vec<wire::SessionEventItem> {
    let Some(oldest) = items.last().map(|i| i.turn_id.clone()) else {
        return Vec::new();
    };
    let from = items
        .iter()
        .rposition(|i| i.turn_id != oldest)
        .map_or(0, |at| at + 1);
    items.split_off(from)
}

/// The least time after the `applies`-th apply before the next one (ms): [`HISTORY_APPLY_MS`],
/// doubling per apply, at most [`HISTORY_APPLY_MAX_MS`].
fn apply_gap_ms(applies: u32) -> u64 {
    HISTORY_APPLY_MS
        .saturating_mul(1 << applies.saturating_sub(1).min(16))
        .min(HISTORY_APPLY_MAX_MS)
}
