//! Clients of the replay server (`tests/replay/server.mjs`, `FORGESTREAM_REPLAY_URL`), shared
//! by `replay.rs` (the recorded transcripts byte for byte) and `hostile.rs` (the same
//! transcripts tampered with).
use forgestream_web::client::{WasmClient, WasmSession};

use super::{await_js, get, options, set, summary};

/// The replay server's base URL for `scenario` (a recorded transcript's name, plus any
/// tampering suffix).
pub fn replay_base(scenario: &str) -> String {
    let base = option_env!("FORGESTREAM_REPLAY_URL").unwrap_or("http://127.0.0.1:8791");
    format!("{base}/{scenario}")
}

/// A memory-storage TrueForge client of `base` (fetch transport).
pub fn replay_client(base: &str) -> WasmClient {
    replay_client_idle(base, None)
}

/// As [`replay_client`], with the idle watchdog at `idle_ms` (default 5 s in the tests).
pub fn replay_client_idle(base: &str, idle_ms: Option<f64>) -> WasmClient {
    let o = options("memory", "trueforge", "fetch", None);
    set(&o, "baseUrl", base);
    if let Some(ms) = idle_ms {
        set(&get(&o, "reconnect"), "idleTimeoutMs", ms);
    }
    WasmClient::new(o).unwrap()
}

/// A new session of the recorded agent on `base`, from a [`replay_client_idle`].
pub async fn replay_session(base: &str, idle_ms: Option<f64>) -> WasmSession {
    replay_client_idle(base, idle_ms)
        .open_new_session("{\"agent\":{\"name\":\"recorded\"}}")
        .await
        .expect("create session")
}

/// The view the recorded listings give (turns + session timeline), from a fresh client's
/// `load()`.
pub async fn recorded_history(base: &str, session_id: &str) -> serde_json::Value {
    let s = replay_client(base).session(session_id.to_string());
    await_js(s.load()).await.expect("load recorded history");
    summary(&s)
}
