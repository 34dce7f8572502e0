//! `[flow_control]`: link-level flow control (802.3x PAUSE, 802.1Qbb PFC). See
//! docs/models/pause.md and the `flow_control.*` rows of docs/parameters.md.

use super::params::{self, spec, FC};
use super::reader::{show, Res, TableReader};
use super::{Capacity, NodeKind, PortIx, Scenario};
use crate::proto::pause::{self, LinkHeadroom};
use crate::scenario::ScenarioError;
use crate::units::{self, SimTime};
use serde_json::Value as Json;
use toml::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FcMode {
    None,
    /// 802.3x PAUSE: one class, the whole link stops.
    Pause,
    /// 802.1Qbb PFC: per priority, one data queue per priority.
    Pfc,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatermarkMode {
    /// Bytes held by the switch that arrived on each input port; pauses that input.
    Ingress,
    /// Each egress queue; pauses the input ports that feed it.
    Egress,
    /// The switch's whole memory; pauses every input port.
    Global,
}

impl WatermarkMode {
    pub fn name(self) -> &'static str {
        match self {
            WatermarkMode::Ingress => "ingress",
            WatermarkMode::Egress => "egress",
            WatermarkMode::Global => "global",
        }
    }
}

#[derive(Debug, Clone)]
pub struct FlowControlSpec {
    pub mode: FcMode,
    pub watermark: WatermarkMode,
    pub xoff_bytes: u64,
    pub xon_bytes: u64,
    pub pause_quanta: u32,
    /// Refresh interval as a fraction of the pause time.
    pub refresh: f64,
    pub xon_only: bool,
    /// `None`: the 802.3 31B.3.7 maximum for each link's rate.
    pub response_delay: Option<SimTime>,
    /// Data queues per port (1 unless PFC).
    pub queues: usize,
    /// PFC: lossless (PFC-enabled) priorities; PAUSE: `[true]`.
    pub lossless: Vec<bool>,
    /// Queue class of CNMs (PFC); 0 with PAUSE.
    pub cnm_priority: usize,
    /// Per node: the switch generates flow-control frames.
    pub switches: Vec<bool>,
    /// Deadlock detection time (`None`: off).
    pub deadlock_detect: Option<SimTime>,
    /// PFC watchdog: detection and restoration times (`None`: off).
    pub watchdog: Option<SimTime>,
    pub watchdog_restore: SimTime,
}

impl FlowControlSpec {
    pub fn off() -> FlowControlSpec {
        FlowControlSpec {
            mode: FcMode::None,
            watermark: WatermarkMode::Ingress,
            xoff_bytes: 130_000,
            xon_bytes: 110_000,
            pause_quanta: pause::MAX_QUANTA,
            refresh: 0.5,
            xon_only: false,
            response_delay: None,
            queues: 1,
            lossless: vec![true],
            cnm_priority: 0,
            switches: Vec::new(),
            deadlock_detect: None,
            watchdog: None,
            watchdog_restore: 200 * units::MS,
        }
    }

    pub fn is_on(&self) -> bool {
        self.mode != FcMode::None
    }

    /// Number of flow-control classes (queues): 8 (or `queues`) with PFC, else 1.
    pub fn classes(&self) -> usize {
        if self.mode == FcMode::Pfc {
            self.queues
        } else {
            1
        }
    }

    /// Queue class of a flow of 802.1p priority `priority`.
    pub fn class_of(&self, priority: u8) -> usize {
        if self.mode == FcMode::Pfc {
            priority as usize
        } else {
            0
        }
    }

    pub fn n_lossless(&self) -> usize {
        self.lossless.iter().filter(|&&l| l).count()
    }

    /// Response delay of a receiver on a link of `rate_bps`.
    pub fn response_ps(&self, rate_bps: f64) -> SimTime {
        self.response_delay
            .unwrap_or_else(|| pause::quanta_to_ps(pause::response_quanta_8023(rate_bps), rate_bps))
    }

    /// The pause time a PAUSE frame carries on a link of `rate_bps`.
    pub fn pause_ps(&self, rate_bps: f64) -> SimTime {
        pause::quanta_to_ps(self.pause_quanta, rate_bps)
    }

