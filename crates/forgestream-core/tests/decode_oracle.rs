//! The hand-written decoder (`wire::json`, `wire::decode`) against serde's derives on the same
//! types, the oracle: on every input both accept to the same value, or both refuse.
//!
//! Inputs: every JSON body and SSE `data` of the recorded real TrueForge streams, then the same
//! objects mutated at random (a member dropped, its value replaced by another JSON type, an
//! unknown member added, the members shuffled, a member written twice), and random JSON texts
//! (numbers at the edges of `u64`/`i64`/`f64`, escapes, lone surrogates, deep nesting, bad
//! syntax) for the reader itself.
//!
//! The decoder's two deliberate differences are allowed here and nowhere else: a struct written
//! as a JSON array (serde's positional form) is refused, and floats are read correctly rounded
//! (serde_json's default parser is off by an ulp at times), so floats compare within 1e-15.

mod support;

use forgestream_core::respond::Decision;
use forgestream_core::session::checkpoint::index::Index;
use forgestream_core::session::checkpoint::Checkpoint;
use forgestream_core::session::ClientOptions;
use forgestream_core::wire::{
    self, json, ErrorBody, Event, Listing, SessionEventsPage, Single, Turn,
};
use proptest::prelude::*;
use serde_json::Value;

/// Both decoders on one text: the same value (floats within 1e-15), or both an error.
fn agree<T>(text: &str) -> Result<(), String>
where
    T: json::Decode + serde::de::DeserializeOwned + serde::Serialize + PartialEq + std::fmt::Debug,
{
    judge::<T>(text, |a, b| {
        a == b
            || close(
                &serde_json::to_value(a).unwrap(),
                &serde_json::to_value(b).unwrap(),
            )
    })
}

/// [`agree`] for the SDK's own records and options: exact (their samples and edits hold only
/// short decimals), so no `Serialize` needed.
fn agree_exact<T>(text: &str) -> Result<(), String>
where
    T: json::Decode + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    judge::<T>(text, |a, b| a == b)
}

/// Decodes `text` both ways and compares the values with `same`.
fn judge<T>(text: &str, same: impl Fn(&T, &T) -> bool) -> Result<(), String>
where
    T: json::Decode + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let ours = json::from_str::<T>(text);
    let oracle = serde_json::from_str::<T>(text);
    match (&ours, &oracle) {
        (Ok(a), Ok(b)) if same(a, b) => Ok(()),
        (Err(_), Err(_)) => Ok(()),
        // A struct written as an array: the error stands at a `[` where an object was expected.
        (Err(e), Ok(_))
            if e.to_string().starts_with("invalid type: expected")
                && text[e.offset()..].starts_with('[') =>
        {
            Ok(())
        }
        _ => Err(format!(
            "{}: ours {ours:?}, serde {oracle:?}\n  on {text}",
            std::any::type_name::<T>()
        )),
    }
}

/// The app's options and decisions (through `JSON.stringify`) and the stored records.
fn agree_sdk(text: &str) -> Result<(), String> {
    agree_exact::<ClientOptions>(text)?;
    agree_exact::<Vec<Decision>>(text)?;
    agree_exact::<Checkpoint>(text)?;
    agree_exact::<Index>(text)
}

/// Samples of the SDK's own JSON: options, decisions, a checkpoint, an index.
const SDK_SAMPLES: &[&str] = &[
    r#"{"baseUrl":"http://127.0.0.1:8080","flavor":"trueforge","credentials":"same-origin","transport":"fetch","storage":"memory","storageNamespace":"app","reconnect":{"baseDelayMs":500,"minDelayMs":250,"maxDelayMs":30000,"idleTimeoutMs":45000,"maxAttempts":8,"healthyAfterMs":10000,"maxIdleTimeoutMs":180000,"stalledAfterCycles":2,"createLookupBudgetMs":10000},"maxFrameBytes":1048576,"inspect":true,"maxMessageTextBytes":65536,"maxTurnTextBytes":262144}"#,
    r#"{"flavor":"gateway","credentials":"include","transport":"eventsource","storage":"session","appOnly":{"x":[1,2]}}"#,
    r#"[{"kind":"allow","toolCallId":"call_1"},{"kind":"deny","toolCallId":"call_2","reason":"no"},{"kind":"answer","toolCallId":"call_3","content":"yes"},{"kind":"authDone"},{"toolCallId":"call_4","kind":"deny","reason":null}]"#,
    r#"{"v":1,"sessionId":"01m8aaaaaaaaaaaaaaaaaaaaaa","turnId":"01m8bbbbbbbbbbbbbbbbbbbbbb.e1","seq":42,"savedAt":1764000000000,"creating":{"after":null}}"#,
    r#"{"v":1,"sessionId":"s1","turnId":null,"seq":0,"savedAt":1}"#,
    r#"{"v":1,"sessions":[{"id":"s1","savedAt":5},{"id":"s2","savedAt":4}]}"#,
];

