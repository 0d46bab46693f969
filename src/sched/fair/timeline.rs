//! The cfs_rq's rbtree (`cfs_rq->tasks_timeline`, `rb_root_cached`): the
//! queued entities ordered by `(key, insertion seq, id)` — under CFS the key
//! is the vruntime, under EEVDF the virtual deadline (EEVDF's vruntime and
//! slice minima are kept beside it, `sched::fair::minset`). `(key, seq)` is
//! unique in a runqueue, so
//! the order is total and equal keys go right (older first), as the
//! kernel's "equal keys go right" insertion does.
//!
//! A runqueue usually holds a handful of entities, for which a balanced
//! tree's node walks and allocations cost more than the work itself. So a
//! timeline of up to [`SMALL_MAX`] entities is a sorted array searched by
//! bisection ([`Gap`]), in *descending* order with free room on both
//! sides: the leftmost entity is the last element, and taking it, as
//! `set_next_entity()` mostly does, moves nothing; the entity put back by
//! `put_prev_entity()` mostly has the largest key (82 % of the insertions
//! on the VolanoMark bench scenario) and goes into the room before the
//! first element, moving nothing either. An insertion or removal inside
//! moves the shorter side; when the side it needs is full, the entries
//! are re-centred (or the array doubled), which leaves a quarter to a half
//! of the capacity free on each side. Beyond [`SMALL_MAX`] it becomes a
//! `BTreeSet` (O(log n) for 10,000 tasks on one CPU), and back to the
//! array once it has shrunk to [`SMALL_MIN`] (the gap keeps a runqueue
//! that hovers at the limit from converting at every operation). Both
//! forms give the same order; which one is in use is invisible to the
//! callers.

use crate::sched::task::TaskId;
use std::collections::BTreeSet;

/// One entity in the timeline: `(key, seq, id)`.
pub type Entry = (i64, u64, TaskId);

/// Largest timeline kept as a sorted array ([`Gap`]).
pub const SMALL_MAX: usize = 128;
/// A `BTreeSet` timeline that shrinks to this size becomes a sorted array
/// again.
pub const SMALL_MIN: usize = 16;

#[derive(Clone, Debug)]
enum Repr {
    Small(Gap),
    Large(BTreeSet<Entry>),
}

/// The ordered set of queued entities of one runqueue.
#[derive(Clone, Debug)]
pub struct Timeline(Repr);

impl Default for Timeline {
    fn default() -> Self {
        Timeline(Repr::Small(Gap::default()))
    }
}

/// A sorted array with free room before and after its entries: the
/// entries are `buf[lo..hi]`, in descending order (the leftmost entry of
/// the timeline is `buf[hi - 1]`); `buf.len()` is the capacity, the rest
/// of `buf` unused.
#[derive(Clone, Debug, Default)]
pub struct Gap {
    buf: Vec<Entry>,
    lo: usize,
    hi: usize,
}

/// The smallest capacity a [`Gap`] is given.
const GAP_MIN_CAP: usize = 16;

impl Gap {
    /// From entries in descending order.
    fn from_desc(v: impl ExactSizeIterator<Item = Entry>) -> Gap {
        let len = v.len();
        let mut g = Gap::default();
        g.reserve(len);
        for (j, e) in v.enumerate() {
            g.buf[g.lo + j] = e;
        }
        g.hi = g.lo + len;
        g
    }

    #[inline]
    fn entries(&self) -> &[Entry] {
        &self.buf[self.lo..self.hi]
    }

    #[inline]
    fn len(&self) -> usize {
        self.hi - self.lo
    }

    /// The last entry (the timeline's leftmost).
    #[inline]
    fn back(&self) -> Option<&Entry> {
        if self.hi > self.lo {
            self.buf.get(self.hi - 1)
        } else {
            None
        }
    }

    /// Re-centre the entries, with the free room split evenly on both
    /// sides; the capacity is doubled first while `size` entries would
    /// fill half of it or more (`2 * size + 2` at least). `size`: the
    /// entry count to make room for (at least the current one); the
    /// entries themselves stay those of `lo..hi`.
    #[cold]
    #[inline(never)]
    fn reserve(&mut self, size: usize) {
        let len = self.len();
        let mut cap = self.buf.len().max(GAP_MIN_CAP);
        while cap < 2 * size + 2 {
            cap *= 2;
        }
        let lo = (cap - size) / 2;
        if cap == self.buf.len() {
            self.buf.copy_within(self.lo..self.hi, lo);
        } else {
            let mut buf = vec![(0, 0, 0); cap];
            buf[lo..lo + len].copy_from_slice(&self.buf[self.lo..self.hi]);
            self.buf = buf;
        }
        self.lo = lo;
        self.hi = lo + len;
    }

