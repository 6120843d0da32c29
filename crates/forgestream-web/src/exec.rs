//! Carries out the recovery machine's commands: requests, aborts, timers, checkpoints. Every
//! async task holds only a `Weak` session handle plus the run/request ids it belongs to, and feeds
//! its outcome back as a machine input; results of a closed request or an older run are dropped.
use std::rc::Rc;

use forgestream_core::resume::{Command, ConnectionStatus, Input};
use forgestream_core::wire;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;
use web_sys::AbortController;

use crate::error::{ErrorCode, SdkError};
use crate::headers;
use crate::ingest;
use crate::js;
use crate::session::{SessionRc, SessionWeak};
use crate::storage::Checkpoint;
use crate::transport::eventsource::{Source, SourceEvent};
use crate::transport::fetch::{self, FetchError, HttpRequest};
use crate::transport::TransportKind;

/// Runs the machine until it has no command left, then re-arms the timer and notifies the
/// listener (outside any borrow).
pub fn pump(rc: &SessionRc) {
    loop {
        let command = {
            let mut state = rc.borrow_mut();
            match state.run.as_mut().and_then(|run| run.poll()) {
                Some(c) => c,
                None => break,
            }
        };
        execute(rc, command);
    }
    arm_timer(rc);
    notify(rc);
}

/// Calls the TS listener if something changed. Never while borrowed: the listener may call back.
pub fn notify(rc: &SessionRc) {
    let listener = {
        let mut state = rc.borrow_mut();
        if !state.dirty {
            return;
        }
        state.dirty = false;
        state.listener.clone()
    };
    if let Some(listener) = listener {
        let _ = listener.call0(&JsValue::UNDEFINED);
    }
}

/// Feeds `input` to run `run_id` if it is still the active run and, when `request_id` is given,
/// that request is still the open one. Then pumps.
pub fn feed(weak: &SessionWeak, run_id: u64, request_id: Option<u64>, input: Input) {
    let Some(rc) = weak.upgrade() else { return };
    {
        let mut state = rc.borrow_mut();
        let Some(run) = state.run.as_mut() else {
            return;
        };
        if run.run_id != run_id || request_id.is_some_and(|r| r != run.request_id) {
            return;
        }
        run.machine.handle(input, js::now_ms());
    }
    pump(&rc);
}

/// Ids identifying "this request of this run".
#[derive(Clone, Copy)]
struct Ticket {
    run_id: u64,
    request_id: u64,
}

/// Opens a new request slot: closes the previous request (at most one connection) and returns a
/// ticket plus a fresh AbortController for the new one.
fn open_request(rc: &SessionRc) -> Option<(Ticket, AbortController)> {
    let mut state = rc.borrow_mut();
    let run = state.run.as_mut()?;
    run.open.close();
    // A new connection starts a new SSE stream: drop any partial frame of the old one.
    run.parser.finish();
    run.request_id += 1;
    let abort = AbortController::new().ok()?;
    run.open.abort = Some(abort.clone());
    Some((
        Ticket {
            run_id: run.run_id,
            request_id: run.request_id,
        },
        abort,
    ))
}

