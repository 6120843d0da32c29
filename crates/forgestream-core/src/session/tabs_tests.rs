//! The tab rules (issue 14): relay, apply in order, ask for a gap, take over, lease.
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use alloc::{format, vec};

use super::super::*;
use super::{
    Role, TabEffect, TabInput, DEFAULT_LEASE_MS, FOLLOWER_TTL_MS, HEARTBEAT_MS, LEADER_QUIET_MS,
    REPLAY_WAIT_MS,
};

/// The requests among `effects`, in order.
fn requests(effects: &[Effect]) -> Vec<&HttpRequest> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request(r) => Some(r),
            _ => None,
        })
        .collect()
}

/// The first `method` request whose URL contains `url_part`.
fn request_to<'a>(effects: &'a [Effect], method: Method, url_part: &str) -> &'a HttpRequest {
    requests(effects)
        .into_iter()
        .find(|r| r.method == method && r.url.contains(url_part))
        .unwrap_or_else(|| panic!("no {method:?} {url_part} in {effects:#?}"))
}

struct Tab {
    s: Session,
    now: u64,
    next_command: CommandId,
}

impl Tab {
    fn new(role: Role) -> Self {
        let mut t = Tab {
            s: Session::new("s1", Config::new(Api::new("http://h", Flavor::TrueForge))),
            now: 1_000,
            next_command: 1,
        };
        t.feed(Input::Tab(TabInput::Role(role)));
        t
    }

    fn feed(&mut self, input: Input<'_>) -> Vec<Effect> {
        self.now += 1;
        self.at(input, self.now)
    }

    fn at(&mut self, input: Input<'_>, now: u64) -> Vec<Effect> {
        self.now = self.now.max(now);
        self.s.handle(input, self.now);
        core::iter::from_fn(|| self.s.poll_effect()).collect()
    }

    fn command(&mut self, command: Command) -> Vec<Effect> {
        let id = self.next_command;
        self.next_command += 1;
        self.feed(Input::Command { id, command })
    }

    fn respond(&mut self, request: RequestId, body: &str) -> Vec<Effect> {
        self.feed(Input::Response {
            request,
            status: 200,
            retry_after: None,
            body: body.as_bytes(),
        })
    }

    fn relayed(&mut self, seq: u64, data: &str) -> Vec<Effect> {
        self.feed(Input::Tab(TabInput::Relayed {
            turn_id: "t1",
            sequence_number: seq,
            data,
        }))
    }

    /// Attaches turn t1 and answers the check with "running".
    fn attach_running(&mut self) -> Vec<Effect> {
        let out = self.command(Command::Attach {
            turn_id: "t1".into(),
        });
        let check = request_to(&out, Method::Get, "/turns/t1").id;
        self.respond(check, RUNNING)
    }

    /// The text of the turn's messages, joined.
    fn text(&self) -> String {
        let summary = serde_json::to_value(self.s.view().summary()).unwrap();
        let mut out = String::new();
        for turn in summary["turns"].as_array().into_iter().flatten() {
            for item in turn["items"].as_array().into_iter().flatten() {
                if item["kind"] == "message" {
                    out.push_str(item["text"].as_str().unwrap_or_default());
                }
            }
        }
        out
    }

    fn protocol_warnings(&mut self) -> usize {
        let (_, warnings) = self.s.take_changes();
        warnings.iter().filter(|(c, _)| c == "protocol").count()
    }
}

const RUNNING: &str = r#"{"data":{"id":"t1","session_id":"s1","previous_turn_id":null,"state":{"status":"running"},"created_at":"2026-12-01T00:00:00Z"}}"#;

fn frames() -> Vec<String> {
    vec![
        r#"{"type":"turn.created","id":"e-1","turn_id":"t1","previous_turn_id":null,"input":[{"type":"user.message","content":"hi"}],"state":{"status":"running"},"created_at":"2026-12-01T00:00:00Z","thread_id":null}"#.to_string(),
        r#"{"type":"model.message","id":"m1","thread_id":"main","created_at":"2026-12-01T00:00:01Z"}"#.to_string(),
        r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"one "}"#.to_string(),
        r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"two "}"#.to_string(),
        r#"{"type":"model.message.delta","id":"m1","thread_id":"main","content":"three"}"#.to_string(),
    ]
}

fn follows(effects: &[Effect]) -> Vec<u64> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Tab(TabEffect::Follow { turn_id, after }) if turn_id == "t1" => Some(*after),
            _ => None,
        })
        .collect()
}

fn subscribes(effects: &[Effect]) -> Vec<&HttpRequest> {
    requests(effects)
        .into_iter()
        .filter(|r| r.url.contains("/subscribe"))
        .collect()
}

#[test]
fn a_follower_follows_the_relay_instead_of_subscribing_and_applies_frames_once_in_order() {
    let mut t = Tab::new(Role::Follower);
    let out = t.attach_running();
    assert!(subscribes(&out).is_empty(), "{out:?}");
    assert_eq!(follows(&out), vec![0]);
    assert!(
        matches!(
            t.s.connection_state(),
            ConnectionState::Connecting {
                turn_id: Some("t1"),
                ..
            }
        ),
        "{:?}",
        t.s.connection_state()
    );
    let f = frames();
    for (i, data) in f.iter().enumerate().take(3) {
        t.relayed(i as u64 + 1, data);
    }
    assert!(
        matches!(
            t.s.connection_state(),
            ConnectionState::Live {
                turn_id: Some("t1"),
                ..
            }
        ),
        "{:?}",
        t.s.connection_state()
    );
    // Duplicates (a replay overlapping the live relay, a takeover) are ignored.
    t.relayed(2, &f[1]);
    t.relayed(3, &f[2]);
    t.relayed(4, &f[3]);
    assert_eq!(t.text(), "one two ");
    assert_eq!(t.protocol_warnings(), 0);
    // A frame of another turn is not this relay's.
    t.feed(Input::Tab(TabInput::Relayed {
        turn_id: "t0",
        sequence_number: 5,
        data: &f[4],
    }));
    assert_eq!(t.text(), "one two ");
}

