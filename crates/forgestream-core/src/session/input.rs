//! What the executor tells the engine: app commands, transport results, time, connectivity.
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;

use super::checkpoint::Checkpoint;
use super::effect::{CommandId, RequestId};
use super::tabs::TabInput;
use crate::respond::Decision;
use crate::resume::Lifecycle;
use crate::wire::InputItem;

/// An app command ([`Input::Command`]); each is settled once with
/// [`Effect::Settle`](super::Effect::Settle).
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Load the history: every page of the turns, then of the session timeline. Joins a load
    /// already in flight. Settles `Done`.
    Load,
    /// Follow the turn `checkpoint` names (after a page refresh): replay its live stream from the
    /// start, or rebuild it when it finished. Settles `Resumed` once the turn's state is known
    /// (so a paused turn's pending set is final), not when the request goes out.
    Resume {
        /// The stored checkpoint of this session, if any (already validated by the store).
        checkpoint: Option<Checkpoint>,
    },
    /// `Load` then `Resume`, once per engine: concurrent restores join the first; a later one
    /// settles with its result. A 404 on the session settles `Restored(false)` and clears the
    /// pointer and the checkpoint.
    Restore {
        /// As for `Resume`.
        checkpoint: Option<Checkpoint>,
    },
    /// Start a turn with `input`. Refused with `turn-running` while a turn runs unless
    /// `interrupt` (the server then cancels it as `cancelled-for-next-turn`, and the engine
    /// reads its fate). Settles `Turn(id)` once `turn.created` arrived.
    Send {
        /// Input items (validated as the server would, PROTOCOL §7).
        input: Vec<InputItem>,
        /// Interrupt a running turn.
        interrupt: bool,
    },
    /// Answer every pending action of the paused turn in one batch and continue
    /// (`AuthDone` alone = continue after MCP auth). Settles `Turn(id)`.
    Respond {
        /// The decisions.
        decisions: Vec<Decision>,
    },
    /// Stop the running turn (`POST /cancel`, idempotent). Settles `Done`.
    Cancel,
    /// A `Send`, `Respond` or `Cancel` that waited for another tab's action on this session
    /// (issue 14: the executor holds the session's action lock for the length of each action,
    /// and another tab held it when this one asked). The engine first lists the newest turn
    /// (`GET …/turns?limit=1&order=desc`) and settles `conflict`, sending nothing, when
    /// [`action::stale_after_wait`](super::action::stale_after_wait) says the other tab's action
    /// made this one stale; else `command` runs as usual (also when the listing fails). Any
    /// other command inside runs at once.
    AfterWait {
        /// The action.
        command: Box<Command>,
    },
    /// Close the transport without cancelling the turn (the checkpoint stays).
    Disconnect,
    /// Simulate a network failure of the open request (demo control, tests).
    DropConnection,
    /// Try again after `liveUnavailable` or a retryable failure (never re-POSTs a turn).
    Refresh,
    /// Wait for the outcome of the active run's create POST that got no definite answer (its
    /// run failed with `outcome-unknown`, PROTOCOL §8.3). Sends nothing and starts no lookup
    /// itself: `Refresh` (or the browser's `online` event) looks up again, with a new
    /// `reconnect.createLookupBudgetMs`. Settles `Created(Some(turn id))` once a lookup found
    /// the turn (the engine follows it) — at once when one already did —, `Created(None)` once
    /// one showed the server has no such turn (sending again is safe), `outcome-unknown` when
    /// the next lookup ended without an answer again; `aborted` when there is no such run (a
    /// newer turn replaced it, or the engine never had one) or the engine closes.
    AwaitCreateOutcome,
    /// Follow `turn_id` (another tab started it); nothing if it is already followed.
    Attach {
        /// The turn.
        turn_id: String,
    },
    /// Read every page of the session timeline `GET /sessions/{sid}/events` (PROTOCOL §4) with
    /// the engine's requests, beside anything else that runs (a live stream, a load, another
    /// export). Settles `Events(items)`, oldest first; or the server's error (`not-found` for a
    /// session it no longer has), `network`, `invalid-response`, `auth` (the header provider
    /// failed); `aborted` when `Close` comes first (its request is aborted). A listing that
    /// repeats a page token or passes 1,000 pages ends with what was read and a `protocol`
    /// warning, as the history load does.
    ExportEvents,
    /// The last handle closed: abort everything (exports included), reject what is pending,
    /// keep the checkpoint. Every later command is refused with `aborted`.
    Close,
}

