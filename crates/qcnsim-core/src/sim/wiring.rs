//! The wiring: the one place that knows every subsystem. The data path (sim/core/datapath.rs) and the
//! event dispatch (sim/mod.rs) call the hooks here; each hook hands the event to the subsystems
//! that take part in it and routes what they return (a port to kick, a queue that changed, a
//! frame to send) back to the data path or to another subsystem. Subsystems never call each
//! other.

use crate::sim::prelude::*;
use crate::sim::switch::buffer::PfcAsk;
use crate::sim::switch::flow_control::Next;
use crate::sim::topology::links::PortChange;

impl<'a> Sim<'a> {
    // ---------------------------------------------------------------- the data path's hooks
    //
    // The data path (sim/core/datapath.rs, sources.rs) names no subsystem: it calls these at the
    // points where subsystems take part. Always inlined: they are the data path's own code.

    /// A data frame of flow `fi` goes to its source NIC with representative feedback: the
    /// source stamps it (sim/cc/qcn.rs).
    #[inline(always)]
    pub(super) fn hook_to_nic(&mut self, fi: usize, pkt: u32) {
        cc::Cm::mc_stamp(&mut self.core, fi, pkt);
    }

    /// A SONAR special frame of `flow` arrives at egress port `pi`, before admission.
    #[inline(always)]
    pub(super) fn hook_special_arrives(&mut self, pi: usize, flow: u32) {
        if let Some(c) = self.cm.sonar_special_arrives(&mut self.core, pi, flow) {
            self.enqueue_ctrl(c.port, c.pkt);
        }
    }

    /// Port `pi`'s queue length changed (it has a BA sensor).
    #[inline(always)]
    pub(super) fn hook_qlen(&mut self, pi: usize) {
        self.cm.ba_qlen(&mut self.core, pi);
    }

    /// Data frame `pkt` of `size` bytes was queued at port `pi`, which runs a congestion point;
    /// the queue holds `qlen` bytes. Its feedback, if any, is queued.
    #[inline(always)]
    pub(super) fn hook_cp(&mut self, pi: usize, pkt: u32, qlen: u64, size: u32) {
        if let Some(c) = self.cm.cp_enqueue(&mut self.core, pi, pkt, qlen, size) {
            self.cp_sends(c.port, c.pkt);
        }
    }

    /// Data frame `pkt` of `size` bytes was discarded at port `pi` because it did not fit. When
    /// the port runs a QCN CP that samples arrivals (`cc.qcn.cp.samples = "arrivals"`), the CP
    /// counts it, with the queue it did not enter; its feedback, if any, is queued. Otherwise
    /// one test of a flag (a drop-heavy run makes this call for nearly every frame).
    #[inline(always)]
    pub(super) fn hook_cp_discard(&mut self, pi: usize, pkt: u32, size: u32) {
        if !self.cm.cp_sees_discards || self.core.ports[pi].cp == NONE {
            return;
        }
        let qlen = self.core.ports[pi].q_bytes;
        if let Some(c) = self.cm.cp_discard(&mut self.core, pi, pkt, qlen, size) {
            self.cp_sends(c.port, c.pkt);
        }
    }

    /// A congestion point's feedback frame `pkt` joins port `pi`'s control queue; inside an
    /// arrival folded into its frame's start at the source (`Sim::fold_arrival`), at the
    /// arrival's instant, by an event that takes the rank the arrival's own would have had.
    #[inline(never)]
    fn cp_sends(&mut self, pi: usize, pkt: u32) {
        if self.core.fold.active {
            let t = self.core.now;
            self.core.q.push(
                t,
                Ev::CtrlOut {
                    port: pi as u32,
                    pkt,
                },
            );
        } else {
            self.enqueue_ctrl(pi, pkt);
        }
    }

    /// Data frame `pkt` was queued at port `pi`, after its congestion point: flow control.
    #[inline(always)]
    pub(super) fn hook_enqueued(&mut self, pi: usize, pkt: u32) {
        if self.fc.on {
            self.fc_enqueued(pi, pkt);
        }
    }

