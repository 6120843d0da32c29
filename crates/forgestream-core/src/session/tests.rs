//! One unit test per rule of the engine (the fault simulator in `tests/fault_props.rs` drives the
//! same engine through random faults).
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use alloc::{format, vec};

use super::*;
use crate::reduce::TurnStatus;
use crate::respond::Decision;

#[path = "../../tests/support/engine.rs"]
mod support;

/// Which turns' items cross (`held.rs`): a child module, so it shares the driver below.
#[path = "held_tests.rs"]
mod held;
/// Catching up with turns made elsewhere (`sync.rs`).
#[path = "sync_tests.rs"]
mod sync;
use support::{request_to, requests, settled};

fn user_text(text: &str) -> crate::wire::InputItem {
    crate::wire::InputItem::UserMessage {
        content: crate::wire::UserContent::Text(text.into()),
    }
}

fn engine() -> Session {
    Session::new(
        "s1",
        Config {
            max_frame_bytes: 1 << 20,
            ..Config::new(Api::new("http://h", Flavor::TrueForge))
        },
    )
}

struct Driver {
    s: Session,
    now: u64,
    effects: Vec<Effect>,
    next_command: CommandId,
}

impl Driver {
    fn new() -> Self {
        Driver {
            s: engine(),
            now: 1_000,
            effects: Vec::new(),
            next_command: 1,
        }
    }

    fn feed(&mut self, input: Input<'_>) -> Vec<Effect> {
        self.now += 1;
        self.s.handle(input, self.now);
        let out: Vec<Effect> = core::iter::from_fn(|| self.s.poll_effect()).collect();
        self.effects.extend(out.iter().cloned());
        out
    }

    fn command(&mut self, command: Command) -> (CommandId, Vec<Effect>) {
        let id = self.next_command;
        self.next_command += 1;
        (id, self.feed(Input::Command { id, command }))
    }

    fn respond(&mut self, request: RequestId, status: u16, body: &str) -> Vec<Effect> {
        self.feed(Input::Response {
            request,
            status,
            retry_after: None,
            body: body.as_bytes(),
        })
    }

    fn stream(&mut self, request: RequestId, frames: &[(u64, String)]) -> Vec<Effect> {
        let mut out = self.feed(Input::StreamOpened {
            request,
            status: 200,
            content_type: Some("text/event-stream"),
            redirected: false,
        });
        for (seq, data) in frames {
            let bytes = format!("id: {seq}\ndata: {data}\n\n");
            out.extend(self.feed(Input::Bytes {
                request,
                bytes: bytes.as_bytes(),
            }));
        }
        out
    }

    /// One frame `seq` of the open stream `request`, as one body read.
    fn stream_bytes(&mut self, request: RequestId, seq: u64, data: &str) -> Vec<Effect> {
        let bytes = format!("id: {seq}\ndata: {data}\n\n");
        self.feed(Input::Bytes {
            request,
            bytes: bytes.as_bytes(),
        })
    }
}

fn created(turn: &str, previous: Option<&str>) -> String {
    let previous = previous.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"turn.created","id":"e-{turn}","turn_id":"{turn}","previous_turn_id":{previous},"input":[{{"type":"user.message","content":"hi"}}],"state":{{"status":"running"}},"created_at":"2026-12-01T00:00:00Z","thread_id":null}}"#
    )
}

fn message(id: &str) -> String {
    format!(
        r#"{{"type":"model.message","id":"{id}","thread_id":"main","created_at":"2026-12-01T00:00:01Z"}}"#
    )
}

fn delta(id: &str, text: &str) -> String {
    format!(r#"{{"type":"model.message.delta","id":"{id}","thread_id":"main","content":"{text}"}}"#)
}

fn turn_json(turn: &str, previous: Option<&str>, state: &str) -> String {
    let previous = previous.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"data":{{"id":"{turn}","session_id":"s1","previous_turn_id":{previous},"state":{state},"created_at":"2026-12-01T00:00:00Z"}}}}"#
    )
}

const CANCELLED_FOR_NEXT: &str = r#"{"status":"cancelled","reason":"cancelled-for-next-turn","completed_at":"2026-12-01T00:00:05Z"}"#;
const RUNNING: &str = r#"{"status":"running"}"#;
const DONE_STATE: &str = r#"{"status":"done","completed_at":"2026-12-01T00:00:09Z"}"#;

/// Sends a turn and streams `turn.created` plus a partial message; returns the stream request.
fn running_turn(d: &mut Driver, turn: &str, previous: Option<&str>) -> (RequestId, CommandId) {
    let (send, effects) = d.command(Command::Send {
        input: vec![user_text("hi")],
        interrupt: previous.is_some(),
    });
    let post = request_to(&effects, Method::Post, "/turns").id;
    let out = d.stream(
        post,
        &[
            (1, created(turn, previous)),
            (2, message(&format!("m-{turn}"))),
            (3, delta(&format!("m-{turn}"), "partial")),
        ],
    );
    assert_eq!(
        settled(&out, send),
        Some(&Ok(Settled::Turn(turn.to_string())))
    );
    (post, send)
}

#[test]
fn an_interrupted_turn_ends_cancelled_for_next_turn_within_one_round_trip() {
    let mut d = Driver::new();
    let (old_stream, _) = running_turn(&mut d, "t1", None);
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Running);
    // The interrupting send closes the old stream and POSTs the new turn.
    let (send, effects) = d.command(Command::Send {
        input: vec![user_text("stop, do this")],
        interrupt: true,
    });
    assert!(effects.contains(&Effect::Abort { id: old_stream }));
    let post = request_to(&effects, Method::Post, "/turns").id;
    // Its `turn.created` names the old turn: the engine reads the old turn at once.
    let out = d.stream(post, &[(1, created("t2", Some("t1")))]);
    assert_eq!(settled(&out, send), Some(&Ok(Settled::Turn("t2".into()))));
    let check = request_to(&out, Method::Get, "/turns/t1").id;
    // A late delta of the old stream is ignored (its request was aborted).
    d.feed(Input::Bytes {
        request: old_stream,
        bytes: format!("id: 4\ndata: {}\n\n", delta("m-t1", " late")).as_bytes(),
    });
    d.respond(check, 200, &turn_json("t1", None, CANCELLED_FOR_NEXT));
    let old = d.s.view().turn("t1").unwrap();
    assert_eq!(old.status, TurnStatus::Cancelled);
    assert_eq!(
        old.cancel_reason().map(|r| r.as_str()),
        Some("cancelled-for-next-turn")
    );
    let text = d.s.view().summary();
    assert!(!serde_json::to_string(&text).unwrap().contains("late"));
    assert_eq!(d.s.view().turn("t2").unwrap().status, TurnStatus::Running);
}

#[test]
fn an_interrupted_turn_the_server_still_reports_running_is_read_again() {
    let mut d = Driver::new();
    running_turn(&mut d, "t1", None);
    let (_, effects) = d.command(Command::Send {
        input: vec![user_text("next")],
        interrupt: true,
    });
    let post = request_to(&effects, Method::Post, "/turns").id;
    let out = d.stream(post, &[(1, created("t2", Some("t1")))]);
    let check = request_to(&out, Method::Get, "/turns/t1").id;
    assert!(d
        .respond(check, 200, &turn_json("t1", None, RUNNING))
        .is_empty());
    let at = d.s.poll_timeout().unwrap();
    d.now = at;
    let out = d.feed(Input::Timer);
    let again = request_to(&out, Method::Get, "/turns/t1").id;
    d.respond(again, 200, &turn_json("t1", None, CANCELLED_FOR_NEXT));
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Cancelled);
}

/// Interrupts `t1` with `t2` (its `turn.created` names `t1`); returns the check of `t1` it
/// starts (`GET …/turns/t1`).
fn interrupted_check(d: &mut Driver) -> RequestId {
    running_turn(d, "t1", None);
    let (_, effects) = d.command(Command::Send {
        input: vec![user_text("next")],
        interrupt: true,
    });
    let post = request_to(&effects, Method::Post, "/turns").id;
    let out = d.stream(post, &[(1, created("t2", Some("t1")))]);
    request_to(&out, Method::Get, "/turns/t1").id
}

#[test]
fn a_replaced_turn_whose_read_fails_is_read_again_and_one_the_server_does_not_know_is_not() {
    // A 503 on the check is transient: without another read the old turn would show `running`
    // under the new one for good (docs/session-engine.md, "Interrupt").
    let mut d = Driver::new();
    let check = interrupted_check(&mut d);
    d.respond(check, 503, r#"{"error":{"message":"busy"}}"#);
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Running);
    d.now = d.s.poll_timeout().unwrap();
    let out = d.feed(Input::Timer);
    let again = request_to(&out, Method::Get, "/turns/t1").id;
    d.respond(again, 200, &turn_json("t1", None, CANCELLED_FOR_NEXT));
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Cancelled);

    // A 404: the turn is gone, reading it again (up to 20 times) cannot help.
    let mut d = Driver::new();
    let check = interrupted_check(&mut d);
    d.respond(check, 404, r#"{"error":{"message":"no such turn"}}"#);
    for _ in 0..MAX_TURN_CHECKS {
        d.now += TURN_CHECK_STEP_MS * u64::from(MAX_TURN_CHECKS);
        let out = d.feed(Input::Timer);
        assert!(
            !requests(&out).iter().any(|r| r.url.ends_with("/turns/t1")),
            "a turn the server does not know is not read again: {out:?}"
        );
    }
}

/// A check of the replaced turn answered with another turn's body (a misrouting proxy, a
/// cache) changes nothing and is read again: only `t1`'s own state may end `t1` (shard 4/40
/// found the id check unpinned).
#[test]
fn a_check_answered_with_another_turn_is_ignored_and_read_again() {
    let mut d = Driver::new();
    let check = interrupted_check(&mut d);
    d.respond(check, 200, &turn_json("t2", Some("t1"), CANCELLED_FOR_NEXT));
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Running);
    assert_eq!(d.s.view().turn("t2").unwrap().status, TurnStatus::Running);
    d.now = d.s.poll_timeout().unwrap();
    let out = d.feed(Input::Timer);
    let again = request_to(&out, Method::Get, "/turns/t1").id;
    d.respond(again, 200, &turn_json("t1", None, CANCELLED_FOR_NEXT));
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Cancelled);
}

/// A turn's live buffer from its first event: `turn.created`, `model.message` `m1`, then
/// deltas `w3`, `w4`, … up to sequence number `last`.
fn replay(turn: &str, last: u64) -> Vec<(u64, String)> {
    (1..=last)
        .map(|n| match n {
            1 => (n, created(turn, None)),
            2 => (n, message("m1")),
            _ => (n, delta("m1", &format!("w{n} "))),
        })
        .collect()
}

fn notified(effects: &[Effect]) -> bool {
    effects.iter().any(|e| matches!(e, Effect::Notify))
}

fn checkpoint(turn: &str) -> Checkpoint {
    Checkpoint {
        v: checkpoint::SCHEMA_VERSION,
        session_id: "s1".into(),
        turn_id: Some(turn.into()),
        seq: 7,
        saved_at: 1,
        creating: None,
    }
}

const EMPTY_TURNS: &str = r#"{"data":[],"pagination":{}}"#;
const EMPTY_EVENTS: &str = r#"{"data":[],"pagination":{}}"#;

#[test]
fn concurrent_restores_share_one_load_and_one_subscribe() {
    let mut d = Driver::new();
    let (a, first) = d.command(Command::Restore {
        checkpoint: Some(checkpoint("t1")),
    });
    let (b, second) = d.command(Command::Restore {
        checkpoint: Some(checkpoint("t1")),
    });
    assert!(
        second.is_empty(),
        "the second restore joins the first: {second:?}"
    );
    // The timeline first, then the turns listing (TrueForge).
    let events = request_to(&first, Method::Get, "/events").id;
    let out = d.respond(events, 200, EMPTY_EVENTS);
    let turns = request_to(&out, Method::Get, "/turns?limit=25").id;
    let out = d.respond(turns, 200, EMPTY_TURNS);
    // Check before subscribe.
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    assert!(
        settled(&out, a).is_none(),
        "restore waits for the turn check"
    );
    let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
    let subscribe = request_to(&out, Method::Get, "/subscribe?after_sequence_number=0");
    // No cursor yet: no `Last-Event-ID` (the query says `after_sequence_number=0`).
    assert_eq!(subscribe.last_event_id, None);
    let sub_id = subscribe.id;
    // The replay up to the checkpoint (seq 7): both settle once the view shows it.
    let out = d.stream(sub_id, &replay("t1", 7));
    assert_eq!(settled(&out, a), Some(&Ok(Settled::Restored(true))));
    assert_eq!(settled(&out, b), Some(&Ok(Settled::Restored(true))));
    // A third, later restore settles at once and opens nothing.
    let (c, out) = d.command(Command::Restore {
        checkpoint: Some(checkpoint("t1")),
    });
    assert_eq!(settled(&out, c), Some(&Ok(Settled::Restored(true))));
    let subscribes = requests(&d.effects)
        .iter()
        .filter(|r| r.url.contains("/subscribe"))
        .count();
    assert_eq!(subscribes, 1);
    let loads = requests(&d.effects)
        .iter()
        .filter(|r| r.url.contains("/turns?limit=25"))
        .count();
    assert_eq!(loads, 1);
}

/// Restores onto running `t1` with a checkpoint at `seq`, up to the subscribe's answer.
fn restore_onto_running(d: &mut Driver, seq: u64) -> (CommandId, RequestId) {
    let (restore, out) = d.command(Command::Restore {
        checkpoint: Some(Checkpoint {
            seq,
            ..checkpoint("t1")
        }),
    });
    let events = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(events, 200, EMPTY_EVENTS);
    let turns = request_to(&out, Method::Get, "/turns?limit=25").id;
    let out = d.respond(turns, 200, EMPTY_TURNS);
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
    let subscribe = request_to(&out, Method::Get, "/subscribe?after_sequence_number=0").id;
    let _ = d.s.take_changes();
    (restore, subscribe)
}

