//! Shared-buffer switches in the simulator: the adapter between the data path and
//! [`crate::proto::buffer::Mmu`]. See docs/models/buffer.md.
//!
//! Hooks. A data frame entering an egress queue of a shared-buffer switch (its port's capacity
//! is [`Capacity::Shared`]) is admitted by the switch's memory, charged to its input port's
//! priority group and to the egress queue; it is released when its transmission starts (as the
//! PAUSE watermarks count, docs/models/pause.md). The memory's XOFF/XON of a lossless PG act on
//! the flow-control slot of (input port, class) like a watermark crossing: a [`PfcAsk`] the
//! wiring routes to flow control (`Sim::fc_demand`).
//! Runs without a shared buffer never reach this file: admission is reached only from the
//! drop branch of `enqueue_data` (a shared port's "fits" is false), and release only from the
//! slow transmit path (`Core::slow`).

use crate::proto::buffer::{Mmu, PfcCmd, DROP_CAUSES};
use crate::scenario::buffer as sbs;
use crate::sim::prelude::*;

/// The shared memories of the network (empty when `[shared_buffer]` is off).
#[derive(Default)]
pub(in crate::sim) struct Buffers {
    /// `[shared_buffer]` is on.
    on: bool,
    pub(in crate::sim) mmu: Vec<Mmu>,
    /// Switch node of each memory.
    node: Vec<u32>,
    /// Per port: index of the memory it is an egress port of, or NONE.
    eg_mmu: Vec<u32>,
    /// Per port: its local index as an egress port (of `eg_mmu`) and as an input port of the
    /// switch it transmits into (NONE if that switch has no shared memory).
    eg_ix: Vec<u32>,
    in_ix: Vec<u32>,
    nc: usize,
    /// Per memory: the flow-control slots of its lossless PGs (pool scope: XOFF/XON for all).
    lossless_slots: Vec<Vec<u32>>,
    /// The command of an admission waiting for `fc_enqueued`.
    pub(in crate::sim) pending: Option<PfcAsk>,
}

impl Buffers {
    pub(in crate::sim) fn build(sc: &Scenario) -> Buffers {
        let mut b = Buffers::default();
        if !sc.buffer.is_on() {
            return b;
        }
        b.on = true;
        let np = sc.n_ports();
        let nc = sc.fc.classes();
        b.nc = nc;
        b.eg_mmu = vec![NONE; np];
        b.eg_ix = vec![NONE; np];
        b.in_ix = vec![NONE; np];
        let pf = crate::scenario::flow_control::PortFlows::new(sc);
        for n in 0..sc.nodes.len() {
            if sc.nodes[n].kind != NodeKind::Switch || !sc.buffer.has(n) {
                continue;
            }
            let m = b.mmu.len() as u32;
            let cfg = sbs::mmu_config_in(sc, &pf, n);
            let (ins, outs) = (pf.input_ports(n), pf.output_ports(n));
            let mut slots = Vec::new();
            for (k, &i) in ins.iter().enumerate() {
                b.in_ix[i] = k as u32;
                for c in 0..nc {
                    if cfg.pg_lossless[k * nc + c] {
                        slots.push((i * nc + c) as u32);
                    }
                }
            }
            for (k, &e) in outs.iter().enumerate() {
                b.eg_mmu[e] = m;
                b.eg_ix[e] = k as u32;
            }
            // validated by scenario::buffer::check
            b.mmu
                .push(Mmu::new(cfg).expect("reserved space and headroom fit"));
            b.node.push(n as u32);
            b.lossless_slots.push(slots);
        }
        b
    }

