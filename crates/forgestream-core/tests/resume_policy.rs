//! One test per policy rule of the connection machine (DESIGN.md "Sans-IO connection logic"),
//! each asserting the exact command sequence with a fake clock.

#[path = "resume_harness.rs"]
mod harness;

use forgestream_core::resume::{
    Command, Config, ConnectionError, ConnectionStatus, Input, ResumeFallback, StartMode,
    DONE_DRAIN_MS, MAX_CANCEL_SENDS,
};
use harness::{config, persist, reconnecting, status, subscribe, Driver};
use Command::{Abort, ClearPersisted, GetTurn, LookupNewestTurn, PostCancel, PostTurn, Rebuild};
use ConnectionStatus::{Connecting, Done, Live, LiveUnavailable, Offline, Rebuilding};

/// A machine in CreateTurn mode whose POST stream is live and has delivered events 1..=n.
fn live_created(config: Config, n: u64) -> Driver {
    let mut d = Driver::new(config);
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::CreateTurn
        }),
        vec![status(Connecting), PostTurn]
    );
    assert_eq!(d.headers(200), vec![status(Live)]);
    for seq in 1..=n {
        d.event(seq);
    }
    d
}

/// A machine in Attach mode whose subscribe after `after` is live.
fn live_attached(config: Config, after: u64) -> Driver {
    let mut d = Driver::new(config);
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::Attach { after: Some(after) }
        }),
        vec![status(Connecting), GetTurn]
    );
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(after)]
    );
    assert_eq!(d.headers(200), vec![status(Live)]);
    d
}

#[test]
fn create_streams_coalesces_checkpoints_and_settles() {
    let mut d = Driver::new(config());
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::CreateTurn
        }),
        vec![status(Connecting), PostTurn]
    );
    assert_eq!(d.headers(200), vec![status(Live)]);
    assert_eq!(d.event(1), vec![persist(1)]);
    d.now = 100;
    assert_eq!(d.event(2), vec![], "checkpoints are coalesced");
    d.now = 200;
    assert_eq!(d.event(3), vec![]);
    assert_eq!(
        d.conn.poll_timeout(),
        Some(1_000),
        "pending checkpoint is a deadline"
    );
    assert_eq!(d.fire_timeout(), vec![persist(3)]);
    assert_eq!(
        d.conn.poll_timeout(),
        Some(200 + 45_000),
        "only the idle watchdog remains"
    );
    // The stream that carried `turn.done` is left to end by itself (no `net::ERR_ABORTED` in
    // the browser for every turn); a server that keeps it open is cut DONE_DRAIN_MS later.
    assert_eq!(d.done(4), vec![ClearPersisted, status(Done)]);
    assert!(d.conn.is_finished());
    assert!(!d.conn.is_stream_open());
    assert_eq!(d.conn.poll_timeout(), Some(d.now + DONE_DRAIN_MS));
    assert_eq!(d.feed(Input::Tick), vec![], "not due yet");
    assert_eq!(d.fire_timeout(), vec![Abort]);
    assert_eq!(d.conn.poll_timeout(), None);
    for input in [
        Input::Eof,
        Input::NetworkError,
        Input::Offline,
        Input::Online,
        Input::Cancel,
        Input::Refresh,
        Input::Start {
            mode: StartMode::CreateTurn,
        },
    ] {
        assert_eq!(d.feed(input), vec![], "nothing after Done ({input:?})");
    }
    assert_eq!(d.advance(1_000_000), vec![]);
}

#[test]
fn full_jitter_delays_stay_under_the_growing_ceiling() {
    // For each seed, fail attempt after attempt and record each delay.
    let cfg = Config {
        max_attempts: 10,
        ..config()
    };
    let mut max_seen = [0u64; 10];
    let mut min_seen = [u64::MAX; 10];
    for seed in 0..200u64 {
        let mut d = live_attached(
            Config {
                jitter_seed: seed,
                ..cfg
            },
            5,
        );
        for attempt in 1..=10u32 {
            let commands = d.feed(Input::NetworkError);
            let (n, next_at) = reconnecting(&commands).expect("a reconnect is scheduled");
            assert_eq!(n, attempt);
            let delay = next_at - d.now;
            let ceiling = (500u64 << (attempt - 1)).min(30_000);
            assert!(delay <= ceiling, "attempt {attempt}: {delay} > {ceiling}");
            assert!(
                delay >= 250,
                "attempt {attempt}: {delay} below the 250 ms floor"
            );
            let slot = (attempt - 1) as usize;
            max_seen[slot] = max_seen[slot].max(delay);
            min_seen[slot] = min_seen[slot].min(delay);
            assert_eq!(d.fire_timeout(), vec![GetTurn]);
            assert_eq!(d.now, next_at);
            assert_eq!(
                d.feed(Input::TurnFetched { terminal: false }),
                vec![subscribe(5)]
            );
        }
    }
    for (slot, (max, min)) in max_seen.iter().zip(min_seen.iter()).enumerate() {
        let ceiling = (500u64 << slot).min(30_000);
        // Full jitter above the floor: delays spread over the whole [250, ceiling] range.
        let span = ceiling - 250;
        assert!(*max > 250 + span * 3 / 4, "attempt {}: max {max}", slot + 1);
        assert!(*min < 250 + span / 4 + 1, "attempt {}: min {min}", slot + 1);
    }
}

