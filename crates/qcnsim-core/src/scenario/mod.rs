//! Scenario files: parsing, validation with field paths, and the resolved scenario model that
//! the simulator is built from. See docs/scenario.md for the file format.

pub mod budget;
pub mod buffer;
pub mod dcqcn;
pub mod expand;
pub mod flow_control;
pub mod fluid;
pub mod multicast;
pub mod params;
pub mod reader;
pub mod routes;
pub mod sweep;
pub mod topology;
pub mod transport;
pub mod workload;

mod error;
use crate::proto::bcn::{BcnCpParams, BcnRpParams};
use crate::proto::multicast::McFeedback;
use crate::proto::nic_fb::{Feedback, NicFbParams};
use crate::proto::qcn_cp::CpParams;
use crate::proto::qcn_rp::RpParams;
use crate::units::{self, SimTime};
pub use error::ScenarioError;
use flow_control::FlowControlSpec;
use reader::{show, Res, TableReader};
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;
use toml::Value;

pub use routes::Routes;

/// Capacity of a queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Capacity {
    Bytes(u64),
    Frames(u64),
    Infinite,
    /// The port's switch has a shared memory (`[shared_buffer]`, docs/models/buffer.md): its
    /// admission decides, not a per-port size. Never parsed; [`Scenario::port_capacity`]
    /// returns it.
    Shared,
}

