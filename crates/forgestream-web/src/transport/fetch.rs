//! The `fetch` + `ReadableStream` transport: one HTTP request whose body is read as it arrives
//! (everything already received handed to the core at once, never waiting on rendering). Also
//! used for plain JSON requests.
use js_sys::{Array, Promise, Uint8Array};
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

/// A response whose headers have arrived; the body is still streaming.
pub struct HttpResponse {
    response: Response,
    reader: Option<ReadableStreamDefaultReader>,
    /// The body chunk being handed out in slices, and the offset of its next slice. Comes
    /// before [`Self::next_read`] in body order.
    pending: Option<(Uint8Array, u32)>,
    /// A `read()` issued while draining that did not resolve at once: the next call awaits it
    /// (its chunk, the end of the body or the stream's error comes next, in order).
    next_read: Option<Promise>,
    /// An already-fulfilled promise (value `undefined`) raced against a fresh `read()` to learn
    /// whether the read resolved without waiting; made with the reader.
    settled: Option<Promise>,
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
    Ok(HttpResponse {
        response,
        reader: None,
        pending: None,
        next_read: None,
        settled: None,
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

    /// Whether the fetch followed a redirect to get this response (`Response.redirected`).
    pub fn redirected(&self) -> bool {
        self.response.redirected()
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

    /// Reads what the body has delivered so far; `Ok(None)` at the end of the body.
    ///
    /// Waits only when nothing has arrived: once a `read()` resolves, every chunk the stream
    /// already holds is drained too and handed back concatenated, up to [`SLICE_BYTES`] (a
    /// larger read is handed out in slices of that size). A live stream written one small frame
    /// per write queues one chunk per frame, and `read()` returns one chunk: reading them one
    /// call at a time, or waiting for anything (an animation frame) between reads, let the view
    /// fall behind the network. An empty read gives an empty chunk. Errors: `Aborted` when the
    /// request's controller aborted, `Network` when the body stream errored (bytes drained
    /// before the error are returned first, the error on the next call).
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
            self.settled = Some(Promise::resolve(&JsValue::UNDEFINED));
        }
        let (Some(reader), Some(settled)) = (self.reader.as_ref(), self.settled.as_ref()) else {
            return Ok(None);
        };
        let read = self.next_read.take().unwrap_or_else(|| reader.read());
        let result = JsFuture::from(read).await.map_err(|e| failure::body(&e))?;
        let Some(first) = chunk_of(result)? else {
            return Ok(None);
        };
        if first.length() > SLICE_BYTES {
            self.pending = Some((first, 0));
            return Ok(Some(self.next_slice().unwrap_or_default()));
        }
        let mut drained = first.to_vec();
        let race = Array::new_with_length(2);
        race.set(1, settled.clone().into());
        while drained.len() < SLICE_BYTES as usize {
            // `read()` on a stream that holds a chunk resolves its promise at once (WHATWG
            // Streams, ReadableStreamDefaultReaderRead → the chunk steps): raced against an
            // already-fulfilled promise, its reaction job is queued first and wins. All of this
            // runs in microtasks, so nothing else (no rendering, no network task) runs between.
            let read = reader.read();
            race.set(0, read.clone().into());
            let winner = JsFuture::from(Promise::race(&race)).await;
            let bytes = match winner {
                Ok(value) if !value.is_undefined() => match chunk_of(value) {
                    Ok(Some(bytes)) => bytes,
                    // The end of the body, or a bad value: the next call awaits the same read
                    // and reports it, after the bytes drained so far.
                    _ => {
                        self.next_read = Some(read);
                        break;
                    }
                },
                // Not resolved yet (the sentinel won), or rejected: kept for the next call,
                // which waits for its chunk or reports its error.
                _ => {
                    self.next_read = Some(read);
                    break;
                }
            };
            let room = SLICE_BYTES as usize - drained.len();
            let length = bytes.length() as usize;
            let start = drained.len();
            if length <= room {
                drained.resize(start + length, 0);
                bytes.copy_to(&mut drained[start..]);
            } else {
                // Fill up to the bound; the rest is handed out first by the next call.
                drained.resize(start + room, 0);
                bytes
                    .subarray(0, room as u32)
                    .copy_to(&mut drained[start..]);
                self.pending = Some((bytes, room as u32));
                break;
            }
        }
        Ok(Some(drained))
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

/// The chunk a `read()` resolved to: `Ok(None)` when `done`. A missing or non-boolean `done`
/// reads as false; the `value` check then rejects anything that is not a chunk (`Network`).
fn chunk_of(result: JsValue) -> Result<Option<Uint8Array>, FetchError> {
    let result: ReadResult = result.unchecked_into();
    if result.done() {
        return Ok(None);
    }
    result
        .value()
        .dyn_into()
        .map(Some)
        .map_err(|_| FetchError::Network("body chunk is not a Uint8Array".into()))
}

/// Awaits a body-reading promise (`text()`, `arrayBuffer()`): an abort while reading is
/// `Aborted`, anything else (or a promise that could not be made) `Network` (`failure::body`).
async fn body(promise: Result<js_sys::Promise, JsValue>) -> Result<JsValue, FetchError> {
    let promise = promise.map_err(|e| failure::body(&e))?;
    JsFuture::from(promise).await.map_err(|e| failure::body(&e))
}
