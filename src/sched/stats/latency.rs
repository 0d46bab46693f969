//! Per-task scheduling delays as `perf sched latency` counts them
//! (tools/perf/builtin-sched.c: `latency_switch_event()`,
//! `latency_wakeup_event()`, `add_sched_in_event()`): every time a task is
//! switched in after waiting, its delay is the time since it became
//! runnable — since its `sched_wakeup` / `sched_wakeup_new` when it had
//! slept (a *wake-up* delay), since its `sched_switch` out with
//! `prev_state` R when it was preempted (a *preempted* delay). perf's
//! `Switches` column is the count of both, its `Avg delay` their mean, its
//! `Max delay` their maximum.
//!
//! Kept per task in fixed buckets, so memory is bounded by the task count
//! (`LAT_TASK_BYTES` each) whatever the run's length, and needs no trace:
//! one log-linear histogram of all delays and one of the wake-up delays,
//! their counts, sums and maxima. Buckets are exact below 16 ns, then 16
//! per power of two (a bucket is at most 1/16 of its lower edge wide) up to
//! 2^36 ns (68.7 s); longer delays share the last bucket (the maximum is
//! kept exactly).

/// Sub-buckets per power of two (and the exact range below it).
const SUB: usize = 16;
const SUB_BITS: u32 = 4;
/// Delays of 2^MAX_EXP ns or more share the last bucket.
const MAX_EXP: u32 = 36;
/// The buckets of one histogram.
pub const LAT_BUCKETS: usize = SUB + (MAX_EXP - SUB_BITS) as usize * SUB + 1;
/// The two histograms a task keeps: all delays, wake-up delays.
pub const LAT_KINDS: usize = 2;
/// The memory one task's latency record takes (histograms and sums).
pub const LAT_TASK_BYTES: u64 = (LAT_KINDS * LAT_BUCKETS * 4 + 7 * 8) as u64;

/// The bucket of a delay of `ns`.
#[inline]
pub fn bucket(ns: u64) -> usize {
    if ns < SUB as u64 {
        return ns as usize;
    }
    let e = 63 - ns.leading_zeros();
    if e >= MAX_EXP {
        return LAT_BUCKETS - 1;
    }
    let shift = e - SUB_BITS;
    SUB + (shift as usize) * SUB + ((ns >> shift) as usize - SUB)
}

/// The delays bucket `i` holds: `[lo, hi)` in ns (`hi` = u64::MAX for the
/// last).
pub fn bucket_bounds(i: usize) -> (u64, u64) {
    if i < SUB {
        return (i as u64, i as u64 + 1);
    }
    if i >= LAT_BUCKETS - 1 {
        return (1u64 << MAX_EXP, u64::MAX);
    }
    let shift = ((i - SUB) / SUB) as u32;
    let m = ((i - SUB) % SUB + SUB) as u64;
    (m << shift, (m + 1) << shift)
}

/// The `q`-quantile (0 < q ≤ 1) of a histogram whose largest value is
/// `max`: the nearest-rank value (the ⌈q·n⌉-th smallest), read as the upper
/// edge of its bucket (so at most 1/16 above the true value, exact below
/// 16 ns), never above `max`. `None` for an empty histogram.
pub fn quantile(hist: &[u32], q: f64, max: u64) -> Option<u64> {
    let n: u64 = hist.iter().map(|&c| c as u64).sum();
    if n == 0 {
        return None;
    }
    let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0u64;
    for (i, &c) in hist.iter().enumerate() {
        seen += c as u64;
        if seen >= rank {
            let (_, hi) = bucket_bounds(i);
            return Some((hi - 1).min(max));
        }
    }
    Some(max)
}

/// Which histogram a delay goes to besides the "all" one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delay {
    /// Runnable since a `sched_wakeup` / `sched_wakeup_new`.
    Wakeup,
    /// Runnable since it was switched out while runnable (preempted,
    /// yielded, or moved off by the stopper).
    Preempted,
}

/// Every task's delays: histograms in one flat vector, task-major
/// (`[task][kind][bucket]`, kind 0 all, 1 wake-up), and per task and kind
/// the count, sum and maximum, and when the largest delay started.
#[derive(Clone, Debug, Default)]
pub struct Latency {
    pub hist: Vec<u32>,
    pub count: Vec<[u64; LAT_KINDS]>,
    pub sum_ns: Vec<[u64; LAT_KINDS]>,
    pub max_ns: Vec<[u64; LAT_KINDS]>,
    /// The instant the task's largest delay (of all) began.
    pub max_start_ns: Vec<u64>,
}

