//! TIMELY over the ACK/window transport (docs/models/timely.md, sim/cc/delay.rs): finite flows
//! finish over a lossless fabric, the rate never leaves [min_rate, line rate], a message's last
//! partial segment is a sample, runs are deterministic, and (CoNEXT 2016, §5.2) the split two
//! flows reach depends on where they start.

mod common;
use common::*;
use proptest::prelude::*;

/// `n` TIMELY flows from their own hosts through one switch into one receiver, every link
/// 10 Gb/s with `delay`, 1000 B frames, flows of `size` (long-lived: far beyond the run);
/// the queue into the receiver sampled every 10 µs, the rates every 100 µs.
fn dumbbell(n: usize, delay: &str, size: &str, extra: &str) -> String {
    gbn_incast(n, "10Gbps", delay, "1000B", size)
        + "[cc]\nmode = \"timely\"\n\
         [metrics]\nqueue_ports = [\"sw->r\"]\nqueue_interval = \"10us\"\nrate_interval = \"100us\"\n"
        + extra
}

/// Flow f0's share of the two flows' mean rate over [from, to) ps (the rp_rates samples).
fn share_f0(out: &qcnsim_core::api::RunOutput, from: i64, to: i64) -> f64 {
    let r = table(out, "rp_rates");
    let fl = names(r, "flow");
    let t = i64s(r, "t_ps");
    let cr = f64s(r, "cr_bps");
    let mut sum = [0.0; 2];
    for k in 0..t.len() {
        if t[k] >= from && t[k] < to {
            sum[(fl[k] != "f0") as usize] += cr[k];
        }
    }
    sum[0] / (sum[0] + sum[1])
}

#[test]
fn the_rate_never_leaves_its_bounds() {
    let text = dumbbell(4, "2us", "100GB", "");
    let out = run(&text, &["cc.timely.min_rate=500Mbps"], None);
    let flows = table(&out, "flows");
    // every event's rate (the per-flow extremes) and every sample of the rate limiter
    for (&lo, &hi) in f64s(flows, "timely_rate_min")
        .iter()
        .zip(f64s(flows, "timely_rate_max"))
    {
        assert!(lo >= 500e6 && hi <= 10e9, "{lo} {hi}");
        assert!(lo < hi, "the rate moved: {lo} {hi}");
    }
    let cr = f64s(table(&out, "rp_rates"), "cr_bps");
    assert!(!cr.is_empty());
    assert!(cr.iter().all(|&r| (500e6..=10e9).contains(&r)));
    // the samples were taken, one per 64 KB segment acknowledged
    let rx = i64s(flows, "rx_bytes");
    for (k, &n) in i64s(flows, "timely_samples").iter().enumerate() {
        let segs = rx[k] / 64_000;
        assert!(
            n > 0 && (n - segs).abs() <= 1,
            "{n} samples, {segs} segments"
        );
    }
    // rate-only: no window (NO_WINDOW is written as the largest i64)
    assert!(i64s(flows, "window_bytes").iter().all(|&w| w == i64::MAX));
}

#[test]
fn a_message_s_last_partial_segment_is_a_sample() {
    // 10 KB: less than one 64 KB segment, so only the message's end completes one
    let text = dumbbell(1, "2us", "10KB", "");
    let out = run(&text, &["meta.drain_until=10ms", "meta.duration=1ms"], None);
    let flows = table(&out, "flows");
    assert_eq!(i64s(flows, "timely_samples"), &[1]);
    // 100 KB: one full segment and the partial rest
    let text = dumbbell(1, "2us", "100KB", "");
    let out = run(&text, &["meta.drain_until=10ms", "meta.duration=1ms"], None);
    assert_eq!(i64s(table(&out, "flows"), "timely_samples"), &[2]);
    // 128 KB: two full segments, the second ending with the message: one sample for it
    let text = dumbbell(1, "2us", "128KB", "");
    let out = run(&text, &["meta.drain_until=10ms", "meta.duration=1ms"], None);
    assert_eq!(i64s(table(&out, "flows"), "timely_samples"), &[2]);
}

#[test]
fn runs_are_deterministic() {
    // each flow starts at C/N (CoNEXT 2016, sec. 4); from the line rate the three flows build
    // a queue past T_high, fall to min_rate and climb back by delta per 64 KB segment: slowly
    let text = dumbbell(3, "2us", "3MB", "[cc.timely]\nstart_rate = \"3.3Gbps\"\n");
    let ov = ["meta.drain_until=100ms", "meta.duration=1ms"];
    let a = run(&text, &ov, Some(7));
    let b = run(&text, &ov, Some(7));
    assert_eq!(tables_text(&a), tables_text(&b));
    assert!(bools(table(&a, "fct"), "finished").iter().all(|&f| f));
}

