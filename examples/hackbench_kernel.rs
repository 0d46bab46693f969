//! One hackbench run (pipe, threads, groups = CPUs / 2) under a named kernel
//! preset, for instruction counts of the event loop under a kernel other than
//! the scale bench's v3.8 (e.g. `valgrind --tool=callgrind
//! target/release/examples/hackbench_kernel v6.18 1x2x1 200`). Prints
//! `events pops`.

use schedlab::engine::Sim;
use schedlab::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use schedlab::{CostModel, Kernel, Machine, RunOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: hackbench_kernel KERNEL SOCKETSxCORESxTHREADS LOOPS");
        std::process::exit(2);
    }
    let k = Kernel::preset(&args[1]).expect("kernel preset");
    let v: Vec<u32> = args[2].split('x').map(|x| x.parse().unwrap()).collect();
    let m = Machine::new(v[0], v[1], v[2], None, None).unwrap();
    let loops: u32 = args[3].parse().unwrap();
    let c = CostModel::for_machine(&m);
    let groups = (m.nr_cpus() as u32 / 2).max(1);
    let w = Box::new(
        Hackbench::new(HackbenchParams::perf(
            groups,
            loops,
            Ipc::Pipe,
            Mode::Thread,
        ))
        .unwrap(),
    );
    let opts = RunOptions {
        seed: 1,
        duration_ns: None,
        trace_limit: None,
        sample_interval_ns: 100_000_000,
        max_sample_bytes: 0,
    };
    let r = Sim::new(&m, &k, &c, w, opts).unwrap().run(&|| false);
    println!("{} {}", r.metric("events").unwrap(), r.queue_pops);
}
