//! Plays a scenario for one turn: plans each step into events (running tools as it goes),
//! streams them into the turn's live buffer with pacing, persists merged events, and ends the
//! turn with exactly one `turn.done` (PROTOCOL.md §5 "Typical order in one step", §6).

use crate::clock::{now_iso, TurnRng};
use crate::continuation::{Decision, TurnInput};
use crate::event::{Event, EventBody, Message};
use crate::live::LiveTurn;
use crate::runtime::{Crash, Runtime, TurnControl};
use crate::scenario::{
    render, render_value, Call, Compiled, Gate, ResultSpec, Say, Step, Subagents,
};
use crate::store::PendingItem;
use crate::tools;
use crate::wire::{self, Totals};
use serde_json::{json, Map, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use tokio::time::{sleep, sleep_until, Duration, Instant};

/// Where a planned event is persisted.
enum Persist {
    /// Live only (placeholders, deltas).
    No,
    /// Stored as streamed.
    AsIs,
    /// Completes a message: store this merged `model.message` at its placeholder's position.
    Merged(Box<Event>),
}

/// One planned emission.
struct Item {
    event: Event,
    /// Set `created_at` when emitted (placeholders, first deltas, standalone events).
    stamp: bool,
    /// Starts a new unit; a turn frozen by a newer turn stops before the next boundary.
    boundary: bool,
    persist: Persist,
    /// Wait this long (µs) after the previous emission's due time before emitting. The player
    /// keeps an absolute schedule (see `Player::due`), so sub-millisecond paces are honoured on
    /// average even though timers tick in whole milliseconds and overshoot.
    delay_us: u64,
    /// Collect into `required_actions` once emitted.
    required: bool,
}

impl Item {
    fn standalone(event: Event) -> Self {
        Item {
            event,
            stamp: true,
            boundary: true,
            persist: Persist::AsIs,
            delay_us: 0,
            required: false,
        }
    }
}

/// How a step ends.
enum StepEnd {
    Next,
    Pause(Vec<PendingItem>),
    Fail(String),
}

struct Planner<'a> {
    rt: &'a Runtime,
    scenario: &'a Compiled,
    rng: TurnRng,
    vars: Map<String, Value>,
    /// Pause between deltas, µs.
    pace_us: u64,
    /// Synthetic tokens of the conversation each thread's model sees so far (its
    /// `input_tokens_breakdown.messages`): input, earlier model messages, tool results.
    context: HashMap<String, u64>,
    /// See [`TurnJob::origin`].
    origin: Option<String>,
}

/// The variable that carries the main thread's conversation size (synthetic tokens) to the
/// next turn of the chain, so later turns' model calls see the earlier ones.
pub const CONTEXT_VAR: &str = "context_tokens";

/// Harness prompt sizes (tokens) of the recorded runs: an agent without MCP servers, one with
/// them (their tool instructions are part of the harness), and a subagent.
const HARNESS_PLAIN: u64 = 1288;
const HARNESS_MCP: u64 = 1844;
const HARNESS_SUBAGENT: u64 = 793;

