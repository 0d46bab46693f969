//! schbench (masoncl/schbench, `schbench.c` at 24e32b8; Chris Mason's
//! wake-up latency benchmark): message threads wake worker threads through
//! futexes, the workers time how long the wake-up took to get them a CPU,
//! then run a request — a `usleep()` and some matrix arithmetic under a
//! per-CPU lock — and time that.
//!
//! Each message thread (`message_thread()`, `run_msg_thread()`) loops:
//! set its futex to blocked, take the list of workers waiting on it
//! (`xlist_splice()`, newest first), read the clock once and give each
//! worker that time as its wake time and a post (`xlist_wake_all()`,
//! `fpost()`: a compare-and-swap from blocked to running, and a
//! `FUTEX_WAKE` system call when it succeeded), then wait on its own futex
//! (`fwait()`: take a post already there, else `FUTEX_WAIT`). A worker
//! (`worker_thread()`, `msg_and_wait()`) sets its futex to blocked, reads
//! the clock, adds itself to its message thread's list, posts the message
//! thread and waits; once posted it reads the clock again and records the
//! difference as a **wake-up latency** (µs, a sample of 0 dropped, as
//! schbench drops it). Then the request: read the clock, `usleep(sleep)`,
//! `do_work()` — take the lock of the CPU it is on (`lock_this_cpu()`: a
//! `pthread_mutex_trylock()` loop that spins until it gets it, then gives
//! it back and starts over if it has moved CPU meanwhile), run `operations`
//! naive multiplications of two `n × n` matrices (`do_some_math()`, `n =
//! sqrt(footprint / 3 / 8)`), release the lock — read the clock and record
//! the **request latency**. With `-R`, the message thread instead hands out
//! `requests_per_sec` requests each second round-robin, each with a post
//! (`run_rps_thread()`: a worker more than 128 requests behind is skipped
//! after a 100 µs `usleep()`), and sleeps out the rest of the second; a
//! worker runs every request queued for it between waits. With `-p`, a
//! wake-up carries a `memset()` of that many bytes on each side and no
//! request runs. The main thread samples the requests completed once a
//! second (the **RPS** histogram, its first sample at the start) and after
//! `runtime` seconds sets `stopping`, posts the message threads and joins
//! them; each wakes its workers and joins them.
//!
//! Costs: a multiply-add of the matrix loop takes `mac_ns` (measured on
//! the development VM with `schbench -C`, where a request is the
//! arithmetic alone) times the cost model's `work_pct`; a futex call
//! `CostModel::futex_ns` of system time; a `memset()` `copy_kib_ns` per
//! KiB; a `usleep()` sleeps its time plus the default 50 µs timer slack
//! (`TIMER_SLACK_NS`); the lock spin is user time in 20 µs slices, between
//! which the lock is tried again. Not modelled: the footprint's cache misses
//! (a multiply-add costs the same at any `-F`), `--split`, `-A`, `-C`,
//! `-M`/`-W` pinning, `-z`, the per-interval reports.

use super::schbench_stats::Stats;
use super::script::TIMER_SLACK_NS;
use super::{sys, user, Action, Ctx, TaskSpec, Workload};
use crate::error::{CoreError, CoreResult};
use crate::sched::task::TaskId;
use crate::topology::Machine;

pub const ROLES: &[&str] = &["main", "message", "worker"];
/// `lock_this_cpu()`'s spin runs in slices of this much user time.
const SPIN_NS: u64 = 20_000;
/// `allocate_request()` (a `malloc()` and a clock read) and the loop
/// around it in `run_rps_thread()`: 0.1 µs of user time (not measured).
const REQUEST_NS: u64 = 100;
/// `run_rps_thread()`'s `batch`: a worker further behind is skipped.
const RPS_BATCH: u64 = 128;
const USEC: u64 = 1_000;
const SEC: u64 = 1_000_000_000;
/// The most tasks a run may make (message threads × workers).
const MAX_THREADS: u64 = 100_000;
/// The most CPU work one request may ask for (at `work_pct` 100), ns.
const MAX_WORK_NS: f64 = 1e12;

