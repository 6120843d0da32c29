//! Issue 18 item 9: a huge frame (up to the 16 MiB cap) costs its size once while it is
//! received, and nothing of it stays in the parser afterwards. Before, the line buffer was
//! copied into the frame when its line ended (twice the frame, ~32 MiB at the cap, on top of
//! what the reducer and the UI copy), and the wasm memory that rose to that high-water mark is
//! never returned.
//!
//! A counting global allocator (this test binary only, one test so no other test allocates
//! meanwhile) measures the live heap while the frame is fed in 64 KiB reads.
use forgestream_core::sse::{ParserConfig, SseItemRef, SseParser, DEFAULT_MAX_FRAME_BYTES};

#[path = "support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::{heap_mark, live_bytes, peak_bytes};

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;

#[test]
fn a_huge_frame_costs_its_size_once_and_is_given_back_after_dispatch() {
    let mut parser = SseParser::new(ParserConfig::default());
    let frame_data = 12 * MIB;
    let read = vec![b'a'; 64 * KIB];
    let dispatched = std::cell::RefCell::new(Vec::with_capacity(4));
    let mut emit = |item: SseItemRef<'_>| {
        if let SseItemRef::Event(e) = item {
            dispatched
                .borrow_mut()
                .push((e.data.len(), e.data.bytes().all(|b| b == b'a')));
        }
    };
    let base = heap_mark();
    let mut largest_capacity = 0;
    parser.feed_with(b"id: 7\ndata: ", &mut emit).unwrap();
    for _ in 0..frame_data / read.len() {
        parser.feed_with(&read, &mut emit).unwrap();
        assert!(parser.buffered_bytes() <= DEFAULT_MAX_FRAME_BYTES);
        largest_capacity = largest_capacity.max(parser.retained_capacity());
    }
    // The data line ends in one read, the frame in the next: in between the frame holds it.
    parser.feed_with(b"\n", &mut emit).unwrap();
    assert_eq!(
        parser.buffered_bytes(),
        frame_data + 1,
        "the data and the id"
    );
    largest_capacity = largest_capacity.max(parser.retained_capacity());
    parser.feed_with(b"\n", &mut emit).unwrap();
    let peak = peak_bytes() - base;
    assert_eq!(*dispatched.borrow(), [(frame_data, true)]);
    assert_eq!(parser.last_event_id(), "7");

    // Received once: the peak is the buffer the line grew into (its doubling capacity), not
    // that plus a copy of the frame (the old code: ≥ 12 MiB more).
    assert!(
        largest_capacity >= frame_data,
        "{largest_capacity} bytes held"
    );
    assert!(
        peak <= largest_capacity + 256 * KIB,
        "peak {:.1} MiB for a {} MiB frame held in {:.1} MiB",
        peak as f64 / MIB as f64,
        frame_data / MIB,
        largest_capacity as f64 / MIB as f64
    );
    eprintln!(
        "a {} MiB frame: peak {:.2} MiB, largest buffer {:.2} MiB",
        frame_data / MIB,
        peak as f64 / MIB as f64,
        largest_capacity as f64 / MIB as f64
    );
    // Given back: nothing of the frame stays in the parser or on the heap.
    assert_eq!(parser.buffered_bytes(), 0);
    assert!(
        parser.retained_capacity() <= 64 * KIB,
        "{} bytes kept",
        parser.retained_capacity()
    );
    let live = live_bytes().saturating_sub(base);
    assert!(live <= 64 * KIB + 4 * KIB, "{live} bytes still live");

    // The next frame, small and split across reads, is parsed as usual.
    parser.feed_with(b"data: x", &mut emit).unwrap();
    parser.feed_with(b"y\n\n", &mut emit).unwrap();
    assert_eq!(dispatched.borrow().len(), 2);
    assert!(parser.retained_capacity() <= 64 * KIB);
}
