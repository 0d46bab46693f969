//! Criterion benchmarks of the fixed scenarios (`cargo bench --bench
//! scenarios`): wall time per run, with criterion's statistics, for the
//! `vm-2` hackbench variants, the demo's VolanoMark case and seed case 4's
//! scale. `benches/engine.rs` and `scripts/dev/bench.py` print the
//! derived figures (sim-s per wall-s, events per s, the real kernel beside).

use criterion::{criterion_group, criterion_main, Criterion};
use schedlab::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use schedlab::workload::volano::{Volano, VolanoParams};
use schedlab::Workload;
use schedlab::{simulate, CostModel, Kernel, Machine, RunOptions};
use std::hint::black_box;

fn run(machine: &Machine, kernel: &Kernel, w: Box<dyn Workload>) -> f64 {
    let opts = RunOptions {
        seed: 1,
        duration_ns: Some(600_000_000_000),
        trace_limit: None,
        sample_interval_ns: 100_000_000,
        max_sample_bytes: 0,
        // SCHEDLAB_BENCH_LATENCY=1: the same runs with latency histograms on
        latency: std::env::var_os("SCHEDLAB_BENCH_LATENCY").is_some(),
        groups: Vec::new(),
    };
    let r = simulate(
        machine,
        kernel,
        &CostModel::for_machine(machine),
        w,
        opts,
        &|| false,
    )
    .unwrap();
    r.metric("events").unwrap()
}

fn hackbench(groups: u32, loops: u32, ipc: Ipc, mode: Mode) -> Box<dyn Workload> {
    Box::new(Hackbench::new(HackbenchParams::perf(groups, loops, ipc, mode)).unwrap())
}

fn scenarios(c: &mut Criterion) {
    let vm2 = Machine::preset("vm-2").unwrap();
    let k38 = Kernel::v3_8();
    let mut g = c.benchmark_group("vm-2 hackbench -g 10 -l 50");
    g.sample_size(10);
    for (ipc, mode) in [
        (Ipc::Socket, Mode::Process),
        (Ipc::Socket, Mode::Thread),
        (Ipc::Pipe, Mode::Process),
        (Ipc::Pipe, Mode::Thread),
    ] {
        g.bench_function(format!("{ipc:?} {mode:?}"), |b| {
            b.iter(|| black_box(run(&vm2, &k38, hackbench(10, 50, ipc, mode))))
        });
    }
    g.finish();

    let core2 = Machine::preset("core2-2s").unwrap();
    let rc1 = Kernel {
        compat_yield: true,
        ..Kernel::v2_6_37_rc1()
    };
    let mut g = c.benchmark_group("core2-2s VolanoMark");
    g.sample_size(10);
    g.bench_function("10 rooms x 20 users x 20, rc1", |b| {
        b.iter(|| {
            let w = Volano::new(VolanoParams::new(10, 20, 20)).unwrap();
            black_box(run(&core2, &rc1, Box::new(w)))
        })
    });
    g.finish();

    let skl = Machine::preset("skl-sp-2s").unwrap();
    let mut g = c.benchmark_group("skl-sp-2s hackbench");
    g.sample_size(10);
    g.bench_function("-g 56 -l 20 pipe thread", |b| {
        b.iter(|| black_box(run(&skl, &k38, hackbench(56, 20, Ipc::Pipe, Mode::Thread))))
    });
    g.finish();
}

criterion_group!(benches, scenarios);
criterion_main!(benches);
