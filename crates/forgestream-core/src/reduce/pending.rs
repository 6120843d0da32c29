//! The pending-action set (PROTOCOL §7, §8 problem 2): the union of the newest turn's streamed
//! `*_required` events and its `turn.done.required_actions`, keyed by (thread, tool call) and
//! per MCP server, enriched from the proposing message so a UI can render each card.

use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use super::change::ChangeSet;
use super::view::{McpAuthServerView, PendingAction, PendingKind, QuestionView};
use super::SessionView;
use crate::wire;

/// The built-in client tool whose arguments are `{question, options}`.
const ASK_USER_QUESTION: &str = "ask_user_question";

fn question_of(arguments: Option<&Value>) -> Option<QuestionView> {
    let args = arguments?;
    let question = args.get("question")?.as_str()?;
    let options = args
        .get("options")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    Some(QuestionView {
        question: String::from(question),
        options,
    })
}

impl SessionView {
    pub(super) fn rebuild_pending(&mut self, cs: &mut ChangeSet) {
        let mut pending: Vec<PendingAction> = Vec::new();
        if let Some(turn) = self.order.last().and_then(|id| self.turns.get(id)) {
            let mut seen: BTreeSet<String> = BTreeSet::new();
            for (event_id, event) in &turn.internal.required {
                match event {
                    wire::Event::ToolApprovalRequired(e) | wire::Event::ToolResponseRequired(e) => {
                        let kind = if matches!(event, wire::Event::ToolApprovalRequired(_)) {
                            PendingKind::ToolApproval
                        } else {
                            PendingKind::ToolResponse
                        };
                        let thread = e.thread_id.clone();
                        for call in &e.tool_calls {
                            let key =
                                format!("tool:{}:{}", thread.as_deref().unwrap_or(""), call.id);
                            if !seen.insert(key.clone()) {
                                continue;
                            }
                            let view = self.tool_call(&call.id);
                            let arguments = view.and_then(|v| v.arguments.clone());
                            let question = view
                                .filter(|v| v.name == ASK_USER_QUESTION)
                                .and_then(|_| question_of(arguments.as_ref()));
                            pending.push(PendingAction {
                                key,
                                kind,
                                turn_id: turn.turn_id.clone(),
                                required_event_id: event_id.clone(),
                                thread_id: thread.clone(),
                                tool_call_id: Some(call.id.clone()),
                                source_event_id: call.source_event_id.clone(),
                                tool_name: view.map(|v| v.name.clone()),
                                arguments_text: view.map(|v| v.arguments_text.clone()),
                                arguments,
                                tool_info: view.and_then(|v| v.tool_info.clone()),
                                question,
                                mcp_server: None,
                            });
                        }
                    }
                    wire::Event::McpAuthRequired(e) => {
                        for server in &e.mcp_servers {
                            let key = format!("mcp:{}", server.id);
                            if !seen.insert(key.clone()) {
                                continue;
                            }
                            pending.push(PendingAction {
                                key,
                                kind: PendingKind::McpAuth,
                                turn_id: turn.turn_id.clone(),
                                required_event_id: event_id.clone(),
                                thread_id: e.thread_id.clone(),
                                tool_call_id: None,
                                source_event_id: None,
                                tool_name: None,
                                arguments_text: None,
                                arguments: None,
                                tool_info: None,
                                question: None,
                                mcp_server: Some(McpAuthServerView {
                                    id: server.id.clone(),
                                    name: server.name.clone(),
                                    auth_url: server.auth_url.clone(),
                                }),
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        if pending != self.pending {
            self.pending = pending;
            cs.pending_changed = true;
        }
    }
}
