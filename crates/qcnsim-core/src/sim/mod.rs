//! The simulator: network elements, traffic sources and congestion management wired to the
//! event engine. One single-threaded loop over [`Ev`]; frames live in an arena and move by
//! index; nothing is allocated per frame once queues have reached their working size.
//!
//! Timing model (see docs/models/network.md):
//! - an egress port serialises a frame at its current service rate; the frame leaves the queue
//!   when its transmission starts; control frames (CNMs) wait in a separate strict-priority
//!   queue that the CP never sees;
//! - a frame arrives at the next node `prop + extra_delay` after its last bit left, and enters a
//!   switch's egress queue `latency` later (store and forward);
//! - delivery of a data frame to its destination host is resolved when its transmission starts
//!   (the arrival instant is known exactly then), which saves one event per frame; frames whose
//!   arrival falls after the end of the run count as in flight.

use crate::engine::rng::kinds;
use crate::engine::{EventQueue, LazyTimer, Popped, Rng, StreamId};
use crate::net::TokenBucket;
use crate::proto::multicast::NO_CPID;
use crate::proto::qcn_cp::Cp;
use crate::proto::qcn_rp::{Rp, RpOutput, TimerCmd};
use crate::scenario::flow_control::FcMode;
use crate::scenario::{Capacity, CcMode, NodeKind, Scenario, Traffic};
use crate::table::{ColumnData, RunOutput, Table};
use crate::units::{self, round_ps, SimTime};
use cm::Reaction;
use std::collections::VecDeque;
use std::time::Instant;

mod bcn;
mod build;
mod error;
pub use error::RunError;
mod buffer;
mod cm;
mod dcqcn;
mod deadlock;
mod fabric;
mod fastpath;
mod fct;
mod links;
mod multicast;
mod nicfb;
mod output;
mod pause;
mod qcn;
mod traffic;
mod transient;
mod transport;
mod wiring;
pub use transient::path_rtt;

const NONE: u32 = u32::MAX;
const NEVER: SimTime = SimTime::MAX;

/// Engine events. Small and `Copy`; indices refer to the simulator's arenas. (The default only
/// fills the event queue's unused slots; it is never scheduled by being a default.)
#[derive(Clone, Copy, Debug, Default)]
enum Ev {
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
    /// A PAUSE/PFC frame for flow-control slot `slot` is acted upon (see sim/pause.rs).
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
    /// DCQCN: the receiver of `flow` sends a CNP (sim/dcqcn.rs).
    Cnp {
        flow: u32,
    },
    /// Periodic deadlock / PFC watchdog check (sim/deadlock.rs).
    FcCheck,
    /// Go-back-N: the receiver of `flow` sends an ACK or a NACK (sim/transport.rs).
    GbnReply {
        flow: u32,
        code: u32,
    },
    /// Go-back-N: the retransmission timer of `flow` (stale if `gen` is old).
    GbnRto {
        flow: u32,
        gen: u32,
    },
    /// A link fails (`up` = 0) or recovers (sim/links.rs).
    LinkChange {
        link: u32,
        up: u32,
    },
    /// A data frame of a hop-by-hop routed flow reaches its destination host (sim/links.rs).
    Arrive {
        pkt: u32,
    },
}

const KIND_DATA: u8 = 0;
/// QCN congestion notification message (payload qntzFb).
const KIND_CNM: u8 = 1;
/// BCN message with feedback (payload Fb in bytes: < 0 negative, > 0 positive).
const KIND_BCN: u8 = 2;
/// BCN(0,0), severe congestion (payload 0).
const KIND_BCN0: u8 = 3;
/// NIC-side QCN feedback: a congestion message carrying the CP's Qlen (payload: bytes,
/// saturating; sim/nicfb.rs).
const KIND_CONMES: u8 = 4;
/// DCQCN congestion notification packet, from a flow's receiver (payload 0; sim/dcqcn.rs).
const KIND_CNP: u8 = 5;
/// Go-back-N acknowledgement from a flow's receiver (payload: the next expected sequence;
/// sim/transport.rs).
const KIND_ACK: u8 = 6;
/// Go-back-N negative acknowledgement (payload: the sequence to resend from).
const KIND_NACK: u8 = 7;

/// Frames are 32 bytes, aligned: two to a cache line in the arena, never across two lines.
const _: () = assert!(std::mem::size_of::<Pkt>() == 32);

