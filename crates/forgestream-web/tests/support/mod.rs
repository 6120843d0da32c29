//! Helpers for the browser tests: a client against the emulator `scripts/test` started
//! (`FORGESTREAM_URL`, baked in at compile time), polling for states, and view comparison.
#![allow(dead_code)]
pub mod replay;
use forgestream_web::client::{WasmClient, WasmSession};
use js_sys::{Object, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// The emulator's base URL.
pub fn base_url() -> &'static str {
    option_env!("FORGESTREAM_URL").unwrap_or("http://127.0.0.1:8790")
}

pub fn set(o: &JsValue, k: &str, v: impl Into<JsValue>) {
    Reflect::set(o, &JsValue::from_str(k), &v.into()).unwrap();
}

pub fn get(o: &JsValue, path: &str) -> JsValue {
    path.split('.').fold(o.clone(), |v, k| {
        Reflect::get(&v, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
    })
}

/// Options `{ baseUrl, storage, flavor, transport, reconnect, turnItems: "all" }`, plus a header
/// provider that adds `x-forgestream-fault: fault` when given. These suites read the view from
/// the change sets (`snapshot()` / `takeChanges()`), so every turn's items cross with them; the
/// default, items read on demand, has its own tests (`browser.rs`, `turn_items_*`).
pub fn options(storage: &str, flavor: &str, transport: &str, fault: Option<&str>) -> JsValue {
    let o: JsValue = Object::new().into();
    set(&o, "baseUrl", base_url());
    set(&o, "turnItems", "all");
    set(&o, "storage", storage);
    set(&o, "flavor", flavor);
    set(&o, "transport", transport);
    let r: JsValue = Object::new().into();
    set(&r, "baseDelayMs", 20.0);
    set(&r, "maxDelayMs", 200.0);
    set(&r, "idleTimeoutMs", 5000.0);
    set(&o, "reconnect", r);
    if let Some(fault) = fault {
        let f = js_sys::Function::new_no_args(&format!(
            "return Promise.resolve([['x-forgestream-fault', {}]])",
            js_sys::JSON::stringify(&JsValue::from_str(fault))
                .unwrap()
                .as_string()
                .unwrap()
        ));
        set(&o, "headers", f);
    }
    o
}

/// A header provider that counts its calls in `window.__headerCalls[key]` and adds `fault`.
pub fn counting_provider(key: &str, fault: Option<&str>) -> js_sys::Function {
    let fault = fault.map(|f| {
        js_sys::JSON::stringify(&JsValue::from_str(f))
            .unwrap()
            .as_string()
            .unwrap()
    });
    js_sys::Function::new_no_args(&format!(
        "const c = (globalThis.__headerCalls ??= {{}}); c[{key:?}] = (c[{key:?}] ?? 0) + 1; \
         return Promise.resolve({});",
        match fault {
            Some(f) => format!("[['x-forgestream-fault', {f}]]"),
            None => "[]".into(),
        }
    ))
}

/// How often the provider made by [`counting_provider`] with `key` was called.
pub fn header_calls(key: &str) -> u32 {
    let calls = get(&js_sys::global(), "__headerCalls");
    get(&calls, key).as_f64().unwrap_or(0.0) as u32
}

pub fn client(storage: &str, fault: Option<&str>) -> WasmClient {
    WasmClient::new(options(storage, "trueforge", "fetch", fault)).unwrap()
}

/// A client whose checkpoints live under their own key namespace (tests run concurrently in one
/// page, so each test that reads storage back gets its own).
pub fn client_in(storage: &str, namespace: &str, fault: Option<&str>) -> WasmClient {
    let o = options(storage, "trueforge", "fetch", fault);
    set(&o, "storageNamespace", namespace);
    WasmClient::new(o).unwrap()
}

pub async fn await_js(p: js_sys::Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(p).await
}

pub async fn sleep(ms: u32) {
    forgestream_web::js::sleep(u64::from(ms)).await;
}

pub async fn create(client: &WasmClient, agent: &str) -> WasmSession {
    let body = format!("{{\"agent\":{{\"name\":\"{agent}\"}}}}");
    client
        .open_new_session(&body)
        .await
        .expect("create session")
}

/// `[{"type":"user.message","content": text}]`.
pub fn message(text: &str) -> String {
    serde_json::json!([{ "type": "user.message", "content": text }]).to_string()
}

pub fn connection_status(session: &WasmSession) -> String {
    get(&session.snapshot().unwrap(), "connection.status")
        .as_string()
        .unwrap_or_default()
}

/// Polls until the connection badge is one of `statuses` (or panics after `timeout_ms`).
pub async fn wait_status(session: &WasmSession, statuses: &[&str], timeout_ms: u32) -> String {
    let mut waited = 0;
    loop {
        let s = connection_status(session);
        if statuses.contains(&s.as_str()) {
            return s;
        }
        assert!(
            waited < timeout_ms,
            "timed out waiting for {statuses:?}; status is {s:?}"
        );
        sleep(20).await;
        waited += 20;
    }
}

/// The reducer's canonical summary without transport diagnostics.
pub fn summary(session: &WasmSession) -> serde_json::Value {
    let js = session.export_digest().unwrap();
    let text = js_sys::JSON::stringify(&js).unwrap().as_string().unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    if let Some(o) = v.as_object_mut() {
        o.remove("diagnostics");
    }
    v
}

/// The summary of the same session rebuilt from the server's persisted history only.
pub async fn persisted_summary(session_id: &str) -> serde_json::Value {
    persisted_summary_as(session_id, "trueforge").await
}

/// [`persisted_summary`] through the given flavor's routes.
pub async fn persisted_summary_as(session_id: &str, flavor: &str) -> serde_json::Value {
    let fresh = WasmClient::new(options("memory", flavor, "fetch", None)).unwrap();
    let s = fresh.session(session_id.to_string());
    await_js(s.load()).await.expect("load history");
    summary(&s)
}

/// All text of all messages in the session, concatenated in order.
pub fn all_text(v: &serde_json::Value) -> String {
    let mut out = String::new();
    for turn in v["turns"].as_array().into_iter().flatten() {
        for item in turn["items"].as_array().into_iter().flatten() {
            if let Some(t) = item["text"].as_str() {
                out.push_str(t);
            }
        }
    }
    out
}

/// The status of turn `index` in the summary.
pub fn turn_status(v: &serde_json::Value, index: usize) -> String {
    v["turns"][index]["status"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Waits until the session's view holds at least `min_chars` of message text.
pub async fn wait_text(session: &WasmSession, min_chars: usize, timeout_ms: u32) {
    let mut waited = 0;
    while all_text(&summary(session)).chars().count() < min_chars {
        assert!(
            waited < timeout_ms,
            "timed out waiting for {min_chars} chars of text"
        );
        sleep(20).await;
        waited += 20;
    }
}

/// Polls the persisted history until its last turn has a terminal status.
pub async fn wait_persisted_settled(session_id: &str, timeout_ms: u32) -> serde_json::Value {
    let mut waited = 0;
    loop {
        let v = persisted_summary(session_id).await;
        let n = v["turns"].as_array().map(|t| t.len()).unwrap_or(0);
        if n > 0 && turn_status(&v, n - 1) != "running" {
            return v;
        }
        assert!(waited < timeout_ms, "the server never settled the turn");
        sleep(100).await;
        waited += 100;
    }
}

/// Removes every checkpoint under `namespace` from localStorage.
pub fn clear_local_storage(namespace: &str) {
    let storage = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    let n = storage.length().unwrap();
    let keys: Vec<String> = (0..n)
        .filter_map(|i| storage.key(i).ok().flatten())
        .collect();
    let prefix = format!("{namespace}:");
    for k in keys.iter().filter(|k| k.starts_with(&prefix)) {
        storage.remove_item(k).unwrap();
    }
}

pub fn decisions(list: &[(&str, &str, Option<&str>)]) -> JsValue {
    let array = js_sys::Array::new();
    for (kind, call, text) in list {
        let d: JsValue = Object::new().into();
        set(&d, "kind", *kind);
        if !call.is_empty() {
            set(&d, "toolCallId", *call);
        }
        if let Some(t) = text {
            set(&d, if *kind == "deny" { "reason" } else { "content" }, *t);
        }
        array.push(&d);
    }
    array.into()
}

/// The first pending action of the snapshot.
pub fn first_pending(session: &WasmSession) -> JsValue {
    js_sys::Reflect::get(&get(&session.snapshot().unwrap(), "pending"), &0.into()).unwrap()
}
