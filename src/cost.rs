//! `CostModel`: the CPU time and delays the model charges for scheduler
//! work. The effects the tunables trade off exist only because these are
//! charged. All in nanoseconds.
//!
//! Defaults come from published figures (docs/guide/costs.md lists them
//! with their sources): a direct context switch of a few µs (C. Li, C. Ding,
//! K. Shen, "Quantifying the cost of context switch", ExpCS 2007: 3.8 µs on
//! 2.6.17), an IPI of 1600–2000 cycles to send (Venkatesh Pallipadi on LKML,
//! Feb 2012, measured on Westmere) and ~1–3 µs round trip, and a timer tick
//! of 0.5–1.5 % of a CPU at HZ=1000 (D. Tsafrir, "The context-switch
//! overhead inflicted by hardware interrupts (and the enigma of do-nothing
//! loops)", ExpCS 2007), i.e. ≈1 µs of direct handler time.
//!
//! Each field is declared once, in the list below (its type, its bounds and
//! its doc); the struct, get/set by name, the Python annotations and stubs
//! and the docs' Costs table come from it.

use crate::config::{Domain, Fields, Value};
use crate::config_struct;
use crate::error::CoreError;
use crate::topology::{Distance, Machine};

/// 1 ms: any single charge larger than that is a mistake, not a model.
const MAX_COST_NS: u64 = 1_000_000;
/// 10 s bound on the cache-decay window.
const MAX_DECAY_NS: u64 = 10_000_000_000;
/// A charge in ns: 0 to [`MAX_COST_NS`].
const COST: Domain = Domain::Int {
    lo: 0,
    hi: MAX_COST_NS,
};

const fn int(lo: u64, hi: u64) -> Domain {
    Domain::Int { lo, hi }
}

