//! Congestion management, one subsystem ([`Cm`]): the congestion points of the switch ports
//! (QCN, BCN, DCQCN's marking), the NIC-side feedback variant, DCQCN's notification points and
//! the QCN transient-response variants. One copy of the plumbing (this file), with the
//! mechanism-specific rules in `proto/` and small per-mechanism glue (`sim/cc/qcn.rs`,
//! `sim/cc/bcn.rs`, `sim/cc/dcqcn.rs`, `sim/cc/transient.rs`, `sim/cc/nicfb.rs`). It acts on
//! the data path it borrows (`&mut Core`) and returns what it sends ([`Ctrl`]); the wiring
//! (sim/wiring.rs) queues it.
//!
//! - **CP hook.** The data path's enqueue calls [`Cm::cp_enqueue`] (through the wiring's
//!   `hook_cp`) for every data frame admitted to a port that runs a CP ([`CpState`]); the
//!   mechanism's CP decides whether to send feedback.
//! - **Feedback message.** [`Cm::send_feedback`] builds a control frame of a given kind with
//!   an `i32` payload and the CP's CPID, routes it to the source of the sampled frame through
//!   the strict-priority control queues, and records it. Payload per kind:
//!   `KIND_CNM`: qntzFb (1..63); `KIND_BCN`: Fb in bytes (negative or positive; Fb in pages =
//!   payload / `cc.bcn.page`); `KIND_BCN0`: 0 (BCN(0,0)); `KIND_CONMES` (NIC-side QCN
//!   feedback, sim/cc/nicfb.rs): the CP's Qlen in bytes; `KIND_ECHO` / `KIND_FB99` (SONAR echo,
//!   push-back Fb99, sim/cc/transient.rs): 0. Every message of every mechanism takes this path.
//! - **Reaction.** The wiring hands a message that reaches its source host to
//!   [`Cm::host_react`], which runs the flow's [`Reaction`]; every reaction returns the same
//!   [`RpOutput`] (timer command + rate changed), applied by `Core::rp_output` to the one
//!   per-flow token-bucket rate limiter and the one per-flow reaction timer (`Ev::RpTimer`).

use crate::sim::cc::dcqcn::DcqcnState;
use crate::sim::cc::e2e::E2eState;
use crate::sim::cc::nicfb::NicFbState;
use crate::sim::cc::transient::Transient;
use crate::sim::prelude::*;

pub(in crate::sim) mod bcn;
pub(in crate::sim) mod dcqcn;
pub(in crate::sim) mod delay;
pub(in crate::sim) mod e2e;
pub(in crate::sim) mod hpcc;
pub(in crate::sim) mod nicfb;
pub(in crate::sim) mod qcn;
pub(in crate::sim) mod transient;

use crate::engine::rng::kinds;
use crate::engine::{Rng, StreamId};
use crate::proto::bcn::{BcnCp, BcnRp, BcnRpParams};
use crate::proto::dcqcn::{EcnCp, MarkAt};
use crate::proto::multicast::McFeedback;
use crate::proto::qcn_rp::RpParams;

/// The congestion-point state of one CP port.
pub(in crate::sim) enum CpState {
    Qcn(Cp),
    Bcn(BcnCp),
    /// DCQCN ECN marking (sim/cc/dcqcn.rs).
    Ecn(crate::proto::dcqcn::EcnCp),
    /// DCTCP's marking above K at enqueue (sim/cc/e2e.rs).
    Dctcp,
    /// Telemetry stamped at dequeue (sim/cc/e2e.rs), a port's `ecn` slot.
    Int,
}

/// The congestion-management subsystem: the congestion points of the switch ports (QCN, BCN or
/// DCQCN's ECN marking), the NIC-side feedback variant, DCQCN's notification points and the QCN
/// transient-response state (BA sensors, SONAR, push-back). The reaction points are the flows'
/// (`Flow::rp`: the rate limiter's controller, on the data path).
pub(in crate::sim) struct Cm {
    pub(in crate::sim) cps: Vec<CpState>,
    /// NIC-side QCN feedback (ConMes generators and NIC samplers); empty unless it is on.
    pub(in crate::sim) nicfb: NicFbState,
    /// DCQCN: notification points and counters (empty unless cc.mode = "dcqcn").
    pub(in crate::sim) dc: DcqcnState,
    /// The acknowledged end-to-end modes (DCTCP): senders' windows, receivers' echo, the ACKs'
    /// per-frame stores (empty unless `cc.mode` acknowledges; sim/cc/e2e.rs).
    pub(in crate::sim) e2e: E2eState,
    pub(in crate::sim) tr: Transient,
    /// QCN CPs that sample arrivals (`cc.qcn.cp.samples = "arrivals"`): the wiring hands them
    /// the frames discarded at their full queues; otherwise nothing is called at a discard.
    pub(in crate::sim) cp_sees_discards: bool,
    /// The multicast statistics' CP counters are kept (`cp_enq`, `cp_neg_fb`): the scenario
    /// has multicast groups.
    mc_counts: bool,
    /// Per port: CNMs its CP sent; BCN messages (negative, positive, BCN(0,0)).
    cnm_sent: Vec<u64>,
    /// Per port: data frames its CP saw enqueued (the multicast readings' denominators), and its
    /// QCN CP's samples with Fb < 0 at which the scheme lets it send feedback (standard: every
    /// one; representative multicast feedback: when the CP is the representative, Algorithm 2).
    cp_enq: Vec<u64>,
    cp_neg_fb: Vec<u64>,
    bcn_sent: Vec<[u64; 3]>,
    /// Per flow: CNMs its source received; BCN messages (negative, positive, BCN(0,0)).
    cnm_rx: Vec<u64>,
    bcn_rx: Vec<[u64; 3]>,
}

