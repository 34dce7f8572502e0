//! The data path: the state every frame touches (the clock, the event queue, the frame arena,
//! ports and flows, the recorder, the transmission-done slot) and the primitives on it. The
//! mechanisms around it (sim/cc, sim/switch, sim/host, sim/topology) borrow [`Core`] to act;
//! the data path's own steps (queueing, sending, delivering: `datapath.rs`; sources and rate
//! limiters: `sources.rs`) call them through the wiring (sim/wiring.rs).

use crate::sim::prelude::*;

mod datapath;
mod fold;
mod sources;

pub(in crate::sim) use fold::Fold;

pub(in crate::sim) const NONE: u32 = u32::MAX;
pub(in crate::sim) const NEVER: SimTime = SimTime::MAX;

/// Engine events. Small and `Copy`; indices refer to the simulator's arenas. (The default only
/// fills the event queue's unused slots; it is never scheduled by being a default.)
#[derive(Clone, Copy, Debug, Default)]
pub(in crate::sim) enum Ev {
    /// A traffic source produces its next frame.
    Gen {
        flow: u32,
    },
    /// The head of a flow's rate-limiter queue may leave (stale if `gen` is old).
    RlRelease {
        flow: u32,
        gen: u32,
    },
    /// A frame has been received by a switch and passed its forwarding latency.
    SwitchArrive {
        pkt: u32,
        /// The frame's flow (for the event loop's prefetch of its hop record; `NONE` for a
        /// control frame).
        flow: u32,
    },
    /// An egress port finished a frame and has more waiting.
    TxDone {
        port: u32,
    },
    /// A control frame reaches a host.
    HostControl {
        pkt: u32,
    },
    /// A rate-limiter timer fires (stale if `gen` is old).
    RpTimer {
        flow: u32,
        gen: u32,
    },
    /// A scheduled change of a port's service rate.
    PortRate {
        entry: u32,
    },
    /// An edge (0 = start, 1 = end) of the multicast statistics window. (Every payload field is
    /// a `u32`, so all variants keep their fields at the same offsets and an event is copied
    /// with few loads.)
    McStats {
        edge: u32,
    },
    #[default]
    SampleQueues,
    SampleRates,
    /// A BA sensor's hold timer (index into the BA sensors; stale if `gen` is old).
    BaTimer {
        ba: u32,
        gen: u32,
    },
    /// A SONAR ping timer (stale if `gen` is old).
    PingTimer {
        flow: u32,
        gen: u32,
    },
    /// A PAUSE/PFC frame for flow-control slot `slot` is acted upon (see sim/switch/flow_control.rs).
    PauseRx {
        slot: u32,
        quanta: u32,
    },
    /// A pause of `slot` may expire (stale if `gen` is old).
    PauseExpire {
        slot: u32,
        gen: u32,
    },
    /// The switch's refresh timer of `slot` (stale if `gen` is old).
    PauseRefresh {
        slot: u32,
        gen: u32,
    },
    /// DCQCN: the receiver of `flow` sends a CNP (sim/cc/dcqcn.rs).
    Cnp {
        flow: u32,
    },
    /// Periodic deadlock / PFC watchdog check (sim/switch/deadlock.rs).
    FcCheck,
    /// Go-back-N: the receiver of `flow` sends an ACK or a NACK (sim/host/transport.rs).
    GbnReply {
        flow: u32,
        code: u32,
    },
    /// Go-back-N: the retransmission timer of `flow` (stale if `gen` is old).
    GbnRto {
        flow: u32,
        gen: u32,
    },
    /// A link fails (`up` = 0) or recovers (sim/topology/links.rs).
    LinkChange {
        link: u32,
        up: u32,
    },
    /// A data frame of a hop-by-hop routed flow reaches its destination host (sim/topology/links.rs).
    Arrive {
        pkt: u32,
    },
    /// An acknowledged flow's receiver sends ACK (or NACK) `pkt` (sim/cc/e2e.rs).
    AckOut {
        pkt: u32,
    },
    /// The delayed-ACK timer of acknowledged flow `flow`'s receiver (stale if `gen` is old).
    AckTimer {
        flow: u32,
        gen: u32,
    },
    /// Control frame `pkt` (a CP's feedback) joins port `port`'s control queue: made by a
    /// switch arrival folded into its frame's start at the source NIC (`Sim::fold_arrival`),
    /// queued at the arrival's instant and rank.
    CtrlOut {
        port: u32,
        pkt: u32,
    },
    /// An event record (`Fold::take(slot)`) made by a folded switch arrival, recorded at
    /// the arrival's instant and rank (`Core::record`).
    FoldRec {
        slot: u32,
    },
}

