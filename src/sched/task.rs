//! Per-task scheduler state, the model's share of `struct task_struct`
//! (include/linux/sched.h): state, CPU, affinity, the running burst and the
//! task's accounting. Its `sched_entity` lives beside it in `Sched::ses`
//! (`sched::fair::SchedEntity`), indexed by the same `TaskId`.

/// A task's index: into `Sched::tasks`, `Sched::ses` and every per-task
/// table (the kernel's `task_struct *`).
pub type TaskId = u32;

/// Enqueue flags (`ENQUEUE_WAKEUP`, `ENQUEUE_WAKING` in 2.6.36).
#[derive(Clone, Copy, Debug, Default)]
pub struct EnqueueFlags {
    pub wakeup: bool,
    /// The vruntime was normalised by `task_waking_fair` (or a migration).
    pub waking: bool,
    /// `ENQUEUE_INITIAL` (6.6+): a new task, placed with half a slice under
    /// PLACE_DEADLINE_INITIAL. CFS ignores it.
    pub initial: bool,
}

/// Dequeue flags of the EEVDF path (`DEQUEUE_SLEEP`, `DEQUEUE_SPECIAL`,
/// `DEQUEUE_DELAYED`, 6.12).
#[derive(Clone, Copy, Debug, Default)]
pub struct DequeueFlags {
    pub sleep: bool,
    /// A special task state (TASK_DEAD here): never delayed.
    pub special: bool,
    /// Completes the dequeue of a `sched_delayed` entity.
    pub delayed: bool,
}

crate::named_enum! {
    /// A task's scheduling policy (`task_struct::policy`,
    /// include/uapi/linux/sched.h): SCHED_NORMAL, SCHED_BATCH and SCHED_IDLE
    /// run in the fair class; SCHED_FIFO and SCHED_RR in the RT class. The
    /// fair-class differences (kernel/sched/fair.c, 2.6.36 to 6.18):
    /// SCHED_IDLE's weight is `WEIGHT_IDLEPRIO` (3) whatever the nice level,
    /// BATCH and IDLE wakees never preempt on wake-up (`check_preempt_wakeup()`
    /// / `check_preempt_wakeup_fair()`), an IDLE `curr` is always preempted
    /// by a non-IDLE wakee, IDLE tasks are never cache hot (`task_hot()`)
    /// nor buddies, and from 5.4 a CPU running only IDLE tasks counts as
    /// idle for wake-up placement (`sched_idle_cpu()`, Kernel field
    /// `sched_idle_cpu`).
    #[derive(Default)]
    pub enum Policy {
        #[default]
        Normal = "normal",
        Batch = "batch",
        Idle = "idle",
        Fifo = "fifo",
        Rr = "rr",
    }
}

impl Policy {
    /// `rt_policy()`: SCHED_FIFO or SCHED_RR.
    pub fn is_rt(self) -> bool {
        matches!(self, Policy::Fifo | Policy::Rr)
    }
}

/// Which CPU time a burst is: user code or kernel work done for the task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    User,
    Sys,
}

/// The task's state (`TASK_RUNNING` split into queued and on-CPU;
/// `TASK_INTERRUPTIBLE`; `EXIT_DEAD`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TaskState {
    Runnable,
    Running,
    Sleeping,
    Exited,
}

pub(crate) struct Task {
    pub name: String,
    /// The workload's role of the task (`TaskSpec::role`; "" for a task a
    /// test makes by hand).
    pub role: &'static str,
    /// Address-space id (threads of one process share it).
    pub mm: u32,
    pub nice: i32,
    pub policy: Policy,
    pub state: TaskState,
    pub cpu: u32,
    /// Sorted allowed CPUs; `None` = all.
    pub allowed: Option<Vec<u32>>,
    pub work_left: u64,
    pub work_kind: Work,
    pub timer_gen: u32,
    pub timer_pending: bool,
    pub wait_start: u64,
    /// The wait since `wait_start` began with a wake-up (`sched_wakeup` /
    /// `sched_wakeup_new`), not a preemption (`sched::stats::latency`).
    pub woken: bool,
    pub user_ns: u64,
    pub sys_ns: u64,
    pub wait_ns: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
    pub migrations: u64,
    pub wakeups: u64,
    /// `p->prio`: 99 − rt_priority for an RT task (0 is the highest),
    /// `NICE_TO_PRIO(nice)` = 120 + nice for a fair one (compared only
    /// within the RT class).
    pub prio: u32,
    /// The RT queue's order (`sched::rt::task`): FIFO within a level.
    pub rt_seq: u64,
    /// `p->rt.time_slice` of a SCHED_RR task, in ticks.
    pub rr_ticks_left: u32,
    /// A kernel thread (`PF_KTHREAD`, `workload::kthreads`): no address
    /// space of its own, and its timers and life do not keep a run going.
    pub kthread: bool,
}

impl Task {
    /// A new runnable task (`copy_process()`): no work yet, no accounting.
    pub fn new(
        name: String,
        mm: u32,
        nice: i32,
        cpu: u32,
        allowed: Option<Vec<u32>>,
        now: u64,
    ) -> Self {
        Task {
            name,
            role: "",
            mm,
            nice,
            policy: Policy::Normal,
            state: TaskState::Runnable,
            cpu,
            allowed,
            work_left: 0,
            work_kind: Work::User,
            timer_gen: 0,
            timer_pending: false,
            wait_start: now,
            woken: true,
            user_ns: 0,
            sys_ns: 0,
            wait_ns: 0,
            nvcsw: 0,
            nivcsw: 0,
            migrations: 0,
            wakeups: 0,
            // NICE_TO_PRIO(nice) for a fair task; an RT task's is set apart.
            prio: (120 + nice.clamp(-20, 19)) as u32,
            rt_seq: 0,
            rr_ticks_left: 0,
            kthread: false,
        }
    }
}
