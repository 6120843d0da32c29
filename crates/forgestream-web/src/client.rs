//! The exported classes: `WasmClient` (options, storage) and `WasmSession` (a handle on one
//! session's engine). The page's engines are registered by configuration and session id
//! (`executor::engine_for`): every handle on one session shares one engine, so one connection —
//! `session(id)` twice, `createSession()` then `session(id)`, concurrent `restore()`s, and two
//! clients of the same configuration all end up on the same engine. `close()` releases a handle; the last
//! close frees the engine. The TS layer (`pkg/src/index.ts`) wraps them as `AgentClient` /
//! `AgentSession`.
use std::cell::RefCell;
use std::rc::Rc;

use forgestream_core::respond::Decision;
use forgestream_core::session::{self, Command, ErrorCode, Input, Role, SessionError, TabInput};
use forgestream_core::wire;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use crate::error::{invalid_input, to_js};
use crate::executor::{self, engine_for, ClientShared, Engine};
use crate::options::ClientOptions;
use crate::snapshot;
use crate::storage::checkpoint_store;

/// The client: base URL, flavor, header provider, transport and storage choice.
#[wasm_bindgen]
pub struct WasmClient {
    shared: Rc<ClientShared>,
}

#[wasm_bindgen]
impl WasmClient {
    /// Reads the options object (see `ClientOptions::from_js`); throws `invalid-input`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(
            unchecked_param_type = "ClientOptions & { headers?: () => Promise<[string, string][]>; [jsOnly: string]: unknown }"
        )]
        options: JsValue,
    ) -> Result<WasmClient, JsValue> {
        let options = ClientOptions::from_js(&options).map_err(|e| to_js(&e))?;
        let store = RefCell::new(checkpoint_store(
            options.config.storage,
            &options.config.storage_namespace,
            options.config.api.base(),
        ));
        Ok(WasmClient {
            shared: Rc::new(ClientShared {
                options,
                store,
                tabs: std::cell::Cell::new(false),
            }),
        })
    }

    /// `POST /sessions` with `body` (a JSON object: TrueForge `{"agent":{"name"}}` or
    /// `{"agent":{"spec"}}`, gateway `{"agent_name"}`); resolves to a `WasmSession`. The
    /// session becomes `scope`'s last session (the pointer is per base URL and scope).
    #[wasm_bindgen(js_name = createSession)]
    pub fn create_session(&self, body: String, scope: Option<String>) -> Promise {
        let shared = self.shared.clone();
        future_to_promise(async move {
            let id = create_session(&shared, body).await.map_err(|e| to_js(&e))?;
            // Remembered at once: a reload before the first message restores this session
            // instead of creating another one.
            shared.store.borrow_mut().remember(&id, scope.as_deref());
            Ok(WasmSession::on(engine_for(&shared, &id)).into())
        })
    }

    /// Forgets session `id` in this client's storage: its checkpoint, and the last-session
    /// pointers naming it (`scope`'s, the unscoped one, those it was opened under in this
    /// page), so a later `restore` resolves `null`. No request.
    #[wasm_bindgen(js_name = forgetSession)]
    pub fn forget_session(&self, id: String, scope: Option<String>) {
        self.shared.store.borrow_mut().forget(&id, scope.as_deref());
    }

    /// A handle on session `id` (no request until `load` / `resume`); shares the engine of
    /// every other open handle on it.
    pub fn session(&self, id: String) -> WasmSession {
        WasmSession::on(engine_for(&self.shared, &id))
    }

    /// After a page refresh: the last active session from storage, its history loaded and its
    /// live turn followed (settles once the turn's state is known, so pending approvals are in
    /// the view, and a restored turn's replay has caught up with the stored checkpoint, so the
    /// view shows it running). Resolves to a handle, or `null` when nothing usable is stored: no
    /// pointer, a corrupt one (cleared), or a session the server no longer has (pointer and
    /// checkpoint cleared). `scope` picks the pointer (per base URL and scope); the engine,
    /// connection and checkpoint of a session are shared by every scope that opens it.
    /// Concurrent calls share one load and one subscribe.
    ///
    /// The engine has begun the restore when this returns (its snapshot reads `loading`): a
    /// handle the TS layer hands the app at once (`onOpen`) read `idle` while the command still
    /// waited for a microtask, and an app offering Send on `idle` could send into the live turn.
    pub fn restore(&self, scope: Option<String>) -> Promise {
        let point = self
            .shared
            .store
            .borrow_mut()
            .restore_point(scope.as_deref());
        let Some((id, checkpoint)) = point else {
            return Promise::resolve(&JsValue::NULL);
        };
        let handle = WasmSession::on(engine_for(&self.shared, &id));
        let engine = match handle.engine() {
            Ok(engine) => engine,
            Err(e) => return Promise::reject(&to_js(&e)),
        };
        let found = engine.command(Command::Restore { checkpoint });
        future_to_promise(async move {
            let found = JsFuture::from(found).await?;
            if found.as_bool() == Some(true) {
                Ok(handle.into())
            } else {
                handle.close();
                Ok(JsValue::NULL)
            }
        })
    }

    /// The session that was active last in `scope`, if its pointer holds a valid id.
    #[wasm_bindgen(js_name = lastSessionId)]
    pub fn last_session_id(&self, scope: Option<String>) -> Option<String> {
        self.shared
            .store
            .borrow_mut()
            .last_session(scope.as_deref())
    }

    /// Whether the TS layer shares one live connection per session among this origin's tabs
    /// (Web Locks and `BroadcastChannel` present, `followOtherTabs` not false): engines made
    /// from now on start as followers (`WasmSession.tabRole`). Off by default (every engine
    /// subscribes itself).
    #[wasm_bindgen(js_name = shareTabs)]
    pub fn share_tabs(&self, on: bool) {
        self.shared.tabs.set(on);
    }

    /// Whether checkpoints fell back to memory (storage unavailable, full or disabled).
    #[wasm_bindgen(js_name = storageIsMemory)]
    pub fn storage_is_memory(&self) -> bool {
        self.shared.store.borrow().is_memory()
    }
}

