//! The resume checkpoint store: `localStorage` / `sessionStorage` / memory, guarded.
//!
//! Only IDs and the cursor are written — never tokens, never message bodies (DESIGN.md
//! "Persistence"). Writes are monotonic: a lower `seq` for the same turn never overwrites a higher
//! one, also when another tab wrote it. Any storage exception (quota exceeded, storage disabled,
//! a security error in a sandboxed frame) or a corrupt / foreign / old-schema record degrades to
//! memory with one reported warning; streaming is never interrupted by storage.
use std::cell::RefCell;

use serde::{Deserialize, Serialize};

/// Schema version of [`Checkpoint`]; records with another `v` are ignored (and reported).
pub const SCHEMA_VERSION: u32 = 1;
/// Default key namespace: records live under `forgestream:v1:session:<id>` and
/// `forgestream:v1:last`.
pub const DEFAULT_NAMESPACE: &str = "forgestream";

/// One session's resume record: `{v, sessionId, turnId, seq, savedAt}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    pub v: u32,
    pub session_id: String,
    /// The turn being followed; `None` once it settled.
    pub turn_id: Option<String>,
    /// Last processed sequence number of `turn_id` (0 = none yet).
    pub seq: u64,
    /// Wall-clock ms since the Unix epoch of the write.
    pub saved_at: u64,
}

/// Which Web Storage area backs the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageKind {
    Local,
    Session,
    Memory,
}

impl StorageKind {
    /// Parses the `storage` client option (`"local"` default, `"session"`, `"memory"`).
    pub fn parse(name: Option<&str>) -> Self {
        match name {
            Some("session") => StorageKind::Session,
            Some("memory") => StorageKind::Memory,
            _ => StorageKind::Local,
        }
    }
}

/// A warning about storage, reported once per cause to the app's warning hook.
#[derive(Clone, Debug, PartialEq)]
pub struct StorageWarning {
    /// `"unavailable" | "write-failed" | "corrupt" | "old-schema"`.
    pub kind: &'static str,
    pub message: String,
}

/// The guarded store. Falls back to an in-memory map after the first failure.
pub struct CheckpointStore {
    kind: StorageKind,
    /// `<namespace>:v1:session:`.
    key_prefix: String,
    /// `<namespace>:v1:last`.
    last_key: String,
    degraded: bool,
    /// The fallback store: `(key, value)` pairs (a handful of sessions per page; a plain list
    /// keeps another `BTreeMap` instantiation out of the wasm).
    memory: RefCell<Vec<(String, String)>>,
    warnings: RefCell<Vec<StorageWarning>>,
}

fn web_storage(kind: StorageKind) -> Result<Option<web_sys::Storage>, String> {
    let window = match web_sys::window() {
        Some(w) => w,
        None => return Ok(None),
    };
    let result = match kind {
        StorageKind::Local => window.local_storage(),
        StorageKind::Session => window.session_storage(),
        StorageKind::Memory => return Ok(None),
    };
    result.map_err(|e| {
        e.as_string()
            .or_else(|| {
                js_sys::Reflect::get(&e, &"message".into())
                    .ok()
                    .and_then(|m| m.as_string())
            })
            .unwrap_or_else(|| "storage access threw".into())
    })
}

impl CheckpointStore {
    /// A store over `kind` with keys under `namespace` (several apps or backends on one origin
    /// keep separate checkpoints). Nothing is touched until the first read or write.
    pub fn new(kind: StorageKind, namespace: &str) -> Self {
        CheckpointStore {
            kind,
            key_prefix: format!("{namespace}:v1:session:"),
            last_key: format!("{namespace}:v1:last"),
            degraded: kind == StorageKind::Memory,
            memory: RefCell::new(Vec::new()),
            warnings: RefCell::new(Vec::new()),
        }
    }

    /// True once the store fell back to memory (or was configured so).
    pub fn is_memory(&self) -> bool {
        self.degraded
    }

    /// Warnings raised since the last call (each cause once).
    pub fn take_warnings(&self) -> Vec<StorageWarning> {
        core::mem::take(&mut *self.warnings.borrow_mut())
    }

    fn warn(&self, kind: &'static str, message: String) {
        let mut warnings = self.warnings.borrow_mut();
        if !warnings.iter().any(|w| w.kind == kind) {
            warnings.push(StorageWarning { kind, message });
        }
    }

