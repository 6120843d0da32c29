//! The persisted records of a session (DESIGN.md "Persistence"): the resume checkpoint
//! `{v, sessionId, turnId, seq, savedAt}` and the last-session pointer. Only IDs and the cursor:
//! never tokens, never message bodies. The engine decides what to write; [`CheckpointStore`]
//! decides how (degrade to memory, warnings, monotonic writes, scoped pointers, expiry) over a
//! platform [`StorageBackend`] that only gets, sets and removes items.
use alloc::string::String;

pub mod index;
pub mod keys;
mod store;

pub use index::{Retention, MAX_CHECKPOINTS, MAX_CHECKPOINT_AGE_MS};
pub use store::{CheckpointStore, StorageBackend, StorageFault, StorageWarning};

use serde::{Deserialize, Serialize};

/// Schema version of [`Checkpoint`]; records with another `v` are ignored (and reported).
pub const SCHEMA_VERSION: u32 = 1;

/// Longest session id accepted from storage, bytes.
pub const MAX_ID_BYTES: usize = 256;

/// One session's resume record: `{v, sessionId, turnId, seq, savedAt}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// [`SCHEMA_VERSION`].
    pub v: u32,
    /// The session.
    pub session_id: String,
    /// The turn being followed; `None` once it settled.
    pub turn_id: Option<String>,
    /// Last processed sequence number of `turn_id` (0 = none yet).
    pub seq: u64,
    /// Wall-clock ms since the Unix epoch of the write.
    pub saved_at: u64,
    /// A turn is being created (written just before `POST …/turns`, cleared once the turn is
    /// known or the POST definitely failed): a reload in that window finds the new turn by
    /// listing instead of posting again (issue 14). Absent in older records. Only ids: never
    /// the message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creating: Option<CreatingTurn>,
}

/// The marker of a turn POST in flight ([`Checkpoint::creating`]): `{"after": id | null}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatingTurn {
    /// The session's newest turn before the POST (`None`: the session had none). The created
    /// turn is the newer one whose `previous_turn_id` is this.
    pub after: Option<String>,
}

crate::wire::json::decode_struct!(Checkpoint, "a checkpoint record" {
    v: "v" => required,
    session_id: "sessionId" => required,
    turn_id: "turnId" => default,
    seq: "seq" => required,
    saved_at: "savedAt" => required,
    creating: "creating" => default,
});

crate::wire::json::decode_struct!(CreatingTurn, "a creating marker" {
    after: "after" => default,
});

crate::wire::write::encode_struct!(Checkpoint {
    v: "v",
    session_id: "sessionId",
    turn_id: "turnId",
    seq: "seq",
    saved_at: "savedAt",
    creating: "creating" => skip_none,
});

crate::wire::write::encode_struct!(CreatingTurn { after: "after" });

/// Whether `id` can be a session or turn id read back from storage: 1 to [`MAX_ID_BYTES`]
/// bytes of `A–Z a–z 0–9 . _ - ~ :`, and not `.` or `..` (which a URL resolver would turn into
/// a path step). Server ids are ULIDs with dotted suffixes; anything else in storage is garbage
/// or tampering, and never becomes part of a URL.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_BYTES
        && id != "."
        && id != ".."
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'~' | b':'))
}

/// What the last-session pointer said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pointer {
    /// Nothing stored: `restore()` resolves `null`.
    Absent,
    /// A well-formed session id: restore it.
    Session(String),
    /// Garbage under the pointer key: `restore()` resolves `null` and the pointer is cleared.
    Corrupt,
}

/// Reads the raw pointer value (`None` when the key is absent).
pub fn parse_pointer(raw: Option<&str>) -> Pointer {
    match raw {
        None => Pointer::Absent,
        Some(id) if is_valid_id(id) => Pointer::Session(String::from(id)),
        Some(_) => Pointer::Corrupt,
    }
}

/// Why a stored checkpoint was not used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointIssue {
    /// Not JSON of the record's shape, or ids that fail [`is_valid_id`].
    Corrupt,
    /// Another schema version.
    OldSchema,
    /// Stored under another session's key.
    Foreign,
}

impl CheckpointIssue {
    /// The storage warning it is reported as: `(code, message)`.
    pub fn warning(self) -> (&'static str, &'static str) {
        match self {
            CheckpointIssue::OldSchema => ("old-schema", "ignoring a checkpoint of another schema"),
            CheckpointIssue::Foreign => (
                "corrupt",
                "ignoring a checkpoint stored under another session's key",
            ),
            CheckpointIssue::Corrupt => ("corrupt", "ignoring an unreadable checkpoint"),
        }
    }
}

