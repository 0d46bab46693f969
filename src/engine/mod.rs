//! The discrete-event engine: the simulation driver (`Sim`), the event loop,
//! the clock and CPU-time accounting, the event queue (`queue`), the vmstat
//! sampler (`sampler`), the system-call layer that carries out a workload's
//! actions (`syscall`) and the building of the result (`report`). The
//! scheduler state `Sim` holds is `sched`'s (`sched::rq::Rq`,
//! `sched::task::Task`, `sched::rq::Nohz`, the domains); the scheduler entry
//! points it calls (`schedule`, `try_to_wake_up`, `scheduler_tick`, …) live
//! in `sched::core`.
//!
//! Time is `u64` nanoseconds. A running task consumes its current CPU burst
//! at rate one; scheduler overhead (context switch, tick, wake-up costs) is
//! queued per CPU as system time consumed *before* the task's own work, so
//! busy + idle time is conserved exactly on every CPU. A task's burst end is
//! one `SegmentEnd` event per CPU, re-armed whenever the end moves: the
//! queue replaces the CPU's pending one (`EventQueue::arm`). The `events`
//! metric counts the events popped from the queue.

mod power;
pub mod queue;
mod report;
#[cfg(test)]
mod rt_tests;
pub(crate) mod sampler;
#[cfg(test)]
mod sg_sums_tests;
#[cfg(test)]
mod sg_sums_variants_tests;
mod syscall;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod trace_tests;

use crate::cost::CostModel;
use crate::domains::Domain;
use crate::error::{CoreError, CoreResult};
use crate::kernel::Kernel;
use crate::result::{SimResult, Status};
use crate::rng::Rng;
use crate::sched::fair::{FairParams, SchedEntity, TaskId};
use crate::sched::rq::{Nohz, Rq};
use crate::sched::task::{Task, Work};
use crate::sched::tasklist::TaskLinks;
use crate::topology::Machine;
use crate::trace::Trace;
use crate::workload::{Ctx, TaskSpec, Workload};
use queue::EventQueue;
use sampler::Sampler;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    /// `scheduler_tick()` on a busy CPU (idle CPUs stop their tick: NOHZ).
    Tick { cpu: u32 },
    /// The running task's current burst (and queued overhead) is done.
    SegmentEnd { cpu: u32, gen: u32 },
    /// A sleeping task's hrtimer fires.
    Timer { task: TaskId, gen: u32 },
    /// A reschedule IPI (or idle wake) reaches `cpu`.
    Resched { cpu: u32 },
    /// vmstat-style sampling point.
    Sample,
    /// The `duration_s` bound.
    End,
    /// The stopper thread on `src` runs an active balance towards `dst`.
    ActiveBalance { src: u32, dst: u32, lvl: u32 },
    /// The NOHZ idle-balancer kick reaches `cpu`.
    NohzKick { cpu: u32 },
    /// An RT task's interrupt or timer wakes it (`sched::rt_class`).
    RtWake { task: u32 },
    /// The RT task running on `cpu` is done with its burst.
    RtDone { cpu: u32, gen: u32 },
    /// An RT push irq_work reaches `cpu` (`src`: the chain's source CPU,
    /// or `rt_class::RD_WORK` for the root domain's walk).
    RtIrqWork { cpu: u32, src: u32 },
    /// The RT period timer refills a throttled CPU's runtime.
    RtUnthrottle { cpu: u32 },
}

