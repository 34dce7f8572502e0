//! Egress ports, switches and delivery.

use crate::sim::prelude::*;

/// Schedule the transmission-done of port `$pi` (borrowed as `$port`) at `$t`. At a port whose
/// next transmission makes no event (a switch port towards a host, delivering data inline, with
/// no control frame waiting; see `prepare_ports`), it goes to the slot beside the event queue
/// when the slot is free: no push, no pop. It takes the sequence number the push would have
/// taken, and the event loop fires it exactly where the queue would have popped it
/// (`fire_slot`). A macro, not a method: the caller holds the port borrowed, and the slot and the
/// queue are other fields.
macro_rules! txdone_at {
    ($sim:ident, $port:ident, $pi:expr, $t:expr) => {
        if $sim.core.slot_t == NEVER && $port.slot_ok && $port.ctrl.is_empty() {
            $sim.core.slot_t = $t;
            $sim.core.slot_seq = $sim.core.q.reserve_seq();
            $sim.core.slot_port = $pi as u32;
        } else {
            $sim.core.q.push($t, Ev::TxDone { port: $pi as u32 });
        }
    };
}

impl<'a> Sim<'a> {
    // ---------------------------------------------------------------- ports and switches

    /// Hand a data frame to the source host's NIC egress queue (counted sent by [`Sim::admit`]).
    #[inline(always)]
    pub(in crate::sim) fn hand_to_nic(&mut self, fi: usize, a: Admitted) {
        if a.rep_fb {
            self.hook_to_nic(fi, a.pkt);
        }
        self.enqueue_data(a.nic, a.pkt);
    }

    /// Enqueue a data frame at an egress port (drop-tail), run the CP, start transmission.
    #[inline(always)]
    pub(in crate::sim) fn enqueue_data(&mut self, pi: usize, pkt: u32) {
        let port = &self.core.ports[pi];
        if !port.direct_ok {
            // (a port with a CP, the common switch port, tests one flag more)
            if port.fixed {
                self.enqueue_fixed(pi, pkt);
            } else {
                self.enqueue_queued(pi, pkt);
            }
        } else if !self.send_direct(pi, pkt) {
            self.enqueue_queued(pi, pkt);
        }
    }

    /// [`Sim::enqueue_data`] at a port whose departures are fixed at enqueue (`Port::fixed`, a
    /// FIFO switch port towards a host whose order nothing changes: sim/fastpath.rs): the same
    /// admission, queue accounting and congestion point as `enqueue_queued`, then the frame's
    /// transmission is computed now: it starts when the port has sent every frame before it,
    /// and it is delivered inline, as `send_plain` would have when it started. It makes no
    /// event; the frame waits in `fq` as its start and size until that start has passed. A frame
    /// that would start after the end of the run waits in `q`, as it did.
    #[inline(always)]
    fn enqueue_fixed(&mut self, pi: usize, pkt: u32) {
        let pk = &self.core.pkts[pkt as usize];
        let (size, flow, flags) = (pk.size, pk.flow, pk.flags);
        self.enqueue_fixed_as(pi, pkt, size, flow, flags);
    }

    /// [`Sim::enqueue_fixed`] with the frame's size, flow and flags already read (a folded
    /// arrival has them from its send).
    #[inline(never)]
    fn enqueue_fixed_as(&mut self, pi: usize, pkt: u32, size: u32, flow: u32, flags: u8) {
        let now = self.core.now;
        if flags & FLAG_SPECIAL != 0 {
            self.hook_special_arrives(pi, flow);
        }
        let port = &mut self.core.ports[pi];
        // the frames that started before now have left (one starting now leaves after every
        // arrival of the instant: sim/fastpath.rs, `fixed_ports`)
        port.settle(now);
        let fits = match port.cap {
            Capacity::Infinite => true,
            Capacity::Bytes(b) => port.q_bytes + size as u64 <= b,
            Capacity::Frames(n) => ((port.fq.len() + port.q.len()) as u64) < n,
            Capacity::Shared => false,
        };
        // (a fixed port's capacity is its own: no shared memory, no NIC holding the frame, so
        // `admit_over` would refuse it)
        if !fits {
            self.discard(pi, pkt, size, flow);
            return;
        }
        port.track_q(now);
        port.q_bytes += size as u64;
        if port.q_bytes > port.max_q_bytes {
            port.max_q_bytes = port.q_bytes;
        }
        if port.cp != NONE {
            let qb = port.q_bytes;
            self.hook_cp(pi, pkt, qb, size);
        }
        // (no flow control: `hook_enqueued` does nothing here)
        let end_run = self.core.end;
        let port = &mut self.core.ports[pi];
        let start = if now >= port.busy_until {
            now
        } else {
            port.busy_until
        };
        if size != port.last_size {
            port.set_wire_times(size);
        }
        let end = start + port.last_tx;
        port.busy_until = end + port.last_gap;
        if start > end_run {
            // it would start after the end of the run: it stays queued, as a frame
            port.q.push_back(pkt);
            return;
        }
        if start == now {
            // an idle port: it leaves at once, as `kick` sent it
            port.q_bytes -= size as u64;
        } else {
            port.fq.push_back(Dep { start, size });
        }
        port.tx_frames += 1;
        port.tx_bytes += size as u64;
        let (tput, t) = (port.tput_slot, end + port.prop);
        if tput != NONE {
            self.core.rec.count_tput(tput, end, size);
        }
        self.core.frames_forwarded += 1;
        self.deliver(pkt, t);
    }