fn execute(rc: &SessionRc, command: Command) {
    let weak = Rc::downgrade(rc);
    match command {
        Command::PostTurn => {
            let (url, body) = {
                let state = rc.borrow();
                let body = state
                    .run
                    .as_ref()
                    .and_then(|r| r.create_body.clone())
                    .unwrap_or_else(|| "{}".into());
                (state.client.options.api.turns(&state.id, ""), body)
            };
            if let Some((ticket, abort)) = open_request(rc) {
                spawn_local(stream_request(
                    weak,
                    ticket,
                    abort,
                    "POST",
                    url,
                    Some(body),
                    None,
                ));
            }
        }
        Command::Subscribe { after } => {
            let (api, sid, tid, transport) = {
                let state = rc.borrow();
                let tid = state.run.as_ref().and_then(|r| r.turn_id.clone());
                (
                    state.client.options.api.clone(),
                    state.id.clone(),
                    tid,
                    state.client.options.transport,
                )
            };
            let Some(tid) = tid else {
                // A subscribe without a turn id cannot happen by the machine's rules (it only
                // subscribes after the create stream or a lookup named the turn); fail loudly.
                fail_run(
                    rc,
                    SdkError::new(ErrorCode::InvalidResponse, "no turn id to subscribe to"),
                );
                return;
            };
            let url = api.subscribe(&sid, &tid, after);
            match transport {
                TransportKind::Fetch => {
                    if let Some((ticket, abort)) = open_request(rc) {
                        let body = api.subscribe_body(after);
                        spawn_local(stream_request(
                            weak,
                            ticket,
                            abort,
                            api.subscribe_method(),
                            url,
                            body,
                            Some(after),
                        ));
                    }
                }
                TransportKind::EventSource => open_event_source(rc, url),
            }
        }
        Command::GetTurn => {
            if let Some((ticket, abort)) = open_request(rc) {
                spawn_local(get_turn(weak, ticket, abort));
            }
        }
        Command::Rebuild => {
            if let Some((ticket, abort)) = open_request(rc) {
                spawn_local(rebuild(weak, ticket, abort));
            }
        }
        Command::LookupNewestTurn => {
            if let Some((ticket, abort)) = open_request(rc) {
                spawn_local(lookup_newest_turn(weak, ticket, abort));
            }
        }
        Command::RefreshHeaders => {
            let (provider, run_id) = {
                let state = rc.borrow();
                (
                    state.client.options.headers.clone(),
                    state.run.as_ref().map(|r| r.run_id),
                )
            };
            if let Some(run_id) = run_id {
                spawn_local(async move {
                    let input = match headers::resolve(provider.as_ref()).await {
                        Ok(_) => Input::HeadersRefreshed,
                        Err(_) => Input::HeadersRefreshFailed,
                    };
                    feed(&weak, run_id, None, input);
                });
            }
        }
        Command::Abort => {
            let mut state = rc.borrow_mut();
            if let Some(run) = state.run.as_mut() {
                run.open.close();
                run.parser.finish();
                run.request_id += 1;
            }
        }
        Command::PostCancel => {
            let (url, provider, credentials) = {
                let state = rc.borrow();
                let o = &state.client.options;
                (
                    o.api.cancel(&state.id),
                    o.headers.clone(),
                    o.credentials.clone(),
                )
            };
            spawn_local(async move {
                let Ok(headers) = headers::resolve(provider.as_ref()).await else {
                    return;
                };
                let Ok(abort) = AbortController::new() else {
                    return;
                };
                let request = HttpRequest {
                    method: "POST",
                    url: &url,
                    headers: &headers,
                    json_body: Some("{}"),
                    credentials: &credentials,
                };
                // Fire and forget: the stream reports the outcome with `turn.done` (cancelled).
                if let Ok(response) = fetch::send(&request, &abort).await {
                    let _ = response.text().await;
                }
            });
        }
        Command::Persist { after } => {
            let mut state = rc.borrow_mut();
            let turn_id = state.run.as_ref().and_then(|r| r.turn_id.clone());
            if turn_id.is_some() {
                let record = Checkpoint {
                    v: crate::storage::SCHEMA_VERSION,
                    session_id: state.id.clone(),
                    turn_id,
                    seq: after,
                    saved_at: js::now_ms(),
                };
                let client = state.client.clone();
                client.store.borrow_mut().save(&record);
                if let Some(run) = state.run.as_mut() {
                    run.persisted = run.persisted.max(after);
                }
                drain_storage_warnings(&mut state);
            }
        }
        Command::ClearPersisted => {
            let mut state = rc.borrow_mut();
            let record = Checkpoint {
                v: crate::storage::SCHEMA_VERSION,
                session_id: state.id.clone(),
                turn_id: None,
                seq: 0,
                saved_at: js::now_ms(),
            };
            let client = state.client.clone();
            client.store.borrow_mut().save(&record);
            drain_storage_warnings(&mut state);
        }
        Command::Status(status) => {
            let mut state = rc.borrow_mut();
            if let ConnectionStatus::Failed(error) = &status {
                // The machine's verdict decides the code; the last request's error (if it says
                // something else) is kept as the cause in the message.
                let sdk = match state.last_error.clone() {
                    Some(e) if e.code.as_str() == error.code() => e,
                    cause => {
                        let message = match cause {
                            Some(c) => format!("{error} (last error: {})", c.message),
                            None => error.to_string(),
                        };
                        let mut e = SdkError::new(code_of(error.code()), message);
                        e.retryable = error.is_retryable();
                        e
                    }
                };
                state.last_error = Some(sdk.clone());
                if let Some((_, reject)) = state.run.as_mut().and_then(|r| r.started.take()) {
                    let _ = reject.call1(&JsValue::UNDEFINED, &sdk.into());
                }
            }
            if let Some(run) = state.run.as_mut() {
                run.status = status;
            }
            state.dirty = true;
        }
    }
}

