//! The hand-written encoder (`wire::write` and the encoders of the wire, view and session types)
//! against serde_json's `to_string` of the serde derives on the same types, the oracle: the
//! same text, byte for byte — so the same value once parsed (floats included: both write them
//! with the same shortest form), and the same member order, which JS objects keep.
//!
//! Inputs: arbitrary strings (escaping) and JSON values; every event, timeline item and turn
//! state of the recorded real TrueForge streams, and the same objects edited at random (members
//! dropped or replaced, which reaches the kept-raw unknown variants and the skipped `None`s);
//! the views the reducer builds from its golden corpus (`tests/fixtures/reduce`), as the change
//! sets, items, pending actions, threads and summaries that cross to JS; and generated values of
//! the small types with floats, optional members or many variants (usage, the connection badge,
//! errors, warnings, input items, checkpoint records, logged frames).

mod support;

use forgestream_core::reduce::{
    ReducerConfig, SessionView, TextAppend, ThreadView, UsageView, Warning,
};
use forgestream_core::session::checkpoint::index::{Index, IndexEntry};
use forgestream_core::session::{
    Checkpoint, ConnectionState, CoreChanges, CreatingTurn, ErrorCode, ItemAppend, ItemUpdate,
    LoggedFrame, ReportedWarning, SessionError, TurnCursor, TurnHeader,
};
use forgestream_core::wire::write::{self, Encode};
use forgestream_core::wire::{
    self, json, Approval, Event, InputItem, InputPart, SessionEventsPage, Turn, UserContent,
};
use proptest::prelude::*;
use serde::Serialize;
use serde_json::Value;

/// Ours and serde_json's text of `value`: equal, and parsing to equal values.
fn same<T: Encode + Serialize + ?Sized>(value: &T) -> Result<(), String> {
    let ours = write::to_string(value);
    let oracle = serde_json::to_string(value).map_err(|e| e.to_string())?;
    if ours != oracle {
        return Err(format!(
            "{}:\n  ours  {ours}\n  serde {oracle}",
            std::any::type_name::<T>()
        ));
    }
    let parsed: Value = serde_json::from_str(&ours).map_err(|e| format!("{e}: {ours}"))?;
    let expected: Value = serde_json::from_str(&oracle).map_err(|e| e.to_string())?;
    if parsed != expected {
        return Err(format!("values differ: {ours}"));
    }
    Ok(())
}

#[test]
fn a_test_of_the_oracle_can_fail() {
    // A value whose derive and hand encoder disagree must be reported (guards `same` itself).
    struct Wrong;
    impl Encode for Wrong {
        fn encode(&self, out: &mut String) {
            out.push_str("{\"a\":1}");
        }
    }
    impl Serialize for Wrong {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_str("a")
        }
    }
    assert!(same(&Wrong).is_err());
}

// ---- strings and values ----

/// Strings rich in what needs escaping: every control character, quotes, backslashes, DEL,
/// `/`, and non-ASCII (2-, 3- and 4-byte UTF-8).
fn escapable() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap()),
        prop::sample::select(vec![
            '"', '\\', '/', '\u{7f}', 'a', ' ', 'é', '€', '😀', '\u{2028}'
        ]),
        any::<char>(),
    ];
    prop::collection::vec(c, 0..40).prop_map(|cs| cs.into_iter().collect())
}

/// A JSON value of any type, with arbitrary strings, keys and finite floats.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        // Any bits: non-finite ones become `null` (`Value::from`), as serde_json has them.
        any::<f64>().prop_map(Value::from),
        escapable().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((escapable(), inner), 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn strings_are_escaped_as_serde_json_does(text in escapable(), other in any::<String>()) {
        prop_assert_eq!(write::to_string(&text), serde_json::to_string(&text).unwrap());
        prop_assert_eq!(write::to_string(&other), serde_json::to_string(&other).unwrap());
    }

    #[test]
    fn values_and_numbers_are_written_as_serde_json_does(
        value in any_value(),
        float in any::<f64>(),
        int in any::<u64>(),
    ) {
        same(&value).map_err(TestCaseError::fail)?;
        same(&float).map_err(TestCaseError::fail)?;
        same(&Some(float)).map_err(TestCaseError::fail)?;
        same(&int).map_err(TestCaseError::fail)?;
        same(&(int as u32)).map_err(TestCaseError::fail)?;
        same(&(int as usize)).map_err(TestCaseError::fail)?;
    }
}

// ---- the wire: the recorded corpus ----

/// The recorded corpus: whole JSON bodies and every SSE `data` line, parsed.
fn corpus() -> &'static [Value] {
    static VALUES: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    VALUES.get_or_init(|| {
        let texts = support::recorded_texts();
        let values: Vec<Value> = texts
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect();
        assert!(values.len() > 200, "only {} corpus values", values.len());
        values
    })
}

