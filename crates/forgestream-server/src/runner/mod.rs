//! Plays a scenario for one turn: plans each step into events (running tools as it goes),
//! streams them into the turn's live buffer with pacing, persists merged events, and ends the
//! turn with exactly one `turn.done` (PROTOCOL.md §5 "Typical order in one step", §6).
//!
//! - `plan` / `subagents`: steps → planned events; `prose`: generated text;
//! - `trigger`: which trigger plays, the starting variables;
//! - `play`: paced emission and persistence; `finish`: the `turn.done`.
//!
//! The runner sees only a [`TurnContext`] (store, ids, live buffers, pace, seed) and the turn's
//! [`TurnControl`], never the whole runtime.

mod finish;
mod plan;
mod play;
mod prose;
mod subagents;
mod trigger;

pub use plan::CONTEXT_VAR;
pub use trigger::{initial_vars, pick_trigger};

use crate::clock::{TurnRng, UlidSource};
use crate::continuation::{Decision, TurnInput};
use crate::control::{Crash, TurnControl};
use crate::event::{Event, EventBody, Message};
use crate::live::{LiveRegistry, LiveTurn};
use crate::scenario::{render, render_value, Compiled, ResultSpec, Step};
use crate::store::{PendingItem, Store};
use crate::wire;
use finish::finish;
use plan::{absolute_auth_urls, Item, Persist, Planner, StepEnd};
use play::{Player, Stop};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::time::{sleep, Duration};

/// What a turn's runner may use of the emulator: a narrow view of the runtime.
#[derive(Clone)]
pub struct TurnContext {
    /// SQLite: persisted events, the terminal state, the turn's variables, the tools' tables.
    pub store: Arc<Store>,
    /// Event ids.
    pub ids: Arc<UlidSource>,
    /// Live buffers (a simulated crash removes the turn's).
    pub live: Arc<LiveRegistry>,
    /// Default pause between deltas, ms (`--pace-ms`).
    pub pace_ms: u64,
    /// `--seed`, for the turn's generator.
    pub seed: u64,
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
    /// `http://HOST:PORT` of the emulator ([`crate::runtime::Runtime::public_origin`], never the request's
    /// `Host`); an MCP `auth_url` that starts with `/` is made absolute against it.
    pub origin: Option<String>,
    /// Simulate a crash of this turn's worker (`crash-after-events`).
    pub crash: Option<Crash>,
}

/// Runs a turn to its `turn.done`.
pub async fn run_turn(ctx: TurnContext, job: TurnJob) {
    let mut vars = initial_vars(&job.scenario, job.parent_vars.as_ref(), &job.input);
    let trigger = pick_trigger(&job.scenario, &job.input, &vars);
    if let Some(i) = trigger {
        for (k, v) in &job.scenario.scenario.triggers[i].set {
            vars.insert(k.clone(), v.clone());
        }
    }
    // `pace_ms` may be fractional (e.g. "0.5 ms" → 2,000 deltas per second).
    let default_us = ctx.pace_ms.saturating_mul(1000);
    let pace_us = match vars.get("pace_ms") {
        Some(Value::Number(n)) => n
            .as_f64()
            .filter(|f| f.is_finite())
            .map(|f| (f.clamp(0.0, 60_000.0) * 1000.0) as u64)
            .unwrap_or(default_us),
        _ => default_us,
    };
    let mut planner = Planner {
        ctx: &ctx,
        scenario: &job.scenario,
        rng: TurnRng::new(ctx.seed, &job.rng_salt),
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
        ctx: &ctx,
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
            ctx.live.remove(&job.turn_id);
        }
        tracing::info!("turn {}: simulated crash of its worker", job.turn_id);
        return;
    }
    let context = planner.context.get("main").copied().unwrap_or(0);
    planner
        .vars
        .insert(CONTEXT_VAR.into(), Value::from(context));
    let _ = ctx.store.set_turn_vars(&job.turn_id, &planner.vars);
    finish(&ctx, &job, &mut player, outcome);
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
            Step::EndIf(end) => {
                if trigger::var_is_set(&planner.vars, &end.set) {
                    player.play(planner.say("main", &end.say).0).await?;
                    return Ok(StepEnd::Next);
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
