//! `pull_rt_task()` and the three designs of `Kernel::rt_push` it
//! dispatches to, after `kernel/sched/rt.c`: the pre-4.1 pull under both
//! runqueue locks; RT_PUSH_IPI's per-source irq_work chain of 4.1-4.14
//! (b6366f048e0c: `tell_cpu_to_push()`, `try_to_push_tasks()`,
//! `find_next_push_cpu()`); the root-domain walk of 4bdced5c9a29 (4.15, as
//! 6.18 keeps it: `tell_cpu_to_push()`, `rto_next_cpu()`,
//! `rto_push_irq_work_func()`), with the later fixes
//! `rt_pull_skip_only_self` and `rt_rto_skip_self`. And the stopper's
//! schedule-out, which pulls. Every push IPI is an irq_work queued on
//! another CPU (`irq_work_queue_on()`, an `RtIrqWork` event
//! `ipi_latency_ns` later) or, in the 4.15 walk, on the CPU itself.

use crate::kernel::RtPush;
use crate::sched::rt::{MAX_RT_PRIO, PUSH_EXECUTING, PUSH_RESTART};
use crate::sched::Sched;

/// `src` of an `RtIrqWork` event that is the root domain's `rto_push_work`.
pub(crate) const RD_WORK: u32 = u32::MAX;

