//! The scheduler model, after `kernel/sched/`, in the kernel's rooms:
//! - here: the scheduler's state (`Sched`), the runqueue (`rq`) and the
//!   task (`task`: ids, state, enqueue/dequeue flags), together the
//!   analogue of `sched.h`; the core entry points the engine calls
//!   (`core`); PELT (`pelt`); CPU bitsets (`cpumask`); the kinds of
//!   scheduler overhead (`overhead`); the runtime side of the power model
//!   (`power_state`: C-states and turbo); the hooks through which the
//!   scheduler posts its events (`hooks`);
//! - `fair`: the fair class — CFS (`fair`), the EEVDF pick (`fair::eevdf`,
//!   6.6+), the runqueue's ordered timeline and EEVDF's minima
//!   (`timeline`, `minset`), weights, `rq->cfs_tasks` (`tasklist`) and
//!   wake-up placement (`wakeup`);
//! - `balance`: load balancing — the shared `load_balance()` loop, a pass's
//!   state (`env`), `find_busiest_group()` of 2.6.36–5.4 (`fbg_v3`) and of
//!   5.5+ (`fbg_v55`), the 5.16–6.18 newidle balance (`newidle`), the NOHZ
//!   idle balancer (`nohz`), Alex Shi's 2013 power policies (`power`, never
//!   merged), running sums per sched group (`sg_sums`) and the domains
//!   (`domains`, `kernel/sched/topology.c`);
//! - `rt`: the RT class — its `rt_rq`s and entry points (`rt::task`) and
//!   the pull with its push IPIs (`rt::push`);
//! - `group`: task groups and CFS bandwidth (`group::bandwidth`);
//! - `stats`: CPU-time accounting (`cputime`), scheduling delays
//!   (`latency`) and the balancer and PELT tracepoints (`trace_hooks`).
//!
//! No two rooms import each other in a circle
//! (`scripts/dev/check_module_cycles.py`).
//!
//! # The scheduler and the engine
//!
//! All of the scheduler's state is one struct, `Sched`: runqueues, tasks
//! and their sched entities, the domains, PELT, NOHZ, the RT class, the
//! wake-up state, the counters, the tracepoints' trace and the clock it
//! reads (`now`, set by the engine before each event). The scheduler's code
//! is `impl Sched` blocks in the modules here. The engine (`engine::Sim`)
//! owns a `Sched` beside the event loop's own state (the workload, its RNG
//! streams, the sampler, the watchdog, the options, the event counters) and
//! calls its entry points for each event.
//!
//! The scheduler asks for future events — a reschedule IPI, a sleeping
//! task's hrtimer, the tick, the stopper, an RT push irq_work, the RT period
//! timer, the NOHZ kick, a burst's end — only through the named hooks of
//! [`hooks`], each named after the kernel function it stands for. The
//! scheduler declares these events in `hooks`; the event queue
//! (`src/queue.rs`) lives behind the hooks (`hooks::Events`, the field
//! `Sched::events`): the engine pops it, keeping its own two timers beside
//! it, and no file under `src/sched/` other than `hooks.rs` touches it and
//! none uses the engine (`scripts/dev/check-binding-boundary.sh` checks
//! this). Nothing here knows the workload interface: the
//! system-call layer that interprets a workload's actions is
//! `engine::syscall`. A test builds a scheduler without a workload or an
//! engine with `Sched::for_test`.

pub mod balance;
pub mod core;
pub mod cpumask;
pub mod fair;
pub mod group;
pub mod hooks;
pub mod overhead;
pub mod pelt;
pub(crate) mod power_state;
pub mod rq;
pub mod rt;
pub mod stats;
pub mod task;

#[cfg(test)]
mod core_tests;

use crate::cost::CostModel;
use crate::error::{CoreError, CoreResult};
use crate::kernel::Kernel;
use crate::sched::balance::domains::Domain;
use crate::topology::Machine;
use crate::trace::Trace;
use fair::tasklist::TaskLinks;
use fair::{FairParams, SchedEntity};
use rq::Rq;
use task::Task;
use task::TaskId;

/// Scheduler-wide counters that are not per CPU or per task.
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

