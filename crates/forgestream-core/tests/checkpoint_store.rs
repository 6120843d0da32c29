//! The checkpoint store's decisions, natively (issue 12: the web crate decides nothing): memory
//! fallback with one warning per cause, untrusted records, monotonic writes across tabs, scoped
//! pointers over one namespace (issue 13), `forget` and expiry (issue 18 item 9), and the move
//! of an earlier version's scoped pointer; the one entry point for an engine's storage effects
//! (`perform`) and for `restore` (`restore_point`).
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use forgestream_core::session::checkpoint::keys;
use forgestream_core::session::checkpoint::{
    CheckpointStore, Retention, StorageBackend, StorageFault, SCHEMA_VERSION,
};
use forgestream_core::session::{Checkpoint, Pointer, StorageEffect, StorageKind};

/// A `localStorage` of one origin: shared by the stores of several "tabs".
#[derive(Clone, Default)]
struct Origin {
    items: Rc<RefCell<BTreeMap<String, String>>>,
    /// `setItem` throws (quota exceeded) while set.
    full: Rc<RefCell<bool>>,
    /// Getting storage throws (disabled / sandboxed) while set.
    disabled: Rc<RefCell<bool>>,
    calls: Rc<RefCell<usize>>,
}

impl Origin {
    fn get(&self, key: &str) -> Option<String> {
        self.items.borrow().get(key).cloned()
    }
    fn put(&self, key: &str, value: &str) {
        self.items.borrow_mut().insert(key.into(), value.into());
    }
    fn checkpoint_keys(&self) -> Vec<String> {
        self.items
            .borrow()
            .keys()
            .filter(|k| k.contains(":v1:session:"))
            .cloned()
            .collect()
    }
}

impl StorageBackend for Origin {
    fn get_item(&mut self, key: &str) -> Result<Option<String>, StorageFault> {
        *self.calls.borrow_mut() += 1;
        if *self.disabled.borrow() {
            return Err(StorageFault::Unavailable(
                "SecurityError: storage is disabled".into(),
            ));
        }
        Ok(self.get(key))
    }
    fn set_item(&mut self, key: &str, value: &str) -> Result<(), StorageFault> {
        *self.calls.borrow_mut() += 1;
        if *self.disabled.borrow() {
            return Err(StorageFault::Unavailable(
                "SecurityError: storage is disabled".into(),
            ));
        }
        if *self.full.borrow() {
            return Err(StorageFault::Threw);
        }
        self.put(key, value);
        Ok(())
    }
    fn remove_item(&mut self, key: &str) -> Result<(), StorageFault> {
        *self.calls.borrow_mut() += 1;
        self.items.borrow_mut().remove(key);
        Ok(())
    }
}

fn tab(origin: &Origin) -> CheckpointStore<Origin> {
    CheckpointStore::new(origin.clone(), StorageKind::Local, "fs", "")
}

fn record(session: &str, turn: Option<&str>, seq: u64, at: u64) -> Checkpoint {
    Checkpoint {
        v: SCHEMA_VERSION,
        session_id: session.into(),
        turn_id: turn.map(String::from),
        seq,
        saved_at: at,
        creating: None,
    }
}

fn kinds(store: &CheckpointStore<Origin>) -> Vec<&'static str> {
    store.take_warnings().iter().map(|w| w.kind).collect()
}

#[test]
fn a_full_storage_degrades_to_memory_with_one_warning() {
    let origin = Origin::default();
    let mut store = tab(&origin);
    assert!(store.save(&record("s1", Some("t1"), 1, 0)));
    *origin.full.borrow_mut() = true;
    assert!(store.save(&record("s1", Some("t1"), 2, 0)));
    assert!(store.save(&record("s1", Some("t1"), 3, 0)));
    assert!(store.is_memory());
    assert_eq!(kinds(&store), ["write-failed"]);
    // What was written after the failure is still there (in memory); storage is not asked again.
    let calls = *origin.calls.borrow();
    assert_eq!(store.load("s1").map(|c| c.seq), Some(3));
    assert_eq!(*origin.calls.borrow(), calls);
}

