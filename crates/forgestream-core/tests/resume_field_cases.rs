//! The transport halves of FIELD-CASES.md (C4, C5, C7, C8, C13, C14, C16c, C17) driven through
//! the connection machine, each asserting the exact command sequence.

#[path = "resume_harness.rs"]
mod harness;

use forgestream_core::resume::{Command, ConnectionError, ConnectionStatus, Input, StartMode};
use harness::{config, persist, reconnecting, status, subscribe, Driver};
use Command::{Abort, ClearPersisted, GetTurn, PostTurn, Rebuild, RefreshHeaders};
use ConnectionStatus::{Connecting, Done, Live, LiveUnavailable, Rebuilding};

fn count(log: &[Command], wanted: impl Fn(&Command) -> bool) -> usize {
    log.iter().filter(|c| wanted(c)).count()
}

/// C4: the cursor is the last processed sequence, every time: after=3 then after=4.
#[test]
fn c4_resubscribes_after_the_last_processed_sequence_number() {
    let mut d = Driver::new(config());
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::CreateTurn
        }),
        vec![status(Connecting), PostTurn]
    );
    assert_eq!(d.headers(200), vec![status(Live)]);
    // Connection A: 1, 2, 3, then EOF without turn.done.
    assert_eq!(d.event(1), vec![persist(1)]);
    d.now = 10;
    assert_eq!(d.event(2), vec![]);
    d.now = 20;
    assert_eq!(d.event(3), vec![]);
    d.now = 30;
    assert_eq!(
        d.feed(Input::Eof),
        vec![persist(3), status(Connecting), GetTurn]
    );
    // Connection B asks after 3, gets 4, then drops.
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(3)]
    );
    assert_eq!(d.headers(200), vec![status(Live)]);
    d.now = 40;
    assert_eq!(d.event(4), vec![], "coalesced until 1 030");
    d.now = 50;
    let commands = d.feed(Input::NetworkError);
    let (attempt, at) = reconnecting(&commands).unwrap();
    assert_eq!(attempt, 1);
    assert_eq!(
        commands,
        vec![
            persist(4),
            status(ConnectionStatus::Reconnecting {
                attempt: 1,
                next_at_ms: at
            })
        ]
    );
    // Connection C asks after 4 and receives turn.done.
    assert_eq!(d.fire_timeout(), vec![GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(4)]
    );
    assert_eq!(d.headers(200), vec![status(Live)]);
    // The stream that carried `turn.done` ends by itself: nothing to abort.
    assert_eq!(d.done(5), vec![ClearPersisted, status(Done)]);
    assert_eq!(d.feed(Input::Eof), vec![]);
    assert_eq!(d.conn.poll_timeout(), None, "no drain left after its end");
}

/// C5a: the live stream expired and the turn is done. GetTurn already says so: no subscribe.
#[test]
fn c5a_finished_turn_is_rebuilt_without_subscribing() {
    let mut d = Driver::new(config());
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::Attach { after: Some(12) }
        }),
        vec![status(Connecting), GetTurn]
    );
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: true }),
        // From `connecting` / `live`, an ended turn's final read shows no `rebuilding`.
        vec![Rebuild]
    );
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );
    assert_eq!(d.advance(3_600_000), vec![]);
}

/// C5a, racing variant: GetTurn still said running, subscribe answers 412: one subscribe,
/// one rebuild, settled.
#[test]
fn c5a_precondition_failed_rebuilds_once_and_settles() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(12) },
    });
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(12)]
    );
    assert_eq!(d.headers(412), vec![status(Rebuilding), Rebuild]);
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );
    assert!(d.conn.is_finished());
}

