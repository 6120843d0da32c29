//! Every recorded TrueForge response body (`tests/fixtures/recorded/*/*.sse`) parses without
//! error, in any chunking, into frames whose ids run 1..N (or from N+1 for `subscribe-after-N`,
//! K+1 when a `Last-Event-ID: K` header won), matching the frame counts in each `README.txt`.

use std::path::{Path, PathBuf};

use forgestream_core::sse::{ParserConfig, SseEvent, SseItem, SseParser};

fn recorded_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/recorded")
}

fn parse(bytes: &[u8], read_size: usize) -> (Vec<SseEvent>, String) {
    let mut parser = SseParser::new(ParserConfig::default());
    let mut items = Vec::new();
    for chunk in bytes.chunks(read_size.max(1)) {
        parser.feed(chunk, &mut items).expect("no protocol error");
    }
    parser.finish();
    let events = items
        .into_iter()
        .filter_map(|item| match item {
            SseItem::Event(e) => Some(e),
            _ => None,
        })
        .collect();
    (events, parser.last_event_id().to_owned())
}

/// The first sequence number the file should hold, from its name.
fn first_sequence_number(file_name: &str) -> u64 {
    let after = |marker: &str| {
        file_name.split(marker).nth(1).map(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u64>().expect("number after marker") + 1
        })
    };
    after("last-event-id-")
        .or_else(|| after("after-"))
        .unwrap_or(1)
}

/// `frames=N` and the first of `seqs=[a]..[b]` from the scenario README line naming the file.
fn readme_facts(dir: &Path, file_name: &str) -> (u64, Option<u64>) {
    let readme = std::fs::read_to_string(dir.join("README.txt")).expect("README.txt");
    let needle = format!("-> {file_name}");
    let line = readme
        .lines()
        .find(|l| l.contains(&needle))
        .unwrap_or_else(|| panic!("{} not in README", file_name));
    let number_after = |key: &str| {
        line.split(key).nth(1).and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u64>().ok()
        })
    };
    (
        number_after("frames=").expect("frames=N"),
        number_after("seqs=["),
    )
}

fn status_is_200(sse_path: &Path) -> bool {
    let headers = sse_path.with_extension("headers.txt");
    let text = std::fs::read_to_string(&headers).expect("headers file");
    text.lines().next().is_some_and(|l| l.contains(" 200 "))
}

#[test]
fn recorded_streams_parse_into_consecutive_sequence_numbers() {
    let mut files = 0;
    let mut frames = 0;
    let mut scenarios: Vec<PathBuf> = std::fs::read_dir(recorded_dir())
        .expect("recorded dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    scenarios.sort();
    for dir in scenarios {
        let mut sse_files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .expect("scenario dir")
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "sse"))
            .collect();
        sse_files.sort();
        for path in sse_files {
            let name = path.file_name().and_then(|n| n.to_str()).expect("name");
            let bytes = std::fs::read(&path).expect("read .sse");
            let (expected_frames, readme_first) = readme_facts(&dir, name);
            let (events, last_event_id) = parse(&bytes, bytes.len());
            let label = path.display();
            assert_eq!(events.len() as u64, expected_frames, "{label}: frame count");
            if !status_is_200(&path) {
                // 404/412 answers are JSON bodies, not streams: nothing may come out of them.
                assert!(events.is_empty(), "{label}");
                continue;
            }
            let first = first_sequence_number(name);
            if let Some(readme_first) = readme_first {
                assert_eq!(
                    first, readme_first,
                    "{label}: README disagrees on the first seq"
                );
            }
            for (offset, event) in events.iter().enumerate() {
                let seq = (first + offset as u64).to_string();
                assert_eq!(event.id.as_deref(), Some(seq.as_str()), "{label}");
                assert_eq!(event.last_event_id, seq, "{label}");
                assert_eq!(event.event_type, None, "{label}: TrueForge sends no event:");
                let json: serde_json::Value =
                    serde_json::from_str(&event.data).expect("data is one JSON value");
                assert!(json["type"].is_string(), "{label}: no type");
            }
            if let Some(last) = events.last() {
                assert_eq!(last_event_id, last.last_event_id, "{label}");
            }
            // Any chunking gives the same frames.
            for read_size in [1, 2, 3, 7, 64, 1000] {
                assert_eq!(
                    parse(&bytes, read_size).0,
                    events,
                    "{label} in {read_size}-byte reads"
                );
            }
            files += 1;
            frames += events.len();
        }
    }
    assert!(files >= 30, "only {files} recorded streams found");
    assert!(frames > 500, "only {frames} frames");
}
