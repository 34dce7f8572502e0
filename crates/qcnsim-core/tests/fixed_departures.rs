//! Departures fixed at enqueue (sim/core/datapath.rs, `enqueue_fixed`; sim/fastpath.rs,
//! `fixed_ports`): at a FIFO switch port towards a host whose order nothing can change, each
//! data frame's start, end and delivery are computed when it is queued, so the frame makes no
//! transmission-done event there. Tables must be exactly those of a run without it, and of a run
//! with every shortcut off: random networks (a chain of one to three switches, hosts on random
//! switches, random rates, delays, latencies, buffers and flows, synchronised sources so that
//! many events share a picosecond, QCN on and off, queue samples at intervals on both sides of
//! a frame's time, rate changes), and fixed cases.

mod common;
use common::*;
use proptest::prelude::*;
use std::fmt::Write;

/// Tables with fixed departures on (the default), off, and with every shortcut off must be
/// equal; returns (departures fixed at enqueue, events with them, events without them).
fn same_with_and_without(text: &str) -> (u64, u64, u64) {
    let read = |sim: &qcnsim_core::sim::Sim| (sim.events(), sim.fixed_departures());
    let (on, (ev_on, fixed)) = run_sim(text, |_| {}, read);
    let (off, (ev_off, fixed_off)) = run_sim(text, |sim| sim.set_fixed_departures(false), read);
    let (none, _) = run_sim(
        text,
        |sim| {
            sim.set_fixed_departures(false);
            sim.set_txdone_slot(false);
            sim.set_direct_send(false);
        },
        read,
    );
    assert_eq!(fixed_off, 0);
    assert!(
        tables_text(&on) == tables_text(&off),
        "tables differ with fixed departures on and off:\n{text}"
    );
    assert!(
        tables_text(&on) == tables_text(&none),
        "tables differ from those with every shortcut off:\n{text}"
    );
    (fixed, ev_on, ev_off)
}

#[derive(Debug, Clone)]
struct Flow {
    src: usize,
    dst: usize,
    traffic: usize,
    rate_mbps: u64,
    frame: u32,
    size: Option<u64>,
    start_us: u64,
}

#[derive(Debug, Clone)]
struct Case {
    switches: usize,
    /// Per host: its switch (modulo the switch count) and its link's rate (Mb/s) and delay (ns).
    hosts: Vec<(usize, u64, u64)>,
    core_mbps: u64,
    core_delay_ns: u64,
    latency_ns: u64,
    flows: Vec<Flow>,
    /// The first half of the hosts send, the others receive (else any host to any other).
    split: bool,
    sync: bool,
    /// 0: bytes, 1: frames, 2: infinite.
    buffer_kind: usize,
    buffer: u64,
    qcn: bool,
    queue_interval_ns: u64,
    sample_all: bool,
    /// A rate change of one host-facing port (index modulo the hosts), if any.
    rate_change: Option<usize>,
    duration_us: u64,
    seed: u64,
}

prop_compose! {
    fn flow()(
        src in 0usize..6,
        dst in 0usize..6,
        traffic in 0usize..4,
        rate_mbps in 200u64..=10_000,
        frame in prop::sample::select(vec![64u32, 512, 1000, 1500]),
        size in prop::option::weighted(0.3, 3_000u64..300_000),
        start_us in 0u64..300,
    ) -> Flow {
        Flow { src, dst, traffic, rate_mbps, frame, size, start_us }
    }
}

prop_compose! {
    fn case()(
        switches in 1usize..=3,
        hosts in prop::collection::vec(
            (
                0usize..3,
                prop::sample::select(vec![1_000u64, 2_500, 10_000, 40_000]),
                prop::sample::select(vec![0u64, 100, 1_216, 5_000, 20_000, 20_000]),
            ),
            2..=6,
        ),
        core_mbps in prop::sample::select(vec![2_500u64, 10_000, 40_000]),
        core_delay_ns in prop::sample::select(vec![0u64, 300, 1_000, 5_000]),
        latency_ns in prop::sample::select(vec![0u64, 500]),
        flows in prop::collection::vec(flow(), 1..=6),
        split in prop::bool::weighted(0.6),
        sync in prop::bool::weighted(0.4),
        buffer_kind in 0usize..3,
        buffer in prop::sample::select(vec![6_000u64, 30_000, 150_000]),
        qcn in prop::bool::ANY,
        queue_interval_ns in prop::sample::select(vec![500u64, 1_216, 2_000, 50_000, 50_000]),
        sample_all in prop::bool::ANY,
        rate_change in prop::option::weighted(0.2, 0usize..6),
        duration_us in 500u64..=2_500,
        seed in any::<u32>(),
    ) -> Case {
        Case {
            switches, hosts, core_mbps, core_delay_ns, latency_ns, flows, split, sync, buffer_kind,
            buffer, qcn, queue_interval_ns, sample_all, rate_change, duration_us,
            seed: seed as u64,
        }
    }
}

