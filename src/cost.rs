//! `CostModel`: the CPU time and delays the model charges for scheduler
//! work. The effects the tunables trade off exist only because these are
//! charged. All in nanoseconds.
//!
//! Defaults come from the published figures in kernel-facts §11: a direct
//! context switch of a few µs (Li, Ding & Shen 2007: 3.8 µs on 2.6.17; ~3.5 µs
//! on a 2019 desktop), an IPI of 1600–2000 cycles to send (Pallipadi 2012)
//! and ~1–3 µs round trip, and a timer tick of 0.5–1.5 % of a CPU at
//! HZ=1000 (Tsafrir 2007), i.e. ≈1 µs of direct handler time.

use crate::config::{Fields, Value};
use crate::error::{CoreError, CoreResult};
use crate::topology::{Distance, Machine};

#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// Direct cost of `context_switch()` (register/stack switch plus the
    /// scheduler's own bookkeeping), charged as system time to the CPU
    /// switching to a task.
    pub context_switch_ns: u64,
    /// Kernel entry/exit of a cheap system call such as `sched_yield()`.
    pub syscall_ns: u64,
    /// `try_to_wake_up()` run by the waker (system time on the waker's CPU).
    pub wakeup_ns: u64,
    /// `scheduler_tick()` and the timer interrupt around it.
    pub tick_ns: u64,
    /// From a remote `resched_task()` (reschedule IPI, or the wake of a
    /// polling idle CPU) until the target CPU enters `schedule()`.
    pub ipi_latency_ns: u64,
    /// Sending an IPI (1600–2000 cycles, Pallipadi 2012), on the sender.
    pub ipi_send_ns: u64,
    /// Taking an IPI (entry, handler, exit), on the receiver.
    pub ipi_handle_ns: u64,
    /// A self-IPI (`irq_work_queue_on()` to the sending CPU, 4bdced5c9a29's
    /// walk): send and interrupt entry on the one CPU. No published figure
    /// (cases-3-4.md A.7); the default is `ipi_send_ns + ipi_handle_ns`.
    pub self_ipi_ns: u64,
    /// Taking a remote runqueue or root-domain lock uncontended
    /// (`double_lock_balance()`, `rto_lock`) in RT push/pull.
    pub rq_lock_ns: u64,
    /// Fixed part of one `load_balance()` pass (locks, setup), on the
    /// balancing CPU.
    pub lb_base_ns: u64,
    /// Per sched group a pass examines (`update_sg_lb_stats` per group).
    pub lb_per_group_ns: u64,
    /// Per CPU whose statistics a pass reads (`update_sg_lb_stats`).
    pub lb_per_cpu_ns: u64,
    /// Per task `move_tasks()` examines.
    pub lb_per_task_ns: u64,
    /// Per task migrated (deactivate, `set_task_cpu`, activate under both
    /// runqueue locks): charged to the balancing CPU and, as the time its
    /// lock is held, to the source CPU.
    pub migrate_task_ns: u64,
    /// Cache refill a migrated task pays on its new CPU, by distance, if it
    /// ran within `cache_decay_ns` (linearly less the longer ago).
    pub refill_smt_ns: u64,
    pub refill_llc_ns: u64,
    pub refill_socket_ns: u64,
    pub refill_node_ns: u64,
    pub refill_remote_ns: u64,
    pub cache_decay_ns: u64,
    /// `switch_mm()`: extra context-switch cost between address spaces
    /// (CR3 reload, TLB refill); threads of one process do not pay it.
    pub mm_switch_ns: u64,
    /// `fork()` of a process / `clone()` of a thread, on the parent.
    pub fork_ns: u64,
    pub clone_ns: u64,
    /// `do_exit()` of a process (address-space teardown) / of a thread.
    pub exit_ns: u64,
    pub exit_thread_ns: u64,
    /// Reaping one child (`wait4`, `pthread_join`).
    pub reap_ns: u64,
    /// A new worker's start-up before its own first step, system time of
    /// the child: for a forked process the copy-on-write faults on the
    /// inherited address space and `ret_from_fork` (`child_start_ns`), for a
    /// thread its stack and TLS (`child_start_thread_ns`). Each child draws
    /// its own, uniform within ±`child_start_spread_pct` % of the value.
    /// Measured with `perf sched timehist` (docs/calibration.md);
    /// hackbench's workers pay it.
    pub child_start_ns: u64,
    pub child_start_thread_ns: u64,
    pub child_start_spread_pct: u64,
    /// `pipe_write()` / `pipe_read()` of one small message, locks included.
    pub pipe_write_ns: u64,
    pub pipe_read_ns: u64,
    /// `unix_stream_sendmsg()` (skb allocation, enqueue) / `unix_stream_recvmsg()`.
    pub sock_write_ns: u64,
    pub sock_read_ns: u64,
    /// Copying 1 KiB between user and kernel (per direction).
    pub copy_kib_ns: u64,
    /// TCP loopback `send()` (the whole stack down and up) / `recv()`.
    pub tcp_write_ns: u64,
    pub tcp_read_ns: u64,
    /// A futex system call (a Java monitor's wait or notify).
    pub futex_ns: u64,
    /// Run-to-run noise: every system-time burst a workload asks for is
    /// scaled by a uniform factor in [1 − p/100, 1 + p/100] (cache and TLB
    /// state make the same system call cost more or less). 0 makes
    /// replicates of a workload without random parameters identical.
    pub sys_jitter_pct: u64,
    /// Communication cost by distance: when on, the reader of a message
    /// (a pipe or socket read, a queue handed over under a futex) pays, as
    /// system time, one cache-line transfer per line of the message from
    /// the cache of the CPU that wrote it — in the kernel, the
    /// `copy_to_user()` of `pipe_read()` / `unix_stream_recvmsg()` (and the
    /// user-space read of a handed-over queue) missing on lines another
    /// CPU's cache holds modified; no kernel version changes it: `xfer_lines()` lines times the
    /// per-line latency of the two CPUs' distance (`xfer_*_ns`; the same
    /// CPU pays nothing). On only for the epyc-genoa-2s and spr-2s presets (older presets' numbers predate it);
    /// the per-line latencies are set per machine preset from published
    /// core-to-core measurements (docs/calibration.md).
    pub xfer_by_distance: bool,
    /// One 64-byte line modified on another CPU, by distance: SMT sibling
    /// (shared L1/L2), shared last-level cache, same socket but another
    /// LLC, another socket on the same node, another node.
    pub xfer_smt_ns: u64,
    pub xfer_llc_ns: u64,
    pub xfer_socket_ns: u64,
    pub xfer_node_ns: u64,
    pub xfer_remote_ns: u64,
    /// Lines moved per message besides its data (the `pipe_buffer` or
    /// skb head and the wait queue the reader was woken from).
    pub xfer_meta_lines: u64,
    /// The frequency model (docs/power-model.md): each package runs at the
    /// turbo frequency of its number of active cores (the machine preset's
    /// table, `power::PowerSpec`), and a task's CPU burst of W ns (at base
    /// frequency) takes W·base/f ns. Off by default on every preset; needs
    /// a machine preset with a power table.
    pub turbo: bool,
    /// The idle-state model: an idle CPU enters the C-state the menu
    /// governor would pick for its predicted idle length, and a wake-up
    /// pays that state's exit latency. Off by default; needs a machine
    /// preset with a power table.
    pub cstates: bool,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            context_switch_ns: 2_000,
            syscall_ns: 100,
            wakeup_ns: 1_000,
            tick_ns: 1_000,
            ipi_latency_ns: 2_000,
            ipi_send_ns: 700,
            ipi_handle_ns: 1_000,
            self_ipi_ns: 1_700,
            rq_lock_ns: 200,
            lb_base_ns: 1_000,
            lb_per_group_ns: 100,
            lb_per_cpu_ns: 50,
            lb_per_task_ns: 100,
            migrate_task_ns: 1_000,
            refill_smt_ns: 0,
            refill_llc_ns: 2_000,
            refill_socket_ns: 10_000,
            refill_node_ns: 15_000,
            refill_remote_ns: 30_000,
            cache_decay_ns: 5_000_000,
            mm_switch_ns: 500,
            fork_ns: 180_000,
            clone_ns: 50_000,
            exit_ns: 470_000,
            exit_thread_ns: 5_000,
            reap_ns: 8_000,
            child_start_ns: 170_000,
            child_start_thread_ns: 8_000,
            child_start_spread_pct: 20,
            pipe_write_ns: 300,
            pipe_read_ns: 250,
            sock_write_ns: 1_200,
            sock_read_ns: 900,
            copy_kib_ns: 100,
            tcp_write_ns: 4_000,
            tcp_read_ns: 2_500,
            futex_ns: 800,
            sys_jitter_pct: 5,
            xfer_by_distance: false,
            xfer_smt_ns: 2,
            xfer_llc_ns: 25,
            xfer_socket_ns: 80,
            xfer_node_ns: 100,
            xfer_remote_ns: 120,
            xfer_meta_lines: 2,
            turbo: false,
            cstates: false,
        }
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
        // kernels (issue 18), whose numbers no earlier result depends on.
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