crate::workload_params! {
    /// schbench's options (`parse_options()`), with its defaults, declared
    /// once (`workload::params`); `workers` is also bounded by
    /// `message_threads × workers`, checked with it.
    pub struct SchbenchParams for "schbench" {
        /// `-m`.
        message_threads: u32 = int(1, MAX_THREADS as i64, 1, "message threads (-m)"),
        /// `-t`; `None`: the CPUs divided among the message threads, rounded up.
        workers: Option<u32> = int(1, MAX_THREADS as i64, 0, "workers per message thread (-t)")
            .default_none()
            .with_note("message_threads × workers at most 100000"),
        /// `-r`.
        runtime_s: u32 = int(1, 86_400, 30, "seconds of the run (-r)").with_note("s"),
        /// `-w` (ignored below 30 s of runtime, and with `-R` or `-p`).
        warmup_s: u32 = int(0, 86_400, 0, "seconds of samples dropped (-w)").with_note("s"),
        /// `-n`.
        operations: u32 = int(0, 1_000_000, 5, "matrix multiplications per request (-n)"),
        /// `-s`.
        sleep_us: u64 = int(0, 10_000_000, 100, "usleep() per request (-s)").with_note("µs"),
        /// `-R` (0: off).
        requests_per_sec: u32 = int(0, 10_000_000, 0, "requests a second (-R)")
            .with_note("0: off"),
        /// `-F`.
        cache_footprint_kb: u64 = int(0, 16 << 20, 256, "the matrices' footprint (-F)")
            .with_note("KB"),
        /// `-p` (0: off; at most 1 MiB, as schbench caps it).
        pipe_bytes: u32 = int(0, 1 << 20, 0, "pipe mode's bytes per wake-up (-p)")
            .with_note("0: off; schbench's PIPE_TRANSFER_BUFFER"),
        /// `-L`.
        skip_locking: bool = flag(false, "no per-CPU lock around a request's work (-L)"),
        /// One multiply-add of `do_some_math()`, ns.
        mac_ns: f64 = number(
            0.0,
            1000.0,
            1.0,
            "one multiply-add of the matrix loop (sl.workloads.SCHBENCH_MAC_NS, measured here)"
        )
        .above()
        .with_note("ns"),
    }
}

