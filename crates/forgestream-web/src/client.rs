//! The exported classes: `WasmClient` (options, storage, session factory) and `WasmSession` (one
//! session's view, its active turn and the actions on it). The TS layer (`pkg/src/index.ts`)
//! wraps them as `AgentClient` / `AgentSession`; methods that do I/O return promises and clone
//! their handle before any `await` (no `&self` borrow is ever held across one).
use std::cell::RefCell;
use std::rc::Rc;

use forgestream_core::respond::{self, Decision};
use forgestream_core::resume::{Input, StartMode};
use forgestream_core::wire;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;
use web_sys::AbortController;

use crate::error::{ErrorCode, SdkError};
use crate::exec;
use crate::headers;
use crate::js;
use crate::options::ClientOptions;
use crate::run::TurnRun;
use crate::session::{ClientShared, SessionRc, SessionState};
use crate::snapshot;
use crate::storage::CheckpointStore;
use crate::transport::fetch::{self, FetchError, HttpRequest};

/// The client: base URL, flavor, header provider, transport and storage choice.
#[wasm_bindgen]
pub struct WasmClient {
    shared: Rc<ClientShared>,
}

#[wasm_bindgen]
impl WasmClient {
    /// Reads the options object (see `ClientOptions::from_js`); throws `invalid-input`.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<WasmClient, JsValue> {
        let options = ClientOptions::from_js(&options)?;
        let store = RefCell::new(CheckpointStore::new(
            options.storage,
            &options.storage_namespace,
        ));
        Ok(WasmClient {
            shared: Rc::new(ClientShared { options, store }),
        })
    }

    /// `POST /sessions` with `body` (a JSON object: TrueForge `{"agent":{"name"}}` or
    /// `{"agent":{"spec"}}`, gateway `{"agent_name"}`); resolves to a `WasmSession`.
    #[wasm_bindgen(js_name = createSession)]
    pub fn create_session(&self, body: String) -> Promise {
        let shared = self.shared.clone();
        future_to_promise(async move { Ok(create_session(shared, &body).await?.into()) })
    }

    /// A handle on an existing session (no request until `load`/`resume`).
    pub fn session(&self, id: String) -> WasmSession {
        WasmSession::new(self.shared.clone(), id)
    }

    /// The session that was active last in this storage, if any (for `restore()`).
    #[wasm_bindgen(js_name = lastSessionId)]
    pub fn last_session_id(&self) -> Option<String> {
        self.shared.store.borrow_mut().last_session()
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
        Ok(create_session(self.shared.clone(), body).await?)
    }
}

async fn create_session(shared: Rc<ClientShared>, body: &str) -> Result<WasmSession, SdkError> {
    let text = post_json(&shared, &shared.options.api.sessions(), body).await?;
    let single: wire::Single<SessionId> = serde_json::from_str(&text).map_err(|e| {
        SdkError::new(
            ErrorCode::InvalidResponse,
            format!("malformed session: {e}"),
        )
    })?;
    Ok(WasmSession::new(shared, single.data.id))
}

/// The part of a created session the client needs (the rest of the object is app data).
#[derive(serde::Deserialize)]
struct SessionId {
    id: String,
}

/// POSTs a JSON body and returns the 2xx response text.
async fn post_json(shared: &ClientShared, url: &str, body: &str) -> Result<String, SdkError> {
    let headers = headers::resolve(shared.options.headers.as_ref()).await?;
    let abort = AbortController::new()
        .map_err(|_| SdkError::new(ErrorCode::Network, "AbortController unavailable"))?;
    let request = HttpRequest {
        method: "POST",
        url,
        headers: &headers,
        json_body: Some(body),
        credentials: &shared.options.credentials,
    };
    let response = fetch::send(&request, &abort).await.map_err(|e| match e {
        FetchError::Aborted => SdkError::new(ErrorCode::Aborted, "aborted"),
        FetchError::Network(m) | FetchError::InvalidRequest(m) => {
            SdkError::new(ErrorCode::Network, m)
        }
    })?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|_| SdkError::new(ErrorCode::Network, "body stream failed"))?;
    if (200..300).contains(&status) {
        Ok(text)
    } else {
        Err(SdkError::http(status, &text))
    }
}

