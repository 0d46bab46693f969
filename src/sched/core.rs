//! The scheduler core the engine calls, after `kernel/sched.c` (2.6.36) and
//! `kernel/sched/core.c` (3.8): `schedule()`, `scheduler_tick()`,
//! `try_to_wake_up()`, `wake_up_new_task()`, `resched_task()`,
//! `check_preempt_curr()`, `activate_task()`/`deactivate_task()`,
//! `set_task_cpu()`, and the scheduler side of the system calls the engine
//! carries out (`do_nanosleep()`, `do_sched_yield()`, `do_exit()`). Three
//! classes are modelled: fair (here and in `sched::fair` / `sched::fair::eevdf`),
//! RT (`sched::rt`) and stop (the stopper `migration/N`
//! of active balancing, `sched::balance`). An RT task is `rq->curr` while
//! it runs (the fair `curr` is put back, `put_prev_task_fair()`); the
//! stopper preempts the fair task, moves a task and reschedules at once,
//! its run charged to the CPU as system time. The idle task is "no task". Placement is in `sched::fair::wakeup`, balancing
//! in `sched::balance`.

use crate::kernel::{AvgIdleCap, TtwuQueue};
use crate::sched::balance::avg_idle_sample;
use crate::sched::fair::weights::task_weight;
use crate::sched::fair::SchedEntity;
use crate::sched::overhead::Overhead;
use crate::sched::stats::latency::Delay;
use crate::sched::task::{DequeueFlags, EnqueueFlags, TaskId};
use crate::sched::task::{Policy, Task, TaskState, Work};
use crate::sched::Sched;
use crate::trace::{TraceKind, PREV_STATE_DEAD, PREV_STATE_RUNNING, PREV_STATE_SLEEPING};

/// ftrace pid of a task (0 is the idle task, "swapper").
pub(crate) fn pid(t: Option<TaskId>) -> i32 {
    t.map_or(0, |t| t as i32 + 1)
}

