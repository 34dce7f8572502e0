//! QCN transient response in the simulator: the BA sensor, SONAR and path-based push-back
//! (docs/models/qcn-transient.md). A small og-hotspot: four 3 Gb/s sources into one 10G link
//! served at 1G from 20 ms to 120 ms, no RP timer (byte counter only, as og-hotspot-10src).

mod common;
use common::*;

const BASE: &str = r#"
[meta]
name = "mini-og"
duration = "300ms"
seed = 7

[defaults]
link_rate = "10Gbps"
link_delay = "5us"
switch_latency = "0.5us"

[[switches]]
name = "sw"
buffer = "100frames"

[[hosts]]
name = "s0"
[[hosts]]
name = "s1"
[[hosts]]
name = "s2"
[[hosts]]
name = "s3"
[[hosts]]
name = "sink"

[[links]]
between = ["s0", "sw"]
[[links]]
between = ["s1", "sw"]
[[links]]
between = ["s2", "sw"]
[[links]]
between = ["s3", "sw"]
[[links]]
between = ["sw", "sink"]

[[schedule]]
at = "20ms"
port = "sw->sink"
rate = "1Gbps"
[[schedule]]
at = "120ms"
port = "sw->sink"
rate = "10Gbps"

[[flows]]
src = "s0"
dst = "sink"
rate = "3Gbps"
[[flows]]
src = "s1"
dst = "sink"
rate = "3Gbps"
[[flows]]
src = "s2"
dst = "sink"
rate = "3Gbps"
[[flows]]
src = "s3"
dst = "sink"
rate = "3Gbps"

[cc]
mode = "qcn"
[cc.qcn]
cp_ports = ["sw->sink"]
[cc.qcn.cp]
q_eq = "33000B"
[cc.qcn.rp]
timer_enabled = false

[metrics]
throughput_bin = "1ms"
throughput_ports = ["sw->sink"]
queue_interval = "100us"
queue_ports = ["sw->sink"]
rate_interval = "1ms"

[analysis]
bottleneck = "sw->sink"
downward_factor = 2.0
"#;

const BOTTLENECK: &str = "sw->sink";

/// (t, node, value) of the events of one kind.
fn events_of(out: &qcnsim_core::api::RunOutput, kind: &str) -> Vec<(i64, String, i64)> {
    events_with(out, kind, "node")
}

/// (t, flow, value) of the events of one kind.
fn events_by_flow(out: &qcnsim_core::api::RunOutput, kind: &str) -> Vec<(i64, String, i64)> {
    events_with(out, kind, "flow")
}

/// (t, column `col` (node or flow), value) of the events of one kind.
fn events_with(
    out: &qcnsim_core::api::RunOutput,
    kind: &str,
    col: &str,
) -> Vec<(i64, String, i64)> {
    let ev = table(out, "events");
    let (t, k, n, v) = (
        i64s(ev, "t_ps"),
        strs(ev, "kind"),
        strs(ev, col),
        i64s(ev, "value"),
    );
    (0..t.len())
        .filter(|&i| k[i] == kind)
        .map(|i| (t[i], n[i].clone(), v[i]))
        .collect()
}

/// BA of the bottleneck at time `t` (inclusive of changes at `t`), from its ba_change events.
fn ba_at(changes: &[(i64, String, i64)], t: i64) -> i64 {
    changes
        .iter()
        .rfind(|(ct, n, _)| *ct <= t && n == BOTTLENECK)
        .map(|c| c.2)
        .unwrap_or(0)
}

/// Recovery time after 120 ms; not recovered by the end of the run counts as the 180 ms left.
fn recovery(out: &qcnsim_core::api::RunOutput) -> f64 {
    let r = summary_value(out, "recovery_time", BOTTLENECK).expect("recovery_time row");
    if r.is_nan() {
        0.18
    } else {
        r
    }
}

fn flow_sum(out: &qcnsim_core::api::RunOutput, col: &str) -> i64 {
    i64s(table(out, "flows"), col).iter().sum()
}

#[test]
fn transient_options_are_off_by_default() {
    let out = run(BASE, &[], None);
    let kinds = strs(table(&out, "events"), "kind");
    for k in [
        "ba_change",
        "sonar_special_sent",
        "sonar_echo_sent",
        "sonar_short_fuse",
        "fb99_sent",
        "fb99_received",
    ] {
        assert!(!kinds.iter().any(|x| x == k), "{k} recorded while off");
    }
    for c in [
        "sonar_special_sent",
        "sonar_echo_received",
        "sonar_short_fuse",
        "fb99_received",
    ] {
        assert_eq!(flow_sum(&out, c), 0, "{c}");
    }
    let ports = table(&out, "ports");
    assert!(f64s(ports, "ba_available_s").iter().all(|x| x.is_nan()));
    assert!(summary_value(&out, "sonar_short_fuse", "").is_none());
    assert!(summary_value(&out, "fb99_sent", "").is_none());
}