fn code_of(code: &str) -> ErrorCode {
    match code {
        "auth" => ErrorCode::Auth,
        "forbidden" => ErrorCode::Forbidden,
        "not-found" => ErrorCode::NotFound,
        "conflict" => ErrorCode::Conflict,
        "network" => ErrorCode::Network,
        _ => ErrorCode::Http,
    }
}

pub(crate) fn drain_storage_warnings(state: &mut crate::session::SessionState) {
    let client = state.client.clone();
    for w in client.store.borrow().take_warnings() {
        state.warn("storage", format!("{}: {}", w.kind, w.message));
    }
}

/// Ends the active run with `error` (used for states the machine cannot express).
pub fn fail_run(rc: &SessionRc, error: SdkError) {
    let mut state = rc.borrow_mut();
    if let Some(run) = state.run.as_mut() {
        run.open.close();
        if let Some((_, reject)) = run.started.take() {
            let _ = reject.call1(&JsValue::UNDEFINED, &error.clone().into());
        }
    }
    state.last_error = Some(error);
    state.dirty = true;
}

/// What a request task needs, read once under a short borrow: the API, the session id, the
/// run's turn id, the header provider and the credentials mode.
type RequestContext = (
    crate::api::Api,
    String,
    Option<String>,
    Option<js_sys::Function>,
    String,
);

fn request_context(weak: &SessionWeak) -> Option<RequestContext> {
    let rc = weak.upgrade()?;
    let state = rc.borrow();
    let o = &state.client.options;
    let tid = state.run.as_ref().and_then(|r| r.turn_id.clone());
    Some((
        o.api.clone(),
        state.id.clone(),
        tid,
        o.headers.clone(),
        o.credentials.clone(),
    ))
}

/// A streaming request (create turn, or subscribe over fetch): status → machine, body chunks →
/// parser → reducer → machine, end → `Eof`.
async fn stream_request(
    weak: SessionWeak,
    ticket: Ticket,
    abort: AbortController,
    method: &'static str,
    url: String,
    body: Option<String>,
    after: Option<u64>,
) {
    let Some((_, _, _, provider, credentials)) = request_context(&weak) else {
        return;
    };
    let mut headers = match headers::resolve(provider.as_ref()).await {
        Ok(h) => h,
        Err(e) => {
            record_error(&weak, e);
            feed(
                &weak,
                ticket.run_id,
                Some(ticket.request_id),
                Input::ResponseHeaders {
                    status: 401,
                    retry_after_ms: None,
                },
            );
            return;
        }
    };
    headers.push(("accept".into(), "text/event-stream".into()));
    if let Some(after) = after {
        // The cursor goes in the query/body *and* in Last-Event-ID (PROTOCOL §8.1).
        headers.push(("last-event-id".into(), after.to_string()));
    }
    let request = HttpRequest {
        method,
        url: &url,
        headers: &headers,
        json_body: body.as_deref(),
        credentials: &credentials,
    };
    let mut response = match fetch::send(&request, &abort).await {
        Ok(r) => r,
        Err(FetchError::Aborted) => return,
        Err(FetchError::Network(m)) | Err(FetchError::InvalidRequest(m)) => {
            record_error(&weak, SdkError::new(ErrorCode::Network, m));
            feed(
                &weak,
                ticket.run_id,
                Some(ticket.request_id),
                Input::NetworkError,
            );
            return;
        }
    };
    let status = response.status();
    let retry_after_ms = response.retry_after_ms();
    if !(200..300).contains(&status) {
        let text = response.text().await.unwrap_or_default();
        record_error(&weak, SdkError::http(status, &text));
        feed(
            &weak,
            ticket.run_id,
            Some(ticket.request_id),
            Input::ResponseHeaders {
                status,
                retry_after_ms,
            },
        );
        return;
    }
    feed(
        &weak,
        ticket.run_id,
        Some(ticket.request_id),
        Input::ResponseHeaders {
            status,
            retry_after_ms,
        },
    );
    loop {
        match response.next_chunk().await {
            Ok(Some(chunk)) => {
                if !ingest::bytes(&weak, ticket.run_id, ticket.request_id, &chunk) {
                    return;
                }
            }
            Ok(None) => {
                ingest::end_of_stream(&weak, ticket.run_id, ticket.request_id);
                return;
            }
            Err(FetchError::Aborted) => return,
            Err(_) => {
                ingest::end_of_stream_error(&weak, ticket.run_id, ticket.request_id);
                return;
            }
        }
    }
}

