//! Extreme accepted values (issue 10): every time, rate and interval the reader accepts is one
//! the engine handles. Random scenarios draw link delays, durations, sampling intervals and rates
//! from the edges of what the reader allows (1 ps, 1 bps, 1000 Tbps, 10^6 s); each one is either
//! refused with a ScenarioError or runs to its end without a panic, with
//! - every sample time within [0, duration], in order, and each sampled table within its row
//!   budget (`metrics.max_sample_rows`);
//! - no frame delivered before it could cross the network (no wrapped arrival time);
//! - a port never sending faster than its (possibly scheduled) rate.
//!
//! A second property does the same for sizes and counts: buffers of 1 B to 2^64 - 1 B or frames,
//! flow sizes up to 2^64 - 1 B (refused above 1 PB), frames of 64 to 9216 B, wire overhead up to
//! 1000 B, the QCN/BCN byte sizes (Qeq, sampling base, byte counter, rate-limiter queue and
//! burst) and PAUSE thresholds at their edges: each case is refused with the field and what is
//! allowed, or runs with conserved, non-negative frame counts. (It found the ideal FCT looping
//! once per frame of a flow of 2^63 B, and flow sizes wrapping in the i64 `size_bytes` column.)

mod common;
use common::*;
use proptest::prelude::*;
use qcnsim_core::api;
use qcnsim_core::units::{MAX_TIME, SEC};

const TIMES: &[u64] = &[
    0,
    1,
    1_000,
    1_000_000_000,
    SEC,
    MAX_TIME / 3,
    MAX_TIME - 1,
    MAX_TIME,
];
const RATES: &[&str] = &["1bps", "3bps", "1Kbps", "10Gbps", "400Gbps", "1000Tbps"];
const MAX_ROWS: u64 = 500;

#[derive(Debug, Clone)]
struct Case {
    duration: u64,
    delay: u64,
    link: usize,
    sched: Option<(u64, usize)>,
    flow_pm: u64,
    frame: u32,
    q_iv: u64,
    r_iv: u64,
    bin: u64,
    qcn: bool,
}

fn time() -> impl Strategy<Value = u64> {
    prop_oneof![
        prop::sample::select(TIMES.to_vec()),
        1u64..=MAX_TIME,
        1u64..10_000_000
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        time(),
        time(),
        0..RATES.len(),
        prop::option::of((time(), 0..RATES.len())),
        1u64..=1000,
        prop::sample::select(vec![64u32, 1500, 9216]),
        time(),
        time(),
        time(),
        any::<bool>(),
    )
        .prop_map(
            |(duration, delay, link, sched, flow_pm, frame, q_iv, r_iv, bin, qcn)| Case {
                duration: duration.max(1),
                delay,
                link,
                sched,
                flow_pm,
                frame,
                q_iv: q_iv.max(1),
                r_iv: r_iv.max(1),
                bin: bin.max(1),
                qcn,
            },
        )
}

fn rate_bps(s: &str) -> f64 {
    qcnsim_core::units::parse_rate(s).unwrap()
}

fn toml(c: &Case) -> String {
    let link = RATES[c.link];
    let flow_rate = (rate_bps(link) * c.flow_pm as f64 / 1000.0)
        .max(1.0)
        .floor();
    // QCN's timers tick every few ms while a rate limiter is active: keep those runs short
    let duration = if c.qcn {
        c.duration.min(SEC / 10)
    } else {
        c.duration
    };
    let mut t = format!(
        "[meta]\nduration = \"{duration}ps\"\nmax_frames = 20000\n\
         [defaults]\nlink_rate = \"{link}\"\nlink_delay = \"{}ps\"\n\
         [[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[switches]]\nname = \"sw\"\n\
         [[links]]\nbetween = [\"a\", \"sw\"]\n[[links]]\nbetween = [\"sw\", \"b\"]\n\
         [[flows]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\nrate = \"{flow_rate}bps\"\nframe = \"{}B\"\n\
         [cc]\nmode = \"{}\"\n\
         [metrics]\nqueue_interval = \"{}ps\"\nrate_interval = \"{}ps\"\nthroughput_bin = \"{}ps\"\n\
         max_sample_rows = {MAX_ROWS}\n",
        c.delay,
        c.frame,
        if c.qcn { "qcn" } else { "none" },
        c.q_iv,
        c.r_iv,
        c.bin
    );
    if let Some((at, r)) = c.sched {
        let r = if rate_bps(RATES[r]) <= rate_bps(link) {
            RATES[r]
        } else {
            link
        };
        t.push_str(&format!(
            "[[schedule]]\nport = \"sw->b\"\nat = \"{}ps\"\nrate = \"{r}\"\n",
            at.min(duration)
        ));
    }
    t
}

