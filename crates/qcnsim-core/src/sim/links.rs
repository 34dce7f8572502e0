//! Link failures and recoveries (docs/models/topology.md, "Link failures"): `[[schedule]]`
//! entries with `link` and `state`. With any of them in a scenario every unicast data frame is
//! routed hop by hop on the routes of the moment (`Flow::route` = [`ROUTE_LOOKUP`]): at each
//! switch the same choice a fixed path would make (shortest path, the ECMP hash of the flow with
//! the switch's seed, or a spray draw), over the links that are up. A data frame carries the
//! port it was last sent on in `Pkt::hop` (port + 1; 0 = its source NIC), so that on arrival
//! it can tell whether its link failed while it was on the wire.
//!
//! When a link goes down at `T`: the frames queued at its switch ports are dropped and counted,
//! and those ports refuse new frames (as a full queue drops them) until the link comes back; a
//! host's NIC port keeps its frames and stops sending (`slow_start_next`); frames on the wire
//! (the link failed after their first bit left and before their last bit arrived) are dropped
//! on arrival and counted; the routes are recomputed without the link. Frames with no route
//! left are dropped at the switch and counted. When it comes back, the routes are recomputed
//! with it and its ports send again.

use super::*;
use crate::scenario::routes::{flow_key, hash_pick, Routes};
use crate::scenario::RoutingMode;

/// `Flow::route`: the frame follows the flow's fixed path.
pub(super) const ROUTE_PATH: u8 = 0;
/// Per-packet spraying over the fixed routing tables.
pub(super) const ROUTE_SPRAY: u8 = 1;
/// Hop by hop on the routes of the moment (a scenario with link failures).
pub(super) const ROUTE_LOOKUP: u8 = 2;

pub(super) struct LinkState {
    pub(super) down: Vec<bool>,
    /// The last time each link went down (NEVER: not yet).
    last_down: Vec<SimTime>,
    pub(super) routes: Routes,
    /// The capacity of each port of a link while it is down is 0 frames; the real one is kept
    /// here.
    saved_cap: Vec<Capacity>,
    /// (time, link, up, frames dropped from its queues)
    pub(super) rows: Vec<(SimTime, u32, bool, u64)>,
    pub(super) lost_in_flight: u64,
    pub(super) unroutable: u64,
    cand: Vec<u32>,
}

impl LinkState {
    pub(super) fn build(sc: &Scenario) -> Option<LinkState> {
        if sc.link_events.is_empty() {
            return None;
        }
        Some(LinkState {
            down: vec![false; sc.links.len()],
            last_down: vec![NEVER; sc.links.len()],
            routes: sc.routes.clone(),
            saved_cap: vec![Capacity::Infinite; sc.n_ports()],
            rows: Vec::new(),
            lost_in_flight: 0,
            unroutable: 0,
            cand: Vec::with_capacity(16),
        })
    }
}

impl<'a> Sim<'a> {
    /// The port data frame `pk` was last sent on.
    #[inline]
    fn last_port(&self, pk: &Pkt) -> usize {
        if pk.hop == 0 {
            self.core.flows[pk.flow as usize].path[0] as usize
        } else {
            pk.hop as usize - 1
        }
    }

    /// Data frame `pk`, arriving now at the end of port `pi`'s link, was on that link when it
    /// failed.
    fn lost_on_link(&self, pi: usize, size: u32) -> bool {
        let Some(ls) = &self.links else {
            return false;
        };
        let d = ls.last_down[pi / 2];
        if d == NEVER {
            return false;
        }
        let port = &self.core.ports[pi];
        // its last bit arrived at `end` (before the next switch's forwarding latency); its first
        // bit left one transmission and one propagation delay earlier
        let end = self.core.now - (port.to_peer_queue - port.prop);
        let tx = units::tx_time_f((size + port.preamble) as u64, port.rate);
        let start = end.saturating_sub(port.prop + tx);
        d > start && d <= end
    }