pub(in crate::sim) const KIND_DATA: u8 = 0;
/// QCN congestion notification message (payload qntzFb).
pub(in crate::sim) const KIND_CNM: u8 = 1;
/// BCN message with feedback (payload Fb in bytes: < 0 negative, > 0 positive).
pub(in crate::sim) const KIND_BCN: u8 = 2;
/// BCN(0,0), severe congestion (payload 0).
pub(in crate::sim) const KIND_BCN0: u8 = 3;
/// NIC-side QCN feedback: a congestion message carrying the CP's Qlen (payload: bytes,
/// saturating; sim/cc/nicfb.rs).
pub(in crate::sim) const KIND_CONMES: u8 = 4;
/// DCQCN congestion notification packet, from a flow's receiver (payload 0; sim/cc/dcqcn.rs).
pub(in crate::sim) const KIND_CNP: u8 = 5;
/// Go-back-N acknowledgement from a flow's receiver (payload: the next expected sequence;
/// sim/host/transport.rs).
pub(in crate::sim) const KIND_ACK: u8 = 6;
/// Go-back-N negative acknowledgement (payload: the sequence to resend from).
pub(in crate::sim) const KIND_NACK: u8 = 7;

/// Frames are 32 bytes, aligned: two to a cache line in the arena, never across two lines.
const _: () = assert!(std::mem::size_of::<Pkt>() == 32);

#[derive(Clone, Copy, Default)]
#[repr(align(32))]
pub(in crate::sim) struct Pkt {
    pub(in crate::sim) born: SimTime,
    pub(in crate::sim) size: u32,
    pub(in crate::sim) flow: u32,
    /// Data: index into the flow's path of the port it is queued at / was sent from (with link
    /// failures: that port + 1, 0 at its source NIC). Control: the port it was last sent on + 1
    /// (`Core::control_sent_on`; 0: not sent on a link yet).
    pub(in crate::sim) hop: u16,
    pub(in crate::sim) kind: u8,
    /// Feedback messages: the payload (see sim/cc/mod.rs for each kind; QCN CNM: qntzFb). Data
    /// frame of a representative-feedback flow: F̂b.
    pub(in crate::sim) fb: i32,
    /// Feedback messages: CPID of the CP that sent it (its port index). Data frame: the CPID tag
    /// of the BCN regulator that limits it, or the representative CPID (NO_CPID = unset).
    pub(in crate::sim) cpid: u32,
    /// Control frames: the node currently holding the frame (their destination is always the
    /// source host of `flow`).
    pub(in crate::sim) at: u32,
    /// Data: [`FLAG_SPECIAL`] (a SONAR special frame), [`FLAG_CE`] (ECN congestion
    /// experienced, set by a DCQCN congestion point), [`FLAG_GBN`] (a go-back-N frame).
    pub(in crate::sim) flags: u8,
}

/// A frame `admit` put into the arena: its index, its size (bytes) and its source NIC's port
/// (`nic`), and whether the flow's NIC stamps it for multicast feedback (`rep_fb`).
#[derive(Clone, Copy)]
pub(in crate::sim) struct Admitted {
    pub(in crate::sim) pkt: u32,
    pub(in crate::sim) size: u32,
    pub(in crate::sim) nic: usize,
    pub(in crate::sim) rep_fb: bool,
}

/// A frame its source has made, waiting in the flow's rate-limiter queue: all a new data frame
/// carries until it leaves the rate limiter (`Sim::admit` makes it a frame in the arena then).
/// Half the size of a frame in the arena, kept in a ring per flow and read in order, so that a
/// backlogged source's queue (often a hundred frames) does not push the arena's frames out of
/// the cache (docs/performance.md, "Greedy sources, fifth round").
#[derive(Clone, Copy)]
pub(in crate::sim) struct Made {
    pub(in crate::sim) born: SimTime,
    pub(in crate::sim) size: u32,
    /// A go-back-N frame's sequence number (`NONE` for other flows).
    pub(in crate::sim) seq: u32,
}

/// `Flow::route`: the frame follows the flow's fixed path.
pub(in crate::sim) const ROUTE_PATH: u8 = 0;
/// Per-packet spraying over the fixed routing tables.
pub(in crate::sim) const ROUTE_SPRAY: u8 = 1;
/// Hop by hop on the routes of the moment (a scenario with link failures).
pub(in crate::sim) const ROUTE_LOOKUP: u8 = 2;

