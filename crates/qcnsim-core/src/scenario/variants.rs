//! `[[variants]]`: named sets of overrides on the base scenario (docs/scenario.md). `load`
//! resolves `meta.variant` and checks that every variant is itself a valid scenario; the root
//! reader records them in the resolved scenario.

use super::reader::{self, show, Res, TableReader};
use super::root::parse_root;
use super::{Scenario, ScenarioError};
use serde_json::{Map, Value as Json};
use toml::Value;

/// The index of the variant `meta.variant` names, if it is set.
pub(super) fn chosen_variant(doc: &Value, vars: &[Value]) -> Res<Option<usize>> {
    let Some(v) = doc.get("meta").and_then(|m| m.get("variant")) else {
        return Ok(None);
    };
    let names: Vec<&str> = vars
        .iter()
        .filter_map(|t| t.get("name").and_then(|n| n.as_str()))
        .collect();
    let allowed = if names.is_empty() {
        "the name of one of the scenario's [[variants]] (it has none)".to_string()
    } else {
        format!(
            "the name of one of the scenario's [[variants]]: {}",
            names.join(", ")
        )
    };
    let Value::String(name) = v else {
        return Err(ScenarioError::new("meta.variant", show(v), allowed));
    };
    match vars
        .iter()
        .position(|t| t.get("name").and_then(|n| n.as_str()) == Some(name.as_str()))
    {
        Some(i) => Ok(Some(i)),
        None => Err(ScenarioError::new(
            "meta.variant",
            format!("{name:?}"),
            allowed,
        )),
    }
}

/// Variant `i`: the base document, then its `set`, then the overrides.
pub(super) fn parse_variant(
    base: &Value,
    vars: &[Value],
    i: usize,
    overrides: &[String],
    seed: Option<u64>,
) -> Res<Scenario> {
    let prefix = format!("variants.{i}.set");
    let mut vdoc = base.clone();
    if let Some(set) = vars[i].get("set").and_then(|s| s.as_table()) {
        for (k, val) in set {
            if k == "meta.variant" {
                return Err(ScenarioError::new(
                    format!("{prefix}: meta.variant"),
                    show(val),
                    "no `meta.variant` in a variant's set (a variant cannot select another)",
                ));
            }
            reader::set_path(&mut vdoc, k, val.clone()).map_err(|e| prefix_err(e, &prefix))?;
        }
    }
    reader::apply_overrides(&mut vdoc, overrides)?;
    let Value::Table(vroot) = &vdoc else {
        unreachable!()
    };
    parse_root(vroot, seed).map_err(|e| prefix_err(e, &prefix))
}

fn prefix_err(mut e: ScenarioError, prefix: &str) -> ScenarioError {
    e.path = format!("{prefix}: {}", e.path);
    e
}

/// `[[variants]]`: checked by `load`; recorded here.
pub(super) fn record(r: &mut TableReader, resolved: &mut Map<String, Json>) -> Res<()> {
    let mut var_json = Vec::new();
    let mut var_names = Vec::new();
    for mut t in r.tables("variants")? {
        let vname = t.req_str("name")?;
        if var_names.contains(&vname) {
            return Err(t.err(
                "name",
                format!("{vname:?}"),
                "a variant name not used by another variant",
            ));
        }
        var_names.push(vname);
        t.str_or("description", "")?;
        // `quick = false`: `qcnsim reproduce --quick` leaves this variant out (docs/scenario.md).
        t.bool_or("quick", true)?;
        let path = t.field("set");
        let set = match t.raw("set") {
            None => Map::new(),
            Some(Value::Table(s)) => s
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or(Json::Null)))
                .collect(),
            Some(v) => {
                return Err(ScenarioError::new(
                    path,
                    show(v),
                    "a table of path = value overrides",
                ))
            }
        };
        t.put("set", Json::Object(set));
        var_json.push(Json::Object(t.finish()?));
    }
    resolved.insert("variants".into(), Json::Array(var_json));
    Ok(())
}
