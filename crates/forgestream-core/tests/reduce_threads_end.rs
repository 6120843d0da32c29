//! A subagent thread whose turn is cancelled or fails before its `thread.done` is
//! `interrupted`, not `running` forever (a trial: the demo's thread headers read RUNNING under a
//! cancelled turn, after a reload too). A thread outlives its turn only across a pause
//! (PROTOCOL §7), so a paused turn leaves it running; a `thread.done` always wins.
use forgestream_core::reduce::{ReducerConfig, SessionView, ThreadStatus};
use forgestream_core::wire;
use serde_json::{json, Value};

fn created(turn: &str, previous: Option<&str>) -> Value {
    json!({"type":"turn.created","id":format!("c-{turn}"),"thread_id":null,"turn_id":turn,"previous_turn_id":previous,"state":{"status":"running"}})
}

fn spawn_call(id: &str) -> Value {
    json!({"type":"model.message","id":"m-main","thread_id":"main","tool_calls":[
        {"id":"call_1","type":"function","function":{"name":"create_sub_agent","arguments":"{}"}},
        {"id":"call_2","type":"function","function":{"name":"create_sub_agent","arguments":"{}"}}],
        "finish_reason":"tool_calls","_":id})
}

fn thread_created(thread: &str, call: &str) -> Value {
    json!({"type":"thread.created","id":format!("tc-{thread}"),"thread_id":thread,"title":thread,
        "agent_info":{"type":"dynamic","name":thread},"parent":{"thread_id":"main","tool_call_id":call}})
}

fn thread_message(thread: &str, id: &str) -> Value {
    json!({"type":"model.message","id":id,"thread_id":thread})
}

fn thread_delta(thread: &str, id: &str) -> Value {
    json!({"type":"model.message.delta","id":id,"thread_id":thread,"content":"Looking up"})
}

fn thread_done(thread: &str) -> Value {
    json!({"type":"thread.done","id":format!("td-{thread}"),"thread_id":thread,"title":thread,"state":{"status":"done","output":null}})
}

fn turn_done(turn: &str, state: Value) -> Value {
    json!({"type":"turn.done","id":format!("d-{turn}"),"thread_id":null,"turn_id":turn,"state":state})
}

fn cancelled() -> Value {
    json!({"status":"cancelled","reason":"client-cancelled","completed_at":"2026-12-01T00:00:00Z"})
}

fn live(view: &mut SessionView, turn: &str, frames: &[Value]) {
    // After the frames already applied to the turn (sequence numbers go on).
    let start = if view.turn(turn).is_some() { 100 } else { 1 };
    for (i, f) in frames.iter().enumerate() {
        view.apply_live(turn, Some(start + i as u64), &f.to_string())
            .unwrap();
    }
}

/// The frames as decoded events (a persisted history's).
fn events(frames: &[Value]) -> Vec<wire::Event> {
    frames
        .iter()
        .map(|v| wire::Event::from_json(&v.to_string()).unwrap())
        .collect()
}

fn status(view: &SessionView, thread: &str) -> ThreadStatus {
    view.thread(thread).expect("the thread is known").status
}

/// Turn t1 spawned two threads; `sub-b` finished, `sub-a` is still streaming.
fn spawned() -> SessionView {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    live(
        &mut view,
        "t1",
        &[
            created("t1", None),
            spawn_call("x"),
            thread_created("sub-a", "call_1"),
            thread_created("sub-b", "call_2"),
            thread_message("sub-a", "ma"),
            thread_delta("sub-a", "ma"),
            thread_done("sub-b"),
        ],
    );
    view
}

#[test]
fn a_cancelled_or_failed_turn_interrupts_its_running_threads_and_keeps_finished_ones() {
    let error =
        json!({"status":"error","message":"model failed","completed_at":"2026-12-01T00:00:00Z"});
    for end in [cancelled(), error] {
        let mut view = spawned();
        assert_eq!(status(&view, "sub-a"), ThreadStatus::Running);
        let before = view.thread("sub-a").unwrap().version;
        let changes = view
            .apply_live("t1", Some(50), &turn_done("t1", end.clone()).to_string())
            .unwrap();
        assert_eq!(status(&view, "sub-a"), ThreadStatus::Interrupted, "{end}");
        assert!(
            view.thread("sub-a").unwrap().version > before,
            "a new version"
        );
        assert!(changes.threads_changed, "reported as a change");
        assert_eq!(
            status(&view, "sub-b"),
            ThreadStatus::Done,
            "finished stays done"
        );
        // The wire spelling the app reads.
        assert_eq!(
            serde_json::to_value(ThreadStatus::Interrupted).unwrap(),
            json!("interrupted")
        );
    }
}

#[test]
fn a_paused_turn_leaves_its_threads_running_and_the_continuation_that_is_cancelled_ends_them() {
    let mut view = spawned();
    let paused = json!({"status":"done","output":null,"required_actions":[]});
    live(&mut view, "t1", &[turn_done("t1", paused)]);
    assert_eq!(
        status(&view, "sub-a"),
        ThreadStatus::Running,
        "a pause does not end it"
    );
    // The continuation: the thread goes on in t2, which is then cancelled.
    view.apply_live("t2", Some(1), &created("t2", Some("t1")).to_string())
        .unwrap();
    view.apply_live("t2", Some(2), &thread_message("sub-a", "ma2").to_string())
        .unwrap();
    assert_eq!(status(&view, "sub-a"), ThreadStatus::Running);
    view.apply_live("t2", Some(3), &turn_done("t2", cancelled()).to_string())
        .unwrap();
    assert_eq!(status(&view, "sub-a"), ThreadStatus::Interrupted);
}

#[test]
fn a_thread_done_after_the_cancellation_still_says_how_it_ended() {
    let mut view = spawned();
    view.apply_live("t1", Some(50), &turn_done("t1", cancelled()).to_string())
        .unwrap();
    assert_eq!(status(&view, "sub-a"), ThreadStatus::Interrupted);
    let mut late = SessionView::new("s1", ReducerConfig::default());
    // From the history, where its `thread.done` is persisted after the turn's end.
    let history = events(&[
        created("t1", None),
        spawn_call("x"),
        thread_created("sub-a", "call_1"),
        thread_message("sub-a", "ma"),
        turn_done("t1", cancelled()),
        thread_done("sub-a"),
    ]);
    late.apply_turn_events("t1", history).unwrap();
    assert_eq!(status(&late, "sub-a"), ThreadStatus::Done);
}

#[test]
fn a_history_that_gives_the_turn_state_before_its_thread_events_shows_them_interrupted() {
    let mut view = SessionView::new("s1", ReducerConfig::default());
    // The turns listing first: t1 cancelled.
    let turn: wire::Turn = serde_json::from_value(json!({
        "id":"t1","session_id":"s1","previous_turn_id":null,
        "state":cancelled(),"created_at":"2026-12-01T00:00:00Z"
    }))
    .unwrap();
    view.apply_turns(&[turn]);
    // Then its events: the thread it spawned never said `thread.done`.
    let spawned = events(&[
        spawn_call("x"),
        thread_created("sub-a", "call_1"),
        thread_message("sub-a", "ma"),
    ]);
    view.apply_turn_events("t1", spawned).unwrap();
    assert_eq!(status(&view, "sub-a"), ThreadStatus::Interrupted);
    // And a thread first seen through one of its messages (its `thread.created` missed).
    view.apply_turn_events("t1", events(&[thread_message("sub-c", "mc")]))
        .unwrap();
    assert_eq!(status(&view, "sub-c"), ThreadStatus::Interrupted);
}
