//! The CFS runqueue and its entity operations, after `kernel/sched_fair.c`
//! (2.6.36) and `kernel/sched/fair.c` (3.8). One flat `cfs_rq` per CPU:
//! every `for_each_sched_entity` loop runs once. Task groups are modelled
//! by flattening (`sched::group`): a grouped task is queued here with its
//! hierarchical weight, not on a group `cfs_rq` of its own.
//!
//! The rbtree is a `Timeline` (`sched::fair::timeline`) keyed by `(vruntime,
//! insertion seq)`: equal vruntimes order by insertion, as the kernel's
//! "equal keys go right" rule does. Like the kernel, `curr` is *not* in the
//! tree while it runs.
//!
//! Under `pick = eevdf` (a runqueue with `eevdf` set) the same entry points
//! dispatch to `sched::fair::eevdf`, where the tree is keyed by virtual deadline.

pub mod eevdf;
pub mod minset;
pub mod tasklist;
pub mod timeline;
pub mod wakeup;
pub mod weights;

use crate::kernel::{Kernel, Pick, YieldImpl};
use crate::sched::fair::eevdf::EevdfParams;
use crate::sched::fair::minset::{MinVruntime, SliceCounts};
use crate::sched::fair::timeline::Timeline;
use crate::sched::fair::weights::{calc_delta_fair, calc_delta_mine};
use crate::sched::task::{DequeueFlags, EnqueueFlags, Policy, TaskId};

/// `struct sched_entity`, the fields CFS uses.
#[derive(Clone, Debug, Default)]
pub struct SchedEntity {
    pub weight: u64,
    pub inv_weight: u64,
    /// Absolute vruntime while queued or running; relative to the old
    /// `min_vruntime` between `task_waking_fair`/a non-sleep dequeue and the
    /// next enqueue (the kernel's normalisation for migration).
    pub vruntime: i64,
    pub exec_start: u64,
    pub sum_exec_runtime: u64,
    pub prev_sum_exec_runtime: u64,
    pub on_rq: bool,
    /// Tree key while in the tree: (vruntime, seq) under CFS, (deadline,
    /// seq) under EEVDF.
    pub(super) key: (i64, u64),
    // -- EEVDF (`sched::fair::eevdf`); unused under CFS --------------------------
    /// `se->deadline`: virtual deadline, vruntime + slice/w at the request's
    /// start. Relative to vruntime while `rel_deadline`.
    pub deadline: i64,
    /// `se->vlag`: V − v saved at dequeue, clamped by `entity_lag()`.
    pub vlag: i64,
    /// `se->slice`: the request size r_i in ns.
    pub slice: u64,
    /// `se->custom_slice` (sched_attr::sched_runtime, 6.12): `slice` is the
    /// task's own and is not reset to the base slice.
    pub custom_slice: bool,
    /// `se->sched_delayed` (DELAY_DEQUEUE): asleep but still queued.
    pub sched_delayed: bool,
    /// `se->rel_deadline` (PLACE_REL_DEADLINE).
    pub rel_deadline: bool,
    /// `se->vprot` (6.17; 6.6-6.16 kept it in `vlag`): slice protection
    /// lasts while vruntime < vprot.
    pub vprot: i64,
    /// The vruntime under which the entity sits in `CfsRq::by_vruntime`.
    pub(super) vkey: i64,
    /// `task_of(se)->policy`, which the fair class's wake-up preemption,
    /// buddies and `se_is_idle()` read.
    pub policy: Policy,
}

impl SchedEntity {
    pub fn new(weight: u64, inv_weight: u64) -> Self {
        SchedEntity {
            weight,
            inv_weight,
            ..Default::default()
        }
    }
}

/// CFS tunables after `update_sysctl()` scaling, plus the feature bits.
#[derive(Clone, Debug)]
pub struct FairParams {
    pub latency: u64,
    pub min_granularity: u64,
    pub wakeup_granularity: u64,
    /// `sched_nr_latency = DIV_ROUND_UP(latency, min_granularity)`.
    pub nr_latency: u32,
    pub gentle_fair_sleepers: bool,
    pub start_debit: bool,
    pub wakeup_preemption: bool,
    pub last_buddy: bool,
    pub next_buddy: bool,
    pub compat_yield: bool,
    pub yield_impl: YieldImpl,
    pub next_buddy_over_last: bool,
    pub preempt_sets_next_buddy: bool,
    /// `Kernel::idle_preempt_non_idle`: the order of the two policy tests.
    pub idle_preempt_non_idle: bool,
    /// `Some` under `pick = eevdf`.
    pub eevdf: Option<EevdfParams>,
}

