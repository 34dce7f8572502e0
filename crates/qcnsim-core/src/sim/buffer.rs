//! Shared-buffer switches in the simulator: the adapter between the data path and
//! [`crate::proto::buffer::Mmu`]. See docs/models/buffer.md.
//!
//! Hooks. A data frame entering an egress queue of a shared-buffer switch (its port's capacity
//! is [`Capacity::Shared`]) is admitted by the switch's memory, charged to its input port's
//! priority group and to the egress queue; it is released when its transmission starts (as the
//! PAUSE watermarks count, docs/models/pause.md). The memory's XOFF/XON of a lossless PG act on
//! the flow-control slot of (input port, class) like a watermark crossing ([`Sim::fc_demand`]).
//! Runs without a shared buffer never reach this file: admission is reached only from the
//! drop branch of `enqueue_data` (a shared port's "fits" is false), and release only from the
//! slow transmit path (`Sim::slow`).

use super::*;
use crate::proto::buffer::{Mmu, PfcCmd, DROP_CAUSES};
use crate::scenario::buffer as sbs;

/// The shared memories of the network (empty when `[shared_buffer]` is off).
#[derive(Default)]
pub(super) struct Buffers {
    pub(super) mmu: Vec<Mmu>,
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
    /// (memory, slot, command) of an admission waiting for `fc_enqueued`.
    pub(super) pending: Option<(u32, u32, PfcCmd)>,
}

impl Buffers {
    pub(super) fn build(sc: &Scenario) -> Buffers {
        let mut b = Buffers::default();
        if !sc.buffer.is_on() {
            return b;
        }
        let np = sc.n_ports();
        let nc = sc.fc.classes();
        b.nc = nc;
        b.eg_mmu = vec![NONE; np];
        b.eg_ix = vec![NONE; np];
        b.in_ix = vec![NONE; np];
        for n in 0..sc.nodes.len() {
            if sc.nodes[n].kind != NodeKind::Switch || !sc.buffer.has(n) {
                continue;
            }
            let m = b.mmu.len() as u32;
            let cfg = sbs::mmu_config(sc, n);
            let (ins, outs) = sbs::switch_ports(sc, n);
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
    pub(super) fn table(&self, sc: &Scenario) -> Option<Table> {
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
    pub(super) fn summary_rows(&self, sc: &Scenario) -> Vec<(String, f64, String, String)> {
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

impl<'a> Sim<'a> {
    /// A data frame does not fit egress port `pi` by the port's own capacity: if the port's
    /// switch has a shared memory, that memory decides (and the frame is charged when admitted).
    #[inline(never)]
    pub(super) fn buf_admit(&mut self, pi: usize, pkt: u32) -> bool {
        if self.core.ports[pi].cap != Capacity::Shared {
            return false;
        }
        let pk = self.core.pkts[pkt as usize];
        let class = self.core.flows[pk.flow as usize].class as usize;
        let input = self.input_port(pk.flow, pk.hop);
        let b = &mut self.buf;
        let nc = b.nc;
        let m = b.eg_mmu[pi] as usize;
        let pg = b.in_ix[input] as usize * nc + class;
        let q = b.eg_ix[pi] as usize * nc + class;
        let v = b.mmu[m].admit(pg, q, pk.size);
        if v.result.is_ok() && v.pfc != PfcCmd::None {
            // acted upon where a watermark would be, once the frame is queued and its CP has
            // run (`fc_enqueued`), so that the order of control frames is the same
            b.pending = Some((m as u32, (input * nc + class) as u32, v.pfc));
        } else {
            self.buf_pfc(m, input * nc + class, v.pfc);
        }
        v.result.is_ok()
    }

    /// The PFC command of the frame just admitted, if any (called by `fc_enqueued`).
    #[inline]
    pub(super) fn buf_pending(&mut self) {
        if let Some((m, slot, cmd)) = self.buf.pending.take() {
            self.buf_pfc(m as usize, slot as usize, cmd);
        }
    }

    /// A data frame of `flow` queued at path entry `hop`, `size` bytes, left egress port `pi`
    /// of a shared-buffer switch.
    pub(super) fn buf_release(&mut self, pi: usize, flow: u32, hop: u16, size: u32) {
        let class = self.core.flows[flow as usize].class as usize;
        let input = self.input_port(flow, hop);
        let b = &mut self.buf;
        let nc = b.nc;
        let m = b.eg_mmu[pi] as usize;
        let pg = b.in_ix[input] as usize * nc + class;
        let q = b.eg_ix[pi] as usize * nc + class;
        let cmd = b.mmu[m].release(pg, q, size);
        self.buf_pfc(m, input * nc + class, cmd);
    }

    /// Act on a memory's PFC command for flow-control slot `slot` (pool scope: all its lossless
    /// slots of the same priority).
    fn buf_pfc(&mut self, m: usize, slot: usize, cmd: PfcCmd) {
        let raise = match cmd {
            PfcCmd::None => return,
            PfcCmd::Xoff => true,
            PfcCmd::Xon => false,
        };
        if self.pool_scope(m) {
            // every lossless PG of the slot's priority
            let nc = self.buf.nc;
            for k in 0..self.buf.lossless_slots[m].len() {
                let s = self.buf.lossless_slots[m][k] as usize;
                if s % nc == slot % nc {
                    self.fc_demand(s, raise);
                }
            }
        } else {
            self.fc_demand(slot, raise);
        }
    }

    fn pool_scope(&self, m: usize) -> bool {
        matches!(
            self.buf.mmu[m].config().xoff_scope,
            crate::proto::buffer::XoffScope::Pool { .. }
        )
    }

    /// `start_next` when flow control or a shared memory is on.
    #[inline(never)]
    pub(super) fn slow_start_next(&mut self, pi: usize) {
        if self.core.port_down(pi) {
            // a failed link sends nothing (sim/links.rs)
            return;
        }
        if self.fc.on {
            return self.fc_start_next(pi);
        }
        // a shared memory without flow control: the frame `plain_start_next` takes, if data
        let port = &self.core.ports[pi];
        let data = if port.cap == Capacity::Shared && port.ctrl.is_empty() {
            port.q.front().map(|&d| self.core.pkts[d as usize])
        } else {
            None
        };
        self.plain_start_next(pi);
        if let Some(pk) = data {
            self.buf_release(pi, pk.flow, pk.hop, pk.size);
        }
    }
}
