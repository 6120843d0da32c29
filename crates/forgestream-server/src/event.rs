//! The events the emulator writes (PROTOCOL.md §5), one variant per event type with exactly
//! the fields that type carries. This is the emulator's own model, independent of
//! `forgestream-core`'s: the recordings, not shared code, are the oracle both are tested against.
//!
//! On the wire every event is one JSON object. Its keys come out in one fixed order — the
//! order the emulator has always written, checked byte for byte by `tests/conformance.rs` —
//! which `Layout` spells out; fields a type does not carry are left out, except `thread_id`,
//! which the real server always writes (`null` for run-level events), and `turn.created`'s
//! `previous_turn_id` (`null` for a root turn).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// One protocol event, live or persisted: the fields every event has, and its type's own.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// Event id, a lowercase ULID; shared by a `model.message` and its deltas.
    pub id: String,
    /// ISO-8601 time; on deltas only the first carries it.
    pub created_at: Option<String>,
    /// `"main"`, a subagent's UUID, or `None` (written `null`) for run-level events.
    pub thread_id: Option<String>,
    /// The type and its fields.
    pub body: EventBody,
}

/// The event types the emulator writes, with their fields (PROTOCOL.md §5).
#[derive(Clone, Debug, PartialEq)]
pub enum EventBody {
    /// `turn.created`: the first frame of every turn.
    TurnCreated {
        /// The turn.
        turn_id: String,
        /// The parent turn; `None` for a root turn (written `null`).
        previous_turn_id: Option<String>,
        /// Echo of the request's `input`, when it had one.
        input: Option<Value>,
        /// `{status:"running"}`.
        state: Value,
        /// Gateway only: the creating subject.
        created_by: Option<Value>,
    },
    /// `turn.done`: the terminal state (§6), the last frame of a stream.
    TurnDone {
        /// `{status:"done"|"cancelled"|"error", …}`.
        state: Value,
    },
    /// `model.message`: a live placeholder (no content), or the merged message of a listing.
    ModelMessage(Message),
    /// `model.message.delta`: a piece of the message with the same `id`.
    ModelMessageDelta(Message),
    /// `tool.response`: a tool's result.
    ToolResponse {
        /// The call it answers.
        tool_call_id: String,
        /// The result text (`""` for a subagent-spawning call).
        content: String,
    },
    /// `tool.approval_required`: calls waiting for the user's approval.
    ToolApprovalRequired {
        /// `[{id, source_event_id}]`.
        tool_calls: Value,
    },
    /// `tool.response_required`: client-side calls waiting for the user's answer.
    ToolResponseRequired {
        /// `[{id, source_event_id}]`.
        tool_calls: Value,
    },
    /// `thread.created`: a subagent thread starts.
    ThreadCreated {
        /// `{type:"dynamic", name, input}`.
        agent_info: Value,
        /// `{tool_call_id, thread_id}` of the spawning call.
        parent: Value,
        /// The subagent's title.
        title: String,
    },
    /// `thread.done`: a subagent thread ends.
    ThreadDone {
        /// `{tool_call_id, thread_id}` of the spawning call.
        parent: Value,
        /// The subagent's title.
        title: String,
        /// `{status:"done", output}`.
        state: Value,
    },
    /// `mcp.initialize`: the agent's MCP servers are connected.
    McpInitialize {
        /// `[{name, id, transport_type}]`.
        mcp_servers: Value,
    },
    /// `mcp.auth_required`: servers the user must authorize (`auth_url`); the turn pauses.
    McpAuthRequired {
        /// `[{id, name, auth_url}]`.
        mcp_servers: Value,
    },
}

/// The fields of `model.message` and `model.message.delta`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Message {
    /// Text: the whole message, or a delta's piece.
    pub content: Option<String>,
    /// Full calls on a merged message, indexed fragments on a delta.
    pub tool_calls: Option<Value>,
    /// `stop`, `tool_calls`, … (merged message and last delta).
    pub finish_reason: Option<String>,
    /// Token usage of the model call (merged message and last delta).
    pub usage: Option<Value>,
}

impl EventBody {
    /// The dotted event type, e.g. `turn.created`.
    pub fn event_type(&self) -> &'static str {
        match self {
            EventBody::TurnCreated { .. } => "turn.created",
            EventBody::TurnDone { .. } => "turn.done",
            EventBody::ModelMessage(_) => "model.message",
            EventBody::ModelMessageDelta(_) => "model.message.delta",
            EventBody::ToolResponse { .. } => "tool.response",
            EventBody::ToolApprovalRequired { .. } => "tool.approval_required",
            EventBody::ToolResponseRequired { .. } => "tool.response_required",
            EventBody::ThreadCreated { .. } => "thread.created",
            EventBody::ThreadDone { .. } => "thread.done",
            EventBody::McpInitialize { .. } => "mcp.initialize",
            EventBody::McpAuthRequired { .. } => "mcp.auth_required",
        }
    }
}

