//! Issue 14's liveness rules of the connection machine, each with the exact commands on a fake
//! clock: the attempt budget refills after a healthy connection, the idle watchdog probes the
//! turn before recycling a silent stream and backs off while it still runs, a silent turn is
//! reported (`silence()`, `stalled`) and never given up on, and `CheckTurn` (a cancel returned)
//! reads the turn at once.

#[path = "resume_harness.rs"]
mod harness;

use forgestream_core::resume::{Command, Config, ConnectionStatus, Input, StartMode};
use harness::{config, reconnecting, status, subscribe, Driver};
use Command::{Abort, ClearPersisted, GetTurn, LookupNewestTurn, PostCancel, PostTurn, Rebuild};
use ConnectionStatus::{Connecting, Done, Live};

/// A machine in Attach mode whose subscribe after `after` is live (no frame yet).
fn live_attached(config: Config, after: u64) -> Driver {
    let mut d = Driver::new(config);
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(after) },
    });
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(after)]
    );
    assert_eq!(d.headers(200), vec![status(Live)]);
    d
}

fn is_failed(d: &Driver) -> bool {
    matches!(d.conn.status(), Some(ConnectionStatus::Failed(_)))
}

/// A silent tool call behind a proxy that cuts idle connections (every 30 s here, under the
/// 45 s watchdog): each connection worked, so however many cuts, the budget never runs out.
#[test]
fn a_connection_that_stayed_healthy_refills_the_attempt_budget() {
    let cfg = Config {
        max_attempts: 3,
        ..config()
    };
    let mut d = live_attached(cfg, 5);
    for cut in 1..=20 {
        d.now += 30_000;
        let commands = d.feed(Input::NetworkError);
        assert_eq!(
            reconnecting(&commands).map(|r| r.0),
            Some(1),
            "cut {cut}: {commands:?}"
        );
        assert_eq!(d.fire_timeout(), vec![GetTurn]);
        assert_eq!(
            d.feed(Input::TurnFetched { terminal: false }),
            vec![subscribe(5)]
        );
        assert_eq!(d.headers(200), vec![status(Live)]);
        assert!(!is_failed(&d), "cut {cut}");
    }
    // Connections that die before `healthy_after_ms` still count, and end the run.
    let mut d = live_attached(cfg, 5);
    for attempt in 1..=3 {
        d.now += 1_000;
        let commands = d.feed(Input::NetworkError);
        assert_eq!(reconnecting(&commands).map(|r| r.0), Some(attempt));
        d.fire_timeout();
        d.feed(Input::TurnFetched { terminal: false });
        d.headers(200);
    }
    d.now += 1_000;
    d.feed(Input::NetworkError);
    assert!(is_failed(&d), "{:?}", d.conn.status());
}

/// A clean end after a healthy connection (a proxy that closes, a server's subscribe timeout
/// with nothing new) refills the budget too.
#[test]
fn a_healthy_connection_that_ends_cleanly_refills_the_budget() {
    let mut d = live_attached(
        Config {
            max_attempts: 2,
            ..config()
        },
        5,
    );
    for _ in 0..10 {
        d.now += 20_000;
        let commands = d.feed(Input::Eof);
        assert_eq!(reconnecting(&commands).map(|r| r.0), Some(1));
        d.fire_timeout();
        d.feed(Input::TurnFetched { terminal: false });
        d.headers(200);
    }
    assert!(!is_failed(&d));
}

