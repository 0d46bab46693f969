//! The body of a Perfetto trace (`Result.to_perfetto`, whose module
//! `schedlab.io.pftrace` describes the file): after the head that Python
//! writes (the process tree and the track descriptors), every packet that
//! grows with the run — the ftrace event bundles of the trace and the
//! TrackEvent counters and balancer slices — encoded here and streamed to a
//! `Write` in chunks, never held whole. The trace's rows come in chunks too
//! (`BodyWriter::push`); what is kept is one open bundle per CPU (at most
//! `max_bundle_events` events) and one chunk of output.
//!
//! The bytes are those Perfetto's protobuf classes serialize the same
//! packets to (a message's fields in field-number order), the packets and
//! their order those of the per-event Python writer this replaced (the two
//! files compared byte for byte when it did):
//!
//! - the trace's rows become ftrace events in order, a `sched_waking`
//!   before each `sched_wakeup` (same instant and CPU), the waker as the
//!   common pid of both and of `sched_wakeup_new`; the previous task of a
//!   switch and the task of a migration or exit as theirs;
//! - each event goes into its CPU's open bundle, written when it holds
//!   `max_bundle_events` events and the rest, in CPU order, after the last
//!   row; with `compact`, a switch whose previous task is the CPU's last
//!   switched-in task, and a waking whose waker is, go in the bundle's
//!   `compact_sched` columns (unless an event at the same instant already
//!   sits later in the trace processor's order: compact switches, compact
//!   wakings, plain events), the others as plain events;
//! - before each event, the counter and slice packets up to its instant: at
//!   each vmstat sample a run-queue counter per CPU, then the PELT rows up
//!   to it (util_avg, load_avg); the balancer slices, laid end to end per
//!   CPU (a pass begins at the later of its instant and the end of the
//!   CPU's previous one and lasts its `cost_ns`) and merged over the CPUs
//!   in time order (ties by CPU); a sample before a slice at one instant;
//! - at the end, the rest up to the last event's instant (a truncated
//!   trace) or the run's end, whichever is later for a complete one; a
//!   slice still open then ends there, later ones are left out.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::{self, Write};

use ndarray::ArrayView2;

use super::proto::{
    bytes_field_len, put_bytes, put_int, put_packed, put_tag, put_uint, put_varint, tag_len,
    varint_len, LEN,
};
use crate::error::CoreError;
use crate::trace::TraceKind;

/// The one packet sequence every packet of the file belongs to.
pub const SEQUENCE_ID: u64 = 1;
/// Track uuids: CPU n's run-queue counter track is `RUNQUEUE_TRACK_BASE + n`.
pub const RUNQUEUE_TRACK_BASE: u64 = 1_000_000;
/// CPU n's balancer track.
pub const BALANCE_TRACK_BASE: u64 = 2_000_000;
/// CPU n's PELT util_avg counter track.
pub const UTIL_TRACK_BASE: u64 = 3_000_000;
/// CPU n's PELT load_avg counter track.
pub const LOAD_TRACK_BASE: u64 = 4_000_000;
/// `p->prio` of the idle task, and of a pid the task table does not know.
pub const IDLE_PRIO: i32 = 120;
/// The comm of a pid the task table does not know (as ftrace prints it).
pub const UNKNOWN_COMM: &str = "<...>";
/// The default size of the chunks handed to the writer.
pub const DEFAULT_CHUNK_BYTES: usize = 1 << 20;

/// Field numbers of Perfetto's protos (`perfetto/trace/...`), and the
/// TrackEvent types the file uses.
mod pb {
    // TracePacket
    pub const PACKET_FTRACE_EVENTS: u32 = 1;
    pub const PACKET_TIMESTAMP: u32 = 8;
    pub const PACKET_SEQUENCE_ID: u32 = 10;
    pub const PACKET_TRACK_EVENT: u32 = 11;
    // FtraceEventBundle
    pub const BUNDLE_CPU: u32 = 1;
    pub const BUNDLE_EVENT: u32 = 2;
    pub const BUNDLE_COMPACT_SCHED: u32 = 4;
    // FtraceEventBundle.CompactSched
    pub const SWITCH_TIMESTAMP: u32 = 1;
    pub const SWITCH_PREV_STATE: u32 = 2;
    pub const SWITCH_NEXT_PID: u32 = 3;
    pub const SWITCH_NEXT_PRIO: u32 = 4;
    pub const INTERN_TABLE: u32 = 5;
    pub const SWITCH_NEXT_COMM_INDEX: u32 = 6;
    pub const WAKING_TIMESTAMP: u32 = 7;
    pub const WAKING_PID: u32 = 8;
    pub const WAKING_TARGET_CPU: u32 = 9;
    pub const WAKING_PRIO: u32 = 10;
    pub const WAKING_COMM_INDEX: u32 = 11;
    pub const WAKING_COMMON_FLAGS: u32 = 12;
    // FtraceEvent
    pub const EVENT_TIMESTAMP: u32 = 1;
    pub const EVENT_PID: u32 = 2;
    pub const SCHED_SWITCH: u32 = 4;
    pub const SCHED_WAKEUP: u32 = 17;
    pub const SCHED_WAKING: u32 = 20;
    pub const SCHED_WAKEUP_NEW: u32 = 114;
    pub const SCHED_PROCESS_EXIT: u32 = 238;
    pub const SCHED_MIGRATE_TASK: u32 = 491;
    // TrackEvent
    pub const TE_DEBUG_ANNOTATIONS: u32 = 4;
    pub const TE_TYPE: u32 = 9;
    pub const TE_TRACK_UUID: u32 = 11;
    pub const TE_NAME: u32 = 23;
    pub const TE_COUNTER_VALUE: u32 = 30;
    pub const TYPE_SLICE_BEGIN: u64 = 1;
    pub const TYPE_SLICE_END: u64 = 2;
    pub const TYPE_COUNTER: u64 = 4;
    // DebugAnnotation
    pub const ANN_BOOL_VALUE: u32 = 2;
    pub const ANN_INT_VALUE: u32 = 4;
    pub const ANN_STRING_VALUE: u32 = 6;
    pub const ANN_NAME: u32 = 10;
}

/// The trace's rows, a column each, in the core's `trace::Trace` layout.
#[derive(Clone, Copy, Debug)]
pub struct SchedRows<'a> {
    pub time_ns: &'a [u64],
    pub cpu: &'a [i32],
    /// `trace::TraceKind` codes.
    pub kind: &'a [u8],
    /// prev_pid of a switch; the woken, migrated or exiting task otherwise.
    pub pid: &'a [i32],
    /// A switch's prev_state (the kernel's number: R = 0, S = 1, D = 2,
    /// X = 16), a wake-up's target_cpu, a migration's orig_cpu (an exit's
    /// is not read).
    pub a: &'a [i32],
    /// A switch's next_pid, a wake-up's waker (0 when none), a migration's
    /// dest_cpu (an exit's is not read).
    pub b: &'a [i32],
}

/// The task table: each task's pid, ftrace comm (already cut to 15 bytes),
/// prio and tgid. A pid listed twice takes its last row.
#[derive(Clone, Copy, Debug)]
pub struct TaskRows<'a> {
    pub pid: &'a [i64],
    pub comm: &'a [String],
    pub prio: &'a [i64],
    pub tgid: &'a [i64],
}

/// The vmstat samples: their instants and the run queue's length per CPU
/// at each (CPUs × samples).
#[derive(Clone, Debug)]
pub struct Samples<'a> {
    pub time_ns: &'a [u64],
    pub runqueue: ArrayView2<'a, i64>,
}

/// The PELT rows (`r.pelt_trace`), in their order.
#[derive(Clone, Copy, Debug)]
pub struct PeltRows<'a> {
    pub time_ns: &'a [u64],
    pub cpu: &'a [i32],
    pub util_avg: &'a [u64],
    pub load_avg: &'a [u64],
}

