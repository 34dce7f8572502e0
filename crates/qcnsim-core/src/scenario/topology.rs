//! Topology generators: a `[topology]` table expands into `[[hosts]]`, `[[switches]]` and
//! `[[links]]` entries (docs/models/topology.md). Generated entries come after the explicit
//! ones, so a scenario can add hosts, switches and links of its own and connect them to the
//! generated ones by name. Generated elements are changed or cut by name:
//! `[topology.switches.spine0]`, `[topology.hosts.h3]`, `[topology.links."leaf0-spine1"]`
//! (`cut = true` removes a link), which `--set` and variants reach as
//! `topology.switches.spine0.buffer=...`.
//!
//! Names: hosts `h0..`, numbered leaf by leaf (edge switch by edge switch); leaf-spine and
//! Clos switches `leaf0..`, `spine0..`; fat-tree switches `edge0..`, `agg0..` (pod by pod) and
//! `core0..`. Link keys are `A-B` with the lower tier first, `#k` for the k-th parallel link.

use super::reader::{show, Res, TableReader};
use super::routes::Fabric;
use crate::scenario::ScenarioError;
use crate::units;
use serde_json::Value as Json;
use std::collections::HashMap;
use toml::{Table, Value};

pub const KINDS: &[&str] = &["leaf-spine", "clos", "fat-tree"];
/// At most this many generated hosts (as for `count`).
pub const MAX_HOSTS: u64 = 1_000_000;

const HOST_KEYS: &[&str] = &["nic_buffer"];
const SWITCH_KEYS: &[&str] = &["latency", "buffer"];
const LINK_KEYS: &[&str] = &[
    "rate",
    "delay",
    "extra_delay",
    "buffer",
    "preamble",
    "ifg",
    "cut",
];

/// One tier of links: its key prefix (`host`, `spine`, `agg`, `core`) and optional rate and
/// delay as written.
struct Tier {
    rate: Option<Value>,
    delay: Option<Value>,
}

struct Gen {
    hosts: Vec<Table>,
    switches: Vec<Table>,
    /// (key, entry); the key only when links are patched by name (else empty)
    links: Vec<(String, Table)>,
    keys: bool,
}

impl Gen {
    fn host(&mut self, name: String) {
        let mut t = Table::new();
        t.insert("name".into(), Value::String(name));
        self.hosts.push(t);
    }

    fn switch(&mut self, name: String, latency: &Option<Value>, buffer: &Option<Value>) {
        let mut t = Table::new();
        t.insert("name".into(), Value::String(name));
        if let Some(v) = latency {
            t.insert("latency".into(), v.clone());
        }
        if let Some(v) = buffer {
            t.insert("buffer".into(), v.clone());
        }
        self.switches.push(t);
    }

    fn link(&mut self, a: &str, b: &str, k: usize, tier: &Tier) {
        let mut t = Table::new();
        t.insert(
            "between".into(),
            Value::Array(vec![Value::String(a.into()), Value::String(b.into())]),
        );
        if let Some(v) = &tier.rate {
            t.insert("rate".into(), v.clone());
        }
        if let Some(v) = &tier.delay {
            t.insert("delay".into(), v.clone());
        }
        let key = match (self.keys, k) {
            (false, _) => String::new(),
            (true, 0) => format!("{a}-{b}"),
            (true, _) => format!("{a}-{b}#{k}"),
        };
        self.links.push((key, t));
    }
}

/// A value kept as written after checking it parses with `check`.
fn raw_checked(
    t: &mut TableReader,
    key: &'static str,
    check: fn(&str) -> Result<(), String>,
    what: &str,
) -> Res<Option<Value>> {
    match t.raw(key) {
        None => Ok(None),
        Some(Value::String(s)) => {
            check(s).map_err(|e| t.err(key, format!("{s:?}"), format!("{what}: {e}")))?;
            t.put(key, Json::String(s.clone()));
            Ok(Some(Value::String(s.clone())))
        }
        Some(v) => Err(t.err(key, show(v), what.to_string())),
    }
}

fn rate(t: &mut TableReader, key: &'static str) -> Res<Option<Value>> {
    raw_checked(
        t,
        key,
        |s| match units::parse_rate(s) {
            Ok(r) if r > 0.0 => Ok(()),
            Ok(_) => Err("above zero".into()),
            Err(e) => Err(e.to_string()),
        },
        "a rate such as \"10Gbps\"",
    )
}

fn time(t: &mut TableReader, key: &'static str) -> Res<Option<Value>> {
    raw_checked(
        t,
        key,
        |s| units::parse_time(s).map(|_| ()).map_err(|e| e.to_string()),
        "a time such as \"1us\"",
    )
}