/// `Pkt::flags`: a SONAR special frame.
pub(in crate::sim) const FLAG_SPECIAL: u8 = 1;
/// `Pkt::flags`: ECN CE (marked by a DCQCN congestion point).
pub(in crate::sim) const FLAG_CE: u8 = 2;
/// `Pkt::flags`: a data frame of a go-back-N flow (its sequence number is in `fb`).
pub(in crate::sim) const FLAG_GBN: u8 = 4;
/// `Pkt::flags`: a data frame of a flow its NIC serves round-robin (`Flow::rr`): when its
/// transmission starts at the source NIC, the flow's next frame may leave its rate limiter.
pub(in crate::sim) const FLAG_QP: u8 = 8;

/// What a switch reads of a data frame's flow to forward it (`Core::hops`, one per flow, built by
/// `Core::build_hops` once the flows are built): the ports of the flow's path inline, in a dense
/// array of half cache lines apart from the flows' other state, so that a frame-hop at a switch
/// reads one line of its flow instead of three (the flow's `mc` and `route` on two lines and the
/// path's own allocation; docs/performance.md, "Cost per event by fabric size").
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub(in crate::sim) struct HopRec {
    /// The first `n` ports of the flow's path.
    pub(in crate::sim) path: [u32; HOP_INLINE],
    /// The path's length when the flow follows its fixed path ([`ROUTE_PATH`], unicast) and the
    /// path fits inline; 0 otherwise (the switch then reads the flow itself).
    pub(in crate::sim) n: u32,
}

/// Ports of a path kept inline in a [`HopRec`] (a fat-tree's longest path has 6).
pub(in crate::sim) const HOP_INLINE: usize = 7;
const _: () = assert!(std::mem::size_of::<HopRec>() == 32);

/// A data frame waiting at a fixed port (`Port::fq`): when its transmission starts, its size.
#[derive(Clone, Copy)]
pub(in crate::sim) struct Dep {
    pub(in crate::sim) start: SimTime,
    pub(in crate::sim) size: u32,
}

/// Fields in the order of use (`repr(C)`), in two pairs of cache lines: what a frame-hop at a
/// switch port reads and writes on its arrival, its enqueue and its send (the flags, the CP and
/// sensor slots, the wire times, the queue and its length) in the first 128 bytes; the queue's
/// time integral, the counters, the capacity, the control queue and the QCN CP's countdown in the
/// next 128; a fixed port's queue, the rarely read settings and statistics after them. Aligned to 128 bytes, the pair
/// of lines the processor's adjacent-line prefetcher fetches together, so that a cold port costs
/// two misses where its six lines cost up to five (docs/performance.md, "Cost per event by
/// fabric size").
#[repr(C, align(128))]
pub(in crate::sim) struct Port {
    pub(in crate::sim) cp: u32,
    /// Index of the port's BA sensor, or NONE.
    pub(in crate::sim) ba: u32,
    /// DCQCN marking at dequeue: index of the port's marker in `cps` (NONE otherwise; marking
    /// at enqueue goes through `cp`).
    pub(in crate::sim) ecn: u32,
    pub(in crate::sim) tput_slot: u32,
    /// Serialisation time of the last frame size seen at the current rate (a cache: frames
    /// mostly have one size).
    pub(in crate::sim) last_size: u32,
    pub(in crate::sim) peer: u32,
    pub(in crate::sim) txdone_pending: bool,
    /// Its transmission-done may use the slot beside the event queue (`prepare_ports`).
    pub(in crate::sim) slot_ok: bool,
    /// What never changes during a run allows a frame to go straight to the wire when the port
    /// is idle and empty (`send_direct`; set by `prepare_ports`).
    pub(in crate::sim) direct_ok: bool,
    pub(in crate::sim) peer_is_switch: bool,
    /// The transmitting node is a switch (its data frames count as forwarded).
    pub(in crate::sim) from_switch: bool,
    /// Each data frame's departure is computed when it is queued (`enqueue_fixed`: nothing can
    /// change the order or the time at which this port's frames leave; set by `prepare_ports`).
    /// The frames then wait in `fq` as (start, size), not in `q`.
    pub(in crate::sim) fixed: bool,
    /// PFC: data frames wait in `pq`, one queue per priority (`pq` is not empty).
    pub(in crate::sim) pfc: bool,
    /// The QCN CP's byte countdown to its next sample is `cp_left`, here rather than in the CP's
    /// own state (`Cm::cp_enqueue`: a frame that is not sampled touches only the port's lines;
    /// set by `Cm::place_countdowns`).
    pub(in crate::sim) cp_here: bool,
    pub(in crate::sim) busy_until: SimTime,
    pub(in crate::sim) last_tx: SimTime,
    /// Idle time after the frame of `last_size` (the inter-frame gap at the current rate).
    pub(in crate::sim) last_gap: SimTime,
    /// Delay from the end of transmission to the frame being queued at the peer's egress
    /// (propagation + extra delay line + the peer switch's latency).
    pub(in crate::sim) to_peer_queue: SimTime,
    pub(in crate::sim) q: VecDeque<u32>,
    pub(in crate::sim) q_bytes: u64,
    pub(in crate::sim) max_q_bytes: u64,
    pub(in crate::sim) q_last_t: SimTime,
    pub(in crate::sim) tx_frames: u64,
    // (the second pair of lines)
    /// Integral of the queue length over time, byte·ps.
    pub(in crate::sim) q_area: u128,
    pub(in crate::sim) tx_bytes: u64,
    pub(in crate::sim) cap: Capacity,
    /// Propagation only (to a host).
    pub(in crate::sim) prop: SimTime,
    pub(in crate::sim) ctrl: VecDeque<u32>,
    /// With `cp_here`, the QCN CP's bytes still to be enqueued before its next sample (the
    /// CP's `time_to_mark`, which is then copied in and out only at a sample or a counted
    /// discard).
    pub(in crate::sim) cp_left: f64,
    pub(in crate::sim) rate: f64,
    /// Flow control: frames waiting in `pq` plus flow-control frames waiting to be sent.
    pub(in crate::sim) fc_waiting: u32,
    /// Wire overhead of every frame on this link, bytes: before it (preamble) and after it (IFG).
    pub(in crate::sim) preamble: u32,
    // (rarely read)
    pub(in crate::sim) ifg: u32,
    pub(in crate::sim) node: u32,
    /// A fixed port's queue (`Port::fixed`): each waiting data frame's start of transmission and
    /// size, in order; a frame leaves it when its start has passed (`Core::settle`). (A frame
    /// that would start after the end of the run waits in `q` instead, as a frame.)
    pub(in crate::sim) fq: VecDeque<Dep>,
    /// PFC: one data queue per priority and its bytes (empty otherwise; then `q` is used).
    pub(in crate::sim) pq: Vec<VecDeque<u32>>,
    pub(in crate::sim) pq_bytes: Vec<u64>,
    // statistics
    pub(in crate::sim) drop_frames: u64,
    pub(in crate::sim) drop_bytes: u64,
}

