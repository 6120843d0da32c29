//! The parser's memory behaviour (issue 18 item 13: mutants replacing `buffered_bytes()` by 0,
//! dropping the line-buffer shrink or `config()` survived): what it holds between reads is
//! reported exactly, never exceeds the frame cap, and a long line's buffer is given back.
use forgestream_core::sse::{ParserConfig, SseItem, SseParser};

const KIB: usize = 1024;

#[test]
fn buffered_bytes_counts_the_partial_line_and_frame_exactly() {
    let mut parser = SseParser::new(ParserConfig::default());
    let mut items = Vec::new();
    assert_eq!(parser.buffered_bytes(), 0);
    parser.feed(b"data: abc", &mut items).unwrap();
    assert_eq!(
        parser.buffered_bytes(),
        "data: abc".len(),
        "the partial line"
    );
    parser.feed(b"def\nid: 7\n", &mut items).unwrap();
    // Two complete lines: the frame holds `abcdef` and `7`.
    assert_eq!(parser.buffered_bytes(), "abcdef".len() + "7".len());
    parser.feed(b"\n", &mut items).unwrap();
    assert_eq!(parser.buffered_bytes(), 0, "dispatched");
    assert!(matches!(&items[..], [SseItem::Event(e)] if e.data == "abcdef"));
}

#[test]
fn a_long_line_is_given_back_once_done() {
    let cap = 4 * 1024 * KIB;
    let mut parser = SseParser::new(ParserConfig {
        max_frame_bytes: cap,
    });
    assert_eq!(parser.config().max_frame_bytes, cap);
    let mut items = Vec::new();
    parser.feed(b"data: ", &mut items).unwrap();
    let read = vec![b'a'; 4 * KIB];
    for _ in 0..256 {
        parser.feed(&read, &mut items).unwrap();
        assert!(parser.buffered_bytes() <= cap);
    }
    assert!(
        parser.retained_capacity() >= 1024 * KIB,
        "a 1 MiB line is held"
    );
    parser.feed(b"\n\n", &mut items).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(parser.buffered_bytes(), 0);
    // A short frame split across reads reuses at most the kept 64 KiB, not the 1 MiB.
    parser.feed(b"data: x", &mut items).unwrap();
    parser.feed(b"y\n\n", &mut items).unwrap();
    assert!(
        parser.retained_capacity() <= 64 * KIB,
        "after the long line: {} bytes kept",
        parser.retained_capacity()
    );
}

#[test]
fn a_long_first_data_line_moved_into_the_frame_reads_as_it_does_whole() {
    // Lines over the kept 64 KiB take the path that hands the line buffer to the frame: a
    // multi-byte character split across reads, an invalid byte (U+FFFD), a second data line,
    // an id, and a short frame after it.
    let mut long = String::from("data: ");
    for i in 0..40_000 {
        long.push_str(if i % 7 == 0 { "é" } else { "ab" });
    }
    let mut stream = long.into_bytes();
    stream.extend_from_slice(b"\xff tail\ndata: second\nid: 9\n\ndata: short\n\n");
    let mut long2 = vec![b'z'; 70 * KIB];
    long2.splice(0..0, b"data: ".iter().copied());
    stream.extend_from_slice(&long2);
    stream.extend_from_slice(b"\r\n\r\n");
    let whole = {
        let mut p = SseParser::default();
        let mut items = Vec::new();
        p.feed(&stream, &mut items).unwrap();
        items
    };
    assert_eq!(whole.len(), 3);
    for read in [1, 7, 1000, 4096, 65 * KIB] {
        let mut p = SseParser::default();
        let mut items = Vec::new();
        for chunk in stream.chunks(read) {
            p.feed(chunk, &mut items).unwrap();
        }
        assert_eq!(items, whole, "reads of {read} bytes");
        assert_eq!(p.last_event_id(), "9");
        assert!(p.retained_capacity() <= 64 * KIB);
    }
    let first = whole[0].as_event().unwrap();
    assert!(first.data.ends_with("\u{FFFD} tail\nsecond"));
}