impl FairParams {
    /// `update_sysctl()` (kernel/sched.c 2.6.36): scale the normalized
    /// tunables by the CPU-count factor.
    pub fn new(k: &Kernel, ncpus: usize) -> Self {
        let f = k.scaling_factor(ncpus);
        let latency = k.latency_ns * f;
        let min_granularity = k.min_granularity_ns * f;
        FairParams {
            latency,
            min_granularity,
            wakeup_granularity: k.wakeup_granularity_ns * f,
            nr_latency: latency.div_ceil(min_granularity) as u32,
            gentle_fair_sleepers: k.gentle_fair_sleepers,
            start_debit: k.start_debit,
            wakeup_preemption: k.wakeup_preemption,
            last_buddy: k.last_buddy,
            next_buddy: k.next_buddy,
            compat_yield: k.compat_yield,
            yield_impl: k.yield_impl,
            next_buddy_over_last: k.next_buddy_over_last,
            preempt_sets_next_buddy: k.preempt_sets_next_buddy,
            idle_preempt_non_idle: k.idle_preempt_non_idle,
            eevdf: (k.pick == Pick::Eevdf).then(|| EevdfParams::new(k, f)),
        }
    }
}

/// `struct cfs_rq`.
#[derive(Clone, Debug, Default)]
pub struct CfsRq {
    pub(super) tree: Timeline,
    pub(super) seq: u64,
    pub min_vruntime: i64,
    /// Σ weight of queued entities, `curr` included (`cfs_rq->load.weight`).
    pub load: u64,
    /// Queued entities, `curr` included (`cfs_rq->nr_running`).
    pub nr_running: u32,
    /// Queued SCHED_IDLE tasks (`cfs_rq->idle_h_nr_running`, 5.4; 6.13+
    /// `h_nr_idle`), kept by `activate_task()` and a completed dequeue.
    pub idle_h_nr_running: u32,
    pub curr: Option<TaskId>,
    pub next: Option<TaskId>,
    pub last: Option<TaskId>,
    pub skip: Option<TaskId>,
    // -- EEVDF (`sched::fair::eevdf`) ---------------------------------------------
    /// `Some` when this runqueue picks by EEVDF (set once at start-up).
    pub eevdf: Option<EevdfParams>,
    /// (vruntime, seq) of the queued entities (not `curr`), for the
    /// kernel's augmented `se->min_vruntime` of the tree's root.
    pub(super) by_vruntime: MinVruntime,
    /// Slices of the queued entities (multiset): the augmented
    /// `se->min_slice` of the root.
    pub(super) slices: SliceCounts,
    /// `cfs_rq->avg_vruntime`: Σ (v_i − min_vruntime)·w_i over the tree.
    pub avg_vruntime: i128,
    /// `cfs_rq->avg_load`: Σ w_i over the tree.
    pub avg_load: u64,
    /// `update_curr()` asked for `resched_curr()`; the core takes it.
    pub resched: bool,
}

/// `inv_weight` the kernel derives lazily for a summed load
/// (`calc_delta_mine`, 2.6.36).
fn lazy_inv_weight(w: u64) -> u64 {
    const WMULT_CONST: u64 = 1 << 32;
    if w >= WMULT_CONST {
        1
    } else {
        1 + (WMULT_CONST - w / 2) / (w + 1)
    }
}

impl CfsRq {
    pub fn leftmost(&self) -> Option<TaskId> {
        self.tree.first().map(|e| e.2)
    }

    fn second(&self) -> Option<TaskId> {
        self.tree.second().map(|e| e.2)
    }

    pub fn rightmost(&self) -> Option<TaskId> {
        self.tree.last().map(|e| e.2)
    }

