//! Go-back-N glue (docs/models/transport.md; the rules are in proto/gbn.rs). A `gbn` flow's data
//! frames carry their sequence number in `Pkt::fb` and [`FLAG_GBN`]. The receiver's verdict is
//! taken when a frame's arrival is resolved (`deliver`: in arrival order, at its arrival time
//! `t`), and its ACK or NACK leaves at `t` through the receiver NIC's strict-priority control
//! queue, routed back to the source like every feedback message (`KIND_ACK`, `KIND_NACK`,
//! payload the sequence). The sender's retransmission timer starts when a frame goes on the
//! wire at the source NIC. Going back withdraws the flow's frames that have not reached the
//! wire (its rate-limiter queue and its frames in the source NIC's queue: a NIC sends from the
//! host's memory, so it does not send a frame twice because it was already queued) and makes
//! the source produce the frame asked for next, at once, and the following ones at the flow's
//! traffic pattern from there.

use crate::proto::gbn::{GbnParams, Receiver, Reply, RxVerdict, Sender, SndOut};
use crate::scenario::transport::Transport;
use crate::sim::prelude::*;

/// The go-back-N flows' senders, receivers and timers (indexed by `Flow::gbn`).
pub(in crate::sim) struct GbnState {
    pub(in crate::sim) p: GbnParams,
    pub(in crate::sim) ack_bytes: u32,
    pub(in crate::sim) snd: Vec<Sender>,
    pub(in crate::sim) rcv: Vec<Receiver>,
    pub(in crate::sim) rto: Vec<LazyTimer>,
    /// Frames withdrawn before reaching the wire (rate-limiter and NIC queues), per gbn flow.
    pub(in crate::sim) withdrawn: Vec<u64>,
}

/// `Ev::GbnReply::code`: a NACK (else an ACK) of the sequence in the low 31 bits.
const NACK_BIT: u32 = 1 << 31;

impl GbnState {
    /// The state of every gbn flow, and each flow's index into it (NONE for udp flows).
    pub(in crate::sim) fn build(sc: &Scenario) -> (GbnState, Vec<u32>) {
        let mut ix = vec![NONE; sc.flows.len()];
        let mut snd = Vec::new();
        for (i, f) in sc.flows.iter().enumerate() {
            if f.transport == Transport::Gbn {
                ix[i] = snd.len() as u32;
                // the reader bounds a gbn flow's size (finite, < 2^31 frames)
                let n = f.size_bytes.unwrap_or(0).div_ceil(f.frame_bytes as u64);
                snd.push(Sender::new(n as u32));
            }
        }
        let n = snd.len();
        (
            GbnState {
                p: sc.transport.gbn,
                ack_bytes: sc.transport.ack_bytes,
                snd,
                rcv: vec![Receiver::default(); n],
                rto: vec![LazyTimer::default(); n],
                withdrawn: vec![0; n],
            },
            ix,
        )
    }
}

/// What a go-back withdrew at the source NIC's queue.
pub(in crate::sim) struct Withdrawn {
    /// The source NIC's port.
    pub(in crate::sim) port: usize,
}

impl GbnState {
    /// The source made frame `seq` of gbn flow `fi` (a retransmission is counted).
    #[inline(never)]
    pub(in crate::sim) fn made(&mut self, core: &Core, fi: usize, seq: u32, size: u32) {
        let g = core.flows[fi].gbn as usize;
        self.snd[g].on_made(seq, size);
    }

    /// Frame `seq` of gbn flow `flow` goes on the wire at its source NIC.
    #[inline(never)]
    pub(in crate::sim) fn on_wire(&mut self, core: &mut Core, flow: u32, seq: i32) {
        let g = core.flows[flow as usize].gbn as usize;
        let cmd = self.snd[g].on_wire(&self.p, seq as u32, core.now);
        self.timer(core, flow, cmd);
    }

    fn timer(&mut self, core: &mut Core, flow: u32, cmd: TimerCmd) {
        let g = core.flows[flow as usize].gbn as usize;
        match cmd {
            TimerCmd::Keep => {}
            TimerCmd::Arm(at) => {
                if let Some(gen) = self.rto[g].arm(at) {
                    core.q.push(at, Ev::GbnRto { flow, gen });
                }
            }
            TimerCmd::Cancel => self.rto[g].cancel(),
        }
    }

