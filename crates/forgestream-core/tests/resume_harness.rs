//! Shared driver for the `resume_*` tests: a fake clock around one `Connection`.
//! Included by the other test files with `#[path]`; it holds no tests of its own.
#![allow(dead_code)]

use forgestream_core::resume::{Command, Config, Connection, ConnectionStatus, Input, Silence};

/// A connection plus a fake clock (ms).
pub struct Driver {
    pub conn: Connection,
    pub now: u64,
    /// Every `Command::Silence` report, in order. `drain` keeps them out of the command lists,
    /// so the exact sequences of the other rules stay as they were; the liveness tests read
    /// them here.
    pub silences: Vec<Option<Silence>>,
}

/// Test configuration: default policy with a fixed jitter seed.
pub fn config() -> Config {
    Config {
        jitter_seed: 7,
        ..Config::default()
    }
}

impl Driver {
    pub fn new(config: Config) -> Self {
        Driver {
            conn: Connection::new(config),
            now: 0,
            silences: Vec::new(),
        }
    }

    /// Feed `input` at the current time and drain every command it caused.
    pub fn feed(&mut self, input: Input) -> Vec<Command> {
        self.conn.handle(input, self.now);
        self.drain()
    }

    /// Move the clock forward by `ms` and deliver a `Tick`.
    pub fn advance(&mut self, ms: u64) -> Vec<Command> {
        self.now += ms;
        self.feed(Input::Tick)
    }

    /// Jump to the machine's next deadline (if any) and deliver a `Tick`.
    pub fn fire_timeout(&mut self) -> Vec<Command> {
        match self.conn.poll_timeout() {
            Some(at) => {
                assert!(
                    at >= self.now,
                    "deadline {at} in the past (now {})",
                    self.now
                );
                self.now = at;
                self.feed(Input::Tick)
            }
            None => Vec::new(),
        }
    }

    pub fn drain(&mut self) -> Vec<Command> {
        let mut out = Vec::new();
        while let Some(command) = self.conn.poll_command() {
            match command {
                Command::Silence(s) => self.silences.push(s),
                other => out.push(other),
            }
        }
        out
    }

    /// An event with a sequence number that is not `turn.done`.
    pub fn event(&mut self, sequence_number: u64) -> Vec<Command> {
        self.feed(Input::Event {
            sequence_number: Some(sequence_number),
            turn_done: false,
        })
    }

    /// The `turn.done` event.
    pub fn done(&mut self, sequence_number: u64) -> Vec<Command> {
        self.feed(Input::Event {
            sequence_number: Some(sequence_number),
            turn_done: true,
        })
    }

    pub fn headers(&mut self, status: u16) -> Vec<Command> {
        self.feed(Input::ResponseHeaders {
            status,
            retry_after_ms: None,
        })
    }
}

/// The `Reconnecting` status among `commands`, as (attempt, next_at_ms).
pub fn reconnecting(commands: &[Command]) -> Option<(u32, u64)> {
    commands.iter().find_map(|command| match command {
        Command::Status(ConnectionStatus::Reconnecting {
            attempt,
            next_at_ms,
        }) => Some((*attempt, *next_at_ms)),
        _ => None,
    })
}

/// Shorthands for the expected sequences.
pub fn status(status: ConnectionStatus) -> Command {
    Command::Status(status)
}

pub fn subscribe(after: u64) -> Command {
    Command::Subscribe { after }
}

pub fn persist(after: u64) -> Command {
    Command::Persist { after }
}
