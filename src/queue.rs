//! The event queue: a binary min-heap on `(time, seq)`. A data structure
//! only: the scheduler's hooks (`sched::hooks`) post its events into one,
//! and the engine pops it (`engine::Sim::run`).
//!
//! Chosen by measurement (a standalone hold-model benchmark on the
//! project's 2-vCPU machine, Rust 1.95, `u64` keys, an exponential draw per
//! event): `BinaryHeap` ran 18.4 M pop + push per second at 64 pending
//! (26.2 M with one sift through `peek_mut`) against the `radix-heap`
//! crate's 17.5 M, and stayed ahead with `peek_mut` at 1,024 pending (18.0
//! against 17.6 M); the radix heap wins from ~10⁴ (65,536: 5.9 against
//! 19.7 M). The pending set this model has is O(CPUs + sleeping tasks), a
//! few hundred to a few thousand. `benches/engine.rs` re-measures the heap
//! against a `BTreeMap` on the engine's own event mix
//! (docs/performance.md).
//!
//! Tie-break: events at the same nanosecond run in the order they were
//! scheduled (`seq` is a global insertion counter). This is what makes a
//! run a pure function of its inputs.
//!
//! Slot events: an event that is re-armed rather than added — each CPU's
//! burst end — lives in a second, indexed heap with one slot per owner
//! ([`EventQueue::arm`], [`EventQueue::cancel`]). Re-arming replaces the
//! slot's pending entry instead of leaving a stale one behind (the kernel
//! re-programs an hrtimer the same way), so the heap holds O(CPUs + timers)
//! entries however often burst ends move. Both heaps draw `seq` from the
//! one counter and `pop` takes the earlier `(time, seq)` of the two, so the
//! order of events is the order a single heap would give. Re-arming to a
//! later time (the common case) is O(1): the entry keeps its earlier key
//! as a lower bound and is moved down once, when it reaches the top. A
//! popped slot event's entry stays at the top the same way, as the lower
//! bound of the slot's next event (a CPU's next burst end is usually armed
//! while the popped one is handled): one move down at the next `pop`
//! replaces a removal (hole to the bottom, last entry up) and an insertion
//! (sift up) — measured with callgrind, 9 % fewer instructions on the
//! slot hold model of `benches/engine.rs`, 93 fewer per event at 1024
//! CPUs. A 4-ary slot heap and `u128` keys were measured too and cost
//! more instructions than this binary heap.

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
    /// The slot heap: a binary min-heap of slot keys. A slot's key here is
    /// a lower bound of its armed key (`armed`): re-arming later only
    /// updates `armed`, and the entry is moved down when it reaches the top
    /// (one sift however often it was re-armed); re-arming earlier moves it
    /// up at once; a popped or cancelled slot's entry stays until it
    /// reaches the top, where it is moved down if the slot was armed again
    /// and dropped if not. At most one entry per slot.
    slots: Vec<SlotKey>,
    /// Each slot's index in `slots` (`NO_POS`: no entry).
    pos: Vec<u32>,
    /// Each slot's armed `(time, seq)` and event (`None`: nothing armed).
    armed: Vec<Option<(u64, u64, E)>>,
    /// Slots armed.
    nr_armed: usize,
}

const NO_POS: u32 = u32::MAX;

/// A slot's entry in the slot heap.
#[derive(Clone, Copy, Debug)]
struct SlotKey {
    time: u64,
    seq: u64,
    slot: u32,
}

impl SlotKey {
    #[inline]
    fn before(&self, o: &SlotKey) -> bool {
        self.time < o.time || (self.time == o.time && self.seq < o.seq)
    }
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
            slots: Vec::new(),
            pos: Vec::new(),
            armed: Vec::new(),
            nr_armed: 0,
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

    /// Bring the slot heap's top to its armed key (moving re-armed entries
    /// down, dropping popped and cancelled ones) so that it is the earliest
    /// armed slot.
    #[inline]
    fn settle(&mut self) {
        while let Some(&top) = self.slots.first() {
            match self.armed[top.slot as usize] {
                Some((t, q, _)) if (t, q) == (top.time, top.seq) => return,
                Some((t, q, _)) => {
                    let k = SlotKey {
                        time: t,
                        seq: q,
                        slot: top.slot,
                    };
                    self.sift_down(0, k);
                }
                None => {
                    self.pos[top.slot as usize] = NO_POS;
                    let Some(last) = self.slots.pop() else { return };
                    if !self.slots.is_empty() {
                        self.sift_down(0, last);
                    }
                }
            }
        }
    }

