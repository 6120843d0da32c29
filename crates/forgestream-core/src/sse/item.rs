//! What the parser produces.

use alloc::string::String;

/// One complete item of an event stream, in stream order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// A dispatched event (a frame with at least one `data` line, ended by a blank line).
    Event(SseEvent),
    /// A `:` comment line (liveness for idle watchdogs; the text is not kept).
    Comment,
    /// A valid `retry:` field, in ms: the server's requested reconnection delay. Values above
    /// `u64::MAX` saturate to `u64::MAX`.
    Retry(u64),
}

/// A dispatched event ("dispatch the event", WHATWG HTML §9.2.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field of this frame; `None` when absent or empty, which the spec treats as the
    /// default type `"message"`.
    pub event_type: Option<String>,
    /// The frame's `data` values joined with LF (no trailing LF). Can be empty (`data:` alone).
    pub data: String,
    /// The `id` field *of this frame*, if it had a valid one (no U+0000). For TrueForge this is
    /// the sequence number. An empty `id:` gives `Some("")`, which resets the last event ID.
    pub id: Option<String>,
    /// The last event ID after this frame: this frame's `id` if it had one, else the last one
    /// committed before (persists across frames and connections; empty if none yet).
    pub last_event_id: String,
}