#[test]
fn a_restore_shows_nothing_of_the_replay_short_of_its_checkpoint() {
    let mut d = Driver::new();
    let (restore, subscribe) = restore_onto_running(&mut d, 6);
    // Frames 1..5 of the replay: the page had shown up to 6 before the reload.
    let frames = replay("t1", 8);
    let out = d.stream(subscribe, &frames[..5]);
    assert!(
        !notified(&out),
        "no notification below the checkpoint: {out:?}"
    );
    // Nor is the restore settled: what the app reads when it resolves would be the snapshot
    // from before the open (`loading` with no turn), and a `send` then a `turn-running` refusal.
    assert_eq!(settled(&out, restore), None, "{out:?}");
    // Frame 6 reaches it: one notification, the view shows w3..w6, and the restore settles
    // with it (before it, so the app's flush on resolving publishes that view).
    let out = d.stream_bytes(subscribe, 6, &frames[5].1);
    assert!(notified(&out));
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
    let order = |f: fn(&Effect) -> bool| out.iter().position(f);
    assert!(
        order(|e| matches!(e, Effect::Settle { .. })) < order(|e| matches!(e, Effect::Notify)),
        "{out:?}"
    );
    assert_eq!(message_texts(&d.s, "t1"), ["w3 w4 w5 w6 "]);
    // Live again: later frames notify as usual.
    let _ = d.s.take_changes();
    let out = d.stream_bytes(subscribe, 7, &frames[6].1);
    assert!(notified(&out));
}

#[test]
fn a_replay_that_trickles_is_shown_after_the_catch_up_bound() {
    let mut d = Driver::new();
    let start = d.now;
    let (restore, subscribe) = restore_onto_running(&mut d, 50);
    let frames = replay("t1", 3);
    let out = d.stream(subscribe, &frames);
    assert!(!notified(&out));
    assert_eq!(settled(&out, restore), None);
    // The executor is woken at each deadline it is given (the checkpoint's write comes first);
    // the view is shown at the bound, not before, and the restore settles with it.
    let mut out = Vec::new();
    while !notified(&out) {
        assert_eq!(settled(&out, restore), None);
        let at = d.s.poll_timeout().expect("a deadline");
        assert!(at <= d.now + CATCH_UP_MAX_MS, "{at} vs now {}", d.now);
        d.now = at - 1;
        out = d.feed(Input::Timer);
    }
    assert!(
        (start + CATCH_UP_MAX_MS..=start + CATCH_UP_MAX_MS + 20).contains(&d.now),
        "shown at {} (restore at {start})",
        d.now
    );
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
    assert_eq!(message_texts(&d.s, "t1"), ["w3 "]);
}

#[test]
fn a_replay_cut_short_by_the_stream_shows_what_it_has() {
    let mut d = Driver::new();
    let (_, subscribe) = restore_onto_running(&mut d, 50);
    let out = d.stream(subscribe, &replay("t1", 4));
    assert!(!notified(&out));
    // The stream ends early: the turn is read again and resubscribed after 4, still held.
    let out = d.feed(Input::End { request: subscribe });
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
    assert!(!notified(&out), "{out:?}");
    let again = request_to(&out, Method::Get, "/subscribe").id;
    // Its live buffer is gone (412): the turn is rebuilt from the listings, and the page shows
    // what it has meanwhile.
    let out = d.respond(again, 412, "");
    assert!(notified(&out), "{out:?}");
    assert_eq!(message_texts(&d.s, "t1"), ["w3 w4 "]);
}

#[test]
fn a_restore_at_the_start_of_a_turn_notifies_at_once() {
    let mut d = Driver::new();
    // A checkpoint at 0 (the turn was just created): nothing to catch up with.
    let (restore, subscribe) = restore_onto_running(&mut d, 0);
    let out = d.stream(subscribe, &replay("t1", 1));
    assert!(notified(&out));
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
}

#[test]
fn a_stale_session_restores_to_nothing_and_clears_its_records() {
    let mut d = Driver::new();
    let (a, out) = d.command(Command::Restore {
        checkpoint: Some(checkpoint("t1")),
    });
    let events = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(events, 404, r#"{"error":{"message":"session not found"}}"#);
    assert_eq!(settled(&out, a), Some(&Ok(Settled::Restored(false))));
    assert!(out.contains(&Effect::Storage(StorageEffect::ClearPointer {
        session_id: "s1".into()
    })));
    assert!(
        out.contains(&Effect::Storage(StorageEffect::RemoveCheckpoint {
            session_id: "s1".into()
        }))
    );
    assert!(requests(&out).is_empty(), "no subscribe to a gone session");
}

const PAUSED: &str = r#"{"status":"done","output":null,"required_actions":[{"type":"tool.approval_required","id":"ev-req","created_at":"2026-12-01T00:00:02Z","thread_id":"main","tool_calls":[{"id":"call-1","source_event_id":"ev-msg"}]}],"completed_at":"2026-12-01T00:00:03Z"}"#;

#[test]
fn respond_right_after_restore_onto_a_paused_turn_waits_for_the_check() {
    let mut d = Driver::new();
    let (restore, out) = d.command(Command::Resume {
        checkpoint: Some(checkpoint("t1")),
    });
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    // The app answers at once: no `turn-running`, the answer waits.
    let (respond, out) = d.command(Command::Respond {
        decisions: vec![Decision::Allow {
            tool_call_id: "call-1".into(),
        }],
    });
    assert!(settled(&out, respond).is_none());
    let out = d.respond(get, 200, &turn_json("t1", None, PAUSED));
    let rebuild_turn = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(rebuild_turn, 200, &turn_json("t1", None, PAUSED));
    let events = request_to(&out, Method::Get, "/turns/t1/events").id;
    let out = d.respond(events, 200, EMPTY_EVENTS);
    assert_eq!(
        settled(&out, restore),
        Some(&Ok(Settled::Resumed(Some("t1".into()))))
    );
    let post = request_to(&out, Method::Post, "/sessions/s1/turns");
    assert!(post
        .json_body
        .as_deref()
        .unwrap()
        .contains("user.tool_approval"));
    assert!(
        settled(&out, respond).is_none(),
        "settles once the new turn is created"
    );
}

#[test]
fn send_while_running_is_refused_unless_interrupting() {
    let mut d = Driver::new();
    running_turn(&mut d, "t1", None);
    let (send, out) = d.command(Command::Send {
        input: vec![user_text("again")],
        interrupt: false,
    });
    match settled(&out, send) {
        Some(Err(e)) => assert_eq!(e.code, ErrorCode::TurnRunning),
        other => panic!("{other:?}"),
    }
}

#[test]
fn pagehide_writes_the_checkpoint_the_interval_deferred_and_nothing_after_the_turn_ended() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let written = |effects: &[Effect]| -> Vec<u64> {
        stored_records(effects).iter().map(|c| c.seq).collect()
    };
    // Frames 4..6 within the write interval after the checkpoint at 1: none written yet.
    let out: Vec<Effect> = (4..7)
        .flat_map(|n| d.stream_bytes(post, n, &delta("m-t1", "x")))
        .collect();
    assert_eq!(written(&out), Vec::<u64>::new());
    // The page is hidden (a reload): the cursor is written now.
    let out = d.feed(Input::PageHide);
    assert_eq!(written(&out), [6]);
    // Again with nothing new: nothing written.
    assert_eq!(written(&d.feed(Input::PageHide)), Vec::<u64>::new());
    // After `turn.done` the checkpoint is cleared and stays so.
    d.stream_bytes(
        post,
        7,
        r#"{"type":"turn.done","id":"e-done","turn_id":"t1","state":{"status":"done"},"thread_id":null}"#,
    );
    d.stream_bytes(post, 8, &delta("m-t1", "late"));
    assert_eq!(written(&d.feed(Input::PageHide)), Vec::<u64>::new());
}

#[test]
fn checkpoints_name_the_turn_at_once_then_only_grow() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let frames: Vec<(u64, String)> = (4..40).map(|i| (i, delta("m-t1", "x"))).collect();
    for (seq, data) in frames {
        d.now += 400;
        let bytes = format!("id: {seq}\ndata: {data}\n\n");
        d.feed(Input::Bytes {
            request: post,
            bytes: bytes.as_bytes(),
        });
    }
    let seqs: Vec<u64> = d
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Storage(StorageEffect::WriteCheckpoint(c))
                if c.turn_id.as_deref() == Some("t1") =>
            {
                Some(c.seq)
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        seqs.first(),
        Some(&0),
        "the turn id is recorded before any cursor"
    );
    assert!(seqs.len() > 3);
    assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "{seqs:?}");
    assert!(d
        .effects
        .contains(&Effect::Storage(StorageEffect::WritePointer {
            session_id: "s1".into()
        })));
}

#[test]
fn a_lost_create_response_is_recovered_by_lookup_never_by_a_second_post() {
    let mut d = Driver::new();
    let (send, out) = d.command(Command::Send {
        input: vec![user_text("hi")],
        interrupt: false,
    });
    let post = request_to(&out, Method::Post, "/turns").id;
    let out = d.feed(Input::NetworkError { request: post });
    let lookup = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let turn = turn_json("t9", None, RUNNING);
    let object = &turn[r#"{"data":"#.len()..turn.len() - 1];
    let listing = format!(r#"{{"data":[{object}],"pagination":{{}}}}"#);
    let out = d.respond(lookup, 200, &listing);
    assert_eq!(settled(&out, send), Some(&Ok(Settled::Turn("t9".into()))));
    request_to(&out, Method::Get, "/turns/t9");
    let posts = requests(&d.effects)
        .iter()
        .filter(|r| r.method == Method::Post)
        .count();
    assert_eq!(posts, 1);
}

#[test]
fn close_aborts_everything_and_refuses_later_commands() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let (load, _) = d.command(Command::Load);
    let (close, out) = d.command(Command::Close);
    assert!(out.contains(&Effect::Abort { id: post }));
    match settled(&out, load) {
        Some(Err(e)) => assert_eq!(e.code, ErrorCode::Aborted),
        other => panic!("{other:?}"),
    }
    assert_eq!(settled(&out, close), Some(&Ok(Settled::Done)));
    // The page-wide registry asks this before handing the engine to a new handle.
    assert!(d.s.is_closed());
    assert_eq!(d.s.poll_timeout(), None);
    let (send, out) = d.command(Command::Send {
        input: vec![user_text("x")],
        interrupt: true,
    });
    assert!(matches!(settled(&out, send), Some(Err(e)) if e.code == ErrorCode::Aborted));
    assert!(!out.contains(&Effect::Notify));
}

#[test]
fn disconnect_shows_idle_at_once_and_notifies() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Live {
            turn_id: Some("t1"),
            silent_ms: None,
            silent_since_ms: None,
            stalled: false,
        }
    );
    d.s.take_changes();
    let (_, out) = d.command(Command::Disconnect);
    assert!(out.contains(&Effect::Abort { id: post }));
    assert!(out.contains(&Effect::Notify), "{out:?}");
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Idle {
            turn_id: Some("t1")
        }
    );
    // The turn is followed again on request.
    let (_, out) = d.command(Command::Attach {
        turn_id: "t1".into(),
    });
    assert!(requests(&out).iter().any(|r| r.url.contains("/turns/t1")));
    assert_ne!(
        d.s.connection_state(),
        ConnectionState::Idle {
            turn_id: Some("t1")
        }
    );
}

#[test]
fn notifications_come_once_per_drain() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    d.s.take_changes();
    let mut notifies = 0;
    for i in 4..10 {
        let bytes = format!("id: {i}\ndata: {}\n\n", delta("m-t1", "y"));
        let out = d.feed(Input::Bytes {
            request: post,
            bytes: bytes.as_bytes(),
        });
        notifies += out.iter().filter(|e| **e == Effect::Notify).count();
    }
    assert_eq!(notifies, 1);
}

/// Feeds `frames` `(sequence number, data)` on the stream `post`, one read each.
fn feed_frames(d: &mut Driver, post: RequestId, frames: &[(u64, String)]) {
    for (seq, data) in frames {
        let bytes = format!("id: {seq}\ndata: {data}\n\n");
        d.feed(Input::Bytes {
            request: post,
            bytes: bytes.as_bytes(),
        });
    }
}

/// A drain in which a turn only gained text carries its cursor, not its header (input, usage,
/// every item key); a new item or the turn's end carries the whole header again, and the
/// cursor names the header version the consumer already holds.
#[test]
fn a_turn_that_only_gained_text_crosses_as_its_cursor() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let drain = |d: &mut Driver, frames: &[(u64, String)]| {
        feed_frames(d, post, frames);
        let (changes, extra) = d.s.take_changes();
        let c = d.s.changes_of(&changes, &extra);
        let headers: Vec<(String, u64)> = c
            .turns
            .iter()
            .map(|h| (h.turn_id.to_string(), h.version))
            .collect();
        let cursors: Vec<(String, u64, Option<u64>)> = c
            .cursors
            .iter()
            .map(|t| (t.turn_id.to_string(), t.version, t.last_sequence_number))
            .collect();
        (headers, cursors)
    };
    // What the turn's start changed (its header and first item) is drained first.
    let (headers, _) = drain(&mut d, &[]);
    assert_eq!(headers.len(), 1, "{headers:?}");
    let version = d.s.view().turn("t1").unwrap().version;

    let (headers, cursors) = drain(&mut d, &[(4, delta("m-t1", "a")), (5, delta("m-t1", "b"))]);
    assert!(headers.is_empty(), "{headers:?}");
    assert_eq!(cursors, vec![("t1".to_string(), version, Some(5))]);

    let (headers, cursors) = drain(&mut d, &[(6, message("m2")), (7, delta("m2", "c"))]);
    assert_eq!(
        headers.len(),
        1,
        "a new item changes the item keys: {headers:?}"
    );
    assert!(cursors.is_empty(), "{cursors:?}");

    let done = r#"{"type":"turn.done","id":"e-done","thread_id":null,"state":{"status":"done"}}"#;
    let (headers, cursors) = drain(&mut d, &[(8, delta("m2", "d")), (9, done.to_string())]);
    assert_eq!(
        headers.iter().map(|h| h.0.as_str()).collect::<Vec<_>>(),
        ["t1"]
    );
    assert!(headers[0].1 > version, "the end bumps the header version");
    assert!(cursors.is_empty(), "{cursors:?}");
    assert_eq!(
        d.s.view().turn("t1").unwrap().status,
        crate::reduce::TurnStatus::Done
    );
}

