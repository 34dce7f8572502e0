//! What a run will allocate for recording and frames in flight, known before it starts
//! (docs/performance.md, "Memory"): sampled tables are kept within `metrics.max_sample_rows`
//! rows each by sampling less often (each widening reported as a warning), and a run whose
//! recording and bounded queues would still exceed `metrics.memory_budget` (clamped to the
//! memory the machine has available), or whose sources would send an absurd number of frames
//! (`meta.max_frames`), is refused with the estimate and the field to change; queues with an
//! infinite buffer are bounded while the run goes (`frames_cap`).

use super::reader::TableReader;
use super::{Capacity, CcMode, NodeKind, Scenario};
use crate::scenario::ScenarioError;
use crate::units::{self, SimTime};
use serde_json::Value as Json;

/// Bytes per row while recording plus in the result table (a name column costs a `String`:
/// 24 bytes plus its heap block). Sized from the recorder's vectors and `sim/output.rs`.
pub const RATE_ROW: u64 = 29 + 40;
pub const QUEUE_ROW: u64 = 28 + 40;
pub const MEMORY_ROW: u64 = 20 + 40;
pub const HOST_QUEUE_ROW: u64 = 52 + 40;
/// A throughput bin: two counters while recording; port, time, bin, bytes, frames, bit/s after.
pub const BIN_ROW: u64 = 16 + 80;
/// An event row: the 32-byte record, then time, kind, node, flow and value columns.
pub const EVENT_ROW: u64 = 32 + 8 + 3 * 40 + 8;

/// Bytes a frame in flight holds: its 32-byte frame in the arena, its index in a queue (4 B)
/// and in the free list (4 B), and the event that carries it over a link (24 B), doubled for
/// vectors that grow by doubling (`sim/core/mod.rs`, `engine/`).
pub const FRAME_IN_FLIGHT: u64 = 2 * (32 + 4 + 4 + 24);

/// What a run holds per node, per port (one direction of a link) and per flow besides its
/// recording and its frames in flight, measured with `/usr/bin/time` on loading and building
/// fat-trees (k = 32, 64) and leaf-spines (10,000 hosts on 100 leaves; 1,000 leaves of 64
/// spines), and on loading 6,700 and 13,400 generated flows (docs/performance.md, "Memory"):
/// the node's and the link's specification, name and resolved entry (kept for `run.json`, and
/// written out at the end), and the simulator's state (a port: its struct and queues, its
/// recorder and congestion-point slots; a flow: its source, rate limiter and reaction point,
/// path and counters).
pub const NODE_BYTES: u64 = 900;
pub const PORT_BYTES: u64 = 1_800;
pub const FLOW_BYTES: u64 = 4_000;
/// A pending event in the event queue (24 bytes, doubled for growth): every port and about
/// three timers per flow (source, reaction point, transport) at once; the events that carry
/// frames over links are counted with the frames in flight.
pub const EVENT_BYTES: u64 = 48;

/// The network's part of the estimate (nodes and ports), from counts alone: what a generated
/// fabric is checked with before it is generated.
pub fn network_bytes(nodes: u128, ports: u128) -> u128 {
    nodes * NODE_BYTES as u128 + ports * PORT_BYTES as u128
}

/// Default of `metrics.max_sample_rows`: at most about 10 MB per sampled table, so that a run of
/// 1000 QCN flows over 1 s with 1 ms rate samples stays under 32 MB peak RSS
/// (docs/performance.md, "Memory"). The shipped scenarios that record more (og-stability's 400
/// flows, multicast-multilink's 8 queues at 100 us) set a larger budget in their file.
pub const DEFAULT_MAX_SAMPLE_ROWS: i64 = 100_000;
/// Default of `metrics.memory_budget`.
pub const DEFAULT_MEMORY_BUDGET: u64 = 2 << 30;
/// Default of `meta.max_frames`: at the ~10^7 frames per second of wall time qcnsim forwards on
/// one core, about three hours.
pub const DEFAULT_MAX_FRAMES: i64 = 100_000_000_000;

/// Samples taken at `0, interval, 2 interval, ...` up to and including `duration`.
pub fn samples(duration: SimTime, interval: SimTime) -> u128 {
    (duration / interval) as u128 + 1
}