    /// A data frame of a gbn flow reaches its receiver at `t` within the run (`deliver`
    /// counts late frames, hands CE marks to DCQCN and releases the frame): the receiver's
    /// verdict and the frames it has accepted since. The wiring sends the reply
    /// ([`GbnState::reply_code`]), or for a flow whose congestion control acknowledges, hands
    /// the verdict to it.
    #[inline(never)]
    pub(in crate::sim) fn receive(
        &mut self,
        core: &mut Core,
        pk: Pkt,
        t: SimTime,
    ) -> (RxVerdict, u32) {
        let fi = pk.flow as usize;
        let g = core.flows[fi].gbn as usize;
        let n = self.snd[g].n;
        let v = self.rcv[g].on_frame(&self.p, pk.fb as u32, n, t);
        let f = &mut core.flows[fi];
        if v.accepted {
            f.rx_frames += 1;
            f.rx_bytes += pk.size as u64;
            f.delay_sum += units::u64_f64(t - pk.born);
        }
        if v.complete && f.finish.is_none() {
            f.finish = Some(t);
            core.flow_finished(t);
        }
        (v, self.rcv[g].expected)
    }

    /// The `Ev::GbnReply` code of a receiver's reply (none to send).
    pub(in crate::sim) fn reply_code(reply: Reply) -> Option<u32> {
        match reply {
            Reply::None => None,
            Reply::Ack(a) => Some(a),
            Reply::Nack(a) => Some(a | NACK_BIT),
        }
    }

    /// The receiver of `flow` sends an ACK or a NACK (`code`) towards the source: the control
    /// frame and the port it leaves by (none without a route).
    pub(in crate::sim) fn reply(
        &mut self,
        core: &mut Core,
        flow: u32,
        code: u32,
    ) -> Option<(usize, u32)> {
        let now = core.now;
        let dst = core.flows[flow as usize].dst as usize;
        let out = core.feedback_next(dst, flow)?;
        let kind = if code & NACK_BIT != 0 {
            KIND_NACK
        } else {
            KIND_ACK
        };
        let pkt = core.alloc(Pkt {
            born: now,
            size: self.ack_bytes,
            flow,
            hop: 0,
            kind,
            fb: (code & !NACK_BIT) as i32,
            cpid: NONE,
            at: dst as u32,
            flags: 0,
        });
        Some((out, pkt))
    }

    /// An ACK or NACK reaches the source of `pk.flow`: the sequence to go back to, if any.
    pub(in crate::sim) fn on_reply(&mut self, core: &mut Core, pk: Pkt) -> Option<u32> {
        let fi = pk.flow as usize;
        let g = core.flows[fi].gbn as usize;
        let now = core.now;
        let a = pk.fb as u32;
        let out = if pk.kind == KIND_NACK {
            self.snd[g].on_nack(a)
        } else {
            self.snd[g].on_ack(&self.p, a, now)
        };
        self.apply(core, pk.flow, out)
    }

    /// The retransmission timer of `flow` may expire: the sequence to go back to, if any.
    pub(in crate::sim) fn on_rto(&mut self, core: &mut Core, flow: u32, gen: u32) -> Option<u32> {
        let g = core.flows[flow as usize].gbn as usize;
        match self.rto[g].popped(core.now, gen) {
            Popped::Fire => {
                let out = self.snd[g].on_timeout();
                self.apply(core, flow, out)
            }
            Popped::Requeue(t) => {
                core.q.push(t, Ev::GbnRto { flow, gen });
                None
            }
            Popped::Stale => None,
        }
    }

    fn apply(&mut self, core: &mut Core, flow: u32, out: SndOut) -> Option<u32> {
        self.timer(core, flow, out.timer);
        out.rewind
    }

