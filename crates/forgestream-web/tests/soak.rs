//! Browser soak: every built-in scenario through the browser SDK (`WasmClient`) with random
//! faults from the emulator — a seeded PRNG picks one fault spec per run (drops at events and
//! bytes, split writes, ignored cursors, 412, 429/5xx with Retry-After, heartbeats and drip,
//! clean ends without `turn.done`, subscribe timeouts) plus `dropConnection()` mid-stream and a
//! "page reload" (a new client restoring from localStorage mid-stream). Each run is compared with
//! the server's persisted history (`persisted_summary`): same final state, same pending actions,
//! so no duplicated and no lost text.
//!
//! Runs: compile-time `FORGESTREAM_SOAK_RUNS` (default 20, which `scripts/test` runs), seed:
//! `FORGESTREAM_SOAK_SEED`. `scripts/soak` runs ≥ 200 and reads the `soak:` lines printed here.
#![cfg(target_arch = "wasm32")]
mod support;

use std::cell::RefCell;
use std::rc::Rc;

use forgestream_web::client::WasmSession;
use support::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Runs in flight at once (the browser allows 6 connections per origin; each run holds one
/// stream and, briefly, one listing request).
const PARALLEL: usize = 4;

/// (agent, message) of every built-in scenario.
const SCENARIOS: &[(&str, &str)] = &[
    ("storyteller", "Tell a story, 90 words"),
    ("support", "Refund €49.50 on ORD-2031, it arrived broken"),
    ("researcher", "Compare three sorting algorithms"),
    ("concierge", "Book me a table for tonight"),
    ("github", "List my open issues"),
    ("flaky", "hello there"),
];

fn runs() -> usize {
    option_env!("FORGESTREAM_SOAK_RUNS")
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
}

fn seed() -> u64 {
    option_env!("FORGESTREAM_SOAK_SEED")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x50a6_2026)
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One run's plan: the fault spec (kind, spec) and the client-side faults.
#[derive(Debug, Clone)]
struct RunPlan {
    index: usize,
    agent: &'static str,
    message: &'static str,
    kind: &'static str,
    spec: Option<String>,
    /// `dropConnection()` this many ms after `send` resolved.
    drop_after_ms: Option<u32>,
    /// Page reload this many ms after `send` resolved (after the drop, if both).
    reload_after_ms: Option<u32>,
}

fn plan(index: usize, rng: &mut Rng) -> RunPlan {
    let (agent, message) = SCENARIOS[index % SCENARIOS.len()];
    let r = rng.next();
    let (kind, spec) = match rng.below(11) {
        0 => (
            "drop-after-events",
            Some(format!("drop-after-events={},once", 2 + r % 20)),
        ),
        1 => (
            "drop-at-byte",
            Some(format!("drop-at-byte={},once", 40 + r % 3000)),
        ),
        2 => (
            "split",
            Some(format!("split=1..{},seed={}", 2 + r % 12, r % 1000)),
        ),
        3 => (
            "ignore-cursor",
            Some(format!(
                "ignore-cursor,drop-after-events={},times=3",
                3 + r % 10
            )),
        ),
        4 => (
            "force-412",
            Some(format!("drop-after-events={},force-412,times=2", 2 + r % 8)),
        ),
        5 => (
            "status",
            Some(format!(
                "status={},retry-after=1,on=subscribe,once",
                [429, 500, 503, 504][(r % 4) as usize]
            )),
        ),
        6 => (
            "heartbeat-drip",
            Some(format!("heartbeat-ms={},drip-ms={}", 3 + r % 10, 2 + r % 6)),
        ),
        7 => (
            "end-without-done",
            Some("end-without-done,once".to_string()),
        ),
        8 => (
            "subscribe-timeout",
            Some(format!("subscribe-timeout-ms={},times=2", 30 + r % 150)),
        ),
        9 => (
            "split-drop-at-byte",
            Some(format!(
                "split=1..7,seed={},drop-at-byte={},once",
                r % 1000,
                60 + r % 2000
            )),
        ),
        _ => ("none", None),
    };
    // A status fault needs a reconnect to show: drop the first connection.
    let drop_after_ms = (kind == "status" || rng.below(100) < 35).then(|| rng.below(150) as u32);
    let reload_after_ms = (rng.below(100) < 25).then(|| rng.below(200) as u32);
    RunPlan {
        index,
        agent,
        message,
        kind,
        spec,
        drop_after_ms,
        reload_after_ms,
    }
}

/// What one run observed.
struct RunOutcome {
    ok: bool,
    detail: String,
}

/// Polls until the connection settles; `liveUnavailable` gets a manual refresh (bounded).
/// `idle_is_settled`: a reloaded page whose checkpoint named no live turn (it had already
/// finished) follows nothing; its view is the loaded history.
async fn settle(session: &WasmSession, timeout_ms: u32, idle_is_settled: bool) -> String {
    let mut waited = 0;
    let mut refreshes = 0;
    loop {
        let s = connection_status(session);
        match s.as_str() {
            "done" | "failed" => return s,
            "idle" if idle_is_settled => return "done".into(),
            "liveUnavailable" if refreshes < 5 => {
                refreshes += 1;
                session.refresh();
            }
            _ => {}
        }
        if waited >= timeout_ms {
            return format!("timeout ({s})");
        }
        sleep(25).await;
        waited += 25;
    }
}

async fn run_one(p: RunPlan) -> RunOutcome {
    let namespace = format!("soak-{}-{}", seed(), p.index);
    clear_local_storage(&namespace);
    let fail = |what: String| RunOutcome {
        ok: false,
        detail: format!(
            "run {} {} [{}] {:?}: {what}",
            p.index, p.agent, p.kind, p.spec
        ),
    };
    let client = client_in("local", &namespace, p.spec.as_deref());
    let body = format!("{{\"agent\":{{\"name\":\"{}\"}}}}", p.agent);
    let mut session = match client.open_new_session(&body).await {
        Ok(s) => s,
        Err(e) => return fail(format!("create session: {e:?}")),
    };
    let id = session.id();
    if let Err(e) = await_js(session.send(message(p.message), false, None)).await {
        return fail(format!("send: {:?}", get(&e, "message")));
    }
    if let Some(ms) = p.drop_after_ms {
        sleep(ms).await;
        session.drop_connection();
    }
    let mut keep_alive = None;
    let mut idle_is_settled = false;
    if let Some(ms) = p.reload_after_ms {
        sleep(ms).await;
        session.disconnect();
        let reloaded = client_in("local", &namespace, p.spec.as_deref());
        if reloaded.last_session_id(None).as_deref() != Some(id.as_str()) {
            return fail("the reloaded client lost the last session id".into());
        }
        let restored = reloaded.session(id.clone());
        if let Err(e) = await_js(restored.load()).await {
            return fail(format!("reload load: {:?}", get(&e, "message")));
        }
        match await_js(restored.resume()).await {
            Ok(followed) => idle_is_settled = followed.is_null(),
            Err(e) => return fail(format!("reload resume: {:?}", get(&e, "message"))),
        }
        keep_alive = Some((client, session));
        session = restored;
    }
    let status = settle(&session, 30_000, idle_is_settled).await;
    if status != "done" {
        let error = get(&session.snapshot().unwrap(), "error");
        return fail(format!(
            "ended {status}: {:?} {:?}",
            get(&error, "code").as_string(),
            get(&error, "message").as_string()
        ));
    }
    let live = summary(&session);
    let persisted = persisted_summary(&id).await;
    drop(keep_alive);
    clear_local_storage(&namespace);
    if live != persisted {
        let (lt, pt) = (all_text(&live), all_text(&persisted));
        return fail(format!(
            "diverged (drop {:?}, reload {:?}): text {} vs {} chars, duplicated: {}, \
             pending equal: {}, statuses {:?} vs {:?}\n live: {live}\n persisted: {persisted}",
            p.drop_after_ms,
            p.reload_after_ms,
            lt.chars().count(),
            pt.chars().count(),
            lt.len() > pt.len(),
            live["pending"] == persisted["pending"],
            live["turns"]
                .as_array()
                .map(|t| t.iter().map(|t| t["status"].clone()).collect::<Vec<_>>()),
            persisted["turns"]
                .as_array()
                .map(|t| t.iter().map(|t| t["status"].clone()).collect::<Vec<_>>()),
        ));
    }
    RunOutcome {
        ok: true,
        detail: String::new(),
    }
}

#[wasm_bindgen_test]
async fn soak_every_scenario_under_random_faults() {
    let total = runs();
    let mut rng = Rng(seed());
    let plans: Vec<RunPlan> = (0..total).map(|i| plan(i, &mut rng)).collect();
    let mut kinds: Vec<(&'static str, u32)> = Vec::new();
    let mut count = |k: &'static str| match kinds.iter_mut().find(|(n, _)| *n == k) {
        Some((_, c)) => *c += 1,
        None => kinds.push((k, 1)),
    };
    for p in &plans {
        count(p.kind);
        if p.drop_after_ms.is_some() {
            count("dropConnection");
        }
        if p.reload_after_ms.is_some() {
            count("reload");
        }
    }
    let failures: Rc<RefCell<Vec<String>>> = Rc::default();
    let passed = Rc::new(RefCell::new(0u32));
    for batch in plans.chunks(PARALLEL) {
        let promises = js_sys::Array::new();
        for p in batch.iter().cloned() {
            let failures = failures.clone();
            let passed = passed.clone();
            promises.push(&wasm_bindgen_futures::future_to_promise(async move {
                let outcome = run_one(p).await;
                if outcome.ok {
                    *passed.borrow_mut() += 1;
                } else {
                    // Printed at once: a runner timeout must not swallow it.
                    console_log!("soak failure: {}", outcome.detail);
                    failures.borrow_mut().push(outcome.detail);
                }
                Ok(JsValue::UNDEFINED)
            }));
        }
        await_js(js_sys::Promise::all(&promises))
            .await
            .expect("soak batch");
    }
    let failures = failures.borrow();
    let kinds_line: Vec<String> = kinds.iter().map(|(k, c)| format!("{k}={c}")).collect();
    console_log!("soak faults: {}", kinds_line.join(" "));
    console_log!(
        "soak: {} passed, {} failed (seed {})",
        passed.borrow(),
        failures.len(),
        seed()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} soak runs diverged:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
