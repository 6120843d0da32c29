//! Calls the app's header provider (normalised by the TS layer to
//! `() => Promise<[name, value][]>`) before each request attempt.
use js_sys::{Array, Function, Promise};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::error::{ErrorCode, SessionError as SdkError};

/// Resolves the provider's headers. No provider → no headers. A provider that throws, rejects or
/// returns something else than pairs of strings is an `auth` error (the request is not sent).
pub async fn resolve(provider: Option<&Function>) -> Result<Vec<(String, String)>, SdkError> {
    let Some(provider) = provider else {
        return Ok(Vec::new());
    };
    let fail = |what: &str| SdkError::new(ErrorCode::Auth, format!("the headers provider {what}"));
    let value = provider
        .call0(&JsValue::UNDEFINED)
        .map_err(|_| fail("threw"))?;
    let value = match value.dyn_into::<Promise>() {
        Ok(promise) => JsFuture::from(promise)
            .await
            .map_err(|_| fail("rejected"))?,
        Err(value) => value,
    };
    let pairs: Array = value
        .dyn_into()
        .map_err(|_| fail("did not return header pairs"))?;
    let mut out = Vec::with_capacity(pairs.length() as usize);
    for pair in pairs.iter() {
        let pair: Array = pair
            .dyn_into()
            .map_err(|_| fail("returned a malformed header"))?;
        match (pair.get(0).as_string(), pair.get(1).as_string()) {
            (Some(name), Some(value)) => out.push((name, value)),
            _ => return Err(fail("returned a malformed header")),
        }
    }
    Ok(out)
}
