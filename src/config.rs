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
            Value::Float(v) => write!(f, "{v:?}"),
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

    /// The error for this value given where `expected` was.
    pub fn wrong(&self, param: &str, expected: &str) -> CoreError {
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

    pub fn as_bool(&self, param: &str) -> CoreResult<bool> {
        match self {
            Value::Bool(b) => Ok(*b),
            _ => Err(self.wrong(param, "bool")),
        }
    }
}

/// An enum-valued variant point with kernel-style names.
pub trait NamedEnum: Sized + Copy + 'static {
    const NAMES: &'static [&'static str];
    const VALUES: &'static [Self];
    fn name(self) -> &'static str;

    /// The variant named `s`, or an error naming `param`, the value and
    /// the allowed names.
    fn from_name(param: &str, s: &str) -> CoreResult<Self> {
        Self::NAMES
            .iter()
            .position(|n| *n == s)
            .map(|i| Self::VALUES[i])
            .ok_or_else(|| CoreError::invalid(param, format!("{s:?}"), one_of_names(Self::NAMES)))
    }

    fn parse(param: &str, v: &Value) -> CoreResult<Self> {
        match v {
            Value::Str(s) => Self::from_name(param, s),
            _ => Err(v.wrong(param, &format!("str, {}", one_of_names(Self::NAMES)))),
        }
    }
}

/// `one of "a", "b", "c"`: what an enum-valued parameter allows.
pub fn one_of_names(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
    format!("one of {}", quoted.join(", "))
}

/// Declares a `NamedEnum` with its variant ↔ name table (and makes it a
/// config field type whose values are its names).
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
        impl $crate::config::FieldType for $name {
            const DOMAIN: $crate::config::Domain =
                $crate::config::Domain::Enum(<$name as $crate::config::NamedEnum>::NAMES);
            fn to_value(self) -> $crate::config::Value {
                $crate::config::Value::Str($crate::config::NamedEnum::name(self).to_string())
            }
            fn from_value(
                param: &str,
                v: &$crate::config::Value,
                _: &$crate::config::Domain,
            ) -> $crate::error::CoreResult<Self> {
                <$name as $crate::config::NamedEnum>::parse(param, v)
            }
        }
    };
}

/// The values a config field takes: what `set` enforces, what the Python
/// annotation (`Literal[...]`) and the docs' tables say.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Domain {
    Bool,
    /// An integer from `lo` to `hi`.
    Int {
        lo: u64,
        hi: u64,
    },
    /// A signed integer from `lo` to `hi` (a sysctl whose -1 means "none").
    SInt {
        lo: i64,
        hi: i64,
    },
    /// One of these integers.
    IntIn(&'static [u64]),
    /// One of these names (a [`NamedEnum`]'s).
    Enum(&'static [&'static str]),
}

impl Domain {
    /// The field's Python annotation.
    pub fn py_type(&self) -> String {
        match self {
            Domain::Bool => "bool".into(),
            Domain::Int { .. } | Domain::SInt { .. } => "int".into(),
            Domain::IntIn(v) => {
                let v: Vec<String> = v.iter().map(u64::to_string).collect();
                format!("Literal[{}]", v.join(", "))
            }
            Domain::Enum(names) => {
                let q: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
                format!("Literal[{}]", q.join(", "))
            }
        }
    }

    /// The Python type a value of this domain has, for messages.
    pub fn expected_type(&self) -> String {
        match self {
            Domain::Bool => "bool".into(),
            Domain::Int { .. } | Domain::SInt { .. } | Domain::IntIn(_) => "int".into(),
            Domain::Enum(names) => format!("str, {}", one_of_names(names)),
        }
    }

    /// What the field allows, as the error messages say it.
    pub fn allowed(&self) -> String {
        match self {
            Domain::Bool => "True or False".into(),
            Domain::Int { lo, hi } => format!("an integer from {lo} to {hi}"),
            Domain::SInt { lo, hi } => format!("an integer from {lo} to {hi}"),
            Domain::IntIn(v) => {
                let v: Vec<String> = v.iter().map(u64::to_string).collect();
                format!("one of {}", v.join(", "))
            }
            Domain::Enum(names) => one_of_names(names),
        }
    }

