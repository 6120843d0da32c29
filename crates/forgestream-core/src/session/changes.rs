//! The view as it crosses to the UI layer: [`Session::full_changes`] (everything) and
//! [`Session::changes_of`] (only what a drained change set names) build one shape,
//! [`CoreChanges`], so the TS `SnapshotStore` has a single patch routine. Every type here derives
//! `Serialize` (camelCase, the JS spelling) and, with the `tsify` feature, its TypeScript
//! declaration, which the TS layer imports instead of keeping a hand-written copy.
//!
//! Cost per drain is O(changed items), never O(history); a message that only gained text since
//! the last drain costs O(new text): it crosses as [`ItemAppend`] (the suffixes) instead of the
//! whole item. Each drain is numbered (`drain`), so a consumer can tell whether an append is
//! relative to the copy it holds.
use alloc::string::String;
use alloc::vec::Vec;

use serde::Serialize;

use crate::reduce::{
    ChangeSet, ContentView, ItemBody, ItemView, PendingAction, TextAppend, ThreadView, TurnStatus,
    TurnView, UsageView,
};
use crate::resume::{ConnectionStatus, Silence};

use super::{Session, SessionError};

/// A turn without its items, plus the item keys in stream order (the TS layer rebuilds the turn
/// from its header and its items, so an unchanged item keeps its identity).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct TurnHeader<'a> {
    /// Turn id.
    pub turn_id: &'a str,
    /// Chain parent.
    pub previous_turn_id: Option<&'a str>,
    /// Status (paused = done with required actions).
    pub status: TurnStatus,
    /// `cancelled` reason (wire spelling, e.g. `cancelled-for-next-turn`).
    pub cancel_reason: Option<&'a str>,
    /// `error` message.
    pub error_message: Option<&'a str>,
    /// Input items the turn was created with (wire shape).
    #[cfg_attr(feature = "tsify", tsify(type = "unknown[] | null"))]
    pub input: Option<&'a crate::wire::JsonText>,
    /// ISO-8601.
    #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
    pub created_at: Option<&'a crate::reduce::Timestamp>,
    /// ISO-8601.
    #[cfg_attr(feature = "tsify", tsify(type = "string | null"))]
    pub completed_at: Option<&'a crate::reduce::Timestamp>,
    // Packed in the view (`reduce/packed_usage.rs`); crosses as its `UsageView`.
    /// Turn usage.
    #[cfg_attr(feature = "tsify", tsify(type = "UsageView"))]
    pub usage: &'a crate::reduce::PackedUsage,
    /// Highest sequence number applied from a live stream.
    pub last_sequence_number: Option<u64>,
    /// Live events ignored because they came after the turn ended (PROTOCOL §9).
    pub late_events_ignored: u64,
    /// Bumped on every header change.
    pub version: u64,
    /// The turn's item keys (event ids) in stream order.
    pub item_keys: Vec<&'a str>,
}

impl<'a> TurnHeader<'a> {
    /// The header of `t`.
    pub fn of(t: &'a TurnView) -> Self {
        TurnHeader {
            turn_id: &t.turn_id,
            previous_turn_id: t.previous_turn_id.as_deref(),
            status: t.status,
            cancel_reason: t.cancel_reason().map(|r| r.as_str()),
            error_message: t.error_message().map(|m| m.as_str()),
            input: t.input.as_ref(),
            created_at: t.created_at.as_ref(),
            completed_at: t.completed_at.as_ref(),
            usage: &t.usage,
            last_sequence_number: t.last_sequence_number(),
            late_events_ignored: t.late_events_ignored(),
            version: t.version,
            item_keys: t.items.keys().map(crate::id::Id::as_str).collect(),
        }
    }
}

