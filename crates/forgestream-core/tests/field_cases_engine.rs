//! FIELD-CASES parts that the connection machine's own tests (`resume_field_cases.rs`) pin only
//! as commands: here the whole session engine runs them through its public `Session` API, and
//! each test reads what the SDK hands the app — the requests it sends, its connection state,
//! its error and its view.
//!
//! - C3: `:` comments on an open stream count as liveness — a stream that only sends comments
//!   is never probed nor recycled by the idle watchdog, and one that stops is.
//! - C13: a reload onto a turn the server already ended settles from the history alone (no
//!   turn read, no subscribe, no rebuild), clears the live marker, and the next send creates t2
//!   without cancelling t1.
//! - C14 (transport): a 401 on a resume asks the header provider again and resubscribes once
//!   with the same cursor (query and `Last-Event-ID`); a second 401 is the `auth` error and
//!   nothing more is sent; the text shown stays as it was.
use forgestream_core::reduce::{ContentView, ItemBody};
use forgestream_core::session::{
    checkpoint, Api, Checkpoint, Command, CommandId, Config, ConnectionState, Effect, ErrorCode,
    Flavor, HttpRequest, Input, Method, RequestId, Session, SessionError, Settled, StorageEffect,
};
use forgestream_core::wire;

#[path = "support/engine.rs"]
mod support;
use support::{request_to, requests};

struct Driver {
    s: Session,
    now: u64,
    effects: Vec<Effect>,
    next_command: CommandId,
}

impl Driver {
    fn new() -> Self {
        Driver {
            s: Session::new(
                "s1",
                Config {
                    max_frame_bytes: 1 << 20,
                    ..Config::new(Api::new("http://h", Flavor::TrueForge))
                },
            ),
            now: 1_000,
            effects: Vec::new(),
            next_command: 1,
        }
    }

    fn feed(&mut self, input: Input<'_>) -> Vec<Effect> {
        self.s.handle(input, self.now);
        let out: Vec<Effect> = std::iter::from_fn(|| self.s.poll_effect()).collect();
        self.effects.extend(out.iter().cloned());
        out
    }

    fn command(&mut self, command: Command) -> Vec<Effect> {
        let id = self.next_command;
        self.next_command += 1;
        self.feed(Input::Command { id, command })
    }

    fn respond(&mut self, request: RequestId, status: u16, body: &str) -> Vec<Effect> {
        self.feed(Input::Response {
            request,
            status,
            retry_after: None,
            body: body.as_bytes(),
        })
    }

    fn open(&mut self, request: RequestId) -> Vec<Effect> {
        self.feed(Input::StreamOpened {
            request,
            status: 200,
            content_type: Some("text/event-stream"),
            redirected: false,
        })
    }

    fn bytes(&mut self, request: RequestId, bytes: &str) -> Vec<Effect> {
        self.feed(Input::Bytes {
            request,
            bytes: bytes.as_bytes(),
        })
    }

    /// Moves the clock on by `ms` and fires the engine's timer.
    fn wait(&mut self, ms: u64) -> Vec<Effect> {
        self.now += ms;
        self.feed(Input::Timer)
    }

    /// The text of message `m1` of turn `t1` as the view shows it.
    fn text(&self) -> String {
        match self.s.view().item("t1", "m1").map(|i| &i.body) {
            Some(ItemBody::Message(m)) => match &m.content {
                Some(ContentView::Text(t)) => t.clone(),
                _ => String::new(),
            },
            _ => String::new(),
        }
    }

    fn sent(&self, method: Method, url_part: &str) -> Vec<HttpRequest> {
        requests(&self.effects)
            .into_iter()
            .filter(|r| r.method == method && r.url.contains(url_part))
            .cloned()
            .collect()
    }
}

fn frame(seq: u64, data: &str) -> String {
    format!("id: {seq}\ndata: {data}\n\n")
}

fn created(turn: &str, previous: Option<&str>) -> String {
    let previous = previous.map_or("null".to_string(), |p| format!("\"{p}\""));
    format!(
        r#"{{"type":"turn.created","id":"e-{turn}","turn_id":"{turn}","previous_turn_id":{previous},"input":[{{"type":"user.message","content":"hi"}}],"state":{{"status":"running"}},"created_at":"2026-12-01T00:00:00Z","thread_id":null}}"#
    )
}

