//! The `Kernel` profile: one field per kernel behaviour, in the spirit of
//! `kernel/sched/features.h`. Each field is a tunable (a sysctl or CONFIG_
//! value), a scheduler feature bit, or one upstream change, named after the
//! kernel's feature or the commit that introduced it and documented with its
//! commit id and first release in its declaration ([`Kernel::FIELDS`]). A
//! preset is a list of these settings; the engine branches on the fields
//! only, so any single change can be flipped on its own (`sl.bisect`).

use crate::config::{Declared, Domain, Fields, NamedEnum, Value};
use crate::error::{CoreError, CoreResult};
use crate::{config_struct, named_enum};

named_enum! {
    /// `sysctl_sched_tunable_scaling` (kernel/sched_fair.c, 2.6.36; 3.8 same):
    /// how latency/min_granularity/wakeup_granularity scale with CPU count.
    pub enum TunableScaling { None = "none", Log = "log", Linear = "linear" }
}

named_enum! {
    /// How `idle_balance()` is throttled (kernel/sched.c 2.6.36,
    /// kernel/sched/fair.c 3.13 and 5.16; docs/newidle.md).
    pub enum NewidleThrottle {
        /// No throttle: every newly idle CPU balances.
        Off = "off",
        /// 2.6.36–3.12: skip when `rq->avg_idle < sysctl_sched_migration_cost`.
        AvgIdle = "avg_idle",
        /// 3.13 (9bd721c55c8a): as `avg_idle`, and stop the domain walk when
        /// `avg_idle < curr_cost + sd->max_newidle_lb_cost`.
        MaxLbCost = "max_lb_cost",
        /// 5.16 (c5b0a7eefc70 and its series, as 5.16–6.18 have it): no
        /// `avg_idle < migration_cost` test; skip when the root domain is not
        /// overloaded or `avg_idle` is below the lowest domain's
        /// `max_newidle_lb_cost`; the 3.13 per-domain budget; the cost and
        /// its decay kept by `update_newidle_cost()` (`sched::balance::newidle`).
        LbCost = "lb_cost",
    }
}

named_enum! {
    /// What a CFS bandwidth throttle does to a group's tasks
    /// (`sched::group::bandwidth`).
    pub enum CfsThrottle {
        /// 3.2-6.17: `throttle_cfs_rq()` dequeues the group's runqueue,
        /// every task of it at once.
        CfsRq = "cfs_rq",
        /// 6.18 (Aaron Lu's task based throttle model): each task is
        /// throttled at its next return to user space.
        Task = "task",
    }
}

named_enum! {
    /// Which wake-ups are queued on the target CPU's wake list
    /// (`ttwu_queue_wakelist()`): a function-call IPI instead of a
    /// reschedule IPI.
    pub enum TtwuQueue {
        /// 2.6.36-2.6.39: none.
        Off = "off",
        /// 3.0 (317f394160e9): onto a CPU sharing no cache with the waker.
        CrossLlc = "cross_llc",
        /// 6.0 (f3dd3f674555): also onto an idle CPU of the same LLC.
        Idle = "idle",
    }
}

named_enum! {
    /// How the sched-domain levels get their parameters.
    pub enum SdInit {
        /// The per-level SD_*_INIT tables of 2.6.36–3.x
        /// (include/linux/topology.h, arch/x86/include/asm/topology.h; the
        /// table is in docs/newidle.md), with `mc_busy_factor`,
        /// `mc_prefer_sibling` and `sd_numa`.
        V2_6 = "v2.6",
        /// The first unified `sd_init()` (143e1e28cb40, 3.16) as 4.9–4.13
        /// have it: intervals of the span's weight, busy_factor 32,
        /// imbalance_pct 125 (117 at the LLC, 110 at SMT) and the `*_idx`
        /// load indexes.
        V3_16 = "v3.16",
        /// The unified `sd_init()` of 5.x–6.18 (kernel/sched/topology.c):
        /// intervals of the span's weight, busy_factor 16, imbalance_pct 117
        /// (110 at SMT), no `*_idx`.
        V5 = "v5",
    }
}

named_enum! {
    /// How a CPU lowering its priority finds RT work waiting elsewhere
    /// (`pull_rt_task()`, kernel/sched/rt.c; `sched::rt`).
    pub enum RtPush {
        /// Before 4.1: pull under `double_lock_balance()` from every CPU of
        /// the root domain's `rto_mask` whose `highest_prio.next` beats ours.
        Pull = "pull",
        /// 4.1-4.14 RT_PUSH_IPI (b6366f048e0c): a per-source-CPU irq_work
        /// chain over `rto_mask` that never IPIs the initiator, filtered on
        /// `highest_prio.next`, with the RESTART flag.
        PushIpi = "push_ipi",
        /// 4bdced5c9a29 (2017, v4.15): one irq_work per root domain walking
        /// `rto_mask` from -1, the initiator included (a self-IPI), rescanned
        /// while `rto_loop_next` moves; no priority filter.
        PushIpiRd = "push_ipi_rd",
    }
}

named_enum! {
    /// What caps `rq->avg_idle` when a wake-up closes an idle period.
    pub enum AvgIdleCap {
        /// 2.6.36–3.12: 2·`sysctl_sched_migration_cost`.
        MigrationCost = "migration_cost",
        /// 3.13: 2·`rq->max_idle_balance_cost`.
        MaxIdleBalanceCost = "max_idle_balance_cost",
    }
}

named_enum! {
    /// Which tick kicks the NOHZ idle load balancer (`nohz_kick_needed()`).
    pub enum NohzIlb {
        /// 2.6.36 push model: a first-pick busy CPU kicks with ≥ 2 runnable
        /// tasks, a second-pick one with any.
        Push = "push",
        /// 3.3 (0b005cf54eac): ≥ 2 runnable, or an LLC group with more than
        /// one busy CPU (`nr_busy_cpus`).
        NrBusy = "nr_busy",
    }
}

named_enum! {
    /// The IPI that kicks the idle load balancer.
    pub enum NohzKickIpi {
        /// 2.6.36: `__smp_call_function_single()`.
        FunctionCall = "function_call",
        /// 3.3 (ca38062e57e9): `smp_send_reschedule()`.
        Resched = "resched",
    }
}

named_enum! {
    /// `select_idle_sibling()`.
    pub enum SelectIdleSibling {
        /// 2.6.36: any idle allowed CPU in target's SHARE_PKG_RESOURCES domains.
        AnyIdle = "any_idle",
        /// 3.8: target, then prev in the LLC, then a group of `sd_llc` (or
        /// below) whose CPUs are all idle.
        IdleGroup = "idle_group",
        /// 4.9+ (10e2f1acd010) as 6.x has it: target, prev in the LLC,
        /// `recent_used_cpu`, then `select_idle_smt`/`select_idle_core`/
        /// `select_idle_cpu` over `sd_llc` (scan depth from SIS_UTIL).
        IdleCpu = "idle_cpu",
    }
}

named_enum! {
    /// PELT, per-entity load tracking (`kernel/sched/pelt.c`).
    pub enum Pelt {
        /// Not tracked (no preset before 3.8 has it; the 3.8–3.13 presets
        /// leave it off, as their balancer never reads it).
        Off = "off",
        /// 5.7+ (the 4.3 rewrite 9d89c257dfb9 with 5.7's runnable_avg
        /// 9f68395333ad and 5.15's PELT_MIN_DIVIDER): load_avg,
        /// runnable_avg and util_avg per entity and per runqueue.
        V5_7 = "v5.7",
        /// 3.8 (9d85f21c94f7 and its series): per-entity
        /// `runnable_avg_sum`/`runnable_avg_period`, `load_avg_contrib`,
        /// the runqueue's `runnable_load_avg`/`blocked_load_avg` and
        /// `rq->avg`; no util (`sched::pelt`, the `v3_8` part). Feeds no
        /// mainline decision (3.8's task-group shares are not modelled);
        /// the power policies read it.
        V3_8 = "v3.8",
    }
}

named_enum! {
    /// Alex Shi's `sched_balance_policy` (power-aware scheduling series
    /// v4, Jan 2013; never merged): `performance` is mainline; the power
    /// policies pack tasks into few groups until a group's utilisation
    /// reaches its CPU weight (`powersaving`) or its capacity (`balance`).
    pub enum BalancePolicy {
        Performance = "performance",
        Balance = "balance",
        Powersaving = "powersaving",
    }
}

named_enum! {
    /// `wake_affine()`.
    pub enum WakeAffine {
        /// 2.6.36–4.13: instantaneous loads with the waker's weight taken
        /// off on a sync wake-up, half the level's imbalance_pct as slack.
        Load = "load",
        /// 4.14+ WA_IDLE only: `wake_affine_idle()`.
        Idle = "idle",
        /// WA_WEIGHT (with WA_BIAS) only: `wake_affine_weight()` on PELT load.
        Weight = "weight",
        /// 4.14+ default (WA_IDLE, WA_WEIGHT, WA_BIAS): idle test first,
        /// then the PELT-load comparison.
        IdleWeight = "idle_weight",
    }
}

