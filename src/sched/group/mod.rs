//! Task groups (`CONFIG_FAIR_GROUP_SCHED`): a hierarchy of groups, each
//! with a per-CPU runqueue share and a group entity whose weight comes from
//! the group's `cpu.shares` (`cpu.weight` in cgroup v2) spread over the
//! CPUs by `calc_group_shares()` (kernel/sched/fair.c, 4.15-6.18), and the
//! SCHED_IDLE groups of `cpu.idle` (5.15, 304000390f88). Bandwidth control
//! (`cpu.cfs_quota_us`) is `sched::group::bandwidth`.
//!
//! # The flattened hierarchy
//!
//! The kernel queues a group's tasks on the group's own `cfs_rq` and the
//! group entity on its parent's. The model keeps one `cfs_rq` per CPU and
//! gives each task of a group its *hierarchical* weight instead — the
//! task's weight times, at each level up, the group entity's weight over
//! the group runqueue's load — what `task_h_load()` computes for the
//! balancer, and what Rik van Riel's "flatten the CPU controller
//! runqueues" series (2019, not merged) proposed for the pick. The CPU
//! split between groups on a CPU, the root runqueue's load that the
//! balancer and wake-up placement read, and `task_h_load()` all follow.
//! Simplifications, named:
//! - the share computed from `cfs_rq->load.weight` (the instantaneous
//!   weight, which `calc_group_shares()` takes when it is above the PELT
//!   `load_avg`: exact for tasks that stay runnable), and `tg->load_avg`
//!   as the sum of each CPU's last computed load (updated, as the kernel
//!   updates a CPU's contribution, only when that CPU enqueues, dequeues or
//!   ticks);
//! - within a group the tasks compete as one flat runqueue would (the same
//!   CPU split as the group's own `cfs_rq`; wake-up preemption inside the
//!   group compares the flattened entities);
//! - a task of an idle group (`cpu.idle`) runs as a SCHED_IDLE entity
//!   towards the rest (`se_is_idle()`, `sched_idle_cpu()`), whatever its
//!   own policy.

pub mod bandwidth;

use crate::error::{CoreError, CoreResult};
use crate::sched::fair::weights::WEIGHT_IDLEPRIO;
use crate::sched::task::TaskId;
use crate::sched::Sched;

/// `MIN_SHARES` (kernel/sched/sched.h): the smallest group entity weight
/// `calc_group_shares()` returns, and the smallest `cpu.shares`.
pub const MIN_SHARES: u64 = 2;
/// `MAX_SHARES` (1 << 18).
pub const MAX_SHARES: u64 = 1 << 18;
/// `SCHED_FIXEDPOINT_SHIFT`: 64-bit kernels keep load weights scaled by
/// 2^10 (`scale_load()`); the shares are computed at that resolution.
const SCALE_SHIFT: u32 = 10;
/// At most this many groups on one run.
pub const MAX_GROUPS: usize = 64;
/// `min_cfs_quota_period` (1 ms) and `max_cfs_quota_period` (1 s).
pub const PERIOD_NS: (u64, u64) = (1_000_000, 1_000_000_000);
/// `max_cfs_runtime` is `MAX_BW * NSEC_PER_USEC`, about 2^44 ns; the model
/// allows quotas up to 1000 s.
pub const MAX_QUOTA_NS: u64 = 1_000_000_000_000;

/// One group as a run defines it (`sl.Group` in Python).
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSpec {
    pub name: String,
    /// The parent group's name (`None`: the root task group).
    pub parent: Option<String>,
    /// `cpu.shares` (2..262144; `cpu.weight` w is `w * 1024 / 100`).
    pub shares: u64,
    /// `cpu.cfs_quota_us` in ns (`None`: -1, no limit).
    pub quota_ns: Option<u64>,
    /// `cpu.cfs_period_us` in ns.
    pub period_ns: u64,
    /// `cpu.cfs_burst_us` in ns (5.14).
    pub burst_ns: u64,
    /// `cpu.idle` (5.15).
    pub idle: bool,
}

