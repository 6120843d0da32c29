//! [`MessageView`]: a model message as the view holds it.

use alloc::boxed::Box;
use serde::{Serialize, Serializer};

use super::packed_usage::PackedUsage;
use super::text_buf::TextBuf;
use super::tool_call::ToolCallView;
use super::view::ContentView;
use crate::id::Id;

/// A model message: the live placeholder filled by deltas, or the merged message.
///
/// Serialises (and is declared to TypeScript, in `view.rs`) as the object
/// `{id, name, content, reasoning, refusal, toolCalls, finishReason, usage, complete,
/// interrupted}`. In memory, what most messages lack or get only once they end is kept in two
/// boxes allocated on first use ([`MessageView::name`] and the other accessors read them): the
/// message is the largest item body, so its inline size was that of every item record — a tool
/// result or a notice paid 56 bytes for fields only a message has (W2: 69k items, 10.5 MB).
///
/// Its `id` member is its item's key ([`super::ItemView::key`], the event id its deltas share),
/// not held a second time: a message serialises within its item ([`super::ItemView`]'s
/// serialisers write it), and alone only through [`MessageView::with_id`].
#[derive(Debug, Clone, Default)]
pub struct MessageView {
    /// Content; `None` while nothing arrived (empty text is normalised to `None`).
    pub content: Option<ContentView>,
    /// Finished: a `finish_reason` arrived or the merged message was applied.
    pub complete: bool,
    /// Still streaming when its turn was cancelled (stop, interrupt by a newer turn) or failed:
    /// the text that arrived is kept so the app can show it as stopped, its calls never ran
    /// (no results, not uncertain) and its usage is not counted. Only the live view has it —
    /// the server's history drops unfinished messages (PROTOCOL §9), so after a reload (or a
    /// rebuild from listings) the message is gone; the [summary](super::SessionView::summary)
    /// leaves it out for the same reason.
    pub interrupted: bool,
    /// Set from a merged (full) message: later deltas for it are ignored.
    pub(crate) merged: bool,
    /// Tool calls, finish reason and usage: absent until one is set.
    ending: Option<Box<MessageEnding>>,
    /// Author name, reasoning and refusal: absent until one is set (rare).
    rare: Option<Box<MessageRare>>,
}

/// What a model call ends with, boxed in [`MessageView`] (see there).
#[derive(Debug, Clone, Default)]
struct MessageEnding {
    // A boxed slice (no spare capacity): calls are added rarely (once per new `index`).
    tool_calls: Box<[ToolCallView]>,
    // Shared by the messages that stopped alike (`reduce/shared.rs`).
    finish_reason: Option<Id>,
    // Packed (a few bytes of heap; `PackedUsage::get` reads it).
    usage: Option<PackedUsage>,
}

/// The rarely set texts of a [`MessageView`].
#[derive(Debug, Clone, Default)]
struct MessageRare {
    // Shared by the messages of one author (`reduce/shared.rs`).
    name: Option<Id>,
    reasoning: Option<TextBuf>,
    refusal: Option<TextBuf>,
}

impl MessageView {
    /// An empty message: no content, calls or usage, not complete.
    pub fn new() -> Self {
        MessageView {
            content: None,
            complete: false,
            interrupted: false,
            merged: false,
            ending: None,
            rare: None,
        }
    }

    /// Optional author name.
    pub fn name(&self) -> Option<&Id> {
        self.rare.as_ref().and_then(|r| r.name.as_ref())
    }

    /// Reasoning text.
    pub fn reasoning(&self) -> Option<&TextBuf> {
        self.rare.as_ref().and_then(|r| r.reasoning.as_ref())
    }

    /// Refusal text.
    pub fn refusal(&self) -> Option<&TextBuf> {
        self.rare.as_ref().and_then(|r| r.refusal.as_ref())
    }

    /// Tool calls in index order.
    pub fn tool_calls(&self) -> &[ToolCallView] {
        self.ending.as_ref().map_or(&[], |e| &e.tool_calls)
    }

    /// Why generation stopped (wire spelling).
    pub fn finish_reason(&self) -> Option<&Id> {
        self.ending.as_ref().and_then(|e| e.finish_reason.as_ref())
    }

    /// This model call's usage (read with [`PackedUsage::get`]).
    pub fn usage(&self) -> Option<&PackedUsage> {
        self.ending.as_ref().and_then(|e| e.usage.as_ref())
    }

    /// The tool calls, mutably (to edit calls in place; allocates nothing).
    pub fn tool_calls_mut(&mut self) -> &mut [ToolCallView] {
        match &mut self.ending {
            Some(e) => &mut e.tool_calls,
            None => &mut [],
        }
    }

