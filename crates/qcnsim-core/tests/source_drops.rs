//! Frames dropped at a full rate-limiter queue, and greedy sources (docs/models/network.md).
//!
//! - Counting the frames a full rate-limiter queue would drop, without building them, gives
//!   exactly the tables of building and dropping each one (random cases, proptest, and a fixed
//!   case where nearly every frame is dropped at the source).
//! - A greedy source is CBR at its rate while nothing holds it back, and never loses a frame at
//!   its own rate limiter: it waits, and the queue stays full.

mod common;
use common::*;
use proptest::prelude::*;
use qcnsim_core::api::RunOutput;
use qcnsim_core::scenario;
use std::fmt::Write;

/// Run with frames dropped at the source counted (default) or built and dropped one by one;
/// lazy (default) or one-event-per-frame generation.
fn run_mode(text: &str, counted: bool, lazy: bool) -> (RunOutput, u64) {
    run_sim(
        text,
        |sim| {
            sim.set_counted_drops(counted);
            sim.set_lazy_generation(lazy);
        },
        |sim| sim.live_data_frames(),
    )
}

fn rl_drops(o: &RunOutput) -> i64 {
    i64s(table(o, "flows"), "rl_dropped_frames").iter().sum()
}

#[derive(Debug, Clone)]
struct Src {
    traffic: usize,
    /// Offered rate, per mille of the 10 Gb/s NIC rate.
    rate_pm: u64,
    frame: u32,
    size: Option<u64>,
    start_us: u64,
    stop_us: Option<u64>,
}

#[derive(Debug, Clone)]
struct Case {
    srcs: Vec<Src>,
    bottleneck_mbps: u64,
    /// 0 QCN, 1 BCN
    cc: u8,
    rl_queue: u64,
    rl_burst: Option<u64>,
    /// Sample the host queues (materialises lazily generated frames between departures).
    host_queues: Option<u64>,
    pause: bool,
    duration_us: u64,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    let src = (
        0usize..3,
        200u64..=1000,
        64u32..=1500,
        prop::option::weighted(0.3, 1_000u64..2_000_000),
        0u64..2_000,
        prop::option::weighted(0.3, 2_500u64..8_000),
    )
        .prop_map(|(traffic, rate_pm, frame, size, start_us, stop_us)| Src {
            traffic,
            rate_pm,
            frame,
            size,
            start_us,
            stop_us,
        });
    (
        prop::collection::vec(src, 1..=5),
        1_000u64..=8_000,
        0u8..2,
        64u64..=30_000,
        prop::option::weighted(0.3, 64u64..=20_000),
        prop::option::weighted(0.3, 50u64..=500),
        prop::bool::weighted(0.2),
        3_000u64..=8_000,
        any::<u32>(),
    )
        .prop_map(
            |(
                srcs,
                bottleneck_mbps,
                cc,
                rl_queue,
                rl_burst,
                host_queues,
                pause,
                duration_us,
                seed,
            )| Case {
                srcs,
                bottleneck_mbps,
                cc,
                rl_queue,
                rl_burst,
                host_queues,
                pause,
                duration_us,
                seed: seed as u64,
            },
        )
}

