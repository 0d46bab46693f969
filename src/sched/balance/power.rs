//! Alex Shi's power-aware balance policies (`sched_balance_policy`, the
//! "simplified fork, release load avg and power awareness scheduling"
//! series, v4 of 24 Jan 2013, carried on to v5–v7; never merged): seed
//! case 3 (docs/cases/power-policies.md). The v4–v7 `kernel/sched/fair.c` was never read for
//! this model: every rule here is reconstructed from the cover letters,
//! the discussion and the patch subjects, and is unverified against the
//! code — the 2012 proposal with its `load_balance()` pseudo-code
//! (https://lkml.indiana.edu/hypermail/linux/kernel/1208.1/02171.html), the
//! v4 cover letter (24 Jan 2013, http://article.gmane.org/gmane.linux.kernel/1428181:
//! the runnable average only in power-aware balancing), the v5 thread of
//! Feb 2013 (https://lkml.indiana.edu/hypermail/linux/kernel/1302.2/00473.html,
//! …/00530.html: the automatic bypass of a full domain, …/02102.html: the
//! policies), the v6 and v7 covers (https://lwn.net/Articles/545418/,
//! http://article.gmane.org/gmane.linux.kernel/1469331: packing at every
//! sched-domain level) and the v7 commit subjects quoted below; the names
//! are the series' (`group_leader`, `is_sd_full()`,
//! `get_cpu_for_power_policy()`, `find_leader_cpu()`, `max_rq_util()`).
//!
//! - Utilisation: a CPU's `rq->util` is the 3.8 PELT runnable ratio of
//!   `rq->avg` (of 1024, "log the cpu utilization at rq"); its potential
//!   maximum ("get rq potential maximum utilization") is
//!   `min(rq->util, FULL_UTIL) · max(nr_running, 1)` (without the series'
//!   `rt_util` term: the model keeps no RT PELT, `sched::rt`), or, when
//!   larger,
//!   the sum of its queued
//!   tasks' own runnable ratios (the model's addition, see
//!   `power_cpu_util`); a group's is the sum over its CPUs.
//! - A group's threshold is `weight · FULL_UTIL` under powersaving and
//!   `capacity · FULL_UTIL` under balance; its free room is the threshold
//!   minus its utilisation. The `group_leader` is the group with the least
//!   free room that still fits what is to be placed (a full CPU's worth for
//!   a fork or a balance pass, the task's own utilisation at a wake-up).
//! - A domain is full (`is_sd_full()`) when its utilisation plus the
//!   task's reaches its threshold; a full domain runs as `performance`.
//!
//! Each behaviour is its own `Kernel` field (`power_fork_exec`,
//! `power_wake`, `power_burst_threshold_ns`, `power_pack_transitory`,
//! `power_lb`), so `sl.bisect` can name the one that carries an effect.
//! Simplifications: the model has no exec (fork only); the wake-up path
//! uses the highest load-balancing domain of the waking CPU (whether v4 set
//! SD_BALANCE_WAKE there is not known); placement descends through the
//! leader's child domains to the lowest level ("pack at every sched-domain
//! level"); ties go to the local group.

use crate::kernel::BalancePolicy;
use crate::sched::balance::domains::{sd, SCALE};
use crate::sched::balance::{IdleType, LbEnv};
use crate::sched::task::TaskId;
use crate::sched::Sched;

/// `FULL_UTIL` (= `SCHED_POWER_SCALE`): one CPU fully used.
pub const FULL_UTIL: u64 = 1024;

/// A sched group's power statistics (the series' new `sg_lb_stats`
/// fields: `group_weight`, `group_capacity`, `group_util`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupUtil {
    pub weight: u64,
    pub capacity: u64,
    pub util: u64,
    pub nr_running: u64,
}

/// `max_rq_util(cpu)` without an RT class: `min(util, FULL_UTIL) ·
/// max(nr_running, 1)`.
pub fn max_rq_util(util: u64, nr_running: u64) -> u64 {
    util.min(FULL_UTIL) * nr_running.max(1)
}

