//! Dynamically named config fields: the one mechanism behind
//! `Kernel.replace(**kw)`, `CostModel.replace(**kw)`, sweep grids and the
//! config columns of result frames. Each config type lists its fields and
//! gets/sets them by name with validation.

use crate::error::{CoreError, CoreResult};
use std::fmt;

/// A config value as it crosses the boundary.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{}", if *v { "True" } else { "False" }),
            Value::Str(s) => write!(f, "{s:?}"),
        }
    }
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Bool(_) => "bool",
            Value::Str(_) => "str",
        }
    }

    fn wrong(&self, param: &str, expected: &str) -> CoreError {
        CoreError::WrongType {
            param: param.to_string(),
            got: format!("{} {}", self.type_name(), self),
            expected: expected.to_string(),
        }
    }

    /// An integer in `[lo, hi]`.
    pub fn as_int(&self, param: &str, lo: i64, hi: i64) -> CoreResult<i64> {
        match self {
            Value::Int(v) if (lo..=hi).contains(v) => Ok(*v),
            Value::Int(v) => Err(CoreError::invalid(
                param,
                v,
                format!("an integer from {lo} to {hi}"),
            )),
            _ => Err(self.wrong(param, "int")),
        }
    }

    /// A non-negative integer up to `hi`, as u64.
    pub fn as_u64(&self, param: &str, lo: u64, hi: u64) -> CoreResult<u64> {
        self.as_int(param, lo as i64, hi.min(i64::MAX as u64) as i64)
            .map(|v| v as u64)
    }

    /// A finite float in `[lo, hi]` (ints accepted).
    pub fn as_f64(&self, param: &str, lo: f64, hi: f64) -> CoreResult<f64> {
        let v = match self {
            Value::Float(v) => *v,
            Value::Int(v) => *v as f64,
            _ => return Err(self.wrong(param, "float")),
        };
        if v.is_finite() && v >= lo && v <= hi {
            Ok(v)
        } else {
            Err(CoreError::invalid(
                param,
                v,
                format!("a finite number from {lo} to {hi}"),
            ))
        }
    }

    pub fn as_bool(&self, param: &str) -> CoreResult<bool> {
        match self {
            Value::Bool(b) => Ok(*b),
            _ => Err(self.wrong(param, "bool")),
        }
    }

    pub fn as_str(&self, param: &str) -> CoreResult<&str> {
        match self {
            Value::Str(s) => Ok(s),
            _ => Err(self.wrong(param, "str")),
        }
    }
}

/// An enum-valued variant point with kernel-style names.
pub trait NamedEnum: Sized + Copy + 'static {
    const NAMES: &'static [&'static str];
    const VALUES: &'static [Self];
    fn name(self) -> &'static str;

    fn parse(param: &str, v: &Value) -> CoreResult<Self> {
        let s = v.as_str(param)?;
        Self::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Self::VALUES[i])
            .ok_or_else(|| {
                CoreError::invalid(
                    param,
                    format!("{s:?}"),
                    format!(
                        "one of {}",
                        Self::NAMES
                            .iter()
                            .map(|n| format!("{n:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })
    }
}

/// Declares a `NamedEnum` with its variant ↔ name table.
#[macro_export]
macro_rules! named_enum {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[$vm:meta])* $var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name { $($(#[$vm])* $var),+ }
        impl $crate::config::NamedEnum for $name {
            const NAMES: &'static [&'static str] = &[$($s),+];
            const VALUES: &'static [Self] = &[$($name::$var),+];
            fn name(self) -> &'static str {
                match self { $($name::$var => $s),+ }
            }
        }
    };
}

/// A config object whose fields can be listed, read and replaced by name.
pub trait Fields: Clone {
    const KIND: &'static str;
    fn field_names() -> &'static [&'static str];
    fn get(&self, name: &str) -> Option<Value>;
    /// Set one field; validates the value.
    fn set(&mut self, name: &str, v: &Value) -> CoreResult<()>;

    fn unknown(name: &str) -> CoreError {
        CoreError::UnknownField {
            kind: Self::KIND,
            name: name.to_string(),
            allowed: Self::field_names().join(", "),
        }
    }

    /// A copy with the given fields replaced; all-or-nothing.
    fn replaced(&self, changes: &[(String, Value)]) -> CoreResult<Self> {
        let mut out = self.clone();
        for (k, v) in changes {
            out.set(k, v)?;
        }
        out.validate()?;
        Ok(out)
    }

    /// Cross-field checks, run after a replace.
    fn validate(&self) -> CoreResult<()> {
        Ok(())
    }

    fn items(&self) -> Vec<(&'static str, Value)> {
        Self::field_names()
            .iter()
            .map(|n| (*n, self.get(n).expect("listed field")))
            .collect()
    }
}
