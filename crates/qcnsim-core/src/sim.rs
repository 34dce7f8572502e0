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

use crate::api::{ColumnData, RunError, RunOutput, Table};
use crate::engine::rng::kinds;
use crate::engine::{EventQueue, LazyTimer, Popped, Rng, StreamId};
use crate::net::TokenBucket;
use crate::proto::qcn_cp::Cp;
use crate::proto::qcn_rp::{Rp, RpOutput, RpParams, TimerCmd};
use crate::scenario::{Capacity, CcMode, NodeKind, Routes, Scenario, Traffic};
use crate::units::{self, round_ps, SimTime};
use std::collections::VecDeque;
use std::time::Instant;

const NONE: u32 = u32::MAX;
const NEVER: SimTime = SimTime::MAX;

/// Engine events. Small and `Copy`; indices refer to the simulator's arenas.
#[derive(Clone, Copy, Debug)]
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
    SampleQueues,
    SampleRates,
}

const KIND_DATA: u8 = 0;
const KIND_CNM: u8 = 1;

#[derive(Clone, Copy, Default)]
struct Pkt {
    born: SimTime,
    size: u32,
    flow: u32,
    /// Data: index into the flow's path of the port it is queued at / was sent from.
    hop: u16,
    kind: u8,
    /// CNM: quantised feedback.
    qntz: u8,
    /// Control frames: destination node, and the node currently holding the frame.
    dst: u32,
    at: u32,
}

struct Port {
    node: u32,
    peer: u32,
    peer_is_switch: bool,
    /// Delay from the end of transmission to the frame being queued at the peer's egress
    /// (propagation + extra delay line + the peer switch's latency).
    to_peer_queue: SimTime,
    /// Propagation only (to a host).
    prop: SimTime,
    rate: f64,
    /// Serialisation time of the last frame size seen at the current rate (a cache: frames
    /// mostly have one size).
    last_size: u32,
    last_tx: SimTime,
    /// The transmitting node is a switch (its data frames count as forwarded).
    from_switch: bool,
    cap: Capacity,
    q: VecDeque<u32>,
    ctrl: VecDeque<u32>,
    q_bytes: u64,
    busy_until: SimTime,
    txdone_pending: bool,
    cp: u32,
    tput_slot: u32,
    // statistics
    tx_frames: u64,
    tx_bytes: u64,
    drop_frames: u64,
    drop_bytes: u64,
    cnm_sent: u64,
    max_q_bytes: u64,
    /// Integral of the queue length over time, byte·ps.
    q_area: u128,
    q_last_t: SimTime,
}

impl Port {
    #[inline]
    fn q_frames(&self) -> usize {
        self.q.len()
    }

    #[inline]
    fn track_q(&mut self, now: SimTime) {
        self.q_area += self.q_bytes as u128 * (now - self.q_last_t) as u128;
        self.q_last_t = now;
    }
}

struct Flow {
    src: u32,
    dst: u32,
    path: Vec<u32>,
    frame: u32,
    traffic: Traffic,
    rate_bps: f64,
    start: SimTime,
    stop: SimTime,
    size: Option<u64>,
    /// Bernoulli slot length and probability; Poisson mean gap (ps).
    slot_ps: SimTime,
    p: f64,
    rng: Rng,
    gen_k: u64,
    /// Time of the next frame, or NEVER.
    next_gen: SimTime,
    /// No Gen event is pending: frames are generated at the next rate-limiter departure.
    gen_lazy: bool,
    gen_bytes: u64,
    // rate limiter / reaction point
    rp: Option<Rp>,
    rpp: RpParams,
    rl_q: VecDeque<u32>,
    rl_q_bytes: u64,
    rl_cap: u64,
    /// The rate limiter's pacer, filled at CR.
    bucket: TokenBucket,
    /// Departure of the head of the rate-limiter queue.
    rl_timer: LazyTimer,
    /// The RP's rate-increase timer.
    rp_timer: LazyTimer,
    /// Time between CBR frames, ps (fractional; frame k is due at start + round(k * gap)).
    cbr_gap_ps: f64,
    // counters
    gen_frames: u64,
    sent_frames: u64,
    sent_bytes: u64,
    rl_drops: u64,
    nic_drops: u64,
    net_drops: u64,
    rx_frames: u64,
    rx_bytes: u64,
    late_frames: u64,
    delay_sum: f64,
    finish: Option<SimTime>,
    cnm_rx: u64,
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
const REC_KIND_NAMES: [&str; 3] = ["cnm_sent", "cnm_received", "drop"];

struct Recorder {
    nbins: usize,
    bin: SimTime,
    tput_ports: Vec<u32>,
    tput_bytes: Vec<u64>,
    tput_frames: Vec<u64>,
    queue_ports: Vec<u32>,
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
    rec_cnm_sent: bool,
    rec_cnm_rx: bool,
    rec_drop: bool,
}

impl Recorder {
    #[inline]
    fn event(&mut self, r: EvRec) {
        if self.events.len() < self.max_events {
            self.events.push(r);
        } else {
            self.events_dropped += 1;
        }
    }
}

pub struct Sim<'a> {
    sc: &'a Scenario,
    now: SimTime,
    end: SimTime,
    q: EventQueue<Ev>,
    pkts: Vec<Pkt>,
    free: Vec<u32>,
    ports: Vec<Port>,
    flows: Vec<Flow>,
    cps: Vec<Cp>,
    routes: Routes,
    rec: Recorder,
    events: u64,
    frames_forwarded: u64,
    live_data: u64,
    lazy_gen: bool,
}