    /// Take out the last entry (the timeline's leftmost); there must be one.
    #[inline]
    fn pop_back(&mut self) {
        debug_assert!(self.hi > self.lo);
        self.hi -= 1;
    }

    /// Put `e` at position `r` of the entries (`r` entries before it).
    #[inline]
    fn insert(&mut self, r: usize, e: Entry) {
        let len = self.len();
        if r <= len - r {
            if self.lo == 0 {
                self.reserve(len);
            }
            let i = self.lo + r;
            self.buf.copy_within(self.lo..i, self.lo - 1);
            self.lo -= 1;
            self.buf[i - 1] = e;
        } else {
            if self.hi == self.buf.len() {
                self.reserve(len);
            }
            let i = self.lo + r;
            self.buf.copy_within(i..self.hi, i + 1);
            self.hi += 1;
            self.buf[i] = e;
        }
    }

    /// Take out the entry at position `r` of the entries.
    #[inline]
    fn remove(&mut self, r: usize) {
        let i = self.lo + r;
        if r < self.hi - 1 - i {
            self.buf.copy_within(self.lo..i, self.lo + 1);
            self.lo += 1;
        } else {
            self.buf.copy_within(i + 1..self.hi, i);
            self.hi -= 1;
        }
    }
}

/// Where `e` is, or would go, in a descending slice: the count of entries
/// greater than `e`.
#[inline]
fn slot(v: &[Entry], e: &Entry) -> usize {
    v.partition_point(|x| x > e)
}

impl Timeline {
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(g) => g.len(),
            Repr::Large(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The leftmost entry (`rb_first_cached`).
    #[inline]
    pub fn first(&self) -> Option<&Entry> {
        match &self.0 {
            Repr::Small(g) => g.back(),
            Repr::Large(s) => s.first(),
        }
    }

    /// The rightmost entry (`__pick_last_entity`).
    pub fn last(&self) -> Option<&Entry> {
        match &self.0 {
            Repr::Small(g) => g.entries().first(),
            Repr::Large(s) => s.last(),
        }
    }

    /// The entry after the leftmost (`__pick_next_entity(leftmost)`).
    pub fn second(&self) -> Option<&Entry> {
        match &self.0 {
            Repr::Small(g) => {
                let v = g.entries();
                v.len().checked_sub(2).map(|i| &v[i])
            }
            Repr::Large(s) => s.iter().nth(1),
        }
    }

    /// All entries, leftmost first.
    pub fn iter(&self) -> Iter<'_> {
        match &self.0 {
            Repr::Small(g) => Iter::Small(g.entries().iter().rev()),
            Repr::Large(s) => Iter::Large(s.iter()),
        }
    }

    /// Insert `e`; false if it was already there.
    #[inline]
    pub fn insert(&mut self, e: Entry) -> bool {
        match &mut self.0 {
            Repr::Small(g) => {
                let v = g.entries();
                let i = slot(v, &e);
                if v.get(i) == Some(&e) {
                    return false;
                }
                if v.len() < SMALL_MAX {
                    g.insert(i, e);
                    return true;
                }
                let mut s: BTreeSet<Entry> = v.iter().copied().collect();
                s.insert(e);
                self.0 = Repr::Large(s);
                true
            }
            Repr::Large(s) => s.insert(e),
        }
    }

    /// Remove `e`; false if it was not there.
    #[inline]
    pub fn remove(&mut self, e: &Entry) -> bool {
        match &mut self.0 {
            Repr::Small(g) => {
                // The leftmost entry (the usual one) is checked first.
                if g.back() == Some(e) {
                    g.pop_back();
                    return true;
                }
                let v = g.entries();
                let i = slot(v, e);
                if v.get(i) != Some(e) {
                    return false;
                }
                g.remove(i);
                true
            }
            Repr::Large(s) => {
                if !s.remove(e) {
                    return false;
                }
                if s.len() <= SMALL_MIN {
                    self.0 = Repr::Small(Gap::from_desc(s.iter().rev().copied()));
                }
                true
            }
        }
    }
}