const BASE: &str =
    r#"{"type":"model.message","id":"m1","thread_id":"main","created_at":"2026-12-01T00:00:01Z"}"#;

fn delta(text: &str) -> String {
    format!(r#"{{"type":"model.message.delta","id":"m1","thread_id":"main","content":"{text}"}}"#)
}

const RUNNING: &str = r#"{"status":"running"}"#;
const DONE: &str = r#"{"status":"done","output":null,"required_actions":[],"completed_at":"2026-12-01T00:00:09Z"}"#;

fn turn_json(turn: &str, state: &str) -> String {
    format!(
        r#"{{"data":{{"id":"{turn}","session_id":"s1","previous_turn_id":null,"state":{state},"created_at":"2026-12-01T00:00:00Z"}}}}"#
    )
}

fn send(d: &mut Driver) -> Vec<Effect> {
    d.command(Command::Send {
        input: vec![wire::InputItem::UserMessage {
            content: wire::UserContent::Text("hi".into()),
        }],
        interrupt: false,
    })
}

/// Sends t1 and streams `turn.created`, `m1` and `"He"` (frames 1–3) on its POST.
fn streaming_t1(d: &mut Driver) -> RequestId {
    let out = send(d);
    let post = request_to(&out, Method::Post, "/turns").id;
    d.open(post);
    for (seq, data) in [
        (1, created("t1", None)),
        (2, BASE.to_string()),
        (3, delta("He")),
    ] {
        d.bytes(post, &frame(seq, &data));
    }
    assert_eq!(d.text(), "He");
    post
}

/// C3: comments are liveness. A live stream that sends only `: keep-alive` every 30 s (under
/// the 45 s watchdog) for ten minutes is neither aborted nor probed; when they stop, the
/// watchdog reads the turn within one idle timeout.
#[test]
fn c3_comments_keep_a_silent_stream_from_the_idle_watchdog() {
    let mut d = Driver::new();
    let post = streaming_t1(&mut d);
    let before = d.effects.len();
    for beat in 0..20 {
        d.bytes(post, ": keep-alive\n\n");
        let out = d.wait(30_000);
        assert!(
            !out.iter().any(|e| matches!(e, Effect::Abort { .. })),
            "beat {beat}: the stream was recycled although comments arrived: {out:#?}"
        );
        assert!(
            matches!(d.s.connection_state(), ConnectionState::Live { .. }),
            "beat {beat}: {:?}",
            d.s.connection_state()
        );
    }
    assert!(
        requests(&d.effects[before..]).is_empty(),
        "no request while comments flow: {:#?}",
        &d.effects[before..]
    );
    // The comments stop: one idle timeout later the turn is read (the watchdog's probe).
    let out = d.wait(15_000);
    let out = if out.is_empty() { d.wait(1_000) } else { out };
    assert!(out.contains(&Effect::Abort { id: post }), "{out:#?}");
    request_to(&out, Method::Get, "/turns/t1");
    assert_eq!(d.text(), "He");
}

fn stored(effects: &[Effect]) -> Vec<&Checkpoint> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Storage(StorageEffect::WriteCheckpoint(c)) => Some(c),
            _ => None,
        })
        .collect()
}

