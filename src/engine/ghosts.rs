//! The burst ends that re-arming replaced. Before the queue's slots
//! (`queue::EventQueue::arm`), a re-armed `SegmentEnd` left its old event in
//! the heap, stale, to be popped at its time, counted in the `events`
//! metric and discarded. Those pops changed nothing but the count (and,
//! when tasks have been runnable without progress for `WATCHDOG_NS`, the
//! instant at which the watchdog looks), so the queue no longer holds them:
//! each is kept here as its `(time, seq)` key only. The `events` metric
//! adds those whose key is before the last event popped — exactly the stale
//! events the old queue would have popped by then — so results are
//! unchanged; `Sim::replay_ghosts` visits them in order where the watchdog
//! could act at one. Memory: keys not yet passed (about as many as the old
//! queue's stale events) plus at most as many already passed, dropped in
//! batches.

/// Replaced burst-end keys.
#[derive(Debug)]
pub(crate) struct Ghosts {
    keys: Vec<(u64, u64)>,
    /// Keys already passed and dropped from `keys`.
    passed: u64,
    /// The key of the last event popped (a real one or a replayed ghost).
    last: (u64, u64),
    /// `keys.len()` at which passed keys are dropped.
    cap: usize,
}

impl Default for Ghosts {
    fn default() -> Self {
        Ghosts {
            keys: Vec::new(),
            passed: 0,
            last: (0, 0),
            cap: 1024,
        }
    }
}

impl Ghosts {
    /// A pending event with key `k` was replaced (its key is after the
    /// event being handled: it had not popped yet).
    pub fn add(&mut self, k: (u64, u64)) {
        debug_assert!(k > self.last);
        self.keys.push(k);
        if self.keys.len() > self.cap {
            self.compact();
            self.cap = (2 * self.keys.len()).max(1024);
        }
    }

    /// The event with key `k` was popped: keys before it are passed.
    pub fn passed(&mut self, k: (u64, u64)) {
        self.last = k;
    }

    fn compact(&mut self) {
        let last = self.last;
        let before = self.keys.len();
        self.keys.retain(|&g| g > last);
        self.passed += (before - self.keys.len()) as u64;
    }

    /// No key held (none pending, none passed but not yet dropped).
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Keys passed so far: the stale events the old queue had popped.
    pub fn popped(&self) -> u64 {
        let last = self.last;
        self.passed + self.keys.iter().filter(|&&g| g < last).count() as u64
    }

    /// Keys not passed yet: the stale events the old queue still held.
    pub fn pending(&self) -> usize {
        let last = self.last;
        self.keys.iter().filter(|&&g| g > last).count()
    }

    /// Remove and return, in pop order, the pending keys before `limit`
    /// (all of them for `None`). The caller passes each with
    /// [`Ghosts::passed`] as it visits it.
    pub fn take_before(&mut self, limit: Option<(u64, u64)>) -> Vec<(u64, u64)> {
        self.compact();
        let mut out = Vec::new();
        self.keys.retain(|&g| {
            let take = limit.is_none_or(|l| g < l);
            if take {
                out.push(g);
            }
            !take
        });
        out.sort_unstable();
        // Counted as passed when visited; the caller stops early only when
        // the run ends.
        out
    }

    /// A key returned by `take_before` was visited.
    pub fn replayed(&mut self, k: (u64, u64)) {
        self.passed += 1;
        self.last = k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_keys_before_the_last_pop() {
        let mut g = Ghosts::default();
        for i in 0..5000u64 {
            g.passed((i, 2 * i));
            // Each replaced event was due a little later.
            g.add((i + 3, 2 * i + 1));
        }
        // Last pop (4999, 9998): keys (i + 3, 2i + 1) before it are those
        // with i + 3 < 4999, or i + 3 = 4999 and 2i + 1 < 9998 (i = 4996:
        // 9993 < 9998): i ≤ 4996, 4997 keys.
        assert_eq!(g.popped(), 4997);
        assert_eq!(g.pending(), 3);
        let rest = g.take_before(None);
        assert_eq!(rest, vec![(5000, 9995), (5001, 9997), (5002, 9999)]);
        for k in rest {
            g.replayed(k);
        }
        assert_eq!(g.popped(), 5000);
        assert!(g.is_empty());
    }

    #[test]
    fn take_before_keeps_the_later_keys() {
        let mut g = Ghosts::default();
        g.add((10, 1));
        g.add((5, 2));
        g.add((7, 3));
        assert_eq!(g.take_before(Some((7, 4))), vec![(5, 2), (7, 3)]);
        assert_eq!(g.pending(), 1);
    }
}
