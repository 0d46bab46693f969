//! AIM7 / re-aim-7 (davidlohr/areaim: `osdl-aim-7/src/driver.c` `runloop()`
//! and `osdl-aim-7/data/workfile.compute`; docs/guide/workloads.md): one
//! load point of `tasks` children, each running the same `procs_per_user`
//! jobs drawn from the workfile's quotas in its own random order.
//!
//! The driver (task 0) forks the children; each reports "ready" with one
//! write to the umbilical pipe and `pause()`s. When all are ready the driver
//! `sleep(1)`s, takes the start time and sends `kill(0, SIGUSR1)`; it then
//! `wait()`s for each child and takes its elapsed time at each reap. The
//! metrics are the driver's: `jobs_per_min = procs_per_user / real_time ×
//! 60 × N`, `jobs_per_min_per_child`, the children's CPU seconds (the
//! `cpu` column), the population standard deviation of the children's
//! completion times and the Job Timing Index with the driver's integer
//! truncation and its `(int) cov > 1.0` clamp (0 only once cov ≥ 2).
//!
//! A job is a CPU burst of its test's user and system time, then, for the
//! disk, pipe and UDP tests, a short blocking wait (an I/O completion or the
//! pipe/socket peer), modelled as a timed sleep. The tests that work on
//! state shared between the children's processes (`page_test`,
//! `shared_memory`, `stream_pipe`: the page allocator's and LRU lists'
//! locks, the SysV IPC ids, fork's and the pipe's shared lines) also pay a
//! contention cost: each of their `shared_lines` cache-line operations finds
//! the line in the cache of another child working on shared state at that
//! instant, so it costs the mean per-line transfer latency (`CostModel`
//! `xfer_*_ns`, by distance) from the CPUs of those contenders. Alone, or
//! with the contenders time-sharing its CPU, a child pays nothing extra; the
//! more NUMA nodes the contenders span, the more of the transfers are
//! remote. Simplification: the contender set is sampled once, when the job's
//! system-time burst starts; the transfers are charged as system time
//! (spinning and stalls count as CPU time in `times()`).
//!
//! Per-test costs: see [`TESTS`] (the arithmetic tests measured on the
//! development host with `scripts/calibration/aim7/arith_bench.c`, the
//! others estimates; docs/guide/workloads.md lists them).

use super::{check_cpuset, sys, user, Action, Ctx, TaskSpec, Workload};
use crate::error::{CoreError, CoreResult};
use crate::rng::{splitmix64, Rng};
use crate::sched::fair::TaskId;
use crate::topology::{Distance, Machine};

/// One test of the mix: its hits in the compute workfile and its modelled
/// cost per call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestCost {
    pub name: &'static str,
    /// Hits in `workfile.compute` (820 in all).
    pub hits: u32,
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Blocking wait per call (I/O completion, pipe or UDP peer).
    pub io_ns: u64,
    /// Cache-line operations on state shared with the other children.
    pub shared_lines: u64,
    /// True if `user_ns` was measured (arith_bench.c on the development
    /// host), false for an estimate.
    pub measured: bool,
}

const fn t(
    name: &'static str,
    hits: u32,
    user_us: u64,
    sys_us: u64,
    io_us: u64,
    shared_lines: u64,
    measured: bool,
) -> TestCost {
    TestCost {
        name,
        hits,
        user_ns: user_us * 1000,
        sys_ns: sys_us * 1000,
        io_ns: io_us * 1000,
        shared_lines,
        measured,
    }
}

