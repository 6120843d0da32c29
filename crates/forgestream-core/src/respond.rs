//! Continuation input for paused turns (PROTOCOL §7, §8 problem 2).
//!
//! [`continuation`] turns the app's [`Decision`]s into the `input` of the next turn, taking
//! every `thread_id` from the view's pending set (never from the caller), and refuses with a
//! [`RespondError`] whatever the server would reject with 422: an incomplete batch, an answer
//! to a call that is not pending (or is stale: pending in an older turn), an empty answer, an
//! approval answered with text or a question answered with allow/deny, duplicate answers.
//! [`user_message`] refuses while anything is pending, and [`validate_input`] checks a
//! hand-built input against the same rules.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::id_map::IdSet;
use crate::reduce::{PendingAction, PendingKind, SessionView};
use crate::wire::{json, Approval, InputItem, UserContent};

/// The app's answer to one pending action. From JS: `{kind: "allow" | "deny" | "answer",
/// toolCallId, reason?, content}` or `{kind: "authDone"}` (built by the SDK's `approve`, `deny`,
/// `answer`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Decision {
    /// Approve a `tool.approval_required` call.
    #[serde(rename_all = "camelCase")]
    Allow {
        /// The pending call.
        tool_call_id: String,
    },
    /// Deny a `tool.approval_required` call (the model sees
    /// `{"error":"User denied tool call: <reason>"}`).
    #[serde(rename_all = "camelCase")]
    Deny {
        /// The pending call.
        tool_call_id: String,
        /// Shown to the model.
        #[serde(default)]
        #[cfg_attr(feature = "tsify", tsify(optional))]
        reason: Option<String>,
    },
    /// Answer a `tool.response_required` call (e.g. `ask_user_question`); non-empty.
    #[serde(rename_all = "camelCase")]
    Answer {
        /// The pending call.
        tool_call_id: String,
        /// The result text.
        content: String,
    },
    /// The user finished every `auth_url` of the pending `mcp.auth_required`.
    AuthDone,
}

/// The hand-written decoder of a decision (the serde derive remains for tsify and as the tests'
/// oracle): the `kind` member anywhere, then the members of that kind (others ignored).
impl json::Decode for Decision {
    fn decode(r: &mut json::Reader<'_>) -> Result<Self, json::JsonError> {
        const WHAT: &str = "a decision object";
        let json::Tag::Str(kind) = json::tag(r, "kind", WHAT)? else {
            return Err(r.missing("kind"));
        };
        let kind = match kind.as_ref() {
            "allow" => 0,
            "deny" => 1,
            "answer" => 2,
            "authDone" => 3,
            _ => {
                return Err(r.invalid(&alloc::format!(
                    "unknown variant `{kind}`, expected `allow`, `deny`, `answer` or `authDone`"
                )))
            }
        };
        let (mut tool_call_id, mut reason, mut content) = (None, None, None);
        let mut tags = 0;
        let mut seq = r.object(WHAT)?;
        while let Some(key) = r.next_key(&mut seq)? {
            match (kind, key.as_ref()) {
                (_, "kind") if tags > 0 => return Err(r.duplicate("kind")),
                (_, "kind") => {
                    tags += 1;
                    r.skip()?;
                }
                (0..=2, "toolCallId") => json::field(r, &mut tool_call_id, "toolCallId")?,
                (1, "reason") => json::field(r, &mut reason, "reason")?,
                (2, "content") => json::field(r, &mut content, "content")?,
                _ => r.skip()?,
            }
        }
        let call = |id| json::required(r, id, "toolCallId");
        Ok(match kind {
            0 => Decision::Allow {
                tool_call_id: call(tool_call_id)?,
            },
            1 => Decision::Deny {
                tool_call_id: call(tool_call_id)?,
                reason: reason.flatten(),
            },
            2 => Decision::Answer {
                tool_call_id: call(tool_call_id)?,
                content: json::required(r, content, "content")?,
            },
            _ => Decision::AuthDone,
        })
    }
}

impl Decision {
    fn tool_call_id(&self) -> Option<&str> {
        match self {
            Decision::Allow { tool_call_id }
            | Decision::Deny { tool_call_id, .. }
            | Decision::Answer { tool_call_id, .. } => Some(tool_call_id),
            Decision::AuthDone => None,
        }
    }
}

