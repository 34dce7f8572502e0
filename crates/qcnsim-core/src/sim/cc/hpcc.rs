//! HPCC's glue (docs/models/hpcc.md, "The packet model"): what the sender's rules
//! (proto/hpcc.rs) need from the simulator beyond the ACK/window transport (sim/cc/e2e.rs).
//!
//! - **Base RTT.** `[cc.hpcc] base_rtt` resolved per flow ([`base_rtts`]): a path's base RTT is
//!   `proto::hpcc::base_rtt` of its links (twice the propagation delay, extra delay lines
//!   included, plus one frame of the flow's `frame` size serialised at each link one way);
//!   `"global"` is the largest over every pair of hosts joined by a fewest-hops path through
//!   switches and over every flow's own path (ns-3 `GLOBAL_T 1`: the largest base RTT between
//!   two hosts), with the largest frame size of the flows.
//! - **INT stamping.** With `cc.mode = "hpcc"` every switch egress port stamps (`CpState::Int`
//!   at `Port::ecn`, sim/cc/e2e.rs `int_stamp`): when a data frame is taken from the port's queue
//!   to start its transmission, one record `{qlen, tx_bytes, ts, rate}`: the bytes left in the
//!   port's data queue without the frame, the port's transmitted bytes *with* the frame (the
//!   bytes it will have sent once this frame is out; ns-3 stamps before counting the frame),
//!   the time (the start of the frame's transmission) and the port's rate.
//! - **INT bytes on the wire.** A data frame of an HPCC flow carries
//!   `int_bytes + int_bytes_per_hop * h` more bytes, `h` the switch hops of its path
//!   (`Flow::int_bytes`, added when it leaves its rate limiter: the header is sized for the
//!   whole path from the start); the transport's ACKs carry `int_bytes + int_bytes_per_hop * h`
//!   more too (ns-3's ACKs carry the INT header). NACKs carry no telemetry and no INT bytes.
//! - **Pacing.** The flow's rate limiter paces at `Control::rate_bps` (the flow has no reaction
//!   point: `Flow::paced` makes its token bucket limit at `R = W / T` below the line rate, and
//!   `rp_rates` samples `R`).

use crate::proto::hpcc::{self, Hpcc, HpccParams};
use crate::scenario::hpcc::BaseRtt;
use crate::sim::cc::e2e::Algo;
use crate::sim::cc::Cm;
use crate::sim::prelude::*;

/// The path's links as (one-way propagation delay, rate in bit/s), source NIC first.
fn path_links(sc: &Scenario, path: &[usize]) -> Vec<(SimTime, f64)> {
    path.iter()
        .map(|&p| {
            let l = &sc.links[p / 2];
            (l.delay + l.extra_delay, l.rate_bps)
        })
        .collect()
}

/// The largest base RTT of a fewest-hops path between two hosts (through switches only), for
/// frames of `frame` bytes: per source host a breadth-first search, the largest RTT over the
/// fewest-hops paths to each node kept.
fn largest_host_pair_rtt(sc: &Scenario, frame: u64) -> SimTime {
    let n = sc.nodes.len();
    let mut adj: Vec<Vec<(usize, SimTime)>> = vec![Vec::new(); n];
    for l in &sc.links {
        let hop = 2 * (l.delay + l.extra_delay) + units::tx_time_f(frame, l.rate_bps);
        adj[l.a].push((l.b, hop));
        adj[l.b].push((l.a, hop));
    }
    let mut best = 0;
    let mut dist = vec![u32::MAX; n];
    let mut rtt = vec![0; n];
    let mut queue = std::collections::VecDeque::new();
    for src in 0..n {
        if sc.nodes[src].kind != NodeKind::Host {
            continue;
        }
        dist.fill(u32::MAX);
        rtt.fill(0);
        dist[src] = 0;
        queue.push_back(src);
        while let Some(u) = queue.pop_front() {
            if u != src && sc.nodes[u].kind == NodeKind::Host {
                best = best.max(rtt[u]);
                continue; // hosts do not forward
            }
            for &(v, hop) in &adj[u] {
                if dist[v] == u32::MAX {
                    dist[v] = dist[u] + 1;
                    rtt[v] = rtt[u] + hop;
                    queue.push_back(v);
                } else if dist[v] == dist[u] + 1 {
                    rtt[v] = rtt[v].max(rtt[u] + hop);
                }
            }
        }
    }
    best
}

/// Each flow's `T` (ps) as `[cc.hpcc] base_rtt` resolves it.
pub(in crate::sim) fn base_rtts(sc: &Scenario) -> Vec<SimTime> {
    let own = |i: usize| {
        let f = &sc.flows[i];
        hpcc::base_rtt(&path_links(sc, &f.path), f.frame_bytes as u64)
    };
    match sc.hpcc.base_rtt {
        BaseRtt::Fixed(t) => vec![t; sc.flows.len()],
        BaseRtt::Path => (0..sc.flows.len()).map(own).collect(),
        BaseRtt::Global => {
            let frame = sc.flows.iter().map(|f| f.frame_bytes).max().unwrap_or(0) as u64;
            let t = (0..sc.flows.len())
                .map(own)
                .max()
                .unwrap_or(0)
                .max(largest_host_pair_rtt(sc, frame));
            vec![t; sc.flows.len()]
        }
    }
}

