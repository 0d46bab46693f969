//! The scheduler's accounting, after the kernel's statistics code: CPU
//! time by kind (`cputime`, after `kernel/sched/cputime.c`), per-task
//! scheduling delays (`latency`, what `schedstats` and `perf sched latency`
//! read) and the balancer and PELT tracepoints (`trace_hooks`).

pub mod cputime;
pub mod latency;
pub mod trace_hooks;

#[cfg(test)]
mod trace_hooks_tests;
