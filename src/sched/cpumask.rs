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
    }
}