fn buffer(t: &mut TableReader, key: &'static str) -> Res<Option<Value>> {
    raw_checked(
        t,
        key,
        |s| super::Capacity::parse(s).map(|_| ()),
        "a buffer size",
    )
}

fn count(t: &mut TableReader, key: &'static str, lo: i64, hi: i64) -> Res<usize> {
    if !t.has(key) {
        return Err(t.err(
            key,
            "missing",
            format!("a whole number from {lo} to {hi} (required for this kind)"),
        ));
    }
    Ok(t.int_in(key, lo, lo, hi)? as usize)
}

/// Expand `[topology]`, if present: the root table with the generated entries appended, and
/// the resolved `[topology]` table.
pub fn generate(root: &Table) -> Res<Option<(Table, Json)>> {
    let Some(v) = root.get("topology") else {
        return Ok(None);
    };
    let Value::Table(tt) = v else {
        return Err(ScenarioError::new(
            "topology",
            show(v),
            "a table ([topology])",
        ));
    };
    let mut t = TableReader::new("topology", tt);
    let kind = t.choice("kind", "leaf-spine", KINDS)?;
    let host = Tier {
        rate: rate(&mut t, "host_rate")?,
        delay: time(&mut t, "host_delay")?,
    };
    let mut g = Gen {
        hosts: Vec::new(),
        switches: Vec::new(),
        links: Vec::new(),
        keys: tt.contains_key("links"),
    };
    match kind.as_str() {
        "fat-tree" => {
            let k = count(&mut t, "k", 2, 128)?;
            if k % 2 == 1 {
                return Err(t.err(
                    "k",
                    k.to_string(),
                    "an even number of switch ports, 2 to 128",
                ));
            }
            let agg = Tier {
                rate: rate(&mut t, "agg_rate")?,
                delay: time(&mut t, "agg_delay")?,
            };
            let core = Tier {
                rate: rate(&mut t, "core_rate")?,
                delay: time(&mut t, "core_delay")?,
            };
            let sw: Vec<(Option<Value>, Option<Value>)> = ["edge", "agg", "core"]
                .iter()
                .map(|tier| -> Res<_> {
                    let (l, b) = match *tier {
                        "edge" => ("edge_latency", "edge_buffer"),
                        "agg" => ("agg_latency", "agg_buffer"),
                        _ => ("core_latency", "core_buffer"),
                    };
                    Ok((time(&mut t, l)?, buffer(&mut t, b)?))
                })
                .collect::<Res<_>>()?;
            let h = k / 2;
            let hosts = k * h * h;
            if hosts as u64 > MAX_HOSTS {
                return Err(t.err("k", k.to_string(), "a fat-tree of at most 1,000,000 hosts"));
            }
            check_size(root, Fabric::FatTree { k }, "topology.k")?;
            let names = |p: &str, n: usize| (0..n).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
            let (edge, aggs, cores) = (
                names("edge", k * h),
                names("agg", k * h),
                names("core", h * h),
            );
            for (e, sw) in [(&edge, &sw[0]), (&aggs, &sw[1]), (&cores, &sw[2])] {
                for n in e {
                    g.switch(n.clone(), &sw.0, &sw.1);
                }
            }
            for (e, en) in edge.iter().enumerate() {
                for m in 0..h {
                    let hn = format!("h{}", e * h + m);
                    g.link(&hn, en, 0, &host);
                    g.host(hn);
                }
            }
            for pod in 0..k {
                for i in 0..h {
                    for j in 0..h {
                        g.link(&edge[pod * h + i], &aggs[pod * h + j], 0, &agg);
                    }
                }
                for j in 0..h {
                    for c in 0..h {
                        g.link(&aggs[pod * h + j], &cores[j * h + c], 0, &core);
                    }
                }
            }
        }
        _ => {
            let (leaves, spines, hpl) = if kind == "clos" {
                // a two-tier folded Clos of switches with `radix` ports: every leaf uses half
                // its ports for hosts and half for the spines, every spine one port per leaf
                let r = count(&mut t, "radix", 2, 256)?;
                if r % 2 == 1 {
                    return Err(t.err("radix", r.to_string(), "an even number of ports, 2 to 256"));
                }
                (r, r / 2, r / 2)
            } else {
                (
                    count(&mut t, "leaves", 1, 100_000)?,
                    count(&mut t, "spines", 1, 10_000)?,
                    count(&mut t, "hosts_per_leaf", 1, 100_000)?,
                )
            };
            let parallel = t.int_in("links_per_spine", 1, 1, 64)? as usize;
            if (leaves * hpl) as u64 > MAX_HOSTS {
                return Err(t.err(
                    "hosts_per_leaf",
                    hpl.to_string(),
                    format!("at most {MAX_HOSTS} hosts in all ({leaves} leaves)"),
                ));
            }
            let mut spine = Tier {
                rate: rate(&mut t, "spine_rate")?,
                delay: time(&mut t, "spine_delay")?,
            };
            if let Some(over) = t.opt_f64("oversubscription")? {
                if !(over > 0.0 && over <= 1000.0) {
                    return Err(t.err(
                        "oversubscription",
                        over.to_string(),
                        "a ratio above 0, up to 1000",
                    ));
                }
                if spine.rate.is_some() {
                    return Err(t.err(
                        "oversubscription",
                        over.to_string(),
                        "either spine_rate or oversubscription (it sets spine_rate), not both",
                    ));
                }
                let Some(Value::String(hr)) = &host.rate else {
                    return Err(t.err(
                        "oversubscription",
                        over.to_string(),
                        "a ratio together with host_rate (spine_rate = hosts_per_leaf × host_rate / (spines × links_per_spine × oversubscription))",
                    ));
                };
                let hr = units::parse_rate(hr).unwrap_or(0.0);
                let r = hpl as f64 * hr / ((spines * parallel) as f64 * over);
                spine.rate = Some(Value::String(format!("{r}bps")));
                t.put("spine_rate", Json::String(format!("{r}bps")));
            }
            check_size(
                root,
                Fabric::LeafSpine {
                    leaves,
                    spines,
                    hosts_per_leaf: hpl,
                    parallel,
                },
                if kind == "clos" {
                    "topology.radix"
                } else {
                    "topology.leaves, topology.spines, topology.hosts_per_leaf"
                },
            )?;
            let leaf_sw = (
                time(&mut t, "leaf_latency")?,
                buffer(&mut t, "leaf_buffer")?,
            );
            let spine_sw = (
                time(&mut t, "spine_latency")?,
                buffer(&mut t, "spine_buffer")?,
            );
            let leaf: Vec<String> = (0..leaves).map(|l| format!("leaf{l}")).collect();
            let spine_n: Vec<String> = (0..spines).map(|s| format!("spine{s}")).collect();
            for l in &leaf {
                g.switch(l.clone(), &leaf_sw.0, &leaf_sw.1);
            }
            for s in &spine_n {
                g.switch(s.clone(), &spine_sw.0, &spine_sw.1);
            }
            for (l, ln) in leaf.iter().enumerate() {
                for m in 0..hpl {
                    let hn = format!("h{}", l * hpl + m);
                    g.link(&hn, ln, 0, &host);
                    g.host(hn);
                }
            }
            for ln in &leaf {
                for sn in &spine_n {
                    for k in 0..parallel {
                        g.link(ln, sn, k, &spine);
                    }
                }
            }
        }
    }
    // patches by name
    patch_nodes(&mut t, "hosts", &mut g.hosts, HOST_KEYS)?;
    patch_nodes(&mut t, "switches", &mut g.switches, SWITCH_KEYS)?;
    patch_links(&mut t, &mut g.links)?;
    let n_hosts = g.hosts.len();
    let n_switches = g.switches.len();
    let n_links = g.links.len();
    let mut resolved = t.finish()?;
    resolved.insert("generated_hosts".into(), Json::from(n_hosts));
    resolved.insert("generated_switches".into(), Json::from(n_switches));
    resolved.insert("generated_links".into(), Json::from(n_links));

    let mut out = root.clone();
    out.remove("topology");
    append(&mut out, "hosts", g.hosts);
    append(&mut out, "switches", g.switches);
    append(
        &mut out,
        "links",
        g.links.into_iter().map(|(_, l)| l).collect(),
    );
    Ok(Some((out, Json::Object(resolved))))
}

