//! Link-level flow control in the simulator: 802.3x PAUSE and 802.1Qbb PFC. See
//! docs/models/pause.md; the rules live in [`crate::proto::pause`].
//!
//! Indices. A *slot* is one (port, class): `slot = port * classes + class`, where `port`
//! transmits from an upstream node U into a switch S. The slot holds both ends of flow control
//! on that link and class: the receiver state at U's egress port (paused or not) and the sender
//! state at S (whether S wants U paused). S sends its PAUSE/PFC frames on the reverse port
//! `port ^ 1` (S -> U), in a flow-control queue served before everything else. A *meter* is one
//! watermark of a switch: per (input port, class), (egress port, class) or (switch, class)
//! depending on `flow_control.watermark`; it covers a list of slots.
//!
//! Data path: a data frame entering a switch's egress queue adds its size to its meter, and
//! leaving it (start of transmission) subtracts it. A meter crossing XOFF raises the demand of
//! each slot it covers; the first demand queues a PAUSE and arms the refresh timer; the last
//! demand gone queues an XON. A received frame is acted upon `response_delay` after its
//! arrival (event `PauseRx`); a paused egress port starts no new frame of that class (a frame in
//! transmission finishes). A paused host NIC also stops its rate limiters (RP timers frozen, see
//! [`crate::proto::qcn_rp::Rp::pause`]); frames wait in the rate-limiter queues, and frames of
//! flows without an active limiter wait in the NIC queue.

use crate::proto::pause::{
    self as fcp, Crossing, ExpiryCmd, PauseReceiver, PauseSender, RxChange, SendCmd, Watermark,
};
use crate::scenario::flow_control::{self as fcs, FcMode, WatermarkMode};
use crate::sim::prelude::*;

/// Both ends of flow control on one (link, class).
#[derive(Default)]
pub(in crate::sim) struct Slot {
    /// At the upstream sender's egress port: paused or not.
    pub(in crate::sim) rx: PauseReceiver,
    pub(in crate::sim) expiry: LazyTimer,
    /// At the switch: whether it wants the upstream paused.
    tx: PauseSender,
    refresh: LazyTimer,
    /// A frame for this slot is waiting in the switch's flow-control queue.
    queued: bool,
    // per (port, priority) statistics (table pause_priorities)
    sent: u64,
    xon_sent: u64,
    received: u64,
    paused_ps: SimTime,
}

pub(in crate::sim) struct Meter {
    wm: Watermark,
    occ: u64,
    targets: Vec<u32>,
}

#[derive(Default)]
pub(in crate::sim) struct FcPort {
    /// Slots whose frame waits to be sent on this port.
    pending: VecDeque<u32>,
    /// Bit c set: class c of this port is paused.
    pub(in crate::sim) paused_mask: u32,
    /// Since when at least one class is paused.
    pub(in crate::sim) any_since: SimTime,
    paused_ps: SimTime,
    sent: u64,
    xon_sent: u64,
    received: u64,
    /// Of the link this port belongs to.
    pause_ps: SimTime,
    refresh_ps: SimTime,
    response_ps: SimTime,
    prop_ps: SimTime,
    rate_bps: f64,
    /// Host NIC port: the flows it carries.
    nic_flows: Vec<u32>,
}

const EV_XOFF_SENT: u8 = 0;
const EV_XON_SENT: u8 = 1;
const EV_PAUSE: u8 = 2;
const EV_RESUME: u8 = 3;
/// A deadlock cycle found (port: its first port; quanta: its length; duration: stalled for).
pub(in crate::sim) const EV_DEADLOCK: u8 = 4;
/// The watchdog resumed a class (duration: the restoration time).
pub(in crate::sim) const EV_WATCHDOG: u8 = 5;
const EV_NAMES: [&str; 6] = [
    "xoff_sent",
    "xon_sent",
    "pause",
    "resume",
    "deadlock",
    "watchdog",
];

#[derive(Clone, Copy)]
pub(in crate::sim) struct PauseRec {
    pub(in crate::sim) t: SimTime,
    pub(in crate::sim) port: u32,
    pub(in crate::sim) class: u8,
    pub(in crate::sim) kind: u8,
    pub(in crate::sim) quanta: u32,
    /// xoff/xon sent: the pause time carried; pause: until the expiry (-1: until an XON);
    /// resume: how long the port was paused.
    pub(in crate::sim) duration: i64,
}

