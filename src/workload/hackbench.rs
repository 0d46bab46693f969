//! hackbench / `perf bench sched messaging`
//! (rt-tests: `src/hackbench/hackbench.c`, tools/perf/bench/sched-messaging.c;
//! docs/guide/workloads.md): `groups` groups of `fds` receivers and `fds` senders. Receiver j of a
//! group reads its own channel (a pipe or an AF_UNIX socketpair); every
//! sender writes one `datasize`-byte message to each receiver of its group
//! per loop, round-robin. The main task forks (or clones) all workers, waits
//! until each has written a byte to the ready pipe, takes the start time,
//! writes the one byte that wakes every `poll()`ing worker at once, then
//! reaps them all and takes the end time: `elapsed_s` is perf's "Total time".
//!
//! Process mode: every worker is a process (its own address space: context
//! switches pay `mm_switch_ns`; fork/exit cost more). Thread mode: all share
//! the main task's address space.

use super::ipc::{Chan, ChanStats, Op, Pipe, UnixSock, WaitList};
use super::{sys, Action, Ctx, TaskSpec, Workload};
use crate::error::{CoreError, CoreResult};
use crate::sched::task::TaskId;
use crate::topology::Machine;

use crate::config::NamedEnum;

crate::named_enum! {
    /// hackbench's channel: `pipe()` pairs or AF_UNIX stream `socketpair()`s.
    pub enum Ipc { Pipe = "pipe", Socket = "socket" }
}

crate::named_enum! {
    /// Workers as forked processes or as threads of one process.
    pub enum Mode { Process = "process", Thread = "thread" }
}

crate::workload_params! {
    /// hackbench's parameters (`perf bench sched messaging`'s defaults),
    /// declared once (`workload::params`).
    pub struct HackbenchParams for "hackbench" {
        groups: u32 = int(1, 100_000, 10, "groups of senders and receivers (-g)"),
        fds: u32 = int(1, 1_000, 20, "senders and receivers per group (-f)"),
        loops: u32 = int(
            1,
            100_000_000,
            100,
            "messages each sender writes to each receiver (-l)"
        ),
        datasize: u32 = int(1, super::ipc::PAGE_SIZE as i64, 100, "bytes per message (-s)"),
        ipc: Ipc = choice(
            <Ipc as NamedEnum>::NAMES,
            "socket",
            "pipe() pairs or AF_UNIX stream socketpair()s (--pipe)"
        ),
        mode: Mode = choice(
            <Mode as NamedEnum>::NAMES,
            "process",
            "workers as forked processes or threads of one process (--thread)"
        ),
        /// `sk_sndbuf` (net.core.wmem_default, typically 212992 on x86-64).
        sndbuf: u64 = int(1, 1 << 31, 212_992, "sk_sndbuf of a socket (net.core.wmem_default)"),
        /// skb truesize beyond the payload (sk_buff + shared info; ≈ 668 B,
        /// an estimate, not measured: docs/guide/workloads.md#sources).
        skb_overhead: u32 = int(0, 65_536, 668, "an skb's truesize beyond its payload"),
        /// The main process's `wakee_flips` when it starts forking: the
        /// distinct tasks it woke just before (perf's own output to a pipe
        /// reader, RCU, kworkers). Every child inherits it (`dup_task_struct()`
        /// copies it, `__sched_fork()` does not reset it), so `wake_wide()`
        /// stops the start-up wake-ups' pulls to the main process's CPU after
        /// about this many; a recording gives it
        /// (`schedlab.parent_wakee_flips`).
        parent_wakee_flips: u32 = int(
            0,
            1 << 31,
            0,
            "the main process's wakee_flips as it forks"
        ),
    }
    also {
        rt_kthreads = other(
            "an sl.workloads.rt_kthreads() dict, or None",
            "RT kernel threads running beside the benchmark (docs/rt.md)"
        ),
    }
}