/// The balance passes (`r.balance_trace`), in their order: the columns the
/// slices are placed by, each slice's name (an index into `names`) and its
/// debug annotations.
#[derive(Clone, Copy, Debug)]
pub struct BalanceRows<'a> {
    pub time_ns: &'a [u64],
    pub cpu: &'a [i32],
    pub cost_ns: &'a [u64],
    pub name: &'a [u32],
    pub names: &'a [String],
    pub dst_cpu: &'a [i32],
    pub domain: &'a [u8],
    pub moved: &'a [u32],
    pub idle: &'a [u8],
    pub idle_names: &'a [String],
    pub outcome: &'a [u8],
    pub outcome_names: &'a [String],
    /// −1 when the pass found no busiest CPU.
    pub busiest: &'a [i32],
    pub active: &'a [bool],
}

/// The tables beside the trace that the body is made of.
#[derive(Clone, Debug)]
pub struct Tables<'a> {
    pub tasks: TaskRows<'a>,
    pub samples: Samples<'a>,
    pub pelt: PeltRows<'a>,
    pub balance: BalanceRows<'a>,
}

/// How the body is written.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The machine's CPUs: every CPU of the tables is below it.
    pub nr_cpus: usize,
    /// Switches and wakings in the bundles' compact columns where the
    /// reader can infer what they leave out.
    pub compact: bool,
    /// The most events one bundle holds.
    pub max_bundle_events: usize,
    /// The run's simulated end.
    pub end_ns: u64,
    /// The trace hit its row limit: the file ends at its last row.
    pub truncated: bool,
    /// The writer is handed chunks of about this many bytes.
    pub chunk_bytes: usize,
}

/// Why the body could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A table, a trace row or an option is not what the export takes
    /// (found before anything of that table or chunk of rows is written).
    #[error(transparent)]
    Invalid(#[from] CoreError),
    /// The writer failed.
    #[error("writing the trace: {0}")]
    Io(#[from] io::Error),
}

/// Write the body of the trace `sched` with `tables` to `out` in one go
/// (`BodyWriter` with all the rows in one chunk).
pub fn write_body<W: Write>(
    out: W,
    sched: &SchedRows<'_>,
    tables: &Tables<'_>,
    opts: &Options,
) -> Result<(), ExportError> {
    let mut w = BodyWriter::new(out, tables, opts)?;
    w.push(sched)?;
    w.finish()
}

/// The body being written: the trace's rows are pushed in chunks, in
/// order, each checked and then encoded (see the module doc); `finish`
/// writes the open bundles and the tracks' rest. `out` is handed whole
/// chunks of about `Options::chunk_bytes`, then flushed.
pub struct BodyWriter<'a, W: Write> {
    body: Body<W>,
    tracks: Tracks<'a>,
    nr_cpus: usize,
    end_ns: u64,
    truncated: bool,
    /// The rows pushed so far, and each CPU's latest instant.
    rows: usize,
    cpu_ts: Vec<u64>,
    last_ts: u64,
}

impl<'a, W: Write> BodyWriter<'a, W> {
    /// A writer of the body with `tables` (checked, with `opts`, before
    /// anything is written).
    pub fn new(out: W, tables: &Tables<'a>, opts: &Options) -> Result<Self, ExportError> {
        check_tables(tables, opts)?;
        let body = Body {
            sink: Sink {
                out,
                buf: Vec::with_capacity(opts.chunk_bytes.min(1 << 24) + (1 << 16)),
                chunk: opts.chunk_bytes,
            },
            names: Names::new(&tables.tasks, opts.nr_cpus),
            bundles: (0..opts.nr_cpus).map(|_| Bundle::default()).collect(),
            running: vec![None; opts.nr_cpus],
            scratch: Vec::new(),
            compact: opts.compact,
            max_events: opts.max_bundle_events,
        };
        Ok(BodyWriter {
            body,
            tracks: Tracks::new(tables, opts.nr_cpus),
            nr_cpus: opts.nr_cpus,
            end_ns: opts.end_ns,
            truncated: opts.truncated,
            rows: 0,
            cpu_ts: vec![0; opts.nr_cpus],
            last_ts: 0,
        })
    }

    /// The trace's next rows: checked (an invalid one is reported before
    /// any of `sched` is written, by its row number in the whole trace),
    /// then each row's events after the counters and slices up to its
    /// instant.
    pub fn push(&mut self, sched: &SchedRows<'_>) -> Result<(), ExportError> {
        check_rows(sched, self.rows, &mut self.cpu_ts)?;
        self.rows += sched.time_ns.len();
        let (w, s) = (&mut self.body, sched);
        for i in 0..s.time_ns.len() {
            let (ts, cpu, pid, a, b) = (s.time_ns[i], s.cpu[i] as usize, s.pid[i], s.a[i], s.b[i]);
            self.tracks.emit_until(ts, &mut w.sink)?;
            let e = |kind, common| Event {
                ts,
                cpu,
                kind,
                common,
                pid,
                a,
                b,
            };
            match s.kind[i] {
                k if k == TraceKind::Switch as u8 => w.add(e(Ev::Switch, pid))?,
                k if k == TraceKind::Wakeup as u8 => {
                    w.add(e(Ev::Waking, b))?;
                    w.add(e(Ev::Wakeup, b))?;
                }
                k if k == TraceKind::WakeupNew as u8 => w.add(e(Ev::WakeupNew, b))?,
                k if k == TraceKind::MigrateTask as u8 => w.add(e(Ev::Migrate, pid))?,
                _ => w.add(e(Ev::Exit, pid))?, // checked: TraceKind::ProcessExit
            }
            self.last_ts = ts;
        }
        Ok(())
    }

    /// The open bundles (in CPU order), then the counters and slices up to
    /// the end: the last row's instant for a truncated trace, else the
    /// later of it and the run's end.
    pub fn finish(mut self) -> Result<(), ExportError> {
        for cpu in 0..self.nr_cpus {
            self.body.flush(cpu)?;
        }
        let last = if self.truncated {
            self.last_ts
        } else {
            self.end_ns.max(self.last_ts)
        };
        self.tracks.finish(last, &mut self.body.sink)?;
        self.body.sink.finish()
    }
}

/// A `CoreError::InvalidValue` of `param`.
fn invalid(
    param: &str,
    value: impl std::fmt::Display,
    allowed: impl std::fmt::Display,
) -> CoreError {
    CoreError::invalid(param, value, allowed)
}

/// Every column of a table as long as its first.
fn same_length(table: &str, cols: &[(&str, usize)]) -> Result<(), CoreError> {
    let n = cols[0].1;
    match cols.iter().find(|(_, len)| *len != n) {
        None => Ok(()),
        Some((name, len)) => Err(invalid(
            &format!("{table}.{name}"),
            format!("a column of {len} rows"),
            format!("{n} rows, as {table}.{}", cols[0].0),
        )),
    }
}

/// `cpu` of row `row` of column `param` is a CPU of the machine.
fn check_cpu(param: &str, row: usize, cpu: i32, nr_cpus: usize) -> Result<(), CoreError> {
    if cpu < 0 || cpu as usize >= nr_cpus {
        return Err(invalid(
            param,
            format!("{cpu} (row {row})"),
            format!("a CPU from 0 to {}", nr_cpus - 1),
        ));
    }
    Ok(())
}

