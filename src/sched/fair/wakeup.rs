//! Wake-up and fork placement, after `kernel/sched_fair.c` (2.6.36) and
//! `kernel/sched/fair.c` (3.8): `select_task_rq_fair()`, `wake_affine()`,
//! `select_idle_sibling()`, `find_idlest_group()`, `find_idlest_cpu()`.
//! No task groups: `effective_load()` is the weight itself.
//!
//! The 4.x–6.x pieces, each behind its `Kernel` field (kernel/sched/fair.c
//! as 6.6–6.18 have them): `record_wakee()`/`wake_wide()` (`wake_wide`),
//! `wake_affine_idle()`/`wake_affine_weight()` (`wake_affine`),
//! `recent_used_cpu`, and 6.x `select_idle_sibling()` with
//! `select_idle_smt()`/`select_idle_core()`/`select_idle_cpu()` and
//! SIS_UTIL's `update_idle_cpu_scan()` (`select_idle_sibling="idle_cpu"`,
//! `sis_util`). Not modelled: per-CPU kthreads, SCHED_IDLE CPUs,
//! clusters, asymmetric capacity, core scheduling, WF_CURRENT_CPU.

use crate::kernel::{SelectIdleSibling, WakeAffine};
use crate::sched::balance::domains::{sd, SCALE};
use crate::sched::pelt::SCHED_CAPACITY_SCALE;
use crate::sched::task::TaskId;
use crate::sched::Sched;
use crate::topology::Machine;

/// The wake-up placement state 4.x–6.x keep beside the task and the LLC:
/// `wakee_flips`, `wakee_flip_decay_ts`, `last_wakee`, `recent_used_cpu`
/// per task; `sd_llc_shared`'s `has_idle_cores` and `nr_idle_scan` per LLC.
#[derive(Clone, Debug, Default)]
pub struct WakeState {
    pub wakee_flips: Vec<u32>,
    pub wakee_flip_decay_ts: Vec<u64>,
    pub last_wakee: Vec<Option<TaskId>>,
    pub recent_used_cpu: Vec<u32>,
    pub has_idle_cores: Vec<bool>,
    pub nr_idle_scan: Vec<u32>,
}

impl WakeState {
    /// Every LLC starts with all its CPUs idle: idle cores, a full scan.
    pub fn new(m: &Machine) -> Self {
        let nllc = m
            .cpus()
            .iter()
            .map(|c| c.llc as usize + 1)
            .max()
            .unwrap_or(0);
        let llc_size = |l: usize| m.cpus().iter().filter(|c| c.llc as usize == l).count() as u32;
        WakeState {
            has_idle_cores: vec![true; nllc],
            nr_idle_scan: (0..nllc).map(llc_size).collect(),
            ..WakeState::default()
        }
    }

    /// `dup_task_struct()` copies the parent's `wakee_flips`,
    /// `wakee_flip_decay_ts` and `last_wakee`; `__sched_fork()` does not
    /// reset them.
    pub fn inherit(&mut self, parent: TaskId, child: TaskId) {
        let (p, c) = (parent as usize, child as usize);
        self.wakee_flips[c] = self.wakee_flips[p];
        self.wakee_flip_decay_ts[c] = self.wakee_flip_decay_ts[p];
        self.last_wakee[c] = self.last_wakee[p];
    }

    /// Room for task `t` (called at fork).
    pub fn add_task(&mut self, t: TaskId, cpu: usize) {
        let n = t as usize + 1;
        self.wakee_flips.resize(n, 0);
        self.wakee_flip_decay_ts.resize(n, 0);
        self.last_wakee.resize(n, None);
        self.recent_used_cpu.resize(n, cpu as u32);
        self.recent_used_cpu[t as usize] = cpu as u32;
    }
}

/// `wake_wide()` (fair.c, 4.3+ "Beef up wake_wide()"): a waker of many and
/// a wakee of many (flips above `factor` = `sd_llc_size`, the larger
/// `factor` times the smaller) are not pulled together.
pub fn wake_wide_test(waker_flips: u32, wakee_flips: u32, factor: u32) -> bool {
    let (master, slave) = if waker_flips < wakee_flips {
        (wakee_flips, waker_flips)
    } else {
        (waker_flips, wakee_flips)
    };
    !(slave < factor || master < slave.saturating_mul(factor))
}

/// `wake_affine_weight()` arithmetic (fair.c 4.14+, WA_BIAS on): true
/// when the waker's CPU wins (`this_eff_load < prev_eff_load`).
#[allow(clippy::too_many_arguments)]
pub fn wake_affine_weight_test(
    this_load: u64,
    prev_load: u64,
    task_load: u64,
    current_load: Option<u64>,
    this_capacity: u64,
    prev_capacity: u64,
    imbalance_pct: u64,
) -> bool {
    let mut this_eff = this_load as i64;
    if let Some(cl) = current_load {
        if cl as i64 > this_eff {
            return true;
        }
        this_eff -= cl as i64;
    }
    this_eff += task_load as i64;
    this_eff *= 100;
    this_eff *= prev_capacity as i64;
    let mut prev_eff = prev_load as i64 - task_load as i64;
    prev_eff *= 100 + (imbalance_pct as i64 - 100) / 2;
    prev_eff *= this_capacity as i64;
    if current_load.is_some() {
        prev_eff += 1;
    }
    this_eff < prev_eff
}

