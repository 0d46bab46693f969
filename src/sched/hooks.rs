//! The scheduler's hooks into the rest of the machine: every future event
//! the scheduler asks for — a reschedule IPI, the stopper, a sleeping
//! task's hrtimer, the tick, an RT push irq_work, the RT period timer, the
//! NOHZ kick, a burst's end — is posted by
//! one of the functions here, each named after (and documented with) the
//! kernel function it stands for where there is one. This is the only file
//! under `src/sched/` that touches the event queue
//! (`queue::EventQueue`, held in `Events`), and it declares the events
//! ([`Event`]) the engine's loop hands back to the scheduler;
//! `scripts/dev/check-binding-boundary.sh` fails if another one does.
//!
//! Events at the same nanosecond run in the order they were posted (the
//! queue's `(time, seq)` tie-break), so a hook posts exactly when its
//! caller asks, and a change to the order of hook calls changes results.

use crate::queue::{Entry, EventQueue};
use crate::sched::task::TaskId;
use crate::sched::Sched;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
/// The scheduler's events: what its hooks post and the engine's loop
/// hands back to the scheduler's entry points when their time comes.
pub(crate) enum Event {
    /// `scheduler_tick()` on a busy CPU (idle CPUs stop their tick: NOHZ).
    Tick { cpu: u32 },
    /// The running task's current burst (and queued overhead) is done.
    SegmentEnd { cpu: u32, gen: u32 },
    /// A sleeping task's hrtimer fires.
    Timer { task: TaskId, gen: u32 },
    /// A reschedule IPI (or idle wake) reaches `cpu`.
    Resched { cpu: u32 },
    /// The stopper thread on `src` runs an active balance towards `dst`.
    ActiveBalance { src: u32, dst: u32, lvl: u32 },
    /// The NOHZ idle-balancer kick reaches `cpu`.
    NohzKick { cpu: u32 },
    /// An RT push irq_work reaches `cpu` (`src`: the chain's source CPU,
    /// or `rt::push::RD_WORK` for the root domain's walk).
    RtIrqWork { cpu: u32, src: u32 },
    /// The RT period timer on `cpu` (`sched::rt::task`).
    RtPeriod { cpu: u32 },
    /// A task group's CFS bandwidth period timer (`sched::group::bandwidth`).
    CfsPeriod { group: u32 },
    /// A task group's CFS bandwidth slack timer.
    CfsSlack { group: u32 },
}

/// The event queue, as the scheduler's hooks post to it and the engine's
/// loop pops it.
pub(crate) struct Events {
    queue: EventQueue<Event>,
    /// The CPU whose task is taking a workload step (set by the engine's
    /// system-call layer): its burst end is re-armed once when the step is
    /// done, not at every wake-up or charge inside the step (which would
    /// arm ends that are stale before they fire).
    pub(crate) stepping: Option<usize>,
}

impl Events {
    pub(crate) fn new() -> Self {
        Events {
            queue: EventQueue::new(),
            stepping: None,
        }
    }

    /// Events pending.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// The engine's loop: the next event if it comes before `key`, the
    /// `(time, seq)` of the engine's own next timer.
    #[inline]
    pub(crate) fn pop_before(&mut self, key: (u64, u64)) -> Option<Entry<Event>> {
        self.queue.pop_before(key)
    }

    /// A sequence number for one of the engine's own timers, which it
    /// keeps beside this queue.
    pub(crate) fn next_seq(&mut self) -> u64 {
        self.queue.next_seq()
    }
}

