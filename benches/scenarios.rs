//! Criterion benchmarks of the fixed scenarios (`cargo bench --bench
//! scenarios`): wall time per run, with criterion's statistics, for the
//! `vm-2` hackbench variants, the demo's VolanoMark case and seed case 4's
//! scale. `benches/engine.rs` and `scripts/dev/bench.py` print the
//! derived figures (sim-s per wall-s, events per s, the real kernel beside).

use criterion::{criterion_group, criterion_main, Criterion};
use schedlab::Workload;
use schedlab::{simulate, CostModel, Kernel, Machine};
use std::hint::black_box;

#[path = "common/scenarios.rs"]
mod scenarios;
use scenarios::{kernel, opts, scenario};

fn run(machine: &Machine, kernel: &Kernel, w: Box<dyn Workload>) -> f64 {
    let c = CostModel::for_machine(machine);
    let r = simulate(machine, kernel, &c, w, opts(), &|| false).unwrap();
    r.metric("events").unwrap()
}

/// Scenario `name` (quick size) under kernel preset `preset`, timed.
fn bench(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    id: &str,
    name: &str,
    preset: &str,
) {
    let m = Machine::preset(scenario(name, false).0).unwrap();
    let k = kernel(name, preset);
    g.bench_function(id, |b| {
        b.iter(|| black_box(run(&m, &k, scenario(name, false).1)))
    });
}

fn scenarios(c: &mut Criterion) {
    let mut g = c.benchmark_group("vm-2 hackbench -g 10 -l 50");
    g.sample_size(10);
    for (id, name) in [
        ("Socket Process", "vm2-socket-process"),
        ("Socket Thread", "vm2-socket-thread"),
        ("Pipe Process", "vm2-pipe-process"),
        ("Pipe Thread", "vm2-pipe-thread"),
    ] {
        bench(&mut g, id, name, "v3.8");
    }
    g.finish();

    let mut g = c.benchmark_group("core2-2s VolanoMark");
    g.sample_size(10);
    bench(
        &mut g,
        "10 rooms x 20 users x 20, rc1",
        "core2-volano",
        "v2.6.37-rc1",
    );
    g.finish();

    let mut g = c.benchmark_group("skl-sp-2s hackbench");
    g.sample_size(10);
    bench(&mut g, "-g 56 -l 20 pipe thread", "skl-pipe-thread", "v3.8");
    g.finish();
}

criterion_group!(benches, scenarios);
criterion_main!(benches);
