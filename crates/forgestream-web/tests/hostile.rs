//! The SDK against a scripted hostile server (issue 18): the recorded real TrueForge transcripts
//! of `tests/replay/server.mjs` with their frames tampered with (`~id=N:VALUE`, `~gap=N`,
//! `~hang`, see the server's header). Each check is what the app sees: the connection badge, the
//! warnings delivered with `takeChanges()`, the text at every poll, the final view against the
//! server's own persisted listings. `scripts/test` starts the server (`FORGESTREAM_REPLAY_URL`).
#![cfg(target_arch = "wasm32")]
mod support;

use forgestream_core::session::checkpoint::keys;
use forgestream_web::client::{WasmClient, WasmSession};
use support::replay::*;
use support::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// What the app saw while one turn ran: every warning, the text at each poll, the last badge.
struct Followed {
    /// What `send()` settled with.
    sent: Result<wasm_bindgen::JsValue, wasm_bindgen::JsValue>,
    warnings: Vec<(String, String)>,
    texts: Vec<String>,
    /// The badge at each poll.
    statuses: Vec<String>,
    status: String,
}

impl Followed {
    fn warned(&self, code: &str, containing: &str) -> bool {
        self.warnings
            .iter()
            .any(|(c, m)| c == code && m.contains(containing))
    }
}

/// Sends one message on a new session of `scenario` and drains `takeChanges()` every 20 ms until
/// the badge is one of `until` (or `timeout_ms` passed: `status` is then whatever it was).
async fn follow(
    scenario: &str,
    until: &[&str],
    timeout_ms: u32,
) -> (String, WasmSession, Followed) {
    follow_idle(scenario, until, timeout_ms, None).await
}

/// As [`follow`], with the idle watchdog at `idle_ms`.
async fn follow_idle(
    scenario: &str,
    until: &[&str],
    timeout_ms: u32,
    idle_ms: Option<f64>,
) -> (String, WasmSession, Followed) {
    let base = replay_base(scenario);
    let session = replay_session(&base, idle_ms).await;
    let sent = await_js(session.send(message("recorded"), false, None)).await;
    let mut seen = Followed {
        sent,
        warnings: Vec::new(),
        texts: Vec::new(),
        statuses: Vec::new(),
        status: String::new(),
    };
    let mut waited = 0;
    loop {
        let changes = session.take_changes().unwrap();
        let text = js_sys::JSON::stringify(&changes)
            .unwrap()
            .as_string()
            .unwrap();
        let c: serde_json::Value = serde_json::from_str(&text).unwrap();
        for w in c["warnings"].as_array().into_iter().flatten() {
            seen.warnings.push((
                w["code"].as_str().unwrap_or_default().into(),
                w["message"].as_str().unwrap_or_default().into(),
            ));
        }
        seen.texts.push(all_text(&summary(&session)));
        // Absent: the badge did not change since the last drain.
        if let Some(status) = c["connection"]["status"].as_str() {
            seen.status = status.into();
        }
        seen.statuses.push(seen.status.clone());
        if until.contains(&seen.status.as_str()) || waited >= timeout_ms {
            return (base, session, seen);
        }
        sleep(20).await;
        waited += 20;
    }
}

/// Frame 3's `id:` is a number a cursor must not take (above 2^53 − 1, or `u64::MAX`), and the
/// server keeps the connection open after `turn.done`. Before the fix the cursor was pinned at
/// that id: every later frame, `turn.done` included, was dropped as a replay and the badge stayed
/// `live` until the idle watchdog (45 s). Now: one `protocol` warning naming the id, the stream
/// followed to its `turn.done`, and the view equal to the server's history.
#[wasm_bindgen_test]
async fn an_id_above_2_pow_53_warns_and_never_pins_the_cursor() {
    for id in ["18446744073709551615", "9007199254740993"] {
        let (base, session, seen) =
            follow(&format!("text~id=3:{id}~hang"), &["done", "failed"], 10_000).await;
        assert!(seen.sent.is_ok(), "id {id}: {:?}", seen.sent);
        assert_eq!(seen.status, "done", "id {id}: {:?}", seen.warnings);
        assert!(
            seen.warned(
                "protocol",
                &format!("frame id \"{id}\" is not a sequence number")
            ),
            "id {id}: {:?}",
            seen.warnings
        );
        assert_eq!(
            summary(&session),
            recorded_history(&base, &session.id()).await,
            "id {id}"
        );
    }
}

