//! Task attributes (`workload::attrs`) end to end: each policy's semantics
//! on a hand-built two-role workload, under the CFS (v3.8) and EEVDF
//! (v6.18) presets.

use crate::cost::CostModel;
use crate::error::CoreResult;
use crate::kernel::Kernel;
use crate::result::{SimResult, Status};
use crate::sched::rt::RtPolicy;
use crate::sched::task::Policy;
use crate::sched::task::TaskId;
use crate::topology::Machine;
use crate::workload::attrs::{TaskAttrs, WithTasks};
use crate::workload::rt_kthreads::RtKthreads;
use crate::workload::{user, Action, Ctx, TaskSpec, Workload};
use crate::{simulate, RunOptions};

/// Tasks of roles `a`, `b`, `c`: each a CPU hog or a sleeper (sleeps 1 ms,
/// runs 50 us), optionally pinned.
struct Mix {
    tasks: Vec<(&'static str, bool, Option<Vec<u32>>)>,
    slept: Vec<bool>,
    rt: Option<RtKthreads>,
}

const ROLES: &[&str] = &["a", "b", "c"];
const HOG: bool = false;
const SLEEPER: bool = true;

impl Workload for Mix {
    fn name(&self) -> &'static str {
        "mix"
    }
    fn roles(&self) -> &'static [&'static str] {
        ROLES
    }
    fn validate(&self, _: &Machine) -> CoreResult<()> {
        Ok(())
    }
    fn init(&mut self, ctx: &mut Ctx) {
        for (i, (role, _, cpus)) in self.tasks.iter().enumerate() {
            ctx.spawn(TaskSpec::process(
                role,
                format!("{role}/{i}"),
                0,
                cpus.clone(),
            ));
            self.slept.push(false);
        }
    }
    fn step(&mut self, t: TaskId, _ctx: &mut Ctx) -> Action {
        let i = t as usize;
        if !self.tasks[i].1 {
            return user(1_000_000_000);
        }
        self.slept[i] = !self.slept[i];
        if self.slept[i] {
            Action::Sleep { ns: 1_000_000 }
        } else {
            user(50_000)
        }
    }
    fn nr_tasks(&self) -> u64 {
        self.tasks.len() as u64
    }
    fn finite(&self) -> bool {
        false
    }
    fn metrics(&self, _: u64) -> Vec<(&'static str, f64)> {
        vec![]
    }
    fn rt_kthreads(&self) -> Option<&RtKthreads> {
        self.rt.as_ref()
    }
}

