//! The `rt_app` / `from_trace` workloads' parameters (a script the Python layer
//! built: `schedlab.io.rtapp`, `schedlab.io.replay`) as a core
//! [`Script`].

use super::convert::{self, Params};
use super::errors::py_err;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::sched::task::Policy;
use crate::workload::script::{Op, Script, ScriptSpec, ScriptTask, Start, TimerSpec};

/// The operation codes, by index (what `schedlab._core.SCRIPT_OPS` lists).
pub const OPS: &[&str] = &[
    "run", "runtime", "sleep", "timer", "lock", "unlock", "wait", "signal", "broad", "barrier",
    "post", "pend", "fork", "yield", "mark",
];

fn op(param: &str, code: u64, a: u64, b: u64) -> Result<Op, crate::CoreError> {
    let id = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
    Ok(match code {
        0 => Op::Run {
            ns: a,
            c_ns: if b == 0 { a } else { b },
        },
        1 => Op::RunWall { ns: a },
        2 => Op::Sleep { ns: a },
        3 => Op::Timer {
            timer: id(a),
            period_ns: b,
        },
        4 => Op::Lock { mutex: id(a) },
        5 => Op::Unlock { mutex: id(a) },
        6 => Op::Wait {
            cond: id(a),
            mutex: id(b),
        },
        7 => Op::Signal { cond: id(a) },
        8 => Op::Broadcast { cond: id(a) },
        9 => Op::Barrier { barrier: id(a) },
        10 => Op::Post { task: id(a) },
        11 => Op::Pend { from: id(a) },
        12 => Op::Fork { task: id(a) },
        13 => Op::Yield,
        14 => Op::Mark,
        _ => {
            return Err(crate::CoreError::invalid(
                param,
                code,
                format!("an operation code from 0 to {}", OPS.len() - 1),
            ))
        }
    })
}

fn task_from(py: Python<'_>, i: usize, d: &Bound<'_, PyDict>) -> PyResult<ScriptTask> {
    let mut p = Params::new(d, "script task", "");
    let name: String = p.get("name")?;
    let nice: i32 = p.get("nice")?;
    let policy = p.named::<Policy>("policy")?;
    let rt_priority: Option<u32> = p.opt("rt_priority")?;
    let cpus: Option<Vec<u32>> = p.opt("cpus")?;
    let mm: Option<u32> = p.opt("mm")?;
    let start: String = p.get("start")?;
    let delay_ns: u64 = p.get("delay_ns")?;
    let loops: Option<u64> = p.opt("loops")?;
    let loop_from: usize = p.get::<u64>("loop_from")? as usize;
    let codes: Vec<u64> = p.get("op")?;
    let a: Vec<u64> = p.get("a")?;
    let b: Vec<u64> = p.get("b")?;
    p.finish()?;
    let err = |e| py_err(py, e);
    if a.len() != codes.len() || b.len() != codes.len() {
        return Err(err(crate::CoreError::invalid(
            &format!("tasks[{i}].a"),
            format!("lists of {} and {}", a.len(), b.len()),
            format!("one entry per operation ({})", codes.len()),
        )));
    }
    let start = match start.as_str() {
        "init" => Start::Init { delay_ns },
        "fork" => Start::Forked,
        other => {
            return Err(err(crate::CoreError::invalid(
                &format!("tasks[{i}].start"),
                format!("{other:?}"),
                "\"init\" or \"fork\"",
            )))
        }
    };
    let ops = codes
        .iter()
        .zip(&a)
        .zip(&b)
        .enumerate()
        .map(|(k, ((&c, &x), &y))| op(&format!("tasks[{i}].op[{k}]"), c, x, y))
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)?;
    Ok(ScriptTask {
        name,
        nice,
        policy,
        rt_priority,
        cpus,
        mm,
        start,
        loops,
        loop_from,
        ops,
    })
}

/// The core script of an `rt_app` or `from_trace` workload's parameters.
pub fn script_from(py: Python<'_>, kind: &'static str, d: &Bound<'_, PyDict>) -> PyResult<Script> {
    let mut p = Params::new(d, kind, "");
    let tasks = p.opt_any("tasks")?;
    let timers: Vec<bool> = p.get("timers")?;
    let mutexes: u32 = p.get("mutexes")?;
    let conds: u32 = p.get("conds")?;
    let barriers: Vec<u32> = p.get("barriers")?;
    let duration_ns: Option<u64> = p.opt("duration_ns")?;
    let net_costs: bool = p.get("net_costs")?;
    let timer_slack: bool = p.get("timer_slack")?;
    p.finish()?;
    let list = tasks
        .ok_or_else(|| {
            PyErr::from(crate::CoreError::invalid(
                "tasks",
                "<missing>",
                "a list of task dicts",
            ))
        })?
        .cast_into::<PyList>()
        .map_err(|e| convert::wrong_type("tasks", &e.into_inner(), "a list of dicts"))?;
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let t = item
            .cast_into::<PyDict>()
            .map_err(|e| convert::wrong_type(&format!("tasks[{i}]"), &e.into_inner(), "a dict"))?;
        out.push(task_from(py, i, &t)?);
    }
    let spec = ScriptSpec {
        tasks: out,
        timers: timers
            .into_iter()
            .map(|absolute| TimerSpec { absolute })
            .collect(),
        mutexes,
        conds,
        barriers,
        duration_ns,
        net_costs,
        timer_slack,
    };
    Ok(Script::new(spec)?)
}
