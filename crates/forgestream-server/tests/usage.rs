//! The synthetic token figures add up (PROTOCOL.md §5 "Usage", §6 metrics), in every built-in
//! agent, live and in the listings:
//! - each usage's `input_tokens_breakdown` sums to its `input_tokens`;
//! - `output_tokens` is plausible for what the message says (1 to 8 characters per token);
//! - the live final delta's usage is the listed merged message's usage;
//! - a terminal state's `metrics` are the sums over the turn's model messages, every thread
//!   included (as recorded: the subagent turn's totals count the children's calls), and
//!   `total_tokens` is input + output;
//! - the model sees the conversation grow: the `messages` share never shrinks along the main
//!   thread of a session, and grows with each call.

mod common;

use common::*;
use serde_json::{json, Value};
use std::collections::HashMap;

/// How a paused turn is continued.
#[derive(Clone, Copy)]
enum Answer {
    Allow,
    Deny,
}

/// The user messages each built-in agent is driven with; paused turns are answered with
/// `Answer` until the session is idle again.
fn scripts() -> Vec<(&'static str, Answer, Vec<&'static str>)> {
    vec![
        (
            "support",
            Answer::Allow,
            vec![
                "Refund €49.50 on ORD-2031, it arrived broken.",
                "Where is ORD-4821?",
                "Refund ORD-4821 please",
                "hello",
            ],
        ),
        (
            "support",
            Answer::Deny,
            vec!["Refund €10 on ORD-1001", "Where is ORD-1001?"],
        ),
        (
            "researcher",
            Answer::Allow,
            vec!["Research ORD-2031 for a damaged-goods refund"],
        ),
        ("concierge", Answer::Allow, vec!["Plan a weekend trip"]),
        (
            "github",
            Answer::Allow,
            vec!["List the open issues of forgestream/demo", "again"],
        ),
        ("flaky", Answer::Allow, vec!["do it", "ok now"]),
        (
            "storyteller",
            Answer::Allow,
            vec!["A story of 400 words", "Another, 50 words"],
        ),
    ]
}

fn n(value: &Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("`{key}` is not a count in {value}"))
}

/// Checks one usage object on its own; returns (input, output, messages share).
fn check_usage(usage: &Value, what: &str) -> (u64, u64, u64) {
    let input = n(usage, "input_tokens");
    let output = n(usage, "output_tokens");
    let breakdown = usage["input_tokens_breakdown"]
        .as_object()
        .unwrap_or_else(|| panic!("{what}: no breakdown in {usage}"));
    let parts: u64 = breakdown
        .values()
        .map(|v| v.as_u64().expect("breakdown values are counts"))
        .sum();
    assert_eq!(
        parts, input,
        "{what}: input_tokens_breakdown must add up to input_tokens: {usage}"
    );
    assert!(output >= 1, "{what}: a model message has output: {usage}");
    assert!(
        n(usage, "cache_read_tokens") <= input,
        "{what}: cache reads are part of the input: {usage}"
    );
    (
        input,
        output,
        n(&usage["input_tokens_breakdown"], "messages"),
    )
}

/// What the model wrote in a merged message: text plus each call's name and arguments.
fn written_chars(message: &Value) -> usize {
    let mut chars = message["content"].as_str().unwrap_or("").chars().count();
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        chars += call["function"]["name"]
            .as_str()
            .unwrap_or("")
            .chars()
            .count();
        chars += call["function"]["arguments"]
            .as_str()
            .unwrap_or("")
            .chars()
            .count();
    }
    chars
}

/// The pending items of a paused turn answered the `answer` way (empty input for MCP auth).
fn continuation(state: &Value, answer: Answer) -> Value {
    let mut input = Vec::new();
    for action in state["required_actions"].as_array().unwrap() {
        let kind = action["type"].as_str().unwrap();
        for call in action["tool_calls"].as_array().into_iter().flatten() {
            let id = &call["id"];
            let thread = &action["thread_id"];
            input.push(match (kind, answer) {
                ("tool.approval_required", Answer::Allow) => json!({"type": "user.tool_approval",
                    "thread_id": thread, "tool_call_id": id, "approval": {"status": "allow"}}),
                ("tool.approval_required", Answer::Deny) => json!({"type": "user.tool_approval",
                    "thread_id": thread, "tool_call_id": id,
                    "approval": {"status": "deny", "reason": "not eligible"}}),
                _ => json!({"type": "user.tool_response", "thread_id": thread,
                    "tool_call_id": id, "content": "Kyoto 京都"}),
            });
        }
    }
    json!({ "input": input })
}

