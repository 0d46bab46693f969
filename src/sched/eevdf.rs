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
//!   subtree's `min_vruntime` and `min_slice`) is a `BTreeSet` by (deadline,
//!   seq), a second `BTreeSet` by (vruntime, seq) for the tree's minimum
//!   vruntime and a multiset of slices for its minimum slice:
//!   `pick_eevdf()` walks the deadline order to the first eligible entity,
//!   O(log n + k) for k ineligible entities with earlier deadlines (the
//!   kernel's heap search is O(log n)); the result is the same entity
//!   (earliest eligible deadline, ties by insertion order);
//! - Σ (v_i − min_vruntime)·w_i is an `i128` (the kernel's `s64`, with no
//!   overflow to mirror);
//! - weights are `scale_load_down()` weights (1024 for nice 0), as the
//!   kernel's `avg_vruntime` uses.

use super::fair::{CfsRq, DequeueFlags, EnqueueFlags, SchedEntity, TaskId};
use super::weights::calc_delta_fair;
use crate::kernel::Kernel;

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

/// `div_s64()`: truncation toward zero.
fn div_s64(a: i128, b: i128) -> i128 {
    a / b
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
        self.by_vruntime.insert((se.vruntime, self.seq, id));
        *self.slices.entry(se.slice).or_insert(0) += 1;
        self.avg_vruntime += self.entity_key(se) as i128 * se.weight as i128;
        self.avg_load += se.weight;
    }

    /// `__dequeue_entity()`: out of the tree, `avg_vruntime_sub()`.
    pub(super) fn dequeue_eevdf(&mut self, id: TaskId, se: &SchedEntity) {
        let removed = self.tree.remove(&(se.key.0, se.key.1, id));
        debug_assert!(removed, "entity {id} not in the tree");
        self.by_vruntime.remove(&(se.vkey, se.key.1, id));
        if let Some(n) = self.slices.get_mut(&se.slice) {
            *n -= 1;
            if *n == 0 {
                self.slices.remove(&se.slice);
            }
        }
        self.avg_vruntime -= self.entity_key(se) as i128 * se.weight as i128;
        self.avg_load -= se.weight;
    }

    /// `avg_vruntime()` (6.6 with 650cad561cce's floor): V = min_vruntime +
    /// ⌊Σ key·w / Σ w⌋ over the tree and `curr`, rounded down so that an
    /// entity at V is eligible.
    pub fn avg_vruntime(&self, ses: &[SchedEntity]) -> i64 {
        let mut avg = self.avg_vruntime;
        let mut load = self.avg_load as i128;
        if let Some((_, c)) = self.curr_on_rq(ses) {
            avg += self.entity_key(c) as i128 * c.weight as i128;
            load += c.weight as i128;
        }
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
        let mut avg = self.avg_vruntime;
        let mut load = self.avg_load as i128;
        if let Some((_, c)) = self.curr_on_rq(ses) {
            avg += self.entity_key(c) as i128 * c.weight as i128;
            load += c.weight as i128;
        }
        avg >= (vruntime - self.min_vruntime) as i128 * load
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
        if let Some((&s, _)) = self.slices.first_key_value() {
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
        if let Some(&(tv, _, _)) = self.by_vruntime.first() {
            v = if curr.is_some() { v.min(tv) } else { tv };
        }
        let delta = v - self.min_vruntime;
        if delta > 0 {
            self.avg_vruntime -= self.avg_load as i128 * delta as i128;
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
        let Some(c) = self.curr else { return 0 };
        let se = &mut ses[c as usize];
        let delta = now.saturating_sub(se.exec_start);
        if delta == 0 {
            return 0;
        }
        se.exec_start = now;
        se.sum_exec_runtime += delta;
        se.vruntime += calc_delta_fair(delta, se.weight, se.inv_weight) as i64;
        let resched = self.update_deadline(se);
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
        let best = self
            .tree
            .iter()
            .map(|e| e.2)
            .find(|&t| self.entity_eligible(ses, t));
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
        if ep.next_buddy && !fork && !ses[wakee as usize].sched_delayed {
            self.next = Some(wakee);
        }
        if curr_need_resched || !ep.wakeup_preemption {
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
