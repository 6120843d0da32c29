//! The view crossing into JS. The shapes are the core's ([`forgestream_core::session::CoreChanges`]
//! and its parts, declared to TypeScript by tsify); this file only moves them across.
//!
//! The change sets cross as JSON text (`serde_json` in wasm, `JSON.parse` in JS), not through
//! serde-wasm-bindgen: a change set of a long history holds every item (W2: ≈49 MB of JSON), and
//! building its objects one property at a time through the boundary measured slower than one
//! `JSON.parse` per item, and pulled a second serializer into the wasm. The small values (errors,
//! options, decisions) cross with serde-wasm-bindgen.
use forgestream_core::session::{CoreChanges, ErrorCode, SessionError};
use serde::Serialize;
use wasm_bindgen::JsValue;

/// The envelope in one `JSON.parse`, then each item in its own. Items hold the whole text of
/// their messages, so one text for everything was the size of the view (and twice that while
/// its buffer grew), raising the wasm memory high-water, which never comes down; per item, the
/// largest buffer is one item. Same JS value as parsing one text.
pub fn to_js(mut out: CoreChanges<'_>) -> Result<JsValue, SessionError> {
    let items = std::mem::take(&mut out.items);
    let envelope = json_to_js(&out)?;
    if !items.is_empty() {
        let array = js_sys::Array::new_with_length(u32::try_from(items.len()).unwrap_or(u32::MAX));
        for (index, item) in (0u32..).zip(&items) {
            array.set(index, json_to_js(item)?);
        }
        js_sys::Reflect::set(&envelope, &JsValue::from_str("items"), &array).map_err(|_| {
            SessionError::new(ErrorCode::Internal, "view serialisation failed: items")
        })?;
    }
    Ok(envelope)
}

/// Serialises `value` with serde_json and hands it to `JSON.parse` (one boundary crossing).
pub fn json_to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, SessionError> {
    let text = serde_json::to_string(value).map_err(|e| {
        SessionError::new(
            ErrorCode::Internal,
            format!("view serialisation failed: {e}"),
        )
    })?;
    js_sys::JSON::parse(&text).map_err(|_| {
        SessionError::new(
            ErrorCode::Internal,
            "view serialisation produced invalid JSON",
        )
    })
}
