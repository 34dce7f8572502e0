//! The qcnsim benchmark: runs fixed scenarios with no Python in the process, so it can be timed
//! as a whole process beside other simulators, and prints simulated seconds per wall second,
//! events per second, frames forwarded per second and peak RSS.
//!
//! Usage:
//!   qcnsim-bench                      run both reference benchmarks, each in its own process
//!   qcnsim-bench --only NAME          run one (dumbbell-10g | dumbbell-10g-qcn)
//!   qcnsim-bench --scenario FILE [--set path=value ...] [--seed N]
//!   options: --duration 5s   --json
//!   --hash: print a hash of every column of every table (one line per table) instead of the
//!   figures, to check that two builds give identical tables (benches/compare_tables.py)

use qcnsim_core::api;
use std::process::ExitCode;

const DUMBBELL: &str = include_str!("../../../../benches/dumbbell-10g.toml");

fn benches() -> Vec<(&'static str, Vec<String>)> {
    vec![
        ("dumbbell-10g", vec![]),
        (
            "dumbbell-10g-qcn",
            vec![
                "cc.mode=qcn".to_string(),
                "meta.name=dumbbell-10g-qcn".to_string(),
            ],
        ),
    ]
}

fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// CPU time of the calling thread, seconds (Linux: `/proc/thread-self/schedstat`). Unlike the
/// wall time it hardly depends on what else the machine runs, so it is the figure to compare
/// on a shared machine.
fn thread_cpu_s() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// FNV-1a, 64 bit: a hash that does not depend on the Rust version or the platform.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 = (self.0 ^ x as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// One line per table: its name, rows, and a hash of every column's name and values (floats by
/// their bits, so a difference in the last bit shows).
fn print_hashes(out: &api::RunOutput) {
    for t in &out.tables {
        let mut h = Fnv::new();
        for c in &t.columns {
            h.bytes(c.name.as_bytes());
            match &c.data {
                api::ColumnData::I64(v) => v.iter().for_each(|x| h.bytes(&x.to_le_bytes())),
                api::ColumnData::F64(v) => {
                    v.iter().for_each(|x| h.bytes(&x.to_bits().to_le_bytes()))
                }
                api::ColumnData::Bool(v) => v.iter().for_each(|&x| h.bytes(&[x as u8])),
                api::ColumnData::Str(v) => v.iter().for_each(|x| {
                    h.bytes(x.as_bytes());
                    h.bytes(&[0]);
                }),
            }
        }
        println!("{:<12} {:>9} rows  {:016x}", t.name, t.rows(), h.0);
    }
}

