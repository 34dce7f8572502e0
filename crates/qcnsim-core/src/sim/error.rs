//! The error of a run: a scenario the simulator refuses, or a cancellation by the progress
//! callback (re-exported by [`crate::api`]).

use crate::scenario::ScenarioError;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum RunError {
    Scenario(ScenarioError),
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Cancelled,
}

impl From<ScenarioError> for RunError {
    fn from(e: ScenarioError) -> Self {
        RunError::Scenario(e)
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Scenario(e) => e.fmt(f),
            RunError::Cancelled => f.write_str("run cancelled"),
        }
    }
}