#[test]
fn the_sdk_records_and_options_decode_as_serde_does() {
    for text in SDK_SAMPLES {
        agree_sdk(text).unwrap();
    }
    assert!(json::from_str::<ClientOptions>(SDK_SAMPLES[0]).is_ok());
    assert_eq!(
        json::from_str::<Vec<Decision>>(SDK_SAMPLES[2])
            .unwrap()
            .len(),
        5
    );
    assert!(json::from_str::<Checkpoint>(SDK_SAMPLES[3]).is_ok());
    assert!(json::from_str::<Index>(SDK_SAMPLES[5]).is_ok());
}

/// Equal values, floats within a relative 1e-15.
fn close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() && y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-15 * x.abs().max(y.abs())
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx == ky && close(x, y))
        }
        _ => a == b,
    }
}

/// Every decodable shape the SDK reads.
fn agree_all(text: &str) -> Result<(), String> {
    agree::<Event>(text)?;
    agree::<Turn>(text)?;
    agree::<Single<Turn>>(text)?;
    agree::<Listing<Turn>>(text)?;
    agree::<Listing<Event>>(text)?;
    agree::<SessionEventsPage>(text)?;
    agree::<ErrorBody>(text)?;
    agree::<wire::TurnState>(text)?;
    agree::<wire::ModelMessage>(text)?;
    agree::<Value>(text)?;
    agree::<wire::ToolInfo>(text)?;
    // `json::check` (validity without building the value) answers as reading a value does.
    let (checked, read) = (json::check(text), json::from_str::<Value>(text));
    if checked != read.as_ref().map(|_| ()).map_err(Clone::clone) {
        return Err(format!("check {checked:?} but value {read:?}: {text}"));
    }
    agree_sdk(text)
}

/// `tool_info` read in place (the known kinds) and through a value (the rest) both classify
/// as serde does: repeated keys (the last counts), fields that are not strings, escapes,
/// unknown kinds, and not an object at all.
#[test]
fn tool_info_is_classified_as_serde_does() {
    for text in [
        r#"{"type":"mcp","server_id":"orders","server_name":"Orders","name":"get_order"}"#,
        r#"{"name":"x","type":"truefoundry-system","extra":[1,{"a":null}]}"#,
        r#"{"type":"truefoundry-system"}"#,
        r#"{"type":"mcp","name":"a"}"#,
        r#"{"type":"mcp","server_id":7,"server_name":"s","name":"n"}"#,
        r#"{"type":"mcp","server_id":"a","server_id":7,"server_name":"s","name":"n"}"#,
        r#"{"type":"mcp","server_id":7,"server_id":"a","server_name":"s","name":"n"}"#,
        r#"{"type":"truefoundry-system","name":"caf\u00e9 \"q\""}"#,
        r#"{"type":"m\u0063p","server_id":"","server_name":"","name":""}"#,
        r#"{"type":"mcp","type":"other","name":"n"}"#,
        r#"{"type":7,"name":"n"}"#,
        r#"{"type":"sandbox","name":"n","cpu":2}"#,
        r#"{"type":"mcp","name":"n","x":1e999}"#,
        r#"{"type":"mcp","name":"\ud800"}"#,
        r#"{"type":"mcp","name":"n""#,
        r#""mcp""#,
        r#"[]"#,
        r#"{}"#,
    ] {
        agree::<wire::ToolInfo>(text).unwrap();
    }
}

/// The recorded corpus: whole JSON bodies and every SSE `data` line.
fn corpus() -> Vec<String> {
    let texts = support::recorded_texts();
    assert!(texts.len() > 200, "only {} corpus texts", texts.len());
    texts
}

#[test]
fn the_recorded_corpus_decodes_as_serde_does() {
    let mut decoded = 0;
    for text in corpus() {
        agree_all(&text).unwrap();
        // And not only as two errors: each text is one of the shapes.
        let as_any = json::from_str::<Event>(&text).is_ok()
            || json::from_str::<SessionEventsPage>(&text).is_ok()
            || json::from_str::<Listing<Turn>>(&text).is_ok()
            || json::from_str::<Listing<Event>>(&text).is_ok()
            || json::from_str::<Single<Turn>>(&text).is_ok()
            || json::from_str::<Value>(&text).is_ok();
        assert!(as_any, "{text}");
        if json::from_str::<Event>(&text).is_ok() {
            decoded += 1;
        }
    }
    assert!(decoded > 200, "only {decoded} events decoded");
}

