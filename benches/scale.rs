//! Scaling benchmark (`cargo bench --bench scale`, part of `make bench`):
//! prints figures, asserts nothing. Each row runs in a fresh child process
//! (this binary re-run with `--child`), so its peak memory is its own.
//!
//! 1. hackbench pipe thread, 20 loops, groups = CPUs / 2, kernel v3.8, on
//!    2, 112 (`skl-sp-2s`), 448 (4 × 56 × 2) and 1024 (8 × 64 × 2) CPUs:
//!    engine events and simulated messages per wall-second of the event
//!    loop, setup time (`Sim::new`: topology, domains, per-CPU state), and
//!    peak RSS.
//! 2. Setup alone of a 4096-CPU machine, one socket and LLC (1 × 4096 × 1)
//!    and 16 × 128 × 2: `Sim::new` plus a run cancelled before its first
//!    event (init and the result tables), and peak RSS.
//! 3. The reference: a bare binary-heap DES (a `BinaryHeap` of the
//!    engine's queue entries ordered on `(time, seq)` — not `EventQueue`
//!    itself, whose `pop` also looks at its slot heap — popping the earliest
//!    event and pushing one later, with an event-sized payload) holding the
//!    mean pending count of the 2-CPU run, so the engine's rate on 2 CPUs
//!    can be put against a heap doing nothing else.
//!
//! Two event counts: the `events` metric, which also counts each burst end
//! that re-arming replaced (the stale event the queue once held and
//! discarded, now only counted: `engine::ghosts`), and the events actually
//! popped (`SimResult::queue_pops`). Rates are given by both; the
//! engine-vs-heap ratio by popped events is the fair one (a counted-only
//! event costs nothing).
//!
//! `--quick`: 5 loops instead of 20.

use schedlab::engine::queue::Entry;
use schedlab::engine::Sim;
use schedlab::rng::Rng;
use schedlab::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use schedlab::workload::spinners::{Dist, SpinnerTask, Spinners};
use schedlab::{CostModel, Kernel, Machine, RunOptions};
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

fn shape(s: &str) -> Machine {
    let v: Vec<u32> = s.split('x').map(|x| x.parse().unwrap()).collect();
    Machine::new(v[0], v[1], v[2], None, None).unwrap()
}

fn peak_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|k| k.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
        / 1024.0
}

fn opts(duration_ns: Option<u64>) -> RunOptions {
    RunOptions {
        seed: 1,
        duration_ns,
        trace_limit: None,
        sample_interval_ns: 100_000_000,
        max_sample_bytes: 0,
    }
}

/// This thread's CPU time (ns), from /proc/thread-self/schedstat: on a
/// shared machine the wall clock also counts time spent waiting for a core.
fn thread_cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
        / 1e9
}

/// `reps` hackbench runs: prints `events messages setup_s run_wall_s
/// run_cpu_s peak_mib pending pops`, the wall times the best of the runs, the
/// CPU time the mean over all runs, setup included (schedstat's clock is
/// updated at ticks and switches: too coarse for one short run; setup is
/// under 0.1 ms on 2 CPUs, and reps is 1 elsewhere).
fn child_hackbench(shape_s: &str, loops: u32, reps: u32) {
    let m = shape(shape_s);
    let k = Kernel::v3_8();
    let c = CostModel::for_machine(&m);
    let groups = (m.nr_cpus() as u32 / 2).max(1);
    let (mut setup, mut wall) = (f64::INFINITY, f64::INFINITY);
    let mut last = None;
    let c_start = thread_cpu_s();
    for _ in 0..reps {
        let w = Box::new(
            Hackbench::new(HackbenchParams::perf(
                groups,
                loops,
                Ipc::Pipe,
                Mode::Thread,
            ))
            .unwrap(),
        );
        let t0 = Instant::now();
        let sim = Sim::new(&m, &k, &c, w, opts(None)).unwrap();
        let t1 = Instant::now();
        let r = sim.run(&|| false);
        let t2 = Instant::now();
        setup = setup.min((t1 - t0).as_secs_f64());
        wall = wall.min((t2 - t1).as_secs_f64());
        last = Some(r);
    }
    let cpu = if reps == 1 {
        thread_cpu_s() - c_start - setup
    } else {
        (thread_cpu_s() - c_start) / reps as f64
    };
    let r = last.unwrap();
    println!(
        "{} {} {} {} {} {} {} {}",
        r.metric("events").unwrap(),
        r.metric("messages").unwrap(),
        setup,
        wall,
        cpu,
        peak_mib(),
        mean_pending(&r),
        r.queue_pops,
    );
}

fn mean_pending(r: &schedlab::SimResult) -> f64 {
    r.mean_pending_events
}

/// Setup alone: prints `setup_s peak_mib`.
fn child_setup(shape_s: &str) {
    let t0 = Instant::now();
    let m = shape(shape_s);
    let k = Kernel::v3_8();
    let c = CostModel::for_machine(&m);
    let task = SpinnerTask {
        nice: 0,
        run_ns: None,
        sleep_ns: None,
        cpus: None,
        yields: false,
    };
    let w = Box::new(Spinners::new(vec![task], Dist::Fixed).unwrap());
    let sim = Sim::new(&m, &k, &c, w, opts(Some(1_000_000))).unwrap();
    let r = sim.run(&|| true);
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(r.status.name(), "cancelled");
    println!("{} {}", secs, peak_mib());
}

