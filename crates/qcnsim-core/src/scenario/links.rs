//! `[defaults]`, `[[hosts]]`, `[[switches]]` and `[[links]]`: the network's nodes and links, and
//! the references to them (ports named `"FROM->TO"`) that other sections make.

use super::reader::{show, Res, TableReader};
use super::{Capacity, LinkSpec, NodeKind, NodeSpec, PortIx, Scenario, ScenarioError};
use crate::units::SimTime;
use serde_json::{Map, Value as Json};
use toml::Value;

/// `[defaults]`: the values of the node and link keys not given.
pub(super) struct Defaults {
    rate: f64,
    delay: SimTime,
    preamble: u32,
    ifg: u32,
    latency: SimTime,
    buffer: Capacity,
    nic: Capacity,
    /// `nic_scheduler = "round_robin"` (else `"fifo"`).
    pub(super) nic_rr: bool,
}

/// `[defaults]`.
pub(super) fn read_defaults(
    r: &mut TableReader,
    resolved: &mut Map<String, Json>,
) -> Res<Defaults> {
    let mut d = r.sub("defaults")?;
    let rate = d.rate_or("link_rate", 10e9)?;
    let delay = d.time_or("link_delay", 0)?;
    let preamble = overhead_bytes(&mut d, "preamble", 0)?;
    let ifg = overhead_bytes(&mut d, "ifg", 0)?;
    let latency = d.time_or("switch_latency", 0)?;
    let buffer = capacity(&mut d, "buffer", Capacity::Infinite)?;
    let nic = capacity(&mut d, "nic_buffer", Capacity::Bytes(1_000_000))?;
    let nic_rr =
        d.choice("nic_scheduler", "round_robin", &["round_robin", "fifo"])? == "round_robin";
    resolved.insert("defaults".into(), Json::Object(d.finish()?));
    Ok(Defaults {
        rate,
        delay,
        preamble,
        ifg,
        latency,
        buffer,
        nic,
        nic_rr,
    })
}

/// `[[hosts]]` then `[[switches]]`: the nodes, and the index of their names.
pub(super) fn read_nodes(
    lists: [Vec<toml::Table>; 2],
    def: &Defaults,
    resolved: &mut Map<String, Json>,
) -> Res<(Vec<NodeSpec>, super::fasthash::NameIndex)> {
    let mut nodes = Vec::new();
    let mut index = super::fasthash::NameIndex::default();
    let mut node_json = Vec::new();
    for ((kind, key), entries) in [(NodeKind::Host, "hosts"), (NodeKind::Switch, "switches")]
        .into_iter()
        .zip(lists)
    {
        let mut list = Vec::with_capacity(entries.len());
        // each entry is dropped once read
        for (i, entry) in entries.into_iter().enumerate() {
            let mut t = TableReader::new(format!("{key}.{i}"), &entry);
            let name = t.req_str("name")?;
            if name.is_empty() || name.contains("->") || name.contains('#') {
                return Err(t.err(
                    "name",
                    format!("{name:?}"),
                    "a non-empty name without \"->\" or \"#\"",
                ));
            }
            if index.contains_key(&name) {
                return Err(t.err(
                    "name",
                    format!("{name:?}"),
                    "a name not used by another host or switch",
                ));
            }
            let (latency, buffer) = match kind {
                NodeKind::Host => (0, capacity(&mut t, "nic_buffer", def.nic)?),
                NodeKind::Switch => (
                    t.time_or("latency", def.latency)?,
                    capacity(&mut t, "buffer", def.buffer)?,
                ),
            };
            index.insert(name.clone(), nodes.len());
            nodes.push(NodeSpec {
                name,
                kind,
                latency,
                buffer,
            });
            list.push(Json::Object(t.finish()?));
        }
        node_json.push((key, list));
    }
    for (key, list) in node_json {
        resolved.insert(key.into(), Json::Array(list));
    }
    if nodes.is_empty() {
        return Err(ScenarioError::new(
            "hosts",
            "an empty topology",
            "at least two hosts ([[hosts]]) connected by [[links]], usually through [[switches]]",
        ));
    }
    Ok((nodes, index))
}

