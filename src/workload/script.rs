//! Scripted tasks: each task runs a program of operations — CPU work,
//! sleeps, periodic timers, mutexes, condition variables, barriers, forks
//! and task-to-task wake-ups — so a workload the built-in benchmarks do
//! not cover can be described, or replayed from a recorded schedule.
//!
//! Two front ends build programs (in Python, `schedlab.workloads`):
//! `rt_app()` translates rt-app's JSON grammar (the events of rt-app's
//! `doc/tutorial.txt`: run, runtime, sleep, timer, lock/unlock,
//! wait/signal/broad, barrier, yield) and `from_trace()` turns a recorded
//! schedule (`perf sched record`, ftrace) into per-task bursts joined by
//! [`Op::Post`]/[`Op::Pend`] — a wake-up the recorded waker made becomes a
//! token the model's waker hands over when it reaches the same point, so
//! the replay reacts to the modelled scheduler instead of repeating the
//! recorded timestamps.
//!
//! What the operations cost: CPU work is user time as given; a futex call
//! (a contended lock, an unlock or signal with waiters, a wait) is
//! `CostModel::futex_ns` of system time, as glibc's pthread primitives
//! enter the kernel only when there is someone to block or wake; a wake-up
//! costs the waker `wakeup_ns` (the engine's `try_to_wake_up`). A timed
//! sleep of a fair task ends `TIMER_SLACK_NS` late, as `hrtimer_nanosleep()`
//! (kernel/time/hrtimer.c, 4.x–6.18) arms the timer with the task's
//! `timer_slack_ns` (50 µs by default) and 0 for an RT task (the policy the
//! run gave it, `with_tasks` included); on an idle machine the timer fires
//! at the end of its slack window. A replay's sleeps get none: the recorded
//! length holds it.
//!
//! A wake-up that reaches a task still paying the futex call before it
//! blocks is kept, and the task does not block (`futex_wait()` finds the
//! futex word changed and returns, kernel/futex/waitwake.c, 6.18). A loop
//! whose whole iteration takes no time (signals nobody waits for, an
//! uncontended lock, a one-user barrier) is the engine's no-progress error,
//! not an endless step.

use super::params::Param;
use super::{check_cpuset, sys, user, Action, Ctx, TaskSpec, Workload};
use crate::error::{CoreError, CoreResult};
use crate::sched::task::Policy;
use crate::sched::task::TaskId;
use crate::topology::Machine;

/// `timer_slack_ns` of a task that never set it (`INIT_TIMER_SLACK`,
/// include/linux/init_task.h: 50 µs).
pub const TIMER_SLACK_NS: u64 = 50_000;

/// A `runtime` (wall-clock) burst runs in chunks of this much work and
/// checks the clock after each, as rt-app 1.0's `runtime` event does
/// (`loadwait(32)` per chunk in `run_event()`, rt-app.c of
/// scheduler-tools/rt-app, tag v1.0).
const WALL_CHUNK_NS: u64 = 32_000;

/// The most iterations without time one step goes through before it
/// returns to the engine (a zero-length burst: the engine allows
/// `MAX_ZERO_STEPS` of them in a row, so a finite loop of up to about 6.5
/// billion such iterations completes).
const ZERO_TIME_WRAPS: u32 = 1 << 16;

/// The most operations one script holds (its memory grows with them).
pub const MAX_OPS: usize = 4_000_000;