impl WasmClient {
    /// [`WasmClient::create_session`] for Rust callers (tests): the session itself, not a promise.
    pub async fn open_new_session(&self, body: &str) -> Result<WasmSession, JsValue> {
        let id = create_session(&self.shared, body.to_string())
            .await
            .map_err(|e| to_js(&e))?;
        Ok(WasmSession::on(engine_for(&self.shared, &id)))
    }
}

/// `POST /sessions`; the new session's id (request and answer are the core's).
async fn create_session(shared: &ClientShared, body: String) -> Result<String, SessionError> {
    let request = session::create_session_request(&shared.options.config.api, body);
    let headers = crate::headers::resolve(shared.options.headers.as_ref()).await?;
    let abort = web_sys::AbortController::new()
        .map_err(|_| SessionError::new(ErrorCode::Internal, "AbortController unavailable"))?;
    let credentials = shared.options.config.credentials.as_str();
    let response = crate::transport::http::send(&request, &headers, credentials, &abort.signal())
        .await
        .map_err(|e| e.into_session_error())?;
    session::created_session_id(response.status, &response.body)
}

/// A handle on one session's engine.
#[wasm_bindgen]
pub struct WasmSession {
    /// `None` once closed.
    engine: RefCell<Option<Rc<Engine>>>,
    id: String,
    serial: u32,
}

impl WasmSession {
    fn on(engine: Rc<Engine>) -> Self {
        WasmSession {
            serial: engine.serial,
            id: engine.id.clone(),
            engine: RefCell::new(Some(engine)),
        }
    }

    pub(crate) fn engine(&self) -> Result<Rc<Engine>, SessionError> {
        self.engine
            .borrow()
            .clone()
            .ok_or_else(|| SessionError::new(ErrorCode::Aborted, "the session handle is closed"))
    }

    fn with<T>(&self, f: impl FnOnce(&Rc<Engine>) -> T) -> Option<T> {
        self.engine().ok().map(|e| f(&e))
    }

    /// `f` on the engine's session, borrowed for the call only (it calls no app code).
    fn read<T>(
        &self,
        f: impl FnOnce(&mut session::Session) -> Result<T, SessionError>,
    ) -> Result<T, JsValue> {
        let engine = self.engine().map_err(|e| to_js(&e))?;
        let result = f(&mut engine.session.borrow_mut());
        result.map_err(|e| to_js(&e))
    }

    /// Sends `command` to the engine; the promise it settles (rejected with `aborted` on a
    /// closed handle).
    pub(crate) fn run(&self, command: Command) -> Promise {
        match self.engine() {
            Ok(engine) => engine.command(command),
            Err(e) => Promise::reject(&to_js(&e)),
        }
    }
}

