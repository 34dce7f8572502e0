//! Workloads (docs/models/workload.md): `[[workloads]]` entries expand, when the scenario is
//! loaded, into ordinary finite `[[flows]]` entries appended after the explicit ones, so
//! routing, validation, names and tables treat them like written flows.
//!
//! - `kind = "poisson"`: every source host starts flows at Poisson arrivals whose rate makes
//!   the offered load of its NIC link `load` (rate = load × link rate / mean flow size), with
//!   sizes drawn from a flow-size CDF (shipped: `websearch`, `datamining`, `hadoop`, files in
//!   python/qcnsim/workloads/, or the scenario's own `cdf = [[bytes, p], ...]`) and
//!   destinations by `pattern`: `all-to-all` (uniform over the other hosts), `permutation`
//!   (one random derangement, fixed for the run) or `many-to-one` (every flow to `dst`);
//! - `kind = "incast"`: N senders of S bytes each to one receiver, at the given times or
//!   periodically.
//!
//! Draws come from their own random stream per workload (kind WORKLOAD), derived from the
//! run's seed.

use super::reader::{show, Res, TableReader};
use crate::engine::rng::kinds;
use crate::engine::{Rng, StreamId};
use crate::scenario::ScenarioError;
use crate::units::{self, SimTime};
use serde_json::Value as Json;
use toml::{Table, Value};

/// At most this many generated flows in a scenario.
pub const MAX_FLOWS: usize = 200_000;

/// Shipped flow-size distributions: (name, file text).
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "websearch",
        include_str!("../../../../python/qcnsim/workloads/websearch.cdf"),
    ),
    (
        "datamining",
        include_str!("../../../../python/qcnsim/workloads/datamining.cdf"),
    ),
    (
        "hadoop",
        include_str!("../../../../python/qcnsim/workloads/hadoop.cdf"),
    ),
];

/// A piecewise-linear flow-size CDF: points (bytes, cumulative probability), sizes and
/// probabilities non-decreasing, from probability 0 to 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Cdf {
    pub points: Vec<(f64, f64)>,
}

impl Cdf {
    pub fn new(points: Vec<(f64, f64)>) -> Result<Cdf, String> {
        if points.len() < 2 {
            return Err("at least two points [bytes, probability]".into());
        }
        if points[0].1 != 0.0 || points[points.len() - 1].1 != 1.0 {
            return Err("probabilities from 0 (first point) to 1 (last point)".into());
        }
        for w in points.windows(2) {
            if !(w[1].0 >= w[0].0 && w[1].1 >= w[0].1) {
                return Err(format!(
                    "sizes and probabilities that never decrease ({:?} then {:?})",
                    w[0], w[1]
                ));
            }
        }
        if points.iter().any(|&(x, _)| !(0.0..=1e12).contains(&x)) {
            return Err("sizes from 0 to 1e12 bytes".into());
        }
        if points[points.len() - 1].0 < 1.0 {
            return Err("a largest size of at least 1 byte".into());
        }
        Ok(Cdf { points })
    }

    /// Parse a CDF file: `bytes probability` per line, `#` comments.
    pub fn parse(text: &str) -> Result<Cdf, String> {
        let mut pts = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let v: Vec<f64> = line
                .split_whitespace()
                .map(|x| x.parse::<f64>())
                .collect::<Result<_, _>>()
                .map_err(|_| format!("line {}: two numbers", i + 1))?;
            if v.len() != 2 {
                return Err(format!("line {}: two numbers", i + 1));
            }
            pts.push((v[0], v[1]));
        }
        Cdf::new(pts)
    }

    pub fn shipped(name: &str) -> Option<Cdf> {
        SHIPPED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| Cdf::parse(t).expect("shipped CDF parses"))
    }

    /// The size at cumulative probability `u` in [0, 1] (linear between points).
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.points;
        for i in 1..p.len() {
            if u <= p[i].1 && p[i].1 > p[i - 1].1 {
                let (x0, y0) = p[i - 1];
                let (x1, y1) = p[i];
                return x0 + (x1 - x0) * (u - y0) / (y1 - y0);
            }
        }
        p[p.len() - 1].0
    }

    /// Mean flow size, bytes (the integral of the piecewise-linear quantile function), of
    /// sizes as drawn (at least 1 byte).
    pub fn mean(&self) -> f64 {
        self.points
            .windows(2)
            .map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1))
            .sum::<f64>()
            .max(1.0)
    }

    /// Draw a size, whole bytes, at least 1.
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        (self.quantile(rng.next_f64()).round() as u64).max(1)
    }
}

