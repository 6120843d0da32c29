//! A pull reader over JSON text (RFC 8259) and the [`Decode`] trait the wire types implement by
//! hand on top of it.
//!
//! Why not serde's derives: every derived `Deserialize` is generic over the deserializer, so each
//! wire type's decoder was compiled once per input kind (text, `Value`, map-access adapters), and
//! the tolerant unions needed serde's buffering machinery besides. That was the largest share of
//! the wasm (issue 16: serde decoding ≈38% of the code). Here each type has exactly one decoder,
//! a plain function over [`Reader`], and the reader itself is one non-generic state machine.
//!
//! The rules are serde_json's, so the derives (kept on the types) serve as the oracle of the
//! native property tests (`tests/decode_oracle.rs`): the same texts are accepted, to the same
//! values, and the same texts are refused. In particular: unknown keys are skipped (validated,
//! not kept), a duplicate known key is an error, `null` is accepted only where the type is an
//! `Option` (or a JSON value), integers must be integer literals in range, nesting deeper than
//! [`MAX_DEPTH`] is an error (never a stack overflow), and only whitespace may follow the value.
//!
//! Two deliberate differences from serde_json: a struct written as a JSON array (serde's
//! positional form, which no server sends) is refused, and floats are read correctly rounded
//! (`core`'s values, by `float`; serde_json's default is off by an ulp at times).

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde_json::{Map, Number, Value};

/// Deepest `[`/`{` nesting accepted: 127 levels, as serde_json (its counter starts at 128 and
/// must stay above zero).
pub const MAX_DEPTH: usize = 127;

