//! The RT kernel threads of a real machine as a workload component
//! (`sl.workloads.rt_kthreads`, hackbench's `rt_kthreads=`): its
//! parameters, declared once (`workload_params!`), and the limits a run
//! checks. `workload::kthreads` runs them as tasks of the RT class.

use crate::config::NamedEnum;
use crate::error::{CoreError, CoreResult};
use crate::sched::rt::{RtPolicy, RT_PRIO};
use crate::workload::params::Given;

/// At most this many IRQ threads per CPU of the machine (a real machine
/// has a few per device queue; more only slows every RT queue scan).
pub const IRQ_THREADS_PER_CPU: u64 = 64;

/// An RT thread's period: 10 µs to one hour.
const MIN_PERIOD_NS: i64 = 10_000;
const MAX_PERIOD_NS: i64 = 3_600_000_000_000;

crate::workload_params! {
    /// The RT kernel threads of a real machine, as a workload component.
    pub struct RtKthreads for "rt_kthreads" {
        /// One `watchdog/N` per CPU, pinned, SCHED_FIFO 99.
        watchdog: bool = flag(true, "one watchdog/N per CPU, pinned, SCHED_FIFO 99"),
        watchdog_period_ns: u64 = int(
            MIN_PERIOD_NS,
            MAX_PERIOD_NS,
            4_000_000_000,
            "the watchdogs' period"
        )
        .with_note("ns: 10 µs to 1 hour")
        .taken_as("watchdog_period_ms", 1_000_000)
        .given(Given::Number(4000.0)),
        watchdog_run_ns: u64 = int(1, MAX_PERIOD_NS, 10_000, "a watchdog's run")
            .with_note("ns, less than its period")
            .taken_as("watchdog_run_us", 1000)
            .given(Given::Number(10.0)),
        /// Threaded IRQ handlers (`irq/N-name`), SCHED_FIFO `irq_prio`.
        irq_threads: u32 = int(0, 100_000, 0, "threaded IRQ handlers (irq/N-name)"),
        /// CPUs in each IRQ thread's affinity (consecutive, starting at
        /// `k * irq_cpus` modulo the CPU count); ≥ 2 lets it migrate.
        irq_cpus: u32 = int(
            1,
            crate::topology::MAX_CPUS as i64,
            2,
            "CPUs in each IRQ thread's affinity (2 or more lets it migrate)"
        )
        .with_note("CPUs"),
        irq_prio: u32 = int(RT_PRIO.lo as i64, RT_PRIO.hi as i64, 50, "the IRQ threads' rt_priority")
            .with_note("SCHED_FIFO/SCHED_RR rt_priority"),
        irq_policy: RtPolicy = choice(
            <RtPolicy as NamedEnum>::NAMES,
            "fifo",
            "the IRQ threads' policy: SCHED_FIFO or SCHED_RR"
        ),
        /// Mean time between interrupts (exponential).
        irq_period_ns: u64 = int(
            MIN_PERIOD_NS,
            MAX_PERIOD_NS,
            1_000_000,
            "the mean time between an IRQ thread's interrupts (exponential)"
        )
        .with_note("ns: 10 µs to 1 hour")
        .taken_as("irq_period_us", 1000)
        .given(Given::Number(1000.0)),
        irq_run_ns: u64 = int(1, MAX_PERIOD_NS, 50_000, "an IRQ thread's run per interrupt")
            .with_note("ns, less than its period")
            .taken_as("irq_run_us", 1000)
            .given(Given::Number(50.0)),
    }
}

impl RtKthreads {
    /// Refuse what no machine can run: the declared bounds (priorities outside
    /// 1..99, more than 100000 IRQ threads, an affinity of no CPU or wider
    /// than the largest machine, periods outside 10 µs .. 1 hour), and a
    /// burst that does not fit its period (a task that never sleeps). Every
    /// field is checked, in use or not.
    pub fn validate_params(&self) -> CoreResult<()> {
        let check = |name: &str, v: u64| {
            RtKthreads::param(name).check_as(&format!("rt_kthreads.{name}"), i128::from(v))
        };
        for (period_name, period, run_name, run) in [
            (
                "watchdog_period_ns",
                self.watchdog_period_ns,
                "watchdog_run_ns",
                self.watchdog_run_ns,
            ),
            (
                "irq_period_ns",
                self.irq_period_ns,
                "irq_run_ns",
                self.irq_run_ns,
            ),
        ] {
            check(period_name, period)?;
            check(run_name, run)?;
            if run >= period {
                return Err(CoreError::invalid(
                    &format!("rt_kthreads.{run_name}"),
                    run,
                    format!(
                        "at least 1 ns and less than rt_kthreads.{period_name} ({period} ns): \
                         the thread must sleep between runs"
                    ),
                ));
            }
        }
        check("irq_threads", u64::from(self.irq_threads))?;
        check("irq_prio", u64::from(self.irq_prio))?;
        check("irq_cpus", u64::from(self.irq_cpus))?;
        Ok(())
    }

