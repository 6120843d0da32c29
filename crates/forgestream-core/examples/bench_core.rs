//! Native throughput and memory of the core on the benchmark workloads (`bench/workloads.mjs`).
//!
//! `cargo run --release -p forgestream-core --example bench_core`
//!
//! - **W1** (`target/bench/w1.sse`, one long live turn): fed in 64 KiB reads through
//!   [`SseParser::feed_with`] and [`SessionView::apply_live_into`] (one change set per read, as
//!   the SDK does); the median of several runs gives MB/s
//!   (10^6 bytes) and events/s, plus parse-only MB/s for reference. The final view is checked
//!   against `w1.json` (text bytes and characters of every message, tool-call arguments, turn and
//!   thread status, no warnings); a mismatch exits non-zero.
//! - **Memory**: a counting global allocator (this example only) tracks live and peak heap
//!   bytes. Peak heap while parsing + reducing W1 (above the already-loaded input) and the heap
//!   the view retains afterwards are reported as ratios to the final text bytes.
//! - **W2** (`target/bench/w2-pages.json`, 100,000 persisted events in 100-event pages): each
//!   page is decoded with the SDK's decoder (`wire::json`) into [`SessionEventsPage`] and
//!   applied with
//!   [`SessionView::apply_session_events`]; events/s, checked against `w2.json`. A time budget
//!   (`FORGESTREAM_BENCH_W2_BUDGET_S`, default 120 s per run) stops a run that is too slow, and
//!   then the figure is reported as partial, never extrapolated.
//!
//! Environment: `FORGESTREAM_BENCH_DIR` (default `<repo>/target/bench`), `FORGESTREAM_BENCH_RUNS`
//! (default 7, at least 5), `FORGESTREAM_BENCH_W1_ONLY` (set: run W1 only, print, write nothing;
//! for quick iterations). Results are also written to `<bench dir>/results-core.json` for
//! `scripts/bench`.

use std::hint::black_box;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use forgestream_core::reduce::{
    ChangeSet, ItemBody, ReducerConfig, SessionView, ThreadStatus, TurnStatus,
};
use forgestream_core::session::tabs::{Role, TabInput};
use forgestream_core::session::{Api, Command, Config, Effect, Flavor, Input, Session};
use forgestream_core::sse::{ParserConfig, SseItemRef, SseParser};
use forgestream_core::wire::{json, JsonText, SessionEventsPage};
use serde_json::{json, Value};

// ------------------------------------------------------------------ counting allocator

/// Counts live and peak heap bytes (requested sizes); this example's global allocator.
#[path = "../tests/support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{heap_mark, live_bytes, peak_bytes};

// ------------------------------------------------------------------ helpers

type Fallible<T> = Result<T, String>;

fn bench_dir() -> PathBuf {
    let dir = std::env::var_os("FORGESTREAM_BENCH_DIR").map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target/bench")),
        PathBuf::from,
    );
    std::fs::canonicalize(&dir).unwrap_or(dir)
}

fn read_json(path: &PathBuf) -> Fallible<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn field_u64(meta: &Value, key: &str) -> Fallible<u64> {
    meta.get(key)
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("metadata lacks numeric `{key}`"))
}

fn field_str<'a>(meta: &'a Value, key: &str) -> Fallible<&'a str> {
    meta.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("metadata lacks string `{key}`"))
}

fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    let n = samples.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => samples[n / 2],
        _ => (samples[n / 2 - 1] + samples[n / 2]) / 2.0,
    }
}

