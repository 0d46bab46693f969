//! The machine side of the power model (opt-in: `CostModel::turbo` and
//! `CostModel::cstates`): per machine preset, the processor it stands for,
//! its turbo frequency by number of active cores of a package, and its
//! idle states (name, exit latency, target residency) as the kernel's
//! cpuidle driver declares them. The runtime side (which state each CPU is
//! in, the package frequency, energy) is `sched::power_state`.
//!
//! Sources, per preset, in docs/power-model.md. The C-state tables are the
//! `intel_idle` driver's (`drivers/idle/intel_idle.c`: `nehalem_cstates`,
//! `snb_cstates`, `skx_cstates`, `spr_cstates`; exit latency and target
//! residency in µs). The relative power of each idle state and of the
//! uncore are assumptions of this model, not published figures (see
//! `CState::power`, `UNCORE_*`).

use crate::topology::Machine;

/// One idle state (a `struct cpuidle_state`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CState {
    pub name: &'static str,
    /// `exit_latency` (ns): from the wake-up until the CPU runs again.
    pub exit_latency_ns: u64,
    /// `target_residency` (ns): the shortest idle period worth entering it.
    pub target_residency_ns: u64,
    /// Core power in this state relative to a busy core at base frequency
    /// (an assumption: clock-gated C1 ~0.3, C1E ~0.2 with lowered voltage,
    /// C3 ~0.1 with caches flushed, power-gated C6/C7 0).
    pub power: f64,
    /// Counts as an active core for turbo: Intel counts cores in C0 and C1
    /// (here also C1E) as active; cores in C3 or deeper are inactive
    /// (Intel Turbo Boost white paper, 2008).
    pub turbo_active: bool,
}

const fn cs(
    name: &'static str,
    exit_us: u64,
    target_us: u64,
    power: f64,
    turbo_active: bool,
) -> CState {
    CState {
        name,
        exit_latency_ns: exit_us * 1000,
        target_residency_ns: target_us * 1000,
        power,
        turbo_active,
    }
}

/// `nehalem_cstates` (intel_idle, Nehalem and Westmere incl. -EX).
const NHM_CSTATES: &[CState] = &[
    cs("C1", 3, 6, 0.3, true),
    cs("C1E", 10, 20, 0.2, true),
    cs("C3", 20, 80, 0.1, false),
    cs("C6", 200, 800, 0.0, false),
];
/// `snb_cstates` (intel_idle, Sandy Bridge client and -EP).
const SNB_CSTATES: &[CState] = &[
    cs("C1", 2, 2, 0.3, true),
    cs("C1E", 10, 20, 0.2, true),
    cs("C3", 80, 211, 0.1, false),
    cs("C6", 104, 345, 0.0, false),
    cs("C7", 109, 345, 0.0, false),
];
/// `skx_cstates` (intel_idle, Skylake-SP).
const SKX_CSTATES: &[CState] = &[
    cs("C1", 2, 2, 0.3, true),
    cs("C1E", 10, 20, 0.2, true),
    cs("C6", 133, 600, 0.0, false),
];
/// `spr_cstates` (intel_idle, Sapphire Rapids).
const SPR_CSTATES: &[CState] = &[
    cs("C1", 1, 1, 0.3, true),
    cs("C1E", 2, 4, 0.2, true),
    cs("C6", 290, 800, 0.0, false),
];
/// C1 (HLT) only: the processors `intel_idle` does not drive (Core 2;
/// AMD under `acpi_idle`), with ACPI's usual 1 µs C1 latency. Their deeper
/// ACPI `_CST` states are firmware-specific and not modelled.
const C1_ONLY: &[CState] = &[cs("C1", 1, 1, 0.3, true)];

/// Uncore/package power (relative units, an assumption): while any core of
/// the package is above C6 / once every core is in C6 or deeper (package
/// C-state).
pub const UNCORE_ACTIVE: f64 = 1.0;
pub const UNCORE_PKG_IDLE: f64 = 0.2;