    /// Drop data frame `pkt` lost on the link of port `pi` (or with no route, `pi` = NONE).
    fn drop_routed(&mut self, pkt: u32, pk: Pkt, pi: usize) {
        let f = &mut self.core.flows[pk.flow as usize];
        if pi == NONE as usize || self.core.ports[pi].from_switch {
            f.net_drops += 1;
        } else {
            f.nic_drops += 1;
        }
        if pi != NONE as usize {
            let port = &mut self.core.ports[pi];
            port.drop_frames += 1;
            port.drop_bytes += pk.size as u64;
        }
        if self.core.rec.wants(REC_DROP) || self.core.rec.rec_switch_drop {
            self.core.rec.event(EvRec {
                t: self.core.now,
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
        self.release(pkt);
    }

    /// A data frame of a [`ROUTE_LOOKUP`] flow arrives at switch `pk.at`: drop it if its link
    /// failed under it, else send it on towards its destination on the routes of the moment.
    #[inline(never)]
    pub(super) fn route_lookup(&mut self, pkt: u32, pk: Pkt) {
        let ip = self.last_port(&pk);
        if self.lost_on_link(ip, pk.size) {
            self.links.as_mut().expect("links").lost_in_flight += 1;
            return self.drop_routed(pkt, pk, ip);
        }
        let fi = pk.flow as usize;
        let (node, src, dst) = (
            pk.at as usize,
            self.core.flows[fi].src as usize,
            self.core.flows[fi].dst as usize,
        );
        let sc = self.core.sc;
        let ls = self.links.as_mut().expect("links");
        let port = match sc.routing.mode {
            RoutingMode::Shortest => ls.routes.next(node, dst).map(|p| p as u32),
            mode => {
                ls.routes.candidates(node, dst, &mut ls.cand);
                let n = ls.cand.len();
                let k = if n <= 1 {
                    0
                } else if mode == RoutingMode::Ecmp {
                    hash_pick(sc.switch_seed(node), flow_key(src, dst, fi), n)
                } else {
                    ((self.core.spray_rng.next_u64() as u128 * n as u128) >> 64) as usize
                };
                ls.cand.get(k).copied()
            }
        };
        let Some(port) = port else {
            ls.unroutable += 1;
            return self.drop_routed(pkt, pk, NONE as usize);
        };
        self.core.pkts[pkt as usize].hop = (port + 1) as u16;
        self.enqueue_data(port as usize, pkt);
    }

    /// A data frame of a [`ROUTE_LOOKUP`] flow reaches its destination host now (its arrival
    /// was deferred from the start of its last transmission, `deliver`).
    pub(super) fn on_arrive(&mut self, pkt: u32) {
        let pk = self.core.pkts[pkt as usize];
        let ip = self.last_port(&pk);
        if self.lost_on_link(ip, pk.size) {
            self.links.as_mut().expect("links").lost_in_flight += 1;
            return self.drop_routed(pkt, pk, ip);
        }
        let now = self.core.now;
        if self.core.flows[pk.flow as usize].gbn != NONE {
            self.gbn_receive(pk, now);
        } else {
            Self::count_rx(
                &mut self.core.flows[pk.flow as usize],
                pk.size,
                pk.born,
                now,
            );
        }
        if pk.flags & FLAG_CE != 0 {
            self.np_marked(pk.flow, now);
        }
        self.core.live_data -= 1;
        self.core.free.push(pkt);
    }

    /// A link fails (`up` false) or recovers.
    pub(super) fn on_link_change(&mut self, link: u32, up: bool) {
        let now = self.core.now;
        let l = link as usize;
        let mut dropped = 0u64;
        {
            let ls = self.links.as_mut().expect("links");
            ls.down[l] = !up;
            if !up {
                ls.last_down[l] = now;
            }
        }
        for pi in [2 * l, 2 * l + 1] {
            if !self.core.ports[pi].from_switch {
                // a host's NIC holds its frames while its link is down (it does not send;
                // `slow_start_next`) and sends them when it is back
                if up {
                    self.kick(pi);
                }
                continue;
            }
            if up {
                self.core.ports[pi].cap = self.links.as_ref().expect("links").saved_cap[pi];
                self.kick(pi);
                continue;
            }
            let port = &mut self.core.ports[pi];
            self.links.as_mut().expect("links").saved_cap[pi] = port.cap;
            port.cap = Capacity::Frames(0);
            port.track_q(now);
            let from_switch = port.from_switch;
            let mut gone = std::mem::take(&mut port.q);
            let ctrl = std::mem::take(&mut port.ctrl);
            port.q_bytes = 0;
            for &d in gone.iter() {
                let pk = self.core.pkts[d as usize];
                let port = &mut self.core.ports[pi];
                port.drop_frames += 1;
                port.drop_bytes += pk.size as u64;
                let f = &mut self.core.flows[pk.flow as usize];
                if from_switch {
                    f.net_drops += 1;
                } else {
                    f.nic_drops += 1;
                }
                self.release(d);
                dropped += 1;
            }
            for &c in ctrl.iter() {
                self.release(c);
            }
            gone.clear();
            // keep the queue's allocation
            self.core.ports[pi].q = gone;
            if self.core.ports[pi].ba != NONE {
                self.ba_qlen(pi);
            }
        }
        let sc = self.core.sc;
        let ls = self.links.as_mut().expect("links");
        ls.routes = Routes::compute_without(&sc.nodes, &sc.links, &ls.down);
        ls.rows.push((now, link, up, dropped));
    }

    /// Counters of the link failures: the `link_events` table and summary rows.
    pub(super) fn link_outputs(&self) -> Option<(Table, super::fct::Rows)> {
        let ls = self.links.as_ref()?;
        let sc = self.core.sc;
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
                "unroutable_drops".to_string(),
                ls.unroutable as f64,
                "frames".to_string(),
                all,
            ),
        ];
        Some((table, rows))
    }
}
