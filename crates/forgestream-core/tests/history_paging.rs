//! Issue 18 item 9: a listing whose `next_page_token` repeats, or that has more pages than the
//! cap, ends with what was received and a `protocol` warning — not 1,400 requests for nothing,
//! not a silent cut. Driven through the public engine, as the web executor drives it.
mod support;

use forgestream_core::reduce::TurnStatus;
use forgestream_core::session::{
    Api, Command, Config, Effect, Flavor, HttpRequest, Input, Method, Session, Settled,
};
use support::answer_ok;

fn engine() -> Session {
    Session::new(
        "s1",
        Config {
            max_frame_bytes: 1 << 20,
            ..Config::new(Api::new("http://h", Flavor::TrueForge))
        },
    )
}

/// Drives one `load()`; `answer` gives the body for each GET (by URL). Returns every request
/// made and the load's outcome.
fn load(answer: impl Fn(&str) -> String) -> (Session, Vec<HttpRequest>, Option<Settled>) {
    let mut s = engine();
    let mut now = 1_000;
    let mut made = Vec::new();
    let mut outcome = None;
    let mut pending: Vec<Effect> = Vec::new();
    s.handle(
        Input::Command {
            id: 1,
            command: Command::Load,
        },
        now,
    );
    pending.extend(core::iter::from_fn(|| s.poll_effect()));
    // A bound far above the fixed code's requests, so the old code's 1,400 show as a failure,
    // not as a hang.
    while let Some(effect) = pending.pop() {
        match effect {
            Effect::Request(r) if r.method == Method::Get => {
                assert!(made.len() < 5_000, "still paging after 5,000 requests");
                let body = answer(&r.url);
                made.push(r.clone());
                now += 1;
                pending.extend(answer_ok(&mut s, r.id, &body, now));
            }
            Effect::Settle {
                command: 1,
                outcome: o,
            } => outcome = Some(o.expect("load settles Ok")),
            _ => {}
        }
    }
    (s, made, outcome)
}

const TURN: &str = r#"{"id":"t1","session_id":"s1","previous_turn_id":null,"state":{"status":"done","output":null,"completed_at":"2026-12-01T00:00:05Z"},"created_at":"2026-12-01T00:00:00Z"}"#;

/// t1's `turn.done` as a session-timeline item (a timeline shows an ended turn's end; one it
/// shows running while the turns listing shows it ended is rebuilt from its events).
const DONE: &str = r#"{"turn_id":"t1","event":{"type":"turn.done","id":"d-t1","turn_id":"t1","thread_id":null,"created_at":"2026-12-01T00:00:05Z","state":{"status":"done","output":null,"completed_at":"2026-12-01T00:00:05Z"}}}"#;

/// One session-timeline item: a complete `model.message` of turn t1 with `text`.
fn message(n: usize) -> String {
    format!(
        r#"{{"turn_id":"t1","event":{{"type":"model.message","id":"m{n}","thread_id":"main","created_at":"2026-12-01T00:00:01Z","content":"part {n}"}}}}"#
    )
}

fn page(items: &[String], next: Option<&str>) -> String {
    let next = next.map_or("null".to_string(), |t| format!("\"{t}\""));
    format!(
        r#"{{"data":[{}],"pagination":{{"next_page_token":{next}}}}}"#,
        items.join(",")
    )
}

fn token(url: &str) -> Option<&str> {
    url.split("page_token=")
        .nth(1)
        .map(|t| t.split('&').next().unwrap_or(t))
}

fn protocol_warnings(s: &mut Session) -> Vec<String> {
    let (_, warnings) = s.take_changes();
    warnings
        .into_iter()
        .filter(|(code, _)| code == "protocol")
        .map(|(_, m)| m)
        .collect()
}

#[test]
fn a_repeating_next_page_token_ends_each_listing_with_a_warning_and_keeps_what_arrived() {
    let (mut s, made, outcome) = load(|url| {
        if url.contains("/turns?") {
            // Every turns page names the same next page.
            page(&[TURN.to_string()], Some("again"))
        } else if token(url).is_none() {
            page(&[message(1)], Some("loop"))
        } else {
            // The second page of the timeline points back at itself.
            page(&[message(2)], Some("loop"))
        }
    });
    assert_eq!(outcome, Some(Settled::Done));
    let turn_pages = made.iter().filter(|r| r.url.contains("/turns?")).count();
    let event_pages = made.iter().filter(|r| r.url.contains("/events?")).count();
    assert_eq!(
        (turn_pages, event_pages),
        (2, 2),
        "each listing stops at the first repeated token"
    );
    // What the user sees: the turn and both messages that arrived.
    let view = s.view();
    let t1 = view
        .turn("t1")
        .expect("the turn from the first page is shown");
    assert_eq!(t1.status, TurnStatus::Done);
    assert_eq!(t1.items.len(), 2, "both messages received are kept");
    let warnings = protocol_warnings(&mut s);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    // The timeline is read first (TrueForge), then the turns listing.
    assert!(warnings[0].contains("session events listing"));
    assert!(warnings[1].contains("turns listing") && warnings[1].contains("already sent"));
}

#[test]
fn a_listing_cut_at_its_page_cap_says_so() {
    // 1,500 timeline pages, each with a fresh token: more than the 1,000 the SDK reads.
    let (mut s, made, outcome) = load(|url| {
        if url.contains("/turns?") {
            return page(&[TURN.to_string()], None);
        }
        let n: usize = token(url).map_or(0, |t| t.trim_start_matches('p').parse().unwrap());
        let next = format!("p{}", n + 1);
        page(&[message(n)], (n + 1 < 1_500).then_some(next.as_str()))
    });
    assert_eq!(outcome, Some(Settled::Done));
    let event_pages = made.iter().filter(|r| r.url.contains("/events?")).count();
    assert_eq!(event_pages, 1_000);
    assert_eq!(s.view().turn("t1").unwrap().items.len(), 1_000);
    let warnings = protocol_warnings(&mut s);
    assert!(
        warnings.iter().any(|w| w.contains("more than 1000 pages")),
        "the cut is reported: {warnings:?}"
    );
}

#[test]
fn a_listing_that_ends_normally_warns_nothing() {
    let (mut s, made, _) = load(|url| {
        if url.contains("/turns?") {
            return page(&[TURN.to_string()], None);
        }
        match token(url) {
            None => page(&[DONE.to_string(), message(1)], Some("b")),
            Some(_) => page(&[message(2)], None),
        }
    });
    assert_eq!(made.len(), 3, "{made:?}");
    assert!(protocol_warnings(&mut s).is_empty());
}
