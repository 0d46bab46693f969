//! Load balancing, after `kernel/sched_fair.c` (2.6.36) and
//! `kernel/sched/fair.c` (3.8 to 6.18): `load_balance()`'s outer loop,
//! shared by every release (redo on all-pinned, failure counting, active
//! balancing, the balance intervals), `move_tasks()`, `can_migrate_task()`,
//! `task_hot()`, `active_load_balance_cpu_stop()`, `idle_balance()` with
//! every newidle throttle, and `rebalance_domains()`.
//!
//! What differs by release is in its own module:
//! - `fbg_v3`: `find_busiest_group()` of 2.6.36–5.4, on the weighted
//!   `cpu_load[]` (`update_sd_lb_stats`, `calculate_imbalance`,
//!   `fix_small_imbalance`, `update_cpu_load`);
//! - `fbg_v55`: the 5.5+ rework (0b0695f2b34a), on PELT sums and group
//!   types (`Kernel::balancer = "group_type"`);
//! - `newidle`: 5.16–6.18's `sched_balance_newidle()` and its throttles;
//! - `nohz`: the NOHZ idle load balancer and `trigger_load_balance()`;
//! - `power`: Alex Shi's 2013 power-aware policies (never merged);
//! - `sg_sums`: running sums per sched group, read instead of walking
//!   every CPU on large machines;
//! - `domains`: the sched-domain hierarchy (`kernel/sched/topology.c`);
//! - `env`: a pass's state, [`LbEnv`] (`struct lb_env`), and its
//!   vocabulary ([`IdleType`], [`MigrationType`], `LBF_*`).
//!
//! Simplifications, each where it is made: a balance pass is instantaneous
//! and its CPU time is charged afterwards as system time on the balancing
//! CPU (and the source CPU for the lock a migration holds); no SD_SERIALIZE
//! contention (a pass never overlaps another); CONFIG_PREEMPT is off (a
//! NEWLY_IDLE pass may pull more than one task); the 3.8 LBF_SOME_PINNED
//! retry is not modelled.

pub mod domains;
pub mod env;
pub mod fbg_v3;
pub mod fbg_v55;
pub mod newidle;
pub mod nohz;
pub mod power;
pub mod sg_sums;

#[cfg(test)]
mod pass_tests;
#[cfg(test)]
mod sg_sums_tests;
#[cfg(test)]
mod sg_sums_variants_tests;

use crate::kernel::{Balancer, NewidleThrottle};
use crate::sched::balance::domains::sd;
use crate::sched::overhead::Overhead;
use crate::sched::task::TaskState;
use crate::sched::task::{EnqueueFlags, TaskId};
use crate::sched::Sched;
pub(crate) use env::{IdleType, LbEnv, LbResult, IDLE_TYPE_NAMES, LBF_ALL_PINNED};
pub use fbg_v3::CPU_LOAD_IDX_MAX;

/// The balancer's state beyond each runqueue's (`Sched::balance`).
pub(crate) struct BalanceState {
    /// Each CPU's `cpu_power` (`sgp->power` of its own group; 3.x).
    pub cpu_power: Vec<u64>,
    /// Running sums per sched group and the idle mask (`None`: walk the
    /// groups' CPUs; see `sg_sums`).
    pub sg_sums: Option<sg_sums::SgSums>,
    /// The NOHZ idle balancer's state (`struct nohz`).
    pub nohz: nohz::Nohz,
    /// The 5.5+ balancer's group imbalance flags (`sgc->imbalance`).
    pub lb: fbg_v55::LbGroupState,
    /// `rd->overload` (the root domain's): set when a runqueue reaches two
    /// runnable tasks, rewritten by a root-level balance pass
    /// (`newidle`); read by `newidle_throttle = "lb_cost"`.
    pub rd_overload: bool,
    /// `sched_rnd_state`, the per-CPU stream of `sched_rng()` (NI_RANDOM):
    /// seeded from the run seed apart from the workload's and the noise
    /// streams; empty unless `Kernel::newidle_random`, so no draw is taken
    /// otherwise.
    pub sched_rng: Vec<crate::rng::Rng>,
}