/// Drains are numbered one by one from 1, in `changes_of` and `full_changes` alike: the TS
/// store applies changes only when they follow the drain it holds (`drain === held + 1`) and
/// otherwise reads the whole view (shard 4/40 found the numbering unpinned).
#[test]
fn drains_are_numbered_one_by_one() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    assert_eq!(d.s.drains(), 0);
    for n in 1..=3u64 {
        feed_frames(&mut d, post, &[(3 + n, delta("m-t1", "x"))]);
        let (changes, extra) = d.s.take_changes();
        assert_eq!(d.s.drains(), n);
        assert_eq!(d.s.changes_of(&changes, &extra).drain, n);
        assert_eq!(d.s.full_changes(&changes, &extra).drain, n);
    }
}

/// Text a message gained since the last drain crosses as its suffix (`append`), not as the
/// whole item: a streamed answer's text crosses once, not once per drain (shard 4/40 found
/// `ItemAppend::of` → `None` unpinned; the view stayed right, only the bytes grew).
#[test]
fn text_gained_between_drains_crosses_as_its_suffix() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    d.s.take_changes();
    // The consumer shows the turn: its item changes cross (`held` module).
    d.s.turn_items("t1");
    let version = d.s.view().item("t1", "m-t1").unwrap().version;
    feed_frames(
        &mut d,
        post,
        &[(4, delta("m-t1", " and")), (5, delta("m-t1", " more"))],
    );
    let (changes, extra) = d.s.take_changes();
    let c = d.s.changes_of(&changes, &extra);
    let [update] = c.items.as_slice() else {
        panic!("one item update: {:?}", c.items.len())
    };
    assert_eq!(update.key, "m-t1");
    assert!(update.value.is_none(), "the whole item did not cross");
    let append = update.append.as_ref().expect("an append");
    assert_eq!(append.content, Some(" and more"));
    assert_eq!(append.base_version, version);
    assert_eq!(
        append.version,
        d.s.view().item("t1", "m-t1").unwrap().version
    );
}

/// `takeChanges` carries the connection badge only when it changed since the last drain; the
/// whole view (`snapshot()`) always does.
#[test]
fn the_badge_crosses_only_when_it_changed() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let badge = |d: &mut Driver, frame: Option<(u64, String)>| {
        feed_frames(d, post, frame.as_slice());
        let (changes, extra) = d.s.take_changes();
        let c = d.s.changes_of(&changes, &extra);
        c.connection
            .map(|b| serde_json::to_value(b).unwrap()["status"].clone())
    };
    assert_eq!(badge(&mut d, None), Some(serde_json::json!("live")));
    assert_eq!(badge(&mut d, Some((4, delta("m-t1", "a")))), None);
    assert_eq!(badge(&mut d, Some((5, delta("m-t1", "b")))), None);
    assert_eq!(badge(&mut d, None), None);
    let (changes, extra) = d.s.take_changes();
    assert!(d.s.full_changes(&changes, &extra).connection.is_some());
    let done = r#"{"type":"turn.done","id":"e-done","thread_id":null,"state":{"status":"done"}}"#;
    assert_eq!(
        badge(&mut d, Some((6, done.to_string()))),
        Some(serde_json::json!("done"))
    );
    assert_eq!(badge(&mut d, None), None);
}

/// Undrained changes (a hidden page drains only when it publishes) are notified again at most
/// every `RENOTIFY_MS` while frames keep coming, and at once when the badge's status changes
/// (the turn's end): the consumer needs no timer of its own to keep up.
#[test]
fn undrained_changes_are_notified_again_at_a_bounded_rate_and_at_a_status_change() {
    use super::RENOTIFY_MS;
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    d.s.take_changes();
    let mut at = Vec::new();
    // 40 frames 10 ms apart (400 ms), never drained.
    for i in 4..44u64 {
        d.now += 9;
        let bytes = format!("id: {i}\ndata: {}\n\n", delta("m-t1", "y"));
        let out = d.feed(Input::Bytes {
            request: post,
            bytes: bytes.as_bytes(),
        });
        if out.contains(&Effect::Notify) {
            at.push(d.now);
        }
    }
    assert!(at.len() >= 4 && at.len() <= 5, "{at:?}");
    assert!(at.windows(2).all(|w| w[1] - w[0] >= RENOTIFY_MS), "{at:?}");
    // Frames without a change (a comment) notify nothing, however late.
    d.now += 500;
    let out = d.feed(Input::Bytes {
        request: post,
        bytes: b": keep-alive\n\n",
    });
    assert!(!out.contains(&Effect::Notify), "{out:?}");
    // The turn ends right after a notification: told at once, not RENOTIFY_MS later.
    let bytes = format!("id: 44\ndata: {}\n\n", delta("m-t1", "z"));
    let out = d.feed(Input::Bytes {
        request: post,
        bytes: bytes.as_bytes(),
    });
    assert!(out.contains(&Effect::Notify));
    assert!(!d.s.status_notified(), "more text is not a status change");
    let done = "id: 45\ndata: {\"type\":\"turn.done\",\"id\":\"e-done\",\"thread_id\":null,\"state\":{\"status\":\"done\",\"output\":null,\"required_actions\":[]}}\n\n";
    let out = d.feed(Input::Bytes {
        request: post,
        bytes: done.as_bytes(),
    });
    assert_eq!(d.s.connection().status, Some(&ConnectionStatus::Done));
    assert!(out.contains(&Effect::Notify), "{out:?}");
    assert!(
        d.s.status_notified(),
        "the turn's end is flagged for an immediate update"
    );
    // Drained: the next change is notified once again.
    d.s.take_changes();
    assert_eq!(d.s.poll_effect(), None);
}

/// Drives a running turn to `LiveUnavailable`: its stream drops, the turn still runs, and the
/// resubscribe answers 412 (the live stream is gone: expired, or its owner crashed, §9).
fn stuck_turn(d: &mut Driver, turn: &str) {
    let (stream, _) = running_turn(d, turn, None);
    let out = d.feed(Input::End { request: stream });
    let mut pending: Vec<HttpRequest> = requests(&out).into_iter().cloned().collect();
    // Answer whatever the machine asks (after backoff timers) until it gives up on live.
    for _ in 0..20 {
        if d.s.connection().status == Some(&ConnectionStatus::LiveUnavailable) {
            return;
        }
        if pending.is_empty() {
            d.now += 60_000;
            pending = requests(&d.feed(Input::Timer))
                .into_iter()
                .cloned()
                .collect();
            continue;
        }
        let r = pending.remove(0);
        let out = if r.url.contains("/subscribe") {
            d.respond(r.id, 412, r#"{"error":{"message":"live stream gone"}}"#)
        } else if r.url.contains("/events") {
            d.respond(r.id, 200, r#"{"data":[],"pagination":{"limit":100}}"#)
        } else if r.url.contains(&format!("/turns/{turn}")) {
            d.respond(r.id, 200, &turn_json(turn, None, RUNNING))
        } else {
            panic!("unexpected request {r:#?}");
        };
        pending.extend(requests(&out).into_iter().cloned());
    }
    panic!("never liveUnavailable: {:?}", d.s.connection().status);
}

#[test]
fn a_turn_without_a_live_stream_does_not_block_the_next_send() {
    let mut d = Driver::new();
    stuck_turn(&mut d, "t1");
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Running);
    // A plain send (no interrupt) goes through: a new turn is the only way on.
    let (send, effects) = d.command(Command::Send {
        input: vec![user_text("go on")],
        interrupt: false,
    });
    assert_eq!(settled(&effects, send), None, "refused: {effects:#?}");
    let post = request_to(&effects, Method::Post, "/turns").id;
    let out = d.stream(post, &[(1, created("t2", Some("t1")))]);
    assert_eq!(settled(&out, send), Some(&Ok(Settled::Turn("t2".into()))));
    // The stuck turn is read again and shown as the server now has it.
    let check = request_to(&out, Method::Get, "/turns/t1").id;
    d.respond(check, 200, &turn_json("t1", None, CANCELLED_FOR_NEXT));
    let old = d.s.view().turn("t1").unwrap();
    assert_eq!(old.status, TurnStatus::Cancelled);
    assert_eq!(
        old.cancel_reason().map(|r| r.as_str()),
        Some("cancelled-for-next-turn")
    );
}

#[test]
fn cancelling_a_turn_without_a_live_stream_shows_it_cancelled_once_the_server_did() {
    let mut d = Driver::new();
    stuck_turn(&mut d, "t1");
    let (cancel, effects) = d.command(Command::Cancel);
    assert_eq!(settled(&effects, cancel), Some(&Ok(Settled::Done)));
    let post = request_to(&effects, Method::Post, "/cancel").id;
    let out = d.respond(post, 200, "{}");
    // No stream will bring `turn.done`: the engine reads the turn again at once.
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let cancelled = r#"{"status":"cancelled","reason":"client-cancelled","completed_at":"2026-12-01T00:00:09Z"}"#;
    let mut out = d.respond(get, 200, &turn_json("t1", None, cancelled));
    for _ in 0..5 {
        let Some(r) = requests(&out).into_iter().next().cloned() else {
            break;
        };
        let body = format!(
            r#"{{"data":[{},{{"type":"turn.done","id":"e9","thread_id":null,"state":{cancelled}}}],"pagination":{{"limit":100}}}}"#,
            created("t1", None)
        );
        out = if r.url.contains("/events") {
            d.respond(r.id, 200, &body)
        } else {
            d.respond(r.id, 200, &turn_json("t1", None, cancelled))
        };
    }
    let turn = d.s.view().turn("t1").unwrap();
    assert_eq!(turn.status, TurnStatus::Cancelled);
    assert_eq!(
        turn.cancel_reason().map(|r| r.as_str()),
        Some("client-cancelled")
    );
    assert_ne!(
        d.s.connection().status,
        Some(&ConnectionStatus::LiveUnavailable)
    );
}

#[test]
fn the_text_bounds_come_from_the_client_options() {
    // `maxMessageTextBytes: 1024` (the minimum) as an app would pass it.
    let options: crate::session::ClientOptions =
        serde_json::from_str(r#"{"maxMessageTextBytes": 1024}"#).unwrap();
    let config = options.check().unwrap().session_config(7, None);
    assert_eq!(config.reducer.max_message_text_bytes, 1024);
    let mut d = Driver::new();
    d.s = Session::new("s1", config);
    let (send, effects) = d.command(Command::Send {
        input: vec![user_text("hi")],
        interrupt: false,
    });
    let post = request_to(&effects, Method::Post, "/turns").id;
    let kept = "k".repeat(1000);
    let refused = "R".repeat(100);
    let out = d.stream(
        post,
        &[
            (1, created("t1", None)),
            (2, message("m1")),
            (3, delta("m1", &kept)),
            (4, delta("m1", &refused)),
        ],
    );
    assert_eq!(settled(&out, send), Some(&Ok(Settled::Turn("t1".into()))));
    let summary = serde_json::to_string(&d.s.view().summary()).unwrap();
    assert!(
        summary.contains(&kept),
        "what arrived within the bound is kept"
    );
    assert!(
        !summary.contains(&refused),
        "the delta past the bound is refused"
    );
    let (_, warnings) = d.s.take_changes();
    assert!(
        warnings.iter().any(|(_, m)| m.contains("1024")),
        "one warning names the bound: {warnings:?}"
    );
}

/// The session timeline's newest page (newest first) and the page before it.
const TIMELINE_NEWEST: &str = r#"{"data":[
    {"turn_id":"t2","event":{"type":"turn.done","id":"e4","thread_id":null,"state":{"status":"done","output":null,"required_actions":[]}}},
    {"turn_id":"t2","event":{"type":"turn.created","id":"e3","thread_id":null,"turn_id":"t2","previous_turn_id":"t1","state":{"status":"running"}}}
],"pagination":{"next_page_token":"p 2"}}"#;
const TIMELINE_OLDEST: &str = r#"{"data":[
    {"turn_id":"t1","event":{"type":"x.future","id":"e2","extra":1}},
    {"turn_id":"t1","event":{"type":"turn.created","id":"e1","thread_id":null,"turn_id":"t1","previous_turn_id":null,"state":{"status":"running"}}}
],"pagination":{}}"#;

fn exported(outcome: Option<&Result<Settled, SessionError>>) -> &[crate::wire::SessionEventItem] {
    match outcome {
        Some(Ok(Settled::Events(events))) => events,
        other => panic!("expected the events, got {other:?}"),
    }
}

