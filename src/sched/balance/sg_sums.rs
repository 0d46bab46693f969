//! Running sums per sched group for the 3.x balancer and the 2.6.36/3.8
//! wake-up scans (the 6.x `select_idle_cpu()` keeps only the idle mask:
//! [`groups_wanted`]): for every group of more than one CPU, Σ
//! `weighted_cpuload()`, Σ `nr_running`, the number of `idle_cpu()` CPUs
//! and of CPUs with no task / with two or more; the idle CPUs as a
//! `CpuMask`, and per level the fully idle groups as a mask of their first
//! CPUs. `Sched::update_sg_sums` applies a runqueue's change to the groups
//! holding its CPU, so reading a group's sums costs O(1) instead of a walk
//! over its CPUs.
//!
//! Not in the kernel: `update_sg_lb_stats()` and `select_idle_sibling()`
//! walk the groups' CPUs at every call, and the model still charges the
//! balancer's walk (`lb_per_cpu_ns`); the sums only make the simulator's
//! own work independent of the groups' size. They are exact (integers), so
//! every result is the walk's; debug builds compare the two at every use
//! (`sched::balance`, `sched::fair::wakeup`).
//!
//! A group is identified by its CPUs: the groups of a level are built once
//! per span and shared by its CPUs (`domains::build`), and a group with the
//! same CPUs at another level (or under another span's `Arc`) has the same
//! sums, so it gets the same id.

use crate::kernel::{Balancer, Kernel, SelectIdleSibling};
use crate::sched::balance::domains::Domain;
use crate::sched::cpumask::CpuMask;
use crate::sched::Sched;
use std::collections::HashMap;
use std::sync::Arc;

/// Machines smaller than this keep no sums: their groups are few and
/// small, and walking them costs less than keeping the sums at every
/// runqueue change (callgrind, hackbench pipe thread under v3.8: at 64
/// CPUs the sums took 0.8 % more instructions per event than the walk; at
/// 112, 4.7 % fewer than main's walk).
pub(crate) const SG_SUMS_MIN_CPUS: usize = 96;

/// Whether a run keeps the sums or at least the idle mask: on a machine of
/// at least [`SG_SUMS_MIN_CPUS`] CPUs, always (every `select_idle_sibling()`
/// reads the idle mask: the 6.x `select_idle_cpu()` too).
pub(crate) fn wanted(ncpus: usize) -> bool {
    ncpus >= SG_SUMS_MIN_CPUS
}

/// Whether a run that keeps the idle mask also keeps the per-group sums and
/// fully idle masks: when something reads them (the 3.x balancer or the
/// 2.6.36/3.8 `select_idle_sibling()`; the 5.5+ balancer and the 6.x
/// wake-up scan read only the idle mask).
pub(crate) fn groups_wanted(k: &Kernel) -> bool {
    k.balancer == Balancer::CpuLoad || k.select_idle_sibling != SelectIdleSibling::IdleCpu
}

/// The id of a single-CPU group: it has no sums (its CPU's runqueue is
/// read directly).
pub(crate) const NO_ID: u32 = u32::MAX;

/// One group's sums.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupSum {
    /// Σ `weighted_cpuload()` (`cfs.load`).
    pub load: u64,
    /// Σ `cfs.nr_running`.
    pub nr_running: u64,
    /// CPUs for which `idle_cpu()` holds.
    pub idle_cpus: u64,
    /// CPUs with `nr_running` 0 (load 0) and with `nr_running` ≥ 2: they
    /// bound the spread `group_imb` tests (`Sched::sg_group_imb`).
    pub empty_cpus: u64,
    pub overloaded_cpus: u64,
}

/// What a CPU last added to its groups' sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Contrib {
    load: u64,
    nr_running: u32,
    idle: bool,
}

