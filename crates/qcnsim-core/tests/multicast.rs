//! Multicast behaviour: replication along the distribution tree (every copy delivered, dropped
//! or in flight), explicit vs computed trees, the two feedback schemes, the CPID in CNMs, the
//! statistics window metrics, determinism, and the scenarios shipped in scenarios/.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

/// One switch, two sources, three members (one of them also a source), 1 Gb/s links.
const STAR: &str = r#"
[meta]
name = "mc-star"
duration = "40ms"
seed = 3

[defaults]
link_rate = "1Gbps"
link_delay = "1us"
switch_latency = "1us"
buffer = "infinite"

[[hosts]]
name = "s1"
[[hosts]]
name = "s2"
[[hosts]]
name = "r1"
[[hosts]]
name = "r2"
[[switches]]
name = "sw"

[[links]]
between = ["s1", "sw"]
[[links]]
between = ["s2", "sw"]
[[links]]
between = ["sw", "r1"]
[[links]]
between = ["sw", "r2"]

[[groups]]
name = "g"
members = ["r1", "r2", "s2"]

[[flows]]
name = "a"
src = "s1"
group = "g"
rate = "300Mbps"
frame = "1000B"
stop = "30ms"
[[flows]]
name = "b"
src = "s2"
group = "g"
traffic = "poisson"
rate = "200Mbps"
frame = "1500B"
stop = "30ms"

[metrics]
queue_interval = "100us"

[analysis]
stats_from = "10ms"
"#;

/// A chain sw1 - sw2 - sw3 with a member on each switch and the source on sw1.
const CHAIN: &str = r#"
[meta]
name = "mc-chain"
duration = "30ms"
seed = 5

[defaults]
link_rate = "1Gbps"
link_delay = "2us"
switch_latency = "1us"
buffer = "60frames"

[[hosts]]
name = "src"
[[hosts]]
name = "src2"
[[hosts]]
name = "m1"
[[hosts]]
name = "m2"
[[hosts]]
name = "m3"
[[hosts]]
name = "m3b"
[[switches]]
name = "sw1"
[[switches]]
name = "sw2"
[[switches]]
name = "sw3"

[[links]]
between = ["sw1", "sw2"]
[[links]]
between = ["sw2", "sw3"]
[[links]]
between = ["src", "sw1"]
[[links]]
between = ["src2", "sw2"]
[[links]]
between = ["sw1", "m1"]
[[links]]
between = ["sw2", "m2"]
[[links]]
between = ["sw3", "m3"]
[[links]]
between = ["sw3", "m3b"]

[[groups]]
name = "g"
members = ["m1", "m2", "m3", "m3b"]

[[flows]]
name = "mc"
src = "src"
group = "g"
rate = "700Mbps"
frame = "1500B"
[[flows]]
name = "mc2"
src = "src2"
group = "g"
rate = "600Mbps"
frame = "1500B"
[[flows]]
name = "uni"
src = "m1"
dst = "m3"
rate = "300Mbps"
frame = "1000B"

[cc]
mode = "qcn"
[cc.qcn.cp]
q_eq = "30000B"
[cc.qcn.rp]
start_active = true
timer = "2ms"
"#;

const EXPLICIT_TREE: &str = "[[groups]]\nname = \"g\"\nmembers = [\"m1\", \"m2\", \"m3\", \"m3b\"]\n\
    tree = [\"sw1->m1\", \"sw1->sw2\", \"sw2->m2\", \"sw2->sw3\", \"sw2->sw1\", \"sw3->m3\", \"sw3->m3b\"]\n";

fn col_i(out: &RunOutput, t: &str, c: &str) -> Vec<i64> {
    i64s(table(out, t), c).to_vec()
}

fn dump(out: &RunOutput) -> String {
    format!("{:?}", out.tables)
}

