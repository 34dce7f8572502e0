//! Behaviour of BCN on real runs: the regulator settles at the bottleneck's service rate with
//! the queue near Qeq; positive BCN goes only to frames tagged by the CP; detection can be
//! switched off per switch; BCN(0,0) restarts at Rmin (and holds the flow with a back-off);
//! the rate-limiter queue overflows are counted; the events table matches the counters.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

const MS: i64 = 1_000_000_000;

/// src --10G-- sw1 --10G-- sw2 --10G-- dst, plus src2 --10G-- sw1 sending to dst2 behind sw2.
/// The egress `hot` is served at `rate` from t = 0. One 10 Gb/s CBR flow f0 src -> dst (1500 B)
/// and one 1 Gb/s CBR flow f1 src2 -> dst2. BCN CPs on every switch port.
fn net(hot: &str, rate: &str, duration_ms: u64, extra: &str) -> String {
    format!(
        r#"
[meta]
name = "bcn"
duration = "{duration_ms}ms"
seed = 3

[defaults]
link_rate = "10Gbps"
link_delay = "1us"
switch_latency = "1us"
buffer = "infinite"

[[hosts]]
name = "src"
[[hosts]]
name = "src2"
[[hosts]]
name = "dst"
[[hosts]]
name = "dst2"
[[switches]]
name = "sw1"
[[switches]]
name = "sw2"
[[links]]
between = ["src", "sw1"]
[[links]]
between = ["src2", "sw1"]
[[links]]
between = ["sw1", "sw2"]
[[links]]
between = ["sw2", "dst"]
[[links]]
between = ["sw2", "dst2"]

[[schedule]]
at = "0s"
port = "{hot}"
rate = "{rate}"

[[flows]]
name = "f0"
src = "src"
dst = "dst"
rate = "10Gbps"
frame = "1500B"
[[flows]]
name = "f1"
src = "src2"
dst = "dst2"
rate = "1Gbps"
frame = "1500B"

[cc]
mode = "bcn"

[metrics]
throughput_bin = "1ms"
throughput_ports = "all"
queue_interval = "20us"
queue_ports = ["sw1->sw2", "sw2->dst"]
rate_interval = "20us"
{extra}
"#
    )
}

/// Mean of (t, value) samples with t in [from, to).
fn mean_between(t: &[i64], v: &[f64], from: i64, to: i64) -> f64 {
    let xs: Vec<f64> = t
        .iter()
        .zip(v)
        .filter(|(t, _)| **t >= from && **t < to)
        .map(|(_, v)| *v)
        .collect();
    assert!(!xs.is_empty());
    xs.iter().sum::<f64>() / xs.len() as f64
}

fn flow_rates(out: &RunOutput, flow: &str) -> (Vec<i64>, Vec<f64>, Vec<bool>) {
    let rr = table(out, "rp_rates");
    let (f, t, cr, act) = (
        names(rr, "flow"),
        i64s(rr, "t_ps"),
        f64s(rr, "cr_bps"),
        bools(rr, "rl_active"),
    );
    let idx: Vec<usize> = (0..f.len()).filter(|&i| f[i] == flow).collect();
    (
        idx.iter().map(|&i| t[i]).collect(),
        idx.iter().map(|&i| cr[i]).collect(),
        idx.iter().map(|&i| act[i]).collect(),
    )
}

fn queue_of(out: &RunOutput, port: &str) -> (Vec<i64>, Vec<f64>) {
    let q = table(out, "queue_samples");
    let (p, t, b) = (strs(q, "port"), i64s(q, "t_ps"), i64s(q, "qlen_bytes"));
    let idx: Vec<usize> = (0..p.len()).filter(|&i| p[i] == port).collect();
    (
        idx.iter().map(|&i| t[i]).collect(),
        idx.iter().map(|&i| b[i] as f64).collect(),
    )
}

fn port_col(out: &RunOutput, col: &str, port: &str) -> i64 {
    let pt = table(out, "ports");
    i64s(pt, col)[row_of(strs(pt, "port"), port)]
}

fn flow_col(out: &RunOutput, col: &str, flow: &str) -> i64 {
    let fl = table(out, "flows");
    i64s(fl, col)[row_of(strs(fl, "flow"), flow)]
}