impl Capacity {
    pub fn parse(s: &str) -> Result<Capacity, String> {
        const HELP: &str =
            "a size such as \"150KB\", a frame count such as \"100frames\", or \"infinite\"";
        let s = s.trim();
        if s == "infinite" {
            return Ok(Capacity::Infinite);
        }
        if let Some(n) = s.strip_suffix("frames").or_else(|| s.strip_suffix("frame")) {
            return match n.trim().parse::<u64>() {
                Ok(n) if n > 0 => Ok(Capacity::Frames(n)),
                _ => Err(HELP.to_string()),
            };
        }
        match units::parse_bytes(s) {
            Ok(b) if b > 0 => Ok(Capacity::Bytes(b)),
            _ => Err(HELP.to_string()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Capacity::Bytes(b) => format!("{b}B"),
            Capacity::Frames(n) => format!("{n}frames"),
            Capacity::Infinite => "infinite".to_string(),
            Capacity::Shared => "shared".to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Debug, Clone)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
    /// Switch forwarding latency (from full reception to the egress queue).
    pub latency: SimTime,
    /// Egress queue capacity of this node's ports (switch buffer, or host NIC queue).
    pub buffer: Capacity,
}

#[derive(Debug, Clone)]
pub struct LinkSpec {
    pub a: usize,
    pub b: usize,
    pub rate_bps: f64,
    /// One-way propagation delay.
    pub delay: SimTime,
    /// One-way extra delay line, added to the propagation delay.
    pub extra_delay: SimTime,
    /// Egress buffer override for both ends.
    pub buffer: Option<Capacity>,
    /// Bytes on the wire before every frame (preamble + SFD; 8 in Ethernet, 0 by default).
    pub preamble_bytes: u32,
    /// Idle bytes after every frame before the next may start (inter-frame gap; 12 in Ethernet,
    /// 0 by default).
    pub ifg_bytes: u32,
    /// The number of earlier links between the same two nodes (parallel links: the port name
    /// gets the suffix `#dup`).
    pub dup: u32,
}

/// A port is one direction of a link: `link * 2` transmits from `a` to `b`, `link * 2 + 1`
/// from `b` to `a`.
pub type PortIx = usize;

#[derive(Debug, Clone)]
pub struct ScheduleSpec {
    pub at: SimTime,
    pub port: PortIx,
    pub rate_bps: f64,
}

/// A link fails (`up = false`) or recovers at `at` (`[[schedule]]` with `link` and `state`;
/// docs/models/topology.md, "Link failures").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkEvent {
    pub at: SimTime,
    pub link: usize,
    pub up: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Traffic {
    /// Constant bit rate: one frame every `frame*8/rate`.
    Cbr,
    /// One Bernoulli trial per frame slot (the frame's time at the NIC link rate) with
    /// probability `rate / link rate`.
    Bernoulli,
    /// Poisson frame arrivals with mean rate `rate`.
    Poisson,
    /// Always backlogged: frames one frame time at `rate` (default the NIC link rate) apart,
    /// but the source waits rather than losing a frame at its full rate-limiter queue
    /// (docs/models/network.md#traffic-sources).
    Greedy,
}

#[derive(Debug, Clone)]
pub struct FlowSpec {
    pub name: String,
    pub src: usize,
    pub dst: usize,
    pub traffic: Traffic,
    pub rate_bps: f64,
    pub frame_bytes: u32,
    pub start: SimTime,
    pub stop: SimTime,
    /// Finite flow size in bytes (for flow completion time); `None` = unbounded.
    pub size_bytes: Option<u64>,
    /// Egress ports along the path, starting with the source NIC. For a multicast flow: the
    /// nodes of its distribution tree in breadth-first order (node 0 = the source NIC port).
    pub path: Vec<PortIx>,
    /// Multicast flow: the group it is addressed to (then `dst` is `usize::MAX`).
    pub group: Option<usize>,
    /// Multicast flow: the parent tree node of each `path` entry (`u32::MAX` for node 0);
    /// empty for a unicast flow.
    pub tree_parent: Vec<u32>,
    /// IEEE 802.1p priority (0..7): the PFC queue class; ignored without PFC.
    pub priority: u8,
    /// Per-packet spraying (`routing.mode = "spray"`, no explicit path): every data frame picks
    /// an equal-cost port at random at each switch; `path` holds the shortest path.
    pub spray: bool,
    /// Open loop (`udp`) or go-back-N (`gbn`, finite unicast flows; docs/models/transport.md).
    pub transport: transport::Transport,
    /// The path was written in the scenario (`flows.*.path`).
    pub explicit_path: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcMode {
    None,
    Qcn,
    Bcn,
    /// DCQCN (docs/models/dcqcn.md): ECN marking, a notification point at each receiver and
    /// QCN's reaction point with its DCQCN options.
    Dcqcn,
}

#[derive(Debug, Clone)]
pub struct QcnSpec {
    pub cp: CpParams,
    /// RP parameters; `line_rate_bps` is filled in per flow from its NIC link.
    pub rp: RpParams,
    pub cnm_bytes: u32,
    /// Rate-limiter queue per flow, bytes.
    pub rl_queue_bytes: u64,
    /// Token-bucket depth of the rate limiter; `None` = one frame of the flow (smooth pacing).
    pub rl_burst_bytes: Option<u64>,
    /// Switch egress ports that run a CP.
    pub cp_ports: Vec<bool>,
    /// CNM generation and use for multicast flows (unicast flows always use standard QCN).
    pub multicast_feedback: McFeedback,
    /// `cc.qcn.multicast_fbhat_hold`: F̂b is forgotten this long after the last CNM (0 = never).
    pub multicast_fbhat_hold_ps: SimTime,
    /// BA sensor, SONAR and path-based push-back (docs/models/qcn-transient.md).
    pub transient: TransientSpec,
    /// Where Fb is computed (`cc.qcn.feedback`).
    pub feedback: Feedback,
    /// NIC-side feedback parameters (`[cc.qcn.nic]`), used with `Feedback::Nic`.
    pub nic: NicFbParams,
}

/// The transient-response options of QCN (all off by default).
#[derive(Debug, Clone, Default)]
pub struct TransientSpec {
    /// BA sensor parameters when a BA sensor runs at every CP (BA enabled, SONAR or push-back).
    pub ba: Option<crate::proto::qcn_ba::BaParams>,
    /// SONAR, when enabled.
    pub sonar: Option<params::SonarSpec>,
    /// Path-based push-back (Fb99) is on.
    pub pushback: bool,
}

#[derive(Debug, Clone)]
pub struct BcnSpec {
    pub cp: BcnCpParams,
    /// Regulator parameters; `line_rate_bps` is filled in per flow from its NIC link.
    pub rp: BcnRpParams,
    /// Size of a BCN message frame.
    pub msg_bytes: u32,
    /// Rate-limiter queue per flow, bytes.
    pub rl_queue_bytes: u64,
    /// Token-bucket depth of the rate limiter; `None` = one frame of the flow.
    pub rl_burst_bytes: Option<u64>,
    /// Switch egress ports that run a BCN CP (`cp_ports` minus the ports of the switches in
    /// `detection_off`).
    pub cp_ports: Vec<bool>,
}

#[derive(Debug, Clone)]
pub struct MetricsSpec {
    pub throughput_bin: SimTime,
    pub throughput_ports: Vec<bool>,
    pub queue_interval: SimTime,
    pub queue_ports: Vec<bool>,
    /// Per node: sample the switch's memory (the bytes in all its egress data queues).
    pub memory_switches: Vec<bool>,
    pub rate_interval: SimTime,
    pub record_cnm_sent: bool,
    pub record_cnm_received: bool,
    pub record_drops: bool,
    /// Bit k set: record events of kind `EVENT_KINDS[k]`.
    pub record_mask: u32,
    /// Record drops at switch queues only (`"switch_drop"`; implied by `"drop"`).
    pub record_switch_drops: bool,
    /// Record the `pause_events` table (`"pause"`).
    pub record_pause: bool,
    pub max_event_rows: usize,
    /// Sample `host_queues` (default: with flow control on).
    pub host_queues: bool,
}

/// The kinds of rows of the `events` table (the choices of `metrics.events`), in the
/// simulator's code order. The last two only select: `"switch_drop"` records drops at switch
/// queues only (rows of kind `"drop"`), `"pause"` records the `pause_events` table.
pub const EVENT_KINDS: &[&str] = &[
    "cnm_sent",
    "cnm_received",
    "drop",
    "ba_change",
    "sonar_special_sent",
    "sonar_echo_sent",
    "sonar_echo_received",
    "sonar_short_fuse",
    "fb99_sent",
    "fb99_received",
    "bcn_sent",
    "bcn_received",
    "bcn0_sent",
    "bcn0_received",
    "switch_drop",
    "pause",
];

#[derive(Debug, Clone)]
pub struct AnalysisSpec {
    pub bottleneck: Option<PortIx>,
    pub recovery_fraction: f64,
    /// Statistics window of the multicast metrics, [from, to).
    pub stats_from: SimTime,
    pub stats_to: SimTime,
    /// Downward transient time (docs/models/qcn-transient.md): after each fall of the
    /// bottleneck's service rate to C, the time until the aggregate sending rate of the flows
    /// through it stays at or below `downward_factor * C`. None: not computed.
    pub downward_factor: Option<f64>,
    /// Report the throughput lost by flows that do not cross the bottleneck (victim flows of
    /// congestion spreading; docs/models/buffer.md).
    pub victims: bool,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub duration: SimTime,
    pub seed: u64,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    pub schedule: Vec<ScheduleSpec>,
    /// Link failures and recoveries, in time order (empty: every link up all the run).
    pub link_events: Vec<LinkEvent>,
    pub flows: Vec<FlowSpec>,
    pub groups: Vec<multicast::GroupSpec>,
    pub cc: CcMode,
    /// `cc.feedback_latency`: from a CP's decision to send a feedback message to the message
    /// entering the CP switch's control queue (0 = at once).
    pub feedback_latency: SimTime,
    /// `cc.rl_start`: a newly allocated rate limiter's token bucket starts full (true) or empty.
    pub rl_start_full: bool,
    /// `cc.feedback_route = "reverse"`: feedback messages travel back along the reverse of
    /// their flow's data path (or tree) instead of the shortest path to the source.
    pub feedback_reverse: bool,
    pub qcn: QcnSpec,
    pub bcn: BcnSpec,
    pub dcqcn: dcqcn::DcqcnSpec,
    /// `[transport]`: the go-back-N parameters (docs/models/transport.md).
    pub transport: transport::TransportSpec,
    /// Link-level flow control (PAUSE / PFC).
    pub fc: FlowControlSpec,
    /// Shared-buffer switches (off: a private buffer per egress queue).
    pub buffer: buffer::SharedBufferSpec,
    pub metrics: MetricsSpec,
    pub analysis: AnalysisSpec,
    /// Routing tables (switch × switch plus host attachments; scenario/routes.rs).
    pub routes: Routes,
    /// `[routing]`: how flows without an explicit path are routed.
    pub routing: RoutingSpec,
    /// Node name -> index.
    pub node_index: HashMap<String, usize>,
    /// `[fluid]`: the fluid solver's settings (ignored by packet-level runs).
    pub fluid: fluid::FluidSpec,
    pub resolved: Json,
}

/// How flows without an explicit `path` are routed (`[routing]`, docs/models/topology.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RoutingMode {
    /// One shortest path per destination (ties to the port found first).
    Shortest,
    /// Equal-cost multipath, one path per flow by a hash of its identity at every switch.
    Ecmp,
    /// Per-packet spraying: every data frame picks an equal-cost port at random at every switch.
    Spray,
}

#[derive(Debug, Clone, Copy)]
pub struct RoutingSpec {
    pub mode: RoutingMode,
    /// ECMP: every switch hashes with the same seed (shows polarisation) instead of its own.
    pub same_seed: bool,
}

impl Scenario {
    pub fn port_name(&self, p: PortIx) -> String {
        let l = &self.links[p / 2];
        let (from, to) = if p % 2 == 0 { (l.a, l.b) } else { (l.b, l.a) };
        let base = format!("{}->{}", self.nodes[from].name, self.nodes[to].name);
        // parallel links get a suffix
        if l.dup > 0 {
            format!("{base}#{}", l.dup)
        } else {
            base
        }
    }

    /// (transmitting node, receiving node) of a port.
    pub fn port_ends(&self, p: PortIx) -> (usize, usize) {
        let l = &self.links[p / 2];
        if p % 2 == 0 {
            (l.a, l.b)
        } else {
            (l.b, l.a)
        }
    }

    /// The ECMP hash seed of switch `node`: derived from the run's seed and the node, or the
    /// same for every switch (`routing.hash_seed = "same"`).
    pub fn switch_seed(&self, node: usize) -> u64 {
        let k = if self.routing.same_seed {
            u64::MAX
        } else {
            node as u64
        };
        routes::mix64(self.seed ^ routes::mix64(k))
    }

    pub fn n_ports(&self) -> usize {
        self.links.len() * 2
    }

    pub fn port_by_name(&self, name: &str) -> Option<PortIx> {
        let (pair, dup) = match name.rsplit_once('#') {
            Some((pair, k)) => (pair, k.parse::<u32>().ok().filter(|&k| k > 0)?),
            None => (name, 0),
        };
        let (a, b) = pair.split_once("->")?;
        let (a, b) = (*self.node_index.get(a)?, *self.node_index.get(b)?);
        (0..self.n_ports()).find(|&p| self.port_ends(p) == (a, b) && self.links[p / 2].dup == dup)
    }

    /// Egress buffer of a port.
    pub fn port_capacity(&self, p: PortIx) -> Capacity {
        let (from, _) = self.port_ends(p);
        if self.buffer.has(from) {
            return Capacity::Shared;
        }
        self.private_capacity(p)
    }

    /// The port's own `buffer` (of its link or its node), whether or not a shared memory
    /// replaces it.
    pub fn private_capacity(&self, p: PortIx) -> Capacity {
        let (from, _) = self.port_ends(p);
        self.links[p / 2].buffer.unwrap_or(self.nodes[from].buffer)
    }

    /// What limits one egress queue of the port: its own buffer when it is private or when its
    /// shared memory limits queues by it (`egress_threshold = "port"`), else `Shared`.
    pub fn queue_limit(&self, p: PortIx) -> Capacity {
        match self.port_capacity(p) {
            Capacity::Shared if self.buffer.egress == buffer::ThresholdSpec::Port => {
                self.private_capacity(p)
            }
            c => c,
        }
    }

    pub fn is_switch_port(&self, p: PortIx) -> bool {
        self.nodes[self.port_ends(p).0].kind == NodeKind::Switch
    }
}

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

/// The index of the variant `meta.variant` names, if it is set.
fn chosen_variant(doc: &Value, vars: &[Value]) -> Res<Option<usize>> {
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
fn parse_variant(
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

fn prefix_err(mut e: ScenarioError, prefix: &str) -> ScenarioError {
    e.path = format!("{prefix}: {}", e.path);
    e
}

fn parse_root(root: &toml::Table, seed_over: Option<u64>) -> Res<Scenario> {
    let expanded;
    let root = if expand::needed(root) {
        expanded = expand::expand(root)?;
        &expanded
    } else {
        root
    };
    let generated;
    let mut topo_json = None;
    let root = match topology::generate(root)? {
        Some((t, j)) => {
            generated = t;
            topo_json = Some(j);
            &generated
        }
        None => root,
    };
    // workloads need the run's seed and length before [meta] is read (a bad [meta] is
    // reported by its reader below)
    let meta_seed = root
        .get("meta")
        .and_then(|m| m.get("seed"))
        .and_then(|s| {
            s.as_integer()
                .map(|i| i as u64)
                .or_else(|| s.as_str().and_then(|t| t.trim().parse().ok()))
        })
        .unwrap_or(1);
    let meta_duration = root
        .get("meta")
        .and_then(|m| m.get("duration"))
        .and_then(|d| d.as_str())
        .and_then(|d| units::parse_time(d).ok())
        .unwrap_or(units::SEC);
    let with_workloads;
    let mut work_json = None;
    let root = match workload::generate(root, seed_over.unwrap_or(meta_seed), meta_duration)? {
        Some((t, j)) => {
            with_workloads = t;
            work_json = Some(j);
            &with_workloads
        }
        None => root,
    };
    let mut r = TableReader::new("", root);
    let mut resolved = Map::new();
    if let Some(j) = topo_json {
        resolved.insert("topology".into(), j);
    }
    if let Some(j) = work_json {
        resolved.insert("workloads".into(), j);
    }

    // [meta]
    let mut meta = r.sub("meta")?;
    let name = meta.str_or("name", "unnamed")?;
    meta.str_or("description", "")?;
    let duration = meta.req_time("duration")?;
    if duration == 0 {
        return Err(meta.err("duration", "\"0s\"", "a duration above zero"));
    }
    let quick = meta.opt_time("quick_duration")?;
    if quick == Some(0) {
        return Err(meta.err(
            "quick_duration",
            "\"0s\"",
            "a duration above zero (reproduce --quick runs min(quick_duration, duration))",
        ));
    }
    let seed = read_seed(&mut meta)?;
    let seed = seed_over.unwrap_or(seed);
    let max_frames = meta.int_in("max_frames", budget::DEFAULT_MAX_FRAMES, 1, i64::MAX)?;
    meta.opt_str("variant")?; // checked and applied by `load`
    resolved.insert("meta".into(), Json::Object(meta.finish()?));

    // [defaults]
    let mut d = r.sub("defaults")?;
    let def_rate = d.rate_or("link_rate", 10e9)?;
    let def_delay = d.time_or("link_delay", 0)?;
    let def_preamble = overhead_bytes(&mut d, "preamble", 0)?;
    let def_ifg = overhead_bytes(&mut d, "ifg", 0)?;
    let def_latency = d.time_or("switch_latency", 0)?;
    let def_buffer = capacity(&mut d, "buffer", Capacity::Infinite)?;
    let def_nic = capacity(&mut d, "nic_buffer", Capacity::Bytes(1_000_000))?;
    resolved.insert("defaults".into(), Json::Object(d.finish()?));

    // nodes
    let mut nodes = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut node_json = Vec::new();
    for (kind, key) in [(NodeKind::Host, "hosts"), (NodeKind::Switch, "switches")] {
        let mut list = Vec::new();
        for mut t in r.tables(key)? {
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
                NodeKind::Host => (0, capacity(&mut t, "nic_buffer", def_nic)?),
                NodeKind::Switch => (
                    t.time_or("latency", def_latency)?,
                    capacity(&mut t, "buffer", def_buffer)?,
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

    // links
    let mut links = Vec::new();
    let mut link_json = Vec::new();
    let mut n_links_of = vec![0usize; nodes.len()];
    let mut pairs: HashMap<(usize, usize), u32> = HashMap::new();
    for mut t in r.tables("links")? {
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
                    format!("the name of a host or switch ({})", names(&nodes)),
                )
            })?;
        }
        if ix[0] == ix[1] {
            return Err(t.err("between", format!("{ends:?}"), "two different nodes"));
        }
        let rate_bps = t.rate_or("rate", def_rate)?;
        let delay = t.time_or("delay", def_delay)?;
        let extra_delay = t.time_or("extra_delay", 0)?;
        let preamble_bytes = overhead_bytes(&mut t, "preamble", def_preamble)?;
        let ifg_bytes = overhead_bytes(&mut t, "ifg", def_ifg)?;
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

    let routes = Routes::compute(&nodes, &links);
    let mut sc = Scenario {
        name,
        duration,
        seed,
        nodes,
        links,
        schedule: Vec::new(),
        link_events: Vec::new(),
        flows: Vec::new(),
        groups: Vec::new(),
        cc: CcMode::None,
        feedback_latency: 0,
        rl_start_full: true,
        feedback_reverse: false,
        qcn: QcnSpec {
            cp: CpParams::standard(),
            rp: RpParams::standard(10e9),
            cnm_bytes: 64,
            rl_queue_bytes: 0,
            rl_burst_bytes: None,
            cp_ports: Vec::new(),
            multicast_feedback: McFeedback::Standard,
            multicast_fbhat_hold_ps: 0,
            transient: TransientSpec::default(),
            feedback: Feedback::Switch,
            nic: NicFbParams::standard(),
        },
        bcn: BcnSpec {
            cp: BcnCpParams::study(),
            rp: BcnRpParams::study(10e9),
            msg_bytes: 64,
            rl_queue_bytes: 0,
            rl_burst_bytes: None,
            cp_ports: Vec::new(),
        },
        dcqcn: dcqcn::DcqcnSpec::off(),
        transport: transport::TransportSpec::unset(),
        fc: FlowControlSpec::off(),
        buffer: buffer::SharedBufferSpec::off(),
        metrics: MetricsSpec {
            throughput_bin: 0,
            throughput_ports: Vec::new(),
            queue_interval: 0,
            queue_ports: Vec::new(),
            memory_switches: Vec::new(),
            rate_interval: 0,
            record_cnm_sent: false,
            record_cnm_received: false,
            record_drops: false,
            record_mask: 0,
            record_switch_drops: false,
            record_pause: false,
            max_event_rows: 0,
            host_queues: false,
        },
        analysis: AnalysisSpec {
            bottleneck: None,
            recovery_fraction: 0.9,
            stats_from: 0,
            stats_to: duration,
            downward_factor: None,
            victims: false,
        },
        routes,
        routing: RoutingSpec {
            mode: RoutingMode::Shortest,
            same_seed: false,
        },
        node_index: index,
        fluid: fluid::FluidSpec::default(),
        resolved: Json::Null,
    };

    // [[schedule]]
    let mut sched_json = Vec::new();
    for mut t in r.tables("schedule")? {
        if t.has("link") {
            let ev = read_link_event(&sc, &mut t)?;
            sc.link_events.push(ev);
            sched_json.push(Json::Object(t.finish()?));
            continue;
        }
        let port_name = t.req_str("port")?;
        let port = port_ref(&sc, &t, "port", &port_name)?;
        let at = t.req_time("at")?;
        if at > duration {
            return Err(t.err(
                "at",
                format!("{:?}", units::fmt_time(at)),
                format!(
                    "a time within the run, at most meta.duration = {}",
                    units::fmt_time(duration)
                ),
            ));
        }
        if let Some(prev) = sc
            .schedule
            .iter()
            .rev()
            .find(|s: &&ScheduleSpec| s.port == port)
        {
            if at < prev.at {
                return Err(t.err(
                    "at",
                    format!("{:?}", units::fmt_time(at)),
                    format!(
                        "a time not before the previous change of port {port_name:?} (at {}): schedule entries of a port are in time order",
                        units::fmt_time(prev.at)
                    ),
                ));
            }
        }
        let rate_bps = t.req_rate("rate")?;
        if rate_bps > sc.links[port / 2].rate_bps {
            return Err(t.err(
                "rate",
                format!("{:?}", units::fmt_rate(rate_bps)),
                format!(
                    "a service rate up to the link rate {}",
                    units::fmt_rate(sc.links[port / 2].rate_bps)
                ),
            ));
        }
        sc.schedule.push(ScheduleSpec { at, port, rate_bps });
        sched_json.push(Json::Object(t.finish()?));
    }
    resolved.insert("schedule".into(), Json::Array(sched_json));

    // [[groups]]
    let (groups, group_json) = multicast::parse_groups(&sc, &mut r)?;
    sc.groups = groups;
    if !group_json.is_empty() {
        resolved.insert("groups".into(), Json::Array(group_json));
    }

    // [routing]
    let mut rt = r.sub("routing")?;
    sc.routing = RoutingSpec {
        mode: match params::read_choice(&mut rt, params::spec("routing", "mode"))?.as_str() {
            "ecmp" => RoutingMode::Ecmp,
            "spray" => RoutingMode::Spray,
            _ => RoutingMode::Shortest,
        },
        same_seed: params::read_choice(&mut rt, params::spec("routing", "hash_seed"))? == "same",
    };
    resolved.insert("routing".into(), Json::Object(rt.finish()?));

    // [[flows]]
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
        let src = host_ref(&sc, &mut t, "src")?;
        let group = multicast::flow_group(&sc, &mut t)?;
        let dst = if group.is_some() {
            usize::MAX
        } else {
            let dst = host_ref(&sc, &mut t, "dst")?;
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
        let stop = t.time_or("stop", duration)?;
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
                let (ports, parent) = multicast::flow_tree(&sc, &t, group.unwrap_or(0), src)?;
                tree_parent = parent;
                ports
            }
            Some(hops) => explicit_path(&sc, &t, &hops, src, dst)?,
            None if sc.routing.mode == RoutingMode::Ecmp => sc
                .routes
                .ecmp_path(&sc, src, dst, routes::flow_key(src, dst, i), &|n| {
                    sc.switch_seed(n)
                })
                .ok_or_else(|| unreachable_dst(&sc, &t, src, dst))?,
            None => sc.routes.path(&sc, src, dst).ok_or_else(|| {
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
        });
        transport::check_flow(&t, &sc.flows[sc.flows.len() - 1])?;
        flow_json.push(Json::Object(t.finish()?));
    }
    resolved.insert("flows".into(), Json::Array(flow_json));

    // [transport] (in the resolved scenario when given or used)
    let tp_given = r.has("transport");
    let mut tpr = r.sub("transport")?;
    sc.transport = transport::parse(&mut tpr)?;
    let tpj = tpr.finish()?;
    if tp_given
        || sc
            .flows
            .iter()
            .any(|f| f.transport == transport::Transport::Gbn)
    {
        resolved.insert("transport".into(), Json::Object(tpj));
    }

    // [cc]
    let mut cc = r.sub("cc")?;
    sc.cc = match cc
        .choice("mode", "none", &["none", "qcn", "bcn", "dcqcn"])?
        .as_str()
    {
        "qcn" => CcMode::Qcn,
        "bcn" => CcMode::Bcn,
        "dcqcn" => CcMode::Dcqcn,
        _ => CcMode::None,
    };
    sc.feedback_latency = cc.time_or("feedback_latency", 0)?;
    sc.rl_start_full = cc.choice("rl_start", "full", &["full", "empty"])? == "full";
    sc.feedback_reverse =
        cc.choice("feedback_route", "shortest", &["shortest", "reverse"])? == "reverse";
    let mut q = cc.sub("qcn")?;
    sc.qcn = parse_qcn(&sc, &mut q)?;
    let qj = q.finish()?;
    cc.put("qcn", Json::Object(qj));
    let bcn_given = cc.has("bcn");
    let mut b = cc.sub("bcn")?;
    sc.bcn = parse_bcn(&sc, &mut b)?;
    let bj = b.finish()?;
    // The [cc.bcn] section appears in the resolved scenario when BCN is used or given.
    if sc.cc == CcMode::Bcn || bcn_given {
        cc.put("bcn", Json::Object(bj));
    }
    // likewise [cc.dcqcn]
    let dcqcn_given = cc.has("dcqcn");
    let mut dr = cc.sub("dcqcn")?;
    sc.dcqcn = dcqcn::parse_dcqcn(&sc, &mut dr)?;
    let dj = dr.finish()?;
    if sc.cc == CcMode::Dcqcn || dcqcn_given {
        cc.put("dcqcn", Json::Object(dj));
    }
    resolved.insert("cc".into(), Json::Object(cc.finish()?));
    if sc.cc == CcMode::Qcn {
        check_rp(&sc)?;
    }
    if sc.cc == CcMode::Bcn {
        check_bcn(&sc)?;
    }
    if sc.cc == CcMode::Dcqcn {
        check_dcqcn(&sc)?;
    }

    // [flow_control]
    let mut fcr = r.sub("flow_control")?;
    sc.fc = flow_control::parse(&sc, &mut fcr)?;
    resolved.insert("flow_control".into(), Json::Object(fcr.finish()?));

    // [shared_buffer] (in the resolved scenario only when given)
    let sb_given = r.has("shared_buffer");
    let mut sbr = r.sub("shared_buffer")?;
    sc.buffer = buffer::parse(&sc, &mut sbr)?;
    let sbj = sbr.finish()?;
    if sb_given {
        resolved.insert("shared_buffer".into(), Json::Object(sbj));
    }
    if sc.fc.is_on() && sc.fc.watermark == flow_control::WatermarkMode::Global {
        sc.buffer = buffer::global_watermark(&sc, sb_given)?;
    }
    buffer::check(&sc)?;
    // buffer sizes are known now
    flow_control::check(&sc)?;
    if sc.flows.iter().any(|f| f.spray) {
        if sc.fc.mode != flow_control::FcMode::None {
            return Err(ScenarioError::new(
                "routing.mode",
                "\"spray\"",
                "\"shortest\" or \"ecmp\" while flow_control.mode is set (PAUSE/PFC account frames by the port they arrived on, known from a fixed path)",
            ));
        }
        if sc.buffer.is_on() {
            return Err(ScenarioError::new(
                "routing.mode",
                "\"spray\"",
                "\"shortest\" or \"ecmp\" with a shared_buffer (its memory charges frames to the port they arrived on, known from a fixed path)",
            ));
        }
        if sc.feedback_reverse {
            return Err(ScenarioError::new(
                "routing.mode",
                "\"spray\"",
                "\"shortest\" or \"ecmp\" with cc.feedback_route = \"reverse\" (a sprayed flow has no single path to reverse)",
            ));
        }
    }
    if !sc.link_events.is_empty() {
        check_link_events(&sc)?;
    }
    if sc.cc == CcMode::Qcn {
        check_qeq(&sc)?;
    }

    // [metrics]
    let mut m = r.sub("metrics")?;
    sc.metrics = parse_metrics(&sc, &mut m)?;
    budget::apply(&mut sc, &mut m, max_frames)?;
    resolved.insert("metrics".into(), Json::Object(m.finish()?));

    // [analysis]
    let mut a = r.sub("analysis")?;
    let bottleneck = match a.opt_str("bottleneck")? {
        Some(n) => Some(port_ref(&sc, &a, "bottleneck", &n)?),
        None => sc.schedule.first().map(|s| s.port),
    };
    if let Some(b) = bottleneck {
        a.put("bottleneck", Json::String(sc.port_name(b)));
    }
    let recovery_fraction = a.f64_in("recovery_fraction", 0.9, 0.01, 1.0)?;
    let stats_from = a.time_or("stats_from", 0)?;
    let stats_to = a.time_or("stats_to", duration)?;
    if stats_to > duration {
        return Err(a.err(
            "stats_to",
            format!("{:?}", units::fmt_time(stats_to)),
            format!(
                "a time up to meta.duration = {} (the default is the end of the run)",
                units::fmt_time(duration)
            ),
        ));
    }
    if stats_from >= stats_to {
        return Err(a.err(
            "stats_from",
            format!("{:?}", units::fmt_time(stats_from)),
            format!(
                "a time before the end of the statistics window, {}",
                units::fmt_time(stats_to)
            ),
        ));
    }
    let downward_factor = a.opt_f64("downward_factor")?;
    if let Some(f) = downward_factor {
        if !(1.0..=1000.0).contains(&f) {
            return Err(a.err(
                "downward_factor",
                format!("{f}"),
                "a number from 1 to 1000 (multiple of the reduced capacity)",
            ));
        }
    }
    let victims = a.bool_or("victims", false)?;
    if victims && bottleneck.is_none() {
        return Err(a.err(
            "victims",
            "true",
            "false, or name analysis.bottleneck (victims are the flows that do not cross it)",
        ));
    }
    sc.analysis = AnalysisSpec {
        bottleneck,
        recovery_fraction,
        stats_from,
        stats_to,
        downward_factor,
        victims,
    };
    resolved.insert("analysis".into(), Json::Object(a.finish()?));

    // [fluid]: read and checked always; in the resolved scenario only when given.
    let fluid_given = r.has("fluid");
    let mut fr = r.sub("fluid")?;
    sc.fluid = fluid::read(&mut fr)?;
    let fj = fr.finish()?;
    if fluid_given {
        resolved.insert("fluid".into(), Json::Object(fj));
    }

    // [[variants]]: checked by `load`; recorded here.
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

    // [sweep]: its shape only (see sweep.rs); a single run ignores it.
    if let Some(sw) = sweep::read(&mut r)? {
        resolved.insert("sweep".into(), sw);
    }

    r.finish()?;
    sc.resolved = Json::Object(resolved);
    Ok(sc)
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

/// `meta.seed`: a whole number from 0 to 2^64-1, the range of `qcnsim run --seed` and of the
/// seeds a sweep derives. A TOML integer is signed 64-bit, so a seed above 2^63-1 is written as a
/// string of digits (`seed = "18446744073709551615"`); the resolved scenario holds the number.
fn read_seed(meta: &mut TableReader) -> Res<u64> {
    const ALLOWED: &str = "a whole number from 0 to 18446744073709551615 (2^64-1; above 2^63-1 \
                           write it as a string of digits, e.g. \"18446744073709551615\")";
    let seed = match meta.raw("seed") {
        None => 1,
        Some(Value::Integer(i)) => {
            u64::try_from(*i).map_err(|_| meta.err("seed", i.to_string(), ALLOWED))?
        }
        Some(Value::String(s)) => {
            let digits = s.trim();
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(meta.err("seed", format!("{s:?}"), ALLOWED));
            }
            digits
                .parse::<u64>()
                .map_err(|_| meta.err("seed", format!("{s:?}"), ALLOWED))?
        }
        Some(v) => return Err(meta.err("seed", show(v), ALLOWED)),
    };
    meta.put("seed", Json::from(seed));
    Ok(seed)
}

fn names(nodes: &[NodeSpec]) -> String {
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

/// A `[[schedule]]` entry with `link = "A-B"` (or `"A-B#k"`, the k-th parallel link between A
/// and B, k >= 1, as the topology generators name them) and `state = "down" | "up"`.
fn read_link_event(sc: &Scenario, t: &mut TableReader) -> Res<LinkEvent> {
    let name = t.req_str("link")?;
    let (pair, k) = match name.rsplit_once('#') {
        Some((p, k)) => match k.parse::<usize>() {
            Ok(k) if k >= 1 => (p, k),
            _ => (name.as_str(), usize::MAX),
        },
        None => (name.as_str(), 0),
    };
    // every split at a '-' whose two sides are node names
    let link = pair
        .match_indices('-')
        .filter_map(|(i, _)| {
            let (a, b) = (
                sc.node_index.get(&pair[..i])?,
                sc.node_index.get(&pair[i + 1..])?,
            );
            sc.links
                .iter()
                .enumerate()
                .filter(|(_, l)| (l.a == *a && l.b == *b) || (l.a == *b && l.b == *a))
                .nth(k)
                .map(|(li, _)| li)
        })
        .next()
        .ok_or_else(|| {
            t.err(
                "link",
                format!("{name:?}"),
                "a link named by its two nodes, \"A-B\" (\"A-B#k\": the k-th parallel link)",
            )
        })?;
    // a change after the end of the run never happens (so a shortened run, e.g. `reproduce
    // --quick`, keeps its scenario's failures)
    let at = t.req_time("at")?;
    let up = match t.req_str("state")?.as_str() {
        "down" => false,
        "up" => true,
        s => return Err(t.err("state", format!("{s:?}"), "\"down\" or \"up\"")),
    };
    let prev = sc.link_events.iter().rev().find(|e| e.link == link);
    if let Some(p) = prev.filter(|p| at < p.at) {
        return Err(t.err(
            "at",
            format!("{:?}", units::fmt_time(at)),
            format!(
                "a time not before the link's previous change (at {}): a link's entries are in time order",
                units::fmt_time(p.at)
            ),
        ));
    }
    if prev.is_none_or(|p| p.up) == up {
        return Err(t.err(
            "state",
            format!("{:?}", if up { "up" } else { "down" }),
            format!(
                "the other state: the link is already {} then",
                if up { "up" } else { "down" }
            ),
        ));
    }
    Ok(LinkEvent { at, link, up })
}

/// Link failures route every unicast data frame hop by hop on the routes of the moment
/// (docs/models/topology.md, "Link failures"): refuse what needs a fixed path.
fn check_link_events(sc: &Scenario) -> Res<()> {
    let with = "with link failures in [[schedule]] (frames are routed hop by hop on the routes of the moment, not on a fixed path)";
    if sc.fc.mode != flow_control::FcMode::None {
        return Err(ScenarioError::new(
            "flow_control.mode",
            format!("{:?}", sc.fc.mode),
            format!("\"none\" {with}: PAUSE/PFC account frames by the port they arrived on, known from a fixed path"),
        ));
    }
    if sc.buffer.is_on() {
        return Err(ScenarioError::new(
            "shared_buffer",
            "given",
            format!(
                "no shared buffer {with}: its memory charges frames to the port they arrived on"
            ),
        ));
    }
    if sc.feedback_reverse {
        return Err(ScenarioError::new(
            "cc.feedback_route",
            "\"reverse\"",
            format!("\"shortest\" {with}"),
        ));
    }
    if !sc.groups.is_empty() {
        return Err(ScenarioError::new(
            "groups",
            format!("{} groups", sc.groups.len()),
            format!("no multicast groups {with} (their trees are fixed)"),
        ));
    }
    if let Some(f) = sc.flows.iter().find(|f| f.explicit_path) {
        return Err(ScenarioError::new(
            format!(
                "flows.{}.path",
                sc.flows.iter().position(|g| g.name == f.name).unwrap_or(0)
            ),
            "given",
            format!("no explicit path {with}: use routing.mode"),
        ));
    }
    if sc.n_ports() >= u16::MAX as usize {
        return Err(ScenarioError::new(
            "links",
            format!("{} links", sc.links.len()),
            format!("fewer than {} links {with}", u16::MAX / 2),
        ));
    }
    Ok(())
}

fn port_ref(sc: &Scenario, t: &TableReader, key: &str, name: &str) -> Res<PortIx> {
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

fn parse_qcn(sc: &Scenario, q: &mut TableReader) -> Res<QcnSpec> {
    let mut cpr = q.sub("cp")?;
    let mut cp = params::read_cp(&mut cpr)?;
    q.put("cp", Json::Object(cpr.finish()?));
    let mut rpr = q.sub("rp")?;
    let (mut rp, rl_queue_bytes, rl_burst_bytes) = params::read_rp(&mut rpr)?;
    q.put("rp", Json::Object(rpr.finish()?));
    let transient = parse_transient(q, &mut cp, &mut rp)?;
    let feedback = params::read_feedback(q)?;
    let mut nicr = q.sub("nic")?;
    let nic = params::read_nic(&mut nicr)?;
    q.put("nic", Json::Object(nicr.finish()?));
    let cnm_bytes = q.bytes_or("cnm_frame", 128)?;
    if !(64..=1518).contains(&cnm_bytes) {
        return Err(q.err(
            "cnm_frame",
            format!("\"{cnm_bytes}B\""),
            "a frame size from 64B to 1518B",
        ));
    }
    let cp_ports = port_selection(sc, q, "cp_ports", "switches")?;
    let mf = params::spec("cc.qcn", "multicast_feedback");
    let multicast_feedback = match q
        .choice(mf.key, mf.default, &["standard", "representative"])?
        .as_str()
    {
        "representative" => McFeedback::Representative,
        _ => McFeedback::Standard,
    };
    let multicast_fbhat_hold_ps =
        params::read_time(q, params::spec("cc.qcn", "multicast_fbhat_hold"))?;
    if feedback == Feedback::Nic && multicast_feedback == McFeedback::Representative {
        return Err(q.err(
            "feedback",
            "\"nic\"",
            "\"switch\" while cc.qcn.multicast_feedback = \"representative\" (the representative \
             scheme needs CP-computed feedback)",
        ));
    }
    if feedback == Feedback::Nic && (cp.every_frame || cp.qold_at_feedback) {
        return Err(q.err(
            "feedback",
            "\"nic\"",
            "\"switch\" while cc.qcn.cp.sampling = \"every_frame\" or cc.qcn.cp.qold = \"feedback\" \
             (these readings are of a CP that computes Fb; the NIC samples ConMes reports)",
        ));
    }
    if feedback == Feedback::Nic && transient.pushback {
        return Err(q.err(
            "feedback",
            "\"nic\"",
            "\"switch\" while cc.qcn.pushback.enabled = true (Fb99 messages are sent by CPs that \
             compute Fb)",
        ));
    }
    if let Some(p) = (0..sc.n_ports()).find(|&p| cp_ports[p] && !sc.is_switch_port(p)) {
        return Err(q.err(
            "cp_ports",
            format!("{:?}", sc.port_name(p)),
            "switch egress ports only (a CP lives in a bridge)",
        ));
    }
    Ok(QcnSpec {
        cp,
        rp,
        cnm_bytes: cnm_bytes as u32,
        rl_queue_bytes,
        rl_burst_bytes,
        cp_ports,
        multicast_feedback,
        multicast_fbhat_hold_ps,
        feedback,
        nic,
        transient,
    })
}

/// `[cc.qcn.ba]`, `[cc.qcn.sonar]`, `[cc.qcn.pushback]`. Push-back turns on both-signs sampling
/// at the CPs and sets the RP timer (both periods) to the push-back recovery timer.
fn parse_transient(
    q: &mut TableReader,
    cp: &mut CpParams,
    rp: &mut RpParams,
) -> Res<TransientSpec> {
    let mut bar = q.sub("ba")?;
    let (ba_on, ba) = params::read_ba(&mut bar)?;
    q.put("ba", Json::Object(bar.finish()?));
    let mut sr = q.sub("sonar")?;
    let sonar = params::read_sonar(&mut sr)?;
    q.put("sonar", Json::Object(sr.finish()?));
    let mut pr = q.sub("pushback")?;
    let (pb_on, pb_timer, one_counter, step) = params::read_pushback(&mut pr)?;
    q.put("pushback", Json::Object(pr.finish()?));
    rp.sonar_byte_counter_bytes = sonar.byte_counter_bytes;
    rp.fb99_step = step;
    if pb_on {
        cp.sample_both_signs = true;
        rp.timer_ps = pb_timer;
        rp.timer_after_frt_ps = pb_timer;
        rp.timer_enabled = true;
        rp.one_cycle_counter = one_counter;
    }
    Ok(TransientSpec {
        ba: (ba_on || sonar.enabled || pb_on).then_some(ba),
        sonar: sonar.enabled.then_some(sonar),
        pushback: pb_on,
    })
}

fn parse_bcn(sc: &Scenario, b: &mut TableReader) -> Res<BcnSpec> {
    let mut cpr = b.sub("cp")?;
    let cp = params::read_bcn_cp(&mut cpr)?;
    b.put("cp", Json::Object(cpr.finish()?));
    let mut rpr = b.sub("rp")?;
    let (rp, rl_queue_bytes, rl_burst_bytes) = params::read_bcn_rp(&mut rpr)?;
    b.put("rp", Json::Object(rpr.finish()?));
    let msg_bytes = b.bytes_or("frame", 64)?;
    if !(64..=1518).contains(&msg_bytes) {
        return Err(b.err(
            "frame",
            format!("\"{msg_bytes}B\""),
            "a frame size from 64B to 1518B",
        ));
    }
    let mut cp_ports = port_selection(sc, b, "cp_ports", "switches")?;
    if let Some(p) = (0..sc.n_ports()).find(|&p| cp_ports[p] && !sc.is_switch_port(p)) {
        return Err(b.err(
            "cp_ports",
            format!("{:?}", sc.port_name(p)),
            "switch egress ports only (a CP lives in a bridge)",
        ));
    }
    // BCN detection switched off per switch.
    let off = b.opt_str_list("detection_off")?.unwrap_or_default();
    for (i, name) in off.iter().enumerate() {
        let Some(n) = sc
            .nodes
            .iter()
            .position(|x| &x.name == name && x.kind == NodeKind::Switch)
        else {
            let switches: Vec<&str> = sc
                .nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Switch)
                .map(|n| n.name.as_str())
                .collect();
            return Err(ScenarioError::new(
                format!("{}.{i}", b.field("detection_off")),
                format!("{name:?}"),
                format!("the name of a switch ({})", switches.join(", ")),
            ));
        };
        for (p, on) in cp_ports.iter_mut().enumerate() {
            if sc.port_ends(p).0 == n {
                *on = false;
            }
        }
    }
    b.put("detection_off", json!(off));
    Ok(BcnSpec {
        cp,
        rp,
        msg_bytes: msg_bytes as u32,
        rl_queue_bytes,
        rl_burst_bytes,
        cp_ports,
    })
}

/// The BCN parameters together: gains that keep every rate positive, rates within every
/// flow's line rate.
fn check_bcn(sc: &Scenario) -> Res<()> {
    let (cp, rp) = (&sc.bcn.cp, &sc.bcn.rp);
    cp.validate()
        .map_err(|e| ScenarioError::new("cc.bcn.cp", "these parameters", e))?;
    if cp.fb_max_pages.is_finite() && rp.gd * cp.fb_max_pages >= 1.0 {
        return Err(ScenarioError::new(
            "cc.bcn.rp.gd",
            format!("{}", rp.gd),
            format!(
                "a decrease gain with gd * fb_max < 1, i.e. below {:.6e} (cc.bcn.cp.fb_max = {} \
                 pages): a negative BCN multiplies the rate by 1 + gd*Fb >= 1 - gd*fb_max, \
                 which would not be positive",
                1.0 / cp.fb_max_pages,
                cp.fb_max_pages
            ),
        ));
    }
    for f in &sc.flows {
        let line = sc.links[f.path[0] / 2].rate_bps;
        for (key, r) in [("r_min", rp.r_min_bps), ("min_rate", rp.min_rate_bps)] {
            if r > line {
                return Err(ScenarioError::new(
                    format!("cc.bcn.rp.{key}"),
                    format!("{:?}", units::fmt_rate(r)),
                    format!(
                        "a rate up to the line rate {} of flow {:?}",
                        units::fmt_rate(line),
                        f.name
                    ),
                ));
            }
        }
        let mut p = rp.clone();
        p.line_rate_bps = line;
        p.validate(cp.fb_max_pages)
            .map_err(|e| ScenarioError::new("cc.bcn.rp", "these parameters", e))?;
    }
    Ok(())
}

/// The largest finite flow (`flows.*.size`): 1 PB, far beyond what a run can carry (1 PB takes
/// 800,000 s at 10 Gb/s), and small enough for every byte count to stay exact in an `i64` column
/// and in `f64`.
pub const MAX_FLOW_BYTES: u64 = 1_000_000_000_000_000;

/// A go-back-N flow has fewer frames than this (31-bit sequence numbers).
pub const MAX_GBN_FRAMES: u64 = 1 << 31;

/// DCQCN: unicast flows only (the NP answers a flow's receiver), and RP parameters that make
/// sense for every flow's line rate.
fn check_dcqcn(sc: &Scenario) -> Res<()> {
    if let Some(f) = sc.flows.iter().find(|f| f.group.is_some()) {
        return Err(ScenarioError::new(
            "cc.mode",
            "\"dcqcn\"",
            format!(
                "\"qcn\", \"bcn\" or \"none\" with multicast flow {:?} (DCQCN's notification \
                 point answers one receiver per flow)",
                f.name
            ),
        ));
    }
    check_rp_params(sc, &sc.dcqcn.rp, "cc.dcqcn.rp")
}

/// Qeq must lie below the buffer of every port that runs a CP.
fn check_qeq(sc: &Scenario) -> Res<()> {
    let max_frame = sc
        .flows
        .iter()
        .map(|f| f.frame_bytes as u64)
        .max()
        .unwrap_or(1500);
    for p in 0..sc.n_ports() {
        if !sc.qcn.cp_ports[p] {
            continue;
        }
        let cap = match sc.queue_limit(p) {
            Capacity::Bytes(b) => b,
            Capacity::Frames(n) => n * max_frame,
            Capacity::Infinite | Capacity::Shared => continue,
        };
        if sc.qcn.cp.q_eq_bytes >= cap {
            return Err(ScenarioError::new(
                "cc.qcn.cp.q_eq",
                format!("\"{}B\"", sc.qcn.cp.q_eq_bytes),
                format!(
                    "a set point below the buffer of CP port {:?} ({} = {cap} bytes)",
                    sc.port_name(p),
                    sc.queue_limit(p).describe()
                ),
            ));
        }
    }
    Ok(())
}

/// The RP parameters must make sense for every flow's line rate.
fn check_rp(sc: &Scenario) -> Res<()> {
    sc.qcn
        .cp
        .validate()
        .map_err(|e| ScenarioError::new("cc.qcn.cp", "these parameters", e))?;
    check_rp_params(sc, &sc.qcn.rp, "cc.qcn.rp")
}

/// Reaction-point parameters `rp` (read from table `key`) against every flow's line rate:
/// the minimum rate, the start rate, then the parameters' own ranges.
fn check_rp_params(sc: &Scenario, rp: &RpParams, key: &str) -> Res<()> {
    for f in &sc.flows {
        let line = sc.links[f.path[0] / 2].rate_bps;
        if rp.min_rate_bps > line {
            return Err(ScenarioError::new(
                format!("{key}.min_rate"),
                format!("{:?}", units::fmt_rate(rp.min_rate_bps)),
                format!(
                    "a rate up to the line rate {} of flow {:?}",
                    units::fmt_rate(line),
                    f.name
                ),
            ));
        }
        if let Some(r) = rp.start_rate_bps {
            if r > line || r < rp.min_rate_bps {
                return Err(ScenarioError::new(
                    format!("{key}.start_rate"),
                    format!("{:?}", units::fmt_rate(r)),
                    format!(
                        "a rate from {key}.min_rate ({}) up to the line rate {} of flow {:?}",
                        units::fmt_rate(rp.min_rate_bps),
                        units::fmt_rate(line),
                        f.name
                    ),
                ));
            }
        }
        let mut p = rp.clone();
        p.line_rate_bps = line;
        p.validate()
            .map_err(|e| ScenarioError::new(key, "these parameters", e))?;
    }
    Ok(())
}

/// `"switches"` (every switch, the default), `"none"`, or a list of switch names: one flag per
/// node.
fn switch_selection(sc: &Scenario, t: &mut TableReader, key: &'static str) -> Res<Vec<bool>> {
    let is_sw: Vec<bool> = sc
        .nodes
        .iter()
        .map(|n| n.kind == NodeKind::Switch)
        .collect();
    let switches = || {
        sc.nodes
            .iter()
            .filter(|n| n.kind == NodeKind::Switch)
            .map(|n| n.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match t.raw(key) {
        None => {
            t.put(key, Json::String("switches".into()));
            Ok(is_sw)
        }
        Some(Value::String(s)) if s == "switches" || s == "none" => {
            t.put(key, Json::String(s.clone()));
            Ok(if s == "none" {
                vec![false; sc.nodes.len()]
            } else {
                is_sw
            })
        }
        Some(Value::Array(_)) => {
            let list = t.opt_str_list(key)?.unwrap_or_default();
            let mut sel = vec![false; sc.nodes.len()];
            for (i, name) in list.iter().enumerate() {
                match sc.nodes.iter().position(|n| &n.name == name) {
                    Some(n) if is_sw[n] => sel[n] = true,
                    _ => {
                        return Err(ScenarioError::new(
                            format!("{}.{i}", t.field(key)),
                            format!("{name:?}"),
                            format!("the name of a switch ({})", switches()),
                        ))
                    }
                }
            }
            Ok(sel)
        }
        Some(v) => Err(t.err(
            key,
            show(v),
            format!(
                "\"switches\", \"none\", or a list of switch names ({})",
                switches()
            ),
        )),
    }
}

fn parse_metrics(sc: &Scenario, m: &mut TableReader) -> Res<MetricsSpec> {
    let positive = |m: &TableReader, key: &str, t: SimTime| -> Res<SimTime> {
        if t == 0 {
            Err(m.err(key, "\"0s\"", "an interval above zero"))
        } else {
            Ok(t)
        }
    };
    let throughput_bin = m.time_or("throughput_bin", units::MS)?;
    let throughput_bin = positive(m, "throughput_bin", throughput_bin)?;
    let throughput_ports = port_selection(sc, m, "throughput_ports", "switches")?;
    let queue_interval = m.time_or("queue_interval", units::MS)?;
    let queue_interval = positive(m, "queue_interval", queue_interval)?;
    let queue_ports = port_selection(sc, m, "queue_ports", "switches")?;
    let memory_switches = switch_selection(sc, m, "memory_switches")?;
    let rate_interval = m.time_or("rate_interval", units::MS)?;
    let rate_interval = positive(m, "rate_interval", rate_interval)?;
    let events = m
        .opt_str_list("events")?
        .unwrap_or_else(|| EVENT_KINDS.iter().map(|s| s.to_string()).collect());
    let mut record_mask = 0u32;
    for (i, e) in events.iter().enumerate() {
        match EVENT_KINDS.iter().position(|k| *k == e.as_str()) {
            Some(k) => record_mask |= 1 << k,
            None => {
                return Err(ScenarioError::new(
                    format!("{}.{i}", m.field("events")),
                    format!("{e:?}"),
                    format!("one of: {}", EVENT_KINDS.join(", ")),
                ))
            }
        }
    }
    m.put("events", json!(events));
    let max_event_rows = m.int_in("max_event_rows", 5_000_000, 0, 1_000_000_000)? as usize;
    // [flow_control] is read before [metrics]
    let host_queues = m.bool_or("host_queues", sc.fc.is_on())?;
    Ok(MetricsSpec {
        throughput_bin,
        throughput_ports,
        queue_interval,
        queue_ports,
        memory_switches,
        rate_interval,
        record_cnm_sent: events.iter().any(|e| e == "cnm_sent"),
        record_cnm_received: events.iter().any(|e| e == "cnm_received"),
        record_drops: events.iter().any(|e| e == "drop"),
        record_mask,
        record_switch_drops: events.iter().any(|e| e == "drop" || e == "switch_drop"),
        record_pause: events.iter().any(|e| e == "pause"),
        max_event_rows,
        host_queues,
    })
}
