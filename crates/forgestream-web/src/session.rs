//! A session's state in the browser: the core's `SessionView`, the active turn's run, the
//! change log the TS layer drains, and the JS-facing `WasmSession` class.
use std::cell::RefCell;
use std::rc::{Rc, Weak};

use forgestream_core::reduce::{ChangeSet, ReducerConfig, SessionView};
use forgestream_core::resume::ConnectionStatus;
use wasm_bindgen::prelude::*;

use crate::error::SdkError;
use crate::options::ClientOptions;
use crate::run::TurnRun;
use crate::storage::CheckpointStore;

/// State shared by every session of one client.
pub struct ClientShared {
    pub options: ClientOptions,
    pub store: RefCell<CheckpointStore>,
}

/// One session's mutable state. Lives in an `Rc<RefCell<_>>`; no borrow is ever held across an
/// `await` or while calling app JavaScript (listeners run after the borrow is released).
pub struct SessionState {
    pub client: Rc<ClientShared>,
    pub id: String,
    pub view: SessionView,
    pub run: Option<TurnRun>,
    pub next_run_id: u64,
    /// Changes since the TS layer last drained them.
    pub changes: ChangeSet,
    /// How many times the changes were drained (`snapshot()` / `takeChanges()`).
    pub drains: u64,
    /// Something changed that the listener has not been told about yet.
    pub dirty: bool,
    /// Live frames already asked for a notification since the last drain (cleared by
    /// `snapshot()` / `takeChanges()`); later frames before that drain need none.
    pub notified: bool,
    /// `() => void`, set by the TS layer; it coalesces notifications per animation frame.
    pub listener: Option<js_sys::Function>,
    /// The last error the active run failed with (shown with the `failed` badge).
    pub last_error: Option<SdkError>,
    /// Warnings not yet drained (protocol oddities, storage fallbacks), as `{code, message}`.
    pub warnings: Vec<(String, String)>,
    /// Persistent timer callback and the pending `setTimeout` handle with its deadline (ms).
    pub timer: Option<(u64, JsValue)>,
    pub timer_callback: Option<Closure<dyn FnMut()>>,
    /// Received frames, newest last, bounded (only with the `inspect` option).
    pub event_log: std::collections::VecDeque<LoggedFrame>,
    /// How many frames were ever logged (the log keeps the last [`EVENT_LOG_CAPACITY`]).
    pub event_log_total: u64,
    /// `online` / `offline` listeners, attached while a run is active.
    pub network_listeners: Option<NetworkListeners>,
}

/// One received frame as the inspector shows it.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedFrame {
    pub turn_id: String,
    pub sequence_number: Option<u64>,
    pub event_type: String,
    pub thread_id: Option<String>,
    pub id: Option<String>,
    /// Size of the frame's `data`, bytes.
    pub bytes: usize,
    /// Wall-clock ms when it was applied.
    pub at_ms: u64,
}

/// How many frames the inspector log keeps.
pub const EVENT_LOG_CAPACITY: usize = 2000;

/// The `online` and `offline` window listeners of a session.
pub type NetworkListeners = (Closure<dyn FnMut()>, Closure<dyn FnMut()>);

/// A shared handle to a session's state.
pub type SessionRc = Rc<RefCell<SessionState>>;
/// A weak handle, captured by callbacks so they never keep a session alive.
pub type SessionWeak = Weak<RefCell<SessionState>>;

impl SessionState {
    pub fn new(client: Rc<ClientShared>, id: String) -> Self {
        SessionState {
            view: SessionView::new(&id, ReducerConfig::default()),
            client,
            id,
            run: None,
            next_run_id: 1,
            changes: ChangeSet::default(),
            drains: 0,
            dirty: false,
            notified: false,
            listener: None,
            last_error: None,
            warnings: Vec::new(),
            timer: None,
            timer_callback: None,
            network_listeners: None,
            event_log: std::collections::VecDeque::new(),
            event_log_total: 0,
        }
    }

    /// Records a change set for the next drain.
    pub fn record(&mut self, changes: ChangeSet) {
        if !changes.is_empty() {
            self.changes.merge(changes);
            self.dirty = true;
        }
    }

    /// Records a warning for the app's `onWarning` hook.
    pub fn warn(&mut self, code: &str, message: String) {
        if self.warnings.len() < 1000 {
            self.warnings.push((code.into(), message));
        }
        self.dirty = true;
    }

    /// The connection badge of the active run (`idle` without one).
    pub fn status(&self) -> Option<&ConnectionStatus> {
        self.run.as_ref().map(|r| &r.status)
    }
}
