//! What the web layer tells the machine: starts, responses, stream frames, timers, user actions.

/// How a [`Connection`](super::Connection) begins (its first [`Input::Start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartMode {
    /// The app sends a new turn: `POST …/sessions/{sid}/turns` with `stream: true`, whose 200
    /// body is the live stream (PROTOCOL §4). The machine POSTs exactly once, never again.
    CreateTurn,
    /// Restore after a refresh, or follow a turn someone else created: first `GetTurn` (a cursor
    /// at the end of a finished turn hangs on real servers, PROTOCOL §9), then subscribe or
    /// rebuild. `after` is the persisted cursor (last processed sequence number), if any.
    Attach {
        /// Last processed `sequence_number`; `None` replays the turn from its start.
        after: Option<u64>,
    },
}

/// A page lifecycle event after which the open request may be dead although nothing reported
/// it ([`Input::Lifecycle`], issue 14 "Page lifecycle").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// The page came back from the back/forward cache (`pageshow` with `persisted`): its
    /// connections were closed or frozen while it was cached.
    Restored,
    /// The page was resumed after `freeze` (`resume` on `document`): its tasks, timers and
    /// reads were suspended for an unknown time.
    Resumed,
    /// The machine slept: the wall clock jumped far past the deadline the executor was given
    /// (the session engine detects it, [`WAKE_GAP_MS`](crate::session::WAKE_GAP_MS)), so the
    /// open connection may have died silently while the computer was suspended.
    Woke,
}

impl Lifecycle {
    /// `"restored"` / `"resumed"` / `"woke"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Lifecycle::Restored => "restored",
            Lifecycle::Resumed => "resumed",
            Lifecycle::Woke => "woke",
        }
    }
}

