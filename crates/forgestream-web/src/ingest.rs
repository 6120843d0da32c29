//! The hot path: one network chunk → SSE parser → reducer → recovery machine, in one borrow, with
//! one listener notification per chunk at most (the TS layer coalesces further, per frame).
use forgestream_core::resume::Input;
use forgestream_core::sse::SseItemRef;
use forgestream_core::wire;
use wasm_bindgen::JsValue;

use crate::exec;
use crate::session::{SessionState, SessionWeak};

/// Feeds one chunk of request `request_id` of run `run_id`. Returns false when that request is no
/// longer the open one (the caller stops reading).
///
/// Frames go from the parser to the reducer borrowed (`SseParser::feed_with`): a frame inside
/// the chunk is never copied, and a text delta is appended to its message straight from the
/// chunk's bytes.
pub fn bytes(weak: &SessionWeak, run_id: u64, request_id: u64, chunk: &[u8]) -> bool {
    let Some(rc) = weak.upgrade() else {
        return false;
    };
    {
        let mut state = rc.borrow_mut();
        if !is_current(&state, run_id, request_id) {
            return false;
        }
        let now = crate::js::now_ms();
        // The parser leaves the run for the call so the callback can borrow the whole state;
        // nothing in `apply_item` replaces the run (commands run later, in `exec::pump`).
        let Some(mut parser) = state
            .run
            .as_mut()
            .map(|run| std::mem::take(&mut run.parser))
        else {
            return true;
        };
        let state = &mut *state;
        let parsed = parser.feed_with(chunk, |item| apply_item(state, item, now));
        if let Err(e) = parsed {
            // Items before and after the oversize frame were applied; the parser skipped it.
            state.warn("protocol", e.to_string());
        }
        if let Some(run) = state.run.as_mut() {
            run.parser = parser;
        }
    }
    exec::pump(&rc);
    true
}

/// One `EventSource` message (the browser already parsed SSE). `last_event_id` is the browser's
/// last-event-id buffer: TrueForge sends an `id:` with every frame, so it is this frame's id.
pub fn frame(weak: &SessionWeak, run_id: u64, request_id: u64, data: &str, last_event_id: &str) {
    let Some(rc) = weak.upgrade() else { return };
    {
        let mut state = rc.borrow_mut();
        if !is_current(&state, run_id, request_id) {
            return;
        }
        let now = crate::js::now_ms();
        apply_frame(
            &mut state,
            last_event_id.trim().parse::<u64>().ok(),
            data,
            now,
        );
    }
    exec::pump(&rc);
}

/// The body ended: discard an unterminated frame (WHATWG), then tell the machine.
pub fn end_of_stream(weak: &SessionWeak, run_id: u64, request_id: u64) {
    finish(weak, run_id, request_id, Input::Eof);
}

/// The body stream errored mid-way.
pub fn end_of_stream_error(weak: &SessionWeak, run_id: u64, request_id: u64) {
    finish(weak, run_id, request_id, Input::NetworkError);
}

fn finish(weak: &SessionWeak, run_id: u64, request_id: u64, input: Input) {
    if let Some(rc) = weak.upgrade() {
        let mut state = rc.borrow_mut();
        if !is_current(&state, run_id, request_id) {
            return;
        }
        if let Some(run) = state.run.as_mut() {
            run.parser.finish();
        }
    }
    exec::feed(weak, run_id, Some(request_id), input);
}

fn is_current(state: &SessionState, run_id: u64, request_id: u64) -> bool {
    state
        .run
        .as_ref()
        .is_some_and(|r| r.run_id == run_id && r.request_id == request_id)
}

/// `now` is read once per network chunk (a `Date.now()` per frame showed up in profiles).
fn apply_item(state: &mut SessionState, item: SseItemRef<'_>, now: u64) {
    match item {
        SseItemRef::Event(event) => {
            let seq = event.id.and_then(|id| id.trim().parse::<u64>().ok());
            apply_frame(state, seq, event.data, now);
        }
        SseItemRef::Comment => {
            if let Some(run) = state.run.as_mut() {
                run.machine.handle(Input::Comment, now);
            }
        }
        SseItemRef::Retry(ms) => {
            if let Some(run) = state.run.as_mut() {
                run.machine.handle(Input::Retry(ms), now);
            }
        }
    }
}