    /// Queued tasks not running, leftmost first.
    pub fn queued(&self) -> impl Iterator<Item = TaskId> + '_ {
        self.tree.iter().map(|e| e.2)
    }

    fn insert(&mut self, id: TaskId, se: &mut SchedEntity) {
        if self.eevdf.is_some() {
            return self.enqueue_eevdf(id, se);
        }
        self.seq += 1;
        se.key = (se.vruntime, self.seq);
        self.tree.insert((se.key.0, se.key.1, id));
    }

    fn remove(&mut self, id: TaskId, se: &SchedEntity) {
        if self.eevdf.is_some() {
            return self.dequeue_eevdf(id, se);
        }
        let removed = self.tree.remove(&(se.key.0, se.key.1, id));
        debug_assert!(removed, "entity {id} not in the tree");
    }

    /// `update_curr()`: charge the running entity for the time since its
    /// `exec_start`, advance its vruntime, then `update_min_vruntime()`.
    /// Returns the wall time charged.
    #[inline(always)]
    pub fn update_curr(&mut self, ses: &mut [SchedEntity], now: u64) -> u64 {
        if self.eevdf.is_some() {
            return self.update_curr_eevdf(ses, now);
        }
        let Some((_, delta)) = self.charge_curr(ses, now) else {
            return 0;
        };
        self.update_min_vruntime(ses);
        delta
    }

    /// The charge common to CFS's and EEVDF's `update_curr()`: the wall time
    /// since `curr`'s `exec_start` into its `sum_exec_runtime`, and its
    /// vruntime advanced by `calc_delta_fair()`. `None` when there is no
    /// `curr` or no time has passed; else `curr` and the time charged.
    #[inline]
    pub(super) fn charge_curr(&self, ses: &mut [SchedEntity], now: u64) -> Option<(TaskId, u64)> {
        let c = self.curr?;
        let se = &mut ses[c as usize];
        let delta = now.saturating_sub(se.exec_start);
        if delta == 0 {
            return None;
        }
        se.exec_start = now;
        se.sum_exec_runtime += delta;
        se.vruntime += calc_delta_fair(delta, se.weight, se.inv_weight) as i64;
        Some((c, delta))
    }

    /// `update_min_vruntime()`: monotonic, follows min(curr, leftmost).
    #[inline]
    pub fn update_min_vruntime(&mut self, ses: &[SchedEntity]) {
        let mut v = self.min_vruntime;
        if let Some(c) = self.curr {
            v = ses[c as usize].vruntime;
        }
        if let Some(&(lv, _, _)) = self.tree.first() {
            v = if self.curr.is_some() { v.min(lv) } else { lv };
        }
        self.min_vruntime = self.min_vruntime.max(v);
    }

    /// `__sched_period(nr_running)`.
    pub fn sched_period(p: &FairParams, nr_running: u32) -> u64 {
        if nr_running > p.nr_latency {
            p.min_granularity * nr_running as u64
        } else {
            p.latency
        }
    }

    /// `sched_slice(cfs_rq, se)`: the entity's share of the period; an entity
    /// not yet queued is counted as if it were.
    pub fn sched_slice(&self, p: &FairParams, se: &SchedEntity) -> u64 {
        let (nr, load) = if se.on_rq {
            (self.nr_running, self.load)
        } else {
            (self.nr_running + 1, self.load + se.weight)
        };
        let period = Self::sched_period(p, nr);
        calc_delta_mine(period, se.weight, load, lazy_inv_weight(load))
    }

    /// `sched_vslice()`: the slice in the entity's virtual time.
    pub fn sched_vslice(&self, p: &FairParams, se: &SchedEntity) -> u64 {
        calc_delta_fair(self.sched_slice(p, se), se.weight, se.inv_weight)
    }

    /// `place_entity(cfs_rq, se, initial)`: START_DEBIT for new tasks, a
    /// sleeper credit of latency (halved with GENTLE_FAIR_SLEEPERS) for
    /// wakeups; never moves an entity backwards.
    pub fn place_entity(&self, p: &FairParams, se: &mut SchedEntity, initial: bool) {
        let mut v = self.min_vruntime;
        if initial && p.start_debit {
            v += self.sched_vslice(p, se) as i64;
        }
        if !initial {
            let mut thresh = p.latency;
            if p.gentle_fair_sleepers {
                thresh >>= 1;
            }
            v -= thresh as i64;
        }
        se.vruntime = se.vruntime.max(v);
    }

    /// `enqueue_entity()` (2.6.36): un-normalise, account, place a waking
    /// sleeper, insert unless it is `curr`.
    #[inline]
    pub fn enqueue_entity(
        &mut self,
        p: &FairParams,
        ses: &mut [SchedEntity],
        id: TaskId,
        flags: EnqueueFlags,
        now: u64,
    ) {
        if self.eevdf.is_some() {
            return self.enqueue_entity_eevdf(ses, id, flags, now);
        }
        if !flags.wakeup || flags.waking {
            ses[id as usize].vruntime += self.min_vruntime;
        }
        self.update_curr(ses, now);
        let se = &mut ses[id as usize];
        self.load += se.weight;
        self.nr_running += 1;
        se.on_rq = true;
        if flags.wakeup {
            self.place_entity(p, se, false);
        }
        if self.curr != Some(id) {
            self.insert(id, se);
        }
    }

    /// `reweight_entity()` (kernel/sched/fair.c, 2.6.36-6.5): commit
    /// `curr`'s runtime, move the load; the vruntime (the tree key) stays.
    /// Under EEVDF, `reweight_entity_eevdf`.
    pub fn reweight_entity(
        &mut self,
        ses: &mut [SchedEntity],
        id: TaskId,
        weight: u64,
        inv_weight: u64,
        now: u64,
    ) {
        if self.eevdf.is_some() {
            return self.reweight_entity_eevdf(ses, id, weight, inv_weight, now);
        }
        let on_rq = ses[id as usize].on_rq;
        if on_rq {
            if self.curr == Some(id) {
                self.update_curr(ses, now);
            }
            self.load -= ses[id as usize].weight;
        }
        let se = &mut ses[id as usize];
        se.weight = weight;
        se.inv_weight = inv_weight;
        if on_rq {
            self.load += weight;
        }
    }

    /// `dequeue_entity()`: a sleeping entity keeps its absolute vruntime;
    /// any other (migration) is normalised against `min_vruntime`.
    #[inline]
    pub fn dequeue_entity(&mut self, ses: &mut [SchedEntity], id: TaskId, sleep: bool, now: u64) {
        if self.eevdf.is_some() {
            let flags = DequeueFlags {
                sleep,
                ..Default::default()
            };
            self.dequeue_entity_eevdf(ses, id, flags, now);
            return;
        }
        self.update_curr(ses, now);
        self.clear_buddies(id);
        let se = &mut ses[id as usize];
        if self.curr != Some(id) {
            self.remove(id, se);
        }
        self.load -= se.weight;
        self.nr_running -= 1;
        se.on_rq = false;
        self.update_min_vruntime(ses);
        if !sleep {
            ses[id as usize].vruntime -= self.min_vruntime;
        }
    }

    /// `clear_buddies()`: forget `id` wherever it is a buddy.
    pub fn clear_buddies(&mut self, id: TaskId) {
        for b in [&mut self.next, &mut self.last, &mut self.skip] {
            if *b == Some(id) {
                *b = None;
            }
        }
    }

    /// `wakeup_preempt_entity(curr, se)`: −1 if `se` is not left of `curr`,
    /// 1 if it is further left than the wakeup granularity (in `se`'s
    /// virtual time), else 0.
    pub fn wakeup_preempt_entity(p: &FairParams, curr: &SchedEntity, se: &SchedEntity) -> i32 {
        let vdiff = curr.vruntime - se.vruntime;
        if vdiff <= 0 {
            return -1;
        }
        let gran = calc_delta_fair(p.wakeup_granularity, se.weight, se.inv_weight) as i64;
        if vdiff > gran {
            1
        } else {
            0
        }
    }

    /// `pick_next_entity()`: the leftmost entity unless a buddy is within
    /// the wakeup granularity of it. The skip buddy (`yield_impl =
    /// skip_buddy`, ac53db596cc0) is avoided first; then 2.6.36 tests `next`
    /// then `last` (last wins), and with `next_buddy_over_last`
    /// (ac53db596cc0, 2.6.39) `last` then `next` (next wins).
    #[inline]
    pub fn pick_next_entity(&mut self, p: &FairParams, ses: &[SchedEntity]) -> Option<TaskId> {
        let left = self.leftmost()?;
        let mut se = left;
        let ok =
            |b: TaskId| Self::wakeup_preempt_entity(p, &ses[b as usize], &ses[left as usize]) < 1;
        // The skip buddy exists only under `yield_impl = skip_buddy`.
        if self.skip == Some(se) {
            if let Some(second) = self.second().filter(|&s| ok(s)) {
                se = second;
            }
        }
        let (first, then) = if p.next_buddy_over_last {
            (self.last, self.next)
        } else {
            (self.next, self.last)
        };
        for b in [first, then].into_iter().flatten() {
            if ok(b) {
                se = b;
            }
        }
        self.clear_buddies(se);
        Some(se)
    }

    /// `set_next_entity()`: take `id` out of the tree and make it `curr`.
    #[inline]
    pub fn set_next_entity(&mut self, ses: &mut [SchedEntity], id: TaskId, now: u64) {
        if self.eevdf.is_some() {
            return self.set_next_entity_eevdf(ses, id, now);
        }
        let se = &mut ses[id as usize];
        if se.on_rq {
            self.remove(id, se);
        }
        se.exec_start = now;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
        self.curr = Some(id);
    }

    /// `put_prev_entity()`: the previous `curr` goes back into the tree if
    /// it is still runnable.
    #[inline]
    pub fn put_prev_entity(&mut self, ses: &mut [SchedEntity], now: u64) {
        let Some(c) = self.curr else { return };
        if ses[c as usize].on_rq {
            self.update_curr(ses, now);
            let se = &mut ses[c as usize];
            self.insert(c, se);
        }
        self.curr = None;
    }

    /// `check_preempt_tick()` (2.6.36; 3.8 only adds an explicit negative
    /// check with the same outcome): true when `curr` should be rescheduled.
    pub fn check_preempt_tick(&mut self, p: &FairParams, ses: &[SchedEntity]) -> bool {
        let Some(c) = self.curr else { return false };
        let curr = &ses[c as usize];
        let ideal = self.sched_slice(p, curr);
        let delta_exec = curr.sum_exec_runtime - curr.prev_sum_exec_runtime;
        if delta_exec > ideal {
            self.clear_buddies(c);
            return true;
        }
        if !p.wakeup_preemption || delta_exec < p.min_granularity {
            return false;
        }
        if self.nr_running > 1 {
            if let Some(l) = self.leftmost() {
                let delta = curr.vruntime - ses[l as usize].vruntime;
                if delta > ideal as i64 {
                    return true;
                }
            }
        }
        false
    }

    /// `check_preempt_wakeup()` for a woken (or forked) `p` against `curr`;
    /// sets buddies as the version does. True when `curr` should be
    /// rescheduled. `curr_need_resched` mirrors `test_tsk_need_resched(curr)`.
    #[inline]
    pub fn check_preempt_wakeup(
        &mut self,
        p: &FairParams,
        ses: &mut [SchedEntity],
        wakee: TaskId,
        fork: bool,
        curr_need_resched: bool,
        now: u64,
    ) -> bool {
        let Some(c) = self.curr else { return true };
        if c == wakee {
            return false;
        }
        let scale = self.nr_running >= p.nr_latency;
        let mut next_marked = false;
        // set_next_buddy()/set_last_buddy() skip SCHED_IDLE tasks.
        let wakee_idle = ses[wakee as usize].policy == Policy::Idle;
        if p.next_buddy && scale && !fork && !wakee_idle {
            self.next = Some(wakee);
            next_marked = true;
        }
        if curr_need_resched {
            return false;
        }
        let curr_policy = ses[c as usize].policy;
        let wakee_normal = ses[wakee as usize].policy == Policy::Normal;
        if p.idle_preempt_non_idle {
            // 5.x: "Idle tasks are by definition preempted by non-idle
            // tasks" (the preempt label: no last buddy for an idle curr),
            // then "Batch and idle tasks do not preempt non-idle tasks".
            if curr_policy == Policy::Idle && !wakee_idle {
                return true;
            }
            if !wakee_normal || !p.wakeup_preemption {
                return false;
            }
        } else {
            // 2.6.36-4.x: "Batch and idle tasks do not preempt (their
            // preemption is driven by the tick)", then "Idle tasks are by
            // definition preempted by everybody", then WAKEUP_PREEMPT.
            if !wakee_normal {
                return false;
            }
            if curr_policy == Policy::Idle {
                return true;
            }
            if !p.wakeup_preemption {
                return false;
            }
        }
        self.update_curr(ses, now);
        if Self::wakeup_preempt_entity(p, &ses[c as usize], &ses[wakee as usize]) != 1 {
            return false;
        }
        if p.preempt_sets_next_buddy && !next_marked {
            self.next = Some(wakee);
        }
        if p.last_buddy && scale && ses[c as usize].on_rq && curr_policy != Policy::Idle {
            self.last = Some(c);
        }
        true
    }

    /// `yield_task_fair()`. 2.6.36: with `compat_yield` the yielder goes
    /// right of the rightmost entity, *without* `update_curr()` (the runtime
    /// since `exec_start` lands on top at `put_prev_entity()`); without
    /// `compat_yield`, only `update_curr()`.
    /// 2.6.39+/3.8 (`YieldImpl::SkipBuddy`): mark it the skip buddy.
    /// `compat_yield` wins over the skip buddy when both are set.
    pub fn yield_task_fair(&mut self, p: &FairParams, ses: &mut [SchedEntity], now: u64) {
        if self.eevdf.is_some() {
            return self.yield_task_eevdf(ses, now);
        }
        let Some(c) = self.curr else { return };
        if self.nr_running == 1 {
            return;
        }
        self.clear_buddies(c);
        // 2.6.36: a SCHED_BATCH yielder always takes the compat path.
        let batch =
            p.yield_impl == YieldImpl::UpdateCurr && ses[c as usize].policy == Policy::Batch;
        if p.compat_yield || batch {
            if let Some(r) = self.rightmost() {
                let rv = ses[r as usize].vruntime;
                if rv >= ses[c as usize].vruntime {
                    ses[c as usize].vruntime = rv + 1;
                }
            }
            return;
        }
        // 2.6.39+: "if (curr->policy != SCHED_BATCH)" update_curr() (a
        // batch yielder's runtime is charged at the next put_prev_entity()).
        if !(p.yield_impl == YieldImpl::SkipBuddy && ses[c as usize].policy == Policy::Batch) {
            self.update_curr(ses, now);
        }
        if p.yield_impl == YieldImpl::SkipBuddy {
            self.skip = Some(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::fair::weights::nice_weight;

    fn params() -> FairParams {
        FairParams::new(&Kernel::v2_6_36(), 1)
    }

    fn ents(nices: &[i32]) -> Vec<SchedEntity> {
        nices
            .iter()
            .map(|&n| {
                let (w, i) = nice_weight(n);
                SchedEntity::new(w, i)
            })
            .collect()
    }

    #[test]
    fn period_and_slice_follow_nr_latency() {
        let p = params();
        assert_eq!(p.nr_latency, 8);
        assert_eq!(CfsRq::sched_period(&p, 8), 6_000_000);
        assert_eq!(CfsRq::sched_period(&p, 9), 9 * 750_000);
        let mut rq = CfsRq::default();
        let mut ses = ents(&[0, 0]);
        rq.enqueue_entity(&p, &mut ses, 0, EnqueueFlags::default(), 0);
        rq.enqueue_entity(&p, &mut ses, 1, EnqueueFlags::default(), 0);
        let s = rq.sched_slice(&p, &ses[0]);
        // The kernel's lazy inverse weight of a summed load is approximate.
        assert!((s as i64 - 3_000_000).abs() < 3_000, "{s}");
    }

    #[test]
    fn sleeper_credit_is_half_latency() {
        let p = params();
        let mut rq = CfsRq {
            min_vruntime: 10_000_000,
            ..Default::default()
        };
        let mut ses = ents(&[0]);
        ses[0].vruntime = 0; // long asleep
        rq.enqueue_entity(
            &p,
            &mut ses,
            0,
            EnqueueFlags {
                wakeup: true,
                ..Default::default()
            },
            0,
        );
        assert_eq!(ses[0].vruntime, 10_000_000 - 3_000_000);
    }

    #[test]
    fn compat_yield_moves_to_the_right() {
        let mut p = params();
        p.compat_yield = true;
        let mut rq = CfsRq::default();
        let mut ses = ents(&[0, 0]);
        rq.enqueue_entity(&p, &mut ses, 0, EnqueueFlags::default(), 0);
        rq.enqueue_entity(&p, &mut ses, 1, EnqueueFlags::default(), 0);
        let first = rq.pick_next_entity(&p, &ses).unwrap();
        rq.set_next_entity(&mut ses, first, 0);
        let other = 1 - first;
        rq.yield_task_fair(&p, &mut ses, 100);
        assert_eq!(
            ses[first as usize].vruntime,
            ses[other as usize].vruntime + 1
        );
        // As in 2.6.36, the 100 ns run since exec_start is charged on top
        // when the yielder is put back, not swallowed by the move.
        rq.put_prev_entity(&mut ses, 100);
        assert_eq!(
            ses[first as usize].vruntime,
            ses[other as usize].vruntime + 1 + 100
        );
    }
}