#[test]
fn a_relayed_gap_is_not_applied_asks_once_and_fills_from_the_replay() {
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    let f = frames();
    t.relayed(1, &f[0]);
    t.relayed(2, &f[1]);
    let out = t.relayed(4, &f[3]);
    assert_eq!(
        follows(&out),
        vec![2],
        "the frames after the cursor are asked for"
    );
    let out = t.relayed(5, &f[4]);
    assert!(follows(&out).is_empty(), "asked once per gap");
    assert_eq!(t.text(), "");
    // The replay brings 3..5.
    for (i, data) in f.iter().enumerate().skip(2) {
        t.relayed(i as u64 + 1, data);
    }
    assert_eq!(t.text(), "one two three");
    assert_eq!(t.protocol_warnings(), 0);
}

/// Feeds a subscribe `sub` (opened by a follower past a gap) frames `from..=to` of [`frames`].
fn subscribe_frames(t: &mut Tab, sub: RequestId, from: usize, to: usize) -> Vec<Effect> {
    let mut out = Vec::new();
    for seq in from..=to {
        out.extend(t.frame(sub, seq));
    }
    out
}

/// The subscribe among `out` (after `after`), opened; its id.
fn open_subscribe(t: &mut Tab, out: &[Effect], after: u64) -> RequestId {
    let sub = subscribes(out)[0];
    let cursor = format!("after_sequence_number={after}");
    assert!(sub.url.contains(&cursor), "{}", sub.url);
    let sub = sub.id;
    t.feed(Input::StreamOpened {
        request: sub,
        status: 200,
        content_type: Some("text/event-stream"),
        redirected: false,
    });
    sub
}

fn aborted(effects: &[Effect], id: RequestId) -> bool {
    effects
        .iter()
        .any(|e| matches!(e, Effect::Abort { id: a } if *a == id))
}

#[test]
fn a_gap_nobody_replays_is_read_from_the_live_stream_then_the_relay_again() {
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    let f = frames();
    t.relayed(1, &f[0]);
    t.relayed(4, &f[3]);
    let asked = t.now;
    // Heartbeats keep the leader alive (no steal) while the replay is awaited; nobody replays.
    let mut at = asked;
    let mut out = Vec::new();
    while at < asked + REPLAY_WAIT_MS {
        at += HEARTBEAT_MS;
        t.at(
            Input::Tab(TabInput::LeaderSeen {
                lease_ms: 1000,
                streaming: true,
            }),
            at,
        );
        out.extend(t.at(Input::Timer, at));
    }
    // Not a rebuild from the listings (they hold no deltas: a reply still streaming is not in
    // them): the relay had brought frame 1, so the turn is read, then subscribed after 1.
    let check = request_to(&out, Method::Get, "/turns/t1").id;
    assert!(
        requests(&out).iter().all(|r| !r.url.contains("/events")),
        "{out:?}"
    );
    let out = t.respond(check, RUNNING);
    let sub = open_subscribe(&mut t, &out, 1);
    // The leader goes on relaying meanwhile; those frames are past this tab's cursor.
    t.relayed(5, &f[4]);
    let out = subscribe_frames(&mut t, sub, 2, 4);
    assert!(
        relayed_seqs(&out).is_empty(),
        "a follower's own subscribe is not relayed"
    );
    assert!(!aborted(&out, sub), "not caught up with the relay (5) yet");
    assert_eq!(t.text(), "one two ");
    // Caught up with the newest relayed frame: the subscribe closes, the relay is followed
    // from the cursor (one live stream per session again), and it brings the rest.
    let out = t.frame(sub, 5);
    assert!(aborted(&out, sub), "{out:?}");
    assert_eq!(follows(&out), vec![5]);
    assert_eq!(t.text(), "one two three");
    assert_eq!(t.protocol_warnings(), 0);
    assert!(
        matches!(t.s.connection_state(), ConnectionState::Live { .. }),
        "{:?}",
        t.s.connection_state()
    );
}

#[test]
fn a_tab_opened_late_in_a_long_turn_subscribes_as_soon_as_the_leader_says_its_replay_is_short() {
    // The leader keeps only a tail of a long turn: a follower with nothing yet (cursor 0, the
    // listings hold no deltas) gets frames 4.. from the relay and no replay of 1..3.
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    let f = frames();
    let out = t.relayed(4, &f[3]);
    assert_eq!(follows(&out), vec![0]);
    // A short answer for another turn changes nothing.
    let out = t.feed(Input::Tab(TabInput::ReplayShort { turn_id: "t0" }));
    assert!(subscribes(&out).is_empty());
    // No wait for REPLAY_WAIT_MS: nothing came through the relay, so the machine still waits
    // for its subscribe, which a real one from the cursor now answers.
    let out = t.feed(Input::Tab(TabInput::ReplayShort { turn_id: "t1" }));
    let sub = open_subscribe(&mut t, &out, 0);
    let out = subscribe_frames(&mut t, sub, 1, 3);
    assert!(!aborted(&out, sub));
    let out = t.frame(sub, 4);
    assert!(aborted(&out, sub), "caught up with the relay: {out:?}");
    t.relayed(5, &f[4]);
    assert_eq!(t.text(), "one two three");
    assert_eq!(t.protocol_warnings(), 0);
}

