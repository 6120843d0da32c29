//! Fault properties: a simulated TrueForge server holds one turn's frames (the recorded create
//! streams under `tests/fixtures/recorded`, parsed with the crate's parser, and generated turns)
//! and a client loop drives `resume::Connection` + `SseParser` + `SessionView` the way the web
//! crate does (`crates/forgestream-web/src/exec.rs`, `ingest.rs`): one parser per run, frames
//! applied to the view and reported to the machine chunk by chunk, commands drained after each
//! chunk, an `Abort` closes the request without touching the parser, EOF / body errors call
//! `parser.finish()`, a fetched turn is applied to the view, a rebuild applies the persisted
//! listing and then the turn.
//!
//! Proptest picks the faults per connection: a drop at a random byte offset (inside UTF-8
//! too), random chunking, LF or CRLF, heartbeats, a replay from 1 that ignores the cursor, 412
//! (rebuild from the persisted listing, which the sim derives from the frames produced so far),
//! 429/5xx with `Retry-After`, a clean end without `turn.done`, a stall (idle watchdog) and a
//! create request whose response is lost after the server created the turn.
//!
//! Asserted for every run: the connection ends `Done`; exactly one POST; the final
//! `summary()` (minus `diagnostics`) and pending actions equal the fault-free run's; at every
//! connection end each message's text is a prefix of its final text (no duplicated text); no
//! frame ever reaches the reducer malformed; persisted cursors never decrease and never pass the
//! last applied sequence number.
//!
//! Also here: the replay of `tests/fixtures/fuzz-crashes/` through the fuzz harness
//! (`fuzz/harness.rs`), so a fuzz crash becomes a regression fixture.
mod support;

#[path = "../../../fuzz/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::sync::OnceLock;

use forgestream_core::reduce::{ReducerConfig, SessionView, TurnStatus};
use forgestream_core::resume::{Command, Config, Connection, ConnectionStatus, Input, StartMode};
use forgestream_core::sse::{ParserConfig, SseItem, SseParser};
use forgestream_core::wire;
use proptest::prelude::*;
use serde_json::{json, Value};
use support::{content_summary, fixtures_dir, sse_frames};

// ---------------------------------------------------------------------------------------------
// The turn the simulated server holds.

/// One turn: its live frames (sequence number = index + 1) and its persisted listing, each
/// listing event tagged with the number of frames that must exist before it is persisted.
#[derive(Debug, Clone)]
struct SimTurn {
    name: String,
    frames: Vec<String>,
    /// (frames needed, event JSON), in listing order.
    listing: Vec<(usize, Value)>,
    running: Value,
    terminal: Value,
}

impl SimTurn {
    /// Derives the listing gates from the frames: a `model.message` is persisted once the frame
    /// carrying its `finish_reason` exists (completed messages only), any other event once its
    /// own frame exists, and events the stream never showed at the end.
    fn new(name: String, frames: Vec<String>, listing: Vec<Value>) -> SimTurn {
        let parsed: Vec<Value> = frames
            .iter()
            .map(|f| serde_json::from_str(f).expect("frame json"))
            .collect();
        let created = &parsed[0];
        assert_eq!(created["type"], "turn.created", "{name}");
        let done = parsed.last().expect("frames");
        assert_eq!(done["type"], "turn.done", "{name}");
        let turn_id = created["turn_id"].as_str().unwrap().to_string();
        let mut running = json!({
            "id": turn_id,
            "session_id": "s",
            "previous_turn_id": created["previous_turn_id"],
            "input": created["input"],
            "state": {"status": "running"},
            "created_at": created["created_at"],
        });
        if running["input"].is_null() {
            running.as_object_mut().unwrap().remove("input");
        }
        let mut terminal = running.clone();
        terminal["state"] = done["state"].clone();
        let n = frames.len();
        let gated = listing
            .into_iter()
            .map(|event| {
                let id = event["id"].as_str().unwrap_or_default();
                let is_message = event["type"] == "model.message";
                let gate = parsed
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f["id"].as_str() == Some(id))
                    .filter(|(_, f)| !is_message || !f["finish_reason"].is_null())
                    .map(|(i, _)| i + 1)
                    .next_back()
                    .unwrap_or(n);
                (gate, event)
            })
            .collect();
        SimTurn {
            name,
            frames,
            listing: gated,
            running,
            terminal,
        }
    }

    fn turn_id(&self) -> &str {
        self.running["id"].as_str().unwrap()
    }

    fn turn_json(&self, produced: usize) -> wire::Turn {
        let v = if produced >= self.frames.len() {
            &self.terminal
        } else {
            &self.running
        };
        serde_json::from_value(v.clone()).expect("turn json")
    }

    fn listing_at(&self, produced: usize) -> Vec<wire::Event> {
        self.listing
            .iter()
            .filter(|(gate, _)| *gate <= produced)
            .map(|(_, e)| serde_json::from_value(e.clone()).expect("listing event"))
            .collect()
    }
}

