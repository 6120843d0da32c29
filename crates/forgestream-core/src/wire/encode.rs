//! The hand-written encoders of the wire types over [`write`](super::write): what the SDK writes
//! of them — turn input items in request bodies, and the events of `exportEvents()` — as the
//! serde derives on the same types write them (their attributes, restated here, are the rules;
//! `tests/encode_oracle.rs` holds the two to the same text).
//!
//! - Structs: [`encode_struct!`] lists the members in declaration order with their serde
//!   `skip_serializing_if` (`skip_none`).
//! - Tagged unions (`Event` by `type`, `TurnState` by `status`, parts, tool info, input items,
//!   the approval): the tag first, then the variant's members; a kept-raw unknown variant is
//!   written as the object it was received as.
//! - A state's `output` (`DoneState`, `ThreadState`) is the merged `model.message` event,
//!   written with its `type` as the server does.

use alloc::string::String;

use super::listing::SessionEventItem;
use super::message::{
    Content, ContentPart, FinishReason, FunctionCall, FunctionDelta, InputTokensBreakdown,
    MessageDelta, ModelMessage, ToolCall, ToolCallDelta, ToolInfo, Usage,
};
use super::turn::{CancelReason, CancelledState, DoneState, ErrorState, Metrics, TurnState};
use super::write::{encode_struct, Encode, EncodeFields, Object};
use super::{
    AgentInfo, Approval, Event, InputItem, InputPart, McpAuthRequired, McpAuthServer,
    McpInitialize, McpServer, RequiredToolCall, SandboxCreated, ThreadCreated, ThreadDone,
    ThreadParent, ThreadState, ToolCallsRequired, ToolResponse, TurnCreated, TurnDone, UserContent,
};

// Envelope members every event has: `id`, `created_at` (left out when absent), `thread_id`.

encode_struct!(TurnCreated {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    turn_id: "turn_id",
    previous_turn_id: "previous_turn_id",
    input: "input" => skip_none,
    state: "state",
    created_by: "created_by" => skip_none,
});

encode_struct!(TurnDone {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    state: "state",
});

encode_struct!(ToolResponse {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    tool_call_id: "tool_call_id",
    content: "content",
});

encode_struct!(RequiredToolCall {
    id: "id",
    source_event_id: "source_event_id" => skip_none,
});

encode_struct!(ToolCallsRequired {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    tool_calls: "tool_calls",
});

encode_struct!(McpAuthServer {
    id: "id",
    name: "name",
    auth_url: "auth_url",
});

encode_struct!(McpAuthRequired {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    mcp_servers: "mcp_servers",
});

encode_struct!(McpServer {
    id: "id",
    name: "name",
    session_id: "session_id" => skip_none,
    transport_type: "transport_type" => skip_none,
});

encode_struct!(McpInitialize {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    mcp_servers: "mcp_servers",
});

encode_struct!(SandboxCreated {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    sandbox_id: "sandbox_id",
});

encode_struct!(ThreadParent {
    thread_id: "thread_id",
    tool_call_id: "tool_call_id",
});

encode_struct!(AgentInfo {
    agent_type: "type",
    name: "name",
    input: "input",
    model: "model" => skip_none,
});

encode_struct!(ThreadCreated {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    title: "title" => skip_none,
    parent: "parent" => skip_none,
    agent_info: "agent_info" => skip_none,
});

impl Encode for ThreadState {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        o.member("status", &self.status);
        if let Some(output) = &self.output {
            o.member("output", &AsEvent(output));
        }
        o.member_some("error", &self.error);
        o.close();
    }
}

encode_struct!(ThreadDone {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    title: "title" => skip_none,
    parent: "parent" => skip_none,
    state: "state",
});

/// A merged message written as the `model.message` event it is (`type` first).
struct AsEvent<'a>(&'a ModelMessage);

impl Encode for AsEvent<'_> {
    fn encode(&self, out: &mut String) {
        tagged(out, "type", "model.message", self.0);
    }
}

/// `{"<key>":"<tag>", …fields}`: serde's internally tagged form.
fn tagged(out: &mut String, key: &str, tag: &str, fields: &dyn EncodeFields) {
    let mut o = Object::open(out);
    o.member(key, tag);
    fields.encode_fields(&mut o);
    o.close();
}

