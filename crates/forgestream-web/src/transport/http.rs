//! Requests through gloo-net: the live stream's request (its body then piped into the engine by
//! [`super::fetch`], which gloo-net does not offer — its `Response` reads bodies only whole or
//! hands out the raw stream) and whole-body requests (history pages, turn reads, lookups,
//! cancels, `POST /sessions`).
use forgestream_core::session::{HttpRequest, Method};
use gloo_net::http::{Headers, Request, Response};
use web_sys::{AbortSignal, RequestCache, RequestCredentials};

use super::failure::{self, describe};
use super::fetch::FetchError;

/// A whole response: status, the raw `Retry-After`, the body bytes.
pub struct Whole {
    pub status: u16,
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
}

/// Sends `request` with `headers` (the header provider's pairs plus ours) and `credentials`
/// (`"omit" | "same-origin" | "include"`); resolves once the response head arrived. Errors:
/// `InvalidRequest` when the environment refuses to build it (a bad URL or header name, which
/// gloo-net's infallible `header` would throw on), `Aborted`, `Network` when `fetch` rejected.
pub async fn open(
    request: &HttpRequest,
    headers: &[(String, String)],
    credentials: &str,
    signal: &AbortSignal,
) -> Result<Response, FetchError> {
    let invalid = |e: wasm_bindgen::JsValue| FetchError::InvalidRequest(describe(&e));
    let raw = web_sys::Headers::new().map_err(invalid)?;
    for (name, value) in headers {
        raw.set(name, value).map_err(invalid)?;
    }
    if request.json_body.is_some() {
        raw.set("content-type", "application/json")
            .map_err(invalid)?;
    }
    let builder = match request.method {
        Method::Get => Request::get(&request.url),
        Method::Post => Request::post(&request.url),
    }
    .headers(Headers::from_raw(raw))
    .credentials(match credentials {
        "include" => RequestCredentials::Include,
        "omit" => RequestCredentials::Omit,
        _ => RequestCredentials::SameOrigin,
    })
    .abort_signal(Some(signal))
    // Never the HTTP cache: turn state and listings must be fresh, and Firefox holds a second
    // request for a URL behind the first one's cache entry — which a live SSE stream never
    // finishes, so a second tab subscribing to the same turn (same cursor) got no byte until the
    // first stream ended. EventSource requests are `no-store` by spec already. RELIABILITY.md
    // "Engine differences".
    .cache(RequestCache::NoStore);
    let built = match &request.json_body {
        Some(body) => builder.body(body.as_str()),
        None => builder.build(),
    }
    .map_err(|e| FetchError::InvalidRequest(e.to_string()))?;
    built
        .send()
        .await
        .map_err(|e| failure::gloo(e, failure::REQUEST_FAILED))
}

/// [`open`], then the whole body.
pub async fn send(
    request: &HttpRequest,
    headers: &[(String, String)],
    credentials: &str,
    signal: &AbortSignal,
) -> Result<Whole, FetchError> {
    let response = open(request, headers, credentials, signal).await?;
    whole(response, false).await
}

/// Reads `response`'s body whole (one copy into wasm memory): status, `Retry-After`, bytes. A
/// body that breaks off is `Network` (`BODY_FAILED`), or an empty body when only the status
/// matters (`status_only`: a refused stream's error page).
pub async fn whole(response: Response, status_only: bool) -> Result<Whole, FetchError> {
    let status = response.status();
    let retry_after = response.headers().get("retry-after");
    let body = match response.binary().await {
        Ok(body) => body,
        Err(_) if status_only => Vec::new(),
        Err(e) => return Err(failure::gloo(e, failure::BODY_FAILED)),
    };
    Ok(Whole {
        status,
        retry_after,
        body,
    })
}
