//! Progressive history (issue 16): `load()` applies each page of the session timeline (newest
//! first, PROTOCOL §4) as it arrives, holding back the page's oldest turn, which the next page
//! may continue. Checked through the public engine over recorded timelines cut into pages at
//! random: every turn a view between pages shows is complete (all of its items, as the whole
//! history has them), and the view after the last page is the one a single apply of every page
//! gives.
mod support;

use forgestream_core::reduce::{ReducerConfig, SessionView};
use forgestream_core::session::{
    Api, Command, Config, Effect, Flavor, Input, Method, Session, Settled,
    HISTORY_APPLY_MAX_EVENTS, HISTORY_APPLY_MS, HISTORY_SCREEN_TURNS,
};
use forgestream_core::wire;
use proptest::prelude::*;
use support::{answer_ok, read_fixture_json};

/// Recorded timelines (each newest first), one after the other as one session's: 6 turns with
/// tool calls, approvals, a client tool and a subagent thread.
const FOLDERS: &[&str] = &["subagent", "approve-allow", "ask", "readtool"];

fn timeline() -> Vec<serde_json::Value> {
    FOLDERS
        .iter()
        .flat_map(|f| {
            let page = read_fixture_json(&format!("recorded/{f}/session-events.json"));
            page["data"].as_array().expect("data").clone()
        })
        .collect()
}

fn reference(items: &[serde_json::Value]) -> SessionView {
    let items: Vec<wire::SessionEventItem> =
        serde_json::from_value(serde_json::Value::Array(items.to_vec())).unwrap();
    let mut view = SessionView::new("s1", ReducerConfig::default());
    view.apply_session_events(items).unwrap();
    view
}

/// Every turn of a view as `(turn id, item keys)`, in chain order.
type Shown = Vec<(String, Vec<String>)>;

/// The item keys of every turn of `view`, by turn id.
fn item_keys(view: &SessionView) -> Shown {
    view.turns()
        .map(|t| {
            (
                String::from(&t.turn_id),
                t.items.keys().map(String::from).collect(),
            )
        })
        .collect()
}

/// Drives one `load()` over `pages` (the turns listing is empty, as in `scripts/bench` W2), each
/// response `step_ms` after the last; returns the engine, the view's item keys after each
/// timeline page, and whether a notification came after each page.
fn load(pages: &[Vec<serde_json::Value>], step_ms: u64) -> (Session, Vec<Shown>, Vec<bool>) {
    load_with(
        pages,
        step_ms,
        HISTORY_SCREEN_TURNS,
        HISTORY_APPLY_MAX_EVENTS,
    )
}

/// [`load`] with `history_screen_turns` set to `screen_turns` and `history_apply_max_events`
/// to `max_events`.
fn load_with(
    pages: &[Vec<serde_json::Value>],
    step_ms: u64,
    screen_turns: usize,
    max_events: usize,
) -> (Session, Vec<Shown>, Vec<bool>) {
    let mut s = Session::new(
        "s1",
        Config {
            max_frame_bytes: 1 << 20,
            history_screen_turns: screen_turns,
            history_apply_max_events: max_events,
            ..Config::new(Api::new("http://h", Flavor::TrueForge))
        },
    );
    let mut now = 1_000;
    s.handle(
        Input::Command {
            id: 1,
            command: Command::Load,
        },
        now,
    );
    let mut pending: Vec<Effect> = core::iter::from_fn(|| s.poll_effect()).collect();
    // The app renders what each notification announced (here: drains at once).
    s.take_changes();
    let (mut after_page, mut notified, mut settled) = (Vec::new(), Vec::new(), None);
    while let Some(effect) = pending.pop() {
        match effect {
            Effect::Request(r) if r.method == Method::Get => {
                let body = if r.url.contains("/turns") {
                    r#"{"data":[],"pagination":{"next_page_token":null}}"#.to_string()
                } else {
                    let at: usize = r
                        .url
                        .split("page_token=p")
                        .nth(1)
                        .map_or(0, |n| n.parse().unwrap());
                    let next = if at + 1 < pages.len() {
                        format!("\"p{}\"", at + 1)
                    } else {
                        "null".to_string()
                    };
                    format!(
                        r#"{{"data":{},"pagination":{{"next_page_token":{next}}}}}"#,
                        serde_json::Value::Array(pages[at].clone())
                    )
                };
                now += step_ms;
                let out = answer_ok(&mut s, r.id, &body, now);
                if !r.url.contains("/turns") {
                    after_page.push(item_keys(s.view()));
                    notified.push(out.iter().any(|e| matches!(e, Effect::Notify)));
                }
                s.take_changes();
                pending.extend(out);
            }
            Effect::Settle {
                command: 1,
                outcome,
            } => settled = Some(outcome),
            _ => {}
        }
    }
    assert_eq!(settled, Some(Ok(Settled::Done)));
    (s, after_page, notified)
}

