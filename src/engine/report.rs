//! Building a run's [`SimResult`] from the engine's and the scheduler's
//! state at the end of the run: per-task and per-CPU tables, vmstat rows,
//! the CPU timeline, `/proc/schedstat`'s domain lines and the scalar metrics.

use super::metrics::{CoreCtx, CORE, TRACE};
use super::sampler::Sampler;
use crate::result::{CpuTable, SchedstatTable, SimResult, Status, TaskTable, VmstatTable};
use crate::sched::balance::domains::Domain;
use crate::sched::balance::IDLE_TYPE_NAMES;
use crate::sched::group::TaskGroups;
use crate::sched::rq::{DomainStats, Rq};
use crate::sched::task::{Task, TaskState};
use crate::sched::Counters;
use crate::topology::Machine;
use crate::trace::Trace;
use ndarray::Array2;

fn s(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The task table's `tgid` and `process` columns: tasks sharing an address
/// space (`mm`) are threads of one process (`CLONE_VM | CLONE_THREAD`),
/// whose tgid is the pid of its first task (the thread-group leader) and
/// whose name `process_name` gives from the leader's.
fn process_columns(tasks: &[Task], process_name: &dyn Fn(&str) -> String, tt: &mut TaskTable) {
    let mut leaders: std::collections::HashMap<u32, (i64, String)> = Default::default();
    for (i, t) in tasks.iter().enumerate() {
        let (tgid, name) = leaders
            .entry(t.mm)
            .or_insert_with(|| (i as i64 + 1, process_name(&t.name)));
        tt.tgid.push(*tgid);
        tt.process.push(name.clone());
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    status: Status,
    elapsed_ns: u64,
    events: u64,
    machine: &Machine,
    tasks: &[Task],
    rqs: &[Rq],
    counters: &Counters,
    sd: &[Vec<Domain>],
    sampler: Sampler,
    trace: Option<Trace>,
    vmstat_truncated: bool,
    workload_metrics: Vec<(String, f64)>,
    process_name: &dyn Fn(&str) -> String,
) -> SimResult {
    let mut tt = TaskTable::default();
    for (i, t) in tasks.iter().enumerate() {
        tt.task.push(i as i64 + 1);
        tt.name.push(t.name.clone());
        tt.nice.push(t.nice as i64);
        tt.cpu.push(t.cpu as i64);
        tt.cpu_s.push(s(t.user_ns + t.sys_ns));
        tt.user_s.push(s(t.user_ns));
        tt.sys_s.push(s(t.sys_ns));
        tt.wait_s.push(s(t.wait_ns));
        tt.voluntary_cs.push(t.nvcsw as i64);
        tt.involuntary_cs.push(t.nivcsw as i64);
        tt.migrations.push(t.migrations as i64);
        tt.wakeups.push(t.wakeups as i64);
        tt.exited.push(t.state == TaskState::Exited);
        tt.role.push(t.role);
        tt.prio.push(t.prio as i64);
    }
    process_columns(tasks, process_name, &mut tt);
    let mut ct = CpuTable::default();
    for (i, rq) in rqs.iter().enumerate() {
        let topo = machine.cpu(i);
        ct.cpu.push(i as i64);
        ct.socket.push(topo.socket as i64);
        ct.core.push(topo.core as i64);
        ct.thread.push(topo.thread as i64);
        ct.llc.push(topo.llc as i64);
        ct.node.push(topo.node as i64);
        ct.user_s.push(s(rq.user_ns));
        ct.sys_s.push(s(rq.sys_ns));
        ct.idle_s.push(s(rq.idle_ns));
        ct.context_switches.push(rq.nr_switches as i64);
        ct.ticks.push(rq.ticks as i64);
        ct.interrupts.push(rq.irqs as i64);
    }
    let sm = sampler;
    let mut vm = VmstatTable::default();
    for k in 0..sm.rows() {
        let len = sm.len_ns[k] as f64;
        let total = (sm.user_ns[k] + sm.sys_ns[k] + sm.idle_ns[k]) as f64;
        vm.time_s.push(s(sm.time_ns[k]));
        vm.interval_s.push(len / 1e9);
        vm.r.push(sm.r[k] as i64);
        vm.in_.push(sm.irqs[k] as f64 / (len / 1e9));
        vm.cs.push(sm.cs[k] as f64 / (len / 1e9));
        vm.us.push(100.0 * sm.user_ns[k] as f64 / total);
        vm.sy.push(100.0 * sm.sys_ns[k] as f64 / total);
        vm.id.push(100.0 * sm.idle_ns[k] as f64 / total);
    }
    let (rows, ncpus) = (sm.rows(), sm.ncpus());
    let runqueue = cpus_by_interval(
        rows,
        ncpus,
        sm.nr_running.iter().map(|&n| i64::from(n)).collect(),
    );
    let timeline = cpus_by_interval(rows, ncpus, sm.busy);

    let schedstat = schedstat_table(rqs, sd);
    // The workload's tasks: not the RT kernel threads (`Task::kthread`).
    let task_clock: u64 = tasks
        .iter()
        .filter(|t| !t.kthread)
        .map(|t| t.user_ns + t.sys_ns)
        .sum();
    let elapsed = s(elapsed_ns);
    // `elapsed_s` is what the benchmark itself reports when it does (e.g.
    // perf's "Total time"), else the simulated time.
    let bench_elapsed = workload_metrics
        .iter()
        .find(|(k, _)| k == "elapsed_s")
        .map_or(elapsed, |(_, v)| *v);
    let ctx = CoreCtx {
        bench_elapsed,
        elapsed_ns,
        task_clock_ns: task_clock,
        tasks,
        rqs,
        counters,
        events,
        vmstat_truncated,
    };
    let mut metrics: Vec<(String, f64)> = CORE
        .iter()
        .map(|m| (m.doc.name.to_string(), (m.value)(&ctx)))
        .collect();
    if let Some(tr) = &trace {
        let [rows, dropped] = TRACE;
        metrics.push((rows.name.into(), tr.len() as f64));
        metrics.push((dropped.name.into(), tr.dropped as f64));
    }
    for (k, v) in workload_metrics {
        if k != "elapsed_s" {
            metrics.push((k, v));
        }
    }
    SimResult {
        status,
        elapsed_ns,
        metrics,
        tasks: tt,
        cpus: ct,
        vmstat: vm,
        timeline,
        runqueue,
        schedstat,
        trace,
        latency: None,
        mean_pending_events: 0.0,
    }
}

/// The sampler's row-major (interval, cpu) values as a CPUs × intervals
/// array.
fn cpus_by_interval<T: Clone>(rows: usize, ncpus: usize, values: Vec<T>) -> Array2<T> {
    Array2::from_shape_vec((rows, ncpus), values)
        .expect("sampler rows × cpus")
        .reversed_axes()
        .as_standard_layout()
        .to_owned()
}

fn schedstat_table(rqs: &[Rq], sd: &[Vec<Domain>]) -> SchedstatTable {
    type F = fn(&DomainStats) -> &[u64; 3];
    let per_idle: [(&str, F); 8] = [
        ("lb_count", |d| &d.lb_count),
        ("lb_balanced", |d| &d.lb_balanced),
        ("lb_failed", |d| &d.lb_failed),
        ("lb_imbalance", |d| &d.lb_imbalance),
        ("lb_gained", |d| &d.lb_gained),
        ("lb_hot_gained", |d| &d.lb_hot_gained),
        ("lb_nobusyq", |d| &d.lb_nobusyq),
        ("lb_nobusyg", |d| &d.lb_nobusyg),
    ];
    type G = fn(&DomainStats) -> u64;
    let single: [(&str, G); 6] = [
        ("alb_count", |d| d.alb_count),
        ("alb_failed", |d| d.alb_failed),
        ("alb_pushed", |d| d.alb_pushed),
        ("ttwu_wake_remote", |d| d.ttwu_wake_remote),
        ("ttwu_move_affine", |d| d.ttwu_move_affine),
        ("ttwu_move_balance", |d| d.ttwu_move_balance),
    ];
    let mut t = SchedstatTable::default();
    let mut cols: Vec<(String, Vec<i64>)> = Vec::new();
    for (name, _) in &per_idle {
        for it in IDLE_TYPE_NAMES {
            cols.push((format!("{name}_{it}"), Vec::new()));
        }
    }
    for (name, _) in &single {
        cols.push((name.to_string(), Vec::new()));
    }
    for (cpu, rq) in rqs.iter().enumerate() {
        for (lvl, st) in rq.bal.stats.iter().enumerate() {
            t.cpu.push(cpu as i64);
            t.domain.push(lvl as i64);
            t.level.push(sd[cpu][lvl].name.to_string());
            t.span_weight.push(sd[cpu][lvl].span.len() as i64);
            let mut k = 0;
            for (_, f) in &per_idle {
                for v in f(st) {
                    cols[k].1.push(*v as i64);
                    k += 1;
                }
            }
            for (_, g) in &single {
                cols[k].1.push(g(st) as i64);
                k += 1;
            }
        }
    }
    t.counters = cols;
    t
}

/// The per-group metrics, `group.<name>.<counter>`: CPU time and runqueue
/// wait of the group's tasks and its descendants', and the group's
/// `cpu.stat` counters (`nr_periods`, `nr_throttled`, `throttled_s` — the
/// throttled time of its runqueues summed over CPUs, the throttles that
/// ended —, `nr_bursts`, `burst_s`; 0 without a quota).
pub(crate) fn group_metrics(tg: &TaskGroups, tasks: &[Task]) -> Vec<(String, f64)> {
    let n = tg.specs.len();
    let mut cpu = vec![0u64; n];
    let mut wait = vec![0u64; n];
    for (i, t) in tasks.iter().enumerate() {
        if let Some(g) = tg.task_group.get(i).copied().flatten() {
            for x in tg.chain(g as usize) {
                cpu[x] += t.user_ns + t.sys_ns;
                wait[x] += t.wait_ns;
            }
        }
    }
    let mut out = Vec::with_capacity(n * 7);
    for g in 0..n {
        let name = &tg.names[g];
        let b = tg.bw[g].clone().unwrap_or_default();
        for (k, v) in [
            ("cpu_s", cpu[g] as f64 / 1e9),
            ("wait_s", wait[g] as f64 / 1e9),
            ("nr_periods", b.nr_periods as f64),
            ("nr_throttled", b.nr_throttled as f64),
            ("throttled_s", b.throttled_time as f64 / 1e9),
            ("nr_bursts", b.nr_burst as f64),
            ("burst_s", b.burst_time as f64 / 1e9),
        ] {
            out.push((format!("group.{name}.{k}"), v));
        }
    }
    out
}
