//! How a rejected `fetch()` or body read is classified — the same way in every engine.
//!
//! Engines agree on the error *kinds* (an abort is a `DOMException` named `AbortError`; a
//! network failure is a `TypeError`) but not on the messages: a refused connection, DNS failure,
//! offline or CORS refusal rejects `fetch()` with `Failed to fetch` in Chromium, `NetworkError
//! when attempting to fetch resource.` in Firefox and `Load failed` in Safari; a body cut off
//! mid-stream errors the reader with `network error` (Chromium) or `Error in input stream`
//! (Firefox). The SDK's `ForgestreamError` therefore says in its own words which of the two
//! happened — code `network`, retryable — and keeps the engine's text after it for debugging,
//! so an app never has to match engine strings. RELIABILITY.md "Engine differences".
use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};

use super::fetch::FetchError;

/// The stable start of the message when `fetch()` itself rejected (no response at all).
pub const REQUEST_FAILED: &str = "request failed before a response";

/// The stable start of the message when a response body broke off while being read.
pub const BODY_FAILED: &str = "response body broke off";

/// `value`'s `name` property (`AbortError`, `TypeError`, …), if it has one.
fn name(value: &JsValue) -> Option<String> {
    if !value.is_object() {
        return None;
    }
    Reflect::get(value, &JsValue::from_str("name"))
        .ok()
        .and_then(|n| n.as_string())
}

/// The engine's own text for `value`: an `Error`'s message, a thrown string, or a placeholder.
pub fn describe(value: &JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| "unknown error".into())
}

/// Classifies a rejection of a piped body (`pipeTo`):
/// `Aborted` for an `AbortError`, otherwise `Network` with `response body broke off (<engine
/// text>)`.
pub fn body(value: &JsValue) -> FetchError {
    classify(value, BODY_FAILED)
}

fn classify(value: &JsValue, what: &str) -> FetchError {
    match name(value).as_deref() {
        Some("AbortError") => FetchError::Aborted,
        _ => FetchError::Network(format!("{what} ({})", describe(value))),
    }
}

/// Classifies a gloo-net failure of a whole-body request ([`super::http`]) the same way: an
/// `AbortError` is `Aborted`; otherwise `Network` with `what` (`REQUEST_FAILED` when `send()`
/// failed, `BODY_FAILED` when reading the body did) and the engine's text.
pub fn gloo(error: gloo_net::Error, what: &str) -> FetchError {
    match error {
        gloo_net::Error::JsError(js) if js.name == "AbortError" => FetchError::Aborted,
        gloo_net::Error::JsError(js) => FetchError::Network(format!("{what} ({})", js.message)),
        other => FetchError::Network(format!("{what} ({other})")),
    }
}