fn runs() -> usize {
    std::env::var("FORGESTREAM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7usize)
        .max(5)
}

/// Sum of text bytes over every message item of the view, and the number of messages.
fn message_text_totals(view: &SessionView) -> (u64, u64) {
    let mut bytes = 0u64;
    let mut count = 0u64;
    for turn in view.turns() {
        for item in turn.items.values() {
            if let ItemBody::Message(m) = &item.body {
                count += 1;
                bytes += m.content.as_ref().map_or(0, |c| c.text().len()) as u64;
            }
        }
    }
    (bytes, count)
}

// ------------------------------------------------------------------ W1

const READ_SIZE: usize = 64 * 1024;

/// The `turn_id` of a `turn.created` frame.
fn turn_id_of(data: &str) -> Fallible<String> {
    let event: Value = serde_json::from_str(data).map_err(|e| format!("first frame: {e}"))?;
    if event.get("type").and_then(Value::as_str) != Some("turn.created") {
        return Err("the first frame is not turn.created".into());
    }
    event
        .get("turn_id")
        .and_then(Value::as_str)
        .map(String::from)
        .ok_or_else(|| "turn.created without turn_id".into())
}

/// Parses and reduces the whole stream as the SDK does (`forgestream-web` `ingest.rs`): each
/// read through `SseParser::feed_with` (borrowed frames), each event into
/// `SessionView::apply_live_into` with one change set per read, drained (normalized and
/// cleared) after the read, as the SDK hands one change set per chunk to the UI. Returns the
/// view and the event count.
fn reduce_w1(input: &[u8], session_id: &str) -> Fallible<(SessionView, u64, String)> {
    let mut parser = SseParser::new(ParserConfig::default());
    let mut view = SessionView::new(session_id, ReducerConfig::default());
    let mut changes = ChangeSet::default();
    let mut turn_id: Option<String> = None;
    let mut events = 0u64;
    let mut failed: Option<String> = None;
    for chunk in input.chunks(READ_SIZE) {
        parser
            .feed_with(chunk, |item| {
                let SseItemRef::Event(event) = item else {
                    return;
                };
                if failed.is_some() {
                    return;
                }
                if turn_id.is_none() {
                    match turn_id_of(event.data) {
                        Ok(id) => turn_id = Some(id),
                        Err(e) => {
                            failed = Some(e);
                            return;
                        }
                    }
                }
                let tid = turn_id.as_deref().unwrap_or_default();
                let seq = event.id.and_then(|s| s.parse::<u64>().ok());
                match view.apply_live_into(tid, seq, event.data, &mut changes) {
                    Ok(()) => events += 1,
                    Err(e) => failed = Some(format!("apply_live seq {seq:?}: {e}")),
                }
            })
            .map_err(|e| e.to_string())?;
        if let Some(e) = failed {
            return Err(e);
        }
        changes.normalize();
        black_box(&changes);
        changes = ChangeSet::default();
    }
    parser.finish();
    Ok((view, events, turn_id.unwrap_or_default()))
}

/// The same stream through the whole session engine, as `forgestream-web`'s executor drives it:
/// `send()`, the POST's stream opened, each 64 KiB read as [`Input::Bytes`], every effect
/// polled after each read, and the changes drained and serialised (as `takeChanges` does) every
/// `drain_every` reads. `inspect` turns the inspector's frame log on. Returns the engine (for
/// its view) and the JSON bytes the drains produced.
fn engine_w1(
    input: &[u8],
    session_id: &str,
    inspect: bool,
    drain_every: usize,
) -> Fallible<(Session, usize)> {
    let reads: Vec<&[u8]> = input.chunks(READ_SIZE).collect();
    engine_reads(&reads, session_id, inspect, drain_every)
}

/// `input` cut after each frame (`\n\n`): one read per frame, as a live stream written one
/// frame per write arrives when the page keeps up (W3, W4).
fn frames_of(input: &[u8]) -> Vec<&[u8]> {
    let mut reads = Vec::new();
    let mut start = 0;
    for i in 1..input.len() {
        if input[i] == b'\n' && input[i - 1] == b'\n' {
            reads.push(&input[start..=i]);
            start = i + 1;
        }
    }
    if start < input.len() {
        reads.push(&input[start..]);
    }
    reads
}

/// Feeds `reads` one `Input::Bytes` each through a [`Session`], draining the change set as JSON
/// every `drain_every` reads.
fn engine_reads(
    reads: &[&[u8]],
    session_id: &str,
    inspect: bool,
    drain_every: usize,
) -> Fallible<(Session, usize)> {
    let mut s = Session::new(
        session_id,
        Config {
            inspect,
            ..Config::new(Api::new("http://bench", Flavor::TrueForge))
        },
    );
    let mut now = 1_000u64;
    // A tab alone on its session leads it (the browser's Web Lock), and a leader keeps the
    // frames no follower asked for yet (`kept_frames.rs`): part of every frame's cost in a page.
    s.handle(Input::Tab(TabInput::Role(Role::Leader)), now);
    while s.poll_effect().is_some() {}
    s.handle(
        Input::Command {
            id: 1,
            command: Command::Send {
                input: Vec::new(),
                interrupt: false,
            },
        },
        now,
    );
    let mut post = None;
    while let Some(e) = s.poll_effect() {
        if let Effect::Request(r) = e {
            post = post.or(Some(r.id));
        }
    }
    let request = post.ok_or("send() issued no request")?;
    s.handle(
        Input::StreamOpened {
            request,
            status: 200,
            content_type: Some("text/event-stream"),
            redirected: false,
        },
        now,
    );
    while s.poll_effect().is_some() {}
    let mut json_bytes = 0;
    for (n, chunk) in reads.iter().copied().enumerate() {
        now += 1;
        s.handle(
            Input::Bytes {
                request,
                bytes: chunk,
            },
            now,
        );
        while let Some(e) = black_box(s.poll_effect()) {
            drop(e);
        }
        // The executor re-arms its timer after every input (forgestream-web `pump`).
        black_box(s.poll_timeout());
        if (n + 1) % drain_every == 0 {
            json_bytes += drain_json(&mut s)?;
        }
    }
    s.handle(Input::End { request }, now + 1);
    while s.poll_effect().is_some() {}
    json_bytes += drain_json(&mut s)?;
    Ok((s, json_bytes))
}

/// `takeChanges()`: the drained change set as the JSON text `forgestream-web` hands to JS.
fn drain_json(s: &mut Session) -> Fallible<usize> {
    let (changes, warnings) = s.take_changes();
    let out = s.changes_of(&changes, &warnings);
    let text = serde_json::to_string(&out).map_err(|e| e.to_string())?;
    Ok(black_box(text).len())
}

/// Parse only: frames out of the SSE parser (`feed_with`), nothing reduced. Returns (events,
/// data bytes).
fn parse_w1(input: &[u8]) -> Fallible<(u64, u64)> {
    let mut parser = SseParser::new(ParserConfig::default());
    let (mut events, mut data_bytes) = (0u64, 0u64);
    for chunk in input.chunks(READ_SIZE) {
        parser
            .feed_with(chunk, |item| {
                if let SseItemRef::Event(event) = item {
                    events += 1;
                    data_bytes += black_box(event.data.len()) as u64;
                }
            })
            .map_err(|e| e.to_string())?;
    }
    parser.finish();
    Ok((events, data_bytes))
}

/// Checks the final W1 view against `w1.json`; returns every mismatch found.
fn verify_w1(view: &SessionView, turn_id: &str, events: u64, meta: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    if let Ok(expected) = field_u64(meta, "events") {
        if events != expected {
            errors.push(format!("{events} events reduced, expected {expected}"));
        }
    }
    match field_str(meta, "turn_id") {
        Ok(t) if t != turn_id => errors.push(format!("turn id {turn_id}, expected {t}")),
        _ => {}
    }
    let Some(turn) = view.turn(turn_id) else {
        errors.push(format!("turn {turn_id} missing from the view"));
        return errors;
    };
    if turn.status != TurnStatus::Done {
        errors.push(format!("turn status {:?}, expected Done", turn.status));
    }
    if turn.last_sequence_number() != meta.get("last_seq").and_then(Value::as_u64) {
        errors.push(format!(
            "last sequence number {:?}",
            turn.last_sequence_number()
        ));
    }
    if view.warning_count() != 0 {
        errors.push(format!(
            "{} warnings, expected none: {:?}",
            view.warning_count(),
            view.warnings().iter().take(3).collect::<Vec<_>>()
        ));
    }
    let expected_messages = meta
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for m in &expected_messages {
        let id = m.get("id").and_then(Value::as_str).unwrap_or_default();
        let Some(ItemBody::Message(msg)) = view.item(turn_id, id).map(|i| &i.body) else {
            errors.push(format!("message {id} missing"));
            continue;
        };
        let text = msg.content.as_ref().map(|c| c.text()).unwrap_or_default();
        let want_bytes = m.get("text_bytes").and_then(Value::as_u64);
        let want_chars = m.get("text_chars").and_then(Value::as_u64);
        if Some(text.len() as u64) != want_bytes || Some(text.chars().count() as u64) != want_chars
        {
            errors.push(format!(
                "message {id}: {} bytes / {} chars, expected {want_bytes:?} / {want_chars:?}",
                text.len(),
                text.chars().count()
            ));
        }
        let want_calls = m
            .get("tool_calls")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if want_calls.len() != msg.tool_calls().len() {
            errors.push(format!(
                "message {id}: {} tool calls, expected {}",
                msg.tool_calls().len(),
                want_calls.len()
            ));
        }
        for (want, got) in want_calls.iter().zip(msg.tool_calls()) {
            let same = want.get("id").and_then(Value::as_str) == Some(got.tool_call_id.as_str())
                && want.get("name").and_then(Value::as_str) == Some(got.name.as_str())
                && want.get("arguments_bytes").and_then(Value::as_u64)
                    == Some(got.arguments_text.len() as u64)
                && got.arguments.is_some();
            if !same {
                errors.push(format!(
                    "message {id}: tool call {} differs",
                    got.tool_call_id
                ));
            }
        }
    }
    let (total, count) = message_text_totals(view);
    let want_total = field_u64(meta, "total_text_bytes").unwrap_or(u64::MAX);
    if total != want_total || count != expected_messages.len() as u64 {
        errors.push(format!(
            "view holds {count} messages with {total} text bytes, expected {} with {want_total}",
            expected_messages.len()
        ));
    }
    for t in meta
        .get("threads")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = t
            .get("thread_id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match view.thread(id) {
            Some(thread) if thread.status == ThreadStatus::Done => {}
            Some(thread) => errors.push(format!("thread {id}: status {:?}", thread.status)),
            None => errors.push(format!("thread {id} missing")),
        }
    }
    errors
}