impl Sched<'_> {
    pub(crate) fn trace(&mut self, cpu: usize, kind: TraceKind, pid: i32, a: i32, b: i32) {
        if let Some(tr) = self.trace.as_mut() {
            tr.push(self.now, cpu, kind, pid, a, b);
        }
    }

    pub(crate) fn trace_switch(&mut self, cpu: usize, prev: Option<TaskId>, next: Option<TaskId>) {
        self.trace(
            cpu,
            TraceKind::Switch,
            pid(prev),
            PREV_STATE_RUNNING,
            pid(next),
        );
    }

    /// Accumulate the Lozi invariant up to now: idle CPUs × time while some
    /// CPU has at least two runnable tasks.
    pub(crate) fn lozi_account(&mut self) {
        if self.acct.n_overloaded > 0 {
            self.counters.lozi_ns += (self.now - self.acct.lozi_last) * self.acct.n_empty as u64;
        }
        self.acct.lozi_last = self.now;
    }

    fn nr_running_changed(&mut self, old: u32, new: u32) {
        self.lozi_account();
        if old == 0 {
            self.acct.n_empty -= 1;
        }
        if new == 0 {
            self.acct.n_empty += 1;
        }
        if old >= 2 {
            self.acct.n_overloaded -= 1;
        }
        if new >= 2 {
            self.acct.n_overloaded += 1;
            // add_nr_running(): the root domain is overloaded once any
            // runqueue has more than one task.
            if old < 2 {
                self.balance.rd_overload = true;
            }
        }
    }

    /// `activate_task()`: enqueue, add to `rq->cfs_tasks`, count runnable.
    #[inline]
    pub(crate) fn activate_task(&mut self, cpu: usize, t: TaskId, flags: EnqueueFlags) {
        // A task group's share (and a throttled group's limbo list).
        if self.groups.is_some() && !self.group_enqueue(cpu, t) {
            return;
        }
        let now = self.now;
        let old = self.rqs[cpu].cfs.nr_running;
        self.pelt_enqueue(cpu, t);
        self.rqs[cpu]
            .cfs
            .enqueue_entity(&self.fair, &mut self.ses, t, flags, now);
        self.group_nodes
            .push_back(&mut self.rqs[cpu].bal.cfs_tasks, t);
        if self.ses[t as usize].policy == Policy::Idle {
            self.rqs[cpu].cfs.idle_h_nr_running += 1;
        }
        self.nr_running_total += 1;
        self.nr_running_changed(old, old + 1);
        self.update_sg_sums(cpu);
    }

    /// `deactivate_task()`: a task going to sleep or exiting (`sleep`), or
    /// being migrated (its vruntime is then normalised).
    pub(crate) fn deactivate_task(&mut self, cpu: usize, t: TaskId, sleep: bool) {
        if self.fair.eevdf.is_some() {
            let flags = DequeueFlags {
                sleep,
                special: self.tasks[t as usize].state == TaskState::Exited,
                delayed: false,
            };
            self.dequeue_task_eevdf(cpu, t, flags);
            return;
        }
        let now = self.now;
        let old = self.rqs[cpu].cfs.nr_running;
        self.pelt_update(cpu, t);
        self.pelt_v38_dequeue(cpu, t, sleep);
        self.rqs[cpu]
            .cfs
            .dequeue_entity(&mut self.ses, t, sleep, now);
        if self.tasks[t as usize].state == TaskState::Exited {
            self.pelt_detach(cpu, t);
        }
        self.dequeued(cpu, t, old);
    }

    /// `dequeue_task()` under EEVDF (6.12 `dequeue_entities()`): a sleeping
    /// task may stay queued as `sched_delayed` (DELAY_DEQUEUE), in which case
    /// nothing is accounted and false is returned (its PELT average is
    /// brought up to date and stays attached, as `update_load_avg(cfs_rq,
    /// se, 0)` does for a delayed entity).
    pub(crate) fn dequeue_task_eevdf(
        &mut self,
        cpu: usize,
        t: TaskId,
        flags: DequeueFlags,
    ) -> bool {
        let now = self.now;
        let old = self.rqs[cpu].cfs.nr_running;
        self.pelt_update(cpu, t);
        let done = self.rqs[cpu]
            .cfs
            .dequeue_entity_eevdf(&mut self.ses, t, flags, now);
        if done {
            self.pelt_v38_dequeue(cpu, t, flags.sleep);
            if flags.special {
                self.pelt_detach(cpu, t);
            }
            self.dequeued(cpu, t, old);
        }
        done
    }

    /// Finish the dequeue of `sched_delayed` task `t` (6.12-6.18):
    /// `dequeue_entities(rq, se, DEQUEUE_SLEEP | DEQUEUE_DELAYED)`, as
    /// `pick_next_entity()` (kernel/sched/fair.c) does when the pick is a
    /// delayed entity; also where a throttle meets one.
    pub(crate) fn finish_delayed_dequeue(&mut self, cpu: usize, t: TaskId) {
        let flags = DequeueFlags {
            sleep: true,
            special: false,
            delayed: true,
        };
        self.dequeue_task_eevdf(cpu, t, flags);
    }

    /// The accounting of a completed dequeue: `rq->cfs_tasks`, runnable counts.
    #[inline]
    fn dequeued(&mut self, cpu: usize, t: TaskId, old: u32) {
        self.group_nodes.remove(&mut self.rqs[cpu].bal.cfs_tasks, t);
        if self.ses[t as usize].policy == Policy::Idle {
            self.rqs[cpu].cfs.idle_h_nr_running -= 1;
        } else if self.kernel.sched_idle_balance && self.sched_idle_rq(cpu) {
            // dequeue_task_fair() (323af6deaf70): "balance early to pull
            // high priority tasks" once only SCHED_IDLE tasks are left.
            self.rqs[cpu].bal.next_balance = self.jiffies() * self.tick_ns;
        }
        self.nr_running_total -= 1;
        self.nr_running_changed(old, old - 1);
        self.update_sg_sums(cpu);
        if self.groups.is_some() {
            self.group_dequeue(cpu, t);
        }
    }

    /// `resched_task(rq->curr)`: set need_resched; a remote CPU learns of it
    /// through a reschedule IPI that arrives `ipi_latency_ns` later. `local`
    /// is the CPU whose handler is running (it reschedules on its way out).
    pub(crate) fn resched_cpu(&mut self, cpu: usize, local: Option<usize>) {
        let rq = &mut self.rqs[cpu];
        rq.need_resched = true;
        if local == Some(cpu) || self.in_init || rq.resched_pending {
            return;
        }
        rq.resched_pending = true;
        // Woken through its wake list, the CPU reschedules in that IPI's
        // handler (sched_ttwu_pending()): no reschedule IPI is sent. The
        // model keeps the event, with the same latency.
        if !self.wakelist_ipi {
            self.counters.resched_ipis += 1;
            if rq.curr().is_none() {
                self.counters.resched_ipis_idle += 1;
            }
        }
        self.smp_send_reschedule(cpu);
    }

    /// `check_preempt_curr()`: an idle CPU always reschedules; otherwise
    /// the fair class's `check_preempt_wakeup()` decides.
    #[inline]
    pub(crate) fn check_preempt_curr(
        &mut self,
        cpu: usize,
        p: TaskId,
        fork: bool,
        local: Option<usize>,
    ) {
        if self.rt_root.tasks_used && (self.rqs[cpu].rtq.curr.is_some() || self.is_rt_task(p)) {
            self.check_preempt_rt(cpu, p, local);
            return;
        }
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        let preempt = if self.fair.eevdf.is_some() {
            // resched_curr() from an update_curr() of this enqueue counts too.
            let asked = std::mem::take(&mut rq.cfs.resched);
            let need = rq.need_resched || asked;
            let wake = rq.cfs.curr.is_none()
                || rq
                    .cfs
                    .check_preempt_wakeup_eevdf(&mut self.ses, p, fork, need, now);
            let asked_again = std::mem::take(&mut rq.cfs.resched);
            wake || asked || asked_again
        } else {
            rq.cfs.curr.is_none()
                || rq.cfs.check_preempt_wakeup(
                    &self.fair,
                    &mut self.ses,
                    p,
                    fork,
                    rq.need_resched,
                    now,
                )
        };
        if preempt {
            self.resched_cpu(cpu, local);
        }
    }

    /// `set_task_cpu()`: move the task's home CPU, counting a migration
    /// (perf's `cpu-migrations`) when it changes.
    #[inline]
    pub(crate) fn set_task_cpu(&mut self, t: TaskId, cpu: usize, trace_cpu: usize) {
        let old = self.tasks[t as usize].cpu as usize;
        if old != cpu {
            if !self.tasks[t as usize].policy.is_rt() {
                self.pelt_detach(old, t);
            }
            self.tasks[t as usize].migrations += 1;
            self.counters.cpu_migrations += 1;
            self.trace(
                trace_cpu,
                TraceKind::MigrateTask,
                pid(Some(t)),
                old as i32,
                cpu as i32,
            );
        }
        self.tasks[t as usize].cpu = cpu as u32;
    }

    /// Not a kernel function: the cost `task_hot()` guards against. A task
    /// that moves from `src` to `dst` — by a balancer pull or by a wake-up
    /// placed on another CPU (both are perf's `cpu-migrations`) — runs its
    /// next work cache-cold: `CostModel::refill` by the distance moved,
    /// fading with the time since it last ran (`exec_start`). Added to the
    /// task's pending work, so it is charged in the task's own user or
    /// system time when it next runs. Fork placement pays nothing (the
    /// child has no cache state of its own yet).
    pub(crate) fn migration_refill(&mut self, t: TaskId, src: usize, dst: usize) {
        let age = self.now.saturating_sub(self.ses[t as usize].exec_start);
        let refill = self.cost.refill(self.machine.distance(src, dst), age);
        self.tasks[t as usize].work_left += refill;
        self.counters.refill_ns += refill;
    }

    /// `select_fallback_rq()`, simplified: the first CPU of `t`'s affinity
    /// (`cpu` when it may run anywhere).
    pub(crate) fn select_fallback_rq(&self, t: TaskId, cpu: usize) -> usize {
        self.tasks[t as usize]
            .allowed
            .as_ref()
            .map_or(cpu, |a| a[0] as usize)
    }

    pub(crate) fn allowed(&self, t: TaskId, cpu: usize) -> bool {
        self.tasks[t as usize]
            .allowed
            .as_ref()
            .is_none_or(|a| a.binary_search(&(cpu as u32)).is_ok())
    }

    /// `sched_fork()` → `task_fork_fair()` (2.6.36): the child starts from
    /// the running task's vruntime on `home` (the parent's CPU),
    /// `place_entity(initial)` adds the START_DEBIT vslice and the result is
    /// normalised. Adds the task and its entity; returns its id.
    pub(crate) fn sched_fork(&mut self, task: Task, home: usize) -> TaskId {
        let id = self.tasks.len() as TaskId;
        let (w, inv) = task_weight(task.policy, task.nice);
        let mut se = SchedEntity::new(w, inv);
        se.policy = task.policy;
        // 6.6+ (eevdf): __sched_fork() zeroes vlag; the entity is placed by
        // place_entity(ENQUEUE_INITIAL) when wake_up_new_task() enqueues it.
        if self.fair.eevdf.is_none() {
            let now = self.now;
            let cfs = &mut self.rqs[home].cfs;
            cfs.update_curr(&mut self.ses, now);
            if let Some(c) = cfs.curr {
                se.vruntime = self.ses[c as usize].vruntime;
            }
            cfs.place_entity(&self.fair, &mut se, true);
            se.vruntime -= cfs.min_vruntime;
        }
        let rt = task.policy.is_rt();
        self.ses.push(se);
        self.tasks.push(task);
        self.wake.add_task(id, home);
        if rt {
            self.rt_task_fork(id);
        }
        id
    }

    /// `wake_up_new_task()` (2.6.36): place the child forked on `home`
    /// (`select_task_rq(SD_BALANCE_FORK)`), enqueue it and let it preempt
    /// (WF_FORK). `parent_cpu`: the CPU running the fork; `None` for a
    /// harness-created task, placed as if forked on an idle CPU (no
    /// migration counted).
    pub(crate) fn wake_up_new_task(&mut self, id: TaskId, home: usize, parent_cpu: Option<usize>) {
        let rt = self.is_rt_task(id);
        let by = parent_cpu.unwrap_or(home);
        let cpu = if rt {
            self.select_task_rq_rt(id, home, by)
        } else {
            self.select_task_rq_fork(id, home)
        };
        if parent_cpu.is_some() {
            self.set_task_cpu(id, cpu, home);
        } else {
            self.tasks[id as usize].cpu = cpu as u32;
        }
        // 6.x sets p->recent_used_cpu = task_cpu(p) (home, the parent's
        // CPU) before select_task_rq() moves the child: sched_fork() did it.
        self.rq_sync(cpu);
        if rt {
            self.enqueue_task_rt(cpu, id, false);
        } else {
            self.pelt_init_task(cpu, id);
            let flags = EnqueueFlags {
                initial: true,
                ..Default::default()
            };
            self.activate_task(cpu, id, flags);
        }
        // The waker (ftrace's common_pid): the parent, running on its CPU.
        let waker = parent_cpu.and_then(|c| self.rqs[c].curr());
        self.trace(
            home,
            TraceKind::WakeupNew,
            pid(Some(id)),
            cpu as i32,
            pid(waker),
        );
        self.check_preempt_curr(cpu, id, true, parent_cpu);
        if rt {
            // task_woken_rt() of the new task.
            self.task_woken_rt(cpu, id, by);
        }
        self.rearm(cpu);
    }

    /// `try_to_wake_up()` (2.6.36 order): `task_waking_fair` normalises the
    /// vruntime against the old CPU, `select_task_rq` places, the task is
    /// enqueued with ENQUEUE_WAKEUP|ENQUEUE_WAKING (sleeper placement), then
    /// `check_preempt_curr`. Returns false if the task was not sleeping.
    pub(crate) fn try_to_wake_up(
        &mut self,
        t: TaskId,
        waker_cpu: usize,
        waker: Option<TaskId>,
        sync: bool,
    ) -> bool {
        let ti = t as usize;
        if self.tasks[ti].state != TaskState::Sleeping {
            return false;
        }
        if self.tasks[ti].timer_pending {
            self.tasks[ti].timer_pending = false;
            self.tasks[ti].timer_gen = self.tasks[ti].timer_gen.wrapping_add(1);
            self.pending_timers -= usize::from(!self.tasks[ti].kthread);
        }
        let prev_cpu = self.tasks[ti].cpu as usize;
        // ftrace's common_pid of the wake-up: the waker, or for a timer or
        // interrupt whatever runs on its CPU (0: idle).
        let waker_pid = pid(waker.or_else(|| self.rqs[waker_cpu].curr()));
        if self.ses[ti].sched_delayed {
            return self.ttwu_runnable(t, waker_cpu, waker_pid);
        }
        let rt = self.tasks[ti].policy.is_rt();
        if self.fair.eevdf.is_none() && !rt {
            self.ses[ti].vruntime -= self.rqs[prev_cpu].cfs.min_vruntime;
        }
        let cpu = if rt {
            self.select_task_rq_rt(t, prev_cpu, waker_cpu)
        } else {
            self.select_task_rq_wake(t, prev_cpu, waker_cpu, waker, sync)
        };
        if cpu != waker_cpu {
            if let Some(l) = self.sd[waker_cpu].iter().position(|d| d.contains(cpu)) {
                self.rqs[waker_cpu].bal.stats[l].ttwu_wake_remote += 1;
            }
        }
        if cpu != prev_cpu {
            self.migration_refill(t, prev_cpu, cpu);
        }
        self.set_task_cpu(t, cpu, waker_cpu);
        self.rq_sync(cpu);
        let wakelist =
            self.kernel.ttwu_queue != TtwuQueue::Off && self.ttwu_queue_cond(cpu, waker_cpu);
        if wakelist {
            self.counters.function_call_ipis += 1;
        }
        if rt {
            self.enqueue_task_rt(cpu, t, false);
        } else {
            self.activate_task(
                cpu,
                t,
                EnqueueFlags {
                    wakeup: true,
                    waking: true,
                    initial: false,
                },
            );
        }
        if wakelist {
            self.wakelist_ipi = true;
            self.ttwu_do_wakeup(t, cpu, waker_cpu, waker_pid);
            self.wakelist_ipi = false;
        } else {
            self.ttwu_do_wakeup(t, cpu, waker_cpu, waker_pid);
        }
        if rt {
            self.task_woken_rt(cpu, t, waker_cpu);
        }
        if !self.kernel.avg_idle_on_move {
            self.update_avg_idle_on_wakeup(cpu);
        }
        self.rearm(cpu);
        true
    }

    /// `ttwu_queue_cond()` (kernel/sched/core.c 3.0-6.18; Kernel field
    /// `ttwu_queue`): a wake-up onto another CPU goes by that CPU's wake
    /// list, a function-call IPI (CAL in /proc/interrupts), when the two
    /// CPUs share no cache (3.0) or, from 6.0, the target runs nothing
    /// (`!cpu_rq(cpu)->nr_running`). Simplifications: the target's idle
    /// loop never polls (a halted idle, as this project's VMs run: no
    /// `set_nr_if_polling()` saving), every queueing sends its IPI (no
    /// `llist_add()` batching), and the task is still enqueued by the
    /// waker (the timing is the reschedule IPI's).
    #[inline(never)]
    fn ttwu_queue_cond(&self, cpu: usize, waker_cpu: usize) -> bool {
        match self.kernel.ttwu_queue {
            TtwuQueue::Off => false,
            _ if cpu == waker_cpu => false,
            TtwuQueue::CrossLlc => !self.cpus_share_cache(waker_cpu, cpu),
            TtwuQueue::Idle => {
                !self.cpus_share_cache(waker_cpu, cpu) || self.rqs[cpu].nr_running() == 0
            }
        }
    }

    /// `ttwu_do_wakeup()`: the queued task becomes runnable (its wait
    /// starts, the wake-up is counted and traced) and may preempt `cpu`'s
    /// current task (`wakeup_preempt()`, `check_preempt_curr()` before 6.6).
    /// `waker_pid`: ftrace's pid of the waker (`sched_waking`'s common_pid).
    fn ttwu_do_wakeup(&mut self, t: TaskId, cpu: usize, waker_cpu: usize, waker_pid: i32) {
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        task.wait_start = self.now;
        task.woken = true;
        task.wakeups += 1;
        self.counters.wakeups += 1;
        self.trace(
            waker_cpu,
            TraceKind::Wakeup,
            pid(Some(t)),
            cpu as i32,
            waker_pid,
        );
        self.check_preempt_curr(cpu, t, false, Some(waker_cpu));
    }

    /// `ttwu_runnable()` (6.12): the task is still queued, `sched_delayed`
    /// (DELAY_DEQUEUE), so it is requeued where it is
    /// (`requeue_delayed_entity()`) without `select_task_rq()`, and may
    /// preempt (`wakeup_preempt()`).
    fn ttwu_runnable(&mut self, t: TaskId, waker_cpu: usize, waker_pid: i32) -> bool {
        let cpu = self.tasks[t as usize].cpu as usize;
        self.rq_sync(cpu);
        self.pelt_update(cpu, t);
        self.rqs[cpu].cfs.requeue_delayed_entity(&mut self.ses, t);
        self.ttwu_do_wakeup(t, cpu, waker_cpu, waker_pid);
        self.rearm(cpu);
        true
    }

    /// The `rq->avg_idle` sample a wake-up takes (`ttwu_post_activation`
    /// 2.6.36, `ttwu_do_wakeup` 3.8, `ttwu_do_activate` 4.x–6.19): time since
    /// `idle_balance()` stamped the runqueue, capped at 2·migration_cost, or
    /// 2·`max_idle_balance_cost` with `avg_idle_cap` (3.13); with
    /// `avg_idle_ewma_first` (3.13) the EWMA runs first and the cap clamps
    /// its result. Under `avg_idle_on_move` (4b603f1551a7) the same sample is
    /// taken by `update_rq_avg_idle()` when the CPU leaves idle instead
    /// (see `schedule()`).
    fn update_avg_idle_on_wakeup(&mut self, cpu: usize) {
        let b = &mut self.rqs[cpu].bal;
        if let Some(stamp) = b.idle_stamp.take() {
            let delta = self.now - stamp;
            let max = match self.kernel.avg_idle_cap {
                AvgIdleCap::MaxIdleBalanceCost => 2 * b.max_idle_balance_cost,
                AvgIdleCap::MigrationCost => 2 * self.kernel.migration_cost_ns,
            };
            b.avg_idle = avg_idle_sample(b.avg_idle, delta, max, self.kernel.avg_idle_ewma_first);
        }
    }

    /// `schedule()`: deactivate a sleeping/exiting `prev`, put it back if
    /// still runnable, pick the next entity, count the switch. Idle balancing
    /// hooks in here once load balancing lands.
    pub(crate) fn schedule(&mut self, cpu: usize) {
        self.rq_sync(cpu);
        let now = self.now;
        let prev = self.rqs[cpu].curr();
        let prev_rt = self.rqs[cpu].rtq.curr.is_some();
        let mut prev_state = PREV_STATE_RUNNING;
        if let Some(p) = prev {
            match self.tasks[p as usize].state {
                TaskState::Sleeping => prev_state = PREV_STATE_SLEEPING,
                TaskState::Exited => prev_state = PREV_STATE_DEAD,
                TaskState::Running | TaskState::Runnable => {}
            }
            if prev_rt {
                self.put_prev_task_rt(cpu);
            }
            if prev_state != PREV_STATE_RUNNING {
                if prev_rt {
                    self.dequeue_task_rt(cpu, p);
                } else {
                    self.deactivate_task(cpu, p, true);
                }
            }
        }
        // put_prev_entity()'s check_cfs_rq_runtime() (sched::group::bandwidth).
        if self.groups.as_ref().is_some_and(|g| g.bandwidth_used) {
            let p = prev.filter(|_| !prev_rt);
            let boundary = p.is_some() && self.boundary == p;
            self.check_cfs_rq_runtime(cpu, p, boundary);
        }
        let rt_next = if self.rt_root.tasks_used {
            self.schedule_rt(cpu, prev.filter(|_| prev_rt))
        } else {
            None
        };
        let next = if rt_next.is_some() {
            rt_next
        } else if self.fair.eevdf.is_some() {
            self.pick_next_task_eevdf(cpu, prev.filter(|_| !prev_rt))
        } else {
            if self.rqs[cpu].cfs.nr_running == 0 {
                self.idle_balance(cpu);
            }
            if let Some(p) = self.rqs[cpu]
                .cfs
                .curr
                .filter(|&p| self.ses[p as usize].on_rq)
            {
                self.pelt_update(cpu, p);
            }
            let rq = &mut self.rqs[cpu];
            rq.cfs.put_prev_entity(&mut self.ses, now);
            let next = rq.cfs.pick_next_entity(&self.fair, &self.ses);
            if let Some(n) = next {
                self.pelt_update(cpu, n);
                self.rqs[cpu].cfs.set_next_entity(&mut self.ses, n, now);
            }
            self.rqs[cpu].curr = next;
            self.update_sg_sums(cpu);
            next
        };
        debug_assert_eq!(self.rqs[cpu].curr, next);
        if let Some(p) = prev {
            let task = &mut self.tasks[p as usize];
            if task.state == TaskState::Running {
                task.state = TaskState::Runnable;
                task.wait_start = now;
                task.woken = false;
            }
        }
        if let Some(n) = next {
            let task = &mut self.tasks[n as usize];
            task.state = TaskState::Running;
            task.wait_ns += now - task.wait_start;
            // `perf sched latency`'s atom: only a switch (prev != next) ends one.
            if let Some(l) = self.latency.as_mut().filter(|_| prev != next) {
                let kind = if task.woken {
                    Delay::Wakeup
                } else {
                    Delay::Preempted
                };
                l.record(n as usize, task.wait_start, now, kind);
            }
            if prev.is_none() && self.kernel.avg_idle_on_move {
                // put_prev_task_idle() → update_rq_avg_idle() (4b603f1551a7):
                // however the task arrived (wake-up, fork, a pull), leaving
                // idle closes the idle period. With the idle_stamp guard of
                // the follow-up fix ("Skip rq->avg_idle update without a
                // valid idle stamp"): no stamp, no sample.
                self.update_avg_idle_on_wakeup(cpu);
            }
        } else {
            self.update_idle_core(cpu);
        }
        let rq = &mut self.rqs[cpu];
        if prev != next {
            rq.nr_switches += 1;
            if let Some(p) = prev {
                let task = &mut self.tasks[p as usize];
                if prev_state == PREV_STATE_RUNNING {
                    task.nivcsw += 1;
                } else {
                    task.nvcsw += 1;
                }
            }
            if let Some(n) = next {
                let mut sw = self.cost.context_switch_ns;
                // switch_mm(): a different address space reloads CR3 and
                // refills the TLB; idle keeps the old one (lazy TLB).
                // A kernel thread borrows it too (no mm of its own).
                let task = &self.tasks[n as usize];
                if !task.kthread {
                    if rq.last_mm.is_some_and(|m| m != task.mm) {
                        sw += self.cost.mm_switch_ns;
                    }
                    rq.last_mm = Some(task.mm);
                }
                rq.overhead_left += sw;
                self.count_overhead(sw, Overhead::Switch);
            }
            self.trace(cpu, TraceKind::Switch, pid(prev), prev_state, pid(next));
        }
        let rq = &mut self.rqs[cpu];
        rq.need_resched = false;
        // The power model (sched::power_state): leaving or entering idle.
        let idle_transition = (next.is_some(), self.balance.nohz.idle.test(cpu));
        match (next.is_some(), self.balance.nohz.idle.test(cpu)) {
            (true, true) => {
                // Leaving NOHZ idle.
                self.balance.nohz.idle.clear(cpu);
                self.balance.nohz.nr_idle -= 1;
            }
            (false, false) => {
                // Entering NOHZ idle: the tick stops; release the 2.6.36
                // balancer picks this CPU held.
                self.balance.nohz.idle.set(cpu);
                self.balance.nohz.nr_idle += 1;
                if self.balance.nohz.first_pick == Some(cpu) {
                    self.balance.nohz.first_pick = None;
                }
                if self.balance.nohz.second_pick == Some(cpu) {
                    self.balance.nohz.second_pick = None;
                }
                self.balance.nohz.next_balance =
                    self.balance.nohz.next_balance.min(rq.bal.next_balance);
            }
            _ => {}
        }
        if next.is_some() && !rq.tick_armed {
            self.tick_nohz_restart(cpu);
        }
        match idle_transition {
            (true, true) => self.power_idle_exit(cpu),
            (false, false) => self.power_idle_enter(cpu),
            _ => {}
        }
        if rt_next.is_some() {
            self.rt_post_schedule(cpu);
        }
        self.rearm(cpu);
    }

    /// `pick_next_task_fair()` under EEVDF (6.12 order): pick with `prev`
    /// still `curr` (so its slice protection counts); a `sched_delayed`
    /// pick completes its dequeue and the pick is repeated; with nothing
    /// runnable, newidle balancing, then pick again. `prev` is put back and
    /// the pick set as `curr` only when they differ
    /// (`put_prev_set_next_task()`).
    fn pick_next_task_eevdf(&mut self, cpu: usize, prev: Option<TaskId>) -> Option<TaskId> {
        let now = self.now;
        let mut balanced = false;
        let next = loop {
            if self.rqs[cpu].cfs.nr_running == 0 {
                if balanced {
                    break None;
                }
                balanced = true;
                self.idle_balance(cpu);
                continue;
            }
            let cfs = &mut self.rqs[cpu].cfs;
            if cfs.curr.is_some_and(|c| self.ses[c as usize].on_rq) {
                cfs.update_curr(&mut self.ses, now);
            }
            let Some(se) = cfs.pick_next_entity_eevdf(&self.ses) else {
                break None;
            };
            if self.ses[se as usize].sched_delayed {
                self.finish_delayed_dequeue(cpu, se);
                continue;
            }
            break Some(se);
        };
        if next != prev || next.is_none() {
            if let Some(p) = prev.filter(|&p| self.ses[p as usize].on_rq) {
                self.pelt_update(cpu, p);
            }
            self.rqs[cpu].cfs.put_prev_entity(&mut self.ses, now);
            if let Some(n) = next {
                self.pelt_update(cpu, n);
                self.rqs[cpu].cfs.set_next_entity(&mut self.ses, n, now);
            }
            self.rqs[cpu].curr = next;
            self.update_sg_sums(cpu);
        }
        // The CPU reschedules now: a pending update_curr() request is met.
        self.rqs[cpu].cfs.resched = false;
        next
    }

    /// Leave a handler on `cpu`: reschedule if asked, re-arm the burst end.
    /// Without CONFIG_PREEMPT (the 2.6.36/3.8 server configurations), a
    /// task in a system call is not preempted: a pending reschedule waits for
    /// the return to user space, i.e. the end of its system-time burst.
    pub(crate) fn finish_cpu(&mut self, cpu: usize) {
        if self.rqs[cpu].need_resched && !self.in_kernel(cpu) {
            self.schedule(cpu);
        }
        self.rearm(cpu);
    }

    /// Is the task on `cpu` in the middle of a system-time burst? A kernel
    /// thread's burst is not: it is preemptible throughout (the
    /// `cond_resched()` points of its loop, a threaded handler's preemptible
    /// context, taken as continuous).
    fn in_kernel(&self, cpu: usize) -> bool {
        self.rqs[cpu].curr().is_some_and(|t| {
            let t = &self.tasks[t as usize];
            t.work_kind == Work::Sys && t.work_left > 0 && !t.kthread
        })
    }

    /// `scheduler_tick()` → `task_tick_fair()` → `entity_tick()`: charge the
    /// tick, `update_curr`, `check_preempt_tick` when others are queued.
    /// An idle CPU's tick is stopped (NOHZ) until it runs a task again.
    pub(crate) fn scheduler_tick(&mut self, cpu: usize) {
        self.rqs[cpu].tick_armed = false;
        self.rq_sync(cpu);
        if self.rqs[cpu].curr().is_none() {
            return;
        }
        let now = self.now;
        self.charge_as(cpu, self.cost.tick_ns, Overhead::Tick);
        self.update_cpu_load(cpu);
        let rq = &mut self.rqs[cpu];
        rq.ticks += 1;
        rq.irqs += 1;
        if rq.rtq.curr.is_some() {
            self.task_tick_rt(cpu);
        } else {
            self.task_tick_fair(cpu, now);
        }
        self.tick_sched_timer_forward(cpu);
        self.rqs[cpu].bal.idle_at_tick = self.idle_cpu(cpu);
        self.trigger_load_balance(cpu);
        self.finish_cpu(cpu);
    }

    /// `task_tick_fair()` → `entity_tick()`: `update_curr`, then
    /// `check_preempt_tick` when others are queued (EEVDF: `update_curr()`
    /// decides).
    #[inline]
    fn task_tick_fair(&mut self, cpu: usize, now: u64) {
        let rq = &mut self.rqs[cpu];
        rq.cfs.update_curr(&mut self.ses, now);
        if let Some(c) = rq.cfs.curr {
            self.pelt_update(cpu, c);
        }
        let rq = &mut self.rqs[cpu];
        if self.fair.eevdf.is_some() {
            // entity_tick() (6.6+): update_curr() decides.
            if std::mem::take(&mut rq.cfs.resched) {
                rq.need_resched = true;
            }
        } else if (rq.cfs.nr_running > 1 || !self.fair.wakeup_preemption)
            && rq.cfs.check_preempt_tick(&self.fair, &self.ses)
        {
            rq.need_resched = true;
        }
        if self.groups.is_some() {
            self.group_tick(cpu);
            if let Some(c) = self.rqs[cpu]
                .cfs
                .curr
                .filter(|_| self.groups.as_ref().is_some_and(|g| g.bandwidth_used))
            {
                self.account_cfs_rq_runtime(cpu, c);
            }
        }
    }

    /// The reschedule IPI arrives.
    pub(crate) fn resched_ipi(&mut self, cpu: usize) {
        self.rq_sync(cpu);
        let rq = &mut self.rqs[cpu];
        rq.resched_pending = false;
        rq.irqs += 1;
        self.finish_cpu(cpu);
    }

    /// A sleeping task's hrtimer fires on the CPU it slept on: a timer
    /// interrupt there, whose handler wakes the task (not a sync wake-up).
    pub(crate) fn timer_fired(&mut self, t: TaskId, gen: u32) {
        let task = &self.tasks[t as usize];
        if !task.timer_pending || task.timer_gen != gen {
            return;
        }
        let cpu = task.cpu as usize;
        // C-states model: the timer interrupt wakes an idle CPU, which
        // handles it once out of its idle state.
        let exit = self.idle_exit_delay(cpu);
        if exit > 0 {
            self.hrtimer_interrupt_after_exit(t, gen, exit);
            return;
        }
        self.tasks[t as usize].timer_pending = false;
        self.pending_timers -= usize::from(!self.tasks[t as usize].kthread);
        self.counters.timer_irqs += 1;
        self.rqs[cpu].irqs += 1;
        self.charge(cpu, self.cost.wakeup_ns);
        self.try_to_wake_up(t, cpu, None, false);
        self.finish_cpu(cpu);
    }

    /// `do_nanosleep()` (kernel/hrtimer.c 3.8): the task running on `cpu`
    /// sleeps for `ns` — its hrtimer is started (`hrtimer_start()`; a new
    /// `timer_gen` makes any older timer of the task stale) and
    /// `schedule()` runs.
    pub(crate) fn do_nanosleep(&mut self, cpu: usize, t: TaskId, ns: u64) {
        self.hrtimer_sleep(t, ns);
        self.schedule(cpu);
    }

    /// `t` goes to sleep on its hrtimer, `ns` from now: a new `timer_gen`
    /// makes any older timer of the task stale (`hrtimer_start()`); a
    /// kernel thread's timer does not keep the run going. Also how a task
    /// that existed asleep before the run starts (a kernel thread created
    /// at boot, `Workload::start_asleep_ns`): never enqueued, the timer's
    /// wake-up is its first.
    pub(crate) fn hrtimer_sleep(&mut self, t: TaskId, ns: u64) {
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Sleeping;
        task.timer_gen = task.timer_gen.wrapping_add(1);
        task.timer_pending = true;
        let gen = task.timer_gen;
        self.pending_timers += usize::from(!task.kthread);
        self.hrtimer_start(t, gen, self.now + ns);
    }

    /// `sys_sched_yield()` (kernel/sched/core.c 3.8; `do_sched_yield()`
    /// from 4.19): the system call's cost, schedstat's `yld_count`, the
    /// class's `yield_task()` (`yield_task_fair()`), `schedule()`.
    pub(crate) fn do_sched_yield(&mut self, cpu: usize) {
        self.counters.yields += 1;
        self.charge(cpu, self.cost.syscall_ns);
        if self.rqs[cpu].rtq.curr.is_some() {
            self.yield_task_rt(cpu);
        } else {
            let now = self.now;
            self.rqs[cpu]
                .cfs
                .yield_task_fair(&self.fair, &mut self.ses, now);
        }
        self.schedule(cpu);
    }

    /// `do_exit()` (kernel/exit.c 3.8; `do_task_dead()` from 4.11): the
    /// task running on `cpu` exits (traced as `sched_process_exit`) and its
    /// final `schedule()` dequeues it for good.
    pub(crate) fn do_exit(&mut self, cpu: usize, t: TaskId) {
        self.tasks[t as usize].state = TaskState::Exited;
        self.trace(cpu, TraceKind::ProcessExit, pid(Some(t)), 0, 0);
        self.schedule(cpu);
    }
}
