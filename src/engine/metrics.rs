//! The engine's metrics, declared once: each with its documentation and
//! the function that computes it at the end of a run (`report::build`
//! reports them in this order), and the trace's.

use crate::config::{metric_table, MetricDoc};
use crate::sched::rq::Rq;
use crate::sched::task::Task;
use crate::sched::Counters;

/// What the engine's metrics are computed from at the end of a run.
pub(crate) struct CoreCtx<'a> {
    /// The benchmark's own elapsed time where it reports one, else the
    /// simulated time (s).
    pub bench_elapsed: f64,
    pub elapsed_ns: u64,
    pub task_clock_ns: u64,
    pub tasks: &'a [Task],
    pub rqs: &'a [Rq],
    pub counters: &'a Counters,
    pub events: u64,
    pub vmstat_truncated: bool,
}

impl CoreCtx<'_> {
    fn elapsed(&self) -> f64 {
        s(self.elapsed_ns)
    }

    fn sum_rq(&self, f: fn(&Rq) -> u64) -> u64 {
        self.rqs.iter().map(f).sum()
    }

    /// `f` summed over the workload's tasks (the RT kernel threads of
    /// `rt_kthreads` are the machine's, as `perf stat` of a benchmark and
    /// `/usr/bin/time` leave them out).
    fn sum_task(&self, f: fn(&Task) -> u64) -> u64 {
        self.tasks.iter().filter(|t| !t.kthread).map(f).sum()
    }
}

