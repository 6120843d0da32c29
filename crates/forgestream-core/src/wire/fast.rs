//! The fast path for the hot event. A live turn is almost all `model.message.delta` frames;
//! the general path in [`super::event`] reads the `type` first and then the variant's struct
//! through a map-access adapter. A delta with exactly the known fields is decoded straight from
//! the text instead; anything else — an unknown field, array content, a duplicate key — makes
//! [`delta`] return `None` and the caller takes the general path, so the result is always the
//! same as the general decoder's.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use serde::Deserialize;
use serde_json::Value;

use super::message::{
    Content, FinishReason, FunctionDelta, MessageDelta, ToolCallDelta, ToolInfo, Usage,
};

/// A delta with only the fields PROTOCOL §5 names (unknown fields → general path).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownDelta<'a> {
    #[serde(rename = "type", borrow)]
    event_type: Cow<'a, str>,
    id: String,
    #[serde(default)]
    created_at: Option<String>,
    #[serde(default)]
    thread_id: Option<String>,
    /// Only string content here; array content takes the general path.
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<KnownToolCallDelta>>,
    #[serde(default)]
    finish_reason: Option<FinishReason>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownToolCallDelta {
    index: u32,
    #[serde(default)]
    id: Option<String>,
    #[serde(rename = "type", default)]
    call_type: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
    /// Rare (first fragment only): decoded through the general `ToolInfo` rules.
    #[serde(default)]
    tool_info: Option<Value>,
    #[serde(default)]
    provider_specific_fields: Option<Value>,
}

/// Decodes `data` as a `model.message.delta` if it is one with only known fields; `None` means
/// "use the general decoder" (it is not a delta, or it has something the fast path does not
/// model). Never panics.
pub(crate) fn delta(data: &str) -> Option<MessageDelta> {
    // No substring pre-filter: a search per frame cost more in profiles than the rare failed
    // attempt on another event type, which stops at its first field the delta does not have.
    let known: KnownDelta<'_> = serde_json::from_str(data).ok()?;
    if known.event_type != "model.message.delta" {
        return None;
    }
    let tool_calls = match known.tool_calls {
        None => None,
        Some(calls) => {
            let mut out = Vec::with_capacity(calls.len());
            for call in calls {
                let tool_info = match call.tool_info {
                    None | Some(Value::Null) => None,
                    Some(raw) => Some(ToolInfo::from_value(raw)),
                };
                out.push(ToolCallDelta {
                    index: call.index,
                    id: call.id,
                    call_type: call.call_type,
                    function: call.function,
                    tool_info,
                    provider_specific_fields: call.provider_specific_fields,
                });
            }
            Some(out)
        }
    };
    Some(MessageDelta {
        id: known.id,
        created_at: known.created_at,
        thread_id: known.thread_id,
        content: known.content.map(Content::Text),
        refusal: known.refusal,
        reasoning_content: known.reasoning_content,
        tool_calls,
        finish_reason: known.finish_reason,
        usage: known.usage,
    })
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::event::Event;
    use super::*;

    fn general(data: &str) -> Event {
        Event::from_value(serde_json::from_str(data).unwrap()).unwrap()
    }

    /// Every delta frame of every recorded real stream: the fast path applies and agrees with the
    /// general decoder.
    #[test]
    fn agrees_with_the_general_decoder_on_recorded_deltas() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/recorded");
        let mut checked = 0;
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            if !dir.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(dir).unwrap() {
                let path = file.unwrap().path();
                if path.extension().is_none_or(|e| e != "sse") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
                    if let Some(fast) = delta(line) {
                        assert_eq!(Event::ModelMessageDelta(fast), general(line), "{line}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "only {checked} deltas checked");
    }

    /// What the fast path does not model goes to the general path, which keeps it.
    #[test]
    fn declines_what_it_does_not_model() {
        let unknown_field = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"x","new_field":1}"#;
        assert!(delta(unknown_field).is_none());
        match Event::from_json(unknown_field).unwrap() {
            // Unknown fields are ignored by the general decoder too.
            Event::ModelMessageDelta(d) => assert_eq!(d.content, Some(Content::Text("x".into()))),
            other => panic!("{other:?}"),
        }
        let parts = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":[{"type":"text","text":"x"}]}"#;
        assert!(delta(parts).is_none());
        assert!(matches!(
            Event::from_json(parts).unwrap(),
            Event::ModelMessageDelta(_)
        ));
        let not_delta =
            r#"{"type":"model.message","id":"m1","thread_id":"main","note":"model.message.delta"}"#;
        assert!(delta(not_delta).is_none());
        assert!(delta("{\"type\":\"model.message.delta\"").is_none());
    }
}
