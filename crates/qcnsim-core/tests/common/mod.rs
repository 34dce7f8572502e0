//! Helpers shared by the integration tests: running a scenario and reading typed columns.
#![allow(dead_code)]

pub mod random_net;

use qcnsim_core::api::{ColumnData, RunOutput, Table};
use qcnsim_core::scenario;
use qcnsim_core::sim::Sim;

/// A 4-leaf / 2-spine leaf-spine with 40 Gb/s hosts, PFC and DCQCN with their defaults, and a
/// 16-to-1 incast of 500 KB into `h0` at 100 us (tests/sender.rs, tests/fct_stats.rs).
pub const INCAST_40G: &str = r#"
[meta]
duration = "5ms"
[topology]
leaves = 4
spines = 2
hosts_per_leaf = 8
host_rate = "40Gbps"
spine_rate = "40Gbps"
[routing]
mode = "ecmp"
[flow_control]
mode = "pfc"
[cc]
mode = "dcqcn"
[[workloads]]
name = "incast"
kind = "incast"
senders = 16
dst = "h0"
size = "500KB"
start = "100us"
"#;

/// htsim's QCN scenario, 20 ms: ten greedy 10 Gb/s sources `h0`.. (1500 B frames) into one
/// switch `sw` and one 10 Gb/s bottleneck towards a sink that sends nothing, 10 us links, no
/// switch latency, 100-frame buffers, standard QCN (Qeq 33,000 B). Callers add `[metrics]`.
pub const HTSIM_QCN: &str = "[meta]\nname = \"htsim-qcn\"\nduration = \"20ms\"\nseed = 1\n\
    [defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"10us\"\nswitch_latency = \"0ns\"\nbuffer = \"100frames\"\n\
    [[hosts]]\nname = \"h{i}\"\ncount = 10\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
    [[links]]\nbetween = [\"h{i}\", \"sw\"]\ncount = 10\n[[links]]\nbetween = [\"sw\", \"sink\"]\n\
    [[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"sink\"\ntraffic = \"greedy\"\nrate = \"10Gbps\"\n\
    frame = \"1500B\"\ncount = 10\n[cc]\nmode = \"qcn\"\n[cc.qcn.cp]\nq_eq = \"33000B\"\n";

/// `n` go-back-N flows `f0`.. of `size` (long-lived when far beyond the run) from their own
/// hosts `h0`.. through one switch `sw` into one receiver `r`, every link `rate` with one-way
/// `delay`, frames of `frame`, no buffer limits, 20 ms: the network and flows of the
/// end-to-end algorithms' tests (tests/dctcp.rs, timely.rs, swift.rs), which add `[cc]` and
/// `[metrics]`.
pub fn gbn_incast(n: usize, rate: &str, delay: &str, frame: &str, size: &str) -> String {
    use std::fmt::Write;
    let mut s = format!(
        "[meta]\nduration = \"20ms\"\n[defaults]\nlink_rate = \"{rate}\"\nlink_delay = \"{delay}\"\n\
         switch_latency = \"0us\"\nbuffer = \"infinite\"\nnic_buffer = \"infinite\"\n\
         [[switches]]\nname = \"sw\"\n[[hosts]]\nname = \"r\"\n[[links]]\nbetween = [\"sw\", \"r\"]\n"
    );
    for h in 0..n {
        writeln!(
            s,
            "[[hosts]]\nname = \"h{h}\"\n[[links]]\nbetween = [\"h{h}\", \"sw\"]\n\
             [[flows]]\nname = \"f{h}\"\nsrc = \"h{h}\"\ndst = \"r\"\ntraffic = \"greedy\"\n\
             size = \"{size}\"\ntransport = \"gbn\"\nframe = \"{frame}\""
        )
        .unwrap();
    }
    s
}

/// The lossless fabric of the end-to-end algorithms' property tests: flows `(size B, frame B,
/// start us)` from their own hosts into `r`, through `s0` or, with `two_switches`, `s1` then
/// `s0`; `rate_gbps` links of 2 µs, no buffer limits, priority 3 with PFC (ingress watermarks,
/// xoff 40 KB, xon 30 KB), 100 µs of arrivals and drain mode up to 1 s. The caller adds `[cc]`
/// (and `[transport]`, `[metrics]`).
pub fn lossless_incast(rate_gbps: u32, two_switches: bool, flows: &[(u64, u32, u32)]) -> String {
    use std::fmt::Write;
    let mut s = format!(
        "[meta]\nduration = \"100us\"\ndrain_until = \"1s\"\n[defaults]\nlink_rate = \"{rate_gbps}Gbps\"\n\
         link_delay = \"2us\"\nbuffer = \"infinite\"\nnic_buffer = \"infinite\"\n\
         [[switches]]\nname = \"s0\"\n[[hosts]]\nname = \"r\"\n"
    );
    if two_switches {
        s += "[[switches]]\nname = \"s1\"\n[[links]]\nbetween = [\"s1\", \"s0\"]\n";
    }
    s += "[[links]]\nbetween = [\"s0\", \"r\"]\n";
    let edge = if two_switches { "s1" } else { "s0" };
    for (i, &(size, frame, start)) in flows.iter().enumerate() {
        writeln!(
            s,
            "[[hosts]]\nname = \"h{i}\"\n[[links]]\nbetween = [\"h{i}\", \"{edge}\"]\n\
             [[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"r\"\ntraffic = \"greedy\"\n\
             size = \"{size}B\"\nframe = \"{frame}B\"\nstart = \"{start}us\"\ntransport = \"gbn\"\npriority = 3"
        )
        .unwrap();
    }
    s + "[flow_control]\nmode = \"pfc\"\nwatermark = \"ingress\"\nxoff = \"40KB\"\nxon = \"30KB\"\n"
}

/// Run a [`lossless_incast`] scenario of `n` flows and check what every end-to-end algorithm
/// owes a lossless fabric: every flow finished, every byte delivered (a last frame under 64 B
/// is padded to 64 B), no frame dropped, nothing left in flight or alive. Returns the run for
/// the algorithm's own checks.
pub fn lossless_flows_finish(
    text: &str,
    n: usize,
) -> Result<RunOutput, proptest::test_runner::TestCaseError> {
    use proptest::prelude::*;
    let (out, live, _late) = run_with_live(text);
    let fct = table(&out, "fct");
    let flows = table(&out, "flows");
    let fin = bools(fct, "finished");
    for k in 0..n {
        prop_assert!(fin[k], "flow f{} unfinished\n{}", k, text);
    }
    for (&d, &z) in i64s(fct, "delivered_bytes")
        .iter()
        .zip(i64s(fct, "size_bytes"))
    {
        prop_assert!(d >= z && d < z + 64, "delivered {} of {}", d, z);
    }
    prop_assert_eq!(i64s(flows, "dropped_frames").iter().sum::<i64>(), 0);
    prop_assert!(
        i64s(flows, "in_flight_frames").iter().all(|&x| x == 0),
        "{}",
        text
    );
    prop_assert_eq!(live, 0);
    Ok(out)
}

/// Run scenario text (with `path=value` overrides) to the end; panics on a scenario error.
pub fn run(text: &str, overrides: &[&str], seed: Option<u64>) -> RunOutput {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    qcnsim_core::api::run(text, &ov, seed, &mut |_| true)
        .unwrap_or_else(|e| panic!("scenario failed: {e}\n{text}"))
}

/// Run through `Sim` directly, returning the output and `live_data_frames()` at the end.
/// Run a scenario and also return the data frames alive at the end and those delivered after it.
pub fn run_with_live(text: &str) -> (RunOutput, u64, u64) {
    run_with_live_opts(text, true)
}

/// As [`run_with_live`], choosing lazy (default) or one-event-per-frame generation.
pub fn run_with_live_opts(text: &str, lazy: bool) -> (RunOutput, u64, u64) {
    let (out, (live, late)) = run_sim(
        text,
        |sim| sim.set_lazy_generation(lazy),
        |sim| (sim.live_data_frames(), sim.late_data_frames()),
    );
    (out, live, late)
}

/// Run through `Sim` directly: `configure` sets its test switches before the run, `read` takes
/// its counters after it; panics on a scenario error.
pub fn run_sim<T>(
    text: &str,
    configure: impl FnOnce(&mut Sim),
    read: impl FnOnce(&Sim) -> T,
) -> (RunOutput, T) {
    let sc = scenario::load(text, &[]).unwrap_or_else(|e| panic!("scenario failed: {e}\n{text}"));
    let mut sim = Sim::new(&sc, sc.seed);
    configure(&mut sim);
    sim.run(&mut |_| true).expect("run");
    let counters = read(&sim);
    (sim.into_output(sc.seed, 0.0), counters)
}

/// Every table, every value (floats by their text, so NaN equals NaN).
pub fn tables_text(o: &RunOutput) -> String {
    format!("{:?}", o.tables)
}

pub fn table<'a>(out: &'a RunOutput, name: &str) -> &'a Table {
    out.table(name)
        .unwrap_or_else(|| panic!("table {name} missing"))
}

