//! Applying one event to the session: lifecycle, items, links between calls, results and
//! threads, usage.

use alloc::boxed::Box;
use alloc::collections::BinaryHeap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cmp::Reverse;
use serde_json::Value;

use super::change::{ChangeSet, ReduceError, Warning};
use super::merge;
use super::message::MessageView;
use super::packed_usage::PackedUsage;
use super::text_buf::TextBuf;
use super::timestamp::Timestamp;
use super::turn::TurnView;
use super::turn_key;
use super::view::{
    BreakdownView, ItemBody, ItemView, McpAuthServerView, McpServerView, PendingKind,
    RequiredCallView, RequiredRecord, ThreadStatus, ThreadView, ToolResultView, TurnStatus,
    UsageView,
};
use super::{RefKind, SessionView};
use crate::id::Id;
use crate::id_map::IdMap;
use crate::wire;

fn is_subagent(thread_id: Option<&str>) -> Option<&str> {
    thread_id.filter(|t| !t.is_empty() && *t != "main")
}

impl SessionView {
    pub(super) fn ensure_turn(&mut self, turn_id: &str, cs: &mut ChangeSet) {
        if self.turns.get_keyed(turn_id, turn_key).is_some() {
            return;
        }
        // One `Id` for the map's key, the turn's own id and every item's `turn_id`.
        let id = Id::from(turn_id);
        self.turns.insert(id.clone(), Box::new(TurnView::new(id)));
        cs.turn(turn_id);
        // Ordered once per public call (in `finish`), not per turn: a page of 100 session events
        // can add and relink many turns.
        self.order_dirty = true;
    }

    /// Chain order: a turn comes after its `previous_turn_id`; otherwise by id (ULIDs sort by
    /// time). Kahn's algorithm with an ordered ready set; a cycle's members go last, by id.
    pub(super) fn reorder(&mut self, cs: &mut ChangeSet) {
        // Turns by rank (their place in id order); the ready set is a min-heap of ranks.
        let ids: Vec<&Id> = self.turns.keys().collect();
        let mut children: Vec<Vec<usize>> = Vec::new();
        children.resize_with(ids.len(), Vec::new);
        let mut ready: BinaryHeap<Reverse<usize>> = BinaryHeap::new();
        // (turn, its parent's own id) where the turn's `previous_turn_id` is still a copy.
        let mut share: Vec<(Id, Id)> = Vec::new();
        for (rank, turn) in self.turns.values().enumerate() {
            let parent = turn
                .previous_turn_id
                .as_ref()
                .and_then(|p| {
                    ids.binary_search_by(|id| id.as_bytes().cmp(p.as_bytes()))
                        .ok()
                })
                .filter(|&p| p != rank);
            if let (Some(prev), Some(key)) =
                (&turn.previous_turn_id, parent.and_then(|p| ids.get(p)))
            {
                if !prev.same_allocation(key) {
                    share.push((turn.turn_id.clone(), (*key).clone()));
                }
            }
            match parent.and_then(|p| children.get_mut(p)) {
                Some(kids) => kids.push(rank),
                None => ready.push(Reverse(rank)),
            }
        }
        let mut order: Vec<Id> = Vec::with_capacity(ids.len());
        let mut placed = alloc::vec![false; ids.len()];
        while let Some(Reverse(next)) = ready.pop() {
            if let (Some(id), Some(done)) = (ids.get(next), placed.get_mut(next)) {
                order.push((*id).clone());
                *done = true;
            }
            if let Some(kids) = children.get_mut(next) {
                ready.extend(core::mem::take(kids).into_iter().map(Reverse));
            }
        }
        // Members of a chain cycle were never ready: they go last, by id.
        for (id, done) in ids.iter().zip(&placed) {
            if !done {
                order.push((*id).clone());
            }
        }
        // A parent applied after its child (history pages come newest first) is found here:
        // the child then holds the parent's own `Id`, and its copy is freed.
        for (turn, parent) in share {
            if let Some(turn) = self.turns.get_keyed_mut(&turn, turn_key) {
                turn.previous_turn_id = Some(parent);
            }
        }
        if order != self.order {
            self.order = order;
            cs.order_changed = true;
            self.pending_dirty = true;
        }
    }