type Spec = Vec<(&'static str, bool, Option<Vec<u32>>)>;

fn run(m: &Machine, k: &Kernel, tasks: Spec, attrs: Vec<TaskAttrs>) -> SimResult {
    run_rt(m, k, tasks, attrs, None)
}

fn run_rt(
    m: &Machine,
    k: &Kernel,
    tasks: Spec,
    attrs: Vec<TaskAttrs>,
    rt: Option<RtKthreads>,
) -> SimResult {
    let w = Box::new(Mix {
        tasks,
        slept: vec![],
        rt,
    });
    let opts = RunOptions {
        seed: 1,
        duration_ns: Some(2_000_000_000),
        trace_limit: None,
        sample_interval_ns: 100_000_000,
        max_sample_bytes: crate::limits::MAX_VMSTAT_BYTES,
        latency: false,
        groups: Vec::new(),
    };
    let w: Box<dyn Workload> = if attrs.is_empty() {
        w
    } else {
        Box::new(WithTasks::new(w, attrs).unwrap())
    };
    let r = simulate(m, k, &CostModel::default(), w, opts, &|| false).unwrap();
    assert_eq!(r.status, Status::Ok);
    r
}

fn on(role: &str, p: Policy) -> TaskAttrs {
    TaskAttrs {
        role: Some(role.into()),
        policy: Some(p),
        ..Default::default()
    }
}

fn one_cpu() -> Machine {
    Machine::new(1, 1, 1, None, None).unwrap()
}

/// Task `t`'s mean wait per wake-up, in us (`perf sched latency`'s average).
fn wait_us(r: &SimResult, t: usize) -> f64 {
    r.tasks.wait_s[t] / r.tasks.wakeups[t].max(1) as f64 * 1e6
}

fn presets() -> [Kernel; 2] {
    let k = [Kernel::v3_8(), Kernel::v6_18()];
    assert!(!k[0].idle_preempt_non_idle && k[1].idle_preempt_non_idle);
    k
}

fn hog_and_sleeper() -> Spec {
    vec![("a", HOG, None), ("b", SLEEPER, None)]
}

#[test]
fn batch_and_idle_wakees_never_preempt_on_wake_up() {
    for k in presets() {
        let normal = wait_us(&run(&one_cpu(), &k, hog_and_sleeper(), vec![]), 1);
        assert!(
            normal < 100.0,
            "{}: a normal wakee waits {normal} us",
            k.name
        );
        // As a BATCH or IDLE wakee the sleeper no longer preempts the hog:
        // it waits for the tick's check (hundreds of us on average).
        for p in [Policy::Batch, Policy::Idle] {
            let r = run(&one_cpu(), &k, hog_and_sleeper(), vec![on("b", p)]);
            let w = wait_us(&r, 1);
            assert!(
                w > 200.0 && w > 3.0 * normal,
                "{}: a {p:?} wakee waits {w} us, a normal one {normal} us",
                k.name
            );
        }
    }
}

#[test]
fn an_idle_curr_is_preempted_by_every_non_idle_wakee_from_5x() {
    for k in presets() {
        let batch_on_idle = {
            let attrs = vec![on("a", Policy::Idle), on("b", Policy::Batch)];
            wait_us(&run(&one_cpu(), &k, hog_and_sleeper(), attrs), 1)
        };
        let normal_on_idle = wait_us(
            &run(
                &one_cpu(),
                &k,
                hog_and_sleeper(),
                vec![on("a", Policy::Idle)],
            ),
            1,
        );
        let batch_on_normal = wait_us(
            &run(
                &one_cpu(),
                &k,
                hog_and_sleeper(),
                vec![on("b", Policy::Batch)],
            ),
            1,
        );
        // A normal wakee always preempts an idle curr ("preempted by
        // everybody" / "by non-idle tasks").
        assert!(normal_on_idle < 100.0, "{}: {normal_on_idle} us", k.name);
        if k.idle_preempt_non_idle {
            // 5.x+: a BATCH wakee preempts an idle curr too.
            assert!(
                batch_on_idle < 100.0 && batch_on_normal > 3.0 * batch_on_idle,
                "{}: a batch wakee waits {batch_on_idle} us on an idle curr, \
                 {batch_on_normal} us on a normal one",
                k.name
            );
        } else {
            // 2.6.36-4.x: "Batch and idle tasks do not preempt" comes first.
            assert!(
                batch_on_idle > 200.0,
                "{}: a batch wakee waits {batch_on_idle} us on an idle curr",
                k.name
            );
        }
    }
}

#[test]
fn sched_idle_against_nice_0_shares_3_to_1024() {
    for k in presets() {
        let hogs = || vec![("a", HOG, None), ("b", HOG, None)];
        let r = run(&one_cpu(), &k, hogs(), vec![]);
        let even = r.tasks.cpu_s[1] / r.tasks.cpu_s[0];
        assert!((0.9..1.1).contains(&even), "{}: {even}", k.name);
        let r = run(&one_cpu(), &k, hogs(), vec![on("b", Policy::Idle)]);
        let share = r.tasks.cpu_s[1] / r.tasks.cpu_s[0];
        let want = 3.0 / 1024.0;
        assert!(
            share > want / 2.0 && share < want * 2.0,
            "{}: idle : normal = {share}, expected about {want}",
            k.name
        );
        // nice has no say in a SCHED_IDLE task's weight.
        let niced = TaskAttrs {
            nice: Some(-20),
            ..on("b", Policy::Idle)
        };
        let r2 = run(&one_cpu(), &k, hogs(), vec![niced]);
        assert_eq!(r2.tasks.cpu_s, r.tasks.cpu_s, "{}", k.name);
    }
}

#[test]
fn a_cpu_running_only_idle_tasks_takes_wake_ups_from_6x() {
    // CPU 0: a normal hog; CPU 1: 400 SCHED_IDLE hogs (weight 1200, so the
    // load puts a new task on CPU 0); a normal sleeper free to move. With
    // sched_idle_cpu() (v6.18) the sleeper's wake-ups go to CPU 1 and
    // preempt an idle hog, leaving the normal hog alone; without it (the
    // same kernel, the field off) they stay on CPU 0, where nothing is idle.
    let m = Machine::new(1, 2, 1, None, None).unwrap();
    let tasks = || {
        let mut t = vec![("a", HOG, Some(vec![0]))];
        t.extend((0..400).map(|_| ("b", HOG, Some(vec![1]))));
        t.push(("c", SLEEPER, None));
        t
    };
    let attrs = || vec![on("b", Policy::Idle)];
    // SIS_UTIL off: with both CPUs fully busy it would scan no CPU at all.
    let mut k = Kernel::v6_18();
    k.sis_util = false;
    let on_ = run(&m, &k, tasks(), attrs());
    let mut k_off = k.clone();
    k_off.sched_idle_cpu = false;
    let off = run(&m, &k_off, tasks(), attrs());
    let lost = |r: &SimResult| 2.0 - r.tasks.cpu_s[0];
    assert!(
        lost(&on_) < 0.5 * lost(&off),
        "normal hog's lost CPU time: {} s with sched_idle_cpu, {} s without",
        lost(&on_),
        lost(&off)
    );
}

#[test]
fn rt_throttling_leaves_fair_tasks_5_percent_and_none_at_minus_1() {
    // A watchdog RT thread wanting 99 % of the one CPU, beside a fair hog.
    let rt = RtKthreads {
        watchdog: true,
        watchdog_period_ns: 1_000_000,
        watchdog_run_ns: 990_000,
        irq_threads: 0,
        irq_cpus: 1,
        irq_prio: 50,
        irq_policy: RtPolicy::Fifo,
        irq_period_ns: 1_000_000,
        irq_run_ns: 50_000,
    };
    let hog = || vec![("a", HOG, None)];
    let k = Kernel::v6_18();
    assert_eq!(
        (k.sched_rt_runtime_us, k.sched_rt_period_us),
        (950_000, 1_000_000)
    );
    let r = run_rt(&one_cpu(), &k, hog(), vec![], Some(rt.clone()));
    // 950 ms of RT per 1 s period: the fair hog (its user time; the
    // watchdog is a task of its own, workload::kthreads) gets the rest,
    // about 5 % of the 2 s, and the RT class is throttled about 2 × 40 ms.
    let fair = r.tasks.user_s[0];
    let throttled = r.metric("rt_throttled_s").unwrap();
    assert!((0.07..0.13).contains(&fair), "fair hog ran {fair} s");
    assert!((0.06..0.12).contains(&throttled), "throttled {throttled} s");
    let mut none = k.clone();
    none.sched_rt_runtime_us = -1;
    let r = run_rt(&one_cpu(), &none, hog(), vec![], Some(rt.clone()));
    assert_eq!(r.metric("rt_throttled_s"), Some(0.0));
    // Only the 1 % the watchdog leaves between its runs.
    assert!(
        r.tasks.user_s[0] < 0.05,
        "fair hog ran {} s",
        r.tasks.user_s[0]
    );
    // A shorter period at the same share throttles as much in total.
    let mut short = k.clone();
    short.sched_rt_period_us = 100_000;
    short.sched_rt_runtime_us = 95_000;
    let r = run_rt(&one_cpu(), &short, hog(), vec![], Some(rt));
    assert!(
        (0.07..0.13).contains(&r.tasks.user_s[0]),
        "{}",
        r.tasks.user_s[0]
    );
}

fn runtime(k: &Kernel, us: i64) -> Kernel {
    let mut k = k.clone();
    k.sched_rt_runtime_us = us;
    k
}

fn rt(role: &str, p: Policy, prio: u32) -> TaskAttrs {
    TaskAttrs {
        role: Some(role.into()),
        policy: Some(p),
        rt_priority: Some(prio),
        ..Default::default()
    }
}

#[test]
fn an_rt_wakee_preempts_a_fair_hog_and_a_lower_rt_one_but_not_its_equal() {
    for k in presets() {
        let m = one_cpu();
        // FIFO 1 over a fair hog: at once.
        let r = run(&m, &k, hog_and_sleeper(), vec![rt("b", Policy::Fifo, 1)]);
        let w = wait_us(&r, 1);
        assert!(w < 30.0, "{}: a FIFO wakee waits {w} us", k.name);
        assert!(r.tasks.wakeups[1] > 1000, "{}", k.name);
        // FIFO 2 over a FIFO 1 hog: at once too.
        let higher = vec![rt("a", Policy::Fifo, 1), rt("b", Policy::Fifo, 2)];
        let r = run(&m, &k, hog_and_sleeper(), higher);
        assert!(wait_us(&r, 1) < 30.0, "{}: {}", k.name, wait_us(&r, 1));
        // FIFO 1 behind a FIFO 1 hog: never (the hog never blocks; RT
        // throttling stops both).
        let equal = vec![rt("a", Policy::Fifo, 1), rt("b", Policy::Fifo, 1)];
        let r = run(&m, &k, hog_and_sleeper(), equal);
        assert!(
            r.tasks.user_s[1] < 0.001 && r.tasks.user_s[0] > 1.8,
            "{}: the equal wakee ran {} s, the hog {} s",
            k.name,
            r.tasks.user_s[1],
            r.tasks.user_s[0]
        );
    }
}

#[test]
fn rr_rotates_at_its_slice_and_fifo_never() {
    for k in presets() {
        let k = runtime(&k, -1);
        let hogs = || vec![("a", HOG, None), ("a", HOG, None)];
        let switches = |r: &SimResult| r.tasks.involuntary_cs.iter().sum::<i64>();
        // 2 s of two RR hogs at 100 ms slices: about 20 switches.
        let r = run(&one_cpu(), &k, hogs(), vec![rt("a", Policy::Rr, 1)]);
        let rr = switches(&r);
        assert!((18..=21).contains(&rr), "{}: {rr} RR switches", k.name);
        let share = r.tasks.user_s[0] / r.tasks.user_s[1];
        assert!((0.9..1.1).contains(&share), "{}: {share}", k.name);
        let mut k20 = k.clone();
        k20.sched_rr_timeslice_ms = 20;
        let r = run(&one_cpu(), &k20, hogs(), vec![rt("a", Policy::Rr, 1)]);
        let rr20 = switches(&r);
        assert!((95..=101).contains(&rr20), "{}: {rr20} at 20 ms", k.name);
        let r = run(&one_cpu(), &k, hogs(), vec![rt("a", Policy::Fifo, 1)]);
        assert_eq!(switches(&r), 0, "{}", k.name);
        assert!(r.tasks.user_s[1] < 0.001, "{}", k.name);
    }
}

#[test]
fn rt_throttling_gives_fair_tasks_50_of_1000_ms_and_none_at_minus_1() {
    for k in presets() {
        let tasks = || vec![("a", HOG, None), ("b", HOG, None)];
        let fifo = || vec![rt("a", Policy::Fifo, 1)];
        // 950 ms of RT per 1 s period: the fair hog gets the other 50 ms of
        // each of the 2 periods (to a tick).
        let r = run(&one_cpu(), &k, tasks(), fifo());
        let fair = r.tasks.user_s[1];
        assert!((0.08..0.12).contains(&fair), "{}: fair {fair} s", k.name);
        let r = run(&one_cpu(), &runtime(&k, -1), tasks(), fifo());
        assert!(
            r.tasks.user_s[1] < 0.001,
            "{}: {}",
            k.name,
            r.tasks.user_s[1]
        );
        let r = run(&one_cpu(), &runtime(&k, 500_000), tasks(), fifo());
        let fair = r.tasks.user_s[1];
        assert!(
            (0.95..1.05).contains(&fair),
            "{}: fair {fair} s at 500 ms",
            k.name
        );
    }
}

#[test]
fn rt_tasks_spread_over_idle_cpus_and_are_pushed_off_a_busy_one() {
    let m = Machine::new(1, 2, 1, None, None).unwrap();
    for k in presets() {
        // Two FIFO hogs forked from CPU 0: select_task_rq_rt() puts the
        // second on the other CPU; each runs its CPU's 95 %.
        let hogs = vec![("a", HOG, None), ("a", HOG, None)];
        let r = run(&m, &k, hogs, vec![rt("a", Policy::Fifo, 1)]);
        for t in 0..2 {
            assert!(r.tasks.user_s[t] > 1.8, "{}: {:?}", k.name, r.tasks.user_s);
        }
        assert_ne!(r.tasks.cpu[0], r.tasks.cpu[1], "{}", k.name);
        // A FIFO sleeper beside a FIFO hog of its level and a fair hog:
        // it wakes where the fair hog runs (find_lowest_rq()), never
        // waiting behind the RT hog.
        let tasks = vec![("a", HOG, None), ("b", HOG, None), ("c", SLEEPER, None)];
        let attrs = vec![rt("a", Policy::Fifo, 1), rt("c", Policy::Fifo, 1)];
        let r = run(&m, &k, tasks, attrs);
        assert!(wait_us(&r, 2) < 30.0, "{}: {}", k.name, wait_us(&r, 2));
        assert!(r.tasks.user_s[0] > 1.8, "{}", k.name);
    }
}

#[test]
fn a_long_rt_throttle_is_waiting_not_a_stall() {
    // 1 ms of RT per 1 s period with nothing else to run: the FIFO hog
    // runs a tick, then waits for the period timer for several periods;
    // the progress watchdog (1 s) must not call that a livelock.
    for k in presets() {
        let k = runtime(&k, 1000);
        let r = run(
            &one_cpu(),
            &k,
            vec![("a", HOG, None)],
            vec![rt("a", Policy::Fifo, 1)],
        );
        let ran = r.tasks.user_s[0];
        assert!(
            ran > 0.0005 && ran < 0.02,
            "{}: the hog ran {ran} s",
            k.name
        );
    }
}
