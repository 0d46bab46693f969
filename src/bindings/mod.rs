//! `schedlab._core`: the only module that knows Python. It converts Python
//! values to core types (dicts of named fields), maps `CoreError` to the
//! exception hierarchy of `schedlab.exceptions`, releases the GIL around a
//! run, polls Ctrl-C from inside it, and returns result columns as numpy
//! arrays moved out of their `Vec`s (no copy).

mod convert;
mod errors;
mod perfetto;
mod script;

use convert::{machine_from, value_to_py, values_from, Params};
use errors::py_err;
use ndarray::{Array2, Array3};
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::sync::Mutex;

use crate::config::{Fields, NamedEnum};
use crate::engine::RunOptions;
use crate::result::SimResult;
use crate::sched::group::GroupSpec;
use crate::sched::rt::RtPolicy;
use crate::sched::stats::latency::{bucket_bounds, quantile, Latency, LAT_BUCKETS, LAT_KINDS};
use crate::sched::task::Policy;
use crate::topology::{Machine, MACHINE_PRESETS};
use crate::trace::{EVENT_NAMES, PREV_STATE_NAMES};
use crate::workload::aim7::Aim7;
use crate::workload::attrs::{TaskAttrs, WithTasks};
use crate::workload::hackbench::{Hackbench, HackbenchParams, Ipc, Mode};
use crate::workload::kinds;
use crate::workload::mix::Mix;
use crate::workload::params::ParamStruct;
use crate::workload::pipe_pingpong::{PipePingpong, PipePingpongParams};
use crate::workload::rt_kthreads::RtKthreads;
use crate::workload::schbench::{Schbench, SchbenchParams};
use crate::workload::spinners::{Dist, SpinnerTask, Spinners};
use crate::workload::volano::Volano;
use crate::workload::Workload;
use crate::{CostModel, Kernel};

fn machine_dict<'py>(py: Python<'py>, m: &Machine) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &m.name)?;
    d.set_item("sockets", m.sockets)?;
    d.set_item("cores_per_socket", m.cores_per_socket)?;
    d.set_item("threads_per_core", m.threads_per_core)?;
    d.set_item("llc_cores", m.llc_cores)?;
    d.set_item("numa_nodes", m.numa_nodes)?;
    d.set_item("nr_cpus", m.nr_cpus())?;
    Ok(d)
}

fn fields_dict<'py, F: Fields>(py: Python<'py>, f: &F) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in f.items() {
        d.set_item(k, value_to_py(py, &v)?)?;
    }
    Ok(d)
}

/// The seed of run (`point`, `replicate`) of a sweep seeded `seed`
/// (`rng::derive_seed`).
#[pyfunction]
fn derive_seed(
    seed: &Bound<'_, PyAny>,
    point: &Bound<'_, PyAny>,
    replicate: &Bound<'_, PyAny>,
) -> PyResult<u64> {
    const ANY_U64: crate::config::Bounds = crate::config::Bounds {
        lo: 0,
        hi: u64::MAX,
        allowed: "an integer from 0 to 2**64 - 1",
    };
    Ok(crate::rng::derive_seed(
        convert::bounded_int("seed", seed, &ANY_U64)?,
        convert::bounded_int("point", point, &ANY_U64)?,
        convert::bounded_int("replicate", replicate, &ANY_U64)?,
    ))
}

/// Names of the machine presets.
#[pyfunction]
fn machine_presets() -> Vec<&'static str> {
    MACHINE_PRESETS.to_vec()
}

/// The fields of a machine preset.
#[pyfunction]
fn machine_preset<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let m = Machine::preset(name)?;
    machine_dict(py, &m)
}

/// Validate machine fields; returns them completed (defaults, `nr_cpus`).
#[pyfunction]
fn machine_check<'py>(
    py: Python<'py>,
    fields: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let m = machine_from(fields)?;
    machine_dict(py, &m)
}

#[pyfunction]
fn kernel_presets() -> Vec<&'static str> {
    crate::kernel::KERNEL_PRESETS.to_vec()
}

#[pyfunction]
fn kernel_preset<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let k = Kernel::preset(name)?;
    let d = fields_dict(py, &k)?;
    d.set_item("name", &k.name)?;
    Ok(d)
}

/// `base` with `changes` applied and validated (all or nothing).
#[pyfunction]
fn kernel_replace<'py>(
    py: Python<'py>,
    base: &str,
    fields: &Bound<'py, PyDict>,
    changes: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let k = kernel_from(base, fields, changes)?;
    let d = fields_dict(py, &k)?;
    d.set_item("name", &k.name)?;
    Ok(d)
}

fn kernel_from(
    base: &str,
    fields: &Bound<'_, PyDict>,
    changes: &Bound<'_, PyDict>,
) -> PyResult<Kernel> {
    let mut k = Kernel::preset(base)?;
    k = k.replaced(&values_from::<Kernel>(fields)?)?;
    k.replaced(&values_from::<Kernel>(changes)?)
        .map_err(PyErr::from)
}

#[pyfunction]
fn cost_defaults<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
    fields_dict(py, &CostModel::default())
}

