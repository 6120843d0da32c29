//! The session engine's one error type: a stable code (DESIGN.md "Errors"), a message, the
//! `retryable` flag and the HTTP status when the server answered. Every code comes from a typed
//! source (an HTTP status, a [`ConnectionError`], a reducer or respond error), never from a
//! string.
use alloc::format;
use alloc::string::{String, ToString};

use serde::Serialize;

use crate::resume::ConnectionError;

/// Stable error codes. Apps branch on these, never on messages. Serialised (and declared to
/// TypeScript) in kebab-case, the spelling of [`ErrorCode::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "kebab-case")]
pub enum ErrorCode {
    /// The request never got a response (offline, DNS, CORS, reset), or recovery gave up.
    Network,
    /// Creating a turn failed in a way that leaves open whether the server created it
    /// (PROTOCOL.md §8, problem 3: the `POST` got no answer and the listings did not settle
    /// it). Do not send the message again blindly: reload the history (or `refresh()`) to find
    /// out. Retryable (trying again checks, it never re-sends).
    OutcomeUnknown,
    /// The server answered with an error status not covered below.
    Http,
    /// 401, also after the header provider was asked again; or the provider failed.
    Auth,
    /// 403.
    Forbidden,
    /// 404.
    NotFound,
    /// 409 (e.g. gateway listings of a running turn).
    Conflict,
    /// The stream or a body broke the protocol (malformed JSON, oversize frame, cap exceeded).
    Protocol,
    /// `send` / `respond` while a turn runs, without `{ interrupt: true }`.
    TurnRunning,
    /// A response was not what the protocol promises (missing fields, wrong shape).
    InvalidResponse,
    /// Storage threw or held a corrupt record (reported as a warning, never fatal).
    Storage,
    /// The operation was stopped (`disconnect()`, `close()`, an interrupting send).
    Aborted,
    /// The request itself is invalid (a bad option, an answer for a call that is not pending).
    InvalidInput,
    /// A fault inside the SDK (an exception nobody expected). Not retryable.
    Internal,
}

impl ErrorCode {
    /// The wire string of the code (`"network"`, `"not-found"`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Network => "network",
            ErrorCode::OutcomeUnknown => "outcome-unknown",
            ErrorCode::Http => "http",
            ErrorCode::Auth => "auth",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not-found",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Protocol => "protocol",
            ErrorCode::TurnRunning => "turn-running",
            ErrorCode::InvalidResponse => "invalid-response",
            ErrorCode::Storage => "storage",
            ErrorCode::Aborted => "aborted",
            ErrorCode::InvalidInput => "invalid-input",
            ErrorCode::Internal => "internal",
        }
    }

    /// The code of an HTTP error status.
    pub fn for_status(status: u16) -> Self {
        match status {
            401 => ErrorCode::Auth,
            403 => ErrorCode::Forbidden,
            404 => ErrorCode::NotFound,
            409 => ErrorCode::Conflict,
            _ => ErrorCode::Http,
        }
    }
}

/// An error of a session command or of the connection (shown with the `failed` badge). Crosses
/// to JS as `{code, message, retryable, status?}` (the TS layer makes it a `ForgestreamError`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
pub struct SessionError {
    /// Stable code.
    pub code: ErrorCode,
    /// Human-readable; never parsed.
    pub message: String,
    /// Whether trying again later may succeed.
    pub retryable: bool,
    /// HTTP status, when the server answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub status: Option<u16>,
}

