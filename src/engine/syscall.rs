//! The system-call layer: what a workload's actions do to the scheduler.
//! When the running task finishes a burst the engine asks the workload for
//! its next action and carries it out — a burst of user or system time, a
//! timed sleep (`Sched::do_nanosleep`), blocking, `sched_yield()`
//! (`Sched::do_sched_yield`), `exit()` (`Sched::do_exit`) — after the
//! forks (`do_fork()`) and wake-ups (`try_to_wake_up()`) it asked for during
//! the step. This is the only place, with `Sim::init`, that knows the
//! workload interface; `sched` sees tasks and runqueues only.

use super::{Sim, MAX_ZERO_STEPS};
use crate::sched::task::TaskId;
use crate::sched::task::{Task, TaskState, Work};
use crate::workload::{attrs, Action, Ctx, TaskSpec};

/// Longest single CPU burst a workload may ask for (≈ 12 days): larger ones
/// are workload bugs that would overflow simulated time.
const MAX_BURST_NS: u64 = 1 << 50;

impl Sim<'_> {
    /// `do_fork()`: `copy_process()` builds the child from the workload's
    /// spec and the task attributes set on its role (`workload::attrs`:
    /// policy, nice, affinity, as `sched_fork()` would inherit them from a
    /// `chrt`/`nice`/`taskset` parent) (sorted affinity, address space: a process of its own gets an mm
    /// id no shared address space uses), `sched_fork()` places its entity on
    /// the parent's CPU, `wake_up_new_task()` puts it on a CPU. `parent`:
    /// the forking task and its CPU; `None` for harness-created tasks.
    #[inline(never)]
    fn do_fork(&mut self, spec: TaskSpec, parent: Option<(TaskId, usize)>) {
        let id = self.sched.tasks.len() as TaskId;
        let attrs = self.workload.task_attrs_of(id);
        let (policy, rt_priority, nice, mut allowed, group) = if attrs.is_empty() {
            (spec.policy, spec.rt_priority, spec.nice, spec.cpus, None)
        } else {
            let r = attrs::resolve(attrs, spec.role, spec.policy, spec.nice, spec.cpus);
            // An RT policy the spec gave keeps its priority unless an
            // entry set one (`sched_setscheduler()` keeps what it is not
            // given).
            let prio = r
                .rt_priority
                .or(spec.rt_priority.filter(|_| r.policy.is_rt()));
            (r.policy, prio, r.nice, r.cpus, r.group)
        };
        if let Some(a) = allowed.as_mut() {
            a.sort_unstable();
            a.dedup();
        }
        let home = parent.map_or_else(
            || allowed.as_ref().map_or(0, |a| a[0] as usize),
            |(_, cpu)| cpu,
        );
        let mm = spec.mm.unwrap_or(u32::MAX - id);
        let mut task = Task::new(spec.name, mm, nice, home as u32, allowed, self.sched.now);
        task.policy = policy;
        task.role = spec.role;
        task.kthread = self.workload.kthread(id);
        if task.kthread {
            // A kernel thread never runs in user mode.
            task.work_kind = Work::Sys;
        }
        if policy.is_rt() {
            // __sched_setscheduler(): p->prio = MAX_RT_PRIO - 1 - rt_priority
            // (WithTasks::new refused an RT role without a priority).
            task.prio = 99 - rt_priority.unwrap_or(1).min(99);
        }
        self.sched.sched_fork(task, home);
        // dup_task_struct(): the child starts with the parent's wake-up
        // history; a harness-created task with the workload's.
        match parent {
            Some((pt, _)) => self.sched.wake.inherit(pt, id),
            None => {
                self.sched.wake.wakee_flips[id as usize] = self.workload.initial_wakee_flips(id)
            }
        }
        if self.sched.groups.is_some() {
            // sched_fork() → task_change_group_fair(): the fair class's
            // groups (an RT task runs in the root group: no RT groups).
            let g = group.filter(|_| !policy.is_rt());
            self.sched.set_task_group(id, g.as_deref());
        }
        // A kernel thread never ends: the run does not wait for it. It was
        // there before the run: no fork is counted.
        let kthread = self.sched.tasks[id as usize].kthread;
        self.live_tasks += usize::from(!kthread);
        self.sched.counters.forks += u64::from(!kthread);
        match self.workload.start_asleep_ns(id) {
            Some(ns) => self.sched.hrtimer_sleep(id, ns),
            None => self.sched.wake_up_new_task(id, home, parent.map(|p| p.1)),
        }
    }

    /// Apply the forks and wake-ups a workload asked for during `init` or a
    /// step of the task running on `cpu` (forks first: a child may be woken
    /// in the same step). Each successful wake-up costs the waker
    /// `wakeup_ns` of system time. Inlined for the usual step that asked
    /// for neither.
    #[inline(always)]
    pub(crate) fn process_side_effects(&mut self, cpu: Option<(TaskId, usize)>) {
        if !self.spawns.is_empty() || !self.wakes.is_empty() {
            self.apply_side_effects(cpu);
        }
    }

    /// `process_side_effects` with something to apply.
    #[inline(never)]
    fn apply_side_effects(&mut self, cpu: Option<(TaskId, usize)>) {
        if !self.spawns.is_empty() {
            let mut spawns = std::mem::take(&mut self.spawns);
            for spec in spawns.drain(..) {
                self.do_fork(spec, cpu);
            }
            self.spawns = spawns;
        }
        if !self.wakes.is_empty() {
            let mut wakes = std::mem::take(&mut self.wakes);
            let waker_cpu = cpu.map_or(0, |c| c.1);
            let waker = cpu.map(|c| c.0);
            for &(t, sync) in &wakes {
                if (t as usize) < self.sched.tasks.len()
                    && self.sched.try_to_wake_up(t, waker_cpu, waker, sync)
                {
                    self.sched.charge(waker_cpu, self.sched.cost.wakeup_ns);
                }
            }
            wakes.clear();
            self.wakes = wakes;
        }
    }

    /// The running task on `cpu` finished its burst: ask the workload what it
    /// does next and carry it out.
    pub(crate) fn segment_end(&mut self, cpu: usize, gen: u32) {
        if self.sched.rqs[cpu].gen != gen || self.sched.rqs[cpu].armed_end != Some(self.sched.now) {
            return;
        }
        self.sched.rqs[cpu].armed_end = None;
        self.sched.rq_sync(cpu);
        let Some(t) = self.sched.rqs[cpu].curr() else {
            return;
        };
        debug_assert_eq!(self.sched.tasks[t as usize].work_left, 0);
        // A workload step is progress for the watchdog (a yield loop makes
        // steps without consuming burst time); a kernel thread's is not.
        if !self.sched.tasks[t as usize].kthread {
            self.sched.acct.progress_at = self.sched.now;
        }
        self.sched.events.stepping = Some(cpu);
        self.advance(cpu, t);
        self.sched.events.stepping = None;
        // The task is between two actions — the return to user space — so
        // a pending reschedule happens now even if its next burst is a
        // system call; a task whose group is throttled here is throttled
        // now (6.18, sched::group::bandwidth).
        let boundary = self.sched.groups.as_ref().is_some_and(|g| g.bandwidth_used)
            && self.sched.rqs[cpu].curr() == Some(t)
            && self.sched.throttle_at_boundary(cpu, t);
        if boundary {
            self.sched.boundary = Some(t);
            self.sched.schedule(cpu);
            self.sched.boundary = None;
        } else if self.sched.rqs[cpu].need_resched {
            self.sched.schedule(cpu);
        }
        self.sched.rearm(cpu);
    }

    fn advance(&mut self, cpu: usize, t: TaskId) {
        for _ in 0..MAX_ZERO_STEPS {
            let next_id = self.sched.tasks.len() as TaskId;
            let tasks = &self.sched.tasks;
            let running = |x: TaskId| {
                tasks
                    .get(x as usize)
                    .is_some_and(|t| t.state == TaskState::Running)
            };
            let mut ctx = Ctx::new(
                self.sched.now,
                &mut self.rng,
                self.sched.cost,
                &running,
                &mut self.wakes,
                &mut self.spawns,
                next_id,
            );
            ctx.llc = self.sched.machine.cpu(cpu).llc;
            ctx.cpu = cpu as u32;
            ctx.rt = self.sched.tasks[t as usize].policy.is_rt();
            ctx.machine = Some(self.sched.machine);
            ctx.kernel = Some(self.sched.kernel);
            ctx.need_resched = self.sched.rqs[cpu].need_resched;
            let action = self.workload.step(t, &mut ctx);
            self.process_side_effects(Some((t, cpu)));
            let ti = t as usize;
            match action {
                Action::Compute { ns: 0, .. } => continue,
                Action::Return => {
                    if self.sched.rqs[cpu].need_resched {
                        self.sched.schedule(cpu);
                        return;
                    }
                    continue;
                }
                Action::Compute { ns, .. } if ns > MAX_BURST_NS => {
                    self.error = Some(format!(
                        "workload {:?} asked task {t} for a {ns} ns burst (more than {MAX_BURST_NS} ns)",
                        self.workload.name()
                    ));
                }
                Action::Compute { ns, kind } => {
                    let task = &mut self.sched.tasks[ti];
                    // A kernel thread's burst is exact: the jitter stream
                    // stays the workload's.
                    let ns = if kind == Work::Sys && !task.kthread {
                        self.noise
                            .spread_ns(ns, self.sched.cost.sys_jitter_pct)
                            .max(1)
                    } else {
                        ns
                    };
                    task.work_left = ns;
                    task.work_kind = kind;
                }
                Action::Sleep { ns } => self.sched.do_nanosleep(cpu, t, ns),
                Action::Block => {
                    self.sched.tasks[ti].state = TaskState::Sleeping;
                    self.sched.schedule(cpu);
                }
                Action::Yield => self.sched.do_sched_yield(cpu),
                Action::Exit => {
                    self.live_tasks -= usize::from(!self.sched.tasks[ti].kthread);
                    self.workload_done = self.workload.done();
                    self.sched.do_exit(cpu, t);
                }
            }
            return;
        }
        let why = self
            .workload
            .stall_reason(t)
            .map_or(String::new(), |r| format!(": {r}"));
        self.error = Some(format!(
            "workload {:?} made no progress: task {t} returned {MAX_ZERO_STEPS} zero-length bursts in a row{why}",
            self.workload.name()
        ));
    }
}
