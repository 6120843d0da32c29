//! The executor: carries out the session engine's effects (`forgestream_core::session`) and
//! feeds the results back. It decides nothing: every rule (what to request next, when to retry,
//! what to store, when a promise settles) is the engine's.
//!
//! Borrows: the engine sits in a `RefCell` that is borrowed only for one `handle` or one
//! `poll_effect` at a time, never across an `.await` and never while JavaScript runs (listener,
//! promise callbacks, header provider). Async tasks hold a `Weak` engine handle, so a closed
//! session is never kept alive by its requests.
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use forgestream_core::session::{
    self, Command, CommandId, Credentials, Effect, HttpRequest, Input, Lifecycle, RequestId,
    ResponseKind, Role, Session, SessionError, Settled, TabEffect, TabInput,
};
use js_sys::Function;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;
use web_sys::AbortController;

use crate::headers;
use crate::js;
use crate::options::ClientOptions;
use crate::snapshot;
use crate::storage::CheckpointStore;
use crate::transport::eventsource::{Source, SourceEvent};
use crate::transport::{fetch, http};

/// State shared by every session of one client.
pub struct ClientShared {
    pub options: ClientOptions,
    pub store: RefCell<CheckpointStore>,
    /// The TS layer shares one live connection per session among tabs (it holds the Web Locks
    /// and the channel): new engines start as followers until their tab holds the lock.
    pub tabs: Cell<bool>,
}

impl ClientShared {
    /// Whether engines of `self` may serve `other`'s handles: the same base URL, flavor,
    /// transport, credentials, storage, limits and reconnect policy, and the same header
    /// provider (auth). Two clients differing in any of these are two configurations and never
    /// share an engine.
    fn same_configuration(&self, other: &ClientShared) -> bool {
        let (a, b) = (&self.options, &other.options);
        a.config.same_as(&b.config)
            && match (&a.headers, &b.headers) {
                (None, None) => true,
                (Some(x), Some(y)) => JsValue::from(x) == JsValue::from(y),
                _ => false,
            }
    }
}

thread_local! {
    /// The page's engines: (session id, engine). Weak: the handles own the engines. One engine
    /// per (configuration — base URL, flavor, auth, storage… —, session id) per page: every
    /// handle on a session shares it.
    static ENGINES: RefCell<Vec<(String, Weak<Engine>)>> = const { RefCell::new(Vec::new()) };
}

/// The open engine of session `id` for `client`'s configuration, or a new one.
pub fn engine_for(client: &Rc<ClientShared>, id: &str) -> Rc<Engine> {
    let found = ENGINES.with(|engines| {
        let mut engines = engines.borrow_mut();
        engines.retain(|(_, weak)| weak.strong_count() > 0);
        engines
            .iter()
            .filter(|(key, _)| key == id)
            .filter_map(|(_, weak)| weak.upgrade())
            .find(|e| !e.session.borrow().is_closed() && e.client.same_configuration(client))
    });
    if let Some(engine) = found {
        return engine;
    }
    let engine = Engine::new(client.clone(), id);
    ENGINES.with(|engines| {
        engines
            .borrow_mut()
            .push((id.to_string(), Rc::downgrade(&engine)))
    });
    engine
}

/// One session's engine plus the I/O that carries out its effects.
pub struct Engine {
    pub client: Rc<ClientShared>,
    /// The session id.
    pub id: String,
    /// Page-unique number of this engine (handles on one session report the same).
    pub serial: u32,
    pub session: RefCell<Session>,
    io: RefCell<Io>,
    /// Wasm-side ids of app commands.
    next_command: Cell<CommandId>,
    /// The `setTimeout` callback (made once: it holds only a weak handle).
    timer_callback: Closure<dyn FnMut()>,
    /// The `online` / `offline` / `pageshow` / `resume` listeners; removed on close.
    network: Cell<Option<PageListeners>>,
}

