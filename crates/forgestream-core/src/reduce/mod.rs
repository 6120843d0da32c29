//! The session reducer: [`SessionView`] folds live frames, persisted listings and fetched turns
//! into one view of a session (DESIGN.md "Core invariants"; PROTOCOL §5–§9).
//!
//! - Dedupe live frames by sequence number per turn (a high-water mark: O(1) state); merge by
//!   event id. A frame without a sequence number is applied.
//! - Items of a turn are ordered by event id (ULIDs sort by creation time, PROTOCOL §1), so the
//!   live stream, a turn listing (oldest first) and session timeline pages (newest first, any
//!   page order) give the same order.
//! - A delta never becomes an item; an orphan delta is held until its base arrives and dropped
//!   with a warning when the turn ends (FIELD C9). A merged `model.message` replaces the
//!   assembled one; deltas for a merged message are ignored (a replay cannot double text).
//! - Turn lifecycle is keyed by turn id; the first terminal state wins; live events after an
//!   applied `turn.done` are ignored with a warning; a frozen `cancelled-for-next-turn` turn's
//!   late deltas are ignored silently (PROTOCOL §9).
//! - When a turn ends cancelled or in error, messages still streaming are removed (the
//!   server's persisted history drops them, so live and persisted views agree), and tool calls
//!   left with neither result nor pending action are marked `uncertain`.

mod args;
mod arguments_text;
mod change;
mod dispatch;
mod encode;
mod frame;
mod live;
mod merge;
mod message;
mod packed_usage;
mod pending;
mod shared;
mod summary;
mod text_buf;
mod timestamp;
mod tool_call;
mod turn;
mod view;

use crate::id::Id;
use crate::id_map::IdMap;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::num::NonZeroU32;

pub use arguments_text::ArgumentsText;
pub use change::{ChangeSet, ItemChange, ReduceError, TextAppend, Warning};
pub use frame::{LiveFrame, TurnFlags};
pub use message::MessageView;
pub use packed_usage::PackedUsage;
pub use summary::Digest;
pub use text_buf::TextBuf;
pub use timestamp::Timestamp;
pub use tool_call::ToolCallView;
pub use turn::TurnView;
pub use view::{
    BreakdownView, ContentPartView, ContentView, ItemBody, ItemView, McpAuthServerView,
    McpServerView, PendingAction, PendingKind, QuestionView, RequiredCallView, ThreadStatus,
    ThreadView, ToolInfoView, ToolResultView, TurnStatus, UsageView,
};

use crate::wire;

/// Reducer limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReducerConfig {
    /// Events accepted per turn before [`ReduceError::EventCapExceeded`], counted apart for
    /// live frames (after dedupe) and listing events; `turn.done` is never refused.
    /// Default 1,000,000.
    pub max_events_per_turn: usize,
    /// Warnings kept on the view (older ones are discarded; the count keeps growing).
    /// Default 256.
    pub max_kept_warnings: usize,
    /// Bytes of streamed text (content + reasoning + refusal, UTF-8) one message may grow to
    /// through deltas; a delta past it is refused with [`ReduceError::TextTooLong`] and the
    /// message keeps what it had. Default 64 MiB.
    pub max_message_text_bytes: usize,
    /// The same bound for all streamed text of one turn. Default 256 MiB (a browser tab dies
    /// near 1 GB of strings: "Invalid string length").
    pub max_turn_text_bytes: usize,
}

impl Default for ReducerConfig {
    fn default() -> Self {
        ReducerConfig {
            max_events_per_turn: 1_000_000,
            max_kept_warnings: 256,
            max_message_text_bytes: 64 << 20,
            max_turn_text_bytes: 256 << 20,
        }
    }
}

/// Where an item lives (for a tool call: its message), as slot numbers ([`IdMap::slot_of`]) of
/// [`SessionView`]'s turns and of that turn's items: 8 bytes and no heap, where the two ids it
/// held were ~110 bytes a tool call in each of two indexes (W2: ~5 MB). Slots stay valid
/// because turns are never removed and the only item ever removed (an empty stopped
/// placeholder, `finalize`) has no tool calls to be indexed; [`SessionView::item_at`] still
/// checks the kind of what it finds, so a stale slot reads as absent, never as another item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ItemRef {
    /// The turn's slot plus one: never zero, so an `Option<ItemRef>` is 8 bytes, not 12 (the
    /// `links` index holds two of them for each of W2's 23k calls).
    turn: NonZeroU32,
    item: u32,
}

