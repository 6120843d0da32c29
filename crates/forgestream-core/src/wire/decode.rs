//! The hand-written decoders of the wire types over [`json::Reader`](super::json::Reader): one
//! function per type, the rules of the serde derives on the same types (which remain, for
//! encoding and as the native tests' oracle; nothing in the SDK decodes through them).
//!
//! - Structs: [`decode_struct!`] lists each member's key and whether it is `required` or has a
//!   `default` (missing → `Default`, or the given function); unknown keys are skipped.
//! - Tagged unions (`Event` by `type`, `TurnState` by `status`): see [`tag`]. A known tag with a
//!   bad shape is an error; an unknown, missing or non-string tag keeps the whole object.
//! - Lenient unions (content parts, tool info, input items): read as a JSON value and classified
//!   by their existing `from_value` (a known tag with a bad shape is kept raw, never fatal).

use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use super::json::{decode_struct, tag, Decode, JsonError, Reader, Tag};
use super::listing::{
    ErrorBody, ErrorDetail, Listing, Pagination, SessionEventItem, SessionEventsPage, Single,
};
use super::message::{
    Content, ContentPart, FinishReason, FunctionCall, FunctionDelta, InputTokensBreakdown,
    MessageDelta, ModelMessage, ToolCall, ToolCallDelta, ToolInfo, Usage,
};
use super::turn::{CancelReason, CancelledState, DoneState, ErrorState, Metrics, Turn, TurnState};
use super::{
    AgentInfo, Event, InputItem, McpAuthRequired, McpAuthServer, McpInitialize, McpServer,
    RequiredToolCall, SandboxCreated, ThreadCreated, ThreadDone, ThreadParent, ThreadState,
    ToolCallsRequired, ToolResponse, TurnCreated, TurnDone,
};

// Envelope members every event has: `id` (default ""), `created_at`, `thread_id`.

decode_struct!(TurnCreated, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    turn_id: "turn_id" => required,
    previous_turn_id: "previous_turn_id" => default,
    input: "input" => default,
    state: "state" => required,
    created_by: "created_by" => default,
});

decode_struct!(TurnDone, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    state: "state" => required,
});

decode_struct!(ToolResponse, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    tool_call_id: "tool_call_id" => required,
    content: "content" => default,
});

decode_struct!(RequiredToolCall, "a required tool call" {
    id: "id" => required,
    source_event_id: "source_event_id" => default,
});

decode_struct!(ToolCallsRequired, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    tool_calls: "tool_calls" => default,
});

decode_struct!(McpAuthServer, "an MCP server" {
    id: "id" => required,
    name: "name" => default,
    auth_url: "auth_url" => default,
});

decode_struct!(McpAuthRequired, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    mcp_servers: "mcp_servers" => default,
});

decode_struct!(McpServer, "an MCP server" {
    id: "id" => required,
    name: "name" => default,
    session_id: "session_id" => default,
    transport_type: "transport_type" => default,
});

decode_struct!(McpInitialize, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    mcp_servers: "mcp_servers" => default,
});

decode_struct!(SandboxCreated, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    sandbox_id: "sandbox_id" => default,
});

decode_struct!(ThreadParent, "a thread parent" {
    thread_id: "thread_id" => default,
    tool_call_id: "tool_call_id" => default,
});

decode_struct!(AgentInfo, "an agent info object" {
    agent_type: "type" => default,
    name: "name" => default,
    input: "input" => default,
    model: "model" => default,
});

decode_struct!(ThreadCreated, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    title: "title" => default,
    parent: "parent" => default,
    agent_info: "agent_info" => default,
});

decode_struct!(ThreadState, "a thread state" {
    status: "status" => default,
    output: "output" => default,
    error: "error" => default,
});

decode_struct!(ThreadDone, "an event object" {
    id: "id" => default,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    title: "title" => default,
    parent: "parent" => default,
    state: "state" => required,
});

decode_struct!(InputTokensBreakdown, "an input tokens breakdown" {
    harness: "harness" => default,
    skills: "skills" => default,
    instructions: "instructions" => default,
    tool_definitions: "tool_definitions" => default,
    messages: "messages" => default,
});

decode_struct!(Usage, "a usage object" {
    input_tokens: "input_tokens" => default,
    output_tokens: "output_tokens" => default,
    cache_read_tokens: "cache_read_tokens" => default,
    cache_write_tokens: "cache_write_tokens" => default,
    input_tokens_breakdown: "input_tokens_breakdown" => default,
});

decode_struct!(FunctionCall, "a function call" {
    name: "name" => default,
    arguments: "arguments" => default,
});

fn function_type() -> String {
    String::from("function")
}

