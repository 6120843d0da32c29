//! What an `apply_*` call reports: the change set, warnings and errors.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::Serialize;

use crate::id::Id;
use crate::id_map::{same_id, IdMap, IdSet};

/// One changed (or removed) item, with its new version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct ItemChange {
    /// Turn holding the item.
    pub turn_id: String,
    /// The item key (its event id).
    pub key: String,
    /// The item's version after the change (monotonic per item).
    pub version: u64,
    /// True when the item was removed.
    pub removed: bool,
    /// Set while every change this set holds for the item was a pure text append to a message
    /// (the live delta path): the item then equals its state at [`TextAppend::base_version`]
    /// plus the text after the recorded lengths, so a consumer holding that version can take
    /// just the new text. Any other change to the item clears it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub appended: Option<TextAppend>,
}

/// Where the appended text of a message starts: the item's version and the byte lengths of its
/// text fields before the first append this change set holds (a missing field counts as 0).
/// Only plain-text content (never a parts array) is described this way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct TextAppend {
    /// The item's version before the appends.
    pub base_version: u64,
    /// Bytes of `content` (plain text) before the appends.
    pub content_from: usize,
    /// Bytes of `reasoning` before the appends.
    pub reasoning_from: usize,
    /// Bytes of `refusal` before the appends.
    pub refusal_from: usize,
}

/// Non-fatal findings while reducing. Kept on the view (bounded) and returned per change set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Warning {
    /// Deltas whose base `model.message` never arrived before the turn ended (FIELD C9).
    #[serde(rename_all = "camelCase")]
    OrphanDeltasDropped {
        /// Turn.
        turn_id: String,
        /// The missing base's event id.
        message_id: String,
        /// How many deltas were dropped.
        count: u64,
    },
    /// A live event for a turn whose `turn.done` was already applied; it was ignored.
    #[serde(rename_all = "camelCase")]
    EventAfterTurnDone {
        /// Turn.
        turn_id: String,
        /// The ignored event's `type`.
        event_type: String,
    },
    /// A live frame's sequence number skipped ahead: frames in between were not seen.
    #[serde(rename_all = "camelCase")]
    SequenceGap {
        /// Turn.
        turn_id: String,
        /// The sequence number that was due.
        expected: u64,
        /// The one that arrived.
        received: u64,
    },
    /// A message still streaming when its turn was cancelled or failed is kept with the text
    /// that arrived and marked [`MessageView::interrupted`](super::MessageView::interrupted);
    /// the server's persisted history does not have it (PROTOCOL §9), so a reload, a rebuild
    /// from listings and the [summary](super::SessionView::summary) do not show it.
    #[serde(rename_all = "camelCase")]
    UnfinishedMessageInterrupted {
        /// Turn.
        turn_id: String,
        /// The message.
        message_id: String,
    },
    /// An empty message placeholder (nothing streamed into it) of a cancelled or failed turn
    /// was removed, as in the server's history (an error turn leaves one, PROTOCOL §9).
    #[serde(rename_all = "camelCase")]
    UnfinishedMessageDiscarded {
        /// Turn.
        turn_id: String,
        /// The message.
        message_id: String,
    },
    /// A finished tool call's arguments are not valid JSON; the raw text is kept.
    #[serde(rename_all = "camelCase")]
    ArgumentsUnparsed {
        /// Turn.
        turn_id: String,
        /// The proposing message.
        message_id: String,
        /// The call.
        tool_call_id: String,
    },
    /// A persisted event or listing item could not be decoded and was skipped.
    #[serde(rename_all = "camelCase")]
    EventSkipped {
        /// Turn.
        turn_id: String,
        /// Why.
        reason: String,
    },
}

/// What one `apply_*` call changed, so a UI updates in O(change).
///
/// `items` holds each changed item once (latest version). `turns` lists turns whose header
/// (status, usage, chain links, …) changed. Flags say whether the ordered turn list, the pending
/// set, the thread tree or the session usage changed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct ChangeSet {
    /// Turns whose header changed (deduplicated, first-change order).
    pub turns: Vec<String>,
    /// Changed items.
    pub items: Vec<ItemChange>,
    /// The chain order of turns changed (a turn was added or re-linked).
    pub order_changed: bool,
    /// [`super::SessionView::pending_actions`] changed.
    pub pending_changed: bool,
    /// The thread tree changed.
    pub threads_changed: bool,
    /// Session usage totals changed.
    pub usage_changed: bool,
    /// Warnings raised by this call.
    pub warnings: Vec<Warning>,
}

