//! The view crossing into JS: `snapshot()` (everything) and `takeChanges()` (only what a change
//! set names) share one shape, so the TS `SnapshotStore` has a single patch routine. Cost per
//! drain is O(changed items), never O(history); a message that only gained text since the last
//! drain costs O(new text): it crosses as `append` (the suffixes) instead of the whole item.
//! Each drain is numbered (`drain`), so a consumer can tell whether an `append` is relative to
//! the copy it holds.
use forgestream_core::reduce::{ChangeSet, ContentView, ItemBody, ItemView, TextAppend, TurnView};
use forgestream_core::resume::ConnectionStatus;
use serde::Serialize;
use wasm_bindgen::JsValue;

use forgestream_core::session::{ErrorCode, Session, SessionError as SdkError};

/// A turn without its items, plus the item keys in stream order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TurnHeader<'a> {
    turn_id: &'a str,
    previous_turn_id: Option<&'a str>,
    status: &'a forgestream_core::reduce::TurnStatus,
    cancel_reason: Option<&'a str>,
    error_message: Option<&'a str>,
    input: Option<&'a serde_json::Value>,
    created_at: Option<&'a str>,
    completed_at: Option<&'a str>,
    usage: &'a forgestream_core::reduce::UsageView,
    last_sequence_number: Option<u64>,
    late_events_ignored: u64,
    version: u64,
    item_keys: Vec<&'a str>,
}

impl<'a> TurnHeader<'a> {
    fn of(t: &'a TurnView) -> Self {
        TurnHeader {
            turn_id: &t.turn_id,
            previous_turn_id: t.previous_turn_id.as_deref(),
            status: &t.status,
            cancel_reason: t.cancel_reason.as_deref(),
            error_message: t.error_message.as_deref(),
            input: t.input.as_ref(),
            created_at: t.created_at.as_deref(),
            completed_at: t.completed_at.as_deref(),
            usage: &t.usage,
            last_sequence_number: t.last_sequence_number,
            late_events_ignored: t.late_events_ignored,
            version: t.version,
            item_keys: t.items.keys().map(String::as_str).collect(),
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ItemOut<'a> {
    turn_id: &'a str,
    key: &'a str,
    removed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a ItemView>,
    /// Instead of `value` when the item only gained text since the last drain.
    #[serde(skip_serializing_if = "Option::is_none")]
    append: Option<AppendOut<'a>>,
}

/// A message that only grew since the consumer's copy (at `base_version`): the new text of each
/// field (absent: unchanged) and the new version. The TS layer builds the new item as the old
/// one plus these suffixes, so a long streaming message costs O(new text) per drain, not O(all).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AppendOut<'a> {
    base_version: u64,
    version: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    content: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    refusal: Option<&'a str>,
}

/// The text `item` gained after `at`, or `None` when it cannot be described as a pure append
/// (then the whole item is sent). Re-checked here against the item itself, so a stale or
/// inconsistent description degrades to a full item, never to a wrong view.
fn append_of(item: &ItemView, at: TextAppend) -> Option<AppendOut<'_>> {
    let ItemBody::Message(m) = &item.body else {
        return None;
    };
    fn suffix(text: Option<&str>, from: usize) -> Option<Option<&str>> {
        let rest = text.unwrap_or_default().get(from..)?;
        Some((!rest.is_empty()).then_some(rest))
    }
    let content = match &m.content {
        None => None,
        Some(ContentView::Text(text)) => Some(text.as_str()),
        Some(ContentView::Parts(_)) => return None,
    };
    Some(AppendOut {
        base_version: at.base_version,
        version: item.version,
        content: suffix(content, at.content_from)?,
        reasoning: suffix(m.reasoning.as_deref(), at.reasoning_from)?,
        refusal: suffix(m.refusal.as_deref(), at.refusal_from)?,
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Connection<'a> {
    status: &'static str,
    turn_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    attempt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_at_ms: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ErrorOut<'a> {
    code: &'static str,
    message: &'a str,
    retryable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<u16>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Out<'a> {
    session_id: &'a str,
    /// Which drain this is (1, 2, …): a consumer that sees a gap knows another drain took
    /// changes it never saw, and that `append`s are not relative to its copy.
    drain: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    order: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    turns: Vec<TurnHeader<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    items: Vec<ItemOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pending: Option<&'a [forgestream_core::reduce::PendingAction]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    threads: Option<Vec<&'a forgestream_core::reduce::ThreadView>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    usage: Option<&'a forgestream_core::reduce::UsageView>,
    connection: Connection<'a>,
    error: Option<ErrorOut<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    warnings: Vec<WarningOut>,
}

#[derive(Serialize)]
struct WarningOut {
    code: String,
    message: String,
}

fn connection(session: &Session) -> Connection<'_> {
    let view = session.connection();
    let (status, attempt, next_at_ms) = match view.status {
        None => ("idle", None, None),
        Some(ConnectionStatus::Connecting) => ("connecting", None, None),
        Some(ConnectionStatus::Live) => ("live", None, None),
        Some(ConnectionStatus::Reconnecting {
            attempt,
            next_at_ms,
        }) => ("reconnecting", Some(*attempt), Some(*next_at_ms)),
        Some(ConnectionStatus::Rebuilding) => ("rebuilding", None, None),
        Some(ConnectionStatus::Offline) => ("offline", None, None),
        Some(ConnectionStatus::Done) => ("done", None, None),
        Some(ConnectionStatus::LiveUnavailable) => ("liveUnavailable", None, None),
        Some(ConnectionStatus::Failed(_)) => ("failed", None, None),
    };
    Connection {
        status,
        turn_id: view.turn_id,
        attempt,
        next_at_ms,
    }
}

fn error(session: &Session) -> Option<ErrorOut<'_>> {
    let e = session.error()?;
    Some(ErrorOut {
        code: e.code.as_str(),
        message: &e.message,
        retryable: e.retryable,
        status: e.status,
    })
}