/// Refuse, before writing a single entry, a generated fabric whose network (nodes and ports,
/// [`super::budget::network_bytes`]) and routing tables ([`Fabric::route_bytes`]) alone exceed
/// `metrics.memory_budget` clamped to the memory this machine has available: estimated from
/// the generator's parameters (its counts follow from them).
fn check_size(root: &Table, f: Fabric, fields: &str) -> Res<()> {
    let (hosts, switches, links) = f.counts();
    let net = super::budget::network_bytes((hosts + switches) as u128, 2 * links as u128);
    let routes = f.route_bytes();
    let (limit, budget) = super::routes::document_limit(root);
    if net + routes <= limit as u128 {
        return Ok(());
    }
    let show = super::budget::fmt_bytes;
    let machine = if limit < budget {
        format!(
            "; the budget is above the {} this machine has available and is clamped to it",
            show(limit as u128)
        )
    } else {
        match super::budget::machine_memory() {
            Some((m, from)) => format!("; this machine has {} available ({from})", show(m as u128)),
            None => String::new(),
        }
    };
    Err(ScenarioError::new(
        "metrics.memory_budget",
        format!("\"{}\"", show(budget as u128)),
        format!(
            "a budget that holds this generated fabric, {} of {hosts} hosts, {switches} \
             switches and {links} links: about {} before anything else the run needs, \
             estimated from its parameters before generating it, by part: network (nodes and \
             ports) {}, routing tables {}{machine}; make it smaller ({fields}) or raise \
             metrics.memory_budget (docs/performance.md, \"Memory\")",
            super::routes::describe(f),
            show(net + routes),
            show(net),
            show(routes)
        ),
    ))
}

