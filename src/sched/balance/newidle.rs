//! Newidle balancing as 5.16–6.18 have it (`newidle_balance()`, renamed
//! `sched_balance_newidle()` in 6.10; kernel/sched/fair.c), selected by
//! `newidle_throttle = "lb_cost"`: Vincent Guittot's 5.16 series
//! (9e9af819db5d "Account update_blocked_averages in newidle_balance cost",
//! 9d783c8dd112, e60b56e46b38 "Wait before decaying max_newidle_lb_cost",
//! c5b0a7eefc70 "Remove sysctl_sched_migration_cost condition", 8ea9183db4ad)
//! and, with `newidle_random`, Peter Zijlstra's NI_RANDOM (33cf66d88306
//! "sched/fair: Proportional newidle balance", 6.19, backported to 6.18.5).
//! Also `rd->overload`, which 5.16's early exit reads, and the per-CPU
//! `sched_rng()` streams NI_RANDOM draws from.
//!
//! The 2.6.36–3.13 throttles stay in `balance::idle_balance`; the decay of
//! `rebalance_domains()` calls [`update_newidle_cost`] from there.

use crate::rng::{splitmix64, Rng};
use crate::sched::balance::domains::{sd, Domain};
use crate::sched::balance::IdleType;
use crate::sched::overhead::Overhead;
use crate::sched::Sched;

/// `update_newidle_stats()`'s window: at 1024 calls the ratio is taken and
/// both counts halve.
pub const NEWIDLE_WINDOW: u32 = 1024;

/// Salt of the `sched_rng()` streams (distinct from the workload's stream,
/// seeded with the seed itself, and the engine's noise stream).
const SCHED_RNG_SALT: u64 = 0x7363_6865_645F_726E; // "sched_rn"

/// One `sched_rnd_state` per CPU (`prandom_init_once()` in
/// `sched_init_smp()`): CPU `c`'s stream is seeded from the run seed and
/// `c`, so a run's draws depend on the seed only, whatever the thread count
/// of a sweep.
pub fn sched_rng_streams(seed: u64, ncpus: usize) -> Vec<Rng> {
    let base = splitmix64(seed ^ SCHED_RNG_SALT);
    (0..ncpus as u64)
        .map(|c| Rng::new(base.wrapping_add(c)))
        .collect()
}

/// `update_newidle_stats(sd, success)` (33cf66d88306): count the call and
/// its weighted success; at [`NEWIDLE_WINDOW`] calls the ratio becomes the
/// window's success count and both counts halve, a sliding window of
/// 512–1024 calls.
pub fn update_newidle_stats(d: &mut Domain, success: u32) {
    d.newidle_call += 1;
    d.newidle_success += success;
    if d.newidle_call >= NEWIDLE_WINDOW {
        d.newidle_ratio = d.newidle_success;
        d.newidle_call /= 2;
        d.newidle_success /= 2;
    }
}

/// `update_newidle_cost(sd, cost, success)` (e60b56e46b38, 5.16; the
/// `success` argument and the stats from 33cf66d88306): a call with a cost
/// (a newidle pass) counts in the NI_RANDOM statistics; a cost above the
/// domain's max becomes the max and stamps `last_decay_max_lb_cost`;
/// otherwise, with `decay` (`newidle_lb_cost_decay`), once more than
/// `hz_ns` (HZ jiffies: 1 s) has passed since the stamp the max decays by
/// 253/256 and the stamp moves to now. `now` is `jiffies` in ns. Returns
/// whether it decayed (`rebalance_domains()` then refreshes
/// `rq->max_idle_balance_cost`).
pub fn update_newidle_cost(
    d: &mut Domain,
    cost: u64,
    success: u32,
    now: u64,
    hz_ns: u64,
    decay: bool,
) -> bool {
    if cost != 0 {
        update_newidle_stats(d, success);
    }
    if cost > d.max_newidle_lb_cost {
        d.max_newidle_lb_cost = cost;
        d.last_decay_max_lb_cost = now;
        false
    } else if decay && now > d.last_decay_max_lb_cost + hz_ns {
        d.max_newidle_lb_cost = d.max_newidle_lb_cost * 253 / 256;
        d.last_decay_max_lb_cost = now;
        true
    } else {
        false
    }
}