/// Flow-control state of the whole network (empty when `flow_control.mode = "none"`).
#[derive(Default)]
pub(in crate::sim) struct Fc {
    pub(in crate::sim) on: bool,
    pfc: bool,
    /// Classes (queues) per port.
    pub(in crate::sim) nc: usize,
    xon_only: bool,
    quanta: u32,
    cnm_class: usize,
    /// `transport.ack_queue = "data"`: an ACK at a NIC's control queue waits while its flow's
    /// priority is paused.
    ack_data: bool,
    lossless: Vec<bool>,
    watermark: Option<WatermarkMode>,
    pub(in crate::sim) slots: Vec<Slot>,
    /// Indexed by `key * nc + class` (key = input port, egress port or switch node).
    meters: Vec<Option<Meter>>,
    pub(in crate::sim) ports: Vec<FcPort>,
    /// Deadlock detection and watchdog (sim/switch/deadlock.rs).
    pub(in crate::sim) guard: deadlock::Guard,
    /// Switch nodes that send flow control.
    sends: Vec<bool>,
    recs: Vec<PauseRec>,
    record: bool,
    max_recs: usize,
    // per-bin counts for the ports in metrics.throughput_ports (table pause_bins)
    bin: SimTime,
    nbins: usize,
    /// Bins within the run's actual end (`nbins` sizes the arrays for the latest end).
    bins_shown: usize,
    end: SimTime,
    bin_ports: Vec<u32>,
    /// Per port: its row block in the bin arrays, or NONE.
    bin_slot: Vec<u32>,
    bin_rx: Vec<u64>,
    bin_paused: Vec<u64>,
    pub(in crate::sim) recs_dropped: u64,
    // host queue samples
    hq_t: Vec<i64>,
    hq_flow: Vec<u32>,
    hq_rl_bytes: Vec<i64>,
    hq_rl_frames: Vec<i64>,
    hq_rl_drops: Vec<i64>,
    hq_nic_bytes: Vec<i64>,
    hq_nic_drops: Vec<i64>,
}

impl Fc {
    pub(in crate::sim) fn build(sc: &Scenario) -> Fc {
        let spec = &sc.fc;
        let mut fc = Fc {
            nc: 1,
            max_recs: sc.metrics.max_event_rows,
            record: sc.metrics.record_pause,
            ..Fc::default()
        };
        if !spec.is_on() {
            return fc;
        }
        let nc = spec.classes();
        fc.on = true;
        fc.pfc = spec.mode == FcMode::Pfc;
        fc.nc = nc;
        fc.xon_only = spec.xon_only;
        fc.quanta = spec.pause_quanta;
        fc.cnm_class = spec.cnm_priority;
        fc.ack_data = sc.transport.ack_queue == AckQueue::Data;
        fc.lossless = spec.lossless.clone();
        fc.watermark = Some(spec.watermark);
        fc.guard = deadlock::Guard::build(sc);
        fc.sends = spec.switches.clone();
        let np = sc.n_ports();
        fc.slots = (0..np * nc).map(|_| Slot::default()).collect();
        fc.ports = (0..np)
            .map(|p| {
                let link = &sc.links[p / 2];
                FcPort {
                    pause_ps: spec.pause_ps(link.rate_bps),
                    refresh_ps: spec.refresh_ps(link.rate_bps),
                    response_ps: spec.response_ps(link.rate_bps),
                    prop_ps: link.delay + link.extra_delay,
                    rate_bps: link.rate_bps,
                    ..FcPort::default()
                }
            })
            .collect();
        for (i, f) in sc.flows.iter().enumerate() {
            fc.ports[f.path[0]].nic_flows.push(i as u32);
        }
        // meters of the switches that send flow control
        let sends_into = |p: usize| fc.sends[sc.port_ends(p).1];
        let mut meters: Vec<Option<Meter>> = (0..np * nc).map(|_| None).collect();
        let pf = (spec.watermark == WatermarkMode::Egress).then(|| fcs::PortFlows::new(sc));
        for key in 0..np {
            let (node, inputs): (usize, Vec<usize>) = match spec.watermark {
                WatermarkMode::Ingress => (sc.port_ends(key).1, vec![key]),
                WatermarkMode::Egress => (
                    sc.port_ends(key).0,
                    pf.as_ref()
                        .map_or_else(Vec::new, |pf| pf.feeders(key).to_vec()),
                ),
                // the pool scope of a shared memory (scenario::buffer::global_watermark)
                WatermarkMode::Global => continue,
            };
            // a shared memory decides XOFF/XON itself (sim/switch/buffer.rs)
            if sc.nodes[node].kind != NodeKind::Switch || !fc.sends[node] || sc.buffer.has(node) {
                continue;
            }
            debug_assert!(inputs.iter().all(|&i| sends_into(i)));
            for c in 0..nc {
                if !fc.lossless[c] {
                    continue;
                }
                meters[key * nc + c] = Some(Meter {
                    wm: Watermark::new(spec.xoff_bytes, spec.xon_bytes),
                    occ: 0,
                    targets: inputs.iter().map(|&i| (i * nc + c) as u32).collect(),
                });
            }
        }
        fc.meters = meters;
        fc.bin = sc.metrics.throughput_bin;
        fc.nbins = sc.max_end().div_ceil(fc.bin) as usize;
        fc.end = sc.max_end();
        fc.bins_shown = fc.nbins;
        fc.bin_slot = vec![NONE; np];
        for p in 0..np {
            if sc.metrics.throughput_ports[p] {
                fc.bin_slot[p] = fc.bin_ports.len() as u32;
                fc.bin_ports.push(p as u32);
            }
        }
        fc.bin_rx = vec![0; fc.bin_ports.len() * fc.nbins];
        fc.bin_paused = vec![0; fc.bin_ports.len() * fc.nbins];
        fc
    }

