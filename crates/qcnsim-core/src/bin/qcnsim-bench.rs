//! The qcnsim benchmark: runs fixed scenarios with no Python in the process, so it can be timed
//! as a whole process beside other simulators, and prints simulated seconds per wall second,
//! events per second, frames forwarded per second and peak RSS.
//!
//! Usage:
//!   qcnsim-bench                      run every benchmark, each in its own process
//!   qcnsim-bench --only NAME          run one (--list shows them; --print NAME its scenario)
//!   qcnsim-bench --queue              the event queue alone: time per event vs events pending
//!   qcnsim-bench --scenario FILE [--set path=value ...] [--seed N]
//!   options: --duration 5s   --json
//!   --hash: print a hash of every column of every table (one line per table) instead of the
//!   figures, to check that two builds give identical tables (benches/compare_tables.py)

use qcnsim_core::api;
use std::process::ExitCode;

const DUMBBELL: &str = include_str!("../../../../benches/dumbbell-10g.toml");

/// A benchmark: a scenario (TOML text) and overrides.
struct Bench {
    name: &'static str,
    text: String,
    overrides: Vec<String>,
}

/// `n` sources on their own 10 Gb/s links into one switch, one 10 Gb/s bottleneck to a sink,
/// drop-tail 100 frames, 10 µs per link (RTT 40 µs), QCN on (Qeq 22 frames), recording as in
/// benches/dumbbell-10g.toml. Each source offers `rate` with `traffic`. `staggered`: source `i`
/// starts at `i` µs (otherwise all at 0, as in benchmark 2; 1000 synchronised CBR sources would
/// send 1000 frames into the 100-frame buffer at once, every period).
fn dumbbell(
    name: &str,
    n: usize,
    traffic: &str,
    rate: &str,
    duration: &str,
    staggered: bool,
) -> String {
    let start = if staggered { "start = \"{i}us\"\n" } else { "" };
    format!(
        r#"[meta]
name = "{name}"
duration = "{duration}"
seed = 1

[defaults]
link_rate = "10Gbps"
link_delay = "10us"
switch_latency = "0ns"
buffer = "100frames"

[[hosts]]
name = "h{{i}}"
count = {n}
[[hosts]]
name = "sink"

[[switches]]
name = "sw"

[[links]]
between = ["h{{i}}", "sw"]
count = {n}
[[links]]
between = ["sw", "sink"]

[[flows]]
name = "f{{i}}"
src = "h{{i}}"
dst = "sink"
traffic = "{traffic}"
rate = "{rate}"
frame = "1500B"
{start}count = {n}

[cc]
mode = "qcn"

[cc.qcn.cp]
q_eq = "33000B"   # 22 frames of 1500 B

[metrics]
throughput_bin = "10ms"
throughput_ports = ["sw->sink"]
queue_interval = "1ms"
queue_ports = ["sw->sink"]
rate_interval = "1ms"
events = []
"#
    )
}

/// A two-tier leaf-spine fabric: `leaves` leaf switches with `per_leaf` hosts each (10 Gb/s,
/// 1 µs), every leaf linked to each of `spines` spine switches (40 Gb/s, 1 µs); host `i` sends
/// CBR at 5 Gb/s to the host with the same position under the next leaf, so every flow crosses
/// the spine layer; routes are the simulator's static shortest paths. QCN on (Qeq 22 frames),
/// 100-frame buffers. All sources start at 0 and run at the same rate: a synchronised fabric.
fn leaf_spine(leaves: usize, spines: usize, per_leaf: usize, duration: &str) -> String {
    use std::fmt::Write;
    let hosts = leaves * per_leaf;
    let mut t = format!(
        "[meta]\nname = \"leaf-spine-{hosts}-qcn\"\nduration = \"{duration}\"\nseed = 1\n\n\
         [defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\nswitch_latency = \"0ns\"\nbuffer = \"100frames\"\n\n\
         [[hosts]]\nname = \"h{{i}}\"\ncount = {hosts}\n\n\
         [[switches]]\nname = \"leaf{{i}}\"\ncount = {leaves}\n\
         [[switches]]\nname = \"spine{{i}}\"\ncount = {spines}\n\n"
    );
    for h in 0..hosts {
        let _ = writeln!(
            t,
            "[[links]]\nbetween = [\"h{h}\", \"leaf{}\"]",
            h / per_leaf
        );
    }
    for l in 0..leaves {
        for s in 0..spines {
            let _ = writeln!(
                t,
                "[[links]]\nbetween = [\"leaf{l}\", \"spine{s}\"]\nrate = \"40Gbps\""
            );
        }
    }
    // destinations: the same position under the next leaf
    for h in 0..hosts {
        let d = (h + per_leaf) % hosts;
        let _ = writeln!(
            t,
            "[[flows]]\nname = \"f{h}\"\nsrc = \"h{h}\"\ndst = \"h{d}\"\nrate = \"5Gbps\"\nframe = \"1500B\""
        );
    }
    t.push_str(
        "\n[cc]\nmode = \"qcn\"\n\n[cc.qcn.cp]\nq_eq = \"33000B\"\n\n\
         [metrics]\nthroughput_bin = \"10ms\"\nthroughput_ports = []\nqueue_interval = \"1ms\"\nqueue_ports = []\nrate_interval = \"1ms\"\nevents = []\n",
    );
    t
}