/// Why a continuation was refused. Every variant names the offending call when there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RespondError {
    /// Nothing is pending: there is nothing to continue (send a user message instead).
    NothingPending,
    /// These pending calls have no decision (deny them explicitly to continue without them).
    Incomplete {
        /// The unanswered `tool_call_id`s.
        missing: Vec<String>,
    },
    /// The call was pending in an older turn; a newer turn superseded it.
    Stale {
        /// The call.
        tool_call_id: String,
        /// The turn where it was pending.
        turn_id: String,
    },
    /// The call is not pending at all.
    NotPending {
        /// The call.
        tool_call_id: String,
    },
    /// Two decisions for the same call.
    Duplicate {
        /// The call.
        tool_call_id: String,
    },
    /// The same `tool_call_id` is pending in two threads; the answer cannot be placed.
    Ambiguous {
        /// The call.
        tool_call_id: String,
    },
    /// The pending call has no owner thread, so no valid answer can name one.
    UnknownThread {
        /// The call.
        tool_call_id: String,
    },
    /// An input item names a thread other than the pending call's owner.
    WrongThread {
        /// The call.
        tool_call_id: String,
        /// The owner thread.
        expected: String,
        /// The thread named.
        received: String,
    },
    /// An approval was answered with text, or a question with allow/deny.
    WrongKind {
        /// The call.
        tool_call_id: String,
        /// What the call waits for.
        expected: PendingKind,
    },
    /// An answer (or user message) with empty content.
    EmptyContent {
        /// The call, if any.
        tool_call_id: Option<String>,
    },
    /// MCP authorisation is pending and the decisions do not confirm it ([`Decision::AuthDone`]).
    AuthNotConfirmed,
    /// [`Decision::AuthDone`] while no MCP authorisation is pending.
    AuthNotPending,
    /// A user message cannot be mixed with approvals/responses, nor sent while anything is
    /// pending (PROTOCOL §7).
    MessageWhilePending,
    /// An input item type the server does not accept here.
    UnsupportedItem,
}

impl fmt::Display for RespondError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RespondError::NothingPending => write!(f, "nothing is pending"),
            RespondError::Incomplete { missing } => {
                write!(
                    f,
                    "every pending call must be answered; missing: {}",
                    missing.join(", ")
                )
            }
            RespondError::Stale {
                tool_call_id,
                turn_id,
            } => {
                write!(
                    f,
                    "{tool_call_id} was pending in older turn {turn_id}; it is stale"
                )
            }
            RespondError::NotPending { tool_call_id } => write!(f, "{tool_call_id} is not pending"),
            RespondError::Duplicate { tool_call_id } => {
                write!(f, "{tool_call_id} is answered twice")
            }
            RespondError::Ambiguous { tool_call_id } => {
                write!(f, "{tool_call_id} is pending in several threads")
            }
            RespondError::UnknownThread { tool_call_id } => {
                write!(f, "{tool_call_id} has no known owner thread")
            }
            RespondError::WrongThread {
                tool_call_id,
                expected,
                received,
            } => write!(
                f,
                "{tool_call_id} belongs to thread {expected}, not {received}"
            ),
            RespondError::WrongKind {
                tool_call_id,
                expected,
            } => {
                write!(f, "{tool_call_id} expects {expected:?}")
            }
            RespondError::EmptyContent { tool_call_id } => match tool_call_id {
                Some(id) => write!(f, "the answer to {id} is empty"),
                None => write!(f, "the message is empty"),
            },
            RespondError::AuthNotConfirmed => write!(f, "MCP authorisation is still pending"),
            RespondError::AuthNotPending => write!(f, "no MCP authorisation is pending"),
            RespondError::MessageWhilePending => {
                write!(f, "a user message cannot be sent while actions are pending")
            }
            RespondError::UnsupportedItem => write!(f, "unsupported input item"),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for RespondError {}

/// The pending tool action for `tool_call_id`, or why there is none.
fn find_pending<'a>(
    view: &'a SessionView,
    tool_call_id: &str,
) -> Result<&'a PendingAction, RespondError> {
    let mut found = view
        .pending_actions()
        .iter()
        .filter(|p| p.tool_call_id.as_deref() == Some(tool_call_id));
    match (found.next(), found.next()) {
        (Some(_), Some(_)) => Err(RespondError::Ambiguous {
            tool_call_id: String::from(tool_call_id),
        }),
        (Some(one), None) => Ok(one),
        _ => match view.required_in_turns(tool_call_id).last() {
            Some(turn_id) => Err(RespondError::Stale {
                tool_call_id: String::from(tool_call_id),
                turn_id: turn_id.clone(),
            }),
            None => Err(RespondError::NotPending {
                tool_call_id: String::from(tool_call_id),
            }),
        },
    }
}