    /// The run's actual end (drain mode may end it before `meta.drain_until`, which the bins
    /// were sized for): pauses still in effect are closed there, bins after it are not shown.
    pub(in crate::sim) fn set_end(&mut self, end: SimTime) {
        self.end = end;
        if self.bin > 0 {
            self.bins_shown = self.nbins.min(end.div_ceil(self.bin) as usize);
        }
    }

    /// Count a flow-control frame acted upon at port `p` at `t`.
    fn bin_frame(&mut self, p: usize, t: SimTime) {
        let slot = self.bin_slot[p];
        let b = (t / self.bin) as usize;
        if slot != NONE && b < self.nbins {
            self.bin_rx[slot as usize * self.nbins + b] += 1;
        }
    }

    /// Add the paused interval `[from, to)` of port `p` to its bins.
    fn bin_paused(&mut self, p: usize, from: SimTime, to: SimTime) {
        let slot = self.bin_slot[p];
        if slot == NONE {
            return;
        }
        let to = to.min(self.end);
        let mut t = from;
        while t < to {
            let b = (t / self.bin) as usize;
            let b_end = ((b as SimTime + 1) * self.bin).min(to);
            if b < self.nbins {
                self.bin_paused[slot as usize * self.nbins + b] += b_end - t;
            }
            t = b_end;
        }
    }

    /// The meter a data frame of `class` in egress port `e` arrived through input
    /// port `input` counts in.
    #[inline]
    fn meter_key(&self, e: usize, input: usize, class: usize) -> usize {
        let key = match self.watermark {
            Some(WatermarkMode::Ingress) => input,
            // (global: no meters, a shared memory decides)
            _ => e,
        };
        key * self.nc + class
    }

    /// Priority column of the pause_events table: -1 for 802.3x PAUSE (all priorities).
    fn prio_col(&self, class: u8) -> i64 {
        if self.pfc {
            class as i64
        } else {
            -1
        }
    }

    pub(in crate::sim) fn record(&mut self, r: PauseRec) {
        if !self.record {
            return;
        }
        if self.recs.len() < self.max_recs {
            self.recs.push(r);
        } else {
            self.recs_dropped += 1;
        }
    }
}

impl Port {
    /// Whether a data frame of `class` fits in this port (PFC: each priority queue has the
    /// port's capacity).
    #[inline]
    pub(in crate::sim) fn class_fits(&self, class: usize, size: u32) -> bool {
        match self.cap {
            Capacity::Infinite => true,
            Capacity::Bytes(b) => self.pq_bytes[class] + size as u64 <= b,
            Capacity::Frames(n) => (self.pq[class].len() as u64) < n,
            // the switch's shared memory decides (sim/switch/buffer.rs)
            Capacity::Shared => false,
        }
    }

    /// Whether a frame of `size` fits in this port's queue (`pfc`: in its class's queue, the
    /// class read only then): the data frames' and the ACKs' in the data queue
    /// (`transport.ack_queue = "data"`) one check. `Capacity::Shared`: the switch's shared
    /// memory decides (`admit_over`, off the common path).
    #[inline(always)]
    pub(in crate::sim) fn fits(&self, pfc: bool, size: u32, class: impl FnOnce() -> usize) -> bool {
        if pfc {
            self.class_fits(class(), size)
        } else {
            match self.cap {
                Capacity::Infinite => true,
                Capacity::Bytes(b) => self.q_bytes + size as u64 <= b,
                Capacity::Frames(n) => (self.q.len() as u64) < n,
                Capacity::Shared => false,
            }
        }
    }
}

