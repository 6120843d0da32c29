//! The wire shapes the emulator writes besides events (those are [`crate::event`]): turn
//! states (PROTOCOL.md §6) with their metrics, usage (§5 "Usage"), listings (§2). Field names
//! are exactly the protocol's snake_case names.

use serde_json::{json, Map, Value};

/// Where a model call's input tokens come from (PROTOCOL.md §5 "Usage",
/// `input_tokens_breakdown`), in tokens. The emulator's figures are synthetic; what makes them
/// consistent is that `input_tokens` is always [`Breakdown::total`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// The runtime's own system prompt.
    pub harness: u64,
    /// Skills loaded into the prompt.
    pub skills: u64,
    /// The agent's instructions.
    pub instructions: u64,
    /// Definitions of the tools offered to the model.
    pub tool_definitions: u64,
    /// The conversation so far: user input, earlier model messages, tool results.
    pub messages: u64,
}

impl Breakdown {
    /// The model call's `input_tokens`: the sum of the parts.
    pub fn total(&self) -> u64 {
        self.harness + self.skills + self.instructions + self.tool_definitions + self.messages
    }
}

/// Usage of one model call (PROTOCOL.md §5 "Usage"), with the recorded keys:
/// `input_tokens` = the breakdown's sum, `output_tokens` as given, no cache reads.
pub fn usage(breakdown: &Breakdown, output_tokens: u64) -> Value {
    json!({
        "input_tokens": breakdown.total(),
        "output_tokens": output_tokens,
        "cache_read_tokens": 0,
        "input_tokens_breakdown": {
            "harness": breakdown.harness, "skills": breakdown.skills,
            "instructions": breakdown.instructions,
            "tool_definitions": breakdown.tool_definitions, "messages": breakdown.messages
        }
    })
}

/// Synthetic token count of a text: one token per four characters, rounded up (the usual
/// rule of thumb for English with BPE tokenizers; exactness does not matter here, consistency
/// does).
pub fn estimate_tokens(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4)
}

/// Running token totals of a turn, reported as `metrics` on terminal states.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Sum of `usage.input_tokens` over completed model messages.
    pub input_tokens: u64,
    /// Sum of `usage.output_tokens` over completed model messages.
    pub output_tokens: u64,
}

impl Totals {
    /// `metrics` of a `done` state (recorded: five keys).
    pub fn done_metrics(&self) -> Value {
        json!({
            "total_input_tokens": self.input_tokens,
            "total_output_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
            "total_cache_read_tokens": 0,
            "total_reasoning_tokens": 0
        })
    }
    /// `metrics` of `cancelled` / `error` states (recorded: three keys).
    pub fn short_metrics(&self) -> Value {
        json!({
            "total_input_tokens": self.input_tokens,
            "total_output_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens
        })
    }
}

/// `{status:"done", output, required_actions, completed_at, metrics}` (§6, §9).
pub fn done_state(output: Option<Value>, required_actions: Vec<Value>, totals: Totals) -> Value {
    json!({
        "status": "done",
        "output": output.unwrap_or(Value::Null),
        "required_actions": required_actions,
        "completed_at": crate::clock::now_iso(),
        "metrics": totals.done_metrics()
    })
}

/// `{status:"cancelled", reason, completed_at, metrics}`; `reason` is one of
/// `client-cancelled`, `cancelled-for-next-turn`, `server-execution-timeout`, `abandoned`.
pub fn cancelled_state(reason: &str, totals: Totals) -> Value {
    json!({
        "status": "cancelled",
        "reason": reason,
        "completed_at": crate::clock::now_iso(),
        "metrics": totals.short_metrics()
    })
}

/// `{status:"error", message, completed_at, metrics}`.
pub fn error_state(message: &str, totals: Totals) -> Value {
    json!({
        "status": "error",
        "message": message,
        "completed_at": crate::clock::now_iso(),
        "metrics": totals.short_metrics()
    })
}

/// The subject the emulator reports as creator on gateway turns (`created_by`,
/// `created_by_subject`). The real gateway reports the API key's owner.
pub fn emulator_subject() -> Value {
    json!({"subject_type": "user", "subject_id": "forgestream-emulator", "subject_slug": "emulator"})
}

/// Extracts the plain text of a `user.message` content (a string, or text parts joined).
pub fn message_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A `{data: …, pagination: {…}}` listing body (§2).
pub fn listing(data: Vec<Value>, limit: usize, next_page_token: Option<String>) -> Value {
    let mut pagination = Map::new();
    if let Some(token) = next_page_token {
        pagination.insert("next_page_token".into(), Value::String(token));
    }
    pagination.insert("limit".into(), json!(limit));
    json!({"data": data, "pagination": pagination})
}