fn owner_thread(pending: &PendingAction, tool_call_id: &str) -> Result<String, RespondError> {
    pending
        .thread_id
        .clone()
        .filter(|t| !t.is_empty())
        .ok_or_else(|| RespondError::UnknownThread {
            tool_call_id: String::from(tool_call_id),
        })
}

fn tool_calls_pending(view: &SessionView) -> Vec<&PendingAction> {
    view.pending_actions()
        .iter()
        .filter(|p| p.kind != PendingKind::McpAuth)
        .collect()
}

/// Builds the next turn's `input` from `decisions` (PROTOCOL §7).
///
/// Output: one `user.tool_approval` / `user.tool_response` per pending call, in pending order;
/// empty when only MCP auth was pending (send the turn with empty input). Errors: see
/// [`RespondError`]; nothing is built unless the whole batch is valid.
pub fn continuation(
    view: &SessionView,
    decisions: &[Decision],
) -> Result<Vec<InputItem>, RespondError> {
    if view.pending_actions().is_empty() {
        return Err(match decisions.iter().find_map(Decision::tool_call_id) {
            Some(id) => match view.required_in_turns(id).last() {
                Some(turn_id) => RespondError::Stale {
                    tool_call_id: String::from(id),
                    turn_id: turn_id.clone(),
                },
                None => RespondError::NotPending {
                    tool_call_id: String::from(id),
                },
            },
            None => RespondError::NothingPending,
        });
    }
    let auth_pending = view
        .pending_actions()
        .iter()
        .any(|p| p.kind == PendingKind::McpAuth);
    let auth_done = decisions.iter().any(|d| matches!(d, Decision::AuthDone));
    if auth_done && !auth_pending {
        return Err(RespondError::AuthNotPending);
    }
    if auth_pending && !auth_done {
        return Err(RespondError::AuthNotConfirmed);
    }
    let mut answered = IdSet::new();
    let mut by_call: Vec<(String, InputItem)> = Vec::new();
    for decision in decisions {
        let Some(tool_call_id) = decision.tool_call_id() else {
            continue;
        };
        if !answered.add(tool_call_id) {
            return Err(RespondError::Duplicate {
                tool_call_id: String::from(tool_call_id),
            });
        }
        let pending = find_pending(view, tool_call_id)?;
        let thread_id = owner_thread(pending, tool_call_id)?;
        let item = match (decision, pending.kind) {
            (Decision::Allow { .. }, PendingKind::ToolApproval) => InputItem::ToolApproval {
                thread_id,
                tool_call_id: String::from(tool_call_id),
                approval: Approval::Allow,
            },
            (Decision::Deny { reason, .. }, PendingKind::ToolApproval) => InputItem::ToolApproval {
                thread_id,
                tool_call_id: String::from(tool_call_id),
                approval: Approval::Deny {
                    reason: reason.clone(),
                },
            },
            (Decision::Answer { content, .. }, PendingKind::ToolResponse) => {
                if content.trim().is_empty() {
                    return Err(RespondError::EmptyContent {
                        tool_call_id: Some(String::from(tool_call_id)),
                    });
                }
                InputItem::ToolResponse {
                    thread_id,
                    tool_call_id: String::from(tool_call_id),
                    content: content.clone(),
                }
            }
            (_, expected) => {
                return Err(RespondError::WrongKind {
                    tool_call_id: String::from(tool_call_id),
                    expected,
                })
            }
        };
        by_call.push((String::from(tool_call_id), item));
    }
    let pending_calls = tool_calls_pending(view);
    let missing: Vec<String> = pending_calls
        .iter()
        .filter_map(|p| p.tool_call_id.clone())
        .filter(|id| !answered.contains_key(id))
        .collect();
    if !missing.is_empty() {
        return Err(RespondError::Incomplete { missing });
    }
    // Pending order, so the batch is deterministic whatever order the app decided in.
    let mut out = Vec::with_capacity(by_call.len());
    for pending in pending_calls {
        if let Some(pos) = by_call
            .iter()
            .position(|(id, _)| pending.tool_call_id.as_ref() == Some(id))
        {
            out.push(by_call.swap_remove(pos).1);
        }
    }
    Ok(out)
}