    /// The `switch_buffer` table: one row per shared-buffer switch.
    pub(in crate::sim) fn table(&self, sc: &Scenario) -> Option<Table> {
        if self.mmu.is_empty() {
            return None;
        }
        let name = |n: &u32| sc.nodes[*n as usize].name.clone();
        let cell = |m: &Mmu| m.config().cell_bytes as i64;
        let mut t = Table::new("switch_buffer")
            .col(
                "switch",
                ColumnData::Str(self.node.iter().map(name).collect()),
            )
            .col(
                "size_bytes",
                ColumnData::I64(
                    self.mmu
                        .iter()
                        .map(|m| m.config().size as i64 * cell(m))
                        .collect(),
                ),
            )
            .col(
                "shared_bytes",
                ColumnData::I64(
                    self.mmu
                        .iter()
                        .map(|m| m.shared_size() as i64 * cell(m))
                        .collect(),
                ),
            )
            .col(
                "headroom_bytes",
                ColumnData::I64(
                    self.mmu
                        .iter()
                        .map(|m| m.config().pg_headroom.iter().sum::<u64>() as i64 * cell(m))
                        .collect(),
                ),
            )
            .col(
                "max_used_bytes",
                ColumnData::I64(
                    self.mmu
                        .iter()
                        .map(|m| m.stats.max_used as i64 * cell(m))
                        .collect(),
                ),
            )
            .col(
                "max_shared_bytes",
                ColumnData::I64(
                    self.mmu
                        .iter()
                        .map(|m| m.stats.max_shared as i64 * cell(m))
                        .collect(),
                ),
            )
            .col(
                "max_headroom_bytes",
                ColumnData::I64(
                    self.mmu
                        .iter()
                        .map(|m| m.stats.max_headroom as i64 * cell(m))
                        .collect(),
                ),
            );
        for (k, cause) in DROP_CAUSES.iter().enumerate() {
            t = t.col(
                &format!("drop_{cause}_frames"),
                ColumnData::I64(
                    self.mmu
                        .iter()
                        .map(|m| m.stats.drop_frames[k] as i64)
                        .collect(),
                ),
            );
        }
        t = t
            .col(
                "xoff",
                ColumnData::I64(self.mmu.iter().map(|m| m.stats.xoff as i64).collect()),
            )
            .col(
                "xon",
                ColumnData::I64(self.mmu.iter().map(|m| m.stats.xon as i64).collect()),
            );
        Some(t)
    }

    /// Summary rows: drops by cause over all shared memories, and lossless PGs whose configured
    /// headroom is below the bound of their link.
    pub(in crate::sim) fn summary_rows(&self, sc: &Scenario) -> Vec<(String, f64, String, String)> {
        let mut rows = Vec::new();
        if self.mmu.is_empty() {
            return rows;
        }
        for (k, cause) in DROP_CAUSES.iter().enumerate() {
            let n: u64 = self.mmu.iter().map(|m| m.stats.drop_frames[k]).sum();
            rows.push((
                format!("buffer_drops_{cause}"),
                n as f64,
                "frames".into(),
                format!("frames dropped by the shared memories at the {cause} check"),
            ));
        }
        let short = sbs::headroom_short(sc);
        if let Some(&(n, i, c, have, need)) = short.iter().max_by_key(|s| s.4 - s.3) {
            rows.push((
                "buffer_headroom_short".into(),
                short.len() as f64,
                "PGs".into(),
                format!(
                    "WARNING: lossless PGs with less headroom than their link's bound, e.g. switch \
                     {} input {} priority {c}: {have} B configured, {need} B needed \
                     (docs/models/buffer.md, sizing headroom)",
                    sc.nodes[n].name,
                    sc.port_name(i)
                ),
            ));
        }
        rows
    }
}

/// A shared memory's XOFF or XON for a flow-control slot, for flow control to act on (the
/// wiring raises or lowers the demand of each slot [`Buffers::pfc_target`] names).
#[derive(Clone, Copy, Debug)]
pub(in crate::sim) struct PfcAsk {
    m: u32,
    slot: u32,
    pub(in crate::sim) cmd: PfcCmd,
}

