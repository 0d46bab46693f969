//! Workloads' parameters, declared once: each with its kind, the key the
//! core reads, the builder's argument, its type and bounds, the builder's
//! default and a doc.
//!
//! - A workload's parameter struct and its declarations are one list
//!   ([`workload_params!`](crate::workload_params)): the macro writes the
//!   struct, its `PARAMS` table and its [`ParamStruct::read`], which reads every field
//!   from a [`ParamReader`] (the bindings' parameter dict) by its
//!   declaration, so the bindings never name a field.
//! - The core checks an integer with [`Param::check`]; `_core.WORKLOAD_PARAMS`
//!   exports every declaration, which the Python builders (`sl.workloads.*`)
//!   read their bounds from, `scripts/dev/gen_fields.py` writes the typed
//!   parameter dicts of `_core.pyi` from, and `sl.workload_info()` (the docs'
//!   generated parameter reference) shows.
//! - `tests/api/test_workload_params.py` holds each builder's signature
//!   (names, order, defaults) to its kind's declarations.

use crate::config::NamedEnum;
use crate::error::{CoreError, CoreResult};

/// What a parameter holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamType {
    /// An integer within `Param::lo..=Param::hi`.
    Int,
    /// A finite number within `Param::lo_f..=Param::hi_f`.
    Number,
    Bool,
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A CPU number or a list of them (a cpuset).
    Cpus,
    /// Anything else, as the builder's doc says (a dict, a list of
    /// workloads, a script): its builder checks it.
    Other(&'static str),
}

impl ParamType {
    /// The type's name in `WORKLOAD_PARAMS` and the docs.
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Int => "int",
            ParamType::Number => "float",
            ParamType::Bool => "bool",
            ParamType::Choice(_) => "choice",
            ParamType::Cpus => "cpus",
            ParamType::Other(_) => "other",
        }
    }
}

/// The builder's default for a parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Given {
    /// No default: the builder requires it.
    Required,
    /// The builder's default is `None`.
    None,
    Int(i64),
    Number(f64),
    Bool(bool),
    Str(&'static str),
}

/// One parameter of a workload kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    /// The workload kind (`sl.workloads.<kind>`).
    pub kind: &'static str,
    /// The key the core reads (the parameter struct's field).
    pub name: &'static str,
    /// The builder's argument (`name` unless the builder takes another
    /// unit: `handle_us` for `handle_ns`).
    pub arg: &'static str,
    /// The builder's value times `scale` is the core's (1000 for µs → ns).
    pub scale: i64,
    pub ty: ParamType,
    pub lo: i64,
    pub hi: i64,
    pub lo_f: f64,
    pub hi_f: f64,
    /// A number must be above `lo_f` (not equal to it).
    pub lo_open: bool,
    /// The builder's default.
    pub default: Given,
    pub doc: &'static str,
    /// What an error adds after the range (a unit, what 0 means), or "".
    pub note: &'static str,
}

/// A parameter of `kind` named `name` (also the builder's argument), of
/// type `ty`, with no bounds: what each constructor starts from.
const fn base(
    kind: &'static str,
    name: &'static str,
    ty: ParamType,
    default: Given,
    doc: &'static str,
) -> Param {
    Param {
        kind,
        name,
        arg: name,
        scale: 1,
        ty,
        lo: 0,
        hi: 0,
        lo_f: 0.0,
        hi_f: 0.0,
        lo_open: false,
        default,
        doc,
        note: "",
    }
}

impl Param {
    /// An integer parameter within `lo..=hi`, `default` in the builder.
    pub const fn int(
        kind: &'static str,
        name: &'static str,
        lo: i64,
        hi: i64,
        default: i64,
        doc: &'static str,
    ) -> Self {
        base(kind, name, ParamType::Int, Given::Int(default), doc).bounds(lo, hi)
    }

    /// A number within `lo..=hi`, `default` in the builder.
    pub const fn number(
        kind: &'static str,
        name: &'static str,
        lo: f64,
        hi: f64,
        default: f64,
        doc: &'static str,
    ) -> Self {
        Param {
            lo_f: lo,
            hi_f: hi,
            ..base(kind, name, ParamType::Number, Given::Number(default), doc)
        }
    }

    /// A flag, `default` in the builder.
    pub const fn flag(
        kind: &'static str,
        name: &'static str,
        default: bool,
        doc: &'static str,
    ) -> Self {
        base(kind, name, ParamType::Bool, Given::Bool(default), doc)
    }

