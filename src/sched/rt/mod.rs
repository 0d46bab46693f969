//! The RT scheduling class and the stop class, after `kernel/sched/rt.c`
//! (4.11 for the class and `pull` / `push_ipi`, 4.15 — 4bdced5c9a29 — for
//! `push_ipi_rd`) and `kernel/sched/cpupri.c`: SCHED_FIFO / SCHED_RR tasks
//! with a per-CPU `rt_rq` (queue in priority order, `highest_prio.curr` /
//! `.next`, `rt_nr_running`, `rt_nr_migratory`, overload), the root
//! domain's `rto_mask` / `rto_count`, RT throttling, `select_task_rq_rt()`,
//! `find_lowest_rq()`, `push_rt_task()`, `pull_rt_task()` and the two IPI
//! push designs (`Kernel::rt_push`).
//!
//! Simplifications (docs/rt.md):
//! - The only RT tasks are the kernel threads of [`RtKthreads`] (watchdog/N,
//!   threaded IRQ handlers): each wakes, runs one burst and sleeps again.
//!   Their run is charged to the CPU as system time queued ahead of the
//!   fair task (`Sched::charge`), so an RT task preempts CFS at once and CFS
//!   resumes when it is done. The fair task is not dequeued meanwhile (its
//!   vruntime advances over the RT time); the switch pair is counted as one
//!   involuntary switch of the fair task and two runqueue switches.
//! - The stop class is the stopper `migration/N` that active balancing
//!   already runs (`Sched::active_balance`): a stop-class task with
//!   `p->prio == 0` (FIFO-99, `sched_set_stop_task()`), so when it schedules
//!   out `need_pull_rt_task()` holds and `pull_rt_task()` runs.
//! - cpupri is computed by scanning the allowed CPUs (idle < CFS < RT
//!   levels); `find_lowest_rq()` prefers the task's CPU, then the nearest.
//! - A push/pull reschedules the destination at once (the reschedule IPI is
//!   counted, its latency not modelled).

pub mod class;
pub mod task;

pub(crate) use task::RtTaskRoot;

#[cfg(test)]
mod class_tests;

/// `MAX_RT_PRIO`: kernel priorities 0..99 are RT (0 highest), 100+ normal.
pub const MAX_RT_PRIO: u32 = 100;
/// `sched_rr_timeslice` (RR_TIMESLICE, 100 ms).
pub const RR_TIMESLICE_NS: u64 = 100_000_000;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RtState {
    Sleeping,
    Queued,
    Running,
}

/// One RT task (its `task_struct` + `sched_rt_entity`).
#[derive(Clone, Debug)]
pub(crate) struct RtTask {
    pub policy: RtPolicy,
    /// Kernel priority `p->prio` = 99 - rt_priority.
    pub prio: u32,
    pub allowed: Vec<u32>,
    pub cpu: usize,
    pub state: RtState,
    pub run_left: u64,
    pub slice_left: u64,
    /// Fixed (watchdog) or exponential (IRQ) inter-wake times.
    pub period_ns: u64,
    pub periodic: bool,
    pub run_ns: u64,
    /// Enqueue order, FIFO within a priority level.
    pub seq: u64,
    /// The next interrupt (wake-up) after the current one: the period (or
    /// an exponential draw) counts from wake-up to wake-up.
    pub next_wake: u64,
}

impl RtTask {
    pub fn nr_cpus_allowed(&self) -> usize {
        self.allowed.len()
    }
    pub fn allowed_on(&self, cpu: usize) -> bool {
        self.allowed.binary_search(&(cpu as u32)).is_ok()
    }
}

/// The per-CPU `struct rt_rq`.
#[derive(Clone, Debug, Default)]
pub(crate) struct RtRq {
    /// Queued RT tasks (the running one included).
    pub queue: Vec<usize>,
    pub curr: Option<usize>,
    /// When the running task's burst ends and its event generation.
    pub done_at: u64,
    pub gen: u32,
    pub nr_migratory: u32,
    pub overloaded: bool,
    /// 4.1-4.14 `push_flags` / `push_cpu` of this rq's own irq_work chain.
    pub push_flags: u8,
    pub push_cpu: usize,
    /// RT time consumed in the current period, and the period's start.
    pub rt_time: u64,
    pub period_start: u64,
    pub throttled: bool,
}

/// The root domain's RT state (`struct root_domain`).
#[derive(Clone, Debug)]
pub(crate) struct RtRoot {
    pub rto_mask: Vec<bool>,
    pub rto_count: u32,
    /// 4.15 `rto_cpu` (-1: no walk in flight), `rto_loop`, `rto_loop_next`.
    pub rto_cpu: i64,
    pub rto_loop: u64,
    pub rto_loop_next: u64,
}

