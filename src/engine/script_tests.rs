//! Scripted workloads in whole runs (`workload::script`): a mutex
//! serialises its holders, a barrier holds every user until the last
//! arrives, a condition variable hands work over, a periodic timer keeps
//! its period and reports late iterations, a token dependency follows the
//! model's waker.

use crate::cost::CostModel;
use crate::kernel::Kernel;
use crate::result::{SimResult, Status};
use crate::sched::task::Policy;
use crate::topology::Machine;
use crate::workload::script::{Op, Script, ScriptSpec, ScriptTask, Start, TimerSpec};
use crate::{simulate, RunOptions};

fn task(name: &str, loops: Option<u64>, ops: Vec<Op>) -> ScriptTask {
    ScriptTask {
        name: name.into(),
        nice: 0,
        policy: Policy::Normal,
        rt_priority: None,
        cpus: None,
        mm: Some(0),
        start: Start::Init { delay_ns: 0 },
        loops,
        loop_from: 0,
        ops,
    }
}

fn spec(tasks: Vec<ScriptTask>) -> ScriptSpec {
    ScriptSpec {
        tasks,
        timers: vec![],
        mutexes: 0,
        conds: 0,
        barriers: vec![],
        duration_ns: None,
        net_costs: false,
        timer_slack: true,
    }
}

fn run(s: ScriptSpec, cpus: usize, secs: Option<f64>) -> SimResult {
    let r = run_any(s, cpus, secs);
    assert_eq!(r.status, Status::Ok, "{:?}", r.status);
    r
}

fn run_any(s: ScriptSpec, cpus: usize, secs: Option<f64>) -> SimResult {
    let m = if cpus == 1 {
        Machine::new(1, 1, 1, None, Some(1)).unwrap()
    } else {
        Machine::preset("vm-2").unwrap()
    };
    let k = Kernel::preset("v6.18").unwrap();
    let opts = RunOptions {
        seed: 3,
        duration_ns: secs.map(|x| (x * 1e9) as u64),
        ..RunOptions::default()
    };
    let w = Box::new(Script::new(s).unwrap());
    simulate(&m, &k, &CostModel::default(), w, opts, &|| false).unwrap()
}

fn col(r: &SimResult, name: &str) -> Vec<f64> {
    r.tasks
        .extra
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .1
        .clone()
}

const MS: u64 = 1_000_000;

#[test]
fn a_mutex_serialises_its_holders_on_two_cpus() {
    let cs = vec![
        Op::Lock { mutex: 0 },
        Op::Run { ns: MS, c_ns: MS },
        Op::Unlock { mutex: 0 },
    ];
    let mut s = spec(vec![
        task("a", Some(20), cs.clone()),
        task("b", Some(20), cs),
    ]);
    s.mutexes = 1;
    let r = run(s, 2, None);
    // 40 critical sections of 1 ms each, never two at once.
    assert!(r.elapsed_ns >= 40 * MS, "{}", r.elapsed_ns);
    // Without the mutex the two run side by side in about half the time.
    let free = vec![Op::Run { ns: MS, c_ns: MS }];
    let r2 = run(
        spec(vec![
            task("a", Some(20), free.clone()),
            task("b", Some(20), free),
        ]),
        2,
        None,
    );
    assert!(r2.elapsed_ns < 30 * MS, "{}", r2.elapsed_ns);
}

#[test]
fn a_barrier_holds_every_user_until_the_last() {
    // a runs 1 ms, b 5 ms, then both pass the barrier and run 1 ms: a's
    // second burst cannot start before b's first ends.
    let mut s = spec(vec![
        task(
            "a",
            Some(1),
            vec![
                Op::Run { ns: MS, c_ns: MS },
                Op::Barrier { barrier: 0 },
                Op::Run { ns: MS, c_ns: MS },
            ],
        ),
        task(
            "b",
            Some(1),
            vec![
                Op::Run {
                    ns: 5 * MS,
                    c_ns: 5 * MS,
                },
                Op::Barrier { barrier: 0 },
                Op::Run { ns: MS, c_ns: MS },
            ],
        ),
    ]);
    s.barriers = vec![2];
    let r = run(s, 2, None);
    assert!(r.elapsed_ns >= 6 * MS, "{}", r.elapsed_ns);
    assert!(r.elapsed_ns < 7 * MS, "{}", r.elapsed_ns);
    assert!(r.tasks.wakeups.iter().sum::<i64>() >= 1);
}

