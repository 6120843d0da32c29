//! The streamed event union (PROTOCOL §5): 12 known types plus `Unknown`.

use alloc::string::String;
use alloc::vec::Vec;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Error as _, MapAccess};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::input::InputItem;
use super::message::{MessageDelta, ModelMessage};
use super::tagged::{deserialize_union, union_from_value, Union};
use super::turn::TurnState;

/// `turn.created`: the first event of every turn stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub created_by: Option<Value>,
}

/// `turn.done`: the last event of a turn; `state` is terminal (PROTOCOL §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
}

/// `tool.response`: the result of one executed call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub content: Value,
}

/// A `{id, source_event_id}` reference inside a `*_required` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct RequiredToolCall {
    /// The waiting call's `tool_call_id`.
    pub id: String,
    /// The `model.message` that proposed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_event_id: Option<String>,
}

/// `tool.approval_required` / `tool.response_required`: a thread stopped for input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
}

/// One server of `mcp.auth_required`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
}

/// One server of `mcp.initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
}

/// `sandbox.created`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
}

/// `parent` of a subagent thread: the spawning call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct AgentInfo {
    /// `dynamic` today.
    #[serde(rename = "type", default)]
    pub agent_type: String,
    /// Subagent name.
    #[serde(default)]
    pub name: String,
    /// Its task input (normally a string).
    #[serde(default)]
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub input: Value,
    /// Model, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub model: Option<Value>,
}

/// `thread.created`: a subagent thread starts (never for `main`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
}

/// `state` of `thread.done`: `{status:"done",output}` or `{status:"error",error,output?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct ThreadState {
    /// `done` or `error` (others kept verbatim).
    #[serde(default)]
    pub status: String,
    /// The child's final assembled message.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "serialize_output"
    )]
    #[cfg_attr(
        feature = "tsify",
        tsify(type = "{ type: \"model.message\" } & ModelMessage")
    )]
    pub output: Option<ModelMessage>,
    /// The failure, on `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub error: Option<Value>,
}

/// `thread.done`: a subagent thread finished. Does not end the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
}

/// One event of a turn stream or listing, by `type` (PROTOCOL §5).
///
/// Decoding never fails on an unknown `type`: such events become [`Event::Unknown`] with the
/// whole object kept. A known `type` with an invalid shape is a decode error; unknown fields of a
/// known type are ignored. [`Event::from_json`] reads the text with the hand-written decoder
/// (`wire::decode`), once when `type` is the object's first key (as the server writes it); the
/// serde `Deserialize` impl (any serde input, e.g. a `Value`) follows the same rules and is the
/// native tests' oracle.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(tag = "type"))]
#[cfg_attr(feature = "tsify", tsify(rename = "ProtocolEvent"))]
pub enum Event {
    /// `turn.created`
    #[cfg_attr(feature = "tsify", serde(rename = "turn.created"))]
    TurnCreated(TurnCreated),
    /// `turn.done`
    #[cfg_attr(feature = "tsify", serde(rename = "turn.done"))]
    TurnDone(TurnDone),
    /// `model.message` (live placeholder or merged message)
    #[cfg_attr(feature = "tsify", serde(rename = "model.message"))]
    ModelMessage(ModelMessage),
    /// `model.message.delta` (live only)
    #[cfg_attr(feature = "tsify", serde(rename = "model.message.delta"))]
    ModelMessageDelta(MessageDelta),
    /// `tool.response`
    #[cfg_attr(feature = "tsify", serde(rename = "tool.response"))]
    ToolResponse(ToolResponse),
    /// `tool.approval_required`
    #[cfg_attr(feature = "tsify", serde(rename = "tool.approval_required"))]
    ToolApprovalRequired(ToolCallsRequired),
    /// `tool.response_required`
    #[cfg_attr(feature = "tsify", serde(rename = "tool.response_required"))]
    ToolResponseRequired(ToolCallsRequired),
    /// `mcp.auth_required`
    #[cfg_attr(feature = "tsify", serde(rename = "mcp.auth_required"))]
    McpAuthRequired(McpAuthRequired),
    /// `mcp.initialize`
    #[cfg_attr(feature = "tsify", serde(rename = "mcp.initialize"))]
    McpInitialize(McpInitialize),
    /// `sandbox.created`
    #[cfg_attr(feature = "tsify", serde(rename = "sandbox.created"))]
    SandboxCreated(SandboxCreated),
    /// `thread.created`
    #[cfg_attr(feature = "tsify", serde(rename = "thread.created"))]
    ThreadCreated(ThreadCreated),
    /// `thread.done`
    #[cfg_attr(feature = "tsify", serde(rename = "thread.done"))]
    ThreadDone(ThreadDone),
    /// Any other `type` (or none), kept whole.
    #[cfg_attr(feature = "tsify", serde(skip))]
    Unknown {
        /// The `type` value (empty when missing or not a string).
        event_type: String,
        /// The whole event object.
        raw: Value,
    },
}

/// The TypeScript of [`Event::Unknown`], which tsify cannot derive (the variant is the raw
/// object, not a tagged struct): the derived `ProtocolEvent` holds the 12 known types.
#[cfg(feature = "tsify")]
#[wasm_bindgen::prelude::wasm_bindgen(typescript_custom_section)]
const UNKNOWN_EVENT_TS: &str = r#"
/**
 * An event whose `type` this SDK does not know (PROTOCOL §5: kept whole, as received). Its
 * `type` is a plain string, so a union holding it does not narrow on `type`: check
 * `isKnownEvent(event)` first.
 */
