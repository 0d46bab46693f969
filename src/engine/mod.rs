//! The discrete-event engine: the simulation driver (`Sim`), the event loop
//! and its clock, its own timers, the vmstat sampler
//! (`sampler`), the progress watchdog, the system-call layer that carries
//! out a workload's actions (`syscall`) and the building of the result
//! (`report`).
//!
//! `Sim` is the engine: it owns the scheduler (`sched::Sched`, every piece
//! of scheduler state, with the CPU-time accounting and the event queue
//! behind the scheduler's hooks, `sched::hooks`) beside the loop's own
//! state — the workload and its RNG streams, the wake-up and fork buffers
//! of a workload step, the sampler, the watchdog's snapshot, the options
//! and the event counters. For each event the loop pops, it sets the
//! scheduler's clock and calls a scheduler entry point (`scheduler_tick`,
//! `try_to_wake_up`, `active_balance`, …, in `sched::core` and its
//! neighbours) or, at a burst's end, the workload (`syscall`). The
//! scheduler declares its events and posts them only through its hooks, into
//! the queue (`crate::queue`) the loop pops; the engine keeps its own two
//! timers (the vmstat sample, the time bound) beside that queue, each with
//! a sequence number drawn from it, and takes whichever of the two comes
//! first in `(time, seq)` order.
//!
//! Time is `u64` nanoseconds. A running task consumes its current CPU burst
//! at rate one; scheduler overhead (context switch, tick, wake-up costs) is
//! queued per CPU as system time consumed *before* the task's own work, so
//! busy + idle time is conserved exactly on every CPU (`sched::stats::cputime`). A
//! task's burst end is one `SegmentEnd` event per CPU, re-armed whenever the
//! end moves: the queue replaces the CPU's pending one (`EventQueue::arm`,
//! through `Sched::rearm`). The `events` metric counts the events handled:
//! those popped from the queue and the engine's own two timers.

#[cfg(test)]
mod group_tests;
pub(crate) mod metrics;
#[cfg(test)]
mod policy_tests;
mod report;
pub(crate) mod sampler;
#[cfg(test)]
mod script_tests;
mod syscall;
#[cfg(test)]
mod tests;

use crate::cost::CostModel;
use crate::error::{CoreError, CoreResult};
use crate::kernel::Kernel;
use crate::result::{SimResult, Status};
use crate::rng::Rng;
use crate::sched::group::{validate_groups, GroupSpec, TaskGroups};
use crate::sched::hooks::Event;
use crate::sched::overhead::{Overhead, OVERHEAD_KINDS};
use crate::sched::task::TaskId;
use crate::sched::Sched;
use crate::topology::Machine;
use crate::workload::kthreads::Kthreads;
use crate::workload::mix::Mix;
use crate::workload::{Ctx, TaskSpec, Workload};
use sampler::Sampler;

/// The engine's own timers: the vmstat sample and the `duration_s` bound.
/// They are kept here rather than in the scheduler's queue, each with a
/// sequence number taken from the queue when armed (`Events::next_seq`),
/// so they run exactly where one queue would run them.
#[derive(Clone, Copy, Debug)]
struct OwnTimers {
    /// `(time, seq)` of the next vmstat sample.
    sample: Option<(u64, u64)>,
    /// `(time, seq)` of the time bound.
    end: Option<(u64, u64)>,
    /// The earlier of the two, `(u64::MAX, u64::MAX)` when neither is
    /// armed: what the loop compares the queue's head with, kept rather
    /// than recomputed at every event.
    first: (u64, u64),
    /// Timers armed.
    count: u64,
}

impl Default for OwnTimers {
    fn default() -> Self {
        OwnTimers {
            sample: None,
            end: None,
            first: NONE_ARMED,
            count: 0,
        }
    }
}

/// `OwnTimers::first` with nothing armed: after every queue key.
const NONE_ARMED: (u64, u64) = (u64::MAX, u64::MAX);