/// The first 128 bytes of a [`Port`] hold what a frame-hop touches first (see its doc).
const _: () = assert!(std::mem::offset_of!(Port, tx_frames) == 120);
const _: () = assert!(std::mem::offset_of!(Port, preamble) < 256);
const _: () = assert!(std::mem::offset_of!(Port, cp_left) < 256);

impl Port {
    /// Cache the wire times of a frame of `size` bytes at the current rate: until its last bit
    /// has left (preamble + frame) and the idle gap after it (IFG).
    #[inline]
    pub(in crate::sim) fn set_wire_times(&mut self, size: u32) {
        self.last_size = size;
        let tx = units::tx_time_f((size + self.preamble) as u64, self.rate);
        self.last_tx = tx;
        self.last_gap = if self.ifg == 0 {
            0
        } else {
            units::tx_time_f((size + self.preamble + self.ifg) as u64, self.rate) - tx
        };
    }

    #[inline]
    pub(in crate::sim) fn q_frames(&self) -> usize {
        self.q.len() + self.fq.len() + self.pq.iter().map(|q| q.len()).sum::<usize>()
    }

    /// A fixed port's frames (`Port::fq`) whose transmission started before `t` leave its
    /// queue, each at its start (the queue's time integral as if it had been dequeued then).
    #[inline(always)]
    pub(in crate::sim) fn settle(&mut self, t: SimTime) {
        while let Some(&Dep { start, size }) = self.fq.front() {
            if start >= t {
                break;
            }
            self.fq.pop_front();
            self.track_q(start);
            self.q_bytes -= size as u64;
        }
    }

    #[inline]
    pub(in crate::sim) fn track_q(&mut self, now: SimTime) {
        self.q_area += self.q_bytes as u128 * (now - self.q_last_t) as u128;
        self.q_last_t = now;
    }
}