/// Frame 5 (a delta) never comes and the stream stays open after frame 10, before the merged
/// message that would have papered over the hole. Before the fix the text after the hole was
/// applied and shown (and the turn sat `live`). Now the frame after the hole is refused with a
/// `protocol` warning, the turn is rebuilt from the listings once, and at no poll does the app
/// see text that is not a prefix of the turn's real text.
#[wasm_bindgen_test]
async fn a_skipped_sequence_number_is_never_shown_and_the_turn_is_rebuilt() {
    let (base, session, seen) = follow("text~cut=10~gap=5~hang", &["done", "failed"], 10_000).await;
    assert!(seen.sent.is_ok(), "{:?}", seen.sent);
    let history = recorded_history(&base, &session.id()).await;
    let full = all_text(&history);
    for text in &seen.texts {
        assert!(
            full.starts_with(text.as_str()),
            "a hole was shown: {text:?} (real text {full:?})"
        );
    }
    assert_eq!(seen.status, "done", "{:?}", seen.warnings);
    assert!(
        seen.warned("protocol", "sequence gap"),
        "{:?}",
        seen.warnings
    );
    assert_eq!(summary(&session), history);
}

/// The turns listing pages with an opaque token full of URL syntax (`+`, `/`, `&limit=1000`, `=`,
/// `%2F`, a space, `é`, `#frag`); the server answers the next page only for that exact token.
/// Before the fix (`?limit=25&page_token={}` unencoded) it arrived as `a b/c` plus injected
/// parameters and the history stopped at the first page. Now the history holds the turn.
#[wasm_bindgen_test]
async fn an_opaque_page_token_reaches_the_server_unchanged() {
    let paged = recorded_history(&replay_base("text~paged-turns"), "s-paged").await;
    let plain = recorded_history(&replay_base("text"), "s-paged").await;
    assert_eq!(paged["turns"].as_array().map(Vec::len), Some(1), "{paged}");
    assert_eq!(paged, plain);
}

/// The create POST is answered 200 with a login page, a JSON body, no `Content-Type`, or a 302 to
/// a login page. Before the fix the page was parsed as SSE, the badge showed `live` and the SDK
/// recovered for minutes before failing with a message that did not say why. Now: `send()`
/// rejects and the badge is `failed` at once, code `invalid-response`, not retryable, the message
/// naming what came back.
#[wasm_bindgen_test]
async fn a_200_that_is_not_an_event_stream_fails_at_once_naming_it() {
    for (spec, named) in [
        ("ctype=html", "\"text/html; charset=utf-8\""),
        ("ctype=json", "\"application/json\""),
        ("ctype=none", "no Content-Type"),
        ("redirect", "after a redirect"),
    ] {
        let (_, session, seen) = follow(&format!("text~{spec}"), &["failed", "done"], 3_000).await;
        assert_eq!(seen.status, "failed", "{spec}: {:?}", seen.warnings);
        // `send()` itself rejects with the same typed error.
        let refused = seen.sent.as_ref().expect_err("send must reject");
        assert_eq!(
            get(refused, "code").as_string().as_deref(),
            Some("invalid-response"),
            "{spec}: {refused:?}"
        );
        assert!(
            !seen.texts.iter().any(|t| t.contains("not an event")),
            "{spec}: the page was never parsed as frames"
        );
        let error = get(&session.snapshot().unwrap(), "error");
        assert_eq!(
            get(&error, "code").as_string().as_deref(),
            Some("invalid-response"),
            "{spec}: {error:?}"
        );
        assert_eq!(get(&error, "retryable").as_bool(), Some(false), "{spec}");
        let message = get(&error, "message").as_string().unwrap_or_default();
        assert!(message.contains(named), "{spec}: {message}");
    }
}

/// A session id `.` or `..` (from the app, a poisoned store or the server) would leave its URL
/// segment: `…/sessions/../turns` is `GET /api/v1/turns`, and `%2e%2e` is no cure (URL parsers
/// treat it as `..`). Before the fix the request went out (and failed as whatever that other path
/// answered); now nothing is requested and the promise rejects with `invalid-input`.
#[wasm_bindgen_test]
async fn a_dot_dot_session_id_requests_nothing() {
    for bad in ["..", ".", "%2e%2e"] {
        let session = replay_client(&replay_base("text")).session(bad.to_string());
        let refused = await_js(session.load())
            .await
            .expect_err("an unsafe id must be refused");
        assert_eq!(
            get(&refused, "code").as_string().as_deref(),
            Some("invalid-input"),
            "{bad}: {refused:?}"
        );
        let message = get(&refused, "message").as_string().unwrap_or_default();
        assert!(message.contains("not a safe id"), "{bad}: {message}");
    }
}