    /// An idle port with nothing queued and nothing watching its queue (no CP, no BA sensor, no
    /// flow control, no shared memory, no failing links): the frame would be queued and taken
    /// again at once, so it goes straight to the wire (every source NIC paced below its line
    /// rate takes this path). The queue length stays 0 (its time integral does not change), and
    /// only its maximum sees the frame. Returns false, doing nothing, on any other port.
    #[inline(always)]
    fn send_direct(&mut self, pi: usize, pkt: u32) -> bool {
        let now = self.core.now;
        let pk = &self.core.pkts[pkt as usize];
        let (size, flags) = (pk.size, pk.flags);
        let port = &mut self.core.ports[pi];
        // (a port with a CP, the common switch port, fails the first test)
        if port.direct_ok
            && port.q.is_empty()
            && port.ctrl.is_empty()
            && !port.txdone_pending
            && now >= port.busy_until
            && flags & FLAG_SPECIAL == 0
            && match port.cap {
                Capacity::Bytes(b) => size as u64 <= b,
                _ => true,
            }
        {
            if size as u64 > port.max_q_bytes {
                port.max_q_bytes = size as u64;
            }
            self.send_plain(pi, pkt);
            return true;
        }
        false
    }

    /// [`Sim::enqueue_data`] at a port that queues the frame, or drops it.
    #[inline(never)]
    fn enqueue_queued(&mut self, pi: usize, pkt: u32) {
        let now = self.core.now;
        let size = self.core.pkts[pkt as usize].size;
        let flow = self.core.pkts[pkt as usize].flow;
        if self.core.pkts[pkt as usize].flags & FLAG_SPECIAL != 0 {
            self.hook_special_arrives(pi, flow);
        }
        let flows = &self.core.flows;
        let port = &self.core.ports[pi];
        let pfc = port.pfc;
        let fits = port.fits(pfc, size, || flows[flow as usize].class as usize);
        if !fits && !self.admit_over(pi, pkt) {
            self.discard(pi, pkt, size, flow);
            return;
        }
        let port = &mut self.core.ports[pi];
        port.track_q(now);
        if pfc {
            let c = self.core.flows[flow as usize].class as usize;
            port.pq[c].push_back(pkt);
            port.pq_bytes[c] += size as u64;
            port.fc_waiting += 1;
        } else {
            port.q.push_back(pkt);
        }
        port.q_bytes += size as u64;
        if port.q_bytes > port.max_q_bytes {
            port.max_q_bytes = port.q_bytes;
        }
        if port.ba != NONE {
            self.hook_qlen(pi);
        }
        let port = &self.core.ports[pi];
        if port.cp != NONE {
            let qb = port.q_bytes;
            self.hook_cp(pi, pkt, qb, size);
        }
        self.hook_enqueued(pi, pkt);
        self.kick(pi);
    }

