//! Recovery and continuation in the browser against the emulator: page-refresh restore (a new
//! client over the same localStorage), 412, 401 header refresh, cancel vs disconnect, interrupt,
//! approvals / questions / MCP auth, storage faults, the EventSource transport and the gateway
//! flavor. `wasm-pack test --headless --chrome crates/forgestream-web`.
#![cfg(target_arch = "wasm32")]
mod support;

use forgestream_core::session::checkpoint::keys;
use forgestream_web::client::WasmClient;
use support::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// A "refreshed page": a brand-new client over the same localStorage restores the session
/// mid-stream and ends with exactly the server's history — no duplicated or missing text.
#[wasm_bindgen_test]
async fn restore_mid_stream_from_local_storage() {
    clear_local_storage("t-restore");
    let first = client_in("local", "t-restore", None);
    let session = create(&first, "storyteller").await;
    await_js(session.send(message("Tell a story, 150 words, 8 ms"), false, None))
        .await
        .expect("send");
    wait_text(&session, 80, 10_000).await;
    session.disconnect();

    let second = client_in("local", "t-restore", None);
    assert_eq!(
        second.last_session_id(None).as_deref(),
        Some(session.id().as_str())
    );
    let restored = second.session(session.id());
    await_js(restored.load()).await.expect("load");
    let followed = await_js(restored.resume()).await.expect("resume");
    assert!(
        followed.as_string().is_some(),
        "the checkpoint names the live turn"
    );
    wait_status(&restored, &["done"], 20_000).await;
    assert_eq!(summary(&restored), persisted_summary(&session.id()).await);
}

/// Two restored clients follow one live turn at the same time (two tabs reloaded together): both
/// send the identical `GET …/subscribe?after_sequence_number=0`, and both must stream while the
/// turn still runs. Firefox holds a second request for a URL behind the first one's HTTP-cache
/// entry, which a live stream never finishes, unless the request is `cache: "no-store"`; without
/// it the second client received nothing until the first stream ended (Chromium does not wait).
#[wasm_bindgen_test]
async fn two_clients_resuming_one_turn_at_once_both_stream_live() {
    clear_local_storage("t-two-resumes");
    let origin = client_in("local", "t-two-resumes", None);
    let session = create(&origin, "storyteller").await;
    await_js(session.send(message("Tell a story, 600 words, 40 ms"), false, None))
        .await
        .expect("send");
    wait_text(&session, 40, 10_000).await;

    let (b, c) = (
        client_in("local", "t-two-resumes", None),
        client_in("local", "t-two-resumes", None),
    );
    let (b, c) = (b.session(session.id()), c.session(session.id()));
    await_js(b.load()).await.expect("load b");
    await_js(c.load()).await.expect("load c");
    let (rb, rc) = (b.resume(), c.resume());
    assert!(await_js(rb).await.expect("resume b").as_string().is_some());
    assert!(await_js(rc).await.expect("resume c").as_string().is_some());
    // Both get text before the ~24 s turn is over: they follow it live, not after its end.
    wait_text(&b, 120, 10_000).await;
    wait_text(&c, 120, 10_000).await;
    let live = persisted_summary(&session.id()).await;
    assert_eq!(turn_status(&live, 0), "running", "{live}");

    await_js(session.cancel(None)).await.expect("cancel");
    for s in [&session, &b, &c] {
        wait_status(s, &["done"], 20_000).await;
    }
    let persisted = persisted_summary(&session.id()).await;
    assert_eq!(summary(&b), persisted);
    assert_eq!(summary(&c), persisted);
}

