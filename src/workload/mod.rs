//! The workload interface: tasks are state machines the engine drives.
//!
//! The engine asks a workload for a task's next [`Action`] whenever the task
//! has finished its previous one and is running on a CPU (`step`). During a
//! step the workload may wake other tasks and fork new ones through [`Ctx`];
//! those take effect at the current instant, from the stepping task's CPU,
//! before the returned action — as a system call's side effects precede its
//! return. Everything a workload does is a pure function of its inputs and
//! the run's RNG, so runs are deterministic.
//!
//! Each kind and its parameters are declared once: [`kinds::KINDS`] and
//! [`params`] (`workload_params!`).

pub mod aim7;
mod aim7_costs;
pub mod attrs;
pub mod hackbench;
pub mod ipc;
pub mod kinds;
pub mod kthreads;
pub mod mix;
pub mod params;
pub mod pipe_pingpong;
pub mod rt_kthreads;
pub mod schbench;
mod schbench_stats;
pub mod script;
pub mod spinners;
pub mod volano;

use crate::cost::CostModel;
use crate::error::{CoreError, CoreResult};
use crate::kernel::Kernel;
use crate::rng::Rng;
use crate::sched::task::TaskId;
use crate::topology::Machine;

/// Which CPU time a burst is (defined with the task state it sets).
pub use crate::sched::task::Work;

/// What a running task does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Run for `ns` of CPU time (preemptible).
    Compute { ns: u64, kind: Work },
    /// Sleep on a timer for `ns` (an hrtimer on the task's CPU wakes it).
    Sleep { ns: u64 },
    /// Block until some task wakes it through [`Ctx::wake`].
    Block,
    /// `sched_yield()`.
    Yield,
    /// The return to user space that ends a system call: a preemption
    /// point (`exit_to_user_mode_loop()` calls `schedule()` when
    /// `TIF_NEED_RESCHED` is set; kernel/entry/common.c, 5.11+, and the
    /// same test in the older arch entry code). The task's next step is
    /// taken at once, or when it runs again. A workload returns it after a
    /// system call that may have woken a task and before the next one
    /// takes a lock, so a pending preemption lands between the two, with no
    /// kernel lock held, and not after the next call's `mutex_lock()`.
    Return,
    /// Exit.
    Exit,
}

/// A workload's `cpus` (its cpuset) against `machine`: every CPU number
/// must exist there (the check a `Workload::validate` makes once the
/// machine is known).
pub fn check_cpuset(cpus: &[u32], machine: &Machine) -> CoreResult<()> {
    let n = machine.nr_cpus() as u32;
    if let Some(bad) = cpus.iter().find(|&&c| c >= n) {
        return Err(CoreError::invalid(
            "cpus",
            bad,
            format!(
                "CPU numbers from 0 to {} on machine {:?}",
                n - 1,
                machine.name
            ),
        ));
    }
    Ok(())
}

/// A system-time burst of `ns` (at least 1 ns).
pub fn sys(ns: u64) -> Action {
    Action::Compute {
        ns: ns.max(1),
        kind: Work::Sys,
    }
}

/// A user-time burst of `ns` (at least 1 ns).
pub fn user(ns: u64) -> Action {
    Action::Compute {
        ns: ns.max(1),
        kind: Work::User,
    }
}

/// A task to create.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSpec {
    /// The task's role, one of the workload's `roles()` (what
    /// `with_tasks(role=...)` selects).
    pub role: &'static str,
    pub name: String,
    pub nice: i32,
    /// Allowed CPUs (`cpus_allowed`); `None` = all.
    pub cpus: Option<Vec<u32>>,
    /// Address space: tasks with the same `mm` are threads of one process
    /// (switching between them costs no `mm_switch_ns`); `None` = a process
    /// of its own.
    pub mm: Option<u32>,
    /// The policy it is created with (what `with_tasks` changes from).
    pub policy: crate::sched::task::Policy,
    /// Its RT priority, with an RT `policy`.
    pub rt_priority: Option<u32>,
}

impl TaskSpec {
    /// A single-threaded process of `role`.
    pub fn process(role: &'static str, name: String, nice: i32, cpus: Option<Vec<u32>>) -> Self {
        TaskSpec {
            role,
            name,
            nice,
            cpus,
            mm: None,
            policy: crate::sched::task::Policy::Normal,
            rt_priority: None,
        }
    }
}