    /// A data frame of `size` bytes of `flow` that does not fit port `pi`: counted, recorded,
    /// shown to the port's congestion point (`hook_cp_discard`: one flag test unless it samples
    /// arrivals) and released.
    #[inline(always)]
    fn discard(&mut self, pi: usize, pkt: u32, size: u32, flow: u32) {
        let now = self.core.now;
        let port = &mut self.core.ports[pi];
        port.drop_frames += 1;
        port.drop_bytes += size as u64;
        let f = &mut self.core.flows[flow as usize];
        if !port.from_switch {
            f.nic_drops += 1;
        } else {
            f.net_drops += 1;
        }
        if self.core.rec.wants(REC_DROP) || (self.core.rec.rec_switch_drop && port.from_switch) {
            self.core.record(EvRec {
                t: now,
                kind: REC_DROP,
                node: pi as u32,
                flow,
                value: size as i64,
            });
        }
        self.hook_cp_discard(pi, pkt, size);
        self.core.release(pkt);
    }

    /// Start transmitting if the port is idle, or make sure a TxDone will come. (A port with
    /// a transmission-done pending, the common case at a congested port, returns at once, without
    /// a call.)
    #[inline(always)]
    pub(in crate::sim) fn kick(&mut self, pi: usize) {
        if !self.core.ports[pi].txdone_pending {
            self.kick_waiting(pi);
        }
    }

    /// [`Sim::kick`] at a port without a transmission-done pending.
    #[inline(never)]
    fn kick_waiting(&mut self, pi: usize) {
        let port = &mut self.core.ports[pi];
        if self.core.now >= port.busy_until {
            self.start_next(pi);
        } else {
            port.txdone_pending = true;
            let t = port.busy_until;
            txdone_at!(self, port, pi, t);
        }
    }

    /// Fire the slot's transmission-done (and those it schedules in turn) while it comes before
    /// the event `(t, seq)` and within the run. Returns whether that made any event (never at
    /// the ports `prepare_ports` admits; a guard). Out of line, for the end of the run.
    #[inline(never)]
    pub(in crate::sim) fn fire_slot(&mut self, t: SimTime, seq: u64) -> bool {
        self.fire_slot_inline(t, seq)
    }

    /// [`Sim::fire_slot`] inlined into the event loop (a call there cost about 7 % of the greedy
    /// benchmark's time, 201 alternated rounds: docs/performance.md, "Greedy sources, sixth
    /// round").
    #[inline(always)]
    pub(in crate::sim) fn fire_slot_inline(&mut self, t: SimTime, seq: u64) -> bool {
        let seq0 = self.core.q.pushed();
        let mut refilled = 0;
        loop {
            let st = self.core.slot_t;
            if st > self.core.end || st > t || (st == t && self.core.slot_seq >= seq) {
                break;
            }
            let pi = self.core.slot_port as usize;
            self.core.now = st;
            self.core.slot_t = NEVER;
            // (counted as events at the end: `events` counts the loop's pops alone)
            self.core.slot_fires += 1;
            self.core.ports[pi].txdone_pending = false;
            // (slot ports never take the slow path)
            self.plain_start_next(pi);
            refilled += (self.core.slot_t != NEVER) as u64;
        }
        // every sequence number taken since was a refill of the slot, or an event was made
        self.core.q.pushed() - seq0 != refilled
    }

    /// Move the slot's transmission-done, that of port `pi`, into the event queue with its own
    /// sequence number (a control frame is about to wait at that port: sending it makes an
    /// event).
    #[cold]
    #[inline(never)]
    fn slot_to_queue(&mut self, pi: usize) {
        self.core.q.push_keyed(
            self.core.slot_t,
            self.core.slot_seq,
            Ev::TxDone { port: pi as u32 },
        );
        self.core.slot_t = NEVER;
    }

    /// Take the next frame (control first) and put it on the wire.
    pub(in crate::sim) fn start_next(&mut self, pi: usize) {
        if self.core.slow {
            return self.slow_start_next(pi);
        }
        self.plain_start_next(pi)
    }

    /// `start_next` without flow control (`fc_waiting` is 0).
    #[inline(always)]
    pub(in crate::sim) fn plain_start_next(&mut self, pi: usize) {
        let now = self.core.now;
        let port = &mut self.core.ports[pi];
        let mut ba_dirty = false;
        let pkt = if let Some(c) = port.ctrl.pop_front() {
            c
        } else if let Some(d) = port.q.pop_front() {
            port.track_q(now);
            port.q_bytes -= self.core.pkts[d as usize].size as u64;
            ba_dirty = port.ba != NONE;
            if port.ecn != NONE {
                return self.send_marked(pi, d, ba_dirty);
            }
            d
        } else {
            return;
        };
        self.send_plain(pi, pkt);
        if ba_dirty {
            self.hook_qlen(pi);
        }
    }