impl Default for SchbenchParams {
    fn default() -> Self {
        SchbenchParams {
            message_threads: 1,
            workers: None,
            runtime_s: 30,
            warmup_s: 0,
            operations: 5,
            sleep_us: 100,
            requests_per_sec: 0,
            cache_footprint_kb: 256,
            pipe_bytes: 0,
            skip_locking: false,
            mac_ns: 1.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ph {
    // main
    Spawn,
    Sample,
    PostMsg,
    Join,
    // message thread
    Create,
    WakeAll,
    WakeNext,
    StopCheck,
    Wait,
    WaitBlock,
    RpsNext,
    RpsSleep,
    PostWorkers,
    JoinWorkers,
    // worker
    Top,
    Waited,
    Request,
    Lock,
    Work,
    Done,
    Exit,
}

#[derive(Clone, Debug)]
struct T {
    ph: Ph,
    /// Index of the message thread (for its workers too).
    msg: usize,
    /// The futex: true = FUTEX_RUNNING (posted), false = FUTEX_BLOCKED.
    futex: bool,
    /// Blocked in FUTEX_WAIT (or a join).
    waiting: bool,
    /// gtod wake time, ns (workers).
    wake_time: u64,
    work_start: u64,
    /// The CPU whose lock it tries or holds.
    lock_cpu: usize,
    /// In `lock_this_cpu()`'s trylock loop (on `lock_cpu`'s lock).
    spinning: bool,
    holds_lock: bool,
    /// Requests queued for it (-R) and not yet taken.
    queued: u64,
    /// Requests it took in its last splice (-R).
    taken: u64,
    /// `td->pending` (-R).
    pending: u64,
    /// The pipe mode's `memset()` of this round is done.
    memset_done: bool,
    loops: u64,
    start: u64,
    runtime_us: u64,
    exited: bool,
}

impl T {
    fn new(ph: Ph, msg: usize) -> Self {
        T {
            ph,
            msg,
            futex: false,
            waiting: false,
            wake_time: 0,
            work_start: 0,
            lock_cpu: 0,
            spinning: false,
            holds_lock: false,
            queued: 0,
            taken: 0,
            pending: 0,
            memset_done: false,
            loops: 0,
            start: 0,
            runtime_us: 0,
            exited: false,
        }
    }
}

/// Per message thread: its task, its workers' tasks, the wait list and
/// the `-R` loop's state.
#[derive(Clone, Debug, Default)]
struct Msg {
    task: usize,
    workers: Vec<usize>,
    list: Vec<usize>,
    splice: Vec<usize>,
    spliced_at: u64,
    /// The worker whose `memset()` (pipe mode) the message thread has done.
    memset_for: Option<usize>,
    created: u32,
    rps_i: u64,
    rps_start: u64,
    cur: usize,
    joined: usize,
}

#[derive(Clone, Debug)]
pub struct Schbench {
    p: SchbenchParams,
    /// `requests_per_sec / message_threads`, as `main()` divides it before
    /// anything tests it: 0 (below `message_threads`) is the normal mode.
    rps_per_msg: u64,
    workers: u32,
    nr_cpus: usize,
    t: Vec<T>,
    msgs: Vec<Msg>,
    locks: Vec<Option<usize>>,
    stopping: bool,
    start: u64,
    last_rps: u64,
    last_loops: u64,
    warmup_done: bool,
    main_joined: usize,
    wakeup: Stats,
    request: Stats,
    rps: Stats,
}

/// `(int)sqrt(kb × 1024 / 3 / sizeof(long))`, schbench's matrix size.
pub fn matrix_size(kb: u64) -> u64 {
    ((kb * 1024 / 3 / 8) as f64).sqrt() as u64
}

fn us(ns: u64) -> u64 {
    ns / USEC
}

impl Schbench {
    pub fn new(p: SchbenchParams) -> CoreResult<Self> {
        let bad = |name: &str, v: String, want: &str| Err(CoreError::invalid(name, v, want));
        SchbenchParams::param("message_threads").check(i64::from(p.message_threads))?;
        if let Some(w) = p.workers {
            let declared = SchbenchParams::param("workers");
            if w == 0 || i64::from(w) * i64::from(p.message_threads) > declared.hi {
                return bad(
                    "workers",
                    w.to_string(),
                    &format!(
                        "{} with message_threads × workers at most {}, or None",
                        declared.allowed(),
                        declared.hi
                    ),
                );
            }
        }
        for (name, v) in [
            ("runtime_s", u64::from(p.runtime_s)),
            ("warmup_s", u64::from(p.warmup_s)),
            ("operations", u64::from(p.operations)),
            ("sleep_us", p.sleep_us),
            ("requests_per_sec", u64::from(p.requests_per_sec)),
            ("cache_footprint_kb", p.cache_footprint_kb),
            ("pipe_bytes", u64::from(p.pipe_bytes)),
        ] {
            SchbenchParams::param(name).check_u64(v)?;
        }
        SchbenchParams::param("mac_ns").check_number(p.mac_ns)?;
        let n = matrix_size(p.cache_footprint_kb) as f64;
        let work = f64::from(p.operations) * n * n * n * p.mac_ns;
        if work > MAX_WORK_NS {
            return bad(
                "operations",
                format!(
                    "{} (with cache_footprint_kb={}, mac_ns={:?}: {:.3e} s a request)",
                    p.operations,
                    p.cache_footprint_kb,
                    p.mac_ns,
                    work / 1e9
                ),
                "operations × (matrix size)³ × mac_ns at most 1000 s of work a request",
            );
        }
        let workers = p.workers.unwrap_or(1);
        let rps_per_msg = u64::from(p.requests_per_sec / p.message_threads);
        Ok(Schbench {
            p,
            rps_per_msg,
            workers,
            nr_cpus: 1,
            t: Vec::new(),
            msgs: Vec::new(),
            locks: Vec::new(),
            stopping: false,
            start: 0,
            last_rps: 0,
            last_loops: 0,
            warmup_done: false,
            main_joined: 0,
            wakeup: Stats::default(),
            request: Stats::default(),
            rps: Stats::default(),
        })
    }

    /// The CPU time of one request's arithmetic.
    fn work_ns(&self, ctx: &Ctx) -> u64 {
        let n = matrix_size(self.p.cache_footprint_kb) as f64;
        let ns = f64::from(self.p.operations) * n * n * n * self.p.mac_ns;
        (ns * ctx.cost.work_pct as f64 / 100.0).round() as u64
    }

    fn memset_ns(&self, ctx: &Ctx) -> u64 {
        u64::from(self.p.pipe_bytes) * ctx.cost.copy_kib_ns / 1024
    }

    fn warmup(&self) -> u64 {
        if self.p.runtime_s < 30 {
            0
        } else {
            u64::from(self.p.warmup_s)
        }
    }

    fn spec(&self, role: &'static str, name: String) -> TaskSpec {
        TaskSpec {
            role,
            name,
            nice: 0,
            cpus: None,
            mm: Some(0),
            policy: crate::sched::task::Policy::Normal,
            rt_priority: None,
        }
    }

    /// `fpost()`: post `task`; true when the futex was blocked (a
    /// `FUTEX_WAKE` is made, which wakes it if it waits).
    fn fpost(&mut self, task: usize, ctx: &mut Ctx) -> bool {
        if self.t[task].futex {
            return false;
        }
        self.t[task].futex = true;
        if self.t[task].waiting {
            self.t[task].waiting = false;
            ctx.wake(task as TaskId, false);
        }
        true
    }

    /// A joined thread exits: wake whoever joins it.
    fn exit(&mut self, i: usize, ctx: &mut Ctx) -> Action {
        self.t[i].exited = true;
        self.t[i].ph = Ph::Exit;
        let m = self.t[i].msg;
        if i == self.msgs[m].task {
            if self.t[0].waiting && self.t[0].ph == Ph::Join {
                self.t[0].waiting = false;
                ctx.wake(0, false);
            }
        } else {
            let mt = self.msgs[m].task;
            if self.t[mt].waiting && self.t[mt].ph == Ph::JoinWorkers {
                self.t[mt].waiting = false;
                ctx.wake(mt as TaskId, false);
            }
        }
        Action::Exit
    }

    fn main_step(&mut self, ctx: &mut Ctx) -> Action {
        let c = ctx.cost;
        loop {
            match self.t[0].ph {
                Ph::Spawn => {
                    let m = self.msgs.len();
                    if m < self.p.message_threads as usize {
                        let id = ctx.spawn(self.spec(ROLES[1], format!("schbench-msg/{m}")));
                        self.t.push(T::new(Ph::Create, m));
                        self.msgs.push(Msg {
                            task: id as usize,
                            ..Msg::default()
                        });
                        return sys(c.clone_ns);
                    }
                    self.start = ctx.now;
                    self.last_rps = ctx.now;
                    self.t[0].ph = Ph::Sample;
                }
                Ph::Sample => {
                    // sleep_for_runtime(): one round a second
                    let now = ctx.now;
                    let done = us(now) - us(self.start) >= u64::from(self.p.runtime_s) * 1_000_000;
                    let rps_mode = self.rps_per_msg > 0;
                    let pipe = self.p.pipe_bytes > 0;
                    let warm = self.warmup() * 1_000_000;
                    if !rps_mode
                        && !pipe
                        && us(now) - us(self.start) > warm
                        && !self.warmup_done
                        && warm > 0
                    {
                        self.warmup_done = true;
                        self.wakeup.reset();
                        self.request.reset();
                        self.rps.reset();
                    } else if !pipe {
                        let loops: u64 = self.t.iter().map(|t| t.loops).sum();
                        let delta = us(now) - us(self.last_rps);
                        let rps = if delta > 0 {
                            (loops - self.last_loops) as f64 * 1e6 / delta as f64
                        } else {
                            0.0
                        };
                        self.last_loops = loops;
                        self.last_rps = now;
                        self.rps.add(rps as u32);
                    }
                    if !done {
                        return Action::Sleep {
                            ns: SEC + TIMER_SLACK_NS,
                        };
                    }
                    self.stopping = true;
                    self.t[0].ph = Ph::PostMsg;
                    self.main_joined = 0;
                }
                Ph::PostMsg => {
                    // fpost() each message thread, then join it
                    let j = self.main_joined;
                    if j == self.msgs.len() {
                        self.t[0].ph = Ph::Exit;
                        return Action::Exit;
                    }
                    let mt = self.msgs[j].task;
                    self.t[0].ph = Ph::Join;
                    if self.fpost(mt, ctx) {
                        return sys(c.futex_ns);
                    }
                }
                Ph::Join => {
                    let mt = self.msgs[self.main_joined].task;
                    if !self.t[mt].exited {
                        self.t[0].waiting = true;
                        return Action::Block;
                    }
                    self.main_joined += 1;
                    self.t[0].ph = Ph::PostMsg;
                }
                _ => return Action::Exit,
            }
        }
    }

    fn msg_step(&mut self, i: usize, ctx: &mut Ctx) -> Action {
        let c = ctx.cost;
        let m = self.t[i].msg;
        loop {
            match self.t[i].ph {
                Ph::Create => {
                    let k = self.msgs[m].created;
                    if k < self.workers {
                        let id = ctx.spawn(self.spec(ROLES[2], format!("schbench-worker/{m}.{k}")));
                        let mut w = T::new(Ph::Top, m);
                        w.start = ctx.now;
                        self.t.push(w);
                        self.msgs[m].workers.push(id as usize);
                        self.msgs[m].created += 1;
                        return sys(c.clone_ns);
                    }
                    if self.rps_per_msg > 0 {
                        self.msgs[m].rps_start = ctx.now;
                        self.msgs[m].rps_i = 0;
                        self.t[i].ph = Ph::RpsNext;
                    } else {
                        self.t[i].ph = Ph::WakeAll;
                    }
                }
                Ph::WakeAll => {
                    // run_msg_thread(): futex = BLOCKED; xlist_wake_all()
                    self.t[i].futex = false;
                    // xlist_add() prepends, so the splice walks the newest
                    // first: popped from the end of the list in add order
                    self.msgs[m].splice = std::mem::take(&mut self.msgs[m].list);
                    self.msgs[m].spliced_at = ctx.now;
                    self.t[i].ph = Ph::WakeNext;
                }
                Ph::WakeNext => {
                    let Some(&w) = self.msgs[m].splice.last() else {
                        self.t[i].ph = Ph::StopCheck;
                        continue;
                    };
                    if self.p.pipe_bytes > 0 && self.msgs[m].memset_for != Some(w) {
                        // pipe mode: memset() the worker's page, then read the clock
                        self.msgs[m].memset_for = Some(w);
                        return user(self.memset_ns(ctx));
                    }
                    self.msgs[m].splice.pop();
                    self.msgs[m].memset_for = None;
                    self.t[w].wake_time = if self.p.pipe_bytes > 0 {
                        ctx.now
                    } else {
                        self.msgs[m].spliced_at
                    };
                    if self.fpost(w, ctx) {
                        return sys(c.futex_ns);
                    }
                }
                Ph::StopCheck => {
                    if self.stopping {
                        // a last xlist_wake_all(), then post and join the workers
                        if !self.msgs[m].list.is_empty() {
                            self.t[i].ph = Ph::WakeAll;
                            continue;
                        }
                        self.msgs[m].joined = 0;
                        self.t[i].ph = Ph::PostWorkers;
                        continue;
                    }
                    self.t[i].ph = Ph::Wait;
                }
                Ph::Wait => {
                    // fwait(): a post already there, or FUTEX_WAIT (its system
                    // call, during which a post still counts, then the sleep)
                    if self.t[i].futex {
                        self.t[i].ph = Ph::WakeAll;
                        continue;
                    }
                    self.t[i].waiting = true;
                    self.t[i].ph = Ph::WaitBlock;
                    return sys(c.futex_ns);
                }
                Ph::WaitBlock => {
                    if self.t[i].waiting {
                        return Action::Block;
                    }
                    self.t[i].ph = Ph::Wait;
                }
                Ph::RpsNext => return self.rps_next(i, m, ctx),
                Ph::RpsSleep => {
                    let elapsed = us(ctx.now) - us(self.msgs[m].rps_start);
                    if !self.stopping && elapsed < 1_000_000 {
                        return Action::Sleep {
                            ns: (1_000_000 - elapsed) * USEC + TIMER_SLACK_NS,
                        };
                    }
                    if self.stopping {
                        self.msgs[m].joined = 0;
                        self.t[i].ph = Ph::PostWorkers;
                        continue;
                    }
                    self.msgs[m].rps_start = ctx.now;
                    self.msgs[m].rps_i = 0;
                    self.t[i].ph = Ph::RpsNext;
                }
                Ph::PostWorkers => {
                    let j = self.msgs[m].joined;
                    if j == self.msgs[m].workers.len() {
                        return self.exit(i, ctx);
                    }
                    let w = self.msgs[m].workers[j];
                    self.t[i].ph = Ph::JoinWorkers;
                    if self.fpost(w, ctx) {
                        return sys(c.futex_ns);
                    }
                }
                Ph::JoinWorkers => {
                    let w = self.msgs[m].workers[self.msgs[m].joined];
                    if !self.t[w].exited {
                        self.t[i].waiting = true;
                        return Action::Block;
                    }
                    self.msgs[m].joined += 1;
                    self.t[i].ph = Ph::PostWorkers;
                }
                _ => return Action::Exit,
            }
        }
    }

    /// One request of `run_rps_thread()`'s second.
    fn rps_next(&mut self, i: usize, m: usize, ctx: &mut Ctx) -> Action {
        let c = ctx.cost;
        let per = self.rps_per_msg;
        if self.stopping || self.msgs[m].rps_i >= per {
            self.t[i].ph = Ph::RpsSleep;
            return Action::Compute {
                ns: 0,
                kind: super::Work::User,
            };
        }
        self.msgs[m].rps_i += 1;
        let n = self.msgs[m].workers.len();
        let w = self.msgs[m].workers[self.msgs[m].cur % n];
        self.msgs[m].cur += 1;
        if self.t[w].pending > RPS_BATCH {
            return Action::Sleep {
                ns: 100 * USEC + TIMER_SLACK_NS,
            };
        }
        self.t[w].pending += 1;
        self.t[w].queued += 1;
        self.t[w].wake_time = ctx.now;
        if self.fpost(w, ctx) {
            return sys(REQUEST_NS + c.futex_ns);
        }
        user(REQUEST_NS)
    }

    fn worker_step(&mut self, i: usize, ctx: &mut Ctx) -> Action {
        let c = ctx.cost;
        let m = self.t[i].msg;
        let rps_mode = self.rps_per_msg > 0;
        loop {
            match self.t[i].ph {
                Ph::Top => {
                    if self.stopping {
                        self.t[i].runtime_us = us(ctx.now) - us(self.t[i].start);
                        return self.exit(i, ctx);
                    }
                    // msg_and_wait(): the pipe mode's memset() (user time) first
                    if self.p.pipe_bytes > 0 && !self.t[i].memset_done {
                        self.t[i].memset_done = true;
                        return user(self.memset_ns(ctx));
                    }
                    self.t[i].memset_done = false;
                    let mut cost = 0;
                    self.t[i].futex = false;
                    self.t[i].wake_time = ctx.now;
                    if rps_mode {
                        self.t[i].pending = 0;
                        let q = std::mem::take(&mut self.t[i].queued);
                        if q > 0 {
                            self.t[i].futex = true;
                            self.t[i].taken = q;
                            self.t[i].ph = Ph::Request;
                            continue;
                        }
                    } else {
                        self.msgs[m].list.push(i);
                    }
                    let mt = self.msgs[m].task;
                    if self.fpost(mt, ctx) {
                        cost += c.futex_ns;
                    }
                    self.t[i].ph = Ph::Waited;
                    if !self.stopping && !self.t[i].futex {
                        // the post's system call (if it made one), then
                        // FUTEX_WAIT's; a post during them still counts
                        self.t[i].waiting = true;
                        return sys(cost + c.futex_ns);
                    }
                    if cost > 0 {
                        return sys(cost);
                    }
                }
                Ph::Waited => {
                    if self.t[i].waiting {
                        return Action::Block;
                    }
                    if !self.stopping && !self.t[i].futex {
                        // woken without a post (cannot happen; wait again)
                        self.t[i].waiting = true;
                        return Action::Block;
                    }
                    self.t[i].futex = false;
                    let d = us(ctx.now).saturating_sub(us(self.t[i].wake_time));
                    if d > 0 {
                        self.wakeup.add(d.min(u64::from(u32::MAX)) as u32);
                    }
                    if rps_mode {
                        // the requests are taken at the next msg_and_wait()
                        self.t[i].ph = Ph::Top;
                        continue;
                    }
                    self.t[i].taken = 1;
                    self.t[i].ph = Ph::Request;
                }
                Ph::Request => {
                    if self.t[i].taken == 0 {
                        self.t[i].ph = Ph::Top;
                        continue;
                    }
                    self.t[i].work_start = ctx.now;
                    if self.p.pipe_bytes > 0 {
                        self.t[i].ph = Ph::Done;
                        continue;
                    }
                    self.t[i].ph = Ph::Lock;
                    if self.p.sleep_us > 0 {
                        return Action::Sleep {
                            ns: self.p.sleep_us * USEC + TIMER_SLACK_NS,
                        };
                    }
                }
                Ph::Lock => {
                    if self.p.skip_locking {
                        self.t[i].ph = Ph::Work;
                        continue;
                    }
                    if !self.t[i].holds_lock {
                        // lock_this_cpu(): sched_getcpu() once, then spin on
                        // that CPU's lock wherever the task runs meanwhile
                        if !self.t[i].spinning {
                            self.t[i].lock_cpu = (ctx.cpu as usize).min(self.nr_cpus - 1);
                            self.t[i].spinning = true;
                        }
                        let l = self.t[i].lock_cpu;
                        match self.locks[l] {
                            None => {
                                self.locks[l] = Some(i);
                                self.t[i].holds_lock = true;
                                self.t[i].spinning = false;
                            }
                            Some(_) => return user(SPIN_NS),
                        }
                    }
                    // got it: still on that CPU?
                    if self.t[i].lock_cpu != ctx.cpu as usize {
                        self.locks[self.t[i].lock_cpu] = None;
                        self.t[i].holds_lock = false;
                        continue;
                    }
                    self.t[i].ph = Ph::Work;
                }
                Ph::Work => {
                    self.t[i].ph = Ph::Done;
                    let w = self.work_ns(ctx);
                    if w > 0 {
                        return user(w);
                    }
                }
                Ph::Done => {
                    if self.t[i].holds_lock {
                        self.locks[self.t[i].lock_cpu] = None;
                        self.t[i].holds_lock = false;
                    }
                    self.t[i].loops += 1;
                    self.t[i].runtime_us = us(ctx.now) - us(self.t[i].start);
                    let d = us(ctx.now).saturating_sub(us(self.t[i].work_start));
                    if d > 0 && self.p.pipe_bytes == 0 {
                        self.request.add(d.min(u64::from(u32::MAX)) as u32);
                    }
                    self.t[i].taken -= 1;
                    self.t[i].ph = Ph::Request;
                }
                _ => return Action::Exit,
            }
        }
    }
}

impl Workload for Schbench {
    fn name(&self) -> &'static str {
        "schbench"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }
    fn for_machine(&mut self, machine: &Machine) {
        let n = machine.nr_cpus() as u32;
        self.nr_cpus = n.max(1) as usize;
        // main(): worker_threads = (num_cpus + message_threads - 1) / message_threads
        if self.p.workers.is_none() {
            self.workers = n.div_ceil(self.p.message_threads).max(1);
        }
    }
    fn validate(&self, _machine: &Machine) -> CoreResult<()> {
        if u64::from(self.workers) * u64::from(self.p.message_threads) > MAX_THREADS {
            return Err(CoreError::invalid(
                "workers",
                self.workers,
                "message_threads × workers at most 100000",
            ));
        }
        Ok(())
    }
    fn init(&mut self, ctx: &mut Ctx) {
        self.locks = vec![None; self.nr_cpus];
        ctx.spawn(self.spec(ROLES[0], "schbench".into()));
        self.t.push(T::new(Ph::Spawn, 0));
    }
    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action {
        let i = task as usize;
        if i == 0 {
            return self.main_step(ctx);
        }
        let m = self.t[i].msg;
        if self.msgs[m].task == i {
            self.msg_step(i, ctx)
        } else {
            self.worker_step(i, ctx)
        }
    }
    fn nr_tasks(&self) -> u64 {
        u64::from(self.p.message_threads) * (1 + u64::from(self.workers))
    }
    fn nr_tasks_on(&self, nr_cpus: usize) -> u64 {
        let m = u64::from(self.p.message_threads);
        let w = match self.p.workers {
            Some(w) => u64::from(w),
            None => (nr_cpus as u64).div_ceil(m).max(1),
        };
        m * (1 + w)
    }
    fn finite(&self) -> bool {
        true
    }
    fn metrics(&self, elapsed_ns: u64) -> Vec<(&'static str, f64)> {
        // without samples schbench prints 0 (calc_percentiles() of an empty
        // histogram reads its first bucket)
        let pct = |s: &Stats, p: f64| s.percentile(p).map_or(0.0, f64::from);
        let loops: u64 = self.t.iter().map(|t| t.loops).sum();
        let runtime_us: u64 = self.t.iter().map(|t| t.runtime_us).sum();
        // requests / runtime, as schbench prints it; a run cut short (a
        // duration_s below runtime_s) divides by the time it ran
        let ran = (elapsed_ns as f64 / 1e9).min(f64::from(self.p.runtime_s));
        let rps = if ran > 0.0 { loops as f64 / ran } else { 0.0 };
        let mut out = vec![
            ("elapsed_s", elapsed_ns as f64 / 1e9),
            ("requests", loops as f64),
            ("rps", rps),
            ("throughput", rps),
            ("wakeup_samples", self.wakeup.nr_samples as f64),
            ("wakeup_p20_us", pct(&self.wakeup, 20.0)),
            ("wakeup_p50_us", pct(&self.wakeup, 50.0)),
            ("wakeup_p90_us", pct(&self.wakeup, 90.0)),
            ("wakeup_p99_us", pct(&self.wakeup, 99.0)),
            ("wakeup_p999_us", pct(&self.wakeup, 99.9)),
            ("wakeup_min_us", f64::from(self.wakeup.min)),
            ("wakeup_max_us", f64::from(self.wakeup.max)),
            ("request_samples", self.request.nr_samples as f64),
            ("request_p50_us", pct(&self.request, 50.0)),
            ("request_p90_us", pct(&self.request, 90.0)),
            ("request_p99_us", pct(&self.request, 99.0)),
            ("request_p999_us", pct(&self.request, 99.9)),
            ("request_min_us", f64::from(self.request.min)),
            ("request_max_us", f64::from(self.request.max)),
            ("rps_p20", pct(&self.rps, 20.0)),
            ("rps_p50", pct(&self.rps, 50.0)),
            ("rps_p90", pct(&self.rps, 90.0)),
            ("workers", f64::from(self.workers)),
            ("message_threads", f64::from(self.p.message_threads)),
        ];
        if self.p.pipe_bytes > 0 {
            let ops = if runtime_us > 0 {
                loops as f64 * 1e6 / runtime_us as f64
            } else {
                0.0
            };
            out.push(("ops_per_sec", ops));
        }
        out
    }
}
