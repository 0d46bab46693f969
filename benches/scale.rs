//! Scaling benchmark (`cargo bench --bench scale`, part of `make bench`):
//! prints figures, asserts nothing. Each row runs in a fresh child process
//! (this binary re-run with `--child`), so its peak memory is its own.
//!
//! 1. hackbench pipe thread, 20 loops, groups = CPUs / 2, on
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
//!    can be put against a heap doing nothing else; and the same heap at
//!    the 1024-CPU run's mean pending count.
//! 4. Machine size against workload size (`machine_vs_workload`): the
//!    448- and 1024-CPU machines with 1 and 16 groups, and the 2-CPU
//!    machine with 16, 224 and 512 groups, so the 2 → N slowdown per event
//!    splits into a machine factor, a workload factor and their interaction.
//!    Read it with two cautions: the schedule itself changes with the ratio
//!    of tasks to CPUs (the `ev/msg` column: deep runqueues on 2 CPUs, idle
//!    CPUs to wake and balance on the big machines), and a 20-loop run
//!    includes its start-up, when newidle balancing still walks the whole
//!    machine (most of the 16-group rows' cost at 1024 CPUs, by callgrind).
//!
//! Events are the `events` metric: the events popped from the queue.
//!
//! Parts 1 and 4 run under `v3.8` and then under `v6.18` (the preset users
//! run); parts 2 and 3 do not depend on the kernel and run once.
//!
//! `--quick`: 5 loops instead of 20. `--kernel NAME`: the hackbench rows
//! under that one kernel preset only. `--instructions`: each row of part 1
//! also runs once under callgrind (`valgrind --tool=callgrind`, counting
//! only inside `Sim::run`), for the instructions per event beside the
//! rates: deterministic, unlike the rates on a shared VM (a few minutes
//! for the 1024-CPU rows; `make bench` passes it).
//!
//! One row alone: `--child hackbench SHAPE LOOPS REPS [GROUPS|auto]
//! [KERNEL]` (groups default to CPUs / 2, the kernel to v3.8).

use schedlab::engine::Sim;
use schedlab::queue::Entry;
use schedlab::rng::Rng;
use schedlab::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use schedlab::workload::spinners::{Dist, SpinnerTask, Spinners};
use schedlab::{CostModel, Kernel, Machine, RunOptions};
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::process::Command;
use std::time::Instant;

#[path = "common/callgrind.rs"]
mod callgrind;

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
        // SCHEDLAB_BENCH_LATENCY=1: the same runs with latency histograms on
        latency: std::env::var_os("SCHEDLAB_BENCH_LATENCY").is_some(),
        groups: Vec::new(),
    }
}

#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}

/// Linux's `CLOCK_THREAD_CPUTIME_ID`.
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

/// This thread's CPU time (s): on a shared machine the wall clock also
/// counts time spent waiting for a core. `clock_gettime` includes the time
/// since the last tick or switch, which /proc/thread-self/schedstat (the
/// fallback) does not.
fn thread_cpu_s() -> f64 {
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
        return ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9;
    }
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
        / 1e9
}