/// The hosts of the (expanded) root table, in order, with their NIC link rate.
fn hosts_and_rates(root: &Table) -> Vec<(String, f64)> {
    let def = root
        .get("defaults")
        .and_then(|d| d.get("link_rate"))
        .and_then(|r| r.as_str())
        .and_then(|s| units::parse_rate(s).ok())
        .unwrap_or(10e9);
    let names: Vec<String> = root
        .get("hosts")
        .and_then(|h| h.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|h| h.get("name").and_then(|n| n.as_str()).map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut rate: super::fasthash::FastMap<&str, f64> = Default::default();
    if let Some(links) = root.get("links").and_then(|l| l.as_array()) {
        for l in links {
            let r = l
                .get("rate")
                .and_then(|r| r.as_str())
                .and_then(|s| units::parse_rate(s).ok())
                .unwrap_or(def);
            if let Some(b) = l.get("between").and_then(|b| b.as_array()) {
                for e in b {
                    if let Some(n) = e.as_str() {
                        rate.entry(n).or_insert(r);
                    }
                }
            }
        }
    }
    names
        .iter()
        .map(|n| (n.clone(), rate.get(n.as_str()).copied().unwrap_or(def)))
        .collect()
}

/// Host name -> its first index in `hosts` (what a linear search from the front finds), so
/// that looking names up is not linear in the hosts.
fn host_index(hosts: &[(String, f64)]) -> super::fasthash::FastMap<&str, usize> {
    let mut m = super::fasthash::FastMap::with_capacity_and_hasher(hosts.len(), Default::default());
    for (i, (h, _)) in hosts.iter().enumerate() {
        m.entry(h.as_str()).or_insert(i);
    }
    m
}

/// The hosts attached to each switch of the document (by `[[links]]` between a host and a
/// non-host), in host order.
fn hosts_by_switch(
    root: &Table,
    hosts: &[(String, f64)],
) -> std::collections::HashMap<String, Vec<usize>> {
    let mut out: std::collections::HashMap<String, Vec<usize>> = Default::default();
    let by_name = host_index(hosts);
    let ix = |n: &str| by_name.get(n).copied();
    if let Some(links) = root.get("links").and_then(|l| l.as_array()) {
        for l in links {
            let Some(b) = l.get("between").and_then(|b| b.as_array()) else {
                continue;
            };
            let ends: Vec<&str> = b.iter().filter_map(|e| e.as_str()).collect();
            if let [x, y] = ends[..] {
                for (h, s) in [(x, y), (y, x)] {
                    if let (Some(i), None) = (ix(h), ix(s)) {
                        out.entry(s.to_string()).or_default().push(i);
                    }
                }
            }
        }
    }
    for v in out.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    out
}

/// What `workloads.*.senders` takes.
const SENDERS_ALLOWED: &str = "a number of senders drawn at random, a list of places (host \
     names, switch names for their hosts, pods), or { from = [places], count = k } for k of \
     their hosts drawn at random";

/// The pods of a generated fat-tree (`[topology] kind = "fat-tree"`): `pod<p>` for the hosts
/// attached to its edge switches `edge<p*k/2>` to `edge<p*k/2 + k/2 - 1>`.
fn pods_of(
    topology: Option<&Json>,
    attached: &std::collections::HashMap<String, Vec<usize>>,
) -> std::collections::HashMap<String, Vec<usize>> {
    let mut out = std::collections::HashMap::new();
    let Some(t) = topology else { return out };
    if t.get("kind").and_then(|k| k.as_str()) != Some("fat-tree") {
        return out;
    }
    let Some(k) = t.get("k").and_then(|k| k.as_u64()) else {
        return out;
    };
    let h = k / 2;
    for p in 0..k {
        let mut v: Vec<usize> = (0..h)
            .flat_map(|i| {
                attached
                    .get(&format!("edge{}", p * h + i))
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        out.insert(format!("pod{p}"), v);
    }
    out
}

struct NewFlow {
    start: SimTime,
    src: usize,
    dst: usize,
    size: u64,
}

/// Expand `[[workloads]]`: the root's `flows` with the generated flows appended (to replace
/// `flows` and `workloads` by; the document is not copied), and the resolved workloads. `seed`
/// is the run's seed, `duration` the run's length.
pub fn generate(
    root: &Table,
    seed: u64,
    duration: SimTime,
    topology: Option<&Json>,
) -> Res<Option<(Vec<Value>, Json)>> {
    let Some(v) = root.get("workloads") else {
        return Ok(None);
    };
    let Value::Array(items) = v else {
        return Err(ScenarioError::new(
            "workloads",
            show(v),
            "an array of tables ([[workloads]])",
        ));
    };
    let hosts = hosts_and_rates(root);
    let attached = hosts_by_switch(root, &hosts);
    let by_name = host_index(&hosts);
    let pods = pods_of(topology, &attached);
    // a list entry names a host, a switch for the hosts attached to it (a place: a leaf, a
    // rack, an edge switch of a pod), or a generated fat-tree's pod (`pod0`, ...)
    let hosts_at = |t: &TableReader, key: &str, name: &str| -> Res<Vec<usize>> {
        if let Some(&i) = by_name.get(name) {
            return Ok(vec![i]);
        }
        match attached.get(name).or_else(|| pods.get(name)) {
            Some(v) if !v.is_empty() => Ok(v.clone()),
            _ => Err(t.err(
                key,
                format!("{name:?}"),
                "the name of a host, of a switch with hosts attached (for those hosts), or of a \
                 generated fat-tree's pod (pod0, pod1, ...)",
            )),
        }
    };
    // `key = { from = [places], count = k }`: k hosts drawn at random (a stream of their own)
    // from the places' hosts (default: `pool`), `exclude` left out
    let draw = |t: &mut TableReader,
                key: &'static str,
                tt: &Table,
                pool: &[usize],
                exclude: Option<usize>,
                rng: &mut Rng|
     -> Res<Vec<usize>> {
        let mut sub = TableReader::new(t.field(key), tt);
        let from = match sub.opt_str_list("from")? {
            None => pool.to_vec(),
            Some(list) => {
                let mut v = Vec::new();
                for n in &list {
                    for h in hosts_at(&sub, "from", n)? {
                        if !v.contains(&h) {
                            v.push(h);
                        }
                    }
                }
                v
            }
        };
        let from: Vec<usize> = from.into_iter().filter(|&h| Some(h) != exclude).collect();
        let count = match sub.raw("count") {
            Some(Value::Integer(n)) if *n >= 1 && *n as usize <= from.len() => *n as usize,
            Some(v) => {
                return Err(sub.err(
                    "count",
                    show(v),
                    format!(
                        "a whole number from 1 to {} (the hosts of from{})",
                        from.len(),
                        if exclude.is_some() {
                            " other than dst"
                        } else {
                            ""
                        }
                    ),
                ))
            }
            None => {
                let e = sub.err(
                    "count",
                    "missing",
                    "how many hosts to draw from the hosts of from",
                );
                // an unknown key (a misspelt count) is named first
                return Err(sub.finish().err().unwrap_or(e));
            }
        };
        sub.put("count", Json::from(count));
        // the first `count` of a random shuffle
        let mut p = from;
        for i in (1..p.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            p.swap(i, j);
        }
        p.truncate(count);
        let mut j = sub.finish()?;
        j.insert(
            "drawn".into(),
            Json::from(p.iter().map(|&h| hosts[h].0.clone()).collect::<Vec<_>>()),
        );
        t.put(key, Json::Object(j));
        Ok(p)
    };
    let host_ix = |t: &TableReader, key: &str, name: &str| -> Res<usize> {
        by_name.get(name).copied().ok_or_else(|| {
            t.err(
                key,
                format!("{name:?}"),
                "the name of a host (written or generated)",
            )
        })
    };
    let mut out_flows: Vec<Value> = match root.get("flows") {
        Some(Value::Array(a)) => a.clone(),
        _ => Vec::new(),
    };
    let mut resolved = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (w, item) in items.iter().enumerate() {
        let path = format!("workloads.{w}");
        let Value::Table(tt) = item else {
            return Err(ScenarioError::new(path, show(item), "a table"));
        };
        let mut t = TableReader::new(path, tt);
        let name = t.str_or("name", &format!("w{w}"))?;
        if !names.insert(name.clone()) {
            return Err(t.err(
                "name",
                format!("{name:?}"),
                "a name not used by another workload",
            ));
        }
        let kind = t.choice("kind", "poisson", &["poisson", "incast"])?;
        let start = t.time_or("start", 0)?;
        let stop = t.time_or("stop", duration)?.min(duration);
        if start >= stop {
            return Err(t.err(
                "start",
                format!("{:?}", units::fmt_time(start)),
                "a time before stop and before meta.duration",
            ));
        }
        let frame = t.bytes_or("frame", 1500)?;
        if !(64..=9216).contains(&frame) {
            return Err(t.err(
                "frame",
                format!("\"{frame}B\""),
                "a frame size from 64B to 9216B",
            ));
        }
        let priority = t.int_in("priority", 0, 0, 7)?;
        // written into the generated flows only when given (flows.*.transport checks it)
        let transport = match t.opt_str("transport")? {
            Some(s) if s != "udp" && s != "gbn" => {
                return Err(t.err(
                    "transport",
                    format!("{s:?}"),
                    "one of: udp (open loop), gbn (RoCE-style go-back-N)",
                ))
            }
            other => other,
        };
        // the generated flows' sender: a NIC holding each message unless set otherwise
        let sender = t.choice("sender", "nic", &["nic", "generator"])?;
        let rate = t.opt_rate("rate")?;
        // participating hosts
        let all: Vec<usize> = (0..hosts.len()).collect();
        let members: Vec<usize> = match t.raw("hosts") {
            Some(Value::Table(tt)) => {
                let mut r = Rng::stream(seed, StreamId::new(kinds::WORKLOAD, w as u32, 1));
                draw(&mut t, "hosts", tt, &all, None, &mut r)?
            }
            _ => match t.opt_str_list("hosts")? {
                None => all,
                Some(list) => {
                    let mut v = Vec::new();
                    for n in &list {
                        v.extend(hosts_at(&t, "hosts", n)?);
                    }
                    v
                }
            },
        };
        let mut rng = Rng::stream(seed, StreamId::new(kinds::WORKLOAD, w as u32, 0));
        let mut flows: Vec<NewFlow> = Vec::new();
        if kind == "poisson" {
            let cdf = match (t.opt_str("sizes")?, t.raw("cdf")) {
                (Some(_), Some(_)) => {
                    return Err(t.err("cdf", "given with sizes", "either sizes (a shipped distribution) or cdf (your own points)"))
                }
                (Some(s), None) => Cdf::shipped(&s).ok_or_else(|| {
                    t.err(
                        "sizes",
                        format!("{s:?}"),
                        format!(
                            "a shipped distribution ({}) or cdf = [[bytes, probability], ...]",
                            SHIPPED.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                        ),
                    )
                })?,
                (None, Some(v)) => {
                    let pts = cdf_points(v).map_err(|e| t.err("cdf", show(v), e))?;
                    Cdf::new(pts).map_err(|e| t.err("cdf", show(v), e))?
                }
                (None, None) => {
                    return Err(t.err("sizes", "missing", "a shipped distribution (websearch, datamining, hadoop) or cdf = [[bytes, probability], ...]"))
                }
            };
            let load = t.f64_in("load", 0.5, 1e-6, 1.0)?;
            let pattern = t.choice(
                "pattern",
                "all-to-all",
                &["all-to-all", "permutation", "many-to-one"],
            )?;
            let mean = cdf.mean();
            t.put("mean_size_bytes", Json::from(mean));
            let target = if pattern == "many-to-one" {
                let d = t.req_str("dst")?;
                Some(host_ix(&t, "dst", &d)?)
            } else {
                None
            };
            let senders: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&h| Some(h) != target)
                .collect();
            if senders.is_empty() || (target.is_none() && members.len() < 2) {
                return Err(t.err(
                    "hosts",
                    format!("{} hosts", members.len()),
                    "at least two hosts (a source and a destination)",
                ));
            }
            // permutation: a random derangement of the members
            let perm: Vec<usize> = if pattern == "permutation" {
                let n = members.len();
                let mut p: Vec<usize> = (0..n).collect();
                loop {
                    for i in (1..n).rev() {
                        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                        p.swap(i, j);
                    }
                    if (0..n).all(|i| p[i] != i) {
                        break;
                    }
                }
                p
            } else {
                Vec::new()
            };
            // `load_on`: the load of the host links (default), or of a class of links, reached by
            // scaling every source's arrival rate by one factor
            let host_load = match t.opt_str("load_on")?.as_deref() {
                None | Some("hosts") => load,
                Some(glob) => {
                    let dest = |s: usize, d: usize| -> f64 {
                        if s == d {
                            return 0.0;
                        }
                        match pattern.as_str() {
                            "many-to-one" => (Some(d) == target) as u8 as f64,
                            "permutation" => {
                                let i = members.iter().position(|&m| m == s);
                                (i.map(|i| members[perm[i]]) == Some(d)) as u8 as f64
                            }
                            _ => members.contains(&d) as u8 as f64 / (members.len() - 1) as f64,
                        }
                    };
                    let share = class_load(root, glob, &senders, &hosts, &dest)
                        .map_err(|e| t.err("load_on", format!("{glob:?}"), e))?;
                    let u = load / share;
                    if u > 1.0 {
                        return Err(t.err(
                            "load",
                            load.to_string(),
                            format!(
                                "at most {share:.4}: links {glob:?} at this load need the senders' host links above 100 %"
                            ),
                        ));
                    }
                    t.put("host_load", Json::from(u));
                    u
                }
            };
            for (k, &s) in senders.iter().enumerate() {
                let link = hosts[s].1;
                let lambda = host_load * link / (8.0 * mean); // flows per second
                let mean_gap_ps = units::SEC as f64 / lambda;
                let mut tt = start as f64;
                loop {
                    tt += rng.exponential(mean_gap_ps);
                    if tt >= stop as f64 {
                        break;
                    }
                    let dst = match pattern.as_str() {
                        "many-to-one" => target.unwrap_or(0),
                        "permutation" => {
                            members[perm[members.iter().position(|&m| m == s).unwrap_or(k)]]
                        }
                        _ => {
                            let j = (rng.next_u64() % (members.len() as u64 - 1)) as usize;
                            let pos = members.iter().position(|&m| m == s).unwrap_or(0);
                            members[if j >= pos { j + 1 } else { j }]
                        }
                    };
                    flows.push(NewFlow {
                        start: tt as SimTime,
                        src: s,
                        dst,
                        size: cdf.draw(&mut rng),
                    });
                    if flows.len() > MAX_FLOWS {
                        return Err(t.err("load", load.to_string(), format!("a workload of at most {MAX_FLOWS} flows (lower load, fewer hosts or a shorter window)")));
                    }
                }
            }
        } else {
            let d = t.req_str("dst")?;
            let dst = host_ix(&t, "dst", &d)?;
            let size = t.opt_bytes("size")?.ok_or_else(|| {
                t.err(
                    "size",
                    "missing",
                    "the bytes each sender sends, e.g. \"64KB\"",
                )
            })?;
            if size == 0 || size > super::MAX_FLOW_BYTES {
                return Err(t.err(
                    "size",
                    format!("\"{size}B\""),
                    format!(
                        "a size from 1B to {}B (1 PB), as flows.*.size",
                        super::MAX_FLOW_BYTES
                    ),
                ));
            }
            let senders: Vec<usize> = match t.raw("senders") {
                Some(Value::Integer(n)) => {
                    let pool: Vec<usize> = members.iter().copied().filter(|&h| h != dst).collect();
                    if *n < 1 || *n as usize > pool.len() {
                        return Err(t.err(
                            "senders",
                            n.to_string(),
                            format!("from 1 to {} (the hosts other than dst)", pool.len()),
                        ));
                    }
                    // the first n of a random shuffle of the other hosts
                    let mut p = pool;
                    for i in (1..p.len()).rev() {
                        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
                        p.swap(i, j);
                    }
                    p.truncate(*n as usize);
                    p
                }
                Some(Value::Table(tt)) => {
                    let mut r = Rng::stream(seed, StreamId::new(kinds::WORKLOAD, w as u32, 2));
                    draw(&mut t, "senders", tt, &members, Some(dst), &mut r)?
                }
                Some(Value::Array(_)) => {
                    let list = t.opt_str_list("senders")?.unwrap_or_default();
                    let mut v = Vec::new();
                    for n in &list {
                        v.extend(hosts_at(&t, "senders", n)?);
                    }
                    if v.contains(&dst) {
                        return Err(t.err("senders", format!("{list:?}"), "hosts other than dst"));
                    }
                    v
                }
                Some(v) => return Err(t.err("senders", show(v), SENDERS_ALLOWED)),
                None => return Err(t.err("senders", "missing", SENDERS_ALLOWED)),
            };
            let times: Vec<SimTime> = match (t.raw("at"), t.opt_time("period")?) {
                (Some(_), Some(_)) => {
                    return Err(t.err(
                        "period",
                        "given with at",
                        "either at (a list of times) or period",
                    ))
                }
                (Some(Value::Array(a)), None) => a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match v.as_str().map(units::parse_time) {
                        Some(Ok(x)) if x < duration => Ok(x),
                        _ => Err(ScenarioError::new(
                            format!("{}.{i}", t.field("at")),
                            show(v),
                            "a time within the run such as \"1ms\"",
                        )),
                    })
                    .collect::<Res<_>>()?,
                (Some(v), None) => {
                    return Err(t.err("at", show(v), "a list of times such as [\"1ms\", \"5ms\"]"))
                }
                (None, Some(p)) => {
                    if p == 0 {
                        return Err(t.err("period", "\"0s\"", "a period above zero"));
                    }
                    let n = (stop - start).div_ceil(p);
                    if n as usize * senders.len() > MAX_FLOWS {
                        return Err(t.err(
                            "period",
                            units::fmt_time(p),
                            format!("a period giving at most {MAX_FLOWS} flows"),
                        ));
                    }
                    (0..n).map(|k| start + k * p).collect()
                }
                (None, None) => vec![start],
            };
            if let Some(Value::Array(_)) = t.raw("at") {
                t.put(
                    "at",
                    Json::from(
                        times
                            .iter()
                            .map(|&x| units::fmt_time(x))
                            .collect::<Vec<_>>(),
                    ),
                );
            }
            for &at in &times {
                for &s in &senders {
                    flows.push(NewFlow {
                        start: at,
                        src: s,
                        dst,
                        size,
                    });
                }
            }
        }
        flows.sort_by_key(|f| (f.start, f.src));
        let n = flows.len();
        for (k, f) in flows.into_iter().enumerate() {
            let mut e = Table::new();
            e.insert("name".into(), Value::String(format!("{name}.{k}")));
            e.insert("src".into(), Value::String(hosts[f.src].0.clone()));
            e.insert("dst".into(), Value::String(hosts[f.dst].0.clone()));
            let r = rate.unwrap_or(hosts[f.src].1);
            e.insert("rate".into(), Value::String(format!("{r}bps")));
            e.insert("size".into(), Value::String(format!("{}B", f.size)));
            e.insert("start".into(), Value::String(format!("{}ps", f.start)));
            e.insert("frame".into(), Value::String(format!("{frame}B")));
            e.insert("priority".into(), Value::Integer(priority));
            if let Some(tp) = &transport {
                e.insert("transport".into(), Value::String(tp.clone()));
            }
            e.insert("sender".into(), Value::String(sender.clone()));
            out_flows.push(Value::Table(e));
        }
        let mut j = t.finish()?;
        j.insert("generated_flows".into(), Json::from(n));
        resolved.push(Json::Object(j));
        if out_flows.len() > MAX_FLOWS {
            return Err(ScenarioError::new(
                "workloads",
                format!("{} flows", out_flows.len()),
                format!("at most {MAX_FLOWS} flows in all"),
            ));
        }
    }
    Ok(Some((out_flows, Json::Array(resolved))))
}

/// `*` matches any run of characters.
fn glob_match(pat: &str, s: &str) -> bool {
    match pat.split_once('*') {
        None => pat == s,
        Some((head, rest)) => {
            let Some(tail) = s.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| glob_match(rest, &tail[i..]))
        }
    }
}