fn record_error(weak: &SessionWeak, error: SdkError) {
    if let Some(rc) = weak.upgrade() {
        rc.borrow_mut().last_error = Some(error);
    }
}

fn open_event_source(rc: &SessionRc, url: String) {
    let (ticket, with_credentials) = {
        let mut state = rc.borrow_mut();
        let with_credentials = state.client.options.credentials == "include";
        let Some(run) = state.run.as_mut() else {
            return;
        };
        run.open.close();
        run.request_id += 1;
        (
            Ticket {
                run_id: run.run_id,
                request_id: run.request_id,
            },
            with_credentials,
        )
    };
    let weak = Rc::downgrade(rc);
    let sink_weak = weak.clone();
    let sink = move |event: SourceEvent| match event {
        SourceEvent::Open => feed(
            &sink_weak,
            ticket.run_id,
            Some(ticket.request_id),
            Input::ResponseHeaders {
                status: 200,
                retry_after_ms: None,
            },
        ),
        SourceEvent::Message {
            data,
            last_event_id,
        } => {
            ingest::frame(
                &sink_weak,
                ticket.run_id,
                ticket.request_id,
                &data,
                &last_event_id,
            );
        }
        // An EventSource cannot tell EOF from failure; the machine checks the turn either way.
        SourceEvent::Error => feed(
            &sink_weak,
            ticket.run_id,
            Some(ticket.request_id),
            Input::NetworkError,
        ),
    };
    match Source::open(&url, with_credentials, sink) {
        Ok(source) => {
            let mut state = rc.borrow_mut();
            if let Some(run) = state.run.as_mut() {
                run.open.source = Some(source);
            }
        }
        Err(message) => {
            record_error(&weak, SdkError::new(ErrorCode::Network, message));
            // Deliver asynchronously: we are inside `pump`.
            spawn_local(async move {
                feed(
                    &weak,
                    ticket.run_id,
                    Some(ticket.request_id),
                    Input::NetworkError,
                )
            });
        }
    }
}

/// A JSON GET: `Ok(body bytes)` for 2xx, `Err((status, error))` otherwise (`status` None =
/// network). The body is read with `arrayBuffer()` and decoded with [`parse_json`].
pub async fn get_json(
    weak: &SessionWeak,
    url: &str,
    abort: &AbortController,
) -> Result<Vec<u8>, (Option<u16>, Option<u64>, SdkError)> {
    let Some((_, _, _, provider, credentials)) = request_context(weak) else {
        return Err((
            None,
            None,
            SdkError::new(ErrorCode::Aborted, "session dropped"),
        ));
    };
    let headers = headers::resolve(provider.as_ref())
        .await
        .map_err(|e| (Some(401), None, e))?;
    let request = HttpRequest {
        method: "GET",
        url,
        headers: &headers,
        json_body: None,
        credentials: &credentials,
    };
    let response = match fetch::send(&request, abort).await {
        Ok(r) => r,
        Err(FetchError::Aborted) => {
            return Err((None, None, SdkError::new(ErrorCode::Aborted, "aborted")))
        }
        Err(FetchError::Network(m)) | Err(FetchError::InvalidRequest(m)) => {
            return Err((None, None, SdkError::new(ErrorCode::Network, m)))
        }
    };
    let status = response.status();
    let retry = response.retry_after_ms();
    let body = response.bytes().await.map_err(|e| match e {
        FetchError::Aborted => (None, None, SdkError::new(ErrorCode::Aborted, "aborted")),
        _ => (
            None,
            None,
            SdkError::new(ErrorCode::Network, "body stream failed"),
        ),
    })?;
    if (200..300).contains(&status) {
        Ok(body)
    } else {
        let text = String::from_utf8_lossy(&body);
        Err((Some(status), retry, SdkError::http(status, &text)))
    }
}

/// Decodes a JSON body: UTF-8 checked once, then read by serde_json from the text (the same
/// decoder instantiation as the SSE path's, so the wasm carries each type's decoder once).
pub fn parse_json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, serde_json::Error> {
    let text = std::str::from_utf8(body)
        .map_err(|_| <serde_json::Error as serde::de::Error>::custom("body is not UTF-8"))?;
    serde_json::from_str(text)
}

