//! Catching up with turns made elsewhere (`sync.rs`): a child of `tests`, sharing its driver.
use super::*;

/// The timeline of one finished turn `t1`, newest first.
fn first_turn() -> [(&'static str, String); 3] {
    [
        ("t1", done_event("t1")),
        ("t1", complete_message("m1", "first reply")),
        ("t1", created("t1", None)),
    ]
}

/// A view loaded from a history of one finished turn `t1`.
fn loaded(d: &mut Driver) {
    let (load, out) = d.command(Command::Load);
    let events = request_to(&out, Method::Get, "/events").id;
    let out = d.respond(events, 200, &timeline_page(&first_turn(), None));
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    let out = d.respond(list, 200, &turn_listing(&[("t1", None, DONE_STATE)]));
    assert_eq!(settled(&out, load), Some(&Ok(Settled::Done)));
}

/// The history read again after a sync found `newest` (its state `state`): `t1` as before,
/// then the newer turn, which another browser made.
fn reload_with(d: &mut Driver, out: &[Effect], newest: &str, state: &str) -> Vec<Effect> {
    let events = request_to(out, Method::Get, "/events").id;
    // The timeline shows an ended turn's `turn.done` (one it shows running while the listing
    // shows it ended is rebuilt: `history_done`).
    let mut items = Vec::new();
    let done = format!(
        r#"{{"type":"turn.done","id":"d-{newest}","turn_id":"{newest}","thread_id":null,"created_at":"2026-12-01T00:00:09Z","state":{state}}}"#
    );
    if state != RUNNING {
        items.push((newest, done));
    }
    items.push((newest, created(newest, Some("t1"))));
    items.extend(first_turn());
    let out = d.respond(events, 200, &timeline_page(&items, None));
    let list = request_to(&out, Method::Get, "/turns?limit=25").id;
    d.respond(
        list,
        200,
        &turn_listing(&[("t1", None, DONE_STATE), (newest, Some("t1"), state)]),
    )
}

/// Refresh with no connection to retry lists the newest turn; one the view does not have brings
/// the history again, and the newest turn, running, is followed.
#[test]
fn a_refresh_catches_up_with_a_turn_made_elsewhere_and_follows_it() {
    let mut d = Driver::new();
    loaded(&mut d);
    let (refresh, out) = d.command(Command::Refresh);
    assert_eq!(settled(&out, refresh), Some(&Ok(Settled::Done)));
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(
        list,
        200,
        &turn_page(&[turn_json("t2", Some("t1"), RUNNING)]),
    );
    let out = reload_with(&mut d, &out, "t2", RUNNING);
    assert!(d.s.view().turn("t2").is_some(), "the other browser's turn");
    assert_eq!(message_texts(&d.s, "t1"), ["first reply"], "merged, once");
    // Followed after a wait in which another tab of this browser would have announced it.
    assert!(requests(&out).is_empty(), "{out:?}");
    assert_eq!(d.s.poll_timeout(), Some(d.now + SYNC_FOLLOW_MS));
    d.now += SYNC_FOLLOW_MS;
    let out = d.feed(Input::Timer);
    request_to(&out, Method::Get, "/turns/t2");
    assert_eq!(d.s.connection().turn_id, Some("t2"));
    assert!(requests(&d.effects)
        .iter()
        .all(|r| r.method != Method::Post));
}

/// The newest turn is the one the view shows, as the view shows it: nothing more is read.
#[test]
fn a_refresh_that_finds_nothing_new_reads_nothing_more() {
    let mut d = Driver::new();
    loaded(&mut d);
    let (_, out) = d.command(Command::Refresh);
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(list, 200, &turn_page(&[turn_json("t1", None, DONE_STATE)]));
    assert!(requests(&out).is_empty(), "{out:?}");
    // A failed listing leaves the view as it is too.
    let (_, out) = d.command(Command::Refresh);
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.feed(Input::NetworkError { request: list });
    assert!(requests(&out).is_empty(), "{out:?}");
}

/// The server refuses a message because a turn another browser started waits for its approval
/// (HTTP 422): the send fails (nothing was sent), and the view catches up — the paused turn
/// and its approval show, and the refused send no longer stands for the session's state.
#[test]
fn a_send_refused_for_a_turn_waiting_elsewhere_shows_that_turn_and_its_approval() {
    let mut d = Driver::new();
    loaded(&mut d);
    let (send, out) = d.command(Command::Send {
        input: vec![user_text("hello?")],
        interrupt: false,
    });
    let post = request_to(&out, Method::Post, "/turns").id;
    let out = d.respond(
        post,
        422,
        r#"{"error":{"message":"The previous turn is waiting for tool approvals or responses"}}"#,
    );
    match settled(&out, send) {
        Some(Err(e)) => assert_eq!(e.status, Some(422), "{e}"),
        other => panic!("the send is refused: {other:?}"),
    }
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(
        list,
        200,
        &turn_page(&[turn_json("t2", Some("t1"), PAUSED)]),
    );
    reload_with(&mut d, &out, "t2", PAUSED);
    assert_eq!(
        d.s.view().turn("t2").map(|t| t.status),
        Some(TurnStatus::Paused)
    );
    assert_eq!(d.s.view().pending_actions().len(), 1);
    assert!(d.s.error().is_none(), "{:?}", d.s.error());
    assert_eq!(
        d.s.connection_state(),
        ConnectionState::Idle { turn_id: None }
    );
    assert_eq!(posts(&d), 1, "nothing is sent again");
}

/// Back in view, the page looks for turns made elsewhere — once per `SYNC_VISIBLE_MS`, and not
/// while it follows a turn (its stream is the session's newest state).
#[test]
fn a_return_to_view_looks_for_turns_made_elsewhere_now_and_then() {
    let mut d = Driver::new();
    loaded(&mut d);
    let out = d.feed(Input::Visible);
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    d.respond(list, 200, &turn_page(&[turn_json("t1", None, DONE_STATE)]));
    assert!(requests(&d.feed(Input::Visible)).is_empty(), "too soon");
    d.now += SYNC_VISIBLE_MS;
    let out = d.feed(Input::Visible);
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    d.respond(list, 200, &turn_page(&[turn_json("t1", None, DONE_STATE)]));
    running_turn(&mut d, "t2", None);
    d.now += SYNC_VISIBLE_MS;
    let out = d.feed(Input::Visible);
    assert!(
        requests(&out).iter().all(|r| !r.url.contains("order=desc")),
        "{out:?}"
    );
}

/// A running turn the sync found that another tab of this browser announces meanwhile is
/// followed once, through that announcement (`Attach`), not again when the wait is over.
#[test]
fn a_turn_announced_during_the_wait_is_not_followed_twice() {
    let mut d = Driver::new();
    loaded(&mut d);
    let (_, out) = d.command(Command::Refresh);
    let list = request_to(&out, Method::Get, "/turns?limit=1&order=desc").id;
    let out = d.respond(
        list,
        200,
        &turn_page(&[turn_json("t2", Some("t1"), RUNNING)]),
    );
    reload_with(&mut d, &out, "t2", RUNNING);
    let (_, out) = d.command(Command::Attach {
        turn_id: "t2".into(),
    });
    let followed = requests(&out).len();
    assert!(followed > 0, "the announcement is followed: {out:?}");
    d.now += SYNC_FOLLOW_MS;
    let out = d.feed(Input::Timer);
    assert!(
        requests(&out).iter().all(|r| !r.url.contains("/turns/t2")),
        "{out:?}"
    );
}
