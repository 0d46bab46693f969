//! Engine invariants: CPU-time conservation, weight-proportional shares,
//! the 2.6.23 compat_yield example, determinism, bounded traces.

use crate::cost::CostModel;
use crate::kernel::Kernel;
use crate::result::{SimResult, Status};
use crate::topology::Machine;
use crate::workload::spinners::{Dist, SpinnerTask, Spinners};
use crate::{simulate, RunOptions};

fn spinner(nice: i32) -> SpinnerTask {
    SpinnerTask {
        nice,
        run_ns: None,
        sleep_ns: None,
        cpus: None,
        yields: false,
    }
}

fn run(
    machine: &Machine,
    kernel: &Kernel,
    tasks: Vec<SpinnerTask>,
    dist: Dist,
    secs: f64,
    seed: u64,
) -> SimResult {
    let opts = RunOptions {
        seed,
        duration_ns: Some((secs * 1e9) as u64),
        trace_limit: None,
        sample_interval_ns: 100_000_000,
        max_sample_bytes: crate::limits::MAX_VMSTAT_BYTES,
        latency: false,
        groups: Vec::new(),
    };
    run_spinners(machine, kernel, &CostModel::default(), tasks, dist, opts)
}

/// Spinners under explicit costs and run options.
fn run_spinners(
    machine: &Machine,
    kernel: &Kernel,
    costs: &CostModel,
    tasks: Vec<SpinnerTask>,
    dist: Dist,
    opts: RunOptions,
) -> SimResult {
    let w = Spinners::new(tasks, dist).unwrap();
    simulate(machine, kernel, costs, Box::new(w), opts, &|| false).unwrap()
}

fn one_cpu() -> Machine {
    Machine::new(1, 1, 1, None, None).unwrap()
}

fn share(r: &SimResult, a: usize, b: usize) -> f64 {
    r.tasks.cpu_s[a] / r.tasks.cpu_s[b]
}

#[test]
fn cpu_time_is_conserved_per_cpu() {
    let m = Machine::preset("nhm-ep").unwrap();
    let tasks: Vec<SpinnerTask> = (0..24)
        .map(|i| SpinnerTask {
            nice: (i % 5) - 2,
            run_ns: Some(300_000 + 10_000 * i as u64),
            sleep_ns: Some(200_000 + 50_000 * (i % 3) as u64),
            cpus: None,
            yields: i % 4 == 0,
        })
        .collect();
    let r = run(&m, &Kernel::v3_8(), tasks, Dist::Exp, 0.5, 3);
    assert_eq!(r.status, Status::Ok);
    let elapsed = r.elapsed_ns as f64 / 1e9;
    assert_eq!(r.elapsed_ns, 500_000_000);
    for c in 0..m.nr_cpus() {
        let total = r.cpus.user_s[c] + r.cpus.sys_s[c] + r.cpus.idle_s[c];
        assert!(
            (total - elapsed).abs() < 1e-9,
            "cpu {c}: {total} vs {elapsed}"
        );
    }
    // Task time equals CPU busy time.
    let busy: f64 = (0..m.nr_cpus())
        .map(|c| r.cpus.user_s[c] + r.cpus.sys_s[c])
        .sum();
    let task: f64 = r.tasks.cpu_s.iter().sum();
    let idle_overhead = busy - task; // overhead consumed while no task ran
    assert!(
        idle_overhead >= -1e-9 && idle_overhead < 0.01 * busy,
        "{busy} {task}"
    );
    // vmstat rows cover the run.
    let covered: f64 = r.vmstat.interval_s.iter().sum();
    assert!((covered - elapsed).abs() < 1e-9);
    assert_eq!(r.timeline.shape(), &[16, 5]);
}

