//! `session.exportEvents()`: the session's persisted, merged events as the server lists them
//! (PROTOCOL §4 session timeline), typed by the protocol's event union (§5). The export is the
//! engine's command ([`forgestream_core::session::Command::ExportEvents`]): its pages are the
//! engine's requests, carried out by the executor like any other, and its result crosses in
//! the executor's `settle`.
use js_sys::Promise;
use wasm_bindgen::prelude::*;

use forgestream_core::session::Command;

use crate::client::WasmSession;

#[wasm_bindgen]
impl WasmSession {
    /// Every page of `GET /sessions/{sid}/events`, oldest first: the events the server persisted
    /// on the active branch (a running turn's stored events included, as the server lists them).
    /// Rejects with a `ForgestreamError`: `aborted` on a closed handle, or when the session is
    /// closed while the export runs (its request is aborted), the server's error (`not-found`
    /// for a session it no longer has), `network`, `invalid-response`.
    #[wasm_bindgen(js_name = exportEvents, unchecked_return_type = "Promise<SessionEventItem[]>")]
    pub fn export_events(&self) -> Promise {
        self.run(Command::ExportEvents)
    }
}
