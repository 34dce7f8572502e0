//! `count` on `[[hosts]]`, `[[switches]]`, `[[links]]` and `[[flows]]` entries: an entry with
//! `count = N` stands for N entries, the k-th with every `{i}` in its strings replaced by k
//! (0-based). This keeps scenarios with many identical sources (e.g. the 400-source stability
//! runs) short, and lets a variant change the number of sources with one `set`. Expanded
//! entries are numbered after expansion in error paths and in the resolved scenario.

use super::reader::Res;
use crate::scenario::ScenarioError;
use toml::Value;

pub const EXPANDABLE: [&str; 4] = ["hosts", "switches", "links", "flows"];
pub const MAX_COUNT: i64 = 100_000;

/// Whether any expandable array has an entry with a `count` key.
pub fn needed(root: &toml::Table) -> bool {
    EXPANDABLE.iter().any(|k| {
        matches!(root.get(*k), Some(Value::Array(a))
            if a.iter().any(|e| e.as_table().is_some_and(|t| t.contains_key("count"))))
    })
}

fn subst(v: &Value, i: &str) -> Value {
    match v {
        Value::String(s) => Value::String(s.replace("{i}", i)),
        Value::Array(a) => Value::Array(a.iter().map(|x| subst(x, i)).collect()),
        Value::Table(t) => Value::Table(t.iter().map(|(k, x)| (k.clone(), subst(x, i))).collect()),
        other => other.clone(),
    }
}

fn has_placeholder(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains("{i}"),
        Value::Array(a) => a.iter().any(has_placeholder),
        Value::Table(t) => t.values().any(has_placeholder),
        _ => false,
    }
}

/// The root table with every counted entry expanded.
pub fn expand(root: &toml::Table) -> Res<toml::Table> {
    let mut out = root.clone();
    for key in EXPANDABLE {
        let Some(Value::Array(entries)) = root.get(key) else {
            continue;
        };
        let mut list = Vec::new();
        for (k, e) in entries.iter().enumerate() {
            let Some(t) = e.as_table() else {
                list.push(e.clone());
                continue;
            };
            let Some(c) = t.get("count") else {
                list.push(e.clone());
                continue;
            };
            let path = format!("{key}.{k}.count");
            let n = match c {
                Value::Integer(n) if (1..=MAX_COUNT).contains(n) => *n,
                other => {
                    return Err(ScenarioError::new(
                        path,
                        super::reader::show(other),
                        format!("a whole number of copies from 1 to {MAX_COUNT}"),
                    ))
                }
            };
            let mut body = t.clone();
            body.remove("count");
            let body = Value::Table(body);
            if n > 1 && !has_placeholder(&body) {
                return Err(ScenarioError::new(
                    path,
                    n.to_string(),
                    "1, or an entry whose strings contain {i} (replaced by 0..count-1) so the copies differ",
                ));
            }
            for i in 0..n {
                list.push(subst(&body, &i.to_string()));
            }
        }
        out.insert(key.to_string(), Value::Array(list));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> toml::Table {
        s.parse().unwrap()
    }

    #[test]
    fn counted_entries_expand_with_the_index() {
        let root = parse(
            r#"
            [[hosts]]
            name = "sink"
            [[hosts]]
            name = "h{i}"
            count = 3
            [[links]]
            between = ["h{i}", "sw"]
            count = 3
            "#,
        );
        assert!(needed(&root));
        let out = expand(&root).unwrap();
        let hosts: Vec<&str> = out["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap())
            .collect();
        assert_eq!(hosts, ["sink", "h0", "h1", "h2"]);
        let links = out["links"].as_array().unwrap();
        assert_eq!(links.len(), 3);
        assert_eq!(links[2]["between"][0].as_str(), Some("h2"));
        assert!(!links[0].as_table().unwrap().contains_key("count"));
    }

    #[test]
    fn bad_counts() {
        // (name, text, error path, shows)
        #[rustfmt::skip]
        let cases: &[(&str, &str, &str, &str)] = &[
            ("zero", "[[hosts]]\nname = \"h{i}\"\ncount = 0", "hosts.0.count", "0"),
            ("too many", "[[flows]]\nname = \"f{i}\"\ncount = 100001", "flows.0.count", "100001"),
            ("not an integer", "[[hosts]]\nname = \"h{i}\"\ncount = \"3\"", "hosts.0.count", "3"),
            ("copies would be identical", "[[hosts]]\nname = \"h\"\ncount = 2", "hosts.0.count", "2"),
        ];
        for (name, text, path, shows) in cases {
            let e = expand(&parse(text)).expect_err(name);
            assert_eq!(e.path, *path, "{name}");
            assert!(e.to_string().contains(shows), "{name}: {e}");
        }
        // count = 1 without a placeholder is fine
        assert!(expand(&parse("[[hosts]]\nname = \"h\"\ncount = 1")).is_ok());
    }
}