/// One of the engine's own timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Own {
    Sample,
    End,
}

impl OwnTimers {
    fn arm(&mut self, which: Own, key: (u64, u64)) {
        match which {
            Own::Sample => self.sample = Some(key),
            Own::End => self.end = Some(key),
        }
        self.settle();
    }

    /// The earlier armed timer (the one whose key is `first`), disarmed,
    /// with its time.
    fn take(&mut self) -> Option<(u64, Own)> {
        let (slot, which) = if self.sample == Some(self.first) {
            (&mut self.sample, Own::Sample)
        } else if self.end == Some(self.first) {
            (&mut self.end, Own::End)
        } else {
            return None;
        };
        let (time, _) = slot.take()?;
        self.settle();
        Some((time, which))
    }

    fn settle(&mut self) {
        self.first = match (self.sample, self.end) {
            (Some(s), Some(e)) => s.min(e),
            (s, e) => s.or(e).unwrap_or(NONE_ARMED),
        };
        self.count = u64::from(self.sample.is_some()) + u64::from(self.end.is_some());
    }
}

/// Options of one run (everything but machine, kernel, costs and workload).
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub seed: u64,
    /// Bound on simulated time; required for workloads that never end.
    pub duration_ns: Option<u64>,
    /// Keep at most this many trace rows; `None` = no trace.
    pub trace_limit: Option<usize>,
    /// vmstat / CPU-timeline interval.
    pub sample_interval_ns: u64,
    /// Keep at most this many bytes of vmstat rows (`limits::vmstat_row_bytes`
    /// each); past it the last row covers the rest of the run and
    /// `vmstat_truncated` is 1. 0: no periodic samples at all (one row for
    /// the whole run) — what a sweep uses, so a run's memory does not grow
    /// with simulated time.
    pub max_sample_bytes: u64,
    /// Keep every task's scheduling delays (`sched::stats::latency`): histograms
    /// bounded by the task count, no trace needed.
    pub latency: bool,
    /// The run's task groups (`sched::group`); empty: none, and no group
    /// step is taken.
    pub groups: Vec<GroupSpec>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            seed: 0,
            duration_ns: None,
            trace_limit: None,
            sample_interval_ns: 100_000_000,
            max_sample_bytes: crate::limits::MAX_VMSTAT_BYTES,
            latency: false,
            groups: Vec::new(),
        }
    }
}

/// How often (in events) the loop polls the cancellation callback.
const CANCEL_POLL_EVENTS: u64 = 1 << 14;
/// More events than this at one instant means a workload spins without
/// consuming time: the run stops with an error instead of hanging.
const MAX_EVENTS_AT_ONE_INSTANT: u64 = 1_000_000;
/// More zero-length actions than this in a row for one task is a workload
/// that makes no progress.
pub(crate) const MAX_ZERO_STEPS: u32 = 100_000;
/// The progress watchdog's stretch: a run in which tasks are runnable
/// throughout but no task runs (consumes any of its burst, user or system
/// time) or takes a workload step for this long — and for at least twice the largest single overhead
/// charge of the run — ends with `Status::Stalled`. See `Sim::watchdog`.
pub const WATCHDOG_NS: u64 = 1_000_000_000;

/// The engine: the scheduler and the event loop's state.
pub struct Sim<'a> {
    /// The scheduler, with the event queue behind its hooks.
    pub(crate) sched: Sched<'a>,
    pub(crate) workload: Box<dyn Workload>,
    /// The workload's stream.
    pub(crate) rng: Rng,
    /// The engine's own stream (cost noise), apart from the workload's.
    pub(crate) noise: Rng,
    /// The wake-ups and forks a workload step asked for (`syscall`).
    pub(crate) wakes: Vec<(TaskId, bool)>,
    pub(crate) spawns: Vec<TaskSpec>,
    /// Tasks forked and not yet exited.
    pub(crate) live_tasks: usize,
    /// The workload says it is done with tasks still alive (a mix).
    pub(crate) workload_done: bool,
    pub(crate) error: Option<String>,
    /// The watchdog's snapshot: the overhead charged by kind as it was at
    /// the scheduler's `progress_at`.
    overhead_at_progress: [u64; OVERHEAD_KINDS],
    sampler: Sampler,
    sampler_truncated: bool,
    /// Events popped from the queue (the `events` metric).
    events: u64,
    /// Sum over popped events of the queue's length before the pop.
    pending_sum: u64,
    /// The engine's own timers, beside the scheduler's queue.
    own: OwnTimers,
    opts: RunOptions,
}

