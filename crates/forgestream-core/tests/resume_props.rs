//! Property tests: random input sequences against the connection machine's invariants.

use forgestream_core::resume::{
    Command, Config, Connection, ConnectionStatus, Input, Lifecycle, StartMode, MAX_CANCEL_SENDS,
};
use proptest::prelude::*;

/// One step of a random run.
#[derive(Debug, Clone)]
enum Op {
    /// Advance the clock by `dt` ms (may be 0) and feed `input`.
    Feed(u64, Input),
    /// Jump to `poll_timeout()` and tick.
    FireTimeout,
    /// The caller's clock jumps back by `dt` ms (must be tolerated).
    ClockBack(u64),
}

fn status_code() -> impl Strategy<Value = u16> {
    prop_oneof![
        Just(200u16),
        Just(204),
        Just(400),
        Just(401),
        Just(403),
        Just(404),
        Just(408),
        Just(409),
        Just(412),
        Just(429),
        Just(500),
        Just(503),
        Just(504),
        any::<u16>(),
    ]
}

fn retry_after() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        Just(None),
        (0u64..100_000).prop_map(Some),
        any::<u64>().prop_map(Some)
    ]
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        4 => (status_code(), retry_after())
            .prop_map(|(status, retry_after_ms)| Input::ResponseHeaders { status, retry_after_ms }),
        6 => (prop::option::of(0u64..200), prop::bool::weighted(0.05))
            .prop_map(|(sequence_number, turn_done)| Input::Event { sequence_number, turn_done }),
        1 => Just(Input::Comment),
        1 => any::<u64>().prop_map(Input::Retry),
        2 => Just(Input::Eof),
        2 => Just(Input::NetworkError),
        3 => any::<bool>().prop_map(|terminal| Input::TurnFetched { terminal }),
        1 => (prop::option::of(status_code()), retry_after())
            .prop_map(|(status, retry_after_ms)| Input::TurnFetchFailed { status, retry_after_ms }),
        1 => any::<bool>().prop_map(|found_ours| Input::TurnLookup { found_ours }),
        1 => (prop::option::of(status_code()), retry_after())
            .prop_map(|(status, retry_after_ms)| Input::TurnLookupFailed { status, retry_after_ms }),
        1 => any::<bool>().prop_map(|terminal| Input::RebuildDone { terminal }),
        1 => (prop::option::of(status_code()), retry_after())
            .prop_map(|(status, retry_after_ms)| Input::RebuildFailed { status, retry_after_ms }),
        1 => Just(Input::HeadersRefreshed),
        1 => Just(Input::HeadersRefreshFailed),
        2 => Just(Input::Tick),
        1 => Just(Input::Online),
        1 => Just(Input::Offline),
        1 => Just(Input::Cancel),
        1 => proptest::option::of(0u64..5_000).prop_map(|retry_after_ms| Input::CancelFailed { retry_after_ms }),
        1 => Just(Input::Refresh),
        1 => Just(Input::CheckTurn),
        1 => prop_oneof![
            Just(Lifecycle::Restored),
            Just(Lifecycle::Resumed),
            Just(Lifecycle::Woke),
        ]
        .prop_map(Input::Lifecycle),
        1 => prop_oneof![
            Just(StartMode::CreateTurn),
            prop::option::of(0u64..100).prop_map(|after| StartMode::Attach { after }),
        ]
        .prop_map(|mode| Input::Start { mode }),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (prop_oneof![Just(0u64), 0u64..2_000, 0u64..100_000], input())
            .prop_map(|(dt, input)| Op::Feed(dt, input)),
        4 => Just(Op::FireTimeout),
        1 => (0u64..10_000).prop_map(Op::ClockBack),
    ]
}

fn start_mode() -> impl Strategy<Value = StartMode> {
    prop_oneof![
        Just(StartMode::CreateTurn),
        prop::option::of(0u64..100).prop_map(|after| StartMode::Attach { after }),
    ]
}