/// What the data path sends next at a port with flow control ([`Fc::next_frame`]).
pub(in crate::sim) enum Next {
    /// Nothing may go.
    Nothing,
    /// A flow-control frame for a slot: sent ([`Fc::send_frame`]).
    Pause(usize),
    /// A control frame (CNM and the like) of a class that is not paused.
    Control(u32),
    /// A data frame of a class that is not paused, taken from its queue.
    Data(u32),
}

impl Fc {
    // ---------------------------------------------------------------- data path hooks

    /// A data frame entered egress port `pi` (already queued and counted in `q_bytes`): the
    /// meter it counts in, when that meter rose above XOFF (the wiring raises the demand of
    /// every slot it covers, [`Fc::meter_targets`]).
    pub(in crate::sim) fn enqueued(&mut self, core: &Core, pi: usize, pkt: u32) -> Option<usize> {
        let pk = core.pkts[pkt as usize];
        let port = &core.ports[pi];
        if !port.from_switch {
            return None;
        }
        let class = core.flows[pk.flow as usize].class as usize;
        let input = core.frame_input(&pk);
        let m = self.meter_key(pi, input, class);
        let meter = self.meters[m].as_mut()?;
        meter.occ += pk.size as u64;
        (meter.wm.update(meter.occ) == Crossing::Xoff).then_some(m)
    }

    /// A data frame left egress port `pi`'s queue (its transmission started): the meter it
    /// counted in, when that meter fell below XON.
    pub(in crate::sim) fn dequeued(&mut self, core: &Core, pi: usize, pk: &Pkt) -> Option<usize> {
        let class = core.flows[pk.flow as usize].class as usize;
        let input = core.frame_input(pk);
        let m = self.meter_key(pi, input, class);
        let meter = self.meters[m].as_mut()?;
        meter.occ -= pk.size as u64;
        (meter.wm.update(meter.occ) == Crossing::Xon).then_some(m)
    }

    /// The slots meter `m` covers, and how many.
    #[inline]
    pub(in crate::sim) fn meter_targets(&self, m: usize) -> usize {
        self.meters[m].as_ref().map_or(0, |m| m.targets.len())
    }

    /// The `k`-th slot meter `m` covers.
    #[inline]
    pub(in crate::sim) fn meter_target(&self, m: usize, k: usize) -> usize {
        self.meters[m].as_ref().expect("meter").targets[k] as usize
    }

    /// A watermark (or a shared memory's PG, sim/switch/buffer.rs) covering `slot` rose above XOFF
    /// (`raise`) or fell below XON: whether a frame is to be queued for the slot (the first
    /// demand: a PAUSE, then the refresh is armed; the last one gone: an XON).
    pub(in crate::sim) fn demand(&mut self, slot: usize, raise: bool) -> bool {
        if raise {
            self.slots[slot].tx.raise() == SendCmd::Xoff
        } else if self.slots[slot].tx.lower() == SendCmd::Xon {
            self.slots[slot].refresh.cancel();
            true
        } else {
            false
        }
    }

    pub(in crate::sim) fn arm_refresh(&mut self, core: &mut Core, slot: usize) {
        if self.xon_only {
            return;
        }
        let at = core.now + self.ports[slot / self.nc].refresh_ps;
        if let Some(gen) = self.slots[slot].refresh.arm(at) {
            core.q.push(
                at,
                Ev::PauseRefresh {
                    slot: slot as u32,
                    gen,
                },
            );
        }
    }

    /// Queue a flow-control frame for `slot` on the switch's port back to the sender: that port,
    /// to kick. A frame already waiting for the slot is not duplicated: it carries the state at
    /// transmission.
    pub(in crate::sim) fn queue_frame(&mut self, core: &mut Core, slot: usize) -> Option<usize> {
        let s = &mut self.slots[slot];
        if s.queued {
            return None;
        }
        s.queued = true;
        let r = (slot / self.nc) ^ 1;
        self.ports[r].pending.push_back(slot as u32);
        core.ports[r].fc_waiting += 1;
        Some(r)
    }