config_struct! {
    /// What the model charges for scheduler work, in nanoseconds (and the
    /// switches of the cost models built on it: communication by distance,
    /// turbo frequencies, C-states).
    #[derive(Clone, Debug, PartialEq)]
    pub struct CostModel {}
    meta ();
    context_switch_ns: u64 [COST] = 2_000,
        "system time on the CPU, before the next task runs (Li et al. 2007: 3.8 µs direct)";
    syscall_ns: u64 [int(1, MAX_COST_NS)] = 100,
        "the `sched_yield()` system call (at least 1: a zero-cost system call would let a yield loop spin without time passing)";
    wakeup_ns: u64 [COST] = 1_000,
        "`try_to_wake_up()`, system time of the waker (or of the timer interrupt)";
    tick_ns: u64 [COST] = 1_000,
        "`scheduler_tick()` on a busy CPU (0.1 % at HZ=1000; Tsafrir 2007: 0.5–1.5 % incl. indirect)";
    ipi_latency_ns: u64 [COST] = 2_000,
        "delay of a reschedule IPI (or a stopper / NOHZ kick, or the wake of a polling idle CPU) from `resched_curr()` until the remote CPU enters `schedule()`";
    ipi_send_ns: u64 [COST] = 700,
        "sending an IPI (Pallipadi 2012: 1600–2000 cycles)";
    ipi_handle_ns: u64 [COST] = 1_000,
        "taking a function-call IPI on the receiver";
    self_ipi_ns: u64 [COST] = 1_700,
        "an irq_work self-IPI (the push_ipi_rd walk): send + entry on one CPU; no published figure, default = send + handle";
    rq_lock_ns: u64 [COST] = 200,
        "an uncontended remote rq lock or rto_lock in RT push/pull";
    lb_base_ns: u64 [COST] = 1_000,
        "fixed part of one `load_balance()` pass, on the balancing CPU";
    lb_per_group_ns: u64 [COST] = 100,
        "per sched group a pass examines";
    lb_per_cpu_ns: u64 [COST] = 50,
        "per CPU whose statistics a pass reads";
    lb_per_task_ns: u64 [COST] = 100,
        "per task `move_tasks()` examines";
    migrate_task_ns: u64 [COST] = 1_000,
        "per migrated task, on the balancing CPU and (its lock held) the source CPU";
    refill_smt_ns: u64 [COST] = 0,
        "cache refill a migrated task pays (as extra work) when it moves between SMT siblings, whether a balancer pull or a wake-up placed it (metric `migration_refill_s`)";
    refill_llc_ns: u64 [COST] = 2_000,
        "the same refill for a move within a last-level cache";
    refill_socket_ns: u64 [COST] = 10_000,
        "the same refill for a move across LLCs of one socket (`core2-2s` charges its other-pair moves like cross-package ones: no shared L3)";
    refill_node_ns: u64 [COST] = 15_000,
        "the same refill for a move across sockets of one node";
    refill_remote_ns: u64 [COST] = 30_000,
        "the same refill for a move across NUMA nodes";
    cache_decay_ns: u64 [int(0, MAX_DECAY_NS)] = 5_000_000,
        "the refill fades linearly to 0 for a task that last ran this long ago";
    mm_switch_ns: u64 [COST] = 500,
        "`switch_mm()` between address spaces (not between threads of one process)";
    fork_ns: u64 [COST] = 180_000,
        "creating a process, on the parent (measured, Calibration)";
    clone_ns: u64 [COST] = 50_000,
        "creating a thread, on the parent (measured)";
    exit_ns: u64 [COST] = 470_000,
        "a process's exit (`do_exit()`, the address-space teardown; measured)";
    exit_thread_ns: u64 [COST] = 5_000,
        "a thread's exit (measured)";
    reap_ns: u64 [COST] = 8_000,
        "`wait4()` / `pthread_join()` per child (measured)";
    child_start_ns: u64 [COST] = 170_000,
        "a new hackbench worker process's start-up before `ready()`, system time of the child: `ret_from_fork` and ~160 copy-on-write faults (measured); it decides where children fork to (seed case 2)";
    child_start_thread_ns: u64 [COST] = 8_000,
        "the same for a thread: its stack (measured)";
    child_start_spread_pct: u64 [int(0, 100)] = 20,
        "each child draws its start-up uniformly within ± this % (the measured p10–p90); 0 makes it constant; at most 100";
    pipe_write_ns: u64 [COST] = 300,
        "one small pipe write, under `pipe->mutex`";
    pipe_read_ns: u64 [COST] = 250,
        "one small pipe read, under `pipe->mutex`";
    sock_write_ns: u64 [COST] = 1_200,
        "one AF_UNIX stream write";
    sock_read_ns: u64 [COST] = 900,
        "one AF_UNIX stream read";
    copy_kib_ns: u64 [COST] = 100,
        "copying 1 KiB between user and kernel";
    tcp_write_ns: u64 [COST] = 4_000,
        "a TCP loopback send (VolanoMark)";
    tcp_read_ns: u64 [COST] = 2_500,
        "a TCP loopback receive (VolanoMark)";
    futex_ns: u64 [COST] = 800,
        "a futex wake (a Java `notify()` with a waiter)";
    work_pct: u64 [int(1, 10_000)] = 100,
        "the measured CPU work of a workload that carries it (AIM7's per-test user and system times, schbench's matrix arithmetic) × this %: 100 is as measured on the development VM; `calibrate` fits it (factor `work`) to the day's runs of the benchmark";
    io_pct: u64 [int(0, 10_000)] = 100,
        "the measured blocked time of a workload that carries it (AIM7's per-test I/O waits and, unless `sync_io_us` is given, its `sync()` waits) × this %: 100 is as measured on the development VM; `calibrate` fits it (factor `io`) to the day's runs";
    sys_jitter_pct: u64 [int(0, 50)] = 5,
        "run-to-run noise: every system-call burst × U[1 − p %, 1 + p %] (0 makes replicates of a non-random workload identical)";
    xfer_by_distance: bool = false,
        "switches on the communication cost by distance: a pipe or socket read (and VolanoMark's queue hand-off) pays the lines the writer's CPU holds modified times the per-line latency of the two CPUs' distance (on only for epyc-genoa-2s and spr-2s; docs/calibration.md)";
    xfer_smt_ns: u64 [COST] = 2,
        "per cache line moved between SMT siblings";
    xfer_llc_ns: u64 [COST] = 25,
        "per cache line moved within a last-level cache";
    xfer_socket_ns: u64 [COST] = 80,
        "per cache line moved across LLCs of one socket";
    xfer_node_ns: u64 [COST] = 100,
        "per cache line moved across sockets of one node";
    xfer_remote_ns: u64 [COST] = 120,
        "per cache line moved across NUMA nodes";
    xfer_meta_lines: u64 [int(0, 64)] = 2,
        "lines per message besides the data (pipe/socket bookkeeping)";
    turbo: bool = false,
        "switches on the frequency model: a package runs at the turbo frequency of its number of active cores and a task's burst of W ns takes W·base/f ns (off by default; needs a preset with a power table; docs/power-model.md)";
    cstates: bool = false,
        "switches on idle states: an idle CPU enters the C-state a menu-like governor picks and a wake-up of it waits the state's exit latency (off by default; docs/power-model.md)";
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel::declared()
    }
}