#[test]
fn a_follower_past_a_gap_that_becomes_leader_keeps_its_subscribe_as_the_live_stream() {
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    let f = frames();
    t.relayed(3, &f[2]);
    let out = t.feed(Input::Tab(TabInput::ReplayShort { turn_id: "t1" }));
    let sub = open_subscribe(&mut t, &out, 0);
    subscribe_frames(&mut t, sub, 1, 2);
    // The leader closed: this tab leads, and its subscribe is the session's stream now.
    let out = t.feed(Input::Tab(TabInput::Role(Role::Leader)));
    assert!(!aborted(&out, sub), "{out:?}");
    assert!(subscribes(&out).is_empty());
    t.feed(Input::Tab(TabInput::FollowerHeard));
    let out = subscribe_frames(&mut t, sub, 3, 5);
    assert!(!aborted(&out, sub));
    assert_eq!(
        relayed_seqs(&out),
        vec![3, 4, 5],
        "a leader relays its stream"
    );
    assert_eq!(t.text(), "one two three");
}

/// The sequence numbers relayed among `effects`, in order.
fn relayed_seqs(effects: &[Effect]) -> Vec<u64> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Tab(TabEffect::Relay {
                turn_id,
                sequence_number,
                data,
            }) if turn_id == "t1" && !data.is_empty() => Some(*sequence_number),
            _ => None,
        })
        .collect()
}

/// The frames handed over to keep among `effects`: `(sequence_number, data)`.
fn kept(effects: &[Effect]) -> Vec<(u64, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Tab(TabEffect::Keep { turn_id, frames }) if turn_id == "t1" => Some(frames),
            _ => None,
        })
        .flatten()
        .cloned()
        .collect()
}

impl Tab {
    /// Attaches t1 as running and opens its subscribe; returns the subscribe's id.
    fn stream_open(&mut self) -> RequestId {
        let out = self.attach_running();
        let sub = subscribes(&out)[0].id;
        assert!(follows(&out).is_empty());
        self.feed(Input::StreamOpened {
            request: sub,
            status: 200,
            content_type: Some("text/event-stream"),
            redirected: false,
        });
        sub
    }

    /// Frame `seq` (1-based) of [`frames`] on the stream `sub`.
    fn frame(&mut self, sub: RequestId, seq: usize) -> Vec<Effect> {
        let bytes = format!("id: {seq}\ndata: {}\n\n", frames()[seq - 1]);
        self.feed(Input::Bytes {
            request: sub,
            bytes: bytes.as_bytes(),
        })
    }
}

#[test]
fn the_leader_relays_every_frame_of_its_own_stream_while_a_follower_listens() {
    let mut t = Tab::new(Role::Leader);
    let sub = t.stream_open();
    t.feed(Input::Tab(TabInput::FollowerHeard));
    let mut out = Vec::new();
    for seq in 1..=5 {
        out.extend(t.frame(sub, seq));
    }
    assert_eq!(relayed_seqs(&out), vec![1, 2, 3, 4, 5]);
    assert!(kept(&out).is_empty());
}

#[test]
fn a_leader_alone_keeps_its_frames_and_hands_them_over_when_a_follower_speaks() {
    let mut t = Tab::new(Role::Leader);
    let sub = t.stream_open();
    let mut out = Vec::new();
    for seq in 1..=3 {
        out.extend(t.frame(sub, seq));
    }
    // Nobody listens: nothing leaves the engine.
    assert!(out.iter().all(|e| !matches!(e, Effect::Tab(_))), "{out:#?}");
    // A follower answers a heartbeat: the older frames are handed over to keep, the newest is
    // relayed (the follower sees a gap and asks for the rest), then every frame is relayed.
    let out = t.feed(Input::Tab(TabInput::FollowerHeard));
    let f = frames();
    assert_eq!(kept(&out), vec![(1, f[0].clone()), (2, f[1].clone())]);
    assert_eq!(relayed_seqs(&out), vec![3]);
    assert_eq!(relayed_seqs(&t.frame(sub, 4)), vec![4]);
    // Heard again within the TTL: nothing more to hand over.
    let now = t.now;
    let out = t.at(Input::Tab(TabInput::FollowerHeard), now + FOLLOWER_TTL_MS);
    assert!(kept(&out).is_empty() && relayed_seqs(&out).is_empty());
    // Silent past the TTL: frames are kept again, handed over at the next word.
    t.now += FOLLOWER_TTL_MS + 1;
    let out = t.frame(sub, 5);
    assert!(relayed_seqs(&out).is_empty());
    let out = t.feed(Input::Tab(TabInput::FollowerHeard));
    assert!(kept(&out).is_empty());
    assert_eq!(relayed_seqs(&out), vec![5]);
}

#[test]
fn a_leader_that_becomes_a_follower_hands_over_what_it_kept_without_relaying() {
    let mut t = Tab::new(Role::Leader);
    let sub = t.stream_open();
    t.frame(sub, 1);
    t.frame(sub, 2);
    let out = t.feed(Input::Tab(TabInput::Role(Role::Follower)));
    let f = frames();
    assert_eq!(kept(&out), vec![(1, f[0].clone()), (2, f[1].clone())]);
    assert!(relayed_seqs(&out).is_empty());
}

#[test]
fn a_solo_engine_relays_nothing_and_ignores_relayed_frames() {
    let mut t = Tab::new(Role::Solo);
    let out = t.attach_running();
    assert_eq!(subscribes(&out).len(), 1);
    let f = frames();
    let mut out = Vec::new();
    for (i, data) in f.iter().enumerate() {
        out.extend(t.relayed(i as u64 + 1, data));
    }
    assert!(out.iter().all(|e| !matches!(e, Effect::Tab(_))));
    assert_eq!(t.text(), "");
}