/// C5b: 412 while the turn still runs: a clear "live updates unavailable" state, no loop.
#[test]
fn c5b_running_turn_without_live_stream_is_live_unavailable() {
    let mut d = Driver::new(config());
    let mut log = d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(12) },
    });
    log.extend(d.feed(Input::TurnFetched { terminal: false }));
    log.extend(d.headers(412));
    let commands = d.feed(Input::RebuildDone { terminal: false });
    assert_eq!(commands, vec![status(LiveUnavailable)]);
    log.extend(commands);
    for _ in 0..100 {
        log.extend(d.advance(60_000));
        log.extend(d.feed(Input::Online));
    }
    assert_eq!(
        log,
        vec![
            status(Connecting),
            GetTurn,
            subscribe(12),
            status(Rebuilding),
            Rebuild,
            status(LiveUnavailable)
        ]
    );
    assert_eq!(d.conn.status(), Some(&LiveUnavailable));
    assert_eq!(d.conn.poll_timeout(), None, "not a spinner");
}

/// C7 (transport part): an at-least-once replay of 2 and 3 never lowers the checkpoint.
#[test]
fn c7_replayed_frames_do_not_move_the_cursor_back() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    d.headers(200);
    let mut log = Vec::new();
    for (t, seq) in [(0, 1), (10, 2), (20, 3)] {
        d.now = t;
        log.extend(d.event(seq));
    }
    log.extend(d.feed(Input::NetworkError));
    log.extend(d.fire_timeout());
    log.extend(d.feed(Input::TurnFetched { terminal: false }));
    log.extend(d.headers(200));
    // The server replays 2 and 3, then continues.
    for seq in [2, 3, 4, 5] {
        d.now += 2_000;
        log.extend(d.event(seq));
    }
    log.extend(d.done(6));
    let checkpoints: Vec<u64> = log
        .iter()
        .filter_map(|c| match c {
            Command::Persist { after } => Some(*after),
            _ => None,
        })
        .collect();
    assert_eq!(checkpoints, vec![1, 3, 4, 5]);
    assert_eq!(count(&log, |c| *c == subscribe(3)), 1);
    assert_eq!(d.conn.cursor(), Some(6));
    assert_eq!(log.last(), Some(&status(Done)));
}

/// C8: a hidden tab never re-POSTs; after coming back at most one subscribe after 3.
#[test]
fn c8_hidden_tab_never_posts_again() {
    let mut d = Driver::new(config());
    let mut log = d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    log.extend(d.headers(200));
    for seq in 1..=3 {
        log.extend(d.event(seq));
    }
    // Hidden for 30 s: timers are throttled but still fire; visibility is no input.
    for _ in 0..30 {
        log.extend(d.advance(1_000));
    }
    // Back: the browser had dropped the stream meanwhile.
    log.extend(d.feed(Input::NetworkError));
    log.extend(d.fire_timeout());
    log.extend(d.feed(Input::TurnFetched { terminal: false }));
    log.extend(d.headers(200));
    log.extend(d.done(4));
    assert_eq!(count(&log, |c| *c == PostTurn), 1);
    let subscribes: Vec<&Command> = log
        .iter()
        .filter(|c| matches!(c, Command::Subscribe { .. }))
        .collect();
    assert_eq!(subscribes, vec![&subscribe(3)]);
    assert_eq!(log.last(), Some(&status(Done)));
}

/// C13: persisted {t1, seq 40}, the server already ended t1.
#[test]
fn c13_stale_marker_with_finished_turn_settles_within_one_round_trip() {
    let mut d = Driver::new(config());
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::Attach { after: Some(40) }
        }),
        vec![status(Connecting), GetTurn]
    );
    // GetTurn says done: rebuild, never subscribe (a cursor at the end hangs).
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: true }),
        // From `connecting` / `live`, an ended turn's final read shows no `rebuilding`.
        vec![Rebuild]
    );
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );
}

/// C13(a): GetTurn raced and said running; subscribe returns 41 = turn.done, then EOF.
#[test]
fn c13a_subscribe_delivers_turn_done_then_eof() {
    let mut d = Driver::new(config());
    let mut log = d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(40) },
    });
    log.extend(d.feed(Input::TurnFetched { terminal: false }));
    log.extend(d.headers(200));
    log.extend(d.done(41));
    log.extend(d.feed(Input::Eof));
    log.extend(d.advance(3_600_000));
    assert_eq!(
        log,
        vec![
            status(Connecting),
            GetTurn,
            subscribe(40),
            status(Live),
            ClearPersisted,
            status(Done)
        ],
        "settled (the stream ended by itself, no abort), and t1 is never cancelled"
    );
}

