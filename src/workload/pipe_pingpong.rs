//! `perf bench sched pipe` (tools/perf/bench/sched-pipe.c;
//! docs/guide/workloads.md): two tasks, two pipes, one 4-byte token in
//! flight. Task A reads pipe 1 and writes pipe 2; task B writes pipe 1 and
//! reads pipe 2; `loops` round trips. Process mode: the parent forks A and
//! runs B itself; thread mode: the main thread clones A and B and joins
//! them. The time runs from before the fork to after the wait, as perf
//! measures it.

use super::hackbench::Mode;
use super::ipc::{Chan, ChanStats, Op, Pipe};
use super::{sys, Action, Ctx, TaskSpec, Workload};
use crate::error::CoreResult;
use crate::sched::task::TaskId;
use crate::topology::Machine;

crate::workload_params! {
    /// `perf bench sched pipe`'s parameters, declared once
    /// (`workload::params`).
    pub struct PipePingpongParams for "pipe_pingpong" {
        loops: u64 = int(
            1,
            1_000_000_000,
            100_000,
            "round trips through the pair of pipes (-l)"
        ),
        mode: Mode = choice(
            <Mode as crate::config::NamedEnum>::NAMES,
            "process",
            "the two tasks as processes or threads (-T)"
        ),
    }
}

const TOKEN: u32 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Spawn,
    Loop,
    Join,
    Exit,
    Done,
}

#[derive(Clone, Copy, Debug)]
struct T {
    /// 0: main (and B in process mode), 1: A, 2: B (thread mode)
    phase: Phase,
    op: Op,
    done: u64,
    /// In the middle of a round: B wrote and now reads; A read and now writes.
    second_half: bool,
    is_a: bool,
    runs_loop: bool,
}

#[derive(Clone, Debug)]
pub struct PipePingpong {
    loops: u64,
    mode: Mode,
    pipes: [Chan; 2],
    t: Vec<T>,
    exited: u64,
    main_waiting: bool,
    t1: Option<u64>,
    stats: ChanStats,
}

impl PipePingpong {
    pub fn new(loops: u64, mode: Mode) -> CoreResult<Self> {
        PipePingpongParams::param("loops").check_u64(loops)?;
        Ok(PipePingpong {
            loops,
            mode,
            pipes: [Chan::Pipe(Pipe::default()), Chan::Pipe(Pipe::default())],
            t: Vec::new(),
            exited: 0,
            main_waiting: false,
            t1: None,
            stats: ChanStats::default(),
        })
    }

    fn spawn(&mut self, ctx: &mut Ctx, name: &str, is_a: bool) {
        let mm = match self.mode {
            Mode::Process => None,
            Mode::Thread => Some(0),
        };
        ctx.spawn(TaskSpec {
            role: if is_a { ROLES[1] } else { ROLES[2] },
            name: name.into(),
            nice: 0,
            cpus: None,
            mm,
            policy: crate::sched::task::Policy::Normal,
            rt_priority: None,
        });
        self.t.push(T {
            phase: Phase::Loop,
            op: Op::default(),
            done: 0,
            second_half: false,
            is_a,
            runs_loop: true,
        });
    }
}

/// pipe_pingpong's roles (`perf bench sched pipe`): `a` and `b`, the two
/// ends; `main`, the thread that starts and joins them in thread mode (in
/// process mode the parent is end `b`).
pub const ROLES: &[&str] = &["main", "a", "b"];