#[test]
fn takeover_resubscribes_from_the_followers_own_cursor() {
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    let f = frames();
    for (i, data) in f.iter().enumerate().take(3) {
        t.relayed(i as u64 + 1, data);
    }
    // The role the engine reports (the wasm `role` getter) is the one last set.
    assert_eq!(t.s.role(), Role::Follower);
    let out = t.feed(Input::Tab(TabInput::Role(Role::Leader)));
    assert_eq!(t.s.role(), Role::Leader);
    // The turn is checked first, as before every resubscribe; then the subscribe after 3.
    let check = request_to(&out, Method::Get, "/turns/t1").id;
    let out = t.respond(check, RUNNING);
    let sub = subscribes(&out);
    assert_eq!(sub.len(), 1, "{out:?}");
    assert_eq!(sub[0].last_event_id, Some(3));
    assert!(
        sub[0].url.contains("after_sequence_number=3"),
        "{}",
        sub[0].url
    );
    // The new stream's frames continue the text with no duplicate.
    let id = sub[0].id;
    t.feed(Input::StreamOpened {
        request: id,
        status: 200,
        content_type: Some("text/event-stream"),
        redirected: false,
    });
    let bytes = format!("id: 4\ndata: {}\n\nid: 5\ndata: {}\n\n", f[3], f[4]);
    t.feed(Input::Bytes {
        request: id,
        bytes: bytes.as_bytes(),
    });
    assert_eq!(t.text(), "one two three");
    assert_eq!(t.protocol_warnings(), 0);
}

#[test]
fn a_leader_that_loses_the_lock_closes_its_subscribe_and_follows_the_relay() {
    let mut t = Tab::new(Role::Leader);
    let out = t.attach_running();
    let sub = subscribes(&out)[0].id;
    t.feed(Input::StreamOpened {
        request: sub,
        status: 200,
        content_type: Some("text/event-stream"),
        redirected: false,
    });
    let f = frames();
    let bytes = format!("id: 1\ndata: {}\n\nid: 2\ndata: {}\n\n", f[0], f[1]);
    t.feed(Input::Bytes {
        request: sub,
        bytes: bytes.as_bytes(),
    });
    let out = t.feed(Input::Tab(TabInput::Role(Role::Follower)));
    assert!(out.contains(&Effect::Abort { id: sub }), "{out:?}");
    // No request at all: the relay goes on from the cursor.
    assert!(requests(&out).is_empty(), "{out:?}");
    assert_eq!(follows(&out), vec![2]);
    t.relayed(3, &f[2]);
    assert_eq!(t.text(), "one ");
}

#[test]
fn a_follower_steals_after_a_lease_without_a_sign_of_the_leader() {
    let steals = |effects: &[Effect]| {
        effects
            .iter()
            .filter(|e| matches!(e, Effect::Tab(TabEffect::Steal)))
            .count()
    };
    let mut t = Tab::new(Role::Follower);
    let start = t.now;
    assert_eq!(t.s.poll_timeout(), Some(start + DEFAULT_LEASE_MS));
    let seen = start + 500;
    t.at(
        Input::Tab(TabInput::LeaderSeen {
            lease_ms: 1000,
            streaming: true,
        }),
        seen,
    );
    assert_eq!(steals(&t.at(Input::Timer, seen + 999)), 0);
    assert_eq!(steals(&t.at(Input::Timer, seen + 1000)), 1);
    // Asked again only after another lease.
    assert_eq!(steals(&t.at(Input::Timer, seen + 1500)), 0);
    assert_eq!(steals(&t.at(Input::Timer, seen + 2000)), 1);
    // A hidden leader promises a longer lease.
    let seen = t.now;
    t.at(
        Input::Tab(TabInput::LeaderSeen {
            lease_ms: 5000,
            streaming: true,
        }),
        seen,
    );
    assert_eq!(steals(&t.at(Input::Timer, seen + 4999)), 0);
}

/// A leader beats every HEARTBEAT_MS while a follower listens, and never steals; alone on its
/// session it beats once as it takes the lead, then not at all, and arms no timer for it (each
/// beat is a `BroadcastChannel` message: ≈ 1 ms of a busy page's main thread, 4 a second, in
/// W3).
#[test]
fn a_leader_beats_only_while_a_follower_listens() {
    // Beats counted by the file's `heartbeats`; steals by this.
    let steals = |effects: &[Effect]| {
        effects
            .iter()
            .filter(|e| matches!(e, Effect::Tab(TabEffect::Steal)))
            .count()
    };
    let beats = |effects: &[Effect]| heartbeats(effects).len();
    // Taking the lead, it says so once (followers of a replaced leader answer that beat).
    let mut l = Tab::new(Role::Follower);
    assert_eq!(beats(&l.feed(Input::Tab(TabInput::Role(Role::Leader)))), 1);
    let t0 = l.now;
    assert_eq!(l.s.poll_timeout(), None, "no timer for a beat nobody hears");
    let mut alone = 0;
    for k in 0..40 {
        alone += beats(&l.at(Input::Timer, t0 + k * HEARTBEAT_MS));
    }
    assert_eq!(alone, 0);
    // A follower speaks (a replay request, a probe, an answer): the beats start within a period.
    let heard = l.now + 10;
    l.at(Input::Tab(TabInput::FollowerHeard), heard);
    let due = l.s.poll_timeout().expect("a beat is due");
    assert!(due <= heard + HEARTBEAT_MS, "due {due}, heard {heard}");
    assert_eq!(beats(&l.at(Input::Timer, due)), 1);
    let t1 = l.now;
    assert_eq!(l.s.poll_timeout(), Some(t1 + HEARTBEAT_MS));
    assert_eq!(beats(&l.at(Input::Timer, t1 + HEARTBEAT_MS - 1)), 0);
    let out = l.at(Input::Timer, t1 + HEARTBEAT_MS);
    assert_eq!((beats(&out), steals(&out)), (1, 0));
    // Unanswered for FOLLOWER_TTL_MS (the follower closed): the beats stop, and the timer.
    let mut beats_after_ttl = 0;
    let mut at = t1 + HEARTBEAT_MS;
    while at <= heard + FOLLOWER_TTL_MS + 4 * HEARTBEAT_MS {
        at += HEARTBEAT_MS;
        let n = beats(&l.at(Input::Timer, at));
        if at > heard + FOLLOWER_TTL_MS {
            beats_after_ttl += n;
        }
    }
    assert_eq!(beats_after_ttl, 0);
    assert_eq!(l.s.poll_timeout(), None);
}

