//! [`IdMap`]: the one map type of the core — values by protocol id (`turn_id`, event id,
//! `thread_id`, `tool_call_id`), iterated in id order.
//!
//! Why not `BTreeMap<String, V>` per value type: each `(K, V)` pair instantiates the whole B-tree
//! (search, insert with splits, remove with merges, iterators, drop) again — twelve of them were
//! 83 KB of the wasm's 570 KB of code (issue 16, `node bench/size.mjs`). Here every map shares one
//! `BTreeMap<String, u32>` (id → slot) and only the slot vector is per value type, which is a few
//! small `Vec` functions. The ordering is the B-tree's, so iteration order (ids sort by creation
//! time: ULIDs, PROTOCOL §1) is what it was; lookups cost one more indexed load.
//!
//! The id is stored once, in the index; a removed value's slot is reused by the next insert.

use alloc::boxed::Box;
use alloc::collections::btree_map;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::cell::Cell;
use core::cmp::Ordering;
use core::fmt;
use core::slice;

/// Whether two ids are the same bytes (`a == b`), compared eight bytes at a time.
///
/// Why not `==`: `str` equality calls `memcmp`, which in the wasm build is compiler-builtins'
/// byte-at-a-time loop, called out of line — a few per text delta (the message's id, its
/// thread, the change set's entry) were ~4% of W1's time in Chromium (issue 16). Ids share
/// long prefixes (ULIDs start with their timestamp), so the compare runs deep.
#[inline]
pub(crate) fn same_id<A, B>(a: &A, b: &B) -> bool
where
    A: AsRef<[u8]> + ?Sized,
    B: AsRef<[u8]> + ?Sized,
{
    let (a, b) = (a.as_ref(), b.as_ref());
    a.len() == b.len() && id_order(a, b) == Ordering::Equal
}

/// `a.cmp(b)` (byte-wise, as `str`'s `Ord`), eight bytes at a time: big-endian words order as
/// their bytes do. See [`same_id`] for why. Generic over bytes so an [`Id`] is read through
/// [`Id::as_bytes`] (no UTF-8 check).
#[inline]
pub(crate) fn id_order<A, B>(a: &A, b: &B) -> Ordering
where
    A: AsRef<[u8]> + ?Sized,
    B: AsRef<[u8]> + ?Sized,
{
    let (a, b) = (a.as_ref(), b.as_ref());
    let common = a.len().min(b.len());
    let mut at = 0;
    while at + 8 <= common {
        let (x, y) = (word(a, at), word(b, at));
        if x != y {
            return x.cmp(&y);
        }
        at += 8;
    }
    let (a_rest, b_rest) = (a.get(at..common), b.get(at..common));
    let pairs = a_rest
        .unwrap_or_default()
        .iter()
        .zip(b_rest.unwrap_or_default());
    match pairs.into_iter().find(|(x, y)| x != y) {
        Some((x, y)) => x.cmp(y),
        None => a.len().cmp(&b.len()),
    }
}

/// The eight bytes of `s` at `at` as a big-endian word (0 past the end: callers stay inside).
#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    s.get(at..at.saturating_add(8))
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
        .map_or(0, u64::from_be_bytes)
}
use crate::id::Id;

/// Entries a map keeps in a sorted vector before it moves them to a B-tree.
///
/// Most maps are one turn's few items (W2: 4.5 on average): a B-tree leaf for `String` keys is
/// 320 bytes however few it holds, a sorted vector 16 bytes an entry, and inserting into 32
/// sorted entries costs less than a B-tree search. Long maps (turns, tool calls) still get the
/// B-tree's O(log n) inserts in any order (history pages arrive newest first).
const SMALL_MAX: usize = 32;

/// A large index's key: an [`Id`] searched by its bytes ([`Id::as_bytes`]), not through
/// `Borrow<str>`, whose text check on every comparison of a search was most of W2's apply
/// time. Private (`Id` itself hashes as its `str`, which a `Borrow<[u8]>` would contradict).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct IdKey(Id);

