//! The runtime side of the power model (docs/power-model.md), present only
//! when `CostModel::turbo` or `CostModel::cstates` is on: which idle state
//! each CPU is in, each package's frequency, and the integrals behind the
//! `package_power`, `avg_freq_ghz`, `turbo_residency` and `cstate_*`
//! metrics. The tables are the machine preset's (`crate::power`).
//!
//! - Idle entry (`Sched::power_idle_enter`) mirrors `cpuidle_idle_call()` →
//!   `menu_select()` (drivers/cpuidle/governors/menu.c, 3.8), reduced to its
//!   residency test on a prediction that is the mean of the CPU's last 8
//!   idle periods (`get_typical_interval()` without its outlier rejection,
//!   and without the next-timer bound: the model's idle CPUs have no timer
//!   besides the tasks' own); a CPU with no history yet picks the deepest
//!   state (a NOHZ idle CPU's next timer is far away).
//! - A wake-up of an idle CPU (`Sched::idle_exit_delay`) pays the state's
//!   `exit_latency` once; the CPU is back in C0 when `schedule()` picks a
//!   task there (`Sched::power_idle_exit`).
//! - A package's frequency is the turbo table's entry for its active cores:
//!   cores with a thread running, or (C-states on) with every thread idle
//!   in C1/C1E, which Intel counts as active. With `cstates` off an idle
//!   core is inactive and draws nothing (an ideal idle state).
//!
//! Simplifications: one frequency per package, changed instantly when the
//! active count changes (no P-state governor, no power or thermal limit);
//! only a task's own bursts run faster (scheduler overhead costs are
//! charged in ns as they are); a second busy SMT thread adds no power.

use crate::power::{PowerSpec, UNCORE_ACTIVE, UNCORE_PKG_IDLE};
use crate::sched::Sched;
use crate::topology::Machine;

/// `state[cpu]` when the CPU runs a task (C0).
const RUNNING: u8 = u8::MAX;
/// `state[cpu]` of an idle CPU while the C-state model is off.
const IDEAL: u8 = u8::MAX - 1;
const HISTORY: usize = 8;

pub(crate) struct PowerState {
    pub spec: PowerSpec,
    pub turbo: bool,
    pub cstates: bool,
    threads: usize,
    cores_per_pkg: usize,
    /// Per CPU: RUNNING, IDEAL or the C-state index.
    state: Vec<u8>,
    idle_since: Vec<u64>,
    /// When the exit from the current idle state completes, once begun.
    exit_done: Vec<Option<u64>>,
    hist: Vec<[u64; HISTORY]>,
    hist_n: Vec<usize>,
    /// Per package: frequency (MHz), power, last accounting instant.
    pub mhz: Vec<u32>,
    power: Vec<f64>,
    last: Vec<u64>,
    energy: f64,
    busy_ns: f64,
    mhz_ns: f64,
    turbo_ns: f64,
    residency: Vec<u64>,
    exits: u64,
    exit_ns: u64,
}

impl PowerState {
    pub fn new(machine: &Machine, spec: PowerSpec, turbo: bool, cstates: bool) -> Self {
        let n = machine.nr_cpus();
        let pkgs = machine.sockets as usize;
        let deepest = if cstates {
            (spec.cstates.len() - 1) as u8
        } else {
            IDEAL
        };
        let nstates = spec.cstates.len();
        let mut p = PowerState {
            threads: machine.threads_per_core as usize,
            cores_per_pkg: machine.cores_per_socket as usize,
            state: vec![deepest; n],
            idle_since: vec![0; n],
            exit_done: vec![None; n],
            hist: vec![[0; HISTORY]; n],
            hist_n: vec![0; n],
            mhz: vec![spec.base_mhz; pkgs],
            power: vec![0.0; pkgs],
            last: vec![0; pkgs],
            energy: 0.0,
            busy_ns: 0.0,
            mhz_ns: 0.0,
            turbo_ns: 0.0,
            residency: vec![0; nstates],
            exits: 0,
            exit_ns: 0,
            spec,
            turbo,
            cstates,
        };
        for pkg in 0..pkgs {
            let (mhz, pw) = p.evaluate(pkg);
            p.mhz[pkg] = mhz;
            p.power[pkg] = pw;
        }
        p
    }

    fn pkg_cpus(&self, pkg: usize) -> std::ops::Range<usize> {
        let w = self.cores_per_pkg * self.threads;
        pkg * w..(pkg + 1) * w
    }

    pub fn pkg_of(&self, cpu: usize) -> usize {
        cpu / (self.cores_per_pkg * self.threads)
    }

