//! Scheduler event trace with ftrace's `sched:*` tracepoint fields, and
//! beside it the balancer's passes and per-CPU PELT samples; each table is
//! bounded by the same row limit, rows past it are counted, not kept.

/// ftrace event kinds. The codes are stable; `EVENT_NAMES` maps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TraceKind {
    /// `sched_switch`: pid = prev_pid, a = prev_state, b = next_pid.
    Switch = 0,
    /// `sched_wakeup`: pid, a = target_cpu, b = the waker's pid (ftrace's
    /// common_pid of `sched_waking`, which the model emits at the same instant).
    Wakeup = 1,
    /// `sched_wakeup_new`: pid, a = target_cpu, b = the parent's pid.
    WakeupNew = 2,
    /// `sched_migrate_task`: pid, a = orig_cpu, b = dest_cpu.
    MigrateTask = 3,
    /// `sched_process_exit`: pid.
    ProcessExit = 4,
}

pub const EVENT_NAMES: &[&str] = &[
    "sched_switch",
    "sched_wakeup",
    "sched_wakeup_new",
    "sched_migrate_task",
    "sched_process_exit",
];

/// `prev_state` codes as ftrace prints them.
pub const PREV_STATE_RUNNING: i32 = 0; // "R"
pub const PREV_STATE_SLEEPING: i32 = 1; // "S"
pub const PREV_STATE_DEAD: i32 = 2; // "X"
pub const PREV_STATE_NAMES: &[&str] = &["R", "S", "X"];

#[derive(Clone, Debug, Default)]
pub struct Trace {
    pub limit: usize,
    pub dropped: u64,
    pub time_ns: Vec<u64>,
    pub cpu: Vec<i32>,
    pub kind: Vec<u8>,
    pub pid: Vec<i32>,
    pub a: Vec<i32>,
    pub b: Vec<i32>,
    /// The balance passes (`r.balance_trace`).
    pub balance: BalanceTrace,
    /// The per-CPU PELT samples (`r.pelt_trace`).
    pub pelt: PeltTrace,
}

