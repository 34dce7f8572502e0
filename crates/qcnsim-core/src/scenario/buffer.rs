//! `[shared_buffer]`: one packet memory per switch, shared by its ports (docs/models/buffer.md,
//! the `shared_buffer.*` rows of docs/parameters.md). The rules are in [`crate::proto::buffer`];
//! this file reads the section and turns it into one [`MmuConfig`] per switch.

use super::flow_control::{self, FcMode};
use super::params::{self, spec, SB};
use super::reader::{Res, TableReader};
use super::{Capacity, NodeKind, PortIx, Scenario};
use crate::proto::buffer::{Mmu, MmuConfig, Threshold, XoffScope};
use crate::proto::pause;
use crate::scenario::ScenarioError;

/// A threshold as configured (bytes, before the conversion to cells).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ThresholdSpec {
    None,
    Static(u64),
    Dynamic(f64),
    /// Egress only: each queue is limited by its port's own `buffer`, as a private queue of
    /// that size would be, lossless priorities included.
    Port,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SharedBufferSpec {
    /// Pool size in bytes; `None`: off (private per-queue buffers).
    pub size: Option<u64>,
    /// Per node: the switch has a shared buffer.
    pub switches: Vec<bool>,
    pub cell: u32,
    pub ingress_reserved: u64,
    pub egress_reserved: u64,
    pub ingress: ThresholdSpec,
    pub egress: ThresholdSpec,
    /// `None`: auto (the bound of each input link plus one frame).
    pub headroom: Option<u64>,
    pub xon_offset: u64,
    /// XOFF on the whole pool (flow_control.xoff / xon) instead of per PG.
    pub pool_scope: bool,
}

impl SharedBufferSpec {
    pub fn off() -> SharedBufferSpec {
        SharedBufferSpec {
            size: None,
            switches: Vec::new(),
            cell: 1,
            ingress_reserved: 0,
            egress_reserved: 0,
            ingress: ThresholdSpec::Dynamic(1.0),
            egress: ThresholdSpec::Dynamic(1.0),
            headroom: None,
            xon_offset: 3000,
            pool_scope: false,
        }
    }

    pub fn is_on(&self) -> bool {
        self.size.is_some()
    }

    /// Whether node `n` is a switch with a shared buffer.
    #[inline]
    pub fn has(&self, n: usize) -> bool {
        self.size.is_some() && self.switches[n]
    }
}

fn threshold(
    t: &mut TableReader,
    which: &'static str,
    alpha: &'static str,
    stat: &'static str,
) -> Res<ThresholdSpec> {
    Ok(match params::read_choice(t, spec(SB, which))?.as_str() {
        "none" => ThresholdSpec::None,
        "port" => ThresholdSpec::Port,
        "static" => {
            let s = spec(SB, stat);
            let Some(b) = t.opt_bytes(s.key)? else {
                return Err(t.err(
                    stat,
                    "missing",
                    format!("a size (required with {which} = \"static\")"),
                ));
            };
            ThresholdSpec::Static(b)
        }
        _ => ThresholdSpec::Dynamic(params::read_f64(t, spec(SB, alpha))?),
    })
}

/// Parse `[shared_buffer]` (after `[flow_control]`).
pub fn parse(sc: &Scenario, t: &mut TableReader) -> Res<SharedBufferSpec> {
    let mut b = SharedBufferSpec::off();
    b.size = params::read_bytes_or_word(t, spec(SB, "size"), "off", "150KB")?;
    b.switches = flow_control::switch_set(sc, t, "switches")?;
    b.cell = params::read_bytes(t, spec(SB, "cell"))? as u32;
    b.ingress_reserved = params::read_bytes(t, spec(SB, "ingress_reserved"))?;
    b.egress_reserved = params::read_bytes(t, spec(SB, "egress_reserved"))?;
    b.ingress = threshold(t, "ingress_threshold", "ingress_alpha", "ingress_static")?;
    b.egress = threshold(t, "egress_threshold", "egress_alpha", "egress_static")?;
    b.headroom = params::read_bytes_or_word(t, spec(SB, "headroom"), "auto", "20KB")?;
    b.xon_offset = params::read_bytes(t, spec(SB, "xon_offset"))?;
    b.pool_scope = params::read_choice(t, spec(SB, "xoff_scope"))? == "pool";
    Ok(b)
}

/// The ports that transmit into switch `n` (its inputs) and out of it (its outputs), in port
/// order: the local index of a port is its position here.
pub fn switch_ports(sc: &Scenario, n: usize) -> (Vec<PortIx>, Vec<PortIx>) {
    let ins = flow_control::input_ports(sc, n);
    let outs = (0..sc.n_ports())
        .filter(|&p| sc.port_ends(p).0 == n)
        .collect();
    (ins, outs)
}