/// The cost defaults for a machine (`CostModel::for_machine`).
#[pyfunction]
fn cost_for_machine<'py>(
    py: Python<'py>,
    machine: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let m = machine_from(machine)?;
    fields_dict(py, &CostModel::for_machine(&m))
}

#[pyfunction]
fn cost_replace<'py>(
    py: Python<'py>,
    fields: &Bound<'py, PyDict>,
    changes: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let c = cost_from(fields, changes)?;
    fields_dict(py, &c)
}

fn cost_from(fields: &Bound<'_, PyDict>, changes: &Bound<'_, PyDict>) -> PyResult<CostModel> {
    let c = CostModel::default().replaced(&values_from::<CostModel>(fields)?)?;
    c.replaced(&values_from::<CostModel>(changes)?)
        .map_err(PyErr::from)
}

/// The `rt_kthreads` component (normalised by `schedlab.workloads.rt_kthreads`),
/// checked against what no machine can run (`validate_params`; the
/// machine's own limits wait for the run).
fn rt_kthreads_from(d: &Bound<'_, PyDict>) -> PyResult<RtKthreads> {
    let k: RtKthreads = keyed(d, "rt_kthreads.")?;
    k.validate_params()?;
    Ok(k)
}

/// A `workload_params!` struct read from `d` by its declarations, every
/// key of the dict read (`prefix`: before a component's keys in errors).
fn keyed<S: ParamStruct>(d: &Bound<'_, PyDict>, prefix: &'static str) -> PyResult<S> {
    let mut p = Params::new(d, S::KIND, prefix);
    let s = S::read(&mut p)?;
    p.finish()?;
    Ok(s)
}

/// Check an `rt_kthreads` component on its own (its machine-dependent
/// limits are checked when a run has a machine).
#[pyfunction]
fn rt_kthreads_check(d: &Bound<'_, PyDict>) -> PyResult<()> {
    rt_kthreads_from(d).map(|_| ())
}

/// One `with_tasks()` entry (`workload::attrs::TaskAttrs`).
fn task_attrs_from(d: &Bound<'_, PyDict>) -> PyResult<TaskAttrs> {
    let mut p = Params::new(d, "with_tasks", "");
    use crate::workload::attrs::{CPU, NICE_RANGE, RT_PRIO_RANGE};
    let a = TaskAttrs {
        role: p.opt("role")?,
        policy: p.opt_named::<Policy>("policy")?,
        rt_priority: p
            .opt_signed("rt_priority", RT_PRIO_RANGE)?
            .map(|x| x as u32),
        nice: p.opt_signed("nice", NICE_RANGE)?.map(|x| x as i32),
        cpus: p.opt_bounded_list("cpus", &CPU)?,
        group: p.opt("group")?,
    };
    p.finish()?;
    Ok(a)
}

/// One `sl.Group` (`sched::group::GroupSpec`), checked.
fn group_from(d: &Bound<'_, PyDict>) -> PyResult<GroupSpec> {
    let mut p = Params::new(d, "group", "");
    let g = GroupSpec {
        name: p.get("name")?,
        parent: p.opt("parent")?,
        shares: p.get("shares")?,
        quota_ns: p.opt("quota_ns")?,
        period_ns: p.get("period_ns")?,
        burst_ns: p.get("burst_ns")?,
        idle: p.get("idle")?,
    };
    p.finish()?;
    g.validate()?;
    Ok(g)
}

/// A run's `groups=` list, each checked and the whole hierarchy too.
fn groups_from(v: Option<&Bound<'_, PyList>>) -> PyResult<Vec<GroupSpec>> {
    let Some(list) = v else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let d = item
            .cast_into::<PyDict>()
            .map_err(|e| convert::wrong_type(&format!("groups[{i}]"), &e.into_inner(), "a dict"))?;
        out.push(group_from(&d)?);
    }
    crate::sched::group::validate_groups(&out)?;
    Ok(out)
}

/// Check one group, or (with `groups`) a whole `groups=` list.
#[pyfunction]
#[pyo3(signature = (group=None, groups=None))]
fn group_check(
    group: Option<&Bound<'_, PyDict>>,
    groups: Option<&Bound<'_, PyList>>,
) -> PyResult<()> {
    if let Some(d) = group {
        group_from(d)?;
    }
    groups_from(groups)?;
    Ok(())
}

/// Build the core workload from its kind and normalised parameters; a
/// `with_tasks` entry (the `with_tasks()` calls, in order) wraps it in
/// `workload::attrs::WithTasks`.
fn workload_from(
    py: Python<'_>,
    kind: &str,
    params: &Bound<'_, PyDict>,
) -> PyResult<Box<dyn Workload>> {
    let Some(tasks) = params.get_item("with_tasks")? else {
        return workload_base(py, kind, params);
    };
    let rest = params.copy()?;
    rest.del_item("with_tasks")?;
    let inner = workload_base(py, kind, &rest)?;
    if tasks.is_none() {
        return Ok(inner);
    }
    let list = tasks
        .cast_into::<PyList>()
        .map_err(|e| convert::wrong_type("with_tasks", &e.into_inner(), "a list of dicts"))?;
    let mut attrs = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let d = item.cast_into::<PyDict>().map_err(|e| {
            convert::wrong_type(&format!("with_tasks[{i}]"), &e.into_inner(), "a dict")
        })?;
        attrs.push(task_attrs_from(&d)?);
    }
    Ok(Box::new(WithTasks::new(inner, attrs)?))
}