    /// `start_next` at a port that marks at dequeue (DCQCN, out of line): mark data frame `pkt`
    /// against the queue it leaves behind, then send it.
    #[inline(never)]
    fn send_marked(&mut self, pi: usize, pkt: u32, ba_dirty: bool) {
        // (an ACK in the data queue, `transport.ack_queue = "data"`, is neither marked nor
        // stamped)
        if self.core.pkts[pkt as usize].kind == KIND_DATA {
            self.hook_dequeue_mark(pi, pkt);
        }
        self.send_plain(pi, pkt);
        if ba_dirty {
            self.hook_qlen(pi);
        }
    }

    /// Put frame `pkt` (already taken from its queue, or never queued) on the wire of port `pi`
    /// and schedule its arrival; without flow control. The same steps as `put_on_wire` +
    /// `transmit`, kept in one body: the hot path of every run.
    #[inline(always)]
    fn send_plain(&mut self, pi: usize, pkt: u32) {
        let now = self.core.now;
        let port = &mut self.core.ports[pi];
        // The fields read one by one, not the frame copied: a copy went through the stack and
        // its size was read back narrower than written, a store-forwarding stall on every send
        // (docs/performance.md, "Greedy sources, sixth round").
        let slot = &mut self.core.pkts[pkt as usize];
        let (size, kind, flags, flow) = (slot.size, slot.kind, slot.flags, slot.flow);
        // the node the frame will be at (read for control frames only; a delivered data frame
        // is released)
        slot.at = port.peer;
        if size != port.last_size {
            port.set_wire_times(size);
        }
        let end = now + port.last_tx;
        port.busy_until = end + port.last_gap;
        port.tx_frames += 1;
        port.tx_bytes += size as u64;
        if port.tput_slot != NONE {
            self.core.rec.count_tput(port.tput_slot, end, size);
        }
        if !port.q.is_empty() || !port.ctrl.is_empty() {
            port.txdone_pending = true;
            let t = port.busy_until;
            txdone_at!(self, port, pi, t);
        }
        if port.peer_is_switch {
            let t = end + port.to_peer_queue;
            if kind == KIND_DATA {
                if port.from_switch {
                    self.core.frames_forwarded += 1;
                } else if flags & (FLAG_GBN | FLAG_QP) != 0 {
                    // a go-back-N or round-robin frame leaves its source NIC (off the
                    // switches' path)
                    self.source_sent(flow, pkt, flags);
                }
                if self.core.fold.run && self.fold_arrival(pkt, size, flow, flags, t) {
                    return;
                }
            } else {
                self.core.control_sent_on(pkt, pi);
            }
            self.core.q.push(t, Ev::SwitchArrive { pkt, flow });
        } else {
            let t = end + port.prop;
            if kind == KIND_DATA {
                if port.from_switch {
                    self.core.frames_forwarded += 1;
                } else if flags & (FLAG_GBN | FLAG_QP) != 0 {
                    self.source_sent(flow, pkt, flags);
                }
                self.deliver(pkt, t);
            } else {
                self.core.control_sent_on(pkt, pi);
                self.core.q.push(t, Ev::HostControl { pkt });
            }
        }
    }