const FIELDS: &[&str] = &[
    "context_switch_ns",
    "syscall_ns",
    "wakeup_ns",
    "tick_ns",
    "ipi_latency_ns",
    "ipi_send_ns",
    "ipi_handle_ns",
    "self_ipi_ns",
    "rq_lock_ns",
    "lb_base_ns",
    "lb_per_group_ns",
    "lb_per_cpu_ns",
    "lb_per_task_ns",
    "migrate_task_ns",
    "refill_smt_ns",
    "refill_llc_ns",
    "refill_socket_ns",
    "refill_node_ns",
    "refill_remote_ns",
    "cache_decay_ns",
    "mm_switch_ns",
    "fork_ns",
    "clone_ns",
    "exit_ns",
    "exit_thread_ns",
    "reap_ns",
    "child_start_ns",
    "child_start_thread_ns",
    "child_start_spread_pct",
    "pipe_write_ns",
    "pipe_read_ns",
    "sock_write_ns",
    "sock_read_ns",
    "copy_kib_ns",
    "tcp_write_ns",
    "tcp_read_ns",
    "futex_ns",
    "sys_jitter_pct",
    "xfer_by_distance",
    "xfer_smt_ns",
    "xfer_llc_ns",
    "xfer_socket_ns",
    "xfer_node_ns",
    "xfer_remote_ns",
    "xfer_meta_lines",
    "turbo",
    "cstates",
];