#[test]
fn every_member_receives_every_frame_and_copies_are_counted() {
    let (out, live, late) = run_with_live(STAR);
    assert_eq!(
        (live, late),
        (0, 0),
        "flows stop at 30 ms: nothing left in flight at 40 ms"
    );
    let fl = table(&out, "flows");
    let gen = i64s(fl, "gen_frames");
    let rx = i64s(fl, "rx_frames");
    let copies = i64s(fl, "replicated_frames");
    assert!(gen.iter().all(|&g| g > 400), "gen {gen:?}");
    // a: 3 members (r1, r2, s2) -> 2 copies per frame; b: s2 is the source -> r1, r2 -> 1 copy
    assert_eq!(copies, &[2 * gen[0], gen[1]]);
    assert_eq!(rx, &[3 * gen[0], 2 * gen[1]]);
    assert_eq!(i64s(fl, "in_flight_frames"), &[0, 0]);
    assert_eq!(strs(fl, "dst"), &["g", "g"]);
    // per member: every frame, exactly once
    let mm = table(&out, "multicast_members");
    let who: Vec<(String, String)> = strs(mm, "flow")
        .iter()
        .cloned()
        .zip(strs(mm, "member").iter().cloned())
        .collect();
    let want: Vec<(String, String)> = [
        ("a", "r1"),
        ("a", "r2"),
        ("a", "s2"),
        ("b", "r1"),
        ("b", "r2"),
    ]
    .iter()
    .map(|(f, m)| (f.to_string(), m.to_string()))
    .collect();
    assert_eq!(who, want);
    let mrx = i64s(mm, "rx_frames");
    assert_eq!(mrx, &[gen[0], gen[0], gen[0], gen[1], gen[1]]);
    // the switch ports carried exactly the copies
    let ports = table(&out, "ports");
    let tx = i64s(ports, "tx_frames");
    let pn = strs(ports, "port");
    assert_eq!(tx[row_of(pn, "sw->r1")], gen[0] + gen[1]);
    assert_eq!(tx[row_of(pn, "sw->s2")], gen[0]);
    assert_eq!(tx[row_of(pn, "sw->s1")], 0);
}

#[test]
fn finite_multicast_flow_completes_when_every_member_has_it() {
    let text = STAR.replace("stop = \"30ms\"\n[[flows]]", "size = \"150KB\"\n[[flows]]");
    let out = run(&text, &[], None);
    let fl = table(&out, "flows");
    let fct = i64s(fl, "fct_ps")[0];
    assert!(fct > 0, "the finite flow completed");
    // 100 frames of 1500... here 150 frames of 1000 B at 300 Mb/s: the last frame leaves the
    // source at 149 * 26.67 us; the FCT cannot be shorter than that.
    assert!(
        fct as f64 >= 149.0 * 1000.0 * 8.0 / 300e6 * 1e12,
        "fct {fct}"
    );
    let mm = table(&out, "multicast_members");
    assert!(i64s(mm, "rx_bytes")[..3].iter().all(|&b| b == 150_000));
}

#[test]
fn conservation_with_drops_on_a_chain_and_the_same_run_with_an_explicit_tree() {
    let (out, live, late) = run_with_live(CHAIN);
    let fl = table(&out, "flows");
    let gen = i64s(fl, "gen_frames");
    let copies = i64s(fl, "replicated_frames");
    let rx = i64s(fl, "rx_frames");
    let drops = i64s(fl, "dropped_frames");
    let rl = i64s(fl, "rl_dropped_frames");
    let nic = i64s(fl, "nic_dropped_frames");
    let infl = i64s(fl, "in_flight_frames");
    for i in 0..3 {
        assert_eq!(
            gen[i] + copies[i],
            rx[i] + drops[i] + rl[i] + nic[i] + infl[i],
            "flow {i}"
        );
    }
    assert_eq!(infl.iter().sum::<i64>(), (live + late) as i64);
    assert!(drops[0] + drops[1] > 0, "the chain is congested: {drops:?}");
    assert_eq!(copies[2], 0, "unicast flows are not replicated");
    // switch drops = per-port drops
    let pd: i64 = i64s(table(&out, "ports"), "drop_frames").iter().sum();
    assert_eq!(pd, drops.iter().sum::<i64>() + nic.iter().sum::<i64>());
    // the explicit forwarding entries of the same tree (sw2->sw1 serves mc2 only: a frame never
    // leaves by its reception port) give the same run
    let i = CHAIN.find("[[groups]]").unwrap();
    let j = CHAIN.find("[[flows]]").unwrap();
    let explicit = format!("{}{}{}", &CHAIN[..i], EXPLICIT_TREE, &CHAIN[j..]);
    let out2 = run(&explicit, &[], None);
    assert_eq!(dump(&out), dump(&out2));
}