fn check(c: &Case) -> Result<(), TestCaseError> {
    let text = toml(c);
    let sc = match qcnsim_core::scenario::load(&text, &[]) {
        Ok(sc) => sc,
        Err(e) => {
            // refused: with a field path and what is allowed, never a panic
            prop_assert!(!e.path.is_empty() && !e.allowed.is_empty(), "{e}");
            return Ok(());
        }
    };
    let out =
        api::run_scenario(&sc, &mut |_| true).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
    let d = sc.duration as i64;
    for (name, col) in [
        ("queue_samples", "t_ps"),
        ("rp_rates", "t_ps"),
        ("port_throughput", "t_ps"),
    ] {
        let t = table(&out, name);
        let ts = i64s(t, col);
        prop_assert!(ts.len() as u64 <= MAX_ROWS * 2, "{name}: {} rows", ts.len());
        prop_assert!(
            ts.iter().all(|&x| (0..=d).contains(&x)),
            "{name} outside [0, {d}]"
        );
        if name != "port_throughput" {
            prop_assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{name} out of order");
        }
    }
    // A frame needs two link delays to reach b: none arrives when that is beyond the run.
    let rx = i64s(table(&out, "flows"), "rx_frames")[0];
    if 2 * sc.links[0].delay > sc.duration {
        prop_assert_eq!(rx, 0, "frames arrived before they could");
    }
    // The bottleneck never sends more than its fastest rate allows over the run (plus a frame).
    let ports = table(&out, "ports");
    let names = strs(ports, "port");
    let tx = i64s(ports, "tx_bytes")[row_of(names, "sw->b")];
    let cap = sc.links[1].rate_bps * (sc.duration as f64 / SEC as f64) / 8.0 + 2.0 * c.frame as f64;
    prop_assert!(
        tx as f64 <= cap,
        "sw->b sent {tx} B, at most {cap} possible"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(64), max_shrink_iters: 200, .. ProptestConfig::default() })]

    #[test]
    fn extreme_accepted_values_run_or_are_refused(c in case()) {
        check(&c)?;
    }
}

#[test]
fn the_three_wraps_of_issue_10_are_refused_by_the_reader() {
    let base = toml(&Case {
        duration: SEC / 1000,
        delay: 1000,
        link: 3,
        sched: None,
        flow_pm: 500,
        frame: 1500,
        q_iv: SEC / 10_000,
        r_iv: SEC / 10_000,
        bin: SEC / 10_000,
        qcn: false,
    });
    for (ovr, path) in [
        ("links.0.delay=18446744073709000000ps", "links.0.delay"),
        ("meta.duration=18446744073709551615ps", "meta.duration"),
        (
            "metrics.queue_interval=18446744073709551615ps",
            "metrics.queue_interval",
        ),
    ] {
        let e = qcnsim_core::scenario::load(&base, &[ovr.to_string()]).unwrap_err();
        assert_eq!(e.path, path);
        assert!(e.allowed.contains("at most 1000000s"), "{e}");
    }
    let with_sched =
        format!("{base}[[schedule]]\nport = \"sw->b\"\nat = \"0s\"\nrate = \"0.0001bps\"\n");
    let e = qcnsim_core::scenario::load(&with_sched, &[]).unwrap_err();
    assert_eq!(e.path, "schedule.0.rate");
    assert!(e.allowed.contains("from 1bps to 1000Tbps"), "{e}");
    // the longest duration with sampling intervals equal to it: two samples, then the end
    let long = qcnsim_core::scenario::load(
        &base,
        &[
            "meta.duration=1000000s".to_string(),
            "metrics.queue_interval=1000000s".to_string(),
            "metrics.rate_interval=1000000s".to_string(),
            "metrics.throughput_bin=1000000s".to_string(),
            "flows.0.rate=1bps".to_string(),
            "links.0.rate=1bps".to_string(),
        ],
    )
    .unwrap();
    let out = api::run_scenario(&long, &mut |_| true).unwrap();
    let mut ts = i64s(table(&out, "queue_samples"), "t_ps").to_vec();
    ts.dedup();
    assert_eq!(ts, vec![0, MAX_TIME as i64]);
}