/// Why a JSON text was refused, and the byte offset where the reader stood.
///
/// `Display` gives `"<reason> at byte <offset>"`, with the field name where one applies
/// (e.g. ``missing field `turn_id` at byte 57``).
///
/// One pointer wide (the reason and offset are boxed): every `?` of the decoders moves it, and
/// with the 16-byte error copied at each of those sites the wasm was 3.5 KB gzip larger (issue
/// 16). Errors are rare (never on the live path), so their allocation costs nothing that matters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError(Box<Inner>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct Inner {
    reason: Reason,
    offset: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Reason {
    Syntax(&'static str),
    Expected(&'static str),
    Missing(&'static str),
    Duplicate(&'static str),
    Custom(Box<str>),
}

impl JsonError {
    /// Why, without the offset (e.g. ``missing field `turn_id` ``), for messages that point
    /// into the text another way.
    pub fn reason(&self) -> String {
        match &self.0.reason {
            Reason::Syntax(what) => String::from(*what),
            Reason::Expected(what) => alloc::format!("invalid type: expected {what}"),
            Reason::Missing(field) => alloc::format!("missing field `{field}`"),
            Reason::Duplicate(field) => alloc::format!("duplicate field `{field}`"),
            Reason::Custom(what) => String::from(&**what),
        }
    }

    /// Byte offset into the text (0-based) where the reader stood.
    pub fn offset(&self) -> usize {
        self.0.offset
    }

    /// The 1-based `(line, column)` of [`JsonError::offset`] in `text` (the text that was
    /// read); the column counts bytes from the line's start.
    pub fn line_column(&self, text: &str) -> (usize, usize) {
        let before = text
            .as_bytes()
            .get(..self.0.offset)
            .unwrap_or(text.as_bytes());
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        (line, before.len() - start + 1)
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason(), self.0.offset)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for JsonError {}

/// A JSON number as serde_json reads it: a non-negative integer (`u64`), a negative one (`i64`),
/// or anything else (fraction, exponent, out of integer range) as `f64`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Pos(u64),
    Neg(i64),
    Float(f64),
}

/// A cursor over one JSON text. Strings borrow from the text unless they hold escapes.
pub struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    depth: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `text`.
    pub fn new(text: &'a str) -> Self {
        Reader {
            text,
            bytes: text.as_bytes(),
            at: 0,
            depth: 0,
        }
    }

    fn error(&self, reason: Reason) -> JsonError {
        JsonError(Box::new(Inner {
            reason,
            offset: self.at,
        }))
    }

    fn syntax(&self, what: &'static str) -> JsonError {
        self.error(Reason::Syntax(what))
    }

    /// "invalid type: expected `what`", at the current position.
    pub fn expected(&self, what: &'static str) -> JsonError {
        self.error(Reason::Expected(what))
    }

    /// An error with a free-form reason, at the current position.
    pub fn invalid(&self, reason: &str) -> JsonError {
        self.error(Reason::Custom(reason.into()))
    }

    /// "duplicate field `field`", at the current position.
    pub fn duplicate(&self, field: &'static str) -> JsonError {
        self.error(Reason::Duplicate(field))
    }

    /// "missing field `field`", at the current position.
    pub fn missing(&self, field: &'static str) -> JsonError {
        self.error(Reason::Missing(field))
    }

    /// Skips insignificant whitespace (RFC 8259 §2).
    #[inline(always)]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    /// The next significant byte, not consumed.
    #[inline(always)]
    fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.bytes.get(self.at).copied()
    }

    /// Ends the text: only whitespace may follow the value.
    pub fn finish(&mut self) -> Result<(), JsonError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.syntax("trailing characters")),
        }
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<(), JsonError> {
        if self.bytes.get(self.at..self.at + word.len()) == Some(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.syntax("expected a value"))
        }
    }

    /// Consumes a `null` if one is next; `true` when it did.
    pub fn null(&mut self) -> Result<bool, JsonError> {
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn enter(&mut self) -> Result<(), JsonError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.syntax("recursion limit exceeded"));
        }
        self.depth += 1;
        self.at += 1;
        Ok(())
    }

    /// Whether an array starts here (the next significant byte is `[`).
    pub fn at_array(&mut self) -> bool {
        self.peek() == Some(b'[')
    }

    /// Whether a string starts here.
    pub fn at_string(&mut self) -> bool {
        self.peek() == Some(b'"')
    }

    /// Opens an object; then call [`Reader::next_key`] with the answer until it gives `None`.
    /// Errors: "invalid type: expected `what`" when the value is not an object.
    pub fn object(&mut self, what: &'static str) -> Result<Seq, JsonError> {
        if self.peek() != Some(b'{') {
            return Err(self.expected(what));
        }
        self.enter()?;
        Ok(Seq { first: true })
    }

    /// The next member's key of the object `seq` opened (its `:` consumed, the reader at the
    /// value, which the caller must read or [`skip`](Reader::skip)); `None` after the `}`.
    pub fn next_key(&mut self, seq: &mut Seq) -> Result<Option<Cow<'a, str>>, JsonError> {
        if !self.more(seq, b'}')? {
            return Ok(None);
        }
        if self.peek() != Some(b'"') {
            return Err(self.syntax("expected an object key"));
        }
        let key = self.string_body()?;
        if self.peek() != Some(b':') {
            return Err(self.syntax("expected `:`"));
        }
        self.at += 1;
        Ok(Some(key))
    }

    /// Opens an array; then call [`Reader::next_element`] until it answers `false`.
    /// Errors: "invalid type: expected `what`" when the value is not an array.
    pub fn array(&mut self, what: &'static str) -> Result<Seq, JsonError> {
        if self.peek() != Some(b'[') {
            return Err(self.expected(what));
        }
        self.enter()?;
        Ok(Seq { first: true })
    }

    /// Whether another element of the array `seq` opened follows (the reader then stands at
    /// it); `false` after the `]`.
    pub fn next_element(&mut self, seq: &mut Seq) -> Result<bool, JsonError> {
        self.more(seq, b']')
    }

    /// The separator logic shared by objects and arrays: `close` ends, `,` continues (not
    /// before the first member, nor before the closing bracket).
    fn more(&mut self, seq: &mut Seq, close: u8) -> Result<bool, JsonError> {
        let next = self.peek();
        if next == Some(close) && seq.first {
            self.at += 1;
            self.depth -= 1;
            return Ok(false);
        }
        if !seq.first {
            match next {
                Some(b',') => self.at += 1,
                Some(b) if b == close => {
                    self.at += 1;
                    self.depth -= 1;
                    return Ok(false);
                }
                None => return Err(self.syntax("EOF while parsing a value")),
                Some(_) => return Err(self.syntax("expected `,` or a closing bracket")),
            }
            if self.peek() == Some(close) {
                return Err(self.syntax("trailing comma"));
            }
        }
        seq.first = false;
        Ok(true)
    }

    /// A string value (borrowed unless it holds escapes).
    pub fn str(&mut self) -> Result<Cow<'a, str>, JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.expected("a string"));
        }
        self.string_body()
    }

    /// A string value, owned.
    pub fn string(&mut self) -> Result<String, JsonError> {
        self.str().map(Cow::into_owned)
    }

    /// Reads the string starting at the `"` under the cursor (RFC 8259 §7): control characters
    /// are refused, escapes decoded, and a `\u` escape of a lone surrogate is an error.
    fn string_body(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.at += 1;
        let start = self.at;
        let mut owned: Option<String> = None;
        let mut run = start;
        loop {
            let Some(offset) = special_at(&self.bytes[self.at..]) else {
                self.at = self.bytes.len();
                return Err(self.syntax("EOF while parsing a string"));
            };
            self.at += offset;
            match self.bytes[self.at] {
                b'"' => {
                    let tail = &self.text[run..self.at];
                    self.at += 1;
                    return Ok(match owned {
                        None => Cow::Borrowed(tail),
                        Some(mut text) => {
                            text.push_str(tail);
                            Cow::Owned(text)
                        }
                    });
                }
                b'\\' => {
                    let text = match &mut owned {
                        Some(text) => text,
                        // Sized once for the whole string (decoded, it is at most as long as
                        // escaped): no regrowth per escape, no slack kept in a value.
                        None => owned.insert(String::with_capacity(
                            self.string_end(self.at).saturating_sub(start),
                        )),
                    };
                    text.push_str(&self.text[run..self.at]);
                    self.at += 1;
                    self.escape(text)?;
                    run = self.at;
                }
                _ => return Err(self.syntax("control character in a string")),
            }
        }
    }

    /// Where the string around `from` ends (its closing `"`), escapes stepped over; the end of
    /// the text if it does not end, or the first control character (the caller refuses it).
    /// Only a size hint: nothing is checked.
    fn string_end(&self, mut from: usize) -> usize {
        while let Some(offset) = self.bytes.get(from..).and_then(special_at) {
            from += offset;
            if self.bytes.get(from) != Some(&b'\\') {
                return from;
            }
            from += 2;
        }
        self.bytes.len()
    }

    /// Decodes one escape (the cursor just past its `\\`) onto `text`.
    fn escape(&mut self, text: &mut String) -> Result<(), JsonError> {
        let Some(&byte) = self.bytes.get(self.at) else {
            return Err(self.syntax("EOF while parsing a string"));
        };
        self.at += 1;
        let c = match byte {
            b'u' => {
                let high = self.hex4()?;
                let code = match high {
                    0xD800..=0xDBFF => {
                        if self.bytes.get(self.at..self.at + 2) != Some(b"\\u") {
                            return Err(self.syntax("lone leading surrogate in hex escape"));
                        }
                        self.at += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.syntax("lone leading surrogate in hex escape"));
                        }
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => {
                        return Err(self.syntax("lone trailing surrogate in hex escape"))
                    }
                    other => other,
                };
                match char::from_u32(code) {
                    Some(c) => c,
                    None => return Err(self.syntax("invalid unicode code point")),
                }
            }
            _ => match simple_escape(byte) {
                Some(c) => c,
                None => {
                    self.at -= 1;
                    return Err(self.syntax("invalid escape"));
                }
            },
        };
        text.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut code = 0u32;
        for _ in 0..4 {
            let Some(&byte) = self.bytes.get(self.at) else {
                return Err(self.syntax("EOF while parsing a string"));
            };
            let digit = match byte {
                b'0'..=b'9' => byte - b'0',
                b'a'..=b'f' => byte - b'a' + 10,
                b'A'..=b'F' => byte - b'A' + 10,
                _ => return Err(self.syntax("invalid escape")),
            };
            code = code * 16 + u32::from(digit);
            self.at += 1;
        }
        Ok(code)
    }

    /// A number (RFC 8259 §6), classified as serde_json does.
    fn number(&mut self) -> Result<Num, JsonError> {
        let start = self.at;
        let (negative, int_end, float) = self.number_syntax()?;
        if !float {
            let digits = &self.text[start + usize::from(negative)..int_end];
            if let Ok(value) = digits.parse::<u64>() {
                if !negative {
                    return Ok(Num::Pos(value));
                }
                if value == 0 {
                    return Ok(Num::Float(-0.0));
                }
                if let Some(value) = 0i64.checked_sub_unsigned(value) {
                    return Ok(Num::Neg(value));
                }
            }
        }
        // `core`'s value, without `core`'s tables (see `float`).
        match super::float::parse(&self.text[start..self.at]) {
            value if value.is_finite() => Ok(Num::Float(value)),
            _ => Err(self.error(Reason::Syntax("number out of range"))),
        }
    }

    /// Reads a number's grammar only: `(negative, end of the integer part, has a fraction or
    /// exponent)`. An ignored member's number is checked this far (as serde_json does).
    fn number_syntax(&mut self) -> Result<(bool, usize, bool), JsonError> {
        let negative = self.bytes.get(self.at) == Some(&b'-');
        if negative {
            self.at += 1;
        }
        match self.bytes.get(self.at) {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.syntax("invalid number")),
        }
        let int_end = self.at;
        let mut float = false;
        if self.bytes.get(self.at) == Some(&b'.') {
            self.at += 1;
            if !matches!(self.bytes.get(self.at), Some(b'0'..=b'9')) {
                return Err(self.syntax("invalid number"));
            }
            self.digits();
            float = true;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.at) {
                self.at += 1;
            }
            if !matches!(self.bytes.get(self.at), Some(b'0'..=b'9')) {
                return Err(self.syntax("invalid number"));
            }
            self.digits();
            float = true;
        }
        Ok((negative, int_end, float))
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn num(&mut self, what: &'static str) -> Result<Num, JsonError> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.expected(what)),
        }
    }

    /// A non-negative integer literal in `u64` range.
    pub fn u64(&mut self) -> Result<u64, JsonError> {
        match self.num("an unsigned integer")? {
            Num::Pos(value) => Ok(value),
            _ => Err(self.expected("an unsigned integer")),
        }
    }

    /// A non-negative integer literal in `u32` range.
    pub fn u32(&mut self) -> Result<u32, JsonError> {
        u32::try_from(self.u64()?).map_err(|_| self.expected("an integer in u32 range"))
    }

    /// Any number, as `f64`.
    pub fn f64(&mut self) -> Result<f64, JsonError> {
        Ok(match self.num("a number")? {
            Num::Pos(value) => value as f64,
            Num::Neg(value) => value as f64,
            Num::Float(value) => value,
        })
    }

    /// Skips one value of any kind, checking its syntax as serde_json does for an ignored
    /// member: without a depth limit (iteratively, so never a deep recursion) and without
    /// pairing `\\u` surrogates (only the four hex digits are checked).
    pub fn skip(&mut self) -> Result<(), JsonError> {
        // The open containers, innermost last: `true` for an object.
        let mut open: Vec<bool> = Vec::new();
        loop {
            match self.peek() {
                Some(b'{') => {
                    self.at += 1;
                    if self.peek() == Some(b'}') {
                        self.at += 1;
                    } else {
                        open.push(true);
                        self.skip_key()?;
                        continue;
                    }
                }
                Some(b'[') => {
                    self.at += 1;
                    if self.peek() == Some(b']') {
                        self.at += 1;
                    } else {
                        open.push(false);
                        continue;
                    }
                }
                Some(b'"') => self.skip_string()?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(b'-' | b'0'..=b'9') => {
                    self.number_syntax()?;
                }
                None => return Err(self.syntax("EOF while parsing a value")),
                Some(_) => return Err(self.syntax("expected a value")),
            }
            // A value ended: close what ends here, then the next member or element.
            loop {
                let Some(&object) = open.last() else {
                    return Ok(());
                };
                match self.peek() {
                    Some(b',') => {
                        self.at += 1;
                        if object {
                            self.skip_key()?;
                        }
                        break;
                    }
                    Some(b'}') if object => {
                        self.at += 1;
                        open.pop();
                    }
                    Some(b']') if !object => {
                        self.at += 1;
                        open.pop();
                    }
                    None => return Err(self.syntax("EOF while parsing a value")),
                    Some(_) => return Err(self.syntax("expected `,` or a closing bracket")),
                }
            }
        }
    }

    /// Skips `"key":` inside a skipped object.
    fn skip_key(&mut self) -> Result<(), JsonError> {
        if self.peek() != Some(b'"') {
            return Err(self.syntax("expected an object key"));
        }
        self.skip_string()?;
        if self.peek() != Some(b':') {
            return Err(self.syntax("expected `:`"));
        }
        self.at += 1;
        Ok(())
    }

    /// Skips a string without building it: control characters and escape syntax are checked.
    fn skip_string(&mut self) -> Result<(), JsonError> {
        self.at += 1;
        loop {
            let Some(offset) = special_at(&self.bytes[self.at..]) else {
                self.at = self.bytes.len();
                return Err(self.syntax("EOF while parsing a string"));
            };
            self.at += offset;
            match self.bytes[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.at += 1;
                    match self.bytes.get(self.at) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1
                        }
                        Some(b'u') => {
                            self.at += 1;
                            self.hex4()?;
                        }
                        None => return Err(self.syntax("EOF while parsing a string")),
                        Some(_) => return Err(self.syntax("invalid escape")),
                    }
                }
                _ => return Err(self.syntax("control character in a string")),
            }
        }
    }

    /// Any value, as a `serde_json::Value` (objects: a later duplicate key wins, as in serde_json).
    pub fn value(&mut self) -> Result<Value, JsonError> {
        Ok(match self.peek() {
            Some(b'"') => Value::String(self.string_body()?.into_owned()),
            Some(b'{') => {
                let mut map = Map::new();
                let mut seq = self.object("an object")?;
                while let Some(key) = self.next_key(&mut seq)? {
                    let value = self.value()?;
                    map.insert(key.into_owned(), value);
                }
                Value::Object(map)
            }
            Some(b'[') => {
                let mut items = Vec::new();
                let mut seq = self.array("an array")?;
                while self.next_element(&mut seq)? {
                    items.push(self.value()?);
                }
                Value::Array(items)
            }
            Some(b't') => {
                self.literal(b"true")?;
                Value::Bool(true)
            }
            Some(b'f') => {
                self.literal(b"false")?;
                Value::Bool(false)
            }
            Some(b'n') => {
                self.literal(b"null")?;
                Value::Null
            }
            Some(b'-' | b'0'..=b'9') => match self.number()? {
                Num::Pos(value) => Value::Number(Number::from(value)),
                Num::Neg(value) => Value::Number(Number::from(value)),
                Num::Float(value) => match Number::from_f64(value) {
                    Some(number) => Value::Number(number),
                    None => return Err(self.syntax("number out of range")),
                },
            },
            None => return Err(self.syntax("EOF while parsing a value")),
            Some(_) => return Err(self.syntax("expected a value")),
        })
    }

    /// Reads one value by exactly the rules of [`Reader::value`] (syntax, escapes and
    /// surrogates, number range, nesting depth) without building it: nothing is allocated but
    /// a string that holds escapes. For texts kept as they are once known valid ([`check`]).
    pub fn check_value(&mut self) -> Result<(), JsonError> {
        match self.peek() {
            Some(b'"') => {
                self.string_body()?;
            }
            Some(b'{') => {
                let mut seq = self.object("an object")?;
                while self.next_key(&mut seq)?.is_some() {
                    self.check_value()?;
                }
            }
            Some(b'[') => {
                let mut seq = self.array("an array")?;
                while self.next_element(&mut seq)? {
                    self.check_value()?;
                }
            }
            Some(b't') => self.literal(b"true")?,
            Some(b'f') => self.literal(b"false")?,
            Some(b'n') => self.literal(b"null")?,
            // `number` refuses what `value` would (a float out of `f64` range).
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
            }
            None => return Err(self.syntax("EOF while parsing a value")),
            Some(_) => return Err(self.syntax("expected a value")),
        }
        Ok(())
    }

    /// The position of the reader (a byte offset), to come back to with [`Reader::rewind`].
    pub fn mark(&self) -> (usize, usize) {
        (self.at, self.depth)
    }

    /// Returns to a position taken with [`Reader::mark`].
    pub fn rewind(&mut self, mark: (usize, usize)) {
        (self.at, self.depth) = mark;
    }
}

