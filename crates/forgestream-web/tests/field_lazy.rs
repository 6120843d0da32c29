//! Field cases on the default turn-items path (`turnItems: "onRead"`), at the engine's edge: a
//! mirror patched the way the TS store (`pkg/src/snapshot.ts`) patches — turns read with
//! `turnItems(turnId)` *between* drains, while frames keep arriving, then followed through
//! `takeChanges()` — is compared with the full `snapshot()` after drains, under faults
//! (dripped and split frames, dropped connections, replayed frames).
use std::collections::{BTreeMap, BTreeSet};

use forgestream_web::client::WasmSession;
use serde_json::Value;
use wasm_bindgen_test::*;

mod support;
use support::*;

wasm_bindgen_test_configure!(run_in_browser);

fn json(v: &wasm_bindgen::JsValue) -> Value {
    serde_json::from_str(&js_sys::JSON::stringify(v).unwrap().as_string().unwrap()).unwrap()
}

/// The TS store's state: headers by turn id, items of the held (read) turns by (turn, key).
#[derive(Default)]
struct Mirror {
    headers: BTreeMap<String, Value>,
    items: BTreeMap<String, BTreeMap<String, Value>>,
    drain: u64,
    /// Full views taken because a drain was not relative to the mirror (as the store does).
    resyncs: usize,
    appends: usize,
    /// The connection badge as the drains carried it (`snapshot()` would be a drain itself).
    status: String,
}

