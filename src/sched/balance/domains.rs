//! Sched domains and groups, built per CPU from the `Machine` the way the
//! kernel's `build_sched_domains()` does (kernel/sched.c 2.6.36;
//! kernel/sched/core.c 3.8), with the per-level defaults of
//! include/linux/topology.h and arch/x86/include/asm/topology.h (the
//! tables and where each was read: docs/newidle.md, docs/sources.md).
//!
//! Levels, bottom up: SIBLING/SMT (the core's threads), MC (the LLC), CPU
//! (`cpu_cpu_mask` = the NUMA node), then NODE (2.6.36: the node's span of
//! up to 16 nearest nodes) or one NUMA level per distinct node distance (3.8,
//! `sched_init_numa`). The groups of a level are the spans of the level
//! below (single CPUs at the bottom). A level whose span is one CPU or equals
//! its child's span is degenerate and removed (`sd_degenerate`,
//! `sd_parent_degenerate`). Simplification: overlapping NUMA groups
//! (SD_OVERLAP) reduce to node groups, which is exact for the presets' full
//! meshes of equal distances.

use crate::kernel::{Kernel, SdInit, SdNuma};
use crate::topology::Machine;
use std::collections::HashMap;
use std::sync::Arc;

/// SD_* flags (include/linux/sched.h, 2.6.3x–3.4 values).
pub mod sd {
    pub const LOAD_BALANCE: u32 = 0x0001;
    pub const BALANCE_NEWIDLE: u32 = 0x0002;
    pub const BALANCE_EXEC: u32 = 0x0004;
    pub const BALANCE_FORK: u32 = 0x0008;
    pub const BALANCE_WAKE: u32 = 0x0010;
    pub const WAKE_AFFINE: u32 = 0x0020;
    pub const SHARE_CPUPOWER: u32 = 0x0080;
    pub const SHARE_PKG_RESOURCES: u32 = 0x0200;
    pub const SERIALIZE: u32 = 0x0400;
    pub const PREFER_SIBLING: u32 = 0x1000;
}

/// `SCHED_LOAD_SCALE` / `SCHED_POWER_SCALE`.
pub const SCALE: u64 = 1024;

/// A `struct sched_group`: its CPUs, its power (`sgp->power`, the sum of
/// its CPUs' `cpu_power`) and its number of cores (`sg->cores`, 6.6: set
/// once with the domains, `init_sched_groups_capacity()`).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub cpus: Vec<u32>,
    pub power: u64,
    pub cores: u32,
}

/// The distinct cores among `cpus` (`sg->cores`).
pub fn group_cores(machine: &Machine, cpus: &[u32]) -> u32 {
    let mut cores: Vec<u32> = cpus.iter().map(|&c| machine.cpu(c as usize).core).collect();
    cores.sort_unstable();
    cores.dedup();
    cores.len() as u32
}

/// One CPU's `struct sched_domain` at one level: the static parameters and
/// the per-CPU balancing state the kernel keeps in it.
#[derive(Clone, Debug)]
pub struct Domain {
    pub name: &'static str,
    /// Sorted CPUs of the span (shared by the span's CPUs).
    pub span: Arc<[u32]>,
    /// The level's groups (shared by the span's CPUs, as the kernel's
    /// `struct sched_group`s are).
    pub groups: Arc<[Group]>,
    /// Index of the group holding this CPU (the kernel's `sd->groups`).
    pub local_group: usize,
    pub flags: u32,
    pub min_interval: u64,
    pub max_interval: u64,
    pub busy_factor: u64,
    pub imbalance_pct: u64,
    pub cache_nice_tries: u32,
    pub busy_idx: usize,
    pub idle_idx: usize,
    pub newidle_idx: usize,
    pub wake_idx: usize,
    pub forkexec_idx: usize,
    /// Balancing state: `balance_interval` (ms), `nr_balance_failed`,
    /// `last_balance` (ns, jiffy-aligned).
    pub balance_interval: u64,
    pub nr_balance_failed: u32,
    pub last_balance: u64,
    /// 3.13 `max_newidle_lb_cost` (ns) and the time of its next decay.
    pub max_newidle_lb_cost: u64,
    pub next_decay_max_lb_cost: u64,
    /// 5.16 `last_decay_max_lb_cost` (ns, jiffy-aligned): when the max was
    /// last raised or decayed (`update_newidle_cost()`).
    pub last_decay_max_lb_cost: u64,
    /// NI_RANDOM (33cf66d88306) statistics: `newidle_call`,
    /// `newidle_success`, `newidle_ratio` (512/256/512 from `sd_init()`).
    pub newidle_call: u32,
    pub newidle_success: u32,
    pub newidle_ratio: u32,
}