impl core::borrow::Borrow<[u8]> for IdKey {
    fn borrow(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

/// id → slot, sorted by id: a vector while small, a B-tree once past [`SMALL_MAX`]. The B-tree
/// is boxed: the few large maps pay a pointer, and the index of every small one (each turn's
/// items) is 24 bytes, not 32 (issue 16, W2: 15k turns).
#[derive(Clone)]
enum Index {
    Small(Vec<(Id, u32)>),
    // Boxed on purpose (see above): the inline size of every small map is what matters.
    #[allow(clippy::box_collection)]
    Large(Box<BTreeMap<IdKey, u32>>),
}

impl Index {
    fn get(&self, id: &[u8]) -> Option<u32> {
        self.find(id).map(|(_, slot)| slot)
    }

    /// The stored id equal to `id`.
    fn key(&self, id: &[u8]) -> Option<&Id> {
        self.find(id).map(|(key, _)| key)
    }

    /// The entry of `id` (one search for both [`Index::get`] and [`Index::key`]: one copy of
    /// the code in the wasm).
    fn find(&self, id: &[u8]) -> Option<(&Id, u32)> {
        match self {
            Index::Small(v) => v
                .binary_search_by(|(k, _)| id_order(k, id))
                .ok()
                .and_then(|i| v.get(i))
                .map(|(k, slot)| (k, *slot)),
            Index::Large(m) => m.get_key_value(id).map(|(k, slot)| (&k.0, *slot)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Index::Small(v) => v.len(),
            Index::Large(m) => m.len(),
        }
    }

    /// Adds `id` (not present) → `slot`.
    fn add(&mut self, id: Id, slot: u32) {
        match self {
            Index::Small(v) => match v.binary_search_by(|(k, _)| id_order(k, &id)) {
                Ok(i) => v[i].1 = slot,
                Err(i) if v.len() < SMALL_MAX => {
                    if v.len() == v.capacity() {
                        // By half, as the slots (below): a turn's index is kept for the life
                        // of the view, and doubling left a third of it unused.
                        v.reserve_exact((v.len() / 2).max(1));
                    }
                    v.insert(i, (id, slot));
                }
                Err(_) => {
                    // Inserted one by one: `collect` would sort them (already sorted) with
                    // a sort compiled for this type alone (see `crate::sort`).
                    let mut m = BTreeMap::new();
                    for (id, slot) in core::mem::take(v) {
                        m.insert(IdKey(id), slot);
                    }
                    m.insert(IdKey(id), slot);
                    *self = Index::Large(Box::new(m));
                }
            },
            Index::Large(m) => {
                m.insert(IdKey(id), slot);
            }
        }
    }

    fn remove(&mut self, id: &[u8]) -> Option<u32> {
        match self {
            Index::Small(v) => {
                let i = v.binary_search_by(|(k, _)| id_order(k, id)).ok()?;
                Some(v.remove(i).1)
            }
            Index::Large(m) => m.remove(id),
        }
    }

    fn iter(&self) -> IndexIter<'_> {
        match self {
            Index::Small(v) => IndexIter::Small(v.iter()),
            Index::Large(m) => IndexIter::Large(m.iter()),
        }
    }
}

/// Entries of an [`Index`] in id order.
enum IndexIter<'a> {
    Small(slice::Iter<'a, (Id, u32)>),
    Large(btree_map::Iter<'a, IdKey, u32>),
}

impl<'a> Iterator for IndexIter<'a> {
    type Item = (&'a Id, u32);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            IndexIter::Small(it) => it.next().map(|(k, i)| (k, *i)),
            IndexIter::Large(it) => it.next().map(|(k, i)| (&k.0, *i)),
        }
    }
}

impl DoubleEndedIterator for IndexIter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            IndexIter::Small(it) => it.next_back().map(|(k, i)| (k, *i)),
            IndexIter::Large(it) => it.next_back().map(|(k, i)| (&k.0, *i)),
        }
    }
}

/// Values by string id, iterated in id order (byte-wise, as `str`'s `Ord`).
///
/// The API is the subset of `BTreeMap<String, V>` the core uses, with the same meanings.
/// Invariant: every index entry names a filled slot, and every filled slot is named once.
#[derive(Clone)]
pub struct IdMap<V> {
    index: Index,
    slots: Vec<Option<V>>,
    /// Emptied slots below `slots.len()`, reused before the vector grows: a count, not a list
    /// (removals are rare, and a list was 24 bytes of every map), so a new entry scans for a
    /// hole only while there is one.
    holes: u32,
    /// The slot the last keyed lookup found ([`IdMap::get_keyed`]); fits beside `holes`.
    recent: Cell<u32>,
}

