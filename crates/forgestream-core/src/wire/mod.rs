//! Types of the TrueForge wire (PROTOCOL.md §2, §5–§7), snake_case as on the wire, and their
//! JSON decoder.
//!
//! Decoding is tolerant: unknown fields are ignored; unknown event `type`s, turn `status`es,
//! content parts, input items and `tool_info` kinds are kept raw instead of failing. Optional
//! wire fields are `Option`s. The SDK decodes every text with the hand-written decoder
//! ([`json`], `decode`): one function per type, no intermediate tree. It encodes with the
//! hand-written encoder ([`write`](mod@write), `encode`; request bodies, exported events). The serde
//! derives are the oracle the native tests hold both to (`tests/decode_oracle.rs`,
//! `tests/encode_oracle.rs`; `tagged` is their union logic).
//!
//! - [`event`]: the 12 streamed event types and [`Event`].
//! - [`message`]: model messages, deltas, tool calls, usage.
//! - [`turn`]: [`Turn`], [`TurnState`], metrics.
//! - [`input`]: turn input items (`user.message`, `user.tool_approval`, `user.tool_response`).
//! - [`listing`]: `{data, pagination}`, `{data}`, session timeline items, the error body.
//! - [`json`]: the pull reader, [`json::Decode`] and [`json::JsonError`].
//! - [`write`](mod@write): the JSON writer, [`write::Encode`] and `encode_struct!` (the mirror of [`json`]);
//!   `encode` holds the wire types' encoders.
//! - [`sequence`]: a frame's SSE `id:` as a sequence number (only `0 ..= 2^53 − 1`).

mod decode;
mod encode;
pub mod event;
pub(crate) mod fast;
mod float;
pub mod input;
pub mod json;
pub mod json_text;
pub mod listing;
pub mod message;
pub mod sequence;
mod tagged;
pub mod turn;
pub mod write;

pub use event::{
    AgentInfo, Event, McpAuthRequired, McpAuthServer, McpInitialize, McpServer, RequiredToolCall,
    SandboxCreated, ThreadCreated, ThreadDone, ThreadParent, ThreadState, ToolCallsRequired,
    ToolResponse, TurnCreated, TurnDone,
};
pub use input::{Approval, InputItem, InputPart, UserContent};
pub use json_text::JsonText;
pub use listing::{
    ErrorBody, ErrorDetail, Listing, Pagination, SessionEventItem, SessionEventsPage, Single,
};
pub use message::{
    Content, ContentPart, FinishReason, FunctionCall, FunctionDelta, InputTokensBreakdown,
    MessageDelta, ModelMessage, ToolCall, ToolCallDelta, ToolInfo, Usage,
};
pub use turn::{CancelReason, CancelledState, DoneState, ErrorState, Metrics, Turn, TurnState};