#[derive(Clone, Copy, Default)]
#[repr(align(32))]
struct Pkt {
    born: SimTime,
    size: u32,
    flow: u32,
    /// Data: index into the flow's path of the port it is queued at / was sent from.
    hop: u16,
    kind: u8,
    /// Feedback messages: the payload (see sim/cm.rs for each kind; QCN CNM: qntzFb). Data
    /// frame of a representative-feedback flow: F̂b.
    fb: i32,
    /// Feedback messages: CPID of the CP that sent it (its port index). Data frame: the CPID tag
    /// of the BCN regulator that limits it, or the representative CPID (NO_CPID = unset).
    cpid: u32,
    /// Control frames: the node currently holding the frame (their destination is always the
    /// source host of `flow`).
    at: u32,
    /// Data: [`FLAG_SPECIAL`] (a SONAR special frame), [`FLAG_CE`] (ECN congestion
    /// experienced, set by a DCQCN congestion point), [`FLAG_GBN`] (a go-back-N frame).
    flags: u8,
}

/// A frame its source has made, waiting in the flow's rate-limiter queue: all a new data frame
/// carries until it leaves the rate limiter (`Sim::admit` makes it a frame in the arena then).
/// Half the size of a frame in the arena, kept in a ring per flow and read in order, so that a
/// backlogged source's queue (often a hundred frames) does not push the arena's frames out of
/// the cache (docs/performance.md, "Greedy sources, fifth round").
#[derive(Clone, Copy)]
struct Made {
    born: SimTime,
    size: u32,
    /// A go-back-N frame's sequence number (`NONE` for other flows).
    seq: u32,
}

/// `Pkt::flags`: a SONAR special frame.
const FLAG_SPECIAL: u8 = 1;
/// `Pkt::flags`: ECN CE (marked by a DCQCN congestion point).
const FLAG_CE: u8 = 2;
/// `Pkt::flags`: a data frame of a go-back-N flow (its sequence number is in `fb`).
const FLAG_GBN: u8 = 4;

/// Fields in the order of use (`repr(C)`): what the send of a frame reads and writes first, in
/// four cache lines (the compiler's own order spread it over all six); statistics and rarely
/// read settings last. Aligned to a cache line, so that every port's lines are the same.
#[repr(C, align(64))]
struct Port {
    cp: u32,
    /// Index of the port's BA sensor, or NONE.
    ba: u32,
    /// DCQCN marking at dequeue: index of the port's marker in `cps` (NONE otherwise; marking
    /// at enqueue goes through `cp`).
    ecn: u32,
    tput_slot: u32,
    /// Serialisation time of the last frame size seen at the current rate (a cache: frames
    /// mostly have one size).
    last_size: u32,
    peer: u32,
    txdone_pending: bool,
    /// Its transmission-done may use the slot beside the event queue (`prepare_ports`).
    slot_ok: bool,
    /// What never changes during a run allows a frame to go straight to the wire when the port
    /// is idle and empty (`send_direct`; set by `prepare_ports`).
    direct_ok: bool,
    peer_is_switch: bool,
    /// The transmitting node is a switch (its data frames count as forwarded).
    from_switch: bool,
    /// Flow control: frames waiting in `pq` plus flow-control frames waiting to be sent.
    fc_waiting: u32,
    busy_until: SimTime,
    last_tx: SimTime,
    /// Idle time after the frame of `last_size` (the inter-frame gap at the current rate).
    last_gap: SimTime,
    /// Delay from the end of transmission to the frame being queued at the peer's egress
    /// (propagation + extra delay line + the peer switch's latency).
    to_peer_queue: SimTime,
    q: VecDeque<u32>,
    ctrl: VecDeque<u32>,
    cap: Capacity,
    /// PFC: one data queue per priority and its bytes (empty otherwise; then `q` is used).
    pq: Vec<VecDeque<u32>>,
    q_bytes: u64,
    max_q_bytes: u64,
    // statistics
    tx_frames: u64,
    tx_bytes: u64,
    q_last_t: SimTime,
    /// Integral of the queue length over time, byte·ps.
    q_area: u128,
    /// Propagation only (to a host).
    prop: SimTime,
    rate: f64,
    node: u32,
    /// Wire overhead of every frame on this link, bytes: before it (preamble) and after it (IFG).
    preamble: u32,
    ifg: u32,
    pq_bytes: Vec<u64>,
    drop_frames: u64,
    drop_bytes: u64,
    cnm_sent: u64,
    /// BCN messages sent by this port's CP: negative, positive, BCN(0,0).
    bcn_sent: [u64; 3],
}

