//! Sched domains and groups, built per CPU from the `Machine` the way the
//! kernel's `build_sched_domains()` does (kernel/sched.c 2.6.36;
//! kernel/sched/core.c 3.8), with the per-level defaults of
//! include/linux/topology.h and arch/x86/include/asm/topology.h
//! (kernel-facts §4).
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

use crate::kernel::{Kernel, SdNuma};
use crate::topology::Machine;

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

/// A `struct sched_group`: its CPUs and its power (`sgp->power`, the sum of
/// its CPUs' `cpu_power`).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub cpus: Vec<u32>,
    pub power: u64,
}

/// One CPU's `struct sched_domain` at one level: the static parameters and
/// the per-CPU balancing state the kernel keeps in it.
#[derive(Clone, Debug)]
pub struct Domain {
    pub name: &'static str,
    /// Sorted CPUs of the span.
    pub span: Vec<u32>,
    pub groups: Vec<Group>,
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
    /// 3.13 `max_newidle_lb_cost` (ns) and the time of its last decay.
    pub max_newidle_lb_cost: u64,
    pub next_decay_max_lb_cost: u64,
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

/// Per-level defaults (kernel-facts §4.2 for 2.6.36/2.6.37, §4.3 for 3.8),
/// with the kernel's changes between them as `Kernel` fields:
/// `mc_busy_factor`, `mc_prefer_sibling` and `sd_numa`. Level names are
/// those of `SD_INIT_NAME` up to 3.15 (SIBLING, MC, CPU, NODE/NUMA).
fn params(lv: Lv, k: &Kernel, weight: u64) -> (&'static str, Params) {
    use sd::*;
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

/// `cpu_power` of every CPU: `smt_gain / threads` (1178/2 = 589) for SMT
/// threads (`arch_scale_smt_power`), else `SCHED_POWER_SCALE`. RT/IRQ and
/// frequency scaling are 1024 (no RT load; ARCH_POWER defaults).
pub fn cpu_power(machine: &Machine) -> Vec<u64> {
    let t = machine.threads_per_core as u64;
    let p = if t > 1 { 1178 / t } else { SCALE };
    vec![p; machine.nr_cpus()]
}

/// The domain hierarchy of every CPU, lowest level first.
pub fn build(machine: &Machine, kernel: &Kernel) -> Vec<Vec<Domain>> {
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
                    // All presets are full meshes of equal remote distance:
                    // one NODE/NUMA level spanning the machine.
                    Lv::Node => true,
                }
            })
            .map(|j| j as u32)
            .collect()
    };
    let mut out = Vec::with_capacity(n);
    for cpu in 0..n {
        let mut doms: Vec<Domain> = Vec::new();
        let mut child_span: Vec<u32> = vec![cpu as u32];
        let mut child_lv: Option<Lv> = None;
        for lv in [Lv::Smt, Lv::Mc, Lv::Cpu, Lv::Node] {
            let span = span_of(lv, cpu);
            if span.len() <= 1 || span == child_span {
                continue;
            }
            // Groups: the child-level spans of the CPUs in this span.
            let child_lv_span = |c: usize| -> Vec<u32> {
                match child_lv {
                    None => vec![c as u32],
                    Some(clv) => span_of(clv, c),
                }
            };
            let mut groups: Vec<Group> = Vec::new();
            for &c in &span {
                if groups.iter().any(|g| g.cpus.contains(&c)) {
                    continue;
                }
                let cpus = child_lv_span(c as usize);
                let p = cpus.iter().map(|&x| power[x as usize]).sum();
                groups.push(Group { cpus, power: p });
            }
            let local_group = groups
                .iter()
                .position(|g| g.cpus.contains(&(cpu as u32)))
                .expect("cpu in its own span");
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
            });
            child_span = span;
            child_lv = Some(lv);
        }
        out.push(doms);
    }
    out
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
        assert_eq!(d[0][0].span, vec![0, 1]);
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
        assert_eq!(smt.span, vec![2, 3]);
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
}