impl Mirror {
    fn whole(&mut self, c: &Value) {
        self.drain = c["drain"].as_u64().unwrap();
        self.status = c["connection"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.headers.clear();
        for h in c["turns"].as_array().into_iter().flatten() {
            self.headers
                .insert(h["turnId"].as_str().unwrap().to_string(), h.clone());
        }
        for m in self.items.values_mut() {
            m.clear();
        }
        for i in c["items"].as_array().into_iter().flatten() {
            let turn = i["turnId"].as_str().unwrap().to_string();
            self.items
                .entry(turn)
                .or_default()
                .insert(i["key"].as_str().unwrap().to_string(), i["value"].clone());
        }
    }

    /// `#drainCore` + `#apply`: a drain relative to the mirror, else the whole view.
    fn drain(&mut self, session: &WasmSession) {
        let c = json(&session.take_changes().unwrap());
        let relative = c["drain"].as_u64() == Some(self.drain + 1)
            && c["items"].as_array().into_iter().flatten().all(|i| {
                let Some(a) = i.get("append") else {
                    return true;
                };
                let prev = self
                    .items
                    .get(i["turnId"].as_str().unwrap())
                    .and_then(|m| m.get(i["key"].as_str().unwrap()));
                prev.is_some_and(|p| p["version"] == a["baseVersion"])
            })
            && c["cursors"].as_array().into_iter().flatten().all(|t| {
                self.headers
                    .get(t["turnId"].as_str().unwrap())
                    .is_some_and(|h| h["version"] == t["version"])
            });
        if !relative {
            self.resyncs += 1;
            if self.resyncs <= 3 {
                let cur: Vec<String> = c["cursors"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| {
                        format!(
                            "{}: cursor v{} header v{}",
                            t["turnId"],
                            t["version"],
                            self.headers
                                .get(t["turnId"].as_str().unwrap())
                                .map(|h| h["version"].clone())
                                .unwrap_or(Value::Null)
                        )
                    })
                    .collect();
                let app: Vec<String> = c["items"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|i| i.get("append").is_some())
                    .map(|i| {
                        format!(
                            "{} {}: base {} have {:?}",
                            i["turnId"],
                            i["key"],
                            i["append"]["baseVersion"],
                            self.items
                                .get(i["turnId"].as_str().unwrap())
                                .and_then(|m| m.get(i["key"].as_str().unwrap()))
                                .map(|v| v["version"].clone())
                        )
                    })
                    .collect();
                web_sys::console::log_1(
                    &format!(
                        "resync: drain {} (mine {}), cursors {cur:?}, appends {app:?}",
                        c["drain"], self.drain
                    )
                    .into(),
                );
            }
            let whole = json(&session.snapshot().unwrap());
            self.whole(&whole);
            return;
        }
        self.drain += 1;
        if let Some(st) = c["connection"]["status"].as_str() {
            self.status = st.to_string();
        }
        for h in c["turns"].as_array().into_iter().flatten() {
            self.headers
                .insert(h["turnId"].as_str().unwrap().to_string(), h.clone());
        }
        for t in c["cursors"].as_array().into_iter().flatten() {
            let h = self.headers.get_mut(t["turnId"].as_str().unwrap()).unwrap();
            h["lastSequenceNumber"] = t["lastSequenceNumber"].clone();
        }
        for i in c["items"].as_array().into_iter().flatten() {
            let turn = i["turnId"].as_str().unwrap();
            let key = i["key"].as_str().unwrap().to_string();
            let Some(items) = self.items.get_mut(turn) else {
                continue;
            };
            if let Some(a) = i.get("append") {
                self.appends += 1;
                let item = items.get_mut(&key).unwrap();
                item["version"] = a["version"].clone();
                for field in ["content", "reasoning", "refusal"] {
                    if let Some(suffix) = a[field].as_str() {
                        let old = item["body"][field].as_str().unwrap_or_default();
                        item["body"][field] = Value::String(format!("{old}{suffix}"));
                    }
                }
            } else if i["removed"] == Value::Bool(true) || i["value"].is_null() {
                items.remove(&key);
            } else {
                items.insert(key, i["value"].clone());
            }
        }
    }

    /// `#read`: the turn's items from the engine, now (maybe between drains).
    fn read(&mut self, session: &WasmSession, turn: &str) {
        let r = json(&session.turn_items(turn.to_string()).unwrap());
        assert!(!r.is_null(), "turn {turn} read");
        let items = r["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| (i["key"].as_str().unwrap().to_string(), i.clone()))
            .collect();
        self.items.insert(turn.to_string(), items);
    }

    /// What the app shows of `turn`: its items listed by its header's `itemKeys`.
    fn shown(&self, turn: &str) -> Vec<Value> {
        let keys = self.headers[turn]["itemKeys"].as_array().unwrap();
        let items = &self.items[turn];
        keys.iter()
            .filter_map(|k| items.get(k.as_str().unwrap()).cloned())
            .collect()
    }
}

/// The full view's items of `turn` listed by its `itemKeys` (the full path's reading of it).
fn shown_in(whole: &Value, turn: &str) -> Vec<Value> {
    let header = whole["turns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["turnId"] == turn)
        .unwrap();
    let items: BTreeMap<&str, &Value> = whole["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["turnId"] == turn)
        .map(|i| (i["key"].as_str().unwrap(), &i["value"]))
        .collect();
    header["itemKeys"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| items.get(k.as_str().unwrap()).map(|v| (*v).clone()))
        .collect()
}

/// Drives `texts` through a lazy session of `agent` under `fault`: every 16 ms a drain, turns
/// read between drains (each new turn a few rounds after it appears), the mirror compared with
/// the full view every 5 rounds and at each turn's end.
async fn run(agent: &str, texts: &[&str], fault: Option<&str>) {
    let o = options("memory", "trueforge", "fetch", fault);
    set(&o, "turnItems", "onRead");
    let client = forgestream_web::client::WasmClient::new(o).unwrap();
    let session = create(&client, agent).await;
    let mut m = Mirror::default();
    m.whole(&json(&session.snapshot().unwrap()));
    let mut seen_rounds: BTreeMap<String, u32> = BTreeMap::new();
    let mut read: BTreeSet<String> = BTreeSet::new();
    let (mut compared, mut reads_between) = (0, 0);
    for (n, text) in texts.iter().enumerate() {
        await_js(session.send(message(text), false, None))
            .await
            .expect("send");
        let mut rounds = 0;
        loop {
            sleep(16).await;
            rounds += 1;
            assert!(rounds < 3000, "turn {n} did not finish");
            // Between drains: frames have arrived since the last one. Read each turn a few
            // rounds after it showed up (mid-stream), as an app scrolling to it would.
            for (turn, first) in &seen_rounds {
                if !read.contains(turn) && rounds >= first + 3 + (n as u32 % 3) {
                    m.read(&session, turn);
                    read.insert(turn.clone());
                    reads_between += 1;
                }
            }
            m.drain(&session);
            for turn in m.headers.keys() {
                seen_rounds.entry(turn.clone()).or_insert(rounds);
            }
            let status = m.status.clone();
            let done = matches!(status.as_str(), "done" | "failed" | "liveUnavailable")
                && m.headers.values().all(|h| h["status"] != "running");
            if rounds % 5 == 0 || done {
                // Nothing runs between the drain above and this full view.
                let whole = json(&session.snapshot().unwrap());
                for turn in &read {
                    assert_eq!(
                        m.shown(turn),
                        shown_in(&whole, turn),
                        "turn {turn} after drain {} (round {rounds}, {agent}, {fault:?})",
                        m.drain
                    );
                }
                m.drain = whole["drain"].as_u64().unwrap();
                m.status = whole["connection"]["status"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                compared += 1;
            }
            if done {
                break;
            }
        }
        // Every turn read at the end too.
        for turn in m.headers.keys().cloned().collect::<Vec<_>>() {
            if read.insert(turn.clone()) {
                m.read(&session, &turn);
            }
        }
    }
    let whole = json(&session.snapshot().unwrap());
    for turn in &read {
        assert_eq!(
            m.shown(turn),
            shown_in(&whole, turn),
            "turn {turn} at the end"
        );
    }
    web_sys::console::log_1(
        &format!(
            "{agent} {fault:?}: compared {compared}, reads between drains {reads_between}, appends {}, resyncs {}",
            m.appends, m.resyncs
        )
        .into(),
    );
    assert!(compared >= 2);
    assert!(reads_between > 0, "a turn was read mid-stream");
    // A read between drains answers as of the last drain: the drains after it stay relative
    // (no full view needed).
    assert_eq!(m.resyncs, 0, "drains not relative to the mirror");
    assert_eq!(summary(&session), persisted_summary(&session.id()).await);
}

#[wasm_bindgen_test]
async fn lazy_reads_between_drains_follow_a_dripped_split_story() {
    run(
        "storyteller",
        &["Tell a story, 400 words", "Tell a story, 300 words"],
        Some("drip-ms=2,split=1..40"),
    )
    .await;
}

#[wasm_bindgen_test]
async fn lazy_reads_between_drains_follow_dropped_and_replayed_frames() {
    run(
        "storyteller",
        &[
            "Tell a story, 400 words, 3 ms",
            "Tell a story, 300 words, 3 ms",
        ],
        Some("ignore-cursor,drop-after-events=25,times=4"),
    )
    .await;
}

#[wasm_bindgen_test]
async fn lazy_reads_between_drains_follow_interleaved_subagents() {
    run(
        "researcher",
        &["Research lanterns", "Research rivers"],
        Some("drip-ms=3,split=1..30,drop-after-events=15,times=2"),
    )
    .await;
}

#[wasm_bindgen_test]
async fn lazy_reads_between_drains_follow_tool_calls_and_results() {
    run(
        "support",
        &[
            "Slow lookup of ORD-4821, 300 ms",
            "Where is ORD-2031?",
            "Where is ORD-1001?",
        ],
        Some("drip-ms=25,split=1..20"),
    )
    .await;
}