impl Buffers {
    /// A data frame does not fit egress port `pi` by the port's own capacity: if the port's
    /// switch has a shared memory, that memory decides (and the frame is charged when admitted).
    /// Returns whether it was admitted, and the memory's PFC command to act on now (a command
    /// of an admitted frame waits in `pending` until its CP has run, `Sim::fc_enqueued`).
    #[inline]
    pub(in crate::sim) fn admit(
        &mut self,
        core: &Core,
        pi: usize,
        pkt: u32,
    ) -> (bool, Option<PfcAsk>) {
        if core.ports[pi].cap != Capacity::Shared {
            return (false, None);
        }
        let pk = core.pkts[pkt as usize];
        let class = core.flows[pk.flow as usize].class as usize;
        let input = core.frame_input(&pk);
        let nc = self.nc;
        let m = self.eg_mmu[pi] as usize;
        let pg = self.in_ix[input] as usize * nc + class;
        let q = self.eg_ix[pi] as usize * nc + class;
        let v = self.mmu[m].admit(pg, q, pk.size);
        let ask = PfcAsk {
            m: m as u32,
            slot: (input * nc + class) as u32,
            cmd: v.pfc,
        };
        if v.result.is_ok() && v.pfc != PfcCmd::None {
            // acted upon where a watermark would be, once the frame is queued and its CP has
            // run (`fc_enqueued`), so that the order of control frames is the same
            self.pending = Some(ask);
            (true, None)
        } else {
            (v.result.is_ok(), Some(ask))
        }
    }

    /// A data frame (or an ACK in the data queue) of `flow` that came in through `input`
    /// (`Core::frame_input`), `size` bytes, left egress port `pi` of a shared-buffer switch:
    /// the memory's PFC command.
    pub(in crate::sim) fn release(
        &mut self,
        core: &Core,
        pi: usize,
        flow: u32,
        input: usize,
        size: u32,
    ) -> PfcAsk {
        let class = core.flows[flow as usize].class as usize;
        let nc = self.nc;
        let m = self.eg_mmu[pi] as usize;
        let pg = self.in_ix[input] as usize * nc + class;
        let q = self.eg_ix[pi] as usize * nc + class;
        let cmd = self.mmu[m].release(pg, q, size);
        PfcAsk {
            m: m as u32,
            slot: (input * nc + class) as u32,
            cmd,
        }
    }

    /// How many slots a PFC command may act on ([`Buffers::pfc_target`]): the slot itself, or in
    /// pool scope every lossless PG of the memory.
    pub(in crate::sim) fn pfc_targets(&self, ask: &PfcAsk) -> usize {
        if self.pool_scope(ask.m as usize) {
            self.lossless_slots[ask.m as usize].len()
        } else {
            1
        }
    }

    /// The `k`-th slot a PFC command acts on, if it does (pool scope: the lossless PGs of the
    /// slot's priority).
    pub(in crate::sim) fn pfc_target(&self, ask: &PfcAsk, k: usize) -> Option<usize> {
        if !self.pool_scope(ask.m as usize) {
            return Some(ask.slot as usize);
        }
        let nc = self.nc;
        let s = self.lossless_slots[ask.m as usize][k] as usize;
        (s % nc == ask.slot as usize % nc).then_some(s)
    }

    fn pool_scope(&self, m: usize) -> bool {
        matches!(
            self.mmu[m].config().xoff_scope,
            crate::proto::buffer::XoffScope::Pool { .. }
        )
    }
}

impl Needs for Buffers {
    fn name(&self) -> &'static str {
        "buffer"
    }
    /// A shared memory charges a frame when it is admitted and releases it when it leaves.
    fn slow_path(&self) -> bool {
        self.on
    }
    fn watches_queue(&self, core: &Core, pi: usize) -> bool {
        core.ports[pi].cap == Capacity::Shared
    }
    /// A frame's release from the shared memory when it leaves may pause other ports.
    fn moves_departures(&self, core: &Core, pi: usize) -> bool {
        core.ports[pi].cap == Capacity::Shared
    }
}
