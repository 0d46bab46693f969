//! Conversions between Python values and core types. Every value crosses
//! through a typed conversion that names its parameter: a config field's
//! through its declared domain (`values_from`), a workload's or a run's
//! parameters through [`Params`] and [`FromParam`]. Nothing unknown is
//! dropped or replaced by a default.

use crate::workload::params::Param as WParam;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;

use crate::config::{one_of_names, Bounds, Domain, FieldDecl, Fields, NamedEnum, Value};
use crate::error::CoreError;
use crate::topology::Machine;
use crate::{CostModel, Kernel};

/// `type(v).__name__` and `repr(v)`, as messages show a value.
fn shown(v: &Bound<'_, PyAny>) -> String {
    let tn = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    format!("{tn} {}", py_repr(v))
}

pub(crate) fn wrong_type(param: &str, v: &Bound<'_, PyAny>, expected: &str) -> PyErr {
    CoreError::WrongType {
        param: param.to_string(),
        got: shown(v),
        expected: expected.to_string(),
    }
    .into()
}

/// A numpy bool (`numpy.bool_`), which is not a Python `bool`.
fn is_numpy_bool(v: &Bound<'_, PyAny>) -> bool {
    let t = v.get_type();
    let module = t.module().map(|m| m.to_string()).unwrap_or_default();
    let name = t.name().map(|n| n.to_string()).unwrap_or_default();
    module == "numpy" && (name == "bool_" || name == "bool")
}

/// An integer scalar: a Python `int`, or a scalar with `__index__` (numpy
/// integers) — never a `bool`, a `str` (whatever it defines) or an array.
fn is_integer(v: &Bound<'_, PyAny>) -> bool {
    if v.is_instance_of::<PyBool>() || v.is_instance_of::<PyString>() || is_numpy_bool(v) {
        return false;
    }
    if v.is_instance_of::<PyInt>() {
        return true;
    }
    let array = v.get_type().name().map(|n| n == "ndarray").unwrap_or(true);
    !array && v.hasattr("__index__").unwrap_or(false)
}

/// A Python scalar as a config `Value` — a `str` (subclasses too, as their
/// text), a bool (numpy's too), an integer scalar within 64 bits, a
/// `float` — or an error naming `param`: `expected` is what a message says
/// the parameter takes, `allowed` what it says of an integer beyond 64 bits.
fn scalar(param: &str, v: &Bound<'_, PyAny>, expected: &str, allowed: &str) -> PyResult<Value> {
    if v.is_instance_of::<PyString>() {
        // A str with a lone surrogate ("\ud800") has no UTF-8 form.
        v.extract::<String>()
            .map(Value::Str)
            .map_err(|_| PyErr::from(CoreError::invalid(param, py_repr(v), UTF8_TEXT)))
    } else if v.is_instance_of::<PyBool>() || is_numpy_bool(v) {
        Ok(Value::Bool(v.is_truthy()?))
    } else if is_integer(v) {
        v.extract::<i64>()
            .map(Value::Int)
            .map_err(|_| PyErr::from(CoreError::invalid(param, py_repr(v), allowed)))
    } else if v.is_instance_of::<PyFloat>() {
        Ok(Value::Float(v.extract()?))
    } else {
        Err(wrong_type(param, v, expected))
    }
}

