//! QCN transient response: the bandwidth-available (BA) sensor at every CP, SONAR (special
//! frames, echoes, the RP ping timer) and path-based push-back (Fb99). See
//! docs/models/qcn-transient.md. The protocol rules live in `proto::qcn_ba`, `proto::sonar`
//! and `proto::qcn_rp`; this file wires them to ports, flows and the event queue. Echo and Fb99
//! messages are control frames of `cc.qcn.cnm_frame` bytes on the strict-priority control
//! queue, like CNMs (they take link time and are never sampled).

use crate::proto::qcn_ba::{BaParams, BaSensor};
use crate::proto::sonar::{Sonar, SonarAction, SonarParams};
use crate::sim::cc::{Cm, Ctrl};
use crate::sim::prelude::*;

pub(in crate::sim) const KIND_ECHO: u8 = 10;
pub(in crate::sim) const KIND_FB99: u8 = 11;

/// Simulator-wide transient-response state.
pub(in crate::sim) struct Transient {
    pub(in crate::sim) ba_p: BaParams,
    pub(in crate::sim) pushback: bool,
    /// One BA sensor per CP port (empty when no sensor runs).
    pub(in crate::sim) bas: Vec<BaPort>,
    /// SONAR runs (every flow has its machine).
    sonar: bool,
    /// Per flow: SONAR and push-back state and counters (empty without QCN).
    pub(in crate::sim) flows: Vec<FlowTransient>,
}

pub(in crate::sim) struct BaPort {
    port: u32,
    sensor: BaSensor,
    timer: LazyTimer,
    pub(in crate::sim) echo_sent: u64,
    pub(in crate::sim) fb99_sent: u64,
    /// Time spent with BA = 1, and since when BA has been 1.
    ba_time: SimTime,
    ba_since: SimTime,
}

/// Per-flow SONAR and push-back state and counters.
#[derive(Default)]
pub(in crate::sim) struct FlowTransient {
    sonar: Option<Box<(Sonar, SonarParams)>>,
    ping_timer: LazyTimer,
    pub(in crate::sim) special_sent: u64,
    pub(in crate::sim) echo_rx: u64,
    pub(in crate::sim) short_fuse: u64,
    pub(in crate::sim) false_alarms: u64,
    pub(in crate::sim) fb99_rx: u64,
    /// The last special frame sent passed a CP with BA = 0 (a false alarm if the short fuse
    /// follows it).
    special_saw_ba0: bool,
}

impl Transient {
    pub(in crate::sim) fn new(sc: &Scenario) -> Transient {
        let t = &sc.qcn.transient;
        Transient {
            ba_p: t
                .ba
                .clone()
                .unwrap_or_else(crate::proto::qcn_ba::BaParams::standard),
            pushback: sc.cc == CcMode::Qcn && t.pushback,
            bas: Vec::new(),
            sonar: false,
            flows: (0..sc.flows.len())
                .map(|_| FlowTransient::default())
                .collect(),
        }
    }

    /// Flow `fi` runs SONAR.
    #[inline]
    pub(in crate::sim) fn sonar_on(&self, fi: usize) -> bool {
        self.sonar && self.flows[fi].sonar.is_some()
    }

    /// Per flow: special frames sent, echoes received, short fuses, false alarms, Fb99
    /// received (the flows table's columns).
    pub(in crate::sim) fn flow_counts(&self) -> [Vec<i64>; 5] {
        let col = |k: fn(&FlowTransient) -> u64| self.flows.iter().map(|t| k(t) as i64).collect();
        [
            col(|t| t.special_sent),
            col(|t| t.echo_rx),
            col(|t| t.short_fuse),
            col(|t| t.false_alarms),
            col(|t| t.fb99_rx),
        ]
    }
}

