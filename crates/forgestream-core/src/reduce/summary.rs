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
use crate::wire::write::{string, Encode, Object};
use crate::wire::JsonText;

/// [`SessionView::thread_links`]: message keys per thread, child thread ids per parent, and
/// the threads with no known parent.
type ThreadLinks<'a> = (
    IdMap<Vec<&'a str>>,
    IdMap<Vec<&'a str>>,
    Vec<&'a ThreadView>,
);

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
        let (messages, by_parent, detached) = self.thread_links();
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

    /// What the thread tree is built from: the message keys of each thread (chain then item
    /// order, interrupted messages left out), the child thread ids of each parent, and the
    /// threads with no known parent.
    fn thread_links(&self) -> ThreadLinks<'_> {
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
        (messages, by_parent, detached)
    }
}

/// [`SessionView::summary`]'s JSON text written directly ([`SessionView::digest`]), byte for
/// byte what `summary()`'s `Value` gives through [`Encode`]: the members of each object in
/// sorted key order (a `Value` object's map sorts them), `lastSequenceNumbers` sorted by turn
/// id. No `Value` tree, no maps, one pass: the wasm's `exportDigest` writes this.
pub struct Digest<'a>(&'a SessionView);

impl Encode for Digest<'_> {
    fn encode(&self, out: &mut String) {
        let view = self.0;
        let mut o = Object::open(out);
        {
            let mut d = Object::open(o.key("diagnostics"));
            let mut seqs: Vec<(&str, u64)> = view
                .turns()
                .filter_map(|t| Some((t.turn_id.as_str(), t.last_sequence_number()?)))
                .collect();
            crate::sort::sort_by(&mut seqs, |a, b| a.0 < b.0);
            let mut m = Object::open(d.key("lastSequenceNumbers"));
            for (i, (turn_id, n)) in seqs.iter().enumerate() {
                // A key seen again later: the map kept the last value.
                if seqs.get(i + 1).is_some_and(|next| next.0 == *turn_id) {
                    continue;
                }
                let out = m.raw_key();
                string(out, turn_id);
                out.push(':');
                n.encode(out);
            }
            m.close();
            d.member("warnings", &view.warning_count);
            d.close();
        }
        list(o.key("pending"), view.pending.iter(), pending_text);
        {
            let (messages, by_parent, detached) = view.thread_links();
            let tree = Tree {
                threads: &view.threads,
                by_parent: &by_parent,
                messages: &messages,
            };
            let mut t = Object::open(o.key("threads"));
            list(t.key("detached"), detached.iter(), |out, k| {
                tree.node(out, k, 0)
            });
            let main = by_parent.get("main").map(Vec::as_slice).unwrap_or_default();
            tree.children(t.key("main"), main, 0);
            t.close();
        }
        list(o.key("turns"), view.turns(), turn_text);
        let unmatched = view.unmatched_tool_results();
        list(
            o.key("unmatchedToolResults"),
            unmatched.iter(),
            |out, (_, key)| string(out, key),
        );
        usage_text(o.key("usage"), &view.usage);
        o.close();
    }
}

/// `[item, …]`, each written by `each`.
fn list<T>(out: &mut String, items: impl Iterator<Item = T>, mut each: impl FnMut(&mut String, T)) {
    out.push('[');
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(out, item);
    }
    out.push(']');
}

fn usage_text(out: &mut String, u: &UsageView) {
    let mut o = Object::open(out);
    let mut b = Object::open(o.key("breakdown"));
    b.member("harness", &u.breakdown.harness);
    b.member("instructions", &u.breakdown.instructions);
    b.member("messages", &u.breakdown.messages);
    b.member("skills", &u.breakdown.skills);
    b.member("toolDefinitions", &u.breakdown.tool_definitions);
    b.close();
    o.member("cacheRead", &u.cache_read_tokens);
    o.member("input", &u.input_tokens);
    o.member("output", &u.output_tokens);
    o.member("total", &u.total_tokens);
    o.close();
}

/// `[input, output]` tokens.
fn pair_text(out: &mut String, u: &UsageView) {
    [u.input_tokens, u.output_tokens].encode(out);
}

/// A JSON text member as `summary()` has it: parsed into a `Value` (keys sorted, numbers
/// normalised), `null` when absent.
fn json_value(out: &mut String, text: Option<&JsonText>) {
    text.map(JsonText::to_value).encode(out);
}

fn turn_text(out: &mut String, t: &TurnView) {
    let mut o = Object::open(out);
    o.member("cancelReason", &t.cancel_reason().map(|r| r.as_str()));
    o.member("errorMessage", &t.error_message().map(|m| m.as_str()));
    o.member("id", t.turn_id.as_str());
    let items = t.items.values().filter(|i| !is_interrupted(&i.body));
    list(o.key("items"), items, |out, i| {
        item_text(out, &i.key, i.thread_id.as_deref(), &i.body)
    });
    o.member("previousTurnId", &t.previous_turn_id.as_deref());
    o.member("status", t.status.as_str());
    usage_text(o.key("usage"), &t.usage.get());
    o.close();
}