/// The interval that keeps `per_sample` rows per sample within `max_rows` rows over `duration`:
/// `interval` itself when it already does, else the smallest whole multiple of it that does
/// (at most `duration`, which leaves the samples at 0 and at the end).
pub fn decimate(duration: SimTime, interval: SimTime, per_sample: u64, max_rows: u64) -> SimTime {
    let rows = samples(duration, interval) * per_sample as u128;
    if per_sample == 0 || rows <= max_rows as u128 {
        return interval;
    }
    let mut k = 1u128.max(rows.div_ceil(max_rows.max(1) as u128));
    // rows(k * interval) can exceed rows / k by one sample: step up until it fits
    loop {
        let cand = (interval as u128 * k).min(duration.max(interval) as u128) as SimTime;
        if cand as u128 >= duration as u128
            || samples(duration, cand) * per_sample as u128 <= max_rows as u128
        {
            return cand;
        }
        k += 1;
    }
}

/// One part of the estimate: a recorded table, or what the run holds besides recording.
#[derive(Debug, Clone)]
pub struct Part {
    pub table: &'static str,
    pub rows: u128,
    /// What `rows` counts ("rows", "frames", "ports", "flows", "events", "bytes").
    pub unit: &'static str,
    pub bytes: u128,
    /// The field(s) that change it.
    pub fields: &'static str,
}

/// Rows recorded per sample / bin by each sampled recorder.
#[derive(Debug, Clone, Copy, Default)]
pub struct PerSample {
    pub throughput_ports: u64,
    pub queue_ports: u64,
    pub memory_switches: u64,
    pub rate_flows: u64,
    pub host_queue_flows: u64,
    pub pause_bin_ports: u64,
}

impl PerSample {
    pub fn of(sc: &Scenario) -> PerSample {
        let m = &sc.metrics;
        let count = |v: &[bool]| v.iter().filter(|&&b| b).count() as u64;
        let flows = sc.flows.len() as u64;
        PerSample {
            throughput_ports: count(&m.throughput_ports),
            queue_ports: count(&m.queue_ports),
            memory_switches: count(&m.memory_switches),
            rate_flows: if sc.cc != CcMode::None { flows } else { 0 },
            host_queue_flows: if m.host_queues { flows } else { 0 },
            pause_bin_ports: if sc.fc.is_on() {
                count(&m.throughput_ports)
            } else {
                0
            },
        }
    }
}

/// What a run will hold in memory, part by part: the network (nodes and ports), the routing
/// tables, the flows, the event queue, each recorded table (the sampled tables at their
/// intervals as resolved, events at their cap `metrics.max_event_rows` when any kind is
/// recorded) and the frames in flight at the configured buffers.
pub fn estimate(sc: &Scenario) -> Vec<Part> {
    let mut parts = holdings(sc);
    parts.extend(recording(sc));
    parts
}

/// The parts that are not recording nor frames in flight.
fn holdings(sc: &Scenario) -> Vec<Part> {
    let ports = sc.n_ports() as u128;
    let flows = sc.flows.len() as u128;
    let hops: u128 = sc.flows.iter().map(|f| f.path.len() as u128).sum();
    // with link failures the routes of the moment are a second copy
    let routes = sc.routes.bytes() as u128 * if sc.link_events.is_empty() { 1 } else { 2 };
    vec![
        Part {
            table: "network (nodes and ports)",
            rows: ports,
            unit: "ports",
            bytes: network_bytes(sc.nodes.len() as u128, ports),
            fields: "the topology: topology.*, [[hosts]], [[switches]], [[links]]",
        },
        Part {
            table: "routing tables",
            rows: routes,
            unit: "bytes",
            bytes: routes,
            fields: "the topology (docs/models/topology.md \"Route tables: memory\")",
        },
        Part {
            table: "flows",
            rows: flows,
            unit: "flows",
            bytes: flows * FLOW_BYTES as u128 + hops * 8,
            fields: "[[flows]], [[workloads]]",
        },
        Part {
            table: "event queue",
            rows: ports + 3 * flows,
            unit: "events",
            bytes: (ports + 3 * flows) * EVENT_BYTES as u128,
            fields: "the topology and the flows",
        },
    ]
}

