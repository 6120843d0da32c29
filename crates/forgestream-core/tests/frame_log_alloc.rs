//! Issue 18 item 9: `inspect: true` made ingestion many times slower: each frame was decoded a
//! second time and logged with four new `String`s. The frame log is now a ring allocated once;
//! this counts heap allocations (a counting global allocator, this test binary only, one test)
//! while the same stream is ingested with and without the log, and reads the log back.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use forgestream_core::session::{
    Api, Command, Config, Effect, Flavor, Input, Session, EVENT_LOG_CAPACITY,
};

struct Counting;
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; only allocations are counted.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const FRAMES: u64 = 3_000;

/// A live turn: `turn.created`, a message, then deltas; fed in reads of 100 frames.
fn stream() -> Vec<Vec<u8>> {
    let mut frames = vec![
        r#"{"type":"turn.created","id":"e0","turn_id":"t1","previous_turn_id":null,"input":[],"state":{"status":"running"},"created_at":"2026-12-01T00:00:00Z","thread_id":null}"#.to_string(),
        r#"{"type":"model.message","id":"m1","thread_id":"main","created_at":"2026-12-01T00:00:01Z"}"#.to_string(),
    ];
    for _ in 2..FRAMES {
        frames.push(
            r#"{"content":" word","type":"model.message.delta","id":"m1","thread_id":"main"}"#
                .to_string(),
        );
    }
    let text: Vec<String> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| format!("id: {}\ndata: {f}\n\n", i + 1))
        .collect();
    text.chunks(100).map(|c| c.concat().into_bytes()).collect()
}

/// Ingests `reads` on a new engine; returns it and the allocations made while the reads were fed
/// (from the third read on: the first ones create the turn, the message and the ring).
fn ingest(reads: &[Vec<u8>], inspect: bool) -> (Session, usize) {
    let mut s = Session::new(
        "s1",
        Config {
            max_frame_bytes: 1 << 20,
            inspect,
            ..Config::new(Api::new("http://h", Flavor::TrueForge))
        },
    );
    s.handle(
        Input::Command {
            id: 1,
            command: Command::Send {
                input: Vec::new(),
                interrupt: false,
            },
        },
        1,
    );
    let mut request = None;
    while let Some(e) = s.poll_effect() {
        if let Effect::Request(r) = e {
            request = request.or(Some(r.id));
        }
    }
    let request = request.expect("send() makes a request");
    s.handle(
        Input::StreamOpened {
            request,
            status: 200,
            content_type: Some("text/event-stream"),
            redirected: false,
        },
        2,
    );
    while s.poll_effect().is_some() {}
    let mut counted = 0;
    for (i, bytes) in reads.iter().enumerate() {
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        s.handle(Input::Bytes { request, bytes }, 3 + i as u64);
        while s.poll_effect().is_some() {}
        if i >= 2 {
            counted += ALLOCATIONS.load(Ordering::Relaxed) - before;
        }
    }
    (s, counted)
}

#[test]
fn the_frame_log_allocates_nothing_per_frame_and_keeps_the_newest_frames() {
    let reads = stream();
    let (_, plain) = ingest(&reads, false);
    let (s, inspected) = ingest(&reads, true);
    let frames = (reads.len() as u64 - 2) * 100;
    assert!(
        inspected <= plain + 2,
        "{inspected} allocations with the frame log vs {plain} without, over {frames} frames"
    );
    // What the inspector shows: the newest frames, oldest first, with their envelope.
    let (log, total) = s.event_log();
    assert_eq!(total, FRAMES);
    assert_eq!(log.len(), EVENT_LOG_CAPACITY);
    assert_eq!(
        log[0].sequence_number,
        Some(FRAMES - EVENT_LOG_CAPACITY as u64 + 1)
    );
    let last = log.iter().last().unwrap();
    assert_eq!(
        (
            last.turn_id.as_str(),
            last.event_type.as_str(),
            last.id.as_deref(),
            last.thread_id.as_deref()
        ),
        ("t1", "model.message.delta", Some("m1"), Some("main"))
    );
    assert_eq!(last.sequence_number, Some(FRAMES));
    let page = s.event_log_since(FRAMES - 3);
    assert_eq!((page.total, page.frames.len()), (FRAMES, 3));
}
