//! The 5.5+ load balancer (`Kernel::balancer = "group_type"`): Vincent
//! Guittot's rework of `find_busiest_group()` (0b0695f2b34a "sched/fair:
//! Rework load_balance()", v5.5) with its follow-ups as kernel/sched/fair.c
//! has them in 6.6-6.18 (`sched_balance_find_src_group()` /
//! `sched_balance_find_src_rq()` from 6.10 on): groups are classified by
//! [`GroupType`] from PELT load, util and runnable sums, and the busiest
//! group, the imbalance and the task walk follow a [`MigrationType`].
//!
//! The domain-level arithmetic is pure and unit-tested below on hand-built
//! groups: [`group_classify`], [`update_sd_pick_busiest`],
//! [`calculate_imbalance`], [`fbg_decision`] (the decision matrix of
//! `find_busiest_group()`). The `Sched` methods gather the statistics and
//! move tasks; `sched::balance` dispatches to them at the top of its
//! `find_busiest_group`, `find_busiest_queue`, `move_tasks` and
//! `need_active_balance`, and `load_balance()`'s outer loop (redo on
//! all-pinned, failure counting, active balance, intervals) is shared.
//!
//! Simplifications, each where it is made: CPU capacity is
//! SCHED_CAPACITY_SCALE per CPU (6.x x86, SMT threads included; no RT/IRQ
//! pressure, so `check_cpu_capacity()` is never true and no reduced-capacity
//! misfit arises); no SD_ASYM_CPUCAPACITY or SD_ASYM_PACKING on any model
//! machine (misfit and asym groups are classified but never built from a
//! run); no util_est (`task_util_est()` is the task's util_avg); no
//! CONFIG_NUMA_BALANCING (`fbq_type` is `all`); no energy-aware path, no
//! root-domain overload/overutilized indicators; the domain parameters
//! (`imbalance_pct`, flags) are the model's 2.6.36-3.13 ones until 6.x's
//! `sd_init()` is modelled (docs/balancer.md).

use crate::sched::balance::domains::sd;
use crate::sched::balance::env::{IdleType, LbEnv, MigrationType, LBF_ALL_PINNED, LBF_SOME_PINNED};
use crate::sched::pelt::SCHED_CAPACITY_SCALE;
use crate::sched::task::TaskId;
use crate::sched::Sched;

/// `enum group_type` (kernel/sched/fair.c 6.6-6.18), in the kernel's
/// order: a larger value is busier and wins `update_sd_pick_busiest()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum GroupType {
    /// The group has spare capacity that can be used to run more tasks.
    #[default]
    HasSpare = 0,
    /// The group is fully used and the tasks don't compete for more CPU
    /// cycles.
    FullyBusy,
    /// A CPU of the group runs a task too big for its capacity.
    MisfitTask,
    /// 6.6 (fee1759e4f04): an SMT group with more than one task, which an
    /// idle CPU should relieve.
    SmtBalance,
    /// SD_ASYM_PACKING: the destination CPU is preferred.
    AsymPacking,
    /// Affinity defeated balancing at the level below (`sgc->imbalance`).
    Imbalanced,
    /// More tasks than CPUs and the CPUs are saturated.
    Overloaded,
}

/// `struct sg_lb_stats` (6.6-6.18), without the NUMA-balancing counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SgLbStats {
    /// Average load across the group's CPUs, capacity-scaled; computed
    /// only for overloaded groups (and for the local group in
    /// `calculate_imbalance()`).
    pub avg_load: u64,
    /// Σ `cpu_load()` (PELT `load_avg` of the CFS runqueue).
    pub group_load: u64,
    pub group_capacity: u64,
    /// Σ `cpu_util_cfs()`.
    pub group_util: u64,
    /// Σ `cpu_runnable()`.
    pub group_runnable: u64,
    pub sum_nr_running: u64,
    pub sum_h_nr_running: u64,
    pub idle_cpus: u64,
    pub group_weight: u64,
    pub group_type: GroupType,
    pub group_asym_packing: bool,
    pub group_smt_balance: bool,
    pub group_misfit_task_load: u64,
}

/// The `struct sched_group` facts the pure functions read: `sg->flags &
/// SD_SHARE_CPUCAPACITY` (the group is an SMT core: its child domain shares
/// CPU capacity), `sg->cores` (6.6) and `sg->sgc->imbalance`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupFacts {
    pub smt: bool,
    pub cores: u64,
    pub imbalance: bool,
}

