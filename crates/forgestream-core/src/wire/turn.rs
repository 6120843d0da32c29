//! Turns and their states (PROTOCOL §6, §9).

use alloc::string::String;
use alloc::vec::Vec;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::event::Event;
use super::input::InputItem;
use super::message::ModelMessage;
use super::tagged::{decode_without, is_empty_map, serialize_tagged, tag_of};

/// Why a turn was cancelled (PROTOCOL §6). Unknown reasons are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CancelReason {
    /// `server-execution-timeout`
    ServerExecutionTimeout,
    /// `client-cancelled`: `POST …/cancel`.
    ClientCancelled,
    /// `cancelled-for-next-turn`: a newer turn was created (its late deltas may still stream, §9).
    CancelledForNextTurn,
    /// `abandoned`
    Abandoned,
    /// Any other value, verbatim.
    Other(String),
}

impl CancelReason {
    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            CancelReason::ServerExecutionTimeout => "server-execution-timeout",
            CancelReason::ClientCancelled => "client-cancelled",
            CancelReason::CancelledForNextTurn => "cancelled-for-next-turn",
            CancelReason::Abandoned => "abandoned",
            CancelReason::Other(other) => other,
        }
    }

    /// Parses the wire spelling; unknown values become [`CancelReason::Other`].
    pub fn parse(text: &str) -> Self {
        match text {
            "server-execution-timeout" => CancelReason::ServerExecutionTimeout,
            "client-cancelled" => CancelReason::ClientCancelled,
            "cancelled-for-next-turn" => CancelReason::CancelledForNextTurn,
            "abandoned" => CancelReason::Abandoned,
            other => CancelReason::Other(String::from(other)),
        }
    }
}

impl<'de> Deserialize<'de> for CancelReason {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(CancelReason::parse(&text))
    }
}

impl Serialize for CancelReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Turn totals on terminal states (tokens; cost in USD).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Input tokens of all model calls.
    #[serde(default)]
    pub total_input_tokens: u64,
    /// Output tokens of all model calls.
    #[serde(default)]
    pub total_output_tokens: u64,
    /// Input + output.
    #[serde(default)]
    pub total_tokens: u64,
    /// Cached input tokens read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cache_read_tokens: Option<u64>,
    /// Cached input tokens written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cache_write_tokens: Option<u64>,
    /// Reasoning tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_reasoning_tokens: Option<u64>,
    /// Cost in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_cost_in_usd: Option<f64>,
}

/// `state` of a `done` turn. Paused when `required_actions` is non-empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DoneState {
    /// The root thread's final assembled message, or null (e.g. when paused).
    #[serde(default)]
    pub output: Option<ModelMessage>,
    /// The streamed `*_required` events, whole, exactly as streamed (§9).
    #[serde(default)]
    pub required_actions: Vec<Event>,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Turn totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// `state` of a `cancelled` turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CancelledState {
    /// Why it was cancelled.
    pub reason: CancelReason,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Turn totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// `state` of an `error` turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorState {
    /// Human-readable failure, e.g. `Request failed (500): …`.
    #[serde(default)]
    pub message: String,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Turn totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}

/// A turn's `state`, by `status` (PROTOCOL §6). The first terminal state written wins.
// `Done` is large (it holds the output message); states are decoded once per turn, not per
// delta, so boxing would only add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum TurnState {
    /// `running`
    Running,
    /// `done` (paused when `required_actions` is non-empty).
    Done(DoneState),
    /// `cancelled`
    Cancelled(CancelledState),
    /// `error`
    Error(ErrorState),
    /// A status this SDK does not know, kept raw; treated as non-terminal.
    Unknown {
        /// Its `status`.
        status: String,
        /// The whole state object.
        raw: Value,
    },
}

impl TurnState {
    /// True for `done`, `cancelled` and `error`.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            TurnState::Done(_) | TurnState::Cancelled(_) | TurnState::Error(_)
        )
    }

    /// The metrics of a terminal state, if any.
    pub fn metrics(&self) -> Option<&Metrics> {
        match self {
            TurnState::Done(s) => s.metrics.as_ref(),
            TurnState::Cancelled(s) => s.metrics.as_ref(),
            TurnState::Error(s) => s.metrics.as_ref(),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for TurnState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Value::deserialize(deserializer)?;
        let status = tag_of(&raw, "status").unwrap_or_default();
        let err = serde::de::Error::custom;
        match status.as_str() {
            "running" => Ok(TurnState::Running),
            "done" => decode_without(raw, "status")
                .map(TurnState::Done)
                .map_err(err),
            "cancelled" => decode_without(raw, "status")
                .map(TurnState::Cancelled)
                .map_err(err),
            "error" => decode_without(raw, "status")
                .map(TurnState::Error)
                .map_err(err),
            _ => Ok(TurnState::Unknown { status, raw }),
        }
    }
}

impl Serialize for TurnState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            TurnState::Running => {
                serialize_tagged(serializer, "status", "running", &serde_json::json!({}))
            }
            TurnState::Done(s) => serialize_tagged(serializer, "status", "done", s),
            TurnState::Cancelled(s) => serialize_tagged(serializer, "status", "cancelled", s),
            TurnState::Error(s) => serialize_tagged(serializer, "status", "error", s),
            TurnState::Unknown { raw, .. } => raw.serialize(serializer),
        }
    }
}

/// A turn as returned by `GET …/turns/{tid}` and `GET …/turns` (PROTOCOL §6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// `<ulid>.<executor>` (gateway `<ulid>.<zone>.<executor>`); opaque.
    pub id: String,
    /// Owning session.
    #[serde(default)]
    pub session_id: String,
    /// Parent in the chain, or null for a root turn.
    #[serde(default)]
    pub previous_turn_id: Option<String>,
    /// The input items the turn was created with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Vec<InputItem>>,
    /// Current state.
    pub state: TurnState,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// Gateway: who created it (opaque subject).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_subject: Option<Value>,
    /// Unknown fields, kept.
    #[serde(flatten, default, skip_serializing_if = "is_empty_map")]
    pub extra: Map<String, Value>,
}