#[test]
fn a_condition_variable_hands_work_over() {
    // The consumer waits; the producer signals ten times, 2 ms apart. The
    // consumer runs once per signal it was waiting for.
    let mut s = spec(vec![
        task(
            "consumer",
            Some(10),
            vec![
                Op::Lock { mutex: 0 },
                Op::Wait { cond: 0, mutex: 0 },
                Op::Unlock { mutex: 0 },
                Op::Run {
                    ns: 100_000,
                    c_ns: 100_000,
                },
            ],
        ),
        task(
            "producer",
            Some(10),
            vec![
                Op::Sleep { ns: 2 * MS },
                Op::Lock { mutex: 0 },
                Op::Signal { cond: 0 },
                Op::Unlock { mutex: 0 },
            ],
        ),
    ]);
    s.mutexes = 1;
    s.conds = 1;
    let r = run(s, 2, None);
    assert!(r.elapsed_ns >= 20 * MS);
    // The consumer was woken by each signal (10), blocking in between.
    assert!(r.tasks.voluntary_cs[0] >= 10, "{:?}", r.tasks.voluntary_cs);
}

#[test]
fn a_periodic_timer_keeps_its_period_and_counts_late_iterations() {
    let periodic = |run_ns: u64| {
        let mut s = spec(vec![task(
            "p",
            Some(100),
            vec![
                Op::Run {
                    ns: run_ns,
                    c_ns: run_ns,
                },
                Op::Timer {
                    timer: 0,
                    period_ns: 10 * MS,
                },
                Op::Mark,
            ],
        )]);
        s.timers = vec![TimerSpec { absolute: false }];
        run(s, 1, None)
    };
    let r = periodic(2 * MS);
    assert_eq!(col(&r, "log_lines")[0], 100.0);
    let period = col(&r, "period_us")[0];
    assert!((period - 10_000.0).abs() < 100.0, "{period}");
    assert!((col(&r, "run_us")[0] - 2_000.0).abs() < 50.0);
    assert_eq!(col(&r, "missed_periods")[0], 0.0);
    // The wake-up comes at the end of the 50 µs timer slack, a little more.
    let wu = col(&r, "wu_lat_us")[0];
    assert!((50.0..100.0).contains(&wu), "{wu}");
    // A 15 ms run in a 10 ms period misses every period; the relative
    // timer restarts from each late arrival, so the period is the run.
    let late = periodic(15 * MS);
    assert_eq!(col(&late, "missed_periods")[0], 100.0);
    assert!((col(&late, "period_us")[0] - 15_000.0).abs() < 200.0);
    assert_eq!(col(&late, "wu_lat_us")[0], 0.0);
}

#[test]
fn a_token_dependency_follows_the_models_waker() {
    // a runs 1 ms then hands b a token; b waits for it, runs 1 ms, hands
    // one back: a ping-pong whose pace is the model's, 2 ms a round.
    let s = spec(vec![
        task(
            "a",
            Some(10),
            vec![
                Op::Run { ns: MS, c_ns: MS },
                Op::Post { task: 1 },
                Op::Pend { from: 1 },
            ],
        ),
        task(
            "b",
            Some(10),
            vec![
                Op::Pend { from: 0 },
                Op::Run { ns: MS, c_ns: MS },
                Op::Post { task: 0 },
            ],
        ),
    ]);
    let r = run(s, 2, None);
    assert!(
        r.elapsed_ns >= 20 * MS && r.elapsed_ns < 22 * MS,
        "{}",
        r.elapsed_ns
    );
    // A token handed over before the wait is kept: b never misses one.
    assert_eq!(r.tasks.exited, vec![true, true]);
}

#[test]
fn forks_start_the_child_at_the_fork() {
    let mut child = task("child", Some(1), vec![Op::Run { ns: MS, c_ns: MS }]);
    child.start = Start::Forked;
    let s = spec(vec![
        task(
            "parent",
            Some(1),
            vec![
                Op::Run {
                    ns: 3 * MS,
                    c_ns: 3 * MS,
                },
                Op::Fork { task: 1 },
                Op::Run { ns: MS, c_ns: MS },
            ],
        ),
        child,
    ]);
    let r = run(s, 2, None);
    // The child cannot finish before 4 ms: it exists from 3 ms on.
    assert!(
        r.elapsed_ns >= 4 * MS && r.elapsed_ns < 5 * MS,
        "{}",
        r.elapsed_ns
    );
}

#[test]
fn a_duration_stops_endless_tasks() {
    let mut s = spec(vec![task(
        "p",
        None,
        vec![Op::Run { ns: MS, c_ns: MS }, Op::Sleep { ns: MS }],
    )]);
    s.duration_ns = Some(100 * MS);
    let r = run(s, 1, None);
    assert!(
        r.elapsed_ns >= 100 * MS && r.elapsed_ns < 105 * MS,
        "{}",
        r.elapsed_ns
    );
}

