//! Query and body parameters shared by the handlers: paging, order, cursor, JSON bodies.

use crate::error::ApiError;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use serde_json::Value;
use std::collections::HashMap;

/// Paging of a listing: `limit` (1..=max, default `default`), `page_token` (an opaque
/// offset), `order` (`asc`/`desc`).
pub struct Page {
    /// Items per page.
    pub limit: usize,
    /// Items to skip.
    pub offset: usize,
    /// Newest/last first.
    pub descending: bool,
}

/// Parses paging parameters; 400 on a bad value.
pub fn page(
    query: &HashMap<String, String>,
    default: usize,
    max: usize,
    default_desc: bool,
) -> Result<Page, ApiError> {
    let limit = match query.get("limit") {
        None => default,
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=max).contains(&n) => n,
            _ => {
                return Err(ApiError::bad_request(format!(
                    "Invalid limit: must be an integer from 1 to {max}"
                )))
            }
        },
    };
    let offset = match query.get("page_token") {
        None => 0,
        Some(token) => token
            .strip_prefix("o")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| ApiError::bad_request("Invalid page_token"))?,
    };
    let descending = match query.get("order").map(String::as_str) {
        None => default_desc,
        Some("asc") => false,
        Some("desc") => true,
        Some(_) => return Err(ApiError::bad_request("Invalid order: must be asc or desc")),
    };
    Ok(Page {
        limit,
        offset,
        descending,
    })
}

/// The `page_token` of the page after this one.
pub fn next_token(page: &Page, total: usize) -> Option<String> {
    (page.offset + page.limit < total).then(|| format!("o{}", page.offset + page.limit))
}

/// Pages an in-memory list.
pub fn slice<T: Clone>(items: &[T], page: &Page) -> Vec<T> {
    items
        .iter()
        .skip(page.offset)
        .take(page.limit)
        .cloned()
        .collect()
}

/// A request body as JSON: empty is `{}`; too large is 413; invalid JSON is 400.
pub fn json_body(body: Result<Bytes, BytesRejection>) -> Result<Value, ApiError> {
    let bytes = body.map_err(|rejection| {
        let status = rejection.into_response().status();
        ApiError::new(
            status,
            format!(
                "Request body rejected ({})",
                status.canonical_reason().unwrap_or("error")
            ),
        )
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Default::default()));
    }
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("Invalid JSON body: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "Invalid request: the body must be a JSON object",
        ));
    }
    Ok(value)
}

/// `Last-Event-ID` as a sequence number; 400 when present but not a non-negative integer.
pub fn last_event_id(headers: &HeaderMap) -> Result<Option<u64>, ApiError> {
    match headers.get("last-event-id") {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .map(Some)
            .ok_or_else(|| ApiError::bad_request("Invalid Last-Event-ID header")),
    }
}
