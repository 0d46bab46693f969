//! schbench's latency histogram and percentiles, as schbench.c computes
//! them (masoncl/schbench, `plat_val_to_idx()`, `plat_idx_to_val()`,
//! `add_lat()`, `calc_percentiles()`; "mr axboe's magic latency histogram",
//! from fio): values below 512 are kept exactly, larger ones in 256 buckets
//! per power of two, and a percentile is the value of the first bucket at
//! which the running count reaches `p / 100 × samples`, the bucket's middle
//! (truncated to an integer) for a rounded bucket.

const PLAT_BITS: u32 = 8;
const PLAT_VAL: u32 = 1 << PLAT_BITS;
const PLAT_GROUP_NR: u32 = 19;
const PLAT_NR: usize = (PLAT_GROUP_NR * PLAT_VAL) as usize;

/// One `struct stats`: the bucket counts, the sample count, min and max
/// (`min` 0 means none yet, as in schbench).
#[derive(Clone, Debug)]
pub struct Stats {
    plat: Vec<u32>,
    pub nr_samples: u64,
    pub min: u32,
    pub max: u32,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            plat: vec![0; PLAT_NR],
            nr_samples: 0,
            min: 0,
            max: 0,
        }
    }
}

/// `plat_val_to_idx()`.
fn val_to_idx(val: u32) -> usize {
    let msb = if val == 0 {
        0
    } else {
        31 - val.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = (error_bits + 1) << PLAT_BITS;
    let offset = (PLAT_VAL - 1) & (val >> error_bits);
    ((base + offset) as usize).min(PLAT_NR - 1)
}

/// `plat_idx_to_val()`: the bucket's value (its middle, truncated).
fn idx_to_val(idx: usize) -> u32 {
    let idx = idx as u32;
    if idx < (PLAT_VAL << 1) {
        return idx;
    }
    let error_bits = (idx >> PLAT_BITS) - 1;
    let base = 1u32 << (error_bits + PLAT_BITS);
    let k = idx % PLAT_VAL;
    (f64::from(base) + (f64::from(k) + 0.5) * f64::from(1u32 << error_bits)) as u32
}

impl Stats {
    /// `add_lat()`: one sample (µs, or requests per second).
    pub fn add(&mut self, v: u32) {
        if v > self.max {
            self.max = v;
        }
        if self.min == 0 || v < self.min {
            self.min = v;
        }
        self.plat[val_to_idx(v)] += 1;
        self.nr_samples += 1;
    }

    /// `calc_percentiles()` of one percentile `p` (e.g. 99.9); `None` with
    /// no samples (schbench then prints 0).
    pub fn percentile(&self, p: f64) -> Option<u32> {
        if self.nr_samples == 0 {
            return None;
        }
        let need = p / 100.0 * self.nr_samples as f64;
        let mut sum = 0u64;
        for (i, &n) in self.plat.iter().enumerate() {
            sum += u64::from(n);
            if sum as f64 >= need {
                return Some(idx_to_val(i));
            }
        }
        Some(idx_to_val(PLAT_NR - 1))
    }

    /// Every sample dropped (`reset_thread_stats()` after the warm-up).
    pub fn reset(&mut self) {
        *self = Stats::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_values_are_exact_and_large_ones_bucketed() {
        for v in [0, 1, 255, 511] {
            assert_eq!(idx_to_val(val_to_idx(v)), v);
        }
        // 1000: msb 9, one error bit, bucket [1000, 1001], middle 1001
        assert_eq!(idx_to_val(val_to_idx(1000)), 1001);
        // within 1/256 of the value
        for v in [600u32, 5_000, 123_456, 10_000_000] {
            let back = idx_to_val(val_to_idx(v));
            assert!(
                (f64::from(back) / f64::from(v) - 1.0).abs() < 1.0 / 256.0,
                "{v} {back}"
            );
        }
    }

    #[test]
    fn percentiles_as_schbench_reads_its_histogram() {
        let mut s = Stats::default();
        assert_eq!(s.percentile(50.0), None);
        for v in 1..=100 {
            s.add(v);
        }
        assert_eq!(s.percentile(50.0), Some(50));
        assert_eq!(s.percentile(99.0), Some(99));
        assert_eq!(s.percentile(99.9), Some(100));
        assert_eq!((s.min, s.max, s.nr_samples), (1, 100, 100));
        s.reset();
        assert_eq!(s.nr_samples, 0);
    }
}