/// A refresh while paused: the approval comes back from the history and can be answered.
#[wasm_bindgen_test]
async fn restore_while_paused_keeps_the_approval() {
    clear_local_storage("t-paused");
    let first = client_in("local", "t-paused", None);
    let session = create(&first, "support").await;
    await_js(session.send(
        message("Refund €49.50 on ORD-2031, it arrived broken"),
        false,
        None,
    ))
    .await
    .expect("send");
    wait_status(&session, &["done"], 20_000).await;
    session.disconnect();

    let second = client_in("local", "t-paused", None);
    let restored = second.session(second.last_session_id(None).expect("last session"));
    await_js(restored.load()).await.expect("load");
    await_js(restored.resume()).await.expect("resume");
    let pending = first_pending(&restored);
    assert_eq!(
        get(&pending, "kind").as_string().as_deref(),
        Some("toolApproval")
    );
    let call = get(&pending, "toolCallId").as_string().unwrap();
    await_js(restored.respond(decisions(&[("deny", &call, Some("not eligible"))]), None))
        .await
        .expect("respond");
    wait_status(&restored, &["done"], 20_000).await;
    let s = summary(&restored);
    assert_eq!(s["pending"], serde_json::json!([]));
    assert_eq!(s, persisted_summary(&session.id()).await);
}

/// 412 while the turn still runs: one rebuild, a clear "live unavailable" state (no retry
/// loop); a manual refresh follows the live stream again once it is available.
#[wasm_bindgen_test]
async fn gone_412_rebuilds_once_then_refresh_resumes() {
    let first = client("memory", None);
    let session = create(&first, "storyteller").await;
    let turn = await_js(session.send(message("Tell a story, 150 words, 8 ms"), false, None))
        .await
        .expect("send");
    wait_text(&session, 40, 10_000).await;
    session.disconnect();

    let second = client("memory", Some("force-412,on=subscribe,once"));
    let follower = second.session(session.id());
    follower.attach(turn.as_string().unwrap());
    let status = wait_status(&follower, &["liveUnavailable", "done"], 10_000).await;
    assert_eq!(status, "liveUnavailable");
    follower.refresh();
    wait_status(&follower, &["done"], 20_000).await;
    assert_eq!(summary(&follower), persisted_summary(&session.id()).await);
}

/// 401 on subscribe: the header provider is asked again once and the same cursor is retried.
#[wasm_bindgen_test]
async fn unauthorized_refreshes_headers_once() {
    let first = client("memory", None);
    let session = create(&first, "storyteller").await;
    let turn = await_js(session.send(message("Tell a story, 100 words, 5 ms"), false, None))
        .await
        .expect("send");
    session.disconnect();

    let o = options("memory", "trueforge", "fetch", None);
    set(
        &o,
        "headers",
        counting_provider("auth401", Some("status=401,on=subscribe,once")),
    );
    let second = WasmClient::new(o).unwrap();
    let follower = second.session(session.id());
    follower.attach(turn.as_string().unwrap());
    wait_status(&follower, &["done"], 20_000).await;
    // GetTurn, the refused subscribe, the refresh, the retried subscribe.
    assert!(
        header_calls("auth401") >= 4,
        "provider calls: {}",
        header_calls("auth401")
    );
    assert_eq!(summary(&follower), persisted_summary(&session.id()).await);

    // Always 401: stops with an `auth` error, never loops.
    let o = options("memory", "trueforge", "fetch", None);
    set(
        &o,
        "headers",
        counting_provider("auth401b", Some("status=401,on=subscribe")),
    );
    let third = WasmClient::new(o).unwrap();
    let failing = third.session(session.id());
    let s2 = create(&first, "storyteller").await;
    let t2 = await_js(s2.send(message("Tell a story, 300 words, 20 ms"), false, None))
        .await
        .expect("send");
    s2.disconnect();
    let failing2 = third.session(s2.id());
    failing2.attach(t2.as_string().unwrap());
    assert_eq!(
        wait_status(&failing2, &["failed", "done"], 10_000).await,
        "failed"
    );
    let error = get(&failing2.snapshot().unwrap(), "error");
    assert_eq!(get(&error, "code").as_string().as_deref(), Some("auth"));
    drop(failing);
}

