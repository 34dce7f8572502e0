//! The delay-based algorithms on the ACK/window transport (sim/cc/e2e.rs): TIMELY
//! (docs/models/timely.md, proto/timely.rs) and Swift (docs/models/swift.md, proto/swift.rs).
//! Part of congestion management.
//!
//! - **TIMELY** is rate-only: each flow's rate limiter paces at the rate Algorithm 1 sets
//!   ([`Reaction::E2e`], its window is `NO_WINDOW`). Its RTT samples come from the transport's
//!   timestamp echo (`ack.rtt()`), taken as `cc.timely.sampling` says; with segment sampling
//!   the ACK that completes a finite flow (its message) is a completion event too: its RTT is
//!   one sample even when the message's last segment is shorter than `seg` (the paper's
//!   completion event is the end of a segment or of the message), and it is the only sample
//!   that ACK gives. A NACK or a retransmission timeout leaves the rate as it is: TIMELY
//!   defines no loss reaction (go-back-N retransmits).
//! - **Swift** sets a window (`cwnd·MSS`, at least one packet) and, when cwnd < 1, paces one
//!   packet per `rtt/cwnd` (rate = cwnd·MSS/rtt). The hop count is the ACK's `hops` (the
//!   switches the data frame crossed), or, with link failures (hop-by-hop routing, whose frames
//!   do not count their hops), the switches of the flow's initial path. The endpoint delay is
//!   `cc.swift.rx_delay` (0 by default): the receiving host holds each ACK that long
//!   (sim/cc/e2e.rs) and nothing else of a host is modelled, so with 0 the whole RTT is fabric
//!   delay and the endpoint window only grows. With
//!   `transport.ack_interval > 1`, a delayed ACK's wait counts as fabric delay (the echo
//!   carries no receive time). A NACK is Swift's fast-recovery loss, a retransmission timeout
//!   its timeout.
//!
//! Each flow keeps the least and greatest rate (TIMELY) or window (Swift) any event set (the
//! flows table's `timely_rate_min`/`max`, `swift_cwnd_min`/`max`), and Swift the fabric delay
//! and target of the ACKs of the run's second half (`swift_delay_mean`,
//! `swift_target_mean`).

use crate::proto::ack::{Ack, Control};
use crate::proto::swift::{Swift, SwiftParams};
use crate::proto::timely::{Sampling, Timely, TimelyParams};
use crate::sim::cc::Reaction;
use crate::sim::prelude::*;
use crate::units::US;

/// The rate limiter of flow `i` on a NIC of `nic_rate` under TIMELY, Swift or HPCC (None in other
/// modes): it paces at the algorithm's rate from the start (HPCC's `R = W / T`, the line rate at
/// `W_init = B·T`; later rates from `Cm::apply`).
pub(in crate::sim) fn reaction(sc: &Scenario, i: usize, nic_rate: f64) -> Option<Reaction> {
    let f = &sc.flows[i];
    if f.group.is_some() {
        return None;
    }
    match sc.cc {
        CcMode::Timely => Some(Reaction::E2e {
            rate: TimelyFlow::new(sc, i, nic_rate, 0).control().rate_bps,
        }),
        CcMode::Swift => Some(Reaction::E2e {
            rate: SwiftFlow::new(sc, i, nic_rate).control().rate_bps,
        }),
        CcMode::Hpcc => Some(Reaction::E2e { rate: nic_rate }),
        _ => None,
    }
}

/// The NIC rate of flow `i` (its first link's).
pub(in crate::sim) fn nic_rate(sc: &Scenario, i: usize) -> f64 {
    sc.links[sc.flows[i].path[0] / 2].rate_bps
}

/// One flow's TIMELY sender.
pub(in crate::sim) struct TimelyFlow {
    pub(in crate::sim) s: Timely,
    p: TimelyParams,
    /// The flow's frames (0: long-lived).
    n: u32,
    pub(in crate::sim) rate_min: f64,
    pub(in crate::sim) rate_max: f64,
}