/// (folder, file prefix) of every recorded turn.
const RECORDED: &[(&str, &str)] = &[
    ("text", ""),
    ("readtool", ""),
    ("subagent", ""),
    ("error", ""),
    ("cancel", ""),
    ("gone412", ""),
    ("approve-allow", "turn1-"),
    ("approve-allow", "turn2-"),
    ("ask", "turn1-"),
    ("ask", "turn2-"),
];

/// A recorded turn plus the fault-free run's outcome.
struct Reference {
    turn: SimTurn,
    summary: Value,
    pending: Value,
    texts: Vec<(String, String)>,
}

fn recorded() -> &'static [Reference] {
    static CELL: OnceLock<Vec<Reference>> = OnceLock::new();
    CELL.get_or_init(|| {
        RECORDED
            .iter()
            .map(|(folder, prefix)| {
                let dir = fixtures_dir().join("recorded").join(folder);
                let bytes = std::fs::read(dir.join(format!("{prefix}create.sse"))).unwrap();
                let frames: Vec<String> = sse_frames(&bytes, &[])
                    .into_iter()
                    .enumerate()
                    .map(|(i, (seq, data))| {
                        assert_eq!(seq, Some(i as u64 + 1), "{folder}/{prefix}");
                        data
                    })
                    .collect();
                let listing: Value = serde_json::from_str(
                    &std::fs::read_to_string(dir.join(format!("{prefix}turn-events.json")))
                        .unwrap(),
                )
                .unwrap();
                let turn = SimTurn::new(
                    format!("{folder}/{prefix}"),
                    frames,
                    listing["data"].as_array().unwrap().clone(),
                );
                reference_of(turn)
            })
            .collect()
    })
}

fn reference_of(turn: SimTurn) -> Reference {
    let clean = Sim::run(&turn, &Plan::clean()).unwrap_or_else(|e| panic!("clean run: {e}"));
    let summary = content_summary(&clean.view);
    // The fault-free run equals the persisted history (listing + GET turn).
    let mut persisted = SessionView::new("s", ReducerConfig::default());
    persisted
        .apply_turn_events(turn.turn_id(), turn.listing_at(turn.frames.len()))
        .unwrap();
    persisted.apply_turn(&turn.turn_json(turn.frames.len()));
    assert_eq!(
        content_summary(&persisted),
        summary,
        "{}: persisted view differs from the live one",
        turn.name
    );
    Reference {
        pending: summary["pending"].clone(),
        texts: message_texts(&summary),
        summary,
        turn,
    }
}

