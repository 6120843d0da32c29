//! [`SessionView::summary`]: a compact, canonical JSON digest of the view.

use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use serde_json::{Map, Value};

use super::message::MessageView;
use super::turn::TurnView;
use super::view::{ItemBody, PendingAction, ThreadView, UsageView};
use super::SessionView;
use crate::id_map::IdMap;
use crate::wire::JsonText;

// Built as `Value`s member by member, not with `json!`: the macro converts each member through
// `serde_json::to_value` (serde's serializer into a `Value`), which was the only reason the
// view's `Serialize` impls and serde_json's value serializer were in the wasm.

/// An object of `members`, in any order (a `Map` sorts its keys, as `json!` did).
fn object(members: Vec<(&str, Value)>) -> Value {
    // Inserted one by one: `collect` into the map would sort the members first with a sort
    // compiled for this type alone (see `crate::sort`); the keys are distinct either way.
    let mut map = Map::new();
    for (key, value) in members {
        map.insert(String::from(key), value);
    }
    Value::Object(map)
}

/// A string member that may be absent (`null`).
fn text<T: core::ops::Deref<Target = str>>(value: &Option<T>) -> Value {
    text_of(value.as_deref())
}

/// One copy of the conversion for every text type `text` takes.
fn text_of(value: Option<&str>) -> Value {
    value.map_or(Value::Null, Value::from)
}

fn usage_json(u: &UsageView) -> Value {
    object(vec![
        ("input", Value::from(u.input_tokens)),
        ("output", Value::from(u.output_tokens)),
        ("total", Value::from(u.total_tokens)),
        ("cacheRead", Value::from(u.cache_read_tokens)),
        (
            "breakdown",
            object(vec![
                ("harness", Value::from(u.breakdown.harness)),
                ("skills", Value::from(u.breakdown.skills)),
                ("instructions", Value::from(u.breakdown.instructions)),
                ("toolDefinitions", Value::from(u.breakdown.tool_definitions)),
                ("messages", Value::from(u.breakdown.messages)),
            ]),
        ),
    ])
}

/// `[input, output]` tokens.
fn token_pair(u: &UsageView) -> Value {
    Value::from(vec![u.input_tokens, u.output_tokens])
}

fn message_json(key: &str, m: &MessageView, thread: &Option<crate::id::Id>) -> Value {
    let calls: Vec<Value> = m
        .tool_calls()
        .iter()
        .map(|c| {
            object(vec![
                ("id", Value::from(c.tool_call_id.as_str())),
                ("name", Value::from(c.name.as_str())),
                ("argumentsText", Value::from(c.arguments_text.as_str())),
                (
                    "arguments",
                    c.arguments.as_ref().map_or(Value::Null, JsonText::to_value),
                ),
                ("argumentsError", Value::from(c.arguments_error().is_some())),
                ("result", text(&c.result_event_id)),
                ("threads", Value::from(c.spawned_thread_ids().to_vec())),
                ("uncertain", Value::from(c.uncertain())),
            ])
        })
        .collect();
    object(vec![
        ("kind", Value::from("message")),
        ("id", Value::from(key)),
        ("thread", text(thread)),
        ("text", Value::from(m.content.as_ref().map(|c| c.text()))),
        ("reasoning", text_of(m.reasoning().map(|t| t.as_str()))),
        ("refusal", text_of(m.refusal().map(|t| t.as_str()))),
        ("toolCalls", Value::from(calls)),
        (
            "finishReason",
            text_of(m.finish_reason().map(crate::id::Id::as_str)),
        ),
        (
            "usage",
            Value::from(m.usage().map(|u| token_pair(&u.get()))),
        ),
    ])
}

/// The ids of `list` (tool calls, servers) as an array of strings.
fn ids<T>(list: &[T], id: impl Fn(&T) -> &str) -> Value {
    Value::Array(list.iter().map(|x| Value::from(id(x))).collect())
}