impl Port {
    /// Cache the wire times of a frame of `size` bytes at the current rate: until its last bit
    /// has left (preamble + frame) and the idle gap after it (IFG).
    #[inline]
    fn set_wire_times(&mut self, size: u32) {
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
    fn q_frames(&self) -> usize {
        self.q.len() + self.pq.iter().map(|q| q.len()).sum::<usize>()
    }

    #[inline]
    fn track_q(&mut self, now: SimTime) {
        self.q_area += self.q_bytes as u128 * (now - self.q_last_t) as u128;
        self.q_last_t = now;
    }
}

/// Fields in the order of use (`repr(C)`): what a frame's generation, departure and delivery
/// read and write first, in five cache lines (the reaction point and the rarely read settings
/// after them); with many flows each flow's lines are cold when its next frame comes. Aligned
/// to a cache line, so that every flow's lines are the same.
#[repr(C, align(64))]
struct Flow {
    /// Time of the next frame, or NEVER.
    next_gen: SimTime,
    gen_k: u64,
    gen_bytes: u64,
    gen_frames: u64,
    stop: SimTime,
    /// CBR schedule origin: the start, or for a go-back-N flow that went back to frame j at t,
    /// t - round(j * gap) (frame j due at t exactly).
    cbr_t0: SimTime,
    /// Time between CBR frames, ps (fractional; frame k is due at cbr_t0 + round(k * gap)).
    cbr_gap_ps: f64,
    /// A greedy source's gap between frames, `round_ps(cbr_gap_ps)` (one frame time at its rate).
    greedy_gap: SimTime,
    rl_q: VecDeque<Made>,
    rl_q_bytes: u64,
    rl_cap: u64,
    size: Option<u64>,
    path: Vec<u32>,
    sent_frames: u64,
    sent_bytes: u64,
    frame: u32,
    /// Go-back-N flow: index into `Sim::gbn` (NONE for open-loop flows).
    gbn: u32,
    /// Multicast flow: index into `Sim::mcast` (NONE for unicast).
    mc: u32,
    src: u32,
    traffic: Traffic,
    /// No Gen event is pending: frames are generated at the next rate-limiter departure.
    gen_lazy: bool,
    /// Arrivals need more than counting (`deliver`): a subsystem receives them (a multicast or a
    /// go-back-N flow, hop-by-hop routing; sim/fastpath.rs).
    rx_special: bool,
    /// Representative feedback: data frames carry the RP's F̂b and representative CPID.
    rep_fb: bool,
    /// The source NIC is paused for this flow's class: its rate limiter sends nothing.
    gated: bool,
    /// Flow-control class (PFC priority queue; 0 otherwise).
    class: u8,
    /// How data frames are routed at switches: the fixed `path` ([`links::ROUTE_PATH`]),
    /// spraying ([`links::ROUTE_SPRAY`]: a port drawn per frame) or hop by hop on the routes of
    /// the moment ([`links::ROUTE_LOOKUP`], with link failures).
    route: u8,
    /// The rate limiter's pacer, filled at CR.
    bucket: TokenBucket,
    /// Departure of the head of the rate-limiter queue.
    rl_timer: LazyTimer,
    rx_frames: u64,
    rx_bytes: u64,
    delay_sum: f64,
    late_frames: u64,
    finish: Option<SimTime>,
    dst: u32,
    rl_drops: u64,
    rp: Option<Reaction>,
    /// The RP's rate-increase timer.
    rp_timer: LazyTimer,
    rate_bps: f64,
    start: SimTime,
    /// Bernoulli slot length and probability; Poisson mean gap (ps).
    slot_ps: SimTime,
    p: f64,
    rng: Rng,
    nic_drops: u64,
    net_drops: u64,
    cnm_rx: u64,
    /// BCN messages received: negative, positive, BCN(0,0).
    bcn_rx: [u64; 3],
}

#[derive(Clone, Copy)]
struct EvRec {
    t: SimTime,
    kind: u8,
    node: u32,
    flow: u32,
    value: i64,
}

const REC_CNM_SENT: u8 = 0;
const REC_CNM_RX: u8 = 1;
const REC_DROP: u8 = 2;
const REC_BA_CHANGE: u8 = 3;
const REC_SPECIAL_SENT: u8 = 4;
const REC_ECHO_SENT: u8 = 5;
const REC_ECHO_RX: u8 = 6;
const REC_SHORT_FUSE: u8 = 7;
const REC_FB99_SENT: u8 = 8;
const REC_FB99_RX: u8 = 9;
const REC_BCN_SENT: u8 = 10;
const REC_BCN_RX: u8 = 11;
const REC_BCN0_SENT: u8 = 12;
const REC_BCN0_RX: u8 = 13;
/// Event kind names, indexed by the REC_* codes (the scenario's `metrics.events` choices).
const REC_KIND_NAMES: &[&str] = crate::scenario::EVENT_KINDS;
/// Events located at a host (the `node` column names the host, not a port).
const REC_AT_HOST: u32 = 1 << REC_CNM_RX
    | 1 << REC_SPECIAL_SENT
    | 1 << REC_ECHO_RX
    | 1 << REC_SHORT_FUSE
    | 1 << REC_FB99_RX
    | 1 << REC_BCN_RX
    | 1 << REC_BCN0_RX;

/// A throughput slot's current bin (empty range: none yet).
#[derive(Clone, Copy, Default)]
struct TputBin {
    lo: SimTime,
    hi: SimTime,
    k: usize,
}

struct Recorder {
    nbins: usize,
    bin: SimTime,
    tput_ports: Vec<u32>,
    tput_bytes: Vec<u64>,
    tput_frames: Vec<u64>,
    /// Per throughput slot: the bin `[lo, hi)` last counted in and its index in `tput_bytes`.
    tput_cache: Vec<TputBin>,
    queue_ports: Vec<u32>,
    /// Switches whose memory is sampled, with their egress ports.
    mem_switches: Vec<(u32, Vec<u32>)>,
    m_t: Vec<i64>,
    m_sw: Vec<u32>,
    m_bytes: Vec<i64>,
    q_t: Vec<i64>,
    q_port: Vec<u32>,
    q_bytes: Vec<i64>,
    q_frames: Vec<i64>,
    r_t: Vec<i64>,
    r_flow: Vec<u32>,
    r_cr: Vec<f64>,
    r_tr: Vec<f64>,
    r_active: Vec<bool>,
    events: Vec<EvRec>,
    max_events: usize,
    events_dropped: u64,
    /// Bit k set: record events of kind k.
    mask: u32,
    rec_switch_drop: bool,
}

impl Recorder {
    #[inline]
    fn wants(&self, kind: u8) -> bool {
        self.mask & (1 << kind) != 0
    }