impl<'a> Sim<'a> {
    pub fn new(
        machine: &'a Machine,
        kernel: &'a Kernel,
        cost: &'a CostModel,
        workload: Box<dyn Workload>,
        opts: RunOptions,
    ) -> CoreResult<Self> {
        Self::new_cancellable(machine, kernel, cost, workload, opts, &|| false)
    }

    /// [`Sim::new`], polling `cancel` while the machine's domains are
    /// built (the setup work that grows with the CPU count):
    /// `Err(CoreError::Cancelled)` when it returns true.
    pub fn new_cancellable(
        machine: &'a Machine,
        kernel: &'a Kernel,
        cost: &'a CostModel,
        mut workload: Box<dyn Workload>,
        opts: RunOptions,
        cancel: &dyn Fn() -> bool,
    ) -> CoreResult<Self> {
        use crate::config::Fields;
        kernel.validate()?;
        cost.validate()?;
        workload.for_machine(machine);
        workload.validate(machine)?;
        // The machine's RT kernel threads run as tasks beside the workload.
        if let Some(k) = workload.rt_kthreads().cloned() {
            let threads = Kthreads::new(k, machine.nr_cpus(), opts.seed);
            threads.validate(machine)?;
            workload = Box::new(Mix::beside(workload, Box::new(threads)));
        }
        // memory limits, before anything is allocated (crate::limits)
        let tasks = workload.nr_tasks();
        crate::limits::check_tasks(&format!("{} tasks", workload.name()), tasks, tasks)?;
        crate::limits::check_trace_limit(opts.trace_limit)?;
        if opts.latency {
            crate::limits::check_latency_tasks(tasks)?;
        }
        // A tick that costs its whole period leaves a busy CPU no time for
        // its task: the run would never finish (caught up front; other
        // overhead that cannot fit depends on the run and is left to the
        // watchdog).
        let tick_period_ns = 1_000_000_000 / kernel.hz as u64;
        if cost.tick_ns >= tick_period_ns {
            return Err(CoreError::invalid(
                "tick_ns",
                cost.tick_ns,
                format!(
                    "less than the tick period 1e9/hz = {tick_period_ns} ns (hz={}): a tick \
                     that costs its whole period leaves no CPU time for tasks",
                    kernel.hz
                ),
            ));
        }
        if opts.duration_ns.is_none() && !workload.finite() {
            return Err(CoreError::invalid(
                "duration_s",
                "None",
                format!(
                    "a positive number of seconds: workload {:?} never finishes by itself",
                    workload.name()
                ),
            ));
        }
        if opts.duration_ns == Some(0) {
            return Err(CoreError::invalid(
                "duration_s",
                0,
                "a positive number of seconds or None",
            ));
        }
        if opts.sample_interval_ns == 0 {
            return Err(CoreError::invalid(
                "interval_s",
                0,
                "a positive number of seconds",
            ));
        }
        let mut sched = Sched::new(machine, kernel, cost, opts.seed, opts.trace_limit, cancel)?;
        if opts.latency {
            sched.latency = Some(Default::default());
        }
        validate_groups(&opts.groups)?;
        for a in workload.all_task_attrs() {
            if let Some(g) = &a.group {
                if !opts.groups.iter().any(|s| &s.name == g) {
                    let names: Vec<&str> = opts.groups.iter().map(|s| s.name.as_str()).collect();
                    return Err(CoreError::invalid(
                        "group",
                        format!("{g:?}"),
                        if names.is_empty() {
                            "the name of a group in groups= (this run defines none)".to_string()
                        } else {
                            format!(
                                "the name of a group in groups=: {}",
                                crate::config::one_of_names(&names)
                            )
                        },
                    ));
                }
            }
        }
        if !opts.groups.is_empty() {
            sched.groups = Some(TaskGroups::new(&opts.groups, machine.nr_cpus(), opts.seed));
        }
        Ok(Sim {
            sampler: Sampler::new(sched.rqs.len()),
            sched,
            workload,
            rng: Rng::new(opts.seed),
            noise: Rng::new(opts.seed ^ 0x6E6F_6973_655F_7331),
            wakes: Vec::new(),
            spawns: Vec::new(),
            live_tasks: 0,
            workload_done: false,
            error: None,
            overhead_at_progress: [0; OVERHEAD_KINDS],
            sampler_truncated: false,
            events: 0,
            pending_sum: 0,
            own: OwnTimers::default(),
            opts,
        })
    }

