//! The checkpoint index `<ns>:v1:index` = `{"v":1,"sessions":[{"id","savedAt"}]}`: which
//! sessions have a checkpoint in this namespace, so old ones can be removed (issue 18 item 9)
//! without listing the whole of `localStorage` (the web crate only gets, sets and removes
//! items). Pruned on write: a record older than [`MAX_CHECKPOINT_AGE_MS`], or beyond the newest
//! [`MAX_CHECKPOINTS`], goes with its checkpoint.
//!
//! Tabs write the index without a lock, so one tab may drop another's entry; a session that
//! writes again re-enters it, and one that never does keeps a ~120-byte record until the
//! browser clears the origin. Checkpoints written before the index existed are pruned only once
//! their session writes again.
use alloc::string::String;
use alloc::vec::Vec;

use serde::{Deserialize, Serialize};

/// Checkpoints not written for this long are removed on the next write: 30 days, ms.
pub const MAX_CHECKPOINT_AGE_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// At most this many sessions keep a checkpoint per namespace (the most recently written).
pub const MAX_CHECKPOINTS: usize = 50;

/// One indexed session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    /// The session.
    pub id: String,
    /// Wall-clock ms since the Unix epoch of its last indexed write.
    pub saved_at: u64,
}

/// The stored index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// Schema version, [`super::SCHEMA_VERSION`].
    pub v: u32,
    /// Newest first after [`Index::touch`].
    pub sessions: Vec<IndexEntry>,
}

crate::wire::json::decode_struct!(IndexEntry, "an index entry" {
    id: "id" => required,
    saved_at: "savedAt" => required,
});

crate::wire::json::decode_struct!(Index, "a checkpoint index" {
    v: "v" => required,
    sessions: "sessions" => required,
});

crate::wire::write::encode_struct!(IndexEntry {
    id: "id",
    saved_at: "savedAt",
});

crate::wire::write::encode_struct!(Index {
    v: "v",
    sessions: "sessions",
});

/// How long and how many checkpoints are kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    /// Age limit, ms.
    pub max_age_ms: u64,
    /// Count limit (at least 1: the session being written is always kept).
    pub max_sessions: usize,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_age_ms: MAX_CHECKPOINT_AGE_MS,
            max_sessions: MAX_CHECKPOINTS,
        }
    }
}

impl Index {
    /// Reads a stored index; `None` for anything unreadable or of another schema (the store
    /// starts a new one and warns).
    pub fn parse(raw: &str) -> Option<Index> {
        let index: Index = crate::wire::json::from_str(raw).ok()?;
        (index.v == super::SCHEMA_VERSION
            && index.sessions.iter().all(|e| super::is_valid_id(&e.id)))
        .then_some(index)
    }

    /// Records that `id` was written at `now` (ms) and returns the sessions to forget: those
    /// older than `retention.max_age_ms` and those beyond the newest `retention.max_sessions`,
    /// oldest first. `id` itself is always kept.
    pub fn touch(&mut self, id: &str, now: u64, retention: Retention) -> Vec<String> {
        self.v = super::SCHEMA_VERSION;
        let mut others = core::mem::take(&mut self.sessions);
        others.retain(|e| e.id != id);
        // Newest first (a stable sort keeps the stored order of equal times).
        crate::sort::sort_by(&mut others, |a, b| a.saved_at > b.saved_at);
        self.sessions.push(IndexEntry {
            id: String::from(id),
            saved_at: now,
        });
        let keep = retention.max_sessions.max(1);
        let mut dropped = Vec::new();
        for e in others {
            let expired = now.saturating_sub(e.saved_at) > retention.max_age_ms;
            if !expired && self.sessions.len() < keep {
                self.sessions.push(e);
            } else {
                dropped.push(e.id);
            }
        }
        dropped.reverse();
        dropped
    }

    /// Drops `id` (forgotten); whether it was there.
    pub fn remove(&mut self, id: &str) -> bool {
        let before = self.sessions.len();
        self.sessions.retain(|e| e.id != id);
        self.sessions.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 24 * 60 * 60 * 1000;

    #[test]
    fn old_and_surplus_sessions_go_oldest_first() {
        let r = Retention {
            max_age_ms: 10 * DAY,
            max_sessions: 3,
        };
        let mut index = Index::default();
        assert!(index.touch("a", DAY, r).is_empty());
        assert!(index.touch("b", 2 * DAY, r).is_empty());
        assert!(index.touch("c", 3 * DAY, r).is_empty());
        // A fourth: the oldest goes.
        assert_eq!(index.touch("d", 4 * DAY, r), ["a"]);
        // Rewriting one moves it to the front; nothing goes.
        assert!(index.touch("b", 5 * DAY, r).is_empty());
        let ids: Vec<&str> = index.sessions.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["b", "d", "c"]);
        // Eleven days later, c and d (4 and 3 days) are past the age limit; b (day 5) is not.
        assert_eq!(index.touch("e", 14 * DAY + 1, r), ["c", "d"]);
        let ids: Vec<&str> = index.sessions.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["e", "b"]);
        assert!(index.remove("b") && !index.remove("b"));
    }

    #[test]
    fn the_session_written_is_kept_even_with_a_clock_gone_back() {
        let r = Retention {
            max_age_ms: DAY,
            max_sessions: 1,
        };
        let mut index = Index::default();
        index.touch("a", 10 * DAY, r);
        // The clock went back: "b" is older than "a" by its time but is the one being written.
        assert_eq!(index.touch("b", DAY, r), ["a"]);
        assert_eq!(index.sessions.len(), 1);
        assert_eq!(index.sessions[0].id, "b");
    }

    #[test]
    fn stored_indexes_are_never_trusted() {
        let ok = r#"{"v":1,"sessions":[{"id":"s1","savedAt":3}]}"#;
        assert_eq!(Index::parse(ok).unwrap().sessions[0].saved_at, 3);
        assert_eq!(Index::parse(&ok.replace("\"v\":1", "\"v\":2")), None);
        assert_eq!(Index::parse(&ok.replace("s1", "../x")), None);
        assert_eq!(Index::parse("[1,2"), None);
    }
}
