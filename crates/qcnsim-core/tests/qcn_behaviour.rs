//! Behaviour of QCN on real runs: the reaction point slows down to the bottleneck's service rate,
//! the CP keeps the queue around Qeq, congestion is signalled only by configured CPs, the RP
//! timer recovers a source that stopped sending, and the summary reports recovery after a
//! hotspot. Bounds are derived from the model (see the comments), not copied from a run.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

const MS: i64 = 1_000_000_000;

/// src --10G-- sw1 --10G-- sw2 --10G-- dst. One 10 Gb/s CBR source (1500 B). The egress
/// sw1->sw2 is served at 1 Gb/s from HOT_START to HOT_END (a "hotspot"). Buffers 300 KB,
/// Qeq 26 KB (the default), CP only at sw1->sw2.
fn hotspot(hot_start_ms: u64, hot_end_ms: u64, duration_ms: u64, extra: &str) -> String {
    format!(
        r#"
[meta]
name = "hotspot"
duration = "{duration_ms}ms"
seed = 4

[defaults]
link_rate = "10Gbps"
link_delay = "1us"
switch_latency = "300ns"
buffer = "300KB"

[[hosts]]
name = "src"
[[hosts]]
name = "dst"
[[switches]]
name = "sw1"
[[switches]]
name = "sw2"
[[links]]
between = ["src", "sw1"]
[[links]]
between = ["sw1", "sw2"]
[[links]]
between = ["sw2", "dst"]

[[schedule]]
at = "{hot_start_ms}ms"
port = "sw1->sw2"
rate = "1Gbps"
[[schedule]]
at = "{hot_end_ms}ms"
port = "sw1->sw2"
rate = "10Gbps"

[[flows]]
name = "f0"
src = "src"
dst = "dst"
rate = "10Gbps"
frame = "1500B"

[cc]
mode = "qcn"
[cc.qcn]
cp_ports = ["sw1->sw2"]
[cc.qcn.cp]
q_eq = "26KB"

[metrics]
throughput_bin = "1ms"
throughput_ports = ["sw1->sw2", "src->sw1"]
queue_interval = "50us"
queue_ports = ["sw1->sw2", "sw2->dst"]
rate_interval = "100us"

[analysis]
bottleneck = "sw1->sw2"
{extra}
"#
    )
}

fn drops_at(out: &RunOutput, port: &str) -> i64 {
    let p = table(out, "ports");
    i64s(p, "drop_frames")[row_of(strs(p, "port"), port)]
}

fn cnms_at(out: &RunOutput, port: &str) -> i64 {
    let p = table(out, "ports");
    i64s(p, "cnm_sent")[row_of(strs(p, "port"), port)]
}

/// (t, cr) samples of flow f0.
fn cr_samples(out: &RunOutput) -> Vec<(i64, f64)> {
    let r = table(out, "rp_rates");
    let t = i64s(r, "t_ps");
    let cr = f64s(r, "cr_bps");
    let f = names(r, "flow");
    (0..r.rows())
        .filter(|&k| f[k] == "f0")
        .map(|k| (t[k], cr[k]))
        .collect()
}

/// Mean of queue samples of `port` with t in [t0, t1).
fn mean_queue(out: &RunOutput, port: &str, t0: i64, t1: i64) -> f64 {
    let q = table(out, "queue_samples");
    let p = strs(q, "port");
    let t = i64s(q, "t_ps");
    let b = i64s(q, "qlen_bytes");
    let v: Vec<f64> = (0..q.rows())
        .filter(|&k| p[k] == port && t[k] >= t0 && t[k] < t1)
        .map(|k| b[k] as f64)
        .collect();
    assert!(!v.is_empty());
    v.iter().sum::<f64>() / v.len() as f64
}