struct W1Figures {
    /// Medians through the session engine: drained every read; every 16 reads; every 16 reads
    /// with `inspect: true`.
    engine_secs: Vec<f64>,
    bytes: usize,
    events: u64,
    runs: usize,
    reduce_secs: f64,
    parse_secs: f64,
    text_bytes: u64,
    peak_heap: usize,
    retained_heap: usize,
}

fn bench_w1(dir: &std::path::Path, runs: usize) -> Fallible<W1Figures> {
    let meta = read_json(&dir.join("w1.json"))?;
    let sse_path = dir.join("w1.sse");
    let input = std::fs::read(&sse_path).map_err(|e| format!("{}: {e}", sse_path.display()))?;
    if input.len() as u64 != field_u64(&meta, "bytes")? {
        return Err(
            "w1.sse does not match w1.json: regenerate with node bench/workloads.mjs".into(),
        );
    }
    let session_id = field_str(&meta, "session_id")?.to_string();
    let text_bytes = field_u64(&meta, "total_text_bytes")?;
    println!(
        "W1: {} ({:.2} MB, {} frames, {} text bytes in {} messages), {} KiB reads, {runs} runs",
        sse_path.display(),
        input.len() as f64 / 1e6,
        field_u64(&meta, "events")?,
        text_bytes,
        field_u64(&meta, "model_messages")?,
        READ_SIZE / 1024
    );

    // Memory: one dedicated run, measured from the moment the input is already loaded.
    let base = heap_mark();
    let (view, events, turn_id) = reduce_w1(&input, &session_id)?;
    let peak_heap = peak_bytes().saturating_sub(base);
    let retained_heap = live_bytes().saturating_sub(base);
    let errors = verify_w1(&view, &turn_id, events, &meta);
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("W1 verification FAILED: {e}");
        }
        return Err(format!(
            "W1 view does not match w1.json ({} mismatches)",
            errors.len()
        ));
    }
    println!(
        "  verified: final view matches w1.json ({text_bytes} text bytes, turn done, no warnings)"
    );
    drop(view);

    let mut reduce = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let (view, n, _) = reduce_w1(&input, &session_id)?;
        reduce.push(started.elapsed().as_secs_f64());
        if n != events || message_text_totals(&view).0 != text_bytes {
            return Err("a timed W1 run produced a different view".into());
        }
        drop(black_box(view));
    }
    let mut parse = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let (n, _) = black_box(parse_w1(&input)?);
        parse.push(started.elapsed().as_secs_f64());
        if n != events {
            return Err(format!("parse-only run saw {n} events, expected {events}"));
        }
    }
    // Through the engine: drained every read (the worst case) and every 16 reads (about one
    // animation frame's worth on loopback), with and without the inspector's frame log.
    let mut engine = [
        Vec::with_capacity(runs),
        Vec::with_capacity(runs),
        Vec::with_capacity(runs),
    ];
    let configs = [(false, 1), (false, 16), (true, 16)];
    for _ in 0..runs {
        for (samples, &(inspect, every)) in engine.iter_mut().zip(&configs) {
            let started = Instant::now();
            let (s, _) = engine_w1(&input, &session_id, inspect, every)?;
            samples.push(started.elapsed().as_secs_f64());
            if message_text_totals(s.view()).0 != text_bytes {
                return Err("an engine W1 run produced a different view".into());
            }
            drop(black_box(s));
        }
    }
    let engine_secs: Vec<f64> = engine.iter_mut().map(|v| median(v)).collect();
    for every in [1, 16] {
        let (_, json) = engine_w1(&input, &session_id, false, every)?;
        println!(
            "  takeChanges JSON over W1, drained every {every} read(s): {:.2} MB ({:.2}x the final text)",
            json as f64 / 1e6,
            json as f64 / text_bytes as f64
        );
    }
    let f = W1Figures {
        engine_secs: engine_secs.clone(),
        bytes: input.len(),
        events,
        runs,
        reduce_secs: median(&mut reduce),
        parse_secs: median(&mut parse),
        text_bytes,
        peak_heap,
        retained_heap,
    };
    let mb = f.bytes as f64 / 1e6;
    println!(
        "  parse + reduce: median {:.1} ms = {:.1} MB/s, {:.0} events/s (runs: {})",
        f.reduce_secs * 1e3,
        mb / f.reduce_secs,
        f.events as f64 / f.reduce_secs,
        fmt_ms(&reduce)
    );
    for (&(inspect, every), secs) in configs.iter().zip(&engine_secs) {
        println!(
            "  engine (Session, drained every {every} read(s){}): median {:.1} ms = {:.1} MB/s",
            if inspect { ", inspect: true" } else { "" },
            secs * 1e3,
            mb / secs
        );
    }
    println!(
        "  parse only:     median {:.1} ms = {:.1} MB/s, {:.0} events/s",
        f.parse_secs * 1e3,
        mb / f.parse_secs,
        f.events as f64 / f.parse_secs
    );
    println!(
        "  heap: peak during parse + reduce {:.2} MB = {:.2}x final text; retained by the view {:.2} MB = {:.2}x final text",
        f.peak_heap as f64 / 1e6,
        f.peak_heap as f64 / f.text_bytes as f64,
        f.retained_heap as f64 / 1e6,
        f.retained_heap as f64 / f.text_bytes as f64
    );
    Ok(f)
}

