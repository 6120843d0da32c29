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
//! - **Tag elsewhere** (valid JSON, never seen from the server): the object is read into a
//!   `Value`, re-written with the discriminator keys first at every level, and decoded again. The
//!   re-written text has every nested union's tag first too, so this happens at most once per
//!   branch and nesting stays bounded by serde_json's recursion limit plus the depth at which it
//!   happened.
//!
//! Unknown fields of known variants are ignored (not kept): nothing downstream reads them.

use alloc::string::{String, ToString};
use core::fmt;
use core::marker::PhantomData;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, Visitor};
use serde_json::{Map, Value};

/// A tagged union of the wire, decoded by [`deserialize_union`].
pub(crate) trait Union: Sized {
    /// The discriminator key (`type` or `status`).
    const TAG: &'static str;
    /// What the visitor expects (for error messages).
    const EXPECTING: &'static str;
    /// Whether `tag` names a variant this SDK decodes.
    fn is_known(tag: &str) -> bool;
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
    let Value::Object(map) = raw else {
        return Err(serde_json::Error::custom(T::EXPECTING));
    };
    from_object(map)
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
            // The tag is the first key: one pass.
            let tag: Value = map.next_value()?;
            if let Value::String(name) = &tag {
                if T::is_known(name) {
                    return T::known(name, MapAccessDeserializer::new(map));
                }
            }
            let mut object = Map::new();
            object.insert(String::from(T::TAG), tag);
            while let Some((key, value)) = map.next_entry::<String, Value>()? {
                object.insert(key, value);
            }
            return Ok(unknown_of(object));
        };
        let mut object = Map::new();
        object.insert(first, map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            object.insert(key, value);
        }
        from_object(object).map_err(A::Error::custom)
    }
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

/// The slow path: a whole object whose tag may be anywhere.
fn from_object<T: Union>(object: Map<String, Value>) -> Result<T, serde_json::Error> {
    let known = object
        .get(T::TAG)
        .and_then(Value::as_str)
        .is_some_and(T::is_known);
    if !known {
        return Ok(unknown_of(object));
    }
    let mut text = String::new();
    write_tags_first(&Value::Object(object), &mut text);
    let mut de = serde_json::Deserializer::from_str(&text);
    let union = deserialize_union::<T, _>(&mut de)?;
    de.end()?;
    Ok(union)
}

/// Writes `value` as JSON with the union discriminators (`type`, `status`) first in every object,
/// so decoding the text takes the one-pass path at every level. Recursion is bounded by the
/// value's depth, which serde_json's recursion limit bounds.
fn write_tags_first(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            let tags = ["type", "status"];
            let first = tags.iter().filter_map(|k| map.get_key_value(*k));
            let rest = map.iter().filter(|(k, _)| !tags.contains(&k.as_str()));
            for (i, (key, item)) in first.chain(rest).enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_tags_first(item, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_tags_first(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
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
    /// slow path reads through the same limit before it re-reads), not a stack overflow.
    #[test]
    fn deep_nesting_is_bounded() {
        for tag_first in [true, false] {
            let mut text = String::from(r#"{"type":"tool.approval_required","id":"r"}"#);
            for _ in 0..5_000 {
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
            assert!(serde_json::from_str::<Event>(&text).is_err());
        }
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
