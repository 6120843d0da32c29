//! The emulator's shared state and the operations behind the routes: create a session,
//! create a turn (freezing a running one), cancel.

use crate::clock::{now_iso, UlidSource};
use crate::config::ServerConfig;
use crate::continuation::TurnInput;
use crate::control::{Crash, TurnControl};
use crate::error::ApiError;
use crate::event::{Event, EventBody};
use crate::fault::FaultLedger;
use crate::live::{LiveRegistry, LiveTurn};
use crate::runner::{run_turn, TurnContext, TurnJob};
use crate::scenario::Catalogue;
use crate::store::{SessionRow, Store, TurnRow};
use crate::wire::{self, Totals};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The two server families (PROTOCOL.md, table at the top).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Open-source TrueForge: `/api/v1`, GET subscribe, `Last-Event-ID` wins.
    Trueforge,
    /// TrueFoundry gateway: `/v1/agents`, POST subscribe, body cursor wins.
    Gateway,
}

impl Flavor {
    /// `trueforge` / `gateway`, as stored on sessions.
    pub fn as_str(self) -> &'static str {
        match self {
            Flavor::Trueforge => "trueforge",
            Flavor::Gateway => "gateway",
        }
    }
}

/// Per-request choices for a new turn (from the request and its fault spec).
#[derive(Clone, Debug, Default)]
pub struct TurnOptions {
    /// See [`crate::runner::TurnJob::origin`].
    pub origin: Option<String>,
    /// See [`crate::runner::TurnJob::crash`].
    pub crash: Option<Crash>,
}

/// Everything the routes share.
pub struct Runtime {
    /// The configuration.
    pub config: ServerConfig,
    /// SQLite.
    pub store: Arc<Store>,
    /// Live buffers.
    pub live: Arc<LiveRegistry>,
    /// Live SSE connections open per session (`GET /_emulator/streams/{sid}`).
    pub streams: Arc<crate::gauge::StreamGauge>,
    /// Scenarios by name.
    pub scenarios: Catalogue,
    /// Id source.
    pub ids: Arc<UlidSource>,
    /// `once` / `times` bookkeeping.
    pub ledger: FaultLedger,
    controls: Mutex<HashMap<String, Arc<TurnControl>>>,
}

