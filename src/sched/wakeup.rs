//! Wake-up and fork placement, after `kernel/sched_fair.c` (2.6.36) and
//! `kernel/sched/fair.c` (3.8): `select_task_rq_fair()`, `wake_affine()`,
//! `select_idle_sibling()`, `find_idlest_group()`, `find_idlest_cpu()`.
//! No task groups: `effective_load()` is the weight itself.

use super::fair::TaskId;
use crate::domains::{sd, SCALE};
use crate::engine::Sim;
use crate::kernel::SelectIdleSibling;

impl Sim<'_> {
    /// `wake_affine(sd, p, sync)`: may `p` be pulled to the waker's CPU?
    /// Compares the loads with the waker's weight removed on a sync wake-up,
    /// with half the level's imbalance_pct as slack.
    fn wake_affine(
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
            let this_eff = 100 * self.cpu_power[prev_cpu] as i64 * (this_load + weight);
            let prev_eff = imb as i64 * self.cpu_power[this_cpu] as i64 * load;
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
    fn select_idle_sibling(&self, p: TaskId, target: usize, waker_cpu: usize) -> usize {
        let prev_cpu = self.tasks[p as usize].cpu as usize;
        if target == waker_cpu && self.idle_cpu(waker_cpu) {
            return waker_cpu;
        }
        match self.kernel.select_idle_sibling {
            SelectIdleSibling::AnyIdle => {
                if target == prev_cpu && self.idle_cpu(prev_cpu) {
                    return prev_cpu;
                }
                // Any idle allowed CPU in target's SHARE_PKG_RESOURCES
                // domains, up to the one spanning waker and prev.
                let mut t = target;
                for d in &self.sd[target] {
                    if !d.has(sd::SHARE_PKG_RESOURCES) {
                        break;
                    }
                    if let Some(&i) = d
                        .span
                        .iter()
                        .find(|&&i| self.allowed(p, i as usize) && self.idle_cpu(i as usize))
                    {
                        t = i as usize;
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
                    let n = d.groups.len();
                    for k in 0..n {
                        let g = &d.groups[(d.local_group + k) % n];
                        // The idle test first: it is what fails on a busy
                        // machine, and an unpinned task may run anywhere.
                        if !g.cpus.iter().all(|&c| self.idle_cpu(c as usize)) {
                            continue;
                        }
                        if !pinned {
                            return g.cpus[0] as usize;
                        }
                        // cpumask_first_and(group, tsk_cpus_allowed); a
                        // group with none allowed is skipped.
                        if let Some(&c) = g.cpus.iter().find(|&&c| self.allowed(p, c as usize)) {
                            return c as usize;
                        }
                    }
                }
                target
            }
        }
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
            return self.tasks[p as usize]
                .allowed
                .as_ref()
                .map_or(prev_cpu, |a| a[0] as usize);
        }
        if !self.allowed(p, waker_cpu) || self.sd[waker_cpu].is_empty() {
            return prev_cpu;
        }
        let affine = self.sd[waker_cpu].iter().position(|d| {
            d.has(sd::LOAD_BALANCE) && d.has(sd::WAKE_AFFINE) && d.contains(prev_cpu)
        });
        let Some(lvl) = affine else { return prev_cpu };
        let target = if waker_cpu == prev_cpu
            || self.wake_affine(p, waker_cpu, prev_cpu, lvl, waker, sync)
        {
            waker_cpu
        } else {
            prev_cpu
        };
        self.select_idle_sibling(p, target, waker_cpu)
    }

    /// `find_idlest_group()`: the least-loaded group, if it beats the local
    /// one by half the imbalance_pct.
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
            let sum: u64 = group
                .cpus
                .iter()
                .map(|&c| {
                    if local {
                        self.source_load(c as usize, idx)
                    } else {
                        self.target_load(c as usize, idx)
                    }
                })
                .sum();
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