impl Domain {
    pub fn contains(&self, cpu: usize) -> bool {
        self.span.binary_search(&(cpu as u32)).is_ok()
    }

    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lv {
    Smt,
    Mc,
    Cpu,
    Node,
}

struct Params {
    min: u64,
    max: u64,
    busy: u64,
    imb: u64,
    cnt: u32,
    idx: [usize; 5],
    init: u64,
    flags: u32,
}

/// Per-level defaults (the SD_*_INIT tables of 2.6.36/2.6.37 and 3.8, in
/// docs/newidle.md#the-domain-defaults-sd_init),
/// with the kernel's changes between them as `Kernel` fields:
/// `mc_busy_factor`, `mc_prefer_sibling` and `sd_numa`. Level names are
/// those of `SD_INIT_NAME` up to 3.15 (SIBLING, MC, CPU, NODE/NUMA).
fn params(lv: Lv, k: &Kernel, weight: u64) -> (&'static str, Params) {
    use sd::*;
    match k.sd_init {
        SdInit::V5 => return sd_init_v5(lv, weight),
        SdInit::V3_16 => return sd_init_v3_16(lv, weight),
        SdInit::V2_6 => {}
    }
    let common = LOAD_BALANCE | BALANCE_NEWIDLE | BALANCE_EXEC | BALANCE_FORK | WAKE_AFFINE;
    match lv {
        Lv::Smt => (
            "SIBLING",
            Params {
                min: 1,
                max: 2,
                busy: 64,
                imb: 110,
                cnt: 0,
                idx: [0, 0, 0, 0, 0],
                init: 1,
                flags: common | SHARE_CPUPOWER | SHARE_PKG_RESOURCES,
            },
        ),
        Lv::Mc => (
            "MC",
            Params {
                min: 1,
                max: 4,
                // 2.6.36 SD_MC_INIT has busy_factor 1: MC balances every
                // 1-4 ms even when busy; 64 by 3.8.
                busy: k.mc_busy_factor as u64,
                imb: 125,
                cnt: 1,
                idx: [2, 0, 0, 0, 0],
                init: 1,
                // sd_balance_for_mc_power() = SD_PREFER_SIBLING in 2.6.36
                // with the power-savings knobs off; 3.8 dropped it at MC.
                flags: common
                    | SHARE_PKG_RESOURCES
                    | if k.mc_prefer_sibling {
                        PREFER_SIBLING
                    } else {
                        0
                    },
            },
        ),
        Lv::Cpu => (
            "CPU",
            Params {
                min: 1,
                max: 4,
                busy: 64,
                imb: 125,
                cnt: 1,
                idx: [2, 1, 0, 0, 0],
                init: 1,
                flags: common | PREFER_SIBLING,
            },
        ),
        Lv::Node if k.sd_numa == SdNuma::Node => (
            "NODE",
            Params {
                min: 8,
                max: 32,
                busy: 32,
                imb: 125,
                cnt: 2,
                idx: [3, 2, 0, 0, 0],
                init: 1,
                flags: common | SERIALIZE,
            },
        ),
        // 3.8 sd_numa_init(): intervals scale with the span; EXEC/FORK/
        // WAKE_AFFINE kept while the distance is within RECLAIM_DISTANCE
        // (30), which every preset's is.
        Lv::Node => (
            "NUMA",
            Params {
                min: weight,
                max: 2 * weight,
                busy: 32,
                imb: 125,
                cnt: 2,
                idx: [3, 2, 0, 0, 0],
                init: weight,
                flags: common | SERIALIZE,
            },
        ),
    }
}

/// `sd_init()` as 4.9–4.13 have it (kernel/sched/core.c, topology.c from
/// 4.14; the function came with 143e1e28cb40 in 3.16): every level starts
/// at `min_interval = sd_weight` ms, `max_interval = 2·sd_weight`,
/// `busy_factor` 32, `imbalance_pct` 125, `cache_nice_tries` 0, every
/// `*_idx` 0, `balance_interval = sd_weight`, flags LOAD_BALANCE|NEWIDLE|
/// EXEC|FORK|WAKE_AFFINE plus the level's topology flags (x86
/// `cpu_smt_flags()`: SHARE_CPUCAPACITY|SHARE_PKG_RESOURCES;
/// `cpu_core_flags()`: SHARE_PKG_RESOURCES; DIE: none). Then
/// SHARE_CPUCAPACITY → PREFER_SIBLING, imbalance_pct 110 (smt_gain 1178);
/// SHARE_PKG_RESOURCES → 117, cache_nice_tries 1, busy_idx 2; NUMA →
/// cache_nice_tries 2, busy_idx 3, idle_idx 2, SERIALIZE (EXEC/FORK/
/// WAKE_AFFINE kept: every preset's remote distance is within
/// RECLAIM_DISTANCE); any other level → PREFER_SIBLING, cache_nice_tries 1,
/// busy_idx 2, idle_idx 1. Level names of the x86 `default_topology` (SMT,
/// MC, DIE) and NUMA. Read in a 4.13-era topology.c; that 4.11's copy in
/// core.c is the same is assumed (its `sd->shared` is 4.9's).
fn sd_init_v3_16(lv: Lv, weight: u64) -> (&'static str, Params) {
    use sd::*;
    let base = LOAD_BALANCE | BALANCE_NEWIDLE | BALANCE_EXEC | BALANCE_FORK | WAKE_AFFINE;
    let (name, flags, imb, cnt, idx) = match lv {
        Lv::Smt => (
            "SMT",
            SHARE_CPUPOWER | SHARE_PKG_RESOURCES | PREFER_SIBLING,
            110,
            0,
            [0, 0, 0, 0, 0],
        ),
        Lv::Mc => ("MC", SHARE_PKG_RESOURCES, 117, 1, [2, 0, 0, 0, 0]),
        Lv::Cpu => ("DIE", PREFER_SIBLING, 125, 1, [2, 1, 0, 0, 0]),
        Lv::Node => ("NUMA", SERIALIZE, 125, 2, [3, 2, 0, 0, 0]),
    };
    (
        name,
        Params {
            min: weight,
            max: 2 * weight,
            busy: 32,
            imb,
            cnt,
            idx,
            init: weight,
            flags: base | flags,
        },
    )
}

/// `sd_init()` as 5.10–6.18 have it (kernel/sched/topology.c; the values
/// of 2208cdaa56c9 and its series): every level starts at
/// `min_interval = sd_weight` ms, `max_interval = 2·sd_weight`,
/// `busy_factor` 16, `imbalance_pct` 117, `cache_nice_tries` 0,
/// `balance_interval = sd_weight`, flags NEWIDLE|EXEC|FORK|WAKE_AFFINE|
/// PREFER_SIBLING plus the level's topology flags (x86 `cpu_smt_flags()`:
/// SHARE_CPUCAPACITY|SHARE_LLC; `cpu_core_flags()`: SHARE_LLC; PKG: none;
/// NUMA: SD_NUMA). Then SHARE_CPUCAPACITY → imbalance_pct 110; SHARE_LLC →
/// 117 and cache_nice_tries 1; NUMA → cache_nice_tries 2, PREFER_SIBLING
/// cleared, SERIALIZE set (EXEC/FORK/WAKE_AFFINE kept: every preset's remote
/// distance is within `node_reclaim_distance`, 30); any other level →
/// cache_nice_tries 1. No `*_idx` exist (they read 0 here: instantaneous
/// loads). Simplifications: SD_LOAD_BALANCE, gone in 5.x, stays set (every
/// domain balances, as then); the model's SHARE_PKG_RESOURCES is 6.x's
/// SHARE_LLC and SHARE_CPUPOWER its SHARE_CPUCAPACITY; no SD_NUMA bit (the
/// NUMA level is the only one the model builds above PKG).
fn sd_init_v5(lv: Lv, weight: u64) -> (&'static str, Params) {
    use sd::*;
    let base = LOAD_BALANCE | BALANCE_NEWIDLE | BALANCE_EXEC | BALANCE_FORK | WAKE_AFFINE;
    let (name, topo, imb, cnt, flags) = match lv {
        Lv::Smt => (
            "SMT",
            SHARE_CPUPOWER | SHARE_PKG_RESOURCES,
            110,
            0,
            PREFER_SIBLING,
        ),
        Lv::Mc => ("MC", SHARE_PKG_RESOURCES, 117, 1, PREFER_SIBLING),
        Lv::Cpu => ("PKG", 0, 117, 1, PREFER_SIBLING),
        Lv::Node => ("NUMA", 0, 117, 2, SERIALIZE),
    };
    (
        name,
        Params {
            min: weight,
            max: 2 * weight,
            busy: 16,
            imb,
            cnt,
            idx: [0; 5],
            init: weight,
            flags: base | topo | flags,
        },
    )
}

/// `cpu_power` of every CPU: `smt_gain / threads` (1178/2 = 589) for SMT
/// threads (`arch_scale_smt_power`), else `SCHED_POWER_SCALE`. RT/IRQ and
/// frequency scaling are 1024 (no RT load; ARCH_POWER defaults).
pub fn cpu_power(machine: &Machine) -> Vec<u64> {
    let t = machine.threads_per_core as u64;
    let p = if t > 1 { 1178 / t } else { SCALE };
    vec![p; machine.nr_cpus()]
}

/// How often (in CPUs) `build` polls its cancellation callback.
const CANCEL_POLL_CPUS: usize = 64;

/// The domain hierarchy of every CPU, lowest level first.
pub fn build(machine: &Machine, kernel: &Kernel) -> Vec<Vec<Domain>> {
    build_cancellable(machine, kernel, &|| false).expect("not cancelled")
}

/// [`build`], polling `cancel` every `CANCEL_POLL_CPUS` CPUs (so never on
/// a machine smaller than that, whose setup is instant); `None` when it
/// returned true.
///
/// Near-linear in CPUs, as `build_sched_domains()` is: each level's spans
/// are computed once for the machine (one pass over the CPUs, keyed by core,
/// LLC or node), and, as in the kernel, a level's groups (`struct
/// sched_group`, kernel/sched/core.c 3.8 `build_sched_groups()`) and its span
/// are shared by every CPU of the span: each CPU's `Domain` holds them by
/// reference (`Arc`) beside its own balancing state and `local_group`. The
/// domains and groups are the same as building each CPU's separately.
// The CPU loop indexes several per-level tables by CPU.
#[allow(clippy::needless_range_loop)]
pub fn build_cancellable(
    machine: &Machine,
    kernel: &Kernel,
    cancel: &dyn Fn() -> bool,
) -> Option<Vec<Vec<Domain>>> {
    let n = machine.nr_cpus();
    let power = cpu_power(machine);
    let levels = [Lv::Smt, Lv::Mc, Lv::Cpu, Lv::Node];
    // Per level: each CPU's span id, and the spans (sorted CPU lists).
    let key = |lv: Lv, cpu: usize| -> u32 {
        let t = machine.cpu(cpu);
        match lv {
            Lv::Smt => t.core,
            Lv::Mc => t.llc,
            Lv::Cpu => t.node,
            // All presets are full meshes of equal remote distance: one
            // NODE/NUMA level spanning the machine.
            Lv::Node => 0,
        }
    };
    let mut span_id: Vec<Vec<usize>> = Vec::with_capacity(levels.len());
    let mut spans: Vec<Vec<Arc<[u32]>>> = Vec::with_capacity(levels.len());
    for &lv in &levels {
        let mut ids: HashMap<u32, usize> = HashMap::new();
        let mut members: Vec<Vec<u32>> = Vec::new();
        let mut of_cpu = Vec::with_capacity(n);
        for cpu in 0..n {
            let next = members.len();
            let id = *ids.entry(key(lv, cpu)).or_insert(next);
            if id == next {
                members.push(Vec::new());
            }
            members[id].push(cpu as u32);
            of_cpu.push(id);
        }
        span_id.push(of_cpu);
        spans.push(members.into_iter().map(Arc::from).collect());
    }
    // The groups of (level, span, child level): the child-level spans of the
    // span's CPUs in CPU order (single CPUs at the lowest level), shared;
    // with the group index of each CPU of the span, in span order.
    type Groups = (Arc<[Group]>, Arc<[u32]>);
    let mut groups_memo: HashMap<(usize, usize, Option<usize>), Groups> = HashMap::new();
    let mut make_groups = |li: usize, sid: usize, child: Option<usize>| -> Groups {
        groups_memo
            .entry((li, sid, child))
            .or_insert_with(|| {
                let mut index: HashMap<usize, u32> = HashMap::new();
                let mut groups = Vec::new();
                let mut of_cpu = Vec::with_capacity(spans[li][sid].len());
                for &c in spans[li][sid].iter() {
                    let g = match child {
                        None => {
                            groups.push(vec![c]);
                            groups.len() - 1
                        }
                        Some(cl) => {
                            let id = span_id[cl][c as usize];
                            *index.entry(id).or_insert_with(|| {
                                groups.push(spans[cl][id].to_vec());
                                groups.len() as u32 - 1
                            }) as usize
                        }
                    };
                    of_cpu.push(g as u32);
                }
                let groups: Vec<Group> = groups
                    .into_iter()
                    .map(|cpus| {
                        let p = cpus.iter().map(|&x| power[x as usize]).sum();
                        let cores = group_cores(machine, &cpus);
                        Group {
                            cpus,
                            power: p,
                            cores,
                        }
                    })
                    .collect();
                (Arc::from(groups), Arc::from(of_cpu))
            })
            .clone()
    };
    // Whether a level's span equals its child level's (memoised per pair).
    let mut same_memo: HashMap<(usize, usize, usize, usize), bool> = HashMap::new();
    let mut out = Vec::with_capacity(n);
    for cpu in 0..n {
        if cpu % CANCEL_POLL_CPUS == CANCEL_POLL_CPUS - 1 && cancel() {
            return None;
        }
        let mut doms: Vec<Domain> = Vec::new();
        let mut child: Option<(usize, usize)> = None;
        for (li, &lv) in levels.iter().enumerate() {
            let sid = span_id[li][cpu];
            let span = &spans[li][sid];
            // sd_degenerate() / sd_parent_degenerate(): one CPU, or the
            // child's span again.
            if span.len() <= 1 {
                continue;
            }
            if let Some((cl, cs)) = child {
                let same = *same_memo
                    .entry((li, sid, cl, cs))
                    .or_insert_with(|| **span == *spans[cl][cs]);
                if same {
                    continue;
                }
            }
            let (groups, group_of) = make_groups(li, sid, child.map(|c| c.0));
            let pos = span
                .binary_search(&(cpu as u32))
                .expect("cpu in its own span");
            let local_group = group_of[pos] as usize;
            let (name, p) = params(lv, kernel, span.len() as u64);
            doms.push(Domain {
                name,
                span: span.clone(),
                groups,
                local_group,
                flags: p.flags,
                min_interval: p.min,
                max_interval: p.max,
                busy_factor: p.busy,
                imbalance_pct: p.imb,
                cache_nice_tries: p.cnt,
                busy_idx: p.idx[0],
                idle_idx: p.idx[1],
                newidle_idx: p.idx[2],
                wake_idx: p.idx[3],
                forkexec_idx: p.idx[4],
                balance_interval: p.init,
                nr_balance_failed: 0,
                last_balance: 0,
                max_newidle_lb_cost: 0,
                next_decay_max_lb_cost: 0,
                last_decay_max_lb_cost: 0,
                newidle_call: 512,
                newidle_success: 256,
                newidle_ratio: 512,
            });
            child = Some((li, sid));
        }
        out.push(doms);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(d: &[Domain]) -> Vec<&'static str> {
        d.iter().map(|d| d.name).collect()
    }

    #[test]
    fn core2_has_mc_pairs_under_one_cpu_level() {
        let m = Machine::preset("core2-2s").unwrap();
        let d = build(&m, &Kernel::v2_6_36());
        assert_eq!(names(&d[0]), vec!["MC", "CPU"]);
        assert_eq!(*d[0][0].span, [0, 1]);
        assert_eq!(d[0][1].span.len(), 8);
        assert_eq!(d[0][1].groups.len(), 4);
        assert_eq!(d[5][1].local_group, 2);
        assert_eq!(d[0][0].busy_factor, 1);
        assert_eq!(build(&m, &Kernel::v3_8())[0][0].busy_factor, 64);
    }

    #[test]
    fn nhm_ep_drops_the_degenerate_cpu_level() {
        let m = Machine::preset("nhm-ep").unwrap();
        let d = build(&m, &Kernel::v2_6_36());
        assert_eq!(names(&d[3]), vec!["SIBLING", "MC", "NODE"]);
        let smt = &d[3][0];
        assert_eq!(*smt.span, [2, 3]);
        assert_eq!(smt.groups[0].power, 589);
        assert_eq!(d[3][1].groups.len(), 4);
        assert_eq!(d[3][1].groups[0].power, 1178);
        assert_eq!(d[3][2].groups.len(), 2);
        assert_eq!(d[3][2].min_interval, 8);
        let d38 = build(&m, &Kernel::v3_8());
        assert_eq!(names(&d38[3]), vec!["SIBLING", "MC", "NUMA"]);
        assert_eq!(d38[3][2].min_interval, 16);
        assert_eq!(d38[3][2].balance_interval, 16);
    }

    #[test]
    fn vm2_has_one_mc_level() {
        let m = Machine::preset("vm-2").unwrap();
        let d = build(&m, &Kernel::v3_8());
        assert_eq!(names(&d[1]), vec!["MC"]);
        assert_eq!(d[1][0].groups.len(), 2);
        let up = Machine::new(1, 1, 1, None, None).unwrap();
        assert!(build(&up, &Kernel::v3_8())[0].is_empty());
    }

    /// Genoa: SMT, MC at the 8-core CCX, CPU (the socket = node: 6.x's PKG,
    /// `cpu_cpu_mask`) over the 12 CCXs, then one NUMA level over the two
    /// sockets. Sapphire Rapids: the L3 is the socket, so CPU is degenerate.
    #[test]
    fn todays_two_socket_boxes_build_their_levels() {
        let g = Machine::preset("epyc-genoa-2s").unwrap();
        let d = build(&g, &Kernel::v3_8());
        for cpu in [0, 17, 383] {
            assert_eq!(names(&d[cpu]), vec!["SIBLING", "MC", "CPU", "NUMA"]);
            let sizes: Vec<usize> = d[cpu].iter().map(|x| x.span.len()).collect();
            assert_eq!(sizes, vec![2, 16, 192, 384]);
            let groups: Vec<usize> = d[cpu].iter().map(|x| x.groups.len()).collect();
            assert_eq!(groups, vec![2, 8, 12, 2]);
        }
        assert_eq!(d[17][2].local_group, 1);
        assert_eq!(d[17][2].groups[1].power, 8 * 1178);
        let s = Machine::preset("spr-2s").unwrap();
        let d = build(&s, &Kernel::v3_8());
        assert_eq!(names(&d[200]), vec!["SIBLING", "MC", "NUMA"]);
        let sizes: Vec<usize> = d[200].iter().map(|x| x.span.len()).collect();
        assert_eq!(sizes, vec![2, 112, 224]);
        assert_eq!(d[200][1].groups.len(), 56);
        assert_eq!(d[200][2].local_group, 1);
    }

    fn v5() -> Kernel {
        Kernel {
            sd_init: SdInit::V5,
            ..Kernel::v3_13()
        }
    }

    /// (name, min, max, busy_factor, imbalance_pct, cache_nice_tries,
    /// balance_interval) of each level.
    fn table(d: &[Domain]) -> Vec<(&'static str, u64, u64, u64, u64, u32, u64)> {
        d.iter()
            .map(|d| {
                (
                    d.name,
                    d.min_interval,
                    d.max_interval,
                    d.busy_factor,
                    d.imbalance_pct,
                    d.cache_nice_tries,
                    d.balance_interval,
                )
            })
            .collect()
    }

    #[test]
    fn sd_init_v5_on_vm2_nhm_ep_and_genoa() {
        use sd::*;
        let common = LOAD_BALANCE | BALANCE_NEWIDLE | BALANCE_EXEC | BALANCE_FORK | WAKE_AFFINE;
        // vm-2: one LLC level of 2 CPUs.
        let d = build(&Machine::preset("vm-2").unwrap(), &v5());
        assert_eq!(table(&d[1]), vec![("MC", 2, 4, 16, 117, 1, 2)]);
        assert_eq!(d[1][0].flags, common | PREFER_SIBLING | SHARE_PKG_RESOURCES);
        // nhm-ep: SMT (2), MC (the 8-thread socket = node), NUMA (16).
        let d = build(&Machine::preset("nhm-ep").unwrap(), &v5());
        assert_eq!(
            table(&d[3]),
            vec![
                ("SMT", 2, 4, 16, 110, 0, 2),
                ("MC", 8, 16, 16, 117, 1, 8),
                ("NUMA", 16, 32, 16, 117, 2, 16),
            ]
        );
        assert_eq!(
            d[3][0].flags,
            common | PREFER_SIBLING | SHARE_CPUPOWER | SHARE_PKG_RESOURCES
        );
        assert_eq!(d[3][2].flags, common | SERIALIZE);
        // Genoa: SMT (2), MC at the CCX (16), PKG (the 192-CPU socket), NUMA (384).
        let d = build(&Machine::preset("epyc-genoa-2s").unwrap(), &v5());
        assert_eq!(
            table(&d[17]),
            vec![
                ("SMT", 2, 4, 16, 110, 0, 2),
                ("MC", 16, 32, 16, 117, 1, 16),
                ("PKG", 192, 384, 16, 117, 1, 192),
                ("NUMA", 384, 768, 16, 117, 2, 384),
            ]
        );
        assert_eq!(d[17][2].flags, common | PREFER_SIBLING);
        for x in &d[17] {
            let idx = [
                x.busy_idx,
                x.idle_idx,
                x.newidle_idx,
                x.wake_idx,
                x.forkexec_idx,
            ];
            assert_eq!(idx, [0; 5]);
            assert_eq!(
                (x.newidle_call, x.newidle_success, x.newidle_ratio),
                (512, 256, 512)
            );
        }
        // The same spans and groups as under the 2.6 tables.
        let old = build(&Machine::preset("epyc-genoa-2s").unwrap(), &Kernel::v3_13());
        for (a, b) in d[17].iter().zip(&old[17]) {
            assert_eq!(a.span, b.span);
            assert_eq!(a.groups, b.groups);
        }
    }

    /// The wake-up path reads the LLC domain's imbalance_pct: SIS_UTIL's
    /// scan depth over nhm-ep's 8-CPU LLC at 78 % util is 0 under the 2.6
    /// tables' 125 (no scan from 80 %, rounded down) but 1 under 5.x's 117
    /// (no scan from 85 %).
    #[test]
    fn sd_init_v5_gives_sis_util_6x_llc_imbalance_pct() {
        use crate::sched::fair::wakeup::idle_cpu_scan;
        let m = Machine::preset("nhm-ep").unwrap();
        let llc = |k: &Kernel| {
            let d = build(&m, k);
            let l = d[0]
                .iter()
                .rposition(|d| d.has(sd::SHARE_PKG_RESOURCES))
                .unwrap();
            (d[0][l].span.len() as u64, d[0][l].imbalance_pct)
        };
        let util = |w: u64| w * 1024 * 78 / 100;
        let (w, pct) = llc(&Kernel::v3_13());
        assert_eq!((w, pct), (8, 125));
        assert_eq!(idle_cpu_scan(util(w), w, pct), 0);
        let (w, pct) = llc(&v5());
        assert_eq!((w, pct), (8, 117));
        assert_eq!(idle_cpu_scan(util(w), w, pct), 1);
    }

    /// 4.11's `sd_init()` (`SdInit::V3_16`) on the 0-day box: SMT, MC
    /// (the socket's LLC) and one NUMA level (DIE spans the socket, as MC
    /// does, and degenerates), intervals of the span's weight, busy_factor
    /// 32, 110/117/125, the `*_idx`; PREFER_SIBLING at SMT only.
    #[test]
    fn sd_init_v3_16_on_skl_sp_2s() {
        use sd::*;
        let common = LOAD_BALANCE | BALANCE_NEWIDLE | BALANCE_EXEC | BALANCE_FORK | WAKE_AFFINE;
        let d = build(&Machine::preset("skl-sp-2s").unwrap(), &Kernel::v4_11());
        assert_eq!(
            table(&d[5]),
            vec![
                ("SMT", 2, 4, 32, 110, 0, 2),
                ("MC", 56, 112, 32, 117, 1, 56),
                ("NUMA", 112, 224, 32, 125, 2, 112),
            ]
        );
        assert_eq!(
            d[5][0].flags,
            common | SHARE_CPUPOWER | SHARE_PKG_RESOURCES | PREFER_SIBLING
        );
        assert_eq!(d[5][1].flags, common | SHARE_PKG_RESOURCES);
        assert_eq!(d[5][2].flags, common | SERIALIZE);
        let idx: Vec<[usize; 2]> = d[5].iter().map(|x| [x.busy_idx, x.idle_idx]).collect();
        assert_eq!(idx, vec![[0, 0], [2, 0], [3, 2]]);
        // A machine whose socket holds two LLCs keeps DIE: core2-2s.
        let c = build(&Machine::preset("core2-2s").unwrap(), &Kernel::v4_11());
        let names: Vec<&str> = c[0].iter().map(|x| x.name).collect();
        assert_eq!(names, vec!["MC", "DIE"]);
        assert_eq!(c[0][1].flags, common | PREFER_SIBLING);
        assert_eq!(
            (c[0][1].busy_idx, c[0][1].idle_idx, c[0][1].imbalance_pct),
            (2, 1, 125)
        );
    }

    #[test]
    fn sd_init_v5_ignores_the_2_6_level_fields() {
        let m = Machine::preset("nhm-ep").unwrap();
        let a = build(&m, &v5());
        let k = Kernel {
            mc_busy_factor: 1,
            mc_prefer_sibling: true,
            sd_numa: SdNuma::Node,
            ..v5()
        };
        let b = build(&m, &k);
        assert_eq!(table(&a[0]), table(&b[0]));
        let fa: Vec<u32> = a[0].iter().map(|d| d.flags).collect();
        let fb: Vec<u32> = b[0].iter().map(|d| d.flags).collect();
        assert_eq!(fa, fb);
    }

    /// (span, groups, local group, name, min_interval) per CPU and level.
    type RefDomain = (Vec<u32>, Vec<Group>, usize, &'static str, u64);

    /// The per-CPU construction `build` replaced (each CPU's spans and
    /// groups computed from scratch, cubic in CPUs): the reference the
    /// shared, near-linear build must equal.
    fn build_reference(machine: &Machine, kernel: &Kernel) -> Vec<Vec<RefDomain>> {
        let n = machine.nr_cpus();
        let power = cpu_power(machine);
        let span_of = |lv: Lv, cpu: usize| -> Vec<u32> {
            let me = machine.cpu(cpu);
            (0..n)
                .filter(|&j| {
                    let o = machine.cpu(j);
                    match lv {
                        Lv::Smt => o.core == me.core,
                        Lv::Mc => o.llc == me.llc,
                        Lv::Cpu => o.node == me.node,
                        Lv::Node => true,
                    }
                })
                .map(|j| j as u32)
                .collect()
        };
        let mut out = Vec::new();
        for cpu in 0..n {
            let mut doms = Vec::new();
            let mut child_span = vec![cpu as u32];
            let mut child_lv: Option<Lv> = None;
            for lv in [Lv::Smt, Lv::Mc, Lv::Cpu, Lv::Node] {
                let span = span_of(lv, cpu);
                if span.len() <= 1 || span == child_span {
                    continue;
                }
                let mut groups: Vec<Group> = Vec::new();
                for &c in &span {
                    if groups.iter().any(|g| g.cpus.contains(&c)) {
                        continue;
                    }
                    let cpus = match child_lv {
                        None => vec![c],
                        Some(clv) => span_of(clv, c as usize),
                    };
                    let p = cpus.iter().map(|&x| power[x as usize]).sum();
                    let cores = group_cores(machine, &cpus);
                    groups.push(Group {
                        cpus,
                        power: p,
                        cores,
                    });
                }
                let local = groups
                    .iter()
                    .position(|g| g.cpus.contains(&(cpu as u32)))
                    .unwrap();
                let (name, p) = params(lv, kernel, span.len() as u64);
                doms.push((span.clone(), groups, local, name, p.min));
                child_span = span;
                child_lv = Some(lv);
            }
            out.push(doms);
        }
        out
    }

    #[test]
    fn the_shared_build_equals_the_per_cpu_reference() {
        let mut shapes: Vec<Machine> = crate::topology::MACHINE_PRESETS
            .iter()
            .map(|n| Machine::preset(n).unwrap())
            .collect();
        for (s, c, t, llc, nodes) in [
            (1, 1, 1, None, None),
            (1, 1, 2, None, None),
            (2, 6, 2, Some(3), None),
            (2, 6, 2, Some(3), Some(4)),
            (2, 6, 2, Some(1), Some(4)),
            (4, 4, 1, Some(4), Some(2)),
            (1, 8, 2, Some(2), Some(4)),
            (3, 4, 4, Some(1), Some(3)),
            (2, 8, 1, Some(4), Some(1)),
        ] {
            shapes.push(Machine::new(s, c, t, llc, nodes).unwrap());
        }
        for m in &shapes {
            for k in [Kernel::v2_6_36(), Kernel::v3_8()] {
                let got = build(m, &k);
                let want = build_reference(m, &k);
                assert_eq!(got.len(), want.len());
                for (cpu, (g, w)) in got.iter().zip(&want).enumerate() {
                    let g: Vec<_> = g
                        .iter()
                        .map(|d| {
                            (
                                d.span.to_vec(),
                                d.groups.to_vec(),
                                d.local_group,
                                d.name,
                                d.min_interval,
                            )
                        })
                        .collect();
                    assert_eq!(&g, w, "{} cpu {cpu}", m.nr_cpus());
                }
            }
        }
    }

    #[test]
    fn groups_and_spans_are_shared_by_the_cpus_of_a_span() {
        let m = Machine::new(1, 4096, 1, None, None).unwrap();
        let d = build(&m, &Kernel::v3_8());
        assert_eq!(names(&d[0]), vec!["MC"]);
        assert_eq!(d[4095][0].groups.len(), 4096);
        assert_eq!(d[4095][0].local_group, 4095);
        assert!(Arc::ptr_eq(&d[0][0].groups, &d[4095][0].groups));
        assert!(Arc::ptr_eq(&d[0][0].span, &d[4095][0].span));
    }

    #[test]
    fn a_cancelled_build_stops_early() {
        let m = Machine::new(16, 128, 2, None, None).unwrap();
        let calls = std::cell::Cell::new(0u32);
        let cancel = || {
            calls.set(calls.get() + 1);
            calls.get() >= 3
        };
        assert!(build_cancellable(&m, &Kernel::v3_8(), &cancel).is_none());
        assert_eq!(calls.get(), 3);
        assert!(build_cancellable(&m, &Kernel::v3_8(), &|| true).is_none());
    }
}
