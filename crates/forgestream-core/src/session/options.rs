//! The `AgentClient` options the engine reads (`new AgentClient({...})`), as they arrive from JS
//! ([`ClientOptions`], deserialised by serde, declared to TypeScript by tsify), and their
//! checked form ([`ClientConfig`]). The app's callbacks (`headers`, `onWarning`) are functions,
//! not data: the TS layer and the web crate take those themselves.
use alloc::format;
use alloc::string::String;

use serde::Deserialize;

use crate::wire::json::{decode_str_enum, decode_struct};

use super::{Api, Config, ErrorCode, Flavor, SessionError, Transport};
use crate::reduce::ReducerConfig;
use crate::resume;

/// Default key namespace: records live under `forgestream:v1:session:<id>` and
/// `forgestream:v1:last`.
pub const DEFAULT_NAMESPACE: &str = "forgestream";

/// `fetch` credentials mode (and EventSource `withCredentials` for `include`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "kebab-case")]
pub enum Credentials {
    /// Never send cookies.
    Omit,
    /// Cookies for same-origin requests (the `fetch` default).
    #[default]
    SameOrigin,
    /// Cookies also cross-origin.
    Include,
}

impl Credentials {
    /// The `RequestCredentials` spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Credentials::Omit => "omit",
            Credentials::SameOrigin => "same-origin",
            Credentials::Include => "include",
        }
    }
}

/// Which Web Storage area backs the checkpoint store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum StorageKind {
    /// `localStorage` (survives the tab).
    #[default]
    Local,
    /// `sessionStorage` (this tab only).
    Session,
    /// Memory only (nothing survives a reload).
    Memory,
}

/// `reconnect` option: full-jitter exponential backoff (ms) between `minDelayMs` (default 250)
/// and `maxDelayMs` (default 30 000), base `baseDelayMs` (500), and the idle watchdog.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", default)]
pub struct ReconnectOptions {
    /// First backoff ceiling, ms.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub base_delay_ms: Option<f64>,
    /// The backoff floor, ms (never wait less).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub min_delay_ms: Option<f64>,
    /// The backoff cap, ms.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub max_delay_ms: Option<f64>,
    /// Reconnect when a live stream is silent this long, ms.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub idle_timeout_ms: Option<f64>,
    /// Give up after this many failed attempts in a row.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub max_attempts: Option<f64>,
    /// A stream request held open this long from when it was sent (ms, default 10 000), with no
    /// error status, was healthy: when it
    /// ends, the failed-attempt count starts over (idle cuts by proxies never add up).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub healthy_after_ms: Option<f64>,
    /// Longest idle watchdog (ms, default 180 000): each silent cycle of a turn that still
    /// reads `running` doubles it from `idleTimeoutMs` up to this.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub max_idle_timeout_ms: Option<f64>,
    /// Silent cycles after which `connection.stalled` is set (default 2, at least 1).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub stalled_after_cycles: Option<f64>,
    /// How long to look for the turn of a message whose create request got no answer (the
    /// server down, the connection lost mid-request), ms (default 10 000). Then the send
    /// rejects with `outcome-unknown` and the message reads `unknown`; `refresh()` (or the
    /// browser coming back online) looks again, never posting it twice (PROTOCOL §8.3).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub create_lookup_budget_ms: Option<f64>,
    /// After `outcome-unknown`, how long until the SDK looks for that message's turn again by
    /// itself, ms (default 2 000; 0: only `refresh()` and the browser's `online` event look
    /// again). Each look without an answer doubles the wait, up to `maxDelayMs`; the status
    /// stays `outcome-unknown` while one runs, and a look that answers makes the message `sent`
    /// (its turn followed) or `failed` (sending again is safe). None while offline.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub outcome_recheck_ms: Option<f64>,
}