/// A feedback message ready to leave: the control frame and the port it is queued at (the
/// wiring hands it to the data path's control queue).
#[derive(Clone, Copy, Debug)]
pub(in crate::sim) struct Ctrl {
    pub(in crate::sim) port: usize,
    pub(in crate::sim) pkt: u32,
}

/// A flow's reaction point: the mechanism's state machine with its (per-flow) parameters.
pub(in crate::sim) enum Reaction {
    Qcn {
        rp: Rp,
        p: RpParams,
    },
    Bcn {
        rp: BcnRp,
        p: BcnRpParams,
    },
    /// The rate an end-to-end algorithm sets from its acknowledgements (TIMELY, Swift's
    /// pacing; sim/cc/delay.rs): the limiter paces at it, nothing else.
    E2e {
        rate: f64,
    },
}

impl Reaction {
    /// The rate limiter is allocated (limiting).
    #[inline]
    pub(in crate::sim) fn is_active(&self) -> bool {
        match self {
            Reaction::Qcn { rp, .. } => rp.is_active(),
            Reaction::Bcn { rp, .. } => rp.is_active(),
            Reaction::E2e { .. } => true,
        }
    }

    /// The rate the limiter paces at, bit/s (QCN: CR; BCN: R).
    #[inline]
    pub(in crate::sim) fn current_rate(&self) -> f64 {
        match self {
            Reaction::Qcn { rp, .. } => rp.current_rate(),
            Reaction::Bcn { rp, .. } => rp.rate(),
            Reaction::E2e { rate } => *rate,
        }
    }

    /// QCN: TR. BCN has one rate: R.
    pub(in crate::sim) fn target_rate(&self) -> f64 {
        match self {
            Reaction::Qcn { rp, .. } => rp.target_rate(),
            Reaction::Bcn { rp, .. } => rp.rate(),
            Reaction::E2e { rate } => *rate,
        }
    }

    /// The CPID tag the flow's data frames carry (NONE when untagged).
    #[inline]
    pub(in crate::sim) fn tag(&self) -> u32 {
        match self {
            Reaction::Qcn { .. } | Reaction::E2e { .. } => NONE,
            Reaction::Bcn { rp, .. } => rp.tag(),
        }
    }

    /// No frame may leave the rate limiter before this time (0 = no hold).
    #[inline]
    pub(in crate::sim) fn hold_until(&self) -> SimTime {
        match self {
            Reaction::Qcn { .. } | Reaction::E2e { .. } => 0,
            Reaction::Bcn { rp, .. } => rp.hold_until(),
        }
    }

    pub(in crate::sim) fn start(&mut self, now: SimTime) -> RpOutput {
        match self {
            Reaction::Qcn { rp, p } => rp.start(p, now),
            Reaction::Bcn { .. } | Reaction::E2e { .. } => RpOutput::NONE,
        }
    }

    #[inline]
    pub(in crate::sim) fn on_frame_sent(
        &mut self,
        now: SimTime,
        bytes: u32,
        rl_empty: bool,
    ) -> RpOutput {
        match self {
            Reaction::Qcn { rp, p } => rp.on_frame_sent(p, now, bytes, rl_empty),
            Reaction::Bcn { .. } | Reaction::E2e { .. } => RpOutput::NONE,
        }
    }

    pub(in crate::sim) fn on_timer(&mut self, now: SimTime) -> RpOutput {
        match self {
            Reaction::Qcn { rp, p } => rp.on_timer(p, now),
            Reaction::Bcn { rp, p } => rp.on_timer(p, now),
            Reaction::E2e { .. } => RpOutput::NONE,
        }
    }