/// `cancel` stops the turn on the server; `disconnect` only closes the transport.
#[wasm_bindgen_test]
async fn cancel_stops_the_turn_but_disconnect_does_not() {
    let c = client("memory", None);
    let cancelled = create(&c, "storyteller").await;
    await_js(cancelled.send(message("Tell a story, 400 words, 10 ms"), false, None))
        .await
        .expect("send");
    wait_text(&cancelled, 30, 10_000).await;
    await_js(cancelled.cancel(None)).await.expect("cancel");
    wait_status(&cancelled, &["done"], 10_000).await;
    let s = summary(&cancelled);
    assert_eq!(turn_status(&s, 0), "cancelled", "{s}");
    assert_eq!(s, persisted_summary(&cancelled.id()).await);

    let disconnected = create(&c, "storyteller").await;
    await_js(disconnected.send(message("Tell a story, 60 words, 5 ms"), false, None))
        .await
        .expect("send");
    wait_text(&disconnected, 10, 10_000).await;
    disconnected.disconnect();
    let persisted = wait_persisted_settled(&disconnected.id(), 20_000).await;
    assert_eq!(
        turn_status(&persisted, 0),
        "done",
        "the turn ran on after the disconnect"
    );
}

/// `send` with `interrupt` starts a new turn; the server freezes the old one.
#[wasm_bindgen_test]
async fn interrupt_starts_a_new_turn() {
    let c = client("memory", None);
    let session = create(&c, "storyteller").await;
    await_js(session.send(message("Tell a story, 400 words, 10 ms"), false, None))
        .await
        .expect("send");
    wait_text(&session, 20, 10_000).await;
    await_js(session.send(message("Tell a story, 20 words"), true, None))
        .await
        .expect("interrupt");
    wait_status(&session, &["done"], 20_000).await;
    let persisted = wait_persisted_settled(&session.id(), 20_000).await;
    assert_eq!(
        persisted["turns"][0]["cancelReason"], "cancelled-for-next-turn",
        "{persisted}"
    );
    assert_eq!(turn_status(&persisted, 1), "done");
}

/// `ask_user_question`: the question and its options are pending; an answer continues.
#[wasm_bindgen_test]
async fn ask_user_question_is_answered() {
    let c = client("memory", None);
    let session = create(&c, "concierge").await;
    await_js(session.send(message("Plan a trip for me"), false, None))
        .await
        .expect("send");
    wait_status(&session, &["done"], 20_000).await;
    let pending = first_pending(&session);
    assert_eq!(
        get(&pending, "kind").as_string().as_deref(),
        Some("toolResponse")
    );
    let options = get(&pending, "question.options");
    assert!(js_sys::Array::from(&options).length() >= 2);
    let call = get(&pending, "toolCallId").as_string().unwrap();
    // An empty answer is refused client-side.
    assert!(
        await_js(session.respond(decisions(&[("answer", &call, Some(""))]), None))
            .await
            .is_err()
    );
    await_js(session.respond(decisions(&[("answer", &call, Some("Kyoto 京都"))]), None))
        .await
        .expect("answer");
    wait_status(&session, &["done"], 20_000).await;
    let s = summary(&session);
    assert!(all_text(&s).contains("Kyoto 京都"), "{s}");
    assert_eq!(s, persisted_summary(&session.id()).await);
}

/// MCP auth: one pending action per server; `authDone` continues with an empty-input turn.
#[wasm_bindgen_test]
async fn mcp_auth_continues_with_an_empty_turn() {
    let c = client("memory", None);
    let session = create(&c, "github").await;
    await_js(session.send(message("List open issues of forgestream/demo"), false, None))
        .await
        .expect("send");
    wait_status(&session, &["done"], 20_000).await;
    let pending = first_pending(&session);
    assert_eq!(
        get(&pending, "kind").as_string().as_deref(),
        Some("mcpAuth")
    );
    assert!(get(&pending, "mcpServer.authUrl")
        .as_string()
        .is_some_and(|u| u.starts_with("http")));
    await_js(session.respond(decisions(&[("authDone", "", None)]), None))
        .await
        .expect("continue");
    wait_status(&session, &["done"], 20_000).await;
    let s = summary(&session);
    assert_eq!(s["pending"], serde_json::json!([]), "{s}");
    assert_eq!(s["turns"].as_array().map(|t| t.len()), Some(2));
}

