//! The session engine: one sans-IO state machine per session (DESIGN.md "The session engine").
//!
//! In the style of [`resume`] (quinn-proto): the executor feeds [`Input`]s with the
//! current time (`handle(input, now_ms)`), carries out [`Effect`]s (`poll_effect()`), and feeds
//! [`Input::Timer`] once [`Session::poll_timeout`] has passed. The engine owns the reducer view,
//! the active turn's [`resume::Connection`] and SSE parser, the history loader and every rule
//! around them, so the browser crate only performs requests, timers and storage writes:
//!
//! - **restore**: load the history, then follow the checkpoint's turn; concurrent restores join
//!   the first (one load, one subscribe); a 404 on the session settles `Restored(false)` and
//!   clears the pointer and the checkpoint. A corrupt pointer or id never gets here
//!   ([`checkpoint::parse_pointer`], [`checkpoint::parse_checkpoint`]).
//! - **check before subscribe, rebuild order, 412, effect recovery, backoff**: the
//!   [`resume`] machine's policy; a rebuild reads the turn's state *before* its
//!   events (a turn finishing in between is not settled from an incomplete listing).
//! - **turn discovery**: a create stream names its turn in `turn.created`; a lost create
//!   response is found by listing the newest turn (ours = new, and its `previous_turn_id` is the
//!   turn that was newest before the POST).
//! - **interrupt**: when a new turn's `turn.created` names a previous turn the view still shows
//!   `running`, that turn is read at once (`GET …/turns/{id}`, again after 250 ms steps while
//!   the server still says running): the view shows it `cancelled` / `cancelled-for-next-turn`
//!   within one round trip; its old stream was closed, so its late deltas never arrive (and the
//!   reducer ignores live events of a finished turn).
//! - **respond after restore**: `resume` / `restore` settle only once the followed turn's state
//!   is known (its pending set final); a `send` / `respond` arriving while the turn is still
//!   being checked waits for that instead of failing with `turn-running`.
//! - **checkpoints**: the turn id as soon as it is known (`seq: 0`), then the cursor, monotonic,
//!   coalesced by the connection machine; cleared (`turnId: null`) when the turn settles. Every
//!   storage write is one [`Effect::Storage`] ([`StorageEffect`]), which the executor hands to
//!   [`checkpoint::CheckpointStore::perform`].
//! - **export**: [`Command::ExportEvents`] reads every page of the session timeline with the
//!   engine's own requests, beside whatever else runs (export.rs); `Close` aborts it and
//!   rejects it with `aborted`.
//!
//! - **page lifecycle** (issue 14): [`Input::Lifecycle`] (back from bfcache, resumed after a
//!   freeze) and a wake from sleep, which the engine detects itself — any input arriving
//!   [`WAKE_GAP_MS`] or more past the deadline it last gave the executor — read the followed
//!   turn's state first, then resubscribe after the cursor or rebuild (the connection machine's
//!   [`resume::Input::Lifecycle`] rule). A follower tab's relay is re-followed the same way; a
//!   request the page's suspension left hanging is aborted for it (the idle watchdog catches one
//!   that hangs later).
//!
//! Notifications: one [`Effect::Notify`] when the first change after a drain
//! ([`Session::take_changes`]) arrives; while the changes stay undrained, another only when new
//! changes arrive [`RENOTIFY_MS`] or more after the last one, or when the connection badge's
//! status changed (issue 14, hidden tabs: a consumer that drains only when it renders — and a
//! hidden page does not render — still hears of progress at a bounded rate, and of a turn's
//! end at once, without a timer of its own; timers are throttled in hidden pages). A restored
//! turn's replay below the stored checkpoint notifies nothing (see [`CATCH_UP_MAX_MS`]).
pub mod action;
mod api;
mod changes;

/// How far past the deadline the executor was given ([`Session::poll_timeout`]) an input must
/// arrive for the engine to take it as a wake from sleep, ms: a live stream always has a
/// deadline (its idle watchdog), and browsers fire overdue timers at once on wake, with the
/// wall clock (`Date.now()`, the time base) having jumped by the time asleep. Far above the
/// lateness of throttled timers (hidden pages: 1 s; intensive throttling: once a minute).
pub const WAKE_GAP_MS: u64 = 90_000;

/// The least time between two looks for turns made elsewhere when the page comes back into view
/// ([`Input::Visible`], `sync.rs`), ms: one small listing per return, not one per quick switch
/// between tabs.
pub const SYNC_VISIBLE_MS: u64 = 5_000;

/// How long a running turn a sync found waits before this engine follows it, ms: a turn another
/// tab of this browser just started is announced to this tab and followed through its relay
/// within this time (following it from the listing first raced that tab for the session's
/// stream lock, in an 8-tab e2e check), while a turn from another browser is announced by no one.
pub const SYNC_FOLLOW_MS: u64 = 1_000;

/// Least time between two notifications of one undrained change set (ms), unless the
/// connection status changed in between (see the module docs).
pub const RENOTIFY_MS: u64 = 100;

/// Longest a restored turn's replay may run below the checkpoint's cursor before the view is
/// shown anyway (ms). After a reload the page's memory is gone and the turn is rebuilt by
/// replaying its live buffer from the first event; the page showed the turn up to the stored
/// cursor before the reload, so the engine notifies nothing of the replay short of that cursor
/// — a reply must not flash back to its first words and race forward again. `restore` still
/// settles when the turn's state is known (the stream opened, before any replayed frame: its
/// snapshot shows the history), so what waits on it — a tab's lock, which a follower's relay
/// needs before any frame comes — is not held up. A replay arrives as fast as the network
/// brings the buffer; this bound only matters for one that trickles or stalls (an idle stream
/// is the watchdog's).
pub const CATCH_UP_MAX_MS: u64 = 2_000;

/// How long after the server took a cancel — and after each frame since — a run whose stream
/// (or tab relay) still brings frames waits for the stream's `turn.done` before it reads the
/// turn, ms. Why wait at all: reading at once closed the stream, so the deltas the server had
/// sent before it took the cancel were not shown in the tab that pressed Cancel — but were in
/// the others, which read on (a trial: two tabs kept different stopped text, 2 of 5; a tab still
/// catching up on a long reply kept a fifth of it). Why not forever: a cancel of a crashed
/// owner's turn writes no `turn.done`.
pub const CANCEL_CHECK_WAIT_MS: u64 = 1_000;
pub mod checkpoint;
mod create;
mod effect;
mod encode;
mod error;
mod export;
mod frame_log;
mod held;
mod history;
mod input;
mod kept_frames;
mod options;
mod paging;
mod requests;
mod stream;
mod sync;
pub mod tabs;

pub use crate::resume::Lifecycle;
pub use api::{Api, Flavor};
pub use changes::{
    ConnectionState, CoreChanges, ItemAppend, ItemUpdate, ReportedWarning, TurnCursor, TurnHeader,
};
pub use checkpoint::{Checkpoint, CheckpointIssue, CreatingTurn, Pointer};
pub use create::{create_session_request, created_session_id};
pub use effect::{
    CommandId, Effect, HttpRequest, Method, RequestId, ResponseKind, Settled, StorageEffect,
};
pub use error::{ErrorCode, SessionError};
pub use held::{HeldItems, TurnItems};
pub use input::{retry_after_ms, Command, Input};
pub use options::{
    ClientConfig, ClientOptions, Credentials, ReconnectOptions, StorageKind, DEFAULT_NAMESPACE,
};
pub use tabs::{Role, TabEffect, TabInput};

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::id::Id;
use crate::reduce::{ChangeSet, ReducerConfig, SessionView, TurnStatus};
use crate::resume::{self, Connection, ConnectionStatus, StartMode};
use crate::sse::{ParserConfig, SseParser};
use crate::wire;

