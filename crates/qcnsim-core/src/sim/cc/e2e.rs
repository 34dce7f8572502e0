//! End-to-end congestion control clocked by acknowledgements (docs/models/transport.md, "The
//! ACK/window transport"; DCTCP: docs/models/dctcp.md). Part of congestion management.
//!
//! Every flow of an acknowledged mode (`CcMode::acked`) is a go-back-N flow
//! (sim/host/transport.rs decides what its receiver accepts and when it NACKs); this room adds
//! what the algorithms read and the window they set:
//!
//! - **Timestamp echo.** When a data frame starts its transmission at its source NIC, its time
//!   is kept in a per-frame store indexed by the frame's slot in the arena ([`E2eState::sent_at`],
//!   grown with the arena, nothing allocated per frame).
//! - **Telemetry (INT).** A port that stamps telemetry (`CpState::Int` at `Port::ecn`, the
//!   dequeue action) appends one [`IntHop`] to the frame's record in a per-frame store (reset
//!   when the frame leaves its source NIC). With `cc.mode = "hpcc"` every switch egress port
//!   stamps (sim/cc/hpcc.rs says exactly what).
//! - **The receiver's ACKs.** When a data frame's arrival is resolved (`deliver`, at its arrival
//!   time `t`), go-back-N's verdict and the frame's CE bit go to the receiver's echo state
//!   (proto/dctcp.rs `Receiver`: an ACK every `transport.ack_interval` frames and at the last
//!   frame, and with DCTCP's Figure 10 at once when the CE bit changes); each ACK is a control
//!   frame of `transport.ack_frame` bytes made now and sent at `t` (`Ev::AckOut`; for Swift's
//!   flows at `t + cc.swift.rx_delay`, the receiving host's delay) through the
//!   receiver NIC's strict-priority control queue towards the source, like go-back-N's own ACKs.
//!   What it echoes (the covered frames, how many were CE, the newest one's send time, its hops
//!   and telemetry) waits in a per-frame store indexed by the ACK's slot. A NACK echoes nothing.
//! - **The sender.** When an ACK or a NACK reaches the source, go-back-N acts first (a NACK
//!   goes back), then the flow's algorithm reads the [`Ack`] and answers a [`Control`]: the
//!   window (bytes in flight allowed) this room keeps. The rate limiter asks
//!   ([`Cm::window_open`], through the wiring's `hook_window`) before a frame leaves whether the
//!   bytes in flight, `(seq - una) × frame`, are below the window; a flow held by its window is
//!   woken by the ACK that opens it ([`Cm::e2e_on_ack`]), never by polling.

use crate::proto::ack::{Ack, Control, IntHop, MAX_INT_HOPS};
use crate::proto::dctcp::{self, DctcpParams, Echo};
use crate::proto::gbn::{Reply, RxVerdict};
use crate::proto::hpcc::{Hpcc, HpccParams};
use crate::sim::cc::delay::{self, SwiftFlow, TimelyFlow};
use crate::sim::cc::{Cm, Ctrl};
use crate::sim::prelude::*;

/// A flow's sender algorithm: one variant per algorithm (TIMELY and Swift: sim/cc/delay.rs).
pub(in crate::sim) enum Algo {
    Dctcp {
        s: dctcp::Sender,
        p: DctcpParams,
    },
    /// HPCC (sim/cc/hpcc.rs): `snd_nxt` is kept by the transport ([`Cm::e2e_on_wire`],
    /// [`Cm::e2e_go_back`]).
    Hpcc {
        s: Box<Hpcc>,
        p: HpccParams,
    },
    Timely(TimelyFlow),
    Swift(SwiftFlow),
}

impl Algo {
    fn on_ack(&mut self, ack: &Ack, snd_nxt: u32) -> Control {
        match self {
            Algo::Dctcp { s, p } => s.on_ack(p, ack, snd_nxt),
            Algo::Hpcc { s, p } => s.on_ack(p, ack),
            Algo::Timely(t) => t.on_ack(ack),
            Algo::Swift(w) => w.on_ack(ack),
        }
    }