fn run_one(
    name: &str,
    text: &str,
    overrides: &[String],
    seed: Option<u64>,
    json: bool,
    hash: bool,
) -> Result<(), String> {
    // CPU time from loading the scenario to the end of the event loop (the last progress call,
    // with fraction 1), without writing out the tables.
    let cpu0 = thread_cpu_s();
    let mut cpu_run = None;
    let out = api::run(text, overrides, seed, &mut |f| {
        if f >= 1.0 {
            cpu_run = thread_cpu_s().zip(cpu0).map(|(b, a)| b - a);
        }
        true
    })
    .map_err(|e| e.to_string())?;
    if hash {
        print_hashes(&out);
        return Ok(());
    }
    let sim_s = out.sim_time_ps as f64 / 1e12;
    let rss = peak_rss_kib().unwrap_or(0);
    let delivered: i64 = match out.table("flows").and_then(|t| t.column("rx_bytes")) {
        Some(api::ColumnData::I64(v)) => v.iter().sum(),
        _ => 0,
    };
    if std::env::var_os("QCNSIM_BENCH_SUMMARY").is_some() {
        if let Some(t) = out.table("summary") {
            if let (
                Some(api::ColumnData::Str(m)),
                Some(api::ColumnData::F64(v)),
                Some(api::ColumnData::Str(u)),
                Some(api::ColumnData::Str(d)),
            ) = (
                t.column("metric"),
                t.column("value"),
                t.column("unit"),
                t.column("detail"),
            ) {
                for i in 0..m.len() {
                    eprintln!("  {:<24} {:>14.6} {:<6} {}", m[i], v[i], u[i], d[i]);
                }
            }
        }
    }
    let (cpu_json, cpu_text) = match cpu_run {
        Some(c) if c > 0.0 => (
            format!("\"cpu_s\": {c:.6}, \"sim_s_per_cpu_s\": {:.4}, ", sim_s / c),
            format!("  ({:.2} sim-s/cpu-s)", sim_s / c),
        ),
        _ => (String::new(), String::new()),
    };
    if json {
        println!(
            "{{\"name\": \"{name}\", \"sim_s\": {sim_s}, \"wall_s\": {:.6}, \"sim_s_per_wall_s\": {:.4}, {cpu_json}\"events\": {}, \"events_per_s\": {:.0}, \"frames_forwarded\": {}, \"frames_per_s\": {:.0}, \"peak_rss_kib\": {rss}, \"delivered_bytes\": {delivered}}}",
            out.wall_s,
            sim_s / out.wall_s,
            out.events,
            out.events as f64 / out.wall_s,
            out.frames_forwarded,
            out.frames_forwarded as f64 / out.wall_s
        );
    } else {
        println!(
            "{name:<20} sim {sim_s:.3} s in {:.3} s wall: {:>7.2} sim-s/wall-s{cpu_text}  {:>6.2} M events/s  {:>6.2} M frames fwd/s  peak RSS {:.1} MB  ({} events, {} frames forwarded, {:.3} Gb/s delivered)",
            out.wall_s,
            sim_s / out.wall_s,
            out.events as f64 / out.wall_s / 1e6,
            out.frames_forwarded as f64 / out.wall_s / 1e6,
            rss as f64 / 1024.0,
            out.events,
            out.frames_forwarded,
            delivered as f64 * 8.0 / sim_s / 1e9,
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let mut only = None;
    let mut scenario = None;
    let mut sets: Vec<String> = Vec::new();
    let mut seed = None;
    let mut json = false;
    let mut hash = false;
    let mut i = 1;
    let need = |i: usize| -> Result<String, String> {
        args.get(i + 1)
            .cloned()
            .ok_or_else(|| format!("{} needs a value", args[i]))
    };
    while i < args.len() {
        let r: Result<(), String> = (|| {
            match args[i].as_str() {
                "--only" => {
                    only = Some(need(i)?);
                    i += 1;
                }
                "--scenario" => {
                    scenario = Some(need(i)?);
                    i += 1;
                }
                "--set" => {
                    sets.push(need(i)?);
                    i += 1;
                }
                "--duration" => {
                    sets.push(format!("meta.duration={}", need(i)?));
                    i += 1;
                }
                "--seed" => {
                    let v = need(i)?;
                    seed = Some(
                        v.parse::<u64>()
                            .map_err(|_| format!("--seed: {v:?} is not a whole number"))?,
                    );
                    i += 1;
                }
                "--json" => json = true,
                "--hash" => hash = true,
                "-h" | "--help" => {
                    println!("usage: qcnsim-bench [--only NAME | --scenario FILE] [--set path=value]... [--seed N] [--duration T] [--json] [--hash]");
                    std::process::exit(0);
                }
                other => return Err(format!("unknown argument {other:?} (see --help)")),
            }
            Ok(())
        })();
        if let Err(e) = r {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        i += 1;
    }
    let result = if let Some(path) = scenario {
        match std::fs::read_to_string(&path) {
            Ok(text) => run_one(&path, &text, &sets, seed, json, hash),
            Err(e) => Err(format!("cannot read {path:?}: {e}")),
        }
    } else if let Some(name) = only {
        match benches().into_iter().find(|(n, _)| *n == name) {
            Some((n, mut ov)) => {
                ov.extend(sets);
                run_one(n, DUMBBELL, &ov, seed, json, hash)
            }
            None => Err(format!(
                "unknown benchmark {name:?}: dumbbell-10g or dumbbell-10g-qcn"
            )),
        }
    } else {
        // each benchmark in its own process, so peak RSS is its own
        let exe = std::env::current_exe().expect("own path");
        let mut ok = Ok(());
        for (n, _) in benches() {
            let mut cmd = std::process::Command::new(&exe);
            cmd.arg("--only").arg(n);
            for s in &sets {
                cmd.arg("--set").arg(s);
            }
            if json {
                cmd.arg("--json");
            }
            if hash {
                cmd.arg("--hash");
            }
            match cmd.status() {
                Ok(s) if s.success() => {}
                Ok(s) => ok = Err(format!("benchmark {n} failed ({s})")),
                Err(e) => ok = Err(format!("cannot start {exe:?}: {e}")),
            }
        }
        ok
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