/// Where a tool call's proposing message and its first result are (either may be unknown yet;
/// an entry with neither is removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct CallLinks {
    /// The proposing message (the [`RefKind::Message`] link).
    call: Option<ItemRef>,
    /// The first `tool.response` (the [`RefKind::ToolResult`] link).
    result: Option<ItemRef>,
}

impl CallLinks {
    fn of_kind(&mut self, kind: RefKind) -> &mut Option<ItemRef> {
        match kind {
            RefKind::Message => &mut self.call,
            RefKind::ToolResult => &mut self.result,
        }
    }
}

/// Which kind of item an [`ItemRef`] must name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefKind {
    /// A message (a call's link in the `links` index).
    Message,
    /// A tool result (a result's link in the `links` index).
    ToolResult,
}

/// A turn's own id, for [`IdMap::get_keyed`] over the turns (boxed in the map).
#[allow(clippy::borrowed_box)]
fn turn_key(turn: &Box<TurnView>) -> &[u8] {
    turn.turn_id.as_bytes()
}

/// An item's own id (its key), for [`IdMap::get_keyed`] over a turn's items.
fn item_key(item: &ItemView) -> &[u8] {
    item.key.as_bytes()
}

/// The whole session as a UI renders it. See the module docs for the rules.
#[derive(Debug, Clone)]
pub struct SessionView {
    session_id: String,
    config: ReducerConfig,
    /// Turns by id. Boxed: the map's slots grow by half, and a spare slot of a ~420-byte turn
    /// record cost more than the pointer (W2: ~1.1 MB of spare slots for 15k turns).
    turns: IdMap<Box<TurnView>>,
    /// Turn ids in chain order.
    order: Vec<Id>,
    threads: IdMap<ThreadView>,
    pending: Vec<PendingAction>,
    usage: UsageView,
    warnings: Vec<Warning>,
    warning_count: u64,
    /// `tool_call_id` → proposing message and first `tool.response`: one index for both (a
    /// second B-tree of the same ids was ~0.7 MB of W2's view).
    links: IdMap<CallLinks>,
    /// `tool_call_id` → threads it spawned.
    spawned: IdMap<Vec<String>>,
    /// `tool_call_id` → turns whose `*_required` events named it (to tell stale from unknown).
    required_history: IdMap<Vec<String>>,
    /// `main`, shared by the items of the root thread (nearly all of them).
    main_thread: Id,
    /// Tool names and infos, finish reasons: kept once for the messages that repeat them.
    shared: shared::Shared,
    pending_dirty: bool,
    /// Turns were added or relinked since the chain order was computed.
    order_dirty: bool,
    usage_dirty: bool,
}