impl CostModel {
    /// The defaults for a machine preset. Only topology-grounded differences
    /// so far: Core 2 has no shared L3, so a move to the other core pair of
    /// the same package refills over the front-side bus like a move across
    /// packages.
    ///
    /// `vm-2` (this development VM) wakes an idle vCPU far more slowly than
    /// bare metal: `perf bench sched pipe` measures 35 µs per round trip
    /// here against 5–8 µs on hardware, so its `ipi_latency_ns` is 15 µs
    /// (two cross-CPU wake-ups per round trip; see docs/calibration.md).
    pub fn for_machine(m: &Machine) -> Self {
        let mut c = CostModel::default();
        match m.name.as_str() {
            "core2-2s" => c.refill_socket_ns = c.refill_node_ns,
            "vm-2" => c.ipi_latency_ns = 15_000,
            _ => {}
        }
        // Per-line transfer latencies by distance (used only when
        // `xfer_by_distance` is on); sources in docs/calibration.md.
        let (smt, llc, socket, node, remote) = match m.name.as_str() {
            // an assumption: measuring a line bounced between this VM's two
            // vCPUs gave ~10 us, the vCPUs' scheduling rather than the cache
            "vm-2" => (2, 60, 60, 60, 60),
            // Core 2: pair-shared L2; the other pair and the other package
            // over the front-side bus
            "core2-2s" => (2, 6, 110, 110, 110),
            "quad-4c" => (2, 25, 25, 25, 25),
            "nhm-ep" => (2, 28, 28, 110, 110),
            "wsm-4s-40c" => (2, 35, 35, 140, 140),
            "snb-ep-4s" => (2, 30, 30, 120, 120),
            "skl-sp-2s" => (2, 45, 45, 135, 135),
            "epyc-genoa-2s" => (2, 18, 100, 190, 190),
            "spr-2s" => (2, 55, 55, 145, 145),
            _ => (
                c.xfer_smt_ns,
                c.xfer_llc_ns,
                c.xfer_socket_ns,
                c.xfer_node_ns,
                c.xfer_remote_ns,
            ),
        };
        c.xfer_smt_ns = smt;
        c.xfer_llc_ns = llc;
        c.xfer_socket_ns = socket;
        c.xfer_node_ns = node;
        c.xfer_remote_ns = remote;
        // On by default only for the machine presets added with today's
        // kernels, whose numbers no earlier result depends on.
        c.xfer_by_distance = matches!(m.name.as_str(), "epyc-genoa-2s" | "spr-2s");
        c
    }

    /// Cache lines moved to hand a `bytes`-byte message to another CPU:
    /// its 64-byte lines plus `xfer_meta_lines`.
    pub fn xfer_lines(&self, bytes: u64) -> u64 {
        bytes.div_ceil(64) + self.xfer_meta_lines
    }

