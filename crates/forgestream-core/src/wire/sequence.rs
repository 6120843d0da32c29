//! The SSE `id:` of a frame as a sequence number (PROTOCOL §3: per-turn stream position, starts
//! at 1, +1 per event; the reconnect cursor).
//!
//! Only a plain decimal integer in `0 ..= 2^53 − 1` is one: a larger number loses precision as a
//! JavaScript number (the SDK hands cursors to JS and back), and `18446744073709551615` taken as
//! a cursor would rank every later frame, `turn.done` included, as a replay. Anything else is
//! [`InvalidSequenceNumber`]: the caller warns and the frame does not move the cursor.
use core::fmt;

/// The largest sequence number accepted: 2^53 − 1 (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SEQUENCE_NUMBER: u64 = (1 << 53) - 1;

/// An `id:` value that is not a sequence number. Holds at most the first 32 bytes of the value
/// (cut on a character boundary), so a hostile id cannot make a warning large.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSequenceNumber {
    shown: alloc::string::String,
    cut: bool,
}

impl fmt::Display for InvalidSequenceNumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let more = if self.cut { "…" } else { "" };
        write!(
            f,
            "frame id {:?}{more} is not a sequence number (an integer 0..={MAX_SEQUENCE_NUMBER}); \
             the frame does not move the cursor",
            self.shown
        )
    }
}

/// Reads a frame's `id:` value. `Ok(None)` for an empty id (the SSE spec's "reset": no number),
/// `Ok(Some(n))` for ASCII digits only (no sign, no spaces, no exponent) with
/// `n ≤` [`MAX_SEQUENCE_NUMBER`].
///
/// # Errors
///
/// [`InvalidSequenceNumber`] for anything else.
pub fn parse_sequence_number(id: &str) -> Result<Option<u64>, InvalidSequenceNumber> {
    if id.is_empty() {
        return Ok(None);
    }
    // 16 digits hold 2^53 − 1; longer is out of range (leading zeros are not worth a longer
    // scan of a hostile value).
    let digits = id.len() <= 16 && id.bytes().all(|b| b.is_ascii_digit());
    match id.parse::<u64>() {
        Ok(n) if digits && n <= MAX_SEQUENCE_NUMBER => Ok(Some(n)),
        _ => {
            let mut end = id.len().min(32);
            while !id.is_char_boundary(end) {
                end -= 1;
            }
            Err(InvalidSequenceNumber {
                shown: alloc::string::String::from(&id[..end]),
                cut: end < id.len(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_sequence_number, MAX_SEQUENCE_NUMBER};

    #[test]
    fn only_safe_integers_are_sequence_numbers() {
        assert_eq!(parse_sequence_number(""), Ok(None));
        assert_eq!(parse_sequence_number("0"), Ok(Some(0)));
        assert_eq!(parse_sequence_number("17"), Ok(Some(17)));
        assert_eq!(
            parse_sequence_number("9007199254740991"),
            Ok(Some(MAX_SEQUENCE_NUMBER))
        );
        for bad in [
            "9007199254740992",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "+1",
            " 1",
            "1 ",
            "1.5",
            "1e3",
            "0x10",
            "abc",
            "١٢",
            "00000000000000001",
        ] {
            let err = parse_sequence_number(bad).expect_err(bad);
            assert!(
                err.to_string().contains("is not a sequence number"),
                "{bad}"
            );
        }
        let long = "9".repeat(10_000);
        let shown = parse_sequence_number(&long).unwrap_err().to_string();
        assert!(shown.len() < 200, "a hostile id stays short in the warning");
        let multibyte = "é".repeat(40);
        assert!(parse_sequence_number(&multibyte).is_err());
    }
}