#[test]
fn disabled_storage_warns_once_and_keeps_working_in_memory() {
    let origin = Origin::default();
    *origin.disabled.borrow_mut() = true;
    let mut store = tab(&origin);
    assert_eq!(store.last_pointer(None), Pointer::Absent);
    store.remember("s1", Some("support"));
    assert!(store.save(&record("s1", Some("t1"), 4, 0)));
    assert_eq!(store.last_session(Some("support")).as_deref(), Some("s1"));
    assert_eq!(store.load("s1").map(|c| c.seq), Some(4));
    let warnings = store.take_warnings();
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].kind, "unavailable");
    assert!(warnings[0].message.contains("SecurityError"));
}

#[test]
fn memory_storage_never_touches_the_backend() {
    let origin = Origin::default();
    let mut store = CheckpointStore::new(origin.clone(), StorageKind::Memory, "fs", "");
    store.remember("s1", None);
    assert!(store.save(&record("s1", Some("t1"), 1, 0)));
    assert_eq!(store.last_session(None).as_deref(), Some("s1"));
    assert_eq!(*origin.calls.borrow(), 0);
    assert!(store.take_warnings().is_empty());
}

#[test]
fn corrupt_old_and_future_records_are_ignored_with_a_warning_each() {
    let origin = Origin::default();
    let key = keys::checkpoint_key("fs", "s1");
    let mut store = tab(&origin);
    origin.put(&key, "{not json");
    assert_eq!(store.load("s1"), None);
    origin.put(
        &key,
        r#"{"v":0,"sessionId":"s1","turnId":"t1","seq":4,"savedAt":9}"#,
    );
    assert_eq!(store.load("s1"), None);
    origin.put(
        &key,
        r#"{"v":7,"sessionId":"s1","turnId":"t1","seq":4,"savedAt":9}"#,
    );
    assert_eq!(store.load("s1"), None);
    assert_eq!(kinds(&store), ["corrupt", "old-schema"]);
    // A corrupt pointer reads as such (the client clears it), never as a URL part.
    origin.put(&keys::pointer_key("fs", "", Some("a")), "../admin");
    assert_eq!(store.last_pointer(Some("a")), Pointer::Corrupt);
    store.clear_pointer(Some("a"));
    assert_eq!(store.last_pointer(Some("a")), Pointer::Absent);
    // A corrupt index is replaced on the next write, with a warning.
    origin.put(&keys::index_key("fs"), "[[[");
    assert!(store.save(&record("s2", Some("t1"), 1, 5)));
    assert_eq!(kinds(&store), ["corrupt"]);
    assert!(origin
        .get(&keys::index_key("fs"))
        .unwrap()
        .contains("\"s2\""));
}

#[test]
fn writes_stay_monotonic_against_another_tab() {
    let origin = Origin::default();
    let (mut a, mut b) = (tab(&origin), tab(&origin));
    assert!(a.save(&record("s1", Some("t1"), 9, 0)));
    // Tab B's engine is behind (it replays from 0): its lower cursor does not overwrite A's.
    assert!(!b.save(&record("s1", Some("t1"), 3, 0)));
    assert_eq!(b.load("s1").map(|c| c.seq), Some(9));
    // A settled record always replaces.
    assert!(b.save(&record("s1", None, 0, 0)));
    assert_eq!(a.load("s1").map(|c| c.turn_id), Some(None));
}

#[test]
fn two_scopes_share_one_checkpoint_but_keep_their_own_pointer() {
    let origin = Origin::default();
    let mut store = tab(&origin);
    store.remember("s1", Some("alice/support"));
    assert_eq!(
        store.last_session(Some("alice/support")).as_deref(),
        Some("s1")
    );
    // Another user, another agent, the unscoped client: nothing to restore.
    assert_eq!(store.last_session(Some("bob/support")), None);
    assert_eq!(store.last_session(Some("alice/billing")), None);
    assert_eq!(store.last_session(None), None);
    // Bob opens the same session (shared link): one checkpoint, both pointers follow it.
    store.opened("s1", Some("bob/support"));
    assert!(store.save(&record("s1", Some("t1"), 2, 0)));
    assert_eq!(
        store.last_session(Some("bob/support")).as_deref(),
        Some("s1")
    );
    assert_eq!(origin.checkpoint_keys(), ["fs:v1:session:s1"]);
    // Another backend on the same origin and namespace: its own pointers.
    let mut other = CheckpointStore::new(origin.clone(), StorageKind::Local, "fs", "https://gw");
    assert_eq!(other.last_session(Some("alice/support")), None);
}