/// Firefox shows a silent 200 only with its first byte: a resubscribe the server held open
/// through a quiet second reports nothing until the proxy's idle cut ends it with a network
/// error. It was held `healthy_after_ms` from its request, so it was healthy: cut after cut,
/// the budget never runs out (the Firefox e2e "a silent tool call behind idle cuts" ended
/// `TooManyAttempts` after three such cuts, counted from a status line it never saw).
#[test]
fn a_stream_request_held_open_counts_from_its_request_not_its_status_line() {
    let cfg = Config {
        max_attempts: 3,
        healthy_after_ms: 500,
        ..config()
    };
    let mut d = live_attached(cfg, 5);
    for cut in 1..=10 {
        d.now += 1_000;
        let commands = d.feed(Input::NetworkError);
        assert_eq!(
            reconnecting(&commands).map(|r| r.0),
            Some(1),
            "cut {cut}: {commands:?}"
        );
        d.fire_timeout();
        assert_eq!(
            d.feed(Input::TurnFetched { terminal: false }),
            vec![subscribe(5)]
        );
        // No status line: the next cut is all this request reports.
    }
    assert!(!is_failed(&d));
    // Cut before `healthy_after_ms`: each is a failed attempt, and the budget runs out.
    let mut d = live_attached(cfg, 5);
    for _ in 1..=4 {
        d.now += 100;
        d.feed(Input::NetworkError);
        d.fire_timeout();
        d.feed(Input::TurnFetched { terminal: false });
    }
    assert!(is_failed(&d), "{:?}", d.conn.status());
    // A refusal is no healthy connection however long it took to come.
    let mut d = live_attached(cfg, 5);
    d.now += 100;
    d.feed(Input::NetworkError);
    for _ in 1..=3 {
        d.fire_timeout();
        d.feed(Input::TurnFetched { terminal: false });
        d.now += 1_000;
        d.headers(502);
    }
    assert!(is_failed(&d), "{:?}", d.conn.status());
}

/// The watchdog of a silent live stream reads the turn first (at once, not an attempt, the
/// badge unchanged) and, while the turn reads running, resubscribes with a watchdog that
/// doubles each silent cycle up to `max_idle_timeout_ms`: 45 s, 90 s, 180 s, 180 s… After
/// `stalled_after_cycles` cycles the silence says `stalled`; the machine never gives up (here
/// 40 cycles, twice `max_attempts`), and the next frame clears it all.
#[test]
fn the_watchdog_probes_a_silent_stream_and_backs_off_while_the_turn_runs() {
    let mut d = live_attached(config(), 5);
    let mut watchdogs = Vec::new();
    for cycle in 1..=40u32 {
        let opened = d.now;
        let commands = d.fire_timeout();
        watchdogs.push(d.now - opened);
        assert_eq!(commands, vec![Abort, GetTurn], "cycle {cycle}");
        assert_eq!(
            d.feed(Input::TurnFetched { terminal: false }),
            vec![subscribe(5)]
        );
        let silence = d
            .silences
            .last()
            .copied()
            .flatten()
            .expect("silence reported");
        assert_eq!(silence.cycles, cycle);
        assert_eq!(silence.since_ms, 0);
        assert_eq!(silence.silent_ms, d.now);
        assert_eq!(silence.stalled, cycle >= 2, "cycle {cycle}");
        assert_eq!(d.conn.silence(), Some(&silence));
        assert_eq!(d.headers(200), vec![], "the badge stays live");
        assert_eq!(d.conn.status(), Some(&Live));
        assert_eq!(d.conn.attempt(), 0);
    }
    assert_eq!(
        &watchdogs[..5],
        &[45_000, 90_000, 180_000, 180_000, 180_000]
    );
    assert!(watchdogs.iter().all(|w| *w <= 180_000));
    // The turn speaks again: the silence is over, the watchdog back to `idle_timeout_ms`.
    let at = d.now;
    d.event(6);
    assert_eq!(d.silences.last(), Some(&None));
    assert_eq!(d.conn.silence(), None);
    assert_eq!(d.conn.poll_timeout(), Some(at + 45_000));
}

/// The watchdog's probe finds the turn ended (a cancel of a crashed owner's turn writes no
/// `turn.done`): the view is rebuilt and settles at once.
#[test]
fn the_watchdog_probe_settles_a_turn_that_ended() {
    let mut d = live_attached(config(), 5);
    assert_eq!(d.fire_timeout(), vec![Abort, GetTurn]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: true }),
        // From `live`, an ended turn's final read shows no `rebuilding`.
        vec![Rebuild]
    );
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );
}