    /// Going back to frame `seq`, first step: withdraw the flow's frames not yet on the wire
    /// (its rate-limiter queue and its frames in the source NIC's queue). `None` when every
    /// frame made so far arrived (nothing to withdraw or resend). Then the queue watchers of the
    /// returned port hear of it, and [`GbnState::restart`] makes frame `seq` next.
    pub(in crate::sim) fn withdraw(
        &mut self,
        core: &mut Core,
        fi: usize,
        seq: u32,
    ) -> Option<Withdrawn> {
        let now = core.now;
        let g = core.flows[fi].gbn as usize;
        if seq as u64 >= core.flows[fi].gen_k {
            return None;
        }
        // the rate-limiter queue
        let f = &mut core.flows[fi];
        let mut withdrawn = f.rl_q.len() as u64;
        f.rl_q.clear();
        f.rl_q_bytes = 0;
        f.rl_timer.cancel();
        // the source NIC's queue (the flow's class queue with PFC)
        let pi = f.path[0] as usize;
        let class = f.class as usize;
        let port = &mut core.ports[pi];
        port.track_q(now);
        let pkts = &core.pkts;
        let mut freed: Vec<u32> = Vec::new();
        let mut bytes = 0u64;
        let q = if port.pq.is_empty() {
            &mut port.q
        } else {
            &mut port.pq[class]
        };
        q.retain(|&p| {
            let mine = pkts[p as usize].flow == fi as u32 && pkts[p as usize].kind == KIND_DATA;
            if mine {
                freed.push(p);
                bytes += pkts[p as usize].size as u64;
            }
            !mine
        });
        port.q_bytes -= bytes;
        if !port.pq.is_empty() {
            port.pq_bytes[class] -= bytes;
            port.fc_waiting -= freed.len() as u32;
        }
        withdrawn += freed.len() as u64;
        // a round-robin flow's frame at the NIC is gone: its rate limiter may send again
        core.flows[fi].at_nic = false;
        for p in freed {
            core.release(p);
        }
        self.withdrawn[g] += withdrawn;
        Some(Withdrawn { port: pi })
    }

    /// Going back, second step: the source makes frame `seq` next, now.
    pub(in crate::sim) fn restart(core: &mut Core, fi: usize, seq: u32) {
        let now = core.now;
        let f = &mut core.flows[fi];
        let frame = f.frame as u64;
        f.gen_k = seq as u64;
        f.gen_bytes = seq as u64 * frame;
        // frame `seq` was due at or before now (it was made), so this does not underflow
        f.cbr_t0 = now - round_ps(units::u64_f64(seq as u64) * f.cbr_gap_ps);
        f.gen_lazy = false;
        f.next_gen = if now < f.stop { now } else { NEVER };
        if f.next_gen != NEVER {
            core.q.push(now, Ev::Gen { flow: fi as u32 });
        }
    }

    /// Per flow: retransmitted bytes, timeouts, NACKs received, frames the receiver discarded
    /// (out of order or duplicate), and frames withdrawn before the wire; zeros for udp flows.
    pub(in crate::sim) fn counts(&self, core: &Core, fi: usize) -> [u64; 5] {
        let g = core.flows[fi].gbn;
        if g == NONE {
            return [0; 5];
        }
        let (s, r) = (&self.snd[g as usize], &self.rcv[g as usize]);
        [
            s.retx_bytes,
            s.timeouts,
            s.nacks_rx,
            r.out_of_order + r.duplicates,
            self.withdrawn[g as usize],
        ]
    }
}

/// Summary rows that warn (metric `warning_...`; docs/tables.md, "Warnings").
impl GbnState {
    /// Finite unicast flows without a transport that recovers losses (`transport = "udp"`) that
    /// lost frames: they cannot complete (their `fct_ps` is -1), whatever the run's length.
    pub(in crate::sim) fn loss_warnings(&self, core: &Core) -> fct::Rows {
        let (mut flows, mut at_sender, mut in_network) = (0u64, 0u64, 0u64);
        for f in &core.flows {
            let lost = f.rl_drops + f.nic_drops + f.net_drops;
            if f.size.is_none() || f.gbn != NONE || f.mc != NONE || lost == 0 {
                continue;
            }
            flows += 1;
            at_sender += f.rl_drops + f.nic_drops;
            in_network += f.net_drops;
        }
        if flows == 0 {
            return Vec::new();
        }
        vec![(
            "warning_unrecovered_loss".into(),
            flows as f64,
            "flows".into(),
            format!(
                "finite open-loop flows that lost frames ({at_sender} at their senders, \
                 {in_network} in the network) cannot complete; transport = \"gbn\" recovers \
                 losses, sender = \"nic\" keeps a message at its sender"
            ),
        )]
    }
}

impl Needs for GbnState {
    fn name(&self) -> &'static str {
        "gbn"
    }
    /// The receiver decides what counts as received, and acknowledges.
    fn receives(&self, core: &Core, fi: usize) -> bool {
        core.flows[fi].gbn != NONE
    }
}