/// Check the options and the tables beside the trace.
fn check_tables(tables: &Tables<'_>, opts: &Options) -> Result<(), CoreError> {
    let n_cpus = opts.nr_cpus;
    if n_cpus == 0 || n_cpus > u32::MAX as usize {
        return Err(invalid("nr_cpus", n_cpus, "from 1 to 2**32 - 1"));
    }
    if opts.max_bundle_events == 0 {
        return Err(invalid("max_bundle_events", 0, "at least 1"));
    }
    if opts.chunk_bytes == 0 || opts.chunk_bytes > 1 << 30 {
        return Err(invalid("chunk_bytes", opts.chunk_bytes, "from 1 to 2**30"));
    }
    let t = &tables.tasks;
    same_length(
        "tasks",
        &[
            ("pid", t.pid.len()),
            ("comm", t.comm.len()),
            ("prio", t.prio.len()),
            ("tgid", t.tgid.len()),
        ],
    )?;
    for (name, col) in [("prio", t.prio), ("tgid", t.tgid)] {
        if let Some((i, v)) = col
            .iter()
            .enumerate()
            .find(|(_, v)| i32::try_from(**v).is_err())
        {
            return Err(invalid(
                &format!("tasks.{name}"),
                format!("{v} (row {i})"),
                "a 32-bit integer",
            ));
        }
    }
    let sm = &tables.samples;
    if !sm.time_ns.is_empty() && sm.runqueue.dim() != (n_cpus, sm.time_ns.len()) {
        return Err(invalid(
            "runqueue",
            format!("an array of shape {:?}", sm.runqueue.dim()),
            format!("CPUs x samples = ({n_cpus}, {})", sm.time_ns.len()),
        ));
    }
    let p = &tables.pelt;
    same_length(
        "pelt",
        &[
            ("time_ns", p.time_ns.len()),
            ("cpu", p.cpu.len()),
            ("util_avg", p.util_avg.len()),
            ("load_avg", p.load_avg.len()),
        ],
    )?;
    for i in 0..p.time_ns.len() {
        check_cpu("pelt.cpu", i, p.cpu[i], n_cpus)?;
        for (name, v) in [("util_avg", p.util_avg[i]), ("load_avg", p.load_avg[i])] {
            if i64::try_from(v).is_err() {
                return Err(invalid(
                    &format!("pelt.{name}"),
                    format!("{v} (row {i})"),
                    "below 2**63",
                ));
            }
        }
    }
    let b = &tables.balance;
    same_length(
        "balance",
        &[
            ("time_ns", b.time_ns.len()),
            ("cpu", b.cpu.len()),
            ("cost_ns", b.cost_ns.len()),
            ("name", b.name.len()),
            ("dst_cpu", b.dst_cpu.len()),
            ("domain", b.domain.len()),
            ("moved", b.moved.len()),
            ("idle", b.idle.len()),
            ("outcome", b.outcome.len()),
            ("busiest", b.busiest.len()),
            ("active", b.active.len()),
        ],
    )?;
    if b.time_ns.len() > u32::MAX as usize {
        return Err(invalid(
            "balance",
            format!("{} rows", b.time_ns.len()),
            "below 2**32 rows",
        ));
    }
    let mut free = vec![0u64; n_cpus];
    for i in 0..b.time_ns.len() {
        check_cpu("balance.cpu", i, b.cpu[i], n_cpus)?;
        for (name, code, labels) in [
            ("name", b.name[i] as usize, b.names.len()),
            ("idle", b.idle[i] as usize, b.idle_names.len()),
            ("outcome", b.outcome[i] as usize, b.outcome_names.len()),
        ] {
            if code >= labels {
                return Err(invalid(
                    &format!("balance.{name}"),
                    format!("{code} (row {i})"),
                    format!("an index into its {labels} labels"),
                ));
            }
        }
        // the slice's end, and both times as int64 annotations
        let cpu = b.cpu[i] as usize;
        let start = b.time_ns[i].max(free[cpu]);
        free[cpu] = start
            .checked_add(b.cost_ns[i])
            .filter(|end| *end <= i64::MAX as u64)
            .ok_or_else(|| {
                invalid(
                    "balance.cost_ns",
                    format!("{} (row {i})", b.cost_ns[i]),
                    "slices that end before 2**63 ns",
                )
            })?;
    }
    Ok(())
}

/// Check the trace rows `s`, the first of them row `first` of the trace;
/// `cpu_ts` holds each CPU's latest instant before them (and after them
/// on return).
fn check_rows(s: &SchedRows<'_>, first: usize, cpu_ts: &mut [u64]) -> Result<(), CoreError> {
    let n_cpus = cpu_ts.len();
    same_length(
        "trace",
        &[
            ("time_ns", s.time_ns.len()),
            ("cpu", s.cpu.len()),
            ("kind", s.kind.len()),
            ("pid", s.pid.len()),
            ("a", s.a.len()),
            ("b", s.b.len()),
        ],
    )?;
    for i in 0..s.time_ns.len() {
        check_cpu("trace.cpu", first + i, s.cpu[i], n_cpus)?;
        let cpu = s.cpu[i] as usize;
        if s.time_ns[i] < cpu_ts[cpu] {
            return Err(invalid(
                "trace.time_ns",
                format!("{} (row {})", s.time_ns[i], first + i),
                format!(
                    "each CPU's rows in time order (CPU {cpu} was at {})",
                    cpu_ts[cpu]
                ),
            ));
        }
        cpu_ts[cpu] = s.time_ns[i];
        if s.kind[i] > TraceKind::ProcessExit as u8 {
            return Err(invalid(
                "trace.kind",
                format!("{} (row {})", s.kind[i], first + i),
                "a trace event code from 0 to 4",
            ));
        }
        if s.pid[i] < 0 {
            return Err(invalid(
                "trace.pid",
                format!("{} (row {})", s.pid[i], first + i),
                "a pid >= 0",
            ));
        }
        let wakeup =
            s.kind[i] == TraceKind::Wakeup as u8 || s.kind[i] == TraceKind::WakeupNew as u8;
        if wakeup && s.b[i] < 0 {
            return Err(invalid(
                "trace.b",
                format!("{} (row {})", s.b[i], first + i),
                "a waker pid >= 0",
            ));
        }
    }
    Ok(())
}

/// Where an event sits in the trace processor's order at one timestamp of
/// one bundle: compact switches, then compact wakings, then plain events.
const COMPACT_SWITCH: i8 = 0;
const COMPACT_WAKING: i8 = 1;
const PLAIN: i8 = 2;

/// The ftrace events a trace row becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Switch,
    Waking,
    Wakeup,
    WakeupNew,
    Migrate,
    Exit,
}

/// One ftrace event: `pid`, `a`, `b` as in `SchedRows`; `common` the
/// common pid.
#[derive(Clone, Copy, Debug)]
struct Event {
    ts: u64,
    cpu: usize,
    kind: Ev,
    common: i32,
    pid: i32,
    a: i32,
    b: i32,
}

/// Each pid's row of the task table.
enum PidIndex {
    /// Pids from 0 to a bound near the table's length: a row (or
    /// `u32::MAX`) per pid.
    Dense(Vec<u32>),
    Sparse(HashMap<i64, u32>),
}

/// The comms (each distinct string once, by id), prios and tgids of the
/// tasks, and the idle task's comm per CPU.
struct Names {
    comms: Vec<Vec<u8>>,
    swapper: Vec<u32>,
    unknown: u32,
    index: PidIndex,
    task_comm: Vec<u32>,
    task_prio: Vec<i32>,
    task_tgid: Vec<i32>,
}

