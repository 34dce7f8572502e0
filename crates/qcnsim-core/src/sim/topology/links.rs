//! Link failures and recoveries (docs/models/topology.md, "Link failures"): `[[schedule]]`
//! entries with `link` and `state`. With any of them in a scenario every unicast data frame is
//! routed hop by hop on the routes of the moment (`Flow::route` = [`ROUTE_LOOKUP`]): at each
//! switch the same choice a fixed path would make (shortest path, the ECMP hash of the flow with
//! the switch's seed, or a spray draw), over the links that are up. A data frame carries the
//! port it was last sent on in `Pkt::hop` (port + 1; 0 = its source NIC), so that on arrival
//! it can tell whether its link failed while it was on the wire.
//!
//! When a link goes down at `T`: the frames queued at its switch ports are dropped and counted
//! (a data frame in its flow's drops, an ACK or NACK queued with them under
//! `transport.ack_queue = "data"` in the run's `ack_drops`), and those ports refuse new frames
//! (as a full queue drops them) until the link comes back; a host's NIC port keeps its frames
//! and stops sending (`slow_start_next`); frames on the wire, data or control (the link failed
//! after their first bit left and before their last bit arrived), are dropped on arrival and
//! counted (a control frame knows its last port from `Core::control_sent_on`); control frames
//! in a failed port's control queue are dropped and counted; the routes are recomputed without
//! the link. Frames with no route left are dropped at the switch and counted. When it comes
//! back, the routes are recomputed with it and its ports send again.

use crate::scenario::routes::{flow_key, hash_pick, Routes};
use crate::scenario::RoutingMode;
use crate::sim::prelude::*;
use crate::table::Table;

/// The link-failure subsystem: when each link last went down, the real capacity of a failed
/// link's ports, and the counters. Which links are down and the routes of the moment are the
/// data path's (`Core::link_down`, `Core::routes_now`); this subsystem keeps them.
pub(in crate::sim) struct LinkState {
    /// The last time each link went down (NEVER: not yet).
    last_down: Vec<SimTime>,
    /// The capacity of each port of a link while it is down is 0 frames; the real one is kept
    /// here.
    saved_cap: Vec<Capacity>,
    /// (time, link, up, frames dropped from its queues)
    rows: Vec<(SimTime, u32, bool, u64)>,
    lost_in_flight: u64,
    /// Control frames lost to failures: in a failed port's control queue, on the wire.
    ctrl_queued: u64,
    ctrl_in_flight: u64,
    unroutable: u64,
    cand: Vec<u32>,
}

/// What a link change asks of the data path at one of the link's two ports.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(in crate::sim) enum PortChange {
    /// Nothing (a host's NIC port whose link went down keeps its frames).
    None,
    /// The port may send again: start its next transmission.
    Kick,
    /// The port's queue was emptied (its frames dropped).
    Emptied,
}

impl LinkState {
    pub(in crate::sim) fn build(sc: &Scenario) -> Option<LinkState> {
        if sc.link_events.is_empty() {
            return None;
        }
        Some(LinkState {
            last_down: vec![NEVER; sc.links.len()],
            saved_cap: vec![Capacity::Infinite; sc.n_ports()],
            rows: Vec::new(),
            lost_in_flight: 0,
            ctrl_queued: 0,
            ctrl_in_flight: 0,
            unroutable: 0,
            cand: Vec::with_capacity(16),
        })
    }

    /// The port data frame `pk` was last sent on.
    #[inline]
    fn last_port(core: &Core, pk: &Pkt) -> usize {
        if pk.hop == 0 {
            core.flows[pk.flow as usize].path[0] as usize
        } else {
            pk.hop as usize - 1
        }
    }

    /// Data frame `pk`, arriving now at the end of port `pi`'s link, was on that link when it
    /// failed.
    fn lost_on_link(&self, core: &Core, pi: usize, size: u32) -> bool {
        let d = self.last_down[pi / 2];
        if d == NEVER {
            return false;
        }
        let port = &core.ports[pi];
        // its last bit arrived at `end` (before the next switch's forwarding latency); its first
        // bit left one transmission and one propagation delay earlier
        let end = core.now - (port.to_peer_queue - port.prop);
        let tx = units::tx_time_f((size + port.preamble) as u64, port.rate);
        let start = end.saturating_sub(port.prop + tx);
        d > start && d <= end
    }

