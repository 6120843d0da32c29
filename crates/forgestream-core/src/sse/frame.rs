//! The buffers of the frame being received.

use alloc::borrow::Cow;

/// The spec's data buffer, event type buffer and this frame's `id` field.
///
/// The spec keeps one "last event ID buffer" that an `id` field overwrites at once. We keep the
/// frame's own `id` apart and commit it to the last event ID only when the frame is dispatched,
/// so a frame cut off by end of stream (or dropped for size) cannot move the reconnect cursor.
///
/// `'c` is the network chunk being parsed. While a frame lies inside one chunk its values borrow
/// from that chunk (a live TrueForge frame is one `data` line and one `id` line, so a typical
/// frame costs no allocation at all); only a value that must outlive the chunk (the frame
/// continues in the next read) or must be built (several `data` lines, U+FFFD replacement) is
/// owned. The parser keeps a `Frame<'static>` between reads ([`Frame::into_owned`]).
#[derive(Debug, Default)]
pub(super) struct Frame<'c> {
    /// `data` values joined with LF (the spec appends value + LF and strips the last LF at
    /// dispatch; joining is the same string without the extra step). `None` = no `data` line
    /// yet; `Some("")` = `data:` alone, which still dispatches an event.
    pub(super) data: Option<Cow<'c, str>>,
    /// The `event` field value; `None` or empty means the default type.
    pub(super) event_type: Option<Cow<'c, str>>,
    /// The last valid `id` field of this frame.
    pub(super) id: Option<Cow<'c, str>>,
}

#[inline(always)]
fn len(value: Option<&Cow<'_, str>>) -> usize {
    value.map_or(0, |v| v.len())
}

impl<'c> Frame<'c> {
    /// Bytes this frame holds, in bytes (for the frame cap). Borrowed values count too: the
    /// verdict must not depend on where the chunk boundaries fall.
    #[inline(always)]
    pub(super) fn retained_bytes(&self) -> usize {
        len(self.data.as_ref())
            .saturating_add(len(self.event_type.as_ref()))
            .saturating_add(len(self.id.as_ref()))
    }

    /// Bytes this frame has allocated (owned values' capacity; borrowed values cost nothing).
    pub(super) fn retained_capacity(&self) -> usize {
        let owned = |value: Option<&Cow<'_, str>>| match value {
            Some(Cow::Owned(s)) => s.capacity(),
            _ => 0,
        };
        owned(self.data.as_ref())
            .saturating_add(owned(self.event_type.as_ref()))
            .saturating_add(owned(self.id.as_ref()))
    }

    /// "Append the field value to the data buffer, then append a single U+000A LINE FEED (LF)
    /// character to the data buffer."
    pub(super) fn append_data(&mut self, value: Cow<'c, str>) {
        match &mut self.data {
            None => self.data = Some(value),
            Some(data) => {
                let data = data.to_mut();
                data.push('\n');
                data.push_str(&value);
            }
        }
    }

    /// "Set the event type buffer to the field value."
    pub(super) fn set_event_type(&mut self, value: Cow<'c, str>) {
        self.event_type = Some(value);
    }

    /// A valid `id` field (the caller has checked for U+0000).
    pub(super) fn set_id(&mut self, value: Cow<'c, str>) {
        self.id = Some(value);
    }

    /// The same frame with every value owned, so it can wait for the next read.
    pub(super) fn into_owned(self) -> Frame<'static> {
        Frame {
            data: self.data.map(|v| Cow::Owned(v.into_owned())),
            event_type: self.event_type.map(|v| Cow::Owned(v.into_owned())),
            id: self.id.map(|v| Cow::Owned(v.into_owned())),
        }
    }
}
