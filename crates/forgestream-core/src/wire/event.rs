//! The streamed event union (PROTOCOL §5): 12 known types plus `Unknown`.

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::input::InputItem;
use super::message::{MessageDelta, ModelMessage};
use super::tagged::{decode_without, is_empty_map, serialize_tagged, tag_of};
use super::turn::TurnState;

/// `turn.created`: the first event of every turn stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnCreated {
    /// Event id.
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Always null.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The turn this stream belongs to.
    pub turn_id: String,
    /// Chain parent, null for a root turn.
    #[serde(default)]
    pub previous_turn_id: Option<String>,
    /// Echo of the turn's input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Vec<InputItem>>,
    /// `{status:"running"}`.
    pub state: TurnState,
    /// Gateway: the creating subject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<Value>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// `turn.done`: the last event of a turn; `state` is terminal (PROTOCOL §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnDone {
    /// Event id (a frozen turn's two records may differ: key lifecycle by turn id).
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Always null.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The terminal state.
    pub state: TurnState,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// `tool.response`: the result of one executed call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResponse {
    /// Event id.
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Thread that ran the call.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The call it answers (the only binding key).
    pub tool_call_id: String,
    /// Normally a string (JSON text for structured results; `""` for a finished subagent).
    #[serde(default)]
    pub content: Value,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// A `{id, source_event_id}` reference inside a `*_required` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequiredToolCall {
    /// The waiting call's `tool_call_id`.
    pub id: String,
    /// The `model.message` that proposed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_event_id: Option<String>,
}

/// `tool.approval_required` / `tool.response_required`: a thread stopped for input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallsRequired {
    /// Event id.
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The owner thread (answers must name it).
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The waiting calls.
    #[serde(default)]
    pub tool_calls: Vec<RequiredToolCall>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// One server of `mcp.auth_required`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpAuthServer {
    /// Server id (the pending key).
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
    /// Where the user authorises.
    #[serde(default)]
    pub auth_url: String,
}

/// `mcp.auth_required`: merged across threads, `thread_id: null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpAuthRequired {
    /// Event id.
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Null.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Servers that need the user to authorise.
    #[serde(default)]
    pub mcp_servers: Vec<McpAuthServer>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// One server of `mcp.initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServer {
    /// Server id.
    pub id: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
    /// MCP session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// e.g. `streamable-http`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_type: Option<String>,
}

/// `mcp.initialize`: MCP servers connected for a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpInitialize {
    /// Event id.
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The thread.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Connected servers.
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// `sandbox.created`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SandboxCreated {
    /// Event id.
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Null.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The sandbox.
    #[serde(default)]
    pub sandbox_id: String,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// `parent` of a subagent thread: the spawning call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadParent {
    /// The parent thread (`main` or another subagent).
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The spawning call (the only binding key).
    #[serde(default)]
    pub tool_call_id: Option<String>,
}

/// `agent_info` of `thread.created`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// `dynamic` today.
    #[serde(rename = "type", default)]
    pub agent_type: String,
    /// Subagent name.
    #[serde(default)]
    pub name: String,
    /// Its task input (normally a string).
    #[serde(default)]
    pub input: Value,
    /// Model, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Value>,
}

/// `thread.created`: a subagent thread starts (never for `main`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadCreated {
    /// Event id.
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The new thread's UUID.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The spawning call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ThreadParent>,
    /// Who runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_info: Option<AgentInfo>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// `state` of `thread.done`: `{status:"done",output}` or `{status:"error",error,output?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadState {
    /// `done` or `error` (others kept verbatim).
    #[serde(default)]
    pub status: String,
    /// The child's final assembled message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ModelMessage>,
    /// The failure, on `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

/// `thread.done`: a subagent thread finished. Does not end the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadDone {
    /// Event id.
    #[serde(default)]
    pub id: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The finished thread.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The spawning call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<ThreadParent>,
    /// Outcome.
    pub state: ThreadState,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// One event of a turn stream or listing, by `type` (PROTOCOL §5).
///
/// Decoding never fails on an unknown `type`: such events become [`Event::Unknown`] with the
/// whole object kept. A known `type` with an invalid shape is a decode error.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `turn.created`
    TurnCreated(TurnCreated),
    /// `turn.done`
    TurnDone(TurnDone),
    /// `model.message` (live placeholder or merged message)
    ModelMessage(ModelMessage),
    /// `model.message.delta` (live only)
    ModelMessageDelta(MessageDelta),
    /// `tool.response`
    ToolResponse(ToolResponse),
    /// `tool.approval_required`
    ToolApprovalRequired(ToolCallsRequired),
    /// `tool.response_required`
    ToolResponseRequired(ToolCallsRequired),
    /// `mcp.auth_required`
    McpAuthRequired(McpAuthRequired),
    /// `mcp.initialize`
    McpInitialize(McpInitialize),
    /// `sandbox.created`
    SandboxCreated(SandboxCreated),
    /// `thread.created`
    ThreadCreated(ThreadCreated),
    /// `thread.done`
    ThreadDone(ThreadDone),
    /// Any other `type` (or none), kept whole.
    Unknown {
        /// The `type` value (empty when missing or not a string).
        event_type: String,
        /// The whole event object.
        raw: Value,
    },
}

impl Event {
    /// The wire `type`.
    pub fn event_type(&self) -> &str {
        match self {
            Event::TurnCreated(_) => "turn.created",
            Event::TurnDone(_) => "turn.done",
            Event::ModelMessage(_) => "model.message",
            Event::ModelMessageDelta(_) => "model.message.delta",
            Event::ToolResponse(_) => "tool.response",
            Event::ToolApprovalRequired(_) => "tool.approval_required",
            Event::ToolResponseRequired(_) => "tool.response_required",
            Event::McpAuthRequired(_) => "mcp.auth_required",
            Event::McpInitialize(_) => "mcp.initialize",
            Event::SandboxCreated(_) => "sandbox.created",
            Event::ThreadCreated(_) => "thread.created",
            Event::ThreadDone(_) => "thread.done",
            Event::Unknown { event_type, .. } => event_type,
        }
    }

