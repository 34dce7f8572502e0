//! Extreme accepted values (issue 10): every time, rate and interval the reader accepts is one
//! the engine handles. Random scenarios draw link delays, durations, sampling intervals and rates
//! from the edges of what the reader allows (1 ps, 1 bps, 1000 Tbps, 10^6 s); each one is either
//! refused with a ScenarioError or runs to its end without a panic, with
//! - every sample time within [0, duration], in order, and each sampled table within its row
//!   budget (`metrics.max_sample_rows`);
//! - no frame delivered before it could cross the network (no wrapped arrival time);
//! - a port never sending faster than its (possibly scheduled) rate.

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