/// C13(b): subscribe answers 412: rebuild once, settled.
#[test]
fn c13b_precondition_failed_settles_from_history() {
    let mut d = Driver::new(config());
    let mut log = d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(40) },
    });
    log.extend(d.feed(Input::TurnFetched { terminal: false }));
    log.extend(d.headers(412));
    log.extend(d.feed(Input::RebuildDone { terminal: true }));
    assert_eq!(
        log,
        vec![
            status(Connecting),
            GetTurn,
            subscribe(40),
            status(Rebuilding),
            Rebuild,
            ClearPersisted,
            status(Done)
        ]
    );
}

/// C13(c): the stream ends with no terminal event while history says done: history wins.
#[test]
fn c13c_eof_without_turn_done_checks_the_turn_and_rebuilds() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(40) },
    });
    d.feed(Input::TurnFetched { terminal: false });
    d.headers(200);
    let commands = d.feed(Input::Eof);
    let (attempt, at) = reconnecting(&commands).unwrap();
    assert_eq!(attempt, 1);
    assert!(at - d.now <= 500, "within one short backoff");
    assert_eq!(d.fire_timeout(), vec![GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: true }),
        vec![status(Rebuilding), Rebuild]
    );
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );
}

/// C13, hanging variant (PROTOCOL §9): 200 then silence; the watchdog ends it.
#[test]
fn c13_hanging_subscribe_is_cut_by_the_idle_watchdog() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(40) },
    });
    d.feed(Input::TurnFetched { terminal: false });
    d.headers(200);
    let commands = d.fire_timeout();
    assert_eq!(d.now, 45_000);
    // The live stream went silent: the turn is read at once (no backoff: nothing failed).
    assert_eq!(commands, vec![Abort, GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: true }),
        // From `connecting` / `live`, an ended turn's final read shows no `rebuilding`.
        vec![Rebuild]
    );
}

/// C14 (transport): 401 on reconnect → provider again → same cursor; second 401 → auth error.
#[test]
fn c14_unauthorized_reconnect_refreshes_once() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(9) },
    });
    d.feed(Input::TurnFetched { terminal: false });
    assert_eq!(d.headers(401), vec![RefreshHeaders]);
    assert_eq!(d.feed(Input::HeadersRefreshed), vec![subscribe(9)]);
    assert_eq!(
        d.headers(401),
        vec![status(ConnectionStatus::Failed(ConnectionError::Auth))]
    );
    assert_eq!(ConnectionError::Auth.code(), "auth");
    // And with a good header the retry streams on from the same cursor.
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(9) },
    });
    d.feed(Input::TurnFetched { terminal: false });
    d.headers(401);
    assert_eq!(d.feed(Input::HeadersRefreshed), vec![subscribe(9)]);
    assert_eq!(d.headers(200), vec![status(Live)]);
    assert_eq!(d.event(10), vec![persist(10)]);
}

/// C14: 403 is never retried.
#[test]
fn c14_forbidden_is_never_retried() {
    let mut d = Driver::new(config());
    let mut log = d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(9) },
    });
    log.extend(d.feed(Input::TurnFetched { terminal: false }));
    log.extend(d.headers(403));
    log.extend(d.advance(3_600_000));
    log.extend(d.feed(Input::Online));
    log.extend(d.feed(Input::Refresh));
    assert_eq!(
        log,
        vec![
            status(Connecting),
            GetTurn,
            subscribe(9),
            status(ConnectionStatus::Failed(ConnectionError::Forbidden))
        ]
    );
}

