//! `find_busiest_group()` of 2.6.36–5.4, after `kernel/sched_fair.c`
//! (2.6.36) and `kernel/sched/fair.c` (3.8): `update_sd_lb_stats()`,
//! `update_sg_lb_stats()` (walked, or read from `sg_sums`),
//! `calculate_imbalance()`, `fix_small_imbalance()` and
//! `find_busiest_queue()`, on the weighted `cpu_load[]` that
//! `update_cpu_load()` decays; `source_load()`/`target_load()`, which
//! `wake_affine()` reads too. `find_busiest_group()` and
//! `find_busiest_queue()` hand over to `fbg_v55` at their top under
//! `Kernel::balancer = "group_type"`.
//!
//! The arithmetic is split from the statistics gathering:
//! [`fbg_decision`], [`calculate_imbalance`] and [`fix_small_imbalance`]
//! are pure functions of an [`SdStats`] (`struct sd_lb_stats`), unit-tested
//! on hand-built loads below. `task_h_load()` is the task's queued weight,
//! which under task groups is already its hierarchical one (`sched::group`
//! flattens the hierarchy).

use super::env::{IdleType, LbEnv};
use crate::kernel::{Balancer, Kernel};
use crate::sched::balance::domains::{sd, SCALE};
use crate::sched::Sched;

/// `CPU_LOAD_IDX_MAX` (2.6.36–3.x): the length of `rq->cpu_load[]`, the
/// decayed loads the 3.x balancer reads by `sd->*_idx`.
pub const CPU_LOAD_IDX_MAX: usize = 5;

/// `decay_load_missed()`: `load · ((2^idx − 1)/2^idx)^missed`, zero once
/// it would be (the kernel's table approximates the same power).
fn decay_load_missed(mut load: u64, missed: u64, idx: usize) -> u64 {
    if idx == 0 {
        return 0;
    }
    for _ in 0..missed.min(256) {
        load = (load * ((1 << idx) - 1)) >> idx;
        if load == 0 {
            break;
        }
    }
    load
}

/// Per-group statistics (`struct sg_lb_stats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct SgStats {
    avg_load: u64,
    group_load: u64,
    sum_nr_running: u64,
    sum_weighted_load: u64,
    group_capacity: u64,
    idle_cpus: u64,
    group_weight: u64,
    group_imb: bool,
    group_has_capacity: bool,
}

/// Domain statistics (`struct sd_lb_stats`, 2.6.36 and 3.8). As in the
/// kernel, `this_load_per_task` and `busiest_load_per_task` hold the
/// groups' summed weighted load until `calculate_imbalance()` /
/// `fix_small_imbalance()` divide them by the task count. `this_power` and
/// `busiest_power` are the kernel's `sds->this->sgp->power` and
/// `sds->busiest->sgp->power`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SdStats {
    pub busiest: Option<usize>,
    pub this: Option<usize>,
    pub total_load: u64,
    pub total_pwr: u64,
    pub avg_load: u64,
    pub this_load: u64,
    pub this_load_per_task: u64,
    pub this_nr_running: u64,
    pub this_has_capacity: bool,
    pub this_idle_cpus: u64,
    pub this_power: u64,
    pub max_load: u64,
    pub busiest_load_per_task: u64,
    pub busiest_nr_running: u64,
    pub busiest_group_capacity: u64,
    pub busiest_has_capacity: bool,
    pub busiest_group_weight: u64,
    pub busiest_idle_cpus: u64,
    pub busiest_power: u64,
    pub group_imb: bool,
}

fn div_round_closest(a: u64, b: u64) -> u64 {
    (a + b / 2) / b
}

/// The decision of `find_busiest_group()` (kernel/sched/fair.c 3.8; with
/// `force_balance_group_imb`, `newidle_force` and `idle_cpus_balanced` off,
/// 2.6.36's kernel/sched_fair.c) on the domain's statistics: `None` when
/// the domain is balanced, else the imbalance from `calculate_imbalance()`.
/// `imbalance_pct` is the domain's; `dst_load_per_task` is
/// `cpu_avg_load_per_task(dst_cpu)` (read by `fix_small_imbalance()` when
/// the local group runs nothing).
///
/// Simplifications: no ASYM_PACKING and no power-savings group (2.6.36
/// `check_power_save_busiest_group`); 2.6.37 computed the domain average
/// after the forced-balance jump (leaving it 0 on that path), it is computed
/// first here, as 3.8 does.
pub(crate) fn fbg_decision(
    sds: &SdStats,
    idle: IdleType,
    imbalance_pct: u64,
    k: &Kernel,
    dst_load_per_task: u64,
) -> Option<u64> {
    let mut sds = *sds;
    sds.busiest?;
    if sds.busiest_nr_running == 0 {
        return None;
    }
    sds.avg_load = SCALE * sds.total_load / sds.total_pwr.max(1);
    let force = (k.force_balance_group_imb && sds.group_imb)
        || (k.newidle_force
            && idle == IdleType::NewlyIdle
            && sds.this_has_capacity
            && !sds.busiest_has_capacity);
    if !force {
        if sds.this_load >= sds.max_load || sds.this_load >= sds.avg_load {
            return None;
        }
        if k.idle_cpus_balanced && idle == IdleType::Idle {
            if sds.this_idle_cpus <= sds.busiest_idle_cpus + 1
                && sds.busiest_nr_running <= sds.busiest_group_weight
            {
                return None;
            }
        } else if 100 * sds.max_load <= imbalance_pct * sds.this_load {
            return None;
        }
    }
    Some(calculate_imbalance(&sds, dst_load_per_task))
}

