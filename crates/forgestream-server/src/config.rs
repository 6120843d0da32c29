//! Server configuration: every knob of the CLI, with TrueForge's defaults.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Everything [`crate::Server::start`] needs. `Default` gives the real server's retention rules
/// (PROTOCOL.md §4) on `127.0.0.1:8790` with an in-memory store.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Listen address; port 0 picks a free port (tests).
    pub addr: SocketAddr,
    /// SQLite database: a file path, or `:memory:`.
    pub db: String,
    /// Directory of the demo app served at `/` (SPA fallback to `index.html`).
    pub www: Option<PathBuf>,
    /// Directory of extra scenario `*.json` files; same-named files override built-ins.
    pub scenarios_dir: Option<PathBuf>,
    /// Default pause between streamed deltas, in ms (scenarios and the `pace_ms` variable
    /// may override it per turn).
    pub pace_ms: u64,
    /// When set, every API request needs `Authorization: Bearer <token>` (else 401).
    pub token: Option<String>,
    /// Live-buffer retention while a turn runs, refreshed on each event (TrueForge: 900 s).
    pub stream_ttl: Duration,
    /// Live-buffer retention after `turn.done` (TrueForge: 300 s).
    pub done_ttl: Duration,
    /// Subscribe answers 412 when the live buffer expires within this (TrueForge: 60 s).
    pub subscribe_threshold: Duration,
    /// A subscribe stream closes after this long without `turn.done` (TrueForge: 600 s).
    pub subscribe_timeout: Duration,
    /// Origins allowed by CORS (exact match); empty = no CORS headers, like TrueForge.
    pub cors_origins: Vec<String>,
    /// Request headers a CORS preflight allows; empty = `Authorization`, `Content-Type`,
    /// `Last-Event-ID`, `x-forgestream-fault`. E.g. only `content-type`: a proxy that refuses
    /// the preflight of a resume sending `Last-Event-ID` (issue 14).
    pub cors_allow_headers: Vec<String>,
    /// Server-wide fault spec (README "Fault injection"), used when a request and its session
    /// carry none.
    pub fault: Option<String>,
    /// Seed for ids' random parts, tool call ids, thread ids, interleaving and fault splits.
    pub seed: u64,
    /// Scenario used for `{"agent":{"spec":{…}}}` sessions whose spec names no known scenario.
    pub default_agent: String,
    /// Gateway zone written into gateway session and turn ids (`<ulid>.<zone>`).
    pub gateway_zone: String,
    /// Request bodies above this many bytes get 413.
    pub max_body_bytes: usize,
    /// Start-up clean-up (off by default: TrueForge does none): turns left `running`
    /// by an earlier process are ended `cancelled`/`abandoned`, with a `turn.done` in their
    /// event listing. Off, they stay `running` like after a real crash: subscribe answers 412
    /// and the next turn cancels them as `cancelled-for-next-turn`.
    pub abandon_on_start: bool,
    /// Multi-replica mode (README "Multi-replica mode"): when set, subscribes are served by
    /// polling the live buffer, sleeping this long whenever nothing is new (TrueForge behind a
    /// load balancer: 1 s); `None` = one replica, subscribers woken on every event.
    pub replica_poll: Option<Duration>,
    /// In multi-replica mode, how long a `POST …/cancel` takes to reach the turn's owner
    /// (measured on TrueForge: ≥ 200 ms).
    pub replica_cancel_delay: Duration,
    /// On SIGTERM / Ctrl-C: how long open streams may take to deliver their `turn.done`
    /// `abandoned` before the process exits (TrueForge waits ~10 s; a short bound keeps tests
    /// and restarts quick).
    pub shutdown_drain: Duration,
    /// Extra names the `Host` header may carry (`name` = any port, `name:port` = that port).
    /// Always allowed: `localhost`, loopback addresses and the listen address's IP. Anything
    /// else is refused (403) — a DNS-rebinding page sends its own name.
    pub allowed_hosts: Vec<String>,
    /// The origin absolute URLs the emulator writes (an MCP `auth_url` that is a path) are
    /// built on, e.g. `http://127.0.0.1:8790`; `None` = `http://` + the bound address
    /// (loopback for an unspecified IP). Never taken from the request's `Host`.
    pub public_url: Option<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], 8790)),
            db: ":memory:".into(),
            www: None,
            scenarios_dir: None,
            pace_ms: 15,
            token: None,
            stream_ttl: Duration::from_secs(900),
            done_ttl: Duration::from_secs(300),
            subscribe_threshold: Duration::from_secs(60),
            subscribe_timeout: Duration::from_secs(600),
            cors_origins: Vec::new(),
            cors_allow_headers: Vec::new(),
            fault: None,
            seed: 0,
            default_agent: "support".into(),
            gateway_zone: "dev".into(),
            max_body_bytes: 1024 * 1024,
            abandon_on_start: false,
            replica_poll: None,
            replica_cancel_delay: Duration::from_millis(200),
            shutdown_drain: Duration::from_secs(2),
            allowed_hosts: Vec::new(),
            public_url: None,
        }
    }
}