#[test]
fn nice_weights_set_cpu_shares() {
    let k = Kernel::v2_6_36();
    let r = run(
        &one_cpu(),
        &k,
        vec![spinner(0), spinner(5)],
        Dist::Fixed,
        10.0,
        1,
    );
    let ratio = share(&r, 0, 1);
    let want = 1024.0 / 335.0;
    assert!(
        (ratio / want - 1.0).abs() < 0.01,
        "nice 0:5 = {ratio}, want {want}"
    );

    let r = run(
        &one_cpu(),
        &k,
        vec![spinner(0), spinner(-15)],
        Dist::Fixed,
        60.0,
        1,
    );
    let ratio = share(&r, 1, 0);
    let want = 29154.0 / 1024.0;
    assert!(
        (ratio / want - 1.0).abs() < 0.01,
        "nice -15:0 = {ratio}, want {want}"
    );
}

fn yield_loop() -> SpinnerTask {
    SpinnerTask {
        yields: true,
        ..spinner(0)
    }
}

#[test]
fn compat_yield_matches_the_2_6_23_example() {
    let k = Kernel::v2_6_36();
    let r = run(
        &one_cpu(),
        &k,
        vec![yield_loop(), spinner(0)],
        Dist::Fixed,
        2.0,
        1,
    );
    let frac = r.tasks.cpu_s[0] / (r.tasks.cpu_s[0] + r.tasks.cpu_s[1]);
    assert!(
        (frac - 0.5).abs() < 0.05,
        "compat_yield=0: yielder got {frac}"
    );

    let k = Kernel {
        compat_yield: true,
        ..Kernel::v2_6_36()
    };
    let r = run(
        &one_cpu(),
        &k,
        vec![yield_loop(), spinner(0)],
        Dist::Fixed,
        2.0,
        1,
    );
    let frac = r.tasks.cpu_s[0] / (r.tasks.cpu_s[0] + r.tasks.cpu_s[1]);
    assert!(frac < 0.02, "compat_yield=1: yielder got {frac}");
}

#[test]
fn same_seed_same_numbers() {
    let m = Machine::preset("core2-2s").unwrap();
    let tasks = || {
        (0..12)
            .map(|i| SpinnerTask {
                nice: 0,
                run_ns: Some(100_000 * (1 + i % 3)),
                sleep_ns: Some(150_000),
                cpus: None,
                yields: false,
            })
            .collect::<Vec<_>>()
    };
    let a = run(&m, &Kernel::v3_8(), tasks(), Dist::Exp, 0.2, 42);
    let b = run(&m, &Kernel::v3_8(), tasks(), Dist::Exp, 0.2, 42);
    let c = run(&m, &Kernel::v3_8(), tasks(), Dist::Exp, 0.2, 43);
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.tasks.cpu_s, b.tasks.cpu_s);
    assert_ne!(a.metrics, c.metrics);
}

#[test]
fn spinners_preempt_each_other_at_slice_boundaries() {
    // Two nice-0 spinners on one CPU: 6 ms period, 3 ms slices: ~333 switches/s.
    let r = run(
        &one_cpu(),
        &Kernel::v2_6_36(),
        vec![spinner(0), spinner(0)],
        Dist::Fixed,
        1.0,
        1,
    );
    let cs = r.metric("context_switches").unwrap();
    assert!((250.0..=400.0).contains(&cs), "{cs}");
    assert_eq!(r.metric("voluntary_cs"), Some(0.0));
}

#[test]
fn pinning_is_honoured() {
    let m = Machine::preset("core2-2s").unwrap();
    let tasks = (0..4)
        .map(|_| SpinnerTask {
            cpus: Some(vec![3]),
            ..spinner(0)
        })
        .collect();
    let r = run(&m, &Kernel::v3_8(), tasks, Dist::Fixed, 0.1, 1);
    for c in 0..8 {
        // Other CPUs may spend system time trying to balance, never user time.
        if c == 3 {
            assert!(r.cpus.user_s[c] > 0.099);
        } else {
            assert_eq!(r.cpus.user_s[c], 0.0);
        }
    }
    assert_eq!(r.metric("cpu_migrations"), Some(0.0));
}