/// The bare heap DES at `pending` events: prints pop+push per wall second
/// (the best of 40 chunks of 500,000, as the 2-CPU engine figure is the best
/// of its runs: both estimate the rate on an uncontended core) and per CPU
/// second over all chunks.
fn child_heap(pending: usize) {
    let mut rng = Rng::new(9);
    let mut q: BinaryHeap<Entry<[u32; 3]>> = BinaryHeap::with_capacity(1024);
    let mut seq = 0u64;
    let mut push = |q: &mut BinaryHeap<_>, time, ev| {
        seq += 1;
        q.push(Entry { time, seq, ev });
    };
    for i in 0..pending {
        push(&mut q, rng.exp_ns(100_000), [i as u32, 0, 0]);
    }
    let (chunks, ops) = (40, 500_000u64);
    let mut best = f64::INFINITY;
    let c0 = thread_cpu_s();
    for _ in 0..chunks {
        let t0 = Instant::now();
        for _ in 0..ops {
            let e = q.pop().unwrap();
            push(&mut q, e.time + rng.exp_ns(100_000), e.ev);
        }
        best = best.min(t0.elapsed().as_secs_f64());
    }
    let c1 = thread_cpu_s();
    black_box(&q);
    println!(
        "{} {}",
        ops as f64 / best,
        (chunks as u64 * ops) as f64 / (c1 - c0)
    );
}

fn in_child(args: &[&str]) -> Vec<f64> {
    let exe = std::env::current_exe().unwrap();
    let out = Command::new(exe)
        .arg("--child")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "child {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap()
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        match args[i + 1].as_str() {
            "hackbench" => child_hackbench(
                &args[i + 2],
                args[i + 3].parse().unwrap(),
                args[i + 4].parse().unwrap(),
            ),
            "setup" => child_setup(&args[i + 2]),
            "heap" => child_heap(args[i + 2].parse().unwrap()),
            other => panic!("unknown child {other}"),
        }
        return;
    }
    let loops = if args.iter().any(|a| a == "--quick") {
        5
    } else {
        20
    };
    println!(
        "== hackbench pipe thread -l {loops}, groups = CPUs/2, v3.8 ==\n\
         (rates per second of the event loop's CPU time and, in brackets, of wall time;\n\
         best of / mean over 50 runs on 2 CPUs, of 1 run elsewhere)"
    );
    println!(
        "{:>6} {:>9} {:>9} {:>9} {:>22} {:>22} {:>22} {:>9} {:>9} {:>9}",
        "CPUs",
        "shape",
        "events",
        "popped",
        "events/s [wall]",
        "popped/s [wall]",
        "msgs/s [wall]",
        "setup s",
        "peak MiB",
        "pending"
    );
    let (mut rate2, mut wrate2, mut pending2, mut rate1024, mut wrate1024) =
        (f64::NAN, f64::NAN, 0.0, f64::NAN, f64::NAN);
    let (mut prate2, mut pwrate2, mut prate1024, mut pwrate1024) =
        (f64::NAN, f64::NAN, f64::NAN, f64::NAN);
    for (cpus, sh) in [
        (2, "1x2x1"),
        (112, "2x28x2"),
        (448, "4x56x2"),
        (1024, "8x64x2"),
    ] {
        let reps = if cpus == 2 { "50" } else { "1" };
        let v = in_child(&["hackbench", sh, &loops.to_string(), reps]);
        let (events, msgs, setup, wall, cpu, peak, pending, pops) =
            (v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
        if cpus == 2 {
            (rate2, wrate2, pending2) = (events / cpu, events / wall, pending);
            (prate2, pwrate2) = (pops / cpu, pops / wall);
        }
        if cpus == 1024 {
            (rate1024, wrate1024) = (events / cpu, events / wall);
            (prate1024, pwrate1024) = (pops / cpu, pops / wall);
        }
        println!(
            "{cpus:>6} {sh:>9} {:>8.2}M {:>8.2}M {:>10.2}M [{:>7.2}M] {:>10.2}M [{:>7.2}M] {:>10.2}M [{:>7.2}M] {setup:>9.4} {peak:>9.1} {pending:>9.1}",
            events / 1e6,
            pops / 1e6,
            events / cpu / 1e6,
            events / wall / 1e6,
            pops / cpu / 1e6,
            pops / wall / 1e6,
            msgs / cpu / 1e6,
            msgs / wall / 1e6,
        );
    }
    println!(
        "events/s at 1024 CPUs / at 2 CPUs: {:.2} (CPU time), {:.2} (wall); \
         popped events: {:.2} (CPU time), {:.2} (wall)",
        rate1024 / rate2,
        wrate1024 / wrate2,
        prate1024 / prate2,
        pwrate1024 / pwrate2
    );
    println!(
        "\n== setup of a 4096-CPU machine (Sim::new + a run cancelled before its first event) =="
    );
    for sh in ["1x4096x1", "16x128x2"] {
        let v = in_child(&["setup", sh]);
        println!("{sh:>10}: {:.3} s, peak {:.1} MiB", v[0], v[1]);
    }
    let pending = (pending2.round() as usize).max(1);
    let heap = in_child(&["heap", &pending.to_string()]);
    println!(
        "\n== bare binary-heap DES at the 2-CPU run's mean pending count ({pending}) ==\n\
         {:.2} M pop+push per wall-s (best chunk) [{:.2} M per CPU-s]; engine on 2 CPUs \
         {:.2} M events per wall-s (best run) = {:.2}x the heap [CPU-s: {:.2}x]; \
         by popped events {:.2} M = {:.2}x [CPU-s: {:.2}x]",
        heap[0] / 1e6,
        heap[1] / 1e6,
        wrate2 / 1e6,
        wrate2 / heap[0],
        rate2 / heap[1],
        pwrate2 / 1e6,
        pwrate2 / heap[0],
        prate2 / heap[1]
    );
}