#[test]
fn both_cps_of_a_star_send_under_standard_feedback_and_fewer_cnms_under_representative() {
    let text = STAR
        .replace("buffer = \"infinite\"", "buffer = \"80frames\"")
        .replace("stop = \"30ms\"", "")
        .replace("rate = \"300Mbps\"", "rate = \"700Mbps\"")
        .replace("rate = \"200Mbps\"", "rate = \"500Mbps\"")
        .replace("[metrics]", "[cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"20KB\"\n[cc.qcn.rp]\nstart_active = true\n\n[metrics]");
    let std = run(&text, &["cc.qcn.multicast_feedback=standard"], None);
    let rep = run(&text, &["cc.qcn.multicast_feedback=representative"], None);
    let cnm_at = |out: &RunOutput, port: &str| {
        let p = table(out, "ports");
        i64s(p, "cnm_sent")[row_of(strs(p, "port"), port)]
    };
    for port in ["sw->r1", "sw->r2"] {
        assert!(cnm_at(&std, port) > 0, "standard: {port} sends CNMs");
    }
    let total = |out: &RunOutput| col_i(out, "ports", "cnm_sent").iter().sum::<i64>();
    assert!(
        total(&rep) < total(&std),
        "representative feedback sends fewer CNMs ({} vs {})",
        total(&rep),
        total(&std)
    );
    // every CNM received was sent by a CP and decreased a multicast RP
    let fl = table(&std, "flows");
    assert!(i64s(fl, "cnm_received").iter().sum::<i64>() <= total(&std));
    for out in [&std, &rep] {
        for m in [
            "mc_feedback_rate",
            "mc_loss_rate",
            "mc_avg_cr",
            "mc_queue_mean",
            "mc_queue_std",
            "mc_jain_throughput",
            "mc_jain_cr",
            "mc_cr_std",
        ] {
            let v = summary_value(out, m, "").unwrap_or_else(|| panic!("summary has {m}"));
            assert!(v.is_finite(), "{m} = {v}");
        }
    }
    let fb = summary_value(&std, "mc_feedback_rate", "").unwrap();
    assert!(fb > 0.0 && fb < 100.0);
}