#[test]
fn bad_references_are_refused_by_name() {
    let s = spec(vec![task("a", Some(1), vec![Op::Lock { mutex: 3 }])]);
    let e = Script::new(s).unwrap_err().to_string();
    assert!(
        e.contains("tasks[0].ops[0]") && e.contains("mutex 3"),
        "{e}"
    );
    let mut c = task("c", Some(1), vec![Op::Run { ns: 1, c_ns: 1 }]);
    c.start = Start::Forked;
    let e = Script::new(spec(vec![task("a", Some(1), vec![]), c]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("tasks[1].start"), "{e}");
}

#[test]
fn a_token_is_counted_per_waker() {
    // c waits for a's token first; b's, handed over at once, must not
    // release that wait: c runs only after a's 5 ms, then takes b's.
    let s = spec(vec![
        task(
            "a",
            Some(1),
            vec![
                Op::Run {
                    ns: 5 * MS,
                    c_ns: 5 * MS,
                },
                Op::Post { task: 2 },
            ],
        ),
        task("b", Some(1), vec![Op::Post { task: 2 }]),
        task(
            "c",
            Some(1),
            vec![
                Op::Pend { from: 0 },
                Op::Run { ns: MS, c_ns: MS },
                Op::Pend { from: 1 },
            ],
        ),
    ]);
    let r = run(s, 2, None);
    assert!(r.elapsed_ns >= 6 * MS, "{}", r.elapsed_ns);
}

#[test]
fn a_wake_during_the_futex_call_is_not_lost() {
    // rt-app's `sync` ping-pong: each thread signals the other and waits,
    // holding the mutex around it. The signal can come while the waiter
    // still pays its futex call; that wake-up must end the wait.
    let round = vec![
        Op::Lock { mutex: 0 },
        Op::Signal { cond: 0 },
        Op::Wait { cond: 0, mutex: 0 },
        Op::Unlock { mutex: 0 },
        Op::Run {
            ns: 20_000,
            c_ns: 20_000,
        },
    ];
    let mut s = spec(vec![task("a", None, round.clone()), task("b", None, round)]);
    s.mutexes = 1;
    s.conds = 1;
    s.duration_ns = Some(50 * MS);
    let r = run_any(s, 2, None);
    assert_eq!(r.status, Status::Ok, "{:?}", r.status);
    let loops = r.metrics.iter().find(|(n, _)| n == "loops").unwrap().1;
    assert!(loops > 100.0, "{loops}");
}

#[test]
fn a_loop_that_takes_no_time_is_an_error_not_a_hang() {
    for ops in [
        vec![Op::Signal { cond: 0 }],
        vec![Op::Lock { mutex: 0 }, Op::Unlock { mutex: 0 }],
        vec![Op::Barrier { barrier: 0 }],
        vec![Op::RunWall { ns: 0 }],
    ] {
        let mut s = spec(vec![
            task("spin", None, ops),
            task(
                "other",
                None,
                vec![Op::Run { ns: MS, c_ns: MS }, Op::Sleep { ns: MS }],
            ),
        ]);
        s.mutexes = 1;
        s.conds = 1;
        s.barriers = vec![1];
        let r = run_any(s, 2, Some(0.1));
        match &r.status {
            Status::Error(e) => {
                assert!(
                    e.contains("\"spin\"") && e.contains("without taking time"),
                    "{e}"
                )
            }
            other => panic!("{other:?} {}", r.elapsed_ns),
        }
    }
}

#[test]
fn a_finite_loop_of_no_time_completes() {
    // More iterations than one step goes through (and than the engine's
    // zero-step limit would allow at two iterations a step).
    let mut s = spec(vec![task("s", Some(300_000), vec![Op::Signal { cond: 0 }])]);
    s.conds = 1;
    let r = run(s, 1, None);
    assert_eq!(r.tasks.exited, vec![true]);
}

#[test]
fn a_late_timer_catches_up_without_a_stall() {
    // 300 ms of work, then a 1 µs absolute timer: 300,000 periods late,
    // each caught up without a sleep, then the timer paces the loop.
    let mut t = task(
        "late",
        None,
        vec![
            Op::Run {
                ns: 300 * MS,
                c_ns: 300 * MS,
            },
            Op::Timer {
                timer: 0,
                period_ns: 1_000,
            },
            Op::Mark,
        ],
    );
    t.loop_from = 1;
    let mut s = spec(vec![t]);
    s.timers = vec![TimerSpec { absolute: true }];
    s.duration_ns = Some(310 * MS);
    let r = run(s, 1, None);
    assert!(col(&r, "missed_periods")[0] >= 299_000.0);
}

#[test]
fn a_replay_sleep_has_no_timer_slack() {
    let sleeper = |slack: bool| {
        let mut s = spec(vec![task(
            "s",
            Some(10),
            vec![Op::Sleep { ns: 100_000 }, Op::Run { ns: 1, c_ns: 1 }],
        )]);
        s.timer_slack = slack;
        run(s, 1, None).elapsed_ns
    };
    let (with, without) = (sleeper(true), sleeper(false));
    assert!((1_000_000..1_050_000).contains(&without), "{without}");
    assert!(with >= without + 10 * 50_000, "{with} vs {without}");
}