impl Drop for WasmSession {
    /// A handle freed without `close()` (the TS `FinalizationRegistry` backstop, or a Rust
    /// caller) releases its engine the same way.
    fn drop(&mut self) {
        self.close();
    }
}

#[wasm_bindgen]
impl WasmSession {
    /// The session id.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// Identifies the engine: handles on one session share it (and the TS layer shares one
    /// snapshot store per engine).
    #[wasm_bindgen(getter, js_name = engineId)]
    pub fn engine_id(&self) -> u32 {
        self.serial
    }

    /// Releases this handle; the last handle's close aborts the engine's requests, rejects its
    /// pending promises with `aborted`, keeps the checkpoint, and drops every JS value Rust held
    /// for it. Idempotent.
    pub fn close(&self) {
        let Some(engine) = self.engine.borrow_mut().take() else {
            return;
        };
        // The registry holds weak references; the task-held ones are weak too: this is the
        // last handle when no other strong reference remains.
        if Rc::strong_count(&engine) == 1 {
            engine.close();
        }
    }

    /// Whether `close()` was called on this handle.
    #[wasm_bindgen(getter)]
    pub fn closed(&self) -> bool {
        self.engine.borrow().is_none()
    }

    /// Sets the change listener `(statusChanged: boolean) => void`, called outside any borrow
    /// when changes arrive: once after each drain, then again while undrained at most every
    /// 100 ms and whenever the connection status changed (`statusChanged` = true; see
    /// `forgestream_core::session::RENOTIFY_MS`). The TS layer coalesces it to one snapshot per
    /// animation frame, or, in a hidden page, one per 100 ms. Cleared on the last close.
    #[wasm_bindgen(js_name = setListener)]
    pub fn set_listener(&self, listener: Option<js_sys::Function>) {
        self.with(|e| e.set_listener(listener));
    }

    /// Sets the tabs handler `(kind, turnId?, seq?, data?, frames?) => void` that carries out
    /// the engine's tab effects (issue 14; `forgestream_core::session::tabs`): `"relay"` (send
    /// this frame to the other tabs and keep it), `"keep"` (keep `frames`, an array of
    /// `[seq, data]` of `turnId`, oldest first: the engine kept them while no follower was
    /// heard), `"follow"` (feed the kept frames of `turnId` after
    /// `seq` back with `tabRelayed`, on a later task, and ask the leader for the rest),
    /// `"ended"` (tell the followers the turn `turnId` ended: they call `tabTurnEnded`),
    /// `"heartbeat"`, `"steal"` (take the lock with `steal: true`). Cleared on the last close.
    #[wasm_bindgen(js_name = setTabHandler)]
    pub fn set_tab_handler(&self, handler: Option<js_sys::Function>) {
        self.with(|e| e.set_tab_handler(handler));
    }

    /// This tab's role for the session: `"leader"` (it holds the session's Web Lock: it opens
    /// the live stream and relays its frames), `"follower"` (it waits for the lock: it follows
    /// the relayed frames) or `"solo"` (no sharing: today's per-tab connection). Anything else
    /// is ignored.
    #[wasm_bindgen(js_name = tabRole)]
    pub fn tab_role(&self, role: &str) {
        let role = match role {
            "leader" => Role::Leader,
            "follower" => Role::Follower,
            "solo" => Role::Solo,
            _ => return,
        };
        self.with(|e| executor::feed(e, Input::Tab(TabInput::Role(role))));
    }

    /// Whether a restored turn's replay is still short of what the page showed before the
    /// reload (`forgestream_core::session::Session::catching_up`, at most
    /// `CATCH_UP_MAX_MS` = 2 000 ms): the TS layer publishes no snapshot meanwhile, and the
    /// listener is called when it is over. `false` once closed.
    #[wasm_bindgen(getter, js_name = catchingUp)]
    pub fn catching_up(&self) -> bool {
        self.with(|e| e.session.borrow().catching_up())
            .unwrap_or(false)
    }

    /// The role last set (`"solo"` until `tabRole`).
    #[wasm_bindgen(getter, js_name = role)]
    pub fn role(&self) -> String {
        self.with(|e| e.session.borrow().role().as_str().to_string())
            .unwrap_or_else(|| "solo".into())
    }