/// Checks one finished turn (its live frames and its listings); returns the main thread's
/// `messages` shares in call order.
async fn check_turn(base: &str, sid: &str, frames: &[(u64, Value)], label: &str) -> Vec<u64> {
    let tid = turn_id(frames);
    let state = last_state(frames);
    let live: HashMap<String, Value> = frames
        .iter()
        .filter(|(_, e)| e["type"] == "model.message.delta" && !e["usage"].is_null())
        .map(|(_, e)| (e["id"].as_str().unwrap().to_owned(), e["usage"].clone()))
        .collect();
    let listed = send(http().get(format!(
        "{base}/api/v1/sessions/{sid}/turns/{tid}/events?limit=100"
    )))
    .await
    .json();
    let mut input_sum = 0;
    let mut output_sum = 0;
    let mut main_shares = Vec::new();
    let mut last_share: HashMap<String, u64> = HashMap::new();
    for event in listed["data"].as_array().unwrap() {
        if event["type"] != "model.message" {
            continue;
        }
        let id = event["id"].as_str().unwrap();
        let what = format!("{label}, message {id}");
        let (input, output, share) = check_usage(&event["usage"], &what);
        assert_eq!(
            live.get(id),
            Some(&event["usage"]),
            "{what}: the live final delta carries the listed usage"
        );
        let chars = written_chars(event) as u64;
        assert!(
            chars.div_ceil(8) <= output && output <= chars.max(1),
            "{what}: {output} output tokens for {chars} characters written"
        );
        let thread = event["thread_id"].as_str().unwrap().to_owned();
        if let Some(before) = last_share.insert(thread.clone(), share) {
            assert!(
                share > before,
                "{what}: the thread's context grows from call to call ({before} → {share})"
            );
        } else {
            assert!(share > 0, "{what}: the first call sees its input");
        }
        if thread == "main" {
            main_shares.push(share);
        }
        input_sum += input;
        output_sum += output;
    }
    for (where_, metrics) in [
        ("live turn.done", state["metrics"].clone()),
        (
            "GET turn",
            send(http().get(format!("{base}/api/v1/sessions/{sid}/turns/{tid}")))
                .await
                .json()["data"]["state"]["metrics"]
                .clone(),
        ),
    ] {
        let what = format!("{label}, {where_} metrics {metrics}");
        assert_eq!(n(&metrics, "total_input_tokens"), input_sum, "{what}");
        assert_eq!(n(&metrics, "total_output_tokens"), output_sum, "{what}");
        assert_eq!(
            n(&metrics, "total_tokens"),
            input_sum + output_sum,
            "{what}"
        );
    }
    main_shares
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_figures_add_up_in_every_agent() {
    let server = start().await;
    let base = server.url();
    let scripts = scripts();
    // Every shipped agent is driven here: a new scenario file needs a script above.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        assert!(
            scripts.iter().any(|(agent, _, _)| *agent == name),
            "no usage script for the `{name}` agent"
        );
    }
    for (agent, answer, messages) in scripts {
        let sid = create_session(&base, agent).await;
        let mut session_shares: Vec<u64> = Vec::new();
        let mut turns = 0;
        for text in messages {
            let mut body = message(text);
            loop {
                let reply = post_turn(&base, &sid, &body).await;
                assert_eq!(
                    reply.status,
                    200,
                    "{agent}: {}",
                    String::from_utf8_lossy(&reply.body)
                );
                let frames = reply.frames();
                turns += 1;
                let label = format!("{agent} turn {turns}");
                let shares = check_turn(&base, &sid, &frames, &label).await;
                for share in shares {
                    if let Some(before) = session_shares.last() {
                        assert!(
                            share > *before,
                            "{label}: the conversation the model sees only grows \
                             ({before} → {share})"
                        );
                    }
                    session_shares.push(share);
                }
                let state = last_state(&frames);
                let paused = state["required_actions"]
                    .as_array()
                    .is_some_and(|a| !a.is_empty());
                if !paused {
                    break;
                }
                body = continuation(&state, answer);
            }
        }
        assert!(!session_shares.is_empty(), "{agent}: no model call checked");
    }
}