    /// What the reader pays for a `bytes`-byte message written by a CPU
    /// `dist` away (0 when `xfer_by_distance` is off or on the same CPU).
    pub fn xfer(&self, dist: Distance, bytes: u64) -> u64 {
        if !self.xfer_by_distance {
            return 0;
        }
        let line = match dist {
            Distance::Same => return 0,
            Distance::SmtSibling => self.xfer_smt_ns,
            Distance::SharedLlc => self.xfer_llc_ns,
            Distance::SameSocket => self.xfer_socket_ns,
            Distance::SameNode => self.xfer_node_ns,
            Distance::RemoteNode => self.xfer_remote_ns,
        };
        line * self.xfer_lines(bytes)
    }

    /// CPU time to copy `bytes` across the user/kernel boundary.
    pub fn copy(&self, bytes: u64) -> u64 {
        bytes * self.copy_kib_ns / 1024
    }

    /// The cache-refill penalty of moving a task `dist` away whose last run
    /// ended `age` ns ago.
    pub fn refill(&self, dist: Distance, age: u64) -> u64 {
        let full = match dist {
            Distance::Same => 0,
            Distance::SmtSibling => self.refill_smt_ns,
            Distance::SharedLlc => self.refill_llc_ns,
            Distance::SameSocket => self.refill_socket_ns,
            Distance::SameNode => self.refill_node_ns,
            Distance::RemoteNode => self.refill_remote_ns,
        };
        if age >= self.cache_decay_ns {
            0
        } else {
            full - full * age / self.cache_decay_ns.max(1)
        }
    }
}

impl Fields for CostModel {
    const KIND: &'static str = "CostModel";

    fn explain(name: &str, _: Option<&Value>) -> Option<CoreError> {
        (name == "name").then(|| CoreError::NotASetting {
            kind: Self::KIND,
            name: name.into(),
            why: "a CostModel has no name; its fields are CostModel.fields()",
        })
    }
    // validate(): every field in its domain (the default); the tick cost
    // against the tick period depends on the kernel's `hz`, so that check is
    // the run's.
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Declared;

    #[test]
    fn xfer_is_off_by_default_and_counts_lines_by_distance_when_on() {
        let m = Machine::preset("core2-2s").unwrap();
        let mut c = CostModel::for_machine(&m);
        assert!(!c.xfer_by_distance);
        assert_eq!(c.xfer(Distance::SameNode, 100), 0);
        c.xfer_by_distance = true;
        // 100 bytes: 2 data lines + 2 meta lines
        assert_eq!(c.xfer_lines(100), 4);
        assert_eq!(c.xfer(Distance::Same, 100), 0);
        assert_eq!(c.xfer(Distance::SharedLlc, 100), 4 * c.xfer_llc_ns);
        // Core 2: cpus 0 and 2 are the other core pair of the package
        assert_eq!(m.distance(0, 2), Distance::SameSocket);
        assert_eq!(c.xfer(Distance::SameSocket, 64), 3 * 110);
        assert_eq!(c.xfer(Distance::SameNode, 4096), (64 + 2) * 110);
    }

    #[test]
    fn xfer_by_distance_is_a_bool_field() {
        let c = CostModel::default();
        assert_eq!(c.get("xfer_by_distance"), Some(Value::Bool(false)));
        let on = c
            .replaced(&[("xfer_by_distance".into(), Value::Bool(true))])
            .unwrap();
        assert!(on.xfer_by_distance);
        assert!(c
            .replaced(&[("xfer_by_distance".into(), Value::Int(1))])
            .is_err());
        assert!(c
            .replaced(&[("xfer_meta_lines".into(), Value::Int(65))])
            .is_err());
    }

    #[test]
    fn the_declarations_are_sound() {
        CostModel::check_declarations().unwrap();
        let m = Machine::preset("core2-2s").unwrap();
        CostModel::for_machine(&m).decl_check().unwrap();
        // a struct built in Rust is checked against the domains too
        let c = CostModel {
            syscall_ns: 0,
            ..CostModel::default()
        };
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "invalid syscall_ns=0: expected an integer from 1 to 1000000"
        );
    }
}
