//! [`TextBuf`]: text most records lack (a message's `reasoning` and `refusal`), kept behind one
//! pointer.
//!
//! Why: a message record is as big as its largest field set, and every item of a turn is as
//! big as the largest item kind (a message). An `Option<String>` is three words inline whether
//! or not the text exists; an `Option<TextBuf>` is one (8 bytes on x86_64, 4 on wasm32), and the
//! rare text that exists pays one more pointer's allocation (24 bytes). It grows like a
//! `String` (deltas append to it). Issue 16, "a lean view": W2's 69k items shrank 32 bytes
//! each (`cargo run --release -p forgestream-core --example bench_core`, "view breakdown").

use alloc::boxed::Box;
use alloc::string::String;
use core::fmt;
use core::ops::Deref;

use crate::wire::write::{self, Encode};

/// A growable text behind one pointer (see the module docs). Reads as a `str` (`Deref`);
/// serialises as a JSON string, so it crosses to JS as the `String` it replaced did.
#[derive(Clone, PartialEq, Eq, Default)]
// A `Box<String>` on purpose: one pointer inline, and the text still grows in place.
#[allow(clippy::box_collection)]
pub struct TextBuf(Box<String>);

impl TextBuf {
    /// The text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// Appends `text`.
    pub fn push_str(&mut self, text: &str) {
        self.0.push_str(text);
    }

    /// Gives back spare capacity (a finished message stops growing).
    pub fn shrink_to_fit(&mut self) {
        self.0.shrink_to_fit();
    }
}

impl Deref for TextBuf {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl From<String> for TextBuf {
    fn from(text: String) -> Self {
        TextBuf(Box::new(text))
    }
}

impl From<&str> for TextBuf {
    fn from(text: &str) -> Self {
        TextBuf(Box::new(String::from(text)))
    }
}

impl From<TextBuf> for String {
    fn from(text: TextBuf) -> Self {
        *text.0
    }
}

impl PartialEq<str> for TextBuf {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for TextBuf {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for TextBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for TextBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Encode for TextBuf {
    fn encode(&self, out: &mut String) {
        write::string(out, self.as_str());
    }
}

impl serde::Serialize for TextBuf {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::TextBuf;

    #[test]
    fn one_pointer_that_grows_and_writes_as_its_text() {
        assert_eq!(
            core::mem::size_of::<Option<TextBuf>>(),
            core::mem::size_of::<usize>()
        );
        let mut text = TextBuf::from("a\"b");
        text.push_str("é");
        text.shrink_to_fit();
        assert_eq!(text, "a\"bé");
        assert_eq!(crate::wire::write::to_string(&text), "\"a\\\"bé\"");
        assert_eq!(
            serde_json::to_string(&text).ok().as_deref(),
            Some("\"a\\\"bé\"")
        );
    }
}