    /// A frame another tab relayed (or one kept here, fed again after `"follow"`); `seq` is its
    /// sequence number (a number that is not a non-negative safe integer is ignored).
    #[wasm_bindgen(js_name = tabRelayed)]
    pub fn tab_relayed(&self, turn_id: &str, seq: f64, data: &str) {
        if !(seq.is_finite() && seq >= 0.0 && seq.fract() == 0.0 && seq <= 9_007_199_254_740_991.0)
        {
            return;
        }
        let input = Input::Tab(TabInput::Relayed {
            turn_id,
            sequence_number: seq as u64,
            data,
        });
        self.with(|e| executor::feed(e, input));
    }

    /// Another tab following this session spoke (it answered a heartbeat, probed, or asked for
    /// a replay): the engine relays its frames for the next 5 s
    /// (`forgestream_core::session::tabs::FOLLOWER_TTL_MS`), and first hands over what it kept.
    #[wasm_bindgen(js_name = tabFollowerHeard)]
    pub fn tab_follower_heard(&self) {
        self.with(|e| executor::feed(e, Input::Tab(TabInput::FollowerHeard)));
    }

    /// The leader's followed turn `turn_id` ended (its `"ended"` effect): a follower still
    /// following it through the relay reads the turn.
    #[wasm_bindgen(js_name = tabTurnEnded)]
    pub fn tab_turn_ended(&self, turn_id: &str) {
        self.with(|e| executor::feed(e, Input::Tab(TabInput::TurnEnded { turn_id })));
    }

    /// The leader's subscribe to `turn_id` was answered 412 (its `"gone"` effect): a follower
    /// following it through the relay rebuilds the turn from the listings, as the leader did.
    #[wasm_bindgen(js_name = tabLiveGone)]
    pub fn tab_live_gone(&self, turn_id: &str) {
        self.with(|e| executor::feed(e, Input::Tab(TabInput::LiveGone { turn_id })));
    }

    /// The leader answered this tab's replay request for `turn_id` without the frame after the
    /// cursor asked for (it keeps only a tail of a long turn): a follower still waiting for the
    /// gap subscribes itself at once (`forgestream_core::session::tabs`, "Relaying").
    #[wasm_bindgen(js_name = tabReplayShort)]
    pub fn tab_replay_short(&self, turn_id: &str) {
        self.with(|e| executor::feed(e, Input::Tab(TabInput::ReplayShort { turn_id })));
    }

    /// A leader's heartbeat, promising its next sign of life within `lease_ms` ms; `streaming`:
    /// its live stream is open (a heartbeat of a leader that reconnects is not the relay's
    /// liveness).
    #[wasm_bindgen(js_name = tabLeaderSeen)]
    pub fn tab_leader_seen(&self, lease_ms: f64, streaming: bool) {
        let lease_ms = if lease_ms.is_finite() && lease_ms > 0.0 {
            lease_ms as u64
        } else {
            0
        };
        self.with(|e| {
            executor::feed(
                e,
                Input::Tab(TabInput::LeaderSeen {
                    lease_ms,
                    streaming,
                }),
            )
        });
    }

    /// Loads the session's history: its turns (states) and the session timeline. Joins a load
    /// already in flight. Resolves when applied.
    pub fn load(&self) -> Promise {
        self.run(Command::Load)
    }

    /// Resumes the turn recorded in this session's checkpoint, if any (after a page refresh):
    /// checks the turn, then replays its live stream from the start or rebuilds it from the
    /// listings. Resolves to the turn id followed (once its state is known), or `null`.
    pub fn resume(&self) -> Promise {
        let checkpoint = self
            .with(|e| e.client.store.borrow_mut().load(&self.id))
            .flatten();
        self.run(Command::Resume { checkpoint })
    }

    /// `WasmClient.restore` on this handle's engine, with this session's stored checkpoint: load
    /// the history, then follow the checkpoint's turn, once per engine (an engine that restored
    /// already settles with its result; one restoring joins it). Resolves to `true`, or `false`
    /// when the server no longer has the session (pointer and checkpoint cleared). For the TS
    /// layer's page-wide registry: a second copy of the package in the page (a hot module
    /// reload) restores through the first copy's live engine instead of opening its own.
    #[wasm_bindgen(js_name = restoreHere)]
    pub fn restore_here(&self) -> Promise {
        let checkpoint = self
            .with(|e| e.client.store.borrow_mut().load(&self.id))
            .flatten();
        self.run(Command::Restore { checkpoint })
    }

    /// Follows an existing turn (e.g. one another tab started): check, subscribe. Nothing if
    /// this engine follows it already.
    pub fn attach(&self, turn_id: String) {
        self.with(|e| e.command_detached(Command::Attach { turn_id }));
    }