impl Cm {
    /// Create the BA sensors (every CP port) and the SONAR machines (every flow).
    pub(in crate::sim) fn transient_init(&mut self, core: &mut Core) {
        let sc = core.sc;
        if sc.cc != CcMode::Qcn {
            return;
        }
        if sc.qcn.transient.ba.is_some() {
            for pi in 0..core.ports.len() {
                if core.ports[pi].cp == NONE {
                    continue;
                }
                let (sensor, cmd) = BaSensor::new(&self.tr.ba_p, 0);
                let bi = self.tr.bas.len() as u32;
                core.ports[pi].ba = bi;
                self.tr.bas.push(BaPort {
                    port: pi as u32,
                    sensor,
                    timer: LazyTimer::default(),
                    echo_sent: 0,
                    fb99_sent: 0,
                    ba_time: 0,
                    ba_since: 0,
                });
                self.ba_timer_cmd(core, bi as usize, cmd);
            }
        }
        if let Some(s) = &sc.qcn.transient.sonar {
            for (fi, f) in sc.flows.iter().enumerate() {
                let rtt = path_rtt(sc, &f.path);
                let we = ((s.we_rtt_multiple * rtt as f64).round() as SimTime).max(s.we_min_ps);
                let p = SonarParams {
                    wp_ps: s.wp_ps,
                    we_ps: we,
                    sf_ps: s.sf_ps,
                    we_starts: s.we_starts,
                };
                self.tr.flows[fi].sonar = Some(Box::new((Sonar::default(), p)));
                self.tr.sonar = true;
            }
        }
    }

    // ---------------------------------------------------------------- BA sensor

    fn ba_timer_cmd(&mut self, core: &mut Core, bi: usize, cmd: TimerCmd) {
        let b = &mut self.tr.bas[bi];
        match cmd {
            TimerCmd::Keep => {}
            TimerCmd::Cancel => b.timer.cancel(),
            TimerCmd::Arm(at) => {
                if let Some(gen) = b.timer.arm(at) {
                    core.q.push(at, Ev::BaTimer { ba: bi as u32, gen });
                }
            }
        }
    }

    /// The queue length of port `pi` (which has a BA sensor) changed. Qlen counts the port's
    /// data frames in every queue: with PFC they wait in the per-priority queues.
    #[inline]
    pub(in crate::sim) fn ba_qlen(&mut self, core: &mut Core, pi: usize) {
        let bi = core.ports[pi].ba as usize;
        let q = core.ports[pi].q_frames() as u64;
        let out = self.tr.bas[bi].sensor.on_qlen(&self.tr.ba_p, core.now, q);
        if out.timer != TimerCmd::Keep {
            self.ba_timer_cmd(core, bi, out.timer);
        }
        if out.changed {
            self.ba_changed(core, bi);
        }
    }

    #[inline(never)]
    pub(in crate::sim) fn on_ba_timer(&mut self, core: &mut Core, bi: u32, gen: u32) {
        let b = &mut self.tr.bas[bi as usize];
        match b.timer.popped(core.now, gen) {
            Popped::Fire => {
                if b.sensor.on_timer(core.now).changed {
                    self.ba_changed(core, bi as usize);
                }
            }
            Popped::Requeue(t) => core.q.push(t, Ev::BaTimer { ba: bi, gen }),
            Popped::Stale => {}
        }
    }

    fn ba_changed(&mut self, core: &mut Core, bi: usize) {
        let now = core.now;
        let b = &mut self.tr.bas[bi];
        let ba = b.sensor.ba();
        if ba {
            b.ba_since = now;
        } else {
            b.ba_time += now - b.ba_since;
        }
        let port = b.port;
        Self::record(core, REC_BA_CHANGE, port, NONE, ba as i64);
    }

    #[inline]
    fn ba_zero(&self, core: &Core, pi: usize) -> bool {
        let bi = core.ports[pi].ba;
        bi != NONE && !self.tr.bas[bi as usize].sensor.ba()
    }

    /// Time with BA = 1 of each port up to the end of the run (NaN without a sensor), s.
    pub(in crate::sim) fn ba_available_s(&self, core: &Core) -> Vec<f64> {
        core.ports
            .iter()
            .map(|p| {
                if p.ba == NONE {
                    return f64::NAN;
                }
                let b = &self.tr.bas[p.ba as usize];
                let open = if b.sensor.ba() {
                    core.end - b.ba_since
                } else {
                    0
                };
                units::secs(b.ba_time + open)
            })
            .collect()
    }

