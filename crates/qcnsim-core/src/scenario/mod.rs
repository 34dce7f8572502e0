//! Scenario files: parsing, validation with field paths, and the resolved scenario model that
//! the simulator is built from. See docs/scenario.md for the file format.
//!
//! The model is in model.rs; root.rs reads a document's sections in their order, each by the
//! file of its section (links.rs, schedule.rs, flows.rs, cc.rs, qcn.rs, bcn.rs, dcqcn.rs,
//! timely.rs, swift.rs, hpcc.rs, metrics.rs, analysis.rs, ...); variants.rs resolves
//! `[[variants]]`.

pub mod budget;
pub mod buffer;
pub mod dcqcn;
pub mod dctcp;
pub mod expand;
pub mod fasthash;
pub mod flow_control;
pub mod fluid;
pub mod hpcc;
pub mod multicast;
pub mod params;
pub mod reader;
pub mod routes;
pub mod sweep;
pub mod swift;
pub mod timely;
pub mod topology;
pub mod transport;
pub mod workload;

mod analysis;
mod bcn;
mod cc;
mod error;
mod flows;
mod links;
mod metrics;
mod model;
mod qcn;
mod root;
mod schedule;
mod variants;

pub use error::ScenarioError;
pub use model::*;
pub use routes::Routes;

use reader::Res;
use root::parse_root;
use serde_json::{json, Value as Json};
use toml::Value;
use variants::{chosen_variant, parse_variant};

/// Parse and validate scenario text with overrides.
pub fn load(text: &str, overrides: &[String]) -> Res<Scenario> {
    load_seeded(text, overrides, None)
}

/// [`load`] with the run's seed replacing `meta.seed` (`run --seed`): what is drawn while
/// resolving the scenario (ECMP hash seeds, generated workloads) follows the run's seed.
pub fn load_seeded(text: &str, overrides: &[String], seed: Option<u64>) -> Res<Scenario> {
    let base: Value = match text.parse::<toml::Table>() {
        Ok(t) => Value::Table(t),
        Err(e) => {
            let msg = e.message().to_string();
            let loc = e
                .span()
                .map(|s| {
                    let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                    format!("TOML syntax error at line {line}")
                })
                .unwrap_or_else(|| "TOML syntax error".to_string());
            return Err(ScenarioError::new("", loc, msg));
        }
    };
    let mut doc = base.clone();
    reader::apply_overrides(&mut doc, overrides)?;
    let vars: &[Value] = match base.get("variants") {
        Some(Value::Array(v)) => v,
        _ => &[],
    };
    let mut sc = match chosen_variant(&doc, vars)? {
        // `meta.variant = NAME`: the base, then that variant's `set`, then the overrides (which
        // win); the other variants are not this run's business.
        Some(i) => parse_variant(&base, vars, i, overrides, seed)?,
        None => {
            let Value::Table(root) = &doc else {
                unreachable!()
            };
            let sc = parse_root(root, seed)?;
            // Each variant must itself be a valid scenario, as `qcnsim reproduce` runs it.
            for i in 0..vars.len() {
                parse_variant(&base, vars, i, overrides, seed)?;
            }
            sc
        }
    };
    if let Json::Object(m) = &mut sc.resolved {
        m.insert("overrides".into(), json!(overrides));
    }
    Ok(sc)
}
