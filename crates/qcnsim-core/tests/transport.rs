//! Go-back-N transport (docs/models/transport.md): finite flows complete over a lossy fabric,
//! every frame accepted exactly once and in order, and never a retransmission over a lossless
//! (PFC) fabric.

mod common;
use common::*;
use proptest::prelude::*;
use std::fmt::Write;

/// Three senders into one receiver through one switch whose egress buffers are `buffer`.
fn incast(buffer: &str, transport: &str, extra: &str) -> String {
    let mut s = format!(
        "[meta]\nduration = \"20ms\"\n[defaults]\nbuffer = \"{buffer}\"\nnic_buffer = \"infinite\"\n\
         [[switches]]\nname = \"sw\"\n"
    );
    for h in 0..4 {
        writeln!(s, "[[hosts]]\nname = \"h{h}\"\n[[links]]\nbetween = [\"h{h}\", \"sw\"]\nrate = \"10Gbps\"\ndelay = \"1us\"").unwrap();
    }
    for h in 0..3 {
        writeln!(
            s,
            "[[flows]]\nname = \"f{h}\"\nsrc = \"h{h}\"\ndst = \"h3\"\nrate = \"10Gbps\"\nsize = \"{}B\"\nstart = \"{}us\"\ntransport = \"{transport}\"",
            300_000 + 1_234 * h,
            5 * h
        )
        .unwrap();
    }
    s + extra
}

#[test]
fn gbn_completes_every_flow_on_a_lossy_bottleneck() {
    let out = run(&incast("30KB", "gbn", ""), &[], None);
    let fct = table(&out, "fct");
    let flows = table(&out, "flows");
    assert!(
        bools(fct, "finished").iter().all(|&x| x),
        "every gbn flow finishes"
    );
    // every byte accepted exactly once
    assert_eq!(i64s(fct, "delivered_bytes"), i64s(fct, "size_bytes"));
    let frames: Vec<i64> = i64s(fct, "size_bytes")
        .iter()
        .map(|b| (b + 1499) / 1500)
        .collect();
    assert_eq!(i64s(flows, "rx_frames"), &frames[..]);
    // the 3:1 incast into 30 KB lost frames, which were resent
    assert!(i64s(flows, "dropped_frames").iter().sum::<i64>() > 0);
    assert!(i64s(fct, "retransmitted_bytes").iter().all(|&b| b > 0));
    assert!(i64s(fct, "nacks").iter().sum::<i64>() > 0);
    assert!(strs(fct, "transport").iter().all(|t| t == "gbn"));
    // nothing left in flight at the end
    assert!(i64s(flows, "in_flight_frames").iter().all(|&n| n == 0));
    // the same flows open loop: lost frames are lost
    let udp = run(&incast("30KB", "udp", ""), &[], None);
    let fu = table(&udp, "fct");
    assert!(bools(fu, "finished").iter().any(|&x| !x));
    assert!(i64s(fu, "retransmitted_bytes").iter().all(|&b| b == 0));
    assert!(strs(fu, "transport").iter().all(|t| t == "udp"));
}

#[test]
fn gbn_never_retransmits_over_pfc() {
    let pfc = "[flow_control]\nmode = \"pfc\"\nwatermark = \"ingress\"\nxoff = \"60KB\"\nxon = \"40KB\"\n";
    let out = run(&incast("infinite", "gbn", pfc), &[], None);
    let fct = table(&out, "fct");
    assert!(bools(fct, "finished").iter().all(|&x| x));
    assert_eq!(i64s(fct, "delivered_bytes"), i64s(fct, "size_bytes"));
    for c in [
        "retransmitted_bytes",
        "timeouts",
        "nacks",
        "discarded_frames",
    ] {
        assert!(i64s(fct, c).iter().all(|&x| x == 0), "{c}");
    }
    // the fabric was congested: the switch paused the senders
    let sent: i64 = i64s(table(&out, "pause_priorities"), "pause_sent")
        .iter()
        .sum();
    assert!(sent > 0, "no pause was sent: the test would be vacuous");
}

