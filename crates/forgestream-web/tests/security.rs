//! Security properties of the browser SDK against the emulator: nothing secret or private is
//! written to Web Storage (only cursors), and answers are accepted only for calls that are
//! pending now (stale / foreign `toolCallId` refused client-side, before any request).
#![cfg(target_arch = "wasm32")]
mod support;

use forgestream_web::client::WasmClient;
use support::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Every (key, value) of localStorage and sessionStorage.
fn storage_entries() -> Vec<(String, String)> {
    let window = web_sys::window().unwrap();
    let mut out = Vec::new();
    for storage in [
        window.local_storage().unwrap().unwrap(),
        window.session_storage().unwrap().unwrap(),
    ] {
        for i in 0..storage.length().unwrap() {
            if let Some(key) = storage.key(i).unwrap() {
                let value = storage.get_item(&key).unwrap().unwrap_or_default();
                out.push((key, value));
            }
        }
    }
    out
}

/// A turn with a secret bearer token from the header provider and a unique marker in the
/// message: afterwards neither storage area holds the token, the marker or any model text —
/// yet the checkpoint was written (the test would pass vacuously otherwise).
#[wasm_bindgen_test]
async fn storage_never_holds_tokens_or_message_text() {
    for area in ["local", "session"] {
        let namespace = format!("sec-{area}");
        let secret = format!("s3cr3t-{}-{}", area, js_sys::Math::random().to_bits());
        let marker = format!("MARK{}", js_sys::Math::random().to_bits());
        let o = options(area, "trueforge", "fetch", None);
        set(&o, "storageNamespace", namespace.as_str());
        set(
            &o,
            "headers",
            js_sys::Function::new_no_args(&format!(
                "return Promise.resolve([['authorization', 'Bearer {secret}']])"
            )),
        );
        let client = WasmClient::new(o).unwrap();
        let session = create(&client, "storyteller").await;
        await_js(session.send(message(&format!("{marker} a story, 40 words")), false, None))
            .await
            .expect("send");
        // Mid-stream a checkpoint exists; the page could be closed right now.
        wait_text(&session, 10, 10_000).await;
        let mid = storage_entries();
        wait_status(&session, &["done"], 20_000).await;
        let live = summary(&session);
        let model_text = all_text(&live);
        assert!(model_text.chars().count() > 20, "{live}");
        let sample: String = model_text.chars().take(16).collect();
        let after = storage_entries();
        let ours = |entries: &[(String, String)]| {
            entries
                .iter()
                .filter(|(k, _)| k.starts_with(&namespace))
                .count()
        };
        assert!(ours(&mid) > 0, "no checkpoint under {namespace}: {mid:?}");
        for (key, value) in mid.iter().chain(after.iter()) {
            for needle in [secret.as_str(), marker.as_str(), sample.as_str(), "Bearer"] {
                assert!(
                    !key.contains(needle) && !value.contains(needle),
                    "{area}Storage[{key}] = {value:?} contains {needle:?}"
                );
            }
        }
        clear_local_storage(&namespace);
    }
}

/// Answers are validated against the pending set of the current paused turn: an unknown
/// `toolCallId`, a call of an earlier turn (stale) and a second answer to the same call are
/// refused with `invalid-input`, and the refusal sends nothing (the turn stays paused).
#[wasm_bindgen_test]
async fn answers_only_for_calls_pending_now() {
    let client = client("memory", None);
    let session = create(&client, "support").await;
    await_js(session.send(
        message("Refund €49.50 on ORD-2031, it arrived broken"),
        false,
        None,
    ))
    .await
    .expect("send");
    wait_status(&session, &["done"], 20_000).await;
    let pending = first_pending(&session);
    assert_eq!(
        get(&pending, "kind").as_string().as_deref(),
        Some("toolApproval")
    );
    let call = get(&pending, "toolCallId").as_string().unwrap();
    let turns_before = summary(&session)["turns"].as_array().unwrap().len();

    // Foreign: a call id this session never saw.
    let refused = await_js(session.respond(decisions(&[("allow", "call_not_ours", None)]), None))
        .await
        .expect_err("foreign call id must be refused");
    assert_eq!(
        get(&refused, "code").as_string().as_deref(),
        Some("invalid-input")
    );
    // Wrong kind: a client-call answer for an approval.
    let refused = await_js(session.respond(decisions(&[("answer", &call, Some("yes"))]), None))
        .await
        .expect_err("wrong answer kind must be refused");
    assert_eq!(
        get(&refused, "code").as_string().as_deref(),
        Some("invalid-input")
    );
    assert_eq!(
        summary(&session)["turns"].as_array().unwrap().len(),
        turns_before,
        "a refused answer started a turn"
    );

    // The real answer goes through; afterwards the same call id is stale.
    await_js(session.respond(decisions(&[("deny", &call, Some("not eligible"))]), None))
        .await
        .expect("respond");
    wait_status(&session, &["done"], 20_000).await;
    assert_eq!(summary(&session)["pending"], serde_json::json!([]));
    let stale = await_js(session.respond(decisions(&[("allow", &call, None)]), None))
        .await
        .expect_err("a stale call id must be refused");
    // Answered already (issue 14): `conflict`, the code a second tab's identical answer gets.
    assert_eq!(get(&stale, "code").as_string().as_deref(), Some("conflict"));
    assert_eq!(
        summary(&session)["turns"].as_array().unwrap().len(),
        turns_before + 1,
        "exactly one continuation turn"
    );
    assert_eq!(summary(&session), persisted_summary(&session.id()).await);
}