/// The workload of `kind` without task attributes.
fn workload_base(
    py: Python<'_>,
    kind: &str,
    params: &Bound<'_, PyDict>,
) -> PyResult<Box<dyn Workload>> {
    let w: Box<dyn Workload> = match kind {
        "spinners" => {
            let mut p = Params::new(params, "spinners", "");
            let nice: Vec<i32> = p.get("nice")?;
            let run: Vec<Option<u64>> = p.get("run_ns")?;
            let sleep: Vec<Option<u64>> = p.get("sleep_ns")?;
            let cpus: Vec<Option<Vec<u32>>> = p.get("cpus")?;
            let yields: Vec<bool> = p.get("yields")?;
            let dist = p.named::<Dist>("dist")?;
            p.finish()?;
            let n = nice.len();
            for (key, len) in [
                ("run_ns", run.len()),
                ("sleep_ns", sleep.len()),
                ("cpus", cpus.len()),
                ("yields", yields.len()),
            ] {
                if len != n {
                    return Err(py_err(
                        py,
                        crate::CoreError::invalid(
                            key,
                            format!("a list of {len}"),
                            format!("a list of {n}, one entry per task in nice"),
                        ),
                    ));
                }
            }
            let tasks = (0..n)
                .map(|i| SpinnerTask {
                    nice: nice[i],
                    run_ns: run[i],
                    sleep_ns: sleep[i],
                    cpus: cpus[i].clone(),
                    yields: yields[i],
                })
                .collect();
            Box::new(Spinners::new(tasks, dist)?)
        }
        "hackbench" => {
            // read here, not with `keyed`: the dict also holds rt_kthreads
            let mut p = Params::new(params, HackbenchParams::KIND, "");
            let hp = HackbenchParams::read(&mut p)?;
            let rt = match p.opt_any("rt_kthreads")? {
                Some(_) => Some(rt_kthreads_from(&p.dict("rt_kthreads")?)?),
                None => None,
            };
            p.finish()?;
            Box::new(Hackbench::new(hp)?.with_rt_kthreads(rt))
        }
        "pipe_pingpong" => {
            let pp: PipePingpongParams = keyed(params, "")?;
            Box::new(PipePingpong::new(pp.loops, pp.mode)?)
        }
        "volano" => Box::new(Volano::new(keyed(params, "")?)?),
        "aim7" => Box::new(Aim7::new(keyed(params, "")?)?),
        "schbench" => Box::new(Schbench::new(keyed(params, "")?)?),
        "rt_app" => Box::new(script::script_from(py, "rt_app", params)?),
        "from_trace" => Box::new(script::script_from(py, "from_trace", params)?),
        "mix" => {
            let mut p = Params::new(params, "mix", "");
            let names: Vec<String> = p.get("names")?;
            let parts = p.opt_any("parts")?.ok_or_else(|| {
                py_err(
                    py,
                    crate::CoreError::invalid("parts", "None", "a list of workloads"),
                )
            })?;
            p.finish()?;
            let parts = parts
                .cast_into::<PyList>()
                .map_err(|e| convert::wrong_type("parts", &e.into_inner(), "a list of dicts"))?;
            if parts.len() != names.len() {
                return Err(py_err(
                    py,
                    crate::CoreError::invalid(
                        "names",
                        format!("a list of {}", names.len()),
                        format!("one name per workload ({})", parts.len()),
                    ),
                ));
            }
            let mut built = Vec::with_capacity(parts.len());
            for (i, (item, name)) in parts.iter().zip(names).enumerate() {
                let d = item.cast_into::<PyDict>().map_err(|e| {
                    convert::wrong_type(&format!("parts[{i}]"), &e.into_inner(), "a dict")
                })?;
                let mut q = Params::new(&d, "mix part", "");
                let kind: String = q.get("kind")?;
                let wp = q.dict("params")?;
                q.finish()?;
                if kind == "mix" {
                    return Err(py_err(
                        py,
                        crate::CoreError::invalid(
                            "workloads",
                            "a mix inside a mix",
                            "workloads that are not mixes (list every part in one mix)",
                        ),
                    ));
                }
                built.push((name, workload_from(py, &kind, &wp)?));
            }
            Box::new(Mix::new(built)?)
        }
        other => {
            return Err(py_err(
                py,
                crate::CoreError::invalid("workload", format!("{other:?}"), kinds::one_of()),
            ))
        }
    };
    Ok(w)
}

/// Validate a workload's parameters without running it.
#[pyfunction]
fn workload_check(py: Python<'_>, kind: &str, params: &Bound<'_, PyDict>) -> PyResult<()> {
    workload_from(py, kind, params).map(|_| ())
}