    /// Run to completion, the time bound, a deadlock, a stall (the
    /// watchdog), an error or a cancellation (polled every few thousand
    /// events).
    pub fn run(mut self, cancel: &dyn Fn() -> bool) -> SimResult {
        self.init();
        if self.opts.max_sample_bytes > 0 {
            let key = (self.opts.sample_interval_ns, self.sched.events.next_seq());
            self.own.arm(Own::Sample, key);
        }
        if let Some(d) = self.opts.duration_ns {
            let key = (d, self.sched.events.next_seq());
            self.own.arm(Own::End, key);
        }
        let mut same_instant = 0u64;
        let status = loop {
            if let Some(e) = self.error.take() {
                break Status::Error(e);
            }
            if (self.live_tasks == 0 || self.workload_done) && self.workload.finite() {
                break Status::Ok;
            }
            if self.sched.nr_running_total == 0
                && self.sched.pending_timers == 0
                && self.live_tasks > 0
            {
                break Status::Deadlock;
            }
            if self.events % CANCEL_POLL_EVENTS == 0 && cancel() {
                break Status::Cancelled;
            }
            let Some(entry) = self.sched.events.pop_before(self.own.first) else {
                // The engine's own timer comes first (or nothing is left).
                let Some((time, which)) = self.own.take() else {
                    break self.nothing_left();
                };
                if let Some(s) = self.clock_to(time, &mut same_instant) {
                    break s;
                }
                if let Some(s) = self.own_timer(which) {
                    break s;
                }
                self.note_progress();
                continue;
            };
            if let Some(s) = self.clock_to(entry.time, &mut same_instant) {
                break s;
            }
            self.dispatch(entry.ev);
            self.note_progress();
        };
        self.finish(status)
    }

    /// The clock and the counters moved to the next event at `time`, and
    /// the loop's checks on the way: too many events at one instant, the
    /// progress watchdog. Returns the status that ends the run, if any.
    #[inline(always)]
    fn clock_to(&mut self, time: u64, same_instant: &mut u64) -> Option<Status> {
        self.pending_sum += self.sched.events.len() as u64 + self.own.count + 1;
        if time == self.sched.now {
            *same_instant += 1;
            if *same_instant > MAX_EVENTS_AT_ONE_INSTANT {
                return Some(self.no_progress());
            }
        } else {
            *same_instant = 0;
        }
        debug_assert!(time >= self.sched.now, "time went backwards");
        self.sched.now = time;
        self.events += 1;
        // The watchdog: state changes only at events, so over
        // (previous event, now] the runnable count was what it is now.
        if self.sched.nr_running_total == 0 {
            self.sched.acct.progress_at = self.sched.now;
        } else if self.sched.now - self.sched.acct.progress_at >= WATCHDOG_NS {
            return self.watchdog();
        }
        None
    }

