//! NIC-side Fb computation on real runs (the QCN hardware study, docs/models/qcn-nic-feedback.md):
//! the CP queue sends ConMes (Qlen) every `conmes_interval` bytes while it has a backlog, the
//! NIC samples them with the CP's table and reacts to its own negative Fb as to a CNM. Bounds
//! are derived from the model (see the comments), not copied from a run.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

const MS: i64 = 1_000_000_000;

/// src --10G-- sw1 --10G-- sw2 --10G-- dst, one 10 Gb/s CBR source of 1500 B frames, the
/// egress sw1->sw2 served at 1 Gb/s from 5 ms to 55 ms, run 60 ms; CP (ConMes source) only at
/// sw1->sw2; Qeq 26 KB; 300 KB buffers; NIC-side feedback.
const SCENARIO: &str = r#"
[meta]
name = "nicfb"
duration = "60ms"
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
at = "5ms"
port = "sw1->sw2"
rate = "1Gbps"
[[schedule]]
at = "55ms"
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
feedback = "nic"
[cc.qcn.cp]
q_eq = "26KB"

[metrics]
throughput_bin = "1ms"
throughput_ports = ["sw1->sw2"]
queue_interval = "50us"
queue_ports = ["sw1->sw2"]
rate_interval = "100us"

[analysis]
bottleneck = "sw1->sw2"
"#;

fn port_col(out: &RunOutput, col: &str, port: &str) -> i64 {
    let p = table(out, "ports");
    i64s(p, col)[row_of(strs(p, "port"), port)]
}

fn flow_col(out: &RunOutput, col: &str) -> i64 {
    i64s(table(out, "flows"), col)[0]
}