    /// An integer value of this domain.
    pub fn int(&self, param: &str, v: &Value) -> CoreResult<u64> {
        match self {
            Domain::Int { lo, hi } => v.as_u64(param, *lo, *hi),
            Domain::IntIn(vals) => match v {
                Value::Int(x) if *x >= 0 && vals.contains(&(*x as u64)) => Ok(*x as u64),
                Value::Int(x) => Err(CoreError::invalid(param, x, self.allowed())),
                _ => Err(v.wrong(param, "int")),
            },
            Domain::Bool | Domain::Enum(_) | Domain::SInt { .. } => {
                unreachable!("an unsigned integer field has an unsigned integer domain")
            }
        }
    }
}

/// A parameter's integer bounds and how a message says them (for
/// parameters that are not declared fields: a workload component's, a
/// machine's).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub lo: u64,
    pub hi: u64,
    pub allowed: &'static str,
}

impl Bounds {
    /// `v` within the bounds, or an error naming `param`, `v` and them.
    pub fn check(&self, param: &str, v: i128) -> CoreResult<u64> {
        if v >= self.lo as i128 && v <= self.hi as i128 {
            Ok(v as u64)
        } else {
            Err(CoreError::invalid(param, v, self.allowed))
        }
    }
}

/// The type of a config field: how its value crosses the boundary.
pub trait FieldType: Copy {
    /// The domain of a field of this type that declares none.
    const DOMAIN: Domain;
    fn to_value(self) -> Value;
    fn from_value(param: &str, v: &Value, domain: &Domain) -> CoreResult<Self>;
    /// Whether a field of this type may declare `domain` (an enum or a
    /// bool takes none of its own; an integer's fits its type).
    fn domain_ok(domain: &Domain) -> bool {
        *domain == Self::DOMAIN
    }
}

/// An integer domain that a `hi`-bounded type can hold.
fn int_domain_ok(domain: &Domain, hi: u64) -> bool {
    match domain {
        Domain::Int { lo, hi: h } => lo <= h && *h <= hi,
        Domain::IntIn(v) => !v.is_empty() && v.iter().all(|x| *x <= hi),
        Domain::Bool | Domain::Enum(_) | Domain::SInt { .. } => false,
    }
}

impl FieldType for bool {
    const DOMAIN: Domain = Domain::Bool;
    fn to_value(self) -> Value {
        Value::Bool(self)
    }
    fn from_value(param: &str, v: &Value, _: &Domain) -> CoreResult<Self> {
        v.as_bool(param)
    }
}

impl FieldType for u64 {
    const DOMAIN: Domain = Domain::Int {
        lo: 0,
        hi: i64::MAX as u64,
    };
    fn to_value(self) -> Value {
        Value::Int(self as i64)
    }
    fn from_value(param: &str, v: &Value, domain: &Domain) -> CoreResult<Self> {
        domain.int(param, v)
    }
    fn domain_ok(domain: &Domain) -> bool {
        int_domain_ok(domain, i64::MAX as u64)
    }
}

impl FieldType for i64 {
    const DOMAIN: Domain = Domain::SInt {
        lo: i64::MIN,
        hi: i64::MAX,
    };
    fn to_value(self) -> Value {
        Value::Int(self)
    }
    fn from_value(param: &str, v: &Value, domain: &Domain) -> CoreResult<Self> {
        match domain {
            Domain::SInt { lo, hi } => v.as_int(param, *lo, *hi),
            _ => unreachable!("a signed integer field has a signed domain"),
        }
    }
    fn domain_ok(domain: &Domain) -> bool {
        matches!(domain, Domain::SInt { lo, hi } if lo <= hi)
    }
}

impl FieldType for u32 {
    const DOMAIN: Domain = Domain::Int {
        lo: 0,
        hi: u32::MAX as u64,
    };
    fn to_value(self) -> Value {
        Value::Int(self as i64)
    }
    fn from_value(param: &str, v: &Value, domain: &Domain) -> CoreResult<Self> {
        let x = domain.int(param, v)?;
        u32::try_from(x).map_err(|_| CoreError::invalid(param, x, "an integer below 2**32"))
    }
    fn domain_ok(domain: &Domain) -> bool {
        int_domain_ok(domain, u32::MAX as u64)
    }
}

