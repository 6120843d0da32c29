//! The API handlers (PROTOCOL.md §4), shared by both flavors; `Extension<Flavor>` selects the
//! differences (ids, subscribe method and cursor precedence, listing rules).

use super::params::{json_body, last_event_id, next_token, page, slice};
use crate::continuation;
use crate::control::Crash;
use crate::error::ApiError;
use crate::fault::{FaultSpec, RequestKind};
use crate::runtime::{Flavor, Runtime, TurnOptions};
use crate::sse::{sse_response, StreamPlan};
use crate::store::{SessionRow, TurnRow};
use crate::wire;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;

type Params = Query<HashMap<String, String>>;
type ApiResult = Result<Response, ApiError>;

/// The fault spec of a request: header, then `?fault=`, then the session's, then `--fault`.
fn fault_for(
    rt: &Runtime,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
    session: Option<&SessionRow>,
) -> Result<Option<FaultSpec>, ApiError> {
    let text = headers
        .get("x-forgestream-fault")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query.get("fault").cloned())
        .or_else(|| session.and_then(|s| s.fault.clone()))
        .or_else(|| rt.config.fault.clone());
    text.filter(|t| !t.trim().is_empty())
        .map(|t| FaultSpec::parse(&t))
        .transpose()
}

/// Answers with the injected status when the spec says so for this request.
fn injected_status(
    rt: &Runtime,
    fault: Option<&FaultSpec>,
    kind: RequestKind,
    scope: &str,
) -> Result<(), ApiError> {
    match fault {
        Some(spec)
            if spec.status.is_some() && spec.targets(kind) && rt.ledger.admit(spec, scope) =>
        {
            Err(spec
                .status_error()
                .unwrap_or_else(|| ApiError::internal("Injected fault")))
        }
        _ => Ok(()),
    }
}

/// The stream faults that apply to this connection, if admitted.
fn stream_fault(
    rt: &Runtime,
    fault: Option<FaultSpec>,
    kind: RequestKind,
    turn_id: &str,
) -> Option<FaultSpec> {
    let spec = fault?;
    let shapes_stream = spec.drop_after_events.is_some()
        || spec.drop_at_byte.is_some()
        || spec.split.is_some()
        || (spec.ignore_cursor && kind == RequestKind::Subscribe)
        || spec.heartbeat_ms.is_some()
        || spec.drip_ms.is_some()
        || spec.end_without_done
        || spec.subscribe_timeout_ms.is_some()
        || spec.stall_after_events.is_some()
        || spec.idle_cut_ms.is_some();
    (shapes_stream
        && spec.status.is_none()
        && spec.targets(kind)
        && rt.ledger.admit(&spec, turn_id))
    .then_some(spec)
}

/// Multi-replica mode for this request: the fault's `replica-poll-ms`, else
/// `--replica-poll-ms`; `None` = one replica.
fn replica_poll(rt: &Runtime, fault: Option<&FaultSpec>) -> Option<std::time::Duration> {
    fault
        .and_then(|f| f.replica_poll_ms)
        .map(std::time::Duration::from_millis)
        .or(rt.config.replica_poll)
}

fn session_or_404(rt: &Runtime, flavor: Flavor, sid: &str) -> Result<SessionRow, ApiError> {
    rt.store
        .session(sid)?
        .filter(|s| s.flavor == flavor.as_str())
        .ok_or_else(|| ApiError::not_found(format!("Session not found: {sid}")))
}

fn turn_or_404(rt: &Runtime, sid: &str, tid: &str) -> Result<TurnRow, ApiError> {
    rt.store
        .turn(sid, tid)?
        .ok_or_else(|| ApiError::not_found(format!("Turn not found: {tid}")))
}

fn other_request_fault(
    rt: &Runtime,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
    session: Option<&SessionRow>,
) -> Result<(), ApiError> {
    let fault = fault_for(rt, headers, query, session)?;
    let scope = session
        .map(|s| format!("{}/other", s.id))
        .unwrap_or_default();
    injected_status(rt, fault.as_ref(), RequestKind::Other, &scope)
}

