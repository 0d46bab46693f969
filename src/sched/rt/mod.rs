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
//! what `chrt` runs) and the machine's RT kernel threads ([`RtKthreads`],
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

/// The RT kernel threads of a real machine, as a workload component.
#[derive(Clone, Debug, PartialEq)]
pub struct RtKthreads {
    /// One `watchdog/N` per CPU, pinned, SCHED_FIFO 99.
    pub watchdog: bool,
    pub watchdog_period_ns: u64,
    pub watchdog_run_ns: u64,
    /// Threaded IRQ handlers (`irq/N-name`), SCHED_FIFO `irq_prio`.
    pub irq_threads: u32,
    /// CPUs in each IRQ thread's affinity (consecutive, starting at
    /// `k * irq_cpus` modulo the CPU count); ≥ 2 lets it migrate.
    pub irq_cpus: u32,
    pub irq_prio: u32,
    pub irq_policy: RtPolicy,
    /// Mean time between interrupts (exponential).
    pub irq_period_ns: u64,
    pub irq_run_ns: u64,
}

/// At most this many IRQ threads per CPU of the machine (a real machine
/// has a few per device queue; more only slows every RT queue scan).
pub const IRQ_THREADS_PER_CPU: u64 = 64;

/// An RT thread's period: 10 µs to one hour.
const MIN_PERIOD_NS: u64 = 10_000;
const MAX_PERIOD_NS: u64 = 3_600_000_000_000;

use crate::config::{metric_table, Bounds, MetricDoc};

/// The machine-independent bounds of the `rt_kthreads` integers, in one
/// place: `validate_params` checks them, the bindings read the values
/// through them (so a negative or oversized value gets the same message).
pub const PERIOD_NS: Bounds = Bounds {
    lo: MIN_PERIOD_NS,
    hi: MAX_PERIOD_NS,
    allowed: "10000 ns (10 us) to 3600000000000 ns (1 hour)",
};
/// A run: at least 1 ns (and less than its period, checked apart).
pub const RUN_NS: Bounds = Bounds {
    lo: 1,
    hi: MAX_PERIOD_NS,
    allowed: "at least 1 ns and less than its period",
};
pub const IRQ_THREADS: Bounds = Bounds {
    lo: 0,
    hi: 100_000,
    allowed: "0 to 100000",
};
pub const RT_PRIO: Bounds = Bounds {
    lo: 1,
    hi: 99,
    allowed: "1 to 99 (SCHED_FIFO/SCHED_RR rt_priority)",
};
pub const IRQ_CPUS: Bounds = Bounds {
    lo: 1,
    hi: crate::topology::MAX_CPUS as u64,
    allowed: "1 to 4096 CPUs",
};

impl RtKthreads {
    /// Refuse what no machine can run: the bounds above (priorities outside
    /// 1..99, more than 100000 IRQ threads, an affinity of no CPU or wider
    /// than the largest machine, periods outside 10 µs .. 1 hour), and a
    /// burst that does not fit its period (a task that never sleeps). Every
    /// field is checked, in use or not.
    pub fn validate_params(&self) -> crate::error::CoreResult<()> {
        use crate::error::CoreError;
        for (name, period, run, run_name) in [
            (
                "rt_kthreads.watchdog_period_ns",
                self.watchdog_period_ns,
                self.watchdog_run_ns,
                "rt_kthreads.watchdog_run_ns",
            ),
            (
                "rt_kthreads.irq_period_ns",
                self.irq_period_ns,
                self.irq_run_ns,
                "rt_kthreads.irq_run_ns",
            ),
        ] {
            PERIOD_NS.check(name, period as i128)?;
            RUN_NS.check(run_name, run as i128)?;
            if run >= period {
                return Err(CoreError::invalid(
                    run_name,
                    run,
                    format!(
                        "at least 1 ns and less than {name} ({period} ns): the thread must sleep \
                         between runs"
                    ),
                ));
            }
        }
        IRQ_THREADS.check("rt_kthreads.irq_threads", self.irq_threads as i128)?;
        RT_PRIO.check("rt_kthreads.irq_prio", self.irq_prio as i128)?;
        IRQ_CPUS.check("rt_kthreads.irq_cpus", self.irq_cpus as i128)?;
        Ok(())
    }