/// Checkpoints a restore must not trust — corrupt, old, future schema, another session's, an
/// unsafe turn id, a negative or fractional cursor — are ignored with a `storage` warning, and
/// the warning reaches the app with the first snapshot the handle gives. Before the fix none of
/// them did: the first `snapshot()` dropped pending warnings, and a restored session that then
/// changed no more never drained them (`onWarning` was never called).
#[wasm_bindgen_test]
async fn storage_warnings_on_restore_reach_the_first_snapshot() {
    let storage = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    let record = |v: &str, sid: &str, tid: &str, seq: &str| {
        format!(r#"{{"v":{v},"sessionId":"{sid}","turnId":"{tid}","seq":{seq},"savedAt":1}}"#)
    };
    for (name, raw) in [
        ("corrupt", "{not json".to_string()),
        ("old", record("0", "s-restore", "t1", "3")),
        ("future", record("99", "s-restore", "t1", "3")),
        ("foreign", record("1", "s-other", "t1", "3")),
        ("dotdot", record("1", "s-restore", "..", "3")),
        ("negative", record("1", "s-restore", "t1", "-3")),
        ("fraction", record("1", "s-restore", "t1", "2.5")),
    ] {
        let ns = format!("t-restore-{name}");
        // The pointer of this client (its base URL, no scope), as the core names it.
        let pointer = keys::pointer_key(&ns, replay_base("text").trim_end_matches('/'), None);
        storage.set_item(&pointer, "s-restore").unwrap();
        storage
            .set_item(&format!("{ns}:v1:session:s-restore"), &raw)
            .unwrap();
        let o = options("local", "trueforge", "fetch", None);
        set(&o, "baseUrl", replay_base("text"));
        set(&o, "storageNamespace", ns.as_str());
        let client = WasmClient::new(o).unwrap();
        let handle = await_js(client.restore(None)).await.expect("restore");
        assert!(!handle.is_null(), "{name}: the session itself is fine");
        // A second handle on the same engine (the registry shares it), to read it from Rust.
        let session = client.session("s-restore".into());
        let snapshot = js_sys::JSON::stringify(&session.snapshot().unwrap())
            .unwrap()
            .as_string()
            .unwrap();
        let snapshot: serde_json::Value = serde_json::from_str(&snapshot).unwrap();
        let storage_warnings: Vec<&serde_json::Value> = snapshot["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|w| w["code"] == "storage")
            .collect();
        assert_eq!(storage_warnings.len(), 1, "{name}: {snapshot}");
        session.close();
        let close: js_sys::Function = js_sys::Reflect::get(&handle, &"close".into())
            .unwrap()
            .into();
        close.call0(&handle).unwrap();
        clear_local_storage(&ns);
    }
}

/// Frame 3 arrives in 8 pieces 150 ms apart (≈1 s) while the idle watchdog is at 400 ms (issue 18
/// item 9). Before the fix only whole frames counted as liveness: the watchdog cut the stream in
/// the middle of that frame and the badge went `reconnecting` (and a real server's slow frame
/// would be cut again on every reconnect). Now its bytes count: the badge stays `live` until
/// `done`, and the view equals the server's history.
#[wasm_bindgen_test]
async fn a_frame_slower_than_the_idle_timeout_is_not_cut() {
    let (base, session, seen) = follow_idle(
        "text~trickle=3:150",
        &["done", "failed"],
        10_000,
        Some(400.0),
    )
    .await;
    assert!(seen.sent.is_ok(), "{:?}", seen.sent);
    assert_eq!(seen.status, "done", "{:?}", seen.warnings);
    let after_live: Vec<&String> = seen
        .statuses
        .iter()
        .skip_while(|s| s.as_str() != "live")
        .collect();
    assert!(
        !after_live.is_empty()
            && after_live
                .iter()
                .all(|s| s.as_str() == "live" || s.as_str() == "done"),
        "the badge left `live` while the frame arrived: {:?}",
        seen.statuses
    );
    assert_eq!(
        summary(&session),
        recorded_history(&base, &session.id()).await
    );
}

/// A `ReadableStream` made in JS that enqueues `chunks` and closes.
fn stream_of(chunks: &js_sys::Array) -> web_sys::ReadableStream {
    use wasm_bindgen::JsCast;
    js_sys::Function::new_with_args(
        "chunks",
        "return new ReadableStream({ start(c) { for (const x of chunks) c.enqueue(x); c.close(); } })",
    )
    .call1(&wasm_bindgen::JsValue::UNDEFINED, chunks)
    .unwrap()
    .unchecked_into()
}

/// Pipes `chunks` through the live-stream body pipe, collecting each slice handed over; the
/// consumer stops after `stop_after` slices.
async fn pipe_chunks(
    chunks: &js_sys::Array,
    stop_after: usize,
) -> (
    Result<(), forgestream_web::transport::fetch::FetchError>,
    Vec<Vec<u8>>,
) {
    use std::{cell::RefCell, rc::Rc};
    let seen = Rc::new(RefCell::new(Vec::<Vec<u8>>::new()));
    let sink = seen.clone();
    let abort = web_sys::AbortController::new().unwrap();
    let outcome = forgestream_web::transport::fetch::pipe(
        &stream_of(chunks),
        &abort,
        move |bytes: &[u8], now_ms: u64| {
            assert!(
                now_ms > 1_600_000_000_000,
                "the arrival time is the wall clock: {now_ms}"
            );
            let mut seen = sink.borrow_mut();
            seen.push(bytes.to_vec());
            seen.len() < stop_after
        },
    )
    .await;
    let seen = seen.borrow().clone();
    (outcome, seen)
}

/// The body pipe (the JS sink copying into wasm memory): a chunk bigger than a slice arrives
/// whole and in order in slices of at most `SLICE_BYTES`, empty chunks are skipped, a chunk that
/// is not a `Uint8Array` errors the stream as `network` after every byte before it was handed
/// over, and a consumer that stops gets nothing more.
#[wasm_bindgen_test]
async fn the_body_pipe_slices_big_chunks_and_refuses_chunks_that_are_not_bytes() {
    use forgestream_web::transport::fetch::{FetchError, SLICE_BYTES};
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let chunks = js_sys::Array::new();
    chunks.push(&js_sys::Uint8Array::from(&big[..]));
    chunks.push(&js_sys::Uint8Array::new_with_length(0));
    chunks.push(&js_sys::Uint8Array::from(&b"tail"[..]));
    let (outcome, seen) = pipe_chunks(&chunks, usize::MAX).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    let sizes: Vec<usize> = seen.iter().map(Vec::len).collect();
    let slice = SLICE_BYTES as usize;
    assert_eq!(sizes, [slice, slice, slice, 200_000 - 3 * slice, 4]);
    let mut expected = big.clone();
    expected.extend_from_slice(b"tail");
    assert_eq!(seen.concat(), expected);

    let chunks = js_sys::Array::new();
    chunks.push(&js_sys::Uint8Array::from(&b"ab"[..]));
    chunks.push(&wasm_bindgen::JsValue::from_str("not bytes"));
    let (outcome, seen) = pipe_chunks(&chunks, usize::MAX).await;
    assert!(
        matches!(&outcome, Err(FetchError::Network(m)) if m.contains("Uint8Array")),
        "{outcome:?}"
    );
    assert_eq!(seen.concat(), b"ab");

    let chunks = js_sys::Array::new();
    chunks.push(&js_sys::Uint8Array::from(&big[..]));
    chunks.push(&js_sys::Uint8Array::from(&b"tail"[..]));
    let (outcome, seen) = pipe_chunks(&chunks, 1).await;
    assert!(outcome.is_err(), "{outcome:?}");
    assert_eq!(seen.len(), 1, "nothing after the consumer stopped");
    assert_eq!(seen.concat(), big.get(..slice).unwrap());
}

/// The sink keeps one view of the slice buffer across chunks: when the consumer grows the wasm
/// memory (which detaches the old `ArrayBuffer`), the next chunk still lands whole, in order.
#[wasm_bindgen_test]
async fn the_body_pipe_keeps_every_byte_when_the_memory_grows_between_chunks() {
    use std::{cell::RefCell, rc::Rc};
    let chunks = js_sys::Array::new();
    let parts: Vec<Vec<u8>> = (0..4u8)
        .map(|n| (0..1000u32).map(|i| (i as u8) ^ n).collect())
        .collect();
    for part in &parts {
        chunks.push(&js_sys::Uint8Array::from(&part[..]));
    }
    let seen = Rc::new(RefCell::new(Vec::<Vec<u8>>::new()));
    let sink = seen.clone();
    let pages_before = wasm_pages();
    let abort = web_sys::AbortController::new().unwrap();
    let outcome = forgestream_web::transport::fetch::pipe(
        &stream_of(&chunks),
        &abort,
        move |bytes: &[u8], _| {
            // 8 MiB more per slice, kept until the pipe ends: the memory must grow each time.
            let mut seen = sink.borrow_mut();
            seen.push(bytes.to_vec());
            core::mem::forget(vec![1u8; 8 << 20]);
            true
        },
    )
    .await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(wasm_pages() > pages_before, "the memory grew");
    assert_eq!(*seen.borrow(), parts);
}

/// The wasm memory's size in 64 KiB pages.
fn wasm_pages() -> u32 {
    use wasm_bindgen::JsCast;
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let buffer: js_sys::ArrayBuffer = memory.buffer().unchecked_into();
    buffer.byte_length() / 65_536
}