    /// Starts a turn with `input` (a JSON array of input items). Refuses with `turn-running`
    /// while a turn streams unless `interrupt` (the server then cancels the running turn as
    /// `cancelled-for-next-turn`, which the view shows within one round trip). Resolves to the
    /// new turn id once `turn.created` arrived. `waited`: the call waited for another tab's
    /// action on this session (the TS layer's action lock), so the engine checks the newest turn
    /// first and rejects a stale call with `conflict` (`forgestream_core::session::action`).
    pub fn send(&self, input: String, interrupt: bool, waited: Option<bool>) -> Promise {
        match wire::json::from_str::<Vec<wire::InputItem>>(&input) {
            Ok(input) => self.run(after_wait(Command::Send { input, interrupt }, waited)),
            Err(e) => Promise::reject(&invalid_input(format!("invalid input items: {e}"))),
        }
    }

    /// Answers every pending action of the paused turn in one batch (validated by the core as the
    /// server would, PROTOCOL §7) and starts the continuation turn. `decisions` is an array of
    /// `{kind:"allow"|"deny"|"answer", toolCallId, reason?, content?}` or `{kind:"authDone"}`.
    /// An answer given already (a newer turn continued the call's turn) rejects with `conflict`;
    /// `waited` as for `send`.
    pub fn respond(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Decision[]")] decisions: JsValue,
        waited: Option<bool>,
    ) -> Promise {
        match crate::snapshot::json_from_js::<Vec<Decision>>(&decisions) {
            Ok(decisions) => self.run(after_wait(Command::Respond { decisions }, waited)),
            Err(e) => Promise::reject(&invalid_input(format!("invalid decisions: {e}"))),
        }
    }

    /// Stops the turn: `POST /cancel` (idempotent); the stream goes on until `turn.done`
    /// (`cancelled`). `waited` as for `send`.
    pub fn cancel(&self, waited: Option<bool>) -> Promise {
        self.run(after_wait(Command::Cancel, waited))
    }

    /// Closes the transport without cancelling the turn (it keeps running on the server; the
    /// checkpoint stays so `resume()` can follow it again).
    pub fn disconnect(&self) {
        self.with(|e| e.command_detached(Command::Disconnect));
    }

    /// Simulates a network failure of the open connection (demo "drop connection" control and
    /// tests): recovered exactly as a real drop. The turn is untouched.
    #[wasm_bindgen(js_name = dropConnection)]
    pub fn drop_connection(&self) {
        self.with(|e| e.command_detached(Command::DropConnection));
    }

    /// Asks the connection to try again from `liveUnavailable` or a retryable failure (never
    /// re-POSTs a turn).
    pub fn refresh(&self) {
        self.with(|e| e.command_detached(Command::Refresh));
    }

    /// Waits for the outcome of a send whose create request got no answer and which rejected
    /// with `outcome-unknown` (`forgestream_core::session::Command::AwaitCreateOutcome`): resolves
    /// to the turn id once a lookup found the turn (this engine follows it; nothing is sent
    /// again), to `null` once one showed the server has no such turn (sending again is safe);
    /// rejects with `outcome-unknown` when the next lookup had no answer either, `aborted` when
    /// there is no such send to check. Starts no lookup: `refresh()` and `online` do.
    #[wasm_bindgen(js_name = awaitCreateOutcome, unchecked_return_type = "Promise<string | null>")]
    pub fn await_create_outcome(&self) -> Promise {
        self.run(Command::AwaitCreateOutcome)
    }

    /// The inspector's frame log (`inspect: true` only): `[{turnId, sequenceNumber, eventType,
    /// threadId, id, bytes, atMs}]`, oldest first, at most the last 2000 frames.
    #[wasm_bindgen(js_name = eventLog, unchecked_return_type = "LoggedFrame[]")]
    pub fn event_log(&self) -> Result<JsValue, JsValue> {
        self.read(|session| snapshot::json_to_js(&session.event_log().0))
    }