/// A beat's tick that comes late — after the follower lapsed, on a busy page — moves the
/// deadline on: a deadline left due was due again at once, a timer loop that froze a tab of
/// the 8-tab e2e check.
#[test]
fn a_late_heartbeat_tick_after_the_follower_lapsed_arms_nothing_due() {
    let mut l = Tab::new(Role::Leader);
    let heard = l.now + 1;
    l.at(Input::Tab(TabInput::FollowerHeard), heard);
    let due = l.s.poll_timeout().expect("a beat is due");
    let late = heard + FOLLOWER_TTL_MS + 100;
    assert!(due < late);
    let out = l.at(Input::Timer, late);
    assert!(heartbeats(&out).is_empty(), "{out:?}");
    assert!(
        l.s.poll_timeout().is_none_or(|next| next > late),
        "still due: {:?}",
        l.s.poll_timeout()
    );
}

#[test]
fn a_first_leader_subscribes_in_the_relays_place_at_once() {
    // A page's engine starts as a follower (it does not know yet whether another tab leads);
    // its lock is granted before any frame came through the relay.
    let mut t = Tab::new(Role::Follower);
    let out = t.attach_running();
    assert_eq!(follows(&out), vec![0]);
    let out = t.feed(Input::Tab(TabInput::Role(Role::Leader)));
    let sub = subscribes(&out);
    assert_eq!(sub.len(), 1, "no check again, no backoff: {out:?}");
    assert_eq!(sub[0].last_event_id, None);
    assert!(
        matches!(
            t.s.connection_state(),
            ConnectionState::Connecting {
                turn_id: Some("t1"),
                ..
            }
        ),
        "{:?}",
        t.s.connection_state()
    );
    let id = sub[0].id;
    t.feed(Input::StreamOpened {
        request: id,
        status: 200,
        content_type: Some("text/event-stream"),
        redirected: false,
    });
    assert!(
        matches!(
            t.s.connection_state(),
            ConnectionState::Live {
                turn_id: Some("t1"),
                ..
            }
        ),
        "{:?}",
        t.s.connection_state()
    );
}

#[test]
fn a_follower_resume_settles_once_the_turn_is_known_running_without_a_frame() {
    let mut t = Tab::new(Role::Follower);
    let id = t.next_command;
    let out = t.command(Command::Resume {
        checkpoint: Some(Checkpoint {
            v: checkpoint::SCHEMA_VERSION,
            session_id: "s1".into(),
            turn_id: Some("t1".into()),
            seq: 0,
            saved_at: 0,
            creating: None,
        }),
    });
    let check = request_to(&out, Method::Get, "/turns/t1").id;
    let out = t.respond(check, RUNNING);
    assert_eq!(follows(&out), vec![0]);
    let settled = out.iter().find_map(|e| match e {
        Effect::Settle { command, outcome } if *command == id => Some(outcome.clone()),
        _ => None,
    });
    assert_eq!(settled, Some(Ok(Settled::Resumed(Some("t1".to_string())))));
}

fn ended(effects: &[Effect]) -> Vec<&str> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Tab(TabEffect::Ended { turn_id }) => Some(turn_id.as_str()),
            _ => None,
        })
        .collect()
}

const CANCELLED: &str = r#"{"data":{"id":"t1","session_id":"s1","previous_turn_id":null,"state":{"status":"cancelled","reason":"client-cancelled","completed_at":"2026-12-01T00:00:09Z"},"created_at":"2026-12-01T00:00:00Z"}}"#;

impl Tab {
    /// Answers the reads that follow a turn's end (the turn, its event listing) with the
    /// cancelled turn until none is left; returns every effect on the way.
    fn answer_cancelled_reads(&mut self, mut out: Vec<Effect>) -> Vec<Effect> {
        let listing = format!(
            r#"{{"data":[{},{},{{"type":"turn.done","id":"e9","thread_id":null,"state":{{"status":"cancelled","reason":"client-cancelled"}}}}],"pagination":{{"limit":100}}}}"#,
            frames()[0],
            r#"{"type":"model.message","id":"m1","thread_id":"main","content":"one two","created_at":"2026-12-01T00:00:01Z"}"#
        );
        let mut all = Vec::new();
        for _ in 0..6 {
            let next = requests(&out)
                .into_iter()
                .find(|r| r.method == Method::Get)
                .map(|r| (r.id, r.url.contains("/events")));
            all.extend(out);
            let Some((id, events)) = next else {
                return all;
            };
            out = self.respond(id, if events { &listing } else { CANCELLED });
        }
        all.extend(out);
        all
    }
}

/// Field trial (two tabs, the leader cancels): when no `turn.done` comes on its stream within
/// the wait, the leader confirms its cancel by reading the turn and rebuilding it from the
/// listings, so no `turn.done` frame is relayed; it tells the followers the turn ended, once.
#[test]
fn a_leader_whose_turn_ends_without_a_relayed_frame_tells_the_followers() {
    let mut t = Tab::new(Role::Leader);
    let sub = t.stream_open();
    t.feed(Input::Tab(TabInput::FollowerHeard));
    for seq in 1..=3 {
        t.frame(sub, seq);
    }
    let out = t.command(Command::Cancel);
    let post = request_to(&out, Method::Post, "/cancel").id;
    let out = t.respond(post, "{}");
    assert!(
        requests(&out).is_empty(),
        "the stream may still bring turn.done: {out:#?}"
    );
    let out = t.at(Input::Timer, t.now + CANCEL_CHECK_WAIT_MS);
    let out = t.answer_cancelled_reads(out);
    assert_eq!(t.s.connection().status, Some(&ConnectionStatus::Done));
    assert_eq!(ended(&out), vec!["t1"], "{out:#?}");
    assert!(relayed_seqs(&out).is_empty(), "no frame to relay: {out:#?}");
    // Later frames of the old stream (it may still bring its `turn.done`) tell nothing again.
    let out = t.frame(sub, 4);
    assert!(ended(&out).is_empty(), "{out:#?}");
}

