//! [`ToolCallView`]: one tool call of a message as the view holds it.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use serde::{Serialize, Serializer};

use super::args::ArgScanner;
use super::arguments_text::ArgumentsText;
use super::text_buf::TextBuf;
use super::view::ToolInfoView;
use crate::id::Id;
use crate::wire::JsonText;

/// One tool call of a message, assembled from deltas or taken from a merged message.
///
/// Serialises (and is declared to TypeScript, in `view.rs`) as the object `{index, toolCallId,
/// name, argumentsText, arguments, argumentsError, toolInfo, resultEventId, resultTurnId,
/// spawnedThreadIds, uncertain}`. The rarely set fields (an arguments error, spawned threads,
/// uncertainty) are read through accessors from one box a call nearly never allocates: they
/// were 25 bytes of every call (W2: 23k calls).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallView {
    /// Position in the message (`index` of the deltas).
    pub index: u32,
    /// `tool_call_id` (empty until a fragment names it).
    pub tool_call_id: Id,
    // An `Id` shared by the calls of one tool (`reduce/shared.rs`).
    /// Tool name.
    pub name: Id,
    // One allocation with `arguments` once the text parses (`ArgumentsText`).
    /// Raw arguments text, exactly as concatenated.
    pub arguments_text: ArgumentsText,
    /// The arguments once the text is complete JSON (`None` while incomplete, never `{}`):
    /// checked JSON text, which crosses to JS as the parsed value ([`JsonText::to_value`]).
    pub arguments: Option<JsonText>,
    // Shared by the calls of one tool (`reduce/shared.rs`): 8 bytes a call, not ~120.
    /// Which tool family.
    pub tool_info: Option<Arc<ToolInfoView>>,
    /// The `tool.response` bound by `tool_call_id` (its event id), if seen.
    pub result_event_id: Option<Id>,
    /// The turn holding that result (a denial's result arrives on the next turn).
    pub result_turn_id: Option<Id>,
    pub(crate) scanner: ArgScanner,
    /// Arguments error, spawned threads, uncertainty: absent while all are unset.
    rare: Option<Box<CallRare>>,
}

/// The rarely set fields of a [`ToolCallView`].
#[derive(Debug, Clone, Default, PartialEq)]
struct CallRare {
    arguments_error: Option<TextBuf>,
    // Set whole: a boxed slice (no spare capacity).
    spawned_thread_ids: Box<[String]>,
    uncertain: bool,
}

impl ToolCallView {
    /// A call at `index` with `tool_call_id` and nothing else yet.
    pub fn new(index: u32, tool_call_id: Id) -> Self {
        ToolCallView {
            index,
            tool_call_id,
            name: Id::default(),
            arguments_text: ArgumentsText::default(),
            arguments: None,
            tool_info: None,
            result_event_id: None,
            result_turn_id: None,
            scanner: ArgScanner::default(),
            rare: None,
        }
    }

    /// Set when the message finished and the text is not valid JSON.
    pub fn arguments_error(&self) -> Option<&TextBuf> {
        self.rare.as_ref().and_then(|r| r.arguments_error.as_ref())
    }

    /// Subagent threads spawned by this call (`thread.created.parent.tool_call_id`).
    pub fn spawned_thread_ids(&self) -> &[String] {
        self.rare.as_ref().map_or(&[], |r| &r.spawned_thread_ids)
    }

    /// The turn ended in error/cancelled with this call neither answered nor pending: its
    /// effect is unknown (PROTOCOL §8, problem 3).
    pub fn uncertain(&self) -> bool {
        self.rare.as_ref().is_some_and(|r| r.uncertain)
    }

    /// Sets the arguments error.
    pub fn set_arguments_error(&mut self, error: Option<TextBuf>) {
        if error.is_some() || self.rare.is_some() {
            self.rare_mut().arguments_error = error;
        }
    }

    /// Sets the spawned threads.
    pub fn set_spawned_thread_ids(&mut self, ids: Box<[String]>) {
        if !ids.is_empty() || self.rare.is_some() {
            self.rare_mut().spawned_thread_ids = ids;
        }
    }

    /// Sets whether the call's effect is unknown.
    pub fn set_uncertain(&mut self, uncertain: bool) {
        if uncertain || self.rare.is_some() {
            self.rare_mut().uncertain = uncertain;
        }
    }

    fn rare_mut(&mut self) -> &mut CallRare {
        self.rare.get_or_insert_with(Box::default)
    }
}

impl Serialize for ToolCallView {
    // The members of its TypeScript declaration (`view.rs`), in that order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("ToolCallView", 11)?;
        s.serialize_field("index", &self.index)?;
        s.serialize_field("toolCallId", &self.tool_call_id)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("argumentsText", &self.arguments_text)?;
        s.serialize_field("arguments", &self.arguments)?;
        s.serialize_field("argumentsError", &self.arguments_error())?;
        s.serialize_field("toolInfo", &self.tool_info)?;
        s.serialize_field("resultEventId", &self.result_event_id)?;
        s.serialize_field("resultTurnId", &self.result_turn_id)?;
        s.serialize_field("spawnedThreadIds", self.spawned_thread_ids())?;
        s.serialize_field("uncertain", &self.uncertain())?;
        s.end()
    }
}