    /// The flow's NIC was paused (PAUSE/PFC): QCN freezes its timer (docs/models/pause.md); a BCN
    /// regulator only stops sending (its drift timer runs on).
    /// DCQCN's timers run on (its public models tie them to no PFC state).
    pub(in crate::sim) fn pause(&mut self, now: SimTime) -> RpOutput {
        match self {
            Reaction::Qcn { p, .. } if p.dcqcn.is_some() => RpOutput::NONE,
            Reaction::Qcn { rp, .. } => rp.pause(now),
            Reaction::Bcn { .. } | Reaction::E2e { .. } => RpOutput::NONE,
        }
    }

    /// The flow's NIC resumed.
    pub(in crate::sim) fn resume(&mut self, now: SimTime) -> RpOutput {
        match self {
            Reaction::Qcn { p, .. } if p.dcqcn.is_some() => RpOutput::NONE,
            Reaction::Qcn { rp, .. } => rp.resume(now),
            Reaction::Bcn { .. } | Reaction::E2e { .. } => RpOutput::NONE,
        }
    }
}

/// A flow's rate limiter as congestion management sets it up ([`Cm::reaction`]).
pub(in crate::sim) struct RlSetup {
    pub(in crate::sim) rp: Option<Reaction>,
    /// Representative feedback: data frames carry the RP's F̂b and representative CPID.
    pub(in crate::sim) rep_fb: bool,
    pub(in crate::sim) rl_cap: u64,
    pub(in crate::sim) rl_burst: Option<u64>,
}

impl Cm {
    /// The congestion points of the ports (QCN, BCN or DCQCN's marker, by `cc.mode`), with the
    /// NIC-side feedback, DCQCN and transient-response state; and per port its CP slot and its
    /// marker at dequeue (NONE: none).
    pub(in crate::sim) fn build(sc: &Scenario, seed: u64) -> (Cm, Vec<(u32, u32)>) {
        let qcn = sc.cc == CcMode::Qcn;
        let bcn = sc.cc == CcMode::Bcn;
        let dcqcn = sc.cc == CcMode::Dcqcn;
        let dctcp = sc.cc == CcMode::Dctcp;
        // telemetry stamped at every switch port's dequeue, for an algorithm that reads it
        // (HPCC: sim/cc/hpcc.rs)
        let int = sc.cc == CcMode::Hpcc;
        let mut cps = Vec::new();
        let mut port_cps = Vec::with_capacity(sc.n_ports());
        for p in 0..sc.n_ports() {
            let cp = if qcn && sc.qcn.cp_ports[p] {
                cps.push(CpState::Qcn(Cp::new(
                    &sc.qcn.cp,
                    Rng::stream(seed, StreamId::new(kinds::CP, p as u32, 0)),
                )));
                (cps.len() - 1) as u32
            } else if bcn && sc.bcn.cp_ports[p] {
                cps.push(CpState::Bcn(BcnCp::new(
                    &sc.bcn.cp,
                    Rng::stream(seed, StreamId::new(kinds::BCN_CP, p as u32, 0)),
                )));
                (cps.len() - 1) as u32
            } else if dcqcn && sc.dcqcn.cp_ports[p] {
                cps.push(CpState::Ecn(EcnCp::new(Rng::stream(
                    seed,
                    StreamId::new(kinds::ECN, p as u32, 0),
                ))));
                (cps.len() - 1) as u32
            } else if dctcp && sc.dctcp.cp_ports[p] {
                cps.push(CpState::Dctcp);
                (cps.len() - 1) as u32
            } else {
                NONE
            };
            // a DCQCN marker runs at enqueue through the CP hook, at dequeue through `ecn`
            let (cp, ecn) = if dcqcn && cp != NONE && sc.dcqcn.ecn.mark_at == MarkAt::Dequeue {
                (NONE, cp)
            } else if int && sc.is_switch_port(p) {
                cps.push(CpState::Int);
                (cp, (cps.len() - 1) as u32)
            } else {
                (cp, NONE)
            };
            port_cps.push((cp, ecn));
        }
        let mut e2e = E2eState::new(sc);
        e2e.int_on = int;
        let cm = Cm {
            e2e,
            nicfb: NicFbState::new(sc, seed, cps.len()),
            cps,
            dc: DcqcnState::new(sc),
            tr: Transient::new(sc),
            cp_sees_discards: qcn && sc.qcn.cp.sample_discarded,
            mc_counts: !sc.groups.is_empty(),
            cnm_sent: vec![0; sc.n_ports()],
            cp_enq: vec![0; sc.n_ports()],
            cp_neg_fb: vec![0; sc.n_ports()],
            bcn_sent: vec![[0; 3]; sc.n_ports()],
            cnm_rx: vec![0; sc.flows.len()],
            bcn_rx: vec![[0; 3]; sc.flows.len()],
        };
        (cm, port_cps)
    }