/// Everything the RT class adds to a run (`None` in `Sched` without RT tasks).
pub(crate) struct RtSched {
    pub tasks: Vec<RtTask>,
    pub rqs: Vec<RtRq>,
    pub rd: RtRoot,
    pub rng: crate::rng::Rng,
    pub next_seq: u64,
    pub stats: RtStats,
    /// Every push IPI as (from, to), in order (unit tests).
    #[cfg(test)]
    pub ipi_log: Vec<(usize, usize)>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RtStats {
    /// irq_work items run (`irq_work` in /proc/interrupts' IWI is per CPU).
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

/// The RT class's metrics, reported when the run has RT kernel threads.
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
    "rt_runs", "count", "RT kernel thread runs", "sched_switch to an RT thread" => |r| r.runs as f64;
    "rt_throttled_s", "s", "CPU time RT threads were throttled by sched_rt_runtime_us",
        "kernel/sched/rt.c sched_rt_runtime_exceeded()" => |r| r.throttled_ns as f64 / 1e9;
};

impl RtSched {
    /// The RT tasks of `k` on `ncpus` CPUs; IRQ threads start on the first
    /// CPU of their affinity.
    pub fn new(k: &RtKthreads, ncpus: usize, seed: u64) -> Self {
        let mut tasks = Vec::new();
        if k.watchdog {
            for c in 0..ncpus {
                tasks.push(RtTask {
                    policy: RtPolicy::Fifo,
                    prio: 0,
                    allowed: vec![c as u32],
                    cpu: c,
                    state: RtState::Sleeping,
                    run_left: 0,
                    slice_left: RR_TIMESLICE_NS,
                    period_ns: k.watchdog_period_ns,
                    periodic: true,
                    run_ns: k.watchdog_run_ns,
                    seq: 0,
                    next_wake: 0,
                });
            }
        }
        let width = (k.irq_cpus as usize).min(ncpus).max(1);
        for i in 0..k.irq_threads as usize {
            let first = (i * width) % ncpus;
            let mut allowed: Vec<u32> = (0..width).map(|j| ((first + j) % ncpus) as u32).collect();
            allowed.sort_unstable();
            allowed.dedup();
            tasks.push(RtTask {
                policy: k.irq_policy,
                prio: 99 - k.irq_prio,
                allowed,
                cpu: first,
                state: RtState::Sleeping,
                run_left: 0,
                slice_left: RR_TIMESLICE_NS,
                period_ns: k.irq_period_ns,
                periodic: false,
                run_ns: k.irq_run_ns,
                seq: 0,
                next_wake: 0,
            });
        }
        RtSched {
            tasks,
            rqs: (0..ncpus)
                .map(|c| RtRq {
                    push_cpu: c,
                    ..Default::default()
                })
                .collect(),
            rd: RtRoot {
                rto_mask: vec![false; ncpus],
                rto_count: 0,
                rto_cpu: -1,
                rto_loop: 0,
                rto_loop_next: 0,
            },
            rng: crate::rng::Rng::new(seed ^ 0x5254_5F6B_7468_7264),
            next_seq: 0,
            stats: RtStats::default(),
            #[cfg(test)]
            ipi_log: Vec::new(),
        }
    }

    /// The RT metrics of a run (only runs with RT tasks report them).
    pub fn metrics(&self) -> Vec<(String, f64)> {
        RT.iter()
            .map(|m| (m.doc.name.to_string(), (m.value)(&self.stats)))
            .collect()
    }

    /// `rt_rq->highest_prio.curr`: the best queued priority, MAX_RT_PRIO
    /// when none.
    pub fn highest_curr(&self, cpu: usize) -> u32 {
        self.rqs[cpu]
            .queue
            .iter()
            .map(|&t| self.tasks[t].prio)
            .min()
            .unwrap_or(MAX_RT_PRIO)
    }

    /// `rt_rq->highest_prio.next` as 4.x keeps it: the best *pushable*
    /// task's priority (queued, not running, more than one allowed CPU).
    pub fn highest_next(&self, cpu: usize) -> u32 {
        self.pick_next_pushable(cpu)
            .map_or(MAX_RT_PRIO, |t| self.tasks[t].prio)
    }

    /// `has_pushable_tasks()`.
    pub fn has_pushable(&self, cpu: usize) -> bool {
        self.pick_next_pushable(cpu).is_some()
    }

    /// `pick_next_pushable_task()`: the first of the pushable list
    /// (priority order, FIFO within a level).
    pub fn pick_next_pushable(&self, cpu: usize) -> Option<usize> {
        let rq = &self.rqs[cpu];
        rq.queue
            .iter()
            .copied()
            .filter(|&t| Some(t) != rq.curr && self.tasks[t].nr_cpus_allowed() > 1)
            .min_by_key(|&t| (self.tasks[t].prio, self.tasks[t].seq))
    }