fn append(root: &mut Table, key: &str, items: Vec<Table>) {
    let entry = root
        .entry(key.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(a) = entry {
        a.extend(items.into_iter().map(Value::Table));
    }
    // (a non-array value is left for the reader to refuse with its own message)
}

fn patch_table<'a>(t: &mut TableReader<'a>, key: &'static str) -> Res<Option<&'a Table>> {
    let path = t.field(key);
    match t.raw(key) {
        None => Ok(None),
        Some(Value::Table(p)) => {
            t.put(key, serde_json::to_value(p).unwrap_or(Json::Null));
            Ok(Some(p))
        }
        Some(v) => Err(ScenarioError::new(
            path,
            show(v),
            "a table of generated names, e.g. [topology.switches.spine0]",
        )),
    }
}

fn check_patch(path: &str, name: &str, p: &Value, keys: &[&str]) -> Res<Table> {
    let Value::Table(p) = p else {
        return Err(ScenarioError::new(
            format!("{path}.{name}"),
            show(p),
            format!("a table of settings ({})", keys.join(", ")),
        ));
    };
    for k in p.keys() {
        if !keys.contains(&k.as_str()) {
            return Err(ScenarioError::new(
                format!("{path}.{name}.{k}"),
                "an unknown key",
                format!("one of: {}", keys.join(", ")),
            ));
        }
    }
    Ok(p.clone())
}

fn names_hint(names: &mut dyn Iterator<Item = String>) -> String {
    let v: Vec<String> = names.take(6).collect();
    format!("{}, ...", v.join(", "))
}

fn patch_nodes(
    t: &mut TableReader,
    key: &'static str,
    list: &mut [Table],
    keys: &[&str],
) -> Res<()> {
    let path = t.field(key);
    let Some(patches) = patch_table(t, key)? else {
        return Ok(());
    };
    let index: HashMap<String, usize> = list
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            e.get("name")
                .and_then(|n| n.as_str())
                .map(|n| (n.to_string(), i))
        })
        .collect();
    for (name, p) in patches {
        let p = check_patch(&path, name, p, keys)?;
        let Some(&i) = index.get(name) else {
            return Err(ScenarioError::new(
                format!("{path}.{name}"),
                format!("{name:?}"),
                format!(
                    "the name of a generated {} ({})",
                    if key == "hosts" { "host" } else { "switch" },
                    names_hint(&mut list.iter().filter_map(|e| {
                        e.get("name").and_then(|n| n.as_str()).map(str::to_string)
                    }))
                ),
            ));
        };
        list[i].extend(p);
    }
    Ok(())
}

fn patch_links(t: &mut TableReader, links: &mut Vec<(String, Table)>) -> Res<()> {
    let path = t.field("links");
    let Some(patches) = patch_table(t, "links")? else {
        return Ok(());
    };
    let index: HashMap<String, usize> = links
        .iter()
        .enumerate()
        .map(|(i, (k, _))| (k.clone(), i))
        .collect();
    let mut cut = vec![false; links.len()];
    for (name, p) in patches {
        let mut p = check_patch(&path, name, p, LINK_KEYS)?;
        let Some(&i) = index.get(name) else {
            return Err(ScenarioError::new(
                format!("{path}.{name}"),
                format!("{name:?}"),
                format!(
                    "the key of a generated link, \"LOWER-UPPER\" ({})",
                    names_hint(&mut links.iter().map(|(k, _)| k.clone()))
                ),
            ));
        };
        match p.remove("cut") {
            None | Some(Value::Boolean(false)) => {}
            Some(Value::Boolean(true)) => cut[i] = true,
            Some(v) => {
                return Err(ScenarioError::new(
                    format!("{path}.{name}.cut"),
                    show(&v),
                    "true (remove the link) or false",
                ))
            }
        }
        links[i].1.extend(p);
    }
    let mut k = 0;
    links.retain(|_| {
        k += 1;
        !cut[k - 1]
    });
    Ok(())
}