/// NI_RANDOM's dice (33cf66d88306): with `d1k = sched_rng() % 1024` and
/// `w = 1 + newidle_ratio`, the domain is skipped when `d1k > w` (`None`);
/// otherwise a success counts `round(1024 / w)` (`(1024 + w/2) / w`), so the
/// weighted successes estimate the success rate of every call, sampled or
/// not, and a domain can climb back from a low ratio.
pub fn ni_random_weight(d1k: u32, newidle_ratio: u32) -> Option<u32> {
    let w = 1 + newidle_ratio;
    if d1k > w {
        None
    } else {
        Some((1024 + w / 2) / w)
    }
}

impl Sched<'_> {
    /// `jiffies` as a time (ns), and HZ jiffies (1 s) in the same unit.
    fn jiffies_ns(&self) -> (u64, u64) {
        (
            self.jiffies() * self.tick_ns,
            self.kernel.hz as u64 * self.tick_ns,
        )
    }

    /// `sched_rng()`: the next draw of `cpu`'s stream (`prandom_u32_state()`,
    /// 32 bits).
    fn sched_rng(&mut self, cpu: usize) -> u32 {
        (self.balance.sched_rng[cpu].next_u64() >> 32) as u32
    }

    /// Before a root-level pass under `lb_cost`: whether some CPU of the
    /// root domain has more than one runnable task, i.e. what
    /// `update_sd_lb_stats()` at the root (`!env->sd->parent`) writes to
    /// `rd->overload` (SG_OVERLOAD of `update_sg_lb_stats()`; no misfit
    /// tasks in the model). `None` below the root or under other throttles.
    pub(crate) fn root_overload_snapshot(&self, cpu: usize, lvl: usize) -> Option<bool> {
        if self.kernel.newidle_throttle != crate::kernel::NewidleThrottle::LbCost
            || lvl + 1 != self.sd[cpu].len()
        {
            return None;
        }
        let span = &self.sd[cpu][lvl].span;
        Some(
            span.iter()
                .any(|&c| self.rqs[c as usize].cfs.nr_running > 1),
        )
    }

    /// After that pass: the kernel writes `rd->overload` in
    /// `update_sd_lb_stats()`, which runs only once `should_we_balance()`
    /// let the pass through (`balance`); the statistics are those before any
    /// task moved.
    pub(crate) fn root_overload_apply(&mut self, snapshot: Option<bool>, balance: bool) {
        if let (Some(v), true) = (snapshot, balance) {
            self.balance.rd_overload = v;
        }
    }

    /// `update_next_balance(sd, &next_balance)`: the domain's last balance
    /// plus its idle interval (`get_sd_balance_interval(sd, 0)`: ms to
    /// jiffies, clamped to 1 … `max_load_balance_interval`).
    fn next_balance_of(&self, cpu: usize, lvl: usize) -> u64 {
        let d = &self.sd[cpu][lvl];
        let max_interval = (self.kernel.hz as u64 * self.rqs.len() as u64 / 10).max(1);
        let j = (d.balance_interval * self.kernel.hz as u64 / 1000).clamp(1, max_interval);
        d.last_balance + j * self.tick_ns
    }

    /// `newidle_balance(this_rq, rf)` as 5.16–6.9 have it,
    /// `sched_balance_newidle()` in 6.10–6.18 (with NI_RANDOM under
    /// `newidle_random`); called by `idle_balance()` under
    /// `newidle_throttle = "lb_cost"`. Returns tasks pulled; the passes' CPU
    /// time is charged to `cpu`.
    ///
    /// - `idle_stamp` is set first; there is no `avg_idle < migration_cost`
    ///   test (c5b0a7eefc70).
    /// - Skip (updating `next_balance` from the lowest domain) when the root
    ///   domain is not overloaded or `avg_idle` is below the lowest domain's
    ///   `max_newidle_lb_cost`.
    /// - Walk the domains upwards: stop when `avg_idle < curr_cost +
    ///   sd->max_newidle_lb_cost`; NI_RANDOM may skip a domain (counted as a
    ///   failed call); each pass's cost goes through
    ///   [`update_newidle_cost`] with its weighted success; stop once a task
    ///   was pulled or this runqueue has a task.
    /// - `rq->max_idle_balance_cost` keeps the largest walk cost;
    ///   `rq->next_balance` only moves earlier; a pull clears `idle_stamp`
    ///   (under `newidle_clear_stamp`, which every kernel since 2.6.37 has).
    ///
    /// Simplifications: `t0` is taken before `update_blocked_averages()`
    /// (9e9af819db5d) so its cost lands on the first domain, but the model
    /// charges nothing for it, so a domain's cost is its pass's
    /// `LbEnv::cost`. The model queues no remote wake-ups
    /// (`ttwu_pending`, TTWU_QUEUE): a wake-up enqueues at once, and a pass
    /// is instantaneous, so the entry test and the walk's `ttwu_pending`
    /// stop have nothing to see; `this_rq->nr_running > 0` is tested.
    /// `nohz_newidle_balance()` (blocked-load update of idle CPUs) is not
    /// modelled.
    pub(crate) fn sched_balance_newidle(&mut self, cpu: usize) -> u64 {
        let now = self.now;
        self.rqs[cpu].bal.idle_stamp = Some(now);
        let avg_idle = self.rqs[cpu].bal.avg_idle;
        let mut next_balance = now + 1_000_000_000;
        let mut pulled = 0;
        let mut curr_cost = 0u64;
        let mut total_cost = 0u64;
        if !self.balance.rd_overload || avg_idle < self.sd[cpu][0].max_newidle_lb_cost {
            next_balance = next_balance.min(self.next_balance_of(cpu, 0));
            self.counters.newidle_skipped += 1;
        } else {
            self.counters.newidle_calls += 1;
            self.counters.avg_idle_sum += avg_idle;
            let (jnow, hz_ns) = self.jiffies_ns();
            let decay = self.kernel.newidle_lb_cost_decay;
            for lvl in 0..self.sd[cpu].len() {
                next_balance = next_balance.min(self.next_balance_of(cpu, lvl));
                if avg_idle < curr_cost + self.sd[cpu][lvl].max_newidle_lb_cost {
                    break;
                }
                if self.sd[cpu][lvl].has(sd::BALANCE_NEWIDLE) {
                    let mut weight = 1;
                    if self.kernel.newidle_random {
                        let d1k = self.sched_rng(cpu) % 1024;
                        match ni_random_weight(d1k, self.sd[cpu][lvl].newidle_ratio) {
                            None => {
                                update_newidle_stats(&mut self.sd[cpu][lvl], 0);
                                continue;
                            }
                            Some(w) => weight = w,
                        }
                    }
                    let snap = self.root_overload_snapshot(cpu, lvl);
                    let r = self.load_balance(cpu, lvl, IdleType::NewlyIdle, true);
                    self.root_overload_apply(snap, r.balance);
                    pulled += r.moved;
                    curr_cost += r.cost;
                    total_cost += r.cost;
                    let success = weight * u32::from(r.moved > 0);
                    update_newidle_cost(
                        &mut self.sd[cpu][lvl],
                        r.cost,
                        success,
                        jnow,
                        hz_ns,
                        decay,
                    );
                }
                if pulled > 0 || self.rqs[cpu].cfs.nr_running > 0 {
                    break;
                }
            }
            let b = &mut self.rqs[cpu].bal;
            b.max_idle_balance_cost = b.max_idle_balance_cost.max(curr_cost);
        }
        let b = &mut self.rqs[cpu].bal;
        if b.next_balance > next_balance {
            b.next_balance = next_balance;
        }
        if pulled > 0 && self.kernel.newidle_clear_stamp {
            b.idle_stamp = None;
        }
        self.counters.newidle_pulled += pulled;
        self.counters.newidle_time_ns += total_cost;
        self.charge_as(cpu, total_cost, Overhead::Balance);
        pulled
    }

    /// The newidle-cost part of `rebalance_domains()` at one level under
    /// `lb_cost` (5.16–6.18): `update_newidle_cost(sd, 0)` (the decay only;
    /// a cost-0 call leaves the NI_RANDOM statistics alone). Returns
    /// whether it decayed.
    pub(crate) fn rebalance_decay_newidle_cost(&mut self, cpu: usize, lvl: usize) -> bool {
        let (jnow, hz_ns) = self.jiffies_ns();
        let decay = self.kernel.newidle_lb_cost_decay;
        update_newidle_cost(&mut self.sd[cpu][lvl], 0, 0, jnow, hz_ns, decay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;
    use crate::topology::Machine;

    fn domain() -> Domain {
        let m = Machine::preset("vm-2").unwrap();
        crate::sched::balance::domains::build(&m, &Kernel::v3_13())[0][0].clone()
    }

    const S: u64 = 1_000_000_000;

    #[test]
    fn update_newidle_cost_raises_the_max_and_stamps_it() {
        let mut d = domain();
        assert!(!update_newidle_cost(&mut d, 40_000, 0, 5 * S, S, true));
        assert_eq!(d.max_newidle_lb_cost, 40_000);
        assert_eq!(d.last_decay_max_lb_cost, 5 * S);
        // A smaller cost within the second: nothing changes.
        assert!(!update_newidle_cost(&mut d, 10_000, 0, 6 * S, S, true));
        assert_eq!(d.max_newidle_lb_cost, 40_000);
        assert_eq!(d.last_decay_max_lb_cost, 5 * S);
    }

    #[test]
    fn update_newidle_cost_decays_by_253_256_after_more_than_a_second() {
        let mut d = domain();
        update_newidle_cost(&mut d, 25_600, 0, 0, S, true);
        // time_after(jiffies, stamp + HZ): exactly one second is not enough.
        assert!(!update_newidle_cost(&mut d, 0, 0, S, S, true));
        assert_eq!(d.max_newidle_lb_cost, 25_600);
        assert!(update_newidle_cost(&mut d, 0, 0, S + 1, S, true));
        assert_eq!(d.max_newidle_lb_cost, 25_300);
        assert_eq!(d.last_decay_max_lb_cost, S + 1);
        // The next decay waits another second from the new stamp.
        assert!(!update_newidle_cost(&mut d, 0, 0, 2 * S, S, true));
        assert!(update_newidle_cost(&mut d, 0, 0, 2 * S + 2, S, true));
        assert_eq!(d.max_newidle_lb_cost, 25_300 * 253 / 256);
        // Without newidle_lb_cost_decay the max only grows.
        let mut e = domain();
        update_newidle_cost(&mut e, 25_600, 0, 0, S, false);
        assert!(!update_newidle_cost(&mut e, 0, 0, 10 * S, S, false));
        assert_eq!(e.max_newidle_lb_cost, 25_600);
    }

    #[test]
    fn a_raised_max_postpones_the_decay() {
        // e60b56e46b38: a new maximum restarts the one-second wait, where
        // 3.13 decayed every second whatever happened.
        let mut d = domain();
        update_newidle_cost(&mut d, 1_000, 0, 0, S, true);
        update_newidle_cost(&mut d, 2_000, 0, S - 1, S, true);
        assert!(!update_newidle_cost(&mut d, 0, 0, S + 1, S, true));
        assert!(update_newidle_cost(&mut d, 0, 0, 2 * S, S, true));
        assert_eq!(d.max_newidle_lb_cost, 2_000 * 253 / 256);
    }

    #[test]
    fn newidle_stats_start_at_half_and_take_the_ratio_at_1024_calls() {
        let mut d = domain();
        assert_eq!(
            (d.newidle_call, d.newidle_success, d.newidle_ratio),
            (512, 256, 512)
        );
        // 511 failures: call 1023, success 256, ratio unchanged.
        for _ in 0..511 {
            update_newidle_stats(&mut d, 0);
        }
        assert_eq!(
            (d.newidle_call, d.newidle_success, d.newidle_ratio),
            (1023, 256, 512)
        );
        // The 1024th call: ratio = the window's successes, both halve.
        update_newidle_stats(&mut d, 0);
        assert_eq!(
            (d.newidle_call, d.newidle_success, d.newidle_ratio),
            (512, 128, 256)
        );
        // 512 calls that all succeed with weight 2: success 128 + 1024.
        for _ in 0..512 {
            update_newidle_stats(&mut d, 2);
        }
        assert_eq!(
            (d.newidle_call, d.newidle_success, d.newidle_ratio),
            (512, 576, 1152)
        );
    }

    #[test]
    fn cost_zero_calls_leave_the_stats_alone() {
        let mut d = domain();
        update_newidle_cost(&mut d, 0, 0, 10 * S, S, true);
        assert_eq!((d.newidle_call, d.newidle_success), (512, 256));
        update_newidle_cost(&mut d, 7, 3, 10 * S, S, true);
        assert_eq!((d.newidle_call, d.newidle_success), (513, 259));
    }

    #[test]
    fn ni_random_skips_above_the_ratio_and_weights_successes() {
        // ratio 512 (the initial 50 %): w = 513; d1k 0..=513 balance.
        assert_eq!(ni_random_weight(0, 512), Some(2));
        assert_eq!(ni_random_weight(513, 512), Some(2));
        assert_eq!(ni_random_weight(514, 512), None);
        assert_eq!(ni_random_weight(1023, 512), None);
        // ratio 0: w = 1, d1k 0 or 1 balance (2 in 1024), a success weighs 1024.
        assert_eq!(ni_random_weight(1, 0), Some(1024));
        assert_eq!(ni_random_weight(2, 0), None);
        // ratio 1023 or more: always balance, weight 1.
        assert_eq!(ni_random_weight(1023, 1023), Some(1));
        // (1024 + w/2) / w rounds: w = 3 -> 341.83 -> 341; w = 7 -> 146.29 -> 146.
        assert_eq!(ni_random_weight(0, 2), Some(341));
        assert_eq!(ni_random_weight(0, 6), Some(146));
    }

    #[test]
    fn a_domain_that_always_succeeds_climbs_back_to_full_ratio() {
        // Proportional sampling with success weighting: starting from a
        // ratio of 0, a domain whose every pass pulls reaches ~1024.
        let mut d = domain();
        d.newidle_call = 512;
        d.newidle_success = 0;
        d.newidle_ratio = 0;
        let mut rng = Rng::new(3);
        for _ in 0..20_000 {
            let d1k = (rng.next_u64() >> 32) as u32 % 1024;
            match ni_random_weight(d1k, d.newidle_ratio) {
                None => update_newidle_stats(&mut d, 0),
                Some(w) => update_newidle_stats(&mut d, w),
            }
        }
        assert!(d.newidle_ratio > 900, "{}", d.newidle_ratio);
    }

    #[test]
    fn sched_rng_streams_are_per_cpu_and_reproducible() {
        let mut a = sched_rng_streams(1, 4);
        let mut b = sched_rng_streams(1, 4);
        let xa: Vec<u64> = a.iter_mut().map(|r| r.next_u64()).collect();
        let xb: Vec<u64> = b.iter_mut().map(|r| r.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa[0], xa[1]);
        assert_ne!(xa[0], sched_rng_streams(2, 1)[0].next_u64());
        assert_ne!(xa[0], Rng::new(1).next_u64());
    }
}
