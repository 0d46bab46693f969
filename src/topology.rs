//! The simulated machine: sockets × cores × SMT threads, last-level-cache
//! spans and NUMA nodes, with the presets of the seed cases.
//!
//! CPU numbering is dense and hierarchical, so SMT siblings are adjacent:
//! `cpu = (socket · cores_per_socket + core) · threads_per_core + thread`.
//! x86 firmware usually enumerates all first threads before the second ones;
//! the numbering only matters for "first idle CPU" choices.

use crate::error::{CoreError, CoreResult};

/// Where a CPU sits in the machine. Plain indices, all global.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuTopo {
    pub socket: u32,
    /// Global core index (socket · cores_per_socket + core).
    pub core: u32,
    pub thread: u32,
    /// Global last-level-cache index.
    pub llc: u32,
    pub node: u32,
}

/// How far apart two CPUs are; orders the cache-refill cost of a migration
/// (SMT sibling < shared LLC < same socket < same node < other node).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Distance {
    Same,
    SmtSibling,
    SharedLlc,
    SameSocket,
    SameNode,
    RemoteNode,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// Preset name, or "custom".
    pub name: String,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub threads_per_core: u32,
    /// Cores sharing one last-level cache (a divisor of `cores_per_socket`).
    /// Core 2 "Harpertown" shares an L2 per core pair: 2.
    pub llc_cores: u32,
    /// NUMA nodes; sockets are split evenly over them (or nodes over sockets).
    pub numa_nodes: u32,
    cpus: Vec<CpuTopo>,
}

/// The preset names, in a stable order.
pub const MACHINE_PRESETS: &[&str] = &[
    "vm-2",
    "quad-4c",
    "core2-2s",
    "nhm-ep",
    "wsm-4s-40c",
    "snb-ep-4s",
    "skl-sp-2s",
    "epyc-genoa-2s",
    "spr-2s",
    "snb-laptop-4c",
];

/// Upper bound on CPUs (keeps per-CPU tables and cpumasks bounded).
pub const MAX_CPUS: u32 = 4096;

/// A machine's counts (sockets, cores, threads, LLC cores, nodes): at least
/// one each (`Machine::new` checks the combinations).
pub const AT_LEAST_ONE: crate::config::Bounds = crate::config::Bounds {
    lo: 1,
    hi: u32::MAX as u64,
    allowed: "an integer >= 1",
};

impl Machine {
    /// Build and validate a machine. `llc_cores` defaults to a whole socket,
    /// `numa_nodes` to one node per socket.
    pub fn new(
        sockets: u32,
        cores_per_socket: u32,
        threads_per_core: u32,
        llc_cores: Option<u32>,
        numa_nodes: Option<u32>,
    ) -> CoreResult<Self> {
        let positive = |name: &str, v: u32| AT_LEAST_ONE.check(name, v as i128).map(|_| ());
        positive("sockets", sockets)?;
        positive("cores_per_socket", cores_per_socket)?;
        positive("threads_per_core", threads_per_core)?;
        if threads_per_core > 8 {
            return Err(CoreError::invalid(
                "threads_per_core",
                threads_per_core,
                "an integer from 1 to 8",
            ));
        }
        let total = sockets as u64 * cores_per_socket as u64 * threads_per_core as u64;
        if total > MAX_CPUS as u64 {
            return Err(CoreError::invalid(
                "sockets*cores_per_socket*threads_per_core",
                total,
                format!("at most {MAX_CPUS} CPUs"),
            ));
        }
        let numa_nodes = numa_nodes.unwrap_or(sockets);
        let nodes_ok = numa_nodes >= 1
            && (sockets % numa_nodes == 0
                || (numa_nodes % sockets == 0 && cores_per_socket % (numa_nodes / sockets) == 0));
        if !nodes_ok {
            return Err(CoreError::invalid(
                "numa_nodes",
                numa_nodes,
                format!(
                    "a divisor of sockets ({sockets}) or a multiple of it that splits each socket's cores evenly"
                ),
            ));
        }
        // Each level nests in the next (SMT ⊂ core ⊂ LLC ⊂ socket, and the
        // node either holds whole sockets or splits one, and then holds
        // whole LLCs). x86 does not let an LLC straddle two nodes either:
        // match_llc() / topology_sane() in arch/x86/kernel/smpboot.c ignore
        // such a sharing ("llc-sibling ... is not on the same node"). The
        // default LLC is a socket, or a node when nodes split sockets.
        let node_cores = if numa_nodes > sockets {
            cores_per_socket / (numa_nodes / sockets)
        } else {
            cores_per_socket
        };
        let llc_cores = llc_cores.unwrap_or(node_cores);
        if llc_cores == 0 || cores_per_socket % llc_cores != 0 {
            return Err(CoreError::invalid(
                "llc_cores",
                llc_cores,
                format!("a divisor of cores_per_socket ({cores_per_socket})"),
            ));
        }
        if node_cores % llc_cores != 0 {
            return Err(CoreError::invalid(
                "llc_cores",
                llc_cores,
                format!(
                    "a divisor of the cores of a NUMA node ({node_cores}: {numa_nodes} nodes \
                     split {sockets} socket(s) of {cores_per_socket} cores), so that each \
                     last-level cache lies within one node"
                ),
            ));
        }
        let mut cpus = Vec::with_capacity(total as usize);
        let total_cores = sockets * cores_per_socket;
        let cores_per_node = total_cores / numa_nodes;
        for socket in 0..sockets {
            for c in 0..cores_per_socket {
                let core = socket * cores_per_socket + c;
                for thread in 0..threads_per_core {
                    cpus.push(CpuTopo {
                        socket,
                        core,
                        thread,
                        llc: core / llc_cores,
                        node: core / cores_per_node,
                    });
                }
            }
        }
        Ok(Machine {
            name: "custom".into(),
            sockets,
            cores_per_socket,
            threads_per_core,
            llc_cores,
            numa_nodes,
            cpus,
        })
    }