fn item_json(key: &str, thread: &Option<crate::id::Id>, body: &ItemBody) -> Value {
    let (kind, mut members) = match body {
        ItemBody::Message(m) => return message_json(key, m, thread),
        ItemBody::ToolResult(r) => (
            "toolResult",
            vec![
                ("thread", text(thread)),
                ("toolCallId", Value::from(r.tool_call_id.as_str())),
                ("content", Value::from(&*r.content)),
                ("bound", Value::from(r.call_message_id.is_some())),
            ],
        ),
        ItemBody::ActionRequired { action, tool_calls } => (
            "actionRequired",
            vec![
                ("thread", text(thread)),
                ("action", Value::from(action.as_str())),
                ("toolCalls", ids(tool_calls, |c| &c.tool_call_id)),
            ],
        ),
        ItemBody::McpAuthRequired { servers } => (
            "mcpAuthRequired",
            vec![("servers", ids(servers, |s| &s.id))],
        ),
        ItemBody::McpInitialize { servers } => (
            "mcpInitialize",
            vec![
                ("thread", text(thread)),
                ("servers", ids(servers, |s| &s.id)),
            ],
        ),
        ItemBody::SandboxCreated { sandbox_id } => (
            "sandboxCreated",
            vec![("sandboxId", Value::from(sandbox_id.as_str()))],
        ),
        ItemBody::ThreadCreated {
            parent_tool_call_id,
            ..
        } => (
            "threadCreated",
            vec![
                ("thread", text(thread)),
                ("parentToolCallId", text(parent_tool_call_id)),
            ],
        ),
        ItemBody::ThreadDone { status, .. } => (
            "threadDone",
            vec![
                ("thread", text(thread)),
                ("status", Value::from(status.as_str())),
            ],
        ),
        ItemBody::Unknown { event_type, .. } => (
            "unknown",
            vec![("eventType", Value::from(event_type.as_str()))],
        ),
    };
    members.push(("kind", Value::from(kind)));
    members.push(("id", Value::from(key)));
    object(members)
}

/// A message stopped while streaming: only the live view has it, so the summary (equal for
/// live, replayed and persisted views of one history) leaves it out.
fn is_interrupted(body: &ItemBody) -> bool {
    matches!(body, ItemBody::Message(m) if m.interrupted)
}

fn turn_json(t: &TurnView) -> Value {
    let items: Vec<Value> = t
        .items
        .values()
        .filter(|i| !is_interrupted(&i.body))
        .map(|i| item_json(&i.key, &i.thread_id, &i.body))
        .collect();
    object(vec![
        ("id", Value::from(t.turn_id.as_str())),
        ("previousTurnId", text(&t.previous_turn_id)),
        ("status", Value::from(t.status.as_str())),
        (
            "cancelReason",
            text_of(t.cancel_reason().map(|r| r.as_str())),
        ),
        (
            "errorMessage",
            text_of(t.error_message().map(|m| m.as_str())),
        ),
        ("items", Value::from(items)),
        ("usage", usage_json(&t.usage.get())),
    ])
}

fn pending_json(p: &PendingAction) -> Value {
    let question = p.question.as_ref().map(|q| {
        object(vec![
            ("question", Value::from(q.question.as_str())),
            ("options", Value::from(q.options.clone())),
        ])
    });
    object(vec![
        ("key", Value::from(p.key.as_str())),
        ("kind", Value::from(p.kind.as_str())),
        ("turnId", Value::from(p.turn_id.as_str())),
        ("thread", text(&p.thread_id)),
        ("toolCallId", text(&p.tool_call_id)),
        ("sourceEventId", text(&p.source_event_id)),
        ("toolName", text(&p.tool_name)),
        (
            "arguments",
            p.arguments.as_ref().map_or(Value::Null, JsonText::to_value),
        ),
        ("question", Value::from(question)),
        (
            "authUrl",
            Value::from(p.mcp_server.as_ref().map(|s| s.auth_url.as_str())),
        ),
    ])
}

