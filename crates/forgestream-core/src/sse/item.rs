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

/// One complete item, borrowed: what [`SseParser::feed_with`](super::SseParser::feed_with)
/// hands to its callback. Same meaning as [`SseItem`]; valid only during the callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SseItemRef<'a> {
    /// A dispatched event.
    Event(SseEventRef<'a>),
    /// A `:` comment line.
    Comment,
    /// A valid `retry:` field, in ms (saturating at `u64::MAX`).
    Retry(u64),
}

/// A dispatched event, borrowed from the chunk being parsed (or from the parser, for a frame
/// that spanned reads). Same fields and meaning as [`SseEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SseEventRef<'a> {
    /// The `event` field of this frame; `None` when absent or empty (type `"message"`).
    pub event_type: Option<&'a str>,
    /// The frame's `data` values joined with LF (no trailing LF). Can be empty.
    pub data: &'a str,
    /// The `id` field of this frame, if it had a valid one; `Some("")` for an empty `id:`.
    pub id: Option<&'a str>,
    /// The last event ID after this frame.
    pub last_event_id: &'a str,
}

impl SseItemRef<'_> {
    /// The owned item (copies the strings).
    pub fn to_item(&self) -> SseItem {
        match self {
            Self::Event(event) => SseItem::Event(event.to_event()),
            Self::Comment => SseItem::Comment,
            Self::Retry(ms) => SseItem::Retry(*ms),
        }
    }
}

impl SseEventRef<'_> {
    /// The owned event (copies the strings).
    pub fn to_event(&self) -> SseEvent {
        SseEvent {
            event_type: self.event_type.map(String::from),
            data: String::from(self.data),
            id: self.id.map(String::from),
            last_event_id: String::from(self.last_event_id),
        }
    }
}
