//! The fuzz harness, shared by the `cargo fuzz` targets (`fuzz/fuzz_targets/*.rs`) and the
//! regression test that replays `tests/fixtures/fuzz-crashes/` (`crates/forgestream-core/tests/
//! fault_props.rs`). Every function takes raw bytes and panics on a broken invariant.
//!
//! - [`sse`]: arbitrary bytes in arbitrary chunks; the items do not depend on the chunking, the
//!   parser's memory stays under its cap, and (uncapped) the items equal those of a plain
//!   WHATWG reference parser written here from the spec text (differential test).
//! - [`reduce`]: arbitrary frames / listings / turns as text lines, or structured mutations of
//!   the recorded events; the reducer never panics, `summary()` and `respond` stay usable, and a
//!   replay of frames already applied changes nothing.
//! - [`resume`]: arbitrary input sequences with a clock; the machine's command invariants.

use forgestream_core::reduce::{ReducerConfig, SessionView};
use forgestream_core::respond::{self, Decision};
use forgestream_core::resume::{Command, Config, Connection, Input, StartMode};
use forgestream_core::sse::{ParserConfig, SseItem, SseParser};
use forgestream_core::wire;

/// A byte reader that yields zeros once exhausted.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    fn new(data: &'a [u8]) -> Self {
        Bytes { data, at: 0 }
    }
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from(self.u8()) << 8 | u16::from(self.u8())
    }
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
    fn take(&mut self, n: usize) -> &'a [u8] {
        let start = self.at.min(self.data.len());
        let end = (start + n).min(self.data.len());
        self.at = end;
        &self.data[start..end]
    }
}

// ---------------------------------------------------------------------------------------------
// SSE

fn parse_all(config: ParserConfig, chunks: &[&[u8]]) -> (Vec<SseItem>, u64, usize) {
    let mut parser = SseParser::new(config);
    let mut items = Vec::new();
    let mut max_buffered = 0;
    for chunk in chunks {
        let _ = parser.feed(chunk, &mut items);
        max_buffered = max_buffered.max(parser.buffered_bytes());
    }
    parser.finish();
    (items, parser.frames_too_large(), max_buffered)
}

/// An item of the reference parser: (event type, data, frame id, last event id) / comment / retry.
#[derive(Debug, PartialEq, Eq)]
enum RefItem {
    Event(Option<String>, String, Option<String>, String),
    Comment,
    Retry(u64),
}

/// WHATWG HTML §9.2.6 "Interpreting an event stream", written straight from the spec text for
/// one connection: decode, strip one BOM, split lines (CRLF, LF, CR), drop the unterminated tail.
fn reference_parse(bytes: &[u8]) -> Vec<RefItem> {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut line));
            }
            '\n' => lines.push(std::mem::take(&mut line)),
            c => line.push(c),
        }
    }
    let mut out = Vec::new();
    let (mut data, mut event_type, mut frame_id) = (String::new(), String::new(), None::<String>);
    let mut last_id = String::new();
    for line in lines {
        if line.is_empty() {
            if let Some(id) = frame_id.take() {
                last_id = id;
            }
            if data.is_empty() {
                event_type.clear();
                continue;
            }
            if data.ends_with('\n') {
                data.pop();
            }
            let t = std::mem::take(&mut event_type);
            out.push(RefItem::Event(
                (!t.is_empty()).then_some(t),
                std::mem::take(&mut data),
                None,
                last_id.clone(),
            ));
            continue;
        }
        if line.starts_with(':') {
            out.push(RefItem::Comment);
            continue;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line.as_str(), ""),
        };
        match field {
            "event" => event_type = value.to_string(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => frame_id = Some(value.to_string()),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                out.push(RefItem::Retry(value.bytes().fold(0u64, |a, d| {
                    a.saturating_mul(10).saturating_add(u64::from(d - b'0'))
                })))
            }
            _ => {}
        }
    }
    out
}

fn as_ref_items(items: &[SseItem]) -> Vec<RefItem> {
    items
        .iter()
        .map(|i| match i {
            SseItem::Event(e) => RefItem::Event(
                e.event_type.clone(),
                e.data.clone(),
                None,
                e.last_event_id.clone(),
            ),
            SseItem::Comment => RefItem::Comment,
            SseItem::Retry(ms) => RefItem::Retry(*ms),
        })
        .collect()
}