/// The 26 tests of `workfile.compute` in the workfile's order. User times
/// of the nine arithmetic tests: `arith_bench.c` (our own dependent-chain
/// loops with re-aim-7's loop counts and 12 operations per iteration), best
/// of 5 on the development host (an AMD EPYC vCPU), rounded to µs — not a
/// Westmere, so they are short by the two machines' per-core speed ratio.
/// The others are order-of-magnitude estimates from what each test does
/// (not measured, not fitted to any result): see docs/guide/workloads.md.
pub const TESTS: [TestCost; 26] = [
    t("add_double", 50, 17_277, 0, 0, 0, true),
    t("add_int", 30, 12_528, 0, 0, 0, true),
    t("add_long", 30, 6_956, 0, 0, 0, true),
    t("array_rtns", 10, 10_000, 0, 0, 0, false),
    t("disk_cp", 10, 0, 10_000, 5_000, 0, false),
    t("disk_rd", 30, 0, 5_000, 2_000, 0, false),
    t("disk_src", 10, 2_000, 3_000, 2_000, 0, false),
    t("disk_wrt", 20, 0, 10_000, 5_000, 0, false),
    t("div_double", 40, 7_029, 0, 0, 0, true),
    t("div_int", 30, 1_751, 0, 0, 0, true),
    t("matrix_rtns", 50, 10_000, 0, 0, 0, false),
    t("mem_rtns_1", 40, 5_000, 5_000, 0, 0, false),
    t("mem_rtns_2", 40, 5_000, 5_000, 0, 0, false),
    t("mul_double", 50, 6_116, 0, 0, 0, true),
    t("mul_int", 30, 121, 0, 0, 0, true),
    t("mul_long", 30, 121, 0, 0, 0, true),
    t("new_raph", 40, 5_000, 0, 0, 0, false),
    t("num_rtns_1", 40, 5_000, 0, 0, 0, false),
    t("page_test", 50, 1_000, 10_000, 0, 20_000, false),
    t("series_1", 40, 10_000, 0, 0, 0, false),
    t("shared_memory", 10, 500, 2_000, 0, 5_000, false),
    t("sieve", 30, 10_000, 0, 0, 0, false),
    t("stream_pipe", 20, 0, 5_000, 1_000, 5_000, false),
    t("string_rtns", 30, 5_000, 0, 0, 0, false),
    t("trig_rtns", 40, 10_000, 0, 0, 0, false),
    t("udp_test", 20, 0, 5_000, 1_000, 0, false),
];

/// The driver's `sleep(SLEEP)` between "all ready" and the start signal.
const START_SLEEP_NS: u64 = 1_000_000_000;

/// The most jobs per child (`jobs`), so a run stays bounded.
pub const MAX_JOBS: u32 = 100_000;

/// The workfile names `aim7(workfile=...)` accepts: `"compute"` or one test
/// (LKP's single-test workfile, `10 <test>`).
pub fn workfile_names() -> Vec<&'static str> {
    std::iter::once("compute")
        .chain(TESTS.iter().map(|t| t.name))
        .collect()
}

/// `runloop()`'s per-test quota: `hits / total_hits × jobs`, rounded half
/// up, at least 1 for a test with hits. Returns (test index, quota) and
/// their sum, the new `procs_per_user`.
pub fn quotas(mix: &[(usize, u32)], jobs: u32) -> (Vec<(usize, u32)>, u32) {
    let total: u32 = mix.iter().map(|m| m.1).sum();
    let mut out = Vec::with_capacity(mix.len());
    let mut sum = 0;
    for &(test, hits) in mix {
        let load = hits as f64 / total as f64 * jobs as f64;
        let mut q = load as u32;
        let frac = load - q as f64;
        if frac >= 0.5 {
            q += 1;
        } else if frac != 0.0 && q == 0 {
            q = 1;
        }
        out.push((test, q));
        sum += q;
    }
    (out, sum)
}

/// The child's job order: `runloop()`'s walk over the remaining quotas —
/// from the current item step `rand % size` items round the list; take it
/// if it has hits left, else drop it and restart from the head; drop an
/// item once its hits run out. `aim_rand()` is the child's own stream,
/// seeded per child (the driver seeds it with the child's pid). The whole
/// list at once: the tests' reference for [`JobWalk`], which the run uses.
#[cfg(test)]
fn job_order(quotas: &[(usize, u32)], total: u32, rng: &mut Rng) -> Vec<u8> {
    let mut list: Vec<(usize, u32)> = quotas.to_vec();
    let mut item = 0usize;
    let mut out = Vec::with_capacity(total as usize);
    for _ in 0..total {
        loop {
            let k = (rng.next_u64() % list.len() as u64) as usize;
            item = (item + k) % list.len();
            if list[item].1 > 0 {
                list[item].1 -= 1;
                out.push(list[item].0 as u8);
                break;
            }
            list.remove(item);
            item = 0;
        }
        if list[item].1 == 0 {
            list.remove(item);
            item = 0;
        }
        if list.is_empty() {
            break;
        }
    }
    out
}