pub fn i64s<'a>(t: &'a Table, c: &str) -> &'a [i64] {
    match t.column(c) {
        Some(ColumnData::I64(v)) => v,
        other => panic!("{}.{c}: not an i64 column: {other:?}", t.name),
    }
}

pub fn f64s<'a>(t: &'a Table, c: &str) -> &'a [f64] {
    match t.column(c) {
        Some(ColumnData::F64(v)) => v,
        other => panic!("{}.{c}: not an f64 column: {other:?}", t.name),
    }
}

pub fn strs<'a>(t: &'a Table, c: &str) -> &'a [String] {
    match t.column(c) {
        Some(ColumnData::Str(v)) => v,
        other => panic!("{}.{c}: not a string column: {other:?}", t.name),
    }
}

/// The strings of a string column, `Str` or `Cat` (e.g. `rp_rates.flow`), one per row.
pub fn names(t: &Table, c: &str) -> Vec<String> {
    let col = t
        .column(c)
        .unwrap_or_else(|| panic!("{}.{c}: no such column", t.name));
    (0..col.len())
        .map(|i| {
            col.str_at(i)
                .unwrap_or_else(|| panic!("{}.{c}: not a string column", t.name))
                .to_string()
        })
        .collect()
}

pub fn bools<'a>(t: &'a Table, c: &str) -> &'a [bool] {
    match t.column(c) {
        Some(ColumnData::Bool(v)) => v,
        other => panic!("{}.{c}: not a bool column: {other:?}", t.name),
    }
}

/// Value of a `summary` metric whose detail contains `detail_part` (first match).
pub fn summary_value(out: &RunOutput, metric: &str, detail_part: &str) -> Option<f64> {
    let s = table(out, "summary");
    let m = strs(s, "metric");
    let d = strs(s, "detail");
    let v = f64s(s, "value");
    (0..m.len())
        .find(|&i| m[i] == metric && d[i].contains(detail_part))
        .map(|i| v[i])
}

/// Index of `name` in a string column.
pub fn row_of(col: &[String], name: &str) -> usize {
    col.iter()
        .position(|s| s == name)
        .unwrap_or_else(|| panic!("row {name:?} not found in {col:?}"))
}