/// Bytes of headroom that input link `i` of a switch needs for a lossless PG: the bytes that can
/// still arrive after XOFF ([`pause::headroom_bound`]) plus the frame that triggered it.
pub fn needed_pg_headroom(sc: &Scenario, i: PortIx) -> u64 {
    needed_pg_headroom_in(sc, &flow_control::PortFlows::new(sc), i)
}

/// [`needed_pg_headroom`] with the flows' per-port facts gathered once in `pf`.
pub fn needed_pg_headroom_in(sc: &Scenario, pf: &flow_control::PortFlows, i: PortIx) -> u64 {
    let h = flow_control::link_headroom_in(sc, pf, i);
    pause::headroom_bound(&h) + h.sender_max_frame as u64
}

/// `bytes` of frames in cells of `cell` bytes, at worst: every frame (at least `min_frame`
/// bytes) wastes less than one cell.
pub fn cells_for(bytes: u64, cell: u32, min_frame: u32) -> u64 {
    let c = cell as u64;
    if c == 1 {
        return bytes;
    }
    bytes.div_ceil(c) + bytes.div_ceil(min_frame as u64)
}

/// The memory configuration of shared-buffer switch `n`. PG `k * nc + class` is input port
/// `ins[k]`'s priority group `class`; queue `k * nc + class` is output port `outs[k]`'s.
pub fn mmu_config(sc: &Scenario, n: usize) -> MmuConfig {
    mmu_config_in(sc, &flow_control::PortFlows::new(sc), n)
}

/// [`mmu_config`] with the flows' per-port facts gathered once in `pf`.
pub fn mmu_config_in(sc: &Scenario, pf: &flow_control::PortFlows, n: usize) -> MmuConfig {
    let b = &sc.buffer;
    let cell = b.cell as u64;
    let fc = &sc.fc;
    let nc = fc.classes();
    let (ins, outs) = (pf.input_ports(n), pf.output_ports(n));
    let sends = fc.is_on() && fc.switches[n];
    let mut pg_reserved = Vec::new();
    let mut pg_headroom = Vec::new();
    let mut pg_lossless = Vec::new();
    for &i in ins {
        for c in 0..nc {
            let lossless = sends && fc.lossless[c];
            pg_reserved.push(b.ingress_reserved / cell);
            pg_lossless.push(lossless);
            pg_headroom.push(if !lossless || b.pool_scope && b.headroom.is_none() {
                0
            } else {
                match b.headroom {
                    Some(h) => h / cell,
                    None => cells_for(needed_pg_headroom_in(sc, pf, i), b.cell, pf.min_frame),
                }
            });
        }
    }
    let th = |t: ThresholdSpec| match t {
        ThresholdSpec::None => Threshold::Unlimited,
        ThresholdSpec::Static(x) => Threshold::Static(x / cell),
        ThresholdSpec::Dynamic(a) => Threshold::Dynamic(a),
        // the limit is the queue's own space (below)
        ThresholdSpec::Port => Threshold::Static(0),
    };
    let port = b.egress == ThresholdSpec::Port;
    let q_reserved = if port {
        outs.iter()
            .flat_map(|&e| std::iter::repeat_n(port_limit(sc, e) / cell, nc))
            .collect()
    } else {
        vec![b.egress_reserved / cell; outs.len() * nc]
    };
    MmuConfig {
        cell_bytes: b.cell,
        size: b.size.unwrap_or(0) / cell,
        pg_reserved,
        pg_headroom,
        pg_lossless,
        pg_threshold: th(b.ingress),
        q_reserved,
        q_threshold: th(b.egress),
        lossless_egress: port,
        xon_offset: b.xon_offset.div_ceil(cell),
        xoff_scope: if b.pool_scope {
            XoffScope::Pool {
                xoff: fc.xoff_bytes / cell,
                xon: fc.xon_bytes.div_ceil(cell),
                classes: nc as u32,
            }
        } else {
            XoffScope::Pg
        },
    }
}

/// Bytes egress port `e` may hold with `egress_threshold = "port"`: its own `buffer` (an
/// infinite buffer: more than any pool).
fn port_limit(sc: &Scenario, e: PortIx) -> u64 {
    match sc.private_capacity(e) {
        Capacity::Bytes(b) => b,
        _ => UNBOUNDED,
    }
}

/// The pool of the global watermark when some queue is unlimited: the largest size allowed.
const UNBOUNDED: u64 = 1 << 40;

