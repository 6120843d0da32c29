//! The guarded checkpoint store: every storage decision of the SDK (issue 12: the web crate
//! decides nothing). The platform is a [`StorageBackend`] that only gets, sets and removes
//! items and reports what threw; this store decides the rest:
//!
//! - **degrade to memory** on the first failure (quota exceeded, storage disabled, a security
//!   error in a sandboxed frame), so streaming never stops for storage;
//! - **one warning per cause** (`unavailable`, `write-failed`, `corrupt`, `old-schema`);
//! - **never trust a record**: pointers, checkpoints and the index are parsed and checked
//!   ([`super::parse_pointer`], [`super::parse_checkpoint`], [`Index::parse`]);
//! - **monotonic writes** ([`super::supersedes`]), also against another tab's write;
//! - **scoped pointers**: the last-session pointer is per (base URL, scope) ([`super::keys`]);
//!   checkpoints and engines are per namespace, so two scopes opening one session share both;
//! - **expiry**: checkpoints of old or surplus sessions go on write ([`super::index`]).
//!
//! Only IDs and cursors are written — never tokens, never message bodies.
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::RefCell;

use super::index::{Index, Retention};
use super::keys;
use super::{parse_checkpoint, parse_pointer, supersedes, Checkpoint, Pointer};
use crate::session::{StorageEffect, StorageKind};
use crate::wire::write::to_string;

/// What a storage call did not do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StorageFault {
    /// There is no storage to call: none on this platform (a worker, no `window`), or getting
    /// it threw (`message`, e.g. a sandboxed frame's `SecurityError`).
    Unavailable(String),
    /// The call itself threw (a write: quota exceeded or storage disabled).
    Threw,
}

/// The platform's key–value storage (`localStorage` / `sessionStorage`): no decisions, only
/// the three calls and what threw.
pub trait StorageBackend {
    /// `getItem(key)`.
    fn get_item(&mut self, key: &str) -> Result<Option<String>, StorageFault>;
    /// `setItem(key, value)`.
    fn set_item(&mut self, key: &str, value: &str) -> Result<(), StorageFault>;
    /// `removeItem(key)`.
    fn remove_item(&mut self, key: &str) -> Result<(), StorageFault>;
}

/// A warning about storage, reported once per cause (the engine shows it as a `storage`
/// warning: `"<kind>: <message>"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StorageWarning {
    /// `"unavailable" | "write-failed" | "corrupt" | "old-schema"`.
    pub kind: &'static str,
    /// Human-readable.
    pub message: String,
}

/// One client's checkpoint store over backend `B`.
pub struct CheckpointStore<B> {
    backend: B,
    namespace: String,
    /// The client's base URL (`""` = same origin): part of every pointer key but the plain one.
    base: String,
    retention: Retention,
    degraded: bool,
    /// The fallback store after [`Self::is_memory`]: `(key, value)` pairs (a handful per page;
    /// a plain list keeps another map instantiation out of the wasm).
    memory: Vec<(String, String)>,
    warnings: RefCell<Vec<StorageWarning>>,
    /// The pointer keys each session was opened under in this page (create / restore with a
    /// scope): where "this session is the last one" is written.
    opened: Vec<(String, Vec<String>)>,
    /// The turn each session was last indexed with by this store: the index is rewritten when
    /// a session starts or settles a turn, not on every cursor write.
    indexed: Vec<(String, Option<String>)>,
}

impl<B: StorageBackend> CheckpointStore<B> {
    /// A store over `backend` (unused with [`StorageKind::Memory`]) with keys under
    /// `namespace`, for a client of base URL `base`. Nothing is touched until the first call.
    pub fn new(backend: B, kind: StorageKind, namespace: &str, base: &str) -> Self {
        CheckpointStore {
            backend,
            namespace: String::from(namespace),
            base: String::from(base),
            retention: Retention::default(),
            degraded: kind == StorageKind::Memory,
            memory: Vec::new(),
            warnings: RefCell::new(Vec::new()),
            opened: Vec::new(),
            indexed: Vec::new(),
        }
    }

