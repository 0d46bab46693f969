//! The kinds of scheduler overhead a CPU is charged for (the system time
//! `kernel/sched/cputime.c` accounts to the CPU before the task's own
//! work): each charge says what it paid for, so the watchdog can explain a
//! stall and the report can split the overhead. A leaf module: the
//! classes and the balancer charge through it, the accounting
//! (`sched::stats::cputime`) sums it.

/// What a piece of scheduler overhead was charged for (the watchdog's
/// explanation of a stall).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overhead {
    /// `scheduler_tick()` and its timer interrupt (`tick_ns`).
    Tick = 0,
    /// `load_balance()` passes, idle balancing, NOHZ balancing, migration.
    Balance = 1,
    /// `context_switch()` and `switch_mm()`.
    Switch = 2,
    /// Wake-ups, IPIs, system-call entry.
    Other = 3,
}

/// The number of [`Overhead`] kinds.
pub(crate) const OVERHEAD_KINDS: usize = 4;