fn config() -> impl Strategy<Value = Config> {
    (
        0u64..2_000,
        0u64..60_000,
        0u64..1_000,
        0u64..60_000,
        1u64..100_000,
        0u64..5_000,
        0u32..30,
        any::<u64>(),
    )
        .prop_map(
            |(base, cap, retry_min, retry_max, idle, persist, max_attempts, seed)| Config {
                backoff_base_ms: base,
                backoff_cap_ms: cap,
                backoff_floor_ms: retry_min,
                retry_min_ms: retry_min,
                retry_max_ms: retry_max,
                idle_timeout_ms: idle,
                persist_interval_ms: persist,
                max_attempts,
                jitter_seed: seed,
                healthy_after_ms: idle / 3,
                max_idle_timeout_ms: idle.saturating_mul(4),
                stalled_after_cycles: (max_attempts % 4).max(1),
                create_lookup_budget_ms: idle.saturating_mul(2),
                outcome_recheck_ms: persist,
            },
        )
}

/// Which request the model believes is open (as the web layer would see it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Stream { streaming: bool },
    GetTurn,
    Lookup,
    Rebuild,
}

/// The outside view of the machine, checked after every step.
struct Model {
    open: Option<Open>,
    posts: usize,
    attach: bool,
    last_persist: Option<u64>,
    cleared: bool,
    finished: bool,
    /// `PostCancel`s emitted, and whether the browser is offline (the model's view).
    cancels: u32,
    offline: bool,
    /// `CancelUndelivered` came: a new Stop starts a new budget.
    undelivered: bool,
    /// After `Done`: the stream that delivered `turn.done` is still open, left to end by
    /// itself (at most one `Abort` may follow, for it).
    draining: bool,
    last_status: Option<ConnectionStatus>,
    awaiting_refresh: bool,
    last_cursor: Option<u64>,
}

impl Model {
    /// Update the model for an input about to be fed (the web layer's view of its transport).
    fn before_input(&mut self, input: &Input) {
        let closes = match (input, self.open) {
            (Input::ResponseHeaders { status, .. }, Some(Open::Stream { streaming: false })) => {
                if (200..300).contains(status) {
                    self.open = Some(Open::Stream { streaming: true });
                    false
                } else {
                    true
                }
            }
            // A second status line on a live stream is nonsense: the machine ignores it.
            (Input::ResponseHeaders { .. }, Some(Open::Stream { streaming: true })) => false,
            (Input::ResponseHeaders { status, .. }, Some(_)) => !(200..300).contains(status),
            (Input::Event { .. }, Some(Open::Stream { streaming: false })) => {
                // A frame implies the 2xx the web layer did not report.
                self.open = Some(Open::Stream { streaming: true });
                false
            }
            (Input::Eof, Some(Open::Stream { .. })) => true,
            (Input::Eof | Input::NetworkError | Input::InvalidResponse, None) if self.draining => {
                // The draining stream ended by itself: no abort is due any more.
                self.draining = false;
                false
            }
            (Input::NetworkError, Some(_)) => true,
            (Input::TurnFetched { .. } | Input::TurnFetchFailed { .. }, Some(Open::GetTurn)) => {
                true
            }
            (Input::TurnLookup { .. } | Input::TurnLookupFailed { .. }, Some(Open::Lookup)) => true,
            (Input::RebuildDone { .. } | Input::RebuildFailed { .. }, Some(Open::Rebuild)) => true,
            _ => false,
        };
        if closes {
            self.open = None;
        }
        match input {
            Input::Offline => self.offline = true,
            Input::Online => self.offline = false,
            Input::Cancel if self.undelivered => {
                self.undelivered = false;
                self.cancels = 0;
            }
            _ => {}
        }
        if matches!(input, Input::HeadersRefreshed | Input::HeadersRefreshFailed) {
            self.awaiting_refresh = false;
        }
    }