/// A dumbbell: each source on its own 10 Gb/s link into one switch, one slower bottleneck.
fn toml(c: &Case) -> String {
    let mut t = String::new();
    writeln!(
        t,
        "[meta]\nname = \"drops\"\nduration = \"{}us\"\nseed = {}\n\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"2us\"\nbuffer = \"150000B\"",
        c.duration_us, c.seed
    )
    .unwrap();
    for i in 0..c.srcs.len() {
        writeln!(t, "[[hosts]]\nname = \"h{i}\"").unwrap();
    }
    writeln!(t, "[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"").unwrap();
    for i in 0..c.srcs.len() {
        writeln!(t, "[[links]]\nbetween = [\"h{i}\", \"sw\"]").unwrap();
    }
    writeln!(
        t,
        "[[links]]\nbetween = [\"sw\", \"sink\"]\nrate = \"{}Mbps\"",
        c.bottleneck_mbps
    )
    .unwrap();
    for (i, s) in c.srcs.iter().enumerate() {
        let traffic = ["cbr", "bernoulli", "poisson"][s.traffic];
        writeln!(
            t,
            "[[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"sink\"\ntraffic = \"{traffic}\"\nrate = \"{}Mbps\"\nframe = \"{}B\"\nstart = \"{}us\"",
            s.rate_pm * 10,
            s.frame,
            s.start_us
        )
        .unwrap();
        if let Some(b) = s.size {
            // a generator, as the open-ended flows here (a sized flow's default is a NIC, which
            // never drops its own frames: tests/sender.rs)
            writeln!(t, "size = \"{b}B\"\nsender = \"generator\"").unwrap();
        }
        if let Some(us) = s.stop_us {
            writeln!(t, "stop = \"{us}us\"").unwrap();
        }
    }
    let cc = ["qcn", "bcn"][c.cc as usize];
    writeln!(t, "[cc]\nmode = \"{cc}\"").unwrap();
    if c.cc == 0 {
        writeln!(t, "[cc.qcn.cp]\nq_eq = \"30000B\"").unwrap();
    }
    writeln!(t, "[cc.{cc}.rp]\nrl_queue = \"{}B\"", c.rl_queue).unwrap();
    if let Some(b) = c.rl_burst {
        writeln!(t, "rl_burst = \"{b}B\"").unwrap();
    }
    if c.pause {
        writeln!(
            t,
            "[flow_control]\nmode = \"pause\"\nwatermark = \"egress\"\nxoff = \"60KB\"\nxon = \"40KB\""
        )
        .unwrap();
    }
    write!(t, "[metrics]\nqueue_interval = \"100us\"\n").unwrap();
    match c.host_queues {
        Some(us) => writeln!(t, "host_queues = true\nrate_interval = \"{us}us\"").unwrap(),
        None => writeln!(t, "host_queues = false\nrate_interval = \"100us\"").unwrap(),
    }
    t
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24), max_shrink_iters: 100, .. ProptestConfig::default() })]

    #[test]
    fn counted_source_drops_equal_built_and_dropped_frames(c in case()) {
        let text = toml(&c);
        let (counted, live_c) = run_mode(&text, true, true);
        let (built, live_b) = run_mode(&text, false, true);
        prop_assert!(tables_text(&counted) == tables_text(&built), "tables differ:\n{}", text);
        prop_assert_eq!(counted.events, built.events);
        prop_assert_eq!(live_c, live_b);
    }
}

