//! Multi-replica mode (`--replica-poll-ms`, fault `replica-poll-ms=N`): what an app meets behind
//! a load balancer with two TrueForge replicas — subscribes delivered in polled bursts, cancels
//! relayed to the owner (≥ 200 ms), a crashed owner's turn silent on a 200 subscribe.

mod common;

use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

/// Reads a whole body, noting when each chunk arrived.
async fn timed_body(mut resp: reqwest::Response) -> (Vec<u8>, Vec<Instant>) {
    let mut body = Vec::new();
    let mut arrivals = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        body.extend_from_slice(&chunk);
        arrivals.push(Instant::now());
    }
    (body, arrivals)
}

/// Chunks that came after a quiet gap of more than `gap` (the first chunk counts).
fn bursts(arrivals: &[Instant], gap: Duration) -> usize {
    1 + arrivals.windows(2).filter(|w| w[1] - w[0] > gap).count()
}

async fn subscribed_in_bursts(fault: &str, server: &forgestream_server::Server) {
    let base = server.url();
    let sid = create_session(&base, "storyteller").await;
    // ~250 deltas at 5 ms: about 1.3 s of streaming.
    let create = http()
        .post(format!("{base}/api/v1/sessions/{sid}/turns"))
        .json(&message("Tell me a story of 600 words at 5 ms"));
    let (created, head) = read_frames(create, 1).await;
    let tid = turn_id(&parse_sse(&head));
    let subscribe = http()
        .get(format!(
            "{base}/api/v1/sessions/{sid}/turns/{tid}/subscribe?after_sequence_number=0{fault}"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(subscribe.status(), 200);
    let started = Instant::now();
    let ((rest, _), (sub_body, arrivals)) =
        tokio::join!(timed_body(created), timed_body(subscribe));
    let elapsed = started.elapsed();
    let mut created_body = head;
    created_body.extend_from_slice(&rest);
    assert_eq!(
        sub_body, created_body,
        "the subscriber gets every frame, byte for byte"
    );
    let frames = parse_sse(&sub_body).len();
    let polls = bursts(&arrivals, Duration::from_millis(150));
    // Polled every 400 ms: a handful of bursts, each carrying many frames — never one wake-up
    // per event as with a single replica.
    let most = (elapsed.as_millis() / 400) as usize + 2;
    assert!(
        (2..=most).contains(&polls),
        "{polls} bursts for {frames} frames in {elapsed:?}"
    );
    assert!(frames > 20 * polls, "{frames} frames in {polls} bursts");
}

#[tokio::test]
async fn replica_poll_delivers_subscribes_in_bursts() {
    let server = start_with(|c| c.replica_poll = Some(Duration::from_millis(400))).await;
    subscribed_in_bursts("", &server).await;
}

#[tokio::test]
async fn the_replica_poll_fault_does_the_same_per_request() {
    let server = start().await;
    subscribed_in_bursts("&fault=replica-poll-ms=400", &server).await;
}

#[tokio::test]
async fn a_cancel_reaches_the_owner_after_the_relay_delay() {
    let server = start_with(|c| c.replica_poll = Some(Duration::from_millis(1000))).await;
    let base = server.url();
    let sid = create_session(&base, "storyteller").await;
    let (mut stream, mut body) = read_frames(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .json(&message("Tell me a story of 3000 words at 20 ms")),
        3,
    )
    .await;
    let started = Instant::now();
    let cancel = send(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/cancel"))
            .json(&json!({})),
    )
    .await;
    assert_eq!(cancel.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(!read_rest(&mut stream, &mut body).await);
    let state = last_state(&parse_sse(&body));
    assert_eq!(state["reason"], "client-cancelled");
}

#[tokio::test]
async fn a_crashed_owner_leaves_a_silent_200_subscribe_until_the_stream_expires() {
    let server = start_with(|c| {
        c.replica_poll = Some(Duration::from_millis(100));
        // Admitted while more than 1 s of the 4 s retention is left (generous for a loaded
        // machine), refused once less is.
        c.stream_ttl = Duration::from_millis(4000);
        c.subscribe_threshold = Duration::from_millis(1000);
    })
    .await;
    let base = server.url();
    let reply = send(
        http()
            .post(format!(
                "{base}/api/v1/sessions?fault=crash-after-events=4,once"
            ))
            .json(&json!({"agent": {"name": "storyteller"}})),
    )
    .await;
    let sid = reply.json()["data"]["id"].as_str().unwrap().to_owned();
    let (created, failed) = send_partial(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/turns"))
            .json(&message("Tell me a story of 200 words")),
    )
    .await;
    assert!(failed, "the owner's own connection dies with it");
    let frames = created.frames();
    assert_eq!(frames.len(), 4);
    let tid = turn_id(&frames);
    let url = format!("{base}/api/v1/sessions/{sid}/turns/{tid}/subscribe?after_sequence_number=4");
    let mut silent = http().get(&url).send().await.unwrap();
    assert_eq!(
        silent.status(),
        200,
        "no 412: the stream key is still there"
    );
    let waited = tokio::time::timeout(Duration::from_millis(700), silent.chunk()).await;
    assert!(waited.is_err(), "silence: {waited:?}");
    let state = get_json(&format!("{base}/api/v1/sessions/{sid}/turns/{tid}")).await;
    assert_eq!(state["data"]["state"], json!({"status": "running"}));
    // A cancel marks the turn cancelled in the store without writing a `turn.done` to any
    // stream: the subscriber stays silent.
    let cancel = send(
        http()
            .post(format!("{base}/api/v1/sessions/{sid}/cancel"))
            .json(&json!({})),
    )
    .await;
    assert_eq!(cancel.status, 200);
    let state = get_json(&format!("{base}/api/v1/sessions/{sid}/turns/{tid}")).await;
    assert_eq!(state["data"]["state"]["reason"], "client-cancelled");
    let waited = tokio::time::timeout(Duration::from_millis(300), silent.chunk()).await;
    assert!(waited.is_err(), "still silent after the cancel: {waited:?}");
    // Once the buffer expires within the threshold, subscribe answers 412.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let late = http().get(&url).send().await.unwrap();
    assert_eq!(late.status(), 412);
}
