//! schedlab: a fast, deterministic discrete-event model of the Linux CFS
//! scheduler and its load balancing, for sweeping scheduler tunables.
//!
//! Module map: `topology` (Machine), `kernel` (Kernel profile), `cost`
//! (CostModel), `engine` (the event loop, `engine::Sim`, which owns the
//! scheduler), `queue` (the event queue, a data structure), `sched` (the
//! scheduler: `sched::Sched`, CFS/EEVDF, balancing and the domains, the RT
//! class, task groups, accounting, and the events it posts through its
//! hooks), `power` (the power model's machine data), `sweep` (a sweep's
//! points run in parallel), `error`, `workload`
//! (task state machines), `result` (columns), `trace`, `config` (named
//! fields), `rng`, `limits` (memory limits of a run), `metrics` (every
//! metric's declaration gathered, for the docs' reference), `export` (the
//! Perfetto trace's body, encoded from the result's columns). `bindings` (feature
//! `python`) is the only place that knows Python. docs/model.md describes
//! how the model follows the kernel and how engine and scheduler split.

pub mod config;
pub mod cost;
pub mod engine;
pub mod error;
pub mod export;
pub mod kernel;
pub mod limits;
pub mod metrics;
pub mod power;
pub mod queue;
pub mod result;
pub mod rng;
pub mod sched;
pub mod sweep;
pub mod topology;
pub mod trace;
pub mod workload;

#[cfg(feature = "python")]
mod bindings;

pub use config::{Fields, Value};
pub use cost::CostModel;
pub use engine::RunOptions;
pub use error::{CoreError, CoreResult};
pub use kernel::Kernel;
pub use result::{SimResult, Status};
pub use topology::Machine;
pub use workload::Workload;

/// Run one simulation: a pure function of (machine, kernel, costs,
/// workload, options). `cancel` is polled while the machine is set up and
/// then every few thousand events; when it returns true the run stops with
/// `Status::Cancelled` (`Err(CoreError::Cancelled)` during setup).
pub fn simulate(
    machine: &Machine,
    kernel: &Kernel,
    cost: &CostModel,
    workload: Box<dyn Workload>,
    opts: RunOptions,
    cancel: &dyn Fn() -> bool,
) -> CoreResult<SimResult> {
    let sim = engine::Sim::new_cancellable(machine, kernel, cost, workload, opts, cancel)?;
    Ok(sim.run(cancel))
}