    /// Count a frame of `size` bytes whose transmission on throughput slot `slot` ends at
    /// `end` in its bin (frames ending after the last bin are not counted).
    #[inline]
    fn count_tput(&mut self, slot: u32, end: SimTime, size: u32) {
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
    fn event(&mut self, r: EvRec) {
        if self.events.len() < self.max_events {
            self.events.push(r);
        } else {
            self.events_dropped += 1;
        }
    }
}

/// The data path's state: the clock, the event queue, the frame arena, ports and flows, the
/// recorder and the transmission-done slot. The mechanisms around it ([`Sim`]'s other fields)
/// borrow it to act.
pub(super) struct Core<'a> {
    sc: &'a Scenario,
    now: SimTime,
    end: SimTime,
    q: EventQueue<Ev>,
    pkts: Vec<Pkt>,
    free: Vec<u32>,
    ports: Vec<Port>,
    flows: Vec<Flow>,
    rec: Recorder,
    events: u64,
    frames_forwarded: u64,
    /// Data frames in the arena (frames still in a rate-limiter queue are not there yet).
    live_data: u64,
    lazy_gen: bool,
    /// Frames that a full rate-limiter queue would drop are counted without being built
    /// (`catch_up`); off only to check that against building and dropping each one.
    count_drops: bool,
    /// Per-packet spraying: the stream of port draws and a scratch list of candidates.
    spray_rng: Rng,
    spray_cand: Vec<u32>,
    /// A subsystem asked for the slow path (flow control, a shared memory, link failures):
    /// egress ports take `slow_start_next`, no idle-port shortcut (sim/fastpath.rs).
    slow: bool,
    /// The transmission-done slot (sim/fabric.rs, `txdone_at!`): one `TxDone` kept outside the
    /// event queue, with the sequence number it would have had there; `slot_t` is `NEVER` when
    /// empty. `slot_on` is the test switch (`set_txdone_slot`).
    slot_t: SimTime,
    slot_seq: u64,
    slot_port: u32,
    slot_on: bool,
    /// Transmission-dones fired from the slot: events, not in `events` (the loop's pops).
    slot_fires: u64,
    /// Per link: down (sim/links.rs keeps it; empty without link failures).
    link_down: Vec<bool>,
    /// The routes of the moment, with link failures (sim/links.rs recomputes them).
    routes_now: Option<crate::scenario::Routes>,
    /// `cc.feedback_route = "reverse"`: per flow, the port back towards the flow's source at
    /// each node of its data path or tree; empty for shortest paths.
    rev_route: cm::ReverseRoutes,
    /// Test switches of the fast path (sim/fastpath.rs): frames may go straight to the wire,
    /// and the subsystem whose answers the shortcuts ignore.
    direct_on: bool,
    ignore_needs: Option<&'static str>,
}

pub struct Sim<'a> {
    core: Core<'a>,
    /// Congestion management: QCN, BCN, DCQCN, NIC-side feedback, transient variants (sim/cm.rs).
    cm: cm::Cm,
    mcast: multicast::Multicast,
    fc: pause::Fc,
    /// Shared-buffer switch memories (sim/buffer.rs).
    buf: buffer::Buffers,
    /// Go-back-N senders and receivers (sim/transport.rs); empty without gbn flows.
    gbn: transport::GbnState,
    /// Link failures: which links are down and the routes of the moment (sim/links.rs).
    links: Option<links::LinkState>,
}