impl Event {
    /// An event with `id`, `created_at` and `thread_id`.
    pub fn new(
        id: String,
        created_at: Option<String>,
        thread: Option<&str>,
        body: EventBody,
    ) -> Self {
        Event {
            id,
            created_at,
            thread_id: thread.map(str::to_owned),
            body,
        }
    }

    /// A run-level `turn.done` with `state`.
    pub fn turn_done(id: String, created_at: String, state: Value) -> Self {
        Event::new(id, Some(created_at), None, EventBody::TurnDone { state })
    }

    /// The message fields of a `model.message` or its delta.
    pub fn message(&self) -> Option<&Message> {
        match &self.body {
            EventBody::ModelMessage(m) | EventBody::ModelMessageDelta(m) => Some(m),
            _ => None,
        }
    }

    /// The event as a JSON value (for embedding in states and listings).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The event as the JSON text of one SSE `data:` line.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    fn layout(&self) -> Layout<'_> {
        let mut layout = Layout {
            kind: self.body.event_type(),
            id: &self.id,
            created_at: self.created_at.as_deref(),
            thread_id: self.thread_id.as_deref(),
            ..Layout::default()
        };
        match &self.body {
            EventBody::TurnCreated {
                turn_id,
                previous_turn_id,
                input,
                state,
                created_by,
            } => {
                layout.turn_id = Some(turn_id);
                layout.previous_turn_id = Some(previous_turn_id.as_deref());
                layout.input = input.as_ref();
                layout.state = Some(state);
                layout.created_by = created_by.as_ref();
            }
            EventBody::TurnDone { state } => layout.state = Some(state),
            EventBody::ModelMessage(m) | EventBody::ModelMessageDelta(m) => {
                layout.content = m.content.as_deref();
                layout.tool_calls = m.tool_calls.as_ref();
                layout.finish_reason = m.finish_reason.as_deref();
                layout.usage = m.usage.as_ref();
            }
            EventBody::ToolResponse {
                tool_call_id,
                content,
            } => {
                layout.content = Some(content);
                layout.tool_call_id = Some(tool_call_id);
            }
            EventBody::ToolApprovalRequired { tool_calls }
            | EventBody::ToolResponseRequired { tool_calls } => {
                layout.tool_calls = Some(tool_calls)
            }
            EventBody::ThreadCreated {
                agent_info,
                parent,
                title,
            } => {
                layout.agent_info = Some(agent_info);
                layout.parent = Some(parent);
                layout.title = Some(title);
            }
            EventBody::ThreadDone {
                parent,
                title,
                state,
            } => {
                layout.parent = Some(parent);
                layout.title = Some(title);
                layout.state = Some(state);
            }
            EventBody::McpInitialize { mcp_servers }
            | EventBody::McpAuthRequired { mcp_servers } => layout.mcp_servers = Some(mcp_servers),
        }
        layout
    }
}

/// The key order of an event object on the wire (see the module docs); absent keys are left
/// out. Serialization only: reading goes through [`Stored`].
#[derive(Serialize, Default)]
struct Layout<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_calls: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
    #[serde(rename = "type")]
    kind: &'a str,
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    turn_id: Option<&'a str>,
    /// `Some(None)` writes `null`.
    #[serde(skip_serializing_if = "Option::is_none")]
    previous_turn_id: Option<Option<&'a str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    input: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_by: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    agent_info: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_at: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parent: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    thread_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    finish_reason: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mcp_servers: Option<&'a Value>,
}

impl Serialize for Event {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.layout().serialize(serializer)
    }
}