decode_struct!(ToolCall, "a tool call" {
    id: "id" => required,
    call_type: "type" => (function_type),
    function: "function" => default,
    tool_info: "tool_info" => default,
    provider_specific_fields: "provider_specific_fields" => default,
});

decode_struct!(ModelMessage, "a model message" {
    id: "id" => required,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    content: "content" => default,
    name: "name" => default,
    refusal: "refusal" => default,
    reasoning_content: "reasoning_content" => default,
    tool_calls: "tool_calls" => default,
    finish_reason: "finish_reason" => default,
    usage: "usage" => default,
});

decode_struct!(FunctionDelta, "a function delta" {
    name: "name" => default,
    arguments: "arguments" => default,
});

decode_struct!(ToolCallDelta, "a tool call delta" {
    index: "index" => required,
    id: "id" => default,
    call_type: "type" => default,
    function: "function" => default,
    tool_info: "tool_info" => default,
    provider_specific_fields: "provider_specific_fields" => default,
});

decode_struct!(MessageDelta, "a message delta" {
    id: "id" => required,
    created_at: "created_at" => default,
    thread_id: "thread_id" => default,
    content: "content" => default,
    refusal: "refusal" => default,
    reasoning_content: "reasoning_content" => default,
    tool_calls: "tool_calls" => default,
    finish_reason: "finish_reason" => default,
    usage: "usage" => default,
});

decode_struct!(Metrics, "turn metrics" {
    total_input_tokens: "total_input_tokens" => default,
    total_output_tokens: "total_output_tokens" => default,
    total_tokens: "total_tokens" => default,
    total_cache_read_tokens: "total_cache_read_tokens" => default,
    total_cache_write_tokens: "total_cache_write_tokens" => default,
    total_reasoning_tokens: "total_reasoning_tokens" => default,
    total_cost_in_usd: "total_cost_in_usd" => default,
});

decode_struct!(DoneState, "a turn state object" {
    output: "output" => default,
    required_actions: "required_actions" => default,
    completed_at: "completed_at" => default,
    metrics: "metrics" => default,
});

decode_struct!(CancelledState, "a turn state object" {
    reason: "reason" => required,
    completed_at: "completed_at" => default,
    metrics: "metrics" => default,
});

decode_struct!(ErrorState, "a turn state object" {
    message: "message" => default,
    completed_at: "completed_at" => default,
    metrics: "metrics" => default,
});

decode_struct!(Turn, "a turn object" {
    id: "id" => required,
    session_id: "session_id" => default,
    previous_turn_id: "previous_turn_id" => default,
    input: "input" => default,
    state: "state" => required,
    created_at: "created_at" => default,
    created_by_subject: "created_by_subject" => default,
});

decode_struct!(Pagination, "a pagination object" {
    next_page_token: "next_page_token" => default,
    previous_page_token: "previous_page_token" => default,
    limit: "limit" => default,
});

decode_struct!(Listing<T>, "a list response" {
    data: "data" => required,
    pagination: "pagination" => default,
});

decode_struct!(Single<T>, "a single-object response" {
    data: "data" => required,
});

decode_struct!(SessionEventItem, "a session timeline item" {
    turn_id: "turn_id" => required,
    event: "event" => required,
});

decode_struct!(SessionEventsPage, "a session timeline page" {
    data: "data" => required,
    pagination: "pagination" => default,
    last_turn_id: "last_turn_id" => default,
});

decode_struct!(ErrorDetail, "an error object" {
    message: "message" => default,
    error_type: "type" => default,
    code: "code" => default,
    param: "param" => default,
});

decode_struct!(ErrorBody, "an error body" {
    error: "error" => required,
});

impl Decode for FinishReason {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        Ok(FinishReason::parse(&r.str()?))
    }
}

impl Decode for CancelReason {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        Ok(CancelReason::parse(&r.str()?))
    }
}

impl Decode for Content {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        if r.at_array() {
            return Vec::decode(r).map(Content::Parts);
        }
        if !r.at_string() {
            return Err(r.expected("content: a string or an array of parts"));
        }
        r.string().map(Content::Text)
    }
}

impl Decode for ContentPart {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        r.value().map(ContentPart::from_value)
    }
}

impl Decode for ToolInfo {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        // The two known kinds are read in place: every tool call of a listed message has one,
        // and going through a `Value` first was ~5% of decoding a long history (W2). Anything
        // else — another kind, a field that is not a string, bad JSON — is read again from the
        // start as a value and classified as before, so results and errors are unchanged.
        let start = r.mark();
        if let Ok(Some(info)) = known_tool_info(r) {
            return Ok(info);
        }
        r.rewind(start);
        r.value().map(ToolInfo::from_value)
    }
}