impl Planner<'_> {
    fn id(&self) -> String {
        self.rt.ids.next()
    }

    /// The conversation of `thread` grows by `tokens`.
    fn grow(&mut self, thread: &str, tokens: u64) {
        *self.context.entry(thread.to_owned()).or_default() += tokens;
    }

    /// What the model is sent for the next call on `thread`.
    fn breakdown(&self, thread: &str) -> wire::Breakdown {
        let scenario = &self.scenario.scenario;
        let main = thread == "main";
        wire::Breakdown {
            harness: match (main, scenario.mcp_servers.is_empty()) {
                (false, _) => HARNESS_SUBAGENT,
                (true, true) => HARNESS_PLAIN,
                (true, false) => HARNESS_MCP,
            },
            skills: 0,
            // The agent's description stands in for its instructions; a subagent's brief is
            // its input (a message).
            instructions: if main {
                wire::estimate_tokens(&scenario.description)
            } else {
                0
            },
            tool_definitions: self.tool_definitions(),
            messages: self.context.get(thread).copied().unwrap_or(0),
        }
    }

    fn tool_definitions(&self) -> u64 {
        if self.scenario.scenario.mcp_servers.is_empty() {
            0
        } else {
            153
        }
    }

    fn tool_info(&self, tool: &str, server: Option<&str>) -> Value {
        match server {
            Some(id) => {
                let name = self
                    .scenario
                    .scenario
                    .mcp_servers
                    .iter()
                    .find(|s| s.id == id)
                    .map(|s| s.name.clone())
                    .unwrap_or_else(|| id.to_owned());
                json!({"type": "mcp", "name": tool, "server_id": id, "server_name": name})
            }
            None => json!({"type": "truefoundry-system", "name": tool}),
        }
    }

    /// A placeholder, content deltas, tool-call deltas and the final finish delta — plus the
    /// merged message they add up to (same id), persisted on the final delta.
    fn message(
        &mut self,
        thread: &str,
        text: &str,
        calls: &[(String, String, String, Value)],
        chunk_chars: usize,
    ) -> (Vec<Item>, Event) {
        let id = self.id();
        let delta = |message: Message| {
            Event::new(
                id.clone(),
                None,
                Some(thread),
                EventBody::ModelMessageDelta(message),
            )
        };
        let mut items = vec![Item {
            event: Event::new(
                id.clone(),
                None,
                Some(thread),
                EventBody::ModelMessage(Message::default()),
            ),
            stamp: true,
            boundary: true,
            persist: Persist::No,
            delay_us: self.pace_us,
            required: false,
        }];
        let mut deltas: Vec<Event> = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(chunk_chars.max(1)) {
            deltas.push(delta(Message {
                content: Some(chunk.iter().collect()),
                ..Message::default()
            }));
        }
        for (index, (call_id, name, arguments, tool_info)) in calls.iter().enumerate() {
            deltas.push(delta(Message {
                tool_calls: Some(json!([{
                    "index": index, "id": call_id, "type": "function",
                    "function": {"name": name, "arguments": ""}, "tool_info": tool_info
                }])),
                ..Message::default()
            }));
            let arg_chars: Vec<char> = arguments.chars().collect();
            for piece in arg_chars.chunks(10) {
                deltas.push(delta(Message {
                    tool_calls: Some(json!([{
                        "index": index, "function": {"arguments": piece.iter().collect::<String>()}
                    }])),
                    ..Message::default()
                }));
            }
        }
        // Output: what the model wrote (text, call names, argument text); the message joins the
        // thread's conversation for its next call.
        let written = wire::estimate_tokens(text)
            + calls
                .iter()
                .map(|(_, name, arguments, _)| {
                    wire::estimate_tokens(name) + wire::estimate_tokens(arguments)
                })
                .sum::<u64>();
        let output_tokens = written.max(1);
        let breakdown = self.breakdown(thread);
        self.grow(thread, output_tokens);
        let finish_reason = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        let usage = wire::usage(&breakdown, output_tokens);
        let last = delta(Message {
            finish_reason: Some(finish_reason.into()),
            usage: Some(usage.clone()),
            ..Message::default()
        });
        let merged_calls = (!calls.is_empty()).then(|| {
            Value::Array(
                calls
                    .iter()
                    .map(|(call_id, name, arguments, tool_info)| {
                        json!({"id": call_id, "type": "function",
                               "function": {"name": name, "arguments": arguments}, "tool_info": tool_info})
                    })
                    .collect(),
            )
        });
        let merged = Event::new(
            id.clone(),
            None,
            Some(thread),
            EventBody::ModelMessage(Message {
                content: (!text.is_empty()).then(|| text.to_owned()),
                tool_calls: merged_calls,
                finish_reason: Some(finish_reason.into()),
                usage: Some(usage),
            }),
        );
        for (i, delta) in deltas.into_iter().enumerate() {
            items.push(Item {
                event: delta,
                stamp: i == 0,
                boundary: false,
                persist: Persist::No,
                delay_us: self.pace_us,
                required: false,
            });
        }
        items.push(Item {
            event: last,
            stamp: items.len() == 1,
            boundary: false,
            persist: Persist::Merged(Box::new(merged.clone())),
            delay_us: self.pace_us,
            required: false,
        });
        (items, merged)
    }

    fn say(&mut self, thread: &str, say: &Say) -> (Vec<Item>, Event) {
        let mut text = say
            .text
            .as_deref()
            .map(|t| render(t, &self.vars))
            .unwrap_or_default();
        if let Some(generate) = &say.generate {
            let words = match render_value(&generate.words, &self.vars) {
                Value::Number(n) => n.as_f64().map(|f| f.max(0.0) as u64).unwrap_or(300),
                Value::String(s) => s.trim().parse().unwrap_or(300),
                _ => 300,
            };
            text.push_str(&prose(&mut self.rng, words.min(1_000_000) as usize));
        }
        self.message(thread, &text, &[], say.chunk_chars.unwrap_or(12))
    }

    /// A `tool.response`; its content joins the thread's conversation.
    fn tool_response(&mut self, thread: &str, tool_call_id: &str, content: String) -> Item {
        self.grow(thread, wire::estimate_tokens(&content));
        Item::standalone(Event::new(
            self.id(),
            None,
            Some(thread),
            EventBody::ToolResponse {
                tool_call_id: tool_call_id.to_owned(),
                content,
            },
        ))
    }

    /// Runs a call now and records `result` / `result.<field>` variables.
    fn execute(&mut self, tool_call_id: &str, spec: &ResultSpec, arguments: &Value) -> String {
        let content = tools::run(&self.rt.store, tool_call_id, spec, arguments, &self.vars);
        self.vars
            .insert("result".into(), Value::String(content.clone()));
        if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(&content) {
            for (key, value) in fields {
                self.vars.insert(format!("result.{key}"), value);
            }
        }
        content
    }

    fn call(&mut self, thread: &str, call: &Call) -> (Vec<Item>, StepEnd) {
        let text = call
            .text
            .as_deref()
            .map(|t| render(t, &self.vars))
            .unwrap_or_default();
        let mut wire_calls = Vec::new();
        let mut specs = Vec::new();
        for spec in &call.calls {
            let id = self.rng.tool_call_id();
            let arguments = render_value(&spec.arguments, &self.vars);
            let arguments = if arguments.is_null() {
                json!({})
            } else {
                arguments
            };
            wire_calls.push((
                id.clone(),
                spec.tool.clone(),
                tools::arguments_text(&arguments),
                self.tool_info(&spec.tool, spec.server.as_deref()),
            ));
            specs.push((id, arguments, spec));
        }
        let (mut items, merged) = self.message(thread, &text, &wire_calls, 12);
        let mut pending = Vec::new();
        for (id, arguments, spec) in &specs {
            match spec.gate {
                Gate::None => {
                    let result = spec.result.clone().unwrap_or_default();
                    let content = self.execute(id, &result, arguments);
                    items.push(self.tool_response(thread, id, content));
                }
                gate => pending.push(PendingItem {
                    kind: if gate == Gate::Approval {
                        "approval"
                    } else {
                        "response"
                    }
                    .into(),
                    thread_id: Some(thread.to_owned()),
                    tool_call_id: Some(id.clone()),
                    tool: Some(spec.tool.clone()),
                    arguments: Some(arguments.clone()),
                    result: spec
                        .result
                        .as_ref()
                        .and_then(|r| serde_json::to_value(r).ok()),
                }),
            }
        }
        if pending.is_empty() {
            return (items, StepEnd::Next);
        }
        // Response-required first, then approval-required, then the thread stops (§5).
        for kind in ["response", "approval"] {
            let refs: Vec<Value> = pending
                .iter()
                .filter(|p| p.kind == kind)
                .map(|p| json!({"id": p.tool_call_id, "source_event_id": merged.id}))
                .collect();
            if refs.is_empty() {
                continue;
            }
            let tool_calls = Value::Array(refs);
            let body = if kind == "approval" {
                EventBody::ToolApprovalRequired { tool_calls }
            } else {
                EventBody::ToolResponseRequired { tool_calls }
            };
            let mut item = Item::standalone(Event::new(self.id(), None, Some(thread), body));
            item.required = true;
            items.push(item);
        }
        (items, StepEnd::Pause(pending))
    }

    fn thread_steps(&mut self, thread: &str, steps: &[Step]) -> (Vec<Item>, Option<Event>) {
        let mut items = Vec::new();
        let mut last_message = None;
        for step in steps {
            match step {
                Step::Say(say) => {
                    let (mut planned, merged) = self.say(thread, say);
                    items.append(&mut planned);
                    last_message = Some(merged);
                }
                Step::Call(call) => {
                    let (mut planned, _) = self.call(thread, call);
                    items.append(&mut planned);
                }
                Step::Sleep(ms) => {
                    if let Some(next) = items.last_mut() {
                        next.delay_us += ms.saturating_mul(1000);
                    }
                }
                // Refused for subagents when the scenario is compiled.
                Step::Subagents(_) | Step::Error(_) | Step::McpAuth(_) => {}
            }
        }
        (items, last_message)
    }

    fn subagents(&mut self, step: &Subagents) -> Vec<Item> {
        let text = step
            .text
            .as_deref()
            .map(|t| render(t, &self.vars))
            .unwrap_or_default();
        let mut wire_calls = Vec::new();
        let mut children = Vec::new();
        for agent in &step.agents {
            let id = self.rng.tool_call_id();
            let input = render(&agent.input, &self.vars);
            let arguments = json!({"name": agent.name, "input": input});
            wire_calls.push((
                id.clone(),
                "create_sub_agent".to_owned(),
                tools::arguments_text(&arguments),
                self.tool_info("create_sub_agent", None),
            ));
            children.push((id, input, agent));
        }
        let (mut items, _) = self.message("main", &text, &wire_calls, 12);
        let mut queues: Vec<VecDeque<Item>> = Vec::new();
        for (call_id, input, agent) in children {
            let thread = self.rng.thread_uuid();
            let parent = json!({"tool_call_id": call_id, "thread_id": "main"});
            let created = Event::new(
                self.id(),
                None,
                Some(&thread),
                EventBody::ThreadCreated {
                    agent_info: json!({"type": "dynamic", "name": agent.name, "input": input}),
                    parent: parent.clone(),
                    title: agent.name.clone(),
                },
            );
            let mut queue = VecDeque::from([Item::standalone(created)]);
            self.grow(&thread, wire::estimate_tokens(&input));
            let (planned, last_message) = self.thread_steps(&thread, &agent.steps);
            // The spawning call's result on the wire is `""`, but the child's answer is what
            // the main thread's model reads next.
            let answer = last_message
                .as_ref()
                .and_then(Event::message)
                .and_then(|m| m.content.as_deref())
                .map(wire::estimate_tokens)
                .unwrap_or(0);
            self.grow("main", answer);
            queue.extend(planned);
            queue.push_back(self.tool_response("main", &call_id, String::new()));
            let done = Event::new(
                self.id(),
                None,
                Some(&thread),
                EventBody::ThreadDone {
                    parent,
                    title: agent.name.clone(),
                    state: json!({
                        "status": "done",
                        "output": last_message.map(|m| m.to_value()).unwrap_or(Value::Null)
                    }),
                },
            );
            queue.push_back(Item::standalone(done));
            queues.push(queue);
        }
        // Children run in parallel: their events interleave in a seeded order.
        loop {
            let open: Vec<usize> = (0..queues.len())
                .filter(|i| !queues[*i].is_empty())
                .collect();
            if open.is_empty() {
                break;
            }
            let pick = open[self.rng.below(open.len())];
            if let Some(item) = queues[pick].pop_front() {
                items.push(item);
            }
        }
        items
    }

    fn mcp_initialize(&self) -> Item {
        let servers: Vec<Value> = self
            .scenario
            .scenario
            .mcp_servers
            .iter()
            .map(|s| json!({"name": s.name, "id": s.id, "transport_type": s.transport_type}))
            .collect();
        Item::standalone(Event::new(
            self.id(),
            None,
            Some("main"),
            EventBody::McpInitialize {
                mcp_servers: Value::Array(servers),
            },
        ))
    }
}