/// The character of a one-letter escape (`\\"`, `\\n`, …; RFC 8259 §7), `None` for `u` and
/// anything that is not an escape.
#[inline(always)]
pub(crate) fn simple_escape(byte: u8) -> Option<char> {
    Some(match byte {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        _ => return None,
    })
}

/// The state of one open object or array (whether a member was read yet).
pub struct Seq {
    first: bool,
}

/// The index of the first byte that ends a plain string run: `"`, `\\` or a control character.
#[inline(always)]
fn special_at(bytes: &[u8]) -> Option<usize> {
    super::fast::special_at(bytes)
}

/// A type read from JSON text by hand (see the module docs for the rules).
pub trait Decode: Sized {
    /// Reads one value of this type at the reader's position.
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError>;
}

/// Decodes a whole text as `T` (only whitespace may follow).
pub fn from_str<T: Decode>(text: &str) -> Result<T, JsonError> {
    let mut reader = Reader::new(text);
    let value = T::decode(&mut reader)?;
    reader.finish()?;
    Ok(value)
}

/// Whether `text` is one JSON value that [`from_str`] would read as a `serde_json::Value`
/// (the same [`JsonError`] when not), without building the value.
pub fn check(text: &str) -> Result<(), JsonError> {
    let mut reader = Reader::new(text);
    reader.check_value()?;
    reader.finish()
}