#[test]
fn trace_is_bounded_and_reports_the_drop() {
    let opts = RunOptions {
        seed: 1,
        duration_ns: Some(1_000_000_000),
        trace_limit: Some(50),
        sample_interval_ns: 100_000_000,
        max_sample_bytes: crate::limits::MAX_VMSTAT_BYTES,
        latency: false,
        groups: Vec::new(),
    };
    let r = run_spinners(
        &one_cpu(),
        &Kernel::v3_8(),
        &CostModel::default(),
        vec![spinner(0), spinner(0)],
        Dist::Fixed,
        opts,
    );
    let tr = r.trace.as_ref().unwrap();
    assert_eq!(tr.len(), 50);
    assert!(tr.dropped > 0);
    assert_eq!(r.metric("trace_dropped"), Some(tr.dropped as f64));
}

#[test]
fn cancellation_stops_the_run() {
    let w = Spinners::new(vec![spinner(0), spinner(0)], Dist::Fixed).unwrap();
    let opts = RunOptions {
        duration_ns: Some(100_000_000_000),
        ..RunOptions::default()
    };
    let r = simulate(
        &one_cpu(),
        &Kernel::v3_8(),
        &CostModel::default(),
        Box::new(w),
        opts,
        &|| true,
    )
    .unwrap();
    assert_eq!(r.status, Status::Cancelled);
}

#[test]
fn cancellation_during_setup_is_honoured() {
    // The cancel flag is already set: a 4096-CPU machine's setup stops at
    // its first poll, before the first event, with CoreError::Cancelled.
    let m = Machine::new(1, 4096, 1, None, None).unwrap();
    let polls = std::cell::Cell::new(0u32);
    let cancel = || {
        polls.set(polls.get() + 1);
        true
    };
    let w = Spinners::new(vec![spinner(0)], Dist::Fixed).unwrap();
    let opts = RunOptions {
        duration_ns: Some(1_000_000),
        ..RunOptions::default()
    };
    let err = simulate(
        &m,
        &Kernel::v3_8(),
        &CostModel::default(),
        Box::new(w),
        opts,
        &cancel,
    )
    .unwrap_err();
    assert_eq!(err, crate::CoreError::Cancelled);
    assert_eq!(polls.get(), 1);
}

#[test]
fn endless_workload_needs_a_bound() {
    let w = Spinners::new(vec![spinner(0)], Dist::Fixed).unwrap();
    let err = simulate(
        &one_cpu(),
        &Kernel::v3_8(),
        &CostModel::default(),
        Box::new(w),
        RunOptions::default(),
        &|| false,
    );
    assert!(err.is_err());
}

/// A pipe-like ping-pong: each pair passes a token; the holder computes a
/// burst, wakes its partner (sync) and blocks.
struct PingPong {
    burst_ns: u64,
    rounds: u32,
    done: Vec<u32>,
    computed: Vec<bool>,
}

impl crate::workload::Workload for PingPong {
    fn name(&self) -> &'static str {
        "pingpong"
    }
    fn roles(&self) -> &'static [&'static str] {
        &["task"]
    }
    fn nr_tasks(&self) -> u64 {
        self.done.len() as u64
    }
    fn validate(&self, _: &Machine) -> crate::CoreResult<()> {
        Ok(())
    }
    fn init(&mut self, ctx: &mut crate::workload::Ctx) {
        for i in 0..self.done.len() {
            ctx.spawn(crate::workload::TaskSpec::process(
                "task",
                format!("pp/{i}"),
                0,
                None,
            ));
        }
    }
    fn step(&mut self, t: u32, ctx: &mut crate::workload::Ctx) -> crate::workload::Action {
        use crate::workload::{Action, Work};
        let i = t as usize;
        let partner = t ^ 1;
        if i % 2 == 1 && ctx.now == 0 {
            // the second of a pair waits for the token first
            return Action::Block;
        }
        if !self.computed[i] {
            self.computed[i] = true;
            return Action::Compute {
                ns: self.burst_ns,
                kind: Work::User,
            };
        }
        self.computed[i] = false;
        self.done[i] += 1;
        ctx.wake(partner, true);
        if self.done[i] >= self.rounds {
            Action::Exit
        } else {
            Action::Block
        }
    }
    fn finite(&self) -> bool {
        true
    }
    fn metrics(&self, _: u64) -> Vec<(&'static str, f64)> {
        vec![("rounds", self.done.iter().sum::<u32>() as f64)]
    }
}

