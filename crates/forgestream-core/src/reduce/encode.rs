//! The view types' JSON encoders (over [`wire::write`](crate::wire::write)): what crosses to
//! JS in a change set, the spelling of their serde derives (camelCase; the derives, kept for
//! tsify's TypeScript, are the oracle of `tests/encode_oracle.rs`). Members in declaration
//! order, `Option`s as `null` (no view member is skipped); tagged enums (`ItemBody`,
//! `ContentPartView`, `Warning`) write their tag first.

use alloc::string::String;

use super::change::Warning;
use super::message::MessageWithId;
use super::tool_call::ToolCallView;
use super::view::BodyWithKey;
use super::view::{
    BreakdownView, ContentPartView, ContentView, ItemBody, ItemView, McpAuthServerView,
    McpServerView, PendingAction, PendingKind, QuestionView, RequiredCallView, ThreadStatus,
    ThreadView, ToolInfoView, ToolResultView, TurnStatus, UsageView,
};
use crate::wire::write::{encode_str_enum, encode_struct, Encode, EncodeFields, Object};

encode_struct!(UsageView {
    input_tokens: "inputTokens",
    output_tokens: "outputTokens",
    total_tokens: "totalTokens",
    cache_read_tokens: "cacheReadTokens",
    cache_write_tokens: "cacheWriteTokens",
    reasoning_tokens: "reasoningTokens",
    cost_usd: "costUsd",
    breakdown: "breakdown",
});

encode_struct!(BreakdownView {
    harness: "harness",
    skills: "skills",
    instructions: "instructions",
    tool_definitions: "toolDefinitions",
    messages: "messages",
});

encode_str_enum!(TurnStatus {
    Running => "running",
    Paused => "paused",
    Done => "done",
    Cancelled => "cancelled",
    Error => "error",
});

encode_struct!(ToolInfoView {
    kind: "kind",
    name: "name",
    server_id: "serverId",
    server_name: "serverName",
});

// By hand: the rare fields are read through accessors (`ToolCallView`'s box).
impl Encode for ToolCallView {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        o.member("index", &self.index);
        o.member("toolCallId", &self.tool_call_id);
        o.member("name", &self.name);
        o.member("argumentsText", &self.arguments_text);
        o.member("arguments", &self.arguments);
        o.member("argumentsError", &self.arguments_error());
        o.member("toolInfo", &self.tool_info);
        o.member("resultEventId", &self.result_event_id);
        o.member("resultTurnId", &self.result_turn_id);
        o.member("spawnedThreadIds", self.spawned_thread_ids());
        o.member("uncertain", &self.uncertain());
        o.close();
    }
}

impl Encode for ContentPartView {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        match self {
            ContentPartView::Text { text } => {
                o.member("type", "text");
                o.member("text", text);
            }
            ContentPartView::Refusal { refusal } => {
                o.member("type", "refusal");
                o.member("refusal", refusal);
            }
            ContentPartView::Other { raw } => {
                o.member("type", "other");
                o.member("raw", raw);
            }
        }
        o.close();
    }
}

impl Encode for ContentView {
    fn encode(&self, out: &mut String) {
        match self {
            ContentView::Text(text) => text.encode(out),
            ContentView::Parts(parts) => parts.encode(out),
        }
    }
}

// By hand: the optional parts are read through accessors (`MessageView`'s boxes), and the id
// is the item's key.
impl EncodeFields for MessageWithId<'_> {
    fn encode_fields(&self, o: &mut Object<'_>) {
        let (m, id) = (self.message, self.id);
        o.member("id", id);
        o.member("name", &m.name());
        o.member("content", &m.content);
        o.member("reasoning", &m.reasoning());
        o.member("refusal", &m.refusal());
        o.member("toolCalls", m.tool_calls());
        o.member("finishReason", &m.finish_reason());
        o.member("usage", &m.usage());
        o.member("complete", &m.complete);
        o.member("interrupted", &m.interrupted);
    }
}

impl Encode for MessageWithId<'_> {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        self.encode_fields(&mut o);
        o.close();
    }
}

encode_struct!(ToolResultView {
    tool_call_id: "toolCallId",
    content: "content",
    call_message_id: "callMessageId",
    call_turn_id: "callTurnId",
});

encode_str_enum!(PendingKind {
    ToolApproval => "toolApproval",
    ToolResponse => "toolResponse",
    McpAuth => "mcpAuth",
});

encode_struct!(RequiredCallView {
    tool_call_id: "toolCallId",
    source_event_id: "sourceEventId",
});

encode_struct!(McpAuthServerView {
    id: "id",
    name: "name",
    auth_url: "authUrl",
});

encode_struct!(McpServerView {
    id: "id",
    name: "name",
    transport_type: "transportType",
});