    fn degrade(&mut self, kind: &'static str, message: String) {
        self.degraded = true;
        self.warn(kind, message);
    }

    fn get_raw(&mut self, key: &str) -> Option<String> {
        if !self.degraded {
            match web_storage(self.kind) {
                Ok(Some(storage)) => match storage.get_item(key) {
                    Ok(value) => return value,
                    Err(_) => {
                        self.degrade("unavailable", "storage read threw; using memory".into())
                    }
                },
                Ok(None) => self.degrade("unavailable", "no Web Storage here; using memory".into()),
                Err(msg) => self.degrade("unavailable", msg),
            }
        }
        self.memory
            .borrow()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    fn set_raw(&mut self, key: &str, value: &str) {
        if !self.degraded {
            match web_storage(self.kind) {
                Ok(Some(storage)) => match storage.set_item(key, value) {
                    Ok(()) => return,
                    Err(_) => self.degrade(
                        "write-failed",
                        "storage write threw (quota exceeded or disabled); using memory".into(),
                    ),
                },
                Ok(None) => self.degrade("unavailable", "no Web Storage here; using memory".into()),
                Err(msg) => self.degrade("unavailable", msg),
            }
        }
        let mut memory = self.memory.borrow_mut();
        match memory.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => *v = value.into(),
            None => memory.push((key.into(), value.into())),
        }
    }

    fn remove_raw(&mut self, key: &str) {
        if !self.degraded {
            if let Ok(Some(storage)) = web_storage(self.kind) {
                let _ = storage.remove_item(key);
            }
        }
        self.memory.borrow_mut().retain(|(k, _)| k != key);
    }

    /// Reads a session's checkpoint. A corrupt, foreign or old-schema record reads as `None`
    /// (with a warning) — it is never trusted and never throws.
    pub fn load(&mut self, session_id: &str) -> Option<Checkpoint> {
        let raw = self.get_raw(&[self.key_prefix.as_str(), session_id].concat())?;
        self.parse_record(&raw, Some(session_id))
    }

    fn parse_record(&self, raw: &str, session_id: Option<&str>) -> Option<Checkpoint> {
        match serde_json::from_str::<Checkpoint>(raw) {
            Ok(record) if record.v != SCHEMA_VERSION => {
                self.warn(
                    "old-schema",
                    format!("ignoring a checkpoint of schema v{}", record.v),
                );
                None
            }
            Ok(record) if session_id.is_some_and(|s| s != record.session_id) => {
                self.warn(
                    "corrupt",
                    "ignoring a checkpoint stored under another session's key".into(),
                );
                None
            }
            Ok(record) => Some(record),
            Err(e) => {
                self.warn("corrupt", format!("ignoring an unreadable checkpoint: {e}"));
                None
            }
        }
    }

    /// Writes a checkpoint unless the stored one is for the same turn with a higher or equal
    /// `seq` (monotonic across tabs). Also points "last active session" at it. Returns whether the
    /// record was written.
    pub fn save(&mut self, record: &Checkpoint) -> bool {
        let key = [self.key_prefix.as_str(), record.session_id.as_str()].concat();
        if let Some(existing) = self.load(&record.session_id) {
            if existing.turn_id == record.turn_id
                && existing.seq >= record.seq
                && record.turn_id.is_some()
            {
                return false;
            }
        }
        let Ok(json) = serde_json::to_string(record) else {
            return false;
        };
        self.set_raw(&key, &json);
        let last_key = self.last_key.clone();
        self.set_raw(&last_key, &record.session_id);
        true
    }

    /// The session that was active last, if any.
    pub fn last_session(&mut self) -> Option<String> {
        let last_key = self.last_key.clone();
        self.get_raw(&last_key)
            .filter(|s| !s.is_empty() && s.len() < 512)
    }

    /// Forgets a session's checkpoint (and the last-session pointer if it points at it).
    pub fn clear(&mut self, session_id: &str) {
        let key = [self.key_prefix.as_str(), session_id].concat();
        self.remove_raw(&key);
        if self.last_session().as_deref() == Some(session_id) {
            let last_key = self.last_key.clone();
            self.remove_raw(&last_key);
        }
    }
}