#[test]
fn pause_makes_a_multicast_star_lossless_and_blocks_the_fast_member() {
    // Flow a (600 Mb/s) to r1, r2 and s2; sw->r1 is served at 200 Mb/s. Without flow control
    // the copies to r1 drop and the others get everything; with 802.3x PAUSE on the egress
    // watermark the switch pauses s1, nothing is dropped in the switch, and every member
    // (not just r1) receives at about r1's rate: head-of-line blocking.
    let text = STAR
        .replace("buffer = \"infinite\"", "buffer = \"100KB\"")
        .replace("rate = \"300Mbps\"", "rate = \"600Mbps\"")
        .replace("rate = \"200Mbps\"", "rate = \"1Mbps\"")
        .replace(
            "[metrics]",
            "[[schedule]]\nat = \"0s\"\nport = \"sw->r1\"\nrate = \"200Mbps\"\n\n\
             [flow_control]\nmode = \"pause\"\nwatermark = \"egress\"\nxoff = \"30KB\"\nxon = \"20KB\"\n\n[metrics]",
        );
    let member_rx = |out: &RunOutput, member: &str| {
        let mm = table(out, "multicast_members");
        let (f, m) = (strs(mm, "flow"), strs(mm, "member"));
        let k = (0..mm.rows())
            .find(|&k| f[k] == "a" && m[k] == member)
            .unwrap();
        i64s(mm, "rx_bytes")[k] as f64
    };
    let off = run(&text, &["flow_control.mode=none"], None);
    let (out, live, late) = run_with_live(&text);
    let drops = |o: &RunOutput| col_i(o, "flows", "dropped_frames").iter().sum::<i64>();
    assert!(drops(&off) > 500, "without PAUSE r1's queue drops");
    assert_eq!(drops(&out), 0, "PAUSE: no switch drops");
    let ports = table(&out, "ports");
    let pause_sent = i64s(ports, "pause_sent")[row_of(strs(ports, "port"), "sw->s1")];
    assert!(pause_sent > 0, "the switch paused s1");
    // without PAUSE r2 gets the full 600 Mb/s for 30 ms; with it, about what r1 gets
    let (r1, r2) = (member_rx(&out, "r1"), member_rx(&out, "r2"));
    assert!(member_rx(&off, "r2") > 0.95 * 600e6 / 8.0 * 0.030);
    assert!(
        (r2 - r1).abs() < 0.1 * r1,
        "r1 {r1} r2 {r2}: blocked together"
    );
    assert!(
        r2 < 0.5 * member_rx(&off, "r2"),
        "r2 {r2} throttled by r1's bottleneck"
    );
    // every copy is accounted for
    let fl = table(&out, "flows");
    let g = i64s(fl, "gen_frames");
    let c = i64s(fl, "replicated_frames");
    let lhs: i64 = (0..2).map(|i| g[i] + c[i]).sum();
    let rhs: i64 = [
        "rx_frames",
        "dropped_frames",
        "rl_dropped_frames",
        "nic_dropped_frames",
        "in_flight_frames",
    ]
    .iter()
    .map(|col| i64s(fl, col).iter().sum::<i64>())
    .sum();
    assert_eq!(lhs, rhs);
    assert_eq!(
        i64s(fl, "in_flight_frames").iter().sum::<i64>(),
        (live + late) as i64
    );
}

/// The shipped `scenarios/multicast-star.toml`.
fn shipped_star() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/multicast-star.toml"
    ))
    .unwrap()
}

#[test]
fn fb_hat_hold_lets_the_representative_scheme_find_its_cp_again() {
    // multicast-star, representative feedback, Qeq 25 frames. As specified, F̂b only grows (it
    // restarts at 63, which the settled queues never reach): the CPs fall silent, the sources
    // return to line rate and a third of the copies are lost. Forgetting F̂b 2 ms after the last
    // CNM restores the control: no loss, queues near Qeq.
    let text = shipped_star();
    let v = "meta.variant=representative-qeq25";
    let literal = run(&text, &[v], None);
    let held = run(&text, &[v, "cc.qcn.multicast_fbhat_hold=2ms"], None);
    let loss = |o: &RunOutput| summary_value(o, "mc_loss_rate", "").unwrap();
    assert!(loss(&literal) > 20.0, "literal loss {}", loss(&literal));
    assert!(loss(&held) < 1.0, "held loss {}", loss(&held));
    let q = table(&held, "ports");
    let (names, mean) = (strs(q, "port"), f64s(q, "mean_qlen_bytes"));
    for port in ["sw->R1", "sw->R2"] {
        let m = mean[row_of(names, port)] / 1500.0;
        assert!(
            (15.0..35.0).contains(&m),
            "{port}: mean queue {m} frames, Qeq 25"
        );
    }
}