#[test]
fn regulator_settles_at_the_service_rate_with_the_queue_near_qeq() {
    // sw1->sw2 served at 2 Gb/s: f0 (10G) and f1 (1G) share it. BCN is a proportional-
    // derivative controller on Q - Qeq: in a steady state the negative and positive messages
    // balance, so the mean queue sits near Qeq (24000 B) and the regulated sources together
    // send what the port serves. The window is 15 KB so that the 100 ms run holds ~15000 samples.
    let out = run(
        &net(
            "sw1->sw2",
            "2Gbps",
            100,
            "[cc.bcn.cp]\nsample_window = \"15KB\"\nsample_jitter = \"1KB\"",
        ),
        &[],
        None,
    );
    let (t0, r0, a0) = flow_rates(&out, "f0");
    let (t1, r1, _) = flow_rates(&out, "f1");
    let (r0m, r1m) = (
        mean_between(&t0, &r0, 50 * MS, 100 * MS),
        mean_between(&t1, &r1, 50 * MS, 100 * MS),
    );
    assert!(a0.iter().skip(a0.len() / 2).all(|&a| a), "f0 regulated");
    // f1 offers 1 Gb/s: its regulator's R may sit above what it sends, so bound what is
    // delivered: the port is busy (>= 95 % of 2 Gb/s) and never above its rate.
    let delivered =
        (flow_col(&out, "rx_bytes", "f0") + flow_col(&out, "rx_bytes", "f1")) as f64 * 8.0 / 0.1;
    assert!(
        delivered > 0.95 * 2e9 && delivered <= 2e9 * 1.001,
        "delivered {delivered}"
    );
    assert!(r0m > 0.5e9 && r0m < 2e9, "f0 mean R {r0m}");
    assert!(r1m > 0.3e9, "f1 mean R {r1m}");
    let (qt, qb) = queue_of(&out, "sw1->sw2");
    let qm = mean_between(&qt, &qb, 50 * MS, 100 * MS);
    assert!(
        qm > 0.25 * 24_000.0 && qm < 4.0 * 24_000.0,
        "mean queue {qm} B, Qeq 24000 B"
    );
    // messages in both directions, only from the congested CP
    assert!(port_col(&out, "bcn_negative_sent", "sw1->sw2") > 100);
    assert!(port_col(&out, "bcn_positive_sent", "sw1->sw2") > 100);
    for p in ["sw2->dst", "sw2->dst2"] {
        let total: i64 = ["bcn_negative_sent", "bcn_positive_sent", "bcn0_sent"]
            .iter()
            .map(|c| port_col(&out, c, p))
            .sum();
        assert_eq!(total, 0, "{p} is not congested: Fb > 0 and untagged frames");
    }
    assert_eq!(
        summary_value(&out, "bcn0_sent", "").unwrap(),
        0.0,
        "Qsc is off"
    );
    assert_eq!(
        i64s(table(&out, "ports"), "cnm_sent").iter().sum::<i64>(),
        0
    );
}

#[test]
fn positive_bcn_only_to_frames_tagged_by_this_cp() {
    // The bottleneck is sw2->dst (2 Gb/s). f0's frames carry sw2->dst's CPID; sw1->sw2 is not
    // congested (queue ~0, Fb = Qeq/page > 0 at every sample) but must not send positive BCN,
    // since no frame through it is tagged with its CPID.
    let out = run(
        &net(
            "sw2->dst",
            "2Gbps",
            40,
            "[cc.bcn.cp]\nsample_window = \"15KB\"",
        ),
        &[],
        None,
    );
    assert!(port_col(&out, "bcn_positive_sent", "sw2->dst") > 0);
    assert!(port_col(&out, "bcn_negative_sent", "sw2->dst") > 0);
    assert_eq!(port_col(&out, "bcn_positive_sent", "sw1->sw2"), 0);
    assert_eq!(port_col(&out, "bcn_negative_sent", "sw1->sw2"), 0);
    // f1 never crosses sw2->dst: never regulated, never told anything
    for c in [
        "bcn_negative_received",
        "bcn_positive_received",
        "bcn0_received",
    ] {
        assert_eq!(flow_col(&out, c, "f1"), 0, "{c}");
    }
    let (_, r1, a1) = flow_rates(&out, "f1");
    assert!(a1.iter().all(|a| !a) && r1.iter().all(|&r| r == 10e9));
    // the events table agrees with the counters, and carries Fb in bytes with its sign
    let ev = table(&out, "events");
    let (kind, node, val) = (strs(ev, "kind"), strs(ev, "node"), i64s(ev, "value"));
    let sent: Vec<usize> = (0..ev.rows()).filter(|&k| kind[k] == "bcn_sent").collect();
    assert!(sent.iter().all(|&k| node[k] == "sw2->dst"));
    let neg = sent.iter().filter(|&&k| val[k] < 0).count() as i64;
    let pos = sent.iter().filter(|&&k| val[k] > 0).count() as i64;
    assert_eq!(neg, port_col(&out, "bcn_negative_sent", "sw2->dst"));
    assert_eq!(pos, port_col(&out, "bcn_positive_sent", "sw2->dst"));
    // |Fb| <= fb_max (1875 pages of 64 B)
    assert!(sent.iter().all(|&k| val[k].abs() <= 1875 * 64));
    let rx = (0..ev.rows())
        .filter(|&k| kind[k] == "bcn_received")
        .count() as i64;
    assert_eq!(
        rx,
        flow_col(&out, "bcn_negative_received", "f0")
            + flow_col(&out, "bcn_positive_received", "f0")
    );
}