impl Encode for Event {
    fn encode(&self, out: &mut String) {
        let fields: &dyn EncodeFields = match self {
            Event::TurnCreated(e) => e,
            Event::TurnDone(e) => e,
            Event::ModelMessage(e) => e,
            Event::ModelMessageDelta(e) => e,
            Event::ToolResponse(e) => e,
            Event::ToolApprovalRequired(e) | Event::ToolResponseRequired(e) => e,
            Event::McpAuthRequired(e) => e,
            Event::McpInitialize(e) => e,
            Event::SandboxCreated(e) => e,
            Event::ThreadCreated(e) => e,
            Event::ThreadDone(e) => e,
            Event::Unknown { raw, .. } => return raw.encode(out),
        };
        tagged(out, "type", self.event_type(), fields);
    }
}

impl Encode for Content {
    fn encode(&self, out: &mut String) {
        match self {
            Content::Text(text) => text.encode(out),
            Content::Parts(parts) => parts.encode(out),
        }
    }
}

impl Encode for ContentPart {
    fn encode(&self, out: &mut String) {
        let (tag, key, text) = match self {
            ContentPart::Text { text } => ("text", "text", text),
            ContentPart::Refusal { refusal } => ("refusal", "refusal", refusal),
            ContentPart::Unknown { raw, .. } => return raw.encode(out),
        };
        let mut o = Object::open(out);
        o.member("type", tag);
        o.member(key, text);
        o.close();
    }
}

impl Encode for FinishReason {
    fn encode(&self, out: &mut String) {
        self.as_str().encode(out);
    }
}

encode_struct!(InputTokensBreakdown {
    harness: "harness",
    skills: "skills",
    instructions: "instructions",
    tool_definitions: "tool_definitions",
    messages: "messages",
});

encode_struct!(Usage {
    input_tokens: "input_tokens",
    output_tokens: "output_tokens",
    cache_read_tokens: "cache_read_tokens" => skip_none,
    cache_write_tokens: "cache_write_tokens" => skip_none,
    input_tokens_breakdown: "input_tokens_breakdown" => skip_none,
});

impl Encode for ToolInfo {
    fn encode(&self, out: &mut String) {
        if let ToolInfo::Unknown { raw, .. } = self {
            // Kept raw: written as received.
            return raw.encode(out);
        }
        let mut o = Object::open(out);
        match self {
            ToolInfo::System { name } => {
                o.member("type", "truefoundry-system");
                o.member("name", name);
            }
            ToolInfo::Mcp {
                server_id,
                server_name,
                name,
            } => {
                o.member("type", "mcp");
                o.member("server_id", server_id);
                o.member("server_name", server_name);
                o.member("name", name);
            }
            ToolInfo::Unknown { .. } => {}
        }
        o.close();
    }
}

encode_struct!(FunctionCall {
    name: "name",
    arguments: "arguments",
});

encode_struct!(ToolCall {
    id: "id",
    call_type: "type",
    function: "function",
    tool_info: "tool_info" => skip_none,
    provider_specific_fields: "provider_specific_fields" => skip_none,
});

encode_struct!(ModelMessage {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    content: "content" => skip_none,
    name: "name" => skip_none,
    refusal: "refusal" => skip_none,
    reasoning_content: "reasoning_content" => skip_none,
    tool_calls: "tool_calls" => skip_none,
    finish_reason: "finish_reason" => skip_none,
    usage: "usage" => skip_none,
});

encode_struct!(FunctionDelta {
    name: "name" => skip_none,
    arguments: "arguments" => skip_none,
});

encode_struct!(ToolCallDelta {
    index: "index",
    id: "id" => skip_none,
    call_type: "type" => skip_none,
    function: "function" => skip_none,
    tool_info: "tool_info" => skip_none,
    provider_specific_fields: "provider_specific_fields" => skip_none,
});

encode_struct!(MessageDelta {
    id: "id",
    created_at: "created_at" => skip_none,
    thread_id: "thread_id",
    content: "content" => skip_none,
    refusal: "refusal" => skip_none,
    reasoning_content: "reasoning_content" => skip_none,
    tool_calls: "tool_calls" => skip_none,
    finish_reason: "finish_reason" => skip_none,
    usage: "usage" => skip_none,
});