/// Bytes 0..2: chunking seed and cap selector; the rest is the stream.
pub fn sse(data: &[u8]) {
    let mut b = Bytes::new(data);
    let seed = b.u8();
    let cap_sel = b.u8();
    let stream = &data[data.len().min(2)..];
    // Chunk boundaries from the seed: sizes 1..=(seed % 17 + 1), deterministic.
    let mut chunks: Vec<&[u8]> = Vec::new();
    let mut state = u32::from(seed) | 1;
    let mut at = 0;
    while at < stream.len() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let size = 1 + (state as usize % (usize::from(seed % 17) + 1));
        let end = (at + size).min(stream.len());
        chunks.push(&stream[at..end]);
        at = end;
    }
    let config = ParserConfig::default();
    let (whole, _, _) = parse_all(config, &[stream]);
    let (chunked, _, _) = parse_all(config, &chunks);
    assert_eq!(whole, chunked, "items depend on chunking");
    let bytewise: Vec<&[u8]> = stream.chunks(1).collect();
    let (bytes1, _, _) = parse_all(config, &bytewise);
    assert_eq!(whole, bytes1, "items depend on one-byte reads");
    // Differential: the crate equals the reference parser.
    assert_eq!(
        as_ref_items(&whole),
        reference_parse(stream),
        "differs from the WHATWG reference"
    );
    // A small cap: same verdict whatever the chunking, memory bounded.
    let small = ParserConfig {
        max_frame_bytes: usize::from(cap_sel % 64),
    };
    let (a, too_large_a, _) = parse_all(small, &[stream]);
    let (c, too_large_c, max_buffered) = parse_all(small, &chunks);
    assert_eq!(a, c, "capped items depend on chunking");
    assert_eq!(too_large_a, too_large_c, "cap verdict depends on chunking");
    assert!(
        max_buffered <= small.max_frame_bytes,
        "buffered {max_buffered} > cap {}",
        small.max_frame_bytes
    );
}

// ---------------------------------------------------------------------------------------------
// Reducer

/// The recorded create streams, as (turn id, frames).
const RECORDED: &[&str] = &[
    include_str!("../tests/fixtures/recorded/text/create.sse"),
    include_str!("../tests/fixtures/recorded/readtool/create.sse"),
    include_str!("../tests/fixtures/recorded/subagent/create.sse"),
    include_str!("../tests/fixtures/recorded/error/create.sse"),
    include_str!("../tests/fixtures/recorded/cancel/create.sse"),
    include_str!("../tests/fixtures/recorded/approve-allow/turn1-create.sse"),
    include_str!("../tests/fixtures/recorded/approve-allow/turn2-create.sse"),
    include_str!("../tests/fixtures/recorded/ask/turn1-create.sse"),
];

const LISTINGS: &[&str] = &[
    include_str!("../tests/fixtures/recorded/text/turn-events.json"),
    include_str!("../tests/fixtures/recorded/readtool/turn-events.json"),
    include_str!("../tests/fixtures/recorded/subagent/turn-events.json"),
    include_str!("../tests/fixtures/recorded/error/turn-events.json"),
    include_str!("../tests/fixtures/recorded/cancel/turn-events.json"),
    include_str!("../tests/fixtures/recorded/approve-allow/turn1-turn-events.json"),
    include_str!("../tests/fixtures/recorded/approve-allow/turn2-turn-events.json"),
    include_str!("../tests/fixtures/recorded/ask/turn1-turn-events.json"),
];

fn frames_of(sse: &str) -> Vec<(Option<u64>, String)> {
    let mut parser = SseParser::new(ParserConfig::default());
    let mut items = Vec::new();
    let _ = parser.feed(sse.as_bytes(), &mut items);
    items
        .into_iter()
        .filter_map(|i| match i {
            SseItem::Event(e) => Some((e.id.and_then(|id| id.parse().ok()), e.data)),
            _ => None,
        })
        .collect()
}

fn turn_id_of(frames: &[(Option<u64>, String)]) -> String {
    frames
        .first()
        .and_then(|(_, d)| serde_json::from_str::<serde_json::Value>(d).ok())
        .and_then(|v| v["turn_id"].as_str().map(String::from))
        .unwrap_or_else(|| "t".into())
}

/// Exercises everything that reads the view.
fn observe(view: &SessionView) {
    let summary = view.summary();
    let text = serde_json::to_string(&summary).expect("summary serializes");
    assert!(text.starts_with('{'));
    for action in view.pending_actions() {
        let _ = view.tool_call(&action.tool_call_id.clone().unwrap_or_default());
    }
    let _ = view.unmatched_tool_results();
    let decisions: Vec<Decision> = view
        .pending_actions()
        .iter()
        .filter_map(|a| a.tool_call_id.clone())
        .map(|tool_call_id| Decision::Answer {
            tool_call_id,
            content: "x".into(),
        })
        .collect();
    let _ = respond::continuation(view, &decisions);
    let _ = respond::user_message(view, wire::UserContent::Text("hi".into()));
}

