//! `CostModel`: the CPU time and delays the model charges for scheduler
//! work. The effects the tunables trade off exist only because these are
//! charged. All in nanoseconds.
//!
//! Defaults come from the published figures in kernel-facts §11: a direct
//! context switch of a few µs (Li, Ding & Shen 2007: 3.8 µs on 2.6.17; ~3.5 µs
//! on a 2019 desktop), an IPI of 1600–2000 cycles to send (Pallipadi 2012)
//! and ~1–3 µs round trip, and a timer tick of 0.5–1.5 % of a CPU at
//! HZ=1000 (Tsafrir 2007), i.e. ≈1 µs of direct handler time.

use crate::config::{Fields, Value};
use crate::error::CoreResult;

#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// Direct cost of `context_switch()` (register/stack switch plus the
    /// scheduler's own bookkeeping), charged as system time to the CPU
    /// switching to a task.
    pub context_switch_ns: u64,
    /// Kernel entry/exit of a cheap system call such as `sched_yield()`.
    pub syscall_ns: u64,
    /// `try_to_wake_up()` run by the waker (system time on the waker's CPU).
    pub wakeup_ns: u64,
    /// `scheduler_tick()` and the timer interrupt around it.
    pub tick_ns: u64,
    /// From a remote `resched_task()` (reschedule IPI, or the wake of a
    /// polling idle CPU) until the target CPU enters `schedule()`.
    pub ipi_latency_ns: u64,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel {
            context_switch_ns: 2_000,
            syscall_ns: 100,
            wakeup_ns: 1_000,
            tick_ns: 1_000,
            ipi_latency_ns: 2_000,
        }
    }
}

const FIELDS: &[&str] = &[
    "context_switch_ns",
    "syscall_ns",
    "wakeup_ns",
    "tick_ns",
    "ipi_latency_ns",
];

/// 1 ms: any single charge larger than that is a mistake, not a model.
const MAX_COST_NS: u64 = 1_000_000;

impl Fields for CostModel {
    const KIND: &'static str = "CostModel";

    fn field_names() -> &'static [&'static str] {
        FIELDS
    }

    fn get(&self, name: &str) -> Option<Value> {
        let v = match name {
            "context_switch_ns" => self.context_switch_ns,
            "syscall_ns" => self.syscall_ns,
            "wakeup_ns" => self.wakeup_ns,
            "tick_ns" => self.tick_ns,
            "ipi_latency_ns" => self.ipi_latency_ns,
            _ => return None,
        };
        Some(Value::Int(v as i64))
    }

    fn set(&mut self, name: &str, v: &Value) -> CoreResult<()> {
        let slot = match name {
            "context_switch_ns" => &mut self.context_switch_ns,
            "syscall_ns" => &mut self.syscall_ns,
            "wakeup_ns" => &mut self.wakeup_ns,
            "tick_ns" => &mut self.tick_ns,
            "ipi_latency_ns" => &mut self.ipi_latency_ns,
            _ => return Err(Self::unknown(name)),
        };
        *slot = v.as_u64(name, 0, MAX_COST_NS)?;
        Ok(())
    }
}