impl<'a> Sim<'a> {
    pub fn new(sc: &'a Scenario, seed: u64) -> Sim<'a> {
        let routes = Routes::compute(sc);
        let qcn = sc.cc == CcMode::Qcn;
        let mut cps = Vec::new();
        let mut rec = Recorder {
            nbins: (sc.duration / sc.metrics.throughput_bin) as usize + 1,
            bin: sc.metrics.throughput_bin,
            tput_ports: Vec::new(),
            tput_bytes: Vec::new(),
            tput_frames: Vec::new(),
            queue_ports: Vec::new(),
            q_t: Vec::new(),
            q_port: Vec::new(),
            q_bytes: Vec::new(),
            q_frames: Vec::new(),
            r_t: Vec::new(),
            r_flow: Vec::new(),
            r_cr: Vec::new(),
            r_tr: Vec::new(),
            r_active: Vec::new(),
            events: Vec::new(),
            max_events: sc.metrics.max_event_rows,
            events_dropped: 0,
            rec_cnm_sent: sc.metrics.record_cnm_sent,
            rec_cnm_rx: sc.metrics.record_cnm_received,
            rec_drop: sc.metrics.record_drops,
        };
        let mut ports = Vec::with_capacity(sc.n_ports());
        for p in 0..sc.n_ports() {
            let (from, to) = sc.port_ends(p);
            let link = &sc.links[p / 2];
            let peer_is_switch = sc.nodes[to].kind == NodeKind::Switch;
            let prop = link.delay + link.extra_delay;
            let cp = if qcn && sc.qcn.cp_ports[p] {
                cps.push(Cp::new(
                    &sc.qcn.cp,
                    Rng::stream(seed, StreamId::new(kinds::CP, p as u32, 0)),
                ));
                (cps.len() - 1) as u32
            } else {
                NONE
            };
            let tput_slot = if sc.metrics.throughput_ports[p] {
                rec.tput_ports.push(p as u32);
                (rec.tput_ports.len() - 1) as u32
            } else {
                NONE
            };
            if sc.metrics.queue_ports[p] {
                rec.queue_ports.push(p as u32);
            }
            ports.push(Port {
                node: from as u32,
                peer: to as u32,
                peer_is_switch,
                to_peer_queue: prop
                    + if peer_is_switch {
                        sc.nodes[to].latency
                    } else {
                        0
                    },
                prop,
                rate: link.rate_bps,
                last_size: 0,
                last_tx: 0,
                from_switch: sc.nodes[from].kind == NodeKind::Switch,
                cap: sc.port_capacity(p),
                q: VecDeque::with_capacity(64),
                ctrl: VecDeque::new(),
                q_bytes: 0,
                busy_until: 0,
                txdone_pending: false,
                cp,
                tput_slot,
                tx_frames: 0,
                tx_bytes: 0,
                drop_frames: 0,
                drop_bytes: 0,
                cnm_sent: 0,
                max_q_bytes: 0,
                q_area: 0,
                q_last_t: 0,
            });
        }
        rec.tput_bytes = vec![0; rec.tput_ports.len() * rec.nbins];
        rec.tput_frames = vec![0; rec.tput_ports.len() * rec.nbins];

        let mut flows = Vec::with_capacity(sc.flows.len());
        for (i, f) in sc.flows.iter().enumerate() {
            let nic_rate = sc.links[f.path[0] / 2].rate_bps;
            let mut rpp = sc.qcn.rp.clone();
            rpp.line_rate_bps = nic_rate;
            let rp = qcn.then(|| {
                Rp::new(
                    &rpp,
                    Rng::stream(seed, StreamId::new(kinds::RP, i as u32, 0)),
                )
            });
            let slot_ps = units::tx_time_f(f.frame_bytes as u64, nic_rate);
            flows.push(Flow {
                src: f.src as u32,
                dst: f.dst as u32,
                path: f.path.iter().map(|&p| p as u32).collect(),
                frame: f.frame_bytes,
                traffic: f.traffic,
                rate_bps: f.rate_bps,
                start: f.start,
                stop: f.stop,
                size: f.size_bytes,
                slot_ps,
                p: (f.rate_bps / nic_rate).min(1.0),
                rng: Rng::stream(seed, StreamId::new(kinds::SOURCE, i as u32, 0)),
                gen_k: 0,
                next_gen: f.start,
                gen_lazy: false,
                gen_bytes: 0,
                rp,
                rl_q: VecDeque::new(),
                rl_q_bytes: 0,
                rl_cap: sc.qcn.rl_queue_bytes,
                bucket: TokenBucket::new(
                    nic_rate,
                    sc.qcn.rl_burst_bytes.unwrap_or(f.frame_bytes as u64) as f64,
                    0,
                ),
                rl_timer: LazyTimer::default(),
                rp_timer: LazyTimer::default(),
                cbr_gap_ps: f.frame_bytes as f64 * 8.0 * units::SEC as f64 / f.rate_bps,
                rpp,
                gen_frames: 0,
                sent_frames: 0,
                sent_bytes: 0,
                rl_drops: 0,
                nic_drops: 0,
                net_drops: 0,
                rx_frames: 0,
                rx_bytes: 0,
                late_frames: 0,
                delay_sum: 0.0,
                finish: None,
                cnm_rx: 0,
            });
        }

        let mut sim = Sim {
            sc,
            now: 0,
            end: sc.duration,
            q: EventQueue::new(),
            pkts: Vec::with_capacity(4096),
            free: Vec::with_capacity(4096),
            ports,
            flows,
            cps,
            routes,
            rec,
            events: 0,
            frames_forwarded: 0,
            live_data: 0,
            lazy_gen: true,
        };
        for i in 0..sim.flows.len() {
            let f = &mut sim.flows[i];
            let start = f.start;
            let t0 = match f.traffic {
                Traffic::Bernoulli => start + f.rng.geometric(f.p) * f.slot_ps,
                Traffic::Poisson => start + Self::poisson_gap(f),
                Traffic::Cbr => start,
            };
            if t0 < f.stop {
                f.next_gen = t0;
                sim.q.push(t0, Ev::Gen { flow: i as u32 });
            } else {
                f.next_gen = NEVER;
            }
            let f = &mut sim.flows[i];
            if let Some(rp) = f.rp.as_mut() {
                let out = rp.start(&f.rpp, start);
                sim.rp_output(i, out, start);
            }
        }
        for (i, s) in sc.schedule.iter().enumerate() {
            sim.q.push(s.at, Ev::PortRate { entry: i as u32 });
        }
        if !sim.rec.queue_ports.is_empty() {
            sim.q.push(0, Ev::SampleQueues);
        }
        if qcn && !sim.flows.is_empty() {
            sim.q.push(0, Ev::SampleRates);
        }
        sim
    }

    fn poisson_gap(f: &mut Flow) -> SimTime {
        let mean = f.frame as f64 * 8.0 * units::SEC as f64 / f.rate_bps;
        (f.rng.exponential(mean).round() as SimTime).max(1)
    }

    /// Run to the end. `progress` gets the fraction done; `false` cancels.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> Result<(), RunError> {
        let wall = Instant::now();
        let mut last_report = 0.0f64;
        while let Some((t, ev)) = self.q.take_min() {
            if t > self.end {
                break;
            }
            self.now = t;
            self.events += 1;
            self.dispatch(ev);
            if self.events & 0xFFFF == 0 {
                let el = wall.elapsed().as_secs_f64();
                if el - last_report >= 0.2 {
                    last_report = el;
                    if !progress(self.now as f64 / self.end as f64) {
                        return Err(RunError::Cancelled);
                    }
                }
            }
        }
        self.now = self.end;
        for fi in 0..self.flows.len() {
            self.catch_up(fi, self.end);
        }
        for p in self.ports.iter_mut() {
            p.track_q(self.end);
        }
        progress(1.0);
        Ok(())
    }