/// 1 ms: any single charge larger than that is a mistake, not a model.
const MAX_COST_NS: u64 = 1_000_000;
/// 10 s bound on the cache-decay window.
const MAX_DECAY_NS: u64 = 10_000_000_000;

impl CostModel {
    fn slot(&mut self, name: &str) -> Option<&mut u64> {
        Some(match name {
            "context_switch_ns" => &mut self.context_switch_ns,
            "syscall_ns" => &mut self.syscall_ns,
            "wakeup_ns" => &mut self.wakeup_ns,
            "tick_ns" => &mut self.tick_ns,
            "ipi_latency_ns" => &mut self.ipi_latency_ns,
            "ipi_send_ns" => &mut self.ipi_send_ns,
            "ipi_handle_ns" => &mut self.ipi_handle_ns,
            "self_ipi_ns" => &mut self.self_ipi_ns,
            "rq_lock_ns" => &mut self.rq_lock_ns,
            "lb_base_ns" => &mut self.lb_base_ns,
            "lb_per_group_ns" => &mut self.lb_per_group_ns,
            "lb_per_cpu_ns" => &mut self.lb_per_cpu_ns,
            "lb_per_task_ns" => &mut self.lb_per_task_ns,
            "migrate_task_ns" => &mut self.migrate_task_ns,
            "refill_smt_ns" => &mut self.refill_smt_ns,
            "refill_llc_ns" => &mut self.refill_llc_ns,
            "refill_socket_ns" => &mut self.refill_socket_ns,
            "refill_node_ns" => &mut self.refill_node_ns,
            "refill_remote_ns" => &mut self.refill_remote_ns,
            "cache_decay_ns" => &mut self.cache_decay_ns,
            "mm_switch_ns" => &mut self.mm_switch_ns,
            "fork_ns" => &mut self.fork_ns,
            "clone_ns" => &mut self.clone_ns,
            "exit_ns" => &mut self.exit_ns,
            "exit_thread_ns" => &mut self.exit_thread_ns,
            "reap_ns" => &mut self.reap_ns,
            "child_start_ns" => &mut self.child_start_ns,
            "child_start_thread_ns" => &mut self.child_start_thread_ns,
            "child_start_spread_pct" => &mut self.child_start_spread_pct,
            "pipe_write_ns" => &mut self.pipe_write_ns,
            "pipe_read_ns" => &mut self.pipe_read_ns,
            "sock_write_ns" => &mut self.sock_write_ns,
            "sock_read_ns" => &mut self.sock_read_ns,
            "copy_kib_ns" => &mut self.copy_kib_ns,
            "tcp_write_ns" => &mut self.tcp_write_ns,
            "tcp_read_ns" => &mut self.tcp_read_ns,
            "futex_ns" => &mut self.futex_ns,
            "sys_jitter_pct" => &mut self.sys_jitter_pct,
            "xfer_smt_ns" => &mut self.xfer_smt_ns,
            "xfer_llc_ns" => &mut self.xfer_llc_ns,
            "xfer_socket_ns" => &mut self.xfer_socket_ns,
            "xfer_node_ns" => &mut self.xfer_node_ns,
            "xfer_remote_ns" => &mut self.xfer_remote_ns,
            "xfer_meta_lines" => &mut self.xfer_meta_lines,
            _ => return None,
        })
    }
}

