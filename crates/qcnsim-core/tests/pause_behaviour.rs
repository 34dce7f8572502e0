//! PAUSE (802.3x) and PFC (802.1Qbb) behaviour on small networks: lossless queues, the
//! response delay and the frame in progress, XON, expiry and refresh, XON-only, the paused
//! reaction point, per-priority pausing and the three watermark modes.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

/// Two 5 Gb/s senders into a port served at 1 Gb/s, 802.3x PAUSE on the egress queue.
const BASE: &str = r#"
[meta]
name = "pause-basic"
duration = "5ms"
seed = 1

[defaults]
link_rate = "10Gbps"
link_delay = "1us"
switch_latency = "300ns"
buffer = "100KB"

[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[hosts]]
name = "c"
[[hosts]]
name = "d"
[[switches]]
name = "sw"

[[links]]
between = ["a", "sw"]
[[links]]
between = ["b", "sw"]
[[links]]
between = ["sw", "c"]
[[links]]
between = ["sw", "d"]

[[schedule]]
at = "0s"
port = "sw->c"
rate = "1Gbps"

[[flows]]
name = "fa"
src = "a"
dst = "c"
rate = "5Gbps"
[[flows]]
name = "fb"
src = "b"
dst = "c"
rate = "5Gbps"

[flow_control]
mode = "pause"
watermark = "egress"
xoff = "30KB"
xon = "20KB"

[metrics]
throughput_ports = "all"
queue_ports = "all"
"#;

const US: i64 = 1_000_000;
/// 64 B at 10 Gb/s.
const PAUSE_TX: i64 = 51_200;
/// 1500 B at 10 Gb/s.
const FRAME_TX: i64 = 1_200_000;
/// 802.3 response delay at 10 Gb/s: 67 quanta.
const RESP_10G: i64 = 3_430_400;

struct Ev {
    t: i64,
    port: String,
    event: String,
    duration: i64,
}

fn pause_events(out: &RunOutput) -> Vec<Ev> {
    let pe = table(out, "pause_events");
    let (t, p, e, d) = (
        i64s(pe, "t_ps"),
        strs(pe, "port"),
        strs(pe, "event"),
        i64s(pe, "duration_ps"),
    );
    (0..t.len())
        .map(|i| Ev {
            t: t[i],
            port: p[i].clone(),
            event: e[i].clone(),
            duration: d[i],
        })
        .collect()
}

fn of<'a>(ev: &'a [Ev], port: &str, event: &str) -> Vec<&'a Ev> {
    ev.iter()
        .filter(|e| e.port == port && e.event == event)
        .collect()
}

fn port_col(out: &RunOutput, col: &str, port: &str) -> i64 {
    let ports = table(out, "ports");
    i64s(ports, col)[row_of(strs(ports, "port"), port)]
}

fn flow_col(out: &RunOutput, col: &str, flow: &str) -> i64 {
    let flows = table(out, "flows");
    i64s(flows, col)[row_of(strs(flows, "flow"), flow)]
}

fn switch_drops(out: &RunOutput) -> i64 {
    i64s(table(out, "flows"), "dropped_frames").iter().sum()
}

