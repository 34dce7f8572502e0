//! Links that fail and recover on a schedule (docs/models/topology.md, "Link failures"):
//! routes recomputed, queued and in-flight frames dropped and counted, traffic back after the
//! recovery; hop-by-hop routing makes the same choices as the fixed paths while nothing fails.

mod common;
use common::*;

/// 2 leaves x 2 spines, 4 hosts per leaf, 10 us per link; every host of leaf0 sends to the
/// host of leaf1 with the same index (CBR 4 Gb/s), plus one 500 KB flow (2 Gb/s: 2 ms).
fn fabric(mode: &str, extra: &str, transport: &str) -> String {
    let mut s = format!(
        "[meta]\nduration = \"5ms\"\n[defaults]\nlink_delay = \"10us\"\nbuffer = \"200KB\"\n\
         [topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n\
         host_rate = \"10Gbps\"\nspine_rate = \"10Gbps\"\n[routing]\nmode = \"{mode}\"\n\
         [metrics]\nthroughput_bin = \"500us\"\nthroughput_ports = [\"leaf0->spine0\", \"leaf0->spine1\"]\n"
    );
    for h in 0..4 {
        s += &format!(
            "[[flows]]\nname = \"f{h}\"\nsrc = \"h{h}\"\ndst = \"h{}\"\nrate = \"4Gbps\"\n",
            h + 4
        );
    }
    s += &format!(
        "[[flows]]\nname = \"big\"\nsrc = \"h1\"\ndst = \"h6\"\nrate = \"2Gbps\"\nsize = \"500KB\"\ntransport = \"{transport}\"\n"
    );
    s + extra
}

const FAIL: &str = "[[schedule]]\nlink = \"leaf0-spine0\"\nat = \"1ms\"\nstate = \"down\"\n\
                    [[schedule]]\nlink = \"leaf0-spine0\"\nat = \"3ms\"\nstate = \"up\"\n";

#[test]
fn hop_by_hop_routing_equals_the_fixed_paths_while_nothing_fails() {
    for mode in ["shortest", "ecmp", "spray"] {
        let a = run(&fabric(mode, "", "udp"), &[], None);
        // a failure at the very end: every frame before it is routed hop by hop
        let late = "[[schedule]]\nlink = \"leaf1-spine1\"\nat = \"5ms\"\nstate = \"down\"\n";
        let b = run(&fabric(mode, late, "udp"), &[], None);
        let (fa, fb) = (table(&a, "flows"), table(&b, "flows"));
        for c in ["rx_frames", "rx_bytes", "tx_frames"] {
            assert_eq!(i64s(fa, c), i64s(fb, c), "{mode}: {c}");
        }
        assert_eq!(
            f64s(fa, "mean_delay_ps"),
            f64s(fb, "mean_delay_ps"),
            "{mode}"
        );
        assert_eq!(table(&b, "link_events").rows(), 1);
    }
}

#[test]
fn a_failed_link_carries_nothing_and_traffic_moves_to_the_other_spine() {
    let (out, live, late) = run_with_live(&fabric("ecmp", FAIL, "udp"));
    let tp = table(&out, "port_throughput");
    let port = strs(tp, "port");
    let t = i64s(tp, "t_ps");
    let bytes = i64s(tp, "bytes");
    let at = |p: &str, k: i64| {
        (0..port.len())
            .find(|&i| port[i] == p && t[i] == k * 500_000_000)
            .map(|i| bytes[i])
            .unwrap_or(0)
    };
    // ECMP put some flows on spine0 before the failure
    assert!(at("leaf0->spine0", 1) > 0);
    // bins 1.5..3 ms: nothing on the failed link; spine1 carries the 16 Gb/s of the leaf
    for k in 3..6 {
        assert_eq!(at("leaf0->spine0", k), 0, "bin {k}");
        assert!(
            at("leaf0->spine1", k) as f64 * 8.0 / 500e-6 > 9e9,
            "bin {k}"
        );
    }
    // after the recovery the routes use it again
    assert!(at("leaf0->spine0", 8) > 0);
    let ev = table(&out, "link_events");
    assert_eq!(strs(ev, "state"), &["down".to_string(), "up".to_string()]);
    assert_eq!(strs(ev, "link")[0], "leaf0-spine0");
    // frames on the 10 us link when it failed were lost and counted
    let in_flight = summary_value(&out, "link_failure_in_flight_drops", "").unwrap();
    assert!(in_flight > 0.0, "no frame was on the wire?");
    // every frame is accounted for: generated = received + dropped + in flight (the frames still
    // alive at the end plus those arriving after it)
    let fl = table(&out, "flows");
    let in_fl: i64 = i64s(fl, "in_flight_frames").iter().sum();
    assert_eq!(in_fl as u64, live + late);
    let dropped: i64 = i64s(fl, "dropped_frames").iter().sum::<i64>()
        + i64s(fl, "nic_dropped_frames").iter().sum::<i64>();
    let ports: i64 = i64s(table(&out, "ports"), "drop_frames").iter().sum();
    assert_eq!(
        dropped,
        ports + summary_value(&out, "unroutable_drops", "").unwrap() as i64
    );
}