    /// The same with other expiry limits (tests).
    pub fn with_retention(mut self, retention: Retention) -> Self {
        self.retention = retention;
        self
    }

    /// True once the store fell back to memory (or was configured so).
    pub fn is_memory(&self) -> bool {
        self.degraded
    }

    /// Warnings raised since the last call (each cause once).
    pub fn take_warnings(&self) -> Vec<StorageWarning> {
        core::mem::take(&mut *self.warnings.borrow_mut())
    }

    fn warn(&self, kind: &'static str, message: &str) {
        let mut warnings = self.warnings.borrow_mut();
        if !warnings.iter().any(|w| w.kind == kind) {
            warnings.push(StorageWarning {
                kind,
                message: String::from(message),
            });
        }
    }

    fn degrade(&mut self, fault: StorageFault, kind: &'static str, threw: &str) {
        self.degraded = true;
        match fault {
            StorageFault::Unavailable(message) => self.warn("unavailable", &message),
            StorageFault::Threw => self.warn(kind, threw),
        }
    }

    fn get_raw(&mut self, key: &str) -> Option<String> {
        if !self.degraded {
            match self.backend.get_item(key) {
                Ok(value) => return value,
                Err(fault) => {
                    self.degrade(fault, "unavailable", "storage read threw; using memory")
                }
            }
        }
        self.memory
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    fn set_raw(&mut self, key: &str, value: &str) {
        if !self.degraded {
            match self.backend.set_item(key, value) {
                Ok(()) => return,
                Err(fault) => self.degrade(
                    fault,
                    "write-failed",
                    "storage write threw (quota exceeded or disabled); using memory",
                ),
            }
        }
        match self.memory.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = String::from(value),
            None => self.memory.push((String::from(key), String::from(value))),
        }
    }

    fn remove_raw(&mut self, key: &str) {
        if !self.degraded {
            // A failed remove leaves a record the next read checks anyway: no reason to stop
            // using storage for it.
            let _ = self.backend.remove_item(key);
        }
        self.memory.retain(|(k, _)| k != key);
    }

    fn pointer_key(&self, scope: Option<&str>) -> String {
        keys::pointer_key(&self.namespace, &self.base, scope)
    }

    /// Carries out one storage effect of an engine ([`crate::session::Effect::Storage`]): the
    /// executor's single entry point for storage writes. `WriteCheckpoint` is [`Self::save`]
    /// (monotonic, points the session's pointers at it, prunes expired checkpoints),
    /// `RemoveCheckpoint` [`Self::remove`], `WritePointer` [`Self::set_last_session`],
    /// `ClearPointer` [`Self::clear_last_session`]. Never throws: a failing backend degrades
    /// the store to memory with a warning ([`Self::take_warnings`]).
    pub fn perform(&mut self, effect: &StorageEffect) {
        match effect {
            StorageEffect::WriteCheckpoint(record) => {
                self.save(record);
            }
            StorageEffect::RemoveCheckpoint { session_id } => self.remove(session_id),
            StorageEffect::WritePointer { session_id } => self.set_last_session(session_id),
            StorageEffect::ClearPointer { session_id } => self.clear_last_session(session_id),
        }
    }

    /// What `restore(scope)` starts from: the session `scope`'s last-session pointer names and
    /// its stored checkpoint (if any and valid), with the session recorded as opened under
    /// `scope` ([`Self::opened`]). `None` when there is nothing to restore: no pointer, or a
    /// corrupt one, which is removed.
    pub fn restore_point(&mut self, scope: Option<&str>) -> Option<(String, Option<Checkpoint>)> {
        match self.last_pointer(scope) {
            Pointer::Absent => None,
            Pointer::Corrupt => {
                self.clear_pointer(scope);
                None
            }
            Pointer::Session(id) => {
                self.opened(&id, scope);
                let checkpoint = self.load(&id);
                Some((id, checkpoint))
            }
        }
    }

