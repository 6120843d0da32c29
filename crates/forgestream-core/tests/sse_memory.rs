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