/// C13: persisted `{t1, seq 40}`; the server already ended t1. The reload reads the history,
/// sees t1 done, never subscribes, shows the history's answer, clears the live marker; the
/// next send creates t2 as a plain turn (no interrupt) and nothing ever cancels t1.
#[test]
fn c13_reload_onto_a_finished_turn_settles_and_the_next_send_never_cancels_it() {
    let mut d = Driver::new();
    let out = d.command(Command::Restore {
        checkpoint: Some(Checkpoint {
            v: checkpoint::SCHEMA_VERSION,
            session_id: "s1".into(),
            turn_id: Some("t1".into()),
            seq: 40,
            saved_at: 1,
            creating: None,
        }),
    });
    let turns = r#"{"data":[{"id":"t1","session_id":"s1","previous_turn_id":null,"state":{"status":"done","output":null,"required_actions":[],"completed_at":"2026-12-01T00:00:09Z"},"created_at":"2026-12-01T00:00:00Z"}],"pagination":{}}"#;
    // The session timeline, newest first: `{turn_id, event}` items.
    let events = format!(
        r#"{{"data":[{{"turn_id":"t1","event":{{"type":"turn.done","id":"e9","thread_id":null,"state":{DONE}}}}},{{"turn_id":"t1","event":{{"type":"model.message","id":"m1","thread_id":"main","content":"final","created_at":"2026-12-01T00:00:01Z"}}}},{{"turn_id":"t1","event":{}}}],"pagination":{{}},"last_turn_id":"t1"}}"#,
        created("t1", None)
    );
    // Answer what the reload asks, in order, until it asks nothing more.
    let mut pending: Vec<HttpRequest> = requests(&out).into_iter().cloned().collect();
    let mut round_trips = 0;
    while let Some(r) = pending.first().cloned() {
        pending.remove(0);
        round_trips += 1;
        assert!(
            round_trips <= 6,
            "the reload keeps asking: {:#?}",
            d.effects
        );
        assert!(
            !r.url.contains("/subscribe"),
            "a finished turn is never subscribed to: {}",
            r.url
        );
        let body = if r.url.contains("/events") {
            events.clone()
        } else if r.url.contains("/turns?") {
            turns.to_string()
        } else if r.url.ends_with("/turns/t1") {
            turn_json("t1", DONE)
        } else {
            panic!("unexpected request {r:?}");
        };
        let out = d.respond(r.id, 200, &body);
        pending.extend(requests(&out).into_iter().cloned());
    }
    // Settled by the history's own round trips: the listing already shows t1 ended, so it is
    // neither read again nor rebuilt (that was three more requests, two round trips).
    let urls: Vec<String> = requests(&d.effects).iter().map(|r| r.url.clone()).collect();
    assert_eq!(
        urls,
        [
            "http://h/api/v1/sessions/s1/events?limit=100",
            "http://h/api/v1/sessions/s1/turns?limit=25"
        ],
        "the reload's requests"
    );
    assert!(
        matches!(
            d.s.connection_state(),
            ConnectionState::Idle { .. } | ConnectionState::Done { .. }
        ),
        "settled: {:?}",
        d.s.connection_state()
    );
    assert_eq!(d.text(), "final", "the history's answer, once");
    assert!(d.s.error().is_none(), "{:?}", d.s.error());
    // The stored `{t1, 40}` is overwritten by a record naming no turn (or removed): a later
    // reload does not follow t1 again.
    let cleared = d.effects.iter().any(|e| match e {
        Effect::Storage(StorageEffect::WriteCheckpoint(c)) => c.turn_id.is_none(),
        Effect::Storage(StorageEffect::RemoveCheckpoint { .. }) => true,
        _ => false,
    });
    assert!(cleared, "the live marker stays: {:#?}", stored(&d.effects));
    // The next send: one POST, not an interrupt, and no cancel of t1, ever.
    let out = send(&mut d);
    let post = request_to(&out, Method::Post, "/turns").clone();
    let body = post.json_body.clone().unwrap_or_default();
    assert!(!body.contains("\"interrupt\":true"), "{body}");
    d.open(post.id);
    d.bytes(post.id, &frame(1, &created("t2", Some("t1"))));
    assert_eq!(d.sent(Method::Post, "/turns").len(), 1);
    assert!(d.sent(Method::Post, "/cancel").is_empty());
    assert!(matches!(
        d.s.connection_state(),
        ConnectionState::Live {
            turn_id: Some("t2"),
            ..
        }
    ));
}

/// Follows t1 on its POST through frames 1–7 (`"He"` then `"l"` ×4, `Hellll`), then the stream
/// ends without `turn.done` and the turn still runs: the resubscribe after 7.
fn resubscribe_after_7(d: &mut Driver) -> HttpRequest {
    let post = streaming_t1(d);
    for seq in 4..=7 {
        d.bytes(post, &frame(seq, &delta("l")));
    }
    let out = d.feed(Input::End { request: post });
    let out = if requests(&out).is_empty() {
        d.wait(60_000)
    } else {
        out
    };
    let get = request_to(&out, Method::Get, "/turns/t1").id;
    let out = d.respond(get, 200, &turn_json("t1", RUNNING));
    request_to(&out, Method::Get, "/subscribe?after_sequence_number=7").clone()
}

