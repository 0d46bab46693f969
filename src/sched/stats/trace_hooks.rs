//! The recording side of the balancer and PELT trace tables
//! (`crate::trace::BalanceTrace`, `PeltTrace`): what the kernel would show
//! with schedstat and `trace_pelt_cfs_tp()` (the `pelt_cfs` tracepoint,
//! 5.2+, kernel/sched/pelt.c). Every hook returns at once without a trace,
//! reads the model's state without changing it, and so leaves a run's
//! numbers as they are. Tested in `sched::stats::trace_hooks_tests` (whole runs, with workloads).

use crate::sched::balance::{IdleType, LbEnv};
use crate::sched::pelt::update_cfs_rq;
use crate::sched::Sched;
use crate::trace::{BalanceKind, BalanceOutcome, BalanceRow};

/// What `load_balance()` had counted before a pass: schedstat
/// `lb_balanced[idle]` of the domain and the run's active balances. A pass's
/// outcome is read from how they moved (the pass itself returns only the
/// tasks moved and `*continue_balancing`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LbSnapshot {
    balanced: u64,
    active: u64,
}

impl Sched<'_> {
    /// Before a `load_balance()` pass: `None` without a trace.
    #[inline]
    pub(crate) fn lb_trace_begin(
        &self,
        cpu: usize,
        lvl: usize,
        idle: IdleType,
    ) -> Option<LbSnapshot> {
        self.trace.as_ref()?;
        Some(LbSnapshot {
            balanced: self.rqs[cpu].bal.stats[lvl].lb_balanced[idle as usize],
            active: self.counters.active_balances,
        })
    }

    /// After a `load_balance()` pass on `env` that moved `moved` tasks and
    /// returned `balance` (false: not this group's balance CPU).
    pub(crate) fn lb_trace_end(
        &mut self,
        snap: LbSnapshot,
        env: &LbEnv,
        moved: u64,
        balance: bool,
    ) {
        let (lvl, dst, idle) = (env.sd, env.dst_cpu, env.idle);
        let balanced = self.rqs[dst].bal.stats[lvl].lb_balanced[idle as usize] > snap.balanced;
        let active = self.counters.active_balances > snap.active;
        let now = self.now;
        let Some(tr) = self.trace.as_mut() else {
            return;
        };
        let (kind, cpu) = match (idle, tr.balance.ctx) {
            (IdleType::NewlyIdle, _) => (BalanceKind::Newidle, dst),
            (_, Some((k, ilb))) => (k, ilb),
            (_, None) => (BalanceKind::Periodic, dst),
        };
        let outcome = if !balance {
            BalanceOutcome::Skipped
        } else if moved > 0 {
            BalanceOutcome::Moved
        } else if balanced {
            BalanceOutcome::Balanced
        } else {
            BalanceOutcome::Failed
        };
        tr.balance.push(BalanceRow {
            time: now,
            cpu,
            dst_cpu: dst,
            domain: lvl,
            idle: idle as u8,
            kind,
            outcome,
            moved,
            busiest: (env.src_cpu != dst).then_some(env.src_cpu),
            active,
            cost_ns: env.cost,
        });
    }

    /// `active_load_balance_cpu_stop()` on `src` for `dst`'s domain at
    /// `lvl` moved `moved` (0 or 1) tasks at a CPU time of `cost`.
    pub(crate) fn lb_trace_active(
        &mut self,
        src: usize,
        dst: usize,
        lvl: usize,
        moved: bool,
        cost: u64,
    ) {
        let now = self.now;
        let Some(tr) = self.trace.as_mut() else {
            return;
        };
        tr.balance.push(BalanceRow {
            time: now,
            cpu: src,
            dst_cpu: dst,
            domain: lvl,
            idle: IdleType::Idle as u8,
            kind: BalanceKind::Active,
            outcome: if moved {
                BalanceOutcome::Moved
            } else {
                BalanceOutcome::Failed
            },
            moved: moved as u64,
            busiest: Some(src),
            active: false,
            cost_ns: cost,
        });
    }

    /// Passes from now on run inside `nohz_idle_balance()` on `ilb`
    /// (`Some`), or from a CPU's own softirq again (`None`).
    pub(crate) fn lb_trace_context(&mut self, ilb: Option<usize>) {
        if let Some(tr) = self.trace.as_mut() {
            tr.balance.ctx = ilb.map(|c| (BalanceKind::Nohz, c));
        }
    }

    /// At a vmstat sample: each CPU's CFS runqueue PELT signals as
    /// `cpu_util_cfs()`/`cpu_load()` would read them now — a copy brought
    /// to now (`update_cfs_rq_load_avg()`), so the run's own state, whose
    /// update instants decide its integer rounding, is left untouched.
    pub(crate) fn pelt_trace_sample(&mut self) {
        let now = self.now;
        let (Some(tr), Some(p)) = (self.trace.as_mut(), self.pelt.as_ref()) else {
            return;
        };
        for (cpu, rq) in self.rqs.iter().enumerate() {
            let mut sa = p.cfs[cpu];
            let cfs = &rq.cfs;
            update_cfs_rq(
                now,
                &mut sa,
                cfs.load,
                cfs.nr_running as u64,
                cfs.curr.is_some(),
            );
            tr.pelt
                .push(now, cpu, sa.util_avg, sa.load_avg, sa.runnable_avg);
        }
    }
}