#[test]
fn same_seed_gives_same_delays() {
    let delays = |seed: u64| -> Vec<u64> {
        let mut d = live_attached(
            Config {
                jitter_seed: seed,
                ..config()
            },
            1,
        );
        (0..5)
            .map(|_| {
                let (_, at) = reconnecting(&d.feed(Input::NetworkError)).unwrap();
                let delay = at - d.now;
                d.fire_timeout();
                d.feed(Input::TurnFetched { terminal: false });
                delay
            })
            .collect()
    };
    assert_eq!(delays(99), delays(99));
    assert_ne!(delays(99), delays(100));
}

#[test]
fn attempts_reset_after_a_stream_delivers_a_new_sequence_number() {
    let mut d = live_attached(config(), 5);
    assert_eq!(reconnecting(&d.feed(Input::NetworkError)).unwrap().0, 1);
    d.fire_timeout();
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(5)]
    );
    assert_eq!(reconnecting(&d.headers(502)).unwrap().0, 2);
    d.fire_timeout();
    d.feed(Input::TurnFetched { terminal: false });
    assert_eq!(d.headers(200), vec![status(Live)]);
    // A replayed (old) event is not progress.
    d.event(5);
    assert_eq!(d.conn.attempt(), 2);
    assert_eq!(d.event(6), vec![persist(6)]);
    assert_eq!(d.conn.attempt(), 0);
    let commands = d.feed(Input::NetworkError);
    assert_eq!(reconnecting(&commands).unwrap().0, 1);
    assert_eq!(commands.len(), 1);
}

#[test]
fn retry_field_sets_the_backoff_base_within_bounds() {
    let cfg = Config {
        retry_min_ms: 250,
        retry_max_ms: 2_000,
        ..config()
    };
    // A tiny `retry:` is raised to the floor: attempt 1 waits exactly the 250 ms floor.
    for seed in 0..50 {
        let mut d = live_attached(
            Config {
                jitter_seed: seed,
                ..cfg
            },
            1,
        );
        assert_eq!(d.feed(Input::Retry(1)), vec![]);
        let (_, at) = reconnecting(&d.feed(Input::NetworkError)).unwrap();
        assert_eq!(at - d.now, 250);
    }
    // A huge `retry:` is lowered to the ceiling of 2 s, and is really used as the base.
    let mut max = 0;
    for seed in 0..50 {
        let mut d = live_attached(
            Config {
                jitter_seed: seed,
                ..cfg
            },
            1,
        );
        d.feed(Input::Retry(10_000_000));
        let (_, at) = reconnecting(&d.feed(Input::NetworkError)).unwrap();
        assert!(at - d.now <= 2_000);
        max = max.max(at - d.now);
    }
    assert!(max > 1_000, "the base moved from 500 ms to 2 s: {max}");
}

#[test]
fn retry_after_is_honoured_within_bounds_for_429_and_503() {
    let cases = [
        (429, Some(5_000), Some(5_000)),
        (503, Some(12_000), Some(12_000)),
        (429, Some(10_000_000), Some(30_000)),
        (503, Some(1), Some(250)),
        (500, Some(5_000), None), // not honoured: plain jittered backoff
        (429, None, None),
    ];
    for (code, retry_after_ms, expected_delay) in cases {
        let mut d = live_attached(config(), 9);
        d.feed(Input::NetworkError);
        d.fire_timeout();
        assert_eq!(
            d.feed(Input::TurnFetched { terminal: false }),
            vec![subscribe(9)]
        );
        d.now += 7;
        let commands = d.feed(Input::ResponseHeaders {
            status: code,
            retry_after_ms,
        });
        let (attempt, at) = reconnecting(&commands).expect("retried");
        assert_eq!(attempt, 2);
        match expected_delay {
            Some(delay) => assert_eq!(at - d.now, delay, "{code} {retry_after_ms:?}"),
            None => assert!(at - d.now <= 1_000, "{code}: jittered, ceiling 1 s"),
        }
        assert_eq!(d.fire_timeout(), vec![GetTurn]);
    }
}