/// How subscribes are carried (option `transport`: `"fetch"` | `"eventsource"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// `fetch` + a streaming body (any method, custom headers).
    Fetch,
    /// `EventSource` (GET with cookies; TrueForge flavor only).
    EventSource,
}

/// Everything an engine needs, fixed for its life.
#[derive(Clone, Debug)]
pub struct Config {
    /// Endpoint builder (base URL + flavor).
    pub api: Api,
    /// Subscribe transport.
    pub transport: Transport,
    /// The reconnect policy of every turn's connection.
    pub reconnect: resume::Config,
    /// Per-frame byte cap of the SSE parser.
    pub max_frame_bytes: usize,
    /// Keep a bounded log of received frames for inspectors.
    pub inspect: bool,
    /// The reducer's bounds (events per turn, text per message and per turn).
    pub reducer: ReducerConfig,
    /// The origin of the page the engine runs in (`location.origin`, e.g.
    /// `https://app.example`), when the platform has one. A request to another origin that
    /// fails with no response then says it may be a CORS refusal (the browser reports those
    /// as a bare network error, WHATWG Fetch §4.1 "CORS check"). `None`: no hint.
    pub page_origin: Option<String>,
    /// How many complete turns a history load shows before it gathers pages: until the view
    /// holds this many, each page of the session timeline is applied as it arrives (the newest
    /// screen first); after, pages arriving less than the apply gap apart are gathered
    /// ([`HISTORY_APPLY_MS`]). Default [`HISTORY_SCREEN_TURNS`].
    pub history_screen_turns: usize,
    /// The most timeline events a history load gathers before applying them, gap or not
    /// (decoded events waiting take memory). Default [`HISTORY_APPLY_MAX_EVENTS`].
    pub history_apply_max_events: usize,
    /// Which turns' items every change set carries (option `turnItems`; the `held` module's
    /// docs): the turns read so far (default), or all of them.
    pub turn_items: TurnItems,
}

/// The default [`Config::history_screen_turns`]: a screenful of turns (20, the W2-first-screen
/// figure's).
pub const HISTORY_SCREEN_TURNS: usize = 20;

impl Config {
    /// An engine configuration for `api` with the defaults `ClientOptions::check` gives an app
    /// that sets nothing: the `fetch` transport, the default reconnect policy
    /// ([`resume::Config::default`]), frames up to [`crate::sse::DEFAULT_MAX_FRAME_BYTES`], no
    /// frame log, and the reducer's default bounds ([`ReducerConfig::default`]). Change fields
    /// with struct update syntax.
    pub fn new(api: Api) -> Self {
        Config {
            api,
            transport: Transport::Fetch,
            reconnect: resume::Config::default(),
            max_frame_bytes: crate::sse::DEFAULT_MAX_FRAME_BYTES,
            inspect: false,
            reducer: ReducerConfig::default(),
            page_origin: None,
            history_screen_turns: HISTORY_SCREEN_TURNS,
            history_apply_max_events: HISTORY_APPLY_MAX_EVENTS,
            turn_items: TurnItems::OnRead,
        }
    }
}

/// How many frames the inspector log keeps.
pub const EVENT_LOG_CAPACITY: usize = 2000;
/// Most warnings kept between two drains.
const MAX_WARNINGS: usize = 1000;
/// Pages read at most per listing (a bound against a server that pages forever).
const MAX_TURN_PAGES: u32 = 400;
const MAX_EVENT_PAGES: u32 = 1000;
/// Least time between the first two applies of history pages while a load reads them (ms); it
/// doubles after each apply, up to [`HISTORY_APPLY_MAX_MS`]. Pages are applied at once until
/// the view shows [`Config::history_screen_turns`] complete turns (the newest screen: W2's
/// newest 20 turns span two pages, and in-page the second one waited out the gap while every
/// page behind it arrived, 2.9× the baseline instead of ≥ 5×); later ones gather until the gap
/// passed (or the last page is in). Each apply rebuilds the view's chain order, pending set and
/// usage over every turn: applying each of 1,000 pages cost O(pages × turns) — W2 in-page 5×
/// slower — and a fixed 100 ms gap still ≈ 2× (`scripts/bench` W2); doubling makes it
/// O(turns × log(load time)).
pub const HISTORY_APPLY_MS: u64 = 100;
/// The longest gap between two applies of history pages (ms): a long load still shows its older
/// turns every few seconds.
pub const HISTORY_APPLY_MAX_MS: u64 = 3_200;
/// The waits before a history page that failed (a network error, 408, 425, 429 or a 5xx) is
/// asked for again, ms; after the last the load fails. Why: a restore follows its live turn from
/// the newest page on (`history.rs`), so a failure there no longer shows as a failed restore —
/// one lost older page left the history cut short behind an `idle` badge (a re-check helper: 67
/// of 401 turns, no retry). The first page is asked for again too: failing at once left a session
/// opened during a server restart or a 500 blip on "could not open" until the page was reloaded
/// (a re-check helper, session 24).
pub const HISTORY_RETRY_MS: [u64; 4] = [500, 1_000, 2_000, 4_000];
/// The default [`Config::history_apply_max_events`]: the most timeline events gathered before
/// they are applied, gap or not. Gathered events wait decoded (~850 bytes each natively, more
/// than their JSON), and on a fast network the last
/// 3.2 s gap gathered most of a long history at once: W2's wasm memory high-water mark was the
/// view plus 30–60 MB of waiting events, kept by the allocator after they were applied (issue
/// 16). 10,000 events (a hundred 100-event pages) bounds that at ~9 MB for a few more applies
/// (W2: ~15 instead of ~6; each rebuilds the chain order over every turn).
pub const HISTORY_APPLY_MAX_EVENTS: usize = 10_000;
/// Re-reads of an interrupted turn the server still reports running, 250 ms apart.
const MAX_TURN_CHECKS: u32 = 20;
const TURN_CHECK_STEP_MS: u64 = 250;

/// One received frame as the inspector shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct LoggedFrame {
    /// The turn of the stream.
    pub turn_id: String,
    /// The frame's `id:`.
    pub sequence_number: Option<u64>,
    /// The event's `type` (`"(malformed)"` when unreadable).
    pub event_type: String,
    /// The event's `thread_id`.
    pub thread_id: Option<String>,
    /// The event's `id`.
    pub id: Option<String>,
    /// Size of the frame's `data`, bytes.
    pub bytes: usize,
    /// `now_ms` when it was applied.
    pub at_ms: u64,
}

/// The frames logged after the first `seen` ever logged ([`Session::event_log_since`]).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct EventLogPage {
    /// Every frame ever logged.
    pub total: u64,
    /// The log's bound ([`EVENT_LOG_CAPACITY`]).
    pub capacity: usize,
    /// The newest `min(total - seen, kept)` entries, oldest first.
    pub frames: Vec<LoggedFrame>,
}

/// The connection badge as the UI shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConnectionView<'a> {
    /// The status of the active turn's connection; `None` = idle (no turn followed).
    pub status: Option<&'a ConnectionStatus>,
    /// The turn followed, once known.
    pub turn_id: Option<&'a str>,
    /// How long the followed turn has been silent while it reads `running` (issue 14); `None`
    /// while frames flow.
    pub silence: Option<&'a resume::Silence>,
}

/// What a request of the engine is for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Purpose {
    /// The active run's request (one at a time), `step` says which.
    Run(RunStep),
    /// A page of the history (`Load`).
    History,
    /// `POST /cancel` without an active stream (settles `command`), or the machine's cancel.
    Cancel(Option<CommandId>),
    /// `GET` of a turn the view shows running although a newer turn replaced it.
    CheckTurn { turn_id: String, attempt: u32 },
    /// A page of the session timeline for the `ExportEvents` command `.0`.
    Export(CommandId),
    /// The newest-turn listing of an action that waited for another tab's (`AfterWait`; the
    /// action is kept in `Session::waited_actions` under this request's id).
    ActionCheck,
    /// The newest-turn listing of a sync with turns made elsewhere (`sync.rs`).
    Sync,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunStep {
    Post,
    Subscribe,
    GetTurn,
    Lookup,
    RebuildTurn,
    RebuildEvents,
    Headers,
}