    /// The watchdog's snapshot of the overhead, taken when the scheduler
    /// made progress at this event.
    #[inline(always)]
    fn note_progress(&mut self) {
        if self.sched.acct.progress_at == self.sched.now {
            self.overhead_at_progress = self.sched.acct.overhead;
        }
    }

    /// One of the engine's own timers fires: the time bound ends the run;
    /// the vmstat sample takes its row and re-arms.
    #[cold]
    fn own_timer(&mut self, which: Own) -> Option<Status> {
        match which {
            Own::End => Some(if self.workload.finite() {
                Status::TimeLimit
            } else {
                Status::Ok
            }),
            Own::Sample => {
                // Only the sampler (and the time bound) left queued:
                // nothing can ever run again. Runnable tasks would be
                // stranded on CPUs with nothing scheduled to run them —
                // an engine bug, reported rather than sampled for ever.
                let end_queued = self.opts.duration_ns.is_some_and(|d| d > self.sched.now);
                let pending = self.sched.events.len() + self.own.count as usize;
                if self.live_tasks > 0 && pending == usize::from(end_queued) {
                    return Some(self.nothing_left());
                }
                self.sched.sync_all();
                let rows = self.sampler.rows();
                self.sampler
                    .sample(self.sched.now, &self.sched.rqs, self.sched.nr_running_total);
                if self.sampler.rows() > rows {
                    self.sched.pelt_trace_sample();
                }
                // Bounded memory: past max_sample_bytes the last row
                // covers the rest of the run (reported as truncated).
                let row = crate::limits::vmstat_row_bytes(self.sched.rqs.len());
                if (self.sampler.rows() as u64 + 1) * row <= self.opts.max_sample_bytes {
                    let at = self.sched.now + self.opts.sample_interval_ns;
                    let key = (at, self.sched.events.next_seq());
                    self.own.arm(Own::Sample, key);
                } else {
                    self.sampler_truncated = true;
                }
                None
            }
        }
    }

    /// Hand a scheduler event to its entry point.
    #[inline]
    fn dispatch(&mut self, ev: Event) {
        match ev {
            Event::Tick { cpu } => self.sched.scheduler_tick(cpu as usize),
            Event::SegmentEnd { cpu, gen } => self.segment_end(cpu as usize, gen),
            Event::Timer { task, gen } => self.sched.timer_fired(task, gen),
            Event::Resched { cpu } => self.sched.resched_ipi(cpu as usize),
            Event::ActiveBalance { src, dst, lvl } => {
                self.sched
                    .active_balance(src as usize, dst as usize, lvl as usize)
            }
            Event::NohzKick { cpu } => self.sched.nohz_idle_balance(cpu as usize),
            Event::RtIrqWork { cpu, src } => self.sched.rt_irq_work(cpu as usize, src),
            Event::RtPeriod { cpu } => self.sched.rt_task_period_timer(cpu as usize),
            Event::CfsPeriod { group } => self.sched.cfs_period_timer(group as usize),
            Event::CfsSlack { group } => self.sched.cfs_slack_timer(group as usize),
        }
    }

    /// Too many events at one instant.
    fn no_progress(&self) -> Status {
        Status::Error(format!(
            "workload {:?} made no progress: over {MAX_EVENTS_AT_ONE_INSTANT} events at t={} ns",
            self.workload.name(),
            self.sched.now
        ))
    }

    /// Nothing left that could run: a deadlock of the workload, or — with
    /// runnable tasks left — tasks stranded on CPUs with no event to run
    /// them, an engine bug reported as an error.
    fn nothing_left(&self) -> Status {
        if self.sched.nr_running_total > 0 {
            Status::Error(format!(
                "engine: {} runnable task(s) left with no event to run them at t={} ns",
                self.sched.nr_running_total, self.sched.now
            ))
        } else {
            Status::Deadlock
        }
    }

