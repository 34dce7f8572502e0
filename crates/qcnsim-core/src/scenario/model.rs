//! The resolved scenario model: what a scenario file becomes once read and checked, and what
//! the simulator is built from (the node, link, flow and congestion-management specs).

use super::flow_control::FlowControlSpec;
use super::{
    buffer, dcqcn, dctcp, fluid, hpcc, multicast, params, routes, swift, timely, transport,
};
use crate::proto::bcn::{BcnCpParams, BcnRpParams};
use crate::proto::multicast::McFeedback;
use crate::proto::nic_fb::{Feedback, NicFbParams};
use crate::proto::qcn_cp::CpParams;
use crate::proto::qcn_rp::RpParams;
use crate::units::{self, SimTime};
use routes::Routes;
use serde_json::Value as Json;

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
    /// `sender = "nic"`: the sender holds a frame until its rate limiter and its NIC's egress
    /// queue have room (a NIC sending a message from host memory); else a frame that finds
    /// either full is dropped at the sender (a traffic generator).
    pub holds: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcMode {
    None,
    Qcn,
    Bcn,
    /// DCQCN (docs/models/dcqcn.md): ECN marking, a notification point at each receiver and
    /// QCN's reaction point with its DCQCN options.
    Dcqcn,
    /// DCTCP (docs/models/dctcp.md): ECN marking above K at the switches, the receiver's ECN
    /// echo in go-back-N's acknowledgements, a window at the sender (sim/cc/e2e.rs).
    Dctcp,
    /// HPCC (docs/models/hpcc.md): INT stamped at every switch egress port, echoed by the
    /// receiver's per-packet ACKs, a window and a pacing rate at the sender (sim/cc/e2e.rs,
    /// sim/cc/hpcc.rs).
    Hpcc,
    /// TIMELY (docs/models/timely.md): RTT samples from the transport's timestamp echo set each
    /// flow's rate limiter's rate (sim/cc/delay.rs).
    Timely,
    /// Swift (docs/models/swift.md): the fabric delay of each ACK sets a window, with pacing
    /// below one packet (sim/cc/delay.rs).
    Swift,
}

impl CcMode {
    /// The mode's name in `cc.mode`.
    pub fn name(self) -> &'static str {
        match self {
            CcMode::None => "none",
            CcMode::Qcn => "qcn",
            CcMode::Bcn => "bcn",
            CcMode::Dcqcn => "dcqcn",
            CcMode::Dctcp => "dctcp",
            CcMode::Hpcc => "hpcc",
            CcMode::Timely => "timely",
            CcMode::Swift => "swift",
        }
    }

    /// An end-to-end congestion control clocked by acknowledgements (a window beside the rate
    /// limiter, read from per-packet ACKs: sim/cc/e2e.rs): DCTCP, TIMELY, Swift.
    pub fn acked(self) -> bool {
        matches!(
            self,
            CcMode::Dctcp | CcMode::Hpcc | CcMode::Timely | CcMode::Swift
        )
    }
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
    /// The intervals widened to fit `metrics.max_sample_rows` (scenario/budget.rs): the field,
    /// the interval asked for and the interval used; each is a `warning_interval_widened` row.
    pub widened: Vec<(&'static str, SimTime, SimTime)>,
    /// `metrics.max_sample_rows` (also bounds the fluid solver's tables).
    pub max_sample_rows: u64,
    /// `metrics.memory_budget`, clamped to the memory the machine has available (budget.rs).
    pub memory_limit: u64,
    /// The frames and pending events a run may hold before it stops with an error
    /// (`budget::frames_cap`): the bound of queues with an infinite buffer.
    pub frames_cap: u64,
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

/// The largest finite flow (`flows.*.size`): 1 PB, far beyond what a run can carry (1 PB takes
/// 800,000 s at 10 Gb/s), and small enough for every byte count to stay exact in an `i64` column
/// and in `f64`.
pub const MAX_FLOW_BYTES: u64 = 1_000_000_000_000_000;

/// A go-back-N flow has fewer frames than this (31-bit sequence numbers).
pub const MAX_GBN_FRAMES: u64 = 1 << 31;

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
    /// `fct_unfinished = "lower_bound"`: a finite flow unfinished at the end enters the FCT
    /// slowdown statistics with the lower bound of its slowdown (it ran at least until the end);
    /// `"exclude"` (the default) leaves it out. Either way the statistics say which, and count
    /// the unfinished flows and their undelivered bytes (docs/tables.md, `fct_stats`).
    pub fct_unfinished_bound: bool,
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    /// `meta.duration`: the run's length; with `meta.drain_until`, the end of arrivals.
    pub duration: SimTime,
    /// `meta.drain_until` (drain mode): the run goes on past `duration` until every finite
    /// unicast flow has finished, at the latest until this time (docs/scenario.md, "Drain
    /// mode"); `None`: the run ends at `duration`.
    pub drain_until: Option<SimTime>,
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
    /// `defaults.nic_scheduler = "round_robin"`: a NIC that sends messages (a `sender = "nic"`
    /// flow) serves every unicast flow it sends round-robin, its generators too, one frame each
    /// in turn (a queue pair each); a NIC with generators only keeps one FIFO queue. `"fifo"`:
    /// in the order their frames left their rate limiters (docs/models/network.md).
    pub nic_round_robin: bool,
    /// `cc.feedback_route = "reverse"`: feedback messages travel back along the reverse of
    /// their flow's data path (or tree) instead of the shortest path to the source.
    pub feedback_reverse: bool,
    pub qcn: QcnSpec,
    pub bcn: BcnSpec,
    pub dcqcn: dcqcn::DcqcnSpec,
    /// `[cc.timely]` (`cc.mode = "timely"`: docs/models/timely.md).
    pub timely: timely::TimelySpec,
    /// `[cc.swift]` (`cc.mode = "swift"`: docs/models/swift.md).
    pub swift: swift::SwiftSpec,
    /// `[cc.dctcp]` (docs/models/dctcp.md).
    pub dctcp: dctcp::DctcpSpec,
    /// `[cc.hpcc]` (docs/models/hpcc.md).
    pub hpcc: hpcc::HpccSpec,
    /// `[transport]`: the go-back-N parameters (docs/models/transport.md).
    pub transport: transport::TransportSpec,
    /// Link-level flow control (PAUSE / PFC).
    pub fc: FlowControlSpec,
    /// Shared-buffer switches (off: a private buffer per egress queue).
    pub buffer: buffer::SharedBufferSpec,
    pub metrics: MetricsSpec,
    pub analysis: AnalysisSpec,
    /// Routing tables (switch × destination switch plus host attachments; scenario/routes.rs).
    pub routes: Routes,
    /// `[routing]`: how flows without an explicit path are routed.
    pub routing: RoutingSpec,
    /// Node name -> index.
    pub node_index: super::fasthash::NameIndex,
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
    /// The latest time the run may end: `meta.drain_until` in drain mode, else `meta.duration`.
    /// What the recorders and the memory budget are sized for.
    pub fn max_end(&self) -> SimTime {
        self.drain_until.unwrap_or(self.duration)
    }

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