/// What recording will allocate, table by table, and the frames in flight.
fn recording(sc: &Scenario) -> Vec<Part> {
    let m = &sc.metrics;
    let n = PerSample::of(sc);
    let d = sc.max_end();
    let bins = samples(d, m.throughput_bin);
    let q = samples(d, m.queue_interval);
    let r = samples(d, m.rate_interval);
    let part = |table, rows: u128, row: u64, fields| Part {
        table,
        rows,
        unit: "rows",
        bytes: rows * row as u128,
        fields,
    };
    let mut parts = vec![
        part(
            "port_throughput",
            bins * n.throughput_ports as u128,
            BIN_ROW,
            "metrics.throughput_bin, metrics.throughput_ports",
        ),
        part(
            "pause_bins",
            bins * n.pause_bin_ports as u128,
            BIN_ROW,
            "metrics.throughput_bin, metrics.throughput_ports",
        ),
        part(
            "queue_samples",
            q * n.queue_ports as u128,
            QUEUE_ROW,
            "metrics.queue_interval, metrics.queue_ports",
        ),
        part(
            "switch_memory",
            q * n.memory_switches as u128,
            MEMORY_ROW,
            "metrics.queue_interval, metrics.memory_switches",
        ),
        part(
            "rp_rates",
            r * n.rate_flows as u128,
            RATE_ROW,
            "metrics.rate_interval",
        ),
        part(
            "host_queues",
            r * n.host_queue_flows as u128,
            HOST_QUEUE_ROW,
            "metrics.rate_interval, metrics.host_queues",
        ),
    ];
    let fl = frames_in_flight(sc).ceil();
    parts.push(Part {
        table: "frames in flight",
        rows: fl as u128,
        unit: "frames",
        bytes: fl as u128 * FRAME_IN_FLIGHT as u128,
        fields: "the buffers (defaults.buffer, switches.*.buffer, links.*.buffer), the flows' \
                 rates and meta.duration",
    });
    if m.record_mask != 0 || m.record_switch_drops || m.record_pause {
        parts.push(part(
            "events",
            m.max_event_rows as u128,
            EVENT_ROW,
            "metrics.max_event_rows, metrics.events",
        ));
    }
    parts
}

/// A count: whole below a million, else "1.234e7".
pub fn fmt_count(n: u128) -> String {
    if n < 1_000_000 {
        n.to_string()
    } else {
        format!("{:.3e}", n as f64)
    }
}

pub fn fmt_bytes(b: u128) -> String {
    const UNITS: [(&str, f64); 4] = [
        ("TiB", 1099511627776.0),
        ("GiB", 1073741824.0),
        ("MiB", 1048576.0),
        ("KiB", 1024.0),
    ];
    let x = b as f64;
    for (u, f) in UNITS {
        if x >= f {
            return format!("{:.1} {u}", x / f);
        }
    }
    format!("{b} B")
}

/// The summary rows `warning_interval_widened` (docs/tables.md, "Warnings"): one per interval
/// that `apply` widened, its value the interval used in seconds.
pub fn widened_warnings(sc: &Scenario) -> Vec<(String, f64, String, String)> {
    let table = |key: &str| match key {
        "throughput_bin" => "port_throughput (and pause_bins)",
        "queue_interval" => "queue_samples and switch_memory",
        _ => "rp_rates and host_queues",
    };
    sc.metrics
        .widened
        .iter()
        .map(|&(key, asked, used)| {
            (
                "warning_interval_widened".into(),
                units::secs(used),
                "s".into(),
                format!(
                    "metrics.{key} = {} widened to {} ({} times) to keep {} within \
                     metrics.max_sample_rows",
                    units::fmt_time(asked),
                    units::fmt_time(used),
                    used / asked,
                    table(key)
                ),
            )
        })
        .collect()
}

