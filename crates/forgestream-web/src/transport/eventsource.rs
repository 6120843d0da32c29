//! The `EventSource` transport (TrueForge flavor only: `GET` with cookies, no custom headers).
//!
//! The browser parses SSE itself here, so frames arrive as `MessageEvent`s rather than bytes. Its
//! own reconnect loop is disabled in effect: on the first `error` the source is closed and the
//! core's recovery machine decides what happens next (an `EventSource` cannot see status codes, so
//! a 412 shows up as an error and the machine checks the turn before anything else).
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{EventSource, EventSourceInit, MessageEvent};

/// What the source reported.
pub enum SourceEvent {
    /// The connection opened (the server answered 200 with `text/event-stream`).
    Open,
    /// One `message` event: its data and the browser's last-event-id buffer.
    Message { data: String, last_event_id: String },
    /// The connection failed or ended; the source is already closed.
    Error,
}

/// An open `EventSource` with its listeners; closes and detaches them on drop. Not `Clone`.
pub struct Source {
    source: EventSource,
    _on_open: Closure<dyn FnMut(web_sys::Event)>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::Event)>,
}

impl Source {
    /// Opens `url` (`withCredentials` sends cookies cross-origin). `sink` receives every event.
    pub fn open(
        url: &str,
        with_credentials: bool,
        sink: impl Fn(SourceEvent) + 'static,
    ) -> Result<Source, String> {
        let init = EventSourceInit::new();
        init.set_with_credentials(with_credentials);
        let source = EventSource::new_with_event_source_init_dict(url, &init).map_err(|e| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .unwrap_or_else(|| "EventSource could not be created".into())
        })?;
        // `Fn`, shared by the three listeners: the browser dispatches each event as its own
        // task, never inside another listener's call.
        let sink = std::rc::Rc::new(sink);
        let on_open = {
            let sink = sink.clone();
            Closure::<dyn FnMut(web_sys::Event)>::new(move |_| sink(SourceEvent::Open))
        };
        let on_message = {
            let sink = sink.clone();
            Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
                let data = event.data().as_string().unwrap_or_default();
                let last_event_id = event.last_event_id();
                sink(SourceEvent::Message {
                    data,
                    last_event_id,
                })
            })
        };
        let on_error = {
            let source = source.clone();
            Closure::<dyn FnMut(web_sys::Event)>::new(move |_| {
                // Close before reporting so the browser never reconnects behind our back.
                source.close();
                sink(SourceEvent::Error)
            })
        };
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        source.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        Ok(Source {
            source,
            _on_open: on_open,
            _on_message: on_message,
            _on_error: on_error,
        })
    }
}

impl Drop for Source {
    fn drop(&mut self) {
        self.source.close();
        self.source.set_onopen(None);
        self.source.set_onmessage(None);
        self.source.set_onerror(None);
    }
}