    /// (frequency, power) of a package in its current per-CPU states.
    fn evaluate(&self, pkg: usize) -> (u32, f64) {
        let cpus = self.pkg_cpus(pkg);
        let mut active = 0;
        let mut busy = 0;
        let mut idle_power = 0.0;
        let mut all_deep = true;
        for core in cpus.step_by(self.threads) {
            // a core is as awake as its most awake thread
            let s = (core..core + self.threads)
                .map(|c| self.state[c])
                .max_by_key(|&s| match s {
                    RUNNING => u16::MAX,
                    IDEAL => 0,
                    i => u16::MAX - 1 - i as u16,
                })
                .unwrap();
            match s {
                RUNNING => {
                    active += 1;
                    busy += 1;
                    all_deep = false;
                }
                IDEAL => {}
                i => {
                    let c = &self.spec.cstates[i as usize];
                    if c.turbo_active {
                        active += 1;
                    }
                    if c.power > 0.0 {
                        all_deep = false;
                    }
                    idle_power += c.power;
                }
            }
        }
        let mhz = if self.turbo {
            self.spec.turbo_for(active)
        } else {
            self.spec.base_mhz
        };
        let uncore = if all_deep {
            UNCORE_PKG_IDLE
        } else {
            UNCORE_ACTIVE
        };
        let pw = uncore + idle_power + busy as f64 * self.spec.busy_core_power(mhz);
        (mhz, pw)
    }

    /// Integrate a package's power and busy-CPU frequency up to `now`.
    fn account(&mut self, pkg: usize, now: u64) {
        let dt = (now - self.last[pkg]) as f64;
        self.last[pkg] = now;
        if dt == 0.0 {
            return;
        }
        self.energy += self.power[pkg] * dt;
        let running = self
            .pkg_cpus(pkg)
            .filter(|&c| self.state[c] == RUNNING)
            .count() as f64;
        self.busy_ns += running * dt;
        self.mhz_ns += running * dt * self.mhz[pkg] as f64;
        if self.mhz[pkg] > self.spec.base_mhz {
            self.turbo_ns += running * dt;
        }
    }

    /// Set `cpu`'s state at `now`; returns the package's new frequency if it
    /// changed (the caller re-times the running bursts).
    fn set_state(&mut self, cpu: usize, state: u8, now: u64) -> Option<u32> {
        let pkg = self.pkg_of(cpu);
        self.account(pkg, now);
        self.state[cpu] = state;
        let (mhz, pw) = self.evaluate(pkg);
        self.power[pkg] = pw;
        (mhz != self.mhz[pkg]).then_some(mhz)
    }

    pub fn apply_mhz(&mut self, cpu: usize, mhz: u32) {
        let pkg = self.pkg_of(cpu);
        self.mhz[pkg] = mhz;
    }

    /// Idle entry: pick the state for the predicted idle length.
    pub fn enter_idle(&mut self, cpu: usize, now: u64) -> Option<u32> {
        let s = if self.cstates {
            let n = self.hist_n[cpu].min(HISTORY);
            let predicted = if n == 0 {
                u64::MAX
            } else {
                self.hist[cpu][..n].iter().sum::<u64>() / n as u64
            };
            self.spec.select(predicted) as u8
        } else {
            IDEAL
        };
        self.idle_since[cpu] = now;
        self.exit_done[cpu] = None;
        self.set_state(cpu, s, now)
    }

    /// Idle exit (a task is picked): record the idle period.
    pub fn exit_idle(&mut self, cpu: usize, now: u64) -> Option<u32> {
        let s = self.state[cpu];
        if s != IDEAL && s != RUNNING {
            let len = now - self.idle_since[cpu];
            self.residency[s as usize] += len;
            let i = self.hist_n[cpu] % HISTORY;
            self.hist[cpu][i] = len;
            self.hist_n[cpu] += 1;
        }
        self.exit_done[cpu] = None;
        self.set_state(cpu, RUNNING, now)
    }

    /// The wait before an idle `cpu` can run what woke it: its core's state's
    /// exit latency, paid once per wake-up (an exit already under way costs
    /// what is left of it; none while an SMT sibling runs).
    pub fn exit_delay(&mut self, cpu: usize, now: u64) -> u64 {
        let s = self.state[cpu];
        if !self.cstates || s == RUNNING || s == IDEAL {
            return 0;
        }
        // an exit under way (or completing now) is not paid again
        if let Some(t) = self.exit_done[cpu].filter(|&t| t >= now) {
            return t - now;
        }
        // The core is as deep as its most awake thread: a thread whose
        // sibling runs wakes at once (the core never left C0).
        let first = cpu - cpu % self.threads;
        let core = (first..first + self.threads).map(|c| self.state[c]);
        if core.clone().any(|c| c == RUNNING) {
            return 0;
        }
        let depth = core.min().unwrap_or(s);
        let lat = self.spec.cstates[depth as usize].exit_latency_ns;
        self.exit_done[cpu] = Some(now + lat);
        self.exits += 1;
        self.exit_ns += lat;
        lat
    }

    /// The frequency ratio (f, base) a running task on `cpu` works at.
    #[inline]
    pub fn ratio(&self, cpu: usize) -> (u64, u64) {
        (self.mhz[self.pkg_of(cpu)] as u64, self.spec.base_mhz as u64)
    }