impl SessionView {
    /// An empty view of session `session_id`.
    pub fn new(session_id: &str, config: ReducerConfig) -> Self {
        SessionView {
            session_id: String::from(session_id),
            config,
            turns: IdMap::new(),
            order: Vec::new(),
            threads: IdMap::new(),
            pending: Vec::new(),
            usage: UsageView::default(),
            warnings: Vec::new(),
            warning_count: 0,
            links: IdMap::new(),
            spawned: IdMap::new(),
            required_history: IdMap::new(),
            main_thread: Id::from("main"),
            shared: shared::Shared::default(),
            pending_dirty: false,
            order_dirty: false,
            usage_dirty: false,
        }
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// One live SSE frame of `turn_id`'s stream (PROTOCOL §3, §5). `sequence_number` is the
    /// frame's own SSE `id` parsed as u64 (`None` when the frame had no id line: applied).
    /// Frames at or below the turn's high-water mark are skipped (empty change set).
    ///
    /// Errors: [`ReduceError::MalformedJson`] (bad JSON or a known type with a bad shape),
    /// [`ReduceError::EventCapExceeded`], [`ReduceError::DeltaMismatch`],
    /// [`ReduceError::TurnMismatch`]. The frame's sequence number counts as processed either way.
    pub fn apply_live(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        data: &str,
    ) -> Result<ChangeSet, ReduceError> {
        let mut cs = ChangeSet::default();
        self.apply_live_into(turn_id, sequence_number, data, &mut cs)?;
        cs.normalize();
        Ok(cs)
    }

    /// [`Self::apply_live`], recording into `changes` (a set accumulated over many frames, e.g.
    /// until the UI next drains it) instead of a new set per frame: a burst of deltas on one
    /// message then costs no allocation for the change set. `changes` is not normalized; call
    /// [`ChangeSet::normalize`] once when consuming it, as after [`ChangeSet::merge`].
    ///
    /// On an error, what the frame changed before the error (a new turn, a sequence gap
    /// warning) stays recorded in `changes`.
    ///
    /// # Errors
    ///
    /// As [`Self::apply_live`].
    pub fn apply_live_into(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        data: &str,
        changes: &mut ChangeSet,
    ) -> Result<(), ReduceError> {
        // Hot path: a text-only delta is applied from borrowed text (see `live`), admitted and
        // applied on one turn lookup when nothing else happens.
        let text = wire::fast::text_delta(data);
        if let Some(delta) = &text {
            if self
                .apply_text_delta_hot(turn_id, sequence_number, delta, changes)
                .is_some()
            {
                self.settle(changes);
                return Ok(());
            }
        }
        self.apply_live_general(turn_id, sequence_number, data, text, changes)
    }

    /// [`Self::apply_live_into`] for a frame the hot path left alone (`text`: the frame as a
    /// text-only delta, if it is one).
    fn apply_live_general(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        data: &str,
        text: Option<wire::fast::TextDelta<'_>>,
        changes: &mut ChangeSet,
    ) -> Result<(), ReduceError> {
        if !self.admit(turn_id, sequence_number, changes) {
            return Ok(());
        }
        let result = match text {
            Some(delta) => self.apply_text_delta(turn_id, delta, changes),
            None => match wire::Event::from_json(data) {
                Ok(event) => self.apply_live_event(turn_id, event, changes),
                Err(err) => {
                    let (line, column) = err.line_column(data);
                    Err(ReduceError::MalformedJson {
                        turn_id: String::from(turn_id),
                        sequence_number,
                        line,
                        column,
                        message: alloc::string::ToString::to_string(&err),
                    })
                }
            },
        };
        self.settle(changes);
        result
    }

    /// Same as [`Self::apply_live`] for an already-decoded event.
    pub fn apply_event(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        event: wire::Event,
    ) -> Result<ChangeSet, ReduceError> {
        let mut cs = ChangeSet::default();
        if !self.admit(turn_id, sequence_number, &mut cs) {
            return Ok(ChangeSet::default());
        }
        let result = self.apply_live_event(turn_id, event, &mut cs);
        self.finish(&mut cs);
        result.map(|()| cs)
    }

    /// A turn from `GET …/turns/{tid}` or `GET …/turns` (PROTOCOL §6): chain link, input,
    /// state (first terminal state wins), its `output` message and `required_actions`.
    pub fn apply_turn(&mut self, turn: &wire::Turn) -> ChangeSet {
        self.apply_turns(core::slice::from_ref(turn))
    }

    /// Several turns at once (a `GET …/turns` listing, any order): like [`Self::apply_turn`] for
    /// each, with the chain order, pending set and usage settled once at the end — O(n log n)
    /// for the batch instead of per turn.
    pub fn apply_turns(&mut self, turns: &[wire::Turn]) -> ChangeSet {
        let mut cs = ChangeSet::default();
        for turn in turns {
            self.ensure_turn(&turn.id, &mut cs);
            self.set_turn_header(
                &turn.id,
                turn.previous_turn_id.as_deref(),
                turn.input.as_ref(),
                turn.created_at.as_deref(),
                &mut cs,
            );
            self.apply_state(&turn.id, &turn.state, false, &mut cs);
        }
        self.finish(&mut cs);
        cs
    }

    /// Persisted events of one turn (`GET …/turns/{tid}/events`), oldest first. Events that do
    /// not fit (a delta mismatch, a foreign `turn.created`) are skipped with a warning; the cap
    /// stops the batch with an error (events before it stay applied).
    pub fn apply_turn_events(
        &mut self,
        turn_id: &str,
        events: Vec<wire::Event>,
    ) -> Result<ChangeSet, ReduceError> {
        let mut cs = ChangeSet::default();
        self.ensure_turn(turn_id, &mut cs);
        let mut result = Ok(());
        for event in events {
            if let Err(err) = self.apply_persisted(turn_id, event, &mut cs) {
                result = Err(err);
                break;
            }
        }
        let touched: Vec<u32> = self.turns.slot_of(turn_id).into_iter().collect();
        self.release_item_slack(&touched);
        self.finish(&mut cs);
        result.map(|()| cs)
    }

    /// A page of the session timeline (`GET /sessions/{sid}/events`: items `{turn_id, event}`,
    /// newest first by default; any order and any page order give the same view). Takes any
    /// iterator, so several pages apply in one call (one ordering pass) without first being
    /// copied into one vector.
    pub fn apply_session_events(
        &mut self,
        items: impl IntoIterator<Item = wire::SessionEventItem>,
    ) -> Result<ChangeSet, ReduceError> {
        let mut cs = ChangeSet::default();
        let mut result = Ok(());
        // The turns the batch added items to (slots; neighbours repeat, so only runs are kept).
        let mut touched: Vec<u32> = Vec::new();
        for item in items {
            self.ensure_turn(&item.turn_id, &mut cs);
            if let Some(slot) = self.turns.slot_of(&item.turn_id) {
                if touched.last() != Some(&slot) {
                    touched.push(slot);
                }
            }
            if let Err(err) = self.apply_persisted(&item.turn_id, item.event, &mut cs) {
                result = Err(err);
                break;
            }
        }
        self.release_item_slack(&touched);
        self.finish(&mut cs);
        result.map(|()| cs)
    }

    /// Whether a live event of `turn_id` was refused by
    /// [`ReducerConfig::max_events_per_turn`] (its live view is incomplete: rebuild it from the
    /// listings once it ended).
    pub fn event_cap_reached(&self, turn_id: &str) -> bool {
        self.turns
            .get_keyed(turn_id, turn_key)
            .is_some_and(|t| t.internal.capped())
    }

    /// Whether a delta of `turn_id` was refused by the text bounds
    /// ([`ReducerConfig::max_message_text_bytes`], [`ReducerConfig::max_turn_text_bytes`]).
    pub fn text_limit_reached(&self, turn_id: &str) -> bool {
        self.turns
            .get(turn_id)
            .is_some_and(|t| t.internal.text_limited())
    }

    /// The highest live sequence number applied for `turn_id` (the reconnect cursor).
    pub fn last_sequence_number(&self, turn_id: &str) -> Option<u64> {
        self.turns
            .get_keyed(turn_id, turn_key)
            .and_then(|t| t.last_sequence_number())
    }

    /// One turn.
    pub fn turn(&self, turn_id: &str) -> Option<&TurnView> {
        self.turns.get_keyed(turn_id, turn_key).map(|t| &**t)
    }

    /// Turns in chain order (`previous_turn_id` links; unrelated turns by id).
    pub fn turns(&self) -> impl Iterator<Item = &TurnView> + '_ {
        // Plain lookups: each names another turn, so the remembered slot would only cost a
        // compare that fails (and would forget the live turn's slot).
        self.order
            .iter()
            .filter_map(move |id| self.turns.get(id).map(|t| &**t))
    }