    /// The reaction point of flow `i` (its rate limiter's controller: QCN's, DCQCN's or BCN's
    /// by `cc.mode`, none otherwise) at a NIC of `nic_rate`, and its rate limiter's queue.
    pub(in crate::sim) fn reaction(sc: &Scenario, seed: u64, i: usize, nic_rate: f64) -> RlSetup {
        let qcn = sc.cc == CcMode::Qcn;
        let bcn = sc.cc == CcMode::Bcn;
        let dcqcn = sc.cc == CcMode::Dcqcn;
        let f = &sc.flows[i];
        let mut rpp = sc.qcn.rp.clone();
        rpp.line_rate_bps = nic_rate;
        rpp.fb_max = sc.qcn.cp.max_qntz_fb();
        if f.group.is_some() {
            rpp.feedback = sc.qcn.multicast_feedback;
            rpp.fbhat_hold_ps = sc.qcn.multicast_fbhat_hold_ps;
        }
        let rep_fb = qcn && rpp.feedback == McFeedback::Representative;
        let rp = if qcn {
            Some(Reaction::Qcn {
                rp: Rp::new(
                    &rpp,
                    Rng::stream(seed, StreamId::new(kinds::RP, i as u32, 0)),
                ),
                p: rpp,
            })
        } else if dcqcn {
            let mut p = sc.dcqcn.rp.clone();
            p.line_rate_bps = nic_rate;
            Some(Reaction::Qcn {
                rp: Rp::new(&p, Rng::stream(seed, StreamId::new(kinds::RP, i as u32, 0))),
                p,
            })
        } else if bcn {
            let mut p = sc.bcn.rp.clone();
            p.line_rate_bps = nic_rate;
            Some(Reaction::Bcn {
                rp: BcnRp::new(
                    &p,
                    Rng::stream(seed, StreamId::new(kinds::BCN_RP, i as u32, 0)),
                ),
                p,
            })
        } else {
            delay::reaction(sc, i, nic_rate)
        };
        let (rl_cap, rl_burst) = if bcn {
            (sc.bcn.rl_queue_bytes, sc.bcn.rl_burst_bytes)
        } else if sc.cc == CcMode::Dctcp {
            (sc.dctcp.rl_queue_bytes, None)
        } else if sc.cc == CcMode::Hpcc {
            (sc.hpcc.rl_queue_bytes, None)
        } else if dcqcn {
            (sc.dcqcn.rl_queue_bytes, sc.dcqcn.rl_burst_bytes)
        } else {
            (sc.qcn.rl_queue_bytes, sc.qcn.rl_burst_bytes)
        };
        RlSetup {
            rp,
            rep_fb,
            rl_cap,
            rl_burst,
        }
    }
}

impl Cm {
    /// The CP hook: a data frame `pkt` of `size` bytes was admitted to port `pi`, whose data
    /// queue now holds `qlen` bytes (including the frame). (Always inlined: called from the
    /// queued and the fixed enqueue, the compiler otherwise made it a call, +5 % instructions
    /// on the leaf-spine benchmark.)
    #[inline(always)]
    /// Returns the feedback message it sends, if any.
    pub(in crate::sim) fn cp_enqueue(
        &mut self,
        core: &mut Core,
        pi: usize,
        pkt: u32,
        qlen: u64,
        size: u32,
    ) -> Option<Ctrl> {
        let port = &mut core.ports[pi];
        if port.cp_here {
            // a QCN CP's frame that is not sampled: its countdown, on the port's lines
            // (`place_countdowns`; the same subtraction as `Cp::on_enqueue`)
            let left = port.cp_left - size as f64;
            if left >= 0.0 {
                port.cp_left = left;
                return None;
            }
        }
        let cpi = port.cp as usize;
        if self.mc_counts {
            return self.cp_enqueue_counted(core, pi, cpi, pkt, qlen, size);
        }
        self.cp_step(core, pi, cpi, pkt, qlen, size)
    }

    /// Keep the byte countdown of each QCN CP in its port (`Port::cp_left`), where an arrival
    /// already looks, when nothing but the CP itself reads it: not with NIC-side feedback (its
    /// own path) nor with the multicast counters (each arrival counted in `cp_enq`). Called
    /// once, when the run is built; the CP's copy is then brought up to date only at a sample
    /// or a counted discard (`qcn_cp_enqueue`, `qcn_cp_discard`).
    pub(in crate::sim) fn place_countdowns(&self, core: &mut Core) {
        if self.nicfb.on || self.mc_counts {
            return;
        }
        for port in core.ports.iter_mut().filter(|p| p.cp != NONE) {
            if let Some(CpState::Qcn(cp)) = self.cps.get(port.cp as usize) {
                port.cp_here = true;
                port.cp_left = cp.time_to_mark();
            }
        }
    }

