//! The periodic balance's trigger and the NOHZ idle load balancer, after
//! `kernel/sched_fair.c` (2.6.36) and `kernel/sched/fair.c` (3.8 to 6.18):
//! `trigger_load_balance()` from a busy CPU's tick, `nohz_kick_needed()` /
//! `nohz_balancer_kick()` (the kick IPI to the idle load balancer) and
//! `nohz_idle_balance()`, which balances on behalf of every idle CPU whose
//! tick is stopped.

use super::env::IdleType;
use crate::kernel::{NohzIlb, NohzKickIpi};
use crate::sched::balance::domains::sd;
use crate::sched::cpumask::CpuMask;
use crate::sched::overhead::Overhead;
use crate::sched::Sched;

/// The NOHZ idle-balancer's global state (`struct nohz`).
#[derive(Clone, Debug)]
pub(crate) struct Nohz {
    /// `idle_cpus_mask`: CPUs idle with their tick stopped (a bitset, so
    /// finding the idle load balancer and walking the idle CPUs cost
    /// O(CPUs / 64) words, not a flag per CPU).
    pub idle: CpuMask,
    pub nr_idle: usize,
    pub next_balance: u64,
    /// 2.6.36 `first_pick_cpu` / `second_pick_cpu`.
    pub first_pick: Option<usize>,
    pub second_pick: Option<usize>,
    pub kick_pending: Vec<bool>,
}

impl Nohz {
    /// Every CPU starts idle with its tick stopped.
    pub fn new(ncpus: usize) -> Self {
        Nohz {
            idle: CpuMask::full(ncpus),
            nr_idle: ncpus,
            next_balance: 0,
            first_pick: None,
            second_pick: None,
            kick_pending: vec![false; ncpus],
        }
    }
}