/// `MAX_PINNED_INTERVAL` (ms).
const MAX_PINNED_INTERVAL: u64 = 512;

/// `update_avg(&avg, sample)`: `avg += (sample − avg) / 8`.
pub fn update_avg(avg: u64, sample: u64) -> u64 {
    let diff = sample as i64 - avg as i64;
    (avg as i64 + (diff >> 3)) as u64
}

/// The `avg_idle` update a wake-up does (`ttwu_post_activation` 2.6.36,
/// `ttwu_do_wakeup` 3.8): a sample above `max` resets to `max`, else the
/// 1/8 EWMA. With `clamp_after` (`avg_idle_ewma_first`, 3.13) the EWMA runs
/// first and its result is clamped to `max`.
pub fn avg_idle_sample(avg: u64, delta: u64, max: u64, clamp_after: bool) -> u64 {
    if clamp_after {
        update_avg(avg, delta).min(max)
    } else if delta > max {
        max
    } else {
        update_avg(avg, delta)
    }
}

impl Sched<'_> {
    pub(crate) fn jiffies(&self) -> u64 {
        self.now / self.tick_ns
    }

    /// `idle_cpu()`: 2.6.36 asks only whether the idle task runs; with
    /// `idle_cpu_nr_running` (commit and release: `Kernel::FIELDS`) it
    /// also requires an empty
    /// runqueue (a wakee queued on an idle CPU whose IPI is in flight counts
    /// as busy).
    pub(crate) fn idle_cpu(&self, cpu: usize) -> bool {
        let rq = &self.rqs[cpu];
        rq.curr().is_none() && (!self.kernel.idle_cpu_nr_running || rq.nr_running() == 0)
    }

    /// `sched_idle_cpu(cpu)` (kernel/sched/fair.c 5.4-6.18; Kernel field
    /// `sched_idle_cpu`): the CPU has tasks and all of them are SCHED_IDLE
    /// (`rq->nr_running == rq->cfs.idle_h_nr_running`). Simplified: RT
    /// tasks (`sched::rt`) are not counted in `nr_running`.
    pub(crate) fn sched_idle_cpu(&self, cpu: usize) -> bool {
        self.kernel.sched_idle_cpu && self.sched_idle_rq(cpu)
    }

    /// `sched_idle_rq(rq)` (5.4-6.18): whatever a Kernel field says.
    pub(crate) fn sched_idle_rq(&self, cpu: usize) -> bool {
        let cfs = &self.rqs[cpu].cfs;
        cfs.nr_running > 0 && cfs.nr_running == cfs.idle_h_nr_running
    }

    /// `task_hot()` (kernel/sched/fair.c 3.8, 2.6.36 alike): cache-hot if it
    /// is a buddy of `src_cpu`'s runqueue while `dst_cpu` runs something
    /// (CACHE_HOT_BUDDY) or ran less than `migration_cost` ago.
    /// `smt_ignore_hot` (ec73240b1627, 6.x alike): never hot in a domain
    /// with SD_SHARE_CPUCAPACITY, tested before the buddy test.
    fn task_hot(&self, p: TaskId, env: &LbEnv) -> bool {
        // "SCHED_IDLE tasks are never cache hot" (2.6.36 to 6.18).
        if self.ses[p as usize].policy == crate::sched::task::Policy::Idle {
            return false;
        }
        if self.kernel.smt_ignore_hot && self.sd[env.dst_cpu][env.sd].has(sd::SHARE_CPUPOWER) {
            return false;
        }
        let cfs = &self.rqs[env.src_cpu].cfs;
        if self.rqs[env.dst_cpu].cfs.nr_running > 0 && (cfs.next == Some(p) || cfs.last == Some(p))
        {
            return true;
        }
        let mc = self.kernel.migration_cost_ns;
        if mc == 0 {
            return false;
        }
        self.now.saturating_sub(self.ses[p as usize].exec_start) < mc
    }

    /// `can_migrate_task(p, env)` (kernel/sched/fair.c 3.8, 2.6.36 alike):
    /// allowed on `dst_cpu` (else LBF_ALL_PINNED stays set), not running,
    /// and not cache hot unless the domain has failed more than
    /// `cache_nice_tries` times. Returns (movable, was_hot). Simplification:
    /// the `lb_hot_gained` schedstat is counted by the caller
    /// (`balance_tasks`), so the stopper's move does not count it.
    pub(crate) fn can_migrate_task(&self, p: TaskId, env: &mut LbEnv) -> (bool, bool) {
        if !self.allowed(p, env.dst_cpu) {
            return (false, false);
        }
        env.flags &= !LBF_ALL_PINNED;
        if self.rqs[env.src_cpu].cfs.curr == Some(p) {
            return (false, false);
        }
        let hot = self.task_hot(p, env);
        let d = &self.sd[env.dst_cpu][env.sd];
        if !hot || d.nr_balance_failed > d.cache_nice_tries {
            (true, hot)
        } else {
            (false, hot)
        }
    }

    /// `move_task(p, env)` (3.8) / `pull_task()` (2.6.36): dequeue from
    /// `src_cpu`, `set_task_cpu`, enqueue on `dst_cpu`, `check_preempt_curr`.
    /// Under the 2.6.37-rc1 re-arm (fab476228) both runqueues' `avg_idle` go
    /// to 2·migration_cost and dst's `idle_stamp` is cleared. `preempt_from`:
    /// the CPU running this code, for `check_preempt_curr` (`None`: no check
    /// — the caller is in `schedule()` on dst and picks next anyway). When
    /// it is not dst, as for the stopper on src pushing to an idle dst, dst
    /// gets a reschedule IPI, as `resched_task()` sends one to a remote CPU.
    /// The migration's CPU time is charged to src at once and added to the
    /// pass's cost.
    pub(crate) fn move_task(&mut self, p: TaskId, env: &mut LbEnv, preempt_from: Option<usize>) {
        let (src, dst) = (env.src_cpu, env.dst_cpu);
        self.rq_sync(src);
        self.rq_sync(dst);
        self.deactivate_task(src, p, false);
        self.migration_refill(p, src, dst);
        self.set_task_cpu(p, dst, dst);
        self.activate_task(dst, p, EnqueueFlags::default());
        self.counters.tasks_pulled += 1;
        self.charge_as(src, self.cost.migrate_task_ns, Overhead::Balance);
        env.cost += self.cost.migrate_task_ns;
        if self.kernel.newidle_rearm {
            let v = 2 * self.kernel.migration_cost_ns;
            self.rqs[src].bal.avg_idle = v;
            self.rqs[dst].bal.avg_idle = v;
            self.rqs[dst].bal.idle_stamp = None;
        }
        if let Some(exec_cpu) = preempt_from {
            self.check_preempt_curr(dst, p, false, Some(exec_cpu));
        }
        self.rearm(src);
    }

    /// `move_tasks(env)`. 2.6.36 (`move_tasks()` over `balance_tasks()`):
    /// walks of src's task list, most recently enqueued first, each
    /// examining up to `nr_migrate` + 1 tasks, repeated while a walk moves
    /// something and imbalance remains. `lb_cfs_tasks` (367456c756a6, 3.4;
    /// the 3.8 `move_tasks()`): one walk of at most min(`nr_migrate`,
    /// nr_running) tasks, skipped ones rotated to the tail. Returns the
    /// tasks moved; `env.imbalance` is what is left.
    fn move_tasks(&mut self, env: &mut LbEnv) -> u64 {
        if self.kernel.balancer == Balancer::GroupType {
            return self.lb_detach_tasks(env);
        }
        let nr_migrate = self.kernel.nr_migrate as usize;
        if self.kernel.lb_cfs_tasks {
            env.loop_max = nr_migrate.min(self.rqs[env.src_cpu].cfs.nr_running as usize);
            return self.balance_tasks(env, true);
        }
        let mut total = 0;
        loop {
            env.loop_max = nr_migrate + 1;
            let moved = self.balance_tasks(env, false);
            total += moved;
            if moved == 0 || env.imbalance == 0 {
                return total;
            }
            // 2.6.36 #ifdef CONFIG_PREEMPT: stop once this CPU has a task.
            if self.kernel.preemption
                && env.idle == IdleType::NewlyIdle
                && self.rqs[env.dst_cpu].cfs.nr_running > 0
            {
                return total;
            }
        }
    }

    /// One walk over src's tasks: 2.6.36's `balance_tasks()`, the loop of
    /// 3.8's `move_tasks()`. A task moves if half its weight fits the
    /// remaining imbalance and `can_migrate_task()` allows it.
    /// `rotate_skipped`: 3.8's `list_move_tail()` of skipped tasks.
    fn balance_tasks(&mut self, env: &mut LbEnv, rotate_skipped: bool) -> u64 {
        // `list_for_each_entry_safe()` over `cfs_tasks` from its most
        // recently enqueued task: the next one is taken before `p` may move.
        let src = env.src_cpu;
        let mut next = self.group_nodes.back(&self.rqs[src].bal.cfs_tasks);
        let mut skipped: Vec<TaskId> = Vec::new();
        let mut moved = 0;
        env.loop_ = 0;
        while let Some(p) = next {
            if env.loop_ >= env.loop_max || env.imbalance == 0 {
                break;
            }
            debug_assert_eq!(self.tasks[p as usize].cpu as usize, src);
            next = self.group_nodes.prev(p);
            env.loop_ += 1;
            env.cost += self.cost.lb_per_task_ns;
            let w = self.ses[p as usize].weight;
            let (ok, hot) = if w / 2 > env.imbalance {
                (false, false)
            } else {
                self.can_migrate_task(p, env)
            };
            if !ok {
                skipped.push(p);
                continue;
            }
            if hot {
                self.rqs[env.dst_cpu].bal.stats[env.sd].lb_hot_gained[env.idle as usize] += 1;
            }
            let from = (!env.in_schedule).then_some(env.dst_cpu);
            self.move_task(p, env, from);
            moved += 1;
            env.imbalance = env.imbalance.saturating_sub(w);
            // #ifdef CONFIG_PREEMPT: a NEWLY_IDLE pass stops after one task.
            if self.kernel.preemption && env.idle == IdleType::NewlyIdle {
                break;
            }
        }
        if rotate_skipped && !skipped.is_empty() {
            // list_move_tail(): each skipped task becomes the new tail.
            let list = &mut self.rqs[src].bal.cfs_tasks;
            for p in skipped {
                self.group_nodes.move_to_front(list, p);
            }
        }
        moved
    }

    /// `need_active_balance(env)` (kernel/sched/fair.c 3.8): after more
    /// than `cache_nice_tries` + 2 failures; never for NEWLY_IDLE unless
    /// `newidle_active_balance`. Simplification: no ASYM_PACKING case, no
    /// 2.6.36 power-savings case.
    fn need_active_balance(&self, env: &LbEnv) -> bool {
        if self.kernel.balancer == Balancer::GroupType {
            return self.lb_need_active_balance(env);
        }
        if env.idle == IdleType::NewlyIdle && !self.kernel.newidle_active_balance {
            return false;
        }
        let d = &self.sd[env.dst_cpu][env.sd];
        d.nr_balance_failed > d.cache_nice_tries + 2
    }

    /// `load_balance(this_cpu, this_rq, sd, idle, &balance)`
    /// (kernel/sched/fair.c 3.8; 2.6.36 kernel/sched_fair.c): find the
    /// busiest group and queue, move tasks (retrying without an all-pinned
    /// queue), count failures and start an active balance after repeated
    /// ones, and adapt the domain's `balance_interval`. `in_schedule`: called
    /// from `idle_balance()` inside `schedule()`. `newidle_keep_interval`
    /// (3f130a37c442, 4.20-6.18): a balanced NEWLY_IDLE pass leaves
    /// `balance_interval` alone. Simplifications: no 2.6.36
    /// `sd_idle` (SMT power-savings) return, no `update_shares()`, no
    /// LBF_NEED_BREAK/LBF_SOME_PINNED retries (see [`LbEnv`]).
    pub(crate) fn load_balance(
        &mut self,
        this_cpu: usize,
        lvl: usize,
        idle: IdleType,
        in_schedule: bool,
    ) -> LbResult {
        let mut env = LbEnv::new(this_cpu, lvl, idle, in_schedule);
        let snap = self.lb_trace_begin(this_cpu, lvl, idle);
        let (moved, balance) = self.load_balance_env(&mut env);
        if let Some(snap) = snap {
            self.lb_trace_end(snap, &env, moved, balance);
        }
        LbResult {
            moved,
            balance,
            cost: env.cost,
        }
    }

    fn load_balance_env(&mut self, env: &mut LbEnv) -> (u64, bool) {
        let (this_cpu, lvl, idle) = (env.dst_cpu, env.sd, env.idle);
        let it = idle as usize;
        self.counters.lb_calls[it] += 1;
        if idle != IdleType::NewlyIdle {
            // update_sd_lb_stats() → update_idle_cpu_scan() (SIS_UTIL).
            self.update_idle_cpu_scan(this_cpu, lvl);
        }
        env.cost += self.cost.lb_base_ns;
        self.rqs[this_cpu].bal.stats[lvl].lb_count[it] += 1;
        // Alex Shi's power balance (`power_lb`, `sched::balance::power`): when it
        // acts, the performance balance is not allowed this pass.
        if let Some(moved) = self.power_load_balance(env) {
            return (moved, true);
        }
        let mut moved = 0;
        let mut active = false;
        let balanced = 'redo: loop {
            let g = match self.find_busiest_group(env) {
                Err(()) => return (0, false),
                Ok(None) => {
                    self.rqs[this_cpu].bal.stats[lvl].lb_nobusyg[it] += 1;
                    break 'redo true;
                }
                Ok(Some(g)) => g,
            };
            let Some(busiest) = self.find_busiest_queue(env, g) else {
                self.rqs[this_cpu].bal.stats[lvl].lb_nobusyq[it] += 1;
                break 'redo true;
            };
            self.rqs[this_cpu].bal.stats[lvl].lb_imbalance[it] += env.imbalance;
            env.src_cpu = busiest;
            if self.rqs[busiest].cfs.nr_running > 1 {
                env.flags |= LBF_ALL_PINNED;
                moved = self.move_tasks(env);
                if env.flags & LBF_ALL_PINNED != 0 {
                    env.excluded.push(busiest);
                    if env.excluded.len() < self.sd[this_cpu][lvl].span.len() {
                        continue 'redo;
                    }
                    break 'redo true;
                }
            }
            let d = &mut self.sd[this_cpu][lvl];
            if moved == 0 {
                self.rqs[this_cpu].bal.stats[lvl].lb_failed[it] += 1;
                if idle != IdleType::NewlyIdle || !self.kernel.newidle_no_nr_balance_failed {
                    d.nr_balance_failed += 1;
                }
                if self.need_active_balance(env) {
                    let curr_ok = self.rqs[busiest]
                        .cfs
                        .curr
                        .is_some_and(|c| self.allowed(c, this_cpu));
                    if curr_ok && !self.rqs[busiest].bal.active_balance {
                        self.rqs[busiest].bal.active_balance = true;
                        active = true;
                        self.counters.active_balances += 1;
                        // Wake the stopper on busiest.
                        self.stop_one_cpu_nowait(busiest, this_cpu, lvl);
                        self.counters.resched_ipis += 1;
                    }
                    let d = &mut self.sd[this_cpu][lvl];
                    d.nr_balance_failed = d.cache_nice_tries + 1;
                }
            } else {
                d.nr_balance_failed = 0;
                self.rqs[this_cpu].bal.stats[lvl].lb_gained[it] += moved;
            }
            let d = &mut self.sd[this_cpu][lvl];
            if !active {
                d.balance_interval = d.min_interval;
            } else if d.balance_interval < d.max_interval {
                d.balance_interval *= 2;
            }
            break 'redo false;
        };
        if balanced {
            self.rqs[this_cpu].bal.stats[lvl].lb_balanced[it] += 1;
            let all_pinned = env.flags & LBF_ALL_PINNED != 0;
            let d = &mut self.sd[this_cpu][lvl];
            d.nr_balance_failed = 0;
            // 3f130a37c442: newidle disregards balance intervals, so its
            // out_one_pinned path leaves balance_interval alone.
            if self.kernel.newidle_keep_interval && idle == IdleType::NewlyIdle {
                return (0, true);
            }
            if (all_pinned && d.balance_interval < MAX_PINNED_INTERVAL)
                || d.balance_interval < d.max_interval
            {
                d.balance_interval *= 2;
            }
            return (0, true);
        }
        (moved, true)
    }

    /// `active_load_balance_cpu_stop()` (kernel/sched/fair.c 3.8; 2.6.36
    /// kernel/sched_fair.c): the stopper thread on `src` preempts src's
    /// current task and moves one movable task to `dst` (`move_one_task()`
    /// with an `lb_env` of dst's domain at `lvl`, CPU_IDLE). Its CPU time is
    /// charged to src.
    pub(crate) fn active_balance(&mut self, src: usize, dst: usize, lvl: usize) {
        self.rq_sync(src);
        self.rqs[src].bal.active_balance = false;
        self.rqs[src].irqs += 1;
        self.rqs[dst].bal.stats[lvl].alb_count += 1;
        // The stopper preempts whatever runs on src: curr goes back to the
        // tree and stops being "running", so it becomes movable.
        let now = self.now;
        if let Some(c) = self.rqs[src].cfs.curr {
            let rq = &mut self.rqs[src];
            rq.cfs.put_prev_entity(&mut self.ses, now);
            rq.curr = None;
            rq.nr_switches += 1;
            let t = &mut self.tasks[c as usize];
            t.nivcsw += 1;
            t.state = TaskState::Runnable;
            t.wait_start = now;
            t.woken = false;
            self.update_sg_sums(src);
            self.trace_switch(src, Some(c), None);
        }
        let mut moved = false;
        let mut cost = 0;
        if self.rqs[src].cfs.nr_running > 0 && dst != src {
            let mut env = LbEnv::new(dst, lvl, IdleType::Idle, false);
            env.src_cpu = src;
            // move_one_task(): most recently enqueued first; the walk ends
            // at the first task moved.
            let mut next = self.group_nodes.back(&self.rqs[src].bal.cfs_tasks);
            while let Some(p) = next {
                next = self.group_nodes.prev(p);
                env.cost += self.cost.lb_per_task_ns;
                let (ok, _) = self.can_migrate_task(p, &mut env);
                if ok {
                    // The stopper runs on src: an idle dst needs the IPI.
                    self.move_task(p, &mut env, Some(src));
                    moved = true;
                    break;
                }
            }
            self.charge_as(src, env.cost, Overhead::Balance);
            cost = env.cost;
        }
        self.lb_trace_active(src, dst, lvl, moved, cost);
        let st = &mut self.rqs[dst].bal.stats[lvl];
        if moved {
            st.alb_pushed += 1;
        } else {
            st.alb_failed += 1;
        }
        self.rqs[src].need_resched = true;
        self.schedule(src);
        self.rearm(src);
        // migration/N schedules out: pick_next_task_rt() may pull.
        if self.rt_root.tasks_used {
            self.rt_stopper_done(src);
        }
        if moved {
            self.rq_sync(dst);
            self.rearm(dst);
        }
    }

    /// `idle_balance(this_cpu, this_rq)` (2.6.36 kernel/sched_fair.c, 3.8
    /// kernel/sched/fair.c; 3.13's per-domain cost budget under
    /// `NewidleThrottle::MaxLbCost`) with the configured throttle; called
    /// from `schedule()` when the runqueue is empty. Returns tasks pulled;
    /// the passes' CPU time is charged to `cpu`. Simplification: a pass's
    /// cost is the model's `LbEnv::cost`, not a `sched_clock()` difference.
    pub(crate) fn idle_balance(&mut self, cpu: usize) -> u64 {
        if !self.kernel.idle_balance || self.sd[cpu].is_empty() {
            return 0;
        }
        if self.kernel.newidle_throttle == NewidleThrottle::LbCost {
            // 5.16–6.18: sched::balance::newidle.
            return self.sched_balance_newidle(cpu);
        }
        let now = self.now;
        self.rqs[cpu].bal.idle_stamp = Some(now);
        let avg_idle = self.rqs[cpu].bal.avg_idle;
        let throttle = self.kernel.newidle_throttle;
        if throttle != NewidleThrottle::Off && avg_idle < self.kernel.migration_cost_ns {
            self.counters.newidle_skipped += 1;
            return 0;
        }
        self.counters.newidle_calls += 1;
        self.counters.avg_idle_sum += avg_idle;
        let mut pulled = 0;
        let mut curr_cost = 0u64;
        let mut next_balance = now + 1_000_000_000;
        let mut total_cost = 0;
        for lvl in 0..self.sd[cpu].len() {
            if throttle == NewidleThrottle::MaxLbCost
                && avg_idle < curr_cost + self.sd[cpu][lvl].max_newidle_lb_cost
            {
                break;
            }
            if self.sd[cpu][lvl].has(sd::BALANCE_NEWIDLE) {
                let r = self.load_balance(cpu, lvl, IdleType::NewlyIdle, true);
                pulled += r.moved;
                let cost = r.cost;
                total_cost += cost;
                // Recorded under every throttle (as 3.13 does); read only by
                // the max_lb_cost throttle, its decay and the avg_idle cap.
                let d = &mut self.sd[cpu][lvl];
                d.max_newidle_lb_cost = d.max_newidle_lb_cost.max(cost);
                curr_cost += cost;
            }
            let d = &self.sd[cpu][lvl];
            next_balance = next_balance.min(d.last_balance + d.balance_interval * 1_000_000);
            if pulled > 0 {
                if self.kernel.newidle_clear_stamp {
                    self.rqs[cpu].bal.idle_stamp = None;
                }
                break;
            }
        }
        let b = &mut self.rqs[cpu].bal;
        b.max_idle_balance_cost = b.max_idle_balance_cost.max(curr_cost);
        if pulled > 0 || now >= b.next_balance {
            b.next_balance = next_balance;
        }
        self.counters.newidle_pulled += pulled;
        self.counters.newidle_time_ns += total_cost;
        self.charge_as(cpu, total_cost, Overhead::Balance);
        pulled
    }

    /// `rebalance_domains(cpu, idle)` (kernel/sched/fair.c 3.8; 2.6.36
    /// kernel/sched_fair.c; 3.13 also decays `max_newidle_lb_cost` here):
    /// each level whose interval (× busy factor when busy) has passed
    /// balances; stop above a level where this CPU is not the group's
    /// balance CPU. Returns (tasks moved, the passes' CPU time), which the
    /// caller charges. Under `newidle_throttle = "lb_cost"` (5.16–6.18):
    /// each level first calls `update_newidle_cost(sd, 0)`
    /// (`sched::balance::newidle`) and sums the maxima; above a level that stopped
    /// the walk, levels are still visited while they decay; after a decay
    /// `rq->max_idle_balance_cost = max(migration_cost, Σ max)`; a root-level
    /// pass rewrites `rd->overload`. Simplification: no SD_SERIALIZE lock.
    pub(crate) fn rebalance_domains(&mut self, cpu: usize, mut idle: IdleType) -> (u64, u64) {
        let now = self.now;
        let j = self.jiffies();
        let mut next_balance = now + 60 * 1_000_000_000;
        let mut update = false;
        let mut cost = 0;
        let mut moved_total = 0;
        let max_interval = (self.kernel.hz as u64 * self.rqs.len() as u64 / 10).max(1);
        let lb_cost = self.kernel.newidle_throttle == NewidleThrottle::LbCost;
        let (mut need_decay, mut max_cost) = (false, 0u64);
        let mut cont = true;
        for lvl in 0..self.sd[cpu].len() {
            if lb_cost {
                need_decay = self.rebalance_decay_newidle_cost(cpu, lvl);
                max_cost += self.sd[cpu][lvl].max_newidle_lb_cost;
                if !cont {
                    if need_decay {
                        continue;
                    }
                    break;
                }
            } else if self.kernel.newidle_lb_cost_decay {
                let d = &mut self.sd[cpu][lvl];
                if now >= d.next_decay_max_lb_cost {
                    d.max_newidle_lb_cost = d.max_newidle_lb_cost * 253 / 256;
                    d.next_decay_max_lb_cost = now + 1_000_000_000;
                    let sum: u64 = self.sd[cpu].iter().map(|d| d.max_newidle_lb_cost).sum();
                    let b = &mut self.rqs[cpu].bal;
                    b.max_idle_balance_cost = sum.max(self.kernel.migration_cost_ns);
                }
            }
            let d = &self.sd[cpu][lvl];
            if !d.has(sd::LOAD_BALANCE) {
                continue;
            }
            let mut interval_ms = d.balance_interval;
            // 323af6deaf70 (sched_idle_balance): a CPU running only
            // SCHED_IDLE tasks balances at the idle interval.
            let sched_idle = self.kernel.sched_idle_balance && self.sched_idle_rq(cpu);
            if idle != IdleType::Idle && !sched_idle {
                interval_ms *= d.busy_factor;
            }
            let interval =
                (interval_ms * self.kernel.hz as u64 / 1000).clamp(1, max_interval) * self.tick_ns;
            if !lb_cost {
                cont = true;
            }
            if j * self.tick_ns >= d.last_balance + interval {
                let snap = self.root_overload_snapshot(cpu, lvl);
                let r = self.load_balance(cpu, lvl, idle, false);
                self.root_overload_apply(snap, r.balance);
                cost += r.cost;
                cont = r.balance;
                if r.moved > 0 {
                    moved_total += r.moved;
                    idle = IdleType::NotIdle;
                }
                self.sd[cpu][lvl].last_balance = j * self.tick_ns;
            }
            let d = &self.sd[cpu][lvl];
            next_balance = next_balance.min(d.last_balance + interval);
            update = true;
            if !cont && !lb_cost {
                break;
            }
        }
        if lb_cost && need_decay {
            let b = &mut self.rqs[cpu].bal;
            b.max_idle_balance_cost = max_cost.max(self.kernel.migration_cost_ns);
        }
        if update {
            self.rqs[cpu].bal.next_balance = next_balance;
        }
        (moved_total, cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_avg_is_an_eighth_ewma() {
        assert_eq!(update_avg(1_000_000, 100_000), 887_500);
        assert_eq!(update_avg(0, 800), 100);
    }

    #[test]
    fn throttle_from_the_cap_needs_six_gaps_of_100us() {
        // Start at the 1 ms cap; gaps of 100 µs: how many until < 500 µs?
        let (mc, mut avg) = (500_000u64, 1_000_000u64);
        let mut n = 0;
        while avg >= mc {
            avg = avg_idle_sample(avg, 100_000, 2 * mc, false);
            n += 1;
        }
        // 100 + 900·(7/8)^n < 500 ⇔ n ≥ 6.07 → 7 samples, by hand:
        // 887500, 789062, 702929, 627562, 561616, 503914, 453424.
        assert_eq!(n, 7);
        assert_eq!(avg, 453_424);
    }

    #[test]
    fn a_long_gap_resets_to_the_cap() {
        assert_eq!(
            avg_idle_sample(120_000, 1_500_000, 1_000_000, false),
            1_000_000
        );
        // 3.13 order: EWMA first, then clamp.
        assert_eq!(
            avg_idle_sample(120_000, 1_500_000, 1_000_000, true),
            292_500
        );
    }
}
