//! The `fetch` + `ReadableStream` transport: one HTTP request whose body is read chunk by chunk
//! (each chunk handed to the core once, as it arrives). Also used for plain JSON requests.
use js_sys::Uint8Array;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, ReadableStreamDefaultReader, Request, RequestCache,
    RequestCredentials, RequestInit, Response,
};

use super::failure::{self, describe};
use crate::js;

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

/// Most bytes of a body chunk copied into wasm memory at once (64 KiB).
///
/// The network hands over whatever has arrived: when the page is busy, one read can hold
/// megabytes. Copying such a read whole made the wasm linear memory (which never shrinks) grow
/// by its size; taking it in slices of this size bounds the copy, and the SSE parser does not
/// care where reads are cut.
const SLICE_BYTES: u32 = 64 * 1024;

#[wasm_bindgen]
extern "C" {
    /// The `{done, value}` object a `ReadableStreamDefaultReader.read()` resolves to. Read
    /// through getters: no property-name string is built per read, as `Reflect::get` needs.
    type ReadResult;
    #[wasm_bindgen(method, getter)]
    fn done(this: &ReadResult) -> bool;
    #[wasm_bindgen(method, getter)]
    fn value(this: &ReadResult) -> JsValue;
}

/// Reads smaller than this (bytes) make a trickle: a live stream of small deltas, each its own
/// network read (16 KiB).
const TRICKLE_BYTES: u32 = 16 * 1024;

/// Consecutive trickle reads after which reads are paced to one per animation frame.
const TRICKLE_READS: u8 = 2;

/// How long a paced read waits at most when no frame comes (the tab was hidden meanwhile), ms.
const FRAME_FALLBACK_MS: f64 = 50.0;

/// A response whose headers have arrived; the body is still streaming.
pub struct HttpResponse {
    response: Response,
    reader: Option<ReadableStreamDefaultReader>,
    /// The body chunk being handed out in slices, and the offset of its next slice.
    pending: Option<(Uint8Array, u32)>,
    /// Consecutive reads smaller than [`TRICKLE_BYTES`] (saturating).
    small_reads: u8,
}

/// Why a request produced no usable response.
#[derive(Debug)]
pub enum FetchError {
    /// `fetch` rejected (offline, DNS, CORS, connection reset) or the body stream errored.
    Network(String),
    /// The request was aborted through its `AbortController`.
    Aborted,
    /// The environment refused to build the request (bad URL, bad header name).
    InvalidRequest(String),
}

/// The window when this is a visible page (not a worker, not a hidden tab).
fn visible_window() -> Option<web_sys::Window> {
    let window = web_sys::window()?;
    let hidden = window.document()?.hidden();
    (!hidden).then_some(window)
}

/// Resolves at the next animation frame, or after [`FRAME_FALLBACK_MS`] if none comes (a tab
/// hidden while waiting gets no frames).
async fn next_frame(window: &web_sys::Window) {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let _ = window.request_animation_frame(&resolve);
        crate::js::set_timeout(&resolve, FRAME_FALLBACK_MS);
    });
    // Neither callback rejects; whichever comes first resolves it.
    let _ = JsFuture::from(promise).await;
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
    Ok(HttpResponse {
        response,
        reader: None,
        pending: None,
        small_reads: 0,
    })
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

    /// `Retry-After` in ms when given as delta-seconds (the HTTP-date form is ignored).
    pub fn retry_after_ms(&self) -> Option<u64> {
        let value = self.header("retry-after")?;
        value
            .trim()
            .parse::<u64>()
            .ok()
            .map(|s| s.saturating_mul(1000))
    }

    /// Reads the next body chunk; `Ok(None)` at the end of the body. Chunks are what the network
    /// delivered, cut into slices of at most [`SLICE_BYTES`] (an empty read gives an empty
    /// chunk).
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, FetchError> {
        if let Some(slice) = self.next_slice() {
            return Ok(Some(slice));
        }
        if self.reader.is_none() {
            let Some(body) = self.response.body() else {
                return Ok(None);
            };
            let reader: ReadableStreamDefaultReader = body
                .get_reader()
                .dyn_into()
                .map_err(|_| FetchError::Network("body reader unavailable".into()))?;
            self.reader = Some(reader);
        }
        let Some(reader) = self.reader.as_ref() else {
            return Ok(None);
        };
        if self.small_reads >= TRICKLE_READS {
            // A trickle (thousands of tiny reads a second) costs a promise round trip, a wasm
            // entry and the machine's bookkeeping per read, while the page shows one update per
            // frame anyway. Waiting for the next frame lets the network gather what arrives
            // meanwhile into one read. Only in a visible page: hidden tabs get no frames (and
            // nothing to render), and a bulk transfer (large reads) is never held back.
            if let Some(window) = visible_window() {
                next_frame(&window).await;
            }
        }
        let result = JsFuture::from(reader.read())
            .await
            .map_err(|e| failure::body(&e))?;
        let result: ReadResult = result.unchecked_into();
        // A missing or non-boolean `done` reads as false; the `value` check below then rejects
        // anything that is not a chunk.
        if result.done() {
            return Ok(None);
        }
        let bytes: Uint8Array = result
            .value()
            .dyn_into()
            .map_err(|_| FetchError::Network("body chunk is not a Uint8Array".into()))?;
        self.small_reads = if bytes.length() < TRICKLE_BYTES {
            self.small_reads.saturating_add(1)
        } else {
            0
        };
        self.pending = Some((bytes, 0));
        Ok(Some(self.next_slice().unwrap_or_default()))
    }

    /// The next slice of the pending chunk, if any of it is left.
    fn next_slice(&mut self) -> Option<Vec<u8>> {
        let (bytes, offset) = self.pending.as_mut()?;
        let length = bytes.length();
        let start = *offset;
        if start == 0 && length <= SLICE_BYTES {
            // The usual read: small, copied whole without a `subarray` view.
            let all = bytes.to_vec();
            self.pending = None;
            return (length > 0).then_some(all);
        }
        let end = start.saturating_add(SLICE_BYTES).min(length);
        if end >= length {
            // Last slice: drop the JS array now rather than at the next read.
            let last = (start < length).then(|| bytes.subarray(start, end).to_vec());
            self.pending = None;
            return last;
        }
        *offset = end;
        Some(bytes.subarray(start, end).to_vec())
    }

    /// Reads the whole body as bytes (`arrayBuffer()`, one copy into wasm memory): JSON listings
    /// skip the UTF-8 → UTF-16 → UTF-8 round trip of `text()`.
    pub async fn bytes(self) -> Result<Vec<u8>, FetchError> {
        let value = body(self.response.array_buffer()).await?;
        Ok(Uint8Array::new(&value).to_vec())
    }

    /// Reads the whole body as text (JSON responses and error bodies).
    pub async fn text(self) -> Result<String, FetchError> {
        let value = body(self.response.text()).await?;
        Ok(value.as_string().unwrap_or_default())
    }
}

/// Awaits a body-reading promise (`text()`, `arrayBuffer()`): an abort while reading is
/// `Aborted`, anything else (or a promise that could not be made) `Network` (`failure::body`).
async fn body(promise: Result<js_sys::Promise, JsValue>) -> Result<JsValue, FetchError> {
    let promise = promise.map_err(|e| failure::body(&e))?;
    JsFuture::from(promise).await.map_err(|e| failure::body(&e))
}
