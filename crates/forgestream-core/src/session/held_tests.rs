//! The held-turn rule (`held.rs`): a change set carries items only of the turns the consumer
//! read, and a turn read between two drains answers as of the last drain, so the next drain's
//! appends apply once.
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use super::*;

/// The keys of the items a change set carries, with the turn of each.
fn carried(c: &CoreChanges<'_>) -> Vec<(String, String)> {
    c.items
        .iter()
        .map(|i| (i.turn_id.to_string(), i.key.to_string()))
        .collect()
}

/// The turns a change set names (whole header or cursor).
fn named(c: &CoreChanges<'_>) -> Vec<String> {
    c.turns
        .iter()
        .map(|h| h.turn_id.to_string())
        .chain(c.cursors.iter().map(|t| t.turn_id.to_string()))
        .collect()
}

/// [`Session::turn_items`] of `turn` as owned items, with its drain.
fn owned(s: &mut Session, turn: &str) -> (u64, Vec<crate::reduce::ItemView>) {
    let read = s.turn_items(turn).expect("the turn");
    (
        read.drain,
        read.items.into_iter().map(|i| i.into_owned()).collect(),
    )
}

fn content(item: &crate::reduce::ItemView) -> Option<String> {
    match &item.body {
        crate::reduce::ItemBody::Message(m) => match &m.content {
            Some(crate::reduce::ContentView::Text(t)) => Some(t.clone()),
            _ => None,
        },
        _ => None,
    }
}

#[test]
fn a_change_set_carries_items_only_of_the_turns_the_consumer_holds() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    let (changes, extra) = d.s.take_changes();
    let c = d.s.changes_of(&changes, &extra);
    assert!(
        carried(&c).is_empty(),
        "nothing read yet: {:?}",
        carried(&c)
    );
    assert_eq!(named(&c), ["t1"], "the turn itself is named");
    let full = d.s.full_changes(&changes, &extra);
    assert!(full.items.is_empty() && full.turns.len() == 1);

    // Text gained by a turn nobody read: the turn is named (its cursor), no item crosses.
    feed_frames(&mut d, post, &[(4, delta("m-t1", " more"))]);
    let (changes, extra) = d.s.take_changes();
    let c = d.s.changes_of(&changes, &extra);
    assert!(carried(&c).is_empty(), "{:?}", carried(&c));
    assert_eq!(named(&c), ["t1"]);

    // Read once: from then on its items cross like before, in drains and the whole view.
    assert!(!d.s.holds_items("t1"));
    let read = d.s.turn_items("t1").expect("the turn");
    assert_eq!(read.items.len(), 1);
    assert!(d.s.holds_items("t1"));
    assert!(d.s.turn_items("t-unknown").is_none());
    feed_frames(&mut d, post, &[(5, delta("m-t1", "!"))]);
    let (changes, extra) = d.s.take_changes();
    let c = d.s.changes_of(&changes, &extra);
    assert_eq!(carried(&c), [("t1".to_string(), "m-t1".to_string())]);
    let full = d.s.full_changes(&changes, &extra);
    assert_eq!(full.items.len(), 1);
}

#[test]
fn turn_items_all_holds_every_turn_from_the_start() {
    let mut d = Driver::new();
    d.s = Session::new(
        "s1",
        Config {
            max_frame_bytes: 1 << 20,
            turn_items: TurnItems::All,
            ..Config::new(Api::new("http://h", Flavor::TrueForge))
        },
    );
    running_turn(&mut d, "t1", None);
    assert!(d.s.holds_items("t1") && d.s.holds_items("any"));
    let (changes, extra) = d.s.take_changes();
    let c = d.s.changes_of(&changes, &extra);
    assert_eq!(carried(&c), [("t1".to_string(), "m-t1".to_string())]);
}

/// The race: a turn read while the engine holds undrained text for it answers with the text
/// of the last drain at that drain's item version, so the next drain's append (relative to
/// that version) applies once and gives the engine's text: no doubled text, no resync.
#[test]
fn a_turn_read_between_drains_answers_as_of_the_last_drain() {
    let mut d = Driver::new();
    let (post, _) = running_turn(&mut d, "t1", None);
    d.s.take_changes();
    let drained = d.s.view().item("t1", "m-t1").unwrap().clone();
    assert_eq!(content(&drained).as_deref(), Some("partial"));
    // Undrained: text on the drained message, and a new message.
    feed_frames(
        &mut d,
        post,
        &[
            (4, delta("m-t1", " and")),
            (5, delta("m-t1", " more")),
            (6, message("m2")),
            (7, delta("m2", "x")),
        ],
    );
    let (drain, read) = owned(&mut d.s, "t1");
    assert_eq!(drain, d.s.drains());
    let first = read.iter().find(|i| i.key == "m-t1").unwrap();
    assert_eq!(first, &drained, "the message as the last drain left it");
    // The new item is there whole (the consumer's header does not name it until the next
    // drain brings the header that does).
    assert!(read.iter().any(|i| i.key == "m2"));

    let (changes, extra) = d.s.take_changes();
    let c = d.s.changes_of(&changes, &extra);
    let update = c.items.iter().find(|i| i.key == "m-t1").unwrap();
    let append = update
        .append
        .as_ref()
        .expect("an append, not the whole item");
    assert_eq!(append.base_version, drained.version);
    let now = d.s.view().item("t1", "m-t1").unwrap();
    assert_eq!(append.version, now.version);
    assert_eq!(
        format!(
            "{}{}",
            content(&drained).unwrap(),
            append.content.unwrap_or("")
        ),
        content(now).unwrap(),
        "the read text plus the append is the engine's text, once"
    );
    assert!(c.items.iter().any(|i| i.key == "m2" && i.value.is_some()));
    assert_eq!(named(&c), ["t1"]);

    // Read with nothing undrained: the engine's items as they are.
    let (_, again) = owned(&mut d.s, "t1");
    let first = again.iter().find(|i| i.key == "m-t1").unwrap();
    assert_eq!(first, d.s.view().item("t1", "m-t1").unwrap());
}