#[test]
fn each_tab_points_the_scope_at_the_session_it_writes() {
    let origin = Origin::default();
    let (mut a, mut b) = (tab(&origin), tab(&origin));
    a.remember("s1", Some("support"));
    b.remember("s2", Some("support"));
    assert_eq!(a.last_session(Some("support")).as_deref(), Some("s2"));
    // Tab A streams again: the scope's last active session is A's.
    assert!(a.save(&record("s1", Some("t1"), 1, 0)));
    assert_eq!(b.last_session(Some("support")).as_deref(), Some("s1"));
    // A stale session (404) clears only pointers that still name it.
    b.clear_last_session("s2");
    assert_eq!(a.last_session(Some("support")).as_deref(), Some("s1"));
    a.clear_last_session("s1");
    assert_eq!(a.last_session(Some("support")), None);
}

#[test]
fn forget_removes_the_checkpoint_and_the_pointers_naming_the_session() {
    let origin = Origin::default();
    let mut store = tab(&origin);
    store.remember("s1", Some("a"));
    store.remember("s2", Some("b"));
    assert!(store.save(&record("s1", Some("t1"), 3, 0)));
    assert!(store.save(&record("s2", Some("t9"), 1, 0)));
    store.forget("s1", None);
    assert_eq!(store.load("s1"), None);
    assert_eq!(origin.get(&keys::checkpoint_key("fs", "s1")), None);
    assert_eq!(store.last_session(Some("a")), None);
    assert!(!origin
        .get(&keys::index_key("fs"))
        .unwrap()
        .contains("\"s1\""));
    // The other scope's session is untouched.
    assert_eq!(store.last_session(Some("b")).as_deref(), Some("s2"));
    assert_eq!(store.load("s2").map(|c| c.seq), Some(1));
    // A fresh page (nothing opened yet) forgets by scope.
    let mut fresh = tab(&origin);
    fresh.forget("s2", Some("b"));
    assert_eq!(fresh.last_session(Some("b")), None);
    assert_eq!(origin.checkpoint_keys(), Vec::<String>::new());
}

#[test]
fn old_and_surplus_checkpoints_expire_on_write_oldest_first() {
    const DAY: u64 = 24 * 60 * 60 * 1000;
    let origin = Origin::default();
    let retention = Retention {
        max_age_ms: 30 * DAY,
        max_sessions: 3,
    };
    let mut store = tab(&origin).with_retention(retention);
    for (i, id) in ["s1", "s2", "s3"].into_iter().enumerate() {
        assert!(store.save(&record(id, Some("t1"), 1, (i as u64 + 1) * DAY)));
    }
    // The index lives under its documented key (renaming it would lose existing pages'
    // expiry state).
    assert_eq!(keys::index_key("fs"), "fs:v1:index");
    assert!(origin.get("fs:v1:index").is_some_and(|i| i.contains("s3")));
    // Cursor writes of a known turn do not rewrite the index.
    let index = origin.get(&keys::index_key("fs"));
    assert!(store.save(&record("s3", Some("t1"), 2, 3 * DAY + 5)));
    assert_eq!(origin.get(&keys::index_key("fs")), index);
    // A fourth session: the oldest (s1) goes.
    assert!(store.save(&record("s4", Some("t1"), 1, 4 * DAY)));
    assert_eq!(
        origin.checkpoint_keys(),
        ["fs:v1:session:s2", "fs:v1:session:s3", "fs:v1:session:s4"]
    );
    // Forty days on, one write in another tab: everything older than 30 days goes.
    let mut later = tab(&origin).with_retention(retention);
    assert!(later.save(&record("s9", Some("t1"), 1, 40 * DAY)));
    assert_eq!(origin.checkpoint_keys(), ["fs:v1:session:s9"]);
    assert_eq!(later.load("s2"), None);
    // The default limits are documented constants.
    let default = Retention::default();
    assert_eq!(default.max_age_ms, 30 * DAY);
    assert_eq!(default.max_sessions, 50);
}

