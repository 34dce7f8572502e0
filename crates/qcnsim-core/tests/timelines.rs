//! Hand-computed timelines and long-run traffic statistics (docs/models/network.md):
//! - one and two frames through a switch with latency, propagation delay and a delay line, the
//!   exact flow completion time worked out by hand;
//! - a shaping schedule: the frame in transmission keeps the old rate, the next one takes the
//!   new rate; a change before any frame applies to the first;
//! - CBR, Bernoulli and Poisson sources: frame counts within 5 standard deviations of the
//!   offered rate, and the dispersion index (variance / mean) of per-bin frame counts near its
//!   theoretical value (CBR 0, Bernoulli 1 - p, Poisson 1).

mod common;
use common::*;

const PS_PER_US: i64 = 1_000_000;

/// a --(10 Gb/s, 2 us + 3 us delay line)--> sw (latency 700 ns) --(1 Gb/s, 5 us)--> b;
/// one finite CBR flow starting at 10 us.
fn line(size: &str, rate: &str, extra: &str) -> String {
    format!(
        r#"
[meta]
name = "timeline"
duration = "1ms"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
latency = "700ns"
buffer = "infinite"
[[links]]
between = ["a", "sw"]
rate = "10Gbps"
delay = "2us"
extra_delay = "3us"
[[links]]
between = ["sw", "b"]
rate = "1Gbps"
delay = "5us"
[[flows]]
name = "f"
src = "a"
dst = "b"
rate = "{rate}"
frame = "1500B"
size = "{size}"
start = "10us"
{extra}
"#
    )
}

fn fct(text: &str) -> i64 {
    let out = run(text, &[], None);
    let fl = table(&out, "flows");
    assert_eq!(i64s(fl, "dropped_frames"), &[0]);
    i64s(fl, "fct_ps")[0]
}

#[test]
fn hand_computed_timelines() {
    // 1500 B: 1.2 us at 10 Gb/s, 12 us at 1 Gb/s, 24 us at 500 Mb/s.
    // Frame 0: generated at 10; on a's wire 10 -> 11.2; at sw 11.2 + 2 + 3 + 0.7 = 16.9;
    // on sw's wire 16.9 -> 28.9; at b 28.9 + 5 = 33.9.
    // Frame 1 (CBR at 10 Gb/s: generated at 11.2): a's wire 11.2 -> 12.4; at sw 18.1; waits
    // for frame 0; sw's wire 28.9 -> 40.9; at b 45.9.
    // With Ethernet's 8 B preamble and 12 B inter-frame gap on every link: a frame's last bit
    // leaves (8 + 1500) B after its start, the port is free 12 B later. Frame 0: a's wire
    // 10 -> 11.2064; sw 16.9064 -> 28.9704; b 33.9704. Frame 1 (generated at 11.2): a's wire is
    // free at 11.2160 -> 12.4224; at sw 18.1224; sw's wire free at 29.0664 -> 41.1304; b 46.1304.
    let eth = "[defaults]\npreamble = \"8B\"\nifg = \"12B\"";
    let cases: [(&str, String, f64); 7] = [
        (
            "one frame, Ethernet overhead",
            line("1500B", "1Gbps", eth),
            33.9704 - 10.0,
        ),
        (
            "two frames, Ethernet overhead",
            line("3000B", "10Gbps", eth),
            46.1304 - 10.0,
        ),
        ("one frame", line("1500B", "1Gbps", ""), 33.9 - 10.0),
        (
            "two frames, the second queued",
            line("3000B", "10Gbps", ""),
            45.9 - 10.0,
        ),
        (
            "rate change during frame 0: frame 0 keeps 1 Gb/s, frame 1 at 500 Mb/s (28.9 -> 52.9)",
            line(
                "3000B",
                "10Gbps",
                "[[schedule]]\nat = \"20us\"\nport = \"sw->b\"\nrate = \"500Mbps\"",
            ),
            57.9 - 10.0,
        ),
        (
            "rate change before any frame: frame 0 at 500 Mb/s (16.9 -> 40.9)",
            line(
                "1500B",
                "1Gbps",
                "[[schedule]]\nat = \"5us\"\nport = \"sw->b\"\nrate = \"500Mbps\"",
            ),
            45.9 - 10.0,
        ),
        (
            "a shaped NIC port: a's wire at 1 Gb/s, 10 -> 22; sw 27.7 -> 39.7; b 44.7",
            line(
                "1500B",
                "1Gbps",
                "[[schedule]]\nat = \"0s\"\nport = \"a->sw\"\nrate = \"1Gbps\"",
            ),
            44.7 - 10.0,
        ),
    ];
    for (what, text, want_us) in cases {
        let want = (want_us * PS_PER_US as f64).round() as i64;
        assert_eq!(fct(&text), want, "{what}");
    }
}