/// The follower's half: told the turn it follows ended, it reads the turn and shows its end
/// (before the fix it showed `live` for as long as the leader's heartbeats came).
#[test]
fn a_follower_told_its_turn_ended_reads_it_and_shows_the_end() {
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    let f = frames();
    for (i, data) in f.iter().enumerate().take(3) {
        t.relayed(i as u64 + 1, data);
    }
    // Another turn's end is not this relay's.
    let out = t.feed(Input::Tab(TabInput::TurnEnded { turn_id: "t0" }));
    assert!(requests(&out).is_empty(), "{out:#?}");
    let out = t.feed(Input::Tab(TabInput::TurnEnded { turn_id: "t1" }));
    request_to(&out, Method::Get, "/turns/t1");
    t.answer_cancelled_reads(out);
    assert_eq!(t.s.connection().status, Some(&ConnectionStatus::Done));
    let turn = t.s.view().turn("t1").unwrap();
    assert_eq!(turn.status, TurnStatus::Cancelled);
    // The text as the server stored it.
    assert_eq!(t.text(), "one two");
    // Told again once it shows the end: nothing to read.
    let out = t.feed(Input::Tab(TabInput::TurnEnded { turn_id: "t1" }));
    assert!(requests(&out).is_empty(), "{out:#?}");
    // A follower never tells anyone.
    assert!(ended(&out).is_empty());
}

/// A follower that is told while its turn still runs (a stale message) keeps following.
#[test]
fn a_follower_told_of_an_end_the_server_does_not_confirm_keeps_the_relay() {
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    let f = frames();
    t.relayed(1, &f[0]);
    t.relayed(2, &f[1]);
    let out = t.feed(Input::Tab(TabInput::TurnEnded { turn_id: "t1" }));
    let check = request_to(&out, Method::Get, "/turns/t1").id;
    let out = t.respond(check, RUNNING);
    assert!(
        subscribes(&out).is_empty(),
        "no subscribe of its own: {out:#?}"
    );
    t.relayed(3, &f[2]);
    t.relayed(4, &f[3]);
    assert_eq!(t.text(), "one two ");
    assert!(
        matches!(t.s.connection_state(), ConnectionState::Live { .. }),
        "{:?}",
        t.s.connection_state()
    );
}

fn gone(effects: &[Effect]) -> Vec<&str> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Tab(TabEffect::LiveGone { turn_id }) => Some(turn_id.as_str()),
            _ => None,
        })
        .collect()
}

fn heartbeats(effects: &[Effect]) -> Vec<bool> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Tab(TabEffect::Heartbeat { streaming }) => Some(*streaming),
            _ => None,
        })
        .collect()
}

/// A new-user trial (two tabs, the leader's live stream gone: 412): the leader rebuilt the turn
/// from the listings and showed `liveUnavailable`; the other tab showed `live` for as long as the
/// leader's heartbeats came (75 s and more, Send disabled). The leader tells the followers.
#[test]
fn a_leader_whose_subscribe_is_answered_412_tells_the_followers() {
    let mut t = Tab::new(Role::Leader);
    let out = t.attach_running();
    let subscribe = subscribes(&out)[0].id;
    let out = t.feed(Input::Response {
        request: subscribe,
        status: 412,
        retry_after: None,
        body: b"{}",
    });
    assert_eq!(gone(&out), ["t1"]);
    // Its own rebuild reads the turn, as without followers.
    request_to(&out, Method::Get, "/turns/t1");
}

/// The follower's half: told the live stream of the turn it follows is gone, it rebuilds the turn
/// from the listings and shows what the leader shows (`liveUnavailable` while the server still
/// says running), with the text the server stored.
#[test]
fn a_follower_told_the_live_stream_is_gone_rebuilds_and_shows_it() {
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    let f = frames();
    for (i, data) in f.iter().enumerate().take(3) {
        t.relayed(i as u64 + 1, data);
    }
    assert_eq!(t.s.connection().status, Some(&ConnectionStatus::Live));
    // Another turn's stream is not this relay's.
    let out = t.feed(Input::Tab(TabInput::LiveGone { turn_id: "t0" }));
    assert!(requests(&out).is_empty(), "{out:#?}");
    let mut out = t.feed(Input::Tab(TabInput::LiveGone { turn_id: "t1" }));
    assert!(
        subscribes(&out).is_empty(),
        "no subscribe of its own: {out:#?}"
    );
    let listing = format!(
        r#"{{"data":[{},{}],"pagination":{{"limit":100}}}}"#,
        f[0],
        r#"{"type":"model.message","id":"m1","thread_id":"main","content":"one two","created_at":"2026-12-01T00:00:01Z"}"#
    );
    let mut reads = 0;
    while let Some((id, events)) = requests(&out)
        .into_iter()
        .find(|r| r.method == Method::Get)
        .map(|r| (r.id, r.url.contains("/events")))
    {
        reads += 1;
        assert!(reads < 8, "reads go on: {out:#?}");
        out = t.respond(id, if events { &listing } else { RUNNING });
    }
    assert!(reads >= 2, "the turn and its events were read");
    assert_eq!(
        t.s.connection().status,
        Some(&ConnectionStatus::LiveUnavailable)
    );
    assert_eq!(t.text(), "one two");
    // A follower never tells anyone.
    assert!(gone(&out).is_empty());
}