/// `items` cut before every index in `cuts` (sorted, deduplicated, within bounds).
fn paged(items: &[serde_json::Value], cuts: &[usize]) -> Vec<Vec<serde_json::Value>> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| c % items.len())
        .filter(|c| *c > 0)
        .collect();
    at.sort_unstable();
    at.dedup();
    let mut pages = Vec::new();
    let mut from = 0;
    for to in at.into_iter().chain([items.len()]) {
        pages.push(items[from..to].to_vec());
        from = to;
    }
    pages
}

fn check(pages: &[Vec<serde_json::Value>], step_ms: u64) -> Result<(), TestCaseError> {
    let all: Vec<serde_json::Value> = pages.concat();
    let whole = reference(&all);
    let complete = item_keys(&whole);
    let (s, after_page, notified) = load(pages, step_ms);
    for (n, shown) in after_page.iter().enumerate() {
        for turn in shown {
            prop_assert!(
                complete.contains(turn),
                "after page {n} of {}, turn {} is shown incomplete: {:?}",
                pages.len(),
                turn.0,
                turn.1
            );
        }
        let newly = n == 0 || shown.len() > after_page[n - 1].len();
        prop_assert!(
            !newly || shown.is_empty() || notified[n],
            "page {n} not notified"
        );
    }
    prop_assert_eq!(support::checked_summary(s.view()), whole.summary());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Any paging of the timeline, pages arriving 1 ms apart (gathered: `HISTORY_APPLY_MS`) or
    /// 100 ms apart (each applied): complete turns between pages, the all-at-once view at the end.
    #[test]
    fn any_paging_shows_complete_turns_and_ends_with_the_whole_view(
        cuts in proptest::collection::vec(any::<usize>(), 0..40),
        step_ms in prop::sample::select(vec![1u64, 40, HISTORY_APPLY_MS]),
    ) {
        let items = timeline();
        check(&paged(&items, &cuts), step_ms)?;
    }
}

/// One event per page (the worst cut): each turn appears whole, newest first, each page's
/// turn only once the next page shows another turn began.
#[test]
fn the_newest_turns_show_first_and_each_only_when_complete() {
    let items = timeline();
    let pages: Vec<Vec<serde_json::Value>> = items.iter().map(|i| vec![i.clone()]).collect();
    check(&pages, HISTORY_APPLY_MS).unwrap();
    let (_, after_page, _) = load(&pages, HISTORY_APPLY_MS);
    let newest = items[0]["turn_id"].as_str().unwrap();
    let first_shown = after_page
        .iter()
        .position(|shown| !shown.is_empty())
        .expect("a turn shows before the last page");
    assert!(first_shown + 1 < pages.len(), "shown before the end");
    assert_eq!(after_page[first_shown].len(), 1);
    assert_eq!(
        after_page[first_shown][0].0, newest,
        "the newest turn first"
    );
}