    /// The named machines: the seed cases' boxes (docs/cases/index.md), this
    /// development VM and two of today's servers; `Machine.presets()` lists
    /// them (docs/guide/machines.md).
    pub fn preset(name: &str) -> CoreResult<Self> {
        let mut m = match name {
            // This development VM: 2 vCPUs, no SMT, one cache, one node.
            "vm-2" => Self::new(1, 2, 1, None, Some(1))?,
            // A 4-core desktop with one shared last-level cache: the box of
            // the idle_balance() removal case (3.23 CPUs utilised of 4).
            "quad-4c" => Self::new(1, 4, 1, None, Some(1))?,
            // Core 2 "Harpertown" 2 × 4: the L2 is shared per core pair, one
            // front-side bus (UMA, one node). The VolanoMark case's box.
            "core2-2s" => Self::new(2, 4, 1, Some(2), Some(1))?,
            // Nehalem-EP 2 × 4 × 2, L3 per socket, a node per socket.
            "nhm-ep" => Self::new(2, 4, 2, None, Some(2))?,
            // Westmere-EX, 4 nodes × 10 cores: the AIM7 box of case 3. SMT is
            // left off (the case counts "40 cores"); build a custom machine
            // with threads_per_core=2 for the HT variant.
            "wsm-4s-40c" => Self::new(4, 10, 1, None, Some(4))?,
            // Sandy Bridge-EP 4 × 8 × 2.
            "snb-ep-4s" => Self::new(4, 8, 2, None, Some(4))?,
            // Skylake-SP 2 × 28 × 2 = 112 CPUs: the 0-day box of case 4.
            "skl-sp-2s" => Self::new(2, 28, 2, None, Some(2))?,
            // AMD EPYC 9654 "Genoa" (Zen 4) 2 × 96 × 2 = 384 CPUs: 12 CCDs of
            // 8 cores per socket, each CCD one CCX with its own 32 MB L3 (384
            // MB per socket), so 12 LLCs per socket; NPS1 (the default), one
            // node per socket. Sources: tomshardware.com EPYC 9755 article
            // (9654: 96/192, 384 MB L3 over 12 CCDs); llmperf.net Genoa/Turin
            // table (8-core CCDs with 32 MB L3 each). Domains: SIBLING, MC
            // (the CCX), CPU (the socket, 12 CCX groups), NUMA. 6.x x86
            // (`build_sched_topology()`) has the same levels as SMT, CLS (L2
            // per core here, so degenerate), MC, PKG (`cpu_cpu_mask`, kept:
            // no NUMA inside the package under NPS1) and NUMA.
            "epyc-genoa-2s" => Self::new(2, 96, 2, Some(8), Some(2))?,
            // Intel Xeon Platinum 8480+ "Sapphire Rapids" 2 × 56 × 2 = 224
            // CPUs: one 105 MB L3 shared by the socket's cores (mesh), SNC
            // off (the default), one node per socket. Sources: computerbase.de
            // (8480+: 56 cores, the top of the mainstream series); cheap5v.com
            // on the 56-core part (112 threads, 105 MB L3). Domains: SIBLING,
            // MC, NUMA (CPU = the LLC = the node, degenerate; 6.x's PKG too).
            "spr-2s" => Self::new(2, 56, 2, None, Some(2))?,
            // A Sandy Bridge laptop, 1 × 4 × 2 (Core i7-2820QM class): the
            // box of case 3's v6 watts table (power::PowerSpec has its
            // turbo bins and C-states).
            "snb-laptop-4c" => Self::new(1, 4, 2, None, Some(1))?,
            _ => {
                return Err(CoreError::invalid(
                    "name",
                    format!("{name:?}"),
                    format!("one of {}", MACHINE_PRESETS.join(", ")),
                ))
            }
        };
        m.name = name.to_string();
        Ok(m)
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    pub fn cpu(&self, cpu: usize) -> &CpuTopo {
        &self.cpus[cpu]
    }

    pub fn cpus(&self) -> &[CpuTopo] {
        &self.cpus
    }

    /// SLIT-style node distance: 10 local, 20 remote (21 on machines with more
    /// than two nodes, as x86 firmware tables commonly report).
    pub fn node_distance(&self, a: u32, b: u32) -> u32 {
        if a == b {
            10
        } else if self.numa_nodes > 2 {
            21
        } else {
            20
        }
    }

    pub fn distance(&self, a: usize, b: usize) -> Distance {
        let (x, y) = (&self.cpus[a], &self.cpus[b]);
        if a == b {
            Distance::Same
        } else if x.core == y.core {
            Distance::SmtSibling
        } else if x.llc == y.llc {
            Distance::SharedLlc
        } else if x.socket == y.socket {
            Distance::SameSocket
        } else if x.node == y.node {
            Distance::SameNode
        } else {
            Distance::RemoteNode
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_the_documented_sizes() {
        let sizes: Vec<usize> = MACHINE_PRESETS
            .iter()
            .map(|n| Machine::preset(n).unwrap().nr_cpus())
            .collect();
        assert_eq!(sizes, vec![2, 4, 8, 16, 40, 64, 112, 384, 224, 8]);
        let q = Machine::preset("quad-4c").unwrap();
        assert_eq!(q.distance(0, 3), Distance::SharedLlc);
    }

    #[test]
    fn core2_shares_l2_per_core_pair() {
        let m = Machine::preset("core2-2s").unwrap();
        assert_eq!(m.distance(0, 1), Distance::SharedLlc);
        assert_eq!(m.distance(1, 2), Distance::SameSocket);
        assert_eq!(m.distance(0, 4), Distance::SameNode);
    }

    #[test]
    fn smt_siblings_are_adjacent() {
        let m = Machine::preset("skl-sp-2s").unwrap();
        assert_eq!(m.distance(0, 1), Distance::SmtSibling);
        assert_eq!(m.distance(0, 2), Distance::SharedLlc);
        assert_eq!(m.distance(0, 56), Distance::RemoteNode);
        assert_eq!(m.cpu(111).node, 1);
    }

    #[test]
    fn todays_two_socket_boxes_have_their_llcs_and_nodes() {
        let count = |m: &Machine, f: fn(&CpuTopo) -> u32| {
            let mut v: Vec<u32> = m.cpus().iter().map(f).collect();
            v.dedup();
            v.len()
        };
        let g = Machine::preset("epyc-genoa-2s").unwrap();
        assert_eq!((g.nr_cpus(), g.llc_cores, g.numa_nodes), (384, 8, 2));
        assert_eq!(count(&g, |t| t.llc), 24);
        assert_eq!(count(&g, |t| t.node), 2);
        // a CCX is 8 cores = 16 CPUs; the next CCX is on the same socket
        assert_eq!(g.distance(0, 15), Distance::SharedLlc);
        assert_eq!(g.distance(0, 16), Distance::SameSocket);
        assert_eq!(g.distance(0, 192), Distance::RemoteNode);
        assert_eq!((g.cpu(191).llc, g.cpu(192).llc), (11, 12));
        let s = Machine::preset("spr-2s").unwrap();
        assert_eq!((s.nr_cpus(), s.llc_cores, s.numa_nodes), (224, 56, 2));
        assert_eq!(count(&s, |t| t.llc), 2);
        assert_eq!(s.distance(0, 111), Distance::SharedLlc);
        assert_eq!(s.distance(0, 112), Distance::RemoteNode);
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert!(Machine::new(0, 4, 1, None, None).is_err());
        assert!(Machine::new(2, 4, 1, Some(3), None).is_err());
        assert!(Machine::new(2, 4, 1, None, Some(3)).is_err());
        assert!(Machine::new(1, 4, 1, Some(2), Some(2)).is_ok());
        // the default LLC is then a node; a socket-wide one would straddle two
        assert_eq!(Machine::new(1, 4, 1, None, Some(2)).unwrap().llc_cores, 2);
        assert!(Machine::new(1, 4, 1, Some(4), Some(2)).is_err());
        assert!(Machine::new(2, 12, 1, Some(4), Some(4)).is_err());
        assert!(Machine::new(2, 12, 1, Some(3), Some(4)).is_ok());
        assert!(Machine::preset("nope").is_err());
    }
}
