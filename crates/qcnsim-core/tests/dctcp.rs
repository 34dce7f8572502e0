//! DCTCP over the ACK/window transport (docs/models/dctcp.md, docs/models/transport.md): the
//! queue of long flows sits at the marking threshold as the analysis says, α converges to
//! sqrt(2/W*), finite flows finish (lossless with PFC; lossy through go-back-N), the window keeps
//! its bounds, and the delayed-ACK echo counts the marks exactly.

mod common;
use common::*;
use proptest::prelude::*;

/// `n` DCTCP flows from their own hosts through one switch into one receiver; every link
/// `rate`, one-way delay `delay`; flows of `size` (a long-lived flow: far beyond the run).
fn dumbbell(n: usize, rate: &str, delay: &str, size: &str, extra: &str) -> String {
    gbn_incast(n, rate, delay, "1500B", size)
        + "[cc]\nmode = \"dctcp\"\n[cc.dctcp]\nk = 65\n\
         [metrics]\nqueue_ports = [\"sw->r\"]\nqueue_interval = \"1us\"\n\
         throughput_ports = [\"sw->r\"]\nthroughput_bin = \"1ms\"\n"
        + extra
}

/// The queue's samples over the run's second half (frames).
fn tail_queue(out: &qcnsim_core::api::RunOutput) -> Vec<i64> {
    let qf = i64s(table(out, "queue_samples"), "qlen_frames");
    qf[qf.len() / 2..].to_vec()
}

#[test]
fn two_long_flows_oscillate_about_k_as_the_analysis_says() {
    let out = run(&dumbbell(2, "10Gbps", "10us", "10GB", ""), &[], None);
    let flows = table(&out, "flows");
    let q = tail_queue(&out);
    let (min, max) = (*q.iter().min().unwrap(), *q.iter().max().unwrap());
    // C·RTT: 40 us of propagation and two 1500 B + two 64 B serialisations at 10 Gb/s
    let rtt = 40e-6 + 2.0 * 1.2e-6 + 2.0 * 0.0512e-6;
    let c_rtt = 10e9 * rtt / 12_000.0;
    let s = qcnsim_core::proto::dctcp::sawtooth(2.0, c_rtt, 65.0);
    // Q_max = K + N (eq. 12): within two packets
    assert!(
        (max as f64 - s.q_max).abs() <= 2.0,
        "max {max} vs {}",
        s.q_max
    );
    // the amplitude (eq. 10) within 25 %
    let a = (max - min) as f64;
    assert!(
        (a / s.amplitude - 1.0).abs() < 0.25,
        "A {a} vs {}",
        s.amplitude
    );
    // α ≈ sqrt(2/W*) (eq. 7) within 15 %
    for &al in f64s(flows, "dctcp_alpha") {
        assert!(
            (al / s.alpha - 1.0).abs() < 0.15,
            "alpha {al} vs {}",
            s.alpha
        );
    }
    // the link stays busy (the queue never empties) and the two flows share it
    assert!(min > 0);
    let tp = f64s(table(&out, "port_throughput"), "throughput_bps");
    assert!(tp[2..].iter().all(|&b| b > 0.99 * 10e9), "{tp:?}");
    let rx = i64s(flows, "rx_bytes");
    assert!((rx[0] as f64 / rx[1] as f64 - 1.0).abs() < 0.05, "{rx:?}");
    // marks are echoed and answered: every flow cut its window, every ACK was counted
    assert!(i64s(flows, "window_cuts").iter().all(|&c| c > 10));
    assert!(i64s(flows, "ece_acks_received").iter().all(|&c| c > 0));
    let acks = i64s(flows, "acks_received");
    let rxf = i64s(flows, "rx_frames");
    for k in 0..2 {
        // one ACK per packet: the ACKs of the frames in flight at the end are missing
        assert!(
            acks[k] <= rxf[k] && acks[k] > rxf[k] - 200,
            "{acks:?} {rxf:?}"
        );
    }
}

#[test]
fn without_congestion_control_the_same_flows_fill_the_queue() {
    // the control: go-back-N alone has no window; the queue grows without bound
    let text = dumbbell(2, "10Gbps", "10us", "10GB", "");
    let out = run(&text, &["cc.mode=none", "meta.duration=5ms"], None);
    let q = tail_queue(&out);
    assert!(*q.iter().max().unwrap() > 1000, "{:?}", q.iter().max());
}

#[test]
fn delayed_acks_with_the_state_machine_halve_the_acks() {
    let out = run(
        &dumbbell(2, "10Gbps", "10us", "10GB", ""),
        &["transport.ack_interval=2"],
        None,
    );
    let flows = table(&out, "flows");
    let acks = i64s(flows, "acks_received");
    let rx = i64s(flows, "rx_frames");
    for k in 0..2 {
        // an ACK per two packets, plus one at each change of the CE state
        let r = acks[k] as f64 / rx[k] as f64;
        assert!(r > 0.5 && r < 0.65, "ACKs per packet {r}");
    }
    // the queue still sits at K
    let q = tail_queue(&out);
    let max = *q.iter().max().unwrap();
    assert!((60..=80).contains(&max), "{max}");
}