named_enum! {
    /// The load balancer's `find_busiest_group()` family.
    pub enum Balancer {
        /// 2.6.36-3.13 (as far as 5.4): weighted `cpu_load[]` indices,
        /// `avg_load`, `fix_small_imbalance()` (`sched::balance`).
        CpuLoad = "cpu_load",
        /// 5.5+ (0b0695f2b34a) as 6.6-6.18 have it: group types, migration
        /// types, PELT load/util/runnable (`sched::balance::fbg_v55`).
        GroupType = "group_type",
    }
}

named_enum! {
    /// The NUMA levels of the sched-domain hierarchy.
    pub enum SdNuma {
        /// 2.6.36: one NODE level (SD_NODE_INIT: 8–32 ms intervals).
        Node = "node",
        /// 3.6 (cb83b629bae0): `sched_init_numa()`, one level per distance,
        /// `sd_numa_init()` (intervals scale with the span).
        NumaLevels = "numa_levels",
    }
}

named_enum! {
    /// `yield_task_fair()`: 2.6.36 keeps the yielder's vruntime (`compat_yield`
    /// moves it to the rightmost position); 2.6.39+ (ac53db596cc0) marks it
    /// the skip buddy, which `pick_next_entity()` then avoids.
    pub enum YieldImpl { UpdateCurr = "update_curr", SkipBuddy = "skip_buddy" }
}

named_enum! {
    /// The fair class's pick: CFS (leftmost vruntime, with buddies and the
    /// wake-up granularity) or EEVDF (147f3efaa241, v6.6: the eligible
    /// entity with the earliest virtual deadline; `sched::fair::eevdf`).
    pub enum Pick { Cfs = "cfs", Eevdf = "eevdf" }
}

named_enum! {
    /// What a field is: a tunable (sysctl or CONFIG_), a scheduler feature
    /// bit (features.h), one upstream change (a commit), or a removal
    /// experiment.
    pub enum FieldKind {
        Tunable = "tunable",
        Feature = "feature",
        Change = "change",
        Experiment = "experiment",
    }
}

/// A `Kernel` field's kernel origin (the `meta` of its declaration).
#[derive(Clone, Copy, Debug)]
pub struct Origin {
    pub kind: FieldKind,
    /// The kernel's own name: sysctl, feature, function or commit title.
    pub kernel: &'static str,
    /// Upstream commit (12 hex digits), `""` for tunables and features.
    pub commit: &'static str,
    /// First mainline release with the behaviour (`""`: always there).
    pub release: &'static str,
    /// Whether the commit id and title (and the release, unless it starts
    /// with `~`) were seen together in a public source; otherwise they are
    /// recollection, to be checked against the kernel's history.
    pub verified: bool,
}

const fn origin(
    kind: FieldKind,
    kernel: &'static str,
    commit: &'static str,
    release: &'static str,
    verified: bool,
) -> Origin {
    Origin {
        kind,
        kernel,
        commit,
        release,
        verified,
    }
}

/// A time tunable of at least `lo` ns, at most [`MAX_TUNABLE_NS`].
const fn ns(lo: u64) -> Domain {
    Domain::Int {
        lo,
        hi: MAX_TUNABLE_NS,
    }
}

const fn int(lo: u64, hi: u64) -> Domain {
    Domain::Int { lo, hi }
}

/// 10 s: far above any sane scheduler time tunable, small enough that
/// vruntime arithmetic cannot overflow.
const MAX_TUNABLE_NS: u64 = 10_000_000_000;

use FieldKind::{Change, Experiment, Feature, Tunable};

