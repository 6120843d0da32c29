//! Process lifecycle like the real TrueForge server: a crash (`kill -9`, and the in-process
//! `crash-after-events` fault) leaves the turn `running` with its live stream gone, and the
//! optional start-up clean-up; graceful shutdown (SIGTERM / Ctrl-C) ends every open stream with
//! `turn.done` `cancelled`/`abandoned`.

mod common;

use common::*;
use serde_json::{json, Value};

/// A storyteller turn long enough to be cut in the middle (paced at 20 ms per delta).
fn long_turn() -> Value {
    message("Tell me a story of 3000 words at 20 ms")
}

async fn turn_state(base: &str, sid: &str, tid: &str) -> Value {
    get_json(&format!("{base}/api/v1/sessions/{sid}/turns/{tid}")).await["data"]["state"].clone()
}

async fn listed_turn_state(base: &str, sid: &str, tid: &str) -> Value {
    let list = get_json(&format!("{base}/api/v1/sessions/{sid}/turns")).await;
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == tid)
        .map(|t| t["state"].clone())
        .unwrap()
}

async fn subscribe_status(base: &str, sid: &str, tid: &str) -> u16 {
    let url = format!("{base}/api/v1/sessions/{sid}/turns/{tid}/subscribe?after_sequence_number=1");
    http().get(url).send().await.unwrap().status().as_u16()
}

/// Starts a long turn on `base` and reads its first frames; the session and turn ids.
async fn start_long_turn(base: &str) -> (String, String, reqwest::Response) {
    let sid = create_session(base, "storyteller").await;
    let (resp, body) = read_frames(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .json(&long_turn()),
        4,
    )
    .await;
    let tid = turn_id(&parse_sse(&body));
    (sid, tid, resp)
}

#[tokio::test]
async fn after_kill_9_the_turn_stays_running_until_a_new_turn_cancels_it() {
    let db = TempDb::new("crash");
    let first = Child::spawn(&["--db", &db.0]);
    let (sid, tid, _stream) = start_long_turn(&first.base).await;
    first.signal("KILL");
    drop(first);

    let second = Child::spawn(&["--db", &db.0]);
    let base = &second.base;
    assert_eq!(
        turn_state(base, &sid, &tid).await,
        json!({"status": "running"})
    );
    assert_eq!(
        listed_turn_state(base, &sid, &tid).await,
        json!({"status": "running"})
    );
    let listing = turn_listing(base, &sid, &tid).await;
    assert!(
        listing.iter().all(|e| e["type"] != "turn.done"),
        "{listing:?}"
    );
    assert_eq!(subscribe_status(base, &sid, &tid).await, 412);

    let next = post_turn(base, &sid, &message("Tell me a story of 20 words")).await;
    assert_eq!(next.status, 200);
    assert_eq!(last_state(&next.frames())["status"], "done");
    let stuck = turn_state(base, &sid, &tid).await;
    assert_eq!(stuck["status"], "cancelled");
    assert_eq!(stuck["reason"], "cancelled-for-next-turn");
    let listing = turn_listing(base, &sid, &tid).await;
    let done = listing.last().unwrap();
    assert_eq!(done["type"], "turn.done");
    assert_eq!(done["state"], stuck, "the listing says what GET turn says");
}

#[tokio::test]
async fn abandon_on_start_ends_left_running_turns_and_lists_their_turn_done() {
    let db = TempDb::new("abandon");
    let first = Child::spawn(&["--db", &db.0]);
    let (sid, tid, _stream) = start_long_turn(&first.base).await;
    first.signal("KILL");
    drop(first);

    let second = Child::spawn(&["--db", &db.0, "--abandon-on-start"]);
    let base = &second.base;
    let state = turn_state(base, &sid, &tid).await;
    assert_eq!(state["status"], "cancelled");
    assert_eq!(state["reason"], "abandoned");
    assert_eq!(listed_turn_state(base, &sid, &tid).await, state);
    let listing = turn_listing(base, &sid, &tid).await;
    let done = listing.last().unwrap();
    assert_eq!(done["type"], "turn.done", "{listing:?}");
    assert_eq!(done["state"], state, "the listing says what GET turn says");
    assert_eq!(subscribe_status(base, &sid, &tid).await, 412);
}