    /// Whether what port `pi`'s congestion point does at an arrival depends only on the port,
    /// the CP and the frame, and all it sends is its feedback frame (`Ctrl`): no CP, or a QCN
    /// CP without NIC-side feedback, multicast counters or push-back (which reads a BA sensor).
    /// Such an arrival may be handled before its instant, its feedback queued then
    /// (sim/fastpath.rs, `fold_ports`).
    pub(in crate::sim) fn cp_local(&self, core: &Core, pi: usize) -> bool {
        let cp = core.ports[pi].cp;
        cp == NONE
            || (matches!(self.cps.get(cp as usize), Some(CpState::Qcn(_)))
                && !self.nicfb.on
                && !self.mc_counts
                && !self.tr.pushback)
    }

    /// Undo [`Cm::place_countdowns`]: each countdown back in its CP, read there at every
    /// arrival (`Sim::set_cp_countdowns_in_ports`, a test's switch).
    pub(in crate::sim) fn take_countdowns(&mut self, core: &mut Core) {
        for port in core.ports.iter_mut().filter(|p| p.cp_here) {
            if let Some(CpState::Qcn(cp)) = self.cps.get_mut(port.cp as usize) {
                cp.set_time_to_mark(port.cp_left);
            }
            port.cp_here = false;
        }
    }

    /// The CP of port `pi` (slot `cpi`) sees data frame `pkt` enqueued.
    #[inline(always)]
    fn cp_step(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        pkt: u32,
        qlen: u64,
        size: u32,
    ) -> Option<Ctrl> {
        match &self.cps[cpi] {
            CpState::Qcn(_) => self.qcn_cp_enqueue(core, pi, cpi, pkt, qlen, size),
            CpState::Bcn(_) => self.bcn_cp_enqueue(core, pi, cpi, pkt, qlen, size),
            CpState::Ecn(_) => {
                self.ecn_mark(core, pi, cpi, pkt);
                None
            }
            CpState::Dctcp => {
                self.dctcp_mark(core, pi, pkt, qlen);
                None
            }
            CpState::Int => None,
        }
    }

    /// A data frame was discarded at the full queue of port `pi`, a CP (`qlen`: the queue it
    /// did not enter): only a QCN CP that samples arrivals sees it (sim/cc/qcn.rs; the wiring
    /// calls this only when `cp_sees_discards`).
    #[inline(never)]
    pub(in crate::sim) fn cp_discard(
        &mut self,
        core: &mut Core,
        pi: usize,
        pkt: u32,
        qlen: u64,
        size: u32,
    ) -> Option<Ctrl> {
        let cpi = core.ports[pi].cp as usize;
        if !matches!(self.cps[cpi], CpState::Qcn(_)) {
            return None;
        }
        if self.mc_counts {
            // the multicast statistics count a discarded frame's sample as an enqueued one's
            return self.counted(core, pi, cpi, pkt, |cm, core| {
                cm.qcn_cp_discard(core, pi, cpi, pkt, qlen, size)
            });
        }
        self.qcn_cp_discard(core, pi, cpi, pkt, qlen, size)
    }

    /// [`Cm::cp_enqueue`] with the multicast statistics' counters (runs with multicast groups
    /// only: the data frames each CP saw enqueued and its Fb < 0 samples the scheme lets
    /// through); out of line, so that other runs pay one test per frame for them.
    #[inline(never)]
    fn cp_enqueue_counted(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        pkt: u32,
        qlen: u64,
        size: u32,
    ) -> Option<Ctrl> {
        self.cp_enq[pi] += 1;
        self.counted(core, pi, cpi, pkt, |cm, core| {
            cm.cp_step(core, pi, cpi, pkt, qlen, size)
        })
    }

    /// `step` (the CP of port `pi` seeing frame `pkt`), then its Fb < 0 sample, if it took one,
    /// counted as [`Cm::count_negative_feedback`] says.
    #[inline(always)]
    fn counted(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        pkt: u32,
        step: impl FnOnce(&mut Self, &mut Core) -> Option<Ctrl>,
    ) -> Option<Ctrl> {
        let neg0 = match &self.cps[cpi] {
            CpState::Qcn(cp) => cp.sample_counts().1,
            _ => 0,
        };
        let msg = step(self, core);
        self.count_negative_feedback(core, pi, cpi, pkt, neg0);
        msg
    }

