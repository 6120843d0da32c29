//! [`Id`]: a protocol id (`turn_id`, event id, `thread_id`, `tool_call_id`) the view holds in
//! several places, shared rather than copied.
//!
//! Why shared: a long history's view repeated the same ids over and over — every item its turn
//! id and thread id, every message its key (as the item's key, the map's key and the message's
//! id), every tool call its `tool_call_id` and the ids of its result (and the result those of
//! its call). As `String`s these were ~11 MB of W2's 77 MB view (issue 16, "a lean view":
//! `cargo run --release -p forgestream-core --example bench_core`, "view breakdown"). An `Id`
//! is one reference-counted allocation; cloning it copies a pointer. An atomic count rather than
//! `Rc`'s so the view stays `Send + Sync` as it was with `String`s; `triomphe`'s `Arc` (one
//! count, no weak references) rather than `alloc`'s (two).
//!
//! It reads as a `str` (`Deref`, `Borrow<str>`: maps keyed by `Id` are searched with `&str`),
//! compares, orders and hashes as its text, and serialises as a JSON string, so the JSON the
//! view crosses as is what it was with `String`s.
//!
//! Why thin (one pointer, 8 bytes on x86_64, 4 on wasm32, where an `Arc<str>` was twice that):
//! the view holds each id in several records (items, messages, tool calls, results, the maps'
//! indexes), ~600k `Id` fields for W2's ~110k distinct ids, so the pointer's width weighed more
//! than the text (issue 16: 3.7 MB of W2's view). The shared allocation holds the text inline
//! when it has at most [`INLINE`] bytes (event ids are 26, `tool_call_id`s ~21, turn ids 32
//! with their `.local` suffix fall back), else a `Box<str>`: 40 bytes for an event id where
//! an `Arc<str>` took 42. No `unsafe`: the inline bytes are read back with a checked
//! `from_utf8` (they were copied from a `str`, so it never fails; an empty text stands in).

use alloc::borrow::Cow;
use alloc::boxed::Box;
use alloc::string::String;
use core::borrow::Borrow;
use core::fmt;
use core::ops::Deref;

use crate::wire::write::{self, Encode};

// One count, not `alloc::sync::Arc`'s two: an `Id` is never held weakly, and the weak count
// was 8 bytes of each of W2's ~118k shared ids (~0.9 MB).
use triomphe::Arc;

/// Texts of at most this many bytes are kept inside the shared allocation (see the module docs).
pub const INLINE: usize = 30;

/// A shared, immutable id (see the module docs).
#[derive(Clone)]
pub struct Id(Arc<Text>);

/// What an [`Id`] points at (after the count): 32 bytes on 64-bit targets (`INLINE` + length +
/// tag).
#[derive(Debug)]
enum Text {
    /// `len` bytes of `bytes`, copied from a `str`.
    Inline { len: u8, bytes: [u8; INLINE] },
    /// Longer texts.
    Heap(Box<str>),
}

impl Text {
    fn new(text: &str) -> Text {
        let mut bytes = [0u8; INLINE];
        match (bytes.get_mut(..text.len()), u8::try_from(text.len())) {
            (Some(slot), Ok(len)) => {
                slot.copy_from_slice(text.as_bytes());
                Text::Inline { len, bytes }
            }
            _ => Text::Heap(Box::from(text)),
        }
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            Text::Inline { len, bytes } => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Text::Heap(text) => text.as_bytes(),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Text::Inline { len, bytes } => bytes
                .get(..usize::from(*len))
                .and_then(|b| core::str::from_utf8(b).ok())
                .unwrap_or(""),
            Text::Heap(text) => text,
        }
    }
}