    pub(super) fn set_turn_header(
        &mut self,
        turn_id: &str,
        previous_turn_id: Option<&str>,
        input: Option<&Vec<wire::InputItem>>,
        created_at: Option<&str>,
        cs: &mut ChangeSet,
    ) {
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return;
        };
        let mut changed = false;
        let mut relink = false;
        if let Some(prev) = previous_turn_id {
            if turn.previous_turn_id.as_deref() != Some(prev) {
                turn.previous_turn_id = Some(Id::from(prev));
                changed = true;
                relink = true;
            }
        }
        if let Some(input) = input {
            // Kept as the encoder's text (see `wire::JsonText`): JS parses it once, with the
            // change set that carries it.
            let text = wire::JsonText::from_encoded(crate::wire::write::to_string(input));
            if turn.input.as_ref() != Some(&text) {
                turn.input = Some(text);
                changed = true;
            }
        }
        if turn.created_at.is_none() {
            if let Some(at) = created_at {
                turn.created_at = Some(Timestamp::new(at));
                changed = true;
            }
        }
        if changed {
            turn.version += 1;
            cs.turn(turn_id);
        }
        if relink {
            self.order_dirty = true;
        }
    }

    /// A live event after dedupe: the late-event rule, then the common path.
    pub(super) fn apply_live_event(
        &mut self,
        turn_id: &str,
        event: wire::Event,
        cs: &mut ChangeSet,
    ) -> Result<(), ReduceError> {
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return Ok(());
        };
        let frozen = turn.internal.terminal
            && turn.cancel_reason().map(|r| r.as_str()) == Some("cancelled-for-next-turn");
        if turn.internal.done_event_seen || frozen {
            if matches!(event, wire::Event::TurnDone(_)) {
                // The frozen turn's own late `turn.done` (first terminal state already won).
                turn.internal.done_event_seen = true;
                return Ok(());
            }
            let live = turn.internal.live_mut();
            live.late_events_ignored = live.late_events_ignored.saturating_add(1);
            turn.version += 1;
            cs.turn(turn_id);
            if !frozen {
                let event_type = String::from(event.event_type());
                self.warn(
                    Warning::EventAfterTurnDone {
                        turn_id: String::from(turn_id),
                        event_type,
                    },
                    cs,
                );
            }
            return Ok(());
        }
        self.apply_one(turn_id, event, cs, false)
    }

    /// A persisted event: errors other than the cap become warnings.
    pub(super) fn apply_persisted(
        &mut self,
        turn_id: &str,
        event: wire::Event,
        cs: &mut ChangeSet,
    ) -> Result<(), ReduceError> {
        match self.apply_one(turn_id, event, cs, true) {
            Err(err @ ReduceError::EventCapExceeded { .. }) => Err(err),
            Err(other) => {
                let reason = other.to_string();
                self.warn(
                    Warning::EventSkipped {
                        turn_id: String::from(turn_id),
                        reason,
                    },
                    cs,
                );
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }

    /// One event after the live rules (`persisted`: from a listing). The cap counts live and
    /// persisted events apart, so a turn capped live can still be rebuilt from its listing (far
    /// fewer events: no deltas), and it never refuses `turn.done`: the turn's end is always
    /// applied, whatever came before (a refused `turn.done` left the turn running, to be
    /// replayed again and again).
    fn apply_one(
        &mut self,
        turn_id: &str,
        event: wire::Event,
        cs: &mut ChangeSet,
        persisted: bool,
    ) -> Result<(), ReduceError> {
        let cap = self.config.max_events_per_turn;
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return Ok(());
        };
        let count = if persisted {
            turn.internal.persisted_count as usize
        } else {
            turn.internal.event_count()
        };
        if count >= cap && !matches!(event, wire::Event::TurnDone(_)) {
            if !persisted {
                turn.internal.live_mut().capped = true;
            }
            return Err(ReduceError::EventCapExceeded {
                turn_id: String::from(turn_id),
                cap,
            });
        }
        if persisted {
            let count = &mut turn.internal.persisted_count;
            *count = count.saturating_add(1);
        } else {
            let count = &mut turn.internal.live_mut().event_count;
            *count = count.saturating_add(1);
        }
        match event {
            wire::Event::TurnCreated(e) => {
                if e.turn_id != turn_id {
                    return Err(ReduceError::TurnMismatch {
                        expected: String::from(turn_id),
                        received: e.turn_id,
                    });
                }
                self.set_turn_header(
                    turn_id,
                    e.previous_turn_id.as_deref(),
                    e.input.as_ref(),
                    e.created_at.as_deref(),
                    cs,
                );
                Ok(())
            }
            wire::Event::TurnDone(e) => {
                self.apply_state(turn_id, &e.state, true, cs);
                Ok(())
            }
            wire::Event::ModelMessage(m) => self.apply_message(turn_id, &m, cs),
            wire::Event::ModelMessageDelta(d) => self.apply_delta(turn_id, d, cs),
            wire::Event::ToolResponse(r) => {
                self.apply_tool_response(turn_id, &r, cs);
                Ok(())
            }
            wire::Event::ToolApprovalRequired(_)
            | wire::Event::ToolResponseRequired(_)
            | wire::Event::McpAuthRequired(_) => {
                self.apply_required(turn_id, &event, cs);
                Ok(())
            }
            wire::Event::McpInitialize(e) => {
                let servers = e
                    .mcp_servers
                    .iter()
                    .map(|s| McpServerView {
                        id: s.id.clone(),
                        name: s.name.clone(),
                        transport_type: s.transport_type.clone(),
                    })
                    .collect();
                let body = ItemBody::McpInitialize { servers };
                self.put_item(
                    turn_id,
                    &e.id,
                    e.thread_id.as_deref(),
                    e.created_at.as_deref(),
                    body,
                    cs,
                );
                Ok(())
            }
            wire::Event::SandboxCreated(e) => {
                let body = ItemBody::SandboxCreated {
                    sandbox_id: e.sandbox_id.clone(),
                };
                self.put_item(
                    turn_id,
                    &e.id,
                    e.thread_id.as_deref(),
                    e.created_at.as_deref(),
                    body,
                    cs,
                );
                Ok(())
            }
            wire::Event::ThreadCreated(e) => {
                self.apply_thread_created(turn_id, &e, cs);
                Ok(())
            }
            wire::Event::ThreadDone(e) => self.apply_thread_done(turn_id, &e, cs),
            wire::Event::Unknown { event_type, raw } => {
                let id = raw
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let thread = raw
                    .get("thread_id")
                    .and_then(Value::as_str)
                    .map(String::from);
                let created = raw
                    .get("created_at")
                    .and_then(Value::as_str)
                    .map(String::from);
                let body = ItemBody::Unknown {
                    event_type,
                    raw: Box::new(raw),
                };
                self.put_item(
                    turn_id,
                    &id,
                    thread.as_deref(),
                    created.as_deref(),
                    body,
                    cs,
                );
                Ok(())
            }
        }
    }

    /// Registers a subagent thread first seen through one of its events (never root), and
    /// marks it interrupted when that event belongs to a turn already cancelled or failed (a
    /// history may apply a turn's state before its thread's events).
    fn touch_thread(&mut self, thread_id: Option<&str>, turn_id: &str, cs: &mut ChangeSet) {
        let Some(thread) = is_subagent(thread_id) else {
            return;
        };
        if let Some(known) = self.threads.get(thread) {
            // The turn is looked up only for a thread still running (not per event of a
            // finished one).
            if known.status == ThreadStatus::Running && self.turn_interrupted(turn_id) {
                self.interrupt_thread(thread, cs);
            }
            return;
        }
        let status = if self.turn_interrupted(turn_id) {
            ThreadStatus::Interrupted
        } else {
            ThreadStatus::Running
        };
        self.threads.insert(
            Id::from(thread),
            ThreadView {
                thread_id: String::from(thread),
                title: None,
                agent_name: None,
                parent_thread_id: None,
                parent_tool_call_id: None,
                status,
                placeholder: true,
                turn_id: String::from(turn_id),
                output_message_id: None,
                usage: UsageView::default(),
                version: 1,
            },
        );
        cs.threads_changed = true;
    }

    /// The turn ended cancelled or in error (its threads cannot go on).
    fn turn_interrupted(&self, turn_id: &str) -> bool {
        self.turns.get(turn_id).is_some_and(|t| {
            t.internal.terminal && matches!(t.status, TurnStatus::Cancelled | TurnStatus::Error)
        })
    }

    /// A thread still `running` becomes `interrupted` (see [`ThreadStatus::Interrupted`]).
    fn interrupt_thread(&mut self, thread_id: &str, cs: &mut ChangeSet) {
        if let Some(thread) = self.threads.get_mut(thread_id) {
            if thread.status == ThreadStatus::Running {
                thread.status = ThreadStatus::Interrupted;
                thread.version += 1;
                cs.threads_changed = true;
            }
        }
    }

    /// A turn was cancelled or failed: every thread it ran (one of its items is the thread's,
    /// or the thread was first seen in it) and that has not said `thread.done` is interrupted.
    /// A trial saw the demo's subagent threads read `running` forever under a cancelled turn,
    /// after a reload too.
    fn interrupt_threads_of(&mut self, turn_id: &str, cs: &mut ChangeSet) {
        let mut ran: Vec<String> = Vec::new();
        if let Some(turn) = self.turns.get(turn_id) {
            for item in turn.items.values() {
                if let Some(id) = is_subagent(item.thread_id.as_deref()) {
                    if !ran.iter().any(|r| r == id) {
                        ran.push(String::from(id));
                    }
                }
            }
        }
        for thread in self.threads.values() {
            if thread.turn_id == turn_id && !ran.contains(&thread.thread_id) {
                ran.push(thread.thread_id.clone());
            }
        }
        for id in ran {
            self.interrupt_thread(&id, cs);
        }
    }

    /// Inserts or updates a non-message item (same body = no change). Returns its key.
    fn put_item(
        &mut self,
        turn_id: &str,
        id: &str,
        thread_id: Option<&str>,
        created_at: Option<&str>,
        body: ItemBody,
        cs: &mut ChangeSet,
    ) -> Id {
        self.touch_thread(thread_id, turn_id, cs);
        let thread_id = self.thread_ref(thread_id);
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return Id::default();
        };
        let key = if id.is_empty() {
            // No id to merge by: place it after the current last item.
            let n = {
                let live = turn.internal.live_mut();
                live.synthetic_keys += 1;
                live.synthetic_keys
            };
            let last = turn.items.keys().next_back().map_or("", Id::as_str);
            Id::from(format!("{last}~{n:08}"))
        } else {
            turn.items.key(id).cloned().unwrap_or_else(|| Id::from(id))
        };
        match turn.items.get_mut(&key) {
            Some(existing) => {
                if existing.body != body {
                    existing.body = body;
                    existing.version += 1;
                    cs.item(turn_id, &key, existing.version, false);
                }
            }
            None => {
                turn.items.insert(
                    key.clone(),
                    ItemView {
                        key: key.clone(),
                        turn_id: turn.turn_id.clone(),
                        thread_id,
                        version: 1,
                        created_at: created_at.map(Timestamp::new),
                        body,
                    },
                );
                cs.item(turn_id, &key, 1, false);
            }
        }
        key
    }

    pub(super) fn apply_message(
        &mut self,
        turn_id: &str,
        message: &wire::ModelMessage,
        cs: &mut ChangeSet,
    ) -> Result<(), ReduceError> {
        if message.id.is_empty() {
            self.warn(
                Warning::EventSkipped {
                    turn_id: String::from(turn_id),
                    reason: String::from("model.message without an id"),
                },
                cs,
            );
            return Ok(());
        }
        self.touch_thread(message.thread_id.as_deref(), turn_id, cs);
        let thread_id = self.thread_ref(message.thread_id.as_deref());
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return Ok(());
        };
        // The item's key, the map's key and the message's `id` are one `Id`.
        let key = turn
            .items
            .key(&message.id)
            .cloned()
            .unwrap_or_else(|| Id::from(&message.id));
        let placeholder = message.is_placeholder();
        let mut unparsed = Vec::new();
        let mut old_usage = None;
        match turn.items.get_mut(&key) {
            Some(item) => {
                let ItemBody::Message(existing) = &mut item.body else {
                    return Err(mismatch(turn_id, &key, "the id names a non-message item"));
                };
                if let (Some(a), Some(b)) = (&item.thread_id, &message.thread_id) {
                    if a != b {
                        return Err(mismatch(turn_id, &key, "thread_id differs from the base"));
                    }
                }
                if placeholder {
                    return Ok(());
                }
                let (mut full, bad) = merge::from_full(message);
                self.shared.share(&mut full);
                share_call_ids(&self.links, &mut full);
                merge::carry_links(existing, &mut full);
                unparsed = bad;
                if !merge::same_view(existing, &full) {
                    old_usage = Some(existing.usage().cloned());
                    *existing = full;
                    item.version += 1;
                    cs.item(turn_id, &key, item.version, false);
                } else {
                    existing.merged = true;
                    existing.complete = true;
                    return Ok(());
                }
            }
            None => {
                let view = if placeholder {
                    MessageView::new()
                } else {
                    let (mut full, bad) = merge::from_full(message);
                    self.shared.share(&mut full);
                    share_call_ids(&self.links, &mut full);
                    unparsed = bad;
                    old_usage = Some(None);
                    full
                };
                turn.items.insert(
                    key.clone(),
                    ItemView {
                        key: key.clone(),
                        turn_id: turn.turn_id.clone(),
                        thread_id,
                        version: 1,
                        created_at: message.created_at.as_deref().map(Timestamp::new),
                        body: ItemBody::Message(view),
                    },
                );
                cs.item(turn_id, &key, 1, false);
                let held = turn.internal.take_held(&key);
                if placeholder {
                    for delta in held.into_iter().flatten() {
                        self.apply_delta(turn_id, delta, cs)?;
                    }
                }
            }
        }
        for tool_call_id in unparsed {
            self.warn(
                Warning::ArgumentsUnparsed {
                    turn_id: String::from(turn_id),
                    message_id: String::from(&key),
                    tool_call_id,
                },
                cs,
            );
        }
        if let Some(old) = old_usage {
            self.message_usage_changed(turn_id, &key, old, cs);
        }
        self.relink_message(turn_id, &key, cs);
        Ok(())
    }

    pub(super) fn apply_delta(
        &mut self,
        turn_id: &str,
        delta: wire::MessageDelta,
        cs: &mut ChangeSet,
    ) -> Result<(), ReduceError> {
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return Ok(());
        };
        let key = delta.id.clone();
        let Some(item) = turn.items.get_mut(&key) else {
            // Orphan: hold until the base arrives (FIELD C9); counted by the event cap.
            turn.internal
                .live_mut()
                .held_deltas
                .get_or_insert_with(&key, Vec::new)
                .push(delta);
            return Ok(());
        };
        let ItemBody::Message(message) = &mut item.body else {
            return Err(mismatch(turn_id, &key, "the id names a non-message item"));
        };
        if let (Some(a), Some(b)) = (&item.thread_id, &delta.thread_id) {
            if a != b {
                return Err(mismatch(turn_id, &key, "thread_id differs from the base"));
            }
        }
        if message.merged {
            // The merged message already holds everything its deltas carry.
            return Ok(());
        }
        let content = match &delta.content {
            Some(wire::Content::Text(t)) => Some(t.as_str()),
            _ => None,
        };
        let incoming = super::live::delta_text_bytes(
            content,
            delta.reasoning_content.as_deref(),
            delta.refusal.as_deref(),
        );
        if let Some((bound, limit_bytes)) = super::live::text_bound(
            &self.config,
            super::live::message_text_bytes(message),
            turn.internal.text_bytes(),
            incoming,
        ) {
            turn.internal.live_mut().text_limited = true;
            return Err(ReduceError::TextTooLong {
                turn_id: String::from(turn_id),
                event_id: key,
                bound,
                limit_bytes,
            });
        }
        let live = turn.internal.live_mut();
        live.text_bytes = live.text_bytes.saturating_add(incoming);
        let fx = merge::apply_delta(message, &delta);
        if delta.tool_calls.is_some() || delta.finish_reason.is_some() {
            self.shared.share(message);
        }
        if fx.changed {
            item.version += 1;
            cs.item(turn_id, &key, item.version, false);
        }
        let pending_call = fx.changed
            && delta.tool_calls.is_some()
            && message
                .tool_calls()
                .iter()
                .any(|c| self.required_history.contains_key(&c.tool_call_id));
        for tool_call_id in fx.unparsed {
            self.warn(
                Warning::ArgumentsUnparsed {
                    turn_id: String::from(turn_id),
                    message_id: key.clone(),
                    tool_call_id,
                },
                cs,
            );
        }
        if let Some(old) = fx.usage_changed {
            self.message_usage_changed(turn_id, &key, old, cs);
        }
        if fx.call_ids_changed {
            self.relink_message(turn_id, &key, cs);
        }
        if pending_call {
            self.pending_dirty = true;
        }
        Ok(())
    }

    fn apply_tool_response(&mut self, turn_id: &str, r: &wire::ToolResponse, cs: &mut ChangeSet) {
        let content: Box<str> = match &r.content {
            Value::String(text) => Box::from(text.as_str()),
            Value::Null => Box::default(),
            // The SDK's encoder, not `Value`'s `Display` (serde_json's serializer): the same
            // compact text.
            other => crate::wire::write::to_string(other).into_boxed_str(),
        };
        let call = self.call_site(&r.tool_call_id);
        // Shared with the index entry (and so the call) when the call or a result is known.
        let tool_call_id = self
            .links
            .key(&r.tool_call_id)
            .cloned()
            .unwrap_or_else(|| Id::from(&r.tool_call_id));
        let body = ItemBody::ToolResult(ToolResultView {
            tool_call_id: tool_call_id.clone(),
            content,
            call_message_id: call.as_ref().map(|c| c.1.clone()),
            call_turn_id: call.as_ref().map(|c| c.0.clone()),
        });
        let key = self.put_item(
            turn_id,
            &r.id,
            r.thread_id.as_deref(),
            r.created_at.as_deref(),
            body,
            cs,
        );
        if self.link(&r.tool_call_id, RefKind::ToolResult).is_none() {
            if let Some(at) = self.item_ref(turn_id, &key) {
                self.set_link(&tool_call_id, RefKind::ToolResult, Some(at));
            }
            if let Some((call_turn, call_key)) = call {
                self.relink_message(&call_turn, &call_key, cs);
            }
        }
    }

    fn apply_required(&mut self, turn_id: &str, event: &wire::Event, cs: &mut ChangeSet) {
        let Some((body, created_at)) = self.required_body(turn_id, event) else {
            return;
        };
        let id = event.id().unwrap_or("");
        let thread = event.thread_id();
        let key = self.put_item(turn_id, id, thread, created_at, body, cs);
        let is_new = self.turns.get_keyed(turn_id, turn_key).is_some_and(|turn| {
            let required = turn.internal.required();
            required
                .binary_search_by(|(k, _)| k.as_str().cmp(&key))
                .is_err()
        });
        if is_new {
            // The first record of an event id wins; built again rather than cloned (rare).
            if let Some((body, _)) = self.required_body(turn_id, event) {
                if let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) {
                    let required = &mut turn.internal.live_mut().required;
                    if let Err(at) = required.binary_search_by(|(k, _)| k.as_str().cmp(&key)) {
                        let record = RequiredRecord {
                            thread_id: thread.map(String::from),
                            body,
                        };
                        required.insert(at, (String::from(&key), record));
                    }
                }
                self.refresh_status(turn_id, cs);
            }
        }
        self.pending_dirty = true;
    }

    /// The item body of a `*_required` event (and its `created_at`); records which turns named
    /// each tool call. `None` for other event types.
    fn required_body<'e>(
        &mut self,
        turn_id: &str,
        event: &'e wire::Event,
    ) -> Option<(ItemBody, Option<&'e str>)> {
        match event {
            wire::Event::ToolApprovalRequired(e) | wire::Event::ToolResponseRequired(e) => {
                let action = if matches!(event, wire::Event::ToolApprovalRequired(_)) {
                    PendingKind::ToolApproval
                } else {
                    PendingKind::ToolResponse
                };
                for call in &e.tool_calls {
                    let turns = self.required_history.get_or_insert_with(&call.id, Vec::new);
                    if !turns.iter().any(|t| t == turn_id) {
                        turns.push(String::from(turn_id));
                    }
                }
                let tool_calls = e
                    .tool_calls
                    .iter()
                    .map(|c| RequiredCallView {
                        tool_call_id: c.id.clone(),
                        source_event_id: c.source_event_id.clone(),
                    })
                    .collect();
                Some((
                    ItemBody::ActionRequired { action, tool_calls },
                    e.created_at.as_deref(),
                ))
            }
            wire::Event::McpAuthRequired(e) => {
                let servers = e
                    .mcp_servers
                    .iter()
                    .map(|s| McpAuthServerView {
                        id: s.id.clone(),
                        name: s.name.clone(),
                        auth_url: s.auth_url.clone(),
                    })
                    .collect();
                Some((
                    ItemBody::McpAuthRequired { servers },
                    e.created_at.as_deref(),
                ))
            }
            _ => None,
        }
    }

    fn bind_thread(
        &mut self,
        thread_id: &str,
        parent: Option<&wire::ThreadParent>,
        cs: &mut ChangeSet,
    ) {
        let Some(parent) = parent else { return };
        let Some(thread) = self.threads.get_mut(thread_id) else {
            return;
        };
        let mut changed = false;
        if thread.parent_thread_id.is_none() && parent.thread_id.is_some() {
            thread.parent_thread_id = parent.thread_id.clone();
            changed = true;
        }
        if thread.parent_tool_call_id.is_none() {
            if let Some(call_id) = &parent.tool_call_id {
                thread.parent_tool_call_id = Some(call_id.clone());
                changed = true;
                let list = self.spawned.get_or_insert_with(call_id, Vec::new);
                if !list.iter().any(|t| t == thread_id) {
                    list.push(String::from(thread_id));
                }
                if let Some((call_turn, call_key)) = self.call_site(call_id) {
                    self.relink_message(&call_turn, &call_key, cs);
                }
            }
        }
        if changed {
            if let Some(thread) = self.threads.get_mut(thread_id) {
                thread.version += 1;
            }
            cs.threads_changed = true;
        }
    }

    fn apply_thread_created(&mut self, turn_id: &str, e: &wire::ThreadCreated, cs: &mut ChangeSet) {
        let parent = e.parent.as_ref();
        let body = ItemBody::ThreadCreated {
            title: e.title.as_deref().map(TextBuf::from),
            parent_thread_id: parent.and_then(|p| p.thread_id.as_deref().map(TextBuf::from)),
            parent_tool_call_id: parent.and_then(|p| p.tool_call_id.as_deref().map(TextBuf::from)),
            agent_name: e
                .agent_info
                .as_ref()
                .map(|a| TextBuf::from(a.name.as_str())),
        };
        self.put_item(
            turn_id,
            &e.id,
            e.thread_id.as_deref(),
            e.created_at.as_deref(),
            body,
            cs,
        );
        let Some(thread_id) = is_subagent(e.thread_id.as_deref()) else {
            return;
        };
        if let Some(thread) = self.threads.get_mut(thread_id) {
            let before = thread.clone();
            thread.placeholder = false;
            if thread.title.is_none() {
                thread.title = e.title.clone();
            }
            if thread.agent_name.is_none() {
                thread.agent_name = e.agent_info.as_ref().map(|a| a.name.clone());
            }
            if *thread != before {
                thread.version += 1;
                cs.threads_changed = true;
            }
        }
        let thread_id = String::from(thread_id);
        self.bind_thread(&thread_id, e.parent.as_ref(), cs);
    }

    fn apply_thread_done(
        &mut self,
        turn_id: &str,
        e: &wire::ThreadDone,
        cs: &mut ChangeSet,
    ) -> Result<(), ReduceError> {
        let body = ItemBody::ThreadDone {
            title: e.title.as_deref().map(TextBuf::from),
            status: TextBuf::from(e.state.status.as_str()),
            error: e.state.error.clone().map(Box::new),
            output_message_id: e
                .state
                .output
                .as_ref()
                .map(|m| TextBuf::from(m.id.as_str())),
        };
        self.put_item(
            turn_id,
            &e.id,
            e.thread_id.as_deref(),
            e.created_at.as_deref(),
            body,
            cs,
        );
        if let Some(thread_id) = is_subagent(e.thread_id.as_deref()) {
            let thread_id = String::from(thread_id);
            if let Some(thread) = self.threads.get_mut(&thread_id) {
                let before = thread.clone();
                thread.status = if e.state.status == "done" {
                    ThreadStatus::Done
                } else {
                    ThreadStatus::Error
                };
                if thread.title.is_none() {
                    thread.title = e.title.clone();
                }
                if let Some(out) = &e.state.output {
                    thread.output_message_id = Some(out.id.clone());
                }
                if *thread != before {
                    thread.version += 1;
                    cs.threads_changed = true;
                }
            }
            self.bind_thread(&thread_id, e.parent.as_ref(), cs);
        }
        if let Some(output) = &e.state.output {
            self.apply_message(turn_id, output, cs)?;
        }
        Ok(())
    }

    /// Applies a turn state: first terminal state wins (PROTOCOL §6).
    pub(super) fn apply_state(
        &mut self,
        turn_id: &str,
        state: &wire::TurnState,
        from_event: bool,
        cs: &mut ChangeSet,
    ) {
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return;
        };
        if from_event {
            turn.internal.done_event_seen = true;
        }
        if turn.internal.terminal || !state.is_terminal() {
            return;
        }
        turn.internal.terminal = true;
        if let Some(m) = state.metrics() {
            // The totals go straight into the turn's usage (announced by the header bump
            // below); only the breakdown follows the messages from now on.
            turn.internal.has_metrics = true;
            let breakdown = turn.usage.get().breakdown;
            turn.usage = PackedUsage::from_view(&UsageView {
                input_tokens: m.total_input_tokens,
                output_tokens: m.total_output_tokens,
                total_tokens: m.total_tokens,
                cache_read_tokens: m.total_cache_read_tokens.unwrap_or(0),
                cache_write_tokens: m.total_cache_write_tokens.unwrap_or(0),
                reasoning_tokens: m.total_reasoning_tokens.unwrap_or(0),
                cost_usd: m.total_cost_in_usd,
                breakdown,
            });
            self.usage_dirty = true;
        }
        match state {
            wire::TurnState::Done(done) => {
                turn.completed_at = done.completed_at.as_deref().map(Timestamp::new);
            }
            wire::TurnState::Cancelled(c) => {
                turn.status = TurnStatus::Cancelled;
                turn.internal.live_mut().cancel_reason = Some(TextBuf::from(c.reason.as_str()));
                turn.completed_at = c.completed_at.as_deref().map(Timestamp::new);
            }
            wire::TurnState::Error(e) => {
                turn.status = TurnStatus::Error;
                turn.internal.live_mut().error_message = Some(TextBuf::from(e.message.as_str()));
                turn.completed_at = e.completed_at.as_deref().map(Timestamp::new);
            }
            _ => {}
        }
        turn.version += 1;
        cs.turn(turn_id);
        if let wire::TurnState::Done(done) = state {
            if let Some(output) = &done.output {
                if let Err(err) = self.apply_message(turn_id, output, cs) {
                    let reason = err.to_string();
                    self.warn(
                        Warning::EventSkipped {
                            turn_id: String::from(turn_id),
                            reason,
                        },
                        cs,
                    );
                }
            }
            for action in &done.required_actions {
                self.apply_required(turn_id, action, cs);
            }
        }
        // Before `finalize`, which drops the empty placeholders that may be all a thread has
        // in this turn.
        if self.turn_interrupted(turn_id) {
            self.interrupt_threads_of(turn_id, cs);
        }
        self.finalize(turn_id, cs);
        if let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) {
            // A live turn's items all arrived before its end: its map stops growing here.
            turn.items.shrink_to_fit();
        }
        self.refresh_status(turn_id, cs);
        self.recompute_turn_usage(turn_id, cs);
        self.pending_dirty = true;
    }

    /// End-of-turn clean-up: orphan deltas, unfinished messages, uncertain calls.
    fn finalize(&mut self, turn_id: &str, cs: &mut ChangeSet) {
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return;
        };
        let held = turn.internal.take_all_held();
        let interrupted = matches!(turn.status, TurnStatus::Cancelled | TurnStatus::Error);
        let mut stopped: Vec<StoppedMessage> = Vec::new();
        if interrupted {
            // Keep what streamed (the user was reading it), marked so the app can say
            // "stopped"; the server's history will not have it (PROTOCOL §9).
            for (key, item) in turn.items.iter_mut() {
                let ItemBody::Message(m) = &mut item.body else {
                    continue;
                };
                if m.complete || m.interrupted {
                    continue;
                }
                m.interrupted = true;
                let calls = m
                    .tool_calls()
                    .iter()
                    .map(|c| c.tool_call_id.clone())
                    .collect();
                stopped.push(StoppedMessage {
                    message_id: key.clone(),
                    thread_id: item.thread_id.clone(),
                    usage: m.set_usage(None).map(|u| u.get()),
                    calls,
                    removed: false,
                });
                item.version += 1;
                cs.item(turn_id, key, item.version, false);
            }
            // An empty placeholder (an error turn leaves one, PROTOCOL §9) showed nothing: it
            // goes, as in the server's history.
            let empty: Vec<Id> = stopped
                .iter()
                .filter(|s| {
                    matches!(turn.items.get(&s.message_id).map(|i| &i.body), Some(ItemBody::Message(m))
                        if m.content.is_none() && m.reasoning().is_none() && m.refusal().is_none()
                        && m.tool_calls().is_empty())
                })
                .map(|s| s.message_id.clone())
                .collect();
            for key in empty {
                if let Some(item) = turn.items.remove(&key) {
                    cs.item(turn_id, &key, item.version + 1, true);
                }
                if let Some(s) = stopped.iter_mut().find(|s| s.message_id == key) {
                    s.removed = true;
                }
            }
        }
        let message_keys: Vec<Id> = turn
            .items
            .iter()
            .filter(|(_, item)| matches!(&item.body, ItemBody::Message(m) if !m.interrupted))
            .map(|(k, _)| k.clone())
            .collect();
        for (message_id, deltas) in held {
            let count = u64::try_from(deltas.len()).unwrap_or(u64::MAX);
            self.warn(
                Warning::OrphanDeltasDropped {
                    turn_id: String::from(turn_id),
                    message_id: String::from(message_id),
                    count,
                },
                cs,
            );
        }
        for StoppedMessage {
            message_id,
            thread_id,
            usage,
            calls,
            removed,
        } in stopped
        {
            // Its calls were never dispatched: no result will come and none is uncertain.
            for call in calls {
                if self.call_site(&call).is_some_and(|c| c.1 == message_id) {
                    self.set_link(&call, RefKind::Message, None);
                }
            }
            if let Some(usage) = usage {
                self.thread_usage_delta(thread_id.as_deref(), Some(&usage), None, cs);
            }
            let turn_id = String::from(turn_id);
            let message_id = String::from(message_id);
            let warning = if removed {
                Warning::UnfinishedMessageDiscarded {
                    turn_id,
                    message_id,
                }
            } else {
                Warning::UnfinishedMessageInterrupted {
                    turn_id,
                    message_id,
                }
            };
            self.warn(warning, cs);
        }
        for key in message_keys {
            self.relink_message(turn_id, &key, cs);
        }
    }

    /// Recomputes the links of every call of one message (results, spawned threads,
    /// uncertainty) and registers the calls in the index.
    pub(super) fn relink_message(&mut self, turn_id: &str, message_id: &str, cs: &mut ChangeSet) {
        let Some(turn) = self.turns.get_keyed(turn_id, turn_key) else {
            return;
        };
        let Some(item) = turn.items.get(message_id) else {
            return;
        };
        let ItemBody::Message(message) = &item.body else {
            return;
        };
        if message.interrupted {
            // Stopped while streaming: its calls stay out of the index (see `finalize`).
            return;
        }
        let interrupted = turn.internal.terminal
            && matches!(turn.status, TurnStatus::Cancelled | TurnStatus::Error);
        // The message's and the turn's own ids, for the results' links (shared, not copied).
        let (message_key, turn_key) = (item.key.clone(), turn.turn_id.clone());
        // (call position, its result's (turn id, event id), spawned threads, uncertain)
        type Update = (usize, Option<(Id, Id)>, Vec<String>, bool);
        let mut updated: Vec<Update> = Vec::new();
        let mut new_ids: Vec<Id> = Vec::new();
        for (i, call) in message.tool_calls().iter().enumerate() {
            if call.tool_call_id.is_empty() {
                continue;
            }
            if self.link(&call.tool_call_id, RefKind::Message).is_none() {
                new_ids.push(call.tool_call_id.clone());
            }
            let result = self.result_site(&call.tool_call_id);
            let spawned = self
                .spawned
                .get(&call.tool_call_id)
                .cloned()
                .unwrap_or_default();
            let uncertain = interrupted
                && result.is_none()
                && !self.required_history.contains_key(&call.tool_call_id);
            let same = call.result_event_id.as_ref() == result.as_ref().map(|r| &r.1)
                && call.result_turn_id.as_ref() == result.as_ref().map(|r| &r.0)
                && call.spawned_thread_ids() == &spawned[..]
                && call.uncertain() == uncertain;
            if !same {
                updated.push((i, result, spawned, uncertain));
            }
        }
        if let Some(at) = self.item_ref(turn_id, message_id) {
            for id in &new_ids {
                self.set_link(id, RefKind::Message, Some(at));
            }
        }
        // Results that arrived before their call (listing order) now have a call: mark them.
        for id in &new_ids {
            if let Some((at_turn, at_key)) = self.result_site(id) {
                if let Some(item) = self
                    .turns
                    .get_mut(&at_turn)
                    .and_then(|t| t.items.get_mut(&at_key))
                {
                    if let ItemBody::ToolResult(r) = &mut item.body {
                        if r.call_message_id.is_none() {
                            r.call_message_id = Some(message_key.clone());
                            r.call_turn_id = Some(turn_key.clone());
                            item.version += 1;
                            cs.item(&at_turn, &at_key, item.version, false);
                        }
                    }
                }
            }
        }
        if !new_ids.is_empty()
            && new_ids
                .iter()
                .any(|id| self.required_history.contains_key(id))
        {
            self.pending_dirty = true;
        }
        if updated.is_empty() {
            return;
        }
        let Some(item) = self
            .turns
            .get_mut(turn_id)
            .and_then(|t| t.items.get_mut(message_id))
        else {
            return;
        };
        let ItemBody::Message(message) = &mut item.body else {
            return;
        };
        for (i, result, spawned, uncertain) in updated {
            if let Some(call) = message.tool_calls_mut().get_mut(i) {
                call.result_event_id = result.as_ref().map(|r| r.1.clone());
                call.result_turn_id = result.map(|r| r.0);
                call.set_spawned_thread_ids(spawned.into_boxed_slice());
                call.set_uncertain(uncertain);
            }
        }
        item.version += 1;
        cs.item(turn_id, message_id, item.version, false);
    }

    /// Status from the terminal state and the required set (paused = done + required).
    pub(super) fn refresh_status(&mut self, turn_id: &str, cs: &mut ChangeSet) {
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return;
        };
        if !turn.internal.terminal {
            return;
        }
        if matches!(turn.status, TurnStatus::Cancelled | TurnStatus::Error) {
            return;
        }
        let status = if turn.internal.required().is_empty() {
            TurnStatus::Done
        } else {
            TurnStatus::Paused
        };
        if turn.status != status {
            turn.status = status;
            turn.version += 1;
            cs.turn(turn_id);
        }
    }

    fn message_usage_changed(
        &mut self,
        turn_id: &str,
        message_id: &str,
        old: Option<PackedUsage>,
        cs: &mut ChangeSet,
    ) {
        let Some(item) = self
            .turns
            .get(turn_id)
            .and_then(|t| t.items.get(message_id))
        else {
            return;
        };
        let ItemBody::Message(message) = &item.body else {
            return;
        };
        let new = message.usage().map(PackedUsage::get);
        let old = old.as_ref().map(PackedUsage::get);
        let thread = item.thread_id.clone();
        self.thread_usage_delta(thread.as_deref(), old.as_ref(), new.as_ref(), cs);
        self.recompute_turn_usage(turn_id, cs);
    }

    fn thread_usage_delta(
        &mut self,
        thread_id: Option<&str>,
        old: Option<&UsageView>,
        new: Option<&UsageView>,
        cs: &mut ChangeSet,
    ) {
        let Some(thread_id) = is_subagent(thread_id) else {
            return;
        };
        let Some(thread) = self.threads.get_mut(thread_id) else {
            return;
        };
        if let Some(old) = old {
            thread.usage.sub(old);
        }
        if let Some(new) = new {
            thread.usage.add(new);
        }
        thread.version += 1;
        cs.threads_changed = true;
    }

    /// Turn usage: metrics when present (breakdown from messages), else the message sum.
    /// O(items); runs once per finished message and at the terminal state.
    fn recompute_turn_usage(&mut self, turn_id: &str, cs: &mut ChangeSet) {
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return;
        };
        let mut sum = UsageView::default();
        for item in turn.items.values() {
            if let Some(u) = match &item.body {
                ItemBody::Message(m) => m.usage(),
                _ => None,
            } {
                sum.add(&u.get());
            }
        }
        let usage = PackedUsage::from_view(&if turn.internal.has_metrics {
            // The totals are the turn's metrics; the breakdown can only come from the messages.
            // When those count more input than the metrics do (a turn cut short: its metrics
            // leave out what streamed), the parts would exceed the whole — a trial read "Input
            // 4,148" over parts adding up to 6,208 — so the breakdown is unknown (zero) then.
            let totals = turn.usage.get();
            UsageView {
                breakdown: if sum.breakdown.total() <= totals.input_tokens {
                    sum.breakdown
                } else {
                    BreakdownView::default()
                },
                ..totals
            }
        } else {
            sum
        });
        if turn.usage != usage {
            turn.usage = usage;
            turn.version += 1;
            cs.turn(turn_id);
            self.usage_dirty = true;
        }
    }
}

/// A message still streaming when its turn was cancelled or failed (kept, marked interrupted).
struct StoppedMessage {
    message_id: Id,
    thread_id: Option<Id>,
    usage: Option<UsageView>,
    calls: Vec<Id>,
    /// It was an empty placeholder and was removed instead.
    removed: bool,
}

/// Gives `message`'s calls the `tool_call_id` their result already holds (the `links` index's
/// key, shared with the result item), when the result came first: a listing is read newest
/// first, so a call's result usually arrives before it.
fn share_call_ids(links: &IdMap<super::CallLinks>, message: &mut MessageView) {
    for call in message.tool_calls_mut() {
        if let Some(id) = links.key(&call.tool_call_id) {
            call.tool_call_id = id.clone();
        }
    }
}

fn mismatch(turn_id: &str, event_id: &str, reason: &str) -> ReduceError {
    ReduceError::DeltaMismatch {
        turn_id: String::from(turn_id),
        event_id: String::from(event_id),
        reason: String::from(reason),
    }
}