/// A turn whose header did not change since the consumer's copy except for its cursor: only
/// text was appended to items it already had (the live delta path). The consumer keeps its
/// header, with `last_sequence_number` replaced; `version` is the header version that copy must
/// have (a consumer holding another takes the whole view instead). Why: the whole header (input
/// items, usage, every item key) crossed with each drain of a streaming turn — about 0.9 KB of
/// JSON 60 times a second for one message, and O(items) for a long agentic turn (issue 19, W3).
#[derive(Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct TurnCursor<'a> {
    /// Turn id.
    pub turn_id: &'a str,
    /// The header version, unchanged since the consumer's copy.
    pub version: u64,
    /// Highest sequence number applied from a live stream.
    pub last_sequence_number: Option<u64>,
}

/// One changed item: its new value, its appended text, or its removal.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct ItemUpdate<'a> {
    /// The item's turn.
    pub turn_id: &'a str,
    /// The item's key (its event id).
    pub key: &'a str,
    /// The item is gone.
    pub removed: bool,
    /// The whole item (absent when removed or when `append` describes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub value: Option<&'a ItemView>,
    /// Instead of `value` when the item only gained text since the last drain.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub append: Option<ItemAppend<'a>>,
}

/// A message that only grew since the consumer's copy (at `base_version`): the new text of each
/// field (absent: unchanged) and the new version. The TS layer builds the new item as the old one
/// plus these suffixes, so a long streaming message costs O(new text) per drain, not O(all).
#[derive(Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub struct ItemAppend<'a> {
    /// The item's version the suffixes apply to.
    pub base_version: u64,
    /// The item's version after them.
    pub version: u64,
    /// Text appended to `content` (plain-text content only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub content: Option<&'a str>,
    /// Text appended to `reasoning`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub reasoning: Option<&'a str>,
    /// Text appended to `refusal`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub refusal: Option<&'a str>,
}

impl<'a> ItemAppend<'a> {
    /// The text `item` gained after `at`, or `None` when it cannot be described as a pure append
    /// (then the whole item is sent). Re-checked against the item itself, so a stale or
    /// inconsistent description degrades to a full item, never to a wrong view.
    pub fn of(item: &'a ItemView, at: TextAppend) -> Option<Self> {
        let ItemBody::Message(m) = &item.body else {
            return None;
        };
        fn suffix(text: Option<&str>, from: usize) -> Option<Option<&str>> {
            let rest = text.unwrap_or_default().get(from..)?;
            Some((!rest.is_empty()).then_some(rest))
        }
        let content = match &m.content {
            None => None,
            Some(ContentView::Text(text)) => Some(text.as_str()),
            Some(ContentView::Parts(_)) => return None,
        };
        Some(ItemAppend {
            base_version: at.base_version,
            version: item.version,
            content: suffix(content, at.content_from)?,
            reasoning: suffix(m.reasoning().map(|t| t.as_str()), at.reasoning_from)?,
            refusal: suffix(m.refusal().map(|t| t.as_str()), at.refusal_from)?,
        })
    }
}