    /// A NACK: the transport saw a loss.
    fn on_loss(&mut self, now: SimTime, snd_nxt: u32) -> Control {
        match self {
            Algo::Dctcp { s, p } => s.on_loss(p, snd_nxt),
            // a NACK carries no telemetry: Algorithm 1 has nothing to read in it
            Algo::Hpcc { s, p } => s.control(p),
            Algo::Timely(t) => t.on_loss(),
            Algo::Swift(w) => w.on_nack(now),
        }
    }

    fn on_timeout(&mut self, now: SimTime, snd_nxt: u32) -> Control {
        match self {
            Algo::Dctcp { s, p } => s.on_timeout(p, snd_nxt),
            // Algorithm 1 has no timeout rule (ns-3 changes no rate at a go-back)
            Algo::Hpcc { s, p } => s.control(p),
            Algo::Timely(t) => t.on_loss(),
            Algo::Swift(w) => w.on_timeout(now),
        }
    }

    fn window(&self) -> u64 {
        match self {
            Algo::Dctcp { s, .. } => s.window_bytes(),
            Algo::Hpcc { s, p } => s.control(p).window_bytes,
            Algo::Timely(t) => t.control().window_bytes,
            Algo::Swift(w) => w.window_bytes(),
        }
    }
}

/// One acknowledged flow's sender: what the transport knows of its sequence space, and its
/// algorithm.
pub(in crate::sim) struct Snd {
    pub(in crate::sim) algo: Algo,
    /// Everything below this sequence is acknowledged.
    una: u32,
    /// One past the highest sequence that went on the wire.
    nxt: u32,
    /// The flow's frames and frame size, and its size in bytes (None: long-lived).
    n: u32,
    frame: u32,
    size: Option<u64>,
    /// The window the algorithm set, bytes.
    pub(in crate::sim) window: u64,
    /// The window bounds the bytes in flight after a frame is sent (Swift's
    /// `cc.swift.window_check = "after_send"`), not those before it.
    after_send: bool,
    pub(in crate::sim) acks_rx: u64,
    pub(in crate::sim) ece_acks: u64,
    /// INT bytes this flow's ACKs carry (HPCC; 0 otherwise).
    ack_int_bytes: u32,
    /// Window decreases (HPCC: ACKs after which `W` was smaller).
    w_down: u64,
}

impl Snd {
    /// The bytes of frames `0..k` (the last frame carries the rest, at least 64 B).
    fn bytes_below(&self, k: u32) -> u64 {
        let full = k as u64 * self.frame as u64;
        match self.size {
            Some(total) if k == self.n && k > 0 => {
                let before = (k - 1) as u64 * self.frame as u64;
                before + (total - before).max(64)
            }
            _ => full,
        }
    }
}

/// Whether a frame of `frame` bytes may leave with `before` bytes in flight under a window of
/// `window` bytes: `before < window`, or with `after_send` `before + frame ≤ window` (htsim's
/// Swift, Linux's integer cwnd) or nothing in flight.
#[inline]
fn window_allows(before: u64, frame: u64, window: u64, after_send: bool) -> bool {
    if after_send {
        before == 0 || before + frame <= window
    } else {
        before < window
    }
}

/// What an ACK echoes, kept by its slot in the arena until it reaches the source.
#[derive(Clone, Copy, Default)]
pub(in crate::sim) struct EchoRec {
    sent_at: SimTime,
    frames: u32,
    ce: u32,
    hops: u8,
}

/// A frame's telemetry records.
#[derive(Clone, Copy, Default)]
pub(in crate::sim) struct IntRec {
    n: u8,
    hops: [IntHop; MAX_INT_HOPS],
}

/// The acknowledged flows' senders and receivers and the per-frame stores.
pub(in crate::sim) struct E2eState {
    /// The mode acknowledges its flows (DCTCP).
    pub(in crate::sim) on: bool,
    /// Per flow: its index into `snd` and `rcv` (NONE: not acknowledged).
    ix: Vec<u32>,
    pub(in crate::sim) snd: Vec<Snd>,
    rcv: Vec<dctcp::Receiver>,
    /// Per acknowledged flow: the receiver's delayed-ACK timer, and what the newest frame it
    /// counted would echo (its send time, hops, telemetry).
    ack_timer: Vec<LazyTimer>,
    /// Per acknowledged flow: the receiving host's delay before an ACK or NACK it makes leaves
    /// (`cc.swift.rx_delay` for Swift's flows; 0 otherwise).
    rx_delay: Vec<SimTime>,
    last: Vec<(EchoRec, Option<IntRec>)>,
    echo_mode: Echo,
    ack_interval: u32,
    ack_bytes: u32,
    ack_delay: SimTime,
    /// Per arena slot: when the data frame there left its source NIC.
    sent_at: Vec<SimTime>,
    /// Per arena slot: what the ACK there echoes.
    echo: Vec<EchoRec>,
    /// Per arena slot: the data frame's (or its ACK's) telemetry; empty unless a port stamps.
    int: Vec<IntRec>,
    /// Some port stamps telemetry.
    pub(in crate::sim) int_on: bool,
}

