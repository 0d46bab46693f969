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
//! timeline of up to [`SMALL_MAX`] entities is a `Vec` sorted in *descending*
//! order (the leftmost entity is the last element: taking it, as
//! `set_next_entity()` mostly does, moves nothing), searched by bisection;
//! beyond that it becomes a `BTreeSet` (O(log n) for 10,000 tasks on one
//! CPU), and back to a `Vec` once it has shrunk to [`SMALL_MIN`] (the gap
//! keeps a runqueue that hovers at the limit from converting at every
//! operation). Both forms give the same order; which one is in use is
//! invisible to the callers.

use crate::sched::task::TaskId;
use std::collections::BTreeSet;

/// One entity in the timeline: `(key, seq, id)`.
pub type Entry = (i64, u64, TaskId);

/// Largest timeline kept as a sorted `Vec`.
pub const SMALL_MAX: usize = 128;
/// A `BTreeSet` timeline that shrinks to this size becomes a `Vec` again.
pub const SMALL_MIN: usize = 16;

#[derive(Clone, Debug)]
enum Repr {
    /// Sorted descending: the leftmost entry is the last element.
    Small(Vec<Entry>),
    Large(BTreeSet<Entry>),
}

/// The ordered set of queued entities of one runqueue.
#[derive(Clone, Debug)]
pub struct Timeline(Repr);

impl Default for Timeline {
    fn default() -> Self {
        Timeline(Repr::Small(Vec::new()))
    }
}

/// Where `e` is, or would go, in a descending `Vec`: the count of entries
/// greater than `e`.
#[inline]
fn slot(v: &[Entry], e: &Entry) -> usize {
    v.partition_point(|x| x > e)
}

impl Timeline {
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(v) => v.len(),
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
            Repr::Small(v) => v.last(),
            Repr::Large(s) => s.first(),
        }
    }

    /// The rightmost entry (`__pick_last_entity`).
    pub fn last(&self) -> Option<&Entry> {
        match &self.0 {
            Repr::Small(v) => v.first(),
            Repr::Large(s) => s.last(),
        }
    }

    /// The entry after the leftmost (`__pick_next_entity(leftmost)`).
    pub fn second(&self) -> Option<&Entry> {
        match &self.0 {
            Repr::Small(v) => v.len().checked_sub(2).map(|i| &v[i]),
            Repr::Large(s) => s.iter().nth(1),
        }
    }

    /// All entries, leftmost first.
    pub fn iter(&self) -> Iter<'_> {
        match &self.0 {
            Repr::Small(v) => Iter::Small(v.iter().rev()),
            Repr::Large(s) => Iter::Large(s.iter()),
        }
    }

    /// Insert `e`; false if it was already there.
    #[inline]
    pub fn insert(&mut self, e: Entry) -> bool {
        match &mut self.0 {
            Repr::Small(v) => {
                let i = slot(v, &e);
                if v.get(i) == Some(&e) {
                    return false;
                }
                if v.len() < SMALL_MAX {
                    v.insert(i, e);
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
            Repr::Small(v) => {
                // The leftmost entry (the usual one) is checked first.
                if v.last() == Some(e) {
                    v.pop();
                    return true;
                }
                let i = slot(v, e);
                if v.get(i) != Some(e) {
                    return false;
                }
                v.remove(i);
                true
            }
            Repr::Large(s) => {
                if !s.remove(e) {
                    return false;
                }
                if s.len() <= SMALL_MIN {
                    let v: Vec<Entry> = s.iter().rev().copied().collect();
                    self.0 = Repr::Small(v);
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
}
