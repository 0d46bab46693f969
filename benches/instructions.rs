//! Instructions per event (`cargo bench --bench instructions`, part of
//! `make bench`): the bench scenarios (those of `scripts/dev/bench.py` and
//! `benches/scenarios.rs`, at their quick sizes) under `v3.8` and `v6.18`,
//! each run once in a child process under callgrind, counting only the
//! instructions executed inside the event loop (`Sim::run`, callgrind's
//! `--toggle-collect`), so setup, process start and exit are left out.
//! Unlike wall time on a shared VM the count is deterministic: the same
//! binary gives the same figure on every run. Prints figures, asserts
//! nothing; without valgrind on the PATH it says so and stops.
//!
//! `--full`: the full sizes (200 loops, 100 messages; slower under
//! callgrind). One row alone: `--child SCENARIO KERNEL [full]`, which
//! prints `events context_switches`.

use schedlab::engine::Sim;
use schedlab::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use schedlab::workload::volano::{Volano, VolanoParams};
use schedlab::Workload;
use schedlab::{CostModel, Kernel, Machine, RunOptions};

#[path = "common/callgrind.rs"]
mod callgrind;

/// The bench scenarios: name, machine preset, the kernel change a
/// scenario carries (VolanoMark's `compat_yield`), and its workload.
const SCENARIOS: [&str; 6] = [
    "vm2-socket-process",
    "vm2-socket-thread",
    "vm2-pipe-process",
    "vm2-pipe-thread",
    "core2-volano",
    "skl-pipe-thread",
];

fn scenario(name: &str, full: bool) -> (&'static str, Box<dyn Workload>) {
    let hb = |groups, loops, ipc, mode| -> Box<dyn Workload> {
        Box::new(Hackbench::new(HackbenchParams::perf(groups, loops, ipc, mode)).unwrap())
    };
    let l = if full { 200 } else { 50 };
    match name {
        "vm2-socket-process" => ("vm-2", hb(10, l, Ipc::Socket, Mode::Process)),
        "vm2-socket-thread" => ("vm-2", hb(10, l, Ipc::Socket, Mode::Thread)),
        "vm2-pipe-process" => ("vm-2", hb(10, l, Ipc::Pipe, Mode::Process)),
        "vm2-pipe-thread" => ("vm-2", hb(10, l, Ipc::Pipe, Mode::Thread)),
        "core2-volano" => (
            "core2-2s",
            Box::new(Volano::new(VolanoParams::new(10, 20, if full { 100 } else { 20 })).unwrap()),
        ),
        "skl-pipe-thread" => (
            "skl-sp-2s",
            hb(56, if full { 100 } else { 20 }, Ipc::Pipe, Mode::Thread),
        ),
        other => panic!("unknown scenario {other}"),
    }
}

fn child(name: &str, kernel: &str, full: bool) {
    let (machine, w) = scenario(name, full);
    let m = Machine::preset(machine).unwrap();
    let mut k = Kernel::preset(kernel).unwrap();
    if name == "core2-volano" {
        k.compat_yield = true;
    }
    let c = CostModel::for_machine(&m);
    let opts = RunOptions {
        seed: 1,
        duration_ns: Some(600_000_000_000),
        trace_limit: None,
        sample_interval_ns: 100_000_000,
        max_sample_bytes: 0,
        latency: false,
        groups: Vec::new(),
    };
    let sim = Sim::new(&m, &k, &c, w, opts).unwrap();
    let r = sim.run(&|| false);
    println!(
        "{} {}",
        r.metric("events").unwrap(),
        r.metric("rq_switches").unwrap()
    );
}

/// One scenario under callgrind: (events, context switches, instructions
/// inside `Sim::run`).
fn count(name: &str, kernel: &str, full: bool) -> Option<(f64, f64, f64)> {
    let mut args = vec!["--child", name, kernel];
    if full {
        args.push("full");
    }
    let (line, ir) = callgrind::count(&args)?;
    let v: Vec<f64> = line
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    Some((v[0], v[1], ir))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(
            &args[i + 1],
            &args[i + 2],
            args.get(i + 3).is_some_and(|a| a == "full"),
        );
        return;
    }
    let full = args.iter().any(|a| a == "--full");
    if !callgrind::available() {
        println!("instructions per event: valgrind is not installed (apt-get install valgrind)");
        return;
    }
    println!(
        "== instructions per event inside Sim::run (callgrind, deterministic), {} sizes ==",
        if full { "full" } else { "quick" }
    );
    println!(
        "{:<20} {:>10} {:>10} {:>9} {:>10} {:>10} {:>9} {:>7} {:>7}",
        "scenario",
        "v3.8 ev",
        "v3.8 cs",
        "v3.8 I/e",
        "v6.18 ev",
        "v6.18 cs",
        "v6.18 I/e",
        "ratio",
        "cs x"
    );
    for name in SCENARIOS {
        let a = count(name, "v3.8", full);
        let b = count(name, "v6.18", full);
        match (a, b) {
            (Some(a), Some(b)) => {
                let (ia, ib) = (a.2 / a.0, b.2 / b.0);
                println!(
                    "{name:<20} {:>10.0} {:>10.0} {ia:>9.0} {:>10.0} {:>10.0} {ib:>9.0} {:>7.3} {:>7.2}",
                    a.0,
                    a.1,
                    b.0,
                    b.1,
                    ib / ia,
                    b.1 / a.1
                );
            }
            _ => println!("{name:<20} (callgrind failed)"),
        }
    }
}