/// The envelope in one `JSON.parse`, then each item in its own. Items hold the whole text of
/// their messages, so one text for everything was the size of the view (and twice that while
/// its buffer grew), raising the wasm memory high-water, which never comes down; per item, the
/// largest buffer is one item. Same JS value as parsing one text.
fn to_js(mut out: Out<'_>) -> Result<JsValue, SdkError> {
    let items = std::mem::take(&mut out.items);
    let envelope = json_to_js(&out)?;
    if !items.is_empty() {
        let array = js_sys::Array::new_with_length(u32::try_from(items.len()).unwrap_or(u32::MAX));
        for (index, item) in (0u32..).zip(&items) {
            array.set(index, json_to_js(item)?);
        }
        js_sys::Reflect::set(&envelope, &JsValue::from_str("items"), &array).map_err(|_| {
            SdkError::new(
                ErrorCode::InvalidResponse,
                "view serialisation failed: items",
            )
        })?;
    }
    Ok(envelope)
}

/// Serialises `value` with serde_json and hands it to `JSON.parse`: one boundary crossing for the
/// whole change set (faster than building objects field by field through the boundary, and no
/// second serializer in the wasm).
pub fn json_to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, SdkError> {
    let text = serde_json::to_string(value).map_err(|e| {
        SdkError::new(
            ErrorCode::Internal,
            format!("view serialisation failed: {e}"),
        )
    })?;
    js_sys::JSON::parse(&text).map_err(|_| {
        SdkError::new(
            ErrorCode::Internal,
            "view serialisation produced invalid JSON",
        )
    })
}

fn warnings(changes: &ChangeSet, extra: &[(String, String)]) -> Vec<WarningOut> {
    let mut out: Vec<WarningOut> = changes
        .warnings
        .iter()
        .map(|w| WarningOut {
            code: "protocol".into(),
            message: serde_json::to_string(w).unwrap_or_default(),
        })
        .collect();
    out.extend(extra.iter().map(|(code, message)| WarningOut {
        code: code.clone(),
        message: message.clone(),
    }));
    out
}

/// Everything: every turn header and item, pending set, threads, usage, connection.
/// `changes` / `extra_warnings`: what was pending since the last drain; only their warnings are
/// carried (the view is whole), so a warning raised before the first snapshot (a corrupt
/// checkpoint read by `restore()`) still reaches the app.
pub fn full(
    session: &Session,
    changes: &ChangeSet,
    extra_warnings: &[(String, String)],
) -> Result<JsValue, SdkError> {
    let view = session.view();
    let out = Out {
        session_id: session.id(),
        drain: session.drains(),
        order: Some(view.turn_ids()),
        turns: view.turns().map(TurnHeader::of).collect(),
        items: view
            .turns()
            .flat_map(|t| {
                t.items.values().map(move |item| ItemOut {
                    turn_id: &t.turn_id,
                    key: &item.key,
                    removed: false,
                    value: Some(item),
                    append: None,
                })
            })
            .collect(),
        pending: Some(view.pending_actions()),
        threads: Some(view.threads().values().collect()),
        usage: Some(view.usage()),
        connection: connection(session),
        error: error(session),
        warnings: warnings(changes, extra_warnings),
    };
    to_js(out)
}

/// Only what `changes` names (plus the connection badge and error, which are tiny).
pub fn changes(
    session: &Session,
    changes: &ChangeSet,
    extra_warnings: &[(String, String)],
) -> Result<JsValue, SdkError> {
    let view = session.view();
    // Turns whose header or items changed, each once, in first-change order.
    let mut seen = std::collections::BTreeSet::new();
    let turn_ids: Vec<&str> = changes
        .turns
        .iter()
        .map(String::as_str)
        .chain(changes.items.iter().map(|i| i.turn_id.as_str()))
        .filter(|id| seen.insert(*id))
        .collect();
    let out = Out {
        session_id: session.id(),
        drain: session.drains(),
        order: changes.order_changed.then(|| view.turn_ids()),
        turns: turn_ids
            .iter()
            .filter_map(|id| view.turn(id))
            .map(TurnHeader::of)
            .collect(),
        items: changes
            .items
            .iter()
            .map(|c| {
                let value = if c.removed {
                    None
                } else {
                    view.item(&c.turn_id, &c.key)
                };
                let append = value.zip(c.appended).and_then(|(v, at)| append_of(v, at));
                ItemOut {
                    turn_id: &c.turn_id,
                    key: &c.key,
                    removed: value.is_none(),
                    value: value.filter(|_| append.is_none()),
                    append,
                }
            })
            .collect(),
        pending: changes.pending_changed.then(|| view.pending_actions()),
        threads: changes
            .threads_changed
            .then(|| view.threads().values().collect()),
        usage: changes.usage_changed.then(|| view.usage()),
        connection: connection(session),
        error: error(session),
        warnings: warnings(changes, extra_warnings),
    };
    to_js(out)
}

/// The reducer's canonical digest of the session (`SessionView::summary`), for evaluators.
pub fn export_events(session: &Session) -> Result<JsValue, SdkError> {
    json_to_js(&session.view().summary())
}