#[test]
fn pause_makes_the_switch_lossless_and_the_tables_agree() {
    let off = run(BASE, &["flow_control.mode=none"], None);
    assert!(
        switch_drops(&off) > 100,
        "without PAUSE the switch must drop"
    );

    let out = run(BASE, &[], None);
    assert_eq!(
        switch_drops(&out),
        0,
        "PAUSE with enough headroom drops nothing"
    );
    // the senders were held back: the excess waits and drops at the hosts' NIC queues
    assert!(
        i64s(table(&out, "flows"), "nic_dropped_frames")
            .iter()
            .sum::<i64>()
            > 0
    );
    let max_q = summary_value(&out, "bottleneck_max_queue", "").unwrap();
    let needed = summary_value(&out, "pause_headroom_needed", "").unwrap();
    assert!(max_q > 30_000.0, "the queue crossed XOFF ({max_q})");
    assert!(
        max_q <= 30_000.0 + needed,
        "queue {max_q} beyond XOFF + bound {needed}"
    );
    // the service stays busy: PAUSE does not starve the bottleneck
    let tput = summary_value(&out, "mean_throughput", "sw->c").unwrap();
    assert!(tput > 0.99e9, "bottleneck throughput {tput}");

    let ev = pause_events(&out);
    for (host, sw) in [("a->sw", "sw->a"), ("b->sw", "sw->b")] {
        let sent = of(&ev, sw, "xoff_sent").len() + of(&ev, sw, "xon_sent").len();
        assert!(sent >= 4, "{sw}: {sent} frames");
        assert_eq!(port_col(&out, "pause_sent", sw) as usize, sent, "{sw}");
        // every frame sent is received (none is in flight at the end here)
        assert_eq!(
            port_col(&out, "pause_received", host),
            port_col(&out, "pause_sent", sw)
        );
        // paused time = sum of the episodes (+ the one still open at the end)
        let pauses = of(&ev, host, "pause");
        let resumes = of(&ev, host, "resume");
        let mut total: i64 = resumes.iter().map(|e| e.duration).sum();
        if pauses.len() == resumes.len() + 1 {
            total += 5_000 * US - pauses.last().unwrap().t;
        } else {
            assert_eq!(pauses.len(), resumes.len());
        }
        assert_eq!(port_col(&out, "paused_ps", host), total, "{host}");
        // the per-bin counts add up to the same totals
        let pb = table(&out, "pause_bins");
        let rows: Vec<usize> = (0..pb.rows())
            .filter(|&i| strs(pb, "port")[i] == host)
            .collect();
        assert_eq!(rows.len(), 5, "one row per 1 ms bin");
        let rx: i64 = rows.iter().map(|&i| i64s(pb, "pause_received")[i]).sum();
        let ps: i64 = rows.iter().map(|&i| i64s(pb, "paused_ps")[i]).sum();
        assert_eq!(rx, port_col(&out, "pause_received", host), "{host}");
        assert_eq!(ps, total, "{host}");
        assert!(rows.iter().all(|&i| i64s(pb, "paused_ps")[i] <= 1_000 * US));
        // PAUSE frames are never forwarded and never reach a host as data
        assert_eq!(port_col(&out, "pause_sent", host), 0);
    }
    // PAUSE frames are not sampled by a CP and are not data: the data counts are unchanged
    let rx: i64 = i64s(table(&out, "flows"), "rx_frames").iter().sum();
    let tx_c = port_col(&out, "tx_frames", "sw->c");
    assert!(tx_c - rx <= 1, "sw->c sent {tx_c} frames, {rx} delivered");
}

#[test]
fn response_delay_and_the_frame_in_progress() {
    // One sender at exactly line rate (back-to-back 1500 B frames); 100 ns throughput bins on
    // its NIC port show when each frame ends. After the PAUSE arrives the sender may start
    // frames during the response delay; the frame in progress at the pause finishes; then
    // nothing until the resume.
    for (resp, resp_ps) in [("0ns", 0i64), ("5us", 5 * US), ("802.3", RESP_10G)] {
        let mut ov = vec![
            "flows.0.rate=10Gbps".to_string(),
            "flows.1.start=900us".to_string(),
            "metrics.throughput_bin=100ns".to_string(),
            "meta.duration=1ms".to_string(),
        ];
        if resp != "802.3" {
            ov.push(format!("flow_control.response_delay={resp}"));
        }
        let ovr: Vec<&str> = ov.iter().map(|s| s.as_str()).collect();
        let out = run(BASE, &ovr, None);
        let ev = pause_events(&out);
        let sent = of(&ev, "sw->a", "xoff_sent")[0].t;
        let pause = of(&ev, "a->sw", "pause")[0].t;
        let resume = of(&ev, "a->sw", "resume")[0].t;
        let arrival = sent + PAUSE_TX + US;
        assert_eq!(
            pause,
            arrival + resp_ps,
            "response {resp}: acted upon after the delay"
        );
        // frame end times on a->sw
        let tp = table(&out, "port_throughput");
        let ends: Vec<i64> = (0..tp.rows())
            .filter(|&i| strs(tp, "port")[i] == "a->sw" && i64s(tp, "frames")[i] > 0)
            .map(|i| i64s(tp, "t_ps")[i])
            .collect();
        let after: Vec<i64> = ends
            .iter()
            .copied()
            .filter(|&t| t + 100_000 > arrival && t < resume)
            .collect();
        // frames ending after the arrival: those started during the response delay, plus the
        // one in progress when the pause took effect
        let expect = resp_ps / FRAME_TX + 1;
        assert!(
            (after.len() as i64 - expect).abs() <= 1,
            "response {resp}: {} frames ended between the arrival and the resume, expected ~{expect}: {after:?}",
            after.len()
        );
        let last = *after.last().unwrap();
        assert!(
            last >= pause - 100_000,
            "response {resp}: the sender stopped before the pause took effect"
        );
        assert!(
            last < pause + FRAME_TX,
            "response {resp}: a frame started after the pause took effect"
        );
    }
}