/// `update_idle_cpu_scan()` arithmetic (fair.c 6.0+, SIS_UTIL): how many
/// CPUs of an LLC of `llc_weight` CPUs a wake-up may scan when the LLC's
/// summed util is `sum_util`: `llc_weight · (1 − x'²·pct²/(10⁴·1024)/1024)`
/// with `x' = sum_util / llc_weight`, 0 at 100/pct (85 % for 117).
pub fn idle_cpu_scan(sum_util: u64, llc_weight: u64, imbalance_pct: u64) -> u64 {
    let x = sum_util / llc_weight;
    let tmp = (x * x * imbalance_pct * imbalance_pct) / (10000 * 1024);
    let y = 1024 - tmp.min(1024);
    y * llc_weight / 1024
}

impl Sched<'_> {
    /// `wake_affine()`: the 2.6.36–4.13 load test or the 4.14+ split
    /// (`wake_affine` field).
    fn wake_affine(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        lvl: usize,
        waker: Option<TaskId>,
        sync: bool,
    ) -> bool {
        match self.kernel.wake_affine {
            WakeAffine::Load => self.wake_affine_load(p, this_cpu, prev_cpu, lvl, waker, sync),
            mode => self.wake_affine_split(mode, p, this_cpu, prev_cpu, lvl, waker, sync),
        }
    }

    pub(crate) fn cpus_share_cache(&self, a: usize, b: usize) -> bool {
        self.machine.cpu(a).llc == self.machine.cpu(b).llc
    }

    /// `wake_affine_idle(this_cpu, prev_cpu, sync)` (4.14+): `Some(cpu)`
    /// or `None` for `nr_cpumask_bits`.
    fn wake_affine_idle(&self, this_cpu: usize, prev_cpu: usize, sync: bool) -> Option<usize> {
        if self.idle_cpu(this_cpu) && self.cpus_share_cache(this_cpu, prev_cpu) {
            return Some(if self.idle_cpu(prev_cpu) {
                prev_cpu
            } else {
                this_cpu
            });
        }
        if sync && self.rqs[this_cpu].cfs.nr_running == 1 {
            return Some(this_cpu);
        }
        if self.idle_cpu(prev_cpu) {
            return Some(prev_cpu);
        }
        None
    }

    /// `wake_affine(sd, p, this_cpu, prev_cpu, sync)` (4.14+): WA_IDLE,
    /// then WA_WEIGHT on PELT `cpu_load()`/`task_h_load()` (the wakee's
    /// load as of its last update, as the kernel reads it; the runqueues'
    /// brought to now) with `capacity_of()` = SCHED_CAPACITY_SCALE (no
    /// RT/IRQ pressure in the model); affine when the answer is the
    /// waker's CPU.
    #[allow(clippy::too_many_arguments)]
    fn wake_affine_split(
        &mut self,
        mode: WakeAffine,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        lvl: usize,
        waker: Option<TaskId>,
        sync: bool,
    ) -> bool {
        let mut target = None;
        if matches!(mode, WakeAffine::Idle | WakeAffine::IdleWeight) {
            target = self.wake_affine_idle(this_cpu, prev_cpu, sync);
        }
        if matches!(mode, WakeAffine::Weight | WakeAffine::IdleWeight) && target.is_none() {
            let this_load = self.pelt_cpu_load(this_cpu);
            let prev_load = self.pelt_cpu_load(prev_cpu);
            let current_load = if sync {
                Some(waker.map_or(0, |w| self.pelt_task_load(w)))
            } else {
                None
            };
            let imb = self.sd[this_cpu][lvl].imbalance_pct;
            if wake_affine_weight_test(
                this_load,
                prev_load,
                self.pelt_task_load(p),
                current_load,
                SCHED_CAPACITY_SCALE,
                SCHED_CAPACITY_SCALE,
                imb,
            ) {
                target = Some(this_cpu);
            }
        }
        if target != Some(this_cpu) {
            return false;
        }
        self.rqs[this_cpu].bal.stats[lvl].ttwu_move_affine += 1;
        true
    }

    /// `record_wakee(p)` (fair.c 4.3+): the waker's flips decay by half
    /// once a second (HZ jiffies) and count each change of wakee.
    fn record_wakee(&mut self, waker: TaskId, p: TaskId) {
        let jiffies = self.jiffies();
        let hz = self.kernel.hz as u64;
        let w = &mut self.wake;
        let wi = waker as usize;
        if jiffies > w.wakee_flip_decay_ts[wi] + hz {
            w.wakee_flips[wi] >>= 1;
            w.wakee_flip_decay_ts[wi] = jiffies;
        }
        if w.last_wakee[wi] != Some(p) {
            w.last_wakee[wi] = Some(p);
            w.wakee_flips[wi] = w.wakee_flips[wi].saturating_add(1);
        }
    }

    /// `sd_llc_size` of `cpu`: the span of its highest
    /// SHARE_PKG_RESOURCES domain (1 without one).
    fn sd_llc(&self, cpu: usize) -> Option<usize> {
        self.sd[cpu]
            .iter()
            .rposition(|d| d.has(sd::SHARE_PKG_RESOURCES))
    }

    fn sd_llc_size(&self, cpu: usize) -> u32 {
        self.sd_llc(cpu)
            .map_or(1, |l| self.sd[cpu][l].span.len() as u32)
    }

    /// `wake_wide(p)` with `current` = the waker (an interrupt-context
    /// wake-up has no waker and so no flips).
    fn wake_wide(&self, p: TaskId, waker: Option<TaskId>, waker_cpu: usize) -> bool {
        let master = waker.map_or(0, |w| self.wake.wakee_flips[w as usize]);
        let slave = self.wake.wakee_flips[p as usize];
        wake_wide_test(master, slave, self.sd_llc_size(waker_cpu))
    }

    /// `wake_affine(sd, p, sync)` (2.6.36–4.13): may `p` be pulled to the
    /// waker's CPU? Compares the loads with the waker's weight removed on a
    /// sync wake-up, with half the level's imbalance_pct as slack.
    fn wake_affine_load(
        &mut self,
        p: TaskId,
        this_cpu: usize,
        prev_cpu: usize,
        lvl: usize,
        waker: Option<TaskId>,
        sync: bool,
    ) -> bool {
        let d = &self.sd[this_cpu][lvl];
        let idx = d.wake_idx;
        let imb = 100 + (d.imbalance_pct - 100) / 2;
        let mut load = self.source_load(prev_cpu, idx) as i64;
        let mut this_load = self.target_load(this_cpu, idx) as i64;
        if sync {
            if let Some(w) = waker {
                this_load -= self.ses[w as usize].weight as i64;
            }
            load += 0;
        }
        let weight = self.ses[p as usize].weight as i64;
        let balanced = if this_load > 0 {
            let this_eff = 100 * self.balance.cpu_power[prev_cpu] as i64 * (this_load + weight);
            let prev_eff = imb as i64 * self.balance.cpu_power[this_cpu] as i64 * load;
            this_eff <= prev_eff
        } else {
            true
        };
        // "If the currently running task will sleep within a reasonable
        // amount of time then attract this newly woken task" — before the
        // schedstat accounting, as in the kernel.
        if sync && balanced {
            return true;
        }
        let tl_per_task = self.cpu_avg_load_per_task(this_cpu) as i64;
        if balanced
            || (this_load <= load
                && this_load + self.target_load(prev_cpu, idx) as i64 <= tl_per_task)
        {
            self.rqs[this_cpu].bal.stats[lvl].ttwu_move_affine += 1;
            return true;
        }
        false
    }

    /// `select_idle_sibling(p, target)`.
    fn select_idle_sibling(&mut self, p: TaskId, target: usize, waker_cpu: usize) -> usize {
        let prev_cpu = self.tasks[p as usize].cpu as usize;
        if self.kernel.select_idle_sibling == SelectIdleSibling::IdleCpu {
            return self.select_idle_sibling_6x(p, prev_cpu, target);
        }
        if target == waker_cpu && self.idle_cpu(waker_cpu) {
            return waker_cpu;
        }
        match self.kernel.select_idle_sibling {
            SelectIdleSibling::AnyIdle => {
                if target == prev_cpu && self.idle_cpu(prev_cpu) {
                    return prev_cpu;
                }
                // Any idle allowed CPU in target's SHARE_PKG_RESOURCES
                // domains, up to the one spanning waker and prev. For an
                // unpinned task, the first CPU of span ∩ idle mask (the
                // same CPU as the scan: `sched::balance::sg_sums`).
                let pinned = self.tasks[p as usize].allowed.is_some();
                let mut t = target;
                for (lvl, d) in self.sd[target].iter().enumerate() {
                    if !d.has(sd::SHARE_PKG_RESOURCES) {
                        break;
                    }
                    let scan = || {
                        d.span
                            .iter()
                            .map(|&i| i as usize)
                            .find(|&i| self.allowed(p, i) && self.idle_cpu(i))
                    };
                    let found = match &self.balance.sg_sums {
                        Some(s) if !pinned => s.idle.first_and(s.span_mask(target, lvl)),
                        _ => scan(),
                    };
                    debug_assert_eq!(found, scan(), "idle cpu near {target} level {lvl}");
                    if let Some(i) = found {
                        t = i;
                    }
                    if d.contains(waker_cpu) && d.contains(prev_cpu) {
                        break;
                    }
                }
                t
            }
            SelectIdleSibling::IdleGroup => {
                if self.idle_cpu(target) {
                    return target;
                }
                let llc_shared = self.sd[target]
                    .iter()
                    .take_while(|d| d.has(sd::SHARE_PKG_RESOURCES))
                    .any(|d| d.contains(prev_cpu));
                if prev_cpu != target && llc_shared && self.idle_cpu(prev_cpu) {
                    return prev_cpu;
                }
                // From sd_llc down: the first group whose CPUs are all idle.
                let llc = self.sd[target]
                    .iter()
                    .rposition(|d| d.has(sd::SHARE_PKG_RESOURCES));
                let Some(top) = llc else { return target };
                let pinned = self.tasks[p as usize].allowed.is_some();
                for lvl in (0..=top).rev() {
                    let d = &self.sd[target][lvl];
                    // For an unpinned task, the first fully idle group
                    // from the masks of `sched::balance::sg_sums`: the walk's group.
                    let found = match &self.balance.sg_sums {
                        Some(s) if !pinned => s
                            .first_idle_group(d, target, lvl)
                            .map(|gi| d.groups[gi].cpus[0] as usize),
                        _ => self.idle_group_walk(p, d),
                    };
                    debug_assert_eq!(
                        found,
                        self.idle_group_walk(p, d),
                        "idle group of cpu {target} level {lvl}"
                    );
                    if let Some(c) = found {
                        return c;
                    }
                }
                target
            }
            SelectIdleSibling::IdleCpu => unreachable!("handled above"),
        }
    }

    /// The 3.8 `select_idle_sibling()` walk of one level: from the local
    /// group round the circular list, the first group whose CPUs are all
    /// idle and which holds an allowed CPU; that CPU
    /// (`cpumask_first_and(group, tsk_cpus_allowed)`).
    #[inline]
    fn idle_group_walk(
        &self,
        p: TaskId,
        d: &crate::sched::balance::domains::Domain,
    ) -> Option<usize> {
        let pinned = self.tasks[p as usize].allowed.is_some();
        let n = d.groups.len();
        for k in 0..n {
            let g = &d.groups[(d.local_group + k) % n];
            // The idle test first: it is what fails on a busy machine, and
            // an unpinned task may run anywhere.
            if !g.cpus.iter().all(|&c| self.idle_cpu(c as usize)) {
                continue;
            }
            if !pinned {
                return Some(g.cpus[0] as usize);
            }
            if let Some(&c) = g.cpus.iter().find(|&&c| self.allowed(p, c as usize)) {
                return Some(c as usize);
            }
        }
        None
    }

    fn smt_mask(&self, cpu: usize) -> impl Iterator<Item = usize> + '_ {
        let core = self.machine.cpu(cpu).core;
        let tpc = self.machine.threads_per_core as usize;
        let first = cpu - cpu % tpc;
        (first..first + tpc).filter(move |&c| self.machine.cpu(c).core == core)
    }

    fn sched_smt_active(&self) -> bool {
        self.machine.threads_per_core > 1
    }

    /// `select_idle_sibling(p, prev, target)` (6.6–6.18): target if idle,
    /// prev if idle and cache-affine, `recent_used_cpu`, then the LLC scan.
    /// `available_idle_cpu(cpu) || sched_idle_cpu(cpu)`: what the 6.x
    /// `select_idle_sibling()` path takes as idle.
    fn idle_for_wakeup(&self, cpu: usize) -> bool {
        self.idle_cpu(cpu) || self.sched_idle_cpu(cpu)
    }

    #[inline(never)]
    fn select_idle_sibling_6x(&mut self, p: TaskId, prev: usize, target: usize) -> usize {
        if self.idle_for_wakeup(target) {
            return target;
        }
        if prev != target && self.cpus_share_cache(prev, target) && self.idle_for_wakeup(prev) {
            return prev;
        }
        if self.kernel.recent_used_cpu {
            let r = self.wake.recent_used_cpu[p as usize] as usize;
            self.wake.recent_used_cpu[p as usize] = prev as u32;
            if r != prev
                && r != target
                && self.cpus_share_cache(r, target)
                && self.idle_for_wakeup(r)
                && self.allowed(p, r)
            {
                return r;
            }
        }
        let Some(lvl) = self.sd_llc(target) else {
            return target;
        };
        let llc = self.machine.cpu(target).llc as usize;
        let mut has_idle_core = false;
        if self.sched_smt_active() {
            has_idle_core = self.wake.has_idle_cores[llc];
            if !has_idle_core && self.cpus_share_cache(prev, target) {
                if let Some(i) = self.select_idle_smt(p, lvl, target, prev) {
                    return i;
                }
            }
        }
        self.select_idle_cpu(p, lvl, has_idle_core, target)
            .unwrap_or(target)
    }

    /// `select_idle_smt(p, sd, prev)`: an idle allowed SMT sibling of prev
    /// inside `sd_llc`.
    fn select_idle_smt(&self, p: TaskId, lvl: usize, target: usize, prev: usize) -> Option<usize> {
        let d = &self.sd[target][lvl];
        self.smt_mask(prev)
            .find(|&c| c != prev && self.allowed(p, c) && d.contains(c) && self.idle_for_wakeup(c))
    }

    /// `select_idle_cpu(p, sd_llc, has_idle_core, target)` (6.x): walk the
    /// LLC from target+1, wrapping (`for_each_cpu_wrap()` over
    /// `sched_domain_span(sd) ∩ p->cpus_ptr`); with an idle-core hint look
    /// for a whole idle core (`select_idle_core`), else for an idle CPU, at
    /// most `nr_idle_scan` of them under SIS_UTIL. A failed idle-core search
    /// clears the hint.
    ///
    /// The kernel's `cpus` scratch mask is not built: the span is sorted, so
    /// the wrap order is its CPUs above target, then those up to target; and
    /// `select_idle_core()`'s clearing of a visited core's siblings from
    /// `cpus` is "skip a CPU with an allowed sibling earlier in the wrap
    /// order" (the first one visited its core). For an unpinned task
    /// without the hint, the idle mask of `sched::balance::sg_sums` gives the first
    /// idle CPU in wrap order directly.
    fn select_idle_cpu(
        &mut self,
        p: TaskId,
        lvl: usize,
        has_idle_core: bool,
        target: usize,
    ) -> Option<usize> {
        let llc = self.machine.cpu(target).llc as usize;
        let mut nr = i64::MAX;
        if self.kernel.sis_util {
            nr = self.wake.nr_idle_scan[llc] as i64 + 1;
            if nr == 1 {
                return None;
            }
        }
        #[cfg(test)]
        let reference = self.select_idle_cpu_reference(p, lvl, has_idle_core, target, nr);
        let found = self.select_idle_cpu_scan(p, lvl, has_idle_core, target, nr);
        #[cfg(test)]
        assert_eq!(found, reference, "select_idle_cpu of cpu {target}");
        found
    }

    /// The scans of [`Sched::select_idle_cpu`] after its budget check.
    fn select_idle_cpu_scan(
        &mut self,
        p: TaskId,
        lvl: usize,
        has_idle_core: bool,
        target: usize,
        nr: i64,
    ) -> Option<usize> {
        if has_idle_core {
            let llc = self.machine.cpu(target).llc as usize;
            let (core, idle_cpu) = self.select_idle_core_walk(p, lvl, target);
            if core.is_none() {
                self.wake.has_idle_cores[llc] = false;
            }
            return core.or(idle_cpu);
        }
        let pinned = self.tasks[p as usize].allowed.is_some();
        match &self.balance.sg_sums {
            Some(s) if !pinned => {
                let found = sis_idle_from_mask(s, &self.sd[target][lvl].span, lvl, target, nr);
                #[cfg(debug_assertions)]
                assert_eq!(
                    found,
                    self.sis_scan_idle(p, lvl, target, nr),
                    "select_idle_cpu of cpu {target}"
                );
                found
            }
            _ => self.sis_scan_idle(p, lvl, target, nr),
        }
    }

    /// Tests only: the scans of [`Sched::select_idle_cpu`] as before (a
    /// `cpus` flag per CPU of the machine, cleared per visited core), for
    /// comparison at every call.
    #[cfg(test)]
    fn select_idle_cpu_reference(
        &self,
        p: TaskId,
        lvl: usize,
        has_idle_core: bool,
        target: usize,
        mut nr: i64,
    ) -> Option<usize> {
        let span = self.sd[target][lvl].span.clone();
        let mut cpus = vec![false; self.rqs.len()];
        for &c in span.iter() {
            cpus[c as usize] = self.allowed(p, c as usize);
        }
        let start = span.partition_point(|&c| c as usize <= target);
        let mut idle_cpu = None;
        for &c in span[start..].iter().chain(span[..start].iter()) {
            let cpu = c as usize;
            if !cpus[cpu] {
                continue;
            }
            if has_idle_core {
                let mut idle = true;
                for c in self.smt_mask(cpu) {
                    if !self.idle_cpu(c) {
                        idle = false;
                        if idle_cpu.is_none() {
                            if self.sched_idle_cpu(c) && cpus[c] {
                                idle_cpu = Some(c);
                                break;
                            }
                            continue;
                        }
                        break;
                    }
                    if idle_cpu.is_none() && cpus[c] {
                        idle_cpu = Some(c);
                    }
                }
                if idle {
                    return Some(cpu);
                }
                for c in self.smt_mask(cpu) {
                    cpus[c] = false;
                }
            } else {
                nr -= 1;
                if nr <= 0 {
                    return None;
                }
                if self.idle_cpu(cpu) || self.sched_idle_cpu(cpu) {
                    idle_cpu = Some(cpu);
                    break;
                }
            }
        }
        idle_cpu
    }

    /// The has_idle_core walk of `select_idle_cpu()` (6.x):
    /// `select_idle_core(p, cpu, cpus, &idle_cpu)` for each CPU of
    /// `sd_llc ∩ p->cpus_ptr` in wrap order from target+1 whose core was not
    /// visited yet. Returns the first whole idle core's CPU and `idle_cpu`
    /// (the first idle allowed sibling met before it).
    fn select_idle_core_walk(
        &self,
        p: TaskId,
        lvl: usize,
        target: usize,
    ) -> (Option<usize>, Option<usize>) {
        let d = &self.sd[target][lvl];
        let span = &d.span;
        let ncpus = self.rqs.len();
        // The position in wrap order from target+1.
        let key = |c: usize| if c > target { c } else { c + ncpus };
        // Whether `c` is still in the kernel's `cpus` when a sibling of a
        // not yet visited core reads it: in span and allowed.
        let in_cpus = |c: usize| self.allowed(p, c) && d.contains(c);
        let start = span.partition_point(|&c| c as usize <= target);
        let mut idle_cpu = None;
        for &c in span[start..].iter().chain(span[..start].iter()) {
            let cpu = c as usize;
            if !self.allowed(p, cpu) {
                continue;
            }
            // Cleared from `cpus` by the visit of an earlier sibling.
            if self.smt_mask(cpu).any(|s| key(s) < key(cpu) && in_cpus(s)) {
                continue;
            }
            let mut idle = true;
            for c in self.smt_mask(cpu) {
                if !self.idle_cpu(c) {
                    idle = false;
                    if idle_cpu.is_none() {
                        if self.sched_idle_cpu(c) && in_cpus(c) {
                            idle_cpu = Some(c);
                            break;
                        }
                        continue;
                    }
                    break;
                }
                if idle_cpu.is_none() && in_cpus(c) {
                    idle_cpu = Some(c);
                }
            }
            if idle {
                return (Some(cpu), idle_cpu);
            }
        }
        (None, idle_cpu)
    }

    /// The !has_idle_core walk of `select_idle_cpu()` (6.x): each allowed
    /// CPU of `sd_llc` in wrap order from target+1 spends one of the `nr`
    /// budget (`if (--nr <= 0) return -1`) before its idle test.
    fn sis_scan_idle(&self, p: TaskId, lvl: usize, target: usize, mut nr: i64) -> Option<usize> {
        let span = &self.sd[target][lvl].span;
        let start = span.partition_point(|&c| c as usize <= target);
        for &c in span[start..].iter().chain(span[..start].iter()) {
            let cpu = c as usize;
            if !self.allowed(p, cpu) {
                continue;
            }
            nr -= 1;
            if nr <= 0 {
                return None;
            }
            if self.idle_cpu(cpu) || self.sched_idle_cpu(cpu) {
                return Some(cpu);
            }
        }
        None
    }

    /// `__update_idle_core(rq)` (6.x): a CPU going idle whose SMT siblings
    /// are all idle sets its LLC's `has_idle_cores` hint.
    pub(crate) fn update_idle_core(&mut self, cpu: usize) {
        if self.kernel.select_idle_sibling != SelectIdleSibling::IdleCpu || !self.sched_smt_active()
        {
            return;
        }
        let llc = self.machine.cpu(cpu).llc as usize;
        if self.wake.has_idle_cores[llc] {
            return;
        }
        if self.smt_mask(cpu).all(|c| c == cpu || self.idle_cpu(c)) {
            self.wake.has_idle_cores[llc] = true;
        }
    }

    /// `update_idle_cpu_scan(env, sum_util)` (6.0+ SIS_UTIL): a periodic
    /// (not newly idle) balance pass at the LLC level sets the LLC's scan
    /// depth from the summed `cpu_util_cfs()` of its CPUs.
    pub(crate) fn update_idle_cpu_scan(&mut self, this_cpu: usize, lvl: usize) {
        if !self.kernel.sis_util || self.sd_llc(this_cpu) != Some(lvl) {
            return;
        }
        let n = self.sd[this_cpu][lvl].span.len();
        let mut sum_util = 0;
        for k in 0..n {
            let c = self.sd[this_cpu][lvl].span[k] as usize;
            sum_util += self.pelt_cpu_util(c);
        }
        let pct = self.sd[this_cpu][lvl].imbalance_pct;
        let llc = self.machine.cpu(this_cpu).llc as usize;
        self.wake.nr_idle_scan[llc] = idle_cpu_scan(sum_util, n as u64, pct) as u32;
    }

    /// Wake-up path of `select_task_rq_fair()` (SD_BALANCE_WAKE is off at
    /// every level, so only the affine/idle-sibling logic runs).
    pub(crate) fn select_task_rq_wake(
        &mut self,
        p: TaskId,
        prev_cpu: usize,
        waker_cpu: usize,
        waker: Option<TaskId>,
        sync: bool,
    ) -> usize {
        let allowed_n = self.tasks[p as usize].allowed.as_ref().map(|a| a.len());
        if allowed_n == Some(1) {
            return self.tasks[p as usize].allowed.as_ref().expect("pinned")[0] as usize;
        }
        if !self.allowed(p, prev_cpu) {
            return self.select_fallback_rq(p, prev_cpu);
        }
        // Alex Shi's power policies (`sched::balance::power`): power_wake.
        if self.power_policy_on() {
            if let Some(cpu) = self.select_task_rq_power(p, waker_cpu, false) {
                return cpu;
            }
        }
        // 4.3+: record_wakee() and wake_wide() decide want_affine; an
        // unaffine wake-up then still looks for an idle CPU near prev
        // (select_idle_sibling(p, prev, prev) in 6.x).
        let modern = self.kernel.wake_wide;
        let mut want_affine = self.allowed(p, waker_cpu);
        if modern {
            if let Some(w) = waker {
                self.record_wakee(w, p);
            }
            want_affine &= !self.wake_wide(p, waker, waker_cpu);
        }
        if !want_affine || self.sd[waker_cpu].is_empty() {
            return if modern {
                self.select_idle_sibling(p, prev_cpu, waker_cpu)
            } else {
                prev_cpu
            };
        }
        let affine = self.sd[waker_cpu].iter().position(|d| {
            d.has(sd::LOAD_BALANCE) && d.has(sd::WAKE_AFFINE) && d.contains(prev_cpu)
        });
        let Some(lvl) = affine else {
            return if modern {
                self.select_idle_sibling(p, prev_cpu, waker_cpu)
            } else {
                prev_cpu
            };
        };
        let target = if waker_cpu == prev_cpu
            || self.wake_affine(p, waker_cpu, prev_cpu, lvl, waker, sync)
        {
            waker_cpu
        } else {
            prev_cpu
        };
        self.select_idle_sibling(p, target, waker_cpu)
    }

    /// `find_idlest_group()` (kernel/sched/fair.c 3.8, 2.6.36 alike): the
    /// least-loaded group, if it beats the local one by half the
    /// imbalance_pct. At load index 0 (`forkexec_idx` of every preset) a
    /// group's load is Σ `weighted_cpuload()`, read from the group sums
    /// where they are kept (`sched::balance::sg_sums`, 96+ CPUs) instead of walking
    /// its CPUs; debug builds check the two agree.
    fn find_idlest_group(&self, p: TaskId, this_cpu: usize, lvl: usize) -> Option<usize> {
        let d = &self.sd[this_cpu][lvl];
        let idx = d.forkexec_idx;
        let imb = 100 + (d.imbalance_pct - 100) / 2;
        let mut min_load = u64::MAX;
        let mut this_load = 0;
        let mut idlest = None;
        for (g, group) in d.groups.iter().enumerate() {
            if !group.cpus.iter().any(|&c| self.allowed(p, c as usize)) {
                continue;
            }
            let local = g == d.local_group;
            let walk = || -> u64 {
                group
                    .cpus
                    .iter()
                    .map(|&c| {
                        if local {
                            self.source_load(c as usize, idx)
                        } else {
                            self.target_load(c as usize, idx)
                        }
                    })
                    .sum()
            };
            let summed = match &self.balance.sg_sums {
                Some(sums) if idx == 0 => sums.group(this_cpu, lvl, g).map(|gs| gs.load),
                _ => None,
            };
            let sum = match summed {
                Some(load) => {
                    debug_assert_eq!(load, walk(), "group sums: find_idlest_group");
                    load
                }
                None => walk(),
            };
            let avg = sum * SCALE / group.power;
            if local {
                this_load = avg;
            } else if avg < min_load {
                min_load = avg;
                idlest = Some(g);
            }
        }
        match idlest {
            Some(g) if 100 * this_load >= imb * min_load => Some(g),
            _ => None,
        }
    }

    /// `find_idlest_cpu()`: the allowed CPU of the group with the least
    /// weighted load (ties go to `this_cpu`).
    fn find_idlest_cpu(&self, p: TaskId, this_cpu: usize, lvl: usize, g: usize) -> Option<usize> {
        let mut min = u64::MAX;
        let mut best = None;
        for &c in &self.sd[this_cpu][lvl].groups[g].cpus {
            let c = c as usize;
            if !self.allowed(p, c) {
                continue;
            }
            let load = self.weighted_cpuload(c);
            if load < min || (load == min && c == this_cpu) {
                min = load;
                best = Some(c);
            }
        }
        best
    }

    /// Fork path of `select_task_rq_fair()` (SD_BALANCE_FORK): from the
    /// highest domain with the flag, descend through the idlest group to the
    /// idlest CPU.
    pub(crate) fn select_task_rq_fork(&mut self, p: TaskId, parent_cpu: usize) -> usize {
        // Alex Shi's power policies (`sched::balance::power`): power_fork_exec.
        if self.power_policy_on() {
            if let Some(cpu) = self.select_task_rq_power(p, parent_cpu, true) {
                return cpu;
            }
        }
        let mut cpu = parent_cpu;
        let mut new_cpu = if self.allowed(p, cpu) {
            cpu
        } else {
            self.tasks[p as usize]
                .allowed
                .as_ref()
                .map_or(cpu, |a| a[0] as usize)
        };
        let mut top = self.sd[cpu]
            .iter()
            .rposition(|d| d.has(sd::LOAD_BALANCE) && d.has(sd::BALANCE_FORK));
        while let Some(lvl) = top {
            if !self.sd[cpu][lvl].has(sd::BALANCE_FORK) {
                top = lvl.checked_sub(1);
                continue;
            }
            let Some(g) = self.find_idlest_group(p, cpu, lvl) else {
                top = lvl.checked_sub(1);
                continue;
            };
            match self.find_idlest_cpu(p, cpu, lvl, g) {
                None => top = lvl.checked_sub(1),
                Some(c) if c == cpu => top = lvl.checked_sub(1),
                Some(c) => {
                    let weight = self.sd[cpu][lvl].span.len();
                    cpu = c;
                    new_cpu = c;
                    let below = self.sd[cpu]
                        .iter()
                        .take_while(|d| d.span.len() < weight)
                        .count();
                    top = self.sd[cpu][..below]
                        .iter()
                        .rposition(|d| d.has(sd::BALANCE_FORK));
                }
            }
        }
        new_cpu
    }
}