#[test]
fn a_short_timeout_recovers_a_lost_tail() {
    // one flow; the switch's buffer holds 2 frames and the sender bursts 4 at line rate into a
    // 1 Gb/s link: frames are lost including the last one, so only a timeout can recover it
    let text = "[meta]\nduration = \"10ms\"\n[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n\
        [[switches]]\nname = \"sw\"\nbuffer = \"3000B\"\n\
        [[links]]\nbetween = [\"a\", \"sw\"]\nrate = \"10Gbps\"\n\
        [[links]]\nbetween = [\"sw\", \"b\"]\nrate = \"1Gbps\"\n\
        [[flows]]\nsrc = \"a\"\ndst = \"b\"\nrate = \"10Gbps\"\nsize = \"6000B\"\ntransport = \"gbn\"\n\
        [transport]\nrto = \"100us\"\n";
    let out = run(text, &[], None);
    let fct = table(&out, "fct");
    assert!(bools(fct, "finished")[0]);
    assert_eq!(i64s(fct, "delivered_bytes")[0], 6000);
    assert!(
        i64s(fct, "timeouts")[0] >= 1,
        "the lost tail needs the timer"
    );
}

#[test]
fn bad_transport_input_is_refused_with_the_field() {
    let base = incast("30KB", "gbn", "");
    for (text, field) in [
        (
            base.replace("transport = \"gbn\"", "transport = \"tcp\""),
            "flows.0.transport",
        ),
        (
            base.replacen("size = \"300000B\"\n", "", 1),
            "flows.0.transport",
        ),
        (
            base.clone() + "[transport]\nrto = \"0s\"\n",
            "transport.rto",
        ),
        (
            base.clone() + "[transport]\nack_interval = 0\n",
            "transport.ack_interval",
        ),
        (
            base.clone() + "[transport]\nack_frame = \"20B\"\n",
            "transport.ack_frame",
        ),
        (
            base.clone() + "[transport]\nwindow = 4\n",
            "transport.window",
        ),
    ] {
        let e = qcnsim_core::scenario::load(&text, &[]).expect_err(field);
        assert!(e.to_string().contains(field), "{field}: {e}");
    }
}

#[derive(Debug, Clone)]
struct Case {
    hosts: usize,
    two_switches: bool,
    mbps: Vec<u64>,
    delay_ns: Vec<u64>,
    buffer: u64,
    flows: Vec<(usize, usize, u64, u32, usize, u64)>,
    qcn: bool,
    rto_us: u64,
    ack_interval: u32,
    nack_us: u64,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        2usize..=5,
        any::<bool>(),
        prop::collection::vec(
            prop_oneof![Just(1_000u64), Just(10_000), 200u64..=10_000],
            6,
        ),
        prop::collection::vec(0u64..=5_000, 6),
        1_600u64..=40_000,
        prop::collection::vec(
            (
                0usize..5,
                0usize..4,
                1u64..=60_000,
                64u32..=1500,
                0usize..3,
                0u64..=200,
            ),
            1..=5,
        ),
        any::<bool>(),
        (20u64..=400, 1u32..=8, 0u64..=200, any::<u64>()),
    )
        .prop_map(
            |(
                hosts,
                two_switches,
                mbps,
                delay_ns,
                buffer,
                flows,
                qcn,
                (rto_us, ack_interval, nack_us, seed),
            )| Case {
                hosts,
                two_switches,
                mbps,
                delay_ns,
                buffer,
                flows,
                qcn,
                rto_us,
                ack_interval,
                nack_us,
                seed,
            },
        )
}

/// The directed links of the path from host `a` to host `b`: (link index, from the host or
/// switch with the lower index). Host h has link 1 + h; the switches' link is link 0.
fn path_links(c: &Case, a: usize, b: usize) -> Vec<(usize, bool)> {
    let sw = |h: usize| if c.two_switches { h % 2 } else { 0 };
    let mut l = vec![(1 + a, true), (1 + b, false)];
    if sw(a) != sw(b) {
        l.push((0, sw(a) == 0));
    }
    l
}

/// Each open-loop flow's rate: 90 % of its fair share of the most loaded link of its path
/// (Mb/s), so that no link is offered more than it carries and losses come only from bursts
/// meeting small buffers. (Open-loop sources that together overload a link collapse under
/// go-back-N: every go-back resends at the full rate; docs/models/transport.md, Scope and
/// limitations.)
fn rates(c: &Case) -> Vec<u64> {
    let ends: Vec<(usize, usize)> = c
        .flows
        .iter()
        .map(|&(src, off, ..)| {
            let src = src % c.hosts;
            (src, (src + 1 + off % (c.hosts - 1)) % c.hosts)
        })
        .collect();
    let mut load = std::collections::HashMap::new();
    for &(a, b) in &ends {
        for l in path_links(c, a, b) {
            *load.entry(l).or_insert(0u64) += 1;
        }
    }
    ends.iter()
        .map(|&(a, b)| {
            path_links(c, a, b)
                .iter()
                .map(|l| c.mbps[l.0 % 6] / load[l])
                .min()
                .unwrap_or(1)
                * 9
                / 10
        })
        .map(|r| r.max(1))
        .collect()
}