/// Makes each server's `auth_url` that is a path (`/…`, e.g. the emulator's own
/// `/fake-oauth/authorize`) absolute against `origin`: clients open it as a link, and the
/// protocol's `auth_url` is a full URL. Without an origin the path is left as it is.
fn absolute_auth_urls(servers: &mut Value, origin: Option<&str>) {
    let Some(origin) = origin else { return };
    for server in servers.as_array_mut().into_iter().flatten() {
        if let Some(Value::String(url)) = server.get_mut("auth_url") {
            if url.starts_with('/') && !url.starts_with("//") {
                *url = format!("{origin}{url}");
            }
        }
    }
}

/// Non-ASCII prose of `words` words, deterministic for the rng.
fn prose(rng: &mut TurnRng, words: usize) -> String {
    const VOCAB: &[&str] = &[
        "the",
        "river",
        "café",
        "naïve",
        "lantern",
        "日本語",
        "mountain",
        "Zoë",
        "whispered",
        "façade",
        "über",
        "ночь",
        "mañana",
        "🚀",
        "stars",
        "Ελλάδα",
        "smörgåsbord",
        "a",
        "of",
        "quietly",
        "👍🏽",
        "déjà",
        "vu",
        "garden",
        "中文",
        "and",
        "Ærø",
        "wind",
        "over",
        "the",
    ];
    let mut out = String::with_capacity(words * 7);
    let mut in_sentence = 0;
    for i in 0..words {
        let word = VOCAB[rng.below(VOCAB.len())];
        if in_sentence == 0 {
            let mut chars = word.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push_str(word);
        }
        in_sentence += 1;
        let end = in_sentence >= 8 + rng.below(7) || i + 1 == words;
        if end {
            out.push('.');
            in_sentence = 0;
            if i + 1 < words {
                out.push_str(if rng.below(4) == 0 { "\n\n" } else { " " });
            }
        } else {
            out.push(' ');
        }
    }
    out
}

