//! forgestream-web: the browser bindings of forgestream.
//!
//! The only crate that touches `web-sys` / `js-sys`: it drives `fetch` streams, `EventSource`,
//! timers and storage for the sans-IO core, and exports the client to JavaScript through
//! wasm-bindgen (wrapped by the TS layer in `pkg/src`).
//!
//! - [`client`]: the exported `WasmClient` / `WasmSession` classes.
//! - [`exec`] / [`ingest`] / [`run`]: carrying out the recovery machine's commands; the hot path.
//! - [`transport`]: `fetch` + `ReadableStream` and `EventSource`.
//! - [`storage`]: the guarded checkpoint store.
//! - [`snapshot`]: the view crossing into JS, change by change.
use wasm_bindgen::prelude::*;

pub mod api;
pub mod client;
pub mod error;
mod exec;
mod headers;
mod ingest;
pub mod js;
mod network;
pub mod options;
mod run;
mod session;
pub(crate) mod snapshot;
pub mod storage;
pub mod transport;

/// The crate version (`CARGO_PKG_VERSION`), e.g. `"0.1.0"`; lets the TS layer check it loaded the
/// wasm build it was compiled against.
#[wasm_bindgen]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").into()
}