    /// `start_next` with flow control: flow-control frames first, then CNMs and data of
    /// classes that are not paused (PFC: the highest priority first). A data frame is taken
    /// from its queue.
    #[inline]
    pub(in crate::sim) fn next_frame(&mut self, core: &mut Core, pi: usize) -> Next {
        let now = core.now;
        if let Some(slot) = self.ports[pi].pending.pop_front() {
            core.ports[pi].fc_waiting -= 1;
            return Next::Pause(slot as usize);
        }
        let mask = self.ports[pi].paused_mask;
        let port = &mut core.ports[pi];
        let cnm_blocked = if self.pfc {
            // with `transport.ack_queue = "data"` an ACK or NACK waiting at a NIC goes before
            // its data frames but waits while its flow's priority is paused (HPCC's ns-3
            // RdmaEgressQueue: its ACK queue is paused with ack_q_idx)
            let class = match port.ctrl.front() {
                Some(&c)
                    if self.ack_data
                        && matches!(core.pkts[c as usize].kind, KIND_ACK | KIND_NACK) =>
                {
                    core.flows[core.pkts[c as usize].flow as usize].class as usize
                }
                _ => self.cnm_class,
            };
            mask >> class & 1 == 1
        } else {
            mask != 0
        };
        if !cnm_blocked {
            if let Some(c) = port.ctrl.pop_front() {
                return Next::Control(c);
            }
        }
        let pkt = if self.pfc {
            let Some(c) = (0..self.nc)
                .rev()
                .find(|&c| mask >> c & 1 == 0 && !port.pq[c].is_empty())
            else {
                return Next::Nothing;
            };
            let d = port.pq[c].pop_front().expect("class queue not empty");
            let size = core.pkts[d as usize].size as u64;
            port.track_q(now);
            port.q_bytes -= size;
            port.pq_bytes[c] -= size;
            port.fc_waiting -= 1;
            d
        } else {
            if mask != 0 {
                return Next::Nothing;
            }
            let Some(d) = port.q.pop_front() else {
                return Next::Nothing;
            };
            port.track_q(now);
            port.q_bytes -= core.pkts[d as usize].size as u64;
            d
        };
        self.guard.last_data[pi] = now;
        Next::Data(pkt)
    }

    /// Send the flow-control frame of `slot` on port `pi` (it is acted upon at the sender one
    /// propagation and one response delay after its last bit).
    pub(in crate::sim) fn send_frame(&mut self, core: &mut Core, pi: usize, slot: usize) {
        let now = core.now;
        let nc = self.nc;
        let s = &mut self.slots[slot];
        s.queued = false;
        let quanta = s.tx.quanta(self.quanta);
        s.sent += 1;
        if quanta == 0 {
            s.xon_sent += 1;
        }
        let link_port = slot / nc;
        let class = (slot % nc) as u8;
        let fp = &mut self.ports[pi];
        fp.sent += 1;
        if quanta == 0 {
            fp.xon_sent += 1;
        }
        let duration = if quanta == 0 { 0 } else { fp.pause_ps as i64 };
        let prop = fp.prop_ps;
        let act = core.put_on_wire(pi, fcp::FRAME_BYTES) + prop + self.ports[link_port].response_ps;
        self.record(PauseRec {
            t: now,
            port: pi as u32,
            class,
            kind: if quanta == 0 {
                EV_XON_SENT
            } else {
                EV_XOFF_SENT
            },
            quanta,
            duration,
        });
        core.q.push(
            act,
            Ev::PauseRx {
                slot: slot as u32,
                quanta: quanta as u16 as u32,
            },
        );
    }

    // ---------------------------------------------------------------- events

    /// A PAUSE/PFC frame for `slot` is acted upon (response delay after its arrival). Returns
    /// the port to kick, when it resumed.
    pub(in crate::sim) fn on_pause_rx(
        &mut self,
        core: &mut Core,
        slot: usize,
        quanta: u32,
    ) -> Option<usize> {
        let now = core.now;
        let p = slot / self.nc;
        self.bin_frame(p, now);
        self.slots[slot].received += 1;
        let fp = &mut self.ports[p];
        fp.received += 1;
        if quanta != 0 && now < self.guard.ignore_until[slot] {
            // the watchdog fired on this class: PAUSE/PFC frames are ignored for a while
            return None;
        }
        let arrival = now - fp.response_ps;
        let pause_ps = if quanta == 0 {
            0
        } else {
            fcp::quanta_to_ps(quanta, fp.rate_bps)
        };
        let s = &mut self.slots[slot];
        let (change, cmd) = s.rx.on_frame(now, arrival, pause_ps, self.xon_only);
        let until = s.rx.until();
        match cmd {
            ExpiryCmd::Keep => {}
            ExpiryCmd::Cancel => s.expiry.cancel(),
            ExpiryCmd::Arm(t) => {
                if let Some(gen) = s.expiry.arm(t) {
                    core.q.push(
                        t,
                        Ev::PauseExpire {
                            slot: slot as u32,
                            gen,
                        },
                    );
                }
            }
        }
        self.apply(core, slot, change, quanta, until)
    }

