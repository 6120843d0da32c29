//! The fast path for the hot event. A live turn is almost all text-only
//! `model.message.delta` frames; [`text_delta`] reads those straight from the text without
//! allocating (strings borrow from the frame), and declines anything else — another type, an
//! unknown field, array content, a duplicate key — which the general decoder
//! ([`super::json`] / `super::decode`) then reads, so the result is always the same as the
//! general decoder's.

use super::message::{Content, MessageDelta};
use alloc::borrow::Cow;
use alloc::string::String;

/// A delta that carries only text (`content` as a string, `reasoning_content`, `refusal`) and
/// the envelope (`type`, `id`, `thread_id`, `created_at`): almost every frame of a live turn.
/// Strings borrow from the frame's `data` unless they hold escapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextDelta<'a> {
    /// The base message's event id.
    pub(crate) id: Cow<'a, str>,
    pub(crate) created_at: Option<Cow<'a, str>>,
    pub(crate) thread_id: Option<Cow<'a, str>>,
    pub(crate) content: Option<Cow<'a, str>>,
    pub(crate) refusal: Option<Cow<'a, str>>,
    pub(crate) reasoning_content: Option<Cow<'a, str>>,
}

impl TextDelta<'_> {
    /// The same delta as the general decoder's [`MessageDelta`].
    pub(crate) fn into_delta(self) -> MessageDelta {
        let owned = |v: Option<Cow<'_, str>>| v.map(Cow::into_owned);
        MessageDelta {
            id: self.id.into_owned(),
            created_at: owned(self.created_at),
            thread_id: owned(self.thread_id),
            content: self.content.map(|c| Content::Text(c.into_owned())),
            refusal: owned(self.refusal),
            reasoning_content: owned(self.reasoning_content),
            tool_calls: None,
            finish_reason: None,
            usage: None,
        }
    }
}

/// Reads `data` as a text-only `model.message.delta` with a hand-written scanner (no serde, no
/// allocation unless a string holds escapes). `None` means "not this exact shape, ask the next
/// decoder": another type, another field (`tool_calls`, `usage`, `finish_reason`, unknown
/// ones), a duplicate key, an escaped key, a number, a lone surrogate, anything not plain JSON.
/// When it answers, the answer equals the general decoder's (tested below, including by
/// property). Never panics; linear in `data`.
pub(crate) fn text_delta(data: &str) -> Option<TextDelta<'_>> {
    let mut scan = Scanner {
        text: data,
        bytes: data.as_bytes(),
        at: 0,
    };
    scan.ws();
    scan.eat(b'{')?;
    let mut is_delta = false;
    let mut id = None;
    let mut delta = TextDelta {
        id: Cow::Borrowed(""),
        created_at: None,
        thread_id: None,
        content: None,
        refusal: None,
        reasoning_content: None,
    };
    // Keys seen, as bits (`TYPE`…): a duplicate goes to the general decoder (serde's rule).
    let mut seen = 0u8;
    loop {
        scan.ws();
        let bit = scan.known_key()?;
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        scan.ws();
        scan.eat(b':')?;
        scan.ws();
        if bit == TYPE {
            // The one value the fast path takes, compared in place: no scan, no copy.
            scan.delta_type()?;
            is_delta = true;
        } else {
            let slot = match bit {
                ID => &mut id,
                CREATED_AT => &mut delta.created_at,
                THREAD_ID => &mut delta.thread_id,
                CONTENT => &mut delta.content,
                REFUSAL => &mut delta.refusal,
                _ => &mut delta.reasoning_content,
            };
            *slot = scan.string_or_null()?;
        }
        scan.ws();
        match scan.next()? {
            b',' => continue,
            b'}' => break,
            _ => return None,
        }
    }
    scan.ws();
    if scan.at != scan.bytes.len() || !is_delta {
        return None;
    }
    delta.id = id?;
    Some(delta)
}

