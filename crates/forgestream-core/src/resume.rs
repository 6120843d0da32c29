//! The connection/recovery state machine of ONE turn's stream (DESIGN.md "Sans-IO connection
//! logic", PROTOCOL.md §3, §4 and §8).
//!
//! Sans-IO in the style of quinn-proto: the web layer feeds [`Input`]s with the current time
//! (`handle(input, now_ms)`), drains [`Command`]s (`poll_command()`), and calls
//! `handle(Input::Tick, now)` once [`Connection::poll_timeout`] has passed. The machine owns no
//! clock, no randomness source and no IO, so native tests drive it with a fake clock.
//!
//! One machine follows one turn: events of another turn never reach it (FIELD C17). The policy:
//!
//! - `CreateTurn` POSTs exactly once; a POST that fails without a definite answer is followed by
//!   `LookupNewestTurn` (effect recovery, §8.3), never by a second POST (FIELD C8). The lookup
//!   has its own short budget (`create_lookup_budget_ms`, default 10 s, from the first lookup):
//!   retried with backoff while the next try starts before it, aborted when still unanswered at
//!   it; then `Failed(CreateOutcomeUnknown)`, which `Refresh` and `Online` look up again from,
//!   and from which the machine looks again by itself, quietly (the status unchanged until a
//!   look answers), after `outcome_recheck_ms`, doubling up to the backoff cap.
//! - Every reconnect first reads the turn (`GetTurn`): running → `Subscribe { after: cursor }`;
//!   terminal → `Rebuild` (a cursor at the end of a finished turn hangs, §9; FIELD C13).
//! - Waits use exponential backoff with full jitter between a floor and a cap; `retry:` sets the base within
//!   bounds; 429/503 honour `Retry-After` within bounds; the attempt counter resets when a
//!   stream delivers a new sequence number, and when a stream that stayed healthy (held open
//!   `healthy_after_ms` from its request, no error status) ends; `max_attempts` ends in `TooManyAttempts`.
//! - EOF without `turn.done` resubscribes after the last processed sequence number (FIELD C4).
//! - Frames out of order (a gap the web layer did not apply, [`Input::OutOfOrder`], or a stream whose
//!   numbers step back) close the stream and rebuild from the listings once, then resubscribe
//!   after the cursor if the turn still runs; a second time ends `LiveUnavailable`.
//! - The idle watchdog aborts a request silent for `idle_timeout_ms`; comments and the bytes of a
//!   frame still arriving count (C3). On a stream of a known turn it first reads the turn (`GetTurn`,
//!   at once, no attempt counted): terminal → `Rebuild` (the view settles to the server's state);
//!   still `running` → resubscribe after the cursor, each such silent cycle doubling the next
//!   stream's watchdog up to `max_idle_timeout_ms`, and after `stalled_after_cycles` of them
//!   [`Connection::silence`] says `stalled` (issue 14: a crashed owner's silent 200 and a long
//!   silent tool call look alike; the machine never gives up on either). The next frame resets
//!   both. [`Command::Silence`] reports each change.
//! - [`Input::CheckTurn`] (the web layer's cancel request returned) reads the turn at once
//!   instead of waiting for the stream's `turn.done`.
//! - A page lifecycle event ([`Input::Lifecycle`]: back from bfcache, resumed after a freeze, a
//!   wake from sleep) reads the turn first (`GetTurn`, aborting what is open, ending a backoff
//!   wait), then resubscribes after the cursor or rebuilds: no attempt, no silent cycle, the badge
//!   unchanged; one such read at a time (issue 14).
//! - Offline aborts and pauses; online reconnects at once. Page visibility is no input at all.
//! - 401 → `RefreshHeaders` once, then the same request with the same cursor; a second 401 →
//!   `Failed(Auth)` (C14). 400/403/404 → `Failed`, never retried. 412 on subscribe → `Rebuild`
//!   once, then `Done` or `LiveUnavailable` (C5), never a retry loop.
//! - A refused resume (400 on subscribe, or [`Input::ResumeRefused`]): with `Last-Event-ID` sent,
//!   subscribe again at once with the cursor in the query only (and never send the header again
//!   for this turn); refused again (or without the header), rebuild from the listings once; each
//!   step is a [`Command::ResumeFallback`] (issue 14).
//! - `turn.done` → `ClearPersisted`, `Status(Done)`. The stream that carried it is left to end
//!   by itself (the server closes it right after; an abort here showed every turn's request as
//!   cancelled, `net::ERR_ABORTED`, in the browser's network panel): `Abort` only if it is still
//!   open [`DONE_DRAIN_MS`] later, or on `Disconnect`. After `Done` that `Abort` is the only
//!   command; after `Disconnect` nothing more is emitted.
//! - At most one request is open at a time: a new one is always preceded by `Abort` of the
//!   previous one if it was still open (C16c).

mod backoff;
mod command;
mod config;
mod input;

pub use command::{Command, ConnectionError, ConnectionStatus, ResumeFallback, Silence};
pub use config::Config;
pub use input::{Input, Lifecycle, StartMode};

use alloc::collections::VecDeque;
use backoff::Jitter;

/// How long the stream that delivered `turn.done` may stay open to end by itself before it is
/// aborted (ms): a server that keeps it open (PROTOCOL §9 shows hanging streams) does not hold
/// a connection past the turn.
pub const DONE_DRAIN_MS: u64 = 2_000;

/// How many times one turn's `PostCancel` is sent at most: the first and the resends after
/// [`Input::CancelFailed`], spaced 1, 2, 4, 8, 16 s apart (a short outage of the cancel endpoint
/// does not use them up; a re-check found 4 sends gone in 60 ms when each frame resent).
pub const MAX_CANCEL_SENDS: u32 = 6;

/// The first wait before a failed cancel is sent again, ms (doubling per failure).
const CANCEL_RETRY_MS: u64 = 1_000;

/// The earlier of two optional deadlines (ms). A plain fold: `[..].into_iter().flatten().min()`
/// compiled natively into ~16 KB of vector code that took ~40% of a one-frame read, and the
/// executor asks for the next deadline after every input.
#[inline]
pub(crate) fn earliest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A request the machine issues; also "what to do next" after a wait or a pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Post,
    Lookup,
    GetTurn,
    Subscribe,
    Rebuild,
}