impl E2eState {
    pub(in crate::sim) fn new(sc: &Scenario) -> E2eState {
        let on = sc.cc.acked();
        let mut ix = Vec::new();
        let mut snd = Vec::new();
        if on {
            ix = vec![NONE; sc.flows.len()];
            let hpcc_t = if sc.cc == CcMode::Hpcc {
                super::hpcc::base_rtts(sc)
            } else {
                Vec::new()
            };
            for (i, f) in sc.flows.iter().enumerate() {
                ix[i] = snd.len() as u32;
                let n = f.size_bytes.unwrap_or(0).div_ceil(f.frame_bytes as u64) as u32;
                let algo = match sc.cc {
                    CcMode::Timely => {
                        Algo::Timely(TimelyFlow::new(sc, i, delay::nic_rate(sc, i), n))
                    }
                    CcMode::Swift => Algo::Swift(SwiftFlow::new(sc, i, delay::nic_rate(sc, i))),
                    CcMode::Hpcc => super::hpcc::sender(sc, delay::nic_rate(sc, i), hpcc_t[i]),
                    _ => {
                        let p = sc.dctcp.params(f.frame_bytes);
                        let s = dctcp::Sender::new(&p, f.frame_bytes);
                        Algo::Dctcp { s, p }
                    }
                };
                snd.push(Snd {
                    window: algo.window(),
                    after_send: sc.cc == CcMode::Swift && sc.swift.check_after_send,
                    algo,
                    una: 0,
                    nxt: 0,
                    n,
                    frame: f.frame_bytes,
                    size: f.size_bytes,
                    acks_rx: 0,
                    ece_acks: 0,
                    ack_int_bytes: super::hpcc::int_wire_bytes(sc, i),
                    w_down: 0,
                });
            }
        }
        let hold = if sc.cc == CcMode::Swift {
            sc.swift.rx_delay_ps
        } else {
            0
        };
        E2eState {
            on,
            rx_delay: vec![hold; snd.len()],
            rcv: vec![dctcp::Receiver::default(); snd.len()],
            ack_timer: vec![LazyTimer::default(); snd.len()],
            last: vec![(EchoRec::default(), None); snd.len()],
            ack_delay: sc.transport.ack_delay,
            ix,
            snd,
            echo_mode: sc.dctcp.echo,
            ack_interval: sc.transport.gbn.ack_interval,
            ack_bytes: sc.transport.ack_bytes,
            sent_at: Vec::new(),
            echo: Vec::new(),
            int: Vec::new(),
            int_on: false,
        }
    }

    /// Flow `fi` is acknowledged by this room.
    pub(in crate::sim) fn has(&self, fi: usize) -> bool {
        self.ix.get(fi).is_some_and(|&i| i != NONE)
    }

    /// Flow `fi`'s algorithm (None: not acknowledged).
    pub(in crate::sim) fn algo(&self, fi: usize) -> Option<&Algo> {
        let i = *self.ix.get(fi)?;
        self.snd.get(i as usize).map(|s| &s.algo)
    }

    /// The telemetry records kept at arena slot `slot` (tests).
    #[cfg(test)]
    pub(in crate::sim) fn int_at(&self, slot: usize) -> &[IntHop] {
        self.int.get(slot).map_or(&[], |r| &r.hops[..r.n as usize])
    }

    fn grow<T: Default + Clone>(v: &mut Vec<T>, slot: usize, arena: usize) {
        if slot >= v.len() {
            v.resize(arena.max(slot + 1), T::default());
        }
    }
}

