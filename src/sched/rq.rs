//! Runqueue state, the model's `kernel/sched/sched.h`: `struct rq` (the CFS
//! runqueue, the fields of the CPU-time accounting, `sched::stats::cputime`, and
//! the balancer's per-runqueue fields), the sched-domain schedstat
//! counters, and the NOHZ idle balancer's global `struct nohz`.

use crate::sched::balance::CPU_LOAD_IDX_MAX;
use crate::sched::fair::tasklist::TaskList;
use crate::sched::fair::CfsRq;
use crate::sched::rt::task::RtRq;
use crate::sched::task::TaskId;

pub(crate) struct Rq {
    /// `rq->curr` (`None`: the idle task), set by `schedule()`'s pick
    /// (and the stopper's preemption, `Sched::active_balance`): the fair
    /// class's current entity or the running RT task (`rtq.curr`).
    pub curr: Option<TaskId>,
    pub cfs: CfsRq,
    /// The RT tasks on this CPU (`sched::rt::task`).
    pub rtq: RtRq,
    pub need_resched: bool,
    /// A reschedule IPI is already in flight to this CPU.
    pub resched_pending: bool,
    /// Time up to which this CPU's time has been accounted.
    pub seg_start: u64,
    /// Scheduler overhead queued on this CPU (system time).
    pub overhead_left: u64,
    pub gen: u32,
    pub armed_end: Option<u64>,
    pub tick_armed: bool,
    /// The address space loaded on this CPU (kept across idle: lazy TLB).
    pub last_mm: Option<u32>,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub idle_ns: u64,
    pub nr_switches: u64,
    pub ticks: u64,
    /// Interrupts taken: ticks, timer interrupts, IPIs.
    pub irqs: u64,
    pub bal: BalanceRq,
}

impl Rq {
    /// `rq->curr` (`None`: the idle task).
    #[inline(always)]
    pub fn curr(&self) -> Option<TaskId> {
        self.curr
    }

    /// `rq->nr_running`: the fair class's runnable tasks and the RT
    /// class's (unless throttled).
    #[inline(always)]
    pub fn nr_running(&self) -> u32 {
        self.cfs.nr_running + self.rtq.nr_running
    }

    pub fn new(migration_cost: u64, ndomains: usize) -> Self {
        Rq {
            curr: None,
            cfs: CfsRq::default(),
            rtq: RtRq::default(),
            need_resched: false,
            resched_pending: false,
            seg_start: 0,
            overhead_left: 0,
            gen: 0,
            armed_end: None,
            tick_armed: false,
            last_mm: None,
            user_ns: 0,
            sys_ns: 0,
            idle_ns: 0,
            nr_switches: 0,
            ticks: 0,
            irqs: 0,
            bal: BalanceRq::new(migration_cost, ndomains),
        }
    }
}

/// `/proc/schedstat` domain counters (per CPU, per domain).
#[derive(Clone, Debug, Default)]
pub struct DomainStats {
    pub lb_count: [u64; 3],
    pub lb_balanced: [u64; 3],
    pub lb_failed: [u64; 3],
    pub lb_imbalance: [u64; 3],
    pub lb_gained: [u64; 3],
    pub lb_hot_gained: [u64; 3],
    pub lb_nobusyq: [u64; 3],
    pub lb_nobusyg: [u64; 3],
    pub alb_count: u64,
    pub alb_failed: u64,
    pub alb_pushed: u64,
    pub ttwu_wake_remote: u64,
    pub ttwu_move_affine: u64,
    pub ttwu_move_balance: u64,
}

/// The balancer's per-runqueue state.
#[derive(Clone, Debug)]
pub struct BalanceRq {
    pub cpu_load: [u64; CPU_LOAD_IDX_MAX],
    pub last_load_update_tick: u64,
    pub avg_idle: u64,
    /// `rq->idle_stamp`; `None` is the kernel's 0.
    pub idle_stamp: Option<u64>,
    pub next_balance: u64,
    pub active_balance: bool,
    pub max_idle_balance_cost: u64,
    pub idle_at_tick: bool,
    /// `rq->cfs_tasks`, most recently enqueued last (the links are the
    /// `Sched`'s `group_nodes`).
    pub cfs_tasks: TaskList,
    pub stats: Vec<DomainStats>,
}

impl BalanceRq {
    pub fn new(migration_cost: u64, ndomains: usize) -> Self {
        BalanceRq {
            cpu_load: [0; CPU_LOAD_IDX_MAX],
            last_load_update_tick: 0,
            avg_idle: 2 * migration_cost,
            idle_stamp: None,
            next_balance: 0,
            active_balance: false,
            max_idle_balance_cost: migration_cost,
            idle_at_tick: false,
            cfs_tasks: TaskList::default(),
            stats: vec![DomainStats::default(); ndomains],
        }
    }
}