/// One operation of a task's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// CPU work of `ns` (rt-app's `run`: a calibrated amount of work);
    /// `c_ns`: the duration the description gives (rt-app's log reports
    /// it as `c_duration`).
    Run { ns: u64, c_ns: u64 },
    /// Busy for `ns` of wall-clock time however little of it is on a CPU
    /// (rt-app's `runtime`).
    RunWall { ns: u64 },
    /// A relative sleep (`clock_nanosleep`) of `ns`.
    Sleep { ns: u64 },
    /// Sleep to the timer's next period boundary (rt-app's `timer`): the
    /// timer's reference advances by `period_ns` at each use; when the
    /// task is already past it, it does not sleep, and a `relative` timer
    /// restarts from now.
    Timer { timer: u32, period_ns: u64 },
    /// `pthread_mutex_lock`.
    Lock { mutex: u32 },
    /// `pthread_mutex_unlock`.
    Unlock { mutex: u32 },
    /// `pthread_cond_wait(cond, mutex)`: release the mutex, wait for a
    /// signal, take the mutex again.
    Wait { cond: u32, mutex: u32 },
    /// `pthread_cond_signal`: wake the first waiter, if any.
    Signal { cond: u32 },
    /// `pthread_cond_broadcast`: wake every waiter.
    Broadcast { cond: u32 },
    /// Wait until every user of the barrier has reached it.
    Barrier { barrier: u32 },
    /// Hand a wake-up token to script task `task`, waking it if it waits
    /// for one of this task's (a recorded `sched_waking`).
    Post { task: u32 },
    /// Wait for a wake-up token from script task `from` (a recorded block
    /// that task ended): tokens are counted per waker, so the k-th `Pend`
    /// on a waker is released by that waker's k-th `Post` to this task.
    Pend { from: u32 },
    /// Fork script task `task` (a recorded `sched_process_fork`).
    Fork { task: u32 },
    /// `sched_yield()`.
    Yield,
    /// The end of one logged iteration (rt-app writes a log line per phase
    /// iteration): the task's per-iteration figures are taken here.
    Mark,
}

/// How a task comes to exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Created at the start, beginning its program after `delay_ns`.
    Init { delay_ns: u64 },
    /// Created by another task's [`Op::Fork`].
    Forked,
}

/// One task of a script.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptTask {
    pub name: String,
    pub nice: i32,
    pub policy: Policy,
    pub rt_priority: Option<u32>,
    pub cpus: Option<Vec<u32>>,
    /// Tasks with the same `mm` are threads of one process.
    pub mm: Option<u32>,
    pub start: Start,
    /// How many times the program runs (`None`: until the script's
    /// duration ends).
    pub loops: Option<u64>,
    /// Where each repetition after the first starts (an rt-app phase that
    /// loops forever repeats alone once reached).
    pub loop_from: usize,
    pub ops: Vec<Op>,
}

/// A timer's state (`timer.relative` false: rt-app's "absolute" mode).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerSpec {
    pub absolute: bool,
}

/// The script: its tasks and shared objects.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptSpec {
    pub tasks: Vec<ScriptTask>,
    pub timers: Vec<TimerSpec>,
    pub mutexes: u32,
    pub conds: u32,
    /// Each barrier's number of users.
    pub barriers: Vec<u32>,
    /// rt-app's global `duration`: every task stops this long after the
    /// start (`None`: when their loops are done).
    pub duration_ns: Option<u64>,
    /// The work of each `Run` is a recorded burst that already holds the
    /// kernel's cost of the wake-ups the task made and of its switch back
    /// in after a block: take the model's own charge for those events
    /// (`wakeup_ns` per wake-up, `context_switch_ns` per resumption) off
    /// the next burst, so they are not paid twice (a replay, not rt-app).
    pub net_costs: bool,
    /// A fair task's timed sleep ends `TIMER_SLACK_NS` late (rt-app: the
    /// kernel adds the slack); false for a replay, whose recorded sleeps
    /// already hold it.
    pub timer_slack: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Waiting {
    #[default]
    No,
    /// Blocked on a mutex (queued in its waiters).
    Mutex,
    /// Queued on a condition variable.
    Cond,
    /// Woken from a condition variable, taking its mutex again.
    Relock,
    /// At a barrier of this generation.
    Barrier(u64),
    /// Waiting for a wake-up token from this script task.
    Token(u32),
}

/// A task's log accumulators (one rt-app log line per [`Op::Mark`]).
#[derive(Clone, Debug, Default)]
struct Log {
    rows: u64,
    run_ns: u64,
    period_ns: u64,
    slack_ns: i64,
    wu_lat_ns: u64,
    c_run_ns: u64,
    c_period_ns: u64,
    missed: u64,
    // The current iteration.
    row_start: u64,
    row_run: u64,
    row_slack: i64,
    row_wu: u64,
    row_c_run: u64,
    row_c_period: u64,
}