impl Decode for String {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        r.string()
    }
}

impl Decode for u64 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        r.u64()
    }
}

impl Decode for u32 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        r.u32()
    }
}

impl Decode for f64 {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        r.f64()
    }
}

impl Decode for Value {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        r.value()
    }
}

impl<T: Decode> Decode for Option<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        if r.null()? {
            return Ok(None);
        }
        T::decode(r).map(Some)
    }
}

impl<T: Decode> Decode for Vec<T> {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        let mut items = Vec::new();
        let mut seq = r.array("an array")?;
        while r.next_element(&mut seq)? {
            items.push(T::decode(r)?);
        }
        Ok(items)
    }
}

/// Reads one member into `slot`, refusing a second occurrence of the same key.
pub fn field<T: Decode>(
    r: &mut Reader<'_>,
    slot: &mut Option<T>,
    name: &'static str,
) -> Result<(), JsonError> {
    if slot.is_some() {
        return Err(r.duplicate(name));
    }
    *slot = Some(T::decode(r)?);
    Ok(())
}

/// A required member's value, or "missing field".
pub fn required<T>(r: &Reader<'_>, slot: Option<T>, name: &'static str) -> Result<T, JsonError> {
    slot.ok_or_else(|| r.missing(name))
}

/// Implements [`Decode`] for a struct from its members: `name: "key" => required | default |
/// (fn)`. Generated code is one loop over the object's keys, a duplicate known key refused.
macro_rules! decode_struct {
    ($ty:ident $(<$t:ident>)?, $what:literal { $($name:ident : $key:literal => $mode:tt),* $(,)? }) => {
        impl$(<$t: $crate::wire::json::Decode>)? $crate::wire::json::Decode for $ty$(<$t>)? {
            fn decode(r: &mut $crate::wire::json::Reader<'_>) -> Result<Self, $crate::wire::json::JsonError> {
                $(let mut $name = None;)*
                let mut seq = r.object($what)?;
                while let Some(key) = r.next_key(&mut seq)? {
                    match key.as_ref() {
                        $($key => $crate::wire::json::field(r, &mut $name, $key)?,)*
                        _ => r.skip()?,
                    }
                }
                Ok($ty { $($name: $crate::wire::json::decode_struct!(@finish r, $name, $key, $mode),)* })
            }
        }
    };
    (@finish $r:ident, $name:ident, $key:literal, required) => { $crate::wire::json::required($r, $name, $key)? };
    (@finish $r:ident, $name:ident, $key:literal, default) => { $name.unwrap_or_default() };
    (@finish $r:ident, $name:ident, $key:literal, ($default:path)) => { $name.unwrap_or_else($default) };
}