fn fmt_ms(sorted: &[f64]) -> String {
    sorted
        .iter()
        .map(|s| format!("{:.0}", s * 1e3))
        .collect::<Vec<_>>()
        .join("/")
}

// ------------------------------------------------------------------ W2

struct W2Run {
    secs: f64,
    /// Elapsed seconds at the end of each applied page.
    page_ends: Vec<f64>,
    pages: usize,
    events: u64,
    complete: bool,
    view: SessionView,
}

/// Decodes and applies pages in file order (newest first) until done or over `budget`.
fn reduce_w2(pages: &[&str], session_id: &str, budget: Duration) -> Fallible<W2Run> {
    let mut view = SessionView::new(session_id, ReducerConfig::default());
    let started = Instant::now();
    let mut events = 0u64;
    let mut done = 0usize;
    let mut page_ends = Vec::with_capacity(pages.len());
    // As the SDK loads a history: every page decoded, then one apply (the reducer settles the
    // chain order once per call).
    let mut items = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let page: SessionEventsPage = json::from_str(page).map_err(|e| format!("page {i}: {e}"))?;
        events += page.data.len() as u64;
        items.extend(page.data);
        done = i + 1;
        page_ends.push(started.elapsed().as_secs_f64());
        if started.elapsed() > budget && done < pages.len() {
            break;
        }
    }
    view.apply_session_events(items)
        .map_err(|e| format!("apply: {e}"))?;
    Ok(W2Run {
        secs: started.elapsed().as_secs_f64(),
        page_ends,
        pages: done,
        events,
        complete: done == pages.len(),
        view,
    })
}

/// Writes every item of `view` as JSON (what a first snapshot of the whole history crosses as)
/// with the SDK's encoder and with serde_json's derives, alternated run by run; returns
/// (bytes written, median seconds SDK, median seconds serde). Both texts are checked equal.
fn encode_w2_items(view: &SessionView, runs: usize) -> (usize, f64, f64) {
    let items: Vec<&forgestream_core::reduce::ItemView> =
        view.turns().flat_map(|t| t.items.values()).collect();
    let mut ours = Vec::with_capacity(runs);
    let mut serde = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let started = Instant::now();
        let mut text = String::new();
        for item in &items {
            forgestream_core::wire::write::Encode::encode(*item, &mut text);
        }
        ours.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        let mut other = Vec::new();
        for item in &items {
            serde_json::to_writer(&mut other, item).unwrap_or_default();
        }
        serde.push(started.elapsed().as_secs_f64());
        assert_eq!(text.as_bytes(), other.as_slice(), "the encoders disagree");
        bytes = text.len();
    }
    let (ours, serde) = (median(&mut ours), median(&mut serde));
    println!(
        "  encode the view's {} items as JSON ({:.1} MB): SDK encoder median {:.0} ms = {:.0} MB/s; serde_json derives {:.0} ms = {:.0} MB/s ({:.2}x)",
        items.len(),
        bytes as f64 / 1e6,
        ours * 1e3,
        bytes as f64 / 1e6 / ours,
        serde * 1e3,
        bytes as f64 / 1e6 / serde,
        serde / ours
    );
    (bytes, ours, serde)
}

/// Heap bytes of `value` as a clone of it allocates them (requested sizes, no spare capacity).
fn heap_of<T: Clone>(value: &T) -> usize {
    let before = live_bytes();
    let copy = value.clone();
    let bytes = live_bytes().saturating_sub(before);
    drop(black_box(copy));
    bytes
}