/// Variables of a new turn: scenario defaults, then the parent turn's, then what `extract`
/// finds in the message (numbers stay numbers).
pub fn initial_vars(
    scenario: &Compiled,
    parent_vars: Option<&Map<String, Value>>,
    input: &TurnInput,
) -> Map<String, Value> {
    let mut vars = scenario.scenario.defaults.clone();
    if let Some(parent) = parent_vars {
        for (k, v) in parent {
            if !k.starts_with("result") {
                vars.insert(k.clone(), v.clone());
            }
        }
    }
    if let TurnInput::Message(text) = input {
        for (name, re) in &scenario.extract {
            if let Some(caps) = re.captures(text) {
                let found = caps
                    .get(1)
                    .or_else(|| caps.get(0))
                    .map(|m| m.as_str())
                    .unwrap_or_default();
                let value = if let Ok(n) = found.parse::<u64>() {
                    Value::from(n)
                } else {
                    found
                        .parse::<f64>()
                        .ok()
                        .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                        .unwrap_or_else(|| Value::String(found.to_owned()))
                };
                vars.insert(name.clone(), value);
            }
        }
    }
    vars
}

fn tool_matches(want: &str, item: &PendingItem) -> bool {
    want == "*" || item.tool.as_deref() == Some(want)
}

fn var_is_set(vars: &Map<String, Value>, name: &str) -> bool {
    !matches!(
        vars.get(name),
        None | Some(Value::Null) | Some(Value::Bool(false))
    )
}

