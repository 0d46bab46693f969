//! The balancer and PELT trace tables and the process columns, recorded
//! by `sched::stats::trace_hooks` and `report::process_columns`: they agree with
//! schedstat and the end-of-run PELT values, are bounded, and change no
//! number of the run.

use crate::cost::CostModel;
use crate::kernel::Kernel;
use crate::result::SimResult;
use crate::topology::Machine;
use crate::trace::{BalanceKind, BalanceOutcome};
use crate::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use crate::workload::volano::{Volano, VolanoParams};
use crate::workload::Workload;
use crate::{simulate, RunOptions};

fn hackbench(mode: Mode) -> Box<dyn Workload> {
    Box::new(Hackbench::new(HackbenchParams::perf(2, 300, Ipc::Pipe, mode)).unwrap())
}

fn run(k: &Kernel, w: Box<dyn Workload>, trace_limit: Option<usize>) -> SimResult {
    let m = Machine::preset("core2-2s").unwrap();
    let opts = RunOptions {
        seed: 7,
        duration_ns: Some(2_000_000_000),
        trace_limit,
        sample_interval_ns: 1_000_000,
        ..RunOptions::default()
    };
    simulate(&m, k, &CostModel::for_machine(&m), w, opts, &|| false).unwrap()
}

/// The schedstat counter `name` of (cpu, domain).
fn stat(r: &SimResult, name: &str, cpu: usize, domain: usize) -> u64 {
    let st = &r.schedstat;
    let row = (0..st.cpu.len())
        .find(|&i| st.cpu[i] == cpu as i64 && st.domain[i] == domain as i64)
        .unwrap();
    let col = &st.counters.iter().find(|(n, _)| n == name).unwrap().1;
    col[row] as u64
}

#[test]
fn every_pass_is_a_row_that_agrees_with_schedstat() {
    for k in [Kernel::v3_8(), Kernel::v6_18()] {
        let r = run(&k, hackbench(Mode::Process), Some(1 << 22));
        let bt = &r.trace.as_ref().unwrap().balance;
        assert_eq!(bt.dropped, 0);
        assert!(bt.len() > 100, "{}: {}", k.name, bt.len());
        let st = &r.schedstat;
        let mut checked = 0;
        for i in 0..st.cpu.len() {
            let (cpu, dom) = (st.cpu[i] as usize, st.domain[i] as usize);
            for (it, idle) in ["idle", "busy", "newidle"].iter().enumerate() {
                let rows: Vec<usize> = (0..bt.len())
                    .filter(|&j| {
                        bt.kind[j] != BalanceKind::Active as u8
                            && bt.dst_cpu[j] == cpu as i32
                            && bt.domain[j] == dom as u8
                            && bt.idle[j] == it as u8
                    })
                    .collect();
                let count = |o: BalanceOutcome| {
                    rows.iter().filter(|&&j| bt.outcome[j] == o as u8).count() as u64
                };
                let moved: u64 = rows.iter().map(|&j| bt.moved[j] as u64).sum();
                let s = |n: &str| stat(&r, &format!("{n}_{idle}"), cpu, dom);
                assert_eq!(rows.len() as u64, s("lb_count"), "{} {cpu}/{dom}", k.name);
                assert_eq!(count(BalanceOutcome::Balanced), s("lb_balanced"));
                assert_eq!(count(BalanceOutcome::Failed), s("lb_failed"));
                assert_eq!(moved, s("lb_gained"));
                checked += rows.len();
            }
            let active: Vec<usize> = (0..bt.len())
                .filter(|&j| {
                    bt.kind[j] == BalanceKind::Active as u8
                        && bt.dst_cpu[j] == cpu as i32
                        && bt.domain[j] == dom as u8
                })
                .collect();
            assert_eq!(active.len() as u64, stat(&r, "alb_count", cpu, dom));
            let pushed = active.iter().filter(|&&j| bt.moved[j] == 1).count() as u64;
            assert_eq!(pushed, stat(&r, "alb_pushed", cpu, dom));
        }
        assert!(checked > 100);
        // the rows are in time order; newidle passes run on their own CPU
        assert!(bt.time_ns.windows(2).all(|w| w[0] <= w[1]));
        for j in 0..bt.len() {
            if bt.kind[j] == BalanceKind::Newidle as u8 || bt.kind[j] == BalanceKind::Periodic as u8
            {
                assert_eq!(bt.cpu[j], bt.dst_cpu[j]);
            }
            if bt.outcome[j] == BalanceOutcome::Moved as u8 {
                assert!(bt.moved[j] > 0 && bt.busiest[j] >= 0);
            }
        }
        let kinds = |k: BalanceKind| bt.kind.iter().filter(|&&x| x == k as u8).count();
        let n = [
            BalanceKind::Periodic,
            BalanceKind::Newidle,
            BalanceKind::Nohz,
            BalanceKind::Active,
        ]
        .map(kinds);
        // newidle passes, and passes from a tick (periodic) or a NOHZ kick
        assert!(n[1] > 0 && n[0] + n[2] > 0, "{}: {n:?}", k.name);
    }
}