/// The utilisation up to which a policy packs a group: its CPU weight
/// (powersaving) or its capacity (balance), times `FULL_UTIL`; 0 under
/// performance.
pub fn threshold(policy: BalancePolicy, g: &GroupUtil) -> u64 {
    match policy {
        BalancePolicy::Performance => 0,
        BalancePolicy::Balance => g.capacity * FULL_UTIL,
        BalancePolicy::Powersaving => g.weight * FULL_UTIL,
    }
}

/// The group's free room: threshold − utilisation (negative when over).
pub fn free_room(policy: BalancePolicy, g: &GroupUtil) -> i64 {
    threshold(policy, g) as i64 - g.util as i64
}

/// The `group_leader`: of `groups`, walked from `first` (the local group,
/// as the kernel's circular list), the one with the least free room that
/// is still at least `need` (and positive); ties keep the earlier group.
pub fn group_leader(
    policy: BalancePolicy,
    groups: &[GroupUtil],
    first: usize,
    need: u64,
) -> Option<usize> {
    let n = groups.len();
    let need = need.max(1) as i64;
    let mut best: Option<(usize, i64)> = None;
    for k in 0..n {
        let g = (first + k) % n;
        let room = free_room(policy, &groups[g]);
        if room >= need && best.is_none_or(|(_, r)| room < r) {
            best = Some((g, room));
        }
    }
    best.map(|(g, _)| g)
}

/// `is_sd_full()`: the domain's utilisation plus the task's reaches the
/// domain's threshold (its summed weight or capacity times `FULL_UTIL`);
/// the domain then runs as `performance`.
pub fn is_sd_full(policy: BalancePolicy, groups: &[GroupUtil], task_util: u64) -> bool {
    let total = groups.iter().fold(GroupUtil::default(), |a, g| GroupUtil {
        weight: a.weight + g.weight,
        capacity: a.capacity + g.capacity,
        util: a.util + g.util,
        nr_running: a.nr_running + g.nr_running,
    });
    total.util + task_util >= threshold(policy, &total)
}

/// `find_leader_cpu()`'s vacancy of a CPU for a task of utilisation
/// `putil`: `FULL_UTIL − cpu_util − 4·putil` (only tasks under a quarter
/// of a CPU fit anywhere).
pub fn vacancy(cpu_util: u64, putil: u64) -> i64 {
    FULL_UTIL as i64 - cpu_util as i64 - 4 * putil as i64
}

