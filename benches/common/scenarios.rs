//! The bench scenarios, declared once for the Rust benches that run them
//! (`benches/scenarios.rs` times them with criterion, `benches/instructions.rs`
//! counts their instructions; `scripts/dev/bench.py` is their Python twin):
//! the four `vm-2` hackbench variants, VolanoMark on `core2-2s` and
//! hackbench at seed case 4's scale on `skl-sp-2s`.

use schedlab::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use schedlab::workload::volano::{Volano, VolanoParams};
use schedlab::{Kernel, RunOptions, Workload};

/// The scenarios by name.
#[allow(dead_code)]
pub const NAMES: [&str; 6] = [
    "vm2-socket-process",
    "vm2-socket-thread",
    "vm2-pipe-process",
    "vm2-pipe-thread",
    "core2-volano",
    "skl-pipe-thread",
];

/// Scenario `name`'s machine preset and workload, at the quick sizes (`-l 50`;
/// VolanoMark 10 × 20 × 20; `skl-sp-2s` `-l 20`) or with `full` the full
/// ones (200 loops, 100 messages, 100 loops).
pub fn scenario(name: &str, full: bool) -> (&'static str, Box<dyn Workload>) {
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

/// Kernel preset `preset` with the change scenario `name` carries
/// (VolanoMark runs with `compat_yield`, as the seed case does).
pub fn kernel(name: &str, preset: &str) -> Kernel {
    let mut k = Kernel::preset(preset).unwrap();
    if name == "core2-volano" {
        k.compat_yield = true;
    }
    k
}

/// The run options of every scenario run: seed 1, no vmstat samples, no
/// trace; `SCHEDLAB_BENCH_LATENCY=1` turns latency histograms on.
pub fn opts() -> RunOptions {
    RunOptions {
        seed: 1,
        duration_ns: Some(600_000_000_000),
        trace_limit: None,
        sample_interval_ns: 100_000_000,
        max_sample_bytes: 0,
        latency: std::env::var_os("SCHEDLAB_BENCH_LATENCY").is_some(),
        groups: Vec::new(),
    }
}