/// Who waits for the active run's turn state to be known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RunWaiter {
    Resume(CommandId),
    Restore,
}

/// One turn's connection and its recovery state.
struct Run {
    conn: Connection,
    /// Boxed and optional so `on_bytes` can lend it out for a read as one pointer (the parser's
    /// callback borrows the whole engine): moving the ~200-byte parser out and back, and making
    /// and dropping a default one in its place, was ≈600 instructions per frame, ≈7% of a
    /// one-frame read (bench_core `FORGESTREAM_BENCH_FRAMES`). `None` only during that read.
    parser: Option<Box<SseParser>>,
    /// Unknown until `turn.created` arrives on a create stream (or the lookup finds it).
    turn_id: Option<String>,
    /// The create request body (create runs only); sent once.
    create_body: Option<String>,
    /// The session's newest turn before our POST (effect recovery compares against it).
    previous_turn_id: Option<String>,
    /// The open request of this run and what it is.
    open: Option<(RequestId, RunStep)>,
    /// The turn state read first by a rebuild (applied after its events).
    rebuild_turn: Option<wire::Turn>,
    /// The tokens followed in the rebuild's `GET …/turns/{tid}/events` listing.
    rebuild_pages: paging::PageGuard,
    /// The badge.
    status: ConnectionStatus,
    /// Settles the `send()` / `respond()` promise once the turn id is known.
    started: Option<CommandId>,
    /// An attach run whose turn state is not known yet.
    checking: bool,
    /// The stored checkpoint's cursor of this turn: a replay from 0 writes nothing below it
    /// (checkpoints are monotonic, also across a reload).
    persisted_floor: u64,
    /// While a restored turn's replay is below `persisted_floor`: the time (ms) past which the
    /// view is shown anyway ([`CATCH_UP_MAX_MS`]). Cleared once the replay reached the floor,
    /// the run left `connecting`/`live`, or the time passed; never set again for this run.
    catch_up_until_ms: Option<u64>,
    /// Who waits for the turn's state (settled by `settle_run_waiters`: once it is known and
    /// the replay caught up).
    waiters: Vec<RunWaiter>,
    /// How long the turn has been silent while it reads running (the machine's last
    /// [`resume::Command::Silence`]).
    silence: Option<resume::Silence>,
    /// A restore onto a turn the history just read shows ended (FIELD C13, a stale live
    /// marker): the machine's turn read and rebuild are answered from that history instead of
    /// three more round trips (the read, then the rebuild's state and events) that would only
    /// repeat it. Cleared once used.
    ended_in_history: bool,
    /// This run's create POST got no definite answer and its lookup once ended
    /// `CreateOutcomeUnknown` (PROTOCOL §8.3): a later lookup (`Refresh`, `Online`) that finds
    /// the turn or shows none settles [`Command::AwaitCreateOutcome`].
    unconfirmed: bool,
    /// [`Command::AwaitCreateOutcome`]s waiting for the next lookup of this run to conclude.
    outcome_waiters: Vec<CommandId>,
    /// The turn this run's turn replaced (its `previous_turn_id`) was looked at: read if the
    /// view still showed it running (`Session::check_replaced`).
    replaced_checked: bool,
    /// A follower reads the turn's live stream itself because no tab could replay the frames
    /// before the relay's (see `tabs`' "Relaying"): `Some(newest relayed sequence number seen
    /// since the gap, 0 before the first)`; back on the relay once its cursor reaches that.
    gap_subscribe: Option<u64>,
    /// The server took a cancel while this run's stream brought frames: the turn is read at
    /// this time (ms; moved on by each frame) unless its `turn.done` came first
    /// ([`CANCEL_CHECK_WAIT_MS`]).
    cancel_check_at_ms: Option<u64>,
}

impl Run {
    /// Whether the run still follows its turn: its connection machine has not finished and it
    /// has not failed (a failed run waits for the app; it streams nothing by itself).
    fn active(&self) -> bool {
        !self.conn.is_finished() && !matches!(self.status, ConnectionStatus::Failed(_))
    }

    /// WHATWG: the stream ended or was replaced: an unterminated frame is discarded.
    fn finish_frame(&mut self) {
        if let Some(parser) = self.parser.as_mut() {
            parser.finish();
        }
    }

    /// The run's create got no answer and a lookup then showed the server has no such turn
    /// (`TurnNotCreated`): nothing was sent, nothing is followed. The run stays only to answer
    /// [`Command::AwaitCreateOutcome`].
    fn not_created(&self) -> bool {
        self.status == ConnectionStatus::Failed(resume::ConnectionError::TurnNotCreated)
    }
}

/// Progress of `restore`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RestoreState {
    Idle,
    Loading {
        checkpoint: Option<Checkpoint>,
        waiters: Vec<CommandId>,
    },
    Resuming {
        waiters: Vec<CommandId>,
    },
    Done(bool),
}

/// The history loader (`Load`): every page of turns, then of the session timeline.
struct History {
    request: RequestId,
    /// `false`: turn pages; `true`: session-event pages.
    events: bool,
    /// The tokens followed in the listing being read (turns, then session events).
    pages: paging::PageGuard,
    /// The timeline events read but not applied yet: the newest page's oldest turn, which the
    /// next page (older events) may continue (see `history.rs`, "progressive").
    held: Vec<wire::SessionEventItem>,
    /// When timeline events were last applied (`now_ms`), if yet, and how many applies so far.
    applied_at: Option<u64>,
    applies: u32,
    /// An apply failed (the per-turn event cap): later pages are read to the end of the listing
    /// but not applied, as one apply of every page would have stopped there.
    apply_failed: bool,
    waiters: Vec<CommandId>,
    /// A restore waits for this load.
    for_restore: bool,
    /// A sync started or joined this load: its end follows the newest turn if it runs
    /// (`sync.rs`).
    for_sync: bool,
    /// The page token of the request in flight (`None`: a listing's first page).
    token: Option<String>,
    /// Turns the timeline showed running and the turns listing, read after it, shows ended:
    /// what they persisted in between is not in the view (`history_done` rebuilds them).
    ended_after_timeline: Vec<String>,
    /// Failed attempts at the page in flight, and when it is asked for again (`now_ms`); a
    /// transient failure is retried ([`HISTORY_RETRY_MS`]).
    failures: u32,
    retry_at_ms: Option<u64>,
}

