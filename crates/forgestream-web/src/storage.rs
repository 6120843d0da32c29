//! The platform half of the checkpoint store: `localStorage` / `sessionStorage` calls and what
//! they threw. Every decision (memory fallback, warnings, record checks, monotonic writes,
//! scoped pointers, expiry) is the core's [`forgestream_core::session::checkpoint::CheckpointStore`].
pub use forgestream_core::session::checkpoint::SCHEMA_VERSION;
use forgestream_core::session::checkpoint::{self, StorageBackend, StorageFault};
pub use forgestream_core::session::Checkpoint;

pub use forgestream_core::session::{StorageKind, DEFAULT_NAMESPACE};

/// The guarded store over this page's Web Storage.
pub type CheckpointStore = checkpoint::CheckpointStore<WebStorage>;

/// A store over `kind` with keys under `namespace`, for a client of base URL `base`.
pub fn checkpoint_store(kind: StorageKind, namespace: &str, base: &str) -> CheckpointStore {
    CheckpointStore::new(WebStorage { kind }, kind, namespace, base)
}

/// `window.localStorage` or `window.sessionStorage`, looked up on each call (a sandboxed frame
/// may throw on access).
pub struct WebStorage {
    kind: StorageKind,
}

impl WebStorage {
    fn storage(&self) -> Result<web_sys::Storage, StorageFault> {
        let window = web_sys::window()
            .ok_or_else(|| StorageFault::Unavailable("no Web Storage here; using memory".into()))?;
        let result = match self.kind {
            StorageKind::Local => window.local_storage(),
            StorageKind::Session => window.session_storage(),
            StorageKind::Memory => Ok(None),
        };
        match result {
            Ok(Some(storage)) => Ok(storage),
            Ok(None) => Err(StorageFault::Unavailable(
                "no Web Storage here; using memory".into(),
            )),
            Err(e) => Err(StorageFault::Unavailable(
                e.as_string()
                    .or_else(|| {
                        js_sys::Reflect::get(&e, &"message".into())
                            .ok()
                            .and_then(|m| m.as_string())
                    })
                    .unwrap_or_else(|| "storage access threw".into()),
            )),
        }
    }
}

impl StorageBackend for WebStorage {
    fn get_item(&mut self, key: &str) -> Result<Option<String>, StorageFault> {
        self.storage()?
            .get_item(key)
            .map_err(|_| StorageFault::Threw)
    }

    fn set_item(&mut self, key: &str, value: &str) -> Result<(), StorageFault> {
        self.storage()?
            .set_item(key, value)
            .map_err(|_| StorageFault::Threw)
    }

    fn remove_item(&mut self, key: &str) -> Result<(), StorageFault> {
        self.storage()?
            .remove_item(key)
            .map_err(|_| StorageFault::Threw)
    }
}
