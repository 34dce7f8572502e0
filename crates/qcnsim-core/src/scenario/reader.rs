//! A strict reader over a parsed TOML document: every value is read through a typed accessor
//! that knows its dotted field path, every key that is not read is an error, and every value
//! read (or defaulted) is recorded in a resolved JSON mirror for `run.json`.

use crate::scenario::ScenarioError;
use crate::units::{self, SimTime};
use serde_json::{Map, Value as Json};
use toml::{Table, Value};

/// Reads one TOML table. Call [`TableReader::finish`] when done: it rejects unknown keys.
pub struct TableReader<'a> {
    path: String,
    table: &'a Table,
    used: Vec<&'static str>,
    pub resolved: Map<String, Json>,
}

pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

pub fn show(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Table(_) => "a table".to_string(),
        Value::Array(a) => format!("an array of {} items", a.len()),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Boolean(b) => b.to_string(),
        Value::Datetime(d) => format!("a date-time ({d})"),
    }
}

pub type Res<T> = Result<T, ScenarioError>;

impl<'a> TableReader<'a> {
    pub fn new(path: impl Into<String>, table: &'a Table) -> Self {
        TableReader {
            path: path.into(),
            table,
            used: Vec::new(),
            resolved: Map::new(),
        }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn field(&self, key: &str) -> String {
        join(&self.path, key)
    }

    pub fn err(
        &self,
        key: &str,
        value: impl Into<String>,
        allowed: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::new(self.field(key), value, allowed)
    }

    pub fn has(&self, key: &str) -> bool {
        self.table.contains_key(key)
    }

    /// The raw value, marking the key as used.
    pub fn raw(&mut self, key: &'static str) -> Option<&'a Value> {
        self.used.push(key);
        self.table.get(key)
    }

    fn record(&mut self, key: &str, v: Json) {
        self.resolved.insert(key.to_string(), v);
    }

    /// Reject keys that were never read.
    pub fn finish(self) -> Res<Map<String, Json>> {
        for k in self.table.keys() {
            if !self.used.iter().any(|u| u == k) {
                let mut allowed: Vec<&str> = self.used.clone();
                allowed.sort();
                allowed.dedup();
                let hint = match nearest_name(k, &allowed) {
                    Some(near) => format!(" (did you mean `{}`?)", join(&self.path, near)),
                    None => String::new(),
                };
                return Err(ScenarioError::new(
                    join(&self.path, k),
                    "an unknown key",
                    if allowed.is_empty() {
                        "no keys here".to_string()
                    } else {
                        format!("one of: {}{hint}", allowed.join(", "))
                    },
                ));
            }
        }
        Ok(self.resolved)
    }

    fn string_value(&mut self, key: &'static str, what: &str) -> Res<Option<&'a str>> {
        match self.raw(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.err(key, show(v), what.to_string())),
        }
    }

    pub fn opt_str(&mut self, key: &'static str) -> Res<Option<String>> {
        let v = self.string_value(key, "a string")?.map(|s| s.to_string());
        if let Some(s) = &v {
            self.record(key, Json::String(s.clone()));
        }
        Ok(v)
    }

    pub fn str_or(&mut self, key: &'static str, default: &str) -> Res<String> {
        let s = self.opt_str(key)?.unwrap_or_else(|| default.to_string());
        self.record(key, Json::String(s.clone()));
        Ok(s)
    }

    pub fn req_str(&mut self, key: &'static str) -> Res<String> {
        match self.opt_str(key)? {
            Some(s) => Ok(s),
            None => Err(self.err(key, "missing", "a string (this field is required)")),
        }
    }

    /// A string that must be one of `choices`.
    pub fn choice(&mut self, key: &'static str, default: &str, choices: &[&str]) -> Res<String> {
        let s = self.str_or(key, default)?;
        if !choices.contains(&s.as_str()) {
            return Err(self.err(
                key,
                format!("{s:?}"),
                format!("one of: {}", choices.join(", ")),
            ));
        }
        Ok(s)
    }

    pub fn opt_time(&mut self, key: &'static str) -> Res<Option<SimTime>> {
        let Some(s) = self.string_value(key, units::TIME_HELP)? else {
            return Ok(None);
        };
        let t = units::parse_time(s).map_err(|e| self.err(key, format!("{s:?}"), e.0))?;
        self.record(key, Json::String(units::fmt_time(t)));
        Ok(Some(t))
    }

    pub fn time_or(&mut self, key: &'static str, default: SimTime) -> Res<SimTime> {
        let t = self.opt_time(key)?.unwrap_or(default);
        self.record(key, Json::String(units::fmt_time(t)));
        Ok(t)
    }

    pub fn req_time(&mut self, key: &'static str) -> Res<SimTime> {
        match self.opt_time(key)? {
            Some(t) => Ok(t),
            None => Err(self.err(
                key,
                "missing",
                format!("{} (this field is required)", units::TIME_HELP),
            )),
        }
    }

    pub fn opt_rate(&mut self, key: &'static str) -> Res<Option<f64>> {
        let Some(s) = self.string_value(key, units::RATE_HELP)? else {
            return Ok(None);
        };
        let r = units::parse_rate(s).map_err(|e| self.err(key, format!("{s:?}"), e.0))?;
        if r <= 0.0 {
            return Err(self.err(key, format!("{s:?}"), "a rate above zero"));
        }
        self.record(key, Json::String(s.to_string()));
        Ok(Some(r))
    }

    pub fn rate_or(&mut self, key: &'static str, default: f64) -> Res<f64> {
        match self.opt_rate(key)? {
            Some(r) => Ok(r),
            None => {
                self.record(key, Json::String(units::fmt_rate(default)));
                Ok(default)
            }
        }
    }

    pub fn req_rate(&mut self, key: &'static str) -> Res<f64> {
        match self.opt_rate(key)? {
            Some(r) => Ok(r),
            None => Err(self.err(
                key,
                "missing",
                format!("{} (this field is required)", units::RATE_HELP),
            )),
        }
    }

    pub fn opt_bytes(&mut self, key: &'static str) -> Res<Option<u64>> {
        let Some(s) = self.string_value(key, units::BYTES_HELP)? else {
            return Ok(None);
        };
        let b = units::parse_bytes(s).map_err(|e| self.err(key, format!("{s:?}"), e.0))?;
        self.record(key, Json::String(format!("{b}B")));
        Ok(Some(b))
    }

    pub fn bytes_or(&mut self, key: &'static str, default: u64) -> Res<u64> {
        let b = self.opt_bytes(key)?.unwrap_or(default);
        self.record(key, Json::String(format!("{b}B")));
        Ok(b)
    }

    pub fn opt_f64(&mut self, key: &'static str) -> Res<Option<f64>> {
        let v = match self.raw(key) {
            None => return Ok(None),
            Some(Value::Float(f)) => *f,
            Some(Value::Integer(i)) => *i as f64,
            Some(v) => return Err(self.err(key, show(v), "a number")),
        };
        if !v.is_finite() {
            return Err(self.err(key, v.to_string(), "a finite number"));
        }
        self.record(key, serde_json::json!(v));
        Ok(Some(v))
    }

    /// A number in `[lo, hi]`.
    pub fn f64_in(&mut self, key: &'static str, default: f64, lo: f64, hi: f64) -> Res<f64> {
        let v = self.opt_f64(key)?.unwrap_or(default);
        if !(lo..=hi).contains(&v) {
            return Err(self.err(key, v.to_string(), format!("a number from {lo} to {hi}")));
        }
        self.record(key, serde_json::json!(v));
        Ok(v)
    }

    pub fn opt_int(&mut self, key: &'static str) -> Res<Option<i64>> {
        let v = match self.raw(key) {
            None => return Ok(None),
            Some(Value::Integer(i)) => *i,
            Some(v) => return Err(self.err(key, show(v), "a whole number")),
        };
        self.record(key, Json::from(v));
        Ok(Some(v))
    }

    pub fn int_in(&mut self, key: &'static str, default: i64, lo: i64, hi: i64) -> Res<i64> {
        let v = self.opt_int(key)?.unwrap_or(default);
        if !(lo..=hi).contains(&v) {
            return Err(self.err(
                key,
                v.to_string(),
                format!("a whole number from {lo} to {hi}"),
            ));
        }
        self.record(key, Json::from(v));
        Ok(v)
    }

    pub fn bool_or(&mut self, key: &'static str, default: bool) -> Res<bool> {
        let v = match self.raw(key) {
            None => default,
            Some(Value::Boolean(b)) => *b,
            Some(v) => return Err(self.err(key, show(v), "true or false")),
        };
        self.record(key, Json::Bool(v));
        Ok(v)
    }

    /// A sub-table (absent = empty).
    pub fn sub(&mut self, key: &'static str) -> Res<TableReader<'a>> {
        static EMPTY: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
        let path = self.field(key);
        match self.raw(key) {
            None => Ok(TableReader::new(path, EMPTY.get_or_init(Table::new))),
            Some(Value::Table(t)) => Ok(TableReader::new(path, t)),
            Some(v) => Err(ScenarioError::new(path, show(v), "a table")),
        }
    }

    /// An array of tables (`[[key]]`); absent = empty.
    pub fn tables(&mut self, key: &'static str) -> Res<Vec<TableReader<'a>>> {
        let path = self.field(key);
        match self.raw(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Table(t) => Ok(TableReader::new(format!("{path}.{i}"), t)),
                    other => Err(ScenarioError::new(
                        format!("{path}.{i}"),
                        show(other),
                        "a table",
                    )),
                })
                .collect(),
            Some(v) => Err(ScenarioError::new(
                path,
                show(v),
                "an array of tables ([[...]])",
            )),
        }
    }

    /// `key`'s array of tables taken out of `doc` (absent: empty), to be read entry by entry
    /// and dropped once read: a generated fabric's `[[hosts]]`, `[[switches]]` and `[[links]]`
    /// are then never held both as TOML entries and as what they are read into.
    pub fn take_tables(doc: &mut Table, key: &str) -> Res<Vec<Table>> {
        match doc.remove(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Table(t) => Ok(t),
                    other => Err(ScenarioError::new(
                        format!("{key}.{i}"),
                        show(&other),
                        "a table",
                    )),
                })
                .collect(),
            Some(v) => Err(ScenarioError::new(
                key,
                show(&v),
                "an array of tables ([[...]])",
            )),
        }
    }

