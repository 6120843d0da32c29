//! Every route and status code over real HTTP (PROTOCOL.md §4, §6, §7).

mod common;

use common::*;
use serde_json::{json, Value};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_and_session_routes() {
    let server = start().await;
    let base = server.url();
    let health = send(http().get(format!("{base}/healthz"))).await;
    assert_eq!((health.status, health.body.as_slice()), (200, &b"ok"[..]));

    let sid = create_session(&base, "support").await;
    assert_eq!(sid.len(), 26);
    assert_eq!(sid, sid.to_lowercase());
    let got = send(http().get(format!("{base}/api/v1/sessions/{sid}"))).await;
    assert_eq!(got.status, 200);
    assert_eq!(got.json()["data"]["agent"]["name"], "support");
    let missing = send(http().get(format!("{base}/api/v1/sessions/nope"))).await;
    assert_eq!(missing.status, 404);
    assert_eq!(
        missing.json()["error"]["message"],
        "Session not found: nope"
    );

    let other = create_session(&base, "storyteller").await;
    let list = send(http().get(format!("{base}/api/v1/sessions?limit=1")))
        .await
        .json();
    assert_eq!(list["data"][0]["id"], other.as_str(), "newest first");
    assert_eq!(list["pagination"]["limit"], 1);
    let token = list["pagination"]["next_page_token"]
        .as_str()
        .unwrap()
        .to_owned();
    let page2 = send(http().get(format!("{base}/api/v1/sessions?limit=1&page_token={token}")))
        .await
        .json();
    assert_eq!(page2["data"][0]["id"], sid.as_str());

    let unknown = send(
        http()
            .post(format!("{base}/api/v1/sessions"))
            .json(&json!({"agent": {"name": "nobody"}})),
    )
    .await;
    assert_eq!(unknown.status, 404);
    let bad = send(
        http()
            .post(format!("{base}/api/v1/sessions"))
            .header("content-type", "application/json")
            .body("{not json"),
    )
    .await;
    assert_eq!(bad.status, 400);
    assert!(bad.json()["error"]["message"].is_string());
    let spec = send(
        http()
            .post(format!("{base}/api/v1/sessions"))
            .json(&json!({"agent": {"spec": {"instructions": "x"}}})),
    )
    .await;
    assert_eq!(spec.status, 201);
    assert_eq!(spec.json()["data"]["agent"]["type"], "inline");
    assert_eq!(
        send(http().get(format!("{base}/api/v1/sessions?limit=101")))
            .await
            .status,
        400
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_stream_listings_and_merge_equivalence() {
    let server = start().await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    let reply = post_turn(&base, &sid, &message("Where is my order ORD-4821?")).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.headers["content-type"], "text/event-stream");
    assert_eq!(reply.headers["cache-control"], "no-cache");
    assert!(reply.body.starts_with(b"data: {"), "data line first");
    let frames = reply.frames();
    let seqs: Vec<u64> = frames.iter().map(|(s, _)| *s).collect();
    assert_eq!(seqs, (1..=frames.len() as u64).collect::<Vec<_>>());
    assert_eq!(
        types(&frames)[..3],
        ["turn.created", "mcp.initialize", "model.message"]
    );
    let state = last_state(&frames);
    assert_eq!(state["status"], "done");
    assert!(state["output"]["content"]
        .as_str()
        .unwrap()
        .contains("Łukasz Nowak"));
    let tid = turn_id(&frames);
    assert!(tid.ends_with(".local"));

    let turn = send(http().get(format!("{base}/api/v1/sessions/{sid}/turns/{tid}")))
        .await
        .json();
    assert_eq!(turn["data"]["state"], state);
    assert_eq!(turn["data"]["previous_turn_id"], Value::Null);
    let events = send(http().get(format!("{base}/api/v1/sessions/{sid}/turns/{tid}/events")))
        .await
        .json();
    let listed = events["data"].as_array().unwrap().clone();
    assert!(listed.iter().all(|e| e["type"] != "model.message.delta"));
    // Listing == merged live stream (placeholder + deltas), event for event.
    assert_eq!(merge_live(&frames), listed);
    let desc = send(http().get(format!(
        "{base}/api/v1/sessions/{sid}/turns/{tid}/events?order=desc&limit=2"
    )))
    .await
    .json();
    assert_eq!(desc["data"][0]["type"], "turn.done");
    assert!(desc["pagination"]["next_page_token"].is_string());

    let session_events = send(http().get(format!("{base}/api/v1/sessions/{sid}/events")))
        .await
        .json();
    let first = &session_events["data"][0];
    assert_eq!(first["turn_id"], tid.as_str());
    assert_eq!(first["event"]["type"], "turn.done", "newest first");
    let turns = send(http().get(format!("{base}/api/v1/sessions/{sid}/turns")))
        .await
        .json();
    assert_eq!(turns["data"].as_array().unwrap().len(), 1);
    assert_eq!(turns["pagination"]["limit"], 25);
    assert_eq!(
        send(http().get(format!("{base}/api/v1/sessions/{sid}/turns/x.local")))
            .await
            .status,
        404
    );
    let session = send(http().get(format!("{base}/api/v1/sessions/{sid}")))
        .await
        .json();
    assert_eq!(session["data"]["title"], "Where is my order ORD-4821?");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_turn_errors_and_stream_false() {
    let server = start_with(|c| c.max_body_bytes = 4096).await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    let plain = post_turn(
        &base,
        &sid,
        &json!({"input": [{"type": "user.message", "content": "hi"}], "stream": false}),
    )
    .await;
    assert_eq!(plain.status, 200);
    let turn = plain.json();
    assert_eq!(turn["data"]["state"]["status"], "running");
    assert!(turn["data"]["id"].as_str().unwrap().ends_with(".local"));
    assert_eq!(
        post_turn(&base, &sid, &json!({"input": "nope"}))
            .await
            .status,
        400
    );
    assert_eq!(
        post_turn(&base, &sid, &json!({"input": [{"type": "user.bogus"}]}))
            .await
            .status,
        400
    );
    assert_eq!(
        post_turn(
            &base,
            &sid,
            &json!({"previous_turn_id": "zzz.local", "input": []})
        )
        .await
        .status,
        404
    );
    assert_eq!(post_turn(&base, "nope", &message("hi")).await.status, 404);
    let huge = post_turn(&base, &sid, &message(&"x".repeat(10_000))).await;
    assert_eq!(huge.status, 413);
    assert!(huge.json()["error"]["message"].is_string());
    let approvals_without_pending = json!({"input": [{"type": "user.tool_approval", "thread_id": "main", "tool_call_id": "call_x", "approval": {"status": "allow"}}]});
    assert_eq!(
        post_turn(&base, &sid, &approvals_without_pending)
            .await
            .status,
        422
    );
}

/// A refund or a lookup of an order that does not exist ends the turn `done` with a plain
/// answer after the failed lookup: no approval is asked for an order with no customer or total.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_order_ends_the_turn_without_an_approval() {
    let server = start().await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    for (ask, answer) in [
        (
            "Refund €20 on ORD-3100, wrong size",
            "I could not find order ORD-3100, so I cannot refund it.",
        ),
        (
            "Where is my order ORD-3100?",
            "I could not find order ORD-3100. Check the number",
        ),
    ] {
        let frames = post_turn(&base, &sid, &message(ask)).await.frames();
        let state = last_state(&frames);
        assert_eq!(state["status"], "done", "{ask}");
        assert!(
            state["required_actions"]
                .as_array()
                .is_none_or(Vec::is_empty),
            "{ask}: {state}"
        );
        let merged = merge_live(&frames);
        assert!(
            !merged.iter().any(|e| e["type"] == "tool.approval_required"),
            "{ask}"
        );
        let last = merged
            .iter()
            .rev()
            .find(|e| e["type"] == "model.message")
            .unwrap();
        let text = last["content"].as_str().unwrap_or("");
        assert!(text.starts_with(answer), "{ask}: {text}");
    }
    // A known order afterwards still reads its own fields (no stale `result.error`).
    approval_turn(&base, &sid).await;
}

async fn approval_turn(base: &str, sid: &str) -> (String, String) {
    let frames = post_turn(
        base,
        sid,
        &message("Refund €49.50 on ORD-2031, it arrived broken."),
    )
    .await
    .frames();
    let state = last_state(&frames);
    assert_eq!(state["status"], "done");
    assert_eq!(state["output"], Value::Null);
    let action = &state["required_actions"][0];
    let streamed = frames
        .iter()
        .find(|(_, e)| e["type"] == "tool.approval_required")
        .unwrap();
    assert_eq!(
        action, &streamed.1,
        "required_actions holds the whole streamed event"
    );
    let call = action["tool_calls"][0]["id"].as_str().unwrap().to_owned();
    let (text, arguments) = refund_proposal(&frames);
    assert!(
        text.ends_with("I need your approval to refund 49.5 EUR of it."),
        "the proposal names the amount asked for, not the order total: {text}"
    );
    assert_eq!(arguments["amount"], 49.5);
    (turn_id(&frames), call)
}

/// The text and `process_refund` arguments of the message that asks for approval.
fn refund_proposal(frames: &[(u64, Value)]) -> (String, Value) {
    let merged = merge_live(frames);
    let message = merged
        .iter()
        .find(|e| {
            e["type"] == "model.message"
                && e["tool_calls"][0]["function"]["name"] == "process_refund"
        })
        .expect("a process_refund proposal");
    let arguments = message["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap();
    (
        message["content"].as_str().unwrap_or("").to_owned(),
        serde_json::from_str(arguments).unwrap(),
    )
}

fn approval(call: &str, status: &str) -> Value {
    json!({"input": [{"type": "user.tool_approval", "thread_id": "main", "tool_call_id": call, "approval": {"status": status, "reason": "not eligible"}}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn support_allow_refunds_once_and_deny_refunds_nothing() {
    let server = start().await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    let (t1, call) = approval_turn(&base, &sid).await;
    assert_eq!(
        post_turn(&base, &sid, &message("hello?")).await.status,
        422,
        "message while approval pending"
    );
    let frames = post_turn(&base, &sid, &approval(&call, "allow"))
        .await
        .frames();
    assert_eq!(frames[0].1["previous_turn_id"], t1.as_str());
    let response = frames
        .iter()
        .find(|(_, e)| e["type"] == "tool.response")
        .unwrap();
    assert_eq!(response.1["tool_call_id"], call.as_str());
    let result: Value = serde_json::from_str(response.1["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["refunded"], 49.5);
    assert_eq!(last_state(&frames)["status"], "done");
    assert_eq!(
        server.runtime.store.refunded("ORD-2031").unwrap(),
        Some(49.5)
    );
    // Replaying the continuation against the paused turn cannot refund twice.
    let mut replay = approval(&call, "allow");
    replay["previous_turn_id"] = json!(t1);
    let again = post_turn(&base, &sid, &replay).await.frames();
    let content = again
        .iter()
        .find(|(_, e)| e["type"] == "tool.response")
        .unwrap()
        .1["content"]
        .clone();
    assert_eq!(content, response.1["content"]);
    assert_eq!(
        server.runtime.store.refunded("ORD-2031").unwrap(),
        Some(49.5)
    );
    // The auto parent is now finished with nothing pending.
    assert_eq!(
        post_turn(&base, &sid, &approval(&call, "allow"))
            .await
            .status,
        422
    );

    // No amount in the message (and none carried over from the refund before): the whole
    // remaining balance, and the proposal says so.
    let frames = post_turn(&base, &sid, &message("Also refund ORD-4821 please"))
        .await
        .frames();
    let (text, arguments) = refund_proposal(&frames);
    assert!(
        text.contains("ORD-4821") && text.ends_with("to refund its remaining balance."),
        "{text}"
    );
    assert_eq!(arguments.get("amount"), None, "{arguments}");
    let call = last_state(&frames)["required_actions"][0]["tool_calls"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let frames = post_turn(&base, &sid, &approval(&call, "allow"))
        .await
        .frames();
    assert_eq!(last_state(&frames)["status"], "done");
    assert_eq!(
        server.runtime.store.refunded("ORD-4821").unwrap(),
        Some(89.9)
    );

    let sid2 = create_session(&base, "support").await;
    let (_, call2) = approval_turn(&base, &sid2).await;
    let denied = post_turn(&base, &sid2, &approval(&call2, "deny"))
        .await
        .frames();
    let response = denied
        .iter()
        .find(|(_, e)| e["type"] == "tool.response")
        .unwrap();
    assert_eq!(
        response.1["content"],
        r#"{"error":"User denied tool call: not eligible"}"#
    );
    assert!(last_state(&denied)["output"]["content"]
        .as_str()
        .unwrap()
        .contains("did not refund"));
    assert_eq!(
        server.runtime.store.refunded("ORD-2031").unwrap(),
        Some(49.5)
    );
}

/// The `github` agent's `auth_url` is the emulator's own fake authorization page, absolute
/// against the emulator's own address; the page authorizes and sends the user back.
async fn fake_oauth_walkthrough(base: &str, auth_required: &Value) {
    let server = &auth_required["mcp_servers"][0];
    assert_eq!(server["name"], "github");
    let url = server["auth_url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{base}/fake-oauth/authorize?server=github&")),
        "the auth_url points at this emulator: {url}"
    );
    let consent = send(http().get(url)).await;
    assert_eq!(consent.status, 200);
    let csp = consent.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
    assert!(consent.headers["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let html = String::from_utf8(consent.body).unwrap();
    assert!(html.contains("Authorize github"), "{html}");
    assert!(html.contains(r#"<form method="post" action="/fake-oauth/authorize">"#));

    let authorize = |decision: &str| {
        http()
            .post(format!("{base}/fake-oauth/authorize"))
            .form(&[("server", "github"), ("decision", decision)])
    };
    let done = send(authorize("allow")).await;
    assert_eq!(done.status, 200);
    let html = String::from_utf8(done.body).unwrap();
    assert!(html.contains("github is authorized"), "{html}");
    assert!(
        html.contains("continue"),
        "tells the user to go back: {html}"
    );
    let denied = String::from_utf8(send(authorize("deny")).await.body).unwrap();
    assert!(denied.contains("github was not authorized"), "{denied}");
    assert_eq!(send(authorize("maybe")).await.status, 400);
    // The name is written into the page: anything but a plain name is refused.
    let evil = send(http().get(format!(
        "{base}/fake-oauth/authorize?server=%3Cscript%3Ealert(1)%3C/script%3E"
    )))
    .await;
    assert_eq!(evil.status, 400);
    assert!(!String::from_utf8(evil.body).unwrap().contains("<script>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concierge_github_flaky_researcher_storyteller() {
    let server = start().await;
    let base = server.url();

    let sid = create_session(&base, "concierge").await;
    let frames = post_turn(&base, &sid, &message("Plan a trip"))
        .await
        .frames();
    let required = &last_state(&frames)["required_actions"][0];
    assert_eq!(required["type"], "tool.response_required");
    let call = required["tool_calls"][0]["id"].as_str().unwrap();
    let wrong = json!({"input": [{"type": "user.tool_approval", "thread_id": "main", "tool_call_id": call, "approval": {"status": "allow"}}]});
    assert_eq!(post_turn(&base, &sid, &wrong).await.status, 422);
    let answer = json!({"input": [{"type": "user.tool_response", "thread_id": "main", "tool_call_id": call, "content": "Kyoto 京都"}]});
    let frames = post_turn(&base, &sid, &answer).await.frames();
    assert!(!types(&frames).contains(&"tool.response".to_owned()));
    assert!(last_state(&frames)["output"]["content"]
        .as_str()
        .unwrap()
        .contains("Kyoto 京都"));

    let sid = create_session(&base, "github").await;
    let frames = post_turn(&base, &sid, &message("List issues of acme/widgets"))
        .await
        .frames();
    assert_eq!(
        types(&frames),
        ["turn.created", "mcp.auth_required", "turn.done"]
    );
    assert_eq!(frames[1].1["thread_id"], Value::Null);
    assert_eq!(
        last_state(&frames)["required_actions"][0]["type"],
        "mcp.auth_required"
    );
    fake_oauth_walkthrough(&base, &frames[1].1).await;
    let frames = post_turn(&base, &sid, &json!({"input": []})).await.frames();
    assert_eq!(types(&frames)[1], "mcp.initialize");
    assert!(last_state(&frames)["output"]["content"]
        .as_str()
        .unwrap()
        .contains("acme/widgets"));
    let frames = post_turn(&base, &sid, &message("again")).await.frames();
    assert!(
        !types(&frames).contains(&"mcp.auth_required".to_owned()),
        "authorized once per session"
    );

    let sid = create_session(&base, "flaky").await;
    let frames = post_turn(&base, &sid, &message("do it")).await.frames();
    assert_eq!(
        types(&frames),
        ["turn.created", "model.message", "turn.done"]
    );
    let state = last_state(&frames);
    assert_eq!(state["status"], "error");
    assert_eq!(
        state["message"],
        "Request failed (500): fake upstream failure (scripted)"
    );
    let tid = turn_id(&frames);
    let listed = send(http().get(format!("{base}/api/v1/sessions/{sid}/turns/{tid}/events")))
        .await
        .json();
    let listed_types: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed_types,
        ["turn.created", "turn.done"],
        "orphan placeholder is live only"
    );

    let sid = create_session(&base, "researcher").await;
    let frames = post_turn(&base, &sid, &message("Research ORD-2031"))
        .await
        .frames();
    let threads: Vec<&str> = frames
        .iter()
        .filter(|(_, e)| e["type"] == "thread.created")
        .map(|(_, e)| e["thread_id"].as_str().unwrap())
        .collect();
    assert_eq!(threads.len(), 3);
    let owners: Vec<&str> = frames
        .iter()
        .filter_map(|(_, e)| e["thread_id"].as_str())
        .filter(|t| *t != "main")
        .collect();
    let switches = owners.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        switches > 3,
        "subagent events interleave ({switches} switches)"
    );
    let empty_results = frames
        .iter()
        .filter(|(_, e)| {
            e["type"] == "tool.response" && e["content"] == "" && e["thread_id"] == "main"
        })
        .count();
    assert_eq!(empty_results, 3);
    let done_threads = frames
        .iter()
        .filter(|(_, e)| e["type"] == "thread.done")
        .count();
    assert_eq!(done_threads, 3);
    assert_eq!(last_state(&frames)["status"], "done");

    let sid = create_session(&base, "storyteller").await;
    let frames = post_turn(&base, &sid, &message("Tell me a story of 2000 words"))
        .await
        .frames();
    let text = last_state(&frames)["output"]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.split_whitespace().count() >= 2000);
    assert!(!text.is_ascii());
    assert!(frames.len() > 500);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_sent_the_same_message_get_distinct_tool_call_ids() {
    // The refund tool is idempotent per tool call id: if two sessions drew the same id, the
    // second session's approval would silently return the first session's refund.
    let server = start().await;
    let base = server.url();
    let mut ids = Vec::new();
    for _ in 0..2 {
        let sid = create_session(&base, "support").await;
        let frames = post_turn(&base, &sid, &message("Refund €49.50 on ORD-2031"))
            .await
            .frames();
        let calls: Vec<String> = frames
            .iter()
            .filter_map(|(_, e)| e["tool_calls"].as_array())
            .flatten()
            .filter_map(|c| c["id"].as_str().map(str::to_owned))
            .collect();
        assert!(!calls.is_empty(), "the support agent calls tools");
        ids.push(calls);
    }
    assert!(ids[0].iter().all(|id| !ids[1].contains(id)), "{ids:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_are_deterministic_for_a_seed() {
    let mut outputs = Vec::new();
    for _ in 0..2 {
        let server = start_with(|c| c.seed = 7).await;
        let base = server.url();
        let sid = create_session(&base, "researcher").await;
        let frames = post_turn(&base, &sid, &message("Research ORD-2031"))
            .await
            .frames();
        let shape: Vec<(String, Value, Value)> = frames
            .iter()
            .map(|(_, e)| {
                (
                    e["type"].as_str().unwrap().to_owned(),
                    e["content"].clone(),
                    e["tool_calls"].clone(),
                )
            })
            .collect();
        let threads: Vec<Value> = frames.iter().map(|(_, e)| e["thread_id"].clone()).collect();
        outputs.push((shape, threads));
    }
    assert_eq!(outputs[0], outputs[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_is_idempotent_and_ends_the_stream() {
    let server = start_with(|c| c.pace_ms = 20).await;
    let base = server.url();
    let sid = create_session(&base, "storyteller").await;
    let resp = http()
        .post(format!("{base}/api/v1/sessions/{sid}/turns"))
        .json(&message("500 words"))
        .send()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let cancel = send(http().post(format!("{base}/api/v1/sessions/{sid}/cancel"))).await;
    assert_eq!((cancel.status, cancel.json()), (200, json!({})));
    let body = tokio::time::timeout(Duration::from_secs(5), resp.bytes())
        .await
        .unwrap()
        .unwrap();
    let frames = parse_sse(&body);
    let state = last_state(&frames);
    assert_eq!(state["status"], "cancelled");
    assert_eq!(state["reason"], "client-cancelled");
    assert!(state.get("output").is_none());
    let again = send(http().post(format!("{base}/api/v1/sessions/{sid}/cancel"))).await;
    assert_eq!((again.status, again.json()), (200, json!({})));
    let tid = turn_id(&frames);
    let listed = send(http().get(format!("{base}/api/v1/sessions/{sid}/turns/{tid}/events")))
        .await
        .json();
    let done = listed["data"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        done,
        frames.last().unwrap().1,
        "same turn.done live and stored"
    );
    assert_eq!(
        send(http().post(format!("{base}/api/v1/sessions/nope/cancel")))
            .await
            .status,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_turn_freezes_the_running_one() {
    let server = start_with(|c| c.pace_ms = 15).await;
    let base = server.url();
    let sid = create_session(&base, "storyteller").await;
    let first = http()
        .post(format!("{base}/api/v1/sessions/{sid}/turns"))
        .json(&message("300 words"))
        .send()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    let second = post_turn(
        &base,
        &sid,
        &json!({"input": [{"type": "user.message", "content": "10 words"}], "stream": false}),
    )
    .await
    .json();
    let t1 = second["data"]["previous_turn_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let turn1 = send(http().get(format!("{base}/api/v1/sessions/{sid}/turns/{t1}")))
        .await
        .json();
    assert_eq!(
        turn1["data"]["state"]["reason"], "cancelled-for-next-turn",
        "frozen at once in the store"
    );
    let body = tokio::time::timeout(Duration::from_secs(10), first.bytes())
        .await
        .unwrap()
        .unwrap();
    let frames = parse_sse(&body);
    assert_eq!(last_state(&frames)["reason"], "cancelled-for-next-turn");
    let listed = send(http().get(format!("{base}/api/v1/sessions/{sid}/turns/{t1}/events")))
        .await
        .json();
    let listed: Vec<Value> = listed["data"].as_array().unwrap().clone();
    assert_eq!(
        listed
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["turn.created", "turn.done"]
    );
    assert_ne!(
        listed[1]["id"],
        frames.last().unwrap().1["id"],
        "two turn.done records, different ids"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_cursor_precedence_hang_and_412() {
    let server = start_with(|c| {
        // Replay window after done: done_ttl - threshold = 3 s (margins for a loaded machine).
        c.done_ttl = Duration::from_millis(4000);
        c.subscribe_threshold = Duration::from_millis(1000);
        c.subscribe_timeout = Duration::from_millis(1500);
    })
    .await;
    let base = server.url();
    let sid = create_session(&base, "support").await;
    let frames = post_turn(&base, &sid, &message("hi")).await.frames();
    let tid = turn_id(&frames);
    let last = frames.len() as u64;
    let url = format!("{base}/api/v1/sessions/{sid}/turns/{tid}/subscribe");
    let all = send(http().get(&url)).await;
    assert_eq!(all.status, 200);
    assert_eq!(all.frames(), frames, "no cursor replays from 1");
    let header_wins = send(
        http()
            .get(format!("{url}?after_sequence_number=1"))
            .header("last-event-id", "3"),
    )
    .await
    .frames();
    assert_eq!(header_wins[0].0, 4);
    let bad = send(http().get(&url).header("last-event-id", "abc")).await;
    assert_eq!(bad.status, 400);
    assert_eq!(
        send(http().get(format!("{url}?after_sequence_number=-1")))
            .await
            .status,
        400
    );
    let started = std::time::Instant::now();
    let hang = send(http().get(format!("{url}?after_sequence_number={last}"))).await;
    assert_eq!((hang.status, hang.body.len()), (200, 0));
    assert!(
        started.elapsed() >= Duration::from_millis(1400),
        "held until the subscribe timeout"
    );
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let gone = send(http().get(&url)).await;
    assert_eq!(gone.status, 412);
    assert_eq!(
        gone.json()["error"]["message"],
        format!("Cannot read from stream, stream does not exist anymore: agent:turn:default:{sid}:{tid}:stream")
    );
    assert_eq!(
        send(http().get(format!(
            "{base}/api/v1/sessions/{sid}/turns/01nonexistentturn.local/subscribe"
        )))
        .await
        .status,
        404
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bearer_token_and_cors() {
    let server = start_with(|c| {
        c.token = Some("s3cret".into());
        c.cors_origins = vec!["http://localhost:5173".into()];
    })
    .await;
    let base = server.url();
    let denied = send(
        http()
            .post(format!("{base}/api/v1/sessions"))
            .json(&json!({"agent": {"name": "support"}})),
    )
    .await;
    assert_eq!(denied.status, 401);
    assert!(denied.json()["error"]["message"].is_string());
    let ok = send(
        http()
            .post(format!("{base}/v1/agents/sessions"))
            .bearer_auth("s3cret")
            .json(&json!({"agent_name": "support"})),
    )
    .await;
    assert_eq!(ok.status, 201);
    let preflight = send(
        http()
            .request(reqwest::Method::OPTIONS, format!("{base}/api/v1/sessions"))
            .header("origin", "http://localhost:5173")
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization,x-forgestream-fault,last-event-id",
            ),
    )
    .await;
    assert_eq!(preflight.status, 200);
    assert_eq!(
        preflight.headers["access-control-allow-origin"],
        "http://localhost:5173"
    );
    let allowed = preflight.headers["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        allowed.contains("x-forgestream-fault") && allowed.contains("last-event-id"),
        "{allowed}"
    );
    assert_eq!(
        send(http().get(format!("{base}/healthz"))).await.status,
        200,
        "healthz needs no token"
    );
}

/// `--cors-allow-header content-type`: the preflight no longer allows `Last-Event-ID` (a proxy
/// that refuses a resume's header, issue 14), so a browser refuses the request before sending it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_allow_header_limits_the_preflight() {
    let server = start_with(|c| {
        c.cors_origins = vec!["http://localhost:5173".into()];
        c.cors_allow_headers = vec!["content-type".into()];
    })
    .await;
    let preflight = send(
        http()
            .request(
                reqwest::Method::OPTIONS,
                format!("{}/api/v1/sessions/s/turns/t/subscribe", server.url()),
            )
            .header("origin", "http://localhost:5173")
            .header("access-control-request-method", "GET")
            .header("access-control-request-headers", "last-event-id"),
    )
    .await;
    let allowed = preflight
        .headers
        .get("access-control-allow-headers")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    assert_eq!(allowed, "content-type");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_flavor() {
    let server = start_with(|c| c.pace_ms = 2).await;
    let base = server.url();
    let created = send(
        http()
            .post(format!("{base}/v1/agents/sessions"))
            .json(&json!({"agent_name": "support"})),
    )
    .await;
    assert_eq!(created.status, 201);
    let sid = created.json()["data"]["id"].as_str().unwrap().to_owned();
    assert!(sid.ends_with(".dev"), "{sid}");
    assert_eq!(
        send(http().get(format!("{base}/api/v1/sessions/{sid}")))
            .await
            .status,
        404,
        "flavors do not mix"
    );
    let resp = http()
        .post(format!("{base}/v1/agents/sessions/{sid}/turns"))
        .json(&message("Where is ORD-2031?"))
        .send()
        .await
        .unwrap();
    let first_chunk = tokio::time::timeout(Duration::from_secs(5), async {
        let mut resp = resp;
        let chunk = resp.chunk().await.unwrap().unwrap();
        (chunk, resp)
    })
    .await
    .unwrap();
    let created_event = &parse_sse(&first_chunk.0)[0].1;
    assert!(created_event["created_by"].is_object());
    let tid = created_event["turn_id"].as_str().unwrap().to_owned();
    assert!(tid.ends_with(".dev.local"), "{tid}");
    let running = send(http().get(format!(
        "{base}/v1/agents/sessions/{sid}/turns/{tid}/events"
    )))
    .await;
    assert_eq!(running.status, 409);
    let in_progress = send(http().get(format!("{base}/v1/agents/sessions/{sid}/events")))
        .await
        .json();
    assert_eq!(
        in_progress["data"].as_array().unwrap().len(),
        0,
        "running tip left out"
    );
    let _ = first_chunk.1.bytes().await.unwrap();
    let listed = send(http().get(format!(
        "{base}/v1/agents/sessions/{sid}/turns/{tid}/events"
    )))
    .await
    .json();
    let listed_types: Vec<&str> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert!(!listed_types.contains(&"turn.created") && !listed_types.contains(&"turn.done"));
    assert!(listed_types.contains(&"model.message"));
    let url = format!("{base}/v1/agents/sessions/{sid}/turns/{tid}/subscribe");
    let body_wins = send(
        http()
            .post(&url)
            .header("last-event-id", "1")
            .json(&json!({"after_sequence_number": 5})),
    )
    .await
    .frames();
    assert_eq!(body_wins[0].0, 6);
    let header_only = send(http().post(&url).header("last-event-id", "3"))
        .await
        .frames();
    assert_eq!(header_only[0].0, 4);
    assert_eq!(
        send(http().get(&url)).await.status,
        405,
        "gateway subscribe is POST"
    );
    let turn = send(http().get(format!("{base}/v1/agents/sessions/{sid}/turns/{tid}")))
        .await
        .json();
    assert!(turn["data"]["created_by_subject"].is_object());
    let cancel = send(http().post(format!("{base}/v1/agents/sessions/{sid}/cancel"))).await;
    assert_eq!((cancel.status, cancel.json()), (200, json!({})));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_the_demo_app_with_csp_and_wasm_type() {
    let dir = std::env::temp_dir().join(format!("forgestream-www-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    std::fs::write(dir.join("index.html"), "<!doctype html><title>demo</title>").unwrap();
    std::fs::write(dir.join("assets/core.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let www = dir.clone();
    let server = start_with(move |c| c.www = Some(www)).await;
    let base = server.url();
    let index = send(http().get(format!("{base}/"))).await;
    assert_eq!(index.status, 200);
    assert_eq!(
        index.headers["content-security-policy"],
        "script-src 'self' 'wasm-unsafe-eval'; frame-ancestors 'none'"
    );
    let spa = send(http().get(format!("{base}/sessions/some/deep/link"))).await;
    assert_eq!(
        (spa.status, spa.body.clone()),
        (200, index.body.clone()),
        "SPA fallback"
    );
    let wasm = send(http().get(format!("{base}/assets/core.wasm"))).await;
    assert_eq!(wasm.headers["content-type"], "application/wasm");
    assert!(wasm.headers.get("content-security-policy").is_none());
    assert_eq!(
        send(http().get(format!("{base}/api/v1/nothing-here")))
            .await
            .status,
        404,
        "API paths never fall back"
    );
    let _ = std::fs::remove_dir_all(dir);
}