fn item_text(out: &mut String, key: &str, thread: Option<&str>, body: &ItemBody) {
    if let ItemBody::Message(m) = body {
        return message_text(out, key, m, thread);
    }
    let mut o = Object::open(out);
    // The members of each kind in sorted key order, `id` and `kind` among them.
    let head = |o: &mut Object<'_>, kind: &str| {
        o.member("id", key);
        o.member("kind", kind);
    };
    match body {
        ItemBody::Message(_) => {}
        ItemBody::ToolResult(r) => {
            o.member("bound", &r.call_message_id.is_some());
            o.member("content", &*r.content);
            head(&mut o, "toolResult");
            o.member("thread", &thread);
            o.member("toolCallId", r.tool_call_id.as_str());
        }
        ItemBody::ActionRequired { action, tool_calls } => {
            o.member("action", action.as_str());
            head(&mut o, "actionRequired");
            o.member("thread", &thread);
            list(o.key("toolCalls"), tool_calls.iter(), |out, c| {
                string(out, &c.tool_call_id)
            });
        }
        ItemBody::McpAuthRequired { servers } => {
            head(&mut o, "mcpAuthRequired");
            list(o.key("servers"), servers.iter(), |out, s| {
                string(out, &s.id)
            });
        }
        ItemBody::McpInitialize { servers } => {
            head(&mut o, "mcpInitialize");
            list(o.key("servers"), servers.iter(), |out, s| {
                string(out, &s.id)
            });
            o.member("thread", &thread);
        }
        ItemBody::SandboxCreated { sandbox_id } => {
            head(&mut o, "sandboxCreated");
            o.member("sandboxId", sandbox_id.as_str());
        }
        ItemBody::ThreadCreated {
            parent_tool_call_id,
            ..
        } => {
            head(&mut o, "threadCreated");
            o.member("parentToolCallId", &parent_tool_call_id.as_deref());
            o.member("thread", &thread);
        }
        ItemBody::ThreadDone { status, .. } => {
            head(&mut o, "threadDone");
            o.member("status", status.as_str());
            o.member("thread", &thread);
        }
        ItemBody::Unknown { event_type, .. } => {
            o.member("eventType", event_type.as_str());
            head(&mut o, "unknown");
        }
    }
    o.close();
}

fn message_text(out: &mut String, key: &str, m: &MessageView, thread: Option<&str>) {
    let mut o = Object::open(out);
    o.member(
        "finishReason",
        &m.finish_reason().map(crate::id::Id::as_str),
    );
    o.member("id", key);
    o.member("kind", "message");
    o.member("reasoning", &m.reasoning().map(|t| t.as_str()));
    o.member("refusal", &m.refusal().map(|t| t.as_str()));
    o.member("text", &m.content.as_ref().map(|c| c.text()));
    o.member("thread", &thread);
    list(o.key("toolCalls"), m.tool_calls().iter(), |out, c| {
        let mut o = Object::open(out);
        json_value(o.key("arguments"), c.arguments.as_ref());
        o.member("argumentsError", &c.arguments_error().is_some());
        o.member("argumentsText", c.arguments_text.as_str());
        o.member("id", c.tool_call_id.as_str());
        o.member("name", c.name.as_str());
        o.member("result", &c.result_event_id.as_deref());
        o.member("threads", c.spawned_thread_ids());
        o.member("uncertain", &c.uncertain());
        o.close();
    });
    match m.usage() {
        Some(u) => pair_text(o.key("usage"), &u.get()),
        None => o.key("usage").push_str("null"),
    }
    o.close();
}

fn pending_text(out: &mut String, p: &PendingAction) {
    let mut o = Object::open(out);
    json_value(o.key("arguments"), p.arguments.as_ref());
    o.member(
        "authUrl",
        &p.mcp_server.as_ref().map(|s| s.auth_url.as_str()),
    );
    o.member("key", p.key.as_str());
    o.member("kind", p.kind.as_str());
    match &p.question {
        Some(q) => {
            let mut q_o = Object::open(o.key("question"));
            q_o.member("options", &q.options);
            q_o.member("question", q.question.as_str());
            q_o.close();
        }
        None => o.key("question").push_str("null"),
    }
    o.member("sourceEventId", &p.source_event_id.as_deref());
    o.member("thread", &p.thread_id.as_deref());
    o.member("toolCallId", &p.tool_call_id.as_deref());
    o.member("toolName", &p.tool_name.as_deref());
    o.member("turnId", p.turn_id.as_str());
    o.close();
}

/// The thread tree's maps, for [`Tree::node`].
struct Tree<'v, 'a> {
    threads: &'v IdMap<ThreadView>,
    by_parent: &'v IdMap<Vec<&'a str>>,
    messages: &'v IdMap<Vec<&'a str>>,
}

impl Tree<'_, '_> {
    /// The nodes of the threads `kids` names (unknown ids left out).
    fn children(&self, out: &mut String, kids: &[&str], depth: usize) {
        list(
            out,
            kids.iter().filter_map(|k| self.threads.get(k)),
            |out, k| self.node(out, k, depth),
        );
    }

    fn node(&self, out: &mut String, t: &ThreadView, depth: usize) {
        let mut o = Object::open(out);
        // Depth bound: a parent cycle in hostile input must not recurse forever.
        let kids = if depth > 32 {
            &[][..]
        } else {
            self.by_parent
                .get(t.thread_id.as_str())
                .map(Vec::as_slice)
                .unwrap_or_default()
        };
        self.children(o.key("children"), kids, depth + 1);
        o.member("id", t.thread_id.as_str());
        let messages = self.messages.get(t.thread_id.as_str());
        o.member("messages", messages.map(Vec::as_slice).unwrap_or_default());
        o.member("parentToolCallId", &t.parent_tool_call_id.as_deref());
        o.member("placeholder", &t.placeholder);
        o.member("status", t.status.as_str());
        o.member("title", &t.title.as_deref());
        pair_text(o.key("usage"), &t.usage);
        o.close();
    }
}

impl SessionView {
    /// [`SessionView::summary`] as JSON text, written directly (the same bytes as
    /// `summary()`'s `Value` written by [`Encode`], without building it): what the wasm's
    /// `exportDigest` hands to JS.
    pub fn digest(&self) -> Digest<'_> {
        Digest(self)
    }
}