/// The offered load of the links whose name (`A-B`, either order) matches `glob`, when every
/// sender offers its whole NIC link rate (host load 1) with destination probabilities
/// `dest(src, dst)`: the expected bits per second over them (both directions) divided by their
/// capacity (both directions). Traffic follows the scenario's routing: the shortest path, or
/// an equal split over the equal-cost ports at every switch (ECMP and spraying, in
/// expectation over flows).
fn class_load(
    root: &Table,
    glob: &str,
    senders: &[usize],
    hosts: &[(String, f64)],
    dest: &dyn Fn(usize, usize) -> f64,
) -> Result<f64, String> {
    use super::{Capacity, LinkSpec, NodeKind, NodeSpec};
    let node = |name: String, kind| NodeSpec {
        name,
        kind,
        latency: 0,
        buffer: Capacity::Infinite,
    };
    let mut nodes: Vec<NodeSpec> = hosts
        .iter()
        .map(|(n, _)| node(n.clone(), NodeKind::Host))
        .collect();
    for sw in root
        .get("switches")
        .and_then(|h| h.as_array())
        .into_iter()
        .flatten()
    {
        if let Some(n) = sw.get("name").and_then(|n| n.as_str()) {
            nodes.push(node(n.to_string(), NodeKind::Switch));
        }
    }
    let ix: std::collections::HashMap<String, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.clone(), i))
        .collect();
    let def = root
        .get("defaults")
        .and_then(|d| d.get("link_rate"))
        .and_then(|r| r.as_str())
        .and_then(|s| units::parse_rate(s).ok())
        .unwrap_or(10e9);
    let mut links = Vec::new();
    let mut matched = Vec::new();
    for l in root
        .get("links")
        .and_then(|l| l.as_array())
        .into_iter()
        .flatten()
    {
        let ends: Vec<&str> = l
            .get("between")
            .and_then(|b| b.as_array())
            .map(|b| b.iter().filter_map(|e| e.as_str()).collect())
            .unwrap_or_default();
        let (Some(&a), Some(&b)) = (
            ends.first().and_then(|n| ix.get(*n)),
            ends.get(1).and_then(|n| ix.get(*n)),
        ) else {
            continue; // the scenario's reader reports it
        };
        let rate = l
            .get("rate")
            .and_then(|r| r.as_str())
            .and_then(|s| units::parse_rate(s).ok())
            .unwrap_or(def);
        matched.push(
            glob_match(glob, &format!("{}-{}", ends[0], ends[1]))
                || glob_match(glob, &format!("{}-{}", ends[1], ends[0])),
        );
        links.push(LinkSpec {
            a,
            b,
            rate_bps: rate,
            delay: 0,
            extra_delay: 0,
            buffer: None,
            preamble_bytes: 0,
            ifg_bytes: 0,
            dup: 0,
        });
    }
    if !matched.iter().any(|&m| m) {
        return Err("a pattern matching the name of at least one link, \"A-B\" (\"*\" matches any text, e.g. \"leaf*-spine*\")".into());
    }
    let (limit, budget) = super::routes::document_limit(root);
    let routes = super::routes::build(&nodes, &links, limit, budget).map_err(|e| e.to_string())?;
    let shortest = root
        .get("routing")
        .and_then(|r| r.get("mode"))
        .and_then(|m| m.as_str())
        .is_none_or(|m| m == "shortest");
    let peer = |p: usize| {
        if p % 2 == 0 {
            links[p / 2].b
        } else {
            links[p / 2].a
        }
    };
    let mut bits = vec![0.0f64; links.len() * 2];
    let mut demand = vec![0.0f64; nodes.len()];
    let mut cand = Vec::new();
    // switches with demand towards the current destination, farthest first
    let mut order: std::collections::BinaryHeap<(u16, usize)> = Default::default();
    // `r` bits per second towards host `d` leave by port `p`: the next switch has that much more
    // to forward (queued for its turn the first time)
    let carry = |p: usize,
                 r: f64,
                 d: usize,
                 bits: &mut Vec<f64>,
                 demand: &mut Vec<f64>,
                 order: &mut std::collections::BinaryHeap<(u16, usize)>| {
        bits[p] += r;
        let w = peer(p);
        if w != d {
            if demand[w] == 0.0 {
                if let Some(h) = routes.hops_to(w, d) {
                    order.push((h, w));
                }
            }
            demand[w] += r;
        }
    };
    for d in 0..hosts.len() {
        for &s in senders {
            let r = hosts[s].1 * dest(s, d);
            if r <= 0.0 {
                continue;
            }
            let Some(p) = routes.next(s, d) else {
                continue;
            };
            carry(p, r, d, &mut bits, &mut demand, &mut order);
        }
        // demand only moves towards d (one hop closer each time), so a switch is taken once
        // every switch farther away is done
        while let Some((_, v)) = order.pop() {
            let dv = std::mem::take(&mut demand[v]);
            if shortest {
                cand.clear();
                cand.extend(routes.next(v, d).map(|p| p as u32));
            } else {
                routes.candidates(v, d, &mut cand);
            }
            let share = dv / cand.len().max(1) as f64;
            for &p in &cand {
                carry(p as usize, share, d, &mut bits, &mut demand, &mut order);
            }
        }
    }
    let (mut load, mut cap) = (0.0, 0.0);
    for (l, link) in links.iter().enumerate() {
        if matched[l] {
            load += bits[2 * l] + bits[2 * l + 1];
            cap += 2.0 * link.rate_bps;
        }
    }
    if load <= 0.0 {
        return Err("links that this workload's flows cross".into());
    }
    Ok(load / cap)
}

