//! One turn's connection: the core's recovery machine plus the transport state that carries out
//! its commands. The session owns at most one `TurnRun` at a time.
use forgestream_core::resume::{Command, Connection, ConnectionStatus, Input, StartMode};
use forgestream_core::sse::{ParserConfig, SseParser};
use web_sys::AbortController;

use crate::options::ClientOptions;
use crate::transport::eventsource::Source;

/// Transport state of the request the machine has in flight.
#[derive(Default)]
pub struct OpenRequest {
    /// Closes a `fetch` request and its body stream.
    pub abort: Option<AbortController>,
    /// An open `EventSource` (closed on drop).
    pub source: Option<Source>,
}

impl OpenRequest {
    /// Closes whatever is open.
    pub fn close(&mut self) {
        if let Some(abort) = self.abort.take() {
            abort.abort();
        }
        self.source = None;
    }
}

/// One turn's stream and its recovery state.
pub struct TurnRun {
    /// Identity of this run; results of an older run are ignored.
    pub run_id: u64,
    /// Identity of the current request; `Abort` bumps it so late chunks of a closed request are
    /// dropped (at most one live connection, FIELD C16c).
    pub request_id: u64,
    pub machine: Connection,
    /// Unknown until `turn.created` arrives on a create stream (or the lookup finds it).
    pub turn_id: Option<String>,
    /// The create-turn request body (`CreateTurn` runs only); sent once.
    pub create_body: Option<String>,
    /// The session's newest turn id before our POST (effect recovery compares against it).
    pub previous_turn_id: Option<String>,
    pub parser: SseParser,
    pub open: OpenRequest,
    /// The last status the machine reported (the connection badge).
    pub status: ConnectionStatus,
    /// Settles the `send()` promise once the turn id is known (or the create failed).
    pub started: Option<(js_sys::Function, js_sys::Function)>,
    /// Highest sequence number persisted so far.
    pub persisted: u64,
}

impl TurnRun {
    /// A run that creates a turn with `create_body` (a JSON object), or attaches to `turn_id`.
    pub fn new(
        run_id: u64,
        options: &ClientOptions,
        mode: StartMode,
        turn_id: Option<String>,
        create_body: Option<String>,
        now_ms: u64,
    ) -> Self {
        let mut machine = Connection::new(options.reconnect);
        machine.handle(Input::Start { mode }, now_ms);
        TurnRun {
            run_id,
            request_id: 0,
            machine,
            turn_id,
            create_body,
            previous_turn_id: None,
            parser: SseParser::new(ParserConfig {
                max_frame_bytes: options.max_frame_bytes,
            }),
            open: OpenRequest::default(),
            status: ConnectionStatus::Connecting,
            started: None,
            persisted: 0,
        }
    }

    /// The next command, if any.
    pub fn poll(&mut self) -> Option<Command> {
        self.machine.poll_command()
    }

    /// Whether the machine has settled (done, failed or disconnected) and wants nothing more.
    pub fn is_settled(&self) -> bool {
        matches!(
            self.status,
            ConnectionStatus::Done | ConnectionStatus::Failed(_)
        )
    }
}