    /// Reads a session's checkpoint. A corrupt, foreign or old-schema record reads as `None`
    /// (with a warning): it is never trusted and never throws.
    pub fn load(&mut self, session_id: &str) -> Option<Checkpoint> {
        let raw = self.get_raw(&keys::checkpoint_key(&self.namespace, session_id))?;
        parse_checkpoint(&raw, session_id)
            .map_err(|issue| {
                let (kind, message) = issue.warning();
                self.warn(kind, message);
            })
            .ok()
    }

    /// Writes a checkpoint unless the stored one is for the same turn with a higher or equal
    /// `seq` (monotonic across tabs), points this session's pointers at it (a session writing
    /// its checkpoint is the active one, also for another tab's reload), and prunes expired
    /// checkpoints. Returns whether the record was written.
    pub fn save(&mut self, record: &Checkpoint) -> bool {
        if !supersedes(record, self.load(&record.session_id).as_ref()) {
            return false;
        }
        let json = to_string(record);
        self.set_raw(
            &keys::checkpoint_key(&self.namespace, &record.session_id),
            &json,
        );
        self.set_last_session(&record.session_id);
        self.index(record);
        true
    }

    /// Enters `record`'s session in the index (when its turn changed since this store last
    /// did) and removes the checkpoints that expired.
    fn index(&mut self, record: &Checkpoint) {
        let id = record.session_id.as_str();
        match self.indexed.iter_mut().find(|(s, _)| s == id) {
            Some((_, turn)) if *turn == record.turn_id => return,
            Some((_, turn)) => *turn = record.turn_id.clone(),
            None => self
                .indexed
                .push((String::from(id), record.turn_id.clone())),
        }
        let key = keys::index_key(&self.namespace);
        let mut index = self.read_index(&key);
        let expired = index.touch(id, record.saved_at, self.retention);
        for gone in &expired {
            self.remove_raw(&keys::checkpoint_key(&self.namespace, gone));
        }
        self.set_raw(&key, &to_string(&index));
    }

    fn read_index(&mut self, key: &str) -> Index {
        match self.get_raw(key) {
            None => Index::default(),
            Some(raw) => Index::parse(&raw).unwrap_or_else(|| {
                self.warn("corrupt", "ignoring an unreadable checkpoint index");
                Index::default()
            }),
        }
    }

    /// Records that this page opened `session_id` under `scope` (create, restore): its
    /// checkpoint writes point that scope's pointer at it from now on.
    pub fn opened(&mut self, session_id: &str, scope: Option<&str>) {
        let key = self.pointer_key(scope);
        match self.opened.iter_mut().find(|(s, _)| s == session_id) {
            Some((_, keys)) if keys.contains(&key) => {}
            Some((_, keys)) => keys.push(key),
            None => self
                .opened
                .push((String::from(session_id), alloc::vec![key])),
        }
    }

    /// [`Self::opened`], and `scope`'s pointer names `session_id` now (a new session is
    /// remembered at once: a reload before the first message restores it).
    pub fn remember(&mut self, session_id: &str, scope: Option<&str>) {
        self.opened(session_id, scope);
        let key = self.pointer_key(scope);
        self.set_raw(&key, session_id);
    }

    /// The pointer keys of `session_id`: those it was opened under, else the plain one.
    fn pointer_keys_of(&self, session_id: &str) -> Vec<String> {
        match self.opened.iter().find(|(s, _)| s == session_id) {
            Some((_, keys)) => keys.clone(),
            None => alloc::vec![self.pointer_key(None)],
        }
    }

