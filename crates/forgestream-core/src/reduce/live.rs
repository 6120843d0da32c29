//! The hot path of a live turn: a text-only `model.message.delta` (almost every frame of a
//! stream) applied straight from the frame's borrowed text, with no `wire::MessageDelta` built.
//!
//! Only the common case is handled here: the turn is running and under its event cap, the
//! base message has arrived, is not merged and is on the same thread. Anything else (orphan
//! delta, late event, mismatch, cap) builds the owned delta and takes the general path
//! ([`SessionView::apply_live_event`]), so each rule is written once and the result is the same
//! either way (tested in `tests` below and by the reduce property tests).

use super::change::{ChangeSet, ReduceError, TextAppend};
use super::merge;
use super::turn::TurnView;
use super::view::{ContentView, ItemBody};
use super::{item_key, turn_key, SessionView, TurnFlags};
use crate::id_map::same_id;
use crate::wire;
use crate::wire::fast::TextDelta;

/// What a text delta the fast path took did: `None` = nothing (all increments empty), else the
/// item's new version and, for plain text, the append's description.
type Applied = Option<(u64, Option<TextAppend>)>;

impl SessionView {
    /// The hottest case in one turn lookup: `delta` for a known turn whose sequence number is
    /// the next one (or absent) and which the fast path takes whole. Admission (the high-water
    /// mark) and the append then share the turn found once, where [`Self::admit`] followed by
    /// [`Self::apply_text_delta`] would look the turn up three times per frame.
    ///
    /// `Some` (the turn's flags, unchanged by this frame) when the frame is done with (applied,
    /// or skipped as already seen). `None` means nothing was changed (new turn, sequence gap, or a case for the general rules): the
    /// caller takes the ordinary route, so every rule stays written once.
    pub(super) fn apply_text_delta_hot(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        delta: &TextDelta<'_>,
        cs: &mut ChangeSet,
    ) -> Option<TurnFlags> {
        let config = &self.config;
        let turn = self.turns.get_keyed_mut(turn_id, turn_key)?;
        // `admit`'s rules; a gap (which warns) takes the ordinary route.
        let hwm = turn.last_sequence_number();
        let next = match sequence_number {
            None => hwm,
            Some(n) if hwm.is_some_and(|h| n <= h) => return Some(TurnFlags::of(turn)),
            Some(n) if n != hwm.map_or(1, |h| h.saturating_add(1)) => return None,
            Some(n) => Some(n),
        };
        let applied = append_to_turn(turn, config, delta)?;
        turn.set_last_sequence_number(next);
        let flags = TurnFlags::of(turn);
        record(cs, turn_id, &delta.id, applied);
        Some(flags)
    }

    /// Applies `delta` (already admitted by sequence number) to `turn_id`.
    pub(super) fn apply_text_delta(
        &mut self,
        turn_id: &str,
        delta: TextDelta<'_>,
        cs: &mut ChangeSet,
    ) -> Result<(), ReduceError> {
        let config = &self.config;
        let applied = self
            .turns
            .get_keyed_mut(turn_id, turn_key)
            .and_then(|turn| append_to_turn(turn, config, &delta));
        match applied {
            Some(applied) => {
                record(cs, turn_id, &delta.id, applied);
                Ok(())
            }
            None => self.apply_live_event(
                turn_id,
                wire::Event::ModelMessageDelta(delta.into_delta()),
                cs,
            ),
        }
    }
}

/// The fast path's rules on one turn: `None` (nothing changed) when the general path must
/// decide, else the delta is applied and counted.
fn append_to_turn(
    turn: &mut TurnView,
    config: &super::ReducerConfig,
    delta: &TextDelta<'_>,
) -> Option<Applied> {
    // Late events after `turn.done` and frozen turns have their own rules; so do the cap and the
    // text bounds (errors).
    if turn.internal.done_event_seen
        || turn.internal.terminal
        || turn.internal.event_count() >= config.max_events_per_turn
    {
        return None;
    }
    let item = turn.items.get_keyed_mut(&*delta.id, item_key)?;
    let ItemBody::Message(message) = &mut item.body else {
        return None;
    };
    if message.merged {
        return None;
    }
    if let (Some(a), Some(b)) = (&item.thread_id, &delta.thread_id) {
        if !same_id(a, b.as_bytes()) {
            return None;
        }
    }
    let incoming = delta_text_bytes(
        delta.content.as_deref(),
        delta.reasoning_content.as_deref(),
        delta.refusal.as_deref(),
    );
    if text_bound(
        config,
        message_text_bytes(message),
        turn.internal.text_bytes(),
        incoming,
    )
    .is_some()
    {
        return None;
    }
    let live = turn.internal.live_mut();
    live.text_bytes = live.text_bytes.saturating_add(incoming);
    live.event_count += 1;
    // Lengths before this delta, for the change set's append description; a parts array is
    // not plain text, so it is reported as a whole-item change.
    let at = match &message.content {
        None => Some(0),
        Some(ContentView::Text(text)) => Some(text.len()),
        Some(ContentView::Parts(_)) => None,
    }
    .map(|content_from| TextAppend {
        base_version: item.version,
        content_from,
        reasoning_from: message.reasoning().map_or(0, |t| t.len()),
        refusal_from: message.refusal().map_or(0, |t| t.len()),
    });
    // PROTOCOL §5 merge rule for text: append, an empty increment changes nothing.
    let mut changed = false;
    if let Some(text) = delta.content.as_deref().filter(|t| !t.is_empty()) {
        merge::append_text(&mut message.content, text);
        changed = true;
    }
    if let Some(text) = delta.reasoning_content.as_deref().filter(|t| !t.is_empty()) {
        merge::append_opt(message.reasoning_slot(), text);
        changed = true;
    }
    if let Some(text) = delta.refusal.as_deref().filter(|t| !t.is_empty()) {
        merge::append_opt(message.refusal_slot(), text);
        changed = true;
    }
    if changed {
        item.version += 1;
    }
    Some(changed.then_some((item.version, at)))
}