config_struct! {
    /// A kernel version's scheduler behaviour, one field per behaviour
    /// (times in nanoseconds). Each field is declared once, below: its
    /// type, its values, its value in the base preset `v2.6.36`, its kernel
    /// origin and its doc; the struct, [`Kernel::FIELDS`], get/set by name,
    /// the base preset ([`Kernel::declared`]), the Python annotations and
    /// stubs (`scripts/dev/gen_fields.py`) and the docs' tables all come
    /// from that one list (docs/development.md, "Adding a Kernel or
    /// CostModel field").
    #[derive(Clone, Debug, PartialEq)]
    pub struct Kernel {
        /// The preset this profile started from; `replace()` keeps it, so a
        /// result records its base version beside the changed fields.
        pub name: String,
    }
    meta Origin;
    migration_cost_ns: u64 [ns(0)] = 500_000
        => origin(Tunable, "sysctl_sched_migration_cost", "", "", true),
        "Cache-hot threshold of task_hot() and the avg_idle throttle of idle_balance(); not scaled by CPU count.";
    nr_migrate: u32 [int(1, 1_000_000)] = 32
        => origin(Tunable, "sysctl_sched_nr_migrate", "", "", true),
        "Tasks one move_tasks() pass may examine.";
    latency_ns: u64 [ns(100_000)] = 6_000_000
        => origin(Tunable, "sysctl_sched_latency", "", "", true),
        "Targeted preemption latency, before tunable scaling.";
    min_granularity_ns: u64 [ns(100_000)] = 750_000
        => origin(Tunable, "sysctl_sched_min_granularity", "", "", true),
        "Minimum slice, before tunable scaling.";
    wakeup_granularity_ns: u64 [ns(0)] = 1_000_000
        => origin(Tunable, "sysctl_sched_wakeup_granularity", "", "", true),
        "Wake-up preemption granularity, before tunable scaling.";
    tunable_scaling: TunableScaling = TunableScaling::Log
        => origin(Tunable, "sysctl_sched_tunable_scaling", "", "", true),
        "How the three CFS times scale with the CPU count: none, log (1+ilog2 n) or linear, n ≤ 8.";
    hz: u32 [Domain::IntIn(&[100, 250, 300, 1000])] = 1000
        => origin(Tunable, "CONFIG_HZ", "", "", true),
        "The tick rate, in Hz (the values Kconfig offers).";
    idle_balance: bool = true
        => origin(Experiment, "idle_balance() in schedule()", "", "", true),
        "False removes newidle balancing altogether, as the 2013 RFC proposed (seed case 2).";
    newidle_throttle: NewidleThrottle = NewidleThrottle::AvgIdle
        => origin(Change, "idle_balance() throttle", "9bd721c55c8a", "v3.13", true),
        "off: every newly idle CPU balances; avg_idle: skip when rq->avg_idle < migration_cost (2.6.36); max_lb_cost: also stop the domain walk when avg_idle < the cost so far + sd->max_newidle_lb_cost (3.13); lb_cost: 5.16's newidle_balance() (c5b0a7eefc70, e60b56e46b38, 9e9af819db5d: no migration_cost test; skip unless the root domain is overloaded and avg_idle reaches the lowest domain's max_newidle_lb_cost; the same per-domain budget; update_newidle_cost() keeps the max, and, with newidle_lb_cost_decay, decays it by 253/256 once 1 s has passed since it was last raised or decayed, also from rebalance_domains()).";
    newidle_rearm: bool = false
        => origin(Change, "sched: Force balancing on newidle balance if local group has capacity", "fab476228ba3", "v2.6.37-rc1", true),
        "pull_task() re-arms src and dst rq->avg_idle to 2·migration_cost and clears dst's idle_stamp (removed again in 2.6.37 by b5482cfa1c95): the VolanoMark regression of seed case 1.";
    newidle_force: bool = false
        => origin(Change, "sched: Force balancing on newidle balance if local group has capacity", "fab476228ba3", "v2.6.37-rc1", true),
        "find_busiest_group(): a NEWLY_IDLE pass forces a balance when the local group has capacity and the busiest has none.";
    // Upstream 2.6.36 did not clear it (d5ad140bc150 is 2.6.37); the
    // 2.6.36.3 vendor tree read for the model already has the
    // back-port (docs/sources.md).
    newidle_clear_stamp: bool = false
        => origin(Change, "sched: fix idle balancing (idle_stamp)", "d5ad140bc150", "v2.6.37", false),
        "idle_balance() clears rq->idle_stamp when it pulls a task, so the pull does not feed avg_idle.";
    newidle_lb_cost_decay: bool = false
        => origin(Change, "sched/balancing: Periodically decay max cost of idle balance", "f48627e686a6", "v3.13", true),
        "rebalance_domains() decays each sd->max_newidle_lb_cost by 1 % a second and refreshes rq->max_idle_balance_cost.";
    avg_idle_cap: AvgIdleCap = AvgIdleCap::MigrationCost
        => origin(Change, "sched/balancing: Periodically decay max cost of idle balance", "f48627e686a6", "v3.13", false),
        "The cap on rq->avg_idle when a wake-up closes an idle period: migration_cost (2·sysctl_sched_migration_cost, 2.6.36) or max_idle_balance_cost (2·rq->max_idle_balance_cost, 3.13; the commit is verified, that it is the one that moved the cap is recalled).";
    avg_idle_ewma_first: bool = false
        => origin(Change, "sched: Reduce overestimating rq->avg_idle", "abfafa54db9a", "~v3.13", false),
        "ttwu_do_wakeup() runs the 1/8 EWMA on every idle sample and clamps the result to the cap, instead of resetting avg_idle to the cap when a sample exceeds it (Jason Low).";
    newidle_random: bool = false
        => origin(Feature, "NI_RANDOM (sched/fair: Proportional newidle balance)", "33cf66d88306", "~v6.19", true),
        "sched_balance_newidle() balances a domain with probability ~(1 + newidle_ratio)/1024: a per-CPU pseudo-random d = rng % 1024 skips the domain when d > 1 + ratio; the ratio is the success count of a window of 1024 calls (halved at each 1024), a success weighted by 1024/(1 + ratio); starts at 512/256/512 (sd_init). Backported to 6.18.5 and 6.12/6.6 stable (Jan 2026). Draws come from per-CPU streams seeded from the run seed, apart from the workload's. Needs newidle_throttle=\"lb_cost\".";
    rt_push: RtPush = RtPush::Pull
        => origin(Feature, "RT_PUSH_IPI (sched/rt: Use IPI to trigger RT task push migration instead of pulling)", "b6366f048e0c", "v4.1", true),
        "How pull_rt_task() finds RT work queued on RT-overloaded CPUs when a CPU lowers its priority (an RT task or the stopper migration/N schedules out: need_pull_rt_task()). pull: before 4.1, for each CPU of rd->rto_mask whose highest_prio.next beats this rq, double_lock_balance() and pull the highest pushable task. push_ipi: 4.1-4.14 RT_PUSH_IPI, tell_cpu_to_push() starts this CPU's own irq_work chain (rt_rq->push_work) at the next overloaded CPU after it whose highest_prio.next beats it, never itself; try_to_push_tasks() pushes one task and forwards the IPI, restarting from the source on RESTART. push_ipi_rd: 4bdced5c9a29 (v4.15, 'sched/rt: Simplify the IPI based RT balancing logic'), one irq_work per root domain: rto_next_cpu() walks rto_mask from -1 including the initiating CPU (a self-IPI), rto_push_irq_work_func() runs push_rt_tasks() and forwards, and the walk restarts while rto_loop_next moved; no priority filter. Every walk step is an irq_work IPI counted in function_call_ipis. All of it is gated on rto_count > 0: without RT overload (no RT tasks) the field changes nothing. dd29c017aed6 ('sched/rt: Have RT_PUSH_IPI be default off for non PREEMPT_RT', May 2026, Cc: stable) turned the feature off by default without PREEMPT_RT, so a non-RT kernel with it pulls again.";
    sched_rt_period_us: i64 [Domain::SInt { lo: 1, hi: i32::MAX as i64 }] = 1_000_000
        => origin(Tunable, "sysctl_sched_rt_period (/proc/sys/kernel/sched_rt_period_us)", "", "", true),
        "The RT bandwidth period in us: each CPU's RT class may run sched_rt_runtime_us of every sched_rt_period_us (sched_rt_runtime_exceeded(), the rt_period_timer's do_sched_rt_period_timer()). Read by the RT class (the workload's RT tasks and the RT kernel threads of rt_kthreads).";
    sched_rt_runtime_us: i64 [Domain::SInt { lo: -1, hi: i32::MAX as i64 }] = 950_000
        => origin(Tunable, "sysctl_sched_rt_runtime (/proc/sys/kernel/sched_rt_runtime_us)", "", "", true),
        "The RT runtime per period in us; -1 (RUNTIME_INF) is no RT throttling. At most sched_rt_period_us, as sched_rt_global_validate() requires. 0 is no throttling either, as sched_rt_runtime_exceeded() forgets the time then. Simplifications: one budget per CPU, no RT_RUNTIME_SHARE borrowing between CPUs; 6.12+'s fair deadline server (fair_server: 50 ms per second for starved fair tasks, also at -1) is not modelled.";
    sched_rr_timeslice_ms: u64 [int(1, 3_600_000)] = 100
        => origin(Tunable, "sysctl_sched_rr_timeslice (/proc/sys/kernel/sched_rr_timeslice_ms)", "", "", true),
        "SCHED_RR's time slice in ms (RR_TIMESLICE, 100 ms): a workload task's slice is msecs_to_jiffies() of it, counted down by task_tick_rt(); when it runs out and another task of the same priority is queued, the task goes to the tail (requeue_task_rt()). The RR IRQ threads of rt_kthreads have the same slice.";
    sched_cfs_bandwidth_slice_us: u64 [int(1, 1_000_000)] = 5000
        => origin(Tunable, "sysctl_sched_cfs_bandwidth_slice (/proc/sys/kernel/sched_cfs_bandwidth_slice_us)", "", "", true),
        "The runtime a CPU's group runqueue draws from its group's quota pool at a time (assign_cfs_rq_runtime()), in us. Read only when a group has a quota (simulate(groups=[Group(quota_us=...)]), docs/groups.md).";
    cfs_throttle: CfsThrottle = CfsThrottle::CfsRq
        => origin(Change, "sched/fair: Switch to task based throttle model", "", "v6.18", false),
        "What a CFS bandwidth throttle does to the group's tasks. cfs_rq: throttle_cfs_rq() dequeues the group's runqueue with every task on it at once (3.2-6.17). task: each task is dequeued at its next return to user space (throttle_cfs_rq_work(), a task_work), so a task in a system call finishes it first; the throttled time starts with the first task off the CPU (Aaron Lu's series, merged for 6.18; the commit id is not recorded here). Read only when a group has a quota.";
    cpupri_idle: bool = true
        => origin(Change, "sched/cpupri: Remove pointless/broken CPUPRI_IDLE", "", "~v5.11", false),
        "cpupri keeps idle CPUs at a level below CPUs running fair tasks (CPUPRI_IDLE), so find_lowest_rq() prefers an idle CPU for a workload RT task; off: idle and fair CPUs are one level (CPUPRI_NORMAL) and the task's own CPU, then the waker's, wins among them. The commit id is not recorded here (unverified). Read for every RT task (a workload's, Workload.with_tasks(policy=\"fifo\"/\"rr\"), and the RT kernel threads of rt_kthreads).";
    rt_pull_skip_only_self: bool = false
        => origin(Change, "sched/rt: Do not pull from current CPU if only one CPU to pull", "f73c52a5bcd1", "~v4.15", false),
        "pull_rt_task() returns when rto_count == 1 and this CPU is the one in rto_mask (all rt_push modes). The commit id is from a distribution changelog, not verified against the upstream tree.";
    rt_rto_skip_self: bool = false
        => origin(Change, "sched/rt: Skip currently executing CPU in rto_next_cpu()", "94894c9c477e", "~v7.0", true),
        "rto_next_cpu() skips the CPU it runs on, so the push_ipi_rd walk never sends a self-IPI (Fixes: 4bdced5c9a29; Jan 2026). Read only under rt_push=\"push_ipi_rd\".";
    rt_overload_pushable: bool = false
        => origin(Change, "sched/rt: Make rt_rq->pushable_tasks updates drive rto_mask", "", "v6.8", false),
        "A CPU is RT-overloaded (its bit of rd->rto_mask, counted in rto_count, which gates pull_rt_task()) while it has a pushable RT task: queued, not running, allowed on more than one CPU (enqueue_pushable_task()/dequeue_pushable_task() set and clear it). Off: update_rt_migration()'s rule of 2.6.x-6.7, more than one RT task on the rt_rq (rt_nr_total, the running one included) with at least one allowed to migrate (rt_nr_migratory), so a migratable running task beside a pinned queued one overloads the CPU though nothing can be pushed. Valentin Schneider's commit; its id is not recorded here (unverified). Read only in runs with RT tasks.";
    avg_idle_on_move: bool = false
        => origin(Change, "sched: Update rq->avg_idle when a task is moved to an idle CPU", "4b603f1551a7", "~v7.0", true),
        "rq->avg_idle is sampled when the CPU leaves idle (update_rq_avg_idle() from put_prev_task_idle()) instead of in the wake-up (ttwu_do_activate()), so a task placed on an idle CPU by fork, exec or the balancer also closes the idle period; same cap and EWMA (avg_idle_cap, avg_idle_ewma_first). With the idle_stamp guard its follow-up fix restores (no stamp, no sample). Merged into tip sched/core in Jan 2026.";
    idle_cpu_nr_running: bool = false
        => origin(Change, "sched: Fix idle_cpu()", "908a3283728d", "~v3.2", true),
        "idle_cpu() also requires an empty runqueue: a wakee queued on an idle CPU whose IPI is in flight counts as busy (balancer and wake-up placement).";
    group_imb_nr_running: bool = false
        => origin(Change, "sched: Set group_imb only a task can be pulled from the busiest cpu", "2582f0eba540", "~v2.6.37", false),
        "update_sg_lb_stats(): group_imb when max−min load ≥ avg_load_per_task and max−min nr_running > 1 (was max−min > 2·avg_load_per_task).";
    prefer_sibling_local_capacity: bool = false
        => origin(Change, "sched: Drop group_capacity to 1 only if local group has extra capacity", "75dd321d79d4", "~v2.6.37", false),
        "update_sd_lb_stats(): SD_PREFER_SIBLING caps a remote group's capacity at 1 only while the local group has capacity.";
    force_balance_group_imb: bool = false
        => origin(Change, "find_busiest_group(): if (sds.group_imb) goto force_balance", "866ab43efd32", "~v3.1", false),
        "find_busiest_group(): an imbalanced busiest group (group_imb) forces a balance, skipping the load tests.";
    idle_cpus_balanced: bool = false
        => origin(Change, "sched: Use group weight, idle cpu metrics to fix imbalances during idle", "aae6d3ddd8b9", "~v2.6.37-rc1", false),
        "find_busiest_group(): a CPU_IDLE pass is balanced when this group has at most one idle CPU more than the busiest and the busiest runs no more tasks than CPUs, instead of the imbalance_pct test.";
    lb_cfs_tasks: bool = false
        => origin(Change, "sched: Ditch per cgroup task lists for load-balancing", "367456c756a6", "~v3.4", true),
        "move_tasks(): one walk of rq->cfs_tasks of at most min(nr_migrate, nr_running) tasks, skipped ones rotated to the tail (was balance_tasks() passes of nr_migrate+1 repeated while they move something).";
    newidle_no_nr_balance_failed: bool = false
        => origin(Change, "sched: Increment cache_nice_tries only on periodic lb", "58b26c4c0257", "~v2.6.37", true),
        "load_balance(): a failed NEWLY_IDLE pass no longer increments sd->nr_balance_failed.";
    newidle_active_balance: bool = false
        => origin(Change, "need_active_balance() without the sd_idle/power-savings early return", "8e7fbcbc22c1", "v3.5", false),
        "need_active_balance(): a failed NEWLY_IDLE pass may start active balancing (nr_balance_failed > cache_nice_tries + 2); 2.6.36 returned 0 for NEWLY_IDLE.";
    newidle_keep_interval: bool = false
        => origin(Change, "sched/fair: Don't increase sd->balance_interval on newidle balance", "3f130a37c442", "~v4.20", true),
        "load_balance()'s out_one_pinned path (balanced, or every task pinned) does not double sd->balance_interval on a CPU_NEWLY_IDLE pass, which disregards the interval; false: the 2.6.36-3.13 doubling on every balanced pass.";
    preemption: bool = false
        => origin(Tunable, "CONFIG_PREEMPTION (CONFIG_PREEMPT before 5.3)", "", "", true),
        "A preemptible kernel: a NEWLY_IDLE pass stops after the first task it moves (the #ifdef in detach_tasks() of 6.x; in balance_tasks()/move_tasks() of 2.6.36-3.13, where 2.6.36's outer move_tasks() loop also stops once this CPU has a task). Honoured by both balancers. True in v6.6/v6.18 (PREEMPT_DYNAMIC selects PREEMPTION, as Debian and this machine build them); false in the 2.6.36-3.13 presets (their behaviour so far: a non-preemptible build).";
    smt_ignore_hot: bool = false
        => origin(Change, "sched/fair: Ignore cache hotness for SMT migration", "ec73240b1627", "~v5.10", true),
        "task_hot() returns 0 in a domain with SD_SHARE_CPUCAPACITY (an SMT level): siblings share caches, so neither the buddy nor the migration_cost test makes a task cache hot there.";
    nohz_ilb: NohzIlb = NohzIlb::Push
        => origin(Change, "sched, nohz: Implement sched group, domain aware nohz idle load balancing", "0b005cf54eac", "v3.3", true),
        "push: 2.6.36's first/second-pick kick; nr_busy: nohz_kick_needed() kicks with ≥ 2 runnable tasks or an LLC group with more than one busy CPU.";
    nohz_kick_ipi: NohzKickIpi = NohzKickIpi::FunctionCall
        => origin(Change, "sched: Use resched IPI to kick off the nohz idle balance", "ca38062e57e9", "~v3.2", true),
        "function_call: the idle load balancer is kicked by a function-call IPI (2.6.36); resched: by a reschedule IPI.";
    nohz_kick_after_rebalance: bool = false
        => origin(Change, "trigger_load_balance(): nohz kick as an independent if", "0b005cf54eac", "~v3.3", false),
        "trigger_load_balance() tests for a NOHZ kick at every tick, also when it raised SCHED_SOFTIRQ (2.6.36: else-if).";
    select_idle_sibling: SelectIdleSibling = SelectIdleSibling::AnyIdle
        => origin(Change, "select_idle_sibling()", "4dcfe1025b51", "v3.2", true),
        "any_idle: any idle allowed CPU of target's SHARE_PKG_RESOURCES domains (2.6.36); idle_group: target, prev in the LLC, then a group of sd_llc whose CPUs are all idle (4dcfe1025b51 and later, as in 3.8); idle_cpu: 4.9+ (10e2f1acd010) as 6.x has it, target, prev in the LLC, recent_used_cpu, then select_idle_smt/select_idle_core/select_idle_cpu over sd_llc (scan depth from sis_util).";
    mc_busy_factor: u32 [int(1, 1024)] = 1
        => origin(Tunable, "busy_factor of the MC sched domain (SD_MC_INIT; /proc/sys/kernel/sched_domain/cpuN/domainM/busy_factor)", "", "", true),
        "busy_factor of the MC level: 1 in 2.6.36/2.6.37 (MC balances every 1-4 ms even when busy), 64 by 3.8 (the commit that changed the default is not identified).";
    mc_prefer_sibling: bool = true
        => origin(Change, "sd_balance_for_mc_power()", "8e7fbcbc22c1", "v3.5", true),
        "The MC level carries SD_PREFER_SIBLING (2.6.36 with the power-savings knobs off); removed with the power-savings knobs.";
    sd_numa: SdNuma = SdNuma::Node
        => origin(Change, "sched/numa: Rewrite the CONFIG_NUMA sched domain support", "cb83b629bae0", "~v3.5", true),
        "node: one NODE level (SD_NODE_INIT, 8-32 ms); numa_levels: sched_init_numa() levels per distance with sd_numa_init() intervals of the span's weight.";
    sd_init: SdInit = SdInit::V2_6
        => origin(Change, "sd_init() (kernel/sched/topology.c); sched/fair: Reduce minimal imbalance threshold", "2208cdaa56c9", "~v5.10", true),
        "v2.6: the per-level SD_*_INIT tables of 2.6.36-3.x (with mc_busy_factor, mc_prefer_sibling, sd_numa); v3.16: the first unified sd_init() as 4.9-4.13 have it (read in a 4.13-era kernel/sched/topology.c; 4.11 has the same function in core.c, assumed identical): min_interval = span weight ms, max_interval twice that, busy_factor 32, imbalance_pct 125, balance_interval = span weight; SMT (SHARE_CPUCAPACITY): 110 and PREFER_SIBLING, idx 0; LLC (SHARE_PKG_RESOURCES): 117, cache_nice_tries 1, busy_idx 2, no PREFER_SIBLING; NUMA: cache_nice_tries 2, busy_idx 3, idle_idx 2, SERIALIZE; any other level (DIE): PREFER_SIBLING, cache_nice_tries 1, busy_idx 2, idle_idx 1; level names SMT, MC, DIE, NUMA; mc_busy_factor, mc_prefer_sibling and sd_numa unread; v5: the unified sd_init() of 5.x-6.18: min_interval = span weight ms, max_interval twice that, busy_factor 16, imbalance_pct 117 (110 at SMT), cache_nice_tries 0 at SMT, 1 at the LLC and other levels, 2 at NUMA, balance_interval = span weight; every level NEWIDLE, EXEC, FORK, WAKE_AFFINE and PREFER_SIBLING plus its topology flags, NUMA levels without PREFER_SIBLING and with SERIALIZE; no *_idx (the load indexes read as 0: instantaneous load). Level names SMT, MC, PKG, NUMA. Under v5, mc_busy_factor, mc_prefer_sibling and sd_numa are unread. sd_init() itself came with 143e1e28cb40 (3.16, recalled, with 125 and busy_factor 32 and the *_idx); 2208cdaa56c9 (read: 125 -> 117) and its series' busy-interval change (32 -> 16) give the table of 5.10-6.18 (read in a 6.x/7.x topology.c).";
    compat_yield: bool = false
        => origin(Tunable, "sysctl_sched_compat_yield", "", "", true),
        "sched_yield() moves the yielder right of the rightmost task (2.6.23-2.6.38).";
    yield_impl: YieldImpl = YieldImpl::UpdateCurr
        => origin(Change, "sched: Use a buddy to implement yield_task_fair()", "ac53db596cc0", "~v2.6.39", true),
        "update_curr: yield only accounts the runtime (2.6.36); skip_buddy: the yielder becomes the skip buddy that pick_next_entity() avoids.";
    next_buddy_over_last: bool = false
        => origin(Change, "sched: Use a buddy to implement yield_task_fair()", "ac53db596cc0", "~v2.6.39", true),
        "pick_next_entity() tests last then next, so next wins (2.6.36: next then last, last wins).";
    preempt_sets_next_buddy: bool = false
        => origin(Change, "sched: Next buddy hint on sleep and preempt path", "2f36825b176f", "~v3.0", true),
        "check_preempt_wakeup(): a wakee that preempts is always marked the next buddy.";
    gentle_fair_sleepers: bool = true
        => origin(Feature, "GENTLE_FAIR_SLEEPERS", "", "", true),
        "Sleeper credit is half the latency.";
    start_debit: bool = true
        => origin(Feature, "START_DEBIT", "", "", true),
        "A new task starts one vslice to the right.";
    wakeup_preemption: bool = true
        => origin(Feature, "WAKEUP_PREEMPT (WAKEUP_PREEMPTION in 3.8)", "", "", true),
        "Wake-ups may preempt the running task.";
    last_buddy: bool = true
        => origin(Feature, "LAST_BUDDY", "", "", true),
        "A preempted task is marked the last buddy.";
    next_buddy: bool = false
        => origin(Feature, "NEXT_BUDDY", "", "", true),
        "A woken task is marked the next buddy (under eevdf: pick_next_entity() takes it when eligible, 6.6 NEXT_BUDDY / 6.12 PICK_BUDDY).";
    pelt: Pelt = Pelt::Off
        => origin(Change, "sched/fair: Rewrite runnable load and utilization average tracking", "9d89c257dfb9", "v4.3", true),
        "off: no per-entity load tracking; v5.7: load_avg, runnable_avg (9f68395333ad, 5.7) and util_avg per task and per runqueue, 1024 us periods, y^32 = 1/2, blocked load decaying (kernel/sched/pelt.c as 5.15-6.18 have it). Reported in r.tasks and r.cpus; read by wake_affine=\"weight\"/\"idle_weight\", sis_util and balancer=\"group_type\". v3.8: 3.8's per-entity load tracking (9d85f21c94f7, verified against 3.8-era fair.c copies): runnable_avg_sum/runnable_avg_period per entity and rq->avg, load_avg_contrib, runnable_load_avg and blocked_load_avg with decay_counter; no util. Fed no mainline 3.8 decision the model has (only task-group shares), so the v3.8/v3.13 presets leave it off; reported in r.tasks/r.cpus (load_avg, runnable_avg as a ratio of 1024, util_avg NaN); the power balance policies track it whatever this field says.";
    wake_wide: bool = false
        => origin(Change, "sched/fair: Beef up wake_wide()", "63b0e9edceec", "~v4.3", false),
        "select_task_rq_fair(): record_wakee() counts the waker's wakee flips (halved once a second) and wake_wide() refuses the affine wake-up when the smaller of the waker's and wakee's flips is at least sd_llc_size and the larger at least sd_llc_size times it; an unaffine wake-up then still runs select_idle_sibling(prev, prev) (the 6.x path). The first wake_wide, 62470419e993 (3.12), had a different test and is not modelled.";
    wake_affine: WakeAffine = WakeAffine::Load
        => origin(Change, "sched/core: Fix wake_affine() performance regression (WA_IDLE, WA_WEIGHT, WA_BIAS)", "d153b153446f", "~v4.14", false),
        "load: 2.6.36-4.13 wake_affine() on instantaneous loads; idle: wake_affine_idle() only (this CPU idle and cache-affine, a sync wake-up onto a CPU running only the waker, or prev idle); weight: wake_affine_weight() only, PELT cpu_load() against task_h_load() with WA_BIAS's half imbalance_pct; idle_weight: both, the 4.14+ default. weight and idle_weight need pelt. The imbalance_pct is the domain's: 125 at MC under sd_init=\"v2.6\" (a bias of 112), 117 under sd_init=\"v5\" (108, as 6.x).";
    recent_used_cpu: bool = false
        => origin(Change, "sched/fair: Use a recently used CPU as an idle candidate and the basis for SIS", "32e839dda3ba", "~v4.15", false),
        "select_idle_sibling(): before scanning the LLC, try the CPU the task last ran on before prev (p->recent_used_cpu) if it is idle, cache-affine with the target and allowed. Needs select_idle_sibling=\"idle_cpu\".";
    sched_idle_cpu: bool = false
        => origin(Change, "sched/fair: Fall back to sched-idle CPU if idle CPU isn't found", "3c29e651e16d", "~v5.4", false),
        "select_idle_sibling() (the select_idle_sibling=\"idle_cpu\" path): a CPU whose runnable tasks are all SCHED_IDLE (sched_idle_cpu()) counts as idle for target, prev, recent_used_cpu, select_idle_smt() and the select_idle_cpu() scan, and is select_idle_core()'s fallback (17346452b25b, ~v5.6, made the uses consistent as 6.x has them). Not modelled: its other 6.x uses, find_idlest_group_cpu() on the fork path (the model's fork placement is 2.6.36's find_idlest_cpu), the busy factor of sched_balance_domains() and the next_balance reset when a dequeue leaves only SCHED_IDLE tasks (323af6deaf70, ~v5.6). Changes nothing unless some task has policy \"idle\" (Workload.with_tasks). Needs select_idle_sibling=\"idle_cpu\".";
    ttwu_queue: TtwuQueue = TtwuQueue::Off
        => origin(Change, "sched: Remove the limitation of WF_ON_CPU on wakelist if wakee cpu is idle", "f3dd3f674555", "~v6.0", false),
        "Which wake-ups go by the target CPU's wake list (ttwu_queue_wakelist(), TTWU_QUEUE) and so send a function-call IPI (counted in function_call_ipis, /proc/interrupts' CAL) instead of a reschedule IPI (resched_ipis, RES). off: none (2.6.36-2.6.39). cross_llc: a wake-up onto a CPU sharing no cache with the waker (317f394160e9, 'sched: Move the second half of ttwu() to the remote cpu', v3.0). idle: that, and a wake-up onto an idle CPU (nr_running 0) of the same LLC (this commit, 6.0-6.18). The v3.8-v4.11 presets leave it off although 3.x had cross_llc: it moves seed case 4's function-call IPI counts, which are to be redone against the real benchmark (docs/cases/rt-push-ipi.md). Changes only the IPI counts: the model still enqueues at the waker, with the reschedule IPI's latency; the idle loop never polls (no IPI saved by set_nr_if_polling()); every queueing sends its IPI.";
    sched_idle_balance: bool = false
        => origin(Change, "sched/fair: Load balance aggressively for SCHED_IDLE CPUs", "323af6deaf70", "~v5.6", false),
        "A CPU whose runnable tasks are all SCHED_IDLE (sched_idle_rq()) balances periodically at the idle interval (no busy_factor, rebalance_domains()), and a dequeue that leaves only SCHED_IDLE tasks on a CPU sets its rq->next_balance to now (dequeue_task_fair(): 'balance early to pull high priority tasks'). Changes nothing unless some task has policy \"idle\" (Workload.with_tasks).";
    idle_preempt_non_idle: bool = false
        => origin(Change, "check_preempt_wakeup(): 'Idle tasks are by definition preempted by non-idle tasks', tested before the BATCH/IDLE wakee return (the 2.6.36-3.x order is the reverse, 'preempted by everybody' after it)", "", "5.x (by task_has_idle_policy(), 5.0)", false),
        "The order of check_preempt_wakeup()'s two policy tests. false (2.6.36-4.x): 'Batch and idle tasks do not preempt' returns first, so a SCHED_BATCH wakee never preempts, not even a SCHED_IDLE curr; a SCHED_IDLE curr is 'preempted by everybody' (every SCHED_NORMAL wakee). true (5.x, and check_preempt_wakeup_fair() in 6.6-6.18): a SCHED_IDLE curr is preempted by every non-idle wakee, SCHED_BATCH included, before that return. The eevdf pick always has the later order. The commit that swapped them is not identified.";
    sis_util: bool = false
        => origin(Change, "sched/fair: Introduce SIS_UTIL to search idle CPU based on sum of util_avg", "70fb5ccf2ebb", "~v6.0", false),
        "select_idle_cpu() scans at most sd_llc_shared->nr_idle_scan CPUs, which periodic load balancing at the LLC level sets from the LLC's summed PELT util (the quadratic of update_idle_cpu_scan(): no scan at 100/imbalance_pct busy, 85 % under sd_init=\"v5\"'s LLC imbalance_pct of 117 as in 6.x, 80 % under sd_init=\"v2.6\"'s 125). Simplified: every CPU's LLC pass refreshes it, where 6.x does so only on the CPU that should_we_balance() picks; the hint starts at the LLC size (a long-idle machine), where the kernel's zeroed sd_llc_shared starts at 0. Needs pelt and select_idle_sibling=\"idle_cpu\".";
    balancer: Balancer = Balancer::CpuLoad
        => origin(Change, "sched/fair: Rework load_balance()", "0b0695f2b34a", "v5.5", false),
        "cpu_load: the 2.6.36-3.13 find_busiest_group() on cpu_load[] indices, avg_load and fix_small_imbalance(); group_type: Vincent Guittot's 5.5 rework as 6.6-6.18 have it (docs/balancer.md): groups classified has_spare < fully_busy < misfit_task < smt_balance < asym_packing < imbalanced < overloaded from PELT load_avg, util_avg and runnable_avg, calculate_imbalance() picking migrate_load/util/task/misfit, find_busiest_queue() and detach_tasks() per migration type (the shr_bound(load, nr_balance_failed) relaxation), need_active_balance() only for migrate_task/misfit. Needs pelt. Reads the domain parameters sd_init gives (6.x's 117/110 and SD_PREFER_SIBLING under sd_init=\"v5\", the 2.6.36-3.13 tables under \"v2.6\"); CPU capacity is 1024 per CPU, SMT threads included.";
    // Mainline never merged Alex Shi's series: performance, and
    // none of its behaviours.
    balance_policy: BalancePolicy = BalancePolicy::Performance
        => origin(Tunable, "sched_balance_policy (/sys/devices/system/cpu/sched_balance_policy/current_sched_balance_policy)", "", "", false),
        "Alex Shi's power-aware scheduling, patch series v4 (24 Jan 2013, 'simplified fork, release load avg and power awareness scheduling'; never merged; the series' versions, dates and patch subjects: docs/power-policies.md, \"The series\"). performance: mainline (every power_* field unread). balance / powersaving: a sched domain whose utilisation (3.8 PELT rq->avg ratio times nr_running, per CPU) plus the placed task's stays below its capacity (balance) or CPU weight (powersaving), times 1024, is packed by the power_* behaviours that are on; above it the domain falls back to performance. The power policies track 3.8 PELT (as pelt=\"v3.8\") whatever pelt says. [unverified: the v4-v7 fair.c was never read; semantics from the cover letters and patch subjects]";
    power_fork_exec: bool = false
        => origin(Change, "sched: add power aware scheduling in fork/exec/wake", "", "patch v4", false),
        "select_task_rq_fair() at fork (the model has no exec): under a power policy, get_cpu_for_power_policy() in the highest SD_BALANCE_FORK domain: unless the domain is full (is_sd_full(), the new task counted as FULL_UTIL = 1024), the task goes to the idlest CPU (least utilisation, then fewest tasks) of the group_leader, the group with the least free room still able to take a full CPU's worth. [unverified: reconstructed from the patch subjects]";
    power_wake: bool = false
        => origin(Change, "sched: add power aware scheduling in fork/exec/wake", "", "patch v4", false),
        "select_task_rq_fair() at wake-up: under a power policy, the same group_leader placement in the highest load-balancing domain of the waking CPU, the task counted with its own 3.8 PELT utilisation (runnable_avg_sum*1024/(runnable_avg_period+1)); the affine path otherwise, and when the domain is full. [unverified]";
    power_burst_threshold_ns: u64 [ns(0)] = 1_000_000
        => origin(Tunable, "sysctl_sched_burst_threshold (sched: add sched_burst_threshold_ns as wakeup burst indicator; using avg_idle to detect bursty wakeup)", "", "patch v4", false),
        "power_wake skips power placement while the waking CPU's rq->avg_idle is below this (a burst of wake-ups): 0 never skips. Default 1 ms, recalled, not read. [unverified]";
    power_pack_transitory: bool = false
        => origin(Change, "sched: packing transitory tasks in wakeup power balancing", "", "patch v4", false),
        "power_wake puts a small waking task (its utilisation times 4 fits) on the waking CPU, else on the leader CPU with the least vacancy FULL_UTIL - util - 4*task util > 0 (a running CPU) instead of the idlest (find_leader_cpu()); a task too big for any goes to the idlest CPU of the leader. [unverified]";
    power_lb: bool = false
        => origin(Change, "sched: pull all tasks from source group; add power/performance balance allow flag", "", "patch v4", false),
        "Periodic load_balance() under a power policy, in a domain that is not full: when this CPU is idle and its group is the group_leader with room for them, it pulls every task of the least-utilised non-idle group (queued tasks at once, a running one by active balance), and a pass that moved tasks this way does not also run the performance balance (the allow flag); otherwise, or when the domain is full, the performance balance runs. [unverified]";
    pick: Pick = Pick::Cfs
        => origin(Change, "sched/fair: Implement an EEVDF-like scheduling policy", "147f3efaa241", "v6.6", true),
        "cfs: leftmost vruntime with buddies and wake-up granularity; eevdf: avg_vruntime, lag, eligibility and virtual deadlines from base_slice_ns, pick_eevdf() at pick, tick and wake-up (latency_ns, min_granularity_ns, wakeup_granularity_ns, gentle_fair_sleepers, start_debit, last_buddy, compat_yield, yield_impl, next_buddy_over_last and preempt_sets_next_buddy are then unread, as 5e963f2bd465 'Commit to EEVDF' removed them).";
    // The EEVDF fields of the CFS presets are those of the 6.18 kernel
    // this machine runs (0.70 ms base slice since 2ae891b82695, the
    // 6.17 slice protection, the 6.18.2-stable yield), so that
    // `replace(pick="eevdf")` gives today's EEVDF.
    base_slice_ns: u64 [ns(100_000)] = 700_000
        => origin(Tunable, "sysctl_sched_base_slice", "", "v6.6", true),
        "EEVDF request size r_i before tunable scaling: deadline = vruntime + base_slice/w; 0.75 ms in 6.6-6.14, 0.70 ms from 6.15 (2ae891b82695).";
    place_lag: bool = true
        => origin(Feature, "PLACE_LAG", "86bfbb7ce4f6", "v6.6", true),
        "place_entity() keeps an entity's lag (vlag, inflated by (W + w)/W) across sleep and migration; off: it is placed at avg_vruntime with zero lag.";
    place_deadline_initial: bool = true
        => origin(Feature, "PLACE_DEADLINE_INITIAL", "147f3efaa241", "v6.6", false),
        "A new task (ENQUEUE_INITIAL) starts with half a slice to its deadline.";
    run_to_parity: bool = true
        => origin(Feature, "RUN_TO_PARITY", "63304558ba5d", "v6.6", true),
        "Slice protection: the picked entity keeps the CPU against wake-ups until its deadline (or the 0-lag point), unless it stops being eligible.";
    preempt_short: bool = true
        => origin(Feature, "PREEMPT_SHORT", "85e511df3cec", "v6.12", true),
        "A woken entity with a shorter slice may cancel the running entity's slice protection (do_preempt_short()/did_preempt_short()).";
    delay_dequeue: bool = true
        => origin(Feature, "DELAY_DEQUEUE", "152e11f6df29", "v6.12", true),
        "A task going to sleep while not eligible (negative lag) stays queued (sched_delayed) until it is picked, which dequeues it, or woken, which requeues it in place.";
    delay_zero: bool = true
        => origin(Feature, "DELAY_ZERO", "54a58a787791", "v6.12", true),
        "A delayed entity's positive lag is clipped to 0 when its dequeue completes or it is woken (requeue_delayed_entity()).";
    place_rel_deadline: bool = true
        => origin(Feature, "PLACE_REL_DEADLINE", "82e9d0456e06", "v6.12", true),
        "A migration (dequeue that is not a sleep) keeps the virtual deadline relative to vruntime, so the entity keeps its place in its request.";
    run_to_parity_min_slice: bool = true
        => origin(Change, "sched/fair: Limit run to parity to the min slice of enqueued entities", "052c3d87c82e", "~v6.17", true),
        "6.17 slice protection (with 0b9ca2dcabc3, 74eec63661d4, 9de74a9850b9): se->vprot = min(deadline, vruntime + the smallest slice queued) or, without run_to_parity, the unscaled base slice; update_curr() reschedules whenever protection has ended; a shorter-slice wakee is tested with protection lifted.";
    yield_forfeit: bool = true
        => origin(Change, "sched/fair: Forfeit vruntime on yield", "79104becf42b", "~v6.19", true),
        "Under eevdf, sched_yield() sets an eligible yielder's vruntime to its deadline and starts a new request (backported to 6.18.2 and 6.12 stable); false: 6.6's deadline += one vslice.";
    // fs/pipe.c, not kernel/sched: what a read of a full pipe wakes.
    pipe_still_full_no_wake: bool = true
        => origin(Change, "pipe_read: don't wake up the writer if the pipe is still full", "aaec5a95d596", "v6.14", true),
        "pipe_read() wakes a writer of a pipe that was full only when the read released a buffer (wake_writer |= pipe_full() as the tail advances); false: 5.5-6.13's rule, a read that began on a full pipe wakes a writer even if it only took part of a buffer, and the writer finds the pipe still full and sleeps again. The pre-5.5 presets keep true, an approximation: their pipe_read() woke the pipe's one wait queue after freeing any buffer (do_wakeup), and only writers of a full pipe wait there; that queue's non-exclusive wake-up of every waiter (before 0ddad21d3e99, v5.5) is not modelled.";
}

