//! Splitting one complete line into comment / field name / field value (WHATWG HTML §9.2.6).
//!
//! Works on the raw bytes of the line: `:` and U+0020 are ASCII and never occur inside a
//! multi-byte UTF-8 sequence, and U+FFFD replacement never produces them, so splitting before
//! decoding gives the same result as the spec's decode-then-split, and comment lines and field
//! names never need decoding at all.

/// What one complete line of the stream is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Line<'a> {
    /// "If the line is empty (a blank line): Dispatch the event."
    Blank,
    /// "If the line starts with a U+003A COLON character (:): Ignore the line."
    Comment,
    /// A field: everything before the first colon is the name, everything after it (minus one
    /// leading U+0020 SPACE) is the value. A line without a colon is a field named by the
    /// whole line with an empty value.
    Field {
        /// The field name bytes (compared literally, no case folding).
        name: &'a [u8],
        /// The field value bytes, one leading space removed.
        value: &'a [u8],
    },
}

/// Classifies one complete line (without its terminator).
pub(super) fn classify(line: &[u8]) -> Line<'_> {
    match line.iter().position(|&b| b == b':') {
        None if line.is_empty() => Line::Blank,
        // "If the line contains no U+003A COLON character: Process the field using the whole
        // line as the field name, and the empty string as the field value."
        None => Line::Field {
            name: line,
            value: &[],
        },
        Some(0) => Line::Comment,
        Some(colon) => {
            let (name, rest) = line.split_at_checked(colon).unwrap_or((line, &[]));
            // `rest` starts with the colon itself.
            let value = rest.get(1..).unwrap_or_default();
            // "If value starts with a U+0020 SPACE character, remove it from value."
            let value = value.strip_prefix(b" ").unwrap_or(value);
            Line::Field { name, value }
        }
    }
}

/// Parses a `retry` value: "If the field value consists of only ASCII digits, then interpret
/// the field value as an integer in base ten". An empty value is not a number and is ignored,
/// as browsers do. Values past `u64::MAX` ms saturate (the spec sets no upper bound).
pub(super) fn parse_retry(value: &[u8]) -> Option<u64> {
    if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(value.iter().fold(0u64, |acc, &digit| {
        acc.saturating_mul(10)
            .saturating_add(u64::from(digit - b'0'))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_first_colon_and_one_space() {
        assert_eq!(
            classify(b"data:  a: b"),
            Line::Field {
                name: b"data",
                value: b" a: b"
            }
        );
        assert_eq!(
            classify(b"data:x"),
            Line::Field {
                name: b"data",
                value: b"x"
            }
        );
        assert_eq!(
            classify(b"data"),
            Line::Field {
                name: b"data",
                value: b""
            }
        );
        assert_eq!(classify(b": hi"), Line::Comment);
        assert_eq!(classify(b""), Line::Blank);
    }

    #[test]
    fn retry_needs_ascii_digits_only() {
        assert_eq!(parse_retry(b"1500"), Some(1500));
        assert_eq!(parse_retry(b"007"), Some(7));
        assert_eq!(parse_retry(b""), None);
        assert_eq!(parse_retry(b" 15"), None);
        assert_eq!(parse_retry(b"1.5"), None);
        assert_eq!(parse_retry(b"-1"), None);
        assert_eq!(parse_retry("١".as_bytes()), None);
        assert_eq!(parse_retry(b"99999999999999999999999"), Some(u64::MAX));
    }
}
