//! [`Shared`]: the few values that many messages and tool calls repeat (a tool's name and its
//! `tool_info`, a `finish_reason`, an author's name), kept once and handed out as shared references.
//!
//! Why: a long history calls the same handful of tools thousands of times. W2's 23k tool calls
//! each held a 96-byte `tool_info` inline plus its four strings, and a name (~3 MB of a 63 MB
//! view; `cargo run --release -p forgestream-core --example bench_core`, "view breakdown").
//! Shared, a call holds two pointers.
//!
//! The caches are small lists searched linearly (a few comparisons a call, once, when a message
//! is stored): a value not among the last [`KEPT`] distinct ones is kept unshared rather than
//! grow the list, so an adversarial stream of distinct names costs no more than before.

use alloc::sync::Arc;
use alloc::vec::Vec;

use super::message::MessageView;
use super::view::ToolInfoView;
use crate::id::Id;

/// Distinct values each cache keeps.
const KEPT: usize = 32;

/// The shared values of one view (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct Shared {
    /// Tool names and finish reasons.
    words: Vec<Id>,
    /// Tool infos.
    infos: Vec<Arc<ToolInfoView>>,
}

impl Shared {
    /// Replaces `message`'s tool names, tool infos and finish reason by the shared copies of
    /// equal values (adding them while there is room).
    pub(crate) fn share(&mut self, message: &mut MessageView) {
        // Read, shared and set back: a slot to write through would allocate a message's box.
        if let Some(mut reason) = message.finish_reason().cloned() {
            share_word(&mut self.words, &mut reason);
            message.set_finish_reason(Some(reason));
        }
        if let Some(mut name) = message.name().cloned() {
            share_word(&mut self.words, &mut name);
            message.set_name(Some(name));
        }
        for call in message.tool_calls_mut() {
            share_word(&mut self.words, &mut call.name);
            if let Some(info) = &mut call.tool_info {
                match self.infos.iter().find(|known| **known == *info) {
                    Some(known) => *info = Arc::clone(known),
                    None if self.infos.len() < KEPT => self.infos.push(Arc::clone(info)),
                    None => {}
                }
            }
        }
    }
}

fn share_word(words: &mut Vec<Id>, word: &mut Id) {
    match words.iter().find(|known| **known == *word) {
        Some(known) => *word = known.clone(),
        None if words.len() < KEPT => words.push(word.clone()),
        None => {}
    }
}
