//! HPCC on the ACK/window transport (docs/models/hpcc.md, "The packet model"): at one
//! bottleneck a long flow joined by others keeps the link's utilisation near eta and its queue
//! near zero (scenarios/hpcc-micro.toml); a 16:1 incast with PFC keeps its queue and its pauses
//! to the first RTT's burst, unlike DCQCN, and every flow finishes (scenarios/hpcc-incast.toml);
//! runs are deterministic; the window never exceeds W_init; a path longer than the INT records
//! is refused.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

const B: f64 = 100e9;
/// T = 2 x (1 us + 1 us) + two 1000 B frames at 100 Gb/s (scenarios' "global" base RTT).
const T_PS: i64 = 4_160_000;
/// W_init = B T, bytes.
const W_INIT: f64 = B / 8.0 * 4.16e-6;
const ETA: f64 = 0.95;

fn scen(n: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/../../scenarios/{n}.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn variant(n: &str, v: &str, more: &[&str]) -> RunOutput {
    let ov = format!("meta.variant={v}");
    let mut all = vec![ov.as_str()];
    all.extend_from_slice(more);
    run(&scen(n), &all, None)
}

/// The queue samples (t, bytes) of the bottleneck.
fn queue(out: &RunOutput) -> (Vec<i64>, Vec<i64>) {
    let q = table(out, "queue_samples");
    (i64s(q, "t_ps").to_vec(), i64s(q, "qlen_bytes").to_vec())
}

#[test]
fn a_long_flow_joined_by_three_settles_at_eta_with_a_near_empty_queue() {
    let out = variant("hpcc-micro", "per-ack", &[]);
    let flows = table(&out, "flows");
    assert!(i64s(flows, "hpcc_base_rtt_ps").iter().all(|&t| t == T_PS));
    // utilisation after the last join (1.5 ms) has settled: [2 ms, 3 ms)
    let tp = table(&out, "port_throughput");
    let (t, b) = (i64s(tp, "t_ps"), f64s(tp, "throughput_bps"));
    let late: Vec<f64> = t
        .iter()
        .zip(b)
        .filter(|(&t, _)| t >= 2_000_000_000)
        .map(|(_, &b)| b / B)
        .collect();
    assert!(late.len() >= 18, "{}", late.len());
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    // U = txRate/B + qlen/(B T) is held at eta; the additive increase adds at most
    // N W_AI / W_init = 4 (1 - eta) / 125 per RTT on top (measured: 0.950)
    assert!(
        mean > ETA - 0.01 && mean < ETA + 4.0 * (1.0 - ETA) / 125.0 + 0.01,
        "{mean}"
    );
    assert!(late.iter().all(|&u| (u - ETA).abs() < 0.03), "{late:?}");
    // the queue: U = eta with txRate/B near eta leaves qlen/(B T) within the headroom
    // 1 - eta (measured: mean 663 B over [2, 3) ms)
    let (qt, q) = queue(&out);
    let tail: Vec<i64> = qt
        .iter()
        .zip(&q)
        .filter(|(&t, _)| t >= 2_000_000_000)
        .map(|(_, &q)| q)
        .collect();
    let qmean = tail.iter().sum::<i64>() as f64 / tail.len() as f64;
    assert!(qmean < (1.0 - ETA) * W_INIT, "mean queue {qmean}");
    // a new flow starts at W_init (line rate) while the others hold about eta B T in flight:
    // the queue a join makes is at most (1 + eta) W_init (measured: 50 KB, 0.96 W_init)
    let qmax = *q.iter().max().unwrap() as f64;
    assert!(qmax > 0.5 * W_INIT && qmax < (1.0 + ETA) * W_INIT, "{qmax}");
    // every flow got a share once it joined, and was paced below the line rate at the end
    assert!(i64s(flows, "rx_bytes").iter().all(|&b| b > 1_000_000));
    assert!(f64s(flows, "hpcc_rate_bps").iter().all(|&r| r < B));
    assert!(f64s(flows, "hpcc_u")
        .iter()
        .all(|&u| (u - ETA).abs() < 0.05));
}

#[test]
fn per_ack_reaction_keeps_a_smaller_queue_than_per_rtt() {
    // Algorithm 1 reacts to every ACK with Wc moving once per RTT; fast_react = false reacts
    // once per RTT: it answers a join later (proto/hpcc.rs's fluid check: the queue drains in
    // about 0.6 of the time per ACK)
    let mean = |o: &RunOutput| {
        let q = queue(o).1;
        q.iter().sum::<i64>() as f64 / q.len() as f64
    };
    let ack = mean(&variant("hpcc-micro", "per-ack", &[]));
    let rtt = mean(&variant("hpcc-micro", "per-rtt", &[]));
    assert!(ack < rtt, "per-ACK {ack} per-RTT {rtt}");
}

/// The window never exceeds W_init: R = W / T never exceeds the line rate at any sample, and
/// the windows at the end are within [min_rate T, W_init].
#[test]
fn the_window_never_exceeds_w_init() {
    for (n, v) in [("hpcc-micro", "per-ack"), ("hpcc-incast", "hpcc")] {
        let out = variant(n, v, &[]);
        let r = f64s(table(&out, "rp_rates"), "cr_bps");
        assert!(!r.is_empty());
        assert!(r.iter().all(|r| (1e9..=B).contains(r)), "{n}");
        let flows = table(&out, "flows");
        let w_min = 1e9 / 8.0 * 4.16e-6;
        for &w in i64s(flows, "window_bytes") {
            assert!(w as f64 <= W_INIT && w as f64 >= w_min - 1.0, "{n}: {w}");
        }
        for &w in f64s(flows, "hpcc_wc_bytes") {
            assert!(w <= W_INIT && w >= w_min, "{n}: {w}");
        }
    }
}

#[test]
fn an_incast_with_pfc_pauses_only_in_the_first_rtts_unlike_dcqcn() {
    let h = variant("hpcc-incast", "hpcc", &[]);
    let d = variant("hpcc-incast", "dcqcn", &[]);
    // every flow finishes (drain mode), HPCC's frames carrying their 42 B of INT
    for (o, per_frame) in [(&h, 1042), (&d, 1000)] {
        let f = table(o, "flows");
        assert!(i64s(f, "fct_ps").iter().all(|&t| t > 0));
        assert!(i64s(f, "rx_bytes").iter().all(|&b| b == 500 * per_frame));
    }
    // the first RTT's burst is bounded by the windows: 16 W_init (proto/hpcc.rs: the start-up
    // peak is N W_init less what is in flight; measured 815 KB)
    let (qt, q) = queue(&h);
    let qmax = *q.iter().max().unwrap() as f64;
    assert!(qmax <= 16.0 * W_INIT, "{qmax}");
    // ...and drains: from 40 RTTs after the start the queue stays below one W_init
    let start = 100_000_000;
    let late = qt
        .iter()
        .zip(&q)
        .filter(|(&t, _)| t > start + 40 * T_PS)
        .map(|(_, &q)| q)
        .max()
        .unwrap();
    assert!((late as f64) < W_INIT, "{late}");
    // PFC: HPCC's pauses come from the start-up burst only (each input port paused at most
    // once, within the first RTTs), DCQCN's go on
    let pauses = |o: &RunOutput| {
        let e = table(o, "pause_events");
        let ev = match &e.columns.iter().find(|c| c.name == "event").unwrap().data {
            qcnsim_core::api::ColumnData::Str(v) => v.clone(),
            _ => unreachable!(),
        };
        let t = i64s(e, "t_ps").to_vec();
        t.into_iter()
            .zip(ev)
            .filter(|(_, e)| e == "pause")
            .map(|(t, _)| t)
            .collect::<Vec<i64>>()
    };
    let (ph, pd) = (pauses(&h), pauses(&d));
    assert!(ph.len() <= 16, "{}", ph.len());
    assert!(ph.iter().all(|&t| t < start + 10 * T_PS), "{ph:?}");
    assert!(pd.len() > ph.len(), "DCQCN {} HPCC {}", pd.len(), ph.len());
    // HPCC drains the incast sooner
    let last = |o: &RunOutput| *i64s(table(o, "flows"), "fct_ps").iter().max().unwrap();
    assert!(last(&h) < last(&d), "{} {}", last(&h), last(&d));
}

#[test]
fn same_seed_same_tables() {
    let a = variant("hpcc-incast", "hpcc", &[]);
    let b = variant("hpcc-incast", "hpcc", &[]);
    assert!(tables_text(&a) == tables_text(&b));
    let a = variant(
        "hpcc-micro",
        "per-ack",
        &["meta.duration=1600us", "analysis.stats_from=1ms"],
    );
    let b = variant(
        "hpcc-micro",
        "per-ack",
        &["meta.duration=1600us", "analysis.stats_from=1ms"],
    );
    assert!(tables_text(&a) == tables_text(&b));
}

#[test]
fn bad_hpcc_settings_are_refused_naming_the_field() {
    let text = scen("hpcc-micro");
    let err = |ov: &[&str]| {
        let ov: Vec<String> = ov.iter().map(|s| s.to_string()).collect();
        qcnsim_core::scenario::load(&text, &ov)
            .expect_err("refused")
            .to_string()
    };
    let e = err(&["cc.hpcc.min_rate=200Gbps"]);
    assert!(
        e.contains("cc.hpcc.min_rate") && e.contains("line rate"),
        "{e}"
    );
    let e = err(&["flows.0.transport=udp"]);
    assert!(e.contains("cc.mode") && e.contains("long0"), "{e}");
    let e = err(&["cc.hpcc.base_rtt=soon"]);
    assert!(e.contains("cc.hpcc.base_rtt"), "{e}");
}

/// A path of more switch hops than an ACK carries INT records is refused.
#[test]
fn a_path_longer_than_the_int_records_is_refused() {
    use std::fmt::Write;
    let n = qcnsim_core::proto::ack::MAX_INT_HOPS + 1;
    let mut s = String::from(
        "[meta]\nduration = \"1ms\"\n[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n",
    );
    for k in 0..n {
        writeln!(s, "[[switches]]\nname = \"s{k}\"").unwrap();
    }
    writeln!(s, "[[links]]\nbetween = [\"a\", \"s0\"]").unwrap();
    for k in 1..n {
        writeln!(s, "[[links]]\nbetween = [\"s{}\", \"s{k}\"]", k - 1).unwrap();
    }
    writeln!(
        s,
        "[[links]]\nbetween = [\"s{}\", \"b\"]\n[[flows]]\nname = \"f\"\nsrc = \"a\"\n\
         dst = \"b\"\ntraffic = \"greedy\"\nsize = \"10KB\"\ntransport = \"gbn\"\n[cc]\nmode = \"hpcc\"",
        n - 1
    )
    .unwrap();
    let e = qcnsim_core::scenario::load(&s, &[])
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("flows.0.path") && e.contains("9 switch hops"),
        "{e}"
    );
    // one hop fewer runs
    let ok = s.replace(&format!("[[switches]]\nname = \"s{}\"\n", n - 1), "");
    let ok = ok.replace(
        &format!("[[links]]\nbetween = [\"s{}\", \"s{}\"]\n", n - 2, n - 1),
        "",
    );
    let ok = ok.replace(
        &format!("between = [\"s{}\", \"b\"]", n - 1),
        &format!("between = [\"s{}\", \"b\"]", n - 2),
    );
    let out = run(&ok, &[], None);
    assert!(i64s(table(&out, "flows"), "fct_ps")[0] > 0);
}

/// Without PFC and with a 100 KB buffer the incast's first windows overflow the bottleneck:
/// go-back-N recovers the lost frames (HPCC's state does not react to NACKs or timeouts) and
/// every flow finishes.
#[test]
fn a_lossy_incast_is_recovered_by_go_back_n() {
    let out = variant(
        "hpcc-incast",
        "hpcc",
        &["flow_control.mode=none", "defaults.buffer=100KB"],
    );
    let ports = table(&out, "ports");
    let drops: i64 = i64s(ports, "drop_frames").iter().sum();
    assert!(drops > 0, "no loss: the test does not test recovery");
    let f = table(&out, "flows");
    assert!(i64s(f, "fct_ps").iter().all(|&t| t > 0));
    let fct = table(&out, "fct");
    let retx: i64 = i64s(fct, "retransmitted_bytes").iter().sum();
    assert!(retx > 0);
}