/// `calculate_imbalance()` (kernel/sched/fair.c 3.8, same arithmetic as
/// 2.6.36 kernel/sched_fair.c): the weighted load to move, given the domain
/// average `sds.avg_load` (set by `find_busiest_group()`). The busiest
/// group's load per task is capped at the domain average for `group_imb`;
/// the pull is limited to the load above the busiest group's capacity
/// (unless `group_imb`) and to what brings the local group up to the
/// average. Below one task's worth, `fix_small_imbalance()` decides.
pub(crate) fn calculate_imbalance(sds: &SdStats, dst_load_per_task: u64) -> u64 {
    let mut sds = *sds;
    let (this_power, busiest_power) = (sds.this_power, sds.busiest_power);
    sds.busiest_load_per_task /= sds.busiest_nr_running.max(1);
    if sds.group_imb {
        sds.busiest_load_per_task = sds.busiest_load_per_task.min(sds.avg_load);
    }
    if sds.max_load < sds.avg_load {
        return fix_small_imbalance(&sds, dst_load_per_task);
    }
    let load_above_capacity =
        if !sds.group_imb && sds.busiest_nr_running > sds.busiest_group_capacity {
            (sds.busiest_nr_running - sds.busiest_group_capacity) * SCALE * SCALE / busiest_power
        } else {
            u64::MAX
        };
    let max_pull = (sds.max_load - sds.avg_load).min(load_above_capacity);
    let imbalance = (max_pull.saturating_mul(busiest_power))
        .min(sds.avg_load.saturating_sub(sds.this_load) * this_power)
        / SCALE;
    if imbalance < sds.busiest_load_per_task {
        return fix_small_imbalance(&sds, dst_load_per_task);
    }
    imbalance
}

/// `fix_small_imbalance()` (kernel/sched/fair.c 3.8, 2.6.36 alike), with
/// `sds.busiest_load_per_task` already per task: move one task (return
/// its load) when the gap is at least one task's worth (two when the local
/// group's tasks are no lighter, or it runs none), or when moving it raises
/// the estimated throughput Σ power·min(load per task, load); else 0.
pub(crate) fn fix_small_imbalance(sds: &SdStats, dst_load_per_task: u64) -> u64 {
    let (this_power, busiest_power) = (sds.this_power, sds.busiest_power);
    let this_lpt = sds
        .this_load_per_task
        .checked_div(sds.this_nr_running)
        .unwrap_or(dst_load_per_task);
    let blpt = sds.busiest_load_per_task;
    // imbn drops to 1 only when the local group runs tasks lighter than
    // the busiest's; an empty local group needs a whole task's worth.
    let imbn = if sds.this_nr_running > 0 && blpt > this_lpt {
        1
    } else {
        2
    };
    let scaled_busy_lpt = blpt * SCALE / busiest_power;
    if sds.max_load.saturating_sub(sds.this_load) + scaled_busy_lpt >= scaled_busy_lpt * imbn {
        return blpt;
    }
    let mut pwr_now = busiest_power * blpt.min(sds.max_load);
    pwr_now += this_power * this_lpt.min(sds.this_load);
    pwr_now /= SCALE;
    let mut pwr_move = 0;
    let tmp = blpt * SCALE / busiest_power;
    if sds.max_load > tmp {
        pwr_move += busiest_power * blpt.min(sds.max_load - tmp);
    }
    let tmp = if sds.max_load * busiest_power < blpt * SCALE {
        sds.max_load * busiest_power / this_power
    } else {
        blpt * SCALE / this_power
    };
    pwr_move += this_power * this_lpt.min(sds.this_load + tmp);
    pwr_move /= SCALE;
    if pwr_move > pwr_now {
        blpt
    } else {
        0
    }
}

/// The tail of `update_sg_lb_stats()` (kernel/sched/fair.c 3.8, 2.6.36
/// alike), whether the sums were walked or read: `avg_load`, the capacity
/// (with `fix_small_capacity()`), the weight and `group_has_capacity`.
fn sg_capacity(s: &mut SgStats, power: u64, ncpus: u64, share_cpupower: bool) {
    s.avg_load = s.group_load * SCALE / power;
    s.group_capacity = div_round_closest(power, SCALE);
    if s.group_capacity == 0 && share_cpupower {
        // fix_small_capacity(): an SMT sibling still near full power.
        s.group_capacity = 1;
    }
    s.group_weight = ncpus;
    s.group_has_capacity = s.group_capacity > s.sum_nr_running;
}