fn cdf_points(v: &Value) -> Result<Vec<(f64, f64)>, String> {
    let what = "an array of [bytes, probability] pairs";
    let Value::Array(a) = v else {
        return Err(what.into());
    };
    a.iter()
        .map(|p| {
            let num = |x: &Value| x.as_float().or_else(|| x.as_integer().map(|i| i as f64));
            match p.as_array().map(|q| q.as_slice()) {
                Some([x, y]) => match (num(x), num(y)) {
                    (Some(x), Some(y)) => Ok((x, y)),
                    _ => Err(what.into()),
                },
                _ => Err(what.into()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shipped_cdfs_parse_with_their_published_means() {
        // the mean of the piecewise-linear web-search CDF, by hand from its points: 1.71 MB
        let ws = Cdf::shipped("websearch").unwrap();
        let hand = 0.15 * 5000.0
            + 0.05 * 15000.0
            + 0.1 * 25000.0
            + 0.1 * 40000.0
            + 0.13 * 65000.0
            + 0.07 * 140000.0
            + 0.1 * 600000.0
            + 0.1 * 1.5e6
            + 0.1 * 3.5e6
            + 0.07 * 7.5e6
            + 0.03 * 2e7;
        assert!((ws.mean() - hand).abs() < 1e-3, "{} vs {hand}", ws.mean());
        assert!((Cdf::shipped("datamining").unwrap().mean() - 12_658_198.6).abs() < 1.0);
        assert!((Cdf::shipped("hadoop").unwrap().mean() - 120_420.75).abs() < 1e-3);
        for (n, text) in SHIPPED {
            assert!(text.starts_with("# "), "{n} has a source header");
        }
    }

    #[test]
    fn quantiles_interpolate_and_draws_follow_the_cdf() {
        let c = Cdf::new(vec![(0.0, 0.0), (100.0, 0.5), (100.0, 0.8), (1000.0, 1.0)]).unwrap();
        assert_eq!(c.quantile(0.25), 50.0);
        assert_eq!(c.quantile(0.6), 100.0); // the point mass at 100
        assert_eq!(c.quantile(0.9), 550.0);
        let mut rng = Rng::from_seed(5);
        let n = 100_000;
        let draws: Vec<u64> = (0..n).map(|_| c.draw(&mut rng)).collect();
        let frac = |x: u64| draws.iter().filter(|&&d| d <= x).count() as f64 / n as f64;
        assert!((frac(50) - 0.25).abs() < 0.01);
        assert!((frac(100) - 0.8).abs() < 0.01);
        let mean = draws.iter().sum::<u64>() as f64 / n as f64;
        assert!(
            (mean - c.mean()).abs() / c.mean() < 0.02,
            "{mean} vs {}",
            c.mean()
        );
    }

    #[test]
    fn bad_cdfs() {
        // (points, complaint)
        #[rustfmt::skip]
        let cases: &[(&[(f64, f64)], &str)] = &[
            (&[(0.0, 0.0)], "two points"),
            (&[(0.0, 0.1), (10.0, 1.0)], "from 0"),
            (&[(0.0, 0.0), (10.0, 0.9)], "to 1"),
            (&[(0.0, 0.0), (10.0, 0.6), (5.0, 1.0)], "never decrease"),
            (&[(0.0, 0.0), (10.0, 0.6), (20.0, 0.5), (30.0, 1.0)], "never decrease"),
        ];
        for (pts, want) in cases {
            let e = Cdf::new(pts.to_vec()).unwrap_err();
            assert!(e.contains(want), "{pts:?}: {e}");
        }
    }
}
