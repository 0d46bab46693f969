//! Instructions per event (`cargo bench --bench instructions`, part of
//! `make bench`): the bench scenarios (those of `scripts/dev/bench.py` and
//! `benches/scenarios.rs`, at their quick sizes) under `v3.8` and `v6.18`,
//! each run once in a child process under callgrind, counting only the
//! instructions executed inside the event loop (`Sim::run`, callgrind's
//! `--toggle-collect`), so setup, process start and exit are left out.
//! Unlike wall time on a shared VM the count is deterministic: the same
//! binary gives the same figure on every run. Prints figures, asserts
//! nothing; without valgrind on the PATH it says so and stops.
//! `SCHEDLAB_BENCH_LATENCY=1` counts the same runs with latency histograms
//! on, as the other benches take it.
//!
//! `--full`: the full sizes (200 loops, 100 messages; slower under
//! callgrind). One row alone: `--child SCENARIO KERNEL [full]`, which
//! prints `events context_switches`.

use schedlab::engine::Sim;
use schedlab::{CostModel, Machine};

#[path = "common/callgrind.rs"]
mod callgrind;
#[path = "common/scenarios.rs"]
mod scenarios;
use scenarios::{kernel, opts, scenario, NAMES};

fn child(name: &str, preset: &str, full: bool) {
    let (machine, w) = scenario(name, full);
    let m = Machine::preset(machine).unwrap();
    let k = kernel(name, preset);
    let c = CostModel::for_machine(&m);
    let sim = Sim::new(&m, &k, &c, w, opts()).unwrap();
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
    let mut worst: Option<(f64, &str)> = None;
    for name in NAMES {
        let a = count(name, "v3.8", full);
        let b = count(name, "v6.18", full);
        match (a, b) {
            (Some(a), Some(b)) => {
                let (ia, ib) = (a.2 / a.0, b.2 / b.0);
                if worst.is_none_or(|(w, _)| ib / ia > w) {
                    worst = Some((ib / ia, name));
                }
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
    if let Some((w, name)) = worst {
        println!(
            "highest v6.18 / v3.8 instructions per event: {w:.3} ({name}); target at most 1.15: {}",
            if w <= 1.15 { "met" } else { "not met" }
        );
    }
}