/// Heap bytes of the distinct shared ids (`forgestream_core::id::Id`, one pointer to a
/// count and the text, inline up to 30 bytes: `Id::shared_heap_bytes`) among `ids`, each
/// allocation counted once (`seen`: the texts' addresses). A clone of an `Id` allocates nothing, so [`heap_of`] does not see them.
fn ids_heap<'a>(
    seen: &mut std::collections::HashSet<usize>,
    ids: impl IntoIterator<Item = &'a forgestream_core::id::Id>,
) -> usize {
    let mut bytes = 0;
    for id in ids {
        if seen.insert(id.as_str().as_ptr() as usize) {
            bytes += id.shared_heap_bytes();
        }
    }
    bytes
}

/// Heap bytes of a shared JSON text (`JsonText`, an `Arc<str>`: a count and the text) the
/// first time its allocation is seen (`seen`: the texts' addresses), else 0. A clone of one
/// allocates nothing, so [`heap_of`] does not see them.
fn json_heap(seen: &mut std::collections::HashSet<usize>, text: Option<&JsonText>) -> usize {
    match text {
        Some(t) if seen.insert(t.as_str().as_ptr() as usize) => {
            std::mem::size_of::<usize>() + t.as_str().len()
        }
        _ => 0,
    }
}

/// Where the W2 view's heap goes (issue 16, "a lean view"): each part measured as the heap a
/// clone of it allocates, under the counting allocator, except the shared ids and JSON texts
/// (turn inputs, tool-call arguments), counted once each ([`ids_heap`], [`json_heap`]); "maps, indexes, bookkeeping" is the clone of the whole view less the
/// listed parts (the maps' nodes and slots, the reducer's indexes by `tool_call_id`, per-turn
/// bookkeeping), and "spare capacity" is the measured retained heap less that clone and the
/// ids (vectors and strings grown by doubling, and ids only an index holds).
fn w2_view_breakdown(
    view: &SessionView,
    retained: usize,
    text_bytes: usize,
    events: u64,
) -> Vec<(&'static str, usize)> {
    let mut parts: Vec<(&str, usize)> = Vec::new();
    let mut add = |name: &'static str, bytes: usize| match parts.iter_mut().find(|p| p.0 == name) {
        Some(p) => p.1 += bytes,
        None => parts.push((name, bytes)),
    };
    let whole = heap_of(view);
    let mut items = 0usize;
    let mut seen = std::collections::HashSet::new();
    let mut ids = 0usize;
    for turn in view.turns() {
        ids += ids_heap(&mut seen, [&turn.turn_id]);
        for item in turn.items.values() {
            ids += ids_heap(
                &mut seen,
                [&item.key, &item.turn_id]
                    .into_iter()
                    .chain(&item.thread_id),
            );
            match &item.body {
                ItemBody::Message(m) => {
                    for c in m.tool_calls() {
                        ids += ids_heap(
                            &mut seen,
                            [&c.tool_call_id]
                                .into_iter()
                                .chain(&c.result_event_id)
                                .chain(&c.result_turn_id),
                        );
                    }
                }
                ItemBody::ToolResult(r) => {
                    ids += ids_heap(
                        &mut seen,
                        [&r.tool_call_id]
                            .into_iter()
                            .chain(&r.call_message_id)
                            .chain(&r.call_turn_id),
                    );
                }
                _ => {}
            }
        }
    }
    add("ids (shared, each counted once)", ids);
    // Shared JSON texts (not in the clone either).
    let mut texts = std::collections::HashSet::new();
    let mut shared = ids;
    for turn in view.turns() {
        add(
            "turn headers (ids, times, states)",
            heap_of(&turn.turn_id)
                + heap_of(&turn.previous_turn_id)
                + heap_of(&turn.cancel_reason().cloned())
                + heap_of(&turn.error_message().cloned())
                + heap_of(&turn.created_at)
                + heap_of(&turn.completed_at),
        );
        let input = json_heap(&mut texts, turn.input.as_ref());
        shared += input;
        add("turn input (JSON text)", input);
        add("turn usage (packed)", heap_of(&turn.usage));
        add(
            "turn records themselves (inline size x turns)",
            std::mem::size_of::<forgestream_core::reduce::TurnView>(),
        );
        for item in turn.items.values() {
            items += 1;
            add(
                "item envelopes (key, turn id, thread id, time)",
                heap_of(&item.key)
                    + heap_of(&item.turn_id)
                    + heap_of(&item.thread_id)
                    + heap_of(&item.created_at),
            );
            match &item.body {
                ItemBody::Message(m) => {
                    // The optional parts as owned values: a clone of each allocates its heap.
                    let calls: Box<[_]> = m.tool_calls().into();
                    let text = heap_of(&m.content)
                        + heap_of(&m.reasoning().cloned())
                        + heap_of(&m.refusal().cloned());
                    let usage = heap_of(&m.usage().cloned());
                    add("message text (content, reasoning, refusal)", text);
                    add("message usage", usage);
                    add(
                        "message ids and names",
                        heap_of(&m.name().cloned()) + heap_of(&m.finish_reason().cloned()),
                    );
                    // What is left of the message's heap: the boxes of its optional parts.
                    add(
                        "message boxes (calls, finish reason, usage; name, reasoning, refusal)",
                        heap_of(m).saturating_sub(text + usage + heap_of(&calls)),
                    );
                    // The checked arguments share the text's allocation once it parses:
                    // counted once (shared), plus any text that did not parse (cloned).
                    let mut args = 0;
                    let mut args_text = 0;
                    for call in m.tool_calls() {
                        args += json_heap(&mut texts, call.arguments.as_ref());
                        args_text += heap_of(&call.arguments_text);
                    }
                    shared += args;
                    add(
                        "tool-call arguments (one text, shared with the checked JSON)",
                        args + args_text,
                    );
                    add(
                        "tool calls, the rest (ids, names, links)",
                        heap_of(&calls).saturating_sub(args_text),
                    );
                }
                ItemBody::ToolResult(r) => {
                    add("tool results, content", heap_of(&r.content));
                    add(
                        "tool results, ids",
                        heap_of(&r.tool_call_id)
                            + heap_of(&r.call_message_id)
                            + heap_of(&r.call_turn_id),
                    );
                }
                other => add("other items", heap_of(other)),
            }
        }
    }
    add(
        "item records themselves (inline size x items)",
        items * std::mem::size_of::<forgestream_core::reduce::ItemView>(),
    );
    // The ids and shared texts are not in the clone (`whole`): leave them out of what it is
    // compared with.
    let listed: usize = parts.iter().map(|p| p.1).sum::<usize>() - shared;
    parts.push(("maps, indexes, bookkeeping", whole.saturating_sub(listed)));
    parts.push((
        "spare capacity",
        retained.saturating_sub(whole).saturating_sub(shared),
    ));
    parts.sort_by_key(|p| std::cmp::Reverse(p.1));
    println!(
        "  view breakdown ({items} items; bytes per event of {events} and share of the retained heap):"
    );
    for (name, bytes) in &parts {
        println!(
            "    {name}: {:.2} MB = {:.0} B/event, {:.1}% ({:.2}x the text)",
            *bytes as f64 / 1e6,
            *bytes as f64 / events.max(1) as f64,
            100.0 * *bytes as f64 / retained.max(1) as f64,
            *bytes as f64 / text_bytes.max(1) as f64
        );
    }
    parts
}

