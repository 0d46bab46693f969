//! The CPU-time accounting, the model's `kernel/sched/cputime.c`
//! (`account_user_time()`, `account_system_time()`, `account_idle_time()`)
//! with the clock update of `update_rq_clock()`: each CPU's time since its
//! last sync goes first to its queued scheduler overhead (system time),
//! then to the running task's burst (user or system time, as the burst
//! is), or to idle — so busy + idle time is conserved exactly on every CPU.
//! Scheduler overhead (context switch, tick, wake-up, balancing costs) is
//! queued per CPU as system time consumed *before* the task's own work.
//! The accounting also records what the engine's progress watchdog reads
//! (`Sched::progress_at`, the overhead charged by kind, the largest
//! charge).

use crate::sched::overhead::Overhead;
use crate::sched::task::Work;
use crate::sched::Sched;

impl Sched<'_> {
    /// Bring every CPU's accounting up to `now`.
    pub(crate) fn sync_all(&mut self) {
        for cpu in 0..self.rqs.len() {
            self.rq_sync(cpu);
        }
    }

    /// Account this CPU's time since its last sync: queued overhead first (system
    /// time), then the running task's burst, or idle. Inlined for the
    /// common case of a CPU already synced at this instant (about half the
    /// calls on a busy machine).
    #[inline]
    pub(crate) fn rq_sync(&mut self, cpu: usize) {
        if self.rqs[cpu].seg_start != self.now {
            self.rq_sync_elapsed(cpu);
        }
    }

    /// `rq_sync` of a CPU last synced before now.
    fn rq_sync_elapsed(&mut self, cpu: usize) {
        let now = self.now;
        let rq = &mut self.rqs[cpu];
        let mut elapsed = now - rq.seg_start;
        rq.seg_start = now;
        let ov = elapsed.min(rq.overhead_left);
        rq.overhead_left -= ov;
        rq.sys_ns += ov;
        elapsed -= ov;
        match rq.curr() {
            None => rq.idle_ns += elapsed,
            Some(t) => {
                let task = &mut self.tasks[t as usize];
                task.sys_ns += ov;
                let w = match &self.power {
                    // Turbo: `elapsed` ns at f do elapsed·f/base of the
                    // burst (kept in ns at base frequency); the CPU time
                    // charged is the wall time.
                    Some(p) if p.turbo => {
                        let (f, b) = p.ratio(cpu);
                        let done = (elapsed as u128 * f as u128 / b as u128) as u64;
                        task.work_left -= done.min(task.work_left);
                        elapsed
                    }
                    _ => {
                        debug_assert!(elapsed <= task.work_left, "burst overrun");
                        let w = elapsed.min(task.work_left);
                        task.work_left -= w;
                        w
                    }
                };
                if w > 0 {
                    // Task work comes after the overhead: it ends at now. A
                    // kernel thread's is not the workload's progress.
                    if task.kthread {
                        self.acct.kthread_progress_at = now;
                    } else {
                        self.acct.progress_at = now;
                    }
                }
                match task.work_kind {
                    Work::User => {
                        rq.user_ns += w;
                        task.user_ns += w;
                    }
                    Work::Sys => {
                        rq.sys_ns += w;
                        task.sys_ns += w;
                    }
                }
            }
        }
    }

    /// Queue `ns` of scheduler overhead (system time) on `cpu`, counted as
    /// `Overhead::Other`.
    pub(crate) fn charge(&mut self, cpu: usize, ns: u64) {
        self.charge_as(cpu, ns, Overhead::Other);
    }

    /// Queue `ns` of scheduler overhead of kind `kind` on `cpu`.
    pub(crate) fn charge_as(&mut self, cpu: usize, ns: u64, kind: Overhead) {
        self.rq_sync(cpu);
        self.rqs[cpu].overhead_left += ns;
        self.count_overhead(ns, kind);
    }

    /// Count `ns` of overhead queued on some CPU (for the watchdog).
    pub(crate) fn count_overhead(&mut self, ns: u64, kind: Overhead) {
        self.acct.overhead[kind as usize] += ns;
        self.acct.max_charge = self.acct.max_charge.max(ns);
    }
}