#[test]
fn sync_wakeups_keep_a_ping_pong_pair_within_one_llc() {
    let m = Machine::preset("core2-2s").unwrap();
    for k in [Kernel::v2_6_36(), Kernel::v3_8()] {
        let w = PingPong {
            burst_ns: 20_000,
            rounds: 2000,
            done: vec![0; 2],
            computed: vec![false; 2],
        };
        let opts = RunOptions {
            duration_ns: Some(10_000_000_000),
            trace_limit: Some(1 << 20),
            ..RunOptions::default()
        };
        let r = simulate(
            &m,
            &k,
            &CostModel::for_machine(&m),
            Box::new(w),
            opts,
            &|| false,
        )
        .unwrap();
        assert_eq!(r.status, Status::Ok, "{}", k.name);
        assert_eq!(r.metric("rounds"), Some(4000.0));
        // wake_affine() pulled the wakee next to the waker at least once
        // (fork balancing had put the pair in different L2 pairs)
        let migrations = r.metric("cpu_migrations").unwrap();
        assert!(
            (1.0..=4.0).contains(&migrations),
            "{}: {migrations}",
            k.name
        );
        // Every wake-up lands in the waker's LLC (an L2 pair on Core 2).
        let tr = r.trace.as_ref().unwrap();
        let mut checked = 0;
        for i in 0..tr.len() {
            if tr.kind[i] == crate::trace::TraceKind::Wakeup as u8 && tr.time_ns[i] > 1_000_000 {
                let (waker_cpu, target) = (tr.cpu[i] as usize, tr.a[i] as usize);
                assert_eq!(m.cpu(waker_cpu).llc, m.cpu(target).llc, "{}", k.name);
                checked += 1;
            }
        }
        assert!(checked > 1000);
    }
}

#[test]
fn the_sampler_is_bounded_and_says_so() {
    let opts = RunOptions {
        duration_ns: Some(1_000_000_000),
        sample_interval_ns: 1_000_000,
        // ten rows of 2 CPUs (64 + 2·16 bytes each)
        max_sample_bytes: 960,
        latency: false,
        ..RunOptions::default()
    };
    let r = run_spinners(
        &Machine::preset("vm-2").unwrap(),
        &Kernel::v3_8(),
        &CostModel::default(),
        vec![spinner(0), spinner(0)],
        Dist::Fixed,
        opts,
    );
    assert_eq!(
        r.vmstat.time_s.len(),
        11,
        "10 regular rows, then one to the end"
    );
    assert_eq!(r.metric("vmstat_truncated"), Some(1.0));
    let covered: f64 = r.vmstat.interval_s.iter().sum();
    assert!((covered - 1.0).abs() < 1e-9);
}