fn export_error(outcome: Option<&Result<Settled, SessionError>>) -> &SessionError {
    match outcome {
        Some(Err(e)) => e,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Starts an export and answers its first page: the export and its second page's request.
fn export_reading_its_second_page(d: &mut Driver) -> (CommandId, RequestId) {
    let (export, out) = d.command(Command::ExportEvents);
    let first = request_to(&out, Method::Get, "/sessions/s1/events").id;
    let out = d.respond(first, 200, TIMELINE_NEWEST);
    (export, request_to(&out, Method::Get, "page_token=").id)
}

#[test]
fn an_export_pages_through_the_engine_and_settles_the_events_oldest_first() {
    let mut d = Driver::new();
    let (export, out) = d.command(Command::ExportEvents);
    let first = request_to(&out, Method::Get, "/sessions/s1/events");
    assert_eq!(first.url, "http://h/api/v1/sessions/s1/events?limit=100");
    assert_eq!(first.response, ResponseKind::Whole);
    let out = d.respond(first.id, 200, TIMELINE_NEWEST);
    assert!(settled(&out, export).is_none(), "one more page to read");
    let next = request_to(&out, Method::Get, "/sessions/s1/events");
    assert_eq!(
        next.url,
        "http://h/api/v1/sessions/s1/events?limit=100&page_token=p%202"
    );
    let out = d.respond(next.id, 200, TIMELINE_OLDEST);
    let events = exported(settled(&out, export));
    let ids: Vec<_> = events.iter().map(|e| e.event.id().unwrap()).collect();
    assert_eq!(ids, ["e1", "e2", "e3", "e4"]);
    assert_eq!(events[0].turn_id, "t1");
    // An unknown type is kept whole, as received.
    assert!(
        matches!(&events[1].event, crate::wire::Event::Unknown { event_type, raw }
            if event_type == "x.future" && raw["extra"] == 1)
    );
    assert!(requests(&out).is_empty(), "nothing after the last page");
    // The export is the app's read: it changes nothing in the view.
    assert!(d.s.view().turn("t1").is_none());
}

#[test]
fn an_export_of_a_gone_session_rejects_with_not_found() {
    let mut d = Driver::new();
    let (export, out) = d.command(Command::ExportEvents);
    let first = request_to(&out, Method::Get, "/sessions/s1/events").id;
    let out = d.respond(first, 404, r#"{"error":{"message":"no session"}}"#);
    let e = export_error(settled(&out, export));
    assert_eq!((e.code, e.status), (ErrorCode::NotFound, Some(404)));
    assert!(requests(&out).is_empty(), "no retry");
    // Unlike a restore, an export clears no records.
    assert!(!out.iter().any(|e| matches!(e, Effect::Storage(_))));
    // A body that is not a timeline page is `invalid-response`.
    let (export, out) = d.command(Command::ExportEvents);
    let first = request_to(&out, Method::Get, "/sessions/s1/events").id;
    let out = d.respond(first, 200, r#"{"data":5}"#);
    assert_eq!(
        export_error(settled(&out, export)).code,
        ErrorCode::InvalidResponse
    );
}

/// An HTTP refusal settles with the code of its status (`SessionError::http`): 403 `forbidden`,
/// 409 `conflict` (the gateway refuses listings of a running turn, PROTOCOL §4), any other
/// `http` — with the status, and retryable only for 408 / 429 / 5xx. Shard 3/40 found 409
/// unpinned (it read `http`).
#[test]
fn an_export_refused_by_the_server_rejects_with_the_code_of_its_status() {
    for (status, code) in [
        (403, ErrorCode::Forbidden),
        (409, ErrorCode::Conflict),
        (422, ErrorCode::Http),
    ] {
        let mut d = Driver::new();
        let (export, out) = d.command(Command::ExportEvents);
        let first = request_to(&out, Method::Get, "/sessions/s1/events").id;
        let out = d.respond(first, status, r#"{"error":{"message":"refused"}}"#);
        let e = export_error(settled(&out, export));
        assert_eq!((e.code, e.status, e.retryable), (code, Some(status), false));
        assert_eq!(e.message, format!("HTTP {status}: refused"));
    }
}

#[test]
fn an_export_whose_page_fails_on_the_network_rejects_with_network() {
    let mut d = Driver::new();
    let (export, next) = export_reading_its_second_page(&mut d);
    let out = d.feed(Input::NetworkError { request: next });
    let e = export_error(settled(&out, export));
    assert_eq!(e.code, ErrorCode::Network);
    assert!(e.retryable);
    // A late answer of that page settles nothing more.
    let late = d.respond(next, 200, TIMELINE_OLDEST);
    assert!(settled(&late, export).is_none());
    // A header provider that fails is the export's own `auth` error.
    let (export, out) = d.command(Command::ExportEvents);
    let first = request_to(&out, Method::Get, "/sessions/s1/events").id;
    let out = d.feed(Input::HeadersUnavailable { request: first });
    let e = export_error(settled(&out, export));
    assert_eq!((e.code, e.status), (ErrorCode::Auth, None));
}

#[test]
fn close_during_an_export_aborts_its_request_and_rejects_it() {
    let mut d = Driver::new();
    let (export, next) = export_reading_its_second_page(&mut d);
    let (close, out) = d.command(Command::Close);
    assert!(out.contains(&Effect::Abort { id: next }), "{out:#?}");
    let e = export_error(settled(&out, export));
    assert_eq!(e.code, ErrorCode::Aborted);
    assert_eq!(settled(&out, close), Some(&Ok(Settled::Done)));
    // The aborted page's answer, had it raced the abort, is ignored.
    let late = d.respond(next, 200, TIMELINE_OLDEST);
    assert!(settled(&late, export).is_none());
    assert!(requests(&late).is_empty());
    // And a new export is refused.
    let (again, out) = d.command(Command::ExportEvents);
    assert_eq!(export_error(settled(&out, again)).code, ErrorCode::Aborted);
    assert!(requests(&out).is_empty());
}

#[test]
fn exports_run_beside_a_live_stream_and_beside_each_other() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let (a, out_a) = d.command(Command::ExportEvents);
    let (b, out_b) = d.command(Command::ExportEvents);
    assert!(!out_a
        .iter()
        .chain(&out_b)
        .any(|e| matches!(e, Effect::Abort { .. })));
    let page_a = request_to(&out_a, Method::Get, "/sessions/s1/events").id;
    let page_b = request_to(&out_b, Method::Get, "/sessions/s1/events").id;
    assert_ne!(page_a, page_b);
    // The second export settles first, with its own answer; the first is still reading.
    let out = d.respond(page_b, 200, TIMELINE_OLDEST);
    assert_eq!(exported(settled(&out, b)).len(), 2);
    assert!(settled(&out, a).is_none());
    // The stream goes on meanwhile.
    let bytes = format!("id: 4\ndata: {}\n\n", delta("m-t1", " more"));
    let out = d.feed(Input::Bytes {
        request: post,
        bytes: bytes.as_bytes(),
    });
    assert!(requests(&out).is_empty(), "{out:#?}");
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Live {
            turn_id: Some("t1"),
            silent_ms: None,
            silent_since_ms: None,
            stalled: false,
        }
    );
    let out = d.respond(page_a, 200, TIMELINE_NEWEST);
    let next = request_to(&out, Method::Get, "page_token=").id;
    let out = d.respond(next, 200, TIMELINE_OLDEST);
    assert_eq!(exported(settled(&out, a)).len(), 4);
    let summary = serde_json::to_string(&d.s.view().summary()).unwrap();
    assert!(summary.contains("partial more"), "{summary}");
}

#[test]
fn an_export_whose_listing_repeats_a_token_ends_with_a_warning() {
    let mut d = Driver::new();
    let (export, out) = d.command(Command::ExportEvents);
    let mut page = request_to(&out, Method::Get, "/sessions/s1/events").id;
    let mut outcome = None;
    for _ in 0..3 {
        let out = d.respond(page, 200, TIMELINE_NEWEST);
        if let Some(o) = settled(&out, export) {
            outcome = Some(o.clone());
            break;
        }
        page = request_to(&out, Method::Get, "page_token=").id;
    }
    assert_eq!(exported(outcome.as_ref()).len(), 4, "two pages read");
    let (_, warnings) = d.s.take_changes();
    assert!(
        warnings
            .iter()
            .any(|(code, m)| code == "protocol" && m.contains("already sent")),
        "{warnings:?}"
    );
}

/// A request to another origin than the page's that fails with no response names the
/// possible CORS refusal (the browser reports one as a bare network error); a same-origin or
/// relative base does not.
#[test]
fn a_cross_origin_network_failure_hints_at_cors() {
    let failure = |base: &str, page: Option<&str>| {
        let mut d = Driver::new();
        d.s = Session::new(
            "s1",
            Config {
                page_origin: page.map(String::from),
                ..Config::new(Api::new(base, Flavor::TrueForge))
            },
        );
        let (load, out) = d.command(Command::Load);
        let mut page = request_to(&out, Method::Get, "/events").id;
        // A network failure is asked for again (HISTORY_RETRY_MS) before the load fails.
        let mut out = d.feed(Input::NetworkError { request: page });
        for wait in HISTORY_RETRY_MS {
            assert!(settled(&out, load).is_none(), "{out:?}");
            d.now += wait;
            page = request_to(&d.feed(Input::Timer), Method::Get, "/events").id;
            out = d.feed(Input::NetworkError { request: page });
        }
        match settled(&out, load) {
            Some(Err(e)) => (e.code, e.message.clone()),
            other => panic!("expected the load to fail, got {other:?}"),
        }
    };
    let (code, message) = failure("https://api.example/tenant", Some("https://app.example"));
    assert_eq!(code, ErrorCode::Network);
    assert!(message.contains("CORS"), "{message}");
    assert!(message.contains("https://api.example"), "{message}");
    for (base, page) in [
        ("https://api.example", Some("https://api.example")),
        ("https://API.example", Some("https://api.example")),
        ("", Some("https://app.example")),
        ("https://api.example", None),
    ] {
        let (code, message) = failure(base, page);
        assert_eq!(code, ErrorCode::Network);
        assert!(!message.contains("CORS"), "{base} from {page:?}: {message}");
    }
}

// ---- Issue 14: which turn a restore follows, the creating marker, resume fallbacks, loading.

/// A listing page `{data: [turns…]}` of `(id, previous, state)`.
fn turn_listing(turns: &[(&str, Option<&str>, &str)]) -> String {
    let objects: Vec<String> = turns
        .iter()
        .map(|(id, previous, state)| {
            let single = turn_json(id, *previous, state);
            String::from(&single[r#"{"data":"#.len()..single.len() - 1])
        })
        .collect();
    format!(r#"{{"data":[{}],"pagination":{{}}}}"#, objects.join(","))
}

/// Restores with `checkpoint` over a history of `turns`; returns the effects after the load.
fn restore_over(
    d: &mut Driver,
    checkpoint: Option<Checkpoint>,
    turns: &[(&str, Option<&str>, &str)],
) -> (CommandId, Vec<Effect>) {
    let (restore, out) = d.command(Command::Restore { checkpoint });
    let events = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(events, 200, EMPTY_EVENTS);
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    (restore, d.respond(list, 200, &turn_listing(turns)))
}

fn creating_marker(after: Option<&str>) -> Checkpoint {
    Checkpoint {
        turn_id: None,
        seq: 0,
        creating: Some(checkpoint::CreatingTurn {
            after: after.map(String::from),
        }),
        ..checkpoint("x")
    }
}

/// No turn was ever POSTed by this driver's engine (a reload or a lookup must never send twice).
fn assert_never_posted(d: &Driver) {
    assert!(!requests(&d.effects)
        .iter()
        .any(|r| r.method == Method::Post));
}

/// The `recovery` warnings drained now (their messages).
fn recovery_warnings(d: &mut Driver) -> Vec<String> {
    let (_, warnings) = d.s.take_changes();
    warnings
        .into_iter()
        .filter(|(code, _)| code == "recovery")
        .map(|(_, m)| m)
        .collect()
}

fn stored_records(effects: &[Effect]) -> Vec<&Checkpoint> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Storage(StorageEffect::WriteCheckpoint(c)) => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn restore_follows_the_newest_running_turn_whatever_the_checkpoint_names() {
    let mut d = Driver::new();
    // The checkpoint names t1 (paused on an approval); another tab answered it: t2 continues
    // t1 and runs.
    let (restore, out) = restore_over(
        &mut d,
        Some(checkpoint("t1")),
        &[("t1", None, PAUSED), ("t2", Some("t1"), RUNNING)],
    );
    let get = request_to(&out, Method::Get, "/turns/t2").id;
    assert!(
        !requests(&out).iter().any(|r| r.url.ends_with("/turns/t1")),
        "the stored turn is not the one followed: {out:?}"
    );
    let out = d.respond(get, 200, &turn_json("t2", Some("t1"), RUNNING));
    // A turn of its own: replayed from its first event, not from t1's cursor 7.
    let subscribe = request_to(
        &out,
        Method::Get,
        "/turns/t2/subscribe?after_sequence_number=0",
    );
    let out = d.stream(subscribe.id, &[(1, created("t2", Some("t1")))]);
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Live {
            turn_id: Some("t2"),
            silent_ms: None,
            silent_since_ms: None,
            stalled: false,
        }
    );
}

#[test]
fn a_send_stores_that_a_turn_is_being_created_before_its_post() {
    let mut d = Driver::new();
    let (_, out) = d.command(Command::Send {
        input: vec![user_text("a secret message")],
        interrupt: false,
    });
    let marker = out
        .iter()
        .position(|e| matches!(e, Effect::Storage(StorageEffect::WriteCheckpoint(c)) if c.creating.is_some()))
        .expect("a creating marker");
    let post = out
        .iter()
        .position(|e| matches!(e, Effect::Request(r) if r.method == Method::Post))
        .expect("the POST");
    assert!(marker < post, "the marker is stored before the POST");
    let record = stored_records(&out)[0];
    assert_eq!(
        (record.turn_id.as_deref(), &record.creating),
        (None, &Some(checkpoint::CreatingTurn { after: None }))
    );
    let json = serde_json::to_string(record).unwrap();
    assert!(
        !json.contains("secret"),
        "no message body in storage: {json}"
    );
    // `turn.created`: the record names the turn, the marker is gone.
    let post = request_to(&out, Method::Post, "/turns").id;
    let out = d.stream(post, &[(1, created("t1", None))]);
    let record = stored_records(&out)[0];
    assert_eq!(
        (record.turn_id.as_deref(), record.seq, &record.creating),
        (Some("t1"), 0, &None)
    );
}

#[test]
fn a_refused_post_clears_the_creating_marker() {
    let mut d = Driver::new();
    let (_, out) = d.command(Command::Send {
        input: vec![user_text("hi")],
        interrupt: false,
    });
    let post = request_to(&out, Method::Post, "/turns").id;
    let out = d.respond(post, 422, r#"{"error":{"message":"bad input"}}"#);
    let records = stored_records(&out);
    assert!(
        records
            .iter()
            .any(|c| c.turn_id.is_none() && c.creating.is_none()),
        "{out:?}"
    );
}

#[test]
fn a_reload_before_turn_created_follows_the_new_turn_found_by_listing_never_a_second_post() {
    let mut d = Driver::new();
    // The page stored the marker (newest turn before the POST: t1), posted, and reloaded before
    // `turn.created` arrived; the server had created t2.
    let (restore, out) = restore_over(
        &mut d,
        Some(creating_marker(Some("t1"))),
        &[
            ("t1", None, r#"{"status":"done","output":null}"#),
            ("t2", Some("t1"), RUNNING),
        ],
    );
    let get = request_to(&out, Method::Get, "/turns/t2").id;
    let out = d.respond(get, 200, &turn_json("t2", Some("t1"), RUNNING));
    let subscribe = request_to(
        &out,
        Method::Get,
        "/turns/t2/subscribe?after_sequence_number=0",
    );
    let out = d.stream(subscribe.id, &[(1, created("t2", Some("t1")))]);
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
    assert_never_posted(&d);
}

#[test]
fn a_creating_marker_whose_turn_is_not_listed_is_reported_and_cleared() {
    let mut d = Driver::new();
    let (restore, out) = restore_over(
        &mut d,
        Some(creating_marker(Some("t1"))),
        &[("t1", None, r#"{"status":"done","output":null}"#)],
    );
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
    assert!(stored_records(&out)
        .iter()
        .any(|c| c.turn_id.is_none() && c.creating.is_none()));
    let warnings = recovery_warnings(&mut d);
    assert!(
        warnings.iter().any(|m| m.contains("not created")),
        "{warnings:?}"
    );
    assert_never_posted(&d);
}

#[test]
fn a_creating_marker_whose_turn_is_listed_and_already_ended_is_not_reported_lost() {
    // The server created t2 after t1 and t2 finished before the reload: the message was sent;
    // "send the message again" would make the user send it twice.
    let mut d = Driver::new();
    let done = r#"{"status":"done","output":null}"#;
    let (restore, out) = restore_over(
        &mut d,
        Some(creating_marker(Some("t1"))),
        &[("t1", None, done), ("t2", Some("t1"), done)],
    );
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
    assert!(stored_records(&out)
        .iter()
        .any(|c| c.turn_id.is_none() && c.creating.is_none()));
    let warnings = recovery_warnings(&mut d);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_never_posted(&d);
}

#[test]
fn a_creating_marker_is_reported_when_only_older_turns_are_listed() {
    // t0 → t1 listed, the marker says a turn was being created after t1: none continues t1, so
    // the send was lost — whatever turns came before t1.
    let mut d = Driver::new();
    let done = r#"{"status":"done","output":null}"#;
    let (restore, out) = restore_over(
        &mut d,
        Some(creating_marker(Some("t1"))),
        &[("t0", None, done), ("t1", Some("t0"), done)],
    );
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
    let warnings = recovery_warnings(&mut d);
    assert!(
        warnings.iter().any(|m| m.contains("not created")),
        "{warnings:?}"
    );
}

/// Follows `t1` through frames 1..=7, then the stream ends without `turn.done` (a server
/// timeout): the turn is read again and resubscribed after 7. Returns that resume.
fn resumed_subscribe(d: &mut Driver) -> HttpRequest {
    let (_, out) = d.command(Command::Resume {
        checkpoint: Some(checkpoint("t1")),
    });
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
    let first = request_to(&out, Method::Get, "/subscribe?after_sequence_number=0").id;
    let mut frames = vec![(1, created("t1", None)), (2, message("m-t1"))];
    frames.extend((3..=7).map(|i| (i, delta("m-t1", "x"))));
    d.stream(first, &frames);
    let out = d.feed(Input::End { request: first });
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
    request_to(&out, Method::Get, "/subscribe?after_sequence_number=7").clone()
}

#[test]
fn a_400_on_resume_retries_with_the_cursor_in_the_query_only_then_rebuilds() {
    let mut d = Driver::new();
    let first = resumed_subscribe(&mut d);
    assert_eq!(first.last_event_id, Some(7));
    let out = d.respond(
        first.id,
        400,
        r#"{"error":{"message":"bad Last-Event-ID"}}"#,
    );
    let second = request_to(&out, Method::Get, "/subscribe?after_sequence_number=7");
    assert_eq!(second.last_event_id, None, "the cursor in the query only");
    let (_, warnings) = d.s.take_changes();
    assert!(
        warnings
            .iter()
            .any(|(code, m)| code == "recovery" && m.contains("query only")),
        "{warnings:?}"
    );
    // Refused again: the turn is rebuilt from the listings (state first, then its events).
    let out = d.respond(second.id, 400, r#"{"error":{"message":"no"}}"#);
    let state = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(
        state,
        200,
        &turn_json("t1", None, r#"{"status":"done","output":null}"#),
    );
    let events = request_to(&out, Method::Get, "/turns/t1/events").id;
    d.respond(events, 200, EMPTY_EVENTS);
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Done {
            turn_id: Some("t1")
        }
    );
    let (_, warnings) = d.s.take_changes();
    assert!(
        warnings
            .iter()
            .any(|(code, m)| code == "recovery" && m.contains("rebuilding")),
        "{warnings:?}"
    );
}

#[test]
fn a_cross_origin_resume_failing_without_a_response_is_sent_again_without_last_event_id() {
    let mut d = Driver::new();
    d.s = Session::new(
        "s1",
        Config {
            page_origin: Some("http://app.example".into()),
            ..Config::new(Api::new("http://h", Flavor::TrueForge))
        },
    );
    let first = resumed_subscribe(&mut d);
    assert_eq!(first.last_event_id, Some(7));
    // A preflight refusing `Last-Event-ID` reaches the page as a bare network error.
    let out = d.feed(Input::NetworkError { request: first.id });
    let again = request_to(&out, Method::Get, "/subscribe?after_sequence_number=7");
    assert_eq!(again.last_event_id, None);
    // The header stays off for this turn: a later resume after a cut carries none either.
    let again = again.id;
    d.stream(again, &[(8, delta("m-t1", "x"))]);
    let out = d.feed(Input::End { request: again });
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
    let later = request_to(&out, Method::Get, "/subscribe?after_sequence_number=8");
    assert_eq!(later.last_event_id, None);
}

#[test]
fn a_same_origin_resume_network_error_keeps_the_header_and_backs_off() {
    let mut d = Driver::new();
    let first = resumed_subscribe(&mut d);
    let out = d.feed(Input::NetworkError { request: first.id });
    assert!(
        !requests(&out).iter().any(|r| r.url.contains("/subscribe")),
        "a backoff wait, not an immediate resend: {out:?}"
    );
    assert!(d.s.take_changes().1.is_empty());
}

#[test]
fn the_badge_reads_loading_while_the_history_is_read() {
    let mut d = Driver::new();
    let (_, out) = d.command(Command::Load);
    assert!(out.contains(&Effect::Notify), "{out:?}");
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Loading { turn_id: None }
    );
    let events = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(events, 200, EMPTY_EVENTS);
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Loading { turn_id: None }
    );
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    d.respond(list, 200, EMPTY_TURNS);
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Idle { turn_id: None }
    );
}

/// A timeline page of `(turn, event)` items, with `next` as its next page token.
fn timeline_page(items: &[(&str, String)], next: Option<&str>) -> String {
    let items: Vec<String> = items
        .iter()
        .map(|(turn, event)| format!(r#"{{"turn_id":"{turn}","event":{event}}}"#))
        .collect();
    let next = next.map_or("null".to_string(), |t| format!("\"{t}\""));
    format!(
        r#"{{"data":[{}],"pagination":{{"next_page_token":{next}}}}}"#,
        items.join(",")
    )
}

fn done_event(turn: &str) -> String {
    format!(
        r#"{{"type":"turn.done","id":"d-{turn}","turn_id":"{turn}","thread_id":null,"created_at":"2026-12-01T00:00:09Z","state":{{"status":"done","completed_at":"2026-12-01T00:00:09Z"}}}}"#
    )
}

fn complete_message(id: &str, text: &str) -> String {
    format!(
        r#"{{"type":"model.message","id":"{id}","thread_id":"main","created_at":"2026-12-01T00:00:01Z","content":"{text}"}}"#
    )
}

/// TrueForge: the newest timeline page shows the newest turn whole before the turns listing is
/// read at all (a long session's listing, oldest first 25 a page, took hundreds of requests
/// first); the listing comes last and still adds what only it has (a turn off the branch).
#[test]
fn a_load_shows_the_newest_turns_from_the_timeline_before_the_turns_listing() {
    let mut d = Driver::new();
    let (load, out) = d.command(Command::Load);
    assert!(!requests(&out).iter().any(|r| r.url.contains("/turns?")));
    let first = request_to(&out, Method::Get, "/events").id;
    // The app rendered the `loading` badge (drained).
    let _ = d.s.take_changes();
    // Newest first: t2 whole, then t1's newest events (held back: the next page continues it).
    let page = timeline_page(
        &[
            ("t2", done_event("t2")),
            ("t2", complete_message("m2", "newest reply")),
            ("t2", created("t2", Some("t1"))),
            ("t1", done_event("t1")),
            ("t1", complete_message("m1", "older reply")),
        ],
        Some("p1"),
    );
    let out = d.respond(first, 200, &page);
    assert!(out.contains(&Effect::Notify), "{out:?}");
    let t2 = d.s.view().turn("t2").expect("the newest turn is shown");
    assert_eq!(t2.status, TurnStatus::Done);
    assert!(
        d.s.view().turn("t1").is_none(),
        "t1 waits for the rest of it"
    );
    assert_eq!(message_texts(&d.s, "t2"), ["newest reply"]);
    assert!(
        !requests(&d.effects)
            .iter()
            .any(|r| r.url.contains("/turns?")),
        "no turns listing yet"
    );
    let second = request_to(&out, Method::Get, "page_token=p1").id;
    let page = timeline_page(&[("t1", created("t1", None))], None);
    let out = d.respond(second, 200, &page);
    assert_eq!(settled(&out, load), None, "the listing is still to read");
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    let out = d.respond(
        list,
        200,
        &turn_listing(&[
            ("t0", None, RUNNING),
            ("t1", None, DONE_STATE),
            ("t2", Some("t1"), DONE_STATE),
        ]),
    );
    assert_eq!(settled(&out, load), Some(&Ok(Settled::Done)));
    assert!(
        d.s.view().turn("t0").is_some(),
        "a turn only the listing has"
    );
    assert_eq!(message_texts(&d.s, "t1"), ["older reply"]);
    assert_eq!(message_texts(&d.s, "t2"), ["newest reply"]);
}

/// A restore over a long history follows its running turn as soon as the newest timeline page
/// shows it, while the older pages and the turns listing still load (W2 on a real server:
/// 1,617 sequential requests before the reply went on after a reload).
fn restore_while_loading(d: &mut Driver) -> (CommandId, RequestId, RequestId) {
    let (restore, out) = d.command(Command::Restore {
        checkpoint: Some(Checkpoint {
            seq: 3,
            ..checkpoint("t2")
        }),
    });
    let first = request_to(&out, Method::Get, "/events").id;
    // Newest first: running t2 (persisted so far: its creation and a message), then t1's newest
    // events (held: the next page continues t1).
    let page = timeline_page(
        &[
            ("t2", message("m2")),
            ("t2", created("t2", Some("t1"))),
            ("t1", done_event("t1")),
            ("t1", complete_message("m1", "older reply")),
        ],
        Some("p1"),
    );
    let out = d.respond(first, 200, &page);
    let older = request_to(&out, Method::Get, "page_token=p1").id;
    let check = request_to(&out, Method::Get, "/turns/t2").id;
    assert!(d.s.is_loading());
    let out = d.respond(check, 200, &turn_json("t2", Some("t1"), RUNNING));
    let subscribe = request_to(
        &out,
        Method::Get,
        "/turns/t2/subscribe?after_sequence_number=0",
    )
    .id;
    // The replay up to the checkpoint: the restore settles once the view shows it.
    let out = d.stream(
        subscribe,
        &[(1, created("t2", Some("t1"))), (2, message("m2"))],
    );
    assert_eq!(settled(&out, restore), None, "still catching up: {out:?}");
    let out = d.stream_bytes(subscribe, 3, &delta("m2", "live "));
    assert_eq!(settled(&out, restore), Some(&Ok(Settled::Restored(true))));
    assert!(notified(&out), "shown past the checkpoint: {out:?}");
    assert!(d.s.is_loading(), "the older history is still read");
    assert!(
        !matches!(d.s.connection_state(), ConnectionState::Loading { .. }),
        "the badge follows the stream: {:?}",
        d.s.connection_state()
    );
    (restore, subscribe, older)
}

/// Answers `restore_while_loading`'s older timeline page (`older`: t1's creation), then the
/// turns listing it asks for next; returns the effects of the last answer.
fn answer_older_history(d: &mut Driver, older: RequestId) -> Vec<Effect> {
    let out = d.respond(
        older,
        200,
        &timeline_page(&[("t1", created("t1", None))], None),
    );
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    d.respond(
        list,
        200,
        &turn_listing(&[("t1", None, DONE_STATE), ("t2", Some("t1"), RUNNING)]),
    )
}

#[test]
fn a_restore_follows_its_turn_before_the_older_history_is_in() {
    let mut d = Driver::new();
    let (_, subscribe, older) = restore_while_loading(&mut d);
    let _ = d.s.take_changes();
    let out = d.stream_bytes(subscribe, 4, &delta("m2", "reply"));
    assert!(notified(&out), "{out:?}");
    assert_eq!(message_texts(&d.s, "t2"), ["live reply"]);
    // The turn ends before the older history is in: the badge reads `loading` again (`done`
    // and `idle` mean the whole history is shown).
    let _ = d.stream_bytes(subscribe, 5, &done_event("t2"));
    assert_eq!(
        d.s.view().turn("t2").map(|t| t.status),
        Some(TurnStatus::Done)
    );
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Loading {
            turn_id: Some("t2")
        }
    );
    // The rest of the history: t1's older events, then the turns listing.
    let out = answer_older_history(&mut d, older);
    assert!(!d.s.is_loading());
    assert!(
        !requests(&out).iter().any(|r| r.url.contains("/subscribe")),
        "one subscribe: {out:?}"
    );
    assert_eq!(message_texts(&d.s, "t1"), ["older reply"]);
    assert_eq!(message_texts(&d.s, "t2"), ["live reply"]);
    assert_eq!(d.s.view().turn_ids(), ["t1", "t2"]);
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Done {
            turn_id: Some("t2")
        }
    );
    let subscribes = requests(&d.effects)
        .iter()
        .filter(|r| r.url.contains("/subscribe"))
        .count();
    assert_eq!(subscribes, 1);
}

/// An older page that fails after the restore followed its turn (a network error, a 5xx) is
/// asked for again after [`HISTORY_RETRY_MS`]: the history is not left cut short behind an
/// `idle` badge (a re-check helper: 67 of 401 turns shown, nothing retried).
#[test]
fn an_older_page_that_fails_is_asked_for_again() {
    let mut d = Driver::new();
    let (_, _, older) = restore_while_loading(&mut d);
    let out = d.respond(older, 503, r#"{"error":{"message":"busy"}}"#);
    assert!(requests(&out).is_empty(), "not at once: {out:?}");
    assert!(d.s.is_loading());
    d.now += HISTORY_RETRY_MS[0] - 2;
    let out = d.feed(Input::Timer);
    assert!(
        !requests(&out).iter().any(|r| r.url.contains("page_token")),
        "not before the wait: {out:?}"
    );
    let out = d.feed(Input::Timer);
    let again = request_to(&out, Method::Get, "page_token=p1").id;
    // Then a network error: asked for again, after a longer wait.
    let out = d.feed(Input::NetworkError { request: again });
    assert!(requests(&out).is_empty());
    d.now += HISTORY_RETRY_MS[1] - 1;
    let out = d.feed(Input::Timer);
    let again = request_to(&out, Method::Get, "page_token=p1").id;
    answer_older_history(&mut d, again);
    assert!(!d.s.is_loading());
    assert_eq!(message_texts(&d.s, "t1"), ["older reply"]);
    let (_, warnings) = d.s.take_changes();
    assert!(
        warnings.iter().all(|(code, _)| code != "history"),
        "{warnings:?}"
    );
}

/// The load's first page failing transiently (a 500 blip, the server restarting: no response)
/// is asked for again too: the open succeeds once the server answers, where it had failed at
/// once and left "could not open the session" until a reload (a re-check helper, session 24).
/// A status that is not transient (404) still fails the load at once.
#[test]
fn the_first_history_page_that_fails_transiently_is_asked_for_again() {
    let mut d = Driver::new();
    let (load, out) = d.command(Command::Load);
    let first = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(first, 500, r#"{"error":{"message":"boom"}}"#);
    assert_eq!(settled(&out, load), None, "not failed: {out:?}");
    assert!(requests(&out).is_empty(), "not at once: {out:?}");
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Loading { turn_id: None }
    );
    d.now += HISTORY_RETRY_MS[0];
    let again = request_to(&d.feed(Input::Timer), Method::Get, "/events").id;
    let out = d.feed(Input::NetworkError { request: again });
    assert_eq!(settled(&out, load), None);
    d.now += HISTORY_RETRY_MS[1];
    let again = request_to(&d.feed(Input::Timer), Method::Get, "/events").id;
    let out = d.respond(again, 200, EMPTY_EVENTS);
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    let out = d.respond(list, 200, EMPTY_TURNS);
    assert!(matches!(settled(&out, load), Some(Ok(_))), "{out:?}");

    let mut d = Driver::new();
    let (load, out) = d.command(Command::Load);
    let first = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(first, 404, r#"{"error":{"message":"no such session"}}"#);
    assert!(matches!(settled(&out, load), Some(Err(_))), "{out:?}");
}

#[test]
fn an_older_page_failing_for_good_after_the_restore_followed_its_turn_is_a_warning() {
    let mut d = Driver::new();
    let (_, subscribe, older) = restore_while_loading(&mut d);
    let _ = d.s.take_changes();
    let mut page = older;
    let mut out = d.respond(page, 500, r#"{"error":{"message":"boom"}}"#);
    for wait in HISTORY_RETRY_MS {
        assert!(d.s.is_loading());
        d.now += wait - 1;
        page = request_to(&d.feed(Input::Timer), Method::Get, "page_token=p1").id;
        out = d.respond(page, 500, r#"{"error":{"message":"boom"}}"#);
    }
    assert!(!d.s.is_loading());
    assert!(
        !out.iter()
            .any(|e| matches!(e, Effect::Storage(StorageEffect::ClearPointer { .. }))),
        "the session stays remembered: {out:?}"
    );
    let (_, warnings) = d.s.take_changes();
    assert!(
        warnings
            .iter()
            .any(|(code, m)| code == "history" && m.contains("older history")),
        "{warnings:?}"
    );
    let asked = requests(&d.effects)
        .iter()
        .filter(|r| r.url.contains("page_token=p1"))
        .count();
    assert_eq!(asked, 1 + HISTORY_RETRY_MS.len());
    // The stream goes on.
    let out = d.stream_bytes(subscribe, 4, &delta("m2", "reply"));
    assert!(
        !out.iter().any(|e| matches!(e, Effect::Abort { .. })),
        "{out:?}"
    );
}

#[test]
fn a_restore_with_a_creating_marker_reads_the_whole_history_first() {
    let mut d = Driver::new();
    let (restore, out) = d.command(Command::Restore {
        checkpoint: Some(creating_marker(Some("t1"))),
    });
    let first = request_to(&out, Method::Get, "/events").id;
    let page = timeline_page(
        &[("t2", created("t2", Some("t1"))), ("t1", done_event("t1"))],
        Some("p1"),
    );
    let out = d.respond(first, 200, &page);
    assert!(
        !requests(&out).iter().any(|r| r.url.contains("/turns/t2")),
        "whether the new turn exists is read from the whole history: {out:?}"
    );
    let older = request_to(&out, Method::Get, "page_token=p1").id;
    let out = answer_older_history(&mut d, older);
    request_to(&out, Method::Get, "/turns/t2");
    assert_eq!(settled(&out, restore), None);
}

/// Issue 14: after `cancel()`, the turn is read as soon as the cancel request returns — not
/// when (or if) the stream brings `turn.done` — and the view ends it `cancelled` with the text
/// already shown, once; late frames of the closed stream change nothing.
/// A cancel the server took while the stream brings frames: the frames it sent before the
/// cancel are shown, then its `turn.done` ends the turn — no read of the turn, so every tab
/// (the one that pressed Cancel reads on like the others) keeps the same stopped text.
#[test]
fn a_cancel_ends_with_the_streams_turn_done_and_keeps_the_frames_before_it() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let (_, effects) = d.command(Command::Cancel);
    let request = request_to(&effects, Method::Post, "/cancel").id;
    assert!(requests(&d.respond(request, 200, "{}")).is_empty());
    d.stream_bytes(post, 4, &delta("m-t1", " more"));
    let done = r#"{"type":"turn.done","id":"e-done","thread_id":null,"state":{"status":"cancelled","reason":"client-cancelled","completed_at":"2026-12-01T00:00:09Z"}}"#;
    let out = d.stream_bytes(post, 5, done);
    assert!(requests(&out).is_empty(), "{out:#?}");
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Cancelled);
    assert_eq!(d.s.connection().status, Some(&ConnectionStatus::Done));
    assert_eq!(
        message_texts(&d.s, "t1"),
        vec![String::from("partial more")]
    );
    // The wait is over with the turn: its timer reads nothing.
    d.now += CANCEL_CHECK_WAIT_MS;
    assert!(requests(&d.feed(Input::Timer)).is_empty());
}

/// A tab still catching up on a long reply when its cancel is taken (its stream replays seconds
/// of frames on a slow link): the wait starts again with each frame, so the turn is read only
/// once they stop — a fixed second cut such a tab's text to a fifth of the other tab's.
#[test]
fn a_cancel_waits_for_as_long_as_frames_keep_coming() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let (_, effects) = d.command(Command::Cancel);
    let request = request_to(&effects, Method::Post, "/cancel").id;
    d.respond(request, 200, "{}");
    for seq in 4..10 {
        d.now += CANCEL_CHECK_WAIT_MS / 2;
        let mut out = d.feed(Input::Timer);
        out.extend(d.stream_bytes(post, seq, &delta("m-t1", " more")));
        assert!(requests(&out).is_empty(), "frame {seq}: {out:#?}");
    }
    assert!(message_texts(&d.s, "t1")[0].ends_with(" more more more more more more"));
    // The frames stop and no `turn.done` came: the turn is read.
    d.now += CANCEL_CHECK_WAIT_MS;
    let out = d.feed(Input::Timer);
    request_to(&out, Method::Get, "/turns/t1");
}

#[test]
fn cancel_reads_the_turn_when_no_turn_done_came_within_the_wait() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let (cancel, effects) = d.command(Command::Cancel);
    assert_eq!(settled(&effects, cancel), Some(&Ok(Settled::Done)));
    let request = request_to(&effects, Method::Post, "/cancel").id;
    let out = d.respond(request, 200, "{}");
    // The stream brings frames: what the server sent before it took the cancel is still shown,
    // and the turn is read only if no `turn.done` comes within CANCEL_CHECK_WAIT_MS (a cancel
    // of a crashed owner's turn writes none).
    assert!(requests(&out).is_empty(), "{out:#?}");
    let took = d.now;
    assert!(d
        .s
        .poll_timeout()
        .is_some_and(|at| at <= took + CANCEL_CHECK_WAIT_MS));
    d.now = took + CANCEL_CHECK_WAIT_MS - 2;
    assert!(requests(&d.feed(Input::Timer)).is_empty());
    d.now = took + CANCEL_CHECK_WAIT_MS - 1;
    let out = d.feed(Input::Timer);
    assert!(out.contains(&Effect::Abort { id: post }), "{out:#?}");
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let cancelled = r#"{"status":"cancelled","reason":"client-cancelled","completed_at":"2026-12-01T00:00:09Z"}"#;
    let mut out = d.respond(get, 200, &turn_json("t1", None, cancelled));
    for _ in 0..5 {
        let Some(r) = requests(&out).into_iter().next().cloned() else {
            break;
        };
        // The listing of a cancelled turn keeps its lifecycle (the partial message is live-only).
        let body = format!(
            r#"{{"data":[{},{{"type":"turn.done","id":"e9","thread_id":null,"state":{cancelled}}}],"pagination":{{"limit":100}}}}"#,
            created("t1", None)
        );
        out = if r.url.contains("/events") {
            d.respond(r.id, 200, &body)
        } else {
            d.respond(r.id, 200, &turn_json("t1", None, cancelled))
        };
    }
    let turn = d.s.view().turn("t1").unwrap();
    assert_eq!(turn.status, TurnStatus::Cancelled);
    assert_eq!(
        turn.cancel_reason().map(|r| r.as_str()),
        Some("client-cancelled")
    );
    assert_eq!(d.s.connection().status, Some(&ConnectionStatus::Done));
    // The text shown so far stays, once (marked interrupted: the listing never had it).
    let texts = message_texts(&d.s, "t1");
    assert_eq!(texts, vec![String::from("partial")]);
    let summary = serde_json::to_string(&d.s.view().summary()).unwrap();
    // The old stream's late frames (already in the pipe) reach nothing.
    let late = format!("id: 4\ndata: {}\n\n", delta("m-t1", " late"));
    let out = d.feed(Input::Bytes {
        request: post,
        bytes: late.as_bytes(),
    });
    assert!(requests(&out).is_empty());
    assert_eq!(
        serde_json::to_string(&d.s.view().summary()).unwrap(),
        summary
    );
    assert_eq!(message_texts(&d.s, "t1"), texts);
}

/// The text of each message of `turn`, in order.
fn message_texts(s: &Session, turn: &str) -> Vec<String> {
    s.view()
        .turn(turn)
        .unwrap()
        .items
        .values()
        .filter_map(|item| match &item.body {
            crate::reduce::ItemBody::Message(m) => match &m.content {
                Some(crate::reduce::ContentView::Text(t)) => Some(t.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Issue 14: a turn that reads `running` but sends nothing (a crashed owner's silent 200, a
/// long silent tool call) is probed at each watchdog cycle and never failed; the snapshot says
/// how long it has been silent, `stalled` after two cycles, and the next frame clears both.
#[test]
fn a_silent_turn_shows_its_silence_then_stalled_and_the_next_frame_clears_it() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let last_frame = d.now;
    let mut stream = post;
    let mut wait = 45_000;
    for cycle in 1..=25u32 {
        d.s.take_changes();
        d.now += wait;
        let out = d.feed(Input::Timer);
        assert!(out.contains(&Effect::Abort { id: stream }), "cycle {cycle}");
        let get = request_to(&out, Method::Get, "/turns/t1").id;
        let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
        assert!(out.contains(&Effect::Notify), "cycle {cycle}: {out:#?}");
        stream = request_to(&out, Method::Get, "/subscribe").id;
        d.stream(stream, &[]);
        let ConnectionState::Live {
            silent_ms: Some(silent_ms),
            silent_since_ms,
            stalled,
            ..
        } = d.s.connection_state()
        else {
            panic!("cycle {cycle}: {:?}", d.s.connection_state());
        };
        assert!(silent_ms >= 45_000 * u64::from(cycle.min(2)), "{silent_ms}");
        assert!(silent_since_ms.is_some_and(|at| at >= last_frame && at < last_frame + 10));
        assert_eq!(stalled, cycle >= 2, "cycle {cycle}");
        wait = (wait * 2).min(180_000);
    }
    assert!(d.s.error().is_none());
    d.s.take_changes();
    // The tool call answers: the silence is over.
    let frame = format!("id: 4\ndata: {}\n\n", delta("m-t1", " more"));
    let out = d.feed(Input::Bytes {
        request: stream,
        bytes: frame.as_bytes(),
    });
    assert!(out.contains(&Effect::Notify));
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Live {
            turn_id: Some("t1"),
            silent_ms: None,
            silent_since_ms: None,
            stalled: false,
        }
    );
}

/// Issue 14: once the cancel's read shows the turn ended, the view says so and an app lets the
/// user go on; a `send` arriving while that turn's rebuild still runs waits for it instead of
/// failing with `turn-running`, then goes out once.
#[test]
fn a_send_while_a_cancelled_turn_is_rebuilt_waits_for_the_rebuild() {
    let mut d = Driver::new();
    running_turn(&mut d, "t1", None);
    let (_, effects) = d.command(Command::Cancel);
    let request = request_to(&effects, Method::Post, "/cancel").id;
    d.respond(request, 200, "{}");
    // No `turn.done` on the stream within the wait: the turn is read.
    d.now += CANCEL_CHECK_WAIT_MS;
    let out = d.feed(Input::Timer);
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let cancelled = r#"{"status":"cancelled","reason":"client-cancelled","completed_at":"2026-12-01T00:00:09Z"}"#;
    let mut out = d.respond(get, 200, &turn_json("t1", None, cancelled));
    assert_eq!(d.s.view().turn("t1").unwrap().status, TurnStatus::Cancelled);
    let (send, effects) = d.command(Command::Send {
        input: vec![user_text("go on")],
        interrupt: false,
    });
    assert_eq!(settled(&effects, send), None, "refused: {effects:#?}");
    assert!(requests(&effects)
        .iter()
        .all(|r| !r.url.ends_with("/turns")));
    let mut posts = 0;
    for _ in 0..6 {
        let Some(r) = requests(&out).into_iter().next().cloned() else {
            break;
        };
        let body = format!(
            r#"{{"data":[{},{{"type":"turn.done","id":"e9","thread_id":null,"state":{cancelled}}}],"pagination":{{"limit":100}}}}"#,
            created("t1", None)
        );
        out = if r.url.contains("/events") {
            d.respond(r.id, 200, &body)
        } else {
            d.respond(r.id, 200, &turn_json("t1", None, cancelled))
        };
        posts += requests(&out)
            .iter()
            .filter(|r| r.method == Method::Post && r.url.ends_with("/turns"))
            .count();
    }
    assert_eq!(
        posts, 1,
        "the waiting send goes out once the rebuild settled"
    );
}

#[test]
fn a_header_refresh_takes_a_request_id_of_its_own() {
    // A 401 on the subscribe asks the app for fresh headers (RefreshHeaders), then subscribes
    // again: the refresh and every request get distinct ids, so no answer lands on the wrong
    // one (shard 1/40 of RELIABILITY.md: `+=` → `-=` on the refresh's id survived).
    let mut d = Driver::new();
    let (_, out) = d.command(Command::Attach {
        turn_id: "t1".into(),
    });
    let check = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(check, 200, &turn_json("t1", None, RUNNING));
    let sub = request_to(&out, Method::Get, "/subscribe").id;
    let out = d.respond(sub, 401, "");
    let refresh = out
        .iter()
        .find_map(|e| match e {
            Effect::RefreshHeaders { id } => Some(*id),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no header refresh in {out:#?}"));
    let out = d.feed(Input::HeadersRefreshed {
        request: refresh,
        ok: true,
    });
    // The turn may be read again first; follow the requests to the next subscribe.
    let mut out = out;
    for _ in 0..3 {
        let Some(next) = requests(&out).first().map(|r| (r.id, r.url.clone())) else {
            break;
        };
        if next.1.contains("/subscribe") {
            break;
        }
        out = d.respond(next.0, 200, &turn_json("t1", None, RUNNING));
    }
    let ids: Vec<RequestId> = d
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request(r) => Some(r.id),
            Effect::RefreshHeaders { id } => Some(*id),
            _ => None,
        })
        .collect();
    assert!(
        ids.len() >= 4,
        "check, subscribe, refresh, subscribe: {ids:?}"
    );
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), ids.len(), "request ids reused: {ids:?}");
}

/// Resumes onto the paused turn `t1` (one approval pending, `call-1`), as a reload finds it.
fn paused_turn(d: &mut Driver) {
    let (restore, out) = d.command(Command::Resume {
        checkpoint: Some(checkpoint("t1")),
    });
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", None, PAUSED));
    let rebuild_turn = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(rebuild_turn, 200, &turn_json("t1", None, PAUSED));
    let events = request_to(&out, Method::Get, "/turns/t1/events").id;
    let out = d.respond(events, 200, EMPTY_EVENTS);
    assert_eq!(
        settled(&out, restore),
        Some(&Ok(Settled::Resumed(Some("t1".into()))))
    );
    assert_eq!(d.s.view().pending_actions().len(), 1);
}

fn allow_call_1() -> Command {
    Command::Respond {
        decisions: vec![Decision::Allow {
            tool_call_id: "call-1".into(),
        }],
    }
}

fn waited(command: Command) -> Command {
    Command::AfterWait {
        command: alloc::boxed::Box::new(command),
    }
}

fn turn_page(turns: &[String]) -> String {
    let data: Vec<&str> = turns
        .iter()
        .map(|t| {
            t.strip_prefix(r#"{"data":"#)
                .and_then(|t| t.strip_suffix('}'))
                .unwrap()
        })
        .collect();
    format!(
        r#"{{"data":[{}],"pagination":{{"next_page_token":null}}}}"#,
        data.join(",")
    )
}

fn conflict(out: &[Effect], command: CommandId) {
    match settled(out, command) {
        Some(Err(e)) => assert_eq!(e.code, ErrorCode::Conflict, "{e}"),
        other => panic!("not a conflict: {other:?}"),
    }
    assert!(
        requests(out).iter().all(|r| r.method != Method::Post),
        "nothing is posted: {out:#?}"
    );
}

#[test]
fn an_answer_given_already_is_a_conflict_and_posts_nothing() {
    let mut d = Driver::new();
    paused_turn(&mut d);
    let (first, out) = d.command(allow_call_1());
    let post = request_to(&out, Method::Post, "/sessions/s1/turns").id;
    let out = d.stream(post, &[(1, created("t2", Some("t1")))]);
    assert_eq!(settled(&out, first), Some(&Ok(Settled::Turn("t2".into()))));
    // The same click again (a second tab that saw the continuation while it waited for the
    // action lock, or a double click): `conflict`, not `turn-running` nor `invalid-input`.
    let (second, out) = d.command(allow_call_1());
    conflict(&out, second);
    // Also after waiting for the lock: the view settles it, without a listing.
    let (waited_too, out) = d.command(waited(allow_call_1()));
    conflict(&out, waited_too);
    assert!(requests(&out).is_empty(), "{out:#?}");
    // Also once the continuation finished.
    let out = d.stream(
        post,
        &[(
            2,
            r#"{"type":"turn.done","id":"e-done","turn_id":"t2","state":{"status":"done","output":null,"completed_at":"2026-12-01T00:00:09Z"}}"#.to_string(),
        )],
    );
    assert!(requests(&out).iter().all(|r| r.method != Method::Post));
    let (third, out) = d.command(allow_call_1());
    conflict(&out, third);
}

#[test]
fn an_answer_that_waited_while_another_tab_continued_the_turn_is_a_conflict() {
    let mut d = Driver::new();
    paused_turn(&mut d);
    // This tab's view still shows t1 paused: the other tab's continuation has not reached it.
    let (respond, out) = d.command(waited(allow_call_1()));
    assert!(settled(&out, respond).is_none());
    assert!(requests(&out).iter().all(|r| r.method != Method::Post));
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(
        list,
        200,
        &turn_page(&[turn_json("t2", Some("t1"), RUNNING)]),
    );
    conflict(&out, respond);
    // The view still answers later: the approval stays until the relayed turn arrives.
    assert_eq!(d.s.view().pending_actions().len(), 1);
}

#[test]
fn an_answer_that_waited_for_nothing_new_is_posted() {
    for listing in [Some(200), Some(500), None] {
        let mut d = Driver::new();
        paused_turn(&mut d);
        let (respond, out) = d.command(waited(allow_call_1()));
        let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
        let out = match listing {
            Some(200) => d.respond(list, 200, &turn_page(&[turn_json("t1", None, PAUSED)])),
            // A listing that fails lets the answer go on, as before the lock.
            Some(status) => d.respond(list, status, r#"{"error":{"message":"boom"}}"#),
            None => d.feed(Input::NetworkError { request: list }),
        };
        let post = request_to(&out, Method::Post, "/sessions/s1/turns").id;
        let out = d.stream(post, &[(1, created("t2", Some("t1")))]);
        assert_eq!(
            settled(&out, respond),
            Some(&Ok(Settled::Turn("t2".into()))),
            "{listing:?}"
        );
    }
}

#[test]
fn a_message_or_cancel_that_waited_while_another_tab_started_a_turn_is_a_conflict() {
    let mut d = Driver::new();
    paused_turn(&mut d);
    for command in [
        Command::Send {
            input: vec![user_text("hi")],
            interrupt: true,
        },
        Command::Cancel,
    ] {
        let (id, out) = d.command(waited(command));
        let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
        let out = d.respond(
            list,
            200,
            &turn_page(&[turn_json("t2", Some("t1"), RUNNING)]),
        );
        conflict(&out, id);
    }
    // Another tab's turn that already finished: the message goes on after it (here into a
    // session this tab's view holds nothing of yet).
    let mut d = Driver::new();
    let (send, out) = d.command(waited(Command::Send {
        input: vec![user_text("hi")],
        interrupt: false,
    }));
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let done = r#"{"status":"done","output":null,"completed_at":"2026-12-01T00:00:09Z"}"#;
    let out = d.respond(list, 200, &turn_page(&[turn_json("t2", Some("t1"), done)]));
    request_to(&out, Method::Post, "/sessions/s1/turns");
    assert!(settled(&out, send).is_none());
}

#[test]
fn closing_rejects_an_action_waiting_for_its_listing() {
    let mut d = Driver::new();
    paused_turn(&mut d);
    let (respond, out) = d.command(waited(allow_call_1()));
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let (_, out) = d.command(Command::Close);
    assert!(out.contains(&Effect::Abort { id: list }));
    match settled(&out, respond) {
        Some(Err(e)) => assert_eq!(e.code, ErrorCode::Aborted),
        other => panic!("{other:?}"),
    }
    let out = d.respond(list, 200, &turn_page(&[turn_json("t1", None, PAUSED)]));
    assert!(requests(&out).is_empty());
}

/// Back from bfcache (`pageshow` with `persisted`) or resumed after a freeze, the engine reads
/// the followed turn before anything else: the old stream is aborted, and a turn still running
/// is resubscribed after the cursor (issue 14 "Page lifecycle").
#[test]
fn a_page_lifecycle_event_reads_the_turn_then_resubscribes_after_the_cursor() {
    for event in [Lifecycle::Restored, Lifecycle::Resumed] {
        let mut d = Driver::new();
        let (stream, _) = running_turn(&mut d, "t1", None);
        let out = d.feed(Input::Lifecycle(event));
        assert!(out.contains(&Effect::Abort { id: stream }), "{out:#?}");
        let get = request_to(&out, Method::Get, "/turns/t1").id;
        // A late read of the aborted stream is ignored.
        d.feed(Input::Bytes {
            request: stream,
            bytes: format!("id: 4\ndata: {}\n\n", delta("m-t1", " stale")).as_bytes(),
        });
        let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
        let again = request_to(&out, Method::Get, "/subscribe?after_sequence_number=3").id;
        let out = d.stream(again, &[(4, delta("m-t1", " more"))]);
        assert!(!requests(&out).iter().any(|r| r.url.contains("/turns")));
        let text = serde_json::to_string(&d.s.view().summary()).unwrap();
        assert!(text.contains("partial more"), "{text}");
        assert!(!text.contains("stale"), "{text}");
    }
}

/// A wake from sleep needs no input: the first input arriving `WAKE_GAP_MS` past the deadline
/// the executor was given (here the stream's buffered bytes, delivered before the overdue
/// timer) triggers the same read of the turn, and those bytes belong to the aborted stream.
/// An input less late (a throttled timer in a hidden page) changes nothing.
#[test]
fn a_wake_from_sleep_is_seen_from_the_clock_and_reads_the_turn() {
    let mut d = Driver::new();
    let (stream, _) = running_turn(&mut d, "t1", None);
    let deadline = d.s.poll_timeout().expect("the stream's watchdog");
    // Late, but not a wake: bytes are applied as usual.
    d.now = deadline.saturating_sub(1);
    d.stream_bytes(stream, 4, &delta("m-t1", " a"));
    let deadline = d.s.poll_timeout().unwrap();
    d.now = deadline + WAKE_GAP_MS - 2;
    let out = d.stream_bytes(stream, 5, &delta("m-t1", " b"));
    assert!(!out.contains(&Effect::Abort { id: stream }), "{out:#?}");
    let deadline = d.s.poll_timeout().unwrap();
    // Asleep: the computer was suspended past the deadline by more than the gap.
    d.now = deadline + WAKE_GAP_MS;
    let out = d.stream_bytes(stream, 6, &delta("m-t1", " lost"));
    assert!(out.contains(&Effect::Abort { id: stream }), "{out:#?}");
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", None, RUNNING));
    let again = request_to(&out, Method::Get, "/subscribe?after_sequence_number=5").id;
    d.stream(again, &[(6, delta("m-t1", " c"))]);
    let text = serde_json::to_string(&d.s.view().summary()).unwrap();
    assert!(text.contains("partial a b c"), "{text}");
    // The overdue timer right after the wake probes nothing more.
    let out = d.feed(Input::Timer);
    assert!(requests(&out).is_empty(), "{out:#?}");
}

/// A wake of an engine with nothing to follow, or a closed one, does nothing.
#[test]
fn a_wake_without_a_followed_turn_does_nothing() {
    let mut d = Driver::new();
    let (_, effects) = d.command(Command::Load);
    assert!(!requests(&effects).is_empty());
    d.now += 10 * WAKE_GAP_MS;
    assert!(requests(&d.feed(Input::Timer)).is_empty());
    assert!(requests(&d.feed(Input::Lifecycle(Lifecycle::Restored))).is_empty());
}

// ---- Session 10: an unanswered create's lookup budget, and what a later lookup finds.

/// Sends "hi", fails its POST on the network, then every lookup until the send settles; returns
/// the send's command id, its outcome and how long (ms) it took from the POST's failure.
fn unknown_outcome(d: &mut Driver) -> (CommandId, Result<Settled, SessionError>, u64) {
    let (send, out) = d.command(Command::Send {
        input: vec![user_text("hi")],
        interrupt: false,
    });
    let post = request_to(&out, Method::Post, "/turns").id;
    let start = d.now;
    let mut out = d.feed(Input::NetworkError { request: post });
    for _ in 0..1_000 {
        if let Some(outcome) = settled(&out, send) {
            return (send, outcome.clone(), d.now - start);
        }
        match requests(&out)
            .into_iter()
            .find(|r| r.url.contains("/turns?limit=1&order=desc"))
        {
            Some(lookup) => {
                let id = lookup.id;
                out = d.feed(Input::NetworkError { request: id });
            }
            None => {
                d.now = d.s.poll_timeout().expect("a retry is scheduled");
                out = d.feed(Input::Timer);
            }
        }
    }
    panic!("the send never settled");
}

fn one_turn_listing(turn: &str, previous: Option<&str>) -> String {
    turn_listing(&[(turn, previous, RUNNING)])
}

fn posts(d: &Driver) -> usize {
    requests(&d.effects)
        .iter()
        .filter(|r| r.method == Method::Post && r.url.ends_with("/turns"))
        .count()
}

#[test]
fn an_unanswered_create_with_the_server_down_is_outcome_unknown_within_seconds() {
    let mut d = Driver::new();
    let (_, outcome, took) = unknown_outcome(&mut d);
    let e = outcome.unwrap_err();
    assert_eq!(e.code, ErrorCode::OutcomeUnknown);
    assert!(e.retryable);
    // The default budget is 10 s (before it, 20 attempts of backoff up to 30 s: minutes).
    assert!(took <= 10_000, "outcome-unknown after {took} ms");
    // The snapshot says so too, and nothing was posted twice.
    assert_eq!(d.s.error().map(|e| e.code), Some(ErrorCode::OutcomeUnknown));
    assert_eq!(posts(&d), 1);
}

#[test]
fn a_refresh_after_outcome_unknown_that_finds_the_turn_follows_it_and_posts_nothing() {
    let mut d = Driver::new();
    let _ = unknown_outcome(&mut d);
    let (wait, out) = d.command(Command::AwaitCreateOutcome);
    assert_eq!(settled(&out, wait), None, "it waits for a lookup");
    let (_, out) = d.command(Command::Refresh);
    let lookup = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(lookup, 200, &one_turn_listing("t9", None));
    assert_eq!(
        settled(&out, wait),
        Some(&Ok(Settled::Created(Some("t9".into()))))
    );
    // The engine follows the turn it found: reads it, then subscribes.
    let get = request_to(&out, Method::Get, "/turns/t9").id;
    assert_eq!(d.s.connection().turn_id, Some("t9"));
    let out = d.respond(get, 200, &turn_json("t9", None, RUNNING));
    request_to(&out, Method::Get, "/turns/t9/subscribe");
    // Asked again later, the answer is known at once.
    let (again, out) = d.command(Command::AwaitCreateOutcome);
    assert_eq!(
        settled(&out, again),
        Some(&Ok(Settled::Created(Some("t9".into()))))
    );
    assert_eq!(posts(&d), 1, "never a second POST");
}

#[test]
fn a_lookup_answered_404_says_the_session_is_gone_and_the_message_not_sent() {
    // A trial: a server that kept its sessions in memory restarted; every look for the
    // message's turn answered 404 "Session not found", and the message read "Maybe not sent"
    // for as long as the page stayed open.
    let mut d = Driver::new();
    let _ = unknown_outcome(&mut d);
    let (wait, _) = d.command(Command::AwaitCreateOutcome);
    d.now = d.s.poll_timeout().expect("a quiet look is scheduled");
    let out = d.feed(Input::Timer);
    let lookup = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(lookup, 404, r#"{"error":{"message":"Session not found"}}"#);
    // Not sent, and not "sending again is safe" either: the session is gone.
    let code = |out: &[Effect], id| settled(out, id).map(|r| r.clone().map_err(|e| e.code));
    assert_eq!(code(&out, wait), Some(Err(ErrorCode::NotFound)));
    assert_eq!(d.s.error().map(|e| e.code), Some(ErrorCode::NotFound));
    // Known now: no more looks.
    assert_eq!(d.s.poll_timeout(), None);
    let (again, out) = d.command(Command::AwaitCreateOutcome);
    assert_eq!(code(&out, again), Some(Err(ErrorCode::NotFound)));
    assert_eq!(posts(&d), 1);
}

#[test]
fn a_lookup_that_shows_no_such_turn_says_sending_again_is_safe() {
    let mut d = Driver::new();
    let _ = unknown_outcome(&mut d);
    let (wait, _) = d.command(Command::AwaitCreateOutcome);
    let (_, out) = d.command(Command::Refresh);
    let lookup = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(lookup, 200, r#"{"data":[],"pagination":{}}"#);
    assert_eq!(settled(&out, wait), Some(&Ok(Settled::Created(None))));
    // The server answered: the badge is idle, not `failed` (a trial: "failed · network" stayed
    // with the server back), and the connection reports no error (the message carries it).
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Idle { turn_id: None }
    );
    assert_eq!(d.s.error(), None);
    let (again, out) = d.command(Command::AwaitCreateOutcome);
    assert_eq!(settled(&out, again), Some(&Ok(Settled::Created(None))));
    // Sending again now posts (the first one created nothing).
    let (_, out) = d.command(Command::Send {
        input: vec![user_text("hi")],
        interrupt: false,
    });
    request_to(&out, Method::Post, "/turns");
    assert_eq!(posts(&d), 2);
}

#[test]
fn a_lookup_failing_again_settles_the_wait_with_outcome_unknown() {
    let mut d = Driver::new();
    let _ = unknown_outcome(&mut d);
    let (wait, _) = d.command(Command::AwaitCreateOutcome);
    let (_, out) = d.command(Command::Refresh);
    let lookup = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    // A permanent refusal of the listing: unknown again at once.
    let out = d.respond(lookup, 422, r#"{"error":{"message":"no"}}"#);
    let outcome = settled(&out, wait).expect("settled");
    assert_eq!(
        outcome.as_ref().unwrap_err().code,
        ErrorCode::OutcomeUnknown
    );
}

#[test]
fn the_online_event_after_outcome_unknown_looks_up_again() {
    let mut d = Driver::new();
    let _ = unknown_outcome(&mut d);
    let (wait, _) = d.command(Command::AwaitCreateOutcome);
    let out = d.feed(Input::Online);
    let lookup = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(lookup, 200, &one_turn_listing("t9", None));
    assert_eq!(
        settled(&out, wait),
        Some(&Ok(Settled::Created(Some("t9".into()))))
    );
}

#[test]
fn after_outcome_unknown_the_engine_looks_again_by_itself_until_the_server_answers() {
    // Session 21: "Maybe not sent" stayed until the user pressed Retry, long after the server
    // was back. Now the engine looks again on its own (2 s, 4 s, … up to 30 s), quietly.
    let mut d = Driver::new();
    let _ = unknown_outcome(&mut d);
    let (wait, out) = d.command(Command::AwaitCreateOutcome);
    assert_eq!(settled(&out, wait), None, "it waits for a lookup");
    // The first quiet look, the server still down: the waiter hears "no answer again", and the
    // session still reads outcome-unknown (no `connecting` in between).
    d.now = d.s.poll_timeout().expect("a quiet look is scheduled");
    let out = d.feed(Input::Timer);
    let lookup = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    assert_eq!(d.s.error().map(|e| e.code), Some(ErrorCode::OutcomeUnknown));
    let out = d.feed(Input::NetworkError { request: lookup });
    let e = settled(&out, wait)
        .expect("the look concluded")
        .clone()
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::OutcomeUnknown);
    // The next look, the server back with the turn: the engine follows it and says so.
    let (wait, _) = d.command(Command::AwaitCreateOutcome);
    let due = d.s.poll_timeout().expect("the next look");
    d.now = due;
    let out = d.feed(Input::Timer);
    let lookup = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(lookup, 200, &one_turn_listing("t9", None));
    assert_eq!(
        settled(&out, wait),
        Some(&Ok(Settled::Created(Some("t9".into()))))
    );
    assert_eq!(d.s.connection().turn_id, Some("t9"));
    let get = request_to(&out, Method::Get, "/turns/t9").id;
    let out = d.respond(get, 200, &turn_json("t9", None, RUNNING));
    request_to(&out, Method::Get, "/turns/t9/subscribe");
    assert_eq!(posts(&d), 1);
}

#[test]
fn waiting_for_an_outcome_there_is_none_of_is_aborted() {
    let mut d = Driver::new();
    let (wait, out) = d.command(Command::AwaitCreateOutcome);
    let e = settled(&out, wait).unwrap().as_ref().unwrap_err();
    assert_eq!(e.code, ErrorCode::Aborted);
    // A newer turn replaces the unconfirmed one: its waiters are told.
    let mut d = Driver::new();
    let _ = unknown_outcome(&mut d);
    let (wait, _) = d.command(Command::AwaitCreateOutcome);
    let (_, out) = d.command(Command::Send {
        input: vec![user_text("other")],
        interrupt: false,
    });
    let e = settled(&out, wait).unwrap().as_ref().unwrap_err();
    assert_eq!(e.code, ErrorCode::Aborted);
    // Closing the engine, likewise.
    let mut d = Driver::new();
    let _ = unknown_outcome(&mut d);
    let (wait, _) = d.command(Command::AwaitCreateOutcome);
    let (_, out) = d.command(Command::Close);
    let e = settled(&out, wait).unwrap().as_ref().unwrap_err();
    assert_eq!(e.code, ErrorCode::Aborted);
}

/// The stream that delivered `turn.done` is left to end by itself: the browser shows the turn's
/// request as completed, not cancelled (`net::ERR_ABORTED` for every turn, a trial's finding).
/// A server that keeps it open is cut `DONE_DRAIN_MS` later; a stream that ends is forgotten.
#[test]
fn the_stream_that_delivered_turn_done_ends_by_itself_or_is_cut_after_the_drain() {
    use crate::resume::DONE_DRAIN_MS;
    let done = "id: 4\ndata: {\"type\":\"turn.done\",\"id\":\"e-done\",\"thread_id\":null,\"state\":{\"status\":\"done\",\"output\":null,\"required_actions\":[]}}\n\n";
    let aborts = |out: &[Effect]| {
        out.iter()
            .filter(|e| matches!(e, Effect::Abort { .. }))
            .count()
    };
    for ends in [true, false] {
        let mut d = Driver::new();
        let (post, _) = running_turn(&mut d, "t1", None);
        let out = d.feed(Input::Bytes {
            request: post,
            bytes: done.as_bytes(),
        });
        assert_eq!(d.s.connection().status, Some(&ConnectionStatus::Done));
        assert_eq!(aborts(&out), 0, "{out:?}");
        if ends {
            let out = d.feed(Input::End { request: post });
            assert_eq!(aborts(&out), 0, "{out:?}");
            d.now += DONE_DRAIN_MS;
            let out = d.feed(Input::Timer);
            assert_eq!(aborts(&out), 0, "nothing left to cut: {out:?}");
        } else {
            assert_eq!(d.s.poll_timeout(), Some(d.now + DONE_DRAIN_MS));
            d.now += DONE_DRAIN_MS;
            let out = d.feed(Input::Timer);
            assert_eq!(out, vec![Effect::Abort { id: post }]);
        }
        assert_eq!(d.s.connection().status, Some(&ConnectionStatus::Done));
        assert_eq!(d.s.poll_timeout(), None, "no timer left (ends: {ends})");
    }
}

/// Stop pressed while the network fails (a trial: offline, the cancel was lost and the reply
/// ran to its end once back online): a cancel request that got no answer, or a server error,
/// is sent again when the turn next shows it runs (here its next frame).
#[test]
fn a_cancel_that_did_not_reach_the_server_is_sent_again() {
    for failure in ["network", "503"] {
        let mut d = Driver::new();
        let (post, _) = running_turn(&mut d, "t1", None);
        let (_, effects) = d.command(Command::Cancel);
        let first = request_to(&effects, Method::Post, "/cancel").id;
        let out = if failure == "network" {
            d.feed(Input::NetworkError { request: first })
        } else {
            d.respond(first, 503, r#"{"error":{"message":"busy"}}"#)
        };
        assert!(requests(&out).is_empty(), "{failure}: {out:?}");
        // Sent again once the first wait (1 s) has passed and the turn shows it runs.
        d.now += 1_000;
        let bytes = format!("id: 4\ndata: {}\n\n", delta("m-t1", " more"));
        let out = d.feed(Input::Bytes {
            request: post,
            bytes: bytes.as_bytes(),
        });
        let again = request_to(&out, Method::Post, "/cancel").id;
        assert_ne!(again, first, "{failure}");
    }
}

/// A load during a turn's last moments: the timeline shows the turn running (its last message
/// still streaming, so not persisted yet), and the turns listing, read after it, shows it ended.
/// What the turn persisted in between is in neither listing, so the turn is rebuilt from its
/// events (a soak run: a reload showed the turn paused on an approval with the message asking
/// for it missing).
#[test]
fn a_turn_that_ended_between_the_timeline_and_the_turns_listing_is_rebuilt() {
    let mut d = Driver::new();
    let (load, out) = d.command(Command::Load);
    let first = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(
        first,
        200,
        &timeline_page(&[("t1", created("t1", None))], None),
    );
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    let out = d.respond(list, 200, &turn_listing(&[("t1", None, DONE_STATE)]));
    assert!(matches!(settled(&out, load), Some(Ok(_))), "{out:?}");
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", None, DONE_STATE));
    let rebuild_turn = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(rebuild_turn, 200, &turn_json("t1", None, DONE_STATE));
    let events = request_to(&out, Method::Get, "/turns/t1/events").id;
    let page = format!(
        r#"{{"data":[{}],"pagination":{{}}}}"#,
        complete_message("m1", "the last words")
    );
    d.respond(events, 200, &page);
    assert_eq!(message_texts(&d.s, "t1"), ["the last words"]);
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Done {
            turn_id: Some("t1")
        }
    );
    // A turn the timeline already showed ended is not read again.
    let mut d = Driver::new();
    let (_, out) = d.command(Command::Load);
    let first = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(
        first,
        200,
        &timeline_page(
            &[("t1", done_event("t1")), ("t1", created("t1", None))],
            None,
        ),
    );
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    let out = d.respond(list, 200, &turn_listing(&[("t1", None, DONE_STATE)]));
    assert!(requests(&out).is_empty(), "{out:?}");
}