/// Bytes of text a delta carries (content + reasoning + refusal).
pub(super) fn delta_text_bytes(
    content: Option<&str>,
    reasoning: Option<&str>,
    refusal: Option<&str>,
) -> usize {
    [content, reasoning, refusal]
        .iter()
        .map(|t| t.map_or(0, str::len))
        .fold(0, usize::saturating_add)
}

/// Bytes of text a message holds now (content parts count as text).
pub(super) fn message_text_bytes(message: &super::message::MessageView) -> usize {
    let content = match &message.content {
        None => 0,
        Some(ContentView::Text(t)) => t.len(),
        Some(ContentView::Parts(_)) => 0,
    };
    content
        .saturating_add(message.reasoning().map_or(0, |t| t.len()))
        .saturating_add(message.refusal().map_or(0, |t| t.len()))
}

/// Which text bound `incoming` more bytes would cross: `("message" | "turn", limit)`.
pub(super) fn text_bound(
    config: &super::ReducerConfig,
    message_bytes: usize,
    turn_bytes: usize,
    incoming: usize,
) -> Option<(&'static str, usize)> {
    if incoming == 0 {
        None
    } else if message_bytes.saturating_add(incoming) > config.max_message_text_bytes {
        Some(("message", config.max_message_text_bytes))
    } else if turn_bytes.saturating_add(incoming) > config.max_turn_text_bytes {
        Some(("turn", config.max_turn_text_bytes))
    } else {
        None
    }
}