    /// What `scope`'s last-session pointer says (checked: garbage is [`Pointer::Corrupt`]). A
    /// pointer an earlier version kept in its per-scope namespace is moved here once (with an
    /// `old-schema` warning), its checkpoint with it.
    pub fn last_pointer(&mut self, scope: Option<&str>) -> Pointer {
        let key = self.pointer_key(scope);
        let stored = self.get_raw(&key);
        if stored.is_none() {
            if let Some(moved) = self.move_legacy_pointer(scope, &key) {
                return moved;
            }
        }
        parse_pointer(stored.as_deref())
    }

    fn move_legacy_pointer(&mut self, scope: Option<&str>, key: &str) -> Option<Pointer> {
        let legacy_ns = keys::legacy_namespace(&self.namespace, &self.base, scope)?;
        let legacy_key = [legacy_ns.as_str(), ":v1:last"].concat();
        let raw = self.get_raw(&legacy_key)?;
        self.remove_raw(&legacy_key);
        self.warn(
            "old-schema",
            "moved a last-session pointer from an earlier version's scoped storage",
        );
        let pointer = parse_pointer(Some(&raw));
        if let Pointer::Session(id) = &pointer {
            self.set_raw(key, id);
            let legacy_checkpoint = keys::checkpoint_key(&legacy_ns, id);
            if let Some(record) = self
                .get_raw(&legacy_checkpoint)
                .and_then(|raw| parse_checkpoint(&raw, id).ok())
            {
                if supersedes(&record, self.load(id).as_ref()) {
                    let json = to_string(&record);
                    self.set_raw(&keys::checkpoint_key(&self.namespace, id), &json);
                }
            }
            self.remove_raw(&legacy_checkpoint);
        }
        Some(pointer)
    }

    /// The session `scope`'s pointer names, if it holds a well-formed id.
    pub fn last_session(&mut self, scope: Option<&str>) -> Option<String> {
        match self.last_pointer(scope) {
            Pointer::Session(id) => Some(id),
            Pointer::Absent | Pointer::Corrupt => None,
        }
    }

    /// Points every pointer `session_id` was opened under at it (the plain one if none).
    pub fn set_last_session(&mut self, session_id: &str) {
        for key in self.pointer_keys_of(session_id) {
            if self.get_raw(&key).as_deref() != Some(session_id) {
                self.set_raw(&key, session_id);
            }
        }
    }

    /// Removes `scope`'s pointer whatever it says (it was corrupt).
    pub fn clear_pointer(&mut self, scope: Option<&str>) {
        let key = self.pointer_key(scope);
        self.remove_raw(&key);
    }

    /// Removes the pointers `session_id` was opened under (the plain one if none) where they
    /// still name it (stale: the server no longer has it).
    pub fn clear_last_session(&mut self, session_id: &str) {
        let keys = self.pointer_keys_of(session_id);
        self.clear_pointers_naming(session_id, keys);
    }

    fn clear_pointers_naming(&mut self, session_id: &str, keys: Vec<String>) {
        for key in keys {
            if self.get_raw(&key).as_deref() == Some(session_id) {
                self.remove_raw(&key);
            }
        }
    }

    /// Removes a session's checkpoint (and its index entry).
    pub fn remove(&mut self, session_id: &str) {
        self.remove_raw(&keys::checkpoint_key(&self.namespace, session_id));
        self.indexed.retain(|(s, _)| s != session_id);
        let key = keys::index_key(&self.namespace);
        if let Some(raw) = self.get_raw(&key) {
            if let Some(mut index) = Index::parse(&raw) {
                if index.remove(session_id) {
                    self.set_raw(&key, &to_string(&index));
                }
            }
        }
    }

    /// `client.forget(id)`: removes the session's checkpoint and every pointer naming it that
    /// this store can name — `scope`'s, the plain one, and those it was opened under here.
    pub fn forget(&mut self, session_id: &str, scope: Option<&str>) {
        self.remove(session_id);
        let mut keys = self.pointer_keys_of(session_id);
        for key in [self.pointer_key(scope), self.pointer_key(None)] {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        self.clear_pointers_naming(session_id, keys);
        self.opened.retain(|(s, _)| s != session_id);
    }
}
