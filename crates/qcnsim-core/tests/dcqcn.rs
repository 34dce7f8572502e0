//! DCQCN on small networks (docs/models/dcqcn.md): ECN marking only where the queue passes
//! Kmin, CNPs from the receivers back to the sources through the control queues, at most one
//! per flow per interval N, rate cuts, marking at dequeue and at enqueue, the three variants,
//! and a lossless run with PFC.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

/// Four greedy 40 Gb/s senders into one 40 Gb/s port.
const BASE: &str = r#"
[meta]
name = "dcqcn-basic"
duration = "5ms"
seed = 3

[defaults]
link_rate = "40Gbps"
link_delay = "1us"
switch_latency = "300ns"
buffer = "2MB"

[[hosts]]
name = "h1"
[[hosts]]
name = "h2"
[[hosts]]
name = "h3"
[[hosts]]
name = "h4"
[[hosts]]
name = "r"
[[switches]]
name = "sw"

[[links]]
between = ["h1", "sw"]
[[links]]
between = ["h2", "sw"]
[[links]]
between = ["h3", "sw"]
[[links]]
between = ["h4", "sw"]
[[links]]
between = ["sw", "r"]

[[flows]]
name = "f1"
src = "h1"
dst = "r"
traffic = "greedy"
frame = "1000B"
[[flows]]
name = "f2"
src = "h2"
dst = "r"
traffic = "greedy"
frame = "1000B"
[[flows]]
name = "f3"
src = "h3"
dst = "r"
traffic = "greedy"
frame = "1000B"
[[flows]]
name = "f4"
src = "h4"
dst = "r"
traffic = "greedy"
frame = "1000B"

[cc]
mode = "dcqcn"

[metrics]
throughput_ports = "all"
queue_ports = ["sw->r"]
"#;

fn flow_sum(out: &RunOutput, col: &str) -> i64 {
    i64s(table(out, "flows"), col).iter().sum()
}

#[test]
fn marks_become_cnps_that_reach_the_sources() {
    let out = run(BASE, &[], None);
    let marked = flow_sum(&out, "ecn_marked");
    let sent = flow_sum(&out, "cnp_sent");
    let rx = flow_sum(&out, "cnp_received");
    assert!(marked > 0 && sent > 0, "marked {marked}, CNPs {sent}");
    // CNPs are never dropped (control queues); the last ones may still be on the way
    assert!(rx <= sent && rx >= sent - 4, "sent {sent}, received {rx}");
    // at most one CNP per flow per 50 us, plus the first
    let per_flow = i64s(table(&out, "flows"), "cnp_sent");
    for &n in per_flow {
        assert!(n <= 5_000 / 50 + 1, "{n} CNPs in 5 ms");
    }
    // the summary carries the totals
    assert_eq!(summary_value(&out, "cnp_sent", ""), Some(sent as f64));
    assert_eq!(summary_value(&out, "ecn_marked", ""), Some(marked as f64));
    // the rate limiters were cut below the line rate
    let r = table(&out, "rp_rates");
    let min_cr = f64s(r, "cr_bps")
        .iter()
        .cloned()
        .fold(f64::INFINITY, f64::min);
    assert!(min_cr < 20e9, "lowest CR {min_cr}");
    // 4:1 at 40 Gb/s: the bottleneck stays busy and the queue stays far below the 2 MB
    // buffer, so nothing is dropped
    let ports = table(&out, "ports");
    assert_eq!(i64s(ports, "drop_frames").iter().sum::<i64>(), 0);
}

#[test]
fn cnps_take_link_time_on_the_reverse_path() {
    let out = run(BASE, &[], None);
    let ports = table(&out, "ports");
    let names = strs(ports, "port");
    let tx = i64s(ports, "tx_frames");
    // the receiver's NIC sends only CNPs
    let sent = flow_sum(&out, "cnp_sent");
    assert_eq!(tx[row_of(names, "r->sw")], sent);
    // and the switch forwards each received CNP to its source
    let back: i64 = ["sw->h1", "sw->h2", "sw->h3", "sw->h4"]
        .iter()
        .map(|p| tx[row_of(names, p)])
        .sum();
    assert_eq!(back, flow_sum(&out, "cnp_received"));
}

#[test]
fn no_marks_below_kmin() {
    // Kmin above the buffer: nothing is ever marked, no CNP, rates stay at the line rate
    let out = run(
        BASE,
        &["cc.dcqcn.cp.k_min=\"3MB\"", "cc.dcqcn.cp.k_max=\"4MB\""],
        None,
    );
    assert_eq!(flow_sum(&out, "ecn_marked"), 0);
    assert_eq!(flow_sum(&out, "cnp_sent"), 0);
    let r = table(&out, "rp_rates");
    assert!(f64s(r, "cr_bps").iter().all(|&c| c == 40e9));
}

#[test]
fn marking_at_enqueue_and_dequeue_both_control_the_queue() {
    for at in ["dequeue", "enqueue"] {
        let ov = format!("cc.dcqcn.cp.mark_at=\"{at}\"");
        let out = run(BASE, &[&ov], None);
        assert!(flow_sum(&out, "cnp_received") > 0, "{at}");
        let q = i64s(table(&out, "queue_samples"), "qlen_bytes");
        let late = &q[q.len() / 2..];
        let mean = late.iter().sum::<i64>() as f64 / late.len() as f64;
        // held well below the 2 MB buffer (the paper's Kmax is 200 KB)
        assert!(mean < 400e3, "{at}: mean queue {mean}");
    }
}

