//! The PROTOCOL §5 delta merge rule and merged-message conversion, as pure functions on
//! [`MessageView`]. Cost per delta is O(delta size): text is appended in place, tool-call
//! arguments are scanned incrementally (see [`super::args`]).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::sync::Arc;
use alloc::vec::Vec;

use super::arguments_text::ArgumentsText;
use super::message::MessageView;
use super::packed_usage::PackedUsage;
use super::text_buf::TextBuf;
use super::tool_call::ToolCallView;
use super::view::{ContentPartView, ContentView, ToolInfoView};
use crate::id::Id;
use crate::wire;

/// What a delta changed that the reducer must follow up on.
#[derive(Debug, Default)]
pub(crate) struct DeltaEffects {
    /// The message changed at all.
    pub(crate) changed: bool,
    /// A call got (or changed) its `tool_call_id`: re-link results and threads.
    pub(crate) call_ids_changed: bool,
    /// Usage changed (old value).
    pub(crate) usage_changed: Option<Option<PackedUsage>>,
    /// Calls whose arguments were finished and still do not parse.
    pub(crate) unparsed: Vec<String>,
}

fn part_view(part: &wire::ContentPart) -> ContentPartView {
    match part {
        wire::ContentPart::Text { text } => ContentPartView::Text { text: text.clone() },
        wire::ContentPart::Refusal { refusal } => ContentPartView::Refusal {
            refusal: refusal.clone(),
        },
        wire::ContentPart::Unknown { raw, .. } => ContentPartView::Other { raw: raw.clone() },
    }
}

pub(super) fn append_text(content: &mut Option<ContentView>, text: &str) {
    if text.is_empty() {
        return;
    }
    match content {
        None => *content = Some(ContentView::Text(String::from(text))),
        Some(ContentView::Text(existing)) => existing.push_str(text),
        Some(ContentView::Parts(parts)) => match parts.last_mut() {
            Some(ContentPartView::Text { text: last }) => last.push_str(text),
            _ => push_part(
                parts,
                ContentPartView::Text {
                    text: String::from(text),
                },
            ),
        },
    }
}

fn append_part(content: &mut Option<ContentView>, part: &wire::ContentPart) {
    match part {
        wire::ContentPart::Text { text } => append_text(content, text),
        other => match content {
            Some(ContentView::Parts(parts)) => push_part(parts, part_view(other)),
            Some(ContentView::Text(existing)) => {
                let first = ContentPartView::Text {
                    text: core::mem::take(existing),
                };
                *content = Some(ContentView::Parts(Box::from([first, part_view(other)])));
            }
            None => *content = Some(ContentView::Parts(Box::from([part_view(other)]))),
        },
    }
}

/// Appends to a boxed slice (parts and calls are boxed slices: no spare capacity, as they are
/// rarely added to).
fn push_part<T>(slice: &mut Box<[T]>, value: T) {
    let mut all = Vec::from(core::mem::take(slice));
    all.push(value);
    *slice = all.into_boxed_slice();
}

pub(super) fn append_opt(target: &mut Option<TextBuf>, text: &str) {
    if text.is_empty() {
        return;
    }
    match target {
        Some(existing) => existing.push_str(text),
        None => *target = Some(TextBuf::from(text)),
    }
}

fn try_parse(call: &mut ToolCallView) {
    match call.arguments_text.parse() {
        Ok(value) => {
            call.arguments = Some(value);
            call.set_arguments_error(None);
        }
        Err(_) => call.arguments = None,
    }
}

/// At the end of a message: parse what is not parsed yet; report what never parses.
fn finish_arguments(call: &mut ToolCallView) -> bool {
    if call.arguments.is_some() || call.arguments_text.trim().is_empty() {
        return false;
    }
    match call.arguments_text.parse() {
        Ok(value) => {
            call.arguments = Some(value);
            call.set_arguments_error(None);
            false
        }
        Err(err) => {
            call.set_arguments_error(Some(TextBuf::from(err.to_string())));
            true
        }
    }
}

fn new_call(index: u32, tool_call_id: Id) -> ToolCallView {
    ToolCallView::new(index, tool_call_id)
}