/// The `lb_env`/`sched_domain` facts the pure functions read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LbCtx {
    pub idle: IdleType,
    pub imbalance_pct: u64,
    /// SD_SHARE_LLC (SD_SHARE_PKG_RESOURCES before 6.10).
    pub share_llc: bool,
    /// SD_NUMA (the model's NODE/NUMA level).
    pub numa: bool,
    /// `sd->imb_numa_nr` (5.18, e496132ebedd).
    pub imb_numa_nr: u64,
    /// SD_ASYM_CPUCAPACITY (never set on a model machine).
    pub asym_cpucapacity: bool,
}

/// `struct sd_lb_stats` (6.6-6.18) with the groups' facts beside them.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SdLbStats {
    pub busiest: Option<usize>,
    pub local: usize,
    pub total_load: u64,
    pub total_capacity: u64,
    pub avg_load: u64,
    pub prefer_sibling: bool,
    pub busiest_stat: SgLbStats,
    pub local_stat: SgLbStats,
    pub busiest_group: GroupFacts,
    pub local_group: GroupFacts,
}

impl SdLbStats {
    /// `init_sd_lb_stats()`: the busiest slot starts as the least busy
    /// possible group (has_spare with every CPU idle).
    pub fn new() -> Self {
        SdLbStats {
            busiest_stat: SgLbStats {
                idle_cpus: u64::MAX,
                group_type: GroupType::HasSpare,
                ..SgLbStats::default()
            },
            ..SdLbStats::default()
        }
    }
}

/// `group_has_capacity()` (6.x, with 5.7's runnable test 070f5e860ee2):
/// fewer tasks than CPUs, or not too much runnable pressure and util below
/// capacity by the `imbalance_pct` margin.
pub(crate) fn group_has_capacity(imbalance_pct: u64, sgs: &SgLbStats) -> bool {
    if sgs.sum_nr_running < sgs.group_weight {
        return true;
    }
    if sgs.group_capacity * imbalance_pct < sgs.group_runnable * 100 {
        return false;
    }
    sgs.group_capacity * 100 > sgs.group_util * imbalance_pct
}

/// `group_is_overloaded()` (6.x): more tasks than CPUs, and util or
/// runnable above capacity by the `imbalance_pct` margin.
pub(crate) fn group_is_overloaded(imbalance_pct: u64, sgs: &SgLbStats) -> bool {
    if sgs.sum_nr_running <= sgs.group_weight {
        return false;
    }
    if sgs.group_capacity * 100 < sgs.group_util * imbalance_pct {
        return true;
    }
    sgs.group_capacity * imbalance_pct < sgs.group_runnable * 100
}

/// `group_classify()` (kernel/sched/fair.c 6.6-6.18): overloaded, then
/// imbalanced (`sg_imbalanced()`), asym packing, SMT balance, misfit, fully
/// busy (`!group_has_capacity()`), else has spare.
pub(crate) fn group_classify(imbalance_pct: u64, imbalanced: bool, sgs: &SgLbStats) -> GroupType {
    if group_is_overloaded(imbalance_pct, sgs) {
        GroupType::Overloaded
    } else if imbalanced {
        GroupType::Imbalanced
    } else if sgs.group_asym_packing {
        GroupType::AsymPacking
    } else if sgs.group_smt_balance {
        GroupType::SmtBalance
    } else if sgs.group_misfit_task_load > 0 {
        GroupType::MisfitTask
    } else if !group_has_capacity(imbalance_pct, sgs) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// `smt_balance()` (6.6): an idle destination should relieve an SMT group
/// running more than one task.
pub(crate) fn smt_balance(idle: IdleType, smt_group: bool, sgs: &SgLbStats) -> bool {
    idle != IdleType::NotIdle && smt_group && sgs.sum_h_nr_running > 1
}

/// `smt_vs_nonsmt_groups()` (6.6): one group is SMT and the other not.
fn smt_vs_nonsmt_groups(a: Option<GroupFacts>, b: Option<GroupFacts>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.smt != b.smt,
        _ => false,
    }
}

