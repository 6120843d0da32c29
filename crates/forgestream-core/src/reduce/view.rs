//! The view types the reducer maintains. All serialise camelCase (the TS surface); each item is
//! serialisable on its own so the web layer can ship only changed items.

use alloc::boxed::Box;
use alloc::string::String;
#[cfg(feature = "tsify")]
use alloc::sync::Arc;
use alloc::vec::Vec;
use serde::{Serialize, Serializer};
use serde_json::Value;

#[cfg(feature = "tsify")]
use super::arguments_text::ArgumentsText;
#[cfg(feature = "tsify")]
use super::packed_usage::PackedUsage;
use super::text_buf::TextBuf;
use super::timestamp::Timestamp;
use crate::id::Id;
use crate::wire::{self, JsonText};

/// Token usage (tokens) and cost (USD) of a message, turn, thread or session.
///
/// For a turn, the totals come from the terminal state's `metrics` when present, else from the
/// sum of its messages' usage; `breakdown` always sums the messages' `input_tokens_breakdown`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct UsageView {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input + output (metrics' `total_tokens` when given).
    pub total_tokens: u64,
    /// Cached input tokens read.
    pub cache_read_tokens: u64,
    /// Cached input tokens written.
    pub cache_write_tokens: u64,
    /// Reasoning tokens (metrics only).
    pub reasoning_tokens: u64,
    /// Cost in USD, when the server reported one.
    pub cost_usd: Option<f64>,
    /// Where input tokens went.
    pub breakdown: BreakdownView,
}

/// `input_tokens_breakdown`, summed (tokens).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct BreakdownView {
    /// Harness prompt.
    pub harness: u64,
    /// Skills.
    pub skills: u64,
    /// Instructions.
    pub instructions: u64,
    /// Tool definitions.
    pub tool_definitions: u64,
    /// Conversation messages.
    pub messages: u64,
}

impl BreakdownView {
    /// The parts added up (tokens; saturating): what they claim of the input total.
    pub fn total(&self) -> u64 {
        [
            self.harness,
            self.skills,
            self.instructions,
            self.tool_definitions,
            self.messages,
        ]
        .iter()
        .fold(0u64, |n, x| n.saturating_add(*x))
    }
}

impl UsageView {
    /// A message's usage as a view: what [`PackedUsage::get`] must read back (its test).
    #[cfg(test)]
    pub(crate) fn from_message(usage: &wire::Usage) -> Self {
        let b = usage.input_tokens_breakdown.clone().unwrap_or_default();
        UsageView {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            total_tokens: usage.input_tokens.saturating_add(usage.output_tokens),
            cache_read_tokens: usage.cache_read_tokens.unwrap_or(0),
            cache_write_tokens: usage.cache_write_tokens.unwrap_or(0),
            reasoning_tokens: 0,
            cost_usd: None,
            breakdown: BreakdownView {
                harness: b.harness,
                skills: b.skills,
                instructions: b.instructions,
                tool_definitions: b.tool_definitions,
                messages: b.messages,
            },
        }
    }