impl Trace {
    pub fn new(limit: usize) -> Self {
        Trace {
            limit,
            balance: BalanceTrace {
                limit,
                ..Default::default()
            },
            pelt: PeltTrace {
                limit,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    pub fn push(&mut self, time: u64, cpu: usize, kind: TraceKind, pid: i32, a: i32, b: i32) {
        if self.time_ns.len() >= self.limit {
            self.dropped += 1;
            return;
        }
        self.time_ns.push(time);
        self.cpu.push(cpu as i32);
        self.kind.push(kind as u8);
        self.pid.push(pid);
        self.a.push(a);
        self.b.push(b);
    }
}

/// Where a balance pass ran from (`BalanceTrace::kind`); the codes are
/// stable, `BALANCE_KIND_NAMES` maps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BalanceKind {
    /// `rebalance_domains()` from the SCHED_SOFTIRQ of a CPU's own tick.
    Periodic = 0,
    /// `idle_balance()` / `sched_balance_newidle()` inside `schedule()`.
    Newidle = 1,
    /// `nohz_idle_balance()`: the kicked idle CPU balancing for itself and
    /// on behalf of the other tickless idle CPUs.
    Nohz = 2,
    /// `active_load_balance_cpu_stop()`: the stopper on the busiest CPU
    /// pushing one task (not a `load_balance()` pass, its follow-up).
    Active = 3,
}

pub const BALANCE_KIND_NAMES: &[&str] = &["periodic", "newidle", "nohz", "active"];

/// What a balance pass did (`BalanceTrace::outcome`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BalanceOutcome {
    /// Moved `moved` ≥ 1 tasks.
    Moved = 0,
    /// Found no imbalance it could act on (`out_balanced`, schedstat
    /// `lb_balanced`), including every candidate task pinned.
    Balanced = 1,
    /// Found a busiest queue but moved nothing (schedstat `lb_failed`).
    Failed = 2,
    /// Not this group's balance CPU (`should_we_balance()` false, 3.8's
    /// `*balance = 0`): the pass stopped before looking.
    Skipped = 3,
}

pub const BALANCE_OUTCOME_NAMES: &[&str] = &["moved", "balanced", "failed", "skipped"];

/// One row per balance pass, kept only with a trace and bounded by the
/// same row limit as the events (rows past it are counted, not kept).
#[derive(Clone, Debug, Default)]
pub struct BalanceTrace {
    pub limit: usize,
    pub dropped: u64,
    /// The instant the pass ran (a pass is instantaneous in the model; its
    /// CPU time, `cost_ns`, is charged to `cpu` afterwards).
    pub time_ns: Vec<u64>,
    /// The CPU running the pass (the idle load balancer for `nohz`, the
    /// busiest CPU's stopper for `active`).
    pub cpu: Vec<i32>,
    /// The CPU the pass pulls to (`env->dst_cpu`).
    pub dst_cpu: Vec<i32>,
    /// The level of `dst_cpu`'s sched domain balanced (0 = lowest).
    pub domain: Vec<u8>,
    /// `enum cpu_idle_type` (`balance::IdleType` codes).
    pub idle: Vec<u8>,
    pub kind: Vec<u8>,
    pub outcome: Vec<u8>,
    pub moved: Vec<u32>,
    /// The busiest CPU found (`env->src_cpu`), −1 when none was.
    pub busiest: Vec<i32>,
    /// The pass started an active balance (`stop_one_cpu_nowait()`).
    pub active: Vec<bool>,
    /// The pass's modelled CPU time (`LbEnv::cost`).
    pub cost_ns: Vec<u64>,
    /// Not a row: the context the next passes run in (set by the NOHZ
    /// idle balancer around its walk).
    pub(crate) ctx: Option<(BalanceKind, usize)>,
}

/// One balance pass, as `BalanceTrace::push` takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BalanceRow {
    pub time: u64,
    pub cpu: usize,
    pub dst_cpu: usize,
    pub domain: usize,
    pub idle: u8,
    pub kind: BalanceKind,
    pub outcome: BalanceOutcome,
    pub moved: u64,
    pub busiest: Option<usize>,
    pub active: bool,
    pub cost_ns: u64,
}

impl BalanceTrace {
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    pub fn push(&mut self, r: BalanceRow) {
        if self.time_ns.len() >= self.limit {
            self.dropped += 1;
            return;
        }
        self.time_ns.push(r.time);
        self.cpu.push(r.cpu as i32);
        self.dst_cpu.push(r.dst_cpu as i32);
        self.domain.push(r.domain as u8);
        self.idle.push(r.idle);
        self.kind.push(r.kind as u8);
        self.outcome.push(r.outcome as u8);
        self.moved.push(r.moved.min(u32::MAX as u64) as u32);
        self.busiest.push(r.busiest.map_or(-1, |b| b as i32));
        self.active.push(r.active);
        self.cost_ns.push(r.cost_ns);
    }
}

/// Per-CPU PELT signals of the CFS runqueue at each vmstat sample, kept
/// only with a trace on a kernel with PELT; bounded by the trace's row
/// limit (a row per CPU and sample; rows past it are counted, not kept).
#[derive(Clone, Debug, Default)]
pub struct PeltTrace {
    pub limit: usize,
    pub dropped: u64,
    pub time_ns: Vec<u64>,
    pub cpu: Vec<i32>,
    pub util_avg: Vec<u64>,
    pub load_avg: Vec<u64>,
    pub runnable_avg: Vec<u64>,
}

impl PeltTrace {
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    pub fn push(&mut self, time: u64, cpu: usize, util: u64, load: u64, runnable: u64) {
        if self.time_ns.len() >= self.limit {
            self.dropped += 1;
            return;
        }
        self.time_ns.push(time);
        self.cpu.push(cpu as i32);
        self.util_avg.push(util);
        self.load_avg.push(load);
        self.runnable_avg.push(runnable);
    }
}