/// The first trigger of `scenario` whose `when` holds for this input.
pub fn pick_trigger(
    scenario: &Compiled,
    input: &TurnInput,
    vars: &Map<String, Value>,
) -> Option<usize> {
    scenario
        .scenario
        .triggers
        .iter()
        .enumerate()
        .position(|(i, trigger)| {
            let when = &trigger.when;
            let answers: &[(PendingItem, Decision)] = match input {
                TurnInput::Answers(a) => a,
                _ => &[],
            };
            if let Some(re) = &scenario.message_res[i] {
                match input {
                    TurnInput::Message(text) if re.is_match(text) => {}
                    _ => return false,
                }
            }
            if let Some(tool) = &when.approved {
                if !answers
                    .iter()
                    .any(|(p, d)| *d == Decision::Allow && tool_matches(tool, p))
                {
                    return false;
                }
            }
            if let Some(tool) = &when.denied {
                if !answers
                    .iter()
                    .any(|(p, d)| matches!(d, Decision::Deny(_)) && tool_matches(tool, p))
                {
                    return false;
                }
            }
            if let Some(tool) = &when.answered {
                if !answers
                    .iter()
                    .any(|(p, d)| matches!(d, Decision::Answer(_)) && tool_matches(tool, p))
                {
                    return false;
                }
            }
            if let Some(resumed) = when.resumed {
                if resumed != (*input == TurnInput::Empty) {
                    return false;
                }
            }
            if let Some(name) = &when.unset {
                if var_is_set(vars, name) {
                    return false;
                }
            }
            true
        })
}

/// Why emission stopped early.
enum Stop {
    /// `/cancel` (or another reason that stops at once).
    Now,
    /// Frozen by a newer turn: stopped at a unit boundary.
    Frozen,
    /// The simulated crash point was reached: the worker vanishes without a `turn.done`.
    Crash,
}

struct Player<'a> {
    rt: &'a Runtime,
    turn_id: String,
    live: Arc<LiveTurn>,
    control: Arc<TurnControl>,
    cancel: tokio::sync::watch::Receiver<Option<String>>,
    placeholders: HashMap<String, (i64, Option<String>)>,
    output: Option<Value>,
    required_actions: Vec<Value>,
    /// Stop as crashed once the stream holds this many frames.
    crash_after: Option<u64>,
    /// When the last paced emission of the current batch was due (`None` before the first one). Each item is due
    /// `delay_us` after the previous one's due time, not after it was actually emitted: a sleep
    /// overshoots by up to a timer tick (1 ms, more on a busy machine), and measuring from the
    /// wake-up would add that overshoot to every delta — at "0.5 ms" the stream ran at ~900
    /// deltas/s instead of 2,000. Items already due are emitted without sleeping.
    due: Option<Instant>,
}

/// When the next paced item is due: `delay_us` after the previous item's due time, or after `now`
/// for the first item of a batch and after a stall longer than `MAX_LAG`.
fn next_due(previous: Option<Instant>, now: Instant, delay_us: u64) -> Instant {
    let base = match previous {
        Some(due) if now.saturating_duration_since(due) <= MAX_LAG => due,
        _ => now,
    };
    base + Duration::from_micros(delay_us)
}