fn s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// An engine metric with the function that computes it.
pub(crate) struct CoreMetric {
    pub doc: MetricDoc,
    pub value: fn(&CoreCtx<'_>) -> f64,
}

/// The engine's metrics, in the order every run reports them.
pub(crate) const CORE: &[CoreMetric] = metric_table! { CoreMetric;
    "elapsed_s", "s",
        "What the benchmark itself reports (e.g. perf bench's Total time); the simulated time for a workload that reports none",
        "the benchmark's output" => |c| c.bench_elapsed;
    "sim_time_s", "s", "Simulated time from 0 to the end of the run",
        "wall-clock time" => |c| c.elapsed();
    "task_clock_s", "s", "CPU time of the workload's tasks (user + system)",
        "perf stat task-clock" => |c| s(c.task_clock_ns);
    "cpus_utilized", "CPUs", "task_clock_s / sim_time_s",
        "perf stat 'CPUs utilized'" => |c| if c.elapsed_ns > 0 { s(c.task_clock_ns) / c.elapsed() } else { 0.0 };
    "context_switches", "count",
        "Switch-outs of the workload's tasks (voluntary_cs + involuntary_cs)",
        "perf stat context-switches (nvcsw + nivcsw)" => |c| c.sum_task(|t| t.nvcsw + t.nivcsw) as f64;
    "rq_switches", "count", "Every switch on every CPU, to and from idle too",
        "rq->nr_switches, vmstat cs" => |c| c.sum_rq(|r| r.nr_switches) as f64;
    "cpu_migrations", "count", "Tasks moved to another CPU (wake-up placement, balancing, affinity)",
        "perf stat cpu-migrations (sched_migrate_task)" => |c| c.counters.cpu_migrations as f64;
    "voluntary_cs", "count", "Switch-outs of a task that blocked (slept or waited)",
        "/proc/PID/status voluntary_ctxt_switches (nvcsw)" => |c| c.sum_task(|t| t.nvcsw) as f64;
    "involuntary_cs", "count", "Switch-outs of a task still runnable (preemptions and yields)",
        "/proc/PID/status nonvoluntary_ctxt_switches (nivcsw)" => |c| c.sum_task(|t| t.nivcsw) as f64;
    "interrupts", "count", "Ticks, timer interrupts and IPIs, every CPU",
        "vmstat in, /proc/interrupts" => |c| c.sum_rq(|r| r.irqs) as f64;
    "ticks", "count", "Scheduler ticks on busy CPUs (an idle CPU stops its tick: NOHZ)",
        "/proc/interrupts LOC (the tick's share)" => |c| c.sum_rq(|r| r.ticks) as f64;
    "timer_interrupts", "count", "hrtimer interrupts of sleeping tasks' timers",
        "/proc/interrupts LOC (hrtimers)" => |c| c.counters.timer_irqs as f64;
    "resched_ipis", "count", "Reschedule IPIs sent by resched_curr() to another CPU",
        "/proc/interrupts RES" => |c| c.counters.resched_ipis as f64;
    "resched_ipis_idle", "count", "Reschedule IPIs that woke an idle CPU (of resched_ipis)",
        "/proc/interrupts RES on idle CPUs" => |c| c.counters.resched_ipis_idle as f64;
    "function_call_ipis", "count",
        "Function-call IPIs: the 5.8+ NOHZ kick, the RT push irq_work walks, wake-ups through the target's wake list (Kernel field ttwu_queue); no TLB shootdowns",
        "/proc/interrupts CAL" => |c| c.counters.function_call_ipis as f64;
    "wakeups", "count", "Task wake-ups (try_to_wake_up that woke a task)",
        "sched_wakeup events" => |c| c.counters.wakeups as f64;
    "forks", "count", "Tasks forked", "sched_wakeup_new events" => |c| c.counters.forks as f64;
    "yields", "count", "sched_yield() calls", "schedstat yld_count" => |c| c.counters.yields as f64;
    "newidle_balance_calls", "count",
        "Newidle balance passes that ran (past the throttle), one per CPU going idle, whatever the domains walked",
        "kernel/sched/fair.c idle_balance(), later newidle_balance(), sched_balance_newidle() from 6.10" => |c| c.counters.newidle_calls as f64;
    "newidle_balance_skipped", "count", "Newidle balance passes the throttle skipped (avg_idle, max_newidle_lb_cost, NI_RANDOM)",
        "kernel/sched/fair.c newidle_balance() early exits" => |c| c.counters.newidle_skipped as f64;
    "newidle_balance_pulled", "count", "Tasks pulled by newidle passes",
        "schedstat lb_gained (CPU_NEWLY_IDLE)" => |c| c.counters.newidle_pulled as f64;
    "newidle_balance_time_s", "s", "CPU time spent in newidle passes",
        "sd->max_newidle_lb_cost's samples" => |c| s(c.counters.newidle_time_ns);
    "avg_idle_mean_us", "µs", "rq->avg_idle at newidle passes, averaged",
        "rq->avg_idle (/proc/sched_debug)" => |c| if c.counters.newidle_calls > 0 {
            c.counters.avg_idle_sum as f64 / c.counters.newidle_calls as f64 / 1e3
        } else { 0.0 };
    "load_balance_calls", "count", "load_balance() passes of every kind",
        "schedstat lb_count" => |c| c.counters.lb_calls.iter().sum::<u64>() as f64;
    "load_balance_calls_idle", "count", "load_balance() passes from an idle CPU's periodic balance (CPU_IDLE)",
        "schedstat lb_count (CPU_IDLE)" => |c| c.counters.lb_calls[0] as f64;
    "load_balance_calls_busy", "count", "load_balance() passes from a busy CPU's periodic balance (CPU_NOT_IDLE)",
        "schedstat lb_count (CPU_NOT_IDLE)" => |c| c.counters.lb_calls[1] as f64;
    "load_balance_calls_newidle", "count", "load_balance() passes from a CPU going idle (CPU_NEWLY_IDLE)",
        "schedstat lb_count (CPU_NEWLY_IDLE)" => |c| c.counters.lb_calls[2] as f64;
    "tasks_pulled", "count", "Tasks moved by load balancing: load_balance() passes of every kind and active balances",
        "schedstat lb_gained summed over idle types, plus alb_pushed" => |c| c.counters.tasks_pulled as f64;
    "active_balances", "count", "Active balances started: the stopper queued to push a running task off its CPU (whether or not it then moves one)",
        "schedstat alb_count (alb_pushed counts the ones that moved a task)" => |c| c.counters.active_balances as f64;
    "migration_refill_s", "s", "Cache refill charged to migrated tasks",
        "the model's migration cost (no kernel counter)" => |c| s(c.counters.refill_ns);
    "nohz_kicks", "count", "NOHZ idle-balance kicks sent to the idle load balancer",
        "kernel/sched/fair.c kick_ilb()" => |c| c.counters.nohz_kicks as f64;
    "lozi_idle_overloaded_s", "s", "CPU time idle while another CPU had two or more runnable tasks",
        "Lozi et al., 'The Linux scheduler: a decade of wasted cores' (EuroSys 2016)" => |c| s(c.counters.lozi_ns);
    "lozi_fraction", "fraction", "lozi_idle_overloaded_s as a fraction of all CPU time",
        "Lozi et al. (EuroSys 2016)" => |c| if c.elapsed_ns > 0 {
            c.counters.lozi_ns as f64 / (c.elapsed_ns as f64 * c.rqs.len() as f64)
        } else { 0.0 };
    "user_s", "s", "User time, every CPU", "/proc/stat user" => |c| s(c.sum_rq(|r| r.user_ns));
    "sys_s", "s", "System time, every CPU (the workload's system calls and the scheduler's overhead)",
        "/proc/stat system" => |c| s(c.sum_rq(|r| r.sys_ns));
    "idle_s", "s", "Idle time, every CPU", "/proc/stat idle" => |c| s(c.sum_rq(|r| r.idle_ns));
    "wait_s", "s", "Time the workload's tasks were runnable but not running",
        "/proc/PID/schedstat run_delay" => |c| s(c.sum_task(|t| t.wait_ns));
    "events", "count", "Events the model's engine handled (its cost, not the kernel's)",
        "the model" => |c| c.events as f64;
    "vmstat_truncated", "flag",
        "1 when the vmstat tables would pass their memory bound; the last row then covers the rest of the run",
        "the model's limits" => |c| f64::from(u8::from(c.vmstat_truncated));
};

/// The trace's metrics, reported when the run is traced.
pub const TRACE: [MetricDoc; 2] = [
    MetricDoc {
        name: "trace_rows",
        unit: "count",
        meaning: "Rows kept in the trace",
        source: "the ftrace ring buffer's entries",
    },
    MetricDoc {
        name: "trace_dropped",
        unit: "count",
        meaning: "Rows past the trace's row limit, not kept",
        source: "the ftrace ring buffer's overruns",
    },
];