/// One source on a 10 Gb/s NIC offering 3 Gb/s of 1000 B frames for 200 ms, its NIC port binned
/// every 100 us.
fn source(traffic: &str, seed: u64) -> String {
    format!(
        r#"
[meta]
name = "stats"
duration = "200ms"
seed = {seed}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
[[links]]
between = ["a", "sw"]
[[links]]
between = ["sw", "b"]
[[flows]]
name = "f"
src = "a"
dst = "b"
traffic = "{traffic}"
rate = "3Gbps"
frame = "1000B"
[metrics]
throughput_bin = "100us"
throughput_ports = ["a->sw"]
"#
    )
}

/// (frames generated, dispersion index of the per-bin frame counts)
fn counts(traffic: &str, seed: u64) -> (f64, f64) {
    let out = run(&source(traffic, seed), &[], None);
    let gen = i64s(table(&out, "flows"), "gen_frames")[0] as f64;
    let bins: Vec<f64> = i64s(table(&out, "port_throughput"), "frames")
        .iter()
        .map(|&x| x as f64)
        .collect();
    assert_eq!(bins.len(), 2000);
    let n = bins.len() as f64;
    let mean = bins.iter().sum::<f64>() / n;
    let var = bins.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (gen, var / mean)
}

#[test]
fn traffic_sources_have_their_long_run_rate_and_dispersion() {
    // 3 Gb/s of 1000 B frames for 200 ms: 75,000 frames expected.
    // Bernoulli: 250,000 slots of 0.8 us, p = 0.3: sd sqrt(250000 * 0.3 * 0.7) = 229;
    // Poisson: sd sqrt(75000) = 274. Dispersion of 2000 bins: standard error about 0.03.
    let expected = 75_000.0;
    let (g, d) = counts("cbr", 1);
    assert_eq!(g, expected, "CBR count");
    assert!(d < 0.05, "CBR dispersion {d}");
    for seed in [1, 2, 3] {
        let (g, d) = counts("bernoulli", seed);
        assert!(
            (g - expected).abs() < 5.0 * 229.0,
            "Bernoulli seed {seed}: {g}"
        );
        assert!(
            (d - 0.7).abs() < 0.15,
            "Bernoulli seed {seed}: dispersion {d}"
        );
        let (g, d) = counts("poisson", seed);
        assert!(
            (g - expected).abs() < 5.0 * 274.0,
            "Poisson seed {seed}: {g}"
        );
        assert!(
            (d - 1.0).abs() < 0.15,
            "Poisson seed {seed}: dispersion {d}"
        );
    }
}

#[test]
fn wire_overhead_caps_the_goodput() {
    // A CBR source at the 10 Gb/s line rate through a 10 Gb/s port: with 8 B preamble and 12 B
    // IFG a 1500 B frame takes 1520 B of wire time, so the goodput is 10 G * 1500 / 1520.
    let text = |extra: &str| {
        format!(
            "[meta]\nname = \"overhead\"\nduration = \"10ms\"\n{extra}\n[[hosts]]\nname = \"a\"\n\
             [[hosts]]\nname = \"b\"\n[[switches]]\nname = \"sw\"\n[[links]]\nbetween = [\"a\", \"sw\"]\n\
             [[links]]\nbetween = [\"sw\", \"b\"]\n[[flows]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\n\
             rate = \"10Gbps\"\nframe = \"1500B\"\n"
        )
    };
    let goodput = |t: &str| {
        let out = run(t, &[], None);
        i64s(table(&out, "flows"), "rx_bytes")[0] as f64 * 8.0 / 0.010
    };
    let plain = goodput(&text(""));
    let eth = goodput(&text("[defaults]\npreamble = \"8B\"\nifg = \"12B\""));
    assert!((plain / 10e9 - 1.0).abs() < 0.002, "no overhead: {plain}");
    assert!(
        (eth / (10e9 * 1500.0 / 1520.0) - 1.0).abs() < 0.002,
        "Ethernet overhead: {eth}"
    );
}

#[test]
fn feedback_latency_delays_every_cnm_by_exactly_that() {
    // QCN on the line above: the CP at sw->b sends CNMs back over sw->a, which carries nothing
    // else, so a CNM reaches a after the latency + its 128 B at 10 Gb/s (102.4 ns) + 2 us + 3 us.
    let text = line(
        "10MB",
        "10Gbps",
        "[cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"30KB\"",
    );
    for (latency, ps) in [("0s", 0), ("7us", 7 * PS_PER_US), ("1500ns", 1_500_000)] {
        let ov = format!("cc.feedback_latency={latency}");
        let out = run(&text, &[&ov, "meta.duration=10ms"], None);
        let ev = table(&out, "events");
        let (t, kind) = (i64s(ev, "t_ps"), strs(ev, "kind"));
        let at = |k: &str| -> Vec<i64> {
            (0..ev.rows())
                .filter(|&i| kind[i] == k)
                .map(|i| t[i])
                .collect()
        };
        let (sent, got) = (at("cnm_sent"), at("cnm_received"));
        assert!(
            sent.len() >= 5 && got.len() >= 5,
            "{latency}: {} CNMs",
            sent.len()
        );
        for (s, r) in sent.iter().zip(&got) {
            assert_eq!(r - s, ps + 102_400 + 5 * PS_PER_US, "{latency}: sent {s}");
        }
    }
}