/// The most frames the run can hold at once in its bounded queues (docs/performance.md,
/// "Memory"): at most every frame its sources send (`frames`), and at most what its queues can
/// hold plus what its links carry. A queue holds at most its buffer (its node's shared memory,
/// when it has one) and at most what can reach it over the run: at a switch, all its input
/// links at their rates; at a host, what its flows send. Each flow's rate-limiter queue holds
/// at most its `rl_queue`. Counted in frames of the smallest size the flows send. Queues with
/// an infinite buffer are not counted here: the run itself stops when the frames it holds
/// exceed the budget (`frames_cap`).
pub fn frames_in_flight(sc: &Scenario) -> f64 {
    let sent = frames(sc);
    let small = sc
        .flows
        .iter()
        .map(|f| f.frame_bytes)
        .min()
        .unwrap_or(64)
        .max(64) as f64;
    let d = units::secs(sc.max_end());
    let nn = sc.nodes.len();
    // per node: the frames that can reach its egress queues over the run, and their buffers
    let mut inflow = vec![0.0f64; nn];
    let mut cap = vec![0.0f64; nn];
    let mut wires = 0.0;
    for p in 0..sc.n_ports() {
        let (from, to) = sc.port_ends(p);
        let l = &sc.links[p / 2];
        if sc.nodes[to].kind == NodeKind::Switch {
            inflow[to] += l.rate_bps * d / (8.0 * small);
        }
        wires += l.rate_bps * units::secs(l.delay + l.extra_delay) / (8.0 * small) + 1.0;
        cap[from] += match sc.port_capacity(p) {
            Capacity::Bytes(b) => b as f64 / small,
            Capacity::Frames(n) => n as f64,
            Capacity::Infinite => f64::INFINITY,
            Capacity::Shared => 0.0,
        };
    }
    for (n, c) in cap.iter_mut().enumerate() {
        if sc.buffer.has(n) {
            *c += sc.buffer.size.unwrap_or(0) as f64 / small;
        }
    }
    let rl_cap = match sc.cc {
        CcMode::Bcn => sc.bcn.rl_queue_bytes,
        CcMode::Dcqcn => sc.dcqcn.rl_queue_bytes,
        CcMode::Dctcp => sc.dctcp.rl_queue_bytes,
        CcMode::Hpcc => sc.hpcc.rl_queue_bytes,
        _ => sc.qcn.rl_queue_bytes,
    } as f64;
    let mut rl = 0.0;
    for f in &sc.flows {
        let on = f.stop.min(sc.max_end()).saturating_sub(f.start);
        let mut n = f.rate_bps * units::secs(on) / (8.0 * f.frame_bytes as f64);
        if let Some(size) = f.size_bytes {
            n = n.min((size as f64 / f.frame_bytes as f64).ceil());
        }
        inflow[f.src] += n;
        rl += n.min((rl_cap / f.frame_bytes as f64).ceil());
    }
    // a queue without a bound (an infinite buffer) is bounded while the run goes (`frames_cap`)
    let queues: f64 = (0..nn)
        .filter(|&n| cap[n].is_finite())
        .map(|n| cap[n].min(inflow[n]))
        .sum();
    sent.min(queues + wires + rl)
}

/// The memory this machine can give a run, and where it was read: `MemAvailable` in
/// `/proc/meminfo`, and, when the process runs in a cgroup with a memory limit, that limit
/// less what the cgroup uses (v2: `memory.max` - `memory.current` in `/sys/fs/cgroup`; v1:
/// `memory.limit_in_bytes` - `memory.usage_in_bytes` in `/sys/fs/cgroup/memory`), the
/// smallest of them. `None` where none can be read (not Linux).
pub fn machine_memory() -> Option<(u64, String)> {
    let read = |p: &str| std::fs::read_to_string(p).ok();
    let num = |p: &str| read(p).and_then(|t| t.trim().parse::<u64>().ok());
    let mut best: Option<(u64, String)> = None;
    let mut offer = |v: u64, from: String| {
        if best.as_ref().is_none_or(|(b, _)| v < *b) {
            best = Some((v, from));
        }
    };
    if let Some(kb) = read("/proc/meminfo").and_then(|t| {
        t.lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
    }) {
        offer(kb * 1024, "MemAvailable in /proc/meminfo".into());
    }
    for (max, cur) in [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ] {
        // "max" (v2) or a huge number (v1) when unlimited: not a number below 2^62
        if let Some(lim) = num(max).filter(|&l| l < 1 << 62) {
            let used = num(cur).unwrap_or(0);
            offer(
                lim.saturating_sub(used),
                format!("the cgroup's {max} less {cur}"),
            );
        }
    }
    best
}