/// The number of tasks a workload creates (`Workload::nr_tasks`; on a
/// machine of `nr_cpus` CPUs, `Workload::nr_tasks_on`).
#[pyfunction]
#[pyo3(signature = (kind, params, nr_cpus=None))]
fn workload_tasks(
    py: Python<'_>,
    kind: &str,
    params: &Bound<'_, PyDict>,
    nr_cpus: Option<usize>,
) -> PyResult<u64> {
    workload_from(py, kind, params).map(|w| {
        let own = match nr_cpus {
            Some(n) => w.nr_tasks_on(n),
            None => w.nr_tasks(),
        };
        // The RT kernel threads the engine adds beside it.
        own + w
            .rt_kthreads()
            .map_or(0, |k| crate::workload::kthreads::count(k, nr_cpus))
    })
}

/// The estimated peak bytes of one run (`limits::estimate`), by what they
/// grow with: tasks, cpus, vmstat, trace.
#[pyfunction]
#[pyo3(signature = (tasks, ncpus, *, sampled, duration_ns, interval_ns, trace_limit))]
fn footprint<'py>(
    py: Python<'py>,
    tasks: u64,
    ncpus: usize,
    sampled: bool,
    duration_ns: Option<u64>,
    interval_ns: u64,
    trace_limit: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let f = crate::limits::estimate(tasks, ncpus, sampled, duration_ns, interval_ns, trace_limit);
    let d = PyDict::new(py);
    d.set_item("tasks", f.tasks)?;
    d.set_item("cpus", f.cpus)?;
    d.set_item("vmstat", f.vmstat)?;
    d.set_item("trace", f.trace)?;
    d.set_item("total", f.total())?;
    Ok(d)
}

