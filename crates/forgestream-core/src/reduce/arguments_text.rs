//! [`ArgumentsText`]: a tool call's raw `arguments` text, which shares its allocation with the
//! call's checked [`JsonText`] once the text parses.
//!
//! Why: a finished call kept its arguments twice — the text as concatenated and the checked
//! copy — 1.3 MB each over W2's 23k calls (issue 16, "a lean view"; `cargo run --release -p
//! forgestream-core --example bench_core`, "view breakdown"). Both now point at one `Arc<str>`
//! (`triomphe`'s: 8 bytes of count above the text). While fragments still arrive the text is a `String`
//! that grows; a fragment after it parsed (text after a complete value) copies it back out.

use alloc::string::String;
use core::fmt;
use core::ops::Deref;
use triomphe::Arc;

use crate::wire::json::JsonError;
use crate::wire::write::{self, Encode};
use crate::wire::JsonText;

/// A tool call's arguments text (see the module docs). Reads as a `str` (`Deref`); serialises
/// as a JSON string, so it crosses to JS as the `String` it replaced did. Three words inline,
/// as a `String`.
#[derive(Clone, Default)]
pub struct ArgumentsText(Repr);

#[derive(Clone)]
enum Repr {
    /// Still growing (or never parsed).
    Growing(String),
    /// Parsed: the same allocation as the call's [`JsonText`].
    Shared(Arc<str>),
}

impl Default for Repr {
    fn default() -> Self {
        Repr::Growing(String::new())
    }
}

impl ArgumentsText {
    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Growing(text) => text,
            Repr::Shared(text) => text,
        }
    }

    /// Appends a fragment (a shared text is copied out first).
    pub fn push_str(&mut self, fragment: &str) {
        match &mut self.0 {
            Repr::Growing(text) => text.push_str(fragment),
            Repr::Shared(shared) => {
                let mut text = String::with_capacity(shared.len().saturating_add(fragment.len()));
                text.push_str(shared);
                text.push_str(fragment);
                self.0 = Repr::Growing(text);
            }
        }
    }

    /// Gives back spare capacity (the call's message finished).
    pub fn shrink_to_fit(&mut self) {
        if let Repr::Growing(text) = &mut self.0 {
            text.shrink_to_fit();
        }
    }

    /// The text as checked JSON ([`JsonText::parse`]); when it is, the text and the returned
    /// value share one allocation from then on.
    ///
    /// # Errors
    ///
    /// The decoder's [`JsonError`] when the text is not one JSON value.
    pub fn parse(&mut self) -> Result<JsonText, JsonError> {
        match &self.0 {
            Repr::Shared(shared) => JsonText::parse_shared(shared),
            Repr::Growing(text) => {
                let value = JsonText::parse(text)?;
                self.0 = Repr::Shared(Arc::clone(value.shared()));
                Ok(value)
            }
        }
    }
}

impl Deref for ArgumentsText {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for ArgumentsText {
    fn eq(&self, other: &ArgumentsText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ArgumentsText {}

impl PartialEq<str> for ArgumentsText {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ArgumentsText {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl From<String> for ArgumentsText {
    fn from(text: String) -> Self {
        ArgumentsText(Repr::Growing(text))
    }
}

impl From<&str> for ArgumentsText {
    fn from(text: &str) -> Self {
        ArgumentsText(Repr::Growing(String::from(text)))
    }
}

impl fmt::Debug for ArgumentsText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ArgumentsText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Encode for ArgumentsText {
    fn encode(&self, out: &mut String) {
        write::string(out, self.as_str());
    }
}

impl serde::Serialize for ArgumentsText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ArgumentsText;
    use triomphe::Arc;

    #[test]
    fn shares_the_parsed_text_and_copies_it_out_to_grow() {
        assert_eq!(
            core::mem::size_of::<ArgumentsText>(),
            3 * core::mem::size_of::<usize>()
        );
        let mut text = ArgumentsText::from("{\"a\":");
        assert!(text.parse().is_err());
        text.push_str("\"é\"}");
        let value = text.parse().ok();
        let value = value.as_ref().map(|v| v.shared());
        assert!(
            matches!(&text.0, super::Repr::Shared(s) if value.is_some_and(|v| Arc::ptr_eq(s, v)))
        );
        assert_eq!(text, "{\"a\":\"é\"}");
        // Parsing again shares again; a fragment after a complete value copies it out.
        assert!(text.parse().is_ok());
        text.push_str(" x");
        assert_eq!(text, "{\"a\":\"é\"} x");
        assert!(matches!(&text.0, super::Repr::Growing(_)));
        assert!(text.parse().is_err());
        assert_eq!(
            crate::wire::write::to_string(&text),
            "\"{\\\"a\\\":\\\"é\\\"} x\""
        );
        assert_eq!(
            serde_json::to_string(&text).ok().as_deref(),
            Some("\"{\\\"a\\\":\\\"é\\\"} x\"")
        );
    }
}