/// A finished message stops growing: give back the spare capacity its appended text built up
/// (up to half of it, from doubling), so the next message can reuse it instead of the wasm
/// memory growing.
fn release_slack(message: &mut MessageView) {
    if let Some(ContentView::Text(text)) = &mut message.content {
        text.shrink_to_fit();
    }
    // Through the slots only when there is text: they allocate the box.
    if message.reasoning().is_some() {
        if let Some(text) = message.reasoning_slot() {
            text.shrink_to_fit();
        }
    }
    if message.refusal().is_some() {
        if let Some(text) = message.refusal_slot() {
            text.shrink_to_fit();
        }
    }
    for call in message.tool_calls_mut() {
        call.arguments_text.shrink_to_fit();
    }
}

/// Applies one delta to its base (PROTOCOL §5 "Delta merge rule").
pub(crate) fn apply_delta(message: &mut MessageView, delta: &wire::MessageDelta) -> DeltaEffects {
    let mut fx = DeltaEffects::default();
    match &delta.content {
        Some(wire::Content::Text(text)) if !text.is_empty() => {
            append_text(&mut message.content, text);
            fx.changed = true;
        }
        Some(wire::Content::Parts(parts)) if !parts.is_empty() => {
            for part in parts {
                append_part(&mut message.content, part);
            }
            fx.changed = true;
        }
        _ => {}
    }
    if let Some(reasoning) = delta.reasoning_content.as_deref().filter(|r| !r.is_empty()) {
        append_opt(message.reasoning_slot(), reasoning);
        fx.changed = true;
    }
    if let Some(refusal) = delta.refusal.as_deref().filter(|r| !r.is_empty()) {
        append_opt(message.refusal_slot(), refusal);
        fx.changed = true;
    }
    for fragment in delta.tool_calls.iter().flatten() {
        fx.changed = true;
        let calls = message.tool_calls_slot();
        let position = match calls.iter().position(|c| c.index >= fragment.index) {
            Some(p) if calls.get(p).map(|c| c.index) == Some(fragment.index) => p,
            Some(p) => {
                let mut all = Vec::from(core::mem::take(calls));
                all.insert(p, new_call(fragment.index, Id::default()));
                *calls = all.into_boxed_slice();
                p
            }
            None => {
                push_part(calls, new_call(fragment.index, Id::default()));
                calls.len() - 1
            }
        };
        let Some(call) = calls.get_mut(position) else {
            continue;
        };
        if let Some(id) = fragment.id.as_deref().filter(|id| *id != call.tool_call_id) {
            call.tool_call_id = Id::from(id);
            fx.call_ids_changed = true;
        }
        if let Some(info) = &fragment.tool_info {
            call.tool_info = Some(Arc::new(ToolInfoView::from_wire(info)));
        }
        if let Some(function) = &fragment.function {
            if let Some(name) = &function.name {
                if !name.is_empty() || call.name.is_empty() {
                    call.name = Id::from(name);
                }
            }
            if let Some(arguments) = function.arguments.as_deref().filter(|a| !a.is_empty()) {
                call.arguments_text.push_str(arguments);
                let closed = call.scanner.feed(arguments);
                if call.scanner.has_trailing() {
                    // Text after a complete value: no longer valid JSON; re-checked at finish.
                    call.arguments = None;
                } else if closed {
                    try_parse(call);
                }
            }
        }
    }
    if let Some(reason) = &delta.finish_reason {
        let spelled = Some(Id::from(reason.as_str()));
        if message.finish_reason() != spelled.as_ref() || !message.complete {
            message.set_finish_reason(spelled);
            message.complete = true;
            fx.changed = true;
        }
        for call in message.tool_calls_mut() {
            if finish_arguments(call) {
                fx.unparsed.push(String::from(&call.tool_call_id));
            }
        }
        release_slack(message);
    }
    if let Some(usage) = &delta.usage {
        let new = Some(PackedUsage::from_message(usage));
        if message.usage() != new.as_ref() {
            fx.usage_changed = Some(message.set_usage(new));
            fx.changed = true;
        }
    }
    fx
}

