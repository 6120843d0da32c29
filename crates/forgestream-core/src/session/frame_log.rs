//! The inspector's frame log (`inspect: true`, `session.eventLog()`): the last
//! [`EVENT_LOG_CAPACITY`] frames received, as a fixed-size ring.
//!
//! Why this shape: the log used to decode every frame a second time with serde (for three
//! envelope fields) and keep four `String`s per frame in a `VecDeque`, which made ingestion
//! with `inspect: true` many times slower than without (issue 18 item 9). Now the ring is
//! allocated once, at the first frame, and each frame costs one scan of its top-level JSON
//! object (values skipped with `memchr`, nothing decoded) and a copy of the envelope fields into
//! the slot's own fixed buffers: no allocation per frame. [`LoggedFrame`]s, with their
//! `String`s, are only built when the inspector reads the log.
//!
//! Fields longer than [`FIELD_BYTES`] bytes (no TrueForge id, type or thread is) are kept
//! truncated at a character boundary and end with `…`.
use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use super::{EventLogPage, LoggedFrame, EVENT_LOG_CAPACITY};
use crate::wire::fast::TextDelta;

/// Bytes kept of each envelope field (turn id, `type`, `id`, `thread_id`).
pub const FIELD_BYTES: usize = 64;

/// A short string kept inline.
#[derive(Clone, Copy)]
struct Short {
    len: u8,
    bytes: [u8; FIELD_BYTES],
}

impl Short {
    const EMPTY: Short = Short {
        len: 0,
        bytes: [0; FIELD_BYTES],
    };

    /// Makes this `text` (or its first bytes plus `…`), writing only the bytes it keeps: a ring
    /// slot is overwritten in place, without zeroing its buffer or moving a new slot in.
    #[inline]
    fn set(&mut self, text: &str) {
        let (kept, ellipsis) = if text.len() <= FIELD_BYTES {
            (text, "")
        } else {
            let mut end = FIELD_BYTES - '…'.len_utf8();
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            (text.get(..end).unwrap_or_default(), "…")
        };
        let len = kept.len() + ellipsis.len();
        if let Some(dst) = self.bytes.get_mut(..kept.len()) {
            dst.copy_from_slice(kept.as_bytes());
        }
        if let Some(dst) = self.bytes.get_mut(kept.len()..len) {
            dst.copy_from_slice(ellipsis.as_bytes());
        }
        self.len = u8::try_from(len).unwrap_or(0);
    }

    /// `slot` made `text`, or `None` for none (a `Short` already there is written over).
    #[inline]
    fn set_option(slot: &mut Option<Short>, text: Option<&str>) {
        match (slot.as_mut(), text) {
            (Some(short), Some(text)) => short.set(text),
            (None, Some(text)) => slot.get_or_insert(Short::EMPTY).set(text),
            (_, None) => *slot = None,
        }
    }

    fn as_str(&self) -> &str {
        // Always a whole UTF-8 string (copied from a `&str`, cut at a character boundary).
        core::str::from_utf8(self.bytes.get(..usize::from(self.len)).unwrap_or_default())
            .unwrap_or_default()
    }
}

/// One frame as logged.
#[derive(Clone, Copy)]
struct Slot {
    turn_id: Short,
    sequence_number: Option<u64>,
    /// `None`: the frame was not a JSON object with a string `type`.
    event_type: Option<Short>,
    thread_id: Option<Short>,
    id: Option<Short>,
    bytes: usize,
    at_ms: u64,
}

impl Slot {
    const EMPTY: Slot = Slot {
        turn_id: Short::EMPTY,
        sequence_number: None,
        event_type: None,
        thread_id: None,
        id: None,
        bytes: 0,
        at_ms: 0,
    };

    fn logged(&self) -> LoggedFrame {
        let owned = |s: &Option<Short>| s.as_ref().map(|s| String::from(s.as_str()));
        LoggedFrame {
            turn_id: String::from(self.turn_id.as_str()),
            sequence_number: self.sequence_number,
            event_type: self
                .event_type
                .as_ref()
                .map_or_else(|| String::from(MALFORMED), |t| String::from(t.as_str())),
            thread_id: owned(&self.thread_id),
            id: owned(&self.id),
            bytes: self.bytes,
            at_ms: self.at_ms,
        }
    }
}