/// Events per second over the first and the last tenth of the pages a run applied (every page
/// but possibly the last holds the same number of events): equal rates mean linear work, a
/// falling rate means the cost per event grows with the view.
fn w2_scaling(run: &W2Run) -> (f64, f64, usize) {
    let ends = &run.page_ends;
    let tenth = (ends.len() / 10).max(1);
    if ends.len() < 2 * tenth {
        return (f64::NAN, f64::NAN, tenth);
    }
    let first = ends[tenth - 1];
    let last = ends[ends.len() - 1] - ends[ends.len() - 1 - tenth];
    let per_page = run.events as f64 / run.pages.max(1) as f64;
    (
        tenth as f64 * per_page / first,
        tenth as f64 * per_page / last,
        tenth,
    )
}

fn verify_w2(view: &SessionView, meta: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let turns = view.turn_ids().len() as u64;
    if Some(turns) != meta.get("turns").and_then(Value::as_u64) {
        errors.push(format!("{turns} turns in the view"));
    }
    if view.turn_ids().last().map(|id| id.as_str())
        != meta.get("last_turn_id").and_then(Value::as_str)
    {
        errors.push("the newest turn in chain order is not last_turn_id".into());
    }
    let not_done = view
        .turns()
        .filter(|t| t.status != TurnStatus::Done)
        .count();
    if not_done != 0 {
        errors.push(format!("{not_done} turns not done"));
    }
    let (bytes, count) = message_text_totals(view);
    if Some(bytes) != meta.get("total_text_bytes").and_then(Value::as_u64)
        || Some(count) != meta.get("model_messages").and_then(Value::as_u64)
    {
        errors.push(format!("{count} messages with {bytes} text bytes"));
    }
    if view.warning_count() != 0 {
        errors.push(format!("{} warnings", view.warning_count()));
    }
    errors
}