/// The engine of one session. See the [module docs](self).
pub struct Session {
    id: String,
    config: Config,
    view: SessionView,
    changes: ChangeSet,
    warnings: Vec<(String, String)>,
    effects: VecDeque<Effect>,
    next_request: RequestId,
    now_ms: u64,
    /// Open requests and what they are for.
    requests: Vec<(RequestId, Purpose)>,
    run: Option<Run>,
    history: Option<History>,
    restore: RestoreState,
    /// `send` / `respond` waiting for the run's turn check.
    deferred: Vec<(CommandId, Command)>,
    /// Exports in flight: the command and its paging state (its open request is the one
    /// [`Purpose::Export`] of that command).
    exports: Vec<(CommandId, export::ExportEvents)>,
    /// Actions that waited for another tab's action, by the request listing the newest turn for
    /// them ([`Command::AfterWait`], `action.rs`).
    waited_actions: Vec<(RequestId, CommandId, Command)>,
    /// Re-reads of replaced turns: (due ms, turn id, attempt).
    checks_due: Vec<(u64, String, u32)>,
    /// When the page's last return to view looked for turns made elsewhere (ms).
    visible_synced_ms: Option<u64>,
    /// A running turn a sync found, followed at this time (ms) unless something follows it by
    /// then (`sync.rs`, [`SYNC_FOLLOW_MS`]).
    sync_follow: Option<(u64, String)>,
    /// The last request's own error (kept as the cause of a failure).
    cause: Option<SessionError>,
    /// The error the active run failed with.
    last_error: Option<SessionError>,
    online: bool,
    /// A history load completed: the view lists the session's turns.
    loaded: bool,
    closed: bool,
    dirty: bool,
    /// Changes came while a restored turn's replay was below its checkpoint
    /// ([`CATCH_UP_MAX_MS`]): notified once it is not.
    notify_held: bool,
    notified: bool,
    /// When the last [`Effect::Notify`] went out (ms) and the badge status it showed.
    notified_at_ms: u64,
    notified_status: Option<core::mem::Discriminant<ConnectionStatus>>,
    /// The last notification's status differed from the one before it.
    status_notified: bool,
    drains: u64,
    /// The connection badge (as JSON) when the last drain was taken, and whether it differed
    /// from the drain before ([`Session::changes_of`] carries it only then).
    drained_badge: String,
    badge_changed: bool,
    event_log: frame_log::FrameLog,
    /// Sharing one live connection among tabs ([`tabs`]).
    tabs: tabs::Tabs,
    /// [`Session::poll_timeout`] as of the end of the last `handle`: the deadline the executor
    /// was given. An input this far past it is a wake from sleep ([`WAKE_GAP_MS`]).
    armed_ms: Option<u64>,
    /// The turns whose items the consumer holds ([`Session::turn_items`]).
    held: held::HeldTurns,
}