/// [`Sched::sis_scan_idle`] for an unpinned task from the idle mask of
/// `sched::balance::sg_sums`: the first idle CPU of `span` (`cpu`'s domain at `lvl`,
/// sorted) in wrap order from target+1, if it is the k-th CPU of that order
/// and the budget `nr` outlasts k CPUs (k < nr).
fn sis_idle_from_mask(
    s: &crate::sched::balance::sg_sums::SgSums,
    span: &[u32],
    lvl: usize,
    target: usize,
    nr: i64,
) -> Option<usize> {
    let mask = s.span_mask(target, lvl);
    let lo = span[0] as usize;
    let hi = span[span.len() - 1] as usize + 1;
    let c = s
        .idle
        .next_and_in(mask, target + 1, hi)
        .or_else(|| s.idle.next_and_in(mask, lo, target + 1))?;
    let start = span.partition_point(|&x| x as usize <= target);
    let pos = span.partition_point(|&x| (x as usize) < c);
    let k = if pos >= start {
        pos - start + 1
    } else {
        span.len() - start + pos + 1
    };
    ((k as i64) < nr).then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_wide_needs_both_partners_flipping() {
        // factor = sd_llc_size = 2 on vm-2.
        assert!(wake_wide_test(10, 2, 2)); // slave 2 >= 2, master 10 >= 4
        assert!(wake_wide_test(2, 10, 2)); // symmetric: the larger is master
        assert!(!wake_wide_test(3, 2, 2)); // master 3 < 2·2
        assert!(!wake_wide_test(100, 1, 2)); // slave below the LLC size
        assert!(wake_wide_test(64, 8, 8)); // 8 >= 8, 64 >= 64
        assert!(!wake_wide_test(63, 8, 8));
    }

    #[test]
    fn wake_affine_weight_by_hand() {
        // Not sync, equal capacities, MC imbalance_pct 125 → bias 112.
        // this 1024+1024 = 2048·100 = 204800 vs prev (2048−1024)·112 = 114688.
        assert!(!wake_affine_weight_test(
            1024, 2048, 1024, None, 1024, 1024, 125
        ));
        // Idle waker CPU: 1024·100 = 102400 < 114688 → affine.
        assert!(wake_affine_weight_test(
            0, 2048, 1024, None, 1024, 1024, 125
        ));
        // Sync with the waker heavier than its CPU's load: affine at once.
        assert!(wake_affine_weight_test(
            512,
            0,
            1024,
            Some(1024),
            1024,
            1024,
            125
        ));
        // Sync: this = (2048−1024)+1024 = 2048·100 = 204800; prev =
        // (2048−1024)·112 + 1 = 114689 → not affine.
        assert!(!wake_affine_weight_test(
            2048,
            2048,
            1024,
            Some(1024),
            1024,
            1024,
            125
        ));
        // Sync tie-break: this (1024−1024+1024)·100 = 102400, prev
        // (1938−1024)·112 = 102368, +1 = 102369 → not affine; one more
        // unit of prev load (1939: 102480+1) → affine.
        assert!(!wake_affine_weight_test(
            1024,
            1938,
            1024,
            Some(1024),
            1024,
            1024,
            125
        ));
        assert!(wake_affine_weight_test(
            1024,
            1939,
            1024,
            Some(1024),
            1024,
            1024,
            125
        ));
    }

    #[test]
    fn sis_util_scan_depth_by_hand() {
        // An idle LLC scans every CPU.
        assert_eq!(idle_cpu_scan(0, 8, 117), 8);
        // 50 %: x' = 512, 512²·117²/(10⁴·1024) = 350, y = 674, 674·8/1024 = 5.
        assert_eq!(idle_cpu_scan(4 * 1024, 8, 117), 5);
        // 85 %: x' = 870, tmp = 1011, y = 13, 13·8/1024 = 0: no scan.
        assert_eq!(idle_cpu_scan(870 * 8, 8, 117), 0);
        // Over 100/117: clamped, 0.
        assert_eq!(idle_cpu_scan(1024 * 8, 8, 117), 0);
        // The commit's 112-CPU table: 25 % → 103 (within the rounding of
        // its own pct formula, which the merged quadratic replaced).
        let n = idle_cpu_scan(112 * 256, 112, 117);
        assert!((100..=104).contains(&n), "{n}");
    }
}