#[test]
fn detection_off_silences_a_switch() {
    let text = net(
        "sw1->sw2",
        "2Gbps",
        20,
        "[cc.bcn]\ndetection_off = [\"sw1\"]",
    );
    let out = run(&text, &[], None);
    let total: i64 = ["bcn_negative_sent", "bcn_positive_sent", "bcn0_sent"]
        .iter()
        .map(|c| i64s(table(&out, "ports"), c).iter().sum::<i64>())
        .sum();
    assert_eq!(total, 0);
    let (_, _, a0) = flow_rates(&out, "f0");
    assert!(a0.iter().all(|a| !a), "never regulated");
    // the unregulated queue grows by (11 - 2) Gb/s: > 10 MB after 20 ms
    let (_, qb) = queue_of(&out, "sw1->sw2");
    assert!(*qb.last().unwrap() > 10e6);
    // the same network with detection on regulates f0
    let on = run(&net("sw1->sw2", "2Gbps", 20, ""), &[], None);
    assert!(flow_rates(&on, "f0").2.iter().any(|&a| a));
}

#[test]
fn severe_congestion_restarts_at_rmin_and_backoff_holds_the_flow() {
    // Qsc 50 KB, Rmin 1 Gb/s, 0.5 Gb/s service: the queue passes Qsc, BCN(0,0) arrives and
    // sets R to exactly Rmin; with a back-off the held regulator reports rate 0.
    let base =
        "[cc.bcn.cp]\nsample_window = \"15KB\"\nq_sc = \"50KB\"\n[cc.bcn.rp]\nr_min = \"1Gbps\"";
    let out = run(&net("sw1->sw2", "0.5Gbps", 40, base), &[], None);
    assert!(port_col(&out, "bcn0_sent", "sw1->sw2") > 0);
    assert!(flow_col(&out, "bcn0_received", "f0") > 0);
    let (_, r0, _) = flow_rates(&out, "f0");
    assert!(r0.contains(&1e9), "R = Rmin right after a BCN(0,0)");
    assert!(!r0.contains(&0.0), "no back-off: never held");
    let ev = table(&out, "events");
    assert!(strs(ev, "kind").iter().any(|k| k == "bcn0_received"));

    let held = run(
        &net(
            "sw1->sw2",
            "0.5Gbps",
            40,
            &format!("{base}\nt_max = \"2ms\""),
        ),
        &[],
        None,
    );
    let (_, r0, _) = flow_rates(&held, "f0");
    let zeros = r0.iter().filter(|&&r| r == 0.0).count();
    assert!(zeros > 0, "a held regulator reports 0");
    // while held, the source's NIC sends nothing of f0: some 1 ms bins of src->sw1 are empty
    let tp = table(&held, "port_throughput");
    let (p, b) = (strs(tp, "port"), i64s(tp, "bytes"));
    let empty = (0..tp.rows())
        .filter(|&k| p[k] == "src->sw1" && b[k] == 0)
        .count();
    assert!(empty > 0, "no empty 1 ms bin at the held source");
}

#[test]
fn rate_limiter_queue_overflow_is_counted() {
    // f0 offers 10 Gb/s into a regulator held near 2 Gb/s: its 150 KB RL queue overflows.
    let out = run(&net("sw1->sw2", "2Gbps", 20, ""), &[], None);
    let fl = table(&out, "flows");
    let i = row_of(strs(fl, "flow"), "f0");
    let (gen, rx, rl, drop, infl) = (
        i64s(fl, "gen_frames")[i],
        i64s(fl, "rx_frames")[i],
        i64s(fl, "rl_dropped_frames")[i],
        i64s(fl, "dropped_frames")[i],
        i64s(fl, "in_flight_frames")[i],
    );
    assert!(rl > gen / 2, "rl drops {rl} of {gen}");
    assert_eq!(
        gen,
        rx + rl + drop + infl + i64s(fl, "nic_dropped_frames")[i]
    );
    assert_eq!(
        summary_value(&out, "rl_dropped_frames", "").unwrap() as i64,
        i64s(fl, "rl_dropped_frames").iter().sum::<i64>()
    );
}

