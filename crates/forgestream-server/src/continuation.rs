//! Turn input parsing and the continuation rules TrueForge enforces with 422
//! (PROTOCOL.md §7).

use crate::error::ApiError;
use crate::store::{PendingItem, TurnRow};
use serde_json::Value;
use std::collections::HashSet;

/// A user's decision on one pending item.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// `approval.status = "allow"`.
    Allow,
    /// `approval.status = "deny"` with its optional reason.
    Deny(Option<String>),
    /// `user.tool_response` content.
    Answer(String),
}

/// What a turn's input asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnInput {
    /// No items (or no `input`): a resume, e.g. after `mcp.auth_required`.
    Empty,
    /// One or more `user.message` items; their text joined.
    Message(String),
    /// Answers to pending items, resolved against the parent turn, in pending order.
    Answers(Vec<(PendingItem, Decision)>),
}

struct RawAnswer {
    thread_id: String,
    tool_call_id: String,
    decision: Decision,
}

fn str_field<'a>(item: &'a Value, key: &str) -> Result<&'a str, ApiError> {
    item.get(key).and_then(Value::as_str).ok_or_else(|| {
        ApiError::bad_request(format!("Invalid input item: `{key}` must be a string"))
    })
}

/// Parses `input` (400 on shapes the schema refuses) and checks it against the parent turn
/// `previous` (422 on the §7 rules):
/// no mixing messages with answers; answers only for pending calls of known threads; every
/// pending call answered in one batch; no `user.message` while approvals or client responses
/// are pending.
pub fn resolve(input: Option<&Value>, previous: Option<&TurnRow>) -> Result<TurnInput, ApiError> {
    let items: &[Value] = match input {
        None | Some(Value::Null) => &[],
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(ApiError::bad_request(
                "Invalid request: `input` must be an array",
            ))
        }
    };
    let mut texts = Vec::new();
    let mut answers = Vec::new();
    for item in items {
        match item.get("type").and_then(Value::as_str) {
            Some("user.message") => {
                let content = item.get("content").ok_or_else(|| {
                    ApiError::bad_request("Invalid input item: user.message needs `content`")
                })?;
                if !(content.is_string() || content.is_array()) {
                    return Err(ApiError::bad_request(
                        "Invalid input item: user.message `content` must be a string or an array",
                    ));
                }
                texts.push(crate::wire::message_text(content));
            }
            Some("user.tool_approval") => {
                let approval = item.get("approval").ok_or_else(|| {
                    ApiError::bad_request("Invalid input item: user.tool_approval needs `approval`")
                })?;
                let decision = match approval.get("status").and_then(Value::as_str) {
                    Some("allow") => Decision::Allow,
                    Some("deny") => Decision::Deny(
                        approval
                            .get("reason")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    ),
                    _ => {
                        return Err(ApiError::bad_request(
                            "Invalid input item: approval.status must be \"allow\" or \"deny\"",
                        ))
                    }
                };
                answers.push(RawAnswer {
                    thread_id: str_field(item, "thread_id")?.to_owned(),
                    tool_call_id: str_field(item, "tool_call_id")?.to_owned(),
                    decision,
                });
            }
            Some("user.tool_response") => {
                let content = str_field(item, "content")?;
                if content.is_empty() {
                    return Err(ApiError::unprocessable(
                        "user.tool_response content must be a non-empty string",
                    ));
                }
                answers.push(RawAnswer {
                    thread_id: str_field(item, "thread_id")?.to_owned(),
                    tool_call_id: str_field(item, "tool_call_id")?.to_owned(),
                    decision: Decision::Answer(content.to_owned()),
                });
            }
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "Invalid input item type: {other}"
                )))
            }
            None => return Err(ApiError::bad_request("Invalid input item: missing `type`")),
        }
    }
    let pending: &[PendingItem] = previous.map(|t| t.pending.as_slice()).unwrap_or(&[]);
    let waiting_calls: Vec<&PendingItem> =
        pending.iter().filter(|p| p.kind != "mcp_auth").collect();
    if !texts.is_empty() && !answers.is_empty() {
        return Err(ApiError::unprocessable(
            "Cannot mix user.message with tool approvals or tool responses",
        ));
    }
    if !texts.is_empty() {
        if !waiting_calls.is_empty() {
            return Err(ApiError::unprocessable(
                "The previous turn is waiting for tool approvals or responses; answer them before sending a message",
            ));
        }
        return Ok(TurnInput::Message(texts.join("\n")));
    }
    if answers.is_empty() {
        if !waiting_calls.is_empty() {
            return Err(ApiError::unprocessable(format!(
                "Pending tool calls must be resolved: {}",
                waiting_calls
                    .iter()
                    .filter_map(|p| p.tool_call_id.as_deref())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        return Ok(TurnInput::Empty);
    }
    if waiting_calls.is_empty() {
        return Err(ApiError::unprocessable(
            "The previous turn has no pending tool calls to resolve",
        ));
    }
    let known_threads: HashSet<&str> = waiting_calls
        .iter()
        .filter_map(|p| p.thread_id.as_deref())
        .collect();
    let mut seen = HashSet::new();
    for answer in &answers {
        if !known_threads.contains(answer.thread_id.as_str()) {
            return Err(ApiError::unprocessable(format!(
                "Unknown thread_id: {}",
                answer.thread_id
            )));
        }
        let Some(item) = waiting_calls
            .iter()
            .find(|p| p.tool_call_id.as_deref() == Some(answer.tool_call_id.as_str()))
        else {
            return Err(ApiError::unprocessable(format!(
                "Tool call is not pending: {}",
                answer.tool_call_id
            )));
        };
        if item.thread_id.as_deref() != Some(answer.thread_id.as_str()) {
            return Err(ApiError::unprocessable(format!(
                "Tool call {} does not belong to thread {}",
                answer.tool_call_id, answer.thread_id
            )));
        }
        let fits = matches!(
            (&answer.decision, item.kind.as_str()),
            (Decision::Allow | Decision::Deny(_), "approval") | (Decision::Answer(_), "response")
        );
        if !fits {
            return Err(ApiError::unprocessable(format!(
                "Tool call {} needs a {}",
                answer.tool_call_id,
                if item.kind == "approval" {
                    "user.tool_approval"
                } else {
                    "user.tool_response"
                }
            )));
        }
        if !seen.insert(answer.tool_call_id.clone()) {
            return Err(ApiError::unprocessable(format!(
                "Tool call answered twice: {}",
                answer.tool_call_id
            )));
        }
    }
    let missing: Vec<&str> = waiting_calls
        .iter()
        .filter_map(|p| p.tool_call_id.as_deref())
        .filter(|id| !seen.contains(*id))
        .collect();
    if !missing.is_empty() {
        return Err(ApiError::unprocessable(format!(
            "Every pending tool call must be resolved in one batch; missing: {}",
            missing.join(", ")
        )));
    }
    let resolved = waiting_calls
        .iter()
        .filter_map(|item| {
            let answer = answers
                .iter()
                .find(|a| item.tool_call_id.as_deref() == Some(a.tool_call_id.as_str()))?;
            Some(((*item).clone(), answer.decision.clone()))
        })
        .collect();
    Ok(TurnInput::Answers(resolved))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paused(items: Vec<PendingItem>) -> TurnRow {
        TurnRow {
            id: "t1".into(),
            session_id: "s".into(),
            previous_turn_id: None,
            input: None,
            state: json!({"status": "done"}),
            pending: items,
            vars: Default::default(),
            created_at: String::new(),
            index: 0,
        }
    }

    fn item(kind: &str, call: &str) -> PendingItem {
        PendingItem {
            kind: kind.into(),
            thread_id: Some("main".into()),
            tool_call_id: Some(call.into()),
            tool: Some("process_refund".into()),
            arguments: None,
            result: None,
        }
    }

    fn approve(call: &str) -> Value {
        json!({"type":"user.tool_approval","thread_id":"main","tool_call_id":call,"approval":{"status":"allow"}})
    }

    #[test]
    fn a_complete_batch_resolves_in_pending_order() {
        let prev = paused(vec![item("approval", "a"), item("approval", "b")]);
        let input = json!([approve("b"), {"type":"user.tool_approval","thread_id":"main","tool_call_id":"a","approval":{"status":"deny","reason":"no"}}]);
        let TurnInput::Answers(resolved) = resolve(Some(&input), Some(&prev)).unwrap() else {
            panic!("answers expected")
        };
        assert_eq!(resolved[0].0.tool_call_id.as_deref(), Some("a"));
        assert_eq!(resolved[0].1, Decision::Deny(Some("no".into())));
        assert_eq!(resolved[1].1, Decision::Allow);
    }

    #[test]
    fn the_422_rules() {
        let prev = paused(vec![item("approval", "a"), item("approval", "b")]);
        let code = |input: Value, prev: Option<&TurnRow>| {
            resolve(Some(&input), prev).unwrap_err().status.as_u16()
        };
        assert_eq!(
            code(json!([approve("a")]), Some(&prev)),
            422,
            "incomplete batch"
        );
        assert_eq!(
            code(
                json!([approve("a"), approve("b"), approve("c")]),
                Some(&prev)
            ),
            422,
            "not pending"
        );
        assert_eq!(
            code(
                json!([approve("a"), approve("a"), approve("b")]),
                Some(&prev)
            ),
            422,
            "twice"
        );
        assert_eq!(
            code(json!([{"type":"user.message","content":"hi"}]), Some(&prev)),
            422,
            "message while pending"
        );
        assert_eq!(
            code(
                json!([{"type":"user.message","content":"hi"}, approve("a")]),
                Some(&prev)
            ),
            422,
            "mixed"
        );
        assert_eq!(code(json!([approve("a")]), None), 422, "nothing pending");
        let wrong_thread = json!([{"type":"user.tool_approval","thread_id":"x","tool_call_id":"a","approval":{"status":"allow"}}]);
        assert_eq!(code(wrong_thread, Some(&prev)), 422, "unknown thread");
        assert_eq!(
            resolve(None, Some(&prev)).unwrap_err().status.as_u16(),
            422,
            "empty while pending"
        );
        let asked = paused(vec![item("response", "q")]);
        assert_eq!(
            code(json!([approve("q")]), Some(&asked)),
            422,
            "approval for a client call"
        );
        let empty_answer = json!([{"type":"user.tool_response","thread_id":"main","tool_call_id":"q","content":""}]);
        assert_eq!(code(empty_answer, Some(&asked)), 422);
        assert_eq!(code(json!([{"type":"user.nonsense"}]), None), 400);
        assert_eq!(
            resolve(Some(&json!({"no": 1})), None)
                .unwrap_err()
                .status
                .as_u16(),
            400
        );
    }

    #[test]
    fn auth_pauses_resume_with_empty_input_or_a_message() {
        let mut auth = item("mcp_auth", "");
        auth.tool_call_id = None;
        let prev = paused(vec![auth]);
        assert_eq!(resolve(None, Some(&prev)).unwrap(), TurnInput::Empty);
        assert_eq!(
            resolve(Some(&json!([])), Some(&prev)).unwrap(),
            TurnInput::Empty
        );
        let msg = json!([{"type":"user.message","content":[{"type":"text","text":"hi"}]}]);
        assert_eq!(
            resolve(Some(&msg), Some(&prev)).unwrap(),
            TurnInput::Message("hi".into())
        );
    }
}