impl Cm {
    /// Whether flow `fi`'s window lets frame `seq` leave its rate limiter now: the bytes in
    /// flight before it, `(seq - una) × frame`, are below the window; for a Swift flow with
    /// `cc.swift.window_check = "after_send"` (the default), the bytes in flight with it are at
    /// most the window, or nothing is in flight. Out of line: the data path of other runs only
    /// tests the flow's flag.
    #[inline(never)]
    pub(in crate::sim) fn window_open(&self, fi: usize, seq: u32) -> bool {
        let s = &self.e2e.snd[self.e2e.ix[fi] as usize];
        let before = (seq.saturating_sub(s.una) as u64) * (s.frame as u64);
        window_allows(before, s.frame as u64, s.window, s.after_send)
    }

    /// Data frame `pkt` of acknowledged flow `flow` starts its transmission at its source NIC:
    /// its send time for the echo, its telemetry record emptied.
    #[inline(never)]
    pub(in crate::sim) fn e2e_on_wire(&mut self, core: &Core, flow: u32, pkt: u32) {
        let e = &mut self.e2e;
        let slot = pkt as usize;
        E2eState::grow(&mut e.sent_at, slot, core.pkts.len());
        e.sent_at[slot] = core.now;
        if e.int_on {
            E2eState::grow(&mut e.int, slot, core.pkts.len());
            e.int[slot].n = 0;
        }
        let seq = core.pkts[slot].fb as u32;
        let s = &mut e.snd[e.ix[flow as usize] as usize];
        s.nxt = s.nxt.max(seq + 1);
        if let Algo::Hpcc { s, .. } = &mut s.algo {
            // go-back-N sends in sequence order: the next new frame follows this one
            s.set_snd_nxt(seq + 1);
        }
    }

    /// Acknowledged flow `fi` goes back to frame `seq` (go-back-N): HPCC's `snd_nxt` follows.
    #[inline(never)]
    pub(in crate::sim) fn e2e_go_back(&mut self, fi: usize, seq: u32) {
        let e = &mut self.e2e;
        if let Algo::Hpcc { s, .. } = &mut e.snd[e.ix[fi] as usize].algo {
            s.set_snd_nxt(seq);
        }
    }

    /// Telemetry: data frame `pkt` leaves switch port `pi` (the port's dequeue action): one
    /// record appended (the queue it leaves behind, the bytes the port has sent with it, now,
    /// the link's rate).
    #[inline(never)]
    pub(in crate::sim) fn int_stamp(&mut self, core: &Core, pi: usize, pkt: u32) {
        let e = &mut self.e2e;
        let slot = pkt as usize;
        E2eState::grow(&mut e.int, slot, core.pkts.len());
        let port = &core.ports[pi];
        let pk = &core.pkts[slot];
        let r = &mut e.int[slot];
        if (r.n as usize) < MAX_INT_HOPS {
            r.hops[r.n as usize] = IntHop {
                qlen: port.q_bytes,
                tx_bytes: port.tx_bytes + pk.size as u64,
                ts: core.now,
                rate_bps: port.rate as u64,
            };
            r.n += 1;
        }
    }

    /// DCTCP's switch: data frame `pkt` of `size` bytes joined port `pi`'s queue (`qlen` bytes
    /// with it; with PFC the frame's priority queue is compared): marked CE above K.
    #[inline(never)]
    pub(in crate::sim) fn dctcp_mark(&mut self, core: &mut Core, pi: usize, pkt: u32, qlen: u64) {
        let pk = core.pkts[pkt as usize];
        let flow = pk.flow as usize;
        let port = &core.ports[pi];
        let (frames, bytes) = if port.pq.is_empty() {
            (port.q.len() as u64, qlen)
        } else {
            let c = core.flows[flow].class as usize;
            (port.pq[c].len() as u64, port.pq_bytes[c])
        };
        let d = &core.sc.dctcp;
        if dctcp::marks(d.k, d.mark_queue, frames, bytes, pk.size) && pk.flags & FLAG_CE == 0 {
            core.pkts[pkt as usize].flags |= FLAG_CE;
            self.dc.marked[flow] += 1;
        }
    }