#[derive(Clone, Debug, Default)]
struct TaskState {
    id: Option<TaskId>,
    pc: usize,
    loops_done: u64,
    started: bool,
    start_ns: u64,
    /// It is paying a futex call and blocks at its next step (unless
    /// `woken` meanwhile).
    block_next: bool,
    waiting: Waiting,
    /// It returned `Action::Block` and has not stepped since (a wake-up
    /// goes to the engine; otherwise it is kept in `woken`).
    blocked: bool,
    /// A wake-up came while it was on a CPU paying a futex call's cost
    /// before blocking: it does not block then (the kernel's futex wait
    /// finds the futex word changed and returns at once).
    woken: bool,
    /// Wake-up tokens received and not yet used, by waker (no zero counts).
    tokens: Vec<(u32, u64)>,
    /// The start of the CPU burst in progress (run-time accounting).
    burst_from: Option<u64>,
    /// When a `runtime` burst ends.
    wall_end: Option<u64>,
    /// A timer sleep's expected end, for the wake-up latency.
    timer_due: Option<u64>,
    stopped: bool,
    /// Model charges to take off the next burst (`ScriptSpec::net_costs`).
    deduct: u64,
    log: Log,
}

#[derive(Clone, Debug, Default)]
struct Mutex {
    owner: Option<u32>,
    waiters: std::collections::VecDeque<u32>,
}

#[derive(Clone, Debug, Default)]
struct Barrier {
    arrived: Vec<u32>,
    gen: u64,
}

/// The script workload.
#[derive(Clone, Debug)]
pub struct Script {
    spec: ScriptSpec,
    st: Vec<TaskState>,
    /// Script task index by engine task id.
    by_id: Vec<u32>,
    timers: Vec<Option<u64>>,
    mutexes: Vec<Mutex>,
    conds: Vec<std::collections::VecDeque<u32>>,
    barriers: Vec<Barrier>,
    start_ns: u64,
    logged: bool,
    /// A task whose loop went round without taking time (its description,
    /// for the engine's no-progress error).
    stalled: Option<u32>,
}

/// The scripted tasks' one role.
/// `sl.workloads.rt_app`'s parameters (`workload::params`): the builder
/// compiles the description into the core's script.
pub const RT_APP_PARAMS: &[Param] = &[
    Param::other(
        "rt_app",
        "json",
        "a path, a JSON string or a dict",
        "the rt-app workload description (docs/rt-app.md)",
    )
    .required(),
    Param::number(
        "rt_app",
        "run_scale",
        0.1,
        10.0,
        1.0,
        "CPU time of a run event per µs configured",
    ),
];

/// `sl.workloads.from_trace`'s parameters (`workload::params`): the
/// builder compiles the recording into the core's script.
pub const FROM_TRACE_PARAMS: &[Param] = &[
    Param::other(
        "from_trace",
        "path",
        "a file, its text or a list of its lines",
        "the recorded schedule (docs/replay.md)",
    )
    .required(),
    Param::other(
        "from_trace",
        "tasks",
        "a task name, a list of them, or None",
        "the recorded tasks to replay (None: all but the idle task, kernel threads and the recorder)",
    ),
    Param::number(
        "from_trace",
        "time_scale",
        1e-6,
        1e6,
        1.0,
        "the factor on the recorded CPU bursts",
    ),
    Param::flag(
        "from_trace",
        "net_costs",
        true,
        "take the model's wake-up and switch charges off the recorded bursts",
    ),
];

pub const ROLES: &[&str] = &["task"];

fn bad(param: &str, value: impl std::fmt::Display, allowed: &str) -> CoreError {
    CoreError::invalid(param, value, allowed)
}