impl Fields for CostModel {
    const KIND: &'static str = "CostModel";

    fn field_names() -> &'static [&'static str] {
        FIELDS
    }

    fn get(&self, name: &str) -> Option<Value> {
        match name {
            "xfer_by_distance" => return Some(Value::Bool(self.xfer_by_distance)),
            "turbo" => return Some(Value::Bool(self.turbo)),
            "cstates" => return Some(Value::Bool(self.cstates)),
            _ => {}
        }
        let mut c = self.clone();
        c.slot(name).map(|v| Value::Int(*v as i64))
    }

    fn set(&mut self, name: &str, v: &Value) -> CoreResult<()> {
        match name {
            "xfer_by_distance" => {
                self.xfer_by_distance = v.as_bool(name)?;
                return Ok(());
            }
            "turbo" => {
                self.turbo = v.as_bool(name)?;
                return Ok(());
            }
            "cstates" => {
                self.cstates = v.as_bool(name)?;
                return Ok(());
            }
            _ => {}
        }
        let max = match name {
            "xfer_meta_lines" => 64,
            "cache_decay_ns" => MAX_DECAY_NS,
            "sys_jitter_pct" => 50,
            "child_start_spread_pct" => 100,
            _ => MAX_COST_NS,
        };
        let x = v.as_u64(name, 0, max)?;
        *self.slot(name).ok_or_else(|| Self::unknown(name))? = x;
        Ok(())
    }

    /// Checked where the cost model is built, not when a run starts (the
    /// tick cost against the tick period depends on the kernel's `hz`, so
    /// that check stays with the run).
    fn validate(&self) -> CoreResult<()> {
        if self.syscall_ns == 0 {
            return Err(CoreError::invalid(
                "syscall_ns",
                0,
                "at least 1 (a zero-cost system call lets a yield loop spin without time passing)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