    /// The earliest event of both heaps.
    #[inline]
    pub fn pop(&mut self) -> Option<Entry<E>> {
        self.pop_before((u64::MAX, u64::MAX))
    }

    /// The earliest event of both heaps if its `(time, seq)` is before
    /// `key`, else nothing (the queue unchanged): how the engine takes its
    /// own timers, held outside the queue with a `seq` from
    /// [`EventQueue::next_seq`], in the order one queue would give.
    #[inline]
    pub fn pop_before(&mut self, key: (u64, u64)) -> Option<Entry<E>> {
        self.settle();
        let slot_first = match (self.heap.peek(), self.slots.first()) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(h), Some(s)) => (s.time, s.seq) < (h.time, h.seq),
        };
        if !slot_first {
            if self.heap.peek().is_none_or(|h| (h.time, h.seq) >= key) {
                return None;
            }
            return self.heap.pop();
        }
        let s = self.slots[0];
        if (s.time, s.seq) >= key {
            return None;
        }
        // The entry stays at the top: a lower bound of the slot's next
        // event, or dropped by `settle`.
        let (time, seq, ev) = self.armed[s.slot as usize].take()?;
        self.nr_armed -= 1;
        Some(Entry { time, seq, ev })
    }

    /// Take the next sequence number for an event kept outside the queue:
    /// it orders against the queue's events as if it had been pushed now.
    pub fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// `(time, seq)` of the event `pop` would return.
    pub fn peek_key(&mut self) -> Option<(u64, u64)> {
        self.settle();
        let h = self.heap.peek().map(|e| (e.time, e.seq));
        let s = self.slots.first().map(|e| (e.time, e.seq));
        match (h, s) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn peek_time(&mut self) -> Option<u64> {
        self.peek_key().map(|k| k.0)
    }

    /// Events held: the plain ones and the armed slots.
    pub fn len(&self) -> usize {
        self.heap.len() + self.nr_armed
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Arm `slot`'s event at `time`, replacing its pending one; returns the
    /// replaced event's `(time, seq)`.
    #[inline]
    pub fn arm(&mut self, slot: usize, time: u64, ev: E) -> Option<(u64, u64)> {
        if slot >= self.pos.len() {
            self.pos.resize(slot + 1, NO_POS);
            self.armed.resize(slot + 1, None);
        }
        self.seq += 1;
        let k = SlotKey {
            time,
            seq: self.seq,
            slot: slot as u32,
        };
        let old = self.armed[slot].replace((time, self.seq, ev));
        if old.is_none() {
            self.nr_armed += 1;
        }
        let i = self.pos[slot];
        if i == NO_POS {
            self.slots.push(k);
            self.sift_up(self.slots.len() - 1, k);
        } else if k.before(&self.slots[i as usize]) {
            self.sift_up(i as usize, k);
        }
        old.map(|(t, q, _)| (t, q))
    }

    /// Remove `slot`'s pending event; returns its `(time, seq)`.
    #[inline]
    pub fn cancel(&mut self, slot: usize) -> Option<(u64, u64)> {
        let (t, q, _) = self.armed.get_mut(slot)?.take()?;
        self.nr_armed -= 1;
        Some((t, q))
    }

    /// Place `k` at the hole `i`, moving parents down while it is earlier.
    fn sift_up(&mut self, mut i: usize, k: SlotKey) {
        while i > 0 {
            let p = (i - 1) / 2;
            let pk = self.slots[p];
            if !k.before(&pk) {
                break;
            }
            self.slots[i] = pk;
            self.pos[pk.slot as usize] = i as u32;
            i = p;
        }
        self.slots[i] = k;
        self.pos[k.slot as usize] = i as u32;
    }

    /// Place `k` at the hole `i`, moving the earlier child up while it is
    /// earlier than `k`.
    #[inline]
    fn sift_down(&mut self, mut i: usize, k: SlotKey) {
        let n = self.slots.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.slots[l + 1].before(&self.slots[l]) {
                l + 1
            } else {
                l
            };
            let ck = self.slots[c];
            if !ck.before(&k) {
                break;
            }
            self.slots[i] = ck;
            self.pos[ck.slot as usize] = i as u32;
            i = c;
        }
        self.slots[i] = k;
        self.pos[k.slot as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_kept_outside_with_a_drawn_seq_run_where_one_queue_would_run_them() {
        // The reference: one queue holding everything. The split: the same
        // pushes, except that every third event is kept outside with a
        // sequence number drawn from the queue, and taken by `pop_before`
        // losing to it.
        let mut rng = crate::rng::Rng::new(7);
        let mut one: EventQueue<u32> = EventQueue::new();
        let mut split: EventQueue<u32> = EventQueue::new();
        let mut outside: Vec<(u64, u64, u32)> = Vec::new();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        let mut now = 0u64;
        for id in 0..3000u32 {
            let at = now + rng.next_u64() % 50;
            one.push(at, id);
            if id % 3 == 0 {
                outside.push((at, split.next_seq(), id));
            } else {
                split.push(at, id);
            }
            if id % 2 == 1 {
                let e = one.pop().unwrap();
                now = e.time;
                want.push(e.ev);
                outside.sort_unstable_by_key(|&(t, s, _)| std::cmp::Reverse((t, s)));
                let key = outside
                    .last()
                    .map_or((u64::MAX, u64::MAX), |&(t, s, _)| (t, s));
                match split.pop_before(key) {
                    Some(e) => got.push(e.ev),
                    None => got.push(outside.pop().unwrap().2),
                }
            }
        }
        assert_eq!(got, want);
    }

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

    /// Many random push / arm / cancel / pop sequences (few and many
    /// slots, few and many pending events, many equal times, re-arms
    /// earlier and later) pop exactly the sequence a reference
    /// `BinaryHeap` holding every event gives once the replaced and
    /// cancelled slot events are skipped; `len` and `peek_key` agree.
    #[test]
    fn random_operations_pop_in_the_reference_order() {
        use std::cmp::Reverse;
        let mut rng = crate::rng::Rng::new(22);
        for case in 0..48u64 {
            let nr_slots = [1usize, 2, 3, 8, 64, 700][case as usize % 6];
            let target = [2usize, 5, 40, 300, 1500][(case / 6) as usize % 5];
            let coarse = [1u64, 50, 1000][(case % 3) as usize];
            let mut q: EventQueue<(u32, u64)> = EventQueue::new();
            let mut r: BinaryHeap<Reverse<(u64, u64, u32)>> = BinaryHeap::new();
            // Each slot's live seq (0: none); plain events are slot u32::MAX.
            let mut live = vec![0u64; nr_slots];
            let (mut seq, mut now, mut nr_live) = (0u64, 0u64, 0usize);
            for _ in 0..6000 {
                let t = now + rng.exp_ns(2000) / coarse * coarse;
                let op = rng.next_u64() % 100;
                let len = q.len();
                if op < 40 && len > target / 2 || len > 2 * target {
                    let got = q.pop().map(|e| (e.time, e.seq, e.ev));
                    let want = loop {
                        match r.pop() {
                            None => break None,
                            Some(Reverse((t, sq, s))) => {
                                if s == u32::MAX {
                                    break Some((t, sq, (s, sq)));
                                }
                                if live[s as usize] == sq {
                                    live[s as usize] = 0;
                                    break Some((t, sq, (s, sq)));
                                }
                            }
                        }
                    };
                    assert_eq!(got, want, "case {case}");
                    if let Some((t, _, _)) = got {
                        now = t;
                        nr_live -= 1;
                    }
                } else if op < 60 {
                    seq += 1;
                    q.push(t, (u32::MAX, seq));
                    r.push(Reverse((t, seq, u32::MAX)));
                    nr_live += 1;
                } else if op < 92 {
                    let s = (rng.next_u64() % nr_slots as u64) as usize;
                    // Now and then earlier than the pending one.
                    let t = if op < 70 { now + (t - now) / 8 } else { t };
                    seq += 1;
                    let old = q.arm(s, t, (s as u32, seq));
                    let had = live[s] != 0;
                    assert_eq!(old.map(|k| k.1), had.then_some(live[s]));
                    nr_live += usize::from(!had);
                    live[s] = seq;
                    r.push(Reverse((t, seq, s as u32)));
                } else {
                    let s = (rng.next_u64() % (nr_slots as u64 + 1)) as usize;
                    let old = q.cancel(s);
                    let had = s < nr_slots && live[s] != 0;
                    assert_eq!(old.map(|k| k.1), had.then(|| live[s]));
                    if had {
                        live[s] = 0;
                        nr_live -= 1;
                    }
                }
                assert_eq!(q.len(), nr_live);
                let want_peek = loop {
                    match r.peek() {
                        Some(&Reverse((t, sq, s))) => {
                            if s == u32::MAX || live[s as usize] == sq {
                                break Some((t, sq));
                            }
                            r.pop();
                        }
                        None => break None,
                    }
                };
                assert_eq!(q.peek_key(), want_peek);
            }
            while let Some(e) = q.pop() {
                let Reverse((t, sq, s)) = loop {
                    let x = r.pop().unwrap();
                    let s = x.0 .2;
                    if s == u32::MAX || live[s as usize] == x.0 .1 {
                        break x;
                    }
                };
                if s != u32::MAX {
                    live[s as usize] = 0;
                }
                assert_eq!((e.time, e.seq, e.ev), (t, sq, (s, sq)));
            }
            assert!(q.is_empty());
            assert!(r
                .into_iter()
                .all(|x| x.0 .2 != u32::MAX && live[x.0 .2 as usize] != x.0 .1));
        }
    }

    /// Slot events interleave with plain ones by `(time, seq)` exactly as
    /// if all were in one heap, and a re-armed slot keeps only its newest
    /// event.
    #[test]
    fn slots_match_a_single_heap_without_the_stale_entries() {
        let mut rng = crate::rng::Rng::new(3);
        let mut q: EventQueue<(u32, u32)> = EventQueue::new();
        // The reference: one heap holding everything, stale entries
        // filtered at pop as the engine's generation check did.
        let mut r: EventQueue<(u32, u32)> = EventQueue::new();
        let mut live = [None::<u32>; 8];
        let mut gen = 0u32;
        let (mut got, mut want) = (Vec::new(), Vec::new());
        let mut now = 0;
        for step in 0..4000u32 {
            let t = now + rng.exp_ns(1000) / 100;
            match step % 5 {
                0 | 1 => {
                    let slot = (rng.exp_ns(1000) % 8) as usize;
                    gen += 1;
                    let old = q.arm(slot, t, (slot as u32, gen));
                    assert_eq!(old.is_some(), live[slot].is_some());
                    live[slot] = Some(gen);
                    r.push(t, (slot as u32, gen));
                }
                2 => {
                    let slot = (rng.exp_ns(1000) % 8) as usize;
                    assert_eq!(q.cancel(slot).is_some(), live[slot].is_some());
                    live[slot] = None;
                }
                3 => {
                    q.push(t, (100, step));
                    r.push(t, (100, step));
                }
                _ => {
                    if let Some(e) = q.pop() {
                        now = e.time;
                        if e.ev.0 < 100 {
                            // Only the slot's newest, uncancelled event pops.
                            assert_eq!(live[e.ev.0 as usize], Some(e.ev.1));
                            live[e.ev.0 as usize] = None;
                        }
                        got.push((e.time, e.ev));
                    }
                }
            }
        }
        while let Some(e) = q.pop() {
            if e.ev.0 < 100 {
                assert_eq!(live[e.ev.0 as usize], Some(e.ev.1));
                live[e.ev.0 as usize] = None;
            }
            got.push((e.time, e.ev));
        }
        assert_eq!(q.len(), 0);
        assert!(live.iter().all(|l| l.is_none()));
        // What pops is in the order of the single heap holding everything.
        while let Some(e) = r.pop() {
            want.push((e.time, e.ev));
        }
        let pos: std::collections::HashMap<_, _> =
            want.iter().enumerate().map(|(i, x)| (*x, i)).collect();
        let idx: Vec<usize> = got.iter().map(|x| pos[x]).collect();
        assert!(idx.windows(2).all(|w| w[0] < w[1]), "order differs");
        assert_eq!(got.iter().filter(|x| x.1 .0 == 100).count(), 800);
    }
}
