//! `session.exportEvents()`: the session's persisted, merged events as the server lists them
//! (PROTOCOL §4 session timeline), typed by the protocol's event union (§5). The paging is the
//! core's ([`forgestream_core::session::ExportEvents`]); this file only sends its requests.
use std::rc::Rc;

use forgestream_core::session::{ErrorCode, ExportEvents, ExportStep, SessionError};
use forgestream_core::wire::SessionEventItem;
use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::client::WasmSession;
use crate::error::to_js;
use crate::executor::ClientShared;
use crate::snapshot;

#[wasm_bindgen]
impl WasmSession {
    /// Every page of `GET /sessions/{sid}/events`, oldest first: the events the server persisted
    /// on the active branch (a running turn's stored events included, as the server lists them).
    /// Rejects with a `ForgestreamError`: `aborted` on a closed handle, the server's error
    /// (`not_found` for a session it no longer has), `network`, `invalid_response`.
    #[wasm_bindgen(js_name = exportEvents, unchecked_return_type = "Promise<SessionEventItem[]>")]
    pub fn export_events(&self) -> Promise {
        let (shared, sid) = match self.engine() {
            Ok(engine) => (
                engine.client.clone(),
                engine.session.borrow().id().to_string(),
            ),
            Err(e) => return Promise::reject(&to_js(&e)),
        };
        future_to_promise(async move {
            let events = export(&shared, &sid).await.map_err(|e| to_js(&e))?;
            snapshot::json_to_js(&events).map_err(|e| to_js(&e))
        })
    }
}

/// Sends the core's requests until it has every page.
async fn export(
    shared: &Rc<ClientShared>,
    sid: &str,
) -> Result<Vec<SessionEventItem>, SessionError> {
    let api = &shared.options.config.api;
    let credentials = shared.options.config.credentials.as_str();
    let (mut export, mut request) = ExportEvents::start(api, sid);
    loop {
        // Resolved per page, like the engine's requests (a provider may refresh a token).
        let headers = crate::headers::resolve(shared.options.headers.as_ref()).await?;
        let abort = web_sys::AbortController::new()
            .map_err(|_| SessionError::new(ErrorCode::Internal, "AbortController unavailable"))?;
        let response =
            crate::transport::http::send(&request, &headers, credentials, &abort.signal())
                .await
                .map_err(|e| e.into_session_error())?;
        match export.page(api, response.status, &response.body)? {
            ExportStep::Next(next) => request = next,
            ExportStep::Done(events) => return Ok(events),
        }
    }
}
