//! The transmission-done slot (docs/performance.md, "Greedy sources, fourth round"): one `TxDone` of a
//! switch port towards a host is kept beside the event queue, with the sequence number it would
//! have had in the queue, and fired where the queue would have popped it. Tables and event counts
//! must be exactly those of keeping every `TxDone` in the queue: random two-switch networks
//! (synchronised sources, so that many events share a picosecond; several host-facing ports
//! competing for the slot; QCN feedback frames queued at host-facing ports), and fixed cases.

mod common;
use common::*;
use proptest::prelude::*;
use std::fmt::Write;

/// The tables with the slot on and off must be equal, and the event counts; returns how many
/// transmission-dones fired from the slot. (Departures fixed at enqueue are off in both: they
/// would take the slot's ports; tests/fixed_departures.rs checks them.)
fn same_with_and_without(text: &str) -> u64 {
    let (on, (ev_on, fires)) = run_sim(
        text,
        |sim| sim.set_fixed_departures(false),
        |sim| (sim.events(), sim.slot_fires()),
    );
    let (off, (ev_off, fires_off)) = run_sim(
        text,
        |sim| {
            sim.set_fixed_departures(false);
            sim.set_txdone_slot(false);
        },
        |sim| (sim.events(), sim.slot_fires()),
    );
    assert_eq!(fires_off, 0);
    assert_eq!(ev_on, ev_off, "event counts differ:\n{text}");
    assert!(
        tables_text(&on) == tables_text(&off),
        "tables differ:\n{text}"
    );
    fires
}

#[derive(Debug, Clone)]
struct Flow {
    src: usize,
    dst: usize,
    traffic: usize,
    /// Offered rate, Mb/s (the same for every flow when synchronised).
    rate_mbps: u64,
    frame: u32,
    size: Option<u64>,
    start_us: u64,
}

#[derive(Debug, Clone)]
struct Case {
    srcs: usize,
    sinks: usize,
    flows: Vec<Flow>,
    sync: bool,
    core_mbps: u64,
    sink_mbps: u64,
    buffer: u64,
    qcn: bool,
    delay_us: u64,
    duration_us: u64,
    seed: u64,
}

prop_compose! {
    fn flow()(
        src in 0usize..4,
        dst in 0usize..3,
        traffic in 0usize..4,
        rate_mbps in 500u64..=10_000,
        frame in prop::sample::select(vec![64u32, 512, 1000, 1500]),
        size in prop::option::weighted(0.3, 3_000u64..500_000),
        start_us in 0u64..500,
    ) -> Flow {
        Flow { src, dst, traffic, rate_mbps, frame, size, start_us }
    }
}

prop_compose! {
    fn case()(
        srcs in 1usize..=4,
        sinks in 1usize..=3,
        flows in prop::collection::vec(flow(), 1..=6),
        sync in prop::bool::weighted(0.5),
        core_mbps in prop::sample::select(vec![2_500u64, 10_000, 40_000]),
        sink_mbps in prop::sample::select(vec![1_000u64, 5_000, 10_000]),
        buffer in prop::sample::select(vec![6_000u64, 30_000, 150_000]),
        qcn in prop::bool::ANY,
        delay_us in 1u64..=5,
        duration_us in 1_000u64..=4_000,
        seed in any::<u32>(),
    ) -> Case {
        Case {
            srcs, sinks, flows, sync, core_mbps, sink_mbps, buffer, qcn, delay_us, duration_us,
            seed: seed as u64,
        }
    }
}

