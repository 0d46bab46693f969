//! CFS bandwidth control (`CONFIG_CFS_BANDWIDTH`, kernel/sched/fair.c,
//! Paul Turner's series of 3.2, ab84d31e15bc "sched: Introduce primitives
//! to account for CFS bandwidth tracking" and neighbours), as 5.4-6.18 run
//! it: a group's quota per period is a global pool (`cfs_b->runtime`)
//! that each CPU's group runqueue draws slices of
//! `sched_cfs_bandwidth_slice_us` from (`assign_cfs_rq_runtime()`); a
//! runqueue that runs out and finds the pool empty is throttled at its
//! next `schedule()` (`check_cfs_rq_runtime()` → `throttle_cfs_rq()`) and
//! stays so until the period timer refills the pool and hands it out in
//! the order the runqueues were throttled (`do_sched_cfs_period_timer()` →
//! `distribute_cfs_runtime()`); a runqueue left empty returns all but 1 ms
//! of its slice, and the slack timer hands that out 5 ms later
//! (`__return_cfs_rq_runtime()`, `do_sched_cfs_slack_timer()`). Local
//! slices do not expire (de53fd7aedb1, 5.4). The burst (`cpu.cfs_burst_us`,
//! f4183717b370, 5.14) lets the pool carry unused quota up to quota +
//! burst; its counters `nr_bursts` / `burst_time` are bcb1704a1ed2 (5.16).
//!
//! Kernel field `cfs_throttle` chooses what a throttle does to the
//! group's tasks: `cfs_rq` (3.2-6.17) dequeues the whole group runqueue at
//! once; `task` (6.18, "sched/fair: Switch to task based throttle model",
//! Aaron Lu's series) throttles each task when it next returns to user
//! space, so a task in the middle of a system call finishes it first.
//!
//! Simplifications: runtime is charged at the tick and at `schedule()`
//! (the kernel charges at every `update_curr()`, which for a running task
//! is the same instants in the model); a remote runqueue is unthrottled at
//! once, its CPU told by a reschedule IPI when idle (6.6+ does it by an
//! async CSD, the same IPI); a task woken into a throttled group is
//! throttled as it is enqueued (6.18 lets it run to its return to user
//! space: a few µs of system time the model does not give it).

use crate::kernel::CfsThrottle;
use crate::sched::task::{DequeueFlags, EnqueueFlags, TaskId};
use crate::sched::task::{TaskState, Work};
use crate::sched::Sched;

/// `min_cfs_rq_runtime`: what a runqueue keeps when it returns slack.
const MIN_CFS_RQ_RUNTIME: i64 = 1_000_000;
/// `min_bandwidth_expiration`: no slack distribution this close to a refill.
const MIN_BANDWIDTH_EXPIRATION: u64 = 2_000_000;
/// `cfs_bandwidth_slack_period`.
const CFS_BANDWIDTH_SLACK_PERIOD: u64 = 5_000_000;