    /// An array of strings; absent = None.
    pub fn opt_str_list(&mut self, key: &'static str) -> Res<Option<Vec<String>>> {
        let path = self.field(key);
        let out = match self.raw(key) {
            None => return Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(ScenarioError::new(
                        format!("{path}.{i}"),
                        show(other),
                        "a string",
                    )),
                })
                .collect::<Res<Vec<_>>>()?,
            Some(v) => return Err(ScenarioError::new(path, show(v), "an array of strings")),
        };
        self.record(key, Json::from(out.clone()));
        Ok(Some(out))
    }

    /// Store a sub-object in the resolved mirror.
    pub fn put(&mut self, key: &str, v: Json) {
        self.record(key, v);
    }
}

/// Apply `path=value` overrides to a TOML document. The value is parsed as a TOML value when it
/// is one (`5`, `true`, `"x"`, `[1, 2]`), otherwise taken as a bare string (`10Gbps`). Numeric
/// path segments index arrays (`flows.0.rate`).
pub fn apply_overrides(doc: &mut Value, overrides: &[String]) -> Res<()> {
    for o in overrides {
        let Some((path, raw)) = o.split_once('=') else {
            return Err(ScenarioError::new(
                "--set",
                format!("{o:?}"),
                "path=value, e.g. cc.qcn.cp.q_eq=26KB",
            ));
        };
        let path = path.trim();
        let raw = raw.trim();
        if path.is_empty() || path.split('.').any(|seg| seg.trim().is_empty()) {
            return Err(ScenarioError::new(
                "--set",
                format!("{o:?}"),
                "path=value with a dotted path such as cc.qcn.cp.q_eq (no empty segments)",
            ));
        }
        let value = parse_override_value(raw);
        set_path(doc, path, value)?;
    }
    Ok(())
}