impl Latency {
    /// Room for task `t` (tasks are numbered as created).
    #[inline]
    fn grow(&mut self, t: usize) {
        if t >= self.count.len() {
            let n = t + 1;
            self.hist.resize(n * LAT_KINDS * LAT_BUCKETS, 0);
            self.count.resize(n, [0; LAT_KINDS]);
            self.sum_ns.resize(n, [0; LAT_KINDS]);
            self.max_ns.resize(n, [0; LAT_KINDS]);
            self.max_start_ns.resize(n, 0);
        }
    }

    /// Task `t` is switched in at `now` after waiting since `since`.
    pub fn record(&mut self, t: usize, since: u64, now: u64, kind: Delay) {
        self.grow(t);
        let d = now - since;
        let b = bucket(d);
        let base = t * LAT_KINDS * LAT_BUCKETS;
        let kinds: &[usize] = match kind {
            Delay::Wakeup => &[0, 1],
            Delay::Preempted => &[0],
        };
        for &k in kinds {
            let c = &mut self.hist[base + k * LAT_BUCKETS + b];
            *c = c.saturating_add(1);
            self.count[t][k] += 1;
            self.sum_ns[t][k] += d;
            if d > self.max_ns[t][k] || self.count[t][k] == 1 {
                self.max_ns[t][k] = d;
                if k == 0 {
                    self.max_start_ns[t] = since;
                }
            }
        }
    }

    /// Pad to `tasks` rows (tasks that never waited).
    pub fn finish(&mut self, tasks: usize) {
        if tasks > 0 {
            self.grow(tasks - 1);
        }
    }

    /// One task's histogram of `kind` (0 all, 1 wake-up).
    pub fn task_hist(&self, t: usize, kind: usize) -> &[u32] {
        let base = (t * LAT_KINDS + kind) * LAT_BUCKETS;
        &self.hist[base..base + LAT_BUCKETS]
    }

    /// The run's metrics over all tasks: `latency_*` for all delays,
    /// `wakeup_latency_*` for wake-up delays — count, mean, p50/p90/p99 and
    /// max in µs (NaN with no delay).
    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        let names: [[&'static str; 6]; LAT_KINDS] = [
            [
                "latency_count",
                "latency_mean_us",
                "latency_p50_us",
                "latency_p90_us",
                "latency_p99_us",
                "latency_max_us",
            ],
            [
                "wakeup_latency_count",
                "wakeup_latency_mean_us",
                "wakeup_latency_p50_us",
                "wakeup_latency_p90_us",
                "wakeup_latency_p99_us",
                "wakeup_latency_max_us",
            ],
        ];
        let mut out = Vec::with_capacity(12);
        let tasks = self.count.len();
        for (k, n) in names.iter().enumerate() {
            let mut h = vec![0u32; LAT_BUCKETS];
            let (mut cnt, mut sum, mut max) = (0u64, 0u64, 0u64);
            for t in 0..tasks {
                for (a, &b) in h.iter_mut().zip(self.task_hist(t, k)) {
                    *a = a.saturating_add(b);
                }
                cnt += self.count[t][k];
                sum += self.sum_ns[t][k];
                max = max.max(self.max_ns[t][k]);
            }
            let us = |v: Option<u64>| v.map_or(f64::NAN, |x| x as f64 / 1e3);
            out.push((n[0], cnt as f64));
            out.push((
                n[1],
                if cnt == 0 {
                    f64::NAN
                } else {
                    sum as f64 / cnt as f64 / 1e3
                },
            ));
            for (i, q) in [0.5, 0.9, 0.99].into_iter().enumerate() {
                out.push((n[2 + i], us(quantile(&h, q, max))));
            }
            out.push((n[5], us((cnt > 0).then_some(max))));
        }
        out
    }
}

