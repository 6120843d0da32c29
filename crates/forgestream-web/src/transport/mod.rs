//! Transports feeding the engine: `fetch` + `ReadableStream` for live streams (default; any
//! method, custom headers), gloo-net for whole-body requests, and `EventSource` (GET with
//! cookies).
pub mod eventsource;
pub mod failure;
pub mod fetch;
pub mod http;

pub use forgestream_core::session::Transport as TransportKind;

/// Parses the `transport` option: `"fetch"` (default) or `"eventsource"`.
pub fn parse_transport(name: Option<&str>) -> Result<TransportKind, String> {
    match name {
        None | Some("fetch") => Ok(TransportKind::Fetch),
        Some("eventsource") => Ok(TransportKind::EventSource),
        Some(other) => Err(format!(
            "unknown transport {other:?} (expected \"fetch\" or \"eventsource\")"
        )),
    }
}
