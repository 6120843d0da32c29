//! Property tests of the reducer over the recorded streams: chunking, disconnect/replay,
//! persisted order, and arbitrary frame data.
mod support;

use forgestream_core::reduce::{ReducerConfig, SessionView};
use forgestream_core::wire;
use proptest::prelude::*;
use serde_json::Value;
use support::{apply_frames, content_summary, read_fixture_json, read_fixture_text, sse_frames};

/// (create stream, turn id) of recorded turns with rich content.
const STREAMS: &[(&str, &str)] = &[
    (
        "recorded/text/create.sse",
        "01m8nc61gs108x13stcwwaemc6.local",
    ),
    (
        "recorded/readtool/create.sse",
        "01m8nc620cqrt9dte95q98ax6d.local",
    ),
    (
        "recorded/subagent/create.sse",
        "01m8nc63mn25s1q06xd6ztm46z.local",
    ),
    (
        "recorded/approve-allow/turn1-create.sse",
        "01m8nc62da3af6cbhs3et6zm17.local",
    ),
    (
        "recorded/ask/turn1-create.sse",
        "01m8nc63b2sa8ev64rysyetr44.local",
    ),
    (
        "recorded/cancel/create.sse",
        "01m8nc7z459hgyjjzc9mzacz22.local",
    ),
    (
        "recorded/error/create.sse",
        "01m8ncb2sdjnw0bmsz1sx88dxb.local",
    ),
];