    pub(in crate::sim) fn port_echo_fb99(&self, core: &Core, pi: usize) -> (u64, u64) {
        let bi = core.ports[pi].ba;
        if bi == NONE {
            (0, 0)
        } else {
            let b = &self.tr.bas[bi as usize];
            (b.echo_sent, b.fb99_sent)
        }
    }

    #[inline]
    fn record(core: &mut Core, kind: u8, node: u32, flow: u32, value: i64) {
        if core.rec.mask & (1 << kind) != 0 {
            let t = core.now;
            core.rec.event(EvRec {
                t,
                kind,
                node,
                flow,
                value,
            });
        }
    }

    // ---------------------------------------------------------------- switch side

    /// Count a SONAR echo or an Fb99 sent by CP port `pi` (for `send_feedback`); its event kind.
    pub(in crate::sim) fn transient_sent(&mut self, core: &mut Core, pi: usize, kind: u8) -> u8 {
        let ba = &mut self.tr.bas[core.ports[pi].ba as usize];
        if kind == KIND_ECHO {
            ba.echo_sent += 1;
            REC_ECHO_SENT
        } else {
            ba.fb99_sent += 1;
            REC_FB99_SENT
        }
    }

    /// A special (SONAR) frame of `flow` arrives at egress port `pi`, before admission: a
    /// port whose BA sensor says BA = 0 echoes it to the source (and the frame is marked as
    /// having passed a CP with BA = 0, for the false-alarm count). Returns the echo, if any.
    /// (`#[inline]`: the queued and the fixed enqueue both call it; as a call the queued
    /// enqueue kept fewer values in registers, +0.6 % instructions on the leaf-spine benchmark.)
    #[inline]
    pub(in crate::sim) fn sonar_special_arrives(
        &mut self,
        core: &mut Core,
        pi: usize,
        flow: u32,
    ) -> Option<Ctrl> {
        if !self.ba_zero(core, pi) {
            return None;
        }
        self.tr.flows[flow as usize].special_saw_ba0 = true;
        self.send_feedback(core, pi, flow, KIND_ECHO, 0)
    }

    /// A CP sample with no CNM (quantised -Fb = 0, i.e. Fb >= 0 up to the quantiser) under
    /// push-back: Fb99 to the source when BA = 0.
    pub(in crate::sim) fn pushback_sample(
        &mut self,
        core: &mut Core,
        pi: usize,
        flow: u32,
    ) -> Option<Ctrl> {
        if !self.ba_zero(core, pi) {
            return None;
        }
        self.send_feedback(core, pi, flow, KIND_FB99, 0)
    }

    // ---------------------------------------------------------------- reaction point side

    fn ping_cmd(&mut self, core: &mut Core, fi: usize, cmd: TimerCmd) {
        let t = &mut self.tr.flows[fi];
        match cmd {
            TimerCmd::Keep => {}
            TimerCmd::Cancel => t.ping_timer.cancel(),
            TimerCmd::Arm(at) => {
                if let Some(gen) = t.ping_timer.arm(at) {
                    core.q.push(
                        at,
                        Ev::PingTimer {
                            flow: fi as u32,
                            gen,
                        },
                    );
                }
            }
        }
    }

    /// A data frame of flow `fi` leaves the rate limiter: mark it special if SONAR asks.
    pub(in crate::sim) fn sonar_on_send(&mut self, core: &mut Core, fi: usize, pkt: u32) {
        let now = core.now;
        let f = &core.flows[fi];
        let active = f.rp.as_ref().is_some_and(|rp| rp.is_active());
        let src = f.src;
        let t = &mut self.tr.flows[fi];
        let Some(s) = t.sonar.as_mut() else {
            return;
        };
        if !active {
            if s.0.state() != crate::proto::sonar::PingState::Off {
                let cmd = s.0.stop();
                self.ping_cmd(core, fi, cmd);
            }
            return;
        }
        let (special, cmd) = s.0.on_data_sent(&s.1, now);
        if special {
            t.special_sent += 1;
            t.special_saw_ba0 = false;
            core.pkts[pkt as usize].flags |= FLAG_SPECIAL;
            Self::record(core, REC_SPECIAL_SENT, src, fi as u32, 0);
        }
        self.ping_cmd(core, fi, cmd);
    }