    /// [`RtKthreads::validate_params`], then what the machine of `ncpus`
    /// CPUs cannot run: an affinity wider than it, more than
    /// `IRQ_THREADS_PER_CPU` IRQ threads per CPU, and an IRQ demand
    /// (`irq_threads * irq_run_ns / irq_period_ns`) above its CPU count.
    pub fn validate(&self, ncpus: usize) -> CoreResult<()> {
        self.validate_params()?;
        if self.irq_threads == 0 {
            return Ok(());
        }
        if self.irq_cpus as usize > ncpus {
            return Err(CoreError::invalid(
                "rt_kthreads.irq_cpus",
                self.irq_cpus,
                format!("1 to the machine's {ncpus} CPUs"),
            ));
        }
        let cap = (IRQ_THREADS_PER_CPU * ncpus as u64).min(100_000);
        if self.irq_threads as u64 > cap {
            return Err(CoreError::invalid(
                "rt_kthreads.irq_threads",
                self.irq_threads,
                format!(
                    "0 to {cap} ({IRQ_THREADS_PER_CPU} per CPU of the machine's {ncpus}, at most 100000)"
                ),
            ));
        }
        // RT demand in CPUs: irq_threads * irq_run / irq_period. Above the
        // CPU count the RT queues only grow (every RT op scans them): refuse.
        let demand = self.irq_threads as u128 * self.irq_run_ns as u128;
        let limit = ncpus as u128 * self.irq_period_ns as u128;
        if demand > limit {
            return Err(CoreError::invalid(
                "rt_kthreads.irq_threads",
                self.irq_threads,
                format!(
                    "an RT demand irq_threads * irq_run_ns / irq_period_ns = {} * {} / {} \
                     = {:.2} CPUs of at most the machine's {ncpus} CPUs",
                    self.irq_threads,
                    self.irq_run_ns,
                    self.irq_period_ns,
                    demand as f64 / self.irq_period_ns as f64
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod validate_tests {
    use super::*;
    use crate::sched::rt::RtPolicy;

    #[test]
    fn each_bound_says_its_limits_under_the_components_name() {
        for name in ["irq_threads", "irq_prio", "irq_cpus", "irq_period_ns"] {
            let p = RtKthreads::param(name);
            let e = p.check_as(&format!("rt_kthreads.{name}"), i128::from(p.hi) + 1);
            let e = e.unwrap_err().to_string();
            assert!(e.contains(&format!("rt_kthreads.{name}")), "{e}");
            assert!(
                e.contains(&p.lo.to_string()) && e.contains(&p.hi.to_string()),
                "{e}"
            );
        }
    }

    fn irq(threads: u32, period: u64, run: u64) -> RtKthreads {
        RtKthreads {
            watchdog: false,
            watchdog_period_ns: 4_000_000_000,
            watchdog_run_ns: 10_000,
            irq_threads: threads,
            irq_cpus: 2,
            irq_prio: 50,
            irq_policy: RtPolicy::Fifo,
            irq_period_ns: period,
            irq_run_ns: run,
        }
    }

    #[test]
    fn rt_demand_above_the_cpu_count_is_refused() {
        // 2 CPUs: 2 threads of 9 us every 10 us is 1.8 CPUs (fine); 3 is 2.7.
        assert!(irq(2, 10_000, 9_000).validate(2).is_ok());
        let e = irq(3, 10_000, 9_000).validate(2).unwrap_err().to_string();
        assert!(e.contains("RT demand") && e.contains("2.70 CPUs"), "{e}");
    }

    #[test]
    fn rt_irq_threads_are_capped_per_cpu() {
        assert!(irq(128, 1_000_000_000, 1).validate(2).is_ok());
        let e = irq(129, 1_000_000_000, 1)
            .validate(2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("0 to 128"), "{e}");
    }
}
