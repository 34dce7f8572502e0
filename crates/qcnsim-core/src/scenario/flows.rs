//! `[[flows]]`: the traffic sources, their endpoints and their paths (explicit, or routed by
//! `[routing]`).

use super::reader::{Res, TableReader};
use super::{
    multicast, routes, transport, CcMode, FlowSpec, NodeKind, PortIx, RoutingMode, Scenario,
    ScenarioError, Traffic, MAX_FLOW_BYTES,
};
use crate::units;
use serde_json::{Map, Value as Json};
use std::collections::HashMap;

/// `flows.*.sender`: what produces the flow's frames. `"nic"` (the default of a flow with a
/// `size`, a message, and of the flows a workload generates, `workloads.*.sender`) is a NIC
/// sending a message from host memory: a frame waits for room, so nothing is dropped at the
/// sender. `"generator"` (the default of an open-ended flow: a traffic generator, open loop, as
/// the QCN/BCN studies' CBR, Bernoulli and UDP sources are) drops a frame that finds the flow's
/// rate-limiter queue or its NIC's egress queue full (docs/models/network.md, "Senders").
pub(super) fn read_sender(t: &mut TableReader, finite: bool) -> Res<bool> {
    let default = if finite { "nic" } else { "generator" };
    Ok(t.choice("sender", default, &["generator", "nic"])? == "nic")
}

/// `[[flows]]`, into `sc.flows` (`[routing]` is read before).
pub(super) fn read(
    sc: &mut Scenario,
    r: &mut TableReader,
    resolved: &mut Map<String, Json>,
) -> Res<()> {
    let duration = sc.duration;
    let mut flow_json = Vec::new();
    let mut flow_names: HashMap<String, usize> = HashMap::new();
    for (i, mut t) in r.tables("flows")?.into_iter().enumerate() {
        let fname = t.str_or("name", &format!("f{i}"))?;
        if flow_names.insert(fname.clone(), i).is_some() {
            return Err(t.err(
                "name",
                format!("{fname:?}"),
                "a flow name not used by another flow",
            ));
        }
        let src = host_ref(sc, &mut t, "src")?;
        let group = multicast::flow_group(sc, &mut t)?;
        let dst = if group.is_some() {
            usize::MAX
        } else {
            let dst = host_ref(sc, &mut t, "dst")?;
            if src == dst {
                return Err(t.err(
                    "dst",
                    format!("{:?}", sc.nodes[dst].name),
                    "a host other than the source",
                ));
            }
            dst
        };
        let traffic = match t
            .choice("traffic", "cbr", &["cbr", "bernoulli", "poisson", "greedy"])?
            .as_str()
        {
            "cbr" => Traffic::Cbr,
            "bernoulli" => Traffic::Bernoulli,
            "greedy" => Traffic::Greedy,
            _ => Traffic::Poisson,
        };
        // a greedy source's rate defaults to its NIC's link rate (known once the path is)
        let rate_given = if traffic == Traffic::Greedy {
            t.opt_rate("rate")?
        } else {
            Some(t.req_rate("rate")?)
        };
        let frame = t.bytes_or("frame", 1500)?;
        if !(64..=9216).contains(&frame) {
            return Err(t.err(
                "frame",
                format!("\"{frame}B\""),
                "a frame size from 64B to 9216B",
            ));
        }
        let start = t.time_or("start", 0)?;
        // a message (a sized flow) is sent whole by default, also past `duration` in drain mode;
        // an open-ended source stops at `duration` in drain mode (arrivals end there)
        let sized = t.has("size");
        let stop = t.time_or("stop", if sized { sc.max_end() } else { duration })?;
        let stop = if !sized && sc.drain_until.is_some() {
            stop.min(duration)
        } else {
            stop
        };
        if start >= duration || stop <= start {
            return Err(t.err(
                if start >= duration { "start" } else { "stop" },
                format!(
                    "start {} / stop {}",
                    units::fmt_time(start),
                    units::fmt_time(stop)
                ),
                format!(
                    "0 <= start < stop, and start before meta.duration = {}",
                    units::fmt_time(duration)
                ),
            ));
        }
        let priority = t.int_in("priority", 0, 0, 7)? as u8;
        let transport = transport::read_kind(&mut t)?;
        let size_bytes = t.opt_bytes("size")?;
        let holds = read_sender(&mut t, size_bytes.is_some())?;
        if let Some(b) = size_bytes.filter(|&b| b == 0 || b > MAX_FLOW_BYTES) {
            return Err(t.err(
                "size",
                format!("\"{b}B\""),
                format!("a flow size from 1B to {MAX_FLOW_BYTES}B (1 PB)"),
            ));
        }
        let mut tree_parent = Vec::new();
        let hops = t.opt_str_list("path")?;
        let explicit = hops.is_some();
        let path = match hops {
            _ if group.is_some() => {
                let (ports, parent) = multicast::flow_tree(sc, &t, group.unwrap_or(0), src)?;
                tree_parent = parent;
                ports
            }
            Some(hops) => explicit_path(sc, &t, &hops, src, dst)?,
            None if sc.routing.mode == RoutingMode::Ecmp => sc
                .routes
                .ecmp_path(sc, src, dst, routes::flow_key(src, dst, i), &|n| {
                    sc.switch_seed(n)
                })
                .ok_or_else(|| unreachable_dst(sc, &t, src, dst))?,
            None => sc.routes.path(sc, src, dst).ok_or_else(|| {
                t.err(
                    "dst",
                    format!("{:?}", sc.nodes[dst].name),
                    format!(
                        "a host reachable from {:?} through the links and switches",
                        sc.nodes[src].name
                    ),
                )
            })?,
        };
        let nic_rate = sc.links[path[0] / 2].rate_bps;
        let rate_bps = rate_given.unwrap_or_else(|| {
            t.put("rate", Json::String(units::fmt_rate(nic_rate)));
            nic_rate
        });
        if rate_bps > nic_rate {
            return Err(t.err(
                "rate",
                format!("{:?}", units::fmt_rate(rate_bps)),
                format!(
                    "an offered rate up to the source's NIC link rate {}",
                    units::fmt_rate(nic_rate)
                ),
            ));
        }
        sc.flows.push(FlowSpec {
            name: fname,
            src,
            dst,
            traffic,
            rate_bps,
            frame_bytes: frame as u32,
            start,
            stop,
            size_bytes,
            path,
            group,
            spray: sc.routing.mode == RoutingMode::Spray && group.is_none() && !explicit,
            tree_parent,
            priority,
            transport,
            explicit_path: explicit,
            holds,
        });
        transport::check_flow(&t, &sc.flows[sc.flows.len() - 1])?;
        flow_json.push(Json::Object(t.finish()?));
    }
    resolved.insert("flows".into(), Json::Array(flow_json));
    Ok(())
}