#[test]
fn tracing_changes_no_number() {
    for k in [Kernel::v3_8(), Kernel::v6_18()] {
        let off = run(&k, hackbench(Mode::Thread), None);
        let on = run(&k, hackbench(Mode::Thread), Some(1 << 22));
        let strip = |r: &SimResult| -> Vec<(String, f64)> {
            r.metrics
                .iter()
                .filter(|(n, _)| !n.starts_with("trace_"))
                .cloned()
                .collect()
        };
        assert_eq!(strip(&off), strip(&on), "{}", k.name);
        assert_eq!(off.tasks.cpu_s, on.tasks.cpu_s);
        assert_eq!(
            off.tasks.pelt.map(|p| p.util_avg),
            on.tasks.pelt.map(|p| p.util_avg)
        );
        assert_eq!(off.schedstat.counters, on.schedstat.counters);
    }
}

#[test]
fn pelt_samples_follow_the_vmstat_samples() {
    let r = run(&Kernel::v6_18(), hackbench(Mode::Process), Some(1 << 22));
    let pt = &r.trace.as_ref().unwrap().pelt;
    let ncpus = r.cpus.cpu.len();
    let rows = r.vmstat.time_s.len();
    assert!(rows > 5);
    assert_eq!(pt.len(), rows * ncpus);
    for (i, t) in r.vmstat.time_s.iter().enumerate() {
        for c in 0..ncpus {
            assert_eq!(pt.time_ns[i * ncpus + c] as f64 / 1e9, *t);
            assert_eq!(pt.cpu[i * ncpus + c], c as i32);
        }
    }
    // the last sample is the run's end, where r.cpus holds the same signals
    let pelt = r.cpus.pelt.as_ref().unwrap();
    for c in 0..ncpus {
        let j = (rows - 1) * ncpus + c;
        assert_eq!(pt.util_avg[j] as f64, pelt.util_avg[c]);
        assert_eq!(pt.load_avg[j] as f64, pelt.load_avg[c]);
    }
    assert!(pt.util_avg.iter().any(|&u| u > 100));
    // without PELT, no samples
    let r = run(&Kernel::v3_8(), hackbench(Mode::Process), Some(1 << 22));
    assert!(r.trace.as_ref().unwrap().pelt.is_empty());
}

#[test]
fn the_tables_are_bounded_by_the_row_limit() {
    let r = run(&Kernel::v6_18(), hackbench(Mode::Process), Some(30));
    let tr = r.trace.as_ref().unwrap();
    assert_eq!((tr.len(), tr.balance.len(), tr.pelt.len()), (30, 30, 30));
    assert!(tr.dropped > 0 && tr.balance.dropped > 0 && tr.pelt.dropped > 0);
}

#[test]
fn threads_share_their_process_tgid() {
    let thread = run(&Kernel::v3_8(), hackbench(Mode::Thread), None);
    let t = &thread.tasks;
    assert_eq!(t.name[0], "hackbench");
    assert!(t.tgid.iter().all(|&g| g == 1));
    assert!(t.process.iter().all(|p| p == "hackbench"));
    let process = run(&Kernel::v3_8(), hackbench(Mode::Process), None);
    let t = &process.tasks;
    for i in 0..t.task.len() {
        assert_eq!(t.tgid[i], t.task[i]);
        assert_eq!(t.process[i], t.name[i]);
    }
    let w = Box::new(Volano::new(VolanoParams::new(1, 2, 2)).unwrap());
    let v = run(&Kernel::v3_8(), w, None);
    let t = &v.tasks;
    let mut groups: Vec<i64> = t.tgid.clone();
    groups.sort_unstable();
    groups.dedup();
    assert_eq!(groups.len(), 2);
    assert!(t.process.iter().all(|p| p == "java"));
    for i in 0..t.task.len() {
        let server = t.name[i].starts_with("server");
        let leader = if server {
            "server-recv/0"
        } else {
            "client-recv/0"
        };
        let l = t.name.iter().position(|n| n == leader).unwrap();
        assert_eq!(t.tgid[i], t.task[l], "{}", t.name[i]);
    }
}