    /// Drop data frame `pkt` lost on the link of port `pi` (or with no route, `pi` = NONE).
    fn drop_routed(core: &mut Core, pkt: u32, pk: Pkt, pi: usize) {
        let f = &mut core.flows[pk.flow as usize];
        if pi == NONE as usize || core.ports[pi].from_switch {
            f.net_drops += 1;
        } else {
            f.nic_drops += 1;
        }
        if pi != NONE as usize {
            let port = &mut core.ports[pi];
            port.drop_frames += 1;
            port.drop_bytes += pk.size as u64;
        }
        if core.rec.wants(REC_DROP) || core.rec.rec_switch_drop {
            core.rec.event(EvRec {
                t: core.now,
                kind: REC_DROP,
                node: if pi == NONE as usize {
                    pk.at
                } else {
                    pi as u32
                },
                flow: pk.flow,
                value: pk.size as i64,
            });
        }
        core.release(pkt);
    }

    /// A data frame of a [`ROUTE_LOOKUP`] flow arrives at switch `pk.at`: the port it goes on by
    /// on the routes of the moment, or `None` when it was dropped (its link failed under it, or
    /// no route is left).
    #[inline(never)]
    pub(in crate::sim) fn route(&mut self, core: &mut Core, pkt: u32) -> Option<usize> {
        let pk = core.pkts[pkt as usize];
        let ip = Self::last_port(core, &pk);
        if self.lost_on_link(core, ip, pk.size) {
            self.lost_in_flight += 1;
            Self::drop_routed(core, pkt, pk, ip);
            return None;
        }
        let fi = pk.flow as usize;
        let (node, src, dst) = (
            pk.at as usize,
            core.flows[fi].src as usize,
            core.flows[fi].dst as usize,
        );
        let sc = core.sc;
        let routes = core.routes_now.as_ref().expect("routes of the moment");
        let port = match sc.routing.mode {
            RoutingMode::Shortest => routes.next(node, dst).map(|p| p as u32),
            mode => {
                routes.candidates(node, dst, &mut self.cand);
                let n = self.cand.len();
                let k = if n <= 1 {
                    0
                } else if mode == RoutingMode::Ecmp {
                    hash_pick(sc.switch_seed(node), flow_key(src, dst, fi), n)
                } else {
                    ((core.spray_rng.next_u64() as u128 * n as u128) >> 64) as usize
                };
                self.cand.get(k).copied()
            }
        };
        let Some(port) = port else {
            self.unroutable += 1;
            Self::drop_routed(core, pkt, pk, NONE as usize);
            return None;
        };
        core.pkts[pkt as usize].hop = (port + 1) as u16;
        Some(port as usize)
    }

    /// A data frame of a [`ROUTE_LOOKUP`] flow reaches its destination host now (its arrival
    /// was deferred from the start of its last transmission, `deliver`): whether it arrived
    /// (else it was lost on its last link, dropped and counted).
    pub(in crate::sim) fn arrives(&mut self, core: &mut Core, pkt: u32) -> bool {
        let pk = core.pkts[pkt as usize];
        let ip = Self::last_port(core, &pk);
        if self.lost_on_link(core, ip, pk.size) {
            self.lost_in_flight += 1;
            Self::drop_routed(core, pkt, pk, ip);
            return false;
        }
        true
    }

    /// Control frame `pkt` (a CNM, CNP, ACK, ...) arrives now at the end of the link it was last
    /// sent on: when that link failed while it was on the wire, it is dropped and counted
    /// (returns true), as a data frame is (`route`, `arrives`). A frame never sent on a link
    /// (a feedback message entering its own switch after `cc.feedback_latency`) is not.
    pub(in crate::sim) fn control_lost(&mut self, core: &mut Core, pkt: u32) -> bool {
        let pk = core.pkts[pkt as usize];
        if pk.hop == 0 || !self.lost_on_link(core, pk.hop as usize - 1, pk.size) {
            return false;
        }
        self.ctrl_in_flight += 1;
        core.release(pkt);
        true
    }