#[derive(Default)]
struct Io {
    /// Open fetches.
    aborts: Vec<(RequestId, AbortController)>,
    /// Open EventSources (closed on drop).
    sources: Vec<(RequestId, Source)>,
    /// The pending `setTimeout` with its deadline.
    timer: Option<(u64, JsValue)>,
    /// Promises waiting for their command: (command, resolve, reject).
    pending: Vec<(CommandId, Function, Function)>,
    /// `() => void`, set by the TS layer (it coalesces per animation frame).
    listener: Option<Function>,
    /// `(kind, turnId?, seq?, data?) => void`: carries out the tab effects (the TS layer holds
    /// the lock and the channel).
    tabs: Option<Function>,
}

impl Engine {
    pub fn new(client: Rc<ClientShared>, id: &str) -> Rc<Engine> {
        let config = client.options.session_config();
        thread_local! {
            static SERIAL: Cell<u32> = const { Cell::new(0) };
        }
        let serial = SERIAL.with(|c| {
            c.set(c.get().wrapping_add(1));
            c.get()
        });
        let mut session = Session::new(id, config);
        if client.tabs.get() {
            // Nothing is followed before the tab knows whether another tab leads: a first
            // subscribe follows the relay, and the lock (or the lease) makes one tab lead.
            session.handle(Input::Tab(TabInput::Role(Role::Follower)), js::now_ms());
        }
        Rc::new_cyclic(|weak: &Weak<Engine>| {
            let timer = weak.clone();
            Engine {
                serial,
                id: id.to_string(),
                session: RefCell::new(session),
                client,
                io: RefCell::new(Io::default()),
                next_command: Cell::new(1),
                timer_callback: Closure::new(move || {
                    let Some(engine) = timer.upgrade() else {
                        return;
                    };
                    engine.io.borrow_mut().timer = None;
                    feed(&engine, Input::Timer);
                }),
                network: Cell::new(PageListeners::attach(weak)),
            }
        })
    }

    pub fn set_tab_handler(&self, handler: Option<Function>) {
        self.io.borrow_mut().tabs = handler;
    }

    pub fn set_listener(&self, listener: Option<Function>) {
        self.io.borrow_mut().listener = listener;
        self.session.borrow_mut().listener_changed();
    }

    /// Sends `command` and returns the promise it settles.
    pub fn command(self: &Rc<Self>, command: Command) -> js_sys::Promise {
        let id = self.next_command.replace(self.next_command.get() + 1);
        let promise = js_sys::Promise::new(&mut |resolve, reject| {
            self.io.borrow_mut().pending.push((id, resolve, reject));
        });
        feed(self, Input::Command { id, command });
        promise
    }

    /// Sends a command whose settlement nobody awaits.
    pub fn command_detached(self: &Rc<Self>, command: Command) {
        let id = self.next_command.replace(self.next_command.get() + 1);
        feed(self, Input::Command { id, command });
    }

    /// The last handle closed: the engine aborts and settles everything; then every JS value
    /// Rust held for it (listener, timer, network listeners, sources, promise callbacks) is
    /// dropped, so nothing here keeps the app's objects reachable.
    pub fn close(self: &Rc<Self>) {
        self.command_detached(Command::Close);
        drop(self.network.take());
        let pending = {
            let mut io = self.io.borrow_mut();
            if let Some((_, handle)) = io.timer.take() {
                js::clear_timeout(&handle);
            }
            io.listener = None;
            io.tabs = None;
            io.sources.clear();
            io.aborts.drain(..).for_each(|(_, abort)| abort.abort());
            std::mem::take(&mut io.pending)
        };
        let closed = SessionError::new(session::ErrorCode::Aborted, "the session was closed");
        for (_, _, reject) in pending {
            let _ = reject.call1(&JsValue::UNDEFINED, &crate::error::to_js(&closed));
        }
        let me: *const Engine = Rc::as_ptr(self);
        ENGINES.with(|engines| {
            engines
                .borrow_mut()
                .retain(|(_, weak)| weak.strong_count() > 0 && weak.as_ptr() != me)
        });
    }
}

/// Feeds `input` to the engine, then carries out what it asks.
pub fn feed(engine: &Rc<Engine>, input: Input<'_>) {
    feed_at(engine, input, js::now_ms());
}