    /// One of `names`, `default` in the builder.
    pub const fn choice(
        kind: &'static str,
        name: &'static str,
        names: &'static [&'static str],
        default: &'static str,
        doc: &'static str,
    ) -> Self {
        base(
            kind,
            name,
            ParamType::Choice(names),
            Given::Str(default),
            doc,
        )
    }

    /// A cpuset (`None` in the builder: every CPU).
    pub const fn cpus(kind: &'static str, name: &'static str, doc: &'static str) -> Self {
        let hi = crate::topology::MAX_CPUS as i64 - 1;
        base(kind, name, ParamType::Cpus, Given::None, doc).bounds(0, hi)
    }

    /// A parameter of another shape (`what`: a dict, a list of ...), which
    /// its builder checks; `None` by default in the builder.
    pub const fn other(
        kind: &'static str,
        name: &'static str,
        what: &'static str,
        doc: &'static str,
    ) -> Self {
        base(kind, name, ParamType::Other(what), Given::None, doc)
    }

    /// The same parameter with the builder's default `None`.
    pub const fn default_none(self) -> Self {
        Param {
            default: Given::None,
            ..self
        }
    }

    /// The same parameter with no default in the builder.
    pub const fn required(self) -> Self {
        Param {
            default: Given::Required,
            ..self
        }
    }

    /// The same parameter with the builder's default `default`.
    pub const fn given(self, default: Given) -> Self {
        Param { default, ..self }
    }

    /// The same number, which must be above its low bound.
    pub const fn above(self) -> Self {
        Param {
            lo_open: true,
            ..self
        }
    }

    /// The same parameter with its integers (a list's) within `lo..=hi`.
    pub const fn bounds(self, lo: i64, hi: i64) -> Self {
        Param { lo, hi, ..self }
    }

    /// The same parameter with `note` after the range in its errors.
    pub const fn with_note(self, note: &'static str) -> Self {
        Param { note, ..self }
    }

    /// The same parameter taken by the builder as `arg`, whose value
    /// times `scale` is the core's.
    pub const fn taken_as(self, arg: &'static str, scale: i64) -> Self {
        Param { arg, scale, ..self }
    }

    /// `v` within `[lo, hi]`, else an error naming the parameter, the value
    /// and the range.
    pub fn check(&self, v: i64) -> CoreResult<()> {
        self.check_as(self.name, i128::from(v))
    }

    /// [`Param::check`], the parameter shown as `shown` (a component's
    /// `rt_kthreads.irq_prio`).
    pub fn check_as(&self, shown: &str, v: i128) -> CoreResult<()> {
        if v < i128::from(self.lo) || v > i128::from(self.hi) {
            return Err(CoreError::invalid(shown, v, self.allowed()));
        }
        Ok(())
    }

    /// A number `v` within `[lo_f, hi_f]`, else an error naming the
    /// parameter, the value and the range.
    pub fn check_number(&self, v: f64) -> CoreResult<()> {
        self.check_number_as(self.name, v)
    }

    /// [`Param::check_number`], the parameter shown as `shown`.
    pub fn check_number_as(&self, shown: &str, v: f64) -> CoreResult<()> {
        let above_lo = if self.lo_open {
            v > self.lo_f
        } else {
            v >= self.lo_f
        };
        if !(v.is_finite() && above_lo && v <= self.hi_f) {
            return Err(CoreError::invalid(shown, format!("{v:?}"), self.allowed()));
        }
        Ok(())
    }

    /// What is allowed, as an error says it.
    pub fn allowed(&self) -> String {
        let what = match self.ty {
            ParamType::Int => format!("an integer from {} to {}", self.lo, self.hi),
            ParamType::Number if self.lo_open => {
                format!("a number above {}, at most {}", self.lo_f, self.hi_f)
            }
            ParamType::Number => format!("a number from {} to {}", self.lo_f, self.hi_f),
            ParamType::Bool => "True or False".into(),
            ParamType::Choice(names) => crate::config::one_of_names(names),
            ParamType::Cpus => format!("CPU numbers from 0 to {}", self.hi),
            ParamType::Other(what) => what.into(),
        };
        if self.note.is_empty() {
            what
        } else {
            format!("{what} ({})", self.note)
        }
    }

    /// [`Param::check`] of an unsigned value (one past `i64::MAX` is out
    /// of every range).
    pub fn check_u64(&self, v: u64) -> CoreResult<()> {
        self.check_as(self.name, i128::from(v))
    }

    fn missing(&self, shown: &str) -> CoreError {
        CoreError::invalid(shown, "<missing>", self.allowed())
    }
}

/// `name`'s declaration among a workload's `params`.
///
/// # Panics
/// When `name` is not declared there: a programming error, caught by the
/// workload's tests.
pub fn find(params: &'static [Param], name: &str) -> &'static Param {
    params
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("{name} is not a declared parameter"))
}

