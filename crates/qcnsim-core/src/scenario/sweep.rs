//! The optional `[sweep]` table: the axes and replications of a parameter sweep
//! (`qcnsim sweep`, docs/sweeps.md).
//!
//! The core checks only its shape here: `mode` is `grid` or `zip`, `replications` a whole number
//! of at least 1, `axes` a table whose keys are dotted field paths and whose values are non-empty
//! arrays (of one length in `zip` mode). A single run ignores the table. Whether each axis value
//! is valid for its field is checked by the sweep planner (Python), which resolves every point of
//! the sweep through [`super::load`] before running any, so a bad value is reported with its
//! field path there. Keeping the per-value check out of `load` keeps the cost of each point's own
//! run independent of the size of the sweep.

use super::reader::{show, Res, TableReader};
use crate::scenario::ScenarioError;
use serde_json::{Map, Value as Json};
use toml::Value;

/// Largest `replications` accepted (a typo guard, not a resource limit).
pub const MAX_REPLICATIONS: i64 = 1_000_000;

/// Top-level tables an axis may not point into: the sweep itself and the variants list.
const FORBIDDEN_ROOTS: &[&str] = &["sweep", "variants"];

/// The field path of axis `key`, quoted as TOML writes a dotted key inside `[sweep.axes]`.
pub fn axis_field(key: &str) -> String {
    format!("sweep.axes.{key:?}")
}

/// Read `[sweep]` (absent = `None`) into its resolved JSON form
/// `{mode, replications, axes: {path: [values]}}`.
pub fn read(root: &mut TableReader) -> Res<Option<Json>> {
    if !root.has("sweep") {
        root.raw("sweep"); // mark as known, so an absent table is fine
        return Ok(None);
    }
    let mut s = root.sub("sweep")?;
    let mode = s.choice("mode", "grid", &["grid", "zip"])?;
    s.int_in("replications", 1, 1, MAX_REPLICATIONS)?;
    let axes_field = s.field("axes");
    let mut axes = Map::new();
    match s.raw("axes") {
        None => {}
        Some(Value::Table(t)) => {
            let mut zip_len: Option<(String, usize)> = None;
            for (key, v) in t {
                let field = axis_field(key);
                check_path(key, &field)?;
                let items = match v {
                    Value::Array(a) if !a.is_empty() => a,
                    Value::Array(_) => {
                        return Err(ScenarioError::new(
                            field,
                            "an empty array",
                            "a non-empty array of values for this field",
                        ))
                    }
                    other => {
                        return Err(ScenarioError::new(
                            field,
                            show(other),
                            "an array of values for this field, e.g. [\"16KB\", \"33KB\"]",
                        ))
                    }
                };
                if mode == "zip" {
                    match &zip_len {
                        None => zip_len = Some((key.clone(), items.len())),
                        Some((first, n)) if *n != items.len() => {
                            return Err(ScenarioError::new(
                                field,
                                format!("an array of {} values", items.len()),
                                format!(
                                    "{n} values, as many as axis {first:?} (mode = \"zip\" pairs \
                                     the i-th values of every axis)"
                                ),
                            ))
                        }
                        Some(_) => {}
                    }
                }
                let json_items = items
                    .iter()
                    .map(|x| serde_json::to_value(x).unwrap_or(Json::Null))
                    .collect();
                axes.insert(key.clone(), Json::Array(json_items));
            }
        }
        Some(other) => {
            return Err(ScenarioError::new(
                axes_field,
                show(other),
                "a table of \"dotted.field.path\" = [values]",
            ))
        }
    }
    s.put("axes", Json::Object(axes));
    Ok(Some(Json::Object(s.finish()?)))
}

/// A dotted path with no empty segment that does not point into `[sweep]` or `[[variants]]`.
fn check_path(key: &str, field: &str) -> Res<()> {
    if key.split('.').any(|seg| seg.trim().is_empty()) {
        return Err(ScenarioError::new(
            field,
            format!("{key:?}"),
            "a dotted field path such as cc.qcn.cp.q_eq (no empty segments)",
        ));
    }
    let root = key.split('.').next().unwrap_or("");
    if FORBIDDEN_ROOTS.contains(&root) {
        return Err(ScenarioError::new(
            field,
            format!("{key:?}"),
            "a scenario field outside [sweep] and [[variants]]",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_text(text: &str) -> Res<Option<Json>> {
        let t: toml::Table = text.parse().expect("test TOML");
        let mut r = TableReader::new("", &t);
        let out = read(&mut r)?;
        r.finish()?;
        Ok(out)
    }

    #[test]
    fn accepted_shapes() {
        // (TOML, expected resolved JSON)
        let cases: &[(&str, Json)] = &[
            ("", Json::Null),
            (
                "[sweep]\nreplications = 3",
                serde_json::json!({"mode": "grid", "replications": 3, "axes": {}}),
            ),
            (
                "[sweep]\n[sweep.axes]\n\"cc.qcn.cp.q_eq\" = [\"16KB\", \"33KB\"]",
                serde_json::json!({"mode": "grid", "replications": 1,
                                   "axes": {"cc.qcn.cp.q_eq": ["16KB", "33KB"]}}),
            ),
            (
                "[sweep]\nmode = \"zip\"\naxes = { \"a.b\" = [1, 2], \"c\" = [0.5, 1.5] }",
                serde_json::json!({"mode": "zip", "replications": 1,
                                   "axes": {"a.b": [1, 2], "c": [0.5, 1.5]}}),
            ),
        ];
        for (text, want) in cases {
            let got = read_text(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got.unwrap_or(Json::Null), *want, "{text}");
        }
    }

    #[test]
    fn rejected_shapes() {
        // (TOML, expected error path, text the message must contain)
        let cases: &[(&str, &str, &str)] = &[
            ("sweep = 3", "sweep", "a table"),
            ("[sweep]\nmode = \"cube\"", "sweep.mode", "grid, zip"),
            ("[sweep]\nreplications = 0", "sweep.replications", "from 1"),
            (
                "[sweep]\nreplications = \"5\"",
                "sweep.replications",
                "whole number",
            ),
            (
                "[sweep]\nrepetitions = 5",
                "sweep.repetitions",
                "unknown key",
            ),
            ("[sweep]\naxes = [1, 2]", "sweep.axes", "a table"),
            (
                "[sweep.axes]\n\"a.b\" = 5",
                "sweep.axes.\"a.b\"",
                "an array",
            ),
            (
                "[sweep.axes]\n\"a.b\" = []",
                "sweep.axes.\"a.b\"",
                "non-empty",
            ),
            (
                "[sweep.axes]\n\"a..b\" = [1]",
                "sweep.axes.\"a..b\"",
                "no empty segments",
            ),
            (
                "[sweep.axes]\n\"sweep.replications\" = [1]",
                "sweep.axes.\"sweep.replications\"",
                "outside [sweep]",
            ),
            (
                "[sweep.axes]\n\"variants.0.name\" = [\"x\"]",
                "sweep.axes.\"variants.0.name\"",
                "outside",
            ),
            (
                "[sweep]\nmode = \"zip\"\n[sweep.axes]\n\"a\" = [1, 2]\n\"b\" = [1, 2, 3]",
                "sweep.axes.\"b\"",
                "2 values, as many as axis \"a\"",
            ),
        ];
        for (text, path, needle) in cases {
            let e = read_text(text).expect_err(text);
            assert_eq!(e.path, *path, "{text}: {e}");
            assert!(e.to_string().contains(needle), "{text}: {e}");
        }
    }
}
