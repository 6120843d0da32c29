//! Incremental scanning of streamed tool-call `arguments` text.
//!
//! A parse of the accumulated text is only worth trying when the text could be a complete JSON
//! value. Tracking bracket depth and string/escape state per fragment costs O(fragment), so the
//! reducer attempts at most one parse while streaming (when the top-level value first closes)
//! and one at `finish_reason`, instead of re-parsing the whole text on every delta.

/// Lexical state of a JSON text fed in fragments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ArgScanner {
    depth: u32,
    in_string: bool,
    escape: bool,
    /// The top-level value has closed once; anything after it makes the text invalid.
    closed_once: bool,
    /// Non-whitespace after the top-level close, or a close without an open.
    trailing: bool,
}

impl ArgScanner {
    /// Feeds a fragment; true when the top-level value closed inside this fragment, i.e. the
    /// text may now be complete.
    pub(crate) fn feed(&mut self, fragment: &str) -> bool {
        let mut closed_now = false;
        for byte in fragment.bytes() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                } else if byte == b'\\' {
                    self.escape = true;
                } else if byte == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            if self.closed_once && !byte.is_ascii_whitespace() {
                self.trailing = true;
            }
            match byte {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth = self.depth.saturating_add(1),
                b'}' | b']' => {
                    if self.depth == 0 {
                        self.trailing = true;
                    } else {
                        self.depth -= 1;
                        if self.depth == 0 && !self.closed_once {
                            self.closed_once = true;
                            closed_now = true;
                        }
                    }
                }
                _ => {}
            }
        }
        closed_now && !self.trailing
    }

    /// True when text arrived after the top-level value had closed.
    pub(crate) fn has_trailing(&self) -> bool {
        self.trailing
    }
}

#[cfg(test)]
mod tests {
    use super::ArgScanner;

    #[test]
    fn closes_only_at_top_level_outside_strings() {
        let mut s = ArgScanner::default();
        assert!(!s.feed("{\"a\": \"}\\\""));
        assert!(!s.feed("\", \"b\": [1, {\"c\""));
        assert!(!s.feed(": 2}]"));
        assert!(s.feed("}"));
        assert!(!s.has_trailing());
        assert!(!s.feed(" x"));
        assert!(s.has_trailing());
    }

    #[test]
    fn escape_split_across_fragments() {
        let mut s = ArgScanner::default();
        assert!(!s.feed("{\"p\": \"a\\"));
        assert!(!s.feed("\"}"));
        assert!(s.feed("\"}"));
    }
}