#[test]
fn xon_cancels_at_once_and_an_unrefreshed_pause_expires() {
    // pause_quanta 2000 = 102.4 us at 10 Gb/s
    let p: i64 = 2000 * 51_200;
    // refresh at half the pause time: the pause never lapses, every resume is an XON
    let out = run(BASE, &["flow_control.pause_quanta=2000"], None);
    let ev = pause_events(&out);
    let xons = of(&ev, "sw->a", "xon_sent");
    let resumes = of(&ev, "a->sw", "resume");
    assert!(resumes.len() >= 3);
    for (k, r) in resumes.iter().enumerate() {
        let x = xons[k].t;
        assert_eq!(r.t, x + PAUSE_TX + US + RESP_10G, "resume {k} is the XON's");
        assert!(r.duration < p * 100, "resume {k}");
    }
    // consecutive XOFFs of one pause episode are `refresh * pause time` apart
    let xoffs = of(&ev, "sw->a", "xoff_sent");
    let gaps: Vec<i64> = xoffs
        .windows(2)
        .filter(|w| !xons.iter().any(|x| x.t > w[0].t && x.t < w[1].t))
        .map(|w| w[1].t - w[0].t)
        .collect();
    assert!(!gaps.is_empty(), "no refreshes seen");
    assert!(gaps.iter().all(|&g| g == p / 2), "refresh gaps {gaps:?}");

    // refresh only at the pause time: the refresh arrives after the expiry, so the link
    // resumes by itself (pause time - response delay after it took effect) and is paused again
    let out = run(
        BASE,
        &["flow_control.pause_quanta=2000", "flow_control.refresh=1.0"],
        None,
    );
    let ev = pause_events(&out);
    let expired = of(&ev, "a->sw", "resume")
        .iter()
        .filter(|r| r.duration == p - RESP_10G)
        .count();
    assert!(expired >= 1, "no pause expired");
    assert!(of(&ev, "a->sw", "resume").len() > of(&ev, "sw->a", "xon_sent").len());
}

#[test]
fn pause_events_are_recorded_only_when_asked() {
    let out = run(BASE, &["metrics.events=[\"switch_drop\"]"], None);
    assert_eq!(table(&out, "pause_events").rows(), 0);
    assert!(port_col(&out, "pause_sent", "sw->a") > 0);
    // switch_drop records drops at switches only: with PAUSE there are none, the NIC drops
    // are not recorded
    let ev = table(&out, "events");
    assert_eq!(ev.rows(), 0);
    let out = run(
        BASE,
        &["metrics.events=[\"switch_drop\"]", "flow_control.mode=none"],
        None,
    );
    let ev = table(&out, "events");
    assert!(ev.rows() > 0);
    assert!(strs(ev, "node").iter().all(|n| n.starts_with("sw->")));
    assert_eq!(ev.rows() as i64, switch_drops(&out));
}