/// Unknown API path: JSON 404.
pub async fn not_found() -> ApiError {
    ApiError::not_found("Not found")
}

/// `POST /sessions`: 201 `{data: Session}`. A fault spec on this request (header or
/// `?fault=`) is stored on the session and applies to all its later requests.
pub async fn create_session(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let fault = fault_for(&rt, &headers, &query, None)?;
    injected_status(&rt, fault.as_ref(), RequestKind::CreateSession, "sessions")?;
    let body = json_body(body)?;
    let agent = match flavor {
        Flavor::Trueforge => body.get("agent").cloned().unwrap_or(Value::Null),
        Flavor::Gateway => body.get("agent_name").cloned().unwrap_or(Value::Null),
    };
    let per_session = headers
        .get("x-forgestream-fault")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query.get("fault").cloned());
    let session = rt.create_session(flavor, &agent, per_session)?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"data": rt.session_json(flavor, &session)})),
    )
        .into_response())
}

/// `GET /sessions/{sid}`.
pub async fn get_session(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    Path(sid): Path<String>,
) -> ApiResult {
    let session = session_or_404(&rt, flavor, &sid)?;
    other_request_fault(&rt, &headers, &query, Some(&session))?;
    Ok(Json(json!({"data": rt.session_json(flavor, &session)})).into_response())
}

/// `GET /sessions`: newest first by default; `limit` ≤ 100.
pub async fn list_sessions(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
) -> ApiResult {
    other_request_fault(&rt, &headers, &query, None)?;
    let page = page(&query, 25, 100, true)?;
    // One extra row tells whether another page exists.
    let mut rows = rt.store.sessions(
        flavor.as_str(),
        page.descending,
        page.offset,
        page.limit + 1,
    )?;
    let more = rows.len() > page.limit;
    rows.truncate(page.limit);
    let data = rows.iter().map(|s| rt.session_json(flavor, s)).collect();
    let token = more.then(|| format!("o{}", page.offset + page.limit));
    Ok(Json(wire::listing(data, page.limit, token)).into_response())
}

/// `POST /sessions/{sid}/turns`: 200 SSE from sequence 1 (or `{data: Turn}` with
/// `stream:false`). Errors (400/404/413/422, injected statuses) come as JSON before any byte.
pub async fn create_turn(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    Path(sid): Path<String>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let session = session_or_404(&rt, flavor, &sid)?;
    let fault = fault_for(&rt, &headers, &query, Some(&session))?;
    injected_status(
        &rt,
        fault.as_ref(),
        RequestKind::CreateTurn,
        &format!("{sid}/create"),
    )?;
    let body = json_body(body)?;
    let stream = match body.get("stream") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(ApiError::bad_request(
                "Invalid request: `stream` must be a boolean",
            ))
        }
    };
    let previous = match body.get("previous_turn_id") {
        None | Some(Value::Null) => rt.store.last_turn(&sid)?,
        Some(Value::String(s)) if s == "auto" => rt.store.last_turn(&sid)?,
        Some(Value::String(s)) if s == "none" => None,
        Some(Value::String(id)) => Some(turn_or_404(&rt, &sid, id)?),
        Some(_) => {
            return Err(ApiError::bad_request(
                "Invalid request: `previous_turn_id` must be a string",
            ))
        }
    };
    let input = body.get("input").filter(|v| !v.is_null()).cloned();
    let resolved = continuation::resolve(input.as_ref(), previous.as_ref())?;
    let crash = fault
        .as_ref()
        .filter(|s| s.crash_after_events.is_some() && s.targets(RequestKind::CreateTurn))
        .filter(|s| rt.ledger.admit(s, &format!("{sid}/crash")))
        .and_then(|s| {
            Some(Crash {
                after_events: s.crash_after_events?,
                keep_buffer: replica_poll(&rt, Some(s)).is_some(),
            })
        });
    let options = TurnOptions {
        origin: Some(rt.public_origin()),
        crash,
    };
    let (turn, live) = rt.create_turn(
        flavor,
        &session,
        previous.as_ref(),
        input,
        resolved,
        options,
    )?;
    if !stream {
        return Ok(Json(json!({"data": rt.turn_json(flavor, &turn)})).into_response());
    }
    let plan = StreamPlan {
        after: 0,
        fault: stream_fault(&rt, fault, RequestKind::CreateTurn, &turn.id),
        subscribe_timeout: rt.config.subscribe_timeout,
        served_by_owner: true,
        poll: None,
        open: Some(rt.streams.open(&sid)),
    };
    Ok(sse_response(live, plan))
}