/// Refuse a run whose recording and frames in flight would exceed `metrics.memory_budget`, or
/// the memory this machine has available (`machine`, from [`machine_memory`]): a budget above
/// it is clamped to it, and a run that fits the budget but not the machine is refused with both
/// figures. The clamp only refuses: what a run records never depends on it.
pub fn check_memory(
    sc: &Scenario,
    budget: u64,
    machine: Option<(u64, String)>,
) -> Result<(), ScenarioError> {
    let mut parts = estimate(sc);
    let total: u128 = parts.iter().map(|p| p.bytes).sum();
    let clamp = machine.clone().filter(|(m, _)| *m < budget);
    let limit = clamp.as_ref().map_or(budget, |(m, _)| *m);
    if total <= limit as u128 {
        return Ok(());
    }
    parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    let by_part: Vec<String> = parts
        .iter()
        .filter(|p| p.bytes > 0)
        .map(|p| {
            if p.unit == "bytes" {
                format!("{} {} (set by {})", p.table, fmt_bytes(p.bytes), p.fields)
            } else {
                format!(
                    "{} {} {}, {} (set by {})",
                    p.table,
                    fmt_count(p.rows),
                    p.unit,
                    fmt_bytes(p.bytes),
                    p.fields
                )
            }
        })
        .collect();
    let machine_note = match (&clamp, &machine) {
        (Some((m, from)), _) if total <= budget as u128 => format!(
            "; the budget is above the memory this machine has available, {} ({from}), and is \
             clamped to it",
            fmt_bytes(*m as u128)
        ),
        (Some((m, from)), _) | (None, Some((m, from))) => format!(
            "; this machine has {} available ({from})",
            fmt_bytes(*m as u128)
        ),
        _ => String::new(),
    };
    Err(ScenarioError::new(
        "metrics.memory_budget",
        format!("\"{}\"", fmt_bytes(budget as u128)),
        format!(
            "a budget that holds what this run would hold in memory, about {}, by part: \
             {}{machine_note}; record less (those fields, or metrics.max_sample_rows), bound the \
             buffers, shorten the run, build a smaller network, or raise metrics.memory_budget",
            fmt_bytes(total),
            by_part.join("; ")
        ),
    ))
}

/// The frames (in the arena, plus pending events) a run may hold before it stops with an error
/// (the memory left under `limit` by everything else the estimate counts, at
/// [`FRAME_IN_FLIGHT`] bytes each): what bounds queues with an infinite buffer.
pub fn frames_cap(sc: &Scenario, limit: u64) -> u64 {
    let recording: u128 = estimate(sc)
        .iter()
        .filter(|p| p.table != "frames in flight")
        .map(|p| p.bytes)
        .sum();
    ((limit as u128).saturating_sub(recording) / FRAME_IN_FLIGHT as u128).min(u64::MAX as u128)
        as u64
}

/// Frames the sources would send over the run at their configured rates, a finite flow at most
/// its size (an upper bound for sources that a rate limiter or PAUSE slows down).
pub fn frames(sc: &Scenario) -> f64 {
    sc.flows
        .iter()
        .map(|f| {
            let on = f.stop.min(sc.max_end()).saturating_sub(f.start);
            let by_rate = f.rate_bps * units::secs(on) / (8.0 * f.frame_bytes as f64);
            match f.size_bytes {
                Some(size) => by_rate.min((size as f64 / f.frame_bytes as f64).ceil()),
                None => by_rate,
            }
        })
        .sum()
}

/// A wall time for a message: "40 s", "12 minutes", "3.2 hours", "41 days".
fn fmt_wall(s: f64) -> String {
    if s < 120.0 {
        format!("about {s:.0} s")
    } else if s < 7200.0 {
        format!("about {:.0} minutes", s / 60.0)
    } else if s < 3.0 * 86400.0 {
        format!("about {:.1} hours", s / 3600.0)
    } else {
        format!("about {:.0} days", s / 86400.0)
    }
}

