//! The two augmented minima of EEVDF's rbtree (`se->min_vruntime` and
//! `se->min_slice` of the root, `kernel/sched/fair.c` 6.6–6.18,
//! `min_vruntime_update()` / `min_slice_update()`), kept without a second
//! ordered tree: `pick_eevdf()` walks the deadline order (`Timeline`), and
//! these two only ever answer "the smallest value queued".
//!
//! - [`MinVruntime`]: the queued `(vruntime, seq)` pairs. Up to
//!   [`MINV_SMALL_MAX`] entries they are a `VecDeque` sorted ascending, for
//!   the runqueue's usual traffic: `set_next_entity()` takes out the
//!   entity with the smallest vruntime (99 % of the removals on the
//!   VolanoMark bench scenario under `v6.18`: the picked entity is
//!   eligible, so its vruntime is at most V, and it is mostly the
//!   leftmost), and `put_prev_entity()` puts back the one that just ran,
//!   which mostly has the largest vruntime. Both ends are O(1); an entry
//!   in the middle moves the shorter side. Past that size they become a
//!   binary heap with lazy deletion (a removed entry goes into a second
//!   heap and both are popped together once it reaches the top; the dead
//!   heap is compacted away when it outgrows the live entries), and a
//!   sorted `VecDeque` again once they have shrunk to [`MINV_SMALL_MIN`].
//!   Entries are unique per runqueue (`seq` is), so the answer is exact in
//!   both forms.
//! - [`SliceCounts`]: the multiset of queued slices, as (slice, count)
//!   sorted ascending in a `Vec` — almost always one distinct value (the
//!   base slice), at most a handful with `sched_attr` slices.
//!
//! Both replace ordered trees of the same contents (a `Timeline` by
//! vruntime and a `BTreeMap` of counts); the minima they give are the
//! same, so results do not change.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Largest [`MinVruntime`] kept as a sorted `VecDeque` (a middle insertion
/// moves at most half of it: 4 KiB of 16-byte entries).
pub const MINV_SMALL_MAX: usize = 512;
/// A heap-form [`MinVruntime`] that shrinks to this size is sorted again.
pub const MINV_SMALL_MIN: usize = 64;

type Key = (i64, u64);

#[derive(Clone, Debug)]
enum MinRepr {
    /// Ascending: the smallest entry is at the front.
    Sorted(VecDeque<Key>),
    /// A binary heap of the entries and one of the removed ones.
    Heap(LazyHeap),
}

/// Smallest `(key, seq)` of a set with insert and remove by value.
#[derive(Clone, Debug)]
pub struct MinVruntime(MinRepr);

impl Default for MinVruntime {
    fn default() -> Self {
        MinVruntime(MinRepr::Sorted(VecDeque::new()))
    }
}