/// `reps` hackbench runs of `groups` groups (`None`: CPUs / 2) under the
/// kernel preset `kernel`: prints `events messages setup_s run_wall_s
/// run_cpu_s peak_mib pending`, the wall times the best of the runs, the
/// event loop's CPU time the mean over all runs (short rows are repeated:
/// one run of a few milliseconds is a few scheduler ticks).
fn child_hackbench(shape_s: &str, loops: u32, reps: u32, groups: Option<u32>, kernel: &str) {
    let m = shape(shape_s);
    let k = Kernel::preset(kernel).unwrap();
    let c = CostModel::for_machine(&m);
    let groups = groups.unwrap_or((m.nr_cpus() as u32 / 2).max(1));
    let (mut setup, mut wall) = (f64::INFINITY, f64::INFINITY);
    let mut cpu_sum = 0.0;
    let mut last = None;
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
        let (t1, c1) = (Instant::now(), thread_cpu_s());
        let r = sim.run(&|| false);
        let (t2, c2) = (Instant::now(), thread_cpu_s());
        setup = setup.min((t1 - t0).as_secs_f64());
        cpu_sum += c2 - c1;
        wall = wall.min((t2 - t1).as_secs_f64());
        last = Some(r);
    }
    let cpu = cpu_sum / reps as f64;
    let r = last.unwrap();
    println!(
        "{} {} {} {} {} {} {}",
        r.metric("events").unwrap(),
        r.metric("messages").unwrap(),
        setup,
        wall,
        cpu,
        peak_mib(),
        mean_pending(&r),
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

/// One hackbench row (one run) under callgrind: (events, instructions
/// inside `Sim::run`), or None without valgrind.
fn callgrind_row(sh: &str, loops: u32, groups: u32, kernel: &str) -> Option<(f64, f64)> {
    let (loops, groups) = (loops.to_string(), groups.to_string());
    let (line, ir) = callgrind::count(&["--child", "hackbench", sh, &loops, "1", &groups, kernel])?;
    let events = line.split_whitespace().next()?.parse::<f64>().ok()?;
    Some((events, ir))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        match args[i + 1].as_str() {
            "hackbench" => child_hackbench(
                &args[i + 2],
                args[i + 3].parse().unwrap(),
                args[i + 4].parse().unwrap(),
                args.get(i + 5)
                    .filter(|g| g.as_str() != "auto")
                    .map(|g| g.parse().unwrap()),
                args.get(i + 6).map_or("v3.8", |k| k.as_str()),
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
    let kernels: Vec<&'static str> = match args.iter().position(|a| a == "--kernel") {
        Some(i) => vec![Box::leak(args[i + 1].clone().into_boxed_str())],
        None => vec!["v3.8", "v6.18"],
    };
    for k in &kernels {
        Kernel::preset(k).unwrap();
    }
    let instructions = args.iter().any(|a| a == "--instructions");
    let mut grids = Vec::new();
    for kernel in kernels {
        let mut grid = main_table(loops, kernel, instructions);
        machine_vs_workload(&mut grid, loops, kernel);
        grids.push(grid);
    }
    println!(
        "\n== setup of a 4096-CPU machine (Sim::new + a run cancelled before its first event) =="
    );
    for sh in ["1x4096x1", "16x128x2"] {
        let v = in_child(&["setup", sh]);
        println!("{sh:>10}: {:.3} s, peak {:.1} MiB", v[0], v[1]);
    }
    heaps(&grids[0]);
}

/// Part 1 under `kernel`: the rows on 2, 112, 448 and 1024 CPUs and the
/// 1024 / 2 ratio; with `instructions`, each row's instructions per event
/// from one run under callgrind.
fn main_table(loops: u32, kernel: &'static str, instructions: bool) -> Grid {
    println!(
        "== hackbench pipe thread -l {loops}, groups = CPUs/2, {kernel} ==\n\
         (rates per second of the event loop's CPU time and, in brackets, of wall time;\n\
         best of / mean over 50 runs on 2 CPUs, of 1 run elsewhere{})",
        if instructions {
            "; instr/ev: instructions per event inside Sim::run, callgrind, one run"
        } else {
            ""
        }
    );
    println!(
        "{:>6} {:>9} {:>9} {:>22} {:>22} {:>9} {:>9} {:>9} {:>9}",
        "CPUs",
        "shape",
        "events",
        "events/s [wall]",
        "msgs/s [wall]",
        "setup s",
        "peak MiB",
        "pending",
        "instr/ev"
    );
    let mut grid = Grid {
        kernel,
        rows: Vec::new(),
    };
    for (cpus, sh) in [
        (2, "1x2x1"),
        (112, "2x28x2"),
        (448, "4x56x2"),
        (1024, "8x64x2"),
    ] {
        let reps = if cpus == 2 { 50 } else { 1 };
        let groups = (cpus / 2).max(1);
        let r = Row::run(sh, loops, reps, groups, kernel);
        let ipe = if instructions {
            callgrind_row(sh, loops, groups, kernel).map(|(ev, ir)| {
                assert_eq!(ev, r.events, "the callgrind run is the same run");
                ir / ev
            })
        } else {
            None
        };
        println!(
            "{cpus:>6} {sh:>9} {:>8.2}M {:>10.2}M [{:>7.2}M] {:>10.2}M [{:>7.2}M] {:>9.4} {:>9.1} {:>9.1} {:>9}",
            r.events / 1e6,
            r.events / r.cpu / 1e6,
            r.events / r.wall / 1e6,
            r.msgs / r.cpu / 1e6,
            r.msgs / r.wall / 1e6,
            r.setup,
            r.peak,
            r.pending,
            ipe.map_or("-".to_string(), |x| format!("{x:.0}")),
        );
        grid.insert(cpus, groups, reps, r);
    }
    let (r2, r1024) = (grid.get(2, 1), grid.get(1024, 512));
    let (cpu, wall) = (
        (r1024.events / r1024.cpu) / (r2.events / r2.cpu),
        (r1024.events / r1024.wall) / (r2.events / r2.wall),
    );
    println!(
        "events/s at 1024 CPUs / at 2 CPUs ({kernel}): {cpu:.2} (CPU time), {wall:.2} (wall); \
         target at least 0.7 by wall time: {}\n",
        if wall >= 0.7 { "met" } else { "not met" }
    );
    grid
}

/// Part 3: the bare heap at the 2- and 1024-CPU rows' mean pending counts.
fn heaps(grid: &Grid) {
    let r2 = grid.get(2, 1);
    let pending = (r2.pending.round() as usize).max(1);
    let heap = in_child(&["heap", &pending.to_string()]);
    println!(
        "\n== bare binary-heap DES at the 2-CPU run's mean pending count ({pending}, {}) ==\n\
         {:.2} M pop+push per wall-s (best chunk) [{:.2} M per CPU-s]; engine on 2 CPUs \
         {:.2} M events per wall-s (best run) = {:.2}x the heap [CPU-s: {:.2}x]",
        grid.kernel,
        heap[0] / 1e6,
        heap[1] / 1e6,
        r2.events / r2.wall / 1e6,
        r2.events / r2.wall / heap[0],
        r2.events / r2.cpu / heap[1],
    );
    let r1024 = grid.get(1024, 512);
    let pending = (r1024.pending.round() as usize).max(1);
    let heap1024 = in_child(&["heap", &pending.to_string()]);
    println!(
        "\n== bare binary-heap DES at the 1024-CPU run's mean pending count ({pending}) ==\n\
         {:.2} M pop+push per wall-s (best chunk) [{:.2} M per CPU-s] = {:.2}x the heap at {} \
         pending [CPU-s: {:.2}x]; engine on 1024 CPUs {:.2} M events per CPU-s = {:.2}x \
         this heap",
        heap1024[0] / 1e6,
        heap1024[1] / 1e6,
        heap1024[0] / heap[0],
        (r2.pending.round() as usize).max(1),
        heap1024[1] / heap[1],
        r1024.events / r1024.cpu / 1e6,
        r1024.events / r1024.cpu / heap1024[1],
    );
}

/// One hackbench row, as `child_hackbench` prints it.
#[derive(Clone, Copy)]
struct Row {
    events: f64,
    msgs: f64,
    setup: f64,
    wall: f64,
    cpu: f64,
    peak: f64,
    pending: f64,
}

impl Row {
    fn run(sh: &str, loops: u32, reps: u32, groups: u32, kernel: &str) -> Row {
        let v = in_child(&[
            "hackbench",
            sh,
            &loops.to_string(),
            &reps.to_string(),
            &groups.to_string(),
            kernel,
        ]);
        Row {
            events: v[0],
            msgs: v[1],
            setup: v[2],
            wall: v[3],
            cpu: v[4],
            peak: v[5],
            pending: v[6],
        }
    }

    /// Nanoseconds per event: of CPU time (mean) and of wall time (best run).
    fn ns(&self) -> (f64, f64) {
        (self.cpu / self.events * 1e9, self.wall / self.events * 1e9)
    }
}

/// Rows by (CPUs, groups), with the number of runs each was measured over,
/// under one kernel preset.
struct Grid {
    kernel: &'static str,
    rows: Vec<(u32, u32, u32, Row)>,
}

impl Grid {
    fn insert(&mut self, cpus: u32, groups: u32, reps: u32, r: Row) {
        self.rows.push((cpus, groups, reps, r));
    }

    fn get(&self, cpus: u32, groups: u32) -> Row {
        self.rows
            .iter()
            .find(|e| e.0 == cpus && e.1 == groups)
            .unwrap()
            .3
    }
}

fn shape_of(cpus: u32) -> &'static str {
    match cpus {
        2 => "1x2x1",
        448 => "4x56x2",
        1024 => "8x64x2",
        _ => unreachable!(),
    }
}

/// The machine's size against the workload's: the 448- and 1024-CPU
/// machines with a small workload (1 and 16 groups: 40 and 640 tasks) and
/// the 2-CPU machine with their big ones (CPUs / 2 groups), so that the
/// per-event cost c(CPUs, groups) of the main table's 2 → N step (1 → N/2
/// groups) splits into a machine factor, c(N, 1) / c(2, 1), a workload
/// factor, c(2, N/2) / c(2, 1), and what is left, their interaction.
/// Rows already in `grid` (from the main table) are not run again; reps
/// are chosen so that each row runs for a few tenths of a second or more.
fn machine_vs_workload(grid: &mut Grid, loops: u32, kernel: &'static str) {
    println!(
        "\n== machine size against workload size: hackbench pipe thread -l {loops}, {kernel} ==\n\
         (tasks = 40 per group; CPU-time rates are the mean over the row's runs (event loop only),\n\
         wall rates the best run; ns/event = CPU time [wall] per event)"
    );
    println!(
        "{:>6} {:>9} {:>6} {:>6} {:>4} {:>9} {:>7} {:>22} {:>18} {:>9} {:>9}",
        "CPUs",
        "shape",
        "groups",
        "tasks",
        "runs",
        "events",
        "ev/msg",
        "events/s [wall]",
        "ns/event [wall]",
        "peak MiB",
        "pending"
    );
    let rows: [(u32, u32, u32); 10] = [
        (2, 1, 50),
        (2, 16, 20),
        (2, 224, 1),
        (2, 512, 1),
        (448, 1, 50),
        (448, 16, 5),
        (448, 224, 1),
        (1024, 1, 50),
        (1024, 16, 3),
        (1024, 512, 1),
    ];
    for (cpus, groups, reps) in rows {
        let sh = shape_of(cpus);
        let (r, reps) = match grid.rows.iter().find(|e| e.0 == cpus && e.1 == groups) {
            Some(e) => (e.3, e.2),
            None => {
                let r = Row::run(sh, loops, reps, groups, kernel);
                grid.insert(cpus, groups, reps, r);
                (r, reps)
            }
        };
        let (ns, wns) = r.ns();
        println!(
            "{cpus:>6} {sh:>9} {groups:>6} {:>6} {reps:>4} {:>8.3}M {:>7.3} {:>10.2}M [{:>7.2}M] {:>8.0} [{:>7.0}] {:>9.1} {:>9.1}",
            groups * 40,
            r.events / 1e6,
            r.events / r.msgs,
            r.events / r.cpu / 1e6,
            r.events / r.wall / 1e6,
            ns,
            wns,
            r.peak,
            r.pending,
        );
    }
    println!(
        "\nSplit of the per-event slowdown S = c(N CPUs, N/2 groups) / c(2 CPUs, 1 group),\n\
         c = time per event, into machine M = c(N, 1) / c(2, 1) (same 1-group workload,\n\
         bigger machine), workload W = c(2, N/2) / c(2, 1) (same 2-CPU machine, bigger\n\
         workload) and interaction I = S / (M W) (the machine's extra cost with the big\n\
         workload over that with the small one); shares are of ln S. The other order\n\
         (W' = c(N, N/2) / c(N, 1), M' = c(N, N/2) / c(2, N/2)) gives S = M W' = M' W."
    );
    for n in [448, 1024] {
        for (clock, pick) in [
            ("CPU time", (|r: &Row| r.ns().0) as fn(&Row) -> f64),
            ("wall", |r: &Row| r.ns().1),
        ] {
            let c = |cpus, groups| pick(&grid.get(cpus, groups));
            let s = c(n, n / 2) / c(2, 1);
            let m = c(n, 1) / c(2, 1);
            let w = c(2, n / 2) / c(2, 1);
            let i = s / (m * w);
            let m16 = c(n, 16) / c(2, 16);
            let share = |x: f64| 100.0 * x.ln() / s.ln();
            println!(
                "2 -> {n} CPUs, {clock:>8}: S = {s:.2}x (events/s ratio {:.2}) = M {m:.2}x \
                 * W {w:.2}x * I {i:.2}x; shares of ln S: machine {:.0} %, workload {:.0} %, \
                 interaction {:.0} %; M' = {:.2}x at {} groups, M16 = {m16:.2}x (c(N, 16) / c(2, 16)), \
                 W' = {:.2}x on {n} CPUs",
                1.0 / s,
                share(m),
                share(w),
                share(i),
                c(n, n / 2) / c(2, n / 2),
                n / 2,
                c(n, n / 2) / c(n, 1),
            );
        }
    }
}