#[tokio::test]
async fn crash_after_events_cuts_the_stream_and_leaves_the_turn_running() {
    let server = start().await;
    let base = server.url();
    let reply = send(
        http()
            .post(format!(
                "{base}/api/v1/sessions?fault=crash-after-events=5,once"
            ))
            .json(&json!({"agent": {"name": "storyteller"}})),
    )
    .await;
    let sid = reply.json()["data"]["id"].as_str().unwrap().to_owned();
    let (reply, failed) = send_partial(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .json(&message("Tell me a story of 200 words")),
    )
    .await;
    assert!(
        failed,
        "a crash cuts the connection (a network error, not EOF)"
    );
    let frames = reply.frames();
    assert_eq!(frames.len(), 5);
    assert!(types(&frames).iter().all(|t| t != "turn.done"));
    let tid = turn_id(&frames);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(
        turn_state(&base, &sid, &tid).await,
        json!({"status": "running"})
    );
    assert_eq!(subscribe_status(&base, &sid, &tid).await, 412);
    assert_eq!(server.runtime.running_turns(), 0, "the worker is gone");

    // `once`: the next turn of the session behaves, and cancels the stuck one.
    let next = post_turn(&base, &sid, &message("Tell me a story of 20 words")).await;
    assert_eq!(last_state(&next.frames())["status"], "done");
    let stuck = turn_state(&base, &sid, &tid).await;
    assert_eq!(stuck["reason"], "cancelled-for-next-turn");
}

async fn graceful_shutdown_by(signal: &str) {
    let db = TempDb::new("shutdown");
    let mut first = Child::spawn(&["--db", &db.0, "--shutdown-drain-ms", "1500"]);
    let base = first.base.clone();
    let (sid, tid, mut stream) = start_long_turn(&base).await;
    // A second connection on the same turn: a subscriber gets the same end.
    let (mut sub, mut sub_body) = read_frames(
        http().get(format!(
            "{base}/api/v1/sessions/{sid}/turns/{tid}/subscribe?after_sequence_number=2"
        )),
        1,
    )
    .await;
    let started = std::time::Instant::now();
    first.signal(signal);
    let mut body = Vec::new();
    assert!(
        !read_rest(&mut stream, &mut body).await,
        "the stream ends cleanly, not cut"
    );
    assert!(!read_rest(&mut sub, &mut sub_body).await);
    let status = first.wait();
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let abandoned = json!({
        "status": "cancelled",
        "reason": "abandoned",
        "metrics": {"total_input_tokens": 0, "total_output_tokens": 0, "total_tokens": 0}
    });
    let mut live_done = None;
    for frames in [parse_sse(&body), parse_sse(&sub_body)] {
        let (_, done) = frames.last().unwrap();
        assert_eq!(done["type"], "turn.done", "{frames:?}");
        let mut state = done["state"].clone();
        assert!(state["completed_at"].is_string());
        state.as_object_mut().unwrap().remove("completed_at");
        assert_eq!(state, abandoned);
        live_done.get_or_insert(done.clone());
        assert_eq!(
            Some(done),
            live_done.as_ref(),
            "one record for every stream"
        );
    }
    drop(first);

    let second = Child::spawn(&["--db", &db.0]);
    let base = &second.base;
    let stored = turn_state(base, &sid, &tid).await;
    assert_eq!(Some(&stored), live_done.as_ref().map(|d| &d["state"]));
    let listing = turn_listing(base, &sid, &tid).await;
    assert_eq!(listing.last(), live_done.as_ref(), "persisted as streamed");
}

#[tokio::test]
async fn sigterm_ends_open_streams_with_abandoned_and_persists_it() {
    graceful_shutdown_by("TERM").await;
}

#[tokio::test]
async fn ctrl_c_ends_open_streams_with_abandoned_and_persists_it() {
    graceful_shutdown_by("INT").await;
}