/// Sources under switch `a`, sinks under switch `b`, one core link between them.
fn toml(c: &Case) -> String {
    let mut t = String::new();
    writeln!(
        t,
        "[meta]\nname = \"slot\"\nduration = \"{}us\"\nseed = {}\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"{}us\"\nbuffer = \"{}B\"",
        c.duration_us, c.seed, c.delay_us, c.buffer
    )
    .unwrap();
    writeln!(t, "[[switches]]\nname = \"a\"\n[[switches]]\nname = \"b\"").unwrap();
    writeln!(
        t,
        "[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"{}Mbps\"",
        c.core_mbps
    )
    .unwrap();
    for i in 0..c.srcs {
        writeln!(
            t,
            "[[hosts]]\nname = \"h{i}\"\n[[links]]\nbetween = [\"h{i}\", \"a\"]"
        )
        .unwrap();
    }
    for k in 0..c.sinks {
        writeln!(
            t,
            "[[hosts]]\nname = \"s{k}\"\n[[links]]\nbetween = [\"b\", \"s{k}\"]\nrate = \"{}Mbps\"",
            c.sink_mbps
        )
        .unwrap();
    }
    for (i, f) in c.flows.iter().enumerate() {
        let traffic = ["cbr", "bernoulli", "poisson", "greedy"][f.traffic];
        // synchronised: every flow CBR at one rate from 0 (many events at one picosecond)
        let (traffic, rate, start) = if c.sync {
            ("cbr", 2_000, 0)
        } else {
            (traffic, f.rate_mbps, f.start_us)
        };
        writeln!(
            t,
            "[[flows]]\nname = \"f{i}\"\nsrc = \"h{}\"\ndst = \"s{}\"\ntraffic = \"{traffic}\"\nrate = \"{rate}Mbps\"\nframe = \"{}B\"\nstart = \"{start}us\"",
            f.src % c.srcs,
            f.dst % c.sinks,
            f.frame
        )
        .unwrap();
        if let (Some(b), false) = (f.size, traffic == "greedy") {
            writeln!(t, "size = \"{b}B\"").unwrap();
        }
    }
    if c.qcn {
        writeln!(t, "[cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"3000B\"").unwrap();
    }
    let ports: Vec<String> = (0..c.sinks).map(|k| format!("\"b->s{k}\"")).collect();
    writeln!(
        t,
        "[metrics]\nqueue_interval = \"50us\"\nqueue_ports = [{}]\nrate_interval = \"100us\"",
        ports.join(", ")
    )
    .unwrap();
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32), max_shrink_iters: 100, .. ProptestConfig::default() })]

    #[test]
    fn slot_gives_the_tables_of_the_queue(c in case()) {
        same_with_and_without(&toml(&c));
    }
}

/// htsim's QCN scenario (ten greedy sources into one bottleneck): the bottleneck's
/// transmission-dones go through the slot, and QCN's feedback frames wait at the switch's ports
/// towards the sources (a control frame moves a slot `TxDone` back into the queue).
#[test]
fn greedy_dumbbell_uses_the_slot_with_identical_tables() {
    let text = "[meta]\nname = \"g\"\nduration = \"20ms\"\nseed = 1\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"10us\"\nswitch_latency = \"0ns\"\nbuffer = \"100frames\"\n\
        [[hosts]]\nname = \"h{i}\"\ncount = 10\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
        [[links]]\nbetween = [\"h{i}\", \"sw\"]\ncount = 10\n[[links]]\nbetween = [\"sw\", \"sink\"]\n\
        [[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"sink\"\ntraffic = \"greedy\"\nrate = \"10Gbps\"\nframe = \"1500B\"\ncount = 10\n\
        [cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"33000B\"\n";
    let fires = same_with_and_without(text);
    // 20 ms of a busy 10 Gb/s bottleneck: about 16,700 frames, nearly all sent back to back
    assert!(fires > 15_000, "{fires} slot fires");
}

/// With flow control the ports take the slow path and the slot is not used.
#[test]
fn pause_leaves_the_slot_unused() {
    let text = "[meta]\nname = \"p\"\nduration = \"5ms\"\nseed = 2\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\nbuffer = \"150KB\"\n\
        [[hosts]]\nname = \"h{i}\"\ncount = 3\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
        [[links]]\nbetween = [\"h{i}\", \"sw\"]\ncount = 3\n[[links]]\nbetween = [\"sw\", \"sink\"]\n\
        [[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"sink\"\ntraffic = \"cbr\"\nrate = \"5Gbps\"\nframe = \"1500B\"\ncount = 3\n\
        [flow_control]\nmode = \"pause\"\nwatermark = \"egress\"\nxoff = \"60KB\"\nxon = \"40KB\"\n";
    assert_eq!(same_with_and_without(text), 0);
}