    /// A pause of `slot` may expire: the port to kick, when it resumed.
    pub(in crate::sim) fn on_pause_expire(
        &mut self,
        core: &mut Core,
        slot: usize,
        gen: u32,
    ) -> Option<usize> {
        let s = &mut self.slots[slot];
        match s.expiry.popped(core.now, gen) {
            Popped::Fire => {
                let change = s.rx.on_expiry(core.now);
                self.apply(core, slot, change, 0, 0)
            }
            Popped::Requeue(t) => {
                core.q.push(
                    t,
                    Ev::PauseExpire {
                        slot: slot as u32,
                        gen,
                    },
                );
                None
            }
            Popped::Stale => None,
        }
    }

    /// The switch's refresh timer of `slot`: whether a PAUSE is to be queued again (then the
    /// refresh is armed again).
    pub(in crate::sim) fn on_pause_refresh(
        &mut self,
        core: &mut Core,
        slot: usize,
        gen: u32,
    ) -> bool {
        match self.slots[slot].refresh.popped(core.now, gen) {
            Popped::Fire => self.slots[slot].tx.on_refresh() == SendCmd::Xoff,
            Popped::Requeue(t) => {
                core.q.push(
                    t,
                    Ev::PauseRefresh {
                        slot: slot as u32,
                        gen,
                    },
                );
                false
            }
            Popped::Stale => false,
        }
    }

    /// Apply a receiver state change of `slot`: the port to kick, when it resumed.
    pub(in crate::sim) fn apply(
        &mut self,
        core: &mut Core,
        slot: usize,
        change: RxChange,
        quanta: u32,
        until: SimTime,
    ) -> Option<usize> {
        let now = core.now;
        let nc = self.nc;
        let p = slot / nc;
        let class = slot % nc;
        match change {
            RxChange::None | RxChange::Extended => None,
            RxChange::Paused => {
                let fp = &mut self.ports[p];
                if fp.paused_mask == 0 {
                    fp.any_since = now;
                }
                fp.paused_mask |= 1 << class;
                self.record(PauseRec {
                    t: now,
                    port: p as u32,
                    class: class as u8,
                    kind: EV_PAUSE,
                    quanta,
                    duration: if until == fcp::NEVER {
                        -1
                    } else {
                        (until - now) as i64
                    },
                });
                self.gate_flows(core, p, class, true);
                None
            }
            RxChange::Resumed { paused_for } => {
                self.slots[slot].paused_ps += paused_for;
                let fp = &mut self.ports[p];
                fp.paused_mask &= !(1 << class);
                if fp.paused_mask == 0 {
                    fp.paused_ps += now - fp.any_since;
                    let since = fp.any_since;
                    self.bin_paused(p, since, now);
                }
                self.record(PauseRec {
                    t: now,
                    port: p as u32,
                    class: class as u8,
                    kind: EV_RESUME,
                    quanta: 0,
                    duration: paused_for as i64,
                });
                self.gate_flows(core, p, class, false);
                Some(p)
            }
        }
    }

    /// A host NIC port's class was paused (`gate`) or resumed: stop or restart the rate
    /// limiters of its flows of that class and freeze or thaw their RP timers.
    fn gate_flows(&mut self, core: &mut Core, p: usize, class: usize, gate: bool) {
        let now = core.now;
        for k in 0..self.ports[p].nic_flows.len() {
            let fi = self.ports[p].nic_flows[k] as usize;
            let f = &mut core.flows[fi];
            if f.class as usize != class {
                continue;
            }
            f.gated = gate;
            let out = match f.rp.as_mut() {
                Some(rp) if gate => rp.pause(now),
                Some(rp) => rp.resume(now),
                None => RpOutput::NONE,
            };
            core.rp_output(fi, out, now);
            let f = &mut core.flows[fi];
            if gate {
                if Core::rl_limited(f) {
                    f.rl_timer.cancel();
                }
            } else if !f.rl_q.is_empty() && !f.rl_timer.is_armed() {
                if Core::rl_limited(f) {
                    core.schedule_rl(fi);
                } else {
                    core.arm_rl(fi, now);
                }
            }
        }
    }

