//! Turn input items (PROTOCOL §7): what a new turn sends in `input`.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::tagged::{required_str, type_of};

/// One part of a `user.message` array content.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(tag = "type", rename_all = "snake_case"))]
pub enum InputPart {
    /// `{type:"text", text}`
    Text {
        /// The text.
        text: String,
    },
    /// `{type:"file", name, data}` where `data` is a data URI.
    File {
        /// File name.
        name: String,
        /// `data:<mime>;base64,…`
        data: String,
    },
    /// Another part kind, kept raw.
    #[cfg_attr(feature = "tsify", serde(skip))]
    Unknown {
        /// Its `type`.
        part_type: String,
        /// The whole part.
        raw: Value,
    },
}

impl InputPart {
    /// Classifies a part object (a known `type` with a bad shape stays `Unknown`).
    fn from_value(raw: Value) -> Self {
        let part_type = type_of(&raw);
        let known = match part_type.as_str() {
            "text" => required_str(&raw, "text").map(|text| InputPart::Text {
                text: String::from(text),
            }),
            "file" => match (required_str(&raw, "name"), required_str(&raw, "data")) {
                (Some(name), Some(data)) => Some(InputPart::File {
                    name: String::from(name),
                    data: String::from(data),
                }),
                _ => None,
            },
            _ => None,
        };
        known.unwrap_or(InputPart::Unknown { part_type, raw })
    }
}

impl<'de> Deserialize<'de> for InputPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(InputPart::from_value)
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PartRef<'a> {
    Text { text: &'a str },
    File { name: &'a str, data: &'a str },
}

impl Serialize for InputPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            InputPart::Text { text } => PartRef::Text { text }.serialize(serializer),
            InputPart::File { name, data } => PartRef::File { name, data }.serialize(serializer),
            InputPart::Unknown { raw, .. } => raw.serialize(serializer),
        }
    }
}

/// `user.message` content: a string or parts.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(untagged))]
pub enum UserContent {
    /// Plain text.
    Text(String),
    /// Text and file parts.
    Parts(Vec<InputPart>),
}

impl UserContent {
    /// True when there is nothing to send (empty text, or no parts / only empty text parts).
    pub fn is_empty(&self) -> bool {
        match self {
            UserContent::Text(text) => text.trim().is_empty(),
            UserContent::Parts(parts) => parts
                .iter()
                .all(|p| matches!(p, InputPart::Text { text } if text.trim().is_empty())),
        }
    }
}

impl UserContent {
    /// A string or an array of parts; anything else is `None` (a bad shape).
    fn from_value(raw: Value) -> Option<Self> {
        match raw {
            Value::String(text) => Some(UserContent::Text(text)),
            Value::Array(items) => Some(UserContent::Parts(
                items.into_iter().map(InputPart::from_value).collect(),
            )),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for UserContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        UserContent::from_value(Value::deserialize(deserializer)?).ok_or_else(|| {
            serde::de::Error::custom("user.message content must be a string or parts")
        })
    }
}

impl Serialize for UserContent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            UserContent::Text(text) => serializer.serialize_str(text),
            UserContent::Parts(parts) => parts.serialize(serializer),
        }
    }
}