/// One session: its view, the active turn, and the actions on it.
#[wasm_bindgen]
pub struct WasmSession {
    state: SessionRc,
}

impl WasmSession {
    fn new(client: Rc<ClientShared>, id: String) -> Self {
        WasmSession {
            state: Rc::new(RefCell::new(SessionState::new(client, id))),
        }
    }
}

#[wasm_bindgen]
impl WasmSession {
    /// The session id.
    #[wasm_bindgen(getter)]
    pub fn id(&self) -> String {
        self.state.borrow().id.clone()
    }

    /// Sets the change listener `() => void` (called after changes, outside any borrow; the TS
    /// layer coalesces it to one snapshot per animation frame).
    #[wasm_bindgen(js_name = setListener)]
    pub fn set_listener(&self, listener: Option<js_sys::Function>) {
        let mut state = self.state.borrow_mut();
        state.listener = listener;
        // A new listener has not been told about anything yet.
        state.notified = false;
    }

    /// Loads the session's history: its turns (states) and the session timeline (merged events,
    /// newest first, all pages). Resolves when applied.
    pub fn load(&self) -> Promise {
        let rc = self.state.clone();
        future_to_promise(async move {
            load_history(&rc).await?;
            exec::notify(&rc);
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Resumes the turn recorded in this session's checkpoint, if any (after a page refresh):
    /// checks the turn, then replays its live stream from the start into the view or rebuilds it
    /// from the listings (412 / finished). Resolves to the turn id followed, or `null`.
    pub fn resume(&self) -> Promise {
        let rc = self.state.clone();
        future_to_promise(async move {
            let checkpoint = {
                let state = rc.borrow();
                let id = state.id.clone();
                let client = state.client.clone();
                let record = client.store.borrow_mut().load(&id);
                record
            };
            let Some(turn_id) = checkpoint.and_then(|c| c.turn_id) else {
                return Ok(JsValue::NULL);
            };
            // The page's memory is gone, so the view is rebuilt by replaying the live buffer from
            // the first event (after = 0); the checkpoint says *which* turn is live.
            start_run(
                &rc,
                StartMode::Attach { after: Some(0) },
                Some(turn_id.clone()),
                None,
                None,
            );
            Ok(JsValue::from_str(&turn_id))
        })
    }

    /// Follows an existing turn (e.g. one another tab started): attach, check, subscribe.
    pub fn attach(&self, turn_id: String) {
        if self
            .state
            .borrow()
            .run
            .as_ref()
            .is_some_and(|r| r.turn_id.as_deref() == Some(&turn_id) && !r.is_settled())
        {
            return;
        }
        start_run(
            &self.state,
            StartMode::Attach { after: Some(0) },
            Some(turn_id),
            None,
            None,
        );
    }

    /// Starts a turn with `input` (a JSON array of input items). Refuses with `turn-running`
    /// while a turn streams unless `interrupt` (the server then cancels the running turn as
    /// `cancelled-for-next-turn`). Resolves to the new turn id once `turn.created` arrived.
    pub fn send(&self, input: String, interrupt: bool) -> Promise {
        match self.prepare_send(&input, interrupt) {
            Ok(body) => self.start_create(body),
            Err(e) => Promise::reject(&e.into()),
        }
    }

    /// Answers every pending action of the paused turn in one batch (validated by the core as the
    /// server would, PROTOCOL §7) and starts the continuation turn. `decisions` is an array of
    /// `{kind:"allow"|"deny"|"answer", toolCallId, reason?, content?}` or `{kind:"authDone"}`.
    pub fn respond(&self, decisions: JsValue) -> Promise {
        let result = (|| -> Result<String, SdkError> {
            let decisions = parse_decisions(&decisions)?;
            let input = {
                let state = self.state.borrow();
                if state.run.as_ref().is_some_and(|r| !r.is_settled()) {
                    return Err(SdkError::new(
                        ErrorCode::TurnRunning,
                        "a turn is still running",
                    ));
                }
                respond::continuation(&state.view, &decisions)
                    .map_err(|e| SdkError::new(ErrorCode::InvalidInput, e.to_string()))?
            };
            let input = serde_json::to_string(&input)
                .map_err(|e| SdkError::new(ErrorCode::InvalidInput, e.to_string()))?;
            Ok(format!("{{\"input\":{input},\"stream\":true}}"))
        })();
        match result {
            Ok(body) => self.start_create(body),
            Err(e) => Promise::reject(&e.into()),
        }
    }

    /// Stops the turn: `POST /cancel` (idempotent); the stream goes on until `turn.done`
    /// (`cancelled`). Without an active stream the cancel is posted directly.
    pub fn cancel(&self) -> Promise {
        let active = {
            let mut state = self.state.borrow_mut();
            match state.run.as_mut() {
                Some(run) if !run.is_settled() => {
                    run.machine.handle(Input::Cancel, js::now_ms());
                    true
                }
                _ => false,
            }
        };
        if active {
            exec::pump(&self.state);
            return Promise::resolve(&JsValue::UNDEFINED);
        }
        let shared = self.state.borrow().client.clone();
        let url = shared.options.api.cancel(&self.state.borrow().id);
        future_to_promise(async move {
            post_json(&shared, &url, "{}").await?;
            Ok(JsValue::UNDEFINED)
        })
    }

    /// Closes the transport without cancelling the turn (it keeps running on the server; the
    /// checkpoint stays so `resume()` can follow it again).
    pub fn disconnect(&self) {
        {
            let mut state = self.state.borrow_mut();
            if let Some(run) = state.run.as_mut() {
                run.machine.handle(Input::Disconnect, js::now_ms());
            }
        }
        exec::pump(&self.state);
        let mut state = self.state.borrow_mut();
        if let Some(run) = state.run.as_mut() {
            run.open.close();
        }
        if let Some((_, handle)) = state.timer.take() {
            js::clear_timeout(&handle);
        }
        crate::network::detach(&mut state);
    }

    /// Simulates a network failure of the open connection (demo "drop connection" control and
    /// tests): the request is closed and the recovery machine sees a network error, exactly as if
    /// the network had dropped it. The turn is untouched.
    #[wasm_bindgen(js_name = dropConnection)]
    pub fn drop_connection(&self) {
        {
            let mut state = self.state.borrow_mut();
            let Some(run) = state.run.as_mut() else {
                return;
            };
            if !run.machine.is_request_open() {
                return;
            }
            run.open.close();
            run.parser.finish();
            run.request_id += 1;
            run.machine.handle(Input::NetworkError, js::now_ms());
        }
        exec::pump(&self.state);
    }

    /// The inspector's frame log (`inspect: true` only): `[{turnId, sequenceNumber, eventType,
    /// threadId, id, bytes, atMs}]`, oldest first, at most the last 2000 frames.
    #[wasm_bindgen(js_name = eventLog)]
    pub fn event_log(&self) -> Result<JsValue, JsValue> {
        let state = self.state.borrow();
        Ok(crate::snapshot::json_to_js(&state.event_log)?)
    }

    /// The frames logged after the first `seen` ever logged, so a caller keeping its own copy
    /// of the log takes each frame once: `{total, capacity, frames}`, where `total` counts every
    /// frame ever logged, `capacity` is the log's bound and `frames` are the newest
    /// `min(total - seen, kept)` entries, oldest first, shaped as in `eventLog`.
    #[wasm_bindgen(js_name = eventLogSince)]
    pub fn event_log_since(&self, seen: f64) -> Result<JsValue, JsValue> {
        #[derive(serde::Serialize)]
        struct Since<'a> {
            total: u64,
            capacity: usize,
            frames: Vec<&'a crate::session::LoggedFrame>,
        }
        let state = self.state.borrow();
        let seen = if seen.is_finite() && seen > 0.0 {
            seen as u64
        } else {
            0
        };
        let new = state.event_log_total.saturating_sub(seen);
        let skip = state
            .event_log
            .len()
            .saturating_sub(usize::try_from(new).unwrap_or(usize::MAX));
        let out = Since {
            total: state.event_log_total,
            capacity: crate::session::EVENT_LOG_CAPACITY,
            frames: state.event_log.iter().skip(skip).collect(),
        };
        Ok(crate::snapshot::json_to_js(&out)?)
    }

    /// Asks the machine to try again from `liveUnavailable` or a retryable failure (never
    /// re-POSTs a turn).
    pub fn refresh(&self) {
        {
            let mut state = self.state.borrow_mut();
            if let Some(run) = state.run.as_mut() {
                run.machine.handle(Input::Refresh, js::now_ms());
            }
        }
        exec::pump(&self.state);
    }

    /// The whole view as a plain object (camelCase), for a first render.
    #[wasm_bindgen(js_name = snapshot)]
    pub fn snapshot(&self) -> Result<JsValue, JsValue> {
        let mut state = self.state.borrow_mut();
        state.changes = Default::default();
        state.drains += 1;
        state.notified = false;
        snapshot::full(&state).map_err(JsValue::from)
    }

    /// What changed since the last `snapshot()` / `takeChanges()`: only the changed turns' headers,
    /// changed items, and the pending set / usage / status when they changed.
    #[wasm_bindgen(js_name = takeChanges)]
    pub fn take_changes(&self) -> Result<JsValue, JsValue> {
        let mut state = self.state.borrow_mut();
        let mut changes = std::mem::take(&mut state.changes);
        state.drains += 1;
        state.notified = false;
        // Merging per frame only appends; duplicates are removed once here, per drain.
        changes.normalize();
        let warnings = std::mem::take(&mut state.warnings);
        snapshot::changes(&state, &changes, &warnings).map_err(JsValue::from)
    }

    /// The reducer's canonical digest of the session (`SessionView::summary`): turns, items,
    /// threads, pending actions, usage, and transport `diagnostics`; for evaluators and bug
    /// reports. No timestamps, no tokens.
    #[wasm_bindgen(js_name = exportEvents)]
    pub fn export_events(&self) -> Result<JsValue, JsValue> {
        snapshot::export_events(&self.state.borrow()).map_err(JsValue::from)
    }
}

impl WasmSession {
    fn prepare_send(&self, input: &str, interrupt: bool) -> Result<String, SdkError> {
        let items: Vec<wire::InputItem> = serde_json::from_str(input).map_err(|e| {
            SdkError::new(ErrorCode::InvalidInput, format!("invalid input items: {e}"))
        })?;
        let state = self.state.borrow();
        let running = state.run.as_ref().is_some_and(|r| !r.is_settled());
        if running && !interrupt {
            return Err(SdkError::new(
                ErrorCode::TurnRunning,
                "a turn is running: wait for it, cancel it, or send with { interrupt: true }",
            ));
        }
        respond::validate_input(&state.view, &items)
            .map_err(|e| SdkError::new(ErrorCode::InvalidInput, e.to_string()))?;
        let items = serde_json::to_string(&items)
            .map_err(|e| SdkError::new(ErrorCode::InvalidInput, e.to_string()))?;
        Ok(format!("{{\"input\":{items},\"stream\":true}}"))
    }

    fn start_create(&self, body: String) -> Promise {
        let rc = self.state.clone();
        let previous = rc.borrow().view.turn_ids().last().cloned();
        Promise::new(&mut |resolve, reject| {
            start_run(
                &rc,
                StartMode::CreateTurn,
                None,
                Some(body.clone()),
                Some((resolve, reject)),
            );
            if let Some(run) = rc.borrow_mut().run.as_mut() {
                run.previous_turn_id = previous.clone();
            }
        })
    }
}

/// Replaces the active run (closing the old one's transport) and starts it.
fn start_run(
    rc: &SessionRc,
    mode: StartMode,
    turn_id: Option<String>,
    create_body: Option<String>,
    started: Option<(js_sys::Function, js_sys::Function)>,
) {
    {
        let mut state = rc.borrow_mut();
        if let Some(old) = state.run.as_mut() {
            old.open.close();
        }
        let run_id = state.next_run_id;
        state.next_run_id += 1;
        let mut run = TurnRun::new(
            run_id,
            &state.client.options,
            mode,
            turn_id,
            create_body,
            js::now_ms(),
        );
        run.started = started;
        state.run = Some(run);
        state.last_error = None;
        crate::network::attach(rc, &mut state);
        state.dirty = true;
    }
    // Commands are carried out on the next microtask so callers finish their own borrow first.
    let weak = Rc::downgrade(rc);
    wasm_bindgen_futures::spawn_local(async move {
        if let Some(rc) = weak.upgrade() {
            exec::pump(&rc);
        }
    });
}

/// Loads turns (states) and the session timeline into the view.
async fn load_history(rc: &SessionRc) -> Result<(), SdkError> {
    let weak = Rc::downgrade(rc);
    let (api, sid) = {
        let state = rc.borrow();
        (state.client.options.api.clone(), state.id.clone())
    };
    let abort = AbortController::new()
        .map_err(|_| SdkError::new(ErrorCode::Network, "AbortController unavailable"))?;
    let mut token: Option<String> = None;
    for _ in 0..400 {
        let query = match &token {
            Some(t) => format!("?limit=25&page_token={}", t),
            None => "?limit=25".into(),
        };
        let body = exec::get_json(&weak, &api.turns(&sid, &query), &abort)
            .await
            .map_err(|(_, _, e)| e)?;
        let page: wire::Listing<wire::Turn> = exec::parse_json(&body).map_err(|e| {
            SdkError::new(
                ErrorCode::InvalidResponse,
                format!("malformed turn list: {e}"),
            )
        })?;
        {
            let mut state = rc.borrow_mut();
            let changes = state.view.apply_turns(&page.data);
            state.record(changes);
        }
        token = page.pagination.next_page_token;
        if token.is_none() {
            break;
        }
    }
    // All pages first, then one apply: the reducer orders turns once per call, and a UI wants
    // one render of the history, not one per page.
    // Pages are kept as decoded (not appended into one growing vector: no re-copying of
    // ~100k events) and applied in one call.
    let mut pages: Vec<Vec<wire::SessionEventItem>> = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..1000 {
        let body = exec::get_json(&weak, &api.session_events(&sid, token.as_deref()), &abort)
            .await
            .map_err(|(_, _, e)| e)?;
        let page: wire::SessionEventsPage = exec::parse_json(&body).map_err(|e| {
            SdkError::new(
                ErrorCode::InvalidResponse,
                format!("malformed session events: {e}"),
            )
        })?;
        pages.push(page.data);
        token = page.pagination.next_page_token;
        if token.is_none() {
            break;
        }
    }
    let mut state = rc.borrow_mut();
    match state.view.apply_session_events(pages.into_iter().flatten()) {
        Ok(changes) => state.record(changes),
        Err(e) => state.warn("protocol", e.to_string()),
    }
    Ok(())
}

fn parse_decisions(value: &JsValue) -> Result<Vec<Decision>, SdkError> {
    let array: js_sys::Array = value
        .clone()
        .dyn_into()
        .map_err(|_| SdkError::new(ErrorCode::InvalidInput, "decisions must be an array"))?;
    let get = |o: &JsValue, k: &str| {
        js_sys::Reflect::get(o, &JsValue::from_str(k))
            .ok()
            .and_then(|v| v.as_string())
    };
    let mut out = Vec::with_capacity(array.length() as usize);
    for d in array.iter() {
        let kind = get(&d, "kind").unwrap_or_default();
        let call = get(&d, "toolCallId");
        let need_call = || {
            call.clone().ok_or_else(|| {
                SdkError::new(
                    ErrorCode::InvalidInput,
                    format!("decision {kind:?} needs toolCallId"),
                )
            })
        };
        out.push(match kind.as_str() {
            "allow" => Decision::Allow {
                tool_call_id: need_call()?,
            },
            "deny" => Decision::Deny {
                tool_call_id: need_call()?,
                reason: get(&d, "reason"),
            },
            "answer" => Decision::Answer {
                tool_call_id: need_call()?,
                content: get(&d, "content").unwrap_or_default(),
            },
            "authDone" => Decision::AuthDone,
            other => {
                return Err(SdkError::new(
                    ErrorCode::InvalidInput,
                    format!("unknown decision kind {other:?}"),
                ))
            }
        });
    }
    Ok(out)
}

use wasm_bindgen::JsCast;