impl TimelyFlow {
    pub(in crate::sim) fn new(sc: &Scenario, i: usize, nic_rate: f64, n: u32) -> TimelyFlow {
        let p = sc.timely.for_flow(nic_rate);
        let s = Timely::new(&p, sc.timely.start_of(i, nic_rate));
        let r = s.rate_bps();
        TimelyFlow {
            s,
            p,
            n,
            rate_min: r,
            rate_max: r,
        }
    }

    pub(in crate::sim) fn control(&self) -> Control {
        self.s.control()
    }

    fn seen(&mut self, c: Control) -> Control {
        self.rate_min = self.rate_min.min(c.rate_bps);
        self.rate_max = self.rate_max.max(c.rate_bps);
        c
    }

    pub(in crate::sim) fn on_ack(&mut self, ack: &Ack) -> Control {
        let last = self.n > 0 && ack.next_expected >= self.n && ack.acked_bytes > 0;
        let c = if last && self.p.sampling == Sampling::Segment {
            // the message's end completes its last (possibly partial) segment: one sample
            self.s.on_rtt_sample(&self.p, ack.now, ack.rtt())
        } else {
            self.s.on_ack(&self.p, ack)
        };
        self.seen(c)
    }

    /// A NACK or a timeout: TIMELY has no loss rule; the rate stays.
    pub(in crate::sim) fn on_loss(&mut self) -> Control {
        self.control()
    }
}

/// One flow's Swift sender.
pub(in crate::sim) struct SwiftFlow {
    pub(in crate::sim) s: Swift,
    p: SwiftParams,
    /// The hops of the flow's initial path, used when frames do not count theirs (hop-by-hop
    /// routing); None: the ACK's.
    path_hops: Option<u8>,
    pub(in crate::sim) cwnd_min: f64,
    pub(in crate::sim) cwnd_max: f64,
    /// The endpoint delay every ACK carries (`cc.swift.rx_delay`), ps.
    endpoint_delay: SimTime,
    /// ACKs from this time on are summed (the second half of `meta.duration`).
    late_from: SimTime,
    late_acks: u64,
    late_delay_sum: f64,
    late_target_sum: f64,
}

impl SwiftFlow {
    pub(in crate::sim) fn new(sc: &Scenario, i: usize, nic_rate: f64) -> SwiftFlow {
        let f = &sc.flows[i];
        let p = sc.swift.for_flow(f.frame_bytes, nic_rate);
        let s = Swift::new(&p, sc.swift.start_cwnd);
        let w = s.cwnd(&p);
        let path_hops = (!sc.link_events.is_empty())
            .then(|| f.path.len().saturating_sub(1).min(u8::MAX as usize) as u8);
        SwiftFlow {
            s,
            p,
            path_hops,
            cwnd_min: w,
            cwnd_max: w,
            endpoint_delay: sc.swift.rx_delay_ps,
            late_from: sc.duration / 2,
            late_acks: 0,
            late_delay_sum: 0.0,
            late_target_sum: 0.0,
        }
    }

    pub(in crate::sim) fn control(&self) -> Control {
        self.s.control(&self.p)
    }

    fn seen(&mut self, c: Control) -> Control {
        let w = self.s.cwnd(&self.p);
        self.cwnd_min = self.cwnd_min.min(w);
        self.cwnd_max = self.cwnd_max.max(w);
        c
    }

    pub(in crate::sim) fn on_ack(&mut self, ack: &Ack) -> Control {
        let mut a = *ack;
        if let Some(h) = self.path_hops {
            a.hops = h;
        }
        if a.now >= self.late_from && a.acked_bytes > 0 {
            // the target this ACK is compared with (before it changes fcwnd)
            self.late_acks += 1;
            self.late_delay_sum += a.rtt().saturating_sub(self.endpoint_delay) as f64;
            self.late_target_sum += self.p.fabric_target(a.hops, self.s.fcwnd());
        }
        // the endpoint delay: the receiving host's constant delay (module doc)
        let c = self.s.on_ack(&self.p, &a, self.endpoint_delay);
        self.seen(c)
    }