impl Sched<'_> {
    /// `smp_send_reschedule()` (the IPI `resched_task()` / `resched_curr()`
    /// sends to a remote CPU; arch/x86 `native_smp_send_reschedule()`): the
    /// reschedule IPI reaches `cpu` `ipi_latency_ns` later, after the exit
    /// latency of its idle state under the C-states model.
    pub(crate) fn smp_send_reschedule(&mut self, cpu: usize) {
        let exit = self.idle_exit_delay(cpu);
        self.events.queue.push(
            self.now + self.cost.ipi_latency_ns + exit,
            Event::Resched { cpu: cpu as u32 },
        );
    }

    /// `stop_one_cpu_nowait()` (kernel/stop_machine.c), as
    /// `load_balance()` calls it with `active_load_balance_cpu_stop`: the
    /// stopper thread on `src` is woken `ipi_latency_ns` later and pushes a
    /// task to `dst` at domain level `lvl`.
    pub(crate) fn stop_one_cpu_nowait(&mut self, src: usize, dst: usize, lvl: usize) {
        self.events.queue.push(
            self.now + self.cost.ipi_latency_ns,
            Event::ActiveBalance {
                src: src as u32,
                dst: dst as u32,
                lvl: lvl as u32,
            },
        );
    }

    /// `kick_ilb()` (kernel/sched/fair.c, the name since 4.17; before it
    /// the IPI at the end of `nohz_balancer_kick()`: 2.6.36's
    /// `__smp_call_function_single()`, 3.8's `smp_send_reschedule()`): the
    /// kick reaches the idle load balancer `ilb` `ipi_latency_ns` later,
    /// after the exit latency of its idle state under the C-states model.
    pub(crate) fn kick_ilb(&mut self, ilb: usize) {
        let exit = self.idle_exit_delay(ilb);
        self.events.queue.push(
            self.now + self.cost.ipi_latency_ns + exit,
            Event::NohzKick { cpu: ilb as u32 },
        );
    }

    /// `hrtimer_start_expires()` of a sleeping task's timer
    /// (`do_nanosleep()`, kernel/hrtimer.c 3.8):
    /// it fires at `expires` on the CPU the task slept on unless the task
    /// was woken first (`gen`, the task's `timer_gen`, no longer matches).
    pub(crate) fn hrtimer_start(&mut self, t: TaskId, gen: u32, expires: u64) {
        self.events
            .queue
            .push(expires, Event::Timer { task: t, gen });
    }

    /// The timer interrupt of [`Sched::hrtimer_start`]'s timer reached a
    /// CPU in an idle state: `hrtimer_interrupt()` runs once the CPU is out
    /// of it, `exit` ns later (the C-states model's `exit_latency`).
    pub(crate) fn hrtimer_interrupt_after_exit(&mut self, t: TaskId, gen: u32, exit: u64) {
        self.events
            .queue
            .push(self.now + exit, Event::Timer { task: t, gen });
    }

    /// `tick_nohz_restart()` (kernel/time/tick-sched.c, from
    /// `tick_nohz_idle_exit()`): a CPU leaving NOHZ idle restarts its tick
    /// at the next tick boundary.
    pub(crate) fn tick_nohz_restart(&mut self, cpu: usize) {
        self.rqs[cpu].tick_armed = true;
        let t = (self.now / self.tick_ns + 1) * self.tick_ns;
        self.events.queue.push(t, Event::Tick { cpu: cpu as u32 });
    }

    /// `tick_sched_timer()`'s `hrtimer_forward(timer, now, tick_period)`
    /// (kernel/time/tick-sched.c): a busy CPU's next tick, one period on.
    pub(crate) fn tick_sched_timer_forward(&mut self, cpu: usize) {
        self.rqs[cpu].tick_armed = true;
        self.events
            .queue
            .push(self.now + self.tick_ns, Event::Tick { cpu: cpu as u32 });
    }

    /// `irq_work_queue_on()` (kernel/irq_work.c), as the RT push IPIs use
    /// it (`tell_cpu_to_push()`, `rto_push_irq_work_func()`): the irq_work
    /// runs on `cpu` `ipi_latency_ns` later; `src` is the push chain's
    /// source CPU or `rt::push::RD_WORK` for the root domain's walk.
    pub(crate) fn irq_work_queue_on(&mut self, cpu: usize, src: u32) {
        self.events.queue.push(
            self.now + self.cost.ipi_latency_ns,
            Event::RtIrqWork {
                cpu: cpu as u32,
                src,
            },
        );
    }

    /// A task group's CFS bandwidth period timer (`cfs_b->period_timer`,
    /// `sched_cfs_period_timer()`), expiring at `at`.
    pub(crate) fn hrtimer_start_cfs_period(&mut self, g: usize, at: u64) {
        self.events
            .queue
            .push(at, Event::CfsPeriod { group: g as u32 });
    }

    /// A task group's slack timer (`cfs_b->slack_timer`,
    /// `sched_cfs_slack_timer()`), expiring at `at`.
    pub(crate) fn hrtimer_start_cfs_slack(&mut self, g: usize, at: u64) {
        self.events
            .queue
            .push(at, Event::CfsSlack { group: g as u32 });
    }

    /// The RT period timer on `cpu` (`sched_rt_period_timer()`), at the
    /// period's end `at`.
    pub(crate) fn start_rt_task_period(&mut self, cpu: usize, at: u64) {
        self.events
            .queue
            .push(at, Event::RtPeriod { cpu: cpu as u32 });
    }

    /// (Re-)arm the end of the running burst on `cpu` if it moved: the
    /// CPU's one `SegmentEnd` slot (`EventQueue::arm`, replacing the
    /// pending one, as an hrtimer is re-programmed), or its cancellation
    /// when nothing runs. The model's, no kernel function: the kernel does
    /// not know when a task's work ends. Call after `rq_sync(cpu)` and after
    /// any change to the CPU's curr/overhead/work; a no-op for the CPU
    /// whose task is taking a workload step (`Events::stepping`).
    pub(crate) fn rearm(&mut self, cpu: usize) {
        if self.events.stepping == Some(cpu) {
            return;
        }
        let rq = &self.rqs[cpu];
        debug_assert_eq!(rq.seg_start, self.now);
        let end = rq.curr().map(|t| {
            let work = self.tasks[t as usize].work_left;
            let work = match &self.power {
                // the rest of the burst at the package's frequency, rounded up
                Some(p) if p.turbo => {
                    let (f, b) = p.ratio(cpu);
                    (work as u128 * b as u128).div_ceil(f as u128) as u64
                }
                _ => work,
            };
            self.now + rq.overhead_left + work
        });
        if end != rq.armed_end {
            let rq = &mut self.rqs[cpu];
            rq.gen = rq.gen.wrapping_add(1);
            rq.armed_end = end;
            let gen = rq.gen;
            match end {
                Some(e) => {
                    self.events.queue.arm(
                        cpu,
                        e,
                        Event::SegmentEnd {
                            cpu: cpu as u32,
                            gen,
                        },
                    );
                }
                None => {
                    self.events.queue.cancel(cpu);
                }
            }
        }
    }
}

#[cfg(test)]
impl Sched<'_> {
    /// The unit tests' event loop for the RT push IPIs: pop pending events
    /// in order, moving the clock, and run each RT push irq_work
    /// (`rt_irq_work`), dropping any other event; stop when none is left or
    /// `limit` events have been popped. Returns the number popped.
    pub(crate) fn run_rt_irq_work(&mut self, limit: usize) -> usize {
        let mut popped = 0;
        while popped < limit {
            let Some(e) = self.events.queue.pop() else {
                break;
            };
            popped += 1;
            self.now = e.time;
            if let Event::RtIrqWork { cpu, src } = e.ev {
                self.rt_irq_work(cpu as usize, src);
            }
        }
        popped
    }
}
