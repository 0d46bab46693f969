//! The run's random stream: PCG-64 MCG (`rand_pcg::Pcg64Mcg`), seeded from
//! the run seed through SplitMix64 so nearby seeds give unrelated streams.
//! Distributions are sampled here (not through `rand_distr`) so their
//! algorithms cannot change under a dependency upgrade.

use rand_core::{Rng as _, SeedableRng};
use rand_pcg::Pcg64Mcg;

#[derive(Clone, Debug)]
pub struct Rng(Pcg64Mcg);

/// SplitMix64 finaliser: a well-mixed 64-bit hash of `x`.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of run (`point`, `replicate`) of a sweep seeded `seed`: SplitMix64
/// mixing of the three, so a run's seed depends on nothing else (thread
/// count, chunking, executor, order). Halved to 63 bits, so it fits every
/// signed 64-bit column it is stored in. `sl.derive_seed` is this function.
pub fn derive_seed(seed: u64, point: u64, replicate: u64) -> u64 {
    splitmix64(splitmix64(seed ^ splitmix64(point)) ^ replicate) >> 1
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        let a = splitmix64(seed);
        let b = splitmix64(a);
        let state = ((a as u128) << 64) | b as u128;
        Rng(Pcg64Mcg::from_seed(state.to_le_bytes()))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1) with 53 bits. The 53-bit integer is converted
    /// as an `i64` (one `cvtsi2sd` on x86-64, where a `u64` takes a
    /// several-instruction sequence); below 2⁵³ both conversions are exact.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) as i64) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `ns` scaled by a factor uniform in [1 − pct %, 1 + pct %], rounded
    /// to ns (system-call noise, a child's start-up spread). With nothing
    /// to spread (`ns` or `pct` 0) it returns `ns` and draws nothing, so
    /// the stream is untouched.
    pub fn spread_ns(&mut self, ns: u64, pct: u64) -> u64 {
        if ns == 0 || pct == 0 {
            return ns;
        }
        let f = 1.0 + (2.0 * self.uniform() - 1.0) * pct as f64 / 100.0;
        round_ns(u64_to_f64(ns) * f)
    }

    /// Exponential with the given mean (inversion), rounded to ns.
    pub fn exp_ns(&mut self, mean_ns: u64) -> u64 {
        let u = 1.0 - self.uniform(); // (0, 1]
        round_ns(-(u.ln()) * u64_to_f64(mean_ns))
    }
}

/// `x.round() as u64` for the engine's non-negative durations, without the
/// libm call `f64::round` compiles to on baseline x86-64 (no SSE4.1
/// `roundsd`); 3 % of the wall time of a hackbench run went to that call.
/// Bit-identical to it: below 2⁵² the fraction `x - trunc(x)` is exact, so
/// comparing it with 0.5 rounds half away from zero as `round` does; from
/// 2⁵² up every `f64` is already an integer. NaN and negatives give 0, as
/// the `as u64` cast of `round`'s result does.
#[inline]
pub fn round_ns(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    if x >= 4_503_599_627_370_496.0 {
        return x as u64;
    }
    // 0 < x < 2⁵²: the `i64` conversions (one instruction each way on
    // x86-64) give what the `u64` ones would.
    let t = x as i64;
    // Branch-free: the fraction is as likely above one half as below.
    (t + i64::from(x - t as f64 >= 0.5)) as u64
}

/// `x as f64`, through the one-instruction `i64` conversion for every
/// value below 2⁶³ (the same result there: both round to nearest).
#[inline]
pub fn u64_to_f64(x: u64) -> f64 {
    if x <= i64::MAX as u64 {
        (x as i64) as f64
    } else {
        x as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_ns_stays_in_its_band_and_keeps_the_mean() {
        let mut r = Rng::new(3);
        assert_eq!(r.spread_ns(170_000, 0), 170_000);
        let n = 100_000;
        let mut sum = 0u64;
        for _ in 0..n {
            let x = r.spread_ns(170_000, 20);
            assert!((136_000..=204_000).contains(&x), "{x}");
            sum += x;
        }
        let mean = sum as f64 / n as f64;
        assert!((mean - 170_000.0).abs() < 170.0, "{mean}");
        // 100 % reaches down to 0, never below
        assert!((0..20_000).all(|_| r.spread_ns(1_000, 100) <= 2_000));
    }

    /// The `i64` conversions give the `u64` conversions' values: for the
    /// 53-bit draws, and for `u64_to_f64` on both sides of 2⁶³ and at the
    /// rounding boundaries above 2⁵³.
    #[test]
    fn i64_conversions_match_u64_ones() {
        let mut r = Rng::new(9);
        let mut q = r.clone();
        for _ in 0..100_000 {
            let u = r.uniform();
            let want = (q.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
            assert_eq!(u.to_bits(), want.to_bits());
        }
        let mut xs = vec![0, 1, (1 << 53) - 1, 1 << 53, (1 << 53) + 1, (1 << 54) + 3];
        xs.extend([
            i64::MAX as u64 - 1,
            i64::MAX as u64,
            1 << 63,
            u64::MAX - 1,
            u64::MAX,
        ]);
        xs.extend((0..100_000).map(|_| r.next_u64() >> (r.next_u64() % 64)));
        for x in xs {
            assert_eq!(u64_to_f64(x).to_bits(), (x as f64).to_bits(), "{x}");
        }
    }

    #[test]
    fn round_ns_matches_f64_round() {
        let mut r = Rng::new(7);
        let specials = [
            0.0,
            -0.0,
            -1.5,
            f64::NAN,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9.0e15 + 0.5,
            1.0e19,
            f64::INFINITY,
        ];
        for &x in &specials {
            assert_eq!(round_ns(x), x.round() as u64, "x = {x:?}");
        }
        for i in 0..200_000u64 {
            let scale = [1.0, 100.0, 1.0e4, 1.0e6, 1.0e9, 1.0e12][(i % 6) as usize];
            let x = r.uniform() * scale;
            assert_eq!(round_ns(x), x.round() as u64, "x = {x:?}");
            let half = (x * 2.0).floor() / 2.0;
            assert_eq!(round_ns(half), half.round() as u64, "x = {half:?}");
        }
    }

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(1);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = Rng::new(1);
                move |_| r.next_u64()
            })
            .collect();
        let c = Rng::new(2).next_u64();
        assert_eq!(a, b);
        assert_ne!(a[0], c);
    }

    #[test]
    fn exponential_mean_is_close() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let s: u64 = (0..n).map(|_| r.exp_ns(1000)).sum();
        let mean = s as f64 / n as f64;
        assert!((mean - 1000.0).abs() < 10.0, "{mean}");
    }

    #[test]
    fn derive_seed_keeps_the_sweep_seeds_of_earlier_releases() {
        // The values Python's own SplitMix64 gave before the core derived
        // the seeds: a sweep's per-run seeds (and so its numbers) are a
        // contract.
        assert_eq!(derive_seed(1, 2, 3), 7_087_425_317_170_207_597);
        assert_eq!(
            derive_seed(u64::MAX, 1_000_000, 7),
            7_233_522_818_370_211_450
        );
        assert_eq!(derive_seed(0, 0, 0), 1_279_368_494_785_126_216);
    }
}