#[test]
fn server_errors_and_network_failures_back_off_then_check_the_turn() {
    let mut d = live_attached(config(), 3);
    assert_eq!(d.event(4), vec![persist(4)]);
    d.now = 100;
    assert_eq!(d.event(5), vec![], "checkpoint due at 1 000");
    d.now = 2_000;
    // The failure flushes the pending checkpoint before anything else.
    let commands = d.feed(Input::NetworkError);
    let (attempt, at) = reconnecting(&commands).unwrap();
    assert_eq!(
        commands,
        vec![
            persist(5),
            status(ConnectionStatus::Reconnecting {
                attempt,
                next_at_ms: at
            })
        ]
    );
    assert_eq!(d.conn.poll_timeout(), Some(at));
    if at > d.now {
        assert_eq!(d.advance(at - d.now - 1), vec![], "not before the deadline");
    }
    assert_eq!(d.fire_timeout(), vec![GetTurn]);
    // A 5xx on GetTurn backs off and retries GetTurn.
    let commands = d.feed(Input::TurnFetchFailed {
        status: Some(500),
        retry_after_ms: None,
    });
    assert_eq!(reconnecting(&commands).unwrap().0, 2);
    assert_eq!(d.fire_timeout(), vec![GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(5)]
    );
    assert_eq!(d.headers(200), vec![status(Live)]);
}

#[test]
fn eof_after_progress_resubscribes_at_once_from_the_cursor() {
    let mut d = live_attached(config(), 3);
    d.event(4);
    d.now = 10;
    d.event(5);
    assert_eq!(
        d.feed(Input::Eof),
        vec![persist(5), status(Connecting), GetTurn]
    );
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(5)]
    );
    // A stream that ends with nothing new is not healthy: it backs off.
    assert_eq!(d.headers(200), vec![status(Live)]);
    let commands = d.feed(Input::Eof);
    assert_eq!(reconnecting(&commands).unwrap().0, 1);
    assert_eq!(commands.len(), 1);
}

#[test]
fn idle_watchdog_aborts_a_silent_stream_and_comments_count_as_liveness() {
    let mut d = live_attached(config(), 1);
    assert_eq!(d.conn.poll_timeout(), Some(45_000));
    assert_eq!(d.advance(30_000), vec![]);
    assert_eq!(d.feed(Input::Comment), vec![]);
    assert_eq!(d.conn.poll_timeout(), Some(75_000));
    assert_eq!(d.advance(44_999), vec![]);
    // A live stream that went silent: nothing failed, so the turn is read at once (no backoff,
    // no attempt, the badge stays `live`).
    assert_eq!(d.advance(1), vec![Abort, GetTurn]);
    assert_eq!(d.conn.attempt(), 0);
    // A GetTurn that never answers is cut off by the watchdog, and that is a failed attempt.
    let commands = d.advance(45_000);
    assert_eq!(commands.first(), Some(&Abort));
    assert_eq!(reconnecting(&commands).unwrap().0, 1);
    assert_eq!(d.fire_timeout(), vec![GetTurn]);
}

#[test]
fn offline_aborts_and_pauses_online_reconnects_at_once() {
    let mut d = live_attached(config(), 1);
    d.event(2);
    d.now = 100;
    d.event(3);
    assert_eq!(
        d.feed(Input::Offline),
        vec![Abort, persist(3), status(Offline)]
    );
    assert_eq!(d.conn.poll_timeout(), None, "no retries while offline");
    assert_eq!(d.advance(10_000_000), vec![]);
    assert_eq!(d.feed(Input::Online), vec![status(Connecting), GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(3)]
    );
    // Offline during a backoff wait: the wait is dropped.
    assert_eq!(reconnecting(&d.feed(Input::NetworkError)).unwrap().0, 1);
    assert_eq!(d.feed(Input::Offline), vec![status(Offline)]);
    assert_eq!(d.conn.poll_timeout(), None);
    assert_eq!(d.advance(60_000), vec![]);
    assert_eq!(d.feed(Input::Online), vec![status(Connecting), GetTurn]);
    // A failure reported while offline pauses instead of scheduling.
    d.feed(Input::Offline);
    assert_eq!(
        d.feed(Input::TurnFetchFailed {
            status: None,
            retry_after_ms: None
        }),
        vec![]
    );
}