/// `job_order`'s walk drawn lazily, one job at a time, so a child holds
/// its stream and its remaining quotas (at most 26 entries), never a list
/// of all its jobs. The draws are the same, in the same order.
#[derive(Clone, Debug)]
struct JobWalk {
    rng: Rng,
    list: Vec<(u8, u32)>,
    item: usize,
    /// Walk steps left (`procs_per_user`).
    left: u32,
}

impl JobWalk {
    fn new(quotas: &[(usize, u32)], total: u32, rng: Rng) -> Self {
        JobWalk {
            rng,
            list: quotas.iter().map(|&(t, q)| (t as u8, q)).collect(),
            item: 0,
            left: total,
        }
    }

    /// The next job's test, or `None` once the walk is over.
    fn next(&mut self) -> Option<u8> {
        if self.left == 0 || self.list.is_empty() {
            return None;
        }
        self.left -= 1;
        let list = &mut self.list;
        let test;
        loop {
            let k = (self.rng.next_u64() % list.len() as u64) as usize;
            self.item = (self.item + k) % list.len();
            if list[self.item].1 > 0 {
                list[self.item].1 -= 1;
                test = list[self.item].0;
                break;
            }
            list.remove(self.item);
            self.item = 0;
        }
        if list[self.item].1 == 0 {
            list.remove(self.item);
            self.item = 0;
        }
        Some(test)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Aim7Params {
    /// Children (the load point's `Num Forked`).
    pub tasks: u32,
    /// `jobs` (procs_per_user before rounding; 100 by default).
    pub jobs: u32,
    /// `"compute"` or a single test name.
    pub workfile: String,
    /// The cpuset of the driver and its children; `None` = all CPUs.
    pub cpus: Option<Vec<u32>>,
    /// Charge the shared-state contention cost.
    pub contention: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    // driver
    Forking(u32),
    WaitReady,
    StartSleep,
    Signal,
    Reap,
    Done,
    // children
    Start,
    Ready,
    Paused,
    NextJob,
    JobSys,
    JobIo,
    JobEnd,
    Exiting,
    Exited,
}

#[derive(Clone, Debug)]
struct Child {
    phase: Phase,
    /// The child's job order, drawn as it goes (`None` before it is ready).
    walk: Option<JobWalk>,
    /// The test of the current job.
    test: usize,
}

/// The AIM7 workload (one load point).
#[derive(Clone, Debug)]
pub struct Aim7 {
    p: Aim7Params,
    quotas: Vec<(usize, u32)>,
    procs_per_user: u32,
    seed: u64,
    driver: Phase,
    /// Index 0 is the driver (its phase lives in `driver`).
    kids: Vec<Child>,
    ready: u32,
    started: bool,
    driver_waiting: bool,
    paused: Vec<TaskId>,
    exited: Vec<TaskId>,
    t0: Option<u64>,
    t_end: Option<u64>,
    /// Each reaped child's elapsed time in seconds, as the driver takes it
    /// (`timedelta()` in whole ms / 1000).
    elapsed: Vec<f64>,
    /// The CPU each child in a shared-state job ran on when it started its
    /// system-time burst (`u32::MAX` = not in one).
    contending: Vec<u32>,
    /// Children in a shared-state job, in all and per CPU / node, and the
    /// nodes with at least one (sized on the first shared-state job).
    contenders: u64,
    on_cpu: Vec<u64>,
    on_node: Vec<u64>,
    nodes_busy: u64,
    contention_ns: u64,
    contended_jobs: u64,
    shared_jobs: u64,
    nodes_spanned_sum: u64,
    jobs_done: u64,
}

impl Aim7 {
    pub fn new(p: Aim7Params) -> CoreResult<Self> {
        crate::limits::check_tasks("tasks", p.tasks, p.tasks as u64 + 1)?;
        if p.tasks == 0 {
            return Err(CoreError::invalid(
                "tasks",
                p.tasks,
                format!("an integer from 1 to {}", crate::limits::MAX_TASKS - 1),
            ));
        }
        if p.jobs == 0 || p.jobs > MAX_JOBS {
            return Err(CoreError::invalid(
                "jobs",
                p.jobs,
                format!("an integer from 1 to {MAX_JOBS}"),
            ));
        }
        let mix: Vec<(usize, u32)> = if p.workfile == "compute" {
            TESTS.iter().enumerate().map(|(i, t)| (i, t.hits)).collect()
        } else if let Some(i) = TESTS.iter().position(|t| t.name == p.workfile) {
            vec![(i, 10)]
        } else {
            return Err(CoreError::invalid(
                "workfile",
                format!("{:?}", p.workfile),
                format!(
                    "\"compute\" or one test of its mix: {}",
                    TESTS
                        .iter()
                        .map(|t| format!("{:?}", t.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        };
        if let Some(c) = &p.cpus {
            if c.is_empty() {
                return Err(CoreError::invalid(
                    "cpus",
                    "[]",
                    "a non-empty list of CPU numbers or None",
                ));
            }
        }
        let (quotas, procs_per_user) = quotas(&mix, p.jobs);
        let n = p.tasks as usize;
        Ok(Aim7 {
            p,
            quotas,
            procs_per_user,
            seed: 0,
            driver: Phase::Forking(0),
            kids: Vec::with_capacity(n + 1),
            ready: 0,
            started: false,
            driver_waiting: false,
            paused: Vec::with_capacity(n),
            exited: Vec::new(),
            t0: None,
            t_end: None,
            elapsed: Vec::with_capacity(n),
            contending: vec![u32::MAX; n + 1],
            contenders: 0,
            on_cpu: Vec::new(),
            on_node: Vec::new(),
            nodes_busy: 0,
            contention_ns: 0,
            contended_jobs: 0,
            shared_jobs: 0,
            nodes_spanned_sum: 0,
            jobs_done: 0,
        })
    }

    /// Jobs per child after the quota rounding (`procs_per_user`).
    pub fn procs_per_user(&self) -> u32 {
        self.procs_per_user
    }

    fn spec(&self, role: &'static str, name: String) -> TaskSpec {
        TaskSpec::process(role, name, 0, self.p.cpus.clone())
    }

    fn wake_driver(&mut self, ctx: &mut Ctx) {
        if self.driver_waiting {
            self.driver_waiting = false;
            ctx.wake(0, true);
        }
    }

    fn driver_step(&mut self, ctx: &mut Ctx) -> Action {
        let c = ctx.cost;
        let n = self.p.tasks;
        loop {
            match self.driver {
                Phase::Forking(k) if k < n => {
                    let id = ctx.spawn(self.spec(ROLES[1], format!("aim7/{}", k + 1)));
                    debug_assert_eq!(id as usize, self.kids.len());
                    self.kids.push(Child {
                        phase: Phase::Start,
                        walk: None,
                        test: 0,
                    });
                    self.driver = Phase::Forking(k + 1);
                    return sys(c.fork_ns);
                }
                Phase::Forking(_) => self.driver = Phase::WaitReady,
                Phase::WaitReady => {
                    if self.ready < n {
                        self.driver_waiting = true;
                        return Action::Block;
                    }
                    self.driver = Phase::StartSleep;
                    // read(umbilical) once per child
                    return sys(c.pipe_read_ns * n as u64);
                }
                Phase::StartSleep => {
                    self.driver = Phase::Signal;
                    return Action::Sleep { ns: START_SLEEP_NS };
                }
                Phase::Signal => {
                    // rt1 = timestamp(); kill(0, SIGUSR1)
                    self.t0 = Some(ctx.now);
                    self.started = true;
                    for &k in &self.paused {
                        ctx.wake(k, false);
                    }
                    self.paused.clear();
                    self.driver = Phase::Reap;
                    return sys(c.syscall_ns);
                }
                Phase::Reap => {
                    if !self.exited.is_empty() {
                        let t0 = self.t0.unwrap_or(ctx.now);
                        let ms = (ctx.now - t0) / 1_000_000;
                        let k = self.exited.len() as u64;
                        for _ in 0..k {
                            self.elapsed.push(ms as f64 / 1000.0);
                        }
                        self.exited.clear();
                        return sys(k * c.reap_ns);
                    }
                    if self.elapsed.len() as u32 == n {
                        self.t_end = Some(ctx.now);
                        self.driver = Phase::Done;
                        return Action::Exit;
                    }
                    self.driver_waiting = true;
                    return Action::Block;
                }
                _ => return Action::Exit,
            }
        }
    }

    /// The contention charge of child `i`'s shared-state job on the CPU it
    /// runs on now: `shared_lines` × the mean per-line transfer latency from
    /// the CPUs of the other children in a shared-state job. The others are
    /// kept as counts per CPU and per node (`on_cpu`, `on_node`), so a job
    /// costs O(CPUs), not O(children), and nothing per CPU when the charge
    /// is off.
    fn contention(&mut self, i: usize, lines: u64, ctx: &Ctx) -> u64 {
        let Some(m) = ctx.machine else { return 0 };
        let me = ctx.cpu;
        let my_node = m.cpu(me as usize).node as usize;
        if self.on_cpu.is_empty() {
            let nodes = (0..m.nr_cpus()).map(|c| m.cpu(c).node as usize + 1).max();
            self.on_cpu = vec![0; m.nr_cpus()];
            self.on_node = vec![0; nodes.unwrap_or(1)];
        }
        let others = self.contenders;
        // the nodes of the others, plus this CPU's node
        let spanned = self.nodes_busy + u64::from(self.on_node[my_node] == 0);
        self.contending[i] = me;
        self.contenders += 1;
        self.on_cpu[me as usize] += 1;
        if self.on_node[my_node] == 0 {
            self.nodes_busy += 1;
        }
        self.on_node[my_node] += 1;
        self.shared_jobs += 1;
        self.nodes_spanned_sum += spanned;
        if others == 0 || !self.p.contention {
            return 0;
        }
        let mut sum = 0u64;
        for (cpu, &k) in self.on_cpu.iter().enumerate() {
            let k = k - u64::from(cpu == me as usize);
            if k > 0 {
                sum += k * line_ns(ctx, m.distance(me as usize, cpu));
            }
        }
        self.contended_jobs += 1;
        let extra = lines * sum / others;
        self.contention_ns += extra;
        extra
    }

    /// Child `i` leaves its shared-state job (if it is in one).
    fn end_contention(&mut self, i: usize, ctx: &Ctx) {
        let cpu = std::mem::replace(&mut self.contending[i], u32::MAX);
        if cpu == u32::MAX {
            return;
        }
        let Some(m) = ctx.machine else { return };
        let node = m.cpu(cpu as usize).node as usize;
        self.contenders -= 1;
        self.on_cpu[cpu as usize] -= 1;
        self.on_node[node] -= 1;
        if self.on_node[node] == 0 {
            self.nodes_busy -= 1;
        }
    }

    fn child_step(&mut self, i: usize, task: TaskId, ctx: &mut Ctx) -> Action {
        let c = ctx.cost;
        loop {
            match self.kids[i].phase {
                Phase::Start => {
                    // the child's start-up after fork, then write(umbilical)
                    self.kids[i].phase = Phase::Ready;
                    let start = ctx
                        .rng
                        .spread_ns(c.child_start_ns, c.child_start_spread_pct);
                    return sys(start + c.pipe_write_ns);
                }
                Phase::Ready => {
                    self.ready += 1;
                    if self.ready == self.p.tasks {
                        self.wake_driver(ctx);
                    }
                    self.kids[i].phase = Phase::Paused;
                    // aim_srand(my_pid): the child's own stream
                    let rng = Rng::new(splitmix64(self.seed ^ i as u64));
                    self.kids[i].walk = Some(JobWalk::new(&self.quotas, self.procs_per_user, rng));
                    // pause()
                    return sys(c.syscall_ns);
                }
                Phase::Paused => {
                    if !self.started {
                        self.paused.push(task);
                        return Action::Block;
                    }
                    self.kids[i].phase = Phase::NextJob;
                }
                Phase::NextJob => {
                    let k = &mut self.kids[i];
                    let Some(test) = k.walk.as_mut().and_then(JobWalk::next) else {
                        k.walk = None;
                        k.phase = Phase::Exiting;
                        continue;
                    };
                    k.test = test as usize;
                    k.phase = Phase::JobSys;
                    let u = TESTS[k.test].user_ns;
                    if u > 0 {
                        return user(u);
                    }
                }
                Phase::JobSys => {
                    let tc = TESTS[self.kids[i].test];
                    self.kids[i].phase = Phase::JobIo;
                    let extra = if tc.shared_lines > 0 {
                        self.contention(i, tc.shared_lines, ctx)
                    } else {
                        0
                    };
                    let s = tc.sys_ns + extra;
                    if s > 0 {
                        return sys(s);
                    }
                }
                Phase::JobIo => {
                    let tc = TESTS[self.kids[i].test];
                    self.end_contention(i, ctx);
                    self.kids[i].phase = Phase::JobEnd;
                    if tc.io_ns > 0 {
                        return Action::Sleep { ns: tc.io_ns };
                    }
                }
                Phase::JobEnd => {
                    self.jobs_done += 1;
                    self.kids[i].phase = Phase::NextJob;
                }
                Phase::Exiting => {
                    self.kids[i].phase = Phase::Exited;
                    return sys(c.exit_ns);
                }
                _ => {
                    // exit(0) → do_notify_parent(): wake the wait()ing driver
                    self.exited.push(task);
                    self.wake_driver(ctx);
                    return Action::Exit;
                }
            }
        }
    }
}

/// One cache line modified in a cache `dist` away (`CostModel::xfer_*_ns`);
/// nothing on the same CPU. Read whether or not `xfer_by_distance` is on:
/// that switch gates the message-copy cost of the IPC objects, which AIM7's
/// contention charge does not use.
fn line_ns(ctx: &Ctx, dist: Distance) -> u64 {
    let c = ctx.cost;
    match dist {
        Distance::Same => 0,
        Distance::SmtSibling => c.xfer_smt_ns,
        Distance::SharedLlc => c.xfer_llc_ns,
        Distance::SameSocket => c.xfer_socket_ns,
        Distance::SameNode => c.xfer_node_ns,
        Distance::RemoteNode => c.xfer_remote_ns,
    }
}

/// The driver's spread of the children's completion times: the population
/// standard deviation by its one-pass formula, `cov = std_dev / mean`, and
/// the Job Timing Index `jti = (int) cov > 1.0 ? 0.0 : (1 - cov) * 100.0`
/// stored into an int — truncated toward zero, and, by the cast's
/// precedence, 0 only once cov ≥ 2 (1 < cov < 2 gives a negative JTI).
/// One child: 0, 0, 100; none (an unfinished run): 0, 0, 0.
pub fn job_timing(elapsed: &[f64]) -> (f64, f64, i64) {
    let n = elapsed.len();
    match n {
        0 => (0.0, 0.0, 0),
        1 => (0.0, 0.0, 100),
        _ => {
            let sum: f64 = elapsed.iter().sum();
            let sumsq: f64 = elapsed.iter().map(|e| e * e).sum();
            let nf = n as f64;
            // max(0): rounding must not take the root of a tiny negative
            let std_dev = ((sumsq - sum * sum / nf) / nf).max(0.0).sqrt();
            let cov = if sum == 0.0 {
                0.0
            } else {
                std_dev / (sum / nf)
            };
            let jti = if (cov as i64) as f64 > 1.0 {
                0
            } else {
                ((1.0 - cov) * 100.0) as i64
            };
            (std_dev, cov, jti)
        }
    }
}

/// AIM7's roles (re-aim-7): the `driver` (`reaim`, which forks, starts
/// and reaps the children) and the `child` processes that run the jobs.
pub const ROLES: &[&str] = &["driver", "child"];

impl Workload for Aim7 {
    fn name(&self) -> &'static str {
        "aim7"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }

    fn validate(&self, machine: &Machine) -> CoreResult<()> {
        match &self.p.cpus {
            Some(c) => check_cpuset(c, machine),
            None => Ok(()),
        }
    }

    fn init(&mut self, ctx: &mut Ctx) {
        self.seed = ctx.rng.next_u64();
        ctx.spawn(self.spec(ROLES[0], "reaim".into()));
        self.kids.push(Child {
            phase: Phase::Done,
            walk: None,
            test: 0,
        });
    }

    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        let i = task as usize;
        if i == 0 {
            self.driver_step(ctx)
        } else {
            self.child_step(i, task, ctx)
        }
    }

    fn nr_tasks(&self) -> u64 {
        self.p.tasks as u64
    }

    fn finite(&self) -> bool {
        true
    }

    fn metrics(&self, end_ns: u64) -> Vec<(&'static str, f64)> {
        self.metrics_with_tasks(end_ns, &[])
    }

    fn metrics_with_tasks(&self, end_ns: u64, task_cpu: &[(u64, u64)]) -> Vec<(&'static str, f64)> {
        let t0 = self.t0.unwrap_or(end_ns);
        // real_time = timedelta(rt1) / 1000.0: whole milliseconds
        let real_ms = (self.t_end.unwrap_or(end_ns).saturating_sub(t0)) / 1_000_000;
        let real = real_ms as f64 / 1000.0;
        let n = self.elapsed.len();
        let ppu = self.procs_per_user as f64;
        let per_s = if real > 0.0 { ppu / real } else { 0.0 };
        let tpm = per_s * 60.0 * self.p.tasks as f64;
        let (std_dev, cov, jti) = job_timing(&self.elapsed);
        let kids = task_cpu.iter().skip(1);
        let cu: u64 = kids.clone().map(|c| c.0).sum();
        let cs: u64 = kids.map(|c| c.1).sum();
        let max = self.elapsed.iter().cloned().fold(0.0, f64::max);
        let min = self.elapsed.iter().cloned().fold(f64::INFINITY, f64::min);
        vec![
            ("elapsed_s", real),
            ("real_s", real),
            ("jobs_per_min", tpm),
            ("jobs_per_min_per_child", per_s * 60.0),
            ("throughput", tpm),
            ("procs_per_user", ppu),
            ("children", n as f64),
            ("jobs", self.jobs_done as f64),
            ("cpu_s", (cu + cs) as f64 / 1e9),
            ("child_user_s", cu as f64 / 1e9),
            ("child_sys_s", cs as f64 / 1e9),
            ("std_dev_s", std_dev),
            ("std_dev_pct", cov * 100.0),
            ("jti", jti as f64),
            ("child_elapsed_max_s", max),
            ("child_elapsed_min_s", if n > 0 { min } else { 0.0 }),
            ("contention_s", self.contention_ns as f64 / 1e9),
            ("shared_jobs", self.shared_jobs as f64),
            ("contended_jobs", self.contended_jobs as f64),
            (
                "contention_nodes_mean",
                if self.shared_jobs > 0 {
                    self.nodes_spanned_sum as f64 / self.shared_jobs as f64
                } else {
                    0.0
                },
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compute_mix() -> Vec<(usize, u32)> {
        TESTS.iter().enumerate().map(|(i, t)| (i, t.hits)).collect()
    }

    #[test]
    fn compute_mix_has_26_tests_and_820_hits() {
        assert_eq!(TESTS.len(), 26);
        assert_eq!(TESTS.iter().map(|t| t.hits).sum::<u32>(), 820);
    }

    #[test]
    fn quotas_give_101_jobs_at_jobs_100() {
        let (q, total) = quotas(&compute_mix(), 100);
        assert_eq!(total, 101);
        // hits 50/30/10/20/40 -> 6/4/1/2/5 (6.10, 3.66, 1.22, 2.44, 4.88)
        for (test, quota) in q {
            let want = match TESTS[test].hits {
                50 => 6,
                30 => 4,
                10 => 1,
                20 => 2,
                40 => 5,
                h => panic!("unexpected hits {h}"),
            };
            assert_eq!(quota, want, "{}", TESTS[test].name);
        }
        // a single-test workfile runs `jobs` of it
        assert_eq!(quotas(&[(3, 10)], 100).1, 100);
        // every test at least once
        assert_eq!(quotas(&compute_mix(), 1).1, 26);
    }

    #[test]
    fn job_order_is_the_quota_multiset() {
        let (q, total) = quotas(&compute_mix(), 100);
        let mut rng = Rng::new(7);
        let order = job_order(&q, total, &mut rng);
        assert_eq!(order.len(), 101);
        for &(test, quota) in &q {
            let n = order.iter().filter(|&&o| o as usize == test).count();
            assert_eq!(n as u32, quota);
        }
        let mut rng2 = Rng::new(8);
        assert_ne!(order, job_order(&q, total, &mut rng2));
    }

    #[test]
    fn the_lazy_walk_draws_job_orders_eager_walk() {
        // the same draws in the same order as building the whole list
        for jobs in [1, 7, 100, 1000] {
            for (mix, total) in [quotas(&compute_mix(), jobs), quotas(&[(3, 10)], jobs)] {
                for seed in 0..20 {
                    let want = job_order(&mix, total, &mut Rng::new(seed));
                    let mut walk = JobWalk::new(&mix, total, Rng::new(seed));
                    let mut got = Vec::new();
                    while let Some(t) = walk.next() {
                        assert!(walk.list.len() <= mix.len());
                        got.push(t);
                    }
                    assert_eq!(got, want, "jobs {jobs} seed {seed}");
                    // and the streams are left at the same point
                    let mut rng = Rng::new(seed);
                    job_order(&mix, total, &mut rng);
                    assert_eq!(walk.rng.next_u64(), rng.next_u64());
                }
            }
        }
    }

    #[test]
    fn many_children_with_many_jobs_hold_no_job_lists() {
        // 5000 children × 100 000 jobs: the whole job lists would be 500 MB;
        // the children hold their streams and ≤ 26 quotas each. A short run
        // on a small machine forks them all and lets them reach pause().
        use crate::cost::CostModel;
        use crate::engine::{RunOptions, Sim};
        use crate::kernel::Kernel;
        let m = Machine::new(1, 2, 1, None, None).unwrap();
        let k = Kernel::preset("v3.8").unwrap();
        let cost = CostModel::default();
        let p = Aim7Params {
            tasks: 5000,
            jobs: MAX_JOBS,
            workfile: "compute".into(),
            cpus: None,
            contention: true,
        };
        let w = Aim7::new(p).unwrap();
        let opts = RunOptions {
            seed: 1,
            duration_ns: Some(2_000_000_000),
            trace_limit: None,
            sample_interval_ns: 100_000_000,
            max_sample_bytes: 0,
        };
        let r = Sim::new(&m, &k, &cost, Box::new(w), opts)
            .unwrap()
            .run(&|| false);
        let get = |name: &str| r.metrics.iter().find(|(n, _)| n == name).map(|m| m.1);
        // the start signal came (every child had reached pause()) and jobs ran
        assert_eq!(get("forks"), Some(5001.0), "{:?}", r.metrics);
        assert!(get("jobs").unwrap_or(0.0) > 0.0, "{:?}", r.metrics);
    }

    #[test]
    fn jti_is_the_drivers_formula() {
        assert_eq!(job_timing(&[5.0]), (0.0, 0.0, 100));
        assert_eq!(job_timing(&[2.0, 2.0, 2.0]).2, 100);
        // cov = 0.5 / 1.5 = 1/3: (1 - 1/3) * 100 = 66.67, truncated
        let (sd, cov, jti) = job_timing(&[1.0, 2.0]);
        assert!((sd - 0.5).abs() < 1e-12 && (cov - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(jti, 66);
        // one of four finishing: cov = sqrt(3) ≈ 1.73, not clamped: -73
        assert_eq!(job_timing(&[0.0, 0.0, 0.0, 4.0]).2, -73);
        // one of five finishing: cov = 2 → (int) 2 > 1 → 0
        let (_, cov, jti) = job_timing(&[0.0, 0.0, 0.0, 0.0, 5.0]);
        assert!((cov - 2.0).abs() < 1e-12);
        assert_eq!(jti, 0);
    }

    #[test]
    fn bad_inputs_are_refused() {
        let p = |tasks, jobs, wf: &str| Aim7Params {
            tasks,
            jobs,
            workfile: wf.into(),
            cpus: None,
            contention: true,
        };
        assert!(Aim7::new(p(0, 100, "compute")).is_err());
        assert!(Aim7::new(p(1, 0, "compute")).is_err());
        assert!(Aim7::new(p(1, MAX_JOBS + 1, "compute")).is_err());
        let e = Aim7::new(p(1, 100, "fserver")).unwrap_err().to_string();
        assert!(e.contains("workfile") && e.contains("page_test"), "{e}");
        assert!(Aim7::new(p(1, 100, "page_test")).is_ok());
    }
}