/// `update_sd_pick_busiest()` (kernel/sched/fair.c 6.6-6.18): whether
/// candidate `sgs` (a non-local group with facts `sg`) is busier than the
/// busiest so far. Simplifications: the asym-packing tie-break
/// (`sched_asym_prefer()`) keeps the first group; the misfit and
/// asym-capacity capacity tests compare the model's equal capacities and
/// so never refuse.
pub(crate) fn update_sd_pick_busiest(
    ctx: &LbCtx,
    sds: &SdLbStats,
    sg: GroupFacts,
    sgs: &SgLbStats,
) -> bool {
    let busiest = &sds.busiest_stat;
    // Make sure that there is at least one task to pull.
    if sgs.sum_h_nr_running == 0 {
        return false;
    }
    // Don't try to pull misfit tasks we can't help (capacity_greater() of
    // equal capacities is false).
    if ctx.asym_cpucapacity
        && sgs.group_type == GroupType::MisfitTask
        && sds.local_stat.group_type != GroupType::HasSpare
    {
        return false;
    }
    if sgs.group_type > busiest.group_type {
        return true;
    }
    if sgs.group_type < busiest.group_type {
        return false;
    }
    let has_spare = |sgs: &SgLbStats| {
        // Lowest number of idle CPUs, then highest number of tasks.
        !(sgs.idle_cpus > busiest.idle_cpus
            || (sgs.idle_cpus == busiest.idle_cpus && sgs.sum_nr_running <= busiest.sum_nr_running))
    };
    let fully_busy = |sgs: &SgLbStats| {
        if sgs.avg_load < busiest.avg_load {
            return false;
        }
        // SMT groups need more help than non-SMT groups.
        !(sgs.avg_load == busiest.avg_load && sds.busiest_group.smt)
    };
    let pick = match sgs.group_type {
        GroupType::Overloaded => sgs.avg_load > busiest.avg_load,
        GroupType::Imbalanced => false,
        GroupType::AsymPacking => false,
        GroupType::MisfitTask => sgs.group_misfit_task_load >= busiest.group_misfit_task_load,
        GroupType::SmtBalance => {
            if sgs.idle_cpus != 0 || busiest.idle_cpus != 0 {
                has_spare(sgs)
            } else {
                fully_busy(sgs)
            }
        }
        GroupType::FullyBusy => fully_busy(sgs),
        GroupType::HasSpare => {
            let busiest_g = sds.busiest.map(|_| sds.busiest_group);
            if smt_vs_nonsmt_groups(busiest_g, Some(sg)) {
                // Don't pull a lone task off an SMT core, leaving it idle.
                !(sg.smt && sgs.sum_h_nr_running <= 1)
            } else {
                has_spare(sgs)
            }
        }
    };
    // The SD_ASYM_CPUCAPACITY refusal of a group with higher per-CPU
    // capacity cannot arise with equal capacities.
    pick
}

/// `sibling_imbalance()` (6.6, 7ff1693236f5): the task imbalance that
/// evens nr_running per core between the local and busiest groups.
pub(crate) fn sibling_imbalance(ctx: &LbCtx, sds: &SdLbStats) -> u64 {
    let (busiest, local) = (&sds.busiest_stat, &sds.local_stat);
    if ctx.idle == IdleType::NotIdle || busiest.sum_nr_running == 0 {
        return 0;
    }
    let ncores_busiest = sds.busiest_group.cores.max(1);
    let ncores_local = sds.local_group.cores.max(1);
    if ncores_busiest == ncores_local {
        return busiest.sum_nr_running.saturating_sub(local.sum_nr_running);
    }
    // Balance such that nr_running/ncores is the same on both groups, with
    // rounding on the normalisation.
    let imb = (ncores_local * busiest.sum_nr_running)
        .saturating_sub(ncores_busiest * local.sum_nr_running);
    let mut imb = (2 * imb + ncores_local + ncores_busiest) / (ncores_local + ncores_busiest);
    // Take advantage of resource in an empty sched group.
    if imb <= 1 && local.sum_nr_running == 0 && busiest.sum_nr_running > 1 {
        imb = 2;
    }
    imb
}

/// `NUMA_IMBALANCE_MIN` (5.18+).
pub(crate) const NUMA_IMBALANCE_MIN: u64 = 2;

/// `allow_numa_imbalance()` (5.18+): the destination runs few enough tasks.
pub(crate) fn allow_numa_imbalance(running: u64, imb_numa_nr: u64) -> bool {
    running <= imb_numa_nr
}

/// `adjust_numa_imbalance()` (5.18-6.18): while the destination node is
/// lightly loaded, ignore an imbalance of up to a communicating pair.
pub(crate) fn adjust_numa_imbalance(imbalance: u64, dst_running: u64, imb_numa_nr: u64) -> u64 {
    if !allow_numa_imbalance(dst_running, imb_numa_nr) {
        return imbalance;
    }
    if imbalance <= NUMA_IMBALANCE_MIN {
        0
    } else {
        imbalance
    }
}

