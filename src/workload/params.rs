//! Workloads' integer parameters, declared once: each with its kind, name,
//! bounds, the builder's default and a doc. The core checks a value with
//! [`IntParam::check`]; the Python builders (`sl.workloads.*`) read the
//! same bounds from `_core.WORKLOAD_INT_PARAMS` instead of writing the
//! numbers again, and `tests/api/test_workload_params.py` holds each
//! builder's signature default to the declared one.

use crate::error::{CoreError, CoreResult};

/// One integer parameter of a workload kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntParam {
    /// The workload kind (`sl.workloads.<kind>`).
    pub kind: &'static str,
    pub name: &'static str,
    pub lo: i64,
    pub hi: i64,
    /// The builder's default (`None`: the builder's default is `None`, or
    /// the parameter has no default).
    pub default: Option<i64>,
    pub doc: &'static str,
    /// What an error adds after the range (a unit, what 0 means), or "".
    pub note: &'static str,
}

impl IntParam {
    /// A parameter of `kind` whose builder default is `default`, with no
    /// note.
    pub const fn new(
        kind: &'static str,
        name: &'static str,
        lo: i64,
        hi: i64,
        default: i64,
        doc: &'static str,
    ) -> Self {
        IntParam {
            kind,
            name,
            lo,
            hi,
            default: Some(default),
            doc,
            note: "",
        }
    }

    /// The same parameter with the builder's default `None`.
    pub const fn default_none(self) -> Self {
        IntParam {
            default: None,
            ..self
        }
    }

    /// The same parameter with `note` after the range in its errors.
    pub const fn with_note(self, note: &'static str) -> Self {
        IntParam { note, ..self }
    }

    /// `v` within `[lo, hi]`, else an error naming the parameter, the value
    /// and the range.
    pub fn check(&self, v: i64) -> CoreResult<()> {
        if v < self.lo || v > self.hi {
            return Err(CoreError::invalid(self.name, v, self.allowed()));
        }
        Ok(())
    }

    /// What is allowed, as an error says it.
    pub fn allowed(&self) -> String {
        let range = format!("an integer from {} to {}", self.lo, self.hi);
        if self.note.is_empty() {
            range
        } else {
            format!("{range} ({})", self.note)
        }
    }

    /// [`IntParam::check`] of an unsigned value (one past `i64::MAX` is out
    /// of every range).
    pub fn check_u64(&self, v: u64) -> CoreResult<()> {
        match i64::try_from(v) {
            Ok(x) => self.check(x),
            Err(_) => Err(CoreError::invalid(self.name, v, self.allowed())),
        }
    }
}

/// `name`'s declaration among a workload's `params`.
///
/// # Panics
/// When `name` is not declared there: a programming error, caught by the
/// workload's tests.
pub fn find(params: &'static [IntParam], name: &str) -> &'static IntParam {
    params
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("{name} is not a declared parameter"))
}

/// Every declared integer parameter, by kind.
pub fn all() -> Vec<IntParam> {
    [
        super::hackbench::INT_PARAMS,
        super::pipe_pingpong::INT_PARAMS,
        super::volano::INT_PARAMS,
        super::schbench::INT_PARAMS,
        super::aim7::INT_PARAMS,
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_hold_the_default_and_names_are_unique_per_kind() {
        let all = all();
        for p in &all {
            assert!(p.lo <= p.hi, "{p:?}");
            if let Some(d) = p.default {
                assert!(p.lo <= d && d <= p.hi, "{p:?}");
                assert!(p.check(d).is_ok());
            }
            assert!(p.check(p.lo).is_ok() && p.check(p.hi).is_ok());
            assert!(p.check(p.lo - 1).is_err() && p.check(p.hi + 1).is_err());
            assert!(!p.doc.is_empty());
            let same = all.iter().filter(|q| q.kind == p.kind && q.name == p.name);
            assert_eq!(same.count(), 1, "{p:?}");
        }
    }
}
