//! One balance pass's state and vocabulary, shared by every balancer:
//! `struct lb_env` ([`LbEnv`], kernel/sched/fair.c 3.8 on), `enum
//! cpu_idle_type` ([`IdleType`]), `enum migration_type` ([`MigrationType`],
//! 5.5+) and the `LBF_*` flags.

/// `enum cpu_idle_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleType {
    Idle = 0,
    NotIdle = 1,
    NewlyIdle = 2,
}

pub const IDLE_TYPE_NAMES: [&str; 3] = ["idle", "busy", "newidle"];

/// `LBF_ALL_PINNED` (`lb_env::flags`, 3.8; 2.6.36's `*all_pinned`): every
/// task examined so far may not run on the destination CPU.
pub(crate) const LBF_ALL_PINNED: u32 = 0x01;

/// `struct lb_env` (kernel/sched/fair.c, 3.8): one balance pass's state —
/// the domain, the destination and source runqueues, the idle type, the
/// imbalance left to move, the flags and the task-walk counters — plus, as
/// a model addition, the pass's CPU time. 2.6.36 threads the same values
/// through `load_balance()` → `move_tasks()` → `balance_tasks()` →
/// `can_migrate_task()` as arguments.
///
/// Simplifications: runqueues are named by CPU (`dst_rq` is
/// `rqs[dst_cpu]`, `src_rq` is `rqs[src_cpu]`) and the domain by its level
/// in `dst_cpu`'s hierarchy (`sd[dst_cpu][sd]`); `cpus` is kept as the CPUs
/// removed from the kernel's mask; no `loop_break`/LBF_NEED_BREAK (a pass is
/// instantaneous, no lock is dropped), no LBF_SOME_PINNED/`new_dst_cpu`
/// (the 3.8 retry is not modelled), no `dst_grpmask`.
#[derive(Clone, Debug)]
pub(crate) struct LbEnv {
    /// `env->sd`: the level of `dst_cpu`'s domain being balanced.
    pub sd: usize,
    /// `env->dst_cpu` (`env->dst_rq`): the CPU pulling (`this_cpu`).
    pub dst_cpu: usize,
    /// `env->src_cpu` (`env->src_rq`): the busiest CPU, once found.
    pub src_cpu: usize,
    pub idle: IdleType,
    /// `env->imbalance`: weighted load still to move (under
    /// `balancer = "group_type"`, in `migration_type` units).
    pub imbalance: u64,
    /// `env->migration_type` (5.5+; read only by `sched::balance::fbg_v55`).
    pub migration_type: MigrationType,
    /// `env->flags` (`LBF_ALL_PINNED`).
    pub flags: u32,
    /// `env->loop`: tasks examined in this walk.
    pub loop_: usize,
    /// `env->loop_max`: tasks a walk may examine.
    pub loop_max: usize,
    /// CPUs removed from `env->cpus` because all their tasks were pinned.
    pub excluded: Vec<usize>,
    /// Not in the kernel: the pass runs inside `schedule()` on `dst_cpu`
    /// (newidle), which picks next itself, so a pulled task does not go
    /// through `check_preempt_curr()`.
    pub in_schedule: bool,
    /// Not in the kernel: the CPU time of the pass so far (ns), charged by
    /// the caller once the pass is done.
    pub cost: u64,
}

impl LbEnv {
    pub(crate) fn new(dst_cpu: usize, sd: usize, idle: IdleType, in_schedule: bool) -> Self {
        LbEnv {
            sd,
            dst_cpu,
            src_cpu: dst_cpu,
            idle,
            imbalance: 0,
            migration_type: MigrationType::Load,
            flags: 0,
            loop_: 0,
            loop_max: 0,
            excluded: Vec::new(),
            in_schedule,
            cost: 0,
        }
    }
}

/// What one `load_balance()` pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LbResult {
    /// Tasks moved.
    pub moved: u64,
    /// The kernel's `*balance`: false when this CPU is not the group's
    /// balance CPU here, which stops `rebalance_domains()` going higher.
    pub balance: bool,
    /// The pass's CPU time (`LbEnv::cost`).
    pub cost: u64,
}

/// `LBF_SOME_PINNED` (`lb_env::flags`): a task examined could not run on
/// the destination CPU.
pub(crate) const LBF_SOME_PINNED: u32 = 0x08;

/// `enum migration_type` (5.5+): what `env->imbalance` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum MigrationType {
    /// PELT load (`task_h_load()`).
    #[default]
    Load,
    /// PELT utilisation.
    Util,
    /// Tasks.
    Task,
    /// One misfit task.
    Misfit,
}