    /// Data frame `pkt` of `flow` starts now at its source NIC and reaches the switch at `t`:
    /// where its next port folds arrivals (`Fold::from`: sim/fastpath.rs, `fold_ports`),
    /// the arrival is handled now, as at `t` (`enqueue_fixed` with the clock at `t`), and makes
    /// no event; its CP's feedback waits for `t` (`Ev::CtrlOut`, pushed where the arrival's
    /// event would have been). Every frame that comes to such a port starts at a source NIC
    /// the same `lead` before its arrival, so handling arrivals at their frames' starts keeps
    /// their order, equal times included (the arrival events were pushed at those starts, in
    /// that order), and nothing else reads the port before `t` but the pending queue sample,
    /// which an arrival at or after it leaves the queue it reads (`Core::fold_snapshot`; with
    /// the sampling interval longer than `lead`, no later sample is pending before `t`). Not
    /// folded, and the port folds nothing until `t` has passed (the event comes first): an
    /// arrival after the end of the run, or of a special or marked frame. Returns whether it
    /// folded.
    #[inline(always)]
    fn fold_arrival(&mut self, pkt: u32, size: u32, flow: u32, flags: u8, t: SimTime) -> bool {
        let h = &self.core.hops[flow as usize];
        if h.n < 2 {
            return false;
        }
        let pi = h.path[1] as usize;
        let from = self.core.fold.from[pi];
        if from == NEVER {
            return false;
        }
        let now = self.core.now;
        if now < from || t > self.core.end || flags & (FLAG_SPECIAL | FLAG_CE) != 0 {
            self.core.fold.from[pi] = from.max(t.saturating_add(1));
            return false;
        }
        let q = self.core.next_qsample;
        if t >= q && self.core.fold.snap[pi].0 != q {
            // the pending sample reads the queue as it is before this arrival
            self.core.fold_snapshot(pi, q);
        }
        self.core.pkts[pkt as usize].hop = 1;
        self.core.now = t;
        self.core.fold.active = true;
        self.core.fold.count += 1;
        self.enqueue_fixed_as(pi, pkt, size, flow, flags);
        self.core.fold.active = false;
        self.core.now = now;
        true
    }

    /// Put frame `pkt` (already taken from its queue) on the wire and schedule its arrival
    /// (flow control's `start_next`; see `start_next` for the same steps without it).
    #[inline]
    pub(in crate::sim) fn transmit(&mut self, pi: usize, pkt: u32) {
        let pk = self.core.pkts[pkt as usize];
        let end = self.core.put_on_wire(pi, pk.size);
        if pk.flags & (FLAG_GBN | FLAG_QP) != 0 && !self.core.ports[pi].from_switch {
            self.source_sent(pk.flow, pkt, pk.flags);
        }
        let port = &self.core.ports[pi];
        let peer = port.peer;
        if port.peer_is_switch {
            if pk.kind == KIND_DATA && port.from_switch {
                self.core.frames_forwarded += 1;
            }
            let t = end + port.to_peer_queue;
            if pk.kind != KIND_DATA {
                self.core.control_sent_on(pkt, pi);
            }
            self.core.pkts[pkt as usize].at = peer;
            self.core.q.push(t, Ev::SwitchArrive { pkt, flow: pk.flow });
        } else {
            let t = end + port.prop;
            if pk.kind == KIND_DATA {
                if port.from_switch {
                    self.core.frames_forwarded += 1;
                }
                self.deliver(pkt, t);
            } else {
                self.core.control_sent_on(pkt, pi);
                self.core.pkts[pkt as usize].at = peer;
                self.core.q.push(t, Ev::HostControl { pkt });
            }
        }
    }

    /// A data frame of `flow` with `flags` starts its transmission at its source NIC: go-back-N
    /// starts its timer, a round-robin flow's next frame may leave its rate limiter. Off the
    /// common path (open-loop frames of generators carry neither flag).
    #[inline(never)]
    fn source_sent(&mut self, flow: u32, pkt: u32, flags: u8) {
        if flags & FLAG_GBN != 0 {
            let seq = self.core.pkts[pkt as usize].fb;
            self.hook_on_wire(flow, pkt, seq);
        }
        if flags & FLAG_QP != 0 {
            self.core.qp_sent(flow as usize);
        }
    }

