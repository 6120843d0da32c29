//! Throughput of the SSE parser on a realistic stream: the recorded TrueForge `subagent` stream
//! repeated to about 64 MiB, fed in 16 KiB reads (a typical `fetch` chunk) and in 64-byte reads.
//!
//! `cargo run --release --example sse_bench -p forgestream-core`

use std::time::Instant;

use forgestream_core::sse::{ParserConfig, SseItem, SseParser};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/recorded/subagent/create.sse"
    );
    let one = std::fs::read(path)?;
    let copies = (64 << 20) / one.len().max(1);
    let stream = one.repeat(copies);
    for read_size in [16 * 1024, 64] {
        let mut parser = SseParser::new(ParserConfig::default());
        let mut items = Vec::new();
        let mut events = 0usize;
        let started = Instant::now();
        for chunk in stream.chunks(read_size) {
            parser.feed(chunk, &mut items)?;
            events += items
                .iter()
                .filter(|i| matches!(i, SseItem::Event(_)))
                .count();
            items.clear();
        }
        let secs = started.elapsed().as_secs_f64();
        let mib = stream.len() as f64 / f64::from(1 << 20);
        println!(
            "{read_size:>6}-byte reads: {mib:.1} MiB, {events} events in {secs:.3} s = {:.0} MiB/s, {:.2} M events/s",
            mib / secs,
            events as f64 / secs / 1e6
        );
    }
    Ok(())
}
