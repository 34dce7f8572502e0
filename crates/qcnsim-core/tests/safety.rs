//! Safety of long or large runs (issue 27): a recording interval widened to fit
//! `metrics.max_sample_rows` is reported, not silent (docs/tables.md, "Warnings").

mod common;
use common::*;

const AB: &str = r#"
[meta]
duration = "1ms"
[defaults]
link_rate = "10Gbps"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[links]]
between = ["a", "s"]
[[links]]
between = ["s", "b"]
[[flows]]
name = "f"
src = "a"
dst = "b"
rate = "5Gbps"
"#;

#[test]
fn a_widened_interval_is_a_warning_with_the_interval_used() {
    // 1 ps bins over 1 ms at 2 switch ports: 2e9 rows, widened to fit 100,000 rows
    let out = run(AB, &["metrics.throughput_bin=1ps"], None);
    let used = summary_value(
        &out,
        "warning_interval_widened",
        "metrics.throughput_bin = 1ps",
    )
    .expect("a warning row for the widened bin");
    let bins = i64s(table(&out, "port_throughput"), "t_ps");
    // the value is the bin used: the recorded bins are that far apart
    assert!(((bins[1] - bins[0]) as f64 * 1e-12 - used).abs() < 1e-18);
    assert!(used > 1e-12);
    assert!(bins.len() <= 100_000);
    // within the budget: no warning
    let out = run(AB, &[], None);
    assert_eq!(summary_value(&out, "warning_interval_widened", ""), None);
    // the queue interval too
    let out = run(AB, &["metrics.queue_interval=1ps"], None);
    assert!(summary_value(&out, "warning_interval_widened", "metrics.queue_interval").is_some());
}

/// Print each shipped scenario's estimate (`cargo test --test safety -- --ignored --nocapture`).
#[test]
#[ignore]
fn print_estimates_of_shipped_scenarios() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        match qcnsim_core::scenario::load(&text, &[]) {
            Ok(sc) => {
                let parts = qcnsim_core::scenario::budget::estimate(&sc);
                let fl = qcnsim_core::scenario::budget::frames_in_flight(&sc);
                let tot: u128 = parts.iter().map(|p| p.bytes).sum();
                println!(
                    "{:?}: in flight {fl:.3e} frames, total {}, widened {:?}, frames cap {}",
                    f.file_name().unwrap(),
                    qcnsim_core::scenario::budget::fmt_bytes(tot),
                    sc.metrics.widened,
                    sc.metrics.frames_cap
                );
            }
            Err(e) => println!("{:?}: REFUSED {e}", f.file_name().unwrap()),
        }
    }
}

/// Senders `s0..s{n-1}` into host `d` through switch `x`, every link at `rate`.
fn incast(n: usize, rate: &str, duration: &str) -> String {
    let mut t = format!(
        "[meta]\nduration = \"{duration}\"\n[defaults]\nlink_rate = \"{rate}\"\n\
         [[hosts]]\nname = \"d\"\n[[switches]]\nname = \"x\"\n[[links]]\nbetween = [\"x\", \"d\"]\n"
    );
    for i in 0..n {
        t += &format!(
            "[[hosts]]\nname = \"s{i}\"\n[[links]]\nbetween = [\"s{i}\", \"x\"]\n\
             [[flows]]\nname = \"f{i}\"\nsrc = \"s{i}\"\ndst = \"d\"\nrate = \"{rate}\"\n"
        );
    }
    t
}