#[test]
fn xon_only_pauses_until_an_explicit_xon() {
    let out = run(
        BASE,
        &["flow_control.xon_only=true", "flow_control.pause_quanta=1"],
        None,
    );
    assert_eq!(switch_drops(&out), 0);
    let ev = pause_events(&out);
    let pauses = of(&ev, "a->sw", "pause");
    assert!(pauses.len() >= 3);
    assert!(
        pauses.iter().all(|e| e.duration == -1),
        "no timer: duration -1"
    );
    // no refreshes: XOFF and XON alternate
    let sent: Vec<&str> = ev
        .iter()
        .filter(|e| e.port == "sw->a" && e.event.ends_with("_sent"))
        .map(|e| e.event.as_str())
        .collect();
    assert!(sent.windows(2).all(|w| w[0] != w[1]), "{sent:?}");
    // a single quantum would expire after 51.2 ns; here only XONs end the pauses
    let xons = of(&ev, "sw->a", "xon_sent");
    for (k, r) in of(&ev, "a->sw", "resume").iter().enumerate() {
        assert_eq!(r.t, xons[k].t + PAUSE_TX + US + RESP_10G);
    }
    // with the timer a 1-quantum pause (shorter than the response delay) does nothing
    let out = run(BASE, &["flow_control.pause_quanta=1"], None);
    assert!(of(&pause_events(&out), "a->sw", "pause").is_empty());
    assert!(switch_drops(&out) > 0);
}

#[test]
fn paused_reaction_point_freezes_its_timer_and_stops_its_rate_limiter() {
    // QCN + PAUSE. The bottleneck nearly stops (1 Mb/s) from 2 ms to 32 ms: the queue stays
    // above XON, so both hosts stay paused (refreshed) for 30 ms. Their RPs have been cut
    // (TR > CR) before; a running 10 ms timer would raise CR at every expiry.
    let text = format!(
        "{}\n[cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"10KB\"\n[cc.qcn.rp]\ntimer = \"10ms\"\n\
         [[schedule]]\nat = \"2ms\"\nport = \"sw->c\"\nrate = \"1Mbps\"\n\
         [[schedule]]\nat = \"32ms\"\nport = \"sw->c\"\nrate = \"10Gbps\"\n",
        BASE.replace("rate = \"1Gbps\"", "rate = \"5Gbps\"")
    );
    let out = run(
        &text,
        &["meta.duration=60ms", "metrics.rate_interval=1ms"],
        None,
    );
    let ev = pause_events(&out);
    let p0 = of(&ev, "a->sw", "pause")
        .iter()
        .map(|e| e.t)
        .find(|&t| t > 2_000 * US)
        .expect("paused after the rate drop");
    let r0 = of(&ev, "a->sw", "resume")
        .iter()
        .map(|e| e.t)
        .find(|&t| t > p0)
        .expect("resumed");
    assert!(r0 > 30_000 * US, "paused from {p0} to {r0}");
    let rr = table(&out, "rp_rates");
    let (f, t, cr, tr) = (
        names(rr, "flow"),
        i64s(rr, "t_ps"),
        f64s(rr, "cr_bps"),
        f64s(rr, "tr_bps"),
    );
    let during: Vec<(f64, f64)> = (0..t.len())
        .filter(|&i| f[i] == "fa" && t[i] > p0 && t[i] < r0)
        .map(|i| (cr[i], tr[i]))
        .collect();
    assert!(during.len() >= 25);
    assert!(
        during[0].0 < during[0].1,
        "CR below TR while paused: {:?}",
        during[0]
    );
    assert!(
        during.iter().all(|&x| x == during[0]),
        "CR/TR changed while paused: {during:?}"
    );
    // after the resume the timer runs on: CR rises again
    let after: Vec<f64> = (0..t.len())
        .filter(|&i| f[i] == "fa" && t[i] > r0)
        .map(|i| cr[i])
        .collect();
    assert!(
        after.iter().any(|&c| c > during[0].0),
        "CR never rose after the resume"
    );
    // the rate limiter stopped: its queue filled and dropped while paused
    let hq = table(&out, "host_queues");
    let (hf, ht, rlq) = (
        strs(hq, "flow"),
        i64s(hq, "t_ps"),
        i64s(hq, "rl_qlen_bytes"),
    );
    let full = (0..ht.len()).any(|i| hf[i] == "fa" && ht[i] > p0 && ht[i] < r0 && rlq[i] > 140_000);
    assert!(full, "the rate-limiter queue did not fill while paused");
    assert!(flow_col(&out, "rl_dropped_frames", "fa") > 0);
    assert_eq!(switch_drops(&out), 0);
}