#[test]
fn ba_sensor_is_evaluated_on_dequeues() {
    // The sources stop at 60 ms during the hotspot: the queue then only drains (no enqueues).
    // BA must turn 1 exactly `hold` after the queue fell below 6 frames.
    let out = run(
        BASE,
        &[
            "cc.qcn.ba.enabled=true",
            "flows.0.stop=60ms",
            "flows.1.stop=60ms",
            "flows.2.stop=60ms",
            "flows.3.stop=60ms",
        ],
        None,
    );
    let ba = events_of(&out, "ba_change");
    let last_up = ba
        .iter()
        .rfind(|e| e.2 == 1)
        .expect("BA turned 1 after the sources stopped")
        .0;
    assert!(last_up > 60_000_000_000, "BA 1 at {last_up}");
    let hold = 10_000_000_000i64;
    // queue samples every 100 us: just before (up - hold) the queue was still >= 6 frames at
    // some sample within 100 us, and every sample from (up - hold) on is below 6
    let q = table(&out, "queue_samples");
    let (t, fr) = (i64s(q, "t_ps"), i64s(q, "qlen_frames"));
    let below_from = last_up - hold;
    let after: Vec<i64> = (0..t.len())
        .filter(|&i| t[i] >= below_from && t[i] <= last_up)
        .map(|i| fr[i])
        .collect();
    assert!(!after.is_empty());
    assert!(after.iter().all(|&x| x < 6), "{after:?}");
    let before = (0..t.len())
        .filter(|&i| t[i] < below_from && t[i] >= below_from - 100_000_000)
        .map(|i| fr[i])
        .max()
        .unwrap_or(0);
    assert!(before >= 6, "queue before the hold: {before}");
    // no frame was enqueued at the bottleneck after 60 ms + path delay, so only dequeues
    // could have started the hold timer
    assert!(below_from > 60_000_000_000);
}

#[test]
fn sonar_echoes_only_from_ba_zero_and_recovers_faster() {
    let std = run(BASE, &[], None);
    let out = run(BASE, &["cc.qcn.sonar.enabled=true"], None);
    let special = flow_sum(&out, "sonar_special_sent");
    assert!(special > 0);
    let ba = events_of(&out, "ba_change");
    let echoes = events_of(&out, "sonar_echo_sent");
    assert!(!echoes.is_empty());
    for (t, node, _) in &echoes {
        assert_eq!(node, BOTTLENECK);
        assert_eq!(ba_at(&ba, *t), 0, "echo at {t} while BA = 1");
    }
    // echoes are control frames that reach the source (run ends long after the last one)
    assert_eq!(
        flow_sum(&out, "sonar_echo_received"),
        echoes.len() as i64,
        "echo frames lost or duplicated"
    );
    // short fuses happened; a false alarm is one whose last special frame passed a CP with
    // BA = 0 (that CP echoed it, so an echo event of the flow lies between the two)
    let sf = events_by_flow(&out, "sonar_short_fuse");
    assert_eq!(sf.len() as i64, flow_sum(&out, "sonar_short_fuse"));
    assert!(!sf.is_empty());
    let specials = events_by_flow(&out, "sonar_special_sent");
    let echoed = events_by_flow(&out, "sonar_echo_sent");
    for (t, flow, v) in &sf {
        let last = specials
            .iter()
            .filter(|e| &e.1 == flow && e.0 <= *t)
            .map(|e| e.0)
            .max()
            .expect("a short fuse follows a special frame");
        let want = echoed
            .iter()
            .any(|e| &e.1 == flow && e.0 >= last && e.0 <= *t);
        assert_eq!(*v, want as i64, "false-alarm flag of {flow} at {t}");
    }
    assert_eq!(
        summary_value(&out, "sonar_false_alarms", "").unwrap() as i64,
        sf.iter().filter(|e| e.2 == 1).count() as i64
    );
    let (r_std, r_sonar) = (recovery(&std), recovery(&out));
    assert!(
        r_sonar < 0.5 * r_std,
        "SONAR recovery {r_sonar} s vs byte-counter-only QCN {r_std} s"
    );
}

