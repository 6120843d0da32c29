//! What the machine asks the web layer to do, and the status it shows the UI.

use core::fmt;

/// One effect for the web layer to carry out, in order, from
/// [`Connection::poll_command`](super::Connection::poll_command).
///
/// At most one request (`PostTurn`, `Subscribe`, `GetTurn`, `LookupNewestTurn`, `Rebuild`) is
/// in flight at a time; before a new one the machine emits `Abort` if the previous one was still
/// open. `PostCancel` is fire-and-forget beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `POST …/sessions/{sid}/turns` with `stream: true`. Emitted at most once per machine, only
    /// in `CreateTurn` mode; reconnects never POST again (FIELD C8). Report the status with
    /// `ResponseHeaders`, the body's frames with `Event`/`Comment`/`Retry`, its end with `Eof`.
    PostTurn,
    /// Effect recovery (PROTOCOL §8.3): the POST failed without a definite answer; list the
    /// session's turns (newest first) and report whether the newest one is ours with
    /// `TurnLookup`, or `TurnLookupFailed`.
    LookupNewestTurn,
    /// Open the live stream: `GET …/turns/{tid}/subscribe?after_sequence_number={after}` (gateway:
    /// `POST` with the cursor in the body) and, when `after > 0` and
    /// [`Connection::sends_resume_header`](super::Connection::sends_resume_header), header
    /// `Last-Event-ID: {after}` (PROTOCOL §8.1). `after` is exclusive; 0 replays from the first
    /// event.
    Subscribe {
        /// Last processed sequence number.
        after: u64,
    },
    /// `GET …/turns/{tid}`; report `TurnFetched { terminal }` or `TurnFetchFailed`.
    GetTurn,
    /// Load the turn's persisted events (`GET …/turns/{tid}/events`) and the session timeline,
    /// feed them to the reducer, then report `RebuildDone { terminal }` or `RebuildFailed`.
    Rebuild,
    /// Ask the app's header provider again (after a 401); report `HeadersRefreshed` or
    /// `HeadersRefreshFailed`. The machine then repeats the same request with the same cursor.
    RefreshHeaders,
    /// Close the current request/stream (`AbortController.abort()`); report nothing for it.
    Abort,
    /// `POST …/sessions/{sid}/cancel`. Emitted once per Stop, again only after
    /// [`Input::CancelFailed`](super::Input::CancelFailed); the stream continues until
    /// `turn.done` (`cancelled`).
    PostCancel,
    /// Store the cursor checkpoint `{turnId, seq: after}`. Values only ever grow; checkpoints
    /// are coalesced to one per `persist_interval_ms` and flushed when a stream ends.
    Persist {
        /// Last processed sequence number.
        after: u64,
    },
    /// The turn settled: remove the persisted live marker of this turn.
    ClearPersisted,
    /// The connection badge changed. Emitted only on change.
    Status(ConnectionStatus),
    /// How long the followed turn has been silent changed (issue 14): `Some` at each read of the
    /// turn that found it still `running` after `idle_timeout_ms` without a frame, `None` at the
    /// first frame after such a silence. Also readable as
    /// [`Connection::silence`](super::Connection::silence).
    Silence(Option<Silence>),
    /// The turn's cancel could not be delivered: [`MAX_CANCEL_SENDS`](super::MAX_CANCEL_SENDS)
    /// requests failed (network failures, 5xx, 429). The turn goes on; the user may press Stop
    /// again later (a new budget) or send a new message, which interrupts it.
    CancelUndelivered,
    /// A resume was refused and the machine falls back (issue 14): tell the app (a warning).
    ResumeFallback(ResumeFallback),
    /// A quiet look for an unanswered create ([`Config::outcome_recheck_ms`]) ended without an
    /// answer: the status stays `Failed(CreateOutcomeUnknown)` (so no `Status` says it), but
    /// whoever waits for the next look's answer hears that it had none.
    ///
    /// [`Config::outcome_recheck_ms`]: super::Config::outcome_recheck_ms
    OutcomeStillUnknown,
}

/// How the machine goes on after a refused resume (a 400, or a failure that looks like a refused
/// CORS preflight, [`Input::ResumeRefused`](super::Input::ResumeRefused)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeFallback {
    /// The subscribe carried `Last-Event-ID`: it is sent again at once with the cursor in the
    /// query (or body) only, and so are the later ones of this turn.
    QueryCursor,
    /// Refused without the header too: the turn is rebuilt from the listings once (a finished
    /// turn ends `Done`, a running one `LiveUnavailable`).
    Rebuild,
}

/// A followed turn that reads `running` but has sent no frame for a while (issue 14). All times
/// in the caller's ms clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Silence {
    /// When the turn last showed progress (a frame with a new sequence number, or when the
    /// machine started following it).
    pub since_ms: u64,
    /// How long it had been silent when the turn was last read (`now − since_ms` then).
    pub silent_ms: u64,
    /// Silent cycles so far: reads of the turn that found it `running` after at least
    /// `idle_timeout_ms` without a frame (idle-watchdog cycles, reconnects after idle cuts).
    pub cycles: u32,
    /// `cycles ≥ stalled_after_cycles`: probably stuck (a crashed owner) or a very long silent
    /// tool call — the machine cannot tell them apart and keeps probing; an app may offer to send
    /// a new turn (which interrupts this one).
    pub stalled: bool,
}