#[test]
fn go_back_n_completes_across_a_failure() {
    let udp = run(&fabric("ecmp", FAIL, "udp"), &[], None);
    let gbn = run(&fabric("ecmp", FAIL, "gbn"), &[], None);
    let row = |out: &qcnsim_core::api::RunOutput| {
        let f = table(out, "fct");
        (bools(f, "finished")[0], i64s(f, "retransmitted_bytes")[0])
    };
    let lost = summary_value(&udp, "link_failure_queued_drops", "").unwrap()
        + summary_value(&udp, "link_failure_in_flight_drops", "").unwrap();
    assert!(lost > 0.0);
    // the 500 KB flow (h1 -> h6, 0 to 2 ms) crosses the failed link: open loop it loses frames
    // and never completes; with go-back-N it completes, resending what was lost
    assert_eq!(row(&udp), (false, 0));
    let (done, retx) = row(&gbn);
    assert!(done && retx > 0, "{:?}", row(&gbn));
}

#[test]
fn acks_with_no_route_left_are_counted_not_lost_silently() {
    // h1 sends the 500 KB go-back-N flow to h6 from 0 to 2 ms; its link is cut from 1 to 2 ms:
    // the ACKs h6 makes meanwhile have no route back to h1 (and those on their way find none
    // at leaf0)
    let cut = "[[schedule]]\nlink = \"h1-leaf0\"\nat = \"1ms\"\nstate = \"down\"\n\
               [[schedule]]\nlink = \"h1-leaf0\"\nat = \"2ms\"\nstate = \"up\"\n";
    let gbn = run(&fabric("ecmp", cut, "gbn"), &[], None);
    let udp = run(&fabric("ecmp", cut, "udp"), &[], None);
    assert!(summary_value(&gbn, "unroutable_control", "").unwrap() > 0.0);
    // open loop: no ACKs, and no congestion control sends feedback here
    assert_eq!(summary_value(&udp, "unroutable_control", ""), Some(0.0));
}

#[test]
fn a_host_cut_off_is_unroutable_until_its_link_returns() {
    let cut = "[[schedule]]\nlink = \"h4-leaf1\"\nat = \"1ms\"\nstate = \"down\"\n\
               [[schedule]]\nlink = \"h4-leaf1\"\nat = \"2ms\"\nstate = \"up\"\n";
    let out = run(&fabric("ecmp", cut, "udp"), &[], None);
    assert!(summary_value(&out, "unroutable_drops", "").unwrap() > 0.0);
    let fl = table(&out, "flows");
    let f0 = row_of(strs(fl, "flow"), "f0");
    // h0 -> h4 lost about a fifth of the run, not all of it
    let rx = i64s(fl, "rx_frames")[f0] as f64;
    let tx = i64s(fl, "tx_frames")[f0] as f64;
    assert!(rx / tx > 0.6 && rx / tx < 0.9, "{rx} of {tx}");
}

/// Switches s0 and s1 joined by a link `s0s1_delay` long and `hosts` each under its switch;
/// 10 Gb/s everywhere, the other links 1 us, unbounded queues; `duration` long.
fn two_switches(duration: &str, s0s1_delay: &str, hosts: &[(&str, &str)]) -> String {
    let mut s = format!(
        "[meta]\nduration = \"{duration}\"\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         buffer = \"infinite\"\nnic_buffer = \"infinite\"\n\
         [[switches]]\nname = \"s0\"\n[[switches]]\nname = \"s1\"\n\
         [[links]]\nbetween = [\"s0\", \"s1\"]\ndelay = \"{s0s1_delay}\"\n",
    );
    for (h, sw) in hosts {
        s += &format!("[[hosts]]\nname = \"{h}\"\n[[links]]\nbetween = [\"{h}\", \"{sw}\"]\n");
    }
    s
}

