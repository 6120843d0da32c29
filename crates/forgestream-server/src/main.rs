//! The `forgestream-server` command line.

use clap::Parser;
use forgestream_server::{Server, ServerConfig};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A local TrueForge-compatible agent runtime emulator.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    /// Listen address (port 0 picks a free port; the real one is printed).
    #[arg(long, default_value = "127.0.0.1:8790")]
    addr: SocketAddr,
    /// SQLite database file, or `:memory:`.
    #[arg(long, default_value = "forgestream.sqlite")]
    db: String,
    /// Demo app directory served at `/`.
    #[arg(long)]
    www: Option<PathBuf>,
    /// Directory of extra scenario JSON files (same names override the built-ins).
    #[arg(long)]
    scenarios: Option<PathBuf>,
    /// Pause between streamed deltas, ms.
    #[arg(long, default_value_t = 15)]
    pace_ms: u64,
    /// Require `Authorization: Bearer TOKEN` on API requests.
    #[arg(long)]
    token: Option<String>,
    /// Live-stream retention while a turn runs, seconds.
    #[arg(long, default_value_t = 900)]
    stream_ttl: u64,
    /// Live-stream retention after `turn.done`, seconds.
    #[arg(long, default_value_t = 300)]
    done_ttl: u64,
    /// Subscribe is refused (412) when the stream expires within this many seconds.
    #[arg(long, default_value_t = 60)]
    subscribe_threshold: u64,
    /// A subscribe stream without `turn.done` closes after this many seconds.
    #[arg(long, default_value_t = 600)]
    subscribe_timeout: u64,
    /// Allowed CORS origin (repeatable); none by default, like TrueForge.
    #[arg(long = "cors-origin")]
    cors_origins: Vec<String>,
    /// A request header CORS preflights allow (repeatable); default: Authorization,
    /// Content-Type, Last-Event-ID, x-forgestream-fault.
    #[arg(long = "cors-allow-header")]
    cors_allow_headers: Vec<String>,
    /// Server-wide fault spec (see README).
    #[arg(long)]
    fault: Option<String>,
    /// Seed for deterministic runs.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Scenario for `{"agent":{"spec":…}}` sessions.
    #[arg(long, default_value = "support")]
    default_agent: String,
    /// Multi-replica mode: subscribes are served by polling, sleeping this many ms when
    /// nothing is new (TrueForge behind a load balancer: 1000); 0 = one replica.
    #[arg(long, default_value_t = 0)]
    replica_poll_ms: u64,
    /// Multi-replica mode: how long a cancel takes to reach the turn's owner, ms.
    #[arg(long, default_value_t = 200)]
    replica_cancel_delay_ms: u64,
    /// On SIGTERM / Ctrl-C, how long open streams may take to deliver their `turn.done`
    /// `abandoned` before the process exits, ms (TrueForge: ~10 s).
    #[arg(long, default_value_t = 2000)]
    shutdown_drain_ms: u64,
    /// Another name the `Host` header may carry (repeatable; `name` or `name:port`).
    /// `localhost`, loopback IPs and the listen IP are always allowed.
    #[arg(long = "allowed-host")]
    allowed_hosts: Vec<String>,
    /// Origin of the absolute URLs the emulator writes (e.g. an MCP `auth_url`); default
    /// `http://` + the bound address.
    #[arg(long)]
    public_url: Option<String>,
    /// On start, end turns an earlier process left running as `cancelled`/`abandoned`
    /// (TrueForge leaves them `running`; off by default).
    #[arg(long)]
    abandon_on_start: bool,
}

#[tokio::main]
async fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
    let cli = Cli::parse();
    let config = ServerConfig {
        addr: cli.addr,
        db: cli.db,
        www: cli.www,
        scenarios_dir: cli.scenarios,
        pace_ms: cli.pace_ms,
        token: cli.token,
        stream_ttl: Duration::from_secs(cli.stream_ttl),
        done_ttl: Duration::from_secs(cli.done_ttl),
        subscribe_threshold: Duration::from_secs(cli.subscribe_threshold),
        subscribe_timeout: Duration::from_secs(cli.subscribe_timeout),
        cors_origins: cli.cors_origins,
        cors_allow_headers: cli.cors_allow_headers,
        fault: cli.fault,
        seed: cli.seed,
        default_agent: cli.default_agent,
        abandon_on_start: cli.abandon_on_start,
        allowed_hosts: cli.allowed_hosts,
        public_url: cli.public_url,
        shutdown_drain: Duration::from_millis(cli.shutdown_drain_ms),
        replica_poll: (cli.replica_poll_ms > 0).then(|| Duration::from_millis(cli.replica_poll_ms)),
        replica_cancel_delay: Duration::from_millis(cli.replica_cancel_delay_ms),
        ..ServerConfig::default()
    };
    match Server::start(config).await {
        Ok(server) => {
            println!("listening on {}", server.url());
            let _ = std::io::stdout().flush();
            let ended = server.serve_until(shutdown_signal()).await;
            tracing::info!("shut down: {ended} open stream(s) ended as abandoned");
        }
        Err(err) => {
            eprintln!("forgestream-server: {err}");
            std::process::exit(1);
        }
    }
}

/// Resolves on Ctrl-C (SIGINT) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