/// `GET /sessions/{sid}/turns/{tid}`.
pub async fn get_turn(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    Path((sid, tid)): Path<(String, String)>,
) -> ApiResult {
    let session = session_or_404(&rt, flavor, &sid)?;
    other_request_fault(&rt, &headers, &query, Some(&session))?;
    let turn = turn_or_404(&rt, &sid, &tid)?;
    Ok(Json(json!({"data": rt.turn_json(flavor, &turn)})).into_response())
}

/// `GET /sessions/{sid}/turns`: oldest first, `limit` ≤ 25.
pub async fn list_turns(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    Path(sid): Path<String>,
) -> ApiResult {
    let session = session_or_404(&rt, flavor, &sid)?;
    other_request_fault(&rt, &headers, &query, Some(&session))?;
    let page = page(&query, 25, 25, false)?;
    let total = rt.store.turn_count(&sid)? as usize;
    let mut turns = rt.store.turns(&sid, 0, total)?;
    if page.descending {
        turns.reverse();
    }
    let data = slice(&turns, &page)
        .iter()
        .map(|t| rt.turn_json(flavor, t))
        .collect();
    Ok(Json(wire::listing(data, page.limit, next_token(&page, total))).into_response())
}

/// Subscribe (`GET` with `?after_sequence_number=`; gateway `POST` with a JSON body).
/// Cursor precedence: TrueForge `Last-Event-ID` over the query; gateway body over
/// `Last-Event-ID`. 404 unknown turn, 400 bad cursor, 412 stream gone or expiring within the
/// threshold.
pub async fn subscribe(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    Path((sid, tid)): Path<(String, String)>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let session = session_or_404(&rt, flavor, &sid)?;
    turn_or_404(&rt, &sid, &tid)?;
    let header_cursor = last_event_id(&headers)?;
    let after = match flavor {
        Flavor::Trueforge => {
            let query_cursor = match query.get("after_sequence_number") {
                None => None,
                Some(v) => Some(v.parse::<u64>().map_err(|_| {
                    ApiError::bad_request(
                        "Invalid after_sequence_number: must be a non-negative integer",
                    )
                })?),
            };
            header_cursor.or(query_cursor).unwrap_or(0)
        }
        Flavor::Gateway => {
            let body = json_body(body)?;
            let body_cursor = match body.get("after_sequence_number") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_u64().ok_or_else(|| {
                    ApiError::bad_request(
                        "Invalid after_sequence_number: must be a non-negative integer",
                    )
                })?),
            };
            body_cursor.or(header_cursor).unwrap_or(0)
        }
    };
    let fault = fault_for(&rt, &headers, &query, Some(&session))?;
    injected_status(&rt, fault.as_ref(), RequestKind::Subscribe, &tid)?;
    if let Some(spec) = fault
        .as_ref()
        .filter(|s| s.force_412 && s.targets(RequestKind::Subscribe))
    {
        if rt.ledger.admit(spec, &format!("{tid}/412")) {
            return Err(ApiError::stream_gone(&sid, &tid));
        }
    }
    let live = rt
        .live
        .get(&tid)
        .ok_or_else(|| ApiError::stream_gone(&sid, &tid))?;
    let remaining = live
        .expires_at()
        .saturating_duration_since(tokio::time::Instant::now());
    if remaining < rt.config.subscribe_threshold {
        return Err(ApiError::stream_gone(&sid, &tid));
    }
    let poll = replica_poll(&rt, fault.as_ref());
    let plan = StreamPlan {
        after,
        fault: stream_fault(&rt, fault, RequestKind::Subscribe, &tid),
        subscribe_timeout: rt.config.subscribe_timeout,
        served_by_owner: poll.is_none(),
        poll,
        open: Some(rt.streams.open(&sid)),
    };
    Ok(sse_response(live, plan))
}