/// Storage that throws on write (quota exceeded) degrades to memory; streaming is unaffected.
/// (sessionStorage, so the filler does not starve the other tests' localStorage.)
#[wasm_bindgen_test]
async fn full_storage_degrades_to_memory() {
    let storage = web_sys::window()
        .unwrap()
        .session_storage()
        .unwrap()
        .unwrap();
    // Fill to the last character: big blocks first, then halving down to one char.
    let mut filler = Vec::new();
    let mut size = 1 << 20;
    while size > 0 {
        let key = format!("filler:{}", filler.len());
        if storage.set_item(&key, &"x".repeat(size)).is_ok() {
            filler.push(key);
        } else {
            size /= 2;
        }
        assert!(filler.len() < 10_000, "sessionStorage never filled up");
    }
    let c = client_in("session", "t-full", None);
    let session = create(&c, "storyteller").await;
    await_js(session.send(message("Tell a story, 40 words"), false, None))
        .await
        .expect("send");
    wait_status(&session, &["done"], 20_000).await;
    let degraded = c.storage_is_memory();
    for key in &filler {
        let _ = storage.remove_item(key);
    }
    assert!(
        degraded,
        "writes into a full sessionStorage must fall back to memory"
    );
    assert_eq!(summary(&session), persisted_summary(&session.id()).await);
}

/// A corrupt checkpoint is ignored (with a warning), never trusted, never fatal.
#[wasm_bindgen_test]
async fn corrupt_checkpoint_is_ignored() {
    let storage = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    // The pointer of this client (its base URL, no scope), as the core names it.
    let pointer = keys::pointer_key("t-corrupt", base_url().trim_end_matches('/'), None);
    storage.set_item(&pointer, "s-corrupt").unwrap();
    storage
        .set_item("t-corrupt:v1:session:s-corrupt", "{not json")
        .unwrap();
    let c = client_in("local", "t-corrupt", None);
    assert_eq!(c.last_session_id(None).as_deref(), Some("s-corrupt"));
    let s = c.session("s-corrupt".into());
    let followed = await_js(s.resume()).await.expect("resume");
    assert!(followed.is_null());
    clear_local_storage("t-corrupt");
}

/// The EventSource transport follows a turn (GET subscribe, browser-parsed SSE).
#[wasm_bindgen_test]
async fn eventsource_transport_follows_a_turn() {
    let first = client("memory", None);
    let session = create(&first, "storyteller").await;
    let turn = await_js(session.send(message("Tell a story, 120 words, 5 ms"), false, None))
        .await
        .expect("send");
    session.disconnect();
    let es = WasmClient::new(options("memory", "trueforge", "eventsource", None)).unwrap();
    let follower = es.session(session.id());
    follower.attach(turn.as_string().unwrap());
    wait_status(&follower, &["done"], 20_000).await;
    assert_eq!(summary(&follower), persisted_summary(&session.id()).await);
}

/// The gateway flavor: `/v1/agents` routes, `agent_name`, POST subscribe with a JSON cursor.
#[wasm_bindgen_test]
async fn gateway_flavor_streams_and_reconnects() {
    let o = options("memory", "gateway", "fetch", Some("drop-at-byte=900,once"));
    let c = WasmClient::new(o).unwrap();
    let session = c
        .open_new_session("{\"agent_name\":\"storyteller\"}")
        .await
        .expect("create");
    await_js(session.send(message("Tell a story, 80 words"), false, None))
        .await
        .expect("send");
    wait_status(&session, &["done"], 20_000).await;
    assert_eq!(
        summary(&session),
        persisted_summary_as(&session.id(), "gateway").await
    );
}