/// Applies one frame's data to the view and reports it to the machine.
fn apply_frame(state: &mut SessionState, seq: Option<u64>, data: &str, now: u64) {
    if data.is_empty() {
        return;
    }
    // A create stream names its turn only in its first event (`turn.created`).
    // Hot path: the turn id is moved out of the run for this frame and put back below, so a
    // delta costs no string copy.
    let turn_id = match state.run.as_mut().and_then(|r| r.turn_id.take()) {
        Some(id) => id,
        None => match serde_json::from_str::<wire::Event>(data) {
            Ok(wire::Event::TurnCreated(created)) => {
                let id = created.turn_id;
                settle_started(state, &id);
                checkpoint_new_turn(state, &id);
                id
            }
            _ => {
                state.warn(
                    "protocol",
                    "a create stream must start with turn.created; frame ignored".into(),
                );
                return;
            }
        },
    };
    if state.client.options.inspect {
        log_frame(state, &turn_id, seq, data, now);
    }
    // Recorded straight into the session's pending change set (drained by `takeChanges`), so a
    // burst of deltas on one message costs no change-set allocation per frame.
    let applied = state
        .view
        .apply_live_into(&turn_id, seq, data, &mut state.changes);
    if !state.changes.is_empty() && !state.notified {
        // One notification per drain: once the listener has been told, later frames only add to
        // the change set the TS layer will take anyway (it drains once per animation frame), so
        // a stream of small reads does not call into JS per read.
        state.dirty = true;
        state.notified = true;
    }
    let turn_done = match applied {
        Ok(()) => state
            .view
            .turn(&turn_id)
            .is_some_and(|t| t.status != forgestream_core::reduce::TurnStatus::Running),
        Err(e) => {
            state.warn("protocol", e.to_string());
            false
        }
    };
    if let Some(run) = state.run.as_mut() {
        run.turn_id = Some(turn_id);
        run.machine.handle(
            Input::Event {
                sequence_number: seq,
                turn_done,
            },
            now,
        );
    }
}

/// Resolves the pending `send()` promise with the new turn id.
fn settle_started(state: &mut SessionState, turn_id: &str) {
    if let Some((resolve, _)) = state.run.as_mut().and_then(|r| r.started.take()) {
        let _ = resolve.call1(&JsValue::UNDEFINED, &JsValue::from_str(turn_id));
    }
}

/// The turn id became known by other means (effect-recovery lookup).
pub fn turn_started(weak: &SessionWeak) {
    if let Some(rc) = weak.upgrade() {
        let mut state = rc.borrow_mut();
        if let Some(id) = state.run.as_ref().and_then(|r| r.turn_id.clone()) {
            settle_started(&mut state, &id);
            checkpoint_new_turn(&mut state, &id);
        }
    }
}

/// Records the live turn `{turnId, seq: 0}` as soon as its id is known, by whichever route: a
/// reload before the first cursor checkpoint must still find the turn to follow.
fn checkpoint_new_turn(state: &mut SessionState, turn_id: &str) {
    let record = crate::storage::Checkpoint {
        v: crate::storage::SCHEMA_VERSION,
        session_id: state.id.clone(),
        turn_id: Some(turn_id.to_string()),
        seq: 0,
        saved_at: crate::js::now_ms(),
    };
    let client = state.client.clone();
    client.store.borrow_mut().save(&record);
    exec::drain_storage_warnings(state);
}

/// The envelope fields the inspector shows; everything else in the event is skipped.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "type", borrow)]
    event_type: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    thread_id: Option<std::borrow::Cow<'a, str>>,
}

fn log_frame(state: &mut SessionState, turn_id: &str, seq: Option<u64>, data: &str, now: u64) {
    let envelope = serde_json::from_str::<Envelope<'_>>(data).ok();
    let (event_type, thread_id, id) = match envelope {
        Some(e) => (
            e.event_type.map(|v| v.into_owned()),
            e.thread_id.map(|v| v.into_owned()),
            e.id.map(|v| v.into_owned()),
        ),
        None => (None, None, None),
    };
    let frame = crate::session::LoggedFrame {
        turn_id: turn_id.into(),
        sequence_number: seq,
        event_type: event_type.unwrap_or_else(|| "(malformed)".into()),
        thread_id,
        id,
        bytes: data.len(),
        at_ms: now,
    };
    if state.event_log.len() >= crate::session::EVENT_LOG_CAPACITY {
        state.event_log.pop_front();
    }
    state.event_log.push_back(frame);
    state.event_log_total += 1;
}
