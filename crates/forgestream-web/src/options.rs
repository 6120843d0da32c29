//! The client options object (`new AgentClient({...})`), read from JS once at construction.
use js_sys::{Function, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::{ErrorCode, SessionError as SdkError};
use crate::storage::StorageKind;
use crate::transport::{parse_transport, TransportKind};
use forgestream_core::resume;
use forgestream_core::session::{self, Api, Flavor};

/// Everything a client needs, immutable after construction.
pub struct ClientOptions {
    pub api: Api,
    pub transport: TransportKind,
    /// `credentials` of every fetch: `"omit" | "same-origin" | "include"` (default `same-origin`).
    pub credentials: String,
    /// `() => Promise<[name, value][]>` (the TS layer normalises the app's `HeadersInit` provider),
    /// called before every request attempt so tokens can refresh.
    pub headers: Option<Function>,
    pub storage: StorageKind,
    /// Key namespace of the checkpoint store (default `"forgestream"`).
    pub storage_namespace: String,
    pub reconnect: resume::Config,
    /// Per-frame byte cap of the SSE parser (default 16 MiB).
    pub max_frame_bytes: usize,
    /// Keep a bounded log of received frames (sequence, type, thread, id, bytes) for inspectors.
    pub inspect: bool,
}

fn get(obj: &JsValue, key: &str) -> Option<JsValue> {
    Reflect::get(obj, &JsValue::from_str(key))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

fn get_string(obj: &JsValue, key: &str) -> Result<Option<String>, SdkError> {
    match get(obj, key) {
        None => Ok(None),
        Some(v) => v.as_string().map(Some).ok_or_else(|| {
            SdkError::new(
                ErrorCode::InvalidInput,
                format!("option `{key}` must be a string"),
            )
        }),
    }
}

fn get_ms(obj: &JsValue, key: &str) -> Result<Option<u64>, SdkError> {
    match get(obj, key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n as u64)),
            _ => Err(SdkError::new(
                ErrorCode::InvalidInput,
                format!("option `{key}` must be a non-negative number"),
            )),
        },
    }
}

fn invalid(message: String) -> SdkError {
    SdkError::new(ErrorCode::InvalidInput, message)
}

impl ClientOptions {
    /// Reads `{ baseUrl, flavor?, headers?, credentials?, transport?, storage?, maxFrameBytes?,
    /// storageNamespace?, inspect?, reconnect?: { baseDelayMs?, minDelayMs?, maxDelayMs?, idleTimeoutMs?, maxAttempts? } }`.
    /// Errors: `invalid-input` for a wrong type or value.
    pub fn from_js(obj: &JsValue) -> Result<Self, SdkError> {
        if !obj.is_object() {
            return Err(invalid("AgentClient options must be an object".into()));
        }
        let base_url = get_string(obj, "baseUrl")?.unwrap_or_default();
        let flavor = Flavor::parse(get_string(obj, "flavor")?.as_deref()).map_err(invalid)?;
        let transport =
            parse_transport(get_string(obj, "transport")?.as_deref()).map_err(invalid)?;
        if transport == TransportKind::EventSource && flavor == Flavor::Gateway {
            return Err(invalid(
                "the eventsource transport needs GET subscribe: use flavor \"trueforge\" or transport \"fetch\"".into(),
            ));
        }
        let credentials = get_string(obj, "credentials")?.unwrap_or_else(|| "same-origin".into());
        if !matches!(credentials.as_str(), "omit" | "same-origin" | "include") {
            return Err(invalid(format!("unknown credentials mode {credentials:?}")));
        }
        let headers = match get(obj, "headers") {
            None => None,
            Some(v) => Some(
                v.dyn_into::<Function>()
                    .map_err(|_| invalid("option `headers` must be a function".into()))?,
            ),
        };
        let storage = StorageKind::parse(get_string(obj, "storage")?.as_deref());
        let storage_namespace = get_string(obj, "storageNamespace")?
            .unwrap_or_else(|| crate::storage::DEFAULT_NAMESPACE.into());
        if storage_namespace.is_empty() || storage_namespace.len() > 64 {
            return Err(invalid(
                "option `storageNamespace` must be 1 to 64 characters".into(),
            ));
        }
        let mut reconnect = resume::Config::default();
        if let Some(r) = get(obj, "reconnect") {
            if let Some(v) = get_ms(&r, "baseDelayMs")? {
                reconnect.backoff_base_ms = v.max(1);
            }
            if let Some(v) = get_ms(&r, "maxDelayMs")? {
                reconnect.backoff_cap_ms = v.max(1);
            }
            if let Some(v) = get_ms(&r, "minDelayMs")? {
                reconnect.backoff_floor_ms = v;
            }
            if let Some(v) = get_ms(&r, "idleTimeoutMs")? {
                reconnect.idle_timeout_ms = v.max(1);
            }
            if let Some(v) = get_ms(&r, "maxAttempts")? {
                reconnect.max_attempts = u32::try_from(v).unwrap_or(u32::MAX).max(1);
            }
        }
        reconnect.jitter_seed = random_seed();
        let max_frame_bytes = get_ms(obj, "maxFrameBytes")?
            .map(|v| usize::try_from(v).unwrap_or(usize::MAX).max(1024))
            .unwrap_or(16 * 1024 * 1024);
        let inspect = get(obj, "inspect")
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        Ok(ClientOptions {
            api: Api::new(&base_url, flavor),
            transport,
            credentials,
            headers,
            storage,
            storage_namespace,
            reconnect,
            max_frame_bytes,
            inspect,
        })
    }
}

impl ClientOptions {
    /// The configuration of every session engine of this client.
    pub fn session_config(&self) -> session::Config {
        session::Config {
            api: self.api.clone(),
            transport: self.transport,
            reconnect: resume::Config {
                // Each engine spreads its reconnects differently.
                jitter_seed: random_seed(),
                ..self.reconnect
            },
            max_frame_bytes: self.max_frame_bytes,
            inspect: self.inspect,
        }
    }
}

/// A jitter seed from `Math.random` (jitter only spreads reconnects; it needs no crypto quality).
fn random_seed() -> u64 {
    let hi = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    let lo = (js_sys::Math::random() * 4_294_967_296.0) as u64;
    (hi << 32) | lo
}
