//! HPCC's sender (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019), the rules
//! of the paper's Algorithm 1 as a sans-IO state machine: it reads the in-band telemetry (INT)
//! echoed by each acknowledgement ([`Ack`], one [`IntHop`] per switch egress port crossed) and
//! answers the window and pacing rate ([`Control`]). See docs/models/hpcc.md.
//!
//! Algorithm 1, as the HPCC++ Internet-Draft draft-miao-tsv-hpcc (github rmiao/hpcc-ietf)
//! restates the paper's listing, with the draft's line numbers, which the tests cite (`L` = the
//! records of the previous ACK, `ack.L` = this ACK's, `T` = the base RTT, `B` = a link's rate):
//!
//! ```text
//! MeasureInflight(ack):                                             lines 1-10
//!     u = 0
//!     for each link i on the path:
//!         txRate = (ack.L[i].txBytes - L[i].txBytes) / (ack.L[i].ts - L[i].ts)
//!         u' = min(ack.L[i].qlen, L[i].qlen) / (ack.L[i].B * T) + txRate / ack.L[i].B
//!         if u' > u: u = u'; tau = ack.L[i].ts - L[i].ts
//!     tau = min(tau, T)
//!     U = (1 - tau/T) * U + tau/T * u                                 (EWMA of max_i u_i)
//! ComputeWind(U, updateWc):                                         lines 11-20
//!     if U >= eta or incStage >= maxStage:
//!         W = Wc / (U/eta) + W_AI;   if updateWc: incStage = 0; Wc = W   (MI/MD, Eqn (4))
//!     else:
//!         W = Wc + W_AI;             if updateWc: incStage += 1; Wc = W  (AI)
//! NewAck(ack):                                                      lines 21-27
//!     if ack.seq > lastUpdateSeq:
//!         W = ComputeWind(MeasureInflight(ack), true);  lastUpdateSeq = snd_nxt
//!     else:
//!         W = ComputeWind(MeasureInflight(ack), false)
//!     R = W / T;  L = ack.L
//! ```
//!
//! The window reacts to every ACK (`W` from the reference window `Wc`), but `Wc` moves once per
//! RTT (when an ACK acknowledges the first frame sent after the last update): several ACKs of
//! one congested RTT do not compound their decrease. Flows start at `W = Wc = W_init = B_NIC * T`
//! (line rate).
//!
//! What Algorithm 1 leaves open, as the HPCC authors' ns-3 does it (`rdma-hw.cc`
//! `HandleAckHp` / `UpdateRateHp`, commit 9f4be2a9), each a named field of [`HpccParams`] where
//! there is a choice:
//!
//! - the first ACK with telemetry only records `L` and sets `lastUpdateSeq = snd_nxt` (there is
//!   no previous record to difference); the window is unchanged;
//! - `W` is kept within `[min_rate * T, B_NIC * T]` (ns-3 bounds the rate to
//!   `[MIN_RATE, line rate]`; `U = 0` gives `W = B_NIC * T`), and so is `Wc`;
//! - `lastUpdateSeq` never moves back (`snd_nxt` does after a go-back-N);
//! - `U` starts at [`HpccParams::u_init`] (ns-3: 1);
//! - variants of the authors' simulator: per-RTT reaction only ([`HpccParams::fast_react`]
//!   false), telemetry of queue-free hops ignored between updates
//!   ([`HpccParams::sample_feedback`]), one reference window per hop
//!   ([`HpccParams::multi_rate`]), and the current instead of the smaller `qlen`
//!   ([`HpccParams::qlen`]).
//!
//! Choices of qcnsim where neither source says anything (docs/models/hpcc.md, Scope and
//! limitations): a record whose `ts` is not after the stored one, or whose link rate is 0, gives
//! no sample for that hop (and is not stored); an ACK whose number of records differs from the
//! stored one (a new path) only stores its records. The per-hop arithmetic is in real numbers on
//! exact records (ns-3 quantises `txBytes` to 128 B, `qlen` to 80 B and `ts` to 24 bits of ns).
//!
//! Sequence numbers are frame indices ([`Ack::next_expected`]); the sender's `snd_nxt` is not in
//! the acknowledgement, so the transport reports it with [`Hpcc::set_snd_nxt`] whenever it
//! changes.

use crate::proto::ack::{Ack, Control, IntHop, MAX_INT_HOPS, NO_WINDOW};
use crate::units::{secs, SimTime};

/// Which queue length enters `u'` (Algorithm 1, line 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QlenSample {
    /// `min(ack.L[i].qlen, L[i].qlen)`: Algorithm 1 ("to filter out noises in qlen"); ns-3 alike.
    Min,
    /// `ack.L[i].qlen`: Eqn (2) read with the current record only.
    Current,
}

impl QlenSample {
    pub const NAMES: &'static [&'static str] = &["min", "current"];

    pub fn name(self) -> &'static str {
        match self {
            QlenSample::Min => "min",
            QlenSample::Current => "current",
        }
    }

    pub fn from_name(s: &str) -> Option<QlenSample> {
        match s {
            "min" => Some(QlenSample::Min),
            "current" => Some(QlenSample::Current),
            _ => None,
        }
    }
}

/// The default `N` of the rule of thumb `W_AI = W_init (1 - eta) / N`: with `eta = 0.95` it gives
/// the additive increase of the authors' `run.py` (`RATE_AI = 10 * bw / 25` Mb/s for `bw` Gb/s
/// NICs, i.e. `B (1 - 0.95) / 125`; `W_AI = RATE_AI * T`).
pub const DEFAULT_N: u32 = 125;

/// The parameters of one HPCC sender (one flow: its NIC's line rate and its base RTT).
#[derive(Debug, Clone, PartialEq)]
pub struct HpccParams {
    /// `B_NIC`, the sender NIC's line rate, bit/s: `W_init = B_NIC * T`, and the highest rate.
    pub line_rate_bps: f64,
    /// `T`, the base RTT (ps): the EWMA's horizon, `R = W / T`, the queue's normalisation.
    pub t_ps: SimTime,
    /// `eta`, the target utilisation (paper: 95 %).
    pub eta: f64,
    /// `maxStage`: additive-increase rounds before a multiplicative increase (0: always MI/MD).
    pub max_stage: u32,
    /// `W_AI`, the additive increase, bytes.
    pub w_ai_bytes: f64,
    /// The lowest rate (ns-3 `MIN_RATE`): `W >= min_rate * T`.
    pub min_rate_bps: f64,
    /// `U` before the first sample (ns-3 `hp.u = 1`; the paper gives none).
    pub u_init: f64,
    /// Which queue length enters `u'`.
    pub qlen: QlenSample,
    /// React to every ACK (Algorithm 1; ns-3 `FAST_REACT 1`), or only to the ACK that ends an
    /// RTT (`FAST_REACT 0`: the ACKs in between change nothing, not even `L` or `U`).
    pub fast_react: bool,
    /// ns-3 `SAMPLE_FEEDBACK 1`: between updates, a hop whose record has `qlen = 0` is skipped
    /// (neither `U` nor its `L` change); an ACK whose hops are all skipped changes nothing.
    pub sample_feedback: bool,
    /// ns-3 `MULTI_RATE 1`: each hop has its own `U`, `Wc` and `incStage`; `W` is the smallest
    /// of the hops' windows (a hop skipped by `sample_feedback` offers its `Wc`).
    pub multi_rate: bool,
    /// Pace at `R = W / T` (ns-3 `RATE_BOUND 1`); false: the rate limiter stays at line rate.
    pub rate_bound: bool,
    /// Limit the bytes in flight to `W` (ns-3 `HAS_WIN 1`); false: no window.
    pub has_win: bool,
    /// INT bytes every data frame (and, in ns-3, every ACK) carries whatever its hop count.
    pub int_bytes: u32,
    /// INT bytes added per switch hop crossed.
    pub int_bytes_per_hop: u32,
}