/// Builds the view of a merged (full) message (its id is its item's key). Links (results,
/// threads, uncertainty) are filled by the reducer afterwards. Returns the view and the calls
/// whose arguments do not parse.
pub(crate) fn from_full(message: &wire::ModelMessage) -> (MessageView, Vec<String>) {
    let mut view = MessageView::new();
    view.set_name(message.name.as_deref().map(Id::from));
    view.content = match &message.content {
        Some(wire::Content::Text(text)) if !text.is_empty() => {
            Some(ContentView::Text(text.clone()))
        }
        Some(wire::Content::Parts(parts)) if !parts.is_empty() => {
            Some(ContentView::Parts(parts.iter().map(part_view).collect()))
        }
        _ => None,
    };
    view.set_reasoning(
        message
            .reasoning_content
            .as_deref()
            .filter(|r| !r.is_empty())
            .map(TextBuf::from),
    );
    view.set_refusal(
        message
            .refusal
            .as_deref()
            .filter(|r| !r.is_empty())
            .map(TextBuf::from),
    );
    let mut unparsed = Vec::new();
    // Exactly as many as the message has: a `Vec` grown by `push` starts at four, and a call
    // view is ~300 bytes, so a one-call message carried ~900 spare bytes (W2: ~20 MB).
    let mut calls = Vec::with_capacity(message.tool_calls.as_ref().map_or(0, Vec::len));
    for (position, call) in message.tool_calls.iter().flatten().enumerate() {
        let mut item = new_call(
            u32::try_from(position).unwrap_or(u32::MAX),
            Id::from(&call.id),
        );
        item.name = Id::from(&call.function.name);
        item.arguments_text = ArgumentsText::from(call.function.arguments.as_str());
        item.scanner.feed(&call.function.arguments);
        item.tool_info = call
            .tool_info
            .as_ref()
            .map(|info| Arc::new(ToolInfoView::from_wire(info)));
        if finish_arguments(&mut item) {
            unparsed.push(String::from(&item.tool_call_id));
        }
        calls.push(item);
    }
    view.set_tool_calls(calls.into_boxed_slice());
    view.set_finish_reason(message.finish_reason.as_ref().map(|r| Id::from(r.as_str())));
    view.set_usage(message.usage.as_ref().map(PackedUsage::from_message));
    view.complete = true;
    view.merged = true;
    (view, unparsed)
}

/// Copies the reducer-maintained links of `old`'s calls onto `new`'s calls with the same id,
/// so replacing a message by its merged form does not look like a change.
pub(crate) fn carry_links(old: &MessageView, new: &mut MessageView) {
    for call in new.tool_calls_mut() {
        if let Some(prev) = old
            .tool_calls()
            .iter()
            .find(|c| c.tool_call_id == call.tool_call_id)
        {
            call.result_event_id = prev.result_event_id.clone();
            call.result_turn_id = prev.result_turn_id.clone();
            call.set_spawned_thread_ids(prev.spawned_thread_ids().into());
            call.set_uncertain(prev.uncertain());
        }
    }
}

/// Equality that ignores reducer-private state (scanner, merged flag).
pub(crate) fn same_view(a: &MessageView, b: &MessageView) -> bool {
    a.name() == b.name()
        && a.content == b.content
        && a.reasoning() == b.reasoning()
        && a.refusal() == b.refusal()
        && a.finish_reason() == b.finish_reason()
        && a.usage() == b.usage()
        && a.complete == b.complete
        && a.interrupted == b.interrupted
        && a.tool_calls().len() == b.tool_calls().len()
        && a.tool_calls()
            .iter()
            .zip(b.tool_calls().iter())
            .all(|(x, y)| {
                x.index == y.index
                    && x.tool_call_id == y.tool_call_id
                    && x.name == y.name
                    && x.arguments_text == y.arguments_text
                    && x.arguments == y.arguments
                    && x.arguments_error() == y.arguments_error()
                    && x.tool_info == y.tool_info
                    && x.result_event_id == y.result_event_id
                    && x.result_turn_id == y.result_turn_id
                    && x.spawned_thread_ids() == y.spawned_thread_ids()
                    && x.uncertain() == y.uncertain()
            })
}