    pub(crate) fn sub(&mut self, other: &UsageView) {
        self.input_tokens = self.input_tokens.saturating_sub(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_sub(other.output_tokens);
        self.total_tokens = self.total_tokens.saturating_sub(other.total_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_sub(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_sub(other.cache_write_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_sub(other.reasoning_tokens);
        let (s, o) = (&mut self.breakdown, &other.breakdown);
        s.harness = s.harness.saturating_sub(o.harness);
        s.skills = s.skills.saturating_sub(o.skills);
        s.instructions = s.instructions.saturating_sub(o.instructions);
        s.tool_definitions = s.tool_definitions.saturating_sub(o.tool_definitions);
        s.messages = s.messages.saturating_sub(o.messages);
    }

    pub(crate) fn add(&mut self, other: &UsageView) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(other.cache_write_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        let (s, o) = (&mut self.breakdown, &other.breakdown);
        s.harness = s.harness.saturating_add(o.harness);
        s.skills = s.skills.saturating_add(o.skills);
        s.instructions = s.instructions.saturating_add(o.instructions);
        s.tool_definitions = s.tool_definitions.saturating_add(o.tool_definitions);
        s.messages = s.messages.saturating_add(o.messages);
    }
}

/// A turn's status as a UI needs it. `paused` = `done` with a non-empty pending set
/// (PROTOCOL §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    /// Streaming, or not yet known to be finished.
    Running,
    /// Done, waiting for required actions.
    Paused,
    /// Done.
    Done,
    /// Cancelled (see `cancel_reason`).
    Cancelled,
    /// Failed (see `error_message`).
    Error,
}

/// `tool_info` in view form: `kind` is `truefoundry-system`, `mcp`, or the unknown type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct ToolInfoView {
    /// The wire `type`.
    pub kind: String,
    /// Tool name, when given.
    pub name: Option<String>,
    /// MCP server id.
    pub server_id: Option<String>,
    /// MCP server name.
    pub server_name: Option<String>,
}

impl ToolInfoView {
    pub(crate) fn from_wire(info: &wire::ToolInfo) -> Self {
        match info {
            wire::ToolInfo::System { name } => ToolInfoView {
                kind: String::from("truefoundry-system"),
                name: Some(name.clone()),
                server_id: None,
                server_name: None,
            },
            wire::ToolInfo::Mcp {
                server_id,
                server_name,
                name,
            } => ToolInfoView {
                kind: String::from("mcp"),
                name: Some(name.clone()),
                server_id: Some(server_id.clone()),
                server_name: Some(server_name.clone()),
            },
            wire::ToolInfo::Unknown { info_type, raw } => ToolInfoView {
                kind: info_type.clone(),
                name: raw.get("name").and_then(Value::as_str).map(String::from),
                server_id: None,
                server_name: None,
            },
        }
    }
}

// The TypeScript declaration of [`super::tool_call::ToolCallView`]: what it serialises as (its
// rare fields live in a box there). Never built; here for the reason `MessageView`'s is.
/// One tool call of a message, assembled from deltas or taken from a merged message.
#[cfg(feature = "tsify")]
#[allow(dead_code)]
#[derive(Serialize, tsify::Tsify)]
#[tsify(missing_as_null)]
#[serde(rename_all = "camelCase")]
struct ToolCallView {
    /// Position in the message (`index` of the deltas).
    index: u32,
    /// `tool_call_id` (empty until a fragment names it).
    #[tsify(type = "string")]
    tool_call_id: Id,
    /// Tool name.
    #[tsify(type = "string")]
    name: Id,
    /// Raw arguments text, exactly as concatenated.
    #[tsify(type = "string")]
    arguments_text: ArgumentsText,
    /// The arguments once the text is complete JSON (`None` while incomplete, never `{}`):
    /// checked JSON text, which crosses to JS as the parsed value ([`JsonText::to_value`]).
    #[tsify(type = "unknown")]
    arguments: Option<JsonText>,
    /// Set when the message finished and the text is not valid JSON.
    #[tsify(type = "string | null")]
    arguments_error: Option<TextBuf>,
    /// Which tool family.
    #[tsify(type = "ToolInfoView | null")]
    tool_info: Option<Arc<ToolInfoView>>,
    /// The `tool.response` bound by `tool_call_id` (its event id), if seen.
    #[tsify(type = "string | null")]
    result_event_id: Option<Id>,
    /// The turn holding that result (a denial's result arrives on the next turn).
    #[tsify(type = "string | null")]
    result_turn_id: Option<Id>,
    /// Subagent threads spawned by this call (`thread.created.parent.tool_call_id`).
    #[tsify(type = "string[]")]
    spawned_thread_ids: Box<[String]>,
    /// The turn ended in error/cancelled with this call neither answered nor pending: its
    /// effect is unknown (PROTOCOL §8, problem 3).
    uncertain: bool,
}

/// One part of an assembled array content.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentPartView {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// Refusal.
    Refusal {
        /// The refusal text.
        refusal: String,
    },
    /// A part kind this SDK does not know.
    Other {
        /// The raw part.
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        raw: Value,
    },
}

/// Assembled message content: a string or parts, as the wire had it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(untagged)]
pub enum ContentView {
    /// Plain text.
    Text(String),
    // Boxed slice: `Option<ContentView>` is then 24 bytes, not 32 (parts are rare).
    /// Parts.
    Parts(#[cfg_attr(feature = "tsify", tsify(type = "ContentPartView[]"))] Box<[ContentPartView]>),
}

impl ContentView {
    /// The text of the content (text parts joined).
    pub fn text(&self) -> String {
        match self {
            ContentView::Text(text) => text.clone(),
            ContentView::Parts(parts) => {
                let mut out = String::new();
                for part in parts {
                    if let ContentPartView::Text { text } = part {
                        out.push_str(text);
                    }
                }
                out
            }
        }
    }
}

// The TypeScript declaration of [`super::message::MessageView`]: what it serialises as (tsify
// reads a struct's fields, and the message's own layout differs, see there). Never built.
// Here, among the view types in use, not in a module of its own: a declaration is compiled
// into the wasm only along with code that is linked (one alone in a module was left out).
/// A model message: the live placeholder filled by deltas, or the merged message.
#[cfg(feature = "tsify")]
#[allow(dead_code)]
#[derive(Serialize, tsify::Tsify)]
#[tsify(missing_as_null)]
#[serde(rename_all = "camelCase")]
struct MessageView {
    /// Event id (shared with its deltas).
    #[tsify(type = "string")]
    id: Id,
    /// Optional author name.
    #[tsify(type = "string | null")]
    name: Option<Id>,
    /// Content; `None` while nothing arrived (empty text is normalised to `None`).
    content: Option<ContentView>,
    /// Reasoning text.
    #[tsify(type = "string | null")]
    reasoning: Option<TextBuf>,
    /// Refusal text.
    #[tsify(type = "string | null")]
    refusal: Option<TextBuf>,
    /// Tool calls in index order.
    #[tsify(type = "ToolCallView[]")]
    tool_calls: Box<[ToolCallView]>,
    /// Why generation stopped (wire spelling).
    #[tsify(type = "string | null")]
    finish_reason: Option<Id>,
    /// This model call's usage.
    #[tsify(type = "UsageView | null")]
    usage: Option<PackedUsage>,
    /// Finished: a `finish_reason` arrived or the merged message was applied.
    complete: bool,
    /// Still streaming when its turn was cancelled (stop, interrupt by a newer turn) or failed:
    /// the text that arrived is kept so the app can show it as stopped, its calls never ran
    /// (no results, not uncertain) and its usage is not counted. Only the live view has it —
    /// the server's history drops unfinished messages (PROTOCOL §9), so after a reload (or a
    /// rebuild from listings) the message is gone; the [summary](super::SessionView::summary)
    /// leaves it out for the same reason.
    interrupted: bool,
}

/// A `tool.response`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct ToolResultView {
    /// The call it answers.
    #[cfg_attr(feature = "tsify", tsify(type = "string"))]
    pub tool_call_id: Id,
    // Set once: a `Box<str>` (16 bytes inline, not a `String`'s 24), so that a tool result is
    // no larger than a message and the item record needs no room beside them for its tag.
    /// Result text (JSON text for structured results; non-string content is JSON-encoded).
    #[cfg_attr(feature = "tsify", tsify(type = "string"))]
    pub content: Box<str>,
    /// The proposing message, once the call is known (`None` = unmatched so far).
    #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
    pub call_message_id: Option<Id>,
    /// The turn holding that message.
    #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
    pub call_turn_id: Option<Id>,
}

/// Which kind of input a `*_required` event or pending action asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum PendingKind {
    /// `tool.approval_required`: allow or deny.
    ToolApproval,
    /// `tool.response_required`: a client tool's result (e.g. `ask_user_question`).
    ToolResponse,
    /// `mcp.auth_required`: open `auth_url`, then continue with empty input.
    McpAuth,
}

