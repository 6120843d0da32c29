//! Model messages, their deltas, tool calls and usage (PROTOCOL §5 `model.message`,
//! `model.message.delta`, "Tool call", "Usage").

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::tagged::{parse_str, required_str, str_or_empty, type_of};

/// Message `content`: a string, or an array of parts (PROTOCOL §5 `model.message`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(untagged))]
pub enum Content {
    /// Plain text.
    Text(String),
    /// Typed parts (`text`, `refusal`, or kinds this SDK does not know).
    Parts(Vec<ContentPart>),
}

impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ContentVisitor)
    }
}

/// A string or an array of parts, read in place (no intermediate `Value`).
struct ContentVisitor;

impl<'de> Visitor<'de> for ContentVisitor {
    type Value = Content;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("content must be a string or an array of parts")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Content, E> {
        Ok(Content::Text(String::from(text)))
    }

    fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Content, E> {
        Ok(Content::Text(text))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content, A::Error> {
        let mut parts = Vec::new();
        while let Some(part) = seq.next_element()? {
            parts.push(part);
        }
        Ok(Content::Parts(parts))
    }
}

impl Serialize for Content {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Content::Text(text) => serializer.serialize_str(text),
            Content::Parts(parts) => parts.serialize(serializer),
        }
    }
}

/// One part of an array `content`: `{type:"text",text}`, `{type:"refusal",refusal}`, or any other
/// part kept raw.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(tag = "type", rename_all = "snake_case"))]
pub enum ContentPart {
    /// `{type:"text", text}`.
    Text {
        /// The text.
        text: String,
    },
    /// `{type:"refusal", refusal}`.
    Refusal {
        /// The refusal text.
        refusal: String,
    },
    /// A part kind this SDK does not know, kept as received.
    #[cfg_attr(feature = "tsify", serde(skip))]
    Unknown {
        /// Its `type` (empty when absent).
        part_type: String,
        /// The whole part object.
        raw: Value,
    },
}

impl ContentPart {
    /// Classifies a part object: `text` / `refusal` with their string field, else `Unknown`
    /// (also for a known `type` with a bad shape: kept, never fatal).
    pub(crate) fn from_value(raw: Value) -> Self {
        let part_type = type_of(&raw);
        let known = match part_type.as_str() {
            "text" => required_str(&raw, "text").map(|text| ContentPart::Text {
                text: String::from(text),
            }),
            "refusal" => required_str(&raw, "refusal").map(|refusal| ContentPart::Refusal {
                refusal: String::from(refusal),
            }),
            _ => None,
        };
        known.unwrap_or(ContentPart::Unknown { part_type, raw })
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Parts are rare and small: read whole, then classified (a bad known part stays raw).
        Value::deserialize(deserializer).map(ContentPart::from_value)
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PartRef<'a> {
    Text { text: &'a str },
    Refusal { refusal: &'a str },
}

impl Serialize for ContentPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ContentPart::Text { text } => PartRef::Text { text }.serialize(serializer),
            ContentPart::Refusal { refusal } => PartRef::Refusal { refusal }.serialize(serializer),
            ContentPart::Unknown { raw, .. } => raw.serialize(serializer),
        }
    }
}

/// `finish_reason` (PROTOCOL §5). Unknown values are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(
    feature = "tsify",
    tsify(
        type = "\"stop\" | \"length\" | \"tool_calls\" | \"content_filter\" | \"function_call\" | (string & {})"
    )
)]
pub enum FinishReason {
    /// `stop`
    Stop,
    /// `length`
    Length,
    /// `tool_calls`
    ToolCalls,
    /// `content_filter`
    ContentFilter,
    /// `function_call`
    FunctionCall,
    /// Any other value, verbatim.
    Other(String),
}

impl FinishReason {
    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::FunctionCall => "function_call",
            FinishReason::Other(other) => other,
        }
    }

    /// Parses the wire spelling; unknown values become [`FinishReason::Other`].
    pub fn parse(text: &str) -> Self {
        match text {
            "stop" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            "function_call" => FinishReason::FunctionCall,
            other => FinishReason::Other(String::from(other)),
        }
    }
}

impl<'de> Deserialize<'de> for FinishReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        parse_str(deserializer, FinishReason::parse)
    }
}

impl Serialize for FinishReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// `usage.input_tokens_breakdown`: where the input tokens went (tokens).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct InputTokensBreakdown {
    /// Harness prompt tokens.
    #[serde(default)]
    pub harness: u64,
    /// Skill tokens.
    #[serde(default)]
    pub skills: u64,
    /// Agent instruction tokens.
    #[serde(default)]
    pub instructions: u64,
    /// Tool definition tokens.
    #[serde(default)]
    pub tool_definitions: u64,
    /// Conversation message tokens.
    #[serde(default)]
    pub messages: u64,
}

/// Per model message usage (PROTOCOL §5 "Usage"), in tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct Usage {
    /// Input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Cached input tokens read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Cached input tokens written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Breakdown of `input_tokens` by origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens_breakdown: Option<InputTokensBreakdown>,
}

