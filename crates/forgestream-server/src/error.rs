//! JSON error responses: `{"error":{"message":…}}` with an HTTP status (PROTOCOL.md §2).
//! Errors before a stream are always plain JSON, never SSE.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

/// An error answered as JSON before any stream byte.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status (400, 401, 404, 409, 412, 413, 422, 429, 5xx).
    pub status: StatusCode,
    /// The human-readable `error.message`.
    pub message: String,
    /// Seconds for a `Retry-After` header (used by injected 429/503).
    pub retry_after_s: Option<u64>,
}

impl ApiError {
    /// An error with `status` and `message`.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after_s: None,
        }
    }
    /// 400 Bad Request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    /// 404 Not Found.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
    /// 422 Unprocessable Entity (continuation rules, PROTOCOL.md §7).
    pub fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }
    /// 500 for store failures; the message names the operation, not SQL details.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
    /// 412 for a live stream that no longer exists, with TrueForge's exact message text.
    pub fn stream_gone(session_id: &str, turn_id: &str) -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            format!(
                "Cannot read from stream, stream does not exist anymore: agent:turn:default:{session_id}:{turn_id}:stream"
            ),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(json!({"error": {"message": self.message}})),
        )
            .into_response();
        if let Some(seconds) = self.retry_after_s {
            if let Ok(value) = seconds.to_string().parse() {
                response.headers_mut().insert("retry-after", value);
            }
        }
        response
    }
}

impl From<rusqlite::Error> for ApiError {
    fn from(err: rusqlite::Error) -> Self {
        tracing::error!("store error: {err}");
        ApiError::internal("Internal server error (store)")
    }
}
