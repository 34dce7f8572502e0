//! Swift over the ACK/window transport (docs/models/swift.md, sim/cc/delay.rs): under an
//! N-to-1 incast the fabric delay settles at the target Algorithm 1 computes, the window keeps
//! its bounds (and below one packet the flow is paced), finite flows finish over a lossless
//! fabric, and runs are deterministic.

mod common;
use common::*;
use proptest::prelude::*;

/// `n` Swift flows from their own hosts through one switch into one receiver; every link
/// 10 Gb/s with 2 µs, 1500 B frames, flows of `size` (long-lived: far beyond the run).
fn incast(n: usize, size: &str, extra: &str) -> String {
    gbn_incast(n, "10Gbps", "2us", "1500B", size)
        + "[cc]\nmode = \"swift\"\n\
         [metrics]\nqueue_ports = [\"sw->r\"]\nqueue_interval = \"1us\"\nrate_interval = \"10us\"\n"
        + extra
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// One flow's share of the aggregate additive increase per round trip, as delay: N flows each
/// add ai = 1 packet per RTT, so the queue can grow by N·MSS (N·1.2 µs at 10 Gb/s) between a
/// sample above the target and the decrease it causes.
fn ai_per_rtt_us(n: usize) -> f64 {
    n as f64 * 1500.0 * 8.0 / 10e9 * 1e6
}

/// The unloaded RTT of the incast: 4 × 2 µs of propagation, a 1500 B frame and a 64 B ACK
/// serialised twice at 10 Gb/s.
const BASE_RTT_US: f64 = 8.0 + 2.0 * 1.2 + 2.0 * 0.0512;

/// The transport's window check (`cc.swift.window_check`): with a window pinned at 1.5 packets
/// (min_cwnd = max_cwnd = start_cwnd = 1.5, so no pacing), one flow alone has one frame in
/// flight per round trip with `"after_send"` (htsim's Swift: it sends while `_last_acked + cwnd
/// >= _highest_sent + mss`) and two with `"before_send"` (a frame left while the bytes in flight
/// before it were below the window): its throughput is one 1500 B frame per unloaded RTT
/// (10.5 µs: 1.14 Gb/s), and twice that.
#[test]
fn a_window_of_one_and_a_half_packets_has_one_in_flight() {
    let pin = "[cc.swift]\nmin_cwnd = 1.5\nmax_cwnd = 1.5\nstart_cwnd = 1.5\n";
    let rate = |check: &str| {
        let ov = format!("cc.swift.window_check={check}");
        let out = run(
            &incast(1, "100GB", pin),
            &[ov.as_str(), "meta.duration=5ms"],
            None,
        );
        let f = table(&out, "flows");
        assert_eq!(f64s(f, "swift_cwnd_max"), &[1.5]);
        i64s(f, "rx_bytes")[0] as f64 * 8.0 / 5e-3
    };
    let (after, before) = (rate("after_send"), rate("before_send"));
    let one_per_rtt = 1500.0 * 8.0 / (BASE_RTT_US * 1e-6);
    assert!(
        (after / one_per_rtt - 1.0).abs() < 0.02,
        "after_send: {after} bit/s, one frame per RTT {one_per_rtt}"
    );
    assert!(
        (before / after - 2.0).abs() < 0.05,
        "before_send {before}, after_send {after}"
    );
}

/// The endpoint window (`cc.swift.rx_delay`, the receiving host's delay before its ACK leaves,
/// read as the endpoint delay): two flows into one port. Below the endpoint target (10 µs < 20
/// µs) the endpoint window only grows, the fabric delay (RTT - rx_delay) settles at the fabric
/// target as without a host delay, and the link stays full; above it (30 µs) the endpoint window
/// is cut every round trip and binds: the windows fall below one packet and the link empties;
/// the same 30 µs with `endpoint_target = "off"` keeps the link full.
#[test]
fn the_endpoint_window_binds_when_the_host_delay_exceeds_its_target() {
    let go = |ov: &[&str]| {
        let mut all = vec!["meta.duration=10ms"];
        all.extend_from_slice(ov);
        run(&incast(2, "100GB", ""), &all, None)
    };
    let rate = |out: &qcnsim_core::api::RunOutput| {
        i64s(table(out, "flows"), "rx_bytes").iter().sum::<i64>() as f64 * 8.0 / 10e-3
    };
    let below = go(&["cc.swift.rx_delay=10us"]);
    let f = table(&below, "flows");
    for (&d, &t) in f64s(f, "swift_delay_mean_us")
        .iter()
        .zip(f64s(f, "swift_target_mean_us"))
    {
        assert!(
            (d - t).abs() <= ai_per_rtt_us(2),
            "fabric delay {d} target {t}"
        );
    }
    assert!(rate(&below) > 0.99 * 10e9, "{}", rate(&below));
    let above = go(&["cc.swift.rx_delay=30us"]);
    let f = table(&above, "flows");
    assert!(
        f64s(f, "swift_cwnd_min").iter().all(|&w| w < 1.0),
        "{:?}",
        f64s(f, "swift_cwnd_min")
    );
    assert!(rate(&above) < 0.5 * 10e9, "{}", rate(&above));
    let off = go(&["cc.swift.rx_delay=30us", "cc.swift.endpoint_target=\"off\""]);
    assert!(rate(&off) > 0.99 * 10e9, "{}", rate(&off));
}

#[test]
fn incast_fabric_delay_settles_at_the_target() {
    // Swift (Kumar et al., SIGCOMM 2020): the fabric window keeps each flow's fabric delay at
    // its target, base_target + hops·h + fs(fcwnd) (flow scaling: more flows, smaller windows,
    // a larger target). Over the run's second half: each flow's mean delay, and the delay the
    // sampled queue gives (unloaded RTT + q/C), are within one RTT's aggregate additive
    // increase of the mean target.
    let mut targets = Vec::new();
    for n in [2usize, 8] {
        let out = run(&incast(n, "100GB", ""), &[], None);
        let f = table(&out, "flows");
        let tol = ai_per_rtt_us(n);
        let (d, t) = (
            f64s(f, "swift_delay_mean_us"),
            f64s(f, "swift_target_mean_us"),
        );
        for k in 0..n {
            assert!(
                (d[k] - t[k]).abs() <= tol,
                "n {n} f{k}: delay {} target {}",
                d[k],
                t[k]
            );
            // the target: 20 us + 1 hop × 3.05 us + fs(fcwnd) in [0, 100 us]
            assert!(t[k] >= 23.05 - 1e-9 && t[k] <= 123.05 + 1e-9, "{}", t[k]);
        }
        let q = i64s(table(&out, "queue_samples"), "qlen_bytes");
        let tail = &q[q.len() / 2..];
        let qm = tail.iter().sum::<i64>() as f64 / tail.len() as f64;
        let qd = BASE_RTT_US + qm * 8.0 / 10e9 * 1e6;
        let tm = mean(t);
        assert!(
            (qd - tm).abs() <= tol,
            "n {n}: queue delay {qd} target {tm}"
        );
        // a standing queue: the delay is well above the unloaded RTT, and the link is full
        assert!(
            qd > 2.0 * BASE_RTT_US && tail.iter().all(|&b| b > 0),
            "n {n}: {qd}"
        );
        targets.push(tm);
    }
    // flow scaling: eight flows have smaller windows than two, hence a larger target
    assert!(targets[1] > targets[0] + 5.0, "{targets:?}");
}

#[test]
fn below_one_packet_the_flow_is_paced() {
    // 64 flows: the target would need more queue than 64 packets in flight allow at cwnd ≥ 1
    let out = run(&incast(64, "100GB", ""), &["meta.duration=10ms"], None);
    let f = table(&out, "flows");
    assert!(f64s(f, "swift_cwnd_min").iter().all(|&w| w < 1.0));
    // the window is one packet while paced; the rate limiter runs below the line rate then
    assert!(i64s(f, "window_bytes").iter().all(|&w| w >= 1500));
    let cr = f64s(table(&out, "rp_rates"), "cr_bps");
    assert!(cr.iter().any(|&r| r < 1e9), "no paced sample");
    assert!(cr.iter().all(|&r| r > 0.0 && r <= 10e9));
    let rx: i64 = i64s(f, "rx_bytes").iter().sum();
    assert!(rx as f64 * 8.0 / 10e-3 > 9e9, "{rx}");
}

#[test]
fn the_window_never_leaves_its_bounds() {
    let out = run(
        &incast(32, "100GB", ""),
        &[
            "cc.swift.min_cwnd=0.5",
            "cc.swift.max_cwnd=8",
            "meta.duration=5ms",
        ],
        None,
    );
    let f = table(&out, "flows");
    for (&lo, &hi) in f64s(f, "swift_cwnd_min")
        .iter()
        .zip(f64s(f, "swift_cwnd_max"))
    {
        assert!(lo >= 0.5 && hi <= 8.0 && lo < hi, "{lo} {hi}");
    }
    // the start (12 packets) is clamped to max_cwnd
    assert!(f64s(f, "swift_cwnd_max").iter().all(|&w| w == 8.0));
    assert!(i64s(f, "window_cuts").iter().all(|&c| c > 0));
}

#[test]
fn runs_are_deterministic() {
    let text = incast(6, "2MB", "");
    let ov = ["meta.drain_until=100ms", "meta.duration=1ms"];
    let a = run(&text, &ov, Some(3));
    let b = run(&text, &ov, Some(3));
    assert_eq!(tables_text(&a), tables_text(&b));
    let fct = table(&a, "fct");
    assert!(bools(fct, "finished").iter().all(|&f| f));
}

#[test]
fn scenario_errors_name_the_field() {
    let udp = incast(2, "10GB", "").replace("transport = \"gbn\"\n", "");
    let e = qcnsim_core::api::run(&udp, &[], None, &mut |_| true).unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("cc.mode") && s.contains("swift") && s.contains("udp"),
        "{s}"
    );
}