pub(crate) use decode_struct;

/// A union's discriminator, as [`tag`] finds it.
pub enum Tag<'a> {
    /// A string tag (unescaped).
    Str(Cow<'a, str>),
    /// Missing, or not a string.
    Other,
}

/// Finds the discriminator `key` of the object at the reader, then rewinds to the object's
/// start (serde's rule, kept: the first member when it is the tag, as TrueForge writes it —
/// then nothing else is read — else the last occurrence anywhere). The whole object is checked
/// for syntax only when the tag is not its first member.
pub fn tag<'a>(r: &mut Reader<'a>, key: &str, what: &'static str) -> Result<Tag<'a>, JsonError> {
    let start = r.mark();
    let mut seq = r.object(what)?;
    let mut found = Tag::Other;
    let mut first = true;
    while let Some(name) = r.next_key(&mut seq)? {
        if name == key {
            found = if r.at_string() {
                Tag::Str(r.str()?)
            } else {
                r.skip()?;
                Tag::Other
            };
            if first {
                break;
            }
        } else {
            r.skip()?;
        }
        first = false;
    }
    r.rewind(start);
    Ok(found)
}

/// Implements [`Decode`] for a fieldless enum read from a string: `"spelling" => Variant`;
/// another string or type is "invalid type: expected `what`".
macro_rules! decode_str_enum {
    ($ty:ident, $what:literal { $($key:literal => $variant:ident),* $(,)? }) => {
        impl $crate::wire::json::Decode for $ty {
            fn decode(
                r: &mut $crate::wire::json::Reader<'_>,
            ) -> Result<Self, $crate::wire::json::JsonError> {
                if !r.at_string() {
                    return Err(r.expected($what));
                }
                match r.str()?.as_ref() {
                    $($key => Ok($ty::$variant),)*
                    _ => Err(r.expected($what)),
                }
            }
        }
    };
}
pub(crate) use decode_str_enum;

impl Decode for bool {
    fn decode(r: &mut Reader<'_>) -> Result<Self, JsonError> {
        match r.peek() {
            Some(b't') => r.literal(b"true").map(|()| true),
            Some(b'f') => r.literal(b"false").map(|()| false),
            _ => Err(r.expected("a boolean")),
        }
    }
}