export interface UnknownEvent {
    type: string;
    [field: string]: unknown;
}
"#;

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
        union_from_value(raw)
    }

    /// Decodes one event from the JSON text of an SSE `data` field.
    ///
    /// Errors: [`JsonError`](super::json::JsonError) for text that is not JSON, not an object,
    /// or a known `type` with a bad shape (the message names the member and byte offset).
    pub fn from_json(data: &str) -> Result<Event, super::json::JsonError> {
        super::json::from_str(data)
    }
}

impl Union for Event {
    const TAG: &'static str = "type";
    const EXPECTING: &'static str = "an event object";

    const TAGS: &'static [&'static str] = &[
        "turn.created",
        "turn.done",
        "model.message",
        "model.message.delta",
        "tool.response",
        "tool.approval_required",
        "tool.response_required",
        "mcp.auth_required",
        "mcp.initialize",
        "sandbox.created",
        "thread.created",
        "thread.done",
    ];

    fn known<'de, A: MapAccess<'de>>(
        tag: &str,
        rest: MapAccessDeserializer<A>,
    ) -> Result<Self, A::Error> {
        Ok(match tag {
            "turn.created" => Event::TurnCreated(Deserialize::deserialize(rest)?),
            "turn.done" => Event::TurnDone(Deserialize::deserialize(rest)?),
            "model.message" => Event::ModelMessage(Deserialize::deserialize(rest)?),
            "model.message.delta" => Event::ModelMessageDelta(Deserialize::deserialize(rest)?),
            "tool.response" => Event::ToolResponse(Deserialize::deserialize(rest)?),
            "tool.approval_required" => {
                Event::ToolApprovalRequired(Deserialize::deserialize(rest)?)
            }
            "tool.response_required" => {
                Event::ToolResponseRequired(Deserialize::deserialize(rest)?)
            }
            "mcp.auth_required" => Event::McpAuthRequired(Deserialize::deserialize(rest)?),
            "mcp.initialize" => Event::McpInitialize(Deserialize::deserialize(rest)?),
            "sandbox.created" => Event::SandboxCreated(Deserialize::deserialize(rest)?),
            "thread.created" => Event::ThreadCreated(Deserialize::deserialize(rest)?),
            "thread.done" => Event::ThreadDone(Deserialize::deserialize(rest)?),
            // Only `TAGS` reach here; an unlisted tag is a programming error, reported as a
            // decode error rather than a panic.
            other => {
                return Err(A::Error::custom(format_args!(
                    "unhandled event type {other}"
                )))
            }
        })
    }

    fn unknown(event_type: String, raw: Value) -> Self {
        Event::Unknown { event_type, raw }
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_union(deserializer)
    }
}

/// The known variants as serde's internally tagged form (`type` written first).
#[derive(Serialize)]
#[serde(tag = "type")]
enum Tagged<'a> {
    #[serde(rename = "turn.created")]
    TurnCreated(&'a TurnCreated),
    #[serde(rename = "turn.done")]
    TurnDone(&'a TurnDone),
    #[serde(rename = "model.message")]
    ModelMessage(&'a ModelMessage),
    #[serde(rename = "model.message.delta")]
    ModelMessageDelta(&'a MessageDelta),
    #[serde(rename = "tool.response")]
    ToolResponse(&'a ToolResponse),
    #[serde(rename = "tool.approval_required")]
    ToolApprovalRequired(&'a ToolCallsRequired),
    #[serde(rename = "tool.response_required")]
    ToolResponseRequired(&'a ToolCallsRequired),
    #[serde(rename = "mcp.auth_required")]
    McpAuthRequired(&'a McpAuthRequired),
    #[serde(rename = "mcp.initialize")]
    McpInitialize(&'a McpInitialize),
    #[serde(rename = "sandbox.created")]
    SandboxCreated(&'a SandboxCreated),
    #[serde(rename = "thread.created")]
    ThreadCreated(&'a ThreadCreated),
    #[serde(rename = "thread.done")]
    ThreadDone(&'a ThreadDone),
}

/// A state's `output` is the merged `model.message` event: written with its `type`, as the
/// server does (decoding ignores it).
pub(crate) fn serialize_output<S: Serializer>(
    output: &Option<ModelMessage>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match output {
        Some(message) => Tagged::ModelMessage(message).serialize(serializer),
        None => serializer.serialize_none(),
    }
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tagged = match self {
            Event::TurnCreated(e) => Tagged::TurnCreated(e),
            Event::TurnDone(e) => Tagged::TurnDone(e),
            Event::ModelMessage(e) => Tagged::ModelMessage(e),
            Event::ModelMessageDelta(e) => Tagged::ModelMessageDelta(e),
            Event::ToolResponse(e) => Tagged::ToolResponse(e),
            Event::ToolApprovalRequired(e) => Tagged::ToolApprovalRequired(e),
            Event::ToolResponseRequired(e) => Tagged::ToolResponseRequired(e),
            Event::McpAuthRequired(e) => Tagged::McpAuthRequired(e),
            Event::McpInitialize(e) => Tagged::McpInitialize(e),
            Event::SandboxCreated(e) => Tagged::SandboxCreated(e),
            Event::ThreadCreated(e) => Tagged::ThreadCreated(e),
            Event::ThreadDone(e) => Tagged::ThreadDone(e),
            Event::Unknown { raw, .. } => return raw.serialize(serializer),
        };
        tagged.serialize(serializer)
    }
}
