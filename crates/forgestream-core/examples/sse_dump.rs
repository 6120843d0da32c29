//! Runs the SSE parser over byte streams given on stdin, for the differential test
//! (`tests/diff/sse-diff.mjs`) and for poking at the parser by hand.
//!
//! Input: JSON lines, each one case, either `{"chunks_hex":["6461",…]}` (one connection, one
//! network read per string) or `{"connections":[["…",…],["…"]]}` (the parser's `finish()`
//! between connections, so the last event ID carries over). Optional `"max_frame_bytes"`.
//!
//! Output: one JSON line per case:
//! `{"items":[{"kind":"event","type":null|"t","data":"…","id":null|"…","last_event_id":"…"},
//! {"kind":"comment"},{"kind":"retry","ms":N},{"kind":"error","limit_bytes":N},
//! {"kind":"finish"}],"last_event_id":"…","frames_too_large":N}`. `error` marks a read whose
//! `feed` returned an error, placed after that read's items; `finish` marks each end of a
//! connection.
//!
//! `cargo run --example sse_dump -p forgestream-core < cases.jsonl`

use std::error::Error;
use std::io::{self, BufRead, Write};

use forgestream_core::sse::{ParserConfig, SseError, SseItem, SseParser};
use serde_json::{json, Value};

fn nibble(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

fn decode_hex(hex: &str) -> Result<Vec<u8>, String> {
    let digits = hex.as_bytes();
    if digits.len() % 2 != 0 {
        return Err(format!("odd-length hex string of {} digits", digits.len()));
    }
    digits
        .chunks_exact(2)
        .map(|pair| match (nibble(pair[0]), nibble(pair[1])) {
            (Some(high), Some(low)) => Ok(high << 4 | low),
            _ => Err(format!("bad hex digits {pair:?}")),
        })
        .collect()
}

fn connections(case: &Value) -> Result<Vec<Vec<Vec<u8>>>, String> {
    let as_reads = |list: &Value| -> Result<Vec<Vec<u8>>, String> {
        list.as_array()
            .ok_or("a connection must be an array of hex strings")?
            .iter()
            .map(|chunk| decode_hex(chunk.as_str().ok_or("chunks must be hex strings")?))
            .collect()
    };
    match (case.get("chunks_hex"), case.get("connections")) {
        (Some(chunks), None) => Ok(vec![as_reads(chunks)?]),
        (None, Some(Value::Array(list))) => list.iter().map(as_reads).collect(),
        _ => Err("need exactly one of chunks_hex / connections".into()),
    }
}

fn item_json(item: &SseItem) -> Value {
    match item {
        SseItem::Event(e) => json!({
            "kind": "event", "type": e.event_type, "data": e.data, "id": e.id,
            "last_event_id": e.last_event_id,
        }),
        SseItem::Comment => json!({"kind": "comment"}),
        SseItem::Retry(ms) => json!({"kind": "retry", "ms": ms}),
    }
}

fn run(case: &Value) -> Result<Value, String> {
    let mut config = ParserConfig::default();
    if let Some(max) = case.get("max_frame_bytes").and_then(Value::as_u64) {
        config.max_frame_bytes = usize::try_from(max).map_err(|e| e.to_string())?;
    }
    let mut parser = SseParser::new(config);
    let mut out = Vec::new();
    let mut items = Vec::new();
    for reads in connections(case)? {
        for read in reads {
            let result = parser.feed(&read, &mut items);
            out.extend(items.drain(..).map(|item| item_json(&item)));
            if let Err(SseError::FrameTooLarge { limit_bytes }) = result {
                out.push(json!({"kind": "error", "limit_bytes": limit_bytes}));
            }
        }
        parser.finish();
        out.push(json!({"kind": "finish"}));
    }
    Ok(json!({
        "items": out,
        "last_event_id": parser.last_event_id(),
        "frames_too_large": parser.frames_too_large(),
    }))
}

fn main() -> Result<(), Box<dyn Error>> {
    let stdin = io::stdin();
    let stdout = io::stdout();
    let mut stdout = io::BufWriter::new(stdout.lock());
    for (number, line) in stdin.lock().lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let case: Value = serde_json::from_str(&line)
            .map_err(|e| format!("stdin line {}: not JSON: {e}", number + 1))?;
        let result = run(&case).map_err(|e| format!("stdin line {}: {e}", number + 1))?;
        serde_json::to_writer(&mut stdout, &result)?;
        stdout.write_all(b"\n")?;
    }
    stdout.flush()?;
    Ok(())
}