/// A `{tool_call_id, source_event_id}` reference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct RequiredCallView {
    /// The waiting call.
    pub tool_call_id: String,
    /// The proposing message.
    pub source_event_id: Option<String>,
}

/// An MCP server needing authorisation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct McpAuthServerView {
    /// Server id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Where to authorise.
    pub auth_url: String,
}

/// An MCP server connected by `mcp.initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct McpServerView {
    /// Server id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Transport, e.g. `streamable-http`.
    pub transport_type: Option<String>,
}

/// What an item is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum ItemBody {
    // Its `id` is the item's key: it serialises within its item (`ItemView`'s serialisers),
    // and this enum alone refuses to serialise it rather than leave the id out.
    /// A model message.
    #[serde(serialize_with = "message_alone")]
    Message(super::message::MessageView),
    /// A tool result.
    ToolResult(ToolResultView),
    /// `tool.approval_required` / `tool.response_required`.
    #[serde(rename_all = "camelCase")]
    ActionRequired {
        /// Approval or response.
        action: PendingKind,
        /// The waiting calls.
        tool_calls: Vec<RequiredCallView>,
    },
    /// `mcp.auth_required`.
    #[serde(rename_all = "camelCase")]
    McpAuthRequired {
        /// Servers to authorise.
        servers: Vec<McpAuthServerView>,
    },
    /// `mcp.initialize`.
    #[serde(rename_all = "camelCase")]
    McpInitialize {
        /// Connected servers.
        servers: Vec<McpServerView>,
    },
    /// `sandbox.created`.
    #[serde(rename_all = "camelCase")]
    SandboxCreated {
        /// The sandbox.
        sandbox_id: String,
    },
    // The rare variants' texts are one pointer each (`TextBuf`) and their JSON values boxed:
    // the largest variant sets the size of every item record (a message's is 56 bytes).
    /// `thread.created` (the item's `thread_id` is the new thread).
    #[serde(rename_all = "camelCase")]
    ThreadCreated {
        /// Title.
        #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
        title: Option<TextBuf>,
        /// Parent thread.
        #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
        parent_thread_id: Option<TextBuf>,
        /// Spawning call.
        #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
        parent_tool_call_id: Option<TextBuf>,
        /// Subagent name.
        #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
        agent_name: Option<TextBuf>,
    },
    /// `thread.done`.
    #[serde(rename_all = "camelCase")]
    ThreadDone {
        /// Title.
        #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
        title: Option<TextBuf>,
        /// `done` / `error` / other.
        #[cfg_attr(feature = "tsify", tsify(type = "string"))]
        status: TextBuf,
        /// The failure, on error.
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        error: Option<Box<Value>>,
        /// The child's final message id.
        #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
        output_message_id: Option<TextBuf>,
    },
    /// An event type this SDK does not know, surfaced as is.
    #[serde(rename_all = "camelCase")]
    Unknown {
        /// Its `type`.
        event_type: String,
        /// The whole event.
        #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
        raw: Box<Value>,
    },
}

