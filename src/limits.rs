//! The memory limits of one run, checked before anything is allocated, and
//! the estimate of what a run keeps (docs, "Errors and limits"). A run past a limit
//! is refused with a `CoreError` naming the parameter, its value and the
//! limit — never an allocation failure (which aborts the process).
//!
//! What a run allocates grows with: its tasks (a `Task`, a `SchedEntity`,
//! the workload's state and a row of the task table each), its CPUs (the
//! run queues, sched domains and groups, a row of the CPU table), its vmstat
//! samples (`simulate` only: a row per interval, a value per CPU in the
//! timelines) and its trace rows (`trace=True` only). Nothing else grows
//! with simulated time.

use crate::error::{CoreError, CoreResult};

/// The most tasks a workload may create over a run. About 0.6 KB each in
/// the core and the result (measured: 1 M spinners on `vm-2`, docs,
/// "Errors and limits"); the kernel's own `PID_MAX_LIMIT` is 4 M on 64-bit.
pub const MAX_TASKS: u64 = 1_000_000;

/// The most trace rows `trace_limit` may keep (25 bytes each in the core;
/// about 57 at the peak of reading `Result.trace`: measured, 5.9 M rows
/// peaked at 0.40 GB RSS).
pub const MAX_TRACE_ROWS: u64 = 20_000_000;

/// What the vmstat tables of one run may take: past it the sampler stops
/// and its last row covers the rest of the run (`vmstat_truncated` = 1).
pub const MAX_VMSTAT_BYTES: u64 = 400_000_000;

/// Bytes per vmstat row (8 columns of 8 bytes) …
const VMSTAT_ROW_BYTES: u64 = 64;
/// … and per CPU and row (the busy fraction and the run-queue length of
/// the CPU timelines, 8 bytes each in the result; 12 in the sampler).
const VMSTAT_CPU_BYTES: u64 = 16;

/// Estimated bytes per task (core state, workload state, task table row).
pub const TASK_BYTES: u64 = 600;
/// Estimated bytes per trace row (core columns and the `Result.trace` frame).
pub const TRACE_ROW_BYTES: u64 = 60;
/// Estimated bytes per balance-pass row (41 in the core; with the
/// `Result.balance_trace` frame's) and per PELT sample row (36 in the core):
/// summed from the column widths, not measured. Each table keeps at most
/// `trace_limit` rows.
pub const BALANCE_ROW_BYTES: u64 = 100;
pub const PELT_ROW_BYTES: u64 = 80;

/// The bytes one vmstat row takes on a machine of `ncpus` CPUs.
pub fn vmstat_row_bytes(ncpus: usize) -> u64 {
    VMSTAT_ROW_BYTES + VMSTAT_CPU_BYTES * ncpus as u64
}

/// The vmstat rows a run keeps at most on `ncpus` CPUs before it truncates.
pub fn max_vmstat_rows(ncpus: usize) -> u64 {
    MAX_VMSTAT_BYTES / vmstat_row_bytes(ncpus)
}

/// Refuse a workload of `tasks` tasks past `MAX_TASKS`; `what` names the
/// argument that sets the count (e.g. `spinners(nice=[...])`).
pub fn check_tasks(what: &str, shown: impl std::fmt::Display, tasks: u64) -> CoreResult<()> {
    if tasks > MAX_TASKS {
        return Err(CoreError::invalid(
            what,
            shown,
            format!(
                "at most {MAX_TASKS} tasks (it makes {tasks}): each costs about \
                 {TASK_BYTES} bytes; the limit keeps a run within about {} MB",
                MAX_TASKS * TASK_BYTES / 1_000_000
            ),
        ));
    }
    Ok(())
}

/// The most tasks a run with `latency=True` may create: each keeps
/// `sched::stats::latency::LAT_TASK_BYTES` (4.3 KB) of histograms, so the limit
/// keeps them within about 430 MB.
pub const MAX_LATENCY_TASKS: u64 = 100_000;

/// Refuse `latency=True` for a workload of more than `MAX_LATENCY_TASKS`.
pub fn check_latency_tasks(tasks: u64) -> CoreResult<()> {
    if tasks > MAX_LATENCY_TASKS {
        let per = crate::sched::stats::latency::LAT_TASK_BYTES;
        return Err(CoreError::invalid(
            "latency",
            "True",
            format!(
                "False for a workload of {tasks} tasks: latency=True keeps {per} bytes of \
                 histograms per task, for at most {MAX_LATENCY_TASKS} tasks (about {} MB)",
                MAX_LATENCY_TASKS * per / 1_000_000
            ),
        ));
    }
    Ok(())
}

