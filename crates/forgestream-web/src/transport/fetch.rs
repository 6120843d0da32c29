//! The `fetch` + `ReadableStream` transport of live streams: one HTTP request whose body is
//! handed to the engine chunk by chunk as it arrives, never waiting on rendering (`fetch/body.rs`).
use js_sys::Uint8Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, Request, RequestCache, RequestCredentials, RequestInit, Response,
};

use super::failure::{self, describe};
use crate::js;

mod body;

/// What to send. `headers` are `(name, value)` pairs (the header provider's output plus ours).
pub struct HttpRequest<'a> {
    /// `GET` or `POST`.
    pub method: &'a str,
    /// Absolute or page-relative URL.
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    /// JSON request body, sent with `content-type: application/json`.
    pub json_body: Option<&'a str>,
    /// `credentials` mode: `"omit" | "same-origin" | "include"`.
    pub credentials: &'a str,
}

/// A response whose headers have arrived; the body is still streaming.
pub struct HttpResponse {
    response: Response,
}

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

/// Starts `request`; resolves when the response headers arrive. `abort` cancels the request and
/// its body stream (the caller keeps the controller to close the connection at any time).
pub async fn send(
    request: &HttpRequest<'_>,
    abort: &AbortController,
) -> Result<HttpResponse, FetchError> {
    let init = RequestInit::new();
    init.set_method(request.method);
    init.set_signal(Some(&abort.signal()));
    init.set_credentials(match request.credentials {
        "include" => RequestCredentials::Include,
        "omit" => RequestCredentials::Omit,
        _ => RequestCredentials::SameOrigin,
    });
    // Never the HTTP cache: turn state and listings must be fresh, and Firefox holds a second
    // request for a URL behind the first one's cache entry — which a live SSE stream never
    // finishes, so a second tab subscribing to the same turn (same cursor) got no byte until the
    // first stream ended. EventSource requests are `no-store` by spec already. RELIABILITY.md
    // "Engine differences".
    init.set_cache(RequestCache::NoStore);
    let headers = Headers::new().map_err(|e| FetchError::InvalidRequest(describe(&e)))?;
    for (name, value) in request.headers {
        headers
            .set(name, value)
            .map_err(|e| FetchError::InvalidRequest(describe(&e)))?;
    }
    if let Some(body) = request.json_body {
        headers
            .set("content-type", "application/json")
            .map_err(|e| FetchError::InvalidRequest(describe(&e)))?;
        init.set_body(&JsValue::from_str(body));
    }
    init.set_headers(&headers);
    let req = Request::new_with_str_and_init(request.url, &init)
        .map_err(|e| FetchError::InvalidRequest(describe(&e)))?;
    let value = JsFuture::from(js::fetch_request(&req))
        .await
        .map_err(|e| failure::request(&e))?;
    let response: Response = value
        .dyn_into()
        .map_err(|_| FetchError::Network("fetch resolved to a non-Response".into()))?;
    Ok(HttpResponse { response })
}

impl HttpResponse {
    /// HTTP status code.
    pub fn status(&self) -> u16 {
        self.response.status()
    }

    /// A response header, if present (`Retry-After`, `content-type`).
    pub fn header(&self, name: &str) -> Option<String> {
        self.response.headers().get(name).ok().flatten()
    }

    /// Whether the fetch followed a redirect to get this response (`Response.redirected`).
    pub fn redirected(&self) -> bool {
        self.response.redirected()
    }

    /// Hands the body to `on_bytes` chunk by chunk as it arrives, synchronously from the
    /// pipe's `write` (`fetch/body.rs`: no read waits on anything but the network; a chunk
    /// larger than [`SLICE_BYTES`](body::SLICE_BYTES) comes in slices). `on_bytes` returns
    /// `false` once nobody consumes the stream any more: the request is aborted. Resolves at
    /// the end of the body (at once when there is none). Errors: `Aborted` when `abort`
    /// aborted the request, `Network` when the body stream errored (after every byte received
    /// before the error).
    pub async fn pipe_body(
        self,
        abort: &AbortController,
        on_bytes: impl FnMut(&[u8]) -> bool + 'static,
    ) -> Result<(), FetchError> {
        match self.response.body() {
            Some(stream) => body::pipe(&stream, abort, on_bytes).await,
            None => Ok(()),
        }
    }

    /// Reads the whole body as bytes (`arrayBuffer()`, one copy into wasm memory): JSON listings
    /// skip the UTF-8 → UTF-16 → UTF-8 round trip of `text()`.
    pub async fn bytes(self) -> Result<Vec<u8>, FetchError> {
        let value = body(self.response.array_buffer()).await?;
        Ok(Uint8Array::new(&value).to_vec())
    }
}

/// Awaits a body-reading promise (`arrayBuffer()`): an abort while reading is
/// `Aborted`, anything else (or a promise that could not be made) `Network` (`failure::body`).
async fn body(promise: Result<js_sys::Promise, JsValue>) -> Result<JsValue, FetchError> {
    let promise = promise.map_err(|e| failure::body(&e))?;
    JsFuture::from(promise).await.map_err(|e| failure::body(&e))
}
