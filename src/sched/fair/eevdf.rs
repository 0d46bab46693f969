//! EEVDF, the fair class's pick since 6.6 (147f3efaa241 "sched/fair:
//! Implement an EEVDF-like scheduling policy"), after `kernel/sched/fair.c`
//! of 6.6 and 6.12 (read from the Debian 6.12 source) and the 6.17 slice
//! protection (Vincent Guittot's series, 052c3d87c82e and neighbours) that
//! 6.18 carries. The entity operations are methods of [`CfsRq`]; `fair.rs`
//! dispatches to them when the runqueue's `eevdf` is set.
//!
//! Quantities, as in the kernel:
//! - V, `avg_vruntime()`: the load-weighted mean vruntime of the queued
//!   entities and `curr`, kept as Σ (v_i − min_vruntime)·w_i and Σ w_i
//!   relative to `cfs_rq->min_vruntime` (the 6.6–6.18 reference; the 2025
//!   "zero_vruntime" re-reference, 79f3f9bedd14, changes only the integer
//!   rounding of V by at most 1 ns per call and is not modelled);
//! - lag: vlag_i = V − v_i, clamped to ±max(2·slice, TICK_NSEC)/w_i;
//! - eligible: v_i ≤ V (`vruntime_eligible()`, without the division);
//! - deadline: vd_i = v_i + slice_i/w_i at the start of each request.
//!
//! Simplifications:
//! - no task groups (one flat cfs_rq), no `reweight_eevdf()` (nice is fixed),
//!   no PELT, no cgroup `min_slice` propagation;
//! - the augmented rbtree (sorted by deadline, each node holding its
//!   subtree's `min_vruntime` and `min_slice`) is a `Timeline`
//!   (`sched::fair::timeline`) by (deadline, seq), with the root's two minima
//!   kept beside it (`sched::fair::minset`: the smallest vruntime, the smallest
//!   slice): `pick_eevdf()` walks the deadline order to the first
//!   eligible entity, O(log n + k) for k ineligible entities with earlier deadlines (the
//!   kernel's heap search is O(log n)); the result is the same entity
//!   (earliest eligible deadline, ties by insertion order);
//! - Σ (v_i − min_vruntime)·w_i is an `i128` (the kernel's `s64`, with no
//!   overflow to mirror);
//! - weights are `scale_load_down()` weights (1024 for nice 0), as the
//!   kernel's `avg_vruntime` uses.

use crate::sched::fair::{CfsRq, SchedEntity};

use crate::kernel::Kernel;
use crate::sched::fair::weights::calc_delta_fair;
use crate::sched::task::Policy;
use crate::sched::task::{DequeueFlags, EnqueueFlags, TaskId};

/// The EEVDF tunables (after `update_sysctl()` scaling) and feature bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EevdfParams {
    /// `sysctl_sched_base_slice` = base_slice_ns × the tunable-scaling factor.
    pub base_slice: u64,
    /// `normalized_sysctl_sched_base_slice` = base_slice_ns.
    pub normalized_base_slice: u64,
    /// `TICK_NSEC`, the floor of the lag limit.
    pub tick_ns: u64,
    pub place_lag: bool,
    pub place_deadline_initial: bool,
    pub run_to_parity: bool,
    pub preempt_short: bool,
    pub delay_dequeue: bool,
    pub delay_zero: bool,
    pub place_rel_deadline: bool,
    pub run_to_parity_min_slice: bool,
    pub yield_forfeit: bool,
    /// NEXT_BUDDY: a wakee becomes `cfs_rq->next`, which `pick_next_entity()`
    /// takes if it is eligible (6.12: PICK_BUDDY, on by default).
    pub next_buddy: bool,
    pub wakeup_preemption: bool,
}

impl EevdfParams {
    /// `update_sysctl()` (6.x): only `sched_base_slice` is scaled, by the
    /// same factor as CFS's times (1 + ilog2(min(ncpus, 8)) under LOG).
    pub fn new(k: &Kernel, factor: u64) -> Self {
        EevdfParams {
            base_slice: k.base_slice_ns * factor,
            normalized_base_slice: k.base_slice_ns,
            tick_ns: 1_000_000_000 / k.hz as u64,
            place_lag: k.place_lag,
            place_deadline_initial: k.place_deadline_initial,
            run_to_parity: k.run_to_parity,
            preempt_short: k.preempt_short,
            delay_dequeue: k.delay_dequeue,
            delay_zero: k.delay_zero,
            place_rel_deadline: k.place_rel_deadline,
            run_to_parity_min_slice: k.run_to_parity_min_slice,
            yield_forfeit: k.yield_forfeit,
            next_buddy: k.next_buddy,
            wakeup_preemption: k.wakeup_preemption,
        }
    }
}

/// `div_s64()`: truncation toward zero. Operands that fit in 64 bits (the
/// usual case) take the 64-bit division, which truncates the same way (and
/// cannot overflow: the divisor, a load, is positive) but costs a fraction
/// of the 128-bit one.
fn div_s64(a: i128, b: i128) -> i128 {
    match (i64::try_from(a), i64::try_from(b)) {
        (Ok(a64), Ok(b64)) if b64 > 0 => (a64 / b64) as i128,
        _ => a / b,
    }
}

/// `key · weight` as an `i128`, through one widening signed multiply: a
/// weight or a runqueue's sum of weights is below 2⁶³ (each weight is at
/// most 2¹⁸), so its `i64` is its value.
#[inline(always)]
fn wmul(key: i64, weight: u64) -> i128 {
    key as i128 * weight as i64 as i128
}

/// `vruntime_eligible()`'s Σ (v_j − v0)·w_j and Σ w_j over the tree and a
/// queued `curr`, with v0 = `min_vruntime`. Σ w_j is an `i64`: a sum of
/// at most 2³² weights, each at most 2¹⁸ (nice −20's 88,761, or
/// `MAX_SHARES` through a task group), stays below 2⁵⁰; an `i64` factor
/// lets the product be one widening multiply.
#[derive(Clone, Copy, Debug)]
struct Eligibility {
    avg: i128,
    load: i64,
    min_vruntime: i64,
}

impl Eligibility {
    /// Σ (v_j − v0)·w_j ≥ (v − v0)·Σ w_j.
    #[inline]
    fn eligible(&self, vruntime: i64) -> bool {
        self.avg >= (vruntime - self.min_vruntime) as i128 * self.load as i128
    }
}