/// Whether `record` may replace the `stored` one: not when both are for the same turn and the
/// stored cursor is as far or further (writes stay monotonic across tabs: another tab may have
/// written since this engine last did). A settled record (`turnId: null`) always replaces.
pub fn supersedes(record: &Checkpoint, stored: Option<&Checkpoint>) -> bool {
    !stored.is_some_and(|s| {
        record.turn_id.is_some() && s.turn_id == record.turn_id && s.seq >= record.seq
    })
}

/// Parses a stored checkpoint of `session_id`. Never trusts it: a bad record is an issue (the
/// store reports it as a warning), never an error.
pub fn parse_checkpoint(raw: &str, session_id: &str) -> Result<Checkpoint, CheckpointIssue> {
    let record: Checkpoint =
        crate::wire::json::from_str(raw).map_err(|_| CheckpointIssue::Corrupt)?;
    if record.v != SCHEMA_VERSION {
        return Err(CheckpointIssue::OldSchema);
    }
    if record.session_id != session_id {
        return Err(CheckpointIssue::Foreign);
    }
    if record.turn_id.as_deref().is_some_and(|t| !is_valid_id(t)) {
        return Err(CheckpointIssue::Corrupt);
    }
    if record
        .creating
        .as_ref()
        .and_then(|c| c.after.as_deref())
        .is_some_and(|t| !is_valid_id(t))
    {
        return Err(CheckpointIssue::Corrupt);
    }
    Ok(record)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_are_checked_before_they_become_urls() {
        assert_eq!(parse_pointer(None), Pointer::Absent);
        assert_eq!(
            parse_pointer(Some("01JD8X.local")),
            Pointer::Session("01JD8X.local".into())
        );
        for bad in ["", ".", "..", "../x", "a/b", "{\"x\":1}", "a b", "é"] {
            assert_eq!(parse_pointer(Some(bad)), Pointer::Corrupt, "{bad:?}");
        }
        let long = "a".repeat(MAX_ID_BYTES + 1);
        assert_eq!(parse_pointer(Some(&long)), Pointer::Corrupt);
    }

    #[test]
    fn writes_are_monotonic_per_turn() {
        let at = |turn: Option<&str>, seq| Checkpoint {
            v: SCHEMA_VERSION,
            session_id: "s".into(),
            turn_id: turn.map(String::from),
            seq,
            saved_at: 0,
            creating: None,
        };
        assert!(supersedes(&at(Some("t"), 5), None));
        assert!(supersedes(&at(Some("t"), 5), Some(&at(Some("t"), 4))));
        assert!(!supersedes(&at(Some("t"), 5), Some(&at(Some("t"), 5))));
        assert!(!supersedes(&at(Some("t"), 3), Some(&at(Some("t"), 9))));
        assert!(supersedes(&at(Some("u"), 0), Some(&at(Some("t"), 9))));
        assert!(supersedes(&at(None, 0), Some(&at(Some("t"), 9))));
    }

    #[test]
    fn checkpoints_are_never_trusted() {
        let ok = r#"{"v":1,"sessionId":"s1","turnId":"t1","seq":4,"savedAt":9}"#;
        assert_eq!(parse_checkpoint(ok, "s1").unwrap().seq, 4);
        assert_eq!(parse_checkpoint(ok, "s2"), Err(CheckpointIssue::Foreign));
        assert_eq!(
            parse_checkpoint(&ok.replace("\"v\":1", "\"v\":2"), "s1"),
            Err(CheckpointIssue::OldSchema)
        );
        assert_eq!(
            parse_checkpoint(&ok.replace("t1", ".."), "s1"),
            Err(CheckpointIssue::Corrupt)
        );
        assert_eq!(parse_checkpoint("{", "s1"), Err(CheckpointIssue::Corrupt));
        // The creating marker: read back, and its id checked like the others.
        let creating = r#"{"v":1,"sessionId":"s1","turnId":null,"seq":0,"savedAt":9,"creating":{"after":"t1"}}"#;
        assert_eq!(
            parse_checkpoint(creating, "s1").unwrap().creating,
            Some(CreatingTurn {
                after: Some("t1".into())
            })
        );
        assert_eq!(
            parse_checkpoint(&creating.replace("\"t1\"", "\"a/b\""), "s1"),
            Err(CheckpointIssue::Corrupt)
        );
    }
}