/// The data part of the `AgentClient` options. Every field is optional.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase", default)]
pub struct ClientOptions {
    /// Server origin (+ tenant path for the gateway); `""` = same origin.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub base_url: Option<String>,
    /// Server family: open-source TrueForge (default) or the TrueFoundry gateway.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub flavor: Option<Flavor>,
    /// `fetch` credentials mode (default `"same-origin"`); `"include"` also sets EventSource
    /// `withCredentials`.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub credentials: Option<Credentials>,
    /// `"fetch"` (default; any method, custom headers) or `"eventsource"` (GET + cookies,
    /// TrueForge only).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub transport: Option<Transport>,
    /// Where resume checkpoints live (default `"local"`). Only IDs and cursors are stored.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub storage: Option<StorageKind>,
    /// Key namespace of the checkpoints (default `"forgestream"`, 1–64 characters), for several
    /// clients per origin.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub storage_namespace: Option<String>,
    /// Reconnect policy (ms).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub reconnect: Option<ReconnectOptions>,
    /// Per-frame byte cap of the SSE parser (default 16 MiB, at least 1024).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub max_frame_bytes: Option<f64>,
    /// Keep a bounded log of received frames for `session.eventLog()` (inspectors, demos).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub inspect: Option<bool>,
    /// Bytes of streamed text (content + reasoning + refusal, UTF-8) one message may grow to
    /// (default 64 MiB, at least 1024); past it the message keeps what it had and the turn gets a
    /// `TextTooLong` warning.
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub max_message_text_bytes: Option<f64>,
    /// The same bound for all streamed text of one turn (default 256 MiB, at least 1024).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub max_turn_text_bytes: Option<f64>,
    /// Which turns' items cross into JS (issue 16): `"onRead"` (default) — every turn's header
    /// at once, a turn's items when the app first reads `turn.items`, then kept current;
    /// `"all"` — every item with every snapshot (the full-history path, for apps that walk
    /// every item of a long history anyway).
    #[cfg_attr(feature = "tsify", tsify(optional))]
    pub turn_items: Option<super::TurnItems>,
}

// The hand-written decoders of the options (the serde derives above remain for tsify and as
// the tests' oracle): camelCase keys, every member optional, unknown members ignored.

decode_str_enum!(Credentials, "\"omit\", \"same-origin\" or \"include\"" {
    "omit" => Omit,
    "same-origin" => SameOrigin,
    "include" => Include,
});

decode_str_enum!(StorageKind, "\"local\", \"session\" or \"memory\"" {
    "local" => Local,
    "session" => Session,
    "memory" => Memory,
});

decode_str_enum!(Flavor, "\"trueforge\" or \"gateway\"" {
    "trueforge" => TrueForge,
    "gateway" => Gateway,
});

decode_str_enum!(Transport, "\"fetch\" or \"eventsource\"" {
    "fetch" => Fetch,
    "eventsource" => EventSource,
});

decode_struct!(ReconnectOptions, "the reconnect options object" {
    base_delay_ms: "baseDelayMs" => default,
    min_delay_ms: "minDelayMs" => default,
    max_delay_ms: "maxDelayMs" => default,
    idle_timeout_ms: "idleTimeoutMs" => default,
    max_attempts: "maxAttempts" => default,
    healthy_after_ms: "healthyAfterMs" => default,
    max_idle_timeout_ms: "maxIdleTimeoutMs" => default,
    stalled_after_cycles: "stalledAfterCycles" => default,
    create_lookup_budget_ms: "createLookupBudgetMs" => default,
    outcome_recheck_ms: "outcomeRecheckMs" => default,
});

decode_struct!(ClientOptions, "an options object" {
    base_url: "baseUrl" => default,
    flavor: "flavor" => default,
    credentials: "credentials" => default,
    transport: "transport" => default,
    storage: "storage" => default,
    storage_namespace: "storageNamespace" => default,
    reconnect: "reconnect" => default,
    max_frame_bytes: "maxFrameBytes" => default,
    inspect: "inspect" => default,
    max_message_text_bytes: "maxMessageTextBytes" => default,
    max_turn_text_bytes: "maxTurnTextBytes" => default,
    turn_items: "turnItems" => default,
});

/// The checked options: everything a client's engines need, fixed for the client's life.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientConfig {
    /// Endpoint builder (base URL + flavor).
    pub api: Api,
    /// Subscribe transport.
    pub transport: Transport,
    /// `fetch` credentials mode.
    pub credentials: Credentials,
    /// Checkpoint storage.
    pub storage: StorageKind,
    /// Checkpoint key namespace.
    pub storage_namespace: String,
    /// Reconnect policy (its `jitter_seed` is replaced per engine).
    pub reconnect: resume::Config,
    /// Per-frame byte cap, bytes.
    pub max_frame_bytes: usize,
    /// Keep the inspector's frame log.
    pub inspect: bool,
    /// The reducer's bounds (events per turn, text per message and per turn).
    pub reducer: ReducerConfig,
    /// Which turns' items cross into JS (option `turnItems`).
    pub turn_items: super::TurnItems,
}

fn invalid(message: String) -> SessionError {
    SessionError::new(ErrorCode::InvalidInput, message)
}

/// A non-negative finite number of ms (or a count), truncated.
fn ms(value: Option<f64>, key: &str) -> Result<Option<u64>, SessionError> {
    match value {
        None => Ok(None),
        Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n as u64)),
        Some(_) => Err(invalid(format!(
            "option `{key}` must be a non-negative number"
        ))),
    }
}