/// A k-ary fat-tree (k³/4 hosts; 10 Gb/s links of 1 µs everywhere, 500 ns switch latency,
/// 1 MB drop-tail ports), ECMP, QCN, web-search messages (`sizes = "websearch"`) arriving at
/// every host at 50 % of its link, all-to-all: the `fabric-websearch` reference experiment's
/// fabric grown to data-center scale (docs/performance.md, "Flat cost per event"). Recording
/// off but for the rates. `--set topology.k=K` runs other sizes (k = 8: 128 hosts; 20: 2,000).
fn fat_tree(name: &str, k: usize, duration: &str) -> String {
    format!(
        r#"[meta]
name = "{name}"
duration = "{duration}"
seed = 1

[defaults]
link_delay = "1us"
switch_latency = "500ns"
nic_buffer = "infinite"

[topology]
kind = "fat-tree"
k = {k}
host_rate = "10Gbps"
agg_rate = "10Gbps"
core_rate = "10Gbps"
edge_buffer = "1MB"
agg_buffer = "1MB"
core_buffer = "1MB"

[routing]
mode = "ecmp"

[[workloads]]
name = "ws"
sizes = "websearch"
load = 0.5
pattern = "all-to-all"

[cc]
mode = "qcn"

[cc.qcn.rp]
rl_queue = "64MB"

[metrics]
throughput_bin = "1ms"
throughput_ports = []
queue_interval = "1ms"
queue_ports = []
memory_switches = "none"
rate_interval = "1ms"
events = []
"#
    )
}

/// `n` messages of `size` on one NIC: host `a` sends them all (`sender = "nic"`, line rate,
/// from 0) through switch `s` to `b`, 10 Gb/s links of 1 µs, no congestion control, recording
/// off: the NIC's scheduler alone (`defaults.nic_scheduler`, round-robin unless `overrides`
/// say otherwise). docs/performance.md, "The NIC's scheduler with 1,000 flows".
fn one_nic(name: &str, n: usize, size: &str, duration: &str) -> String {
    format!(
        r#"[meta]
name = "{name}"
duration = "{duration}"
seed = 1

[defaults]
link_rate = "10Gbps"
link_delay = "1us"
switch_latency = "0ns"

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
name = "m{{i}}"
src = "a"
dst = "b"
rate = "10Gbps"
size = "{size}"
sender = "nic"
count = {n}

[metrics]
throughput_bin = "10ms"
throughput_ports = []
queue_interval = "1ms"
queue_ports = []
rate_interval = "1ms"
events = []
"#
    )
}

/// Every benchmark (docs/performance.md). 1 and 2 are the reference benchmarks; the greedy one
/// is htsim's QCN scenario; `-10g-cbr` is the same with CBR sources at 10 Gb/s (the form older
/// builds, without greedy sources, can run); 100 and 1000 sources keep the total load of 2.
fn benches() -> Vec<Bench> {
    let b = |name, text: String, ov: &[&str]| Bench {
        name,
        text,
        overrides: ov.iter().map(|s| s.to_string()).collect(),
    };
    vec![
        b("dumbbell-10g", DUMBBELL.to_string(), &[]),
        b(
            "dumbbell-10g-qcn",
            DUMBBELL.to_string(),
            &["cc.mode=qcn", "meta.name=dumbbell-10g-qcn"],
        ),
        b(
            "dumbbell-10g-qcn-greedy",
            dumbbell(
                "dumbbell-10g-qcn-greedy",
                10,
                "greedy",
                "10Gbps",
                "5s",
                false,
            ),
            &[],
        ),
        b(
            "dumbbell-10g-qcn-10g-cbr",
            dumbbell("dumbbell-10g-qcn-10g-cbr", 10, "cbr", "10Gbps", "5s", false),
            &[],
        ),
        b(
            "dumbbell-100-qcn",
            dumbbell("dumbbell-100-qcn", 100, "cbr", "105Mbps", "1s", true),
            &[],
        ),
        b(
            "dumbbell-1000-qcn",
            dumbbell("dumbbell-1000-qcn", 1000, "cbr", "10.5Mbps", "1s", true),
            &[],
        ),
        b("leaf-spine-128-qcn", leaf_spine(8, 4, 16, "200ms"), &[]),
        b(
            "fat-tree-1024-websearch",
            fat_tree("fat-tree-1024-websearch", 16, "2ms"),
            &[],
        ),
        b(
            "fat-tree-8192-websearch",
            fat_tree("fat-tree-8192-websearch", 32, "1ms"),
            &[],
        ),
        b(
            "nic-1000-rr",
            one_nic("nic-1000-rr", 1000, "1MB", "1s"),
            &[],
        ),
        b(
            "nic-1000-fifo",
            one_nic("nic-1000-fifo", 1000, "1MB", "1s"),
            &["defaults.nic_scheduler=fifo"],
        ),
    ]
}