    /// A link fails (`up` false) or recovers: what each of its two ports asks of the data path.
    pub(in crate::sim) fn on_change(
        &mut self,
        core: &mut Core,
        link: u32,
        up: bool,
    ) -> [(usize, PortChange); 2] {
        let now = core.now;
        let l = link as usize;
        let mut dropped = 0u64;
        core.link_down[l] = !up;
        if !up {
            self.last_down[l] = now;
        }
        let mut out = [(2 * l, PortChange::None), (2 * l + 1, PortChange::None)];
        for (pi, change) in out.iter_mut() {
            let pi = *pi;
            if !core.ports[pi].from_switch {
                // a host's NIC holds its frames while its link is down (it does not send;
                // `slow_start_next`) and sends them when it is back
                if up {
                    *change = PortChange::Kick;
                }
                continue;
            }
            if up {
                core.ports[pi].cap = self.saved_cap[pi];
                *change = PortChange::Kick;
                continue;
            }
            let port = &mut core.ports[pi];
            self.saved_cap[pi] = port.cap;
            port.cap = Capacity::Frames(0);
            port.track_q(now);
            let from_switch = port.from_switch;
            let mut gone = std::mem::take(&mut port.q);
            let ctrl = std::mem::take(&mut port.ctrl);
            port.q_bytes = 0;
            for &d in gone.iter() {
                let pk = core.pkts[d as usize];
                let port = &mut core.ports[pi];
                port.drop_frames += 1;
                port.drop_bytes += pk.size as u64;
                if matches!(pk.kind, KIND_ACK | KIND_NACK) {
                    // an ACK or NACK in the data queue (`transport.ack_queue = "data"`): one of
                    // the run's ACK drops, as one refused by a full queue (`discard_reply`), not
                    // a drop of its flow's data
                    core.ack_drops += 1;
                    core.ack_drop_bytes += pk.size as u64;
                    core.release(d);
                    dropped += 1;
                    continue;
                }
                let f = &mut core.flows[pk.flow as usize];
                if from_switch {
                    f.net_drops += 1;
                } else {
                    f.nic_drops += 1;
                }
                core.release(d);
                dropped += 1;
            }
            for &c in ctrl.iter() {
                core.release(c);
            }
            self.ctrl_queued += ctrl.len() as u64;
            gone.clear();
            // keep the queue's allocation
            core.ports[pi].q = gone;
            *change = PortChange::Emptied;
        }
        let sc = core.sc;
        core.routes_now = Some(Routes::compute_without(
            &sc.nodes,
            &sc.links,
            &core.link_down,
        ));
        self.rows.push((now, link, up, dropped));
        out
    }

    /// Counters of the link failures: the `link_events` table and summary rows.
    /// `ctrl_unroutable`: the control frames that found no route (`Core::ctrl_unroutable`).
    pub(in crate::sim) fn outputs(
        &self,
        sc: &Scenario,
        ctrl_unroutable: u64,
    ) -> (Table, fct::Rows) {
        let ls = self;
        let name = |l: u32| {
            let lk = &sc.links[l as usize];
            format!("{}-{}", sc.nodes[lk.a].name, sc.nodes[lk.b].name)
        };
        let table = Table::new("link_events")
            .col(
                "t_ps",
                ColumnData::I64(ls.rows.iter().map(|r| r.0 as i64).collect()),
            )
            .col(
                "link",
                ColumnData::Str(ls.rows.iter().map(|r| name(r.1)).collect()),
            )
            .col(
                "state",
                ColumnData::Str(
                    ls.rows
                        .iter()
                        .map(|r| if r.2 { "up" } else { "down" }.to_string())
                        .collect(),
                ),
            )
            .col(
                "queued_frames_dropped",
                ColumnData::I64(ls.rows.iter().map(|r| r.3 as i64).collect()),
            );
        let all = "all links".to_string();
        let rows = vec![
            (
                "link_failure_queued_drops".to_string(),
                ls.rows.iter().map(|r| r.3).sum::<u64>() as f64,
                "frames".to_string(),
                all.clone(),
            ),
            (
                "link_failure_in_flight_drops".to_string(),
                ls.lost_in_flight as f64,
                "frames".to_string(),
                all.clone(),
            ),
            (
                "link_failure_queued_control_drops".to_string(),
                ls.ctrl_queued as f64,
                "frames".to_string(),
                all.clone(),
            ),
            (
                "link_failure_in_flight_control_drops".to_string(),
                ls.ctrl_in_flight as f64,
                "frames".to_string(),
                all.clone(),
            ),
            (
                "unroutable_drops".to_string(),
                ls.unroutable as f64,
                "frames".to_string(),
                all.clone(),
            ),
            (
                "unroutable_control".to_string(),
                ctrl_unroutable as f64,
                "frames".to_string(),
                all,
            ),
        ];
        (table, rows)
    }
}

impl Needs for LinkState {
    fn name(&self) -> &'static str {
        "links"
    }
    /// A failed link's ports send nothing and refuse frames.
    fn slow_path(&self) -> bool {
        true
    }
    /// A hop-by-hop routed frame's arrival is decided when it arrives (its last link may fail
    /// under it).
    fn receives(&self, core: &Core, fi: usize) -> bool {
        core.flows[fi].route == ROUTE_LOOKUP
    }
    /// A failed link's port stops sending.
    fn moves_departures(&self, _core: &Core, _pi: usize) -> bool {
        true
    }
}