impl Sched<'_> {
    pub(crate) fn weighted_cpuload(&self, cpu: usize) -> u64 {
        self.rqs[cpu].cfs.load
    }

    /// `source_load(cpu, idx)`: the low guess (LB_BIAS on).
    pub(crate) fn source_load(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload(cpu);
        if idx == 0 {
            total
        } else {
            self.rqs[cpu].bal.cpu_load[idx - 1].min(total)
        }
    }

    /// `target_load(cpu, idx)`: the high guess.
    pub(crate) fn target_load(&self, cpu: usize, idx: usize) -> u64 {
        let total = self.weighted_cpuload(cpu);
        if idx == 0 {
            total
        } else {
            self.rqs[cpu].bal.cpu_load[idx - 1].max(total)
        }
    }

    /// `cpu_avg_load_per_task()`.
    pub(crate) fn cpu_avg_load_per_task(&self, cpu: usize) -> u64 {
        let nr = self.rqs[cpu].cfs.nr_running as u64;
        self.rqs[cpu].cfs.load.checked_div(nr).unwrap_or(0)
    }

    /// `update_cpu_load()` (2.6.36 with `decay_load_missed`): fold the
    /// current load into `cpu_load[1..]`, decaying for ticks missed while
    /// the CPU's tick was stopped.
    pub(crate) fn update_cpu_load(&mut self, cpu: usize) {
        let j = self.jiffies();
        let this_load = self.weighted_cpuload(cpu);
        let b = &mut self.rqs[cpu].bal;
        let pending = j.saturating_sub(b.last_load_update_tick).max(1);
        b.last_load_update_tick = j;
        b.cpu_load[0] = this_load;
        for i in 1..CPU_LOAD_IDX_MAX {
            let scale = 1u64 << i;
            let old = decay_load_missed(b.cpu_load[i], pending - 1, i);
            let mut new = this_load;
            if new > old {
                new += scale - 1;
            }
            b.cpu_load[i] = (old * (scale - 1) + new) >> i;
        }
    }

    fn load_idx(&self, cpu: usize, lvl: usize, idle: IdleType) -> usize {
        let d = &self.sd[cpu][lvl];
        match idle {
            IdleType::NotIdle => d.busy_idx,
            IdleType::NewlyIdle => d.newidle_idx,
            IdleType::Idle => d.idle_idx,
        }
    }

    /// `group_imb` of `update_sg_lb_stats()` from the spread of a
    /// non-local group's load and `nr_running`: 2.6.36, or
    /// `group_imb_nr_running` (see `Kernel::FIELDS`).
    fn group_imb_test(&self, load_spread: u64, nr_spread: u64, avg_load_per_task: u64) -> bool {
        if self.kernel.group_imb_nr_running {
            load_spread >= avg_load_per_task && nr_spread > 1
        } else {
            load_spread > 2 * avg_load_per_task
        }
    }

    /// `group_imb` of non-local group `g` when its statistics came from the
    /// running sums (`sched::balance::sg_sums`), which hold no spread. Under
    /// `group_imb_nr_running` the group's counts often decide it: no CPU with
    /// two tasks, no `nr_running` spread above 1 (false); one, and an empty
    /// CPU (load 0, while the busiest CPU's load is at least the group's
    /// load per task), true. Otherwise a walk of the group's CPUs, stopping
    /// as soon as the spread seen makes the test true (it only grows).
    /// Asked only for a group that may become the busiest; no cost is
    /// charged (`update_sg_lb_stats()` charged the walk).
    fn sg_group_imb(&self, env: &LbEnv, g: usize, load_idx: usize, s: &SgStats) -> bool {
        if s.sum_nr_running == 0 {
            return false;
        }
        let avg_load_per_task = s.sum_weighted_load / s.sum_nr_running;
        let group = &self.sd[env.dst_cpu][env.sd].groups[g];
        let counts = match &self.balance.sg_sums {
            Some(sums) if load_idx == 0 && self.kernel.group_imb_nr_running => {
                sums.group(env.dst_cpu, env.sd, g)
            }
            _ => None,
        };
        let decided = counts.and_then(|c| {
            if c.overloaded_cpus == 0 {
                Some(false)
            } else {
                (c.empty_cpus > 0).then_some(true)
            }
        });
        let (mut max_load, mut min_load) = (0u64, u64::MAX);
        let (mut max_nr, mut min_nr) = (0u64, u64::MAX);
        let mut imb = decided.unwrap_or(false);
        let walk: &[u32] = if decided.is_some() { &[] } else { &group.cpus };
        for &c in walk {
            let c = c as usize;
            let l = self.source_load(c, load_idx);
            let nr = self.rqs[c].cfs.nr_running as u64;
            max_load = max_load.max(l);
            min_load = min_load.min(l);
            max_nr = max_nr.max(nr);
            min_nr = min_nr.min(nr);
            if self.group_imb_test(max_load - min_load, max_nr - min_nr, avg_load_per_task) {
                imb = true;
                break;
            }
        }
        #[cfg(debug_assertions)]
        {
            let want = self.update_sg_lb_stats_walk(&mut env.clone(), g, false, load_idx);
            assert_eq!(
                Some(imb),
                want.map(|w| w.group_imb),
                "lazy group_imb of group {g}"
            );
        }
        imb
    }

    /// `update_sg_lb_stats()` (kernel/sched/fair.c 3.8; 2.6.36 the same
    /// but for `group_imb_nr_running`): the statistics, and whether
    /// `group_imb` is set (false: not computed, see below); `None` when
    /// `dst_cpu` is not the local group's balance CPU for a periodic/idle
    /// pass (`*balance = 0`).
    ///
    /// Model speed-up: at load index 0 (`source_load()` = `target_load()` =
    /// `weighted_cpuload()`) the sums come from `sched::balance::sg_sums` instead of
    /// [`Self::update_sg_lb_stats_walk`]'s walk over the group's CPUs,
    /// except for the local group of a periodic/idle pass (which needs its
    /// balance CPU); a non-local group's `group_imb` is then left to
    /// [`Self::sg_group_imb`], asked only for a busiest candidate. The
    /// modelled cost is the walk's either way.
    fn update_sg_lb_stats(
        &self,
        env: &mut LbEnv,
        g: usize,
        local: bool,
        load_idx: usize,
    ) -> Option<(SgStats, bool)> {
        let needs_balance_cpu = local && env.idle != IdleType::NewlyIdle;
        let sum = match &self.balance.sg_sums {
            Some(sums) if load_idx == 0 && !needs_balance_cpu => sums.group(env.dst_cpu, env.sd, g),
            _ => None,
        };
        let Some(sum) = sum else {
            return self
                .update_sg_lb_stats_walk(env, g, local, load_idx)
                .map(|s| (s, true));
        };
        let d = &self.sd[env.dst_cpu][env.sd];
        let group = &d.groups[g];
        let ncpus = group.cpus.len() as u64;
        env.cost += self.cost.lb_per_group_ns + self.cost.lb_per_cpu_ns * ncpus;
        let mut s = SgStats {
            group_load: sum.load,
            sum_nr_running: sum.nr_running,
            sum_weighted_load: sum.load,
            idle_cpus: sum.idle_cpus,
            ..SgStats::default()
        };
        sg_capacity(&mut s, group.power, ncpus, d.has(sd::SHARE_CPUPOWER));
        #[cfg(debug_assertions)]
        {
            let mut want = self
                .update_sg_lb_stats_walk(&mut env.clone(), g, local, load_idx)
                .expect("a newidle pass or a non-local group");
            want.group_imb = false;
            assert_eq!(s, want, "group {g} of cpu {} level {}", env.dst_cpu, env.sd);
        }
        Some((s, local))
    }

    /// `update_sg_lb_stats()` as the kernel does it, walking the group's
    /// CPUs (kernel/sched/fair.c 3.8; 2.6.36 the same
    /// but for `group_imb_nr_running`). Returns `None` when `dst_cpu` is
    /// not the local group's balance CPU for a periodic/idle pass
    /// (`*balance = 0`). Simplification: no `update_group_power()` (group
    /// power is fixed).
    fn update_sg_lb_stats_walk(
        &self,
        env: &mut LbEnv,
        g: usize,
        local: bool,
        load_idx: usize,
    ) -> Option<SgStats> {
        let this_cpu = env.dst_cpu;
        let d = &self.sd[this_cpu][env.sd];
        let group = &d.groups[g];
        let mut s = SgStats::default();
        let (mut max_load, mut min_load) = (0u64, u64::MAX);
        let (mut max_nr, mut min_nr) = (0u64, u64::MAX);
        let mut balance_cpu = group.cpus[0] as usize;
        let mut first_idle = true;
        for &c in &group.cpus {
            let c = c as usize;
            let nr = self.rqs[c].cfs.nr_running as u64;
            let load = if local {
                if first_idle && self.idle_cpu(c) {
                    first_idle = false;
                    balance_cpu = c;
                }
                self.target_load(c, load_idx)
            } else {
                let l = self.source_load(c, load_idx);
                max_load = max_load.max(l);
                min_load = min_load.min(l);
                max_nr = max_nr.max(nr);
                min_nr = min_nr.min(nr);
                l
            };
            s.group_load += load;
            s.sum_nr_running += nr;
            s.sum_weighted_load += self.weighted_cpuload(c);
            if self.idle_cpu(c) {
                s.idle_cpus += 1;
            }
        }
        let ncpus = group.cpus.len() as u64;
        let power = group.power;
        let share_cpupower = d.has(sd::SHARE_CPUPOWER);
        env.cost += self.cost.lb_per_group_ns + self.cost.lb_per_cpu_ns * ncpus;
        if local && env.idle != IdleType::NewlyIdle && balance_cpu != this_cpu {
            return None;
        }
        let avg_load_per_task = s
            .sum_weighted_load
            .checked_div(s.sum_nr_running)
            .unwrap_or(0);
        if !local && max_nr > 0 {
            s.group_imb =
                self.group_imb_test(max_load - min_load, max_nr - min_nr, avg_load_per_task);
        }
        sg_capacity(&mut s, power, ncpus, share_cpupower);
        Some(s)
    }

    /// `update_sd_lb_stats()` (kernel/sched/fair.c 3.8, with
    /// `update_sd_pick_busiest()`; 2.6.36 alike): walk the domain's groups
    /// from the local one. `None` when this CPU must not balance here.
    /// Simplification: no ASYM_PACKING, no power-savings statistics.
    fn update_sd_lb_stats(&self, env: &mut LbEnv) -> Option<SdStats> {
        let (this_cpu, lvl) = (env.dst_cpu, env.sd);
        let load_idx = self.load_idx(this_cpu, lvl, env.idle);
        let prefer_sibling = lvl > 0 && self.sd[this_cpu][lvl - 1].has(sd::PREFER_SIBLING);
        let ngroups = self.sd[this_cpu][lvl].groups.len();
        let local_g = self.sd[this_cpu][lvl].local_group;
        let mut sds = SdStats::default();
        // The busiest group's `group_imb` is still to be computed.
        let mut busiest_imb_pending = false;
        // The kernel walks the circular group list from the local group.
        for k in 0..ngroups {
            let g = (local_g + k) % ngroups;
            let local = g == local_g;
            let (mut s, mut imb_known) = self.update_sg_lb_stats(env, g, local, load_idx)?;
            let power = self.sd[this_cpu][lvl].groups[g].power;
            sds.total_load += s.group_load;
            sds.total_pwr += power;
            // `prefer_sibling_local_capacity` (`Kernel::FIELDS`): only
            // while the local group still has capacity.
            let cap_one = prefer_sibling
                && !local
                && (!self.kernel.prefer_sibling_local_capacity || sds.this_has_capacity);
            if cap_one {
                s.group_capacity = s.group_capacity.min(1);
            }
            if local {
                sds.this = Some(g);
                sds.this_load = s.avg_load;
                sds.this_nr_running = s.sum_nr_running;
                sds.this_load_per_task = s.sum_weighted_load;
                sds.this_has_capacity = s.group_has_capacity;
                sds.this_idle_cpus = s.idle_cpus;
                sds.this_power = power;
            } else if s.avg_load > sds.max_load {
                let over = s.sum_nr_running > s.group_capacity;
                if !over && !imb_known {
                    s.group_imb = self.sg_group_imb(env, g, load_idx, &s);
                    imb_known = true;
                }
                if !(over || s.group_imb) {
                    continue;
                }
                // update_sd_pick_busiest()
                sds.max_load = s.avg_load;
                sds.busiest = Some(g);
                sds.busiest_nr_running = s.sum_nr_running;
                sds.busiest_idle_cpus = s.idle_cpus;
                sds.busiest_group_capacity = s.group_capacity;
                sds.busiest_load_per_task = s.sum_weighted_load;
                sds.busiest_has_capacity = s.group_has_capacity;
                sds.busiest_group_weight = s.group_weight;
                sds.busiest_power = power;
                sds.group_imb = s.group_imb;
                busiest_imb_pending = !imb_known;
            }
        }
        if let Some(g) = sds.busiest.filter(|_| busiest_imb_pending) {
            let s = SgStats {
                sum_nr_running: sds.busiest_nr_running,
                sum_weighted_load: sds.busiest_load_per_task,
                ..SgStats::default()
            };
            sds.group_imb = self.sg_group_imb(env, g, load_idx, &s);
        }
        Some(sds)
    }

    /// `find_busiest_group()` (kernel/sched/fair.c 3.8; 2.6.36
    /// kernel/sched_fair.c with the 3.x switches off): the statistics from
    /// `update_sd_lb_stats()`, the decision and imbalance from
    /// [`fbg_decision`]. `Err(())` when this CPU may not balance this level
    /// (`*balance = 0`); `Ok(None)` when balanced; else the busiest group,
    /// with `env.imbalance` set.
    #[allow(clippy::result_unit_err)]
    pub(super) fn find_busiest_group(&mut self, env: &mut LbEnv) -> Result<Option<usize>, ()> {
        if self.kernel.balancer == Balancer::GroupType {
            return self.lb_find_busiest_group(env);
        }
        let Some(sds) = self.update_sd_lb_stats(env) else {
            return Err(());
        };
        let imb_pct = self.sd[env.dst_cpu][env.sd].imbalance_pct;
        let dst_lpt = self.cpu_avg_load_per_task(env.dst_cpu);
        match fbg_decision(&sds, env.idle, imb_pct, self.kernel, dst_lpt) {
            None => Ok(None),
            Some(imbalance) => {
                env.imbalance = imbalance;
                Ok(sds.busiest)
            }
        }
    }

    /// `find_busiest_queue()` (kernel/sched/fair.c 3.8, 2.6.36 alike): the
    /// CPU of group `g` with the highest power-scaled load, skipping a lone
    /// task heavier than the imbalance and the CPUs out of `env->cpus`.
    pub(super) fn find_busiest_queue(&mut self, env: &LbEnv, g: usize) -> Option<usize> {
        if self.kernel.balancer == Balancer::GroupType {
            let busiest = self.lb_find_busiest_queue(env, g);
            if busiest.is_none() {
                self.lb_out_balanced(env);
            }
            return busiest;
        }
        let mut max_load = 0;
        let mut busiest = None;
        for &c in &self.sd[env.dst_cpu][env.sd].groups[g].cpus {
            let c = c as usize;
            if env.excluded.contains(&c) {
                continue;
            }
            let power = self.balance.cpu_power[c];
            let capacity = div_round_closest(power, SCALE).max(1);
            let wl = self.weighted_cpuload(c);
            if capacity > 0 && self.rqs[c].cfs.nr_running == 1 && wl > env.imbalance {
                continue;
            }
            let wl = wl * SCALE / power;
            if wl > max_load {
                max_load = wl;
                busiest = Some(c);
            }
        }
        busiest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_load_missed_halves_at_idx_1() {
        assert_eq!(decay_load_missed(1024, 1, 1), 512);
        assert_eq!(decay_load_missed(1024, 3, 2), 432);
        assert_eq!(decay_load_missed(1024, 100, 1), 0);
    }

    // ---- find_busiest_group / calculate_imbalance / fix_small_imbalance ----
    //
    // Hand-built `sd_lb_stats` of a domain with a local and a busiest group,
    // checked against the arithmetic of find_busiest_group(),
    // calculate_imbalance() and fix_small_imbalance() in
    // kernel/sched/fair.c, v3.8, and kernel/sched_fair.c, v2.6.36 (the
    // model's version: docs/balancer.md). SCALE = SCHED_POWER_SCALE = 1024;
    // a nice-0 task weighs 1024. Integer division throughout, as in the
    // kernel.

    /// A group as `update_sg_lb_stats()` would sum it.
    #[derive(Clone, Copy)]
    struct G {
        power: u64,
        load: u64,
        nr: u64,
        capacity: u64,
        weight: u64,
        idle_cpus: u64,
    }

    fn g(power: u64, load: u64, nr: u64, capacity: u64) -> G {
        G {
            power,
            load,
            nr,
            capacity,
            weight: power / SCALE,
            idle_cpus: 0,
        }
    }

    /// The `sd_lb_stats` of a domain of two groups, `this` and `busiest`.
    fn stats(this: G, busiest: G) -> SdStats {
        SdStats {
            busiest: Some(1),
            this: Some(0),
            total_load: this.load + busiest.load,
            total_pwr: this.power + busiest.power,
            avg_load: 0,
            this_load: this.load * SCALE / this.power,
            this_load_per_task: this.load,
            this_nr_running: this.nr,
            this_has_capacity: this.capacity > this.nr,
            this_idle_cpus: this.idle_cpus,
            this_power: this.power,
            max_load: busiest.load * SCALE / busiest.power,
            busiest_load_per_task: busiest.load,
            busiest_nr_running: busiest.nr,
            busiest_group_capacity: busiest.capacity,
            busiest_has_capacity: busiest.capacity > busiest.nr,
            busiest_group_weight: busiest.weight,
            busiest_idle_cpus: busiest.idle_cpus,
            busiest_power: busiest.power,
            group_imb: false,
        }
    }

    /// With the domain average `find_busiest_group()` sets before
    /// `calculate_imbalance()`.
    fn with_avg(mut s: SdStats) -> SdStats {
        s.avg_load = SCALE * s.total_load / s.total_pwr;
        s
    }

    /// 3.8's three find_busiest_group switches, each on or off.
    fn kernel(newidle_force: bool, group_imb: bool, idle_cpus: bool) -> Kernel {
        let mut k = Kernel::v3_8();
        k.newidle_force = newidle_force;
        k.force_balance_group_imb = group_imb;
        k.idle_cpus_balanced = idle_cpus;
        k
    }

    #[test]
    fn plain_imbalance_pulls_down_to_the_domain_average() {
        // Two single-CPU groups of power 1024: busiest runs 4 nice-0 tasks
        // (load 4096), local 1 (1024).
        // avg_load = 1024·5120/2048 = 2560; max_load = 4096; this_load = 1024
        // busiest_load_per_task = 4096/4 = 1024
        // load_above_capacity = (4−1)·1024·1024/1024 = 3072
        // max_pull = min(4096−2560, 3072) = 1536
        // imbalance = min(1536·1024, (2560−1024)·1024)/1024 = 1536 ≥ 1024.
        let s = stats(g(1024, 1024, 1, 1), g(1024, 4096, 4, 1));
        assert_eq!(calculate_imbalance(&with_avg(s), 0), 1536);
        // find_busiest_group, CPU_NOT_IDLE, imbalance_pct 125:
        // 100·4096 = 409600 > 125·1024 = 128000, so not balanced.
        let k = kernel(true, true, true);
        assert_eq!(
            fbg_decision(&s, IdleType::NotIdle, 125, &k, 1024),
            Some(1536)
        );
    }

    #[test]
    fn load_above_capacity_limits_max_pull() {
        // Two 2-CPU groups (power 2048, capacity 2): busiest runs 3 nice-0
        // tasks (3072), local nothing.
        // avg_load = 1024·3072/4096 = 768; max_load = 3072·1024/2048 = 1536
        // load_above_capacity = (3−2)·1024·1024/2048 = 512
        // max_pull = min(1536−768 = 768, 512) = 512
        // imbalance = min(512·2048, (768−0)·2048)/1024 = 1024
        // (= busiest_load_per_task 3072/3, so no fix_small_imbalance).
        let s = stats(g(2048, 0, 0, 2), g(2048, 3072, 3, 2));
        assert_eq!(calculate_imbalance(&with_avg(s), 0), 1024);
        // Had the busiest group capacity for all three (capacity 3), no
        // limit: max_pull = 768, imbalance = 768·2048/1024 = 1536.
        let s = stats(g(2048, 0, 0, 2), g(2048, 3072, 3, 3));
        assert_eq!(calculate_imbalance(&with_avg(s), 0), 1536);
    }

    #[test]
    fn group_imb_caps_the_busiest_load_per_task_at_the_domain_average() {
        // Two 2-CPU groups (power 2048). Busiest: two nice −10 tasks
        // (9548 each) pinned to one of its CPUs (group_imb), load 19096;
        // local: two nice-0 tasks, 2048.
        // max_load = 19096·1024/2048 = 9548; this_load = 2048·1024/2048 = 1024
        // avg_load = 1024·21144/4096 = 5286
        // busiest_load_per_task = 19096/2 = 9548, capped: min(9548, 5286) = 5286
        // load_above_capacity: not computed for group_imb (ULONG_MAX)
        // max_pull = 9548 − 5286 = 4262
        // imbalance = min(4262·2048, (5286−1024)·2048)/1024 = 8524 ≥ 5286.
        let mut s = stats(g(2048, 2048, 2, 2), g(2048, 19096, 2, 2));
        s.group_imb = true;
        assert_eq!(calculate_imbalance(&with_avg(s), 0), 8524);
        // Without group_imb the per-task load stays 9548 > 8524, so
        // fix_small_imbalance runs: this_load_per_task = 2048/2 = 1024 <
        // 9548 → imbn = 1; scaled_busy_load_per_task = 9548·1024/2048 =
        // 4774; 9548 − 1024 + 4774 ≥ 4774 → imbalance = 9548 (one task).
        s.group_imb = false;
        assert_eq!(calculate_imbalance(&with_avg(s), 0), 9548);
    }

    #[test]
    fn fix_small_imbalance_moves_one_task_when_the_gap_is_two_tasks_worth() {
        // Two single-CPU groups: busiest runs 2 nice-0 tasks (2048), local 1.
        // avg_load = 1024·3072/2048 = 1536; busiest_load_per_task = 1024
        // load_above_capacity = (2−1)·1024 = 1024; max_pull = min(512, 1024)
        // imbalance = min(512·1024, (1536−1024)·1024)/1024 = 512 < 1024
        // → fix_small_imbalance: this_load_per_task = 1024, not lighter than
        // the busiest's → imbn = 2; scaled_busy_load_per_task = 1024;
        // 2048 − 1024 + 1024 = 2048 ≥ 1024·2 → imbalance = 1024.
        let s = stats(g(1024, 1024, 1, 1), g(1024, 2048, 2, 1));
        assert_eq!(calculate_imbalance(&with_avg(s), 0), 1024);
        // Called directly with per-task loads, as calculate_imbalance does.
        let mut s = with_avg(s);
        s.busiest_load_per_task = 1024;
        assert_eq!(fix_small_imbalance(&s, 0), 1024);
    }

    #[test]
    fn fix_small_imbalance_moves_one_task_when_throughput_rises() {
        // Two 2-CPU groups (power 2048, capacity 2): busiest runs 3 nice-0
        // tasks (3072), local one nice −4 task (2501), one CPU idle.
        // max_load = 3072·1024/2048 = 1536; this_load = 2501·1024/2048 = 1250
        // avg_load = 1024·5573/4096 = 1393; busiest_load_per_task = 1024
        // load_above_capacity = (3−2)·1024·1024/2048 = 512
        // max_pull = min(1536−1393 = 143, 512) = 143
        // imbalance = min(143·2048, (1393−1250)·2048)/1024 = 286 < 1024
        // → fix_small_imbalance: this_load_per_task = 2501 → imbn = 2;
        // scaled_busy_load_per_task = 1024·1024/2048 = 512;
        // 1536 − 1250 + 512 = 798 < 1024: the gap alone does not pay.
        // pwr_now  = (2048·min(1024, 1536) + 2048·min(2501, 1250))/1024 = 4548
        // pwr_move = (2048·min(1024, 1536−512) + 2048·min(2501, 1250+512))/1024
        //          = (2097152 + 3608576)/1024 = 5572 > 4548 → imbalance = 1024.
        let s = stats(g(2048, 2501, 1, 2), g(2048, 3072, 3, 2));
        assert_eq!(calculate_imbalance(&with_avg(s), 0), 1024);
    }

    #[test]
    fn fix_small_imbalance_does_not_move_a_task_that_gains_nothing() {
        // Two single-CPU groups: busiest runs 2 nice-0 tasks (2048), local
        // one nice −3 task (1991).
        // avg_load = 1024·4039/2048 = 2019; busiest_load_per_task = 1024
        // max_pull = min(2048−2019 = 29, 1024) = 29
        // imbalance = min(29·1024, (2019−1991)·1024)/1024 = 28 < 1024
        // → fix_small_imbalance: this_load_per_task 1991 → imbn = 2;
        // 2048 − 1991 + 1024 = 1081 < 2048;
        // pwr_now  = (1024·min(1024, 2048) + 1024·min(1991, 1991))/1024 = 3015
        // pwr_move = (1024·min(1024, 2048−1024) + 1024·min(1991, 1991+1024))/1024
        //          = 3015, not more → imbalance = 0.
        let s = stats(g(1024, 1991, 1, 1), g(1024, 2048, 2, 1));
        assert_eq!(calculate_imbalance(&with_avg(s), 0), 0);
        // find_busiest_group never gets there: 100·2048 = 204800 ≤
        // 125·1991 = 248875 is balanced.
        let k = kernel(true, true, true);
        assert_eq!(fbg_decision(&s, IdleType::NotIdle, 125, &k, 1991), None);
    }

    #[test]
    fn imbalance_pct_is_a_non_strict_bound() {
        // Two single-CPU groups. Local: 2 tasks of 512 (this_load 1024);
        // busiest: 2 tasks, load 1280 = 1.25 × 1024.
        // 100·1280 = 128000 ≤ 125·1024 = 128000 → balanced (2.6.36 and 3.8).
        let k38 = kernel(true, true, true);
        let k36 = kernel(false, false, false);
        let s = stats(g(1024, 1024, 2, 1), g(1024, 1280, 2, 1));
        assert_eq!(fbg_decision(&s, IdleType::NotIdle, 125, &k38, 512), None);
        assert_eq!(fbg_decision(&s, IdleType::NotIdle, 125, &k36, 512), None);
        // One more unit of load: 128100 > 128000.
        // avg_load = 1024·2305/2048 = 1152; busiest_load_per_task = 1281/2 = 640
        // max_pull = min(1281−1152 = 129, (2−1)·1024) = 129
        // imbalance = min(129·1024, (1152−1024)·1024)/1024 = 128 < 640
        // → fix_small_imbalance: 640 > this_load_per_task 1024/2 = 512 →
        // imbn = 1; 1281 − 1024 + 640 ≥ 640 → imbalance = 640.
        let s = stats(g(1024, 1024, 2, 1), g(1024, 1281, 2, 1));
        assert_eq!(
            fbg_decision(&s, IdleType::NotIdle, 125, &k38, 512),
            Some(640)
        );
        assert_eq!(
            fbg_decision(&s, IdleType::NotIdle, 125, &k36, 512),
            Some(640)
        );
        // 2.6.36 applies the same test to CPU_IDLE.
        assert_eq!(fbg_decision(&s, IdleType::Idle, 125, &k36, 512), Some(640));
    }

    #[test]
    fn newidle_force_pulls_next_to_a_heavy_local_task() {
        // fab476228's case: two 2-CPU groups (power 2048, capacity 2). Local
        // runs one nice −15 task (29154), one CPU idle: has capacity. Busiest
        // runs 3 nice-0 tasks (3072): no capacity.
        // this_load = 29154·1024/2048 = 14577 ≥ max_load = 1536 → balanced,
        // unless forced (NEWLY_IDLE, newidle_force).
        // Forced: avg_load = 1024·32226/4096 = 8056; max_load < avg_load →
        // fix_small_imbalance: busiest_load_per_task = 1024, this 29154 →
        // imbn = 2; scaled_busy_load_per_task = 512; 0 + 512 < 1024;
        // pwr_now  = (2048·min(1024, 1536) + 2048·min(29154, 14577))/1024 = 31202
        // pwr_move = (2048·min(1024, 1536−512) + 2048·min(29154, 14577+512))/1024
        //          = 32226 > 31202 → imbalance = 1024.
        let s = stats(g(2048, 29154, 1, 2), g(2048, 3072, 3, 2));
        let forced = kernel(true, false, false);
        let not = kernel(false, false, false);
        assert_eq!(
            fbg_decision(&s, IdleType::NewlyIdle, 125, &forced, 29154),
            Some(1024)
        );
        assert_eq!(
            fbg_decision(&s, IdleType::NewlyIdle, 125, &not, 29154),
            None
        );
        assert_eq!(
            fbg_decision(&s, IdleType::NotIdle, 125, &forced, 29154),
            None
        );
        // No force when the busiest group still has capacity (capacity 4).
        let s = stats(g(2048, 29154, 1, 2), g(2048, 3072, 3, 4));
        assert_eq!(
            fbg_decision(&s, IdleType::NewlyIdle, 125, &forced, 29154),
            None
        );
    }

    #[test]
    fn idle_cpus_balanced_judges_cpu_idle_by_idle_cpus() {
        // Two 2-CPU groups (power 2048). Local: one nice-0 task, 1 idle CPU.
        // Busiest: two nice-0 tasks, capacity capped at 1 (prefer_sibling),
        // no idle CPU. this_load = 512, max_load = 1024, avg_load = 768.
        // CPU_IDLE under idle_cpus_balanced: this_idle_cpus 1 ≤ 0 + 1 and
        // busiest_nr_running 2 ≤ group_weight 2 → balanced.
        let mut this = g(2048, 1024, 1, 2);
        this.idle_cpus = 1;
        let s = stats(this, g(2048, 2048, 2, 1));
        let k38 = kernel(true, true, true);
        let k36 = kernel(false, false, false);
        assert_eq!(fbg_decision(&s, IdleType::Idle, 125, &k38, 1024), None);
        // Else the imbalance_pct test (100·1024 > 125·512) lets it through:
        // load_above_capacity = (2−1)·1024·1024/2048 = 512;
        // max_pull = min(1024−768, 512) = 256;
        // imbalance = min(256·2048, (768−512)·2048)/1024 = 512 < 1024 →
        // fix_small_imbalance: imbn = 2, scaled = 512, 512 + 512 ≥ 1024 → 1024.
        assert_eq!(
            fbg_decision(&s, IdleType::NotIdle, 125, &k38, 1024),
            Some(1024)
        );
        assert_eq!(
            fbg_decision(&s, IdleType::Idle, 125, &k36, 1024),
            Some(1024)
        );
        // The throughput case above (3 tasks on 2 CPUs vs one nice −4 task):
        // 3 > group_weight 2, so 3.8's CPU_IDLE pulls; 2.6.36 finds
        // 100·1536 = 153600 ≤ 125·1250 = 156250 and calls it balanced.
        let mut this = g(2048, 2501, 1, 2);
        this.idle_cpus = 1;
        let s = stats(this, g(2048, 3072, 3, 2));
        assert_eq!(
            fbg_decision(&s, IdleType::Idle, 125, &k38, 2501),
            Some(1024)
        );
        assert_eq!(fbg_decision(&s, IdleType::Idle, 125, &k36, 2501), None);
        assert_eq!(fbg_decision(&s, IdleType::NotIdle, 125, &k38, 2501), None);
    }

    #[test]
    fn force_balance_group_imb_skips_the_load_tests() {
        // A local group above the domain average next to a pinned
        // (group_imb) busiest group. Local (power 2048) runs 4
        // nice-0 tasks (4096): this_load 2048. Busiest (power 2048) runs
        // 3 nice-0 tasks on one CPU (3072, group_imb): max_load 1536.
        // avg_load = 1024·7168/4096 = 1792 ≤ this_load → balanced, unless
        // 3.8 forces on group_imb. Forced: max_load < avg_load →
        // fix_small_imbalance with busiest_load_per_task =
        // min(3072/3, 1792) = 1024; this_load_per_task = 4096/4 = 1024 →
        // imbn = 2; scaled = 512; 0 + 512 < 1024;
        // pwr_now  = (2048·min(1024, 1536) + 2048·min(1024, 2048))/1024 = 4096
        // pwr_move = (2048·min(1024, 1536−512) + 2048·min(1024, 2048+512))/1024
        //          = 4096, not more → imbalance = 0.
        let mut s = stats(g(2048, 4096, 4, 2), g(2048, 3072, 3, 2));
        s.group_imb = true;
        let k38 = kernel(true, true, true);
        let k36 = kernel(false, false, false);
        assert_eq!(
            fbg_decision(&s, IdleType::NotIdle, 125, &k38, 1024),
            Some(0)
        );
        assert_eq!(fbg_decision(&s, IdleType::NotIdle, 125, &k36, 1024), None);
    }

    #[test]
    fn find_busiest_group_without_a_busy_group_is_balanced() {
        let k = kernel(true, true, true);
        // No group over capacity: no busiest.
        let mut s = stats(g(1024, 0, 0, 1), g(1024, 4096, 4, 1));
        s.busiest = None;
        assert_eq!(fbg_decision(&s, IdleType::NewlyIdle, 125, &k, 0), None);
        // A busiest group running nothing (group_imb on stale cpu_load).
        let mut s = stats(g(1024, 0, 0, 1), g(1024, 4096, 0, 1));
        s.group_imb = true;
        assert_eq!(fbg_decision(&s, IdleType::NewlyIdle, 125, &k, 0), None);
    }
}