/// Switches s0 and s1 (10 Gb/s, 1 us links, unbounded queues). From 0 two open-ended 10 Gb/s
/// generators c, d (under s1) send to a (under s0): s1->s0 holds a backlog growing at 10 Gb/s
/// (1.25 MB at 1 ms). A go-back-N probe a -> b (under s1) of 30 frames starts at 1 ms: its data
/// arrives at once, its ACKs wait at s1->s0 behind the backlog, about 1 ms. s0-s1 fails at
/// 1.5 ms, with the probe's ACKs queued there. (Retransmission timer beyond the run.)
fn acks_queued_at_a_failing_link(ack_queue: &str) -> String {
    let mut s = two_switches(
        "1.6ms",
        "1us",
        &[("a", "s0"), ("b", "s1"), ("c", "s1"), ("d", "s1")],
    );
    for h in ["c", "d"] {
        s +=
            &format!("[[flows]]\nname = \"x{h}\"\nsrc = \"{h}\"\ndst = \"a\"\nrate = \"10Gbps\"\n");
    }
    s + &format!(
        "[[flows]]\nname = \"p\"\nsrc = \"a\"\ndst = \"b\"\ntraffic = \"greedy\"\nsize = \"45KB\"\n\
         frame = \"1500B\"\ntransport = \"gbn\"\nstart = \"1ms\"\n\
         [transport]\nrto = \"5ms\"\nack_queue = \"{ack_queue}\"\n\
         [[schedule]]\nlink = \"s0-s1\"\nat = \"1.5ms\"\nstate = \"down\"\n"
    )
}

#[test]
fn acks_dropped_with_a_failed_links_queue_are_ack_drops_not_their_flows_data() {
    let out = run(&acks_queued_at_a_failing_link("data"), &[], None);
    let fl = table(&out, "flows");
    let p = row_of(strs(fl, "flow"), "p");
    // the probe's data all arrived before the failure: it lost none, whatever its ACKs did
    assert_eq!(i64s(fl, "rx_bytes")[p], 45_000);
    assert_eq!(
        i64s(fl, "dropped_frames")[p],
        0,
        "an ACK counted as the probe's data"
    );
    // its ACKs were queued at s1->s0 (30 frames, maybe fewer when cumulative) and dropped there
    let acks = summary_value(&out, "ack_drops", "ACKs").expect("ack_drops under data") as i64;
    let ack_bytes = summary_value(&out, "ack_drop_bytes", "").unwrap() as i64;
    assert!(
        acks > 0 && ack_bytes == 64 * acks,
        "{acks} ACKs, {ack_bytes} B"
    );
    // every frame a port dropped is a flow's data frame or an ACK
    let ports: i64 = i64s(table(&out, "ports"), "drop_frames").iter().sum();
    let data: i64 = i64s(fl, "dropped_frames").iter().sum();
    let unroutable = summary_value(&out, "unroutable_drops", "").unwrap() as i64;
    assert_eq!(ports + unroutable, data + acks);
    // under control the ACKs go before the backlog: none is queued at the failure
    let ctl = run(&acks_queued_at_a_failing_link("control"), &[], None);
    assert!(summary_value(&ctl, "ack_drops", "ACKs").is_none());
    let fl = table(&ctl, "flows");
    let p = row_of(strs(fl, "flow"), "p");
    assert_eq!(i64s(fl, "dropped_frames")[p], 0);
}

#[test]
fn link_schedule_errors_name_the_field() {
    let base = fabric("ecmp", "", "udp");
    let cases = [
        ("[[schedule]]\nlink = \"leaf0-spine9\"\nat = \"1ms\"\nstate = \"down\"\n", "schedule.0.link"),
        ("[[schedule]]\nlink = \"leaf0-spine0\"\nat = \"1ms\"\nstate = \"off\"\n", "schedule.0.state"),
        ("[[schedule]]\nlink = \"leaf0-spine0\"\nat = \"1ms\"\nstate = \"up\"\n", "schedule.0.state"),
        (
            "[[schedule]]\nlink = \"leaf0-spine0\"\nat = \"2ms\"\nstate = \"down\"\n[[schedule]]\nlink = \"spine0-leaf0\"\nat = \"1ms\"\nstate = \"up\"\n",
            "schedule.1.at",
        ),
        (
            &format!("{FAIL}[flow_control]\nmode = \"pfc\"\n"),
            "flow_control.mode",
        ),
    ];
    for (extra, field) in cases {
        let e = qcnsim_core::scenario::load(&format!("{base}{extra}"), &[]).expect_err(field);
        assert!(e.to_string().contains(field), "{field}: {e}");
    }
}

use proptest::prelude::*;