/// `calculate_imbalance()` (kernel/sched/fair.c 6.6-6.18): the migration
/// type and the amount to move. Misfit: one task (or the misfit load
/// without asym capacity); asym packing: all the busiest group's tasks;
/// SMT balance and imbalanced: one task. A local group with spare capacity
/// fills its spare util from an overloaded group outside the LLC
/// (`migrate_util`, one task if none fits and this CPU is idle), else
/// evens tasks (`prefer_sibling` or single-CPU groups:
/// [`sibling_imbalance`]) or idle CPUs, NUMA allowing a small imbalance,
/// halved. Otherwise both groups are or will be overloaded:
/// `migrate_load` of min((busiest − domain) · busiest capacity, (domain −
/// local) · local capacity) / SCALE on capacity-scaled `avg_load`s, or
/// nothing when local is at or above the busiest or the domain average.
/// Updates `sds.avg_load` and `sds.local_stat.avg_load` as the kernel does.
pub(crate) fn calculate_imbalance(ctx: &LbCtx, sds: &mut SdLbStats) -> (MigrationType, u64) {
    let busiest = sds.busiest_stat;
    match busiest.group_type {
        GroupType::MisfitTask => {
            return if ctx.asym_cpucapacity {
                (MigrationType::Misfit, 1)
            } else {
                (MigrationType::Load, busiest.group_misfit_task_load)
            };
        }
        GroupType::AsymPacking => return (MigrationType::Task, busiest.sum_h_nr_running),
        GroupType::SmtBalance | GroupType::Imbalanced => return (MigrationType::Task, 1),
        _ => {}
    }
    let local = sds.local_stat;
    if local.group_type == GroupType::HasSpare {
        if busiest.group_type > GroupType::FullyBusy && !ctx.share_llc {
            // Fill the local group's spare capacity.
            let imb = local.group_capacity.max(local.group_util) - local.group_util;
            if ctx.idle != IdleType::NotIdle && imb == 0 {
                return (MigrationType::Task, 1);
            }
            return (MigrationType::Util, imb);
        }
        let mut imb = if busiest.group_weight == 1 || sds.prefer_sibling {
            sibling_imbalance(ctx, sds)
        } else {
            local.idle_cpus.saturating_sub(busiest.idle_cpus)
        };
        if ctx.numa {
            imb = adjust_numa_imbalance(imb, local.sum_nr_running + 1, ctx.imb_numa_nr);
        }
        // Number of tasks to move to restore balance.
        return (MigrationType::Task, imb >> 1);
    }
    if local.group_type < GroupType::Overloaded {
        // Local will become overloaded: the avg_load metrics are needed.
        sds.local_stat.avg_load =
            local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity.max(1);
        if sds.local_stat.avg_load >= busiest.avg_load {
            return (MigrationType::Load, 0);
        }
        sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
        if sds.local_stat.avg_load >= sds.avg_load {
            return (MigrationType::Load, 0);
        }
    }
    let local_avg = sds.local_stat.avg_load;
    let imb = (busiest.avg_load.saturating_sub(sds.avg_load) * busiest.group_capacity)
        .min(sds.avg_load.saturating_sub(local_avg) * local.group_capacity)
        / SCHED_CAPACITY_SCALE;
    (MigrationType::Load, imb)
}

/// The decision of `find_busiest_group()` (kernel/sched/fair.c 6.6-6.18,
/// `sched_balance_find_src_group()` from 6.10) on the domain's statistics,
/// the kernel's decision matrix: `None` when balanced, else the migration
/// type and a non-zero imbalance from [`calculate_imbalance`].
/// Simplification: no energy-aware early exit (no perf domains).
pub(crate) fn fbg_decision(ctx: &LbCtx, sds: &mut SdLbStats) -> Option<(MigrationType, u64)> {
    sds.busiest?;
    let busiest = sds.busiest_stat;
    let local = sds.local_stat;
    let force = matches!(
        busiest.group_type,
        GroupType::MisfitTask | GroupType::AsymPacking | GroupType::Imbalanced
    );
    if !force {
        // The local group is busier than the busiest: don't pull.
        if local.group_type > busiest.group_type {
            return None;
        }
        let mut forced = false;
        if local.group_type == GroupType::Overloaded {
            if local.avg_load >= busiest.avg_load {
                return None;
            }
            sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity.max(1);
            if local.avg_load >= sds.avg_load {
                return None;
            }
            if 100 * busiest.avg_load <= ctx.imbalance_pct * local.avg_load {
                return None;
            }
        }
        // Try to move all excess tasks to a sibling domain.
        if sds.prefer_sibling
            && local.group_type == GroupType::HasSpare
            && sibling_imbalance(ctx, sds) > 1
        {
            forced = true;
        }
        if !forced && busiest.group_type != GroupType::Overloaded {
            if ctx.idle == IdleType::NotIdle {
                // Let an idle CPU pull instead.
                return None;
            }
            let smt_pull = busiest.group_type == GroupType::SmtBalance
                && smt_vs_nonsmt_groups(Some(sds.local_group), Some(sds.busiest_group));
            if !smt_pull {
                if busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1 {
                    return None;
                }
                if busiest.sum_h_nr_running == 1 {
                    return None;
                }
            }
        }
    }
    let (mt, imb) = calculate_imbalance(ctx, sds);
    (imb > 0).then_some((mt, imb))
}