/// (message id, text) of every message in the summary.
fn message_texts(summary: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for turn in summary["turns"].as_array().into_iter().flatten() {
        for item in turn["items"].as_array().into_iter().flatten() {
            if item["kind"] == "message" {
                out.push((
                    item["id"].as_str().unwrap_or_default().to_string(),
                    item["text"].as_str().unwrap_or_default().to_string(),
                ));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Generated turns: text messages with multi-byte characters, JSON escapes and markup.

const PIECES: &[&str] = &[
    "a", "é", "日本", "🚀", "👍🏽", " ", "\n", "\"q\"", "\\", "<b>", "data: x", "id: 9", ":", "\r",
    "—", "ß", "word ",
];

fn generated_turn(messages: &[Vec<Vec<usize>>]) -> SimTurn {
    let tid = "01genturn0000000000000000.local";
    let mut id_counter = 0u32;
    let mut next_id = || {
        id_counter += 1;
        format!("01m9gen{id_counter:019}")
    };
    let created = json!({
        "type": "turn.created", "id": next_id(), "turn_id": tid, "previous_turn_id": null,
        "input": [{"type": "user.message", "content": "generate"}],
        "state": {"status": "running"}, "created_at": "2026-11-30T00:00:00.000Z", "thread_id": null,
    });
    let mut frames = vec![created.to_string()];
    let mut listing = vec![created];
    let mut last_merged = Value::Null;
    for (m, pieces) in messages.iter().enumerate() {
        let id = next_id();
        let at = format!("2026-11-30T00:00:0{}.000Z", m % 10);
        frames.push(
            json!({"type": "model.message", "thread_id": "main", "created_at": at, "id": id})
                .to_string(),
        );
        let mut text = String::new();
        for (k, piece) in pieces.iter().enumerate() {
            let chunk: String = piece.iter().map(|&p| PIECES[p % PIECES.len()]).collect();
            text.push_str(&chunk);
            let mut delta = json!({"content": chunk, "type": "model.message.delta", "id": id,
                                   "thread_id": "main"});
            if k == 0 {
                delta["created_at"] = json!(at);
            }
            frames.push(delta.to_string());
        }
        let usage = json!({"input_tokens": 10 + m, "output_tokens": pieces.len(),
                           "cache_read_tokens": 0});
        frames.push(
            json!({"type": "model.message.delta", "id": id, "thread_id": "main",
                   "finish_reason": "stop", "usage": usage})
            .to_string(),
        );
        let merged = json!({"content": text, "type": "model.message", "id": id, "created_at": at,
                            "thread_id": "main", "finish_reason": "stop", "usage": usage});
        listing.push(merged.clone());
        last_merged = merged;
    }
    let done = json!({
        "type": "turn.done", "id": next_id(), "created_at": "2026-11-30T00:00:09.000Z",
        "state": {"status": "done", "output": last_merged, "required_actions": [],
                  "completed_at": "2026-11-30T00:00:09.000Z"},
        "thread_id": null,
    });
    frames.push(done.to_string());
    listing.push(done);
    SimTurn::new("generated".into(), frames, listing)
}

// ---------------------------------------------------------------------------------------------
// Fault plans.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fault {
    /// The request behaves.
    Ok,
    /// The body errors after `at` ‰ of its bytes (a network error, not EOF).
    Drop { at: u16 },
    /// The body ends cleanly after `at` ‰ of its bytes, without `turn.done` (subscribe timeout,
    /// or a proxy closing mid-frame).
    EndEarly { at: u16 },
    /// The body goes silent after `at` ‰ of its bytes and stays open (idle watchdog).
    Stall { at: u16 },
    /// Subscribe answers 412 (the live stream expired). Other requests behave.
    Gone412,
    /// Any request but the create POST answers `code` (429/5xx) before any byte.
    Status {
        code: u16,
        retry_after_s: Option<u8>,
    },
    /// The create POST reached the server (the turn exists) but its response was lost.
    PostLost,
}

#[derive(Debug, Clone)]
struct ConnPlan {
    fault: Fault,
    ignore_cursor: bool,
    heartbeats: bool,
    crlf: bool,
    retry_field: bool,
    max_chunk: usize,
    chunk_seed: u64,
    /// Frames the server produces beyond what a faulted stream delivered.
    extra_produced: usize,
}

impl ConnPlan {
    fn ok() -> ConnPlan {
        ConnPlan {
            fault: Fault::Ok,
            ignore_cursor: false,
            heartbeats: false,
            crlf: false,
            retry_field: false,
            max_chunk: 1 << 20,
            chunk_seed: 0,
            extra_produced: 0,
        }
    }
}

#[derive(Debug, Clone)]
struct Plan {
    conns: Vec<ConnPlan>,
    jitter_seed: u64,
}

impl Plan {
    fn clean() -> Plan {
        Plan {
            conns: Vec::new(),
            jitter_seed: 1,
        }
    }
}

fn fault() -> impl Strategy<Value = Fault> {
    prop_oneof![
        2 => Just(Fault::Ok),
        6 => (0u16..1000).prop_map(|at| Fault::Drop { at }),
        3 => (0u16..1000).prop_map(|at| Fault::EndEarly { at }),
        2 => (0u16..1000).prop_map(|at| Fault::Stall { at }),
        2 => Just(Fault::Gone412),
        2 => (
            prop_oneof![Just(429u16), Just(500), Just(502), Just(503), Just(504)],
            prop::option::of(0u8..5)
        )
            .prop_map(|(code, retry_after_s)| Fault::Status { code, retry_after_s }),
        1 => Just(Fault::PostLost),
    ]
}

fn conn_plan() -> impl Strategy<Value = ConnPlan> {
    (
        fault(),
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.1),
        prop_oneof![1usize..8, 8usize..64, Just(1usize << 20)],
        any::<u64>(),
        0usize..30,
    )
        .prop_map(
            |(
                fault,
                ignore_cursor,
                heartbeats,
                crlf,
                retry_field,
                max_chunk,
                chunk_seed,
                extra,
            )| {
                ConnPlan {
                    fault,
                    ignore_cursor,
                    heartbeats,
                    crlf,
                    retry_field,
                    max_chunk,
                    chunk_seed,
                    extra_produced: extra,
                }
            },
        )
}

fn plan() -> impl Strategy<Value = Plan> {
    (prop::collection::vec(conn_plan(), 0..8), any::<u64>())
        .prop_map(|(conns, jitter_seed)| Plan { conns, jitter_seed })
}

// ---------------------------------------------------------------------------------------------
// The client loop.

/// A request the machine asked for, waiting to be carried out.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Request {
    Post,
    Subscribe(u64),
    GetTurn,
    Rebuild,
    Lookup,
}

struct Sim<'a> {
    turn: &'a SimTurn,
    plan: &'a Plan,
    next_conn: usize,
    conn: Connection,
    parser: SseParser,
    view: SessionView,
    /// Known to the client (from `turn.created` or the lookup).
    turn_id: Option<String>,
    now: u64,
    /// Identity of the open request; `Abort` and every new request bump it (exec.rs).
    request_id: u64,
    pending: Option<Request>,
    refresh_wanted: bool,
    /// Server state.
    produced: usize,
    posts: u32,
    persisted: Option<u64>,
    cleared: bool,
    errors: Vec<String>,
    log: Vec<String>,
    reference_texts: Option<&'a [(String, String)]>,
    failed: Option<String>,
}