/// `decisions` plus an explicit `Deny` (with `reason`) for every pending approval they leave
/// unanswered: the way to continue without answering everything (PROTOCOL §7 needs the whole
/// batch). Pending `tool.response_required` calls are not filled in (they need an answer).
pub fn deny_unanswered(
    view: &SessionView,
    decisions: &[Decision],
    reason: Option<&str>,
) -> Vec<Decision> {
    let mut out: Vec<Decision> = decisions.to_vec();
    for pending in view.pending_actions() {
        let Some(id) = pending.tool_call_id.as_deref() else {
            continue;
        };
        if pending.kind == PendingKind::ToolApproval
            && !decisions.iter().any(|d| d.tool_call_id() == Some(id))
        {
            out.push(Decision::Deny {
                tool_call_id: String::from(id),
                reason: reason.map(String::from),
            });
        }
    }
    out
}

/// The `input` of a plain new turn: one `user.message`. Refused while anything is pending
/// (answer or deny first) and when the content is empty.
pub fn user_message(
    view: &SessionView,
    content: UserContent,
) -> Result<Vec<InputItem>, RespondError> {
    if !view.pending_actions().is_empty() {
        return Err(RespondError::MessageWhilePending);
    }
    if content.is_empty() {
        return Err(RespondError::EmptyContent { tool_call_id: None });
    }
    Ok(alloc::vec![InputItem::UserMessage { content }])
}

/// Checks a hand-built `input` against the server's §7 rules and the view's pending set.
pub fn validate_input(view: &SessionView, items: &[InputItem]) -> Result<(), RespondError> {
    let has_message = items
        .iter()
        .any(|i| matches!(i, InputItem::UserMessage { .. }));
    let has_answers = items.iter().any(|i| {
        matches!(
            i,
            InputItem::ToolApproval { .. } | InputItem::ToolResponse { .. }
        )
    });
    if has_message && (has_answers || !view.pending_actions().is_empty()) {
        return Err(RespondError::MessageWhilePending);
    }
    let mut decisions = Vec::with_capacity(items.len());
    for item in items {
        let (tool_call_id, thread_id, decision) = match item {
            InputItem::UserMessage { content } => {
                if content.is_empty() {
                    return Err(RespondError::EmptyContent { tool_call_id: None });
                }
                continue;
            }
            InputItem::ToolApproval {
                thread_id,
                tool_call_id,
                approval,
            } => (
                tool_call_id,
                thread_id,
                match approval {
                    Approval::Allow => Decision::Allow {
                        tool_call_id: tool_call_id.clone(),
                    },
                    Approval::Deny { reason } => Decision::Deny {
                        tool_call_id: tool_call_id.clone(),
                        reason: reason.clone(),
                    },
                },
            ),
            InputItem::ToolResponse {
                thread_id,
                tool_call_id,
                content,
            } => (
                tool_call_id,
                thread_id,
                Decision::Answer {
                    tool_call_id: tool_call_id.clone(),
                    content: content.clone(),
                },
            ),
            InputItem::Unknown { .. } => return Err(RespondError::UnsupportedItem),
        };
        let pending = find_pending(view, tool_call_id)?;
        let expected = owner_thread(pending, tool_call_id)?;
        if &expected != thread_id {
            return Err(RespondError::WrongThread {
                tool_call_id: tool_call_id.clone(),
                expected,
                received: thread_id.clone(),
            });
        }
        decisions.push(decision);
    }
    if has_message {
        return Ok(());
    }
    if items.is_empty() {
        // Empty input continues after MCP auth, or is a plain (empty) turn.
        let only_auth = view
            .pending_actions()
            .iter()
            .all(|p| p.kind == PendingKind::McpAuth);
        return if only_auth {
            Ok(())
        } else {
            Err(incomplete(view, &[]))
        };
    }
    if view
        .pending_actions()
        .iter()
        .any(|p| p.kind == PendingKind::McpAuth)
    {
        decisions.push(Decision::AuthDone);
    }
    continuation(view, &decisions).map(|_| ())
}

fn incomplete(view: &SessionView, answered: &[String]) -> RespondError {
    RespondError::Incomplete {
        missing: tool_calls_pending(view)
            .iter()
            .filter_map(|p| p.tool_call_id.clone())
            .filter(|id| !answered.contains(id))
            .collect(),
    }
}
