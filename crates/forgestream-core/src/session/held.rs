//! Which turns' items the UI layer holds (issue 16: turn items cross on first read).
//!
//! A long history's items are most of its bytes (W2: ≈50 MB of item JSON for 15,419 turns), and
//! a UI shows one screen of them. So by default ([`TurnItems::OnRead`]) the change sets carry
//! every turn's header but items only for the turns the consumer *holds*: those it asked for
//! with [`Session::turn_items`]. A change to an item of a turn that is not held still names the
//! turn (its header, or its cursor when only text was appended), so the consumer makes a new
//! turn object whose items it reads from the engine when asked. [`TurnItems::All`] holds every
//! turn (the change sets of before: every item crosses).
//!
//! **The race.** A turn read between two drains may have changes the consumer has not drained
//! yet. [`Session::turn_items`] answers with the turn's items *as the last drain left them*
//! where that can be told from the undrained change set: a message that only gained text is cut
//! back to its length and version at that drain (so the next drain's appends, relative to that
//! version, apply once — no double text, no full resync); an item added since is included but
//! not named by the consumer's header (its `itemKeys`), which leaves it out until the next drain
//! brings the header that names it. An item *replaced or removed* since the last drain shows its
//! new state one drain early (the engine keeps no older copy); the next drain carries it whole,
//! so nothing is applied twice either way.
use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;

use serde::Deserialize;

use crate::id_map::{IdMap, IdSet};
use crate::reduce::{ChangeSet, ContentView, ItemBody, ItemView, TextAppend};
use crate::wire::json::decode_str_enum;
use crate::wire::write::{Encode, Object};

use super::Session;

/// Option `turnItems`: which turns' items cross into JS with every change set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "tsify", derive(tsify::Tsify))]
#[serde(rename_all = "camelCase")]
pub enum TurnItems {
    /// Only the turns whose items the app has read (default): the others' items stay in wasm
    /// until read, then follow every change.
    #[default]
    OnRead,
    /// Every turn's items, from the first snapshot on (the full-history path).
    All,
}

decode_str_enum!(TurnItems, "\"onRead\" or \"all\"" {
    "onRead" => OnRead,
    "all" => All,
});

/// The held turns: every turn under [`TurnItems::All`], else the ids read so far.
#[derive(Debug, Default)]
pub(crate) struct HeldTurns {
    all: bool,
    ids: IdSet,
}

impl HeldTurns {
    pub(crate) fn new(mode: TurnItems) -> Self {
        HeldTurns {
            all: mode == TurnItems::All,
            ids: IdSet::new(),
        }
    }

    /// Whether the consumer holds `turn_id`'s items (its change sets carry them).
    pub(crate) fn holds(&self, turn_id: &str) -> bool {
        self.all || self.ids.contains_key(turn_id)
    }

    fn hold(&mut self, turn_id: &str) {
        if !self.all {
            self.ids.add(turn_id);
        }
    }
}

/// [`Session::turn_items`]'s answer: `{"turnId": string, "drain": number, "items": ItemView[]}`
/// (`items` left out when empty), the items in the turn's stream order (the consumer orders
/// them by its header's `itemKeys`).
#[derive(Debug)]
pub struct HeldItems<'a> {
    /// The turn.
    pub turn_id: &'a str,
    /// The drain the items are as of (the last one taken).
    pub drain: u64,
    /// The items, messages that gained text since that drain cut back to it.
    pub items: Vec<Cow<'a, ItemView>>,
}

impl Encode for HeldItems<'_> {
    fn encode(&self, out: &mut String) {
        let mut o = Object::open(out);
        o.member("turnId", self.turn_id);
        o.member("drain", &self.drain);
        // Left out when empty, as a change set's `items`: the web crate takes them out and
        // sends them after the rest, in batches.
        if !self.items.is_empty() {
            let items: Vec<&ItemView> = self.items.iter().map(|i| i.as_ref()).collect();
            o.member("items", &items);
        }
        o.close();
    }
}

impl Session {
    /// Whether the change sets carry `turn_id`'s items (see the module docs).
    pub fn holds_items(&self, turn_id: &str) -> bool {
        self.held.holds(turn_id)
    }

    /// The items of `turn_id` as of the last drain (see the module docs for the one exception),
    /// and from now on the change sets carry that turn's item changes. `None`: no such turn.
    /// O(the turn's items + the undrained changes).
    pub fn turn_items(&mut self, turn_id: &str) -> Option<HeldItems<'_>> {
        self.view.turn(turn_id)?;
        self.held.hold(turn_id);
        // The undrained changes of this turn, chained as the drain will chain them.
        let mut mine = ChangeSet {
            items: self
                .changes
                .items
                .iter()
                .filter(|c| c.turn_id == turn_id)
                .cloned()
                .collect(),
            ..ChangeSet::default()
        };
        mine.normalize();
        let mut appended: IdMap<TextAppend> = IdMap::new();
        for c in mine.items {
            if let (false, Some(at)) = (c.removed, c.appended) {
                appended.insert(crate::id::Id::from(c.key), at);
            }
        }
        let turn = self.view.turn(turn_id)?;
        let items = turn
            .items
            .values()
            .map(
                |item| match appended.get(&item.key).and_then(|&at| cut_back(item, at)) {
                    Some(earlier) => Cow::Owned(earlier),
                    None => Cow::Borrowed(item),
                },
            )
            .collect();
        Some(HeldItems {
            turn_id: &turn.turn_id,
            drain: self.drains,
            items,
        })
    }
}

/// `item` as it was at `at.base_version`: its text fields cut to their lengths then (the only
/// change a [`TextAppend`] run makes). `None` when that is not a plain-text message or a length
/// does not fall on the text (then the item crosses as it is; the next drain carries it whole).
fn cut_back(item: &ItemView, at: TextAppend) -> Option<ItemView> {
    let ItemBody::Message(m) = &item.body else {
        return None;
    };
    // An empty text is absent in the view (`None`), as the reducer normalises it.
    fn cut(text: Option<&str>, to: usize) -> Option<Option<String>> {
        let kept = text.unwrap_or_default().get(..to)?;
        Some((!kept.is_empty()).then(|| String::from(kept)))
    }
    let content = match &m.content {
        None => None,
        Some(ContentView::Text(text)) => Some(text.as_str()),
        Some(ContentView::Parts(_)) => return None,
    };
    let content = cut(content, at.content_from)?.map(ContentView::Text);
    let reasoning = cut(m.reasoning().map(|t| t.as_str()), at.reasoning_from)?;
    let refusal = cut(m.refusal().map(|t| t.as_str()), at.refusal_from)?;
    let mut earlier = item.clone();
    earlier.version = at.base_version;
    if let ItemBody::Message(m) = &mut earlier.body {
        m.content = content;
        m.set_reasoning(reasoning.map(Into::into));
        m.set_refusal(refusal.map(Into::into));
    }
    Some(earlier)
}