impl Sched<'_> {
    /// `sched_cfs_bandwidth_slice()`.
    fn bandwidth_slice(&self) -> i64 {
        self.kernel.sched_cfs_bandwidth_slice_us as i64 * 1000
    }

    /// Is task `t` in the middle of a system-time burst (not at a return
    /// to user space)?
    fn task_in_kernel(&self, t: TaskId) -> bool {
        let task = &self.tasks[t as usize];
        task.work_kind == Work::Sys && task.work_left > 0
    }

    /// `start_cfs_bandwidth()`: arm the period timer, forwarded past now
    /// from its last expiry (`hrtimer_forward_now()`).
    fn start_cfs_bandwidth(&mut self, g: usize) {
        let now = self.now;
        let tg = self.groups.as_mut().expect("groups");
        let b = tg.bw[g].as_mut().expect("bandwidth");
        if b.period_active {
            return;
        }
        b.period_active = true;
        if b.expires <= now {
            b.expires += (now - b.expires) / b.period * b.period + b.period;
        }
        let at = b.expires;
        self.hrtimer_start_cfs_period(g, at);
    }

    /// `__assign_cfs_rq_runtime()`: top group `g`'s runqueue on `cpu` up to
    /// `target` from the pool. True when it has runtime left.
    fn assign_cfs_rq_runtime(&mut self, g: usize, cpu: usize, target: i64) -> bool {
        self.start_cfs_bandwidth(g);
        let tg = self.groups.as_mut().expect("groups");
        let b = tg.bw[g].as_mut().expect("bandwidth");
        let gc = &mut tg.cpu[g][cpu];
        let min_amount = target - gc.runtime_remaining;
        let mut amount = 0;
        if b.runtime > 0 {
            amount = b.runtime.min(min_amount);
            b.runtime -= amount;
            b.idle = false;
        }
        gc.runtime_remaining += amount;
        gc.runtime_remaining > 0
    }

    /// `account_cfs_rq_runtime()` for task `t`, which ran on `cpu`: charge
    /// what it ran since last charged to its group and each ancestor with
    /// a quota; one that runs out and cannot get more asks for a
    /// reschedule (`__account_cfs_rq_runtime()`).
    pub(crate) fn account_cfs_rq_runtime(&mut self, cpu: usize, t: TaskId) {
        let Some(tg) = self.groups.as_mut() else {
            return;
        };
        let Some(g) = tg.task_group[t as usize] else {
            return;
        };
        let ran = self.ses[t as usize].sum_exec_runtime;
        let delta = ran - tg.charged[t as usize];
        tg.charged[t as usize] = ran;
        if delta == 0 {
            return;
        }
        let chain: Vec<usize> = tg
            .chain(g as usize)
            .filter(|&x| tg.bw[x].is_some())
            .collect();
        let slice = self.bandwidth_slice();
        for x in chain {
            let tg = self.groups.as_mut().expect("groups");
            let gc = &mut tg.cpu[x][cpu];
            gc.runtime_remaining -= delta as i64;
            if gc.runtime_remaining > 0 || gc.throttled {
                continue;
            }
            if !self.assign_cfs_rq_runtime(x, cpu, slice) && self.rqs[cpu].curr() == Some(t) {
                self.rqs[cpu].need_resched = true;
            }
        }
    }

    /// `check_cfs_rq_runtime()` at `schedule()` for `prev`'s groups on
    /// `cpu`: throttle those that are out of runtime, then take the
    /// throttled groups' tasks off the runqueue (`throttle_group_tasks`).
    pub(crate) fn check_cfs_rq_runtime(
        &mut self,
        cpu: usize,
        prev: Option<TaskId>,
        boundary: bool,
    ) {
        if let Some(p) = prev {
            if self.rqs[cpu].cfs.curr == Some(p) && self.ses[p as usize].on_rq {
                let now = self.now;
                self.rqs[cpu].cfs.update_curr(&mut self.ses, now);
            }
            self.account_cfs_rq_runtime(cpu, p);
            let tg = self.groups.as_ref().expect("groups");
            if let Some(g) = tg.task_group[p as usize] {
                let chain: Vec<usize> = tg
                    .chain(g as usize)
                    .filter(|&x| tg.bw[x].is_some())
                    .collect();
                for x in chain {
                    let gc = &self.groups.as_ref().expect("groups").cpu[x][cpu];
                    if gc.runtime_remaining <= 0 && !gc.throttled {
                        self.throttle_cfs_rq(x, cpu);
                    }
                }
            }
        }
        if self.groups.as_ref().expect("groups").throttled_on[cpu] > 0 {
            self.throttle_group_tasks(cpu, prev.filter(|_| boundary));
        }
    }

    /// `throttle_cfs_rq()`: unless a last draw from the pool saves it,
    /// mark group `g`'s runqueue on `cpu` throttled (and its descendants'
    /// `throttle_count`, `tg_throttle_down()`), at the tail of the group's
    /// throttled list. True when it was throttled.
    fn throttle_cfs_rq(&mut self, g: usize, cpu: usize) -> bool {
        if self.assign_cfs_rq_runtime(g, cpu, 1) {
            return false;
        }
        let tg = self.groups.as_mut().expect("groups");
        tg.bw[g]
            .as_mut()
            .expect("bandwidth")
            .throttled
            .push(cpu as u32);
        tg.cpu[g][cpu].throttled = true;
        tg.throttled_on[cpu] += 1;
        let mut stack = vec![g];
        while let Some(x) = stack.pop() {
            tg.cpu[x][cpu].throttle_count += 1;
            stack.extend(tg.children[x].iter().copied());
        }
        true
    }

    /// Take the queued tasks of `cpu`'s throttled groups off the runqueue
    /// into their limbo lists: all of them (`cfs_throttle = "cfs_rq"`), or
    /// those at a return to user space (`"task"`: not in a system call, or
    /// `boundary`, the task whose burst just ended).
    fn throttle_group_tasks(&mut self, cpu: usize, boundary: Option<TaskId>) {
        let tg = self.groups.as_ref().expect("groups");
        let mut todo: Vec<(TaskId, usize)> = Vec::new();
        for g in 0..tg.specs.len() {
            if tg.cpu[g][cpu].throttle_count == 0 {
                continue;
            }
            for &t in &tg.cpu[g][cpu].queued {
                todo.push((t, g));
            }
        }
        let by_task = self.kernel.cfs_throttle == CfsThrottle::Task;
        for (t, g) in todo {
            if by_task && self.task_in_kernel(t) && Some(t) != boundary {
                continue;
            }
            if self.ses[t as usize].sched_delayed {
                // A delayed-dequeue sleeper is finished dequeuing instead.
                self.finish_delayed_dequeue(cpu, t);
                continue;
            }
            self.throttle_dequeue(cpu, t);
            self.enter_limbo(cpu, t, g);
        }
    }

    /// Dequeue throttled task `t`: as a sleeper that cannot be delayed
    /// (6.18 `DEQUEUE_SLEEP | DEQUEUE_SPECIAL`), or with its group
    /// runqueue (before 6.18: the entity keeps its place relative to it, a
    /// migration's normalisation in the flat model).
    fn throttle_dequeue(&mut self, cpu: usize, t: TaskId) {
        let by_task = self.kernel.cfs_throttle == CfsThrottle::Task;
        if self.fair.eevdf.is_some() {
            let flags = DequeueFlags {
                sleep: by_task,
                special: true,
                delayed: false,
            };
            self.dequeue_task_eevdf(cpu, t, flags);
        } else {
            self.deactivate_task(cpu, t, by_task);
        }
    }

    /// Put throttled task `t` of group `g` in its limbo list on `cpu`
    /// (still `TASK_RUNNING`, not queued).
    fn enter_limbo(&mut self, cpu: usize, t: TaskId, g: usize) {
        let now = self.now;
        debug_assert_ne!(self.tasks[t as usize].state, TaskState::Sleeping);
        let tg = self.groups.as_mut().expect("groups");
        tg.throttled[t as usize] = true;
        tg.cpu[g][cpu].limbo.push(t);
        // The throttled runqueues above it start their throttled_time
        // with their first task off the CPU (6.18 "sched/fair: Task based
        // throttle time accounting"; before, at the throttle, which in the
        // flat model is the same instant).
        let mut x = Some(g);
        while let Some(y) = x {
            let gc = &mut tg.cpu[y][cpu];
            if gc.throttled && gc.throttled_clock.is_none() {
                gc.throttled_clock = Some(now);
            }
            x = tg.parent[y];
        }
        // A throttled task waits for a timer, as a sleeper does (the
        // engine's deadlock test).
        self.pending_timers += 1;
    }

    /// A task of group `g` is being enqueued on `cpu`: when the group's
    /// runqueue there is out of runtime (`check_enqueue_throttle()`) or
    /// throttled, the task goes to the limbo list instead (true).
    pub(crate) fn throttle_on_enqueue(&mut self, cpu: usize, t: TaskId, g: usize) -> bool {
        let tg = self.groups.as_ref().expect("groups");
        let chain: Vec<usize> = tg.chain(g).filter(|&x| tg.bw[x].is_some()).collect();
        for x in chain {
            let tg = self.groups.as_ref().expect("groups");
            let gc = &tg.cpu[x][cpu];
            // An active group is left to update_curr() → put_prev (its
            // runqueue has a task running: `cfs_rq->curr`).
            let running = self.rqs[cpu].curr().is_some_and(|c| {
                tg.task_group[c as usize].is_some_and(|cg| tg.chain(cg as usize).any(|y| y == x))
            });
            if gc.throttled || running || gc.runtime_remaining > 0 {
                continue;
            }
            let slice = self.bandwidth_slice();
            if !self.assign_cfs_rq_runtime(x, cpu, slice) {
                self.throttle_cfs_rq(x, cpu);
            }
        }
        let tg = self.groups.as_ref().expect("groups");
        // A delayed-dequeue sleeper moved by the balancer is queued as it
        // is (the next schedule() finishes its dequeue).
        if !tg.task_throttled_hierarchy(t, cpu)
            || self.tasks[t as usize].state == TaskState::Sleeping
        {
            return false;
        }
        self.enter_limbo(cpu, t, g);
        true
    }

    /// `unthrottle_cfs_rq()`: group `g`'s runqueue on `cpu` has runtime
    /// again; every group under it whose `throttle_count` drops to 0
    /// enqueues its limbo tasks (`tg_unthrottle_up()`), and an idle CPU is
    /// told to reschedule.
    fn unthrottle_cfs_rq(&mut self, g: usize, cpu: usize) {
        let now = self.now;
        let by_task = self.kernel.cfs_throttle == CfsThrottle::Task;
        let tg = self.groups.as_mut().expect("groups");
        tg.cpu[g][cpu].throttled = false;
        tg.throttled_on[cpu] -= 1;
        if let Some(c) = tg.cpu[g][cpu].throttled_clock.take() {
            tg.bw[g].as_mut().expect("bandwidth").throttled_time += now - c;
        }
        let mut released: Vec<TaskId> = Vec::new();
        let mut stack = vec![g];
        while let Some(x) = stack.pop() {
            let gc = &mut tg.cpu[x][cpu];
            gc.throttle_count -= 1;
            if gc.throttle_count == 0 {
                released.append(&mut gc.limbo);
            }
            stack.extend(tg.children[x].iter().copied());
        }
        for &t in &released {
            tg.throttled[t as usize] = false;
        }
        self.rq_sync(cpu);
        for t in released {
            self.pending_timers -= 1;
            let task = &mut self.tasks[t as usize];
            debug_assert_eq!(task.state, TaskState::Runnable);
            task.wait_start = now;
            let flags = EnqueueFlags {
                wakeup: by_task,
                waking: false,
                initial: false,
            };
            self.activate_task(cpu, t, flags);
        }
        if self.rqs[cpu].curr().is_none() && self.rqs[cpu].cfs.nr_running > 0 {
            self.resched_cpu(cpu, None);
        }
        self.rearm(cpu);
    }

    /// `distribute_cfs_runtime()`: hand the pool out to group `g`'s
    /// throttled runqueues in the order they were throttled, each getting
    /// enough to bring it to 1 ns; returns whether any is still throttled.
    fn distribute_cfs_runtime(&mut self, g: usize) -> bool {
        let mut i = 0;
        loop {
            let tg = self.groups.as_mut().expect("groups");
            let b = tg.bw[g].as_mut().expect("bandwidth");
            if i >= b.throttled.len() {
                break;
            }
            if b.runtime <= 0 {
                break;
            }
            let cpu = b.throttled[i] as usize;
            let gc = &mut tg.cpu[g][cpu];
            let runtime = (-gc.runtime_remaining + 1).min(b.runtime);
            b.runtime -= runtime;
            gc.runtime_remaining += runtime;
            if gc.runtime_remaining > 0 {
                b.throttled.remove(i);
                self.unthrottle_cfs_rq(g, cpu);
            } else {
                i += 1;
            }
        }
        let tg = self.groups.as_ref().expect("groups");
        !tg.bw[g].as_ref().expect("bandwidth").throttled.is_empty()
    }

    /// `__refill_cfs_bandwidth_runtime()` (5.16): add a quota, count a
    /// burst when the last period drew past the quota, cap the pool at
    /// quota + burst.
    fn refill_cfs_bandwidth_runtime(&mut self, g: usize) {
        let tg = self.groups.as_mut().expect("groups");
        let b = tg.bw[g].as_mut().expect("bandwidth");
        b.runtime += b.quota as i64;
        let used = b.runtime_snap - b.runtime;
        if used > 0 {
            b.burst_time += used as u64;
            b.nr_burst += 1;
        }
        b.runtime = b.runtime.min((b.quota + b.burst) as i64);
        b.runtime_snap = b.runtime;
    }

    /// `sched_cfs_period_timer()` → `do_sched_cfs_period_timer()`: count
    /// the period, refill, go idle after a period without use or
    /// throttling, else distribute to the throttled runqueues.
    pub(crate) fn cfs_period_timer(&mut self, g: usize) {
        let now = self.now;
        let tg = self.groups.as_mut().expect("groups");
        let b = tg.bw[g].as_mut().expect("bandwidth");
        // hrtimer_forward_now(): overrun periods.
        let mut overrun = 0;
        while b.expires <= now {
            b.expires += b.period;
            overrun += 1;
        }
        let throttled = !b.throttled.is_empty();
        b.nr_periods += overrun;
        self.refill_cfs_bandwidth_runtime(g);
        let b = self.groups.as_mut().expect("groups").bw[g]
            .as_mut()
            .expect("bandwidth");
        if b.idle && !throttled {
            b.period_active = false;
            return;
        }
        if !throttled {
            b.idle = true;
        } else {
            b.nr_throttled += overrun;
            let mut more = true;
            while more
                && self.groups.as_ref().expect("groups").bw[g]
                    .as_ref()
                    .expect("bw")
                    .runtime
                    > 0
            {
                more = self.distribute_cfs_runtime(g);
            }
            self.groups.as_mut().expect("groups").bw[g]
                .as_mut()
                .expect("bw")
                .idle = false;
        }
        let at = self.groups.as_ref().expect("groups").bw[g]
            .as_ref()
            .expect("bw")
            .expires;
        self.hrtimer_start_cfs_period(g, at);
    }

    /// `runtime_refresh_within()`: is the period timer due within `min`?
    fn runtime_refresh_within(&self, g: usize, min: u64) -> bool {
        let b = self.groups.as_ref().expect("groups").bw[g]
            .as_ref()
            .expect("bw");
        b.period_active && b.expires.saturating_sub(self.now) < min
    }

    /// `return_cfs_rq_runtime()` / `__return_cfs_rq_runtime()`: a group
    /// runqueue on `cpu` left empty gives back all but
    /// `min_cfs_rq_runtime`; with runqueues throttled and more than a slice
    /// in the pool, the slack timer hands it out.
    pub(crate) fn return_cfs_rq_runtime(&mut self, cpu: usize, g: usize) {
        let tg = self.groups.as_ref().expect("groups");
        let chain: Vec<usize> = tg
            .chain(g)
            .filter(|&x| tg.bw[x].is_some() && tg.cpu[x][cpu].h_nr == 0)
            .collect();
        let slice = self.bandwidth_slice();
        for x in chain {
            let tg = self.groups.as_mut().expect("groups");
            let gc = &mut tg.cpu[x][cpu];
            let slack = gc.runtime_remaining - MIN_CFS_RQ_RUNTIME;
            if slack <= 0 {
                continue;
            }
            gc.runtime_remaining -= slack;
            let b = tg.bw[x].as_mut().expect("bw");
            b.runtime += slack;
            if b.runtime > slice && !b.throttled.is_empty() {
                self.start_cfs_slack_bandwidth(x);
            }
        }
    }

    /// `start_cfs_slack_bandwidth()`.
    fn start_cfs_slack_bandwidth(&mut self, g: usize) {
        if self.runtime_refresh_within(g, MIN_BANDWIDTH_EXPIRATION) {
            return;
        }
        let b = self.groups.as_mut().expect("groups").bw[g]
            .as_mut()
            .expect("bw");
        if b.slack_started {
            return;
        }
        b.slack_started = true;
        let at = self.now + CFS_BANDWIDTH_SLACK_PERIOD;
        self.hrtimer_start_cfs_slack(g, at);
    }

    /// `sched_cfs_slack_timer()` → `do_sched_cfs_slack_timer()`.
    pub(crate) fn cfs_slack_timer(&mut self, g: usize) {
        self.groups.as_mut().expect("groups").bw[g]
            .as_mut()
            .expect("bw")
            .slack_started = false;
        if self.runtime_refresh_within(g, MIN_BANDWIDTH_EXPIRATION) {
            return;
        }
        let slice = self.bandwidth_slice();
        if self.groups.as_ref().expect("groups").bw[g]
            .as_ref()
            .expect("bw")
            .runtime
            <= slice
        {
            return;
        }
        self.distribute_cfs_runtime(g);
    }

    /// The task on `cpu` reached a return to user space (its burst ended)
    /// with its group throttled there: it must reschedule (the 6.18
    /// throttle task work, `throttle_cfs_rq_work()`). True if so.
    pub(crate) fn throttle_at_boundary(&mut self, cpu: usize, t: TaskId) -> bool {
        let tg = self.groups.as_ref().expect("groups");
        if tg.throttled_on[cpu] == 0 || !tg.task_throttled_hierarchy(t, cpu) {
            return false;
        }
        self.rqs[cpu].need_resched = true;
        true
    }
}
