//! Errors crossing into JS: a real `Error` whose `name` is `"ForgestreamError"`, with the stable
//! `code` of the core's [`ErrorCode`] (DESIGN.md "Errors"), `retryable` and, for HTTP failures,
//! `status`; the TS layer re-wraps it as its `ForgestreamError` class.
pub use forgestream_core::session::{ErrorCode, SessionError};
use wasm_bindgen::JsValue;

/// The JS `Error` of `e`.
pub fn to_js(e: &SessionError) -> JsValue {
    let error = js_sys::Error::new(&e.message);
    error.set_name("ForgestreamError");
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&error, &JsValue::from_str(k), &v);
    };
    set("code", JsValue::from_str(e.code.as_str()));
    set("retryable", JsValue::from_bool(e.retryable));
    if let Some(status) = e.status {
        set("status", JsValue::from_f64(f64::from(status)));
    }
    error.into()
}

/// An `invalid-input` error as a JS value.
pub fn invalid_input(message: impl Into<String>) -> JsValue {
    to_js(&SessionError::new(ErrorCode::InvalidInput, message))
}