impl Step {
    /// Whether the request's body is the live event stream.
    fn is_stream(self) -> bool {
        matches!(self, Step::Post | Step::Subscribe)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before `Start`.
    Idle,
    /// `step` is in flight; for streams, `streaming` once 2xx headers (or a frame) arrived.
    InFlight { step: Step, streaming: bool },
    /// Transitional: the request just closed and the handler is choosing the next phase. Never
    /// observable between two `handle` calls.
    Closed,
    /// A 401 asked the header provider again; `retry` repeats once it answers.
    RefreshingHeaders { retry: Step },
    /// Backoff: `next` starts at `until_ms`.
    Waiting { until_ms: u64, next: Step },
    /// The browser is offline; `next` starts on `Online`.
    Offline { next: Step },
    /// 412 and the rebuilt turn still runs (FIELD C5b).
    LiveUnavailable,
    /// Stopped with an error; `Refresh` may restart a retryable one.
    Failed(ConnectionError),
    /// The turn settled. Final; the stream that delivered `turn.done` may still be open until
    /// `drain_until_ms` ([`DONE_DRAIN_MS`]).
    Done,
    /// The app disconnected. Final.
    Disconnected,
}

/// The connection state machine of one turn. See the [module docs](self) for the policy.
///
/// ```
/// use forgestream_core::resume::{Command, Config, Connection, Input, StartMode};
///
/// let mut conn = Connection::new(Config::default());
/// conn.handle(Input::Start { mode: StartMode::Attach { after: Some(3) } }, 0);
/// let mut commands = Vec::new();
/// while let Some(command) = conn.poll_command() {
///     commands.push(command);
/// }
/// assert!(commands.contains(&Command::GetTurn));
/// conn.handle(Input::TurnFetched { terminal: false }, 10);
/// assert!(core::iter::from_fn(|| conn.poll_command()).any(|c| c == Command::Subscribe { after: 3 }));
/// ```
#[derive(Debug, Clone)]
pub struct Connection {
    config: Config,
    jitter: Jitter,
    phase: Phase,
    queue: VecDeque<Command>,
    /// Last status emitted, so `Status` is only sent on change.
    status: Option<ConnectionStatus>,
    /// Latest `now_ms` seen; a clock going backwards is treated as standing still.
    now_ms: u64,
    online: bool,
    /// `PostTurn` was emitted (never again).
    posted: bool,
    /// The POST answered 2xx: the turn exists even if its id is not known yet.
    post_accepted: bool,
    /// The web layer knows the turn id (attach mode, a frame of the POST stream, or a lookup),
    /// so `GetTurn` / `Subscribe` / `Rebuild` are possible.
    turn_known: bool,
    /// Last processed sequence number (monotonic).
    cursor: Option<u64>,
    /// Last checkpoint handed out with `Persist` (or the one we attached with).
    persisted: Option<u64>,
    last_persist_at_ms: Option<u64>,
    persist_due_ms: Option<u64>,
    /// Last sign of life of the open request (headers, frame, comment), ms.
    last_activity_ms: u64,
    /// The open stream advanced the cursor.
    progressed: bool,
    /// Consecutive failed attempts.
    attempt: u32,
    /// Backoff base set by a server `retry:` field, already clamped.
    retry_base_ms: Option<u64>,
    /// `RefreshHeaders` was used since the last successful response.
    auth_refreshed: bool,
    cancel_requested: bool,
    cancel_sent: bool,
    /// `PostCancel`s sent (see [`MAX_CANCEL_SENDS`]).
    cancel_sends: u32,
    /// After a failed cancel: not sent again before this time (ms).
    cancel_retry_at_ms: Option<u64>,
    /// The last sequence number of the open stream (a step back within one stream is out of
    /// order; a new stream may replay from below the cursor).
    stream_last: Option<u64>,
    /// A rebuild for frames out of order was already made: a second one ends live-unavailable.
    order_rebuilt: bool,
    /// The rebuild in flight was for frames out of order: a turn still running is resubscribed
    /// after the cursor.
    resubscribe_after_rebuild: bool,
    /// `Subscribe` carries `Last-Event-ID` (with a cursor); off after a refused resume.
    resume_header: bool,
    /// The open subscribe carried the header.
    header_sent: bool,
    /// A refused resume was already rebuilt from the listings: a next refusal fails.
    refusal_rebuilt: bool,
    /// When the open stream request was sent (`None`: no stream request open, or it was refused
    /// with a status): a stream request held open for `healthy_after_ms` refills the attempt
    /// budget when it ends. Counted from the request, whether or not its status line was seen:
    /// Firefox reports a silent 200 only with its first byte, so a subscribe the server held
    /// through a quiet second and a proxy then cut looks, from here, like a request that never
    /// answered; being held that long is what tells a working connection from a refused one.
    held_since_ms: Option<u64>,
    /// When the turn last showed progress: a frame with a new sequence number (or the start).
    last_frame_ms: u64,
    /// Reads of the turn that found it `running` after it had been silent for at least
    /// `idle_timeout_ms` (watchdog cycles, reconnects after idle cuts). Reset by the next frame.
    silent_cycles: u32,
    /// The silence last reported with [`Command::Silence`].
    silence: Option<Silence>,
    /// The `GetTurn` in flight was sent for a page lifecycle event: its answer counts no silent
    /// cycle, and another lifecycle event joins it.
    lifecycle_probe: bool,
    /// The end of the current lookup budget of an unanswered create (ms; `None` while no lookup
    /// runs): see [`Config::create_lookup_budget_ms`].
    lookup_deadline_ms: Option<u64>,
    /// In `Failed(CreateOutcomeUnknown)`: when the next quiet lookup starts (ms; `None`: none
    /// scheduled) — see [`Config::outcome_recheck_ms`].
    recheck_at_ms: Option<u64>,
    /// In `Done`: the stream that delivered `turn.done` is still open and is aborted at this
    /// time (ms) unless it ends first.
    drain_until_ms: Option<u64>,
    /// Quiet lookups since the last `Refresh` / `Online` that got no answer (the wait doubles).
    rechecks: u32,
    /// The lookup in flight is a quiet re-check: a failure of it goes straight back to
    /// `Failed(CreateOutcomeUnknown)` (no backoff, no `reconnecting`), and only its answer
    /// changes the status.
    quiet_lookup: bool,
}

impl Connection {
    /// A machine that has not started yet; feed it [`Input::Start`].
    pub fn new(config: Config) -> Self {
        Connection {
            jitter: Jitter::new(config.jitter_seed),
            config,
            phase: Phase::Idle,
            queue: VecDeque::new(),
            status: None,
            now_ms: 0,
            online: true,
            posted: false,
            post_accepted: false,
            turn_known: false,
            cursor: None,
            persisted: None,
            last_persist_at_ms: None,
            persist_due_ms: None,
            last_activity_ms: 0,
            progressed: false,
            attempt: 0,
            retry_base_ms: None,
            auth_refreshed: false,
            cancel_requested: false,
            cancel_sent: false,
            cancel_sends: 0,
            cancel_retry_at_ms: None,
            stream_last: None,
            order_rebuilt: false,
            resubscribe_after_rebuild: false,
            resume_header: true,
            header_sent: false,
            refusal_rebuilt: false,
            held_since_ms: None,
            last_frame_ms: 0,
            silent_cycles: 0,
            silence: None,
            lifecycle_probe: false,
            lookup_deadline_ms: None,
            recheck_at_ms: None,
            drain_until_ms: None,
            rechecks: 0,
            quiet_lookup: false,
        }
    }

