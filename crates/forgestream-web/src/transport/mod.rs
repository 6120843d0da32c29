//! Transports feeding the core: `fetch` + `ReadableStream` (default; any method, custom headers)
//! and `EventSource` (GET with cookies).
pub mod eventsource;
pub mod failure;
pub mod fetch;

/// The `transport` client option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransportKind {
    Fetch,
    EventSource,
}

impl TransportKind {
    /// Parses `"fetch"` (default) or `"eventsource"`.
    pub fn parse(name: Option<&str>) -> Result<Self, String> {
        match name {
            None | Some("fetch") => Ok(TransportKind::Fetch),
            Some("eventsource") => Ok(TransportKind::EventSource),
            Some(other) => Err(format!(
                "unknown transport {other:?} (expected \"fetch\" or \"eventsource\")"
            )),
        }
    }
}