struct W2Figures {
    events_total: u64,
    runs: usize,
    complete: bool,
    events_done: u64,
    pages_done: usize,
    secs: f64,
    decode_secs: f64,
    /// The same pages through serde's derives (the decoder's test oracle), for comparison.
    decode_serde_secs: f64,
    decode_runs: usize,
    /// Events/s over the first and last tenth of the first run's pages, and the tenth's size.
    scaling: (f64, f64, usize),
    retained_heap: Option<usize>,
    /// Where the retained heap goes (part, bytes), largest first: [`w2_view_breakdown`].
    breakdown: Vec<(&'static str, usize)>,
    /// The view's items written as JSON: (bytes, seconds SDK encoder, seconds serde_json).
    encode: Option<(usize, f64, f64)>,
    text_bytes: u64,
    budget_s: f64,
}

/// `FORGESTREAM_BENCH_W2_ONLY`: W2 decode + apply `runs` times (the first verified), the
/// median printed.
fn w2_only(dir: &std::path::Path, runs: usize) -> Fallible<()> {
    let (meta, text) = read_w2(dir)?;
    let pages = w2_pages(&text);
    let session_id = field_str(&meta, "session_id")?.to_string();
    let mut secs = Vec::with_capacity(runs);
    for run in 0..runs {
        let done = reduce_w2(&pages, &session_id, Duration::from_secs(600))?;
        if run == 0 {
            let errors = verify_w2(&done.view, &meta);
            if !errors.is_empty() {
                return Err(errors.join("; "));
            }
        }
        secs.push(done.secs);
    }
    let events = field_u64(&meta, "events")?;
    let secs = median(&mut secs);
    println!(
        "W2 decode + apply: median of {runs} {:.0} ms = {:.0} events/s (verified)",
        secs * 1e3,
        events as f64 / secs
    );
    Ok(())
}

/// W2's description (`w2.json`) and its pages' file (`w2-pages.json`).
fn read_w2(dir: &std::path::Path) -> Fallible<(Value, String)> {
    let meta = read_json(&dir.join("w2.json"))?;
    let path = dir.join("w2-pages.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((meta, text))
}

/// The pages of `w2-pages.json`: one per line (see bench/workloads.mjs); brackets and
/// separators are not pages.
fn w2_pages(text: &str) -> Vec<&str> {
    text.lines()
        .map(|l| l.trim_end_matches(','))
        .filter(|l| l.starts_with('{'))
        .collect()
}

fn bench_w2(dir: &std::path::Path, runs: usize) -> Fallible<W2Figures> {
    let (meta, text) = read_w2(dir)?;
    let path = dir.join("w2-pages.json");
    let pages = w2_pages(&text);
    let events_total = field_u64(&meta, "events")?;
    if pages.len() as u64 != field_u64(&meta, "pages")? {
        return Err(
            "w2-pages.json does not match w2.json: regenerate with node bench/workloads.mjs".into(),
        );
    }
    let session_id = field_str(&meta, "session_id")?.to_string();
    let text_bytes = field_u64(&meta, "total_text_bytes")?;
    let budget_s: f64 = std::env::var("FORGESTREAM_BENCH_W2_BUDGET_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120.0);
    let budget = Duration::from_secs_f64(budget_s);
    println!(
        "W2: {} ({:.2} MB, {} events in {} pages, {} turns), up to {runs} runs, budget {budget_s} s per run",
        path.display(),
        text.len() as f64 / 1e6,
        events_total,
        pages.len(),
        field_u64(&meta, "turns")?
    );

    // Decode only, for reference: how much of the time is JSON. The SDK's decoder and serde's
    // derives on the same types (its oracle in the tests), alternated run by run.
    let mut decode = Vec::with_capacity(runs);
    let mut decode_serde = Vec::with_capacity(runs);
    for _ in 0..runs {
        for serde in [false, true] {
            let started = Instant::now();
            let mut n = 0usize;
            for page in &pages {
                let page: SessionEventsPage = if serde {
                    serde_json::from_str(page).map_err(|e| e.to_string())?
                } else {
                    json::from_str(page).map_err(|e| e.to_string())?
                };
                n += black_box(page).data.len();
            }
            let took = started.elapsed().as_secs_f64();
            if serde {
                &mut decode_serde
            } else {
                &mut decode
            }
            .push(took);
            if n as u64 != events_total {
                return Err(format!("decoded {n} events, expected {events_total}"));
            }
        }
    }
    let decode_secs = median(&mut decode);
    let decode_serde_secs = median(&mut decode_serde);
    println!(
        "  decode only (wire::json -> SessionEventsPage): median {:.0} ms = {:.0} events/s; serde_json derives {:.0} ms = {:.0} events/s ({:.2}x)",
        decode_secs * 1e3,
        events_total as f64 / decode_secs,
        decode_serde_secs * 1e3,
        events_total as f64 / decode_serde_secs,
        decode_serde_secs / decode_secs
    );

    // First run: verification and retained heap (when it completes).
    let base = heap_mark();
    let first = reduce_w2(&pages, &session_id, budget)?;
    let retained = live_bytes().saturating_sub(base);
    let scaling = w2_scaling(&first);
    println!(
        "  scaling (first run): {:.0} events/s over its first {} pages, {:.0} events/s over its last {}",
        scaling.0,
        scaling.2,
        scaling.1,
        scaling.2
    );
    if !first.complete {
        println!(
            "  NOT MEASURED: decode + apply did not finish within the {budget_s} s budget: {} of {} pages ({} events) in {:.1} s = {:.0} events/s over that prefix only (partial; not extrapolated)",
            first.pages,
            pages.len(),
            first.events,
            first.secs,
            first.events as f64 / first.secs
        );
        return Ok(W2Figures {
            events_total,
            runs: 1,
            complete: false,
            events_done: first.events,
            pages_done: first.pages,
            secs: first.secs,
            decode_secs,
            decode_serde_secs,
            decode_runs: runs,
            scaling,
            retained_heap: None,
            breakdown: Vec::new(),
            encode: None,
            text_bytes,
            budget_s,
        });
    }
    let errors = verify_w2(&first.view, &meta);
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("W2 verification FAILED: {e}");
        }
        return Err(format!(
            "W2 view does not match w2.json ({} mismatches)",
            errors.len()
        ));
    }
    println!("  verified: final view matches w2.json (turns, chain tip, {text_bytes} text bytes, no warnings)");
    let breakdown = w2_view_breakdown(&first.view, retained, text_bytes as usize, events_total);
    let encode = encode_w2_items(&first.view, runs);
    let mut secs = vec![first.secs];
    drop(first);
    for _ in 1..runs {
        let run = reduce_w2(&pages, &session_id, budget)?;
        if !run.complete {
            println!(
                "  a later run exceeded the budget; median over {} complete runs",
                secs.len()
            );
            break;
        }
        secs.push(run.secs);
    }
    let runs_done = secs.len();
    let med = median(&mut secs);
    println!(
        "  decode + apply_session_events: median {:.0} ms = {:.0} events/s (runs: {})",
        med * 1e3,
        events_total as f64 / med,
        fmt_ms(&secs)
    );
    println!(
        "  heap retained by the view: {:.2} MB = {:.2}x its text bytes",
        retained as f64 / 1e6,
        retained as f64 / text_bytes as f64
    );
    Ok(W2Figures {
        events_total,
        runs: runs_done,
        complete: true,
        events_done: events_total,
        pages_done: pages.len(),
        secs: med,
        decode_secs,
        decode_serde_secs,
        decode_runs: runs,
        scaling,
        retained_heap: Some(retained),
        breakdown,
        encode: Some(encode),
        text_bytes,
        budget_s,
    })
}

// ------------------------------------------------------------------ main

/// JSON has no NaN: an unmeasurable figure is `null`.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// `FORGESTREAM_BENCH_FRAMES=1` (development loop for issue 19's W3): W1 through the engine one
/// frame per read, inspector on, drained every 33 frames (≈2,000 frames/s at 60 snapshots/s),
/// i.e. the per-input cost of a stream written one frame per write. Prints ns per frame; for
/// instruction counts run it under `valgrind --tool=callgrind
/// --toggle-collect='bench_core::engine_reads*'`.
fn bench_frames(dir: &std::path::Path, runs: usize) -> Fallible<()> {
    let input = std::fs::read(dir.join("w1.sse")).map_err(|e| format!("w1.sse: {e}"))?;
    let meta = read_json(&dir.join("w1.json"))?;
    let session_id = field_str(&meta, "session_id")?.to_string();
    let reads = frames_of(&input);
    let mut secs = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let (s, _) = engine_reads(&reads, &session_id, true, 33)?;
        secs.push(started.elapsed().as_secs_f64());
        drop(black_box(s));
    }
    let t = median(&mut secs);
    let (_, json) = engine_reads(&reads, &session_id, true, 33)?;
    println!(
        "  takeChanges JSON: {:.0} bytes per drain ({} drains)",
        json as f64 / (reads.len() / 33 + 1) as f64,
        reads.len() / 33 + 1
    );
    println!(
        "W1 one frame per read ({} reads), inspector on, drained every 33: {:.0} ns/frame (median of {runs})",
        reads.len(),
        t * 1e9 / reads.len() as f64
    );
    Ok(())
}