/// Everything the SDK encodes of one wire text (each shape the text decodes as); how many
/// shapes it was.
fn wire_agree(text: &str) -> Result<usize, String> {
    let mut shapes = 0;
    if let Ok(event) = json::from_str::<Event>(text) {
        same(&event)?;
        shapes += 1;
    }
    if let Ok(page) = json::from_str::<SessionEventsPage>(text) {
        same(&page.data)?;
        shapes += 1;
    }
    if let Ok(listing) = json::from_str::<wire::Listing<Event>>(text) {
        same(&listing.data)?;
        shapes += 1;
    }
    for turn in json::from_str::<wire::Single<Turn>>(text)
        .map(|s| vec![s.data])
        .into_iter()
        .chain(json::from_str::<wire::Listing<Turn>>(text).map(|l| l.data))
        .flatten()
    {
        same(&turn.state)?;
        same(&turn.input)?;
        shapes += 1;
    }
    if let Ok(state) = json::from_str::<wire::TurnState>(text) {
        same(&state)?;
        shapes += 1;
    }
    if let Ok(items) = json::from_str::<Vec<InputItem>>(text) {
        same(&items)?;
        shapes += 1;
    }
    Ok(shapes)
}

#[test]
fn the_recorded_corpus_encodes_as_serde_does() {
    let mut events = 0;
    for value in corpus() {
        let text = value.to_string();
        assert!(wire_agree(&text).unwrap() > 0, "no shape: {text}");
        if json::from_str::<Event>(&text).is_ok() {
            events += 1;
        }
    }
    assert!(events > 200, "only {events} events");
}

/// One edit at the `at`-th object member (pre-order): dropped (`None`) or replaced.
fn edit(value: &mut Value, at: &mut usize, with: &Option<Value>) -> bool {
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if *at == 0 {
                    match with {
                        None => map.remove(&key),
                        Some(v) => map.insert(key, v.clone()),
                    };
                    return true;
                }
                *at -= 1;
                if let Some(v) = map.get_mut(&key) {
                    if edit(v, at, with) {
                        return true;
                    }
                }
            }
            false
        }
        Value::Array(items) => items.iter_mut().any(|v| edit(v, at, with)),
        _ => false,
    }
}

/// A replacement likely to keep the object decodable somewhere: another type, a string, an
/// unknown tag, `null`.
fn replacement() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        any_value().prop_map(Some),
        prop::sample::select(vec![
            "text",
            "refusal",
            "mcp",
            "truefoundry-system",
            "file",
            "user.message",
            "user.tool_approval",
            "deny",
            "allow",
            "done",
            "running",
            "error",
            "cancelled",
            "paused?",
            "model.message",
            "turn.done",
            "brand.new",
        ])
        .prop_map(|s| Some(Value::from(s))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn edited_recorded_objects_encode_as_serde_does(
        pick in any::<prop::sample::Index>(),
        edits in prop::collection::vec((0usize..200, replacement()), 1..4),
    ) {
        let mut value = pick.get(corpus()).clone();
        for (at, with) in &edits {
            let mut at = *at;
            edit(&mut value, &mut at, with);
        }
        wire_agree(&value.to_string()).map_err(TestCaseError::fail)?;
    }
}

// ---- input items (request bodies) ----

fn input_item() -> impl Strategy<Value = InputItem> {
    let part = prop_oneof![
        escapable().prop_map(|text| InputPart::Text { text }),
        (escapable(), escapable()).prop_map(|(name, data)| InputPart::File { name, data }),
        any_value().prop_map(|raw| InputPart::Unknown {
            part_type: String::new(),
            raw
        }),
    ];
    let content = prop_oneof![
        escapable().prop_map(UserContent::Text),
        prop::collection::vec(part, 0..4).prop_map(UserContent::Parts),
    ];
    let approval = prop_oneof![
        Just(Approval::Allow),
        prop::option::of(escapable()).prop_map(|reason| Approval::Deny { reason }),
    ];
    prop_oneof![
        content.prop_map(|content| InputItem::UserMessage { content }),
        (escapable(), escapable(), approval).prop_map(|(thread_id, tool_call_id, approval)| {
            InputItem::ToolApproval {
                thread_id,
                tool_call_id,
                approval,
            }
        }),
        (escapable(), escapable(), escapable()).prop_map(|(thread_id, tool_call_id, content)| {
            InputItem::ToolResponse {
                thread_id,
                tool_call_id,
                content,
            }
        }),
        any_value().prop_map(|raw| InputItem::Unknown {
            item_type: String::new(),
            raw
        }),
    ]
}