/// A generated topology's counts, for tests.
#[cfg(test)]
pub(crate) fn counts(text: &str) -> (usize, usize, usize) {
    let root: Table = text.parse().unwrap();
    let (out, _) = generate(&root).unwrap().unwrap();
    let n = |k: &str| out.get(k).and_then(|v| v.as_array()).map_or(0, |a| a.len());
    (n("hosts"), n("switches"), n("links"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_each_kind() {
        // (text, hosts, switches, links)
        #[rustfmt::skip]
        let cases: &[(&str, usize, usize, usize)] = &[
            ("[topology]\nleaves = 8\nspines = 4\nhosts_per_leaf = 16", 128, 12, 128 + 32),
            ("[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 1\nlinks_per_spine = 3", 2, 4, 2 + 12),
            ("[topology]\nkind = \"clos\"\nradix = 8", 32, 12, 32 + 32),
            // k-ary fat-tree: k^3/4 hosts, 5k^2/4 switches, k^3/4 host links + k^3/2 fabric links
            ("[topology]\nkind = \"fat-tree\"\nk = 4", 16, 20, 16 + 32),
            ("[topology]\nkind = \"fat-tree\"\nk = 8", 128, 80, 128 + 256),
        ];
        for (text, h, s, l) in cases {
            assert_eq!(counts(text), (*h, *s, *l), "{text}");
        }
    }

    #[test]
    fn bad_generators() {
        // (text, error path, shows)
        #[rustfmt::skip]
        let cases: &[(&str, &str, &str)] = &[
            ("[topology]\nkind = \"ring\"", "topology.kind", "ring"),
            ("[topology]\nspines = 2\nhosts_per_leaf = 2", "topology.leaves", "missing"),
            ("[topology]\nkind = \"fat-tree\"\nk = 5", "topology.k", "5"),
            ("[topology]\nkind = \"fat-tree\"\nk = 4\nspines = 2", "topology.spines", "unknown"),
            ("[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\nhost_rate = \"fast\"", "topology.host_rate", "fast"),
            ("[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\noversubscription = 2.0", "topology.oversubscription", "host_rate"),
            ("[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n[topology.switches.spine9]\nbuffer = \"1KB\"", "topology.switches.spine9", "spine9"),
            ("[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n[topology.switches.spine1]\nrate = \"1Gbps\"", "topology.switches.spine1.rate", "unknown"),
            ("[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n[topology.links.\"spine0-leaf0\"]\ncut = true", "topology.links.spine0-leaf0", "leaf0-spine0"),
            ("[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 2\n[topology.links.\"leaf0-spine0\"]\ncut = 1", "topology.links.leaf0-spine0.cut", "1"),
        ];
        for (text, path, shows) in cases {
            let root: Table = text.parse().unwrap();
            let e = generate(&root)
                .err()
                .unwrap_or_else(|| panic!("accepted: {text}"));
            assert_eq!(e.path, *path, "{text}: {e}");
            assert!(e.to_string().contains(shows), "{text}: {e}");
        }
    }

    #[test]
    fn oversubscription_sets_the_spine_rate_and_patches_apply() {
        let root: Table = "[topology]\nleaves = 2\nspines = 2\nhosts_per_leaf = 8\nhost_rate = \"10Gbps\"\noversubscription = 2.0\n[topology.links.\"leaf1-spine0\"]\ncut = true\n[topology.switches.spine1]\nbuffer = \"50KB\""
            .parse()
            .unwrap();
        let (out, res) = generate(&root).unwrap().unwrap();
        let links = out["links"].as_array().unwrap();
        assert_eq!(links.len(), 16 + 3);
        let up = &links[16];
        assert_eq!(up["rate"].as_str(), Some("20000000000bps")); // 8 × 10G / (2 × 2)
        assert!(!links
            .iter()
            .any(|l| l["between"][0].as_str() == Some("leaf1")
                && l["between"][1].as_str() == Some("spine0")));
        let sw = out["switches"].as_array().unwrap();
        assert_eq!(sw[3]["buffer"].as_str(), Some("50KB"));
        assert_eq!(res["generated_links"], 19);
    }
}
