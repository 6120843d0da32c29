//! Decoding the wire's tagged unions (`type` / `status` discriminators) straight from the JSON
//! text, and the small `Value` helpers of the lenient unions.
//!
//! The wire's unions must keep unknown tags instead of failing (PROTOCOL §5: "Any other `type`
//! must be kept and surfaced, never fatal"), which serde's derived tagged enums cannot do while
//! also keeping the raw payload (and they buffer every object in serde's private `Content` tree).
//! So each union is read by [`UnionVisitor`]:
//!
//! - **Tag first** (every TrueForge body: the server writes `type` / `status` first): the tag is
//!   read, then the known variant's struct is decoded from the *rest of the same map* — one pass
//!   over the text, no intermediate tree. An unknown tag collects the rest into a `Value`.
//! - **Tag elsewhere** (valid JSON; TrueForge writes some events, e.g. `tool.response`, with
//!   `tool_call_id` and `content` first): the entries are captured as raw JSON text (a validating
//!   skip, no tree), re-assembled with the tag first, and that text is decoded with the one-pass
//!   path. Re-assembled text is checked against [`MAX_DEPTH`] first: a fresh decoder starts a
//!   fresh recursion budget, so without the check a chain of such objects nested in each other
//!   could recurse past serde_json's limit.
//!
//! Unknown fields of known variants are ignored (not kept): nothing downstream reads them.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use core::marker::PhantomData;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// A tagged union of the wire, decoded by [`deserialize_union`].
pub(crate) trait Union: Sized {
    /// The discriminator key (`type` or `status`).
    const TAG: &'static str;
    /// What the visitor expects (for error messages).
    const EXPECTING: &'static str;
    /// The tags this SDK decodes.
    const TAGS: &'static [&'static str];
    /// Decodes the known variant `tag` from the object's other entries.
    fn known<'de, A: MapAccess<'de>>(
        tag: &str,
        rest: MapAccessDeserializer<A>,
    ) -> Result<Self, A::Error>;
    /// The variant for an unknown (or missing / non-string, then `""`) tag, with the whole object.
    fn unknown(tag: String, raw: Value) -> Self;
}

/// Decodes a [`Union`] from any serde_json deserializer (text, bytes or a `Value`).
pub(crate) fn deserialize_union<'de, T: Union, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<T, D::Error> {
    deserializer.deserialize_map(UnionVisitor::<T>(PhantomData))
}

/// Decodes a [`Union`] from an already-built object (the tag may be anywhere).
pub(crate) fn union_from_value<T: Union>(raw: Value) -> Result<T, serde_json::Error> {
    deserialize_union(raw)
}

struct UnionVisitor<T>(PhantomData<T>);

impl<'de, T: Union> Visitor<'de> for UnionVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let first = match map.next_key_seed(KeyProbe(T::TAG))? {
            None => return Ok(T::unknown(String::new(), Value::Object(Map::new()))),
            Some(first) => first,
        };
        let Some(first) = first else {
            // The tag is the first key: one pass (a known tag is matched without allocating).
            let tag = match map.next_value_seed(TagSeed(T::TAGS))? {
                TagValue::Known(name) => return T::known(name, MapAccessDeserializer::new(map)),
                TagValue::Other(tag) => tag,
            };
            let mut object = Map::new();
            object.insert(String::from(T::TAG), tag);
            while let Some((key, value)) = map.next_entry::<String, Value>()? {
                object.insert(key, value);
            }
            return Ok(unknown_of(object));
        };
        let mut entries: Vec<(String, Box<RawValue>)> = Vec::new();
        entries.push((first, map.next_value()?));
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value()?;
            entries.push((key, value));
        }
        from_entries(&entries).map_err(A::Error::custom)
    }
}