impl ClientOptions {
    /// Checks the options. Errors (`invalid-input`): `eventsource` with the gateway (which
    /// subscribes by POST), a namespace outside 1–64 characters, a negative or non-finite
    /// number.
    pub fn check(self) -> Result<ClientConfig, SessionError> {
        let flavor = self.flavor.unwrap_or(Flavor::TrueForge);
        let transport = self.transport.unwrap_or(Transport::Fetch);
        if transport == Transport::EventSource && flavor == Flavor::Gateway {
            return Err(invalid(
                "the eventsource transport needs GET subscribe: use flavor \"trueforge\" or transport \"fetch\"".into(),
            ));
        }
        let storage_namespace = self
            .storage_namespace
            .unwrap_or_else(|| DEFAULT_NAMESPACE.into());
        if storage_namespace.is_empty() || storage_namespace.chars().count() > 64 {
            return Err(invalid(
                "option `storageNamespace` must be 1 to 64 characters".into(),
            ));
        }
        let mut reconnect = resume::Config::default();
        let r = self.reconnect.unwrap_or_default();
        if let Some(v) = ms(r.base_delay_ms, "reconnect.baseDelayMs")? {
            reconnect.backoff_base_ms = v.max(1);
        }
        if let Some(v) = ms(r.max_delay_ms, "reconnect.maxDelayMs")? {
            reconnect.backoff_cap_ms = v.max(1);
        }
        if let Some(v) = ms(r.min_delay_ms, "reconnect.minDelayMs")? {
            reconnect.backoff_floor_ms = v;
        }
        if let Some(v) = ms(r.idle_timeout_ms, "reconnect.idleTimeoutMs")? {
            reconnect.idle_timeout_ms = v.max(1);
        }
        if let Some(v) = ms(r.max_attempts, "reconnect.maxAttempts")? {
            reconnect.max_attempts = u32::try_from(v).unwrap_or(u32::MAX).max(1);
        }
        if let Some(v) = ms(r.healthy_after_ms, "reconnect.healthyAfterMs")? {
            reconnect.healthy_after_ms = v;
        }
        if let Some(v) = ms(r.max_idle_timeout_ms, "reconnect.maxIdleTimeoutMs")? {
            reconnect.max_idle_timeout_ms = v.max(1);
        }
        if let Some(v) = ms(r.create_lookup_budget_ms, "reconnect.createLookupBudgetMs")? {
            reconnect.create_lookup_budget_ms = v;
        }
        if let Some(v) = ms(r.outcome_recheck_ms, "reconnect.outcomeRecheckMs")? {
            reconnect.outcome_recheck_ms = v;
        }
        if let Some(v) = ms(r.stalled_after_cycles, "reconnect.stalledAfterCycles")? {
            reconnect.stalled_after_cycles = u32::try_from(v).unwrap_or(u32::MAX).max(1);
        }
        let max_frame_bytes = ms(self.max_frame_bytes, "maxFrameBytes")?
            .map(|v| usize::try_from(v).unwrap_or(usize::MAX).max(1024))
            .unwrap_or(16 * 1024 * 1024);
        let mut reducer = ReducerConfig::default();
        let bytes = |v: u64| usize::try_from(v).unwrap_or(usize::MAX).max(1024);
        if let Some(v) = ms(self.max_message_text_bytes, "maxMessageTextBytes")? {
            reducer.max_message_text_bytes = bytes(v);
        }
        if let Some(v) = ms(self.max_turn_text_bytes, "maxTurnTextBytes")? {
            reducer.max_turn_text_bytes = bytes(v);
        }
        Ok(ClientConfig {
            api: Api::new(self.base_url.as_deref().unwrap_or_default(), flavor),
            transport,
            credentials: self.credentials.unwrap_or_default(),
            storage: self.storage.unwrap_or_default(),
            storage_namespace,
            reconnect,
            max_frame_bytes,
            inspect: self.inspect.unwrap_or(false),
            reducer,
            turn_items: self.turn_items.unwrap_or_default(),
        })
    }
}

impl ClientConfig {
    /// The configuration of one engine, whose reconnects spread with `jitter_seed`.
    pub fn session_config(&self, jitter_seed: u64, page_origin: Option<String>) -> Config {
        Config {
            page_origin,
            api: self.api.clone(),
            transport: self.transport,
            reconnect: resume::Config {
                jitter_seed,
                ..self.reconnect
            },
            max_frame_bytes: self.max_frame_bytes,
            inspect: self.inspect,
            reducer: self.reducer.clone(),
            history_screen_turns: super::HISTORY_SCREEN_TURNS,
            history_apply_max_events: super::HISTORY_APPLY_MAX_EVENTS,
            turn_items: self.turn_items,
        }
    }