#[test]
fn a_rate_limiter_can_start_with_an_empty_bucket() {
    // QCN with the rate limiter active from t = 0 at CR = 10 Gb/s, bucket one frame deep, the
    // flow starting at 0: full, the frame leaves at once (FCT 23.9 us, as above); empty, it
    // waits for 1500 B of tokens at 10 Gb/s, 1.2 us.
    for (start, want_us) in [("full", 23.9), ("empty", 25.1)] {
        let qcn = format!(
            "[cc]\nmode = \"qcn\"\nrl_start = \"{start}\"\n[cc.qcn.rp]\nstart_active = true"
        );
        let text = line("1500B", "1Gbps", &qcn).replace("start = \"10us\"", "start = \"0us\"");
        assert_eq!(
            fct(&text),
            (want_us * PS_PER_US as f64).round() as i64,
            "{start}"
        );
    }
}

#[test]
fn feedback_can_follow_the_reverse_of_an_explicit_path() {
    // a - s1 - s2 - b with a detour s1 - s3 - s2; the flow takes the detour (explicit path).
    // CNMs from the CP at s2->b go back by the shortest path (s2->s1) by default, and by the
    // reverse of the flow's path (s2->s3->s1) with cc.feedback_route = "reverse".
    let text = r#"
[meta]
name = "detour"
duration = "10ms"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s1"
[[switches]]
name = "s2"
[[switches]]
name = "s3"
[[links]]
between = ["a", "s1"]
[[links]]
between = ["s1", "s2"]
[[links]]
between = ["s1", "s3"]
[[links]]
between = ["s3", "s2"]
[[links]]
between = ["s2", "b"]
rate = "1Gbps"
[[flows]]
name = "f"
src = "a"
dst = "b"
rate = "5Gbps"
path = ["a", "s1", "s3", "s2", "b"]
[cc]
mode = "qcn"
[cc.qcn]
cp_ports = ["s2->b"]
[cc.qcn.cp]
q_eq = "30KB"
"#;
    let tx = |out: &qcnsim_core::api::RunOutput, port: &str| {
        let p = table(out, "ports");
        i64s(p, "tx_frames")[row_of(strs(p, "port"), port)]
    };
    for route in ["shortest", "reverse"] {
        let ov = format!("cc.feedback_route={route}");
        let out = run(text, &[&ov], None);
        let fl = table(&out, "flows");
        let (sent, got) = (
            i64s(table(&out, "ports"), "cnm_sent").iter().sum::<i64>(),
            i64s(fl, "cnm_received")[0],
        );
        assert!(
            sent > 5 && got == sent,
            "{route}: {sent} sent, {got} received"
        );
        // nothing but CNMs travels from s2 towards a
        let (direct, detour) = (tx(&out, "s2->s1"), tx(&out, "s2->s3") + tx(&out, "s3->s1"));
        if route == "shortest" {
            assert_eq!((direct, detour), (sent, 0), "{route}");
        } else {
            assert_eq!((direct, detour), (0, 2 * sent), "{route}");
        }
        assert_eq!(tx(&out, "s1->a"), sent, "{route}");
    }
}

#[test]
fn a_rate_limiter_can_start_at_a_given_rate() {
    // QCN with the rate limiter active from t = 0, bucket one frame deep and empty, two 1500 B
    // frames at CBR 10 Gb/s from t = 0. The bucket fills at the start rate R: frame 0 leaves a
    // at 12000/R, frame 1 at 24000/R (both 1.2 us on a's 10 Gb/s wire), each reaches sw 5.7 us
    // after it leaves, and sw's 1 Gb/s wire takes 12 us per frame, + 5 us to b.
    // line rate (the default "line"): frame 0 on sw's wire 8.1 -> 20.1, frame 1 20.1 -> 32.1: 37.1
    // 2 Gb/s: frame 0 at sw 12.9, wire 12.9 -> 24.9; frame 1 at sw 18.9, wire 24.9 -> 36.9: 41.9
    // 1 Gb/s: frame 0 at sw 18.9, wire 18.9 -> 30.9; frame 1 at sw 30.9, wire 30.9 -> 42.9: 47.9
    for (start_rate, want_us) in [("line", 37.1), ("2Gbps", 41.9), ("1Gbps", 47.9)] {
        let qcn = format!(
            "[cc]\nmode = \"qcn\"\nrl_start = \"empty\"\n[cc.qcn.rp]\nstart_active = true\n\
             start_rate = \"{start_rate}\""
        );
        let text = line("3000B", "10Gbps", &qcn).replace("start = \"10us\"", "start = \"0us\"");
        assert_eq!(
            fct(&text),
            (want_us * PS_PER_US as f64).round() as i64,
            "{start_rate}"
        );
    }
}