    /// Data frame `pkt` (`pk`) of acknowledged flow `flow` reaches its receiver at `t`, which
    /// go-back-N judged (`v`; `expected` frames accepted after it): the ACKs or the NACK it
    /// makes are made now and leave at `t` (`Ev::AckOut`).
    #[inline(never)]
    pub(in crate::sim) fn e2e_receive(
        &mut self,
        core: &mut Core,
        pkt: u32,
        pk: &Pkt,
        t: SimTime,
        v: RxVerdict,
        expected: u32,
    ) {
        let e = &mut self.e2e;
        let g = e.ix[pk.flow as usize] as usize;
        let seq = pk.fb as u32;
        let sent_at = e.sent_at.get(pkt as usize).copied().unwrap_or(pk.born);
        let hops = pk.hop.min(u8::MAX as u16) as u8;
        let int = if e.int_on {
            e.int.get(pkt as usize).copied()
        } else {
            None
        };
        if seq > expected {
            // out of order: go-back-N's NACK, if one is due, echoes nothing
            if let Reply::Nack(a) = v.reply {
                let rec = EchoRec {
                    sent_at,
                    frames: 0,
                    ce: 0,
                    hops,
                };
                self.make_ack(core, pk.flow, KIND_NACK, a, rec, None, t);
            }
            return;
        }
        let e_before = if v.accepted { expected - 1 } else { expected };
        let ce = pk.flags & FLAG_CE != 0;
        let out = e.rcv[g].on_packet(
            e.echo_mode,
            e.ack_interval,
            ce,
            e_before,
            expected,
            v.complete,
        );
        for a in [out.first, out.second].into_iter().flatten() {
            let rec = EchoRec {
                sent_at,
                frames: a.frames,
                ce: a.ce,
                hops,
            };
            self.make_ack(core, pk.flow, KIND_ACK, a.next_expected, rec, int, t);
        }
        // frames left pending: the delayed-ACK timer runs from the first of them
        let e = &mut self.e2e;
        if e.rcv[g].pending == 0 {
            e.ack_timer[g].cancel();
        } else {
            e.last[g] = (
                EchoRec {
                    sent_at,
                    frames: 0,
                    ce: 0,
                    hops,
                },
                int,
            );
            if !e.ack_timer[g].is_armed() {
                if let Some(gen) = e.ack_timer[g].arm(t + e.ack_delay) {
                    core.q
                        .push(t + e.ack_delay, Ev::AckTimer { flow: pk.flow, gen });
                }
            }
        }
    }

    /// The delayed-ACK timer of acknowledged flow `flow`'s receiver may expire: what is pending
    /// is acknowledged now.
    #[inline(never)]
    pub(in crate::sim) fn e2e_ack_timer(&mut self, core: &mut Core, flow: u32, gen: u32) {
        let e = &mut self.e2e;
        let g = e.ix[flow as usize] as usize;
        match e.ack_timer[g].popped(core.now, gen) {
            Popped::Fire => {}
            Popped::Requeue(t) => {
                core.q.push(t, Ev::AckTimer { flow, gen });
                return;
            }
            Popped::Stale => return,
        }
        let Some(a) = e.rcv[g].flush(e.echo_mode) else {
            return;
        };
        let (mut rec, int) = e.last[g];
        rec.frames = a.frames;
        rec.ce = a.ce;
        let now = core.now;
        self.make_ack(core, flow, KIND_ACK, a.next_expected, rec, int, now);
    }

    /// An ACK (or NACK) of `flow` for `next` with what it echoes, sent at `t`.
    #[allow(clippy::too_many_arguments)]
    fn make_ack(
        &mut self,
        core: &mut Core,
        flow: u32,
        kind: u8,
        next: u32,
        rec: EchoRec,
        int: Option<IntRec>,
        t: SimTime,
    ) {
        let dst = core.flows[flow as usize].dst;
        let int_bytes = if kind == KIND_ACK {
            self.e2e.snd[self.e2e.ix[flow as usize] as usize].ack_int_bytes
        } else {
            0
        };
        let pkt = core.alloc(Pkt {
            born: t,
            size: self.e2e.ack_bytes + int_bytes,
            flow,
            hop: 0,
            kind,
            fb: next as i32,
            cpid: NONE,
            at: dst,
            flags: 0,
        });
        let e = &mut self.e2e;
        E2eState::grow(&mut e.echo, pkt as usize, core.pkts.len());
        e.echo[pkt as usize] = rec;
        if let Some(r) = int {
            E2eState::grow(&mut e.int, pkt as usize, core.pkts.len());
            e.int[pkt as usize] = r;
        }
        let hold = self.e2e.rx_delay[self.e2e.ix[flow as usize] as usize];
        core.q.push(t + hold, Ev::AckOut { pkt });
    }