impl Id {
    /// The id's text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The id's bytes (its text's UTF-8), without the check [`Id::as_str`] makes of an inline
    /// text: what comparisons and the maps' searches read (`id_map`), since that check, on
    /// every comparison of a search, was a quarter of W2's apply time.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// Whether `self` and `other` are the same allocation (clones of one `Id`), not just the
    /// same text: a holder of a copy can then swap it for the shared one.
    pub fn same_allocation(&self, other: &Id) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Heap bytes of the shared allocation (the count, the inline text or the pointer to a
    /// longer one, and that text), for memory accounting (`bench_core`'s view breakdown).
    pub fn shared_heap_bytes(&self) -> usize {
        let outer = core::mem::size_of::<usize>() + core::mem::size_of::<Text>();
        match &*self.0 {
            Text::Inline { .. } => outer,
            Text::Heap(text) => outer + text.len(),
        }
    }
}

impl PartialEq for Id {
    fn eq(&self, other: &Id) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Id {}

impl PartialOrd for Id {
    fn partial_cmp(&self, other: &Id) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Id {
    // Byte order, which is `str`'s order (so `Borrow<str>` and `Borrow<[u8]>` agree with it).
    fn cmp(&self, other: &Id) -> core::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl core::hash::Hash for Id {
    // As its text, so maps keyed by `Id` can be searched with a `&str` (`Borrow<str>`).
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Default for Id {
    fn default() -> Self {
        Id::from("")
    }
}

impl Deref for Id {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Id {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<[u8]> for Id {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<str> for Id {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Id {
    fn from(text: &str) -> Self {
        Id(Arc::new(Text::new(text)))
    }
}

impl From<&String> for Id {
    fn from(text: &String) -> Self {
        Id::from(text.as_str())
    }
}

impl From<String> for Id {
    fn from(text: String) -> Self {
        if text.len() <= INLINE {
            Id::from(text.as_str())
        } else {
            Id(Arc::new(Text::Heap(text.into_boxed_str())))
        }
    }
}

impl From<&Id> for String {
    fn from(id: &Id) -> Self {
        String::from(id.as_str())
    }
}

impl From<Id> for String {
    fn from(id: Id) -> Self {
        String::from(id.as_str())
    }
}

impl PartialEq<str> for Id {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Id {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Id {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Cow<'_, str>> for Id {
    fn eq(&self, other: &Cow<'_, str>) -> bool {
        self.as_str() == &**other
    }
}

impl PartialEq<Id> for str {
    fn eq(&self, other: &Id) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Id> for &str {
    fn eq(&self, other: &Id) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Id> for String {
    fn eq(&self, other: &Id) -> bool {
        self.as_str() == other.as_str()
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Encode for Id {
    fn encode(&self, out: &mut String) {
        write::string(out, self.as_str());
    }
}

impl serde::Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Id;
    use alloc::string::String;

    #[test]
    fn reads_compares_and_writes_as_its_text() {
        let id = Id::from("01m8fg\"z");
        let copy = id.clone();
        assert_eq!(id, copy);
        assert_eq!(id, "01m8fg\"z");
        assert_eq!(String::from("01m8fg\"z"), id);
        let (a, b) = (Id::from("a"), Id::from("b"));
        assert!(a < b);
        assert_eq!(crate::wire::write::to_string(&id), "\"01m8fg\\\"z\"");
        assert_eq!(
            serde_json::to_string(&id).ok().as_deref(),
            Some("\"01m8fg\\\"z\"")
        );
    }

    #[test]
    fn is_one_pointer_and_keeps_every_length() {
        assert_eq!(core::mem::size_of::<Id>(), core::mem::size_of::<usize>());
        assert_eq!(
            core::mem::size_of::<Option<Id>>(),
            core::mem::size_of::<usize>()
        );
        // Inline up to `INLINE` bytes, a boxed text above; multi-byte characters at the edge.
        for len in [
            0,
            1,
            super::INLINE - 1,
            super::INLINE,
            super::INLINE + 1,
            300,
        ] {
            let text: String = "é".repeat(len / 2) + &"a".repeat(len % 2);
            assert_eq!(text.len(), len);
            for id in [Id::from(text.as_str()), Id::from(text.clone())] {
                assert_eq!(id.as_str(), text);
                assert_eq!(id, Id::from(text.as_str()));
                assert!(id.shared_heap_bytes() >= core::mem::size_of::<usize>());
            }
        }
        let (short, long) = (Id::from("a".repeat(30)), Id::from("a".repeat(31)));
        assert!(short < long);
        let b = Id::from("b");
        assert!(b > long);
        assert_eq!(short.cmp(&short.clone()), core::cmp::Ordering::Equal);
    }
}