/// [`Timeline::iter`]'s iterator, leftmost first.
pub enum Iter<'a> {
    Small(std::iter::Rev<std::slice::Iter<'a, Entry>>),
    Large(std::collections::btree_set::Iter<'a, Entry>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a Entry;

    #[inline]
    fn next(&mut self) -> Option<&'a Entry> {
        match self {
            Iter::Small(i) => i.next(),
            Iter::Large(i) => i.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The timeline follows a `BTreeSet` (the structure it replaced)
    /// operation by operation — membership answers, first, second, last
    /// and the full order — through growth past `SMALL_MAX` to a few
    /// hundred entries and shrinking back below `SMALL_MIN`, with many
    /// equal keys (ties ordered by seq).
    #[test]
    fn timeline_matches_a_btreeset() {
        let mut rng = Rng::new(7);
        let mut t = Timeline::default();
        let mut r: BTreeSet<Entry> = BTreeSet::new();
        let mut seq = 0u64;
        let mut live: Vec<Entry> = Vec::new();
        for round in 0..6 {
            // grow to a target, then shrink to a smaller one
            let target = [10, 60, 300, 5, SMALL_MAX + 1, 0][round];
            let mut steps = 0;
            while live.len() != target || steps < 200 {
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
                    // few distinct keys: many ties
                    let key = (rng.next_u64() % 16) as i64 - 8;
                    let e = (key, seq, (rng.next_u64() % 1000) as TaskId);
                    assert_eq!(t.insert(e), r.insert(e));
                    assert!(!t.insert(e), "a second insert is refused");
                    live.push(e);
                } else {
                    let i = (rng.next_u64() % live.len() as u64) as usize;
                    // half the time the leftmost, as set_next_entity() does
                    let e = if rng.next_u64() % 2 == 0 {
                        *r.first().unwrap()
                    } else {
                        live[i]
                    };
                    live.retain(|x| *x != e);
                    assert_eq!(t.remove(&e), r.remove(&e));
                    assert!(!t.remove(&e), "a second remove finds nothing");
                }
                assert_eq!(t.len(), r.len());
                assert_eq!(t.is_empty(), r.is_empty());
                assert_eq!(t.first(), r.first());
                assert_eq!(t.last(), r.last());
                assert_eq!(t.second(), r.iter().nth(1));
                if steps % 16 == 0 {
                    assert!(t.iter().eq(r.iter()));
                }
            }
            assert!(t.iter().eq(r.iter()));
        }
        assert!(t.is_empty());
    }

    /// The runqueue's usual traffic, and its mirror image: the largest key
    /// put back and the leftmost taken (the entries drift towards the
    /// array's start and are re-centred), then the smallest key put in and
    /// the rightmost taken (towards its end), at sizes from 1 to
    /// `SMALL_MAX`: the same as a `BTreeSet` at every step, and the
    /// array's capacity stays below four times its largest size (the
    /// smallest power of two of at least 2·size + 2, or 16).
    #[test]
    fn drifting_traffic_matches_a_btreeset() {
        for size in [1usize, 2, 7, 45, SMALL_MAX - 1] {
            for mirror in [false, true] {
                let mut t = Timeline::default();
                let mut r: BTreeSet<Entry> = BTreeSet::new();
                let mut seq = 0u64;
                for step in 0..2000i64 {
                    seq += 1;
                    let key = if mirror { -step } else { step };
                    let e = (key, seq, (seq % 97) as TaskId);
                    assert_eq!(t.insert(e), r.insert(e));
                    if r.len() > size {
                        let x = if mirror {
                            *r.last().unwrap()
                        } else {
                            *r.first().unwrap()
                        };
                        assert!(t.remove(&x));
                        r.remove(&x);
                    }
                    assert_eq!(t.first(), r.first());
                    assert_eq!(t.last(), r.last());
                    if let Repr::Small(g) = &t.0 {
                        assert!(
                            g.buf.len() <= (4 * size + 4).max(GAP_MIN_CAP),
                            "{}",
                            g.buf.len()
                        );
                    }
                }
                assert!(t.iter().eq(r.iter()));
            }
        }
    }
}
