//! The error of a scenario that cannot be run: what the whole scenario layer returns, and what the
//! Python bindings turn into `qcnsim.ScenarioError` (re-exported by [`crate::api`]).

use std::fmt;

/// A scenario that cannot be run, with the dotted field path (e.g. `cc.qcn.cp.q_eq`), the
/// offending value as written, and what would be allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub value: String,
    pub allowed: String,
}

impl ScenarioError {
    pub fn new(
        path: impl Into<String>,
        value: impl Into<String>,
        allowed: impl Into<String>,
    ) -> Self {
        ScenarioError {
            path: path.into(),
            value: value.into(),
            allowed: allowed.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}: {}", self.value, self.allowed)
        } else {
            write!(
                f,
                "`{}` = {}: expected {}",
                self.path, self.value, self.allowed
            )
        }
    }
}

impl std::error::Error for ScenarioError {}