impl Sched<'_> {
    pub(crate) fn power_policy_on(&self) -> bool {
        self.kernel.balance_policy != BalancePolicy::Performance
    }

    /// A CPU's utilisation for the power rules: `max_rq_util(cpu)` on the
    /// 3.8 `rq->avg` (brought to now), or, when larger, the sum of its
    /// queued tasks' own runnable ratios, a task without history counting
    /// `FULL_UTIL`. The second term is the model's: `rq->avg` of a CPU that
    /// was idle for long ramps over ~100 ms, so tasks placed within one
    /// instant would all see an empty CPU and stack (the series' "set
    /// initial value of runnable avg for new forked task" points at the
    /// same lag).
    fn power_cpu_util(&mut self, cpu: usize) -> u64 {
        let util = self.v38_rq_util(cpu);
        let rq_util = max_rq_util(util, self.rqs[cpu].cfs.nr_running as u64);
        let tasks: u64 = self
            .group_nodes
            .iter(&self.rqs[cpu].bal.cfs_tasks)
            .map(|t| match self.v38_task_util(t) {
                (u, true) => u,
                (_, false) => FULL_UTIL,
            })
            .sum();
        rq_util.max(tasks)
    }

    /// The power statistics of each group of `cpu`'s domain at `lvl`.
    fn power_group_utils(&mut self, cpu: usize, lvl: usize) -> Vec<GroupUtil> {
        let groups = self.sd[cpu][lvl].groups.clone();
        groups
            .iter()
            .map(|g| {
                let mut s = GroupUtil {
                    weight: g.cpus.len() as u64,
                    // sgs->group_capacity: DIV_ROUND_CLOSEST(power, SCALE).
                    capacity: ((g.power + SCALE / 2) / SCALE).max(1),
                    ..GroupUtil::default()
                };
                for &c in &g.cpus {
                    s.util += self.power_cpu_util(c as usize);
                    s.nr_running += self.rqs[c as usize].cfs.nr_running as u64;
                }
                s
            })
            .collect()
    }

    /// `select_task_rq_fair()`'s power path (`get_cpu_for_power_policy()`):
    /// `Some(cpu)` when a power policy places the task, `None` for the
    /// performance path. `fork`: SD_BALANCE_FORK (`power_fork_exec`), else
    /// a wake-up on `this_cpu` (`power_wake`, `power_burst_threshold_ns`,
    /// `power_pack_transitory`).
    pub(crate) fn select_task_rq_power(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        fork: bool,
    ) -> Option<usize> {
        let k = self.kernel;
        if !self.power_policy_on() || (fork && !k.power_fork_exec) || (!fork && !k.power_wake) {
            return None;
        }
        // "using avg_idle to detect bursty wakeup".
        if !fork && self.rqs[this_cpu].bal.avg_idle < k.power_burst_threshold_ns {
            return None;
        }
        let flag = if fork {
            sd::BALANCE_FORK
        } else {
            sd::LOAD_BALANCE
        };
        let lvl = self.sd[this_cpu]
            .iter()
            .rposition(|d| d.has(sd::LOAD_BALANCE) && d.has(flag))?;
        let policy = k.balance_policy;
        let groups = self.power_group_utils(this_cpu, lvl);
        let (putil, history) = self.v38_task_util(p);
        // A task without history (a new fork) counts as FULL_UTIL.
        let task_util = if fork || !history { FULL_UTIL } else { putil };
        if is_sd_full(policy, &groups, task_util) {
            return None;
        }
        let local = self.sd[this_cpu][lvl].local_group;
        let mut leader = group_leader(policy, &groups, local, task_util)?;
        // Pack at every level: descend into the leader's child domain
        // (from this CPU when it is in the leader, so ties stay local) and
        // take its leader, down to the lowest level.
        let mut cpus = self.sd[this_cpu][lvl].groups[leader].cpus.clone();
        let mut lvl = lvl;
        while lvl > 0 {
            lvl -= 1;
            let anchor = if cpus.contains(&(this_cpu as u32)) {
                this_cpu
            } else {
                cpus[0] as usize
            };
            if self.sd[anchor][lvl].groups.len() < 2 {
                continue;
            }
            let groups = self.power_group_utils(anchor, lvl);
            let local = self.sd[anchor][lvl].local_group;
            let Some(g) = group_leader(policy, &groups, local, task_util) else {
                break;
            };
            leader = g;
            cpus = self.sd[anchor][lvl].groups[leader].cpus.clone();
        }
        if !fork && k.power_pack_transitory {
            if let Some(c) = self.find_leader_cpu(p, this_cpu, &cpus, task_util) {
                return Some(c);
            }
        }
        // find_idlest_cpu() in the leader, on utilisation (then tasks).
        let mut best: Option<(usize, (u64, u32))> = None;
        for &c in &cpus {
            let c = c as usize;
            if !self.allowed(p, c) {
                continue;
            }
            let key = (self.power_cpu_util(c), self.rqs[c].cfs.nr_running);
            if best.is_none_or(|(b, bk)| key < bk || (key == bk && c == this_cpu && b != c)) {
                best = Some((c, key));
            }
        }
        best.map(|(c, _)| c)
    }

    /// `find_leader_cpu()` ("packing transitory tasks in wakeup power
    /// balancing"): the waking CPU if the task fits beside what runs
    /// there, else the CPU of the leader with the least positive vacancy
    /// (a running CPU with room), else `None`.
    fn find_leader_cpu(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        cpus: &[u32],
        putil: u64,
    ) -> Option<usize> {
        if self.allowed(p, this_cpu) && vacancy(self.power_cpu_util(this_cpu), putil) > 0 {
            return Some(this_cpu);
        }
        let mut best: Option<(usize, i64)> = None;
        for &c in cpus {
            let c = c as usize;
            if c == this_cpu || !self.allowed(p, c) {
                continue;
            }
            let v = vacancy(self.power_cpu_util(c), putil);
            if v > 0 && best.is_none_or(|(_, bv)| v < bv) {
                best = Some((c, v));
            }
        }
        best.map(|(c, _)| c)
    }

    /// The power periodic balance (`power_lb`: "pull all tasks from source
    /// group", "add power/performance balance allow flag"): in a domain
    /// that is not full, `dst_cpu`, whose group runs tasks and is the
    /// group_leader, pulls every task of the least-utilised non-idle group,
    /// if they fit its free room: queued tasks at once
    /// (`can_migrate_task()` as usual), a lone running one by an active
    /// balance. `Some(moved)` when the pass is the power balance's (the
    /// allow flag: the domain is not full and no group is over its
    /// threshold, so the performance balance may not undo the packing),
    /// `None` to let the performance balance run. Any CPU of the group may pull, busy or idle: under 3.8's NOHZ
    /// an idle CPU is balanced only when some CPU runs two tasks or an LLC
    /// group has two busy CPUs (`nohz_kick_needed()`), which one task per
    /// core never gives; a busy puller's extra tasks then spread inside
    /// its group through the performance balance.
    pub(crate) fn power_load_balance(&mut self, env: &mut LbEnv) -> Option<u64> {
        if !self.power_policy_on() || !self.kernel.power_lb || env.idle == IdleType::NewlyIdle {
            return None;
        }
        let (this_cpu, lvl) = (env.dst_cpu, env.sd);
        if self.sd[this_cpu][lvl].groups.len() < 2 {
            return None;
        }
        let policy = self.kernel.balance_policy;
        let groups = self.power_group_utils(this_cpu, lvl);
        env.cost += self.cost.lb_per_group_ns * groups.len() as u64;
        // The allow flag: a full domain, or one with a group over its
        // threshold, is balanced for performance (the 2012 proposal: an
        // over-full group is relieved first); otherwise only the power
        // balance may move tasks here.
        if is_sd_full(policy, &groups, 0) || groups.iter().any(|g| free_room(policy, g) < 0) {
            return None;
        }
        let local = self.sd[this_cpu][lvl].local_group;
        // Into a group that already runs tasks (moving a whole group's work
        // into an idle one saves nothing), when it is the leader.
        // Ties go to the lowest group here, not the local one, so that the
        // CPUs of equal groups, balancing at the same tick, agree on one
        // leader instead of swapping their tasks.
        let leader = group_leader(policy, &groups, 0, FULL_UTIL);
        if groups[local].nr_running == 0 || leader != Some(local) {
            return Some(0);
        }
        // The least-utilised non-idle group (ties: the lowest).
        let n = groups.len();
        let src = (0..n)
            .filter(|&g| g != local && groups[g].nr_running > 0)
            .min_by_key(|&g| groups[g].util);
        let Some(src) = src else { return Some(0) };
        if groups[src].util as i64 > free_room(policy, &groups[local]) {
            return Some(0);
        }
        let cpus = self.sd[this_cpu][lvl].groups[src].cpus.clone();
        let mut moved = 0;

        for &c in &cpus {
            let c = c as usize;
            if self.rqs[c].cfs.nr_running == 0 {
                continue;
            }
            env.src_cpu = c;
            // Most recently enqueued first; the next task is taken before
            // `t` may move.
            let mut next = self.group_nodes.back(&self.rqs[c].bal.cfs_tasks);
            while let Some(t) = next {
                debug_assert_eq!(self.tasks[t as usize].cpu as usize, c);
                next = self.group_nodes.prev(t);
                env.cost += self.cost.lb_per_task_ns;
                let (ok, _) = self.can_migrate_task(t, env);
                if ok {
                    self.move_task(t, env, Some(this_cpu));
                    moved += 1;
                }
            }
            // A running task left alone: the stopper pushes it (one active
            // balance at a time per source CPU, as load_balance() does).
            let curr = self.rqs[c].cfs.curr;
            if self.rqs[c].cfs.nr_running == 1
                && curr.is_some_and(|t| self.allowed(t, this_cpu))
                && !self.rqs[c].bal.active_balance
            {
                self.rqs[c].bal.active_balance = true;
                let d = &mut self.sd[this_cpu][lvl];
                d.nr_balance_failed = d.cache_nice_tries + 1;
                self.counters.active_balances += 1;
                self.counters.resched_ipis += 1;
                self.stop_one_cpu_nowait(c, this_cpu, lvl);
            }
        }
        env.src_cpu = this_cpu;
        Some(moved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BalancePolicy::{Balance, Performance, Powersaving};

    fn g(weight: u64, capacity: u64, util: u64) -> GroupUtil {
        GroupUtil {
            weight,
            capacity,
            util,
            nr_running: util.div_ceil(FULL_UTIL),
        }
    }

    #[test]
    fn max_rq_util_multiplies_by_the_tasks() {
        assert_eq!(max_rq_util(0, 0), 0);
        assert_eq!(max_rq_util(600, 0), 600); // decaying, idle
        assert_eq!(max_rq_util(600, 1), 600);
        assert_eq!(max_rq_util(1023, 2), 2046);
        assert_eq!(max_rq_util(5000, 3), 3 * 1024); // capped at FULL_UTIL
    }

    #[test]
    fn free_room_is_weight_or_capacity_based() {
        // An SMT core: 2 threads, capacity 1 (power 1178 rounds to 1).
        let core = g(2, 1, 700);
        assert_eq!(free_room(Powersaving, &core), 2048 - 700);
        assert_eq!(free_room(Balance, &core), 1024 - 700);
        assert_eq!(free_room(Performance, &core), -700);
        assert_eq!(free_room(Balance, &g(2, 1, 1500)), -476);
    }

    #[test]
    fn group_leader_is_the_least_positive_room_that_fits() {
        // Four 10-CPU sockets: 3, 0, 9.5 and 6 CPUs busy.
        let gs = [
            g(10, 10, 3072),
            g(10, 10, 0),
            g(10, 10, 9728),
            g(10, 10, 6144),
        ];
        // A fork needs a full CPU: socket 2 (room 512) cannot take it;
        // socket 3 (room 4096) has the least room that fits.
        assert_eq!(group_leader(Powersaving, &gs, 0, FULL_UTIL), Some(3));
        // A 10 % task fits socket 2's 512.
        assert_eq!(group_leader(Powersaving, &gs, 0, 102), Some(2));
        // All idle: ties go to the first group walked, the local one.
        let idle = [g(10, 10, 0); 4];
        assert_eq!(group_leader(Powersaving, &idle, 2, FULL_UTIL), Some(2));
        // Every group full: no leader.
        let full = [g(2, 2, 2048), g(2, 2, 3000)];
        assert_eq!(group_leader(Powersaving, &full, 0, 1), None);
        // balance packs to capacity: an SMT core with one busy thread is
        // full under balance, not under powersaving.
        let cores = [g(2, 1, 1024), g(2, 1, 0)];
        assert_eq!(group_leader(Balance, &cores, 0, FULL_UTIL), Some(1));
        assert_eq!(group_leader(Powersaving, &cores, 0, FULL_UTIL), Some(0));
        assert_eq!(group_leader(Performance, &cores, 0, FULL_UTIL), None);
    }

    #[test]
    fn is_sd_full_by_weight_or_capacity() {
        let gs = [g(2, 1, 1024), g(2, 1, 900)];
        // powersaving: 1924 + 1024 < 4096.
        assert!(!is_sd_full(Powersaving, &gs, FULL_UTIL));
        // balance: threshold 2048; 1924 + 1024 ≥ 2048, 1924 + 100 < 2048.
        assert!(is_sd_full(Balance, &gs, FULL_UTIL));
        assert!(!is_sd_full(Balance, &gs, 100));
        // Exactly at the threshold counts as full.
        assert!(is_sd_full(Powersaving, &[g(4, 4, 3072)], FULL_UTIL));
        assert!(!is_sd_full(Powersaving, &[g(4, 4, 3071)], 0));
    }

    #[test]
    fn vacancy_admits_only_small_tasks() {
        assert!(vacancy(0, 255) > 0);
        assert!(vacancy(0, 256) <= 0);
        assert_eq!(vacancy(500, 100), 124);
        assert!(vacancy(900, 40) < 0);
    }
}