    /// The metrics at the end of a run of `elapsed_ns` on `ncpus` CPUs.
    pub fn metrics(&mut self, now: u64, ncpus: usize) -> Vec<(String, f64)> {
        for pkg in 0..self.mhz.len() {
            self.account(pkg, now);
        }
        for cpu in 0..self.state.len() {
            let s = self.state[cpu];
            if s != IDEAL && s != RUNNING {
                self.residency[s as usize] += now - self.idle_since[cpu];
                self.idle_since[cpu] = now;
            }
        }
        let t = now.max(1) as f64;
        let nan_if_idle = |x: f64| {
            if self.busy_ns > 0.0 {
                x / self.busy_ns
            } else {
                f64::NAN
            }
        };
        let mut m = vec![
            ("package_power".to_string(), self.energy / t),
            (
                "avg_freq_ghz".to_string(),
                nan_if_idle(self.mhz_ns) / 1000.0,
            ),
            ("turbo_residency".to_string(), nan_if_idle(self.turbo_ns)),
        ];
        if self.cstates {
            m.push(("cstate_exits".to_string(), self.exits as f64));
            m.push((
                "cstate_exit_latency_s".to_string(),
                self.exit_ns as f64 / 1e9,
            ));
            for (i, c) in self.spec.cstates.iter().enumerate() {
                m.push((
                    format!("cstate_{}", c.name.to_lowercase()),
                    self.residency[i] as f64 / (t * ncpus as f64),
                ));
            }
        }
        m
    }
}

impl Sched<'_> {
    /// `cpu` leaves idle (`schedule()` picked a task): back to C0.
    pub(crate) fn power_idle_exit(&mut self, cpu: usize) {
        if let Some(p) = self.power.as_mut() {
            let changed = p.exit_idle(cpu, self.now);
            self.retime(cpu, changed);
        }
    }

    /// `cpu` goes idle: the governor picks its C-state.
    pub(crate) fn power_idle_enter(&mut self, cpu: usize) {
        if let Some(p) = self.power.as_mut() {
            let changed = p.enter_idle(cpu, self.now);
            self.retime(cpu, changed);
        }
    }

    /// The exit latency a wake-up of idle `cpu` waits (0 unless the C-state
    /// model is on).
    pub(crate) fn idle_exit_delay(&mut self, cpu: usize) -> u64 {
        match self.power.as_mut() {
            Some(p) if self.rqs[cpu].curr().is_none() => p.exit_delay(cpu, self.now),
            _ => 0,
        }
    }

    /// A package's frequency changes to `mhz`: the running bursts of its
    /// CPUs are accounted at the old frequency, then re-timed at the new.
    fn retime(&mut self, cpu: usize, mhz: Option<u32>) {
        let Some(mhz) = mhz else { return };
        let (pkg, turbo) = match &self.power {
            Some(p) => (p.pkg_of(cpu), p.turbo),
            None => return,
        };
        let w = self.machine.cores_per_socket as usize * self.machine.threads_per_core as usize;
        let cpus = pkg * w..(pkg + 1) * w;
        if turbo {
            for c in cpus.clone() {
                self.rq_sync(c);
            }
        }
        if let Some(p) = self.power.as_mut() {
            p.apply_mhz(cpu, mhz);
        }
        if turbo {
            for c in cpus {
                self.rearm(c);
            }
        }
    }
}

/// The power model's metrics, reported with `CostModel.turbo` or
/// `CostModel.cstates` on.
pub const POWER: &[crate::config::MetricDoc] = &[
    crate::config::MetricDoc {
        name: "package_power",
        unit: "W",
        meaning: "Mean power of every package",
        source: "RAPL package energy (perf stat power/energy-pkg/)",
    },
    crate::config::MetricDoc {
        name: "avg_freq_ghz",
        unit: "GHz",
        meaning: "Mean core frequency while busy (NaN when no CPU was busy)",
        source: "turbostat Bzy_MHz",
    },
    crate::config::MetricDoc {
        name: "turbo_residency",
        unit: "fraction",
        meaning: "Share of busy time above the base frequency (NaN when no CPU was busy)",
        source: "turbostat",
    },
    crate::config::MetricDoc {
        name: "cstate_exits",
        unit: "count",
        meaning: "Exits from a C-state (with CostModel.cstates)",
        source: "cpuidle usage counts",
    },
    crate::config::MetricDoc {
        name: "cstate_exit_latency_s",
        unit: "s",
        meaning: "Time spent leaving C-states (with CostModel.cstates)",
        source: "cpuidle exit latencies",
    },
    crate::config::MetricDoc {
        name: "cstate_<state>",
        unit: "fraction",
        meaning:
            "Share of CPU time in the C-state the name ends with (e.g. cstate_c6; with CostModel.cstates)",
        source: "turbostat CPU%c residencies",
    },
];