#[test]
fn offline_during_the_post_looks_the_turn_up_when_back_online() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    assert_eq!(d.feed(Input::Offline), vec![Abort, status(Offline)]);
    assert_eq!(
        d.feed(Input::Online),
        vec![status(Connecting), LookupNewestTurn]
    );
    assert_eq!(
        d.feed(Input::TurnLookup { found_ours: true }),
        vec![GetTurn]
    );
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(0)]
    );
}

#[test]
fn starting_offline_waits_for_online() {
    let mut d = Driver::new(config());
    assert_eq!(d.feed(Input::Offline), vec![]);
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::CreateTurn
        }),
        vec![status(Connecting), status(Offline)]
    );
    assert_eq!(d.feed(Input::Online), vec![status(Connecting), PostTurn]);
}

#[test]
fn unauthorized_refreshes_headers_once_and_retries_with_the_same_cursor() {
    let mut d = live_attached(config(), 7);
    d.feed(Input::NetworkError);
    d.fire_timeout();
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(7)]
    );
    assert_eq!(d.headers(401), vec![Command::RefreshHeaders]);
    assert_eq!(
        d.advance(600_000),
        vec![],
        "no timer while the provider works"
    );
    assert_eq!(d.feed(Input::HeadersRefreshed), vec![subscribe(7)]);
    assert_eq!(
        d.headers(401),
        vec![status(ConnectionStatus::Failed(ConnectionError::Auth))]
    );
    assert_eq!(d.advance(600_000), vec![]);
    assert_eq!(
        d.feed(Input::Refresh),
        vec![],
        "auth errors are not retryable"
    );
}

#[test]
fn a_successful_response_re_arms_the_header_refresh() {
    let mut d = live_attached(config(), 1);
    d.feed(Input::NetworkError);
    d.fire_timeout();
    assert_eq!(
        d.feed(Input::TurnFetchFailed {
            status: Some(401),
            retry_after_ms: None
        }),
        vec![Command::RefreshHeaders]
    );
    assert_eq!(d.feed(Input::HeadersRefreshed), vec![GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(1)]
    );
    assert_eq!(
        d.headers(401),
        vec![Command::RefreshHeaders],
        "a new 401 later: ask again"
    );
    assert_eq!(
        d.feed(Input::HeadersRefreshFailed),
        vec![status(ConnectionStatus::Failed(ConnectionError::Auth))]
    );
}

#[test]
fn forbidden_not_found_and_bad_request_stop_without_retry() {
    // (A 400 on a resume has its fallbacks: `a_refused_resume_*` below.)
    for (code, error) in [
        (403, ConnectionError::Forbidden),
        (404, ConnectionError::NotFound),
        (422, ConnectionError::Http(422)),
    ] {
        let mut d = live_attached(config(), 2);
        d.feed(Input::NetworkError);
        d.fire_timeout();
        d.feed(Input::TurnFetched { terminal: false });
        assert_eq!(
            d.headers(code),
            vec![status(ConnectionStatus::Failed(error))]
        );
        assert_eq!(d.conn.poll_timeout(), None);
        assert_eq!(d.advance(10_000_000), vec![]);
        assert_eq!(d.feed(Input::Online), vec![]);
        assert_eq!(d.feed(Input::Refresh), vec![]);
        assert!(!error.is_retryable());
    }
    // GetTurn on an unknown turn.
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(2) },
    });
    assert_eq!(
        d.feed(Input::TurnFetchFailed {
            status: Some(404),
            retry_after_ms: None
        }),
        vec![status(ConnectionStatus::Failed(ConnectionError::NotFound))]
    );
}

#[test]
fn precondition_failed_rebuilds_exactly_once() {
    let mut d = live_attached(config(), 12);
    d.feed(Input::NetworkError);
    d.fire_timeout();
    d.feed(Input::TurnFetched { terminal: false });
    assert_eq!(d.headers(412), vec![status(Rebuilding), Rebuild]);
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: false }),
        vec![status(LiveUnavailable)]
    );
    assert_eq!(d.conn.poll_timeout(), None);
    assert_eq!(d.advance(10_000_000), vec![], "no retry loop");
    assert_eq!(d.feed(Input::Online), vec![]);
    // The manual refresh the UI offers.
    assert_eq!(d.feed(Input::Refresh), vec![status(Connecting), GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: true }),
        // From `connecting`, an ended turn's final read shows no `rebuilding`.
        vec![Rebuild]
    );
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );
}

