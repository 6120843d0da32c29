//! FIELD-CASES C16(a) at full size: bounded memory and one typed error. (Linear time is a
//! benchmark, `examples/sse_bench.rs`, never a timed test.)

use forgestream_core::sse::{ParserConfig, SseError, SseItem, SseParser};

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

/// C16(a): `data: ` then 64 MiB of `a` and no newline, in 16 KiB reads, default 16 MiB cap.
#[test]
fn c16a_64_mib_line_gives_one_error_and_bounded_memory() {
    let mut parser = SseParser::new(ParserConfig::default());
    let cap = parser.config().max_frame_bytes;
    assert_eq!(cap, 16 * MIB);
    let mut items = Vec::new();
    parser.feed(b"id: 9\ndata: ", &mut items).unwrap();
    let read = vec![b'a'; 16 * KIB];
    let mut errors = Vec::new();
    for _ in 0..(64 * MIB / read.len()) {
        if let Err(e) = parser.feed(&read, &mut items) {
            errors.push(e);
        }
        assert!(parser.buffered_bytes() <= cap);
    }
    assert_eq!(errors, [SseError::FrameTooLarge { limit_bytes: cap }]);
    assert!(items.is_empty());
    // Once dropped, the frame holds nothing while its tail streams past.
    assert_eq!(parser.buffered_bytes(), 0);
    // The frame ends; the next one parses and the dropped frame's id was not committed.
    parser
        .feed(
            b"\n\ndata: {\"type\":\"turn.done\"}\nid: 10\n\n",
            &mut items,
        )
        .unwrap();
    assert_eq!(parser.frames_too_large(), 1);
    match items.as_slice() {
        [SseItem::Event(e)] => {
            assert_eq!(e.data, "{\"type\":\"turn.done\"}");
            assert_eq!(e.id.as_deref(), Some("10"));
        }
        other => panic!("unexpected items {other:?}"),
    }
}

/// A frame just under the cap is delivered whole; one byte more is refused.
#[test]
fn cap_boundary_is_exact() {
    let cap = 64;
    let config = ParserConfig {
        max_frame_bytes: cap,
    };
    // "data: " + value: the line is counted in full (64 bytes), the data buffer after it is 58.
    let value = "v".repeat(cap - "data: ".len());
    let fits = format!("data: {value}\n\n");
    let mut parser = SseParser::new(config);
    let mut items = Vec::new();
    parser.feed(fits.as_bytes(), &mut items).unwrap();
    assert!(matches!(&items[..], [SseItem::Event(e)] if e.data == value));

    let too_big = format!("data: {value}v\n\n");
    let mut parser = SseParser::new(config);
    items.clear();
    assert_eq!(
        parser.feed(too_big.as_bytes(), &mut items),
        Err(SseError::FrameTooLarge { limit_bytes: cap })
    );
    assert!(items.is_empty());
}

/// Two frames too large in one read: every item of the read is delivered, the call reports the
/// first error, and the counter has both.
#[test]
fn one_read_with_two_oversize_frames_keeps_all_other_items() {
    let config = ParserConfig {
        max_frame_bytes: 16,
    };
    let big = "data: 0123456789abcdef\n\n";
    let input = format!("data: a\n\n{big}: c\n\n{big}data: b\n\n");
    let mut parser = SseParser::new(config);
    let mut items = Vec::new();
    assert!(parser.feed(input.as_bytes(), &mut items).is_err());
    assert_eq!(parser.frames_too_large(), 2);
    let data: Vec<&str> = items
        .iter()
        .filter_map(|i| i.as_event().map(|e| e.data.as_str()))
        .collect();
    assert_eq!(data, ["a", "b"]);
    assert_eq!(items.iter().filter(|i| **i == SseItem::Comment).count(), 1);
}