/// How far behind its schedule the player may fall before it restarts the schedule from now:
/// after a long stall (a loaded machine, a debugger) the stream resumes at its pace instead of
/// bursting everything it owes.
const MAX_LAG: Duration = Duration::from_millis(100);

impl Player<'_> {
    /// Whether the simulated crash point is reached (nothing more may be written).
    fn crashed(&self) -> bool {
        self.crash_after.is_some_and(|n| self.live.len() >= n)
    }

    fn stop_reason(&self, at_boundary: bool) -> Option<Stop> {
        match self.cancel.borrow().as_deref() {
            None => None,
            Some("cancelled-for-next-turn") => at_boundary.then_some(Stop::Frozen),
            Some(_) => Some(Stop::Now),
        }
    }

    async fn play(&mut self, items: Vec<Item>) -> Result<(), Stop> {
        // Whatever ran between two batches (a sleep step, a wait for the user) is not pacing the
        // next batch may catch up on.
        self.due = None;
        for mut item in items {
            if let Some(stop) = self.stop_reason(item.boundary) {
                return Err(stop);
            }
            if item.delay_us > 0 {
                let now = Instant::now();
                let due = next_due(self.due, now, item.delay_us);
                self.due = Some(due);
                if due > now {
                    tokio::select! {
                        _ = sleep_until(due) => {}
                        _ = self.cancel.changed() => {}
                    }
                    if let Some(stop) = self.stop_reason(item.boundary) {
                        return Err(stop);
                    }
                }
            }
            if self.crashed() {
                return Err(Stop::Crash);
            }
            if item.stamp {
                item.event.created_at = Some(now_iso());
            }
            let seq = self.live.append(&item.event.to_json(), false) as i64;
            if matches!(item.event.body, EventBody::ModelMessage(_)) {
                self.placeholders
                    .insert(item.event.id.clone(), (seq, item.event.created_at.clone()));
            }
            if item.required {
                self.required_actions.push(item.event.to_value());
            }
            match item.persist {
                Persist::No => {}
                Persist::AsIs => {
                    let _ = self.rt.store.persist_event(&self.turn_id, seq, &item.event);
                }
                Persist::Merged(mut merged) => {
                    let (pos, created_at) = self
                        .placeholders
                        .get(&merged.id)
                        .cloned()
                        .unwrap_or((seq, None));
                    merged.created_at = created_at.or_else(|| Some(now_iso()));
                    let message = merged.message().cloned().unwrap_or_default();
                    if let Some(usage) = &message.usage {
                        let mut totals = self.control.totals();
                        totals.input_tokens += usage["input_tokens"].as_u64().unwrap_or(0);
                        totals.output_tokens += usage["output_tokens"].as_u64().unwrap_or(0);
                        self.control.set_totals(totals);
                    }
                    if merged.thread_id.as_deref() == Some("main")
                        && message.finish_reason.as_deref() == Some("stop")
                    {
                        self.output = Some(merged.to_value());
                    }
                    let _ = self.rt.store.persist_event(&self.turn_id, pos, &merged);
                }
            }
        }
        Ok(())
    }
}

/// Everything a turn's runner needs.
pub struct TurnJob {
    /// The turn.
    pub turn_id: String,
    /// Its live buffer (turn.created already written).
    pub live: Arc<LiveTurn>,
    /// Cancellation and totals shared with `/cancel` and newer turns.
    pub control: Arc<TurnControl>,
    /// The agent.
    pub scenario: Arc<Compiled>,
    /// The resolved input.
    pub input: TurnInput,
    /// The parent turn's variables.
    pub parent_vars: Option<Map<String, Value>>,
    /// Salt for the turn's deterministic randomness.
    pub rng_salt: String,
    /// `http://HOST:PORT` of the emulator ([`Runtime::public_origin`], never the request's
    /// `Host`); an MCP `auth_url` that starts with `/` is made absolute against it.
    pub origin: Option<String>,
    /// Simulate a crash of this turn's worker (`crash-after-events`).
    pub crash: Option<Crash>,
}