pub fn parse_override_value(raw: &str) -> Value {
    let probe = format!("v = {raw}");
    match probe.parse::<Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| Value::String(raw.to_string())),
        Err(_) => Value::String(raw.to_string()),
    }
}

pub fn set_path(doc: &mut Value, path: &str, value: Value) -> Res<()> {
    let segs: Vec<&str> = path.split('.').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err(ScenarioError::new(
            path,
            "an override path",
            "dotted keys such as cc.qcn.cp.q_eq",
        ));
    }
    // `flows.<workload>.<field>`: a field of every flow a workload generates, which the
    // workload sets on each (`workloads.<workload>.<field>`), unless a written flow has that name
    if segs.len() >= 2
        && segs[0] == "flows"
        && element_ix(doc.get("flows"), "flows", segs[1]).is_none()
    {
        if let Some(w) = element_ix(doc.get("workloads"), "workloads", segs[1]) {
            if segs.len() != 3 || !WORKLOAD_FLOW_FIELDS.contains(&segs[2]) {
                return Err(ScenarioError::new(
                    path,
                    format!("an override of the flows workload {:?} generates", segs[1]),
                    format!(
                        "flows.{}.FIELD with FIELD one of {} (set on every flow the workload \
                         generates); sizes, start times and hosts are the workload's own keys \
                         (workloads.{}.*)",
                        segs[1],
                        WORKLOAD_FLOW_FIELDS.join(", "),
                        segs[1]
                    ),
                ));
            }
            let w = w.to_string();
            return set_segs(doc, &["workloads", &w, segs[2]], 0, &value);
        }
        if doc.get("flows").is_none() && segs[1] != "*" && segs[1].parse::<usize>().is_err() {
            let names = match doc.get("workloads") {
                Some(Value::Array(a)) => element_names(a, "workloads"),
                _ => Vec::new(),
            };
            return Err(ScenarioError::new(
                format!("flows.{}", segs[1]),
                format!("{:?}", segs[1]),
                format!(
                    "the name of a flow, or of a workload for the flows it generates (workloads: {})",
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ),
            ));
        }
    }
    set_segs(doc, &segs, 0, &value)
}