    /// Data frame `pkt` leaves port `pi`, which acts at dequeue (DCQCN's marking, a telemetry
    /// stamp).
    #[inline(always)]
    pub(super) fn hook_dequeue_mark(&mut self, pi: usize, pkt: u32) {
        let ecn = self.core.ports[pi].ecn as usize;
        self.cm.dequeue_action(&mut self.core, pi, ecn, pkt);
    }

    /// Frame `pkt`, sequence `seq`, of go-back-N flow `flow` goes on the wire at its source NIC:
    /// the transport's timer, and an acknowledged flow's send time (sim/cc/e2e.rs).
    #[inline(always)]
    pub(super) fn hook_on_wire(&mut self, flow: u32, pkt: u32, seq: i32) {
        self.gbn.on_wire(&mut self.core, flow, seq);
        if self.core.flows[flow as usize].e2e {
            self.cm.e2e_on_wire(&self.core, flow, pkt);
        }
    }

    /// Whether acknowledged flow `fi`'s window lets its frame `seq` leave the rate limiter now
    /// (sim/cc/e2e.rs).
    #[inline(always)]
    pub(super) fn hook_window(&self, fi: usize, seq: u32) -> bool {
        self.cm.window_open(fi, seq)
    }

    /// The source made frame `seq` of go-back-N flow `fi`.
    #[inline(always)]
    pub(super) fn hook_made(&mut self, fi: usize, seq: u32, size: u32) {
        self.gbn.made(&self.core, fi, seq, size);
    }

    /// Data frame `pkt` of flow `fi` leaves its rate limiter (SONAR may make it special).
    #[inline(always)]
    pub(super) fn hook_departure(&mut self, fi: usize, pkt: u32) {
        if self.cm.tr.sonar_on(fi) {
            self.cm.sonar_on_send(&mut self.core, fi, pkt);
        }
    }

    /// Data frame `pkt` (`pk`) of a go-back-N flow reaches its receiver at `t`: the transport's
    /// verdict, then its reply, or for an acknowledged flow the ACKs its congestion control
    /// sends (sim/cc/e2e.rs). Out of line: off the common path (a call, as before).
    #[inline(never)]
    pub(super) fn hook_transport_rx(&mut self, pkt: u32, pk: Pkt, t: SimTime) {
        let (v, expected) = self.gbn.receive(&mut self.core, pk, t);
        if self.core.flows[pk.flow as usize].e2e {
            self.cm
                .e2e_receive(&mut self.core, pkt, &pk, t, v, expected);
        } else if let Some(code) = transport::GbnState::reply_code(v.reply) {
            self.core.q.push(
                t,
                Ev::GbnReply {
                    flow: pk.flow,
                    code,
                },
            );
        }
    }

    /// A copy of multicast flow `fi` reaches its member at `t`.
    #[inline(always)]
    pub(super) fn hook_member_rx(&mut self, fi: usize, hop: u16, size: u32, t: SimTime) {
        self.mcast.delivered(&mut self.core.flows[fi], hop, size, t);
    }

    /// A CE-marked data frame of `flow` reaches its receiver at `t` (DCQCN's notification
    /// point).
    #[inline(always)]
    pub(super) fn hook_marked(&mut self, flow: u32, t: SimTime) {
        self.cm.np_marked(&mut self.core, flow, t);
    }

    /// A link fails or recovers (sim/topology/links.rs): kick the ports that may send again, and tell the
    /// queue watchers of the ports whose queue it emptied.
    #[inline(never)]
    pub(super) fn on_link_change(&mut self, link: u32, up: bool) {
        let ls = self.links.as_mut().expect("link failures");
        for (pi, change) in ls.on_change(&mut self.core, link, up) {
            match change {
                PortChange::None => {}
                PortChange::Kick => self.kick(pi),
                PortChange::Emptied => self.queue_changed(pi),
            }
        }
    }