/// One declared config field: its name, its values, its documentation
/// (the struct field's doc comment, `Kernel.info()` and the docs site) and
/// the config type's own facts about it (`M`: a Kernel field's kernel
/// origin; nothing for a cost).
#[derive(Clone, Copy, Debug)]
pub struct FieldDecl<M: 'static> {
    pub name: &'static str,
    pub domain: Domain,
    pub doc: &'static str,
    pub meta: M,
}

/// Declares a config struct from one list of fields: the struct (each
/// field's doc comment is its declared doc), `FIELDS` (the declarations, in
/// order), `declared(extra fields)` (every field at its declared value),
/// `check_declarations()`, and [`Declared`] (`FIELD_NAMES`, and reading,
/// setting and checking a field by name through its type and domain), on
/// which the type's [`Fields`] impl stands. A
/// field is `name: type [domain] = value => meta, "doc";` — the domain is
/// optional and defaults to the type's (`FieldType::DOMAIN`: every name of an
/// enum, True/False, the integers of the type); `value` is the field's value
/// in `declared()` (a Kernel's base preset, a CostModel's defaults); `=> meta`
/// is left out when the type's meta is `()`.
#[macro_export]
macro_rules! config_struct {
    (
        $(#[$sm:meta])*
        $vis:vis struct $name:ident {
            $($(#[$em:meta])* pub $extra:ident : $extra_ty:ty,)*
        }
        meta $meta_ty:ty;
        $(
            $f:ident : $t:ty $([$dom:expr])? = $value:expr $(=> $meta:expr)?, $doc:literal;
        )+
    ) => {
        $(#[$sm])*
        $vis struct $name {
            $($(#[$em])* pub $extra: $extra_ty,)*
            $(#[doc = $doc] pub $f: $t,)+
        }

        impl $name {
            /// Every field's declaration, in order.
            pub const FIELDS: &'static [$crate::config::FieldDecl<$meta_ty>] = &[$(
                $crate::config::FieldDecl {
                    name: stringify!($f),
                    domain: $crate::config_struct!(@domain $t $(, $dom)?),
                    doc: $doc,
                    meta: $crate::config_struct!(@meta $($meta)?),
                },
            )+];
            /// Every field at its declared value.
            pub fn declared($($extra: $extra_ty),*) -> Self {
                $name {
                    $($extra,)*
                    $($f: $value,)+
                }
            }

            /// The declarations are sound: each domain fits its field's
            /// type (an enum or bool declares none of its own, an integer's
            /// bounds fit the type), each declared value is in its domain,
            /// no name is declared twice. A unit test of each type calls it.
            pub fn check_declarations() -> Result<(), String> {
                let declared = Self::declared($(<$extra_ty>::default()),*);
                for (i, f) in Self::FIELDS.iter().enumerate() {
                    if Self::FIELDS[..i].iter().any(|g| g.name == f.name) {
                        return Err(format!("{} is declared twice", f.name));
                    }
                }
                $({
                    const DOMAIN: $crate::config::Domain =
                        $crate::config_struct!(@domain $t $(, $dom)?);
                    if !<$t as $crate::config::FieldType>::domain_ok(&DOMAIN) {
                        return Err(format!(
                            "{}: the domain {:?} does not fit its type {}",
                            stringify!($f), DOMAIN, stringify!($t)
                        ));
                    }
                })+
                $crate::config::Declared::decl_check(&declared)
                    .map_err(|e| format!("a declared value: {e}"))
            }
        }

        impl $crate::config::Declared for $name {
            /// The field names, in order.
            const FIELD_NAMES: &'static [&'static str] = &[$(stringify!($f)),+];

            /// Every field within its declared domain (a struct built in
            /// Rust, not through `decl_set`, is checked here too).
            fn decl_check(&self) -> $crate::error::CoreResult<()> {
                $({
                    const DOMAIN: $crate::config::Domain =
                        $crate::config_struct!(@domain $t $(, $dom)?);
                    let v = $crate::config::FieldType::to_value(self.$f);
                    <$t as $crate::config::FieldType>::from_value(stringify!($f), &v, &DOMAIN)?;
                })+
                Ok(())
            }

            fn domain_of(name: &str) -> Option<$crate::config::Domain> {
                match name {
                    $(stringify!($f) => Some($crate::config_struct!(@domain $t $(, $dom)?)),)+
                    _ => None,
                }
            }

            /// The field `name`'s value (`None`: no such field).
            fn decl_get(&self, name: &str) -> Option<$crate::config::Value> {
                match name {
                    $(stringify!($f) => Some($crate::config::FieldType::to_value(self.$f)),)+
                    _ => None,
                }
            }

            /// Set the field `name` from `v`, checked against its domain;
            /// `Ok(false)`: no such field.
            fn decl_set(
                &mut self,
                name: &str,
                v: &$crate::config::Value,
            ) -> $crate::error::CoreResult<bool> {
                match name {
                    $(stringify!($f) => {
                        const DOMAIN: $crate::config::Domain =
                            $crate::config_struct!(@domain $t $(, $dom)?);
                        self.$f = <$t as $crate::config::FieldType>::from_value(name, v, &DOMAIN)?
                    })+
                    _ => return Ok(false),
                }
                Ok(true)
            }
        }
    };
    (@domain $t:ty) => { <$t as $crate::config::FieldType>::DOMAIN };
    (@domain $t:ty, $dom:expr) => { $dom };
    (@meta) => { () };
    (@meta $meta:expr) => { $meta };
}

/// What `config_struct!` gives a type: its fields by name, read, set and
/// checked through their declared types and domains.
pub trait Declared: Clone {
    /// The field names, in order.
    const FIELD_NAMES: &'static [&'static str];
    /// The field `name`'s value (`None`: no such field).
    fn decl_get(&self, name: &str) -> Option<Value>;
    /// Set the field `name` from `v`, checked against its domain;
    /// `Ok(false)`: no such field.
    fn decl_set(&mut self, name: &str, v: &Value) -> CoreResult<bool>;
    /// Every field within its declared domain (a struct built in Rust, not
    /// through `decl_set`, is checked here too).
    fn decl_check(&self) -> CoreResult<()>;
    /// The field `name`'s declared domain.
    fn domain_of(name: &str) -> Option<Domain>;
}

/// A config object whose fields can be listed, read and replaced by name:
/// a declared type, with what the type adds (its name in messages, the
/// names it explains, its cross-field rules).
pub trait Fields: Declared {
    const KIND: &'static str;

    /// The error for a name this type refuses with an explanation (a
    /// retired field, a reserved name) — or, when `v` is given, a retired
    /// value of a field; `None` for the rest.
    fn explain(_name: &str, _v: Option<&Value>) -> Option<CoreError> {
        None
    }

    fn field_names() -> &'static [&'static str] {
        Self::FIELD_NAMES
    }

    fn get(&self, name: &str) -> Option<Value> {
        self.decl_get(name)
    }

    /// Set one field; validates the value.
    fn set(&mut self, name: &str, v: &Value) -> CoreResult<()> {
        if let Some(e) = Self::explain(name, Some(v)) {
            return Err(e);
        }
        if self.decl_set(name, v)? {
            Ok(())
        } else {
            Err(Self::unknown(name))
        }
    }

    /// Refuse a name that is not a settable field of this type (before its
    /// value is looked at).
    fn check_name(name: &str) -> CoreResult<()> {
        if let Some(e) = Self::explain(name, None) {
            return Err(e);
        }
        if Self::FIELD_NAMES.contains(&name) {
            Ok(())
        } else {
            Err(Self::unknown(name))
        }
    }

    fn unknown(name: &str) -> CoreError {
        CoreError::UnknownField {
            kind: Self::KIND,
            name: name.to_string(),
            allowed: Self::FIELD_NAMES.join(", "),
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

    /// Every field within its domain, then the type's cross-field rules.
    fn validate(&self) -> CoreResult<()> {
        self.decl_check()
    }

    fn items(&self) -> Vec<(&'static str, Value)> {
        Self::FIELD_NAMES
            .iter()
            .map(|n| (*n, self.get(n).expect("listed field")))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::named_enum! {
        enum Colour { Red = "red", Blue = "blue" }
    }

    // A declaration list with what check_declarations must refuse.
    crate::config_struct! {
        #[derive(Clone, Debug, PartialEq)]
        struct Probe {}
        meta ();
        only_red: Colour [Domain::Enum(&["red"])] = Colour::Red, "an enum with a domain of its own";
        flag: bool [Domain::Int { lo: 0, hi: 1 }] = false, "a bool with an integer domain";
        small: u32 [Domain::Int { lo: 0, hi: 10_000_000_000 }] = 5, "a u32 wider than u32";
        hz: u32 [Domain::IntIn(&[100, 250])] = 250, "a value set";
        out: u64 [Domain::Int { lo: 1, hi: 9 }] = 0, "a declared value outside its domain";
    }

    #[test]
    fn check_declarations_refuses_what_does_not_fit() {
        let e = Probe::check_declarations().unwrap_err();
        assert!(e.starts_with("only_red: the domain"), "{e}");
        assert!(!<Colour as FieldType>::domain_ok(&Domain::Enum(&["red"])));
        assert!(!<bool as FieldType>::domain_ok(&Domain::Int {
            lo: 0,
            hi: 1
        }));
        assert!(!<u32 as FieldType>::domain_ok(&Domain::Int {
            lo: 0,
            hi: 10_000_000_000
        }));
        assert!(<u32 as FieldType>::domain_ok(&Domain::IntIn(&[100, 250])));
        assert!(!<u64 as FieldType>::domain_ok(&Domain::IntIn(&[])));
        assert!(!<u64 as FieldType>::domain_ok(&Domain::Int {
            lo: 2,
            hi: 1
        }));
        // the declared value is checked against the domain
        let p = Probe::declared();
        assert!(p.decl_check().unwrap_err().to_string().contains("out=0"));
    }

    #[test]
    fn an_int_in_domain_names_its_values() {
        let d = Domain::IntIn(&[100, 250, 300, 1000]);
        for bad in [-1, 0, 7, 10_000] {
            assert_eq!(
                d.int("hz", &Value::Int(bad)).unwrap_err().to_string(),
                format!("invalid hz={bad}: expected one of 100, 250, 300, 1000")
            );
        }
        assert_eq!(d.int("hz", &Value::Int(250)), Ok(250));
        assert!(matches!(
            d.int("hz", &Value::Str("250".into())),
            Err(CoreError::WrongType { .. })
        ));
    }

    #[test]
    fn set_and_get_go_through_the_type_and_domain() {
        let mut p = Probe::declared();
        assert_eq!(p.decl_set("hz", &Value::Int(100)), Ok(true));
        assert_eq!(p.hz, 100);
        assert!(p.decl_set("hz", &Value::Int(101)).is_err());
        assert_eq!(p.decl_set("nope", &Value::Int(1)), Ok(false));
        assert_eq!(p.decl_get("hz"), Some(Value::Int(100)));
        assert_eq!(p.decl_get("only_red"), Some(Value::Str("red".into())));
        assert_eq!(p.decl_get("nope"), None);
        assert_eq!(
            Probe::FIELD_NAMES,
            ["only_red", "flag", "small", "hz", "out"]
        );
    }
}

/// One metric's documentation: every table of metrics (the engine's in
/// `engine::metrics`, the RT class's, the optional families beside their
/// producers) is made of these, and `crate::metrics` gathers them for the
/// docs' metric reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MetricDoc {
    /// The key in `Result.metrics` (a placeholder in `<…>` for a family).
    pub name: &'static str,
    /// `s`, `µs`, `count`, `fraction`, `CPUs`, `W`, `GHz` or `flag`.
    pub unit: &'static str,
    /// What it measures in the model.
    pub meaning: &'static str,
    /// The kernel counter, file or tool whose figure it stands for.
    pub source: &'static str,
}

/// A table of metrics, each with its documentation and the function that
/// computes it from `$kind`'s context: `name, unit, meaning, source =>
/// |ctx| value;`.
macro_rules! metric_table {
    ($kind:ident; $( $name:literal, $unit:literal, $meaning:literal, $source:literal => $value:expr; )*) => {
        &[ $( $kind {
            doc: $crate::config::MetricDoc { name: $name, unit: $unit, meaning: $meaning, source: $source },
            value: $value,
        }, )* ]
    };
}
pub(crate) use metric_table;