/// Answers the header refresh among `out`, then the turn reads the engine may make first:
/// the next subscribe.
fn refresh_headers(d: &mut Driver, out: &[Effect]) -> HttpRequest {
    let refresh = out
        .iter()
        .find_map(|e| match e {
            Effect::RefreshHeaders { id } => Some(*id),
            _ => None,
        })
        .unwrap_or_else(|| panic!("a 401 asks the header provider again: {out:#?}"));
    let mut out = d.feed(Input::HeadersRefreshed {
        request: refresh,
        ok: true,
    });
    for _ in 0..3 {
        if let Some(sub) = requests(&out)
            .into_iter()
            .find(|r| r.url.contains("/subscribe"))
        {
            return sub.clone();
        }
        let Some(get) = requests(&out).first().map(|r| r.id) else {
            out = d.wait(60_000);
            continue;
        };
        out = d.respond(get, 200, &turn_json("t1", RUNNING));
    }
    panic!("no resubscribe after the header refresh: {:#?}", d.effects);
}

/// C14 (transport): 401 on a resume → the header provider once → the same cursor, in the
/// query and in `Last-Event-ID`; a second 401 stops with `auth`, and nothing is sent after it
/// however long the page waits. The text shown stays `Hellll`.
#[test]
fn c14_a_401_on_resume_refreshes_once_with_the_same_cursor_then_fails_auth() {
    let mut d = Driver::new();
    let first = resubscribe_after_7(&mut d);
    assert_eq!(first.last_event_id, Some(7));
    let out = d.respond(first.id, 401, r#"{"error":{"message":"token expired"}}"#);
    assert!(
        requests(&out).is_empty(),
        "nothing is sent before the provider answers: {out:#?}"
    );
    let second = refresh_headers(&mut d, &out);
    assert!(
        second.url.contains("after_sequence_number=7"),
        "{}",
        second.url
    );
    assert_eq!(
        second.last_event_id,
        Some(7),
        "the same cursor in the header"
    );
    let sent_before = d.effects.len();
    let out = d.respond(second.id, 401, r#"{"error":{"message":"token expired"}}"#);
    assert!(
        !out.iter()
            .any(|e| matches!(e, Effect::RefreshHeaders { .. })),
        "the provider is asked once per 401 run: {out:#?}"
    );
    for _ in 0..10 {
        d.wait(60_000);
    }
    assert!(
        requests(&d.effects[sent_before..]).is_empty(),
        "a second 401 is not retried: {:#?}",
        &d.effects[sent_before..]
    );
    let error: Option<&SessionError> = d.s.error();
    assert_eq!(error.map(|e| e.code), Some(ErrorCode::Auth), "{error:?}");
    assert_eq!(d.text(), "Hellll");
    // With a good header the retry streams on from 8: no text lost nor repeated.
    let mut d = Driver::new();
    let first = resubscribe_after_7(&mut d);
    let out = d.respond(first.id, 401, "");
    let second = refresh_headers(&mut d, &out);
    d.open(second.id);
    d.bytes(second.id, &frame(8, &delta("o")));
    assert_eq!(d.text(), "Hellllo");
    assert!(d.s.error().is_none());
}

/// C14: a 403 on a resume is never retried: `forbidden` at once, no header refresh, no request
/// after it.
#[test]
fn c14_a_403_on_resume_is_never_retried() {
    let mut d = Driver::new();
    let first = resubscribe_after_7(&mut d);
    let sent_before = d.effects.len();
    let out = d.respond(first.id, 403, r#"{"error":{"message":"forbidden"}}"#);
    assert!(!out
        .iter()
        .any(|e| matches!(e, Effect::RefreshHeaders { .. })));
    for _ in 0..10 {
        d.wait(60_000);
    }
    d.feed(Input::Online);
    assert!(
        requests(&d.effects[sent_before..]).is_empty(),
        "{:#?}",
        &d.effects[sent_before..]
    );
    assert_eq!(d.s.error().map(|e| e.code), Some(ErrorCode::Forbidden));
    assert_eq!(d.text(), "Hellll");
}