/// Ten 10 Gb/s CBR sources into one 10 Gb/s bottleneck under QCN (htsim's QCN scenario as
/// CBR sources): most frames are dropped at the sources' full rate-limiter queues.
fn ten_at_line_rate(duration: &str, traffic: &str) -> String {
    format!(
        "[meta]\nname = \"x\"\nduration = \"{duration}\"\nseed = 3\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"10us\"\nswitch_latency = \"0ns\"\nbuffer = \"100frames\"\n\
         [[hosts]]\nname = \"h{{i}}\"\ncount = 10\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
         [[links]]\nbetween = [\"h{{i}}\", \"sw\"]\ncount = 10\n[[links]]\nbetween = [\"sw\", \"sink\"]\n\
         [[flows]]\nname = \"f{{i}}\"\nsrc = \"h{{i}}\"\ndst = \"sink\"\ntraffic = \"{traffic}\"\nrate = \"10Gbps\"\ncount = 10\n\
         [cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"33000B\"\n[metrics]\nhost_queues = true\nrate_interval = \"1ms\"\n"
    )
}

#[test]
fn counting_is_exact_when_nearly_every_frame_is_dropped_at_the_source() {
    let text = ten_at_line_rate("40ms", "cbr");
    let (counted, _) = run_mode(&text, true, true);
    let (built, _) = run_mode(&text, false, true);
    let (eager, _) = run_mode(&text, false, false);
    assert_eq!(tables_text(&counted), tables_text(&built));
    // one event per frame builds and drops every frame at its generation instant
    assert_eq!(tables_text(&counted), tables_text(&eager));
    let gen: i64 = i64s(table(&counted, "flows"), "gen_frames").iter().sum();
    let drops = rl_drops(&counted);
    assert!(
        drops * 2 > gen,
        "the case should drop most frames at the source: {drops} of {gen}"
    );
}

#[test]
fn greedy_without_a_rate_limiter_is_cbr_at_the_nic_rate() {
    // No congestion control: a greedy source with no rate is CBR at its NIC's link rate.
    let base = |traffic: &str, rate_a: &str, rate_c: &str| {
        format!(
            "[meta]\nname = \"g\"\nduration = \"3ms\"\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
             [[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[hosts]]\nname = \"c\"\n[[switches]]\nname = \"sw\"\n\
             [[links]]\nbetween = [\"a\", \"sw\"]\n[[links]]\nbetween = [\"c\", \"sw\"]\nrate = \"40Gbps\"\n[[links]]\nbetween = [\"sw\", \"b\"]\n\
             [[flows]]\nsrc = \"a\"\ndst = \"b\"\ntraffic = \"{traffic}\"\n{rate_a}frame = \"1000B\"\nstart = \"7ns\"\n\
             [[flows]]\nsrc = \"c\"\ndst = \"b\"\ntraffic = \"{traffic}\"\n{rate_c}frame = \"1000B\"\nsize = \"123456B\"\n"
        )
    };
    let greedy = run(&base("greedy", "", ""), &[], None);
    // the default rate is the NIC's: 10 and 40 Gb/s
    assert_eq!(
        f64s(table(&greedy, "flows"), "offered_bps"),
        &[10e9, 40e9],
        "greedy offered rate"
    );
    // the same as CBR at those rates, except for the traffic column (1000 B frames take
    // 800 ns at 10 Gb/s and 200 ns at 40 Gb/s: whole picoseconds, so both schedules agree)
    let cbr = run(
        &base("cbr", "rate = \"10Gbps\"\n", "rate = \"40Gbps\"\n"),
        &[],
        None,
    );
    for t in [
        "flows",
        "ports",
        "summary",
        "queue_samples",
        "port_throughput",
        "events",
    ] {
        let (a, b) = (table(&greedy, t), table(&cbr, t));
        for (ca, cb) in a.columns.iter().zip(&b.columns) {
            if ca.name == "traffic" {
                continue;
            }
            // (by their text: NaN equals NaN)
            assert_eq!(format!("{ca:?}"), format!("{cb:?}"), "{t}.{}", ca.name);
        }
    }
    let gen = i64s(table(&greedy, "flows"), "gen_frames");
    assert_eq!(gen[1], 124, "123456 B in 1000 B frames");
    assert!(gen[0] >= 3700, "{gen:?}");
}

#[test]
fn greedy_under_qcn_waits_instead_of_losing_frames() {
    let greedy = run(&ten_at_line_rate("30ms", "greedy"), &[], None);
    let cbr = run(&ten_at_line_rate("30ms", "cbr"), &[], None);
    let fl = table(&greedy, "flows");
    assert!(
        rl_drops(&cbr) > 10_000,
        "CBR at line rate loses frames at the source"
    );
    assert_eq!(
        rl_drops(&greedy),
        0,
        "a greedy source never drops at its rate limiter"
    );
    // Every generated frame left the rate limiter or is still in its queue, and each queue is
    // full: 100 frames of 1500 B (the default rl_queue of 150 KB) once QCN has cut the rates.
    let hq = table(&greedy, "host_queues");
    let (t, bytes) = (i64s(hq, "t_ps"), i64s(hq, "rl_qlen_bytes"));
    let late: Vec<i64> = t
        .iter()
        .zip(bytes)
        .filter(|(t, _)| **t >= 20_000_000_000)
        .map(|(_, b)| *b)
        .collect();
    assert!(!late.is_empty());
    assert!(late.iter().all(|&b| b == 150_000), "{late:?}");
    let gen = i64s(fl, "gen_frames");
    let tx = i64s(fl, "tx_frames");
    for i in 0..10 {
        assert_eq!(
            gen[i] - tx[i],
            100,
            "flow {i}: generated {} sent {}",
            gen[i],
            tx[i]
        );
    }
    // both saturate the bottleneck
    let rx = |o: &RunOutput| i64s(table(o, "flows"), "rx_bytes").iter().sum::<i64>() as f64;
    let (g, c) = (rx(&greedy), rx(&cbr));
    assert!(
        (g - c).abs() < 0.05 * c,
        "greedy {g} B vs CBR {c} B delivered"
    );
}

#[test]
fn greedy_rate_is_checked_like_any_rate() {
    let text = ten_at_line_rate("1ms", "greedy")
        .replace("rate = \"10Gbps\"\ncount", "rate = \"20Gbps\"\ncount");
    let err = scenario::load(&text, &[]).expect_err("faster than the NIC");
    let msg = err.to_string();
    assert!(
        msg.contains("flows.0.rate") && msg.contains("NIC link rate"),
        "{msg}"
    );
    let text = ten_at_line_rate("1ms", "greedier");
    let err = scenario::load(&text, &[]).expect_err("unknown kind");
    assert!(err.to_string().contains("greedy"), "{err}");
}