/// A leader's heartbeat says whether its live stream is open; a follower's relay counts only
/// those that say so as liveness, so while the leader reconnects the follower's watchdog cuts
/// the silent relay and reads the turn itself (it showed `live` for the whole outage).
#[test]
fn heartbeats_of_a_leader_without_a_stream_are_not_the_relays_liveness() {
    let mut l = Tab::new(Role::Leader);
    let out = l.attach_running();
    let subscribe = subscribes(&out)[0].id;
    l.feed(Input::StreamOpened {
        request: subscribe,
        status: 200,
        content_type: Some("text/event-stream"),
        redirected: false,
    });
    l.feed(Input::Tab(TabInput::FollowerHeard));
    let at = l.now + HEARTBEAT_MS;
    assert_eq!(heartbeats(&l.at(Input::Timer, at)), [true]);
    l.feed(Input::NetworkError { request: subscribe });
    let at = l.now + HEARTBEAT_MS;
    assert_eq!(heartbeats(&l.at(Input::Timer, at)), [false]);

    let run = |streaming: bool| {
        let mut t = Tab::new(Role::Follower);
        t.attach_running();
        t.relayed(1, &frames()[0]);
        let start = t.now;
        let mut read_turn_at = None;
        while t.now < start + 120_000 && read_turn_at.is_none() {
            let at = t.now + HEARTBEAT_MS;
            t.at(
                Input::Tab(TabInput::LeaderSeen {
                    lease_ms: 1000,
                    streaming,
                }),
                at,
            );
            let out = t.at(Input::Timer, at);
            if requests(&out).iter().any(|r| r.url.ends_with("/turns/t1")) {
                read_turn_at = Some(t.now - start);
            }
        }
        read_turn_at
    };
    assert_eq!(run(true), None, "a streaming leader's relay is alive");
    let cut = run(false).expect("the silent relay is cut");
    assert!(cut <= 60_000, "cut after {cut} ms");
}

impl Tab {
    /// A follower of t1 (three frames in) whose leader's live stream went (412): rebuilt from
    /// the listings, the turn still running on the server → `liveUnavailable`, relay closed.
    fn follower_live_unavailable() -> Tab {
        let mut t = Tab::new(Role::Follower);
        t.attach_running();
        for (i, data) in frames().iter().enumerate().take(3) {
            t.relayed(i as u64 + 1, data);
        }
        let out = t.feed(Input::Tab(TabInput::LiveGone { turn_id: "t1" }));
        t.answer_running_rebuild(out);
        t
    }

    /// Answers the reads of a rebuild (the turn: running; its events: `turn.created` only) and
    /// checks the engine then reads `liveUnavailable`.
    fn answer_running_rebuild(&mut self, mut out: Vec<Effect>) {
        let listing = format!(
            r#"{{"data":[{}],"pagination":{{"limit":100}}}}"#,
            frames()[0]
        );
        for _ in 0..8 {
            let Some((id, events)) = requests(&out)
                .into_iter()
                .find(|r| r.method == Method::Get)
                .map(|r| (r.id, r.url.contains("/events")))
            else {
                break;
            };
            out = self.respond(id, if events { &listing } else { RUNNING });
        }
        assert_eq!(
            self.s.connection().status,
            Some(&ConnectionStatus::LiveUnavailable)
        );
    }
}

/// A trial (two tabs, the turn's worker died): both tabs read "live stream unavailable"; the
/// leader cancelled and showed the turn `cancelled`; the other tab — its relay closed at the
/// 412 — ignored the leader's "ended" and kept the turn `running` until reloaded. Now it reads
/// the turn again, as its Refresh button would, and shows the end.
#[test]
fn a_follower_whose_live_stream_was_gone_reads_the_turn_when_told_it_ended() {
    let mut t = Tab::follower_live_unavailable();
    // Another turn's end is not this one's.
    let out = t.feed(Input::Tab(TabInput::TurnEnded { turn_id: "t0" }));
    assert!(requests(&out).is_empty(), "{out:#?}");
    let out = t.feed(Input::Tab(TabInput::TurnEnded { turn_id: "t1" }));
    request_to(&out, Method::Get, "/turns/t1");
    assert!(subscribes(&out).is_empty(), "{out:#?}");
    t.answer_cancelled_reads(out);
    assert_eq!(t.s.connection().status, Some(&ConnectionStatus::Done));
    assert_eq!(t.s.view().turn("t1").unwrap().status, TurnStatus::Cancelled);
}

/// The other half of that trial: the leader sent a new message over the stuck turn (the server
/// cancels it, `cancelled-for-next-turn`). The follower attaches to the new turn (the leader
/// announces it) and applies its frames — whose `turn.created` names the turn it replaced — but
/// only a create stream of its own used to read the replaced turn: the follower kept it
/// `running` under the new turn's `done`. Now any followed turn's `previous_turn_id` is read.
#[test]
fn a_turn_attached_to_that_replaced_a_running_one_reads_the_replaced_turn() {
    let mut t = Tab::follower_live_unavailable();
    let out = t.command(Command::Attach {
        turn_id: "t2".into(),
    });
    let check = request_to(&out, Method::Get, "/turns/t2").id;
    let out = t.respond(
        check,
        r#"{"data":{"id":"t2","session_id":"s1","previous_turn_id":"t1","state":{"status":"running"},"created_at":"2026-12-01T00:01:00Z"}}"#,
    );
    assert!(subscribes(&out).is_empty(), "a follower follows the relay");
    let created = r#"{"type":"turn.created","id":"e-2","turn_id":"t2","previous_turn_id":"t1","input":[{"type":"user.message","content":"again"}],"state":{"status":"running"},"created_at":"2026-12-01T00:01:00Z","thread_id":null}"#;
    let out = t.feed(Input::Tab(TabInput::Relayed {
        turn_id: "t2",
        sequence_number: 1,
        data: created,
    }));
    let read = requests(&out)
        .into_iter()
        .find(|r| r.method == Method::Get && r.url.ends_with("/turns/t1"))
        .unwrap_or_else(|| panic!("the replaced turn is read: {out:#?}"))
        .id;
    t.respond(read, CANCELLED);
    assert_eq!(t.s.view().turn("t1").unwrap().status, TurnStatus::Cancelled);
    // Read once: the next frames of the new turn read nothing more.
    let out = t.feed(Input::Tab(TabInput::Relayed {
        turn_id: "t2",
        sequence_number: 2,
        data: r#"{"type":"model.message","id":"m2","thread_id":"main","created_at":"2026-12-01T00:01:01Z"}"#,
    }));
    assert!(requests(&out).is_empty(), "{out:#?}");
}

