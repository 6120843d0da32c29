//! Transports feeding the engine: `fetch` + `ReadableStream` for live streams (default; any
//! method, custom headers), gloo-net for whole-body requests, and `EventSource` (GET with
//! cookies).
pub mod eventsource;
pub mod failure;
pub mod fetch;
pub mod http;