    /// ACK `pkt` leaves its receiver now: the port it is queued at (none without a route: it is
    /// dropped).
    pub(in crate::sim) fn ack_out(&mut self, core: &mut Core, pkt: u32) -> Option<Ctrl> {
        let flow = core.pkts[pkt as usize].flow;
        let dst = core.flows[flow as usize].dst as usize;
        match core.feedback_next(dst, flow) {
            Some(port) => Some(Ctrl { port, pkt }),
            None => {
                core.release(pkt);
                None
            }
        }
    }

    /// ACK or NACK `pk` (from arena slot `pkt`, already released) reaches the source of its
    /// flow, after go-back-N has acted on it: the algorithm reads it and sets the window; a flow
    /// its window held may send again.
    pub(in crate::sim) fn e2e_on_ack(&mut self, core: &mut Core, pkt: u32, pk: Pkt) {
        let fi = pk.flow as usize;
        let e = &mut self.e2e;
        let rec = e.echo.get(pkt as usize).copied().unwrap_or_default();
        let int = if e.int_on {
            e.int.get(pkt as usize).copied()
        } else {
            None
        };
        let s = &mut e.snd[e.ix[fi] as usize];
        let a = pk.fb as u32;
        let newly = if a > s.una {
            let b = s.bytes_below(a) - s.bytes_below(s.una);
            s.una = a;
            b
        } else {
            0
        };
        s.acks_rx += 1;
        let nxt = s.nxt;
        let c = if pk.kind == KIND_NACK {
            s.algo.on_loss(core.now, nxt)
        } else {
            let mut ack = Ack::plain(core.now, a, newly.min(u32::MAX as u64) as u32, rec.sent_at);
            ack.acked_frames = rec.frames;
            ack.ce_frames = rec.ce;
            ack.hops = rec.hops;
            if let Some(r) = int {
                ack.n_int = r.n;
                ack.int = r.hops;
            }
            s.ece_acks += (rec.ce > 0) as u64;
            s.algo.on_ack(&ack, nxt)
        };
        self.apply(core, fi, c);
    }

    /// The retransmission timer of acknowledged flow `fi` went back.
    pub(in crate::sim) fn e2e_on_timeout(&mut self, core: &mut Core, fi: usize) {
        let s = &mut self.e2e.snd[self.e2e.ix[fi] as usize];
        let c = s.algo.on_timeout(core.now, s.nxt);
        self.apply(core, fi, c);
    }

    /// Apply what the algorithm answered: the window, and the rate of a flow that paces (its
    /// rate limiter re-paced); a flow held by its window whose next frame now fits is woken (its
    /// rate limiter releases the frame now, or when its pacing allows).
    fn apply(&mut self, core: &mut Core, fi: usize, c: Control) {
        let s = &mut self.e2e.snd[self.e2e.ix[fi] as usize];
        s.w_down += (c.window_bytes < s.window) as u64;
        s.window = c.window_bytes;
        core.e2e_set_rate(fi, c.rate_bps);
        let Some(head) = core.flows[fi].rl_q.front().map(|m| m.seq) else {
            return;
        };
        if self.window_open(fi, head) && !core.flows[fi].rl_timer.is_armed() {
            if Core::rl_limited(&core.flows[fi]) {
                core.schedule_rl(fi);
            } else {
                let now = core.now;
                core.arm_rl(fi, now);
            }
        }
    }