impl Sched<'_> {
    /// `pull_rt_task()` on `this`, whose priority dropped: nothing unless
    /// some CPU is RT-overloaded (`rto_count`); with
    /// `rt_pull_skip_only_self`, nothing when this CPU is the only one.
    /// Then the `rt_push` design.
    pub(crate) fn pull_rt_task(&mut self, this: usize) {
        self.rt_root.stats.pull_calls += 1;
        if self.rt_root.rto_count == 0 {
            return;
        }
        if self.kernel.rt_pull_skip_only_self
            && self.rt_root.rto_count == 1
            && self.rqs[this].rtq.overloaded
        {
            return;
        }
        match self.kernel.rt_push {
            RtPush::Pull => self.pull_rt_task_locked(this),
            RtPush::PushIpi => self.tell_cpu_to_push_chain(this),
            RtPush::PushIpiRd => self.tell_cpu_to_push_rd(this),
        }
    }

    /// The pull without IPIs (before 4.1, and with RT_PUSH_IPI off): for
    /// each other overloaded CPU whose `highest_prio.next` beats this rq,
    /// `double_lock_balance()` and pull its best pushable task allowed here
    /// if that beats this rq and would not run at once where it is (it is
    /// not above the source's running task).
    fn pull_rt_task_locked(&mut self, this: usize) {
        let mut resched = false;
        for src in 0..self.rqs.len() {
            if src == this || !self.rqs[src].rtq.overloaded {
                continue;
            }
            if self.rt_highest_next(src) >= self.rt_task_highest(this) {
                continue;
            }
            self.charge(this, self.cost.rq_lock_ns);
            let Some(p) = self.rt_pushable(src, Some(this)) else {
                continue;
            };
            let pp = self.tasks[p as usize].prio;
            let src_curr = self.rqs[src]
                .rtq
                .curr
                .map_or(MAX_RT_PRIO, |c| self.tasks[c as usize].prio);
            if pp < self.rt_task_highest(this) && pp >= src_curr {
                self.charge(this, self.cost.migrate_task_ns);
                self.rt_transfer(p, src, this, this);
                self.rt_root.stats.pulls += 1;
                resched = true;
            }
        }
        if resched {
            self.rqs[this].need_resched = true;
        }
    }

    /// Queue an RT push irq_work on `to` from `from` (`irq_work_queue_on()`):
    /// a call-function IPI, or a self-IPI when `to == from` (the 4.15
    /// walk), counted in `function_call_ipis` and charged to the sender
    /// (`ipi_send_ns`, or `self_ipi_ns`, which also covers its entry).
    fn rt_irq_work_queue_on(&mut self, from: usize, to: usize, src: u32) {
        self.rt_root.stats.push_ipis += 1;
        #[cfg(test)]
        self.rt_root.ipi_log.push((from, to));
        self.counters.function_call_ipis += 1;
        if from == to {
            self.rt_root.stats.self_ipis += 1;
            self.charge(from, self.cost.self_ipi_ns);
        } else {
            self.charge(from, self.cost.ipi_send_ns);
        }
        self.irq_work_queue_on(to, src);
    }

    /// `tell_cpu_to_push()` of 4.1-4.14: if this CPU's chain is running,
    /// flag RESTART; else start it at the next overloaded CPU after this
    /// one that can push to it.
    fn tell_cpu_to_push_chain(&mut self, this: usize) {
        let rq = &mut self.rqs[this].rtq;
        if rq.push_flags & PUSH_EXECUTING != 0 {
            rq.push_flags |= PUSH_RESTART;
            return;
        }
        rq.push_cpu = this;
        let Some(cpu) = self.find_next_push_cpu(this) else {
            return;
        };
        self.rqs[this].rtq.push_flags = PUSH_EXECUTING;
        self.rt_irq_work_queue_on(this, cpu, this as u32);
    }

    /// `tell_cpu_to_push()` of 4bdced5c9a29: bump `rto_loop_next`; start a
    /// walk if none is in flight (`rto_cpu < 0`). `rto_loop_start` never
    /// contends in a sequential model.
    fn tell_cpu_to_push_rd(&mut self, this: usize) {
        self.rt_root.rto_loop_next += 1;
        if self.rt_root.rto_cpu >= 0 {
            return;
        }
        if let Some(cpu) = self.rto_next_cpu_rd(this) {
            self.rt_irq_work_queue_on(this, cpu, RD_WORK);
        }
    }

    /// An RT push irq_work runs on `cpu` (hard IRQ, `ipi_handle_ns`):
    /// `rto_push_irq_work_func()` for the root domain's work, else
    /// `try_to_push_tasks()` for `src`'s chain. Then the CPU reschedules
    /// if a push asked it to.
    pub(crate) fn rt_irq_work(&mut self, cpu: usize, src: u32) {
        self.rqs[cpu].irqs += 1;
        self.charge(cpu, self.cost.ipi_handle_ns);
        self.rt_root.stats.irq_work += 1;
        if src == RD_WORK {
            if self.rt_pushable(cpu, None).is_some() {
                self.charge(cpu, self.cost.rq_lock_ns);
                self.push_rt_tasks(cpu, cpu);
            }
            // rto_next_cpu() under rd->rto_lock
            self.charge(cpu, self.cost.rq_lock_ns);
            if let Some(next) = self.rto_next_cpu_rd(cpu) {
                self.rt_irq_work_queue_on(cpu, next, RD_WORK);
            }
        } else {
            self.try_to_push_tasks(cpu, src as usize);
        }
        self.finish_cpu(cpu);
    }

    /// `try_to_push_tasks()` (4.1-4.14) on `cpu` for `src`'s chain: push one
    /// task, then forward the IPI to the next CPU of the chain; a restart
    /// that picks this CPU again loops here (bounded: each pass advances
    /// `push_cpu`).
    fn try_to_push_tasks(&mut self, cpu: usize, src: usize) {
        for _ in 0..self.rqs.len() + 2 {
            if self.rt_pushable(cpu, None).is_some() {
                self.charge(cpu, self.cost.rq_lock_ns);
                self.push_rt_task(cpu, cpu);
            }
            let rq = &mut self.rqs[src].rtq;
            if rq.push_flags & PUSH_RESTART != 0 {
                rq.push_flags &= !PUSH_RESTART;
                rq.push_cpu = src;
            }
            match self.find_next_push_cpu(src) {
                None => break,
                Some(n) if n == cpu => continue,
                Some(n) => {
                    self.rt_irq_work_queue_on(cpu, n, src as u32);
                    return;
                }
            }
        }
        self.rqs[src].rtq.push_flags &= !PUSH_EXECUTING;
    }

    /// `cpumask_next(prev, rto_mask)`: the first overloaded CPU after
    /// `prev` (-1: the first), or `None` past the end.
    fn rto_next_after(&self, prev: i64) -> Option<usize> {
        let start = (prev + 1).max(0) as usize;
        (start..self.rqs.len()).find(|&c| self.rqs[c].rtq.overloaded)
    }

    /// `rto_next_cpu(rq)` of 4.1-4.14: the next overloaded CPU after
    /// `push_cpu`, wrapping round, never `this` (the walk ends before it).
    fn rto_next_cpu_chain(&mut self, this: usize) -> Option<usize> {
        let prev = self.rqs[this].rtq.push_cpu;
        let mut cpu = self.rto_next_after(prev as i64);
        if prev < this {
            if cpu.is_none_or(|c| c >= this) {
                return None;
            }
        } else if cpu.is_none() {
            cpu = self.rto_next_after(-1);
            if cpu.is_none_or(|c| c >= this) {
                return None;
            }
        }
        let cpu = cpu?;
        self.rqs[this].rtq.push_cpu = cpu;
        Some(cpu)
    }

    /// `find_next_push_cpu(rq)` (4.1-4.14): the next CPU of the chain whose
    /// `highest_prio.next` beats the source's `highest_prio.curr`.
    fn find_next_push_cpu(&mut self, src: usize) -> Option<usize> {
        loop {
            let cpu = self.rto_next_cpu_chain(src)?;
            if self.rt_highest_next(cpu) < self.rt_task_highest(src) {
                return Some(cpu);
            }
        }
    }

    /// `rto_next_cpu(rd)` of 4bdced5c9a29 (4.15): from `rto_cpu` to the end
    /// of `rto_mask`, the initiator `this` included unless
    /// `rt_rto_skip_self` (94894c9c477e); at the end, rescan while
    /// `rto_loop_next` moved.
    fn rto_next_cpu_rd(&mut self, this: usize) -> Option<usize> {
        let skip_self = self.kernel.rt_rto_skip_self;
        loop {
            let cpu = self.rto_next_after(self.rt_root.rto_cpu);
            self.rt_root.rto_cpu = cpu.map_or(-1, |c| c as i64);
            match cpu {
                Some(c) if skip_self && c == this => continue,
                Some(c) => return Some(c),
                None => {}
            }
            let next = self.rt_root.rto_loop_next;
            if self.rt_root.rto_loop == next {
                return None;
            }
            self.rt_root.rto_loop = next;
        }
    }

    /// The stopper `migration/N` schedules out on `cpu` (after an active
    /// balance): `balance_rt()` with a stop-class `prev` of `p->prio == 0`
    /// (FIFO-99, `sched_set_stop_task()`), so `need_pull_rt_task()` holds
    /// unless a prio-0 RT task is queued, and `pull_rt_task()` runs; what it
    /// pulled runs next.
    pub(crate) fn rt_stopper_done(&mut self, cpu: usize) {
        if self.rt_task_highest(cpu) > 0 {
            self.pull_rt_task(cpu);
            if self.rqs[cpu].need_resched {
                self.schedule(cpu);
            }
            self.rearm(cpu);
        }
    }
}
