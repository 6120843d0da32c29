//! [`TurnView`]: one turn as the view holds it, and the reducer's bookkeeping for it.

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use serde::{Serialize, Serializer};

use super::packed_usage::PackedUsage;
use super::text_buf::TextBuf;
use super::timestamp::Timestamp;
use super::view::{ItemView, RequiredRecord, TurnStatus};
use crate::id::Id;
use crate::id_map::IdMap;
use crate::wire::{self, JsonText};

/// One turn of the session.
///
/// Serialises (and is declared to TypeScript, in `view.rs`) as the object `{turnId,
/// previousTurnId, status, cancelReason, errorMessage, input, createdAt, completedAt, items,
/// usage, lastSequenceNumber, lateEventsIgnored, version}`. The fields only a live, cancelled
/// or failed turn sets are read through accessors ([`TurnView::cancel_reason`] and the others)
/// from a box a listed turn does not allocate (with the reducer's bookkeeping, `TurnLive`).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnView {
    // Shared with its items and the view's indexes.
    /// Turn id.
    pub turn_id: Id,
    // The parent turn's own `Id` once the chain is ordered (`reorder`): a pointer, where a
    // copy of the text was ~40 bytes of every turn.
    /// Chain parent.
    pub previous_turn_id: Option<Id>,
    /// Status (paused = done with required actions).
    pub status: TurnStatus,
    /// Input items the turn was created with (wire shape), as JSON text (crosses to JS as the
    /// array; [`JsonText::to_value`] parses it).
    pub input: Option<JsonText>,
    /// ISO-8601.
    pub created_at: Option<Timestamp>,
    /// ISO-8601.
    pub completed_at: Option<Timestamp>,
    /// Items in stream order (ordered by event id: ULIDs sort by creation time, §1).
    pub items: IdMap<ItemView>,
    // Packed (`PackedUsage::get` reads it): a `UsageView` inline was 104 bytes of every turn
    // record (W2: 1.6 MB).
    /// Turn usage.
    pub usage: PackedUsage,
    /// Bumped on every header change.
    pub version: u64,
    pub(crate) internal: TurnInternal,
}

impl TurnView {
    /// An empty running turn with id `turn_id` (version 1).
    pub(crate) fn new(turn_id: Id) -> Self {
        TurnView {
            turn_id,
            previous_turn_id: None,
            status: TurnStatus::Running,
            input: None,
            created_at: None,
            completed_at: None,
            items: IdMap::new(),
            usage: PackedUsage::default(),
            version: 1,
            internal: TurnInternal::default(),
        }
    }

    /// `cancelled` reason (wire spelling).
    pub fn cancel_reason(&self) -> Option<&TextBuf> {
        self.internal.live().and_then(|l| l.cancel_reason.as_ref())
    }

    /// `error` message.
    pub fn error_message(&self) -> Option<&TextBuf> {
        self.internal.live().and_then(|l| l.error_message.as_ref())
    }

    /// Highest sequence number applied from a live stream.
    pub fn last_sequence_number(&self) -> Option<u64> {
        self.internal.live().and_then(|l| l.last_sequence_number)
    }

    /// Live events ignored because they came after the turn ended (a frozen
    /// `cancelled-for-next-turn` turn keeps streaming deltas, §9).
    pub fn late_events_ignored(&self) -> u64 {
        self.internal.live().map_or(0, |l| l.late_events_ignored)
    }

    /// Sets the highest sequence number applied (`None` allocates nothing).
    pub(crate) fn set_last_sequence_number(&mut self, n: Option<u64>) {
        if n.is_some() || self.internal.live().is_some() {
            self.internal.live_mut().last_sequence_number = n;
        }
    }
}

impl Serialize for TurnView {
    // The members of its TypeScript declaration (`view.rs`), in that order.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("TurnView", 13)?;
        s.serialize_field("turnId", &self.turn_id)?;
        s.serialize_field("previousTurnId", &self.previous_turn_id)?;
        s.serialize_field("status", &self.status)?;
        s.serialize_field("cancelReason", &self.cancel_reason())?;
        s.serialize_field("errorMessage", &self.error_message())?;
        s.serialize_field("input", &self.input)?;
        s.serialize_field("createdAt", &self.created_at)?;
        s.serialize_field("completedAt", &self.completed_at)?;
        s.serialize_field("items", &InOrder(&self.items))?;
        s.serialize_field("usage", &self.usage)?;
        s.serialize_field("lastSequenceNumber", &self.last_sequence_number())?;
        s.serialize_field("lateEventsIgnored", &self.late_events_ignored())?;
        s.serialize_field("version", &self.version)?;
        s.end()
    }
}

