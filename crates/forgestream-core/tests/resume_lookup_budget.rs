//! The lookup budget of a create POST that got no definite answer (PROTOCOL §8.3, session 10's
//! new-user trial: with the server down the view said "checking again (attempt N)" for minutes
//! before `outcome-unknown`). Exact command sequences with a fake clock.

#[path = "resume_harness.rs"]
mod harness;

use forgestream_core::resume::{
    Command, Config, ConnectionError, ConnectionStatus, Input, StartMode,
};
use harness::{config, reconnecting, status, Driver};
use Command::{Abort, LookupNewestTurn, PostTurn};
use ConnectionStatus::{Connecting, Offline};

const UNKNOWN: ConnectionStatus = ConnectionStatus::Failed(ConnectionError::CreateOutcomeUnknown);

/// A machine whose create POST failed on the network at `now = 1_000`: its first lookup is open.
fn unanswered_create(config: Config) -> Driver {
    let mut d = Driver::new(config);
    assert_eq!(
        d.feed(Input::Start {
            mode: StartMode::CreateTurn
        }),
        vec![status(Connecting), PostTurn]
    );
    d.now = 1_000;
    assert_eq!(d.feed(Input::NetworkError), vec![LookupNewestTurn]);
    d
}

/// Fails every lookup on the network until the machine stops looking; returns when it failed
/// and how many lookups it made (the first one included).
fn fail_lookups(d: &mut Driver) -> (u64, u32) {
    let mut lookups = 1;
    loop {
        let out = d.feed(Input::TurnLookupFailed {
            status: None,
            retry_after_ms: None,
        });
        if out.contains(&status(UNKNOWN)) {
            return (d.now, lookups);
        }
        assert!(reconnecting(&out).is_some(), "{out:?}");
        assert_eq!(d.fire_timeout(), vec![LookupNewestTurn]);
        lookups += 1;
        assert!(lookups < 1_000, "never stopped looking");
    }
}

#[test]
fn a_server_that_refuses_every_lookup_gives_outcome_unknown_within_the_budget() {
    // The default budget (10 s), with the default backoff and 20 attempts: before the budget
    // this took the whole `max_attempts` run of waits up to 30 s — minutes.
    let mut d = unanswered_create(config());
    let (failed_at, lookups) = fail_lookups(&mut d);
    let waited = failed_at - 1_000;
    assert!(waited < 10_000, "outcome-unknown after {waited} ms");
    assert!(
        lookups >= 3,
        "it still looks more than once: {lookups} lookups"
    );
    // Nothing more happens by itself but quiet looks (below), and nothing is ever posted again.
    let mut d_off = unanswered_create(Config {
        outcome_recheck_ms: 0,
        ..config()
    });
    fail_lookups(&mut d_off);
    assert_eq!(d_off.advance(600_000), vec![]);
    assert_eq!(d_off.conn.poll_timeout(), None);
}

/// Fails `LookupNewestTurn`s until one comes; returns the commands of the time in between.
fn next_look(d: &mut Driver) -> Vec<Command> {
    let at = d.conn.poll_timeout().expect("a quiet look is scheduled");
    d.now = at;
    d.feed(Input::Tick)
}

#[test]
fn after_outcome_unknown_the_machine_looks_again_quietly_and_ever_less_often() {
    // Session 21: a message sent while the server was down read "Maybe not sent" until the user
    // pressed Retry, even long after the server was back.
    let mut d = unanswered_create(config());
    let (failed_at, _) = fail_lookups(&mut d);
    let mut last = failed_at;
    let mut waits = Vec::new();
    for _ in 0..7 {
        // A quiet look: the lookup, no status (the view keeps `outcome-unknown`).
        assert_eq!(next_look(&mut d), vec![LookupNewestTurn]);
        waits.push(d.now - last);
        // Refused on the network: straight back, no status (it stays), no backoff of its own,
        // no `reconnecting`; the look's end is said for whoever waits on it.
        assert_eq!(
            d.feed(Input::TurnLookupFailed {
                status: None,
                retry_after_ms: None
            }),
            vec![Command::OutcomeStillUnknown]
        );
        last = d.now;
    }
    assert_eq!(
        waits,
        [2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000],
        "doubling from outcome_recheck_ms up to the backoff cap"
    );
    // A look the server does not answer is cut at the lookup budget, quietly too.
    assert_eq!(next_look(&mut d), vec![LookupNewestTurn]);
    let looked = d.now;
    assert_eq!(d.fire_timeout(), vec![Abort, Command::OutcomeStillUnknown]);
    assert_eq!(d.now, looked + 10_000);
    // The server is back and has the turn: followed from here, the status says so.
    assert_eq!(next_look(&mut d), vec![LookupNewestTurn]);
    assert_eq!(
        d.feed(Input::TurnLookup { found_ours: true }),
        vec![status(Connecting), Command::GetTurn]
    );
}

