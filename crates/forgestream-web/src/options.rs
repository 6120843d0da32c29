//! The client options object (`new AgentClient({...})`), read from JS once at construction: the
//! data part is the core's [`session::ClientOptions`] (read through its JSON text and
//! checked by the core), the header provider a JS function kept here.
use js_sys::{Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use forgestream_core::session::{self, ClientConfig, ErrorCode, SessionError};

/// Everything a client needs, immutable after construction.
pub struct ClientOptions {
    /// The checked data options (base URL, flavor, transport, storage, limits, reconnect policy).
    pub config: ClientConfig,
    /// `() => Promise<[name, value][]>` (the TS layer normalises the app's `HeadersInit` provider),
    /// called before every request attempt so tokens can refresh.
    pub headers: Option<Function>,
}

fn invalid(message: String) -> SessionError {
    SessionError::new(ErrorCode::InvalidInput, message)
}

impl ClientOptions {
    /// Reads `{ ...ClientOptions, headers?: () => Promise<[string, string][]> }`.
    /// Errors: `invalid-input` for a wrong type or value.
    pub fn from_js(obj: &JsValue) -> Result<Self, SessionError> {
        if !obj.is_object() {
            return Err(invalid("AgentClient options must be an object".into()));
        }
        let data: session::ClientOptions = crate::snapshot::json_from_js(obj)
            .map_err(|e| invalid(format!("invalid AgentClient options: {e}")))?;
        let headers = match Reflect::get(obj, &JsValue::from_str("headers")) {
            Ok(v) if v.is_undefined() || v.is_null() => None,
            Ok(v) => Some(
                v.dyn_into::<Function>()
                    .map_err(|_| invalid("option `headers` must be a function".into()))?,
            ),
            Err(_) => return Err(invalid("option `headers` is unreadable".into())),
        };
        Ok(ClientOptions {
            config: data.check()?,
            headers,
        })
    }

    /// The configuration of a new session engine (its own jitter seed, so engines spread their
    /// reconnects differently).
    pub fn session_config(&self) -> session::Config {
        let page_origin = web_sys::window().and_then(|w| w.location().origin().ok());
        self.config.session_config(random_seed(), page_origin)
    }
}

/// A jitter seed from `Math.random` (jitter only spreads reconnects; it needs no crypto quality).
fn random_seed() -> u64 {
    let hi = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    let lo = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    (hi << 32) | lo
}