impl GroupSpec {
    /// Refuse what `tg_set_cfs_bandwidth()` / `sched_group_set_shares()`
    /// refuse, naming the parameter (cgroup v1 limits: a period of 1 ms to
    /// 1 s, a quota of at least 1 ms, a burst of at most the quota).
    pub fn validate(&self) -> CoreResult<()> {
        let name_ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !name_ok {
            return Err(CoreError::invalid(
                "name",
                format!("{:?}", self.name),
                "1 to 64 characters of letters, digits, '_' and '-'",
            ));
        }
        if !(MIN_SHARES..=MAX_SHARES).contains(&self.shares) {
            return Err(CoreError::invalid(
                "shares",
                self.shares,
                format!("{MIN_SHARES} to {MAX_SHARES} (cpu.shares)"),
            ));
        }
        if !(PERIOD_NS.0..=PERIOD_NS.1).contains(&self.period_ns) {
            return Err(CoreError::invalid(
                "period_us",
                self.period_ns / 1000,
                "1000 to 1000000 (cpu.cfs_period_us: 1 ms to 1 s)",
            ));
        }
        if let Some(q) = self.quota_ns {
            if !(PERIOD_NS.0..=MAX_QUOTA_NS).contains(&q) {
                return Err(CoreError::invalid(
                    "quota_us",
                    q / 1000,
                    "None (no limit) or 1000 to 10^9 (cpu.cfs_quota_us: at least 1 ms)",
                ));
            }
        }
        let quota = self.quota_ns.unwrap_or(0);
        if self.burst_ns > quota {
            return Err(CoreError::invalid(
                "burst_us",
                self.burst_ns / 1000,
                format!(
                    "0 to quota_us ({}): cpu.cfs_burst_us may not exceed the quota, and needs one",
                    quota / 1000
                ),
            ));
        }
        if self.parent.as_deref() == Some(self.name.as_str()) {
            return Err(CoreError::invalid(
                "parent",
                format!("{:?}", self.name),
                "None or the name of another group",
            ));
        }
        Ok(())
    }
}