/// An event object as stored (read back for the `turn.done` a later writer must repeat).
#[derive(Deserialize)]
struct Stored {
    #[serde(rename = "type")]
    kind: String,
    id: String,
    created_at: Option<String>,
    thread_id: Option<String>,
    content: Option<String>,
    tool_calls: Option<Value>,
    tool_call_id: Option<String>,
    turn_id: Option<String>,
    previous_turn_id: Option<String>,
    input: Option<Value>,
    state: Option<Value>,
    created_by: Option<Value>,
    agent_info: Option<Value>,
    parent: Option<Value>,
    title: Option<String>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    mcp_servers: Option<Value>,
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let s = Stored::deserialize(deserializer)?;
        let missing = |field: &str| D::Error::custom(format!("{}: missing `{field}`", s.kind));
        let message = || Message {
            content: s.content.clone(),
            tool_calls: s.tool_calls.clone(),
            finish_reason: s.finish_reason.clone(),
            usage: s.usage.clone(),
        };
        let body = match s.kind.as_str() {
            "turn.created" => EventBody::TurnCreated {
                turn_id: s.turn_id.clone().ok_or_else(|| missing("turn_id"))?,
                previous_turn_id: s.previous_turn_id.clone(),
                input: s.input.clone(),
                state: s.state.clone().ok_or_else(|| missing("state"))?,
                created_by: s.created_by.clone(),
            },
            "turn.done" => EventBody::TurnDone {
                state: s.state.clone().ok_or_else(|| missing("state"))?,
            },
            "model.message" => EventBody::ModelMessage(message()),
            "model.message.delta" => EventBody::ModelMessageDelta(message()),
            "tool.response" => EventBody::ToolResponse {
                tool_call_id: s
                    .tool_call_id
                    .clone()
                    .ok_or_else(|| missing("tool_call_id"))?,
                content: s.content.clone().unwrap_or_default(),
            },
            "tool.approval_required" => EventBody::ToolApprovalRequired {
                tool_calls: s.tool_calls.clone().ok_or_else(|| missing("tool_calls"))?,
            },
            "tool.response_required" => EventBody::ToolResponseRequired {
                tool_calls: s.tool_calls.clone().ok_or_else(|| missing("tool_calls"))?,
            },
            "thread.created" => EventBody::ThreadCreated {
                agent_info: s.agent_info.clone().ok_or_else(|| missing("agent_info"))?,
                parent: s.parent.clone().ok_or_else(|| missing("parent"))?,
                title: s.title.clone().unwrap_or_default(),
            },
            "thread.done" => EventBody::ThreadDone {
                parent: s.parent.clone().ok_or_else(|| missing("parent"))?,
                title: s.title.clone().unwrap_or_default(),
                state: s.state.clone().ok_or_else(|| missing("state"))?,
            },
            "mcp.initialize" => EventBody::McpInitialize {
                mcp_servers: s
                    .mcp_servers
                    .clone()
                    .ok_or_else(|| missing("mcp_servers"))?,
            },
            "mcp.auth_required" => EventBody::McpAuthRequired {
                mcp_servers: s
                    .mcp_servers
                    .clone()
                    .ok_or_else(|| missing("mcp_servers"))?,
            },
            other => return Err(D::Error::custom(format!("unknown event type {other}"))),
        };
        Ok(Event {
            id: s.id,
            created_at: s.created_at,
            thread_id: s.thread_id,
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_come_out_in_the_wire_order() {
        let created = Event::new(
            "01j".into(),
            Some("2026-01-01T00:00:00Z".into()),
            None,
            EventBody::TurnCreated {
                turn_id: "t.local".into(),
                previous_turn_id: None,
                input: None,
                state: json!({"status": "running"}),
                created_by: None,
            },
        );
        assert_eq!(
            created.to_json(),
            r#"{"type":"turn.created","id":"01j","turn_id":"t.local","previous_turn_id":null,"state":{"status":"running"},"created_at":"2026-01-01T00:00:00Z","thread_id":null}"#
        );
        let delta = Event::new(
            "01k".into(),
            None,
            Some("main"),
            EventBody::ModelMessageDelta(Message {
                content: Some("hé".into()),
                ..Message::default()
            }),
        );
        assert_eq!(
            delta.to_json(),
            r#"{"content":"hé","type":"model.message.delta","id":"01k","thread_id":"main"}"#
        );
        let response = Event::new(
            "01m".into(),
            Some("t".into()),
            Some("main"),
            EventBody::ToolResponse {
                tool_call_id: "call_1".into(),
                content: String::new(),
            },
        );
        assert_eq!(
            response.to_json(),
            r#"{"content":"","tool_call_id":"call_1","type":"tool.response","id":"01m","created_at":"t","thread_id":"main"}"#
        );
    }

    #[test]
    fn stored_events_read_back_as_written() {
        let done = Event::turn_done(
            "01n".into(),
            "t".into(),
            json!({"status": "cancelled", "reason": "abandoned"}),
        );
        let back: Event = serde_json::from_str(&done.to_json()).unwrap();
        assert_eq!(back, done);
        assert_eq!(back.to_json(), done.to_json());
        assert!(serde_json::from_str::<Event>(r#"{"type":"turn.done","id":"x"}"#).is_err());
        assert!(serde_json::from_str::<Event>(r#"{"type":"nope","id":"x"}"#).is_err());
    }
}
