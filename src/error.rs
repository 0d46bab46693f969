//! The core's one error type. The binding layer maps it to the Python
//! exception hierarchy in `schedlab.exceptions` (config errors are
//! `ValueError`s).

use std::fmt::Display;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CoreError {
    /// A parameter has a value outside what is allowed.
    #[error("invalid {param}={value}: expected {allowed}")]
    InvalidValue {
        param: String,
        value: String,
        allowed: String,
    },
    /// A field name that does not exist on a config object.
    #[error("unknown {kind} field {name:?}: expected one of {allowed}")]
    UnknownField {
        kind: &'static str,
        name: String,
        allowed: String,
    },
    /// A field (or value) of an earlier schedlab version, and what replaced it.
    #[error("{name} is no longer a Kernel setting: {why}")]
    Retired { name: String, why: String },
    /// A name a config type reserves, or explains, that is not a setting.
    #[error("{kind} has no setting {name:?}: {why}")]
    NotASetting {
        kind: &'static str,
        name: String,
        why: &'static str,
    },
    /// A parameter has a value of the wrong type.
    #[error("invalid type for {param}: got {got}, expected {expected}")]
    WrongType {
        param: String,
        got: String,
        expected: String,
    },
    /// The cancellation callback asked the run to stop while the machine
    /// was being set up (before the first event).
    #[error("cancelled during setup")]
    Cancelled,
}

impl CoreError {
    pub fn invalid(param: &str, value: impl Display, allowed: impl Display) -> Self {
        CoreError::InvalidValue {
            param: param.to_string(),
            value: value.to_string(),
            allowed: allowed.to_string(),
        }
    }
}

pub type CoreResult<T> = Result<T, CoreError>;
