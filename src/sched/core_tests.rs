//! Unit tests of the scheduler core (`sched::core`) on a scheduler built
//! without a workload or an engine (`Sched::for_test`).

use crate::cost::CostModel;
use crate::kernel::Kernel;
use crate::sched::task::Task;
use crate::sched::Sched;
use crate::topology::Machine;

#[test]
fn a_forked_task_remembers_its_parent_cpu_as_recent_used_cpu() {
    // 6.x wake_up_new_task(): `p->recent_used_cpu = task_cpu(p)` (the
    // parent's CPU) before `select_task_rq()` moves the child; the first
    // wake-up's select_idle_sibling() may then return to the parent's CPU.
    let m = Machine::new(1, 4, 1, None, None).unwrap();
    let mut k = Kernel::preset("v3.8").unwrap();
    k.select_idle_sibling = crate::kernel::SelectIdleSibling::IdleCpu;
    k.recent_used_cpu = true;
    let cost = CostModel::default();
    let mut sim = Sched::for_test(&m, &k, &cost);
    let mut moved = 0;
    for _ in 0..3 {
        let id = sim.tasks.len() as u32;
        let t = Task::new("child".into(), 1, 0, 0, None, sim.now);
        sim.sched_fork(t, 0);
        sim.wake_up_new_task(id, 0, Some(0));
        moved += usize::from(sim.tasks[id as usize].cpu != 0);
        assert_eq!(sim.wake.recent_used_cpu[id as usize], 0, "task {id}");
    }
    // fork balancing spread the children, so the check above could fail
    assert!(moved >= 2, "{moved}");
}