/// The ring. Empty (and unallocated) until the first frame.
#[derive(Default)]
pub(super) struct FrameLog {
    /// Up to [`EVENT_LOG_CAPACITY`] slots; once full, `next` is the oldest.
    slots: Vec<Slot>,
    next: usize,
    /// Every frame ever logged.
    total: u64,
}

impl core::fmt::Debug for FrameLog {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FrameLog")
            .field("kept", &self.slots.len())
            .field("total", &self.total)
            .finish()
    }
}

impl FrameLog {
    /// Logs one frame of `turn_id`'s stream (`data` as received, `now` in ms).
    #[cfg(test)]
    pub(super) fn push(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        data: &str,
        now: u64,
    ) {
        self.push_envelope(turn_id, sequence_number, envelope(data), data.len(), now);
    }

    /// Logs one frame of `turn_id`'s stream whose envelope is known already: `envelope` is
    /// [`envelope`] of its data (or [`Envelope::of_text_delta`] of what the text-delta
    /// scanner read from it), `bytes` its length.
    pub(super) fn push_envelope(
        &mut self,
        turn_id: &str,
        sequence_number: Option<u64>,
        envelope: Option<Envelope<'_>>,
        bytes: usize,
        now: u64,
    ) {
        if self.slots.capacity() == 0 {
            self.slots.reserve_exact(EVENT_LOG_CAPACITY);
        }
        if self.slots.len() < EVENT_LOG_CAPACITY {
            self.slots.push(Slot::EMPTY);
        }
        // The newest slot (just pushed), or the oldest once the ring is full, written field by
        // field in place: building a ~290-byte slot and moving it in, with every field's buffer
        // zeroed first, was ≈1,000 instructions a frame with the inspector on (bench_core
        // `FORGESTREAM_BENCH_FRAMES`).
        let at = if self.slots.len() < EVENT_LOG_CAPACITY {
            self.slots.len() - 1
        } else {
            self.next
        };
        if let Some(slot) = self.slots.get_mut(at) {
            slot.turn_id.set(turn_id);
            slot.sequence_number = sequence_number;
            let envelope = envelope.as_ref();
            Short::set_option(&mut slot.event_type, envelope.and_then(|e| e.event_type));
            Short::set_option(&mut slot.thread_id, envelope.and_then(|e| e.thread_id));
            Short::set_option(&mut slot.id, envelope.and_then(|e| e.id));
            slot.bytes = bytes;
            slot.at_ms = now;
        }
        self.next = (self.next + 1) % EVENT_LOG_CAPACITY;
        self.total += 1;
    }

    /// Every frame ever logged.
    pub(super) fn total(&self) -> u64 {
        self.total
    }