impl<V> Default for IdMap<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> IdMap<V> {
    /// An empty map (no allocation).
    pub const fn new() -> Self {
        IdMap {
            index: Index::Small(Vec::new()),
            slots: Vec::new(),
            holes: 0,
            recent: Cell::new(0),
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.index.len() == 0
    }

    fn slot(&self, i: u32) -> Option<&V> {
        self.slots.get(i as usize).and_then(Option::as_ref)
    }

    // Lookups take any id text as bytes (`&str`, `String`, [`Id`]): an `Id` passed as `&str`
    // had its inline text's UTF-8 checked on every lookup (`Id::as_str`), ~3% of a long
    // history's load (W2, callgrind). The wrappers are inlined; the searches are not generic.

    /// The value of `id`.
    #[inline]
    pub fn get<K: AsRef<[u8]> + ?Sized>(&self, id: &K) -> Option<&V> {
        self.slot(self.index.get(id.as_ref())?)
    }

    /// The value of `id`, mutably.
    #[inline]
    pub fn get_mut<K: AsRef<[u8]> + ?Sized>(&mut self, id: &K) -> Option<&mut V> {
        let i = self.index.get(id.as_ref())?;
        self.slots.get_mut(i as usize).and_then(Option::as_mut)
    }

    /// The slot of `id`'s value: names the entry in 4 bytes, without its id. Stable while the
    /// entry stays; a removed entry's slot is reused by a later insert, so a holder of slots
    /// must either never outlive a removal or check what it finds ([`IdMap::at`]).
    #[inline]
    pub(crate) fn slot_of<K: AsRef<[u8]> + ?Sized>(&self, id: &K) -> Option<u32> {
        self.index.get(id.as_ref())
    }

    /// The value in `slot` (from [`IdMap::slot_of`]), if it is filled.
    pub(crate) fn at(&self, slot: u32) -> Option<&V> {
        self.slot(slot)
    }

    /// [`IdMap::get`] for values that carry their own id (`key_of` reads it): the slot the
    /// last such lookup found is tried first. A live turn's deltas name the same turn and message
    /// frame after frame, and a history page's events the same turn, so a repeat costs one id
    /// compare instead of an index search (W2: ~13% of the load was turn-index searches in a
    /// 15,419-entry B-tree). A stale guess (the entry removed, its slot reused) fails the compare
    /// and falls back to the index: never a wrong answer. `key_of` gives bytes ([`Id::as_bytes`]):
    /// through `Id::as_str` every lookup checked the inline id's UTF-8 again (≈4% of W1's
    /// instructions natively, callgrind).
    #[inline]
    pub(crate) fn get_keyed<K: AsRef<[u8]> + ?Sized>(
        &self,
        id: &K,
        key_of: impl Fn(&V) -> &[u8],
    ) -> Option<&V> {
        let i = self.keyed_slot(id.as_ref(), key_of)?;
        self.slot(i)
    }

    /// [`IdMap::get_keyed`], mutably.
    #[inline]
    pub(crate) fn get_keyed_mut<K: AsRef<[u8]> + ?Sized>(
        &mut self,
        id: &K,
        key_of: impl Fn(&V) -> &[u8],
    ) -> Option<&mut V> {
        let i = self.keyed_slot(id.as_ref(), key_of)?;
        self.slots.get_mut(i as usize).and_then(Option::as_mut)
    }

    fn keyed_slot(&self, id: &[u8], key_of: impl Fn(&V) -> &[u8]) -> Option<u32> {
        let recent = self.recent.get();
        if self.slot(recent).is_some_and(|v| same_id(key_of(v), id)) {
            return Some(recent);
        }
        let i = self.index.get(id)?;
        self.recent.set(i);
        Some(i)
    }

    /// The map's own copy of `id`, when it has a value: holders of the same id share it.
    #[inline]
    pub fn key<K: AsRef<[u8]> + ?Sized>(&self, id: &K) -> Option<&Id> {
        self.index.key(id.as_ref())
    }

    /// The value in `slot`, mutably.
    pub(crate) fn at_mut(&mut self, slot: u32) -> Option<&mut V> {
        self.slots.get_mut(slot as usize).and_then(Option::as_mut)
    }

    /// Whether `id` has a value.
    #[inline]
    pub fn contains_key<K: AsRef<[u8]> + ?Sized>(&self, id: &K) -> bool {
        self.index.get(id.as_ref()).is_some()
    }

    /// Sets the value of `id`; returns the value it replaced.
    pub fn insert(&mut self, id: Id, value: V) -> Option<V> {
        let i = match self.index.get(id.as_bytes()) {
            Some(i) => i as usize,
            None => {
                let i = self.vacant();
                self.index.add(id, i as u32);
                i
            }
        };
        self.slots[i].replace(value)
    }

    /// The value of `id`, inserting `make()` first when it has none (`entry().or_insert_with`).
    pub fn get_or_insert_with(&mut self, id: &str, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.index.get(id.as_bytes()) {
            Some(i) => i as usize,
            None => {
                let i = self.vacant();
                self.index.add(Id::from(id), i as u32);
                i
            }
        };
        self.slots[i].get_or_insert_with(make)
    }

    /// A slot number for a new entry, below `slots.len()`: an emptied slot, else a new one.
    /// Index entries only ever name slots this returned, so `slots[i]` of an entry is in bounds
    /// (slots are never truncated below a named one: `remove` pops only the slot it emptied).
    fn vacant(&mut self) -> usize {
        if self.holes > 0 {
            if let Some(i) = self.slots.iter().position(Option::is_none) {
                self.holes -= 1;
                return i;
            }
            self.holes = 0;
        }
        if self.slots.len() == self.slots.capacity() {
            // Grow by half (at least one) rather than `Vec`'s doubling: most maps are a turn's
            // few items, and a slot is a whole value (an item is ~300 bytes), so doubling left
            // a quarter of a long history's view as spare capacity (W2: 34 of 146 MB).
            self.slots.reserve_exact((self.slots.len() / 2).max(1));
        }
        self.slots.push(None);
        self.slots.len() - 1
    }

    /// Removes `id`; returns its value.
    #[inline]
    pub fn remove<K: AsRef<[u8]> + ?Sized>(&mut self, id: &K) -> Option<V> {
        let i = self.index.remove(id.as_ref())?;
        let value = self.slots.get_mut(i as usize)?.take();
        // The last slot is dropped rather than counted as a hole, so a map that only grows and
        // shrinks at its newest entry (held deltas) keeps no empty slots.
        if i as usize + 1 == self.slots.len() {
            self.slots.pop();
        } else {
            self.holes = self.holes.saturating_add(1);
        }
        value
    }

    /// Entries in id order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Id, &V)> + '_ {
        self.index
            .iter()
            .filter_map(|(id, i)| Some((id, self.slot(i)?)))
    }