/// The state of the connection as the UI shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionStatus {
    /// A request that (re)opens the stream is in flight: the first one, or an immediate
    /// reconnect (a healthy stream ended, the browser came back online, a manual refresh).
    Connecting,
    /// A stream is open (2xx received).
    Live,
    /// Waiting before the next attempt.
    Reconnecting {
        /// 1-based count of consecutive failed attempts.
        attempt: u32,
        /// When the next attempt starts, in the caller's ms clock.
        next_at_ms: u64,
    },
    /// Loading the persisted history (turn finished, or its live stream expired).
    Rebuilding,
    /// Paused: the browser is offline; nothing is retried until `Online`.
    Offline,
    /// The turn reached `turn.done` (or was rebuilt as terminal). Final.
    Done,
    /// The turn still runs but its live stream is gone (412, FIELD C5b): show a manual refresh,
    /// not a spinner. `Input::Refresh` tries again.
    LiveUnavailable,
    /// Stopped with an error. Retryable errors accept `Input::Refresh`.
    Failed(ConnectionError),
}

/// Why a connection stopped for good (until the app acts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionError {
    /// 401 again after the header provider was asked once (FIELD C14), or the provider failed.
    Auth,
    /// 403: never retried.
    Forbidden,
    /// 404: the session or turn does not exist (or is not visible). Never retried.
    NotFound,
    /// 400: e.g. a bad `Last-Event-ID`. Never retried.
    BadRequest,
    /// Any other status the machine does not retry (409, 413, 422, a create refused with 429…).
    Http(u16),
    /// `max_attempts` consecutive attempts failed.
    TooManyAttempts,
    /// The create POST failed mid-flight and the lookup could not establish whether the turn
    /// exists within `Config::create_lookup_budget_ms`. Check the session before sending again
    /// (PROTOCOL §8.3): `Input::Refresh` and `Input::Online` look it up again.
    CreateOutcomeUnknown,
    /// The create POST failed mid-flight and the lookup showed it created no turn: sending
    /// again is safe.
    TurnNotCreated,
    /// The stream's answer broke the protocol beyond recovery: a 2xx that is not an event stream
    /// (a login page, JSON, a followed redirect) or an unsafe turn id. Never retried: the same
    /// request gets the same answer.
    InvalidResponse,
}

impl ConnectionError {
    /// The stable error `code` of DESIGN.md ("Errors are `ForgestreamError` with a stable code").
    pub fn code(&self) -> &'static str {
        match self {
            ConnectionError::Auth => "auth",
            ConnectionError::Forbidden => "forbidden",
            ConnectionError::NotFound => "not-found",
            ConnectionError::Http(409) => "conflict",
            ConnectionError::BadRequest | ConnectionError::Http(_) => "http",
            ConnectionError::InvalidResponse => "invalid-response",
            ConnectionError::TooManyAttempts
            | ConnectionError::CreateOutcomeUnknown
            | ConnectionError::TurnNotCreated => "network",
        }
    }

    /// Whether trying again later may succeed (the `retryable` flag of `ForgestreamError`).
    /// Only retryable failures accept [`Input::Refresh`](super::Input::Refresh).
    pub fn is_retryable(&self) -> bool {
        match self {
            ConnectionError::Http(status) => *status == 408 || *status == 429 || *status >= 500,
            ConnectionError::TooManyAttempts
            | ConnectionError::CreateOutcomeUnknown
            | ConnectionError::TurnNotCreated => true,
            ConnectionError::Auth
            | ConnectionError::Forbidden
            | ConnectionError::NotFound
            | ConnectionError::BadRequest
            | ConnectionError::InvalidResponse => false,
        }
    }
}

impl fmt::Display for ConnectionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectionError::Auth => {
                f.write_str("authentication failed (401 after refreshing headers)")
            }
            ConnectionError::Forbidden => f.write_str("forbidden (403)"),
            ConnectionError::NotFound => f.write_str("session or turn not found (404)"),
            ConnectionError::BadRequest => f.write_str("bad request (400)"),
            ConnectionError::Http(status) => write!(f, "HTTP status {status}"),
            ConnectionError::TooManyAttempts => f.write_str("too many failed connection attempts"),
            ConnectionError::CreateOutcomeUnknown => {
                f.write_str("the server did not answer, and could not be asked whether it has the turn: it may not have been created (checking again never sends it twice)")
            }
            ConnectionError::TurnNotCreated => {
                f.write_str("the server has no turn for it: none was created (sending it again is safe)")
            }
            ConnectionError::InvalidResponse => {
                f.write_str("the server's answer broke the protocol")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ConnectionError {}
