//! The RT kernel threads of a machine ([`RtKthreads`]: `watchdog/N`,
//! threaded IRQ handlers) as ordinary tasks of the RT class, run beside a
//! workload (`Workload::rt_kthreads`; the engine adds them with
//! `Mix::beside`). Each is a SCHED_FIFO (or, for the IRQ threads, SCHED_RR)
//! task with its affinity that sleeps until its interrupt or timer, runs
//! one burst of system time and sleeps again; everything else — wake-up
//! placement, preemption, the push and pull of RT tasks and their IPIs,
//! throttling — is the RT class's (`sched::rt`), as for a workload's own
//! `chrt` tasks.
//!
//! Wake-ups: `watchdog/N` every `watchdog_period_ns` (the `watchdog_timer_fn()`
//! hrtimer, kernel/watchdog.c 3.x–4.x, pinned to CPU N, FIFO 99); an IRQ
//! thread after an exponential gap of mean `irq_period_ns` (the hard IRQ's
//! `__irq_wake_thread()`, kernel/irq/handle.c), counted from one wake-up to
//! the next, on the CPU the thread last ran on. Each thread's first
//! wake-up comes at a random phase within its period, from a stream of its
//! own (apart from the workload's draws).
//!
//! The threads exist before the run, asleep (`Workload::start_asleep_ns`):
//! none runs before its first interrupt.
//!
//! Simplifications (docs/rt.md): an interrupt is a timer on the thread's
//! CPU (no device, no hard-IRQ time of its own beyond the wake-up's); a
//! burst that overruns the next wake-up is followed by the next at once.

use super::{sys, Action, Ctx, TaskSpec, Workload};
use crate::error::CoreResult;
use crate::rng::Rng;
use crate::sched::rt::RtPolicy;
use crate::sched::task::{Policy, TaskId};
use crate::topology::Machine;
use crate::workload::rt_kthreads::RtKthreads;

/// The role of `watchdog/N` and of the IRQ threads.
pub const ROLES: &[&str] = &["watchdog", "irq_thread"];

/// One thread's timing.
struct Thread {
    period_ns: u64,
    /// Fixed (watchdog) or exponential (IRQ) gaps between wake-ups.
    periodic: bool,
    run_ns: u64,
    /// When the current (or, while asleep, the next) interrupt fires.
    wake_at: u64,
    /// The next step runs the burst (it has just been woken).
    runs_next: bool,
}

/// How many tasks `k` adds on a machine of `nr_cpus` CPUs (one watchdog
/// per CPU, the IRQ threads; without the CPU count, one watchdog).
pub fn count(k: &RtKthreads, nr_cpus: Option<usize>) -> u64 {
    let watchdogs = if k.watchdog {
        nr_cpus.unwrap_or(1) as u64
    } else {
        0
    };
    watchdogs + u64::from(k.irq_threads)
}

/// `RtKthreads` as tasks (see the module's doc).
pub struct Kthreads {
    k: RtKthreads,
    ncpus: usize,
    rng: Rng,
    threads: Vec<Thread>,
    /// When `init` created the threads.
    created_at: u64,
}

impl Kthreads {
    /// The threads of `k` on a machine of `ncpus` CPUs; `seed` is the run's.
    pub fn new(k: RtKthreads, ncpus: usize, seed: u64) -> Self {
        Kthreads {
            k,
            ncpus,
            rng: Rng::new(seed ^ 0x5254_5F6B_7468_7264),
            threads: Vec::new(),
            created_at: 0,
        }
    }

    fn spec(
        role: &'static str,
        name: String,
        cpus: Vec<u32>,
        policy: RtPolicy,
        prio: u32,
    ) -> TaskSpec {
        TaskSpec {
            role,
            name,
            nice: 0,
            cpus: Some(cpus),
            mm: None,
            policy: match policy {
                RtPolicy::Fifo => Policy::Fifo,
                RtPolicy::Rr => Policy::Rr,
            },
            rt_priority: Some(prio),
        }
    }

    /// Fork the thread `s` and keep its timing: its first step, once its
    /// first interrupt wakes it, runs the burst.
    fn add(
        threads: &mut Vec<Thread>,
        ctx: &mut Ctx,
        s: TaskSpec,
        period_ns: u64,
        periodic: bool,
        run_ns: u64,
    ) {
        ctx.spawn(s);
        threads.push(Thread {
            period_ns,
            periodic,
            run_ns,
            wake_at: 0,
            runs_next: true,
        });
    }
}

impl Workload for Kthreads {
    fn name(&self) -> &'static str {
        "rt_kthreads"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }
    fn kthread(&self, _task: TaskId) -> bool {
        true
    }
    fn validate(&self, machine: &Machine) -> CoreResult<()> {
        self.k.validate(machine.nr_cpus())
    }
    fn init(&mut self, ctx: &mut Ctx) {
        let k = &self.k;
        let n = self.ncpus;
        if k.watchdog {
            for c in 0..n {
                let s = Self::spec(
                    "watchdog",
                    format!("watchdog/{c}"),
                    vec![c as u32],
                    RtPolicy::Fifo,
                    99,
                );
                Self::add(
                    &mut self.threads,
                    ctx,
                    s,
                    k.watchdog_period_ns,
                    true,
                    k.watchdog_run_ns,
                );
            }
        }
        // Consecutive CPUs from `i * width` (mod the CPU count) for thread i.
        let width = (k.irq_cpus as usize).clamp(1, n);
        for i in 0..k.irq_threads as usize {
            let first = (i * width) % n;
            let mut cpus: Vec<u32> = (0..width).map(|j| ((first + j) % n) as u32).collect();
            cpus.sort_unstable();
            cpus.dedup();
            // The first allowed CPU is where the harness's fork puts it.
            let s = Self::spec(
                "irq_thread",
                format!("irq/{i}-schedlab"),
                cpus,
                k.irq_policy,
                k.irq_prio,
            );
            Self::add(
                &mut self.threads,
                ctx,
                s,
                k.irq_period_ns,
                false,
                k.irq_run_ns,
            );
        }
        // The first interrupt of each, at a random phase within its period;
        // they start asleep until it (`start_asleep_ns`).
        self.created_at = ctx.now;
        for t in &mut self.threads {
            t.wake_at = ctx.now + self.rng.next_u64() % t.period_ns.max(1);
        }
    }
    fn start_asleep_ns(&self, task: TaskId) -> Option<u64> {
        let t = self.threads.get(task as usize)?;
        Some(t.wake_at - self.created_at)
    }
    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        let t = &mut self.threads[task as usize];
        if t.runs_next {
            // Woken by its interrupt: run the burst; the next interrupt
            // comes one gap after this one.
            t.runs_next = false;
            let gap = if t.periodic {
                t.period_ns
            } else {
                self.rng.exp_ns(t.period_ns).max(1)
            };
            t.wake_at += gap;
            return sys(t.run_ns);
        }
        t.runs_next = true;
        Action::Sleep {
            ns: t.wake_at.saturating_sub(ctx.now).max(1),
        }
    }
    fn nr_tasks(&self) -> u64 {
        self.nr_tasks_on(self.ncpus)
    }
    fn nr_tasks_on(&self, nr_cpus: usize) -> u64 {
        count(&self.k, Some(nr_cpus))
    }
    fn finite(&self) -> bool {
        false
    }
    fn metrics(&self, _elapsed_ns: u64) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

#[cfg(test)]
#[path = "kthreads_tests.rs"]
mod tests;