fn result_to_py<'py>(py: Python<'py>, r: SimResult) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    out.set_item("status", r.status.name())?;
    out.set_item("status_detail", r.status.detail())?;
    out.set_item("elapsed_ns", r.elapsed_ns)?;
    let metrics = PyDict::new(py);
    for (k, v) in &r.metrics {
        metrics.set_item(k, v)?;
    }
    out.set_item("metrics", metrics)?;

    let t = r.tasks;
    let tasks = PyDict::new(py);
    tasks.set_item("task", t.task.into_pyarray(py))?;
    tasks.set_item("name", PyList::new(py, t.name)?)?;
    tasks.set_item("nice", t.nice.into_pyarray(py))?;
    tasks.set_item("cpu", t.cpu.into_pyarray(py))?;
    tasks.set_item("cpu_s", t.cpu_s.into_pyarray(py))?;
    tasks.set_item("user_s", t.user_s.into_pyarray(py))?;
    tasks.set_item("sys_s", t.sys_s.into_pyarray(py))?;
    tasks.set_item("wait_s", t.wait_s.into_pyarray(py))?;
    tasks.set_item("voluntary_cs", t.voluntary_cs.into_pyarray(py))?;
    tasks.set_item("involuntary_cs", t.involuntary_cs.into_pyarray(py))?;
    tasks.set_item("migrations", t.migrations.into_pyarray(py))?;
    tasks.set_item("wakeups", t.wakeups.into_pyarray(py))?;
    tasks.set_item("exited", t.exited.into_pyarray(py))?;
    tasks.set_item("tgid", t.tgid.into_pyarray(py))?;
    tasks.set_item("process", PyList::new(py, t.process)?)?;
    tasks.set_item("role", PyList::new(py, t.role)?)?;
    tasks.set_item("prio", t.prio.into_pyarray(py))?;
    for (k, v) in t.extra {
        tasks.set_item(k, v.into_pyarray(py))?;
    }
    if let Some(pc) = t.pelt {
        tasks.set_item("load_avg", pc.load_avg.into_pyarray(py))?;
        tasks.set_item("runnable_avg", pc.runnable_avg.into_pyarray(py))?;
        tasks.set_item("util_avg", pc.util_avg.into_pyarray(py))?;
    }
    out.set_item("tasks", tasks)?;

    let c = r.cpus;
    let cpus = PyDict::new(py);
    cpus.set_item("cpu", c.cpu.into_pyarray(py))?;
    cpus.set_item("socket", c.socket.into_pyarray(py))?;
    cpus.set_item("core", c.core.into_pyarray(py))?;
    cpus.set_item("thread", c.thread.into_pyarray(py))?;
    cpus.set_item("llc", c.llc.into_pyarray(py))?;
    cpus.set_item("node", c.node.into_pyarray(py))?;
    cpus.set_item("user_s", c.user_s.into_pyarray(py))?;
    cpus.set_item("sys_s", c.sys_s.into_pyarray(py))?;
    cpus.set_item("idle_s", c.idle_s.into_pyarray(py))?;
    cpus.set_item("context_switches", c.context_switches.into_pyarray(py))?;
    cpus.set_item("ticks", c.ticks.into_pyarray(py))?;
    cpus.set_item("interrupts", c.interrupts.into_pyarray(py))?;
    if let Some(pc) = c.pelt {
        cpus.set_item("load_avg", pc.load_avg.into_pyarray(py))?;
        cpus.set_item("runnable_avg", pc.runnable_avg.into_pyarray(py))?;
        cpus.set_item("util_avg", pc.util_avg.into_pyarray(py))?;
    }
    out.set_item("cpus", cpus)?;

    let v = r.vmstat;
    let vm = PyDict::new(py);
    vm.set_item("time_s", v.time_s.into_pyarray(py))?;
    vm.set_item("interval_s", v.interval_s.into_pyarray(py))?;
    vm.set_item("r", v.r.into_pyarray(py))?;
    vm.set_item("in", v.in_.into_pyarray(py))?;
    vm.set_item("cs", v.cs.into_pyarray(py))?;
    vm.set_item("us", v.us.into_pyarray(py))?;
    vm.set_item("sy", v.sy.into_pyarray(py))?;
    vm.set_item("id", v.id.into_pyarray(py))?;
    out.set_item("vmstat", vm)?;

    let timeline: Bound<'py, PyArray2<f64>> = r.timeline.into_pyarray(py);
    out.set_item("timeline", timeline)?;
    let runqueue: Bound<'py, PyArray2<i64>> = r.runqueue.into_pyarray(py);
    out.set_item("runqueue", runqueue)?;

    let st = r.schedstat;
    let ss = PyDict::new(py);
    ss.set_item("cpu", st.cpu.into_pyarray(py))?;
    ss.set_item("domain", st.domain.into_pyarray(py))?;
    ss.set_item("level", PyList::new(py, st.level)?)?;
    ss.set_item("span_weight", st.span_weight.into_pyarray(py))?;
    for (name, col) in st.counters {
        ss.set_item(name, col.into_pyarray(py))?;
    }
    out.set_item("schedstat", ss)?;

    match r.trace {
        None => out.set_item("trace", py.None())?,
        Some(tr) => {
            let d = PyDict::new(py);
            d.set_item("time_ns", tr.time_ns.into_pyarray(py))?;
            d.set_item("cpu", tr.cpu.into_pyarray(py))?;
            d.set_item("kind", tr.kind.into_pyarray(py))?;
            d.set_item("pid", tr.pid.into_pyarray(py))?;
            d.set_item("a", tr.a.into_pyarray(py))?;
            d.set_item("b", tr.b.into_pyarray(py))?;
            d.set_item("dropped", tr.dropped)?;
            let (bt, pt) = (tr.balance, tr.pelt);
            let b = PyDict::new(py);
            b.set_item("time_ns", bt.time_ns.into_pyarray(py))?;
            b.set_item("cpu", bt.cpu.into_pyarray(py))?;
            b.set_item("dst_cpu", bt.dst_cpu.into_pyarray(py))?;
            b.set_item("domain", bt.domain.into_pyarray(py))?;
            b.set_item("idle", bt.idle.into_pyarray(py))?;
            b.set_item("kind", bt.kind.into_pyarray(py))?;
            b.set_item("outcome", bt.outcome.into_pyarray(py))?;
            b.set_item("moved", bt.moved.into_pyarray(py))?;
            b.set_item("busiest", bt.busiest.into_pyarray(py))?;
            b.set_item("active", bt.active.into_pyarray(py))?;
            b.set_item("cost_ns", bt.cost_ns.into_pyarray(py))?;
            b.set_item("dropped", bt.dropped)?;
            d.set_item("balance", b)?;
            let p = PyDict::new(py);
            p.set_item("time_ns", pt.time_ns.into_pyarray(py))?;
            p.set_item("cpu", pt.cpu.into_pyarray(py))?;
            p.set_item("util_avg", pt.util_avg.into_pyarray(py))?;
            p.set_item("load_avg", pt.load_avg.into_pyarray(py))?;
            p.set_item("runnable_avg", pt.runnable_avg.into_pyarray(py))?;
            p.set_item("dropped", pt.dropped)?;
            d.set_item("pelt", p)?;
            out.set_item("trace", d)?;
        }
    }
    match r.latency {
        None => out.set_item("latency", py.None())?,
        Some(l) => out.set_item("latency", latency_to_py(py, l)?)?,
    }
    Ok(out)
}

