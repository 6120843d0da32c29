//! The browser environment failing under the SDK: going offline and back, and Web Storage that
//! throws on access (sandboxed frames, blocked cookies). Both change page-global state, so they
//! run one after the other in a single test, alone in this file (each test file gets its own
//! page; tests inside a file run concurrently).
#![cfg(target_arch = "wasm32")]
mod support;

use support::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn dispatch(name: &str) {
    let window = web_sys::window().unwrap();
    let event = web_sys::Event::new(name).unwrap();
    window.dispatch_event(&event).unwrap();
}

fn run_js(code: &str) {
    js_sys::Function::new_no_args(code)
        .call0(&JsValue::UNDEFINED)
        .unwrap();
}

#[wasm_bindgen_test]
async fn offline_pauses_then_online_resumes_and_disabled_storage_degrades() {
    // Offline: the connection is closed and nothing is retried until the browser is online.
    let c = client("memory", None);
    let session = create(&c, "storyteller").await;
    await_js(session.send(message("Tell a story, 300 words, 10 ms"), false, None))
        .await
        .expect("send");
    wait_text(&session, 20, 10_000).await;
    dispatch("offline");
    wait_status(&session, &["offline"], 5_000).await;
    sleep(400).await;
    assert_eq!(
        connection_status(&session),
        "offline",
        "no retry while offline"
    );
    dispatch("online");
    wait_status(&session, &["done"], 30_000).await;
    assert_eq!(summary(&session), persisted_summary(&session.id()).await);

    // Storage disabled: every localStorage access throws; checkpoints fall back to memory and
    // the turn streams as usual.
    run_js(
        "Object.defineProperty(window, 'localStorage', { configurable: true, \
         get() { throw new DOMException('storage is disabled', 'SecurityError'); } });",
    );
    let c = client_in("local", "t-disabled", None);
    let session = create(&c, "storyteller").await;
    let sent = await_js(session.send(message("Tell a story, 40 words"), false, None)).await;
    wait_status(&session, &["done"], 20_000).await;
    let degraded = c.storage_is_memory();
    run_js("delete window.localStorage;");
    sent.expect("send");
    assert!(degraded, "a throwing localStorage must degrade to memory");
    assert_eq!(summary(&session), persisted_summary(&session.id()).await);
}