#[test]
fn study_cp_readings_let_the_representative_scheme_keep_control() {
    // multicast-star, representative feedback (docs/models/multicast.md, "Readings of the
    // study"). With the 802.1Q quantiser no CP reaches 63 at Qeq 25, F̂b never restarts and a
    // third of the frames is lost; counting |Fb| in frames ("-unitq") lets a CP reach 63 and
    // keeps the loss near 0. At Qeq 75 only all three readings ("-studycp") keep control.
    let text = shipped_star();
    let ev = "metrics.events=[\"cnm_sent\"]";
    let loss = |o: &RunOutput| summary_value(o, "mc_loss_rate", "").unwrap();
    let max_fb = |o: &RunOutput| {
        let e = table(o, "events");
        let (kind, val) = (strs(e, "kind"), i64s(e, "value"));
        (0..e.rows())
            .filter(|&k| kind[k] == "cnm_sent")
            .map(|k| val[k])
            .max()
            .unwrap_or(0)
    };
    let lit = run(&text, &["meta.variant=representative-qeq25", ev], None);
    let unitq = run(
        &text,
        &["meta.variant=representative-qeq25-unitq", ev],
        None,
    );
    assert!(loss(&lit) > 20.0, "literal loss {}", loss(&lit));
    assert!(max_fb(&lit) < 63, "literal max qntzFb {}", max_fb(&lit));
    assert!(loss(&unitq) < 1.0, "unit quantiser loss {}", loss(&unitq));
    assert_eq!(max_fb(&unitq), 63);
    let lit75 = run(&text, &["meta.variant=representative-qeq75"], None);
    let study75 = run(&text, &["meta.variant=representative-qeq75-studycp"], None);
    assert!(loss(&lit75) > 20.0, "literal loss {}", loss(&lit75));
    assert!(loss(&study75) < 1.0, "study CP loss {}", loss(&study75));
}

#[test]
fn cp_counters_of_the_readings_add_up() {
    // multicast-star, Qeq 25 frames (docs/models/multicast.md, "Identifying the study's CP on its
    // control"): per CP port in the window, arrivals = enqueued + dropped; CNMs <= samples with
    // Fb < 0 <= samples <= enqueued; the CNMs of the CPs add up to the feedback rate's numerator
    // and to what the sources received; with a sample at every frame, samples = enqueued. The
    // representative scheme counts only the Fb < 0 samples at which the CP is representative.
    let text = shipped_star();
    let v = |o: &RunOutput, m: &str, port: &str| summary_value(o, m, &format!("{port}: ")).unwrap();
    for (over, every) in [
        (vec!["meta.variant=standard-qeq25"], false),
        (
            vec![
                "meta.variant=standard-qeq25",
                "cc.qcn.cp.sampling=every_frame",
            ],
            true,
        ),
        (
            vec![
                "meta.variant=representative-qeq25",
                "cc.qcn.cp.sampling=every_frame",
            ],
            true,
        ),
    ] {
        let out = run(&text, &over, None);
        let (mut cnm, mut sent, mut rx) = (0.0, 0.0, 0.0);
        for port in ["sw->R1", "sw->R2"] {
            let enq = v(&out, "mc_cp_enqueued", port);
            let drop = v(&out, "mc_cp_dropped", port);
            assert_eq!(
                v(&out, "mc_cp_arrivals", port),
                enq + drop,
                "{over:?} {port}"
            );
            let (s, neg, c) = (
                v(&out, "mc_cp_samples", port),
                v(&out, "mc_cp_fb_negative", port),
                v(&out, "mc_cp_cnm", port),
            );
            assert!(
                c <= neg && neg <= s && s <= enq && enq > 1000.0,
                "{over:?} {port}: {c} {neg} {s} {enq}"
            );
            assert_eq!(
                s == enq,
                every,
                "{over:?} {port}: samples {s}, enqueued {enq}"
            );
            cnm += c;
        }
        for f in ["S1", "S2", "S3", "S4", "S5", "S6"] {
            sent += v(&out, "mc_rp_sent", f);
            rx += v(&out, "mc_rp_cnm_received", f);
        }
        let rate = summary_value(&out, "mc_feedback_rate", "").unwrap();
        assert!((rate - 100.0 * cnm / sent).abs() < 1e-9, "{over:?}");
        // CNMs in flight at the edges of the window: a few at most
        assert!(
            (rx - cnm).abs() <= 4.0,
            "{over:?}: received {rx}, sent {cnm}"
        );
        // the |Fb| trace: every traced CP, at every queue sample, qntzFb consistent with Fb
        let tr = table(&out, "multicast_cp_fb");
        let (fb, q) = (f64s(tr, "fb_bytes"), i64s(tr, "qntz_fb"));
        assert_eq!(tr.rows(), 2 * 20_001, "{over:?}");
        assert!((0..tr.rows()).all(|k| (q[k] > 0) == (fb[k] <= -(37_500.0 * 5.0 / 63.0))));
    }
}