impl ChangeSet {
    /// True when nothing changed and nothing was reported.
    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
            && self.items.is_empty()
            && !self.order_changed
            && !self.pending_changed
            && !self.threads_changed
            && !self.usage_changed
            && self.warnings.is_empty()
    }

    pub(crate) fn turn(&mut self, turn_id: &str) {
        // Same short window as `item`: a batch touching thousands of turns stays linear;
        // `normalize` removes the remaining duplicates.
        let window = self.turns.len().saturating_sub(8);
        if !self
            .turns
            .get(window..)
            .unwrap_or_default()
            .iter()
            .any(|t| t == turn_id)
        {
            self.turns.push(String::from(turn_id));
        }
    }

    pub(crate) fn item(&mut self, turn_id: &str, key: &str, version: u64, removed: bool) {
        self.push_item(turn_id, key, version, removed, None);
    }

    /// Records a pure text append to a message (see [`ItemChange::appended`]).
    pub(crate) fn item_appended(&mut self, turn_id: &str, key: &str, version: u64, at: TextAppend) {
        self.push_item(turn_id, key, version, false, Some(at));
    }

    fn push_item(
        &mut self,
        turn_id: &str,
        key: &str,
        version: u64,
        removed: bool,
        appended: Option<TextAppend>,
    ) {
        // Recent items are the likely duplicates (a delta burst on one message): search from the
        // end, and only a short window, so a long batch stays linear; `normalize` dedupes fully.
        let window = self.items.len().saturating_sub(8);
        let recent = self.items.get_mut(window..).unwrap_or_default();
        if let Some(existing) = recent
            .iter_mut()
            .rev()
            .find(|c| same_id(&c.key, key) && same_id(&c.turn_id, turn_id))
        {
            existing.appended = chain(existing, version, appended);
            existing.version = version;
            existing.removed = removed;
            return;
        }
        self.items.push(ItemChange {
            turn_id: String::from(turn_id),
            key: String::from(key),
            version,
            removed,
            appended,
        });
    }

    /// Merges `other` (a later change) into `self`. Cheap per call (a short recent-window check
    /// per entry): a merged set may hold an item or turn more than once until [`Self::normalize`]
    /// runs — do that once when the accumulated set is consumed, not per merge.
    pub fn merge(&mut self, other: ChangeSet) {
        for turn in other.turns {
            self.turn(&turn);
        }
        for item in other.items {
            self.push_item(
                &item.turn_id,
                &item.key,
                item.version,
                item.removed,
                item.appended,
            );
        }
        self.order_changed |= other.order_changed;
        self.pending_changed |= other.pending_changed;
        self.threads_changed |= other.threads_changed;
        self.usage_changed |= other.usage_changed;
        self.warnings.extend(other.warnings);
    }

    /// Keeps one entry per turn and per item (the highest version), in first-change order.
    pub fn normalize(&mut self) {
        if self.turns.len() > 8 {
            let mut seen = IdSet::new();
            self.turns.retain(|t| seen.add(t));
        }
        if self.items.len() < 2 {
            return;
        }
        // Turn → item key → place in `out`.
        let mut seen: IdMap<IdMap<usize>> = IdMap::new();
        let mut out: Vec<ItemChange> = Vec::with_capacity(self.items.len());
        for change in core::mem::take(&mut self.items) {
            let turn = seen.get_or_insert_with(&change.turn_id, IdMap::new);
            match turn.get(&change.key).and_then(|&i| out.get_mut(i)) {
                Some(existing) => {
                    if change.version >= existing.version {
                        existing.appended = chain(existing, change.version, change.appended);
                        existing.version = change.version;
                        existing.removed = change.removed;
                    } else {
                        // Out of order: no longer a clean run of appends.
                        existing.appended = None;
                    }
                }
                None => {
                    turn.insert(Id::from(&change.key), out.len());
                    out.push(change);
                }
            }
        }
        self.items = out;
    }
}

/// The append description of `existing` followed by a later change to the same item: still an
/// append from the earlier base only when the later change is an append that starts exactly
/// where `existing` ended (its base version is `existing`'s version).
fn chain(existing: &ItemChange, version: u64, later: Option<TextAppend>) -> Option<TextAppend> {
    match (existing.appended, later) {
        (Some(first), Some(next))
            if next.base_version == existing.version && version > existing.version =>
        {
            Some(first)
        }
        _ => None,
    }
}

