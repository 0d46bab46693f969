//! `_core.perfetto_body`: the tables of `schedlab.io.pftrace` as numpy
//! arrays in, the trace's rows fetched a chunk at a time from a Python
//! callable, `export::perfetto::BodyWriter` run on them with the GIL
//! released, its output handed to another callable.

use numpy::{Element, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::io::{self, Write};

use super::convert::wrong_type;
use super::errors::py_err;
use crate::error::CoreError;
use crate::export::perfetto::{
    BalanceRows, BodyWriter, ExportError, Options, PeltRows, Samples, SchedRows, Tables, TaskRows,
};

/// Column `key` of the table `table` (a dict of 1-d numpy arrays).
fn column<'py, T: Element>(
    d: &Bound<'py, PyDict>,
    table: &str,
    key: &str,
    dtype: &str,
) -> PyResult<PyReadonlyArray1<'py, T>> {
    let param = format!("{table}[{key:?}]");
    let v = d
        .get_item(key)?
        .ok_or_else(|| PyErr::from(CoreError::invalid(&param, "missing", "a column")))?;
    v.extract()
        .map_err(|_| wrong_type(&param, &v, &format!("a 1-d numpy array of {dtype}")))
}

/// A list of str of the table `table`.
fn labels(d: &Bound<'_, PyDict>, table: &str, key: &str) -> PyResult<Vec<String>> {
    let param = format!("{table}[{key:?}]");
    let v = d
        .get_item(key)?
        .ok_or_else(|| PyErr::from(CoreError::invalid(&param, "missing", "a list of str")))?;
    v.extract()
        .map_err(|_| wrong_type(&param, &v, "a list of str"))
}

/// The array's data as a slice (a contiguous array).
fn slice<'a, T: Element>(a: &'a PyReadonlyArray1<'_, T>, param: &str) -> PyResult<&'a [T]> {
    a.as_slice()
        .map_err(|_| CoreError::invalid(param, "a strided array", "a contiguous array").into())
}

/// The Python callable the chunks go to, polled for Ctrl-C before each;
/// the exception it (or the signal handler) raises is kept for the caller.
struct PyWriter {
    write: Py<PyAny>,
    err: Option<PyErr>,
}