/// One thing that happened, fed to [`Connection::handle`](super::Connection::handle) with the
/// current time in ms. Inputs that do not fit the current state (a late response of a request
/// the machine already gave up on, a second `Start`) are ignored; none of them panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// Begin. Only the first `Start` counts.
    Start {
        /// Create a turn or attach to an existing one.
        mode: StartMode,
    },
    /// The status line of the current request arrived. For `PostTurn` and `Subscribe`, a 2xx
    /// status means the body is the live stream. For `GetTurn`, `Rebuild` and
    /// `LookupNewestTurn`, a 2xx status is only noted as liveness (their outcome comes as
    /// `TurnFetched` / `RebuildDone` / `TurnLookup`); a non-2xx status is their failure.
    /// After reporting a non-2xx status the web layer has dropped the response body.
    ResponseHeaders {
        /// HTTP status code.
        status: u16,
        /// `Retry-After`, already converted to ms (seconds · 1000, or date − now); used for
        /// 429 and 503, clamped to `[retry_min_ms, backoff_cap_ms]`.
        retry_after_ms: Option<u64>,
    },
    /// The reducer applied one frame of this turn's stream.
    Event {
        /// The frame's `id:` (the event's sequence number), if it had one. The cursor is the
        /// highest one seen; it never goes down (replays are at-least-once).
        sequence_number: Option<u64>,
        /// The frame was this turn's `turn.done`.
        turn_done: bool,
    },
    /// A frame of the open stream skipped ahead of the cursor (a gap: PROTOCOL §3 numbers +1
    /// per event); the web layer did not apply it. The stream is closed and the turn rebuilt from
    /// the listings once; a turn still running is then resubscribed after the cursor. A second
    /// time in one run the rebuild ends `LiveUnavailable`. (A stream whose numbers step back is
    /// detected by the machine itself from [`Input::Event`].)
    OutOfOrder,
    /// The turn's live stream is gone (PROTOCOL §4: a subscribe answered 412), though this
    /// machine's own stream did not say so: another tab leads the session's one stream and
    /// relays it here, and its subscribe was refused. The open stream (the relay) is closed and
    /// handled as a subscribe answered 412: rebuilt from the listings once, then `Done` or
    /// `LiveUnavailable` (FIELD C5), as the leading tab does.
    LiveGone,
    /// The frame just applied was this turn's `turn.done`, but its live view is incomplete (the
    /// reducer's event cap refused some of its events): instead of `Done`, the turn is rebuilt
    /// from the listings once, then `Done` (or `LiveUnavailable` if the server still reports
    /// it running).
    TurnDoneIncomplete,
    /// The open stream's answer broke the protocol beyond recovery: a 2xx that is not an event
    /// stream ([`crate::sse::check_event_stream`]; the web layer drops the body), or a
    /// `turn.created` naming an unsafe turn id. Ends in `Failed(InvalidResponse)` at once, for
    /// the create POST too (a login page created no turn).
    InvalidResponse,
    /// A `:` comment line arrived: liveness only (FIELD C3).
    Comment,
    /// Bytes of the open stream arrived, whole frames or not: liveness only. A frame that
    /// arrives more slowly than `idle_timeout_ms` (a large frame over a slow link) is progress,
    /// not silence, and the watchdog must not cut it (issue 18 item 9); a stream that sends
    /// nothing at all is still closed after `idle_timeout_ms`.
    BytesArrived,
    /// A `retry:` field arrived (ms): it becomes the backoff base, clamped to
    /// `[retry_min_ms, retry_max_ms]`. Also liveness.
    Retry(u64),
    /// The stream body ended cleanly. Without a prior `turn.done` the machine reconnects after the
    /// last processed sequence number (TrueForge closes idle subscribers after 600 s, PROTOCOL §3).
    Eof,
    /// The current request failed without a usable response: `fetch` rejected, or the body
    /// stream errored. Applies to whatever request is in flight.
    NetworkError,
    /// A subscribe failed with no response in a way that looks like a refused CORS preflight
    /// (the web layer's call: a cross-origin request, no response before the stream opened).
    /// When it carried `Last-Event-ID`, the machine retries once with the cursor in the query
    /// (or body) only ([`Command::ResumeFallback`](super::Command::ResumeFallback)); otherwise it
    /// is a [`Input::NetworkError`].
    ResumeRefused,
    /// `GetTurn` answered.
    TurnFetched {
        /// The turn's state is `done`, `cancelled` or `error` (PROTOCOL §6).
        terminal: bool,
    },
    /// `GetTurn` failed.
    TurnFetchFailed {
        /// HTTP status, or `None` for a network failure.
        status: Option<u16>,
        /// `Retry-After` in ms, if the response had one.
        retry_after_ms: Option<u64>,
    },
    /// `LookupNewestTurn` answered (effect recovery, PROTOCOL §8.3).
    TurnLookup {
        /// The session's newest turn is the one our failed POST created. The web layer now
        /// knows its id and uses it for the following `GetTurn` / `Subscribe` / `Rebuild`.
        found_ours: bool,
    },
    /// `LookupNewestTurn` failed.
    TurnLookupFailed {
        /// HTTP status, or `None` for a network failure.
        status: Option<u16>,
        /// `Retry-After` in ms, if the response had one.
        retry_after_ms: Option<u64>,
    },
    /// `Rebuild` finished: the turn's persisted events and the session timeline are loaded.
    RebuildDone {
        /// The rebuilt turn is terminal (its listing holds `turn.done`, or its state says so).
        /// `false` means the turn still runs but its live stream is gone (FIELD C5b).
        terminal: bool,
    },
    /// `Rebuild` failed. A 409 (gateway: listings of a running turn) ends in `LiveUnavailable`.
    RebuildFailed {
        /// HTTP status, or `None` for a network failure.
        status: Option<u16>,
        /// `Retry-After` in ms, if the response had one.
        retry_after_ms: Option<u64>,
    },
    /// The header provider returned fresh headers after `RefreshHeaders`.
    HeadersRefreshed,
    /// The header provider threw or rejected: ends in `Failed(Auth)`.
    HeadersRefreshFailed,
    /// A deadline from [`poll_timeout`](super::Connection::poll_timeout) may have passed.
    Tick,
    /// The browser reports connectivity (`online` event): reconnect at once if paused.
    Online,
    /// The browser reports no connectivity (`offline` event): abort and pause retries.
    Offline,
    /// The user stops the turn: `PostCancel` once, keep streaming until `turn.done`. While
    /// offline the `PostCancel` waits for the connection to come back: it goes out once the turn
    /// is read and found still running, or with the next frame.
    Cancel,
    /// The web layer's `PostCancel` got no answer (a network failure) or a server error (5xx,
    /// 429): the cancel did not reach the turn. It is sent again after a wait (1 s, doubling,
    /// at most `backoff_cap_ms`; longer if the server's `Retry-After` says so), once the turn is
    /// seen running (the next frame or read of the turn, or the live stream at the wait's end),
    /// at most [`MAX_CANCEL_SENDS`](super::MAX_CANCEL_SENDS) times in all; then
    /// [`Command::CancelUndelivered`](super::Command::CancelUndelivered).
    CancelFailed {
        /// The failed answer's `Retry-After`, ms.
        retry_after_ms: Option<u64>,
    },
    /// Read the turn's state now (issue 14): the web layer's cancel request returned 2xx, so the
    /// server may already have ended the turn — and a cancel of a turn whose owner crashed writes
    /// no `turn.done` to any stream. An open stream (or a backoff wait) gives way to `GetTurn`:
    /// terminal → `Rebuild` → `Done`; still running → `Subscribe` after the cursor (replayed
    /// frames are deduplicated by sequence number). Not counted as an attempt; ignored while a
    /// one-shot request is in flight, before the turn id is known and in resting states.
    CheckTurn,
    /// The page came back from bfcache, was resumed after a freeze, or the machine woke from
    /// sleep ([`Lifecycle`]): whatever is open may be dead without an error, so the turn is read
    /// first (`GetTurn`), then resubscribed after the cursor (running) or rebuilt (terminal).
    /// An open stream or one-shot request is aborted for it and a backoff wait ends at once;
    /// not counted as an attempt, not a silent cycle (a suspended page is no evidence of a
    /// silent turn), the badge unchanged. Ignored while such a read is already in flight (a
    /// `resume` and the wake it causes probe once), while offline (`Online` reconnects), while
    /// headers are refreshed, before the turn id is known (the create POST's own recovery
    /// applies: a dead POST is caught by the idle watchdog) and in every resting state
    /// (`Done`, `Failed`, `LiveUnavailable`: only `Refresh` restarts those).
    Lifecycle(Lifecycle),
    /// The page is being hidden or unloaded (`pagehide`, WHATWG HTML §7.4.5): a checkpoint
    /// write the interval deferred (`persist_interval_ms`) is made now, so a reload resumes
    /// from the last frame the page applied, not from up to an interval before it. Nothing
    /// else changes (a page may stay alive, e.g. in the back/forward cache).
    PageHide,
    /// Close the transport and stop, without cancelling the turn. Nothing is emitted after it
    /// except the closing `Persist` / `Abort`.
    Disconnect,
    /// The user asked to try again from `LiveUnavailable` or a retryable `Failed` state.
    /// Never re-POSTs: it checks the turn (or looks it up) and resumes from the cursor.
    Refresh,
}