    /// Turn ids in chain order.
    pub fn turn_ids(&self) -> &[Id] {
        &self.order
    }

    /// The newest turn in chain order.
    pub fn newest_turn(&self) -> Option<&TurnView> {
        self.order.last().and_then(|id| self.turn(id))
    }

    /// One item of a turn by key (event id).
    pub fn item(&self, turn_id: &str, key: &str) -> Option<&ItemView> {
        self.turns
            .get_keyed(turn_id, turn_key)
            .and_then(|t| t.items.get(key))
    }

    /// Subagent threads by id.
    pub fn threads(&self) -> &IdMap<ThreadView> {
        &self.threads
    }

    /// One thread.
    pub fn thread(&self, thread_id: &str) -> Option<&ThreadView> {
        self.threads.get(thread_id)
    }

    /// The live pending set: the newest turn's required actions, keyed by
    /// (thread, tool call) and per MCP server.
    pub fn pending_actions(&self) -> &[PendingAction] {
        &self.pending
    }

    /// Session usage totals (sum of turn usage).
    pub fn usage(&self) -> &UsageView {
        &self.usage
    }

    /// Kept warnings (the newest [`ReducerConfig::max_kept_warnings`]).
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// All warnings ever raised.
    pub fn warning_count(&self) -> u64 {
        self.warning_count
    }