#[derive(Debug, Clone)]
struct Case {
    flows: Vec<(u64, u32, u32)>,
    rate: u32,
    two_switches: bool,
    endpoint: bool,
    last_decrease: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((10_000u64..300_000, 64u32..1500, 0u32..50), 2..8),
        1u32..26,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(flows, rate, two_switches, endpoint, last_decrease)| Case {
                flows,
                rate,
                two_switches,
                endpoint,
                last_decrease,
            },
        )
}

fn build(c: &Case) -> String {
    format!(
        "{}[cc]\nmode = \"swift\"\n[cc.swift]\nendpoint_target = \"{}\"\nlast_decrease = \"{}\"\n\
         [metrics]\nevents = []\n",
        lossless_incast(c.rate, c.two_switches, &c.flows),
        if c.endpoint { "20us" } else { "off" },
        if c.last_decrease {
            "decrease"
        } else {
            "not_increase"
        }
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(16), max_shrink_iters: 100, .. ProptestConfig::default() })]

    /// Over a lossless fabric (PFC) every Swift flow finishes with every byte delivered and
    /// none dropped, its window within [min_cwnd, max_cwnd]; nothing is left in flight.
    #[test]
    fn swift_flows_finish_over_a_lossless_fabric(c in case()) {
        let out = lossless_flows_finish(&build(&c), c.flows.len())?;
        let flows = table(&out, "flows");
        for (&a, &b) in f64s(flows, "swift_cwnd_min").iter().zip(f64s(flows, "swift_cwnd_max")) {
            prop_assert!(a >= 0.001 && b <= 1000.0, "windows {} {}", a, b);
        }
    }
}
