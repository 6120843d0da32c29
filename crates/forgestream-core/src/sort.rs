//! One sort for the whole crate: a stable merge sort of positions, compiled once.
//!
//! Why not `slice::sort*`: each element type and comparator instantiates `core`'s whole
//! driftsort or ipnsort (quicksort, small-sorts, pivot selection: ~2.5 KB of wasm each), and
//! `BTreeMap`'s `collect` brings another. Seven of them were 19 KB of the optimized wasm, 9 KB
//! of its gzip (issue 16). Here only two small closures are per type (compare two positions,
//! swap two positions); the sorting itself is one non-generic function. The lists sorted are
//! short (a change set's turns, a page of inspector frames, the stored sessions), never on the
//! live path.

use alloc::vec;
use alloc::vec::Vec;

/// Sorts `v` by `less` (a strict order: `less(a, b)` when `a` goes before `b`), stably:
/// elements neither less than the other keep their order. O(n log n) comparisons.
pub(crate) fn sort_by<T>(v: &mut [T], mut less: impl FnMut(&T, &T) -> bool) {
    let order = order(v.len(), &mut |a, b| less(&v[a], &v[b]));
    permute(order, &mut |a, b| v.swap(a, b));
}

/// The positions `0..n` in stable sorted order (bottom-up merge sort).
fn order(n: usize, less: &mut dyn FnMut(usize, usize) -> bool) -> Vec<usize> {
    let mut from: Vec<usize> = (0..n).collect();
    let mut to = vec![0; n];
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut left, mut right) = (start, mid);
            for slot in &mut to[start..end] {
                // The right run's element goes first only when strictly less: stable.
                if right < end && (left == mid || less(from[right], from[left])) {
                    *slot = from[right];
                    right += 1;
                } else {
                    *slot = from[left];
                    left += 1;
                }
            }
            start = end;
        }
        core::mem::swap(&mut from, &mut to);
        width *= 2;
    }
    from
}

/// Moves the element at `order[i]` to `i` for every `i`, through `swap`, one cycle at a time.
fn permute(mut order: Vec<usize>, swap: &mut dyn FnMut(usize, usize)) {
    for i in 0..order.len() {
        let mut at = i;
        while order[at] != i {
            let next = order[at];
            swap(at, next);
            order[at] = at;
            at = next;
        }
        order[at] = at;
    }
}

#[cfg(test)]
mod tests {
    use alloc::vec::Vec;
    use proptest::prelude::*;

    proptest! {
        /// The same order as `slice::sort_by_key` (stable), equal keys included.
        #[test]
        fn sorts_as_core_does(keys in proptest::collection::vec(0u8..8, 0..300)) {
            let mut ours: Vec<(u8, usize)> = keys.iter().copied().zip(0..).collect();
            let mut core = ours.clone();
            super::sort_by(&mut ours, |a, b| a.0 < b.0);
            core.sort_by_key(|e| e.0);
            prop_assert_eq!(ours, core);
        }
    }
}