    /// A NACK: Swift's fast-recovery loss.
    pub(in crate::sim) fn on_nack(&mut self, now: SimTime) -> Control {
        let c = self.s.on_fast_recovery(&self.p, now);
        self.seen(c)
    }

    pub(in crate::sim) fn on_timeout(&mut self, now: SimTime) -> Control {
        let c = self.s.on_timeout(&self.p, now);
        self.seen(c)
    }

    pub(in crate::sim) fn window_bytes(&self) -> u64 {
        self.control().window_bytes
    }

    /// Mean fabric delay and mean target of the ACKs of the run's second half, ps (NaN: none).
    fn late_means(&self) -> (f64, f64) {
        if self.late_acks == 0 {
            return (f64::NAN, f64::NAN);
        }
        let n = self.late_acks as f64;
        (self.late_delay_sum / n, self.late_target_sum / n)
    }
}

impl Core<'_> {
    /// An end-to-end algorithm set flow `fi`'s rate: its rate limiter paces at it from now (the
    /// tokens earned so far banked at the old rate), a pending departure re-timed.
    pub(in crate::sim) fn e2e_set_rate(&mut self, fi: usize, rate: f64) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let Some(Reaction::E2e { rate: r }) = f.rp.as_mut() else {
            return;
        };
        if *r == rate {
            return;
        }
        *r = rate;
        f.bucket.set_rate(now, rate);
        if f.rl_timer.is_armed() && !f.rl_q.is_empty() {
            self.schedule_rl(fi);
        }
    }
}

/// The delay-based algorithms' columns of the flows table (for the flows of `algos`; NaN
/// elsewhere): TIMELY's rate bounds and last rate, bit/s, and samples; Swift's window bounds
/// and last window, packets, and the mean fabric delay and target of the second half, µs.
pub(in crate::sim) fn columns<'a>(
    mode: CcMode,
    n_flows: usize,
    timely: &dyn Fn(usize) -> Option<&'a TimelyFlow>,
    swift: &dyn Fn(usize) -> Option<&'a SwiftFlow>,
) -> Columns {
    let f64s = |g: &dyn Fn(usize) -> f64| ColumnData::F64((0..n_flows).map(g).collect());
    match mode {
        CcMode::Timely => vec![
            (
                "timely_rate_min",
                f64s(&|i| timely(i).map_or(f64::NAN, |t| t.rate_min)),
            ),
            (
                "timely_rate_max",
                f64s(&|i| timely(i).map_or(f64::NAN, |t| t.rate_max)),
            ),
            (
                "timely_rate",
                f64s(&|i| timely(i).map_or(f64::NAN, |t| t.s.rate_bps())),
            ),
            (
                "timely_samples",
                ColumnData::I64(
                    (0..n_flows)
                        .map(|i| timely(i).map_or(0, |t| t.s.samples() as i64))
                        .collect(),
                ),
            ),
        ],
        CcMode::Swift => vec![
            (
                "swift_cwnd_min",
                f64s(&|i| swift(i).map_or(f64::NAN, |s| s.cwnd_min)),
            ),
            (
                "swift_cwnd_max",
                f64s(&|i| swift(i).map_or(f64::NAN, |s| s.cwnd_max)),
            ),
            (
                "swift_cwnd",
                f64s(&|i| swift(i).map_or(f64::NAN, |s| s.s.cwnd(&s.p))),
            ),
            (
                "swift_delay_mean_us",
                f64s(&|i| swift(i).map_or(f64::NAN, |s| s.late_means().0 / US as f64)),
            ),
            (
                "swift_target_mean_us",
                f64s(&|i| swift(i).map_or(f64::NAN, |s| s.late_means().1 / US as f64)),
            ),
        ],
        _ => Vec::new(),
    }
}