impl HpccParams {
    /// qcnsim's defaults (docs/models/hpcc.md) for a NIC of `line_rate_bps` and a base RTT
    /// `t_ps`: the paper's Algorithm 1 with the settings of its simulations, the authors'
    /// `run.py` (eta 95 %, maxStage 0, `W_AI = W_init (1 - eta) / 125`, min rate 1 Gb/s or the
    /// line rate if lower, per-ACK reaction, one rate, 42 B of INT per frame).
    pub fn defaults(line_rate_bps: f64, t_ps: SimTime) -> HpccParams {
        let eta = 0.95;
        let w_init = line_rate_bps / 8.0 * secs(t_ps);
        HpccParams {
            line_rate_bps,
            t_ps,
            eta,
            max_stage: 0,
            w_ai_bytes: w_ai_rule(w_init, eta, DEFAULT_N),
            min_rate_bps: 1e9_f64.min(line_rate_bps),
            u_init: 1.0,
            qlen: QlenSample::Min,
            fast_react: true,
            sample_feedback: false,
            multi_rate: false,
            rate_bound: true,
            has_win: true,
            int_bytes: 42,
            int_bytes_per_hop: 0,
        }
    }

    /// `W_init = B_NIC * T`, bytes: the window a flow starts with, and the largest.
    pub fn w_init(&self) -> f64 {
        self.line_rate_bps / 8.0 * secs(self.t_ps)
    }

    /// The smallest window, `min_rate * T`, bytes.
    pub fn w_min(&self) -> f64 {
        self.min_rate_bps / 8.0 * secs(self.t_ps)
    }

    /// INT bytes on the wire of a frame that crossed `hops` switch egress ports.
    pub fn int_wire_bytes(&self, hops: u8) -> u32 {
        self.int_bytes + self.int_bytes_per_hop * hops as u32
    }

    /// What makes the rules meaningless.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.line_rate_bps > 0.0 && self.line_rate_bps.is_finite()) {
            return Err(format!("line rate {} bit/s: above 0", self.line_rate_bps));
        }
        if self.t_ps == 0 {
            return Err("base RTT T = 0: above 0".into());
        }
        if !(self.eta > 0.0 && self.eta <= 1.0) {
            return Err(format!("eta = {}: in (0, 1]", self.eta));
        }
        if !(self.w_ai_bytes >= 0.0 && self.w_ai_bytes.is_finite()) {
            return Err(format!("W_AI = {} B: 0 or more", self.w_ai_bytes));
        }
        if !(self.min_rate_bps > 0.0 && self.min_rate_bps <= self.line_rate_bps) {
            return Err(format!(
                "min rate {} bit/s: above 0 and at most the line rate {} bit/s",
                self.min_rate_bps, self.line_rate_bps
            ));
        }
        if !(self.u_init >= 0.0 && self.u_init.is_finite()) {
            return Err(format!("U(0) = {}: 0 or more", self.u_init));
        }
        Ok(())
    }
}

/// The paper's rule of thumb for the additive increase, `W_AI = W_init (1 - eta) / N` (as the
/// HPCC++ draft's "Configuration Parameters" restate it): `N` flows adding `W_AI` per RTT stay
/// within the `1 - eta` headroom. Bytes.
pub fn w_ai_rule(w_init_bytes: f64, eta: f64, n: u32) -> f64 {
    w_init_bytes * (1.0 - eta) / n.max(1) as f64
}

/// A path's base RTT as the HPCC authors' ns-3 computes `T` (`third.cc`: `rtt = 2 * delay +
/// txDelay`): twice the sum of the links' propagation delays, plus the serialisation of one
/// `frame_bytes` frame at each link of the way there (ns-3 uses the payload size,
/// `PACKET_PAYLOAD_SIZE`). `links` are (propagation delay, rate in bit/s), source to receiver.
pub fn base_rtt(links: &[(SimTime, f64)], frame_bytes: u64) -> SimTime {
    links
        .iter()
        .map(|&(d, r)| 2 * d + crate::units::tx_time_f(frame_bytes, r))
        .sum()
}

/// `u'` of one hop and its `tau` (Algorithm 1, lines 4-5) from the stored record `prev` and the
/// new one `cur`; `None` when the pair gives no sample (`cur.ts <= prev.ts`, or a link rate
/// of 0).
pub fn hop_utilisation(
    prev: &IntHop,
    cur: &IntHop,
    t_ps: SimTime,
    qlen: QlenSample,
) -> Option<(f64, SimTime)> {
    if cur.ts <= prev.ts || cur.rate_bps == 0 {
        return None;
    }
    let tau = cur.ts - prev.ts;
    let b = cur.rate_bps as f64;
    let tx_rate = cur.tx_bytes.saturating_sub(prev.tx_bytes) as f64 * 8.0 / secs(tau);
    let q = match qlen {
        QlenSample::Min => cur.qlen.min(prev.qlen),
        QlenSample::Current => cur.qlen,
    };
    Some((q as f64 * 8.0 / (b * secs(t_ps)) + tx_rate / b, tau))
}

/// The EWMA of line 9: `U = (1 - tau/T) U + tau/T u` with `tau = min(tau, T)`.
pub fn ewma(u_before: f64, u: f64, tau: SimTime, t_ps: SimTime) -> f64 {
    let tau = tau.min(t_ps);
    let w = tau as f64 / t_ps as f64;
    (1.0 - w) * u_before + w * u
}

/// ComputeWind (lines 11-20) from the reference window `wc` and `inc_stage`: the new window,
/// bounded to `[W_min, W_init]`, and the `incStage` an update would store.
pub fn compute_wind(p: &HpccParams, wc: f64, inc_stage: u32, u: f64) -> (f64, u32) {
    let c = u / p.eta;
    let (w, stage) = if c >= 1.0 || inc_stage >= p.max_stage {
        // c = 0 (an idle path): W is infinite until bounded by W_init below
        (wc / c + p.w_ai_bytes, 0)
    } else {
        (wc + p.w_ai_bytes, inc_stage + 1)
    };
    (w.min(p.w_init()).max(p.w_min()), stage)
}

/// One hop's state with `multi_rate`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct HopState {
    u: f64,
    wc: f64,
    inc_stage: u32,
}

/// The sender state of one HPCC flow.
#[derive(Debug, Clone)]
pub struct Hpcc {
    /// `W`, bytes (real).
    w: f64,
    /// `Wc`, the reference window.
    wc: f64,
    /// `U`, the EWMA of the normalised inflight bytes.
    u: f64,
    inc_stage: u32,
    /// `lastUpdateSeq`; `None` before the first ACK with telemetry.
    last_update_seq: Option<u32>,
    /// The next frame index the sender will send (reported by the transport).
    snd_nxt: u32,
    /// `L`, the stored records, and how many there are.
    links: [IntHop; MAX_INT_HOPS],
    n_links: usize,
    /// Per-hop state (`multi_rate`).
    hops: [HopState; MAX_INT_HOPS],
    multi_rate: bool,
}

