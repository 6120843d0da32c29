//! Helpers for the wire's tagged unions (`type` / `status` discriminators).
//!
//! The wire's unions must keep unknown tags instead of failing (PROTOCOL §5: "Any other `type`
//! must be kept and surfaced, never fatal"), which serde's derived tagged enums cannot do while
//! also keeping the raw payload. So each union is read as a `serde_json::Value`, dispatched on
//! its tag by hand, and written back by serialising the variant's struct and re-inserting the tag.

use alloc::string::{String, ToString};
use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::Value;

/// The string value of `key` in a JSON object, if any.
pub(crate) fn tag_of(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(ToString::to_string)
}

/// Removes the discriminator so it does not land in a variant's `extra` map, then decodes.
pub(crate) fn decode_without<T: DeserializeOwned>(
    mut value: Value,
    key: &str,
) -> Result<T, serde_json::Error> {
    if let Value::Object(map) = &mut value {
        map.remove(key);
    }
    serde_json::from_value(value)
}

/// Serialises `inner` (a struct) as a JSON object with `key: tag` added.
pub(crate) fn serialize_tagged<S: Serializer, T: Serialize>(
    serializer: S,
    key: &str,
    tag: &str,
    inner: &T,
) -> Result<S::Ok, S::Error> {
    let mut value = serde_json::to_value(inner).map_err(serde::ser::Error::custom)?;
    if let Value::Object(map) = &mut value {
        map.insert(key.to_string(), Value::String(tag.to_string()));
    }
    value.serialize(serializer)
}

/// `skip_serializing_if` helper for `extra` maps.
pub(crate) fn is_empty_map(map: &serde_json::Map<String, Value>) -> bool {
    map.is_empty()
}
