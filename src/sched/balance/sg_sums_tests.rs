//! The running group sums (`sched::balance::sg_sums`) change no result: whole runs
//! on big machines with the sums and with the groups' CPUs walked as
//! before (`Sched::set_group_sums`) give the same metrics and tables.

use crate::cost::CostModel;
use crate::engine::{RunOptions, Sim};
use crate::kernel::Kernel;
use crate::result::SimResult;
use crate::topology::Machine;
use crate::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use crate::workload::spinners::{Dist, SpinnerTask, Spinners};
use crate::workload::Workload;

fn hackbench(m: &Machine) -> Box<dyn Workload> {
    let groups = (m.nr_cpus() as u32 / 8).max(1);
    let p = HackbenchParams::perf(groups, 2, Ipc::Pipe, Mode::Thread);
    Box::new(Hackbench::new(p).unwrap())
}

/// Sleepers and spinners, some pinned (the pinned scans stay walks).
fn spinners(m: &Machine) -> Box<dyn Workload> {
    let n = m.nr_cpus() as u64;
    let tasks = (0..n + n / 2)
        .map(|i| SpinnerTask {
            nice: (i % 3) as i32 - 1,
            run_ns: (i % 4 != 0).then_some(150_000 + 20_000 * (i % 7)),
            sleep_ns: (i % 4 != 0).then_some(100_000 + 50_000 * (i % 5)),
            cpus: (i % 5 == 0).then(|| (0..n as u32).filter(|c| c % 3 == i as u32 % 3).collect()),
            yields: false,
        })
        .collect();
    Box::new(Spinners::new(tasks, Dist::Exp).unwrap())
}

fn run(m: &Machine, k: &Kernel, w: Box<dyn Workload>, walk: bool) -> SimResult {
    run_for(m, k, w, walk, 100_000_000)
}

fn run_for(
    m: &Machine,
    k: &Kernel,
    w: Box<dyn Workload>,
    walk: bool,
    duration_ns: u64,
) -> SimResult {
    let cost = CostModel::for_machine(m);
    let opts = RunOptions {
        seed: 7,
        duration_ns: Some(duration_ns),
        trace_limit: None,
        sample_interval_ns: 10_000_000,
        max_sample_bytes: crate::limits::MAX_VMSTAT_BYTES,
        latency: false,
        groups: Vec::new(),
    };
    let mut sim = Sim::new(m, k, &cost, w, opts).unwrap();
    sim.sched.set_group_sums(!walk);
    sim.run(&|| false)
}

/// Everything a run reports, as text (`f64`'s `Debug` is exact).
fn outcome(r: &SimResult) -> String {
    format!(
        "{:?} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?}",
        r.status,
        r.elapsed_ns,
        r.metrics,
        r.tasks,
        r.cpus,
        r.schedstat,
        r.vmstat,
        r.timeline,
        r.runqueue
    )
}

#[test]
fn group_sums_give_the_walks_results_on_big_machines() {
    let machines = [
        Machine::new(2, 28, 2, None, Some(2)).unwrap(),
        Machine::new(4, 16, 2, None, Some(4)).unwrap(),
        Machine::new(8, 8, 2, None, Some(8)).unwrap(),
        Machine::new(2, 32, 1, Some(8), Some(2)).unwrap(),
    ];
    let kernels = ["v2.6.36", "v2.6.37-rc1", "v3.8", "v3.13", "v4.11"];
    for m in &machines {
        for name in kernels {
            let k = Kernel::preset(name).unwrap();
            for (wname, w) in [
                ("hackbench", hackbench as fn(&Machine) -> _),
                ("spinners", spinners),
            ] {
                let sums = run(m, &k, w(m), false);
                let walk = run(m, &k, w(m), true);
                let what = format!("{} CPUs, {name}, {wname}", m.nr_cpus());
                assert!(sums.metric("events").unwrap() > 1000.0, "{what}");
                assert_eq!(outcome(&sums), outcome(&walk), "{what}");
            }
        }
    }
}

/// The 6.x wake-up scan (`select_idle_cpu()`) answers an unpinned task's
/// idle-CPU search from the idle mask on big machines; with the mask and
/// with the walk the runs are the same (and under `cfg(test)` every call
/// is also checked against the scan with a `cpus` flag per CPU).
#[test]
fn idle_mask_gives_the_6x_walks_results_on_big_machines() {
    let machines = [
        Machine::new(2, 28, 2, None, Some(2)).unwrap(),
        Machine::new(4, 16, 2, None, Some(4)).unwrap(),
        Machine::new(2, 32, 2, Some(8), Some(2)).unwrap(),
    ];
    for m in &machines {
        for name in ["v6.6", "v6.18"] {
            let k = Kernel::preset(name).unwrap();
            for (wname, w) in [
                ("hackbench", hackbench as fn(&Machine) -> _),
                ("spinners", spinners),
            ] {
                let mask = run_for(m, &k, w(m), false, 30_000_000);
                let walk = run_for(m, &k, w(m), true, 30_000_000);
                let what = format!("{} CPUs, {name}, {wname}", m.nr_cpus());
                assert!(mask.metric("events").unwrap() > 1000.0, "{what}");
                assert_eq!(outcome(&mask), outcome(&walk), "{what}");
            }
        }
    }
}
