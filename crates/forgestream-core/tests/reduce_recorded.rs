//! Every recorded TrueForge stream (tests/fixtures/recorded): the live create stream, a full
//! subscribe replay, a truncated create resumed with subscribe-after-5, the persisted turn
//! listing and the session timeline all reduce to the same view; wire types round-trip.
mod support;

use forgestream_core::reduce::{ReducerConfig, SessionView};
use forgestream_core::wire;
use serde_json::Value;
use support::{apply_frames, content_summary, read_fixture_json, read_fixture_text, sse_frames};

/// (folder, file prefix, turn id) of each recorded turn.
const TURNS: &[(&str, &str)] = &[
    ("text", ""),
    ("readtool", ""),
    ("subagent", ""),
    ("error", ""),
    ("cancel", ""),
    ("gone412", ""),
    ("approve-allow", "turn1-"),
    ("approve-allow", "turn2-"),
    ("ask", "turn1-"),
    ("ask", "turn2-"),
];

fn turn_id(folder: &str, prefix: &str) -> String {
    let turn = read_fixture_json(&format!("recorded/{folder}/{prefix}turn.json"));
    turn["data"]["id"].as_str().expect("turn id").to_string()
}

fn live(folder: &str, prefix: &str, file: &str) -> Option<Vec<support::Frame>> {
    let path = support::fixtures_dir().join(format!("recorded/{folder}/{prefix}{file}"));
    let text = std::fs::read(path).ok()?;
    Some(sse_frames(&text, &[]))
}

fn new_view() -> SessionView {
    SessionView::new("s", ReducerConfig::default())
}

#[test]
fn live_replay_resume_and_persisted_give_the_same_view() {
    for &(folder, prefix) in TURNS {
        let tid = turn_id(folder, prefix);
        let create = live(folder, prefix, "create.sse").expect("create.sse");
        let mut from_create = new_view();
        assert!(apply_frames(&mut from_create, &tid, &create).is_empty());
        let reference = content_summary(&from_create);
        let last = create.last().and_then(|f| f.0);
        assert_eq!(
            from_create.last_sequence_number(&tid),
            last,
            "{folder}/{prefix}"
        );

        if let Some(sub0) = live(folder, prefix, "subscribe-0.sse") {
            let mut v = new_view();
            assert!(apply_frames(&mut v, &tid, &sub0).is_empty());
            assert_eq!(
                content_summary(&v),
                reference,
                "{folder}/{prefix} subscribe-0"
            );
        }
        if let Some(after5) = live(folder, prefix, "subscribe-after-5.sse") {
            let mut v = new_view();
            assert!(apply_frames(&mut v, &tid, &create[..5.min(create.len())]).is_empty());
            assert!(apply_frames(&mut v, &tid, &after5).is_empty());
            assert_eq!(
                content_summary(&v),
                reference,
                "{folder}/{prefix} resume after 5"
            );
            // A server that ignores the cursor replays everything: same view, same cursor.
            assert!(apply_frames(&mut v, &tid, &create).is_empty());
            assert_eq!(
                content_summary(&v),
                reference,
                "{folder}/{prefix} full replay"
            );
            assert_eq!(v.last_sequence_number(&tid), last);
        }

        let events = read_fixture_json(&format!("recorded/{folder}/{prefix}turn-events.json"));
        let events: Vec<wire::Event> = serde_json::from_value(events["data"].clone()).unwrap();
        let mut persisted = new_view();
        persisted.apply_turn_events(&tid, events).unwrap();
        assert_eq!(
            content_summary(&persisted),
            reference,
            "{folder}/{prefix} turn events"
        );

        // GET turn on top of either changes nothing.
        let turn: wire::Turn = serde_json::from_value(
            read_fixture_json(&format!("recorded/{folder}/{prefix}turn.json"))["data"].clone(),
        )
        .unwrap();
        persisted.apply_turn(&turn);
        assert_eq!(
            content_summary(&persisted),
            reference,
            "{folder}/{prefix} + GET turn"
        );
    }
}

#[test]
fn session_timeline_equals_live_turns_in_chain_order() {
    for folder in [
        "text",
        "readtool",
        "subagent",
        "error",
        "cancel",
        "approve-allow",
        "ask",
    ] {
        let turns: Vec<Value> = read_fixture_json(&format!("recorded/{folder}/turns.json"))["data"]
            .as_array()
            .unwrap()
            .clone();
        let mut live_view = new_view();
        // Live streams in creation order (turns.json may list newest first).
        let mut prefixes: Vec<&str> = TURNS
            .iter()
            .filter(|t| t.0 == folder)
            .map(|t| t.1)
            .collect();
        prefixes.sort();
        for prefix in &prefixes {
            let tid = turn_id(folder, prefix);
            let frames = live(folder, prefix, "create.sse").unwrap();
            assert!(apply_frames(&mut live_view, &tid, &frames).is_empty());
        }
        assert_eq!(turns.len(), prefixes.len(), "{folder}");
        let items = read_fixture_json(&format!("recorded/{folder}/session-events.json"));
        let items: Vec<wire::SessionEventItem> =
            serde_json::from_value(items["data"].clone()).unwrap();
        let mut timeline = new_view();
        timeline.apply_session_events(items.clone()).unwrap();
        assert_eq!(
            content_summary(&timeline),
            content_summary(&live_view),
            "{folder} timeline"
        );
        // Oldest-first order, too.
        let mut reversed = new_view();
        reversed
            .apply_session_events(items.into_iter().rev())
            .unwrap();
        assert_eq!(
            content_summary(&reversed),
            content_summary(&live_view),
            "{folder} reversed"
        );
    }
}

/// Decode → encode gives back the recorded JSON exactly (every recorded field is modelled).
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(value: &Value, what: &str) {
    let decoded: T =
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
    let encoded = serde_json::to_value(&decoded).unwrap();
    assert_eq!(&encoded, value, "{what}");
}

#[test]
fn wire_types_round_trip_every_recorded_body() {
    let root = support::fixtures_dir().join("recorded");
    let mut checked = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let rel = format!(
                "recorded/{}/{name}",
                dir.file_name().unwrap().to_string_lossy()
            );
            if name.ends_with(".sse") {
                for (_, data) in sse_frames(read_fixture_text(&rel).as_bytes(), &[]) {
                    let value: Value = serde_json::from_str(&data).unwrap();
                    round_trip::<wire::Event>(&value, &rel);
                    let event = wire::Event::from_json(&data).unwrap();
                    assert!(
                        !matches!(event, wire::Event::Unknown { .. }),
                        "{rel}: {data}"
                    );
                    checked += 1;
                }
            } else if name.ends_with("turn-events.json") {
                round_trip::<wire::Listing<wire::Event>>(&read_fixture_json(&rel), &rel);
                checked += 1;
            } else if name == "session-events.json" {
                round_trip::<wire::SessionEventsPage>(&read_fixture_json(&rel), &rel);
                checked += 1;
            } else if name.ends_with("turns.json") {
                round_trip::<wire::Listing<wire::Turn>>(&read_fixture_json(&rel), &rel);
                checked += 1;
            } else if name.ends_with("turn.json") {
                round_trip::<wire::Single<wire::Turn>>(&read_fixture_json(&rel), &rel);
                checked += 1;
            } else if name.ends_with(".json") && name != "session.json" {
                let value = read_fixture_json(&rel);
                if value.get("error").is_some() {
                    round_trip::<wire::ErrorBody>(&value, &rel);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 300, "only {checked} bodies checked");
}