/// A run's `sched::stats::latency::Latency` as numpy arrays: `hist` (tasks × 2 ×
/// buckets, kind 0 all delays, 1 wake-up delays), `count`, `sum_ns`,
/// `max_ns` (tasks × 2) and `max_start_ns` (tasks).
fn latency_to_py(py: Python<'_>, l: Latency) -> PyResult<Bound<'_, PyDict>> {
    let n = l.count.len();
    let d = PyDict::new(py);
    let hist = Array3::from_shape_vec((n, LAT_KINDS, LAT_BUCKETS), l.hist)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    d.set_item("hist", hist.into_pyarray(py))?;
    let pairs = |v: Vec<[u64; LAT_KINDS]>| {
        Array2::from_shape_vec((n, LAT_KINDS), v.into_iter().flatten().collect())
    };
    for (name, v) in [
        ("count", l.count),
        ("sum_ns", l.sum_ns),
        ("max_ns", l.max_ns),
    ] {
        let a = pairs(v).map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        d.set_item(name, a.into_pyarray(py))?;
    }
    d.set_item("max_start_ns", l.max_start_ns.into_pyarray(py))?;
    Ok(d)
}

/// The `q`-quantiles of each row of `hist` (rows × `LATENCY_BUCKETS`
/// counts) whose largest values are `max_ns`, in ns: NaN for an empty row
/// (`sched::stats::latency::quantile`, the rule the run's own metrics use).
#[pyfunction]
fn latency_quantiles<'py>(
    py: Python<'py>,
    hist: PyReadonlyArray2<'py, u32>,
    max_ns: PyReadonlyArray1<'py, u64>,
    qs: Vec<f64>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let h = hist.as_array();
    let mx = max_ns.as_array();
    if h.ncols() != LAT_BUCKETS || h.nrows() != mx.len() {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "invalid hist of shape {:?} with {} maxima: expected rows x {LAT_BUCKETS} and one \
             maximum per row",
            h.shape(),
            mx.len()
        )));
    }
    if let Some(q) = qs.iter().find(|q| !(**q > 0.0 && **q <= 1.0)) {
        return Err(pyo3::exceptions::PyValueError::new_err(format!(
            "invalid quantile {q}: expected 0 < q <= 1"
        )));
    }
    let mut out = Array2::<f64>::from_elem((h.nrows(), qs.len()), f64::NAN);
    for (i, row) in h.rows().into_iter().enumerate() {
        let row: Vec<u32> = row.to_vec();
        for (j, &q) in qs.iter().enumerate() {
            if let Some(v) = quantile(&row, q, mx[i]) {
                out[[i, j]] = v as f64;
            }
        }
    }
    Ok(out.into_pyarray(py))
}

/// Run one simulation with the GIL released. Ctrl-C is polled from inside
/// the event loop; a cancelled run raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (machine, kernel_base, kernel, cost, workload_kind, workload, *, seed, duration_ns, trace_limit, interval_ns, latency=false, groups=None))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    machine: &Bound<'py, PyDict>,
    kernel_base: &str,
    kernel: &Bound<'py, PyDict>,
    cost: &Bound<'py, PyDict>,
    workload_kind: &str,
    workload: &Bound<'py, PyDict>,
    seed: u64,
    duration_ns: Option<u64>,
    trace_limit: Option<usize>,
    interval_ns: u64,
    latency: bool,
    groups: Option<&Bound<'py, PyList>>,
) -> PyResult<Bound<'py, PyDict>> {
    let m = machine_from(machine)?;
    let empty = PyDict::new(py);
    let k = kernel_from(kernel_base, kernel, &empty)?;
    let c = cost_from(cost, &empty)?;
    let w = workload_from(py, workload_kind, workload)?;
    let opts = RunOptions {
        seed,
        duration_ns,
        trace_limit,
        sample_interval_ns: interval_ns,
        max_sample_bytes: crate::limits::MAX_VMSTAT_BYTES,
        latency,
        groups: groups_from(groups)?,
    };
    let interrupt: Mutex<Option<PyErr>> = Mutex::new(None);
    let cancel = || {
        Python::attach(|py| match py.check_signals() {
            Ok(()) => false,
            Err(e) => {
                *interrupt.lock().expect("interrupt flag") = Some(e);
                true
            }
        })
    };
    let res = py.detach(|| crate::simulate(&m, &k, &c, w, opts, &cancel));
    if let Some(e) = interrupt.into_inner().expect("interrupt flag") {
        return Err(e);
    }
    let r = res?;
    result_to_py(py, r)
}