    /// A data frame of a hop-by-hop routed flow arrives at a switch: on to the port the routes of
    /// the moment give, unless it was dropped (sim/topology/links.rs). Out of line: off the common path.
    #[inline(never)]
    pub(super) fn route_lookup(&mut self, pkt: u32) {
        let ls = self.links.as_mut().expect("link failures");
        if let Some(port) = ls.route(&mut self.core, pkt) {
            self.enqueue_data(port, pkt);
        }
    }

    /// Control frame `pkt` arrives now at the end of the link it was last sent on (a switch or
    /// a host): whether that link failed under it (then it was dropped and counted;
    /// sim/topology/links.rs).
    #[inline(never)]
    pub(super) fn control_lost_on_link(&mut self, pkt: u32) -> bool {
        let ls = self.links.as_mut().expect("link failures");
        ls.control_lost(&mut self.core, pkt)
    }

    /// A data frame of a hop-by-hop routed flow reaches its destination host now, unless its
    /// last link failed under it (sim/topology/links.rs).
    #[inline(never)]
    pub(super) fn on_arrive(&mut self, pkt: u32) {
        let ls = self.links.as_mut().expect("link failures");
        if ls.arrives(&mut self.core, pkt) {
            self.received(pkt, self.core.now);
        }
    }

    /// Data frame `pkt` of a unicast flow is received at its destination at `t` (within the
    /// run): the transport or the flow's counters take it, a CE mark reaches DCQCN's
    /// notification point, and the frame leaves the arena. (`deliver` does the same inline on
    /// the common path.)
    pub(super) fn received(&mut self, pkt: u32, t: SimTime) {
        let pk = self.core.pkts[pkt as usize];
        if self.core.flows[pk.flow as usize].gbn != NONE {
            self.hook_transport_rx(pkt, pk, t);
        } else {
            if Self::count_rx(&mut self.core.flows[pk.flow as usize], pk.size, pk.born, t) {
                self.core.flow_finished(t);
            }
        }
        if pk.flags & FLAG_CE != 0 {
            self.hook_marked(pk.flow, t);
        }
        self.core.live_data -= 1;
        self.core.free.push(pkt);
    }

    /// Port `pi`'s queue changed outside the data path's enqueue and dequeue (emptied by a link
    /// failure, or a go-back-N withdrawal): its queue watchers hear of it.
    pub(super) fn queue_changed(&mut self, pi: usize) {
        if self.core.ports[pi].ba != NONE {
            self.cm.ba_qlen(&mut self.core, pi);
        }
    }

    /// A data frame of a multicast flow reached a switch: one frame onto each child port of its
    /// tree node (copies first, the frame itself to the last child; sim/switch/multicast.rs).
    pub(super) fn mc_forward(&mut self, pkt: u32) {
        let pk = self.core.pkts[pkt as usize];
        let Some((first, n)) = self.mcast.children(&mut self.core, pkt) else {
            return;
        };
        for j in first..first + n {
            let (port, p) = self
                .mcast
                .copy_for(&mut self.core, pkt, pk, j, j == first + n - 1);
            self.enqueue_data(port, p);
        }
    }

    /// The receiver of go-back-N flow `flow` sends its ACK or NACK (sim/host/transport.rs).
    #[inline(never)]
    pub(super) fn gbn_send_reply(&mut self, flow: u32, code: u32) {
        if let Some((port, pkt)) = self.gbn.reply(&mut self.core, flow, code) {
            // the first switch's input, should it queue the ACK with data (`Core::frame_input`)
            self.core.pkts[pkt as usize].cpid = port as u32;
            self.enqueue_ctrl(port, pkt);
        }
    }

    /// An ACK or NACK reaches the source of `pk.flow`.
    pub(super) fn gbn_on_reply(&mut self, pk: Pkt) {
        if let Some(seq) = self.gbn.on_reply(&mut self.core, pk) {
            self.gbn_go_back(pk.flow as usize, seq);
        }
    }