/// A machine preset's processor: base frequency, turbo by active cores of a
/// package, idle states.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerSpec {
    pub processor: &'static str,
    pub base_mhz: u32,
    /// `turbo_mhz[n - 1]`: the frequency of a package with `n` active cores
    /// (one entry per core of a package).
    pub turbo_mhz: Vec<u32>,
    pub cstates: &'static [CState],
}

/// A turbo table from the published points `(active cores, MHz)` (the first
/// at 1 core, the last at all cores); cores between two points get the
/// linear interpolation, rounded down to a multiple of `bin_mhz` above base
/// (a filled value, documented as such in docs/power-model.md).
fn bins(base: u32, bin: u32, cores: u32, points: &[(u32, u32)]) -> Vec<u32> {
    (1..=cores)
        .map(|n| {
            let i = points.iter().position(|&(c, _)| c >= n).unwrap_or(0);
            let (c1, f1) = points[i];
            if c1 == n || i == 0 {
                return f1;
            }
            let (c0, f0) = points[i - 1];
            let f = f0 as f64 + (f1 as f64 - f0 as f64) * (n - c0) as f64 / (c1 - c0) as f64;
            let steps = ((f - base as f64) / bin as f64 + 1e-9).floor().max(0.0) as u32;
            base + steps * bin
        })
        .collect()
}

impl PowerSpec {
    /// The processor of a machine preset; `None` for machines whose
    /// processor the model does not identify (`vm-2`, `quad-4c`, custom
    /// machines).
    pub fn for_machine(m: &Machine) -> Option<PowerSpec> {
        let n = m.cores_per_socket;
        let (processor, base, turbo, cstates) = match m.name.as_str() {
            // Core i7-2820QM: 2.3 GHz, 3.4 GHz max turbo (1 core); 3.3 at
            // 2 cores and 3.1 at 4 cores; 3 cores not found, filled with
            // the 4-core value.
            "snb-laptop-4c" => (
                "Core i7-2820QM (Sandy Bridge, 4C/8T)",
                2300,
                vec![3400, 3300, 3100, 3100],
                SNB_CSTATES,
            ),
            // Xeon E7-4870: 2.4 GHz, 2.8 GHz max turbo (ARK); per-core
            // bins not found: 2.8 at 1-2 cores falling linearly to one
            // 133 MHz bin above base at 10 cores (filled).
            "wsm-4s-40c" => (
                "Xeon E7-4870 (Westmere-EX, 10C)",
                2400,
                bins(2400, 133, n, &[(1, 2800), (2, 2800), (10, 2533)]),
                NHM_CSTATES,
            ),
            // Xeon X5570: 2.93 GHz; bins 3/3/2/2 (133 MHz) for 1/2/3/4
            // active cores.
            "nhm-ep" => (
                "Xeon X5570 (Nehalem-EP, 4C/8T)",
                2933,
                vec![3333, 3333, 3200, 3200],
                NHM_CSTATES,
            ),
            // Xeon E5-4650: 2.7 GHz, 3.3 GHz max turbo (ARK); all-core
            // value not found: filled as 2 bins above base.
            "snb-ep-4s" => (
                "Xeon E5-4650 (Sandy Bridge-EP, 8C/16T)",
                2700,
                bins(2700, 100, n, &[(1, 3300), (8, 2900)]),
                SNB_CSTATES,
            ),
            // Xeon Platinum 8180: 2.5 GHz, 3.8 GHz max turbo, 3.2 GHz
            // all-core (non-AVX); cores between interpolated.
            "skl-sp-2s" => (
                "Xeon Platinum 8180 (Skylake-SP, 28C/56T)",
                2500,
                bins(2500, 100, n, &[(1, 3800), (2, 3800), (28, 3200)]),
                SKX_CSTATES,
            ),
            // Xeon Platinum 8480+: 2.0 GHz, 3.8 GHz max turbo, 3.0 GHz
            // all-core turbo; between interpolated.
            "spr-2s" => (
                "Xeon Platinum 8480+ (Sapphire Rapids, 56C/112T)",
                2000,
                bins(2000, 100, n, &[(1, 3800), (2, 3800), (56, 3000)]),
                SPR_CSTATES,
            ),
            // EPYC 9654: 2.4 GHz base, up to 3.7 GHz boost, 3.55 GHz
            // all-core boost (AMD); between interpolated (AMD's boost is not
            // a table of bins; this is the envelope).
            "epyc-genoa-2s" => (
                "EPYC 9654 (Zen 4 Genoa, 96C/192T)",
                2400,
                bins(2400, 50, n, &[(1, 3700), (96, 3550)]),
                C1_ONLY,
            ),
            // Harpertown (Xeon E5450 class, 3.0 GHz): no turbo.
            "core2-2s" => (
                "Xeon E5450 class (Harpertown, no turbo)",
                3000,
                vec![3000; n as usize],
                C1_ONLY,
            ),
            _ => return None,
        };
        debug_assert_eq!(turbo.len(), n as usize);
        Some(PowerSpec {
            processor,
            base_mhz: base,
            turbo_mhz: turbo,
            cstates,
        })
    }