impl Script {
    /// Check every reference (timers, mutexes, conditions, barriers, task
    /// indices) and that each forked task is forked exactly once.
    pub fn new(spec: ScriptSpec) -> CoreResult<Self> {
        let n = spec.tasks.len();
        crate::limits::check_tasks("tasks", format!("[{n} tasks]"), n as u64)?;
        if n == 0 {
            return Err(bad("tasks", "[]", "a non-empty list of tasks"));
        }
        let total: usize = spec.tasks.iter().map(|t| t.ops.len()).sum();
        if total > MAX_OPS {
            return Err(bad(
                "ops",
                format!("{total} operations"),
                &format!("at most {MAX_OPS} operations in one script"),
            ));
        }
        let mut forked = vec![0u32; n];
        for (i, t) in spec.tasks.iter().enumerate() {
            if !(-20..=19).contains(&t.nice) {
                return Err(bad(&format!("tasks[{i}].nice"), t.nice, "-20 to 19"));
            }
            if t.policy.is_rt() != t.rt_priority.is_some() {
                return Err(bad(
                    &format!("tasks[{i}].rt_priority"),
                    format!("{:?}", t.rt_priority),
                    "1 to 99 with policy fifo or rr, None otherwise",
                ));
            }
            if let Some(p) = t.rt_priority {
                if !(1..=99).contains(&p) {
                    return Err(bad(&format!("tasks[{i}].rt_priority"), p, "1 to 99"));
                }
            }
            if t.cpus.as_ref().is_some_and(|c| c.is_empty()) {
                return Err(bad(
                    &format!("tasks[{i}].cpus"),
                    "[]",
                    "None or a non-empty list of CPU numbers",
                ));
            }
            if t.loops == Some(0) {
                return Err(bad(
                    &format!("tasks[{i}].loops"),
                    0,
                    "a positive count or None",
                ));
            }
            if t.loop_from > 0 && t.loop_from >= t.ops.len() {
                return Err(bad(
                    &format!("tasks[{i}].loop_from"),
                    t.loop_from,
                    &format!("an operation index below {}", t.ops.len()),
                ));
            }
            if t.ops.is_empty() && t.loops != Some(1) {
                return Err(bad(
                    &format!("tasks[{i}].ops"),
                    "[]",
                    "some operations for a task that loops",
                ));
            }
            for (k, op) in t.ops.iter().enumerate() {
                let at = || format!("tasks[{i}].ops[{k}]");
                let check = |what: &str, id: u32, count: usize| {
                    if id as usize >= count {
                        Err(bad(
                            &at(),
                            format!("{what} {id}"),
                            &format!("a {what} from 0 to {} ({count} defined)", count as i64 - 1),
                        ))
                    } else {
                        Ok(())
                    }
                };
                match *op {
                    Op::Run { ns, .. } | Op::RunWall { ns } | Op::Sleep { ns } if ns > 1 << 50 => {
                        return Err(bad(&at(), ns, "at most 2^50 ns"));
                    }
                    Op::Timer { timer, period_ns } => {
                        check("timer", timer, spec.timers.len())?;
                        if period_ns == 0 || period_ns > 1 << 50 {
                            return Err(bad(&at(), period_ns, "a period from 1 ns to 2^50 ns"));
                        }
                    }
                    Op::Lock { mutex } | Op::Unlock { mutex } => {
                        check("mutex", mutex, spec.mutexes as usize)?
                    }
                    Op::Wait { cond, mutex } => {
                        check("condition", cond, spec.conds as usize)?;
                        check("mutex", mutex, spec.mutexes as usize)?;
                    }
                    Op::Signal { cond } | Op::Broadcast { cond } => {
                        check("condition", cond, spec.conds as usize)?
                    }
                    Op::Barrier { barrier } => check("barrier", barrier, spec.barriers.len())?,
                    Op::Post { task } | Op::Pend { from: task } => check("task", task, n)?,
                    Op::Fork { task } => {
                        check("task", task, n)?;
                        if t.loops != Some(1) {
                            return Err(bad(
                                &at(),
                                format!("fork of task {task}"),
                                "a fork in a task that runs its program once (loops=1)",
                            ));
                        }
                        if spec.tasks[task as usize].start != Start::Forked {
                            return Err(bad(
                                &at(),
                                format!("fork of task {task}"),
                                "a fork of a task whose start is \"fork\"",
                            ));
                        }
                        forked[task as usize] += 1;
                    }
                    _ => {}
                }
            }
        }
        for (i, t) in spec.tasks.iter().enumerate() {
            let times = forked[i];
            if t.start == Start::Forked && times != 1 {
                return Err(bad(
                    &format!("tasks[{i}].start"),
                    format!("\"fork\" with {times} forks of it"),
                    "a task forked by exactly one fork operation",
                ));
            }
        }
        for (b, &users) in spec.barriers.iter().enumerate() {
            if users == 0 {
                return Err(bad(&format!("barriers[{b}]"), 0, "at least 1 user"));
            }
        }
        let logged = spec.tasks.iter().any(|t| t.ops.contains(&Op::Mark));
        Ok(Script {
            st: vec![TaskState::default(); n],
            by_id: Vec::new(),
            timers: vec![None; spec.timers.len()],
            mutexes: vec![Mutex::default(); spec.mutexes as usize],
            conds: vec![Default::default(); spec.conds as usize],
            barriers: vec![Barrier::default(); spec.barriers.len()],
            start_ns: 0,
            logged,
            stalled: None,
            spec,
        })
    }