    /// The kept slots, oldest first.
    fn ordered(&self) -> impl Iterator<Item = &Slot> + '_ {
        let split = if self.slots.len() < EVENT_LOG_CAPACITY {
            0
        } else {
            self.next
        };
        let (newer, older) = self.slots.split_at(split.min(self.slots.len()));
        older.iter().chain(newer)
    }

    /// Every kept frame, oldest first.
    pub(super) fn frames(&self) -> Vec<LoggedFrame> {
        self.ordered().map(Slot::logged).collect()
    }

    /// The frames logged after the first `seen` ever logged, at most the newest `limit` of them
    /// (frames that fell out of the ring, or beyond `limit`, are skipped; the older ones are
    /// never converted).
    pub(super) fn since(&self, seen: u64, limit: usize) -> EventLogPage {
        EventLogPage {
            total: self.total,
            capacity: EVENT_LOG_CAPACITY,
            frames: self.newest_since(seen, limit).map(Slot::logged).collect(),
        }
    }

    /// The kept slots logged after the first `seen` ever logged, at most the newest `limit`,
    /// oldest first (what [`FrameLog::since`] and [`FrameLog::since_packed`] return).
    fn newest_since(&self, seen: u64, limit: usize) -> impl Iterator<Item = &Slot> + '_ {
        let new = usize::try_from(self.total.saturating_sub(seen))
            .unwrap_or(usize::MAX)
            .min(limit);
        self.ordered().skip(self.slots.len().saturating_sub(new))
    }

    /// [`FrameLog::since`] as the packed JSON text the web crate hands to JS
    /// ([`Session::event_log_packed`](super::Session::event_log_packed) documents the shape).
    ///
    /// Why packed: an inspector polling a fast stream reads its 250 newest frames four times a
    /// second, and as objects (seven keys each, the turn id, type and message id repeated in
    /// every frame) they were ≈47 KB of JSON per read to write in wasm and parse in JS — a
    /// tenth of the SDK's main-thread time in W3 (issue 19). Each distinct string crosses once
    /// and each frame is seven numbers; JS builds the same objects from them.
    pub(super) fn since_packed(&self, seen: u64, limit: usize) -> String {
        // Each distinct string once, numbered in order of first use. The strings are found by
        // binary search in a sorted copy of the frames' strings rather than in a map built per
        // read: no allocation per string, and a read is O(n log n) in the frames it returns.
        let mut sorted: Vec<&str> = self
            .newest_since(seen, limit)
            .flat_map(|slot| strings(slot).into_iter().flatten())
            .collect();
        crate::sort::sort_by(&mut sorted, |a, b| a < b);
        sorted.dedup();
        let mut numbers: Vec<Option<usize>> = alloc::vec![None; sorted.len()];
        let mut table: Vec<&str> = Vec::with_capacity(sorted.len());
        let mut frames = String::new();
        for slot in self.newest_since(seen, limit) {
            if !frames.is_empty() {
                frames.push(',');
            }
            let [turn, kind, thread, id] = strings(slot).map(|text| {
                let at = sorted.binary_search(&text?).ok()?;
                let number = numbers.get_mut(at)?;
                Some(*number.get_or_insert_with(|| {
                    table.push(text.unwrap_or_default());
                    table.len() - 1
                }))
            });
            // `turn,seq,kind,thread,id,bytes,atMs`; -1 for an absent one.
            for (i, n) in [
                turn.map(|n| n as u64),
                slot.sequence_number,
                kind.map(|n| n as u64),
                thread.map(|n| n as u64),
                id.map(|n| n as u64),
                Some(slot.bytes as u64),
                Some(slot.at_ms),
            ]
            .into_iter()
            .enumerate()
            {
                if i > 0 {
                    frames.push(',');
                }
                match n {
                    Some(n) => crate::wire::write::unsigned(&mut frames, n),
                    None => frames.push_str("-1"),
                }
            }
        }
        let mut out = String::with_capacity(frames.len() + 64 + table.len() * 40);
        out.push_str("{\"total\":");
        crate::wire::write::unsigned(&mut out, self.total);
        out.push_str(",\"capacity\":");
        crate::wire::write::unsigned(&mut out, EVENT_LOG_CAPACITY as u64);
        out.push_str(",\"strings\":[");
        for (i, text) in table.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            crate::wire::write::string(&mut out, text);
        }
        out.push_str("],\"frames\":[");
        out.push_str(&frames);
        out.push_str("]}");
        out
    }
}

/// A frame's four string fields as the packed log numbers them: turn id, type, thread id, id.
fn strings(slot: &Slot) -> [Option<&str>; 4] {
    [
        Some(slot.turn_id.as_str()),
        Some(slot.event_type.as_ref().map_or(MALFORMED, Short::as_str)),
        slot.thread_id.as_ref().map(Short::as_str),
        slot.id.as_ref().map(Short::as_str),
    ]
}

/// The event type the log shows for a frame that was not a JSON object with a string `type`.
const MALFORMED: &str = "(malformed)";

/// The envelope fields of one frame, borrowed from it.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Envelope<'a> {
    event_type: Option<&'a str>,
    id: Option<&'a str>,
    thread_id: Option<&'a str>,
}

