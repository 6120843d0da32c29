//! The pending-action set (PROTOCOL §7, §8 problem 2): the union of the newest turn's streamed
//! `*_required` events and its `turn.done.required_actions`, keyed by (thread, tool call) and
//! per MCP server, enriched from the proposing message so a UI can render each card.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use serde_json::Value;

use super::change::ChangeSet;
use super::view::{ItemBody, PendingAction, PendingKind, QuestionView};
use super::{turn_key, SessionView};
use crate::id_map::IdSet;
use crate::wire::JsonText;

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
        if let Some(turn) = self
            .order
            .last()
            .and_then(|id| self.turns.get_keyed(id, turn_key))
        {
            let mut seen = IdSet::new();
            for (event_id, record) in turn.internal.required() {
                match &record.body {
                    ItemBody::ActionRequired {
                        action: kind,
                        tool_calls,
                    } => {
                        let thread = &record.thread_id;
                        for call in tool_calls {
                            let key = format!(
                                "tool:{}:{}",
                                thread.as_deref().unwrap_or(""),
                                call.tool_call_id
                            );
                            if !seen.add(&key) {
                                continue;
                            }
                            let view = self.tool_call(&call.tool_call_id);
                            let arguments = view.and_then(|v| v.arguments.clone());
                            let question =
                                view.filter(|v| v.name == ASK_USER_QUESTION).and_then(|_| {
                                    question_of(arguments.as_ref().map(JsonText::to_value).as_ref())
                                });
                            pending.push(PendingAction {
                                key,
                                kind: *kind,
                                turn_id: String::from(&turn.turn_id),
                                required_event_id: event_id.clone(),
                                thread_id: thread.clone(),
                                tool_call_id: Some(call.tool_call_id.clone()),
                                source_event_id: call.source_event_id.clone(),
                                tool_name: view.map(|v| String::from(&v.name)),
                                arguments_text: view
                                    .map(|v| String::from(v.arguments_text.as_str())),
                                arguments,
                                tool_info: view.and_then(|v| v.tool_info.as_deref().cloned()),
                                question,
                                mcp_server: None,
                            });
                        }
                    }
                    ItemBody::McpAuthRequired { servers } => {
                        for server in servers {
                            let key = format!("mcp:{}", server.id);
                            if !seen.add(&key) {
                                continue;
                            }
                            pending.push(PendingAction {
                                key,
                                kind: PendingKind::McpAuth,
                                turn_id: String::from(&turn.turn_id),
                                required_event_id: event_id.clone(),
                                thread_id: record.thread_id.clone(),
                                tool_call_id: None,
                                source_event_id: None,
                                tool_name: None,
                                arguments_text: None,
                                arguments: None,
                                tool_info: None,
                                question: None,
                                mcp_server: Some(server.clone()),
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