#[test]
fn rebuild_failures_retry_the_rebuild_and_gateway_409_means_live_unavailable() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(4) },
    });
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: true }),
        // From `connecting`, an ended turn's final read shows no `rebuilding`.
        vec![Rebuild]
    );
    let commands = d.feed(Input::RebuildFailed {
        status: None,
        retry_after_ms: None,
    });
    assert_eq!(reconnecting(&commands).unwrap().0, 1);
    assert_eq!(d.fire_timeout(), vec![status(Rebuilding), Rebuild]);
    assert_eq!(
        d.feed(Input::RebuildFailed {
            status: Some(409),
            retry_after_ms: None
        }),
        vec![status(LiveUnavailable)]
    );
}

#[test]
fn too_many_attempts_fails() {
    let mut d = live_attached(
        Config {
            max_attempts: 3,
            ..config()
        },
        1,
    );
    for attempt in 1..=3 {
        assert_eq!(
            reconnecting(&d.feed(Input::NetworkError)).unwrap().0,
            attempt
        );
        assert_eq!(d.fire_timeout(), vec![GetTurn]);
        if attempt < 3 {
            d.feed(Input::TurnFetched { terminal: false });
        }
    }
    let failed = status(ConnectionStatus::Failed(ConnectionError::TooManyAttempts));
    assert_eq!(
        d.feed(Input::TurnFetchFailed {
            status: Some(503),
            retry_after_ms: None
        }),
        vec![failed]
    );
    assert_eq!(d.advance(10_000_000), vec![]);
    // Retryable: the app may try again, from the cursor.
    assert_eq!(d.feed(Input::Refresh), vec![status(Connecting), GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(1)]
    );
}

#[test]
fn cancel_posts_once_and_keeps_streaming_until_turn_done() {
    let mut d = live_created(config(), 2);
    assert_eq!(d.feed(Input::Cancel), vec![PostCancel]);
    assert_eq!(d.feed(Input::Cancel), vec![], "one cancel request");
    d.now = 5_000;
    assert_eq!(d.event(3), vec![persist(3)]);
    assert!(d.conn.is_stream_open());
    assert_eq!(d.done(4), vec![ClearPersisted, status(Done)]);
    // An app that disconnects while the stream drains closes it at once.
    assert_eq!(d.feed(Input::Disconnect), vec![Abort]);
    assert_eq!(d.conn.poll_timeout(), None);
    assert_eq!(d.advance(1_000_000), vec![]);
}

/// Stop pressed while offline (a trial: the cancel was lost and the reply ran to its end once
/// back online): the cancel waits for the connection, then goes out as soon as the turn is read
/// and found still running.
#[test]
fn cancel_while_offline_waits_and_goes_out_once_the_turn_is_seen_running() {
    let mut d = live_created(config(), 2);
    d.now = 1_000;
    d.feed(Input::Offline);
    assert_eq!(d.feed(Input::Cancel), vec![], "nothing sent offline");
    let back = d.feed(Input::Online);
    assert!(back.contains(&GetTurn), "{back:?}");
    assert!(!back.contains(&PostCancel), "{back:?}");
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(2), PostCancel]
    );
    assert_eq!(d.feed(Input::Cancel), vec![], "one cancel request");
}

/// A cancel that did not reach the server (network failure, 5xx) is sent again after a wait
/// (1 s, doubling; longer if `Retry-After` says so) once the turn shows it runs — not with
/// every frame (a re-check: 4 sends gone in 60 ms during a 1 s outage). After MAX_CANCEL_SENDS
/// the app is told (`CancelUndelivered`); Stop pressed again starts a new budget.
#[test]
fn a_failed_cancel_is_sent_again_after_growing_waits_then_reported() {
    let mut d = live_created(config(), 2);
    assert_eq!(d.feed(Input::Cancel), vec![PostCancel]);
    let mut seq = 3;
    let mut waits = Vec::new();
    for _ in 1..MAX_CANCEL_SENDS {
        let failed_at = d.now;
        assert_eq!(
            d.feed(Input::CancelFailed {
                retry_after_ms: None
            }),
            vec![]
        );
        let out = d.event(seq);
        seq += 1;
        assert!(
            !out.contains(&PostCancel),
            "not with the next frame: {out:?}"
        );
        // The live stream runs: the wait's end sends it (no frame needed; a checkpoint write
        // may come due first).
        while !d.fire_timeout().contains(&PostCancel) {
            assert!(d.now - failed_at <= 16_000, "no resend");
        }
        waits.push(d.now - failed_at);
    }
    assert_eq!(waits, vec![1_000, 2_000, 4_000, 8_000, 16_000]);
    assert_eq!(
        d.feed(Input::CancelFailed {
            retry_after_ms: None
        }),
        vec![Command::CancelUndelivered]
    );
    assert!(!d.event(seq).contains(&PostCancel), "bounded");
    assert_eq!(
        d.feed(Input::Cancel),
        vec![PostCancel],
        "Stop again: a new budget"
    );
    // `Retry-After` longer than the wait is honoured.
    let failed_at = d.now;
    d.feed(Input::CancelFailed {
        retry_after_ms: Some(5_000),
    });
    while !d.fire_timeout().contains(&PostCancel) {
        assert!(d.now - failed_at <= 5_000, "no resend");
    }
    assert_eq!(d.now - failed_at, 5_000);
    // The turn still ends as usual.
    assert_eq!(d.done(seq + 1), vec![ClearPersisted, status(Done)]);
}