/// A random two-leaf, two-or-three-spine fabric with random failures and recoveries of fabric
/// and host links, random flows (CBR and Poisson, open loop and go-back-N, QCN or not).
#[derive(Debug, Clone)]
struct Case {
    spines: usize,
    mode: usize,
    delay_ns: u64,
    buffer_kb: u64,
    flows: Vec<(usize, usize, u64, bool, bool)>,
    events: Vec<(usize, u64, u64)>,
    qcn: bool,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        2usize..=3,
        0usize..3,
        0u64..=20_000,
        5u64..=300,
        prop::collection::vec(
            (
                0usize..8,
                0usize..7,
                100u64..=900,
                any::<bool>(),
                any::<bool>(),
            ),
            1..=6,
        ),
        prop::collection::vec((0usize..14, 0u64..=2_500, 1u64..=1_500), 0..=3),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(
            |(spines, mode, delay_ns, buffer_kb, flows, events, qcn, seed)| Case {
                spines,
                mode,
                delay_ns,
                buffer_kb,
                flows,
                events,
                qcn,
                seed,
            },
        )
}

fn build(c: &Case) -> String {
    let mut s = format!(
        "[meta]\nduration = \"6ms\"\nseed = {}\n[defaults]\nlink_delay = \"{}ns\"\nbuffer = \"{}KB\"\nnic_buffer = \"infinite\"\n\
         [topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = {}\nhosts_per_leaf = 4\n\
         host_rate = \"10Gbps\"\nspine_rate = \"10Gbps\"\n[routing]\nmode = \"{}\"\n",
        c.seed % 1000,
        c.delay_ns,
        c.buffer_kb,
        c.spines,
        ["shortest", "ecmp", "spray"][c.mode]
    );
    for (i, &(src, off, rate_pm, poisson, gbn)) in c.flows.iter().enumerate() {
        let dst = (src + 1 + off) % 8;
        let rate = 10 * rate_pm;
        if gbn {
            // every other go-back-N flow is sent by a NIC holding the message: its NIC then
            // serves the open-loop flows beside it round-robin too (docs/models/network.md), so
            // they cannot starve it
            let sender = ["generator", "nic"][i % 2];
            s += &format!(
                "[[flows]]\nname = \"f{i}\"\nsrc = \"h{src}\"\ndst = \"h{dst}\"\nrate = \"{rate}Mbps\"\nsize = \"200KB\"\ntransport = \"gbn\"\nsender = \"{sender}\"\n"
            );
        } else {
            let traffic = if poisson { "poisson" } else { "cbr" };
            s += &format!(
                "[[flows]]\nname = \"f{i}\"\nsrc = \"h{src}\"\ndst = \"h{dst}\"\ntraffic = \"{traffic}\"\nrate = \"{rate}Mbps\"\n"
            );
        }
    }
    // links: the 8 host links, then leaf x spine
    let mut names: Vec<String> = (0..8).map(|h| format!("h{h}-leaf{}", h / 4)).collect();
    for l in 0..2 {
        for sp in 0..c.spines {
            names.push(format!("leaf{l}-spine{sp}"));
        }
    }
    let mut used = std::collections::HashSet::new();
    for &(li, at_us, len_us) in &c.events {
        let name = &names[li % names.len()];
        if !used.insert(name.clone()) {
            continue;
        }
        s += &format!("[[schedule]]\nlink = \"{name}\"\nat = \"{at_us}us\"\nstate = \"down\"\n");
        s += &format!(
            "[[schedule]]\nlink = \"{name}\"\nat = \"{}us\"\nstate = \"up\"\n",
            at_us + len_us
        );
    }
    // ACKs in the data queue (the default) or the control queue, by the seed's parity
    s += &format!(
        "[transport]\nack_queue = \"{}\"\n",
        ["data", "control"][(c.seed % 2) as usize]
    );
    if c.qcn {
        s += &format!(
            "[cc]\nmode = \"qcn\"\n[cc.qcn.rp]\nrl_queue = \"64MB\"\n[cc.qcn.cp]\nq_eq = \"{}B\"\n",
            c.buffer_kb * 1000 / 3
        );
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32), max_shrink_iters: 200, .. ProptestConfig::default() })]

    /// Every frame is accounted for whatever fails and when: received, dropped (counted at a
    /// port or as unroutable; a port's drops are data frames and ACKs) or still in flight; under QCN, go-back-N flows complete once every
    /// link is back (all failures end by 4 ms of a 6 ms run).
    #[test]
    fn every_frame_is_accounted_for_under_failures(c in case()) {
        let text = build(&c);
        let (out, live, late) = run_with_live(&text);
        let fl = table(&out, "flows");
        let in_fl: i64 = i64s(fl, "in_flight_frames").iter().sum();
        prop_assert!(i64s(fl, "in_flight_frames").iter().all(|&x| x >= 0), "{}", text);
        prop_assert_eq!(in_fl as u64, live + late, "{}", text);
        let dropped: i64 = i64s(fl, "dropped_frames").iter().sum::<i64>()
            + i64s(fl, "nic_dropped_frames").iter().sum::<i64>();
        let ports: i64 = i64s(table(&out, "ports"), "drop_frames").iter().sum();
        let unroutable = summary_value(&out, "unroutable_drops", "").unwrap_or(0.0) as i64;
        // a port's drops are data frames and, under ack_queue = "data", ACKs and NACKs
        let acks = summary_value(&out, "ack_drops", "ACKs").unwrap_or(0.0) as i64;
        prop_assert_eq!(dropped + acks, ports + unroutable, "{}", text);
        if let Some(fct) = out.table("fct") {
            let tr = strs(fct, "transport");
            let fin = bools(fct, "finished");
            for k in 0..tr.len() {
                // with QCN pacing every source (without it, open-loop sources that overload a
                // link can starve go-back-N: docs/models/transport.md)
                prop_assert!(!c.qcn || tr[k] != "gbn" || fin[k], "gbn flow {} unfinished\n{}", k, text);
            }
        }
    }
}

