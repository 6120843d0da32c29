//! [`SessionView::summary`]: a compact, canonical JSON digest of the view.

use crate::id_map::IdMap;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::{json, Map, Value};

use super::view::{ItemBody, MessageView, PendingAction, ThreadView, TurnView, UsageView};
use super::SessionView;

fn usage_json(u: &UsageView) -> Value {
    json!({
        "input": u.input_tokens,
        "output": u.output_tokens,
        "total": u.total_tokens,
        "cacheRead": u.cache_read_tokens,
        "breakdown": {
            "harness": u.breakdown.harness,
            "skills": u.breakdown.skills,
            "instructions": u.breakdown.instructions,
            "toolDefinitions": u.breakdown.tool_definitions,
            "messages": u.breakdown.messages,
        },
    })
}

fn message_json(m: &MessageView, thread: &Option<String>) -> Value {
    let calls: Vec<Value> = m
        .tool_calls
        .iter()
        .map(|c| {
            json!({
                "id": c.tool_call_id,
                "name": c.name,
                "argumentsText": c.arguments_text,
                "arguments": c.arguments,
                "argumentsError": c.arguments_error.is_some(),
                "result": c.result_event_id,
                "threads": c.spawned_thread_ids,
                "uncertain": c.uncertain,
            })
        })
        .collect();
    json!({
        "kind": "message",
        "id": m.id,
        "thread": thread,
        "text": m.content.as_ref().map(|c| c.text()),
        "reasoning": m.reasoning,
        "refusal": m.refusal,
        "toolCalls": calls,
        "finishReason": m.finish_reason,
        "usage": m.usage.as_ref().map(|u| json!([u.input_tokens, u.output_tokens])),
    })
}

fn item_json(key: &str, thread: &Option<String>, body: &ItemBody) -> Value {
    match body {
        ItemBody::Message(m) => message_json(m, thread),
        ItemBody::ToolResult(r) => json!({
            "kind": "toolResult", "id": key, "thread": thread, "toolCallId": r.tool_call_id,
            "content": r.content, "bound": r.call_message_id.is_some(),
        }),
        ItemBody::ActionRequired { action, tool_calls } => json!({
            "kind": "actionRequired", "id": key, "thread": thread, "action": action,
            "toolCalls": tool_calls.iter().map(|c| c.tool_call_id.clone()).collect::<Vec<_>>(),
        }),
        ItemBody::McpAuthRequired { servers } => json!({
            "kind": "mcpAuthRequired", "id": key,
            "servers": servers.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
        }),
        ItemBody::McpInitialize { servers } => json!({
            "kind": "mcpInitialize", "id": key, "thread": thread,
            "servers": servers.iter().map(|s| s.id.clone()).collect::<Vec<_>>(),
        }),
        ItemBody::SandboxCreated { sandbox_id } => {
            json!({ "kind": "sandboxCreated", "id": key, "sandboxId": sandbox_id })
        }
        ItemBody::ThreadCreated {
            parent_tool_call_id,
            ..
        } => json!({
            "kind": "threadCreated", "id": key, "thread": thread,
            "parentToolCallId": parent_tool_call_id,
        }),
        ItemBody::ThreadDone { status, .. } => {
            json!({ "kind": "threadDone", "id": key, "thread": thread, "status": status })
        }
        ItemBody::Unknown { event_type, .. } => {
            json!({ "kind": "unknown", "id": key, "eventType": event_type })
        }
    }
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
    json!({
        "id": t.turn_id,
        "previousTurnId": t.previous_turn_id,
        "status": t.status,
        "cancelReason": t.cancel_reason,
        "errorMessage": t.error_message,
        "items": items,
        "usage": usage_json(&t.usage),
    })
}

fn pending_json(p: &PendingAction) -> Value {
    json!({
        "key": p.key,
        "kind": p.kind,
        "turnId": p.turn_id,
        "thread": p.thread_id,
        "toolCallId": p.tool_call_id,
        "sourceEventId": p.source_event_id,
        "toolName": p.tool_name,
        "arguments": p.arguments,
        "question": p.question.as_ref().map(|q| json!({"question": q.question, "options": q.options})),
        "authUrl": p.mcp_server.as_ref().map(|s| s.auth_url.clone()),
    })
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
            if let Some(n) = t.last_sequence_number {
                seqs.insert(t.turn_id.clone(), json!(n));
            }
        }
        json!({
            "turns": turns,
            "threads": self.thread_tree(),
            "pending": pending,
            "unmatchedToolResults": unmatched,
            "usage": usage_json(&self.usage),
            "diagnostics": { "lastSequenceNumbers": seqs, "warnings": self.warning_count },
        })
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
                    messages.get_or_insert_with(thread, Vec::new).push(&m.id);
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
            json!({
                "id": t.thread_id,
                "title": t.title,
                "parentToolCallId": t.parent_tool_call_id,
                "status": t.status,
                "placeholder": t.placeholder,
                "messages": messages.get(t.thread_id.as_str()).cloned().unwrap_or_default(),
                "usage": [t.usage.input_tokens, t.usage.output_tokens],
                "children": children,
            })
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
        json!({ "main": main, "detached": detached })
    }
}
