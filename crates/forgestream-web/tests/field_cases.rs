//! FIELD-CASES that concern the browser client (`/work/shared/cases/FIELD-CASES.md`), against the
//! emulator: C13 (a stale live marker after a reload), C16(c) (many forced reconnects), C17
//! (switching sessions mid-stream), C18 (two tabs writing one checkpoint).
#![cfg(target_arch = "wasm32")]
mod support;

use forgestream_web::storage::{checkpoint_store, Checkpoint, StorageKind, SCHEMA_VERSION};
use support::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn local_checkpoint(namespace: &str, session_id: &str) -> Option<Checkpoint> {
    checkpoint_store(StorageKind::Local, namespace, "").load(session_id)
}

/// C13: the checkpoint says t1 is live at seq 40, but the server already finished it. Resuming
/// checks the turn first, settles from history, clears the live marker; nothing re-POSTs.
#[wasm_bindgen_test]
async fn c13_stale_live_marker_settles_from_history() {
    clear_local_storage("t-c13");
    let c = client_in("local", "t-c13", None);
    let session = create(&c, "storyteller").await;
    let turn = await_js(session.send(message("Tell a story, 30 words"), false, None))
        .await
        .expect("send")
        .as_string()
        .unwrap();
    wait_status(&session, &["done"], 20_000).await;
    session.disconnect();
    // A reload that kept an old live marker: {t1, seq 40}.
    let mut store = checkpoint_store(StorageKind::Local, "t-c13", "");
    store.save(&Checkpoint {
        v: SCHEMA_VERSION,
        session_id: session.id(),
        turn_id: Some(turn.clone()),
        seq: 40,
        saved_at: 0,
        creating: None,
    });
    let reloaded = client_in("local", "t-c13", None);
    let s = reloaded.session(session.id());
    await_js(s.load()).await.expect("load");
    let followed = await_js(s.resume()).await.expect("resume");
    assert_eq!(followed.as_string().as_deref(), Some(turn.as_str()));
    wait_status(&s, &["done"], 10_000).await;
    assert_eq!(summary(&s), persisted_summary(&session.id()).await);
    let marker = local_checkpoint("t-c13", &session.id()).expect("record");
    assert_eq!(
        marker.turn_id, None,
        "the live marker is cleared once the turn settled"
    );
    // The next send creates t2 and never cancels t1.
    await_js(s.send(message("Tell a story, 10 words"), false, None))
        .await
        .expect("send t2");
    wait_status(&s, &["done"], 20_000).await;
    let history = persisted_summary(&session.id()).await;
    assert_eq!(turn_status(&history, 0), "done");
    assert_eq!(turn_status(&history, 1), "done");
}

/// C16(c): 30 forced disconnect/reconnect cycles on one turn end with exactly the server's view.
#[wasm_bindgen_test]
async fn c16c_many_forced_reconnects_change_nothing() {
    let c = client("memory", None);
    let session = create(&c, "storyteller").await;
    await_js(session.send(message("Tell a story, 500 words, 6 ms"), false, None))
        .await
        .expect("send");
    let mut drops = 0;
    while drops < 30 {
        let status = connection_status(&session);
        if status == "done" {
            break;
        }
        if status == "live" {
            session.drop_connection();
            drops += 1;
        }
        sleep(15).await;
    }
    assert!(
        drops >= 5,
        "only {drops} drops happened before the turn ended"
    );
    wait_status(&session, &["done"], 30_000).await;
    assert_eq!(summary(&session), persisted_summary(&session.id()).await);
}

/// C17: two sessions stream at once; every event lands in its own session and turn, and each
/// session's checkpoint carries only its own turn.
#[wasm_bindgen_test]
async fn c17_switching_sessions_mid_stream() {
    clear_local_storage("t-c17");
    let c = client_in("local", "t-c17", None);
    let s1 = create(&c, "storyteller").await;
    let t1 = await_js(s1.send(message("Tell a story, 150 words, 8 ms"), false, None))
        .await
        .expect("send s1")
        .as_string()
        .unwrap();
    wait_text(&s1, 20, 10_000).await;
    let s2 = create(&c, "storyteller").await;
    let t2 = await_js(s2.send(message("Tell a story, 60 words"), false, None))
        .await
        .expect("send s2")
        .as_string()
        .unwrap();
    let c1 = local_checkpoint("t-c17", &s1.id());
    let c2 = local_checkpoint("t-c17", &s2.id());
    assert!(c1
        .as_ref()
        .is_none_or(|c| c.turn_id.is_none() || c.turn_id.as_deref() == Some(t1.as_str())));
    assert!(c2
        .as_ref()
        .is_none_or(|c| c.turn_id.is_none() || c.turn_id.as_deref() == Some(t2.as_str())));
    wait_status(&s1, &["done"], 20_000).await;
    wait_status(&s2, &["done"], 20_000).await;
    let v1 = summary(&s1);
    let v2 = summary(&s2);
    assert_eq!(v1["turns"].as_array().map(|t| t.len()), Some(1));
    assert_eq!(v2["turns"].as_array().map(|t| t.len()), Some(1));
    assert_eq!(v1, persisted_summary(&s1.id()).await);
    assert_eq!(v2, persisted_summary(&s2.id()).await);
}

/// C18: checkpoint writes are monotonic across tabs: a lagging tab cannot lower 9 to 5.
#[wasm_bindgen_test]
fn c18_checkpoint_writes_are_monotonic() {
    clear_local_storage("t-c18");
    let mut tab_a = checkpoint_store(StorageKind::Local, "t-c18", "");
    let mut tab_b = checkpoint_store(StorageKind::Local, "t-c18", "");
    let record = |seq| Checkpoint {
        v: SCHEMA_VERSION,
        session_id: "s1".into(),
        turn_id: Some("t1".into()),
        seq,
        saved_at: 0,
        creating: None,
    };
    assert!(tab_a.save(&record(7)));
    assert!(tab_a.save(&record(9)));
    assert!(
        !tab_b.save(&record(5)),
        "a lower cursor must not overwrite a higher one"
    );
    assert_eq!(tab_b.load("s1").map(|c| c.seq), Some(9));
    assert_eq!(tab_a.last_session(None).as_deref(), Some("s1"));
    clear_local_storage("t-c18");
}