    /// [`RtKthreads::validate_params`], then what the machine of `ncpus`
    /// CPUs cannot run: an affinity wider than it, more than
    /// `IRQ_THREADS_PER_CPU` IRQ threads per CPU, and an IRQ demand
    /// (`irq_threads * irq_run_ns / irq_period_ns`) above its CPU count.
    pub fn validate(&self, ncpus: usize) -> crate::error::CoreResult<()> {
        use crate::error::CoreError;
        self.validate_params()?;
        if self.irq_threads == 0 {
            return Ok(());
        }
        if self.irq_cpus as usize > ncpus {
            return Err(CoreError::invalid(
                "rt_kthreads.irq_cpus",
                self.irq_cpus,
                format!("1 to the machine's {ncpus} CPUs"),
            ));
        }
        let cap = (IRQ_THREADS_PER_CPU * ncpus as u64).min(100_000);
        if self.irq_threads as u64 > cap {
            return Err(CoreError::invalid(
                "rt_kthreads.irq_threads",
                self.irq_threads,
                format!(
                    "0 to {cap} ({IRQ_THREADS_PER_CPU} per CPU of the machine's {ncpus}, at most 100000)"
                ),
            ));
        }
        // RT demand in CPUs: irq_threads * irq_run / irq_period. Above the
        // CPU count the RT queues only grow (every RT op scans them): refuse.
        let demand = self.irq_threads as u128 * self.irq_run_ns as u128;
        let limit = ncpus as u128 * self.irq_period_ns as u128;
        if demand > limit {
            return Err(CoreError::invalid(
                "rt_kthreads.irq_threads",
                self.irq_threads,
                format!(
                    "an RT demand irq_threads * irq_run_ns / irq_period_ns = {} * {} / {} \
                     = {:.2} CPUs of at most the machine's {ncpus} CPUs",
                    self.irq_threads,
                    self.irq_run_ns,
                    self.irq_period_ns,
                    demand as f64 / self.irq_period_ns as f64
                ),
            ));
        }
        Ok(())
    }
}

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

#[cfg(test)]
mod validate_tests {
    use super::*;

    #[test]
    fn each_bound_says_its_limits() {
        for b in [PERIOD_NS, IRQ_THREADS, RT_PRIO, IRQ_CPUS] {
            assert!(b.allowed.contains(&b.lo.to_string()), "{b:?}");
            assert!(b.allowed.contains(&b.hi.to_string()), "{b:?}");
        }
        assert!(RUN_NS.allowed.contains(&RUN_NS.lo.to_string()));
    }

    fn irq(threads: u32, period: u64, run: u64) -> RtKthreads {
        RtKthreads {
            watchdog: false,
            watchdog_period_ns: 4_000_000_000,
            watchdog_run_ns: 10_000,
            irq_threads: threads,
            irq_cpus: 2,
            irq_prio: 50,
            irq_policy: RtPolicy::Fifo,
            irq_period_ns: period,
            irq_run_ns: run,
        }
    }

    #[test]
    fn rt_demand_above_the_cpu_count_is_refused() {
        // 2 CPUs: 2 threads of 9 us every 10 us is 1.8 CPUs (fine); 3 is 2.7.
        assert!(irq(2, 10_000, 9_000).validate(2).is_ok());
        let e = irq(3, 10_000, 9_000).validate(2).unwrap_err().to_string();
        assert!(e.contains("RT demand") && e.contains("2.70 CPUs"), "{e}");
    }

    #[test]
    fn rt_irq_threads_are_capped_per_cpu() {
        assert!(irq(128, 1_000_000_000, 1).validate(2).is_ok());
        let e = irq(129, 1_000_000_000, 1)
            .validate(2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("0 to 128"), "{e}");
    }
}