/// The connection badge (`snapshot.connection`): the followed turn's connection status and the
/// turn, once known. Only `reconnecting` carries the attempt and when it runs (ms, wall clock);
/// the states of a running turn (`connecting`, `live`, `reconnecting`, `offline`) also say how
/// long it has been silent and whether it looks stalled (issue 14).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum ConnectionState<'a> {
    /// No turn followed (nothing started, or `disconnect()`).
    #[serde(rename_all = "camelCase")]
    Idle { turn_id: Option<&'a str> },
    /// No turn followed yet: the history is being read (`load()`, or `restore()` before it
    /// knows which turn to follow). The view may still be empty: show "loading", not an empty
    /// chat (issue 14).
    #[serde(rename_all = "camelCase")]
    Loading { turn_id: Option<&'a str> },
    /// Opening the stream (or checking the turn before it).
    #[serde(rename_all = "camelCase")]
    Connecting {
        turn_id: Option<&'a str>,
        /// How long the followed turn had been silent (ms) when it was last read and still
        /// `running` after the idle timeout without a frame (issue 14); `null` while frames
        /// flow. Updated at each such read (watchdog cycle, reconnect), not continuously.
        silent_ms: Option<u64>,
        /// When that silence began: the turn's last frame (ms, the clock of `nextAtMs`), for a
        /// ticking "no activity for …"; `null` while frames flow.
        silent_since_ms: Option<u64>,
        /// Soft: the turn has read `running` through `reconnect.stalledAfterCycles` (default 2)
        /// silent cycles — a crashed owner, or a very long silent tool call. The SDK keeps
        /// probing and never gives up on it; the next frame clears it. An app may offer to send
        /// a new turn (`{ interrupt: true }`).
        stalled: bool,
    },
    /// The stream is open.
    #[serde(rename_all = "camelCase")]
    Live {
        turn_id: Option<&'a str>,
        /// How long the followed turn had been silent (ms) when it was last read and still
        /// `running` after the idle timeout without a frame (issue 14); `null` while frames
        /// flow. Updated at each such read (watchdog cycle, reconnect), not continuously.
        silent_ms: Option<u64>,
        /// When that silence began: the turn's last frame (ms, the clock of `nextAtMs`), for a
        /// ticking "no activity for …"; `null` while frames flow.
        silent_since_ms: Option<u64>,
        /// Soft: the turn has read `running` through `reconnect.stalledAfterCycles` (default 2)
        /// silent cycles — a crashed owner, or a very long silent tool call. The SDK keeps
        /// probing and never gives up on it; the next frame clears it. An app may offer to send
        /// a new turn (`{ interrupt: true }`).
        stalled: bool,
    },
    /// Waiting before reconnect `attempt` (1, 2, …), due at `next_at_ms`.
    #[serde(rename_all = "camelCase")]
    Reconnecting {
        attempt: u32,
        next_at_ms: u64,
        turn_id: Option<&'a str>,
        /// How long the followed turn had been silent (ms) when it was last read and still
        /// `running` after the idle timeout without a frame (issue 14); `null` while frames
        /// flow. Updated at each such read (watchdog cycle, reconnect), not continuously.
        silent_ms: Option<u64>,
        /// When that silence began: the turn's last frame (ms, the clock of `nextAtMs`), for a
        /// ticking "no activity for …"; `null` while frames flow.
        silent_since_ms: Option<u64>,
        /// Soft: the turn has read `running` through `reconnect.stalledAfterCycles` (default 2)
        /// silent cycles — a crashed owner, or a very long silent tool call. The SDK keeps
        /// probing and never gives up on it; the next frame clears it. An app may offer to send
        /// a new turn (`{ interrupt: true }`).
        stalled: bool,
    },
    /// Rebuilding the turn from the listings (412).
    #[serde(rename_all = "camelCase")]
    Rebuilding { turn_id: Option<&'a str> },
    /// The browser is offline; reconnects wait for `online`.
    #[serde(rename_all = "camelCase")]
    Offline {
        turn_id: Option<&'a str>,
        /// How long the followed turn had been silent (ms) when it was last read and still
        /// `running` after the idle timeout without a frame (issue 14); `null` while frames
        /// flow. Updated at each such read (watchdog cycle, reconnect), not continuously.
        silent_ms: Option<u64>,
        /// When that silence began: the turn's last frame (ms, the clock of `nextAtMs`), for a
        /// ticking "no activity for …"; `null` while frames flow.
        silent_since_ms: Option<u64>,
        /// Soft: the turn has read `running` through `reconnect.stalledAfterCycles` (default 2)
        /// silent cycles — a crashed owner, or a very long silent tool call. The SDK keeps
        /// probing and never gives up on it; the next frame clears it. An app may offer to send
        /// a new turn (`{ interrupt: true }`).
        stalled: bool,
    },
    /// The turn ended (`turn.done` or its state).
    #[serde(rename_all = "camelCase")]
    Done { turn_id: Option<&'a str> },
    /// The turn still runs on the server but has no live stream (PROTOCOL §9).
    #[serde(rename_all = "camelCase")]
    LiveUnavailable { turn_id: Option<&'a str> },
    /// The connection stopped; `CoreChanges::error` says why.
    #[serde(rename_all = "camelCase")]
    Failed { turn_id: Option<&'a str> },
}

impl<'a> ConnectionState<'a> {
    /// The badge of `status` (`None`: no turn followed) for `turn_id`, with no silence.
    pub fn of(status: Option<&ConnectionStatus>, turn_id: Option<&'a str>) -> Self {
        Self::with_silence(status, turn_id, None)
    }

    /// The badge of `status` for `turn_id`; the states of a running turn carry `silence`.
    pub fn with_silence(
        status: Option<&ConnectionStatus>,
        turn_id: Option<&'a str>,
        silence: Option<&Silence>,
    ) -> Self {
        let silent_ms = silence.map(|s| s.silent_ms);
        let silent_since_ms = silence.map(|s| s.since_ms);
        let stalled = silence.is_some_and(|s| s.stalled);
        match status {
            None => ConnectionState::Idle { turn_id },
            Some(ConnectionStatus::Connecting) => ConnectionState::Connecting {
                turn_id,
                silent_ms,
                silent_since_ms,
                stalled,
            },
            Some(ConnectionStatus::Live) => ConnectionState::Live {
                turn_id,
                silent_ms,
                silent_since_ms,
                stalled,
            },
            Some(ConnectionStatus::Reconnecting {
                attempt,
                next_at_ms,
            }) => ConnectionState::Reconnecting {
                attempt: *attempt,
                next_at_ms: *next_at_ms,
                turn_id,
                silent_ms,
                silent_since_ms,
                stalled,
            },
            Some(ConnectionStatus::Rebuilding) => ConnectionState::Rebuilding { turn_id },
            Some(ConnectionStatus::Offline) => ConnectionState::Offline {
                turn_id,
                silent_ms,
                silent_since_ms,
                stalled,
            },
            Some(ConnectionStatus::Done) => ConnectionState::Done { turn_id },
            Some(ConnectionStatus::LiveUnavailable) => ConnectionState::LiveUnavailable { turn_id },
            Some(ConnectionStatus::Failed(_)) => ConnectionState::Failed { turn_id },
        }
    }
}

/// A non-fatal finding as the app's `onWarning` hook receives it: `code` is `"protocol"` for the
/// reducer's findings (the message is the finding as JSON), `"recovery"` for a fallback the engine
/// took (a refused resume sent again without `Last-Event-ID` or rebuilt from the listings, a turn
/// being created at a reload that the session does not list), `"history"` for an older history
/// page that failed after a restore already followed its turn, or the storage cause
/// (`"unavailable" | "write-failed" | "corrupt" | "old-schema"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct ReportedWarning {
    /// What kind of finding.
    pub code: String,
    /// Human-readable; never parsed.
    pub message: String,
}

/// `snapshot()` / `takeChanges()`: absent fields did not change.
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[cfg_attr(feature = "tsify", tsify(missing_as_null))]
#[serde(rename_all = "camelCase")]
pub struct CoreChanges<'a> {
    /// The session id.
    pub session_id: &'a str,
    /// Which drain this is (1, 2, …): a consumer that sees a gap knows another drain took
    /// changes it never saw, and that appends are not relative to its copy.
    pub drain: u64,
    /// Turn ids in chain order, when the order changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional, type = "string[]"))]
    pub order: Option<&'a [crate::id::Id]>,
    /// Headers of the turns whose header changed, or whose items changed other than by
    /// appended text.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub turns: Vec<TurnHeader<'a>>,
    /// The other turns whose items changed (only text appended): their new cursor.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub cursors: Vec<TurnCursor<'a>>,
    /// Changed items of the turns the consumer holds ([`Session::holds_items`]); a turn it does
    /// not hold is named in `turns` or `cursors` alone.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub items: Vec<ItemUpdate<'a>>,
    /// The pending set (newest turn), when it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub pending: Option<&'a [PendingAction]>,
    /// Subagent threads, when they changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub threads: Option<Vec<&'a ThreadView>>,
    /// Session totals, when they changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub usage: Option<&'a UsageView>,
    /// The connection badge: always in `snapshot()`, in `takeChanges()` only when it differs
    /// from the last drain's.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub connection: Option<ConnectionState<'a>>,
    /// Why the connection stopped, while it shows `failed`.
    pub error: Option<&'a SessionError>,
    /// Findings since the last drain.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub warnings: Vec<ReportedWarning>,
}

impl Session {
    /// The connection badge as it crosses to JS.
    pub fn connection_state(&self) -> ConnectionState<'_> {
        let view = self.connection();
        // A turn a restore followed may end before the older history is in (it is followed
        // from the newest timeline page, `history.rs`): the badge reads `loading` again then,
        // so `idle` / `done` always mean the whole history is shown.
        let settled = matches!(view.status, None | Some(ConnectionStatus::Done));
        if settled && self.is_loading() {
            return ConnectionState::Loading {
                turn_id: view.turn_id,
            };
        }
        ConnectionState::with_silence(view.status, view.turn_id, view.silence)
    }

    /// Everything: every turn header, the items of the turns the consumer holds
    /// ([`Session::holds_items`]: all of them under `turnItems: "all"`), the pending set,
    /// threads, usage, connection.
    /// `changes` / `extra` are what was pending since the last drain (from
    /// [`Session::take_changes`]): the view is whole, so only their warnings are carried — a
    /// warning raised before the first snapshot (a corrupt checkpoint read by `restore()`)
    /// still reaches the app.
    pub fn full_changes(&self, changes: &ChangeSet, extra: &[(String, String)]) -> CoreChanges<'_> {
        let view = self.view();
        CoreChanges {
            session_id: self.id(),
            drain: self.drains(),
            order: Some(view.turn_ids()),
            turns: view.turns().map(TurnHeader::of).collect(),
            cursors: Vec::new(),
            // Items only of the turns the consumer holds (`held` module): the others cross
            // when read.
            items: view
                .turns()
                .filter(|t| self.holds_items(&t.turn_id))
                .flat_map(|t| {
                    t.items.values().map(move |item| ItemUpdate {
                        turn_id: &t.turn_id,
                        key: &item.key,
                        removed: false,
                        value: Some(item),
                        append: None,
                    })
                })
                .collect(),
            pending: Some(view.pending_actions()),
            threads: Some(view.threads().values().collect()),
            usage: Some(view.usage()),
            connection: Some(self.connection_state()),
            error: self.error(),
            warnings: reported_warnings(changes, extra),
        }
    }

    /// Only what `changes` (from [`Session::take_changes`]) names, plus the connection badge
    /// and error; `extra` are the drain's storage and engine warnings `(code, message)`.
    pub fn changes_of<'a>(
        &'a self,
        changes: &'a ChangeSet,
        extra: &[(String, String)],
    ) -> CoreChanges<'a> {
        let view = self.view();
        // Every turn the change set names, in change order, with whether that change needs the
        // turn's whole header: a changed header, or an item added, removed or changed other
        // than by appended text (the item keys may differ from the consumer's).
        // Each turn once, in first-change order, whole if any of its changes needs it: grouped
        // by a sort on the id (O(n log n) for a long history's change set).
        let mut by_id: Vec<(&str, usize, bool)> = changes
            .turns
            .iter()
            .map(|t| (t.as_str(), true))
            .chain(
                changes
                    .items
                    .iter()
                    .map(|i| (i.turn_id.as_str(), i.removed || i.appended.is_none())),
            )
            .enumerate()
            .map(|(at, (id, whole))| (id, at, whole))
            .collect();
        crate::sort::sort_by(&mut by_id, |a, b| a < b);
        let mut firsts: Vec<(usize, &str, bool)> = by_id
            .chunk_by(|a, b| a.0 == b.0)
            .filter_map(|group| {
                // Sorted by (id, place): the group's first is the turn's first change.
                let &(id, at, _) = group.first()?;
                Some((at, id, group.iter().any(|&(_, _, whole)| whole)))
            })
            .collect();
        crate::sort::sort_by(&mut firsts, |a, b| a.0 < b.0);
        let mut turns = Vec::new();
        let mut cursors = Vec::new();
        for (_, id, whole) in firsts {
            let Some(turn) = view.turn(id) else {
                continue;
            };
            if whole {
                turns.push(TurnHeader::of(turn));
            } else {
                cursors.push(TurnCursor {
                    turn_id: &turn.turn_id,
                    version: turn.version,
                    last_sequence_number: turn.last_sequence_number(),
                });
            }
        }
        // Item changes of a turn the consumer does not hold stay here: the turn is named above
        // (header or cursor), so the consumer makes a new turn object that reads them on demand.
        let items = changes
            .items
            .iter()
            .filter(|c| self.holds_items(&c.turn_id))
            .map(|c| {
                let value = if c.removed {
                    None
                } else {
                    view.item(&c.turn_id, &c.key)
                };
                let append = value
                    .zip(c.appended)
                    .and_then(|(v, at)| ItemAppend::of(v, at));
                ItemUpdate {
                    turn_id: &c.turn_id,
                    key: &c.key,
                    removed: value.is_none(),
                    value: value.filter(|_| append.is_none()),
                    append,
                }
            })
            .collect();
        CoreChanges {
            session_id: self.id(),
            drain: self.drains(),
            order: changes.order_changed.then(|| view.turn_ids()),
            turns,
            cursors,
            items,
            pending: changes.pending_changed.then(|| view.pending_actions()),
            threads: changes
                .threads_changed
                .then(|| view.threads().values().collect()),
            usage: changes.usage_changed.then(|| view.usage()),
            connection: self.badge_changed().then(|| self.connection_state()),
            error: self.error(),
            warnings: reported_warnings(changes, extra),
        }
    }
}