/// A silence is counted only once the turn has been without a frame for the idle timeout: a
/// cut right after a frame is no silent cycle.
#[test]
fn a_quick_reconnect_after_a_frame_is_no_silence() {
    let mut d = live_attached(config(), 5);
    d.now += 1_000;
    d.event(6);
    d.now += 1_000;
    d.feed(Input::NetworkError);
    d.fire_timeout();
    d.feed(Input::TurnFetched { terminal: false });
    assert!(d.silences.is_empty());
    assert_eq!(d.conn.silence(), None);
}

/// After the cancel request returned, `CheckTurn` reads the turn at once instead of waiting
/// for the stream's `turn.done`: ended → rebuilt and done; still running → resubscribed after
/// the cursor.
#[test]
fn check_turn_reads_the_turn_at_once() {
    let mut d = Driver::new(config());
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::CreateTurn
        }),
        vec![status(Connecting), PostTurn]
    );
    d.headers(200);
    d.event(1);
    d.event(2);
    assert_eq!(d.feed(Input::Cancel), vec![PostCancel]);
    let commands = d.feed(Input::CheckTurn);
    assert_eq!(commands.last(), Some(&GetTurn), "{commands:?}");
    assert!(commands.contains(&Abort));
    assert_eq!(d.conn.status(), Some(&Live));
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: true }),
        // From `live`, an ended turn's final read shows no `rebuilding`.
        vec![Rebuild]
    );
    assert_eq!(
        d.feed(Input::RebuildDone { terminal: true }),
        vec![ClearPersisted, status(Done)]
    );

    // Still running (the cancel is relayed): back on the stream from the cursor.
    let mut d = live_attached(config(), 7);
    assert_eq!(d.feed(Input::CheckTurn), vec![Abort, GetTurn]);
    assert_eq!(d.feed(Input::CheckTurn), vec![], "one read at a time");
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(7)]
    );
    // During a backoff wait: read now instead of waiting.
    let commands = d.feed(Input::NetworkError);
    assert!(reconnecting(&commands).is_some());
    assert_eq!(d.feed(Input::CheckTurn), vec![GetTurn]);
}

/// A subscribe whose headers never come (Firefox reports a crashed owner's silent 200 only with
/// its first byte) is probed like a silent live stream: not a failed attempt, so a budget of one
/// attempt survives any number of such cycles.
#[test]
fn a_subscribe_without_headers_is_probed_not_counted() {
    let mut d = Driver::new(Config {
        max_attempts: 1,
        ..config()
    });
    d.feed(Input::Start {
        mode: StartMode::Attach { after: Some(3) },
    });
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(3)]
    );
    for cycle in 1..=10 {
        assert_eq!(d.fire_timeout(), vec![Abort, GetTurn], "cycle {cycle}");
        assert_eq!(
            d.feed(Input::TurnFetched { terminal: false }),
            vec![subscribe(3)]
        );
        assert!(!is_failed(&d));
    }
    assert!(d.conn.silence().is_some_and(|s| s.stalled));
    // A probe that fails is a failed attempt, as before.
    assert_eq!(d.fire_timeout(), vec![Abort, GetTurn]);
    d.feed(Input::TurnFetchFailed {
        status: None,
        retry_after_ms: None,
    });
    assert_eq!(d.conn.attempt(), 1);
}

/// A create POST whose response headers never come (a server that took the request and went
/// silent) is, at the idle watchdog, a create whose outcome is unknown: the newest turn is
/// looked up at once — no backoff wait, no attempt counted — and never POSTed again
/// (PROTOCOL §8.3; shard 5/40 found the `!streaming` test unpinned: without it the lookup
/// waited a backoff as a failed attempt).
#[test]
fn a_create_post_without_headers_is_looked_up_at_once() {
    let mut d = Driver::new(Config {
        max_attempts: 1,
        ..config()
    });
    let started = d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    assert!(started.contains(&PostTurn), "{started:?}");
    let commands = d.fire_timeout();
    assert!(commands.contains(&Abort), "{commands:?}");
    assert!(commands.contains(&LookupNewestTurn), "{commands:?}");
    assert!(!commands.contains(&PostTurn), "{commands:?}");
    assert_eq!(d.conn.attempt(), 0);
    assert!(!is_failed(&d));
}