/// A cancel lost with the server (its request failed, then the live stream died and came back
/// 412: the turn runs with no live stream): the machine sends it again once it reads
/// `LiveUnavailable` — no frame or read of the turn would come by itself — and reads the turn
/// when the cancel returns, so the turn ends `cancelled` (a re-check: "Stopping…" stayed for
/// good, the turn running on the server).
#[test]
fn a_cancel_lost_before_the_live_stream_went_away_is_sent_again() {
    let mut d = live_attached(config(), 12);
    assert_eq!(d.feed(Input::Cancel), vec![PostCancel]);
    d.feed(Input::CancelFailed {
        retry_after_ms: None,
    });
    d.feed(Input::NetworkError);
    let mut out = d.fire_timeout();
    if out.contains(&GetTurn) {
        out = d.feed(Input::TurnFetched { terminal: false });
    }
    assert!(!out.contains(&PostCancel), "not before its wait: {out:?}");
    assert_eq!(d.headers(412), vec![status(Rebuilding), Rebuild]);
    let mut out = d.feed(Input::RebuildDone { terminal: false });
    assert!(out.contains(&status(LiveUnavailable)), "{out:?}");
    let started = d.now;
    for _ in 0..8 {
        if out.contains(&PostCancel) || d.conn.poll_timeout().is_none() {
            break;
        }
        out = d.fire_timeout();
    }
    assert!(out.contains(&PostCancel), "no resend: {out:?}");
    assert!(d.now - started <= 2_000, "late: {} ms", d.now - started);
    // The cancel request returned: the turn is read, and it ended.
    assert_eq!(d.feed(Input::CheckTurn), vec![GetTurn]);
    let out = d.feed(Input::TurnFetched { terminal: true });
    assert!(out.contains(&Rebuild), "{out:?}");
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );
}

#[test]
fn cancel_before_the_post_is_accepted_waits_for_it() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    assert_eq!(d.feed(Input::Cancel), vec![], "could hit an older turn");
    assert_eq!(d.headers(200), vec![status(Live), PostCancel]);
    assert_eq!(d.event(1), vec![persist(1)]);
}

#[test]
fn disconnect_closes_without_cancel_and_then_stays_silent() {
    let mut d = live_created(config(), 1);
    d.now = 10;
    d.event(2);
    assert_eq!(d.feed(Input::Disconnect), vec![persist(2), Abort]);
    assert!(d.conn.is_finished());
    assert_eq!(d.conn.poll_timeout(), None);
    for input in [
        Input::Eof,
        Input::NetworkError,
        Input::Online,
        Input::Cancel,
        Input::Tick,
    ] {
        assert_eq!(d.feed(input), vec![]);
    }
    assert_eq!(d.done(3), vec![]);
}