/// Hosts a (under s0) and b (under s1), 10 Gb/s links, s0-s1 10 us long, the others 1 us. A
/// go-back-N flow a -> b of 1,000 frames of 1500 B starts at 0 (greedy, 1.2 ms at line rate);
/// b acknowledges every frame (`transport.ack_interval` = 1), one 64 B ACK every frame time
/// (1,520 B with preamble and gap: 1.216 us) on s1 -> s0. s0-s1 fails at 0.5 ms for good.
fn acks_on_a_failing_wire(ack_queue: &str) -> String {
    two_switches("1ms", "10us", &[("a", "s0"), ("b", "s1")])
        + &format!(
        "[[flows]]\nname = \"p\"\nsrc = \"a\"\ndst = \"b\"\ntraffic = \"greedy\"\nsize = \"1.5MB\"\n\
         frame = \"1500B\"\ntransport = \"gbn\"\n\
         [transport]\nrto = \"5ms\"\nack_queue = \"{ack_queue}\"\n\
         [[schedule]]\nlink = \"s0-s1\"\nat = \"0.5ms\"\nstate = \"down\"\n"
    )
}

#[test]
fn control_frames_on_a_failing_wire_are_lost_and_counted() {
    for ack_queue in ["data", "control"] {
        let out = run(&acks_on_a_failing_wire(ack_queue), &[], None);
        let v = |k: &str| summary_value(&out, k, "").unwrap();
        // the ACKs on the 10 us wire when it failed: one per 1.216 us, so 8 or 9 of them (and
        // their first bits left within the 10 us plus an ACK's own 0.067 us before)
        let acks = v("link_failure_in_flight_control_drops");
        assert!(
            (8.0..=9.0).contains(&acks),
            "{ack_queue}: {acks} ACKs lost on the wire"
        );
        // so were the data frames on the other direction of the same wire, as many, give or take one
        let data = v("link_failure_in_flight_drops");
        assert!(
            (acks - data).abs() <= 1.0,
            "{ack_queue}: {data} data frames, {acks} ACKs"
        );
        // nothing was queued towards the failed link to be dropped: the ACKs leave s1 at once
        // (control queue, or a data queue that only ACKs use), and so does the flow's data at s0
        assert_eq!(v("link_failure_queued_control_drops"), 0.0, "{ack_queue}");
    }
}

#[test]
fn control_frames_queued_at_a_failed_port_are_counted() {
    // The probe starts 10 us before the failure and the backlog's frames are of 9,000 B: its
    // ACKs (control frames, going before the backlog) wait at s1 -> s0 for the data frame on
    // the wire, 7.2 us, one ACK arriving per 1.216 us, so a few are queued at any instant but
    // right after a data frame.
    let sc = acks_queued_at_a_failing_link("control")
        .replace("start = \"1ms\"", "start = \"1.49ms\"")
        .replace(
            "dst = \"a\"\nrate = \"10Gbps\"\n",
            "dst = \"a\"\nrate = \"10Gbps\"\nframe = \"9000B\"\n",
        );
    let out = run(&sc, &[], None);
    let v = |k: &str| summary_value(&out, k, "").unwrap();
    let queued = v("link_failure_queued_control_drops");
    assert!(
        (1.0..=6.0).contains(&queued),
        "{queued} ACKs queued in s1 -> s0's control queue at the failure"
    );
    // under "control" they are no ACK drops of a data queue
    assert!(summary_value(&out, "ack_drops", "ACKs").is_none());
}