#[test]
fn a_wake_up_placed_on_another_cpu_pays_the_cache_refill() {
    // Fork balancing puts the pair in different L2 pairs; wake_affine()
    // then pulls a wakee next to its waker. No balancer pull happens, so
    // all refill comes from wake-up placements, and it is run as the
    // task's own (user) time on top of the bursts.
    let m = Machine::preset("core2-2s").unwrap();
    let k = Kernel::v2_6_36();
    let rounds = 500;
    let burst_ns = 20_000;
    let w = PingPong {
        burst_ns,
        rounds,
        done: vec![0; 2],
        computed: vec![false; 2],
    };
    let opts = RunOptions {
        duration_ns: Some(10_000_000_000),
        ..RunOptions::default()
    };
    let costs = CostModel::for_machine(&m);
    let r = simulate(&m, &k, &costs, Box::new(w), opts, &|| false).unwrap();
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.metric("tasks_pulled"), Some(0.0));
    assert!(r.metric("cpu_migrations").unwrap() >= 1.0);
    let refill = r.metric("migration_refill_s").unwrap();
    assert!(refill > 0.0 && refill <= costs.refill_node_ns as f64 * 4e-9);
    let user = r.metric("user_s").unwrap();
    let bursts = 2.0 * rounds as f64 * burst_ns as f64 * 1e-9;
    assert!(
        (user - bursts - refill).abs() < 1e-9,
        "{user} {bursts} {refill}"
    );
}

#[test]
fn without_periodic_samples_the_results_are_the_same() {
    // What a sweep runs: max_sample_bytes 0 queues no Sample events, keeps
    // one whole-run vmstat row, and changes no other number.
    let m = Machine::preset("core2-2s").unwrap();
    let k = Kernel::v2_6_36();
    let run = |max_sample_bytes| {
        let task = SpinnerTask {
            run_ns: Some(200_000),
            sleep_ns: Some(300_000),
            ..spinner(0)
        };
        let opts = RunOptions {
            seed: 3,
            duration_ns: Some(300_000_000),
            trace_limit: None,
            sample_interval_ns: 10_000_000,
            max_sample_bytes,
            latency: false,
            groups: Vec::new(),
        };
        run_spinners(
            &m,
            &k,
            &CostModel::for_machine(&m),
            vec![task; 12],
            Dist::Exp,
            opts,
        )
    };
    let sampled = run(crate::limits::MAX_VMSTAT_BYTES);
    let bare = run(0);
    assert!(sampled.vmstat.time_s.len() > 20);
    assert_eq!(bare.vmstat.time_s.len(), 1);
    let events = |r: &SimResult| r.metric("events").unwrap();
    assert_eq!(
        events(&sampled) - events(&bare),
        sampled.vmstat.time_s.len() as f64 - 1.0
    );
    for (name, v) in &sampled.metrics {
        if name != "events" {
            assert_eq!(bare.metric(name), Some(*v), "{name}");
        }
    }
}

fn hackbench_1x10() -> Box<dyn crate::workload::Workload> {
    use crate::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
    Box::new(
        Hackbench::new(HackbenchParams {
            groups: 1,
            fds: 20,
            loops: 10,
            datasize: 100,
            ipc: Ipc::Socket,
            mode: Mode::Process,
            sndbuf: 212_992,
            skb_overhead: 668,
            parent_wakee_flips: 0,
        })
        .unwrap(),
    )
}

fn vm2_hackbench(costs: &CostModel) -> crate::error::CoreResult<SimResult> {
    let m = Machine::preset("vm-2").unwrap();
    simulate(
        &m,
        &Kernel::v3_8(),
        costs,
        hackbench_1x10(),
        RunOptions::default(),
        &|| false,
    )
}

#[test]
fn a_tick_that_costs_its_whole_period_is_refused() {
    let costs = CostModel {
        tick_ns: 1_000_000,
        ..CostModel::default()
    };
    match vm2_hackbench(&costs) {
        Err(crate::error::CoreError::InvalidValue { param, allowed, .. }) => {
            assert_eq!(param, "tick_ns");
            assert!(allowed.contains("1000000 ns"), "{allowed}");
        }
        other => panic!("expected tick_ns to be refused, got {other:?}"),
    }
}

