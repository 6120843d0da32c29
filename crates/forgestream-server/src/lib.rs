//! `forgestream-server`: a local emulator of the TrueForge agent runtime
//! (`/work/shared/spec/PROTOCOL.md`), with both the `trueforge` (`/api/v1`) and `gateway`
//! (`/v1/agents`) flavors over one SQLite store, scripted agents (JSON scenarios) and fault
//! injection. See the crate README for the scenario schema and the fault syntax.
//!
//! ```no_run
//! # async fn demo() -> Result<(), String> {
//! let mut config = forgestream_server::ServerConfig::default();
//! config.addr = "127.0.0.1:0".parse().unwrap();
//! let server = forgestream_server::Server::start(config).await?;
//! println!("listening on {}", server.url());
//! # Ok(()) }
//! ```

pub mod clock;
pub mod config;
pub mod continuation;
pub mod control;
pub mod error;
pub mod event;
pub mod fault;
pub mod gauge;
pub mod live;
mod routes;
pub mod runner;
pub mod runtime;
pub mod scenario;
pub mod sse;
pub mod store;
pub mod tools;
pub mod wire;

pub use config::ServerConfig;
pub use runtime::{Flavor, Runtime};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The axum application over a runtime (for embedding in another server or test harness).
pub fn app(runtime: Arc<Runtime>) -> axum::Router {
    routes::router(runtime)
}

/// A running server.
pub struct Server {
    /// The bound address (the real port when the config asked for port 0).
    pub addr: SocketAddr,
    /// Shared state, for inspection (e.g. live-turn counts in the load example).
    pub runtime: Arc<Runtime>,
    task: tokio::task::JoinHandle<()>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl Server {
    /// Binds `config.addr`, opens the store, loads scenarios and serves in a background task.
    /// Errors: bind failure, store open failure, invalid scenario files.
    pub async fn start(mut config: ServerConfig) -> Result<Server, String> {
        let listener = tokio::net::TcpListener::bind(config.addr)
            .await
            .map_err(|e| format!("binding {}: {e}", config.addr))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        // The bound port (not 0): the host check and absolute URLs use it.
        config.addr = addr;
        let sweep_every =
            (config.done_ttl / 4).clamp(Duration::from_millis(100), Duration::from_secs(1));
        let runtime = Arc::new(Runtime::new(config)?);
        let app = app(runtime.clone());
        let sweeper = runtime.clone();
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(async move {
            let sweep = async move {
                loop {
                    tokio::time::sleep(sweep_every).await;
                    sweeper.live.sweep();
                }
            };
            let mut stop_rx = stop_rx;
            // Graceful: once told to stop, accept nothing new and let open responses finish
            // (their streams were just given their `turn.done`).
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = stop_rx.wait_for(|stop| *stop).await;
            });
            tokio::select! {
                result = serve => {
                    if let Err(err) = result {
                        tracing::error!("server stopped: {err}");
                    }
                }
                _ = sweep => {}
            }
        });
        Ok(Server {
            addr,
            runtime,
            task,
            stop: stop_tx,
        })
    }

    /// `http://ADDR`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Waits until the server task ends (it runs until the process exits or `stop`).
    pub async fn wait(self) {
        let _ = self.task.await;
    }

    /// Stops serving at once (open connections are dropped, no `turn.done` is written: for
    /// tests that want the abrupt end; see [`Server::shutdown`] for the graceful one).
    pub fn stop(&self) {
        self.task.abort();
    }

    /// Graceful shutdown (what SIGTERM and Ctrl-C do): every open live stream gets a
    /// `turn.done` `cancelled`/`abandoned` with metrics 0, which is stored
    /// ([`Runtime::abandon_open_streams`]); the server stops accepting connections and waits up
    /// to `config.shutdown_drain` for open responses to finish, then drops the rest (e.g. a
    /// subscribe hanging on a finished turn). Returns how many streams were ended.
    pub async fn shutdown(mut self) -> usize {
        let ended = self.runtime.abandon_open_streams();
        let _ = self.stop.send(true);
        let drain = self.runtime.config.shutdown_drain;
        if tokio::time::timeout(drain, &mut self.task).await.is_err() {
            self.task.abort();
        }
        ended
    }

    /// Serves until `signal` resolves, then shuts down gracefully ([`Server::shutdown`]);
    /// returns early if the server task ends on its own. The number of streams ended.
    pub async fn serve_until(mut self, signal: impl std::future::Future<Output = ()>) -> usize {
        tokio::select! {
            _ = &mut self.task => 0,
            _ = signal => self.shutdown().await,
        }
    }
}