/// The sums of every multi-CPU group of the machine, and the idle masks.
#[derive(Clone, Debug)]
pub(crate) struct SgSums {
    sums: Vec<GroupSum>,
    /// Per group id: its first CPU, its weight and the group lists
    /// (`fully_idle` masks) holding it.
    group_first: Vec<u32>,
    group_weight: Vec<u64>,
    group_lists: Vec<Vec<u32>>,
    /// Per CPU and level: the id of each of the domain's groups, in the
    /// domain's group order ([`NO_ID`] for a single CPU); shared by the
    /// CPUs that share the groups.
    ids: Vec<Vec<Arc<[u32]>>>,
    /// Per CPU and level: the index of the domain's group list in
    /// `fully_idle` ([`NO_ID`] for a list of single CPUs).
    list_of: Vec<Vec<u32>>,
    /// Per CPU: the ids of the multi-CPU groups holding it (one per level).
    member_of: Vec<Box<[u32]>>,
    /// Per CPU and level: the domain's span as a mask (shared likewise).
    span_masks: Vec<Vec<Arc<CpuMask>>>,
    /// Per group list (the groups of one span at one level, as
    /// `domains::build` shares them): the first CPUs of its groups whose
    /// CPUs are all idle.
    fully_idle: Vec<CpuMask>,
    last: Vec<Contrib>,
    /// Whether the per-group sums and `fully_idle` are kept
    /// ([`groups_wanted`]); without them only `idle` is.
    groups: bool,
    /// The CPUs for which `idle_cpu()` holds.
    pub idle: CpuMask,
}

impl SgSums {
    /// The sums of `sd`'s groups with every runqueue empty and idle (as
    /// `Sched::new` makes them); without `groups`, only the idle mask (and
    /// the span masks) are kept up to date.
    pub fn new(sd: &[Vec<Domain>], groups: bool) -> Self {
        let n = sd.len();
        let mut id_of: HashMap<&[u32], u32> = HashMap::new();
        let mut sums: Vec<GroupSum> = Vec::new();
        let mut group_first: Vec<u32> = Vec::new();
        let mut group_weight: Vec<u64> = Vec::new();
        let mut group_lists: Vec<Vec<u32>> = Vec::new();
        let mut fully_idle: Vec<CpuMask> = Vec::new();
        // Per group list (keyed by its `Arc`): the ids and the list index.
        let mut ids_memo: HashMap<usize, (Arc<[u32]>, u32)> = HashMap::new();
        let mut mask_memo: HashMap<usize, Arc<CpuMask>> = HashMap::new();
        let mut ids = Vec::with_capacity(n);
        let mut list_of = Vec::with_capacity(n);
        let mut member_of = Vec::with_capacity(n);
        let mut span_masks = Vec::with_capacity(n);
        for doms in sd {
            let mut cpu_ids = Vec::with_capacity(doms.len());
            let mut cpu_lists = Vec::with_capacity(doms.len());
            let mut cpu_masks = Vec::with_capacity(doms.len());
            let mut mine = Vec::new();
            for d in doms {
                let key = Arc::as_ptr(&d.groups) as *const u8 as usize;
                let (level_ids, list) = ids_memo
                    .entry(key)
                    .or_insert_with(|| {
                        // The groups are in the order of their first CPUs
                        // (`domains::build`): `first_idle_group` needs it.
                        assert!(d.groups.windows(2).all(|w| w[0].cpus[0] < w[1].cpus[0]));
                        let singles = d.groups.iter().all(|g| g.cpus.len() < 2);
                        // A level's groups are all single CPUs or none is
                        // (`Machine`s are regular).
                        assert!(singles || d.groups.iter().all(|g| g.cpus.len() >= 2));
                        let list = if singles {
                            NO_ID
                        } else {
                            let mut m = CpuMask::new(n);
                            for g in d.groups.iter() {
                                m.set(g.cpus[0] as usize);
                            }
                            fully_idle.push(m);
                            fully_idle.len() as u32 - 1
                        };
                        let level_ids: Arc<[u32]> = d
                            .groups
                            .iter()
                            .map(|g| {
                                if g.cpus.len() < 2 {
                                    return NO_ID;
                                }
                                let id = *id_of.entry(&g.cpus[..]).or_insert_with(|| {
                                    sums.push(GroupSum {
                                        idle_cpus: g.cpus.len() as u64,
                                        empty_cpus: g.cpus.len() as u64,
                                        ..GroupSum::default()
                                    });
                                    group_first.push(g.cpus[0]);
                                    group_weight.push(g.cpus.len() as u64);
                                    group_lists.push(Vec::new());
                                    sums.len() as u32 - 1
                                });
                                if list != NO_ID {
                                    group_lists[id as usize].push(list);
                                }
                                id
                            })
                            .collect();
                        (level_ids, list)
                    })
                    .clone();
                if level_ids[d.local_group] != NO_ID {
                    mine.push(level_ids[d.local_group]);
                }
                cpu_ids.push(level_ids);
                cpu_lists.push(list);
                let key = Arc::as_ptr(&d.span) as *const u8 as usize;
                let mask = mask_memo
                    .entry(key)
                    .or_insert_with(|| {
                        let mut m = CpuMask::new(n);
                        for &c in d.span.iter() {
                            m.set(c as usize);
                        }
                        Arc::new(m)
                    })
                    .clone();
                cpu_masks.push(mask);
            }
            ids.push(cpu_ids);
            list_of.push(cpu_lists);
            if !groups {
                mine.clear();
            }
            member_of.push(mine.into_boxed_slice());
            span_masks.push(cpu_masks);
        }
        let idle = Contrib {
            load: 0,
            nr_running: 0,
            idle: true,
        };
        SgSums {
            sums,
            group_first,
            group_weight,
            group_lists,
            ids,
            list_of,
            member_of,
            span_masks,
            fully_idle,
            last: vec![idle; n],
            groups,
            idle: CpuMask::full(n),
        }
    }

