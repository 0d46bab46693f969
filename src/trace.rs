//! Scheduler event trace with ftrace's `sched:*` tracepoint fields, bounded
//! by a row limit; rows past the limit are counted, not kept.

/// ftrace event kinds. The codes are stable; `EVENT_NAMES` maps them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TraceKind {
    /// `sched_switch`: pid = prev_pid, a = prev_state, b = next_pid.
    Switch = 0,
    /// `sched_wakeup`: pid, a = target_cpu.
    Wakeup = 1,
    /// `sched_wakeup_new`: pid, a = target_cpu.
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
}

impl Trace {
    pub fn new(limit: usize) -> Self {
        Trace {
            limit,
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
