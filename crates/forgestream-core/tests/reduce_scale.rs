//! FIELD C16(b): 200,000 deltas of 5 bytes — the text is assembled exactly, dedupe state stays a
//! single number, and a full replay of the stream is skipped frame by frame.
use forgestream_core::reduce::{ReducerConfig, SessionView};

#[test]
fn two_hundred_thousand_deltas() {
    const N: u64 = 200_000;
    let mut view = SessionView::new("s", ReducerConfig::default());
    let frames: Vec<String> = (0..N)
        .map(|_| {
            r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"abcde"}"#
                .to_string()
        })
        .collect();
    let started = std::time::Instant::now();
    view.apply_live(
        "t1",
        Some(1),
        r#"{"type":"model.message","id":"m1","thread_id":"main"}"#,
    )
    .unwrap();
    for (i, data) in frames.iter().enumerate() {
        let cs = view.apply_live("t1", Some(i as u64 + 2), data).unwrap();
        assert_eq!(cs.items.len(), 1);
    }
    let first_pass = started.elapsed();
    // A cursor-ignoring replay is skipped without touching the message.
    for (i, data) in frames.iter().enumerate().take(1000) {
        assert!(view
            .apply_live("t1", Some(i as u64 + 2), data)
            .unwrap()
            .is_empty());
    }
    let item = view.item("t1", "m1").unwrap();
    let forgestream_core::reduce::ItemBody::Message(m) = &item.body else {
        panic!()
    };
    let text = m.content.as_ref().unwrap().text();
    assert_eq!(text.len() as u64, 5 * N);
    assert_eq!(item.version, N + 1);
    assert_eq!(view.last_sequence_number("t1"), Some(N + 1));
    eprintln!("200,000 deltas applied in {first_pass:?}");
}