    /// Replace `cpu`'s contribution with its runqueue's current values.
    #[inline]
    fn update(&mut self, cpu: usize, load: u64, nr_running: u32, idle: bool) {
        let new = Contrib {
            load,
            nr_running,
            idle,
        };
        let old = self.last[cpu];
        if old == new {
            return;
        }
        self.last[cpu] = new;
        if old.idle != idle {
            if idle {
                self.idle.set(cpu);
            } else {
                self.idle.clear(cpu);
            }
        }
        for &g in self.member_of[cpu].iter() {
            let s = &mut self.sums[g as usize];
            s.load = s.load - old.load + load;
            s.nr_running = s.nr_running - old.nr_running as u64 + nr_running as u64;
            s.empty_cpus = s.empty_cpus - (old.nr_running == 0) as u64 + (nr_running == 0) as u64;
            s.overloaded_cpus =
                s.overloaded_cpus - (old.nr_running >= 2) as u64 + (nr_running >= 2) as u64;
            if old.idle != idle {
                // The group becomes, or stops being, fully idle as its idle
                // count reaches, or leaves, its weight.
                let weight = self.group_weight[g as usize];
                let was_full = s.idle_cpus == weight;
                s.idle_cpus = s.idle_cpus - old.idle as u64 + idle as u64;
                if was_full != (s.idle_cpus == weight) {
                    let first = self.group_first[g as usize] as usize;
                    for &l in &self.group_lists[g as usize] {
                        if idle {
                            self.fully_idle[l as usize].set(first);
                        } else {
                            self.fully_idle[l as usize].clear(first);
                        }
                    }
                }
            }
        }
    }

    /// The sums of group `g` of `cpu`'s domain at `lvl`; `None` for a
    /// single-CPU group, and when the sums are not kept (the caller walks).
    #[inline]
    pub fn group(&self, cpu: usize, lvl: usize, g: usize) -> Option<GroupSum> {
        let id = self.ids[cpu][lvl][g];
        (id != NO_ID && self.groups).then(|| self.sums[id as usize])
    }

    /// The span of `cpu`'s domain at `lvl` as a mask.
    #[inline]
    pub fn span_mask(&self, cpu: usize, lvl: usize) -> &CpuMask {
        &self.span_masks[cpu][lvl]
    }

    /// The first group of `cpu`'s domain `d` at `lvl` whose CPUs are all
    /// idle, in the kernel's order (the circular group list from the local
    /// group): the first set bit, from the local group's first CPU and
    /// wrapping round the span, of the level's mask of fully idle groups'
    /// first CPUs (of the idle mask for single-CPU groups).
    pub fn first_idle_group(&self, d: &Domain, cpu: usize, lvl: usize) -> Option<usize> {
        assert!(self.groups, "fully idle masks are not kept");
        let list = self.list_of[cpu][lvl];
        let firsts = if list == NO_ID {
            &self.idle
        } else {
            &self.fully_idle[list as usize]
        };
        let span = &*self.span_masks[cpu][lvl];
        let start = d.groups[d.local_group].cpus[0] as usize;
        let lo = d.span[0] as usize;
        let hi = d.span[d.span.len() - 1] as usize + 1;
        let c = firsts
            .next_and_in(span, start, hi)
            .or_else(|| firsts.next_and_in(span, lo, start))?;
        Some(d.groups.partition_point(|g| (g.cpus[0] as usize) < c))
    }
}