/// What a workload sees and does during `init` and `step`.
pub struct Ctx<'a> {
    pub now: u64,
    pub rng: &'a mut Rng,
    /// The run's cost model (system-call costs of the IPC objects).
    pub cost: &'a CostModel,
    /// Whether each task is on a CPU right now (for adaptive mutex spinning).
    pub(crate) running: &'a dyn Fn(TaskId) -> bool,
    pub(crate) wakes: &'a mut Vec<(TaskId, bool)>,
    pub(crate) spawns: &'a mut Vec<TaskSpec>,
    pub(crate) next_id: TaskId,
    /// The last-level cache (global index) of the CPU the stepping task
    /// runs on; `u32::MAX` outside a task's step (`init`). Lets a workload
    /// see whether data it hands over crosses caches.
    pub llc: u32,
    /// The CPU the stepping task runs on; `u32::MAX` outside a step.
    pub cpu: u32,
    /// Whether the stepping task has an RT policy (as the run set it, with
    /// any `with_tasks` override): its `timer_slack_ns` is 0.
    pub rt: bool,
    /// The machine, for the distance data handed over travels
    /// (`xfer_from`); `None` outside a step.
    pub(crate) machine: Option<&'a Machine>,
    /// The run's kernel, for the behaviours of its IPC code that changed
    /// between releases (`Kernel::pipe_still_full_no_wake`); `None` in unit
    /// tests, which get the 6.18 rules.
    pub(crate) kernel: Option<&'a Kernel>,
    /// Whether the stepping task's CPU has a reschedule pending
    /// (`need_resched()`): a mutex locker then stops spinning and sleeps.
    pub need_resched: bool,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        now: u64,
        rng: &'a mut Rng,
        cost: &'a CostModel,
        running: &'a dyn Fn(TaskId) -> bool,
        wakes: &'a mut Vec<(TaskId, bool)>,
        spawns: &'a mut Vec<TaskSpec>,
        next_id: TaskId,
    ) -> Self {
        Ctx {
            now,
            rng,
            cost,
            running,
            wakes,
            spawns,
            need_resched: false,
            next_id,
            llc: u32::MAX,
            cpu: u32::MAX,
            rt: false,
            machine: None,
            kernel: None,
        }
    }

    /// The context of a part of `outer`'s step (`Mix`): the part's own
    /// view of which tasks run, its own wake-up and fork lists and task
    /// ids; the step's instant, random stream, costs and environment
    /// (CPU, cache, policy, machine, kernel, `need_resched`) are
    /// `outer`'s. `outer` is taken apart field by field, so a field added
    /// to `Ctx` must be decided on here.
    pub(crate) fn part_of<'o: 'a>(
        outer: &'a mut Ctx<'o>,
        running: &'a dyn Fn(TaskId) -> bool,
        wakes: &'a mut Vec<(TaskId, bool)>,
        spawns: &'a mut Vec<TaskSpec>,
        next_id: TaskId,
    ) -> Self {
        let Ctx {
            now,
            rng,
            cost,
            running: _,
            wakes: _,
            spawns: _,
            next_id: _,
            llc,
            cpu,
            rt,
            machine,
            kernel,
            need_resched,
        } = outer;
        Ctx {
            now: *now,
            rng,
            cost,
            running,
            wakes,
            spawns,
            next_id,
            llc: *llc,
            cpu: *cpu,
            rt: *rt,
            machine: *machine,
            kernel: *kernel,
            need_resched: *need_resched,
        }
    }

    /// The system time the stepping task pays to read a `bytes`-byte
    /// message written on CPU `from` (`CostModel::xfer` by the two CPUs'
    /// distance); 0 outside a step, for an unknown writer (`u32::MAX`) or
    /// when the cost model's `xfer_by_distance` is off.
    pub fn xfer_from(&self, from: u32, bytes: u64) -> u64 {
        match self.machine {
            Some(m) if self.cost.xfer_by_distance && from != u32::MAX && self.cpu != u32::MAX => {
                let dist = m.distance(from as usize, self.cpu as usize);
                self.cost.xfer(dist, bytes)
            }
            _ => 0,
        }
    }

    /// Wake `task` if it is blocked (`try_to_wake_up`); `sync` is the
    /// WF_SYNC hint that the waker is about to sleep.
    pub fn wake(&mut self, task: TaskId, sync: bool) {
        self.wakes.push((task, sync));
    }

    /// Is `task` running on a CPU at this instant?
    pub fn is_running(&self, task: TaskId) -> bool {
        (self.running)(task)
    }

    /// Create a task (fork from the stepping task, or from the harness during
    /// `init`). Returns its id; it becomes runnable at the current instant.
    pub fn spawn(&mut self, spec: TaskSpec) -> TaskId {
        let id = self.next_id;
        self.next_id += 1;
        self.spawns.push(spec);
        id
    }
}