fn mutate(value: &mut serde_json::Value, b: &mut Bytes<'_>) {
    use serde_json::Value;
    let replacement = match b.u8() % 9 {
        0 => Value::Null,
        1 => Value::from(i64::from(b.u16()) - 100),
        2 => {
            let n = usize::from(b.u8() % 16);
            Value::from(String::from_utf8_lossy(b.take(n)).into_owned())
        }
        3 => Value::Array(vec![]),
        4 => serde_json::json!({}),
        5 => Value::Bool(true),
        6 => Value::from("model.message.delta"),
        7 => Value::from("turn.done"),
        _ => Value::from(u64::MAX),
    };
    match value {
        Value::Object(map) if !map.is_empty() => {
            let k = usize::from(b.u8()) % (map.len() + 1);
            if k == map.len() {
                map.insert(
                    ["content", "tool_calls", "state", "id", "thread_id", "type"]
                        [usize::from(b.u8()) % 6]
                        .into(),
                    replacement,
                );
            } else if b.u8() % 2 == 0 {
                let key = map.keys().nth(k).cloned().unwrap_or_default();
                if let Some(v) = map.get_mut(&key) {
                    if v.is_object() || v.is_array() {
                        mutate(v, b);
                    } else {
                        *v = replacement;
                    }
                }
            } else {
                let key = map.keys().nth(k).cloned().unwrap_or_default();
                map.remove(&key);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            let k = usize::from(b.u8()) % items.len();
            mutate(&mut items[k], b);
        }
        other => *other = replacement,
    }
}

/// Byte 0 even: text ops, one per line (`l<seq>|<json>` live frame, `n<json>` live frame without
/// id, `t<json array>` turn events, `s<json array>` session events, `g<json>` a turn, `x<turn>|<seq>|<json>`
/// a frame of another turn). Byte 0 odd: structured ops over the recorded streams.
pub fn reduce(data: &[u8]) {
    let config = ReducerConfig {
        max_events_per_turn: 400,
        max_kept_warnings: 8,
        ..ReducerConfig::default()
    };
    let mut view = SessionView::new("s", config);
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let text = String::from_utf8_lossy(rest);
        for line in text.lines().take(200) {
            let (op, body) = line.split_at(line.char_indices().nth(1).map_or(line.len(), |c| c.0));
            match op {
                "l" => {
                    let (seq, json) = body.split_once('|').unwrap_or(("", body));
                    let _ = view.apply_live("t1", seq.parse().ok(), json);
                }
                "n" => {
                    let _ = view.apply_live("t1", None, body);
                }
                "x" => {
                    let mut parts = body.splitn(3, '|');
                    let (t, seq, json) = (parts.next(), parts.next(), parts.next());
                    let _ = view.apply_live(
                        t.unwrap_or("t2"),
                        seq.and_then(|s| s.parse().ok()),
                        json.unwrap_or(""),
                    );
                }
                "t" => {
                    if let Ok(events) = serde_json::from_str::<Vec<wire::Event>>(body) {
                        let _ = view.apply_turn_events("t1", events);
                    }
                }
                "s" => {
                    if let Ok(items) = serde_json::from_str::<Vec<wire::SessionEventItem>>(body) {
                        let _ = view.apply_session_events(items);
                    }
                }
                "g" => {
                    if let Ok(turn) = serde_json::from_str::<wire::Turn>(body) {
                        view.apply_turn(&turn);
                    }
                }
                _ => {}
            }
        }
        observe(&view);
        return;
    }
    let mut b = Bytes::new(rest);
    let which = usize::from(b.u8()) % RECORDED.len();
    let frames = frames_of(RECORDED[which]);
    let tid = turn_id_of(&frames);
    let mut next = 0usize;
    for _ in 0..300 {
        if b.done() {
            break;
        }
        match b.u8() % 10 {
            0 | 1 => {
                if let Some((seq, d)) = frames.get(next) {
                    let _ = view.apply_live(&tid, *seq, d);
                    next += 1;
                }
            }
            2 => {
                // Replay of frames already applied: no change at all.
                let before = view.summary();
                let upto = usize::from(b.u8()) % (next + 1);
                for (seq, d) in frames.iter().take(upto) {
                    if seq.is_some() {
                        let _ = view.apply_live(&tid, *seq, d);
                    }
                }
                assert_eq!(before, view.summary(), "a replay changed the view");
            }
            3 => {
                let k = usize::from(b.u8()) % frames.len().max(1);
                if let Some((_, d)) = frames.get(k) {
                    if let Ok(mut v) = serde_json::from_str::<serde_json::Value>(d) {
                        mutate(&mut v, &mut b);
                        let seq = u64::from(b.u8());
                        let _ = view.apply_live(&tid, Some(seq), &v.to_string());
                    }
                }
            }
            4 => {
                let listing: serde_json::Value =
                    serde_json::from_str(LISTINGS[which]).expect("listing");
                let mut events = listing["data"].as_array().cloned().unwrap_or_default();
                let keep = usize::from(b.u8()) % (events.len() + 1);
                events.truncate(keep);
                if b.u8() % 3 == 0 && !events.is_empty() {
                    let k = usize::from(b.u8()) % events.len();
                    mutate(&mut events[k], &mut b);
                }
                let events: Vec<wire::Event> = events
                    .into_iter()
                    .filter_map(|e| serde_json::from_value(e).ok())
                    .collect();
                let _ = view.apply_turn_events(&tid, events);
            }
            5 => {
                let listing: serde_json::Value =
                    serde_json::from_str(LISTINGS[which]).expect("listing");
                let mut items: Vec<serde_json::Value> = listing["data"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|e| serde_json::json!({"turn_id": tid, "event": e}))
                    .collect();
                if b.u8() % 2 == 0 {
                    items.reverse();
                }
                let items: Vec<wire::SessionEventItem> = items
                    .into_iter()
                    .filter_map(|e| serde_json::from_value(e).ok())
                    .collect();
                let _ = view.apply_session_events(items);
            }
            6 => {
                if let Some((_, last)) = frames.last() {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(last) {
                        let mut turn = serde_json::json!({"id": tid, "state": v["state"]});
                        if b.u8() % 2 == 0 {
                            turn["state"] = serde_json::json!({"status": "running"});
                        }
                        if let Ok(turn) = serde_json::from_value::<wire::Turn>(turn) {
                            view.apply_turn(&turn);
                        }
                    }
                }
            }
            7 => {
                // A frame of this stream delivered under a foreign turn id.
                let k = usize::from(b.u8()) % frames.len().max(1);
                if let Some((seq, d)) = frames.get(k) {
                    let _ = view.apply_live("foreign", *seq, d);
                }
            }
            8 => {
                let k = usize::from(b.u8()) % frames.len().max(1);
                if let Some((_, d)) = frames.get(k) {
                    let cut = usize::from(b.u8()) % (d.len() + 1);
                    let cut = (0..=cut)
                        .rev()
                        .find(|&c| d.is_char_boundary(c))
                        .unwrap_or(0);
                    let _ = view.apply_live(&tid, None, &d[..cut]);
                }
            }
            _ => observe(&view),
        }
    }
    observe(&view);
}