impl Sched<'_> {
    /// Bring `cpu`'s share of the group sums and the idle mask up to date
    /// after its runqueue changed: `cfs.load`, `cfs.nr_running` or
    /// `cfs.curr` (which `idle_cpu()` reads). Called after every
    /// enqueue, dequeue, `set_next_entity()` and `put_prev_entity()`. The
    /// kernel has no such hook (it walks the groups' CPUs when it needs
    /// their totals); see the module comment.
    #[inline]
    pub(crate) fn update_sg_sums(&mut self, cpu: usize) {
        if self.balance.sg_sums.is_some() {
            self.update_sg_sums_of(cpu);
        }
    }

    // Out of line: the hook's call sites (`schedule()` among them) stay
    // small on the machines that keep no sums.
    #[inline(never)]
    fn update_sg_sums_of(&mut self, cpu: usize) {
        let idle = self.idle_cpu(cpu);
        let cfs = &self.rqs[cpu].cfs;
        let (load, nr) = (cfs.load, cfs.nr_running);
        if let Some(s) = self.balance.sg_sums.as_mut() {
            s.update(cpu, load, nr, idle);
        }
    }

    /// Not user-facing, for the equivalence tests, before the run: keep
    /// the sums (whatever the machine's size) or drop them, so that the
    /// balancer and the wake-up scans walk the groups' CPUs as before.
    #[cfg(test)]
    pub(crate) fn set_group_sums(&mut self, on: bool) {
        self.balance.sg_sums = on.then(|| SgSums::new(&self.sd, groups_wanted(self.kernel)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Machine;

    #[test]
    fn big_machines_keep_the_idle_mask_and_3x_readers_the_group_sums() {
        assert!(!wanted(64));
        assert!(!wanted(95));
        assert!(wanted(96));
        assert!(wanted(112));
        assert!(groups_wanted(&Kernel::v3_8()));
        assert!(!groups_wanted(&Kernel::v6_18()));
    }

    #[test]
    fn groups_with_the_same_cpus_share_an_id_and_singletons_have_none() {
        let m = Machine::new(2, 4, 2, None, Some(2)).unwrap();
        let sd = crate::sched::balance::domains::build(&m, &Kernel::v3_8());
        let s = SgSums::new(&sd, true);
        for (cpu, doms) in sd.iter().enumerate() {
            for (lvl, d) in doms.iter().enumerate() {
                for (g, grp) in d.groups.iter().enumerate() {
                    let sum = s.group(cpu, lvl, g);
                    assert_eq!(sum.is_none(), grp.cpus.len() == 1);
                    if let Some(sum) = sum {
                        assert_eq!(sum.idle_cpus, grp.cpus.len() as u64);
                    }
                }
                let span: Vec<usize> = d.span.iter().map(|&c| c as usize).collect();
                let mask: Vec<usize> = (0..16).filter(|&c| s.span_mask(cpu, lvl).test(c)).collect();
                assert_eq!(span, mask);
            }
        }
        // CPU 0's MC-level local group (its core) and CPU 1's are the same.
        let core = |cpu: usize| s.ids[cpu][1][sd[cpu][1].local_group];
        assert_eq!(core(0), core(1));
        assert_ne!(core(0), core(2));
        let mut s = s;
        s.update(1, 1024, 1, false);
        s.update(0, 2048, 2, false);
        s.update(0, 1024, 1, false);
        let g = s.group(0, 1, sd[0][1].local_group).unwrap();
        assert_eq!(
            g,
            GroupSum {
                load: 2048,
                nr_running: 2,
                idle_cpus: 0,
                empty_cpus: 0,
                overloaded_cpus: 0,
            }
        );
        assert_eq!(s.idle.first(), Some(2));
    }
}
