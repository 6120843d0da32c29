//! Property tests of the SSE parser: chunking never matters, arbitrary bytes never panic, the
//! frame cap bounds the buffer, and the push parser agrees with a naive whole-input reading of
//! WHATWG HTML §9.2.6 written independently below.

use forgestream_core::sse::{ParserConfig, SseEvent, SseItem, SseParser};
use proptest::prelude::*;

/// Feeds `bytes` cut at `cuts` (sorted or not, any values) and ends the connection.
/// Returns the items, the dropped-frame count and the last event ID.
fn feed_cut(config: ParserConfig, bytes: &[u8], cuts: &[usize]) -> (Vec<SseItem>, u64, String) {
    let mut bounds: Vec<usize> = cuts.iter().map(|&c| c.min(bytes.len())).collect();
    bounds.push(bytes.len());
    bounds.sort_unstable();
    let mut parser = SseParser::new(config);
    let mut items = Vec::new();
    let mut start = 0;
    for end in bounds {
        let _ = parser.feed(&bytes[start..end], &mut items);
        assert!(parser.buffered_bytes() <= config.max_frame_bytes);
        start = end;
    }
    parser.finish();
    (
        items,
        parser.frames_too_large(),
        parser.last_event_id().to_owned(),
    )
}

/// The spec read literally over the whole input at once: decode (stripping one BOM), split
/// into lines, process each line; the unterminated last line and frame are dropped.
fn oracle(bytes: &[u8]) -> (Vec<SseItem>, String) {
    let bytes = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    let mut lines = Vec::new();
    let mut current = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                lines.push(std::mem::take(&mut current));
            }
            '\n' => lines.push(std::mem::take(&mut current)),
            other => current.push(other),
        }
    }
    let mut items = Vec::new();
    let (mut data, mut event_type, mut id_buffer) = (String::new(), String::new(), String::new());
    let mut last_event_id = String::new();
    for line in lines {
        if line.is_empty() {
            last_event_id = id_buffer.clone();
            if data.is_empty() {
                event_type.clear();
                continue;
            }
            data.pop(); // the trailing LF
            items.push(SseItem::Event(SseEvent {
                event_type: (!event_type.is_empty()).then(|| event_type.clone()),
                data: std::mem::take(&mut data),
                id: None, // filled below: the oracle tracks only the buffer, see `strip_ids`
                last_event_id: last_event_id.clone(),
            }));
            event_type.clear();
            continue;
        }
        if line.starts_with(':') {
            items.push(SseItem::Comment);
            continue;
        }
        let (name, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line.as_str(), ""),
        };
        match name {
            "event" => event_type = value.to_owned(),
            "data" => {
                data.push_str(value);
                data.push('\n');
            }
            "id" if !value.contains('\0') => id_buffer = value.to_owned(),
            "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                items.push(SseItem::Retry(value.parse().unwrap_or(u64::MAX)));
            }
            _ => {}
        }
    }
    // "Once the end of the file is reached, any pending data must be discarded": the buffer of
    // an unterminated frame never reached a dispatch, so `last_event_id` is the dispatched one.
    (items, last_event_id)
}

/// The oracle keeps only the spec's buffers, so it cannot tell a frame's own `id` apart; compare
/// everything else.
fn strip_ids(items: &[SseItem]) -> Vec<SseItem> {
    items
        .iter()
        .map(|item| match item {
            SseItem::Event(e) => SseItem::Event(SseEvent {
                id: None,
                ..e.clone()
            }),
            other => other.clone(),
        })
        .collect()
}

fn big_config() -> ParserConfig {
    ParserConfig {
        max_frame_bytes: usize::MAX,
    }
}

/// Text pieces that exercise every rule, including multi-byte UTF-8, NUL and a BOM.
fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"data:".to_vec()),
        Just(b"data: ".to_vec()),
        Just(b"data".to_vec()),
        Just(b"event: ".to_vec()),
        Just(b"id: ".to_vec()),
        Just(b"id".to_vec()),
        Just(b"retry: ".to_vec()),
        Just(b":".to_vec()),
        Just(b" ".to_vec()),
        Just(b"\0".to_vec()),
        Just(vec![0xEF, 0xBB, 0xBF]),
        Just("€😀é".as_bytes().to_vec()),
        Just(vec![0xFF]),
        Just(vec![0xE2, 0x82]),
        "[0-9]{1,3}".prop_map(String::into_bytes),
        "[a-z]{1,4}".prop_map(String::into_bytes),
    ]
}

fn stream() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(piece(), 0..60).prop_map(|pieces| pieces.concat())
}

fn cuts() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..400, 0..40)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any chunking of a stream gives the same items as feeding it whole.
    #[test]
    fn chunking_never_changes_the_items(bytes in stream(), cuts in cuts()) {
        prop_assert_eq!(feed_cut(big_config(), &bytes, &cuts), feed_cut(big_config(), &bytes, &[]));
    }

    /// The push parser equals the naive whole-input reading of the spec.
    #[test]
    fn agrees_with_the_whole_input_oracle(bytes in stream(), cuts in cuts()) {
        let (items, _, last_event_id) = feed_cut(big_config(), &bytes, &cuts);
        let (expected, expected_last) = oracle(&bytes);
        prop_assert_eq!(strip_ids(&items), expected);
        prop_assert_eq!(last_event_id, expected_last);
    }

    /// Arbitrary bytes in arbitrary chunks never panic, with any cap, and never hold more than
    /// the cap (checked after every read inside `feed_cut`); the cap verdicts do not depend on
    /// the chunking either.
    #[test]
    fn arbitrary_bytes_never_panic_and_stay_under_the_cap(
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        cuts in cuts(),
        cap in 0usize..80,
    ) {
        let config = ParserConfig { max_frame_bytes: cap };
        let chunked = feed_cut(config, &bytes, &cuts);
        let whole = feed_cut(config, &bytes, &[]);
        prop_assert_eq!(chunked, whole);
    }

    /// With a small cap, generated streams still agree across chunkings, errors included.
    #[test]
    fn capped_streams_are_chunking_independent(bytes in stream(), cuts in cuts(), cap in 0usize..40) {
        let config = ParserConfig { max_frame_bytes: cap };
        let bytes_per_read: Vec<usize> = (1..bytes.len()).collect();
        prop_assert_eq!(feed_cut(config, &bytes, &cuts), feed_cut(config, &bytes, &[]));
        prop_assert_eq!(feed_cut(config, &bytes, &bytes_per_read), feed_cut(config, &bytes, &[]));
    }

    /// Frames well under the cap are never affected by it.
    #[test]
    fn cap_does_not_touch_small_frames(bytes in stream(), cuts in cuts()) {
        let roomy = ParserConfig { max_frame_bytes: bytes.len() * 3 + 3 };
        let (items, dropped, last) = feed_cut(roomy, &bytes, &cuts);
        prop_assert_eq!(dropped, 0);
        prop_assert_eq!((items, last), {
            let (i, _, l) = feed_cut(big_config(), &bytes, &[]);
            (i, l)
        });
    }
}