/// [`feed`] with the time the input happened (ms since the epoch), when the caller has it.
fn feed_at(engine: &Rc<Engine>, input: Input<'_>, now_ms: u64) {
    engine.session.borrow_mut().handle(input, now_ms);
    pump(engine);
}

fn feed_weak(weak: &Weak<Engine>, input: Input<'_>) {
    if let Some(engine) = weak.upgrade() {
        feed(&engine, input);
    }
}

/// Carries out effects until the engine has none left, then re-arms the timer.
pub fn pump(engine: &Rc<Engine>) {
    loop {
        let effect = engine.session.borrow_mut().poll_effect();
        let Some(effect) = effect else { break };
        execute(engine, effect);
    }
    let warnings = engine.client.store.borrow().take_warnings();
    if !warnings.is_empty() {
        for w in warnings {
            let message = format!("{}: {}", w.kind, w.message);
            engine
                .session
                .borrow_mut()
                .handle(Input::StorageWarning { message }, js::now_ms());
        }
        return pump(engine);
    }
    arm_timer(engine);
}

fn execute(engine: &Rc<Engine>, effect: Effect) {
    let weak = Rc::downgrade(engine);
    match effect {
        Effect::Request(request) => match AbortController::new() {
            Ok(abort) => {
                engine
                    .io
                    .borrow_mut()
                    .aborts
                    .push((request.id, abort.clone()));
                spawn_local(perform(weak, request, abort));
            }
            Err(_) => {
                let id = request.id;
                spawn_local(async move { feed_weak(&weak, Input::NetworkError { request: id }) });
            }
        },
        Effect::OpenEventSource { id, url } => open_event_source(engine, id, &url),
        Effect::Abort { id } => {
            let mut io = engine.io.borrow_mut();
            if let Some(i) = io.aborts.iter().position(|(r, _)| *r == id) {
                io.aborts.swap_remove(i).1.abort();
            }
            io.sources.retain(|(r, _)| *r != id);
        }
        Effect::RefreshHeaders { id } => {
            let provider = engine.client.options.headers.clone();
            spawn_local(async move {
                let ok = headers::resolve(provider.as_ref()).await.is_ok();
                feed_weak(&weak, Input::HeadersRefreshed { request: id, ok });
            });
        }
        Effect::Storage(write) => engine.client.store.borrow_mut().perform(&write),
        Effect::Settle { command, outcome } => settle(engine, command, outcome),
        Effect::Tab(effect) => tab_effect(engine, effect),
        Effect::Notify => {
            let listener = engine.io.borrow().listener.clone();
            if let Some(listener) = listener {
                let urgent = engine.session.borrow().status_notified();
                let _ = listener.call1(&JsValue::UNDEFINED, &JsValue::from_bool(urgent));
            }
        }
    }
}

/// Hands one tab effect to the TS layer's handler (outside any borrow).
fn tab_effect(engine: &Rc<Engine>, effect: TabEffect) {
    let Some(handler) = engine.io.borrow().tabs.clone() else {
        return;
    };
    let this = JsValue::UNDEFINED;
    let _ = match effect {
        TabEffect::Relay {
            turn_id,
            sequence_number,
            data,
        } => {
            let args = js_sys::Array::of4(
                &JsValue::from_str("relay"),
                &JsValue::from_str(&turn_id),
                &JsValue::from_f64(sequence_number as f64),
                &JsValue::from_str(&data),
            );
            handler.apply(&this, &args)
        }
        TabEffect::Keep { turn_id, frames } => {
            let kept = js_sys::Array::new_with_length(frames.len() as u32);
            for (i, (sequence_number, data)) in frames.iter().enumerate() {
                let frame = js_sys::Array::of2(
                    &JsValue::from_f64(*sequence_number as f64),
                    &JsValue::from_str(data),
                );
                kept.set(i as u32, frame.into());
            }
            let args = js_sys::Array::of5(
                &JsValue::from_str("keep"),
                &JsValue::from_str(&turn_id),
                &JsValue::UNDEFINED,
                &JsValue::UNDEFINED,
                &kept,
            );
            handler.apply(&this, &args)
        }
        TabEffect::Follow { turn_id, after } => handler.call3(
            &this,
            &JsValue::from_str("follow"),
            &JsValue::from_str(&turn_id),
            &JsValue::from_f64(after as f64),
        ),
        TabEffect::Ended { turn_id } => handler.call2(
            &this,
            &JsValue::from_str("ended"),
            &JsValue::from_str(&turn_id),
        ),
        TabEffect::LiveGone { turn_id } => handler.call2(
            &this,
            &JsValue::from_str("gone"),
            &JsValue::from_str(&turn_id),
        ),
        TabEffect::Heartbeat { streaming } => handler.call2(
            &this,
            &JsValue::from_str("heartbeat"),
            &JsValue::from_bool(streaming),
        ),
        TabEffect::Steal => handler.call1(&this, &JsValue::from_str("steal")),
    };
}