fn mean_in(out: &RunOutput, tname: &str, col: &str, t0: i64, t1: i64) -> f64 {
    let t = table(out, tname);
    let ts = i64s(t, "t_ps");
    let v: Vec<f64> = match t.column(col) {
        Some(qcnsim_core::api::ColumnData::I64(x)) => (0..t.rows())
            .filter(|&k| ts[k] >= t0 && ts[k] < t1)
            .map(|k| x[k] as f64)
            .collect(),
        _ => (0..t.rows())
            .filter(|&k| ts[k] >= t0 && ts[k] < t1)
            .map(|k| f64s(t, col)[k])
            .collect(),
    };
    assert!(!v.is_empty());
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn nic_feedback_controls_the_hotspot() {
    let out = run(SCENARIO, &[], None);
    // No CNM leaves any switch: the CP port only reports its queue.
    let p = table(&out, "ports");
    assert!(i64s(p, "cnm_sent").iter().all(|&c| c == 0));
    let conmes = port_col(&out, "conmes_sent", "sw1->sw2");
    assert!(conmes > 1_000, "only {conmes} ConMes");
    assert_eq!(
        i64s(p, "conmes_sent").iter().sum::<i64>(),
        conmes,
        "ConMes from a port that is not a CP"
    );
    // The NIC dinged its RP (cnm_received counts the dings) and the summary says so.
    let dings = flow_col(&out, "cnm_received");
    assert!(dings > 10, "{dings} dings");
    assert_eq!(summary_value(&out, "nic_dings", ""), Some(dings as f64));
    assert_eq!(summary_value(&out, "conmes_sent", ""), Some(conmes as f64));
    assert_eq!(summary_value(&out, "cnm_sent", ""), Some(0.0));
    // Control as with the standard CP (qcn_behaviour.rs, same bounds): the average CR over the
    // hotspot after a 10 ms transient is near the 1 Gb/s service rate (a CR averaging > 2 Gb/s
    // would add >= 5 MB to a 300 KB queue in 40 ms), the queue oscillates around Qeq and the
    // link stays busy.
    let cr = mean_in(&out, "rp_rates", "cr_bps", 15 * MS, 55 * MS);
    assert!((0.5e9..=2e9).contains(&cr), "mean CR {cr}");
    let q = mean_in(&out, "queue_samples", "qlen_bytes", 15 * MS, 55 * MS);
    assert!((0.2 * 26e3..=5.0 * 26e3).contains(&q), "mean queue {q}");
    let tp = mean_in(&out, "port_throughput", "throughput_bps", 15 * MS, 55 * MS);
    assert!((0.9e9..=1.01e9).contains(&tp), "hotspot throughput {tp}");
    // Without any feedback the uncontrolled source drops ~37000 frames; the NIC loop keeps the
    // drops to the onset transient.
    let off = run(SCENARIO, &["cc.mode=\"none\""], None);
    let d_on = port_col(&out, "drop_frames", "sw1->sw2");
    let d_off = port_col(&off, "drop_frames", "sw1->sw2");
    assert!(
        (d_on as f64) < 0.05 * d_off as f64,
        "drops {d_on} vs {d_off}"
    );
}

#[test]
fn conmes_count_follows_the_backlogged_bytes_and_take_link_time() {
    let out = run(SCENARIO, &[], None);
    let sent = port_col(&out, "conmes_sent", "sw1->sw2");
    // At most one ConMes per 1000 B enqueued at the CP. Enqueued = transmitted + dropped +
    // what is left in the 300 KB buffer.
    let enq =
        port_col(&out, "tx_bytes", "sw1->sw2") + port_col(&out, "drop_bytes", "sw1->sw2") + 300_000;
    assert!(sent <= enq / 1000 + 1, "{sent} ConMes for {enq} B");
    // ConMes need a backlog: before the hotspot (10G into 10G) and after it nothing is
    // reported, so the count is bounded by the bytes enqueued during the hotspot: about
    // 1 Gb/s * 50 ms / 8000 bit = 6250, plus the onset (at most the 300 KB buffer and the
    // drops) and the drain.
    let drops = port_col(&out, "drop_bytes", "sw1->sw2");
    assert!(sent <= 6_250 + 300 + drops / 1000 + 100, "{sent} ConMes");
    assert!(sent > 1_000, "{sent} ConMes");
    assert!(sent > 10 * flow_col(&out, "cnm_received"));
    // Every ConMes reaches the NIC, two hops back (a few may be in flight at the end).
    let rx = flow_col(&out, "conmes_received");
    assert!(rx <= sent && rx >= sent - 5, "received {rx} of {sent}");
    // ConMes are control frames that occupy link time: the reverse links carry nothing else.
    for frame in [64i64, 128] {
        let o = run(
            SCENARIO,
            &[&format!("cc.qcn.nic.conmes_frame={frame}B")],
            None,
        );
        let s = port_col(&o, "conmes_sent", "sw1->sw2");
        let rev = port_col(&o, "tx_bytes", "sw1->src");
        let in_flight = s - flow_col(&o, "conmes_received");
        assert!(
            rev <= s * frame && rev >= (s - in_flight - 1) * frame,
            "frame {frame}: {rev} B for {s} ConMes"
        );
        assert_eq!(port_col(&o, "tx_bytes", "sw2->sw1"), 0);
    }
}

#[test]
fn no_backlog_no_conmes_no_dings() {
    // 10 Gb/s CBR into an unshaped 10 Gb/s port: every frame finds the port free.
    let out = run(SCENARIO, &["schedule.0.rate=10Gbps"], None);
    assert_eq!(port_col(&out, "conmes_sent", "sw1->sw2"), 0);
    assert_eq!(flow_col(&out, "cnm_received"), 0);
    let r = table(&out, "rp_rates");
    assert!(f64s(r, "cr_bps").iter().all(|&c| c == 10e9));
    assert!(bools(r, "rl_active").iter().all(|&a| !a));
}

#[test]
fn switch_feedback_sends_no_conmes() {
    let out = run(SCENARIO, &["cc.qcn.feedback=\"switch\""], None);
    assert!(port_col(&out, "cnm_sent", "sw1->sw2") > 0);
    assert!(i64s(table(&out, "ports"), "conmes_sent")
        .iter()
        .all(|&c| c == 0));
    assert_eq!(flow_col(&out, "conmes_received"), 0);
    assert_eq!(summary_value(&out, "conmes_sent", ""), None);
    assert_eq!(summary_value(&out, "nic_dings", ""), None);
    // ConMes only come from CP ports: with no CP, nothing at all.
    let none = run(SCENARIO, &["cc.qcn.cp_ports=\"none\""], None);
    assert!(i64s(table(&none, "ports"), "conmes_sent")
        .iter()
        .all(|&c| c == 0));
    assert_eq!(flow_col(&none, "cnm_received"), 0);
}

#[test]
fn sample_count_modes_both_control_and_differ() {
    let conmes = run(SCENARIO, &[], None);
    let sent = run(SCENARIO, &["cc.qcn.nic.sample_count=\"sent\""], None);
    let q = mean_in(&sent, "queue_samples", "qlen_bytes", 15 * MS, 55 * MS);
    assert!((0.2 * 26e3..=5.0 * 26e3).contains(&q), "mean queue {q}");
    let cr = mean_in(&sent, "rp_rates", "cr_bps", 15 * MS, 55 * MS);
    assert!((0.5e9..=2e9).contains(&cr), "mean CR {cr}");
    // In "sent" mode the countdown also runs while the source sends 10 Gb/s before the
    // hotspot, so the first sample comes at the first ConMes; in "conmes" mode only after
    // ~150 ConMes. The runs must differ.
    let first_ding = |o: &RunOutput| {
        let ev = table(o, "events");
        let k = strs(ev, "kind");
        let t = i64s(ev, "t_ps");
        (0..ev.rows())
            .find(|&i| k[i] == "cnm_received")
            .map(|i| t[i])
    };
    let (a, b) = (first_ding(&conmes).unwrap(), first_ding(&sent).unwrap());
    assert!(b < a, "first ding: sent mode {b} ps, conmes mode {a} ps");
    // conmes mode: the first sample needs 150 KB (-15 %) of ConMes-reported bytes, enqueued
    // at the source's 10 Gb/s after the onset at 5 ms: at least 102 us.
    assert!(a >= 5 * MS + 102_000_000, "conmes-mode first ding at {a}");
}

#[test]
fn nic_feedback_is_deterministic_and_uses_its_own_stream() {
    let a = run(SCENARIO, &[], Some(7));
    let b = run(SCENARIO, &[], Some(7));
    for t in [
        "queue_samples",
        "rp_rates",
        "events",
        "flows",
        "ports",
        "summary",
    ] {
        assert_eq!(
            format!("{:?}", table(&a, t)),
            format!("{:?}", table(&b, t)),
            "table {t} differs between identical runs"
        );
    }
    let c = run(SCENARIO, &[], Some(8));
    assert_ne!(
        format!("{:?}", table(&a, "events")),
        format!("{:?}", table(&c, "events")),
        "the NIC's sampling jitter ignores the seed"
    );
    // With the NIC's (= the CP's) jitter at 0 and RP jitter 0, nothing is random.
    let ov = ["cc.qcn.cp.jitter=0", "cc.qcn.rp.jitter=0"];
    let d = run(SCENARIO, &ov, Some(1));
    let e = run(SCENARIO, &ov, Some(2));
    assert_eq!(
        format!("{:?}", table(&d, "events")),
        format!("{:?}", table(&e, "events"))
    );
}
