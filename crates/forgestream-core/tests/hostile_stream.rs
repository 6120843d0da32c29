//! The session engine driven natively through its public `Session` API as a hostile server would
//! drive it (issue 18). The cursor rules (item 5, issue 14 "cursor validation"):
//!
//! - only an `id:` that is an integer in `0 ..= 2^53 − 1` moves the cursor; anything else is a
//!   `protocol` warning and the frame is applied without moving it (one
//!   `id: 18446744073709551615` used to pin the cursor: every later frame, `turn.done` included,
//!   was dropped as a replay);
//! - a gap (a sequence number skipped) is never shown: the frame is refused, the stream closed
//!   and the turn rebuilt from the listings once, then resubscribed after the cursor; a second
//!   gap in the same run rebuilds and ends `liveUnavailable` (no loop);
//! - a stream whose numbers step back is treated the same way.
//!
//! And a 2xx that is not an event stream (item 4): failed at once, `invalid-response`, not
//! retryable, naming what came back.
use forgestream_core::reduce::{ContentView, ItemBody, TurnStatus};
use forgestream_core::resume::{Config as Reconnect, ConnectionError, ConnectionStatus};
use forgestream_core::session::{
    Api, Command, CommandId, Config, Effect, ErrorCode, Flavor, HttpRequest, Input, Method,
    RequestId, Session, SessionError, Settled, StorageEffect, Transport,
};
use forgestream_core::wire;

#[path = "support/engine.rs"]
mod support;
use support::{request_to, requests};

struct Driver {
    s: Session,
    now: u64,
    effects: Vec<Effect>,
    warnings: Vec<(String, String)>,
    next_command: u64,
}

impl Driver {
    fn new(transport: Transport) -> Self {
        Self::for_session("s1", transport)
    }

    fn for_session(session_id: &str, transport: Transport) -> Self {
        Driver {
            s: Session::new(
                session_id,
                Config {
                    transport,
                    max_frame_bytes: 1 << 20,
                    ..Config::new(Api::new("http://h", Flavor::TrueForge))
                },
            ),
            now: 1_000,
            effects: Vec::new(),
            warnings: Vec::new(),
            next_command: 1,
        }
    }

    fn feed(&mut self, input: Input<'_>) -> Vec<Effect> {
        self.now += 1;
        self.s.handle(input, self.now);
        let out: Vec<Effect> = std::iter::from_fn(|| self.s.poll_effect()).collect();
        self.warnings.extend(self.s.take_changes().1);
        self.effects.extend(out.iter().cloned());
        out
    }

    /// Sends a turn; returns the POST's request id.
    fn send(&mut self) -> RequestId {
        let id = self.next_command;
        self.next_command += 1;
        let out = self.feed(Input::Command {
            id,
            command: Command::Send {
                input: vec![wire::InputItem::UserMessage {
                    content: wire::UserContent::Text("hi".into()),
                }],
                interrupt: false,
            },
        });
        request_to(&out, Method::Post, "/turns").id
    }

    /// Frames `(id line, data)` on open stream `request`, each in its own read.
    fn frames(&mut self, request: RequestId, frames: &[(&str, String)]) -> Vec<Effect> {
        let mut out = Vec::new();
        for (id, data) in frames {
            let bytes = format!("id: {id}\ndata: {data}\n\n");
            out.extend(self.feed(Input::Bytes {
                request,
                bytes: bytes.as_bytes(),
            }));
        }
        out
    }

    /// Sends a turn and opens its stream: the POST's request id.
    fn open_turn(&mut self) -> RequestId {
        let post = self.send();
        self.open(post);
        post
    }

    /// A turn streaming `turn.created`, the message `m1` and its delta `"A"` (frames 1–3).
    fn turn_with_a(&mut self) -> RequestId {
        let post = self.open_turn();
        self.frames(post, &with_a(&[]));
        post
    }

    /// The stream `request` ends before `turn.done`; the turn check says it still runs: what
    /// the engine does next (resubscribe).
    fn end_still_running(&mut self, request: RequestId) -> Vec<Effect> {
        let out = self.feed(Input::End { request });
        let get = request_to(&out, Method::Get, "/turns/t1").id;
        self.respond(get, TURN_RUNNING)
    }

