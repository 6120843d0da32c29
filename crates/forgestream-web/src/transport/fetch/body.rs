//! Feeding a streaming response body to its consumer: the browser pipes the body (`pipeTo`)
//! into a `WritableStream` whose `write(chunk)` hands the chunk's bytes over synchronously — no
//! queue, no task wake-up, no promise per chunk. Nothing waits on rendering or timers (hidden
//! tabs included): the pipe reads the next chunk as soon as the previous `write` returns.
//!
//! Why a pipe and not `read()` per chunk: a live stream written one small frame per write
//! arrives as one chunk per frame (≈2,000 a second for a fast model), and each `read()` from
//! wasm cost a call into the streams API, a promise, a `then` and a `{done, value}` object to
//! take apart — more than parsing the chunk. Awaiting each read (or each queued batch) as a
//! future cost a task wake-up and a poll per chunk. The pipe runs the read loop inside the
//! browser's streams implementation and calls one long-lived closure per chunk (bench/README.md,
//! W3).
use js_sys::Uint8Array;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, ReadableStream, StreamPipeOptions, UnderlyingSink, WritableStream};

use super::super::failure;
use super::FetchError;

/// Most bytes handed over at once (64 KiB): a larger chunk is handed over in slices of this size.
///
/// The network hands over whatever has arrived: when the page is busy, one chunk can hold
/// megabytes. Copying such a chunk whole made the wasm linear memory (which never shrinks) grow
/// by its size; slices bound the copy, and the SSE parser does not care where reads are cut.
pub const SLICE_BYTES: u32 = 64 * 1024;

/// Pipes `body` into `on_bytes`, each chunk as it arrives (in slices of at most [`SLICE_BYTES`],
/// through one reused buffer that only grows; empty chunks are skipped). `on_bytes` returns `false` when its
/// consumer is gone: the request is then aborted through `abort`. Resolves `Ok` at the end of
/// the body. Errors: `Aborted` when `abort` aborted the request, `Network` when the body stream
/// errored (every byte before the error was handed over first), gave a chunk that is not a
/// `Uint8Array`, or the environment has no `WritableStream`.
pub async fn pipe(
    body: &ReadableStream,
    abort: &AbortController,
    mut on_bytes: impl FnMut(&[u8]) -> bool + 'static,
) -> Result<(), FetchError> {
    let stop = abort.clone();
    let mut buffer = Vec::new();
    // Owned here until the pipe settled: no `write` comes after that.
    let write = Closure::<dyn FnMut(JsValue) -> Result<(), JsValue>>::new(move |chunk: JsValue| {
        // Throwing errors the pipe: `pipeTo` rejects with it (a `Network` failure).
        let chunk: Uint8Array = chunk
            .dyn_into()
            .map_err(|_| JsValue::from(js_sys::Error::new("body chunk is not a Uint8Array")))?;
        let length = chunk.length();
        let mut at = 0;
        while at < length {
            let end = at.saturating_add(SLICE_BYTES).min(length);
            let n = (end - at) as usize;
            // The buffer only grows (to one slice at most): zero-filling it per chunk cost a
            // memset of up to 64 KiB per read.
            if buffer.len() < n {
                buffer.resize(n, 0);
            }
            let Some(bytes) = buffer.get_mut(..n) else {
                break;
            };
            if at == 0 && end == length {
                chunk.copy_to(bytes);
            } else {
                chunk.subarray(at, end).copy_to(bytes);
            }
            if !on_bytes(bytes) {
                stop.abort();
                break;
            }
            at = end;
        }
        Ok(())
    });
    let sink = UnderlyingSink::new();
    sink.set_write(write.as_ref().unchecked_ref());
    let destination =
        WritableStream::new_with_underlying_sink(&sink).map_err(|e| failure::body(&e))?;
    let options = StreamPipeOptions::new();
    options.set_signal(&abort.signal());
    let piped = body.pipe_to_with_options(&destination, &options);
    let outcome = JsFuture::from(piped).await;
    drop(write);
    outcome.map(|_| ()).map_err(|e| failure::body(&e))
}