#[test]
fn a_quiet_look_that_finds_no_turn_says_not_created() {
    let mut d = unanswered_create(config());
    fail_lookups(&mut d);
    assert_eq!(next_look(&mut d), vec![LookupNewestTurn]);
    assert_eq!(
        d.feed(Input::TurnLookup { found_ours: false }),
        vec![status(ConnectionStatus::Failed(
            ConnectionError::TurnNotCreated
        ))]
    );
    // Known now: nothing more is looked up.
    assert_eq!(d.conn.poll_timeout(), None);
    assert_eq!(d.advance(600_000), vec![]);
}

#[test]
fn no_quiet_look_while_offline_and_refresh_starts_the_pace_over() {
    let mut d = unanswered_create(config());
    fail_lookups(&mut d);
    // Two unanswered looks: the next one is 8 s away.
    for _ in 0..2 {
        assert_eq!(next_look(&mut d), vec![LookupNewestTurn]);
        d.feed(Input::TurnLookupFailed {
            status: Some(503),
            retry_after_ms: None,
        });
    }
    assert_eq!(d.conn.poll_timeout(), Some(d.now + 8_000));
    // Offline: nothing scheduled (no timer that fires for nothing), the status unchanged.
    assert_eq!(d.feed(Input::Offline), vec![]);
    assert_eq!(d.conn.poll_timeout(), None);
    assert_eq!(d.advance(120_000), vec![]);
    // Online looks at once, loudly, with a new budget; its failure starts the pace over at 2 s.
    assert_eq!(
        d.feed(Input::Online),
        vec![status(Connecting), LookupNewestTurn]
    );
    fail_lookups(&mut d);
    assert_eq!(d.conn.poll_timeout(), Some(d.now + 2_000));
    // A look in flight when the browser goes offline pauses like any lookup.
    assert_eq!(next_look(&mut d), vec![LookupNewestTurn]);
    assert_eq!(d.feed(Input::Offline), vec![Abort, status(Offline)]);
    assert_eq!(
        d.feed(Input::Online),
        vec![status(Connecting), LookupNewestTurn]
    );
}

#[test]
fn the_budget_is_an_option_in_ms() {
    let mut d = unanswered_create(Config {
        create_lookup_budget_ms: 2_000,
        ..config()
    });
    let (failed_at, _) = fail_lookups(&mut d);
    assert!(failed_at - 1_000 < 2_000, "{failed_at}");
    assert_eq!(Config::default().create_lookup_budget_ms, 10_000);
}

#[test]
fn a_lookup_unanswered_at_the_end_of_the_budget_is_aborted() {
    // A host that does not answer: without the budget the lookup hung until the 45 s watchdog.
    let mut d = unanswered_create(config());
    assert_eq!(d.conn.poll_timeout(), Some(11_000));
    assert_eq!(d.fire_timeout(), vec![Abort, status(UNKNOWN)]);
    assert_eq!(d.now, 11_000);
}

#[test]
fn refresh_and_online_look_again_with_a_new_budget_never_posting() {
    let mut d = unanswered_create(config());
    fail_lookups(&mut d);
    d.now += 60_000;
    let start = d.now;
    assert_eq!(
        d.feed(Input::Refresh),
        vec![status(Connecting), LookupNewestTurn]
    );
    // A new budget from the refresh, not the old one (long spent).
    assert_eq!(d.conn.poll_timeout(), Some(start + 10_000));
    let (failed_at, _) = fail_lookups(&mut d);
    assert!(failed_at - start < 10_000);
    // The browser comes back online: the same.
    d.now += 5_000;
    assert_eq!(
        d.feed(Input::Online),
        vec![status(Connecting), LookupNewestTurn]
    );
    assert_eq!(d.conn.poll_timeout(), Some(d.now + 10_000));
    // This time the server answers: the turn was created, the machine follows it.
    assert_eq!(
        d.feed(Input::TurnLookup { found_ours: true }),
        vec![Command::GetTurn]
    );
    // The lookup's deadline no longer applies to what follows.
    assert_eq!(d.conn.poll_timeout(), Some(d.now + 45_000));
}

#[test]
fn online_after_another_failure_does_nothing() {
    let mut d = Driver::new(config());
    d.feed(Input::Start {
        mode: StartMode::CreateTurn,
    });
    d.feed(Input::NetworkError);
    let not_created = ConnectionStatus::Failed(ConnectionError::TurnNotCreated);
    assert_eq!(
        d.feed(Input::TurnLookup { found_ours: false }),
        vec![status(not_created)]
    );
    assert_eq!(d.feed(Input::Online), vec![]);
}

#[test]
fn going_offline_pauses_the_budget_and_online_starts_a_new_one() {
    let mut d = unanswered_create(config());
    d.now = 9_000;
    assert_eq!(d.feed(Input::Offline), vec![Abort, status(Offline)]);
    assert_eq!(d.advance(60_000), vec![]);
    let back = d.now;
    assert_eq!(
        d.feed(Input::Online),
        vec![status(Connecting), LookupNewestTurn]
    );
    assert_eq!(d.conn.poll_timeout(), Some(back + 10_000));
}