/// A Python scalar as a config `Value`, whatever the parameter takes.
pub fn value_from(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Value> {
    scalar(
        param,
        v,
        "int, float, bool or str",
        "an integer that fits in 64 bits",
    )
}

/// An integer scalar's value, or an error naming `param`: the wrong type
/// (a str that cannot cross says so), or `allowed` beyond 128 bits.
fn integer(param: &str, v: &Bound<'_, PyAny>, allowed: &str) -> PyResult<i128> {
    if !is_integer(v) {
        scalar(param, v, "int", allowed)?;
        return Err(wrong_type(param, v, "int"));
    }
    v.extract::<i128>()
        .map_err(|_| CoreError::invalid(param, py_repr(v), allowed).into())
}

/// An integer within `b`, as a `T` (a message says `b.allowed` for any
/// integer outside it, negative or beyond 64 bits).
pub fn bounded_int<T: TryFrom<u64>>(param: &str, v: &Bound<'_, PyAny>, b: &Bounds) -> PyResult<T> {
    let x = b.check(param, integer(param, v, b.allowed)?)?;
    T::try_from(x).map_err(|_| CoreError::invalid(param, x, b.allowed).into())
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
        let domain = F::domain_of(&k).expect("a checked name is a field");
        let val = scalar(&k, &v, &domain.expected_type(), &domain.allowed())?;
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

/// A machine from its fields (`Machine.to_dict()`, or what
/// `Machine(...)` was given): `sockets` and `cores_per_socket`, and
/// optionally `threads_per_core` (1), `llc_cores`, `numa_nodes`, `name` and
/// `nr_cpus` (which must then be the machine's CPU count).
pub fn machine_from(d: &Bound<'_, PyDict>) -> PyResult<Machine> {
    use crate::topology::AT_LEAST_ONE;
    let mut p = Params::new(d, "Machine", "");
    let sockets: u32 = p.bounded("sockets", &AT_LEAST_ONE)?;
    let cores: u32 = p.bounded("cores_per_socket", &AT_LEAST_ONE)?;
    let threads: Option<u32> = p.opt_bounded("threads_per_core", &AT_LEAST_ONE)?;
    let llc: Option<u32> = p.opt_bounded("llc_cores", &AT_LEAST_ONE)?;
    let nodes: Option<u32> = p.opt_bounded("numa_nodes", &AT_LEAST_ONE)?;
    let name: Option<String> = p.opt("name")?;
    let nr_cpus: Option<u32> = p.opt("nr_cpus")?;
    p.finish()?;
    let mut m = Machine::new(sockets, cores, threads.unwrap_or(1), llc, nodes)?;
    if let Some(name) = name {
        m.name = name;
    }
    if let Some(n) = nr_cpus {
        if n as usize != m.nr_cpus() {
            return Err(CoreError::invalid(
                "nr_cpus",
                n,
                format!(
                    "the machine's CPU count, sockets × cores_per_socket × threads_per_core = {}",
                    m.nr_cpus()
                ),
            )
            .into());
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
    let (min, max): (Option<i128>, Option<i128>) = match f.domain {
        Domain::Int { lo, hi } => (Some(lo as i128), Some(hi as i128)),
        Domain::SInt { lo, hi } => (Some(lo as i128), Some(hi as i128)),
        _ => (None, None),
    };
    d.set_item("min", min)?;
    d.set_item("max", max)?;
    match f.domain {
        Domain::Enum(names) => d.set_item("values", names.to_vec())?,
        Domain::IntIn(v) => d.set_item("values", v.to_vec())?,
        Domain::Bool | Domain::Int { .. } | Domain::SInt { .. } => {
            d.set_item("values", py.None())?
        }
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

/// `WORKLOAD_PARAMS`: one dict per declared workload parameter
/// (`workload::kinds::KINDS`, each kind's in its builder's order): `kind`,
/// `name` (the core's key), `arg` (the builder's), `scale` (builder value
/// × scale = core value), `type` (`int`, `float`, `bool`, `choice`,
/// `cpus`, `other`), `min`/`max` (ints and numbers, else `None`), `values`
/// (a choice's names, else `None`), `default` (`None` also when the
/// builder's default is `None`), `required`, `allowed` (as an error says
/// it), `doc`.
pub fn workload_param_info(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    use crate::workload::params::{Given, ParamType};
    crate::workload::params::all()
        .iter()
        .map(|p| {
            let d = PyDict::new(py);
            d.set_item("kind", p.kind)?;
            d.set_item("name", p.name)?;
            d.set_item("arg", p.arg)?;
            d.set_item("scale", p.scale)?;
            d.set_item("type", p.ty.name())?;
            let (lo, hi) = match p.ty {
                ParamType::Int | ParamType::Cpus => (
                    p.lo.into_pyobject(py)?.into_any(),
                    p.hi.into_pyobject(py)?.into_any(),
                ),
                ParamType::Number => (
                    p.lo_f.into_pyobject(py)?.into_any(),
                    p.hi_f.into_pyobject(py)?.into_any(),
                ),
                _ => (py.None().into_bound(py), py.None().into_bound(py)),
            };
            d.set_item("min", lo)?;
            d.set_item("max", hi)?;
            match p.ty {
                ParamType::Choice(names) => d.set_item("values", names.to_vec())?,
                _ => d.set_item("values", py.None())?,
            }
            match p.default {
                Given::Required | Given::None => d.set_item("default", py.None())?,
                Given::Int(i) => d.set_item("default", i)?,
                Given::Number(x) => d.set_item("default", x)?,
                Given::Bool(b) => d.set_item("default", b)?,
                Given::Str(s) => d.set_item("default", s)?,
            }
            d.set_item("required", p.default == Given::Required)?;
            d.set_item("allowed", p.allowed())?;
            d.set_item("doc", p.doc)?;
            Ok(d)
        })
        .collect()
}

/// A parameter value of a known Python shape, converted with an error that
/// names its parameter: the integers of the Rust type (never a `bool`),
/// `bool`, a finite `float` (or an int), UTF-8 `str`, `None` for an `Option`, a list (or tuple) for a
/// `Vec`, each element named `param[i]`.
pub trait FromParam: Sized {
    /// What the value must be, for messages.
    fn expected() -> String;
    fn from_param(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Self>;
}

macro_rules! int_param {
    ($($t:ty),+) => {$(
        impl FromParam for $t {
            fn expected() -> String {
                "int".into()
            }
            fn from_param(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
                let allowed = format!("an integer from {} to {}", <$t>::MIN, <$t>::MAX);
                let i = integer(param, v, &allowed)?;
                <$t>::try_from(i).map_err(|_| CoreError::invalid(param, i, &allowed).into())
            }
        }
    )+};
}
int_param!(u32, u64, i32, i128);

/// An int (not a bool) where a bool or a str is wanted: a wrong type
/// whatever its size (`scalar` would call an int past 64 bits a bad value).
fn int_for(param: &str, v: &Bound<'_, PyAny>, expected: &str) -> PyResult<()> {
    if is_integer(v) && !(v.is_instance_of::<PyBool>() || is_numpy_bool(v)) {
        return Err(wrong_type(param, v, expected));
    }
    Ok(())
}

impl FromParam for bool {
    fn expected() -> String {
        "bool".into()
    }
    fn from_param(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        int_for(param, v, "bool")?;
        match scalar(param, v, "bool", "True or False")? {
            Value::Bool(b) => Ok(b),
            _ => Err(wrong_type(param, v, "bool")),
        }
    }
}

impl FromParam for f64 {
    fn expected() -> String {
        "float".into()
    }
    fn from_param(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        match scalar(param, v, "float", "a finite number")? {
            Value::Float(x) if x.is_finite() => Ok(x),
            Value::Int(i) => Ok(i as f64),
            Value::Float(x) => Err(CoreError::invalid(param, x, "a finite number").into()),
            _ => Err(wrong_type(param, v, "float")),
        }
    }
}

impl FromParam for String {
    fn expected() -> String {
        "str".into()
    }
    fn from_param(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        int_for(param, v, "str")?;
        match scalar(param, v, "str", "a str")? {
            Value::Str(s) => Ok(s),
            _ => Err(wrong_type(param, v, "str")),
        }
    }
}

impl<T: FromParam> FromParam for Option<T> {
    fn expected() -> String {
        format!("{} or None", T::expected())
    }
    fn from_param(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        if v.is_none() {
            Ok(None)
        } else {
            T::from_param(param, v).map(Some)
        }
    }
}

impl<T: FromParam> FromParam for Vec<T> {
    fn expected() -> String {
        format!("a list of {}", T::expected())
    }
    fn from_param(param: &str, v: &Bound<'_, PyAny>) -> PyResult<Self> {
        if !(v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>()) {
            return Err(wrong_type(param, v, &Self::expected()));
        }
        v.try_iter()?
            .enumerate()
            .map(|(i, x)| T::from_param(&format!("{param}[{i}]"), &x?))
            .collect()
    }
}

/// The parameter structs' generated `read` (`workload_params!`) takes
/// its values from a [`Params`], each converted by [`FromParam`] under its
/// declared name.
impl crate::workload::params::ParamReader for Params<'_, '_> {
    type Error = PyErr;
    fn shown(&self, name: &str) -> String {
        self.param(name)
    }
    fn int(&mut self, p: &WParam, required: bool) -> PyResult<Option<i128>> {
        // read here rather than as a FromParam, so that an integer past
        // every Rust type is told the declared range
        let allowed = p.allowed();
        let expected = if required {
            allowed.clone()
        } else {
            format!("{allowed}, or None")
        };
        let (param, v) = self.required(p.name, &expected)?;
        if v.is_none() && !required {
            return Ok(None);
        }
        integer(&param, &v, &allowed).map(Some)
    }
    fn number(&mut self, p: &WParam, required: bool) -> PyResult<Option<f64>> {
        self.read(p, required)
    }
    fn flag(&mut self, p: &WParam, required: bool) -> PyResult<Option<bool>> {
        self.read(p, required)
    }
    fn text(&mut self, p: &WParam, required: bool) -> PyResult<Option<String>> {
        self.read(p, required)
    }
    fn ints(&mut self, p: &WParam, required: bool) -> PyResult<Option<Vec<i128>>> {
        self.read(p, required)
    }
}

/// A parameter dict the Python layer normalised (a workload's, one of its
/// components', a machine's, a sweep run's), read key by key: each value
/// converted by [`FromParam`] with an error naming `<prefix><key>`, enum
/// names checked against the core's, and at the end every key not read
/// refused — nothing falls back to a default or is dropped.
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

    /// The value of `key`; `None` when absent.
    fn item(&mut self, key: &'static str) -> PyResult<Option<Bound<'py, PyAny>>> {
        if !self.read.contains(&key) {
            self.read.push(key);
        }
        self.d.get_item(key)
    }

    /// The value of `key`, or `None` when absent or `None`.
    pub fn opt_any(&mut self, key: &'static str) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.item(key)?.filter(|v| !v.is_none()))
    }

    /// The parameter's name and the value of `key`; an absent key is an
    /// error saying it takes `expected`.
    fn required(
        &mut self,
        key: &'static str,
        expected: &str,
    ) -> PyResult<(String, Bound<'py, PyAny>)> {
        let param = self.param(key);
        match self.item(key)? {
            Some(v) => Ok((param, v)),
            None => Err(CoreError::invalid(&param, "<missing>", expected).into()),
        }
    }

    /// `key`'s value as a `T`.
    pub fn get<T: FromParam>(&mut self, key: &'static str) -> PyResult<T> {
        let expected = format!("{} (a {} parameter)", T::expected(), self.what);
        let (param, v) = self.required(key, &expected)?;
        T::from_param(&param, &v)
    }

    /// `key`'s value, an integer within `b` ([`bounded_int`]).
    pub fn bounded<T: TryFrom<u64>>(&mut self, key: &'static str, b: &Bounds) -> PyResult<T> {
        let (param, v) = self.required(key, b.allowed)?;
        bounded_int(&param, &v, b)
    }

    /// [`Params::bounded`], `None` when absent or `None`.
    pub fn opt_bounded<T: TryFrom<u64>>(
        &mut self,
        key: &'static str,
        b: &Bounds,
    ) -> PyResult<Option<T>> {
        if self.opt_any(key)?.is_none() {
            return Ok(None);
        }
        self.bounded(key, b).map(Some)
    }

    /// `p.name`'s value as a `T` (`Some`), or with `required` false a
    /// `T` or `None`, the key present either way: what a declared
    /// parameter's generated `read` asks for.
    fn read<T: FromParam>(&mut self, p: &WParam, required: bool) -> PyResult<Option<T>> {
        if required {
            self.get::<T>(p.name).map(Some)
        } else {
            self.get::<Option<T>>(p.name)
        }
    }

    /// `key`'s value as a `T`, `None` when absent or `None`.
    pub fn opt<T: FromParam>(&mut self, key: &'static str) -> PyResult<Option<T>> {
        match self.opt_any(key)? {
            None => Ok(None),
            Some(v) => T::from_param(&self.param(key), &v).map(Some),
        }
    }

    /// `key`'s value, a dict.
    pub fn dict(&mut self, key: &'static str) -> PyResult<Bound<'py, PyDict>> {
        let (param, v) = self.required(key, "a dict")?;
        v.cast_into::<PyDict>()
            .map_err(|e| wrong_type(&param, &e.into_inner(), "dict"))
    }

    /// `key`'s value, one of `E`'s names.
    pub fn named<E: NamedEnum>(&mut self, key: &'static str) -> PyResult<E> {
        let expected = format!("str, {}", one_of_names(E::NAMES));
        let (param, v) = self.required(key, &expected)?;
        if !v.is_instance_of::<PyString>() {
            return Err(wrong_type(&param, &v, &expected));
        }
        Ok(E::parse(&param, &value_from(&param, &v)?)?)
    }

    /// `key`'s integer within `lo..=hi` (`allowed` says so), `None` when
    /// absent or `None`.
    pub fn opt_signed(
        &mut self,
        key: &'static str,
        (lo, hi, allowed): (i64, i64, &str),
    ) -> PyResult<Option<i64>> {
        let Some(v) = self.opt_any(key)? else {
            return Ok(None);
        };
        let param = self.param(key);
        let x = integer(&param, &v, allowed)?;
        if x < lo as i128 || x > hi as i128 {
            return Err(CoreError::invalid(&param, x, allowed).into());
        }
        Ok(Some(x as i64))
    }

    /// `key`'s list of integers each within `b`, `None` when absent or
    /// `None`.
    pub fn opt_bounded_list(
        &mut self,
        key: &'static str,
        b: &Bounds,
    ) -> PyResult<Option<Vec<u32>>> {
        let Some(v) = self.opt_any(key)? else {
            return Ok(None);
        };
        let param = self.param(key);
        if !(v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>()) {
            return Err(wrong_type(&param, &v, "a list of int"));
        }
        v.try_iter()?
            .map(|x| bounded_int::<u32>(&param, &x?, b))
            .collect::<PyResult<Vec<u32>>>()
            .map(Some)
    }

    /// [`Params::named`], `None` when absent or `None`.
    pub fn opt_named<E: NamedEnum>(&mut self, key: &'static str) -> PyResult<Option<E>> {
        if self.opt_any(key)?.is_none() {
            return Ok(None);
        }
        self.named(key).map(Some)
    }

    /// Refuse the keys nobody read.
    pub fn finish(self) -> PyResult<()> {
        for k in self.d.keys() {
            let name = match k.extract::<String>() {
                Ok(s) if self.read.contains(&s.as_str()) => continue,
                Ok(s) => s,
                Err(_) => py_repr(&k),
            };
            return Err(CoreError::UnknownField {
                kind: self.what,
                name,
                allowed: self.read.join(", "),
            }
            .into());
        }
        Ok(())
    }
}
