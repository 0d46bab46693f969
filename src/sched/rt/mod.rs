//! The RT scheduling class, after `kernel/sched/rt.c` and
//! `kernel/sched/cpupri.c`: SCHED_FIFO / SCHED_RR tasks on one `rt_rq` per
//! CPU (`task::RtRq`: the queue in priority order, FIFO within a level,
//! `rt_nr_running`, the overload bit that is `rto_mask`), one root domain
//! ([`RtRoot`]: `rto_count`, the 4.15 walk's `rto_cpu` / `rto_loop`), one
//! RT bandwidth budget per CPU with its period timer. `task` holds the
//! class's entry points (`select_task_rq_rt()`, `enqueue_task_rt()`,
//! `pick_next_task_rt()`, `wakeup_preempt()` for the class,
//! `task_woken_rt()`, `push_rt_task()`, `update_curr_rt()`,
//! `task_tick_rt()`); `push` the pull and the three designs of
//! `Kernel::rt_push` (the pre-4.1 locked pull, 4.1's per-source IPI chain,
//! 4.15's root-domain walk) with their irq_work IPIs.
//!
//! The RT tasks are a workload's own (`Workload.with_tasks(policy=...)`,
//! what `chrt` runs) and the machine's RT kernel threads (`workload::rt_kthreads`,
//! `watchdog/N` and threaded IRQ handlers, run as tasks by
//! `workload::kthreads`). What changed between releases is a `Kernel`
//! field: `rt_push`, `rt_pull_skip_only_self`, `rt_rto_skip_self`,
//! `rt_overload_pushable` (the overload rule of 6.8), `cpupri_idle`.
//!
//! Simplifications (docs/rt.md):
//! - The fair balancer and the fair wake-up paths see fair tasks only,
//!   except that a CPU running or queueing an RT task is not idle
//!   (`idle_cpu()`).
//! - cpupri is computed by scanning the allowed CPUs; `find_lowest_rq()`
//!   prefers the task's CPU, then the CPU running the code, then the
//!   nearest (lowest index on a tie), instead of the sched-domain walk.
//! - The stop class is the stopper `migration/N` that active balancing
//!   runs (`Sched::active_balance`), with `p->prio == 0` (FIFO-99,
//!   `sched_set_stop_task()`): when it schedules out `need_pull_rt_task()`
//!   holds and `pull_rt_task()` runs.
//! - Throttling keeps one budget per CPU (no RT_RUNTIME_SHARE borrowing);
//!   6.12+'s fair deadline server is not modelled; no RT PELT (`avg_rt`).

pub mod push;
pub mod task;

#[cfg(test)]
mod push_tests;

/// `MAX_RT_PRIO`: kernel priorities 0..99 are RT (0 highest), 100+ normal.
pub const MAX_RT_PRIO: u32 = 100;

/// `RT_PUSH_IPI_EXECUTING` / `RT_PUSH_IPI_RESTART` (4.1-4.14).
pub(crate) const PUSH_EXECUTING: u8 = 1;
pub(crate) const PUSH_RESTART: u8 = 2;

crate::named_enum! {
    /// An RT task's policy: SCHED_FIFO or SCHED_RR.
    pub enum RtPolicy { Fifo = "fifo", Rr = "rr" }
}

use crate::config::{metric_table, Bounds, MetricDoc};

/// An RT task's `rt_priority`: 1 to 99 (SCHED_FIFO / SCHED_RR;
/// `MAX_RT_PRIO - 1` levels above SCHED_NORMAL).
pub const RT_PRIO: Bounds = Bounds {
    lo: 1,
    hi: 99,
    allowed: "1 to 99 (SCHED_FIFO/SCHED_RR rt_priority)",
};

/// The root domain's RT state (`struct root_domain`) and the class's
/// counters.
#[derive(Clone, Debug, Default)]
pub(crate) struct RtRoot {
    /// The run has RT tasks: `schedule()` asks the RT class first. False
    /// in a run without any, which takes no RT step.
    pub tasks_used: bool,
    /// `rd->rto_count`: CPUs whose `rt_rq` is overloaded (their bits of
    /// `rto_mask`, `task::RtRq::overloaded`).
    pub rto_count: u32,
    /// 4.15 `rto_cpu` (-1: no walk in flight), `rto_loop`, `rto_loop_next`.
    pub rto_cpu: i64,
    pub rto_loop: u64,
    pub rto_loop_next: u64,
    /// The RT queues' order counter.
    pub seq: u64,
    pub stats: RtStats,
    /// Every push IPI as (from, to), in order (unit tests).
    #[cfg(test)]
    pub ipi_log: Vec<(usize, usize)>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RtStats {
    /// RT push irq_work items run (`irq_work` in /proc/interrupts' IWI is per CPU).
    pub irq_work: u64,
    /// IPIs of the push machinery (chain or root-domain walk).
    pub push_ipis: u64,
    pub self_ipis: u64,
    pub pulls: u64,
    pub pushes: u64,
    pub pull_calls: u64,
    pub throttled_ns: u64,
    pub runs: u64,
}

/// A metric of the RT class with the function that computes it.
pub(crate) struct RtMetric {
    pub doc: MetricDoc,
    pub value: fn(&RtStats) -> f64,
}

/// The RT class's metrics, reported when the run has RT tasks (its own,
/// `with_tasks(policy=...)`, or the machine's, `rt_kthreads`).
pub(crate) const RT: &[RtMetric] = metric_table! { RtMetric;
    "irq_work", "count", "irq_work items run (the RT push machinery's)",
        "/proc/interrupts IWI" => |r| r.irq_work as f64;
    "rt_push_ipis", "count", "IPIs of the RT push machinery (the chain or the root-domain walk)",
        "kernel/sched/rt.c tell_cpu_to_push(), rto_push_irq_work_func()" => |r| r.push_ipis as f64;
    "rt_self_ipis", "count", "irq_work queued on its own CPU by the push machinery",
        "irq_work_queue() on the local CPU" => |r| r.self_ipis as f64;
    "rt_pulls", "count", "RT tasks pulled to a CPU lowering its priority",
        "kernel/sched/rt.c pull_rt_task()" => |r| r.pulls as f64;
    "rt_pushes", "count", "RT tasks pushed to a CPU running lower-priority work",
        "kernel/sched/rt.c push_rt_task()" => |r| r.pushes as f64;
    "rt_pull_calls", "count", "pull_rt_task() calls", "kernel/sched/rt.c pull_rt_task()" => |r| r.pull_calls as f64;
    "rt_runs", "count", "switches to an RT task", "sched_switch to an RT task" => |r| r.runs as f64;
    "rt_throttled_s", "s", "time CPUs' RT tasks were throttled by sched_rt_runtime_us (summed over CPUs)",
        "kernel/sched/rt.c sched_rt_runtime_exceeded()" => |r| r.throttled_ns as f64 / 1e9;
};

impl RtRoot {
    /// A root domain with no walk in flight.
    pub(crate) fn new() -> Self {
        RtRoot {
            rto_cpu: -1,
            ..Default::default()
        }
    }

    /// The RT metrics of a run, with `throttled_ns` the time spent
    /// throttled up to now (including spans still open).
    pub fn metrics(&self, throttled_ns: u64) -> Vec<(String, f64)> {
        let stats = RtStats {
            throttled_ns,
            ..self.stats.clone()
        };
        RT.iter()
            .map(|m| (m.doc.name.to_string(), (m.value)(&stats)))
            .collect()
    }
}