fn mean_tput(out: &RunOutput, port: &str, t0: i64, t1: i64) -> f64 {
    let tp = table(out, "port_throughput");
    let p = strs(tp, "port");
    let t = i64s(tp, "t_ps");
    let r = f64s(tp, "throughput_bps");
    let v: Vec<f64> = (0..tp.rows())
        .filter(|&k| p[k] == port && t[k] >= t0 && t[k] < t1)
        .map(|k| r[k])
        .collect();
    assert!(!v.is_empty());
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn rp_slows_to_the_hotspot_rate_and_queue_stays_near_qeq() {
    // Hotspot 5..55 ms, run 60 ms. We judge the hotspot after a 10 ms transient (15..55 ms).
    let out = run(&hotspot(5, 55, 60, ""), &[], None);
    let q_eq = 26_000.0;
    let cr = cr_samples(&out);
    let before: Vec<f64> = cr
        .iter()
        .filter(|(t, _)| *t < 5 * MS)
        .map(|s| s.1)
        .collect();
    let during: Vec<f64> = cr
        .iter()
        .filter(|(t, _)| *t >= 15 * MS && *t < 55 * MS)
        .map(|s| s.1)
        .collect();
    // No congestion before the hotspot: the limiter is not in use, CR = line.
    assert!(
        before.iter().all(|&c| c == 10e9),
        "CR below line before the hotspot"
    );
    // The queue is bounded (no drops beyond the transient, see below), so the source's average
    // rate over the 40 ms must be close to the 1 Gb/s service rate; a CR averaging more than
    // 2 Gb/s would add >= 1 Gb/s * 40 ms = 5 MB to a 300 KB queue. "Well below line": < 30 %.
    let mean_cr = during.iter().sum::<f64>() / during.len() as f64;
    let max_cr = during.iter().cloned().fold(0.0, f64::max);
    assert!(
        (0.5e9..=2e9).contains(&mean_cr),
        "mean CR during the hotspot {mean_cr}"
    );
    assert!(max_cr < 3e9, "CR reached {max_cr} during the hotspot");
    // The CP feeds back Fb = -(Qoff + w*Qdelta): it pushes the rate down while Q > Qeq and
    // sends nothing (so the RP increases) while Q < Qeq. The queue therefore oscillates around
    // Qeq; its mean must lie well inside [0.2*Qeq, 5*Qeq]. Without control it would sit at the
    // 300 KB buffer (11.5 Qeq), and an over-reacting RP would leave it empty (< 0.2 Qeq).
    let mq = mean_queue(&out, "sw1->sw2", 15 * MS, 55 * MS);
    assert!(
        (0.2 * q_eq..=5.0 * q_eq).contains(&mq),
        "mean queue {mq} B during the hotspot (Qeq {q_eq})"
    );
    // A queue that rarely empties keeps the 1 Gb/s link busy: >= 90 % utilisation.
    let tput = mean_tput(&out, "sw1->sw2", 15 * MS, 55 * MS);
    assert!(
        (0.9e9..=1.0e9 + 1.0e7).contains(&tput),
        "hotspot throughput {tput}"
    );
    // CNMs were sent and reached the source, two hops back.
    let fl = table(&out, "flows");
    assert!(i64s(fl, "cnm_received")[0] > 0);
    assert!(cnms_at(&out, "sw1->sw2") >= i64s(fl, "cnm_received")[0]);
}

#[test]
fn without_qcn_the_hotspot_drops_far_more() {
    let text = hotspot(5, 55, 60, "");
    let on = run(&text, &[], None);
    let off = run(&text, &["cc.mode=\"none\""], None);
    let d_on = drops_at(&on, "sw1->sw2");
    let d_off = drops_at(&off, "sw1->sw2");
    // Without control the source keeps sending 10 Gb/s into 1 Gb/s for 50 ms: about
    // 9 Gb/s * 50 ms / 12000 bit = 37500 frames must be dropped (minus the 300 KB buffer).
    let expected_off = 9e9 * 0.050 / 12_000.0 - 300_000.0 / 1500.0;
    assert!(
        (d_off as f64) > 0.95 * expected_off && (d_off as f64) < 1.05 * expected_off,
        "drops without QCN: {d_off}, expected about {expected_off}"
    );
    assert!(
        (d_on as f64) < 0.05 * d_off as f64,
        "QCN dropped {d_on} frames vs {d_off} without"
    );
    // And without QCN the queue sits at the buffer for the whole hotspot.
    let mq = mean_queue(&off, "sw1->sw2", 15 * MS, 55 * MS);
    assert!(mq > 290_000.0, "uncontrolled queue {mq}");
    assert_eq!(table(&off, "rp_rates").rows(), 0);
    assert_eq!(cnms_at(&off, "sw1->sw2"), 0);
}

#[test]
fn cnms_come_only_from_configured_cp_ports() {
    // Make sw2->dst the bottleneck instead (the sw1->sw2 schedule is moved off by overriding
    // its port), and vary where the CP is.
    let text = hotspot(2, 20, 20, "");
    let ov_bottleneck = [
        "schedule.0.port=\"sw2->dst\"",
        "schedule.1.port=\"sw2->dst\"",
        "analysis.bottleneck=\"sw2->dst\"",
    ];
    // (a) CP only at sw1->sw2, which is not congested: no CNM at all, the bottleneck drops.
    let a = run(&text, &ov_bottleneck, None);
    assert_eq!(cnms_at(&a, "sw1->sw2"), 0, "uncongested CP sent CNMs");
    assert_eq!(cnms_at(&a, "sw2->dst"), 0, "non-CP port sent CNMs");
    assert!(drops_at(&a, "sw2->dst") > 1000);
    assert_eq!(table(&a, "events").rows() as i64, drops_at(&a, "sw2->dst"));
    // (b) CP at the bottleneck: every CNM event names it, and the source hears them.
    let mut ov = ov_bottleneck.to_vec();
    ov.push("cc.qcn.cp_ports=[\"sw2->dst\"]");
    let b = run(&text, &ov, None);
    let ev = table(&b, "events");
    let kinds = strs(ev, "kind");
    let nodes = strs(ev, "node");
    let sent: Vec<&String> = (0..ev.rows())
        .filter(|&k| kinds[k] == "cnm_sent")
        .map(|k| &nodes[k])
        .collect();
    assert!(
        sent.len() >= 3,
        "only {} CNMs from the congested CP",
        sent.len()
    );
    assert!(
        sent.iter().all(|n| *n == "sw2->dst"),
        "CNM from another port"
    );
    assert_eq!(cnms_at(&b, "sw1->sw2"), 0);
    let received = (0..ev.rows())
        .filter(|&k| kinds[k] == "cnm_received")
        .count();
    assert!(received > 0 && received <= sent.len());
    assert!(
        (0..ev.rows())
            .filter(|&k| kinds[k] == "cnm_received")
            .all(|k| nodes[k] == "src"),
        "CNM received by a host other than the source"
    );
    // (c) "switches": both switch egress ports along the path run a CP, but only the congested
    // one (Q above Qeq) ever signals.
    let mut ov = ov_bottleneck.to_vec();
    ov.push("cc.qcn.cp_ports=\"switches\"");
    let c = run(&text, &ov, None);
    assert!(cnms_at(&c, "sw2->dst") >= 3);
    assert_eq!(cnms_at(&c, "sw1->sw2"), 0);
}

/// Hotspot from 2 ms for the rest of the run; the source stops offering traffic at 10 ms.
/// Large R_AI and a short timer so that timer-only recovery fits in a short run.
fn idle_source(timer: &str) -> String {
    hotspot(
        2,
        80,
        80,
        &format!("[cc.qcn.rp]\ntimer = \"{timer}\"\nr_ai = \"500Mbps\"\njitter = 0.0\n"),
    )
    .replace(
        "frame = \"1500B\"\n",
        "frame = \"1500B\"\nstop = \"10ms\"\n",
    )
}

#[test]
fn timer_alone_brings_an_idle_source_back_to_line_rate() {
    let out = run(&idle_source("1ms"), &[], None);
    let cr = cr_samples(&out);
    let fl = table(&out, "flows");
    // CBR at 10 Gb/s from 0 to 10 ms: frames k*1.2us < 10 ms -> 8334 frames; none afterwards.
    assert_eq!(i64s(fl, "gen_frames")[0], 8334);
    // The source stops offering at 10 ms, but its rate-limiter queue still drains at CR for a
    // while (and those frames may still draw CNMs). Find the last instant a frame left the NIC
    // (end of the last non-empty throughput bin of src->sw1).
    let tp = table(&out, "port_throughput");
    let (tp_p, tp_t, tp_b) = (strs(tp, "port"), i64s(tp, "t_ps"), i64s(tp, "bytes"));
    let last_tx = (0..tp.rows())
        .filter(|&k| tp_p[k] == "src->sw1" && tp_b[k] > 0)
        .map(|k| tp_t[k] + MS)
        .max()
        .unwrap();
    assert!(
        (10 * MS..30 * MS).contains(&last_tx),
        "last frame sent by {last_tx}"
    );
    let ev = table(&out, "events");
    let (kinds, t) = (strs(ev, "kind"), i64s(ev, "t_ps"));
    let last_cnm = (0..ev.rows())
        .filter(|&k| kinds[k] == "cnm_received")
        .map(|k| t[k])
        .max()
        .unwrap();
    assert!(
        last_cnm <= last_tx,
        "CNM at {last_cnm} after the last frame {last_tx}"
    );
    let cr_idle = cr.iter().find(|(t, _)| *t >= last_tx).unwrap().1;
    assert!(
        cr_idle < 3e9,
        "CR {cr_idle} once idle: the hotspot did not throttle"
    );
    // From then on no frame is sent: the byte counter is frozen, only the timer increases the
    // rate. Per timer cycle CR <- (CR+TR)/2; after FRT=5 cycles TR grows by R_AI = 0.5 Gb/s per
    // cycle (0.5 ms after FRT). From < 3 Gb/s, line (10 Gb/s) is reached within about
    // 5*1 ms + 14*0.5 ms + a few halvings, i.e. well within 40 ms.
    let last = *cr.last().unwrap();
    assert!(last.0 >= 79 * MS);
    let reached = cr
        .iter()
        .find(|(t, c)| *t > last_tx && *c >= 0.99 * 10e9)
        .map(|s| s.0);
    assert!(
        reached.is_some_and(|t| t < last_tx + 40 * MS),
        "CR did not come back to line by timer: reached at {reached:?}, last {last:?}"
    );
    // Nothing was sent while it recovered: the recovery is not the byte counter's doing.
    assert!((0..tp.rows()).all(|k| tp_p[k] != "src->sw1" || tp_t[k] < last_tx || tp_b[k] == 0));

    // Control: with a timer far longer than the run, CR must stay where the CNMs left it.
    let ctl = run(&idle_source("1s"), &[], None);
    let cr_ctl = cr_samples(&ctl);
    let end_ctl = cr_ctl.last().unwrap().1;
    assert!(
        end_ctl < 3e9,
        "CR rose to {end_ctl} without any timer event"
    );
}

#[test]
fn summary_reports_recovery_after_the_hotspot() {
    // Hotspot 5..30 ms, run 60 ms, bins of 1 ms.
    let text = hotspot(
        5,
        30,
        60,
        "[cc.qcn.rp]\ntimer = \"1ms\"\nr_ai = \"500Mbps\"\n",
    );
    let off = run(&text, &["cc.mode=\"none\""], None);
    // Without QCN the source never slowed down: the first bin after the end already runs at
    // 10 Gb/s (>= 0.9 of the restored rate), so recovery is exactly one bin.
    let rt_off = summary_value(&off, "recovery_time", "sw1->sw2").expect("recovery_time row");
    assert_eq!(rt_off, 1e-3, "recovery without QCN {rt_off}");
    // With QCN the RP must climb back from ~1 Gb/s, which takes several byte-counter/timer
    // cycles: strictly longer than one bin, but it does recover within the 30 ms left.
    let on = run(&text, &[], None);
    let rt_on = summary_value(&on, "recovery_time", "sw1->sw2").expect("recovery_time row");
    assert!(
        rt_on.is_finite() && rt_on > 1e-3 && rt_on < 30e-3,
        "recovery with QCN {rt_on}"
    );
    // The recovery time is a whole number of bins.
    let bins = rt_on / 1e-3;
    assert!(
        (bins - bins.round()).abs() < 1e-9,
        "{rt_on} is not a multiple of 1 ms"
    );
    // Mean throughput of the hotspot period is reported near the 1 Gb/s service rate.
    let mt = summary_value(&on, "mean_throughput", "service rate 1Gbps").expect("mean row");
    assert!(
        mt > 0.85e9 && mt <= 1.0e9 + 1e7,
        "hotspot mean throughput {mt}"
    );
}

/// `cc.qcn.cp.samples`: the CP counts the frames enqueued (802.1Q, the default) or every
/// arrival, also a frame discarded at its full queue (`arrivals`). Without discards the two
/// readings are the same run; with a queue that overflows (a 30 KB buffer, 10 Gb/s into the
/// 1 Gb/s hotspot) the arrivals reading counts the discarded bytes toward its samples and so
/// sends more CNMs, and the rate limiter sees them.
#[test]
fn cp_counts_discarded_frames_only_when_it_samples_arrivals() {
    let text = hotspot(5, 15, 20, "");
    // (buffer, discards expected, arrivals send more CNMs)
    let cases: &[(&str, bool)] = &[("10MB", false), ("30KB", true)];
    for &(buffer, discards) in cases {
        let buf = format!("defaults.buffer={buffer}");
        let enq = run(&text, &[&buf, "cc.qcn.cp.samples=enqueued"], None);
        let arr = run(&text, &[&buf, "cc.qcn.cp.samples=arrivals"], None);
        let def = run(&text, &[&buf], None);
        assert!(
            tables_text(&def) == tables_text(&enq),
            "{buffer}: the default is the enqueued reading"
        );
        assert_eq!(drops_at(&enq, "sw1->sw2") > 0, discards, "{buffer}");
        if discards {
            assert!(
                cnms_at(&arr, "sw1->sw2") > cnms_at(&enq, "sw1->sw2"),
                "{buffer}: arrivals {} CNMs, enqueued {}",
                cnms_at(&arr, "sw1->sw2"),
                cnms_at(&enq, "sw1->sw2")
            );
        } else {
            assert!(
                tables_text(&arr) == tables_text(&enq),
                "{buffer}: nothing discarded, so nothing differs"
            );
            assert!(cnms_at(&enq, "sw1->sw2") > 0);
        }
    }
}