    /// The turns whose `*_required` events named `tool_call_id` (oldest first). Used to tell a
    /// stale answer from an unknown one.
    pub fn required_in_turns(&self, tool_call_id: &str) -> &[String] {
        self.required_history
            .get(tool_call_id)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The slots of item `key` of `turn_id`, if both exist.
    pub(crate) fn item_ref(&self, turn_id: &str, key: &str) -> Option<ItemRef> {
        let slot = self.turns.slot_of(turn_id)?;
        let item = self.turns.at(slot)?.items.slot_of(key)?;
        let turn = NonZeroU32::new(slot.checked_add(1)?)?;
        Some(ItemRef { turn, item })
    }

    /// The `kind` link of `tool_call_id` (its message or its first result).
    pub(crate) fn link(&self, tool_call_id: &str, kind: RefKind) -> Option<ItemRef> {
        let links = self.links.get(tool_call_id)?;
        match kind {
            RefKind::Message => links.call,
            RefKind::ToolResult => links.result,
        }
    }

    /// Sets (or, with `None`, clears) the `kind` link of `tool_call_id` (`id`: the shared copy
    /// to index it by when it is new).
    pub(crate) fn set_link(&mut self, id: &Id, kind: RefKind, at: Option<ItemRef>) {
        match self.links.get_mut(id) {
            Some(links) => {
                *links.of_kind(kind) = at;
                if *links == CallLinks::default() {
                    self.links.remove(id);
                }
            }
            None if at.is_some() => {
                let mut links = CallLinks::default();
                *links.of_kind(kind) = at;
                self.links.insert(id.clone(), links);
            }
            None => {}
        }
    }

    /// The item `at` names, with its turn, when it is of `kind`.
    pub(crate) fn item_at(&self, at: ItemRef, kind: RefKind) -> Option<(&TurnView, &ItemView)> {
        let turn = self.turns.at(at.turn.get() - 1)?;
        let item = turn.items.at(at.item)?;
        let fits = matches!(
            (&item.body, kind),
            (ItemBody::Message(_), RefKind::Message)
                | (ItemBody::ToolResult(_), RefKind::ToolResult)
        );
        fits.then_some((turn, item))
    }

    /// (turn id, message id) of the message proposing `tool_call_id`, from the `links` index.
    pub(crate) fn call_site(&self, tool_call_id: &str) -> Option<(Id, Id)> {
        let (turn, item) =
            self.item_at(self.link(tool_call_id, RefKind::Message)?, RefKind::Message)?;
        Some((turn.turn_id.clone(), item.key.clone()))
    }

    /// (turn id, event id) of the first result of `tool_call_id`, from the `links` index.
    pub(crate) fn result_site(&self, tool_call_id: &str) -> Option<(Id, Id)> {
        let at = self.link(tool_call_id, RefKind::ToolResult)?;
        let (turn, item) = self.item_at(at, RefKind::ToolResult)?;
        Some((turn.turn_id.clone(), item.key.clone()))
    }

    /// The tool call with `tool_call_id`, wherever it is.
    pub fn tool_call(&self, tool_call_id: &str) -> Option<&ToolCallView> {
        let at = self.link(tool_call_id, RefKind::Message)?;
        match &self.item_at(at, RefKind::Message)?.1.body {
            ItemBody::Message(m) => m
                .tool_calls()
                .iter()
                .find(|c| c.tool_call_id == tool_call_id),
            _ => None,
        }
    }

    /// Tool results whose call is not known (unmatched), as (turn id, event id).
    pub fn unmatched_tool_results(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for turn in self.turns() {
            for item in turn.items.values() {
                if let ItemBody::ToolResult(r) = &item.body {
                    if r.call_message_id.is_none() {
                        out.push((String::from(&turn.turn_id), String::from(&item.key)));
                    }
                }
            }
        }
        out
    }

    // ---- internals shared by the submodules ----

    /// Gives back the spare capacity of the item maps of the turns in `slots` (turn slots) once
    /// a batch of listing events is applied: a listed turn is (nearly always) complete, and its
    /// map grown by half kept ~0.8 empty item slots of ~300 bytes a turn (W2: ~3.5 MB). A turn
    /// that receives more items later grows again; that costs one reallocation per batch.
    /// A slot named twice costs nothing the second time (the map is then exact): no sort and
    /// dedupe (a sort was ~4 KB of the wasm).
    fn release_item_slack(&mut self, slots: &[u32]) {
        for &slot in slots {
            if let Some(turn) = self.turns.at_mut(slot) {
                turn.items.shrink_to_fit();
            }
        }
    }

    /// The view's copy of thread id `thread`: `main` and known subagent threads share one
    /// [`Id`] (an item's `thread_id` is then a pointer, not a copy of the text).
    fn thread_ref(&self, thread: Option<&str>) -> Option<Id> {
        let thread = thread?;
        if thread == "main" {
            return Some(self.main_thread.clone());
        }
        Some(
            self.threads
                .key(thread)
                .cloned()
                .unwrap_or_else(|| Id::from(thread)),
        )
    }

    /// Creates the turn if needed and applies the sequence-number dedupe. False = skip.
    fn admit(&mut self, turn_id: &str, sequence_number: Option<u64>, cs: &mut ChangeSet) -> bool {
        // One lookup for a known turn (every frame but the first): this runs per live frame.
        if self.turns.get_keyed(turn_id, turn_key).is_none() {
            self.ensure_turn(turn_id, cs);
        }
        let Some(turn) = self.turns.get_keyed_mut(turn_id, turn_key) else {
            return false;
        };
        let Some(n) = sequence_number else {
            return true;
        };
        let hwm = turn.last_sequence_number();
        if hwm.is_some_and(|hwm| n <= hwm) {
            return false;
        }
        let expected = hwm.map_or(1, |hwm| hwm.saturating_add(1));
        turn.set_last_sequence_number(Some(n));
        if n != expected {
            self.warn(
                Warning::SequenceGap {
                    turn_id: String::from(turn_id),
                    expected,
                    received: n,
                },
                cs,
            );
        }
        true
    }

    fn warn(&mut self, warning: Warning, cs: &mut ChangeSet) {
        self.warning_count = self.warning_count.saturating_add(1);
        if self.config.max_kept_warnings > 0 {
            if self.warnings.len() >= self.config.max_kept_warnings {
                self.warnings.remove(0);
            }
            self.warnings.push(warning.clone());
        }
        cs.warnings.push(warning);
    }

    /// Post-processing after every public apply: pending set, usage totals, dedupe changes.
    fn finish(&mut self, cs: &mut ChangeSet) {
        self.settle(cs);
        cs.normalize();
    }

    /// Post-processing after every public apply: chain order, pending set, usage totals.
    fn settle(&mut self, cs: &mut ChangeSet) {
        if self.order_dirty {
            self.order_dirty = false;
            self.reorder(cs);
        }
        if self.pending_dirty {
            self.pending_dirty = false;
            self.rebuild_pending(cs);
        }
        if self.usage_dirty {
            self.usage_dirty = false;
            let mut total = UsageView::default();
            for turn in self.turns.values() {
                total.add(&turn.usage.get());
            }
            if total != self.usage {
                self.usage = total;
                cs.usage_changed = true;
            }
        }
    }
}
