//! The RT class's entry points on `Sched`, after `kernel/sched/rt.c` and
//! `cpupri.c` of 6.18 (and of 4.11 where a `Kernel` field says):
//! `select_task_rq_rt()` / `find_lowest_rq()` on wake-up and fork,
//! `wakeup_preempt()` for the class (`check_preempt_curr_rt()` and
//! `check_preempt_equal_prio()`), `task_woken_rt()` and the post-schedule
//! push (`push_rt_tasks()`), `balance_rt()` → `pull_rt_task()` (`push`)
//! when an RT task leaves a CPU, `task_tick_rt()` (SCHED_RR's slice),
//! `yield_task_rt()`, and RT bandwidth throttling (`update_curr_rt()` /
//! `sched_rt_runtime_exceeded()`, the period timer's
//! `do_sched_rt_period_timer()`). An RT task runs as the CPU's current task
//! (`Rq::curr()`), ahead of every fair task. Simplifications are listed in
//! `sched::rt`.

use crate::sched::rt::MAX_RT_PRIO;
use crate::sched::task::Policy;
use crate::sched::task::TaskId;
use crate::sched::Sched;

/// `CPUPRI_NORMAL` as a key of [`Sched::rt_cpupri`]: no RT task queued.
const CPUPRI_NORMAL: u32 = MAX_RT_PRIO;
/// `CPUPRI_IDLE` (before ~5.11, Kernel field `cpupri_idle`).
const CPUPRI_IDLE: u32 = MAX_RT_PRIO + 1;

/// A CPU's `struct rt_rq`.
#[derive(Clone, Debug, Default)]
pub(crate) struct RtRq {
    /// Queued RT tasks, the running one included (`rt_nr_running`).
    pub queue: Vec<TaskId>,
    /// The running RT task (`rq->curr` when it is RT).
    pub curr: Option<TaskId>,
    /// `rt_rq->overloaded`, this CPU's bit of `rd->rto_mask`.
    pub overloaded: bool,
    /// 4.1-4.14 `push_flags` / `push_cpu` of this rq's own irq_work chain.
    pub push_flags: u8,
    pub push_cpu: usize,
    /// When the current throttle began (for `rt_throttled_s`).
    pub throttled_at: u64,
    /// `curr->se.exec_start` for `update_curr_rt()`.
    pub exec_start: u64,
    /// RT time used in this period (`rt_rq->rt_time`).
    pub rt_time: u64,
    pub throttled: bool,
    /// `rt_nr_running` as `rq->nr_running` counts it: the queue's length,
    /// 0 while throttled (`sched_rt_rq_dequeue()`).
    pub nr_running: u32,
    /// The period timer is armed for this CPU.
    pub period_armed: bool,
}