// ---------------------------------------------------------------- sizes and counts

/// Sizes at the edges of what the reader may accept (some are refused: that is checked too).
const SIZES: &[&str] = &[
    "0B",
    "1B",
    "63B",
    "64B",
    "1500B",
    "9216B",
    "1099511627776B",        // 2^40, the documented maximum of most size parameters
    "4294967295B",           // u32::MAX, cc.*.cp.q_eq's maximum
    "18446744073709551615B", // u64::MAX
];
const CAPS: &[&str] = &[
    "infinite",
    "1B",
    "64B",
    "1frames",
    "4294967295frames",
    "18446744073709551615frames",
    "18446744073709551615B",
];

#[derive(Debug, Clone)]
struct SizeCase {
    buffer: usize,
    nic_buffer: usize,
    link_buffer: Option<usize>,
    frame: u32,
    size: Option<usize>,
    overhead: (u64, u64),
    traffic: usize,
    cc: usize,
    rl_queue: Option<usize>,
    rl_burst: Option<usize>,
    q_eq: Option<usize>,
    sample_base: Option<usize>,
    byte_counter: Option<usize>,
    frt: i64,
    fb_bits: i64,
    pause: Option<(usize, usize, i64)>,
}

fn size_case() -> impl Strategy<Value = SizeCase> {
    let s = || 0..SIZES.len();
    // each cc size is left at its default or set to an edge value: a case refused for one of
    // them checks the refusal, not the run
    let o = || prop::option::weighted(0.3, 0..SIZES.len());
    (
        (
            0..CAPS.len(),
            0..CAPS.len(),
            prop::option::of(0..CAPS.len()),
        ),
        prop::sample::select(vec![64u32, 65, 1500, 9216]),
        prop::option::of(s()),
        (
            prop::sample::select(vec![0u64, 1, 1000]),
            prop::sample::select(vec![0u64, 12, 1000]),
        ),
        0usize..4,
        0usize..3,
        (o(), o(), o(), o(), o()),
        (
            prop::sample::select(vec![1i64, 5, 1000]),
            prop::sample::select(vec![3i64, 6, 8]),
        ),
        prop::option::of((s(), s(), prop::sample::select(vec![1i64, 2, 65535]))),
    )
        .prop_map(
            |(
                (buffer, nic_buffer, link_buffer),
                frame,
                size,
                overhead,
                traffic,
                cc,
                r,
                (frt, fb_bits),
                pause,
            )| SizeCase {
                buffer,
                nic_buffer,
                link_buffer,
                frame,
                size,
                overhead,
                traffic,
                cc,
                rl_queue: r.0,
                rl_burst: r.1,
                q_eq: r.2,
                sample_base: r.3,
                byte_counter: r.4,
                frt,
                fb_bits,
                pause,
            },
        )
}

