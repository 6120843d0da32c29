//! The recorded real TrueForge transcripts (`tests/fixtures/recorded/`) replayed byte for byte by
//! `tests/replay/server.mjs` through the whole browser SDK: each live turn must reduce to exactly
//! the view of the server's own persisted listings, also when the stream is cut mid-turn and the
//! SDK has to recover. `scripts/test` starts the replay server (`FORGESTREAM_REPLAY_URL`).
#![cfg(target_arch = "wasm32")]
mod support;

use forgestream_web::client::WasmSession;
use support::replay::*;
use support::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Creates a session on the replayed `scenario`, sends one message and waits for `done`.
async fn first_turn_done(scenario: &str) -> (String, WasmSession) {
    let base = replay_base(scenario);
    let session = replay_session(&base, None).await;
    await_js(session.send(message("recorded"), false, None))
        .await
        .expect("send");
    wait_status(&session, &["done"], 10_000).await;
    (base, session)
}

async fn single_turn(scenario: &str) {
    let (base, session) = first_turn_done(scenario).await;
    let live = summary(&session);
    assert_eq!(
        live,
        recorded_history(&base, &session.id()).await,
        "{scenario}"
    );
}

#[wasm_bindgen_test]
async fn recorded_text_stream() {
    single_turn("text").await;
}

#[wasm_bindgen_test]
async fn recorded_read_only_tool() {
    single_turn("readtool").await;
}

#[wasm_bindgen_test]
async fn recorded_subagent_threads() {
    single_turn("subagent").await;
}

#[wasm_bindgen_test]
async fn recorded_error_turn() {
    single_turn("error").await;
}

#[wasm_bindgen_test]
async fn recorded_cancelled_turn() {
    single_turn("cancel").await;
}

/// The create stream ends after frame 5 with no `turn.done`: the SDK checks the turn (finished),
/// rebuilds it from the recorded listing, and ends with the same view — no text lost or doubled.
#[wasm_bindgen_test]
async fn recorded_streams_cut_mid_turn_recover() {
    for scenario in ["text", "subagent", "readtool"] {
        single_turn(&format!("{scenario}~cut=5")).await;
    }
}

/// Approval and client-tool pauses from the real server: the pending action is exposed with its
/// tool and arguments, the continuation is accepted, and both turns equal the recorded history.
#[wasm_bindgen_test]
async fn recorded_pauses_continue() {
    for (scenario, kind) in [("approve-allow", "toolApproval"), ("ask", "toolResponse")] {
        let (base, session) = first_turn_done(scenario).await;
        let pending = first_pending(&session);
        assert_eq!(
            get(&pending, "kind").as_string().as_deref(),
            Some(kind),
            "{scenario}"
        );
        assert!(
            get(&pending, "toolName").as_string().is_some(),
            "{scenario}"
        );
        let call = get(&pending, "toolCallId").as_string().unwrap();
        let decision = if kind == "toolApproval" {
            decisions(&[("allow", &call, None)])
        } else {
            decisions(&[("answer", &call, Some("Lisbon"))])
        };
        await_js(session.respond(decision, None))
            .await
            .expect("respond");
        wait_status(&session, &["done"], 10_000).await;
        let live = summary(&session);
        assert_eq!(live["pending"], serde_json::json!([]), "{scenario}");
        assert_eq!(
            live,
            recorded_history(&base, &session.id()).await,
            "{scenario}"
        );
    }
}

/// A create stream that does not start with `turn.created` (its first frame lost): the SDK
/// cannot name the turn from the stream, ignores the frames with a warning, and finds its turn
/// with the effect-recovery lookup (newest turn of the session) instead of posting again.
#[wasm_bindgen_test]
async fn a_create_stream_without_turn_created_is_recovered_by_lookup() {
    single_turn("text~skip=1").await;
}

/// A malformed listing body during a rebuild: an `invalid-response` error, retried with backoff,
/// ending `failed` (never a loop, never a half-applied view reported as done).
#[wasm_bindgen_test]
async fn a_malformed_listing_fails_the_rebuild_cleanly() {
    let base = replay_base("text~cut=5~bad-listing");
    let session = replay_session(&base, None).await;
    await_js(session.send(message("recorded"), false, None))
        .await
        .expect("send");
    assert_eq!(
        wait_status(&session, &["failed", "done"], 20_000).await,
        "failed"
    );
    let error = get(&session.snapshot().unwrap(), "error");
    assert_eq!(
        get(&error, "code").as_string().as_deref(),
        Some("network"),
        "{error:?}"
    );
    assert_eq!(get(&error, "retryable").as_bool(), Some(true));
    let message = get(&error, "message").as_string().unwrap_or_default();
    assert!(
        message.contains("malformed turn events"),
        "the cause is kept: {message}"
    );
}

/// The turns of the snapshot the app renders: `(turnId, item keys)` in order.
fn shown_turns(session: &WasmSession) -> Vec<(String, Vec<String>)> {
    let text = js_sys::JSON::stringify(&session.snapshot().unwrap())
        .unwrap()
        .as_string()
        .unwrap();
    let snap: serde_json::Value = serde_json::from_str(&text).unwrap();
    let items = snap["items"].as_array().cloned().unwrap_or_default();
    snap["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let id = t["turnId"].as_str().unwrap_or_default().to_string();
            let keys = items
                .iter()
                .filter(|i| i["turnId"].as_str() == Some(id.as_str()))
                .map(|i| i["key"].as_str().unwrap_or_default().to_string())
                .collect();
            (id, keys)
        })
        .collect()
}

/// Progressive history (issue 16): the recorded two-turn timeline served one event per page, each
/// page 150 ms late. The timeline comes first, newest first (its `turn.created` / `turn.done`
/// carry each turn's header), so while the badge still reads `loading` the snapshot shows the
/// newest turn with every item it ends with before the older one shows at all, and every turn it
/// shows is whole — never a turn between the two. The turns listing comes last. `load()` resolves
/// with the whole history, equal to the one-page load.
#[wasm_bindgen_test]
async fn a_slow_history_shows_the_newest_turn_whole_before_the_last_page() {
    let base = replay_base("approve-allow~paged-events=150");
    let session = replay_client(&base).session("s-progressive".to_string());
    let load = wasm_bindgen_futures::JsFuture::from(session.load());
    let (mut polls, done) = (Vec::new(), std::rc::Rc::new(std::cell::Cell::new(false)));
    let flag = done.clone();
    wasm_bindgen_futures::spawn_local(async move {
        load.await.expect("load");
        flag.set(true);
    });
    let mut waited = 0;
    while !done.get() {
        polls.push((connection_status(&session), shown_turns(&session)));
        assert!(waited < 20_000, "load still running after 20 s");
        sleep(25).await;
        waited += 25;
    }
    let whole = shown_turns(&session);
    assert_eq!(whole.len(), 2, "{whole:?}");
    let newest = whole.last().unwrap();
    let first = polls
        .iter()
        .find(|(_, turns)| !turns.is_empty())
        .unwrap_or_else(|| panic!("nothing showed while loading: {polls:?}"));
    assert_eq!(
        first,
        &("loading".to_string(), vec![newest.clone()]),
        "the newest turn first, whole, the older one not yet"
    );
    for (status, turns) in &polls {
        for turn in turns {
            assert!(
                whole.contains(turn),
                "{status}: a turn shown part-applied: {turn:?}"
            );
        }
    }
    let plain = recorded_history(&replay_base("approve-allow"), "s-progressive").await;
    assert_eq!(summary(&session), plain);
}