/// `[[links]]`.
pub(super) fn read_links(
    entries: Vec<toml::Table>,
    def: &Defaults,
    nodes: &[NodeSpec],
    index: &super::fasthash::NameIndex,
    resolved: &mut Map<String, Json>,
) -> Res<Vec<LinkSpec>> {
    let mut links = Vec::with_capacity(entries.len());
    let mut link_json = Vec::with_capacity(entries.len());
    let mut n_links_of = vec![0usize; nodes.len()];
    let mut pairs: super::fasthash::FastMap<(usize, usize), u32> = Default::default();
    // each entry is dropped once read
    for (i, entry) in entries.into_iter().enumerate() {
        let mut t = TableReader::new(format!("links.{i}"), &entry);
        let ends = t.opt_str_list("between")?.ok_or_else(|| {
            t.err(
                "between",
                "missing",
                "two node names, e.g. between = [\"h0\", \"sw1\"]",
            )
        })?;
        if ends.len() != 2 {
            return Err(t.err("between", format!("{ends:?}"), "exactly two node names"));
        }
        let mut ix = [0usize; 2];
        for (k, n) in ends.iter().enumerate() {
            ix[k] = *index.get(n).ok_or_else(|| {
                ScenarioError::new(
                    format!("{}.{k}", t.field("between")),
                    format!("{n:?}"),
                    format!("the name of a host or switch ({})", names(nodes)),
                )
            })?;
        }
        if ix[0] == ix[1] {
            return Err(t.err("between", format!("{ends:?}"), "two different nodes"));
        }
        let rate_bps = t.rate_or("rate", def.rate)?;
        let delay = t.time_or("delay", def.delay)?;
        let extra_delay = t.time_or("extra_delay", 0)?;
        let preamble_bytes = overhead_bytes(&mut t, "preamble", def.preamble)?;
        let ifg_bytes = overhead_bytes(&mut t, "ifg", def.ifg)?;
        let buffer = match t.opt_str("buffer")? {
            None => None,
            Some(s) => Some(Capacity::parse(&s).map_err(|e| t.err("buffer", format!("{s:?}"), e))?),
        };
        for &n in &ix {
            n_links_of[n] += 1;
            if nodes[n].kind == NodeKind::Host && n_links_of[n] > 1 {
                return Err(t.err(
                    "between",
                    format!("{ends:?}"),
                    format!(
                        "at most one link per host (host {:?} already has its NIC link)",
                        nodes[n].name
                    ),
                ));
            }
        }
        let pair = pairs
            .entry((ix[0].min(ix[1]), ix[0].max(ix[1])))
            .or_insert(0);
        let dup = *pair;
        *pair += 1;
        links.push(LinkSpec {
            a: ix[0],
            b: ix[1],
            rate_bps,
            delay,
            extra_delay,
            buffer,
            preamble_bytes,
            ifg_bytes,
            dup,
        });
        link_json.push(Json::Object(t.finish()?));
    }
    resolved.insert("links".into(), Json::Array(link_json));
    if links.is_empty() {
        return Err(ScenarioError::new(
            "links",
            "no links",
            "at least one [[links]] entry connecting the hosts and switches",
        ));
    }
    Ok(links)
}

/// Per-frame wire overhead in bytes (`preamble`, `ifg`): 0 to 1000 B.
fn overhead_bytes(t: &mut TableReader, key: &'static str, default: u32) -> Res<u32> {
    let v = t.bytes_or(key, default as u64)?;
    if v > 1000 {
        return Err(t.err(
            key,
            format!("\"{v}B\""),
            "a size from 0B to 1000B (Ethernet: preamble = \"8B\", ifg = \"12B\")",
        ));
    }
    Ok(v as u32)
}

pub(super) fn names(nodes: &[NodeSpec]) -> String {
    let mut v: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    if v.len() > 12 {
        v.truncate(12);
        v.push("...");
    }
    v.join(", ")
}

fn capacity(t: &mut TableReader, key: &'static str, default: Capacity) -> Res<Capacity> {
    match t.opt_str(key)? {
        None => {
            t.put(key, Json::String(default.describe()));
            Ok(default)
        }
        Some(s) => Capacity::parse(&s).map_err(|e| t.err(key, format!("{s:?}"), e)),
    }
}

pub(super) fn port_ref(sc: &Scenario, t: &TableReader, key: &str, name: &str) -> Res<PortIx> {
    sc.port_by_name(name).ok_or_else(|| {
        let mut all: Vec<String> = (0..sc.n_ports()).map(|p| sc.port_name(p)).collect();
        if all.len() > 12 {
            all.truncate(12);
            all.push("...".into());
        }
        t.err(
            key,
            format!("{name:?}"),
            format!(
                "a port named \"FROM->TO\" after a link ({})",
                all.join(", ")
            ),
        )
    })
}

pub(crate) fn port_selection(
    sc: &Scenario,
    t: &mut TableReader,
    key: &'static str,
    default: &str,
) -> Res<Vec<bool>> {
    let n = sc.n_ports();
    match t.raw(key) {
        None | Some(Value::String(_)) => {
            let s = match t.raw(key) {
                Some(Value::String(s)) => s.clone(),
                _ => default.to_string(),
            };
            let sel = match s.as_str() {
                "switches" => (0..n).map(|p| sc.is_switch_port(p)).collect(),
                "all" => vec![true; n],
                "none" => vec![false; n],
                other => {
                    // a single port name
                    let p = port_ref(sc, t, key, other)?;
                    (0..n).map(|q| q == p).collect()
                }
            };
            t.put(key, Json::String(s));
            Ok(sel)
        }
        Some(Value::Array(_)) => {
            let list = t.opt_str_list(key)?.unwrap_or_default();
            let mut sel = vec![false; n];
            for (i, name) in list.iter().enumerate() {
                let p = sc.port_by_name(name).ok_or_else(|| {
                    ScenarioError::new(
                        format!("{}.{i}", t.field(key)),
                        format!("{name:?}"),
                        "a port named \"FROM->TO\"",
                    )
                })?;
                sel[p] = true;
            }
            Ok(sel)
        }
        Some(v) => Err(t.err(
            key,
            show(v),
            "\"switches\", \"all\", \"none\", or a list of port names",
        )),
    }
}