    /// The frames logged after the first `seen` ever logged, packed: `{total, capacity,
    /// strings, frames}`, where `total` counts every frame ever logged, `capacity` is the log's
    /// bound and `frames` holds the newest `min(total - seen, kept, limit)` entries, oldest
    /// first, seven numbers each (the core's `Session::event_log_packed` gives the layout; the
    /// package's `eventLog()` turns them into `LoggedFrame`s). `limit` (optional; absent, `null`, NaN or infinite = no limit; negative = 0)
    /// bounds how many frames cross from wasm: an inspector showing its last rows passes how
    /// many it shows.
    #[wasm_bindgen(js_name = eventLogSince, unchecked_return_type = "PackedEventLog")]
    pub fn event_log_since(&self, seen: f64, limit: Option<f64>) -> Result<JsValue, JsValue> {
        let seen = if seen.is_finite() && seen > 0.0 {
            seen as u64
        } else {
            0
        };
        let limit = match limit {
            Some(l) if l.is_finite() => {
                if l > 0.0 {
                    l as usize
                } else {
                    0
                }
            }
            _ => usize::MAX,
        };
        self.read(|session| {
            js_sys::JSON::parse(&session.event_log_packed(seen, limit)).map_err(|_| {
                SessionError::new(
                    ErrorCode::Internal,
                    "event log packing produced invalid JSON",
                )
            })
        })
    }

    /// The whole view as a plain object (camelCase), for a first render.
    #[wasm_bindgen(js_name = snapshot, unchecked_return_type = "CoreChanges")]
    pub fn snapshot(&self) -> Result<JsValue, JsValue> {
        self.read(|session| {
            // The pending changes are superseded by the whole view; their warnings are not.
            let (changes, warnings) = session.take_changes();
            snapshot::to_js(session.full_changes(&changes, &warnings))
        })
    }

    /// The items of turn `turnId` as of the last `snapshot()` / `takeChanges()` (a message that
    /// gained text since is cut back to that drain), as `{turnId, drain, items}` (`items` in
    /// stream order), or `null` for a turn the view does not have. From now on the change sets
    /// carry this turn's item changes (the core's `held` rule, option `turnItems`).
    #[wasm_bindgen(js_name = turnItems, unchecked_return_type = "TurnItemsRead | null")]
    pub fn turn_items(&self, turn_id: String) -> Result<JsValue, JsValue> {
        self.read(|session| match session.turn_items(&turn_id) {
            Some(read) => snapshot::turn_items_to_js(read),
            None => Ok(JsValue::NULL),
        })
    }

    /// What changed since the last `snapshot()` / `takeChanges()`: only the changed turns'
    /// headers, changed items, and the pending set / usage / status when they changed.
    #[wasm_bindgen(js_name = takeChanges, unchecked_return_type = "CoreChanges")]
    pub fn take_changes(&self) -> Result<JsValue, JsValue> {
        self.read(|session| {
            let (changes, warnings) = session.take_changes();
            snapshot::to_js(session.changes_of(&changes, &warnings))
        })
    }

    /// The reducer's canonical digest of the session (`SessionView::summary`): turns, items,
    /// threads, pending actions, usage, and transport `diagnostics`; for evaluators and bug
    /// reports. No timestamps, no tokens. (The events themselves: `exportEvents`, `events.rs`.)
    #[wasm_bindgen(js_name = exportDigest)]
    pub fn export_digest(&self) -> Result<JsValue, JsValue> {
        self.read(|session| snapshot::json_to_js(&session.view().digest()))
    }
}

#[wasm_bindgen(typescript_custom_section)]
const TURN_ITEMS_READ: &str = r#"
/**
 * `WasmSession.turnItems`'s answer (the core's `HeldItems`): one turn's items, in stream order,
 * as of drain `drain` (the last `snapshot()` / `takeChanges()`).
 */
export interface TurnItemsRead {
  turnId: string;
  drain: number;
  items: ItemView[];
}
"#;

#[wasm_bindgen(typescript_custom_section)]
const PACKED_EVENT_LOG: &str = r#"
/**
 * `WasmSession.eventLogSince`'s page (the core's `Session::event_log_packed`): `frames` holds
 * seven numbers per frame, oldest first — turn, sequenceNumber, eventType, threadId, id, bytes,
 * atMs — the string fields as indexes into `strings`, `-1` for an absent sequenceNumber,
 * threadId or id.
 */
export interface PackedEventLog {
  total: number;
  capacity: number;
  strings: string[];
  frames: number[];
}
"#;

/// `command`, first checked against the newest turn when it `waited` for another tab's action.
fn after_wait(command: Command, waited: Option<bool>) -> Command {
    if waited == Some(true) {
        Command::AfterWait {
            command: Box::new(command),
        }
    } else {
        command
    }
}