impl MinVruntime {
    /// Entries in the set.
    pub fn len(&self) -> usize {
        match &self.0 {
            MinRepr::Sorted(d) => d.len(),
            MinRepr::Heap(h) => h.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Add `(key, seq)`, which must not be in the set (the runqueue's
    /// `seq` is never reused, so it never is).
    #[inline]
    pub fn insert(&mut self, key: i64, seq: u64) {
        let e = (key, seq);
        match &mut self.0 {
            MinRepr::Sorted(d) => {
                if d.len() >= MINV_SMALL_MAX {
                    self.grow(e);
                } else if d.back().is_none_or(|b| *b < e) {
                    d.push_back(e);
                } else if d.front().is_some_and(|f| e < *f) {
                    d.push_front(e);
                } else {
                    let i = d.partition_point(|x| *x < e);
                    d.insert(i, e);
                }
            }
            MinRepr::Heap(h) => h.insert(e),
        }
    }

    /// Remove `(key, seq)`, which must be in the set. (One that is not is
    /// ignored by the sorted form and dropped by the heap form once it
    /// is below the smallest entry; it cannot happen: a removal passes the
    /// key its entity was inserted under.)
    #[inline]
    pub fn remove(&mut self, key: i64, seq: u64) {
        let e = (key, seq);
        match &mut self.0 {
            MinRepr::Sorted(d) => {
                if d.front() == Some(&e) {
                    d.pop_front();
                } else if d.back() == Some(&e) {
                    d.pop_back();
                } else {
                    let i = d.partition_point(|x| *x < e);
                    if d.get(i) == Some(&e) {
                        d.remove(i);
                    }
                }
            }
            MinRepr::Heap(h) => {
                h.remove(e);
                if h.len() <= MINV_SMALL_MIN {
                    self.shrink();
                }
            }
        }
    }

    /// The smallest key in the set.
    #[inline]
    pub fn min(&self) -> Option<i64> {
        match &self.0 {
            MinRepr::Sorted(d) => d.front().map(|e| e.0),
            MinRepr::Heap(h) => h.min(),
        }
    }

    /// Entries stored, removed ones still held by the heap form included.
    #[cfg(test)]
    fn held(&self) -> usize {
        match &self.0 {
            MinRepr::Sorted(d) => d.len(),
            MinRepr::Heap(h) => h.live.len(),
        }
    }

    /// The sorted form is full: the entries and `e` become a heap.
    #[cold]
    #[inline(never)]
    fn grow(&mut self, e: Key) {
        let MinRepr::Sorted(d) = &mut self.0 else {
            return;
        };
        let mut live: BinaryHeap<Reverse<Key>> = d.drain(..).map(Reverse).collect();
        live.push(Reverse(e));
        self.0 = MinRepr::Heap(LazyHeap {
            live,
            dead: BinaryHeap::new(),
        });
    }

    /// The heap form has shrunk: its live entries, sorted.
    #[cold]
    #[inline(never)]
    fn shrink(&mut self) {
        let MinRepr::Heap(h) = &mut self.0 else {
            return;
        };
        h.compact();
        let mut v: Vec<Key> = std::mem::take(&mut h.live)
            .into_iter()
            .map(|r| r.0)
            .collect();
        v.sort_unstable();
        self.0 = MinRepr::Sorted(VecDeque::from(v));
    }
}

/// A binary min-heap with lazy deletion: the large form of [`MinVruntime`].
#[derive(Clone, Debug, Default)]
struct LazyHeap {
    live: BinaryHeap<Reverse<Key>>,
    dead: BinaryHeap<Reverse<Key>>,
}

impl LazyHeap {
    fn len(&self) -> usize {
        self.live.len().saturating_sub(self.dead.len())
    }

    fn insert(&mut self, e: Key) {
        self.live.push(Reverse(e));
    }

    fn remove(&mut self, e: Key) {
        if self.live.peek() == Some(&Reverse(e)) {
            self.live.pop();
            self.purge();
        } else {
            self.dead.push(Reverse(e));
            if self.dead.len() > 32 && self.dead.len() > self.live.len() / 2 {
                self.compact();
            }
        }
    }

    fn min(&self) -> Option<i64> {
        self.live.peek().map(|r| r.0 .0)
    }

    /// Pop dead entries that have reached the top (the live top is then a
    /// live entry). A dead entry below the live top was never in the set
    /// (a remove of an absent entry, which the ordered tree this replaces
    /// ignored) and is dropped, so it cannot hold a later match back.
    fn purge(&mut self) {
        while let Some(d) = self.dead.peek() {
            match self.live.peek() {
                Some(l) if l == d => {
                    self.live.pop();
                    self.dead.pop();
                }
                // Reverse order: a dead entry "greater" is a smaller key
                Some(l) if d > l => {
                    self.dead.pop();
                }
                None => self.dead.clear(),
                Some(_) => break,
            }
        }
    }

    /// Drop every dead entry from the live heap.
    #[cold]
    fn compact(&mut self) {
        let mut dead = std::mem::take(&mut self.dead).into_sorted_vec();
        // into_sorted_vec of Reverse is descending by value: ascending order
        dead.reverse();
        let mut live = std::mem::take(&mut self.live).into_sorted_vec();
        live.reverse();
        let mut d = dead.iter().peekable();
        live.retain(|e| {
            while d.peek().is_some_and(|x| x.0 < e.0) {
                d.next();
            }
            if d.peek() == Some(&e) {
                d.next();
                false
            } else {
                true
            }
        });
        self.live = BinaryHeap::from(live);
    }
}

/// A multiset of slices with its minimum.
#[derive(Clone, Debug, Default)]
pub struct SliceCounts(Vec<(u64, u32)>);

impl SliceCounts {
    #[inline]
    pub fn add(&mut self, slice: u64) {
        match self.0.binary_search_by_key(&slice, |e| e.0) {
            Ok(i) => self.0[i].1 += 1,
            Err(i) => self.0.insert(i, (slice, 1)),
        }
    }

    /// Remove one `slice`; nothing if it is not there.
    #[inline]
    pub fn remove(&mut self, slice: u64) {
        if let Ok(i) = self.0.binary_search_by_key(&slice, |e| e.0) {
            self.0[i].1 -= 1;
            if self.0[i].1 == 0 {
                self.0.remove(i);
            }
        }
    }

    #[inline]
    pub fn min(&self) -> Option<u64> {
        self.0.first().map(|e| e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use std::collections::{BTreeMap, BTreeSet};

    /// `MinVruntime` and `SliceCounts` follow the ordered trees they
    /// replaced, operation by operation, through growth to hundreds of
    /// entries (compactions included), many ties of key and shrinking to
    /// empty.
    #[test]
    fn minima_match_the_ordered_trees() {
        let mut rng = Rng::new(11);
        let mut h = MinVruntime::default();
        let mut s = SliceCounts::default();
        let mut rs: BTreeSet<(i64, u64)> = BTreeSet::new();
        let mut rc: BTreeMap<u64, u32> = BTreeMap::new();
        let mut live: Vec<(i64, u64, u64)> = Vec::new();
        let mut seq = 0;
        let mut grew = false;
        for target in [5usize, 300, 40, MINV_SMALL_MAX + 100, 3, 0] {
            let mut steps = 0;
            while live.len() != target || steps < 500 {
                steps += 1;
                let grow = if live.len() < target {
                    rng.next_u64() % 4 != 0
                } else if live.len() > target {
                    rng.next_u64() % 4 == 0
                } else {
                    rng.next_u64() % 2 == 0
                };
                if grow || live.is_empty() {
                    seq += 1;
                    let key = (rng.next_u64() % 64) as i64 - 32;
                    let slice =
                        [3_000_000, 3_000_000, 700_000, 10_000_000][(rng.next_u64() % 4) as usize];
                    h.insert(key, seq);
                    rs.insert((key, seq));
                    s.add(slice);
                    *rc.entry(slice).or_insert(0) += 1;
                    live.push((key, seq, slice));
                } else {
                    // a third of the time the minimum, as set_next_entity() often takes
                    let i = if rng.next_u64() % 3 == 0 {
                        let m = *rs.first().unwrap();
                        live.iter().position(|e| (e.0, e.1) == m).unwrap()
                    } else {
                        (rng.next_u64() % live.len() as u64) as usize
                    };
                    let (key, sq, slice) = live.swap_remove(i);
                    h.remove(key, sq);
                    rs.remove(&(key, sq));
                    s.remove(slice);
                    let n = rc.get_mut(&slice).unwrap();
                    *n -= 1;
                    if *n == 0 {
                        rc.remove(&slice);
                    }
                }
                assert_eq!(h.len(), rs.len());
                assert_eq!(h.min(), rs.first().map(|e| e.0));
                assert_eq!(s.min(), rc.first_key_value().map(|e| *e.0));
                assert!(h.held() <= 2 * rs.len() + 40, "dead entries are compacted");
                grew |= matches!(h.0, MinRepr::Heap(_));
                if rs.len() <= MINV_SMALL_MIN {
                    assert!(matches!(h.0, MinRepr::Sorted(_)), "sorted again when small");
                }
            }
        }
        assert!(h.is_empty() && s.min().is_none());
        assert!(grew, "the heap form was used");
    }

    /// Entries that arrive below the smallest (`push_front`) or above the
    /// largest count towards the sorted form's limit like any other: past
    /// `MINV_SMALL_MAX` the set is a heap whichever end grows.
    #[test]
    fn the_sorted_form_is_bounded_at_either_end() {
        for descending in [true, false] {
            let mut h = MinVruntime::default();
            for i in 0..(2 * MINV_SMALL_MAX) as i64 {
                let key = if descending { -i } else { i };
                h.insert(key, i as u64);
                assert!(h.held() <= MINV_SMALL_MAX || matches!(h.0, MinRepr::Heap(_)));
            }
            assert!(matches!(h.0, MinRepr::Heap(_)));
            let want = if descending {
                1 - 2 * MINV_SMALL_MAX as i64
            } else {
                0
            };
            assert_eq!(h.min(), Some(want));
            assert_eq!(h.len(), 2 * MINV_SMALL_MAX);
        }
    }

    /// A remove of an entry that is not in the set changes nothing, as it
    /// did for the ordered tree: it neither shows as the minimum nor holds
    /// back the removal of a real entry (a reviewer's sequence).
    #[test]
    fn removing_an_absent_entry_changes_nothing() {
        let mut h = MinVruntime::default();
        h.insert(5, 1);
        h.insert(10, 2);
        h.remove(1, 99);
        h.remove(5, 1);
        h.remove(10, 2);
        h.insert(20, 3);
        h.insert(30, 4);
        h.remove(30, 4);
        h.remove(20, 3);
        assert_eq!(h.min(), None);
        assert!(h.is_empty());
        h.insert(7, 5);
        h.remove(3, 98);
        assert_eq!(h.min(), Some(7));
        h.remove(7, 5);
        assert_eq!(h.min(), None);
    }
}