impl HackbenchParams {
    /// `perf bench sched messaging -g groups -l loops` with perf's other
    /// defaults (20 fds, 100-byte messages), the x86-64 default socket
    /// buffer and the estimated skb overhead.
    pub fn perf(groups: u32, loops: u32, ipc: Ipc, mode: Mode) -> Self {
        HackbenchParams {
            groups,
            fds: 20,
            loops,
            datasize: 100,
            ipc,
            mode,
            sndbuf: 212_992,
            skb_overhead: 668,
            parent_wakee_flips: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Main,
    Receiver { chan: usize },
    Sender { group: usize },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    // main
    Forking(usize),
    WaitReady,
    ReadReady,
    Go,
    Woke,
    Reap,
    // workers
    Start,
    Ready,
    Barrier,
    Run,
    Exit,
}

#[derive(Clone, Copy, Debug)]
struct W {
    role: Role,
    phase: Phase,
    op: Op,
    /// Messages done (receiver) or sent (sender).
    done: u64,
}

#[derive(Clone, Debug)]
pub struct Hackbench {
    p: HackbenchParams,
    chans: Vec<Chan>,
    w: Vec<W>,
    barrier: WaitList,
    ready: u64,
    exited: u64,
    reaped: u64,
    main_waiting: bool,
    started: bool,
    t0: Option<u64>,
    t1: Option<u64>,
    delivered: u64,
    stats: ChanStats,
    /// RT kernel threads beside the benchmark (`with_rt_kthreads`).
    rt: Option<crate::workload::rt_kthreads::RtKthreads>,
}

/// The main task's address-space id (threads share it).
const MAIN_MM: u32 = 0;

impl Hackbench {
    /// Run the machine's RT kernel threads beside the benchmark.
    pub fn with_rt_kthreads(mut self, k: Option<crate::workload::rt_kthreads::RtKthreads>) -> Self {
        self.rt = k;
        self
    }

    pub fn new(p: HackbenchParams) -> CoreResult<Self> {
        for (name, v) in [
            ("groups", p.groups),
            ("fds", p.fds),
            ("loops", p.loops),
            ("datasize", p.datasize),
            ("skb_overhead", p.skb_overhead),
            ("parent_wakee_flips", p.parent_wakee_flips),
        ] {
            HackbenchParams::param(name).check(i64::from(v))?;
        }
        HackbenchParams::param("sndbuf").check_u64(p.sndbuf)?;
        let tasks = 2 * p.groups as u64 * p.fds as u64;
        if tasks > crate::limits::MAX_TASKS {
            return Err(CoreError::invalid(
                "groups*fds",
                p.groups as u64 * p.fds as u64,
                format!(
                    "at most {} (2·groups·fds tasks; the limit is {} tasks)",
                    crate::limits::MAX_TASKS / 2,
                    crate::limits::MAX_TASKS
                ),
            ));
        }
        if p.ipc == Ipc::Socket && p.sndbuf < 2 * (p.datasize + p.skb_overhead) as u64 {
            return Err(CoreError::invalid(
                "sndbuf",
                p.sndbuf,
                "at least two messages' truesize",
            ));
        }
        let nchan = (p.groups * p.fds) as usize;
        let chans = (0..nchan)
            .map(|_| match p.ipc {
                Ipc::Pipe => Chan::Pipe(Pipe::default()),
                Ipc::Socket => Chan::Sock(UnixSock::new(p.sndbuf)),
            })
            .collect();
        Ok(Hackbench {
            p,
            chans,
            w: Vec::new(),
            barrier: WaitList::default(),
            ready: 0,
            exited: 0,
            reaped: 0,
            main_waiting: false,
            started: false,
            t0: None,
            t1: None,
            delivered: 0,
            stats: ChanStats::default(),
            rt: None,
        })
    }

    fn workers(&self) -> u64 {
        2 * self.p.groups as u64 * self.p.fds as u64
    }

    /// The k-th worker in creation order: per group, receivers then senders.
    fn role_of(&self, k: usize) -> Role {
        let f = self.p.fds as usize;
        let g = k / (2 * f);
        let r = k % (2 * f);
        if r < f {
            Role::Receiver { chan: g * f + r }
        } else {
            Role::Sender { group: g }
        }
    }

    fn main_step(&mut self, ctx: &mut Ctx) -> Action {
        let c = ctx.cost;
        let total = self.workers();
        loop {
            match self.w[0].phase {
                Phase::Forking(k) if (k as u64) < total => {
                    let role = self.role_of(k);
                    let (role_name, name) = match role {
                        Role::Receiver { chan } => (ROLES[2], format!("receiver/{chan}")),
                        Role::Sender { group } => (ROLES[1], format!("sender/{group}")),
                        Role::Main => unreachable!(),
                    };
                    let mm = match self.p.mode {
                        Mode::Process => None,
                        Mode::Thread => Some(MAIN_MM),
                    };
                    let id = ctx.spawn(TaskSpec {
                        role: role_name,
                        name,
                        nice: 0,
                        cpus: None,
                        mm,
                        policy: crate::sched::task::Policy::Normal,
                        rt_priority: None,
                    });
                    debug_assert_eq!(id as usize, self.w.len());
                    self.w.push(W {
                        role,
                        phase: Phase::Start,
                        op: Op::default(),
                        done: 0,
                    });
                    self.w[0].phase = Phase::Forking(k + 1);
                    return sys(match self.p.mode {
                        Mode::Process => c.fork_ns,
                        Mode::Thread => c.clone_ns,
                    });
                }
                Phase::Forking(_) => self.w[0].phase = Phase::WaitReady,
                Phase::WaitReady => {
                    if self.ready < total {
                        self.main_waiting = true;
                        return Action::Block;
                    }
                    self.w[0].phase = Phase::ReadReady;
                    // read(ready_fd) of one byte per worker
                    return sys(c.pipe_read_ns * total);
                }
                Phase::ReadReady => {
                    self.t0 = Some(ctx.now);
                    self.w[0].phase = Phase::Go;
                    return sys(c.pipe_write_ns);
                }
                Phase::Go => {
                    // the one byte on the wake pipe: every poller wakes,
                    // the last to poll first (pipe_write's sync wake-up
                    // of rd_wait, whose poll entries sit newest first)
                    self.started = true;
                    self.barrier.wake_all_newest_first(ctx, true);
                    self.w[0].phase = Phase::Reap;
                }
                Phase::Reap => {
                    if self.reaped < self.exited {
                        let n = self.exited - self.reaped;
                        self.reaped = self.exited;
                        return sys(n * c.reap_ns);
                    }
                    if self.reaped == total {
                        self.t1 = Some(ctx.now);
                        self.w[0].phase = Phase::Woke;
                        return Action::Exit;
                    }
                    self.main_waiting = true;
                    return Action::Block;
                }
                _ => return Action::Exit,
            }
        }
    }

    fn wake_main(&mut self, ctx: &mut Ctx) {
        if self.main_waiting {
            self.main_waiting = false;
            ctx.wake(0, true);
        }
    }
}

/// hackbench's roles: the harness process (`main`: forks the workers,
/// waits for them, reaps them), the senders and the receivers.
pub const ROLES: &[&str] = &["main", "sender", "receiver"];

impl Workload for Hackbench {
    fn initial_wakee_flips(&self, task: TaskId) -> u32 {
        if task == 0 {
            self.p.parent_wakee_flips
        } else {
            0
        }
    }

    fn name(&self) -> &'static str {
        "hackbench"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }

    fn validate(&self, _machine: &Machine) -> CoreResult<()> {
        Ok(())
    }

    fn init(&mut self, ctx: &mut Ctx) {
        ctx.spawn(TaskSpec {
            role: ROLES[0],
            name: "hackbench".into(),
            nice: 0,
            cpus: None,
            mm: Some(MAIN_MM),
            policy: crate::sched::task::Policy::Normal,
            rt_priority: None,
        });
        self.w.push(W {
            role: Role::Main,
            phase: Phase::Forking(0),
            op: Op::default(),
            done: 0,
        });
    }

    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        let i = task as usize;
        if self.w[i].role == Role::Main {
            return self.main_step(ctx);
        }
        let c = ctx.cost;
        let per_receiver = self.p.fds as u64 * self.p.loops as u64;
        let n = self.p.datasize;
        loop {
            match self.w[i].phase {
                Phase::Start => {
                    // The child's start-up, then ready(): one byte to the
                    // ready pipe.
                    self.w[i].phase = Phase::Ready;
                    let base = match self.p.mode {
                        Mode::Process => c.child_start_ns,
                        Mode::Thread => c.child_start_thread_ns,
                    };
                    let start = ctx.rng.spread_ns(base, c.child_start_spread_pct);
                    return sys(start + c.pipe_write_ns);
                }
                Phase::Ready => {
                    self.ready += 1;
                    if self.ready == self.workers() {
                        self.wake_main(ctx);
                    }
                    self.w[i].phase = Phase::Barrier;
                    // poll() on the wake fd
                    return sys(c.syscall_ns);
                }
                Phase::Barrier => {
                    if !self.started {
                        self.barrier.add(task);
                        return Action::Block;
                    }
                    self.w[i].phase = Phase::Run;
                }
                Phase::Run => {
                    // The worker's own state, borrowed apart from the
                    // channels and counters (one bounds check, and `op` is
                    // advanced in place).
                    let w = &mut self.w[i];
                    match w.role {
                        Role::Receiver { chan } => {
                            if w.done >= per_receiver {
                                w.phase = Phase::Exit;
                                continue;
                            }
                            let cost = match self.p.ipc {
                                Ipc::Pipe => c.pipe_read_ns,
                                Ipc::Socket => c.sock_read_ns,
                            };
                            let r = self.chans[chan].read_step(
                                task,
                                &mut w.op,
                                n,
                                cost,
                                &mut self.stats,
                                ctx,
                            );
                            match r {
                                Some(a) => return a,
                                None => {
                                    w.done += 1;
                                    self.delivered += 1;
                                    // read() returns to user space
                                    return Action::Return;
                                }
                            }
                        }
                        Role::Sender { group } => {
                            let f = self.p.fds as u64;
                            if w.done >= f * self.p.loops as u64 {
                                w.phase = Phase::Exit;
                                continue;
                            }
                            let chan = group * f as usize + (w.done % f) as usize;
                            let cost = match self.p.ipc {
                                Ipc::Pipe => c.pipe_write_ns,
                                Ipc::Socket => c.sock_write_ns,
                            };
                            let ts = n + self.p.skb_overhead;
                            let r = self.chans[chan].write_step(
                                task,
                                &mut w.op,
                                n,
                                ts,
                                cost,
                                &mut self.stats,
                                ctx,
                            );
                            match r {
                                Some(a) => return a,
                                None => {
                                    w.done += 1;
                                    // write() returns to user space
                                    return Action::Return;
                                }
                            }
                        }
                        Role::Main => unreachable!(),
                    }
                }
                Phase::Exit => {
                    self.w[i].phase = Phase::Woke;
                    return sys(match self.p.mode {
                        Mode::Process => c.exit_ns,
                        Mode::Thread => c.exit_thread_ns,
                    });
                }
                _ => {
                    // do_exit() → do_notify_parent(): wake the waiting main task
                    self.exited += 1;
                    self.wake_main(ctx);
                    return Action::Exit;
                }
            }
        }
    }

