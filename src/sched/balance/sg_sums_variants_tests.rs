//! The per-group sums (`sched::balance::sg_sums`) forced on for small machines,
//! against the walks, under every 3.x preset and the kernel-field toggles
//! the sums read (idle_cpu_nr_running, group_imb_nr_running, the power
//! policies, the wake-up scans under 6.x, EEVDF under the 3.x balancer),
//! with an RT background (RT tasks take the CPU from CFS without changing
//! the sums' inputs), pinned and yielding spinners. Release builds compare
//! whole outcomes; debug builds also assert the sums at every use.
//! Written as an attack in review and kept.
use crate::config::{Fields, Value};
use crate::cost::CostModel;
use crate::engine::{RunOptions, Sim};
use crate::kernel::{Kernel, KERNEL_PRESETS};
use crate::result::SimResult;
use crate::sched::balance::sg_sums::groups_wanted;
use crate::sched::rt::RtPolicy;
use crate::topology::Machine;
use crate::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use crate::workload::rt_kthreads::RtKthreads;
use crate::workload::spinners::{Dist, SpinnerTask, Spinners};
use crate::workload::Workload;

fn rt() -> RtKthreads {
    RtKthreads {
        watchdog: true,
        watchdog_period_ns: 2_000_000,
        watchdog_run_ns: 50_000,
        irq_threads: 8,
        irq_cpus: 4,
        irq_prio: 50,
        irq_policy: RtPolicy::Fifo,
        irq_period_ns: 300_000,
        irq_run_ns: 60_000,
    }
}

fn hb(m: &Machine, rtk: bool) -> Box<dyn Workload> {
    let groups = (m.nr_cpus() as u32 / 8).max(1);
    let p = HackbenchParams::perf(groups, 2, Ipc::Pipe, Mode::Thread);
    Box::new(Hackbench::new(p).unwrap().with_rt_kthreads(rtk.then(rt)))
}

fn spin(m: &Machine) -> Box<dyn Workload> {
    let n = m.nr_cpus() as u64;
    let tasks = (0..n + n / 3)
        .map(|i| SpinnerTask {
            nice: [0, -5, 5, 19, -20][(i % 5) as usize],
            run_ns: (i % 4 != 0).then_some(100_000 + 30_000 * (i % 7)),
            sleep_ns: (i % 4 != 0).then_some(90_000 + 40_000 * (i % 5)),
            cpus: (i % 6 == 0).then(|| (0..n as u32).filter(|c| c % 2 == i as u32 % 2).collect()),
            yields: i % 7 == 0,
        })
        .collect();
    Box::new(Spinners::new(tasks, Dist::Exp).unwrap())
}

fn run(
    m: &Machine,
    k: &Kernel,
    w: Box<dyn Workload>,
    force: Option<bool>,
    dur: u64,
) -> Option<SimResult> {
    let cost = CostModel::for_machine(m);
    let opts = RunOptions {
        seed: 11,
        duration_ns: Some(dur),
        trace_limit: None,
        sample_interval_ns: 5_000_000,
        max_sample_bytes: crate::limits::MAX_VMSTAT_BYTES,
        latency: false,
        groups: Vec::new(),
    };
    let mut sim = Sim::new(m, k, &cost, w, opts).expect("a valid configuration");
    if let Some(on) = force {
        sim.sched.set_group_sums(on);
    }
    Some(sim.run(&|| false))
}

fn outcome(r: &SimResult) -> String {
    format!(
        "{:?} {} {:?} {:?} {:?} {:?}",
        r.status, r.elapsed_ns, r.metrics, r.tasks, r.cpus, r.schedstat
    )
}

fn kernels() -> Vec<(String, Kernel)> {
    // Every preset whose balancer or wake-up scan reads the group sums.
    let mut out: Vec<(String, Kernel)> = KERNEL_PRESETS
        .iter()
        .map(|&name| (name.to_string(), Kernel::preset(name).unwrap()))
        .filter(|(_, k)| groups_wanted(k))
        .collect();
    assert_eq!(out.len(), 6, "the 2.6.36 … 4.11 presets");
    let tweaks: Vec<(&str, Vec<(&str, Value)>)> = vec![
        ("v3.8", vec![("idle_cpu_nr_running", Value::Bool(false))]),
        (
            "v2.6.36",
            vec![
                ("idle_cpu_nr_running", Value::Bool(true)),
                ("group_imb_nr_running", Value::Bool(true)),
            ],
        ),
        ("v3.8", vec![("group_imb_nr_running", Value::Bool(false))]),
        (
            "v3.8",
            vec![("balance_policy", Value::Str("powersaving".into()))],
        ),
        (
            "v3.8",
            vec![("balance_policy", Value::Str("balance".into()))],
        ),
        (
            "v3.8",
            vec![("select_idle_sibling", Value::Str("any_idle".into()))],
        ),
        (
            "v2.6.36",
            vec![("select_idle_sibling", Value::Str("idle_group".into()))],
        ),
        ("v3.8", vec![("nohz_ilb", Value::Str("push".into()))]),
        (
            "v6.6",
            vec![
                ("recent_used_cpu", Value::Bool(false)),
                ("sis_util", Value::Bool(false)),
                ("sched_idle_cpu", Value::Bool(false)),
                ("select_idle_sibling", Value::Str("idle_group".into())),
            ],
        ),
        (
            "v6.6",
            vec![
                ("recent_used_cpu", Value::Bool(false)),
                ("sis_util", Value::Bool(false)),
                ("sched_idle_cpu", Value::Bool(false)),
                ("select_idle_sibling", Value::Str("any_idle".into())),
            ],
        ),
        (
            "v6.18",
            vec![
                ("recent_used_cpu", Value::Bool(false)),
                ("sis_util", Value::Bool(false)),
                ("sched_idle_cpu", Value::Bool(false)),
                ("balancer", Value::Str("cpu_load".into())),
                ("select_idle_sibling", Value::Str("idle_group".into())),
            ],
        ),
        (
            "v4.11",
            vec![
                ("idle_cpu_nr_running", Value::Bool(false)),
                ("select_idle_sibling", Value::Str("idle_group".into())),
            ],
        ),
    ];
    for (base, fs) in tweaks {
        let mut k = Kernel::preset(base).unwrap();
        let mut label = base.to_string();
        for (f, v) in &fs {
            label += &format!(" {f}={v:?}");
            if let Err(e) = k.set(f, v) {
                panic!("{label}: {e}");
            }
        }
        out.push((label, k));
    }
    out
}

/// Small machines with the sums forced on give the walks' outcome.
#[test]
fn sums_forced_on_small_machines_give_the_walks_outcome() {
    let machines = [
        Machine::new(2, 4, 2, None, Some(2)).unwrap(),
        Machine::new(1, 12, 1, Some(4), None).unwrap(),
    ];
    for m in &machines {
        for (kn, k) in kernels() {
            for (wn, rtk) in [("hb+rt", true), ("spin", false)] {
                let w = |_: ()| if wn == "spin" { spin(m) } else { hb(m, rtk) };
                let what = format!("{} CPUs {kn} {wn}", m.nr_cpus());
                let a = run(m, &k, w(()), Some(true), 20_000_000);
                let b = run(m, &k, w(()), Some(false), 20_000_000);
                if let (Some(a), Some(b)) = (a, b) {
                    assert_eq!(outcome(&a), outcome(&b), "{what}");
                }
            }
        }
    }
}