fn is_aborted(e: &SdkError) -> bool {
    e.code == ErrorCode::Aborted
}

async fn get_turn(weak: SessionWeak, ticket: Ticket, abort: AbortController) {
    let Some((api, sid, Some(tid), _, _)) = request_context(&weak) else {
        return;
    };
    let input = match get_json(&weak, &api.turn(&sid, &tid), &abort).await {
        Ok(body) => match parse_json::<wire::Single<wire::Turn>>(&body) {
            Ok(single) => {
                let terminal = apply_turn(&weak, &single.data);
                Input::TurnFetched { terminal }
            }
            Err(e) => {
                record_error(
                    &weak,
                    SdkError::new(ErrorCode::InvalidResponse, format!("malformed turn: {e}")),
                );
                Input::TurnFetchFailed {
                    status: Some(502),
                    retry_after_ms: None,
                }
            }
        },
        Err((_, _, e)) if is_aborted(&e) => return,
        Err((status, retry_after_ms, e)) => {
            record_error(&weak, e);
            Input::TurnFetchFailed {
                status,
                retry_after_ms,
            }
        }
    };
    feed(&weak, ticket.run_id, Some(ticket.request_id), input);
}

/// Applies a fetched turn to the view; returns whether its state is terminal.
fn apply_turn(weak: &SessionWeak, turn: &wire::Turn) -> bool {
    let Some(rc) = weak.upgrade() else {
        return false;
    };
    let mut state = rc.borrow_mut();
    let changes = state.view.apply_turn(turn);
    state.record(changes);
    turn.state.is_terminal()
}

/// Loads every page of `url_for(page_token)` (bounded), handing each body to `on_page`, which
/// returns the next page token.
async fn pages(
    weak: &SessionWeak,
    abort: &AbortController,
    url_for: impl Fn(Option<&str>) -> String,
    mut on_page: impl FnMut(&[u8]) -> Result<Option<String>, SdkError>,
) -> Result<(), (Option<u16>, Option<u64>, SdkError)> {
    let mut token: Option<String> = None;
    for _ in 0..1000 {
        let body = get_json(weak, &url_for(token.as_deref()), abort).await?;
        token = on_page(&body).map_err(|e| (Some(502), None, e))?;
        if token.is_none() {
            return Ok(());
        }
    }
    Ok(())
}

async fn rebuild(weak: SessionWeak, ticket: Ticket, abort: AbortController) {
    let Some((api, sid, Some(tid), _, _)) = request_context(&weak) else {
        return;
    };
    match rebuild_turn(&weak, &abort, &api, &sid, &tid).await {
        Ok(terminal) => feed(
            &weak,
            ticket.run_id,
            Some(ticket.request_id),
            Input::RebuildDone { terminal },
        ),
        Err((_, _, e)) if is_aborted(&e) => {}
        Err((status, retry_after_ms, e)) => {
            record_error(&weak, e);
            feed(
                &weak,
                ticket.run_id,
                Some(ticket.request_id),
                Input::RebuildFailed {
                    status,
                    retry_after_ms,
                },
            );
        }
    }
}

/// Rebuilds one turn from its listings; returns whether it is terminal. The turn's state is read
/// *before* its events: a turn already finished then has all its events persisted, so the view
/// is complete. (Read after, a turn finishing between the two requests would be settled from a
/// listing taken while it still ran.)
async fn rebuild_turn(
    weak: &SessionWeak,
    abort: &AbortController,
    api: &crate::api::Api,
    sid: &str,
    tid: &str,
) -> Result<bool, (Option<u16>, Option<u64>, SdkError)> {
    let body = get_json(weak, &api.turn(sid, tid), abort).await?;
    let turn = parse_json::<wire::Single<wire::Turn>>(&body)
        .map_err(|e| {
            (
                Some(502),
                None,
                SdkError::new(ErrorCode::InvalidResponse, format!("malformed turn: {e}")),
            )
        })?
        .data;
    let page_weak = weak.clone();
    let page_tid = tid.to_string();
    pages(
        weak,
        abort,
        |t| api.turn_events(sid, tid, t),
        move |body| {
            let page: wire::Listing<wire::Event> = parse_json(body).map_err(|e| {
                SdkError::new(
                    ErrorCode::InvalidResponse,
                    format!("malformed turn events: {e}"),
                )
            })?;
            if let Some(rc) = page_weak.upgrade() {
                let mut state = rc.borrow_mut();
                match state.view.apply_turn_events(&page_tid, page.data) {
                    Ok(changes) => state.record(changes),
                    Err(e) => state.warn("protocol", e.to_string()),
                }
            }
            Ok(page.pagination.next_page_token)
        },
    )
    .await?;
    let terminal_before = apply_turn(weak, &turn);
    // The listing may already hold the turn's `turn.done` (it finished after the state read).
    let listed_terminal = weak.upgrade().is_some_and(|rc| {
        rc.borrow()
            .view
            .turn(tid)
            .is_some_and(|t| t.status != forgestream_core::reduce::TurnStatus::Running)
    });
    Ok(terminal_before || listed_terminal)
}