    /// The retransmission timer of `flow` may expire: go back, and an acknowledged flow's
    /// congestion control hears of the timeout.
    #[inline(never)]
    pub(super) fn on_gbn_rto(&mut self, flow: u32, gen: u32) {
        if let Some(seq) = self.gbn.on_rto(&mut self.core, flow, gen) {
            self.gbn_go_back(flow as usize, seq);
            if self.core.flows[flow as usize].e2e {
                self.cm.e2e_on_timeout(&mut self.core, flow as usize);
            }
        }
    }

    /// Go back to frame `seq` of flow `fi`: withdraw what has not reached the wire (the source
    /// NIC's queue watchers hear of it), then make frame `seq` next.
    fn gbn_go_back(&mut self, fi: usize, seq: u32) {
        if let Some(w) = self.gbn.withdraw(&mut self.core, fi, seq) {
            self.queue_changed(w.port);
            transport::GbnState::restart(&mut self.core, fi, seq);
            if self.core.flows[fi].e2e {
                self.cm.e2e_go_back(fi, seq);
            }
        }
    }

    /// A control frame reaches its destination host: go-back-N's acknowledgements go to the
    /// transport (and then, for an acknowledged flow, to its congestion control: sim/cc/e2e.rs),
    /// every other kind to congestion management (sim/cc/mod.rs).
    #[inline(never)]
    pub(super) fn on_host_control(&mut self, pkt: u32) {
        if self.links.is_some() && self.control_lost_on_link(pkt) {
            return;
        }
        let pk = self.core.pkts[pkt as usize];
        self.core.release(pkt);
        match pk.kind {
            KIND_ACK | KIND_NACK => {
                self.gbn_on_reply(pk);
                if self.core.flows[pk.flow as usize].e2e {
                    self.cm.e2e_on_ack(&mut self.core, pkt, pk);
                }
            }
            _ => self.cm.host_react(&mut self.core, pk),
        }
    }

    /// An acknowledged flow's receiver sends ACK `pkt` now (sim/cc/e2e.rs).
    #[inline(never)]
    pub(super) fn ack_out(&mut self, pkt: u32) {
        if let Some(c) = self.cm.ack_out(&mut self.core, pkt) {
            // the first switch's input, should it queue the ACK with data (`Core::frame_input`)
            self.core.pkts[c.pkt as usize].cpid = c.port as u32;
            self.enqueue_ctrl(c.port, c.pkt);
        }
    }

    /// DCQCN: the receiver of `flow` sends a CNP (sim/cc/dcqcn.rs).
    #[inline(never)]
    pub(super) fn send_cnp(&mut self, flow: u32) {
        if let Some(c) = self.cm.send_cnp(&mut self.core, flow) {
            self.enqueue_ctrl(c.port, c.pkt);
        }
    }

    // ---------------------------------------------------------------- the slow path: flow
    // control, shared memories, failed links

    /// `start_next` when flow control or a shared memory is on.
    #[inline(never)]
    pub(super) fn slow_start_next(&mut self, pi: usize) {
        if self.core.port_down(pi) {
            // a failed link sends nothing (sim/topology/links.rs)
            return;
        }
        if self.fc.on {
            return self.fc_start_next(pi);
        }
        // without flow control: the frame `plain_start_next` takes from the data queue
        let port = &self.core.ports[pi];
        let taken = if port.ctrl.is_empty() {
            port.q.front().map(|&d| (d, self.core.pkts[d as usize]))
        } else {
            None
        };
        let shared = port.cap == Capacity::Shared;
        self.plain_start_next(pi);
        if let Some((d, pk)) = taken {
            if shared {
                let input = self.core.frame_input(&pk);
                let ask = self.buf.release(&self.core, pi, pk.flow, input, pk.size);
                self.buf_pfc(ask);
            }
            if pk.kind != KIND_DATA {
                // an ACK in the data queue (`transport.ack_queue = "data"`): the next switch's
                // input (`Core::frame_input`)
                self.core.pkts[d as usize].cpid = pi as u32;
            }
        }
    }