/// One thing that happened, fed to [`Session::handle`](super::Session::handle) with the current
/// time. Results naming a request the engine no longer waits for are ignored. Never panics.
#[derive(Clone, Debug, PartialEq)]
pub enum Input<'a> {
    /// An app command, identified by `id` for its settlement.
    Command {
        /// Chosen by the executor.
        id: CommandId,
        /// The command.
        command: Command,
    },
    /// A [`ResponseKind::Stream`](super::ResponseKind::Stream) request answered 2xx (or an
    /// `EventSource` opened), with the facts of its head; the engine decides whether the body is
    /// the live stream. A body that is not an event stream ([`crate::sse::check_event_stream`]
    /// refuses its `Content-Type` or the redirect: a login page, a JSON body) fails the turn's
    /// connection at once with code `invalid-response`, not retryable, naming what came back,
    /// and the engine aborts the request (the executor then reads no body).
    StreamOpened {
        /// The request.
        request: RequestId,
        /// HTTP status (200 for an EventSource).
        status: u16,
        /// The `Content-Type` header, if any (an `EventSource` passes `text/event-stream`: the
        /// browser fails one whose response has another type, WHATWG HTML §9.2.3).
        content_type: Option<&'a str>,
        /// The fetch followed a redirect (`Response.redirected`).
        redirected: bool,
    },
    /// One body read of an open stream, exactly as the network delivered it. Any bytes count
    /// as liveness for the idle watchdog, also those of a frame not complete yet.
    Bytes {
        /// The request.
        request: RequestId,
        /// The bytes.
        bytes: &'a [u8],
    },
    /// One `EventSource` message (the browser parsed SSE already).
    Frame {
        /// The request.
        request: RequestId,
        /// The message's data.
        data: &'a str,
        /// The browser's last-event-id buffer (TrueForge sends an `id:` with every frame).
        last_event_id: &'a str,
    },
    /// The stream's body ended cleanly.
    End {
        /// The request.
        request: RequestId,
    },
    /// The request failed without a usable response (fetch rejected, the body errored).
    NetworkError {
        /// The request.
        request: RequestId,
    },
    /// A whole response (every `Whole` request; a `Stream` request's non-2xx answer).
    Response {
        /// The request.
        request: RequestId,
        /// HTTP status.
        status: u16,
        /// The raw `Retry-After` header, if any.
        retry_after: Option<&'a str>,
        /// The body bytes.
        body: &'a [u8],
    },
    /// The header provider failed before request `request` was sent (treated as a 401).
    HeadersUnavailable {
        /// The request.
        request: RequestId,
    },
    /// The header provider answered after [`Effect::RefreshHeaders`](super::Effect::RefreshHeaders).
    HeadersRefreshed {
        /// The refresh.
        request: RequestId,
        /// It returned headers (false: it threw or rejected).
        ok: bool,
    },
    /// A storage warning from the executor's store (`unavailable`, `write-failed`, …).
    StorageWarning {
        /// What happened.
        message: String,
    },
    /// [`Session::poll_timeout`](super::Session::poll_timeout) may have passed.
    Timer,
    /// The browser reports connectivity.
    Online,
    /// The browser reports no connectivity.
    Offline,
    /// A page lifecycle event: `pageshow` with `persisted` ([`Lifecycle::Restored`]) or
    /// `resume` on `document` ([`Lifecycle::Resumed`]). The followed turn is read first, then
    /// resubscribed or rebuilt ([`resume::Input::Lifecycle`](crate::resume::Input::Lifecycle)).
    /// A wake from sleep needs no input: the engine sees the clock jump itself
    /// ([`WAKE_GAP_MS`](super::WAKE_GAP_MS)); [`Lifecycle::Woke`] fed here acts the same.
    Lifecycle(Lifecycle),
    /// `pagehide` on the window: the followed turn's checkpoint is written now if a write was
    /// waiting for its interval ([`resume::Input::PageHide`](crate::resume::Input::PageHide)),
    /// so a reload shows the turn from where the page was (a restore shows nothing of its
    /// replay short of the checkpoint, [`CATCH_UP_MAX_MS`](super::CATCH_UP_MAX_MS)).
    PageHide,
    /// The page became visible again (`visibilitychange`): when no turn is followed, the
    /// engine looks for turns made elsewhere (another browser or device; `sync.rs`), at most
    /// once per [`SYNC_VISIBLE_MS`](super::SYNC_VISIBLE_MS).
    Visible,
    /// The other tabs of the origin: a role, a relayed frame, a leader's heartbeat
    /// ([`tabs`](super::tabs)).
    Tab(TabInput<'a>),
}

/// `Retry-After` in ms when given as delta-seconds (the HTTP-date form is ignored).
pub fn retry_after_ms(value: &str) -> Option<u64> {
    value
        .trim()
        .parse::<u64>()
        .ok()
        .map(|s| s.saturating_mul(1000))
}
