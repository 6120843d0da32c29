//! Shared test support: feed SSE text / listings / decisions into a `SessionView` from the
//! fixture step format of `tests/fixtures/reduce/*.json`.
#![allow(dead_code)]

use std::path::PathBuf;

use forgestream_core::reduce::{ReducerConfig, SessionView};
use forgestream_core::respond::{self, Decision};
use forgestream_core::sse::{ParserConfig, SseItem, SseParser};
use forgestream_core::wire::{self, UserContent};
use serde_json::{json, Value};

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// The recorded TrueForge corpus (`tests/fixtures/recorded/*/`) as texts: each whole JSON body
/// and each SSE `data` line.
pub fn recorded_texts() -> Vec<String> {
    let root = fixtures_dir().join("recorded");
    let mut texts = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(dir).unwrap() {
            let path = file.unwrap().path();
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            match path.extension().and_then(|e| e.to_str()) {
                Some("json") => texts.push(text),
                Some("sse") => texts.extend(
                    text.lines()
                        .filter_map(|l| l.strip_prefix("data: "))
                        .map(String::from),
                ),
                _ => {}
            }
        }
    }
    texts
}

/// The reducer's golden corpus (`tests/fixtures/reduce/*.json`), sorted by name.
pub fn reduce_fixture_paths() -> Vec<PathBuf> {
    let dir = fixtures_dir().join("reduce");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    names
}