/// `flow_control.watermark = "global"` (the BCN calibration study's "pause all inputs if memory
/// exceeds 140 KB, unpause below 130 KB") as the shared memory it is: every switch that sends
/// flow control gets one memory whose XOFF/XON is on the whole pool (per priority with PFC), no
/// reserved space, no headroom region, no ingress threshold, and each egress queue limited by
/// its port's own buffer; the pool is the sum of those buffers (1 TiB if one is infinite), so it
/// never fills before a queue does. Refused beside an explicit `[shared_buffer]`.
pub fn global_watermark(sc: &Scenario, given: bool) -> Res<SharedBufferSpec> {
    if given {
        return Err(ScenarioError::new(
            "flow_control.watermark",
            "\"global\"",
            "\"ingress\" or \"egress\" beside a [shared_buffer] section (the global watermark is \
             [shared_buffer] with xoff_scope = \"pool\": write that there instead, \
             docs/models/buffer.md)",
        ));
    }
    let fc = &sc.fc;
    let nc = fc.classes() as u64;
    let mut size = 0u64;
    for e in 0..sc.n_ports() {
        let (sw, _) = sc.port_ends(e);
        if !fc.switches[sw] || sc.nodes[sw].kind != NodeKind::Switch {
            continue;
        }
        if let Capacity::Frames(n) = sc.private_capacity(e) {
            return Err(ScenarioError::new(
                "flow_control.watermark",
                "\"global\"",
                format!(
                    "\"ingress\" or \"egress\" with buffers counted in frames (port {:?} has \
                     {n} frames): the global watermark counts the switch's memory in bytes, so \
                     its ports' buffers must be given in bytes or be infinite",
                    sc.port_name(e)
                ),
            ));
        }
        size = size.saturating_add(port_limit(sc, e).saturating_mul(nc));
    }
    let mut b = SharedBufferSpec::off();
    b.size = Some(size.clamp(64, UNBOUNDED));
    b.switches = fc.switches.clone();
    b.ingress = ThresholdSpec::None;
    b.egress = ThresholdSpec::Port;
    b.xon_offset = 0;
    b.pool_scope = true;
    Ok(b)
}

/// Lossless PGs whose configured headroom is below what their link needs, per switch with a
/// shared buffer: (switch, input port, class, configured bytes, needed bytes).
pub fn headroom_short(sc: &Scenario) -> Vec<(usize, PortIx, usize, u64, u64)> {
    let mut out = Vec::new();
    let b = &sc.buffer;
    let fc = &sc.fc;
    let Some(h) = b.headroom else {
        return out;
    };
    if !fc.is_on() || b.pool_scope {
        return out;
    }
    let h = h / b.cell as u64 * b.cell as u64;
    let pf = flow_control::PortFlows::new(sc);
    for n in 0..sc.nodes.len() {
        if !b.has(n) || !fc.switches[n] {
            continue;
        }
        for &i in pf.input_ports(n) {
            let need = needed_pg_headroom_in(sc, &pf, i);
            let need_mem = cells_for(need, b.cell, pf.min_frame) * b.cell as u64;
            for c in 0..fc.classes() {
                if fc.lossless[c] && h < need_mem {
                    out.push((n, i, c, h, need_mem));
                }
            }
        }
    }
    out
}

/// Checks that need the whole scenario: each switch's reserved space and headroom must fit in
/// its pool; the pool scope needs PAUSE or PFC.
pub fn check(sc: &Scenario) -> Res<()> {
    let b = &sc.buffer;
    if !b.is_on() {
        return Ok(());
    }
    if b.pool_scope && sc.fc.mode == FcMode::None {
        return Err(ScenarioError::new(
            "shared_buffer.xoff_scope",
            "\"pool\"",
            "\"pg\" (the pool scope pauses inputs at flow_control.xoff: set flow_control.mode)",
        ));
    }
    let pf = flow_control::PortFlows::new(sc);
    for n in 0..sc.nodes.len() {
        if sc.nodes[n].kind != NodeKind::Switch || !b.has(n) {
            continue;
        }
        let cfg = mmu_config_in(sc, &pf, n);
        if let Err(e) = Mmu::new(cfg) {
            return Err(ScenarioError::new(
                "shared_buffer.size",
                format!("\"{}B\"", b.size.unwrap_or(0)),
                format!(
                    "a memory large enough for switch {:?}: its {e} (docs/models/buffer.md, \
                     sizing headroom)",
                    sc.nodes[n].name
                ),
            ));
        }
    }
    Ok(())
}