impl SessionError {
    /// An error with `code`; only `network` errors are retryable by default.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        SessionError {
            code,
            message: message.into(),
            retryable: matches!(code, ErrorCode::Network),
            status: None,
        }
    }

    /// An error for an HTTP status, with the message of the server's error body
    /// (`{"error":{"message"}}`) when it has one. 408, 429 and 5xx are retryable.
    pub fn http(status: u16, body: &[u8]) -> Self {
        // Through `parse_json` (from the text, not `from_slice`): one serde_json reader in the wasm.
        let server_message = super::requests::parse_json::<crate::wire::ErrorBody>(body)
            .ok()
            .map(|b| b.error.message)
            .filter(|m| !m.is_empty());
        let message = match server_message {
            Some(m) => format!("HTTP {status}: {m}"),
            None => format!("HTTP {status}"),
        };
        SessionError {
            code: ErrorCode::for_status(status),
            message,
            retryable: status == 408 || status == 429 || status >= 500,
            status: Some(status),
        }
    }

    /// The error a connection stopped with. `cause` (the last request's own error) is kept: as
    /// the error itself when its code agrees, else in the message.
    pub fn connection(error: ConnectionError, cause: Option<&SessionError>) -> Self {
        let code = match error {
            ConnectionError::Auth => ErrorCode::Auth,
            ConnectionError::Forbidden => ErrorCode::Forbidden,
            ConnectionError::NotFound => ErrorCode::NotFound,
            ConnectionError::Http(409) => ErrorCode::Conflict,
            ConnectionError::BadRequest | ConnectionError::Http(_) => ErrorCode::Http,
            ConnectionError::InvalidResponse => ErrorCode::InvalidResponse,
            ConnectionError::CreateOutcomeUnknown => ErrorCode::OutcomeUnknown,
            ConnectionError::TooManyAttempts | ConnectionError::TurnNotCreated => {
                ErrorCode::Network
            }
        };
        match cause {
            // A create the server showed it never made says so (sending again is safe), not
            // only its last request's failure (a re-check: "Not sent: the request failed").
            Some(c) if c.code == code && error != ConnectionError::TurnNotCreated => c.clone(),
            cause => SessionError {
                code,
                message: match cause {
                    Some(c) => format!("{error} (last error: {})", c.message),
                    None => error.to_string(),
                },
                retryable: error.is_retryable(),
                // A connection that gave up after an HTTP answer (a create refused with 503, the
                // attempts spent on 5xx) keeps that answer's status: a badge read "failed
                // network" over a message that said HTTP 503 (a trial).
                status: match (error, cause) {
                    (ConnectionError::Http(s), _) => Some(s),
                    (
                        ConnectionError::TurnNotCreated | ConnectionError::TooManyAttempts,
                        Some(c),
                    ) => c.status,
                    _ => None,
                },
            },
        }
    }
}

impl core::fmt::Display for SessionError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SessionError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_create_outcome_has_its_own_code() {
        let cause = SessionError::new(ErrorCode::Network, "fetch failed");
        let e = SessionError::connection(ConnectionError::CreateOutcomeUnknown, Some(&cause));
        assert_eq!(e.code, ErrorCode::OutcomeUnknown);
        assert_eq!(e.code.as_str(), "outcome-unknown");
        assert!(e.retryable);
        assert!(e.message.contains("fetch failed"), "{}", e.message);
        // A create that definitely failed stays a plain network error, saying so.
        let e = SessionError::connection(ConnectionError::TurnNotCreated, Some(&cause));
        assert_eq!(e.code, ErrorCode::Network);
        assert_eq!(e.status, None);
        assert!(
            e.message.contains("sending it again is safe"),
            "{}",
            e.message
        );
        assert!(e.message.contains("fetch failed"), "{}", e.message);
        // Refused with an HTTP status: the status stays (the message says it too).
        let refused = SessionError::http(503, br#"{"error":{"message":"busy"}}"#);
        let e = SessionError::connection(ConnectionError::TurnNotCreated, Some(&refused));
        assert_eq!(e.code, ErrorCode::Network);
        assert_eq!(e.status, Some(503));
        assert!(e.message.contains("HTTP 503"), "{}", e.message);
        assert_eq!(
            serde_json::to_string(&ErrorCode::OutcomeUnknown).unwrap(),
            "\"outcome-unknown\""
        );
    }
}
