//! `struct cpumask` as a bitset of u64 words (include/linux/cpumask.h):
//! set/clear/test, `cpumask_first`, `cpumask_next` and `cpumask_weight` in
//! O(CPUs / 64) word operations instead of a walk over per-CPU flags.

/// A set of CPU numbers below the size it was made with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuMask {
    words: Vec<u64>,
    nbits: usize,
}

impl CpuMask {
    /// `nbits` CPUs, all clear.
    pub fn new(nbits: usize) -> Self {
        CpuMask {
            words: vec![0; nbits.div_ceil(64)],
            nbits,
        }
    }

    /// `nbits` CPUs, all set (`cpumask_setall`).
    pub fn full(nbits: usize) -> Self {
        let mut m = Self::new(nbits);
        for c in 0..nbits {
            m.set(c);
        }
        m
    }

    pub fn test(&self, cpu: usize) -> bool {
        self.words[cpu / 64] >> (cpu % 64) & 1 != 0
    }

    pub fn set(&mut self, cpu: usize) {
        self.words[cpu / 64] |= 1 << (cpu % 64);
    }

    pub fn clear(&mut self, cpu: usize) {
        self.words[cpu / 64] &= !(1 << (cpu % 64));
    }

    /// `cpumask_next(cpu - 1)`: the first set CPU at or after `from`.
    pub fn next_from(&self, from: usize) -> Option<usize> {
        if from >= self.nbits {
            return None;
        }
        let mut w = from / 64;
        let mut bits = self.words[w] & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let c = w * 64 + bits.trailing_zeros() as usize;
                return (c < self.nbits).then_some(c);
            }
            w += 1;
            if w == self.words.len() {
                return None;
            }
            bits = self.words[w];
        }
    }

    /// `cpumask_first()`.
    pub fn first(&self) -> Option<usize> {
        self.next_from(0)
    }

    /// `cpumask_weight()`.
    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// `cpumask_next_and(from - 1)` bounded by `end`: the first CPU in
    /// `from..end` set in both masks (of the same size).
    pub fn next_and_in(&self, other: &CpuMask, from: usize, end: usize) -> Option<usize> {
        debug_assert_eq!(self.nbits, other.nbits);
        let end = end.min(self.nbits);
        if from >= end {
            return None;
        }
        let mut w = from / 64;
        let mut bits = self.words[w] & other.words[w] & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                let c = w * 64 + bits.trailing_zeros() as usize;
                return (c < end).then_some(c);
            }
            w += 1;
            if w * 64 >= end {
                return None;
            }
            bits = self.words[w] & other.words[w];
        }
    }

    /// `cpumask_first_and()`: the first CPU set in both masks (of the
    /// same size).
    pub fn first_and(&self, other: &CpuMask) -> Option<usize> {
        debug_assert_eq!(self.nbits, other.nbits);
        self.words
            .iter()
            .zip(&other.words)
            .position(|(a, b)| a & b != 0)
            .map(|w| w * 64 + (self.words[w] & other.words[w]).trailing_zeros() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_a_vector_of_flags() {
        let n = 200;
        let mut m = CpuMask::new(n);
        let mut flags = vec![false; n];
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..2000 {
            let c = (rng.exp_ns(1000) as usize * 7) % n;
            if flags[c] {
                m.clear(c);
            } else {
                m.set(c);
            }
            flags[c] = !flags[c];
            let from = (rng.exp_ns(1000) as usize * 3) % (n + 5);
            let want = (from..n).find(|&x| flags[x]);
            assert_eq!(m.next_from(from), want);
            assert_eq!(m.first(), flags.iter().position(|&f| f));
            assert_eq!(m.weight(), flags.iter().filter(|&&f| f).count());
            assert!((0..n).all(|x| m.test(x) == flags[x]));
        }
        assert_eq!(CpuMask::full(70).weight(), 70);
        assert_eq!(CpuMask::full(70).next_from(69), Some(69));
        assert_eq!(CpuMask::full(64).next_from(64), None);
        let mut a = CpuMask::new(n);
        let mut b = CpuMask::new(n);
        assert_eq!(a.first_and(&b), None);
        a.set(3);
        a.set(130);
        b.set(130);
        b.set(199);
        assert_eq!(a.first_and(&b), Some(130));
        assert_eq!(a.next_and_in(&b, 0, 130), None);
        assert_eq!(a.next_and_in(&b, 130, 131), Some(130));
        assert_eq!(a.next_and_in(&b, 131, 200), None);
        a.set(199);
        assert_eq!(a.next_and_in(&b, 131, 200), Some(199));
        assert_eq!(a.next_and_in(&b, 131, 199), None);
        b.set(64);
        assert_eq!(a.first_and(&b), Some(130));
    }
}
