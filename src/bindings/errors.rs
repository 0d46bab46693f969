//! The exception tree of `schedlab.exceptions`, declared once, here: the
//! classes are made when `_core` is imported and `schedlab.exceptions`
//! re-exports them, so the error a core call raises and the class a user
//! catches are the same object, found without an import per error.
//!
//! ```text
//! SchedlabError(Exception)
//! ├── ConfigError(SchedlabError, ValueError)        a value outside what is allowed
//! ├── ConfigTypeError(SchedlabError, TypeError)     a value of the wrong type
//! ├── SimulationError(SchedlabError, RuntimeError)  a run could not be carried out
//! ├── MeasureError(SchedlabError, RuntimeError)     perf could not run, or its output is unreadable
//! └── OutputError(SchedlabError, OSError)           a file could not be written; `kept` says where its rows are
//! BatchInterrupted(KeyboardInterrupt)               Ctrl-C in run_batch; `outcomes` holds the runs
//! ```
//!
//! Config errors are `ValueError`s (and wrong types `TypeError`s) so that a
//! plain `except ValueError` works; pyo3's `create_exception!` takes one
//! base, so the classes are made with `type(name, bases, namespace)`.

use pyo3::exceptions::{
    PyException, PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use crate::error::CoreError;

/// One class of the tree: its name, bases (earlier entries by index, or a
/// builtin), docstring, and the attributes the core sets on its instances
/// (name, Python type) for the stubs.
struct Decl {
    name: &'static str,
    bases: &'static [Base],
    doc: &'static str,
    attrs: &'static [(&'static str, &'static str)],
}

#[derive(Clone, Copy)]
enum Base {
    /// An earlier entry of `TREE`.
    Tree(usize),
    Exception,
    ValueError,
    TypeError,
    RuntimeError,
    OSError,
    KeyboardInterrupt,
}

const SCHEDLAB: usize = 0;
const CONFIG: usize = 1;
const CONFIG_TYPE: usize = 2;
const BATCH_INTERRUPTED: usize = 5;

/// The tree, parents first. `EXCEPTIONS` carries it to Python, where
/// `scripts/dev/gen_fields.py` writes the stubs and `schedlab.exceptions`'
/// imports from it.
const TREE: &[Decl] = &[
    Decl {
        name: "SchedlabError",
        bases: &[Base::Exception],
        doc: "Base class of every schedlab error.",
        attrs: &[],
    },
    Decl {
        name: "ConfigError",
        bases: &[Base::Tree(SCHEDLAB), Base::ValueError],
        doc: "A parameter has a value outside what is allowed.",
        attrs: &[],
    },
    Decl {
        name: "ConfigTypeError",
        bases: &[Base::Tree(SCHEDLAB), Base::TypeError],
        doc: "A parameter has a value of the wrong type.",
        attrs: &[],
    },
    Decl {
        name: "SimulationError",
        bases: &[Base::Tree(SCHEDLAB), Base::RuntimeError],
        doc: "A run could not be carried out.",
        attrs: &[],
    },
    Decl {
        name: "MeasureError",
        bases: &[Base::Tree(SCHEDLAB), Base::RuntimeError],
        doc: "perf could not be run, or printed something ``measure`` cannot read.",
        attrs: &[],
    },
    Decl {
        name: "BatchInterrupted",
        bases: &[Base::KeyboardInterrupt],
        doc: "Ctrl-C during run_batch; ``outcomes`` holds every spec's outcome, \
              the runs cut short \"cancelled\".",
        attrs: &[("outcomes", "list[BatchOutcome]")],
    },
    Decl {
        name: "OutputError",
        bases: &[Base::Tree(SCHEDLAB), Base::OSError],
        doc: "A file schedlab writes could not be written (a full disk, a failing device). \
              No truncated file replaces the old one; ``partial`` holds the finished rows \
              (or None) and ``kept`` the file they were saved to instead (or None).",
        attrs: &[("partial", "Any"), ("kept", "Any")],
    },
];

static CLASSES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

fn make(py: Python<'_>) -> PyResult<Vec<Py<PyType>>> {
    let mut made: Vec<Py<PyType>> = Vec::with_capacity(TREE.len());
    for d in TREE {
        let bases = d
            .bases
            .iter()
            .map(|b| match b {
                Base::Tree(i) => made[*i].bind(py).clone(),
                Base::Exception => py.get_type::<PyException>(),
                Base::ValueError => py.get_type::<PyValueError>(),
                Base::TypeError => py.get_type::<PyTypeError>(),
                Base::RuntimeError => py.get_type::<PyRuntimeError>(),
                Base::OSError => py.get_type::<PyOSError>(),
                Base::KeyboardInterrupt => py.get_type::<PyKeyboardInterrupt>(),
            })
            .collect::<Vec<_>>();
        let ns = PyDict::new(py);
        ns.set_item("__module__", "schedlab.exceptions")?;
        ns.set_item("__doc__", d.doc)?;
        let cls = py
            .get_type::<PyType>()
            .call1((d.name, PyTuple::new(py, bases)?, ns))?
            .cast_into::<PyType>()?;
        made.push(cls.unbind());
    }
    Ok(made)
}

fn class(py: Python<'_>, i: usize) -> &Bound<'_, PyType> {
    // Made when the module is imported (`add_to`), before any call can fail.
    CLASSES
        .get(py)
        .map(|v| v[i].bind(py))
        .expect("exception classes are made at import")
}

impl Base {
    fn name(self) -> &'static str {
        match self {
            Base::Tree(i) => TREE[i].name,
            Base::Exception => "Exception",
            Base::ValueError => "ValueError",
            Base::TypeError => "TypeError",
            Base::RuntimeError => "RuntimeError",
            Base::OSError => "OSError",
            Base::KeyboardInterrupt => "KeyboardInterrupt",
        }
    }
}

/// Make the classes and add them to the module, with `EXCEPTIONS`: one
/// `(name, bases, doc, attrs)` per class, parents first.
pub fn add_to(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let classes = CLASSES.get_or_try_init(py, || make(py))?;
    for (d, c) in TREE.iter().zip(classes) {
        m.add(d.name, c.bind(py))?;
    }
    let tree: Vec<_> = TREE
        .iter()
        .map(|d| {
            let bases: Vec<&str> = d.bases.iter().map(|b| b.name()).collect();
            (d.name, bases, d.doc, d.attrs.to_vec())
        })
        .collect();
    m.add("EXCEPTIONS", tree)
}

/// The `BatchInterrupted` class.
pub fn batch_interrupted(py: Python<'_>) -> &Bound<'_, PyType> {
    class(py, BATCH_INTERRUPTED)
}

/// A core error as the exception users catch: `ConfigTypeError` for a
/// value of the wrong type, `KeyboardInterrupt` for a run cancelled during
/// setup, `ConfigError` for the rest.
pub fn py_err(py: Python<'_>, e: CoreError) -> PyErr {
    let msg = e.to_string();
    let cls = match e {
        CoreError::Cancelled => return PyKeyboardInterrupt::new_err(msg),
        CoreError::WrongType { .. } => CONFIG_TYPE,
        _ => CONFIG,
    };
    PyErr::from_type(class(py, cls).clone(), msg)
}

impl From<CoreError> for PyErr {
    fn from(e: CoreError) -> PyErr {
        Python::attach(|py| py_err(py, e))
    }
}