/// Refuse a run whose sources would send more than `max_frames` frames.
pub fn check_frames(sc: &Scenario, max_frames: i64) -> Result<(), ScenarioError> {
    let n = frames(sc);
    if n <= max_frames as f64 {
        return Ok(());
    }
    let top = sc
        .flows
        .iter()
        .max_by(|a, b| a.rate_bps.total_cmp(&b.rate_bps))
        .map(|f| {
            format!(
                ", e.g. flow {:?} at {}",
                f.name,
                units::fmt_rate(f.rate_bps)
            )
        })
        .unwrap_or_default();
    Err(ScenarioError::new(
        "meta.max_frames",
        max_frames.to_string(),
        format!(
            "a run whose sources send at most that many frames: they would send about {n:.2e} \
             frames in {}{top}, {} of simulation at 10^7 frames per second of wall time; lower \
             the rates or meta.duration{}, or raise meta.max_frames",
            units::fmt_time(sc.max_end()),
            fmt_wall(n / 1e7),
            if sc.drain_until.is_some() {
                " (or meta.drain_until, the latest end of this drain-mode run)"
            } else {
                ""
            }
        ),
    ))
}

/// Read `metrics.max_sample_rows` and `metrics.memory_budget`, sample less often where a
/// sampled table would exceed its row budget (the resolved scenario then shows the interval or
/// bin used), and refuse what still exceeds the memory budget or `max_frames`.
pub fn apply(sc: &mut Scenario, m: &mut TableReader, max_frames: i64) -> Result<(), ScenarioError> {
    let max_rows = m.int_in("max_sample_rows", DEFAULT_MAX_SAMPLE_ROWS, 1, 1_000_000_000)? as u64;
    let budget = m.bytes_or("memory_budget", DEFAULT_MEMORY_BUDGET)?;
    let n = PerSample::of(sc);
    let d = sc.max_end();
    let mt = &mut sc.metrics;
    mt.max_sample_rows = max_rows;
    let per_bin = n.throughput_ports.max(n.pause_bin_ports);
    let per_q = n.queue_ports.max(n.memory_switches);
    let per_r = n.rate_flows.max(n.host_queue_flows);
    for (key, iv, per) in [
        ("throughput_bin", &mut mt.throughput_bin, per_bin),
        ("queue_interval", &mut mt.queue_interval, per_q),
        ("rate_interval", &mut mt.rate_interval, per_r),
    ] {
        let new = decimate(d, *iv, per, max_rows);
        if new != *iv {
            mt.widened.push((key, *iv, new));
            *iv = new;
            m.put(key, Json::String(units::fmt_time(new)));
        }
    }
    let machine = machine_memory();
    let limit = machine.as_ref().map_or(budget, |(m, _)| budget.min(*m));
    check_memory(sc, budget, machine)?;
    sc.metrics.memory_limit = limit;
    sc.metrics.frames_cap = frames_cap(sc, limit);
    check_frames(sc, max_frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_an_interval_within_budget_and_changes_nothing_below_it() {
        let ms = units::MS;
        // within the budget: unchanged
        assert_eq!(decimate(units::SEC, ms, 10, 100_000), ms);
        assert_eq!(decimate(units::SEC, ms, 0, 1), ms);
        // 1000 flows x 1001 samples = 1,001,000 rows -> every 5th sample (201 x 1000)
        let d = decimate(units::SEC, ms, 1000, 250_000);
        assert_eq!(d, 5 * ms);
        assert!(samples(units::SEC, d) * 1000 <= 250_000);
        assert!(samples(units::SEC, 4 * ms) * 1000 > 250_000);
        // 1 ps over the longest run: bounded, a whole multiple
        let d = decimate(units::MAX_TIME, 1, 3, 250_000);
        assert!(samples(units::MAX_TIME, d) * 3 <= 250_000 && d > 1);
        // more rows per sample than the budget: the two samples at 0 and at the end
        assert_eq!(decimate(units::SEC, ms, 1_000_000, 250_000), units::SEC);
        for (dur, iv, per, max) in [(7u64, 3u64, 1u64, 2u64), (100, 1, 7, 20), (10, 10, 1, 1)] {
            let d = decimate(dur, iv, per, max);
            assert_eq!(d % iv, 0);
            assert!(
                samples(dur, d) * per as u128 <= max as u128 || d >= dur,
                "{dur} {iv} {per} {max} -> {d}"
            );
        }
    }

    #[test]
    fn bytes_are_shown_in_binary_units() {
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(3 << 29), "1.5 GiB");
    }
}