    /// The progress watchdog — a model-side safety net with no kernel
    /// counterpart (a real CPU whose interrupts and scheduler work take all
    /// its time is livelocked the same way; the kernel has no watchdog for
    /// it either, short of the soft-lockup detector). Called when tasks have
    /// been runnable for `WATCHDOG_NS` without any task consuming burst
    /// time or taking a workload step. Pending accounting is read, not synced, so a run that goes on
    /// is unchanged: a CPU whose unsynced time ends in task work has made
    /// progress up to now. The stall needs the window to be at least
    /// `WATCHDOG_NS` (1 s: over 10^4 times the default costs of any one
    /// event, and 1000 ticks at HZ=1000) and at least twice the largest
    /// single overhead charge of the run (each cost field is at most 1 ms,
    /// but a load-balance pass sums per-group and per-CPU terms): a one-off
    /// charge, however large, is worked off within its own length, after
    /// which the CPU runs its task. Zero task progress on every CPU for that
    /// long means overhead kept arriving at least as fast as the clock — a
    /// livelock that would otherwise never end. A CPU whose RT tasks are
    /// throttled is waiting for its period timer, not livelocked. Time the
    /// RT kernel threads of `rt_kthreads` ran is not the workload's
    /// progress: when they kept its tasks off the CPUs past what RT
    /// throttling allows (or with throttling off), that is RT starvation,
    /// said as such.
    fn watchdog(&mut self) -> Option<Status> {
        let window = self.sched.now - self.sched.acct.progress_at;
        if window < 2 * self.sched.acct.max_charge {
            return None;
        }
        let mut backlog = 0u64;
        for rq in &self.sched.rqs {
            // RT tasks waiting for the RT period timer (throttled) wait, as
            // a sleeper does: no livelock.
            if rq.rtq.throttled && !rq.rtq.queue.is_empty() {
                self.sched.acct.progress_at = self.sched.now;
                return None;
            }
            let elapsed = self.sched.now - rq.seg_start;
            let workload_task = rq
                .curr()
                .is_some_and(|t| !self.sched.tasks[t as usize].kthread);
            if workload_task && elapsed > rq.overhead_left {
                self.sched.acct.progress_at = self.sched.now;
                return None;
            }
            backlog += rq.overhead_left - elapsed.min(rq.overhead_left);
        }
        if self.sched.acct.kthread_progress_at > self.sched.acct.progress_at {
            // RT kernel threads took the CPUs. With RT throttling they can
            // keep fair tasks off for at most about a runtime and a period
            // (a burst that straddles a period boundary): wait that out.
            let (period, runtime) = self.sched.rt_bandwidth();
            if let Some(r) = runtime.filter(|&r| r < period) {
                if window < r + period + WATCHDOG_NS {
                    return None;
                }
            }
            return Some(Status::Stalled(format!(
                "the workload's tasks got no CPU time for {:.3} s of simulated time \
                 (t={:.3}..{:.3} s) while {} task(s) were runnable: the RT kernel threads of \
                 rt_kthreads took the CPUs (RT starvation under sched_rt_runtime_us={} per \
                 sched_rt_period_us={}; 6.12+'s fair deadline server is not modelled): lower \
                 their demand or keep RT throttling",
                window as f64 / 1e9,
                self.sched.acct.progress_at as f64 / 1e9,
                self.sched.now as f64 / 1e9,
                self.sched.nr_running_total,
                self.sched.kernel.sched_rt_runtime_us,
                self.sched.kernel.sched_rt_period_us,
            )));
        }
        let cap = window as f64 * self.sched.rqs.len() as f64;
        let pct = |k: Overhead| {
            let i = k as usize;
            100.0 * (self.sched.acct.overhead[i] - self.overhead_at_progress[i]) as f64 / cap
        };
        let all: f64 = [
            Overhead::Tick,
            Overhead::Balance,
            Overhead::Switch,
            Overhead::Other,
        ]
        .into_iter()
        .map(pct)
        .sum();
        Some(Status::Stalled(format!(
            "no task ran for {:.3} s of simulated time (t={:.3}..{:.3} s) while {} task(s) \
             were runnable: the scheduler overhead charged in that window came to {:.1}% of \
             the {} CPU(s)' time (tick {:.1}%: tick_ns={} per {} ns tick period; load \
             balancing {:.1}%; context switches {:.1}%; other {:.1}%), {} ns of it still \
             queued, so overhead leaves no CPU time for tasks (livelock on overhead)",
            window as f64 / 1e9,
            self.sched.acct.progress_at as f64 / 1e9,
            self.sched.now as f64 / 1e9,
            self.sched.nr_running_total,
            all,
            self.sched.rqs.len(),
            pct(Overhead::Tick),
            self.sched.cost.tick_ns,
            self.sched.tick_ns,
            pct(Overhead::Balance),
            pct(Overhead::Switch),
            pct(Overhead::Other),
            backlog,
        )))
    }