/// The fields a workload sets on every flow it generates (`flows.<workload>.<field>`).
const WORKLOAD_FLOW_FIELDS: [&str; 5] = ["rate", "frame", "priority", "transport", "sender"];

/// The default name of an element of the arrays whose elements have one (`flows`: `f<i>`,
/// `workloads`: `w<i>`).
fn default_name(array: &str, i: usize) -> Option<String> {
    match array {
        "flows" => Some(format!("f{i}")),
        "workloads" => Some(format!("w{i}")),
        _ => None,
    }
}

/// The index of the element of `array` (at key `key`) named `name`: its `name`, or without
/// one its default name.
fn element_ix(array: Option<&Value>, key: &str, name: &str) -> Option<usize> {
    match array {
        Some(Value::Array(a)) => element_ix_in(a, key, name),
        _ => None,
    }
}

fn element_ix_in(a: &[Value], key: &str, name: &str) -> Option<usize> {
    a.iter().enumerate().position(|(i, e)| match e.get("name") {
        Some(Value::String(n)) => n == name,
        Some(_) => false,
        None => default_name(key, i).as_deref() == Some(name),
    })
}

/// The names of an array's elements, for an error.
fn element_names(a: &[Value], key: &str) -> Vec<String> {
    a.iter()
        .enumerate()
        .filter_map(|(i, e)| match e.get("name") {
            Some(Value::String(n)) => Some(n.clone()),
            Some(_) => None,
            None => default_name(key, i),
        })
        .collect()
}

/// Set `segs[i..]` below `cur` (which `segs[..i]` leads to). A `*` segment on an array sets the
/// rest of the path in every element (`flows.*.rate=5Gbps`, `links.*.delay=1us`).
fn set_segs(cur: &mut Value, segs: &[&str], i: usize, value: &Value) -> Res<()> {
    let seg = segs[i];
    let last = i + 1 == segs.len();
    let here = segs[..=i].join(".");
    let next: &mut Value = match cur {
        Value::Table(t) => {
            if seg == "*" {
                return Err(ScenarioError::new(
                    here,
                    "\"*\"",
                    "a key: * stands for every element of an array (flows.*.rate), not of a table",
                ));
            }
            if last {
                t.insert(seg.to_string(), value.clone());
                return Ok(());
            }
            t.entry(seg.to_string())
                .or_insert_with(|| Value::Table(Table::new()))
        }
        Value::Array(a) => {
            if seg == "*" {
                if a.is_empty() {
                    return Err(ScenarioError::new(
                        here,
                        "\"*\"",
                        format!("an array with elements ({} is empty)", segs[..i].join(".")),
                    ));
                }
                for slot in a.iter_mut() {
                    if last {
                        *slot = value.clone();
                    } else {
                        set_segs(slot, segs, i + 1, value)?;
                    }
                }
                return Ok(());
            }
            let key = if i > 0 { segs[i - 1] } else { "" };
            let by_name = || element_ix_in(a, key, seg);
            let idx: usize = match seg.parse() {
                Ok(k) => k,
                Err(_) => by_name().ok_or_else(|| {
                    let names = element_names(a, key);
                    let more = if key == "flows" {
                        ", or of a workload (for the flows it generates: flows.NAME.FIELD)"
                    } else {
                        ""
                    };
                    ScenarioError::new(
                        here.clone(),
                        format!("{seg:?}"),
                        if names.is_empty() {
                            "an array index (0, 1, ...) or * for every element".to_string()
                        } else {
                            format!(
                                "an array index (0, 1, ...), * for every element, or an element's \
                                 name ({}){more}",
                                names.join(", ")
                            )
                        },
                    )
                })?,
            };
            let n = a.len();
            let slot = a.get_mut(idx).ok_or_else(|| {
                ScenarioError::new(here.clone(), idx.to_string(), format!("an index below {n}"))
            })?;
            if last {
                *slot = value.clone();
                return Ok(());
            }
            slot
        }
        other => {
            return Err(ScenarioError::new(
                segs[..i].join("."),
                show(other),
                "a table or an array to set a field in",
            ))
        }
    };
    set_segs(next, segs, i + 1, value)
}

/// The name in `candidates` nearest to `name` by edit distance, if it is close enough to be a
/// plausible typo (at most a third of the name's length, and at least 1, edits away).
pub fn nearest_name<'b>(name: &str, candidates: &[&'b str]) -> Option<&'b str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| (edit_distance(name, c), *c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

/// Levenshtein distance (insert, delete, substitute; an adjacent swap counts as one edit).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, v) in d[0].iter_mut().enumerate() {
        *v = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let sub = d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut v = sub.min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}