impl Hpcc {
    /// A flow before its first frame: `W = Wc = W_init` (line rate), `U = u_init`.
    pub fn new(p: &HpccParams) -> Hpcc {
        let w = p.w_init();
        Hpcc {
            w,
            wc: w,
            u: p.u_init,
            inc_stage: 0,
            last_update_seq: None,
            snd_nxt: 0,
            links: [IntHop::default(); MAX_INT_HOPS],
            n_links: 0,
            hops: [HopState {
                u: p.u_init,
                wc: w,
                inc_stage: 0,
            }; MAX_INT_HOPS],
            multi_rate: p.multi_rate,
        }
    }

    /// The sender's `snd_nxt` (frame index of the next new frame) after it changed: a frame was
    /// sent, or go-back-N moved it back.
    pub fn set_snd_nxt(&mut self, next_seq: u32) {
        self.snd_nxt = next_seq;
    }

    /// The window `W`, bytes (real).
    pub fn window(&self) -> f64 {
        self.w
    }

    /// The reference window `Wc` (with `multi_rate`: the smallest of the hops').
    pub fn reference_window(&self) -> f64 {
        if self.multi_rate && self.n_links > 0 {
            return self.hops[..self.n_links]
                .iter()
                .fold(f64::INFINITY, |a, h| a.min(h.wc));
        }
        self.wc
    }

    /// `U` (with `multi_rate` unused: see [`Hpcc::hop_u`]).
    pub fn u(&self) -> f64 {
        self.u
    }

    /// Hop `i`'s `U` with `multi_rate`.
    pub fn hop_u(&self, i: usize) -> f64 {
        self.hops[i].u
    }

    /// `incStage` (with `multi_rate` unused: each hop has its own).
    pub fn inc_stage(&self) -> u32 {
        self.inc_stage
    }

    pub fn last_update_seq(&self) -> Option<u32> {
        self.last_update_seq
    }

    /// The window and rate in force: `W` (whole bytes, at least 1) and `R = W / T`.
    pub fn control(&self, p: &HpccParams) -> Control {
        Control {
            window_bytes: if p.has_win {
                (self.w as u64).max(1)
            } else {
                NO_WINDOW
            },
            rate_bps: if p.rate_bound {
                (self.w * 8.0 / secs(p.t_ps)).min(p.line_rate_bps)
            } else {
                p.line_rate_bps
            },
        }
    }

    fn store(&mut self, recs: &[IntHop]) {
        self.links[..recs.len()].copy_from_slice(recs);
        self.n_links = recs.len();
    }

    /// NewAck (lines 21-27): an acknowledgement arrives; the window and rate after it.
    pub fn on_ack(&mut self, p: &HpccParams, ack: &Ack) -> Control {
        let recs = ack.int_records();
        if recs.is_empty() {
            return self.control(p);
        }
        let Some(last) = self.last_update_seq else {
            // the first ACK with telemetry: L = ack.L, lastUpdateSeq = snd_nxt
            self.store(recs);
            self.last_update_seq = Some(self.snd_nxt);
            return self.control(p);
        };
        if recs.len() != self.n_links {
            // another path: nothing to difference against
            self.store(recs);
            return self.control(p);
        }
        let update_wc = ack.next_expected > last;
        if update_wc || p.fast_react {
            let fast = !update_wc;
            if p.multi_rate {
                self.react_per_hop(p, recs, fast, update_wc);
            } else {
                self.react(p, recs, fast, update_wc);
            }
        }
        if update_wc {
            self.last_update_seq = Some(last.max(self.snd_nxt));
        }
        self.control(p)
    }

    /// Algorithm 1 with one `U` and one `Wc`.
    fn react(&mut self, p: &HpccParams, recs: &[IntHop], fast: bool, update_wc: bool) {
        let (mut u_max, mut tau_max, mut any) = (0.0, 0, false);
        for (i, cur) in recs.iter().enumerate() {
            if p.sample_feedback && fast && cur.qlen == 0 {
                continue;
            }
            let Some((u, tau)) = hop_utilisation(&self.links[i], cur, p.t_ps, p.qlen) else {
                continue;
            };
            any = true;
            if u > u_max {
                u_max = u;
                tau_max = tau;
            }
            self.links[i] = *cur;
        }
        if !any {
            return;
        }
        self.u = ewma(self.u, u_max, tau_max, p.t_ps);
        let (w, stage) = compute_wind(p, self.wc, self.inc_stage, self.u);
        self.w = w;
        if update_wc {
            self.wc = w;
            self.inc_stage = stage;
        }
    }