    /// `pick_highest_pushable_task(src_rt_rq, this_cpu)`: the best pushable
    /// task on `src` allowed on `dst`.
    pub fn pick_highest_pushable(&self, src: usize, dst: usize) -> Option<usize> {
        let rq = &self.rqs[src];
        rq.queue
            .iter()
            .copied()
            .filter(|&t| {
                Some(t) != rq.curr
                    && self.tasks[t].nr_cpus_allowed() > 1
                    && self.tasks[t].allowed_on(dst)
            })
            .min_by_key(|&t| (self.tasks[t].prio, self.tasks[t].seq))
    }

    /// `pick_next_rt_entity()`: the task the rt_rq runs (FIFO within a level).
    pub fn pick_next(&self, cpu: usize) -> Option<usize> {
        self.rqs[cpu]
            .queue
            .iter()
            .copied()
            .min_by_key(|&t| (self.tasks[t].prio, self.tasks[t].seq))
    }

    /// `enqueue_task_rt()` + `inc_rt_migration()` + `update_rt_migration()`.
    pub fn enqueue(&mut self, cpu: usize, t: usize) {
        self.next_seq += 1;
        self.tasks[t].seq = self.next_seq;
        self.tasks[t].cpu = cpu;
        self.tasks[t].state = RtState::Queued;
        self.rqs[cpu].queue.push(t);
        if self.tasks[t].nr_cpus_allowed() > 1 {
            self.rqs[cpu].nr_migratory += 1;
        }
        self.update_rt_migration(cpu);
    }

    /// `dequeue_task_rt()` + `dec_rt_migration()` + `update_rt_migration()`.
    pub fn dequeue(&mut self, cpu: usize, t: usize) {
        let rq = &mut self.rqs[cpu];
        if let Some(i) = rq.queue.iter().position(|&x| x == t) {
            rq.queue.remove(i);
        }
        if rq.curr == Some(t) {
            rq.curr = None;
        }
        if self.tasks[t].nr_cpus_allowed() > 1 {
            self.rqs[cpu].nr_migratory -= 1;
        }
        self.update_rt_migration(cpu);
    }

    /// `update_rt_migration()`: overloaded while at least one queued task
    /// may migrate and more than one is queued (`rt_nr_total > 1`);
    /// `rt_set_overload()` / `rt_clear_overload()` keep `rto_mask` and
    /// `rto_count`.
    fn update_rt_migration(&mut self, cpu: usize) {
        let rq = &self.rqs[cpu];
        let over = rq.nr_migratory > 0 && rq.queue.len() > 1;
        if over != rq.overloaded {
            self.rqs[cpu].overloaded = over;
            self.rd.rto_mask[cpu] = over;
            if over {
                self.rd.rto_count += 1;
            } else {
                self.rd.rto_count -= 1;
            }
        }
    }

    /// `cpumask_next(prev, rto_mask)`: the first overloaded CPU after
    /// `prev` (-1: the first), or `None` past the end.
    pub fn rto_next_after(&self, prev: i64) -> Option<usize> {
        let start = (prev + 1).max(0) as usize;
        (start..self.rd.rto_mask.len()).find(|&c| self.rd.rto_mask[c])
    }

    /// `rto_next_cpu(rq)` of 4.1-4.14: the next overloaded CPU after
    /// `push_cpu`, wrapping round, never `this` (the walk ends before it).
    pub fn rto_next_cpu_chain(&mut self, this: usize) -> Option<usize> {
        let prev = self.rqs[this].push_cpu;
        let mut cpu = self.rto_next_after(prev as i64);
        if prev < this {
            if cpu.is_none_or(|c| c >= this) {
                return None;
            }
        } else if cpu.is_none() {
            cpu = self.rto_next_after(-1);
            if cpu.is_none_or(|c| c >= this) {
                return None;
            }
        }
        let cpu = cpu?;
        self.rqs[this].push_cpu = cpu;
        Some(cpu)
    }

    /// `find_next_push_cpu(rq)` (4.1-4.14): the next CPU of the chain whose
    /// `highest_prio.next` beats the source's `highest_prio.curr`.
    pub fn find_next_push_cpu(&mut self, src: usize) -> Option<usize> {
        loop {
            let cpu = self.rto_next_cpu_chain(src)?;
            if self.highest_next(cpu) < self.highest_curr(src) {
                return Some(cpu);
            }
        }
    }

    /// `rto_next_cpu(rd)` of 4bdced5c9a29 (4.15): from `rto_cpu` to the end
    /// of `rto_mask`, the initiator included; at the end, rescan while
    /// `rto_loop_next` moved. `skip_self` is 94894c9c477e (skip `this`).
    pub fn rto_next_cpu_rd(&mut self, this: usize, skip_self: bool) -> Option<usize> {
        loop {
            let cpu = self.rto_next_after(self.rd.rto_cpu);
            self.rd.rto_cpu = cpu.map_or(-1, |c| c as i64);
            match cpu {
                Some(c) if skip_self && c == this => continue,
                Some(c) => return Some(c),
                None => {}
            }
            let next = self.rd.rto_loop_next;
            if self.rd.rto_loop == next {
                return None;
            }
            self.rd.rto_loop = next;
        }
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