fn settle(engine: &Rc<Engine>, command: CommandId, outcome: Result<Settled, SessionError>) {
    let entry = {
        let mut io = engine.io.borrow_mut();
        let i = io.pending.iter().position(|(c, ..)| *c == command);
        i.map(|i| io.pending.swap_remove(i))
    };
    let Some((_, resolve, reject)) = entry else {
        return;
    };
    // The settlement's own shape: `undefined`, the turn id, the followed turn or `null`, found,
    // the exported events (JSON text through one `JSON.parse`).
    let _ = match outcome {
        Ok(Settled::Done) => resolve.call1(&JsValue::UNDEFINED, &JsValue::UNDEFINED),
        Ok(Settled::Turn(t)) => resolve.call1(&JsValue::UNDEFINED, &JsValue::from_str(&t)),
        Ok(Settled::Resumed(t) | Settled::Created(t)) => resolve.call1(
            &JsValue::UNDEFINED,
            &t.map_or(JsValue::NULL, |t| JsValue::from_str(&t)),
        ),
        Ok(Settled::Restored(found)) => {
            resolve.call1(&JsValue::UNDEFINED, &JsValue::from_bool(found))
        }
        Ok(Settled::Events(events)) => match snapshot::json_to_js(&events) {
            Ok(items) => resolve.call1(&JsValue::UNDEFINED, &items),
            Err(e) => reject.call1(&JsValue::UNDEFINED, &crate::error::to_js(&e)),
        },
        Err(e) => reject.call1(&JsValue::UNDEFINED, &crate::error::to_js(&e)),
    };
}

/// Performs one request and feeds its results back.
async fn perform(weak: Weak<Engine>, request: HttpRequest, abort: AbortController) {
    let id = request.id;
    let Some(client) = weak.upgrade().map(|e| e.client.clone()) else {
        return;
    };
    let options = &client.options;
    let Ok(mut headers) = headers::resolve(options.headers.as_ref()).await else {
        forget_abort(&weak, id);
        return feed_weak(&weak, Input::HeadersUnavailable { request: id });
    };
    let is_stream = request.response == ResponseKind::Stream;
    if is_stream {
        headers.push(("accept".into(), "text/event-stream".into()));
        if let Some(cursor) = request.last_event_id {
            headers.push(("last-event-id".into(), cursor.to_string()));
        }
    }
    let credentials = options.config.credentials.as_str();
    let result = match http::open(&request, &headers, credentials, &abort.signal()).await {
        Ok(response) if is_stream && response.ok() => stream(&weak, id, response, &abort).await,
        Ok(response) => http::whole(response, is_stream).await.map(|r| {
            let input = Input::Response {
                request: id,
                status: r.status,
                retry_after: r.retry_after.as_deref(),
                body: &r.body,
            };
            feed_weak(&weak, input)
        }),
        Err(e) => Err(e),
    };
    forget_abort(&weak, id);
    if let Err(fetch::FetchError::Network(_) | fetch::FetchError::InvalidRequest(_)) = result {
        feed_weak(&weak, Input::NetworkError { request: id });
    }
}