/// What the sim observed, for the assertions.
struct Outcome {
    view: SessionView,
}

/// splitmix64, for chunk sizes.
fn next_rand(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<'a> Sim<'a> {
    fn run(turn: &'a SimTurn, plan: &'a Plan) -> Result<Outcome, String> {
        Self::run_checked(turn, plan, None)
    }

    fn run_checked(
        turn: &'a SimTurn,
        plan: &'a Plan,
        reference_texts: Option<&'a [(String, String)]>,
    ) -> Result<Outcome, String> {
        let config = Config {
            jitter_seed: plan.jitter_seed,
            ..Config::default()
        };
        let mut sim = Sim {
            turn,
            plan,
            next_conn: 0,
            conn: Connection::new(config),
            parser: SseParser::new(ParserConfig::default()),
            view: SessionView::new("s", ReducerConfig::default()),
            turn_id: None,
            now: 1_000,
            request_id: 0,
            pending: None,
            refresh_wanted: false,
            produced: 0,
            posts: 0,
            persisted: None,
            cleared: false,
            errors: Vec::new(),
            log: Vec::new(),
            reference_texts,
            failed: None,
        };
        sim.conn.handle(
            Input::Start {
                mode: StartMode::CreateTurn,
            },
            sim.now,
        );
        sim.drain();
        // Bounded: each iteration carries out one request or one timer.
        for _ in 0..500 {
            if let Some(e) = sim.failed.take() {
                return Err(sim.explain(&e));
            }
            if sim.conn.is_finished() {
                break;
            }
            if let Some(request) = sim.pending.take() {
                sim.now += 1;
                sim.execute(request);
            } else if sim.refresh_wanted {
                sim.refresh_wanted = false;
                sim.now += 1;
                sim.conn.handle(Input::Refresh, sim.now);
                sim.drain();
            } else {
                let Some(deadline) = sim.conn.poll_timeout() else {
                    return Err(sim.explain("stuck: no request, no timer"));
                };
                sim.now = sim.now.max(deadline);
                sim.log.push(format!("tick@{}", sim.now));
                sim.conn.handle(Input::Tick, sim.now);
                sim.drain();
            }
        }
        if let Some(e) = sim.failed.take() {
            return Err(sim.explain(&e));
        }
        if sim.conn.status() != Some(&ConnectionStatus::Done) {
            return Err(sim.explain(&format!("ended {:?}", sim.conn.status())));
        }
        if sim.posts != 1 {
            return Err(sim.explain(&format!("{} POSTs", sim.posts)));
        }
        if !sim.cleared {
            return Err(sim.explain("the checkpoint was never cleared"));
        }
        if !sim.errors.is_empty() {
            return Err(sim.explain(&format!("reducer/parser errors: {:?}", sim.errors)));
        }
        Ok(Outcome { view: sim.view })
    }

    fn explain(&self, what: &str) -> String {
        format!(
            "{}: {what}\nplan: {:?}\nlog: {}",
            self.turn.name,
            self.plan,
            self.log.join(" | ")
        )
    }

    fn next_plan(&mut self) -> ConnPlan {
        let p = self
            .plan
            .conns
            .get(self.next_conn)
            .cloned()
            .unwrap_or_else(ConnPlan::ok);
        self.next_conn += 1;
        p
    }

    /// Carries out every queued command (`exec::pump`).
    fn drain(&mut self) {
        while let Some(command) = self.conn.poll_command() {
            match command {
                Command::PostTurn => {
                    self.posts += 1;
                    self.open(Request::Post);
                }
                Command::Subscribe { after } => self.open(Request::Subscribe(after)),
                Command::GetTurn => self.open(Request::GetTurn),
                Command::Rebuild => self.open(Request::Rebuild),
                Command::LookupNewestTurn => self.open(Request::Lookup),
                Command::RefreshHeaders => {
                    self.conn.handle(Input::HeadersRefreshed, self.now);
                }
                Command::Abort => {
                    // exec.rs: close the request, end the parser's connection (an unterminated
                    // frame of the aborted stream must not prefix the next one), bump the id.
                    self.request_id += 1;
                    self.pending = None;
                    self.parser.finish();
                }
                Command::PostCancel => self.fail("PostCancel without a cancel".into()),
                Command::Persist { after } => {
                    if self.persisted.is_some_and(|p| after < p) {
                        self.fail(format!("persisted cursor went back to {after}"));
                    }
                    let applied = self
                        .turn_id
                        .as_deref()
                        .and_then(|t| self.view.last_sequence_number(t));
                    if !matches!(applied, Some(a) if after <= a) {
                        self.fail(format!("persisted {after} beyond applied {applied:?}"));
                    }
                    self.persisted = Some(after);
                }
                Command::ClearPersisted => self.cleared = true,
                Command::Status(status) => {
                    self.log.push(format!("{status:?}"));
                    match status {
                        ConnectionStatus::LiveUnavailable => self.refresh_wanted = true,
                        ConnectionStatus::Failed(e) => self.fail(format!("failed: {e:?}")),
                        _ => {}
                    }
                }
            }
        }
    }

    fn fail(&mut self, what: String) {
        self.failed.get_or_insert(what);
    }

    /// `open_request`: a new request closes the previous one.
    fn open(&mut self, request: Request) {
        self.parser.finish();
        self.request_id += 1;
        self.pending = Some(request);
    }

    fn execute(&mut self, request: Request) {
        let plan = self.next_plan();
        self.log.push(format!("{request:?} {:?}", plan.fault));
        let n = self.turn.frames.len();
        match request {
            Request::Post => {
                if plan.fault == Fault::PostLost {
                    self.produced = self.produced.max((1 + plan.extra_produced).min(n));
                    self.conn.handle(Input::NetworkError, self.now);
                    self.drain();
                } else {
                    self.produced = self.produced.max(1);
                    self.stream(0, &plan);
                }
            }
            Request::Subscribe(after) => match plan.fault {
                Fault::Gone412 => self.status(412, None),
                Fault::Status {
                    code,
                    retry_after_s,
                } => self.status(code, retry_after_s),
                _ => {
                    let start = if plan.ignore_cursor {
                        0
                    } else {
                        after as usize
                    };
                    self.stream(start.min(n), &plan);
                }
            },
            Request::GetTurn => {
                let input = match plan.fault {
                    Fault::Status {
                        code,
                        retry_after_s,
                    } => Input::TurnFetchFailed {
                        status: Some(code),
                        retry_after_ms: retry_after_s.map(|s| u64::from(s) * 1000),
                    },
                    _ => {
                        let turn = self.turn.turn_json(self.produced);
                        self.view.apply_turn(&turn);
                        Input::TurnFetched {
                            terminal: turn.state.is_terminal(),
                        }
                    }
                };
                self.conn.handle(input, self.now);
                self.drain();
            }
            Request::Rebuild => {
                let input = match plan.fault {
                    Fault::Status {
                        code,
                        retry_after_s,
                    } => Input::RebuildFailed {
                        status: Some(code),
                        retry_after_ms: retry_after_s.map(|s| u64::from(s) * 1000),
                    },
                    _ => {
                        let tid = self.turn.turn_id().to_string();
                        // exec.rs::rebuild_turn: the turn's state first, then its events; the
                        // turn goes on between the two requests and may finish in between.
                        let turn = self.turn.turn_json(self.produced);
                        self.produced = (self.produced + plan.extra_produced).min(n);
                        let listing = self.turn.listing_at(self.produced);
                        let listed_done = listing
                            .iter()
                            .any(|e| matches!(e, wire::Event::TurnDone(_)));
                        if let Err(e) = self.view.apply_turn_events(&tid, listing) {
                            self.errors.push(format!("rebuild: {e}"));
                        }
                        self.view.apply_turn(&turn);
                        let terminal = turn.state.is_terminal() || listed_done;
                        Input::RebuildDone { terminal }
                    }
                };
                self.conn.handle(input, self.now);
                self.drain();
            }
            Request::Lookup => {
                let input = match plan.fault {
                    Fault::Status {
                        code,
                        retry_after_s,
                    } => Input::TurnLookupFailed {
                        status: Some(code),
                        retry_after_ms: retry_after_s.map(|s| u64::from(s) * 1000),
                    },
                    _ if self.produced > 0 => {
                        self.turn_id = Some(self.turn.turn_id().to_string());
                        let turn = self.turn.turn_json(self.produced);
                        self.view.apply_turn(&turn);
                        Input::TurnLookup { found_ours: true }
                    }
                    _ => Input::TurnLookup { found_ours: false },
                };
                self.conn.handle(input, self.now);
                self.drain();
            }
        }
    }

    fn status(&mut self, status: u16, retry_after_s: Option<u8>) {
        self.conn.handle(
            Input::ResponseHeaders {
                status,
                retry_after_ms: retry_after_s.map(|s| u64::from(s) * 1000),
            },
            self.now,
        );
        self.drain();
    }

    /// The body of a live stream from frame index `start`, with the plan's faults.
    fn stream(&mut self, start: usize, plan: &ConnPlan) {
        let request_id = self.request_id;
        self.conn.handle(
            Input::ResponseHeaders {
                status: 200,
                retry_after_ms: None,
            },
            self.now,
        );
        self.drain();
        let eol = if plan.crlf { "\r\n" } else { "\n" };
        let mut body = Vec::new();
        // frame_end[i] = byte offset after frame start + i.
        let mut frame_end = Vec::new();
        if plan.retry_field {
            body.extend_from_slice(format!("retry: 300{eol}{eol}").as_bytes());
        }
        for (i, data) in self.turn.frames.iter().enumerate().skip(start) {
            if plan.heartbeats && i % 3 == 0 {
                body.extend_from_slice(format!(": heartbeat{eol}{eol}").as_bytes());
            }
            body.extend_from_slice(format!("data: {data}{eol}id: {}{eol}{eol}", i + 1).as_bytes());
            frame_end.push(body.len());
        }
        let n = self.turn.frames.len();
        let cut_at = |permille: u16| body.len() * usize::from(permille) / 1000;
        let (cut, ending) = match plan.fault {
            Fault::Drop { at } => (cut_at(at), Input::NetworkError),
            Fault::EndEarly { at } => (cut_at(at), Input::Eof),
            Fault::Stall { at } => (cut_at(at), Input::Tick),
            _ if start >= n && !plan.ignore_cursor => (0, Input::Tick),
            _ => (body.len(), Input::Eof),
        };
        // The server produced at least what this connection delivered.
        let delivered = frame_end.iter().take_while(|&&e| e <= cut).count();
        if cut < body.len() {
            self.produced = self
                .produced
                .max((start + delivered + plan.extra_produced).min(n));
        } else {
            self.produced = n;
        }
        let mut rng = plan.chunk_seed;
        let mut offset = 0;
        let mut items = Vec::new();
        while offset < cut {
            if self.request_id != request_id {
                // Aborted (turn.done, or a new request): the reader stops.
                return;
            }
            let size = 1 + (next_rand(&mut rng) as usize % plan.max_chunk);
            let end = (offset + size).min(cut);
            self.now += next_rand(&mut rng) % 40;
            items.clear();
            if let Err(e) = self.parser.feed(&body[offset..end], &mut items) {
                self.errors.push(format!("parser: {e}"));
            }
            for item in items.drain(..) {
                self.apply_item(item);
            }
            self.drain();
            offset = end;
        }
        if self.request_id != request_id {
            return;
        }
        self.check_no_duplicated_text();
        if ending == Input::Tick {
            // Silent and open: only the idle watchdog can end it.
            return;
        }
        self.parser.finish();
        self.conn.handle(ending, self.now);
        self.drain();
    }

    /// `ingest::apply_item`.
    fn apply_item(&mut self, item: SseItem) {
        match item {
            SseItem::Event(event) => {
                let seq = event
                    .id
                    .as_deref()
                    .and_then(|id| id.trim().parse::<u64>().ok());
                self.apply_frame(seq, &event.data);
            }
            SseItem::Comment => self.conn.handle(Input::Comment, self.now),
            SseItem::Retry(ms) => self.conn.handle(Input::Retry(ms), self.now),
        }
    }

    /// `ingest::apply_frame`.
    fn apply_frame(&mut self, seq: Option<u64>, data: &str) {
        if data.is_empty() {
            return;
        }
        let turn_id = match &self.turn_id {
            Some(id) => id.clone(),
            None => match wire::Event::from_json(data) {
                Ok(wire::Event::TurnCreated(created)) => {
                    self.turn_id = Some(created.turn_id.clone());
                    created.turn_id
                }
                _ => {
                    self.errors.push(format!(
                        "create stream did not start with turn.created: {data}"
                    ));
                    return;
                }
            },
        };
        let turn_done = match self.view.apply_live(&turn_id, seq, data) {
            Ok(_) => self
                .view
                .turn(&turn_id)
                .is_some_and(|t| t.status != TurnStatus::Running),
            Err(e) => {
                self.errors.push(format!("seq {seq:?}: {e}"));
                false
            }
        };
        self.conn.handle(
            Input::Event {
                sequence_number: seq,
                turn_done,
            },
            self.now,
        );
    }

    /// Every message's text so far is a prefix of its final text: nothing doubled, nothing
    /// out of order.
    fn check_no_duplicated_text(&mut self) {
        let Some(reference) = self.reference_texts else {
            return;
        };
        for (id, text) in message_texts(&self.view.summary()) {
            let Some((_, full)) = reference.iter().find(|(rid, _)| *rid == id) else {
                // A message the final view drops (error/cancelled turns drop unfinished ones).
                continue;
            };
            if !full.starts_with(&text) {
                self.fail(format!(
                    "message {id}: {text:?} is not a prefix of {full:?}"
                ));
            }
        }
    }
}

fn check(reference: &Reference, plan: &Plan) -> Result<(), TestCaseError> {
    let outcome = Sim::run_checked(&reference.turn, plan, Some(&reference.texts))
        .map_err(TestCaseError::fail)?;
    let summary = content_summary(&outcome.view);
    prop_assert_eq!(
        &summary["pending"],
        &reference.pending,
        "{}: pending actions differ; plan {:?}",
        reference.turn.name,
        plan
    );
    prop_assert_eq!(
        &summary,
        &reference.summary,
        "{}: final view differs; plan {:?}",
        reference.turn.name,
        plan
    );
    Ok(())
}

// Case counts: 8,000 over the recorded turns + 2,000 generated turns = 10,000 per `cargo test`.
proptest! {
    #![proptest_config(ProptestConfig { cases: 8_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn recorded_turns_survive_any_fault_plan(index in 0usize..RECORDED.len(), plan in plan()) {
        check(&recorded()[index], &plan)?;
    }
}

