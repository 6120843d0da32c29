//! [`Id`]: a protocol id (`turn_id`, event id, `thread_id`, `tool_call_id`) the view holds in
//! several places, shared rather than copied.
//!
//! Why shared: a long history's view repeated the same ids over and over — every item its turn
//! id and thread id, every message its key (as the item's key, the map's key and the message's
//! id), every tool call its `tool_call_id` and the ids of its result (and the result those of
//! its call). As `String`s these were ~11 MB of W2's 77 MB view (issue 16, "a lean view":
//! `cargo run --release -p forgestream-core --example bench_core`, "view breakdown"). An `Id`
//! is one reference-counted allocation; cloning it copies a pointer. `Arc` rather than `Rc` so
//! the view stays `Send + Sync` as it was with `String`s.
//!
//! It reads as a `str` (`Deref`, `Borrow<str>`: maps keyed by `Id` are searched with `&str`),
//! compares, orders and hashes as its text, and serialises as a JSON string, so the JSON the
//! view crosses as is what it was with `String`s.

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::sync::Arc;
use core::borrow::Borrow;
use core::fmt;
use core::ops::Deref;

use crate::wire::write::{self, Encode};

/// A shared, immutable id (see the module docs).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Id(Arc<str>);

impl Id {
    /// The id's text.
    pub fn as_str(&self) -> &str {
        &self.0
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
        &self.0
    }
}

impl Borrow<str> for Id {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Id {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Id {
    fn from(text: &str) -> Self {
        Id(Arc::from(text))
    }
}

impl From<&String> for Id {
    fn from(text: &String) -> Self {
        Id(Arc::from(text.as_str()))
    }
}

impl From<String> for Id {
    fn from(text: String) -> Self {
        Id(Arc::from(text))
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
        *self.0 == *other
    }
}

impl PartialEq<&str> for Id {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for Id {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Cow<'_, str>> for Id {
    fn eq(&self, other: &Cow<'_, str>) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Id> for str {
    fn eq(&self, other: &Id) -> bool {
        *self == *other.0
    }
}

impl PartialEq<Id> for &str {
    fn eq(&self, other: &Id) -> bool {
        **self == *other.0
    }
}

impl PartialEq<Id> for String {
    fn eq(&self, other: &Id) -> bool {
        **self == *other.0
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Encode for Id {
    fn encode(&self, out: &mut String) {
        write::string(out, &self.0);
    }
}

impl serde::Serialize for Id {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
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
}
