//! The RT class's entry points on `Sched` (`sched::rt` holds its state):
//! wake-up (`select_task_rq_rt()`, `check_preempt_curr_rt()`,
//! `task_woken_rt()`), the RT part of `__schedule()` (`pick_next_task_rt()`
//! with `need_pull_rt_task()` / `pull_rt_task()`, and the post-schedule
//! push), `push_rt_task()`, `find_lowest_rq()`, throttling, the stopper's
//! schedule-out, and the push IPIs of `Kernel::rt_push`: 4.1's per-source
//! chain (`tell_cpu_to_push()` / `try_to_push_tasks()`) and 4bdced5c9a29's
//! root-domain walk (`tell_cpu_to_push()` / `rto_push_irq_work_func()`).
//! Kernel text followed: kernel/sched/rt.c of 4.9-4.11 and of 4.15.
//! Simplifications are listed in `sched::rt`.

use crate::kernel::RtPush;
use crate::sched::overhead::Overhead;
use crate::sched::rt::{RtPolicy, RtState, MAX_RT_PRIO, PUSH_EXECUTING, PUSH_RESTART};
use crate::sched::Sched;

/// `src` of an `RtIrqWork` event that is the root domain's `rto_push_work`.
pub(crate) const RD_WORK: u32 = u32::MAX;