    /// Whether engines of `self` may serve `other`'s handles (the page-wide registry): equal in
    /// everything but the jitter seed. The header provider (auth) is compared by the caller.
    pub fn same_as(&self, other: &ClientConfig) -> bool {
        let seedless = |c: &ClientConfig| resume::Config {
            jitter_seed: 0,
            ..c.reconnect
        };
        ClientConfig {
            reconnect: seedless(self),
            ..self.clone()
        } == ClientConfig {
            reconnect: seedless(other),
            ..other.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(json: &str) -> Result<ClientConfig, SessionError> {
        crate::wire::json::from_str::<ClientOptions>(json)
            .map_err(|e| invalid(format!("{e}")))?
            .check()
    }

    #[test]
    fn defaults_and_values() {
        let c = options("{}").unwrap();
        assert_eq!(c.transport, Transport::Fetch);
        assert_eq!(c.credentials, Credentials::SameOrigin);
        assert_eq!(c.storage, StorageKind::Local);
        assert_eq!(c.storage_namespace, DEFAULT_NAMESPACE);
        assert_eq!(c.max_frame_bytes, 16 * 1024 * 1024);
        assert_eq!(c.reconnect, resume::Config::default());
        let c = options(
            r#"{"baseUrl":"https://gw/t/","flavor":"gateway","credentials":"include",
                "storage":"memory","storageNamespace":"app","maxFrameBytes":10,
                "reconnect":{"minDelayMs":100,"maxDelayMs":0,"maxAttempts":2.7},"inspect":true}"#,
        )
        .unwrap();
        assert_eq!(c.api.flavor, Flavor::Gateway);
        assert_eq!(c.credentials.as_str(), "include");
        assert_eq!(c.max_frame_bytes, 1024, "raised to the minimum");
        assert_eq!(c.reconnect.backoff_floor_ms, 100);
        assert_eq!(c.reconnect.backoff_cap_ms, 1, "at least 1 ms");
        assert_eq!(c.reconnect.max_attempts, 2);
        assert!(c.inspect);
        let c = options(
            r#"{"reconnect":{"healthyAfterMs":500,"maxIdleTimeoutMs":0,"stalledAfterCycles":0}}"#,
        )
        .unwrap();
        assert_eq!(c.reconnect.healthy_after_ms, 500);
        assert_eq!(c.reconnect.max_idle_timeout_ms, 1, "at least 1 ms");
        assert_eq!(c.reconnect.stalled_after_cycles, 1, "at least one cycle");
        let c =
            options(r#"{"reconnect":{"createLookupBudgetMs":2500,"outcomeRecheckMs":0}}"#).unwrap();
        assert_eq!(c.reconnect.create_lookup_budget_ms, 2_500);
        assert_eq!(c.reconnect.outcome_recheck_ms, 0);
        assert_eq!(options("{}").unwrap().reconnect.outcome_recheck_ms, 2_000);
        assert_eq!(
            options("{}").unwrap().reconnect.create_lookup_budget_ms,
            10_000
        );
        let c = options(r#"{"maxMessageTextBytes":10,"maxTurnTextBytes":5000000}"#).unwrap();
        assert_eq!(
            c.reducer.max_message_text_bytes, 1024,
            "raised to the minimum"
        );
        assert_eq!(c.reducer.max_turn_text_bytes, 5_000_000);
        assert_eq!(c.session_config(1, None).reducer, c.reducer);
        assert_eq!(options("{}").unwrap().reducer, ReducerConfig::default());
    }

    #[test]
    fn bad_options_are_invalid_input() {
        for bad in [
            r#"{"transport":"websocket"}"#,
            r#"{"flavor":"gateway","transport":"eventsource"}"#,
            r#"{"credentials":"always"}"#,
            r#"{"storage":"disk"}"#,
            r#"{"storageNamespace":""}"#,
            r#"{"reconnect":{"baseDelayMs":-1}}"#,
            r#"{"reconnect":{"createLookupBudgetMs":-5}}"#,
            r#"{"maxFrameBytes":"big"}"#,
            r#"{"maxMessageTextBytes":-1}"#,
            r#"{"maxTurnTextBytes":"all"}"#,
        ] {
            let e = options(bad).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput, "{bad}");
        }
    }

    /// `storageNamespace` is 1 to 64 characters (characters, not bytes: 64 `é` are 128 bytes).
    #[test]
    fn a_storage_namespace_is_1_to_64_characters() {
        let at = |n: usize| format!(r#"{{"storageNamespace":"{}"}}"#, "é".repeat(n));
        for n in [1, 63, 64] {
            let c = options(&at(n)).unwrap_or_else(|e| panic!("{n} characters: {e:?}"));
            assert_eq!(c.storage_namespace.chars().count(), n);
        }
        for n in [0, 65, 200] {
            let e = options(&at(n)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidInput, "{n} characters");
        }
    }

    #[test]
    fn engines_share_across_jitter_seeds_only() {
        let a = options("{}").unwrap();
        let mut b = a.clone();
        b.reconnect.jitter_seed = 99;
        assert!(a.same_as(&b));
        b.storage_namespace = "other".into();
        assert!(!a.same_as(&b));
    }
}