// The keys the fast path reads, as bits of the `seen` set (a duplicate goes to the general
// decoder: serde's rule for it).
const TYPE: u8 = 1;
const ID: u8 = 2;
const CREATED_AT: u8 = 4;
const THREAD_ID: u8 = 8;
const CONTENT: u8 = 16;
const REFUSAL: u8 = 32;
const REASONING_CONTENT: u8 = 64;

/// The index of the first byte in `bytes` that ends a plain JSON string run — `"`, `\\` or a
/// control character (< 0x20) — or `None` if there is none.
///
/// Eight bytes per step (SWAR): the per-byte loop was the largest share of this decoder's time,
/// and the size-optimised wasm build does not vectorise it. For each 8-byte word `w`, a byte is
/// flagged when it is zero in `w ^ 0x22…` (a quote), in `w ^ 0x5C…` (a backslash), or below
/// 0x20 in `w`, by the classic `(x − 0x01…·k) & !x & 0x80…` test. A borrow can flag a byte only
/// *above* a truly flagged one, so the lowest flag (little-endian: the first byte in memory) is
/// always exact; bytes ≥ 0x80 (UTF-8 sequences) are never flagged.
#[inline(always)]
pub(crate) fn special_at(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut at = 0;
    while let Some(word) = bytes.get(at..at + 8) {
        let Ok(word) = <[u8; 8]>::try_from(word) else {
            break;
        };
        let w = u64::from_le_bytes(word);
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let flags = (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash)
            | (w.wrapping_sub(ONES * 0x20) & !w);
        let flags = flags & HIGH;
        if flags != 0 {
            return Some(at + (flags.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    bytes
        .get(at..)?
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

/// A cursor over JSON text. Every method returns `None` on anything it does not accept.
struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

// `#[inline(always)]` on the per-byte helpers: the wasm build optimises for size (opt-level
// "z") and would otherwise call them per byte.
impl<'a> Scanner<'a> {
    #[inline(always)]
    fn next(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    #[inline(always)]
    fn eat(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    /// JSON insignificant whitespace (RFC 8259 §2).
    #[inline(always)]
    fn ws(&mut self) {
        // Compact JSON (the usual case) has none: one comparison decides.
        if matches!(self.bytes.get(self.at), Some(&b) if b > b' ') {
            return;
        }
        while matches!(self.bytes.get(self.at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// One of the keys the fast path reads (its bit), matched in place with the closing quote:
    /// no scan for the key's end, no slicing. Any other key, or one written with escapes, is
    /// `None` (the general decoder's case).
    ///
    /// Byte patterns, not `"type" => …`: string patterns compare through `memcmp`, which the
    /// size-optimised wasm build calls out of line for every key of every frame; slice
    /// patterns compile to a decision tree on the bytes.
    #[inline(always)]
    fn known_key(&mut self) -> Option<u8> {
        self.eat(b'"')?;
        let (bit, len) = match self.bytes.get(self.at..)? {
            [b't', b'y', b'p', b'e', b'"', ..] => (TYPE, 4),
            [b'i', b'd', b'"', ..] => (ID, 2),
            [b'c', b'r', b'e', b'a', b't', b'e', b'd', b'_', b'a', b't', b'"', ..] => {
                (CREATED_AT, 10)
            }
            [b't', b'h', b'r', b'e', b'a', b'd', b'_', b'i', b'd', b'"', ..] => (THREAD_ID, 9),
            [b'c', b'o', b'n', b't', b'e', b'n', b't', b'"', ..] => (CONTENT, 7),
            [b'r', b'e', b'f', b'u', b's', b'a', b'l', b'"', ..] => (REFUSAL, 7),
            [b'r', b'e', b'a', b's', b'o', b'n', b'i', b'n', b'g', b'_', b'c', b'o', b'n', b't', b'e', b'n', b't', b'"', ..] => {
                (REASONING_CONTENT, 17)
            }
            _ => return None,
        };
        self.at += len + 1;
        Some(bit)
    }

    /// The `type` value `"model.message.delta"`, written plainly; anything else (another type,
    /// `null`, the same text with escapes) is `None` and goes to the general decoder.
    #[inline(always)]
    fn delta_type(&mut self) -> Option<()> {
        // A byte pattern (see `known_key`): `==` on the slices would call `memcmp`.
        let [b'"', b'm', b'o', b'd', b'e', b'l', b'.', b'm', b'e', b's', b's', b'a', b'g', b'e', b'.', b'd', b'e', b'l', b't', b'a', b'"', ..] =
            self.bytes.get(self.at..)?
        else {
            return None;
        };
        self.at += 21;
        Some(())
    }

    /// `null` (→ `Some(None)`) or a string (→ `Some(Some(text))`).
    fn string_or_null(&mut self) -> Option<Option<Cow<'a, str>>> {
        // Byte patterns (no `memcmp` call per value; see the key match in `text_delta`).
        if let Some([b'n', b'u', b'l', b'l']) = self.bytes.get(self.at..self.at.saturating_add(4)) {
            self.at += 4;
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A JSON string, borrowed when it has no escapes. Unescaped control characters (which
    /// serde_json rejects) and lone surrogates give `None`.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.at;
        let end = start + special_at(self.bytes.get(start..)?)?;
        match self.bytes.get(end)? {
            b'"' => {
                self.at = end + 1;
                return self.text.get(start..end).map(Cow::Borrowed);
            }
            b'\\' => {}
            _ => return None,
        }
        // Escapes: copy what was plain, then decode the rest.
        let mut out = String::from(self.text.get(start..end)?);
        self.at = end;
        loop {
            let plain_start = self.at;
            loop {
                match *self.bytes.get(self.at)? {
                    b'"' | b'\\' => break,
                    0..=0x1F => return None,
                    _ => self.at += 1,
                }
            }
            out.push_str(self.text.get(plain_start..self.at)?);
            if self.next()? == b'"' {
                return Some(Cow::Owned(out));
            }
            let unescaped = match self.next()? {
                b'u' => self.unicode_escape()?,
                other => super::json::simple_escape(other)?,
            };
            out.push(unescaped);
        }
    }

    /// After `\u`: four hex digits, or a surrogate pair written as two escapes.
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        if !(0xD800..0xDC00).contains(&first) {
            // A lone low surrogate is not a `char`: `from_u32` refuses it.
            return char::from_u32(first);
        }
        if self.next()? != b'\\' || self.next()? != b'u' {
            return None;
        }
        let second = self.hex4()?;
        if !(0xDC00..0xE000).contains(&second) {
            return None;
        }
        char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut value = 0;
        for _ in 0..4 {
            let digit = char::from(self.next()?).to_digit(16)?;
            value = value * 16 + digit;
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::event::Event;
    use super::*;
    use proptest::prelude::*;

    fn general(data: &str) -> Event {
        Event::from_value(serde_json::from_str(data).unwrap()).unwrap()
    }

    /// Every delta frame of every recorded real stream: the fast path applies and agrees with the
    /// general decoder.
    #[test]
    fn agrees_with_the_general_decoder_on_recorded_deltas() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/recorded");
        let mut checked = 0;
        let mut text_checked = 0;
        for dir in std::fs::read_dir(&root).unwrap() {
            let dir = dir.unwrap().path();
            if !dir.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(dir).unwrap() {
                let path = file.unwrap().path();
                if path.extension().is_none_or(|e| e != "sse") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text.lines().filter_map(|l| l.strip_prefix("data: ")) {
                    // The hand-written general decoder agrees with the serde oracle on every frame.
                    assert_eq!(Event::from_json(line).unwrap(), general(line), "{line}");
                    checked += 1;
                    if let Some(text) = text_delta(line) {
                        let owned = Event::ModelMessageDelta(text.into_delta());
                        assert_eq!(owned, general(line), "{line}");
                        text_checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "only {checked} frames checked");
        assert!(
            text_checked > 100,
            "only {text_checked} text deltas checked"
        );
    }

    /// What the fast path does not model goes to the general path, which keeps it.
    #[test]
    fn declines_what_it_does_not_model() {
        let unknown_field = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"x","new_field":1}"#;
        match Event::from_json(unknown_field).unwrap() {
            // Unknown fields are ignored by the general decoder too.
            Event::ModelMessageDelta(d) => assert_eq!(d.content, Some(Content::Text("x".into()))),
            other => panic!("{other:?}"),
        }
        let parts = r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":[{"type":"text","text":"x"}]}"#;
        assert!(matches!(
            Event::from_json(parts).unwrap(),
            Event::ModelMessageDelta(_)
        ));
        let not_delta =
            r#"{"type":"model.message","id":"m1","thread_id":"main","note":"model.message.delta"}"#;
        for declined in [
            unknown_field,
            parts,
            not_delta,
            "{\"type\":\"model.message.delta\"",
        ] {
            assert!(text_delta(declined).is_none(), "{declined}");
        }
        // Keys and the type are matched in place with their closing quote: a longer key that
        // starts like a known one, or the type written with an escape, is the general
        // decoder's (which reads the same delta).
        for general_only in [
            r#"{"type":"model.message.delt\u0061","id":"m1","content":"x"}"#,
            r#"{"type":"model.message.delta","id":"m1","content":"x","ids":"y"}"#,
            r#"{"type":"model.message.delta","id":"m1","contents":"x"}"#,
            r#"{"type":"model.message.deltas","id":"m1","content":"x"}"#,
        ] {
            assert!(text_delta(general_only).is_none(), "{general_only}");
            assert!(matches!(
                Event::from_json(general_only).unwrap(),
                Event::ModelMessageDelta(_) | Event::Unknown { .. }
            ));
        }
        let tool = r#"{"type":"model.message.delta","id":"m1","tool_calls":[{"index":0}]}"#;
        assert!(text_delta(tool).is_none());
        assert!(matches!(
            Event::from_json(tool).unwrap(),
            Event::ModelMessageDelta(_)
        ));
    }

    #[test]
    fn text_deltas_borrow_unless_escaped() {
        let plain = r#" { "content" : "a é 😀" , "type":"model.message.delta","id":"m","thread_id":null } "#;
        let d = text_delta(plain).unwrap();
        assert!(matches!(d.content, Some(Cow::Borrowed("a é 😀"))));
        assert_eq!(d.thread_id, None);
        let escaped =
            r#"{"type":"model.message.delta","id":"m","content":"\"q\"\n\u00e9\ud83d\ude00\/"}"#;
        let d = text_delta(escaped).unwrap();
        assert_eq!(d.content.as_deref(), Some("\"q\"\né😀/"));
        for bad in [
            r#"{"type":"model.message.delta","id":"m","content":"\ud83d"}"#,
            r#"{"type":"model.message.delta","id":"m","content":"\udc00"}"#,
            r#"{"type":"model.message.delta","id":"m","content":"\x"}"#,
            "{\"type\":\"model.message.delta\",\"id\":\"m\",\"content\":\"\u{1}\"}",
            r#"{"type":"model.message.delta","id":"m","content":"a"} x"#,
            r#"{"type":"model.message.delta","id":"m","id":"n"}"#,
            r#"{"type":"model.message.delta","id":null}"#,
            r#"{"type":"model.message.delta","id":"m","content":1}"#,
            r#"{"\u0074ype":"model.message.delta","id":"m"}"#,
            r#"{"type":"model.message.delta","id":"m",}"#,
        ] {
            assert!(text_delta(bad).is_none(), "{bad}");
        }
    }

    /// Object members the property test assembles: known keys with valid and invalid values,
    /// unknown and escaped keys, odd whitespace.
    fn member() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            1 => Just("type"),
            1 => Just("id"),
            3 => Just("created_at"),
            3 => Just("thread_id"),
            6 => Just("content"),
            3 => Just("refusal"),
            3 => Just("reasoning_content"),
            1 => Just("usage"),
            1 => Just("other"),
            1 => Just("\\u0069d"),
        ];
        let piece = prop_oneof![
            "[a-z ]{0,4}",
            Just(String::from("é")),
            Just(String::from("😀")),
            Just(String::from("\\n")),
            Just(String::from("\\\"")),
            Just(String::from("\\\\")),
            Just(String::from("\\/")),
            Just(String::from("\\t\\b\\f\\r")),
            Just(String::from("\\u00e9")),
            Just(String::from("\\u0000")),
            Just(String::from("\\uD83D\\uDE00")),
            Just(String::from("\\ud83d")),
            Just(String::from("\\udc00")),
            Just(String::from("\\ud83d\\u0041")),
            Just(String::from("\\q")),
            Just(String::from("\\u12")),
            Just(String::from("\u{1}")),
            Just(String::from("\t")),
        ];
        let string = proptest::collection::vec(piece, 0..5)
            .prop_map(|pieces| alloc::format!("\"{}\"", pieces.concat()));
        let value = prop_oneof![
            1 => Just(String::from("\"model.message.delta\"")),
            20 => string,
            4 => Just(String::from("null")),
            1 => Just(String::from("nul")),
            1 => Just(String::from("7")),
            1 => Just(String::from("[]")),
            1 => Just(String::from("{\"input_tokens\":1}")),
        ];
        let ws = prop_oneof![Just(""), Just(""), Just(" "), Just("\n\t"), Just("\r ")];
        (key, ws.clone(), value, ws)
            .prop_map(|(k, w1, v, w2)| alloc::format!("{w1}\"{k}\"{w2}:{w1}{v}{w2}"))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        /// The word-at-a-time scan finds the same first special byte as a byte loop, on bytes
        /// biased towards the interesting ones (quote, backslash, controls, 0x1F/0x20 edges,
        /// bytes ≥ 0x80, and 0x21/0x23/0x5B/0x5D next to the specials).
        #[test]
        fn special_at_matches_a_byte_loop(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    6 => proptest::prelude::any::<u8>(),
                    1 => proptest::sample::select(alloc::vec![b'"', b'\\', 0x00, 0x1F, 0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7F, 0x80, 0xFF]),
                    8 => proptest::sample::select(alloc::vec![b'a', b'z', b' ', 0xC3, 0xA9]),
                ],
                0..40,
            ),
        ) {
            let naive = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            prop_assert_eq!(special_at(&bytes), naive, "{:?}", bytes);
        }

        /// Whenever the scanner answers, the general decoder gives the same delta; and on
        /// well-formed text-only deltas it does answer.
        #[test]
        fn scanner_agrees_with_the_general_decoder(
            mut members in proptest::collection::vec(member(), 0..5),
            envelope in proptest::bool::weighted(0.9),
            at in (0usize..6, 0usize..7),
            tail in proptest::prop_oneof![8 => Just(""), 1 => Just(" \n"), 1 => Just(","), 1 => Just("x")],
        ) {
            if envelope {
                // Mostly well-formed: the type and an id somewhere among the members.
                members.insert(at.0.min(members.len()), String::from(r#""type":"model.message.delta""#));
                members.insert(at.1.min(members.len()), String::from(r#""id":"m\u00e9""#));
            }
            let text = alloc::format!("{{{}}}{tail}", members.join(","));
            let general = serde_json::from_str::<serde_json::Value>(&text)
                .ok()
                .and_then(|raw| Event::from_value(raw).ok());
            if let Some(fast) = text_delta(&text) {
                prop_assert_eq!(Some(Event::ModelMessageDelta(fast.into_delta())), general, "{}", text);
            }
        }
    }
}