impl Encode for CancelReason {
    fn encode(&self, out: &mut String) {
        self.as_str().encode(out);
    }
}

encode_struct!(Metrics {
    total_input_tokens: "total_input_tokens",
    total_output_tokens: "total_output_tokens",
    total_tokens: "total_tokens",
    total_cache_read_tokens: "total_cache_read_tokens" => skip_none,
    total_cache_write_tokens: "total_cache_write_tokens" => skip_none,
    total_reasoning_tokens: "total_reasoning_tokens" => skip_none,
    total_cost_in_usd: "total_cost_in_usd" => skip_none,
});

impl EncodeFields for DoneState {
    fn encode_fields(&self, o: &mut Object<'_>) {
        // Never left out: `null` when there is no output.
        o.member("output", &self.output.as_ref().map(AsEvent));
        o.member("required_actions", &self.required_actions);
        o.member_some("completed_at", &self.completed_at);
        o.member_some("metrics", &self.metrics);
    }
}

encode_struct!(CancelledState {
    reason: "reason",
    completed_at: "completed_at" => skip_none,
    metrics: "metrics" => skip_none,
});

encode_struct!(ErrorState {
    message: "message",
    completed_at: "completed_at" => skip_none,
    metrics: "metrics" => skip_none,
});

/// No members: what `Running` writes after its tag.
struct NoFields;

impl EncodeFields for NoFields {
    fn encode_fields(&self, _: &mut Object<'_>) {}
}

impl Encode for TurnState {
    fn encode(&self, out: &mut String) {
        let (status, fields): (&str, &dyn EncodeFields) = match self {
            TurnState::Running => ("running", &NoFields),
            TurnState::Done(s) => ("done", s),
            TurnState::Cancelled(s) => ("cancelled", s),
            TurnState::Error(s) => ("error", s),
            TurnState::Unknown { raw, .. } => return raw.encode(out),
        };
        tagged(out, "status", status, fields);
    }
}

impl Encode for InputPart {
    fn encode(&self, out: &mut String) {
        if let InputPart::Unknown { raw, .. } = self {
            // Kept raw: written as received.
            return raw.encode(out);
        }
        let mut o = Object::open(out);
        match self {
            InputPart::Text { text } => {
                o.member("type", "text");
                o.member("text", text);
            }
            InputPart::File { name, data } => {
                o.member("type", "file");
                o.member("name", name);
                o.member("data", data);
            }
            InputPart::Unknown { .. } => {}
        }
        o.close();
    }
}

impl Encode for UserContent {
    fn encode(&self, out: &mut String) {
        match self {
            UserContent::Text(text) => text.encode(out),
            UserContent::Parts(parts) => parts.encode(out),
        }
    }
}

impl Encode for Approval {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        match self {
            Approval::Allow => o.member("status", "allow"),
            Approval::Deny { reason } => {
                o.member("status", "deny");
                o.member_some("reason", reason);
            }
        }
        o.close();
    }
}

impl Encode for InputItem {
    fn encode(&self, out: &mut String) {
        if let InputItem::Unknown { raw, .. } = self {
            // Kept raw: written as received.
            return raw.encode(out);
        }
        let mut o = Object::open(out);
        match self {
            InputItem::UserMessage { content } => {
                o.member("type", "user.message");
                o.member("content", content);
            }
            InputItem::ToolApproval {
                thread_id,
                tool_call_id,
                approval,
            } => {
                o.member("type", "user.tool_approval");
                o.member("thread_id", thread_id);
                o.member("tool_call_id", tool_call_id);
                o.member("approval", approval);
            }
            InputItem::ToolResponse {
                thread_id,
                tool_call_id,
                content,
            } => {
                o.member("type", "user.tool_response");
                o.member("thread_id", thread_id);
                o.member("tool_call_id", tool_call_id);
                o.member("content", content);
            }
            InputItem::Unknown { .. } => {}
        }
        o.close();
    }
}

encode_struct!(SessionEventItem {
    turn_id: "turn_id",
    event: "event",
});