impl Sched<'_> {
    /// `def_rt_bandwidth` from the sysctls: the period and the runtime per
    /// period in ns (`None`: RUNTIME_INF, no throttling).
    pub(crate) fn rt_bandwidth(&self) -> (u64, Option<u64>) {
        let period = self.kernel.sched_rt_period_us as u64 * 1000;
        let runtime = u64::try_from(self.kernel.sched_rt_runtime_us)
            .ok()
            .map(|r| r * 1000);
        (period, runtime)
    }

    fn rt_charge(&mut self, cpu: usize, ns: u64) {
        self.charge_as(cpu, ns, Overhead::Other);
        self.rearm(cpu);
    }

    /// The priority of what runs on `cpu` as the RT class compares it:
    /// the RT task's `prio`, or above MAX_RT_PRIO for CFS/idle.
    fn rt_curr_prio(&self, cpu: usize) -> u32 {
        let rt = self.rt.as_ref().expect("rt");
        rt.rqs[cpu]
            .curr
            .map_or(MAX_RT_PRIO + 1, |t| rt.tasks[t].prio)
    }

    /// Schedule the first wake-up of every RT task (a random phase within
    /// its period, from the RT stream).
    pub(crate) fn rt_init(&mut self) {
        let Some(rt) = self.rt.as_mut() else { return };
        let mut first = Vec::with_capacity(rt.tasks.len());
        for t in 0..rt.tasks.len() {
            let p = rt.tasks[t].period_ns;
            first.push((t, self.now + rt.rng.next_u64() % p.max(1)));
        }
        for (t, at) in first {
            self.rt_kthread_wake_at(t, at);
        }
    }

    /// `cpupri_find()` + `find_lowest_rq()` (kernel/sched/cpupri.c,
    /// rt.c 4.11): among `t`'s allowed CPUs, those running the lowest
    /// priority (idle below CFS below any RT level), if lower than `t`'s;
    /// the task's own CPU if it is one, else the nearest (lowest index on
    /// a tie). Simplified: a scan instead of cpupri's vectors, and distance
    /// instead of the sched-domain walk.
    pub(crate) fn find_lowest_rq(&self, t: usize) -> Option<usize> {
        let rt = self.rt.as_ref()?;
        let task = &rt.tasks[t];
        let key = |c: usize| -> u32 {
            let h = rt.highest_curr(c).min(self.rt_task_highest(c));
            if h < MAX_RT_PRIO {
                h
            } else if self.rqs[c].curr().is_none() && self.rqs[c].nr_running() == 0 {
                MAX_RT_PRIO + 2
            } else {
                MAX_RT_PRIO + 1
            }
        };
        let best = task
            .allowed
            .iter()
            .map(|&c| key(c as usize))
            .filter(|&k| k > task.prio)
            .max()?;
        let home = task.cpu;
        if task.allowed_on(home) && key(home) == best {
            return Some(home);
        }
        task.allowed
            .iter()
            .map(|&c| c as usize)
            .filter(|&c| key(c) == best)
            .min_by_key(|&c| (self.machine.distance(home, c), c))
    }

    /// An RT task's wake-up (`try_to_wake_up()` from the interrupt or timer
    /// on its CPU): `select_task_rq_rt()`, enqueue, `check_preempt_curr_rt()`
    /// or `task_woken_rt()`.
    pub(crate) fn rt_wake(&mut self, t: usize) {
        let (prev, prio, nr_allowed) = {
            let rt = self.rt.as_ref().expect("rt");
            let task = &rt.tasks[t];
            if task.state != RtState::Sleeping {
                return;
            }
            (task.cpu, task.prio, task.nr_cpus_allowed())
        };
        self.rqs[prev].irqs += 1;
        self.rt_charge(prev, self.cost.wakeup_ns);
        // select_task_rq_rt() (4.11)
        let mut cpu = prev;
        let curr = self.rt.as_ref().unwrap().rqs[prev].curr;
        let curr_blocks = curr.is_some_and(|c| {
            let c = &self.rt.as_ref().unwrap().tasks[c];
            c.nr_cpus_allowed() < 2 || c.prio <= prio
        });
        if curr_blocks && nr_allowed > 1 {
            if let Some(target) = self.find_lowest_rq(t) {
                if prio < self.rt.as_ref().unwrap().highest_curr(target) {
                    cpu = target;
                }
            }
        }
        if cpu != prev {
            self.counters.cpu_migrations += 1;
        }
        let rt = self.rt.as_mut().unwrap();
        rt.tasks[t].run_left = rt.tasks[t].run_ns;
        let p = rt.tasks[t].period_ns;
        let gap = if rt.tasks[t].periodic {
            p
        } else {
            rt.rng.exp_ns(p).max(1)
        };
        rt.tasks[t].next_wake = self.now + gap;
        rt.enqueue(cpu, t);
        self.counters.wakeups += 1;
        if prio < self.rt_curr_prio(cpu) {
            // check_preempt_curr_rt(): resched_curr()
            if cpu != prev {
                self.counters.resched_ipis += 1;
            }
            self.rt_schedule(cpu);
        } else {
            // task_woken_rt()
            let rt = self.rt.as_ref().unwrap();
            let woken = rt.rqs[cpu].curr.is_some_and(|c| {
                let c = &rt.tasks[c];
                nr_allowed > 1 && (c.nr_cpus_allowed() < 2 || c.prio <= prio)
            });
            if woken {
                self.push_rt_tasks(cpu);
            }
        }
    }

    /// The RT part of `__schedule()` on `cpu`: run the best queued RT task
    /// (`pick_next_task_rt()`), preempting the running one if it is not it;
    /// with nothing queued, CFS resumes. After picking an RT task, the
    /// post-schedule push (`queue_push_tasks()`, 4.x balance callback).
    pub(crate) fn rt_schedule(&mut self, cpu: usize) {
        let now = self.now;
        self.rq_sync(cpu);
        let rt = self.rt.as_mut().expect("rt");
        if rt.rqs[cpu].throttled {
            return;
        }
        let next = rt.pick_next(cpu);
        let curr = rt.rqs[cpu].curr;
        if next == curr {
            return;
        }
        if let Some(c) = curr {
            // Preempted: what is left of its burst leaves the CPU's queue.
            let left = rt.rqs[cpu].done_at.saturating_sub(now);
            rt.tasks[c].run_left += left;
            // update_curr_rt() charges only what ran: the unrun rest of the
            // stint leaves the period's rt_time again.
            rt.rqs[cpu].rt_time -= left.min(rt.rqs[cpu].rt_time);
            rt.tasks[c].state = RtState::Queued;
            rt.rqs[cpu].curr = None;
            rt.rqs[cpu].gen = rt.rqs[cpu].gen.wrapping_add(1);
            let rq = &mut self.rqs[cpu];
            rq.overhead_left -= left.min(rq.overhead_left);
            rq.nr_switches += 1;
        } else if next.is_some() {
            // An RT task preempts the fair task (or idle).
            let rq = &mut self.rqs[cpu];
            rq.nr_switches += 2;
            if let Some(f) = rq.curr() {
                self.tasks[f as usize].nivcsw += 1;
            }
        }
        let Some(n) = next else {
            self.rearm(cpu);
            return;
        };
        // sched_rt_runtime_exceeded(): sched_rt_runtime_us of RT per
        // sched_rt_period_us (950 ms per 1 s by default; -1: no limit).
        let (period_ns, runtime_ns) = self.rt_bandwidth();
        let rt = self.rt.as_mut().unwrap();
        let rq = &mut rt.rqs[cpu];
        if now >= rq.period_start + period_ns {
            rq.period_start = now - now % period_ns;
            rq.rt_time = 0;
        }
        let task = &mut rt.tasks[n];
        let mut run = task.run_left.max(1);
        if task.policy == RtPolicy::Rr {
            run = run.min(task.slice_left);
        }
        if let Some(runtime_ns) = runtime_ns {
            let budget = runtime_ns.saturating_sub(rq.rt_time);
            let period_end = rq.period_start + period_ns;
            if budget == 0 {
                rq.throttled = true;
                let end = rq.period_start + period_ns;
                rt.stats.throttled_ns += end - now;
                self.start_rt_bandwidth(cpu, end);
                self.rearm(cpu);
                return;
            }
            let allowed = if now + budget < period_end {
                budget
            } else {
                period_end + runtime_ns - now
            };
            run = run.min(allowed);
            if now + run <= period_end {
                rq.rt_time += run;
            } else {
                rq.period_start = period_end;
                rq.rt_time = now + run - period_end;
            }
        }
        task.state = RtState::Running;
        rq.curr = Some(n);
        rq.gen = rq.gen.wrapping_add(1);
        rt.stats.runs += 1;
        let gen = rq.gen;
        let sw = self.cost.context_switch_ns;
        self.charge_as(cpu, run + sw, Overhead::Other);
        let done = self.now + self.rqs[cpu].overhead_left;
        let rt = self.rt.as_mut().unwrap();
        rt.rqs[cpu].done_at = done;
        let task = &mut rt.tasks[n];
        // run_left is what is still owed after this stint.
        task.run_left -= run.min(task.run_left);
        if task.policy == RtPolicy::Rr {
            task.slice_left -= run.min(task.slice_left);
        }
        self.rt_stint_end(cpu, gen, done);
        self.rearm(cpu);
        if self.rt.as_ref().unwrap().has_pushable(cpu) {
            self.push_rt_tasks(cpu);
        }
    }

    /// The running RT task's burst is done: it sleeps until its next
    /// interrupt (or, SCHED_RR with its slice used up, goes to the tail).
    /// Then `pick_next_task_rt()`: `need_pull_rt_task(rq, prev)` —
    /// `rq->rt.highest_prio.curr > prev->prio` — pulls before the pick.
    pub(crate) fn rt_done(&mut self, cpu: usize, gen: u32) {
        self.rq_sync(cpu);
        let slice = self.kernel.sched_rr_timeslice_ms * 1_000_000;
        let rt = self.rt.as_mut().expect("rt");
        if rt.rqs[cpu].gen != gen || rt.rqs[cpu].curr.is_none() {
            return;
        }
        let t = rt.rqs[cpu].curr.unwrap();
        let prev_prio = rt.tasks[t].prio;
        rt.rqs[cpu].curr = None;
        rt.rqs[cpu].gen = rt.rqs[cpu].gen.wrapping_add(1);
        if rt.tasks[t].run_left > 0 {
            if rt.tasks[t].policy == RtPolicy::Rr && rt.tasks[t].slice_left == 0 {
                // task_tick_rt(): the RR slice ran out; requeue at the tail.
                rt.tasks[t].slice_left = slice;
                rt.dequeue(cpu, t);
                rt.enqueue(cpu, t);
            }
            // Otherwise the period's RT budget ran out mid-burst: the task
            // keeps its place and rt_schedule() below throttles the CPU.
            rt.tasks[t].state = RtState::Queued;
        } else {
            rt.dequeue(cpu, t);
            rt.tasks[t].state = RtState::Sleeping;
            rt.tasks[t].slice_left = slice;
            let at = rt.tasks[t].next_wake.max(self.now);
            self.rt_kthread_wake_at(t, at);
        }
        self.rqs[cpu].nr_switches += 1;
        if self.rt.as_ref().unwrap().highest_curr(cpu) > prev_prio {
            self.pull_rt_task(cpu);
        }
        self.rt_schedule(cpu);
    }

    /// The stopper `migration/N` schedules out on `cpu` (after an active
    /// balance). It is stop-class with `p->prio == 0` (FIFO-99,
    /// `sched_set_stop_task()`), so `need_pull_rt_task()` holds unless a
    /// prio-0 RT task is queued, and `pick_next_task_rt()` pulls.
    pub(crate) fn rt_stopper_done(&mut self, cpu: usize) {
        let Some(rt) = self.rt.as_ref() else { return };
        if rt.highest_curr(cpu) > 0 {
            self.pull_rt_task(cpu);
            self.rt_schedule(cpu);
        }
    }

    /// `RtUnthrottle`: the period timer refills the runtime
    /// (`do_sched_rt_period_timer()`).
    pub(crate) fn rt_unthrottle(&mut self, cpu: usize) {
        let now = self.now;
        let (period_ns, _) = self.rt_bandwidth();
        let rt = self.rt.as_mut().expect("rt");
        let rq = &mut rt.rqs[cpu];
        rq.throttled = false;
        rq.rt_time = 0;
        rq.period_start = now - now % period_ns;
        self.rt_schedule(cpu);
    }

    /// `push_rt_task()` (4.11): move the first pushable task of `cpu` to the
    /// lowest-priority CPU that can take it; true if one moved. A pushable
    /// task that beats `cpu`'s current task reschedules `cpu` instead.
    pub(crate) fn push_rt_task(&mut self, cpu: usize) -> bool {
        let rt = self.rt.as_ref().expect("rt");
        if !rt.rqs[cpu].overloaded {
            return false;
        }
        let Some(p) = rt.pick_next_pushable(cpu) else {
            return false;
        };
        if rt.tasks[p].prio < self.rt_curr_prio(cpu) {
            self.rt_schedule(cpu);
            return false;
        }
        let Some(dst) = self.find_lowest_rq(p) else {
            return false;
        };
        self.rt_migrate(p, cpu, dst, cpu);
        self.rt.as_mut().unwrap().stats.pushes += 1;
        true
    }

    /// `push_rt_tasks()`: push until nothing moves.
    pub(crate) fn push_rt_tasks(&mut self, cpu: usize) {
        let bound = self.rt.as_ref().unwrap().rqs[cpu].queue.len() + 1;
        for _ in 0..bound {
            if !self.push_rt_task(cpu) {
                break;
            }
        }
    }

    /// deactivate_task() / set_task_cpu() / activate_task() of an RT task,
    /// under both rq locks (charged to `by`), then `resched_curr(dst)`.
    fn rt_migrate(&mut self, p: usize, src: usize, dst: usize, by: usize) {
        let rt = self.rt.as_mut().unwrap();
        rt.dequeue(src, p);
        rt.enqueue(dst, p);
        self.counters.cpu_migrations += 1;
        self.rt_charge(by, self.cost.rq_lock_ns + self.cost.migrate_task_ns);
        if dst != by {
            self.counters.resched_ipis += 1;
        }
        self.rt_schedule(dst);
    }

    /// `pull_rt_task()`: nothing unless some CPU is RT-overloaded
    /// (`rto_count`); with `rt_pull_skip_only_self`, nothing when the only
    /// overloaded CPU is this one. Then the `rt_push` variant.
    pub(crate) fn pull_rt_task(&mut self, this: usize) {
        let rt = self.rt.as_mut().expect("rt");
        rt.stats.pull_calls += 1;
        if rt.rd.rto_count == 0 {
            return;
        }
        if self.kernel.rt_pull_skip_only_self && rt.rd.rto_count == 1 && rt.rd.rto_mask[this] {
            return;
        }
        match self.kernel.rt_push {
            RtPush::Pull => self.pull_rt_task_locked(this),
            RtPush::PushIpi => self.tell_cpu_to_push_chain(this),
            RtPush::PushIpiRd => self.tell_cpu_to_push_rd(this),
        }
    }

    /// The pre-4.1 pull (`for_each_cpu(cpu, rto_mask)` with
    /// `double_lock_balance()`): from each other overloaded CPU whose
    /// `highest_prio.next` beats this rq, pull its best pushable task if it
    /// beats this rq and not the source's running task.
    fn pull_rt_task_locked(&mut self, this: usize) {
        let n = self.rqs.len();
        for src in 0..n {
            let rt = self.rt.as_ref().unwrap();
            if src == this || !rt.rd.rto_mask[src] {
                continue;
            }
            if rt.highest_next(src) >= rt.highest_curr(this) {
                continue;
            }
            self.rt_charge(this, self.cost.rq_lock_ns);
            let rt = self.rt.as_ref().unwrap();
            let Some(p) = rt.pick_highest_pushable(src, this) else {
                continue;
            };
            if rt.tasks[p].prio < rt.highest_curr(this)
                && rt.tasks[p].prio >= self.rt_curr_prio(src)
            {
                self.rt.as_mut().unwrap().stats.pulls += 1;
                self.rt_migrate(p, src, this, this);
            }
        }
    }

    /// Queue an irq_work on `to` from `from` (`irq_work_queue_on()`): a
    /// call-function IPI, a self-IPI when `to == from` (4.15's walk), counted
    /// in `function_call_ipis` and charged to the sender (`ipi_send_ns`, or
    /// `self_ipi_ns` for the self-IPI, which also covers its entry).
    fn rt_irq_work_queue_on(&mut self, from: usize, to: usize, src: u32) {
        let rt = self.rt.as_mut().unwrap();
        rt.stats.push_ipis += 1;
        #[cfg(test)]
        rt.ipi_log.push((from, to));
        self.counters.function_call_ipis += 1;
        if from == to {
            rt.stats.self_ipis += 1;
            self.rt_charge(from, self.cost.self_ipi_ns);
        } else {
            self.rt_charge(from, self.cost.ipi_send_ns);
        }
        self.irq_work_queue_on(to, src);
    }

    /// `tell_cpu_to_push()` of 4.1-4.14 (RT_PUSH_IPI, b6366f048e0c): if this
    /// CPU's chain is running, flag RESTART; else start it at the next
    /// overloaded CPU after this one that can push to it.
    fn tell_cpu_to_push_chain(&mut self, this: usize) {
        let rt = self.rt.as_mut().unwrap();
        if rt.rqs[this].push_flags & PUSH_EXECUTING != 0 {
            rt.rqs[this].push_flags |= PUSH_RESTART;
            return;
        }
        rt.rqs[this].push_cpu = this;
        let Some(cpu) = rt.find_next_push_cpu(this) else {
            return;
        };
        rt.rqs[this].push_flags = PUSH_EXECUTING;
        self.rt_irq_work_queue_on(this, cpu, this as u32);
    }

    /// `tell_cpu_to_push()` of 4bdced5c9a29: bump `rto_loop_next`; start a
    /// walk if none is in flight (`rto_cpu < 0`). `rto_loop_start` never
    /// contends in a sequential model.
    fn tell_cpu_to_push_rd(&mut self, this: usize) {
        let skip = self.kernel.rt_rto_skip_self;
        let rt = self.rt.as_mut().unwrap();
        rt.rd.rto_loop_next += 1;
        if rt.rd.rto_cpu >= 0 {
            return;
        }
        if let Some(cpu) = rt.rto_next_cpu_rd(this, skip) {
            self.rt_irq_work_queue_on(this, cpu, RD_WORK);
        }
    }

    /// An RT push irq_work runs on `cpu` (hard IRQ, `ipi_handle_ns`):
    /// `rto_push_irq_work_func()` for the root domain's work, else
    /// `try_to_push_tasks()` for `src`'s chain.
    pub(crate) fn rt_irq_work(&mut self, cpu: usize, src: u32) {
        self.rqs[cpu].irqs += 1;
        self.rt_charge(cpu, self.cost.ipi_handle_ns);
        self.rt.as_mut().unwrap().stats.irq_work += 1;
        if src == RD_WORK {
            if self.rt.as_ref().unwrap().has_pushable(cpu) {
                self.rt_charge(cpu, self.cost.rq_lock_ns);
                self.push_rt_tasks(cpu);
            }
            let skip = self.kernel.rt_rto_skip_self;
            self.rt_charge(cpu, self.cost.rq_lock_ns);
            if let Some(next) = self.rt.as_mut().unwrap().rto_next_cpu_rd(cpu, skip) {
                self.rt_irq_work_queue_on(cpu, next, RD_WORK);
            }
            return;
        }
        let src = src as usize;
        // try_to_push_tasks(); a restart that picks this CPU again loops
        // here (bounded: each pass advances push_cpu).
        for _ in 0..self.rqs.len() + 2 {
            if self.rt.as_ref().unwrap().has_pushable(cpu) {
                self.rt_charge(cpu, self.cost.rq_lock_ns);
                self.push_rt_task(cpu);
            }
            let rt = self.rt.as_mut().unwrap();
            if rt.rqs[src].push_flags & PUSH_RESTART != 0 {
                rt.rqs[src].push_flags &= !PUSH_RESTART;
                rt.rqs[src].push_cpu = src;
            }
            let next = rt.find_next_push_cpu(src);
            match next {
                None => {
                    rt.rqs[src].push_flags &= !PUSH_EXECUTING;
                    return;
                }
                Some(n) if n == cpu => continue,
                Some(n) => {
                    self.rt_irq_work_queue_on(cpu, n, src as u32);
                    return;
                }
            }
        }
        self.rt.as_mut().unwrap().rqs[src].push_flags &= !PUSH_EXECUTING;
    }
}
