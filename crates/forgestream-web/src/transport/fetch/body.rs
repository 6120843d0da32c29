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
use wasm_bindgen::prelude::{wasm_bindgen, Closure};
use wasm_bindgen::JsValue;
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

// The sink's `write` in JS: the type check, the slicing, the copy into wasm memory and the clock
// read happen on the JS side, so a chunk costs one call into wasm (`onSlice(length, nowMs)` per
// slice) instead of four calls out of it (`instanceof`, `length`, `set`, `Date.now`) — at ~2,000
// chunks a second those crossings were a visible share of the SDK's time (issue 19, W3).
// One view of the slice buffer serves every chunk: it is made again only after the memory grew,
// when the old `ArrayBuffer` is detached and a view of it reads as empty (`byteLength` 0) — not
// a `memory.buffer` read and a new `Uint8Array` per chunk.
#[wasm_bindgen(inline_js = r#"
export function byteSink(memory, ptr, capacity, onSlice) {
  let view = new Uint8Array(memory.buffer, ptr, capacity);
  return {
    write(chunk) {
      if (!(chunk instanceof Uint8Array)) throw new TypeError("body chunk is not a Uint8Array");
      const length = chunk.length;
      const now = Date.now();
      for (let at = 0; at < length; at += capacity) {
        const end = Math.min(length, at + capacity);
        if (view.byteLength === 0) view = new Uint8Array(memory.buffer, ptr, capacity);
        view.set(at === 0 && end === length ? chunk : chunk.subarray(at, end));
        if (!onSlice(end - at, now)) return;
      }
    },
  };
}
"#)]
extern "C" {
    /// An `UnderlyingSink` whose `write(chunk)` copies `chunk` into `capacity` bytes of wasm
    /// memory at `ptr`, slice by slice, calling `on_slice(bytes, now_ms)` after each; it throws
    /// (erroring the pipe) on a chunk that is not a `Uint8Array`, and stops at a `false`.
    #[wasm_bindgen(js_name = byteSink)]
    fn byte_sink(
        memory: &JsValue,
        ptr: u32,
        capacity: u32,
        on_slice: &Closure<dyn FnMut(u32, f64) -> bool>,
    ) -> UnderlyingSink;
}

/// Pipes `body` into `on_bytes`, each chunk as it arrives (in slices of at most [`SLICE_BYTES`],
/// with the wall-clock time it arrived, ms since the epoch); empty chunks are skipped.
/// `on_bytes` returns `false` when its consumer is gone: the request is then aborted through
/// `abort`. Resolves `Ok` at the end of the body. Errors: `Aborted` when `abort` aborted the
/// request, `Network` when the body stream errored (every byte before the error was handed over
/// first), gave a chunk that is not a `Uint8Array`, or the environment has no `WritableStream`.
pub async fn pipe(
    body: &ReadableStream,
    abort: &AbortController,
    mut on_bytes: impl FnMut(&[u8], u64) -> bool + 'static,
) -> Result<(), FetchError> {
    let stop = abort.clone();
    // One slice-sized buffer per stream, written by the JS sink between calls into wasm: it is
    // allocated once and never moves (its address is handed to JS), and Rust reads it only
    // inside `on_slice`, after JS finished writing the slice.
    let buffer: Box<[u8]> = vec![0u8; SLICE_BYTES as usize].into_boxed_slice();
    let ptr = buffer.as_ptr() as u32;
    let on_slice = Closure::<dyn FnMut(u32, f64) -> bool>::new(move |n: u32, now: f64| {
        let now = if now.is_finite() && now > 0.0 {
            now as u64
        } else {
            0
        };
        let Some(bytes) = buffer.get(..n as usize) else {
            return true;
        };
        if on_bytes(bytes, now) {
            true
        } else {
            stop.abort();
            false
        }
    });
    let sink = byte_sink(&wasm_bindgen::memory(), ptr, SLICE_BYTES, &on_slice);
    let destination =
        WritableStream::new_with_underlying_sink(&sink).map_err(|e| failure::body(&e))?;
    let options = StreamPipeOptions::new();
    options.set_signal(&abort.signal());
    let piped = body.pipe_to_with_options(&destination, &options);
    let outcome = JsFuture::from(piped).await;
    // Owned here until the pipe settled: no `write` comes after that.
    drop(on_slice);
    outcome.map(|_| ()).map_err(|e| failure::body(&e))
}
