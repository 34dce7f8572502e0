//! The wiring: the one place that knows every subsystem. The data path (sim/fabric.rs) and the
//! event dispatch (sim/mod.rs) call the hooks here; each hook hands the event to the subsystems
//! that take part in it and routes what they return (a port to kick, a queue that changed, a
//! frame to send) back to the data path or to another subsystem. Subsystems never call each
//! other.

use super::links::PortChange;
use super::*;

impl<'a> Sim<'a> {
    /// A link fails or recovers (sim/links.rs): kick the ports that may send again, and tell the
    /// queue watchers of the ports whose queue it emptied.
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
    /// the moment give, unless it was dropped (sim/links.rs). Out of line: off the common path.
    #[inline(never)]
    pub(super) fn route_lookup(&mut self, pkt: u32) {
        let ls = self.links.as_mut().expect("link failures");
        if let Some(port) = ls.route(&mut self.core, pkt) {
            self.enqueue_data(port, pkt);
        }
    }

    /// A data frame of a hop-by-hop routed flow reaches its destination host now, unless its
    /// last link failed under it (sim/links.rs).
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
            self.gbn.receive(&mut self.core, pk, t);
        } else {
            Self::count_rx(&mut self.core.flows[pk.flow as usize], pk.size, pk.born, t);
        }
        if pk.flags & FLAG_CE != 0 {
            self.cm.np_marked(&mut self.core, pk.flow, t);
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
    /// tree node (copies first, the frame itself to the last child; sim/multicast.rs).
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

    /// The receiver of go-back-N flow `flow` sends its ACK or NACK (sim/transport.rs).
    pub(super) fn gbn_send_reply(&mut self, flow: u32, code: u32) {
        if let Some((port, pkt)) = self.gbn.reply(&mut self.core, flow, code) {
            self.enqueue_ctrl(port, pkt);
        }
    }

    /// An ACK or NACK reaches the source of `pk.flow`.
    pub(super) fn gbn_on_reply(&mut self, pk: Pkt) {
        if let Some(seq) = self.gbn.on_reply(&mut self.core, pk) {
            self.gbn_go_back(pk.flow as usize, seq);
        }
    }

    /// The retransmission timer of `flow` may expire.
    pub(super) fn on_gbn_rto(&mut self, flow: u32, gen: u32) {
        if let Some(seq) = self.gbn.on_rto(&mut self.core, flow, gen) {
            self.gbn_go_back(flow as usize, seq);
        }
    }

    /// Go back to frame `seq` of flow `fi`: withdraw what has not reached the wire (the source
    /// NIC's queue watchers hear of it), then make frame `seq` next.
    fn gbn_go_back(&mut self, fi: usize, seq: u32) {
        if let Some(w) = self.gbn.withdraw(&mut self.core, fi, seq) {
            self.queue_changed(w.port);
            transport::GbnState::restart(&mut self.core, fi, seq);
        }
    }

    /// A control frame reaches its destination host: go-back-N's acknowledgements go to the
    /// transport, every other kind to congestion management (sim/cm.rs).
    pub(super) fn on_host_control(&mut self, pkt: u32) {
        let pk = self.core.pkts[pkt as usize];
        self.core.release(pkt);
        match pk.kind {
            KIND_ACK | KIND_NACK => self.gbn_on_reply(pk),
            _ => self.cm.host_react(&mut self.core, pk),
        }
    }

    /// DCQCN: the receiver of `flow` sends a CNP (sim/dcqcn.rs).
    pub(super) fn send_cnp(&mut self, flow: u32) {
        if let Some(c) = self.cm.send_cnp(&mut self.core, flow) {
            self.enqueue_ctrl(c.port, c.pkt);
        }
    }
}