#[test]
fn a_short_line_split_across_reads_leaves_the_line_buffer_for_the_next() {
    // Only a long first `data` line (over 64 KiB of buffer) moves into the frame; a short one
    // is copied out and its buffer stays with the parser, so split lines cost no allocation
    // each.
    let mut parser = SseParser::new(ParserConfig::default());
    let mut items = Vec::new();
    parser.feed(b"data: ab", &mut items).unwrap();
    parser.feed(b"c\n\n", &mut items).unwrap();
    assert!(matches!(&items[..], [SseItem::Event(e)] if e.data == "abc"));
    assert!(
        parser.retained_capacity() >= "data: ab".len(),
        "the line buffer was given away: {}",
        parser.retained_capacity()
    );
}

#[test]
fn a_long_event_line_split_across_reads_names_the_event_and_is_not_data() {
    // The in-place move of a long line's buffer is for a first `data` line only: a long
    // `event:` line over 64 KiB of buffer stays the event's type (shard 1/40 of RELIABILITY.md:
    // `&&` → `||` there survived).
    let mut parser = SseParser::new(ParserConfig::default());
    let mut items = Vec::new();
    let name = "e".repeat(80 * KIB);
    parser.feed(b"event: ", &mut items).unwrap();
    parser.feed(name.as_bytes(), &mut items).unwrap();
    parser
        .feed(
            b"
data: x

",
            &mut items,
        )
        .unwrap();
    match &items[..] {
        [SseItem::Event(e)] => {
            assert_eq!(e.data, "x");
            assert_eq!(e.event_type.as_deref(), Some(name.as_str()));
        }
        other => panic!("expected one event, got {} items", other.len()),
    }
}

/// Feeds `line` (no line end) in 1 KiB reads, so the parser buffers it, then ends it.
fn feed_line_in_pieces(parser: &mut SseParser, line: &[u8], items: &mut Vec<SseItem>) {
    for piece in line.chunks(KIB) {
        parser.feed(piece, items).unwrap();
    }
    parser.feed(b"\n", items).unwrap();
}

/// Mutants of `reset_line` (`>` → `<` / `==`) survived: a long line that is not a frame's first
/// `data` line (a comment here, as a proxy's padding is) leaves through `reset_line`, which must
/// give its buffer back to the kept 64 KiB.
#[test]
fn a_long_comment_line_is_given_back_once_done() {
    let mut parser = SseParser::new(ParserConfig::default());
    let mut items = Vec::new();
    let mut comment = b": ".to_vec();
    comment.extend(std::iter::repeat_n(b'p', 1024 * KIB));
    feed_line_in_pieces(&mut parser, &comment, &mut items);
    assert!(items.iter().all(|i| !matches!(i, SseItem::Event(_))));
    parser.feed(b"data: x", &mut items).unwrap();
    assert!(
        parser.retained_capacity() <= 64 * KIB,
        "after a 1 MiB comment: {} bytes kept",
        parser.retained_capacity()
    );
    parser.feed(b"\n\n", &mut items).unwrap();
    assert!(matches!(items.last(), Some(SseItem::Event(e)) if e.data == "x"));
}

/// The mutant `64 * 1024` → `64 + 1024` survived: lines up to 64 KiB keep their buffer, so a
/// stream of moderately long lines (large tool arguments, say) does not allocate it again for
/// every line.
#[test]
fn a_line_buffer_of_up_to_64_kib_is_kept_for_the_next_lines() {
    let mut parser = SseParser::new(ParserConfig::default());
    let mut items = Vec::new();
    let mut comment = b": ".to_vec();
    comment.extend(std::iter::repeat_n(b'p', 48 * KIB));
    feed_line_in_pieces(&mut parser, &comment, &mut items);
    parser.feed(b"data: x", &mut items).unwrap();
    assert!(
        parser.retained_capacity() >= 48 * KIB,
        "a 48 KiB line's buffer is kept: {} bytes",
        parser.retained_capacity()
    );
    assert!(parser.retained_capacity() <= 64 * KIB + KIB);
}
