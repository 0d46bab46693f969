//! Conversions between Python values and core types.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString};
use pyo3::IntoPyObjectExt;

use super::errors::py_err;

use crate::config::{Domain, FieldDecl, Fields, Value};
use crate::error::CoreError;
use crate::topology::Machine;
use crate::{CostModel, Kernel};

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

/// The changes a dict asks of config type `F`, field by field: every key
/// a field of `F` (checked before its value is converted, so an unknown,
/// retired or reserved name is what the error names), every value converted.
pub fn values_from<F: Fields>(d: &Bound<'_, PyDict>) -> PyResult<Vec<(String, Value)>> {
    let mut out = Vec::with_capacity(d.len());
    for (k, v) in d.iter() {
        let k: String = k.extract().map_err(|_| {
            PyErr::from(CoreError::invalid(
                &format!("{} field name", F::KIND),
                py_repr(&k),
                "a str that encodes as UTF-8",
            ))
        })?;
        F::check_name(&k)?;
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
            m.name = match value_from("name", &name)? {
                Value::Str(s) => s,
                other => return Err(other.wrong("name", "str").into()),
            };
        }
    }
    Ok(m)
}

/// A config field's declaration as a dict: `name`, `type` (its Python
/// annotation), `allowed` (what the error messages say it takes), `min` and
/// `max` (integers, else `None`), `values` (an enum's names or an integer
/// set, else `None`) and `doc`.
fn decl_dict<'py, M>(py: Python<'py>, f: &FieldDecl<M>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", f.name)?;
    d.set_item("type", f.domain.py_type())?;
    d.set_item("allowed", f.domain.allowed())?;
    let (min, max) = match f.domain {
        Domain::Int { lo, hi } => (Some(lo), Some(hi)),
        _ => (None, None),
    };
    d.set_item("min", min)?;
    d.set_item("max", max)?;
    match f.domain {
        Domain::Enum(names) => d.set_item("values", names.to_vec())?,
        Domain::IntIn(v) => d.set_item("values", v.to_vec())?,
        Domain::Bool | Domain::Int { .. } => d.set_item("values", py.None())?,
    }
    d.set_item("doc", f.doc)?;
    Ok(d)
}

/// `KERNEL_FIELD_INFO`: one dict per `Kernel` field, in field order: its
/// declaration (`decl_dict`) and its kernel origin (`kind`, `kernel`,
/// `commit`, `release`, `verified`).
pub fn kernel_field_info(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    Kernel::FIELDS
        .iter()
        .map(|f| {
            let d = decl_dict(py, f)?;
            let o = &f.meta;
            d.set_item("kind", o.kind.name())?;
            d.set_item("kernel", o.kernel)?;
            d.set_item("commit", o.commit)?;
            d.set_item("release", o.release)?;
            d.set_item("verified", o.verified)?;
            Ok(d)
        })
        .collect()
}

/// `COST_FIELD_INFO`: one dict per `CostModel` field (`decl_dict`).
pub fn cost_field_info(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    CostModel::FIELDS.iter().map(|f| decl_dict(py, f)).collect()
}

/// A parameter dict the Python layer normalised (a workload's, or one of
/// its components'), read key by key: each value converted to its type
/// with an error naming `<prefix><key>`, enum names checked against the
/// core's, and at the end every key not read refused — nothing falls back
/// to a default or is dropped.
pub struct Params<'a, 'py> {
    d: &'a Bound<'py, PyDict>,
    prefix: &'static str,
    what: &'static str,
    read: Vec<&'static str>,
}

impl<'a, 'py> Params<'a, 'py> {
    /// `what`: the dict's owner in messages (a workload kind, `rt_kthreads`).
    pub fn new(d: &'a Bound<'py, PyDict>, what: &'static str, prefix: &'static str) -> Self {
        Params {
            d,
            prefix,
            what,
            read: Vec::new(),
        }
    }

    fn param(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The value of `key`, or `None` when absent or `None`.
    pub fn opt_any(&mut self, key: &'static str) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.read.push(key);
        Ok(self.d.get_item(key)?.filter(|v| !v.is_none()))
    }

    /// `key`'s value as a `T` (`expected`: the Python type, for messages).
    pub fn get<T: pyo3::conversion::FromPyObjectOwned<'py>>(
        &mut self,
        key: &'static str,
        expected: &str,
    ) -> PyResult<T> {
        self.read.push(key);
        let v = self.d.get_item(key)?.ok_or_else(|| {
            PyErr::from(CoreError::invalid(
                &self.param(key),
                "<missing>",
                format!(
                    "a value (the parameters schedlab.workloads builds for {})",
                    self.what
                ),
            ))
        })?;
        v.extract::<T>().map_err(|_| {
            PyErr::from(CoreError::WrongType {
                param: self.param(key),
                got: format!(
                    "{} {}",
                    v.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default(),
                    py_repr(&v)
                ),
                expected: expected.into(),
            })
        })
    }

    /// `key`'s value, one of `E`'s names.
    pub fn named<E: crate::config::NamedEnum>(&mut self, key: &'static str) -> PyResult<E> {
        let v: Bound<'py, PyAny> = self.get(key, "str")?;
        let s = value_from(&self.param(key), &v)?;
        Ok(E::parse(&self.param(key), &s)?)
    }

    /// Refuse the keys nobody read.
    pub fn finish(self) -> PyResult<()> {
        for k in self.d.keys() {
            let k: String = k.extract()?;
            if !self.read.contains(&k.as_str()) {
                return Err(CoreError::UnknownField {
                    kind: self.what,
                    name: k,
                    allowed: self.read.join(", "),
                }
                .into());
            }
        }
        Ok(())
    }
}
