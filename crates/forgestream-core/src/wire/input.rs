//! Turn input items (PROTOCOL §7): what a new turn sends in `input`.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::tagged::{decode_without, serialize_tagged, tag_of};

/// One part of a `user.message` array content.
#[derive(Debug, Clone, PartialEq)]
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
    Unknown {
        /// Its `type`.
        part_type: String,
        /// The whole part.
        raw: Value,
    },
}

#[derive(Serialize, Deserialize)]
struct TextBody {
    text: String,
}

#[derive(Serialize, Deserialize)]
struct FileBody {
    name: String,
    data: String,
}

impl<'de> Deserialize<'de> for InputPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(deserializer)?;
        let part_type = tag_of(&raw, "type").unwrap_or_default();
        let decoded = match part_type.as_str() {
            "text" => serde_json::from_value::<TextBody>(raw.clone())
                .ok()
                .map(|b| InputPart::Text { text: b.text }),
            "file" => serde_json::from_value::<FileBody>(raw.clone())
                .ok()
                .map(|b| InputPart::File {
                    name: b.name,
                    data: b.data,
                }),
            _ => None,
        };
        Ok(decoded.unwrap_or(InputPart::Unknown { part_type, raw }))
    }
}

impl Serialize for InputPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            InputPart::Text { text } => {
                serialize_tagged(serializer, "type", "text", &TextBody { text: text.clone() })
            }
            InputPart::File { name, data } => serialize_tagged(
                serializer,
                "type",
                "file",
                &FileBody {
                    name: name.clone(),
                    data: data.clone(),
                },
            ),
            InputPart::Unknown { raw, .. } => raw.serialize(serializer),
        }
    }
}

/// `user.message` content: a string or parts.
#[derive(Debug, Clone, PartialEq)]
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

impl<'de> Deserialize<'de> for UserContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::String(text) => Ok(UserContent::Text(text)),
            Value::Array(items) => items
                .into_iter()
                .map(|item| serde_json::from_value(item).map_err(serde::de::Error::custom))
                .collect::<Result<Vec<_>, _>>()
                .map(UserContent::Parts),
            _ => Err(serde::de::Error::custom(
                "user.message content must be a string or parts",
            )),
        }
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
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

/// One item of a turn's `input` (PROTOCOL §7).
#[derive(Debug, Clone, PartialEq)]
pub enum InputItem {
    /// `{"type":"user.message","content"}`
    UserMessage {
        /// Text or parts.
        content: UserContent,
    },
    /// `{"type":"user.tool_approval","thread_id","tool_call_id","approval"}`
    ToolApproval {
        /// Owner thread of the pending call.
        thread_id: String,
        /// The pending call.
        tool_call_id: String,
        /// Allow or deny.
        approval: Approval,
    },
    /// `{"type":"user.tool_response","thread_id","tool_call_id","content"}` (non-empty).
    ToolResponse {
        /// Owner thread of the pending call.
        thread_id: String,
        /// The pending call.
        tool_call_id: String,
        /// The client tool's result / the user's answer.
        content: String,
    },
    /// An item type this SDK does not know (seen in `turn.created.input` echoes), kept raw.
    Unknown {
        /// Its `type`.
        item_type: String,
        /// The whole item.
        raw: Value,
    },
}

#[derive(Serialize, Deserialize)]
struct UserMessageBody {
    content: UserContent,
}

#[derive(Serialize, Deserialize)]
struct ApprovalBody {
    thread_id: String,
    tool_call_id: String,
    approval: Approval,
}

#[derive(Serialize, Deserialize)]
struct ResponseBody {
    thread_id: String,
    tool_call_id: String,
    content: String,
}

impl<'de> Deserialize<'de> for InputItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(deserializer)?;
        let item_type = tag_of(&raw, "type").unwrap_or_default();
        let decoded = match item_type.as_str() {
            "user.message" => decode_without::<UserMessageBody>(raw.clone(), "type")
                .ok()
                .map(|b| InputItem::UserMessage { content: b.content }),
            "user.tool_approval" => decode_without::<ApprovalBody>(raw.clone(), "type")
                .ok()
                .map(|b| InputItem::ToolApproval {
                    thread_id: b.thread_id,
                    tool_call_id: b.tool_call_id,
                    approval: b.approval,
                }),
            "user.tool_response" => decode_without::<ResponseBody>(raw.clone(), "type")
                .ok()
                .map(|b| InputItem::ToolResponse {
                    thread_id: b.thread_id,
                    tool_call_id: b.tool_call_id,
                    content: b.content,
                }),
            _ => None,
        };
        Ok(decoded.unwrap_or(InputItem::Unknown { item_type, raw }))
    }
}

impl Serialize for InputItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            InputItem::UserMessage { content } => serialize_tagged(
                serializer,
                "type",
                "user.message",
                &UserMessageBody {
                    content: content.clone(),
                },
            ),
            InputItem::ToolApproval {
                thread_id,
                tool_call_id,
                approval,
            } => serialize_tagged(
                serializer,
                "type",
                "user.tool_approval",
                &ApprovalBody {
                    thread_id: thread_id.clone(),
                    tool_call_id: tool_call_id.clone(),
                    approval: approval.clone(),
                },
            ),
            InputItem::ToolResponse {
                thread_id,
                tool_call_id,
                content,
            } => serialize_tagged(
                serializer,
                "type",
                "user.tool_response",
                &ResponseBody {
                    thread_id: thread_id.clone(),
                    tool_call_id: tool_call_id.clone(),
                    content: content.clone(),
                },
            ),
            InputItem::Unknown { raw, .. } => raw.serialize(serializer),
        }
    }
}