    /// ns-3's `MULTI_RATE 1`: each hop its own `U`, `Wc` and `incStage`; `W` the smallest.
    fn react_per_hop(&mut self, p: &HpccParams, recs: &[IntHop], fast: bool, update_wc: bool) {
        let mut next = [None; MAX_INT_HOPS];
        for (i, cur) in recs.iter().enumerate() {
            if p.sample_feedback && fast && cur.qlen == 0 {
                continue;
            }
            let Some((u, tau)) = hop_utilisation(&self.links[i], cur, p.t_ps, p.qlen) else {
                continue;
            };
            let h = &mut self.hops[i];
            h.u = ewma(h.u, u, tau, p.t_ps);
            next[i] = Some(compute_wind(p, h.wc, h.inc_stage, h.u));
            self.links[i] = *cur;
        }
        if next[..recs.len()].iter().all(Option::is_none) {
            return;
        }
        let mut w = p.w_init();
        for (i, n) in next[..recs.len()].iter().enumerate() {
            w = w.min(n.map_or(self.hops[i].wc, |(wi, _)| wi));
        }
        self.w = w;
        if update_wc {
            for (i, n) in next[..recs.len()].iter().enumerate() {
                if let Some((wi, stage)) = *n {
                    self.hops[i].wc = wi;
                    self.hops[i].inc_stage = stage;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{NS, US};
    use proptest::prelude::*;

    const G100: u64 = 100_000_000_000;
    /// T = 10 us at 100 Gb/s: W_init = 125,000 B; u' = txRate/B + qlen / 125,000 B.
    const T: SimTime = 10 * US;
    const W_INIT: f64 = 125_000.0;
    /// The queue that adds 0.9 to u' (u' = 1.9 = 2 eta at line rate).
    const Q09: u64 = 112_500;

    /// W_AI = 100 B for round numbers.
    fn params() -> HpccParams {
        HpccParams {
            w_ai_bytes: 100.0,
            ..HpccParams::defaults(G100 as f64, T)
        }
    }

    fn rec(qlen: u64, tx_bytes: u64, ts: SimTime) -> IntHop {
        IntHop {
            qlen,
            tx_bytes,
            ts,
            rate_bps: G100,
        }
    }

    /// A 100 G egress port whose records the tests write: each [`Link::next`] is the record
    /// `dt` later, the port having sent at `txf` of its rate meanwhile and holding `qlen`.
    struct Link {
        tx: u64,
        ts: SimTime,
    }

    impl Link {
        fn new() -> Link {
            Link { tx: 0, ts: 0 }
        }

        fn next(&mut self, dt: SimTime, txf: f64, qlen: u64) -> IntHop {
            self.tx += (txf * 1e11 / 8.0 * secs(dt)).round() as u64;
            self.ts += dt;
            rec(qlen, self.tx, self.ts)
        }
    }

    fn ack(next_expected: u32, recs: &[IntHop]) -> Ack {
        let mut a = Ack::plain(0, next_expected, 1000, 0);
        a.int[..recs.len()].copy_from_slice(recs);
        a.n_int = recs.len() as u8;
        a.hops = recs.len() as u8;
        a
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let p = HpccParams::defaults(G100 as f64, T);
        assert!(close(p.w_init(), W_INIT));
        assert_eq!(p.eta, 0.95);
        assert_eq!(p.max_stage, 0);
        // W_init (1 - eta) / 125 = 50 B: run.py's RATE_AI of 40 Mb/s at 100 G, times T
        assert!(close(p.w_ai_bytes, 50.0));
        assert!(close(p.w_ai_bytes, 40e6 / 8.0 * 10e-6));
        assert_eq!(p.min_rate_bps, 1e9);
        assert!(close(p.w_min(), 1250.0));
        assert_eq!(p.u_init, 1.0);
        assert_eq!(p.qlen, QlenSample::Min);
        assert!(p.fast_react && !p.sample_feedback && !p.multi_rate);
        assert!(p.rate_bound && p.has_win);
        // 5 hop slots of 8 B + 2 B of hop count, whatever the path
        assert_eq!(p.int_wire_bytes(1), 42);
        assert_eq!(p.int_wire_bytes(5), 42);
        let per_hop = HpccParams {
            int_bytes: 2,
            int_bytes_per_hop: 8,
            ..p.clone()
        };
        assert_eq!(per_hop.int_wire_bytes(5), 42);
        assert_eq!(per_hop.int_wire_bytes(3), 26);
        assert!(p.validate().is_ok());
        // a slow NIC: the minimum is not above the line rate
        assert_eq!(HpccParams::defaults(1e8, T).min_rate_bps, 1e8);
        for name in QlenSample::NAMES {
            assert_eq!(QlenSample::from_name(name).unwrap().name(), *name);
        }
    }

    #[test]
    fn validation_names_what_is_wrong() {
        let p = params();
        let bad = [
            HpccParams {
                eta: 0.0,
                ..p.clone()
            },
            HpccParams {
                eta: 1.5,
                ..p.clone()
            },
            HpccParams {
                t_ps: 0,
                ..p.clone()
            },
            HpccParams {
                w_ai_bytes: -1.0,
                ..p.clone()
            },
            HpccParams {
                min_rate_bps: 2e11,
                ..p.clone()
            },
            HpccParams {
                u_init: f64::NAN,
                ..p.clone()
            },
            HpccParams {
                line_rate_bps: 0.0,
                ..p.clone()
            },
        ];
        for b in bad {
            assert!(b.validate().is_err(), "{b:?}");
        }
    }

    /// W_AI = W_init (1 - eta) / N.
    #[test]
    fn rule_w_ai_is_the_headroom_shared_by_n_flows() {
        // (W_init, eta, N, W_AI)
        let table: &[(f64, f64, u32, f64)] = &[
            (125_000.0, 0.95, 125, 50.0),
            (125_000.0, 0.95, 1, 6_250.0),
            (150_000.0, 0.99, 100, 15.0),
            (150_000.0, 1.0, 100, 0.0),
            (150_000.0, 0.95, 0, 7_500.0), // N = 0 read as 1
        ];
        for &(w, eta, n, want) in table {
            assert!(close(w_ai_rule(w, eta, n), want), "{w} {eta} {n}");
        }
    }

    /// T of the HPCC paper's fat-tree (mix/fat.txt: 1 us links, 100 G to the hosts, 400 G
    /// between switches; six links between pods) with 1000 B frames: 12.24 us, W_init at 100 G
    /// 153,000 B, and run.py's W_AI (40 Mb/s x T) 61.2 B.
    #[test]
    fn base_rtt_of_the_papers_fat_tree() {
        let us = US;
        let path = [
            (us, 1e11),
            (us, 4e11),
            (us, 4e11),
            (us, 4e11),
            (us, 4e11),
            (us, 1e11),
        ];
        let t = base_rtt(&path, 1000);
        assert_eq!(t, 12_240 * NS);
        let p = HpccParams::defaults(1e11, t);
        assert!(close(p.w_init(), 153_000.0));
        assert!(close(p.w_ai_bytes, 61.2), "{}", p.w_ai_bytes);
        // within a rack: two 100 G links
        assert_eq!(base_rtt(&path[..1].repeat(2), 1000), 4_160 * NS);
    }

    /// Lines 4-5: txRate = dTxBytes / dts; u' = min(qlen) / (B T) + txRate / B.
    #[test]
    fn rule_hop_utilisation() {
        let us = US;
        // (L[i], ack.L[i], qlen rule, (u', tau))
        type Row = (IntHop, IntHop, QlenSample, Option<(f64, SimTime)>);
        let table: &[Row] = &[
            // 12,500 B in 1 us at 100 G: txRate = B, no queue
            (
                rec(0, 0, 0),
                rec(0, 12_500, us),
                QlenSample::Min,
                Some((1.0, us)),
            ),
            // half the line rate, 62,500 B queued in both: 0.5 + 62,500 / 125,000
            (
                rec(62_500, 1_000, 2 * us),
                rec(62_500, 7_250, 3 * us),
                QlenSample::Min,
                Some((1.0, us)),
            ),
            // a queue in one record only: min() reads 0, current() the new record's
            (
                rec(125_000, 0, 0),
                rec(0, 12_500, us),
                QlenSample::Min,
                Some((1.0, us)),
            ),
            (
                rec(0, 0, 0),
                rec(125_000, 12_500, us),
                QlenSample::Min,
                Some((1.0, us)),
            ),
            (
                rec(0, 0, 0),
                rec(125_000, 12_500, us),
                QlenSample::Current,
                Some((2.0, us)),
            ),
            (
                rec(125_000, 0, 0),
                rec(0, 12_500, us),
                QlenSample::Current,
                Some((1.0, us)),
            ),
            // an idle hop over 10 us
            (
                rec(0, 500, 0),
                rec(0, 500, 10 * us),
                QlenSample::Min,
                Some((0.0, 10 * us)),
            ),
            // a record not newer than the stored one: no sample
            (rec(0, 0, us), rec(0, 12_500, us), QlenSample::Min, None),
            (rec(0, 0, 2 * us), rec(0, 12_500, us), QlenSample::Min, None),
        ];
        for (i, (prev, cur, q, want)) in table.iter().enumerate() {
            let got = hop_utilisation(prev, cur, T, *q);
            match (got, want) {
                (Some((u, tau)), Some((wu, wtau))) => {
                    assert!(close(u, *wu) && tau == *wtau, "row {i}: {got:?}")
                }
                (None, None) => {}
                _ => panic!("row {i}: {got:?} want {want:?}"),
            }
        }
        // a record of a link of rate 0 gives no sample
        let zero = IntHop {
            rate_bps: 0,
            ..rec(0, 12_500, us)
        };
        assert_eq!(
            hop_utilisation(&rec(0, 0, 0), &zero, T, QlenSample::Min),
            None
        );
    }

    /// Lines 8-9: tau = min(tau, T); U = (1 - tau/T) U + tau/T u.
    #[test]
    fn rule_ewma() {
        // (U before, u, tau, U after)
        let table: &[(f64, f64, SimTime, f64)] = &[
            (1.0, 0.5, T, 0.5),          // a whole RTT: U = u
            (1.0, 0.5, 3 * T, 0.5),      // tau capped at T
            (1.0, 0.5, T / 4, 0.875),    // a quarter RTT
            (0.2, 1.0, T / 10, 0.28),    // a tenth
            (0.7, 3.0, 0, 0.7),          // no time, no weight
            (0.95, 0.95, 80 * NS, 0.95), // a fixed point
        ];
        for (i, &(before, u, tau, want)) in table.iter().enumerate() {
            let got = ewma(before, u, tau, T);
            assert!(close(got, want), "row {i}: {got} want {want}");
        }
    }

    /// Lines 11-20: W = Wc / (U/eta) + W_AI if U >= eta or incStage >= maxStage, else
    /// W = Wc + W_AI (W_AI = 100 B, W within [1,250, 125,000] B).
    #[test]
    fn rule_compute_wind() {
        // (maxStage, Wc, incStage, U, W, the incStage an update stores)
        let table: &[(u32, f64, u32, f64, f64, u32)] = &[
            // U >= eta: multiplicative decrease
            (0, 100_000.0, 0, 1.9, 50_100.0, 0),
            (0, 100_000.0, 0, 0.95, 100_100.0, 0), // U = eta: W_AI only
            (5, 100_000.0, 3, 1.9, 50_100.0, 0),   // a decrease resets the stage
            // maxStage = 0: U < eta multiplies at once
            (0, 40_000.0, 0, 0.475, 80_100.0, 0),
            (0, 100_000.0, 0, 0.475, 125_000.0, 0), // bounded by W_init
            (0, 100_000.0, 0, 0.0, 125_000.0, 0),   // an idle path: W_init
            // maxStage = 5: AI while incStage < 5, then MI
            (5, 40_000.0, 0, 0.475, 40_100.0, 1),
            (5, 40_000.0, 4, 0.475, 40_100.0, 5),
            (5, 40_000.0, 5, 0.475, 80_100.0, 0),
            (5, 40_000.0, 9, 0.475, 80_100.0, 0),
            // bounded below by min_rate * T
            (0, 2_000.0, 0, 9.5, 1_250.0, 0),
        ];
        for (i, &(ms, wc, st, u, w, st2)) in table.iter().enumerate() {
            let p = HpccParams {
                max_stage: ms,
                ..params()
            };
            let (gw, gs) = compute_wind(&p, wc, st, u);
            assert!(
                close(gw, w) && gs == st2,
                "row {i}: ({gw}, {gs}) want ({w}, {st2})"
            );
        }
    }

    /// Lines 3-7: the hop with the largest u' sets u and tau.
    #[test]
    fn rule_measure_inflight_takes_the_most_loaded_hop() {
        let p = HpccParams {
            u_init: 0.0,
            ..params()
        };
        // hop 0 at line rate over 5 us; hop 1 at line rate with 125,000 B queued over 10 us
        let mut h = Hpcc::new(&p);
        h.set_snd_nxt(50);
        h.on_ack(&p, &ack(1, &[rec(0, 0, 0), rec(125_000, 0, 0)]));
        h.on_ack(
            &p,
            &ack(2, &[rec(0, 62_500, 5 * US), rec(125_000, 125_000, T)]),
        );
        // hop 1: u' = 1 + 1 with tau = T: U = 2
        assert!(close(h.u(), 2.0), "{}", h.u());
        // hop 0 the busier (its queue not in both records: min() = 0): u' = 1, tau = T/2
        let mut h = Hpcc::new(&p);
        h.set_snd_nxt(50);
        h.on_ack(&p, &ack(1, &[rec(0, 0, 0), rec(0, 0, 0)]));
        h.on_ack(&p, &ack(2, &[rec(125_000, 62_500, 5 * US), rec(0, 0, T)]));
        assert!(close(h.u(), 0.5), "{}", h.u());
    }

    /// Lines 21-27 (FAST_REACT 1, the paper): every ACK sets W from Wc; Wc moves once per RTT,
    /// when an ACK passes lastUpdateSeq. Records T apart (tau = T: U = u).
    #[test]
    fn rule_new_ack_per_ack_reaction_with_a_per_rtt_reference() {
        let p = params();
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        // (snd_nxt, next_expected, txRate/B, qlen, W after, Wc after, lastUpdateSeq after)
        let rows: &[(u32, u32, f64, u64, f64, f64, u32)] = &[
            // the first ACK: L recorded, lastUpdateSeq = snd_nxt, W unchanged
            (100, 1, 1.0, Q09, W_INIT, W_INIT, 100),
            // U = 1.9 = 2 eta: W = Wc/2 + W_AI; Wc unchanged
            (100, 2, 1.0, Q09, 62_600.0, W_INIT, 100),
            // again within the RTT: the same W, the decrease not compounded (not 31,350)
            (100, 3, 1.0, Q09, 62_600.0, W_INIT, 100),
            (110, 50, 1.0, Q09, 62_600.0, W_INIT, 100),
            // the ACK of frame 100 (next_expected 101 > 100): Wc = W, lastUpdateSeq = snd_nxt
            (160, 101, 1.0, Q09, 62_600.0, 62_600.0, 160),
            // the next RTT reacts from the new Wc
            (160, 102, 1.0, Q09, 31_400.0, 62_600.0, 160),
            // U = eta at the update (the queue gone: min() = 0): W = Wc + W_AI
            (200, 161, 0.95, 0, 62_700.0, 62_700.0, 200),
            // U = eta/2 within the RTT: MI (maxStage 0) from Wc, bounded by W_init
            (200, 170, 0.475, 0, 125_000.0, 62_700.0, 200),
        ];
        for (i, &(nxt, ne, txf, q, w, wc, lus)) in rows.iter().enumerate() {
            h.set_snd_nxt(nxt);
            let c = h.on_ack(&p, &ack(ne, &[l.next(T, txf, q)]));
            assert!(close(h.window(), w), "row {i}: W {} want {w}", h.window());
            let gwc = h.reference_window();
            assert!(close(gwc, wc), "row {i}: Wc {gwc} want {wc}");
            assert_eq!(h.last_update_seq(), Some(lus), "row {i}");
            assert!((c.window_bytes as f64 - w).abs() <= 1.0, "row {i}");
            assert!(close(c.rate_bps, w * 8.0 / 10e-6), "row {i}: R = W/T");
        }
    }

    /// FAST_REACT 0: the ACKs between updates change nothing (not L, not U); the update
    /// differences the records over the whole RTT.
    #[test]
    fn rule_new_ack_per_rtt_only() {
        let p = HpccParams {
            fast_react: false,
            ..params()
        };
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        h.set_snd_nxt(100);
        h.on_ack(&p, &ack(1, &[l.next(0, 1.0, Q09)]));
        for k in 1..=3 {
            let c = h.on_ack(&p, &ack(1 + k, &[l.next(T / 4, 1.0, Q09)]));
            assert!(close(h.window(), W_INIT) && c.window_bytes == 125_000);
            assert_eq!(h.u(), 1.0);
        }
        // the update: against the first record, tau = T, u = 1.9: W = Wc/2 + W_AI
        h.set_snd_nxt(150);
        h.on_ack(&p, &ack(101, &[l.next(T / 4, 1.0, Q09)]));
        assert!(close(h.u(), 1.9), "{}", h.u());
        assert!(close(h.window(), 62_600.0) && close(h.reference_window(), 62_600.0));
        assert_eq!(h.last_update_seq(), Some(150));
    }

    /// The same ACKs with FAST_REACT 1 react at the first of them, one RTT earlier (the
    /// paper's point), and the EWMA weighs that sample by tau/T.
    #[test]
    fn per_ack_reacts_within_the_rtt_and_weighs_samples_by_tau() {
        let p = params();
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        h.set_snd_nxt(100);
        h.on_ack(&p, &ack(1, &[l.next(0, 1.0, Q09)]));
        h.on_ack(&p, &ack(2, &[l.next(T / 4, 1.0, Q09)]));
        // U = 0.75 * 1 + 0.25 * 1.9 = 1.225: W = 125,000 * 0.95 / 1.225 + 100
        assert!(close(h.u(), 1.225), "{}", h.u());
        assert!(close(h.window(), W_INIT * 0.95 / 1.225 + 100.0));
        assert!(close(h.reference_window(), W_INIT));
    }

    #[test]
    fn lastupdateseq_never_moves_back_after_go_back_n() {
        let p = params();
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        h.set_snd_nxt(100);
        h.on_ack(&p, &ack(1, &[l.next(T, 0.95, 0)]));
        h.set_snd_nxt(150);
        h.on_ack(&p, &ack(101, &[l.next(T, 0.95, 0)]));
        assert_eq!(h.last_update_seq(), Some(150));
        // go-back-N to frame 120, then the ACK of frame 150 arrives: an update, 150 kept
        h.set_snd_nxt(120);
        h.on_ack(&p, &ack(151, &[l.next(T, 0.95, 0)]));
        assert_eq!(h.last_update_seq(), Some(150));
    }

    #[test]
    fn acks_without_telemetry_or_on_a_new_path_only_store() {
        let p = params();
        let mut h = Hpcc::new(&p);
        h.set_snd_nxt(10);
        // no INT: nothing, not even lastUpdateSeq
        let c = h.on_ack(&p, &ack(1, &[]));
        assert_eq!(h.last_update_seq(), None);
        assert_eq!(c.window_bytes, 125_000);
        assert!(close(c.rate_bps, 1e11));
        h.on_ack(&p, &ack(1, &[rec(0, 0, 0)]));
        // two hops now: stored, no reaction although the queues are huge
        let big = 1_000_000;
        h.on_ack(&p, &ack(2, &[rec(big, 0, US), rec(big, 0, US)]));
        assert!(close(h.window(), W_INIT));
        // the next ACK on that path reacts: hop 0 u' = 8 + 1, tau = T/10: U = 1.8
        h.on_ack(&p, &ack(3, &[rec(big, 12_500, 2 * US), rec(0, 0, 2 * US)]));
        assert!(close(h.u(), 1.8), "{}", h.u());
        assert!(close(h.window(), W_INIT * 0.95 / 1.8 + 100.0));
        // stale records (the same ts): no sample, no change
        let w = h.window();
        h.on_ack(&p, &ack(4, &[rec(0, 99_999, 2 * US), rec(0, 0, 2 * US)]));
        assert_eq!(h.window(), w);
        assert!(close(h.u(), 1.8));
    }

    /// SAMPLE_FEEDBACK 1: between updates a hop with qlen = 0 is skipped (U, W and its L
    /// unchanged); at an update every hop counts.
    #[test]
    fn sample_feedback_skips_queue_free_hops_between_updates_only() {
        let p = HpccParams {
            sample_feedback: true,
            ..params()
        };
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        h.set_snd_nxt(100);
        h.on_ack(&p, &ack(1, &[l.next(0, 1.0, Q09)]));
        h.on_ack(&p, &ack(2, &[l.next(T, 0.2, 0)]));
        assert_eq!(h.u(), 1.0);
        assert!(close(h.window(), W_INIT));
        // queued: differenced against the first record, 2 T back (tau capped at T):
        // txRate = 1.2 * 125,000 B / 20 us = 0.6 B, + 0.9: U = 1.5
        h.on_ack(&p, &ack(3, &[l.next(T, 1.0, Q09)]));
        assert!(close(h.u(), 1.5), "{}", h.u());
        assert!(close(h.window(), W_INIT * 0.95 / 1.5 + 100.0));
        // at the update a queue-free hop is sampled: U = 0.95, W = Wc + W_AI (bounded)
        h.set_snd_nxt(200);
        h.on_ack(&p, &ack(101, &[l.next(T, 0.95, 0)]));
        assert!(close(h.u(), 0.95), "{}", h.u());
        assert!(close(h.window(), W_INIT) && close(h.reference_window(), W_INIT));
    }

    /// MULTI_RATE 1: each hop its own U and Wc; W is the smallest of the hops' windows.
    #[test]
    fn multi_rate_keeps_a_reference_per_hop_and_sends_at_the_smallest() {
        let p = HpccParams {
            multi_rate: true,
            ..params()
        };
        let mut h = Hpcc::new(&p);
        let (mut l0, mut l1) = (Link::new(), Link::new());
        h.set_snd_nxt(100);
        h.on_ack(&p, &ack(1, &[l0.next(0, 1.0, Q09), l1.next(0, 1.0, 0)]));
        // the update: hop 0 u = 1.9 (W0 = 62,600), hop 1 u = 1.0 (W1 = 118,850)
        h.set_snd_nxt(200);
        h.on_ack(&p, &ack(101, &[l0.next(T, 1.0, Q09), l1.next(T, 1.0, 0)]));
        assert!(close(h.hop_u(0), 1.9) && close(h.hop_u(1), 1.0));
        assert!(close(h.window(), 62_600.0), "{}", h.window());
        assert!(close(h.reference_window(), 62_600.0));
        // within the RTT: hop 0's queue gone (u = 1.0): W0 = 62,600 * 0.95 + W_AI, the
        // smaller; the hops' Wc unchanged
        h.on_ack(&p, &ack(102, &[l0.next(T, 1.0, 0), l1.next(T, 1.0, 0)]));
        assert!(close(h.window(), 62_600.0 * 0.95 + 100.0), "{}", h.window());
        assert!(close(h.reference_window(), 62_600.0));
        assert_eq!(h.inc_stage(), 0);
    }

    #[test]
    fn rate_bound_and_has_win_switch_the_limits_off() {
        let p = HpccParams {
            rate_bound: false,
            has_win: false,
            ..params()
        };
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        h.on_ack(&p, &ack(1, &[l.next(0, 1.0, Q09)]));
        let c = h.on_ack(&p, &ack(2, &[l.next(T, 1.0, Q09)]));
        assert!(close(h.window(), 62_600.0));
        assert_eq!(c.window_bytes, NO_WINDOW);
        assert_eq!(c.rate_bps, 1e11);
    }

    /// Updates T apart with the port at `txf` of its rate and `qlen` queued, `fast` ACKs in
    /// between (T apart as well: each sample weighs fully).
    fn rtts(h: &mut Hpcc, p: &HpccParams, l: &mut Link, n: usize, fast: u32, txf: f64, q: u64) {
        for _ in 0..n {
            let lus = h.last_update_seq().unwrap();
            h.set_snd_nxt(lus + 100);
            h.on_ack(p, &ack(lus + 1, &[l.next(T, txf, q)]));
            for j in 0..fast {
                h.on_ack(p, &ack(lus + 2 + j, &[l.next(T, txf, q)]));
            }
        }
    }

    /// U = eta held: W and Wc stay put but for W_AI per RTT.
    #[test]
    fn constant_u_at_eta_is_stable() {
        let p = params();
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        h.set_snd_nxt(1);
        h.on_ack(&p, &ack(0, &[l.next(0, 1.0, Q09)]));
        // one RTT at u = 2 eta halves the window
        rtts(&mut h, &p, &mut l, 1, 3, 1.0, Q09);
        let w0 = h.reference_window();
        assert!(close(w0, 62_600.0));
        for n in 1..=20 {
            rtts(&mut h, &p, &mut l, 1, 3, 0.95, 0);
            assert!(close(h.u(), 0.95));
            assert!(close(h.reference_window(), w0 + 100.0 * n as f64));
            // within the RTT: W = Wc + W_AI
            assert!(close(h.window(), w0 + 100.0 * (n + 1) as f64));
        }
        // without W_AI not even that
        let p0 = HpccParams {
            w_ai_bytes: 0.0,
            ..p.clone()
        };
        let w1 = h.reference_window();
        rtts(&mut h, &p0, &mut l, 10, 3, 0.95, 0);
        assert!(close(h.reference_window(), w1) && close(h.window(), w1));
    }

    /// maxStage = 5: five AI updates, then one MI.
    #[test]
    fn max_stage_five_adds_five_times_then_multiplies() {
        let p = HpccParams {
            max_stage: 5,
            ..params()
        };
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        h.set_snd_nxt(1);
        h.on_ack(&p, &ack(0, &[l.next(0, 1.0, Q09)]));
        rtts(&mut h, &p, &mut l, 1, 0, 1.0, Q09);
        let mut wc = h.reference_window();
        assert!(close(wc, 62_600.0));
        // U = 0.76 = 0.8 eta at each update: AI x 5, then MI (Wc / 0.8)
        for (i, want_stage) in [1, 2, 3, 4, 5, 0].into_iter().enumerate() {
            rtts(&mut h, &p, &mut l, 1, 0, 0.76, 0);
            assert_eq!(h.inc_stage(), want_stage, "update {i}");
            let want = if want_stage == 0 {
                wc / 0.8 + 100.0
            } else {
                wc + 100.0
            };
            assert!(close(h.reference_window(), want), "update {i}");
            wc = h.reference_window();
        }
    }

    /// U > eta: one update cuts by U/eta; held for a few RTTs the window falls geometrically.
    #[test]
    fn above_eta_decreases_multiplicatively_each_rtt() {
        let p = HpccParams {
            w_ai_bytes: 0.0,
            ..params()
        };
        let mut h = Hpcc::new(&p);
        let mut l = Link::new();
        h.set_snd_nxt(1);
        // u = 1.425 = 1.5 eta: the port at line rate with 0.425 BDP queued
        h.on_ack(&p, &ack(0, &[l.next(0, 1.0, 53_125)]));
        let mut wc = W_INIT;
        for _ in 0..4 {
            rtts(&mut h, &p, &mut l, 1, 2, 1.0, 53_125);
            assert!(close(h.reference_window(), wc / 1.5));
            wc /= 1.5;
        }
    }

    /// The fluid single-bottleneck check: N senders, each running [`Hpcc`] on every ACK, share
    /// one 100 Gb/s port whose queue is a byte counter served at the line rate (a FIFO of
    /// 1000 B packets; each ACK carries the port's record at its packet's departure; one-way
    /// delay T/2 each way). A unit-level check of the rules in closed loop, NOT a packet
    /// simulation of a network. Returns the utilisation and the mean queue over the second
    /// half, the senders' U at the end, the bytes each sent in the second half, the largest
    /// queue and when the queue first emptied.
    fn fluid_bottleneck(n: usize, p: &HpccParams, run: SimTime) -> Fluid {
        use std::collections::VecDeque;
        let dt: SimTime = 8 * NS; // a tenth of a packet time at 100 G
        let pkt = 1000.0;
        let one_way = p.t_ps / 2;
        let c_per_dt = 1e11 / 8.0 * secs(dt);
        let mut snd: Vec<Hpcc> = (0..n).map(|_| Hpcc::new(p)).collect();
        let mut credit = vec![pkt; n];
        let mut inflight = vec![0.0; n];
        let mut next_seq = vec![0u32; n];
        let mut acked = vec![0u32; n];
        // on the way to the port: (arrival, sender, seq)
        let mut to_port: VecDeque<(SimTime, usize, u32)> = VecDeque::new();
        // queued at the port: (sender, seq, cumulative bytes arrived with it)
        let mut port: VecDeque<(usize, u32, f64)> = VecDeque::new();
        let (mut arrived, mut departed) = (0.0f64, 0.0f64);
        // ACKs on the way back: (arrival, sender, seq, record)
        let mut back: VecDeque<(SimTime, usize, u32, IntHop)> = VecDeque::new();
        let (mut q_sum, mut tx_sum, mut samples) = (0.0, 0.0, 0.0);
        let mut sent_late = vec![0.0; n];
        let (mut q_peak, mut emptied) = (0.0f64, None);
        let mut t: SimTime = 0;
        while t < run {
            let late = t >= run / 2;
            // senders: pace at R = W/T within the window
            for i in 0..n {
                let c = snd[i].control(p);
                credit[i] = (credit[i] + c.rate_bps / 8.0 * secs(dt)).min(pkt);
                if credit[i] >= pkt && inflight[i] + pkt <= c.window_bytes as f64 {
                    credit[i] -= pkt;
                    inflight[i] += pkt;
                    to_port.push_back((t + one_way, i, next_seq[i]));
                    next_seq[i] += 1;
                    snd[i].set_snd_nxt(next_seq[i]);
                    if late {
                        sent_late[i] += pkt;
                    }
                }
            }
            while to_port.front().is_some_and(|f| f.0 <= t) {
                let (_, i, s) = to_port.pop_front().unwrap();
                arrived += pkt;
                port.push_back((i, s, arrived));
            }
            let before = departed;
            departed = (departed + c_per_dt).min(arrived);
            while port.front().is_some_and(|f| f.2 <= departed) {
                let (i, s, _) = port.pop_front().unwrap();
                let r = IntHop {
                    qlen: (arrived - departed) as u64,
                    tx_bytes: departed as u64,
                    ts: t,
                    rate_bps: G100,
                };
                back.push_back((t + one_way, i, s, r));
            }
            while back.front().is_some_and(|f| f.0 <= t) {
                let (_, i, s, r) = back.pop_front().unwrap();
                acked[i] = acked[i].max(s + 1);
                inflight[i] -= pkt;
                snd[i].on_ack(p, &ack(acked[i], &[r]));
            }
            q_peak = q_peak.max(arrived - departed);
            if emptied.is_none() && q_peak > 0.0 && arrived == departed {
                emptied = Some(t);
            }
            if late {
                q_sum += arrived - departed;
                tx_sum += departed - before;
                samples += 1.0;
            }
            t += dt;
        }
        Fluid {
            util: tx_sum / (samples * c_per_dt),
            q_mean: q_sum / samples,
            u: snd.iter().map(Hpcc::u).collect(),
            sent: sent_late,
            q_peak,
            emptied,
        }
    }

    #[derive(Debug)]
    struct Fluid {
        util: f64,
        q_mean: f64,
        u: Vec<f64>,
        sent: Vec<f64>,
        q_peak: f64,
        emptied: Option<SimTime>,
    }

    #[test]
    fn fluid_bottleneck_converges_to_eta_with_a_near_empty_queue() {
        let p = HpccParams::defaults(G100 as f64, T);
        for n in [2usize, 8] {
            // every sender starts at line rate at once: n x overload
            let f = fluid_bottleneck(n, &p, 3_000 * US);
            let (util, q_mean, u, sent) = (f.util, f.q_mean, f.u, f.sent);
            assert!((0.93..=0.97).contains(&util), "N = {n}: utilisation {util}");
            assert!(
                q_mean < 1_000.0 * n as f64,
                "N = {n}: mean queue {q_mean} B"
            );
            for x in &u {
                assert!((x - 0.95).abs() < 0.03, "N = {n}: U = {u:?}");
            }
            let (lo, hi) = sent
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
            assert!(lo > 0.5 * hi, "N = {n}: shares {sent:?}");
        }
    }

    /// The paper's point in closed loop: reacting on every ACK (from the per-RTT reference
    /// window) drains the start-up queue sooner than reacting once per RTT. Measured: the
    /// queue first empties after 37.5 us (per ACK) against 63.6 us (per RTT) with N = 2, and
    /// 131 us against 226 us with N = 8; both peak at 125,900 B and 875,900 B, the start-up
    /// burst the window allows (N W_init less the BDP in flight), below N W_init.
    #[test]
    fn fluid_bottleneck_per_ack_reaction_drains_sooner_than_per_rtt() {
        for n in [2usize, 8] {
            let run = |fast_react| {
                let p = HpccParams {
                    fast_react,
                    ..HpccParams::defaults(G100 as f64, T)
                };
                fluid_bottleneck(n, &p, 1_000 * US)
            };
            let (ack, rtt) = (run(true), run(false));
            let (ta, tr) = (ack.emptied.unwrap(), rtt.emptied.unwrap());
            assert!(
                (ta as f64) < 0.8 * tr as f64,
                "N = {n}: emptied at {ta} ps per ACK, {tr} ps per RTT"
            );
            for f in [&ack, &rtt] {
                assert!(f.q_peak <= n as f64 * W_INIT, "N = {n}: peak {}", f.q_peak);
            }
        }
    }

    /// One hop's (qlen, tx increment, ts increment, a 10 G link).
    type HopDraw = (u64, u64, SimTime, bool);

    fn hop_strategy() -> impl Strategy<Value = HopDraw> {
        (0u64..2_000_000, 0u64..400_000, 0u64..(3 * T), any::<bool>())
    }

    fn ack_strategy() -> impl Strategy<Value = (Vec<HopDraw>, u32, u32)> {
        (
            proptest::collection::vec(hop_strategy(), 0..=5),
            0u32..4, // next_expected step
            0u32..6, // snd_nxt step
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever the telemetry: W and Wc stay within [min_rate T, W_init], U is finite and
        /// not negative, incStage never passes maxStage, and the control is W and W/T.
        #[test]
        fn window_stays_within_its_bounds(
            acks in proptest::collection::vec(ack_strategy(), 1..200),
            max_stage in 0u32..7,
            eta in 0.5f64..1.0,
            multi_rate in any::<bool>(),
            fast_react in any::<bool>(),
            sample_feedback in any::<bool>(),
            current in any::<bool>(),
        ) {
            let p = HpccParams {
                max_stage,
                eta,
                multi_rate,
                fast_react,
                sample_feedback,
                qlen: if current { QlenSample::Current } else { QlenSample::Min },
                ..params()
            };
            let mut h = Hpcc::new(&p);
            let (mut ne, mut nxt) = (0u32, 0u32);
            let mut state = [(0u64, 0u64); MAX_INT_HOPS];
            for (hops, dne, dnxt) in acks {
                nxt += dnxt;
                ne = (ne + dne).min(nxt);
                h.set_snd_nxt(nxt);
                let recs: Vec<IntHop> = hops
                    .iter()
                    .enumerate()
                    .map(|(i, &(q, dtx, dts, slow))| {
                        state[i].0 += dtx;
                        state[i].1 += dts;
                        IntHop {
                            qlen: q,
                            tx_bytes: state[i].0,
                            ts: state[i].1,
                            rate_bps: if slow { 10_000_000_000 } else { G100 },
                        }
                    })
                    .collect();
                let c = h.on_ack(&p, &ack(ne, &recs));
                let (lo, hi) = (p.w_min() * (1.0 - 1e-12), W_INIT * (1.0 + 1e-12));
                prop_assert!(h.window() >= lo && h.window() <= hi, "W {}", h.window());
                let wc = h.reference_window();
                prop_assert!(wc >= lo && wc <= hi, "Wc {}", wc);
                prop_assert!(h.u().is_finite() && h.u() >= 0.0);
                prop_assert!(h.inc_stage() <= max_stage);
                prop_assert_eq!(c.window_bytes, (h.window() as u64).max(1));
                prop_assert!(c.rate_bps <= 1e11 && c.rate_bps >= 1e9 * (1.0 - 1e-9));
            }
        }

        /// U = k eta (k >= 1) measured over one RTT: the update divides Wc by k (plus W_AI).
        #[test]
        fn above_eta_one_rtt_cuts_by_u_over_eta(k in 1.0f64..20.0, w_ai in 0.0f64..500.0) {
            let p = HpccParams { w_ai_bytes: w_ai, ..params() };
            // u' = txRate/B + qlen/(B T): the port at min(k eta, 1) of its rate, the rest queued
            let txf = (k * 0.95).min(1.0);
            let q = ((k * 0.95 - txf) * W_INIT).round() as u64;
            let mut h = Hpcc::new(&p);
            let mut l = Link::new();
            h.set_snd_nxt(1);
            h.on_ack(&p, &ack(0, &[l.next(0, txf, q)]));
            h.set_snd_nxt(10);
            h.on_ack(&p, &ack(2, &[l.next(T, txf, q)]));
            let u = h.u();
            prop_assert!((u - k * 0.95).abs() < 1e-5, "U {} k eta {}", u, k * 0.95);
            let want = (W_INIT * 0.95 / u + w_ai).clamp(p.w_min(), W_INIT);
            prop_assert!(close(h.reference_window(), want));
            prop_assert!(close(h.window(), want));
        }
    }
}