    fn after_input(&mut self, input: &Input, commands: &[Command], conn: &Connection, now: u64) {
        let drain_abort = self.finished && self.draining && commands == [Command::Abort];
        assert!(
            !self.finished || commands.is_empty() || drain_abort,
            "commands after Done/Disconnect: {commands:?}"
        );
        if drain_abort {
            // Only when due, or when the app disconnects.
            assert!(
                matches!(input, Input::Tick | Input::Disconnect),
                "drain abort on {input:?}"
            );
            self.draining = false;
        }
        for command in commands {
            let opens = match command {
                Command::PostTurn => {
                    self.posts += 1;
                    assert!(!self.attach, "PostTurn in Attach mode");
                    assert_eq!(self.posts, 1, "a second PostTurn");
                    Some(Open::Stream { streaming: false })
                }
                Command::Subscribe { .. } => Some(Open::Stream { streaming: false }),
                Command::GetTurn => Some(Open::GetTurn),
                Command::LookupNewestTurn => Some(Open::Lookup),
                Command::Rebuild => Some(Open::Rebuild),
                Command::Abort => {
                    self.open = None;
                    None
                }
                Command::Persist { after } => {
                    assert!(!self.cleared, "Persist after ClearPersisted");
                    if let Some(last) = self.last_persist {
                        assert!(*after > last, "checkpoint {after} not above {last}");
                    }
                    self.last_persist = Some(*after);
                    None
                }
                Command::ClearPersisted => {
                    self.cleared = true;
                    None
                }
                Command::RefreshHeaders => {
                    self.awaiting_refresh = true;
                    None
                }
                Command::CancelUndelivered => {
                    self.undelivered = true;
                    None
                }
                Command::PostCancel => {
                    self.cancels += 1;
                    assert!(
                        self.cancels <= MAX_CANCEL_SENDS,
                        "{} PostCancels",
                        self.cancels
                    );
                    assert!(!self.offline, "PostCancel while offline (it would be lost)");
                    None
                }
                Command::ResumeFallback(_) => None,
                Command::OutcomeStillUnknown => {
                    // Only for a quiet look, which leaves the status as it was.
                    assert_eq!(
                        self.last_status,
                        Some(ConnectionStatus::Failed(
                            forgestream_core::resume::ConnectionError::CreateOutcomeUnknown
                        ))
                    );
                    None
                }
                Command::Silence(silence) => {
                    // Reported only for a turn that reads running, never after the end.
                    if let Some(s) = silence {
                        assert!(s.cycles >= 1 && s.since_ms <= now, "{s:?}");
                        assert_eq!(conn.silence(), Some(s));
                    }
                    None
                }
                Command::Status(status) => {
                    assert_ne!(self.last_status.as_ref(), Some(status), "repeated status");
                    if let ConnectionStatus::Reconnecting { next_at_ms, .. } = status {
                        let delay = next_at_ms.checked_sub(now).expect("deadline in the past");
                        assert!(
                            delay <= conn.config().backoff_cap_ms,
                            "delay {delay} above cap {}",
                            conn.config().backoff_cap_ms
                        );
                    }
                    if *status == ConnectionStatus::Done {
                        self.finished = true;
                        // A stream still open now is the one that carried `turn.done`: the
                        // machine no longer counts it as open, and it must end or be aborted.
                        if matches!(self.open, Some(Open::Stream { .. })) {
                            self.open = None;
                            self.draining = true;
                        }
                    }
                    self.last_status = Some(status.clone());
                    None
                }
            };
            if let Some(kind) = opens {
                assert_eq!(self.open, None, "{command:?} while {:?} is open", self.open);
                self.open = Some(kind);
            }
        }
        if matches!(input, Input::Disconnect) {
            self.finished = true;
        }
        // A draining stream is never left open for good: a deadline is pending.
        if self.draining {
            assert!(conn.poll_timeout().is_some(), "draining with no deadline");
        }
        // The cursor never moves back.
        if let (Some(before), Some(after)) = (self.last_cursor, conn.cursor()) {
            assert!(after >= before);
        }
        assert!(!(self.last_cursor.is_some() && conn.cursor().is_none()));
        self.last_cursor = conn.cursor();
        // The machine and the model agree on whether a stream is open.
        assert_eq!(
            conn.is_stream_open(),
            matches!(self.open, Some(Open::Stream { .. })),
            "stream open disagreement after {input:?}"
        );
        // Never stuck: an unfinished, unpaused machine always waits for something.
        let resting = matches!(
            self.last_status,
            Some(
                ConnectionStatus::Failed(_)
                    | ConnectionStatus::LiveUnavailable
                    | ConnectionStatus::Offline
                    | ConnectionStatus::Done
            )
        );
        if !self.finished && !resting && !self.awaiting_refresh {
            assert!(
                conn.is_request_open() || conn.poll_timeout().is_some(),
                "stuck with status {:?}",
                self.last_status
            );
        }
    }
}