/// A field, or one value of a field, of an earlier schedlab version, and
/// what replaced it: setting it is refused with that explanation.
#[derive(Clone, Copy, Debug)]
pub struct Retired {
    pub field: &'static str,
    /// `None`: the whole field.
    pub value: Option<&'static str>,
    pub why: &'static str,
}

impl Retired {
    /// Whether setting `name` (to `v`, when given) is this retirement: the
    /// whole field, or (with a value) the retired value.
    fn matches(&self, name: &str, v: Option<&Value>) -> bool {
        name == self.field
            && match (self.value, v) {
                (None, _) => true,
                (Some(r), Some(Value::Str(s))) => s == r,
                (Some(_), _) => false,
            }
    }

    fn error(&self) -> CoreError {
        CoreError::Retired {
            name: match self.value {
                None => self.field.to_string(),
                Some(v) => format!("{}={v:?}", self.field),
            },
            why: self.why.to_string(),
        }
    }
}

const fn retired(field: &'static str, why: &'static str) -> Retired {
    Retired {
        field,
        value: None,
        why,
    }
}

/// The retired fields and values.
pub const RETIRED: &[Retired] = &[
    retired("lb_rules", "split into idle_cpu_nr_running, group_imb_nr_running, prefer_sibling_local_capacity, force_balance_group_imb, idle_cpus_balanced, lb_cfs_tasks, newidle_no_nr_balance_failed and newidle_active_balance"),
    retired("nohz_kick", "split into nohz_ilb, nohz_kick_ipi and nohz_kick_after_rebalance"),
    retired("idle_sibling", "renamed select_idle_sibling, with values \"any_idle\" (was \"2.6.36\") and \"idle_group\" (was \"3.8\")"),
    retired("domain_defaults", "split into mc_busy_factor, mc_prefer_sibling and sd_numa"),
    retired("buddy_rules", "split into next_buddy_over_last and preempt_sets_next_buddy"),
    retired("load_metric", "replaced by balancer=\"group_type\" (the 5.5+ balancer on PELT load, with pelt=\"v5.7\")"),
    Retired {
        field: "newidle_throttle",
        value: Some("avg_idle_rearm"),
        why: "the re-arm of fab476228 is its own field now: newidle_throttle=\"avg_idle\", newidle_rearm=True",
    },
];