/// Check a run's groups: each valid, names unique, each parent defined
/// before its child (so the hierarchy has no cycle), at most
/// [`MAX_GROUPS`].
pub fn validate_groups(groups: &[GroupSpec]) -> CoreResult<()> {
    if groups.len() > MAX_GROUPS {
        return Err(CoreError::invalid(
            "groups",
            format!("a list of {}", groups.len()),
            format!("at most {MAX_GROUPS} groups"),
        ));
    }
    for (i, g) in groups.iter().enumerate() {
        g.validate()?;
        if groups[..i].iter().any(|h| h.name == g.name) {
            return Err(CoreError::invalid(
                "groups",
                format!("two groups named {:?}", g.name),
                "unique group names",
            ));
        }
        if let Some(p) = &g.parent {
            if !groups[..i].iter().any(|h| &h.name == p) {
                return Err(CoreError::invalid(
                    "parent",
                    format!("{p:?}"),
                    format!(
                        "None or a group defined before {:?} in groups= (the parent comes first)",
                        g.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A group's state on one CPU: its share of the CPU's runqueue (the
/// kernel's `tg->cfs_rq[cpu]` and `tg->se[cpu]`) and its bandwidth state
/// there.
#[derive(Clone, Debug, Default)]
pub struct GroupCpu {
    /// The group's own tasks queued on the CPU (`curr` included).
    pub queued: Vec<TaskId>,
    /// Tasks of the group and its descendants queued (`h_nr_running`).
    pub h_nr: u32,
    /// `cfs_rq->load.weight` (scaled by 2^10): its tasks' own weights and
    /// its non-empty child groups' entity weights.
    pub load: u64,
    /// The group entity's weight (scaled), `calc_group_shares()`.
    pub ge_weight: u64,
    /// This CPU's contribution to `tg->load_avg` (the last `load`).
    pub contrib: u64,
    // -- bandwidth (`sched::group::bandwidth`) -------------------------------------
    /// `cfs_rq->runtime_remaining`.
    pub runtime_remaining: i64,
    /// `cfs_rq->throttled`.
    pub throttled: bool,
    /// `cfs_rq->throttle_count`: throttled ancestors, this group included.
    pub throttle_count: u32,
    /// `cfs_rq->throttled_clock`: when its tasks stopped running.
    pub throttled_clock: Option<u64>,
    /// The group's throttled tasks on the CPU (6.18
    /// `cfs_rq->throttled_limbo_list`; before, the tasks stayed queued on
    /// the dequeued group runqueue).
    pub limbo: Vec<TaskId>,
}

/// `struct cfs_bandwidth` of one group.
#[derive(Clone, Debug, Default)]
pub struct CfsBandwidth {
    pub quota: u64,
    pub period: u64,
    pub burst: u64,
    /// `cfs_b->runtime`: the global pool.
    pub runtime: i64,
    /// `cfs_b->runtime_snap`.
    pub runtime_snap: i64,
    /// `cfs_b->period_active`; the period timer's next expiry.
    pub period_active: bool,
    pub expires: u64,
    /// `cfs_b->idle`.
    pub idle: bool,
    /// `cfs_b->slack_started`.
    pub slack_started: bool,
    /// `cfs_b->throttled_cfs_rq`: the CPUs of its throttled runqueues, in
    /// the order they were throttled.
    pub throttled: Vec<u32>,
    pub nr_periods: u64,
    pub nr_throttled: u64,
    pub throttled_time: u64,
    pub nr_burst: u64,
    pub burst_time: u64,
}

/// Every group of a run, and each task's group.
pub struct TaskGroups {
    pub specs: Vec<GroupSpec>,
    /// Each group's parent's index.
    pub parent: Vec<Option<usize>>,
    /// Each group's children.
    pub children: Vec<Vec<usize>>,
    /// `tg->shares`, scaled.
    pub shares: Vec<u64>,
    /// The group or one of its ancestors is idle.
    pub idle: Vec<bool>,
    /// `[group][cpu]`.
    pub cpu: Vec<Vec<GroupCpu>>,
    /// `tg->load_avg`: Σ over CPUs of `contrib`.
    pub tg_load: Vec<u64>,
    /// `None` when the group has no quota.
    pub bw: Vec<Option<CfsBandwidth>>,
    /// Any group has a quota (`cfs_bandwidth_used()`).
    pub bandwidth_used: bool,
    /// Per task: its group (`None`: the root group).
    pub task_group: Vec<Option<u32>>,
    /// Per task: its index in its group's `queued` on its CPU.
    pub slot: Vec<u32>,
    /// Per task: its own weight (scaled) from its policy and nice.
    pub own_weight: Vec<u64>,
    /// Per task: throttled (in a limbo list).
    pub throttled: Vec<bool>,
    /// Per task: `sum_exec_runtime` already charged to its groups' runtime.
    pub charged: Vec<u64>,
    /// Per CPU: throttled group runqueues on it (a fast "none" test).
    pub throttled_on: Vec<u32>,
    /// Each group's name.
    pub names: Vec<String>,
}

impl TaskGroups {
    /// The groups of a run on `ncpus` CPUs (already validated), seeded
    /// `seed`: the phase of each group's period timer.
    ///
    /// `start_cfs_bandwidth()` forwards the period timer from its last
    /// expiry (0 for a new group) by whole periods, so the kernel's period
    /// boundaries fall on multiples of the period in `CLOCK_MONOTONIC`
    /// time, at a phase to the benchmark's start that no run controls. The
    /// model draws that phase, uniform in [0, period), from a stream of
    /// the run's seed apart from the workload's and the engine's.
    pub fn new(specs: &[GroupSpec], ncpus: usize, seed: u64) -> Self {
        let mut rng = crate::rng::Rng::new(seed ^ 0x6366_735F_6277_5F70);
        let n = specs.len();
        let mut parent = Vec::with_capacity(n);
        let mut children = vec![Vec::new(); n];
        let mut idle = Vec::with_capacity(n);
        for (i, g) in specs.iter().enumerate() {
            let p = g
                .parent
                .as_ref()
                .and_then(|p| specs.iter().position(|h| &h.name == p));
            if let Some(p) = p {
                children[p].push(i);
            }
            let up: bool = p.is_some_and(|p: usize| idle[p]);
            idle.push(g.idle || up);
            parent.push(p);
        }
        let shares = specs
            .iter()
            .map(|g| {
                // sched_group_set_idle(): an idle group's shares are
                // WEIGHT_IDLEPRIO.
                let s = if g.idle { WEIGHT_IDLEPRIO } else { g.shares };
                s << SCALE_SHIFT
            })
            .collect();
        let bw: Vec<Option<CfsBandwidth>> = specs
            .iter()
            .map(|g| {
                g.quota_ns.map(|q| CfsBandwidth {
                    quota: q,
                    period: g.period_ns,
                    burst: g.burst_ns,
                    // tg_set_cfs_bandwidth() → __refill_cfs_bandwidth_runtime().
                    runtime: q as i64,
                    runtime_snap: q as i64,
                    expires: rng.next_u64() % g.period_ns,
                    ..Default::default()
                })
            })
            .collect();
        TaskGroups {
            names: specs.iter().map(|g| g.name.clone()).collect(),
            bandwidth_used: bw.iter().any(Option::is_some),
            specs: specs.to_vec(),
            parent,
            children,
            shares,
            idle,
            cpu: vec![vec![GroupCpu::default(); ncpus]; n],
            tg_load: vec![0; n],
            bw,
            task_group: Vec::new(),
            slot: Vec::new(),
            own_weight: Vec::new(),
            throttled: Vec::new(),
            charged: Vec::new(),
            throttled_on: vec![0; ncpus],
        }
    }

    /// The index of group `name`.
    pub fn find(&self, name: &str) -> Option<u32> {
        self.names.iter().position(|n| n == name).map(|i| i as u32)
    }

    /// A new task (`sched_fork()` → `task_change_group_fair()`).
    pub fn add_task(&mut self, group: Option<u32>, own_weight: u64) {
        self.task_group.push(group);
        self.slot.push(u32::MAX);
        self.own_weight.push(own_weight << SCALE_SHIFT);
        self.throttled.push(false);
        self.charged.push(0);
    }

    /// `calc_group_shares()` (kernel/sched/fair.c, 4.15-6.18, from
    /// cef27403cbe9 "sched/fair: Rewrite cfs_rq->load tracking & PELT"):
    /// `tg_shares * load / tg_weight`, where `tg_weight` is `tg->load_avg`
    /// with this CPU's contribution replaced by its current `load`, clamped
    /// to `[MIN_SHARES, tg_shares]`. `load` is the runqueue's weight (see
    /// the module comment).
    pub fn calc_group_shares(&self, g: usize, cpu: usize, load: u64) -> u64 {
        let tg_shares = self.shares[g];
        let tg_weight = self.tg_load[g] - self.cpu[g][cpu].contrib + load;
        let mut shares = tg_shares as u128 * load as u128;
        if tg_weight > 0 {
            shares /= tg_weight as u128;
        }
        (shares as u64).clamp(MIN_SHARES, tg_shares)
    }

    /// `update_cfs_group()` for every group on `cpu`, children before
    /// parents: each runqueue's load, its contribution to `tg->load_avg`
    /// and its entity's weight. Returns whether any entity weight changed.
    pub fn update_cpu(&mut self, cpu: usize) -> bool {
        let mut changed = false;
        for g in (0..self.specs.len()).rev() {
            let own: u64 = self.cpu[g][cpu]
                .queued
                .iter()
                .map(|&t| self.own_weight[t as usize])
                .sum();
            let kids: u64 = self.children[g]
                .iter()
                .map(|&c| self.cpu[c][cpu].ge_weight)
                .sum();
            let load = own + kids;
            let ge = if self.cpu[g][cpu].h_nr > 0 {
                self.calc_group_shares(g, cpu, load)
            } else {
                0
            };
            let gc = &mut self.cpu[g][cpu];
            self.tg_load[g] = self.tg_load[g] - gc.contrib + load;
            gc.contrib = load;
            gc.load = load;
            if gc.ge_weight != ge {
                gc.ge_weight = ge;
                changed = true;
            }
        }
        changed
    }

    /// The flattened weight of task `t` of group `g` on `cpu` (unscaled,
    /// at least 1): its own weight times, at each level, the group entity's
    /// weight over the group runqueue's load — `task_h_load()`'s product,
    /// on weights.
    pub fn h_weight(&self, t: TaskId, g: usize, cpu: usize) -> u64 {
        let mut w = self.own_weight[t as usize] as u128;
        let mut level = Some(g);
        while let Some(x) = level {
            let gc = &self.cpu[x][cpu];
            w = w * gc.ge_weight as u128 / gc.load.max(1) as u128;
            level = self.parent[x];
        }
        ((w >> SCALE_SHIFT) as u64).max(1)
    }

    /// The group and its ancestors, lowest first.
    pub fn chain(&self, g: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(Some(g), move |&x| self.parent[x])
    }

    /// Is task `t`'s group throttled on `cpu` (`throttled_hierarchy()`)?
    #[inline]
    pub fn task_throttled_hierarchy(&self, t: TaskId, cpu: usize) -> bool {
        self.task_group[t as usize].is_some_and(|g| self.cpu[g as usize][cpu].throttle_count > 0)
    }
}

impl Sched<'_> {
    /// A new task's group (`sched_fork()` → `task_change_group_fair()`):
    /// `group` by name (the run checked that it exists), `None` for the
    /// root group. A task of an idle group runs as a SCHED_IDLE entity.
    pub(crate) fn set_task_group(&mut self, t: TaskId, group: Option<&str>) {
        let task = &self.tasks[t as usize];
        let own = crate::sched::fair::weights::task_weight(task.policy, task.nice).0;
        let tg = self.groups.as_mut().expect("groups");
        let g = group.and_then(|n| tg.find(n));
        debug_assert_eq!(tg.task_group.len(), t as usize, "tasks join in fork order");
        tg.add_task(g, own);
        if g.is_some_and(|g| tg.idle[g as usize]) {
            self.ses[t as usize].policy = crate::sched::task::Policy::Idle;
        }
    }

    /// Task `t` is about to be enqueued on `cpu`: account it to its group
    /// there and give it, and the group's other queued tasks, their new
    /// flattened weights (`enqueue_entity()`'s `update_cfs_group()` at each
    /// level). False when its group's runqueue there is throttled and the
    /// task goes to the limbo list instead (`sched::group::bandwidth`).
    pub(crate) fn group_enqueue(&mut self, cpu: usize, t: TaskId) -> bool {
        let Some(tg) = self.groups.as_mut() else {
            return true;
        };
        let Some(g) = tg.task_group[t as usize] else {
            return true;
        };
        let g = g as usize;
        if tg.bandwidth_used && self.throttle_on_enqueue(cpu, t, g) {
            return false;
        }
        let tg = self.groups.as_mut().expect("groups");
        debug_assert_eq!(tg.slot[t as usize], u32::MAX, "task {t} enqueued twice");
        let gc = &mut tg.cpu[g][cpu];
        tg.slot[t as usize] = gc.queued.len() as u32;
        gc.queued.push(t);
        let chain: Vec<usize> = tg.chain(g).collect();
        for x in chain {
            tg.cpu[x][cpu].h_nr += 1;
        }
        tg.update_cpu(cpu);
        let w = tg.h_weight(t, g, cpu);
        self.set_weight_off_rq(t, w);
        self.reweight_group_tasks(cpu, Some(t));
        true
    }

    /// Task `t` left `cpu`'s runqueue (a completed dequeue).
    pub(crate) fn group_dequeue(&mut self, cpu: usize, t: TaskId) {
        let Some(tg) = self.groups.as_mut() else {
            return;
        };
        let Some(g) = tg.task_group[t as usize] else {
            return;
        };
        let g = g as usize;
        let i = tg.slot[t as usize] as usize;
        let gc = &mut tg.cpu[g][cpu];
        debug_assert_eq!(gc.queued.get(i), Some(&t), "group slot of task {t}");
        gc.queued.swap_remove(i);
        if let Some(&moved) = gc.queued.get(i) {
            tg.slot[moved as usize] = i as u32;
        }
        tg.slot[t as usize] = u32::MAX;
        let chain: Vec<usize> = tg.chain(g).collect();
        for x in chain {
            tg.cpu[x][cpu].h_nr -= 1;
        }
        tg.update_cpu(cpu);
        self.reweight_group_tasks(cpu, None);
        if self.groups.as_ref().expect("groups").bandwidth_used {
            self.return_cfs_rq_runtime(cpu, g);
        }
    }

    /// `entity_tick()`'s `update_cfs_group()`: the other CPUs' loads may
    /// have moved `tg->load_avg`.
    pub(crate) fn group_tick(&mut self, cpu: usize) {
        if let Some(tg) = self.groups.as_mut() {
            if tg.update_cpu(cpu) {
                self.reweight_group_tasks(cpu, None);
            }
        }
    }

    /// Give every queued group task on `cpu` (but `skip`) its flattened
    /// weight (`reweight_entity()` of the group entities, flattened).
    fn reweight_group_tasks(&mut self, cpu: usize, skip: Option<TaskId>) {
        let tg = self.groups.as_ref().expect("groups");
        let mut todo: Vec<(TaskId, u64)> = Vec::new();
        for g in 0..tg.specs.len() {
            for &t in &tg.cpu[g][cpu].queued {
                if Some(t) != skip {
                    let w = tg.h_weight(t, g, cpu);
                    if w != self.ses[t as usize].weight {
                        todo.push((t, w));
                    }
                }
            }
        }
        if todo.is_empty() {
            return;
        }
        for (t, w) in todo {
            self.reweight_task(cpu, t, w);
        }
        self.update_sg_sums(cpu);
    }

    /// A queued task's new weight: `reweight_entity()` with its PELT
    /// load moved (`dequeue_load_avg()` / `enqueue_load_avg()`).
    fn reweight_task(&mut self, cpu: usize, t: TaskId, w: u64) {
        let now = self.now;
        self.pelt_reweight(cpu, t, w);
        let inv = crate::sched::fair::weights::inv_weight(w);
        self.rqs[cpu]
            .cfs
            .reweight_entity(&mut self.ses, t, w, inv, now);
    }

    /// The weight of a task about to be enqueued (`reweight_entity()` for
    /// `!se->on_rq`: its saved lag rescaled).
    fn set_weight_off_rq(&mut self, t: TaskId, w: u64) {
        if self.ses[t as usize].weight != w {
            let cpu = self.tasks[t as usize].cpu as usize;
            self.reweight_task(cpu, t, w);
        }
    }
}

/// Each task group's metrics (`groups=`).
pub const GROUP: &[crate::config::MetricDoc] = &[
    crate::config::MetricDoc {
        name: "group.<group>.cpu_s",
        unit: "s",
        meaning: "CPU time of the group's tasks",
        source: "cpuacct.usage",
    },
    crate::config::MetricDoc {
        name: "group.<group>.wait_s",
        unit: "s",
        meaning: "Time the group's tasks were runnable but not running",
        source: "the tasks' schedstat run_delay, summed",
    },
    crate::config::MetricDoc {
        name: "group.<group>.nr_periods",
        unit: "count",
        meaning: "Bandwidth periods elapsed (with a quota)",
        source: "cpu.stat nr_periods",
    },
    crate::config::MetricDoc {
        name: "group.<group>.nr_throttled",
        unit: "count",
        meaning: "Periods in which the group was throttled",
        source: "cpu.stat nr_throttled",
    },
    crate::config::MetricDoc {
        name: "group.<group>.throttled_s",
        unit: "s",
        meaning: "Time the group's runqueues were throttled",
        source: "cpu.stat throttled_time",
    },
    crate::config::MetricDoc {
        name: "group.<group>.nr_bursts",
        unit: "count",
        meaning: "Periods in which the group used its burst",
        source: "cpu.stat nr_bursts",
    },
    crate::config::MetricDoc {
        name: "group.<group>.burst_s",
        unit: "s",
        meaning: "Run time taken from the burst",
        source: "cpu.stat burst_time",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, parent: Option<&str>, shares: u64) -> GroupSpec {
        GroupSpec {
            name: name.into(),
            parent: parent.map(str::to_string),
            shares,
            quota_ns: None,
            period_ns: 100_000_000,
            burst_ns: 0,
            idle: false,
        }
    }

    /// Queue `n` nice-0 tasks of group `g` on `cpu` (ids from `first`).
    fn queue(tg: &mut TaskGroups, g: usize, cpu: usize, first: u32, n: u32) {
        for t in first..first + n {
            while tg.own_weight.len() <= t as usize {
                tg.add_task(Some(g as u32), 1024);
            }
            tg.cpu[g][cpu].queued.push(t);
            let chain: Vec<usize> = tg.chain(g).collect();
            for x in chain {
                tg.cpu[x][cpu].h_nr += 1;
            }
        }
        tg.update_cpu(cpu);
    }

    #[test]
    fn calc_group_shares_by_hand() {
        // Two CPUs. Group A (1024 shares): 3 tasks on CPU 0, 1 on CPU 1.
        let mut tg = TaskGroups::new(&[spec("a", None, 1024)], 2, 0);
        queue(&mut tg, 0, 0, 0, 3);
        // CPU 1 not yet updated: tg_weight = 3072 (CPU 0 only), so CPU 0's
        // share is 1024 * 3072 / 3072 = all of it.
        assert_eq!(tg.cpu[0][0].ge_weight, 1024 << 10);
        queue(&mut tg, 0, 1, 3, 1);
        // CPU 1: load 1024·2^10, tg_weight (3 + 1)·1024·2^10:
        // 1024·2^10 · 1/4 = 262144.
        assert_eq!(tg.cpu[0][1].ge_weight, 262_144);
        // CPU 0 keeps its stale share until it updates (a tick): then 3/4.
        assert_eq!(tg.cpu[0][0].ge_weight, 1024 << 10);
        tg.update_cpu(0);
        assert_eq!(tg.cpu[0][0].ge_weight, 786_432);
        // Each task on CPU 0 weighs 786432 / 3 = 262144 scaled = 256.
        assert_eq!(tg.h_weight(0, 0, 0), 256);
        assert_eq!(tg.h_weight(3, 0, 1), 256);
    }

    #[test]
    fn shares_clamp_to_min_shares_and_nest() {
        // 2048 : 2 on one CPU, two tasks each: 1024 and 1 per task.
        let mut tg = TaskGroups::new(&[spec("a", None, 2048), spec("b", None, 2)], 1, 0);
        queue(&mut tg, 0, 0, 0, 2);
        queue(&mut tg, 1, 0, 2, 2);
        assert_eq!(tg.h_weight(0, 0, 0), 1024);
        assert_eq!(tg.h_weight(2, 1, 0), 1);
        // A nested group: c (512) under a, with one task beside a's two.
        let mut tg = TaskGroups::new(&[spec("a", None, 1024), spec("c", Some("a"), 512)], 1, 0);
        queue(&mut tg, 0, 0, 0, 2);
        queue(&mut tg, 1, 0, 2, 1);
        // c's entity: 512·2^10 (alone on the CPU). a's load: 2·1024 + 512
        // (·2^10); a's entity 1024·2^10. a's tasks: 1024·1024/2560 = 409;
        // c's task: 1024 · 512/1024 · 1024/2560 = 204.
        assert_eq!(tg.cpu[0][0].load, 2560 << 10);
        assert_eq!(tg.h_weight(0, 0, 0), 409);
        assert_eq!(tg.h_weight(2, 1, 0), 204);
    }

    #[test]
    fn groups_are_checked() {
        let mut g = spec("x", None, 1);
        assert!(g.validate().unwrap_err().to_string().contains("shares"));
        g.shares = 1024;
        g.quota_ns = Some(500_000);
        assert!(g.validate().unwrap_err().to_string().contains("quota_us"));
        g.quota_ns = Some(50_000_000);
        g.burst_ns = 60_000_000;
        assert!(g.validate().unwrap_err().to_string().contains("burst_us"));
        let e = validate_groups(&[spec("a", Some("b"), 1024), spec("b", None, 1024)]).unwrap_err();
        assert!(e.to_string().contains("parent"), "{e}");
        let e = validate_groups(&[spec("a", None, 1024), spec("a", None, 1024)]).unwrap_err();
        assert!(e.to_string().contains("unique"), "{e}");
        assert!(spec("a b", None, 1024).validate().is_err());
    }
}