/// INT bytes of flow `i`'s data frames and ACKs on the wire (its path's switch hops).
pub(in crate::sim) fn int_wire_bytes(sc: &Scenario, i: usize) -> u32 {
    if sc.cc != CcMode::Hpcc {
        return 0;
    }
    let f = &sc.flows[i];
    let hops = f.path.len().saturating_sub(1).min(u8::MAX as usize) as u8;
    sc.hpcc.params(1.0, 1).int_wire_bytes(hops)
}

/// Flow `i`'s HPCC sender (`T` resolved by [`base_rtts`]) at a NIC of `nic_rate`.
pub(in crate::sim) fn sender(sc: &Scenario, nic_rate: f64, t_ps: SimTime) -> Algo {
    let p: HpccParams = sc.hpcc.params(nic_rate, t_ps);
    Algo::Hpcc {
        s: Box::new(Hpcc::new(&p)),
        p,
    }
}

impl Cm {
    /// HPCC's columns of the flows table (none unless `cc.mode = "hpcc"`): `T` (ps), `U`, the
    /// reference window `Wc` (bytes) and the pacing rate (bit/s) at the end of the run.
    pub(in crate::sim) fn hpcc_flow_columns(&self, core: &Core) -> Columns {
        if core.sc.cc != CcMode::Hpcc {
            return Vec::new();
        }
        let e = &self.e2e;
        let per = |g: &dyn Fn(&Hpcc, &HpccParams) -> f64| -> Vec<f64> {
            (0..core.flows.len())
                .map(|fi| match e.algo(fi) {
                    Some(Algo::Hpcc { s, p }) => g(s, p),
                    _ => f64::NAN,
                })
                .collect()
        };
        let t: Vec<i64> = (0..core.flows.len())
            .map(|fi| match e.algo(fi) {
                Some(Algo::Hpcc { p, .. }) => p.t_ps as i64,
                _ => 0,
            })
            .collect();
        vec![
            ("hpcc_base_rtt_ps", ColumnData::I64(t)),
            ("hpcc_u", ColumnData::F64(per(&|s, _| s.u()))),
            (
                "hpcc_wc_bytes",
                ColumnData::F64(per(&|s, _| s.reference_window())),
            ),
            (
                "hpcc_rate_bps",
                ColumnData::F64(per(&|s, p| s.control(p).rate_bps)),
            ),
        ]
    }
}

#[cfg(test)]
pub(in crate::sim) mod tests {
    use super::*;
    use crate::units::{tx_time_f, US};

    /// One flow h0 -> sw -> r at 100 Gb/s, 1 us links, 1000 B frames (sim/int_tests.rs reads
    /// its telemetry).
    pub(in crate::sim) const TWO_FRAMES: &str = "[meta]\nduration = \"1ms\"\n[defaults]\n\
        link_rate = \"100Gbps\"\nlink_delay = \"1us\"\nswitch_latency = \"0us\"\n\
        [[switches]]\nname = \"sw\"\n[[hosts]]\nname = \"r\"\n[[hosts]]\nname = \"h0\"\n\
        [[links]]\nbetween = [\"h0\", \"sw\"]\n[[links]]\nbetween = [\"sw\", \"r\"]\n\
        [[flows]]\nname = \"f\"\nsrc = \"h0\"\ndst = \"r\"\ntraffic = \"greedy\"\n\
        size = \"1500B\"\ntransport = \"gbn\"\nframe = \"1000B\"\n[cc]\nmode = \"hpcc\"\n";

    /// Base RTTs: the flow's own path, and "global" over every pair of hosts.
    #[test]
    fn base_rtt_resolves_per_flow_and_globally() {
        // h0 - sw - r, and h1 - sw2 - sw - r with 3 us links: the longest host pair is h1 - r
        let text = TWO_FRAMES.replace(
            "[[flows]]",
            "[[switches]]\nname = \"sw2\"\n[[hosts]]\nname = \"h1\"\n\
             [[links]]\nbetween = [\"h1\", \"sw2\"]\ndelay = \"3us\"\n\
             [[links]]\nbetween = [\"sw2\", \"sw\"]\ndelay = \"3us\"\n[[flows]]",
        );
        let mut sc = crate::scenario::load(&text, &[]).unwrap();
        let hop = |d: SimTime| 2 * d + tx_time_f(1000, 1e11);
        sc.hpcc.base_rtt = BaseRtt::Path;
        assert_eq!(base_rtts(&sc), vec![2 * hop(US)]);
        sc.hpcc.base_rtt = BaseRtt::Global;
        assert_eq!(base_rtts(&sc), vec![2 * hop(3 * US) + hop(US)]);
        sc.hpcc.base_rtt = BaseRtt::Fixed(7 * US);
        assert_eq!(base_rtts(&sc), vec![7 * US]);
    }
}
