//! The scheduler's accounting, after the kernel's statistics code: CPU
//! time by kind (`cputime`, after `kernel/sched/cputime.c`), per-task
//! scheduling delays (`latency`, what `schedstats` and `perf sched latency`
//! read) and the balancer and PELT tracepoints (`trace_hooks`).

use crate::sched::overhead::OVERHEAD_KINDS;

pub mod cputime;
pub mod latency;
pub mod trace_hooks;

#[cfg(test)]
mod trace_hooks_tests;

/// What the CPU-time accounting records for the engine's progress watchdog
/// and the Lozi metrics (`Sched::acct`).
#[derive(Clone, Debug)]
pub(crate) struct Accounting {
    /// The last instant a task consumed burst time (or took a workload
    /// step, or nothing was runnable: the engine sets it then).
    pub progress_at: u64,
    /// The last instant an RT kernel thread (`Task::kthread`) consumed
    /// burst time: what took the CPUs when the workload made no progress.
    pub kthread_progress_at: u64,
    /// The overhead charged so far, by kind (`sched::overhead::Overhead`).
    pub overhead: [u64; OVERHEAD_KINDS],
    /// The largest single charge.
    pub max_charge: u64,
    /// CPUs with an empty runqueue / with ≥ 2 runnable tasks (Lozi).
    pub n_empty: usize,
    pub n_overloaded: usize,
    /// When the Lozi sums were last brought up to date.
    pub lozi_last: u64,
}

impl Accounting {
    /// Every CPU idle (empty) at time 0.
    pub(crate) fn new(ncpus: usize) -> Self {
        Accounting {
            progress_at: 0,
            kthread_progress_at: 0,
            overhead: [0; OVERHEAD_KINDS],
            max_charge: 0,
            n_empty: ncpus,
            n_overloaded: 0,
            lozi_last: 0,
        }
    }
}