#[test]
fn an_earlier_versions_scoped_pointer_is_moved_once_with_a_warning() {
    let origin = Origin::default();
    let legacy_ns = keys::legacy_namespace("fs", "", Some("support")).unwrap();
    origin.put(&[legacy_ns.as_str(), ":v1:last"].concat(), "s1");
    origin.put(
        &keys::checkpoint_key(&legacy_ns, "s1"),
        r#"{"v":1,"sessionId":"s1","turnId":"t1","seq":4,"savedAt":9}"#,
    );
    let mut store = tab(&origin);
    assert_eq!(store.last_session(Some("support")).as_deref(), Some("s1"));
    assert_eq!(kinds(&store), ["old-schema"]);
    assert_eq!(store.load("s1").map(|c| c.seq), Some(4));
    assert!(origin
        .items
        .borrow()
        .keys()
        .all(|k| !k.starts_with(&legacy_ns)));
    // Garbage under the old key is dropped, never used.
    origin.put(&[legacy_ns.as_str(), ":v1:last"].concat(), "a/../b");
    store.clear_pointer(Some("support"));
    assert_eq!(store.last_pointer(Some("support")), Pointer::Corrupt);
    assert_eq!(origin.get(&[legacy_ns.as_str(), ":v1:last"].concat()), None);
}

/// Every storage effect of an engine through the store's one entry point, with the rules of the
/// methods it stands for (monotonic writes, pointers that still name the session).
#[test]
fn perform_carries_out_each_storage_effect_of_an_engine() {
    let origin = Origin::default();
    let (mut a, mut b) = (tab(&origin), tab(&origin));
    a.opened("s1", Some("support"));
    a.perform(&StorageEffect::WriteCheckpoint(record(
        "s1",
        Some("t1"),
        5,
        0,
    )));
    assert_eq!(a.load("s1").map(|c| c.seq), Some(5));
    assert_eq!(b.last_session(Some("support")).as_deref(), Some("s1"));
    // Still monotonic: another tab's lower cursor is not written.
    b.perform(&StorageEffect::WriteCheckpoint(record(
        "s1",
        Some("t1"),
        2,
        0,
    )));
    assert_eq!(a.load("s1").map(|c| c.seq), Some(5));
    // B points the plain pointer at s2; clearing s1's pointers leaves it.
    b.perform(&StorageEffect::WritePointer {
        session_id: "s2".into(),
    });
    assert_eq!(a.last_session(None).as_deref(), Some("s2"));
    a.perform(&StorageEffect::ClearPointer {
        session_id: "s1".into(),
    });
    assert_eq!(a.last_session(Some("support")), None);
    assert_eq!(a.last_session(None).as_deref(), Some("s2"));
    a.perform(&StorageEffect::RemoveCheckpoint {
        session_id: "s1".into(),
    });
    assert_eq!(a.load("s1"), None);
    assert_eq!(origin.checkpoint_keys(), Vec::<String>::new());
}

#[test]
fn restore_point_reads_the_pointer_and_checkpoint_and_clears_a_corrupt_pointer() {
    let origin = Origin::default();
    let mut store = tab(&origin);
    assert_eq!(store.restore_point(Some("support")), None);
    store.remember("s1", Some("support"));
    assert_eq!(
        store.restore_point(Some("support")),
        Some(("s1".into(), None))
    );
    assert!(store.save(&record("s1", Some("t1"), 4, 0)));
    let mut fresh = tab(&origin);
    let (id, checkpoint) = fresh.restore_point(Some("support")).unwrap();
    assert_eq!((id.as_str(), checkpoint.map(|c| c.seq)), ("s1", Some(4)));
    // Restored under that scope: this page's writes point the scope's pointer at it again.
    fresh.perform(&StorageEffect::WritePointer {
        session_id: "s2".into(),
    });
    fresh.perform(&StorageEffect::WritePointer {
        session_id: "s1".into(),
    });
    assert_eq!(fresh.last_session(Some("support")).as_deref(), Some("s1"));
    // Garbage under the pointer: nothing to restore, and the pointer is gone.
    let key = keys::pointer_key("fs", "", Some("support"));
    origin.put(&key, "../../x");
    assert_eq!(fresh.restore_point(Some("support")), None);
    assert_eq!(origin.get(&key), None);
    assert_eq!(fresh.last_pointer(Some("support")), Pointer::Absent);
}