fn size_toml(c: &SizeCase) -> String {
    let mut t = format!(
        "[meta]\nduration = \"300us\"\nmax_frames = 200000\n\
         [defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\nbuffer = \"{}\"\nnic_buffer = \"{}\"\n\
         preamble = \"{}B\"\nifg = \"{}B\"\n\
         [[hosts]]\nname = \"a1\"\n[[hosts]]\nname = \"a2\"\n[[hosts]]\nname = \"b\"\n\
         [[switches]]\nname = \"sw\"\n\
         [[links]]\nbetween = [\"a1\", \"sw\"]\n[[links]]\nbetween = [\"a2\", \"sw\"]\n\
         [[links]]\nbetween = [\"sw\", \"b\"]\nrate = \"5Gbps\"\n",
        CAPS[c.buffer], CAPS[c.nic_buffer], c.overhead.0, c.overhead.1
    );
    if let Some(lb) = c.link_buffer {
        t.push_str(&format!("buffer = \"{}\"\n", CAPS[lb]));
    }
    let traffic = ["cbr", "poisson", "bernoulli", "greedy"][c.traffic];
    for (name, src) in [("f1", "a1"), ("f2", "a2")] {
        t.push_str(&format!(
            "[[flows]]\nname = \"{name}\"\nsrc = \"{src}\"\ndst = \"b\"\ntraffic = \"{traffic}\"\nrate = \"4Gbps\"\nframe = \"{}B\"\n",
            c.frame
        ));
        if let Some(s) = c.size {
            t.push_str(&format!("size = \"{}\"\n", SIZES[s]));
        }
    }
    let kv = |key: &str, v: Option<usize>| {
        v.map_or(String::new(), |i| format!("{key} = \"{}\"\n", SIZES[i]))
    };
    match c.cc {
        1 => t.push_str(&format!(
            "[cc]\nmode = \"qcn\"\n[cc.qcn.cp]\n{}{}fb_bits = {}\n[cc.qcn.rp]\n{}{}{}frt = {}\n",
            kv("q_eq", c.q_eq),
            kv("sample_base", c.sample_base),
            c.fb_bits,
            kv("rl_queue", c.rl_queue),
            kv("rl_burst", c.rl_burst),
            kv("byte_counter", c.byte_counter),
            c.frt
        )),
        2 => t.push_str(&format!(
            "[cc]\nmode = \"bcn\"\n[cc.bcn.cp]\n{}{}[cc.bcn.rp]\n{}{}",
            kv("q_eq", c.q_eq),
            kv("sample_window", c.sample_base),
            kv("rl_queue", c.rl_queue),
            kv("rl_burst", c.rl_burst)
        )),
        _ => {}
    }
    if let Some((xoff, xon, quanta)) = c.pause {
        t.push_str(&format!(
            "[flow_control]\nmode = \"pause\"\nxoff = \"{}\"\nxon = \"{}\"\npause_quanta = {quanta}\n",
            SIZES[xoff], SIZES[xon]
        ));
    }
    t
}

fn check_sizes(c: &SizeCase) -> Result<(), TestCaseError> {
    let text = size_toml(c);
    let sc = match qcnsim_core::scenario::load(&text, &[]) {
        Ok(sc) => sc,
        Err(e) => {
            prop_assert!(!e.path.is_empty() && !e.allowed.is_empty(), "{e}");
            if std::env::var_os("EXTREMES_STATS").is_some() {
                eprintln!("refused {}", e.path);
            }
            return Ok(());
        }
    };
    let out = api::run_scenario(&sc, &mut |_| true)
        .map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
    if std::env::var_os("EXTREMES_STATS").is_some() {
        eprintln!("ran");
    }
    let fl = table(&out, "flows");
    let gen = i64s(fl, "gen_frames");
    let gen_b = i64s(fl, "tx_bytes");
    let rx = i64s(fl, "rx_frames");
    let drop = i64s(fl, "dropped_frames");
    let rl = i64s(fl, "rl_dropped_frames");
    let nic = i64s(fl, "nic_dropped_frames");
    let infl = i64s(fl, "in_flight_frames");
    let size = i64s(fl, "size_bytes");
    for i in 0..gen.len() {
        // counts are non-negative and conserved: no count wrapped
        prop_assert!(
            gen[i] >= 0 && rx[i] >= 0 && infl[i] >= 0,
            "flow {i}\n{text}"
        );
        prop_assert_eq!(
            gen[i],
            rx[i] + drop[i] + rl[i] + nic[i] + infl[i],
            "flow {}\n{}",
            i,
            text
        );
        // at most 10 Gb/s for 300 us from each source (plus a frame), whatever the sizes
        prop_assert!(
            gen_b[i] <= 375_000 + 9216,
            "flow {i} sent {} B\n{text}",
            gen_b[i]
        );
        if size[i] >= 0 {
            // (a last frame below 64 B is padded to 64 B)
            prop_assert!(
                gen_b[i] < size[i] + 64,
                "finite flow {i} sent beyond its size\n{text}"
            );
        }
    }
    // a port's queue never holds more than its capacity allows
    let ports = table(&out, "ports");
    let names = strs(ports, "port");
    let maxq = i64s(ports, "max_qlen_bytes");
    for (k, n) in names.iter().enumerate() {
        prop_assert!(maxq[k] >= 0, "{n}: max queue {}", maxq[k]);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(64), max_shrink_iters: 200, .. ProptestConfig::default() })]

    #[test]
    fn extreme_sizes_and_counts_run_or_are_refused(c in size_case()) {
        check_sizes(&c)?;
    }
}