/// A turn's items serialised as an array in stream order.
struct InOrder<'a>(&'a IdMap<ItemView>);

impl Serialize for InOrder<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.values())
    }
}

/// Reducer bookkeeping that is not part of the view: what every turn needs inline, and the
/// rest in one box that only a live or unusual turn allocates (`TurnLive`, which also holds
/// the turn's rarely set view fields). The whole of it inline was 64 bytes of every turn
/// record, the rare view fields 40 more (W2: ~1.6 MB for 15k listed turns, none of which
/// streamed).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TurnInternal {
    /// Persisted (listing) events accepted for this turn, counted against the same cap as the
    /// live ones. A `u32` that saturates (a cap above `u32::MAX` is never reached).
    pub(crate) persisted_count: u32,
    /// A `turn.done` event (not just a fetched state) was applied.
    pub(crate) done_event_seen: bool,
    /// The terminal state was applied.
    pub(crate) terminal: bool,
    /// The terminal state carried `metrics`: the turn's usage totals are those (set once, the
    /// first terminal state wins) and only its breakdown follows the messages. A flag rather
    /// than the metrics themselves (88 bytes a turn): the totals already live in
    /// [`TurnView::usage`].
    pub(crate) has_metrics: bool,
    /// The rest, absent until a live event, a held delta, a `*_required` event or a synthetic
    /// key needs it.
    live: Option<Box<TurnLive>>,
}

/// The part of a turn a listed turn nearly never needs: the fields of [`TurnView`] only a
/// live, cancelled or failed turn sets, and the reducer's live-stream bookkeeping.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TurnLive {
    /// [`TurnView::cancel_reason`].
    pub(crate) cancel_reason: Option<TextBuf>,
    /// [`TurnView::error_message`].
    pub(crate) error_message: Option<TextBuf>,
    /// [`TurnView::last_sequence_number`].
    pub(crate) last_sequence_number: Option<u64>,
    /// [`TurnView::late_events_ignored`].
    pub(crate) late_events_ignored: u64,
    /// Deltas whose base has not arrived, by message id, in arrival order.
    pub(crate) held_deltas: IdMap<Vec<wire::MessageDelta>>,
    /// Live events accepted for this turn (the cap counts these).
    pub(crate) event_count: usize,
    /// A live event was refused by the cap: the live view of the turn is incomplete.
    pub(crate) capped: bool,
    /// Streamed text (deltas' content + reasoning + refusal) applied to this turn, bytes.
    pub(crate) text_bytes: usize,
    /// A delta was refused by a text bound.
    pub(crate) text_limited: bool,
    /// `*_required` events of this turn (streamed or from `required_actions`), sorted by event
    /// id (a few per turn: a sorted list, not another map instantiation in the wasm). The
    /// first record of an id wins.
    pub(crate) required: Vec<(String, RequiredRecord)>,
    /// Counter for synthetic item keys.
    pub(crate) synthetic_keys: u64,
}

impl TurnInternal {
    /// The rarely needed part, if allocated.
    pub(crate) fn live(&self) -> Option<&TurnLive> {
        self.live.as_deref()
    }

    /// The rarely needed part, allocated on first use.
    pub(crate) fn live_mut(&mut self) -> &mut TurnLive {
        self.live.get_or_insert_with(Box::default)
    }

    /// [`TurnLive::event_count`] (0 before any live event).
    pub(crate) fn event_count(&self) -> usize {
        self.live.as_ref().map_or(0, |l| l.event_count)
    }

    /// [`TurnLive::capped`].
    pub(crate) fn capped(&self) -> bool {
        self.live.as_ref().is_some_and(|l| l.capped)
    }

    /// [`TurnLive::text_bytes`].
    pub(crate) fn text_bytes(&self) -> usize {
        self.live.as_ref().map_or(0, |l| l.text_bytes)
    }

    /// [`TurnLive::text_limited`].
    pub(crate) fn text_limited(&self) -> bool {
        self.live.as_ref().is_some_and(|l| l.text_limited)
    }

    /// [`TurnLive::required`] (empty when absent).
    pub(crate) fn required(&self) -> &[(String, RequiredRecord)] {
        self.live.as_ref().map_or(&[], |l| l.required.as_slice())
    }

    /// The held deltas of message `key`, removed.
    pub(crate) fn take_held(&mut self, key: &str) -> Option<Vec<wire::MessageDelta>> {
        self.live.as_mut().and_then(|l| l.held_deltas.remove(key))
    }

    /// All held deltas, removed.
    pub(crate) fn take_all_held(&mut self) -> IdMap<Vec<wire::MessageDelta>> {
        self.live
            .as_mut()
            .map(|l| core::mem::take(&mut l.held_deltas))
            .unwrap_or_default()
    }
}
