//! Drain mode (`meta.drain_until`, docs/scenario.md "Drain mode"): arrivals end at
//! `meta.duration`, the run goes on until every finite unicast flow has finished or the cap.

mod common;

use qcnsim_core::scenario;

/// A lossless 2-leaf / 2-spine fabric (PFC) with a web-search Poisson workload at 50 % load
/// for 2 ms of arrivals: its multi-megabyte flows cannot finish by 2 ms.
const FABRIC: &str = r#"
[meta]
duration = "2ms"
[topology]
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate = "10Gbps"
spine_rate = "40Gbps"
[routing]
mode = "ecmp"
[flow_control]
mode = "pfc"
[[workloads]]
name = "ws"
sizes = "websearch"
load = 0.5
"#;

fn finished(out: &qcnsim_core::api::RunOutput) -> Vec<bool> {
    common::bools(common::table(out, "fct"), "finished").to_vec()
}

fn summary(out: &qcnsim_core::api::RunOutput, metric: &str) -> f64 {
    common::summary_value(out, metric, "").unwrap_or_else(|| panic!("no summary row {metric}"))
}

#[test]
fn drain_finishes_a_poisson_workload_a_plain_run_leaves_unfinished() {
    let plain = common::run(FABRIC, &[], None);
    let left = finished(&plain).iter().filter(|&&b| !b).count();
    assert!(left > 0, "the plain run leaves flows unfinished");
    // the plain run has no drain rows and ends at its duration
    assert!(common::summary_value(&plain, "run_end", "").is_none());
    assert_eq!(plain.sim_time_ps, 2_000_000_000);

    let cap = 200e-3;
    let out = common::run(FABRIC, &["meta.drain_until=200ms"], None);
    let fin = finished(&out);
    // the same flows (arrivals end at duration in both)
    assert_eq!(fin.len(), finished(&plain).len());
    assert!(fin.iter().all(|&b| b), "every flow finished in drain mode");
    assert_eq!(
        common::summary_value(&out, "flows_unfinished", "all sizes"),
        Some(0.0)
    );
    let end = summary(&out, "run_end");
    assert!(end > 2e-3 && end < cap, "ended at {end} s");
    assert_eq!(summary(&out, "drain_cap_reached"), 0.0);
    assert_eq!(summary(&out, "drain_until"), cap);
    // the run ended when the last flow finished: the latest finish is the end
    let last = common::f64s(common::table(&out, "fct"), "finish_ps")
        .iter()
        .cloned()
        .fold(0.0, f64::max);
    assert_eq!(last, out.sim_time_ps as f64);
    assert_eq!((end * 1e12).round(), last);
    // time series cover the run up to its actual end, not the cap
    let tp = common::table(&out, "port_throughput");
    let t_max = *common::i64s(tp, "t_ps").iter().max().unwrap();
    assert!((t_max as f64) < last && (t_max as f64) > 2e9, "{t_max}");
}