fn unreachable_dst(sc: &Scenario, t: &TableReader, src: usize, dst: usize) -> ScenarioError {
    t.err(
        "dst",
        format!("{:?}", sc.nodes[dst].name),
        format!(
            "a host reachable from {:?} through the links and switches",
            sc.nodes[src].name
        ),
    )
}

fn host_ref(sc: &Scenario, t: &mut TableReader, key: &'static str) -> Res<usize> {
    let n = t.req_str(key)?;
    match sc.node_index.get(&n) {
        Some(&i) if sc.nodes[i].kind == NodeKind::Host => Ok(i),
        _ => {
            let mut hosts: Vec<&str> = sc
                .nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Host)
                .map(|h| h.name.as_str())
                .collect();
            if hosts.len() > 12 {
                hosts.truncate(12);
                hosts.push("...");
            }
            Err(t.err(
                key,
                format!("{n:?}"),
                format!("the name of a host ({})", hosts.join(", ")),
            ))
        }
    }
}

fn explicit_path(
    sc: &Scenario,
    t: &TableReader,
    hops: &[String],
    src: usize,
    dst: usize,
) -> Res<Vec<PortIx>> {
    let field = t.field("path");
    let mut ids = Vec::new();
    for (i, h) in hops.iter().enumerate() {
        let id = sc.nodes.iter().position(|n| &n.name == h).ok_or_else(|| {
            ScenarioError::new(
                format!("{field}.{i}"),
                format!("{h:?}"),
                "the name of a host or switch",
            )
        })?;
        ids.push(id);
    }
    if ids.first() != Some(&src) || ids.last() != Some(&dst) {
        return Err(ScenarioError::new(
            field,
            format!("{hops:?}"),
            "a node list from the flow's src to its dst",
        ));
    }
    let mut ports = Vec::new();
    for (i, w) in ids.windows(2).enumerate() {
        if i > 0 && sc.nodes[w[0]].kind == NodeKind::Host {
            return Err(ScenarioError::new(
                format!("{field}.{i}"),
                format!("{:?}", sc.nodes[w[0]].name),
                "a switch (hosts do not forward)",
            ));
        }
        let p = (0..sc.n_ports())
            .find(|&p| sc.port_ends(p) == (w[0], w[1]))
            .ok_or_else(|| {
                ScenarioError::new(
                    format!("{field}.{}", i + 1),
                    format!("{:?}", sc.nodes[w[1]].name),
                    format!("a node linked to {:?}", sc.nodes[w[0]].name),
                )
            })?;
        ports.push(p);
    }
    Ok(ports)
}

/// A source that waits for room in its rate-limiter queue (a greedy source, or a NIC holding a
/// message) must fit one frame in it, or it would wait for ever.
pub(super) fn check_waiting(sc: &Scenario) -> Res<()> {
    let (key, cap) = match sc.cc {
        CcMode::Bcn => ("cc.bcn.rp.rl_queue", sc.bcn.rl_queue_bytes),
        CcMode::Dcqcn => ("cc.dcqcn.rp.rl_queue", sc.dcqcn.rl_queue_bytes),
        CcMode::Dctcp => ("cc.dctcp.rl_queue", sc.dctcp.rl_queue_bytes),
        CcMode::Hpcc => ("cc.hpcc.rl_queue", sc.hpcc.rl_queue_bytes),
        _ => ("cc.qcn.rp.rl_queue", sc.qcn.rl_queue_bytes),
    };
    for f in &sc.flows {
        if (f.traffic == Traffic::Greedy || f.holds) && (f.frame_bytes as u64) > cap {
            return Err(ScenarioError::new(
                key,
                format!("\"{cap}B\""),
                format!(
                    "at least one frame of flow {:?} ({}B): its sender waits for room in the \
                     rate-limiter queue (traffic = \"greedy\" or sender = \"nic\")",
                    f.name, f.frame_bytes
                ),
            ));
        }
    }
    Ok(())
}