/// Fields in the order of use (`repr(C)`): what a frame's generation, departure and delivery
/// read and write first, in five cache lines (the reaction point and the rarely read settings
/// after them); with many flows each flow's lines are cold when its next frame comes. Aligned
/// to a cache line, so that every flow's lines are the same.
#[repr(C, align(64))]
pub(in crate::sim) struct Flow {
    /// Time of the next frame, or NEVER.
    pub(in crate::sim) next_gen: SimTime,
    pub(in crate::sim) gen_k: u64,
    pub(in crate::sim) gen_bytes: u64,
    pub(in crate::sim) gen_frames: u64,
    pub(in crate::sim) stop: SimTime,
    /// CBR schedule origin: the start, or for a go-back-N flow that went back to frame j at t,
    /// t - round(j * gap) (frame j due at t exactly).
    pub(in crate::sim) cbr_t0: SimTime,
    /// Time between CBR frames, ps (fractional; frame k is due at cbr_t0 + round(k * gap)).
    pub(in crate::sim) cbr_gap_ps: f64,
    /// A greedy source's gap between frames, `round_ps(cbr_gap_ps)` (one frame time at its rate).
    pub(in crate::sim) greedy_gap: SimTime,
    pub(in crate::sim) rl_q: VecDeque<Made>,
    pub(in crate::sim) rl_q_bytes: u64,
    pub(in crate::sim) rl_cap: u64,
    pub(in crate::sim) size: Option<u64>,
    pub(in crate::sim) path: Vec<u32>,
    pub(in crate::sim) sent_frames: u64,
    pub(in crate::sim) sent_bytes: u64,
    pub(in crate::sim) frame: u32,
    /// INT bytes each data frame carries on the wire beyond `frame` (HPCC: sim/cc/hpcc.rs).
    pub(in crate::sim) int_bytes: u32,
    /// Go-back-N flow: index into the transport's flows (`GbnState`, NONE for open-loop flows).
    pub(in crate::sim) gbn: u32,
    /// Multicast flow: index into the multicast flows (`Multicast`, NONE for unicast).
    pub(in crate::sim) mc: u32,
    pub(in crate::sim) src: u32,
    pub(in crate::sim) traffic: Traffic,
    /// No Gen event is pending: frames are generated at the next rate-limiter departure.
    pub(in crate::sim) gen_lazy: bool,
    /// Arrivals need more than counting (`deliver`): a subsystem receives them (a multicast or a
    /// go-back-N flow, hop-by-hop routing; sim/fastpath.rs).
    pub(in crate::sim) rx_special: bool,
    /// Representative feedback: data frames carry the RP's F̂b and representative CPID.
    pub(in crate::sim) rep_fb: bool,
    /// The source NIC is paused for this flow's class: its rate limiter sends nothing.
    pub(in crate::sim) gated: bool,
    /// An acknowledged flow (`CcMode::acked`): a window beside its rate limiter decides when a
    /// frame may leave (`hook_window`; sim/cc/e2e.rs).
    pub(in crate::sim) e2e: bool,
    /// Flow-control class (PFC priority queue; 0 otherwise).
    pub(in crate::sim) class: u8,
    /// How data frames are routed at switches: the fixed `path` ([`ROUTE_PATH`]),
    /// spraying ([`ROUTE_SPRAY`]: a port drawn per frame) or hop by hop on the routes of
    /// the moment ([`ROUTE_LOOKUP`], with link failures).
    pub(in crate::sim) route: u8,
    /// The rate limiter's pacer, filled at CR.
    pub(in crate::sim) bucket: TokenBucket,
    /// Departure of the head of the rate-limiter queue.
    pub(in crate::sim) rl_timer: LazyTimer,
    pub(in crate::sim) rx_frames: u64,
    pub(in crate::sim) rx_bytes: u64,
    pub(in crate::sim) delay_sum: f64,
    pub(in crate::sim) late_frames: u64,
    pub(in crate::sim) finish: Option<SimTime>,
    pub(in crate::sim) dst: u32,
    pub(in crate::sim) rl_drops: u64,
    pub(in crate::sim) rp: Option<Reaction>,
    /// The RP's rate-increase timer.
    pub(in crate::sim) rp_timer: LazyTimer,
    pub(in crate::sim) rate_bps: f64,
    pub(in crate::sim) start: SimTime,
    /// Bernoulli slot length and probability; Poisson mean gap (ps).
    pub(in crate::sim) slot_ps: SimTime,
    pub(in crate::sim) p: f64,
    pub(in crate::sim) rng: Rng,
    pub(in crate::sim) nic_drops: u64,
    pub(in crate::sim) net_drops: u64,
    /// At a full rate-limiter queue the source waits instead of dropping the frame (a greedy
    /// source, or `sender = "nic"`).
    pub(in crate::sim) waits: bool,
    /// `sender = "nic"`: the source NIC's egress queue never drops the flow's frames (they wait
    /// in host memory, not in a NIC buffer that could overflow).
    pub(in crate::sim) holds: bool,
    /// The NIC serves this flow round-robin with the host's other such flows (a queue pair:
    /// `sender = "nic"` and `defaults.nic_scheduler = "round_robin"`): at most one of its frames
    /// waits in the NIC's egress queue; the next leaves the rate limiter when that one starts.
    pub(in crate::sim) rr: bool,
    /// A round-robin flow's frame waits in the NIC's egress queue (its rate limiter holds the
    /// next one).
    pub(in crate::sim) at_nic: bool,
}

