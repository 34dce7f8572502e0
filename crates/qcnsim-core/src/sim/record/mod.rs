//! The recorder: the samples and events a run keeps for its tables (sim/record/output.rs turns
//! them into tables; flow completion times are in fct.rs).

use crate::sim::prelude::*;

pub(in crate::sim) mod fct;
pub(in crate::sim) mod output;

/// Named columns a subsystem contributes to a shared table (flows, ports), in the table's order.
pub(in crate::sim) type Columns = Vec<(&'static str, ColumnData)>;

#[derive(Clone, Copy)]
pub(in crate::sim) struct EvRec {
    pub(in crate::sim) t: SimTime,
    pub(in crate::sim) kind: u8,
    pub(in crate::sim) node: u32,
    pub(in crate::sim) flow: u32,
    pub(in crate::sim) value: i64,
}

pub(in crate::sim) const REC_CNM_SENT: u8 = 0;
pub(in crate::sim) const REC_CNM_RX: u8 = 1;
pub(in crate::sim) const REC_DROP: u8 = 2;
pub(in crate::sim) const REC_BA_CHANGE: u8 = 3;
pub(in crate::sim) const REC_SPECIAL_SENT: u8 = 4;
pub(in crate::sim) const REC_ECHO_SENT: u8 = 5;
pub(in crate::sim) const REC_ECHO_RX: u8 = 6;
pub(in crate::sim) const REC_SHORT_FUSE: u8 = 7;
pub(in crate::sim) const REC_FB99_SENT: u8 = 8;
pub(in crate::sim) const REC_FB99_RX: u8 = 9;
pub(in crate::sim) const REC_BCN_SENT: u8 = 10;
pub(in crate::sim) const REC_BCN_RX: u8 = 11;
pub(in crate::sim) const REC_BCN0_SENT: u8 = 12;
pub(in crate::sim) const REC_BCN0_RX: u8 = 13;
/// Event kind names, indexed by the REC_* codes (the scenario's `metrics.events` choices).
pub(in crate::sim) const REC_KIND_NAMES: &[&str] = crate::scenario::EVENT_KINDS;
/// Events located at a host (the `node` column names the host, not a port).
pub(in crate::sim) const REC_AT_HOST: u32 = 1 << REC_CNM_RX
    | 1 << REC_SPECIAL_SENT
    | 1 << REC_ECHO_RX
    | 1 << REC_SHORT_FUSE
    | 1 << REC_FB99_RX
    | 1 << REC_BCN_RX
    | 1 << REC_BCN0_RX;

/// A throughput slot's current bin (empty range: none yet).
#[derive(Clone, Copy, Default)]
pub(in crate::sim) struct TputBin {
    pub(in crate::sim) lo: SimTime,
    pub(in crate::sim) hi: SimTime,
    pub(in crate::sim) k: usize,
}

pub(in crate::sim) struct Recorder {
    pub(in crate::sim) nbins: usize,
    pub(in crate::sim) bin: SimTime,
    pub(in crate::sim) tput_ports: Vec<u32>,
    pub(in crate::sim) tput_bytes: Vec<u64>,
    pub(in crate::sim) tput_frames: Vec<u64>,
    /// Per throughput slot: the bin `[lo, hi)` last counted in and its index in `tput_bytes`.
    pub(in crate::sim) tput_cache: Vec<TputBin>,
    pub(in crate::sim) queue_ports: Vec<u32>,
    /// Switches whose memory is sampled, with their egress ports.
    pub(in crate::sim) mem_switches: Vec<(u32, Vec<u32>)>,
    pub(in crate::sim) m_t: Vec<i64>,
    pub(in crate::sim) m_sw: Vec<u32>,
    pub(in crate::sim) m_bytes: Vec<i64>,
    pub(in crate::sim) q_t: Vec<i64>,
    pub(in crate::sim) q_port: Vec<u32>,
    pub(in crate::sim) q_bytes: Vec<i64>,
    pub(in crate::sim) q_frames: Vec<i64>,
    pub(in crate::sim) r_t: Vec<i64>,
    pub(in crate::sim) r_flow: Vec<u32>,
    pub(in crate::sim) r_cr: Vec<f64>,
    pub(in crate::sim) r_tr: Vec<f64>,
    pub(in crate::sim) r_active: Vec<bool>,
    pub(in crate::sim) events: Vec<EvRec>,
    pub(in crate::sim) max_events: usize,
    pub(in crate::sim) events_dropped: u64,
    /// Bit k set: record events of kind k.
    pub(in crate::sim) mask: u32,
    pub(in crate::sim) rec_switch_drop: bool,
}

impl Recorder {
    #[inline]
    pub(in crate::sim) fn wants(&self, kind: u8) -> bool {
        self.mask & (1 << kind) != 0
    }

    /// Count a frame of `size` bytes whose transmission on throughput slot `slot` ends at
    /// `end` in its bin (frames ending after the last bin are not counted).
    #[inline]
    pub(in crate::sim) fn count_tput(&mut self, slot: u32, end: SimTime, size: u32) {
        let c = &mut self.tput_cache[slot as usize];
        if !(c.lo..c.hi).contains(&end) {
            // a new bin: one division (transmissions of a port mostly end in the same bin)
            let bin = end / self.bin;
            if bin >= self.nbins as u64 {
                return;
            }
            c.lo = bin * self.bin;
            c.hi = c.lo + self.bin;
            c.k = slot as usize * self.nbins + bin as usize;
        }
        let k = c.k;
        self.tput_bytes[k] += size as u64;
        self.tput_frames[k] += 1;
    }

    #[inline]
    pub(in crate::sim) fn event(&mut self, r: EvRec) {
        if self.events.len() < self.max_events {
            self.events.push(r);
        } else {
            self.events_dropped += 1;
        }
    }
}

impl Core<'_> {
    /// Sample the queues of `metrics.queue_ports` and the memories of `metrics.memory_switches`.
    #[inline(never)]
    pub(in crate::sim) fn sample_queues(&mut self) {
        let t = self.now;
        // a fixed port's frames that started before the sample have left (one starting now
        // leaves after it: sim/fastpath.rs, `fixed_ports`)
        for i in 0..self.fixed_ports.len() {
            let p = self.fixed_ports[i] as usize;
            self.settle(p, t);
        }
        for &p in &self.rec.queue_ports {
            let (bytes, frames) = self.sampled_len(p as usize, t);
            self.rec.q_t.push(t as i64);
            self.rec.q_port.push(p);
            self.rec.q_bytes.push(bytes as i64);
            self.rec.q_frames.push(frames as i64);
        }
        for (sw, ports) in &self.rec.mem_switches {
            let bytes: u64 = ports
                .iter()
                .map(|&p| self.sampled_len(p as usize, t).0)
                .sum();
            self.rec.m_t.push(t as i64);
            self.rec.m_sw.push(*sw);
            self.rec.m_bytes.push(bytes as i64);
        }
        self.next_qsample = t + self.sc.metrics.queue_interval;
        self.q.push(self.next_qsample, Ev::SampleQueues);
    }

    /// Port `pi`'s queue at the sample of `t`, bytes and frames: as it is, or as a folded
    /// arrival after `t`, handled before the sample, found it (`Fold::snap`).
    #[inline]
    fn sampled_len(&self, pi: usize, t: SimTime) -> (u64, u64) {
        match self.fold.snap.get(pi) {
            Some(&(at, bytes, frames)) if at == t => (bytes, frames),
            _ => {
                let port = &self.ports[pi];
                (port.q_bytes, port.q_frames() as u64)
            }
        }
    }

    /// Sample every reaction point's rates.
    pub(in crate::sim) fn sample_rp_rates(&mut self) {
        let t = self.now;
        for (i, f) in self.flows.iter().enumerate() {
            if let Some(rp) = &f.rp {
                self.rec.r_t.push(t as i64);
                self.rec.r_flow.push(i as u32);
                // a regulator held by a BCN(0,0) back-off sends nothing
                let held = rp.hold_until() > t;
                self.rec
                    .r_cr
                    .push(if held { 0.0 } else { rp.current_rate() });
                self.rec.r_tr.push(rp.target_rate());
                self.rec.r_active.push(rp.is_active());
            }
        }
    }
}