/// A discriminator's value: one of the known tags, or any other JSON value (kept).
enum TagValue {
    Known(&'static str),
    Other(Value),
}

/// Reads a discriminator's value against the known tags.
struct TagSeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for TagSeed {
    type Value = TagValue;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<TagValue, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TagSeed {
    type Value = TagValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_str<E: serde::de::Error>(self, tag: &str) -> Result<TagValue, E> {
        Ok(match self.0.iter().find(|known| **known == tag) {
            Some(known) => TagValue::Known(known),
            None => TagValue::Other(Value::String(tag.to_string())),
        })
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<TagValue, E> {
        Ok(TagValue::Other(Value::Bool(v)))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<TagValue, E> {
        Ok(TagValue::Other(Value::from(v)))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<TagValue, E> {
        Ok(TagValue::Other(Value::from(v)))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<TagValue, E> {
        Ok(TagValue::Other(Value::from(v)))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<TagValue, E> {
        Ok(TagValue::Other(Value::Null))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<TagValue, E> {
        Ok(TagValue::Other(Value::Null))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<TagValue, D::Error> {
        Value::deserialize(deserializer).map(TagValue::Other)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TagValue, A::Error> {
        Value::deserialize(SeqAccessDeserializer::new(seq)).map(TagValue::Other)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TagValue, A::Error> {
        Value::deserialize(MapAccessDeserializer::new(map)).map(TagValue::Other)
    }
}

/// Reads a string through `parse` without first copying it into a `String` (enumerations that
/// keep unknown values, e.g. `finish_reason`).
pub(crate) fn parse_str<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    parse: fn(&str) -> T,
) -> Result<T, D::Error> {
    struct ParseVisitor<T>(fn(&str) -> T);

    impl<T> Visitor<'_> for ParseVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
            Ok((self.0)(text))
        }
    }

    deserializer.deserialize_str(ParseVisitor(parse))
}

/// Deepest nesting of re-assembled text (serde_json's own recursion limit).
pub(crate) const MAX_DEPTH: usize = 128;

/// The slow path: raw entries whose tag may be anywhere (the last one wins, as in a `Value`).
fn from_entries<T: Union>(entries: &[(String, Box<RawValue>)]) -> Result<T, serde_json::Error> {
    let tag = entries.iter().rev().find(|(key, _)| key == T::TAG);
    let mut text = String::from("{");
    if let Some((key, value)) = tag {
        push_entry(&mut text, key, value.get());
    }
    for (key, value) in entries.iter().filter(|(key, _)| key != T::TAG) {
        push_entry(&mut text, key, value.get());
    }
    text.push('}');
    if depth(&text) > MAX_DEPTH {
        return Err(serde_json::Error::custom("JSON nested too deeply"));
    }
    let known = tag.is_some_and(|(_, value)| {
        let known = |tag: &str| T::TAGS.contains(&tag);
        match serde_json::from_str::<&str>(value.get()) {
            Ok(tag) => known(tag),
            // Escapes cannot be borrowed: unescape into a String.
            Err(_) => serde_json::from_str::<String>(value.get()).is_ok_and(|tag| known(&tag)),
        }
    });
    if !known {
        // Unknown, missing or non-string tag: the union's `Unknown` keeps the whole object.
        let Value::Object(object) = serde_json::from_str(&text)? else {
            return Err(serde_json::Error::custom(T::EXPECTING));
        };
        return Ok(unknown_of(object));
    }
    let mut de = serde_json::Deserializer::from_str(&text);
    let union = deserialize_union::<T, _>(&mut de)?;
    de.end()?;
    Ok(union)
}

fn push_entry(text: &mut String, key: &str, raw: &str) {
    if text.len() > 1 {
        text.push(',');
    }
    text.push_str(&Value::String(String::from(key)).to_string());
    text.push(':');
    text.push_str(raw);
}

/// Maximum `{`/`[` nesting of JSON text (brackets inside strings do not count).
fn depth(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                max = max.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Whether a map key is the discriminator: `None` = it is, `Some(key)` = another key.
struct KeyProbe(&'static str);

impl<'de> DeserializeSeed<'de> for KeyProbe {
    type Value = Option<String>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeyProbe {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok((key != self.0).then(|| key.to_string()))
    }
}

fn unknown_of<T: Union>(object: Map<String, Value>) -> T {
    let tag = object
        .get(T::TAG)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    T::unknown(tag, Value::Object(object))
}

/// For the lenient unions (a known tag with a bad shape is kept raw): the string value of `key`,
/// `""` when missing, `None` (= bad shape) when present but not a string.
pub(crate) fn str_or_empty<'a>(raw: &'a Value, key: &str) -> Option<&'a str> {
    match raw.get(key) {
        None => Some(""),
        Some(Value::String(text)) => Some(text),
        Some(_) => None,
    }
}

/// The string value of a required `key`; `None` when missing or not a string.
pub(crate) fn required_str<'a>(raw: &'a Value, key: &str) -> Option<&'a str> {
    raw.get(key).and_then(Value::as_str)
}

/// The `type` of a lenient union's object (`""` when missing or not a string).
pub(crate) fn type_of(raw: &Value) -> String {
    raw.get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::{Content, Event, InputItem, ToolInfo, TurnState, UserContent};
    use alloc::format;
    use alloc::string::String;
    use serde_json::json;

    const DONE: &str = r#"{"type":"turn.done","id":"e9","thread_id":null,"state":{"status":"done","output":{"type":"model.message","id":"m1","thread_id":"main","content":"hi","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"},"tool_info":{"type":"mcp","server_id":"s","server_name":"S","name":"f"}}]},"required_actions":[{"type":"tool.approval_required","id":"r1","thread_id":"main","tool_calls":[{"id":"c1","source_event_id":"m1"}]}],"completed_at":"t"}}"#;

    /// The same object with every key order decodes to the same event: tag first (one pass) or
    /// anywhere (whole object, then re-read).
    #[test]
    fn key_order_does_not_matter() {
        let first: Event = serde_json::from_str(DONE).unwrap();
        assert!(matches!(&first, Event::TurnDone(d) if matches!(d.state, TurnState::Done(_))));
        // serde_json's Value sorts keys, so every object (event, state, output, required
        // event, tool_info) has its tag after other keys.
        let sorted =
            serde_json::to_string(&serde_json::from_str::<serde_json::Value>(DONE).unwrap())
                .unwrap();
        assert!(!sorted.starts_with(r#"{"type""#));
        assert_eq!(serde_json::from_str::<Event>(&sorted).unwrap(), first);
        let value: serde_json::Value = serde_json::from_str(DONE).unwrap();
        assert_eq!(Event::from_value(value.clone()).unwrap(), first);
        assert_eq!(serde_json::from_value::<Event>(value).unwrap(), first);
        assert_eq!(Event::from_json(DONE).unwrap(), first);
    }

    #[test]
    fn unknown_missing_and_non_string_tags_keep_the_object() {
        for (text, tag) in [
            (
                r#"{"type":"new.kind","id":"e1","x":[1,{"y":2}]}"#,
                "new.kind",
            ),
            (
                r#"{"id":"e1","x":[1,{"y":2}],"type":"new.kind"}"#,
                "new.kind",
            ),
            (r#"{"id":"e1","x":1}"#, ""),
            (r#"{"type":7,"id":"e1"}"#, ""),
            (r#"{"id":"e1","type":null}"#, ""),
            ("{}", ""),
        ] {
            let raw: serde_json::Value = serde_json::from_str(text).unwrap();
            match serde_json::from_str::<Event>(text).unwrap() {
                Event::Unknown {
                    event_type,
                    raw: kept,
                } => {
                    assert_eq!(event_type, tag, "{text}");
                    assert_eq!(kept, raw, "{text}");
                }
                other => panic!("{text}: {other:?}"),
            }
        }
        let state: TurnState =
            serde_json::from_str(r#"{"status":"paused","why":{"a":1}}"#).unwrap();
        assert_eq!(
            state,
            TurnState::Unknown {
                status: String::from("paused"),
                raw: json!({"status":"paused","why":{"a":1}})
            }
        );
    }

    /// An escaped tag is the same tag, in either key order.
    #[test]
    fn escaped_tags_match() {
        for text in [
            r#"{"type":"tool\u002eresponse","id":"e","tool_call_id":"c","content":"x"}"#,
            r#"{"id":"e","tool_call_id":"c","content":"x","type":"tool\u002eresponse"}"#,
        ] {
            assert!(
                matches!(
                    serde_json::from_str::<Event>(text),
                    Ok(Event::ToolResponse(_))
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn unknown_fields_of_known_types_are_ignored() {
        let text = r#"{"type":"tool.response","new":{"deep":[1,2]},"id":"e2","tool_call_id":"c1","content":"ok","thread_id":"main"}"#;
        match serde_json::from_str::<Event>(text).unwrap() {
            Event::ToolResponse(r) => {
                assert_eq!(r.tool_call_id, "c1");
                assert_eq!(r.content, json!("ok"));
            }
            other => panic!("{other:?}"),
        }
        let running: TurnState =
            serde_json::from_str(r#"{"status":"running","since":{"x":[1]}}"#).unwrap();
        assert_eq!(running, TurnState::Running);
    }

    /// A known type with a bad shape, or a non-object, is a typed error (never a panic).
    #[test]
    fn bad_shapes_are_errors() {
        for text in [
            r#"{"type":"turn.created","id":"e1","state":{"status":"running"}}"#,
            r#"{"id":"e1","type":"turn.created","state":{"status":"running"}}"#,
            r#"{"type":"tool.response","id":"e1","tool_call_id":5}"#,
            r#"{"type":"turn.done","id":"e1","state":{"status":"cancelled"}}"#,
            r#"{"type":"model.message","id":"e1","content":5}"#,
            r#"{"type":"model.message","id":"e1","content":"a""#,
            r#"["turn.done"]"#,
            r#""turn.done""#,
            "null",
        ] {
            assert!(serde_json::from_str::<Event>(text).is_err(), "{text}");
            assert!(Event::from_json(text).is_err(), "{text}");
        }
    }

    /// Nesting deeper than serde_json's recursion limit is an error in both key orders (the
    /// slow path checks the depth of what it re-reads), not a stack overflow; shallower nesting
    /// decodes in both orders.
    #[test]
    fn deep_nesting_is_bounded() {
        for (levels, ok) in [(30, true), (5_000, false)] {
            for tag_first in [true, false] {
                let text = nested(levels, tag_first);
                let decoded = serde_json::from_str::<Event>(&text);
                assert_eq!(decoded.is_ok(), ok, "{levels} {tag_first}");
            }
        }
    }

    /// `levels` `turn.done` events, each holding the next in `state.required_actions`.
    fn nested(levels: usize, tag_first: bool) -> String {
        let mut text = String::from(r#"{"type":"tool.approval_required","id":"r"}"#);
        for _ in 0..levels {
            text = if tag_first {
                format!(
                    r#"{{"type":"turn.done","id":"e","state":{{"status":"done","required_actions":[{text}]}}}}"#
                )
            } else {
                format!(
                    r#"{{"id":"e","state":{{"required_actions":[{text}],"status":"done"}},"type":"turn.done"}}"#
                )
            };
        }
        text
    }

    #[test]
    fn lenient_unions_keep_bad_known_shapes_raw() {
        let info: ToolInfo = serde_json::from_str(r#"{"type":"mcp","name":5}"#).unwrap();
        assert!(matches!(info, ToolInfo::Unknown { ref info_type, .. } if info_type == "mcp"));
        let info: ToolInfo =
            serde_json::from_str(r#"{"name":"ask","type":"truefoundry-system"}"#).unwrap();
        assert_eq!(
            info,
            ToolInfo::System {
                name: String::from("ask")
            }
        );
        let content: Content =
            serde_json::from_str(r#"[{"type":"text","text":"a"},{"type":"text"}]"#).unwrap();
        let Content::Parts(parts) = content else {
            panic!("parts")
        };
        assert_eq!(parts.len(), 2);
        assert!(serde_json::from_str::<Content>("5").is_err());
        let item: InputItem = serde_json::from_str(
            r#"{"type":"user.tool_approval","thread_id":"main","tool_call_id":"c","approval":{"status":"deny","reason":3}}"#,
        )
        .unwrap();
        assert!(matches!(item, InputItem::Unknown { .. }));
        let item: InputItem =
            serde_json::from_str(r#"{"content":"hi","type":"user.message"}"#).unwrap();
        assert_eq!(
            item,
            InputItem::UserMessage {
                content: UserContent::Text(String::from("hi"))
            }
        );
    }

    /// Encoding writes the tag first and omits nothing the decoder reads.
    #[test]
    fn encodes_tag_first_and_round_trips() {
        let event: Event = serde_json::from_str(DONE).unwrap();
        let text = serde_json::to_string(&event).unwrap();
        assert!(text.starts_with(r#"{"type":"turn.done""#), "{text}");
        assert!(text.contains(r#""state":{"status":"done""#), "{text}");
        assert!(
            text.contains(r#""output":{"type":"model.message""#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), event);
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            serde_json::from_str::<serde_json::Value>(DONE).unwrap()
        );
    }
}
