//! Runs the SSE fixture corpus `tests/fixtures/sse/*.json` (schema: that folder's README.md).
//!
//! Every case is fed three ways — whole (one read per connection), at its `splits`, and one byte
//! per read — and each way must give exactly the `expected` items.

use std::path::{Path, PathBuf};

use forgestream_core::sse::{ParserConfig, SseError, SseItem, SseParser};
use serde_json::{json, Value};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sse")
}

fn decode_hex(hex: &str) -> Vec<u8> {
    assert!(hex.len() % 2 == 0, "odd hex length");
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
        .collect()
}

/// One fixture case, loaded.
struct Case {
    name: String,
    input: Vec<u8>,
    splits: Vec<usize>,
    reconnects: Vec<usize>,
    config: ParserConfig,
    initial_last_event_id: Option<String>,
    expected: Value,
}

fn offsets(case: &Value, key: &str) -> Vec<usize> {
    case.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| v.as_u64().expect("offset") as usize)
                .collect()
        })
        .unwrap_or_default()
}

fn load(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).expect("read case");
    let case: Value = serde_json::from_str(&text).expect("case is JSON");
    let input = match (case.get("input"), case.get("input_hex")) {
        (Some(Value::String(s)), None) => s.as_bytes().to_vec(),
        (None, Some(Value::String(h))) => decode_hex(h),
        _ => panic!("{}: exactly one of input / input_hex", path.display()),
    };
    let mut config = ParserConfig::default();
    if let Some(max) = case.get("max_frame_bytes").and_then(Value::as_u64) {
        config.max_frame_bytes = max as usize;
    }
    for key in ["name", "source", "expected"] {
        assert!(case.get(key).is_some(), "{}: missing {key}", path.display());
    }
    let splits = offsets(&case, "splits");
    let reconnects = offsets(&case, "reconnects");
    for &at in splits.iter().chain(&reconnects) {
        assert!(
            at <= input.len(),
            "{}: offset {at} past input",
            path.display()
        );
    }
    Case {
        name: case["name"].as_str().expect("name").to_owned(),
        input,
        splits,
        reconnects,
        config,
        initial_last_event_id: case
            .get("initial_last_event_id")
            .and_then(Value::as_str)
            .map(str::to_owned),
        expected: case["expected"].clone(),
    }
}

/// Feeds `case.input` cut at `cuts` (read boundaries) plus its reconnect points, and returns
/// the observed result in the corpus' `expected` shape.
fn run(case: &Case, cuts: &[usize]) -> Value {
    let mut parser = SseParser::new(case.config);
    if let Some(id) = &case.initial_last_event_id {
        parser.set_last_event_id(id);
    }
    let mut bounds: Vec<usize> = cuts.iter().chain(&case.reconnects).copied().collect();
    bounds.push(case.input.len());
    bounds.sort_unstable();
    bounds.dedup();
    let mut items = Vec::new();
    let mut start = 0;
    let mut reported_errors = 0u64;
    for end in bounds {
        match parser.feed(&case.input[start..end], &mut items) {
            Ok(()) => {}
            Err(SseError::FrameTooLarge { limit_bytes }) => {
                assert_eq!(limit_bytes, case.config.max_frame_bytes, "{}", case.name);
                reported_errors += 1;
            }
        }
        assert!(
            parser.buffered_bytes() <= case.config.max_frame_bytes,
            "{}: buffer over the cap",
            case.name
        );
        if case.reconnects.contains(&end) {
            parser.finish();
        }
        start = end;
    }
    parser.finish();
    let dropped = parser.frames_too_large();
    // Every dropped frame is counted; each read that dropped one returned an error.
    assert!(reported_errors <= dropped, "{}", case.name);
    assert_eq!(reported_errors == 0, dropped == 0, "{}", case.name);
    observed(&items, parser.last_event_id(), dropped)
}

fn observed(items: &[SseItem], last_event_id: &str, dropped: u64) -> Value {
    let mut events = Vec::new();
    let mut comments = 0;
    let mut retries = Vec::new();
    for item in items {
        match item {
            SseItem::Event(e) => events.push(json!({
                "type": e.event_type, "data": e.data, "id": e.id, "last_event_id": e.last_event_id,
            })),
            SseItem::Comment => comments += 1,
            SseItem::Retry(ms) => retries.push(json!(ms)),
        }
    }
    let errors: Vec<Value> = (0..dropped).map(|_| json!("frame_too_large")).collect();
    json!({
        "events": events, "comments": comments, "retries": retries,
        "last_event_id": last_event_id, "errors": errors,
    })
}

fn cases() -> Vec<Case> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load(p)).collect()
}

#[test]
fn corpus_has_the_required_cases() {
    let all = cases();
    assert!(all.len() >= 20, "only {} cases", all.len());
    let sources: Vec<String> = std::fs::read_dir(corpus_dir())
        .expect("corpus dir")
        .filter_map(|e| std::fs::read_to_string(e.ok()?.path()).ok())
        .collect();
    for needed in [
        "FIELD-CASES C1",
        "FIELD-CASES C2",
        "FIELD-CASES C3",
        "FIELD-CASES C15",
    ] {
        assert!(
            sources.iter().any(|s| s.contains(needed)),
            "no case from {needed}"
        );
    }
    assert!(sources.iter().any(|s| s.contains("FIELD-CASES C16")));
}

#[test]
fn every_case_fed_whole() {
    for case in cases() {
        assert_eq!(run(&case, &[]), case.expected, "{} (whole)", case.name);
    }
}

#[test]
fn every_case_fed_at_its_splits() {
    for case in cases() {
        assert_eq!(
            run(&case, &case.splits),
            case.expected,
            "{} (splits)",
            case.name
        );
    }
}

#[test]
fn every_case_fed_one_byte_per_read() {
    for case in cases() {
        let every: Vec<usize> = (1..case.input.len()).collect();
        assert_eq!(run(&case, &every), case.expected, "{} (bytes)", case.name);
    }
}

#[test]
fn every_case_fed_with_empty_reads_between() {
    // An empty read (a zero-length fetch chunk) must change nothing, even between CR and LF.
    for case in cases() {
        let mut parser = SseParser::new(case.config);
        if let Some(id) = &case.initial_last_event_id {
            parser.set_last_event_id(id);
        }
        let mut items = Vec::new();
        for (i, byte) in case.input.iter().enumerate() {
            if case.reconnects.contains(&i) {
                parser.finish();
            }
            let _ = parser.feed(&[], &mut items);
            let _ = parser.feed(std::slice::from_ref(byte), &mut items);
        }
        parser.finish();
        let got = observed(&items, parser.last_event_id(), parser.frames_too_large());
        assert_eq!(got, case.expected, "{} (empty reads)", case.name);
    }
}