// ---------------------------------------------------------------------------------------------
// Recovery machine

fn input(b: &mut Bytes<'_>) -> Input {
    let status = |b: &mut Bytes<'_>| match b.u8() % 12 {
        0 => 200,
        1 => 401,
        2 => 412,
        3 => 429,
        4 => 503,
        5 => 500,
        6 => 404,
        7 => 409,
        8 => 400,
        9 => 403,
        10 => 504,
        _ => b.u16(),
    };
    let retry = |b: &mut Bytes<'_>| match b.u8() % 3 {
        0 => None,
        1 => Some(u64::from(b.u16())),
        _ => Some(u64::MAX - u64::from(b.u8())),
    };
    match b.u8() % 22 {
        0 => {
            let after = if b.u8() % 2 == 0 {
                None
            } else {
                Some(u64::from(b.u8()))
            };
            Input::Start {
                mode: if b.u8() % 2 == 0 {
                    StartMode::CreateTurn
                } else {
                    StartMode::Attach { after }
                },
            }
        }
        1 | 2 => Input::ResponseHeaders {
            status: status(b),
            retry_after_ms: retry(b),
        },
        3..=6 => Input::Event {
            sequence_number: if b.u8() % 8 == 0 {
                None
            } else {
                Some(u64::from(b.u8()))
            },
            turn_done: b.u8() % 16 == 0,
        },
        7 => Input::Comment,
        8 => Input::Retry(u64::from(b.u16()) * 7),
        9 => Input::Eof,
        10 => Input::NetworkError,
        11 => Input::TurnFetched {
            terminal: b.u8() % 2 == 0,
        },
        12 => Input::TurnFetchFailed {
            status: if b.u8() % 4 == 0 {
                None
            } else {
                Some(status(b))
            },
            retry_after_ms: retry(b),
        },
        13 => Input::TurnLookup {
            found_ours: b.u8() % 2 == 0,
        },
        14 => Input::TurnLookupFailed {
            status: if b.u8() % 4 == 0 {
                None
            } else {
                Some(status(b))
            },
            retry_after_ms: retry(b),
        },
        15 => Input::RebuildDone {
            terminal: b.u8() % 2 == 0,
        },
        16 => Input::RebuildFailed {
            status: if b.u8() % 4 == 0 {
                None
            } else {
                Some(status(b))
            },
            retry_after_ms: retry(b),
        },
        17 => {
            if b.u8() % 2 == 0 {
                Input::HeadersRefreshed
            } else {
                Input::HeadersRefreshFailed
            }
        }
        18 => Input::Tick,
        19 => match b.u8() % 2 {
            0 => Input::Online,
            _ => Input::Offline,
        },
        20 => match b.u8() % 3 {
            0 => Input::Cancel,
            1 => Input::Refresh,
            _ => Input::Disconnect,
        },
        _ => Input::Tick,
    }
}