fn reference(bytes: &[u8], turn_id: &str) -> SessionView {
    let mut view = SessionView::new("s", ReducerConfig::default());
    assert!(apply_frames(&mut view, turn_id, &sse_frames(bytes, &[])).is_empty());
    view
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Any chunking of the bytes gives the same view, cursor and warnings.
    #[test]
    fn any_chunking_same_view(which in 0..STREAMS.len(), cuts in proptest::collection::vec(any::<u16>(), 0..40)) {
        let (file, turn_id) = STREAMS[which];
        let bytes = read_fixture_text(file).into_bytes();
        let expected = reference(&bytes, turn_id).summary();
        let splits: Vec<usize> = cuts.iter().map(|c| *c as usize % bytes.len().max(1)).collect();
        let mut view = SessionView::new("s", ReducerConfig::default());
        prop_assert!(apply_frames(&mut view, turn_id, &sse_frames(&bytes, &splits)).is_empty());
        prop_assert_eq!(support::checked_summary(&view), expected);
    }

    /// Disconnect after any frames; the server replays from the cursor, from 1 (cursor
    /// ignored), or from an earlier point: same view and cursor.
    #[test]
    fn disconnects_and_replays_same_view(
        which in 0..STREAMS.len(),
        drops in proptest::collection::vec((any::<u16>(), 0u8..3, any::<u16>()), 0..8),
    ) {
        let (file, turn_id) = STREAMS[which];
        let bytes = read_fixture_text(file).into_bytes();
        let frames = sse_frames(&bytes, &[]);
        let expected_view = reference(&bytes, turn_id);
        let mut points: Vec<(usize, u8, u16)> =
            drops.iter().map(|(p, mode, back)| (*p as usize % frames.len(), *mode, *back)).collect();
        points.sort_by_key(|p| p.0);
        let mut view = SessionView::new("s", ReducerConfig::default());
        let mut start = 0usize;
        for (point, mode, back) in points {
            if point > start {
                prop_assert!(apply_frames(&mut view, turn_id, &frames[start..point]).is_empty());
            }
            let cursor = view.last_sequence_number(turn_id).unwrap_or(0) as usize;
            // Where the next connection starts replaying (index into frames; seq n is index n-1).
            start = match mode {
                0 => cursor,
                1 => 0,
                _ => cursor.saturating_sub(back as usize % (cursor + 1)),
            };
        }
        prop_assert!(apply_frames(&mut view, turn_id, &frames[start.min(frames.len())..]).is_empty());
        prop_assert_eq!(content_summary(&view), content_summary(&expected_view));
        prop_assert_eq!(view.last_sequence_number(turn_id), expected_view.last_sequence_number(turn_id));
    }

    /// Session timeline items in any order (any paging) give the same view.
    #[test]
    fn session_events_any_order_same_view(
        folder in prop::sample::select(vec!["subagent", "approve-allow", "ask", "readtool"]),
        keys in proptest::collection::vec(any::<u32>(), 64),
    ) {
        let page = read_fixture_json(&format!("recorded/{folder}/session-events.json"));
        let items: Vec<wire::SessionEventItem> = serde_json::from_value(page["data"].clone()).unwrap();
        let mut reference = SessionView::new("s", ReducerConfig::default());
        reference.apply_session_events(items.clone()).unwrap();
        let mut shuffled: Vec<(u32, wire::SessionEventItem)> =
            items.into_iter().enumerate().map(|(i, it)| (keys[i % keys.len()].wrapping_add(i as u32), it)).collect();
        shuffled.sort_by_key(|(k, _)| *k);
        let mut view = SessionView::new("s", ReducerConfig::default());
        // Two "pages", applied in separate calls.
        let half = shuffled.len() / 2;
        let second = shuffled.split_off(half);
        view.apply_session_events(shuffled.into_iter().map(|(_, it)| it)).unwrap();
        view.apply_session_events(second.into_iter().map(|(_, it)| it)).unwrap();
        prop_assert_eq!(content_summary(&view), content_summary(&reference));
    }

    /// Arbitrary text as frame data never panics and never loses what was applied.
    #[test]
    fn arbitrary_data_never_panics(data in proptest::collection::vec(any::<String>(), 1..20), seqs in proptest::collection::vec(proptest::option::of(0u64..30), 1..20)) {
        let mut view = SessionView::new("s", ReducerConfig::default());
        for (i, d) in data.iter().enumerate() {
            let _ = view.apply_live("t1", seqs.get(i).copied().flatten(), d);
        }
        let _ = support::checked_summary(&view);
    }

    /// Recorded frames with JSON values replaced at random paths never panic.
    #[test]
    fn mutated_events_never_panic(
        which in 0..STREAMS.len(),
        edits in proptest::collection::vec((any::<u16>(), any::<u16>(), 0u8..8), 1..30),
    ) {
        let (file, turn_id) = STREAMS[which];
        let frames = sse_frames(read_fixture_text(file).as_bytes(), &[]);
        let mut view = SessionView::new("s", ReducerConfig { max_events_per_turn: 1000, ..ReducerConfig::default() });
        for (frame_pick, key_pick, replacement) in edits {
            let (seq, data) = &frames[frame_pick as usize % frames.len()];
            let mut value: Value = serde_json::from_str(data).unwrap();
            mutate(&mut value, key_pick as usize, replacement);
            let _ = view.apply_live(turn_id, seq.map(|s| s + u64::from(frame_pick % 3)), &value.to_string());
            let _ = view.apply_live("other", None, &value.to_string());
        }
        let _ = support::checked_summary(&view);
        let _ = forgestream_core::respond::continuation(&view, &[forgestream_core::respond::Decision::AuthDone]);
    }
}

/// Replaces one value somewhere in `value` (depth-first pick) with a hostile one.
fn mutate(value: &mut Value, pick: usize, replacement: u8) {
    fn visit(v: &mut Value, n: &mut usize, pick: usize, rep: &Value) -> bool {
        if *n == pick {
            *v = rep.clone();
            return true;
        }
        *n += 1;
        match v {
            Value::Object(map) => map.values_mut().any(|c| visit(c, n, pick, rep)),
            Value::Array(list) => list.iter_mut().any(|c| visit(c, n, pick, rep)),
            _ => false,
        }
    }
    let rep = match replacement {
        0 => Value::Null,
        1 => Value::from("main"),
        2 => Value::from(-1),
        3 => serde_json::json!([]),
        4 => serde_json::json!({}),
        5 => Value::from("model.message.delta"),
        6 => Value::from(u64::MAX),
        _ => Value::from("01m8nc62dyshe8bfj55a0nb14q"),
    };
    let mut n = 0;
    let total = {
        fn count(v: &Value) -> usize {
            1 + match v {
                Value::Object(m) => m.values().map(count).sum(),
                Value::Array(a) => a.iter().map(count).sum(),
                _ => 0,
            }
        }
        count(value)
    };
    visit(value, &mut n, pick % total.max(1), &rep);
}