impl SessionView {
    /// A compact canonical summary of the view, for golden tests (native, wasm and browser over
    /// the same fixture corpus) and for debugging dumps.
    ///
    /// Shape (all keys always present):
    /// ```text
    /// { "turns": [ { id, previousTurnId, status, cancelReason, errorMessage,
    ///                items: [ {kind:"message", id, thread, text, reasoning, refusal,
    ///                          toolCalls:[{id,name,argumentsText,arguments,argumentsError,
    ///                                      result,threads,uncertain}], finishReason,
    ///                          usage:[input,output]|null}
    ///                       | {kind:"toolResult", id, thread, toolCallId, content, bound}
    ///                       | {kind:"actionRequired", id, thread, action, toolCalls:[ids]}
    ///                       | {kind:"mcpAuthRequired", id, servers} | {kind:"mcpInitialize", …}
    ///                       | {kind:"sandboxCreated", …} | {kind:"threadCreated", id, thread,
    ///                          parentToolCallId} | {kind:"threadDone", id, thread, status}
    ///                       | {kind:"unknown", id, eventType} ],
    ///                usage: {input, output, total, cacheRead, breakdown:{…}} } ],
    ///   "threads": { "main": [tree nodes], "detached": [tree nodes] },
    ///   "pending": [ {key, kind, turnId, thread, toolCallId, sourceEventId, toolName,
    ///                 arguments, question, authUrl} ],
    ///   "unmatchedToolResults": [event ids],
    ///   "usage": {…session totals…},
    ///   "diagnostics": { "lastSequenceNumbers": {turnId: n}, "warnings": count } }
    /// ```
    /// A thread node is `{id, title, parentToolCallId, status, placeholder, messages:[ids],
    /// usage:[input,output], children:[nodes]}`; threads with no known parent (their
    /// `thread.created` was never seen) are under `detached`, never under `main`.
    ///
    /// Timestamps are left out (the server re-stamps merged messages), and everything that
    /// depends on the transport rather than the conversation sits under `diagnostics`: two
    /// views of the same history (live, replayed, persisted) have equal summaries once
    /// `diagnostics` is removed. For that reason messages marked `interrupted` (kept in the live
    /// view only) are left out.
    pub fn summary(&self) -> Value {
        let turns: Vec<Value> = self.turns().map(turn_json).collect();
        let pending: Vec<Value> = self.pending.iter().map(pending_json).collect();
        let unmatched: Vec<Value> = self
            .unmatched_tool_results()
            .into_iter()
            .map(|(_, key)| Value::String(key))
            .collect();
        let mut seqs = Map::new();
        for t in self.turns() {
            if let Some(n) = t.last_sequence_number() {
                seqs.insert(String::from(&t.turn_id), Value::from(n));
            }
        }
        object(vec![
            ("turns", Value::from(turns)),
            ("threads", self.thread_tree()),
            ("pending", Value::from(pending)),
            ("unmatchedToolResults", Value::from(unmatched)),
            ("usage", usage_json(&self.usage)),
            (
                "diagnostics",
                object(vec![
                    ("lastSequenceNumbers", Value::Object(seqs)),
                    ("warnings", Value::from(self.warning_count)),
                ]),
            ),
        ])
    }

    fn thread_tree(&self) -> Value {
        // Messages per thread, in chain then item order.
        let mut messages: IdMap<Vec<&str>> = IdMap::new();
        for turn in self.turns() {
            for item in turn.items.values() {
                if let (ItemBody::Message(m), Some(thread)) =
                    (&item.body, item.thread_id.as_deref())
                {
                    if m.interrupted {
                        continue;
                    }
                    messages
                        .get_or_insert_with(thread, Vec::new)
                        .push(&item.key);
                }
            }
        }
        // Child thread ids per parent (the same map type as `messages`: one instantiation).
        let mut by_parent: IdMap<Vec<&str>> = IdMap::new();
        let mut detached: Vec<&ThreadView> = Vec::new();
        for thread in self.threads.values() {
            match thread.parent_thread_id.as_deref() {
                Some(parent) if parent == "main" || self.threads.contains_key(parent) => {
                    by_parent
                        .get_or_insert_with(parent, Vec::new)
                        .push(&thread.thread_id);
                }
                _ => detached.push(thread),
            }
        }
        fn node(
            t: &ThreadView,
            threads: &IdMap<ThreadView>,
            by_parent: &IdMap<Vec<&str>>,
            messages: &IdMap<Vec<&str>>,
            depth: usize,
        ) -> Value {
            // Depth bound: a parent cycle in hostile input must not recurse forever.
            let children: Vec<Value> = if depth > 32 {
                Vec::new()
            } else {
                by_parent
                    .get(t.thread_id.as_str())
                    .map(|kids| {
                        kids.iter()
                            .filter_map(|k| threads.get(k))
                            .map(|k| node(k, threads, by_parent, messages, depth + 1))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let thread_messages = messages.get(t.thread_id.as_str());
            object(vec![
                ("id", Value::from(t.thread_id.as_str())),
                ("title", text(&t.title)),
                ("parentToolCallId", text(&t.parent_tool_call_id)),
                ("status", Value::from(t.status.as_str())),
                ("placeholder", Value::from(t.placeholder)),
                (
                    "messages",
                    Value::from(thread_messages.cloned().unwrap_or_default()),
                ),
                ("usage", token_pair(&t.usage)),
                ("children", Value::from(children)),
            ])
        }
        let main: Vec<Value> = by_parent
            .get("main")
            .map(|kids| {
                kids.iter()
                    .filter_map(|k| self.threads.get(k))
                    .map(|k| node(k, &self.threads, &by_parent, &messages, 0))
                    .collect()
            })
            .unwrap_or_default();
        let detached: Vec<Value> = detached
            .iter()
            .map(|k| node(k, &self.threads, &by_parent, &messages, 0))
            .collect();
        object(vec![
            ("main", Value::from(main)),
            ("detached", Value::from(detached)),
        ])
    }
}