#[test]
fn the_cap_is_reached_and_reported_when_flows_cannot_finish() {
    // a 1 GB message at 10 Gb/s needs 0.8 s: a 5 ms cap ends the run with it unfinished
    let text = format!(
        "{FABRIC}\n[[flows]]\nname = \"big\"\nsrc = \"h0\"\ndst = \"h5\"\nrate = \"10Gbps\"\nsize = \"1GB\"\nsender = \"nic\"\n"
    );
    let out = common::run(&text, &["meta.drain_until=5ms"], None);
    assert_eq!(summary(&out, "drain_cap_reached"), 1.0);
    assert_eq!(summary(&out, "run_end"), 5e-3);
    assert_eq!(out.sim_time_ps, 5_000_000_000);
    let fct = common::table(&out, "fct");
    let names = common::strs(fct, "flow");
    let k = common::row_of(names, "big");
    assert!(!common::bools(fct, "finished")[k]);
    // the message is sent past duration (its frames are not cut at 2 ms): about 5 ms at 10 Gb/s
    let got = common::i64s(fct, "delivered_bytes")[k] as f64;
    assert!(got > 5e6 && got < 6.3e6, "{got}");
    let unfinished = common::summary_value(&out, "flows_unfinished", "all sizes").unwrap();
    assert!(unfinished >= 1.0);
    // lower bounds use the actual end (the cap): (5 ms - start) / ideal
    let lb = common::run(
        &text,
        &[
            "meta.drain_until=5ms",
            "analysis.fct_unfinished=lower_bound",
        ],
        None,
    );
    let stats = common::table(&lb, "fct_stats");
    let bins = common::strs(stats, "size_bin");
    let stat = common::strs(stats, "stat");
    let flows = common::i64s(stats, "flows");
    let slow = common::f64s(stats, "slowdown");
    let lo = common::i64s(stats, "size_bin_lo");
    // the last 5 % quantile bin holds the largest flows, the 1 GB one among them
    let fct_lb = common::table(&lb, "fct");
    let ideal = common::f64s(fct_lb, "ideal_fct_ps")[k];
    let start = common::i64s(fct_lb, "start_ps")[k] as f64;
    let bound = (5e9 - start) / ideal;
    let row = (0..bins.len())
        .find(|&r| bins[r] == "p95-100" && stat[r] == "p99")
        .unwrap();
    assert!(lo[row] <= 1_000_000_000 && flows[row] >= 1);
    assert_eq!(slow[row], bound, "the bound of the unfinished 1 GB message");
}

#[test]
fn drain_without_finite_flows_ends_at_duration() {
    // open-ended sources only: nothing to wait for, the run ends at duration (and the sources
    // stop there even when their stop is later)
    let text = "[meta]\nduration = \"1ms\"\ndrain_until = \"10ms\"\n[[hosts]]\nname = \"a\"\n\
                [[hosts]]\nname = \"b\"\n[[links]]\nbetween = [\"a\", \"b\"]\n\
                [[flows]]\nsrc = \"a\"\ndst = \"b\"\nrate = \"1Gbps\"\nstop = \"5ms\"\n";
    let out = common::run(text, &[], None);
    assert_eq!(out.sim_time_ps, 1_000_000_000);
    assert_eq!(summary(&out, "run_end"), 1e-3);
    assert_eq!(summary(&out, "drain_cap_reached"), 0.0);
    let sc = scenario::load(text, &[]).unwrap();
    assert_eq!(sc.flows[0].stop, 1_000_000_000);
}

#[test]
fn drain_off_is_the_plain_run() {
    // "off" is the default: identical tables
    let a = common::run(FABRIC, &[], None);
    let b = common::run(FABRIC, &["meta.drain_until=off"], None);
    assert_eq!(common::tables_text(&a), common::tables_text(&b));
}

#[test]
fn bad_drain_values() {
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        ("meta.drain_until=1ms", "meta.drain_until", "after meta.duration = 2ms"),
        ("meta.drain_until=2ms", "meta.drain_until", "after meta.duration"),
        ("meta.drain_until=soon", "meta.drain_until", "soon"),
        ("meta.drain_until=5", "meta.drain_until", "5"),
    ];
    for (set, path, shows) in cases {
        let e = scenario::load(FABRIC, &[set.to_string()])
            .err()
            .unwrap_or_else(|| panic!("accepted: {set}"));
        assert_eq!(e.path, *path, "{set}: {e}");
        assert!(e.to_string().contains(shows), "{set}: {e}");
    }
    // the memory budget counts the whole possible run (the cap): 1 us bins (and PFC events) fit
    // 1 GB over 2 ms, not over 100 s
    let mut sets: Vec<String> = [
        "metrics.memory_budget=1GB",
        "metrics.throughput_ports=[\"leaf0->spine0\"]",
        "metrics.throughput_bin=1us",
        "metrics.max_sample_rows=1000000000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Err(e) = scenario::load(FABRIC, &sets) {
        panic!("{e}");
    }
    sets.push("meta.drain_until=100s".to_string());
    let e = scenario::load(FABRIC, &sets).expect_err("refused: 100 s of bins");
    assert_eq!(e.path, "metrics.memory_budget", "{e}");
}