fn generated_messages() -> impl Strategy<Value = Vec<Vec<Vec<usize>>>> {
    prop::collection::vec(
        prop::collection::vec(prop::collection::vec(0usize..64, 1..6), 1..12),
        1..4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_turns_survive_any_fault_plan(messages in generated_messages(), plan in plan()) {
        let reference = reference_of(generated_turn(&messages));
        check(&reference, &plan)?;
    }
}

/// The clean run of every recorded turn equals its persisted history, and a plan where every
/// connection drops right after the headers still converges (the sim itself is sane).
#[test]
fn the_simulation_reproduces_the_recorded_history() {
    for reference in recorded() {
        let stubborn = Plan {
            conns: vec![
                ConnPlan {
                    fault: Fault::Drop { at: 0 },
                    ..ConnPlan::ok()
                };
                6
            ],
            jitter_seed: 3,
        };
        check(reference, &stubborn).unwrap();
        let expect_text = !["error/", "cancel/"].contains(&reference.turn.name.as_str());
        assert_eq!(
            !reference.texts.is_empty(),
            expect_text,
            "{}",
            reference.turn.name
        );
    }
}

/// Divergence 1 of RELIABILITY.md, pinned: the create stream stalls in the middle of its first
/// frame, the idle watchdog aborts it, the next stream must start clean.
#[test]
fn an_aborted_partial_frame_does_not_corrupt_the_next_stream() {
    let plan = Plan {
        conns: vec![ConnPlan {
            fault: Fault::Stall { at: 6 },
            max_chunk: 1,
            ..ConnPlan::ok()
        }],
        jitter_seed: 0,
    };
    for reference in recorded() {
        check(reference, &plan).unwrap();
    }
}

/// Divergence 2 of RELIABILITY.md, pinned: the create stream drops, the subscribe gets 412, and
/// the turn finishes between the rebuild's two requests; the view must still be complete.
#[test]
fn a_turn_finishing_during_a_rebuild_is_not_settled_incomplete() {
    let plan = Plan {
        conns: vec![
            ConnPlan {
                fault: Fault::Drop { at: 300 },
                ..ConnPlan::ok()
            },
            ConnPlan::ok(),
            ConnPlan {
                fault: Fault::Gone412,
                ..ConnPlan::ok()
            },
            ConnPlan {
                extra_produced: 1_000,
                ..ConnPlan::ok()
            },
        ],
        jitter_seed: 0,
    };
    for reference in recorded() {
        check(reference, &plan).unwrap();
    }
}

/// Every input saved by `scripts/fuzz` under `tests/fixtures/fuzz-crashes/<target>-*` replays
/// through the fuzz harness without a panic.
#[test]
fn fuzz_crash_fixtures_replay_cleanly() {
    let dir = fixtures_dir().join("fuzz-crashes");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut replayed = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with('.') || name.ends_with(".md") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        let target = name.split('-').next().unwrap_or_default();
        match target {
            "sse" => harness::sse(&data),
            "reduce" => harness::reduce(&data),
            "resume" => harness::resume(&data),
            other => panic!("{name}: unknown fuzz target {other:?}"),
        }
        replayed += 1;
    }
    eprintln!("replayed {replayed} fuzz crash fixtures");
}