    #[inline]
    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Gen { flow } => self.on_gen(flow as usize),
            Ev::RlRelease { flow, gen } => {
                match self.flows[flow as usize].rl_timer.popped(self.now, gen) {
                    Popped::Fire => self.on_rl_release(flow as usize),
                    Popped::Requeue(t) => self.q.push(t, Ev::RlRelease { flow, gen }),
                    Popped::Stale => {}
                }
            }
            Ev::SwitchArrive { pkt } => self.on_switch_arrive(pkt),
            Ev::TxDone { port } => {
                let p = &mut self.ports[port as usize];
                p.txdone_pending = false;
                self.start_next(port as usize);
            }
            Ev::HostControl { pkt } => self.on_host_control(pkt),
            Ev::RpTimer { flow, gen } => {
                let f = &mut self.flows[flow as usize];
                match f.rp_timer.popped(self.now, gen) {
                    Popped::Fire => {
                        if let Some(rp) = f.rp.as_mut() {
                            let out = rp.on_timer(&f.rpp, self.now);
                            self.rp_output(flow as usize, out, self.now);
                        }
                    }
                    Popped::Requeue(t) => self.q.push(t, Ev::RpTimer { flow, gen }),
                    Popped::Stale => {}
                }
            }
            Ev::PortRate { entry } => {
                let s = &self.sc.schedule[entry as usize];
                // The frame in transmission finishes at the old rate.
                let port = &mut self.ports[s.port];
                port.rate = s.rate_bps;
                port.last_size = 0;
            }
            Ev::SampleQueues => {
                let t = self.now;
                for &p in &self.rec.queue_ports {
                    let port = &self.ports[p as usize];
                    self.rec.q_t.push(t as i64);
                    self.rec.q_port.push(p);
                    self.rec.q_bytes.push(port.q_bytes as i64);
                    self.rec.q_frames.push(port.q_frames() as i64);
                }
                self.q
                    .push(t + self.sc.metrics.queue_interval, Ev::SampleQueues);
            }
            Ev::SampleRates => {
                let t = self.now;
                for (i, f) in self.flows.iter().enumerate() {
                    if let Some(rp) = &f.rp {
                        self.rec.r_t.push(t as i64);
                        self.rec.r_flow.push(i as u32);
                        self.rec.r_cr.push(rp.current_rate());
                        self.rec.r_tr.push(rp.target_rate());
                        self.rec.r_active.push(rp.is_active());
                    }
                }
                self.q
                    .push(t + self.sc.metrics.rate_interval, Ev::SampleRates);
            }
        }
    }

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

    #[inline]
    fn release(&mut self, i: u32) {
        if self.pkts[i as usize].kind == KIND_DATA {
            self.live_data -= 1;
        }
        self.free.push(i);
    }

    // ---------------------------------------------------------------- traffic sources

    /// Create the flow's next frame, born at `t` (its scheduled generation time), and advance
    /// the generator to the following one.
    fn make_frame(&mut self, fi: usize, t: SimTime) -> u32 {
        let f = &mut self.flows[fi];
        let mut size = f.frame;
        if let Some(total) = f.size {
            let left = total - f.gen_bytes;
            if left < size as u64 {
                size = (left as u32).max(64);
            }
        }
        f.gen_bytes += size as u64;
        f.gen_frames += 1;
        f.gen_k += 1;
        let more = f.size.is_none_or(|total| f.gen_bytes < total);
        f.next_gen = NEVER;
        if more {
            let next = match f.traffic {
                Traffic::Cbr => {
                    // k-th frame at start + k*frame*8/rate, computed without accumulating error
                    f.start + round_ps(f.gen_k as f64 * f.cbr_gap_ps)
                }
                Traffic::Bernoulli => t + (1 + f.rng.geometric(f.p)) * f.slot_ps,
                Traffic::Poisson => t + Self::poisson_gap(f),
            };
            if next < f.stop {
                f.next_gen = next;
            }
        }
        self.live_data += 1;
        self.alloc(Pkt {
            born: t,
            size,
            flow: fi as u32,
            hop: 0,
            kind: KIND_DATA,
            qntz: 0,
            dst: 0,
            at: 0,
        })
    }

    fn on_gen(&mut self, fi: usize) {
        let pkt = self.make_frame(fi, self.now);
        self.rl_offer(fi, pkt);
        self.schedule_gen(fi);
    }

    /// Schedule the next generation event, unless the rate limiter is backlogged: then the
    /// generator runs lazily (see [`Sim::catch_up`]), which saves one event per frame.
    fn schedule_gen(&mut self, fi: usize) {
        let f = &mut self.flows[fi];
        if self.lazy_gen && !f.rl_q.is_empty() {
            f.gen_lazy = true;
        } else {
            f.gen_lazy = false;
            if f.next_gen != NEVER {
                self.q.push(f.next_gen, Ev::Gen { flow: fi as u32 });
            }
        }
    }

    /// While a flow's rate-limiter queue is not empty, nothing but its own departures removes
    /// frames from it, so frames generated since the last departure can be appended (or
    /// dropped, when the queue is full) in generation order at the next departure, with the
    /// same outcome as one event per frame. Frames generated at the departure instant itself
    /// are taken first.
    fn catch_up(&mut self, fi: usize, now: SimTime) {
        while self.flows[fi].gen_lazy && self.flows[fi].next_gen <= now {
            let t = self.flows[fi].next_gen;
            let pkt = self.make_frame(fi, t);
            self.rl_enqueue(fi, pkt);
        }
    }

    // ---------------------------------------------------------------- rate limiter

    fn rl_limited(f: &Flow) -> bool {
        f.rp.as_ref().is_some_and(|rp| rp.is_active())
    }

    /// A new frame from the source enters the flow's rate limiter.
    fn rl_offer(&mut self, fi: usize, pkt: u32) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let size = self.pkts[pkt as usize].size;
        if !Self::rl_limited(f) && f.rl_q.is_empty() {
            self.hand_to_nic(fi, pkt);
            return;
        }
        if f.rl_q.is_empty() && f.bucket.try_take(now, size) {
            self.leave_rl(fi, pkt, true);
            return;
        }
        self.rl_enqueue(fi, pkt);
    }

    /// Append a frame to the rate-limiter queue, or drop it when the queue is full.
    fn rl_enqueue(&mut self, fi: usize, pkt: u32) {
        let f = &mut self.flows[fi];
        let size = self.pkts[pkt as usize].size;
        if f.rl_q_bytes + size as u64 > f.rl_cap {
            f.rl_drops += 1;
            self.release(pkt);
            return;
        }
        f.rl_q.push_back(pkt);
        f.rl_q_bytes += size as u64;
        // A new head needs a departure time. (While the queue is not empty a departure is
        // always pending, except inside `on_rl_release`, which schedules the next one itself.)
        if f.rl_q.len() == 1 && !f.rl_timer.is_armed() {
            self.schedule_rl(fi);
        }
    }

    /// Schedule the departure of the head of the RL queue from the token balance and CR.
    fn schedule_rl(&mut self, fi: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let Some(&head) = f.rl_q.front() else {
            f.rl_timer.cancel();
            return;
        };
        let at = f.bucket.ready_at(now, self.pkts[head as usize].size);
        self.arm_rl(fi, at);
    }

    #[inline]
    fn arm_rl(&mut self, fi: usize, at: SimTime) {
        if let Some(gen) = self.flows[fi].rl_timer.arm(at) {
            self.q.push(
                at,
                Ev::RlRelease {
                    flow: fi as u32,
                    gen,
                },
            );
        }
    }

    fn on_rl_release(&mut self, fi: usize) {
        let now = self.now;
        self.catch_up(fi, now);
        let f = &mut self.flows[fi];
        let Some(pkt) = f.rl_q.pop_front() else {
            return;
        };
        let size = self.pkts[pkt as usize].size;
        f.rl_q_bytes -= size as u64;
        if Self::rl_limited(f) {
            f.bucket.take(now, size);
        }
        let empty = f.rl_q.is_empty();
        self.leave_rl(fi, pkt, empty);
        if self.flows[fi].gen_lazy && self.flows[fi].rl_q.is_empty() {
            self.schedule_gen(fi);
        }
        let f = &self.flows[fi];
        if !f.rl_q.is_empty() && !f.rl_timer.is_armed() {
            if Self::rl_limited(f) {
                self.schedule_rl(fi);
            } else {
                // limiter released with frames waiting: drain at once
                self.arm_rl(fi, now);
            }
        }
    }

    /// A frame leaves the rate limiter: tell the RP, then hand it to the NIC.
    fn leave_rl(&mut self, fi: usize, pkt: u32, rl_empty: bool) {
        let now = self.now;
        let size = self.pkts[pkt as usize].size;
        self.hand_to_nic(fi, pkt);
        let f = &mut self.flows[fi];
        if let Some(rp) = f.rp.as_mut() {
            let out = rp.on_frame_sent(&f.rpp, now, size, rl_empty);
            self.rp_output(fi, out, now);
        }
    }

    /// Apply what the RP asked for: re-arm or cancel its timer, re-pace on a rate change.
    fn rp_output(&mut self, fi: usize, out: RpOutput, now: SimTime) {
        let f = &mut self.flows[fi];
        match out.timer {
            TimerCmd::Keep => {}
            TimerCmd::Arm(at) => {
                let at = at.max(now);
                if let Some(gen) = f.rp_timer.arm(at) {
                    self.q.push(
                        at,
                        Ev::RpTimer {
                            flow: fi as u32,
                            gen,
                        },
                    );
                }
            }
            TimerCmd::Cancel => f.rp_timer.cancel(),
        }
        if out.rate_changed {
            let Some(rp) = f.rp.as_ref() else { return };
            // the tokens earned so far are banked at the old rate
            f.bucket.set_rate(now, rp.current_rate());
            if f.rl_timer.is_armed() && !f.rl_q.is_empty() {
                self.schedule_rl(fi);
            }
        }
    }

    // ---------------------------------------------------------------- ports and switches

    /// Hand a data frame to the source host's NIC egress queue.
    fn hand_to_nic(&mut self, fi: usize, pkt: u32) {
        let f = &mut self.flows[fi];
        f.sent_frames += 1;
        f.sent_bytes += self.pkts[pkt as usize].size as u64;
        let port = f.path[0] as usize;
        self.enqueue_data(port, pkt);
    }

    /// Enqueue a data frame at an egress port (drop-tail), run the CP, start transmission.
    #[inline]
    fn enqueue_data(&mut self, pi: usize, pkt: u32) {
        let now = self.now;
        let size = self.pkts[pkt as usize].size;
        let port = &mut self.ports[pi];
        let fits = match port.cap {
            Capacity::Infinite => true,
            Capacity::Bytes(b) => port.q_bytes + size as u64 <= b,
            Capacity::Frames(n) => (port.q.len() as u64) < n,
        };
        let flow = self.pkts[pkt as usize].flow;
        if !fits {
            port.drop_frames += 1;
            port.drop_bytes += size as u64;
            let f = &mut self.flows[flow as usize];
            if !port.from_switch {
                f.nic_drops += 1;
            } else {
                f.net_drops += 1;
            }
            if self.rec.rec_drop {
                self.rec.event(EvRec {
                    t: now,
                    kind: REC_DROP,
                    node: pi as u32,
                    flow,
                    value: size as i64,
                });
            }
            self.release(pkt);
            return;
        }
        port.track_q(now);
        port.q.push_back(pkt);
        port.q_bytes += size as u64;
        if port.q_bytes > port.max_q_bytes {
            port.max_q_bytes = port.q_bytes;
        }
        if port.cp != NONE {
            let qb = port.q_bytes;
            let cp = &mut self.cps[port.cp as usize];
            if let Some(s) = cp.on_enqueue(&self.sc.qcn.cp, qb, size) {
                if s.sends_cnm() {
                    self.send_cnm(pi, flow, s.qntz_fb);
                }
            }
        }
        self.kick(pi);
    }

    /// Start transmitting if the port is idle, or make sure a TxDone will come.
    #[inline]
    fn kick(&mut self, pi: usize) {
        let port = &mut self.ports[pi];
        if port.txdone_pending {
            return;
        }
        if self.now >= port.busy_until {
            self.start_next(pi);
        } else {
            port.txdone_pending = true;
            let t = port.busy_until;
            self.q.push(t, Ev::TxDone { port: pi as u32 });
        }
    }

    /// Take the next frame (control first) and put it on the wire.
    fn start_next(&mut self, pi: usize) {
        let now = self.now;
        let port = &mut self.ports[pi];
        let pkt = if let Some(c) = port.ctrl.pop_front() {
            c
        } else if let Some(d) = port.q.pop_front() {
            port.track_q(now);
            port.q_bytes -= self.pkts[d as usize].size as u64;
            d
        } else {
            return;
        };
        let pk = self.pkts[pkt as usize];
        if pk.size != port.last_size {
            port.last_size = pk.size;
            port.last_tx = units::tx_time_f(pk.size as u64, port.rate);
        }
        let end = now + port.last_tx;
        port.busy_until = end;
        port.tx_frames += 1;
        port.tx_bytes += pk.size as u64;
        if port.tput_slot != NONE {
            let bin = (end / self.rec.bin) as usize;
            if bin < self.rec.nbins {
                let k = port.tput_slot as usize * self.rec.nbins + bin;
                self.rec.tput_bytes[k] += pk.size as u64;
                self.rec.tput_frames[k] += 1;
            }
        }
        if !port.q.is_empty() || !port.ctrl.is_empty() {
            port.txdone_pending = true;
            self.q.push(end, Ev::TxDone { port: pi as u32 });
        }
        let peer = port.peer;
        if port.peer_is_switch {
            if pk.kind == KIND_DATA && port.from_switch {
                self.frames_forwarded += 1;
            }
            let t = end + port.to_peer_queue;
            self.pkts[pkt as usize].at = peer;
            self.q.push(t, Ev::SwitchArrive { pkt });
        } else {
            let t = end + port.prop;
            if pk.kind == KIND_DATA {
                if port.from_switch {
                    self.frames_forwarded += 1;
                }
                self.deliver(pkt, t);
            } else {
                self.pkts[pkt as usize].at = peer;
                self.q.push(t, Ev::HostControl { pkt });
            }
        }
    }

    fn on_switch_arrive(&mut self, pkt: u32) {
        let pk = self.pkts[pkt as usize];
        if pk.kind == KIND_DATA {
            let hop = pk.hop + 1;
            self.pkts[pkt as usize].hop = hop;
            let port = self.flows[pk.flow as usize].path[hop as usize] as usize;
            self.enqueue_data(port, pkt);
        } else {
            match self.routes.next(pk.at as usize, pk.dst as usize) {
                Some(port) => self.enqueue_ctrl(port, pkt),
                None => self.release(pkt),
            }
        }
    }

    fn enqueue_ctrl(&mut self, pi: usize, pkt: u32) {
        self.ports[pi].ctrl.push_back(pkt);
        self.kick(pi);
    }

    /// The data frame reaches its destination host at `t`.
    fn deliver(&mut self, pkt: u32, t: SimTime) {
        let pk = self.pkts[pkt as usize];
        let f = &mut self.flows[pk.flow as usize];
        if t > self.end {
            f.late_frames += 1;
        } else {
            f.rx_frames += 1;
            f.rx_bytes += pk.size as u64;
            f.delay_sum += (t - pk.born) as f64;
            if let Some(total) = f.size {
                if f.rx_bytes >= total && f.finish.is_none() {
                    f.finish = Some(t);
                }
            }
        }
        self.release(pkt);
    }

    // ---------------------------------------------------------------- QCN feedback

    fn send_cnm(&mut self, cp_port: usize, flow: u32, qntz: u8) {
        let now = self.now;
        let sw = self.ports[cp_port].node as usize;
        let src = self.flows[flow as usize].src;
        let Some(out) = self.routes.next(sw, src as usize) else {
            return;
        };
        self.ports[cp_port].cnm_sent += 1;
        if self.rec.rec_cnm_sent {
            self.rec.event(EvRec {
                t: now,
                kind: REC_CNM_SENT,
                node: cp_port as u32,
                flow,
                value: qntz as i64,
            });
        }
        let pkt = self.alloc(Pkt {
            born: now,
            size: self.sc.qcn.cnm_bytes,
            flow,
            hop: 0,
            kind: KIND_CNM,
            qntz,
            dst: src,
            at: sw as u32,
        });
        self.enqueue_ctrl(out, pkt);
    }

    fn on_host_control(&mut self, pkt: u32) {
        let pk = self.pkts[pkt as usize];
        self.release(pkt);
        if pk.kind != KIND_CNM {
            return;
        }
        let fi = pk.flow as usize;
        let now = self.now;
        let f = &mut self.flows[fi];
        f.cnm_rx += 1;
        if self.rec.rec_cnm_rx {
            self.rec.event(EvRec {
                t: now,
                kind: REC_CNM_RX,
                node: f.src,
                flow: pk.flow,
                value: pk.qntz as i64,
            });
        }
        if let Some(rp) = f.rp.as_mut() {
            let was_active = rp.is_active();
            let out = rp.on_cnm(&f.rpp, now, pk.qntz);
            if !was_active && rp.is_active() {
                // a newly allocated rate limiter starts with a full bucket
                f.bucket.set_rate(now, rp.current_rate());
                f.bucket.fill(now);
            }
            self.rp_output(fi, out, now);
        }
    }

    // ---------------------------------------------------------------- results

    /// Generate every frame with its own event (slower; the default lazy generator must give
    /// identical results, which a test checks).
    pub fn set_lazy_generation(&mut self, on: bool) {
        self.lazy_gen = on;
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    /// Data frames alive in the network (queues, links, rate limiters) right now.
    pub fn live_data_frames(&self) -> u64 {
        self.live_data
    }

    /// Data frames whose arrival at their destination falls after the end of the run.
    pub fn late_data_frames(&self) -> u64 {
        self.flows.iter().map(|f| f.late_frames).sum()
    }

    pub fn into_output(self, seed: u64, wall_s: f64) -> RunOutput {
        let sc = self.sc;
        let port_name: Vec<String> = (0..sc.n_ports()).map(|p| sc.port_name(p)).collect();
        let flow_name: Vec<&str> = sc.flows.iter().map(|f| f.name.as_str()).collect();
        let node_name = |n: u32| sc.nodes[n as usize].name.clone();
        // the recorder's columns move into the tables (no copy of large sample vectors)
        let mut rec = self.rec;
        let mut tables = Vec::new();

        // port_throughput
        {
            let n = rec.tput_ports.len() * rec.nbins;
            let (mut port, mut t, mut bytes, mut frames, mut bps) = (
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
            );
            let nbins_in_run = (sc.duration.div_ceil(rec.bin)) as usize;
            for (slot, &p) in rec.tput_ports.iter().enumerate() {
                for b in 0..nbins_in_run.min(rec.nbins) {
                    let k = slot * rec.nbins + b;
                    port.push(port_name[p as usize].clone());
                    t.push((b as u64 * rec.bin) as i64);
                    bytes.push(rec.tput_bytes[k] as i64);
                    frames.push(rec.tput_frames[k] as i64);
                    bps.push(rec.tput_bytes[k] as f64 * 8.0 / units::secs(rec.bin));
                }
            }
            tables.push(
                Table::new("port_throughput")
                    .col("port", ColumnData::Str(port))
                    .col("t_ps", ColumnData::I64(t))
                    .col("bin_ps", ColumnData::I64(vec![rec.bin as i64; bytes.len()]))
                    .col("bytes", ColumnData::I64(bytes))
                    .col("frames", ColumnData::I64(frames))
                    .col("throughput_bps", ColumnData::F64(bps)),
            );
        }
        tables.push(
            Table::new("queue_samples")
                .col(
                    "port",
                    ColumnData::Str(
                        rec.q_port
                            .iter()
                            .map(|&p| port_name[p as usize].clone())
                            .collect(),
                    ),
                )
                .col("t_ps", ColumnData::I64(std::mem::take(&mut rec.q_t)))
                .col(
                    "qlen_bytes",
                    ColumnData::I64(std::mem::take(&mut rec.q_bytes)),
                )
                .col(
                    "qlen_frames",
                    ColumnData::I64(std::mem::take(&mut rec.q_frames)),
                ),
        );
        tables.push(
            Table::new("rp_rates")
                .col(
                    "flow",
                    ColumnData::Str(
                        rec.r_flow
                            .iter()
                            .map(|&f| flow_name[f as usize].to_string())
                            .collect(),
                    ),
                )
                .col("t_ps", ColumnData::I64(std::mem::take(&mut rec.r_t)))
                .col("cr_bps", ColumnData::F64(std::mem::take(&mut rec.r_cr)))
                .col("tr_bps", ColumnData::F64(std::mem::take(&mut rec.r_tr)))
                .col(
                    "rl_active",
                    ColumnData::Bool(std::mem::take(&mut rec.r_active)),
                ),
        );
        {
            let ev = &rec.events;
            tables.push(
                Table::new("events")
                    .col(
                        "t_ps",
                        ColumnData::I64(ev.iter().map(|e| e.t as i64).collect()),
                    )
                    .col(
                        "kind",
                        ColumnData::Str(
                            ev.iter()
                                .map(|e| REC_KIND_NAMES[e.kind as usize].to_string())
                                .collect(),
                        ),
                    )
                    .col(
                        "node",
                        ColumnData::Str(
                            ev.iter()
                                .map(|e| {
                                    if e.kind == REC_CNM_RX {
                                        node_name(e.node)
                                    } else {
                                        port_name[e.node as usize].clone()
                                    }
                                })
                                .collect(),
                        ),
                    )
                    .col(
                        "flow",
                        ColumnData::Str(
                            ev.iter()
                                .map(|e| flow_name[e.flow as usize].to_string())
                                .collect(),
                        ),
                    )
                    .col(
                        "value",
                        ColumnData::I64(ev.iter().map(|e| e.value).collect()),
                    ),
            );
        }
        // flows
        {
            let fl = &self.flows;
            let spec = &sc.flows;
            let dur = units::secs(sc.duration);
            tables.push(
                Table::new("flows")
                    .col(
                        "flow",
                        ColumnData::Str(flow_name.iter().map(|s| s.to_string()).collect()),
                    )
                    .col(
                        "src",
                        ColumnData::Str(fl.iter().map(|f| node_name(f.src)).collect()),
                    )
                    .col(
                        "dst",
                        ColumnData::Str(fl.iter().map(|f| node_name(f.dst)).collect()),
                    )
                    .col(
                        "traffic",
                        ColumnData::Str(
                            spec.iter()
                                .map(|f| match f.traffic {
                                    Traffic::Cbr => "cbr",
                                    Traffic::Bernoulli => "bernoulli",
                                    Traffic::Poisson => "poisson",
                                })
                                .map(str::to_string)
                                .collect(),
                        ),
                    )
                    .col(
                        "offered_bps",
                        ColumnData::F64(fl.iter().map(|f| f.rate_bps).collect()),
                    )
                    .col(
                        "start_t_ps",
                        ColumnData::I64(fl.iter().map(|f| f.start as i64).collect()),
                    )
                    .col(
                        "size_bytes",
                        ColumnData::I64(
                            fl.iter()
                                .map(|f| f.size.map(|s| s as i64).unwrap_or(-1))
                                .collect(),
                        ),
                    )
                    .col(
                        "gen_frames",
                        ColumnData::I64(fl.iter().map(|f| f.gen_frames as i64).collect()),
                    )
                    .col(
                        "tx_frames",
                        ColumnData::I64(fl.iter().map(|f| f.sent_frames as i64).collect()),
                    )
                    .col(
                        "tx_bytes",
                        ColumnData::I64(fl.iter().map(|f| f.sent_bytes as i64).collect()),
                    )
                    .col(
                        "rx_frames",
                        ColumnData::I64(fl.iter().map(|f| f.rx_frames as i64).collect()),
                    )
                    .col(
                        "rx_bytes",
                        ColumnData::I64(fl.iter().map(|f| f.rx_bytes as i64).collect()),
                    )
                    .col(
                        "rl_dropped_frames",
                        ColumnData::I64(fl.iter().map(|f| f.rl_drops as i64).collect()),
                    )
                    .col(
                        "nic_dropped_frames",
                        ColumnData::I64(fl.iter().map(|f| f.nic_drops as i64).collect()),
                    )
                    .col(
                        "dropped_frames",
                        ColumnData::I64(fl.iter().map(|f| f.net_drops as i64).collect()),
                    )
                    .col(
                        "in_flight_frames",
                        ColumnData::I64(
                            fl.iter()
                                .map(|f| {
                                    (f.gen_frames
                                        - f.rx_frames
                                        - f.rl_drops
                                        - f.nic_drops
                                        - f.net_drops) as i64
                                })
                                .collect(),
                        ),
                    )
                    .col(
                        "cnm_received",
                        ColumnData::I64(fl.iter().map(|f| f.cnm_rx as i64).collect()),
                    )
                    .col(
                        "fct_ps",
                        ColumnData::I64(
                            fl.iter()
                                .map(|f| f.finish.map(|t| (t - f.start) as i64).unwrap_or(-1))
                                .collect(),
                        ),
                    )
                    .col(
                        "mean_delay_ps",
                        ColumnData::F64(
                            fl.iter()
                                .map(|f| {
                                    if f.rx_frames > 0 {
                                        f.delay_sum / f.rx_frames as f64
                                    } else {
                                        f64::NAN
                                    }
                                })
                                .collect(),
                        ),
                    )
                    .col(
                        "throughput_bps",
                        ColumnData::F64(
                            fl.iter()
                                .map(|f| {
                                    f.rx_bytes as f64 * 8.0
                                        / (dur - units::secs(f.start)).max(1e-12)
                                })
                                .collect(),
                        ),
                    ),
            );
        }
        // ports
        {
            let ps = &self.ports;
            let dur = sc.duration as f64;
            tables.push(
                Table::new("ports")
                    .col("port", ColumnData::Str(port_name.clone()))
                    .col(
                        "link_rate_bps",
                        ColumnData::F64((0..ps.len()).map(|p| sc.links[p / 2].rate_bps).collect()),
                    )
                    .col(
                        "tx_frames",
                        ColumnData::I64(ps.iter().map(|p| p.tx_frames as i64).collect()),
                    )
                    .col(
                        "tx_bytes",
                        ColumnData::I64(ps.iter().map(|p| p.tx_bytes as i64).collect()),
                    )
                    .col(
                        "drop_frames",
                        ColumnData::I64(ps.iter().map(|p| p.drop_frames as i64).collect()),
                    )
                    .col(
                        "drop_bytes",
                        ColumnData::I64(ps.iter().map(|p| p.drop_bytes as i64).collect()),
                    )
                    .col(
                        "cnm_sent",
                        ColumnData::I64(ps.iter().map(|p| p.cnm_sent as i64).collect()),
                    )
                    .col(
                        "max_qlen_bytes",
                        ColumnData::I64(ps.iter().map(|p| p.max_q_bytes as i64).collect()),
                    )
                    .col(
                        "mean_qlen_bytes",
                        ColumnData::F64(ps.iter().map(|p| p.q_area as f64 / dur).collect()),
                    ),
            );
        }
        let summary = crate::summary::summarize(sc, &tables, rec.events_dropped);
        tables.push(summary);
        RunOutput {
            tables,
            resolved_json: serde_json::to_string_pretty(&sc.resolved).unwrap_or_default(),
            seed,
            events: self.events,
            sim_time_ps: sc.duration,
            wall_s,
            frames_forwarded: self.frames_forwarded,
        }
    }
}