    /// Prefetch what the next events will touch (the event loop of a large fabric calls this
    /// after each pop, before the event runs): for the third event from now, a switch arrival's
    /// frame and hop record, a port, or a source's flow; for the second, whose lines that
    /// brought in one event ago, the egress port the arriving frame will be queued at, or the
    /// head of the queue a transmission-done will send from. (One event ahead the lines often
    /// had not arrived.) Hints only: nothing here changes state, and
    /// an event that turns out not to come next costs a few useless loads.
    #[inline(never)]
    pub(in crate::sim) fn prefetch_next(&self) {
        let c = &self.core;
        let [_, after, later] = c.q.peek::<3>();
        match later {
            Some(Ev::SwitchArrive { pkt, flow }) => {
                prefetch(c.pkts.as_ptr().wrapping_add(pkt as usize));
                prefetch(c.hops.as_ptr().wrapping_add(flow as usize));
            }
            Some(Ev::TxDone { port }) => Self::prefetch_port(c, port as usize),
            Some(Ev::Gen { flow } | Ev::RlRelease { flow, .. }) => {
                // a source's frame: the flow's first four lines
                let f = c.flows.as_ptr().wrapping_add(flow as usize) as *const u8;
                for k in 0..4 {
                    prefetch(f.wrapping_add(64 * k));
                }
            }
            _ => {}
        }
        match after {
            Some(Ev::SwitchArrive { pkt, flow }) => {
                let (Some(pk), Some(h)) = (c.pkts.get(pkt as usize), c.hops.get(flow as usize))
                else {
                    return;
                };
                let hop = pk.hop as u32 + 1;
                if pk.kind == KIND_DATA && hop < h.n {
                    Self::prefetch_port(c, h.path[hop as usize] as usize);
                }
            }
            Some(Ev::TxDone { port }) => {
                if let Some(&d) = c.ports.get(port as usize).and_then(|p| p.q.front()) {
                    prefetch(c.pkts.as_ptr().wrapping_add(d as usize));
                }
            }
            _ => {}
        }
    }

    /// Prefetch the four lines of port `pi` that a frame-hop touches (`Port`'s first 256 bytes).
    #[inline(always)]
    fn prefetch_port(c: &Core, pi: usize) {
        let p = c.ports.as_ptr().wrapping_add(pi) as *const u8;
        for k in 0..4 {
            prefetch(p.wrapping_add(64 * k));
        }
    }

    #[inline(always)]
    pub(in crate::sim) fn on_switch_arrive(&mut self, pkt: u32) {
        // (the fields read one by one: a copy of the whole frame went through the stack)
        let pk = &mut self.core.pkts[pkt as usize];
        let (flow, at) = (pk.flow, pk.at);
        if pk.kind == KIND_DATA {
            let hop = pk.hop + 1;
            // a flow on its fixed path: the port from its hop record, one line
            let h = &self.core.hops[flow as usize];
            if (hop as u32) < h.n {
                pk.hop = hop;
                let port = h.path[hop as usize] as usize;
                return self.enqueue_data(port, pkt);
            }
            let f = &self.core.flows[flow as usize];
            if f.mc != NONE {
                self.mc_forward(pkt);
                return;
            }
            if f.route == ROUTE_LOOKUP {
                return self.route_lookup(pkt);
            }
            pk.hop = hop;
            let port = if f.route == ROUTE_SPRAY {
                self.spray_port(at as usize, f.dst as usize)
            } else {
                f.path[hop as usize] as usize
            };
            self.enqueue_data(port, pkt);
        } else {
            self.control_arrive(pkt, at, flow);
        }
    }

    /// A control frame `pkt` of `flow` reaches switch `at`: it goes on towards its host (an ACK
    /// or NACK into the data queue with `transport.ack_queue = "data"`). Out of line: data
    /// frames are the switches' common path.
    #[inline(never)]
    fn control_arrive(&mut self, pkt: u32, at: u32, flow: u32) {
        if self.links.is_some() && self.control_lost_on_link(pkt) {
            return;
        }
        let kind = self.core.pkts[pkt as usize].kind;
        match self.core.feedback_next(at as usize, flow) {
            Some(port)
                if (kind == KIND_ACK || kind == KIND_NACK)
                    && self.core.sc.transport.ack_queue == AckQueue::Data =>
            {
                self.enqueue_reply_data(port, pkt)
            }
            Some(port) => self.enqueue_ctrl(port, pkt),
            None => self.core.release(pkt),
        }
    }