    /// Entries in id order, values mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&Id, &mut V)> + '_ {
        // One mutable borrow of every slot, handed out in the index's order.
        let mut slots: Vec<Option<&mut V>> = self.slots.iter_mut().map(Option::as_mut).collect();
        self.index
            .iter()
            .filter_map(move |(id, i)| Some((id, slots.get_mut(i as usize)?.take()?)))
    }

    /// Ids in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Id> + '_ {
        self.index.iter().map(|(id, _)| id)
    }

    /// Values in id order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &V> + '_ {
        self.index.iter().filter_map(|(_, i)| self.slot(i))
    }

    /// Values, mutable, in no particular order (cheaper than [`IdMap::iter_mut`]).
    pub fn values_mut_unordered(&mut self) -> impl Iterator<Item = &mut V> + '_ {
        self.slots.iter_mut().filter_map(Option::as_mut)
    }

    /// Gives back the spare capacity of the slots and of a small index. A map that stops
    /// growing (a finished turn's items) otherwise keeps up to a third of its slots empty, and a
    /// slot is a whole value (W2: ~3 MB of a long history's view).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.slots.shrink_to_fit();
        if let Index::Small(v) = &mut self.index {
            v.shrink_to_fit();
        }
    }
}

impl<V: PartialEq> PartialEq for IdMap<V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<V: fmt::Debug> fmt::Debug for IdMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V> FromIterator<(Id, V)> for IdMap<V> {
    fn from_iter<I: IntoIterator<Item = (Id, V)>>(entries: I) -> Self {
        let mut map = IdMap::new();
        for (id, value) in entries {
            map.insert(id, value);
        }
        map
    }
}

/// A set of ids: an [`IdMap`] without values (so sets share the map's one B-tree instance).
pub type IdSet = IdMap<()>;

impl IdMap<()> {
    /// Adds `id`; false when it was already there (as `BTreeSet::insert`).
    pub fn add(&mut self, id: &str) -> bool {
        if self.contains_key(id) {
            return false;
        }
        self.insert(Id::from(id), ());
        true
    }
}

