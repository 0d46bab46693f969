//! Spinners: always-running `while(1);` loops, or run/sleep tasks (the
//! LinSched "sleep/run" tasks, jserv/linsched:
//! `tools/linsched/tests/basic_tests.c`; docs/guide/workloads.md),
//! optionally pinned and optionally calling `sched_yield()` in their loop
//! (the 2.6.23 `sched_compat_yield` example: `while(1) sched_yield();`).

use super::params::Param;
use super::{check_cpuset, Action, Ctx, TaskSpec, Work, Workload};
use crate::error::{CoreError, CoreResult};
use crate::sched::task::TaskId;
use crate::topology::Machine;

crate::named_enum! {
    /// How run and sleep durations are drawn.
    pub enum Dist {
        /// Exactly the given length every period.
        Fixed = "fixed",
        /// Exponential with the given mean, per period (LinSched's EXPONENTIAL).
        Exp = "exp",
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct SpinnerTask {
    pub nice: i32,
    /// CPU burst per loop; `None` = spin forever (or yield forever).
    pub run_ns: Option<u64>,
    /// Sleep per loop; `None`/0 = no sleep.
    pub sleep_ns: Option<u64>,
    pub cpus: Option<Vec<u32>>,
    /// Call `sched_yield()` after each burst (or continuously if `run_ns` is
    /// `None`).
    pub yields: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Start,
    Ran,
    Yielded,
}

/// The spinners workload. It never ends by itself: bound it with
/// `duration_s`.
#[derive(Clone, Debug)]
pub struct Spinners {
    pub tasks: Vec<SpinnerTask>,
    pub dist: Dist,
    phase: Vec<Phase>,
    loops: u64,
}

/// A `while(1);` task is driven in chunks of this much CPU time; the chunk
/// length is invisible to the scheduler (it preempts at will).
const SPIN_CHUNK_NS: u64 = 1_000_000_000;

impl Spinners {
    pub fn new(tasks: Vec<SpinnerTask>, dist: Dist) -> CoreResult<Self> {
        crate::limits::check_tasks(
            "nice",
            format!("[{} values]", tasks.len()),
            tasks.len() as u64,
        )?;
        if tasks.is_empty() {
            return Err(CoreError::invalid(
                "nice",
                "[]",
                "a non-empty list of nice values",
            ));
        }
        for t in &tasks {
            if !(-20..=19).contains(&t.nice) {
                return Err(CoreError::invalid(
                    "nice",
                    t.nice,
                    "integers from -20 to 19",
                ));
            }
            if t.run_ns == Some(0) {
                return Err(CoreError::invalid("run_us", 0, "a positive number or None"));
            }
            if t.sleep_ns.unwrap_or(0) > 0 && t.run_ns.is_none() {
                return Err(CoreError::invalid(
                    "sleep_us",
                    t.sleep_ns.unwrap_or(0) as f64 / 1e3,
                    "None unless run_us is given (a task that never stops running cannot sleep)",
                ));
            }
            if let Some(c) = &t.cpus {
                if c.is_empty() {
                    return Err(CoreError::invalid(
                        "cpus",
                        "[]",
                        "a non-empty list of CPU numbers or None",
                    ));
                }
            }
        }
        let n = tasks.len();
        Ok(Spinners {
            tasks,
            dist,
            phase: vec![Phase::Start; n],
            loops: 0,
        })
    }

    fn draw(&self, ctx: &mut Ctx, mean: u64) -> u64 {
        match self.dist {
            Dist::Fixed => mean,
            Dist::Exp => ctx.rng.exp_ns(mean).max(1),
        }
    }
}

/// The spinners' one role: every task is a `spinner`.
/// `sl.workloads.spinners`' parameters (`workload::params`): per-task
/// lists the builder makes from one value or one per task.
pub const PARAMS: &[Param] = &[
    Param::other(
        "spinners",
        "nice",
        "a list of nice values from -20 to 19",
        "one task per value, at that nice",
    )
    .required(),
    Param::other(
        "spinners",
        "run_ns",
        "µs, one value or one per task, or None",
        "CPU time of each loop (None: spin forever)",
    )
    .taken_as("run_us", 1000),
    Param::other(
        "spinners",
        "sleep_ns",
        "µs, one value or one per task, or None",
        "a timed sleep after each loop's run",
    )
    .taken_as("sleep_us", 1000),
    Param::other(
        "spinners",
        "cpus",
        "per task None, a CPU number or a list of them",
        "each task's allowed CPUs",
    ),
    Param::other(
        "spinners",
        "yields",
        "a bool or one per task",
        "sched_yield() in the loop",
    ),
    Param::choice(
        "spinners",
        "dist",
        <Dist as crate::config::NamedEnum>::NAMES,
        "fixed",
        "durations fixed or exponential with the given mean",
    ),
];

pub const ROLES: &[&str] = &["spinner"];

impl Workload for Spinners {
    fn name(&self) -> &'static str {
        "spinners"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }

    fn validate(&self, machine: &Machine) -> CoreResult<()> {
        for c in self.tasks.iter().filter_map(|t| t.cpus.as_deref()) {
            check_cpuset(c, machine)?;
        }
        Ok(())
    }

    fn init(&mut self, ctx: &mut Ctx) {
        for (i, t) in self.tasks.iter().enumerate() {
            ctx.spawn(TaskSpec::process(
                ROLES[0],
                format!("spinner/{i}"),
                t.nice,
                t.cpus.clone(),
            ));
        }
    }

    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        let i = task as usize;
        let t = &self.tasks[i];
        loop {
            match self.phase[i] {
                Phase::Start => match t.run_ns {
                    None if t.yields => return Action::Yield,
                    None => {
                        return Action::Compute {
                            ns: SPIN_CHUNK_NS,
                            kind: Work::User,
                        }
                    }
                    Some(run) => {
                        self.phase[i] = Phase::Ran;
                        let ns = self.draw(ctx, run);
                        return Action::Compute {
                            ns,
                            kind: Work::User,
                        };
                    }
                },
                Phase::Ran => {
                    self.loops += 1;
                    self.phase[i] = Phase::Yielded;
                    if t.yields {
                        return Action::Yield;
                    }
                }
                Phase::Yielded => {
                    self.phase[i] = Phase::Start;
                    let sleep = self.tasks[i].sleep_ns.unwrap_or(0);
                    if sleep > 0 {
                        let ns = self.draw(ctx, sleep);
                        return Action::Sleep { ns };
                    }
                }
            }
        }
    }

    fn nr_tasks(&self) -> u64 {
        self.tasks.len() as u64
    }

    fn finite(&self) -> bool {
        false
    }

    fn metrics(&self, elapsed_ns: u64) -> Vec<(&'static str, f64)> {
        let secs = elapsed_ns as f64 / 1e9;
        vec![
            ("loops", self.loops as f64),
            (
                "throughput",
                if secs > 0.0 {
                    self.loops as f64 / secs
                } else {
                    0.0
                },
            ),
        ]
    }
}
