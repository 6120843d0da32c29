//! The live stream's body, handed to the engine chunk by chunk as it arrives, never waiting on
//! rendering (`fetch/body.rs`); the request itself goes out through gloo-net ([`super::http`]).
mod body;
pub use body::{pipe, SLICE_BYTES};

/// Why a request produced no usable response.
#[derive(Debug, Clone)]
pub enum FetchError {
    /// `fetch` rejected (offline, DNS, CORS, connection reset) or the body stream errored.
    Network(String),
    /// The request was aborted through its `AbortController`.
    Aborted,
    /// The environment refused to build the request (bad URL, bad header name).
    InvalidRequest(String),
}

impl FetchError {
    /// The app-facing error of a request the SDK makes outside the engine (`createSession`):
    /// `network` (retryable) with the classified message, `aborted`, or `invalid-input` for a
    /// request the environment refused to build (bad base URL or header).
    pub fn into_session_error(self) -> forgestream_core::session::SessionError {
        use forgestream_core::session::{ErrorCode, SessionError};
        match self {
            FetchError::Network(message) => SessionError::new(ErrorCode::Network, message),
            FetchError::Aborted => SessionError::new(ErrorCode::Aborted, "the request was aborted"),
            FetchError::InvalidRequest(message) => {
                SessionError::new(ErrorCode::InvalidInput, message)
            }
        }
    }
}