    /// Sets the author name.
    pub fn set_name(&mut self, name: Option<Id>) {
        if name.is_some() || self.rare.is_some() {
            self.rare_mut().name = name;
        }
    }

    /// Sets the reasoning text.
    pub fn set_reasoning(&mut self, text: Option<TextBuf>) {
        if text.is_some() || self.rare.is_some() {
            self.rare_mut().reasoning = text;
        }
    }

    /// Sets the refusal text.
    pub fn set_refusal(&mut self, text: Option<TextBuf>) {
        if text.is_some() || self.rare.is_some() {
            self.rare_mut().refusal = text;
        }
    }

    /// Sets the tool calls.
    pub fn set_tool_calls(&mut self, calls: Box<[ToolCallView]>) {
        if !calls.is_empty() || self.ending.is_some() {
            self.ending_mut().tool_calls = calls;
        }
    }

    /// Sets the finish reason.
    pub fn set_finish_reason(&mut self, reason: Option<Id>) {
        if reason.is_some() || self.ending.is_some() {
            self.ending_mut().finish_reason = reason;
        }
    }

    /// Sets the usage; returns the one it replaced.
    pub fn set_usage(&mut self, usage: Option<PackedUsage>) -> Option<PackedUsage> {
        if usage.is_none() && self.ending.is_none() {
            return None;
        }
        core::mem::replace(&mut self.ending_mut().usage, usage)
    }

    /// The reasoning text as a slot to grow (allocates the rare box).
    pub(crate) fn reasoning_slot(&mut self) -> &mut Option<TextBuf> {
        &mut self.rare_mut().reasoning
    }

    /// The refusal text as a slot to grow (allocates the rare box).
    pub(crate) fn refusal_slot(&mut self) -> &mut Option<TextBuf> {
        &mut self.rare_mut().refusal
    }

    /// The tool calls as a slot to add calls to (allocates the ending box).
    pub(crate) fn tool_calls_slot(&mut self) -> &mut Box<[ToolCallView]> {
        &mut self.ending_mut().tool_calls
    }

    fn rare_mut(&mut self) -> &mut MessageRare {
        self.rare.get_or_insert_with(Box::default)
    }

    fn ending_mut(&mut self) -> &mut MessageEnding {
        self.ending.get_or_insert_with(Box::default)
    }
}

impl PartialEq for MessageView {
    // By what the message holds: an emptied box equals an absent one.
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
            && self.content == other.content
            && self.reasoning() == other.reasoning()
            && self.refusal() == other.refusal()
            && self.tool_calls() == other.tool_calls()
            && self.finish_reason() == other.finish_reason()
            && self.usage() == other.usage()
            && self.complete == other.complete
            && self.interrupted == other.interrupted
            && self.merged == other.merged
    }
}

/// A [`MessageView`] with its id (its item's key), as it serialises: the object its TypeScript
/// declaration (`view.rs`) describes. [`MessageView::with_id`] makes one.
#[derive(Debug, Clone, Copy)]
pub struct MessageWithId<'a> {
    /// The message's event id.
    pub id: &'a Id,
    /// The message.
    pub message: &'a MessageView,
}

impl MessageView {
    /// This message with `id` (its item's key), to serialise.
    pub fn with_id<'a>(&'a self, id: &'a Id) -> MessageWithId<'a> {
        MessageWithId { id, message: self }
    }
}

impl Serialize for MessageWithId<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_as(serializer, false)
    }
}

impl MessageWithId<'_> {
    /// As an [`ItemBody::Message`](super::ItemBody::Message) body: `kind` first, as serde's
    /// internally tagged enums write it.
    pub(crate) fn serialize_tagged<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize_as(serializer, true)
    }

    // The members of its TypeScript declaration (`view.rs`), in that order.
    fn serialize_as<S: Serializer>(&self, serializer: S, tagged: bool) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let m = self.message;
        let mut s = serializer.serialize_struct("MessageView", 10 + usize::from(tagged))?;
        if tagged {
            s.serialize_field("kind", "message")?;
        }
        s.serialize_field("id", self.id)?;
        s.serialize_field("name", &m.name())?;
        s.serialize_field("content", &m.content)?;
        s.serialize_field("reasoning", &m.reasoning())?;
        s.serialize_field("refusal", &m.refusal())?;
        s.serialize_field("toolCalls", m.tool_calls())?;
        s.serialize_field("finishReason", &m.finish_reason())?;
        s.serialize_field("usage", &m.usage())?;
        s.serialize_field("complete", &m.complete)?;
        s.serialize_field("interrupted", &m.interrupted)?;
        s.end()
    }
}
