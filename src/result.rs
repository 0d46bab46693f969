//! The result of one run, as columns (struct of arrays) ready to be handed
//! to Python as numpy arrays. Output types only: `engine::report` builds
//! them from the engine's and the scheduler's state.

pub use crate::sched::pelt::PeltColumns;
use crate::sched::stats::latency::Latency;
use crate::trace::Trace;
use ndarray::Array2;

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// Finished (all tasks exited, or an endless workload reached its bound).
    Ok,
    /// A finite workload was still running at `duration_s`.
    TimeLimit,
    /// Every task blocked with nothing left to wake them.
    Deadlock,
    /// Stopped by the caller (Ctrl-C).
    Cancelled,
    /// The engine's progress watchdog ended the run: tasks were runnable
    /// but none ran for a long stretch of simulated time, because the
    /// scheduler overhead the costs charge left no CPU time for them (a
    /// livelock on overhead). The detail says why.
    Stalled(String),
    /// The workload misbehaved (e.g. made no progress).
    Error(String),
}

impl Status {
    pub fn name(&self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::TimeLimit => "time_limit",
            Status::Deadlock => "deadlock",
            Status::Cancelled => "cancelled",
            Status::Stalled(_) => "stalled",
            Status::Error(_) => "error",
        }
    }

    pub fn detail(&self) -> String {
        match self {
            Status::Error(e) | Status::Stalled(e) => e.clone(),
            _ => String::new(),
        }
    }
}

/// One row per task.
#[derive(Clone, Debug, Default)]
pub struct TaskTable {
    pub pelt: Option<PeltColumns>,
    pub task: Vec<i64>,
    pub name: Vec<String>,
    pub nice: Vec<i64>,
    pub cpu: Vec<i64>,
    pub cpu_s: Vec<f64>,
    pub user_s: Vec<f64>,
    pub sys_s: Vec<f64>,
    pub wait_s: Vec<f64>,
    pub voluntary_cs: Vec<i64>,
    pub involuntary_cs: Vec<i64>,
    pub migrations: Vec<i64>,
    pub wakeups: Vec<i64>,
    pub exited: Vec<bool>,
    /// The thread group (process) id: the pid of the first task of the
    /// task's address space (`task_struct::tgid`).
    pub tgid: Vec<i64>,
    /// The process's name as the workload names it (`Workload::process_name`).
    pub process: Vec<String>,
    /// The task's role in its workload (`Workload.roles()`).
    pub role: Vec<&'static str>,
    /// `p->prio` as ftrace prints it: 120 + nice for a fair task, 99 −
    /// rt_priority for an RT one.
    pub prio: Vec<i64>,
    /// The workload's own per-task figures (`Workload::task_columns`).
    pub extra: Vec<(&'static str, Vec<f64>)>,
}

/// One row per CPU.
#[derive(Clone, Debug, Default)]
pub struct CpuTable {
    pub pelt: Option<PeltColumns>,
    pub cpu: Vec<i64>,
    pub socket: Vec<i64>,
    pub core: Vec<i64>,
    pub thread: Vec<i64>,
    pub llc: Vec<i64>,
    pub node: Vec<i64>,
    pub user_s: Vec<f64>,
    pub sys_s: Vec<f64>,
    pub idle_s: Vec<f64>,
    pub context_switches: Vec<i64>,
    pub ticks: Vec<i64>,
    pub interrupts: Vec<i64>,
}

/// One row per sampling interval, vmstat's columns.
#[derive(Clone, Debug, Default)]
pub struct VmstatTable {
    pub time_s: Vec<f64>,
    pub interval_s: Vec<f64>,
    pub r: Vec<i64>,
    /// Interrupts per second.
    pub in_: Vec<f64>,
    /// Context switches per second.
    pub cs: Vec<f64>,
    pub us: Vec<f64>,
    pub sy: Vec<f64>,
    pub id: Vec<f64>,
}

/// `/proc/schedstat`'s domain lines: one row per (CPU, domain). The
/// per-idle-type fields are suffixed `_idle` (CPU_IDLE), `_busy`
/// (CPU_NOT_IDLE) and `_newidle` (CPU_NEWLY_IDLE).
#[derive(Clone, Debug, Default)]
pub struct SchedstatTable {
    pub cpu: Vec<i64>,
    pub domain: Vec<i64>,
    pub level: Vec<String>,
    pub span_weight: Vec<i64>,
    /// (column name, values), in /proc/schedstat order.
    pub counters: Vec<(String, Vec<i64>)>,
}

#[derive(Clone, Debug)]
pub struct SimResult {
    pub status: Status,
    pub elapsed_ns: u64,
    /// Named scalar metrics, in a stable order.
    pub metrics: Vec<(String, f64)>,
    pub tasks: TaskTable,
    pub cpus: CpuTable,
    pub vmstat: VmstatTable,
    /// CPUs × intervals busy fraction.
    pub timeline: Array2<f64>,
    /// CPUs × intervals run-queue length at each interval's end.
    pub runqueue: Array2<i64>,
    pub schedstat: SchedstatTable,
    pub trace: Option<Trace>,
    /// Every task's scheduling delays, with `RunOptions::latency`.
    pub latency: Option<Latency>,
    /// Engine statistic, not a model result (not in the Python frames):
    /// the mean number of events held in the queue at each pop (a re-armed
    /// burst end replaces its CPU's pending one: `queue`);
    /// benches/scale.rs sizes its bare-heap reference by it.
    pub mean_pending_events: f64,
}

impl SimResult {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}
