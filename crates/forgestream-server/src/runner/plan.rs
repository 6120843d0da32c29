//! Planning: turns a scenario's steps into the events they emit (placeholder, deltas, merged
//! message, tool responses, `*_required`), running gate-free tools as it goes, with synthetic
//! usage figures that add up (README "Deliberate divergences").

use super::prose::prose;
use super::TurnContext;
use crate::clock::TurnRng;
use crate::event::{Event, EventBody, Message};
use crate::scenario::{render, render_value, Call, Compiled, Gate, ResultSpec, Say};
use crate::store::PendingItem;
use crate::tools;
use crate::wire;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Where a planned event is persisted.
pub(super) enum Persist {
    /// Live only (placeholders, deltas).
    No,
    /// Stored as streamed.
    AsIs,
    /// Completes a message: store this merged `model.message` at its placeholder's position.
    Merged(Box<Event>),
}

/// One planned emission.
pub(super) struct Item {
    pub(super) event: Event,
    /// Set `created_at` when emitted (placeholders, first deltas, standalone events).
    pub(super) stamp: bool,
    /// Starts a new unit; a turn frozen by a newer turn stops before the next boundary.
    pub(super) boundary: bool,
    pub(super) persist: Persist,
    /// Wait this long (µs) after the previous emission's due time before emitting. The player
    /// keeps an absolute schedule (see `Player::due`), so sub-millisecond paces are honoured on
    /// average even though timers tick in whole milliseconds and overshoot.
    pub(super) delay_us: u64,
    /// Collect into `required_actions` once emitted.
    pub(super) required: bool,
}

impl Item {
    pub(super) fn standalone(event: Event) -> Self {
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
pub(super) enum StepEnd {
    Next,
    Pause(Vec<PendingItem>),
    Fail(String),
}

pub(super) struct Planner<'a> {
    pub(super) ctx: &'a TurnContext,
    pub(super) scenario: &'a Compiled,
    pub(super) rng: TurnRng,
    pub(super) vars: Map<String, Value>,
    /// Pause between deltas, µs.
    pub(super) pace_us: u64,
    /// Synthetic tokens of the conversation each thread's model sees so far (its
    /// `input_tokens_breakdown.messages`): input, earlier model messages, tool results.
    pub(super) context: HashMap<String, u64>,
    /// See [`TurnJob::origin`].
    pub(super) origin: Option<String>,
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
    pub(super) fn id(&self) -> String {
        self.ctx.ids.next()
    }

    /// The conversation of `thread` grows by `tokens`.
    pub(super) fn grow(&mut self, thread: &str, tokens: u64) {
        *self.context.entry(thread.to_owned()).or_default() += tokens;
    }

    /// What the model is sent for the next call on `thread`.
    pub(super) fn breakdown(&self, thread: &str) -> wire::Breakdown {
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

    pub(super) fn tool_definitions(&self) -> u64 {
        if self.scenario.scenario.mcp_servers.is_empty() {
            0
        } else {
            153
        }
    }

    pub(super) fn tool_info(&self, tool: &str, server: Option<&str>) -> Value {
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
    pub(super) fn message(
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

    pub(super) fn say(&mut self, thread: &str, say: &Say) -> (Vec<Item>, Event) {
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

    /// A call's `runs_ms` (a number or a `{{var}}` template), ms; 0 when absent or unreadable,
    /// at most 10 minutes.
    fn runs_ms(&self, value: Option<&Value>) -> u64 {
        let ms = match value.map(|v| render_value(v, &self.vars)) {
            Some(Value::Number(n)) => n.as_f64().map_or(0, |f| f.max(0.0) as u64),
            Some(Value::String(s)) => s.trim().parse().unwrap_or(0),
            _ => 0,
        };
        ms.min(600_000)
    }

    /// A `tool.response`; its content joins the thread's conversation.
    pub(super) fn tool_response(
        &mut self,
        thread: &str,
        tool_call_id: &str,
        content: String,
    ) -> Item {
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
    pub(super) fn execute(
        &mut self,
        tool_call_id: &str,
        spec: &ResultSpec,
        arguments: &Value,
    ) -> String {
        let content = tools::run(&self.ctx.store, tool_call_id, spec, arguments, &self.vars);
        // The previous result's fields go: a stale `result.error` would still read as set.
        self.vars.retain(|name, _| !name.starts_with("result."));
        self.vars
            .insert("result".into(), Value::String(content.clone()));
        if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(&content) {
            for (key, value) in fields {
                self.vars.insert(format!("result.{key}"), value);
            }
        }
        content
    }

    pub(super) fn call(&mut self, thread: &str, call: &Call) -> (Vec<Item>, StepEnd) {
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
                    let mut response = self.tool_response(thread, id, content);
                    // A slow tool: the stream stays silent until its result.
                    response.delay_us = self.runs_ms(spec.runs_ms.as_ref()).saturating_mul(1000);
                    items.push(response);
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

    pub(super) fn mcp_initialize(&self) -> Item {
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
pub(super) fn absolute_auth_urls(servers: &mut Value, origin: Option<&str>) {
    let Some(origin) = origin else { return };
    for server in servers.as_array_mut().into_iter().flatten() {
        if let Some(Value::String(url)) = server.get_mut("auth_url") {
            if url.starts_with('/') && !url.starts_with("//") {
                *url = format!("{origin}{url}");
            }
        }
    }
}