/// The data path's state: the clock, the event queue, the frame arena, ports and flows, the
/// recorder and the transmission-done slot. The mechanisms around it ([`Sim`]'s other fields)
/// borrow it to act.
pub(in crate::sim) struct Core<'a> {
    pub(in crate::sim) sc: &'a Scenario,
    pub(in crate::sim) now: SimTime,
    /// The end of the run: `meta.duration`, or in drain mode `meta.drain_until` until the last
    /// finite unicast flow finishes (then that instant, at least `duration`).
    pub(in crate::sim) end: SimTime,
    /// Finite unicast flows not finished yet (drain mode ends the run when none is left).
    pub(in crate::sim) unfinished: u64,
    pub(in crate::sim) q: EventQueue<Ev>,
    pub(in crate::sim) pkts: Vec<Pkt>,
    pub(in crate::sim) free: Vec<u32>,
    pub(in crate::sim) ports: Vec<Port>,
    pub(in crate::sim) flows: Vec<Flow>,
    /// Per flow, what a switch reads to forward its data frames ([`HopRec`]).
    pub(in crate::sim) hops: Vec<HopRec>,
    pub(in crate::sim) rec: Recorder,
    pub(in crate::sim) events: u64,
    pub(in crate::sim) frames_forwarded: u64,
    /// ACKs and NACKs dropped in a data queue (`transport.ack_queue = "data"`), and bytes.
    pub(in crate::sim) ack_drops: u64,
    pub(in crate::sim) ack_drop_bytes: u64,
    /// Control frames (feedback, CNPs, ACKs, NACKs) with no route left towards their flow's
    /// source after link failures: not sent, or released at the switch where the route ended
    /// (`Core::feedback_next`; the summary's `unroutable_control`).
    pub(in crate::sim) ctrl_unroutable: u64,
    /// Data frames in the arena (frames still in a rate-limiter queue are not there yet).
    pub(in crate::sim) live_data: u64,
    pub(in crate::sim) lazy_gen: bool,
    /// Frames that a full rate-limiter queue would drop are counted without being built
    /// (`catch_up`); off only to check that against building and dropping each one.
    pub(in crate::sim) count_drops: bool,
    /// Per-packet spraying: the stream of port draws and a scratch list of candidates.
    pub(in crate::sim) spray_rng: Rng,
    pub(in crate::sim) spray_cand: Vec<u32>,
    /// A subsystem asked for the slow path (flow control, a shared memory, link failures):
    /// egress ports take `slow_start_next`, no idle-port shortcut (sim/fastpath.rs).
    pub(in crate::sim) slow: bool,
    /// The transmission-done slot (sim/core/datapath.rs, `txdone_at!`): one `TxDone` kept outside the
    /// event queue, with the sequence number it would have had there; `slot_t` is `NEVER` when
    /// empty. `slot_on` is the test switch (`set_txdone_slot`).
    pub(in crate::sim) slot_t: SimTime,
    pub(in crate::sim) slot_seq: u64,
    pub(in crate::sim) slot_port: u32,
    pub(in crate::sim) slot_on: bool,
    /// Transmission-dones fired from the slot: events, not in `events` (the loop's pops).
    pub(in crate::sim) slot_fires: u64,
    /// Per link: down (sim/topology/links.rs keeps it; empty without link failures).
    pub(in crate::sim) link_down: Vec<bool>,
    /// The routes of the moment, with link failures (sim/topology/links.rs recomputes them).
    pub(in crate::sim) routes_now: Option<crate::scenario::Routes>,
    /// `cc.feedback_route = "reverse"`: per flow, the port back towards the flow's source at
    /// each node of its data path or tree; empty for shortest paths.
    pub(in crate::sim) rev_route: ReverseRoutes,
    /// Test switches of the fast path (sim/fastpath.rs): frames may go straight to the wire,
    /// and the subsystem whose answers the shortcuts ignore.
    pub(in crate::sim) direct_on: bool,
    pub(in crate::sim) ignore_needs: Option<&'static str>,
    /// Test switch of the fixed departures (`set_fixed_departures`), and the fixed ports.
    pub(in crate::sim) fixed_on: bool,
    /// Test switch of the event loop's prefetch (`set_prefetch`; `None`: by the fabric's size).
    pub(in crate::sim) prefetch: Option<bool>,
    pub(in crate::sim) fixed_ports: Vec<u32>,
    /// Switch arrivals folded into the frame's start at its source NIC (`Sim::fold_arrival`;
    /// sim/fastpath.rs, `fold_ports`).
    pub(in crate::sim) fold: Fold,
    /// The pending queue sample (a switch arrival at or after it, folded before it, first keeps
    /// the port's queue for it: `Fold::snap`).
    pub(in crate::sim) next_qsample: SimTime,
    /// A window beside some flow's rate limiter decides when its frames leave (an acknowledged
    /// flow: sim/fastpath.rs, `Needs::gates_departures`): the event loop that tests it runs;
    /// without one, the loop without the test. `gate_skip_on` is the test switch
    /// (`set_gate_skip`: off, the loop that tests runs always).
    pub(in crate::sim) gated_run: bool,
    pub(in crate::sim) gate_skip_on: bool,
}

