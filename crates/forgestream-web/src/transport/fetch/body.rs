//! Reading a streaming response body: the browser pipes the body (`pipeTo`) into a
//! `WritableStream` whose `write` queues each chunk for [`BodyReader::next_chunk`], which hands
//! out everything queued at once. Nothing waits on rendering or timers (hidden tabs included):
//! the pipe reads the next chunk as soon as the previous `write` returns.
//!
//! Why a pipe and not `read()` per chunk: a live stream written one small frame per write
//! arrives as one chunk per frame (≈2,000 a second for a fast model), and each `read()` from
//! wasm cost a call into the streams API, a promise, a `then` and a `{done, value}` object to
//! take apart — more than parsing the chunk. Awaiting each read as a `JsFuture` cost two more
//! wasm-bindgen closures and a task wake-up. The pipe runs the read loop inside the browser's
//! streams implementation and calls one long-lived closure per chunk (bench/README.md, W3).
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::poll_fn;
use std::rc::{Rc, Weak};
use std::task::{Poll, Waker};

use js_sys::{Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::{wasm_bindgen, Closure};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortController, ReadableStream};

use super::super::failure;
use super::FetchError;

/// Most bytes handed out by one [`BodyReader::next_chunk`] (64 KiB); also how much is queued
/// ahead of the consumer before `write` holds the pipe back.
///
/// The network hands over whatever has arrived: when the page is busy, one chunk can hold
/// megabytes. Copying such a chunk whole made the wasm linear memory (which never shrinks) grow
/// by its size; taking it in slices of this size bounds the copy, and the SSE parser does not
/// care where reads are cut.
pub const SLICE_BYTES: u32 = 64 * 1024;

#[wasm_bindgen]
extern "C" {
    /// `new WritableStream(sink)`.
    #[wasm_bindgen(js_name = WritableStream)]
    type Sink;
    #[wasm_bindgen(constructor, js_class = "WritableStream", catch)]
    fn new(underlying_sink: &Object) -> Result<Sink, JsValue>;

    /// `readable.pipeTo(destination, {signal, preventCancel})` (WHATWG Streams §4.2.5):
    /// resolves once every chunk was written and the destination closed; rejects with the
    /// source's error (an abort, a network failure) or when `signal` aborted the pipe.
    #[wasm_bindgen(method, js_name = pipeTo)]
    fn pipe_to(this: &Body, destination: &Sink, options: &Object) -> Piped;

    /// The body stream, seen only through `pipeTo`.
    #[wasm_bindgen(js_name = ReadableStream)]
    type Body;

    /// The promise `pipeTo` returns, seen only through `then`.
    type Piped;
    /// `promise.then(onFulfilled, onRejected)` with plain functions (js-sys' `then2` takes
    /// borrowed closures); the promise `then` returns is not needed.
    #[wasm_bindgen(method, js_name = then)]
    fn then_with(this: &Piped, on_fulfilled: &Function, on_rejected: &Function);
}

/// The reading side of a body stream, owned by the response. Dropping it stops the pipe without
/// cancelling the body (`preventCancel`), as an unread body was left before.
pub struct BodyReader {
    inbox: Rc<RefCell<Inbox>>,
    /// Aborts the pipe when the reader is dropped.
    stop: AbortController,
}

/// What the pipe has written and the consumer has not taken yet.
struct Inbox {
    /// Chunks in body order with their lengths; the first may be partly handed out already.
    chunks: VecDeque<(Uint8Array, u32)>,
    /// Bytes of `chunks.front()` already handed out.
    offset: u32,
    /// Bytes queued and not handed out.
    queued: u32,
    /// How the body ended, reported once the chunks before it are handed out: `Ok` at the end
    /// of the body, `Err` when the stream errored or gave something that is not a chunk.
    outcome: Option<Result<(), FetchError>>,
    /// The consumer waiting in `next_chunk`.
    waker: Option<Waker>,
    /// Resolves the promise a `write` returned when the queue was full ([`SLICE_BYTES`]): the
    /// pipe writes the next chunk only after it.
    resume: Option<Function>,
}

impl BodyReader {
    /// Starts piping `body` (its reader is locked from now on). Errors: `Network` when the
    /// environment has no `WritableStream` or refuses the pipe.
    pub fn new(body: &ReadableStream) -> Result<Self, FetchError> {
        let inbox = Rc::new(RefCell::new(Inbox {
            chunks: VecDeque::new(),
            offset: 0,
            queued: 0,
            outcome: None,
            waker: None,
            resume: None,
        }));
        // The three callbacks are owned by JS (`into_js_value`): a chunk or an end arriving
        // after the reader is gone calls a live closure that finds no inbox.
        let weak = Rc::downgrade(&inbox);
        let write = Closure::<dyn FnMut(JsValue) -> JsValue>::new(move |chunk: JsValue| match weak
            .upgrade()
        {
            Some(inbox) => Inbox::write(&inbox, chunk),
            None => JsValue::UNDEFINED,
        });
        let ended = settle(Rc::downgrade(&inbox), |_| Ok(()));
        let failed = settle(Rc::downgrade(&inbox), |e| Err(failure::body(&e)));
        let sink = Object::new();
        let options = Object::new();
        let stop = AbortController::new().map_err(|e| failure::body(&e))?;
        let set = |target: &Object, key: &str, value: &JsValue| {
            Reflect::set(target, &JsValue::from_str(key), value).map_err(|e| failure::body(&e))
        };
        set(&sink, "write", &write.into_js_value())?;
        set(&options, "signal", &stop.signal())?;
        set(&options, "preventCancel", &JsValue::TRUE)?;
        let destination = Sink::new(&sink).map_err(|e| failure::body(&e))?;
        let body: &Body = body.unchecked_ref();
        body.pipe_to(&destination, &options)
            .then_with(ended.unchecked_ref(), failed.unchecked_ref());
        Ok(BodyReader { inbox, stop })
    }