#[test]
fn finite_flows_finish_in_drain_mode_and_record_their_fct() {
    let text = dumbbell(4, "10Gbps", "2us", "2MB", "");
    let out = run(&text, &["meta.duration=1ms", "meta.drain_until=50ms"], None);
    let fct = table(&out, "fct");
    assert!(bools(fct, "finished").iter().all(|&f| f));
    assert!(f64s(fct, "fct_ps").iter().all(|&t| t > 0.0));
    assert_eq!(i64s(fct, "delivered_bytes"), i64s(fct, "size_bytes"));
    // four 2 MB flows through 10 Gb/s need 6.4 ms: the run ends at the last arrival
    let end = summary_value(&out, "run_end", "").unwrap();
    assert!(end > 6.4e-3 && end < 10e-3, "{end}");
    let last = f64s(fct, "finish_ps").iter().cloned().fold(0.0, f64::max);
    assert_eq!(last, out.sim_time_ps as f64);
}

#[test]
fn a_lossy_fabric_is_recovered_by_go_back_n() {
    // a 20-frame buffer below K + N: DCTCP cannot keep the queue below it in slow start
    let mut text = dumbbell(4, "10Gbps", "2us", "1MB", "");
    text = text.replace("buffer = \"infinite\"\nnic", "buffer = \"30KB\"\nnic");
    let out = run(
        &text,
        &["meta.drain_until=200ms", "meta.duration=1ms"],
        None,
    );
    let fct = table(&out, "fct");
    let flows = table(&out, "flows");
    assert!(i64s(flows, "dropped_frames").iter().sum::<i64>() > 0);
    assert!(bools(fct, "finished").iter().all(|&f| f));
    assert_eq!(i64s(fct, "delivered_bytes"), i64s(fct, "size_bytes"));
    assert!(i64s(fct, "retransmitted_bytes").iter().sum::<i64>() > 0);
}

#[test]
fn the_window_never_leaves_its_bounds() {
    let text = dumbbell(3, "10Gbps", "5us", "10GB", "");
    let out = run(
        &text,
        &[
            "cc.dctcp.min_window=3",
            "cc.dctcp.max_window=40",
            "meta.duration=5ms",
        ],
        None,
    );
    for &w in i64s(table(&out, "flows"), "window_bytes") {
        assert!((3 * 1500..=40 * 1500).contains(&w), "{w}");
    }
}

#[test]
fn scenario_errors_name_the_field() {
    let text = dumbbell(2, "10Gbps", "5us", "10GB", "").replace("transport = \"gbn\"\n", "");
    let e = qcnsim_core::api::run(&text, &[], None, &mut |_| true).unwrap_err();
    let s = e.to_string();
    assert!(s.contains("cc.mode") && s.contains("gbn"), "{s}");
    let text = dumbbell(2, "10Gbps", "5us", "10GB", "");
    for (ov, field) in [
        ("cc.dctcp.g=0", "cc.dctcp.g"),
        ("cc.dctcp.k_unit=packets", "cc.dctcp.k_unit"),
        ("cc.dctcp.echo=bits", "cc.dctcp.echo"),
        ("cc.dctcp.min_window=50", "cc.dctcp.max_window"),
    ] {
        let ov = if field == "cc.dctcp.max_window" {
            vec![ov.to_string(), "cc.dctcp.max_window=10".to_string()]
        } else {
            vec![ov.to_string()]
        };
        let e = qcnsim_core::api::run(&text, &ov, None, &mut |_| true).unwrap_err();
        assert!(e.to_string().contains(field), "{ov:?}: {e}");
    }
}

/// A random lossless incast: 2–6 senders of 10–400 KB (frames 64–1500 B) at 1–25 Gb/s into one
/// receiver through one or two switches, PFC on, random K, echo and ACK interval. The
/// retransmission timer is 10 ms, above any queueing delay of these fabrics (at 1 Gb/s a queue of
/// K = 99 frames of 1500 B alone is 1.2 ms: the default 320 us would time out spuriously, as a
/// real sender with so short a timer would).
#[derive(Debug, Clone)]
struct Case {
    flows: Vec<(u64, u32, u32)>,
    rate: u32,
    two_switches: bool,
    k: u32,
    echo: bool,
    ack_interval: u32,
    slow_start: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((10_000u64..400_000, 64u32..1500, 0u32..50), 2..7),
        1u32..26,
        any::<bool>(),
        1u32..100,
        any::<bool>(),
        1u32..4,
        any::<bool>(),
    )
        .prop_map(
            |(flows, rate, two_switches, k, echo, ack_interval, slow_start)| Case {
                flows,
                rate,
                two_switches,
                k,
                echo,
                ack_interval,
                slow_start,
            },
        )
}

fn build(c: &Case) -> String {
    format!(
        "{}[transport]\nack_interval = {}\nrto = \"10ms\"\n[cc]\nmode = \"dctcp\"\n[cc.dctcp]\nk = {}\necho = \"{}\"\nslow_start = {}\n\
         [metrics]\nevents = []\n",
        lossless_incast(c.rate, c.two_switches, &c.flows),
        c.ack_interval,
        c.k,
        if c.echo { "state_machine" } else { "count" },
        c.slow_start
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24), max_shrink_iters: 100, .. ProptestConfig::default() })]

    /// Over a lossless fabric (PFC) every DCTCP flow finishes, with every byte delivered once and
    /// no retransmission, and its window within its bounds; nothing is left in flight.
    #[test]
    fn dctcp_flows_finish_over_a_lossless_fabric(c in case()) {
        let text = build(&c);
        let out = lossless_flows_finish(&text, c.flows.len())?;
        let flows = table(&out, "flows");
        prop_assert_eq!(i64s(table(&out, "fct"), "retransmitted_bytes").iter().sum::<i64>(), 0, "{}", text);
        for (k, &w) in i64s(flows, "window_bytes").iter().enumerate() {
            let frame = c.flows[k].1 as i64;
            prop_assert!(w >= 2 * frame && w <= 10_000 * frame, "window {} of f{}", w, k);
        }
    }
}
