//! The RT class's push and pull unit tests (`sched::rt::push`), on a
//! scheduler built without a workload or an engine (`Sched::for_test`).
//! Hand-built RT overloads on a 4-CPU machine: who sends a push IPI to
//! whom, in what order, and when the walk stops, per `rt_push` variant.

use crate::cost::CostModel;
use crate::kernel::{Kernel, RtPush};
use crate::sched::task::{Policy, Task, TaskId};
use crate::sched::Sched;
use crate::topology::Machine;

/// A FIFO task of kernel priority `prio` allowed on `allowed`, queued on
/// `cpu` (`sched_fork()` + `enqueue_task_rt()`).
fn queued(sim: &mut Sched, cpu: usize, prio: u32, allowed: &[u32]) -> TaskId {
    let name = format!("rt{}", sim.tasks.len());
    let mut t = Task::new(name, 0, 0, cpu as u32, Some(allowed.to_vec()), sim.now);
    t.policy = Policy::Fifo;
    t.prio = prio;
    let id = sim.sched_fork(t, cpu);
    sim.enqueue_task_rt(cpu, id, false);
    id
}

/// `cpu` runs a task of (prio, allowed): queued, then picked.
fn running(sim: &mut Sched, cpu: usize, prio: u32, allowed: &[u32]) -> TaskId {
    let id = queued(sim, cpu, prio, allowed);
    assert_eq!(sim.tasks[id as usize].cpu as usize, cpu);
    assert_eq!(sim.schedule_rt(cpu, None), Some(id));
    id
}

/// `cpu` runs a pinned FIFO-99 task and has a migratable FIFO-50 task
/// queued behind it, allowed on `allowed` (so the CPU is RT-overloaded).
fn overload(sim: &mut Sched, cpu: usize, allowed: &[u32]) -> TaskId {
    overload_with(sim, cpu, (0, &[cpu as u32]), (49, allowed))
}

/// `cpu` runs `run` (prio, allowed) with `queued` (prio, allowed) behind it.
fn overload_with(
    sim: &mut Sched,
    cpu: usize,
    run: (u32, &[u32]),
    waiting: (u32, &[u32]),
) -> TaskId {
    running(sim, cpu, run.0, run.1);
    let b = queued(sim, cpu, waiting.0, waiting.1);
    assert!(sim.rqs[cpu].rtq.overloaded);
    b
}

/// `cpu` runs a pinned FIFO-99 task (nothing RT can be pushed to it).
fn busy(sim: &mut Sched, cpu: usize) {
    running(sim, cpu, 0, &[cpu as u32]);
}

/// Run the push irq_work events until none is left; the IPI log.
fn drain(sim: &mut Sched) -> Vec<(usize, usize)> {
    let popped = sim.run_rt_irq_work(1000);
    assert!(popped < 1000, "the walk did not stop");
    sim.rt_root.ipi_log.clone()
}

fn with_sim(kernel: Kernel, f: impl FnOnce(&mut Sched)) {
    let m = Machine::new(1, 4, 1, None, None).unwrap();
    let cost = CostModel::default();
    let mut sim = Sched::for_test(&m, &kernel, &cost);
    f(&mut sim);
}

fn kernel(push: RtPush, only_self: bool, skip_self: bool) -> Kernel {
    Kernel {
        rt_push: push,
        rt_pull_skip_only_self: only_self,
        rt_rto_skip_self: skip_self,
        ..Kernel::v3_8()
    }
}

#[test]
fn no_overload_no_ipi_in_any_variant() {
    for push in [RtPush::Pull, RtPush::PushIpi, RtPush::PushIpiRd] {
        with_sim(kernel(push, false, false), |sim| {
            busy(sim, 1);
            sim.pull_rt_task(0);
            assert!(drain(sim).is_empty());
            assert_eq!(sim.counters.function_call_ipis, 0);
        });
    }
}

#[test]
fn pull_takes_the_task_under_both_locks_without_ipis() {
    with_sim(kernel(RtPush::Pull, false, false), |sim| {
        let b = overload(sim, 1, &[0, 1]);
        sim.pull_rt_task(0);
        assert_eq!(sim.tasks[b as usize].cpu, 0);
        assert!(sim.rqs[0].rtq.queue.contains(&b));
        assert!(sim.rqs[0].need_resched);
        assert_eq!(sim.rt_root.stats.pulls, 1);
        assert_eq!(sim.rt_root.rto_count, 0);
        assert!(drain(sim).is_empty());
    });
}

#[test]
fn push_ipi_chain_visits_each_overloaded_cpu_once_never_the_initiator() {
    with_sim(kernel(RtPush::PushIpi, false, false), |sim| {
        overload(sim, 1, &[1, 2]);
        busy(sim, 2);
        overload(sim, 3, &[3, 2]);
        sim.pull_rt_task(0);
        assert_eq!(drain(sim), vec![(0, 1), (1, 3)]);
        assert_eq!(sim.counters.function_call_ipis, 2);
        assert_eq!(sim.rt_root.stats.self_ipis, 0);
        assert_eq!(sim.rqs[0].rtq.push_flags, 0);
    });
    // From an overloaded CPU (running FIFO-50 with another FIFO-50 queued;
    // CPU 3's queued FIFO-60 beats it): the chain starts after it and ends
    // before it.
    with_sim(kernel(RtPush::PushIpi, false, false), |sim| {
        overload_with(sim, 1, (49, &[1, 2]), (49, &[1, 2]));
        busy(sim, 2);
        overload_with(sim, 3, (0, &[3]), (39, &[3, 2]));
        sim.pull_rt_task(1);
        assert_eq!(drain(sim), vec![(1, 3)]);
    });
}