/// `shr_bound(val, shift)` (kernel/sched/sched.h): `val >> shift` with the
/// shift capped below the word size.
pub(crate) fn shr_bound(val: u64, shift: u32) -> u64 {
    val >> shift.min(63)
}

/// `struct sched_group_capacity::imbalance` of every group, keyed by level
/// and the group's first CPU (the kernel shares one `sgc` among the CPUs
/// of the group, as this key does).
#[derive(Clone, Debug, Default)]
pub struct LbGroupState {
    imbalance: std::collections::HashMap<(usize, u32), bool>,
}

impl Sched<'_> {
    /// `capacity_of(cpu)` under the 5.5+ balancer: SCHED_CAPACITY_SCALE
    /// (6.x x86 gives SMT threads full capacity; no RT/IRQ pressure).
    fn lb_capacity_of(&self, _cpu: usize) -> u64 {
        SCHED_CAPACITY_SCALE
    }

    fn lb_ctx(&self, env: &LbEnv) -> LbCtx {
        let d = &self.sd[env.dst_cpu][env.sd];
        LbCtx {
            idle: env.idle,
            imbalance_pct: d.imbalance_pct,
            share_llc: d.has(sd::SHARE_PKG_RESOURCES),
            numa: is_numa(d.name),
            imb_numa_nr: self.imb_numa_nr(env.dst_cpu, env.sd),
            asym_cpucapacity: false,
        }
    }

    /// `sd->imb_numa_nr` (`build_sched_domains()`, 5.18 e496132ebedd): on
    /// the first level above the LLC, the number of LLCs it spans (an
    /// eighth of its span for a single LLC), at least 1; above it, that
    /// times the level's span over the first NUMA level's span.
    fn imb_numa_nr(&self, cpu: usize, lvl: usize) -> u64 {
        let doms = &self.sd[cpu];
        let (mut imb, mut imb_span, mut out) = (0u64, 1u64, 0u64);
        for l in 0..=lvl {
            let d = &doms[l];
            let span = d.span.len() as u64;
            let child_llc = l > 0 && doms[l - 1].has(sd::SHARE_PKG_RESOURCES);
            if !d.has(sd::SHARE_PKG_RESOURCES) && child_llc {
                let nr_llcs = span / doms[l - 1].span.len() as u64;
                imb = if nr_llcs == 1 { span >> 3 } else { nr_llcs }.max(1);
                out = imb;
                imb_span = doms[l..]
                    .iter()
                    .find(|p| is_numa(p.name))
                    .map_or(span, |p| p.span.len() as u64);
            } else {
                out = imb * (span / imb_span).max(1);
            }
        }
        out
    }

    /// The facts of group `g` of `cpu`'s domain at `lvl`: SMT when its
    /// child level shares CPU capacity (`sg->flags`, 6.0+), its cores
    /// (`sg->cores`, 6.6) and its `sgc->imbalance`.
    fn lb_group_facts(&self, cpu: usize, lvl: usize, g: usize) -> GroupFacts {
        let group = &self.sd[cpu][lvl].groups[g];
        let first = group.cpus[0];
        let smt = lvl > 0
            && group.cpus.len() > 1
            && self.sd[first as usize][lvl - 1].has(sd::SHARE_CPUPOWER);
        GroupFacts {
            smt,
            cores: group.cores as u64,
            imbalance: self
                .balance
                .lb
                .imbalance
                .get(&(lvl, first))
                .copied()
                .unwrap_or(false),
        }
    }

    /// `cfs_rq->avg` of `cpu` as last updated (brought to now by
    /// [`Sched::lb_find_busiest_group`] for the domain's CPUs).
    fn lb_cfs_avg(&self, cpu: usize) -> (u64, u64, u64) {
        self.pelt.as_ref().map_or((0, 0, 0), |p| {
            let a = &p.cfs[cpu];
            (
                a.load_avg,
                a.util_avg.min(SCHED_CAPACITY_SCALE),
                a.runnable_avg,
            )
        })
    }

    /// `should_we_balance()` (kernel/sched/fair.c 6.6-6.18): any CPU may
    /// balance newly idle when its runqueue is still empty; otherwise the
    /// first idle CPU of the local group on an idle core (at a level above
    /// SMT), else the first idle SMT thread of a busy core, else the
    /// group's first CPU. Simplification: no `ttwu_pending`.
    fn lb_should_we_balance(&self, env: &LbEnv) -> bool {
        if env.idle == IdleType::NewlyIdle {
            return self.rqs[env.dst_cpu].cfs.nr_running == 0;
        }
        let d = &self.sd[env.dst_cpu][env.sd];
        let group = &d.groups[d.local_group];
        let smt_level = d.has(sd::SHARE_CPUPOWER);
        let mut idle_smt = None;
        let mut skip_core: Vec<u32> = Vec::new();
        for &c in &group.cpus {
            let c = c as usize;
            let core = self.machine.cpu(c).core;
            if skip_core.contains(&core) || env.excluded.contains(&c) || !self.idle_cpu(c) {
                continue;
            }
            if !smt_level && !self.lb_is_core_idle(c) {
                idle_smt.get_or_insert(c);
                skip_core.push(core);
                continue;
            }
            return c == env.dst_cpu;
        }
        if let Some(c) = idle_smt {
            return c == env.dst_cpu;
        }
        group.cpus[0] as usize == env.dst_cpu
    }

    /// `is_core_idle(cpu)`: every SMT sibling is idle.
    fn lb_is_core_idle(&self, cpu: usize) -> bool {
        let core = self.machine.cpu(cpu).core;
        let tpc = self.machine.threads_per_core as usize;
        let first = cpu - cpu % tpc.max(1);
        (first..(first + tpc).min(self.rqs.len()))
            .filter(|&c| self.machine.cpu(c).core == core)
            .all(|c| c == cpu || self.idle_cpu(c))
    }

    /// `update_sg_lb_stats()` (kernel/sched/fair.c 6.6-6.18) for group `g`
    /// of the pass's domain, over its CPUs still in `env->cpus`.
    /// Simplification: no misfit load (no asym capacity, no reduced
    /// capacity), no asym packing; the overload/overutilized status is not
    /// kept.
    fn lb_update_sg_lb_stats(
        &self,
        env: &mut LbEnv,
        ctx: &LbCtx,
        g: usize,
        local: bool,
    ) -> (SgLbStats, GroupFacts) {
        let d = &self.sd[env.dst_cpu][env.sd];
        let group = &d.groups[g];
        let facts = self.lb_group_facts(env.dst_cpu, env.sd, g);
        let mut sgs = SgLbStats::default();
        for &c in &group.cpus {
            let c = c as usize;
            if env.excluded.contains(&c) {
                continue;
            }
            let (load, util, runnable) = self.lb_cfs_avg(c);
            sgs.group_load += load;
            sgs.group_util += util;
            sgs.group_runnable += runnable;
            let nr = self.rqs[c].cfs.nr_running as u64;
            sgs.sum_h_nr_running += nr;
            sgs.sum_nr_running += nr;
            if nr == 0 && self.idle_cpu(c) {
                sgs.idle_cpus += 1;
            }
        }
        let ncpus = group.cpus.len() as u64;
        env.cost += self.cost.lb_per_group_ns + self.cost.lb_per_cpu_ns * ncpus;
        sgs.group_capacity = group
            .cpus
            .iter()
            .map(|&c| self.lb_capacity_of(c as usize))
            .sum();
        sgs.group_weight = ncpus;
        if !local && smt_balance(ctx.idle, facts.smt, &sgs) {
            sgs.group_smt_balance = true;
        }
        sgs.group_type = group_classify(ctx.imbalance_pct, facts.imbalance, &sgs);
        if sgs.group_type == GroupType::Overloaded {
            sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity.max(1);
        }
        (sgs, facts)
    }

    /// `update_sd_lb_stats()` (kernel/sched/fair.c 6.6-6.18): every group
    /// from the local one, the busiest by [`update_sd_pick_busiest`], the
    /// domain totals, `prefer_sibling` from the child domain.
    /// Simplification: no `update_group_capacity()` (capacities are fixed),
    /// no root-domain indicators, no `fbq_type`.
    fn lb_update_sd_lb_stats(&self, env: &mut LbEnv, ctx: &LbCtx) -> SdLbStats {
        let (cpu, lvl) = (env.dst_cpu, env.sd);
        let ngroups = self.sd[cpu][lvl].groups.len();
        let local_g = self.sd[cpu][lvl].local_group;
        let mut sds = SdLbStats::new();
        sds.local = local_g;
        for k in 0..ngroups {
            let g = (local_g + k) % ngroups;
            let local = g == local_g;
            let (sgs, facts) = self.lb_update_sg_lb_stats(env, ctx, g, local);
            if local {
                sds.local_stat = sgs;
                sds.local_group = facts;
            } else if update_sd_pick_busiest(ctx, &sds, facts, &sgs) {
                sds.busiest = Some(g);
                sds.busiest_stat = sgs;
                sds.busiest_group = facts;
            }
            sds.total_load += sgs.group_load;
            sds.total_capacity += sgs.group_capacity;
        }
        sds.prefer_sibling = lvl > 0 && self.sd[cpu][lvl - 1].has(sd::PREFER_SIBLING);
        sds
    }

    /// The parent domain's local group imbalance flag of `env`'s pass
    /// (`sd_parent->groups->sgc->imbalance`), if there is a parent.
    fn lb_parent_key(&self, env: &LbEnv) -> Option<(usize, u32)> {
        let doms = &self.sd[env.dst_cpu];
        let p = doms.get(env.sd + 1)?;
        Some((env.sd + 1, p.groups[p.local_group].cpus[0]))
    }

    /// `load_balance()`'s `out_balanced`: a balanced pass clears the parent
    /// group's imbalance flag unless every task was pinned.
    pub(crate) fn lb_out_balanced(&mut self, env: &LbEnv) {
        if env.flags & LBF_ALL_PINNED != 0 {
            return;
        }
        if let Some(key) = self.lb_parent_key(env) {
            self.balance.lb.imbalance.remove(&key);
        }
    }

    /// `find_busiest_group()` (kernel/sched/fair.c 6.6-6.18) with
    /// `load_balance()`'s `should_we_balance()` first: `Err(())` when this
    /// CPU must not balance here, `Ok(None)` when balanced (clearing the
    /// parent group's imbalance flag), else the busiest group with
    /// `env.imbalance` and `env.migration_type` set. The domain's CPUs'
    /// PELT sums are brought to now first (`update_blocked_averages()`).
    pub(crate) fn lb_find_busiest_group(&mut self, env: &mut LbEnv) -> Result<Option<usize>, ()> {
        if !self.lb_should_we_balance(env) {
            return Err(());
        }
        let span = self.sd[env.dst_cpu][env.sd].span.clone();
        for &c in span.iter() {
            self.pelt_update_cfs(c as usize);
        }
        let ctx = self.lb_ctx(env);
        let mut sds = self.lb_update_sd_lb_stats(env, &ctx);
        match fbg_decision(&ctx, &mut sds) {
            None => {
                env.imbalance = 0;
                self.lb_out_balanced(env);
                Ok(None)
            }
            Some((mt, imb)) => {
                env.migration_type = mt;
                env.imbalance = imb;
                Ok(sds.busiest)
            }
        }
    }

    /// `find_busiest_queue()` (kernel/sched/fair.c 6.6-6.18,
    /// `sched_balance_find_src_rq()` from 6.10): the CPU of group `g` with
    /// the most capacity-scaled load (skipping a lone task heavier than the
    /// imbalance), the most util (skipping single-task runqueues) or the
    /// most tasks, by migration type. Simplification: no misfit runqueue
    /// (no misfit load), no asym checks.
    pub(crate) fn lb_find_busiest_queue(&self, env: &LbEnv, g: usize) -> Option<usize> {
        let (mut busiest, mut busiest_load, mut busiest_cap) = (None, 0u64, 1u64);
        let (mut busiest_util, mut busiest_nr) = (0u64, 0u64);
        for &c in &self.sd[env.dst_cpu][env.sd].groups[g].cpus {
            let c = c as usize;
            if env.excluded.contains(&c) {
                continue;
            }
            let nr = self.rqs[c].cfs.nr_running as u64;
            if nr == 0 {
                continue;
            }
            let capacity = self.lb_capacity_of(c);
            let (load, util, _) = self.lb_cfs_avg(c);
            match env.migration_type {
                MigrationType::Load => {
                    // check_cpu_capacity() is false: no capacity pressure.
                    if nr == 1 && load > env.imbalance {
                        continue;
                    }
                    if load * busiest_cap > busiest_load * capacity {
                        busiest_load = load;
                        busiest_cap = capacity;
                        busiest = Some(c);
                    }
                }
                MigrationType::Util => {
                    if nr <= 1 {
                        continue;
                    }
                    if busiest_util < util {
                        busiest_util = util;
                        busiest = Some(c);
                    }
                }
                MigrationType::Task => {
                    if busiest_nr < nr {
                        busiest_nr = nr;
                        busiest = Some(c);
                    }
                }
                MigrationType::Misfit => {}
            }
        }
        busiest
    }

    /// `detach_tasks()` + `attach_tasks()` (kernel/sched/fair.c 6.6-6.18):
    /// walk `src`'s `cfs_tasks` from the tail (least recently enqueued),
    /// stop before emptying src on an idle pass, after `loop_max` tasks
    /// unless none was movable yet, or once the imbalance is met; a task
    /// moves if `can_migrate_task()` allows it and, for migrate_load, its
    /// `task_h_load()` shifted right by `nr_balance_failed` fits the
    /// imbalance (likewise its util for migrate_util); skipped tasks go to
    /// the head. Then `load_balance()`'s LBF_SOME_PINNED step sets the
    /// parent group's imbalance flag when imbalance remains. Returns the
    /// tasks moved. Simplifications: no LBF_NEED_BREAK (a pass is
    /// instantaneous) — the walk stops once every task was tried; no
    /// LBF_DST_PINNED retry on another CPU of the group; LB_MIN is off (the
    /// 6.x default); `preemption` (CONFIG_PREEMPTION) stops a NEWLY_IDLE
    /// pass after its first task.
    pub(crate) fn lb_detach_tasks(&mut self, env: &mut LbEnv) -> u64 {
        let src = env.src_cpu;
        let nr_migrate = self.kernel.nr_migrate as usize;
        let nr0 = self.rqs[src].cfs.nr_running as usize;
        env.loop_max = nr_migrate.min(nr0);
        env.loop_ = 0;
        let mut moved = 0;
        if env.imbalance > 0 {
            while let Some(p) = self.group_nodes.front(&self.rqs[src].bal.cfs_tasks) {
                if env.idle != IdleType::NotIdle && self.rqs[src].cfs.nr_running <= 1 {
                    break;
                }
                env.loop_ += 1;
                if env.loop_ > env.loop_max && env.flags & LBF_ALL_PINNED == 0 {
                    break;
                }
                if env.loop_ > nr0.max(env.loop_max) {
                    break;
                }
                env.cost += self.cost.lb_per_task_ns;
                if !self.allowed(p, env.dst_cpu) {
                    env.flags |= LBF_SOME_PINNED;
                }
                let (ok, hot) = self.can_migrate_task(p, env);
                let fits = ok && self.lb_task_fits(p, env);
                if !fits {
                    // list_move() to the head: the model keeps the head last.
                    let list = &mut self.rqs[src].bal.cfs_tasks;
                    self.group_nodes.move_to_back(list, p);
                    continue;
                }
                if hot {
                    self.rqs[env.dst_cpu].bal.stats[env.sd].lb_hot_gained[env.idle as usize] += 1;
                }
                let from = (!env.in_schedule).then_some(env.dst_cpu);
                self.move_task(p, env, from);
                moved += 1;
                // #ifdef CONFIG_PREEMPTION: a NEWLY_IDLE pass stops after
                // the first task detached.
                if self.kernel.preemption && env.idle == IdleType::NewlyIdle {
                    break;
                }
                if env.imbalance == 0 {
                    break;
                }
            }
        }
        if env.flags & LBF_SOME_PINNED != 0 && env.imbalance > 0 {
            if let Some(key) = self.lb_parent_key(env) {
                self.balance.lb.imbalance.insert(key, true);
            }
        }
        moved
    }

    /// `detach_tasks()`'s per-type test for movable task `p`, taking its
    /// share off `env.imbalance` when it fits.
    fn lb_task_fits(&self, p: TaskId, env: &mut LbEnv) -> bool {
        let failed = self.sd[env.dst_cpu][env.sd].nr_balance_failed;
        let amount = match env.migration_type {
            // task_h_load() without task groups, at least 1.
            MigrationType::Load => self.pelt_task_load(p).max(1),
            // task_util_est() without util_est.
            MigrationType::Util => self.lb_task_util(p),
            MigrationType::Task => {
                env.imbalance -= 1;
                return true;
            }
            // No task is misfit on equal capacities.
            MigrationType::Misfit => return false,
        };
        if shr_bound(amount, failed) > env.imbalance {
            return false;
        }
        env.imbalance = env.imbalance.saturating_sub(amount);
        true
    }

    fn lb_task_util(&self, p: TaskId) -> u64 {
        self.pelt
            .as_ref()
            .and_then(|s| s.se.get(p as usize))
            .map_or(0, |s| s.util_avg)
    }

    /// `need_active_balance()` (kernel/sched/fair.c 6.6-6.18, with 5.11's
    /// e9b9734b7465): `imbalanced_active_balance()` — a migrate_task pass
    /// that failed more than `cache_nice_tries` + 2 times — or a misfit
    /// migration; an overloaded group (migrate_load/util) has a waiting
    /// task and never needs the stopper. Simplification: no asym packing,
    /// no reduced-capacity case (`check_cpu_capacity()` is false).
    pub(crate) fn lb_need_active_balance(&self, env: &LbEnv) -> bool {
        if env.idle == IdleType::NewlyIdle && !self.kernel.newidle_active_balance {
            return false;
        }
        let d = &self.sd[env.dst_cpu][env.sd];
        match env.migration_type {
            MigrationType::Task => d.nr_balance_failed > d.cache_nice_tries + 2,
            MigrationType::Misfit => true,
            _ => false,
        }
    }
}

/// Whether a model level is SD_NUMA (the NODE level of 2.6.36, the NUMA
/// levels of 3.6+).
fn is_numa(name: &str) -> bool {
    name == "NODE" || name.starts_with("NUMA")
}

#[cfg(test)]
#[path = "fbg_v55_tests.rs"]
mod tests;
