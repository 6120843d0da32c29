//! [`JsonText`]: a JSON value the view keeps as its text (tool-call arguments, a turn's input).
//!
//! Why text: the view hands these to JS, which parses them anyway, and the Rust side rarely
//! reads inside them. As `serde_json::Value`s they were the largest part of a long history's
//! view — W2's tool-call arguments 16.0 MB as values for 1.3 MB of text, the turn inputs
//! 11.4 MB (`cargo run --release -p forgestream-core --example bench_core`, "view breakdown")
//! — and building them was a share of the time to open it. Kept as text they are written
//! verbatim into the JSON the view crosses as, so JS receives the same value.
//!
//! Shared (`Arc<str>`): a tool call's checked arguments are the same text as its
//! `arguments_text`, and [`ArgumentsText`](crate::reduce::ArgumentsText) holds that one
//! allocation too once it parses (issue 16: W2 kept 1.3 MB of arguments twice). `triomphe`'s
//! `Arc`, as [`Id`](crate::id::Id)'s: one count above the text, not two (nothing holds a text
//! weakly).

use alloc::string::String;
use core::fmt;
use serde_json::Value;
use triomphe::Arc;

use super::json::{self, JsonError};
use super::write::Encode;

/// The text of one JSON value, known to be valid: checked by the SDK's decoder
/// ([`JsonText::parse`]) or written by its encoder (`JsonText::from_encoded`).
///
/// Encoded ([`Encode`]) and serialised (serde, through `serde_json::value::RawValue`) as the
/// value itself, not as a string. Its TypeScript type is the value's (`unknown`).
#[derive(Clone, PartialEq, Eq)]
pub struct JsonText(Arc<str>);

impl JsonText {
    /// `text` if it is one JSON value as the SDK's decoder reads it (RFC 8259, with the
    /// decoder's limits: nesting depth 127, numbers in `f64`/`u64`/`i64` range).
    ///
    /// # Errors
    ///
    /// The decoder's [`JsonError`] (its reason and byte offset) when `text` is not.
    pub fn parse(text: &str) -> Result<JsonText, JsonError> {
        // Checked by the rules of a value read (not a plain scan), so a text accepted here
        // always reads back with `to_value`; nothing is built (a value was ~8% of W2's decoding).
        json::check(text)?;
        Ok(JsonText(Arc::from(text)))
    }

    /// [`JsonText::parse`] of a shared text, sharing it rather than copying it.
    ///
    /// # Errors
    ///
    /// As [`JsonText::parse`].
    pub fn parse_shared(text: &Arc<str>) -> Result<JsonText, JsonError> {
        json::check(text)?;
        Ok(JsonText(Arc::clone(text)))
    }

    /// Text the SDK's encoder wrote (valid by construction).
    pub(crate) fn from_encoded(text: String) -> JsonText {
        JsonText(Arc::from(text))
    }

    /// The shared text (what [`JsonText::parse_shared`] was given).
    pub fn shared(&self) -> &Arc<str> {
        &self.0
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value, parsed from the text (`Value::Null` cannot occur for a valid text but stands
    /// in rather than panicking).
    pub fn to_value(&self) -> Value {
        json::from_str::<Value>(&self.0).unwrap_or(Value::Null)
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Encode for JsonText {
    fn encode(&self, out: &mut String) {
        out.push_str(&self.0);
    }
}

impl serde::Serialize for JsonText {
    /// Through `RawValue`, so serde_json writes the text in place (the native tests' oracle;
    /// nothing in the wasm serialises with serde).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match serde_json::value::RawValue::from_string(String::from(&*self.0)) {
            Ok(raw) => raw.serialize(serializer),
            Err(e) => Err(serde::ser::Error::custom(e)),
        }
    }
}