/// Where a parameter struct's `read` takes its values from (the bindings'
/// parameter dict): each method gives the value of `p.name` converted to
/// its type (a wrong type is an error naming the parameter). With
/// `required`, a missing key or `None` is an error and the result is
/// `Some`; without, the key must be there and `None` reads as `None`.
/// The bounds are checked by the caller, from `p`.
pub trait ParamReader {
    type Error: From<CoreError>;
    /// How an error names parameter `name` (with a component's prefix:
    /// `rt_kthreads.irq_prio`).
    fn shown(&self, name: &str) -> String {
        name.to_string()
    }
    fn int(&mut self, p: &Param, required: bool) -> Result<Option<i128>, Self::Error>;
    fn number(&mut self, p: &Param, required: bool) -> Result<Option<f64>, Self::Error>;
    fn flag(&mut self, p: &Param, required: bool) -> Result<Option<bool>, Self::Error>;
    fn text(&mut self, p: &Param, required: bool) -> Result<Option<String>, Self::Error>;
    fn ints(&mut self, p: &Param, required: bool) -> Result<Option<Vec<i128>>, Self::Error>;
}

/// A `workload_params!` struct: its kind and how it is read.
pub trait ParamStruct: Sized {
    /// The workload kind (or component) these parameters are for.
    const KIND: &'static str;
    /// The struct read from `r`, every field by its declaration.
    fn read<R: ParamReader>(r: &mut R) -> Result<Self, R::Error>;
}

/// A field type a parameter struct's `read` can fill from a [`ParamReader`]
/// by its declaration.
pub trait ReadParam: Sized {
    fn read<R: ParamReader>(r: &mut R, p: &Param) -> Result<Self, R::Error>;
}

/// An integer of type `T` within `p`'s bounds, the parameter shown as
/// `shown`.
fn bounded<T: TryFrom<i128>>(p: &Param, shown: &str, v: i128) -> CoreResult<T> {
    p.check_as(shown, v)?;
    T::try_from(v).map_err(|_| CoreError::invalid(shown, v, p.allowed()))
}

/// Element `i` of a list of integers, of type `T` within `p`'s bounds:
/// named `shown[i]`, each an integer of the list's range.
fn bounded_item<T: TryFrom<i128>>(p: &Param, shown: &str, i: usize, v: i128) -> CoreResult<T> {
    let item = Param {
        ty: ParamType::Int,
        note: "",
        ..*p
    };
    bounded(&item, &format!("{shown}[{i}]"), v)
}

/// What a required value read as: the reader gives `Some` for it.
fn given<T>(p: &Param, shown: &str, v: Option<T>) -> CoreResult<T> {
    v.ok_or_else(|| p.missing(shown))
}

macro_rules! read_int {
    ($($t:ty),+) => {$(
        impl ReadParam for $t {
            fn read<R: ParamReader>(r: &mut R, p: &Param) -> Result<Self, R::Error> {
                let shown = r.shown(p.name);
                let v = given(p, &shown, r.int(p, true)?)?;
                Ok(bounded(p, &shown, v)?)
            }
        }
        impl ReadParam for Option<$t> {
            fn read<R: ParamReader>(r: &mut R, p: &Param) -> Result<Self, R::Error> {
                let shown = r.shown(p.name);
                match r.int(p, false)? {
                    None => Ok(None),
                    Some(v) => Ok(Some(bounded(p, &shown, v)?)),
                }
            }
        }
        impl ReadParam for Option<Vec<$t>> {
            fn read<R: ParamReader>(r: &mut R, p: &Param) -> Result<Self, R::Error> {
                let shown = r.shown(p.name);
                match r.ints(p, false)? {
                    None => Ok(None),
                    Some(v) => Ok(Some(
                        v.into_iter()
                            .enumerate()
                            .map(|(i, x)| bounded_item(p, &shown, i, x))
                            .collect::<CoreResult<_>>()?,
                    )),
                }
            }
        }
    )+};
}
read_int!(u32, u64);

impl ReadParam for f64 {
    fn read<R: ParamReader>(r: &mut R, p: &Param) -> Result<Self, R::Error> {
        let shown = r.shown(p.name);
        let v = given(p, &shown, r.number(p, true)?)?;
        p.check_number_as(&shown, v)?;
        Ok(v)
    }
}

impl ReadParam for bool {
    fn read<R: ParamReader>(r: &mut R, p: &Param) -> Result<Self, R::Error> {
        let shown = r.shown(p.name);
        Ok(given(p, &shown, r.flag(p, true)?)?)
    }
}

impl ReadParam for String {
    fn read<R: ParamReader>(r: &mut R, p: &Param) -> Result<Self, R::Error> {
        let shown = r.shown(p.name);
        let s = given(p, &shown, r.text(p, true)?)?;
        if let ParamType::Choice(names) = p.ty {
            if !names.contains(&s.as_str()) {
                return Err(CoreError::invalid(&shown, format!("{s:?}"), p.allowed()).into());
            }
        }
        Ok(s)
    }
}