    fn spawn(&mut self, i: u32, ctx: &mut Ctx) {
        let t = &self.spec.tasks[i as usize];
        let id = ctx.spawn(TaskSpec {
            role: ROLES[0],
            name: t.name.clone(),
            nice: t.nice,
            cpus: t.cpus.clone(),
            mm: t.mm,
            policy: t.policy,
            rt_priority: t.rt_priority,
        });
        self.st[i as usize].id = Some(id);
        if self.by_id.len() <= id as usize {
            self.by_id.resize(id as usize + 1, u32::MAX);
        }
        self.by_id[id as usize] = i;
    }

    /// Wake task `i` from a wait: the engine wakes it if it blocked (true:
    /// a wake-up the engine carries out and charges); one still on its way
    /// to block (paying a futex call) keeps the wake-up, and one already
    /// woken needs none.
    fn wake(&mut self, i: u32, ctx: &mut Ctx) -> bool {
        let s = &mut self.st[i as usize];
        if s.blocked {
            s.blocked = false;
            if let Some(id) = s.id {
                ctx.wake(id, false);
                return true;
            }
        } else {
            s.woken = true;
        }
        false
    }

    /// Task `i` blocks (its wait is recorded in `waiting`).
    fn block(&mut self, i: usize) -> Action {
        self.st[i].blocked = true;
        Action::Block
    }

    /// Task `i` pays a futex call, then blocks unless woken meanwhile.
    fn futex_then_block(&mut self, i: usize, ctx: &Ctx) -> Action {
        self.st[i].block_next = true;
        self.futex(ctx)
    }

    /// Take `mutex` for task `i`, or queue it (true: taken).
    fn lock(&mut self, i: u32, mutex: u32) -> bool {
        let m = &mut self.mutexes[mutex as usize];
        match m.owner {
            None => {
                m.owner = Some(i);
                true
            }
            Some(_) => {
                if !m.waiters.contains(&i) {
                    m.waiters.push_back(i);
                }
                false
            }
        }
    }

    /// Release `mutex`; wake its first waiter (true: a futex wake).
    fn unlock(&mut self, mutex: u32, ctx: &mut Ctx) -> bool {
        let m = &mut self.mutexes[mutex as usize];
        m.owner = None;
        match m.waiters.pop_front() {
            Some(w) => {
                self.wake(w, ctx);
                true
            }
            None => false,
        }
    }

    /// Stop every task (the script's duration is over): each exits at its
    /// next step; blocked ones are woken for it.
    fn stop_all(&mut self, ctx: &mut Ctx) {
        for i in 0..self.st.len() {
            if !self.st[i].stopped {
                self.st[i].stopped = true;
                if self.st[i].waiting != Waiting::No {
                    self.wake(i as u32, ctx);
                }
            }
        }
    }

    fn close_burst(&mut self, i: usize, now: u64) {
        if let Some(from) = self.st[i].burst_from.take() {
            self.st[i].log.row_run += now - from;
        }
    }

    fn mark(&mut self, i: usize, now: u64) {
        let l = &mut self.st[i].log;
        l.rows += 1;
        l.run_ns += l.row_run;
        l.period_ns += now - l.row_start;
        l.slack_ns += l.row_slack;
        l.wu_lat_ns += l.row_wu;
        l.c_run_ns += l.row_c_run;
        l.c_period_ns += l.row_c_period;
        if l.row_slack < 0 {
            l.missed += 1;
        }
        l.row_start = now;
        l.row_run = 0;
        l.row_slack = 0;
        l.row_wu = 0;
        l.row_c_run = 0;
        l.row_c_period = 0;
    }