/// Declares the kernel presets, each once: its name, its constructor and
/// what it changes on the preset it builds on (`declared`: the fields'
/// declared values). Generates the constructors, `PRESETS` and
/// [`KERNEL_PRESETS`] (the names, in order).
macro_rules! kernel_presets {
    ($(
        $(#[$m:meta])*
        $name:literal => fn $f:ident() = $base:ident { $($field:ident: $value:expr),* $(,)? }
    )+) => {
        impl Kernel {
            $(
                $(#[$m])*
                pub fn $f() -> Self {
                    Kernel {
                        name: $name.into(),
                        $($field: $value,)*
                        ..kernel_presets!(@base $base)
                    }
                }
            )+

            /// The settings a preset writes that it already has from the
            /// preset it builds on (each should be said once); a test wants
            /// none.
            pub fn preset_restatements() -> Vec<String> {
                let mut out = Vec::new();
                $({
                    let (base, k) = (kernel_presets!(@base $base), Kernel::$f());
                    let _ = (&base, &k); // a preset that changes nothing reads neither
                    $(if k.$field == base.$field {
                        out.push(format!("{}: {}", $name, stringify!($field)));
                    })*
                })+
                out
            }
        }

        /// Every preset: its name and constructor, oldest first.
        const PRESETS: &[(&str, fn() -> Kernel)] = &[$(($name, Kernel::$f)),+];

        /// The preset names, oldest first.
        pub const KERNEL_PRESETS: &[&str] = &[$($name),+];
    };
    (@base declared) => { Kernel::declared(String::new()) };
    (@base $base:ident) => { Kernel::$base() };
}

kernel_presets! {
    /// 2.6.36 (kernel/sched_fair.c, kernel/sched.c, read in a 2.6.36.3-based
    /// tree: docs/sources.md): 6 ms latency, 0.75 ms min granularity (that
    /// tree's values, 21406928afe4; whether upstream 2.6.36 or 2.6.37 first
    /// had them is unverified), 1 ms wakeup granularity,
    /// 0.5 ms migration cost, LOG scaling.
    "v2.6.36" => fn v2_6_36() = declared {}
    /// 2.6.37-rc1: fab476228 adds the NEWLY_IDLE forced balance and makes
    /// `pull_task()` re-arm `avg_idle` (seed case 1).
    "v2.6.37-rc1" => fn v2_6_37_rc1() = v2_6_36 {
        newidle_force: true,
        newidle_rearm: true,
    }
    /// 2.6.37: the forced balance stays; b5482cfa1c95 removes the re-arm and
    /// d5ad140bc150 clears `idle_stamp` on a newidle pull.
    "v2.6.37" => fn v2_6_37() = v2_6_36 {
        newidle_force: true,
        newidle_clear_stamp: true,
    }
    /// 3.8 (kernel/sched/fair.c, core.c, features.h of 3.8.13, read in
    /// opennetworklinux/linux-3.8.13 @ 53bb9ce7ba6a; docs/sources.md):
    /// every change between 2.6.37 and 3.8 that the model has.
    "v3.8" => fn v3_8() = v2_6_37 {
        idle_cpu_nr_running: true,
        group_imb_nr_running: true,
        prefer_sibling_local_capacity: true,
        force_balance_group_imb: true,
        idle_cpus_balanced: true,
        lb_cfs_tasks: true,
        newidle_no_nr_balance_failed: true,
        newidle_active_balance: true,
        nohz_ilb: NohzIlb::NrBusy,
        nohz_kick_ipi: NohzKickIpi::Resched,
        nohz_kick_after_rebalance: true,
        select_idle_sibling: SelectIdleSibling::IdleGroup,
        mc_busy_factor: 64,
        mc_prefer_sibling: false,
        sd_numa: SdNuma::NumaLevels,
        yield_impl: YieldImpl::SkipBuddy,
        next_buddy_over_last: true,
        preempt_sets_next_buddy: true,
    }
    /// 3.13: Jason Low's per-domain `max_newidle_lb_cost` budget
    /// (9bd721c55c8a), its decay (f48627e686a6) and the avg_idle clamp to
    /// `max_idle_balance_cost`, on top of 3.8.
    "v3.13" => fn v3_13() = v3_8 {
        newidle_throttle: NewidleThrottle::MaxLbCost,
        newidle_lb_cost_decay: true,
        avg_idle_cap: AvgIdleCap::MaxIdleBalanceCost,
        avg_idle_ewma_first: true,
    }
    /// 4.11-rc, the base of the 0-day runs of seed case 4 (kernel/sched/
    /// fair.c and core.c of v4.11): 3.13 plus what the model has of the
    /// changes up to 4.11. `sd_init()` of 3.16 (busy_factor 32, 125/117/110,
    /// the `*_idx`); `wake_wide()` (63b0e9edceec); the 4.9
    /// `select_idle_sibling()` rewrite (10e2f1acd010: target, prev, then
    /// idle core / idle CPU / idle SMT sibling over `sd_llc`). Still CFS,
    /// `wake_affine()` on loads (WA_* came in 4.14), the resched-IPI ILB
    /// kick (function-call since 5.8), newidle doubling `balance_interval` (until 4.20), cache
    /// hotness at SMT (until 5.10), `max_newidle_lb_cost` (until 5.16).
    /// CFS times as every CFS preset (6 / 0.75 / 1 ms, LOG scaling: ×4 at
    /// 8+ CPUs), migration_cost 0.5 ms. HZ 1000 and no CONFIG_PREEMPT: the
    /// 0-day kconfig `x86_64-rhel-7.2` follows RHEL 7's config
    /// (CONFIG_HZ_1000, PREEMPT_VOLUNTARY), recalled and not checked.
    ///
    /// Simplifications (what 4.11 had and the model does not): the
    /// balancer's and `wake_affine()`'s CPU load is the runqueue weight
    /// (`pelt` off), where 4.x read PELT's `cfs_rq->runnable_load_avg`
    /// (weighted_cpuload() since 3.11, b92486cbf2aa); no SIS_PROP bound on
    /// the idle-CPU scan (4.11 scanned at most span_weight·avg_idle /
    /// avg_scan_cost CPUs, at least 4; SIS_PROP on and SIS_AVG_CPU off in a
    /// 4.11-era features.h); no `rd->overload` early exit in
    /// `idle_balance()` (3.16).
    /// RT: `rt_push = "push_ipi"`, the RT_PUSH_IPI chain of 4.1–4.14 (the
    /// 0-day base of seed case 4; its 2017 rework is `rt_push = "push_ipi_rd"`).
    "v4.11" => fn v4_11() = v3_13 {
        sd_init: SdInit::V3_16,
        wake_wide: true,
        select_idle_sibling: SelectIdleSibling::IdleCpu,
        rt_push: RtPush::PushIpi,
    }
    /// 6.6 (mainline 6.6.0: kernel/sched/fair.c, topology.c, features.h at
    /// v6.6): EEVDF (147f3efaa241) with the 0.75 ms base slice and RUN_TO_PARITY,
    /// PELT, the 5.5 balancer on PELT load, 5.10+ `sd_init()`, 5.16's newidle
    /// cost tracking, 6.x wake-up placement (wake_wide, WA_IDLE/WA_WEIGHT,
    /// recent_used_cpu, SIS_UTIL) and the 5.8+ function-call ILB kick
    /// (19a1f5ec6999), and the 6.x `load_balance()` loop (newidle keeps
    /// `balance_interval`, no cache hotness at SMT, CONFIG_PREEMPTION from
    /// PREEMPT_DYNAMIC). HZ 250 as Debian builds it. The later 6.6-stable
    /// back-ports (NI_RANDOM, Jan 2026) are not in this preset.
    "v6.6" => fn v6_6() = v3_13 {
        hz: 250,
        newidle_throttle: NewidleThrottle::LbCost,
        nohz_kick_ipi: NohzKickIpi::FunctionCall,
        sd_init: SdInit::V5,
        newidle_keep_interval: true,
        preemption: true,
        smt_ignore_hot: true,
        pelt: Pelt::V5_7,
        balancer: Balancer::GroupType,
        wake_wide: true,
        wake_affine: WakeAffine::IdleWeight,
        select_idle_sibling: SelectIdleSibling::IdleCpu,
        recent_used_cpu: true,
        sched_idle_cpu: true,
        sched_idle_balance: true,
        ttwu_queue: TtwuQueue::Idle,
        idle_preempt_non_idle: true,
        sis_util: true,
        // fs/pipe.c as 5.5-6.13 have it (aaec5a95d596 is 6.14)
        pipe_still_full_no_wake: false,
        pick: Pick::Eevdf,
        base_slice_ns: 750_000,
        preempt_short: false,
        delay_dequeue: false,
        delay_zero: false,
        place_rel_deadline: false,
        run_to_parity_min_slice: false,
        yield_forfeit: false,
        // RT_PUSH_IPI (4.1) with 4bdced5c9a29's root-domain walk (4.15)
        // and "Do not pull from current CPU if only one CPU to pull".
        rt_push: RtPush::PushIpiRd,
        rt_pull_skip_only_self: true,
        cpupri_idle: false,
    }
    /// 6.18 as this project's machines run it (6.18.44, HZ 250,
    /// PREEMPT_DYNAMIC): 6.6 plus the 6.12 EEVDF features (PREEMPT_SHORT,
    /// DELAY_DEQUEUE, DELAY_ZERO, PLACE_REL_DEADLINE), the 0.70 ms base slice
    /// (6.15), 6.17's slice protection, 6.8's RT overload rule, and the
    /// 6.18-stable back-ports of forfeit-on-yield (6.18.2), NI_RANDOM
    /// (6.18.5) and RT_PUSH_IPI off by default (dd29c017aed6).
    "v6.18" => fn v6_18() = v6_6 {
        base_slice_ns: 700_000,
        preempt_short: true,
        delay_dequeue: true,
        delay_zero: true,
        place_rel_deadline: true,
        run_to_parity_min_slice: true,
        yield_forfeit: true,
        newidle_random: true,
        // 94894c9c477e, an AUTOSEL stable back-port (Jan 2026).
        rt_rto_skip_self: true,
        // RT_PUSH_IPI default off without PREEMPT_RT (dd29c017aed6, May
        // 2026, Cc: stable): this machine's 6.18 pulls under the runqueue
        // locks and sends no push IPI (tracefs, docs/rt.md).
        rt_push: RtPush::Pull,
        rt_overload_pushable: true,
        cfs_throttle: CfsThrottle::Task,
        pipe_still_full_no_wake: true,
    }
}

impl Kernel {
    /// The preset `name` (one of [`KERNEL_PRESETS`]).
    pub fn preset(name: &str) -> CoreResult<Self> {
        PRESETS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, f)| f())
            .ok_or_else(|| {
                CoreError::invalid(
                    "name",
                    format!("{name:?}"),
                    format!("one of {}", KERNEL_PRESETS.join(", ")),
                )
            })
    }

    /// `get_update_sysctl_factor()` (kernel/sched.c 2.6.36): 1, 1+ilog2(n)
    /// or n, with n = min(ncpus, 8).
    pub fn scaling_factor(&self, ncpus: usize) -> u64 {
        let n = ncpus.clamp(1, 8) as u64;
        match self.tunable_scaling {
            TunableScaling::None => 1,
            TunableScaling::Log => 1 + (63 - n.leading_zeros() as u64),
            TunableScaling::Linear => n,
        }
    }
}