    /// Everything received so far, up to [`SLICE_BYTES`]; waits only when nothing is queued.
    /// `Ok(None)` at the end of the body. An empty chunk gives an empty read. Errors (after the
    /// bytes received before them, and again on every later call): `Aborted` when the request's
    /// controller aborted, `Network` when the body stream errored or gave a non-`Uint8Array`.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>, FetchError> {
        poll_fn(|cx| {
            let mut inbox = self.inbox.borrow_mut();
            if !inbox.chunks.is_empty() {
                let bytes = inbox.take();
                let resume = inbox.resume.take();
                drop(inbox);
                if let Some(resume) = resume {
                    // Room again: let the pipe write its next chunk.
                    let _ = resume.call0(&JsValue::UNDEFINED);
                }
                return Poll::Ready(Ok(Some(bytes)));
            }
            match &inbox.outcome {
                Some(Ok(())) => Poll::Ready(Ok(None)),
                Some(Err(error)) => Poll::Ready(Err(error.clone())),
                None => {
                    inbox.waker = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

impl Drop for BodyReader {
    fn drop(&mut self) {
        // A pipe finishes the write in flight before it stops: release a held one first.
        let resume = self.inbox.borrow_mut().resume.take();
        if let Some(resume) = resume {
            let _ = resume.call0(&JsValue::UNDEFINED);
        }
        self.stop.abort();
    }
}

/// A JS-owned callback for the pipe's promise: records how the body ended, wakes the consumer.
fn settle(
    weak: Weak<RefCell<Inbox>>,
    outcome: impl Fn(JsValue) -> Result<(), FetchError> + 'static,
) -> JsValue {
    Closure::<dyn FnMut(JsValue)>::new(move |value: JsValue| {
        let Some(inbox) = weak.upgrade() else { return };
        let waker = {
            let mut this = inbox.borrow_mut();
            // A bad chunk already ended the body; the pipe's own outcome comes after it.
            if this.outcome.is_none() {
                this.outcome = Some(outcome(value));
            }
            this.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    })
    .into_js_value()
}

impl Inbox {
    /// The sink's `write(chunk)`: queue it and wake the consumer. Returns `undefined` (the pipe
    /// goes on at once) or, when [`SLICE_BYTES`] are already queued, a promise the consumer
    /// resolves once it has taken some.
    fn write(inbox: &RefCell<Inbox>, chunk: JsValue) -> JsValue {
        let (waker, full) = {
            let mut this = inbox.borrow_mut();
            if this.outcome.is_some() {
                return JsValue::UNDEFINED;
            }
            match chunk.dyn_into::<Uint8Array>() {
                Ok(bytes) => {
                    let length = bytes.length();
                    this.queued = this.queued.saturating_add(length);
                    this.chunks.push_back((bytes, length));
                }
                Err(_) => {
                    this.outcome = Some(Err(FetchError::Network(
                        "body chunk is not a Uint8Array".into(),
                    )))
                }
            }
            (this.waker.take(), this.queued >= SLICE_BYTES)
        };
        // Outside the borrow: waking only queues the consumer's task (a microtask).
        if let Some(waker) = waker {
            waker.wake();
        }
        if !full {
            return JsValue::UNDEFINED;
        }
        let mut resolver = None;
        let held = Promise::new(&mut |resolve, _reject| resolver = Some(resolve));
        inbox.borrow_mut().resume = resolver;
        held.into()
    }

    /// Takes up to [`SLICE_BYTES`] from the front of the queue, concatenated.
    fn take(&mut self) -> Vec<u8> {
        let want = self.queued.min(SLICE_BYTES) as usize;
        if self.offset == 0 {
            if let Some((bytes, length)) = self.chunks.front() {
                let length = *length;
                if length as usize == want || (self.chunks.len() == 1 && length <= SLICE_BYTES) {
                    // The usual read: one small chunk, copied whole without a `subarray` view.
                    let all = bytes.to_vec();
                    self.queued -= length;
                    self.chunks.pop_front();
                    return all;
                }
            }
        }
        let mut out = Vec::with_capacity(want);
        while out.len() < SLICE_BYTES as usize {
            let Some((bytes, length)) = self.chunks.front() else {
                break;
            };
            let length = *length;
            let room = (SLICE_BYTES as usize - out.len()) as u32;
            let start = self.offset;
            let end = start.saturating_add(room).min(length);
            let at = out.len();
            out.resize(at + (end - start) as usize, 0);
            if start == 0 && end == length {
                bytes.copy_to(&mut out[at..]);
            } else {
                bytes.subarray(start, end).copy_to(&mut out[at..]);
            }
            self.queued -= end - start;
            if end == length {
                self.chunks.pop_front();
                self.offset = 0;
            } else {
                self.offset = end;
            }
        }
        out
    }
}