#[test]
fn post_without_a_definite_answer_looks_up_the_turn_and_never_posts_again() {
    for failure in [
        Input::NetworkError,
        Input::ResponseHeaders {
            status: 502,
            retry_after_ms: None,
        },
        Input::ResponseHeaders {
            status: 504,
            retry_after_ms: None,
        },
    ] {
        let mut d = Driver::new(config());
        d.feed(Input::Start {
            mode: StartMode::CreateTurn,
        });
        assert_eq!(d.feed(failure), vec![LookupNewestTurn], "{failure:?}");
        // The lookup itself fails transiently: it is retried, not the POST.
        let commands = d.feed(Input::TurnLookupFailed {
            status: None,
            retry_after_ms: None,
        });
        assert_eq!(reconnecting(&commands).unwrap().0, 1);
        assert_eq!(d.fire_timeout(), vec![LookupNewestTurn]);
        assert_eq!(
            d.feed(Input::TurnLookup { found_ours: true }),
            vec![GetTurn]
        );
        assert_eq!(
            d.feed(Input::TurnFetched { terminal: false }),
            vec![subscribe(0)]
        );
        assert_eq!(d.headers(200), vec![status(Live)]);
    }
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    d.feed(Input::NetworkError);
    let failed = ConnectionError::TurnNotCreated;
    assert_eq!(
        d.feed(Input::TurnLookup { found_ours: false }),
        vec![status(ConnectionStatus::Failed(failed))]
    );
    assert!(failed.is_retryable());
    // A refresh looks again; it never POSTs.
    assert_eq!(
        d.feed(Input::Refresh),
        vec![status(Connecting), LookupNewestTurn]
    );
}

#[test]
fn lookup_that_cannot_finish_reports_an_unknown_outcome() {
    let mut d = Driver::new(Config {
        max_attempts: 2,
        ..config()
    });
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    d.feed(Input::NetworkError);
    for _ in 0..2 {
        d.feed(Input::TurnLookupFailed {
            status: Some(503),
            retry_after_ms: None,
        });
        assert_eq!(d.fire_timeout(), vec![LookupNewestTurn]);
    }
    let failed = ConnectionError::CreateOutcomeUnknown;
    assert_eq!(
        d.feed(Input::TurnLookupFailed {
            status: None,
            retry_after_ms: None
        }),
        vec![status(ConnectionStatus::Failed(failed))]
    );
    // A permanent lookup error is also an unknown outcome.
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    d.feed(Input::ResponseHeaders {
        status: 500,
        retry_after_ms: None,
    });
    assert_eq!(
        d.feed(Input::TurnLookupFailed {
            status: Some(422),
            retry_after_ms: None
        }),
        vec![status(ConnectionStatus::Failed(failed))]
    );
}

#[test]
fn post_refused_before_streaming_fails_without_lookup() {
    for (code, error) in [
        (400, ConnectionError::BadRequest),
        (401, ConnectionError::Auth),
        (403, ConnectionError::Forbidden),
        (404, ConnectionError::NotFound),
        (409, ConnectionError::Http(409)),
        (412, ConnectionError::Http(412)),
        (422, ConnectionError::Http(422)),
        (429, ConnectionError::Http(429)),
    ] {
        let mut d = Driver::new(config());
        d.feed(Input::Start {
            mode: StartMode::CreateTurn,
        });
        assert_eq!(
            d.headers(code),
            vec![status(ConnectionStatus::Failed(error))]
        );
        assert_eq!(d.advance(1_000_000), vec![]);
    }
    assert_eq!(ConnectionError::Http(409).code(), "conflict");
    assert!(ConnectionError::Http(429).is_retryable());
}

#[test]
fn post_stream_dropping_after_turn_created_reattaches_by_get_turn() {
    let mut d = live_created(config(), 3);
    let commands = d.feed(Input::NetworkError);
    assert_eq!(commands.first(), Some(&persist(3)));
    assert_eq!(d.fire_timeout(), vec![GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(3)]
    );
}

#[test]
fn post_stream_dropping_before_any_frame_looks_the_turn_up() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    d.headers(200);
    // 200 but no `turn.created` yet: the turn exists, but its id is unknown.
    let commands = d.feed(Input::Eof);
    assert_eq!(reconnecting(&commands).unwrap().0, 1);
    assert_eq!(d.fire_timeout(), vec![LookupNewestTurn]);
}

#[test]
fn replayed_events_never_lower_the_checkpoint() {
    let mut d = live_attached(
        Config {
            persist_interval_ms: 0,
            ..config()
        },
        5,
    );
    assert_eq!(d.event(6), vec![persist(6)]);
    assert_eq!(d.event(6), vec![]);
    assert_eq!(
        d.feed(Input::Event {
            sequence_number: None,
            turn_done: false
        }),
        vec![]
    );
    assert_eq!(d.event(7), vec![persist(7)]);
    assert_eq!(d.conn.cursor(), Some(7));
    assert_eq!(d.conn.persisted_cursor(), Some(7));
    // A step back on the same stream is out of order (rebuild), and lowers nothing either.
    assert_eq!(d.event(3), vec![Abort, status(Rebuilding), Rebuild]);
    assert_eq!(d.conn.cursor(), Some(7));
    assert_eq!(d.conn.persisted_cursor(), Some(7));
}