#[test]
fn overhead_that_leaves_no_cpu_time_stalls_the_run() {
    // 999 999 ns of tick per 1 ms period plus the other overhead: the
    // tasks never run (before the watchdog this run never ended).
    let costs = CostModel {
        tick_ns: 999_999,
        ..CostModel::default()
    };
    let r = vm2_hackbench(&costs).unwrap();
    let Status::Stalled(detail) = &r.status else {
        panic!("expected a stall, got {:?}", r.status);
    };
    assert_eq!(r.status.name(), "stalled");
    assert_eq!(&r.status.detail(), detail);
    assert!(detail.starts_with("no task ran for 1.000 s"), "{detail}");
    assert!(detail.contains("tick_ns=999999 per 1000000 ns"), "{detail}");
    assert!(r.elapsed_ns >= super::WATCHDOG_NS && r.elapsed_ns < 2 * super::WATCHDOG_NS);
    // Deterministic like any other run.
    let again = vm2_hackbench(&costs).unwrap();
    assert_eq!(again.status, r.status);
    assert_eq!(again.elapsed_ns, r.elapsed_ns);
}

#[test]
fn the_watchdog_leaves_ordinary_runs_alone() {
    // Default costs: hackbench finishes.
    let r = vm2_hackbench(&CostModel::default()).unwrap();
    assert_eq!(r.status, Status::Ok);
    // A lone yield loop consumes no burst time but takes steps: progress.
    let r = run(
        &one_cpu(),
        &Kernel::v3_8(),
        vec![yield_loop()],
        Dist::Fixed,
        3.0,
        1,
    );
    assert_eq!(r.status, Status::Ok);
    // Sleeping past the stretch with nothing runnable is not a stall.
    let sleeper = SpinnerTask {
        run_ns: Some(1_000_000),
        sleep_ns: Some(2_500_000_000),
        ..spinner(0)
    };
    let r = run(
        &one_cpu(),
        &Kernel::v3_8(),
        vec![sleeper],
        Dist::Fixed,
        6.0,
        1,
    );
    assert_eq!(r.status, Status::Ok);
    // A long single burst (no step for 5 s) is progress all along.
    let long = SpinnerTask {
        run_ns: Some(5_000_000_000),
        ..spinner(0)
    };
    let r = run(&one_cpu(), &Kernel::v3_8(), vec![long], Dist::Fixed, 8.0, 1);
    assert_eq!(r.status, Status::Ok);
}

/// The power model on (turbo and C-states, sched::power_state): CPU time is
/// still conserved per CPU, the run is deterministic, and bursts end (no
/// burst overrun from re-timing at frequency changes).
#[test]
fn power_model_conserves_cpu_time_and_is_deterministic() {
    let m = Machine::preset("nhm-ep").unwrap();
    let costs = CostModel {
        turbo: true,
        cstates: true,
        ..CostModel::for_machine(&m)
    };
    let tasks: Vec<SpinnerTask> = (0..12)
        .map(|i| SpinnerTask {
            nice: 0,
            run_ns: Some(200_000 + 30_000 * i as u64),
            sleep_ns: Some(300_000 + 70_000 * (i % 4) as u64),
            cpus: None,
            yields: false,
        })
        .collect();
    let opts = RunOptions {
        seed: 5,
        duration_ns: Some(300_000_000),
        ..RunOptions::default()
    };
    let a = run_spinners(
        &m,
        &Kernel::v3_8(),
        &costs,
        tasks.clone(),
        Dist::Exp,
        opts.clone(),
    );
    let b = run_spinners(&m, &Kernel::v3_8(), &costs, tasks, Dist::Exp, opts);
    assert_eq!(a.status, Status::Ok);
    assert_eq!(a.metrics, b.metrics);
    for c in 0..m.nr_cpus() {
        let total = a.cpus.user_s[c] + a.cpus.sys_s[c] + a.cpus.idle_s[c];
        assert!((total - 0.3).abs() < 1e-9, "cpu {c}: {total}");
    }
    let get = |k: &str| a.metrics.iter().find(|(n, _)| n == k).unwrap().1;
    // X5570: 2.933 GHz base, 3.2-3.333 GHz turbo
    assert!((2.933..=3.334).contains(&get("avg_freq_ghz")));
    assert!(get("cstate_exits") > 0.0);
    assert!(get("package_power") > 0.0);
}