fn main() -> ExitCode {
    let dir = bench_dir();
    let runs = runs();
    if cfg!(debug_assertions) {
        println!("warning: debug build; use --release for meaningful figures");
    }
    // Alone: under callgrind only the per-frame loop should count.
    if std::env::var_os("FORGESTREAM_BENCH_FRAMES").is_some() {
        return match bench_frames(&dir, runs) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench_core: frames: {e}");
                ExitCode::FAILURE
            }
        };
    }
    // Development loop for W2: decode + apply only (no W1, no extras), nothing written. Under
    // `valgrind --tool=callgrind --toggle-collect='bench_core::reduce_w2'` it counts the
    // instructions of a history load.
    if std::env::var_os("FORGESTREAM_BENCH_W2_ONLY").is_some() {
        return match w2_only(&dir, runs) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bench_core: W2: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let w1 = match bench_w1(&dir, runs) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("bench_core: W1: {e}");
            return ExitCode::FAILURE;
        }
    };
    if std::env::var_os("FORGESTREAM_BENCH_W1_ONLY").is_some() {
        // Development loop: W1 figures on the console only; results-core.json is left alone.
        return ExitCode::SUCCESS;
    }
    let w2 = match bench_w2(&dir, runs) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("bench_core: W2: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mb = w1.bytes as f64 / 1e6;
    let results = json!({
        "profile": if cfg!(debug_assertions) { "debug" } else { "release" },
        "read_size": READ_SIZE,
        "w1": {
            "bytes": w1.bytes,
            "events": w1.events,
            "runs": w1.runs,
            "reduce_median_s": w1.reduce_secs,
            "reduce_mb_per_s": mb / w1.reduce_secs,
            "reduce_events_per_s": w1.events as f64 / w1.reduce_secs,
            "engine_median_s": w1.engine_secs.first(),
            "engine_drain16_median_s": w1.engine_secs.get(1),
            "engine_drain16_inspect_median_s": w1.engine_secs.get(2),
            "parse_median_s": w1.parse_secs,
            "parse_mb_per_s": mb / w1.parse_secs,
            "parse_events_per_s": w1.events as f64 / w1.parse_secs,
            "text_bytes": w1.text_bytes,
            "peak_heap_bytes": w1.peak_heap,
            "peak_heap_ratio": w1.peak_heap as f64 / w1.text_bytes as f64,
            "retained_heap_bytes": w1.retained_heap,
            "retained_heap_ratio": w1.retained_heap as f64 / w1.text_bytes as f64,
            "verified": true,
        },
        "w2": {
            "events": w2.events_total,
            "complete": w2.complete,
            "budget_s": w2.budget_s,
            "runs": w2.runs,
            "pages_done": w2.pages_done,
            "events_done": w2.events_done,
            "apply_median_s": w2.secs,
            "apply_events_per_s": w2.events_done as f64 / w2.secs,
            "decode_median_s": w2.decode_secs,
            "decode_runs": w2.decode_runs,
            "decode_events_per_s": w2.events_total as f64 / w2.decode_secs,
            "decode_serde_events_per_s": w2.events_total as f64 / w2.decode_serde_secs,
            "scaling_pages": w2.scaling.2,
            "first_pages_events_per_s": finite(w2.scaling.0),
            "last_pages_events_per_s": finite(w2.scaling.1),
            "text_bytes": w2.text_bytes,
            "retained_heap_bytes": w2.retained_heap,
            "retained_heap_ratio": w2.retained_heap.map(|r| r as f64 / w2.text_bytes as f64),
            "encode_items_bytes": w2.encode.map(|e| e.0),
            "encode_items_mb_per_s": w2.encode.map(|e| e.0 as f64 / 1e6 / e.1),
            "encode_items_serde_mb_per_s": w2.encode.map(|e| e.0 as f64 / 1e6 / e.2),
            "view_breakdown": w2
                .breakdown
                .iter()
                .map(|(part, bytes)| json!({"part": part, "bytes": bytes}))
                .collect::<Vec<_>>(),
            "verified": w2.complete,
        },
    });
    let out = dir.join("results-core.json");
    let text = serde_json::to_string_pretty(&results).unwrap_or_default();
    if let Err(e) = std::fs::write(&out, text + "\n") {
        eprintln!("bench_core: {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    println!("results written to {}", out.display());
    ExitCode::SUCCESS
}