impl Runtime {
    /// Opens the store and loads scenarios.
    pub fn new(config: ServerConfig) -> Result<Self, String> {
        let store = Store::open(&config.db).map_err(|e| format!("opening {}: {e}", config.db))?;
        let scenarios = Catalogue::load(config.scenarios_dir.as_deref())?;
        if let Some(url) = &config.public_url {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "--public-url {url}: must start with http:// or https://"
                ));
            }
        }
        if scenarios.get(&config.default_agent).is_none() {
            return Err(format!(
                "default agent {} is not a scenario",
                config.default_agent
            ));
        }
        let runtime = Self {
            live: Arc::new(LiveRegistry::new(config.stream_ttl, config.done_ttl)),
            streams: Arc::default(),
            ids: Arc::new(UlidSource::new(config.seed)),
            store: Arc::new(store),
            scenarios,
            ledger: FaultLedger::default(),
            controls: Mutex::new(HashMap::new()),
            config,
        };
        if runtime.config.abandon_on_start {
            runtime
                .abandon_left_running()
                .map_err(|e| format!("start-up clean-up: {e}"))?;
        }
        Ok(runtime)
    }

    /// The optional start-up clean-up (`--abandon-on-start`): every turn an earlier process left
    /// `running` ends `cancelled`/`abandoned` with all metrics 0, and its `turn.done` is stored
    /// like any other, so the event listing says what GET turn says. TrueForge does not do
    /// this (its turns stay `running` after a crash); the flag is for apps that want the
    /// kinder behaviour during development.
    fn abandon_left_running(&self) -> rusqlite::Result<usize> {
        let ids = self.store.running_turn_ids()?;
        for id in &ids {
            let state = wire::cancelled_state("abandoned", Totals::default());
            let done = Event::turn_done(self.ids.next(), now_iso(), state.clone());
            self.store.finish_turn(id, &state, &[], &done)?;
        }
        Ok(ids.len())
    }

    fn controls(&self) -> MutexGuard<'_, HashMap<String, Arc<TurnControl>>> {
        match self.controls.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    /// The narrow view of the runtime a turn's runner gets.
    pub fn turn_context(&self) -> TurnContext {
        TurnContext {
            store: self.store.clone(),
            ids: self.ids.clone(),
            live: self.live.clone(),
            pace_ms: self.config.pace_ms,
            seed: self.config.seed,
        }
    }

    fn forget_control(&self, turn_id: &str) {
        self.controls().remove(turn_id);
    }

    /// `http://HOST:PORT` that absolute URLs written by the emulator start with: `public_url`,
    /// else the bound address (an unspecified IP reads as loopback). Never the request's `Host`
    /// (a hostile page could otherwise plant its own origin in a stored `auth_url`).
    pub fn public_origin(&self) -> String {
        if let Some(url) = &self.config.public_url {
            return url.trim_end_matches('/').to_owned();
        }
        let mut addr = self.config.addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr {
                std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        format!("http://{addr}")
    }

    /// Whether a request's `Host` (`name[:port]`, IPv6 in brackets) names this emulator:
    /// `localhost`, a loopback IP, the listen IP, or an `allowed_hosts` entry (`name` for any
    /// port, `name:port` for one). Case-insensitive.
    pub fn host_allowed(&self, host: &str) -> bool {
        let Ok(authority) = host.parse::<axum::http::uri::Authority>() else {
            return false;
        };
        if authority.as_str() != host || host.contains('@') {
            return false;
        }
        let name = authority.host().to_ascii_lowercase();
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        let ip = bare.parse::<std::net::IpAddr>().ok();
        if name == "localhost"
            || ip.is_some_and(|ip| ip.is_loopback())
            || ip.is_some_and(|ip| !ip.is_unspecified() && ip == self.config.addr.ip())
        {
            return true;
        }
        let with_port = authority.as_str().to_ascii_lowercase();
        self.config.allowed_hosts.iter().any(|allowed| {
            let allowed = allowed.to_ascii_lowercase();
            allowed == name || allowed == with_port
        })
    }

    /// Number of turns whose runner is still going (for the memory report).
    pub fn running_turns(&self) -> usize {
        self.controls().len()
    }

    /// Creates a session. `agent` is the request's `agent` object (`{"name"}` or `{"spec"}`)
    /// or, for the gateway, the `agent_name` string. 404 for an unknown agent name.
    pub fn create_session(
        &self,
        flavor: Flavor,
        agent: &Value,
        fault: Option<String>,
    ) -> Result<SessionRow, ApiError> {
        let (scenario, agent_json) = match (flavor, agent) {
            (Flavor::Gateway, Value::String(name)) => (name.clone(), json!(name)),
            (Flavor::Trueforge, Value::Object(obj)) => {
                if let Some(name) = obj.get("name").and_then(Value::as_str) {
                    (name.to_owned(), json!({"type": "named", "name": name}))
                } else if let Some(spec) = obj.get("spec").filter(|s| s.is_object()) {
                    let named = spec
                        .get("name")
                        .and_then(Value::as_str)
                        .filter(|n| self.scenarios.get(n).is_some());
                    let scenario = named.unwrap_or(&self.config.default_agent).to_owned();
                    (scenario, json!({"type": "inline", "spec": spec}))
                } else {
                    return Err(ApiError::bad_request(
                        "Invalid request: agent needs `name` or `spec`",
                    ));
                }
            }
            (Flavor::Gateway, _) => {
                return Err(ApiError::bad_request(
                    "Invalid request: `agent_name` must be a string",
                ))
            }
            (Flavor::Trueforge, _) => {
                return Err(ApiError::bad_request(
                    "Invalid request: `agent` must be an object",
                ))
            }
        };
        if self.scenarios.get(&scenario).is_none() {
            return Err(ApiError::not_found(format!("Agent not found: {scenario}")));
        }
        let ulid = self.ids.next();
        let id = match flavor {
            Flavor::Trueforge => ulid,
            Flavor::Gateway => format!("{ulid}.{}", self.config.gateway_zone),
        };
        let now = now_iso();
        let row = SessionRow {
            id,
            flavor: flavor.as_str().into(),
            agent: agent_json,
            scenario,
            title: None,
            fault,
            created_at: now.clone(),
            updated_at: now,
        };
        self.store.insert_session(&row)?;
        Ok(row)
    }

    /// Ends a running turn with `cancelled`/`reason` (first terminal state wins) and tells its
    /// runner. Returns whether this call ended it.
    pub fn cancel_turn(&self, turn_id: &str, reason: &str) -> Result<bool, ApiError> {
        let control = self.controls().get(turn_id).cloned();
        let totals = control.as_ref().map(|c| c.totals()).unwrap_or_default();
        let state = wire::cancelled_state(reason, totals);
        let done = Event::turn_done(self.ids.next(), now_iso(), state.clone());
        let won = self
            .store
            .finish_turn(turn_id, &state, &[], &done)?
            .is_none();
        if won {
            if let Some(control) = control {
                control.cancel(reason);
            } else if let Some(live) = self.live.get(turn_id) {
                // No runner (it already stopped): end the live stream here.
                live.append(&done.to_json(), true);
            }
        }
        Ok(won)
    }

    /// Graceful shutdown, as TrueForge does it on SIGTERM: every live stream still open (no
    /// `turn.done` yet) gets a `turn.done` with state `{status:"cancelled", reason:"abandoned"}`
    /// and all metrics 0, which is also stored (unless the turn already has a terminal state —
    /// first terminal state wins — e.g. a turn frozen by a newer one, whose stream still gets
    /// the `abandoned` record); runners are told to stop. Returns how many streams were ended.
    pub fn abandon_open_streams(&self) -> usize {
        let open = self.live.unfinished();
        for (turn_id, live) in &open {
            let state = wire::cancelled_state("abandoned", Totals::default());
            let done = Event::turn_done(self.ids.next(), now_iso(), state.clone());
            let live_done = match self.store.finish_turn(turn_id, &state, &[], &done) {
                // The runner finished on its own just now: its record is the one to send.
                Ok(Some((stored, stored_done)))
                    if stored.get("reason").and_then(Value::as_str)
                        != Some("cancelled-for-next-turn") =>
                {
                    stored_done
                }
                Ok(_) => done,
                Err(err) => {
                    tracing::error!("abandoning turn {turn_id}: {err}");
                    done
                }
            };
            if let Some(control) = self.controls().get(turn_id).cloned() {
                control.cancel("abandoned");
            }
            live.append(&live_done.to_json(), true);
        }
        open.len()
    }

    /// Creates a turn and starts its runner. `previous` is the resolved parent; `input` the
    /// raw request input (echoed) and `resolved` its meaning. A running last turn of the
    /// session is frozen as `cancelled-for-next-turn` first (one left running by a crash, with
    /// no runner, is ended at once).
    pub fn create_turn(
        self: &Arc<Self>,
        flavor: Flavor,
        session: &SessionRow,
        previous: Option<&TurnRow>,
        input: Option<Value>,
        resolved: TurnInput,
        options: TurnOptions,
    ) -> Result<(TurnRow, Arc<LiveTurn>), ApiError> {
        if let Some(last) = self.store.last_turn(&session.id)? {
            if last.status() == "running" {
                self.cancel_turn(&last.id, "cancelled-for-next-turn")?;
            }
        }
        let index = self.store.turn_count(&session.id)?;
        // The session's position in the database salts the turn's generator: two sessions sent
        // the same message get different tool call ids (the refund tool is idempotent per call
        // id), and a fresh database still replays identically for a seed.
        let ordinal = self.store.session_ordinal(&session.id)?;
        let ulid = self.ids.next();
        let id = match flavor {
            Flavor::Trueforge => format!("{ulid}.local"),
            Flavor::Gateway => format!("{ulid}.{}.local", self.config.gateway_zone),
        };
        let created_at = now_iso();
        let row = TurnRow {
            id: id.clone(),
            session_id: session.id.clone(),
            previous_turn_id: previous.map(|p| p.id.clone()),
            input: input.clone(),
            state: json!({"status": "running"}),
            pending: Vec::new(),
            vars: Default::default(),
            created_at: created_at.clone(),
            index,
        };
        self.store.insert_turn(&row)?;
        let title = match &resolved {
            TurnInput::Message(text) => Some(text.chars().take(200).collect::<String>()),
            _ => None,
        };
        self.store
            .touch_session(&session.id, title.as_deref(), &created_at)?;

        let live = self.live.create(&id);
        let created = Event::new(
            self.ids.next(),
            Some(created_at),
            None,
            EventBody::TurnCreated {
                turn_id: id.clone(),
                previous_turn_id: previous.map(|p| p.id.clone()),
                input: input.clone(),
                state: json!({"status": "running"}),
                created_by: (flavor == Flavor::Gateway).then(wire::emulator_subject),
            },
        );
        let seq = live.append(&created.to_json(), false);
        self.store.persist_event(&id, seq as i64, &created)?;

        let control = Arc::new(TurnControl::new());
        self.controls().insert(id.clone(), control.clone());
        let scenario = self
            .scenarios
            .get(&session.scenario)
            .ok_or_else(|| ApiError::not_found(format!("Agent not found: {}", session.scenario)))?;
        let job = TurnJob {
            turn_id: id,
            live: live.clone(),
            control,
            rng_salt: format!(
                "{ordinal}/{}/{index}/{}",
                session.scenario,
                input.as_ref().map(Value::to_string).unwrap_or_default()
            ),
            scenario,
            input: resolved,
            parent_vars: previous.map(|p| p.vars.clone()),
            origin: options.origin,
            crash: options.crash,
        };
        let runtime = self.clone();
        tokio::spawn(async move {
            let turn_id = job.turn_id.clone();
            run_turn(runtime.turn_context(), job).await;
            runtime.forget_control(&turn_id);
        });
        Ok((row, live))
    }

    /// `{data: Turn}` body fields of a turn for `flavor`.
    pub fn turn_json(&self, flavor: Flavor, turn: &TurnRow) -> Value {
        let mut value = json!({
            "id": turn.id,
            "session_id": turn.session_id,
            "previous_turn_id": turn.previous_turn_id,
        });
        if let (Some(input), Value::Object(map)) = (&turn.input, &mut value) {
            map.insert("input".into(), input.clone());
        }
        if let Value::Object(map) = &mut value {
            map.insert("state".into(), turn.state.clone());
            map.insert("created_at".into(), json!(turn.created_at));
            if flavor == Flavor::Gateway {
                map.insert("created_by_subject".into(), wire::emulator_subject());
            }
        }
        value
    }

    /// The Session body for `flavor`.
    pub fn session_json(&self, flavor: Flavor, session: &SessionRow) -> Value {
        let mut value = json!({"id": session.id});
        if let Value::Object(map) = &mut value {
            match flavor {
                Flavor::Trueforge => {
                    map.insert("agent".into(), session.agent.clone());
                    map.insert("title".into(), json!(session.title));
                    map.insert("created_by".into(), json!("trueforge-default"));
                }
                Flavor::Gateway => {
                    map.insert("agent_name".into(), json!(session.scenario));
                    map.insert("title".into(), json!(session.title));
                    map.insert("created_by".into(), wire::emulator_subject());
                }
            }
            map.insert("created_at".into(), json!(session.created_at));
            map.insert("updated_at".into(), json!(session.updated_at));
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(edit: impl FnOnce(&mut ServerConfig)) -> Runtime {
        let mut config = ServerConfig::default();
        edit(&mut config);
        Runtime::new(config).unwrap()
    }

    #[test]
    fn hosts_are_loopback_the_listen_ip_or_allowed() {
        let rt = runtime(|c| {
            c.addr = "192.168.1.20:8790".parse().unwrap();
            c.allowed_hosts = vec!["box.lan".into()];
        });
        for host in [
            "localhost",
            "localhost:8790",
            "127.0.0.1:1",
            "[::1]:8790",
            "192.168.1.20:8790",
            "BOX.LAN:80",
        ] {
            assert!(rt.host_allowed(host), "{host}");
        }
        for host in [
            "evil.example",
            "192.168.1.21:8790",
            "localhost.evil.example",
            "u@localhost",
            "localhost/x",
            "",
        ] {
            assert!(!rt.host_allowed(host), "{host}");
        }
    }

    #[test]
    fn the_public_origin_is_configured_never_unspecified() {
        let rt = runtime(|c| c.addr = "0.0.0.0:8790".parse().unwrap());
        assert_eq!(rt.public_origin(), "http://127.0.0.1:8790");
        let rt = runtime(|c| c.public_url = Some("https://emu.test/".into()));
        assert_eq!(rt.public_origin(), "https://emu.test");
        let bad = Runtime::new(ServerConfig {
            public_url: Some("javascript:alert(1)".into()),
            ..ServerConfig::default()
        });
        assert!(bad.is_err());
    }
}