impl Write for PyWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let write = &self.write;
        let r = Python::attach(|py| -> PyResult<()> {
            py.check_signals()?;
            write.call1(py, (PyBytes::new(py, buf),))?;
            Ok(())
        });
        match r {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                self.err = Some(e);
                Err(io::Error::other("the write callback raised"))
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// An export error as the exception to raise: the write callback's own
/// (or Ctrl-C's) when it raised, else `ConfigError` for an invalid table or
/// row, `OSError` for a failed write.
fn export_err(py: Python<'_>, w: &mut PyWriter, e: ExportError) -> PyErr {
    if let Some(err) = w.err.take() {
        return err;
    }
    match e {
        ExportError::Invalid(e) => py_err(py, e),
        e @ ExportError::Io(_) => PyOSError::new_err(e.to_string()),
    }
}

/// Write the body of a Perfetto trace (`export::perfetto`: the ftrace event
/// bundles of the trace, the counters and balancer slices): `rows()` gives
/// the trace's next rows (a dict of arrays, see `_core.pyi`) until it
/// returns None, `write(chunk)` takes each chunk of bytes; the encoding
/// runs with the GIL released. An invalid table raises `ConfigError`
/// naming the column before `write` is first called, an invalid row before
/// its chunk is written; an exception from `rows`, from `write` (or
/// Ctrl-C) stops the export and propagates.
#[pyfunction]
#[pyo3(signature = (write, rows, tasks, sample_ns, runqueue, pelt, balance, *, nr_cpus, compact, max_bundle_events, end_ns, truncated, chunk_bytes))]
#[allow(clippy::too_many_arguments)]
pub fn perfetto_body(
    py: Python<'_>,
    write: Py<PyAny>,
    rows: &Bound<'_, PyAny>,
    tasks: &Bound<'_, PyDict>,
    sample_ns: PyReadonlyArray1<'_, u64>,
    runqueue: PyReadonlyArray2<'_, i64>,
    pelt: &Bound<'_, PyDict>,
    balance: &Bound<'_, PyDict>,
    nr_cpus: usize,
    compact: bool,
    max_bundle_events: usize,
    end_ns: u64,
    truncated: bool,
    chunk_bytes: usize,
) -> PyResult<()> {
    let k_pid = column::<i64>(tasks, "tasks", "pid", "int64")?;
    let k_comm = labels(tasks, "tasks", "comm")?;
    let k_prio = column::<i64>(tasks, "tasks", "prio", "int64")?;
    let k_tgid = column::<i64>(tasks, "tasks", "tgid", "int64")?;
    let p_time = column::<u64>(pelt, "pelt", "time_ns", "uint64")?;
    let p_cpu = column::<i32>(pelt, "pelt", "cpu", "int32")?;
    let p_util = column::<u64>(pelt, "pelt", "util_avg", "uint64")?;
    let p_load = column::<u64>(pelt, "pelt", "load_avg", "uint64")?;
    let b_time = column::<u64>(balance, "balance", "time_ns", "uint64")?;
    let b_cpu = column::<i32>(balance, "balance", "cpu", "int32")?;
    let b_cost = column::<u64>(balance, "balance", "cost_ns", "uint64")?;
    let b_name = column::<u32>(balance, "balance", "name", "uint32")?;
    let b_names = labels(balance, "balance", "names")?;
    let b_dst = column::<i32>(balance, "balance", "dst_cpu", "int32")?;
    let b_domain = column::<u8>(balance, "balance", "domain", "uint8")?;
    let b_moved = column::<u32>(balance, "balance", "moved", "uint32")?;
    let b_idle = column::<u8>(balance, "balance", "idle", "uint8")?;
    let b_idle_names = labels(balance, "balance", "idle_names")?;
    let b_outcome = column::<u8>(balance, "balance", "outcome", "uint8")?;
    let b_outcome_names = labels(balance, "balance", "outcome_names")?;
    let b_busiest = column::<i32>(balance, "balance", "busiest", "int32")?;
    let b_active = column::<bool>(balance, "balance", "active", "bool")?;
    let tables = Tables {
        tasks: TaskRows {
            pid: slice(&k_pid, "tasks['pid']")?,
            comm: &k_comm,
            prio: slice(&k_prio, "tasks['prio']")?,
            tgid: slice(&k_tgid, "tasks['tgid']")?,
        },
        samples: Samples {
            time_ns: slice(&sample_ns, "sample_ns")?,
            runqueue: runqueue.as_array(),
        },
        pelt: PeltRows {
            time_ns: slice(&p_time, "pelt['time_ns']")?,
            cpu: slice(&p_cpu, "pelt['cpu']")?,
            util_avg: slice(&p_util, "pelt['util_avg']")?,
            load_avg: slice(&p_load, "pelt['load_avg']")?,
        },
        balance: BalanceRows {
            time_ns: slice(&b_time, "balance['time_ns']")?,
            cpu: slice(&b_cpu, "balance['cpu']")?,
            cost_ns: slice(&b_cost, "balance['cost_ns']")?,
            name: slice(&b_name, "balance['name']")?,
            names: &b_names,
            dst_cpu: slice(&b_dst, "balance['dst_cpu']")?,
            domain: slice(&b_domain, "balance['domain']")?,
            moved: slice(&b_moved, "balance['moved']")?,
            idle: slice(&b_idle, "balance['idle']")?,
            idle_names: &b_idle_names,
            outcome: slice(&b_outcome, "balance['outcome']")?,
            outcome_names: &b_outcome_names,
            busiest: slice(&b_busiest, "balance['busiest']")?,
            active: slice(&b_active, "balance['active']")?,
        },
    };
    let opts = Options {
        nr_cpus,
        compact,
        max_bundle_events,
        end_ns,
        truncated,
        chunk_bytes,
    };
    let mut w = PyWriter { write, err: None };
    let mut body = match BodyWriter::new(&mut w, &tables, &opts) {
        Ok(b) => b,
        Err(e) => return Err(export_err(py, &mut w, e)),
    };
    let res = loop {
        let chunk = rows.call0()?;
        if chunk.is_none() {
            break py.detach(|| body.finish());
        }
        let d = chunk
            .cast::<PyDict>()
            .map_err(|_| wrong_type("rows()", &chunk, "a dict of numpy arrays or None"))?;
        let t_time = column::<u64>(d, "rows()", "time_ns", "uint64")?;
        let t_cpu = column::<i32>(d, "rows()", "cpu", "int32")?;
        let t_kind = column::<u8>(d, "rows()", "kind", "uint8")?;
        let t_pid = column::<i32>(d, "rows()", "pid", "int32")?;
        let t_a = column::<i32>(d, "rows()", "a", "int32")?;
        let t_b = column::<i32>(d, "rows()", "b", "int32")?;
        let sched = SchedRows {
            time_ns: slice(&t_time, "rows()['time_ns']")?,
            cpu: slice(&t_cpu, "rows()['cpu']")?,
            kind: slice(&t_kind, "rows()['kind']")?,
            pid: slice(&t_pid, "rows()['pid']")?,
            a: slice(&t_a, "rows()['a']")?,
            b: slice(&t_b, "rows()['b']")?,
        };
        if let Err(e) = py.detach(|| body.push(&sched)) {
            break Err(e);
        }
    };
    res.map_err(|e| export_err(py, &mut w, e))
}
