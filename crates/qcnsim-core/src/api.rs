//! The entry points used by the Python bindings and the benchmark binary: validate a scenario,
//! run it, and hand back column tables. Nothing here touches files.

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

#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    I64(Vec<i64>),
    F64(Vec<f64>),
    Bool(Vec<bool>),
    Str(Vec<String>),
    /// Strings from a small set: row `i` is `values[codes[i]]`. Long per-sample tables (one
    /// row per flow and sample) name their entity this way, without a string per row.
    Cat {
        codes: Vec<u32>,
        values: Vec<String>,
    },
}

impl ColumnData {
    pub fn len(&self) -> usize {
        match self {
            ColumnData::I64(v) => v.len(),
            ColumnData::F64(v) => v.len(),
            ColumnData::Bool(v) => v.len(),
            ColumnData::Str(v) => v.len(),
            ColumnData::Cat { codes, .. } => codes.len(),
        }
    }

    /// The string of row `i` of a string column (`Str` or `Cat`).
    pub fn str_at(&self, i: usize) -> Option<&str> {
        match self {
            ColumnData::Str(v) => v.get(i).map(|s| s.as_str()),
            ColumnData::Cat { codes, values } => codes
                .get(i)
                .and_then(|&c| values.get(c as usize))
                .map(|s| s.as_str()),
            _ => None,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub data: ColumnData,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
}

impl Table {
    pub fn new(name: &str) -> Self {
        Table {
            name: name.to_string(),
            columns: Vec::new(),
        }
    }
    pub fn col(mut self, name: &str, data: ColumnData) -> Self {
        self.columns.push(Column {
            name: name.to_string(),
            data,
        });
        self
    }
    pub fn column(&self, name: &str) -> Option<&ColumnData> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.data)
    }
    pub fn rows(&self) -> usize {
        self.columns.first().map(|c| c.data.len()).unwrap_or(0)
    }
}

/// Everything a run produces.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub tables: Vec<Table>,
    /// The resolved scenario (all defaults filled in), as JSON text.
    pub resolved_json: String,
    pub seed: u64,
    /// Events processed by the engine.
    pub events: u64,
    /// Simulated time covered, picoseconds.
    pub sim_time_ps: u64,
    /// Wall-clock seconds spent in the event loop.
    pub wall_s: f64,
    /// Data frames forwarded by switches (for the benchmark's frames/s figure).
    pub frames_forwarded: u64,
}

impl RunOutput {
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }
}

/// Check a scenario (TOML text plus `path=value` overrides) and return it resolved, with every
/// default filled in, as JSON text.
pub fn validate(toml_text: &str, overrides: &[String]) -> Result<String, ScenarioError> {
    let sc = crate::scenario::load(toml_text, overrides)?;
    Ok(serde_json::to_string_pretty(&sc.resolved).unwrap_or_default())
}

/// Run a scenario. `seed` overrides `meta.seed`. `progress` is called about every 0.2 s of wall
/// time with the fraction of simulated time done (0..=1); returning `false` cancels the run.
pub fn run(
    toml_text: &str,
    overrides: &[String],
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, RunError> {
    let mut sc = crate::scenario::load_seeded(toml_text, overrides, seed)?;
    if let Some(s) = seed {
        sc.seed = s;
        if let Some(meta) = sc.resolved.get_mut("meta").and_then(|m| m.as_object_mut()) {
            meta.insert("seed".into(), serde_json::Value::from(s));
        }
    }
    run_scenario(&sc, progress)
}

/// Run an already loaded scenario.
pub fn run_scenario(
    sc: &crate::scenario::Scenario,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, RunError> {
    let wall = std::time::Instant::now();
    let mut sim = crate::sim::Sim::new(sc, sc.seed);
    sim.run(progress)?;
    let wall_s = wall.elapsed().as_secs_f64();
    Ok(sim.into_output(sc.seed, wall_s))
}

/// Solve the scenario's fluid model (`[fluid]`, docs/models/fluid.md) instead of simulating
/// packets: the same tables as a run where they apply (`queue_samples`, `rp_rates`, `summary`)
/// plus `fluid_inputs`. Deterministic; `meta.seed` is recorded but unused.
pub fn run_fluid(toml_text: &str, overrides: &[String]) -> Result<RunOutput, ScenarioError> {
    let sc = crate::scenario::load(toml_text, overrides)?;
    crate::fluid::run(&sc)
}