/// A JSON value of any type, small.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        // Quarters: short decimals that every float parser reads exactly (the records' and
        // options' comparison has no float tolerance; `json_text` covers long floats).
        (-4_000_000i32..4_000_000).prop_map(|q| Value::from(f64::from(q) / 4.0)),
        "[a-z.\\-_ ]{0,8}".prop_map(Value::String),
        prop_oneof![
            Just("done"),
            Just("running"),
            Just("cancelled"),
            Just("error"),
            Just("turn.done"),
            Just("model.message"),
            Just("model.message.delta"),
            Just("tool.response"),
            Just("text"),
            Just("mcp"),
        ]
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,6}", inner), 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// One random edit of a value's object tree, at a random path. The returned text may also hold a
/// member written twice (serde_json's `Value` cannot, so that edit works on the text).
#[derive(Debug, Clone)]
enum Edit {
    Drop(usize),
    Replace(usize, Value),
    Add(String, Value),
    Duplicate(usize),
    Reverse,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Drop),
        (any::<usize>(), any_value()).prop_map(|(i, v)| Edit::Replace(i, v)),
        ("[a-z_]{1,8}", any_value()).prop_map(|(k, v)| Edit::Add(k, v)),
        any::<usize>().prop_map(Edit::Duplicate),
        Just(Edit::Reverse),
    ]
}

/// Applies `edit` to the object found by following `path` (indexes into members / elements).
fn mutate(value: &Value, path: &[usize], edit: &Edit) -> String {
    // Walk down while there is structure.
    let mut pointer = String::new();
    let mut at = value;
    for step in path {
        let next = match at {
            Value::Object(map) if !map.is_empty() => {
                let (key, child) = map.iter().nth(step % map.len()).unwrap();
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
                child
            }
            Value::Array(items) if !items.is_empty() => {
                let i = step % items.len();
                pointer.push_str(&format!("/{i}"));
                &items[i]
            }
            _ => break,
        };
        if !(next.is_object() || next.is_array()) {
            break;
        }
        at = next;
    }
    let mut root = value.clone();
    let target = root.pointer_mut(&pointer).unwrap();
    let mut duplicate = None;
    match (target, edit) {
        (Value::Object(map), Edit::Drop(i)) if !map.is_empty() => {
            let key = map.keys().nth(i % map.len()).unwrap().clone();
            map.remove(&key);
        }
        (Value::Object(map), Edit::Replace(i, v)) if !map.is_empty() => {
            let key = map.keys().nth(i % map.len()).unwrap().clone();
            map.insert(key, v.clone());
        }
        (Value::Object(map), Edit::Add(k, v)) => {
            map.insert(k.clone(), v.clone());
        }
        (Value::Object(map), Edit::Duplicate(i)) if !map.is_empty() => {
            let (key, v) = map.iter().nth(i % map.len()).unwrap();
            duplicate = Some((pointer.clone(), key.clone(), v.clone()));
        }
        (Value::Array(items), Edit::Drop(i)) if !items.is_empty() => {
            let i = i % items.len();
            items.remove(i);
        }
        (Value::Array(items), Edit::Replace(i, v)) if !items.is_empty() => {
            let i = i % items.len();
            items[i] = v.clone();
        }
        (Value::Array(items), Edit::Reverse) => items.reverse(),
        (Value::Object(_), Edit::Reverse) => {
            // Members out of the server's order (the tag not first): write them reversed.
            return reversed_text(&root);
        }
        _ => {}
    }
    let text = root.to_string();
    match duplicate {
        // Write `"key":value` a second time at the end of the object found at `pointer`, by
        // rewriting that object's text with the extra member.
        Some((pointer, key, v)) => {
            let object = root.pointer(&pointer).unwrap().to_string();
            let extra = format!(
                "{},{}:{}}}",
                &object[..object.len() - 1],
                Value::String(key),
                v
            );
            text.replacen(&object, &extra, 1)
        }
        None => text,
    }
}

/// `text` after each of `edits` in turn (an edit that made it invalid JSON ends the chain).
fn edited(mut text: String, path: &[usize], edits: &[Edit]) -> String {
    for edit in edits {
        let Ok(current) = serde_json::from_str::<Value>(&text) else {
            break;
        };
        text = mutate(&current, path, edit);
    }
    text
}