/// Runs a turn to its `turn.done`.
pub async fn run_turn(rt: Arc<Runtime>, job: TurnJob) {
    let mut vars = initial_vars(&job.scenario, job.parent_vars.as_ref(), &job.input);
    let trigger = pick_trigger(&job.scenario, &job.input, &vars);
    if let Some(i) = trigger {
        for (k, v) in &job.scenario.scenario.triggers[i].set {
            vars.insert(k.clone(), v.clone());
        }
    }
    // `pace_ms` may be fractional (e.g. "0.5 ms" → 2,000 deltas per second).
    let default_us = rt.config.pace_ms.saturating_mul(1000);
    let pace_us = match vars.get("pace_ms") {
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite())
            .map(|f| (f.clamp(0.0, 60_000.0) * 1000.0) as u64)
            .unwrap_or(default_us),
        _ => default_us,
    };
    let mut planner = Planner {
        rt: &rt,
        scenario: &job.scenario,
        rng: TurnRng::new(rt.config.seed, &job.rng_salt),
        vars,
        pace_us,
        context: HashMap::new(),
        origin: job.origin.clone(),
    };
    // The conversation so far: the parent's, plus this turn's message (answers and tool
    // results join as they are played).
    let carried = planner
        .vars
        .get(CONTEXT_VAR)
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let said = match &job.input {
        TurnInput::Message(text) => wire::estimate_tokens(text),
        _ => 0,
    };
    planner.grow("main", carried + said);
    let mut player = Player {
        rt: &rt,
        turn_id: job.turn_id.clone(),
        live: job.live.clone(),
        control: job.control.clone(),
        cancel: job.control.cancel_receiver(),
        placeholders: HashMap::new(),
        output: None,
        required_actions: Vec::new(),
        crash_after: job.crash.map(|c| c.after_events),
        due: None,
    };
    let outcome = play_turn(&mut planner, &mut player, trigger, &job.input).await;
    if matches!(outcome, Err(Stop::Crash)) || player.crashed() {
        // Like a `kill -9` of the owner: no `turn.done`, no stored state change, the live
        // buffer gone (or, with replicas, left to expire), open owner connections cut.
        job.live.crash();
        if !job.crash.is_some_and(|c| c.keep_buffer) {
            rt.live.remove(&job.turn_id);
        }
        tracing::info!("turn {}: simulated crash of its worker", job.turn_id);
        rt.forget_control(&job.turn_id);
        return;
    }
    let context = planner.context.get("main").copied().unwrap_or(0);
    planner
        .vars
        .insert(CONTEXT_VAR.into(), Value::from(context));
    let _ = rt.store.set_turn_vars(&job.turn_id, &planner.vars);
    finish(&rt, &job, &mut player, outcome);
    rt.forget_control(&job.turn_id);
}

async fn play_turn(
    planner: &mut Planner<'_>,
    player: &mut Player<'_>,
    trigger: Option<usize>,
    input: &TurnInput,
) -> Result<StepEnd, Stop> {
    let scenario = planner.scenario;
    let announce_mcp = trigger
        .and_then(|i| scenario.scenario.triggers[i].mcp_initialize)
        .unwrap_or(!scenario.scenario.mcp_servers.is_empty());
    if announce_mcp && !scenario.scenario.mcp_servers.is_empty() {
        let item = planner.mcp_initialize();
        player.play(vec![item]).await?;
    }
    if let TurnInput::Answers(answers) = input {
        let mut items = Vec::new();
        for (pending, decision) in answers {
            let thread = pending.thread_id.clone().unwrap_or_else(|| "main".into());
            let call_id = pending.tool_call_id.clone().unwrap_or_default();
            planner.vars.insert("tool".into(), json!(pending.tool));
            match decision {
                Decision::Allow => {
                    let spec: ResultSpec = pending
                        .result
                        .clone()
                        .and_then(|r| serde_json::from_value(r).ok())
                        .unwrap_or_default();
                    let arguments = pending.arguments.clone().unwrap_or(Value::Null);
                    let content = planner.execute(&call_id, &spec, &arguments);
                    items.push(planner.tool_response(&thread, &call_id, content));
                }
                Decision::Deny(reason) => {
                    let reason = reason.clone().unwrap_or_else(|| "no reason given".into());
                    planner
                        .vars
                        .insert("reason".into(), Value::String(reason.clone()));
                    let content =
                        json!({"error": format!("User denied tool call: {reason}")}).to_string();
                    items.push(planner.tool_response(&thread, &call_id, content));
                }
                Decision::Answer(answer) => {
                    planner.grow(&thread, wire::estimate_tokens(answer));
                    planner
                        .vars
                        .insert("answer".into(), Value::String(answer.clone()));
                }
            }
        }
        player.play(items).await?;
    }
    let Some(trigger) = trigger else {
        return Ok(StepEnd::Next);
    };
    for step in &scenario.scenario.triggers[trigger].steps {
        let (items, end) = match step {
            Step::Say(say) => (planner.say("main", say).0, StepEnd::Next),
            Step::Call(call) => planner.call("main", call),
            Step::Subagents(s) => (planner.subagents(s), StepEnd::Next),
            Step::Sleep(ms) => {
                tokio::select! {
                    _ = sleep(Duration::from_millis(*ms)) => {}
                    _ = player.cancel.changed() => {}
                }
                (Vec::new(), StepEnd::Next)
            }
            Step::Error(e) => {
                // The failed model call leaves an orphan placeholder (live only, §9).
                let mut placeholder = Item::standalone(Event::new(
                    planner.id(),
                    None,
                    Some("main"),
                    EventBody::ModelMessage(Message::default()),
                ));
                placeholder.persist = Persist::No;
                (
                    vec![placeholder],
                    StepEnd::Fail(render(&e.message, &planner.vars)),
                )
            }
            Step::McpAuth(auth) => {
                let mut servers = render_value(&Value::Array(auth.servers.clone()), &planner.vars);
                absolute_auth_urls(&mut servers, planner.origin.as_deref());
                let mut item = Item::standalone(Event::new(
                    planner.id(),
                    None,
                    None,
                    EventBody::McpAuthRequired {
                        mcp_servers: servers,
                    },
                ));
                item.required = true;
                let pending = PendingItem {
                    kind: "mcp_auth".into(),
                    thread_id: None,
                    tool_call_id: None,
                    tool: None,
                    arguments: None,
                    result: None,
                };
                (vec![item], StepEnd::Pause(vec![pending]))
            }
        };
        player.play(items).await?;
        match end {
            StepEnd::Next => {}
            other => return Ok(other),
        }
    }
    Ok(StepEnd::Next)
}