/// Request `id` finished: its `AbortController` is no longer needed.
fn forget_abort(weak: &Weak<Engine>, id: RequestId) {
    if let Some(engine) = weak.upgrade() {
        engine.io.borrow_mut().aborts.retain(|(r, _)| *r != id);
    }
}

/// A live stream answered 2xx: its head, then every chunk of the body handed to the engine
/// synchronously as the pipe writes it, the engine's effects carried out before the next
/// chunk. Reads never wait on rendering (the TS layer coalesces snapshot publishing per
/// animation frame instead).
async fn stream(
    weak: &Weak<Engine>,
    id: RequestId,
    response: gloo_net::http::Response,
    abort: &AbortController,
) -> Result<(), fetch::FetchError> {
    let content_type = response.headers().get("content-type");
    let input = Input::StreamOpened {
        request: id,
        status: response.status(),
        content_type: content_type.as_deref(),
        redirected: response.redirected(),
    };
    feed_weak(weak, input);
    // The engine refused the body (not an event stream) or no longer wants it: it aborted.
    if abort.signal().aborted() {
        return Ok(());
    }
    if let Some(body) = response.body() {
        let sink = weak.clone();
        let on_bytes = move |bytes: &[u8], now_ms: u64| match sink.upgrade() {
            Some(engine) => {
                feed_at(&engine, Input::Bytes { request: id, bytes }, now_ms);
                true
            }
            None => false,
        };
        fetch::pipe(&body, abort, on_bytes).await?;
    }
    feed_weak(weak, Input::End { request: id });
    Ok(())
}

fn open_event_source(engine: &Rc<Engine>, id: RequestId, url: &str) {
    let with_credentials = engine.client.options.config.credentials == Credentials::Include;
    let weak = Rc::downgrade(engine);
    let sink_weak = weak.clone();
    let sink = move |event: SourceEvent| match event {
        // The browser fails an EventSource whose response is not `text/event-stream`.
        SourceEvent::Open => feed_weak(
            &sink_weak,
            Input::StreamOpened {
                request: id,
                status: 200,
                content_type: Some("text/event-stream"),
                redirected: false,
            },
        ),
        SourceEvent::Message {
            data,
            last_event_id,
        } => feed_weak(
            &sink_weak,
            Input::Frame {
                request: id,
                data: &data,
                last_event_id: &last_event_id,
            },
        ),
        // An EventSource cannot tell EOF from failure; the engine checks the turn either way.
        SourceEvent::Error => feed_weak(&sink_weak, Input::NetworkError { request: id }),
    };
    match Source::open(url, with_credentials, sink) {
        Ok(source) => engine.io.borrow_mut().sources.push((id, source)),
        // Delivered on a later task: we are inside `pump`.
        Err(_) => spawn_local(async move { feed_weak(&weak, Input::NetworkError { request: id }) }),
    }
}

/// Keeps at most one `setTimeout` armed, never later than the engine's next deadline.
///
/// The idle watchdog's deadline moves later with every event, so re-arming on each move cost a
/// `clearTimeout` + `setTimeout` per network read. A timer armed for an earlier moment is kept
/// instead: its tick comes early, which the engine treats as a no-op, and the pump after that
/// tick arms the real deadline.
fn arm_timer(engine: &Rc<Engine>) {
    let deadline = engine.session.borrow().poll_timeout();
    let mut io = engine.io.borrow_mut();
    let armed = io.timer.as_ref().map(|(d, _)| *d);
    if matches!((armed, deadline), (Some(a), Some(d)) if a <= d) {
        return;
    }
    if let Some((_, handle)) = io.timer.take() {
        js::clear_timeout(&handle);
    }
    if let Some(deadline) = deadline {
        let delay = deadline.saturating_sub(js::now_ms()) as f64;
        let callback = engine.timer_callback.as_ref().unchecked_ref();
        io.timer = Some((deadline, js::set_timeout(callback, delay)));
    }
}