pub fn read_fixture_text(rel: &str) -> String {
    let path = fixtures_dir().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn read_fixture_json(rel: &str) -> Value {
    serde_json::from_str(&read_fixture_text(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// One decoded SSE frame: (sequence number, data).
pub type Frame = (Option<u64>, String);

/// Parses SSE bytes fed in chunks cut at `splits` (byte offsets) with the crate's parser.
pub fn sse_frames(bytes: &[u8], splits: &[usize]) -> Vec<Frame> {
    let mut parser = SseParser::new(ParserConfig::default());
    let mut items = Vec::new();
    let mut start = 0;
    let mut cuts: Vec<usize> = splits
        .iter()
        .copied()
        .filter(|&s| s > 0 && s < bytes.len())
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    for cut in cuts.into_iter().chain(std::iter::once(bytes.len())) {
        parser
            .feed(&bytes[start..cut], &mut items)
            .expect("sse feed");
        start = cut;
    }
    parser.finish();
    items
        .into_iter()
        .filter_map(|item| match item {
            SseItem::Event(e) => Some((e.id.as_deref().and_then(|id| id.parse().ok()), e.data)),
            _ => None,
        })
        .collect()
}

/// Applies live frames; empty `data` frames are skipped (they carry no event, FIELD C3).
/// Returns the error kinds raised.
pub fn apply_frames(view: &mut SessionView, turn_id: &str, frames: &[Frame]) -> Vec<String> {
    let mut errors = Vec::new();
    for (seq, data) in frames {
        if data.is_empty() {
            continue;
        }
        if let Err(err) = view.apply_live(turn_id, *seq, data) {
            errors.push(error_kind(&format!("{err:?}")));
        }
    }
    errors
}

fn error_kind(debug: &str) -> String {
    debug
        .split([' ', '{', '('])
        .next()
        .unwrap_or("")
        .to_string()
}

fn decision(v: &Value) -> Decision {
    if v.as_str() == Some("auth_done") {
        return Decision::AuthDone;
    }
    if let Some(id) = v.get("allow").and_then(Value::as_str) {
        return Decision::Allow {
            tool_call_id: id.into(),
        };
    }
    if let Some(id) = v.get("deny").and_then(Value::as_str) {
        let reason = v.get("reason").and_then(Value::as_str).map(String::from);
        return Decision::Deny {
            tool_call_id: id.into(),
            reason,
        };
    }
    if let Some(id) = v.get("answer").and_then(Value::as_str) {
        let content = v
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        return Decision::Answer {
            tool_call_id: id.into(),
            content,
        };
    }
    panic!("bad decision {v}")
}

/// The outcome of running a fixture's steps.
pub struct Outcome {
    pub view: SessionView,
    pub errors: Vec<String>,
    pub responses: Vec<Value>,
}

/// Runs the `steps` of a fixture.
pub fn run_steps(session_id: &str, config: ReducerConfig, steps: &[Value]) -> Outcome {
    let mut view = SessionView::new(session_id, config);
    let mut errors = Vec::new();
    let mut responses = Vec::new();
    for step in steps {
        if let Some(live) = step.get("live") {
            let turn_id = live["turn_id"].as_str().expect("turn_id");
            let text = match (live.get("sse"), live.get("file")) {
                (Some(Value::String(s)), _) => s.clone(),
                (Some(Value::Array(lines)), _) => lines
                    .iter()
                    .map(|l| l.as_str().unwrap_or(""))
                    .collect::<Vec<_>>()
                    .concat(),
                (_, Some(f)) => read_fixture_text(f.as_str().expect("file")),
                _ => panic!("live step needs sse or file"),
            };
            let splits: Vec<usize> = live
                .get("splits")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_u64)
                        .map(|n| n as usize)
                        .collect()
                })
                .unwrap_or_default();
            let mut frames = if live.get("one_byte_reads").and_then(Value::as_bool) == Some(true) {
                sse_frames(text.as_bytes(), &(1..text.len()).collect::<Vec<_>>())
            } else {
                sse_frames(text.as_bytes(), &splits)
            };
            if let Some(n) = live.get("first_frames").and_then(Value::as_u64) {
                frames.truncate(n as usize);
            }
            errors.extend(apply_frames(&mut view, turn_id, &frames));
        } else if let Some(te) = step.get("turn_events") {
            let turn_id = te["turn_id"].as_str().expect("turn_id");
            let events = match (te.get("file"), te.get("events")) {
                (Some(f), _) => read_fixture_json(f.as_str().expect("file"))["data"].clone(),
                (_, Some(e)) => e.clone(),
                _ => panic!("turn_events needs file or events"),
            };
            let events: Vec<wire::Event> = serde_json::from_value(events).expect("events");
            if let Err(err) = view.apply_turn_events(turn_id, events) {
                errors.push(error_kind(&format!("{err:?}")));
            }
        } else if let Some(se) = step.get("session_events") {
            let items = match (se.get("file"), se.get("items")) {
                (Some(f), _) => read_fixture_json(f.as_str().expect("file"))["data"].clone(),
                (_, Some(i)) => i.clone(),
                _ => panic!("session_events needs file or items"),
            };
            let items: Vec<wire::SessionEventItem> = serde_json::from_value(items).expect("items");
            if let Err(err) = view.apply_session_events(items) {
                errors.push(error_kind(&format!("{err:?}")));
            }
        } else if let Some(t) = step.get("turn") {
            let turn = match t.get("file") {
                Some(f) => read_fixture_json(f.as_str().expect("file"))["data"].clone(),
                None => t.clone(),
            };
            let turn: wire::Turn = serde_json::from_value(turn).expect("turn");
            view.apply_turn(&turn);
        } else if let Some(r) = step.get("respond") {
            let decisions: Vec<Decision> = r
                .as_array()
                .expect("decisions")
                .iter()
                .map(decision)
                .collect();
            responses.push(match respond::continuation(&view, &decisions) {
                Ok(input) => json!({ "input": input }),
                Err(err) => json!({ "error": error_kind(&format!("{err:?}")) }),
            });
        } else if let Some(m) = step.get("user_message") {
            let text = m.as_str().unwrap_or("").to_string();
            responses.push(
                match respond::user_message(&view, UserContent::Text(text)) {
                    Ok(input) => json!({ "input": input }),
                    Err(err) => json!({ "error": error_kind(&format!("{err:?}")) }),
                },
            );
        } else {
            panic!("unknown step {step}");
        }
    }
    Outcome {
        view,
        errors,
        responses,
    }
}

/// `actual` contains `expected`: objects by key (recursively), arrays element-wise with equal
/// length, scalars equal. Returns the first mismatch path.
pub fn subset_mismatch(expected: &Value, actual: &Value, path: &str) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e.iter().find_map(|(k, ev)| match a.get(k) {
            Some(av) => subset_mismatch(ev, av, &format!("{path}.{k}")),
            None => Some(format!("{path}.{k}: missing")),
        }),
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Some(format!(
                    "{path}: expected {} elements, got {}: {actual}",
                    e.len(),
                    a.len()
                ));
            }
            e.iter()
                .zip(a)
                .enumerate()
                .find_map(|(i, (ev, av))| subset_mismatch(ev, av, &format!("{path}[{i}]")))
        }
        (e, a) => (e != a).then(|| format!("{path}: expected {e}, got {a}")),
    }
}

/// `view.summary()`, after checking that `view.digest()` (the direct writer the wasm's
/// `exportDigest` uses) writes exactly the text of that `Value` (its oracle).
pub fn checked_summary(view: &SessionView) -> Value {
    let summary = view.summary();
    assert_eq!(
        forgestream_core::wire::write::to_string(&view.digest()),
        serde_json::to_string(&summary).unwrap(),
        "digest() differs from summary()"
    );
    summary
}

/// The summary without its transport-dependent `diagnostics`.
pub fn content_summary(view: &SessionView) -> Value {
    let mut summary = checked_summary(view);
    if let Some(obj) = summary.as_object_mut() {
        obj.remove("diagnostics");
    }
    summary
}

/// Answers the engine's request `request` with a 200 and `body` at `now_ms` (the listings'
/// drivers in `history_paging.rs` and `history_progressive.rs`); returns the effects it made.
pub fn answer_ok(
    s: &mut forgestream_core::session::Session,
    request: forgestream_core::session::RequestId,
    body: &str,
    now_ms: u64,
) -> Vec<forgestream_core::session::Effect> {
    s.handle(
        forgestream_core::session::Input::Response {
            request,
            status: 200,
            retry_after: None,
            body: body.as_bytes(),
        },
        now_ms,
    );
    core::iter::from_fn(|| s.poll_effect()).collect()
}