impl Names {
    /// The tables of `t` (checked) on a machine of `nr_cpus` CPUs.
    fn new(t: &TaskRows<'_>, nr_cpus: usize) -> Names {
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut comms: Vec<Vec<u8>> = Vec::new();
        let mut intern = |s: &str| -> u32 {
            if let Some(&id) = ids.get(s) {
                return id;
            }
            let id = comms.len() as u32;
            comms.push(s.as_bytes().to_vec());
            ids.insert(s.to_string(), id);
            id
        };
        let task_comm: Vec<u32> = t.comm.iter().map(|c| intern(c)).collect();
        let swapper = (0..nr_cpus)
            .map(|c| intern(&format!("swapper/{c}")))
            .collect();
        let unknown = intern(UNKNOWN_COMM);
        let n = t.pid.len();
        let dense = t.pid.iter().all(|&p| p >= 0 && p <= 4 * n as i64 + 65_536);
        let index = if dense {
            let max = t.pid.iter().copied().max().unwrap_or(0) as usize;
            let mut v = vec![u32::MAX; max + 1];
            for (i, &p) in t.pid.iter().enumerate() {
                v[p as usize] = i as u32;
            }
            PidIndex::Dense(v)
        } else {
            PidIndex::Sparse(
                t.pid
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| (p, i as u32))
                    .collect(),
            )
        };
        Names {
            comms,
            swapper,
            unknown,
            index,
            task_comm,
            // checked to fit
            task_prio: t.prio.iter().map(|&p| p as i32).collect(),
            task_tgid: t.tgid.iter().map(|&p| p as i32).collect(),
        }
    }

    /// The task table's row of `pid`.
    fn row(&self, pid: i32) -> Option<usize> {
        match &self.index {
            PidIndex::Dense(v) => match v.get(usize::try_from(pid).ok()?) {
                Some(&i) if i != u32::MAX => Some(i as usize),
                _ => None,
            },
            PidIndex::Sparse(m) => m.get(&i64::from(pid)).map(|&i| i as usize),
        }
    }

    /// The comm id of `pid` on `cpu`: `swapper/<cpu>` for pid 0.
    fn comm(&self, pid: i32, cpu: usize) -> u32 {
        if pid == 0 {
            return self.swapper[cpu];
        }
        self.row(pid).map_or(self.unknown, |i| self.task_comm[i])
    }

    /// The prio of `pid`: 120 for the idle task and unknown pids.
    fn prio(&self, pid: i32) -> i32 {
        if pid == 0 {
            return IDLE_PRIO;
        }
        self.row(pid).map_or(IDLE_PRIO, |i| self.task_prio[i])
    }

    /// The tgid of `pid`: the pid itself when the table does not know it.
    fn tgid(&self, pid: i32) -> i32 {
        self.row(pid).map_or(pid, |i| self.task_tgid[i])
    }
}

/// The open ftrace event bundle of one CPU: its plain events (encoded), its
/// compact columns (as wire values) and their comms' intern table.
#[derive(Default)]
struct Bundle {
    open: bool,
    size: usize,
    events: Vec<u8>,
    switch_ts: Vec<u64>,
    switch_state: Vec<u64>,
    switch_pid: Vec<u64>,
    switch_prio: Vec<u64>,
    switch_comm: Vec<u64>,
    waking_ts: Vec<u64>,
    waking_pid: Vec<u64>,
    waking_cpu: Vec<u64>,
    waking_prio: Vec<u64>,
    waking_comm: Vec<u64>,
    /// comm id → index in `interned`, the bundle's intern table.
    local: HashMap<u32, u64>,
    interned: Vec<u32>,
    /// The latest timestamp, and the latest place in the order at it.
    tie_ts: Option<u64>,
    tie_place: i8,
}

impl Bundle {
    /// The place an event at `ts` gets: `wanted`, or plain when an event at
    /// the same timestamp already sits later in the order.
    fn place(&mut self, ts: u64, wanted: i8) -> i8 {
        if self.tie_ts != Some(ts) {
            self.tie_ts = Some(ts);
            self.tie_place = -1;
        }
        let got = if self.tie_place <= wanted {
            wanted
        } else {
            PLAIN
        };
        self.tie_place = self.tie_place.max(got);
        self.size += 1;
        got
    }

    /// The intern-table index of comm `id`, added at first use.
    fn comm_index(&mut self, id: u32) -> u64 {
        let next = self.interned.len() as u64;
        *self.local.entry(id).or_insert_with(|| {
            self.interned.push(id);
            next
        })
    }

    /// Empty the bundle for the CPU's next one (its buffers kept).
    fn clear(&mut self) {
        self.open = false;
        self.size = 0;
        self.events.clear();
        for v in [
            &mut self.switch_ts,
            &mut self.switch_state,
            &mut self.switch_pid,
            &mut self.switch_prio,
            &mut self.switch_comm,
            &mut self.waking_ts,
            &mut self.waking_pid,
            &mut self.waking_cpu,
            &mut self.waking_prio,
            &mut self.waking_comm,
        ] {
            v.clear();
        }
        self.local.clear();
        self.interned.clear();
        self.tie_ts = None;
        self.tie_place = -1;
    }
}

/// An int32/int64 as its wire value.
#[inline]
fn wire(v: i32) -> u64 {
    i64::from(v) as u64
}

/// The output: packets framed as `Trace.packet` (field 1), handed to the
/// writer a chunk at a time.
struct Sink<W: Write> {
    out: W,
    buf: Vec<u8>,
    chunk: usize,
}

