//! Load check: events/s the emulator delivers to 50 concurrent subscribers on loopback, and
//! resident memory per live turn. Bounded (well under 60 s).
//!
//! `cargo run --release -p forgestream-server --example load [-- WORDS SUBSCRIBERS TURNS]`

use forgestream_server::{Server, ServerConfig};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_owned))
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

async fn session(client: &reqwest::Client, base: &str) -> String {
    let created: Value = client
        .post(format!("{base}/api/v1/sessions"))
        .json(&json!({"agent": {"name": "storyteller"}}))
        .send()
        .await
        .expect("create session")
        .json()
        .await
        .expect("session json");
    created["data"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn start_turn(
    client: &reqwest::Client,
    base: &str,
    sid: &str,
    words: u64,
    pace: u64,
) -> String {
    let body = json!({"input": [{"type": "user.message", "content": format!("{words} words, {pace} ms")}], "stream": false});
    let turn: Value = client
        .post(format!("{base}/api/v1/sessions/{sid}/turns"))
        .json(&body)
        .send()
        .await
        .expect("create turn")
        .json()
        .await
        .expect("turn json");
    turn["data"]["id"].as_str().unwrap_or_default().to_owned()
}

/// Subscribes from 0 and counts frames until the stream ends.
async fn count_frames(client: reqwest::Client, url: String) -> u64 {
    let mut resp = client.get(url).send().await.expect("subscribe");
    let mut frames = 0u64;
    let mut tail = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        tail.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(i) = tail[start..].windows(2).position(|w| w == b"\n\n") {
            frames += 1;
            start += i + 2;
        }
        tail.drain(..start);
    }
    frames
}

async fn fan_out(client: &reqwest::Client, url: &str, subscribers: usize) -> (u64, Duration) {
    let started = Instant::now();
    let tasks: Vec<_> = (0..subscribers)
        .map(|_| tokio::spawn(count_frames(client.clone(), url.to_owned())))
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap_or(0);
    }
    (total, started.elapsed())
}

#[tokio::main]
async fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let words = args.first().copied().unwrap_or(20_000);
    let subscribers = args.get(1).copied().unwrap_or(50) as usize;
    let turns = args.get(2).copied().unwrap_or(200);
    let config = ServerConfig {
        addr: "127.0.0.1:0".parse().expect("addr"),
        pace_ms: 0,
        ..ServerConfig::default()
    };
    let server = Server::start(config).await.expect("server");
    let base = server.url();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");

    // 1. Memory per live turn, measured first so allocator reuse from the other phases cannot
    //    hide it: K finished 300-word turns whose live buffers are retained.
    let before_turns = server.runtime.live.count();
    let before = rss_kib();
    let mut last_turn = String::new();
    for _ in 0..turns {
        let sid = session(&client, &base).await;
        last_turn = start_turn(&client, &base, &sid, 300, 0).await;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.runtime.running_turns() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after = rss_kib();
    let added = server.runtime.live.count() - before_turns;
    let sample = server.runtime.live.get(&last_turn);
    println!(
        "memory: {added} live turns ({} frames, {} frame bytes each): RSS {before} KiB -> {after} KiB, {:.1} KiB per live turn",
        sample.as_ref().map(|l| l.len()).unwrap_or(0),
        sample.as_ref().map(|l| l.frame_bytes()).unwrap_or(0),
        (after.saturating_sub(before)) as f64 / added.max(1) as f64
    );

    // 2. Live: a paced turn (1 ms per delta) followed by every subscriber as it is written.
    let sid = session(&client, &base).await;
    let tid = start_turn(&client, &base, &sid, words / 4, 1).await;
    let url = format!("{base}/api/v1/sessions/{sid}/turns/{tid}/subscribe");
    let (live_frames, live_time) = fan_out(&client, &url, subscribers).await;
    println!(
        "live:   {subscribers} subscribers, {} frames each, {:.1} s, {:.0} events/s delivered",
        live_frames / subscribers as u64,
        live_time.as_secs_f64(),
        live_frames as f64 / live_time.as_secs_f64()
    );

    // 3. Replay: an unpaced long turn, then every subscriber replays it from 0 at once.
    let sid = session(&client, &base).await;
    let tid = start_turn(&client, &base, &sid, words, 0).await;
    let url = format!("{base}/api/v1/sessions/{sid}/turns/{tid}/subscribe");
    count_frames(client.clone(), url.clone()).await;
    let (replay_frames, replay_time) = fan_out(&client, &url, subscribers).await;
    println!(
        "replay: {subscribers} subscribers, {} frames each, {:.2} s, {:.0} events/s delivered",
        replay_frames / subscribers as u64,
        replay_time.as_secs_f64(),
        replay_frames as f64 / replay_time.as_secs_f64()
    );

    server.stop();
}