/// Switches `s0`.. in a chain, each host on its switch.
fn toml(c: &Case) -> String {
    let mut t = String::new();
    let buffer = match c.buffer_kind {
        0 => format!("{}B", c.buffer),
        1 => format!("{}frames", c.buffer / 300),
        _ => "infinite".to_string(),
    };
    writeln!(
        t,
        "[meta]\nname = \"fixed\"\nduration = \"{}us\"\nseed = {}\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\nswitch_latency = \"{}ns\"\nbuffer = \"{buffer}\"",
        c.duration_us, c.seed, c.latency_ns
    )
    .unwrap();
    for s in 0..c.switches {
        writeln!(t, "[[switches]]\nname = \"s{s}\"").unwrap();
    }
    for s in 1..c.switches {
        writeln!(
            t,
            "[[links]]\nbetween = [\"s{}\", \"s{s}\"]\nrate = \"{}Mbps\"\ndelay = \"{}ns\"",
            s - 1,
            c.core_mbps,
            c.core_delay_ns
        )
        .unwrap();
    }
    let n = c.hosts.len();
    for (i, &(sw, mbps, delay)) in c.hosts.iter().enumerate() {
        writeln!(
            t,
            "[[hosts]]\nname = \"h{i}\"\n[[links]]\nbetween = [\"h{i}\", \"s{}\"]\nrate = \"{mbps}Mbps\"\ndelay = \"{delay}ns\"",
            sw % c.switches
        )
        .unwrap();
    }
    let mut k = 0;
    for f in &c.flows {
        let (src, dst) = if c.split {
            (f.src % (n / 2), n / 2 + f.dst % (n - n / 2))
        } else {
            (f.src % n, f.dst % n)
        };
        if src == dst {
            continue;
        }
        let traffic = ["cbr", "bernoulli", "poisson", "greedy"][f.traffic];
        // synchronised: every flow CBR at one rate from 0 (many events at one picosecond);
        // at most the source's link rate
        let (traffic, rate, start) = if c.sync {
            ("cbr", 1_000, 0)
        } else {
            (traffic, f.rate_mbps.min(c.hosts[src].1), f.start_us)
        };
        writeln!(
            t,
            "[[flows]]\nname = \"f{k}\"\nsrc = \"h{src}\"\ndst = \"h{dst}\"\ntraffic = \"{traffic}\"\nrate = \"{rate}Mbps\"\nframe = \"{}B\"\nstart = \"{start}us\"",
            f.frame
        )
        .unwrap();
        if let (Some(b), false) = (f.size, traffic == "greedy") {
            writeln!(t, "size = \"{b}B\"").unwrap();
        }
        k += 1;
    }
    if k == 0 {
        writeln!(
            t,
            "[[flows]]\nname = \"f0\"\nsrc = \"h0\"\ndst = \"h1\"\ntraffic = \"greedy\"\nrate = \"{}Mbps\"\nframe = \"1500B\"",
            c.hosts[0].1
        )
        .unwrap();
    }
    if let Some(h) = c.rate_change {
        let (i, sw) = (h % n, c.hosts[h % n].0 % c.switches);
        writeln!(
            t,
            "[[schedule]]\nat = \"{}us\"\nport = \"s{sw}->h{i}\"\nrate = \"1Gbps\"",
            c.duration_us / 3
        )
        .unwrap();
    }
    if c.qcn {
        writeln!(t, "[cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"1000B\"").unwrap();
    }
    // every host-facing port's queue and throughput, or the first one's
    let ports: Vec<String> = c
        .hosts
        .iter()
        .enumerate()
        .take(if c.sample_all { n } else { 1 })
        .map(|(i, &(sw, _, _))| format!("\"s{}->h{i}\"", sw % c.switches))
        .collect();
    writeln!(
        t,
        "[metrics]\nqueue_interval = \"{}ns\"\nqueue_ports = [{p}]\nthroughput_ports = [{p}]\nthroughput_bin = \"100us\"\nrate_interval = \"100us\"\nmax_sample_rows = 1000000",
        c.queue_interval_ns,
        p = ports.join(", ")
    )
    .unwrap();
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(48), max_shrink_iters: 100, .. ProptestConfig::default() })]

    #[test]
    fn fixed_departures_give_the_tables_without_them(c in case()) {
        let (fx, ev_on, ev_off) = same_with_and_without(&toml(&c)); eprintln!("FIXED {fx} {}", ev_off - ev_on);
        // a departure fixed at enqueue saves its transmission-done, if it had one, and nothing
        // else changes
        prop_assert!(ev_on <= ev_off);
    }
}

