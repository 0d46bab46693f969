//! Many runs in parallel: a scoped rayon pool per call (never the global
//! pool, which deadlocks in a forked child), one run per task, results in
//! input order. Each run is a pure function of its spec, so the results do
//! not depend on the thread count or on scheduling.

use crate::cost::CostModel;
use crate::engine::RunOptions;
use crate::error::CoreError;
use crate::kernel::Kernel;
use crate::result::Status;
use crate::topology::Machine;
use crate::workload::Workload;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// One run of a sweep.
pub struct RunSpec {
    pub machine: Machine,
    pub kernel: Kernel,
    pub cost: CostModel,
    pub workload: Box<dyn Workload>,
    pub opts: RunOptions,
}

/// What a sweep keeps of a run: its status and scalar metrics.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub status: &'static str,
    pub detail: String,
    pub metrics: Vec<(String, f64)>,
    pub wall_ns: u64,
}

fn run_one(spec: RunSpec, cancel: &AtomicBool) -> RunOutcome {
    let t0 = Instant::now();
    let poll = || cancel.load(Ordering::Relaxed);
    let r = crate::simulate(
        &spec.machine,
        &spec.kernel,
        &spec.cost,
        spec.workload,
        spec.opts,
        &poll,
    );
    let wall_ns = t0.elapsed().as_nanos() as u64;
    match r {
        Ok(res) => RunOutcome {
            status: res.status.name(),
            detail: res.status.detail(),
            metrics: res.metrics,
            wall_ns,
        },
        Err(crate::error::CoreError::Cancelled) => RunOutcome {
            status: Status::Cancelled.name(),
            detail: String::new(),
            metrics: Vec::new(),
            wall_ns,
        },
        Err(e) => RunOutcome {
            status: Status::Error(String::new()).name(),
            detail: e.to_string(),
            metrics: Vec::new(),
            wall_ns,
        },
    }
}

/// Run every spec on `threads` threads (0 = all cores). `cancel` stops the
/// runs in progress (they end `cancelled`) and skips the rest; `done`
/// counts finished runs as they finish.
pub fn run_many(
    specs: Vec<RunSpec>,
    threads: usize,
    cancel: &AtomicBool,
    done: &AtomicU64,
) -> Result<Vec<RunOutcome>, CoreError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| {
            CoreError::invalid(
                "threads",
                threads,
                format!("a thread count the OS allows ({e})"),
            )
        })?;
    Ok(pool.install(|| {
        specs
            .into_par_iter()
            .map(|s| {
                let out = if cancel.load(Ordering::Relaxed) {
                    RunOutcome {
                        status: Status::Cancelled.name(),
                        detail: String::new(),
                        metrics: Vec::new(),
                        wall_ns: 0,
                    }
                } else {
                    run_one(s, cancel)
                };
                done.fetch_add(1, Ordering::Relaxed);
                out
            })
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spinners::{Dist, SpinnerTask, Spinners};

    fn specs(n: usize) -> Vec<RunSpec> {
        (0..n)
            .map(|i| {
                let tasks = (0..6)
                    .map(|_| SpinnerTask {
                        nice: 0,
                        run_ns: Some(200_000),
                        sleep_ns: Some(300_000),
                        cpus: None,
                        yields: false,
                    })
                    .collect();
                RunSpec {
                    machine: Machine::preset("core2-2s").unwrap(),
                    kernel: Kernel::v3_8(),
                    cost: CostModel::default(),
                    workload: Box::new(Spinners::new(tasks, Dist::Exp).unwrap()),
                    opts: RunOptions {
                        seed: i as u64,
                        duration_ns: Some(20_000_000),
                        ..RunOptions::default()
                    },
                }
            })
            .collect()
    }

    #[test]
    fn a_run_cancelled_during_setup_is_a_cancelled_outcome() {
        let mut spec = specs(1).pop().unwrap();
        spec.machine = Machine::new(2, 64, 2, None, None).unwrap();
        let out = run_one(spec, &AtomicBool::new(true));
        assert_eq!(out.status, "cancelled");
        assert!(out.metrics.is_empty());
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let (c, d) = (AtomicBool::new(false), AtomicU64::new(0));
        let a = run_many(specs(8), 1, &c, &d).unwrap();
        let b = run_many(specs(8), 3, &c, &d).unwrap();
        assert_eq!(d.load(Ordering::Relaxed), 16);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.metrics, y.metrics);
        }
        assert_ne!(a[0].metrics, a[1].metrics, "seeds differ per run");
    }

    #[test]
    fn a_cancelled_sweep_skips_the_rest() {
        let (c, d) = (AtomicBool::new(true), AtomicU64::new(0));
        let out = run_many(specs(4), 2, &c, &d).unwrap();
        assert!(out.iter().all(|o| o.status == "cancelled"));
    }
}