/// `GET …/turns/{tid}/events`: merged events, oldest first by default, `limit` ≤ 100.
/// Gateway: content events only, and 409 while the turn runs.
pub async fn turn_events(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    Path((sid, tid)): Path<(String, String)>,
) -> ApiResult {
    let session = session_or_404(&rt, flavor, &sid)?;
    other_request_fault(&rt, &headers, &query, Some(&session))?;
    let turn = turn_or_404(&rt, &sid, &tid)?;
    let page = page(&query, 100, 100, false)?;
    if flavor == Flavor::Gateway && turn.status() == "running" {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("Turn is still running: {tid}"),
        ));
    }
    let mut events = rt
        .store
        .turn_events(&tid, page.descending, 0, usize::MAX >> 1)?;
    if flavor == Flavor::Gateway {
        events.retain(|e| {
            !matches!(
                e.get("type").and_then(Value::as_str),
                Some("turn.created" | "turn.done")
            )
        });
    }
    let data = slice(&events, &page);
    Ok(Json(wire::listing(
        data,
        page.limit,
        next_token(&page, events.len()),
    ))
    .into_response())
}

/// `GET /sessions/{sid}/events`: the active branch (from `last_turn_id` or the last turn back
/// through `previous_turn_id`), newest first, items `{turn_id, event}`, `limit` ≤ 100.
/// Gateway: a running tip is left out (the listing starts from its parent).
pub async fn session_events(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    Path(sid): Path<String>,
) -> ApiResult {
    let session = session_or_404(&rt, flavor, &sid)?;
    other_request_fault(&rt, &headers, &query, Some(&session))?;
    let page = page(&query, 100, 100, true)?;
    let mut tip = match query.get("last_turn_id") {
        Some(id) => Some(turn_or_404(&rt, &sid, id)?),
        None => rt.store.last_turn(&sid)?,
    };
    if flavor == Flavor::Gateway {
        if let Some(t) = tip.as_ref().filter(|t| t.status() == "running") {
            tip = match &t.previous_turn_id {
                Some(parent) => rt.store.turn(&sid, parent)?,
                None => None,
            };
        }
    }
    let mut items = Vec::new();
    let mut guard = 0;
    while let Some(turn) = tip {
        for event in rt.store.turn_events(&turn.id, true, 0, usize::MAX >> 1)? {
            items.push(json!({"turn_id": turn.id, "event": event}));
        }
        guard += 1;
        tip = match (&turn.previous_turn_id, guard < 100_000) {
            (Some(parent), true) => rt.store.turn(&sid, parent)?,
            _ => None,
        };
    }
    if !page.descending {
        items.reverse();
    }
    let data = slice(&items, &page);
    Ok(Json(wire::listing(
        data,
        page.limit,
        next_token(&page, items.len()),
    ))
    .into_response())
}

/// `POST /sessions/{sid}/cancel`: cancels the running last turn; idempotent, `200 {}`.
/// In multi-replica mode it first waits `replica_cancel_delay` (the relay to the owner).
pub async fn cancel(
    State(rt): State<Arc<Runtime>>,
    Extension(flavor): Extension<Flavor>,
    headers: HeaderMap,
    Query(query): Params,
    Path(sid): Path<String>,
) -> ApiResult {
    let session = session_or_404(&rt, flavor, &sid)?;
    other_request_fault(&rt, &headers, &query, Some(&session))?;
    let fault = fault_for(&rt, &headers, &query, Some(&session))?;
    if replica_poll(&rt, fault.as_ref()).is_some() {
        // Another replica took the request: the cancel reaches the owner over pub/sub.
        tokio::time::sleep(rt.config.replica_cancel_delay).await;
    }
    if let Some(last) = rt.store.last_turn(&sid)? {
        if last.status() == "running" {
            rt.cancel_turn(&last.id, "client-cancelled")?;
        }
    }
    Ok(Json(json!({})).into_response())
}