/// The `approval` object of `user.tool_approval`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub enum Approval {
    /// `{"status":"allow"}`
    Allow,
    /// `{"status":"deny","reason"?}`; the model later sees
    /// `{"error":"User denied tool call: <reason>"}`.
    Deny {
        /// Why, shown to the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl Approval {
    /// `{"status":"allow"}` or `{"status":"deny","reason"?}` (`reason` a string or null);
    /// anything else is `None`.
    fn from_value(raw: &Value) -> Option<Self> {
        match raw.get("status")?.as_str()? {
            "allow" => Some(Approval::Allow),
            "deny" => match raw.get("reason") {
                None | Some(Value::Null) => Some(Approval::Deny { reason: None }),
                Some(Value::String(reason)) => Some(Approval::Deny {
                    reason: Some(reason.clone()),
                }),
                Some(_) => None,
            },
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Approval {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Approval::from_value(&Value::deserialize(deserializer)?).ok_or_else(|| {
            serde::de::Error::custom(
                "approval must be {status:\"allow\"} or {status:\"deny\",reason?}",
            )
        })
    }
}

/// One item of a turn's `input` (PROTOCOL §7).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(tag = "type"))]
pub enum InputItem {
    /// `{"type":"user.message","content"}`
    #[cfg_attr(feature = "tsify", serde(rename = "user.message"))]
    UserMessage {
        /// Text or parts.
        content: UserContent,
    },
    /// `{"type":"user.tool_approval","thread_id","tool_call_id","approval"}`
    #[cfg_attr(feature = "tsify", serde(rename = "user.tool_approval"))]
    ToolApproval {
        /// Owner thread of the pending call.
        thread_id: String,
        /// The pending call.
        tool_call_id: String,
        /// Allow or deny.
        approval: Approval,
    },
    /// `{"type":"user.tool_response","thread_id","tool_call_id","content"}` (non-empty).
    #[cfg_attr(feature = "tsify", serde(rename = "user.tool_response"))]
    ToolResponse {
        /// Owner thread of the pending call.
        thread_id: String,
        /// The pending call.
        tool_call_id: String,
        /// The client tool's result / the user's answer.
        content: String,
    },
    /// An item type this SDK does not know (seen in `turn.created.input` echoes), kept raw.
    #[cfg_attr(feature = "tsify", serde(skip))]
    Unknown {
        /// Its `type`.
        item_type: String,
        /// The whole item.
        raw: Value,
    },
}

impl InputItem {
    /// Classifies an item object (a known `type` with a bad shape stays `Unknown`).
    pub(crate) fn from_value(raw: Value) -> Self {
        let item_type = type_of(&raw);
        let call = |raw: &Value| {
            Some((
                String::from(required_str(raw, "thread_id")?),
                String::from(required_str(raw, "tool_call_id")?),
            ))
        };
        let known = match item_type.as_str() {
            "user.message" => raw
                .get("content")
                .cloned()
                .and_then(UserContent::from_value)
                .map(|content| InputItem::UserMessage { content }),
            "user.tool_approval" => call(&raw).and_then(|(thread_id, tool_call_id)| {
                Some(InputItem::ToolApproval {
                    thread_id,
                    tool_call_id,
                    approval: Approval::from_value(raw.get("approval")?)?,
                })
            }),
            "user.tool_response" => call(&raw).and_then(|(thread_id, tool_call_id)| {
                Some(InputItem::ToolResponse {
                    thread_id,
                    tool_call_id,
                    content: String::from(required_str(&raw, "content")?),
                })
            }),
            _ => None,
        };
        known.unwrap_or(InputItem::Unknown { item_type, raw })
    }
}

impl<'de> Deserialize<'de> for InputItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Input items are few and small: read whole, then classified.
        Value::deserialize(deserializer).map(InputItem::from_value)
    }
}

#[derive(Serialize)]
#[serde(tag = "type")]
enum ItemRef<'a> {
    #[serde(rename = "user.message")]
    UserMessage { content: &'a UserContent },
    #[serde(rename = "user.tool_approval")]
    ToolApproval {
        thread_id: &'a str,
        tool_call_id: &'a str,
        approval: &'a Approval,
    },
    #[serde(rename = "user.tool_response")]
    ToolResponse {
        thread_id: &'a str,
        tool_call_id: &'a str,
        content: &'a str,
    },
}

impl Serialize for InputItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tagged = match self {
            InputItem::UserMessage { content } => ItemRef::UserMessage { content },
            InputItem::ToolApproval {
                thread_id,
                tool_call_id,
                approval,
            } => ItemRef::ToolApproval {
                thread_id,
                tool_call_id,
                approval,
            },
            InputItem::ToolResponse {
                thread_id,
                tool_call_id,
                content,
            } => ItemRef::ToolResponse {
                thread_id,
                tool_call_id,
                content,
            },
            InputItem::Unknown { raw, .. } => return raw.serialize(serializer),
        };
        tagged.serialize(serializer)
    }
}