impl<E: NamedEnum> ReadParam for E {
    fn read<R: ParamReader>(r: &mut R, p: &Param) -> Result<Self, R::Error> {
        let shown = r.shown(p.name);
        let s = given(p, &shown, r.text(p, true)?)?;
        Ok(E::from_name(&shown, &s)?)
    }
}

/// A workload's parameter struct and its parameters' declarations as one
/// list: each field `name: Type = ctor(args...)` (optionally followed by
/// `.method(args)` calls) is declared as `Param::ctor(kind, "name",
/// args...)...`. Writes the struct (`Clone, Debug, PartialEq`), its
/// `PARAMS` (the fields' declarations in order, then those of `also`:
/// parameters the builder takes that are not fields), `param(name)`, and
/// its [`ParamStruct`] impl, whose `read` fills every field by its
/// declaration.
#[macro_export]
macro_rules! workload_params {
    (
        $(#[$sm:meta])*
        pub struct $S:ident for $kind:literal {
            $(
                $(#[$fm:meta])*
                $f:ident : $T:ty = $ctor:ident ( $($a:expr),* $(,)? ) $( . $m:ident ( $($ma:expr),* ) )*
            ),* $(,)?
        }
        $( also { $( $x:ident = $xctor:ident ( $($xa:expr),* $(,)? ) $( . $xm:ident ( $($xma:expr),* ) )* ),* $(,)? } )?
    ) => {
        $(#[$sm])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $S {
            $( $(#[$fm])* pub $f: $T, )*
        }

        impl $S {
            /// Every parameter of the kind, declared once: the fields', in
            /// order, then the builder's others.
            pub const PARAMS: &'static [$crate::workload::params::Param] = &[
                $( $crate::workload::params::Param::$ctor($kind, stringify!($f), $($a),*) $( .$m($($ma),*) )* , )*
                $( $( $crate::workload::params::Param::$xctor($kind, stringify!($x), $($xa),*) $( .$xm($($xma),*) )* , )* )?
            ];

            /// `name`'s declaration.
            #[allow(dead_code)]
            pub(crate) fn param(name: &str) -> &'static $crate::workload::params::Param {
                $crate::workload::params::find(Self::PARAMS, name)
            }
        }

        impl $crate::workload::params::ParamStruct for $S {
            const KIND: &'static str = $kind;
            fn read<R: $crate::workload::params::ParamReader>(r: &mut R) -> Result<Self, R::Error> {
                Ok($S {
                    $( $f: <$T as $crate::workload::params::ReadParam>::read(
                        r,
                        Self::param(stringify!($f)),
                    )?, )*
                })
            }
        }
    };
}

/// Every declared parameter, by kind, in the order of [`super::kinds::KINDS`],
/// then the components' ([`super::kinds::COMPONENTS`]).
pub fn all() -> Vec<Param> {
    super::kinds::KINDS
        .iter()
        .chain(super::kinds::COMPONENTS)
        .flat_map(|k| k.params.iter().copied())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_hold_the_default_and_names_are_unique_per_kind() {
        let all = all();
        for p in &all {
            assert!(!p.doc.is_empty(), "{p:?}");
            assert!(!p.arg.is_empty() && p.scale >= 1, "{p:?}");
            let same = all.iter().filter(|q| q.kind == p.kind && q.name == p.name);
            assert_eq!(same.count(), 1, "{p:?}");
            match p.ty {
                ParamType::Int => {
                    assert!(p.lo <= p.hi, "{p:?}");
                    if let Given::Int(d) = p.default {
                        assert!(p.check(d * p.scale).is_ok(), "{p:?}");
                    }
                    assert!(p.check(p.lo).is_ok() && p.check(p.hi).is_ok());
                    assert!(p.check(p.lo - 1).is_err() && p.check(p.hi + 1).is_err());
                }
                ParamType::Number => {
                    if let Given::Number(d) = p.default {
                        assert!(p.check_number(d).is_ok(), "{p:?}");
                    }
                    assert!(p.check_number(f64::NAN).is_err());
                }
                ParamType::Choice(names) => {
                    let Given::Str(d) = p.default else {
                        panic!("{p:?}")
                    };
                    assert!(names.contains(&d), "{p:?}");
                }
                ParamType::Bool => assert!(matches!(p.default, Given::Bool(_)), "{p:?}"),
                ParamType::Cpus | ParamType::Other(_) => {}
            }
        }
    }

    #[test]
    fn every_kind_is_declared_with_its_builder_arguments_unique() {
        for k in super::super::kinds::KINDS
            .iter()
            .chain(super::super::kinds::COMPONENTS)
        {
            assert!(!k.params.is_empty(), "{}", k.name);
            for p in k.params {
                assert_eq!(p.kind, k.name);
                let same = k.params.iter().filter(|q| q.arg == p.arg);
                assert_eq!(same.count(), 1, "{p:?}");
            }
        }
    }
}
