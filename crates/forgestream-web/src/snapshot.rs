//! The view crossing into JS. The shapes are the core's ([`forgestream_core::session::CoreChanges`]
//! and its parts, declared to TypeScript by tsify); this file only moves them across.
//!
//! The change sets cross as JSON text (the core's encoder, `wire::write`, in wasm; `JSON.parse`
//! in JS), not through serde-wasm-bindgen: a change set of a long history holds every item (W2:
//! ≈49 MB of JSON), and building its objects one property at a time through the boundary
//! measured slower than one `JSON.parse` per item, and pulled a second serializer into the wasm.
//! The text is serde_json's of the same value (the core's `tests/encode_oracle.rs`), so JS gets
//! the objects the types' tsify declarations describe. The app's small values (options,
//! decisions) come in the same way, as JSON text ([`json_from_js`]).
use forgestream_core::reduce::ItemView;
use forgestream_core::session::{CoreChanges, ErrorCode, HeldItems, SessionError};
use forgestream_core::wire::write::{to_string as json_text, Encode};
use wasm_bindgen::{JsCast, JsValue};

/// Items cross in texts of about this many bytes of JSON (64 KiB; an item is never split).
const ONE_TEXT_BYTES: usize = 64 * 1024;

/// The change set as a JS value (the same value as `JSON.parse` of its JSON).
///
/// A streaming drain (a few text appends, ~1 KB) crosses as one text through one `JSON.parse`:
/// at 60 drains a second, each extra crossing (a parse, the items array, setting it on the
/// envelope) was a visible share of the SDK's time (issue 19, W3). Larger item sets — a long
/// history's first snapshot holds every item with its whole text — cross in batches of about
/// [`ONE_TEXT_BYTES`]: one text for everything was the size of the view (and twice that while
/// its buffer grew), raising the wasm memory high-water, which never comes down; and one text
/// per item was a string decode and a `JSON.parse` per item (W2: 69k of each, a sixth of the
/// in-page load time in the profile).
pub fn to_js(mut out: CoreChanges<'_>) -> Result<JsValue, SessionError> {
    let items = std::mem::take(&mut out.items);
    let envelope = json_text(&out);
    if items.is_empty() {
        return parse(&envelope);
    }
    with_items(envelope, &items)
}

/// One turn's items as `WasmSession.turnItems` answers them: `{turnId, drain, items}`, the
/// items crossing in batches as a change set's do ([`to_js`]). The first read of a long turn is
/// its whole text at once (W1's turn: 547 KB); as one text, its buffer doubled past 1 MB while
/// it grew, and the wasm memory's high-water mark, which never comes down, with it.
pub fn turn_items_to_js(mut read: HeldItems<'_>) -> Result<JsValue, SessionError> {
    let items = std::mem::take(&mut read.items);
    let items: Vec<&ItemView> = items.iter().map(AsRef::as_ref).collect();
    // Always with `items` (`[]` for none): `with_items` adds them to the rest.
    with_items(json_text(&read), &items)
}

/// `envelope` (a JSON object without `items`) with `"items": [...items]`, as a JS value: one
/// text when the items are short, else batches of about [`ONE_TEXT_BYTES`] appended to the first.
fn with_items<T: Encode>(mut envelope: String, items: &[T]) -> Result<JsValue, SessionError> {
    let mut batch = String::from("[");
    // After the first full batch: the envelope as a JS object, and its items array so far.
    let mut crossed: Option<(JsValue, js_sys::Array)> = None;
    for item in items {
        if batch.len() > 1 {
            batch.push(',');
        }
        item.encode(&mut batch);
        if batch.len() >= ONE_TEXT_BYTES {
            batch.push(']');
            let array: js_sys::Array = parse(&batch)?.unchecked_into();
            match &crossed {
                None => crossed = Some((parse(&envelope)?, array)),
                Some((_, all)) => push_all(all, &array)?,
            }
            batch.clear();
            batch.push('[');
        }
    }
    batch.push(']');
    match crossed {
        // Everything in one text: `{…,"items":[…]}`.
        None => {
            envelope.pop();
            envelope.push_str(",\"items\":");
            envelope.push_str(&batch);
            envelope.push('}');
            parse(&envelope)
        }
        Some((envelope, all)) => {
            if batch.len() > 2 {
                push_all(&all, &parse(&batch)?.unchecked_into())?;
            }
            js_sys::Reflect::set(&envelope, &JsValue::from_str("items"), &all)
                .map_err(|_| internal("items"))?;
            Ok(envelope)
        }
    }
}

/// Appends `batch`'s elements to `all` with one `Array.prototype.push` call (a batch holds at
/// most a few thousand items: well inside the engines' argument limits).
fn push_all(all: &js_sys::Array, batch: &js_sys::Array) -> Result<(), SessionError> {
    let push: js_sys::Function = js_sys::Reflect::get(all, &JsValue::from_str("push"))
        .map_err(|_| internal("items"))?
        .unchecked_into();
    push.apply(all, batch).map_err(|_| internal("items"))?;
    Ok(())
}

