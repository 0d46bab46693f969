//! Engine benchmarks (`cargo bench --bench engine`, or `make bench`): prints
//! figures, asserts nothing.
//!
//! 1. Scenarios: simulated seconds per wall second, context switches and
//!    events per wall second, for spinner mixes up to 224 run/sleep tasks on
//!    the 112-CPU `skl-sp-2s`.
//! 2. Event queue: the engine's queue alone on hold models (pop the
//!    earliest, put one later) at 4 to 65,536 pending events: plain events
//!    (`push`) against a `BTreeMap` — the measurement behind the queue
//!    choice —, slot events (the popped slot re-armed, as a CPU's burst end
//!    is), and the engine's mix at 1024 CPUs (a quarter plain, three
//!    quarters slots; one in eight slot pops also re-arms another slot
//!    later, as a charge of overhead moves a burst end). Best of 3 runs.
//!    `cargo bench --bench engine -- --queue` runs this part alone.

use schedlab::queue::EventQueue;
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
            latency: false,
            groups: Vec::new(),
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

/// Best of 3 runs of `ops` steps of `f` (M steps per wall second).
fn best_rate(ops: usize, f: &mut dyn FnMut(usize)) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let t0 = Instant::now();
        f(ops);
        best = best.min(t0.elapsed().as_secs_f64());
    }
    ops as f64 / best / 1e6
}

/// Plain events: the queue's `pop` + `push` against a `BTreeMap`.
#[inline(never)]
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
    let heap_rate = best_rate(ops, &mut |ops| {
        for _ in 0..ops {
            let e = heap.pop().unwrap();
            heap.push(e.time + rng.exp_ns(1_000_000), e.ev);
        }
    });
    let tree_rate = best_rate(ops, &mut |ops| {
        for _ in 0..ops {
            let ((t, _), v) = tree.pop_first().unwrap();
            seq += 1;
            tree.insert((t + rng.exp_ns(1_000_000), seq), v);
        }
    });
    black_box((&heap, &tree));
    (heap_rate, tree_rate)
}

/// Slot events only: `pop` + `arm` of the popped slot.
#[inline(never)]
fn queue_slots(pending: usize, ops: usize) -> f64 {
    let mut rng = Rng::new(9);
    let mut q: EventQueue<u32> = EventQueue::new();
    for i in 0..pending {
        q.arm(i, rng.exp_ns(1_000_000), i as u32);
    }
    let rate = best_rate(ops, &mut |ops| {
        for _ in 0..ops {
            let e = q.pop().unwrap();
            q.arm(e.ev as usize, e.time + rng.exp_ns(1_000_000), e.ev);
        }
    });
    black_box(&q);
    rate
}

/// The engine's mix: a quarter plain events, the rest slots; a popped
/// event is put back later, and one slot pop in eight also re-arms
/// another slot later.
#[inline(never)]
fn queue_mix(pending: usize, ops: usize) -> f64 {
    let mut rng = Rng::new(9);
    let mut q: EventQueue<u32> = EventQueue::new();
    let slots = (pending - pending / 4).max(1);
    for i in 0..pending {
        let t = rng.exp_ns(1_000_000);
        if i < slots {
            q.arm(i, t, i as u32);
        } else {
            q.push(t, u32::MAX);
        }
    }
    let rate = best_rate(ops, &mut |ops| {
        for n in 0..ops {
            let e = q.pop().unwrap();
            let t = e.time + rng.exp_ns(1_000_000);
            if e.ev == u32::MAX {
                q.push(t, e.ev);
                continue;
            }
            q.arm(e.ev as usize, t, e.ev);
            if n % 8 == 0 {
                let s = (rng.next_u64() % slots as u64) as usize;
                if s != e.ev as usize {
                    q.arm(s, t + rng.exp_ns(1_000_000), s as u32);
                }
            }
        }
    });
    black_box(&q);
    rate
}

/// `ops`: steps per model and size (`-- --queue N` sets it; small N under
/// `valgrind --tool=callgrind` gives each model's instructions per step).
fn queue_bench(ops: usize) {
    println!("== event queue, hold models (M pop + put per s, best of 3) ==");
    println!(
        "{:>10} {:>12} {:>12} {:>12} {:>12}",
        "pending", "plain", "BTreeMap", "slots", "mix"
    );
    let mut rates = Vec::new();
    for pending in [4, 64, 1024, 8192, 65536] {
        let (h, t) = queue_hold(pending, ops);
        let s = queue_slots(pending, ops);
        let m = queue_mix(pending, ops);
        println!("{pending:>10} {h:>12.1} {t:>12.1} {s:>12.1} {m:>12.1}");
        rates.push((pending, h));
    }
    let at = |n: usize| rates.iter().find(|r| r.0 == n).map_or(f64::NAN, |r| r.1);
    let ratio = at(65536) / at(64);
    println!(
        "plain events, pop + push at 65,536 pending / at 64: {ratio:.2}; target at least 0.8: {}",
        if ratio >= 0.8 { "met" } else { "not met" }
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--queue") {
        queue_bench(
            args.get(i + 1)
                .and_then(|n| n.parse().ok())
                .unwrap_or(2_000_000),
        );
        return;
    }
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
    println!();
    queue_bench(2_000_000);
}