#[test]
fn feedback_option_does_not_touch_unicast_flows() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/two-src-hotspot.toml"
    ))
    .unwrap();
    let a = run(&text, &["cc.qcn.multicast_feedback=standard"], None);
    let b = run(&text, &["cc.qcn.multicast_feedback=representative"], None);
    assert_eq!(dump(&a), dump(&b));
    assert!(
        a.table("multicast_members").is_none(),
        "no groups, no multicast table"
    );
}

#[test]
fn statistics_window_metrics_follow_their_definitions() {
    // No QCN, infinite buffers: no CNM, no loss; every source sends its offered rate.
    let out = run(STAR, &[], None);
    assert_eq!(summary_value(&out, "mc_feedback_rate", ""), Some(0.0));
    assert_eq!(summary_value(&out, "mc_loss_rate", ""), Some(0.0));
    let a = summary_value(&out, "mc_source_throughput", "a (group g)").unwrap();
    // CBR 300 Mb/s over 10..40 ms, stopping at 30 ms: 20 ms of 30 ms sent
    assert!((a - 200e6).abs() < 1e6, "a sent {a}");
    // the queue at sw->r1 is sampled every 100 us over [10 ms, 40 ms): 300 samples
    assert!(table(&out, "summary").rows() > 0);
    let s = table(&out, "summary");
    let d = strs(s, "detail");
    assert!(
        d.iter().any(|x| x.starts_with("sw->r1, 300 samples")),
        "{d:?}"
    );
}

#[test]
fn multicast_runs_are_deterministic_and_lazy_generation_is_exact() {
    let a = run(CHAIN, &[], Some(9));
    let b = run(CHAIN, &[], Some(9));
    assert_eq!(dump(&a), dump(&b));
    let c = run(CHAIN, &[], Some(10));
    assert_ne!(dump(&a), dump(&c), "the seed matters (CP and RP jitter)");
    let (lazy, l1, t1) = run_with_live_opts(CHAIN, true);
    let (eager, l2, t2) = run_with_live_opts(CHAIN, false);
    assert_eq!(dump(&lazy), dump(&eager));
    assert_eq!((l1, t1), (l2, t2));
}

#[test]
fn shipped_multicast_scenarios_run_short() {
    for name in ["multicast-star", "multicast-multilink"] {
        let path = format!("{}/../../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        for fb in ["standard", "representative"] {
            let (out, live, late) = {
                let sc = qcnsim_core::scenario::load(
                    &text,
                    &[
                        format!("cc.qcn.multicast_feedback={fb}"),
                        "meta.duration=60ms".into(),
                        "analysis.stats_from=20ms".into(),
                    ],
                )
                .unwrap();
                let mut sim = qcnsim_core::sim::Sim::new(&sc, sc.seed);
                sim.run(&mut |_| true).unwrap();
                let (l, t) = (sim.live_data_frames(), sim.late_data_frames());
                (sim.into_output(sc.seed, 0.0), l, t)
            };
            let fl = table(&out, "flows");
            assert_eq!(
                i64s(fl, "in_flight_frames").iter().sum::<i64>(),
                (live + late) as i64,
                "{name} {fb}"
            );
            assert!(
                summary_value(&out, "mc_jain_throughput", "").is_some(),
                "{name} {fb}"
            );
        }
    }
}
