//! The browser SDK against the emulator, in headless Chromium and Firefox:
//! `wasm-pack test --headless --chrome crates/forgestream-web` (or `--firefox`; scripts/test runs
//! both, starts the emulator and passes its URL in `FORGESTREAM_URL`).
#![cfg(target_arch = "wasm32")]
mod support;

use support::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn version_matches_the_crate() {
    assert_eq!(forgestream_web::version(), env!("CARGO_PKG_VERSION"));
}

/// A request that gets no response is the same error in every engine: code `network`,
/// retryable, and a message in the SDK's words with the engine's text after it (Chromium says
/// `Failed to fetch`, Firefox `NetworkError when attempting to fetch resource.`).
#[wasm_bindgen_test]
async fn a_request_without_a_response_is_the_same_error_in_every_engine() {
    let o = options("memory", "trueforge", "fetch", None);
    // Port 9 (discard): browsers refuse to connect to it, so no server can ever answer.
    set(&o, "baseUrl", "http://127.0.0.1:9");
    let client = forgestream_web::client::WasmClient::new(o).unwrap();
    let error = match client
        .open_new_session(r#"{"agent":{"name":"support"}}"#)
        .await
    {
        Ok(_) => panic!("a session was created without a server"),
        Err(e) => e,
    };
    assert_eq!(get(&error, "code").as_string().as_deref(), Some("network"));
    assert_eq!(get(&error, "retryable").as_bool(), Some(true));
    let message = get(&error, "message").as_string().unwrap_or_default();
    assert!(
        message.starts_with("request failed before a response (") && message.ends_with(')'),
        "{message}"
    );
}

#[wasm_bindgen_test]
async fn a_live_turn_equals_the_persisted_history() {
    let client = client("memory", None);
    let session = create(&client, "storyteller").await;
    let turn_id = await_js(session.send(message("Tell me a story, 80 words"), false, None))
        .await
        .expect("send");
    assert!(turn_id.as_string().is_some_and(|t| !t.is_empty()));
    wait_status(&session, &["done"], 20_000).await;
    let live = summary(&session);
    assert!(all_text(&live).contains("Il était une fois"), "{live}");
    assert_eq!(live, persisted_summary(&session.id()).await);
}

#[wasm_bindgen_test]
async fn send_refuses_while_a_turn_runs() {
    let client = client("memory", Some("drip-ms=20"));
    let session = create(&client, "storyteller").await;
    await_js(session.send(message("a story, 60 words"), false, None))
        .await
        .expect("send");
    let refused = await_js(session.send(message("again"), false, None))
        .await
        .expect_err("must refuse");
    assert_eq!(
        get(&refused, "code").as_string().as_deref(),
        Some("turn-running")
    );
    wait_status(&session, &["done"], 20_000).await;
}

/// Drops the create stream at several byte offsets (some inside multi-byte characters): the SDK
/// reconnects after the last processed sequence number and the view equals the fault-free one.
#[wasm_bindgen_test]
async fn drops_at_byte_offsets_lose_and_duplicate_nothing() {
    for offset in [97u32, 700, 1301, 2222] {
        let fault = format!("drop-at-byte={offset},once");
        let client = client("memory", Some(&fault));
        let session = create(&client, "storyteller").await;
        await_js(session.send(message("a story, 120 words"), false, None))
            .await
            .expect("send");
        wait_status(&session, &["done"], 20_000).await;
        let live = summary(&session);
        assert_eq!(
            live,
            persisted_summary(&session.id()).await,
            "drop at byte {offset}"
        );
    }
}

#[wasm_bindgen_test]
async fn split_writes_and_ignored_cursors_give_the_same_view() {
    let client = client(
        "memory",
        Some("split=1..9,drop-after-events=12,ignore-cursor,times=2"),
    );
    let session = create(&client, "storyteller").await;
    await_js(session.send(message("a story, 100 words"), false, None))
        .await
        .expect("send");
    wait_status(&session, &["done"], 20_000).await;
    assert_eq!(summary(&session), persisted_summary(&session.id()).await);
}

#[wasm_bindgen_test]
async fn approval_allow_then_deny() {
    let client = client("memory", None);
    let session = create(&client, "support").await;
    await_js(session.send(
        message("Please refund €49.50 on ORD-2031, it arrived broken"),
        false,
        None,
    ))
    .await
    .expect("send");
    wait_status(&session, &["done"], 20_000).await;
    let pending = get(&session.snapshot().unwrap(), "pending");
    let first = js_sys::Reflect::get(&pending, &0.into()).unwrap();
    assert_eq!(
        get(&first, "kind").as_string().as_deref(),
        Some("toolApproval"),
        "{:?}",
        summary(&session)
    );
    assert_eq!(
        get(&first, "toolName").as_string().as_deref(),
        Some("process_refund")
    );
    let call = get(&first, "toolCallId").as_string().unwrap();

    // A message while an approval is pending is refused client-side (PROTOCOL §7).
    let refused = await_js(session.send(message("hello?"), false, None))
        .await
        .expect_err("must refuse");
    assert_eq!(
        get(&refused, "code").as_string().as_deref(),
        Some("invalid-input")
    );

    let decisions = js_sys::Array::new();
    let allow: wasm_bindgen::JsValue = js_sys::Object::new().into();
    set(&allow, "kind", "allow");
    set(&allow, "toolCallId", call.as_str());
    decisions.push(&allow);
    await_js(session.respond(decisions.into(), None))
        .await
        .expect("respond");
    wait_status(&session, &["done"], 20_000).await;
    let s = summary(&session);
    assert_eq!(s["pending"], serde_json::json!([]), "{s}");
    assert_eq!(s, persisted_summary(&session.id()).await);
}

/// The incremental drains (`takeChanges`, where a growing message arrives as appended text)
/// rebuild exactly the view a full `snapshot()` gives: a mirror patched the way the TS store
/// patches is compared with full snapshots several times mid-stream and after the turn.
#[wasm_bindgen_test]
async fn incremental_changes_rebuild_the_full_snapshot() {
    use serde_json::Value;
    use std::collections::BTreeMap;
    type Mirror = BTreeMap<(String, String), Value>;
    fn json(v: &wasm_bindgen::JsValue) -> Value {
        serde_json::from_str(&js_sys::JSON::stringify(v).unwrap().as_string().unwrap()).unwrap()
    }
    fn id(change: &Value) -> (String, String) {
        let s = |k: &str| change[k].as_str().unwrap_or_default().to_string();
        (s("turnId"), s("key"))
    }
    /// Turn headers by turn id, as the TS store keeps them.
    type Headers = BTreeMap<String, Value>;
    /// Applies one drain's headers and cursors; returns how many turns came as cursors.
    fn apply_headers(headers: &mut Headers, c: &Value) -> usize {
        for h in c["turns"].as_array().into_iter().flatten() {
            let id = h["turnId"].as_str().unwrap_or_default().to_string();
            headers.insert(id, h.clone());
        }
        let mut cursors = 0;
        for t in c["cursors"].as_array().into_iter().flatten() {
            cursors += 1;
            let id = t["turnId"].as_str().unwrap_or_default();
            let h = headers.get_mut(id).expect("a cursor for a known turn");
            assert_eq!(
                h["version"], t["version"],
                "cursor names the header version held"
            );
            h["lastSequenceNumber"] = t["lastSequenceNumber"].clone();
        }
        cursors
    }
    fn all_headers(c: &Value) -> Headers {
        let turns = c["turns"].as_array().into_iter().flatten();
        turns
            .map(|h| {
                (
                    h["turnId"].as_str().unwrap_or_default().to_string(),
                    h.clone(),
                )
            })
            .collect()
    }
    /// Applies one drain; returns how many items came as appends.
    fn apply(mirror: &mut Mirror, drain: &mut u64, c: &Value) -> usize {
        assert_eq!(
            c["drain"].as_u64(),
            Some(*drain + 1),
            "drains are consecutive"
        );
        *drain += 1;
        let mut appends = 0;
        for change in c["items"].as_array().into_iter().flatten() {
            let key = id(change);
            if let Some(a) = change.get("append") {
                appends += 1;
                let item = mirror.get_mut(&key).expect("append to a known item");
                assert_eq!(item["version"], a["baseVersion"], "append base");
                item["version"] = a["version"].clone();
                for field in ["content", "reasoning", "refusal"] {
                    if let Some(suffix) = a[field].as_str() {
                        let old = item["body"][field].as_str().unwrap_or_default();
                        item["body"][field] = Value::String(format!("{old}{suffix}"));
                    }
                }
            } else if change["removed"] == Value::Bool(true) {
                mirror.remove(&key);
            } else {
                mirror.insert(key, change["value"].clone());
            }
        }
        appends
    }
    fn full(session: &forgestream_web::client::WasmSession) -> (Mirror, u64, Headers, String) {
        let c = json(&session.snapshot().unwrap());
        // `items` is left out when there are none.
        let items = c["items"].as_array().into_iter().flatten();
        let mirror = items.map(|i| (id(i), i["value"].clone())).collect();
        let status = c["connection"]["status"].as_str().unwrap_or_default();
        let drain = c["drain"].as_u64().unwrap();
        (mirror, drain, all_headers(&c), status.to_string())
    }

    let client = client("memory", Some("drip-ms=2,split=1..40"));
    let session = create(&client, "storyteller").await;
    let (mut mirror, mut drain, mut headers, mut status) = full(&session);
    await_js(session.send(message("Tell me a story, 400 words"), false, None))
        .await
        .expect("send");
    let (mut appends, mut cursors, mut compared, mut rounds, mut quiet) = (0, 0, 0, 0, 0);
    loop {
        sleep(16).await;
        rounds += 1;
        assert!(rounds < 2000, "the turn did not finish");
        let c = json(&session.take_changes().unwrap());
        appends += apply(&mut mirror, &mut drain, &c);
        cursors += apply_headers(&mut headers, &c);
        // Absent: the badge did not change since the last drain (or the last full view).
        match c["connection"]["status"].as_str() {
            Some(s) => status = s.to_string(),
            None => quiet += 1,
        }
        // Nothing runs between these two calls: the full view is at the same point.
        if rounds % 7 == 0 || status == "done" {
            let (whole, at, whole_headers, whole_status) = full(&session);
            assert_eq!(mirror, whole, "after drain {drain}");
            assert_eq!(headers, whole_headers, "headers after drain {drain}");
            drain = at;
            status = whole_status;
            compared += 1;
        }
        if status == "done" {
            break;
        }
    }
    assert!(appends > 10, "the stream came as appends ({appends})");
    assert!(
        cursors > 10,
        "a turn that only gained text came as its cursor ({cursors})"
    );
    assert!(
        quiet > 10,
        "drains with an unchanged badge left it out ({quiet})"
    );
    assert!(compared > 2, "compared mid-stream ({compared})");
    assert!(all_text(&summary(&session)).contains("Il était une fois"));
}

/// Message text per turn as `snapshot()` hands it to JS (the envelope and its items, which cross
/// as one JSON text when small and item by item when large).
fn snapshot_texts(session: &forgestream_web::client::WasmSession) -> (Vec<String>, usize) {
    let js = session.snapshot().unwrap();
    let text = js_sys::JSON::stringify(&js).unwrap().as_string().unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let order: Vec<&str> = v["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["turnId"].as_str().unwrap())
        .collect();
    let items = v["items"].as_array().cloned().unwrap_or_default();
    let texts = order
        .iter()
        .map(|turn| {
            items
                .iter()
                .filter(|i| i["turnId"] == *turn)
                .filter_map(|i| i["value"]["body"]["content"].as_str())
                .collect::<String>()
        })
        .collect();
    (texts, items.len())
}

/// A view larger than the one-text limit (64 KiB of item JSON) reaches JS whole and in order:
/// three long replies loaded from history give the same texts, item for item, as the view that
/// streamed them, and both equal the persisted history.
#[wasm_bindgen_test]
async fn a_snapshot_larger_than_one_text_reaches_js_whole() {
    let client = client("memory", None);
    let session = create(&client, "storyteller").await;
    for _ in 0..3 {
        await_js(session.send(message("Tell a story, 4000 words, 0 ms"), false, None))
            .await
            .expect("send");
        wait_status(&session, &["done"], 60_000).await;
    }
    let (live, live_items) = snapshot_texts(&session);
    assert_eq!(live.len(), 3);
    let total: usize = live.iter().map(String::len).sum();
    assert!(total > 64 * 1024, "{total} bytes do not exceed one text");
    assert!(
        live.iter().all(|t| t.len() > 10_000),
        "{:?}",
        live.iter().map(String::len).collect::<Vec<_>>()
    );
    let fresh =
        forgestream_web::client::WasmClient::new(options("memory", "trueforge", "fetch", None))
            .unwrap();
    let loaded = fresh.session(session.id());
    await_js(loaded.load()).await.expect("load history");
    let (from_history, history_items) = snapshot_texts(&loaded);
    assert_eq!(from_history, live);
    assert_eq!(history_items, live_items);
    assert_eq!(all_text(&summary(&loaded)), live.concat());
    assert_eq!(summary(&loaded), persisted_summary(&session.id()).await);
}

/// Items on demand (`turnItems: "onRead"`, the default): the change sets carry every turn's
/// header but no items until the app reads a turn with `turnItems(turnId)`; the items read equal
/// those the full path (`turnItems: "all"`) hands over for the same history — a turn of
/// ~70 KB of text, so they cross in more than one batch — and from then on that turn's item
/// changes come with the change sets.
#[wasm_bindgen_test]
async fn turn_items_cross_when_read_and_equal_the_full_view() {
    let o = options("memory", "trueforge", "fetch", None);
    set(&o, "turnItems", "onRead");
    let client = forgestream_web::client::WasmClient::new(o).unwrap();
    let session = create(&client, "storyteller").await;
    await_js(session.send(message("Tell a story, 12000 words, 0 ms"), false, None))
        .await
        .expect("send");
    wait_status(&session, &["done"], 60_000).await;
    let js_json = |v: &wasm_bindgen::JsValue| -> serde_json::Value {
        serde_json::from_str(&js_sys::JSON::stringify(v).unwrap().as_string().unwrap()).unwrap()
    };
    let whole = js_json(&session.snapshot().unwrap());
    assert!(
        whole["items"].is_null(),
        "no items cross unread: {}",
        whole["items"]
    );
    let turn_id = whole["turns"][0]["turnId"].as_str().unwrap().to_string();
    let read = js_json(&session.turn_items(turn_id.clone()).unwrap());
    assert_eq!(read["turnId"].as_str(), Some(turn_id.as_str()));
    let read_items = read["items"].as_array().cloned().unwrap_or_default();
    let text: usize = read_items
        .iter()
        .filter_map(|i| i["body"]["content"].as_str())
        .map(str::len)
        .sum();
    assert!(text > 64 * 1024, "{text} bytes of text fit one batch");

    let full =
        forgestream_web::client::WasmClient::new(options("memory", "trueforge", "fetch", None))
            .unwrap()
            .session(session.id());
    await_js(full.load()).await.expect("load history");
    let everything = js_json(&full.snapshot().unwrap());
    let expected: Vec<serde_json::Value> = everything["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["turnId"] == turn_id.as_str())
        .map(|i| i["value"].clone())
        .collect();
    assert!(!expected.is_empty());
    // The same items but for `version`, which counts the changes this view applied (deltas live,
    // one merged event from history).
    let unversioned = |items: &[serde_json::Value]| -> Vec<serde_json::Value> {
        items
            .iter()
            .cloned()
            .map(|mut i| {
                i.as_object_mut().map(|o| o.remove("version"));
                i
            })
            .collect()
    };
    let (got, want) = (unversioned(&read_items), unversioned(&expected));
    for (g, w) in got.iter().zip(&want) {
        for (k, v) in w.as_object().unwrap() {
            assert_eq!(g.get(k), Some(v), "item {} field {k}", w["key"]);
        }
    }
    assert_eq!(got, want);

    // Held from now on: the full view carries this turn's items.
    let held = js_json(&session.snapshot().unwrap());
    let held_items = held["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(held_items.len(), expected.len());
    assert!(held_items.iter().all(|i| i["turnId"] == turn_id.as_str()));
}

/// The app's options and decisions are read through their JSON text: a wrong type names the
/// field, a value JSON cannot hold (a cycle, a `BigInt`) is `invalid-input` too — never a throw
/// from inside the wasm — and a function member (the `headers` provider) is read beside it.
#[wasm_bindgen_test]
async fn options_and_decisions_are_typed_errors_when_malformed() {
    let code_and_message = |e: &wasm_bindgen::JsValue| {
        (
            get(e, "code").as_string().unwrap_or_default(),
            get(e, "message").as_string().unwrap_or_default(),
        )
    };
    let o = options("memory", "trueforge", "fetch", None);
    set(&o, "transport", 42.0);
    let (code, message) =
        code_and_message(&forgestream_web::client::WasmClient::new(o).err().unwrap());
    assert_eq!(code, "invalid-input");
    assert!(
        message.starts_with(
            r#"invalid AgentClient options: invalid type: expected "fetch" or "eventsource" near `"#
        ) && message.contains(r#""transport":42"#),
        "{message}"
    );

    let o = options("memory", "trueforge", "fetch", None);
    set(&o, "self", o.clone());
    let (code, message) =
        code_and_message(&forgestream_web::client::WasmClient::new(o).err().unwrap());
    assert_eq!(code, "invalid-input");
    assert!(
        message.starts_with("invalid AgentClient options: not representable as JSON"),
        "{message}"
    );

    let o = options("memory", "trueforge", "fetch", None);
    let reconnect = get(&o, "reconnect");
    set(&reconnect, "maxDelayMs", -1.0);
    let (code, message) =
        code_and_message(&forgestream_web::client::WasmClient::new(o).err().unwrap());
    assert_eq!(code, "invalid-input");
    assert!(message.contains("maxDelayMs"), "{message}");

    // Unknown members and the header provider ride along.
    let o = options("memory", "trueforge", "fetch", Some("none"));
    set(&o, "appOnly", "kept by the app");
    let client = forgestream_web::client::WasmClient::new(o).expect("options with a provider");
    let session = client.session("01m8aaaaaaaaaaaaaaaaaaaaaa".into());
    for (decisions, starts) in [
        (
            wasm_bindgen::JsValue::from_str("allow"),
            "invalid decisions: invalid type: expected an array",
        ),
        (
            js_sys::BigInt::from(1u64).into(),
            "invalid decisions: not representable as JSON",
        ),
        (
            decisions(&[("maybe", "call_1", None)]),
            "invalid decisions: unknown variant `maybe`, expected `allow`",
        ),
    ] {
        let refused = await_js(session.respond(decisions, None))
            .await
            .expect_err("malformed decisions");
        let (code, message) = code_and_message(&refused);
        assert_eq!(code, "invalid-input");
        assert!(message.starts_with(starts), "{message}");
    }
}