    /// After the QCN CP of port `pi` saw frame `pkt`: if that was a sample with Fb < 0 (the
    /// CP's count of them went past `neg0`), count it when the scheme lets the CP send feedback
    /// for it: always with standard feedback, only as the representative (Algorithm 2 on the
    /// sample's qntzFb and the frame's F̂b and CPID) with representative feedback. Counts only.
    #[inline]
    fn count_negative_feedback(&mut self, core: &Core, pi: usize, cpi: usize, pkt: u32, neg0: u64) {
        let CpState::Qcn(cp) = &self.cps[cpi] else {
            return;
        };
        if cp.sample_counts().1 == neg0 {
            return;
        }
        let pk = &core.pkts[pkt as usize];
        if !core.flows[pk.flow as usize].rep_fb
            || crate::proto::multicast::is_representative(
                cp.last_sample_qntz(),
                pi as u32,
                pk.fb as u8,
                pk.cpid,
            )
        {
            self.cp_neg_fb[pi] += 1;
        }
    }

    /// Send a feedback message of `kind` with `payload` from the CP at `cp_port` to the source
    /// of `flow`, through the control queues. The one send path of every congestion-management
    /// message: QCN CNMs, BCN messages, SONAR echoes and push-back Fb99 (sim/cc/transient.rs),
    /// NIC-side ConMes (sim/cc/nicfb.rs); each kind has its size, counter and event record here.
    /// Returns the message to queue now (none without a route, or with a feedback latency: then
    /// it is on its way as an event).
    pub(in crate::sim) fn send_feedback(
        &mut self,
        core: &mut Core,
        cp_port: usize,
        flow: u32,
        kind: u8,
        payload: i32,
    ) -> Option<Ctrl> {
        let now = core.now;
        let sw = core.ports[cp_port].node as usize;
        let out = core.feedback_next(sw, flow)?;
        let (rec_kind, size) = match kind {
            KIND_CNM => {
                self.cnm_sent[cp_port] += 1;
                (Some(REC_CNM_SENT), core.sc.qcn.cnm_bytes)
            }
            KIND_BCN | KIND_BCN0 => {
                self.bcn_sent[cp_port][bcn_index(kind, payload)] += 1;
                let rec = if kind == KIND_BCN0 {
                    REC_BCN0_SENT
                } else {
                    REC_BCN_SENT
                };
                (Some(rec), core.sc.bcn.msg_bytes)
            }
            KIND_CONMES => {
                self.nicfb.conmes_sent[cp_port] += 1;
                (None, core.sc.qcn.nic.conmes_frame_bytes)
            }
            _ => (
                Some(self.transient_sent(core, cp_port, kind)),
                core.sc.qcn.cnm_bytes,
            ),
        };
        if let Some(rec_kind) = rec_kind.filter(|&k| core.rec.wants(k)) {
            core.record(EvRec {
                t: now,
                kind: rec_kind,
                node: cp_port as u32,
                flow,
                value: payload as i64,
            });
        }
        let pkt = core.alloc(Pkt {
            born: now,
            size,
            flow,
            hop: 0,
            kind,
            fb: payload,
            cpid: cp_port as u32,
            at: sw as u32,
            flags: 0,
        });
        let latency = core.sc.feedback_latency;
        if latency == 0 {
            Some(Ctrl { port: out, pkt })
        } else {
            // `cc.feedback_latency`: the message enters the CP switch's control queue later, as
            // if it arrived there (routed towards the source then).
            core.q
                .push(now + latency, Ev::SwitchArrive { pkt, flow: NONE });
            None
        }
    }

    /// The source host of `pk.flow` handles feedback message `pk`: count and record it, then let
    /// the flow's reaction point react, and apply what it asks for (also called with a CNM the
    /// NIC made itself from ConMes, sim/cc/nicfb.rs).
    pub(in crate::sim) fn host_react(&mut self, core: &mut Core, pk: Pkt) {
        let fi = pk.flow as usize;
        let now = core.now;
        let rec_kind = match pk.kind {
            KIND_CNM => {
                self.cnm_rx[fi] += 1;
                Some(REC_CNM_RX)
            }
            KIND_BCN | KIND_BCN0 => {
                self.bcn_rx[fi][bcn_index(pk.kind, pk.fb)] += 1;
                if pk.kind == KIND_BCN0 {
                    Some(REC_BCN0_RX)
                } else {
                    Some(REC_BCN_RX)
                }
            }
            KIND_CONMES => {
                self.on_conmes(core, fi, pk.fb, pk.cpid);
                return;
            }
            KIND_CNP => {
                // counted, not recorded as events (flows.cnp_received)
                self.dc.cnp_rx[fi] += 1;
                None
            }
            _ => {
                // the QCN transient-response messages (SONAR echo, push-back Fb99)
                self.transient_control(core, pk);
                return;
            }
        };
        if let Some(rec_kind) = rec_kind.filter(|&k| core.rec.wants(k)) {
            core.rec.event(EvRec {
                t: now,
                kind: rec_kind,
                node: core.flows[fi].src,
                flow: pk.flow,
                value: pk.fb as i64,
            });
        }
        let f = &mut core.flows[fi];
        let Some(rp) = f.rp.as_mut() else {
            return;
        };
        let was_active = rp.is_active();
        let out = match rp {
            Reaction::Qcn { rp, p } if pk.kind == KIND_CNM => {
                rp.on_cnm_from(p, now, pk.fb as u8, pk.cpid)
            }
            Reaction::Qcn { rp, p } if pk.kind == KIND_CNP => rp.on_cnp(p, now),
            Reaction::Bcn { rp, p } if pk.kind != KIND_CNM && pk.kind != KIND_CNP => {
                Self::bcn_react(core.sc, rp, p, now, &pk)
            }
            _ => RpOutput::NONE,
        };
        if !was_active && rp.is_active() {
            // a newly allocated rate limiter starts with a full (or, `cc.rl_start = "empty"`,
            // an empty) bucket
            f.bucket.set_rate(now, rp.current_rate());
            if core.sc.rl_start_full {
                f.bucket.fill(now);
            } else {
                f.bucket.empty(now);
            }
        }
        core.rp_output(fi, out, now);
        if pk.kind == KIND_CNM && self.tr.sonar_on(fi) {
            self.sonar_on_cnm(core, fi);
        }
    }
}