    fn init(&mut self) {
        self.sched.in_init = true;
        let running = |_t: TaskId| false;
        let mut ctx = Ctx::new(
            0,
            &mut self.rng,
            self.sched.cost,
            &running,
            &mut self.wakes,
            &mut self.spawns,
            0,
        );
        ctx.kernel = Some(self.sched.kernel);
        self.workload.init(&mut ctx);
        self.process_side_effects(None);
        for cpu in 0..self.sched.rqs.len() {
            if self.sched.rqs[cpu].need_resched {
                self.sched.schedule(cpu);
            }
        }
        self.sched.in_init = false;
    }

    fn finish(mut self, status: Status) -> SimResult {
        self.sched.sync_all();
        self.sched.lozi_account();
        let rows = self.sampler.rows();
        self.sampler
            .finish(self.sched.now, &self.sched.rqs, self.sched.nr_running_total);
        if self.sampler.rows() > rows {
            self.sched.pelt_trace_sample();
        }
        let pelt = self.sched.pelt_columns();
        let rt_throttled_ns = self.sched.rt_throttled_ns();
        let mean_pending = self.pending_sum as f64 / self.events.max(1) as f64;
        let task_cpu: Vec<(u64, u64)> = self
            .sched
            .tasks
            .iter()
            .map(|t| (t.user_ns, t.sys_ns))
            .collect();
        let mut r = report::build(
            status,
            self.sched.now,
            self.events,
            self.sched.machine,
            &self.sched.tasks,
            &self.sched.rqs,
            &self.sched.counters,
            &self.sched.sd,
            self.sampler,
            self.sched.trace,
            self.sampler_truncated,
            self.workload.named_metrics(self.sched.now, &task_cpu),
            &|leader| self.workload.process_name(leader),
        );
        r.tasks.extra = self.workload.task_columns(self.sched.tasks.len());
        if let Some(p) = self.sched.power.as_mut() {
            r.metrics
                .extend(p.metrics(self.sched.now, self.sched.rqs.len()));
        }
        if let Some((tasks, cpus)) = pelt {
            r.tasks.pelt = Some(tasks);
            r.cpus.pelt = Some(cpus);
        }
        // The RT class's counters, in a run with RT tasks (its own or the
        // machine's RT kernel threads).
        if self.sched.rt_root.tasks_used || self.workload.rt_kthreads().is_some() {
            r.metrics
                .extend(self.sched.rt_root.metrics(rt_throttled_ns));
        }
        if let Some(tg) = &self.sched.groups {
            r.metrics
                .extend(report::group_metrics(tg, &self.sched.tasks));
        }
        if let Some(mut l) = self.sched.latency.take() {
            l.finish(self.sched.tasks.len());
            r.metrics
                .extend(l.metrics().into_iter().map(|(n, v)| (n.to_string(), v)));
            r.latency = Some(l);
        }
        r.mean_pending_events = mean_pending;
        r
    }
}
