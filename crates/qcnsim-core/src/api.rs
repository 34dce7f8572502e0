//! The entry points used by the Python bindings and the benchmark binary: validate a scenario,
//! run it, and hand back column tables. Nothing here touches files. The top of the crate: it
//! imports downward only, and re-exports the types its callers name (the tables from
//! [`crate::table`], the errors from [`crate::scenario`] and [`crate::sim`]).

pub use crate::scenario::ScenarioError;
pub use crate::sim::RunError;
pub use crate::table::{Column, ColumnData, RunOutput, Table};

/// Check a scenario (TOML text plus `path=value` overrides) and return it resolved, with every
/// default filled in, as JSON text.
pub fn validate(toml_text: &str, overrides: &[String]) -> Result<String, ScenarioError> {
    let mut sc = crate::scenario::load(toml_text, overrides)?;
    // the resolved document alone, compact (a generated fabric's is most of it; the caller
    // parses it): the rest of the scenario is freed first
    let resolved = std::mem::take(&mut sc.resolved);
    drop(sc);
    Ok(serde_json::to_string(&resolved).unwrap_or_default())
}

/// Run a scenario. `seed` overrides `meta.seed`. `progress` is called about every 0.2 s of wall
/// time with the fraction of simulated time done (0..=1); returning `false` cancels the run.
pub fn run(
    toml_text: &str,
    overrides: &[String],
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, RunError> {
    let sc = load_for_run(toml_text, overrides, seed)?;
    run_scenario(&sc, progress)
}

/// The scenario [`run`] runs: loaded with `seed` (when given) as its `meta.seed`.
pub fn load_for_run(
    toml_text: &str,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<crate::scenario::Scenario, ScenarioError> {
    let mut sc = crate::scenario::load_seeded(toml_text, overrides, seed)?;
    if let Some(s) = seed {
        sc.seed = s;
        if let Some(meta) = sc.resolved.get_mut("meta").and_then(|m| m.as_object_mut()) {
            meta.insert("seed".into(), serde_json::Value::from(s));
        }
    }
    Ok(sc)
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
    crate::scenario::fluid::check_dt(&sc)?;
    crate::fluid::run(&sc)
}

/// [`run_fluid`] with a progress callback like [`run`]'s (at most every 0.2 s of wall time;
/// `false` cancels: `RunError::Cancelled`, nothing returned).
pub fn run_fluid_with(
    toml_text: &str,
    overrides: &[String],
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, RunError> {
    let sc = crate::scenario::load(toml_text, overrides)?;
    run_fluid_scenario(&sc, progress)
}

/// [`run_fluid_with`] on an already loaded scenario.
pub fn run_fluid_scenario(
    sc: &crate::scenario::Scenario,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunOutput, RunError> {
    crate::scenario::fluid::check_dt(sc)?;
    crate::fluid::run_with(sc, progress)?.ok_or(RunError::Cancelled)
}
