//! Engine benchmarks (`cargo bench --bench engine`, or `make bench`): prints
//! figures, asserts nothing.
//!
//! 1. Scenarios: simulated seconds per wall second, context switches and
//!    events per wall second, for spinner mixes up to 224 run/sleep tasks on
//!    the 112-CPU `skl-sp-2s`.
//! 2. Event queue: the engine's `BinaryHeap` queue against a `BTreeMap` on a
//!    hold model (pop the earliest, push one later) at several pending-set
//!    sizes — the measurement behind the queue choice.

use schedlab::engine::queue::EventQueue;
use schedlab::rng::Rng;
use schedlab::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use schedlab::workload::spinners::{Dist, SpinnerTask, Spinners};
use schedlab::workload::volano::{Volano, VolanoParams};
use schedlab::Workload;
use schedlab::{simulate, CostModel, Kernel, Machine, RunOptions};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

fn scenario(name: &str, machine: &str, tasks: Vec<SpinnerTask>, dist: Dist, secs: f64) {
    run(name, machine, secs, &|| {
        Box::new(Spinners::new(tasks.clone(), dist).unwrap())
    });
}

fn run(name: &str, machine: &str, secs: f64, make: &dyn Fn() -> Box<dyn Workload>) {
    let m = Machine::preset(machine).unwrap();
    let k = Kernel::v3_8();
    let c = CostModel::for_machine(&m);
    let mut best = f64::INFINITY;
    let mut last = None;
    for _ in 0..3 {
        let w = make();
        let opts = RunOptions {
            seed: 1,
            duration_ns: Some((secs * 1e9) as u64),
            trace_limit: None,
            sample_interval_ns: 100_000_000,
            max_sample_bytes: schedlab::limits::MAX_VMSTAT_BYTES,
        };
        let t0 = Instant::now();
        let r = simulate(&m, &k, &c, w, opts, &|| false).unwrap();
        best = best.min(t0.elapsed().as_secs_f64());
        last = Some(r);
    }
    let r = last.unwrap();
    let cs = r.metric("context_switches").unwrap();
    let ev = r.metric("events").unwrap();
    let secs = r.metric("sim_time_s").unwrap();
    println!(
        "{name:<44} {secs:>5.1} sim-s  {:>7.3} wall-s  {:>8.2} sim-s/wall-s  {:>12.0} cs/wall-s  {:>12.0} events/wall-s",
        best,
        secs / best,
        cs / best,
        ev / best
    );
}

fn spinners(n: usize, run_us: Option<u64>, sleep_us: Option<u64>) -> Vec<SpinnerTask> {
    (0..n)
        .map(|_| SpinnerTask {
            nice: 0,
            run_ns: run_us.map(|u| u * 1000),
            sleep_ns: sleep_us.map(|u| u * 1000),
            cpus: None,
            yields: false,
        })
        .collect()
}

fn queue_hold(pending: usize, ops: usize) -> (f64, f64) {
    let mut rng = Rng::new(9);
    let mut heap: EventQueue<u32> = EventQueue::new();
    let mut tree: BTreeMap<(u64, u64), u32> = BTreeMap::new();
    let mut seq = 0u64;
    for i in 0..pending {
        let t = rng.exp_ns(1_000_000);
        heap.push(t, i as u32);
        seq += 1;
        tree.insert((t, seq), i as u32);
    }
    let t0 = Instant::now();
    for _ in 0..ops {
        let e = heap.pop().unwrap();
        heap.push(e.time + rng.exp_ns(1_000_000), e.ev);
    }
    let heap_rate = ops as f64 / t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    for _ in 0..ops {
        let ((t, _), v) = tree.pop_first().unwrap();
        seq += 1;
        tree.insert((t + rng.exp_ns(1_000_000), seq), v);
    }
    let tree_rate = ops as f64 / t0.elapsed().as_secs_f64();
    black_box((&heap, &tree));
    (heap_rate, tree_rate)
}

fn main() {
    println!("== scenarios (kernel v3.8, best of 3) ==");
    scenario(
        "vm-2: 2 spinners",
        "vm-2",
        spinners(2, None, None),
        Dist::Fixed,
        20.0,
    );
    scenario(
        "vm-2: 8 run/sleep 100/100 us",
        "vm-2",
        spinners(8, Some(100), Some(100)),
        Dist::Exp,
        2.0,
    );
    scenario(
        "skl-sp-2s: 224 spinners",
        "skl-sp-2s",
        spinners(224, None, None),
        Dist::Fixed,
        5.0,
    );
    scenario(
        "skl-sp-2s: 224 run/sleep 500/500 us (exp)",
        "skl-sp-2s",
        spinners(224, Some(500), Some(500)),
        Dist::Exp,
        2.0,
    );
    scenario(
        "skl-sp-2s: 224 run/sleep 50/50 us (exp)",
        "skl-sp-2s",
        spinners(224, Some(50), Some(50)),
        Dist::Exp,
        0.5,
    );
    for (ipc, mode) in [
        (Ipc::Socket, Mode::Process),
        (Ipc::Socket, Mode::Thread),
        (Ipc::Pipe, Mode::Process),
        (Ipc::Pipe, Mode::Thread),
    ] {
        let name = format!("vm-2: hackbench -g 10 -l 200 {ipc:?} {mode:?}");
        run(&name, "vm-2", 600.0, &|| {
            Box::new(Hackbench::new(HackbenchParams::perf(10, 200, ipc, mode)).unwrap())
        });
    }
    run(
        "core2-2s: volano 10 rooms x 20 users x 20",
        "core2-2s",
        600.0,
        &|| Box::new(Volano::new(VolanoParams::new(10, 20, 20)).unwrap()),
    );
    println!("\n== event queue, hold model (M pop+push per s) ==");
    println!("{:>10} {:>12} {:>12}", "pending", "BinaryHeap", "BTreeMap");
    for pending in [64, 512, 4096, 65536] {
        let (h, t) = queue_hold(pending, 2_000_000);
        println!("{pending:>10} {:>12.1} {:>12.1}", h / 1e6, t / 1e6);
    }
}