    /// The package frequency with `active` active cores (turbo on).
    pub fn turbo_for(&self, active: usize) -> u32 {
        if active == 0 {
            self.base_mhz
        } else {
            self.turbo_mhz[active.min(self.turbo_mhz.len()) - 1]
        }
    }

    /// Relative power of one busy core at `mhz`: P ~ f·V², with V taken as
    /// proportional to f over the turbo range, so (f/base)³ (1.0 at base).
    pub fn busy_core_power(&self, mhz: u32) -> f64 {
        let r = mhz as f64 / self.base_mhz as f64;
        r * r * r
    }

    /// `menu_select()` reduced to its residency test: the deepest state
    /// whose target residency fits the predicted idle length.
    pub fn select(&self, predicted_ns: u64) -> usize {
        let mut best = 0;
        for (i, s) in self.cstates.iter().enumerate() {
            if s.target_residency_ns <= predicted_ns {
                best = i;
            }
        }
        best
    }
}

/// The machine presets with a power table (for error messages).
pub fn presets_with_power() -> Vec<&'static str> {
    crate::topology::MACHINE_PRESETS
        .iter()
        .copied()
        .filter(|n| {
            Machine::preset(n)
                .ok()
                .and_then(|m| PowerSpec::for_machine(&m))
                .is_some()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_has_one_entry_per_core_and_never_rises_with_cores() {
        for name in presets_with_power() {
            let m = Machine::preset(name).unwrap();
            let s = PowerSpec::for_machine(&m).unwrap();
            assert_eq!(s.turbo_mhz.len(), m.cores_per_socket as usize, "{name}");
            assert!(s.turbo_mhz.windows(2).all(|w| w[0] >= w[1]), "{name}");
            assert!(s.turbo_mhz.iter().all(|&f| f >= s.base_mhz), "{name}");
        }
        let w = PowerSpec::for_machine(&Machine::preset("wsm-4s-40c").unwrap()).unwrap();
        assert_eq!(
            (w.turbo_mhz[0], w.turbo_mhz[1], w.turbo_mhz[9]),
            (2800, 2800, 2533)
        );
        assert!(!presets_with_power().contains(&"vm-2"));
    }

    #[test]
    fn menu_picks_the_deepest_state_whose_residency_fits() {
        let s = PowerSpec::for_machine(&Machine::preset("snb-laptop-4c").unwrap()).unwrap();
        assert_eq!(s.cstates[s.select(0)].name, "C1");
        assert_eq!(s.cstates[s.select(20_000)].name, "C1E");
        assert_eq!(s.cstates[s.select(300_000)].name, "C3");
        assert_eq!(s.cstates[s.select(345_000)].name, "C7");
        assert!((s.busy_core_power(2300) - 1.0).abs() < 1e-12);
    }
}