impl Fields for Kernel {
    const KIND: &'static str = "Kernel";

    fn explain(name: &str, v: Option<&Value>) -> Option<CoreError> {
        if name == "name" {
            return Some(CoreError::NotASetting {
                kind: Self::KIND,
                name: name.into(),
                why: "name is the preset the profile started from; choose it with \
                      Kernel(base=...) or Kernel.preset(...)",
            });
        }
        RETIRED
            .iter()
            .find(|r| r.matches(name, v))
            .map(Retired::error)
    }

    fn validate(&self) -> CoreResult<()> {
        self.decl_check()?;
        if self.min_granularity_ns > self.latency_ns {
            return Err(CoreError::invalid(
                "min_granularity_ns",
                self.min_granularity_ns,
                format!("at most latency_ns ({})", self.latency_ns),
            ));
        }
        let needs_pelt = |field: &str, value: &str| {
            CoreError::invalid(
                field,
                value,
                format!(
                    "a value that does not read PELT while pelt={:?} (set pelt=\"v5.7\" with {field}={value})", self.pelt.name()
                ),
            )
        };
        // Only 5.7+ PELT feeds these (3.8's has no util and no cpu_load()).
        if self.pelt != Pelt::V5_7 {
            if matches!(
                self.wake_affine,
                WakeAffine::Weight | WakeAffine::IdleWeight
            ) {
                return Err(needs_pelt(
                    "wake_affine",
                    &format!("{:?}", self.wake_affine.name()),
                ));
            }
            if self.sis_util {
                return Err(needs_pelt("sis_util", "True"));
            }
            if self.balancer == Balancer::GroupType {
                return Err(needs_pelt("balancer", "\"group_type\""));
            }
        }
        if self.newidle_random && self.newidle_throttle != NewidleThrottle::LbCost {
            return Err(CoreError::invalid(
                "newidle_random",
                "True",
                format!(
                    "False while newidle_throttle={:?} (NI_RANDOM is part of 6.18's sched_balance_newidle(): set newidle_throttle=\"lb_cost\" with newidle_random=True)",
                    self.newidle_throttle.name()
                ),
            ));
        }
        let needs_sis = |field: &str| {
            CoreError::invalid(
                field,
                "True",
                format!(
                    "False while select_idle_sibling={:?} ({field} is part of select_idle_sibling=\"idle_cpu\")",
                    self.select_idle_sibling.name()
                ),
            )
        };
        if self.sched_rt_runtime_us > self.sched_rt_period_us {
            return Err(CoreError::invalid(
                "sched_rt_runtime_us",
                self.sched_rt_runtime_us,
                format!(
                    "-1 (no RT throttling) or at most sched_rt_period_us={} (sched_rt_global_validate())",
                    self.sched_rt_period_us
                ),
            ));
        }
        if self.select_idle_sibling != SelectIdleSibling::IdleCpu {
            if self.recent_used_cpu {
                return Err(needs_sis("recent_used_cpu"));
            }
            if self.sis_util {
                return Err(needs_sis("sis_util"));
            }
            if self.sched_idle_cpu {
                return Err(needs_sis("sched_idle_cpu"));
            }
        }
        Ok(())
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scaling_matches_the_kernel() {
        let k = Kernel::v2_6_36();
        let f: Vec<u64> = [1, 2, 3, 4, 8, 64]
            .iter()
            .map(|&n| k.scaling_factor(n))
            .collect();
        assert_eq!(f, vec![1, 2, 2, 3, 4, 4]);
    }

    #[test]
    fn replace_validates_and_keeps_the_base_name() {
        let k = Kernel::v3_8();
        let k2 = k
            .replaced(&[("migration_cost_ns".into(), Value::Int(250_000))])
            .unwrap();
        assert_eq!(k2.migration_cost_ns, 250_000);
        assert_eq!(k2.name, "v3.8");
        assert!(k.replaced(&[("bogus".into(), Value::Int(1))]).is_err());
        assert!(k
            .replaced(&[("newidle_throttle".into(), Value::Str("sometimes".into()))])
            .is_err());
        assert!(k
            .replaced(&[("migration_cost_ns".into(), Value::Int(-1))])
            .is_err());
        assert!(k
            .replaced(&[("idle_balance".into(), Value::Int(1))])
            .is_err());
    }

    #[test]
    fn every_field_round_trips() {
        let k = Kernel::v2_6_36();
        for (name, v) in k.items() {
            let k2 = k.replaced(&[(name.to_string(), v.clone())]).unwrap();
            assert_eq!(k2.get(name), Some(v));
        }
    }

    #[test]
    fn no_preset_restates_what_it_inherits() {
        assert_eq!(Kernel::preset_restatements(), Vec::<String>::new());
    }

    #[test]
    fn the_declarations_are_sound() {
        Kernel::check_declarations().unwrap();
        assert_eq!(Kernel::FIELDS.len(), Kernel::FIELD_NAMES.len());
        // every preset is within the declared domains
        for name in KERNEL_PRESETS {
            Kernel::preset(name).unwrap().decl_check().unwrap();
        }
    }
}
