//! Deep-runqueue hackbench (performance at scale, `rq->cfs_tasks`): hackbench pipe
//! thread with an explicit group count, so a small machine holds long
//! runqueues (e.g. 2 CPUs, 512 groups = 20,480 tasks). Prints
//! `events wall_s cpu_s status digest`, the digest an FNV-1a hash of
//! every metric's name and value bits (to compare two builds' results).
//!
//! `cargo run --release --example deep_rq -- SHAPE GROUPS LOOPS [KERNEL
//! [POLICY]]`, SHAPE as `1x2x1` (sockets x cores x threads), KERNEL a preset
//! name (default `v3.8`), POLICY a `balance_policy` (default the preset's).

use schedlab::engine::Sim;
use schedlab::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use schedlab::{CostModel, Fields, Kernel, Machine, RunOptions, Value};
use std::time::Instant;

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: deep_rq SHAPE GROUPS LOOPS [KERNEL]";
    assert!(a.len() >= 3, "{usage}");
    let v: Vec<u32> = a[0].split('x').map(|x| x.parse().expect(usage)).collect();
    let m = Machine::new(v[0], v[1], v[2], None, None).unwrap();
    let groups: u32 = a[1].parse().expect(usage);
    let loops: u32 = a[2].parse().expect(usage);
    let mut k = Kernel::preset(a.get(3).map_or("v3.8", |s| s.as_str())).unwrap();
    if let Some(p) = a.get(4) {
        k.set("balance_policy", &Value::Str(p.clone())).unwrap();
    }
    let c = CostModel::for_machine(&m);
    let w = Hackbench::new(HackbenchParams::perf(
        groups,
        loops,
        Ipc::Pipe,
        Mode::Thread,
    ))
    .unwrap();
    let opts = RunOptions {
        seed: 1,
        duration_ns: None,
        trace_limit: None,
        sample_interval_ns: 100_000_000,
        max_sample_bytes: 0,
        latency: false,
        groups: Vec::new(),
    };
    let sim = Sim::new(&m, &k, &c, Box::new(w), opts).unwrap();
    let t0 = Instant::now();
    let c0 = cpu_s();
    let r = sim.run(&|| false);
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), cpu_s() - c0);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (n, v) in &r.metrics {
        for b in n.bytes().chain(v.to_bits().to_le_bytes()) {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!(
        "{} {:.3} {:.3} {} {h:016x}",
        r.metric("events").unwrap(),
        wall,
        cpu,
        r.status.name()
    );
}

/// This thread's CPU time (s), from /proc/thread-self/schedstat.
fn cpu_s() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(f64::NAN)
        / 1e9
}