impl Workload for PipePingpong {
    fn name(&self) -> &'static str {
        "pipe_pingpong"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }

    fn validate(&self, _machine: &Machine) -> CoreResult<()> {
        Ok(())
    }

    fn init(&mut self, ctx: &mut Ctx) {
        ctx.spawn(TaskSpec {
            // The parent is end B in process mode, a waiting main thread in
            // thread mode.
            role: match self.mode {
                Mode::Process => ROLES[2],
                Mode::Thread => ROLES[0],
            },
            name: "sched-pipe".into(),
            nice: 0,
            cpus: None,
            mm: Some(0),
            policy: crate::sched::task::Policy::Normal,
            rt_priority: None,
        });
        self.t.push(T {
            phase: Phase::Spawn,
            op: Op::default(),
            done: 0,
            second_half: false,
            is_a: false,
            runs_loop: self.mode == Mode::Process,
        });
    }

    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        let i = task as usize;
        let c = ctx.cost;
        loop {
            match self.t[i].phase {
                Phase::Spawn => match self.mode {
                    Mode::Process => {
                        self.spawn(ctx, "sched-pipe/A", true);
                        self.t[0].phase = Phase::Loop;
                        return sys(c.fork_ns);
                    }
                    Mode::Thread => {
                        self.spawn(ctx, "sched-pipe/A", true);
                        self.spawn(ctx, "sched-pipe/B", false);
                        self.t[0].phase = Phase::Join;
                        return sys(2 * c.clone_ns);
                    }
                },
                Phase::Loop => {
                    if self.t[i].done >= self.loops {
                        self.t[i].phase = if i == 0 { Phase::Join } else { Phase::Exit };
                        continue;
                    }
                    let is_a = self.t[i].is_a;
                    // A: read p0, write p1. B: write p0, read p1.
                    let (reading, pipe) = match (is_a, self.t[i].second_half) {
                        (true, false) => (true, 0),
                        (true, true) => (false, 1),
                        (false, false) => (false, 0),
                        (false, true) => (true, 1),
                    };
                    let mut op = self.t[i].op;
                    let r = if reading {
                        self.pipes[pipe].read_step(
                            task,
                            &mut op,
                            TOKEN,
                            c.pipe_read_ns,
                            &mut self.stats,
                            ctx,
                        )
                    } else {
                        self.pipes[pipe].write_step(
                            task,
                            &mut op,
                            TOKEN,
                            TOKEN,
                            c.pipe_write_ns,
                            &mut self.stats,
                            ctx,
                        )
                    };
                    self.t[i].op = op;
                    if let Some(a) = r {
                        return a;
                    }
                    if self.t[i].second_half {
                        self.t[i].done += 1;
                    }
                    self.t[i].second_half = !self.t[i].second_half;
                }
                Phase::Join => {
                    let children = self.t.len() as u64 - 1;
                    if self.exited < children {
                        self.main_waiting = true;
                        return Action::Block;
                    }
                    self.t1 = Some(ctx.now);
                    self.t[0].phase = Phase::Done;
                    return sys(c.reap_ns * children);
                }
                Phase::Exit => {
                    self.t[i].phase = Phase::Done;
                    return sys(match self.mode {
                        Mode::Process => c.exit_ns,
                        Mode::Thread => c.exit_thread_ns,
                    });
                }
                Phase::Done => {
                    if i != 0 {
                        self.exited += 1;
                        if self.main_waiting {
                            self.main_waiting = false;
                            ctx.wake(0, true);
                        }
                    }
                    return Action::Exit;
                }
            }
        }
    }

    fn nr_tasks(&self) -> u64 {
        // A and B (the main task aside)
        2
    }

    fn finite(&self) -> bool {
        true
    }

    fn metrics(&self, end_ns: u64) -> Vec<(&'static str, f64)> {
        let elapsed = self.t1.unwrap_or(end_ns) as f64 / 1e9;
        let rounds = self
            .t
            .iter()
            .filter(|t| t.runs_loop)
            .map(|t| t.done)
            .min()
            .unwrap_or(0);
        vec![
            ("elapsed_s", elapsed),
            ("ops", rounds as f64),
            (
                "usecs_per_op",
                if rounds > 0 {
                    elapsed * 1e6 / rounds as f64
                } else {
                    0.0
                },
            ),
            (
                "ops_per_s",
                if elapsed > 0.0 {
                    rounds as f64 / elapsed
                } else {
                    0.0
                },
            ),
            (
                "throughput",
                if elapsed > 0.0 {
                    rounds as f64 / elapsed
                } else {
                    0.0
                },
            ),
        ]
    }
}