    // ---------------------------------------------------------------- output

    /// Sample every flow's rate-limiter queue and its NIC queue (after the sources caught up
    /// to just before `t`, `Sim::sample_host_queues`).
    pub(in crate::sim) fn sample_host_queues(&mut self, core: &Core, t: SimTime) {
        for (fi, f) in core.flows.iter().enumerate() {
            let nic = &core.ports[f.path[0] as usize];
            self.hq_t.push(t as i64);
            self.hq_flow.push(fi as u32);
            self.hq_rl_bytes.push(f.rl_q_bytes as i64);
            self.hq_rl_frames.push(f.rl_q.len() as i64);
            self.hq_rl_drops.push(f.rl_drops as i64);
            self.hq_nic_bytes.push(nic.q_bytes as i64);
            self.hq_nic_drops.push(f.nic_drops as i64);
        }
    }
}

impl Fc {
    /// Flow control's columns of the ports table: PAUSE/PFC frames sent and received, time
    /// paused, up to `end`.
    pub(in crate::sim) fn port_columns(&self, n_ports: usize, end: SimTime) -> Columns {
        let s = self.port_stats(n_ports, end);
        vec![
            (
                "pause_sent",
                ColumnData::I64(s.iter().map(|x| x.0).collect()),
            ),
            (
                "pause_received",
                ColumnData::I64(s.iter().map(|x| x.1).collect()),
            ),
            (
                "paused_ps",
                ColumnData::I64(s.iter().map(|x| x.2).collect()),
            ),
        ]
    }

    /// Per-port (PAUSE frames sent, received, paused time in ps) up to `end`.
    pub(in crate::sim) fn port_stats(&self, n_ports: usize, end: SimTime) -> Vec<(i64, i64, i64)> {
        (0..n_ports)
            .map(|p| match self.ports.get(p) {
                None => (0, 0, 0),
                Some(fp) => {
                    let open = if fp.paused_mask != 0 {
                        end.saturating_sub(fp.any_since)
                    } else {
                        0
                    };
                    (
                        fp.sent as i64,
                        fp.received as i64,
                        (fp.paused_ps + open) as i64,
                    )
                }
            })
            .collect()
    }