    /// Whether a `Subscribe { after }` with `after > 0` sends `Last-Event-ID` besides the
    /// cursor in the query (or body): until a resume was refused ([`ResumeFallback`]).
    pub fn sends_resume_header(&self) -> bool {
        self.resume_header
    }

    /// The configuration this machine runs with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The next command to carry out, in order; `None` when the queue is empty.
    pub fn poll_command(&mut self) -> Option<Command> {
        self.queue.pop_front()
    }

    /// The earliest deadline (ms, caller's clock) at which `handle(Input::Tick, now)` has work:
    /// the end of a backoff wait, the idle watchdog of the open request, or a coalesced
    /// checkpoint. `None` when nothing is scheduled.
    pub fn poll_timeout(&self) -> Option<u64> {
        let timer = match self.phase {
            Phase::Waiting { until_ms, .. } => Some(until_ms),
            Phase::InFlight { step, .. } => {
                let idle = self.last_activity_ms.saturating_add(self.idle_limit(step));
                match self.lookup_deadline_ms {
                    Some(deadline) if step == Step::Lookup => Some(idle.min(deadline)),
                    _ => Some(idle),
                }
            }
            Phase::Failed(ConnectionError::CreateOutcomeUnknown) => self.recheck_at_ms,
            _ => None,
        };
        let persist = if self.is_finished() {
            // The only timer after the end: the drain of the stream that delivered `turn.done`.
            self.drain_until_ms
        } else {
            earliest(self.persist_due_ms, self.cancel_retry_at_ms)
        };
        earliest(timer, persist)
    }

    /// Whether [`Input::Refresh`] tries again: after `LiveUnavailable` or a retryable failure.
    pub fn restartable(&self) -> bool {
        match self.phase {
            Phase::LiveUnavailable => true,
            Phase::Failed(error) => error.is_retryable(),
            _ => false,
        }
    }

    /// The status last emitted (`None` before `Start`).
    pub fn status(&self) -> Option<&ConnectionStatus> {
        self.status.as_ref()
    }

    /// The last processed sequence number.
    pub fn cursor(&self) -> Option<u64> {
        self.cursor
    }

    /// The last sequence number the open stream delivered (`None` before its first numbered
    /// frame). A lower one on the same stream is out of order: [`Input::Event`] with it
    /// rebuilds, as [`Input::OutOfOrder`] does.
    pub fn stream_sequence_number(&self) -> Option<u64> {
        self.stream_last
    }

    /// The last checkpoint handed out with `Persist` (or the cursor attached with).
    pub fn persisted_cursor(&self) -> Option<u64> {
        self.persisted
    }

    /// Whether a request (stream or one-shot) is open and has not been aborted or answered.
    pub fn is_request_open(&self) -> bool {
        matches!(self.phase, Phase::InFlight { .. })
    }

    /// Whether a live stream request (`PostTurn` / `Subscribe`) is open.
    pub fn is_stream_open(&self) -> bool {
        matches!(self.phase, Phase::InFlight { step, .. } if step.is_stream())
    }

    /// Whether the turn is being rebuilt from the listings now (the request is in flight).
    pub fn is_rebuilding(&self) -> bool {
        matches!(
            self.phase,
            Phase::InFlight {
                step: Step::Rebuild,
                ..
            }
        )
    }

    /// Consecutive failed attempts so far.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// How long the followed turn has been silent, as of the last read of the turn that found it
    /// still `running` after `idle_timeout_ms` without a frame; `None` while frames flow (see
    /// [`Silence`]).
    pub fn silence(&self) -> Option<&Silence> {
        self.silence.as_ref()
    }

    /// The idle watchdog of a request of `step`, ms: `idle_timeout_ms` for one-shot requests and
    /// while frames flow; for a live stream after `n` silent cycles `idle_timeout_ms · 2^n`,
    /// at most `max(idle_timeout_ms, max_idle_timeout_ms)`.
    fn idle_limit(&self, step: Step) -> u64 {
        let idle = self.config.idle_timeout_ms;
        if !step.is_stream() || self.silent_cycles == 0 {
            return idle;
        }
        let grown = idle.saturating_mul(1u64 << self.silent_cycles.min(32));
        grown.min(self.config.max_idle_timeout_ms.max(idle))
    }