/// A typed reducer error. The view keeps everything applied before it; the offending frame or
/// event is not applied (its sequence number still counts as processed, so a replay does not
/// stall on it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReduceError {
    /// The frame's `data` is not JSON, or a known event type has an invalid shape. `line` and
    /// `column` are 1-based positions in the data where the decoder stopped (for a shape error,
    /// the end of the member or object at fault).
    MalformedJson {
        /// Turn of the frame.
        turn_id: String,
        /// Its sequence number, if it had one.
        sequence_number: Option<u64>,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The decoder's message (`wire::json::JsonError`).
        message: String,
    },
    /// The turn reached [`super::ReducerConfig::max_events_per_turn`].
    EventCapExceeded {
        /// Turn.
        turn_id: String,
        /// The cap.
        cap: usize,
    },
    /// A delta (or merged message) does not fit its base: the id names a non-message item, or
    /// its `thread_id` differs from the base's (PROTOCOL §5: an error for that delta only).
    DeltaMismatch {
        /// Turn.
        turn_id: String,
        /// Event id.
        event_id: String,
        /// What did not match.
        reason: String,
    },
    /// A delta would grow a message's or a turn's streamed text past its bound
    /// ([`super::ReducerConfig::max_message_text_bytes`] / `max_turn_text_bytes`); it was not
    /// applied, the text received so far is kept.
    TextTooLong {
        /// Turn.
        turn_id: String,
        /// The message's event id.
        event_id: String,
        /// `"message"` or `"turn"`: which bound.
        bound: &'static str,
        /// The bound, bytes.
        limit_bytes: usize,
    },
    /// A `turn.created` for another turn arrived on this turn's stream.
    TurnMismatch {
        /// The stream's turn.
        expected: String,
        /// The turn named by the event.
        received: String,
    },
}

impl fmt::Display for ReduceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReduceError::MalformedJson {
                turn_id,
                sequence_number,
                line,
                column,
                message,
            } => {
                write!(
                    f,
                    "malformed event in turn {turn_id} (sequence {sequence_number:?}) at {line}:{column}: {message}"
                )
            }
            ReduceError::EventCapExceeded { turn_id, cap } => {
                write!(f, "turn {turn_id} exceeded the cap of {cap} events")
            }
            ReduceError::DeltaMismatch {
                turn_id,
                event_id,
                reason,
            } => {
                write!(
                    f,
                    "event {event_id} in turn {turn_id} does not fit its base: {reason}"
                )
            }
            ReduceError::TextTooLong {
                turn_id,
                event_id,
                bound,
                limit_bytes,
            } => {
                write!(
                    f,
                    "message {event_id} in turn {turn_id} reached the {bound} text bound of {limit_bytes} bytes; later text is not applied"
                )
            }
            ReduceError::TurnMismatch { expected, received } => {
                write!(
                    f,
                    "turn.created for {received} arrived on the stream of {expected}"
                )
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ReduceError {}

#[cfg(test)]
mod tests {
    use super::{ChangeSet, TextAppend};

    fn at(base_version: u64, content_from: usize) -> TextAppend {
        TextAppend {
            base_version,
            content_from,
            reasoning_from: 0,
            refusal_from: 0,
        }
    }

    #[test]
    fn consecutive_appends_keep_the_first_base() {
        let mut cs = ChangeSet::default();
        cs.item_appended("t", "m", 3, at(2, 5));
        cs.item_appended("t", "m", 4, at(3, 9));
        assert_eq!(cs.items.len(), 1);
        assert_eq!(cs.items[0].version, 4);
        assert_eq!(cs.items[0].appended, Some(at(2, 5)));
    }

    #[test]
    fn any_other_change_or_a_gap_clears_the_append() {
        let mut cs = ChangeSet::default();
        cs.item_appended("t", "m", 3, at(2, 5));
        cs.item("t", "m", 4, false);
        cs.item_appended("t", "m", 5, at(4, 9));
        assert_eq!(cs.items[0].appended, None);

        let mut cs = ChangeSet::default();
        cs.item("t", "m", 3, false);
        cs.item_appended("t", "m", 4, at(3, 9));
        assert_eq!(cs.items[0].appended, None);

        // A change this set never saw (version 4) sits between the two appends.
        let mut cs = ChangeSet::default();
        cs.item_appended("t", "m", 4, at(3, 5));
        cs.item_appended("t", "m", 6, at(5, 9));
        assert_eq!(cs.items[0].appended, None);
    }

    #[test]
    fn merge_and_normalize_chain_appends_like_item_does() {
        let mut cs = ChangeSet::default();
        cs.item_appended("t", "m", 2, at(1, 0));
        // Push the entry out of the recent window so `normalize` has to join them.
        for n in 0..10 {
            cs.item("t", &alloc::format!("other{n}"), 1, false);
        }
        let mut later = ChangeSet::default();
        later.item_appended("t", "m", 3, at(2, 4));
        cs.merge(later);
        cs.normalize();
        let m = cs.items.iter().find(|c| c.key == "m").expect("m");
        assert_eq!((m.version, m.appended), (3, Some(at(1, 0))));

        let mut cs = ChangeSet::default();
        cs.item_appended("t", "m", 2, at(1, 0));
        for n in 0..10 {
            cs.item("t", &alloc::format!("other{n}"), 1, false);
        }
        cs.item("t", "m", 3, false);
        cs.normalize();
        let m = cs.items.iter().find(|c| c.key == "m").expect("m");
        assert_eq!((m.version, m.appended), (3, None));
    }
}