/// Pages arriving faster than `HISTORY_APPLY_MS` apart are gathered: a loopback load applies
/// (and rebuilds the view's order) a few times, not once per page — yet the first complete turn
/// shows at once, and nothing is lost at the end.
#[test]
fn pages_arriving_back_to_back_are_applied_together() {
    let items = timeline();
    let pages: Vec<Vec<serde_json::Value>> = items.iter().map(|i| vec![i.clone()]).collect();
    // Once one turn shows (a screen of one), the rest gather.
    let (s, after_page, _) = load_with(&pages, 1, 1, HISTORY_APPLY_MAX_EVENTS);
    let changes = after_page.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        changes <= 2,
        "{changes} applies for {} pages 1 ms apart",
        pages.len()
    );
    let first = after_page
        .iter()
        .position(|shown| !shown.is_empty())
        .unwrap();
    assert!(
        first + 1 < pages.len(),
        "the first complete turn shows before the end"
    );
    assert_eq!(s.view().summary(), reference(&items).summary());
}

/// Gathering stops at `history_apply_max_events`: pages arriving back to back are applied at
/// least every that many events (plus the held-back run of the oldest turn, which the next page
/// may continue), so the decoded events waiting stay bounded — and the view at the end is the
/// same.
#[test]
fn gathering_stops_at_the_event_bound() {
    let items = timeline();
    let pages: Vec<Vec<serde_json::Value>> = items.iter().map(|i| vec![i.clone()]).collect();
    let bound = 5;
    // The longest run of one turn's events: the most that can be held back beyond the bound.
    let longest_turn = items
        .chunk_by(|a, b| a["turn_id"] == b["turn_id"])
        .map(<[serde_json::Value]>::len)
        .max()
        .unwrap();
    let (s, after_page, _) = load_with(&pages, 1, 1, bound);
    let changed: Vec<usize> = (1..after_page.len())
        .filter(|&n| after_page[n] != after_page[n - 1])
        .collect();
    let (_, unbounded, _) = load_with(&pages, 1, 1, HISTORY_APPLY_MAX_EVENTS);
    let unbounded_changes = (1..unbounded.len())
        .filter(|&n| unbounded[n] != unbounded[n - 1])
        .count();
    assert!(
        changed.len() > unbounded_changes,
        "{} applies with a bound of {bound}, {unbounded_changes} without",
        changed.len()
    );
    let first = after_page.iter().position(|v| !v.is_empty()).unwrap();
    for gap in changed
        .windows(2)
        .map(|w| w[1] - w[0])
        .chain([changed[0] - first])
    {
        assert!(
            gap <= bound + longest_turn,
            "{gap} pages between applies: bound {bound}, longest turn {longest_turn} events"
        );
    }
    assert_eq!(s.view().summary(), reference(&items).summary());
}

/// Until a screenful of turns shows (`history_screen_turns`), every page that completes a turn
/// shows it at once, however fast the pages come; after that they gather. Here a screen of 3
/// turns, one event per page, pages 1 ms apart: the view shows 1, then 2, then 3 turns on the
/// pages that complete them, and the other 3 turns of the timeline arrive together.
#[test]
fn a_screenful_of_turns_shows_page_by_page_then_pages_gather() {
    let items = timeline();
    let pages: Vec<Vec<serde_json::Value>> = items.iter().map(|i| vec![i.clone()]).collect();
    let whole = reference(&items);
    let turns = whole.turn_ids().len();
    assert!(turns > 4, "{turns} turns");
    let (s, after_page, _) = load_with(&pages, 1, 3, HISTORY_APPLY_MAX_EVENTS);
    let counts: Vec<usize> = after_page.iter().map(Vec::len).collect();
    for n in 1..=3 {
        assert!(
            counts.contains(&n),
            "{n} turn(s) never shown alone: {counts:?}"
        );
    }
    // A turn shows on the page after its last event (the next page begins another turn).
    let ends: Vec<usize> = (1..items.len())
        .filter(|&i| items[i]["turn_id"] != items[i - 1]["turn_id"])
        .collect();
    for (k, &end) in ends.iter().take(3).enumerate() {
        assert_eq!(
            counts[end],
            k + 1,
            "turn {} not shown when complete: {counts:?}",
            k + 1
        );
    }
    // After the screen, gathered: fewer distinct states than turns.
    let changes = after_page.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(changes < turns, "{changes} applies for {turns} turns");
    assert_eq!(s.view().summary(), whole.summary());
}
