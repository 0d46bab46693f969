//! `Kthreads` end to end: the machine's RT kernel threads are tasks of the
//! RT class beside a workload, and the run neither waits for them nor
//! misses the workload's own deadlock because of them.

use crate::cost::CostModel;
use crate::error::CoreResult;
use crate::kernel::Kernel;
use crate::result::{SimResult, Status};
use crate::sched::rt::RtPolicy;
use crate::sched::task::TaskId;
use crate::topology::Machine;
use crate::trace::{TraceKind, PREV_STATE_SLEEPING};
use crate::workload::rt_kthreads::RtKthreads;
use crate::workload::{user, Action, Ctx, TaskSpec, Workload};
use crate::{simulate, RunOptions};

/// One task that computes `work_ns` and exits, or blocks for good.
struct One {
    work_ns: Option<u64>,
    done: bool,
    rt: RtKthreads,
}

impl Workload for One {
    fn name(&self) -> &'static str {
        "one"
    }
    fn roles(&self) -> &'static [&'static str] {
        &["worker"]
    }
    fn validate(&self, _: &Machine) -> CoreResult<()> {
        Ok(())
    }
    fn init(&mut self, ctx: &mut Ctx) {
        ctx.spawn(TaskSpec::process("worker", "worker".into(), 0, None));
    }
    fn step(&mut self, _t: TaskId, _ctx: &mut Ctx) -> Action {
        match self.work_ns {
            None => Action::Block,
            Some(_) if self.done => Action::Exit,
            Some(ns) => {
                self.done = true;
                user(ns)
            }
        }
    }
    fn nr_tasks(&self) -> u64 {
        1
    }
    fn finite(&self) -> bool {
        true
    }
    fn metrics(&self, _: u64) -> Vec<(&'static str, f64)> {
        vec![("worker_done", f64::from(u8::from(self.done)))]
    }
    fn rt_kthreads(&self) -> Option<&RtKthreads> {
        Some(&self.rt)
    }
}

fn threads() -> RtKthreads {
    RtKthreads {
        watchdog: true,
        watchdog_period_ns: 1_000_000,
        watchdog_run_ns: 20_000,
        irq_threads: 3,
        irq_cpus: 2,
        irq_prio: 50,
        irq_policy: RtPolicy::Rr,
        irq_period_ns: 500_000,
        irq_run_ns: 30_000,
    }
}

fn run(work_ns: Option<u64>) -> SimResult {
    let w = Box::new(One {
        work_ns,
        done: false,
        rt: threads(),
    });
    let opts = RunOptions {
        seed: 3,
        trace_limit: Some(1_000_000),
        ..Default::default()
    };
    let m = Machine::new(1, 2, 1, None, None).unwrap();
    simulate(
        &m,
        &Kernel::v6_18(),
        &CostModel::default(),
        w,
        opts,
        &|| false,
    )
    .unwrap()
}

/// When task `t` first ran (`sched_switch` to it) and first slept after
/// that (`sched_switch` from it, prev_state S), in ns.
fn first_run(r: &SimResult, t: usize) -> (u64, u64) {
    let tr = r.trace.as_ref().expect("a trace");
    let pid = t as i32 + 1;
    let is_switch = |k: usize| tr.kind[k] == TraceKind::Switch as u8;
    let rows = 0..tr.time_ns.len();
    let first_in = rows
        .clone()
        .find(|&k| is_switch(k) && tr.b[k] == pid)
        .expect("it ran");
    let first_sleep = rows
        .skip(first_in)
        .find(|&k| is_switch(k) && tr.pid[k] == pid && tr.a[k] == PREV_STATE_SLEEPING)
        .expect("it slept");
    (tr.time_ns[first_in], tr.time_ns[first_sleep])
}

#[test]
fn the_threads_are_tasks_and_the_run_ends_without_them() {
    let r = run(Some(20_000_000));
    assert_eq!(r.status, Status::Ok);
    // The worker's 20 ms and the threads' share of its CPU, not more.
    let elapsed = r.elapsed_ns as f64 / 1e6;
    assert!((20.0..30.0).contains(&elapsed), "{elapsed} ms");
    let t = &r.tasks;
    let names: Vec<&str> = t.name.iter().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "worker",
            "watchdog/0",
            "watchdog/1",
            "irq/0-schedlab",
            "irq/1-schedlab",
            "irq/2-schedlab"
        ]
    );
    assert_eq!(
        &t.role[1..],
        [
            "watchdog",
            "watchdog",
            "irq_thread",
            "irq_thread",
            "irq_thread"
        ]
    );
    // p->prio = 99 - rt_priority: FIFO-99 watchdogs, the IRQ threads' 50.
    assert_eq!(&t.prio[1..], [0, 0, 49, 49, 49]);
    // each thread ran bursts of system time, woken again and again
    for i in 1..t.name.len() {
        assert!(
            t.sys_s[i] > 0.0 && t.user_s[i] == 0.0,
            "{}: sys {} user {} wakeups {}",
            t.name[i],
            t.sys_s[i],
            t.user_s[i],
            t.wakeups[i]
        );
        assert!(
            t.wakeups[i] >= 10,
            "{}: {} wake-ups",
            t.name[i],
            t.wakeups[i]
        );
    }
    // They existed asleep before the run: each sleeps once per wake-up
    // (the last may still be running), with no run at creation.
    for i in 1..t.name.len() {
        let (sleeps, wakes) = (t.voluntary_cs[i], t.wakeups[i]);
        assert!(
            sleeps == wakes || sleeps + 1 == wakes,
            "{}: {sleeps} {wakes}",
            t.name[i]
        );
        // Its first sleep comes a whole burst after it first ran at the
        // earliest (20 µs for a watchdog, 30 µs for an IRQ thread).
        let burst = if t.role[i] == "watchdog" {
            20_000
        } else {
            30_000
        };
        let (first_in, first_sleep) = first_run(&r, i);
        assert!(
            first_sleep - first_in >= burst,
            "{}: ran at {first_in} ns, slept at {first_sleep} ns",
            t.name[i]
        );
    }
    let m = |k: &str| r.metrics.iter().find(|(n, _)| n == k).map(|(_, v)| *v);
    assert_eq!(m("worker_done"), Some(1.0));
    assert!(m("rt_runs").unwrap() >= 60.0, "{:?}", m("rt_runs"));
    // The workload's figures are its own: one fork, the worker's switches
    // and CPU time only.
    assert_eq!(m("forks"), Some(1.0));
    let cs = (t.voluntary_cs[0] + t.involuntary_cs[0]) as f64;
    assert_eq!(m("context_switches"), Some(cs));
    let clock = m("task_clock_s").unwrap();
    assert!((clock - t.cpu_s[0]).abs() < 1e-9, "{clock} {}", t.cpu_s[0]);
}

#[test]
fn a_deadlocked_workload_beside_the_threads_is_still_a_deadlock() {
    let r = run(None);
    assert_eq!(r.status, Status::Deadlock);
    assert!(r.elapsed_ns < 5_000_000, "{} ns", r.elapsed_ns);
}
