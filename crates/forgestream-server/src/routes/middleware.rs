//! Cross-cutting layers: host check, JSON content type, bearer-token check, request log, CSP
//! on HTML.

use crate::error::ApiError;
use crate::runtime::Runtime;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::time::Instant;
use subtle::ConstantTimeEq;

/// The policy of HTML responses (the demo app): wasm may be compiled, scripts only from this
/// origin, and no other origin may frame the page (its approval cards could be clickjacked).
pub const DEMO_CSP: &str = "script-src 'self' 'wasm-unsafe-eval'; frame-ancestors 'none'";

/// Refuses (403 JSON) requests whose `Host` is not this emulator ([`Runtime::host_allowed`]),
/// so that a DNS-rebinding page — its own name resolving to 127.0.0.1 — cannot use the API.
/// HTTP/2 requests without `Host` are checked by their URI authority; neither is a 400.
pub async fn check_host(State(rt): State<Arc<Runtime>>, request: Request, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| request.uri().authority().map(|a| a.as_str().to_owned()));
    match host {
        None => ApiError::bad_request("Missing Host header").into_response(),
        Some(host) if !rt.host_allowed(&host) => ApiError::new(
            StatusCode::FORBIDDEN,
            "Host not allowed (start the emulator with --allowed-host NAME to allow it)",
        )
        .into_response(),
        Some(_) => next.run(request).await,
    }
}

/// A `POST` to the API that carries a body needs `Content-Type: application/json` (parameters
/// such as `charset` allowed), else 415: `text/plain`, form and untyped bodies are what a
/// cross-origin page may send without a CORS preflight. A bodiless `POST` (e.g. `…/cancel`)
/// needs no type.
pub async fn require_json(request: Request, next: Next) -> Response {
    if request.method() == axum::http::Method::POST {
        let headers = request.headers();
        let is_json = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
        let has_body = headers.contains_key(header::CONTENT_TYPE)
            || headers.contains_key(header::TRANSFER_ENCODING)
            || headers
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim() != "0");
        if has_body && !is_json {
            return ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Unsupported media type: the body must be sent as application/json",
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// The bearer token of an `Authorization` value: scheme `Bearer` in any case (RFC 7235 §2.1),
/// one or more spaces, the token.
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start_matches(' '))
}

/// With `--token T`, API requests need `Authorization: Bearer T` (401 JSON otherwise); the
/// scheme is case-insensitive and the token compared in constant time (a timing side channel
/// would let a page on the same machine guess it byte by byte).
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
                .and_then(bearer_token);
            let matches =
                sent.is_some_and(|sent| bool::from(sent.as_bytes().ct_eq(token.as_bytes())));
            if !matches {
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

/// The demo app loads wasm: HTML responses get [`DEMO_CSP`], unless the handler set its own
/// policy (the fake OAuth pages' stricter one).
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
            HeaderValue::from_static(DEMO_CSP),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::bearer_token;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        assert_eq!(bearer_token("Bearer t0k"), Some("t0k"));
        assert_eq!(bearer_token("bearer t0k"), Some("t0k"));
        assert_eq!(bearer_token("BEARER   t0k"), Some("t0k"));
        assert_eq!(bearer_token("Basic t0k"), None);
        assert_eq!(bearer_token("Bearer"), None);
    }
}
