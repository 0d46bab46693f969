//! Task groups and CFS bandwidth in whole runs (`sched::group`,
//! `sched::group::bandwidth`): shares between groups, a throttled group runs
//! nothing until its period timer, the burst bound, CPU-time conservation
//! and every preset with groups (debug builds check the arithmetic).

use crate::cost::CostModel;
use crate::kernel::{Kernel, KERNEL_PRESETS};
use crate::result::{SimResult, Status};
use crate::sched::group::GroupSpec;
use crate::topology::Machine;
use crate::trace::TraceKind;
use crate::workload::attrs::{TaskAttrs, WithTasks};
use crate::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use crate::workload::mix::Mix;
use crate::workload::spinners::{Dist, SpinnerTask, Spinners};
use crate::workload::Workload;
use crate::{simulate, RunOptions};

fn group(name: &str, shares: u64, quota_ms: Option<u64>, burst_ms: u64) -> GroupSpec {
    GroupSpec {
        name: name.into(),
        parent: None,
        shares,
        quota_ns: quota_ms.map(|q| q * 1_000_000),
        period_ns: 100_000_000,
        burst_ns: burst_ms * 1_000_000,
        idle: false,
    }
}

fn spinners(
    n: usize,
    cpus: Option<Vec<u32>>,
    run_ns: Option<u64>,
    sleep_ns: Option<u64>,
) -> Box<dyn Workload> {
    let tasks = (0..n)
        .map(|_| SpinnerTask {
            nice: 0,
            run_ns,
            sleep_ns,
            cpus: cpus.clone(),
            yields: false,
        })
        .collect();
    Box::new(Spinners::new(tasks, Dist::Fixed).unwrap())
}

fn in_group(w: Box<dyn Workload>, g: &str) -> Box<dyn Workload> {
    let a = TaskAttrs {
        group: Some(g.into()),
        ..Default::default()
    };
    Box::new(WithTasks::new(w, vec![a]).unwrap())
}

fn run(
    m: &Machine,
    k: &Kernel,
    w: Box<dyn Workload>,
    groups: Vec<GroupSpec>,
    secs: Option<f64>,
    trace: bool,
) -> SimResult {
    let opts = RunOptions {
        seed: 7,
        duration_ns: secs.map(|s| (s * 1e9) as u64),
        trace_limit: trace.then_some(1_000_000),
        groups,
        ..RunOptions::default()
    };
    simulate(m, k, &CostModel::default(), w, opts, &|| false).unwrap()
}

fn metric(r: &SimResult, name: &str) -> f64 {
    r.metric(name).unwrap_or_else(|| panic!("no metric {name}"))
}

#[test]
fn shares_split_one_cpu_between_groups() {
    let m = Machine::new(1, 1, 2, None, None).unwrap();
    for (a, b, want) in [(1024, 256, 0.8), (1024, 1024, 0.5), (3072, 1024, 0.75)] {
        let w = Mix::new(vec![
            (
                "a".into(),
                in_group(spinners(2, Some(vec![0]), None, None), "a"),
            ),
            (
                "b".into(),
                in_group(spinners(3, Some(vec![0]), None, None), "b"),
            ),
        ])
        .unwrap();
        let groups = vec![group("a", a, None, 0), group("b", b, None, 0)];
        let r = run(&m, &Kernel::v6_18(), Box::new(w), groups, Some(2.0), false);
        let ca = metric(&r, "group.a.cpu_s");
        let cb = metric(&r, "group.b.cpu_s");
        let split = ca / (ca + cb);
        assert!(
            (split - want).abs() < 0.01,
            "{a}:{b}: {split} (want {want})"
        );
    }
}

#[test]
fn a_throttled_group_runs_again_only_at_its_period_timer() {
    // One spinner, alone on one CPU, 10 ms per 100 ms: each time it is
    // switched in again after a throttle, it is at a period boundary, so
    // the gaps between those switch-ins are whole periods.
    let m = Machine::new(1, 1, 1, None, None).unwrap();
    let w = in_group(spinners(1, None, None, None), "q");
    let r = run(
        &m,
        &Kernel::v6_18(),
        w,
        vec![group("q", 1024, Some(10), 0)],
        Some(1.0),
        true,
    );
    let tr = r.trace.as_ref().unwrap();
    let ins: Vec<u64> = (0..tr.time_ns.len())
        .filter(|&i| tr.kind[i] == TraceKind::Switch as u8 && tr.b[i] == 1)
        .map(|i| tr.time_ns[i])
        .collect();
    assert!(ins.len() >= 9, "{ins:?}");
    for w in ins[1..].windows(2) {
        let gap = w[1] - w[0];
        assert_eq!(gap % 100_000_000, 0, "switch-ins {} and {} ns", w[0], w[1]);
    }
    // And it ran about its quota per period: 10 ms and at most a tick more.
    let cpu = metric(&r, "group.q.cpu_s");
    let periods = metric(&r, "group.q.nr_periods");
    assert!(
        cpu <= 0.010 * (periods + 1.0) + 0.004,
        "{cpu} s in {periods} periods"
    );
    assert!(
        cpu >= 0.010 * periods - 0.004,
        "{cpu} s in {periods} periods"
    );
    // Every period but perhaps the first (its phase is random) throttles.
    assert!(metric(&r, "group.q.nr_throttled") >= periods - 1.0);
}