    fn nr_tasks(&self) -> u64 {
        // the 2·groups·fds workers (the main task aside)
        2 * self.p.groups as u64 * self.p.fds as u64
    }

    fn finite(&self) -> bool {
        true
    }

    fn rt_kthreads(&self) -> Option<&crate::workload::rt_kthreads::RtKthreads> {
        self.rt.as_ref()
    }

    fn metrics(&self, end_ns: u64) -> Vec<(&'static str, f64)> {
        let t0 = self.t0.unwrap_or(end_ns);
        let elapsed = (self.t1.unwrap_or(end_ns).saturating_sub(t0)) as f64 / 1e9;
        let per = |x: f64| if elapsed > 0.0 { x / elapsed } else { 0.0 };
        let tasks = self.workers() as f64;
        let kb = tasks * self.p.loops as f64 * self.p.datasize as f64 / 1024.0;
        let expected = self.p.groups as f64 * (self.p.fds as f64).powi(2) * self.p.loops as f64;
        let per_receiver: Vec<u64> = self
            .w
            .iter()
            .filter(|w| matches!(w.role, Role::Receiver { .. }))
            .map(|w| w.done)
            .collect();
        let (mut spins, mut sleeps) = (0, 0);
        for ch in &self.chans {
            if let Chan::Pipe(p) = ch {
                spins += p.mutex.spins;
                sleeps += p.mutex.sleeps;
            }
        }
        vec![
            ("elapsed_s", elapsed),
            ("throughput", per(kb)),
            ("messages", self.delivered as f64),
            ("messages_expected", expected),
            ("messages_per_s", per(self.delivered as f64)),
            (
                "receiver_messages_min",
                per_receiver.iter().copied().min().unwrap_or(0) as f64,
            ),
            (
                "receiver_messages_max",
                per_receiver.iter().copied().max().unwrap_or(0) as f64,
            ),
            ("reader_blocks", self.stats.reader_blocks as f64),
            ("writer_blocks", self.stats.writer_blocks as f64),
            ("mutex_spins", spins as f64),
            ("mutex_sleeps", sleeps as f64),
        ]
    }
}
