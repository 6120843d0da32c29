//! Issue 14's page lifecycle rule of the connection machine, with the exact commands on a fake
//! clock: back from bfcache, resumed after a freeze, or woken from sleep, the machine reads the
//! turn first, then resubscribes after the cursor (running) or rebuilds (terminal); no attempt,
//! no silent cycle, one read at a time, nothing in resting states.

#[path = "resume_harness.rs"]
mod harness;

use forgestream_core::resume::{Command, Config, ConnectionStatus, Input, Lifecycle, StartMode};
use harness::{config, persist, reconnecting, status, subscribe, Driver};
use Command::{Abort, ClearPersisted, GetTurn, PostTurn, Rebuild};
use ConnectionStatus::{Connecting, Done, Live, Offline};

const ALL: [Lifecycle; 3] = [Lifecycle::Restored, Lifecycle::Resumed, Lifecycle::Woke];

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

/// A live stream gives way to a read of the turn: still running → resubscribed after the
/// cursor (the frames applied before the event are not asked for again); the badge stays
/// `live` throughout and no attempt is counted.
#[test]
fn a_lifecycle_event_on_a_live_stream_reads_the_turn_then_resubscribes() {
    for event in ALL {
        let mut d = live_attached(config(), 4);
        d.now += 10;
        d.event(5);
        d.now += 10;
        let commands = d.feed(Input::Lifecycle(event));
        assert_eq!(commands, vec![Abort, GetTurn], "{event:?}");
        assert_eq!(d.conn.status(), Some(&Live), "{event:?}");
        assert_eq!(d.conn.attempt(), 0, "{event:?}");
        assert_eq!(
            d.feed(Input::TurnFetched { terminal: false }),
            vec![subscribe(5)],
            "{event:?}"
        );
        assert_eq!(d.headers(200), Vec::<Command>::new(), "{event:?}");
        assert_eq!(d.done(6), vec![ClearPersisted, status(Done)]);
    }
}

/// The turn finished while the page was away: rebuilt from the listings, then `Done`.
#[test]
fn a_lifecycle_event_after_the_turn_finished_rebuilds() {
    let mut d = live_attached(config(), 4);
    assert_eq!(
        d.feed(Input::Lifecycle(Lifecycle::Restored)),
        vec![Abort, GetTurn]
    );
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

/// A create stream whose turn is known is probed too; the cursor it reached is checkpointed
/// before the stream is aborted.
#[test]
fn a_lifecycle_event_on_the_create_stream_checkpoints_then_reads_the_turn() {
    let mut d = Driver::new(config());
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::CreateTurn
        }),
        vec![status(Connecting), PostTurn]
    );
    d.headers(200);
    d.event(1);
    d.now += 10;
    d.event(2);
    let commands = d.feed(Input::Lifecycle(Lifecycle::Resumed));
    assert_eq!(commands.last(), Some(&GetTurn), "{commands:?}");
    assert!(commands.contains(&Abort), "{commands:?}");
    assert!(commands.contains(&persist(2)), "{commands:?}");
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(2)]
    );
}

/// One read at a time: a `resume` and the wake it causes (or bfcache's `pageshow` right after
/// a `resume`) probe once; a read that was in flight for another reason (a hanging one-shot
/// request) is replaced by a fresh one, which the next event then joins.
#[test]
fn lifecycle_events_join_one_read() {
    let mut d = live_attached(config(), 3);
    assert_eq!(
        d.feed(Input::Lifecycle(Lifecycle::Resumed)),
        vec![Abort, GetTurn]
    );
    assert_eq!(d.feed(Input::Lifecycle(Lifecycle::Woke)), vec![]);
    assert_eq!(d.feed(Input::Lifecycle(Lifecycle::Restored)), vec![]);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(3)]
    );

    // A GetTurn of the watchdog (or of a reconnect) that the freeze left hanging is re-sent.
    let mut d = live_attached(config(), 3);
    d.now += 5_000;
    assert!(reconnecting(&d.feed(Input::NetworkError)).is_some());
    assert_eq!(d.fire_timeout(), vec![GetTurn]);
    assert_eq!(
        d.feed(Input::Lifecycle(Lifecycle::Resumed)),
        vec![Abort, GetTurn]
    );
    assert_eq!(d.feed(Input::Lifecycle(Lifecycle::Woke)), vec![]);
}

/// A backoff wait ends at once (the network the wait was for is gone or back; a wake's timer
/// is overdue anyway), and is not counted as another attempt.
#[test]
fn a_lifecycle_event_ends_a_backoff_wait() {
    let mut d = live_attached(config(), 3);
    d.now += 5_000;
    let commands = d.feed(Input::NetworkError);
    assert_eq!(reconnecting(&commands).map(|r| r.0), Some(1));
    assert_eq!(d.feed(Input::Lifecycle(Lifecycle::Woke)), vec![GetTurn]);
    assert_eq!(d.conn.attempt(), 1);
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(3)]
    );
}

/// A suspended page is no evidence of a silent turn: a lifecycle probe long after the last
/// frame counts no silent cycle (the watchdog's probe does).
#[test]
fn a_lifecycle_probe_counts_no_silent_cycle() {
    let cfg = config();
    let mut d = live_attached(cfg, 3);
    d.now += cfg.idle_timeout_ms * 10;
    assert_eq!(
        d.feed(Input::Lifecycle(Lifecycle::Woke)),
        vec![Abort, GetTurn]
    );
    assert_eq!(
        d.feed(Input::TurnFetched { terminal: false }),
        vec![subscribe(3)]
    );
    assert!(d.silences.is_empty(), "{:?}", d.silences);
    assert_eq!(d.conn.silence(), None);
    // The watchdog's own probe of the same silence still counts.
    d.headers(200);
    assert_eq!(d.fire_timeout(), vec![Abort, GetTurn]);
    d.feed(Input::TurnFetched { terminal: false });
    assert_eq!(d.conn.silence().map(|s| s.cycles), Some(1));
}

/// Ignored while offline (`Online` reconnects), before the turn id is known (the POST's own
/// recovery applies), and in the resting states.
#[test]
fn a_lifecycle_event_is_ignored_where_nothing_is_open_to_check() {
    // Offline: paused; the event does nothing, `Online` reads the turn.
    let mut d = live_attached(config(), 3);
    d.feed(Input::Offline);
    assert_eq!(d.conn.status(), Some(&Offline));
    assert_eq!(d.feed(Input::Lifecycle(Lifecycle::Restored)), vec![]);
    assert_eq!(d.feed(Input::Online), vec![status(Connecting), GetTurn]);

    // The create POST before its turn is known: left to its own recovery.
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    assert_eq!(d.feed(Input::Lifecycle(Lifecycle::Resumed)), vec![]);

    // Done: nothing more is emitted.
    let mut d = live_attached(config(), 3);
    d.done(4);
    for event in ALL {
        assert_eq!(d.feed(Input::Lifecycle(event)), vec![]);
    }

    // Before `Start`: nothing.
    let mut d = Driver::new(config());
    assert_eq!(d.feed(Input::Lifecycle(Lifecycle::Woke)), vec![]);
}