// ---- the view: the reducer's golden corpus ----

/// The views of every reducer fixture.
fn views() -> Vec<(String, SessionView)> {
    let names = support::reduce_fixture_paths();
    names
        .iter()
        .map(|path| {
            let fixture: Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let steps = fixture["steps"].as_array().cloned().unwrap_or_default();
            let mut config = ReducerConfig::default();
            if let Some(cap) = fixture
                .pointer("/config/max_events_per_turn")
                .and_then(Value::as_u64)
            {
                config.max_events_per_turn = cap as usize;
            }
            let out = support::run_steps("s", config, &steps);
            (path.display().to_string(), out.view)
        })
        .collect()
}

/// The change set of everything in `view`, as `Session::full_changes` builds it, with `error`
/// and `warnings` given.
fn full<'a>(
    view: &'a SessionView,
    error: Option<&'a SessionError>,
    warnings: Vec<ReportedWarning>,
) -> CoreChanges<'a> {
    CoreChanges {
        session_id: "s",
        drain: 3,
        order: Some(view.turn_ids()),
        turns: view.turns().map(TurnHeader::of).collect(),
        cursors: view
            .turns()
            .map(|t| TurnCursor {
                turn_id: &t.turn_id,
                version: t.version,
                last_sequence_number: t.last_sequence_number(),
            })
            .collect(),
        items: view
            .turns()
            .flat_map(|t| {
                t.items.values().map(move |item| ItemUpdate {
                    turn_id: &t.turn_id,
                    key: &item.key,
                    removed: false,
                    value: Some(item),
                    append: ItemAppend::of(
                        item,
                        TextAppend {
                            base_version: 0,
                            content_from: 1,
                            reasoning_from: 0,
                            refusal_from: 0,
                        },
                    ),
                })
            })
            .collect(),
        pending: Some(view.pending_actions()),
        threads: Some(view.threads().values().collect()),
        usage: Some(view.usage()),
        connection: Some(ConnectionState::Live {
            turn_id: view.turn_ids().last().map(|id| id.as_str()),
            silent_ms: None,
            silent_since_ms: Some(7),
            stalled: false,
        }),
        error,
        warnings,
    }
}

#[test]
fn the_views_of_the_reducer_corpus_encode_as_serde_does() {
    let views = views();
    assert!(views.len() >= 30, "only {} views", views.len());
    let mut items = 0;
    for (name, view) in &views {
        let check = |r: Result<(), String>| r.unwrap_or_else(|e| panic!("{name}: {e}"));
        let warnings: Vec<ReportedWarning> = view
            .warnings()
            .iter()
            .map(|w| ReportedWarning {
                code: "protocol".into(),
                message: write::to_string(w),
            })
            .collect();
        for w in view.warnings() {
            check(same(w));
        }
        let error = SessionError::http(503, br#"{"error":{"message":"busy \"now\""}}"#);
        check(same(&full(view, Some(&error), warnings)));
        check(same(&full(view, None, Vec::new())));
        // The empty change set: every skipped member left out.
        let mut empty = full(view, None, Vec::new());
        empty.order = None;
        empty.turns.clear();
        empty.cursors.clear();
        empty.items.clear();
        empty.pending = None;
        empty.threads = None;
        empty.usage = None;
        empty.connection = None;
        check(same(&empty));
        for turn in view.turns() {
            for item in turn.items.values() {
                check(same(item));
                items += 1;
            }
        }
        let threads: Vec<&ThreadView> = view.threads().values().collect();
        check(same(&threads));
        check(same(&view.summary()));
    }
    assert!(items > 100, "only {items} items");
}

// ---- small types, generated ----

fn usage() -> impl Strategy<Value = UsageView> {
    (
        prop::array::uniform6(any::<u64>()),
        prop::option::of(any::<f64>()),
        prop::array::uniform5(any::<u64>()),
    )
        .prop_map(|(n, cost_usd, b)| {
            let mut u = UsageView {
                input_tokens: n[0],
                output_tokens: n[1],
                total_tokens: n[2],
                cache_read_tokens: n[3],
                cache_write_tokens: n[4],
                reasoning_tokens: n[5],
                cost_usd,
                ..UsageView::default()
            };
            u.breakdown.harness = b[0];
            u.breakdown.skills = b[1];
            u.breakdown.instructions = b[2];
            u.breakdown.tool_definitions = b[3];
            u.breakdown.messages = b[4];
            u
        })
}

const CODES: [ErrorCode; 14] = [
    ErrorCode::Network,
    ErrorCode::OutcomeUnknown,
    ErrorCode::Http,
    ErrorCode::Auth,
    ErrorCode::Forbidden,
    ErrorCode::NotFound,
    ErrorCode::Conflict,
    ErrorCode::Protocol,
    ErrorCode::TurnRunning,
    ErrorCode::InvalidResponse,
    ErrorCode::Storage,
    ErrorCode::Aborted,
    ErrorCode::InvalidInput,
    ErrorCode::Internal,
];

/// Every badge, built from `which`, the optional turn, the silence members and the attempt.
fn badge(
    which: usize,
    turn_id: Option<&str>,
    silent_ms: Option<u64>,
    silent_since_ms: Option<u64>,
    stalled: bool,
    attempt: u32,
) -> ConnectionState<'_> {
    match which % 10 {
        0 => ConnectionState::Idle { turn_id },
        1 => ConnectionState::Loading { turn_id },
        2 => ConnectionState::Connecting {
            turn_id,
            silent_ms,
            silent_since_ms,
            stalled,
        },
        3 => ConnectionState::Live {
            turn_id,
            silent_ms,
            silent_since_ms,
            stalled,
        },
        4 => ConnectionState::Reconnecting {
            attempt,
            next_at_ms: u64::from(attempt) * 1000,
            turn_id,
            silent_ms,
            silent_since_ms,
            stalled,
        },
        5 => ConnectionState::Rebuilding { turn_id },
        6 => ConnectionState::Offline {
            turn_id,
            silent_ms,
            silent_since_ms,
            stalled,
        },
        7 => ConnectionState::Done { turn_id },
        8 => ConnectionState::LiveUnavailable { turn_id },
        _ => ConnectionState::Failed { turn_id },
    }
}