fn run(config: Config, mode: StartMode, ops: Vec<Op>) {
    let mut conn = Connection::new(config);
    let mut now = 0u64;
    let mut model = Model {
        open: None,
        posts: 0,
        attach: matches!(mode, StartMode::Attach { .. }),
        last_persist: match mode {
            StartMode::Attach { after } => after,
            StartMode::CreateTurn => None,
        },
        cleared: false,
        finished: false,
        draining: false,
        cancels: 0,
        offline: false,
        undelivered: false,
        last_status: None,
        awaiting_refresh: false,
        last_cursor: None,
    };
    let mut machine_now = 0u64;
    let mut step = |conn: &mut Connection, input: Input, now: u64, model: &mut Model| {
        machine_now = machine_now.max(now);
        model.before_input(&input);
        conn.handle(input, now);
        let commands: Vec<Command> = core::iter::from_fn(|| conn.poll_command()).collect();
        model.after_input(&input, &commands, conn, machine_now);
    };
    step(&mut conn, Input::Start { mode }, now, &mut model);
    for op in ops {
        match op {
            Op::Feed(dt, input) => {
                now = now.saturating_add(dt);
                step(&mut conn, input, now, &mut model);
            }
            Op::FireTimeout => {
                if let Some(at) = conn.poll_timeout() {
                    now = now.max(at);
                }
                step(&mut conn, Input::Tick, now, &mut model);
            }
            Op::ClockBack(dt) => {
                now = now.saturating_sub(dt);
                step(&mut conn, Input::Comment, now, &mut model);
            }
        }
    }
    step(&mut conn, Input::Disconnect, now, &mut model);
    assert!(conn.is_finished());
    assert!(!conn.is_request_open());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_inputs_keep_every_invariant(
        config in config(),
        mode in start_mode(),
        ops in prop::collection::vec(op(), 0..120),
    ) {
        run(config, mode, ops);
    }

    #[test]
    fn random_inputs_with_default_config_keep_every_invariant(
        seed in any::<u64>(),
        mode in start_mode(),
        ops in prop::collection::vec(op(), 0..200),
    ) {
        run(Config { jitter_seed: seed, ..Config::default() }, mode, ops);
    }

    /// Every scheduled delay lies in [min(floor, cap), cap], for any attempt and any `retry:`/`Retry-After`.
    #[test]
    fn delays_stay_within_zero_and_cap(
        config in config(),
        retry in prop::option::of(any::<u64>()),
        failures in prop::collection::vec((status_code(), retry_after()), 1..40),
    ) {
        let mut conn = Connection::new(Config { max_attempts: 1_000, ..config });
        let mut now = 1_000u64;
        conn.handle(Input::Start { mode: StartMode::Attach { after: Some(1) } }, now);
        for (status, retry_after_ms) in failures {
            conn.handle(Input::TurnFetched { terminal: false }, now);
            conn.handle(Input::ResponseHeaders { status, retry_after_ms }, now);
            if (200..300).contains(&status) {
                // A live stream that carries a `retry:` field, then drops.
                if let Some(ms) = retry {
                    conn.handle(Input::Retry(ms), now);
                }
                conn.handle(Input::NetworkError, now);
            }
            for command in core::iter::from_fn(|| conn.poll_command()) {
                if let Command::Status(ConnectionStatus::Reconnecting { next_at_ms, .. }) = command {
                    prop_assert!(next_at_ms >= now);
                    prop_assert!(
                        next_at_ms - now >= config.backoff_floor_ms.min(config.backoff_cap_ms),
                        "delay {} below the floor", next_at_ms - now
                    );
                    prop_assert!(next_at_ms - now <= config.backoff_cap_ms);
                }
            }
            match conn.poll_timeout() {
                Some(at) => now = now.max(at),
                None => break,
            }
            conn.handle(Input::Tick, now);
        }
    }
}