    /// `transport.ack_queue = "data"`: ACK or NACK `pkt` joins switch port `pi`'s data queue
    /// (its flow's class queue with PFC), behind the data frames waiting there, and leaves in
    /// their order (paused with that class). It is admitted and counted as a data frame of its
    /// flow's priority, as HPCC's ns-3 does (switch-node.cc `SendToDev`: any frame outside
    /// queue 0 passes the MMU's admission and PFC check): by the port's own capacity (its class
    /// queue's with PFC) or its switch's shared memory, else dropped (`discard_reply`); in the
    /// port's queue length and the flow-control watermarks of its input and egress
    /// (`hook_enqueued`). No congestion point sees it (ns-3 may set the ECN bits of an ACK at
    /// dequeue, which its sender never reads). Its input is the port it was last sent from,
    /// in `cpid` (`Core::frame_input`). Runs with ACKs use neither the slot nor fixed
    /// departures (`prepare_ports`: their receivers make events).
    #[inline(never)]
    fn enqueue_reply_data(&mut self, pi: usize, pkt: u32) {
        if self.core.port_down(pi) {
            // a switch drops what it would send on a failed link (the routes of the moment
            // avoid failed links, so none should come here): counted as a control frame with no
            // route
            self.core.ctrl_unroutable += 1;
            self.core.release(pkt);
            return;
        }
        if self.core.slot_t != NEVER && self.core.slot_port == pi as u32 {
            self.slot_to_queue(pi);
        }
        let now = self.core.now;
        let pk = &self.core.pkts[pkt as usize];
        let (size, flow) = (pk.size, pk.flow as usize);
        let class = self.core.flows[flow].class as usize;
        let port = &self.core.ports[pi];
        debug_assert!(!port.fixed, "an ACK at a port with fixed departures");
        let pfc = !port.pq.is_empty();
        let fits = port.fits(pfc, size, || class);
        if !fits && !self.admit_over(pi, pkt) {
            self.discard_reply(pi, pkt, size);
            return;
        }
        let port = &mut self.core.ports[pi];
        port.track_q(now);
        if pfc {
            port.pq[class].push_back(pkt);
            port.pq_bytes[class] += size as u64;
            port.fc_waiting += 1;
        } else {
            port.q.push_back(pkt);
        }
        port.q_bytes += size as u64;
        if port.q_bytes > port.max_q_bytes {
            port.max_q_bytes = port.q_bytes;
        }
        if port.ba != NONE {
            self.hook_qlen(pi);
        }
        if self.core.slow {
            // its input stays in `cpid` until it leaves (`slow_start_next`)
            self.hook_enqueued(pi, pkt);
        } else {
            // (no flow control, no shared memory: nothing to release when it leaves) the next
            // switch's input
            self.core.pkts[pkt as usize].cpid = pi as u32;
        }
        self.kick(pi);
    }

    /// An ACK or NACK that does not fit switch port `pi` (`enqueue_reply_data`): counted in the
    /// port's drops and the run's `ack_drops` (not in its flow's data drops), and released.
    /// The transport recovers it: a later cumulative ACK, or the retransmission timer.
    #[inline(never)]
    fn discard_reply(&mut self, pi: usize, pkt: u32, size: u32) {
        let port = &mut self.core.ports[pi];
        port.drop_frames += 1;
        port.drop_bytes += size as u64;
        self.core.ack_drops += 1;
        self.core.ack_drop_bytes += size as u64;
        self.core.release(pkt);
    }

    /// A data frame of unicast flow `f`, of `size` bytes born at `born`, is received at `t` (a
    /// finite flow completes when all its bytes have arrived: then `true`, once).
    #[inline(always)]
    pub(in crate::sim) fn count_rx(f: &mut Flow, size: u32, born: SimTime, t: SimTime) -> bool {
        f.rx_frames += 1;
        f.rx_bytes += size as u64;
        f.delay_sum += units::u64_f64(t - born);
        if let Some(total) = f.size {
            if f.rx_bytes >= total && f.finish.is_none() {
                f.finish = Some(t);
                return true;
            }
        }
        false
    }

    /// Per-packet spraying: one of the equal-cost ports of switch `node` towards host `dst`,
    /// drawn uniformly (docs/models/topology.md).
    #[inline(never)]
    fn spray_port(&mut self, node: usize, dst: usize) -> usize {
        self.core
            .sc
            .routes
            .candidates(node, dst, &mut self.core.spray_cand);
        let n = self.core.spray_cand.len();
        // (validation made every destination reachable; a draw only when there is a choice)
        let k = if n > 1 {
            ((self.core.spray_rng.next_u64() as u128 * n as u128) >> 64) as usize
        } else {
            0
        };
        self.core.spray_cand[k] as usize
    }

    pub(in crate::sim) fn enqueue_ctrl(&mut self, pi: usize, pkt: u32) {
        if self.core.ports[pi].from_switch && self.core.port_down(pi) {
            // a switch drops what it would send on a failed link (a host's NIC holds it; the
            // routes of the moment avoid failed links): counted as a control frame with no route
            self.core.ctrl_unroutable += 1;
            self.core.release(pkt);
            return;
        }
        if self.core.slot_t != NEVER && self.core.slot_port == pi as u32 {
            self.slot_to_queue(pi);
        }
        self.core.ports[pi].ctrl.push_back(pkt);
        self.kick(pi);
    }