fn warning(which: usize, a: String, b: String, n: u64) -> Warning {
    match which % 7 {
        0 => Warning::OrphanDeltasDropped {
            turn_id: a,
            message_id: b,
            count: n,
        },
        1 => Warning::EventAfterTurnDone {
            turn_id: a,
            event_type: b,
        },
        2 => Warning::SequenceGap {
            turn_id: a,
            expected: n,
            received: n / 2,
        },
        3 => Warning::UnfinishedMessageInterrupted {
            turn_id: a,
            message_id: b,
        },
        4 => Warning::UnfinishedMessageDiscarded {
            turn_id: a,
            message_id: b,
        },
        5 => Warning::ArgumentsUnparsed {
            turn_id: a,
            message_id: b.clone(),
            tool_call_id: b,
        },
        _ => Warning::EventSkipped {
            turn_id: a,
            reason: b,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn small_types_encode_as_serde_does(
        u in usage(),
        which in any::<usize>(),
        a in escapable(),
        b in prop::option::of(escapable()),
        n in prop::option::of(any::<u64>()),
        m in prop::option::of(any::<u64>()),
        flag in any::<bool>(),
        attempt in any::<u32>(),
        status in prop::option::of(any::<u16>()),
        items in prop::collection::vec(input_item(), 0..4),
    ) {
        let ok = |r: Result<(), String>| r.map_err(TestCaseError::fail);
        ok(same(&u))?;
        ok(same(&badge(which, b.as_deref(), n, m, flag, attempt)))?;
        ok(same(&warning(which, a.clone(), b.clone().unwrap_or_default(), n.unwrap_or(0))))?;
        let mut error = SessionError::new(CODES[which % CODES.len()], a.clone());
        error.status = status;
        error.retryable = flag;
        ok(same(&error))?;
        ok(same(&ReportedWarning { code: a.clone(), message: b.clone().unwrap_or_default() }))?;
        ok(same(&items))?;
        ok(same(&ItemAppend {
            base_version: n.unwrap_or(0),
            version: m.unwrap_or(1),
            content: b.as_deref(),
            reasoning: b.as_deref().filter(|_| flag),
            refusal: Some(a.as_str()).filter(|_| !flag),
        }))?;
        ok(same(&LoggedFrame {
            turn_id: a.clone(),
            sequence_number: n,
            event_type: b.clone().unwrap_or_default(),
            thread_id: b.clone(),
            id: b.clone().filter(|_| flag),
            bytes: which,
            at_ms: m.unwrap_or(0),
        }))?;
        let record = Checkpoint {
            v: attempt,
            session_id: a.clone(),
            turn_id: b.clone(),
            seq: n.unwrap_or(0),
            saved_at: m.unwrap_or(0),
            creating: flag.then(|| CreatingTurn { after: b.clone() }),
        };
        ok(same(&record))?;
        ok(same(&Index {
            v: attempt,
            sessions: vec![IndexEntry { id: a.clone(), saved_at: n.unwrap_or(0) }; which % 3],
        }))?;
    }
}