    /// The rebuild `out` asked for: the turn's state (still running), then its persisted
    /// events; what the engine does next.
    fn rebuild_running(&mut self, out: &[Effect]) -> Vec<Effect> {
        let turn = request_to(out, Method::Get, "/turns/t1").id;
        let out = self.respond(turn, TURN_RUNNING);
        let events = request_to(&out, Method::Get, "/turns/t1/events").id;
        self.respond(events, &listing())
    }

    fn open(&mut self, request: RequestId) {
        self.feed(Input::StreamOpened {
            request,
            status: 200,
            content_type: Some("text/event-stream"),
            redirected: false,
        });
    }

    fn respond(&mut self, request: RequestId, body: &str) -> Vec<Effect> {
        self.feed(Input::Response {
            request,
            status: 200,
            retry_after: None,
            body: body.as_bytes(),
        })
    }

    fn text(&self) -> String {
        match self.s.view().item("t1", "m1").map(|i| &i.body) {
            Some(ItemBody::Message(m)) => match &m.content {
                Some(ContentView::Text(t)) => t.clone(),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }

    fn status(&self) -> Option<ConnectionStatus> {
        self.s.connection().status.cloned()
    }

    fn protocol_warnings(&self, containing: &str) -> usize {
        self.warnings
            .iter()
            .filter(|(code, message)| code == "protocol" && message.contains(containing))
            .count()
    }

    fn checkpoint_seqs(&self) -> Vec<u64> {
        self.effects
            .iter()
            .filter_map(|e| match e {
                Effect::Storage(StorageEffect::WriteCheckpoint(c)) => Some(c.seq),
                _ => None,
            })
            .collect()
    }
}

/// The `EventSource` among `out`: its id and URL.
fn event_source(out: &[Effect]) -> (RequestId, String) {
    out.iter()
        .find_map(|e| match e {
            Effect::OpenEventSource { id, url } => Some((*id, url.clone())),
            _ => None,
        })
        .expect("an EventSource")
}

/// The frames a turn opens with — `turn.created`, the message `m1`, its delta `"A"` (ids 1–3)
/// — then `rest`.
fn with_a(rest: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
    let mut frames = vec![("1", created()), ("2", base()), ("3", delta("A"))];
    frames.extend_from_slice(rest);
    frames
}

fn created() -> String {
    r#"{"type":"turn.created","id":"e0","turn_id":"t1","previous_turn_id":null,"input":[{"type":"user.message","content":"hi"}],"state":{"status":"running"},"created_at":"2026-12-01T00:00:00Z","thread_id":null}"#.into()
}

fn base() -> String {
    r#"{"type":"model.message","id":"m1","thread_id":"main","created_at":"2026-12-01T00:00:01Z"}"#
        .into()
}

fn delta(text: &str) -> String {
    format!(r#"{{"type":"model.message.delta","id":"m1","thread_id":"main","content":"{text}"}}"#)
}

fn done() -> String {
    r#"{"type":"turn.done","id":"e9","state":{"status":"done","completed_at":"2026-12-01T00:00:09Z"}}"#.into()
}

const TURN_RUNNING: &str = r#"{"data":{"id":"t1","session_id":"s1","previous_turn_id":null,"state":{"status":"running"},"created_at":"2026-12-01T00:00:00Z"}}"#;
/// The persisted events of the running turn: its `turn.created` and the message's base (a
/// message still streaming is persisted only when it completes).
fn listing() -> String {
    format!(r#"{{"data":[{},{}],"pagination":{{}}}}"#, created(), base())
}

#[test]
fn an_id_outside_0_to_2_pow_53_warns_and_never_moves_the_cursor() {
    for bad in [
        "18446744073709551615",
        "9007199254740992",
        "-1",
        "2.5",
        "1e3",
    ] {
        let mut d = Driver::new(Transport::Fetch);
        let post = d.open_turn();
        let out = d.frames(
            post,
            &[
                ("1", created()),
                ("2", base()),
                (bad, delta("A")),
                ("3", delta("B")),
                ("4", done()),
            ],
        );
        assert_eq!(
            d.text(),
            "AB",
            "id {bad}: no later frame dropped as a replay"
        );
        assert_eq!(
            d.s.view().turn("t1").unwrap().status,
            TurnStatus::Done,
            "{bad}"
        );
        assert_eq!(d.status(), Some(ConnectionStatus::Done), "{bad}");
        assert_eq!(d.protocol_warnings("is not a sequence number"), 1, "{bad}");
        assert!(
            requests(&out).is_empty(),
            "id {bad}: followed to turn.done without a reconnect: {out:#?}"
        );
        assert!(
            d.checkpoint_seqs().iter().all(|&seq| seq <= 4),
            "id {bad}: {:?}",
            d.checkpoint_seqs()
        );
    }
}

#[test]
fn an_eventsource_frame_with_a_bad_id_warns_and_keeps_the_cursor() {
    let mut d = Driver::new(Transport::EventSource);
    let post = d.turn_with_a();
    // The POST stream ends early; the turn still runs; the engine subscribes with an EventSource.
    let out = d.end_still_running(post);
    let (es, url) = event_source(&out);
    assert!(url.ends_with("after_sequence_number=3"), "{url}");
    d.open(es);
    for (id, data) in [
        ("18446744073709551615", delta("B")),
        ("4", delta("C")),
        ("5", done()),
    ] {
        d.feed(Input::Frame {
            request: es,
            data: &data,
            last_event_id: id,
        });
    }
    assert_eq!(d.text(), "ABC");
    assert_eq!(d.status(), Some(ConnectionStatus::Done));
    assert_eq!(d.protocol_warnings("is not a sequence number"), 1);
}

#[test]
fn a_gap_is_never_shown_the_turn_is_rebuilt_once_and_resubscribed_after_the_cursor() {
    let mut d = Driver::new(Transport::Fetch);
    let post = d.open_turn();
    // Frame 4 never arrives; 5 and 6 come in the same read as the gap.
    let out = d.frames(post, &with_a(&[]));
    assert!(requests(&out).is_empty());
    let gap = format!(
        "id: 5\ndata: {}\n\nid: 6\ndata: {}\n\n",
        delta("C"),
        delta("D")
    );
    let out = d.feed(Input::Bytes {
        request: post,
        bytes: gap.as_bytes(),
    });
    assert_eq!(d.text(), "A", "the frames after the hole are not shown");
    assert_eq!(d.protocol_warnings("sequence gap"), 1, "{:?}", d.warnings);
    assert!(out.contains(&Effect::Abort { id: post }), "{out:#?}");
    assert_eq!(d.status(), Some(ConnectionStatus::Rebuilding));
    assert!(d.checkpoint_seqs().iter().all(|&seq| seq <= 3));
    // The rebuild: the turn's state, then its persisted events.
    let out = d.rebuild_running(&out);
    // Still running: resubscribe after the last frame applied before the hole.
    let sub = request_to(&out, Method::Get, "/subscribe?after_sequence_number=3").id;
    d.open(sub);
    d.frames(
        sub,
        &[
            ("4", delta("B")),
            ("5", delta("C")),
            ("6", delta("D")),
            ("7", done()),
        ],
    );
    assert_eq!(d.text(), "ABCD", "no hole, nothing doubled");
    assert_eq!(d.status(), Some(ConnectionStatus::Done));
    assert_eq!(d.protocol_warnings("sequence gap"), 1);
}

#[test]
fn a_second_gap_rebuilds_and_ends_live_unavailable_without_a_loop() {
    let mut d = Driver::new(Transport::Fetch);
    let post = d.open_turn();
    let out = d.frames(post, &with_a(&[("5", delta("C"))]));
    let out = d.rebuild_running(&out);
    let sub = request_to(&out, Method::Get, "/subscribe?after_sequence_number=3").id;
    d.open(sub);
    // The server skips again.
    let out = d.frames(sub, &[("4", delta("B")), ("6", delta("D"))]);
    assert_eq!(d.text(), "AB");
    assert_eq!(d.protocol_warnings("sequence gap"), 2);
    let out = d.rebuild_running(&out);
    assert!(requests(&out).is_empty(), "no third stream: {out:#?}");
    assert_eq!(d.status(), Some(ConnectionStatus::LiveUnavailable));
}

#[test]
fn a_stream_that_steps_back_is_rebuilt() {
    let mut d = Driver::new(Transport::Fetch);
    let post = d.open_turn();
    let out = d.frames(post, &with_a(&[("4", delta("B")), ("2", delta("X"))]));
    assert_eq!(d.text(), "AB", "the step back applies nothing");
    assert_eq!(d.protocol_warnings("steps back"), 1, "{:?}", d.warnings);
    assert!(out.contains(&Effect::Abort { id: post }));
    assert_eq!(d.status(), Some(ConnectionStatus::Rebuilding));
    request_to(&out, Method::Get, "/turns/t1");
}

#[test]
fn a_resubscribe_may_replay_from_below_the_cursor() {
    // At-least-once (FIELD C7): a new stream starting below the cursor is no step back.
    let mut d = Driver::new(Transport::Fetch);
    let post = d.turn_with_a();
    let out = d.end_still_running(post);
    let sub = request_to(&out, Method::Get, "/subscribe?after_sequence_number=3").id;
    d.open(sub);
    let out = d.frames(
        sub,
        &[
            ("2", base()),
            ("3", delta("A")),
            ("4", delta("B")),
            ("5", done()),
        ],
    );
    assert!(requests(&out).is_empty());
    assert_eq!(d.text(), "AB");
    assert_eq!(d.status(), Some(ConnectionStatus::Done));
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
}

#[test]
fn a_200_that_is_not_an_event_stream_fails_at_once_naming_what_came_back() {
    for (content_type, redirected, named) in [
        (
            Some("text/html; charset=utf-8"),
            false,
            "\"text/html; charset=utf-8\"",
        ),
        (Some("application/json"), false, "\"application/json\""),
        (None, false, "no Content-Type"),
        (Some("text/event-stream"), true, "after a redirect"),
    ] {
        let mut d = Driver::new(Transport::Fetch);
        let post = d.send();
        let out = d.feed(Input::StreamOpened {
            request: post,
            status: 200,
            content_type,
            redirected,
        });
        assert_eq!(
            d.status(),
            Some(ConnectionStatus::Failed(ConnectionError::InvalidResponse)),
            "{named}"
        );
        assert!(
            out.contains(&Effect::Abort { id: post }),
            "{named}: {out:#?}"
        );
        assert!(requests(&out).is_empty(), "{named}: no retry, no lookup");
        let error = d.s.error().expect("the error is shown").clone();
        assert_eq!(error.code, ErrorCode::InvalidResponse, "{named}");
        assert!(!error.retryable, "{named}");
        assert_eq!(error.status, Some(200));
        assert!(error.message.contains(named), "{named}: {}", error.message);
        // Nothing later revives it: a late body read is ignored.
        let late = d.feed(Input::Bytes {
            request: post,
            bytes: format!("id: 1\ndata: {}\n\n", created()).as_bytes(),
        });
        assert!(requests(&late).is_empty());
        assert!(d.s.view().turn("t1").is_none(), "{named}");
    }
}

/// Ids `.` and `..` (and anything else that is not 1–256 bytes of `A–Z a–z 0–9 . _ - ~ :`)
/// would step out of their URL segment (`%2e%2e` is no cure: URL parsers treat it as `..`).
/// A session id like that requests nothing; a `turn.created` naming one fails the turn.
#[test]
fn unsafe_ids_never_become_urls() {
    for bad in [".", "..", "a/b", "a?b", "a#b", "é", ""] {
        let mut d = Driver::for_session(bad, Transport::Fetch);
        let out = d.feed(Input::Command {
            id: 1,
            command: Command::Load,
        });
        assert!(requests(&out).is_empty(), "session {bad:?}: {out:#?}");
        let refused = out.iter().any(|e| {
            matches!(e, Effect::Settle { command: 1, outcome: Err(err) }
                if err.code == ErrorCode::InvalidInput && err.message.contains("not a safe id"))
        });
        assert!(refused, "session {bad:?}: {out:#?}");
    }
    let long = "../".repeat(40);
    for bad in ["..", ".", "t/../../x", long.as_str()] {
        let mut d = Driver::new(Transport::Fetch);
        let post = d.open_turn();
        let frame = created().replace("\"turn_id\":\"t1\"", &format!("\"turn_id\":{bad:?}"));
        let out = d.frames(post, &[("1", frame), ("2", base())]);
        assert!(requests(&out).is_empty(), "turn {bad:?}: {out:#?}");
        assert_eq!(
            d.status(),
            Some(ConnectionStatus::Failed(ConnectionError::InvalidResponse)),
            "turn {bad:?}"
        );
        let error = d.s.error().expect("shown").clone();
        assert_eq!(error.code, ErrorCode::InvalidResponse);
        assert!(error.message.contains("not a safe id"), "{}", error.message);
        // The message names the id, cut to its first 64 bytes (shard 5/40: `shown` unpinned).
        let named = format!("{:?}", &bad[..bad.len().min(64)]);
        assert!(error.message.contains(&named), "{}", error.message);
        assert!(error.message.len() < 200, "{}", error.message);
        assert!(d.effects.iter().all(|e| match e {
            Effect::Request(r) => !r.url.contains(bad),
            Effect::Storage(StorageEffect::WriteCheckpoint(c)) => {
                c.turn_id.as_deref() != Some(bad)
            }
            _ => true,
        }));
    }
}

/// `maxFrameBytes` holds for the `EventSource` transport too (the browser parses the frame, the
/// engine refuses it): before, a 100 MB frame was applied whole.
#[test]
fn an_eventsource_frame_over_max_frame_bytes_is_refused_with_a_warning() {
    let mut d = Driver::new(Transport::EventSource);
    let post = d.turn_with_a();
    let out = d.end_still_running(post);
    let (es, _) = event_source(&out);
    d.open(es);
    let huge = delta(&"x".repeat((1 << 20) + 1));
    for (id, data) in [("4", huge), ("5", delta("B")), ("6", done())] {
        d.feed(Input::Frame {
            request: es,
            data: &data,
            last_event_id: id,
        });
    }
    assert_eq!(d.text(), "AB", "the oversize frame is not applied");
    assert_eq!(d.protocol_warnings("exceeded the 1048576-byte cap"), 1);
    assert_eq!(d.status(), Some(ConnectionStatus::Done));
}

/// Issue 18 item 9: the bytes of a frame that arrives more slowly than the idle timeout (a large
/// frame over a slow link) are liveness. Before, only whole frames, comments and `retry:` reset
/// the watchdog, so such a frame was cut (`Abort`, then a reconnect that re-sent it just as
/// slowly) every time and never shown. Silence still closes the stream.
#[test]
fn a_frame_slower_than_the_idle_timeout_is_not_cut() {
    let idle = Reconnect::default().idle_timeout_ms;
    let mut d = Driver::new(Transport::Fetch);
    let post = d.open_turn();
    d.frames(post, &[("1", created()), ("2", base())]);
    let frame = format!("id: 3\ndata: {}\n\n", delta("slow"));
    let pieces: Vec<&[u8]> = frame.as_bytes().chunks(8).collect();
    assert!(
        pieces.len() as u64 * idle / 2 > 3 * idle,
        "the frame takes 3 idle timeouts"
    );
    for piece in pieces {
        d.now += idle / 2;
        let out = d.feed(Input::Timer);
        assert!(
            !out.contains(&Effect::Abort { id: post }),
            "cut after {} ms: {out:#?}",
            d.now
        );
        d.feed(Input::Bytes {
            request: post,
            bytes: piece,
        });
    }
    assert_eq!(d.text(), "slow");
    assert_eq!(d.status(), Some(ConnectionStatus::Live));
    assert!(
        requests(&d.effects).len() == 1,
        "no reconnect: {:#?}",
        d.effects
    );
    // A stream that then sends nothing is still closed by the watchdog and checked.
    d.now += idle + 1;
    let out = d.feed(Input::Timer);
    assert!(out.contains(&Effect::Abort { id: post }), "{out:#?}");
}

/// An `EventSource` subscribe takes a request id of its own: the next request (here a load)
/// gets another, so a late event of one is never taken for the other (shard 5/40 found the id
/// counter's step unpinned on this path).
#[test]
fn an_eventsource_subscribe_takes_its_own_request_id() {
    let mut d = Driver::new(Transport::EventSource);
    let post = d.turn_with_a();
    let out = d.end_still_running(post);
    let (es, _) = event_source(&out);
    d.open(es);
    let out = d.feed(Input::Command {
        id: 99,
        command: Command::Load,
    });
    let load = request_to(&out, Method::Get, "/events").id;
    assert_ne!(load, es);
    let mut ids: Vec<RequestId> = d
        .effects
        .iter()
        .filter_map(|e| match e {
            Effect::Request(r) => Some(r.id),
            Effect::OpenEventSource { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    let all = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), all, "every request has its own id");
}
