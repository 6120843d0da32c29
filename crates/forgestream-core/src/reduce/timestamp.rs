//! [`Timestamp`]: an ISO-8601 time the view keeps (an item's `created_at`, a turn's
//! `created_at` and `completed_at`), packed into a number when it has the server's usual
//! spelling, and written back byte for byte.
//!
//! Why: every item has one, and as a `String` it was 24 bytes of heap and 24 inline — W2's
//! 69k items held 1.7 MB of times (`cargo run --release -p forgestream-core --example
//! bench_core`, "view breakdown"). `YYYY-MM-DDTHH:MM:SS.mmmZ` (or without `.mmm`) packs its
//! digits, read as one decimal number, into a `u64`; any other text is kept as it came. The view never computes
//! with times, so the digits are stored as written (no calendar check): the text read back
//! is always the text given.

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;

use crate::wire::write::{self, Encode};

/// An ISO-8601 time as the wire spelled it (see the module docs). Reads back with
/// [`fmt::Display`] / [`Timestamp::text`]; crosses to JS as that string.
#[derive(Clone, PartialEq, Eq)]
pub struct Timestamp(Repr);

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    /// The digits of `YYYY-MM-DDTHH:MM:SS[.mmm]Z` (see [`pack`]).
    Packed(u64),
    /// Any other spelling, as it came. A `Box<String>` (one pointer) rather than a `String`
    /// or `Box<str>` so the type stays 16 bytes: the indirection is paid only by this rare case.
    #[allow(clippy::box_collection)]
    Text(Box<String>),
}

/// The spellings packed: `d` is an ASCII digit, any other byte must be as written.
const TEMPLATES: [&[u8]; 2] = [b"dddd-dd-ddTdd:dd:dd.dddZ", b"dddd-dd-ddTdd:dd:ddZ"];
/// Above the digits (at most 17 of them: below 10^17 < 2^57), which template was used.
const TEMPLATE_SHIFT: u32 = 60;

/// `text`'s digits read as one decimal number, with its template's number above them, when
/// `text` is spelled as one of [`TEMPLATES`].
fn pack(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let (which, template) = TEMPLATES
        .iter()
        .enumerate()
        .find(|(_, t)| t.len() == bytes.len())?;
    let mut digits = 0u64;
    for (&b, &want) in bytes.iter().zip(template.iter()) {
        if want == b'd' && b.is_ascii_digit() {
            digits = digits * 10 + u64::from(b - b'0');
        } else if b != want {
            return None;
        }
    }
    Some(digits | (which as u64) << TEMPLATE_SHIFT)
}

/// The text of a packed time: its template with the digits put back, last digit first.
fn unpack(packed: u64, out: &mut String) {
    let which = (packed >> TEMPLATE_SHIFT) as usize;
    let Some(template) = TEMPLATES.get(which) else {
        return;
    };
    let mut digits = packed & ((1 << TEMPLATE_SHIFT) - 1);
    let mut text = [0u8; 24];
    for (slot, &want) in text.iter_mut().zip(template.iter()).rev() {
        *slot = if want == b'd' {
            let d = (digits % 10) as u8;
            digits /= 10;
            b'0' + d
        } else {
            want
        };
    }
    for &b in text.iter().take(template.len()) {
        out.push(char::from(b));
    }
}

impl Timestamp {
    /// `text`, packed when it has the usual spelling.
    pub fn new(text: &str) -> Self {
        match pack(text) {
            Some(packed) => Timestamp(Repr::Packed(packed)),
            None => Timestamp(Repr::Text(Box::new(String::from(text)))),
        }
    }

    /// The text, as given.
    pub fn text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match &self.0 {
            Repr::Packed(packed) => unpack(*packed, out),
            Repr::Text(text) => out.push_str(text),
        }
    }
}

impl From<&str> for Timestamp {
    fn from(text: &str) -> Self {
        Timestamp::new(text)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.text(), f)
    }
}

impl Encode for Timestamp {
    fn encode(&self, out: &mut String) {
        match &self.0 {
            // Digits, `-:.TZ`: nothing to escape.
            Repr::Packed(packed) => {
                out.push('"');
                unpack(*packed, out);
                out.push('"');
            }
            Repr::Text(text) => write::string(out, text),
        }
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text())
    }
}

#[cfg(test)]
mod tests {
    use super::{Repr, Timestamp};

    #[test]
    fn reads_back_as_given() {
        for (text, packed) in [
            ("2026-11-27T22:11:06.882Z", true),
            ("2026-12-01T00:00:05Z", true),
            ("0000-00-00T00:00:00.000Z", true),
            ("9999-99-99T99:99:99.999Z", true),
            ("2026-11-27T22:11:06.882+00:00", false),
            ("2026-11-27T22:11:06.882123Z", false),
            ("2026-11-27 22:11:06.882Z", false),
            ("2026-1a-27T22:11:06.882Z", false),
            ("", false),
            ("\"quoted\"", false),
        ] {
            let t = Timestamp::new(text);
            assert_eq!(t.text(), text);
            assert_eq!(matches!(t.0, Repr::Packed(_)), packed, "{text}");
            let json = crate::wire::write::to_string(&t);
            assert_eq!(Some(json), serde_json::to_string(text).ok());
        }
        assert_eq!(core::mem::size_of::<Option<Timestamp>>(), 16);
    }
}