impl Session {
    /// The engine of session `id` (no request until a command asks for one).
    pub fn new(id: &str, config: Config) -> Self {
        let config_turn_items = config.turn_items;
        Session {
            id: String::from(id),
            view: SessionView::new(id, config.reducer.clone()),
            config,
            changes: ChangeSet::default(),
            warnings: Vec::new(),
            effects: VecDeque::new(),
            next_request: 1,
            now_ms: 0,
            requests: Vec::new(),
            run: None,
            history: None,
            restore: RestoreState::Idle,
            deferred: Vec::new(),
            exports: Vec::new(),
            waited_actions: Vec::new(),
            checks_due: Vec::new(),
            visible_synced_ms: None,
            sync_follow: None,
            cause: None,
            last_error: None,
            online: true,
            loaded: false,
            closed: false,
            dirty: false,
            notify_held: false,
            notified: false,
            notified_at_ms: 0,
            notified_status: None,
            status_notified: false,
            drains: 0,
            drained_badge: String::new(),
            badge_changed: true,
            event_log: frame_log::FrameLog::default(),
            tabs: tabs::Tabs::default(),
            armed_ms: None,
            held: held::HeldTurns::new(config_turn_items),
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The engine's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The reducer's view.
    pub fn view(&self) -> &SessionView {
        &self.view
    }

    /// The next effect to carry out, in order.
    pub fn poll_effect(&mut self) -> Option<Effect> {
        self.effects.pop_front()
    }

    /// The earliest time (ms, caller's clock) at which [`Input::Timer`] has work.
    pub fn poll_timeout(&self) -> Option<u64> {
        if self.closed {
            return None;
        }
        let run = self.run.as_ref().and_then(|r| r.conn.poll_timeout());
        let checks = self.checks_due.iter().map(|(at, _, _)| *at).min();
        // Set only while catching up (`end_catch_up` clears it at the end of every input), and
        // for a second after a cancel.
        let catch_up = self
            .run
            .as_ref()
            .and_then(|r| resume::earliest(r.catch_up_until_ms, r.cancel_check_at_ms));
        let history_retry = self.history.as_ref().and_then(|h| h.retry_at_ms);
        let sync_follow = self.sync_follow.as_ref().map(|(at, _)| *at);
        // Folded pairwise (`resume::earliest` says why; `FORGESTREAM_BENCH_FRAMES=1` under
        // callgrind measures it).
        use resume::earliest;
        let timers = earliest(earliest(run, checks), self.tabs.poll_timeout());
        let timers = earliest(earliest(timers, catch_up), history_retry);
        earliest(timers, sync_follow)
    }

    /// Whether the history is being read (a `Load`, or a `Restore` before it follows a turn).
    pub fn is_loading(&self) -> bool {
        self.history.is_some()
    }

    /// The connection badge.
    pub fn connection(&self) -> ConnectionView<'_> {
        ConnectionView {
            // A run the app disconnected follows nothing any more: its connection machine is
            // finished without `Done` (it emits no status of its own for that), so the badge
            // is idle at once, not the `live` it had before the socket closed.
            //
            // A send whose lookup showed the server never created its turn follows nothing
            // either: the badge is idle, not `failed`, once the server answered (a trial: "failed
            // · network" stayed with the server back; the message itself reads "Not sent").
            status: self
                .run
                .as_ref()
                .filter(|r| !(r.conn.is_finished() && r.status != ConnectionStatus::Done))
                .filter(|r| !r.not_created())
                .map(|r| &r.status),
            turn_id: self.run.as_ref().and_then(|r| r.turn_id.as_deref()),
            silence: self.run.as_ref().and_then(|r| r.silence.as_ref()),
        }
    }

    /// The error the active turn's connection failed with (only while it shows `failed`).
    pub fn error(&self) -> Option<&SessionError> {
        let failed = self
            .run
            .as_ref()
            .is_some_and(|r| matches!(r.status, ConnectionStatus::Failed(_)) && !r.not_created());
        self.last_error.as_ref().filter(|_| failed)
    }

    /// Whether a turn is running as far as this engine follows it (not done, not failed).
    pub fn turn_running(&self) -> bool {
        self.run.as_ref().is_some_and(|r| {
            !matches!(
                r.status,
                ConnectionStatus::Done | ConnectionStatus::Failed(_)
            )
        })
    }

    /// Whether the run's live stream (or its tab relay) is open and brought frames (`live`,
    /// frames flowing: no silent cycle).
    fn streams_frames(&self) -> bool {
        self.run.as_ref().is_some_and(|r| {
            r.status == ConnectionStatus::Live
                && r.conn.is_stream_open()
                && r.conn.silence().is_none()
        })
    }

    /// Whether the active run's turn still runs on the server but has no live stream to follow
    /// (412 on subscribe: expired, or its replica crashed — PROTOCOL.md §9). Such a turn may never
    /// end: a new turn is the protocol's way on (the server cancels the stuck one as
    /// `cancelled-for-next-turn`), so `send` does not refuse it as `turn-running`.
    fn live_unavailable(&self) -> bool {
        self.run
            .as_ref()
            .is_some_and(|r| r.status == ConnectionStatus::LiveUnavailable)
    }

    /// Whether the active run's turn already reads ended (its state was read: a cancel's check, a
    /// watchdog probe) and only its rebuild from the listings is left. The view shows it ended,
    /// so an app lets the user go on: a `send` / `respond` then waits for the rebuild instead of
    /// failing with `turn-running` (issue 14).
    fn settling(&self) -> bool {
        self.run.as_ref().is_some_and(|r| {
            // An ended turn's final read says no `Rebuilding` (`resume`, `TurnFetched`).
            (r.status == ConnectionStatus::Rebuilding || r.conn.is_rebuilding())
                && r.turn_id
                    .as_deref()
                    .and_then(|t| self.view.turn(t))
                    .is_some_and(|t| t.status != TurnStatus::Running)
        })
    }

    /// Whether a restored turn's replay is still below the checkpoint's cursor (see
    /// [`CATCH_UP_MAX_MS`]): the engine does not notify meanwhile, and a consumer should not
    /// publish what [`Self::take_changes`] would give — the replay short of what the page showed
    /// before the reload (the reply empty or shorter). The engine notifies once it is over.
    pub fn catching_up(&self) -> bool {
        self.run.as_ref().is_some_and(|r| {
            r.catch_up_until_ms.is_some_and(|until| self.now_ms < until)
                && r.conn.cursor().is_none_or(|c| c < r.persisted_floor)
                && matches!(
                    r.status,
                    ConnectionStatus::Connecting | ConnectionStatus::Live
                )
        })
    }

    /// Ends a restored run's catch-up once it is over (the replay reached the checkpoint's
    /// cursor, the run left `connecting`/`live`, or [`CATCH_UP_MAX_MS`] passed), for good.
    /// Returns whether it still goes on.
    fn end_catch_up(&mut self) -> bool {
        let going_on = self.catching_up();
        if !going_on {
            if let Some(run) = self.run.as_mut() {
                run.catch_up_until_ms = None;
            }
            self.settle_run_waiters();
        }
        going_on
    }

    /// Re-runs the commands that waited for a settling run (see [`Self::settling`]) once it
    /// settled.
    fn replay_settled(&mut self) {
        let settled = self.run.as_ref().is_some_and(|r| {
            !r.checking
                && matches!(
                    r.status,
                    ConnectionStatus::Done
                        | ConnectionStatus::LiveUnavailable
                        | ConnectionStatus::Failed(_)
                )
        });
        if settled {
            for (c, command) in core::mem::take(&mut self.deferred) {
                self.command(c, command);
            }
        }
    }

    /// Whether the active run follows `turn_id` and still will (not done, failed or
    /// disconnected: those are followed again by a new run).
    fn follows(&self, turn_id: &str) -> bool {
        self.run
            .as_ref()
            .is_some_and(|r| r.turn_id.as_deref() == Some(turn_id) && r.active())
    }

    /// Whether the engine was closed.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// Whether the last [`Effect::Notify`] came with a change of the connection status (the turn
    /// ended, the stream dropped, …) since the notification before it: a consumer that paces
    /// its updates (a hidden page) publishes such a change at once.
    pub fn status_notified(&self) -> bool {
        self.status_notified
    }

    /// How many times the changes were drained.
    pub fn drains(&self) -> u64 {
        self.drains
    }

    /// Whether the connection badge changed between the last two drains.
    pub fn badge_changed(&self) -> bool {
        self.badge_changed
    }

    /// Takes the changes and warnings since the last drain (normalized) and re-arms
    /// [`Effect::Notify`].
    pub fn take_changes(&mut self) -> (ChangeSet, Vec<(String, String)>) {
        self.drains += 1;
        // The badge as JSON, compared with the one the last drain saw: `changes_of` carries it
        // only when it changed (a streaming turn's 60 drains a second repeated it unchanged).
        let badge = wire::write::to_string(&self.connection_state());
        self.badge_changed = badge != self.drained_badge;
        self.drained_badge = badge;
        self.notified = false;
        let mut changes = core::mem::take(&mut self.changes);
        changes.normalize();
        (changes, core::mem::take(&mut self.warnings))
    }

    /// A new listener was set: it has not been told anything yet.
    pub fn listener_changed(&mut self) {
        self.notified = false;
    }

    /// The inspector's frame log, oldest first, and how many frames were ever logged.
    pub fn event_log(&self) -> (Vec<LoggedFrame>, u64) {
        (self.event_log.frames(), self.event_log.total())
    }

    /// The frames logged after the first `seen` ever logged (an inspector polling the log
    /// passes the `total` it saw last; frames that fell out of the bounded log are skipped).
    pub fn event_log_since(&self, seen: u64) -> EventLogPage {
        self.event_log.since(seen, usize::MAX)
    }

    /// [`Session::event_log_since`], keeping at most the newest `limit` of those frames (an
    /// inspector showing its last rows passes how many it shows; the older frames are not
    /// converted). `total` still counts every frame ever logged.
    pub fn event_log_since_limited(&self, seen: u64, limit: usize) -> EventLogPage {
        self.event_log.since(seen, limit)
    }

    /// [`Session::event_log_since_limited`] packed as JSON text for a JS inspector (the
    /// web crate's `eventLogSince`; issue 19: as objects the frames cost a tenth of the SDK's
    /// main-thread time while a fast stream was inspected):
    /// `{"total":u64,"capacity":usize,"strings":[string…],"frames":[n…]}`, where `frames` holds
    /// seven numbers per frame, oldest first — `turn, sequenceNumber, eventType, threadId, id,
    /// bytes, atMs` — the four string fields as indexes into `strings` (each distinct string
    /// once) and `-1` for an absent `sequenceNumber`, `threadId` or `id`. The frames are the
    /// ones [`Session::event_log_since_limited`] returns, with the same values.
    pub fn event_log_packed(&self, seen: u64, limit: usize) -> String {
        self.event_log.since_packed(seen, limit)
    }

    /// Feeds one input at `now_ms` (ms; a clock going backwards is treated as standing still).
    pub fn handle(&mut self, input: Input<'_>, now_ms: u64) {
        self.now_ms = self.now_ms.max(now_ms);
        if !self.closed
            && matches!(self.armed_ms, Some(at) if self.now_ms >= at.saturating_add(WAKE_GAP_MS))
        {
            // A wake from sleep: probe before this input is handled (a read of the old stream
            // arriving now is then one of an aborted request, ignored).
            self.feed_conn(resume::Input::Lifecycle(resume::Lifecycle::Woke));
            self.drain_run();
        }
        match input {
            Input::Command { id, command } => self.command(id, command),
            Input::StreamOpened {
                request,
                status,
                content_type,
                redirected,
            } => self.on_stream_head(request, status, content_type, redirected),
            Input::Bytes { request, bytes } => self.on_bytes(request, bytes),
            Input::Frame {
                request,
                data,
                last_event_id,
            } => self.on_frame(request, data, last_event_id),
            Input::End { request } => self.on_end(request),
            Input::NetworkError { request } => self.on_network_error(request),
            Input::Response {
                request,
                status,
                retry_after,
                body,
            } => self.on_response(request, status, retry_after.and_then(retry_after_ms), body),
            Input::HeadersUnavailable { request } => {
                let error = SessionError::new(ErrorCode::Auth, "the headers provider failed");
                if let Some(Purpose::Export(command)) = self.purpose(request).cloned() {
                    // The provider's own error, not the run's cause.
                    self.take_request(request);
                    self.export_failed(command, error);
                } else {
                    self.cause = Some(error);
                    self.on_response(request, 401, None, b"");
                }
            }
            Input::HeadersRefreshed { request, ok } => self.on_headers_refreshed(request, ok),
            Input::StorageWarning { message } => self.warn("storage", message),
            Input::Timer => self.on_timer(),
            Input::Online => {
                self.online = true;
                self.feed_conn(resume::Input::Online);
            }
            Input::Offline => {
                self.online = false;
                self.feed_conn(resume::Input::Offline);
            }
            Input::Lifecycle(event) => {
                if !self.closed {
                    self.feed_conn(resume::Input::Lifecycle(event));
                }
            }
            Input::Tab(input) => {
                if !self.closed {
                    self.on_tab(input);
                }
            }
            Input::Visible => self.on_visible(),
            Input::PageHide => {
                if !self.closed {
                    self.feed_conn(resume::Input::PageHide);
                }
            }
        }
        self.drain_run();
        if self.end_catch_up() {
            // Held, not dropped: the notification goes out when the replay reached the floor.
            self.notify_held |= self.dirty;
        } else if (self.dirty || core::mem::take(&mut self.notify_held)) && !self.closed {
            let status = self.connection().status.map(core::mem::discriminant);
            let again = self.notified
                && (self.now_ms >= self.notified_at_ms.saturating_add(RENOTIFY_MS)
                    || status != self.notified_status);
            if !self.notified || again {
                self.notified = true;
                self.notified_at_ms = self.now_ms;
                self.status_notified = status != self.notified_status;
                self.notified_status = status;
                self.effects.push_back(Effect::Notify);
            }
        }
        self.dirty = false;
        self.armed_ms = self.poll_timeout();
    }

    fn command(&mut self, id: CommandId, command: Command) {
        if self.closed {
            self.settle(
                id,
                Err(SessionError::new(
                    ErrorCode::Aborted,
                    "the session is closed",
                )),
            );
            return;
        }
        if !checkpoint::is_valid_id(&self.id) && !matches!(command, Command::Close) {
            // `..` as a session id would turn every URL of the session into another path.
            self.settle(
                id,
                Err(SessionError::new(
                    ErrorCode::InvalidInput,
                    "the session id is not a safe id (1–256 bytes of A–Z a–z 0–9 . _ - ~ :, not . or ..); nothing was requested",
                )),
            );
            return;
        }
        match command {
            Command::Load => self.load(Some(id), false),
            Command::Restore { checkpoint } => self.restore(id, checkpoint),
            Command::Resume { checkpoint } => {
                self.resume(Some(id), checkpoint);
            }
            Command::Send { input, interrupt } => self.send(id, input, interrupt),
            Command::Respond { decisions } => self.respond(id, decisions),
            Command::Cancel => self.cancel(id),
            Command::Disconnect => {
                self.feed_conn(resume::Input::Disconnect);
                self.drain_run();
                self.abort_run_request();
                // The badge changed (to idle): tell the listener.
                self.dirty = true;
                self.settle(id, Ok(Settled::Done));
            }
            Command::DropConnection => {
                let open = self
                    .run
                    .as_ref()
                    .filter(|r| r.conn.is_request_open())
                    .and_then(|r| r.open);
                if open.is_some() {
                    self.abort_run_request();
                    self.feed_conn(resume::Input::NetworkError);
                }
                self.settle(id, Ok(Settled::Done));
            }
            Command::Refresh => {
                // A connection to try again is tried again; otherwise look for turns made
                // elsewhere (another browser or device: `sync.rs`).
                let retry = self.run.as_ref().is_some_and(|r| r.conn.restartable());
                self.feed_conn(resume::Input::Refresh);
                if !retry {
                    self.sync();
                }
                self.settle(id, Ok(Settled::Done));
            }
            Command::AwaitCreateOutcome => self.await_create_outcome(id),
            Command::Attach { turn_id } => {
                let followed = self.follows(&turn_id);
                if !followed && checkpoint::is_valid_id(&turn_id) {
                    self.start_run(StartMode::Attach { after: Some(0) }, Some(turn_id), None);
                }
                self.settle(id, Ok(Settled::Done));
            }
            Command::ExportEvents => self.export_events(id),
            Command::AfterWait { command } => self.after_wait(id, *command),
            Command::Close => self.close(id),
        }
    }

    /// [`Command::AwaitCreateOutcome`]: settle now what is known of the active run's unconfirmed
    /// create, else wait for its next lookup to conclude (`outcome_waiters`).
    fn await_create_outcome(&mut self, id: CommandId) {
        let known = match self.run.as_ref().filter(|r| r.unconfirmed) {
            None => Some(Err(SessionError::new(
                ErrorCode::Aborted,
                "no unconfirmed message to check here (a newer turn replaced it, or the page was reloaded): the session's history shows whether it was sent",
            ))),
            Some(run) => match (&run.turn_id, &run.status) {
                (Some(turn), _) => Some(Ok(Settled::Created(Some(turn.clone())))),
                (None, ConnectionStatus::Failed(resume::ConnectionError::TurnNotCreated)) => {
                    Some(Ok(Settled::Created(None)))
                }
                (None, ConnectionStatus::Failed(resume::ConnectionError::CreateOutcomeUnknown)) => {
                    None
                }
                (None, ConnectionStatus::Failed(_)) => Some(Err(self
                    .last_error
                    .clone()
                    .unwrap_or_else(|| SessionError::new(ErrorCode::Internal, "failed")))),
                // A lookup runs (a refresh, the `online` event): its answer settles it.
                (None, _) => None,
            },
        };
        match known {
            Some(outcome) => self.settle(id, outcome),
            None => {
                if let Some(run) = self.run.as_mut() {
                    run.outcome_waiters.push(id);
                }
            }
        }
    }

    /// An action that waited for another tab's: list the newest turn first (`action.rs`).
    fn after_wait(&mut self, id: CommandId, command: Command) {
        let no_listing = match &command {
            Command::Respond { decisions } => matches!(
                crate::respond::continuation(&self.view, decisions),
                Err(crate::respond::RespondError::Stale { .. })
            ),
            Command::Send { .. } | Command::Cancel => false,
            _ => true,
        };
        if no_listing {
            // The view shows it already (the other tab's turn was relayed while this one
            // waited), or it is no action: no listing needed.
            self.command(id, command);
            return;
        }
        let url = self.config.api.turns(&self.id, "?limit=1&order=desc");
        let request = self.request(
            Purpose::ActionCheck,
            Method::Get,
            url,
            None,
            None,
            ResponseKind::Whole,
        );
        self.waited_actions.push((request, id, command));
    }

    /// The newest-turn listing of a waited action answered (`listed`: the page's turns; `None`
    /// when it failed or could not be read, which lets the action run).
    fn action_checked(&mut self, request: RequestId, listed: Option<Vec<wire::Turn>>) {
        let Some(at) = self.waited_actions.iter().position(|w| w.0 == request) else {
            return;
        };
        let (_, id, command) = self.waited_actions.remove(at);
        let kind = match &command {
            Command::Send { interrupt, .. } => action::ActionKind::Send {
                interrupt: *interrupt,
            },
            Command::Respond { .. } => action::ActionKind::Respond,
            _ => action::ActionKind::Cancel,
        };
        let view_newest = self.view.turn_ids().last().map(Id::as_str);
        let stale = listed
            .as_ref()
            .and_then(|turns| action::stale_after_wait(kind, view_newest, turns.first()));
        match stale {
            Some(reason) => self.settle(id, Err(SessionError::new(ErrorCode::Conflict, reason))),
            None => self.command(id, command),
        }
    }

    fn close(&mut self, id: CommandId) {
        // The connection flushes its last checkpoint: a reload resumes where this page stopped.
        self.feed_conn(resume::Input::Disconnect);
        self.drain_run();
        for (request, _) in core::mem::take(&mut self.requests) {
            self.effects.push_back(Effect::Abort { id: request });
        }
        let aborted = || SessionError::new(ErrorCode::Aborted, "the session was closed");
        let mut pending: Vec<CommandId> = Vec::new();
        if let Some(run) = self.run.as_mut() {
            run.open = None;
            pending.extend(run.started.take());
            pending.append(&mut run.outcome_waiters);
            for w in run.waiters.drain(..) {
                if let RunWaiter::Resume(c) = w {
                    pending.push(c);
                }
            }
        }
        if let Some(h) = self.history.take() {
            pending.extend(h.waiters);
        }
        if let RestoreState::Loading { waiters, .. } | RestoreState::Resuming { waiters } =
            core::mem::replace(&mut self.restore, RestoreState::Idle)
        {
            pending.extend(waiters);
        }
        pending.extend(self.deferred.drain(..).map(|(c, _)| c));
        pending.extend(self.exports.drain(..).map(|(c, _)| c));
        pending.extend(self.waited_actions.drain(..).map(|(_, c, _)| c));
        for c in pending {
            self.settle(c, Err(aborted()));
        }
        self.checks_due.clear();
        self.closed = true;
        self.settle(id, Ok(Settled::Done));
    }

    fn restore(&mut self, id: CommandId, checkpoint: Option<Checkpoint>) {
        match &mut self.restore {
            RestoreState::Done(found) => {
                let found = *found;
                self.settle(id, Ok(Settled::Restored(found)));
            }
            RestoreState::Loading { waiters, .. } | RestoreState::Resuming { waiters } => {
                waiters.push(id);
            }
            RestoreState::Idle => {
                self.restore = RestoreState::Loading {
                    checkpoint,
                    waiters: alloc::vec![id],
                };
                self.load(None, true);
            }
        }
    }

    /// Follows the checkpoint's turn. `id` settles `Resumed` once the turn's state is known.
    fn resume(&mut self, id: Option<CommandId>, checkpoint: Option<Checkpoint>) -> bool {
        let waiter = match id {
            Some(c) => RunWaiter::Resume(c),
            None => RunWaiter::Restore,
        };
        let listed = id.is_none() || self.loaded;
        let Some((turn_id, floor)) = self.turn_to_follow(checkpoint, listed) else {
            if let Some(c) = id {
                self.settle(c, Ok(Settled::Resumed(None)));
            }
            return false;
        };
        if !self.follows(&turn_id) {
            let ended = listed
                && self
                    .view
                    .turn(&turn_id)
                    .is_some_and(|t| t.status != TurnStatus::Running);
            // The page's memory is gone, so the view is rebuilt by replaying the live buffer
            // from the first event (after = 0); the checkpoint says *which* turn is live, and
            // how far the page had shown it (nothing short of that is shown again).
            self.start_run(StartMode::Attach { after: Some(0) }, Some(turn_id), None);
            let until = self.now_ms.saturating_add(CATCH_UP_MAX_MS);
            if let Some(run) = self.run.as_mut() {
                run.ended_in_history = ended;
                run.catch_up_until_ms = (floor > 0).then_some(until);
            }
        }
        let Some(run) = self.run.as_mut() else {
            return false;
        };
        run.persisted_floor = run.persisted_floor.max(floor);
        run.waiters.push(waiter);
        self.settle_run_waiters();
        true
    }

    /// Which turn a restore or a resume follows (`listed`: the view holds the history), and the
    /// stored cursor of it (issue 14): the newest turn of the view when it still runs, whatever
    /// the checkpoint names (another tab answered an approval, so a newer turn continues the
    /// stored one); else the checkpoint's turn. A checkpoint that says a turn was being created
    /// ([`Checkpoint::creating`]) and a listing with nothing newer running: the turn finished
    /// already (nothing to follow), or it was never created — said in a `recovery` warning,
    /// since the message is not stored and cannot be sent again. Either way the marker is
    /// cleared. Never a POST.
    fn turn_to_follow(
        &mut self,
        checkpoint: Option<Checkpoint>,
        listed: bool,
    ) -> Option<(String, u64)> {
        let floor = |turn: &str| {
            checkpoint
                .as_ref()
                .filter(|c| c.turn_id.as_deref() == Some(turn))
                .map_or(0, |c| c.seq)
        };
        if let Some(turn) = self.newest_running_turn().map(String::from) {
            let seq = floor(&turn);
            return Some((turn, seq));
        }
        let creating = checkpoint.as_ref().and_then(|c| c.creating.as_ref());
        if let (true, Some(creating)) = (listed, creating) {
            let after = creating.after.as_deref();
            let created = self.view.turn_ids().iter().any(|t| {
                Some(t.as_str()) != after
                    && self
                        .view
                        .turn(t)
                        .is_some_and(|v| v.previous_turn_id.as_deref() == after)
            });
            if !created {
                self.warn(
                    "recovery",
                    String::from(
                        "a turn was being created when the page unloaded, and the session does not list it: it was not created (send the message again)",
                    ),
                );
            }
            self.write_checkpoint(None, 0);
            return None;
        }
        let turn = checkpoint.as_ref().and_then(|c| c.turn_id.clone())?;
        let seq = floor(&turn);
        Some((turn, seq))
    }

    /// The view's newest turn, if it runs.
    fn newest_running_turn(&self) -> Option<&str> {
        self.view
            .turn_ids()
            .last()
            .filter(|t| {
                self.view
                    .turn(t)
                    .is_some_and(|v| v.status == TurnStatus::Running)
            })
            .map(|t| t.as_str())
    }

    /// `send` with input items.
    fn send(&mut self, id: CommandId, input: Vec<wire::InputItem>, interrupt: bool) {
        if !interrupt && (self.run.as_ref().is_some_and(|r| r.checking) || self.settling()) {
            self.deferred.push((id, Command::Send { input, interrupt }));
            return;
        }
        if self.turn_running() && !interrupt && !self.live_unavailable() {
            self.settle(
                id,
                Err(SessionError::new(
                    ErrorCode::TurnRunning,
                    "a turn is running: wait for it, cancel it, or send with { interrupt: true }",
                )),
            );
            return;
        }
        if let Err(e) = crate::respond::validate_input(&self.view, &input) {
            self.settle(
                id,
                Err(SessionError::new(ErrorCode::InvalidInput, format!("{e}"))),
            );
            return;
        }
        self.create_turn(id, &input);
    }

    fn respond(&mut self, id: CommandId, decisions: Vec<crate::respond::Decision>) {
        if self.run.as_ref().is_some_and(|r| r.checking) || self.settling() {
            self.deferred.push((id, Command::Respond { decisions }));
            return;
        }
        let built = crate::respond::continuation(&self.view, &decisions);
        if let Err(e @ crate::respond::RespondError::Stale { .. }) = &built {
            // Answered already (another tab, or this one a moment ago): a newer turn continued
            // the turn where the call was pending (issue 14, `action.rs`). Before `turn-running`,
            // since that newer turn usually still runs.
            self.settle(
                id,
                Err(SessionError::new(
                    ErrorCode::Conflict,
                    format!("{e}: it was answered already, nothing was sent"),
                )),
            );
            return;
        }
        if self.turn_running() {
            self.settle(
                id,
                Err(SessionError::new(
                    ErrorCode::TurnRunning,
                    "a turn is still running",
                )),
            );
            return;
        }
        match built {
            Ok(input) => self.create_turn(id, &input),
            Err(e) => self.settle(
                id,
                Err(SessionError::new(ErrorCode::InvalidInput, format!("{e}"))),
            ),
        }
    }

    fn create_turn(&mut self, id: CommandId, input: &[wire::InputItem]) {
        let mut body = String::from("{\"input\":");
        wire::write::Encode::encode(input, &mut body);
        body.push_str(",\"stream\":true}");
        self.start_run(StartMode::CreateTurn, None, Some(body));
        if let Some(run) = self.run.as_mut() {
            run.started = Some(id);
        }
    }

    fn cancel(&mut self, id: CommandId) {
        if self.turn_running() {
            self.feed_conn(resume::Input::Cancel);
            self.settle(id, Ok(Settled::Done));
            return;
        }
        let url = self.config.api.cancel(&self.id);
        self.request(
            Purpose::Cancel(Some(id)),
            Method::Post,
            url,
            None,
            Some(String::from("{}")),
            ResponseKind::Whole,
        );
    }

    /// Replaces the active run (closing the old one's request) and starts the new one.
    fn start_run(&mut self, mode: StartMode, turn_id: Option<String>, create_body: Option<String>) {
        self.end_run(SessionError::new(
            ErrorCode::Aborted,
            "another turn replaced this one",
        ));
        let previous_turn_id = self.view.turn_ids().last().map(String::from);
        let checking = matches!(mode, StartMode::Attach { .. });
        let mut conn = Connection::new(self.config.reconnect);
        if !self.online {
            conn.handle(resume::Input::Offline, self.now_ms);
        }
        conn.handle(resume::Input::Start { mode }, self.now_ms);
        self.run = Some(Run {
            conn,
            parser: Some(Box::new(SseParser::new(ParserConfig {
                max_frame_bytes: self.config.max_frame_bytes,
            }))),
            turn_id,
            create_body,
            previous_turn_id,
            open: None,
            rebuild_turn: None,
            rebuild_pages: paging::PageGuard::default(),
            status: ConnectionStatus::Connecting,
            started: None,
            checking,
            persisted_floor: 0,
            catch_up_until_ms: None,
            waiters: Vec::new(),
            silence: None,
            ended_in_history: false,
            unconfirmed: false,
            outcome_waiters: Vec::new(),
            replaced_checked: false,
            gap_subscribe: None,
            cancel_check_at_ms: None,
        });
        self.last_error = None;
        self.cause = None;
        self.dirty = true;
    }

    /// Ends the active run: aborts its request, settles what waited on it.
    fn end_run(&mut self, why: SessionError) {
        self.abort_run_request();
        let Some(mut run) = self.run.take() else {
            return;
        };
        for c in run.outcome_waiters.drain(..) {
            self.settle(c, Err(why.clone()));
        }
        if let Some(c) = run.started.take() {
            self.settle(c, Err(why));
        }
        let turn = run.turn_id.clone();
        for w in run.waiters.drain(..) {
            match w {
                RunWaiter::Resume(c) => self.settle(c, Ok(Settled::Resumed(turn.clone()))),
                RunWaiter::Restore => self.restored(true),
            }
        }
    }

    /// The run's turn state is known (or it stopped trying): settle who waited, then re-run the
    /// commands that waited for it.
    fn check_finished(&mut self) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        if !run.checking {
            return;
        }
        run.checking = false;
        self.settle_run_waiters();
        for (c, command) in core::mem::take(&mut self.deferred) {
            self.command(c, command);
        }
    }