/// [`ItemBody::Message`] serialised without its item: an error (its `id` is the item's key).
fn message_alone<S: Serializer>(_: &super::message::MessageView, _: S) -> Result<S::Ok, S::Error> {
    Err(serde::ser::Error::custom(
        "a message serialises within its item (ItemView) or with MessageView::with_id",
    ))
}

// Serialises by hand (the members below, in order) so that a message body is written with its
// `id`, the item's key (`BodyWithKey`).
/// One entry of a turn's timeline, keyed by event id.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(rename_all = "camelCase"))]
pub struct ItemView {
    // The same `Id` as the turn's map key (and a message's `id`, which is not held apart).
    /// The event id (a synthetic key for events without one).
    #[cfg_attr(feature = "tsify", tsify(type = "string"))]
    pub key: Id,
    // The turn's own `Id`, shared.
    /// Owner turn.
    #[cfg_attr(feature = "tsify", tsify(type = "string"))]
    pub turn_id: Id,
    /// Owner thread (`main`, a subagent UUID, or null for run-level notices).
    #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
    pub thread_id: Option<Id>,
    /// Bumped on every change; a UI re-renders an item when its version moves.
    pub version: u64,
    /// ISO-8601 of the first record seen (live and listings may differ; not compared).
    #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
    pub created_at: Option<Timestamp>,
    /// What the item is.
    pub body: ItemBody,
}

impl Serialize for ItemView {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("ItemView", 6)?;
        s.serialize_field("key", &self.key)?;
        s.serialize_field("turnId", &self.turn_id)?;
        s.serialize_field("threadId", &self.thread_id)?;
        s.serialize_field("version", &self.version)?;
        s.serialize_field("createdAt", &self.created_at)?;
        s.serialize_field("body", &self.body_with_key())?;
        s.end()
    }
}

impl ItemView {
    /// The body with the item's key, as it serialises (a message's `id` is the key).
    pub(crate) fn body_with_key(&self) -> BodyWithKey<'_> {
        BodyWithKey {
            body: &self.body,
            key: &self.key,
        }
    }
}

/// An item's body with its key: what `ItemView`'s serialisers write as `body`.
pub(crate) struct BodyWithKey<'a> {
    pub(crate) body: &'a ItemBody,
    pub(crate) key: &'a Id,
}

impl Serialize for BodyWithKey<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.body {
            // Internally tagged, as the derive writes the other kinds: the tag, then the members.
            ItemBody::Message(m) => m.with_id(self.key).serialize_tagged(serializer),
            other => other.serialize(serializer),
        }
    }
}

/// Where a thread stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum ThreadStatus {
    /// Running (or not known to be finished).
    Running,
    /// `thread.done` with `done`.
    Done,
    /// `thread.done` with `error` (or another status).
    Error,
    /// Its turn was cancelled or failed before the thread's `thread.done` came: it stopped
    /// where it was (its unfinished text is `interrupted`, its calls uncertain) and will not go
    /// on — a thread outlives its turn only across a pause (PROTOCOL §7). A `thread.done` that
    /// comes after all the same (a late event) still sets `done` or `error`.
    Interrupted,
}

