//! The buffers of the frame being received and the "dispatch the event" steps.

use alloc::string::String;

use super::item::SseEvent;

/// The spec's data buffer, event type buffer and this frame's `id` field.
///
/// The spec keeps one "last event ID buffer" that an `id` field overwrites at once. We keep the
/// frame's own `id` apart and commit it to the last event ID only when the frame is dispatched,
/// so a frame cut off by end of stream (or dropped for size) cannot move the reconnect cursor.
#[derive(Debug, Default)]
pub(super) struct Frame {
    /// `data` values joined with LF (the spec appends value + LF and strips the last LF at
    /// dispatch; joining is the same string without the extra step).
    data: String,
    /// Whether any `data` line was seen: `data:` alone gives an empty string but still an event.
    has_data: bool,
    /// The `event` field value; empty means the default type.
    event_type: String,
    /// The last valid `id` field of this frame.
    id: Option<String>,
}

impl Frame {
    /// Bytes this frame holds, in bytes (for the frame cap).
    pub(super) fn retained_bytes(&self) -> usize {
        self.data
            .len()
            .saturating_add(self.event_type.len())
            .saturating_add(self.id.as_ref().map_or(0, String::len))
    }

    /// "Append the field value to the data buffer, then append a single U+000A LINE FEED (LF)
    /// character to the data buffer."
    pub(super) fn append_data(&mut self, value: &str) {
        if self.has_data {
            self.data.push('\n');
        }
        self.data.push_str(value);
        self.has_data = true;
    }

    /// "Set the event type buffer to the field value."
    pub(super) fn set_event_type(&mut self, value: &str) {
        self.event_type.clear();
        self.event_type.push_str(value);
    }

    /// A valid `id` field (the caller has checked for U+0000).
    pub(super) fn set_id(&mut self, value: &str) {
        let id = self.id.get_or_insert_with(String::new);
        id.clear();
        id.push_str(value);
    }

    /// Forgets everything of this frame (end of stream, or dropped for size).
    pub(super) fn clear(&mut self) {
        self.data = String::new();
        self.has_data = false;
        self.event_type = String::new();
        self.id = None;
    }

    /// Dispatches the frame at a blank line; `last_event_id` is the parser's persistent last
    /// event ID. Returns `None` for a frame without `data` (its `id` is still committed).
    pub(super) fn dispatch(&mut self, last_event_id: &mut String) -> Option<SseEvent> {
        // "Set the last event ID string of the event source to the value of the last event ID
        // buffer. The buffer does not get reset."
        let id = self.id.take();
        if let Some(id) = &id {
            last_event_id.clone_from(id);
        }
        // "If the data buffer is an empty string, set the data buffer and the event type buffer
        // to the empty string and return."
        if !self.has_data {
            self.event_type.clear();
            return None;
        }
        self.has_data = false;
        let data = core::mem::take(&mut self.data);
        let event_type = core::mem::take(&mut self.event_type);
        Some(SseEvent {
            // "If the event type buffer has a value other than the empty string, change the type
            // of the newly created event to equal the value of the event type buffer."
            event_type: (!event_type.is_empty()).then_some(event_type),
            data,
            id,
            last_event_id: last_event_id.clone(),
        })
    }
}