    /// The event `id`, when present.
    pub fn id(&self) -> Option<&str> {
        let id = match self {
            Event::TurnCreated(e) => &e.id,
            Event::TurnDone(e) => &e.id,
            Event::ModelMessage(e) => &e.id,
            Event::ModelMessageDelta(e) => &e.id,
            Event::ToolResponse(e) => &e.id,
            Event::ToolApprovalRequired(e) | Event::ToolResponseRequired(e) => &e.id,
            Event::McpAuthRequired(e) => &e.id,
            Event::McpInitialize(e) => &e.id,
            Event::SandboxCreated(e) => &e.id,
            Event::ThreadCreated(e) => &e.id,
            Event::ThreadDone(e) => &e.id,
            Event::Unknown { raw, .. } => return raw.get("id").and_then(Value::as_str),
        };
        if id.is_empty() {
            None
        } else {
            Some(id)
        }
    }

    /// The envelope `thread_id` (`None` for null or missing).
    pub fn thread_id(&self) -> Option<&str> {
        match self {
            Event::TurnCreated(e) => e.thread_id.as_deref(),
            Event::TurnDone(e) => e.thread_id.as_deref(),
            Event::ModelMessage(e) => e.thread_id.as_deref(),
            Event::ModelMessageDelta(e) => e.thread_id.as_deref(),
            Event::ToolResponse(e) => e.thread_id.as_deref(),
            Event::ToolApprovalRequired(e) | Event::ToolResponseRequired(e) => {
                e.thread_id.as_deref()
            }
            Event::McpAuthRequired(e) => e.thread_id.as_deref(),
            Event::McpInitialize(e) => e.thread_id.as_deref(),
            Event::SandboxCreated(e) => e.thread_id.as_deref(),
            Event::ThreadCreated(e) => e.thread_id.as_deref(),
            Event::ThreadDone(e) => e.thread_id.as_deref(),
            Event::Unknown { raw, .. } => raw.get("thread_id").and_then(Value::as_str),
        }
    }

    /// Decodes one event from a JSON value (see the type docs for the rules). A value that is
    /// not an object is an error.
    pub fn from_value(raw: Value) -> Result<Event, serde_json::Error> {
        if !raw.is_object() {
            return Err(serde::de::Error::custom("an event must be a JSON object"));
        }
        let Some(event_type) = tag_of(&raw, "type") else {
            return Ok(Event::Unknown {
                event_type: String::new(),
                raw,
            });
        };
        let event = match event_type.as_str() {
            "turn.created" => Event::TurnCreated(decode_without(raw, "type")?),
            "turn.done" => Event::TurnDone(decode_without(raw, "type")?),
            "model.message" => Event::ModelMessage(decode_without(raw, "type")?),
            "model.message.delta" => Event::ModelMessageDelta(decode_without(raw, "type")?),
            "tool.response" => Event::ToolResponse(decode_without(raw, "type")?),
            "tool.approval_required" => Event::ToolApprovalRequired(decode_without(raw, "type")?),
            "tool.response_required" => Event::ToolResponseRequired(decode_without(raw, "type")?),
            "mcp.auth_required" => Event::McpAuthRequired(decode_without(raw, "type")?),
            "mcp.initialize" => Event::McpInitialize(decode_without(raw, "type")?),
            "sandbox.created" => Event::SandboxCreated(decode_without(raw, "type")?),
            "thread.created" => Event::ThreadCreated(decode_without(raw, "type")?),
            "thread.done" => Event::ThreadDone(decode_without(raw, "type")?),
            _ => Event::Unknown { event_type, raw },
        };
        Ok(event)
    }

    /// Decodes one event from the JSON text of an SSE `data` field.
    pub fn from_json(data: &str) -> Result<Event, serde_json::Error> {
        // Hot path: a plain delta decodes straight from the text (same result, see `fast`).
        if let Some(delta) = super::fast::delta(data) {
            return Ok(Event::ModelMessageDelta(delta));
        }
        let raw: Value = serde_json::from_str(data)?;
        Event::from_value(raw)
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(deserializer)?;
        Event::from_value(raw).map_err(serde::de::Error::custom)
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tag = self.event_type();
        match self {
            Event::TurnCreated(e) => serialize_tagged(serializer, "type", tag, e),
            Event::TurnDone(e) => serialize_tagged(serializer, "type", tag, e),
            Event::ModelMessage(e) => serialize_tagged(serializer, "type", tag, e),
            Event::ModelMessageDelta(e) => serialize_tagged(serializer, "type", tag, e),
            Event::ToolResponse(e) => serialize_tagged(serializer, "type", tag, e),
            Event::ToolApprovalRequired(e) | Event::ToolResponseRequired(e) => {
                serialize_tagged(serializer, "type", tag, e)
            }
            Event::McpAuthRequired(e) => serialize_tagged(serializer, "type", tag, e),
            Event::McpInitialize(e) => serialize_tagged(serializer, "type", tag, e),
            Event::SandboxCreated(e) => serialize_tagged(serializer, "type", tag, e),
            Event::ThreadCreated(e) => serialize_tagged(serializer, "type", tag, e),
            Event::ThreadDone(e) => serialize_tagged(serializer, "type", tag, e),
            Event::Unknown { raw, .. } => raw.serialize(serializer),
        }
    }
}