    /// Settles who waited for the run (a `restore`, a `resume`) once its turn state is known
    /// and the view shows it: not while a restored turn's replay catches up
    /// ([`Self::catching_up`], at most [`CATCH_UP_MAX_MS`]), when nothing of the run is
    /// published yet. A reload mid-reply resolved `restore()` there, and the app read the
    /// snapshot from before the open — `loading` with no turn, or the turn with no reply — and a
    /// `send` at once was refused with `turn-running`; [`Self::end_catch_up`] settles them.
    fn settle_run_waiters(&mut self) {
        if self.catching_up() {
            return;
        }
        let Some(run) = self.run.as_mut().filter(|r| !r.checking) else {
            return;
        };
        let turn = run.turn_id.clone();
        for w in core::mem::take(&mut run.waiters) {
            match w {
                RunWaiter::Resume(c) => self.settle(c, Ok(Settled::Resumed(turn.clone()))),
                RunWaiter::Restore => self.restored(true),
            }
        }
    }

    fn restored(&mut self, found: bool) {
        if let RestoreState::Loading { waiters, .. } | RestoreState::Resuming { waiters } =
            core::mem::replace(&mut self.restore, RestoreState::Done(found))
        {
            for c in waiters {
                self.settle(c, Ok(Settled::Restored(found)));
            }
        }
    }