    /// `start_next` with flow control (sim/switch/flow_control.rs chooses the frame): after a data frame's
    /// transmission starts, its queue's watchers, its shared memory and its watermark hear of it.
    fn fc_start_next(&mut self, pi: usize) {
        match self.fc.next_frame(&mut self.core, pi) {
            Next::Nothing => {}
            Next::Pause(slot) => self.fc.send_frame(&mut self.core, pi, slot),
            Next::Control(c) => self.transmit(pi, c),
            Next::Data(pkt) if self.core.pkts[pkt as usize].kind != KIND_DATA => {
                // an ACK in the data queue (`transport.ack_queue = "data"`): no mark; its
                // memory and meter are released as a data frame's, then it records the next
                // switch's input (`Core::frame_input`)
                let port = &self.core.ports[pi];
                let (from_switch, shared) = (port.from_switch, port.cap == Capacity::Shared);
                let ba = port.ba != NONE;
                let pk = self.core.pkts[pkt as usize];
                self.transmit(pi, pkt);
                if ba {
                    self.cm.ba_qlen(&mut self.core, pi);
                }
                if shared {
                    let input = self.core.frame_input(&pk);
                    let ask = self.buf.release(&self.core, pi, pk.flow, input, pk.size);
                    self.buf_pfc(ask);
                }
                if from_switch {
                    if let Some(m) = self.fc.dequeued(&self.core, pi, &pk) {
                        self.fc_meter_crossed(m, false);
                    }
                }
                self.core.pkts[pkt as usize].cpid = pi as u32;
            }
            Next::Data(pkt) => {
                let port = &self.core.ports[pi];
                let (from_switch, shared) = (port.from_switch, port.cap == Capacity::Shared);
                let (ba, ecn) = (port.ba != NONE, port.ecn);
                if ecn != NONE {
                    // DCQCN marking at dequeue, against the queue the frame leaves behind, or a
                    // telemetry stamp
                    self.cm
                        .dequeue_action(&mut self.core, pi, ecn as usize, pkt);
                }
                let pk = self.core.pkts[pkt as usize];
                // transmit first: the meter update may queue a flow-control frame on this very
                // port, which must then wait for this frame
                self.transmit(pi, pkt);
                if ba {
                    self.cm.ba_qlen(&mut self.core, pi);
                }
                if shared {
                    let input = self.core.input_port(pk.flow, pk.hop);
                    let ask = self.buf.release(&self.core, pi, pk.flow, input, pk.size);
                    self.buf_pfc(ask);
                }
                if from_switch {
                    if let Some(m) = self.fc.dequeued(&self.core, pi, &pk) {
                        self.fc_meter_crossed(m, false);
                    }
                }
            }
        }
    }

    /// A data frame entered egress port `pi` with flow control on: a shared memory's pending
    /// command, then the frame's watermark. Never inlined: it must not weigh on the data path
    /// of runs without flow control.
    #[inline(never)]
    pub(super) fn fc_enqueued(&mut self, pi: usize, pkt: u32) {
        if let Some(ask) = self.buf.pending.take() {
            self.buf_pfc(ask);
        }
        if let Some(m) = self.fc.enqueued(&self.core, pi, pkt) {
            self.fc_meter_crossed(m, true);
        }
    }

    /// A data frame does not fit egress port `pi` by the port's own capacity: it waits there
    /// anyway at its source's NIC when its sender holds it (`sender = "nic"`: the NIC reads the
    /// message from host memory, which does not overflow); else its switch's shared memory, if
    /// any, decides (sim/switch/buffer.rs). Off the common path.
    #[inline(never)]
    pub(super) fn admit_over(&mut self, pi: usize, pkt: u32) -> bool {
        let flow = self.core.pkts[pkt as usize].flow as usize;
        if !self.core.ports[pi].from_switch && self.core.flows[flow].holds {
            return true;
        }
        let (ok, ask) = self.buf.admit(&self.core, pi, pkt);
        if let Some(ask) = ask {
            self.buf_pfc(ask);
        }
        ok
    }