#[test]
fn a_burst_carries_at_most_cfs_burst_us_over() {
    // A task that runs 5 ms every 100 ms for a while leaves quota unused;
    // with a burst the pool may grow to quota + burst, no more.
    let m = Machine::new(1, 1, 1, None, None).unwrap();
    for burst in [0u64, 20, 30] {
        // 2 s: one spinner at 30 ms per 100 ms plus a burst of `burst` ms.
        let w = in_group(spinners(1, None, None, None), "b");
        let r = run(
            &m,
            &Kernel::v6_18(),
            w,
            vec![group("b", 1024, Some(30), burst)],
            Some(2.0),
            false,
        );
        let cpu = metric(&r, "group.b.cpu_s");
        let periods = metric(&r, "group.b.nr_periods");
        // The pool starts at the quota: total ≤ quota·(periods + 1) + the
        // burst once (the spinner drains it in the first periods) + a tick.
        let most = 0.030 * (periods + 1.0) + burst as f64 / 1000.0 + 0.004;
        assert!(cpu <= most, "burst {burst}: {cpu} > {most}");
        // A spinner leaves quota unused only in the first, partial period
        // (the timer's phase): at most one burst, none without a burst.
        let bursts = metric(&r, "group.b.nr_bursts");
        assert!(
            bursts <= if burst == 0 { 0.0 } else { 1.0 },
            "burst {burst}: {bursts}"
        );
    }
    // A bursty task: 60 ms of work, then 300 ms asleep, quota 30 ms, burst
    // 30 ms. Idle periods refill the pool to quota + burst = 60 ms, which a
    // 60 ms burst then draws: counted in nr_bursts / burst_s, never more
    // than the burst per period.
    let w = in_group(spinners(1, None, Some(60_000_000), Some(300_000_000)), "b");
    let r = run(
        &m,
        &Kernel::v6_18(),
        w,
        vec![group("b", 1024, Some(30), 30)],
        Some(3.0),
        false,
    );
    let bursts = metric(&r, "group.b.nr_bursts");
    let burst_s = metric(&r, "group.b.burst_s");
    assert!(bursts > 0.0, "no burst drawn");
    assert!(
        burst_s <= bursts * 0.030 + 1e-9,
        "{burst_s} s over {bursts} bursts"
    );
}

#[test]
fn cpu_time_is_conserved_with_groups() {
    let m = Machine::preset("vm-2").unwrap();
    let w = Mix::new(vec![
        (
            "h".into(),
            in_group(
                Box::new(
                    Hackbench::new(HackbenchParams::perf(2, 50, Ipc::Socket, Mode::Process))
                        .unwrap(),
                ),
                "c",
            ),
        ),
        (
            "s".into(),
            in_group(spinners(2, None, Some(300_000), Some(200_000)), "d"),
        ),
    ])
    .unwrap();
    let groups = vec![group("c", 1024, Some(20), 0), group("d", 512, None, 0)];
    let r = run(&m, &Kernel::v6_18(), Box::new(w), groups, None, false);
    assert_eq!(r.status, Status::Ok, "{:?}", r.status);
    let elapsed = r.elapsed_ns as f64 / 1e9;
    for c in 0..m.nr_cpus() {
        let total = r.cpus.user_s[c] + r.cpus.sys_s[c] + r.cpus.idle_s[c];
        assert!(
            (total - elapsed).abs() < 1e-9,
            "cpu {c}: {total} vs {elapsed}"
        );
    }
    // The groups' CPU time is their tasks' (every task is in one).
    let tasks: f64 = r.tasks.cpu_s.iter().sum();
    let groups = metric(&r, "group.c.cpu_s") + metric(&r, "group.d.cpu_s");
    assert!((tasks - groups).abs() < 1e-9, "{tasks} vs {groups}");
    // The mix ended with hackbench, the spinners stopped then.
    assert!(metric(&r, "h.elapsed_s") > 0.0);
    assert!(metric(&r, "group.c.nr_throttled") > 0.0);
}

#[test]
fn every_preset_runs_groups_with_limits() {
    let m = Machine::preset("vm-2").unwrap();
    for name in KERNEL_PRESETS {
        let k = Kernel::preset(name).unwrap();
        for throttle in ["cfs_rq", "task"] {
            let mut k = k.clone();
            use crate::config::Fields;
            k.set("cfs_throttle", &crate::config::Value::Str(throttle.into()))
                .unwrap();
            let mut c = group("c", 1024, Some(15), 5);
            c.parent = Some("p".into());
            let groups = vec![group("p", 2048, Some(40), 0), c];
            let w = in_group(
                Box::new(
                    Hackbench::new(HackbenchParams::perf(2, 40, Ipc::Pipe, Mode::Thread)).unwrap(),
                ),
                "c",
            );
            let r = run(&m, &k, w, groups, None, false);
            assert_eq!(r.status, Status::Ok, "{name} {throttle}: {:?}", r.status);
            assert!(
                metric(&r, "group.c.nr_throttled") > 0.0,
                "{name} {throttle}"
            );
        }
    }
}

#[test]
fn groups_are_deterministic_and_free_when_absent() {
    let m = Machine::preset("vm-2").unwrap();
    let mk = || {
        Box::new(Hackbench::new(HackbenchParams::perf(2, 40, Ipc::Socket, Mode::Thread)).unwrap())
            as Box<dyn Workload>
    };
    let a = run(
        &m,
        &Kernel::v6_18(),
        in_group(mk(), "c"),
        vec![group("c", 1024, Some(20), 0)],
        None,
        false,
    );
    let b = run(
        &m,
        &Kernel::v6_18(),
        in_group(mk(), "c"),
        vec![group("c", 1024, Some(20), 0)],
        None,
        false,
    );
    assert_eq!(a.metrics, b.metrics);
    // A group without a limit holding every task changes nothing but adds
    // its counters: one group on each CPU weighs what its tasks weigh.
    let plain = run(&m, &Kernel::v6_18(), mk(), vec![], None, false);
    assert!(plain.metrics.iter().all(|(n, _)| !n.starts_with("group.")));
}
