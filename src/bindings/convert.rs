//! Conversions between Python values and core types.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use pyo3::IntoPyObjectExt;

use super::errors::py_err;

use crate::config::Value;
use crate::error::CoreError;
use crate::topology::Machine;

/// A Python scalar as a config `Value` (bool before int: `bool` is an `int`).
pub fn value_from(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    if v.is_instance_of::<PyBool>() {
        Ok(Value::Bool(v.extract()?))
    } else if v.is_instance_of::<PyInt>() {
        v.extract::<i64>().map(Value::Int).map_err(|_| {
            PyErr::from(CoreError::invalid(
                param,
                v.to_string(),
                "an integer that fits in 64 bits",
            ))
        })
    } else if v.is_instance_of::<PyFloat>() {
        Ok(Value::Float(v.extract()?))
    } else if v.is_instance_of::<PyString>() {
        // A str with a lone surrogate ("\ud800") has no UTF-8 form.
        v.extract::<String>()
            .map(Value::Str)
            .map_err(|_| PyErr::from(CoreError::invalid(param, py_repr(v), UTF8_TEXT)))
    } else {
        let tn = v.get_type().name()?.to_string();
        Err(PyErr::from(CoreError::WrongType {
            param: param.to_string(),
            got: tn,
            expected: "int, float, bool or str".into(),
        }))
    }
}

/// An integer from 0 to 2⁶⁴ − 1: a Python `int` or anything with
/// `__index__` (numpy integers), not a `bool`.
pub fn u64_from(param: &str, v: &Bound<'_, PyAny>) -> PyResult<u64> {
    let allowed = "an integer from 0 to 2**64 - 1";
    if v.is_instance_of::<PyBool>() || v.hasattr("__index__").ok() != Some(true) {
        let tn = v.get_type().name()?.to_string();
        return Err(CoreError::WrongType {
            param: param.to_string(),
            got: format!("{tn} {}", py_repr(v)),
            expected: allowed.into(),
        }
        .into());
    }
    v.extract::<u64>()
        .map_err(|_| CoreError::invalid(param, py_repr(v), allowed).into())
}

/// What a str must be to cross into the core.
const UTF8_TEXT: &str = "text that encodes as UTF-8 (no lone surrogates)";

/// `repr(v)` (ASCII-safe escapes for what UTF-8 cannot carry), for messages.
fn py_repr(v: &Bound<'_, PyAny>) -> String {
    v.repr()
        .map(|r| r.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "<unprintable>".into())
}

pub fn values_from(d: &Bound<'_, PyDict>) -> PyResult<Vec<(String, Value)>> {
    let mut out = Vec::with_capacity(d.len());
    for (k, v) in d.iter() {
        let k: String = k
            .extract()
            .map_err(|_| PyErr::from(CoreError::invalid("field name", py_repr(&k), UTF8_TEXT)))?;
        if k == "name" {
            continue;
        }
        let val = value_from(&k, &v)?;
        out.push((k, val));
    }
    Ok(out)
}

pub fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    match v {
        Value::Int(i) => i.into_py_any(py),
        Value::Float(f) => f.into_py_any(py),
        Value::Bool(b) => b.into_py_any(py),
        Value::Str(s) => s.into_py_any(py),
    }
}

fn opt_u32(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<u32>> {
    match d.get_item(key)? {
        None => Ok(None),
        Some(v) if v.is_none() => Ok(None),
        Some(v) => match value_from(key, &v)? {
            Value::Int(i) if (0..=u32::MAX as i64).contains(&i) => Ok(Some(i as u32)),
            Value::Int(i) => Err(CoreError::invalid(key, i, "a positive integer").into()),
            other => Err(CoreError::WrongType {
                param: key.into(),
                got: format!("{other}"),
                expected: "int".into(),
            }
            .into()),
        },
    }
}

pub fn machine_from(py: Python<'_>, d: &Bound<'_, PyDict>) -> PyResult<Machine> {
    let need = |k: &str| -> PyResult<u32> {
        opt_u32(d, k)?.ok_or_else(|| py_err(py, CoreError::invalid(k, "None", "an integer >= 1")))
    };
    let mut m = Machine::new(
        need("sockets")?,
        need("cores_per_socket")?,
        opt_u32(d, "threads_per_core")?.unwrap_or(1),
        opt_u32(d, "llc_cores")?,
        opt_u32(d, "numa_nodes")?,
    )
    .map_err(|e| py_err(py, e))?;
    if let Some(name) = d.get_item("name")? {
        if !name.is_none() {
            m.name = name.extract()?;
        }
    }
    Ok(m)
}

/// `KERNEL_FIELD_INFO`: one dict per `Kernel` field (name, kind, kernel,
/// commit, release, verified, doc), in field order.
pub fn kernel_field_info(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    crate::kernel::FIELD_INFO
        .iter()
        .map(|f| {
            let d = PyDict::new(py);
            d.set_item("name", f.name)?;
            d.set_item("kind", f.kind.name())?;
            d.set_item("kernel", f.kernel)?;
            d.set_item("commit", f.commit)?;
            d.set_item("release", f.release)?;
            d.set_item("verified", f.verified)?;
            d.set_item("doc", f.doc)?;
            Ok(d)
        })
        .collect()
}
