//! Unit tests of the balancer (`sched::balance`) on a scheduler built
//! without a workload or an engine (`Sched::for_test`).

use crate::cost::CostModel;
use crate::kernel::Kernel;
use crate::sched::balance::domains::sd;
use crate::sched::balance::{IdleType, LbEnv};
use crate::sched::task::Task;
use crate::sched::Sched;
use crate::topology::Machine;

#[test]
fn smt_ignore_hot_makes_no_task_cache_hot_between_smt_siblings() {
    // ec73240b1627: task_hot() returns 0 in an SD_SHARE_CPUCAPACITY domain.
    // A task queued (not running) on its CPU that has just run is cache hot
    // by migration_cost towards its SMT sibling unless smt_ignore_hot.
    let m = Machine::new(1, 2, 2, None, None).unwrap();
    for ignore in [false, true] {
        let mut k = Kernel::v6_18();
        k.smt_ignore_hot = ignore;
        let cost = CostModel::default();
        let mut sim = Sched::for_test(&m, &k, &cost);
        let id = sim.tasks.len() as u32;
        sim.sched_fork(Task::new("child".into(), 1, 0, 0, None, sim.now), 0);
        sim.wake_up_new_task(id, 0, Some(0));
        let src = sim.tasks[id as usize].cpu as usize;
        assert_ne!(sim.rqs[src].cfs.curr, Some(id));
        assert!(sim.sd[src][0].has(sd::SHARE_CPUPOWER));
        let dst = (0..m.nr_cpus())
            .find(|&c| {
                c != src
                    && sim.sd[c][0].has(sd::SHARE_CPUPOWER)
                    && sim.sd[c][0].span.contains(&(src as u32))
            })
            .expect("an SMT sibling");
        sim.ses[id as usize].exec_start = sim.now;
        let mut env = LbEnv::new(dst, 0, IdleType::NewlyIdle, true);
        env.src_cpu = src;
        let (_, hot) = sim.can_migrate_task(id, &mut env);
        assert_eq!(hot, !ignore, "smt_ignore_hot={ignore}");
        // Above the SMT level the task stays hot either way.
        let far = (0..m.nr_cpus())
            .find(|&c| !sim.sd[src][0].span.contains(&(c as u32)))
            .unwrap();
        let mut env = LbEnv::new(far, 1, IdleType::NewlyIdle, true);
        env.src_cpu = src;
        assert!(
            sim.can_migrate_task(id, &mut env).1,
            "smt_ignore_hot={ignore}"
        );
    }
}