    fn settle(&mut self, command: CommandId, outcome: Result<Settled, SessionError>) {
        self.effects.push_back(Effect::Settle { command, outcome });
    }

    /// Queues one storage write.
    fn store(&mut self, effect: StorageEffect) {
        self.effects.push_back(Effect::Storage(effect));
    }

    /// Queues this session's checkpoint `{turn_id, seq}`, stamped now.
    fn write_checkpoint(&mut self, turn_id: Option<String>, seq: u64) {
        self.write_record(turn_id, seq, None);
    }

    /// Queues the marker of a turn POST about to be sent: `{turnId: null, creating: {after}}`,
    /// `after` the session's newest turn before it ([`Checkpoint::creating`]).
    fn write_creating(&mut self, after: Option<String>) {
        self.write_record(None, 0, Some(checkpoint::CreatingTurn { after }));
    }

    fn write_record(
        &mut self,
        turn_id: Option<String>,
        seq: u64,
        creating: Option<checkpoint::CreatingTurn>,
    ) {
        self.store(StorageEffect::WriteCheckpoint(Checkpoint {
            v: checkpoint::SCHEMA_VERSION,
            session_id: self.id.clone(),
            turn_id,
            seq,
            saved_at: self.now_ms,
            creating,
        }));
    }

    fn warn(&mut self, code: &str, message: String) {
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push((String::from(code), message));
        }
        self.dirty = true;
    }

    fn record(&mut self, changes: ChangeSet) {
        if !changes.is_empty() {
            self.changes.merge(changes);
            self.dirty = true;
        }
    }

    /// Issues a request and remembers what it is for.
    fn request(
        &mut self,
        purpose: Purpose,
        method: Method,
        url: String,
        last_event_id: Option<u64>,
        json_body: Option<String>,
        response: ResponseKind,
    ) -> RequestId {
        let id = self.next_request;
        self.next_request += 1;
        self.requests.push((id, purpose));
        self.effects.push_back(Effect::Request(HttpRequest {
            id,
            method,
            url,
            last_event_id,
            json_body,
            response,
        }));
        id
    }

    /// Forgets request `id` and returns what it was for (`None`: not ours any more).
    fn take_request(&mut self, id: RequestId) -> Option<Purpose> {
        let index = self.requests.iter().position(|(r, _)| *r == id)?;
        Some(self.requests.swap_remove(index).1)
    }

    fn purpose(&self, id: RequestId) -> Option<&Purpose> {
        self.requests.iter().find(|(r, _)| *r == id).map(|(_, p)| p)
    }

    /// Closes the run's open request (the connection machine already knows, or is told next).
    fn abort_run_request(&mut self) {
        let Some((id, _)) = self.run.as_mut().and_then(|r| r.open.take()) else {
            return;
        };
        if let Some(run) = self.run.as_mut() {
            // A new connection starts a new SSE stream: drop any partial frame of the old one.
            run.finish_frame();
        }
        if self.take_request(id).is_some() {
            self.effects.push_back(Effect::Abort { id });
        }
    }

    fn feed_conn(&mut self, input: resume::Input) {
        let now = self.now_ms;
        if let Some(run) = self.run.as_mut() {
            run.conn.handle(input, now);
        }
    }

    fn on_timer(&mut self) {
        let now = self.now_ms;
        self.feed_conn(resume::Input::Tick);
        let cancel_check = self
            .run
            .as_mut()
            .and_then(|r| r.cancel_check_at_ms.take_if(|at| *at <= now));
        if cancel_check.is_some() {
            // No `turn.done` yet: read the turn (ended → rebuilt; running → back on the stream).
            self.feed_conn(resume::Input::CheckTurn);
        }
        self.on_tab_timer();
        self.follow_synced_due();
        let (due, later): (Vec<_>, Vec<_>) = core::mem::take(&mut self.checks_due)
            .into_iter()
            .partition(|(at, _, _)| *at <= now);
        self.checks_due = later;
        for (_, turn_id, attempt) in due {
            self.check_turn(turn_id, attempt);
        }
        self.retry_history_page();
    }

    /// Reads a turn the view shows running although a newer turn replaced it.
    fn check_turn(&mut self, turn_id: String, attempt: u32) {
        let url = self.config.api.turn(&self.id, &turn_id);
        self.request(
            Purpose::CheckTurn { turn_id, attempt },
            Method::Get,
            url,
            None,
            None,
            ResponseKind::Whole,
        );
    }

    /// The view shows `turn_id` running: if it is not the turn we follow, read its state.
    fn check_if_running(&mut self, turn_id: &str) {
        let running = self
            .view
            .turn(turn_id)
            .is_some_and(|t| t.status == TurnStatus::Running);
        let pending = self
            .requests
            .iter()
            .any(|(_, p)| matches!(p, Purpose::CheckTurn { turn_id: t, .. } if t == turn_id))
            || self.checks_due.iter().any(|(_, t, _)| t == turn_id);
        if running && !pending {
            self.check_turn(String::from(turn_id), 1);
        }
    }
}

#[cfg(test)]
mod tests;