    /// Refresh interval on a link of `rate_bps`.
    pub fn refresh_ps(&self, rate_bps: f64) -> SimTime {
        units::round_ps(self.refresh * self.pause_ps(rate_bps) as f64).max(1)
    }
}

/// What the headroom computations need of the flows and the ports, gathered in one pass over
/// the flows' paths and one over the ports (instead of a scan of every flow per port and of
/// every port per switch): per port the largest data frame through it and its feeders, per
/// node its input and output ports in port order.
pub struct PortFlows {
    data_max: Vec<u32>,
    feed_start: Vec<u32>,
    feed: Vec<PortIx>,
    in_start: Vec<u32>,
    ins: Vec<PortIx>,
    out_start: Vec<u32>,
    outs: Vec<PortIx>,
    /// Largest and smallest data frame of any flow (1500 B and 64 B when there are none).
    pub max_frame: u32,
    pub min_frame: u32,
}

impl PortFlows {
    pub fn new(sc: &Scenario) -> PortFlows {
        let np = sc.n_ports();
        let n = sc.nodes.len();
        let mut data_max = vec![0u32; np];
        let mut pairs: Vec<(PortIx, PortIx)> = Vec::new();
        for f in &sc.flows {
            for (h, &p) in f.path.iter().enumerate() {
                data_max[p] = data_max[p].max(f.frame_bytes);
                if h > 0 {
                    let prev = if f.tree_parent.is_empty() {
                        h - 1
                    } else {
                        f.tree_parent[h] as usize
                    };
                    pairs.push((p, f.path[prev]));
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut feed_start = vec![0u32; np + 1];
        for &(e, _) in &pairs {
            feed_start[e + 1] += 1;
        }
        for e in 0..np {
            feed_start[e + 1] += feed_start[e];
        }
        let feed = pairs.into_iter().map(|(_, i)| i).collect();
        let csr = |key: &dyn Fn(PortIx) -> usize| {
            let mut start = vec![0u32; n + 1];
            for p in 0..np {
                start[key(p) + 1] += 1;
            }
            for v in 0..n {
                start[v + 1] += start[v];
            }
            let mut fill = start.clone();
            let mut list = vec![0; np];
            for p in 0..np {
                let k = key(p);
                list[fill[k] as usize] = p;
                fill[k] += 1;
            }
            (start, list)
        };
        let (in_start, ins) = csr(&|p| sc.port_ends(p).1);
        let (out_start, outs) = csr(&|p| sc.port_ends(p).0);
        PortFlows {
            data_max,
            feed_start,
            feed,
            in_start,
            ins,
            out_start,
            outs,
            max_frame: max_frame(sc),
            min_frame: sc.flows.iter().map(|f| f.frame_bytes).min().unwrap_or(64),
        }
    }

    /// The feeders of egress port `e` (as [`feeders`]).
    pub fn feeders(&self, e: PortIx) -> &[PortIx] {
        &self.feed[self.feed_start[e] as usize..self.feed_start[e + 1] as usize]
    }

    /// The ports that transmit into node `n` (as [`input_ports`]).
    pub fn input_ports(&self, n: usize) -> &[PortIx] {
        &self.ins[self.in_start[n] as usize..self.in_start[n + 1] as usize]
    }

    /// The ports node `n` transmits on, in port order.
    pub fn output_ports(&self, n: usize) -> &[PortIx] {
        &self.outs[self.out_start[n] as usize..self.out_start[n + 1] as usize]
    }
}

/// Largest data frame of any flow (1500 B when there are none).
pub fn max_frame(sc: &Scenario) -> u32 {
    sc.flows.iter().map(|f| f.frame_bytes).max().unwrap_or(1500)
}

/// Largest frame sent on port `p`: data frames of flows through it, CNMs (when QCN is on and
/// the port belongs to a switch) and flow-control frames (when it faces a switch that sends
/// them), at least 64 B.
pub fn port_max_frame(sc: &Scenario, p: PortIx) -> u32 {
    let data = sc
        .flows
        .iter()
        .filter(|f| f.path.contains(&p))
        .map(|f| f.frame_bytes)
        .max()
        .unwrap_or(0);
    with_control_frames(sc, p, data)
}

/// [`port_max_frame`] from the data frames' maximum `data` on port `p`.
fn with_control_frames(sc: &Scenario, p: PortIx, data: u32) -> u32 {
    let cnm = if sc.cc == super::CcMode::Qcn && sc.is_switch_port(p) {
        sc.qcn.cnm_bytes
    } else if sc.cc == super::CcMode::Dcqcn {
        // CNPs leave receivers and cross switches
        sc.dcqcn.cnp_bytes
    } else {
        0
    };
    data.max(cnm).max(pause::FRAME_BYTES)
}

/// The ports that transmit into node `n` (its input ports).
pub fn input_ports(sc: &Scenario, n: usize) -> Vec<PortIx> {
    (0..sc.n_ports())
        .filter(|&p| sc.port_ends(p).1 == n)
        .collect()
}

/// The input ports of the switch that carry a flow into egress port `e` (its feeders); for a
/// multicast flow, the tree parent's port of each tree node at `e`.
pub fn feeders(sc: &Scenario, e: PortIx) -> Vec<PortIx> {
    let mut v: Vec<PortIx> = Vec::new();
    for f in &sc.flows {
        for h in 1..f.path.len() {
            if f.path[h] == e {
                let prev = if f.tree_parent.is_empty() {
                    h - 1
                } else {
                    f.tree_parent[h] as usize
                };
                v.push(f.path[prev]);
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Headroom bound of input link `i` (port `i` transmits into a switch that sends flow control).
pub fn link_headroom(sc: &Scenario, i: PortIx) -> LinkHeadroom {
    link_headroom_in(sc, &PortFlows::new(sc), i)
}

/// [`link_headroom`] with the flows' per-port facts gathered once in `pf`.
pub fn link_headroom_in(sc: &Scenario, pf: &PortFlows, i: PortIx) -> LinkHeadroom {
    let link = &sc.links[i / 2];
    let (_, sw) = sc.port_ends(i);
    let fc = &sc.fc;
    // the switch's port back to the sender may be shaped below the link rate: the PAUSE and the
    // frame it waits for are serialised at its lowest scheduled rate (docs/models/pause.md)
    let reverse_rate_bps = sc
        .schedule
        .iter()
        .filter(|s| s.port == i ^ 1)
        .map(|s| s.rate_bps)
        .fold(link.rate_bps, f64::min);
    LinkHeadroom {
        rate_bps: link.rate_bps,
        reverse_rate_bps,
        prop_ps: link.delay + link.extra_delay,
        latency_ps: sc.nodes[sw].latency,
        response_ps: fc.response_ps(link.rate_bps),
        sender_max_frame: with_control_frames(sc, i, pf.data_max[i]),
        reverse_max_frame: with_control_frames(sc, i ^ 1, pf.data_max[i ^ 1]),
        other_fc_frames: fc.n_lossless().saturating_sub(1) as u32,
        overhead_bytes: link.preamble_bytes + link.ifg_bytes,
    }
}

/// Bytes above XOFF that egress queue `e` of a flow-control switch needs so that no lossless
/// frame is dropped there, whatever the offered load (docs/models/pause.md, "Headroom"). Only
/// the input ports that carry flows into `e` (its feeders) can fill it:
/// - egress and global watermarks: when the watermark crosses, the occupancy exceeds XOFF by
///   at most one frame; after that each feeder delivers at most its headroom bound;
/// - ingress watermarks: each feeder may hold up to XOFF + one frame + its bound, all of it
///   possibly in `e`: `e` needs `n * (frame + XOFF) + sum of bounds - XOFF` above XOFF.
pub fn needed_headroom(sc: &Scenario, e: PortIx) -> u64 {
    let pf = PortFlows::new(sc);
    let feeders = pf.feeders(e);
    let mf = pf.max_frame as u64;
    let bounds: u64 = feeders
        .iter()
        .map(|&i| pause::headroom_bound(&link_headroom_in(sc, &pf, i)))
        .sum();
    match sc.fc.watermark {
        WatermarkMode::Egress | WatermarkMode::Global => mf + bounds,
        WatermarkMode::Ingress => {
            let n = feeders.len() as u64;
            n * mf + bounds + n.saturating_sub(1) * sc.fc.xoff_bytes
        }
    }
}

/// Whether a refresh always reaches input link `i`'s sender before the pause it renews expires:
/// refresh interval + the wait for a frame in progress and the flow-control frames ahead + the
/// response delay must not exceed the pause time. (Always true with `xon_only`.)
pub fn refresh_in_time(sc: &Scenario, i: PortIx) -> bool {
    let fc = &sc.fc;
    if fc.xon_only {
        return true;
    }
    let h = link_headroom(sc, i);
    let frames = 2 + h.other_fc_frames as u64; // the reverse frame, the PAUSE, PFC frames ahead
    let wait = units::tx_time_f(
        h.reverse_max_frame as u64
            + pause::FRAME_BYTES as u64 * (frames - 1)
            + h.overhead_bytes as u64 * frames,
        h.reverse_rate_bps,
    );
    fc.refresh_ps(h.rate_bps) + wait + h.response_ps <= fc.pause_ps(h.rate_bps)
}

/// Parse `[flow_control]` (after `[[flows]]` and `[cc]`).
pub fn parse(sc: &Scenario, t: &mut TableReader) -> Res<FlowControlSpec> {
    let mut fc = FlowControlSpec::off();
    fc.mode = match params::read_choice(t, spec(FC, "mode"))?.as_str() {
        "pause" => FcMode::Pause,
        "pfc" => FcMode::Pfc,
        _ => FcMode::None,
    };
    fc.watermark = match params::read_choice(t, spec(FC, "watermark"))?.as_str() {
        "egress" => WatermarkMode::Egress,
        "global" => WatermarkMode::Global,
        _ => WatermarkMode::Ingress,
    };
    fc.xoff_bytes = params::read_bytes(t, spec(FC, "xoff"))?;
    fc.xon_bytes = params::read_bytes(t, spec(FC, "xon"))?;
    if fc.xon_bytes >= fc.xoff_bytes {
        return Err(t.err(
            "xon",
            format!("\"{}B\"", fc.xon_bytes),
            format!(
                "a resume threshold below flow_control.xoff = {}B (XON < XOFF)",
                fc.xoff_bytes
            ),
        ));
    }
    fc.pause_quanta = params::read_int(t, spec(FC, "pause_quanta"))? as u32;
    fc.refresh = params::read_f64(t, spec(FC, "refresh"))?;
    fc.xon_only = params::read_bool(t, spec(FC, "xon_only"))?;
    fc.response_delay = t.opt_time("response_delay")?;
    if fc.response_delay.is_none() {
        t.put("response_delay", Json::String("802.3".into()));
    }
    let queues = params::read_int(t, spec(FC, "queues"))? as usize;
    let prio_path = t.field("priorities");
    let prios: Vec<usize> = match t.raw("priorities") {
        None => (0..queues).collect(),
        Some(Value::Array(items)) => {
            let mut v = Vec::new();
            for (k, it) in items.iter().enumerate() {
                match it {
                    Value::Integer(p) if (0..queues as i64).contains(p) => v.push(*p as usize),
                    other => {
                        return Err(ScenarioError::new(
                            format!("{prio_path}.{k}"),
                            show(other),
                            format!(
                                "a priority that has a queue: a whole number from 0 to {} \
                                 (flow_control.queues = {queues})",
                                queues - 1
                            ),
                        ))
                    }
                }
            }
            v
        }
        Some(v) => {
            return Err(ScenarioError::new(
                prio_path,
                show(v),
                "a list of priorities, e.g. [3, 4]",
            ))
        }
    };
    t.put("priorities", Json::from(prios.clone()));
    let cnm_priority = match t.opt_int("cnm_priority")? {
        None => {
            t.put("cnm_priority", Json::from(queues as i64 - 1));
            queues - 1
        }
        Some(p) if (0..queues as i64).contains(&p) => p as usize,
        Some(p) => {
            return Err(t.err(
                "cnm_priority",
                p.to_string(),
                format!(
                    "a priority that has a queue: a whole number from 0 to {} \
                     (flow_control.queues = {queues})",
                    queues - 1
                ),
            ))
        }
    };
    if fc.mode == FcMode::Pfc {
        fc.queues = queues;
        fc.lossless = vec![false; queues];
        for p in prios {
            fc.lossless[p] = true;
        }
        fc.cnm_priority = cnm_priority;
        for (k, f) in sc.flows.iter().enumerate() {
            if f.priority as usize >= queues {
                return Err(ScenarioError::new(
                    format!("flows.{k}.priority"),
                    f.priority.to_string(),
                    format!(
                        "a priority that has a queue: 0 to {} (flow_control.queues = {queues})",
                        queues - 1
                    ),
                ));
            }
        }
    }

    // switches that send flow control
    fc.switches = switch_set(sc, t, "switches")?;
    fc.deadlock_detect = params::read_time_or_off(t, spec(FC, "deadlock_detection"))?;
    fc.watchdog = params::read_time_or_off(t, spec(FC, "watchdog"))?;
    fc.watchdog_restore = params::read_time(t, spec(FC, "watchdog_restore"))?;
    Ok(fc)
}

/// A set of switches given as `"all"` (the default) or a list of switch names; per node.
pub fn switch_set(sc: &Scenario, t: &mut TableReader, key: &'static str) -> Res<Vec<bool>> {
    let n = sc.nodes.len();
    let sw_path = t.field(key);
    let all = || -> Vec<bool> {
        (0..n)
            .map(|i| sc.nodes[i].kind == NodeKind::Switch)
            .collect()
    };
    Ok(match t.raw(key) {
        None => {
            t.put(key, Json::String("all".into()));
            all()
        }
        Some(Value::String(s)) if s == "all" => all(),
        Some(Value::Array(items)) => {
            let mut sel = vec![false; n];
            for (k, it) in items.iter().enumerate() {
                let idx = match it {
                    Value::String(s) => sc
                        .nodes
                        .iter()
                        .position(|nd| &nd.name == s && nd.kind == NodeKind::Switch),
                    _ => None,
                };
                match idx {
                    Some(i) => sel[i] = true,
                    None => {
                        return Err(ScenarioError::new(
                            format!("{sw_path}.{k}"),
                            show(it),
                            format!("the name of a switch ({})", switch_names(sc)),
                        ))
                    }
                }
            }
            t.put(
                key,
                Json::from(
                    (0..n)
                        .filter(|&i| sel[i])
                        .map(|i| sc.nodes[i].name.clone())
                        .collect::<Vec<_>>(),
                ),
            );
            sel
        }
        Some(v) => {
            return Err(ScenarioError::new(
                sw_path,
                show(v),
                format!("\"all\" or a list of switch names ({})", switch_names(sc)),
            ))
        }
    })
}

fn switch_names(sc: &Scenario) -> String {
    sc.nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Switch)
        .map(|n| n.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks that need the whole scenario: every egress queue of a switch that sends flow control
/// must leave at least one frame of headroom above XOFF.
pub fn check(sc: &Scenario) -> Res<()> {
    let fc = &sc.fc;
    if !fc.is_on() {
        return Ok(());
    }
    let mf = max_frame(sc) as u64;
    for e in 0..sc.n_ports() {
        let (sw, _) = sc.port_ends(e);
        if !fc.switches[sw] {
            continue;
        }
        let cap = match sc.queue_limit(e) {
            Capacity::Bytes(b) => b,
            Capacity::Frames(n) => n * mf,
            Capacity::Infinite | Capacity::Shared => continue,
        };
        if cap < fc.xoff_bytes + mf {
            return Err(ScenarioError::new(
                "flow_control.xoff",
                format!("\"{}B\"", fc.xoff_bytes),
                format!(
                    "a pause threshold at least one frame ({mf} B) below the buffer of port {:?} \
                     ({} = {cap} B): headroom above XOFF smaller than one frame \
                     (the bound for no loss is {} B, see docs/models/pause.md)",
                    sc.port_name(e),
                    sc.queue_limit(e).describe(),
                    needed_headroom(sc, e)
                ),
            ));
        }
    }
    Ok(())
}