/// The value's text with every object's members in reverse order.
fn reversed_text(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .rev()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), reversed_text(v)))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(reversed_text).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// A random JSON-ish text for the reader: valid values, edge numbers, escapes, bad syntax.
fn json_text() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("fals".to_string()),
        Just("0".to_string()),
        Just("-0".to_string()),
        Just("01".to_string()),
        Just("1.".to_string()),
        Just("1.5e3".to_string()),
        Just("-1E-2".to_string()),
        Just("1e400".to_string()),
        Just("18446744073709551615".to_string()),
        Just("18446744073709551616".to_string()),
        Just("-9223372036854775808".to_string()),
        Just("-9223372036854775809".to_string()),
        Just("\"\\ud83d\\ude00\"".to_string()),
        Just("\"\\ud83d\"".to_string()),
        Just("\"\\ude00\"".to_string()),
        Just("\"\\ud83dx\"".to_string()),
        Just("\"a\\u00e9\\n\\t\\/\\\\\"".to_string()),
        Just("\"\\x\"".to_string()),
        Just("\"tab\there\"".to_string()),
        Just("\"\\u12\"".to_string()),
        any::<f64>().prop_map(|f| format!("{f:e}")),
        any::<i64>().prop_map(|i| i.to_string()),
        "\"[a-zé ]{0,5}\"",
    ];
    atom.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec(("[a-z]{1,3}", inner.clone()), 0..4).prop_map(|m| {
                let members: Vec<String> =
                    m.into_iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
            // Broken containers: trailing commas, missing colons, unclosed.
            inner.clone().prop_map(|v| format!("[{v},]")),
            inner.clone().prop_map(|v| format!("{{\"a\" {v}}}")),
            inner.clone().prop_map(|v| format!("[{v}")),
            inner.prop_map(|v| format!(" \n{v}\t ")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn edited_recorded_objects_decode_as_serde_does(
        pick in any::<usize>(),
        path in prop::collection::vec(any::<usize>(), 0..6),
        edits in prop::collection::vec(edit(), 1..3),
    ) {
        let corpus = corpus_values();
        let text = edited(corpus[pick % corpus.len()].to_string(), &path, &edits);
        if let Err(e) = agree_all(&text) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn edited_sdk_records_and_options_decode_as_serde_does(
        pick in any::<usize>(),
        path in prop::collection::vec(any::<usize>(), 0..4),
        edits in prop::collection::vec(edit(), 1..3),
    ) {
        let text = edited(SDK_SAMPLES[pick % SDK_SAMPLES.len()].to_string(), &path, &edits);
        if let Err(e) = agree_sdk(&text) {
            return Err(TestCaseError::fail(e));
        }
    }

    /// Any text at all — and every recorded body cut anywhere, as a dropped connection or a
    /// truncated storage record leaves it — is refused or read as serde reads it, never a panic.
    #[test]
    fn arbitrary_and_truncated_texts_never_panic_and_agree(
        noise in ".{0,64}",
        pick in any::<usize>(),
        cut in any::<usize>(),
    ) {
        let corpus = corpus_texts();
        let body = &corpus[pick % corpus.len()];
        let mut end = cut % (body.len() + 1);
        while !body.is_char_boundary(end) {
            end -= 1;
        }
        for text in [noise.as_str(), &body[..end]] {
            if let Err(e) = agree_all(text) {
                return Err(TestCaseError::fail(e));
            }
        }
    }

    #[test]
    fn random_json_texts_read_as_serde_does(text in json_text()) {
        if let Err(e) = agree_all(&text) {
            return Err(TestCaseError::fail(e));
        }
    }
}

#[test]
fn nesting_is_bounded_as_in_serde_and_never_overflows_the_stack() {
    for depth in [126, 127, 128, 129, 130, 10_000] {
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        agree_all(&text).unwrap();
        let event = format!(
            "{{\"type\":\"tool.response\",\"tool_call_id\":\"c\",\"content\":{}{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        agree_all(&event).unwrap();
        let reordered = format!(
            "{{\"content\":{}{},\"tool_call_id\":\"c\",\"type\":\"tool.response\"}}",
            "{\"a\":".repeat(depth),
            "}".repeat(depth)
        );
        agree::<Event>(&reordered).unwrap();
    }
}

/// The corpus texts, read once per process.
fn corpus_texts() -> &'static [String] {
    static TEXTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(corpus)
}

/// The corpus parsed once per process (proptest calls the body thousands of times).
fn corpus_values() -> &'static [Value] {
    static VALUES: std::sync::OnceLock<Vec<Value>> = std::sync::OnceLock::new();
    VALUES.get_or_init(|| {
        corpus_texts()
            .iter()
            .filter_map(|t| serde_json::from_str(t).ok())
            .collect()
    })
}