/// Records what [`append_to_turn`] did in the change set.
fn record(cs: &mut ChangeSet, turn_id: &str, key: &str, applied: Applied) {
    match applied {
        Some((version, Some(at))) => cs.item_appended(turn_id, key, version, at),
        Some((version, None)) => cs.item(turn_id, key, version, false),
        None => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ChangeSet, ReducerConfig, SessionView, TextBuf};
    use super::{ContentView, ItemBody};
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    /// Applies frames with the fast path and, separately, as decoded events (which never take
    /// it); the views and change sets must agree.
    fn both(frames: &[&str]) -> SessionView {
        let numbered: Vec<(&str, Option<u64>)> = frames
            .iter()
            .enumerate()
            .map(|(n, frame)| (*frame, Some(n as u64 + 1)))
            .collect();
        both_numbered(&numbered)
    }

    /// [`both`] with each frame's own sequence number (`None` = no SSE id).
    fn both_numbered(frames: &[(&str, Option<u64>)]) -> SessionView {
        let mut fast = SessionView::new("s", ReducerConfig::default());
        let mut general = SessionView::new("s", ReducerConfig::default());
        for (n, &(frame, seq)) in frames.iter().enumerate() {
            if let Some(turn) = frame.strip_prefix(READ) {
                // A read of the turn (`GET …/turns/t`): how a turn ends without its `turn.done`.
                let turn: crate::wire::Turn = serde_json::from_str(turn).expect("a turn");
                assert_eq!(
                    fast.apply_turn(&turn),
                    general.apply_turn(&turn),
                    "frame {n}"
                );
                continue;
            }
            let before = fast.clone();
            let a = fast.apply_live("t", seq, frame);
            if let Ok(changes) = &a {
                check_appends(&before, &fast, changes);
            }
            let b = match crate::wire::Event::from_json(frame) {
                Ok(event) => general.apply_event("t", seq, event),
                Err(_) => general.apply_live("t", seq, frame),
            };
            // Only the fast path describes appends; everything else must agree.
            assert_eq!(without_appends(a), b, "frame {n}: {frame}");
        }
        assert_eq!(fast.summary(), general.summary());
        let items = |v: &SessionView| -> Vec<String> {
            v.turns()
                .flat_map(|t| t.items.values().map(|i| format!("{i:?}")))
                .collect()
        };
        assert_eq!(items(&fast), items(&general));
        fast
    }

    fn without_appends(
        r: Result<ChangeSet, super::ReduceError>,
    ) -> Result<ChangeSet, super::ReduceError> {
        r.map(|mut changes| {
            for item in &mut changes.items {
                item.appended = None;
            }
            changes
        })
    }

    /// Every item change described as an append must be exactly that: the item before, at the
    /// base version and lengths, plus text after them, with nothing else changed.
    fn check_appends(before: &SessionView, after: &SessionView, changes: &ChangeSet) {
        for change in &changes.items {
            let Some(at) = change.appended else { continue };
            let old = before
                .item(&change.turn_id, &change.key)
                .expect("base item");
            let new = after.item(&change.turn_id, &change.key).expect("item");
            assert_eq!(old.version, at.base_version);
            assert_eq!(new.version, change.version);
            let (ItemBody::Message(a), ItemBody::Message(b)) = (&old.body, &new.body) else {
                panic!("append to a non-message");
            };
            let text = |c: &Option<ContentView>| match c {
                None => String::new(),
                Some(ContentView::Text(t)) => t.clone(),
                Some(ContentView::Parts(_)) => panic!("append to parts"),
            };
            let grew = |old: &str, new: &str, from: usize| {
                assert_eq!(old.len(), from);
                assert!(new.starts_with(old), "{new:?} does not extend {old:?}");
            };
            grew(&text(&a.content), &text(&b.content), at.content_from);
            let opt = |o: Option<&TextBuf>| String::from(o.map(|t| t.as_str()).unwrap_or_default());
            grew(&opt(a.reasoning()), &opt(b.reasoning()), at.reasoning_from);
            grew(&opt(a.refusal()), &opt(b.refusal()), at.refusal_from);
            // Nothing but the text fields and the version moved.
            let mut old = old.clone();
            old.version = new.version;
            if let ItemBody::Message(m) = &mut old.body {
                m.content = b.content.clone();
                m.set_reasoning(b.reasoning().cloned());
                m.set_refusal(b.refusal().cloned());
            }
            assert_eq!(&old, new);
        }
    }

    #[test]
    fn agrees_with_the_general_path_on_each_rule() {
        let created = r#"{"type":"turn.created","turn_id":"t","thread_id":null,"state":{"status":"running"}}"#;
        let base = r#"{"type":"model.message","id":"m","thread_id":"main"}"#;
        let delta = |extra: &str| {
            format!(r#"{{"type":"model.message.delta","id":"m","thread_id":"main"{extra}}}"#)
        };
        let text = delta(r#","content":"a\u00e9\n""#);
        let empty = delta(r#","content":"""#);
        let reasoning = delta(r#","reasoning_content":"r","refusal":"x""#);
        let other_thread =
            r#"{"type":"model.message.delta","id":"m","thread_id":"x","content":"b"}"#;
        let orphan = r#"{"type":"model.message.delta","id":"later","content":"c"}"#;
        let later_base = r#"{"type":"model.message","id":"later","thread_id":"main"}"#;
        let done = r#"{"type":"turn.done","id":"d","state":{"status":"done"}}"#;
        let late = delta(r#","content":"late""#);
        for frame in [&text, &empty, &reasoning, other_thread, orphan, &late] {
            assert!(crate::wire::fast::text_delta(frame).is_some(), "{frame}");
        }
        let view = both(&[
            created,
            orphan,
            base,
            &text,
            &empty,
            &reasoning,
            other_thread,
            later_base,
            &text,
            done,
            &late,
        ]);
        let text_of = |id: &str| match view.item("t", id).map(|i| &i.body) {
            Some(super::ItemBody::Message(m)) => m.content.as_ref().map(|c| c.text()),
            _ => None,
        };
        assert_eq!(text_of("m").as_deref(), Some("a\u{e9}\na\u{e9}\n"));
        assert_eq!(text_of("later").as_deref(), Some("c"));
    }

    #[test]
    fn agrees_on_a_merged_message_and_the_cap() {
        let created = r#"{"type":"turn.created","turn_id":"t","thread_id":null,"state":{"status":"running"}}"#;
        let merged = r#"{"type":"model.message","id":"m","thread_id":"main","content":"all","finish_reason":"stop"}"#;
        let delta = r#"{"type":"model.message.delta","id":"m","content":"more"}"#;
        both(&[created, merged, delta]);
        let config = ReducerConfig {
            max_events_per_turn: 2,
            ..ReducerConfig::default()
        };
        let base = r#"{"type":"model.message","id":"m"}"#;
        let mut view = SessionView::new("s", config);
        assert!(view.apply_live("t", Some(1), created).is_ok());
        assert!(view.apply_live("t", Some(2), base).is_ok());
        assert!(matches!(
            view.apply_live("t", Some(3), delta),
            Err(super::ReduceError::EventCapExceeded { .. })
        ));
    }

    /// Marks a pseudo-frame of [`FRAMES`]: the rest is a turn read from the server, applied with
    /// `SessionView::apply_turn` to both views.
    const READ: &str = "read:";

    /// Frames the property test draws from: every branch of the fast path and its fallbacks.
    const FRAMES: &[&str] = &[
        r#"{"type":"turn.created","turn_id":"t","thread_id":null,"state":{"status":"running"}}"#,
        r#"{"type":"model.message","id":"a","thread_id":"main"}"#,
        r#"{"type":"model.message","id":"b","thread_id":"sub"}"#,
        r#"{"type":"model.message","id":"a","thread_id":"main","content":"whole","finish_reason":"stop"}"#,
        r#"{"type":"model.message.delta","id":"a","thread_id":"main","content":"x"}"#,
        r#"{"type":"model.message.delta","id":"a","content":"y\u00e9","reasoning_content":"r"}"#,
        r#"{"type":"model.message.delta","id":"a","thread_id":"main","content":""}"#,
        r#"{"type":"model.message.delta","id":"a","thread_id":"sub","content":"z"}"#,
        r#"{"type":"model.message.delta","id":"b","thread_id":"sub","refusal":"no"}"#,
        r#"{"type":"model.message.delta","id":"c","content":"orphan"}"#,
        r#"{"type":"model.message.delta","id":"r","content":"not a message"}"#,
        r#"{"type":"model.message.delta","id":"a","finish_reason":"stop"}"#,
        r#"{"type":"model.message.delta","id":"a","tool_calls":[{"index":0,"id":"call","function":{"name":"f","arguments":"{}"}}]}"#,
        r#"{"type":"model.message","id":"c","thread_id":"main"}"#,
        r#"{"type":"tool.response","id":"r","thread_id":"main","tool_call_id":"call","content":"ok"}"#,
        r#"{"type":"turn.done","id":"d","state":{"status":"done"}}"#,
        // Not a `CancelledState` (`reason` is missing): an event the decoder refuses.
        r#"{"type":"turn.done","id":"d","state":{"status":"cancelled","cancel_reason":"cancelled-for-next-turn"}}"#,
        r#"{"type":"turn.done","id":"d","state":{"status":"cancelled","reason":"cancelled-for-next-turn"}}"#,
        // A `turn.done` that ends nothing (a hostile server): what follows it is still late.
        r#"{"type":"turn.done","id":"d","state":{"status":"running"}}"#,
        // The turn ended without its `turn.done` having come: frozen (an interrupt's check,
        // PROTOCOL §9: its late deltas change nothing), or failed (late deltas still apply).
        r#"read:{"id":"t","session_id":"s","previous_turn_id":null,"state":{"status":"cancelled","reason":"cancelled-for-next-turn"}}"#,
        r#"read:{"id":"t","session_id":"s","previous_turn_id":null,"state":{"status":"error","message":"boom"}}"#,
    ];

    proptest::proptest! {
        /// Any sequence of these frames, applied live (fast path where it applies) and as
        /// decoded events (general path only), gives the same change sets and view.
        #[test]
        fn any_frame_sequence_agrees_with_the_general_path(
            picks in proptest::collection::vec(0..FRAMES.len(), 0..40),
        ) {
            let frames: Vec<&str> = picks.iter().filter_map(|&i| FRAMES.get(i).copied()).collect();
            both(&frames);
        }

        /// The same with sequence numbers that repeat, skip ahead or are absent: the one-lookup
        /// path admits a frame only when it is the next one (or has no number), so duplicates,
        /// gaps (a warning) and a turn's first frame must come out as the general path has them.
        #[test]
        fn any_numbering_agrees_with_the_general_path(
            picks in proptest::collection::vec((0..FRAMES.len(), 0..5u8), 0..40),
        ) {
            let mut last = 0u64;
            let mut frames = Vec::new();
            for &(i, step) in &picks {
                let seq = match step {
                    0 => None,
                    1 => Some(last),
                    2 => Some(last.saturating_sub(1)),
                    3 => Some(last + 2),
                    _ => Some(last + 1),
                };
                if let Some(n) = seq {
                    last = last.max(n);
                }
                if let Some(frame) = FRAMES.get(i) {
                    frames.push((*frame, seq));
                }
            }
            both_numbered(&frames);
        }
    }
}