    /// The acknowledged flows' columns of the flows table (empty when the mode acknowledges
    /// nothing, so that other runs' tables keep their columns): ACKs received, those echoing
    /// CE, window cuts, the last window (bytes) and DCTCP's last α.
    pub(in crate::sim) fn e2e_flow_columns(&self, core: &Core) -> Columns {
        let e = &self.e2e;
        if !e.on {
            return Vec::new();
        }
        let per = |f: &dyn Fn(&Snd) -> i64| -> Vec<i64> {
            (0..core.flows.len())
                .map(|fi| e.snd.get(e.ix[fi] as usize).map_or(0, f))
                .collect()
        };
        let alpha: Vec<f64> = (0..core.flows.len())
            .map(|fi| match e.snd.get(e.ix[fi] as usize).map(|s| &s.algo) {
                Some(Algo::Dctcp { s, .. }) => s.alpha,
                _ => f64::NAN,
            })
            .collect();
        vec![
            ("acks_received", ColumnData::I64(per(&|s| s.acks_rx as i64))),
            (
                "ece_acks_received",
                ColumnData::I64(per(&|s| s.ece_acks as i64)),
            ),
            (
                "window_cuts",
                ColumnData::I64(per(&|s| match &s.algo {
                    Algo::Dctcp { s, .. } => s.cuts as i64,
                    Algo::Timely(_) => 0,
                    Algo::Swift(w) => w.s.decreases() as i64,
                    Algo::Hpcc { .. } => s.w_down as i64,
                })),
            ),
            (
                "window_bytes",
                ColumnData::I64(per(&|s| s.algo.window().min(i64::MAX as u64) as i64)),
            ),
            ("dctcp_alpha", ColumnData::F64(alpha)),
        ]
        .into_iter()
        .chain(delay::columns(
            core.sc.cc,
            core.flows.len(),
            &|fi| match e.snd.get(e.ix[fi] as usize).map(|s| &s.algo) {
                Some(Algo::Timely(t)) => Some(t),
                _ => None,
            },
            &|fi| match e.snd.get(e.ix[fi] as usize).map(|s| &s.algo) {
                Some(Algo::Swift(w)) => Some(w),
                _ => None,
            },
        ))
        .chain(self.hpcc_flow_columns(core))
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::window_allows;

    /// The window check, one row per case: (bytes in flight before the frame, frame, window,
    /// after_send) -> may leave. 1000 B frames.
    #[test]
    fn window_check_rule_table() {
        let rows: &[(u64, u64, u64, bool, bool, &str)] = &[
            // a window of 1.5 packets: before_send lets a second frame out, after_send not
            (0, 1000, 1500, false, true, "1.5 packets, nothing in flight"),
            (
                1000,
                1000,
                1500,
                false,
                true,
                "1.5 packets, one in flight: before < window",
            ),
            (2000, 1000, 1500, false, false, "1.5 packets, two in flight"),
            (0, 1000, 1500, true, true, "after_send, nothing in flight"),
            (1000, 1000, 1500, true, false, "after_send: 2000 > 1500"),
            // whole packets: both rules agree (DCTCP's floored windows)
            (
                1000,
                1000,
                2000,
                false,
                true,
                "2 packets, one in flight (before)",
            ),
            (
                1000,
                1000,
                2000,
                true,
                true,
                "2 packets, one in flight (after)",
            ),
            (
                2000,
                1000,
                2000,
                false,
                false,
                "2 packets, two in flight (before)",
            ),
            (
                2000,
                1000,
                2000,
                true,
                false,
                "2 packets, two in flight (after)",
            ),
            // a window below one frame: one frame may still leave when nothing is in flight
            (
                0,
                1000,
                500,
                true,
                true,
                "after_send, half a packet, nothing in flight",
            ),
            (
                0,
                1000,
                500,
                false,
                true,
                "before_send, half a packet, nothing in flight",
            ),
            (
                1000,
                1000,
                500,
                true,
                false,
                "after_send, half a packet, one in flight",
            ),
            // no window
            (1 << 40, 1000, u64::MAX, true, true, "NO_WINDOW"),
        ];
        for &(before, frame, window, after, want, what) in rows {
            assert_eq!(window_allows(before, frame, window, after), want, "{what}");
        }
        // whole-packet windows: the rules agree everywhere (DCTCP keeps its tables)
        for k in 1..20u64 {
            for n in 0..25u64 {
                let (b, w) = (n * 1000, k * 1000);
                assert_eq!(
                    window_allows(b, 1000, w, true),
                    window_allows(b, 1000, w, false)
                );
            }
        }
    }
}