impl<'a> Sim<'a> {
    fn poisson_gap(f: &mut Flow) -> SimTime {
        let mean = f.frame as f64 * 8.0 * units::SEC as f64 / f.rate_bps;
        (f.rng.exponential(mean).round() as SimTime).max(1)
    }

    /// Run to the end. `progress` gets the fraction done; `false` cancels.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> Result<(), RunError> {
        let wall = Instant::now();
        let mut last_report = 0.0f64;
        self.prepare_ports();
        loop {
            self.event_loop(progress, wall, &mut last_report)?;
            // the queue is empty or beyond the end: the slot's last transmissions within it (a
            // loop only for the guard: they never make events)
            if !self.fire_slot(self.core.end, u64::MAX) {
                break;
            }
        }
        self.core.now = self.core.end;
        for fi in 0..self.core.flows.len() {
            self.catch_up(fi, self.core.end);
        }
        for p in self.core.ports.iter_mut() {
            p.track_q(self.core.end);
        }
        progress(1.0);
        Ok(())
    }

    /// The event loop: every event up to the end, in `(time, seq)` order, with the
    /// transmission-done slot's events in theirs. A function of its own, called once (again only
    /// if the slot's guard fired at the end): inside a loop in `run` the compiler kept fewer
    /// values in registers (1.6 % more instructions on benchmark 1).
    #[inline(never)]
    fn event_loop(
        &mut self,
        progress: &mut dyn FnMut(f64) -> bool,
        wall: Instant,
        last_report: &mut f64,
    ) -> Result<(), RunError> {
        while let Some((t, ev)) = self.core.q.take_min() {
            // the slot's transmission-done, when it comes first
            if self.core.slot_t <= t && self.fire_slot_inline(t, self.core.q.last_seq()) {
                // it made events: this one may no longer be the earliest
                self.core.q.push_keyed(t, self.core.q.last_seq(), ev);
                continue;
            }
            if t > self.core.end {
                break;
            }
            self.core.now = t;
            self.core.events += 1;
            self.dispatch(ev);
            if self.core.events & 0xFFFF == 0 {
                // fit the calendar's bucket width to the event density (engine/queue.rs)
                self.core.q.adapt(self.core.now);
                let el = wall.elapsed().as_secs_f64();
                if el - *last_report >= 0.2 {
                    *last_report = el;
                    if !progress(self.core.now as f64 / self.core.end as f64) {
                        return Err(RunError::Cancelled);
                    }
                }
            }
        }
        Ok(())
    }

    // Always inlined into the event loop: as a call it costs about 6 % more instructions per
    // event (docs/performance.md, "Shared-buffer switches").
    #[inline(always)]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Gen { flow } => self.on_gen(flow as usize),
            Ev::RlRelease { flow, gen } => self.on_rl_timer(flow, gen),
            Ev::SwitchArrive { pkt } => self.on_switch_arrive(pkt),
            Ev::TxDone { port } => {
                self.core.ports[port as usize].txdone_pending = false;
                self.start_next(port as usize);
            }
            Ev::HostControl { pkt } => self.on_host_control(pkt),
            Ev::RpTimer { flow, gen } => self.core.on_rp_timer(flow, gen),
            Ev::PortRate { entry } => self.core.on_port_rate(entry as usize),
            Ev::McStats { edge } => self.mcast.snapshot(&self.core, edge as usize),
            Ev::PauseRx { slot, quanta } => self.on_pause_rx(slot as usize, quanta),
            Ev::PauseExpire { slot, gen } => self.on_pause_expire(slot as usize, gen),
            Ev::PauseRefresh { slot, gen } => self.on_pause_refresh(slot as usize, gen),
            Ev::FcCheck => self.on_fc_check(),
            Ev::SampleQueues => self.core.sample_queues(),
            Ev::SampleRates => self.sample_rates(),
            Ev::BaTimer { ba, gen } => self.cm.on_ba_timer(&mut self.core, ba, gen),
            Ev::PingTimer { flow, gen } => self.cm.on_ping_timer(&mut self.core, flow, gen),
            Ev::Cnp { flow } => self.send_cnp(flow),
            Ev::GbnReply { flow, code } => self.gbn_send_reply(flow, code),
            Ev::GbnRto { flow, gen } => self.on_gbn_rto(flow, gen),
            Ev::LinkChange { link, up } => self.on_link_change(link, up != 0),
            Ev::Arrive { pkt } => self.on_arrive(pkt),
        }
    }
}