    /// A CNM reached flow `fi`'s RP (after the RP reacted): the ping timer goes to WP.
    pub(in crate::sim) fn sonar_on_cnm(&mut self, core: &mut Core, fi: usize) {
        let now = core.now;
        let active = core.flows[fi].rp.as_ref().is_some_and(|rp| rp.is_active());
        let Some(s) = self.tr.flows[fi].sonar.as_mut() else {
            return;
        };
        if active {
            let out = s.0.on_congestion(&s.1, now);
            self.ping_cmd(core, fi, out.timer);
        }
    }

    #[inline(never)]
    pub(in crate::sim) fn on_ping_timer(&mut self, core: &mut Core, fi: u32, gen: u32) {
        let now = core.now;
        match self.tr.flows[fi as usize].ping_timer.popped(now, gen) {
            Popped::Fire => {}
            Popped::Requeue(t) => {
                core.q.push(t, Ev::PingTimer { flow: fi, gen });
                return;
            }
            Popped::Stale => return,
        }
        let fi = fi as usize;
        let active = core.flows[fi].rp.as_ref().is_some_and(|rp| rp.is_active());
        let Some(s) = self.tr.flows[fi].sonar.as_mut() else {
            return;
        };
        if !active {
            let cmd = s.0.stop();
            self.ping_cmd(core, fi, cmd);
            return;
        }
        let out = s.0.on_timer(&s.1, now);
        self.ping_cmd(core, fi, out.timer);
        match out.action {
            SonarAction::None => {}
            SonarAction::ShortFuse => {
                // a false alarm: the probe passed a CP with BA = 0 (that CP echoed it), yet no
                // echo came back within WE
                let t = &mut self.tr.flows[fi];
                let false_alarm = t.special_saw_ba0;
                t.short_fuse += 1;
                t.false_alarms += false_alarm as u64;
                let src = core.flows[fi].src;
                Self::record(core, REC_SHORT_FUSE, src, fi as u32, false_alarm as i64);
                let f = &mut core.flows[fi];
                if let Some(Reaction::Qcn { rp, p }) = f.rp.as_mut() {
                    let out = rp.sonar_short_fuse(p);
                    core.rp_output(fi, out, now);
                }
            }
            SonarAction::HaiTick => {
                let f = &mut core.flows[fi];
                if let Some(Reaction::Qcn { rp, p }) = f.rp.as_mut() {
                    let out = rp.sonar_hai_tick(p);
                    core.rp_output(fi, out, now);
                }
            }
        }
    }

    /// A transient-response control frame (echo or Fb99) reached its host.
    pub(in crate::sim) fn transient_control(&mut self, core: &mut Core, pk: Pkt) {
        let now = core.now;
        let fi = pk.flow as usize;
        let src = core.flows[fi].src;
        match pk.kind {
            KIND_ECHO => {
                let t = &mut self.tr.flows[fi];
                t.echo_rx += 1;
                let Some(s) = t.sonar.as_mut() else {
                    return;
                };
                let (accepted, out) = s.0.on_echo(&s.1, now);
                self.ping_cmd(core, fi, out.timer);
                Self::record(core, REC_ECHO_RX, src, fi as u32, accepted as i64);
            }
            KIND_FB99 => {
                self.tr.flows[fi].fb99_rx += 1;
                let f = &mut core.flows[fi];
                if let Some(Reaction::Qcn { rp, p }) = f.rp.as_mut() {
                    let out = rp.on_fb99(p, now);
                    core.rp_output(fi, out, now);
                }
                Self::record(core, REC_FB99_RX, src, fi as u32, 0);
            }
            _ => {}
        }
    }
}

/// Round-trip time of a path without queueing or serialisation: twice the propagation, delay
/// lines and switch latencies from the source to the destination.
pub fn path_rtt(sc: &Scenario, path: &[usize]) -> SimTime {
    let one_way: SimTime = path
        .iter()
        .map(|&p| {
            let l = &sc.links[p / 2];
            let to = sc.port_ends(p).1;
            let lat = if sc.nodes[to].kind == NodeKind::Switch {
                sc.nodes[to].latency
            } else {
                0
            };
            l.delay + l.extra_delay + lat
        })
        .sum();
    2 * one_way
}
