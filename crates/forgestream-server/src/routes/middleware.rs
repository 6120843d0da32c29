//! Cross-cutting layers: bearer-token check, request log, CSP on HTML.

use crate::error::ApiError;
use crate::runtime::Runtime;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Instant;

/// With `--token T`, API requests need `Authorization: Bearer T` (401 JSON otherwise).
/// CORS preflights pass: browsers send them without credentials.
pub async fn require_token(
    State(rt): State<Arc<Runtime>>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(token) = &rt.config.token {
        if request.method() != axum::http::Method::OPTIONS {
            let sent = request
                .headers()
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "));
            if sent != Some(token.as_str()) {
                return ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "Unauthorized: missing or invalid bearer token",
                )
                .into_response();
            }
        }
    }
    next.run(request).await
}

/// One log line per request: method, path and query, status, ms to the response head.
pub async fn log_request(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let uri = request.uri().clone();
    let response = next.run(request).await;
    tracing::info!(
        "{} {} {} {}ms",
        method,
        uri,
        response.status().as_u16(),
        started.elapsed().as_millis()
    );
    response
}

/// The demo app loads wasm: HTML responses get `script-src 'self' 'wasm-unsafe-eval'`, unless
/// the handler set its own policy (the fake OAuth pages' stricter one).
pub async fn html_csp(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let is_html = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    if is_html
        && !response
            .headers()
            .contains_key(header::CONTENT_SECURITY_POLICY)
    {
        response.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("script-src 'self' 'wasm-unsafe-eval'"),
        );
    }
    response
}