fn build(c: &Case) -> String {
    let mut s = format!(
        "[meta]\nduration = \"200ms\"\nseed = {}\n[defaults]\nbuffer = \"{}B\"\nnic_buffer = \"infinite\"\n",
        c.seed % 1000,
        c.buffer
    );
    writeln!(
        s,
        "[[switches]]\nname = \"s0\"\n[[switches]]\nname = \"s1\""
    )
    .unwrap();
    let mut li = 0;
    let mut link = |s: &mut String, a: &str, b: &str| {
        writeln!(
            s,
            "[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{}Mbps\"\ndelay = \"{}ns\"",
            c.mbps[li % 6],
            c.delay_ns[li % 6]
        )
        .unwrap();
        li += 1;
    };
    link(&mut s, "s0", "s1");
    for h in 0..c.hosts {
        writeln!(s, "[[hosts]]\nname = \"h{h}\"").unwrap();
        let sw = if c.two_switches { h % 2 } else { 0 };
        link(&mut s, &format!("h{h}"), &format!("s{sw}"));
    }
    for (i, &(src, off, size, frame, traffic, start_us)) in c.flows.iter().enumerate() {
        let src = src % c.hosts;
        let dst = (src + 1 + off % (c.hosts - 1)) % c.hosts;
        // a greedy source (at its NIC's rate) only with QCN, which paces it
        let traffic = ["cbr", "poisson", "greedy"][if c.qcn { traffic } else { traffic % 2 }];
        let rate = if traffic == "greedy" {
            String::new()
        } else {
            format!("rate = \"{}Mbps\"\n", rates(c)[i])
        };
        writeln!(
            s,
            "[[flows]]\nname = \"f{i}\"\nsrc = \"h{src}\"\ndst = \"h{dst}\"\ntraffic = \"{traffic}\"\n{rate}size = \"{size}B\"\nframe = \"{frame}B\"\nstart = \"{start_us}us\"\ntransport = \"gbn\""
        )
        .unwrap();
    }
    writeln!(
        s,
        "[transport]\nrto = \"{}us\"\nack_interval = {}\nnack_interval = \"{}us\"",
        c.rto_us, c.ack_interval, c.nack_us
    )
    .unwrap();
    if c.qcn {
        writeln!(
            s,
            "[cc]\nmode = \"qcn\"\n[cc.qcn.rp]\nrl_queue = \"64MB\"\n[cc.qcn.cp]\nq_eq = \"{}B\"",
            (c.buffer / 3).max(100)
        )
        .unwrap();
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(40), max_shrink_iters: 200, .. ProptestConfig::default() })]

    /// Whatever the losses (small buffers, mixed rates, QCN or not), every go-back-N flow
    /// completes with each of its frames accepted exactly once, and nothing is left in flight.
    #[test]
    fn gbn_delivers_every_byte_exactly_once(c in case()) {
        let text = build(&c);
        let (out, live, _late) = run_with_live(&text);
        let fct = table(&out, "fct");
        let flows = table(&out, "flows");
        let fin = bools(fct, "finished");
        let size = i64s(fct, "size_bytes");
        let got = i64s(fct, "delivered_bytes");
        let rx = i64s(flows, "rx_frames");
        for (k, &(_, _, _, frame, _, _)) in c.flows.iter().enumerate() {
            prop_assert!(fin[k], "flow f{} unfinished\n{}", k, text);
            let n = (size[k] + frame as i64 - 1) / frame as i64;
            prop_assert_eq!(rx[k], n, "flow f{} accepted frames\n{}", k, text);
            // the last frame is padded to 64 B
            let last = size[k] - (n - 1) * frame as i64;
            prop_assert_eq!(got[k], size[k] - last + last.max(64), "flow f{} bytes\n{}", k, text);
        }
        prop_assert!(i64s(flows, "in_flight_frames").iter().all(|&x| x == 0), "{}", text);
        prop_assert_eq!(live, 0);
    }
}