#[test]
fn attaching_does_not_rewrite_the_stored_cursor() {
    let mut d = live_attached(config(), 40);
    assert_eq!(d.conn.persisted_cursor(), Some(40));
    assert_eq!(
        d.event(40),
        vec![],
        "a replay of the stored cursor is not new"
    );
    let commands = d.feed(Input::Eof);
    assert!(!commands
        .iter()
        .any(|c| matches!(c, Command::Persist { .. })));
}

#[test]
fn a_clock_that_goes_backwards_is_treated_as_standing_still() {
    let mut d = live_attached(config(), 1);
    d.now = 50_000;
    d.feed(Input::Comment);
    d.now = 10; // the caller's clock jumped back
    assert_eq!(d.feed(Input::Tick), vec![]);
    let (_, at) = reconnecting(&d.feed(Input::NetworkError)).unwrap();
    assert!((50_000..=50_500).contains(&at), "{at}");
}

#[test]
fn late_answers_of_abandoned_requests_are_ignored() {
    let mut d = live_attached(config(), 1);
    // Nothing is in flight for these.
    assert_eq!(d.feed(Input::TurnFetched { terminal: true }), vec![]);
    assert_eq!(d.feed(Input::RebuildDone { terminal: true }), vec![]);
    assert_eq!(d.feed(Input::TurnLookup { found_ours: false }), vec![]);
    assert_eq!(d.feed(Input::HeadersRefreshed), vec![]);
    assert_eq!(
        d.headers(500),
        vec![],
        "duplicate status line of a live stream"
    );
    assert!(d.conn.is_stream_open());
}

/// A resume with a cursor (so with `Last-Event-ID`) refused with a 400: subscribe again at once
/// with the cursor in the query only; refused again: one rebuild from the listings, whose
/// running turn ends `LiveUnavailable` (never a loop) — issue 14.
#[test]
fn a_refused_resume_goes_query_only_then_rebuilds_once() {
    let mut d = live_attached(config(), 2);
    d.feed(Input::NetworkError);
    d.fire_timeout();
    d.feed(Input::TurnFetched { terminal: false });
    assert!(d.conn.sends_resume_header());
    assert_eq!(
        d.headers(400),
        vec![
            Command::ResumeFallback(ResumeFallback::QueryCursor),
            subscribe(2)
        ]
    );
    assert!(!d.conn.sends_resume_header(), "the header stays off");
    assert_eq!(
        d.headers(400),
        vec![
            Command::ResumeFallback(ResumeFallback::Rebuild),
            status(Rebuilding),
            Rebuild
        ]
    );
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: false }),
        vec![status(LiveUnavailable)]
    );
}

/// The same refusal without a cursor (no header was sent) rebuilds at once; a finished turn ends
/// `Done`. A later 400 after that rebuild is final.
#[test]
fn a_refused_resume_without_the_header_rebuilds_then_a_second_refusal_fails() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(0) },
    });
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(0)]
    );
    assert_eq!(
        d.headers(400),
        vec![
            Command::ResumeFallback(ResumeFallback::Rebuild),
            status(Rebuilding),
            Rebuild
        ]
    );
    assert_eq!(d.feed(Input::Refresh), vec![]);
    let mut d2 = live_attached(config(), 0);
    d2.feed(Input::NetworkError);
    d2.fire_timeout();
    d2.feed(Input::TurnFetched { terminal: false });
    d2.headers(400);
    assert_eq!(
        d2.feed(Input::RebuildDone { terminal: false }),
        vec![status(LiveUnavailable)]
    );
    d2.feed(Input::Refresh);
    d2.feed(Input::TurnFetched { terminal: false });
    assert_eq!(
        d2.headers(400),
        vec![status(ConnectionStatus::Failed(
            ConnectionError::BadRequest
        ))]
    );
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );
}

/// `ResumeRefused` (a cross-origin failure with no response) retries without the header only
/// when the header was sent; otherwise it is an ordinary network error (a backoff wait).
#[test]
fn a_resume_refused_by_the_network_drops_the_header_once() {
    let mut d = live_attached(config(), 3);
    d.feed(Input::NetworkError);
    d.fire_timeout();
    d.feed(Input::TurnFetched { terminal: false });
    assert_eq!(
        d.feed(Input::ResumeRefused),
        vec![
            Command::ResumeFallback(ResumeFallback::QueryCursor),
            subscribe(3)
        ]
    );
    let commands = d.feed(Input::ResumeRefused);
    assert!(
        reconnecting(&commands).is_some(),
        "no header any more: a network error, retried with backoff: {commands:?}"
    );
}