/// The scheduler's state (see the module comment).
pub(crate) struct Sched<'a> {
    /// The clock: the instant of the event being handled (the engine sets
    /// it before each event).
    pub(crate) now: u64,
    pub(crate) machine: &'a Machine,
    pub(crate) kernel: &'a Kernel,
    pub(crate) cost: &'a CostModel,
    pub(crate) fair: FairParams,
    /// The tick period, 10^9 / HZ ns.
    pub(crate) tick_ns: u64,
    /// The event queue, behind the hooks (`hooks`).
    pub(crate) events: hooks::Events,
    pub(crate) tasks: Vec<Task>,
    pub(crate) ses: Vec<SchedEntity>,
    /// Each task's `se.group_node`: the links of the runqueues'
    /// `rq->cfs_tasks` lists (`Rq::bal.cfs_tasks`).
    pub(crate) group_nodes: TaskLinks,
    pub(crate) rqs: Vec<Rq>,
    pub(crate) trace: Option<Trace>,
    /// Per-task scheduling delays (`RunOptions::latency`), no trace needed.
    pub(crate) latency: Option<stats::latency::Latency>,
    pub(crate) counters: Counters,
    pub(crate) nr_running_total: usize,
    pub(crate) pending_timers: usize,
    /// The workload's `init` is running: wake-ups send no IPI (every CPU
    /// reschedules once `init` is done).
    pub(crate) in_init: bool,
    /// A wake-up is going by the target's wake list (`ttwu_queue_wakelist()`,
    /// Kernel field `ttwu_queue`): its function-call IPI is counted,
    /// so the reschedule it causes sends no reschedule IPI.
    pub(crate) wakelist_ipi: bool,
    /// Each CPU's sched domains, lowest level first.
    pub(crate) sd: Vec<Vec<Domain>>,
    /// PELT signals (`None` unless `Kernel::pelt` is on).
    pub(crate) pelt: Option<pelt::PeltState>,
    /// The power model's state (`None` unless `CostModel::turbo` or
    /// `CostModel::cstates` is on).
    pub(crate) power: Option<power_state::PowerState>,
    /// 3.8 PELT (`Kernel::pelt = "v3.8"`, or a power `balance_policy`).
    pub(crate) pelt38: Option<pelt::PeltV38State>,
    /// 4.x–6.x wake-up placement state (wakee flips, recent_used_cpu, LLC hints).
    pub(crate) wake: fair::wakeup::WakeState,
    /// The balancer's state beyond each runqueue's (`balance::BalanceState`).
    pub(crate) balance: balance::BalanceState,
    /// The RT class's root domain and counters (`rt::RtRoot`).
    pub(crate) rt_root: rt::RtRoot,
    /// The accounting the engine's watchdog and the Lozi metrics read
    /// (`stats::Accounting`).
    pub(crate) acct: stats::Accounting,
    /// Task groups and their bandwidth (`None` unless the run defines
    /// groups, so a run without any takes no group step).
    pub(crate) groups: Option<group::TaskGroups>,
    /// The task whose burst just ended (a return to user space) while the
    /// engine reschedules its CPU (`sched::group::bandwidth`, 6.18 throttling).
    pub(crate) boundary: Option<TaskId>,
}

impl<'a> Sched<'a> {
    /// The scheduler of a run on `machine` under `kernel` and `cost`,
    /// every CPU idle and no task yet: the machine's domains (polling
    /// `cancel` while they are built: `Err(CoreError::Cancelled)` when it
    /// returns true), the per-CPU streams from `seed`, a trace
    /// of at most `trace_limit` rows. Refuses the power model on a machine
    /// without a power table. The caller has validated `kernel` and `cost`.
    pub(crate) fn new(
        machine: &'a Machine,
        kernel: &'a Kernel,
        cost: &'a CostModel,
        seed: u64,
        trace_limit: Option<usize>,
        cancel: &dyn Fn() -> bool,
    ) -> CoreResult<Self> {
        let n = machine.nr_cpus();
        let power = power_state(machine, cost)?;
        let sd = crate::sched::balance::domains::build_cancellable(machine, kernel, cancel)
            .ok_or(CoreError::Cancelled)?;
        let fair = FairParams::new(kernel, n);
        let rqs = (0..n)
            .map(|cpu| {
                let mut rq = Rq::new(kernel.migration_cost_ns, sd[cpu].len());
                rq.cfs.eevdf = fair.eevdf;
                rq
            })
            .collect();
        Ok(Sched {
            now: 0,
            machine,
            kernel,
            cost,
            fair,
            tick_ns: 1_000_000_000 / kernel.hz as u64,
            events: hooks::Events::new(),
            tasks: Vec::new(),
            ses: Vec::new(),
            group_nodes: TaskLinks::default(),
            rqs,
            trace: trace_limit.map(Trace::new),
            latency: None,
            counters: Counters::default(),
            nr_running_total: 0,
            pending_timers: 0,
            in_init: false,
            wakelist_ipi: false,
            balance: balance::BalanceState {
                cpu_power: crate::sched::balance::domains::cpu_power(machine),
                sg_sums: balance::sg_sums::wanted(n).then(|| {
                    balance::sg_sums::SgSums::new(&sd, balance::sg_sums::groups_wanted(kernel))
                }),
                nohz: balance::nohz::Nohz::new(n),
                lb: Default::default(),
                rd_overload: false,
                sched_rng: if kernel.newidle_random {
                    balance::newidle::sched_rng_streams(seed, n)
                } else {
                    Vec::new()
                },
            },
            sd,
            pelt: (kernel.pelt == crate::kernel::Pelt::V5_7).then(|| pelt::PeltState::new(n)),
            pelt38: (kernel.pelt == crate::kernel::Pelt::V3_8
                || kernel.balance_policy != crate::kernel::BalancePolicy::Performance)
                .then(|| pelt::PeltV38State::new(n)),
            wake: fair::wakeup::WakeState::new(machine),
            power,
            rt_root: rt::RtRoot::new(),
            acct: stats::Accounting::new(n),
            groups: None,
            boundary: None,
        })
    }

    /// A scheduler for a unit test, without a workload or an engine: every
    /// CPU idle, no task, seed 1, no trace. Tasks are added
    /// with `sched_fork()` and `wake_up_new_task()`; the events the
    /// scheduler asks for wait in `events` (`hooks`).
    #[cfg(test)]
    pub(crate) fn for_test(machine: &'a Machine, kernel: &'a Kernel, cost: &'a CostModel) -> Self {
        Self::new(machine, kernel, cost, 1, None, &|| false)
            .expect("a machine, kernel and costs a test can run")
    }
}

/// The power model's state for a run, or `None` when it is off; refused
/// on a machine without a power table.
fn power_state(machine: &Machine, cost: &CostModel) -> CoreResult<Option<power_state::PowerState>> {
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
    Ok(Some(power_state::PowerState::new(
        machine,
        spec,
        cost.turbo,
        cost.cstates,
    )))
}