/// Effect recovery (PROTOCOL §8.3): the create POST failed mid-flight; is the session's newest
/// turn ours? Ours = a turn we did not know before the POST whose `previous_turn_id` is the turn
/// that was newest before it.
async fn lookup_newest_turn(weak: SessionWeak, ticket: Ticket, abort: AbortController) {
    let Some((api, sid, _, _, _)) = request_context(&weak) else {
        return;
    };
    let before = weak.upgrade().and_then(|rc| {
        rc.borrow()
            .run
            .as_ref()
            .and_then(|r| r.previous_turn_id.clone())
    });
    let input = match get_json(&weak, &api.turns(&sid, "?limit=1&order=desc"), &abort).await {
        Ok(body) => match parse_json::<wire::Listing<wire::Turn>>(&body) {
            Ok(page) => {
                let newest = page.data.into_iter().next();
                let ours = newest
                    .filter(|t| Some(&t.id) != before.as_ref() && t.previous_turn_id == before);
                match ours {
                    Some(turn) => {
                        if let Some(rc) = weak.upgrade() {
                            let mut state = rc.borrow_mut();
                            if let Some(run) = state.run.as_mut() {
                                run.turn_id = Some(turn.id.clone());
                            }
                        }
                        ingest::turn_started(&weak);
                        apply_turn(&weak, &turn);
                        Input::TurnLookup { found_ours: true }
                    }
                    None => Input::TurnLookup { found_ours: false },
                }
            }
            Err(e) => {
                record_error(
                    &weak,
                    SdkError::new(
                        ErrorCode::InvalidResponse,
                        format!("malformed turn list: {e}"),
                    ),
                );
                Input::TurnLookupFailed {
                    status: Some(502),
                    retry_after_ms: None,
                }
            }
        },
        Err((_, _, e)) if is_aborted(&e) => return,
        Err((status, retry_after_ms, e)) => {
            record_error(&weak, e);
            Input::TurnLookupFailed {
                status,
                retry_after_ms,
            }
        }
    };
    feed(&weak, ticket.run_id, Some(ticket.request_id), input);
}

/// Keeps at most one `setTimeout` armed, never later than the machine's next deadline.
///
/// The idle watchdog's deadline moves later with every event, so re-arming on each move cost a
/// `clearTimeout` + `setTimeout` per network read. A timer armed for an earlier moment is kept
/// instead: its tick comes early, which the machine treats as a no-op (`on_tick` compares `now`
/// with each deadline), and the pump after that tick arms the real deadline.
fn arm_timer(rc: &SessionRc) {
    let mut state = rc.borrow_mut();
    let deadline = state.run.as_ref().and_then(|r| r.machine.poll_timeout());
    let armed = state.timer.as_ref().map(|(d, _)| *d);
    if matches!((armed, deadline), (Some(a), Some(d)) if a <= d) {
        return;
    }
    if let Some((_, handle)) = state.timer.take() {
        js::clear_timeout(&handle);
    }
    let Some(deadline) = deadline else { return };
    if state.timer_callback.is_none() {
        let weak = Rc::downgrade(rc);
        state.timer_callback = Some(Closure::<dyn FnMut()>::new(move || {
            let Some(rc) = weak.upgrade() else { return };
            let run_id = {
                let mut state = rc.borrow_mut();
                state.timer = None;
                state.run.as_ref().map(|r| r.run_id)
            };
            if let Some(run_id) = run_id {
                feed(&Rc::downgrade(&rc), run_id, None, Input::Tick);
            }
        }));
    }
    let delay = deadline.saturating_sub(js::now_ms());
    if let Some(callback) = state.timer_callback.as_ref() {
        let handle = js::set_timeout(callback.as_ref().unchecked_ref(), delay as f64);
        state.timer = Some((deadline, handle));
    }
}