#[test]
fn push_ipi_chain_skips_cpus_whose_next_task_cannot_beat_the_puller() {
    with_sim(kernel(RtPush::PushIpi, false, false), |sim| {
        overload(sim, 1, &[1, 2]);
        busy(sim, 2);
        // CPU 0 runs FIFO-60 (prio 39): the queued FIFO-50 (49) cannot beat it.
        running(sim, 0, 39, &[0]);
        sim.pull_rt_task(0);
        assert!(drain(sim).is_empty());
    });
}

#[test]
fn push_ipi_chain_restarts_from_the_source_when_flagged() {
    with_sim(kernel(RtPush::PushIpi, false, false), |sim| {
        overload(sim, 1, &[1, 2]);
        busy(sim, 2);
        overload(sim, 3, &[3, 2]);
        sim.pull_rt_task(0);
        // While the first IPI is in flight CPU 0 lowers its priority again.
        sim.pull_rt_task(0);
        assert_ne!(
            sim.rqs[0].rtq.push_flags & crate::sched::rt::PUSH_RESTART,
            0
        );
        // 1 restarts from 0: 1 is next again (a local loop, no IPI), then 3.
        assert_eq!(drain(sim), vec![(0, 1), (1, 3)]);
    });
}

#[test]
fn push_ipi_rd_walks_from_the_first_cpu_and_rescans_once() {
    with_sim(kernel(RtPush::PushIpiRd, false, false), |sim| {
        overload(sim, 1, &[1, 2]);
        busy(sim, 2);
        overload(sim, 3, &[3, 2]);
        sim.pull_rt_task(0);
        // rto_loop_next moved when the walk began: one rescan.
        assert_eq!(drain(sim), vec![(0, 1), (1, 3), (3, 1), (1, 3)]);
        let rd = &sim.rt_root;
        assert_eq!(rd.rto_cpu, -1);
        assert_eq!(rd.rto_loop, rd.rto_loop_next);
    });
}

#[test]
fn push_ipi_rd_self_ipis_the_only_overloaded_cpu() {
    with_sim(kernel(RtPush::PushIpiRd, false, false), |sim| {
        overload(sim, 1, &[1, 2]);
        busy(sim, 2);
        sim.pull_rt_task(1);
        assert_eq!(drain(sim), vec![(1, 1), (1, 1)]);
        assert_eq!(sim.rt_root.stats.self_ipis, 2);
        assert_eq!(sim.counters.function_call_ipis, 2);
    });
    // A second trigger while the walk is in flight only bumps rto_loop_next:
    // the walk rescans once more.
    with_sim(kernel(RtPush::PushIpiRd, false, false), |sim| {
        overload(sim, 1, &[1, 2]);
        busy(sim, 2);
        sim.pull_rt_task(1);
        sim.pull_rt_task(0);
        assert_eq!(drain(sim), vec![(1, 1), (1, 1)]);
        sim.pull_rt_task(0);
        assert_eq!(drain(sim), vec![(1, 1), (1, 1), (0, 1), (1, 1)]);
    });
}

#[test]
fn the_fixes_suppress_the_self_ipi() {
    // "Do not pull from current CPU if only one CPU to pull".
    with_sim(kernel(RtPush::PushIpiRd, true, false), |sim| {
        overload(sim, 1, &[1, 2]);
        busy(sim, 2);
        sim.pull_rt_task(1);
        assert!(drain(sim).is_empty());
        // Another CPU still starts the walk.
        sim.pull_rt_task(0);
        assert_eq!(drain(sim), vec![(0, 1), (1, 1)]);
    });
    // 94894c9c477e: rto_next_cpu() skips the CPU it runs on.
    with_sim(kernel(RtPush::PushIpiRd, false, true), |sim| {
        overload(sim, 1, &[1, 2]);
        busy(sim, 2);
        sim.pull_rt_task(1);
        assert!(drain(sim).is_empty());
        sim.pull_rt_task(0);
        assert_eq!(drain(sim), vec![(0, 1)]);
        assert_eq!(sim.rt_root.stats.self_ipis, 0);
    });
}

#[test]
fn a_push_ipi_moves_the_task_when_a_lower_cpu_exists() {
    with_sim(kernel(RtPush::PushIpiRd, false, false), |sim| {
        // CPU 2 is free this time: the handler on 1 pushes the FIFO-50 there.
        let b = overload(sim, 1, &[1, 2]);
        sim.pull_rt_task(0);
        let log = drain(sim);
        assert_eq!(log[0], (0, 1));
        assert_eq!(sim.tasks[b as usize].cpu, 2);
        assert_eq!(sim.rt_root.stats.pushes, 1);
        assert_eq!(sim.rt_root.rto_count, 0);
    });
}
