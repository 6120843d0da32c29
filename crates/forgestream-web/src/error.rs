//! The one error type of the JS surface. Thrown to JS as a real `Error` whose `name` is
//! `"ForgestreamError"` with a stable `code`, a `retryable` flag and, for HTTP failures, `status`
//! and the server's error body `message`; the TS layer re-wraps it as its `ForgestreamError` class.
use wasm_bindgen::JsValue;

/// Stable error codes (DESIGN.md "Errors"). Apps branch on these, never on messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// The request never got a response (offline, DNS, CORS, reset).
    Network,
    /// The server answered with an error status not covered below.
    Http,
    /// 401, also after the header provider was asked again.
    Auth,
    /// 403.
    Forbidden,
    /// 404.
    NotFound,
    /// 409 (e.g. gateway listings of a running turn).
    Conflict,
    /// The stream or a body broke the protocol (malformed JSON, oversize frame, cap exceeded).
    Protocol,
    /// `send` while a turn runs, without `{ interrupt: true }`.
    TurnRunning,
    /// A response was not what the protocol promises (missing fields, wrong shape), or a
    /// continuation the server would refuse (validated client-side, PROTOCOL §7).
    InvalidResponse,
    /// Storage threw or held a corrupt record (reported as a warning, never fatal to streaming).
    Storage,
    /// The operation was stopped by `disconnect()` / `cancel()`.
    Aborted,
    /// The request itself is invalid (a bad option, an answer for a call that is not pending).
    InvalidInput,
}

impl ErrorCode {
    /// The wire string of the code.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Network => "network",
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
        }
    }

    /// The code for an HTTP error status.
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

/// An SDK error before it crosses into JS.
#[derive(Clone, Debug, PartialEq)]
pub struct SdkError {
    pub code: ErrorCode,
    pub message: String,
    /// Whether trying again later may succeed.
    pub retryable: bool,
    /// HTTP status, when the server answered.
    pub status: Option<u16>,
}

impl SdkError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        let retryable = matches!(code, ErrorCode::Network);
        SdkError {
            code,
            message: message.into(),
            retryable,
            status: None,
        }
    }

    /// An error for an HTTP status, with the message from the server's error body if it had one.
    pub fn http(status: u16, body: &str) -> Self {
        let server_message = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|v| v.get("error")?.get("message")?.as_str().map(String::from));
        let message = match server_message {
            Some(m) => format!("HTTP {status}: {m}"),
            None => format!("HTTP {status}"),
        };
        SdkError {
            code: ErrorCode::for_status(status),
            message,
            retryable: status == 408 || status == 429 || status >= 500,
            status: Some(status),
        }
    }
}

impl From<SdkError> for JsValue {
    fn from(e: SdkError) -> JsValue {
        let error = js_sys::Error::new(&e.message);
        error.set_name("ForgestreamError");
        let set = |k: &str, v: JsValue| {
            let _ = js_sys::Reflect::set(&error, &JsValue::from_str(k), &v);
        };
        set("code", JsValue::from_str(e.code.as_str()));
        set("retryable", JsValue::from_bool(e.retryable));
        if let Some(status) = e.status {
            set("status", JsValue::from_f64(f64::from(status)));
        }
        error.into()
    }
}