impl<W: Write> Sink<W> {
    /// Hand the buffered packets to the writer once they fill a chunk.
    fn packet_done(&mut self) -> io::Result<()> {
        if self.buf.len() >= self.chunk {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Append one packet whose encoded body is `body`.
    fn packet(&mut self, body: &[u8]) -> io::Result<()> {
        put_bytes(&mut self.buf, 1, body);
        self.packet_done()
    }

    /// Hand over the rest and flush the writer.
    fn finish(mut self) -> Result<(), ExportError> {
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        Ok(())
    }
}

/// The ftrace side: the events into per-CPU bundles, each written when full.
struct Body<W: Write> {
    sink: Sink<W>,
    names: Names,
    bundles: Vec<Bundle>,
    /// The task the trace processor takes as running on each CPU: the
    /// next_pid of the CPU's last switch written (none before the first).
    running: Vec<Option<i32>>,
    scratch: Vec<u8>,
    compact: bool,
    max_events: usize,
}

impl<W: Write> Body<W> {
    /// Put `e` in its CPU's bundle, compact where it can be; write the
    /// bundle when full.
    fn add(&mut self, e: Event) -> io::Result<()> {
        let names = &self.names;
        let bundle = &mut self.bundles[e.cpu];
        bundle.open = true;
        let on_cpu = self.running[e.cpu];
        match e.kind {
            Ev::Switch => {
                let wanted = if self.compact && on_cpu == Some(e.pid) {
                    COMPACT_SWITCH
                } else {
                    PLAIN
                };
                self.running[e.cpu] = Some(e.b);
                if bundle.place(e.ts, wanted) == COMPACT_SWITCH {
                    bundle.switch_ts.push(e.ts);
                    bundle.switch_state.push(wire(e.a));
                    bundle.switch_pid.push(wire(e.b));
                    bundle.switch_prio.push(wire(names.prio(e.b)));
                    let c = bundle.comm_index(names.comm(e.b, e.cpu));
                    bundle.switch_comm.push(c);
                } else {
                    plain(names, &mut self.scratch, &mut bundle.events, &e);
                }
            }
            Ev::Waking => {
                let wanted = if self.compact && on_cpu == Some(e.common) {
                    COMPACT_WAKING
                } else {
                    PLAIN
                };
                if bundle.place(e.ts, wanted) == COMPACT_WAKING {
                    bundle.waking_ts.push(e.ts);
                    bundle.waking_pid.push(wire(e.pid));
                    bundle.waking_cpu.push(wire(e.a));
                    bundle.waking_prio.push(wire(names.prio(e.pid)));
                    let c = bundle.comm_index(names.comm(e.pid, e.cpu));
                    bundle.waking_comm.push(c);
                } else {
                    plain(names, &mut self.scratch, &mut bundle.events, &e);
                }
            }
            _ => {
                bundle.place(e.ts, PLAIN);
                plain(names, &mut self.scratch, &mut bundle.events, &e);
            }
        }
        if bundle.size >= self.max_events {
            self.flush(e.cpu)?;
        }
        Ok(())
    }

    /// Write CPU `cpu`'s bundle, if open, as a packet and start a new one.
    fn flush(&mut self, cpu: usize) -> io::Result<()> {
        let b = &mut self.bundles[cpu];
        if !b.open {
            return Ok(());
        }
        let compact = &mut self.scratch;
        compact.clear();
        if !b.switch_ts.is_empty() || !b.waking_ts.is_empty() {
            deltas(&mut b.switch_ts);
            deltas(&mut b.waking_ts);
            put_packed(compact, pb::SWITCH_TIMESTAMP, &b.switch_ts);
            put_packed(compact, pb::SWITCH_PREV_STATE, &b.switch_state);
            put_packed(compact, pb::SWITCH_NEXT_PID, &b.switch_pid);
            put_packed(compact, pb::SWITCH_NEXT_PRIO, &b.switch_prio);
            for &id in &b.interned {
                put_bytes(compact, pb::INTERN_TABLE, &self.names.comms[id as usize]);
            }
            put_packed(compact, pb::SWITCH_NEXT_COMM_INDEX, &b.switch_comm);
            put_packed(compact, pb::WAKING_TIMESTAMP, &b.waking_ts);
            put_packed(compact, pb::WAKING_PID, &b.waking_pid);
            put_packed(compact, pb::WAKING_TARGET_CPU, &b.waking_cpu);
            put_packed(compact, pb::WAKING_PRIO, &b.waking_prio);
            put_packed(compact, pb::WAKING_COMM_INDEX, &b.waking_comm);
            b.waking_cpu.fill(0); // reused as the all-zero common flags
            put_packed(compact, pb::WAKING_COMMON_FLAGS, &b.waking_cpu);
        }
        let compact_len = if compact.is_empty() {
            0
        } else {
            bytes_field_len(pb::BUNDLE_COMPACT_SCHED, compact.len())
        };
        let bundle_len = 1 + varint_len(cpu as u64) + b.events.len() + compact_len;
        // ftrace_events (field 1), then trusted_packet_sequence_id (10)
        let packet_len = bytes_field_len(pb::PACKET_FTRACE_EVENTS, bundle_len) + 2;
        let out = &mut self.sink.buf;
        put_tag(out, 1, LEN);
        put_varint(out, packet_len as u64);
        put_tag(out, pb::PACKET_FTRACE_EVENTS, LEN);
        put_varint(out, bundle_len as u64);
        put_uint(out, pb::BUNDLE_CPU, cpu as u64);
        out.extend_from_slice(&b.events);
        if !compact.is_empty() {
            put_bytes(out, pb::BUNDLE_COMPACT_SCHED, compact);
        }
        put_uint(out, pb::PACKET_SEQUENCE_ID, SEQUENCE_ID);
        b.clear();
        self.sink.packet_done()
    }
}

/// Each timestamp as the step from the one before (the first from 0); the
/// rows of one CPU are checked to be in time order.
fn deltas(ts: &mut [u64]) {
    let mut prev = 0;
    for t in ts.iter_mut() {
        let cur = *t;
        *t = cur - prev;
        prev = cur;
    }
}

/// Append `e` to `events` as a plain `FtraceEvent` (bundle field 2), its
/// body built in `scratch`.
fn plain(names: &Names, scratch: &mut Vec<u8>, events: &mut Vec<u8>, e: &Event) {
    let body = scratch;
    body.clear();
    let comm = |pid: i32| names.comms[names.comm(pid, e.cpu) as usize].as_slice();
    let field = match e.kind {
        Ev::Switch => {
            put_bytes(body, 1, comm(e.pid));
            put_int(body, 2, e.pid.into());
            put_int(body, 3, names.prio(e.pid).into());
            put_int(body, 4, e.a.into());
            put_bytes(body, 5, comm(e.b));
            put_int(body, 6, e.b.into());
            put_int(body, 7, names.prio(e.b).into());
            pb::SCHED_SWITCH
        }
        Ev::Migrate => {
            put_bytes(body, 1, comm(e.pid));
            put_int(body, 2, e.pid.into());
            put_int(body, 3, names.prio(e.pid).into());
            put_int(body, 4, e.a.into());
            put_int(body, 5, e.b.into());
            pb::SCHED_MIGRATE_TASK
        }
        Ev::Exit => {
            put_bytes(body, 1, comm(e.pid));
            put_int(body, 2, e.pid.into());
            put_int(body, 3, names.tgid(e.pid).into());
            put_int(body, 4, names.prio(e.pid).into());
            pb::SCHED_PROCESS_EXIT
        }
        Ev::Waking | Ev::Wakeup | Ev::WakeupNew => {
            put_bytes(body, 1, comm(e.pid));
            put_int(body, 2, e.pid.into());
            put_int(body, 3, names.prio(e.pid).into());
            put_int(body, 4, 1); // success: the kernel's "rudiment", always 1
            put_int(body, 5, e.a.into());
            match e.kind {
                Ev::Waking => pb::SCHED_WAKING,
                Ev::Wakeup => pb::SCHED_WAKEUP,
                _ => pb::SCHED_WAKEUP_NEW,
            }
        }
    };
    let common = e.common as u32 as u64; // checked >= 0
    let len = 1 + varint_len(e.ts) + 1 + varint_len(common) + bytes_field_len(field, body.len());
    put_tag(events, pb::BUNDLE_EVENT, LEN);
    put_varint(events, len as u64);
    put_uint(events, pb::EVENT_TIMESTAMP, e.ts);
    put_uint(events, pb::EVENT_PID, common);
    put_bytes(events, field, body);
    debug_assert_eq!(tag_len(pb::BUNDLE_EVENT), 1);
}

/// One end of a balancer slice: its instant, begin or end, its row.
#[derive(Clone, Copy, Debug)]
struct SliceEnd {
    ts: u64,
    begin: bool,
    row: usize,
}

/// One CPU's balancer slices in order: each pass begins at the later of its
/// instant and the previous slice's end, and lasts its cost.
#[derive(Default)]
struct CpuSlices {
    rows: Vec<u32>,
    next: usize,
    free: u64,
    /// The end of the slice begun last, not yet given.
    end: Option<SliceEnd>,
}

impl CpuSlices {
    /// The CPU's next slice end (a begin, then its end), none after its
    /// last pass.
    fn next(&mut self, b: &BalanceRows<'_>) -> Option<SliceEnd> {
        if let Some(end) = self.end.take() {
            return Some(end);
        }
        let row = *self.rows.get(self.next)? as usize;
        self.next += 1;
        let start = b.time_ns[row].max(self.free);
        self.free = start + b.cost_ns[row]; // checked not to overflow
        self.end = Some(SliceEnd {
            ts: self.free,
            begin: false,
            row,
        });
        Some(SliceEnd {
            ts: start,
            begin: true,
            row,
        })
    }
}

/// The TrackEvent side: counters and balancer slices, each written when the
/// trace reaches its time.
struct Tracks<'a> {
    samples: Samples<'a>,
    pelt: PeltRows<'a>,
    balance: BalanceRows<'a>,
    nr_cpus: usize,
    next_sample: usize,
    next_pelt: usize,
    /// The CPUs' slices merged in time order (ties by CPU): each CPU's next
    /// slice end, and the heap of (its instant, the CPU).
    per_cpu: Vec<CpuSlices>,
    heads: Vec<Option<SliceEnd>>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
    pending: Option<SliceEnd>,
    event: Vec<u8>,
    packet: Vec<u8>,
    annotation: Vec<u8>,
}

impl<'a> Tracks<'a> {
    /// The tracks of `tables` (checked) on `nr_cpus` CPUs, before any
    /// packet.
    fn new(tables: &Tables<'a>, nr_cpus: usize) -> Tracks<'a> {
        let b = tables.balance;
        let mut per_cpu: Vec<CpuSlices> = (0..nr_cpus).map(|_| CpuSlices::default()).collect();
        for (i, &cpu) in b.cpu.iter().enumerate() {
            per_cpu[cpu as usize].rows.push(i as u32); // checked: < nr_cpus, < 2**32 rows
        }
        let mut heads = Vec::with_capacity(nr_cpus);
        let mut heap = BinaryHeap::new();
        for (cpu, s) in per_cpu.iter_mut().enumerate() {
            let head = s.next(&b);
            if let Some(h) = head {
                heap.push(Reverse((h.ts, cpu)));
            }
            heads.push(head);
        }
        let mut t = Tracks {
            samples: tables.samples.clone(),
            pelt: tables.pelt,
            balance: b,
            nr_cpus,
            next_sample: 0,
            next_pelt: 0,
            per_cpu,
            heads,
            heap,
            pending: None,
            event: Vec::new(),
            packet: Vec::new(),
            annotation: Vec::new(),
        };
        t.pending = t.next_slice_end();
        t
    }

    /// The next slice end in the merged order.
    fn next_slice_end(&mut self) -> Option<SliceEnd> {
        let Reverse((_, cpu)) = self.heap.pop()?;
        let out = self.heads[cpu].take();
        let head = self.per_cpu[cpu].next(&self.balance);
        if let Some(h) = head {
            self.heap.push(Reverse((h.ts, cpu)));
        }
        self.heads[cpu] = head;
        out
    }

    /// Write a packet at `ts` holding the track event in `self.event`.
    fn track_packet<W: Write>(&mut self, ts: u64, sink: &mut Sink<W>) -> io::Result<()> {
        let p = &mut self.packet;
        p.clear();
        put_uint(p, pb::PACKET_TIMESTAMP, ts);
        put_uint(p, pb::PACKET_SEQUENCE_ID, SEQUENCE_ID);
        put_bytes(p, pb::PACKET_TRACK_EVENT, &self.event);
        sink.packet(p)
    }

    /// A counter packet: `value` on track `uuid` at `ts`.
    fn counter<W: Write>(
        &mut self,
        ts: u64,
        uuid: u64,
        value: i64,
        sink: &mut Sink<W>,
    ) -> io::Result<()> {
        let e = &mut self.event;
        e.clear();
        put_uint(e, pb::TE_TYPE, pb::TYPE_COUNTER);
        put_uint(e, pb::TE_TRACK_UUID, uuid);
        put_int(e, pb::TE_COUNTER_VALUE, value);
        self.track_packet(ts, sink)
    }

    /// The end of CPU `cpu`'s open balancer slice, at `ts`.
    fn slice_end<W: Write>(&mut self, ts: u64, cpu: usize, sink: &mut Sink<W>) -> io::Result<()> {
        let e = &mut self.event;
        e.clear();
        put_uint(e, pb::TE_TYPE, pb::TYPE_SLICE_END);
        put_uint(e, pb::TE_TRACK_UUID, BALANCE_TRACK_BASE + cpu as u64);
        self.track_packet(ts, sink)
    }

    /// A balancer slice's begin: named `<kind> <level>`, the pass's fields
    /// as debug annotations.
    fn slice_begin<W: Write>(&mut self, ts: u64, row: usize, sink: &mut Sink<W>) -> io::Result<()> {
        let b = self.balance;
        let e = &mut self.event;
        let a = &mut self.annotation;
        e.clear();
        let ints: [(&str, i64); 5] = [
            ("time_ns", b.time_ns[row] as i64), // checked below 2**63
            ("dst_cpu", b.dst_cpu[row].into()),
            ("domain", b.domain[row].into()),
            ("moved", b.moved[row].into()),
            ("cost_ns", b.cost_ns[row] as i64),
        ];
        for (name, v) in ints {
            a.clear();
            put_int(a, pb::ANN_INT_VALUE, v);
            put_bytes(a, pb::ANN_NAME, name.as_bytes());
            put_bytes(e, pb::TE_DEBUG_ANNOTATIONS, a);
        }
        let strs = [
            ("idle", &b.idle_names[b.idle[row] as usize]),
            ("outcome", &b.outcome_names[b.outcome[row] as usize]),
        ];
        for (name, v) in strs {
            a.clear();
            put_bytes(a, pb::ANN_STRING_VALUE, v.as_bytes());
            put_bytes(a, pb::ANN_NAME, name.as_bytes());
            put_bytes(e, pb::TE_DEBUG_ANNOTATIONS, a);
        }
        a.clear();
        put_int(a, pb::ANN_INT_VALUE, b.busiest[row].into());
        put_bytes(a, pb::ANN_NAME, b"busiest");
        put_bytes(e, pb::TE_DEBUG_ANNOTATIONS, a);
        a.clear();
        put_uint(a, pb::ANN_BOOL_VALUE, u64::from(b.active[row]));
        put_bytes(a, pb::ANN_NAME, b"active");
        put_bytes(e, pb::TE_DEBUG_ANNOTATIONS, a);
        put_uint(e, pb::TE_TYPE, pb::TYPE_SLICE_BEGIN);
        put_uint(e, pb::TE_TRACK_UUID, BALANCE_TRACK_BASE + b.cpu[row] as u64);
        put_bytes(e, pb::TE_NAME, b.names[b.name[row] as usize].as_bytes());
        self.track_packet(ts, sink)
    }

    /// The samples up to `upto`: each CPU's run-queue counter, then the PELT
    /// rows up to the sample.
    fn emit_samples<W: Write>(&mut self, upto: u64, sink: &mut Sink<W>) -> io::Result<()> {
        while let Some(&ts) = self.samples.time_ns.get(self.next_sample) {
            if ts > upto {
                break;
            }
            for cpu in 0..self.nr_cpus {
                let v = self.samples.runqueue[[cpu, self.next_sample]]; // checked shape
                self.counter(ts, RUNQUEUE_TRACK_BASE + cpu as u64, v, sink)?;
            }
            self.next_sample += 1;
            while let Some(&pts) = self.pelt.time_ns.get(self.next_pelt) {
                if pts > ts {
                    break;
                }
                let (i, p) = (self.next_pelt, self.pelt);
                let cpu = p.cpu[i] as u64;
                // checked below 2**63
                self.counter(pts, UTIL_TRACK_BASE + cpu, p.util_avg[i] as i64, sink)?;
                self.counter(pts, LOAD_TRACK_BASE + cpu, p.load_avg[i] as i64, sink)?;
                self.next_pelt += 1;
            }
        }
        Ok(())
    }

    /// The slice ends up to `upto`, in the merged order.
    fn emit_balance<W: Write>(&mut self, upto: u64, sink: &mut Sink<W>) -> io::Result<()> {
        while let Some(p) = self.pending {
            if p.ts > upto {
                break;
            }
            if p.begin {
                self.slice_begin(p.ts, p.row, sink)?;
            } else {
                self.slice_end(p.ts, self.balance.cpu[p.row] as usize, sink)?;
            }
            self.pending = self.next_slice_end();
        }
        Ok(())
    }

    /// Samples and balancer slices up to `upto`, merged in time order (a
    /// sample first at one instant).
    fn emit_until<W: Write>(&mut self, upto: u64, sink: &mut Sink<W>) -> io::Result<()> {
        loop {
            let ts_s = self.samples.time_ns.get(self.next_sample).copied();
            let ts_b = self.pending.map(|p| p.ts);
            match (ts_s, ts_b) {
                (Some(s), b) if s <= upto && b.is_none_or(|b| s <= b) => {
                    self.emit_samples(s, sink)?
                }
                (_, Some(b)) if b <= upto => self.emit_balance(b, sink)?,
                _ => return Ok(()),
            }
        }
    }

    /// Everything up to `last`; balancer slices begun by then end there at
    /// the latest, later ones are left out.
    fn finish<W: Write>(&mut self, last: u64, sink: &mut Sink<W>) -> io::Result<()> {
        self.emit_until(last, sink)?;
        let mut open = vec![false; self.nr_cpus];
        while let Some(p) = self.pending {
            let cpu = self.balance.cpu[p.row] as usize;
            if !p.begin && !open[cpu] {
                open[cpu] = true;
                self.slice_end(last, cpu, sink)?;
            } else if p.begin {
                open[cpu] = true; // its end (and all later ones) dropped
            }
            self.pending = self.next_slice_end();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    struct Owned {
        time_ns: Vec<u64>,
        cpu: Vec<i32>,
        kind: Vec<u8>,
        pid: Vec<i32>,
        a: Vec<i32>,
        b: Vec<i32>,
        task_pid: Vec<i64>,
        comm: Vec<String>,
        prio: Vec<i64>,
        tgid: Vec<i64>,
        rq: Array2<i64>,
        sample_ns: Vec<u64>,
        names: Vec<String>,
        idle_names: Vec<String>,
        outcome_names: Vec<String>,
    }

    /// Two tasks ping-ponging on CPU 0: a switch in, a wake-up, a switch.
    fn owned() -> Owned {
        let sw = TraceKind::Switch as u8;
        let wk = TraceKind::Wakeup as u8;
        Owned {
            time_ns: vec![10, 20, 20, 30],
            cpu: vec![0, 0, 0, 0],
            kind: vec![sw, wk, sw, sw],
            pid: vec![0, 2, 1, 2],
            a: vec![0, 0, 1, 16],
            b: vec![1, 1, 2, 0],
            task_pid: vec![1, 2],
            comm: strings(&["one", "two"]),
            prio: vec![120, 100],
            tgid: vec![1, 1],
            rq: Array2::zeros((1, 0)),
            sample_ns: vec![],
            names: vec![],
            idle_names: vec![],
            outcome_names: vec![],
        }
    }

    fn sched(o: &Owned) -> SchedRows<'_> {
        SchedRows {
            time_ns: &o.time_ns,
            cpu: &o.cpu,
            kind: &o.kind,
            pid: &o.pid,
            a: &o.a,
            b: &o.b,
        }
    }

    fn tables(o: &Owned) -> Tables<'_> {
        Tables {
            tasks: TaskRows {
                pid: &o.task_pid,
                comm: &o.comm,
                prio: &o.prio,
                tgid: &o.tgid,
            },
            samples: Samples {
                time_ns: &o.sample_ns,
                runqueue: o.rq.view(),
            },
            pelt: PeltRows {
                time_ns: &[],
                cpu: &[],
                util_avg: &[],
                load_avg: &[],
            },
            balance: BalanceRows {
                time_ns: &[],
                cpu: &[],
                cost_ns: &[],
                name: &[],
                names: &o.names,
                dst_cpu: &[],
                domain: &[],
                moved: &[],
                idle: &[],
                idle_names: &o.idle_names,
                outcome: &[],
                outcome_names: &o.outcome_names,
                busiest: &[],
                active: &[],
            },
        }
    }

    fn opts(compact: bool) -> Options {
        Options {
            nr_cpus: 1,
            compact,
            max_bundle_events: 1024,
            end_ns: 100,
            truncated: false,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
        }
    }

    fn body(o: &Owned, opts: &Options) -> Result<Vec<u8>, ExportError> {
        let mut out = Vec::new();
        write_body(&mut out, &sched(o), &tables(o), opts)?;
        Ok(out)
    }

    /// A length-delimited field's payload at the start of `b`, and the rest.
    fn take(b: &[u8], field: u32) -> (&[u8], &[u8]) {
        let mut i = 0;
        let mut tag = 0u64;
        let mut shift = 0;
        loop {
            tag |= u64::from(b[i] & 0x7f) << shift;
            shift += 7;
            i += 1;
            if b[i - 1] < 0x80 {
                break;
            }
        }
        assert_eq!(tag, u64::from(field << 3 | LEN));
        let (mut len, mut shift) = (0usize, 0);
        loop {
            len |= usize::from(b[i] & 0x7f) << shift;
            shift += 7;
            i += 1;
            if b[i - 1] < 0x80 {
                break;
            }
        }
        (&b[i..i + len], &b[i + len..])
    }

    #[test]
    fn a_switch_with_a_known_prev_task_goes_compact() {
        let o = owned();
        let out = body(&o, &opts(true)).unwrap();
        let (packet, rest) = take(&out, 1);
        assert!(rest.is_empty(), "one bundle");
        let (bundle, seq) = take(packet, pb::PACKET_FTRACE_EVENTS);
        assert_eq!(seq, [0x50, 0x01]);
        assert_eq!(&bundle[..2], [0x08, 0x00]); // cpu 0
                                                // plain: the CPU's first switch (no task known before it), the
                                                // wakeup, and the switch at 20 (the wakeup at its instant sits
                                                // later in the reader's order); compact: the waking (its waker is
                                                // the running task) and the switch at 30
        let mut rest = &bundle[2..];
        let mut plain = 0;
        while rest[0] == 0x12 {
            rest = take(rest, pb::BUNDLE_EVENT).1;
            plain += 1;
        }
        assert_eq!(plain, 3);
        let (compact, rest) = take(rest, pb::BUNDLE_COMPACT_SCHED);
        assert!(rest.is_empty());
        // one switch at 30 (a delta from 0), prev_state 16, next pid 0
        assert_eq!(&compact[..9], [0x0a, 1, 30, 0x12, 1, 16, 0x1a, 1, 0]);
    }

    #[test]
    fn without_compact_every_event_is_plain_and_the_bytes_differ() {
        let o = owned();
        let plain = body(&o, &opts(false)).unwrap();
        let compact = body(&o, &opts(true)).unwrap();
        assert!(compact.len() < plain.len());
        let (packet, _) = take(&plain, 1);
        let (bundle, _) = take(packet, pb::PACKET_FTRACE_EVENTS);
        let mut rest = &bundle[2..];
        let mut n = 0;
        while !rest.is_empty() {
            rest = take(rest, pb::BUNDLE_EVENT).1;
            n += 1;
        }
        assert_eq!(n, 5); // 3 switches, a waking and a wakeup
    }

    #[test]
    fn bundles_hold_at_most_max_bundle_events() {
        let o = owned();
        let mut op = opts(false);
        op.max_bundle_events = 2;
        let out = body(&o, &op).unwrap();
        let mut rest = out.as_slice();
        let mut packets = 0;
        while !rest.is_empty() {
            rest = take(rest, 1).1;
            packets += 1;
        }
        assert_eq!(packets, 3); // 5 events: 2 + 2 + 1
    }

    #[test]
    fn the_writer_gets_chunks_of_about_chunk_bytes() {
        struct Chunks(Vec<usize>);
        impl Write for Chunks {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0.push(b.len());
                Ok(b.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let o = owned();
        let mut op = opts(false);
        op.max_bundle_events = 1;
        op.chunk_bytes = 40;
        let mut c = Chunks(vec![]);
        write_body(&mut c, &sched(&o), &tables(&o), &op).unwrap();
        assert!(c.0.len() > 2);
        assert_eq!(c.0.iter().sum::<usize>(), body(&o, &op).unwrap().len());
    }

    #[test]
    fn a_writer_error_stops_the_export() {
        struct Full;
        impl Write for Full {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::Error::other("disk full"))
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let o = owned();
        let err = write_body(Full, &sched(&o), &tables(&o), &opts(true)).unwrap_err();
        assert!(matches!(err, ExportError::Io(_)), "{err}");
    }

    #[test]
    fn bad_tables_are_refused_naming_the_column() {
        type Spoil = Box<dyn Fn(&mut Owned)>;
        let cases: Vec<(Spoil, &str)> = vec![
            (
                Box::new(|o| o.cpu[1] = 1),
                "invalid trace.cpu=1 (row 1): expected a CPU from 0 to 0",
            ),
            (Box::new(|o| o.cpu[1] = -1), "invalid trace.cpu=-1 (row 1)"),
            (
                Box::new(|o| o.time_ns[2] = 5),
                "invalid trace.time_ns=5 (row 2)",
            ),
            (Box::new(|o| o.kind[0] = 9), "invalid trace.kind=9 (row 0)"),
            (Box::new(|o| o.pid[0] = -3), "invalid trace.pid=-3 (row 0)"),
            (Box::new(|o| o.b[1] = -1), "invalid trace.b=-1 (row 1)"),
            (
                Box::new(|o| {
                    o.a.pop();
                }),
                "invalid trace.a=a column of 3 rows",
            ),
            (
                Box::new(|o| o.prio[1] = 1 << 40),
                "invalid tasks.prio=1099511627776 (row 1)",
            ),
            (
                Box::new(|o| o.sample_ns = vec![5]),
                "invalid runqueue=an array of shape (1, 0)",
            ),
        ];
        for (spoil, msg) in cases {
            let mut o = owned();
            spoil(&mut o);
            let err = body(&o, &opts(true)).unwrap_err().to_string();
            assert!(err.starts_with(msg), "{err}");
        }
        let o = owned();
        let mut op = opts(true);
        op.nr_cpus = 0;
        let err = body(&o, &op).unwrap_err().to_string();
        assert!(err.starts_with("invalid nr_cpus=0"), "{err}");
    }

    #[test]
    fn unknown_pids_get_the_placeholder_comm_and_idle_prio() {
        let mut o = owned();
        o.task_pid = vec![1];
        o.comm = strings(&["one"]);
        o.prio = vec![120];
        o.tgid = vec![1];
        let out = body(&o, &opts(false)).unwrap();
        let needle = UNKNOWN_COMM.as_bytes();
        assert!(out.windows(needle.len()).any(|w| w == needle));
        let names = Names::new(&tables(&o).tasks, 1);
        assert_eq!(names.prio(7), IDLE_PRIO);
        assert_eq!(names.tgid(7), 7);
        assert_eq!(names.comms[names.comm(0, 0) as usize], b"swapper/0");
    }

    #[test]
    fn sparse_pids_are_found_too() {
        let mut o = owned();
        o.task_pid = vec![1, 1 << 40];
        let names = Names::new(&tables(&o).tasks, 1);
        assert!(matches!(names.index, PidIndex::Sparse(_)));
        assert_eq!(names.row(1), Some(0));
        assert_eq!(names.row(2), None);
    }

    /// The rows of `s` before `k`, and from `k`.
    fn split_rows<'a>(s: &SchedRows<'a>, k: usize) -> (SchedRows<'a>, SchedRows<'a>) {
        let part = |r: std::ops::Range<usize>| SchedRows {
            time_ns: &s.time_ns[r.clone()],
            cpu: &s.cpu[r.clone()],
            kind: &s.kind[r.clone()],
            pid: &s.pid[r.clone()],
            a: &s.a[r.clone()],
            b: &s.b[r],
        };
        (part(0..k), part(k..s.time_ns.len()))
    }

    #[test]
    fn rows_pushed_in_chunks_give_the_same_bytes() {
        let o = owned();
        for compact in [true, false] {
            let op = opts(compact);
            let whole = body(&o, &op).unwrap();
            for k in 0..=o.time_ns.len() {
                let (first, rest) = split_rows(&sched(&o), k);
                let mut out = Vec::new();
                let mut w = BodyWriter::new(&mut out, &tables(&o), &op).unwrap();
                w.push(&first).unwrap();
                w.push(&rest).unwrap();
                w.finish().unwrap();
                assert_eq!(out, whole, "split at {k}");
            }
        }
    }

    #[test]
    fn a_bad_row_is_named_by_its_row_in_the_whole_trace() {
        let mut o = owned();
        o.time_ns[3] = 15; // before CPU 0's row 2, at 20
        let (first, rest) = split_rows(&sched(&o), 2);
        let mut out = Vec::new();
        let mut w = BodyWriter::new(&mut out, &tables(&o), &opts(true)).unwrap();
        w.push(&first).unwrap();
        let err = w.push(&rest).unwrap_err().to_string();
        assert!(err.starts_with("invalid trace.time_ns=15 (row 3)"), "{err}");
    }

    /// The varint and length-delimited fields of a message, in order.
    fn fields(mut b: &[u8]) -> Vec<(u32, Result<u64, &[u8]>)> {
        fn varint(b: &mut &[u8]) -> u64 {
            let (mut v, mut shift) = (0u64, 0);
            loop {
                let byte = b[0];
                *b = &b[1..];
                v |= u64::from(byte & 0x7f) << shift;
                shift += 7;
                if byte < 0x80 {
                    return v;
                }
            }
        }
        let mut out = Vec::new();
        while !b.is_empty() {
            let tag = varint(&mut b);
            let field = (tag >> 3) as u32;
            if tag & 7 == 0 {
                out.push((field, Ok(varint(&mut b))));
            } else {
                let len = varint(&mut b) as usize;
                out.push((field, Err(&b[..len])));
                b = &b[len..];
            }
        }
        out
    }

    #[test]
    fn balancer_slices_are_laid_end_to_end_merged_and_closed_at_the_end() {
        let mut o = owned();
        o.time_ns.clear();
        o.cpu.clear();
        o.kind.clear();
        o.pid.clear();
        o.a.clear();
        o.b.clear();
        o.names = strings(&["newidle MC"]);
        o.idle_names = strings(&["idle"]);
        o.outcome_names = strings(&["balanced"]);
        // CPU 1 at 5 for 10 ns; CPU 0 at 5 for 3 ns, then at 6 for 1 ns
        // (it begins when the first ends, at 8)
        let (time, cpu, cost) = (vec![5u64, 5, 6], vec![1i32, 0, 0], vec![10u64, 3, 1]);
        let (zeros_u32, zeros_u8, zeros_i32) = (vec![0u32; 3], vec![0u8; 3], vec![0i32; 3]);
        let active = vec![false; 3];
        let mut t = tables(&o);
        t.balance = BalanceRows {
            time_ns: &time,
            cpu: &cpu,
            cost_ns: &cost,
            name: &zeros_u32,
            dst_cpu: &zeros_i32,
            domain: &zeros_u8,
            moved: &zeros_u32,
            idle: &zeros_u8,
            outcome: &zeros_u8,
            busiest: &zeros_i32,
            active: &active,
            ..t.balance
        };
        let events = |end_ns: u64| {
            let mut op = opts(true);
            op.nr_cpus = 2;
            op.end_ns = end_ns;
            let mut out = Vec::new();
            write_body(&mut out, &sched(&o), &t, &op).unwrap();
            let mut got = Vec::new();
            for (_, packet) in fields(&out) {
                let packet = fields(packet.unwrap_err());
                let ts = packet[0].1.unwrap();
                let te = fields(packet[2].1.unwrap_err());
                let kind = te.iter().find(|f| f.0 == pb::TE_TYPE).unwrap().1.unwrap();
                let uuid = te
                    .iter()
                    .find(|f| f.0 == pb::TE_TRACK_UUID)
                    .unwrap()
                    .1
                    .unwrap();
                got.push((ts, kind, uuid - BALANCE_TRACK_BASE));
            }
            got
        };
        let (b, e) = (pb::TYPE_SLICE_BEGIN, pb::TYPE_SLICE_END);
        assert_eq!(
            events(100),
            [
                (5, b, 0),
                (5, b, 1),
                (8, e, 0),
                (8, b, 0),
                (9, e, 0),
                (15, e, 1)
            ]
        );
        // the run ends at 7: the open slices end there, the later pass is left out
        assert_eq!(events(7), [(5, b, 0), (5, b, 1), (7, e, 0), (7, e, 1)]);
    }
}