/// Index into the per-kind BCN counters: 0 negative, 1 positive, 2 BCN(0,0).
#[inline]
pub(in crate::sim) fn bcn_index(kind: u8, payload: i32) -> usize {
    if kind == KIND_BCN0 {
        2
    } else if payload > 0 {
        1
    } else {
        0
    }
}

impl Cm {
    /// Data frame `pkt` leaves port `pi`, whose dequeue action is slot `slot`: DCQCN's marking
    /// against the queue it leaves behind, or a telemetry stamp.
    #[inline(always)]
    pub(in crate::sim) fn dequeue_action(
        &mut self,
        core: &mut Core,
        pi: usize,
        slot: usize,
        pkt: u32,
    ) {
        if let CpState::Int = self.cps[slot] {
            return self.int_stamp(core, pi, pkt);
        }
        self.ecn_mark(core, pi, slot, pkt)
    }
}

impl Needs for Cm {
    fn name(&self) -> &'static str {
        "cm"
    }
    /// A congestion point samples at enqueue (and, sampling arrivals, at a discard: a port the
    /// direct send skips never discards, so watching the queue covers its drops too), a BA
    /// sensor follows the queue length, DCQCN marking at dequeue reads the queue left behind.
    fn watches_queue(&self, core: &Core, pi: usize) -> bool {
        let p = &core.ports[pi];
        p.cp != NONE || p.ba != NONE || p.ecn != NONE
    }
    /// A BA sensor's timer; a mark at dequeue that becomes a notification.
    fn send_makes_events(&self, core: &Core, pi: usize) -> bool {
        let p = &core.ports[pi];
        p.ba != NONE || p.ecn != NONE
    }
    /// A CE-marked frame reaches its notification point, which may schedule a CNP.
    fn deliveries_make_events(&self, _core: &Core) -> bool {
        self.cps.iter().any(|c| matches!(c, CpState::Ecn(_))) || self.e2e.on
    }
    /// An acknowledged flow's receiver sends ACKs.
    fn receives(&self, _core: &Core, fi: usize) -> bool {
        self.e2e.has(fi)
    }
    /// An acknowledged flow's window decides when its frames leave its rate limiter; HPCC's
    /// frames carry INT bytes.
    fn gates_departures(&self, core: &Core, fi: usize) -> bool {
        self.e2e.has(fi) || core.flows[fi].int_bytes != 0
    }
    /// A BA sensor follows the queue as frames leave, DCQCN marks them as they leave.
    fn moves_departures(&self, core: &Core, pi: usize) -> bool {
        let p = &core.ports[pi];
        p.ba != NONE || p.ecn != NONE
    }
    /// Feedback (CNMs, BCN messages, ConMes, SONAR echoes, Fb99, DCQCN's CNPs) goes to the
    /// source of a flow whose frames a congestion point, a marker or a BA sensor sees: one on
    /// the flow's path, or any for a flow without a fixed path; an acknowledged flow's receiver
    /// sends ACKs.
    fn sends_control(&self, core: &Core, fi: usize) -> bool {
        let watched = |p: &Port| p.cp != NONE || p.ecn != NONE || p.ba != NONE;
        let f = &core.flows[fi];
        if self.e2e.has(fi) {
            true
        } else if f.route == ROUTE_PATH {
            f.path.iter().any(|&p| watched(&core.ports[p as usize]))
        } else {
            core.ports.iter().any(watched)
        }
    }
    /// A CP other than a plain QCN CP (`Cm::cp_local`): NIC-side feedback, the multicast
    /// counters, push-back (which reads a BA sensor), BCN, ECN or DCTCP marks, INT.
    fn acts_beyond_arrival(&self, core: &Core, pi: usize) -> bool {
        !self.cp_local(core, pi)
    }
}