#[test]
fn pushback_sends_fb99_only_with_ba_zero_and_recovers_faster() {
    let std = run(BASE, &[], None);
    let out = run(BASE, &["cc.qcn.pushback.enabled=true"], None);
    let ba = events_of(&out, "ba_change");
    let fb99 = events_of(&out, "fb99_sent");
    assert!(!fb99.is_empty());
    for (t, node, _) in &fb99 {
        assert_eq!(node, BOTTLENECK);
        assert_eq!(ba_at(&ba, *t), 0, "Fb99 at {t} while BA = 1");
    }
    let rx = flow_sum(&out, "fb99_received");
    assert!(rx > 0 && rx <= fb99.len() as i64);
    assert!(
        fb99.len() as i64 - rx < 10,
        "Fb99 frames lost: {} vs {rx}",
        fb99.len()
    );
    let (r_std, r_pb) = (recovery(&std), recovery(&out));
    assert!(
        r_pb < 0.5 * r_std,
        "push-back recovery {r_pb} s vs byte-counter-only QCN {r_std} s"
    );
}

#[test]
fn transient_schemes_are_deterministic() {
    for set in [
        &["cc.qcn.sonar.enabled=true"][..],
        &["cc.qcn.pushback.enabled=true"][..],
    ] {
        let a = run(BASE, set, None);
        let b = run(BASE, set, None);
        for name in ["events", "rp_rates", "summary", "flows"] {
            assert_eq!(table(&a, name), table(&b, name), "{name} with {set:?}");
        }
    }
}

#[test]
fn downward_transient_time_is_reported_for_the_drop_only() {
    let out = run(BASE, &[], None);
    let s = table(&out, "summary");
    let n = strs(s, "metric")
        .iter()
        .filter(|m| *m == "downward_transient_time")
        .count();
    assert_eq!(n, 1);
    let v = summary_value(&out, "downward_transient_time", "fell to 1Gbps").unwrap();
    assert!(v > 0.0 && v < 0.1, "{v}");
}

#[test]
fn sonar_waits_a_full_wp_after_every_ding_as_after_every_cnm() {
    // A CNM (switch feedback) or a ding (NIC-side feedback: the NIC's own CNM) sends SONAR's
    // ping timer back to WP: a special frame leaves at least WP (10 ms) after the source's last
    // congestion message. Checked on every special frame of both runs.
    const WP: i64 = 10_000_000_000;
    for feedback in ["switch", "nic"] {
        let ov = format!("cc.qcn.feedback={feedback}");
        let out = run(BASE, &["cc.qcn.sonar.enabled=true", &ov], None);
        let congestion = events_of(&out, "cnm_received");
        let specials = events_of(&out, "sonar_special_sent");
        assert!(
            congestion.len() > 20,
            "{feedback}: {} congestion messages",
            congestion.len()
        );
        assert!(
            specials.len() > 4,
            "{feedback}: {} special frames",
            specials.len()
        );
        let mut after_congestion = 0;
        for (t, src, _) in &specials {
            if let Some((c, _, _)) = congestion.iter().rfind(|(c, n, _)| c < t && n == src) {
                after_congestion += 1;
                assert!(
                    t - c >= WP,
                    "{feedback}: {src} special at {t}, last message at {c}"
                );
            }
        }
        assert!(
            after_congestion > 0,
            "{feedback}: no special frame followed a message"
        );
    }
}

/// With PFC the data frames wait in the per-priority queues: BA must still be 0 whenever the
/// bottleneck holds 6 frames or more, and the scheme's messages (`col` of the ports table, also
/// an event kind) must come from those full queues all along the hotspot.
fn ba_sees_the_pfc_queues(scheme: &str, col: &str) {
    let out = run(BASE, &["flow_control.mode=pfc", scheme], None);
    let ba = events_of(&out, "ba_change");
    let q = table(&out, "queue_samples");
    let (t, fr) = (i64s(q, "t_ps"), i64s(q, "qlen_frames"));
    let long = (0..t.len()).filter(|&i| fr[i] >= 6).count();
    assert!(
        long > 100,
        "{scheme}: the queue was long in {long} samples only"
    );
    for i in (0..t.len()).filter(|&i| fr[i] >= 6) {
        assert_eq!(
            ba_at(&ba, t[i]),
            0,
            "{scheme}: BA = 1 at {} with {} frames queued",
            t[i],
            fr[i]
        );
    }
    let ports = table(&out, "ports");
    let names = strs(ports, "port");
    let sent = i64s(ports, col)[names.iter().position(|n| n == BOTTLENECK).unwrap()];
    // the hotspot (20-120 ms) keeps the queue long: messages flow until its end
    let last = events_of(&out, col).iter().map(|e| e.0).max().unwrap_or(0);
    assert!(
        sent > 0 && last > 100_000_000_000,
        "{scheme}: {sent} sent, the last at {last}"
    );
}

#[test]
fn pfc_sonar_ba_sensor_sees_the_priority_queues() {
    ba_sees_the_pfc_queues("cc.qcn.sonar.enabled=true", "sonar_echo_sent");
}

#[test]
fn pfc_pushback_ba_sensor_sees_the_priority_queues() {
    ba_sees_the_pfc_queues("cc.qcn.pushback.enabled=true", "fb99_sent");
}