/// Scheduling latency, reported with `latency=True`.
pub const LATENCY: &[crate::config::MetricDoc] = &[
    crate::config::MetricDoc {
        name: "latency_count",
        unit: "count",
        meaning: "Scheduling delays recorded: every time a task waited runnable",
        source: "perf sched latency (switches)",
    },
    crate::config::MetricDoc {
        name: "latency_mean_us",
        unit: "µs",
        meaning: "Mean scheduling delay",
        source: "perf sched latency (avg delay)",
    },
    crate::config::MetricDoc {
        name: "latency_p50_us",
        unit: "µs",
        meaning: "Median scheduling delay (within 1/16 above the true value)",
        source: "perf sched timehist (sch delay)",
    },
    crate::config::MetricDoc {
        name: "latency_p90_us",
        unit: "µs",
        meaning: "90th percentile of the scheduling delays",
        source: "perf sched timehist (sch delay)",
    },
    crate::config::MetricDoc {
        name: "latency_p99_us",
        unit: "µs",
        meaning: "99th percentile of the scheduling delays",
        source: "perf sched timehist (sch delay)",
    },
    crate::config::MetricDoc {
        name: "latency_max_us",
        unit: "µs",
        meaning: "Longest scheduling delay",
        source: "perf sched latency (max delay)",
    },
    crate::config::MetricDoc {
        name: "wakeup_latency_count",
        unit: "count",
        meaning: "Wake-up delays recorded: from a wake-up to the woken task running",
        source: "perf sched latency, wake-ups only",
    },
    crate::config::MetricDoc {
        name: "wakeup_latency_mean_us",
        unit: "µs",
        meaning: "Mean wake-up delay",
        source: "sched_wakeup to sched_switch",
    },
    crate::config::MetricDoc {
        name: "wakeup_latency_p50_us",
        unit: "µs",
        meaning: "Median wake-up delay",
        source: "sched_wakeup to sched_switch",
    },
    crate::config::MetricDoc {
        name: "wakeup_latency_p90_us",
        unit: "µs",
        meaning: "90th percentile of the wake-up delays",
        source: "sched_wakeup to sched_switch",
    },
    crate::config::MetricDoc {
        name: "wakeup_latency_p99_us",
        unit: "µs",
        meaning: "99th percentile of the wake-up delays",
        source: "sched_wakeup to sched_switch",
    },
    crate::config::MetricDoc {
        name: "wakeup_latency_max_us",
        unit: "µs",
        meaning: "Longest wake-up delay",
        source: "sched_wakeup to sched_switch",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_every_value_once_in_order() {
        let mut prev_hi = 0;
        for i in 0..LAT_BUCKETS {
            let (lo, hi) = bucket_bounds(i);
            assert_eq!(
                lo,
                prev_hi,
                "bucket {i} starts where {} ended",
                i.max(1) - 1
            );
            assert!(hi > lo);
            assert_eq!(bucket(lo), i);
            if hi != u64::MAX {
                assert_eq!(bucket(hi - 1), i);
                // at most 1/16 of the lower edge wide (exact below 16 ns)
                assert!(lo < 16 || (hi - lo) * 16 <= lo, "bucket {i}: [{lo}, {hi})");
            }
            prev_hi = hi;
        }
        assert_eq!(bucket(u64::MAX), LAT_BUCKETS - 1);
        assert_eq!(bucket((1 << 36) - 1), LAT_BUCKETS - 2);
    }

    #[test]
    fn quantiles_are_nearest_rank_upper_edges_capped_by_max() {
        let mut l = Latency::default();
        // delays 1..=100 µs of task 0, wake-ups; one preempted 5 ms delay
        for d in 1..=100u64 {
            l.record(0, 0, d * 1000, Delay::Wakeup);
        }
        l.record(0, 1_000, 5_001_000, Delay::Preempted);
        let all = l.task_hist(0, 0);
        let wake = l.task_hist(0, 1);
        assert_eq!(l.count[0], [101, 100]);
        assert_eq!(l.max_ns[0], [5_000_000, 100_000]);
        assert_eq!(l.max_start_ns[0], 1_000);
        // p50 of the wake-ups is the 50th value, 50 µs, read as the upper
        // edge of its bucket: within 1/16 above
        let p50 = quantile(wake, 0.5, l.max_ns[0][1]).unwrap();
        assert!((50_000..=50_000 + 50_000 / 16).contains(&p50), "{p50}");
        // p100 is the exact maximum
        assert_eq!(quantile(wake, 1.0, 100_000), Some(100_000));
        assert_eq!(quantile(all, 1.0, 5_000_000), Some(5_000_000));
        // p99 of all 101: the 100th smallest, 100 µs
        let p99 = quantile(all, 0.99, 5_000_000).unwrap();
        assert!((100_000..=100_000 + 100_000 / 16).contains(&p99), "{p99}");
        assert_eq!(quantile(&[0; LAT_BUCKETS], 0.5, 0), None);
        let m: std::collections::HashMap<_, _> = l.metrics().into_iter().collect();
        assert_eq!(m["latency_count"], 101.0);
        assert_eq!(m["wakeup_latency_count"], 100.0);
        assert!((m["wakeup_latency_mean_us"] - 50.5).abs() < 1e-9);
        assert!((m["latency_mean_us"] - (5050.0 + 5000.0) / 101.0).abs() < 1e-9);
        assert_eq!(m["latency_max_us"], 5000.0);
    }

    #[test]
    fn no_delay_is_nan_not_zero() {
        let mut l = Latency::default();
        l.finish(3);
        assert_eq!(l.count.len(), 3);
        let m: std::collections::HashMap<_, _> = l.metrics().into_iter().collect();
        assert_eq!(m["latency_count"], 0.0);
        assert!(m["latency_mean_us"].is_nan() && m["latency_p99_us"].is_nan());
    }
}
