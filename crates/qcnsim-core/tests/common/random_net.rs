//! Random networks for the tests that a fast path changes no table (tests/fixed_departures.rs,
//! tests/txdone_slot.rs): a chain of one to three switches, hosts on random switches, random
//! rates, delays, latencies, buffers and flows, synchronised sources so that many events share a
//! picosecond, QCN on and off, queue samples at intervals on both sides of a frame's time, rate
//! changes.

use proptest::prelude::*;
use std::fmt::Write;

#[derive(Debug, Clone)]
pub struct Flow {
    src: usize,
    dst: usize,
    traffic: usize,
    rate_mbps: u64,
    frame: u32,
    size: Option<u64>,
    start_us: u64,
}

#[derive(Debug, Clone)]
pub struct Case {
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
    pub fn flow()(
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
    pub fn case()(
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

/// The scenario text of a case: switches `s0`.. in a chain, each host on its switch.
pub fn toml(c: &Case) -> String {
    let mut t = String::new();
    let buffer = match c.buffer_kind {
        0 => format!("{}B", c.buffer),
        1 => format!("{}frames", c.buffer / 300),
        _ => "infinite".to_string(),
    };
    writeln!(
        t,
        "[meta]\nname = \"random\"\nduration = \"{}us\"\nseed = {}\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\nswitch_latency = \"{}ns\"\nbuffer = \"{buffer}\"",
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