/// A subagent thread. Bound to its parent only by `parent.tool_call_id`; a thread seen only
/// through its events (its `thread.created` was missed) is a `placeholder` with no parent, and
/// is never merged into the root.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct ThreadView {
    /// The thread's UUID.
    pub thread_id: String,
    /// Title.
    pub title: Option<String>,
    /// Subagent name.
    pub agent_name: Option<String>,
    /// Parent thread (`main` or another subagent).
    pub parent_thread_id: Option<String>,
    /// Spawning call.
    pub parent_tool_call_id: Option<String>,
    /// Status.
    pub status: ThreadStatus,
    /// No `thread.created` seen yet.
    pub placeholder: bool,
    /// Turn where the thread was first seen.
    pub turn_id: String,
    /// The final message (from `thread.done.state.output`).
    pub output_message_id: Option<String>,
    /// Sum of its messages' usage.
    pub usage: UsageView,
    /// Bumped on every change.
    pub version: u64,
}

/// A pending action: everything a UI needs to render its card (PROTOCOL §7, §8 problem 2).
///
/// Tool actions are keyed by (`thread_id`, `tool_call_id`), MCP auth per server id. Only the
/// newest turn's actions are pending; older ones are stale.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct PendingAction {
    /// `tool:<thread_id>:<tool_call_id>` or `mcp:<server_id>`.
    pub key: String,
    /// What is asked.
    pub kind: PendingKind,
    /// The turn that paused.
    pub turn_id: String,
    /// The `*_required` event id.
    pub required_event_id: String,
    /// Owner thread (answers must name it; taken from here, never from the app).
    pub thread_id: Option<String>,
    /// The waiting call.
    pub tool_call_id: Option<String>,
    /// The proposing message.
    pub source_event_id: Option<String>,
    /// Tool name, once the proposing message is known.
    pub tool_name: Option<String>,
    /// Raw arguments text.
    pub arguments_text: Option<String>,
    /// The arguments (checked JSON text; crosses to JS as the parsed value).
    #[cfg_attr(feature = "tsify", tsify(type = "unknown"))]
    pub arguments: Option<JsonText>,
    /// Tool family (MCP server for MCP tools).
    pub tool_info: Option<ToolInfoView>,
    /// For `ask_user_question`: the question and its options (free text is always allowed).
    pub question: Option<QuestionView>,
    /// For MCP auth: the server and its `auth_url`.
    pub mcp_server: Option<McpAuthServerView>,
}

/// `ask_user_question` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct QuestionView {
    /// The question.
    pub question: String,
    /// 0..5 suggested answers.
    pub options: Vec<String>,
}

// The TypeScript declaration of [`super::turn::TurnView`]: what it serialises as (its rare
// fields live in a box there). Never built; here for the reason `MessageView`'s is.
/// One turn of the session.
#[cfg(feature = "tsify")]
#[allow(dead_code)]
#[derive(Serialize, tsify::Tsify)]
#[tsify(missing_as_null)]
#[serde(rename_all = "camelCase")]
struct TurnView {
    /// Turn id.
    #[tsify(type = "string")]
    turn_id: Id,
    /// Chain parent.
    #[tsify(type = "string | null")]
    previous_turn_id: Option<Id>,
    /// Status (paused = done with required actions).
    status: TurnStatus,
    /// `cancelled` reason (wire spelling).
    #[tsify(type = "string | null")]
    cancel_reason: Option<TextBuf>,
    /// `error` message.
    #[tsify(type = "string | null")]
    error_message: Option<TextBuf>,
    /// Input items the turn was created with (wire shape), as JSON text (crosses to JS as the
    /// array; [`JsonText::to_value`] parses it).
    #[tsify(type = "unknown[] | null")]
    input: Option<JsonText>,
    /// ISO-8601.
    #[tsify(type = "string | null")]
    created_at: Option<Timestamp>,
    /// ISO-8601.
    #[tsify(type = "string | null")]
    completed_at: Option<Timestamp>,
    /// Items in stream order (ordered by event id: ULIDs sort by creation time, §1).
    #[tsify(type = "ItemView[]")]
    items: Vec<ItemView>,
    /// Turn usage.
    #[tsify(type = "UsageView")]
    usage: PackedUsage,
    /// Highest sequence number applied from a live stream.
    last_sequence_number: Option<u64>,
    /// Live events ignored because they came after the turn ended (a frozen
    /// `cancelled-for-next-turn` turn keeps streaming deltas, §9).
    late_events_ignored: u64,
    /// Bumped on every header change.
    version: u64,
}

/// What the pending set needs of a `*_required` event: its thread and its item body
/// ([`ItemBody::ActionRequired`] or [`ItemBody::McpAuthRequired`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RequiredRecord {
    /// The envelope `thread_id`.
    pub(crate) thread_id: Option<String>,
    /// The calls or servers waiting.
    pub(crate) body: ItemBody,
}