fn internal(what: &str) -> SessionError {
    SessionError::new(
        ErrorCode::Internal,
        format!("view serialisation failed: {what}"),
    )
}

fn parse(text: &str) -> Result<JsValue, SessionError> {
    js_sys::JSON::parse(text).map_err(|_| {
        SessionError::new(
            ErrorCode::Internal,
            "view serialisation produced invalid JSON",
        )
    })
}

/// Writes `value` as JSON text (the core's encoder) and hands it to `JSON.parse` (one boundary
/// crossing).
pub fn json_to_js<T: Encode + ?Sized>(value: &T) -> Result<JsValue, SessionError> {
    parse(&json_text(value))
}

/// Reads an app's value (client options, decisions) as `T` through its JSON text:
/// `JSON.stringify` in JS, then the core's hand-written decoder (`wire::json`) — the one the
/// wasm already carries for every response body, so no second one.
/// Functions and `undefined` members are left out, as `JSON.stringify` does (the client's
/// `headers` provider is read separately).
///
/// # Errors
///
/// The message (for an `invalid-input` error): `JSON.stringify` threw (a cycle, a `BigInt`) or
/// gave no text (`undefined`, a function), or the text is not a `T` (the decoder's message and
/// the JSON around the place it names, e.g.
/// ``invalid type: expected "fetch" or "eventsource" near `"transport":42` ``).
pub fn json_from_js<T: forgestream_core::wire::json::Decode>(value: &JsValue) -> Result<T, String> {
    let text = js_sys::JSON::stringify(value)
        .map_err(|e| match e.dyn_into::<js_sys::Error>() {
            Ok(thrown) => format!(
                "not representable as JSON ({})",
                String::from(thrown.message())
            ),
            Err(_) => String::from("not representable as JSON"),
        })?
        .as_string()
        .ok_or_else(|| String::from("not representable as JSON"))?;
    forgestream_core::wire::json::from_str(&text).map_err(|e| {
        // The error's byte offset is in a text the app never wrote: show the text around it
        // instead (`… "transport":42 …`), which names the field.
        format!("{} near `{}`", e.reason(), excerpt(&text, e.offset()))
    })
}

/// Up to 32 bytes of `text` before byte `at` and 16 from it, cut on character boundaries.
fn excerpt(text: &str, at: usize) -> &str {
    let mut start = at.saturating_sub(32).min(text.len());
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = at.saturating_add(16).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    &text[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use forgestream_core::session::ItemUpdate;
    use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

    wasm_bindgen_test_configure!(run_in_browser);

    /// A change set of `n` removals (each ~70 bytes of JSON), keys `k0…`.
    fn removals(keys: &[String]) -> CoreChanges<'_> {
        CoreChanges {
            session_id: "s",
            drain: 1,
            order: None,
            turns: Vec::new(),
            cursors: Vec::new(),
            items: keys
                .iter()
                .map(|key| ItemUpdate {
                    turn_id: "t",
                    key,
                    removed: true,
                    value: None,
                    append: None,
                })
                .collect(),
            pending: None,
            threads: None,
            usage: None,
            connection: None,
            error: None,
            warnings: Vec::new(),
        }
    }

    /// The items JS received, by key (none when the envelope has no `items`).
    fn keys_in_js(changes: &JsValue) -> Vec<String> {
        let items = js_sys::Reflect::get(changes, &JsValue::from_str("items")).unwrap();
        if items.is_undefined() {
            return Vec::new();
        }
        let items: js_sys::Array = items.unchecked_into();
        items
            .iter()
            .map(|item| {
                js_sys::Reflect::get(&item, &JsValue::from_str("key"))
                    .unwrap()
                    .as_string()
                    .unwrap()
            })
            .collect()
    }

    /// Small sets cross as one text; large ones in batches (the first becomes the items array,
    /// the later ones are appended): either way JS gets every item once, in order, and the
    /// envelope's other members.
    #[wasm_bindgen_test]
    fn every_item_crosses_once_and_in_order_whatever_the_batching() {
        // 10 items: one text. 1,000 (~70 KB): one full batch and a remainder. 5,000 (~350 KB):
        // several batches. 936 items land a batch boundary near the end.
        for n in [0, 1, 10, 936, 1_000, 5_000] {
            let keys: Vec<String> = (0..n).map(|i| format!("k{i}")).collect();
            let js = to_js(removals(&keys)).unwrap();
            assert_eq!(keys_in_js(&js), keys, "{n} items");
            let session = js_sys::Reflect::get(&js, &JsValue::from_str("sessionId")).unwrap();
            assert_eq!(session.as_string().as_deref(), Some("s"), "{n} items");
        }
    }
}