/// The drain's findings as they cross: the reducer's protocol warnings, then the storage and
/// engine warnings `(code, message)`.
fn reported_warnings(changes: &ChangeSet, extra: &[(String, String)]) -> Vec<ReportedWarning> {
    changes
        .warnings
        .iter()
        .map(|w| ReportedWarning {
            code: String::from("protocol"),
            message: crate::wire::write::to_string(w),
        })
        .chain(extra.iter().map(|(code, message)| ReportedWarning {
            code: code.clone(),
            message: message.clone(),
        }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_state_is_tagged_by_status() {
        let json = |s: ConnectionState<'_>| serde_json::to_string(&s).unwrap();
        assert_eq!(
            json(ConnectionState::of(None, None)),
            r#"{"status":"idle","turnId":null}"#
        );
        assert_eq!(
            json(ConnectionState::of(
                Some(&ConnectionStatus::Reconnecting {
                    attempt: 2,
                    next_at_ms: 1500
                }),
                Some("t1")
            )),
            r#"{"status":"reconnecting","attempt":2,"nextAtMs":1500,"turnId":"t1","silentMs":null,"silentSinceMs":null,"stalled":false}"#
        );
        assert_eq!(
            json(ConnectionState::of(
                Some(&ConnectionStatus::LiveUnavailable),
                Some("t1")
            )),
            r#"{"status":"liveUnavailable","turnId":"t1"}"#
        );
    }

    #[test]
    fn errors_cross_with_their_kebab_case_code() {
        let e = SessionError::http(404, b"");
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"code":"not-found","message":"HTTP 404","retryable":false,"status":404}"#
        );
        let e = SessionError::new(crate::session::ErrorCode::TurnRunning, "busy");
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"code":"turn-running","message":"busy","retryable":false}"#
        );
    }
}
