//! The event queue: a binary min-heap on `(time, seq)`.
//!
//! Chosen by measurement (reference/ecosystem.md §3.2, 2-vCPU machine): with
//! the pending set this model has — O(CPUs + sleeping tasks), a few hundred
//! to a few thousand — `BinaryHeap` runs 18–26 M events/s, ahead of a radix
//! heap until ~10⁴ pending; `benches/engine.rs` re-measures it against a
//! `BTreeMap` on the engine's own event mix.
//!
//! Tie-break: events at the same nanosecond run in the order they were
//! scheduled (`seq` is a global insertion counter). This is what makes a
//! run a pure function of its inputs.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<E> {
    pub time: u64,
    pub seq: u64,
    pub ev: E,
}

impl<E: Eq> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl<E: Eq> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E: Eq + Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Eq + Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
        }
    }

    pub fn push(&mut self, time: u64, ev: E) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            ev,
        });
    }

    pub fn pop(&mut self) -> Option<Entry<E>> {
        self.heap.pop()
    }

    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_then_insertion_order() {
        let mut q = EventQueue::new();
        q.push(5, 'a');
        q.push(3, 'b');
        q.push(5, 'c');
        q.push(3, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|e| e.ev)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }
}
