//! Turns and their states (PROTOCOL §6, §9).

use alloc::string::String;
use alloc::vec::Vec;
use serde::de::value::MapAccessDeserializer;
use serde::de::{Error as _, IgnoredAny, MapAccess};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::event::Event;
use super::input::InputItem;
use super::message::ModelMessage;
use super::tagged::{deserialize_union, parse_str, Union};

/// Why a turn was cancelled (PROTOCOL §6). Unknown reasons are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(
    feature = "tsify",
    tsify(
        type = "\"server-execution-timeout\" | \"client-cancelled\" | \"cancelled-for-next-turn\" | \"abandoned\" | (string & {})"
    )
)]
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
        parse_str(deserializer, CancelReason::parse)
    }
}

impl Serialize for CancelReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// Turn totals on terminal states (tokens; cost in USD).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct DoneState {
    /// The root thread's final assembled message, or null (e.g. when paused).
    #[serde(default, serialize_with = "super::event::serialize_output")]
    #[cfg_attr(
        feature = "tsify",
        tsify(type = "({ type: \"model.message\" } & ModelMessage) | null")
    )]
    pub output: Option<ModelMessage>,
    /// The streamed `*_required` events, whole, exactly as streamed (§9).
    #[serde(default)]
    #[cfg_attr(feature = "tsify", tsify(type = "ProtocolEvent[]"))]
    pub required_actions: Vec<Event>,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Turn totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
}

/// `state` of a `cancelled` turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
pub struct CancelledState {
    /// Why it was cancelled.
    pub reason: CancelReason,
    /// ISO-8601.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Turn totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
}

/// `state` of an `error` turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
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
}

/// A turn's `state`, by `status` (PROTOCOL §6). The first terminal state written wins.
// `Done` is large (it holds the output message); states are decoded once per turn, not per
// delta, so boxing would only add indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify), tsify(missing_as_null))]
#[cfg_attr(feature = "tsify", serde(tag = "status", rename_all = "snake_case"))]
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
    #[cfg_attr(feature = "tsify", serde(skip))]
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

impl Union for TurnState {
    const TAG: &'static str = "status";
    const EXPECTING: &'static str = "a turn state object";

    const TAGS: &'static [&'static str] = &["running", "done", "cancelled", "error"];

    fn known<'de, A: MapAccess<'de>>(
        status: &str,
        rest: MapAccessDeserializer<A>,
    ) -> Result<Self, A::Error> {
        Ok(match status {
            "running" => {
                IgnoredAny::deserialize(rest)?;
                TurnState::Running
            }
            "done" => TurnState::Done(Deserialize::deserialize(rest)?),
            "cancelled" => TurnState::Cancelled(Deserialize::deserialize(rest)?),
            "error" => TurnState::Error(Deserialize::deserialize(rest)?),
            // Only `TAGS` reach here: reported as a decode error, never a panic.
            other => return Err(A::Error::custom(format_args!("unhandled status {other}"))),
        })
    }

    fn unknown(status: String, raw: Value) -> Self {
        TurnState::Unknown { status, raw }
    }
}

impl<'de> Deserialize<'de> for TurnState {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_union(deserializer)
    }
}

/// The known states as serde's internally tagged form (`status` written first).
#[derive(Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
enum StateRef<'a> {
    Running,
    Done(&'a DoneState),
    Cancelled(&'a CancelledState),
    Error(&'a ErrorState),
}

impl Serialize for TurnState {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tagged = match self {
            TurnState::Running => StateRef::Running,
            TurnState::Done(s) => StateRef::Done(s),
            TurnState::Cancelled(s) => StateRef::Cancelled(s),
            TurnState::Error(s) => StateRef::Error(s),
            TurnState::Unknown { raw, .. } => return raw.serialize(serializer),
        };
        tagged.serialize(serializer)
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
}