impl Sched<'_> {
    /// Is `t` in the RT class (`rt_task(p)`)?
    #[inline]
    pub(crate) fn is_rt_task(&self, t: TaskId) -> bool {
        self.tasks[t as usize].policy.is_rt()
    }

    /// `rt_rq->highest_prio.curr`: the best queued priority on `cpu`
    /// (MAX_RT_PRIO when none).
    pub(crate) fn rt_task_highest(&self, cpu: usize) -> u32 {
        self.rqs[cpu]
            .rtq
            .queue
            .iter()
            .map(|&t| self.tasks[t as usize].prio)
            .min()
            .unwrap_or(MAX_RT_PRIO)
    }

    /// `rt_rq->highest_prio.next` as `pull_rt_task()` and the 4.1 chain
    /// read it: the best pushable task's priority (MAX_RT_PRIO when none).
    pub(crate) fn rt_highest_next(&self, cpu: usize) -> u32 {
        self.rt_pushable(cpu, None)
            .map_or(MAX_RT_PRIO, |t| self.tasks[t as usize].prio)
    }

    /// `def_rt_bandwidth` from the sysctls: the period and the runtime per
    /// period in ns (`None`: RUNTIME_INF, no throttling).
    pub(crate) fn rt_bandwidth(&self) -> (u64, Option<u64>) {
        let period = self.kernel.sched_rt_period_us as u64 * 1000;
        let runtime = u64::try_from(self.kernel.sched_rt_runtime_us)
            .ok()
            .map(|r| r * 1000);
        (period, runtime)
    }

    /// The time CPUs' RT tasks have been throttled, spans still open
    /// included.
    pub(crate) fn rt_throttled_ns(&self) -> u64 {
        let open: u64 = self
            .rqs
            .iter()
            .filter(|rq| rq.rtq.throttled)
            .map(|rq| self.now - rq.rtq.throttled_at)
            .sum();
        self.rt_root.stats.throttled_ns + open
    }

    /// The cpupri level of `cpu` (`convert_prio()`): its best queued RT
    /// priority, else CPUPRI_NORMAL, or CPUPRI_IDLE for an idle CPU while
    /// `cpupri_idle`. A larger key is a lower priority.
    fn rt_cpupri(&self, cpu: usize) -> u32 {
        let h = self.rt_task_highest(cpu);
        if h < MAX_RT_PRIO {
            h
        } else if self.kernel.cpupri_idle && self.idle_cpu(cpu) {
            CPUPRI_IDLE
        } else {
            CPUPRI_NORMAL
        }
    }

    fn rt_nr_allowed(&self, t: TaskId) -> usize {
        self.tasks[t as usize]
            .allowed
            .as_ref()
            .map_or(self.rqs.len(), Vec::len)
    }

    /// `find_lowest_rq()` (6.18, with `cpupri_find()`): the allowed CPUs
    /// at the lowest cpupri level below `t`'s priority; among them the
    /// task's CPU, then `this_cpu` (the CPU running the code), then the
    /// nearest to the task's CPU (lowest index on a tie). `None` when no
    /// allowed CPU runs below `t`.
    pub(crate) fn find_lowest_rq(&self, t: TaskId, this_cpu: usize) -> Option<usize> {
        let prio = self.tasks[t as usize].prio;
        let home = self.tasks[t as usize].cpu as usize;
        // One pass: the highest key (lowest level), and among its CPUs the
        // best by (home first, then this_cpu, then distance and index).
        let mut best = None;
        for c in (0..self.rqs.len()).filter(|&c| self.allowed(t, c)) {
            let key = self.rt_cpupri(c);
            if key <= prio {
                continue;
            }
            let rank: u8 = if c == home {
                0
            } else if c == this_cpu {
                1
            } else {
                2
            };
            let order = (rank, self.machine.distance(home, c), c);
            if best.is_none_or(|(k, o): (u32, _)| key > k || (key == k && order < o)) {
                best = Some((key, order));
            }
        }
        best.map(|(_, (_, _, c))| c)
    }

    /// `select_task_rq_rt()` (6.18) for a wake-up or fork of `t` last on
    /// `prev`, run by `this_cpu`: stay unless an RT task runs on `prev`
    /// that `t` cannot preempt (or that cannot move); then the lowest CPU
    /// if `t` beats what is queued there. A CPU outside `t`'s affinity
    /// falls back to its first allowed CPU (`select_fallback_rq()`).
    #[cold]
    #[inline(never)]
    pub(crate) fn select_task_rq_rt(&self, t: TaskId, prev: usize, this_cpu: usize) -> usize {
        let prio = self.tasks[t as usize].prio;
        let blocks = self.rqs[prev]
            .rtq
            .curr
            .is_some_and(|c| self.rt_nr_allowed(c) < 2 || self.tasks[c as usize].prio <= prio);
        if blocks && self.rt_nr_allowed(t) > 1 {
            if let Some(target) = self.find_lowest_rq(t, this_cpu) {
                if prio < self.rt_task_highest(target) {
                    return target;
                }
            }
        }
        if self.allowed(t, prev) {
            prev
        } else {
            self.select_fallback_rq(t, prev)
        }
    }

    /// `enqueue_task_rt()`: queue `t` on `cpu` at the tail of its level (or
    /// the head: `ENQUEUE_HEAD`), count it runnable, update the overload.
    #[cold]
    #[inline(never)]
    pub(crate) fn enqueue_task_rt(&mut self, cpu: usize, t: TaskId, head: bool) {
        self.rt_requeue_seq(t, head);
        let rq = &mut self.rqs[cpu].rtq;
        rq.queue.push(t);
        if !rq.throttled {
            rq.nr_running += 1;
        }
        self.nr_running_total += 1;
        self.update_rt_overload(cpu);
        self.update_sg_sums(cpu);
    }

    /// `dequeue_task_rt()`.
    #[cold]
    #[inline(never)]
    pub(crate) fn dequeue_task_rt(&mut self, cpu: usize, t: TaskId) {
        let rq = &mut self.rqs[cpu].rtq;
        if let Some(i) = rq.queue.iter().position(|&x| x == t) {
            rq.queue.swap_remove(i);
            if !rq.throttled {
                rq.nr_running -= 1;
            }
            self.nr_running_total -= 1;
        }
        if rq.curr == Some(t) {
            rq.curr = None;
        }
        self.update_rt_overload(cpu);
        self.update_sg_sums(cpu);
    }

    /// The queue position: a new tail (or head) sequence number.
    fn rt_requeue_seq(&mut self, t: TaskId, head: bool) {
        self.rt_root.seq += 1;
        let s = self.rt_root.seq;
        self.tasks[t as usize].rt_seq = if head {
            u64::MAX / 2 - s
        } else {
            u64::MAX / 2 + s
        };
    }

    /// A pushable task on `cpu` (queued, not running, more than one CPU
    /// allowed), best first (`pick_next_pushable_task()`), optionally
    /// allowed on `dst` (`pick_highest_pushable_task()`).
    pub(crate) fn rt_pushable(&self, cpu: usize, dst: Option<usize>) -> Option<TaskId> {
        let rq = &self.rqs[cpu].rtq;
        rq.queue
            .iter()
            .copied()
            .filter(|&t| Some(t) != rq.curr && self.rt_nr_allowed(t) > 1)
            .filter(|&t| dst.is_none_or(|d| self.allowed(t, d)))
            .min_by_key(|&t| (self.tasks[t as usize].prio, self.tasks[t as usize].rt_seq))
    }

    /// `rt_set_overload()` / `rt_clear_overload()`: whether `cpu` is
    /// RT-overloaded, its bit of `rto_mask` and `rto_count`. With
    /// `rt_overload_pushable` (6.8+) while it has a pushable task
    /// (`enqueue_pushable_task()` / `dequeue_pushable_task()` drive it);
    /// before, `update_rt_migration()`'s rule: more than one RT task queued
    /// (`rt_nr_total > 1`, the running one included) and one of them may
    /// migrate (`rt_nr_migratory`), even a running one beside pinned
    /// queued ones.
    fn update_rt_overload(&mut self, cpu: usize) {
        let over = if self.kernel.rt_overload_pushable {
            self.rt_pushable(cpu, None).is_some()
        } else {
            let q = &self.rqs[cpu].rtq.queue;
            q.len() > 1 && q.iter().any(|&t| self.rt_nr_allowed(t) > 1)
        };
        if over != self.rqs[cpu].rtq.overloaded {
            self.rqs[cpu].rtq.overloaded = over;
            if over {
                self.rt_root.rto_count += 1;
            } else {
                self.rt_root.rto_count -= 1;
            }
        }
    }

    /// `pick_next_task_rt()`: the best queued task (FIFO within a level),
    /// none while the CPU is throttled.
    fn pick_next_task_rt(&self, cpu: usize) -> Option<TaskId> {
        let rq = &self.rqs[cpu].rtq;
        if rq.throttled {
            return None;
        }
        rq.queue
            .iter()
            .copied()
            .min_by_key(|&t| (self.tasks[t as usize].prio, self.tasks[t as usize].rt_seq))
    }

    /// The RT part of `__schedule()` on `cpu` once `put_prev_task_rt()` of
    /// an RT `prev` is done: `balance_rt()` — a `prev` that
    /// blocked with nothing as good left queued pulls (`pull_rt_task()`) —
    /// and `pick_next_task_rt()`. An RT pick puts the fair `curr` back
    /// (`put_prev_task_fair()`) and becomes `rq->curr`. `None`: the fair
    /// class picks.
    #[cold]
    #[inline(never)]
    pub(crate) fn schedule_rt(&mut self, cpu: usize, prev: Option<TaskId>) -> Option<TaskId> {
        if let Some(p) = prev {
            let gone = !self.rqs[cpu].rtq.queue.contains(&p);
            if gone && self.rt_task_highest(cpu) > self.tasks[p as usize].prio {
                self.pull_rt_task(cpu);
            }
        }
        let next = self.pick_next_task_rt(cpu)?;
        if self.rqs[cpu].curr != Some(next) {
            self.rt_root.stats.runs += 1;
        }
        if self.rqs[cpu].cfs.curr.is_some() {
            self.put_prev_task_fair(cpu);
        }
        self.rqs[cpu].curr = Some(next);
        let rq = &mut self.rqs[cpu].rtq;
        rq.curr = Some(next);
        rq.exec_start = self.now;
        self.update_rt_overload(cpu);
        self.update_sg_sums(cpu);
        Some(next)
    }

    /// `put_prev_task_rt()`: account the running RT task
    /// (`update_curr_rt()`); it stays queued, now pushable.
    #[cold]
    #[inline(never)]
    pub(crate) fn put_prev_task_rt(&mut self, cpu: usize) {
        self.update_curr_rt(cpu);
        self.rqs[cpu].rtq.curr = None;
        self.update_rt_overload(cpu);
    }

    /// `put_prev_task_fair()` when an RT task takes the CPU: the fair
    /// `curr` goes back to its tree.
    #[cold]
    #[inline(never)]
    fn put_prev_task_fair(&mut self, cpu: usize) {
        if let Some(c) = self.rqs[cpu].cfs.curr {
            if self.ses[c as usize].on_rq {
                self.pelt_update(cpu, c);
            }
            let now = self.now;
            self.rqs[cpu].cfs.put_prev_entity(&mut self.ses, now);
        }
    }

    /// The post-schedule push (`rt_queue_push_tasks()`, a balance
    /// callback): after an RT pick, push what can run elsewhere.
    #[cold]
    #[inline(never)]
    pub(crate) fn rt_post_schedule(&mut self, cpu: usize) {
        if self.rqs[cpu].rtq.curr.is_some() && self.rt_pushable(cpu, None).is_some() {
            self.push_rt_tasks(cpu, cpu);
        }
    }

    /// `wakeup_preempt()` when the RT class is involved (`p` is RT or an
    /// RT task runs on `cpu`): a higher class always preempts; a fair
    /// wakee never preempts an RT task; `check_preempt_curr_rt()` between
    /// RT tasks — a better priority preempts, an equal one only through
    /// `check_preempt_equal_prio()` (the running task can move elsewhere
    /// and `p` cannot).
    #[cold]
    #[inline(never)]
    pub(crate) fn check_preempt_rt(&mut self, cpu: usize, p: TaskId, local: Option<usize>) {
        let preempt = match self.rqs[cpu].rtq.curr {
            None => true,
            Some(_) if !self.is_rt_task(p) => false,
            Some(c) => {
                let (pp, cp) = (self.tasks[p as usize].prio, self.tasks[c as usize].prio);
                pp < cp
                    || (pp == cp
                        && !self.rqs[cpu].need_resched
                        && self.rt_equal_prio_preempts(c, p))
            }
        };
        if preempt {
            self.resched_cpu(cpu, local);
        }
    }

    /// `check_preempt_equal_prio()`: `curr` can run elsewhere and `p`
    /// cannot, so `p` goes to the head and `curr` is rescheduled (to be
    /// pushed).
    fn rt_equal_prio_preempts(&mut self, curr: TaskId, p: TaskId) -> bool {
        if self.rt_nr_allowed(curr) == 1 || self.find_lowest_rq(curr, 0).is_none() {
            return false;
        }
        if self.rt_nr_allowed(p) != 1 && self.find_lowest_rq(p, 0).is_some() {
            return false;
        }
        self.rt_requeue_seq(p, true);
        true
    }

    /// `task_woken_rt()`: `p` queued behind an RT task it cannot preempt
    /// (or one that cannot move) is pushed if it can go elsewhere.
    #[cold]
    #[inline(never)]
    pub(crate) fn task_woken_rt(&mut self, cpu: usize, p: TaskId, by: usize) {
        let rq = &self.rqs[cpu];
        let Some(c) = rq.rtq.curr else { return };
        if c == p || rq.need_resched || self.rt_nr_allowed(p) < 2 {
            return;
        }
        if self.rt_nr_allowed(c) < 2 || self.tasks[c as usize].prio <= self.tasks[p as usize].prio {
            self.push_rt_tasks(cpu, by);
        }
    }

    /// `push_rt_task()` (6.18) on `cpu`, run by `by`: move the best
    /// pushable task to the lowest CPU that can take it (`resched_curr()`
    /// there); a pushable task that beats what runs on `cpu` reschedules
    /// `cpu` instead. True if a task moved.
    pub(crate) fn push_rt_task(&mut self, cpu: usize, by: usize) -> bool {
        if !self.rqs[cpu].rtq.overloaded {
            return false;
        }
        let Some(next) = self.rt_pushable(cpu, None) else {
            return false;
        };
        let curr_prio = self.rqs[cpu]
            .rtq
            .curr
            .map_or(MAX_RT_PRIO, |c| self.tasks[c as usize].prio);
        if self.tasks[next as usize].prio < curr_prio {
            self.resched_cpu(cpu, Some(by));
            return false;
        }
        let Some(dst) = self.find_lowest_rq(next, by) else {
            return false;
        };
        if self.rt_task_highest(dst) <= self.tasks[next as usize].prio {
            return false;
        }
        self.rt_move(next, cpu, dst, by);
        self.rt_root.stats.pushes += 1;
        true
    }

    /// `push_rt_tasks()`: push until nothing moves.
    pub(crate) fn push_rt_tasks(&mut self, cpu: usize, by: usize) {
        for _ in 0..=self.rqs[cpu].rtq.queue.len() {
            if !self.push_rt_task(cpu, by) {
                break;
            }
        }
    }

    /// `deactivate_task()` / `set_task_cpu()` / `activate_task()` of a
    /// queued (not running) RT task from `src` to `dst`, run by `by`: the
    /// move both the push and the pull make.
    pub(crate) fn rt_transfer(&mut self, t: TaskId, src: usize, dst: usize, by: usize) {
        self.dequeue_task_rt(src, t);
        self.migration_refill(t, src, dst);
        self.set_task_cpu(t, dst, by);
        self.rq_sync(dst);
        self.enqueue_task_rt(dst, t, false);
    }

    /// [`Sched::rt_transfer`] under both runqueue locks (charged to `by`),
    /// then `resched_curr(dst)`.
    pub(crate) fn rt_move(&mut self, t: TaskId, src: usize, dst: usize, by: usize) {
        self.rt_transfer(t, src, dst, by);
        self.charge(by, self.cost.rq_lock_ns + self.cost.migrate_task_ns);
        self.resched_cpu(dst, Some(by));
        self.rearm(dst);
        self.rearm(by);
    }

    /// `update_curr_rt()` with `sched_rt_runtime_exceeded()`: charge the
    /// running RT task's time since `exec_start` to the CPU's RT budget;
    /// over `sched_rt_runtime_us` of the period the CPU is throttled (its
    /// RT tasks wait for the period timer) and rescheduled.
    fn update_curr_rt(&mut self, cpu: usize) {
        let now = self.now;
        let (period, runtime) = self.rt_bandwidth();
        let rq = &mut self.rqs[cpu].rtq;
        if rq.curr.is_none() {
            return;
        }
        let delta = now - rq.exec_start;
        rq.exec_start = now;
        let Some(runtime) = runtime else { return };
        rq.rt_time += delta;
        if !rq.period_armed {
            rq.period_armed = true;
            self.start_rt_task_period(cpu, (now / period + 1) * period);
        }
        let rq = &mut self.rqs[cpu].rtq;
        if rq.rt_time > runtime && !rq.throttled {
            if runtime == 0 {
                // sched_rt_runtime_exceeded(): "replenishment is a joke" with
                // a zero runtime; the kernel forgets the time instead.
                rq.rt_time = 0;
                return;
            }
            rq.throttled = true;
            rq.throttled_at = now;
            rq.nr_running = 0;
            self.rqs[cpu].need_resched = true;
            self.update_sg_sums(cpu);
        }
    }

    /// The RT period timer on `cpu` (`do_sched_rt_period_timer()`): the
    /// period's runtime is paid back (`rt_time -= min(rt_time, runtime)`);
    /// a throttled CPU whose debt is below the runtime runs its RT tasks
    /// again. Re-armed while the CPU has RT time or RT tasks.
    #[cold]
    #[inline(never)]
    pub(crate) fn rt_task_period_timer(&mut self, cpu: usize) {
        self.rq_sync(cpu);
        self.update_curr_rt(cpu);
        let (period, runtime) = self.rt_bandwidth();
        let runtime = runtime.unwrap_or(u64::MAX);
        let rq = &mut self.rqs[cpu].rtq;
        rq.rt_time -= rq.rt_time.min(runtime);
        if rq.throttled && rq.rt_time < runtime {
            rq.throttled = false;
            self.rt_root.stats.throttled_ns += self.now - rq.throttled_at;
            rq.nr_running = rq.queue.len() as u32;
            self.update_sg_sums(cpu);
            let rq = &self.rqs[cpu].rtq;
            if !rq.queue.is_empty() {
                self.resched_cpu(cpu, Some(cpu));
            }
        }
        let rq = &mut self.rqs[cpu].rtq;
        if rq.rt_time > 0 || !rq.queue.is_empty() {
            let next = (self.now / period + 1) * period;
            self.start_rt_task_period(cpu, next);
        } else {
            rq.period_armed = false;
        }
        self.finish_cpu(cpu);
    }

    /// `task_tick_rt()`: account the running RT task; a SCHED_RR task whose
    /// slice (`sched_rr_timeslice_ms` in ticks) ran out gets a new one and,
    /// with another task of its level queued, goes to the tail and is
    /// rescheduled.
    #[cold]
    #[inline(never)]
    pub(crate) fn task_tick_rt(&mut self, cpu: usize) {
        self.update_curr_rt(cpu);
        let Some(c) = self.rqs[cpu].rtq.curr else {
            return;
        };
        let ci = c as usize;
        if self.tasks[ci].policy != Policy::Rr {
            return;
        }
        self.tasks[ci].rr_ticks_left = self.tasks[ci].rr_ticks_left.saturating_sub(1);
        if self.tasks[ci].rr_ticks_left > 0 {
            return;
        }
        self.tasks[ci].rr_ticks_left = self.rr_timeslice_ticks();
        let prio = self.tasks[ci].prio;
        let peers = self.rqs[cpu]
            .rtq
            .queue
            .iter()
            .any(|&t| t != c && self.tasks[t as usize].prio == prio);
        if peers {
            self.rt_requeue_seq(c, false);
            self.rqs[cpu].need_resched = true;
        }
    }

    /// `sched_rr_timeslice`: `msecs_to_jiffies(sched_rr_timeslice_ms)`.
    pub(crate) fn rr_timeslice_ticks(&self) -> u32 {
        let ms = self.kernel.sched_rr_timeslice_ms;
        (ms * self.kernel.hz as u64)
            .div_ceil(1000)
            .clamp(1, u32::MAX as u64) as u32
    }

    /// `yield_task_rt()`: the running task goes to the tail of its level.
    #[cold]
    #[inline(never)]
    pub(crate) fn yield_task_rt(&mut self, cpu: usize) {
        if let Some(c) = self.rqs[cpu].rtq.curr {
            self.rt_requeue_seq(c, false);
        }
    }

    /// A new RT task (`sched_fork()` → `__sched_fork()`): its first RR
    /// slice; the RT class is now in use in this run.
    #[cold]
    #[inline(never)]
    pub(crate) fn rt_task_fork(&mut self, t: TaskId) {
        self.tasks[t as usize].rr_ticks_left = self.rr_timeslice_ticks();
        self.rt_root.tasks_used = true;
    }
}