/// One host sends on two priorities: priority 3 to a congested port, priority 1 elsewhere.
const TWO_PRIO: &str = r#"
[[flows]]
name = "p3"
src = "a"
dst = "c"
rate = "8Gbps"
priority = 3
[[flows]]
name = "p1"
src = "a"
dst = "d"
rate = "1Gbps"
priority = 1
"#;

#[test]
fn pfc_pauses_one_priority_without_blocking_the_others() {
    let base: String = BASE.split("[[flows]]").next().unwrap().to_string()
        + TWO_PRIO
        + "[flow_control]\nwatermark = \"egress\"\nxoff = \"30KB\"\nxon = \"20KB\"\n";
    let dur_s = 0.005;
    let pfc = run(
        &base,
        &["flow_control.mode=pfc", "flow_control.priorities=[3]"],
        None,
    );
    assert_eq!(
        flow_col(&pfc, "dropped_frames", "p3"),
        0,
        "priority 3 is lossless"
    );
    let p1 = flow_col(&pfc, "rx_bytes", "p1") as f64 * 8.0 / dur_s;
    assert!(p1 > 0.97e9, "PFC: priority 1 got {p1} b/s of 1 Gb/s");
    let pev = pause_events(&pfc);
    assert!(!of(&pev, "a->sw", "pause").is_empty());
    let prios = i64s(table(&pfc, "pause_events"), "priority");
    assert!(
        prios.iter().all(|&p| p == 3),
        "only priority 3 is paused: {prios:?}"
    );

    // 802.3x PAUSE stops the whole link: priority 1 waits behind priority 3 (head of line)
    let pause = run(&base, &["flow_control.mode=pause"], None);
    assert_eq!(flow_col(&pause, "dropped_frames", "p3"), 0);
    let p1 = flow_col(&pause, "rx_bytes", "p1") as f64 * 8.0 / dur_s;
    assert!(
        p1 < 0.5e9,
        "PAUSE: priority 1 got {p1} b/s, expected head-of-line blocking"
    );
    assert!(i64s(table(&pause, "pause_events"), "priority")
        .iter()
        .all(|&p| p == -1));

    // PFC with priority 3 lossy: it drops at the switch, nothing is paused
    let lossy = run(
        &base,
        &["flow_control.mode=pfc", "flow_control.priorities=[1]"],
        None,
    );
    assert!(flow_col(&lossy, "dropped_frames", "p3") > 0);
    assert_eq!(table(&lossy, "pause_events").rows(), 0);
}

#[test]
fn watermark_modes_choose_whom_to_pause() {
    // fa: a -> c (congested, 1 Gb/s); fb: b -> d (uncongested, 2 Gb/s)
    let base = BASE.replace(
        "name = \"fb\"\nsrc = \"b\"\ndst = \"c\"\nrate = \"5Gbps\"",
        "name = \"fb\"\nsrc = \"b\"\ndst = \"d\"\nrate = \"2Gbps\"",
    );
    // (mode, a paused?, b paused?)
    let cases = [
        ("egress", true, false),
        ("ingress", true, false),
        ("global", true, true),
    ];
    for (mode, a_paused, b_paused) in cases {
        let out = run(&base, &[&format!("flow_control.watermark={mode}")], None);
        assert_eq!(switch_drops(&out), 0, "{mode}");
        assert_eq!(
            port_col(&out, "paused_ps", "a->sw") > 0,
            a_paused,
            "{mode}: a"
        );
        assert_eq!(
            port_col(&out, "paused_ps", "b->sw") > 0,
            b_paused,
            "{mode}: b"
        );
        if !b_paused {
            let fb = flow_col(&out, "rx_bytes", "fb") as f64 * 8.0 / 0.005;
            assert!(fb > 1.95e9, "{mode}: the uncongested flow got {fb}");
        }
    }
}