#[test]
fn same_seed_same_tables_other_seed_other_samples() {
    let text = net("sw1->sw2", "2Gbps", 10, "");
    let a = run(&text, &[], Some(5));
    let b = run(&text, &[], Some(5));
    let c = run(&text, &[], Some(6));
    let ev = |o: &RunOutput| {
        let e = table(o, "events");
        (i64s(e, "t_ps").to_vec(), i64s(e, "value").to_vec())
    };
    assert_eq!(ev(&a), ev(&b));
    assert_eq!(
        f64s(table(&a, "rp_rates"), "cr_bps"),
        f64s(table(&b, "rp_rates"), "cr_bps")
    );
    assert_ne!(ev(&a), ev(&c), "the sampling jitter depends on the seed");
}

#[test]
fn switch_memory_is_the_sum_of_the_switch_egress_queues() {
    let text = net("sw1->sw2", "2Gbps", 5, "").replace(
        "queue_ports = [\"sw1->sw2\", \"sw2->dst\"]",
        "queue_ports = \"all\"\nmemory_switches = [\"sw1\"]",
    );
    let out = run(&text, &[], None);
    let m = table(&out, "switch_memory");
    let (sw, t, b) = (strs(m, "switch"), i64s(m, "t_ps"), i64s(m, "bytes"));
    assert!(sw.iter().all(|s| s == "sw1"));
    let q = table(&out, "queue_samples");
    let (qp, qt, qb) = (strs(q, "port"), i64s(q, "t_ps"), i64s(q, "qlen_bytes"));
    assert_eq!(m.rows(), 251, "samples at 0, 20 us, ..., 5 ms");
    for k in 0..m.rows() {
        let sum: i64 = (0..q.rows())
            .filter(|&i| qt[i] == t[k] && qp[i].starts_with("sw1->"))
            .map(|i| qb[i])
            .sum();
        assert_eq!(b[k], sum, "t = {}", t[k]);
    }
    assert!(b.iter().any(|&x| x > 0));
    // the default samples every switch
    let all = run(&net("sw1->sw2", "2Gbps", 1, ""), &[], None);
    let sws: std::collections::BTreeSet<&String> = strs(table(&all, "switch_memory"), "switch")
        .iter()
        .collect();
    assert_eq!(sws.into_iter().cloned().collect::<Vec<_>>(), ["sw1", "sw2"]);
}

#[test]
fn calibration_readings_fb_not_saturated_and_a_1g_floor() {
    // bcn-calibration's headline readings (docs/models/bcn.md): |Fb| is not saturated
    // (fb_max = "off") and the regulator never goes below 1 Gb/s ("Rmin 1 Gbps"); the variant
    // "-fbsat-floor5M" (the earlier readings) saturates at 1875 pages and falls below 1 Gb/s.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/bcn-calibration.toml"
    ))
    .unwrap();
    let ev = ["metrics.events=[\"bcn_sent\"]", "meta.duration=20ms"];
    let fb_pages = |o: &RunOutput| -> Vec<i64> {
        let e = table(o, "events");
        let (kind, val) = (strs(e, "kind"), i64s(e, "value"));
        (0..e.rows())
            .filter(|&k| kind[k] == "bcn_sent")
            .map(|k| val[k] / 64)
            .collect()
    };
    let lowest = |o: &RunOutput| {
        let rr = table(o, "rp_rates");
        let (cr, act) = (f64s(rr, "cr_bps"), bools(rr, "rl_active"));
        (0..rr.rows())
            .filter(|&i| act[i])
            .map(|i| cr[i])
            .fold(f64::INFINITY, f64::min)
    };
    let head = run(
        &text,
        &[&["meta.variant=pause-bcn-edges-on"][..], &ev[..]].concat(),
        None,
    );
    let old = run(
        &text,
        &[
            &["meta.variant=pause-bcn-edges-on-fbsat-floor5M"][..],
            &ev[..],
        ]
        .concat(),
        None,
    );
    let (fh, fo) = (fb_pages(&head), fb_pages(&old));
    assert!(
        fh.iter().any(|f| *f < -1875),
        "no Fb beyond 1875 pages: {fh:?}"
    );
    assert!(fo.iter().all(|f| f.abs() <= 1875));
    assert!(
        fo.contains(&-1875),
        "the saturation is reached in the old reading"
    );
    assert!(lowest(&head) >= 1e9, "headline floor: {}", lowest(&head));
    assert!(lowest(&old) < 1e9, "5 Mb/s floor: {}", lowest(&old));
}