/// C16(c): 100 forced disconnect/reconnect cycles leave exactly one connection.
#[test]
fn c16c_hundred_reconnect_cycles_keep_one_connection() {
    let mut d = Driver::new(harness::config());
    let mut open = 0usize;
    let mut subscribes = Vec::new();
    let track = |commands: Vec<Command>, open: &mut usize, subscribes: &mut Vec<u64>| {
        for command in commands {
            match command {
                Command::Subscribe { after } => {
                    assert_eq!(*open, 0, "a second stream while one is open");
                    *open += 1;
                    subscribes.push(after);
                }
                Command::PostTurn => {
                    assert_eq!(*open, 0);
                    *open += 1;
                }
                Command::Abort => *open = open.saturating_sub(1),
                _ => {}
            }
        }
    };
    let c = d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    track(c, &mut open, &mut subscribes);
    d.headers(200);
    let mut seq = 0u64;
    for cycle in 0..100u64 {
        seq += 1;
        d.event(seq);
        // Rotate through the ways a connection dies.
        let commands = match cycle % 4 {
            0 => {
                open = 0; // the transport reports it closed
                d.feed(Input::Eof)
            }
            1 => {
                open = 0;
                d.feed(Input::NetworkError)
            }
            2 => d.advance(45_000), // idle watchdog emits Abort
            _ => {
                let mut c = d.feed(Input::Offline); // emits Abort
                c.extend(d.feed(Input::Online));
                c
            }
        };
        track(commands, &mut open, &mut subscribes);
        assert!(open <= 1);
        let mut guard = 0;
        while !d.conn.is_stream_open() {
            guard += 1;
            assert!(guard < 10, "cycle {cycle} did not reconnect");
            let commands = if d.conn.is_request_open() {
                d.feed(Input::TurnFetched { terminal: false })
            } else {
                d.fire_timeout()
            };
            track(commands, &mut open, &mut subscribes);
        }
        assert_eq!(open, 1, "cycle {cycle}");
        // The watchdog's silent cycle keeps the badge `live` (no status to emit again).
        let commands = d.headers(200);
        assert!(
            commands.is_empty() || commands == vec![status(Live)],
            "{commands:?}"
        );
        assert_eq!(d.conn.status(), Some(&Live));
        d.now += 5_000;
    }
    assert_eq!(subscribes.len(), 100);
    assert_eq!(subscribes, (1..=100).collect::<Vec<u64>>());
    assert_eq!(open, 1);
    assert!(d.conn.is_stream_open());
}

/// C17: one machine per turn: t1's late frames never touch t2's cursor.
#[test]
fn c17_each_turn_keeps_its_own_cursor() {
    let mut t1 = Driver::new(config());
    t1.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    t1.headers(200);
    let mut t1_log = Vec::new();
    for seq in 1..=3 {
        t1.now += 2_000;
        t1_log.extend(t1.event(seq));
    }
    // The user opens s2 and sends: a new machine for t2.
    let mut t2 = Driver::new(config());
    t2.now = t1.now;
    let mut t2_log = t2.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    t2_log.extend(t2.headers(200));
    t2_log.extend(t2.event(1));
    // The old connection keeps delivering 4–6 for t1, interleaved with t2's frames.
    for seq in 4..=6 {
        t1.now += 2_000;
        t2.now = t1.now;
        t1_log.extend(t1.event(seq));
        t2_log.extend(t2.event(seq - 2));
    }
    let checkpoints = |log: &[Command]| -> Vec<u64> {
        log.iter()
            .filter_map(|c| match c {
                Command::Persist { after } => Some(*after),
                _ => None,
            })
            .collect()
    };
    assert_eq!(checkpoints(&t1_log), vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(checkpoints(&t2_log), vec![1, 2, 3, 4]);
    assert_eq!(t1.conn.cursor(), Some(6));
    assert_eq!(t2.conn.cursor(), Some(4));
    assert_eq!(count(&t2_log, |c| *c == PostTurn), 1);
    assert_eq!(count(&t1_log, |c| *c == Command::PostCancel), 0);
}