impl Sched<'_> {
    /// `trigger_load_balance()` + the SCHED_SOFTIRQ it raises
    /// (`run_rebalance_domains()`; 2.6.36 and 3.8), from the tick of a busy
    /// CPU: periodic balancing when `next_balance` has come, and the NOHZ
    /// idle-balancer kick.
    pub(crate) fn trigger_load_balance(&mut self, cpu: usize) {
        if self.sd[cpu].is_empty() {
            return;
        }
        let idle_at_tick = self.rqs[cpu].bal.idle_at_tick;
        let mut ran = false;
        if self.now >= self.rqs[cpu].bal.next_balance {
            let idle = if idle_at_tick {
                IdleType::Idle
            } else {
                IdleType::NotIdle
            };
            let (_, cost) = self.rebalance_domains(cpu, idle);
            self.charge_as(cpu, cost, Overhead::Balance);
            ran = true;
        }
        if (!ran || self.kernel.nohz_kick_after_rebalance) && self.nohz_kick_needed(cpu) {
            self.nohz_balancer_kick(cpu);
        }
    }

    /// `nohz_kick_needed()` at a busy CPU's tick: 2.6.36's first/second
    /// pick push model, or 3.3+'s (3.8) `nr_busy_cpus` test (`nohz_ilb`).
    fn nohz_kick_needed(&mut self, cpu: usize) -> bool {
        if self.now < self.balance.nohz.next_balance || self.balance.nohz.nr_idle == 0 {
            return false;
        }
        let nr = self.rqs[cpu].cfs.nr_running;
        match self.kernel.nohz_ilb {
            NohzIlb::Push => {
                if self.rqs[cpu].bal.idle_at_tick {
                    return false;
                }
                // first_pick_cpu / second_pick_cpu: the first busy CPU to
                // claim the first pick kicks with two or more runnable
                // tasks; a second one kicks with any.
                let first = self.balance.nohz.first_pick;
                if first.is_none() || first == Some(cpu) {
                    self.balance.nohz.first_pick = Some(cpu);
                    if self.balance.nohz.second_pick == Some(cpu) {
                        self.balance.nohz.second_pick = None;
                    }
                    nr > 1
                } else if self.balance.nohz.second_pick.is_none()
                    || self.balance.nohz.second_pick == Some(cpu)
                {
                    self.balance.nohz.second_pick = Some(cpu);
                    nr > 0
                } else {
                    false
                }
            }
            NohzIlb::NrBusy => {
                if nr >= 2 {
                    return true;
                }
                // An LLC-level group with more than one busy CPU.
                for d in &self.sd[cpu] {
                    if !d.has(sd::SHARE_PKG_RESOURCES) {
                        break;
                    }
                    let g = &d.groups[d.local_group];
                    let busy = g
                        .cpus
                        .iter()
                        .filter(|&&c| !self.balance.nohz.idle.test(c as usize))
                        .count();
                    if busy > 1 {
                        return true;
                    }
                }
                false
            }
        }
    }

    /// `nohz_balancer_kick()`: one jiffy of back-off, then an IPI to the idle
    /// load balancer (2.6.36: function-call IPI; 3.8: reschedule IPI).
    fn nohz_balancer_kick(&mut self, cpu: usize) {
        self.balance.nohz.next_balance += self.tick_ns;
        // find_new_ilb(): the first CPU of nohz.idle_cpus_mask.
        let Some(ilb) = self.balance.nohz.idle.first() else {
            return;
        };
        if self.balance.nohz.kick_pending[ilb] {
            return;
        }
        self.balance.nohz.kick_pending[ilb] = true;
        self.counters.nohz_kicks += 1;
        match self.kernel.nohz_kick_ipi {
            NohzKickIpi::FunctionCall => self.counters.function_call_ipis += 1,
            NohzKickIpi::Resched => self.counters.resched_ipis += 1,
        }
        self.charge(cpu, self.cost.ipi_send_ns);
        self.kick_ilb(ilb);
    }

    /// The kicked idle CPU runs `rebalance_domains(.., CPU_IDLE)` for itself
    /// and, in `nohz_idle_balance()` (2.6.36 and 3.8 alike), for every other
    /// tickless idle CPU (refreshing its `cpu_load` first), stopping if it
    /// gets work itself. Each CPU's domains are gated by their own
    /// `last_balance` + idle interval inside `rebalance_domains`; there is no
    /// gate on the CPU's `next_balance`, which may still hold the busy
    /// interval of its last busy tick.
    pub(crate) fn nohz_idle_balance(&mut self, ilb: usize) {
        self.rq_sync(ilb);
        self.balance.nohz.kick_pending[ilb] = false;
        self.rqs[ilb].irqs += 1;
        self.charge(ilb, self.cost.ipi_handle_ns);
        if self.rqs[ilb].cfs.curr.is_some() || self.rqs[ilb].cfs.nr_running > 0 {
            self.finish_cpu(ilb);
            return;
        }
        let mut cost = 0;
        self.update_cpu_load(ilb);
        self.lb_trace_context(Some(ilb));
        let (_, c) = self.rebalance_domains(ilb, IdleType::Idle);
        cost += c;
        let mut next = self.rqs[ilb].bal.next_balance;
        // for_each_cpu(c, nohz.idle_cpus_mask), re-reading the mask at
        // each step as the kernel's iterator does.
        let mut from = 0;
        while let Some(c) = self.balance.nohz.idle.next_from(from) {
            from = c + 1;
            if c == ilb {
                continue;
            }
            if self.rqs[ilb].need_resched || self.rqs[ilb].cfs.nr_running > 0 {
                break;
            }
            self.update_cpu_load(c);
            // Balancing on c's behalf: pulls land on c, which is woken.
            let (moved, lb_cost) = self.rebalance_domains(c, IdleType::Idle);
            cost += lb_cost;
            if moved > 0 {
                self.resched_cpu(c, Some(ilb));
            }
            next = next.min(self.rqs[c].bal.next_balance);
        }
        self.lb_trace_context(None);
        self.balance.nohz.next_balance = next;
        self.charge_as(ilb, cost, Overhead::Balance);
        if self.rqs[ilb].cfs.nr_running > 0 {
            self.rqs[ilb].need_resched = true;
        }
        self.finish_cpu(ilb);
    }
}