/// Entries in id order, owned.
impl<V> IntoIterator for IdMap<V> {
    type Item = (Id, V);
    type IntoIter = alloc::vec::IntoIter<(Id, V)>;
    fn into_iter(mut self) -> Self::IntoIter {
        let index: Vec<(Id, u32)> = match self.index {
            Index::Small(v) => v,
            Index::Large(m) => (*m).into_iter().map(|(k, i)| (k.0, i)).collect(),
        };
        let mut entries = Vec::with_capacity(index.len());
        for (id, i) in index {
            if let Some(value) = self.slots.get_mut(i as usize).and_then(Option::take) {
                entries.push((id, value));
            }
        }
        entries.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::collections::BTreeMap;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u32),
        Remove(u8),
        GetOrInsert(u8, u32),
        Bump(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (any::<u8>(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k % 48, v)),
            any::<u8>().prop_map(|k| Op::Remove(k % 48)),
            (any::<u8>(), any::<u32>()).prop_map(|(k, v)| Op::GetOrInsert(k % 48, v)),
            any::<u8>().prop_map(|k| Op::Bump(k % 48)),
        ]
    }

    proptest! {
        /// Any sequence of operations leaves the map equal to a `BTreeMap` given the same ones,
        /// entry for entry in the same order, with the same return values on the way.
        #[test]
        fn behaves_as_a_btreemap(ops in proptest::collection::vec(op(), 0..200)) {
            let mut ours: IdMap<u32> = IdMap::new();
            let mut model: BTreeMap<String, u32> = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => {
                        let k = alloc::format!("id{k}");
                        prop_assert_eq!(ours.insert(Id::from(&k), v), model.insert(k, v));
                    }
                    Op::Remove(k) => {
                        let k = alloc::format!("id{k}");
                        prop_assert_eq!(ours.remove(&k), model.remove(&k));
                    }
                    Op::GetOrInsert(k, v) => {
                        let k = alloc::format!("id{k}");
                        prop_assert_eq!(
                            *ours.get_or_insert_with(&k, || v),
                            *model.entry(k).or_insert(v)
                        );
                    }
                    Op::Bump(k) => {
                        let k = alloc::format!("id{k}");
                        if let Some(v) = ours.get_mut(&k) { *v = v.wrapping_add(1); }
                        if let Some(v) = model.get_mut(&k) { *v = v.wrapping_add(1); }
                    }
                }
                prop_assert_eq!(ours.len(), model.len());
                prop_assert!(ours.iter().map(|(k, v)| (alloc::string::String::from(k), *v)).eq(model.clone()));
                for (k, v) in ours.iter_mut() {
                    prop_assert_eq!(model.get(k.as_str()), Some(&*v));
                }
            }
            // Slots are reused: never more than the most entries ever held, plus nothing.
            prop_assert!(ours.slots.len() <= 48);
        }
    }

    /// Ids as the protocol has them (ULID-like, long shared prefixes) and arbitrary text.
    fn id_text() -> impl Strategy<Value = String> {
        prop_oneof!["01m8rda4m[0-9a-z]{0,20}", "[a-c]{0,20}", any::<String>(),]
    }

    proptest! {
        /// The word-wise compares agree with `str`'s `==` and `Ord` on any two strings.
        #[test]
        fn id_compares_agree_with_str(a in id_text(), b in id_text()) {
            prop_assert_eq!(id_order(&a, &b), a.cmp(&b));
            prop_assert_eq!(same_id(&a, &b), a == b);
            prop_assert!(same_id(&a, &a.clone()));
            let longer = alloc::format!("{a}{b}");
            prop_assert_eq!(id_order(&a, &longer), a.as_str().cmp(longer.as_str()));
        }

        /// A keyed lookup finds what `get` finds, whatever slot it remembers (stale, reused, out
        /// of range).
        #[test]
        fn keyed_lookup_equals_get(
            keys in proptest::collection::vec("[a-f]{1,3}", 1..40),
            removed in proptest::collection::vec(any::<u8>(), 0..10),
            hint in any::<u32>(),
            probe in "[a-f]{1,3}",
        ) {
            let mut map: IdMap<String> = IdMap::new();
            for k in &keys {
                map.insert(Id::from(k), k.clone());
            }
            for r in removed {
                let k = keys[r as usize % keys.len()].clone();
                map.remove(&k);
            }
            // Reuse emptied slots with other ids, so a stale hint names another entry.
            map.insert(Id::from("zz"), String::from("zz"));
            map.recent.set(hint);
            let expected = map.get(&probe).cloned();
            prop_assert_eq!(map.get_keyed(&probe, String::as_bytes), expected.as_ref());
            prop_assert_eq!(map.get_keyed_mut(&probe, String::as_bytes).cloned(), expected.clone());
            // Found again from the remembered slot.
            prop_assert_eq!(map.get_keyed(&probe, String::as_bytes), expected.as_ref());
        }
    }
}
