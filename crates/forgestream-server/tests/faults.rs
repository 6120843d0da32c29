//! Every fault of the README's fault-injection reference, over real HTTP.

mod common;

use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

async fn finished_turn(
    base: &str,
    agent: &str,
    text: &str,
) -> (String, String, Vec<(u64, serde_json::Value)>) {
    let sid = create_session(base, agent).await;
    let frames = post_turn(base, &sid, &message(text)).await.frames();
    let tid = turn_id(&frames);
    (sid, tid, frames)
}

fn subscribe_url(base: &str, sid: &str, tid: &str) -> String {
    format!("{base}/api/v1/sessions/{sid}/turns/{tid}/subscribe")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drops_after_events_and_at_a_byte_inside_utf8() {
    let server = start().await;
    let base = server.url();
    let (sid, tid, frames) = finished_turn(&base, "support", "Where is ORD-2031?").await;
    let url = subscribe_url(&base, &sid, &tid);
    let (reply, failed) =
        send_partial(http().get(format!("{url}?fault=drop-after-events=3"))).await;
    assert!(failed, "the connection is aborted, not closed cleanly");
    assert_eq!(reply.frames(), frames[..3].to_vec());

    let full = send(http().get(&url)).await.body;
    let text = String::from_utf8(full.clone()).unwrap();
    let inside = text
        .char_indices()
        .find(|(_, c)| c.len_utf8() > 1)
        .map(|(i, _)| i + 1)
        .unwrap();
    let (reply, failed) = send_partial(
        http()
            .get(&url)
            .header("x-forgestream-fault", format!("drop-at-byte={inside}")),
    )
    .await;
    assert!(failed);
    assert_eq!(
        reply.body,
        full[..inside].to_vec(),
        "exactly B bytes, ending inside a UTF-8 character"
    );
    assert!(std::str::from_utf8(&reply.body).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn split_pieces_keep_the_bytes() {
    let server = start().await;
    let base = server.url();
    let (sid, tid, _) = finished_turn(&base, "support", "hi").await;
    let url = subscribe_url(&base, &sid, &tid);
    let plain = send(http().get(&url)).await.body;
    let mut resp = http()
        .get(format!("{url}?fault=split=1..7,seed=3"))
        .send()
        .await
        .unwrap();
    let mut body = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = resp.chunk().await.unwrap() {
        assert!(chunk.len() <= 7 * 64, "pieces are small");
        body.extend_from_slice(&chunk);
        chunks += 1;
    }
    assert_eq!(body, plain);
    assert!(chunks > 10, "{chunks} reads");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignore_cursor_and_force_412() {
    let server = start().await;
    let base = server.url();
    let (sid, tid, frames) = finished_turn(&base, "support", "hi").await;
    let url = subscribe_url(&base, &sid, &tid);
    let replayed = send(http().get(format!("{url}?after_sequence_number=4&fault=ignore-cursor")))
        .await
        .frames();
    assert_eq!(replayed, frames);
    let forced = send(http().get(format!("{url}?fault=force-412"))).await;
    assert_eq!(forced.status, 412);
    assert!(forced.json()["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("Cannot read from stream"));
    // `once`: the first subscribe gets 412, the next one streams.
    let once = send(http().get(format!("{url}?fault=force-412,once"))).await;
    assert_eq!(once.status, 412);
    let after = send(http().get(format!("{url}?fault=force-412,once"))).await;
    assert_eq!(after.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_statuses_on_create_and_subscribe() {
    let server = start().await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    for code in [401u16, 429, 500, 503] {
        let reply = send(
            http()
                .post(format!("{base}/api/v1/sessions/{sid}/turns"))
                .header("x-forgestream-fault", format!("status={code},on=create"))
                .json(&message("hi")),
        )
        .await;
        assert_eq!(reply.status, code);
        assert!(reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&code.to_string()));
        if code == 429 || code == 503 {
            assert!(reply.headers.contains_key("retry-after"));
        }
    }
    let turns = send(http().get(format!("{base}/api/v1/sessions/{sid}/turns")))
        .await
        .json();
    assert_eq!(
        turns["data"].as_array().unwrap().len(),
        0,
        "no turn was created"
    );
    let frames = post_turn(&base, &sid, &message("hi")).await.frames();
    let url = subscribe_url(&base, &sid, &turn_id(&frames));
    assert_eq!(
        send(http().get(format!("{url}?fault=status=503")))
            .await
            .status,
        503
    );
    assert_eq!(
        send(http().get(format!("{url}?fault=status=503,on=create")))
            .await
            .status,
        200
    );
    assert_eq!(
        send(http().get(format!("{url}?fault=nonsense")))
            .await
            .status,
        400
    );
    let session_fault = send(
        http()
            .post(format!(
                "{base}/api/v1/sessions?fault=status=500,on=session"
            ))
            .json(&json!({"agent": {"name": "support"}})),
    )
    .await;
    assert_eq!(session_fault.status, 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeats_drip_and_end_without_done() {
    // The server's own subscribe timeout is long; each hold below ends by its fault spec, so
    // the upper time bound proves the fault (not the server default) ended it, even on a loaded
    // machine.
    let server = start_with(|c| c.subscribe_timeout = Duration::from_millis(5000)).await;
    let base = server.url();
    let (sid, tid, frames) = finished_turn(&base, "support", "hi").await;
    let url = subscribe_url(&base, &sid, &tid);
    let last = frames.len();
    let beats = send(http().get(format!(
        "{url}?after_sequence_number={last}&fault=heartbeat-ms=100,subscribe-timeout-ms=600"
    )))
    .await;
    let text = String::from_utf8(beats.body).unwrap();
    assert!(text.matches(": heartbeat\n\n").count() >= 3, "{text:?}");
    assert!(parse_sse(text.as_bytes()).is_empty());

    let started = Instant::now();
    let dripped = send(http().get(format!(
        "{url}?after_sequence_number={}&fault=drip-ms=60",
        last - 4
    )))
    .await
    .frames();
    assert_eq!(dripped.len(), 4);
    assert!(started.elapsed() >= Duration::from_millis(230));

    let cut = send(http().get(format!("{url}?fault=end-without-done"))).await;
    let cut_frames = cut.frames();
    assert_eq!(cut_frames.len(), last - 1);
    assert!(cut_frames.iter().all(|(_, e)| e["type"] != "turn.done"));

    let started = Instant::now();
    let timed = send(http().get(format!(
        "{url}?after_sequence_number={last}&fault=subscribe-timeout-ms=150"
    )))
    .await;
    assert_eq!((timed.status, timed.body.len()), (200, 0));
    assert!(started.elapsed() < Duration::from_millis(3000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_fault_drops_the_first_connection_of_each_turn_once() {
    let server = start().await;
    let base = server.url();
    let created = send(
        http()
            .post(format!("{base}/api/v1/sessions"))
            .header("x-forgestream-fault", "drop-at-byte=300,once")
            .json(&json!({"agent": {"name": "support"}})),
    )
    .await;
    let sid = created.json()["data"]["id"].as_str().unwrap().to_owned();
    let (first, failed) = send_partial(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .json(&message("Where is ORD-2031?")),
    )
    .await;
    assert!(failed);
    assert_eq!(first.body.len(), 300);
    let frames = parse_sse(&first.body);
    let tid = turn_id(&frames);
    let cursor = frames.last().unwrap().0;
    let resumed = send(http().get(format!(
        "{}?after_sequence_number={cursor}",
        subscribe_url(&base, &sid, &tid)
    )))
    .await
    .frames();
    assert_eq!(resumed[0].0, cursor + 1);
    assert_eq!(last_state(&resumed)["status"], "done");
    // The next turn's first connection drops again.
    let (second, failed) = send_partial(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .json(&message("hi")),
    )
    .await;
    assert!(failed && second.body.len() == 300);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_wide_fault_applies_when_requests_carry_none() {
    let server = start_with(|c| c.fault = Some("status=503,on=create".into())).await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    assert_eq!(post_turn(&base, &sid, &message("hi")).await.status, 503);
    let overridden = send(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .header("x-forgestream-fault", "seed=1")
            .json(&message("hi")),
    )
    .await;
    assert_eq!(
        overridden.status, 200,
        "a request's own spec replaces the server's"
    );
}

/// `stall-after-events=N`: N frames, then nothing — no byte, no EOF — until the subscribe
/// timeout; `idle-cut-ms=N`: a connection that wrote nothing for N ms is cut (a network
/// error), heartbeats keep it open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_reads_and_idle_cuts() {
    let server = start_with(|c| c.subscribe_timeout = Duration::from_millis(1500)).await;
    let base = server.url();
    let (sid, tid, frames) = finished_turn(&base, "support", "hi").await;
    let url = subscribe_url(&base, &sid, &tid);

    let started = Instant::now();
    let (stalled, failed) =
        send_partial(http().get(format!("{url}?fault=stall-after-events=2"))).await;
    assert!(
        !failed,
        "a stalled read ends with the subscribe timeout, cleanly"
    );
    assert_eq!(stalled.status, 200);
    assert_eq!(stalled.frames(), frames[..2].to_vec());
    assert!(
        started.elapsed() >= Duration::from_millis(1400),
        "held open until the timeout"
    );

    // Headers, then nothing at all, and a proxy cutting after 200 ms of silence.
    let started = Instant::now();
    let (cut, failed) =
        send_partial(http().get(format!("{url}?fault=stall-after-events=0,idle-cut-ms=200"))).await;
    assert!(failed, "the idle cut is a network error");
    assert_eq!((cut.status, cut.body.len()), (200, 0));
    assert!(
        started.elapsed() < Duration::from_millis(1400),
        "cut before the timeout"
    );

    // A cursor at the end of the finished turn: silent, so the idle cut ends it.
    let last = frames.len();
    let (cut, failed) = send_partial(http().get(format!(
        "{url}?after_sequence_number={last}&fault=idle-cut-ms=200"
    )))
    .await;
    assert!(failed);
    assert!(cut.body.is_empty());
    // Heartbeats are writes: the cut never comes, the subscribe timeout ends it.
    let (beats, failed) = send_partial(http().get(format!(
        "{url}?after_sequence_number={last}&fault=idle-cut-ms=300,heartbeat-ms=100"
    )))
    .await;
    assert!(!failed);
    assert!(String::from_utf8(beats.body)
        .unwrap()
        .contains(": heartbeat"));
}

/// A call with `runs_ms` (the `support` agent's "slow" lookup) is silent that long before its
/// `tool.response`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_tool_call_is_silent_until_its_result() {
    let server = start().await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    let started = Instant::now();
    let frames = post_turn(&base, &sid, &message("Slow lookup of ORD-4821, 700 ms"))
        .await
        .frames();
    assert!(started.elapsed() >= Duration::from_millis(700));
    let types: Vec<&str> = frames
        .iter()
        .map(|(_, e)| e["type"].as_str().unwrap())
        .collect();
    assert!(types.contains(&"tool.response"), "{types:?}");
    assert_eq!(types.last(), Some(&"turn.done"));
    let response = frames
        .iter()
        .find(|(_, e)| e["type"] == "tool.response")
        .unwrap();
    assert!(response.1["content"].as_str().unwrap().contains("ORD-4821"));
}