/// Build one sweep run from its dict, or say why it cannot run.
fn run_spec(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<crate::sweep::RunSpec> {
    let mut p = Params::new(d, "run spec", "");
    let machine = machine_from(&p.dict("machine")?)?;
    let empty = PyDict::new(py);
    let base: String = p.get("kernel_base")?;
    let kernel = kernel_from(&base, &p.dict("kernel")?, &empty)?;
    let cost = cost_from(&p.dict("cost")?, &empty)?;
    let kind: String = p.get("workload_kind")?;
    let workload = workload_from(py, &kind, &p.dict("workload")?)?;
    let opts = RunOptions {
        seed: p.get("seed")?,
        duration_ns: p.get("duration_ns")?,
        trace_limit: None,
        sample_interval_ns: p.get("interval_ns")?,
        // A sweep row has no vmstat: no periodic samples.
        max_sample_bytes: 0,
        // Only the run's latency metrics reach a sweep row.
        latency: p.opt("latency")?.unwrap_or(false),
        groups: match p.opt_any("groups")? {
            Some(v) if !v.is_none() => {
                let list = v.cast_into::<PyList>().map_err(|e| {
                    convert::wrong_type("groups", &e.into_inner(), "a list of dicts")
                })?;
                groups_from(Some(&list))?
            }
            _ => Vec::new(),
        },
    };
    p.finish()?;
    Ok(crate::sweep::RunSpec {
        machine,
        kernel,
        cost,
        workload,
        opts,
    })
}

/// Run many configurations in parallel on `threads` threads (0 = all
/// cores), the GIL released. A run whose configuration is invalid comes back
/// with status "error" and the message; the others are unaffected. Ctrl-C
/// cancels the runs in progress, waits for them to stop (they end
/// "cancelled", the runs not started too) and raises `BatchInterrupted`, a
/// `KeyboardInterrupt` whose `outcomes` holds the finished runs' results.
#[pyfunction]
fn run_batch<'py>(
    py: Python<'py>,
    specs: &Bound<'py, PyList>,
    threads: usize,
) -> PyResult<Bound<'py, PyList>> {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let mut built: Vec<crate::sweep::RunSpec> = Vec::new();
    let mut slot: Vec<Result<usize, String>> = Vec::new();
    for d in specs.iter() {
        let d = d.cast::<PyDict>()?;
        match run_spec(py, d) {
            Ok(s) => {
                slot.push(Ok(built.len()));
                built.push(s);
            }
            Err(e) => slot.push(Err(e.value(py).to_string())),
        }
    }
    let cancel = AtomicBool::new(false);
    let done = AtomicU64::new(0);
    let mut interrupt: Option<PyErr> = None;
    let outcomes = py.detach(|| {
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            let (cancel, done) = (&cancel, &done);
            s.spawn(move || {
                // the receiver outlives this scope's threads
                let _ = tx.send(crate::sweep::run_many(built, threads, cancel, done));
            });
            // Wait for the runs; every 20 ms, look for Ctrl-C.
            loop {
                match rx.recv_timeout(std::time::Duration::from_millis(20)) {
                    Ok(r) => break r,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                        if interrupt.is_none() {
                            if let Err(e) = Python::attach(|py| py.check_signals()) {
                                interrupt = Some(e);
                                cancel.store(true, Ordering::Relaxed);
                            }
                        }
                    }
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        panic!("sweep thread ended without a result")
                    }
                }
            }
        })
    });
    let outcomes = match (interrupt, outcomes) {
        // Ctrl-C: the runs in progress stopped ("cancelled") and run_many
        // returned; hand back the finished ones with the interrupt.
        (Some(e), Ok(outcomes)) if e.is_instance_of::<PyKeyboardInterrupt>(py) => {
            let list = batch_outcomes(py, slot, &outcomes)?;
            let exc = errors::batch_interrupted(py).call1(("run_batch interrupted",))?;
            exc.setattr("outcomes", list)?;
            return Err(PyErr::from_value(exc));
        }
        (Some(e), _) => return Err(e),
        (None, r) => r?,
    };
    batch_outcomes(py, slot, &outcomes)
}

