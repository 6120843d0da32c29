//! forgestream-web: the browser bindings of forgestream.
//!
//! The only crate that touches `web-sys` / `js-sys` / gloo: it executes the session engine's
//! effects (`forgestream_core::session`) — `fetch` streams, gloo-net requests, `EventSource`,
//! timers and storage — and exports the client to JavaScript through wasm-bindgen (wrapped by
//! the TS layer in `pkg/src`). It makes no protocol decision.
//!
//! - [`client`]: the exported `WasmClient` / `WasmSession` classes, one engine per session.
//! - [`executor`]: performs effects, feeds results back.
//! - [`transport`]: `fetch` + `ReadableStream` (live streams), gloo-net (whole bodies),
//!   `EventSource`.
//! - [`storage`]: the guarded checkpoint store.
//! - `snapshot`: the view crossing into JS, change by change.
use wasm_bindgen::prelude::*;

pub mod client;
pub mod error;
mod events;
pub mod executor;
mod headers;
pub mod js;
pub mod options;
pub(crate) mod snapshot;
pub mod storage;
pub mod transport;

/// The crate version (`CARGO_PKG_VERSION`), e.g. `"0.1.0"`; lets the TS layer check it loaded the
/// wasm build it was compiled against.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}