impl Core<'_> {
    /// The flows' [`HopRec`]s, from their paths, routing and multicast membership (after every
    /// subsystem's build: multicast sets `Flow::mc`).
    pub(in crate::sim) fn build_hops(&mut self) {
        self.hops = self
            .flows
            .iter()
            .map(|f| {
                let mut h = HopRec::default();
                if f.mc == NONE && f.route == ROUTE_PATH && f.path.len() <= HOP_INLINE {
                    h.path[..f.path.len()].copy_from_slice(&f.path);
                    h.n = f.path.len() as u32;
                }
                h
            })
            .collect();
    }

    /// A finite unicast flow finished at `t` (its last byte arrives then). In drain mode the
    /// last one ends the run at `t` (at the earliest at `meta.duration`: arrivals go on until
    /// then). Once per flow: off the frame path.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn flow_finished(&mut self, t: SimTime) {
        self.unfinished -= 1;
        if self.unfinished == 0 && self.sc.drain_until.is_some() {
            self.end = t.max(self.sc.duration).min(self.end);
        }
    }

    /// A frame into the arena (a free slot when there is one).
    #[inline]
    pub(in crate::sim) fn alloc(&mut self, p: Pkt) -> u32 {
        if let Some(i) = self.free.pop() {
            self.pkts[i as usize] = p;
            i
        } else {
            let cap = self.pkts.capacity();
            self.pkts.push(p);
            if self.pkts.capacity() != cap {
                self.pkts_grew();
            }
            (self.pkts.len() - 1) as u32
        }
    }

    /// The frame arena moved to a larger allocation: large pages for it too, as for the other
    /// large arrays at the start of the run (`Core::advise_large_pages`).
    #[cold]
    #[inline(never)]
    fn pkts_grew(&self) {
        hugepage::advise(&self.pkts, self.pkts.capacity() - self.pkts.len());
    }

    /// Large pages for what a frame-hop touches (engine/hugepage.rs): the ports, the flows, their
    /// hop records, the frame arena (with its spare capacity, which it grows into), and the
    /// addresses that hold the ports' queue buffers. Those are small allocations made one after
    /// another when the ports were built, so they lie together in the heap, between the
    /// simulation's other build-time state; the span is advised when it is at most 16 times their
    /// size (else they are too scattered for it to be worth it). Only whole, aligned 2 MiB pages
    /// are advised, so a small run is left as it is.
    pub(in crate::sim) fn advise_large_pages(&self) {
        hugepage::advise(&self.ports, 0);
        hugepage::advise(&self.flows, 0);
        hugepage::advise(&self.hops, 0);
        hugepage::advise(&self.pkts, self.pkts.capacity() - self.pkts.len());
        let (mut lo, mut hi, mut bytes) = (usize::MAX, 0, 0);
        let mut add = |a: usize, n: usize| {
            if n > 0 {
                lo = lo.min(a);
                hi = hi.max(a + n);
                bytes += n;
            }
        };
        for p in &self.ports {
            add(p.q.as_slices().0.as_ptr() as usize, 4 * p.q.capacity());
        }
        if hi > lo && hi - lo <= 16 * bytes {
            hugepage::advise_span(lo, hi);
        }
    }

    /// Control frame `pkt` is sent on port `pi`'s link: kept in its `hop` (port + 1), so that
    /// on arrival it can tell whether that link failed under it (sim/topology/links.rs; read
    /// only with link failures, whose scenarios have fewer than 65,535 ports).
    #[inline]
    pub(in crate::sim) fn control_sent_on(&mut self, pkt: u32, pi: usize) {
        self.pkts[pkt as usize].hop = (pi + 1) as u16;
    }

    /// A frame leaves the arena.
    #[inline]
    pub(in crate::sim) fn release(&mut self, i: u32) {
        if self.pkts[i as usize].kind == KIND_DATA {
            self.live_data -= 1;
        }
        self.free.push(i);
    }

    /// The port a feedback message of `flow` at node `at` leaves by towards the flow's source:
    /// the routes of the moment (with link failures), the shortest path, or
    /// (`cc.feedback_route = "reverse"`) the reverse of the flow's path. `None` (only with
    /// link failures: a route cut) is counted in `ctrl_unroutable`: the caller sends nothing, or
    /// releases the frame.
    #[inline]
    pub(in crate::sim) fn feedback_next(&mut self, at: usize, flow: u32) -> Option<usize> {
        let src = self.flows[flow as usize].src as usize;
        if let Some(r) = &self.routes_now {
            let next = r.next(at, src);
            if next.is_none() {
                self.ctrl_unroutable += 1;
            }
            return next;
        }
        if self.rev_route.is_empty() {
            return self.sc.routes.next(at, src);
        }
        self.rev_route.port(flow as usize, at)
    }

    /// The link of port `pi` is down (always false without link failures).
    #[inline]
    pub(in crate::sim) fn port_down(&self, pi: usize) -> bool {
        self.link_down.get(pi / 2).copied().unwrap_or(false)
    }

    /// The RP's rate-increase timer of `flow` may fire.
    #[inline(never)]
    pub(in crate::sim) fn on_rp_timer(&mut self, flow: u32, gen: u32) {
        let now = self.now;
        let f = &mut self.flows[flow as usize];
        match f.rp_timer.popped(now, gen) {
            Popped::Fire => {
                if let Some(rp) = f.rp.as_mut() {
                    let out = rp.on_timer(now);
                    self.rp_output(flow as usize, out, now);
                }
            }
            Popped::Requeue(t) => self.q.push(t, Ev::RpTimer { flow, gen }),
            Popped::Stale => {}
        }
    }

    /// A scheduled change of a port's service rate (the frame in transmission finishes at the
    /// old rate).
    #[inline(never)]
    pub(in crate::sim) fn on_port_rate(&mut self, entry: usize) {
        let s = &self.sc.schedule[entry];
        let port = &mut self.ports[s.port];
        port.rate = s.rate_bps;
        port.last_size = 0;
    }
}

