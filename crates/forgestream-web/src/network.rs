//! `online` / `offline` window events → the recovery machine (pause retries while offline).
use std::rc::Rc;

use forgestream_core::resume::Input;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::session::{SessionRc, SessionState};

/// Attaches the listeners once per session (kept while the session lives or until `detach`).
pub fn attach(rc: &SessionRc, state: &mut SessionState) {
    if state.network_listeners.is_some() {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let make = |input: Input| {
        let weak = Rc::downgrade(rc);
        Closure::<dyn FnMut()>::new(move || {
            let Some(rc) = weak.upgrade() else { return };
            let run_id = rc.borrow().run.as_ref().map(|r| r.run_id);
            if let Some(run_id) = run_id {
                crate::exec::feed(&weak, run_id, None, input);
            }
        })
    };
    let online = make(Input::Online);
    let offline = make(Input::Offline);
    let _ = window.add_event_listener_with_callback("online", online.as_ref().unchecked_ref());
    let _ = window.add_event_listener_with_callback("offline", offline.as_ref().unchecked_ref());
    state.network_listeners = Some((online, offline));
}

/// Removes the listeners.
pub fn detach(state: &mut SessionState) {
    let Some((online, offline)) = state.network_listeners.take() else {
        return;
    };
    if let Some(window) = web_sys::window() {
        let _ =
            window.remove_event_listener_with_callback("online", online.as_ref().unchecked_ref());
        let _ =
            window.remove_event_listener_with_callback("offline", offline.as_ref().unchecked_ref());
    }
}