fn run_err(text: &str, overrides: &[&str]) -> String {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match qcnsim_core::api::run(text, &ov, None, &mut |_| true) {
        Ok(_) => panic!("the run was not refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_unbounded_queue_stops_the_run_at_the_memory_budget() {
    // the issue's case: a 2 ms incast at 1000 Tbps, infinite buffers (the default): the queue
    // at x->d grows by 3 x 10^15 bit/s; stopped once the frames held exceed the budget
    let t = std::time::Instant::now();
    let e = run_err(
        &incast(4, "1000Tbps", "2ms"),
        &["metrics.memory_budget=\"32MiB\"", "metrics.events=[]"],
    );
    assert!(e.contains("metrics.memory_budget"), "{e}");
    assert!(e.contains("infinite buffer"), "{e}");
    assert!(e.contains("frames and pending events"), "{e}");
    // 32 MiB / 128 B = 262,144 frames: a fraction of a second (a generous bound, not a timing
    // test: without the bound the run goes on for minutes)
    assert!(t.elapsed().as_secs() < 60);
    // a run that stays within it is unchanged by the bound
    let ok = run(&incast(2, "10Gbps", "1ms"), &[], None);
    assert!(table(&ok, "summary").rows() > 0);
}

#[test]
fn bounded_buffers_count_in_the_estimate_before_the_run() {
    // 5 switch ports x 10 GB of buffer at 1000 Tbps: about 3.3 x 10^7 frames of 1500 B can be
    // held, 4 GiB at 128 B each: refused before the run, with the figures
    let e = match qcnsim_core::scenario::load(
        &incast(4, "1000Tbps", "2ms"),
        &["defaults.buffer=\"10GB\"".into()],
    ) {
        Ok(_) => panic!("not refused"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("metrics.memory_budget"), "{e}");
    assert!(e.contains("frames in flight"), "{e}");
    assert!(e.contains("defaults.buffer"), "{e}");
    // the same with 150 KB buffers fits
    let sc = qcnsim_core::scenario::load(
        &incast(4, "1000Tbps", "2ms"),
        &["defaults.buffer=\"150KB\"".into()],
    )
    .unwrap();
    let fl = qcnsim_core::scenario::budget::frames_in_flight(&sc);
    assert!(fl > 4.0 * 100.0 && fl < 1e6, "{fl}");
}

#[test]
fn a_budget_above_the_machine_is_clamped_to_it() {
    use qcnsim_core::scenario::budget;
    // recording 10^6 events: about 160 MiB
    let sc = qcnsim_core::scenario::load(AB, &["metrics.max_event_rows=1000000".into()])
        .unwrap_or_else(|e| panic!("{e}"));
    let gib = 1u64 << 30;
    let mib = 1u64 << 20;
    // within a 1000 GiB budget, but not within a machine with 100 MiB available
    let e = budget::check_memory(&sc, 1000 * gib, Some((100 * mib, "a test".into())))
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"1000.0 GiB\""), "{e}");
    assert!(e.contains("100.0 MiB (a test)"), "{e}");
    assert!(e.contains("clamped"), "{e}");
    // a machine with more: accepted; no machine figure: the budget alone
    assert!(budget::check_memory(&sc, 1000 * gib, Some((500 * gib, "a test".into()))).is_ok());
    assert!(budget::check_memory(&sc, 1000 * gib, None).is_ok());
    // a budget below the machine: the budget's message, no clamp
    let e = budget::check_memory(&sc, 50 * mib, Some((100 * mib, "a test".into())))
        .unwrap_err()
        .to_string();
    assert!(!e.contains("clamped"), "{e}");
    // this machine's figure is read (Linux: /proc/meminfo at least)
    if cfg!(target_os = "linux") {
        let (m, from) = budget::machine_memory().expect("MemAvailable");
        assert!(m > 0 && !from.is_empty());
        // the issue's case: 1000 GiB accepted as a budget, refused by what this machine has
        let big = qcnsim_core::scenario::load(
            AB,
            &[
                "metrics.max_event_rows=1000000000".into(),
                "metrics.memory_budget=\"1000GiB\"".into(),
            ],
        );
        if m < 150 * gib {
            let e = big.err().expect("refused").to_string();
            assert!(e.contains("clamped") && e.contains(&from), "{e}");
        }
    }
}

/// Issue 27: the fluid solver's tables are bounded like the packet recorder's: a
/// `fluid.record_interval` that would record more than `metrics.max_sample_rows` rows is widened
/// to a whole multiple of its steps that does not, and reported as `warning_interval_widened`.
#[test]
fn a_fluid_record_interval_is_widened_within_max_sample_rows() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/dcqcn-fluid.toml"
    ))
    .unwrap();
    let ov = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    // 10 ms in 0.1 us steps, one row per step: 100,001 rows each, over 20,000
    let out = qcnsim_core::api::run_fluid(
        &text,
        &ov(&[
            "meta.duration=\"10ms\"",
            "fluid.record_interval=\"0.1us\"",
            "metrics.max_sample_rows=20000",
            "analysis.stats_from=\"0s\"",
        ]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let q = table(&out, "queue_samples");
    let t = i64s(q, "t_ps");
    assert!(t.len() <= 20_000 && t.len() > 10_000, "{}", t.len());
    let used = summary_value(&out, "warning_interval_widened", "fluid.record_interval")
        .expect("a warning");
    assert!(
        ((t[1] - t[0]) as f64 * 1e-12 - used).abs() < 1e-15,
        "{used}"
    );
    // (t[1] - t[0]) is a whole number of 0.1 us steps
    assert_eq!((t[1] - t[0]) % 100_000, 0);
    assert_eq!(table(&out, "rp_rates").columns[0].data.len(), t.len());
    // within the budget: no warning
    let out = qcnsim_core::api::run_fluid(
        &text,
        &ov(&["meta.duration=\"10ms\"", "analysis.stats_from=\"0s\""]),
    )
    .unwrap();
    assert_eq!(summary_value(&out, "warning_interval_widened", ""), None);
}

/// Issue 27: one estimate covers the whole run: the network, its routing tables, the flows
/// and the event queue besides recording and frames in flight; a refusal names every part.
#[test]
fn the_estimate_covers_network_routes_flows_and_events() {
    use qcnsim_core::scenario::budget;
    let sc = qcnsim_core::scenario::load(AB, &[]).unwrap();
    let parts = budget::estimate(&sc);
    for want in [
        "network (nodes and ports)",
        "routing tables",
        "flows",
        "event queue",
        "frames in flight",
    ] {
        assert!(parts.iter().any(|p| p.table == want), "{want}");
    }
    let net = parts
        .iter()
        .find(|p| p.table.starts_with("network"))
        .unwrap();
    assert_eq!(
        net.bytes,
        3 * budget::NODE_BYTES as u128 + 4 * budget::PORT_BYTES as u128
    );
    let e = qcnsim_core::scenario::load(AB, &["metrics.memory_budget=\"8KB\"".into()])
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("by part: ") && e.contains("network (nodes and ports) 4 ports"),
        "{e}"
    );
    assert!(
        e.contains("flows 1 flows") && e.contains("event queue"),
        "{e}"
    );
}