/// A trial (two tabs, the emulator killed mid-stream): the leader read "reconnecting attempt
/// 1…8"; the follower read `live` for 45 s (its relay's idle watchdog), the two tabs
/// disagreeing the whole time. Now a relay whose leader has had no live stream for
/// [`LEADER_QUIET_MS`] is cut as the leader's stream was: the follower reconnects too (its own
/// read of the turn, then the relay again), and an ordinary quick reconnect of the leader is
/// not seen at all.
#[test]
fn a_follower_reconnects_when_its_leader_has_had_no_stream_for_a_while() {
    let heartbeat = |t: &mut Tab, streaming: bool| {
        let at = t.now + HEARTBEAT_MS;
        let mut out = t.at(
            Input::Tab(TabInput::LeaderSeen {
                lease_ms: 1000,
                streaming,
            }),
            at,
        );
        out.extend(t.at(Input::Timer, at));
        out
    };
    let mut t = Tab::new(Role::Follower);
    t.attach_running();
    t.relayed(1, &frames()[0]);
    // The leader reconnects quickly (three heartbeats without a stream): nothing changes here.
    for _ in 0..3 {
        let out = heartbeat(&mut t, false);
        assert!(requests(&out).is_empty(), "{out:#?}");
    }
    heartbeat(&mut t, true);
    t.relayed(2, &frames()[1]);
    assert_eq!(t.s.connection().status, Some(&ConnectionStatus::Live));
    // The server is gone: the leader's heartbeats say so from here on.
    let start = t.now;
    let mut cut_at = None;
    while cut_at.is_none() && t.now < start + 10_000 {
        heartbeat(&mut t, false);
        if matches!(
            t.s.connection().status,
            Some(ConnectionStatus::Reconnecting { .. })
        ) {
            cut_at = Some(t.now - start);
        }
    }
    let cut_at = cut_at.expect("the follower reconnects too");
    assert!(
        (LEADER_QUIET_MS..=LEADER_QUIET_MS + 2 * HEARTBEAT_MS).contains(&cut_at),
        "cut after {cut_at} ms"
    );
    // Its own read of the turn after the backoff; the server back and the turn running, it
    // follows the relay again (no subscribe of its own) from its cursor.
    let mut out = Vec::new();
    for _ in 0..40 {
        out = heartbeat(&mut t, false);
        if !requests(&out).is_empty() {
            break;
        }
    }
    let read = request_to(&out, Method::Get, "/turns/t1").id;
    let out = t.respond(read, RUNNING);
    assert!(subscribes(&out).is_empty(), "{out:#?}");
    assert_eq!(follows(&out), vec![2]);
    heartbeat(&mut t, true);
    t.relayed(3, &frames()[2]);
    assert_eq!(t.s.connection().status, Some(&ConnectionStatus::Live));
    assert_eq!(t.text(), "one ");
}

/// A re-check (two tabs, the server killed and restarted): the follower, its relay cut while
/// the server was down, was between two reconnect attempts when the leader's resubscribe got
/// the 412 and said so — once. It then read the turn (`running`), followed the relay again,
/// was cut again for the leader's silence, and read "reconnecting" for 30–90 s. A leader in
/// `liveUnavailable` now says it again about once a second while a follower listens, and a
/// follower on the relay by then rebuilds and shows `liveUnavailable` too.
#[test]
fn a_leader_whose_live_stream_stays_gone_says_so_again_to_a_follower_that_missed_it() {
    let mut l = Tab::new(Role::Leader);
    let out = l.attach_running();
    let subscribe = subscribes(&out)[0].id;
    l.feed(Input::Tab(TabInput::FollowerHeard));
    let out = l.feed(Input::Response {
        request: subscribe,
        status: 412,
        retry_after: None,
        body: b"{}",
    });
    assert_eq!(gone(&out), ["t1"]);
    l.answer_running_rebuild(out);
    // Heartbeats for 3 s, a follower answering each: told again about once a second.
    let mut told = 0;
    let start = l.now;
    while l.now < start + 3_000 {
        let at = l.now + HEARTBEAT_MS;
        l.at(Input::Tab(TabInput::FollowerHeard), at);
        told += gone(&l.at(Input::Timer, at)).len();
    }
    assert!((2..=4).contains(&told), "told {told} times in 3 s");
    // Once no follower was heard for `FOLLOWER_TTL_MS`, nothing more is said.
    let heard = l.now;
    let mut quiet = 0;
    while l.now < heard + FOLLOWER_TTL_MS + 10_000 {
        let at = l.now + HEARTBEAT_MS;
        let told = gone(&l.at(Input::Timer, at)).len();
        if l.now > heard + FOLLOWER_TTL_MS {
            quiet += told;
        }
    }
    assert_eq!(quiet, 0);
}