/// `cc.feedback_route = "reverse"`: for each flow and node on its data path (or multicast tree),
/// the port back towards the source: the reverse direction (`port ^ 1`, the same link) of the
/// path port that enters the node. Every node of a path or tree is entered by one port. Memory
/// is one entry per path port (what is routed), not flows x nodes.
#[derive(Debug, Default)]
pub(in crate::sim) struct ReverseRoutes {
    /// Flow `f`'s entries are `ent[off[f]..off[f + 1]]`, sorted by node.
    off: Vec<usize>,
    /// (node, port back towards the source).
    ent: Vec<(u32, u32)>,
}

impl ReverseRoutes {
    pub(in crate::sim) fn of(sc: &Scenario) -> ReverseRoutes {
        let mut off = Vec::with_capacity(sc.flows.len() + 1);
        let mut ent = Vec::with_capacity(sc.flows.iter().map(|f| f.path.len()).sum());
        off.push(0);
        for f in &sc.flows {
            let first = ent.len();
            for &p in &f.path {
                let (_, to) = sc.port_ends(p);
                ent.push((to as u32, (p ^ 1) as u32));
            }
            ent[first..].sort_unstable();
            off.push(ent.len());
        }
        ReverseRoutes { off, ent }
    }

    pub(in crate::sim) fn is_empty(&self) -> bool {
        self.off.is_empty()
    }

    /// The port back towards flow `f`'s source at node `at`; `None` off its path.
    #[inline]
    pub(in crate::sim) fn port(&self, f: usize, at: usize) -> Option<usize> {
        let e = &self.ent[self.off[f]..self.off[f + 1]];
        e.binary_search_by_key(&(at as u32), |&(n, _)| n)
            .ok()
            .map(|i| e[i].1 as usize)
    }
}
