//! What the engine asks its executor to do, as data ([`Session::poll_effect`]).
//!
//! [`Session::poll_effect`]: super::Session::poll_effect
use alloc::string::String;
use alloc::vec::Vec;

use super::checkpoint::Checkpoint;
use super::error::SessionError;
use super::tabs::TabEffect;
use crate::wire::SessionEventItem;

/// Identifies one request the engine issued; every transport result names it. Results of a
/// request the engine aborted (or never issued) are ignored.
pub type RequestId = u64;

/// Identifies one app command (chosen by the executor); settled once with [`Effect::Settle`].
pub type CommandId = u64;

/// HTTP method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `POST`.
    Post,
}

impl Method {
    /// `"GET"` / `"POST"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// How the executor reports the response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseKind {
    /// An SSE body (`accept: text/event-stream`): a 2xx is reported with
    /// [`Input::StreamOpened`](super::Input::StreamOpened), then every body read with
    /// [`Input::Bytes`](super::Input::Bytes) as it arrives, then [`Input::End`](super::Input::End)
    /// or [`Input::NetworkError`](super::Input::NetworkError). A non-2xx is read whole and
    /// reported with [`Input::Response`](super::Input::Response).
    Stream,
    /// A JSON body, read whole and reported with [`Input::Response`](super::Input::Response).
    Whole,
}

/// One HTTP request. The executor adds the app's headers (the header provider, asked before
/// every request; if it fails, report [`Input::HeadersUnavailable`](super::Input::HeadersUnavailable)),
/// `content-type: application/json` with a body, and the credentials mode.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    /// Names the results.
    pub id: RequestId,
    /// `GET` or `POST`.
    pub method: Method,
    /// Absolute or page-relative URL.
    pub url: String,
    /// Send `Last-Event-ID: {n}` (the subscribe cursor, PROTOCOL §8.1); `None` when there is
    /// no cursor yet (a subscribe from the first event sends no such header).
    pub last_event_id: Option<u64>,
    /// JSON request body.
    pub json_body: Option<String>,
    /// How to read and report the response.
    pub response: ResponseKind,
}

/// What an app command resolved to. (`PartialEq` only: an exported unknown event is kept as
/// JSON, which has floats.)
#[derive(Clone, Debug, PartialEq)]
pub enum Settled {
    /// `load`, `cancel`: done.
    Done,
    /// `send` / `respond` / `continueAfterAuth`: the new turn's id (its `turn.created` arrived,
    /// or effect recovery found it).
    Turn(String),
    /// `resume`: the turn followed, if the checkpoint named one.
    Resumed(Option<String>),
    /// `restore`: whether the session exists (false: it is gone, the pointer was cleared).
    Restored(bool),
    /// `AwaitCreateOutcome`: what the lookup of an unanswered create found — `Some(turn id)`:
    /// the POST created that turn (the engine follows it; nothing is sent again); `None`: the
    /// server has no such turn, so sending the message again is safe (PROTOCOL §8.3).
    Created(Option<String>),
    /// `exportEvents`: every item of the session timeline `GET /sessions/{sid}/events`
    /// (PROTOCOL §4), oldest first, as the protocol's `{turn_id, event}`.
    Events(Vec<SessionEventItem>),
}

/// One storage write of the engine, carried out by
/// [`CheckpointStore::perform`](super::checkpoint::CheckpointStore::perform) (which decides how:
/// memory fallback, monotonic writes, scoped pointers, expiry). Only ids and cursors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageEffect {
    /// Store this session's checkpoint (`turn_id: None` = no live turn). Monotonic: the engine
    /// never writes a lower `seq` for the same turn (and the store refuses one another tab
    /// would lower).
    WriteCheckpoint(Checkpoint),
    /// Remove `session_id`'s checkpoint (the session is gone).
    RemoveCheckpoint {
        /// The session.
        session_id: String,
    },
    /// Point "last active session" at `session_id`.
    WritePointer {
        /// The session.
        session_id: String,
    },
    /// Remove the last-session pointers that name `session_id` (stale: the server no longer
    /// has it).
    ClearPointer {
        /// The session.
        session_id: String,
    },
}

/// One effect. The executor carries them out in order, then feeds the results back as
/// [`Input`](super::Input)s.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Send a request (at most one of the active turn's requests is open at a time; history
    /// pages, exports, cancels and checks of an interrupted turn run beside it).
    Request(HttpRequest),
    /// Open an `EventSource` on `url` (the `eventsource` transport; GET subscribe only).
    /// Report `open` as [`Input::StreamOpened`](super::Input::StreamOpened), each message as
    /// [`Input::Frame`](super::Input::Frame), `error` as [`Input::NetworkError`](super::Input::NetworkError).
    OpenEventSource {
        /// Names the results.
        id: RequestId,
        /// The subscribe URL (the cursor is in its query).
        url: String,
    },
    /// Close request `id` (abort its fetch / close its EventSource). Report nothing for it.
    Abort {
        /// The request.
        id: RequestId,
    },
    /// Ask the app's header provider again (after a 401); report
    /// [`Input::HeadersRefreshed`](super::Input::HeadersRefreshed).
    RefreshHeaders {
        /// Names the result.
        id: RequestId,
    },
    /// A checkpoint or pointer write: pass it to the client's
    /// [`CheckpointStore::perform`](super::checkpoint::CheckpointStore::perform).
    Storage(StorageEffect),
    /// Settle app command `command`.
    Settle {
        /// The command.
        command: CommandId,
        /// Its result.
        outcome: Result<Settled, SessionError>,
    },
    /// Relay a frame, follow the relay, send a heartbeat, or steal the lock
    /// ([`tabs`](super::tabs)).
    Tab(TabEffect),
    /// The view, the connection badge or the warnings changed since the last drain
    /// ([`Session::take_changes`](super::Session::take_changes)). At most one per drain.
    Notify,
}
