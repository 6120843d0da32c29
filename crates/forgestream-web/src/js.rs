//! Bindings to the few global functions the SDK needs, bound on the global object so they work in
//! windows and workers alike (`web_sys::Window` would tie us to the main thread).
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `setTimeout(callback, ms)` → timer handle.
    #[wasm_bindgen(js_name = setTimeout)]
    pub fn set_timeout(callback: &js_sys::Function, ms: f64) -> JsValue;

    /// `clearTimeout(handle)`.
    #[wasm_bindgen(js_name = clearTimeout)]
    pub fn clear_timeout(handle: &JsValue);
}

/// Wall-clock milliseconds since the Unix epoch (`Date.now()`), the time base passed to the core.
pub fn now_ms() -> u64 {
    let now = js_sys::Date::now();
    if now.is_finite() && now > 0.0 {
        now as u64
    } else {
        0
    }
}

/// Resolves after `ms` milliseconds (a `setTimeout` wrapped in a promise).
pub async fn sleep(ms: u64) {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        set_timeout(&resolve, ms as f64);
    });
    // A timer promise never rejects; an error here would only mean the global is gone.
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