    /// The data frame reaches its destination host at `t`. (Its fields are read one by one, as
    /// in `send_plain`; a frame of a multicast or go-back-N flow is copied, off the common path.)
    #[inline(always)]
    pub(in crate::sim) fn deliver(&mut self, pkt: u32, t: SimTime) {
        let pk = &self.core.pkts[pkt as usize];
        let (flow, size, born, flags) = (pk.flow, pk.size, pk.born, pk.flags);
        let f = &mut self.core.flows[flow as usize];
        if t > self.core.end {
            f.late_frames += 1;
        } else if f.rx_special {
            if f.route == ROUTE_LOOKUP {
                // its last link may still fail under it: decided at the arrival (sim/topology/links.rs)
                self.core.q.push(t, Ev::Arrive { pkt });
                return;
            }
            // a go-back-N receiver decides what counts as received (sim/host/transport.rs)
            if f.gbn != NONE {
                let pk = self.core.pkts[pkt as usize];
                self.hook_transport_rx(pkt, pk, t);
            } else {
                f.rx_frames += 1;
                f.rx_bytes += size as u64;
                f.delay_sum += units::u64_f64(t - born);
                let hop = self.core.pkts[pkt as usize].hop;
                self.hook_member_rx(flow as usize, hop, size, t);
            }
        } else if Self::count_rx(f, size, born, t) {
            self.core.flow_finished(t);
        }
        // DCQCN: a CE-marked frame that arrives within the run reaches its notification point
        if flags & FLAG_CE != 0 && t <= self.core.end {
            self.hook_marked(flow, t);
        }
        // release(pkt) of a data frame
        self.core.live_data -= 1;
        self.core.free.push(pkt);
    }
}

impl Core<'_> {
    /// The frames of fixed port `pi` (`enqueue_fixed`) whose transmission started before `t`
    /// leave its queue (`Port::settle`).
    #[inline]
    pub(in crate::sim) fn settle(&mut self, pi: usize, t: SimTime) {
        self.ports[pi].settle(t);
    }

    /// Occupy port `pi` with a frame of `size` bytes from now; returns when its last bit leaves.
    /// Makes sure a TxDone comes when more frames wait.
    #[inline]
    pub(in crate::sim) fn put_on_wire(&mut self, pi: usize, size: u32) -> SimTime {
        let now = self.now;
        let port = &mut self.ports[pi];
        if size != port.last_size {
            port.set_wire_times(size);
        }
        let end = now + port.last_tx;
        port.busy_until = end + port.last_gap;
        port.tx_frames += 1;
        port.tx_bytes += size as u64;
        if port.tput_slot != NONE {
            self.rec.count_tput(port.tput_slot, end, size);
        }
        if !port.q.is_empty() || !port.ctrl.is_empty() || port.fc_waiting > 0 {
            port.txdone_pending = true;
            self.q.push(port.busy_until, Ev::TxDone { port: pi as u32 });
        }
        end
    }

    /// The port a data frame of `flow` queued at path entry `hop` (hop >= 1, a switch port)
    /// arrived through: the previous hop, or for a multicast flow its tree parent.
    #[inline]
    pub(in crate::sim) fn input_port(&self, flow: u32, hop: u16) -> usize {
        let f = &self.sc.flows[flow as usize];
        let prev = if f.tree_parent.is_empty() {
            hop as usize - 1
        } else {
            f.tree_parent[hop as usize] as usize
        };
        f.path[prev]
    }

    /// The input of frame `pk` at the switch it is queued at, as flow control and shared
    /// memories key it (the port it was sent from): for a data frame its previous hop
    /// (`input_port`); for an ACK or NACK in the data queue (`transport.ack_queue = "data"`)
    /// the port it was last sent from, kept in its `cpid` (`Sim::ack_out`, `enqueue_reply_data`, `Sim::slow_start_next`).
    #[inline]
    pub(in crate::sim) fn frame_input(&self, pk: &Pkt) -> usize {
        if pk.kind == KIND_DATA {
            self.input_port(pk.flow, pk.hop)
        } else {
            pk.cpid as usize
        }
    }
}