impl CfsRq {
    fn ep(&self) -> EevdfParams {
        self.eevdf.expect("an EEVDF runqueue")
    }

    /// `entity_key()`: v_i − min_vruntime.
    fn entity_key(&self, se: &SchedEntity) -> i64 {
        se.vruntime - self.min_vruntime
    }

    /// `curr` if it is still queued (`curr && curr->on_rq`).
    fn curr_on_rq<'a>(&self, ses: &'a [SchedEntity]) -> Option<(TaskId, &'a SchedEntity)> {
        self.curr
            .map(|c| (c, &ses[c as usize]))
            .filter(|(_, se)| se.on_rq)
    }

    /// `__enqueue_entity()`: into the tree, `avg_vruntime_add()`.
    pub(super) fn enqueue_eevdf(&mut self, id: TaskId, se: &mut SchedEntity) {
        self.seq += 1;
        se.key = (se.deadline, self.seq);
        se.vkey = se.vruntime;
        self.tree.insert((se.deadline, self.seq, id));
        self.by_vruntime.insert(se.vruntime, self.seq);
        self.slices.add(se.slice);
        self.avg_vruntime += wmul(self.entity_key(se), se.weight);
        self.avg_load += se.weight;
    }

    /// `__dequeue_entity()`: out of the tree, `avg_vruntime_sub()`.
    pub(super) fn dequeue_eevdf(&mut self, id: TaskId, se: &SchedEntity) {
        let removed = self.tree.remove(&(se.key.0, se.key.1, id));
        debug_assert!(removed, "entity {id} not in the tree");
        self.by_vruntime.remove(se.vkey, se.key.1);
        self.slices.remove(se.slice);
        self.avg_vruntime -= wmul(self.entity_key(se), se.weight);
        self.avg_load -= se.weight;
    }

    /// `avg_vruntime()` (6.6 with 650cad561cce's floor): V = min_vruntime +
    /// ⌊Σ key·w / Σ w⌋ over the tree and `curr`, rounded down so that an
    /// entity at V is eligible.
    pub fn avg_vruntime(&self, ses: &[SchedEntity]) -> i64 {
        let Eligibility { mut avg, load, .. } = self.eligibility(ses);
        let load = load as i128;
        if load > 0 {
            if avg < 0 {
                avg -= load - 1;
            }
            avg = div_s64(avg, load);
        }
        self.min_vruntime + avg as i64
    }

    /// `vruntime_eligible()`: lag ≥ 0, i.e. Σ (v_j − v0)·w_j ≥ (v − v0)·Σ w_j
    /// (no division, so no rounding).
    pub fn vruntime_eligible(&self, ses: &[SchedEntity], vruntime: i64) -> bool {
        self.eligibility(ses).eligible(vruntime)
    }

    /// The sums `vruntime_eligible()` compares against (and `avg_vruntime()`
    /// divides), taken once for several entities (they do not change while
    /// the tree is only read).
    fn eligibility(&self, ses: &[SchedEntity]) -> Eligibility {
        let mut avg = self.avg_vruntime;
        let mut load = self.avg_load;
        if let Some((_, c)) = self.curr_on_rq(ses) {
            avg += wmul(self.entity_key(c), c.weight);
            load += c.weight;
        }
        Eligibility {
            avg,
            load: load as i64,
            min_vruntime: self.min_vruntime,
        }
    }

    /// `entity_eligible()`.
    pub fn entity_eligible(&self, ses: &[SchedEntity], id: TaskId) -> bool {
        self.vruntime_eligible(ses, ses[id as usize].vruntime)
    }

    /// `entity_lag()`: V − v, clamped to ±`calc_delta_fair(max(2·slice,
    /// TICK_NSEC))`.
    fn entity_lag(&self, avruntime: i64, se: &SchedEntity) -> i64 {
        let vlag = avruntime - se.vruntime;
        let limit = calc_delta_fair(
            (2 * se.slice).max(self.ep().tick_ns),
            se.weight,
            se.inv_weight,
        ) as i64;
        vlag.clamp(-limit, limit)
    }

    /// `update_entity_lag()`: save V − v in `se->vlag` before a dequeue.
    fn update_entity_lag(&self, ses: &mut [SchedEntity], id: TaskId) {
        let v = self.avg_vruntime(ses);
        let lag = self.entity_lag(v, &ses[id as usize]);
        ses[id as usize].vlag = lag;
    }

    /// `cfs_rq_min_slice()`: the smallest slice of `curr` and the tree
    /// (`u64::MAX` if none).
    fn cfs_rq_min_slice(&self, ses: &[SchedEntity]) -> u64 {
        let mut m = u64::MAX;
        if let Some((_, c)) = self.curr_on_rq(ses) {
            m = c.slice;
        }
        if let Some(s) = self.slices.min() {
            m = m.min(s);
        }
        m
    }

    /// `update_min_vruntime()` (6.6–6.18): follows min(curr if queued, the
    /// tree's smallest vruntime), never backwards; moving the reference
    /// shifts `avg_vruntime` by −Δ·avg_load (`avg_vruntime_update()`).
    fn update_min_vruntime_eevdf(&mut self, ses: &[SchedEntity]) {
        let mut v = self.min_vruntime;
        let curr = self.curr_on_rq(ses).map(|(_, c)| c.vruntime);
        if let Some(cv) = curr {
            v = cv;
        }
        if let Some(tv) = self.by_vruntime.min() {
            v = if curr.is_some() { v.min(tv) } else { tv };
        }
        let delta = v - self.min_vruntime;
        if delta > 0 {
            self.avg_vruntime -= wmul(delta, self.avg_load);
            self.min_vruntime = v;
        }
    }

    /// `update_deadline()` (6.6; 6.12 keeps a custom slice): once vruntime
    /// reaches the deadline, a new request of `slice` starts:
    /// vd = v + slice/w. True when the request was used up.
    fn update_deadline(&self, se: &mut SchedEntity) -> bool {
        if se.vruntime < se.deadline {
            return false;
        }
        if !se.custom_slice {
            se.slice = self.ep().base_slice;
        }
        se.deadline = se.vruntime + calc_delta_fair(se.slice, se.weight, se.inv_weight) as i64;
        true
    }

    /// `protect_slice()`: the running entity is inside its protected run.
    pub fn protect_slice(se: &SchedEntity) -> bool {
        se.vruntime < se.vprot
    }

    /// `cancel_protect_slice()`.
    fn cancel_protect_slice(se: &mut SchedEntity) {
        if Self::protect_slice(se) {
            se.vprot = se.vruntime;
        }
    }

    /// `set_protect_slice()` at pick. 6.6–6.16 (RUN_TO_PARITY's "HACK":
    /// `se->vlag = se->deadline`): protected until the deadline. 6.17
    /// (`run_to_parity_min_slice`): until min(deadline, v + the smallest
    /// slice queued / w), or without RUN_TO_PARITY the unscaled base slice.
    fn set_protect_slice(&self, ses: &mut [SchedEntity], id: TaskId) {
        let ep = self.ep();
        let mut vprot = ses[id as usize].deadline;
        if ep.run_to_parity_min_slice {
            let mut slice = if ep.run_to_parity {
                self.cfs_rq_min_slice(ses)
            } else {
                ep.normalized_base_slice
            };
            let se = &ses[id as usize];
            slice = slice.min(se.slice);
            if slice != se.slice {
                vprot = vprot
                    .min(se.vruntime + calc_delta_fair(slice, se.weight, se.inv_weight) as i64);
            }
        }
        ses[id as usize].vprot = vprot;
    }

    /// `update_protect_slice()` (6.17): a shorter slice queued shortens the
    /// running entity's protection.
    fn update_protect_slice(&self, ses: &mut [SchedEntity], id: TaskId) {
        let slice = self.cfs_rq_min_slice(ses);
        let se = &mut ses[id as usize];
        if slice != u64::MAX {
            let v = se.vruntime + calc_delta_fair(slice, se.weight, se.inv_weight) as i64;
            se.vprot = se.vprot.min(v);
        }
    }

    /// `update_curr()` (6.6–6.18): charge `curr`, advance its vruntime,
    /// `update_deadline()`, `update_min_vruntime()`; with others queued,
    /// ask for a reschedule (`self.resched`) when the request is used up,
    /// or — 6.12 PREEMPT_SHORT's `did_preempt_short()` — when protection was
    /// cancelled and `curr` is no longer eligible, or — 6.17 — whenever the
    /// protection has ended.
    pub(super) fn update_curr_eevdf(&mut self, ses: &mut [SchedEntity], now: u64) -> u64 {
        let Some((c, delta)) = self.charge_curr(ses, now) else {
            return 0;
        };
        let resched = self.update_deadline(&mut ses[c as usize]);
        self.update_min_vruntime_eevdf(ses);
        if self.nr_running == 1 {
            return delta;
        }
        let ep = self.ep();
        let se = &ses[c as usize];
        let extra = if ep.run_to_parity_min_slice {
            !Self::protect_slice(se)
        } else {
            ep.preempt_short && !Self::protect_slice(se) && !self.entity_eligible(ses, c)
        };
        if resched || extra {
            self.resched = true;
            self.clear_buddies(c);
        }
        delta
    }

    /// `place_entity()` (6.6; PLACE_REL_DEADLINE 6.12): start a request at
    /// V − lag, where the saved lag is inflated by (W + w)/W so that it
    /// survives the entity's own effect on V (PLACE_LAG); deadline = v +
    /// slice/w, half a slice for a new task (PLACE_DEADLINE_INITIAL), or the
    /// kept relative deadline after a migration (PLACE_REL_DEADLINE).
    pub fn place_entity_eevdf(&self, ses: &mut [SchedEntity], id: TaskId, initial: bool) {
        let ep = self.ep();
        let v = self.avg_vruntime(ses);
        let curr_w = self.curr_on_rq(ses).map_or(0, |(_, c)| c.weight);
        let se = &mut ses[id as usize];
        if !se.custom_slice {
            se.slice = ep.base_slice;
        }
        let mut vslice = calc_delta_fair(se.slice, se.weight, se.inv_weight) as i64;
        let mut lag: i128 = 0;
        if ep.place_lag && self.nr_running > 0 {
            lag = se.vlag as i128;
            let mut load = (self.avg_load + curr_w) as i128;
            lag *= load + se.weight as i128;
            if load == 0 {
                load = 1;
            }
            lag = div_s64(lag, load);
        }
        se.vruntime = v - lag as i64;
        if ep.place_rel_deadline && se.rel_deadline {
            se.deadline += se.vruntime;
            se.rel_deadline = false;
            return;
        }
        if ep.place_deadline_initial && initial {
            vslice /= 2;
        }
        se.deadline = se.vruntime + vslice;
    }

    /// `enqueue_entity()` (6.6–6.18): `place_entity()` every time (the lag
    /// carries the entity's position; no min_vruntime normalisation),
    /// account, insert unless it is `curr`.
    pub(super) fn enqueue_entity_eevdf(
        &mut self,
        ses: &mut [SchedEntity],
        id: TaskId,
        flags: EnqueueFlags,
        now: u64,
    ) {
        let is_curr = self.curr == Some(id);
        if is_curr {
            self.place_entity_eevdf(ses, id, flags.initial);
        }
        self.update_curr_eevdf(ses, now);
        if !is_curr {
            self.place_entity_eevdf(ses, id, flags.initial);
        }
        let se = &mut ses[id as usize];
        self.load += se.weight;
        self.nr_running += 1;
        if !is_curr {
            self.enqueue_eevdf(id, se);
        }
        se.on_rq = true;
    }

    /// `reweight_entity()` (6.13-6.18, with `place_entity()`): commit
    /// `curr`, save the lag, take the entity out, scale its saved lag and
    /// relative deadline by old/new weight (lag_i = w_i·vlag_i is kept),
    /// place it again and put it back.
    pub(super) fn reweight_entity_eevdf(
        &mut self,
        ses: &mut [SchedEntity],
        id: TaskId,
        weight: u64,
        inv_weight: u64,
        now: u64,
    ) {
        let is_curr = self.curr == Some(id);
        let on_rq = ses[id as usize].on_rq;
        if on_rq {
            self.update_curr_eevdf(ses, now);
            self.update_entity_lag(ses, id);
            let se = &mut ses[id as usize];
            se.deadline -= se.vruntime;
            se.rel_deadline = true;
            self.nr_running -= 1;
            if !is_curr {
                self.dequeue_eevdf(id, se);
            }
            self.load -= se.weight;
        }
        let se = &mut ses[id as usize];
        let old = se.weight as i128;
        se.vlag = div_s64(se.vlag as i128 * old, weight as i128) as i64;
        if se.rel_deadline {
            se.deadline = div_s64(se.deadline as i128 * old, weight as i128) as i64;
        }
        se.weight = weight;
        se.inv_weight = inv_weight;
        if on_rq {
            // place_entity(cfs_rq, se, 0) restores the relative deadline
            // only under PLACE_REL_DEADLINE; otherwise it starts a request.
            self.place_entity_eevdf(ses, id, false);
            let se = &mut ses[id as usize];
            se.rel_deadline = false;
            self.load += se.weight;
            if !is_curr {
                self.enqueue_eevdf(id, se);
            }
            self.nr_running += 1;
            self.update_min_vruntime_eevdf(ses);
        }
    }

    /// `dequeue_entity()` (6.12): a sleeping entity that is not eligible
    /// stays queued as `sched_delayed` (DELAY_DEQUEUE) and false is
    /// returned; otherwise save the lag, keep the deadline relative on a
    /// migration (PLACE_REL_DEADLINE), take it out, and on completing a
    /// delayed dequeue clip a positive lag (DELAY_ZERO).
    pub fn dequeue_entity_eevdf(
        &mut self,
        ses: &mut [SchedEntity],
        id: TaskId,
        flags: DequeueFlags,
        now: u64,
    ) -> bool {
        let ep = self.ep();
        self.update_curr_eevdf(ses, now);
        self.clear_buddies(id);
        if !flags.delayed
            && flags.sleep
            && !flags.special
            && ep.delay_dequeue
            && !self.entity_eligible(ses, id)
        {
            ses[id as usize].sched_delayed = true;
            return false;
        }
        self.update_entity_lag(ses, id);
        let se = &mut ses[id as usize];
        if ep.place_rel_deadline && !flags.sleep {
            se.deadline -= se.vruntime;
            se.rel_deadline = true;
        }
        if self.curr != Some(id) {
            self.dequeue_eevdf(id, se);
        }
        se.on_rq = false;
        self.load -= se.weight;
        self.nr_running -= 1;
        if flags.delayed {
            se.sched_delayed = false;
            if ep.delay_zero && se.vlag > 0 {
                se.vlag = 0;
            }
        }
        self.update_min_vruntime_eevdf(ses);
        true
    }

    /// `requeue_delayed_entity()` (6.12): a delayed entity is woken where it
    /// is queued; under DELAY_ZERO a positive lag is dropped and it is placed
    /// afresh at V.
    pub fn requeue_delayed_entity(&mut self, ses: &mut [SchedEntity], id: TaskId) {
        debug_assert!(ses[id as usize].sched_delayed && ses[id as usize].on_rq);
        if self.ep().delay_zero {
            self.update_entity_lag(ses, id);
            if ses[id as usize].vlag > 0 {
                let is_curr = self.curr == Some(id);
                self.nr_running -= 1;
                if !is_curr {
                    self.dequeue_eevdf(id, &ses[id as usize]);
                }
                ses[id as usize].vlag = 0;
                self.place_entity_eevdf(ses, id, false);
                if !is_curr {
                    self.enqueue_eevdf(id, &mut ses[id as usize]);
                }
                self.nr_running += 1;
            }
        }
        ses[id as usize].sched_delayed = false;
    }

    /// `pick_eevdf()` (6.12; 6.17 `__pick_eevdf(cfs_rq, protect)`): the
    /// eligible entity with the earliest virtual deadline, `curr` included
    /// while it is queued and eligible; a protected `curr` (RUN_TO_PARITY)
    /// is kept. With a single entity it is returned unexamined. See the
    /// module comment for the search's cost.
    pub fn pick_eevdf(&self, ses: &[SchedEntity], protect: bool) -> Option<TaskId> {
        let ep = self.ep();
        let curr = self.curr_on_rq(ses).map(|(c, _)| c);
        if self.nr_running == 1 {
            return curr.or_else(|| self.leftmost());
        }
        let curr = curr.filter(|&c| self.entity_eligible(ses, c));
        if let Some(c) = curr {
            let guard = if ep.run_to_parity_min_slice {
                protect
            } else {
                ep.run_to_parity
            };
            if guard && Self::protect_slice(&ses[c as usize]) {
                return Some(c);
            }
        }
        let elig = self.eligibility(ses);
        let best = self
            .tree
            .iter()
            .map(|e| e.2)
            .find(|&t| elig.eligible(ses[t as usize].vruntime));
        match (best, curr) {
            (None, None) => self.leftmost(),
            (None, Some(c)) => Some(c),
            (Some(b), Some(c)) if ses[c as usize].deadline < ses[b as usize].deadline => Some(c),
            (Some(b), _) => Some(b),
        }
    }

    /// `pick_next_entity()` (6.6/6.12): the next buddy if it is eligible,
    /// else `pick_eevdf()`. The caller dequeues a `sched_delayed` result.
    pub fn pick_next_entity_eevdf(&self, ses: &[SchedEntity]) -> Option<TaskId> {
        if self.ep().next_buddy {
            if let Some(n) = self.next.filter(|&n| self.entity_eligible(ses, n)) {
                return Some(n);
            }
        }
        self.pick_eevdf(ses, true)
    }

    /// `set_next_entity()` (6.6–6.18): clear its buddy marks, take it out of
    /// the tree, start its slice protection, make it `curr`.
    pub(super) fn set_next_entity_eevdf(&mut self, ses: &mut [SchedEntity], id: TaskId, now: u64) {
        self.clear_buddies(id);
        if ses[id as usize].on_rq {
            self.dequeue_eevdf(id, &ses[id as usize]);
            self.set_protect_slice(ses, id);
        }
        let se = &mut ses[id as usize];
        se.exec_start = now;
        se.prev_sum_exec_runtime = se.sum_exec_runtime;
        self.curr = Some(id);
    }

    /// `check_preempt_wakeup_fair()` (6.6–6.18) for a woken or forked
    /// `wakee` against `curr`: mark the next buddy (NEXT_BUDDY, not for a
    /// fork or a delayed entity), then preempt iff `pick_eevdf()` would now
    /// choose the wakee. 6.12 PREEMPT_SHORT: a shorter-slice eligible wakee
    /// that is ahead of `curr`, or with `curr` ineligible, cancels `curr`'s
    /// protection first. 6.17: a shorter-slice wakee is tested with
    /// protection lifted; if it wins, `curr`'s protection is cancelled,
    /// otherwise shortened to the smallest slice queued.
    pub fn check_preempt_wakeup_eevdf(
        &mut self,
        ses: &mut [SchedEntity],
        wakee: TaskId,
        fork: bool,
        curr_need_resched: bool,
        now: u64,
    ) -> bool {
        let ep = self.ep();
        let Some(c) = self.curr else { return true };
        if c == wakee {
            return false;
        }
        let wakee_idle = ses[wakee as usize].policy == Policy::Idle;
        if ep.next_buddy && !fork && !ses[wakee as usize].sched_delayed && !wakee_idle {
            self.next = Some(wakee);
        }
        if curr_need_resched || !ep.wakeup_preemption {
            return false;
        }
        // se_is_idle() (5.15+, a task's SCHED_IDLE at task level): preempt
        // an idle entity for a non-idle one, never the inverse; then "BATCH
        // and IDLE tasks do not preempt others".
        let curr_idle = ses[c as usize].policy == Policy::Idle;
        if curr_idle && !wakee_idle {
            return true;
        }
        if curr_idle != wakee_idle || ses[wakee as usize].policy != Policy::Normal {
            return false;
        }
        self.update_curr_eevdf(ses, now);
        let (pse, se) = (&ses[wakee as usize], &ses[c as usize]);
        if ep.run_to_parity_min_slice {
            let short = ep.preempt_short && pse.slice < se.slice;
            if self.pick_eevdf(ses, !short) == Some(wakee) {
                if short {
                    Self::cancel_protect_slice(&mut ses[c as usize]);
                }
                return true;
            }
            if ep.run_to_parity && short {
                self.update_protect_slice(ses, c);
            }
            return false;
        }
        if ep.preempt_short
            && pse.slice < se.slice
            && self.entity_eligible(ses, wakee)
            && (pse.deadline < se.deadline || !self.entity_eligible(ses, c))
        {
            Self::cancel_protect_slice(&mut ses[c as usize]);
        }
        self.pick_eevdf(ses, true) == Some(wakee)
    }

    /// `yield_task_fair()` under EEVDF: 6.6 pushes the deadline one vslice
    /// further; with `yield_forfeit` (79104becf42b) an eligible yielder
    /// forfeits the rest of its request (vruntime = deadline) and starts a
    /// new one.
    pub(super) fn yield_task_eevdf(&mut self, ses: &mut [SchedEntity], now: u64) {
        let Some(c) = self.curr else { return };
        if self.nr_running == 1 {
            return;
        }
        self.clear_buddies(c);
        self.update_curr_eevdf(ses, now);
        if self.ep().yield_forfeit {
            if self.entity_eligible(ses, c) {
                let se = &mut ses[c as usize];
                se.vruntime = se.deadline;
                self.update_deadline(se);
            }
        } else {
            let se = &mut ses[c as usize];
            se.deadline += calc_delta_fair(se.slice, se.weight, se.inv_weight) as i64;
        }
    }

    /// Σ w_i·(V − v_i) over the queued entities and `curr`: the runqueue's
    /// total lag in weighted ns (0 up to the rounding of V when nothing
    /// joined or left with lag).
    pub fn total_lag(&self, ses: &[SchedEntity]) -> i128 {
        let v = self.avg_vruntime(ses) as i128;
        let mut sum: i128 = self
            .tree
            .iter()
            .map(|e| {
                let se = &ses[e.2 as usize];
                se.weight as i128 * (v - se.vruntime as i128)
            })
            .sum();
        if let Some((_, c)) = self.curr_on_rq(ses) {
            sum += c.weight as i128 * (v - c.vruntime as i128);
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{Kernel, Pick};
    use crate::sched::fair::weights::nice_weight;

    /// A 1-CPU EEVDF runqueue (factor 1: base slice 0.7 ms, TICK 1 ms).
    fn rq_with(edit: impl FnOnce(&mut Kernel)) -> CfsRq {
        let mut k = Kernel::v3_13();
        k.pick = Pick::Eevdf;
        edit(&mut k);
        CfsRq {
            eevdf: Some(EevdfParams::new(&k, 1)),
            ..Default::default()
        }
    }

    fn rq() -> CfsRq {
        rq_with(|_| {})
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

    /// Queue `id` by hand at vruntime `v` with a request of `slice` ns.
    fn queue(rq: &mut CfsRq, ses: &mut [SchedEntity], id: TaskId, v: i64, slice: u64) {
        let se = &mut ses[id as usize];
        se.vruntime = v;
        se.slice = slice;
        se.custom_slice = true;
        se.deadline = v + calc_delta_fair(slice, se.weight, se.inv_weight) as i64;
        rq.load += se.weight;
        rq.nr_running += 1;
        se.on_rq = true;
        rq.enqueue_eevdf(id, se);
    }

    fn sleep() -> DequeueFlags {
        DequeueFlags {
            sleep: true,
            ..Default::default()
        }
    }

    /// V from scratch: ⌊Σ w·v / Σ w⌋ over the queued entities and curr.
    fn mean_v(rq: &CfsRq, ses: &[SchedEntity]) -> i64 {
        let mut ids: Vec<TaskId> = rq.tree.iter().map(|e| e.2).collect();
        ids.extend(rq.curr.filter(|&c| ses[c as usize].on_rq));
        let w: i128 = ids.iter().map(|&i| ses[i as usize].weight as i128).sum();
        let s: i128 = ids
            .iter()
            .map(|&i| ses[i as usize].weight as i128 * ses[i as usize].vruntime as i128)
            .sum();
        s.div_euclid(w) as i64
    }

    /// The 64-bit path of `div_s64` truncates as the 128-bit division, at
    /// the boundaries of i64 and beyond them.
    #[test]
    fn div_s64_matches_the_128_bit_division() {
        let big = i64::MAX as i128;
        let small = i64::MIN as i128;
        let nums = [
            0,
            1,
            -1,
            7,
            -7,
            1023,
            -1025,
            big,
            big - 1,
            small,
            small + 1,
            big + 1,
            small - 1,
            1 << 70,
            -(1 << 70),
        ];
        let dens = [1, 2, 3, 1024, 1025, 88_761, big, big + 2, 1 << 66];
        for &a in &nums {
            for &b in &dens {
                assert_eq!(div_s64(a, b), a / b, "{a} / {b}");
            }
        }
        let mut rng = crate::rng::Rng::new(3);
        for _ in 0..10_000 {
            let a = rng.next_u64() as i64 as i128 >> (rng.next_u64() % 40);
            let b = (rng.next_u64() >> (rng.next_u64() % 63)).max(1) as i128;
            assert_eq!(div_s64(a, b), a / b, "{a} / {b}");
        }
    }

    #[test]
    fn avg_vruntime_eligibility_and_zero_total_lag() {
        // Three nice-0 tasks at v = 0; A runs 300 µs: V = 300/3 = 100 µs, so
        // B and C are owed service (eligible) and A is not.
        let mut rq = rq();
        let mut ses = ents(&[0, 0, 0]);
        for id in 0..3 {
            rq.enqueue_entity_eevdf(&mut ses, id, EnqueueFlags::default(), 0);
        }
        assert_eq!(ses[0].deadline, 700_000, "deadline = v + base_slice/w");
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        rq.update_curr_eevdf(&mut ses, 300_000);
        assert_eq!(ses[0].vruntime, 300_000);
        assert_eq!(rq.avg_vruntime(&ses), 100_000);
        assert!(!rq.entity_eligible(&ses, 0));
        assert!(rq.entity_eligible(&ses, 1) && rq.entity_eligible(&ses, 2));
        // lag_i = w·(V − v_i): −1024·200 µs + 2·1024·100 µs = 0.
        assert_eq!(rq.total_lag(&ses), 0);
        // A is protected (RUN_TO_PARITY) but not eligible, so it loses the
        // pick; B and C tie on the deadline and B was queued first.
        assert!(CfsRq::protect_slice(&ses[0]));
        assert_eq!(rq.pick_eevdf(&ses, true), Some(1));
    }

    #[test]
    fn weighted_lag_cancels_and_a_nice_5_request_is_longer() {
        // nice 0 (1024) curr and nice 5 (335) queued, both at v = 0. After
        // the nice-0 task ran d, V = 1024·d/1359: the nice-5 task's lag is
        // 335·V > 0, the runner's 1024·(V − d) < 0, and they cancel.
        let mut rq = rq();
        let mut ses = ents(&[0, 5]);
        rq.enqueue_entity_eevdf(&mut ses, 0, EnqueueFlags::default(), 0);
        rq.enqueue_entity_eevdf(&mut ses, 1, EnqueueFlags::default(), 0);
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        rq.update_curr_eevdf(&mut ses, 1_359_000);
        assert_eq!(rq.avg_vruntime(&ses), 1_024_000);
        assert_eq!(rq.total_lag(&ses), 0);
        // The nice-5 request is 0.7 ms·1024/335 = 2.1397 ms of virtual time
        // (prio_to_wmult's 32.32 fixed point rounds 2139701.9 up).
        assert_eq!(ses[1].deadline, 2_139_702);
    }

    #[test]
    fn lag_is_kept_across_a_sleep() {
        // A (curr) runs 300 µs among B, C at 0 and sleeps: vlag = V − v =
        // 100 − 300 = −200 µs. B then runs 600 µs (V of B, C = 300 µs). On
        // wake-up PLACE_LAG inflates the lag by (W + w)/W = 3072/2048 to
        // −300 µs, so A lands at 600 µs and V' = (600 + 0 + 600)/3 = 400 µs:
        // A's lag after placement is again −200 µs.
        let mut rq = rq_with(|k| k.delay_dequeue = false);
        let mut ses = ents(&[0, 0, 0]);
        for id in 0..3 {
            rq.enqueue_entity_eevdf(&mut ses, id, EnqueueFlags::default(), 0);
        }
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        assert!(rq.dequeue_entity_eevdf(&mut ses, 0, sleep(), 300_000));
        assert_eq!(ses[0].vlag, -200_000);
        rq.put_prev_entity(&mut ses, 300_000);
        rq.set_next_entity_eevdf(&mut ses, 1, 300_000);
        rq.update_curr_eevdf(&mut ses, 900_000);
        assert_eq!(rq.avg_vruntime(&ses), 300_000);
        let wake = EnqueueFlags {
            wakeup: true,
            ..Default::default()
        };
        rq.enqueue_entity_eevdf(&mut ses, 0, wake, 900_000);
        assert_eq!(ses[0].vruntime, 600_000);
        assert_eq!(rq.avg_vruntime(&ses), 400_000);
        assert_eq!(rq.avg_vruntime(&ses) - ses[0].vruntime, -200_000);
        // Without PLACE_LAG the sleeper comes back at V with no lag.
        let mut rq2 = rq_with(|k| {
            k.delay_dequeue = false;
            k.place_lag = false;
        });
        let mut ses2 = ents(&[0, 0]);
        rq2.enqueue_entity_eevdf(&mut ses2, 1, EnqueueFlags::default(), 0);
        ses2[0].vlag = -200_000;
        rq2.enqueue_entity_eevdf(&mut ses2, 0, wake, 0);
        assert_eq!(ses2[0].vruntime, 0);
    }

    #[test]
    fn lag_is_clamped_to_two_slices() {
        // A nice-0 task that ran 10 ms ahead keeps at most 2·0.7 ms of debt.
        let mut rq = rq_with(|k| k.delay_dequeue = false);
        let mut ses = ents(&[0, 0]);
        rq.enqueue_entity_eevdf(&mut ses, 0, EnqueueFlags::default(), 0);
        rq.enqueue_entity_eevdf(&mut ses, 1, EnqueueFlags::default(), 0);
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        rq.dequeue_entity_eevdf(&mut ses, 0, sleep(), 10_000_000);
        assert_eq!(ses[0].vlag, -1_400_000);
    }

    #[test]
    fn a_new_task_starts_half_a_slice_from_its_deadline() {
        let mut rq = rq();
        let mut ses = ents(&[0, 0]);
        rq.enqueue_entity_eevdf(&mut ses, 0, EnqueueFlags::default(), 0);
        let new = EnqueueFlags {
            initial: true,
            ..Default::default()
        };
        rq.enqueue_entity_eevdf(&mut ses, 1, new, 0);
        assert_eq!(ses[1].deadline - ses[1].vruntime, 350_000);
        let mut rq = rq_with(|k| k.place_deadline_initial = false);
        let mut ses = ents(&[0]);
        rq.enqueue_entity_eevdf(&mut ses, 0, new, 0);
        assert_eq!(ses[0].deadline - ses[0].vruntime, 700_000);
    }

    #[test]
    fn pick_takes_the_earliest_eligible_deadline() {
        // By hand, min_vruntime 0: A at v 0 (slice 3 ms), B at 100 µs
        // (0.1 ms: deadline 200 µs), C at 400 µs (0.05 ms: deadline 450 µs).
        // V = 500/3 µs: A and B eligible, C not (earliest deadline but owed
        // nothing). B has the earliest eligible deadline.
        let mut rq = rq();
        let mut ses = ents(&[0, 0, 0]);
        queue(&mut rq, &mut ses, 0, 0, 3_000_000);
        queue(&mut rq, &mut ses, 1, 100_000, 100_000);
        queue(&mut rq, &mut ses, 2, 400_000, 50_000);
        assert_eq!(rq.leftmost(), Some(1), "the tree is in deadline order");
        assert_eq!(rq.avg_vruntime(&ses), 166_666);
        assert!(!rq.entity_eligible(&ses, 2));
        assert_eq!(rq.pick_eevdf(&ses, true), Some(1));
        // C becomes eligible once A has run enough to move V to 400 µs:
        // V = (v_A + 500 µs)/3 = 400 µs at v_A = 700 µs; B's deadline is
        // still the earliest of the eligible ones.
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        rq.update_curr_eevdf(&mut ses, 700_000);
        assert!(rq.entity_eligible(&ses, 2));
        assert_eq!(rq.pick_eevdf(&ses, true), Some(1));
        // Without B, C wins over the ineligible-but-protected A.
        rq.dequeue_entity_eevdf(&mut ses, 1, DequeueFlags::default(), 700_000);
        assert!(!rq.entity_eligible(&ses, 0));
        assert_eq!(rq.pick_eevdf(&ses, true), Some(2));
    }

    #[test]
    fn run_to_parity_keeps_an_eligible_curr_until_its_deadline() {
        // A (curr, v 0, deadline 3 ms, protected), B queued at 200 µs; W
        // wakes at 50 µs with a 0.1 ms request (deadline 150 µs): V = 83 µs,
        // so A and W are eligible, B is not, and W's deadline is earlier.
        let mk = |edit: fn(&mut Kernel)| {
            let mut rq = rq_with(edit);
            let mut ses = ents(&[0, 0, 0]);
            queue(&mut rq, &mut ses, 0, 0, 3_000_000);
            rq.set_next_entity_eevdf(&mut ses, 0, 0);
            queue(&mut rq, &mut ses, 1, 200_000, 700_000);
            queue(&mut rq, &mut ses, 2, 50_000, 100_000);
            (rq, ses)
        };
        // RUN_TO_PARITY without PREEMPT_SHORT: A keeps the CPU.
        let (mut rq, mut ses) = mk(|k| k.preempt_short = false);
        assert!(rq.entity_eligible(&ses, 0) && rq.entity_eligible(&ses, 2));
        assert!(!rq.check_preempt_wakeup_eevdf(&mut ses, 2, false, false, 0));
        // No RUN_TO_PARITY (6.6-6.16 form): the earliest deadline wins.
        let (mut rq, mut ses) = mk(|k| {
            k.preempt_short = false;
            k.run_to_parity = false;
            k.run_to_parity_min_slice = false;
        });
        assert!(rq.check_preempt_wakeup_eevdf(&mut ses, 2, false, false, 0));
        // PREEMPT_SHORT, 6.12 form: the shorter-slice wakee cancels A's
        // protection and wins.
        let (mut rq, mut ses) = mk(|k| k.run_to_parity_min_slice = false);
        assert!(rq.check_preempt_wakeup_eevdf(&mut ses, 2, false, false, 0));
        assert!(!CfsRq::protect_slice(&ses[0]));
        // 6.17 form: the wakee is tested with protection lifted, wins, and
        // A's protection is cancelled.
        let (mut rq, mut ses) = mk(|_| {});
        assert!(rq.check_preempt_wakeup_eevdf(&mut ses, 2, false, false, 0));
        assert!(!CfsRq::protect_slice(&ses[0]));
    }

    #[test]
    fn min_slice_protection_and_no_run_to_parity_quantum() {
        // 6.17: a curr picked while a 0.1 ms request is queued is protected
        // for 0.1 ms of its own time, not its whole 3 ms request.
        let mut rq = rq();
        let mut ses = ents(&[0, 0]);
        queue(&mut rq, &mut ses, 0, 0, 3_000_000);
        queue(&mut rq, &mut ses, 1, 0, 100_000);
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        assert_eq!(ses[0].vprot, 100_000);
        rq.update_curr_eevdf(&mut ses, 99_999);
        assert!(!rq.resched);
        rq.update_curr_eevdf(&mut ses, 100_000);
        assert!(rq.resched, "update_curr() reschedules when protection ends");
        // 6.17 without RUN_TO_PARITY: the unscaled base slice (0.7 ms).
        let mut rq = rq_with(|k| k.run_to_parity = false);
        let mut ses = ents(&[0, 0]);
        queue(&mut rq, &mut ses, 0, 0, 3_000_000);
        queue(&mut rq, &mut ses, 1, 0, 3_000_000);
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        assert_eq!(ses[0].vprot, 700_000);
        // 6.6-6.16: protection lasts to the deadline.
        let mut rq = rq_with(|k| k.run_to_parity_min_slice = false);
        let mut ses = ents(&[0, 0]);
        queue(&mut rq, &mut ses, 0, 0, 3_000_000);
        queue(&mut rq, &mut ses, 1, 0, 100_000);
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        assert_eq!(ses[0].vprot, 3_000_000);
    }

    #[test]
    fn update_deadline_starts_a_new_request_at_the_tick() {
        let mut rq = rq();
        let mut ses = ents(&[0, 0]);
        rq.enqueue_entity_eevdf(&mut ses, 0, EnqueueFlags::default(), 0);
        rq.enqueue_entity_eevdf(&mut ses, 1, EnqueueFlags::default(), 0);
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        rq.update_curr_eevdf(&mut ses, 699_999);
        assert!(!rq.resched);
        assert_eq!(ses[0].deadline, 700_000);
        rq.update_curr_eevdf(&mut ses, 1_000_000);
        assert!(rq.resched);
        assert_eq!(ses[0].deadline, 1_000_000 + 700_000);
    }

    #[test]
    fn delayed_dequeue_keeps_an_ineligible_sleeper_queued() {
        let mut rq = rq();
        let mut ses = ents(&[0, 0, 0]);
        for id in 0..3 {
            rq.enqueue_entity_eevdf(&mut ses, id, EnqueueFlags::default(), 0);
        }
        rq.set_next_entity_eevdf(&mut ses, 0, 0);
        // A ran 300 µs (V = 100 µs): not eligible, so it stays queued.
        assert!(!rq.dequeue_entity_eevdf(&mut ses, 0, sleep(), 300_000));
        assert!(ses[0].sched_delayed && ses[0].on_rq);
        assert_eq!(rq.nr_running, 3);
        // An exiting task (special state) is never delayed.
        let special = DequeueFlags {
            sleep: true,
            special: true,
            delayed: false,
        };
        let mut rq2 = rq_with(|_| {});
        let mut ses2 = ents(&[0, 0]);
        rq2.enqueue_entity_eevdf(&mut ses2, 0, EnqueueFlags::default(), 0);
        rq2.enqueue_entity_eevdf(&mut ses2, 1, EnqueueFlags::default(), 0);
        rq2.set_next_entity_eevdf(&mut ses2, 0, 0);
        assert!(rq2.dequeue_entity_eevdf(&mut ses2, 0, special, 300_000));
        // Woken while still negative-lag: requeued unchanged.
        rq.put_prev_entity(&mut ses, 300_000);
        rq.requeue_delayed_entity(&mut ses, 0);
        assert!(!ses[0].sched_delayed);
        assert_eq!(ses[0].vruntime, 300_000);
        // Delayed again, then B runs to 1 ms: V = (300 + 1000 + 0)/3 µs, A's
        // lag turns positive, and DELAY_ZERO re-places it at the V of the
        // others ((1000 + 0)/2 = 500 µs) with zero lag.
        rq.set_next_entity_eevdf(&mut ses, 0, 300_000);
        assert!(!rq.dequeue_entity_eevdf(&mut ses, 0, sleep(), 300_000));
        rq.put_prev_entity(&mut ses, 300_000);
        rq.set_next_entity_eevdf(&mut ses, 1, 300_000);
        rq.update_curr_eevdf(&mut ses, 1_300_000);
        assert!(rq.entity_eligible(&ses, 0));
        rq.requeue_delayed_entity(&mut ses, 0);
        assert_eq!(ses[0].vruntime, 500_000);
        assert_eq!(ses[0].vlag, 0);
        // Completing a delayed dequeue clips a positive lag (DELAY_ZERO).
        ses[0].sched_delayed = true;
        rq.update_curr_eevdf(&mut ses, 2_300_000);
        let flags = DequeueFlags {
            sleep: true,
            special: false,
            delayed: true,
        };
        assert!(rq.dequeue_entity_eevdf(&mut ses, 0, flags, 2_300_000));
        assert_eq!(ses[0].vlag, 0);
        assert!(!ses[0].sched_delayed && !ses[0].on_rq);
    }

    #[test]
    fn migration_keeps_the_relative_deadline() {
        let mut src = rq_with(|k| k.delay_dequeue = false);
        let mut dst = rq_with(|k| k.delay_dequeue = false);
        let mut ses = ents(&[0, 0, 0]);
        src.enqueue_entity_eevdf(&mut ses, 0, EnqueueFlags::default(), 0);
        src.enqueue_entity_eevdf(&mut ses, 1, EnqueueFlags::default(), 0);
        src.set_next_entity_eevdf(&mut ses, 0, 0);
        src.update_curr_eevdf(&mut ses, 200_000);
        src.put_prev_entity(&mut ses, 200_000);
        // A: v 200 µs, deadline 700 µs: 500 µs of its request left.
        src.dequeue_entity_eevdf(&mut ses, 0, DequeueFlags::default(), 200_000);
        assert!(ses[0].rel_deadline);
        dst.enqueue_entity_eevdf(&mut ses, 2, EnqueueFlags::default(), 200_000);
        dst.enqueue_entity_eevdf(&mut ses, 0, EnqueueFlags::default(), 200_000);
        assert_eq!(ses[0].deadline - ses[0].vruntime, 500_000);
    }

    #[test]
    fn incremental_sums_match_the_weighted_mean() {
        // A random walk of enqueues, runs, picks and dequeues of mixed nice
        // levels: V from the incremental, min_vruntime-relative sums always
        // equals ⌊Σ w·v / Σ w⌋ computed from scratch, and the runqueue's
        // total lag stays within the rounding of V (|Σ lag| < Σ w).
        let nices = [0, 0, 5, -5, 10, 0, 3, -3];
        let mut rq = rq_with(|k| k.delay_dequeue = false);
        let mut ses = ents(&nices);
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut now = 0;
        let mut checked = 0;
        for step in 0..4000 {
            now += 1 + rnd(400_000);
            let id = rnd(nices.len() as u64) as TaskId;
            if ses[id as usize].on_rq {
                if rq.curr == Some(id) {
                    rq.dequeue_entity_eevdf(&mut ses, id, sleep(), now);
                    rq.put_prev_entity(&mut ses, now);
                } else if rq.curr.is_none() {
                    rq.dequeue_entity_eevdf(&mut ses, id, sleep(), now);
                }
            } else {
                rq.enqueue_entity_eevdf(&mut ses, id, EnqueueFlags::default(), now);
            }
            if step % 3 == 0 {
                // schedule(): pick with curr still set, then switch.
                rq.update_curr_eevdf(&mut ses, now);
                if let Some(n) = rq.pick_next_entity_eevdf(&ses) {
                    if rq.curr != Some(n) {
                        rq.put_prev_entity(&mut ses, now);
                        rq.set_next_entity_eevdf(&mut ses, n, now);
                    }
                }
            }
            rq.update_curr_eevdf(&mut ses, now);
            if rq.nr_running > 0 {
                assert_eq!(rq.avg_vruntime(&ses), mean_v(&rq, &ses), "step {step}");
                assert!(rq.total_lag(&ses).abs() < rq.load as i128, "step {step}");
                checked += 1;
            }
        }
        assert!(checked > 1000);
    }
}