impl Encode for BodyWithKey<'_> {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        match self.body {
            ItemBody::Message(m) => {
                o.member("kind", "message");
                m.with_id(self.key).encode_fields(&mut o);
            }
            ItemBody::ToolResult(r) => {
                o.member("kind", "toolResult");
                r.encode_fields(&mut o);
            }
            ItemBody::ActionRequired { action, tool_calls } => {
                o.member("kind", "actionRequired");
                o.member("action", action);
                o.member("toolCalls", tool_calls);
            }
            ItemBody::McpAuthRequired { servers } => {
                o.member("kind", "mcpAuthRequired");
                o.member("servers", servers);
            }
            ItemBody::McpInitialize { servers } => {
                o.member("kind", "mcpInitialize");
                o.member("servers", servers);
            }
            ItemBody::SandboxCreated { sandbox_id } => {
                o.member("kind", "sandboxCreated");
                o.member("sandboxId", sandbox_id);
            }
            ItemBody::ThreadCreated {
                title,
                parent_thread_id,
                parent_tool_call_id,
                agent_name,
            } => {
                o.member("kind", "threadCreated");
                o.member("title", title);
                o.member("parentThreadId", parent_thread_id);
                o.member("parentToolCallId", parent_tool_call_id);
                o.member("agentName", agent_name);
            }
            ItemBody::ThreadDone {
                title,
                status,
                error,
                output_message_id,
            } => {
                o.member("kind", "threadDone");
                o.member("title", title);
                o.member("status", status);
                o.member("error", error);
                o.member("outputMessageId", output_message_id);
            }
            ItemBody::Unknown { event_type, raw } => {
                o.member("kind", "unknown");
                o.member("eventType", event_type);
                o.member("raw", raw);
            }
        }
        o.close();
    }
}

// By hand: the body is written with the key (a message's `id`).
impl Encode for ItemView {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        o.member("key", &self.key);
        o.member("turnId", &self.turn_id);
        o.member("threadId", &self.thread_id);
        o.member("version", &self.version);
        o.member("createdAt", &self.created_at);
        o.member("body", &self.body_with_key());
        o.close();
    }
}

encode_str_enum!(ThreadStatus {
    Running => "running",
    Done => "done",
    Error => "error",
    Interrupted => "interrupted",
});

encode_struct!(ThreadView {
    thread_id: "threadId",
    title: "title",
    agent_name: "agentName",
    parent_thread_id: "parentThreadId",
    parent_tool_call_id: "parentToolCallId",
    status: "status",
    placeholder: "placeholder",
    turn_id: "turnId",
    output_message_id: "outputMessageId",
    usage: "usage",
    version: "version",
});

encode_struct!(PendingAction {
    key: "key",
    kind: "kind",
    turn_id: "turnId",
    required_event_id: "requiredEventId",
    thread_id: "threadId",
    tool_call_id: "toolCallId",
    source_event_id: "sourceEventId",
    tool_name: "toolName",
    arguments_text: "argumentsText",
    arguments: "arguments",
    tool_info: "toolInfo",
    question: "question",
    mcp_server: "mcpServer",
});

encode_struct!(QuestionView {
    question: "question",
    options: "options",
});

impl Encode for Warning {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        match self {
            Warning::OrphanDeltasDropped {
                turn_id,
                message_id,
                count,
            } => {
                o.member("kind", "orphanDeltasDropped");
                o.member("turnId", turn_id);
                o.member("messageId", message_id);
                o.member("count", count);
            }
            Warning::EventAfterTurnDone {
                turn_id,
                event_type,
            } => {
                o.member("kind", "eventAfterTurnDone");
                o.member("turnId", turn_id);
                o.member("eventType", event_type);
            }
            Warning::SequenceGap {
                turn_id,
                expected,
                received,
            } => {
                o.member("kind", "sequenceGap");
                o.member("turnId", turn_id);
                o.member("expected", expected);
                o.member("received", received);
            }
            Warning::UnfinishedMessageInterrupted {
                turn_id,
                message_id,
            } => {
                o.member("kind", "unfinishedMessageInterrupted");
                o.member("turnId", turn_id);
                o.member("messageId", message_id);
            }
            Warning::UnfinishedMessageDiscarded {
                turn_id,
                message_id,
            } => {
                o.member("kind", "unfinishedMessageDiscarded");
                o.member("turnId", turn_id);
                o.member("messageId", message_id);
            }
            Warning::ArgumentsUnparsed {
                turn_id,
                message_id,
                tool_call_id,
            } => {
                o.member("kind", "argumentsUnparsed");
                o.member("turnId", turn_id);
                o.member("messageId", message_id);
                o.member("toolCallId", tool_call_id);
            }
            Warning::EventSkipped { turn_id, reason } => {
                o.member("kind", "eventSkipped");
                o.member("turnId", turn_id);
                o.member("reason", reason);
            }
        }
        o.close();
    }
}