fn is_request(c: &Command) -> bool {
    matches!(
        c,
        Command::PostTurn
            | Command::Subscribe { .. }
            | Command::GetTurn
            | Command::Rebuild
            | Command::LookupNewestTurn
    )
}

/// Bytes 0..8: configuration; then (clock step, input) pairs.
pub fn resume(data: &[u8]) {
    let mut b = Bytes::new(data);
    let config = Config {
        backoff_base_ms: u64::from(b.u8()) * 10,
        backoff_cap_ms: u64::from(b.u16()) * 2,
        retry_min_ms: u64::from(b.u8()),
        idle_timeout_ms: 1 + u64::from(b.u16()),
        persist_interval_ms: u64::from(b.u8()) * 10,
        max_attempts: u32::from(b.u8() % 30),
        jitter_seed: u64::from(b.u8()),
        ..Config::default()
    };
    let mut conn = Connection::new(config);
    let mut now = 0u64;
    let mut posts = 0;
    let mut last_persist: Option<u64> = None;
    let mut last_subscribe: Option<u64> = None;
    let mut cancels = 0;
    let mut started_attach_after: Option<Option<u64>> = None;
    for _ in 0..2_000 {
        if b.done() {
            break;
        }
        match b.u8() % 4 {
            0 => {}
            1 => now = now.saturating_add(u64::from(b.u16())),
            2 => {
                if let Some(t) = conn.poll_timeout() {
                    now = now.max(t);
                }
            }
            _ => now = now.saturating_sub(u64::from(b.u8())),
        }
        let finished_before = conn.is_finished();
        let input = input(&mut b);
        if let (Input::Start { mode }, None) = (input, started_attach_after) {
            started_attach_after = Some(match mode {
                StartMode::Attach { after } => after,
                StartMode::CreateTurn => None,
            });
        }
        conn.handle(input, now);
        let commands: Vec<Command> = std::iter::from_fn(|| conn.poll_command()).collect();
        if finished_before {
            assert!(commands.is_empty(), "commands after the end: {commands:?}");
        }
        let mut requests_since_abort = 0;
        for c in &commands {
            if is_request(c) {
                requests_since_abort += 1;
                assert!(
                    requests_since_abort <= 1,
                    "two requests without Abort: {commands:?}"
                );
            }
            match c {
                Command::Abort => requests_since_abort = 0,
                Command::PostTurn => {
                    posts += 1;
                    assert_eq!(posts, 1, "second POST");
                }
                Command::PostCancel => {
                    cancels += 1;
                    assert_eq!(cancels, 1, "second cancel");
                }
                Command::Persist { after } => {
                    assert!(
                        !matches!(last_persist, Some(p) if *after <= p),
                        "persist {after} after {last_persist:?}"
                    );
                    if let Some(Some(a)) = started_attach_after {
                        assert!(
                            *after > a,
                            "persist {after} at or below the attach cursor {a}"
                        );
                    }
                    last_persist = Some(*after);
                }
                Command::Subscribe { after } => {
                    assert!(
                        !matches!(last_subscribe, Some(s) if *after < s),
                        "subscribe cursor went back: {after} after {last_subscribe:?}"
                    );
                    if let Some(p) = last_persist {
                        assert!(*after >= p, "subscribe {after} below persisted {p}");
                    }
                    last_subscribe = Some(*after);
                }
                _ => {}
            }
        }
    }
}