    /// A shared memory's XOFF or XON reaches flow control: the demand of each slot it names.
    fn buf_pfc(&mut self, ask: PfcAsk) {
        let raise = match ask.cmd {
            crate::proto::buffer::PfcCmd::None => return,
            crate::proto::buffer::PfcCmd::Xoff => true,
            crate::proto::buffer::PfcCmd::Xon => false,
        };
        for k in 0..self.buf.pfc_targets(&ask) {
            if let Some(slot) = self.buf.pfc_target(&ask, k) {
                self.fc_demand(slot, raise);
            }
        }
    }

    /// A watermark crossed: the demand of every slot it covers.
    fn fc_meter_crossed(&mut self, m: usize, raise: bool) {
        for k in 0..self.fc.meter_targets(m) {
            let slot = self.fc.meter_target(m, k);
            self.fc_demand(slot, raise);
        }
    }

    /// The demand of flow-control slot `slot` rose (`raise`) or fell: queue its frame on the
    /// port back to the sender (and kick that port), and arm the refresh of a PAUSE.
    fn fc_demand(&mut self, slot: usize, raise: bool) {
        if self.fc.demand(slot, raise) {
            self.fc_queue_frame(slot, raise);
        }
    }

    fn fc_queue_frame(&mut self, slot: usize, refresh: bool) {
        if let Some(r) = self.fc.queue_frame(&mut self.core, slot) {
            self.kick(r);
        }
        if refresh {
            self.fc.arm_refresh(&mut self.core, slot);
        }
    }

    /// A PAUSE/PFC frame for `slot` is acted upon.
    #[inline(never)]
    pub(super) fn on_pause_rx(&mut self, slot: usize, quanta: u32) {
        if let Some(p) = self.fc.on_pause_rx(&mut self.core, slot, quanta) {
            self.kick(p);
        }
    }

    /// A pause of `slot` may expire.
    #[inline(never)]
    pub(super) fn on_pause_expire(&mut self, slot: usize, gen: u32) {
        if let Some(p) = self.fc.on_pause_expire(&mut self.core, slot, gen) {
            self.kick(p);
        }
    }

    /// The switch's refresh timer of `slot`.
    #[inline(never)]
    pub(super) fn on_pause_refresh(&mut self, slot: usize, gen: u32) {
        if self.fc.on_pause_refresh(&mut self.core, slot, gen) {
            self.fc_queue_frame(slot, true);
        }
    }

    /// The periodic deadlock and watchdog check (sim/switch/deadlock.rs).
    #[inline(never)]
    pub(super) fn on_fc_check(&mut self) {
        self.fc.check_deadlock(&self.core);
        if self.fc.guard.watchdog.is_some() {
            for slot in 0..self.fc.slots.len() {
                if let Some(p) = self.fc.check_watchdog(&mut self.core, slot) {
                    self.kick(p);
                }
            }
        }
        self.fc.next_check(&mut self.core);
    }

    /// Sample every flow's rate-limiter queue and its NIC queue. Lazily generated frames born
    /// before `t` are materialised first (the same outcome as at the next departure, see
    /// `catch_up`). Frames born at `t` itself are left to the events of the instant, as with
    /// one event per frame, whose generation event for `t` was queued after this sample's.
    #[inline(never)]
    pub(super) fn sample_host_queues(&mut self, t: SimTime) {
        if t > 0 {
            for fi in 0..self.core.flows.len() {
                self.catch_up(fi, t - 1);
            }
        }
        self.fc.sample_host_queues(&self.core, t);
    }

    /// The reaction points' rates, then (`metrics.host_queues`) the hosts' queues; the next
    /// sample.
    #[inline(never)]
    pub(super) fn sample_rates(&mut self) {
        let t = self.core.now;
        self.core.sample_rp_rates();
        if self.core.sc.metrics.host_queues {
            self.sample_host_queues(t);
        }
        let next = t + self.core.sc.metrics.rate_interval;
        self.core.q.push(next, Ev::SampleRates);
    }
}