/// Engine-wide counters that are not per CPU or per task.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    pub cpu_migrations: u64,
    pub resched_ipis: u64,
    /// Reschedule IPIs whose target CPU was idle (waking it).
    pub resched_ipis_idle: u64,
    pub timer_irqs: u64,
    pub wakeups: u64,
    pub forks: u64,
    /// `sched_yield()` calls (schedstat's `yld_count`).
    pub yields: u64,
    pub function_call_ipis: u64,
    pub nohz_kicks: u64,
    pub newidle_calls: u64,
    pub newidle_skipped: u64,
    pub newidle_pulled: u64,
    pub newidle_time_ns: u64,
    pub avg_idle_sum: u64,
    /// `load_balance()` calls by idle type (idle, busy, newidle).
    pub lb_calls: [u64; 3],
    pub tasks_pulled: u64,
    pub active_balances: u64,
    /// Cache refill charged to migrated tasks (ns of extra work).
    pub refill_ns: u64,
    /// The Lozi invariant: CPU-time idle while another CPU had ≥ 2 runnable.
    pub lozi_ns: u64,
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
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            seed: 0,
            duration_ns: None,
            trace_limit: None,
            sample_interval_ns: 100_000_000,
            max_sample_bytes: crate::limits::MAX_VMSTAT_BYTES,
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

/// What a piece of scheduler overhead was charged for (the watchdog's
/// explanation of a stall).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Overhead {
    /// `scheduler_tick()` and its timer interrupt (`tick_ns`).
    Tick = 0,
    /// `load_balance()` passes, idle balancing, NOHZ balancing, migration.
    Balance = 1,
    /// `context_switch()` and `switch_mm()`.
    Switch = 2,
    /// Wake-ups, IPIs, system-call entry.
    Other = 3,
}
const OVERHEAD_KINDS: usize = 4;