/// CoNEXT 2016, §5.2: "we only change the start time and initial rates of two flows, keeping
/// everything else constant, and we end up in completely different operating regimes", packet
/// runs beside the TIMELY fluid model in the same setting (scenarios/timely-fixedpoint.toml:
/// two flows, 1 µs links, 1000 B frames, Seg = 16 KB, 200 ms). From 7 + 3 Gb/s the faster
/// flow keeps gaining (3 + 7 is the exact mirror), so the split is set by the start.
///
/// How far it goes depends on `cc.timely.step_scaling` (docs/models/timely.md, "Packet runs
/// beside the fluid model"): with the default `"min_rtt"` (each step scaled by the time since
/// the last update over minRTT, the fluid model's update interval max(Seg/R, D_minRTT)) the
/// packet split ends within 0.06 of the fluid model's (0.828 and 0.787 measured); with
/// `"none"` (Algorithm 1 as printed: a whole δ per 16 KB, so the faster flow makes more
/// increases per unit time without bound) f0 takes almost everything (0.969 measured).
#[test]
fn the_split_depends_on_the_start_packet_beside_fluid() {
    let text = include_str!("../../../scenarios/timely-fixedpoint.toml");
    let ms = 1_000_000_000i64;
    let packet = |v: &str, scaling: &str| {
        let sc = format!("cc.timely.step_scaling={scaling}");
        let var = format!("meta.variant={v}");
        run(text, &[var.as_str(), sc.as_str()], None)
    };
    let fluid = {
        let ov = vec!["meta.variant=7-3".to_string()];
        qcnsim_core::api::run_fluid(text, &ov).unwrap_or_else(|e| panic!("{e}"))
    };
    let (fast, slow) = (packet("7-3", "min_rtt"), packet("3-7", "min_rtt"));
    let (a, b) = (
        share_f0(&fast, 150 * ms, 200 * ms),
        share_f0(&slow, 150 * ms, 200 * ms),
    );
    let f = share_f0(&fluid, 150 * ms, 200 * ms);
    assert!((a - f).abs() < 0.06, "7+3: packet {a}, fluid {f}");
    assert!((a + b - 1.0).abs() < 1e-9, "mirrored starts: {a} and {b}");
    // the share moved away from the start's 70 % (no fixed point at the start either)
    let a0 = share_f0(&fast, 0, 25 * ms);
    assert!(a > a0 + 0.05, "{a0} then {a}");
    // the link is used
    for o in [&fast, &slow] {
        let rx: i64 = i64s(table(o, "flows"), "rx_bytes").iter().sum();
        assert!(rx as f64 * 8.0 / 200e-3 > 9e9, "{rx}");
    }
    // Algorithm 1 as printed: the faster flow takes almost all of the link
    let plain = share_f0(&packet("7-3", "none"), 150 * ms, 200 * ms);
    assert!(
        plain > 0.95 && plain > f + 0.15,
        "7+3 unscaled: {plain}, fluid {f}"
    );
}

#[test]
fn scenario_errors_name_the_field() {
    let text = dumbbell(2, "2us", "10GB", "");
    let e = qcnsim_core::api::run(
        &text,
        &["cc.timely.start_rate=[\"1Gbps\"]".to_string()],
        None,
        &mut |_| true,
    )
    .unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("cc.timely.start_rate") && s.contains("2 rates"),
        "{s}"
    );
    let udp = text.replace("transport = \"gbn\"\n", "");
    let e = qcnsim_core::api::run(&udp, &[], None, &mut |_| true).unwrap_err();
    let s = e.to_string();
    assert!(
        s.contains("cc.mode") && s.contains("timely") && s.contains("udp"),
        "{s}"
    );
}

#[derive(Debug, Clone)]
struct Case {
    flows: Vec<(u64, u32, u32)>,
    rate: u32,
    sampling: u8,
    seg_kb: u32,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec((10_000u64..300_000, 64u32..1500, 0u32..50), 2..6),
        1u32..26,
        0u8..3,
        16u32..65,
    )
        .prop_map(|(flows, rate, sampling, seg_kb)| Case {
            flows,
            rate,
            sampling,
            seg_kb,
        })
}

fn build(c: &Case) -> String {
    format!(
        "{}[cc]\nmode = \"timely\"\n[cc.timely]\nsampling = \"{}\"\nseg = \"{}KB\"\n\
         [metrics]\nevents = []\n",
        lossless_incast(c.rate, false, &c.flows),
        ["segment", "ack", "rtt"][c.sampling as usize],
        c.seg_kb
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(16), max_shrink_iters: 100, .. ProptestConfig::default() })]

    /// Over a lossless fabric (PFC) every TIMELY flow finishes with every byte delivered once and
    /// no loss, its rate within [min_rate, line rate]; nothing is left in flight.
    #[test]
    fn timely_flows_finish_over_a_lossless_fabric(c in case()) {
        // (a retransmission is possible: a queueing delay above transport.rto, 320 us, which is
        // below T_high = 500 us, times a flow out; no frame is lost)
        let out = lossless_flows_finish(&build(&c), c.flows.len())?;
        let flows = table(&out, "flows");
        let line = c.rate as f64 * 1e9;
        let lo = 100e6f64.min(line);
        for (&a, &b) in f64s(flows, "timely_rate_min").iter().zip(f64s(flows, "timely_rate_max")) {
            prop_assert!(a >= lo && b <= line, "rates {} {}", a, b);
        }
        prop_assert!(i64s(flows, "timely_samples").iter().all(|&n| n >= 1));
    }
}