    /// The timer slack of the stepping task `ctx` describes.
    fn slack(&self, ctx: &Ctx) -> u64 {
        if ctx.rt || !self.spec.timer_slack {
            0
        } else {
            TIMER_SLACK_NS
        }
    }

    fn futex(&self, ctx: &Ctx) -> Action {
        sys(ctx.cost.futex_ns)
    }
}

impl Workload for Script {
    fn name(&self) -> &'static str {
        "script"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }

    fn validate(&self, machine: &Machine) -> CoreResult<()> {
        for c in self.spec.tasks.iter().filter_map(|t| t.cpus.as_deref()) {
            check_cpuset(c, machine)?;
        }
        Ok(())
    }

    fn init(&mut self, ctx: &mut Ctx) {
        self.start_ns = ctx.now;
        for i in 0..self.spec.tasks.len() {
            if matches!(self.spec.tasks[i].start, Start::Init { .. }) {
                self.spawn(i as u32, ctx);
            }
        }
    }

    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        let i = self.by_id[task as usize] as usize;
        let now = ctx.now;
        self.st[i].blocked = false;
        let woken = std::mem::take(&mut self.st[i].woken);
        self.close_burst(i, now);
        if let Some(due) = self.st[i].timer_due.take() {
            self.st[i].log.row_wu += now.saturating_sub(due);
        }
        if !self.st[i].started {
            // rt-app 1.0 (`thread_body`): every thread's `t_first` is the
            // first thread's start, plus its own `delay`; its timers count
            // their periods from there.
            self.st[i].started = true;
            match self.spec.tasks[i].start {
                Start::Init { delay_ns } => {
                    let first = self.start_ns + delay_ns;
                    self.st[i].start_ns = first;
                    self.st[i].log.row_start = first.max(now);
                    if first > now {
                        return Action::Sleep { ns: first - now };
                    }
                }
                Start::Forked => {
                    self.st[i].start_ns = now;
                    self.st[i].log.row_start = now;
                }
            }
        }
        if let Some(d) = self.spec.duration_ns {
            if now >= self.start_ns + d {
                self.stop_all(ctx);
            }
        }
        if self.st[i].stopped {
            // A task stopped holding a mutex lets its waiters go.
            for m in 0..self.mutexes.len() {
                if self.mutexes[m].owner == Some(i as u32) {
                    self.unlock(m as u32, ctx);
                }
            }
            return Action::Exit;
        }
        // Woken during the futex call: look at the wait again.
        if std::mem::take(&mut self.st[i].block_next) && !woken {
            return self.block(i);
        }
        // Iterations gone round in this step without taking time: `spins`
        // those that changed nothing that could end the loop (a task that
        // loops forever, without a late timer catching up or a token
        // used); `wraps` all of them.
        let (mut spins, mut wraps, mut progressed) = (0u32, 0u32, false);
        loop {
            let t = &self.spec.tasks[i];
            if self.st[i].pc == t.ops.len() {
                self.st[i].loops_done += 1;
                if t.loops.is_some_and(|n| self.st[i].loops_done >= n) {
                    return Action::Exit;
                }
                self.st[i].pc = t.loop_from;
                if t.ops.is_empty() {
                    return Action::Exit;
                }
                wraps += 1;
                if t.loops.is_none() && !progressed {
                    spins += 1;
                }
                progressed = false;
                if spins > 1 || wraps > ZERO_TIME_WRAPS {
                    // A whole iteration of an endless loop took no time
                    // and changed nothing (signals nobody waits for, an
                    // uncontended lock, a one-user barrier), or a long
                    // run of iterations did: hand the engine a
                    // zero-length burst (not `user(0)`, which is 1 ns).
                    // A loop that never takes time so ends as the
                    // engine's no-progress error instead of spinning
                    // here; a finite one goes on at the next step.
                    self.stalled = Some(i as u32);
                    return Action::Compute {
                        ns: 0,
                        kind: super::Work::User,
                    };
                }
            }
            let op = t.ops[self.st[i].pc];
            let me = i as u32;
            match op {
                Op::Run { ns: 0, c_ns } => {
                    // rt-app's `run: 0` (or one scaled to nothing): no
                    // work, so no burst.
                    self.st[i].pc += 1;
                    self.st[i].log.row_c_run += c_ns;
                }
                Op::Run { ns, c_ns } => {
                    self.st[i].pc += 1;
                    self.st[i].burst_from = Some(now);
                    self.st[i].log.row_c_run += c_ns;
                    let off = std::mem::take(&mut self.st[i].deduct).min(ns - ns.min(1));
                    return user(ns - off);
                }
                Op::RunWall { ns } => {
                    let end = *self.st[i].wall_end.get_or_insert(now + ns);
                    if now >= end {
                        self.st[i].wall_end = None;
                        self.st[i].pc += 1;
                        self.st[i].log.row_c_run += ns;
                        continue;
                    }
                    self.st[i].burst_from = Some(now);
                    return user((end - now).min(WALL_CHUNK_NS));
                }
                Op::Sleep { ns } => {
                    self.st[i].pc += 1;
                    if self.spec.net_costs {
                        self.st[i].deduct += ctx.cost.context_switch_ns;
                    }
                    return Action::Sleep {
                        ns: ns + self.slack(ctx),
                    };
                }
                Op::Timer { timer, period_ns } => {
                    self.st[i].pc += 1;
                    let absolute = self.spec.timers[timer as usize].absolute;
                    let start = self.st[i].start_ns;
                    let next = self.timers[timer as usize].unwrap_or(start) + period_ns;
                    self.timers[timer as usize] = Some(next);
                    let l = &mut self.st[i].log;
                    l.row_c_period += period_ns;
                    l.row_slack = next as i64 - now as i64;
                    if now < next {
                        self.st[i].timer_due = Some(next);
                        return Action::Sleep {
                            ns: next - now + self.slack(ctx),
                        };
                    }
                    // Late: no sleep, and rt-app 1.0 zeroes the
                    // iteration's wake-up latency; a relative timer
                    // restarts from now.
                    self.st[i].log.row_wu = 0;
                    progressed = true;
                    if !absolute {
                        self.timers[timer as usize] = Some(now);
                    }
                }
                Op::Lock { mutex } => {
                    if self.lock(me, mutex) {
                        self.st[i].waiting = Waiting::No;
                        self.st[i].pc += 1;
                        continue;
                    }
                    self.st[i].waiting = Waiting::Mutex;
                    return self.futex_then_block(i, ctx);
                }
                Op::Unlock { mutex } => {
                    self.st[i].pc += 1;
                    if self.mutexes[mutex as usize].owner == Some(me) && self.unlock(mutex, ctx) {
                        return self.futex(ctx);
                    }
                }
                Op::Wait { cond, mutex } => match self.st[i].waiting {
                    Waiting::Cond if self.conds[cond as usize].contains(&me) => {
                        return self.block(i);
                    }
                    Waiting::Cond | Waiting::Relock => {
                        if self.lock(me, mutex) {
                            self.st[i].waiting = Waiting::No;
                            self.st[i].pc += 1;
                            continue;
                        }
                        self.st[i].waiting = Waiting::Relock;
                        return self.futex_then_block(i, ctx);
                    }
                    _ => {
                        if self.mutexes[mutex as usize].owner == Some(me) {
                            self.unlock(mutex, ctx);
                        }
                        self.conds[cond as usize].push_back(me);
                        self.st[i].waiting = Waiting::Cond;
                        return self.futex_then_block(i, ctx);
                    }
                },
                Op::Signal { cond } | Op::Broadcast { cond } => {
                    self.st[i].pc += 1;
                    let all = matches!(op, Op::Broadcast { .. });
                    let mut woke = false;
                    while let Some(w) = self.conds[cond as usize].pop_front() {
                        self.wake(w, ctx);
                        woke = true;
                        if !all {
                            break;
                        }
                    }
                    if woke {
                        return self.futex(ctx);
                    }
                }
                Op::Barrier { barrier } => {
                    let b = barrier as usize;
                    if let Waiting::Barrier(gen) = self.st[i].waiting {
                        if self.barriers[b].gen == gen {
                            return self.block(i);
                        }
                        self.st[i].waiting = Waiting::No;
                        self.st[i].pc += 1;
                        continue;
                    }
                    let users = self.spec.barriers[b] as usize;
                    if self.barriers[b].arrived.len() + 1 >= users {
                        self.barriers[b].gen += 1;
                        let woken = std::mem::take(&mut self.barriers[b].arrived);
                        self.st[i].pc += 1;
                        for &w in &woken {
                            self.wake(w, ctx);
                        }
                        if !woken.is_empty() {
                            return self.futex(ctx);
                        }
                        continue;
                    }
                    self.barriers[b].arrived.push(me);
                    self.st[i].waiting = Waiting::Barrier(self.barriers[b].gen);
                    return self.futex_then_block(i, ctx);
                }
                Op::Post { task } => {
                    self.st[i].pc += 1;
                    let s = &mut self.st[task as usize];
                    match s.tokens.iter_mut().find(|(w, _)| *w == me) {
                        Some((_, n)) => *n += 1,
                        None => s.tokens.push((me, 1)),
                    }
                    // The wake-up first: it is made whatever net_costs says.
                    if s.waiting == Waiting::Token(me)
                        && self.wake(task, ctx)
                        && self.spec.net_costs
                    {
                        self.st[i].deduct += ctx.cost.wakeup_ns;
                    }
                }
                Op::Pend { from } => {
                    let s = &mut self.st[i];
                    if let Some(k) = s.tokens.iter().position(|&(w, _)| w == from) {
                        if s.waiting == Waiting::Token(from) && self.spec.net_costs {
                            // It blocked and was switched back in.
                            s.deduct += ctx.cost.context_switch_ns;
                        }
                        s.tokens[k].1 -= 1;
                        if s.tokens[k].1 == 0 {
                            s.tokens.swap_remove(k);
                        }
                        s.waiting = Waiting::No;
                        s.pc += 1;
                        progressed = true;
                        continue;
                    }
                    s.waiting = Waiting::Token(from);
                    return self.block(i);
                }
                Op::Fork { task } => {
                    self.st[i].pc += 1;
                    self.spawn(task, ctx);
                }
                Op::Yield => {
                    self.st[i].pc += 1;
                    return Action::Yield;
                }
                Op::Mark => {
                    self.st[i].pc += 1;
                    self.mark(i, now);
                }
            }
        }
    }

    fn nr_tasks(&self) -> u64 {
        self.spec.tasks.len() as u64
    }

    /// Finite when every task's loops are, or the script has a duration
    /// (otherwise `duration_s` bounds the run, as for spinners).
    fn finite(&self) -> bool {
        self.spec.duration_ns.is_some() || self.spec.tasks.iter().all(|t| t.loops.is_some())
    }

    fn metrics(&self, _elapsed_ns: u64) -> Vec<(&'static str, f64)> {
        let ops: u64 = self.st.iter().map(|s| s.loops_done).sum();
        vec![("loops", ops as f64)]
    }

    fn stall_reason(&self, task: TaskId) -> Option<String> {
        let i = *self.by_id.get(task as usize)?;
        (self.stalled == Some(i)).then(|| {
            format!(
                "its program ({:?}) loops without taking time: none of its operations ran, slept or blocked in a whole iteration",
                self.spec.tasks[i as usize].name
            )
        })
    }

    fn task_columns(&self, nr_tasks: usize) -> Vec<(&'static str, Vec<f64>)> {
        if !self.logged {
            return Vec::new();
        }
        let names = [
            "log_lines",
            "run_us",
            "period_us",
            "c_run_us",
            "c_period_us",
            "wu_lat_us",
            "slack_us",
            "missed_periods",
        ];
        let mut cols: Vec<Vec<f64>> = vec![vec![f64::NAN; nr_tasks]; names.len()];
        for s in &self.st {
            let (Some(id), l) = (s.id, &s.log) else {
                continue;
            };
            let id = id as usize;
            if id >= nr_tasks || l.rows == 0 {
                continue;
            }
            let r = l.rows as f64;
            let us = |ns: f64| ns / 1e3 / r;
            let vals = [
                r,
                us(l.run_ns as f64),
                us(l.period_ns as f64),
                us(l.c_run_ns as f64),
                us(l.c_period_ns as f64),
                us(l.wu_lat_ns as f64),
                us(l.slack_ns as f64),
                l.missed as f64,
            ];
            for (c, v) in cols.iter_mut().zip(vals) {
                c[id] = v;
            }
        }
        names.into_iter().zip(cols).collect()
    }
}
