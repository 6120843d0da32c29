//! The JSON encoders of what the engine hands the UI layer (over
//! [`wire::write`](crate::wire::write)): the change set [`CoreChanges`] and its parts, the
//! connection badge, errors, warnings and the inspector's frames — the spelling of their serde
//! derives (camelCase; kept for tsify's TypeScript, and the oracle of `tests/encode_oracle.rs`).
//! A change set's optional parts are left out when unchanged, as the derives'
//! `skip_serializing_if` say; every other `Option` is written as `null`.

use alloc::string::String;

use super::changes::{
    ConnectionState, CoreChanges, ItemAppend, ItemUpdate, ReportedWarning, TurnCursor, TurnHeader,
};
use super::error::{ErrorCode, SessionError};
use super::LoggedFrame;
use crate::wire::write::{encode_struct, Encode, Object};

encode_struct!(TurnHeader<'a> {
    turn_id: "turnId",
    previous_turn_id: "previousTurnId",
    status: "status",
    cancel_reason: "cancelReason",
    error_message: "errorMessage",
    input: "input",
    created_at: "createdAt",
    completed_at: "completedAt",
    usage: "usage",
    last_sequence_number: "lastSequenceNumber",
    late_events_ignored: "lateEventsIgnored",
    version: "version",
    item_keys: "itemKeys",
});

encode_struct!(TurnCursor<'a> {
    turn_id: "turnId",
    version: "version",
    last_sequence_number: "lastSequenceNumber",
});

encode_struct!(ItemUpdate<'a> {
    turn_id: "turnId",
    key: "key",
    removed: "removed",
    value: "value" => skip_none,
    append: "append" => skip_none,
});

encode_struct!(ItemAppend<'a> {
    base_version: "baseVersion",
    version: "version",
    content: "content" => skip_none,
    reasoning: "reasoning" => skip_none,
    refusal: "refusal" => skip_none,
});

impl Encode for ConnectionState<'_> {
    fn encode(&self, out: &mut String) {
        // The states of a running turn share their members after `turnId`.
        let (status, turn_id, silence) = match self {
            ConnectionState::Idle { turn_id } => ("idle", turn_id, None),
            ConnectionState::Loading { turn_id } => ("loading", turn_id, None),
            ConnectionState::Connecting {
                turn_id,
                silent_ms,
                silent_since_ms,
                stalled,
            } => (
                "connecting",
                turn_id,
                Some((silent_ms, silent_since_ms, stalled)),
            ),
            ConnectionState::Live {
                turn_id,
                silent_ms,
                silent_since_ms,
                stalled,
            } => ("live", turn_id, Some((silent_ms, silent_since_ms, stalled))),
            ConnectionState::Reconnecting {
                turn_id,
                silent_ms,
                silent_since_ms,
                stalled,
                ..
            } => (
                "reconnecting",
                turn_id,
                Some((silent_ms, silent_since_ms, stalled)),
            ),
            ConnectionState::Rebuilding { turn_id } => ("rebuilding", turn_id, None),
            ConnectionState::Offline {
                turn_id,
                silent_ms,
                silent_since_ms,
                stalled,
            } => (
                "offline",
                turn_id,
                Some((silent_ms, silent_since_ms, stalled)),
            ),
            ConnectionState::Done { turn_id } => ("done", turn_id, None),
            ConnectionState::LiveUnavailable { turn_id } => ("liveUnavailable", turn_id, None),
            ConnectionState::Failed { turn_id } => ("failed", turn_id, None),
        };
        let mut o = Object::open(out);
        o.member("status", status);
        if let ConnectionState::Reconnecting {
            attempt,
            next_at_ms,
            ..
        } = self
        {
            o.member("attempt", attempt);
            o.member("nextAtMs", next_at_ms);
        }
        o.member("turnId", turn_id);
        if let Some((silent_ms, silent_since_ms, stalled)) = silence {
            o.member("silentMs", silent_ms);
            o.member("silentSinceMs", silent_since_ms);
            o.member("stalled", stalled);
        }
        o.close();
    }
}

encode_struct!(ReportedWarning {
    code: "code",
    message: "message",
});

encode_struct!(CoreChanges<'a> {
    session_id: "sessionId",
    drain: "drain",
    order: "order" => skip_none,
    turns: "turns" => skip_empty,
    cursors: "cursors" => skip_empty,
    items: "items" => skip_empty,
    pending: "pending" => skip_none,
    threads: "threads" => skip_none,
    usage: "usage" => skip_none,
    connection: "connection" => skip_none,
    error: "error",
    warnings: "warnings" => skip_empty,
});

impl Encode for ErrorCode {
    fn encode(&self, out: &mut String) {
        self.as_str().encode(out);
    }
}

encode_struct!(SessionError {
    code: "code",
    message: "message",
    retryable: "retryable",
    status: "status" => skip_none,
});

encode_struct!(LoggedFrame {
    turn_id: "turnId",
    sequence_number: "sequenceNumber",
    event_type: "eventType",
    thread_id: "threadId",
    id: "id",
    bytes: "bytes",
    at_ms: "atMs",
});