fn unknown(name: &str) -> String {
    let names: Vec<&str> = benches().iter().map(|b| b.name).collect();
    format!(
        "unknown benchmark {name:?}: one of {} (see --list)",
        names.join(", ")
    )
}

/// The event queue alone, in the hold model: `n` events pending; each step pops the earliest
/// and pushes one event a random time after it. Time patterns: `near` (0-20 µs ahead, in no
/// particular order within a bucket), `sync` (multiples of 1.2 µs: many equal times, as in a
/// synchronised fabric), `far` (1 % of the events 1-20 ms ahead, the rest as `near`) and
/// `paced` (event k always 1-10 ms ahead by its own period, like 1000 slow paced sources).
/// Prints nanoseconds per pop + push.
fn queue_bench(json: bool) {
    use qcnsim_core::engine::EventQueue;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for pattern in ["near", "sync", "far", "paced"] {
        for n in [16usize, 256, 1024, 4096, 16384, 65536] {
            let mut q: EventQueue<u64> = EventQueue::new();
            let gap = |k: u64, r: u64| -> u64 {
                match pattern {
                    "near" => r % 20_000_000,
                    "sync" => (1 + r % 16) * 1_200_000,
                    "far" if r % 100 == 0 => 1_000_000_000 + (r >> 8) % 19_000_000_000,
                    "far" => r % 20_000_000,
                    _ => 1_000_000_000 + (k % 1000) * 9_000_000,
                }
            };
            for k in 0..n as u64 {
                let r = rnd();
                q.push(gap(k, r), k);
            }
            // warm up (every event re-pushed once), then at most 2 M steps or about 2 s
            for _ in 0..n {
                let (t, k) = q.pop().expect("n events pending");
                q.push(t + gap(k, rnd()), k);
            }
            let t0 = std::time::Instant::now();
            let mut sum = 0u64;
            let mut steps = 0u64;
            while steps < 2_000_000 && (steps % 65_536 != 0 || t0.elapsed().as_secs_f64() < 2.0) {
                let (t, k) = q.pop().expect("n events pending");
                sum = sum.wrapping_add(k);
                q.push(t + gap(k, rnd()), k);
                steps += 1;
            }
            let ns = t0.elapsed().as_secs_f64() * 1e9 / steps as f64;
            std::hint::black_box(sum);
            if json {
                println!(
                    "{{\"pattern\": \"{pattern}\", \"pending\": {n}, \"ns_per_event\": {ns:.2}}}"
                );
            } else {
                println!("queue {pattern:<6} {n:>6} pending: {ns:>7.1} ns per pop + push");
            }
        }
    }
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
                // hashed as the strings it stands for
                api::ColumnData::Cat { codes, values } => codes.iter().for_each(|&k| {
                    h.bytes(values[k as usize].as_bytes());
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
    // The JSON always carries both CPU keys: `null` where the CPU time is unknown (no
    // `/proc/thread-self/schedstat`) or, for the rate, where it read 0 (runs shorter than the
    // scheduler's accounting resolution).
    let cpu_json = match cpu_run {
        Some(c) if c > 0.0 => {
            format!("\"cpu_s\": {c:.6}, \"sim_s_per_cpu_s\": {:.4}, ", sim_s / c)
        }
        Some(c) => format!("\"cpu_s\": {c:.6}, \"sim_s_per_cpu_s\": null, "),
        None => "\"cpu_s\": null, \"sim_s_per_cpu_s\": null, ".to_string(),
    };
    let cpu_text = match cpu_run {
        Some(c) if c > 0.0 => format!("  ({:.2} sim-s/cpu-s)", sim_s / c),
        _ => String::new(),
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
    let mut print = None;
    let mut list = false;
    let mut queue = false;
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
                "--list" => list = true,
                "--queue" => queue = true,
                "--print" => {
                    print = Some(need(i)?);
                    i += 1;
                }
                "-h" | "--help" => {
                    println!("usage: qcnsim-bench [--only NAME | --scenario FILE] [--set path=value]... [--seed N] [--duration T] [--json] [--hash]\n       qcnsim-bench --list | --print NAME | --queue [--json]");
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
        match benches().into_iter().find(|b| b.name == name) {
            Some(mut b) => {
                b.overrides.extend(sets);
                run_one(b.name, &b.text, &b.overrides, seed, json, hash)
            }
            None => Err(unknown(&name)),
        }
    } else if let Some(name) = print {
        match benches().into_iter().find(|b| b.name == name) {
            Some(b) => {
                if !b.overrides.is_empty() {
                    println!("# run with --set {}", b.overrides.join(" --set "));
                }
                print!("{}", b.text);
                Ok(())
            }
            None => Err(unknown(&name)),
        }
    } else if list {
        for b in benches() {
            println!("{}", b.name);
        }
        Ok(())
    } else if queue {
        queue_bench(json);
        Ok(())
    } else {
        // each benchmark in its own process, so peak RSS is its own
        let exe = std::env::current_exe().expect("own path");
        let mut ok = Ok(());
        for n in benches().into_iter().map(|b| b.name) {
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