/// Refuse a trace limit past `MAX_TRACE_ROWS`.
pub fn check_trace_limit(limit: Option<usize>) -> CoreResult<()> {
    match limit {
        Some(0) => Err(CoreError::invalid(
            "trace_limit",
            0,
            format!("an integer from 1 to {MAX_TRACE_ROWS}"),
        )),
        Some(n) if n as u64 > MAX_TRACE_ROWS => Err(CoreError::invalid(
            "trace_limit",
            n,
            format!(
                "an integer from 1 to {MAX_TRACE_ROWS} (about {TRACE_ROW_BYTES} bytes a row \
                 once read as a frame: at most about {} MB)",
                MAX_TRACE_ROWS * TRACE_ROW_BYTES / 1_000_000
            ),
        )),
        _ => Ok(()),
    }
}

/// The estimated peak bytes of one run, by what they grow with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    pub tasks: u64,
    pub cpus: u64,
    pub vmstat: u64,
    pub trace: u64,
}

impl Footprint {
    pub fn total(&self) -> u64 {
        self.tasks + self.cpus + self.vmstat + self.trace
    }
}

/// Estimated bytes per CPU (run queue, domains, per-CPU tables) and per
/// CPU pair (the domains' group spans): fitted to the peak RSS of a short
/// run on 512, 1,024 and 2,048 CPUs (+4, +19, +56 MB over one CPU).
const CPU_BYTES: u64 = 10_000;
const CPU_GROUP_BYTES: u64 = 9;

/// The footprint of a run of `tasks` tasks on `ncpus` CPUs, with vmstat
/// rows every `interval_ns` over `duration_ns` (`None`: unknown, the cap
/// assumed; `sampled` false: a sweep run, one row) and `trace_limit` rows.
pub fn estimate(
    tasks: u64,
    ncpus: usize,
    sampled: bool,
    duration_ns: Option<u64>,
    interval_ns: u64,
    trace_limit: Option<usize>,
) -> Footprint {
    let n = ncpus as u64;
    let rows = if sampled {
        let cap = max_vmstat_rows(ncpus) + 1;
        match duration_ns {
            Some(d) => (d / interval_ns.max(1) + 2).min(cap),
            None => cap,
        }
    } else {
        1
    };
    Footprint {
        tasks: tasks * TASK_BYTES,
        cpus: n * CPU_BYTES + n * n * CPU_GROUP_BYTES,
        vmstat: rows * vmstat_row_bytes(ncpus),
        trace: trace_limit.map_or(0, |l| {
            let l = l as u64;
            l * (TRACE_ROW_BYTES + BALANCE_ROW_BYTES) + l.min(rows * n) * PELT_ROW_BYTES
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vmstat_cap_is_400_mb_whatever_the_cpus() {
        for n in [1, 2, 112, 4096] {
            let bytes = max_vmstat_rows(n) * vmstat_row_bytes(n);
            assert!(bytes <= MAX_VMSTAT_BYTES, "{n}");
            assert!(bytes + vmstat_row_bytes(n) > MAX_VMSTAT_BYTES, "{n}");
        }
        // one CPU: 5 M rows of 80 bytes (the old cap of 5e7 values kept
        // 50 M rows, about 3.8 GB)
        assert_eq!(max_vmstat_rows(1), 5_000_000);
    }

    #[test]
    fn limits_are_refused_naming_the_parameter() {
        let e = check_tasks("nice", "[...]", MAX_TASKS + 1).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("invalid nice=[...]: expected at most 1000000 tasks"));
        assert!(check_tasks("nice", "[...]", MAX_TASKS).is_ok());
        assert!(check_trace_limit(Some(MAX_TRACE_ROWS as usize)).is_ok());
        let e = check_trace_limit(Some(MAX_TRACE_ROWS as usize + 1)).unwrap_err();
        assert!(e.to_string().starts_with("invalid trace_limit=20000001"));
        assert!(check_trace_limit(None).is_ok());
    }
}