/// htsim's QCN scenario (ten greedy sources into one bottleneck, the sink sends nothing): the
/// bottleneck's departures are fixed at enqueue, every frame makes two events (its departure
/// from the rate limiter, its arrival at the switch) instead of three.
#[test]
fn greedy_dumbbell_fixes_the_bottleneck_with_identical_tables() {
    let text = "[meta]\nname = \"g\"\nduration = \"20ms\"\nseed = 1\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"10us\"\nswitch_latency = \"0ns\"\nbuffer = \"100frames\"\n\
        [[hosts]]\nname = \"h{i}\"\ncount = 10\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
        [[links]]\nbetween = [\"h{i}\", \"sw\"]\ncount = 10\n[[links]]\nbetween = [\"sw\", \"sink\"]\n\
        [[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"sink\"\ntraffic = \"greedy\"\nrate = \"10Gbps\"\nframe = \"1500B\"\ncount = 10\n\
        [cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"33000B\"\n\
        [metrics]\nqueue_interval = \"100us\"\nqueue_ports = [\"sw->sink\"]\nthroughput_ports = [\"sw->sink\"]\n";
    let (fixed, ev_on, ev_off) = same_with_and_without(text);
    // 20 ms of a busy 10 Gb/s bottleneck: about 16,700 frames
    assert!(fixed > 16_000, "{fixed} departures fixed");
    // (a frame that finds the port idle left at its arrival without an event in either run)
    assert!(
        ev_off - ev_on >= fixed * 99 / 100,
        "{ev_on} events with, {ev_off} without, {fixed} departures fixed"
    );
}

/// A port whose host receives QCN's feedback (a sending host) keeps its transmission-dones: a
/// control frame goes before the data frames waiting there. Two hosts sending to each other
/// through one switch: no departure is fixed.
#[test]
fn a_host_that_receives_feedback_keeps_its_events() {
    let text = "[meta]\nname = \"x\"\nduration = \"2ms\"\nseed = 1\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"10us\"\nbuffer = \"100frames\"\n\
        [[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[switches]]\nname = \"sw\"\n\
        [[links]]\nbetween = [\"a\", \"sw\"]\n[[links]]\nbetween = [\"b\", \"sw\"]\nrate = \"5Gbps\"\n\
        [[flows]]\nname = \"ab\"\nsrc = \"a\"\ndst = \"b\"\ntraffic = \"greedy\"\nrate = \"10Gbps\"\n\
        [[flows]]\nname = \"ba\"\nsrc = \"b\"\ndst = \"a\"\ntraffic = \"greedy\"\nrate = \"5Gbps\"\n\
        [cc]\nmode = \"qcn\"\n";
    assert_eq!(same_with_and_without(text).0, 0);
    // without congestion management nothing goes back: both ports towards the hosts are fixed
    let (fixed, _, _) = same_with_and_without(&text.replace("mode = \"qcn\"", "mode = \"none\""));
    assert!(fixed > 1_000, "{fixed}");
}

/// Equal-time events: ten CBR sources at one rate, started together, into one port whose frames
/// leave back to back, on links whose delays make arrivals fall at the instants queued frames
/// start (and queue samples at them). The tables must still be those without fixed departures.
#[test]
fn synchronised_arrivals_at_departure_instants() {
    for delay in ["0ns", "1200ns", "1216ns", "2432ns", "10us"] {
        for interval in ["1216ns", "1217ns", "12160ns"] {
            let text = format!(
                "[meta]\nname = \"s\"\nduration = \"1ms\"\nseed = 3\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"{delay}\"\nswitch_latency = \"0ns\"\nbuffer = \"20frames\"\n\
                 [[hosts]]\nname = \"h{{i}}\"\ncount = 10\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
                 [[links]]\nbetween = [\"h{{i}}\", \"sw\"]\ncount = 10\n[[links]]\nbetween = [\"sw\", \"sink\"]\n\
                 [[flows]]\nname = \"f{{i}}\"\nsrc = \"h{{i}}\"\ndst = \"sink\"\ntraffic = \"cbr\"\nrate = \"1.25Gbps\"\nframe = \"1500B\"\ncount = 10\n\
                 [metrics]\nqueue_interval = \"{interval}\"\nqueue_ports = [\"sw->sink\"]\nthroughput_ports = [\"sw->sink\"]\nmax_sample_rows = 10000000\n"
            );
            same_with_and_without(&text);
        }
    }
}