fn finish(rt: &Runtime, job: &TurnJob, player: &mut Player<'_>, outcome: Result<StepEnd, Stop>) {
    let totals: Totals = job.control.totals();
    let (state, pending) = match &outcome {
        Ok(StepEnd::Next) => (
            wire::done_state(player.output.take(), Vec::new(), totals),
            Vec::new(),
        ),
        Ok(StepEnd::Pause(pending)) => (
            wire::done_state(None, std::mem::take(&mut player.required_actions), totals),
            pending.clone(),
        ),
        Ok(StepEnd::Fail(message)) => (wire::error_state(message, totals), Vec::new()),
        Err(_) => {
            let reason = job
                .control
                .cancel_receiver()
                .borrow()
                .clone()
                .unwrap_or_else(|| "abandoned".into());
            (wire::cancelled_state(&reason, totals), Vec::new())
        }
    };
    let done = Event::turn_done(rt.ids.next(), now_iso(), state.clone());
    let live_done = match rt.store.finish_turn(&job.turn_id, &state, &pending, &done) {
        Ok(None) => done,
        Ok(Some((stored_state, stored_done))) => {
            if matches!(outcome, Err(Stop::Frozen))
                || stored_state.get("reason").and_then(Value::as_str)
                    == Some("cancelled-for-next-turn")
            {
                // The frozen turn's live stream ends later with its own turn.done record.
                Event::turn_done(rt.ids.next(), now_iso(), stored_state)
            } else {
                stored_done
            }
        }
        Err(err) => {
            tracing::error!("finishing turn {}: {err}", job.turn_id);
            done
        }
    };
    job.live.append(&live_done.to_json(), true);
}

#[cfg(test)]
mod pacing_tests {
    use super::{next_due, MAX_LAG};
    use tokio::time::{Duration, Instant};

    #[test]
    fn sub_millisecond_paces_keep_their_average_despite_late_wake_ups() {
        // 2,000 items at 0.5 ms, each wake-up 1 ms late (a coarse, busy timer): the schedule
        // still ends at 1 s, not at 3 s as when every delay counted from the wake-up.
        let start = Instant::now();
        let mut due = None;
        let mut now = start;
        for _ in 0..2000 {
            let d = next_due(due, now, 500);
            due = Some(d);
            now = now.max(d + Duration::from_millis(1)).min(d + MAX_LAG);
        }
        assert_eq!(due.map(|d| d - start), Some(Duration::from_secs(1)));
    }

    #[test]
    fn a_long_stall_restarts_the_schedule_instead_of_bursting() {
        let start = Instant::now();
        let first = next_due(None, start, 500);
        assert_eq!(first - start, Duration::from_micros(500));
        let late = first + MAX_LAG + Duration::from_millis(1);
        assert_eq!(
            next_due(Some(first), late, 500) - late,
            Duration::from_micros(500)
        );
        let on_time = first + MAX_LAG;
        assert_eq!(
            next_due(Some(first), on_time, 500),
            first + Duration::from_micros(500)
        );
    }
}