/// A benchmark as the engine drives it.
pub trait Workload: Send {
    fn name(&self) -> &'static str;
    /// The roles its tasks have (each `TaskSpec::role` is one), as the
    /// workload's docs describe them.
    fn roles(&self) -> &'static [&'static str];
    /// The task attributes set on it (`attrs::WithTasks`); none by default.
    fn task_attrs(&self) -> &[attrs::TaskAttrs] {
        &[]
    }
    /// The task attributes that apply to the task being forked as `task`
    /// (a mix answers with its part's).
    fn task_attrs_of(&self, task: TaskId) -> &[attrs::TaskAttrs] {
        let _ = task;
        self.task_attrs()
    }
    /// Every task-attribute entry of the workload (a mix: its parts').
    fn all_task_attrs(&self) -> Vec<&attrs::TaskAttrs> {
        self.task_attrs().iter().collect()
    }
    /// A finite workload that is done although some of its tasks live on
    /// (a mix whose finite parts have all exited beside endless ones).
    fn done(&self) -> bool {
        false
    }
    /// The metrics with owned names (a mix prefixes its parts').
    fn named_metrics(&self, elapsed_ns: u64, task_cpu: &[(u64, u64)]) -> Vec<(String, f64)> {
        self.metrics_with_tasks(elapsed_ns, task_cpu)
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect()
    }
    /// Settle what the workload takes from the machine it runs on (e.g.
    /// schbench's worker count, one per CPU by default), before `validate`
    /// and `nr_tasks`; nothing by default.
    fn for_machine(&mut self, machine: &Machine) {
        let _ = machine;
    }
    /// Refuse inputs the machine cannot honour (e.g. pinning to CPU 9 of 8).
    fn validate(&self, machine: &Machine) -> CoreResult<()>;
    /// Create the initial tasks (outside the measured interval).
    fn init(&mut self, ctx: &mut Ctx);

    /// `wakee_flips` of a task the harness creates (not forked by another
    /// task): the wake-ups its process made before the run, which the
    /// tasks it forks inherit (`dup_task_struct()`; `wake_wide()` reads
    /// them). 0 unless the workload says.
    fn initial_wakee_flips(&self, _task: TaskId) -> u32 {
        0
    }
    /// The next action of `task`, which is running and done with its last one.
    fn step(&mut self, task: TaskId, ctx: &mut Ctx) -> Action;
    /// The most tasks the workload creates over a run, a harness's one main
    /// task aside (its memory grows with them: `limits::MAX_TASKS`).
    fn nr_tasks(&self) -> u64;
    /// `nr_tasks` on a machine of `nr_cpus` CPUs, before `for_machine` (a
    /// workload whose task count follows the machine's says; the others'
    /// is `nr_tasks`).
    fn nr_tasks_on(&self, nr_cpus: usize) -> u64 {
        let _ = nr_cpus;
        self.nr_tasks()
    }
    /// True if the workload ends by itself once all its tasks have exited;
    /// false if it needs a `duration_s` bound.
    fn finite(&self) -> bool;
    /// The benchmark's own figures at the end of a run.
    fn metrics(&self, elapsed_ns: u64) -> Vec<(&'static str, f64)>;
    /// The same, given each task's CPU time as `(user_ns, sys_ns)` by task
    /// id (for figures a harness takes from `times()`, e.g. AIM7's
    /// children's CPU seconds). By default, `metrics`.
    fn metrics_with_tasks(
        &self,
        elapsed_ns: u64,
        task_cpu: &[(u64, u64)],
    ) -> Vec<(&'static str, f64)> {
        let _ = task_cpu;
        self.metrics(elapsed_ns)
    }
    /// The name of a process whose first task (thread-group leader) the
    /// workload named `leader` (its `comm` as `ps` shows it); by default the
    /// leader's name.
    fn process_name(&self, leader: &str) -> String {
        leader.to_string()
    }
    /// Per-task figures the workload keeps (e.g. rt-app's log columns), as
    /// columns of the task table indexed by task id (`NaN` where a task has
    /// none); none by default.
    fn task_columns(&self, nr_tasks: usize) -> Vec<(&'static str, Vec<f64>)> {
        let _ = nr_tasks;
        Vec::new()
    }
    /// RT kernel threads running beside the workload (`sched::rt`; the
    /// engine runs them as tasks of `kthreads::Kthreads` beside it).
    fn rt_kthreads(&self) -> Option<&crate::workload::rt_kthreads::RtKthreads> {
        None
    }
    /// Is `task` a kernel thread (`PF_KTHREAD`: no address space of its
    /// own, so switching to it keeps the last one, lazy TLB; it never ends,
    /// so the run's end and its deadlock check do not wait for it)? No by
    /// default.
    fn kthread(&self, task: TaskId) -> bool {
        let _ = task;
        false
    }
    /// A task that exists before the run and starts asleep (a kernel
    /// thread created at boot): its first wake-up, a timer, comes `ns`
    /// after it is created, and it is not woken before. `None` (the
    /// default): a new task, runnable at once (`wake_up_new_task()`).
    fn start_asleep_ns(&self, task: TaskId) -> Option<u64> {
        let _ = task;
        None
    }
    /// Why `task` makes no progress, when the workload knows (the engine
    /// adds it to its no-progress error); none by default.
    fn stall_reason(&self, task: TaskId) -> Option<String> {
        let _ = task;
        None
    }
}