    /// `Done` or disconnected: the turn is over for this machine. After `Done` its only
    /// command can be the `Abort` of a stream that did not end within [`DONE_DRAIN_MS`].
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Done | Phase::Disconnected)
    }

    /// Feed one input at time `now_ms` (ms, any monotonic origin the caller likes). Commands it
    /// causes are queued for [`poll_command`](Self::poll_command). Never panics.
    pub fn handle(&mut self, input: Input, now_ms: u64) {
        self.now_ms = self.now_ms.max(now_ms);
        if self.is_finished() {
            self.drain(&input);
            return;
        }
        match input {
            Input::Start { mode } => self.on_start(mode),
            Input::ResponseHeaders {
                status,
                retry_after_ms,
            } => self.on_headers(status, retry_after_ms),
            Input::Event {
                sequence_number,
                turn_done,
            } => self.on_event(sequence_number, turn_done),
            Input::OutOfOrder => self.on_out_of_order(),
            Input::LiveGone => {
                if let Phase::InFlight {
                    step: Step::Subscribe,
                    ..
                } = self.phase
                {
                    self.phase = Phase::Closed;
                    self.held_since_ms = None;
                    self.on_failure(Step::Subscribe, Some(412), None);
                }
            }
            Input::InvalidResponse => {
                if self.is_stream_open() {
                    self.fail(ConnectionError::InvalidResponse);
                }
            }
            Input::TurnDoneIncomplete => {
                if self.is_stream_open() {
                    self.flush_persist();
                    self.resubscribe_after_rebuild = false;
                    self.begin(Step::Rebuild);
                }
            }
            Input::Comment | Input::BytesArrived => self.on_liveness(),
            Input::Retry(ms) => {
                if self.phase != Phase::Idle {
                    let floor = self.config.retry_min_ms;
                    self.retry_base_ms =
                        Some(ms.max(floor).min(self.config.retry_max_ms.max(floor)));
                }
                self.on_liveness();
            }
            Input::Eof => self.on_eof(),
            Input::NetworkError => self.on_network_error(),
            Input::ResumeRefused => {
                if matches!(
                    self.phase,
                    Phase::InFlight {
                        step: Step::Subscribe,
                        streaming: false
                    }
                ) && self.header_sent
                {
                    self.phase = Phase::Closed;
                    self.resume_refused();
                } else {
                    self.on_network_error();
                }
            }
            Input::TurnFetched { terminal } => {
                if self.take_in_flight(Step::GetTurn) {
                    self.auth_refreshed = false;
                    if !terminal && !core::mem::take(&mut self.lifecycle_probe) {
                        self.note_silence();
                    }
                    if terminal {
                        // The turn ended (a cancel confirmed, a turn that finished meanwhile):
                        // from `live` or `connecting` its final events are read with no
                        // `rebuilding` badge — nothing went wrong, and the badge goes on to
                        // `done` (a trial saw Stop flash `reconnecting` / "Replaying history"
                        // for 20–30 ms). After a failure the rebuild is announced as before.
                        let quiet = matches!(
                            self.status,
                            Some(ConnectionStatus::Live | ConnectionStatus::Connecting)
                        );
                        self.begin_with(Step::Rebuild, !quiet);
                    } else {
                        self.begin(Step::Subscribe);
                        // The turn runs: a cancel still to be delivered goes now.
                        self.maybe_send_cancel();
                    }
                }
            }
            Input::TurnFetchFailed {
                status,
                retry_after_ms,
            } => {
                if self.take_in_flight(Step::GetTurn) {
                    self.on_failure(Step::GetTurn, status, retry_after_ms);
                }
            }
            Input::TurnLookup { found_ours } => {
                if self.take_in_flight(Step::Lookup) {
                    self.auth_refreshed = false;
                    self.lookup_deadline_ms = None;
                    if found_ours {
                        if core::mem::take(&mut self.quiet_lookup) {
                            // A quiet look found it: from here on the turn is followed as usual.
                            self.set_status(ConnectionStatus::Connecting);
                        }
                        self.turn_known = true;
                        self.maybe_send_cancel();
                        self.begin(Step::GetTurn);
                    } else {
                        self.fail(ConnectionError::TurnNotCreated);
                    }
                }
            }
            Input::TurnLookupFailed {
                status,
                retry_after_ms,
            } => {
                if self.take_in_flight(Step::Lookup) {
                    self.on_failure(Step::Lookup, status, retry_after_ms);
                }
            }
            Input::RebuildDone { terminal } => {
                if self.take_in_flight(Step::Rebuild) {
                    self.auth_refreshed = false;
                    let resubscribe = core::mem::take(&mut self.resubscribe_after_rebuild);
                    if terminal {
                        self.finish_done();
                    } else if resubscribe {
                        // Rebuilt for frames out of order: the live stream may still be good
                        // from the cursor on (the refused frame comes again).
                        self.begin(Step::Subscribe);
                    } else {
                        self.live_unavailable();
                    }
                }
            }
            Input::RebuildFailed {
                status,
                retry_after_ms,
            } => {
                if self.take_in_flight(Step::Rebuild) {
                    self.on_failure(Step::Rebuild, status, retry_after_ms);
                }
            }
            Input::HeadersRefreshed => {
                if let Phase::RefreshingHeaders { retry } = self.phase {
                    self.resume_or_pause(retry);
                }
            }
            Input::HeadersRefreshFailed => {
                if let Phase::RefreshingHeaders { .. } = self.phase {
                    self.fail(ConnectionError::Auth);
                }
            }
            Input::Tick => self.on_tick(),
            Input::CheckTurn => self.on_check_turn(),
            Input::CancelFailed { retry_after_ms } => self.on_cancel_failed(retry_after_ms),
            Input::Lifecycle(_) => self.on_lifecycle(),
            // Only a write that is due: none after `turn.done` (its checkpoint is cleared).
            Input::PageHide => {
                if self.persist_due_ms.is_some() {
                    self.flush_persist();
                }
            }
            Input::Online => {
                self.online = true;
                match self.phase {
                    Phase::Offline { next } => {
                        self.set_status(ConnectionStatus::Connecting);
                        self.begin(next);
                    }
                    // The network is back: the unanswered create may be found now (a lookup
                    // with a new budget; never a POST).
                    Phase::Failed(ConnectionError::CreateOutcomeUnknown) => self.restart(),
                    _ => {}
                }
            }
            Input::Offline => self.on_offline(),
            Input::Cancel => {
                if !matches!(self.phase, Phase::Idle | Phase::Failed(_)) {
                    self.cancel_requested = true;
                    if !self.cancel_sent && self.cancel_sends >= MAX_CANCEL_SENDS {
                        // Stop pressed again after the last cancel gave up: a new budget.
                        self.cancel_sends = 0;
                        self.cancel_retry_at_ms = None;
                    }
                    self.maybe_send_cancel();
                }
            }
            Input::Disconnect => {
                self.flush_persist();
                self.abort_if_open();
                self.phase = Phase::Disconnected;
            }
            Input::Refresh => {
                if self.restartable() {
                    self.restart();
                }
            }
        }
    }

    /// Tries again from `LiveUnavailable` or a retryable failure: the attempt count and the
    /// lookup budget start over; reads the turn, or looks it up (never a POST).
    fn restart(&mut self) {
        self.attempt = 0;
        self.auth_refreshed = false;
        self.lookup_deadline_ms = None;
        self.rechecks = 0;
        self.recheck_at_ms = None;
        self.quiet_lookup = false;
        self.set_status(ConnectionStatus::Connecting);
        let next = self.recovery_step();
        self.resume_or_pause(next);
    }

    fn on_start(&mut self, mode: StartMode) {
        if self.phase != Phase::Idle {
            return;
        }
        self.set_status(ConnectionStatus::Connecting);
        self.last_frame_ms = self.now_ms;
        match mode {
            StartMode::CreateTurn => self.resume_or_pause(Step::Post),
            StartMode::Attach { after } => {
                self.turn_known = true;
                self.cursor = after;
                // The attach cursor came from storage: it is already persisted.
                self.persisted = after;
                self.resume_or_pause(Step::GetTurn);
            }
        }
    }

    fn on_headers(&mut self, status: u16, retry_after_ms: Option<u64>) {
        let Phase::InFlight {
            step,
            streaming: false,
        } = self.phase
        else {
            // No request waiting for its status line (or a duplicate): nothing to learn.
            return;
        };
        if (200..300).contains(&status) {
            self.last_activity_ms = self.now_ms;
            self.auth_refreshed = false;
            if step.is_stream() {
                self.phase = Phase::InFlight {
                    step,
                    streaming: true,
                };
                self.set_status(ConnectionStatus::Live);
                if step == Step::Post {
                    self.post_accepted = true;
                    self.maybe_send_cancel();
                }
            }
            return;
        }
        // The web layer dropped the error body: the request is closed (and was refused).
        self.phase = Phase::Closed;
        self.held_since_ms = None;
        self.on_failure(step, Some(status), retry_after_ms);
    }

    fn on_event(&mut self, sequence_number: Option<u64>, turn_done: bool) {
        let Phase::InFlight { step, streaming } = self.phase else {
            // Frames of a stream the machine already closed: the reducer dedupes them anyway.
            return;
        };
        if !step.is_stream() {
            return;
        }
        self.last_activity_ms = self.now_ms;
        if !streaming {
            // A frame implies a 2xx the web layer did not report.
            self.phase = Phase::InFlight {
                step,
                streaming: true,
            };
            self.set_status(ConnectionStatus::Live);
            if step == Step::Post {
                self.post_accepted = true;
            }
        }
        if step == Step::Post {
            // A POST stream opens with `turn.created`: the web layer knows the turn id now.
            self.turn_known = true;
        }
        self.maybe_send_cancel();
        if let (Some(seq), Some(last)) = (sequence_number, self.stream_last) {
            if seq < last {
                // A stream that steps back is not the server's per-turn sequence (PROTOCOL §3).
                self.on_out_of_order();
                return;
            }
        }
        if sequence_number.is_some() {
            self.stream_last = sequence_number;
        }
        let advanced = match (sequence_number, self.cursor) {
            (Some(seq), Some(cursor)) => seq > cursor,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if advanced {
            self.cursor = sequence_number;
            self.progressed = true;
            // A stream that delivers new events is healthy.
            self.attempt = 0;
        }
        if advanced || sequence_number.is_none() {
            // The turn shows progress: no longer silent (and no longer stalled).
            self.last_frame_ms = self.now_ms;
            self.silent_cycles = 0;
            if self.silence.take().is_some() {
                self.queue.push_back(Command::Silence(None));
            }
        }
        if turn_done {
            self.finish_done();
        } else if advanced {
            self.maybe_persist();
        }
    }

    /// Frames out of order on the open stream (a gap left unapplied, or the stream stepped
    /// back): close it and rebuild from the listings; the first time, a turn still running is
    /// then resubscribed after the cursor, a second time ends `LiveUnavailable` (never a loop).
    fn on_out_of_order(&mut self) {
        let Phase::InFlight { step, .. } = self.phase else {
            return;
        };
        if !step.is_stream() {
            return;
        }
        self.flush_persist();
        self.resubscribe_after_rebuild = !self.order_rebuilt;
        self.order_rebuilt = true;
        self.begin(Step::Rebuild);
    }

    fn on_liveness(&mut self) {
        if let Phase::InFlight { step, .. } = self.phase {
            if step.is_stream() {
                self.last_activity_ms = self.now_ms;
            }
        }
    }

    fn on_eof(&mut self) {
        let Phase::InFlight { step, streaming } = self.phase else {
            return;
        };
        if !step.is_stream() {
            // One-shot requests report their outcome with their own inputs.
            return;
        }
        self.phase = Phase::Closed;
        self.flush_persist();
        self.refill_if_healthy();
        if step == Step::Post && !streaming {
            self.create_outcome_unknown();
        } else if self.progressed {
            // A healthy stream ended without `turn.done` (server subscribe timeout): check the
            // turn and resubscribe after the cursor at once.
            let next = self.recovery_step();
            if self.online {
                self.set_status(ConnectionStatus::Connecting);
            }
            self.resume_or_pause(next);
        } else {
            let next = self.recovery_step();
            self.transient(next, None);
        }
    }

    fn on_network_error(&mut self) {
        let Phase::InFlight { step, streaming } = self.phase else {
            return;
        };
        self.phase = Phase::Closed;
        if step.is_stream() {
            self.flush_persist();
            self.refill_if_healthy();
            if step == Step::Post && !streaming {
                self.create_outcome_unknown();
            } else {
                let next = self.recovery_step();
                self.transient(next, None);
            }
        } else {
            self.on_failure(step, None, None);
        }
    }

    fn on_tick(&mut self) {
        let now = self.now_ms;
        if matches!(self.persist_due_ms, Some(due) if now >= due) {
            self.flush_persist();
        }
        // A failed cancel's wait ended while the live stream runs, or while the turn runs with
        // no live stream to follow (`LiveUnavailable`: no frame or read will come by itself):
        // the turn runs, send it again (otherwise the next frame or read of the turn does).
        let runs = match self.phase {
            Phase::InFlight { step, streaming } => streaming && step.is_stream(),
            Phase::LiveUnavailable => true,
            _ => false,
        };
        if runs && self.cancel_retry_at_ms.is_some_and(|at| now >= at) {
            self.maybe_send_cancel();
        }
        match self.phase {
            Phase::Waiting { until_ms, next } if now >= until_ms => self.begin(next),
            Phase::Failed(ConnectionError::CreateOutcomeUnknown)
                if self.recheck_at_ms.is_some_and(|at| now >= at) =>
            {
                // Look again, quietly: the status says `outcome-unknown` until one answers.
                self.recheck_at_ms = None;
                self.begin(Step::Lookup);
                self.quiet_lookup = true;
            }
            Phase::InFlight {
                step: Step::Lookup, ..
            } if self.lookup_deadline_ms.is_some_and(|d| now >= d) => {
                // The lookup budget is spent with the lookup unanswered (a server that does not
                // answer): say the outcome is unknown now, not at the idle watchdog.
                self.fail(ConnectionError::CreateOutcomeUnknown);
            }
            Phase::InFlight { step, streaming }
                if now >= self.last_activity_ms.saturating_add(self.idle_limit(step)) =>
            {
                // Idle watchdog: a silent request (or a stream hanging past the end of a
                // finished turn, PROTOCOL §9) is closed and retried.
                self.queue.push_back(Command::Abort);
                self.phase = Phase::Closed;
                self.flush_persist();
                self.refill_if_healthy();
                if step == Step::Post && !streaming {
                    self.create_outcome_unknown();
                } else if step.is_stream() && self.turn_known {
                    // A stream that went silent (a live one, or a subscribe whose headers never
                    // came: Firefox reports a crashed owner's silent 200 only with its first
                    // byte): nothing failed yet. Read the turn at once (not an attempt, the
                    // badge unchanged; a read that fails is one): finished → rebuild; still
                    // running → resubscribe, with a longer watchdog each silent cycle (issue 14).
                    self.resume_or_pause(Step::GetTurn);
                } else {
                    let next = self.retry_step(step);
                    self.transient(next, None);
                }
            }
            _ => {}
        }
    }

    /// Read the turn now (the web layer's cancel request returned): a live stream or a backoff
    /// wait gives way to `GetTurn`, so a turn the server already ended settles without waiting
    /// for a `turn.done` that may never come (a cancel of a crashed owner's turn writes none).
    /// Not an attempt; the badge is unchanged. Ignored while a one-shot request runs (its answer
    /// reads the turn anyway), before the turn id is known, and in every resting state.
    fn on_check_turn(&mut self) {
        if !self.turn_known || !self.online {
            return;
        }
        match self.phase {
            Phase::InFlight { step, .. } if step.is_stream() => {
                self.flush_persist();
                self.refill_if_healthy();
                self.begin(Step::GetTurn);
            }
            // No live stream: only this read shows the cancel took (the turn ends `cancelled`),
            // else its subscribe ends `LiveUnavailable` again.
            Phase::Waiting { .. } | Phase::LiveUnavailable => self.begin(Step::GetTurn),
            _ => {}
        }
    }

    /// A page lifecycle event (bfcache return, resume after freeze, wake): what is open may be
    /// dead without an error, so read the turn first. See [`Input::Lifecycle`] for what is
    /// ignored.
    fn on_lifecycle(&mut self) {
        if !self.turn_known || !self.online {
            return;
        }
        match self.phase {
            Phase::InFlight {
                step: Step::GetTurn,
                ..
            } if self.lifecycle_probe => {}
            Phase::InFlight { step, .. } => {
                if step.is_stream() {
                    self.flush_persist();
                    self.refill_if_healthy();
                }
                self.begin(Step::GetTurn);
                self.lifecycle_probe = true;
            }
            Phase::Waiting { .. } => {
                self.begin(Step::GetTurn);
                self.lifecycle_probe = true;
            }
            _ => {}
        }
    }

    /// The turn reads `running`: if it has been without a frame for `idle_timeout_ms`, count a
    /// silent cycle and report the silence.
    fn note_silence(&mut self) {
        let silent_ms = self.now_ms.saturating_sub(self.last_frame_ms);
        if silent_ms < self.config.idle_timeout_ms {
            return;
        }
        self.silent_cycles = self.silent_cycles.saturating_add(1);
        let silence = Silence {
            since_ms: self.last_frame_ms,
            silent_ms,
            cycles: self.silent_cycles,
            stalled: self.silent_cycles >= self.config.stalled_after_cycles.max(1),
        };
        self.silence = Some(silence);
        self.queue.push_back(Command::Silence(Some(silence)));
    }

    /// The open stream ended: if it was held open (no error status) for `healthy_after_ms` from
    /// its request, the attempt budget starts over.
    fn refill_if_healthy(&mut self) {
        if let Some(since) = self.held_since_ms.take() {
            if self.now_ms.saturating_sub(since) >= self.config.healthy_after_ms {
                self.attempt = 0;
            }
        }
    }

    fn on_offline(&mut self) {
        self.online = false;
        // No quiet look while offline: `Online` looks again at once.
        self.recheck_at_ms = None;
        match self.phase {
            Phase::InFlight { step, streaming } => {
                self.queue.push_back(Command::Abort);
                self.phase = Phase::Closed;
                self.flush_persist();
                let next = if step == Step::Post && !streaming {
                    // The aborted POST may or may not have created the turn.
                    Step::Lookup
                } else {
                    self.retry_step(step)
                };
                self.pause(next);
            }
            Phase::Waiting { next, .. } => self.pause(next),
            // A pending header refresh finishes first; `HeadersRefreshed` then pauses.
            _ => {}
        }
    }

    /// The request `step` answered: if it is the one in flight, mark it closed.
    fn take_in_flight(&mut self, expected: Step) -> bool {
        match self.phase {
            Phase::InFlight { step, .. } if step == expected => {
                self.phase = Phase::Closed;
                true
            }
            _ => false,
        }
    }

    /// Classify a failed request (already closed). `status: None` is a network failure.
    fn on_failure(&mut self, step: Step, status: Option<u16>, retry_after_ms: Option<u64>) {
        if step == Step::Post {
            match status {
                // No definite answer: the turn may exist (PROTOCOL §8.3).
                None | Some(408) | Some(500..=599) => self.create_outcome_unknown(),
                // Errors come before any SSE byte: the turn was not created.
                Some(status) => self.fail(error_for_status(status)),
            }
            return;
        }
        let Some(status) = status else {
            let next = self.retry_step(step);
            self.transient(next, None);
            return;
        };
        match status {
            401 if !self.auth_refreshed => {
                self.auth_refreshed = true;
                self.phase = Phase::RefreshingHeaders { retry: step };
                self.queue.push_back(Command::RefreshHeaders);
            }
            401 => self.fail(ConnectionError::Auth),
            // The live stream expired: rebuild from the listings, once (FIELD C5).
            412 if step == Step::Subscribe => self.begin(Step::Rebuild),
            400 if step == Step::Subscribe && (self.header_sent || !self.refusal_rebuilt) => {
                self.resume_refused()
            }
            // Gateway: listings of a running turn are refused.
            409 if step == Step::Rebuild => self.live_unavailable(),
            408 | 425 | 429 | 500..=599 => {
                let honoured = if status == 429 || status == 503 {
                    retry_after_ms
                } else {
                    None
                };
                let next = self.retry_step(step);
                self.transient(next, honoured);
            }
            // The session itself is gone (deleted, or a server that kept it in memory
            // restarted): no turn of it exists, a definite answer — not "outcome unknown"
            // forever (a trial: every quiet look answered 404 for minutes).
            404 if step == Step::Lookup => self.fail(ConnectionError::NotFound),
            _ if step == Step::Lookup => self.fail(ConnectionError::CreateOutcomeUnknown),
            _ => self.fail(error_for_status(status)),
        }
    }

    /// The subscribe (already closed) was refused: without `Last-Event-ID` at once if it
    /// carried it, else one rebuild from the listings.
    fn resume_refused(&mut self) {
        self.flush_persist();
        if self.header_sent {
            self.resume_header = false;
            self.queue
                .push_back(Command::ResumeFallback(ResumeFallback::QueryCursor));
            self.begin(Step::Subscribe);
        } else {
            self.refusal_rebuilt = true;
            self.resubscribe_after_rebuild = false;
            self.queue
                .push_back(Command::ResumeFallback(ResumeFallback::Rebuild));
            self.begin(Step::Rebuild);
        }
    }

    /// What to do after `step` failed transiently.
    fn retry_step(&self, step: Step) -> Step {
        match step {
            Step::Post | Step::Subscribe => self.recovery_step(),
            Step::Lookup | Step::GetTurn | Step::Rebuild => step,
        }
    }

    /// How to get back to the stream: read the turn if we know it, else find it.
    fn recovery_step(&self) -> Step {
        if self.turn_known {
            Step::GetTurn
        } else if self.posted {
            Step::Lookup
        } else {
            Step::Post
        }
    }

    fn create_outcome_unknown(&mut self) {
        // Before anything else, find out whether the POST created the turn.
        if self.turn_known {
            self.resume_or_pause(Step::GetTurn);
        } else {
            self.resume_or_pause(Step::Lookup);
        }
    }

    /// Count a failed attempt and wait (backoff, or `Retry-After`) before `next`.
    fn transient(&mut self, next: Step, retry_after_ms: Option<u64>) {
        if self.quiet_lookup && next == Step::Lookup {
            // A quiet look that failed retries at its own pace, not in a backoff of its own.
            self.fail(ConnectionError::CreateOutcomeUnknown);
            return;
        }
        self.attempt = self.attempt.saturating_add(1);
        if self.attempt > self.config.max_attempts {
            self.fail(if next == Step::Lookup {
                ConnectionError::CreateOutcomeUnknown
            } else {
                ConnectionError::TooManyAttempts
            });
            return;
        }
        if !self.online {
            self.pause(next);
            return;
        }
        let cap = self.config.backoff_cap_ms;
        let floor = self.config.backoff_floor_ms.min(cap);
        let delay = match retry_after_ms {
            Some(ms) => ms.max(self.config.retry_min_ms).max(floor).min(cap),
            None => {
                let base = self.retry_base_ms.unwrap_or(self.config.backoff_base_ms);
                backoff::delay(&mut self.jitter, base, floor, cap, self.attempt)
            }
        };
        let until_ms = self.now_ms.saturating_add(delay);
        if next == Step::Lookup && self.lookup_deadline_ms.is_some_and(|d| until_ms >= d) {
            // The next look would start past the lookup budget: the outcome is unknown now.
            self.fail(ConnectionError::CreateOutcomeUnknown);
            return;
        }
        self.phase = Phase::Waiting { until_ms, next };
        self.set_status(ConnectionStatus::Reconnecting {
            attempt: self.attempt,
            next_at_ms: until_ms,
        });
    }

    fn resume_or_pause(&mut self, next: Step) {
        if self.online {
            self.begin(next);
        } else {
            self.pause(next);
        }
    }

    fn pause(&mut self, next: Step) {
        // Offline: nothing is looked up until `Online`, which starts a new lookup budget.
        self.lookup_deadline_ms = None;
        self.quiet_lookup = false;
        self.phase = Phase::Offline { next };
        self.set_status(ConnectionStatus::Offline);
    }

    /// Issue request `step`, closing any request still open first.
    fn begin(&mut self, step: Step) {
        self.begin_with(step, true);
    }

    /// [`Self::begin`]; a `Rebuild` says `Rebuilding` only when `announce`.
    fn begin_with(&mut self, step: Step, announce: bool) {
        self.abort_if_open();
        let step = if step == Step::Post && self.posted {
            // Never POST twice (FIELD C8).
            self.recovery_step()
        } else {
            step
        };
        let command = match step {
            Step::Post => {
                self.posted = true;
                Command::PostTurn
            }
            Step::Lookup => {
                if self.lookup_deadline_ms.is_none() {
                    let budget = self.config.create_lookup_budget_ms;
                    self.lookup_deadline_ms = Some(self.now_ms.saturating_add(budget));
                }
                Command::LookupNewestTurn
            }
            Step::GetTurn => Command::GetTurn,
            Step::Subscribe => {
                let after = self.cursor.unwrap_or(0);
                self.header_sent = self.resume_header && after > 0;
                Command::Subscribe { after }
            }
            Step::Rebuild => {
                if announce {
                    self.set_status(ConnectionStatus::Rebuilding);
                }
                Command::Rebuild
            }
        };
        self.queue.push_back(command);
        self.phase = Phase::InFlight {
            step,
            streaming: false,
        };
        self.last_activity_ms = self.now_ms;
        self.progressed = false;
        self.stream_last = None;
        self.held_since_ms = step.is_stream().then_some(self.now_ms);
        self.lifecycle_probe = false;
    }

    fn abort_if_open(&mut self) {
        if let Phase::InFlight { .. } = self.phase {
            self.queue.push_back(Command::Abort);
            self.phase = Phase::Closed;
        }
    }

    fn fail(&mut self, error: ConnectionError) {
        self.lookup_deadline_ms = None;
        self.abort_if_open();
        self.flush_persist();
        self.phase = Phase::Failed(error);
        let quiet = core::mem::take(&mut self.quiet_lookup);
        self.recheck_at_ms = None;
        if error == ConnectionError::CreateOutcomeUnknown && self.config.outcome_recheck_ms > 0 {
            let wait = self
                .config
                .outcome_recheck_ms
                .saturating_mul(1u64 << self.rechecks.min(16))
                .min(
                    self.config
                        .backoff_cap_ms
                        .max(self.config.outcome_recheck_ms),
                );
            self.recheck_at_ms = self.online.then(|| self.now_ms.saturating_add(wait));
            self.rechecks = self.rechecks.saturating_add(1);
        }
        if quiet && self.status == Some(ConnectionStatus::Failed(error)) {
            self.queue.push_back(Command::OutcomeStillUnknown);
        } else {
            self.set_status(ConnectionStatus::Failed(error));
        }
    }

    fn live_unavailable(&mut self) {
        self.abort_if_open();
        self.flush_persist();
        self.phase = Phase::LiveUnavailable;
        self.set_status(ConnectionStatus::LiveUnavailable);
        // The server holds the turn as running: a cancel still to be delivered goes now (a
        // re-check: a cancel lost in a server crash left the turn running behind "Stopping…").
        self.maybe_send_cancel();
    }

    /// After `Done`: the draining stream ends by itself (its end, or a failure), or is aborted
    /// once [`DONE_DRAIN_MS`] have passed, or when the app disconnects.
    fn drain(&mut self, input: &Input) {
        let Some(until) = self.drain_until_ms else {
            return;
        };
        match input {
            Input::Eof | Input::NetworkError | Input::InvalidResponse => self.drain_until_ms = None,
            Input::Tick if self.now_ms >= until => {
                self.drain_until_ms = None;
                self.queue.push_back(Command::Abort);
            }
            Input::Disconnect => {
                self.drain_until_ms = None;
                self.queue.push_back(Command::Abort);
            }
            _ => {}
        }
    }

    fn finish_done(&mut self) {
        // A stream that carried `turn.done` is left to end by itself (see the module docs);
        // any other open request is closed now.
        match self.phase {
            Phase::InFlight { step, .. } if step.is_stream() => {
                self.phase = Phase::Closed;
                self.drain_until_ms = Some(self.now_ms.saturating_add(DONE_DRAIN_MS));
            }
            _ => self.abort_if_open(),
        }
        self.persist_due_ms = None;
        self.phase = Phase::Done;
        self.queue.push_back(Command::ClearPersisted);
        self.set_status(ConnectionStatus::Done);
    }

    /// See [`Input::CancelFailed`].
    fn on_cancel_failed(&mut self, retry_after_ms: Option<u64>) {
        if !self.cancel_sent {
            return;
        }
        self.cancel_sent = false;
        if self.cancel_sends >= MAX_CANCEL_SENDS {
            self.queue.push_back(Command::CancelUndelivered);
            return;
        }
        let cap = self.config.backoff_cap_ms.max(CANCEL_RETRY_MS);
        let wait = backoff::ceiling(CANCEL_RETRY_MS, cap, self.cancel_sends)
            .max(retry_after_ms.unwrap_or(0));
        self.cancel_retry_at_ms = Some(self.now_ms.saturating_add(wait));
    }

    fn maybe_send_cancel(&mut self) {
        // Cancel targets the session's running turn; before our POST was accepted it could
        // hit an older turn, so it waits until the turn surely exists.
        // Not while offline: the request would fail at once and the cancel be lost (a trial:
        // Stop pressed offline, the reply ran to the end once back online).
        if self.cancel_requested
            && !self.cancel_sent
            && self.online
            && self.cancel_sends < MAX_CANCEL_SENDS
            && self.cancel_retry_at_ms.is_none_or(|at| self.now_ms >= at)
            && (self.turn_known || self.post_accepted)
        {
            self.cancel_retry_at_ms = None;
            self.cancel_sent = true;
            self.cancel_sends += 1;
            self.queue.push_back(Command::PostCancel);
        }
    }

    /// Checkpoint the cursor now, or schedule it `persist_interval_ms` after the last one.
    fn maybe_persist(&mut self) {
        if !self.cursor_ahead() {
            return;
        }
        match self.last_persist_at_ms {
            Some(at) if self.now_ms < at.saturating_add(self.config.persist_interval_ms) => {
                self.persist_due_ms = Some(at.saturating_add(self.config.persist_interval_ms));
            }
            _ => self.flush_persist(),
        }
    }

    /// Checkpoint the cursor now if it is ahead of the last checkpoint.
    fn flush_persist(&mut self) {
        self.persist_due_ms = None;
        if let (true, Some(after)) = (self.cursor_ahead(), self.cursor) {
            self.persisted = Some(after);
            self.last_persist_at_ms = Some(self.now_ms);
            self.queue.push_back(Command::Persist { after });
        }
    }

    fn cursor_ahead(&self) -> bool {
        match (self.cursor, self.persisted) {
            (Some(cursor), Some(persisted)) => cursor > persisted,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    fn set_status(&mut self, status: ConnectionStatus) {
        if self.status.as_ref() != Some(&status) {
            self.status = Some(status.clone());
            self.queue.push_back(Command::Status(status));
        }
    }
}

/// The error of a status the machine does not retry.
fn error_for_status(status: u16) -> ConnectionError {
    match status {
        400 => ConnectionError::BadRequest,
        401 => ConnectionError::Auth,
        403 => ConnectionError::Forbidden,
        404 => ConnectionError::NotFound,
        other => ConnectionError::Http(other),
    }
}