#[test]
fn every_variant_runs_and_cuts() {
    for v in ["paper", "ns3-rdma", "mellanox"] {
        let ov = format!("cc.dcqcn.variant=\"{v}\"");
        let out = run(BASE, &[&ov], None);
        assert!(flow_sum(&out, "cnp_received") > 0, "{v}");
        let r = table(&out, "rp_rates");
        let min_cr = f64s(r, "cr_bps")
            .iter()
            .cloned()
            .fold(f64::INFINITY, f64::min);
        assert!(min_cr < 40e9, "{v}: lowest CR {min_cr}");
        assert_eq!(
            i64s(table(&out, "ports"), "drop_frames")
                .iter()
                .sum::<i64>(),
            0,
            "{v}"
        );
    }
}

#[test]
fn same_seed_same_tables_and_marking_follows_the_seed() {
    let a = run(BASE, &[], Some(5));
    let b = run(BASE, &[], Some(5));
    let c = run(BASE, &[], Some(6));
    let col = |o: &RunOutput| i64s(table(o, "flows"), "ecn_marked").to_vec();
    assert_eq!(col(&a), col(&b));
    assert_ne!(col(&a), col(&c));
}

#[test]
fn dcqcn_with_pfc_is_lossless() {
    // a small buffer that DCQCN alone would overflow at the start (flows begin at line rate)
    let ov = [
        "defaults.buffer=\"150KB\"",
        "flow_control.mode=\"pfc\"",
        "flow_control.watermark=\"ingress\"",
        "flow_control.xoff=\"30KB\"",
        "flow_control.xon=\"20KB\"",
        "cc.dcqcn.cp.k_min=\"5KB\"",
        "cc.dcqcn.cp.k_max=\"20KB\"",
    ];
    let out = run(BASE, &ov, None);
    assert_eq!(
        i64s(table(&out, "ports"), "drop_frames")
            .iter()
            .sum::<i64>(),
        0
    );
    assert!(flow_sum(&out, "cnp_received") > 0);
}

#[test]
fn bad_dcqcn_input_names_the_field() {
    let cases: &[(&str, &str)] = &[
        ("cc.dcqcn.variant=\"dctcp\"", "cc.dcqcn.variant"),
        ("cc.dcqcn.cp.k_max=\"1KB\"", "cc.dcqcn.cp.k_max"),
        ("cc.dcqcn.cp.p_max=2.0", "cc.dcqcn.cp.p_max"),
        (
            "cc.dcqcn.rp.first_cnp_rate=\"half\"",
            "cc.dcqcn.rp.first_cnp_rate",
        ),
        ("cc.dcqcn.rp.g=0.0", "cc.dcqcn.rp.g"),
        (
            "cc.dcqcn.rp.alpha_update=\"never\"",
            "cc.dcqcn.rp.alpha_update",
        ),
        ("cc.dcqcn.rp.min_rate=\"100Gbps\"", "cc.dcqcn.rp.min_rate"),
        ("cc.dcqcn.cp_ports=[\"r->sw\"]", "cc.dcqcn.cp_ports"),
    ];
    for (ov, field) in cases {
        let e = qcnsim_core::api::run(BASE, &[ov.to_string()], None, &mut |_| true)
            .err()
            .unwrap_or_else(|| panic!("{ov} accepted"));
        let msg = e.to_string();
        assert!(msg.contains(field), "{ov}: {msg}");
    }
}

#[test]
fn cnps_follow_the_reverse_path_when_asked() {
    let a = run(BASE, &[], None);
    let b = run(BASE, &["cc.feedback_route=\"reverse\""], None);
    // one switch: the reverse of the data path is the shortest path back, same run
    assert!(flow_sum(&b, "cnp_received") > 0);
    assert_eq!(
        i64s(table(&a, "flows"), "cnp_received"),
        i64s(table(&b, "flows"), "cnp_received")
    );
}

#[test]
fn dcqcn_over_a_shared_switch_memory_with_pfc() {
    // issue 14: ECN marking keeps reading its own egress queue when the switch shares one
    // packet memory among its ports; with PFC and auto headroom the lossless class drops nothing
    let text = format!("{BASE}\n[flow_control]\nmode = \"pfc\"\n[shared_buffer]\nsize = \"2MB\"\n");
    let ov = ["cc.dcqcn.cp.k_min=\"5KB\"", "cc.dcqcn.cp.k_max=\"20KB\""];
    let out = run(&text, &ov, None);
    let ports = table(&out, "ports");
    assert_eq!(i64s(ports, "drop_frames").iter().sum::<i64>(), 0);
    assert!(flow_sum(&out, "ecn_marked") > 0);
    assert!(flow_sum(&out, "cnp_received") > 0);
    // the marked queue is the egress queue sw->r: it holds at most the shared memory
    let names = strs(ports, "port");
    let q = i64s(ports, "max_qlen_bytes")[row_of(names, "sw->r")];
    assert!(q > 5_000 && q <= 2_000_000, "sw->r max queue {q}");
    // the same run with private 2 MB buffers is a different memory model, not the same tables
    let private = run(
        BASE,
        &[
            "defaults.buffer=\"2MB\"",
            "flow_control.mode=\"pfc\"",
            ov[0],
            ov[1],
        ],
        None,
    );
    assert_ne!(format!("{:?}", private.tables), format!("{:?}", out.tables));
}