/// Congestion management's columns of the shared tables.
impl Cm {
    /// The counters the multicast statistics window takes, so far: per port the CNMs its CP
    /// sent, the data frames its CP saw enqueued, its QCN CP's sample instants and those with
    /// Fb < 0 at which the scheme lets it send feedback (0 for a port without a QCN CP); per
    /// flow the CNMs its source received.
    pub(in crate::sim) fn mc_counters(&self, core: &Core) -> [Vec<u64>; 5] {
        let mut samples = vec![0; core.ports.len()];
        for (pi, port) in core.ports.iter().enumerate() {
            if port.cp == NONE {
                continue;
            }
            if let Some(CpState::Qcn(cp)) = self.cps.get(port.cp as usize) {
                samples[pi] = cp.sample_counts().0;
            }
        }
        [
            self.cnm_sent.clone(),
            self.cp_enq.clone(),
            samples,
            self.cp_neg_fb.clone(),
            self.cnm_rx.clone(),
        ]
    }

    /// The feedback the QCN CP of port `pi` would compute now (Fb bytes, qntzFb), without
    /// sampling; None for a port without a QCN CP (the multicast |Fb| trace).
    pub(in crate::sim) fn qcn_fb_now(&self, core: &Core, pi: usize) -> Option<(f64, u8)> {
        let port = &core.ports[pi];
        match self.cps.get(port.cp as usize) {
            Some(CpState::Qcn(cp)) if port.cp != NONE => {
                Some(cp.fb_now(&core.sc.qcn.cp, port.q_bytes))
            }
            _ => None,
        }
    }

    /// Per flow: feedback received by its source (CNMs, SONAR and push-back, BCN, ConMes),
    /// DCQCN's marks and CNPs (columns of the flows table, in its order).
    pub(in crate::sim) fn flow_columns(&self, core: &Core) -> Columns {
        let fl = &core.flows;
        let bcn = |k: usize| ColumnData::I64(self.bcn_rx.iter().map(|b| b[k] as i64).collect());
        let counts = |v: &[u64]| ColumnData::I64(v.iter().map(|&x| x as i64).collect());
        let [special, echo, fuse, alarms, fb99] = self.tr.flow_counts();
        vec![
            ("cnm_received", counts(&self.cnm_rx)),
            ("sonar_special_sent", ColumnData::I64(special)),
            ("sonar_echo_received", ColumnData::I64(echo)),
            ("sonar_short_fuse", ColumnData::I64(fuse)),
            ("sonar_false_alarms", ColumnData::I64(alarms)),
            ("fb99_received", ColumnData::I64(fb99)),
            ("bcn_negative_received", bcn(0)),
            ("bcn_positive_received", bcn(1)),
            ("bcn0_received", bcn(2)),
            (
                "conmes_received",
                ColumnData::I64(NicFbState::column(&self.nicfb.conmes_rx, fl.len())),
            ),
            ("ecn_marked", counts(&self.dc.marked)),
            ("cnp_sent", counts(&self.dc.cnp_sent)),
            ("cnp_received", counts(&self.dc.cnp_rx)),
        ]
        .into_iter()
        .chain(self.e2e_flow_columns(core))
        .collect()
    }

    /// Per port: the feedback its CP sent (CNMs, BCN messages, ConMes); and, placed after the
    /// queue columns of the ports table, the transient variants' (SONAR echoes, Fb99, time with
    /// BA = 1).
    pub(in crate::sim) fn port_columns(&self, core: &Core) -> (Columns, Columns) {
        let ps = &core.ports;
        let bcn = |k: usize| ColumnData::I64(self.bcn_sent.iter().map(|b| b[k] as i64).collect());
        let (echo, fb99): (Vec<i64>, Vec<i64>) = (0..ps.len())
            .map(|p| {
                let (e, f) = self.port_echo_fb99(core, p);
                (e as i64, f as i64)
            })
            .unzip();
        (
            vec![
                (
                    "cnm_sent",
                    ColumnData::I64(self.cnm_sent.iter().map(|&c| c as i64).collect()),
                ),
                ("bcn_negative_sent", bcn(0)),
                ("bcn_positive_sent", bcn(1)),
                ("bcn0_sent", bcn(2)),
                (
                    "conmes_sent",
                    ColumnData::I64(NicFbState::column(&self.nicfb.conmes_sent, ps.len())),
                ),
            ],
            vec![
                ("sonar_echo_sent", ColumnData::I64(echo)),
                ("fb99_sent", ColumnData::I64(fb99)),
                ("ba_available_s", ColumnData::F64(self.ba_available_s(core))),
            ],
        )
    }
}