impl Core<'_> {
    /// A frame into the arena (a free slot when there is one).
    #[inline]
    fn alloc(&mut self, p: Pkt) -> u32 {
        if let Some(i) = self.free.pop() {
            self.pkts[i as usize] = p;
            i
        } else {
            self.pkts.push(p);
            (self.pkts.len() - 1) as u32
        }
    }

    /// A frame leaves the arena.
    #[inline]
    fn release(&mut self, i: u32) {
        if self.pkts[i as usize].kind == KIND_DATA {
            self.live_data -= 1;
        }
        self.free.push(i);
    }

    /// The port a feedback message of `flow` at node `at` leaves by towards the flow's source:
    /// the routes of the moment (with link failures), the shortest path, or
    /// (`cc.feedback_route = "reverse"`) the reverse of the flow's path.
    #[inline]
    fn feedback_next(&self, at: usize, flow: u32) -> Option<usize> {
        let src = self.flows[flow as usize].src as usize;
        if let Some(r) = &self.routes_now {
            return r.next(at, src);
        }
        if self.rev_route.is_empty() {
            return self.sc.routes.next(at, src);
        }
        self.rev_route.port(flow as usize, at)
    }

    /// The link of port `pi` is down (always false without link failures).
    #[inline]
    fn port_down(&self, pi: usize) -> bool {
        self.link_down.get(pi / 2).copied().unwrap_or(false)
    }

    /// The RP's rate-increase timer of `flow` may fire.
    #[inline]
    fn on_rp_timer(&mut self, flow: u32, gen: u32) {
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
    fn on_port_rate(&mut self, entry: usize) {
        let s = &self.sc.schedule[entry];
        let port = &mut self.ports[s.port];
        port.rate = s.rate_bps;
        port.last_size = 0;
    }

    /// Sample the queues of `metrics.queue_ports` and the memories of `metrics.memory_switches`.
    #[inline(never)]
    fn sample_queues(&mut self) {
        let t = self.now;
        for &p in &self.rec.queue_ports {
            let port = &self.ports[p as usize];
            self.rec.q_t.push(t as i64);
            self.rec.q_port.push(p);
            self.rec.q_bytes.push(port.q_bytes as i64);
            self.rec.q_frames.push(port.q_frames() as i64);
        }
        for (sw, ports) in &self.rec.mem_switches {
            let bytes: u64 = ports.iter().map(|&p| self.ports[p as usize].q_bytes).sum();
            self.rec.m_t.push(t as i64);
            self.rec.m_sw.push(*sw);
            self.rec.m_bytes.push(bytes as i64);
        }
        self.q
            .push(t + self.sc.metrics.queue_interval, Ev::SampleQueues);
    }

    /// Sample every reaction point's rates.
    fn sample_rp_rates(&mut self) {
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