/// `tool_info` of a tool call: which kind of tool it is (PROTOCOL §5 "Tool call").
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(tag = "type"))]
pub enum ToolInfo {
    /// `{type:"truefoundry-system", name}`: a built-in tool (`ask_user_question`,
    /// `create_sub_agent`, …).
    #[cfg_attr(feature = "tsify", serde(rename = "truefoundry-system"))]
    System {
        /// Tool name.
        name: String,
    },
    /// `{type:"mcp", server_id, server_name, name}`: a tool of an MCP server.
    #[cfg_attr(feature = "tsify", serde(rename = "mcp"))]
    Mcp {
        /// MCP server id.
        server_id: String,
        /// MCP server display name.
        server_name: String,
        /// Tool name on that server.
        name: String,
    },
    /// Another kind, kept raw.
    #[cfg_attr(feature = "tsify", serde(skip))]
    Unknown {
        /// Its `type` (empty when absent).
        info_type: String,
        /// The whole object.
        raw: Value,
    },
}

impl ToolInfo {
    /// Classifies a `tool_info` object: `truefoundry-system` / `mcp` when their fields are
    /// strings (missing = empty), else `Unknown` with the object kept.
    pub(crate) fn from_value(raw: Value) -> Self {
        let info_type = type_of(&raw);
        let known = ToolInfo::known(&info_type, |key| str_or_empty(&raw, key).map(String::from));
        known.unwrap_or(ToolInfo::Unknown { info_type, raw })
    }

    /// The known kinds, by their `type`: `field(key)` gives a member's text (`""` when missing,
    /// `None` when not a string, which keeps the whole object `Unknown`). The one rule for the
    /// value route ([`ToolInfo::from_value`]) and the in-place decoder (`wire::decode`).
    pub(crate) fn known(
        info_type: &str,
        mut field: impl FnMut(&'static str) -> Option<String>,
    ) -> Option<ToolInfo> {
        match info_type {
            "truefoundry-system" => field("name").map(|name| ToolInfo::System { name }),
            "mcp" => match (field("server_id"), field("server_name"), field("name")) {
                (Some(server_id), Some(server_name), Some(name)) => Some(ToolInfo::Mcp {
                    server_id,
                    server_name,
                    name,
                }),
                _ => None,
            },
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for ToolInfo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // One per tool call and small: read whole, then classified (a bad known shape stays raw).
        Value::deserialize(deserializer).map(ToolInfo::from_value)
    }
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum InfoRef<'a> {
    #[serde(rename = "truefoundry-system")]
    System { name: &'a str },
    #[serde(rename = "mcp")]
    Mcp {
        server_id: &'a str,
        server_name: &'a str,
        name: &'a str,
    },
}

impl Serialize for ToolInfo {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ToolInfo::System { name } => InfoRef::System { name }.serialize(serializer),
            ToolInfo::Mcp {
                server_id,
                server_name,
                name,
            } => InfoRef::Mcp {
                server_id,
                server_name,
                name,
            }
            .serialize(serializer),
            ToolInfo::Unknown { raw, .. } => raw.serialize(serializer),
        }
    }
}

fn default_function() -> String {
    String::from("function")
}

/// `function` of a tool call: name and raw JSON `arguments` text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct FunctionCall {
    /// Tool name.
    #[serde(default)]
    pub name: String,
    /// Arguments as JSON text (not parsed on the wire).
    #[serde(default)]
    pub arguments: String,
}

/// A complete tool call inside a full `model.message` (PROTOCOL §5 "Tool call").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ToolCall {
    /// `tool_call_id`, the causality key for results and pauses.
    pub id: String,
    /// Always `function` today.
    #[serde(rename = "type", default = "default_function")]
    pub call_type: String,
    /// Name and argument text.
    #[serde(default)]
    pub function: FunctionCall,
    /// Which tool family the call belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_info: Option<ToolInfo>,
    /// Provider extras, opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub provider_specific_fields: Option<Value>,
}

/// A `model.message` event: live an empty placeholder, in listings the merged message
/// (PROTOCOL §5 `model.message`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ModelMessage {
    /// Event id (lowercase ULID), shared with all its deltas.
    pub id: String,
    /// ISO-8601 creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Owner thread: `"main"`, a subagent UUID, or null.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Content (string or parts); absent or null on a placeholder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// Optional author name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Refusal text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// Reasoning text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Tool calls proposed by this message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Why generation stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// Token usage of this model call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl ModelMessage {
    /// True for the live placeholder `{type,id,thread_id,created_at}` that deltas fill: no
    /// content, refusal, reasoning, tool calls, finish reason or usage.
    pub fn is_placeholder(&self) -> bool {
        self.content.is_none()
            && self.refusal.is_none()
            && self.reasoning_content.is_none()
            && self.tool_calls.is_none()
            && self.finish_reason.is_none()
            && self.usage.is_none()
    }
}

/// `function` fragment of a streamed tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct FunctionDelta {
    /// Tool name, usually only on the first fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A fragment of the arguments text, to be concatenated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
}

/// One fragment of a streamed tool call, addressed by `index` (PROTOCOL §5 delta merge rule).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ToolCallDelta {
    /// Position of the call inside its message.
    pub index: u32,
    /// `tool_call_id` (first fragment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Call type (first fragment).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub call_type: Option<String>,
    /// Name and/or arguments fragment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionDelta>,
    /// Tool family (first fragment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_info: Option<ToolInfo>,
    /// Provider extras, opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub provider_specific_fields: Option<Value>,
}

/// `model.message.delta`: a live-only increment of the message with the same `id`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct MessageDelta {
    /// The base message's event id.
    pub id: String,
    /// Only the first delta carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Must equal the base's thread.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Content increment (normally a string).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// Refusal increment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
    /// Reasoning increment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Tool-call fragments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCallDelta>>,
    /// Latest wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<FinishReason>,
    /// Latest wins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}