pub struct Sim<'a> {
    pub(crate) now: u64,
    pub(crate) machine: &'a Machine,
    pub(crate) kernel: &'a Kernel,
    pub(crate) cost: &'a CostModel,
    pub(crate) fair: FairParams,
    pub(crate) tick_ns: u64,
    pub(crate) queue: EventQueue<Event>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) ses: Vec<SchedEntity>,
    /// Each task's `se.group_node`: the links of the runqueues'
    /// `rq->cfs_tasks` lists (`Rq::bal.cfs_tasks`).
    pub(crate) group_nodes: TaskLinks,
    pub(crate) rqs: Vec<Rq>,
    pub(crate) workload: Box<dyn Workload>,
    pub(crate) rng: Rng,
    /// The engine's own stream (cost noise), apart from the workload's.
    pub(crate) noise: Rng,
    pub(crate) trace: Option<Trace>,
    pub(crate) counters: Counters,
    pub(crate) wakes: Vec<(TaskId, bool)>,
    pub(crate) spawns: Vec<TaskSpec>,
    pub(crate) live_tasks: usize,
    pub(crate) nr_running_total: usize,
    pub(crate) pending_timers: usize,
    pub(crate) in_init: bool,
    /// The CPU whose task is taking a workload step: its burst end is
    /// re-armed once when the step is done (`segment_end`), not at every
    /// wake-up or charge inside the step (which would queue events that are
    /// stale before they fire).
    pub(crate) stepping: Option<usize>,
    /// Each CPU's sched domains, lowest level first.
    pub(crate) sd: Vec<Vec<Domain>>,
    pub(crate) cpu_power: Vec<u64>,
    /// Running sums per sched group and the idle mask (`None`: walk the
    /// groups' CPUs; see `sched::sg_sums`).
    pub(crate) sg_sums: Option<crate::sched::sg_sums::SgSums>,
    pub(crate) nohz: Nohz,
    /// PELT signals (`None` unless `Kernel::pelt` is on).
    pub(crate) pelt: Option<crate::sched::pelt::PeltState>,
    /// The power model's state (`None` unless `CostModel::turbo` or
    /// `CostModel::cstates` is on).
    pub(crate) power: Option<power::PowerState>,
    /// 3.8 PELT (`Kernel::pelt = "v3.8"`, or a power `balance_policy`).
    pub(crate) pelt38: Option<crate::sched::pelt::PeltV38State>,
    /// 4.x–6.x wake-up placement state (wakee flips, recent_used_cpu, LLC hints).
    pub(crate) wake: crate::sched::wakeup::WakeState,
    /// The 5.5+ balancer's group imbalance flags (`sgc->imbalance`).
    pub(crate) lb: crate::sched::lb_group::LbGroupState,
    /// CPUs with an empty runqueue / with ≥ 2 runnable tasks (Lozi).
    pub(crate) n_empty: usize,
    pub(crate) n_overloaded: usize,
    /// `rd->overload` (the root domain's): set when a runqueue reaches two
    /// runnable tasks, rewritten by a root-level balance pass
    /// (`sched::newidle`); read by `newidle_throttle = "lb_cost"`.
    pub(crate) rd_overload: bool,
    /// `sched_rnd_state`, the per-CPU stream of `sched_rng()` (NI_RANDOM):
    /// seeded from the run seed apart from the workload's and the noise
    /// streams; empty unless `Kernel::newidle_random`, so no draw is taken
    /// otherwise.
    pub(crate) sched_rng: Vec<Rng>,
    /// The RT class (`None` unless the workload has RT kernel threads, so a
    /// CFS-only run takes no RT step and no RT draw).
    pub(crate) rt: Option<crate::sched::rt::RtSched>,
    pub(crate) lozi_last: u64,
    pub(crate) error: Option<String>,
    /// The watchdog's state: the last instant a task consumed burst time or
    /// took a workload step (or nothing was runnable), the overhead charged so far by kind, the
    /// same as it was at `progress_at`, and the largest single charge.
    pub(crate) progress_at: u64,
    pub(crate) overhead: [u64; OVERHEAD_KINDS],
    overhead_at_progress: [u64; OVERHEAD_KINDS],
    pub(crate) max_charge: u64,
    sampler: Sampler,
    sampler_truncated: bool,
    /// Events popped from the queue (the `events` metric).
    events: u64,
    /// Sum over popped events of the queue's length before the pop.
    pending_sum: u64,
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
        workload: Box<dyn Workload>,
        opts: RunOptions,
        cancel: &dyn Fn() -> bool,
    ) -> CoreResult<Self> {
        use crate::config::Fields;
        kernel.validate()?;
        cost.validate()?;
        workload.validate(machine)?;
        if let Some(k) = workload.rt_kthreads() {
            k.validate(machine.nr_cpus())?;
        }
        // memory limits, before anything is allocated (crate::limits)
        let tasks = workload.nr_tasks();
        crate::limits::check_tasks(&format!("{} tasks", workload.name()), tasks, tasks)?;
        crate::limits::check_trace_limit(opts.trace_limit)?;
        if cost.syscall_ns == 0 {
            return Err(CoreError::invalid(
                "syscall_ns",
                0,
                "at least 1 (a zero-cost system call lets a yield loop spin without time passing)",
            ));
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
        let n = machine.nr_cpus();
        let power = power_state(machine, cost)?;
        let sd = crate::domains::build_cancellable(machine, kernel, cancel)
            .ok_or(CoreError::Cancelled)?;
        let fair = FairParams::new(kernel, n);
        let rt = workload
            .rt_kthreads()
            .map(|k| crate::sched::rt::RtSched::new(k, n, opts.seed));
        let rqs = (0..n)
            .map(|cpu| {
                let mut rq = Rq::new(kernel.migration_cost_ns, sd[cpu].len());
                rq.cfs.eevdf = fair.eevdf;
                rq
            })
            .collect();
        Ok(Sim {
            now: 0,
            machine,
            kernel,
            cost,
            fair,
            tick_ns: tick_period_ns,
            queue: EventQueue::new(),
            tasks: Vec::new(),
            ses: Vec::new(),
            group_nodes: TaskLinks::default(),
            rqs,
            workload,
            rng: Rng::new(opts.seed),
            noise: Rng::new(opts.seed ^ 0x6E6F_6973_655F_7331),
            trace: opts.trace_limit.map(Trace::new),
            counters: Counters::default(),
            wakes: Vec::new(),
            spawns: Vec::new(),
            live_tasks: 0,
            nr_running_total: 0,
            pending_timers: 0,
            in_init: false,
            stepping: None,
            cpu_power: crate::domains::cpu_power(machine),
            sg_sums: crate::sched::sg_sums::wanted(n).then(|| {
                crate::sched::sg_sums::SgSums::new(
                    &sd,
                    crate::sched::sg_sums::groups_wanted(kernel),
                )
            }),
            sd,
            nohz: Nohz::new(n),
            pelt: (kernel.pelt == crate::kernel::Pelt::V5_7)
                .then(|| crate::sched::pelt::PeltState::new(n)),
            pelt38: (kernel.pelt == crate::kernel::Pelt::V3_8
                || kernel.balance_policy != crate::kernel::BalancePolicy::Performance)
                .then(|| crate::sched::pelt::PeltV38State::new(n)),
            wake: crate::sched::wakeup::WakeState::new(machine),
            power,
            lb: Default::default(),
            n_empty: n,
            n_overloaded: 0,
            rd_overload: false,
            sched_rng: if kernel.newidle_random {
                crate::sched::newidle::sched_rng_streams(opts.seed, n)
            } else {
                Vec::new()
            },
            rt,
            lozi_last: 0,
            error: None,
            progress_at: 0,
            overhead: [0; OVERHEAD_KINDS],
            overhead_at_progress: [0; OVERHEAD_KINDS],
            max_charge: 0,
            sampler: Sampler::new(n),
            sampler_truncated: false,
            events: 0,
            pending_sum: 0,
            opts,
        })
    }

    /// Run to completion, the time bound, a deadlock, a stall (the
    /// watchdog), an error or a cancellation (polled every few thousand
    /// events).
    pub fn run(mut self, cancel: &dyn Fn() -> bool) -> SimResult {
        self.init();
        if self.opts.max_sample_bytes > 0 {
            self.queue.push(self.opts.sample_interval_ns, Event::Sample);
        }
        if let Some(d) = self.opts.duration_ns {
            self.queue.push(d, Event::End);
        }
        self.rt_init();
        let mut same_instant = 0u64;
        let status = loop {
            if let Some(e) = self.error.take() {
                break Status::Error(e);
            }
            if self.live_tasks == 0 && self.workload.finite() {
                break Status::Ok;
            }
            if self.nr_running_total == 0 && self.pending_timers == 0 && self.live_tasks > 0 {
                break Status::Deadlock;
            }
            if self.events % CANCEL_POLL_EVENTS == 0 && cancel() {
                break Status::Cancelled;
            }
            let Some(e) = self.queue.pop() else {
                break self.nothing_left();
            };
            self.pending_sum += self.queue.len() as u64 + 1;
            if e.time == self.now {
                same_instant += 1;
                if same_instant > MAX_EVENTS_AT_ONE_INSTANT {
                    break self.no_progress();
                }
            } else {
                same_instant = 0;
            }
            debug_assert!(e.time >= self.now, "time went backwards");
            self.now = e.time;
            self.events += 1;
            // The watchdog: state changes only at events, so over
            // (previous event, now] the runnable count was what it is now.
            if self.nr_running_total == 0 {
                self.progress_at = self.now;
            } else if self.now - self.progress_at >= WATCHDOG_NS {
                if let Some(s) = self.watchdog() {
                    break s;
                }
            }
            match e.ev {
                Event::End => {
                    break if self.workload.finite() {
                        Status::TimeLimit
                    } else {
                        Status::Ok
                    }
                }
                Event::Sample => {
                    // Only the sampler (and the time bound) left queued:
                    // nothing can ever run again. Runnable tasks would be
                    // stranded on CPUs with nothing scheduled to run them —
                    // an engine bug, reported rather than sampled for ever.
                    let end_queued = self.opts.duration_ns.is_some_and(|d| d > self.now);
                    if self.live_tasks > 0 && self.queue.len() == usize::from(end_queued) {
                        break self.nothing_left();
                    }
                    self.sync_all();
                    let rows = self.sampler.rows();
                    self.sampler
                        .sample(self.now, &self.rqs, self.nr_running_total);
                    if self.sampler.rows() > rows {
                        self.pelt_trace_sample();
                    }
                    // Bounded memory: past max_sample_bytes the last row
                    // covers the rest of the run (reported as truncated).
                    let row = crate::limits::vmstat_row_bytes(self.rqs.len());
                    if (self.sampler.rows() as u64 + 1) * row <= self.opts.max_sample_bytes {
                        self.queue
                            .push(self.now + self.opts.sample_interval_ns, Event::Sample);
                    } else {
                        self.sampler_truncated = true;
                    }
                }
                Event::Tick { cpu } => self.scheduler_tick(cpu as usize),
                Event::SegmentEnd { cpu, gen } => self.segment_end(cpu as usize, gen),
                Event::Timer { task, gen } => self.timer_fired(task, gen),
                Event::Resched { cpu } => self.resched_ipi(cpu as usize),
                Event::ActiveBalance { src, dst, lvl } => {
                    self.active_balance(src as usize, dst as usize, lvl as usize)
                }
                Event::NohzKick { cpu } => self.nohz_idle_balance(cpu as usize),
                Event::RtWake { task } => self.rt_wake(task as usize),
                Event::RtDone { cpu, gen } => self.rt_done(cpu as usize, gen),
                Event::RtIrqWork { cpu, src } => self.rt_irq_work(cpu as usize, src),
                Event::RtUnthrottle { cpu } => self.rt_unthrottle(cpu as usize),
            }
            if self.progress_at == self.now {
                self.overhead_at_progress = self.overhead;
            }
        };
        self.finish(status)
    }

    /// Too many events at one instant.
    fn no_progress(&self) -> Status {
        Status::Error(format!(
            "workload {:?} made no progress: over {MAX_EVENTS_AT_ONE_INSTANT} events at t={} ns",
            self.workload.name(),
            self.now
        ))
    }

    /// Nothing left that could run: a deadlock of the workload, or — with
    /// runnable tasks left — tasks stranded on CPUs with no event to run
    /// them, an engine bug reported as an error.
    fn nothing_left(&self) -> Status {
        if self.nr_running_total > 0 {
            Status::Error(format!(
                "engine: {} runnable task(s) left with no event to run them at t={} ns",
                self.nr_running_total, self.now
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
    /// livelock that would otherwise never end.
    fn watchdog(&mut self) -> Option<Status> {
        let window = self.now - self.progress_at;
        if window < 2 * self.max_charge {
            return None;
        }
        let mut backlog = 0u64;
        for rq in &self.rqs {
            let elapsed = self.now - rq.seg_start;
            if rq.cfs.curr.is_some() && elapsed > rq.overhead_left {
                self.progress_at = self.now;
                return None;
            }
            backlog += rq.overhead_left - elapsed.min(rq.overhead_left);
        }
        let cap = window as f64 * self.rqs.len() as f64;
        let pct = |k: Overhead| {
            let i = k as usize;
            100.0 * (self.overhead[i] - self.overhead_at_progress[i]) as f64 / cap
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
            self.progress_at as f64 / 1e9,
            self.now as f64 / 1e9,
            self.nr_running_total,
            all,
            self.rqs.len(),
            pct(Overhead::Tick),
            self.cost.tick_ns,
            self.tick_ns,
            pct(Overhead::Balance),
            pct(Overhead::Switch),
            pct(Overhead::Other),
            backlog,
        )))
    }

    /// Bring every CPU's accounting up to `now`.
    pub(crate) fn sync_all(&mut self) {
        for cpu in 0..self.rqs.len() {
            self.rq_sync(cpu);
        }
    }

    /// Account this CPU's time since its last sync: queued overhead first (system
    /// time), then the running task's burst, or idle. Inlined for the
    /// common case of a CPU already synced at this instant (about half the
    /// calls on a busy machine).
    #[inline]
    pub(crate) fn rq_sync(&mut self, cpu: usize) {
        if self.rqs[cpu].seg_start != self.now {
            self.rq_sync_elapsed(cpu);
        }
    }

    /// `rq_sync` of a CPU last synced before now.
    fn rq_sync_elapsed(&mut self, cpu: usize) {
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        let mut elapsed = now - rq.seg_start;
        rq.seg_start = now;
        let ov = elapsed.min(rq.overhead_left);
        rq.overhead_left -= ov;
        rq.sys_ns += ov;
        elapsed -= ov;
        match rq.cfs.curr {
            None => rq.idle_ns += elapsed,
            Some(t) => {
                let task = &mut self.tasks[t as usize];
                task.sys_ns += ov;
                let w = match &self.power {
                    // Turbo: `elapsed` ns at f do elapsed·f/base of the
                    // burst (kept in ns at base frequency); the CPU time
                    // charged is the wall time.
                    Some(p) if p.turbo => {
                        let (f, b) = p.ratio(cpu);
                        let done = (elapsed as u128 * f as u128 / b as u128) as u64;
                        task.work_left -= done.min(task.work_left);
                        elapsed
                    }
                    _ => {
                        debug_assert!(elapsed <= task.work_left, "burst overrun");
                        let w = elapsed.min(task.work_left);
                        task.work_left -= w;
                        w
                    }
                };
                if w > 0 {
                    // Task work comes after the overhead: it ends at now.
                    self.progress_at = now;
                }
                match task.work_kind {
                    Work::User => {
                        rq.user_ns += w;
                        task.user_ns += w;
                    }
                    Work::Sys => {
                        rq.sys_ns += w;
                        task.sys_ns += w;
                    }
                }
            }
        }
    }

    /// Queue `ns` of scheduler overhead (system time) on `cpu`, counted as
    /// `Overhead::Other`.
    pub(crate) fn charge(&mut self, cpu: usize, ns: u64) {
        self.charge_as(cpu, ns, Overhead::Other);
    }

    /// Queue `ns` of scheduler overhead of kind `kind` on `cpu`.
    pub(crate) fn charge_as(&mut self, cpu: usize, ns: u64, kind: Overhead) {
        self.rq_sync(cpu);
        self.rqs[cpu].overhead_left += ns;
        self.count_overhead(ns, kind);
    }

    /// Count `ns` of overhead queued on some CPU (for the watchdog).
    pub(crate) fn count_overhead(&mut self, ns: u64, kind: Overhead) {
        self.overhead[kind as usize] += ns;
        self.max_charge = self.max_charge.max(ns);
    }

    /// (Re-)arm the end of the running burst on `cpu` if it moved. Call after
    /// `rq_sync(cpu)` and after any change to the CPU's curr/overhead/work.
    pub(crate) fn rearm(&mut self, cpu: usize) {
        if self.stepping == Some(cpu) {
            return;
        }
        let rq = &self.rqs[cpu];
        debug_assert_eq!(rq.seg_start, self.now);
        let end = rq.cfs.curr.map(|t| {
            let work = self.tasks[t as usize].work_left;
            let work = match &self.power {
                // the rest of the burst at the package's frequency, rounded up
                Some(p) if p.turbo => {
                    let (f, b) = p.ratio(cpu);
                    (work as u128 * b as u128).div_ceil(f as u128) as u64
                }
                _ => work,
            };
            self.now + rq.overhead_left + work
        });
        if end != rq.armed_end {
            let rq = &mut self.rqs[cpu];
            rq.gen = rq.gen.wrapping_add(1);
            rq.armed_end = end;
            let gen = rq.gen;
            match end {
                Some(e) => {
                    self.queue.arm(
                        cpu,
                        e,
                        Event::SegmentEnd {
                            cpu: cpu as u32,
                            gen,
                        },
                    );
                }
                None => {
                    self.queue.cancel(cpu);
                }
            }
        }
    }

    fn init(&mut self) {
        self.in_init = true;
        let running = |_t: TaskId| false;
        let mut ctx = Ctx::new(
            0,
            &mut self.rng,
            self.cost,
            &running,
            &mut self.wakes,
            &mut self.spawns,
            0,
        );
        self.workload.init(&mut ctx);
        self.process_side_effects(None);
        for cpu in 0..self.rqs.len() {
            if self.rqs[cpu].need_resched {
                self.schedule(cpu);
            }
        }
        self.in_init = false;
    }

    fn finish(mut self, status: Status) -> SimResult {
        self.sync_all();
        self.lozi_account();
        let rows = self.sampler.rows();
        self.sampler
            .finish(self.now, &self.rqs, self.nr_running_total);
        if self.sampler.rows() > rows {
            self.pelt_trace_sample();
        }
        let pelt = self.pelt_columns();
        let mean_pending = self.pending_sum as f64 / self.events.max(1) as f64;
        let task_cpu: Vec<(u64, u64)> = self.tasks.iter().map(|t| (t.user_ns, t.sys_ns)).collect();
        let mut r = report::build(
            status,
            self.now,
            self.events,
            self.machine,
            &self.tasks,
            &self.rqs,
            &self.counters,
            &self.sd,
            self.sampler,
            self.trace,
            self.sampler_truncated,
            self.workload.metrics_with_tasks(self.now, &task_cpu),
            &|leader| self.workload.process_name(leader),
        );
        if let Some(p) = self.power.as_mut() {
            r.metrics.extend(p.metrics(self.now, self.rqs.len()));
        }
        if let Some((tasks, cpus)) = pelt {
            r.tasks.pelt = Some(tasks);
            r.cpus.pelt = Some(cpus);
        }
        if let Some(rt) = &self.rt {
            r.metrics.extend(rt.metrics());
        }
        r.mean_pending_events = mean_pending;
        r
    }
}

/// The power model's state for a run, or `None` when it is off; refused
/// on a machine without a power table.
fn power_state(machine: &Machine, cost: &CostModel) -> CoreResult<Option<power::PowerState>> {
    if !cost.turbo && !cost.cstates {
        return Ok(None);
    }
    let Some(spec) = crate::power::PowerSpec::for_machine(machine) else {
        let param = if cost.turbo { "turbo" } else { "cstates" };
        return Err(CoreError::invalid(
            param,
            "True",
            format!(
                "False on machine {:?}: the power model needs a machine preset whose \
                 processor it knows ({})",
                machine.name,
                crate::power::presets_with_power().join(", ")
            ),
        ));
    };
    Ok(Some(power::PowerState::new(
        machine,
        spec,
        cost.turbo,
        cost.cstates,
    )))
}

impl Sim<'_> {
    /// `cpu` leaves idle (`schedule()` picked a task): back to C0.
    pub(crate) fn power_idle_exit(&mut self, cpu: usize) {
        if let Some(p) = self.power.as_mut() {
            let changed = p.exit_idle(cpu, self.now);
            self.retime(cpu, changed);
        }
    }

    /// `cpu` goes idle: the governor picks its C-state.
    pub(crate) fn power_idle_enter(&mut self, cpu: usize) {
        if let Some(p) = self.power.as_mut() {
            let changed = p.enter_idle(cpu, self.now);
            self.retime(cpu, changed);
        }
    }

    /// The exit latency a wake-up of idle `cpu` waits (0 unless the C-state
    /// model is on).
    pub(crate) fn idle_exit_delay(&mut self, cpu: usize) -> u64 {
        match self.power.as_mut() {
            Some(p) if self.rqs[cpu].cfs.curr.is_none() => p.exit_delay(cpu, self.now),
            _ => 0,
        }
    }

    /// A package's frequency changes to `mhz`: the running bursts of its
    /// CPUs are accounted at the old frequency, then re-timed at the new.
    fn retime(&mut self, cpu: usize, mhz: Option<u32>) {
        let Some(mhz) = mhz else { return };
        let (pkg, turbo) = match &self.power {
            Some(p) => (p.pkg_of(cpu), p.turbo),
            None => return,
        };
        let w = self.machine.cores_per_socket as usize * self.machine.threads_per_core as usize;
        let cpus = pkg * w..(pkg + 1) * w;
        if turbo {
            for c in cpus.clone() {
                self.rq_sync(c);
            }
        }
        if let Some(p) = self.power.as_mut() {
            p.apply_mhz(cpu, mhz);
        }
        if turbo {
            for c in cpus {
                self.rearm(c);
            }
        }
    }
}