/// An engine's page listeners, each feeding one input; all removed on drop (on close):
/// `online` / `offline` on the window (pause retries while offline), `pageshow` with `persisted`
/// on the window (back from the back/forward cache: [`Lifecycle::Restored`]) and `resume` on
/// the document (after a freeze: [`Lifecycle::Resumed`]), `visibilitychange` on the document
/// (shown again: [`Input::Visible`], a look for turns made elsewhere). What follows is the engine's rule
/// (read the turn, then resubscribe or rebuild); a wake from sleep needs no listener, the
/// engine sees the clock jump. `pagehide` on the window ([`Input::PageHide`]) writes a
/// checkpoint the write interval still deferred (synchronously: localStorage), so a reload
/// resumes from the last applied frame; `freeze` needs none (a frozen page runs nothing).
struct PageListeners {
    online: Closure<dyn FnMut()>,
    offline: Closure<dyn FnMut()>,
    pageshow: Closure<dyn FnMut(web_sys::Event)>,
    pagehide: Closure<dyn FnMut()>,
    resume: Closure<dyn FnMut()>,
    /// `visibilitychange` on the document, fed as [`Input::Visible`] when the page shows again.
    visible: Closure<dyn FnMut()>,
}

impl PageListeners {
    fn attach(weak: &Weak<Engine>) -> Option<PageListeners> {
        let window = web_sys::window()?;
        let make = |input: fn() -> Input<'static>| {
            let weak = weak.clone();
            Closure::<dyn FnMut()>::new(move || feed_weak(&weak, input()))
        };
        let shown = weak.clone();
        let this = PageListeners {
            online: make(|| Input::Online),
            offline: make(|| Input::Offline),
            pageshow: Closure::new(move |event: web_sys::Event| {
                // `PageTransitionEvent.persisted`: the page comes from the bfcache (a first
                // load fires `pageshow` too, with `persisted: false`).
                let persisted = js_sys::Reflect::get(&event, &JsValue::from_str("persisted"))
                    .is_ok_and(|v| v.is_truthy());
                if persisted {
                    feed_weak(&shown, Input::Lifecycle(Lifecycle::Restored));
                }
            }),
            pagehide: make(|| Input::PageHide),
            resume: make(|| Input::Lifecycle(Lifecycle::Resumed)),
            visible: {
                let weak = weak.clone();
                Closure::new(move || {
                    // Read by name: `document.visibilityState` needs no web-sys feature so.
                    let shown = web_sys::window()
                        .and_then(|w| w.document())
                        .and_then(|d| {
                            js_sys::Reflect::get(&d, &JsValue::from_str("visibilityState")).ok()
                        })
                        .and_then(|v| v.as_string())
                        .is_some_and(|v| v == "visible");
                    if shown {
                        feed_weak(&weak, Input::Visible);
                    }
                })
            },
        };
        for (name, f) in this.window_listeners() {
            let _ = window.add_event_listener_with_callback(name, f);
        }
        if let Some(document) = window.document() {
            let _ = document
                .add_event_listener_with_callback("resume", this.resume.as_ref().unchecked_ref());
            let _ = document.add_event_listener_with_callback(
                "visibilitychange",
                this.visible.as_ref().unchecked_ref(),
            );
        }
        Some(this)
    }

    fn window_listeners(&self) -> [(&'static str, &Function); 4] {
        [
            ("online", self.online.as_ref().unchecked_ref()),
            ("offline", self.offline.as_ref().unchecked_ref()),
            ("pageshow", self.pageshow.as_ref().unchecked_ref()),
            ("pagehide", self.pagehide.as_ref().unchecked_ref()),
        ]
    }
}

impl Drop for PageListeners {
    fn drop(&mut self) {
        let Some(window) = web_sys::window() else {
            return;
        };
        for (name, f) in self.window_listeners() {
            let _ = window.remove_event_listener_with_callback(name, f);
        }
        if let Some(document) = window.document() {
            let _ = document.remove_event_listener_with_callback(
                "resume",
                self.resume.as_ref().unchecked_ref(),
            );
            let _ = document.remove_event_listener_with_callback(
                "visibilitychange",
                self.visible.as_ref().unchecked_ref(),
            );
        }
    }
}