/// One member of a `tool_info` object as [`ToolInfo::from_value`] sees it.
enum InfoField<'a> {
    Missing,
    Text(alloc::borrow::Cow<'a, str>),
    NotText,
}

impl<'a> InfoField<'a> {
    /// The text, `""` when missing; `None` when not a string.
    fn text(self) -> Option<String> {
        match self {
            InfoField::Missing => Some(String::new()),
            InfoField::Text(text) => Some(text.into_owned()),
            InfoField::NotText => None,
        }
    }
}

/// A `truefoundry-system` or `mcp` tool info read in place; `None` for anything
/// [`ToolInfo::from_value`] would keep as `Unknown` (the caller reads it again as a value).
fn known_tool_info(r: &mut Reader<'_>) -> Result<Option<ToolInfo>, JsonError> {
    let mut seq = r.object("an object")?;
    let (mut info_type, mut name) = (InfoField::Missing, InfoField::Missing);
    let (mut server_id, mut server_name) = (InfoField::Missing, InfoField::Missing);
    while let Some(key) = r.next_key(&mut seq)? {
        let slot = match key.as_ref() {
            "type" => &mut info_type,
            "name" => &mut name,
            "server_id" => &mut server_id,
            "server_name" => &mut server_name,
            _ => {
                // Read as `value()` would, so what it refuses is refused here too.
                r.value()?;
                continue;
            }
        };
        // A repeated key: the last one counts, as in a JSON object read into a map.
        *slot = if r.at_string() {
            InfoField::Text(r.str()?)
        } else {
            r.value()?;
            InfoField::NotText
        };
    }
    let InfoField::Text(info_type) = info_type else {
        return Ok(None);
    };
    let take = |field: &mut InfoField<'_>| core::mem::replace(field, InfoField::Missing).text();
    Ok(ToolInfo::known(&info_type, |key| match key {
        "name" => take(&mut name),
        "server_id" => take(&mut server_id),
        "server_name" => take(&mut server_name),
        _ => None,
    }))
}

impl Decode for InputItem {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        r.value().map(InputItem::from_value)
    }
}

/// The unknown variant's `(tag, whole object)`: the tag is the object's (last) string value
/// of `key`, `""` when missing or not a string.
fn unknown(r: &mut Reader<'_>, key: &str) -> Result<(String, Value), JsonError> {
    let raw = r.value()?;
    let tag = raw.get(key).and_then(Value::as_str).unwrap_or_default();
    Ok((String::from(tag), raw))
}

impl Decode for Event {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        let Tag::Str(tag) = tag(r, "type", "an event object")? else {
            let (event_type, raw) = unknown(r, "type")?;
            return Ok(Event::Unknown { event_type, raw });
        };
        Ok(match tag.as_ref() {
            "turn.created" => Event::TurnCreated(Decode::decode(r)?),
            "turn.done" => Event::TurnDone(Decode::decode(r)?),
            "model.message" => Event::ModelMessage(Decode::decode(r)?),
            "model.message.delta" => Event::ModelMessageDelta(Decode::decode(r)?),
            "tool.response" => Event::ToolResponse(Decode::decode(r)?),
            "tool.approval_required" => Event::ToolApprovalRequired(Decode::decode(r)?),
            "tool.response_required" => Event::ToolResponseRequired(Decode::decode(r)?),
            "mcp.auth_required" => Event::McpAuthRequired(Decode::decode(r)?),
            "mcp.initialize" => Event::McpInitialize(Decode::decode(r)?),
            "sandbox.created" => Event::SandboxCreated(Decode::decode(r)?),
            "thread.created" => Event::ThreadCreated(Decode::decode(r)?),
            "thread.done" => Event::ThreadDone(Decode::decode(r)?),
            _ => {
                let (event_type, raw) = unknown(r, "type")?;
                Event::Unknown { event_type, raw }
            }
        })
    }
}

impl Decode for TurnState {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        let Tag::Str(status) = tag(r, "status", "a turn state object")? else {
            let (status, raw) = unknown(r, "status")?;
            return Ok(TurnState::Unknown { status, raw });
        };
        Ok(match status.as_ref() {
            "running" => {
                r.skip()?;
                TurnState::Running
            }
            "done" => TurnState::Done(Decode::decode(r)?),
            "cancelled" => TurnState::Cancelled(Decode::decode(r)?),
            "error" => TurnState::Error(Decode::decode(r)?),
            _ => {
                let (status, raw) = unknown(r, "status")?;
                TurnState::Unknown { status, raw }
            }
        })
    }
}