/// `run_batch`'s result: a dict per spec, in input order.
fn batch_outcomes<'py>(
    py: Python<'py>,
    slot: Vec<Result<usize, String>>,
    outcomes: &[crate::sweep::RunOutcome],
) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for sl in slot {
        let d = PyDict::new(py);
        match sl {
            Ok(i) => {
                let o = &outcomes[i];
                d.set_item("status", o.status)?;
                d.set_item("status_detail", &o.detail)?;
                let m = PyDict::new(py);
                for (k, v) in &o.metrics {
                    m.set_item(k, v)?;
                }
                d.set_item("metrics", m)?;
                d.set_item("wall_s", o.wall_ns as f64 / 1e9)?;
            }
            Err(msg) => {
                d.set_item("status", "error")?;
                d.set_item("status_detail", msg)?;
                d.set_item("metrics", PyDict::new(py))?;
                d.set_item("wall_s", 0.0)?;
            }
        }
        out.append(d)?;
    }
    Ok(out)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::add_to(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "build_profile",
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
    )?;
    m.add("TRACE_EVENTS", EVENT_NAMES.to_vec())?;
    m.add(
        "WORKLOAD_KINDS",
        kinds::KINDS.iter().map(|k| k.name).collect::<Vec<_>>(),
    )?;
    m.add(
        "WORKLOAD_COMPONENTS",
        kinds::COMPONENTS.iter().map(|k| k.name).collect::<Vec<_>>(),
    )?;
    m.add(
        "WORKLOAD_KEYED_KINDS",
        kinds::KINDS
            .iter()
            .filter(|k| k.keyed)
            .map(|k| k.name)
            .collect::<Vec<_>>(),
    )?;
    m.add("WORKLOAD_PARAMS", convert::workload_param_info(m.py())?)?;
    m.add(
        "METRIC_INFO",
        crate::metrics::all()
            .into_iter()
            .map(|(family, d)| (family, d.name, d.unit, d.meaning, d.source))
            .collect::<Vec<_>>(),
    )?;
    // The latency histograms' bucket lower edges in ns (the last bucket
    // holds every delay from its edge up).
    let edges: Vec<u64> = (0..LAT_BUCKETS).map(|i| bucket_bounds(i).0).collect();
    m.add("LATENCY_BUCKETS", edges)?;
    m.add(
        "LATENCY_TASK_BYTES",
        crate::sched::stats::latency::LAT_TASK_BYTES,
    )?;
    m.add("PREV_STATES", PREV_STATE_NAMES.to_vec())?;
    m.add("BALANCE_KINDS", crate::trace::BALANCE_KIND_NAMES.to_vec())?;
    m.add(
        "BALANCE_OUTCOMES",
        crate::trace::BALANCE_OUTCOME_NAMES.to_vec(),
    )?;
    {
        use crate::export::perfetto as pf;
        let tracks = PyDict::new(m.py());
        tracks.set_item("runqueue", pf::RUNQUEUE_TRACK_BASE)?;
        tracks.set_item("balancer", pf::BALANCE_TRACK_BASE)?;
        tracks.set_item("util_avg", pf::UTIL_TRACK_BASE)?;
        tracks.set_item("load_avg", pf::LOAD_TRACK_BASE)?;
        m.add("PERFETTO_TRACK_BASES", tracks)?;
        m.add("PERFETTO_SEQUENCE_ID", pf::SEQUENCE_ID)?;
        m.add("PERFETTO_CHUNK_BYTES", pf::DEFAULT_CHUNK_BYTES)?;
    }
    m.add("KERNEL_FIELDS", Kernel::field_names().to_vec())?;
    m.add("KERNEL_FIELD_INFO", convert::kernel_field_info(m.py())?)?;
    m.add(
        "KERNEL_RETIRED_FIELDS",
        crate::kernel::RETIRED
            .iter()
            .filter(|r| r.value.is_none())
            .map(|r| (r.field, r.why))
            .collect::<Vec<_>>(),
    )?;
    m.add("COST_FIELDS", CostModel::field_names().to_vec())?;
    m.add("COST_FIELD_INFO", convert::cost_field_info(m.py())?)?;
    m.add("FIELD_KINDS", crate::kernel::FieldKind::NAMES.to_vec())?;
    m.add("HACKBENCH_IPCS", Ipc::NAMES.to_vec())?;
    m.add("HACKBENCH_MODES", Mode::NAMES.to_vec())?;
    m.add("SPINNER_DISTS", Dist::NAMES.to_vec())?;
    m.add("RT_POLICIES", RtPolicy::NAMES.to_vec())?;
    m.add("TASK_POLICIES", Policy::NAMES.to_vec())?;
    let roles = PyDict::new(m.py());
    for k in kinds::KINDS.iter().filter(|k| !k.roles.is_empty()) {
        roles.set_item(k.name, k.roles.to_vec())?;
    }
    m.add("WORKLOAD_ROLES", roles)?;
    m.add("SCRIPT_OPS", script::OPS.to_vec())?;
    m.add("SCRIPT_MAX_OPS", crate::workload::script::MAX_OPS)?;
    m.add("AIM7_WORKFILES", crate::workload::aim7::workfile_names())?;
    m.add("SCHBENCH_MAC_NS", SchbenchParams::default().mac_ns)?;
    m.add("AIM7_MAX_FILE_KB", crate::workload::aim7::MAX_FILE_KB)?;
    m.add(
        "AIM7_MAX_SHARED_LINES",
        crate::workload::aim7::MAX_SHARED_LINES,
    )?;
    m.add(
        "AIM7_SHARED_LINES",
        crate::workload::aim7::TESTS
            .iter()
            .map(|t| t.shared_lines)
            .collect::<Vec<u64>>(),
    )?;
    m.add(
        "IDLE_TYPES",
        crate::sched::balance::IDLE_TYPE_NAMES.to_vec(),
    )?;
    m.add_function(wrap_pyfunction!(derive_seed, m)?)?;
    m.add_function(wrap_pyfunction!(machine_presets, m)?)?;
    m.add_function(wrap_pyfunction!(machine_preset, m)?)?;
    m.add_function(wrap_pyfunction!(machine_check, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_presets, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_preset, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_replace, m)?)?;
    m.add_function(wrap_pyfunction!(cost_defaults, m)?)?;
    m.add_function(wrap_pyfunction!(cost_replace, m)?)?;
    m.add_function(wrap_pyfunction!(cost_for_machine, m)?)?;
    m.add_function(wrap_pyfunction!(workload_check, m)?)?;
    m.add_function(wrap_pyfunction!(group_check, m)?)?;
    m.add_function(wrap_pyfunction!(rt_kthreads_check, m)?)?;
    m.add_function(wrap_pyfunction!(workload_tasks, m)?)?;
    m.add_function(wrap_pyfunction!(footprint, m)?)?;
    m.add("MAX_TASKS", crate::limits::MAX_TASKS)?;
    m.add("MAX_TRACE_ROWS", crate::limits::MAX_TRACE_ROWS)?;
    m.add("MAX_VMSTAT_BYTES", crate::limits::MAX_VMSTAT_BYTES)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(latency_quantiles, m)?)?;
    m.add_function(wrap_pyfunction!(run_batch, m)?)?;
    m.add_function(wrap_pyfunction!(perfetto::perfetto_body, m)?)?;
    Ok(())
}