    pub(in crate::sim) fn tables(
        &mut self,
        port_name: &[String],
        flow_name: &[&str],
    ) -> Vec<Table> {
        let fc = self;
        // rows are recorded when they happen, so they are in time order
        let recs = std::mem::take(&mut fc.recs);
        let prio: Vec<i64> = recs.iter().map(|r| fc.prio_col(r.class)).collect();
        let events = Table::new("pause_events")
            .col(
                "t_ps",
                ColumnData::I64(recs.iter().map(|r| r.t as i64).collect()),
            )
            .col(
                "port",
                ColumnData::Str(
                    recs.iter()
                        .map(|r| port_name[r.port as usize].clone())
                        .collect(),
                ),
            )
            .col("priority", ColumnData::I64(prio))
            .col(
                "event",
                ColumnData::Str(
                    recs.iter()
                        .map(|r| EV_NAMES[r.kind as usize].to_string())
                        .collect(),
                ),
            )
            .col(
                "quanta",
                ColumnData::I64(recs.iter().map(|r| r.quanta as i64).collect()),
            )
            .col(
                "duration_ps",
                ColumnData::I64(recs.iter().map(|r| r.duration).collect()),
            );
        // pauses still in effect at the end
        for p in 0..fc.ports.len() {
            if fc.ports[p].paused_mask != 0 {
                let since = fc.ports[p].any_since;
                fc.bin_paused(p, since, fc.end);
            }
        }
        let (mut bp, mut bt, mut brx, mut bps) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (slot, &p) in fc.bin_ports.iter().enumerate() {
            for b in 0..fc.bins_shown {
                bp.push(port_name[p as usize].clone());
                bt.push((b as SimTime * fc.bin) as i64);
                brx.push(fc.bin_rx[slot * fc.nbins + b] as i64);
                bps.push(fc.bin_paused[slot * fc.nbins + b] as i64);
            }
        }
        let bins = Table::new("pause_bins")
            .col("port", ColumnData::Str(bp))
            .col("t_ps", ColumnData::I64(bt))
            .col("bin_ps", ColumnData::I64(vec![fc.bin as i64; brx.len()]))
            .col("pause_received", ColumnData::I64(brx))
            .col("paused_ps", ColumnData::I64(bps));
        let hq = Table::new("host_queues")
            .col(
                "flow",
                ColumnData::Str(
                    fc.hq_flow
                        .iter()
                        .map(|&f| flow_name[f as usize].to_string())
                        .collect(),
                ),
            )
            .col("t_ps", ColumnData::I64(std::mem::take(&mut fc.hq_t)))
            .col(
                "rl_qlen_bytes",
                ColumnData::I64(std::mem::take(&mut fc.hq_rl_bytes)),
            )
            .col(
                "rl_qlen_frames",
                ColumnData::I64(std::mem::take(&mut fc.hq_rl_frames)),
            )
            .col(
                "rl_dropped_frames",
                ColumnData::I64(std::mem::take(&mut fc.hq_rl_drops)),
            )
            .col(
                "nic_qlen_bytes",
                ColumnData::I64(std::mem::take(&mut fc.hq_nic_bytes)),
            )
            .col(
                "nic_dropped_frames",
                ColumnData::I64(std::mem::take(&mut fc.hq_nic_drops)),
            );
        // per (port, priority): every slot that sent, received or was paused
        let (mut pp, mut pc, mut ps, mut px, mut pr, mut pt) = (
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        for (k, s) in fc.slots.iter().enumerate() {
            let open = if s.rx.is_paused() {
                fc.end.saturating_sub(s.rx.since())
            } else {
                0
            };
            if s.sent == 0 && s.received == 0 && s.paused_ps + open == 0 {
                continue;
            }
            pp.push(port_name[k / fc.nc].clone());
            pc.push(fc.prio_col((k % fc.nc) as u8));
            ps.push(s.sent as i64);
            px.push(s.xon_sent as i64);
            pr.push(s.received as i64);
            pt.push((s.paused_ps + open) as i64);
        }
        let prios = Table::new("pause_priorities")
            .col("port", ColumnData::Str(pp))
            .col("priority", ColumnData::I64(pc))
            .col("pause_sent", ColumnData::I64(ps))
            .col("xon_sent", ColumnData::I64(px))
            .col("pause_received", ColumnData::I64(pr))
            .col("paused_ps", ColumnData::I64(pt));
        if fc.on {
            vec![events, bins, hq, prios]
        } else {
            vec![events, bins, hq]
        }
    }
}

/// Summary rows that warn (metric `warning_...`; docs/tables.md, "Warnings").
impl Fc {
    /// Data frames still waiting behind a paused class at the end of the run: a pause that
    /// outlived the run, or frames stuck for good (a PFC deadlock, found by the detector or
    /// not).
    pub(in crate::sim) fn stuck_warnings(&self, core: &Core) -> fct::Rows {
        if !self.on {
            return Vec::new();
        }
        let (mut frames, mut ports) = (0usize, 0usize);
        for (p, fp) in self.ports.iter().enumerate() {
            if fp.paused_mask == 0 {
                continue;
            }
            let port = &core.ports[p];
            let waiting: usize = if port.pq.is_empty() {
                port.q.len()
            } else {
                (0..self.nc)
                    .filter(|&c| fp.paused_mask >> c & 1 == 1)
                    .map(|c| port.pq[c].len())
                    .sum()
            };
            if waiting > 0 {
                frames += waiting;
                ports += 1;
            }
        }
        if frames == 0 {
            return Vec::new();
        }
        let found = match (self.guard.detect, self.guard.deadlocks.len()) {
            (None, _) => "deadlock detection is off (flow_control.deadlock_detect)".to_string(),
            (Some(_), 0) => "the deadlock detector found no cycle".to_string(),
            (Some(_), n) => format!("the deadlock detector found {n} cycle(s)"),
        };
        vec![(
            "warning_frames_stuck_behind_pause".into(),
            frames as f64,
            "frames".into(),
            format!(
                "data frames waiting behind a paused class at the end of the run, at {ports} \
                 port(s); {found}"
            ),
        )]
    }
}

impl Needs for Fc {
    fn name(&self) -> &'static str {
        "fc"
    }
    /// Watermarks count what enters and leaves a switch's queues; a paused class holds its
    /// frames.
    fn slow_path(&self) -> bool {
        self.on
    }
    /// PFC's per-priority queues.
    fn watches_queue(&self, core: &Core, pi: usize) -> bool {
        !core.ports[pi].pq.is_empty()
    }
    /// A paused port holds its frames.
    fn moves_departures(&self, _core: &Core, _pi: usize) -> bool {
        self.on
    }
    /// PAUSE and PFC frames go to the sending hosts too.
    fn sends_control(&self, _core: &Core, _fi: usize) -> bool {
        self.on
    }
}
