//! The resume checkpoint store: `localStorage` / `sessionStorage` / memory, guarded.
//!
//! Only IDs and the cursor are written — never tokens, never message bodies (DESIGN.md
//! "Persistence"). Writes are monotonic: a lower `seq` for the same turn never overwrites a higher
//! one, also when another tab wrote it. Any storage exception (quota exceeded, storage disabled,
//! a security error in a sandboxed frame) or a corrupt / foreign / old-schema record degrades to
//! memory with one reported warning; streaming is never interrupted by storage.
use std::cell::RefCell;

pub use forgestream_core::session::checkpoint::SCHEMA_VERSION;
use forgestream_core::session::checkpoint::{self, Pointer};
pub use forgestream_core::session::Checkpoint;

pub use forgestream_core::session::{StorageKind, DEFAULT_NAMESPACE};

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
        self.parse_record(&raw, session_id)
    }

    fn parse_record(&self, raw: &str, session_id: &str) -> Option<Checkpoint> {
        checkpoint::parse_checkpoint(raw, session_id)
            .map_err(|issue| {
                let (kind, message) = issue.warning();
                self.warn(kind, message.into());
            })
            .ok()
    }

    /// Writes a checkpoint unless the stored one is for the same turn with a higher or equal
    /// `seq` (monotonic across tabs: another tab may have written since this engine last did),
    /// and points "last active session" at it. Returns whether the record was written.
    pub fn save(&mut self, record: &Checkpoint) -> bool {
        let key = [self.key_prefix.as_str(), record.session_id.as_str()].concat();
        if !checkpoint::supersedes(record, self.load(&record.session_id).as_ref()) {
            return false;
        }
        let Ok(json) = serde_json::to_string(record) else {
            return false;
        };
        self.set_raw(&key, &json);
        // A session writing its checkpoint is the active one (also for another tab's reload).
        self.set_last_session(&record.session_id);
        true
    }

    /// What the last-session pointer says (checked: garbage is [`Pointer::Corrupt`]).
    pub fn last_pointer(&mut self) -> Pointer {
        let last_key = self.last_key.clone();
        checkpoint::parse_pointer(self.get_raw(&last_key).as_deref())
    }

    /// The session that was active last, if the pointer holds a well-formed id.
    pub fn last_session(&mut self) -> Option<String> {
        match self.last_pointer() {
            Pointer::Session(id) => Some(id),
            Pointer::Absent | Pointer::Corrupt => None,
        }
    }

    /// Points "last active session" at `session_id`.
    pub fn set_last_session(&mut self, session_id: &str) {
        let last_key = self.last_key.clone();
        self.set_raw(&last_key, session_id);
    }

    /// Removes the pointer: always with `None`, else only if it names `session_id`.
    pub fn clear_last_session(&mut self, session_id: Option<&str>) {
        let last_key = self.last_key.clone();
        let stored = self.get_raw(&last_key);
        if session_id.is_none() || stored.as_deref() == session_id {
            self.remove_raw(&last_key);
        }
    }

    /// Forgets a session's checkpoint.
    pub fn remove(&mut self, session_id: &str) {
        let key = [self.key_prefix.as_str(), session_id].concat();
        self.remove_raw(&key);
    }

    /// Forgets a session's checkpoint and the pointer if it points at it.
    pub fn clear(&mut self, session_id: &str) {
        self.remove(session_id);
        self.clear_last_session(Some(session_id));
    }
}
