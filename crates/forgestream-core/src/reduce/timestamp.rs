//! [`Timestamp`]: an ISO-8601 time the view keeps (an item's `created_at`, a turn's
//! `created_at` and `completed_at`), packed into a number when it has the server's usual
//! spelling, and written back byte for byte.
//!
//! Why: every item has one, and as a `String` it was 24 bytes of heap and 24 inline — W2's
//! 69k items held 1.7 MB of times (`cargo run --release -p forgestream-core --example
//! bench_core`, "view breakdown"). `YYYY-MM-DDTHH:MM:SS.mmmZ` (or without `.mmm`) packs its
//! digit groups into one `u64`; any other text is kept as it came. The view never computes
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
    /// The digit groups of `YYYY-MM-DDTHH:MM:SS[.mmm]Z` (see [`pack`]).
    Packed(u64),
    /// Any other spelling, as it came. A `Box<String>` (one pointer) rather than a `String`
    /// or `Box<str>` so the type stays 16 bytes: the indirection is paid only by this rare case.
    #[allow(clippy::box_collection)]
    Text(Box<String>),
}

/// Digit groups of the packed form, most significant first: (width in digits, bits).
const GROUPS: [(usize, u32); 7] = [(4, 14), (2, 7), (2, 7), (2, 7), (2, 7), (2, 7), (3, 10)];
/// The separator before each group but the first.
const SEPARATORS: [u8; 6] = [b'-', b'-', b'T', b':', b':', b'.'];
/// Set when the text had the `.mmm` group.
const MILLIS_FLAG: u64 = 1 << 63;

/// `text`'s digit groups as one number, when it is spelled exactly
/// `YYYY-MM-DDTHH:MM:SS.mmmZ` or `YYYY-MM-DDTHH:MM:SSZ` (ASCII digits).
fn pack(text: &str) -> Option<u64> {
    let bytes = text.as_bytes();
    let millis = match bytes.len() {
        24 => true,
        20 => false,
        _ => return None,
    };
    if bytes.last() != Some(&b'Z') {
        return None;
    }
    let mut packed = if millis { MILLIS_FLAG } else { 0 };
    let mut at = 0;
    let groups = if millis { 7 } else { 6 };
    for (i, &(width, bits)) in GROUPS.iter().take(groups).enumerate() {
        if i > 0 {
            if bytes.get(at) != SEPARATORS.get(i - 1) {
                return None;
            }
            at += 1;
        }
        let mut value = 0u64;
        for &b in bytes.get(at..at + width)? {
            if !b.is_ascii_digit() {
                return None;
            }
            value = value * 10 + u64::from(b - b'0');
        }
        at += width;
        packed |= value << shift_of(i, bits);
    }
    Some(packed)
}

/// Where group `i` (of `bits` bits) sits in the packed number: groups fill from bit 59 down.
fn shift_of(i: usize, bits: u32) -> u32 {
    let above: u32 = GROUPS.iter().take(i).map(|g| g.1).sum();
    59 - above - bits
}

/// The text of a packed time.
fn unpack(packed: u64, out: &mut String) {
    let groups = if packed & MILLIS_FLAG != 0 { 7 } else { 6 };
    for (i, &(width, bits)) in GROUPS.iter().take(groups).enumerate() {
        if let Some(&sep) = SEPARATORS.get(i.wrapping_sub(1)) {
            out.push(char::from(sep));
        }
        let value = (packed >> shift_of(i, bits)) & ((1 << bits) - 1);
        let mut digits = [b'0'; 4];
        let mut rest = value;
        for d in digits.iter_mut().take(width).rev() {
            *d = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        for &d in digits.iter().take(width) {
            out.push(char::from(d));
        }
    }
    out.push('Z');
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