impl<'a> Envelope<'a> {
    /// The envelope of a frame the text-delta scanner read — the fields [`envelope`]
    /// finds in the same data (a string with escapes is absent there, and the scanner borrows
    /// exactly the strings without escapes). Why: with `inspect: true` every delta was scanned
    /// a second time for the log, about a twentieth of the SDK's time at 2,000 deltas/s
    /// (issue 19, W3).
    pub(super) fn of_text_delta(delta: &'a TextDelta<'a>) -> Envelope<'a> {
        let plain = |text: &'a Cow<'a, str>| match text {
            Cow::Borrowed(s) => Some(*s),
            Cow::Owned(_) => None,
        };
        Envelope {
            event_type: Some("model.message.delta"),
            id: plain(&delta.id),
            thread_id: delta.thread_id.as_ref().and_then(plain),
        }
    }
}

/// The top-level `type`, `id` and `thread_id` of a JSON object, when they are strings without
/// escapes (every TrueForge envelope); other values are skipped without being decoded. `None`
/// when `data` is not an object this scan can walk (then the log shows `(malformed)`). Never
/// panics; linear in `data`.
pub(super) fn envelope(data: &str) -> Option<Envelope<'_>> {
    let bytes = data.as_bytes();
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_ws(bytes, at + 1);
    let mut out = Envelope::default();
    if bytes.get(at) == Some(&b'}') {
        return Some(out);
    }
    loop {
        let (key, after) = string(data, at)?;
        at = skip_ws(bytes, after);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_ws(bytes, at + 1);
        let value_start = at;
        at = skip_value(bytes, at)?;
        let slot = match key {
            Some("type") => Some(&mut out.event_type),
            Some("id") => Some(&mut out.id),
            Some("thread_id") => Some(&mut out.thread_id),
            _ => None,
        };
        if let Some(slot) = slot {
            // A string value without escapes is kept; `null`, escaped text or another kind of
            // value leaves the field absent.
            *slot = string(data, value_start).and_then(|(v, end)| v.filter(|_| end == at));
        }
        at = skip_ws(bytes, at);
        match bytes.get(at) {
            Some(b',') => at = skip_ws(bytes, at + 1),
            Some(b'}') => return Some(out),
            _ => return None,
        }
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// A JSON string at `at`: its text when it has no escapes (`Some(None)` when it has), and the
/// index after its closing quote.
fn string(data: &str, at: usize) -> Option<(Option<&str>, usize)> {
    let bytes = data.as_bytes();
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let mut i = start;
    let mut escaped = false;
    loop {
        let rest = bytes.get(i..)?;
        let found = memchr::memchr2(b'"', b'\\', rest)?;
        i += found;
        if bytes.get(i) == Some(&b'"') {
            let text = (!escaped).then(|| data.get(start..i)).flatten();
            return Some((text, i + 1));
        }
        // A backslash: skip it and the byte it escapes.
        escaped = true;
        i += 2;
    }
}

/// The index after the JSON value at `at` (strings, objects and arrays walked, scalars read to
/// their end; not validated beyond what finding the end needs).
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => {
            // `string` needs a `str` only for the text; the end is found on bytes.
            let mut i = at + 1;
            loop {
                i += memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
                if bytes.get(i) == Some(&b'"') {
                    return Some(i + 1);
                }
                i += 2;
            }
        }
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match bytes.get(i)? {
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    b'"' => {
                        i = skip_value(bytes, i)?;
                        continue;
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let len = bytes
                .get(at..)?
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))?;
            (len > 0).then_some(at + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    #[test]
    fn the_envelope_is_read_from_any_field_order_and_other_values_are_skipped() {
        let e = envelope(r#"{"content":"a \"quoted\" {x}","type":"model.message.delta","id":"m1","thread_id":"main","n":[1,{"a":"]"}],"z":null}"#).unwrap();
        assert_eq!(
            e,
            Envelope {
                event_type: Some("model.message.delta"),
                id: Some("m1"),
                thread_id: Some("main"),
            }
        );
        // An escaped quote inside a nested string is skipped past, not taken for its end
        // (shard 1/40 of RELIABILITY.md: `+=` → `-=` on the escape's skip survived; it now loops).
        let e = envelope(r#"{"n":[{"a":"x\"],"}],"type":"model.message","id":"m2"}"#).unwrap();
        assert_eq!((e.event_type, e.id), (Some("model.message"), Some("m2")));
        let e =
            envelope(r#" { "type" : "turn.created" , "thread_id" : null , "id" : 7 } "#).unwrap();
        assert_eq!(e.event_type, Some("turn.created"));
        assert_eq!((e.thread_id, e.id), (None, None));
        assert_eq!(envelope("{}"), Some(Envelope::default()));
    }

    /// The log's fields for a frame the text-delta scanner read are the scan's own (escaped
    /// strings absent, `null` and missing threads absent), whatever the spelling.
    #[test]
    fn a_text_delta_logs_the_envelope_the_scan_finds() {
        let frames = [
            r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"a \"b\"\n"}"#,
            r#" { "content" : "x" , "id" : "m\u0031" , "type" : "model.message.delta" , "thread_id" : "th\"1" } "#,
            r#"{"type":"model.message.delta","id":"m1","thread_id":null,"reasoning_content":"r"}"#,
            r#"{"id":"m1","type":"model.message.delta","refusal":"no","created_at":"2026-12-01T00:00:00Z"}"#,
            r#"{"type":"model.message.delta","id":"élan—1","thread_id":"t/é","content":null}"#,
        ];
        for data in frames {
            let delta = crate::wire::fast::text_delta(data).expect(data);
            assert_eq!(
                Some(Envelope::of_text_delta(&delta)),
                envelope(data),
                "{data}"
            );
        }
    }

    #[test]
    fn what_is_not_an_object_is_malformed() {
        for bad in [
            "",
            "[]",
            "not json",
            r#"{"type":"x""#,
            r#"{"type" "x"}"#,
            r#"{"a":"unterminated}"#,
            "{\"a\":tru",
            r#"{"a":}"#,
        ] {
            assert_eq!(envelope(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_ring_keeps_the_newest_frames_and_counts_all() {
        let mut log = FrameLog::default();
        let n = EVENT_LOG_CAPACITY + 5;
        for i in 0..n {
            let data = format!(
                r#"{{"type":"model.message.delta","id":"m{i}","thread_id":"main","content":"x"}}"#
            );
            log.push("t1", Some(i as u64 + 1), &data, 10 + i as u64);
        }
        assert_eq!(log.total(), n as u64);
        assert_eq!(log.slots.capacity(), EVENT_LOG_CAPACITY, "allocated once");
        let frames = log.frames();
        assert_eq!(frames.len(), EVENT_LOG_CAPACITY);
        assert_eq!(frames[0].sequence_number, Some(6), "the oldest kept");
        assert_eq!(
            frames.last().unwrap().id.as_deref(),
            Some(&*format!("m{}", n - 1))
        );
        let page = log.since(n as u64 - 2, usize::MAX);
        assert_eq!(page.frames.len(), 2);
        assert_eq!(page.frames[1].sequence_number, Some(n as u64));
        assert_eq!(
            log.since(0, usize::MAX).frames.len(),
            EVENT_LOG_CAPACITY,
            "older frames fell out"
        );
        assert!(log.since(n as u64, usize::MAX).frames.is_empty());
    }

    #[test]
    fn a_limit_keeps_only_the_newest_frames_since_seen() {
        let mut log = FrameLog::default();
        let n = EVENT_LOG_CAPACITY + 5;
        for i in 0..n {
            log.push("t1", Some(i as u64 + 1), r#"{"type":"x"}"#, 0);
        }
        let seqs = |p: EventLogPage| -> Vec<Option<u64>> {
            p.frames.iter().map(|f| f.sequence_number).collect()
        };
        let total = n as u64;
        // Fewer new frames than the limit: all of them.
        assert_eq!(
            seqs(log.since(total - 2, 3)),
            [Some(total - 1), Some(total)]
        );
        // More: the newest `limit`, oldest first.
        let page = log.since(total - 10, 3);
        assert_eq!(page.total, total);
        assert_eq!(seqs(page), [Some(total - 2), Some(total - 1), Some(total)]);
        // Beyond the ring: the limit still counts from the newest.
        assert_eq!(log.since(0, 1).frames.len(), 1);
        assert_eq!(log.since(0, n + 10).frames.len(), EVENT_LOG_CAPACITY);
        assert!(log.since(total - 5, 0).frames.is_empty());
        assert!(log.since(total, 3).frames.is_empty());
    }

    #[test]
    fn long_fields_are_cut_at_a_character_boundary() {
        let mut log = FrameLog::default();
        let long = "é".repeat(100);
        log.push(&long, None, &format!(r#"{{"type":"{long}"}}"#), 0);
        log.push("t", None, "garbage", 0);
        let frames = log.frames();
        assert!(frames[0].turn_id.len() <= FIELD_BYTES && frames[0].turn_id.ends_with("é…"));
        assert!(frames[0].event_type.ends_with('…'));
        assert_eq!(frames[1].event_type, "(malformed)");
        assert_eq!(frames[1].bytes, "garbage".len());
    }

    /// The packed page (the web crate's `eventLogSince`) unpacked as the package's `eventLog()`
    /// does it, for `since(seen, limit)`'s frames.
    fn unpacked(log: &FrameLog, seen: u64, limit: usize) -> (u64, usize, Vec<LoggedFrame>) {
        let page: serde_json::Value = serde_json::from_str(&log.since_packed(seen, limit)).unwrap();
        let strings: Vec<String> = page["strings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| String::from(s.as_str().unwrap()))
            .collect();
        let n: Vec<i64> = page["frames"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(n.len() % 7, 0);
        let text = |i: i64| usize::try_from(i).ok().map(|i| strings[i].clone());
        let frames = n
            .chunks(7)
            .map(|f| LoggedFrame {
                turn_id: text(f[0]).unwrap(),
                sequence_number: u64::try_from(f[1]).ok(),
                event_type: text(f[2]).unwrap(),
                thread_id: text(f[3]),
                id: text(f[4]),
                bytes: f[5] as usize,
                at_ms: f[6] as u64,
            })
            .collect();
        // Each distinct string crosses once.
        let mut distinct = strings.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(distinct.len(), strings.len());
        (
            page["total"].as_u64().unwrap(),
            page["capacity"].as_u64().unwrap() as usize,
            frames,
        )
    }

    #[test]
    fn the_packed_page_holds_the_same_frames_as_the_page() {
        let mut log = FrameLog::default();
        // Escapes in a turn id (only the envelope's unescaped strings are kept; a turn id comes
        // from the session), an absent id and thread, a malformed frame, no sequence number.
        let turns = ["t1", "t\"2\"\\\n", "t3"];
        for i in 0..(EVENT_LOG_CAPACITY as u64 + 150) {
            let turn = turns[(i / 700) as usize % 3];
            let data = match i % 5 {
                0 => format!(
                    r#"{{"type":"model.message.delta","id":"m{}","thread_id":"main","content":"x"}}"#,
                    i / 10
                ),
                1 => String::from(r#"{"type":"turn.state","state":{"status":"running"}}"#),
                2 => String::from("not json"),
                3 => String::from(r#"{"type":"tool.response","id":"r1","thread_id":"sub-a"}"#),
                _ => String::from(r#"{"type":"model.message.delta","id":"m\u0031","content":"y"}"#),
            };
            let seq = (i % 7 != 0).then_some(i + 1);
            log.push(turn, seq, &data, 1_000 + i);
        }
        for (seen, limit) in [
            (0, usize::MAX),
            (0, 250),
            (log.total() - 3, 250),
            (log.total(), 250),
            (log.total() - 10, 0),
            (100, 5_000),
        ] {
            let page = log.since(seen, limit);
            let (total, capacity, frames) = unpacked(&log, seen, limit);
            assert_eq!((total, capacity), (page.total, page.capacity));
            assert_eq!(frames, page.frames, "seen {seen}, limit {limit}");
        }
        assert!(log
            .since(0, usize::MAX)
            .frames
            .iter()
            .any(|f| f.turn_id.contains('"') && f.event_type == MALFORMED && f.id.is_none()));
    }
}
