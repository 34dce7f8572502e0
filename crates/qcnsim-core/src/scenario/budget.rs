//! What a run will allocate for recording, known before it starts (docs/performance.md,
//! "Memory"): sampled tables are kept within `metrics.max_sample_rows` rows each by sampling
//! less often, and a run whose recording would still exceed `metrics.memory_budget`, or whose
//! sources would send an absurd number of frames (`meta.max_frames`), is refused with the
//! estimate and the field to change.

use super::reader::TableReader;
use super::{CcMode, Scenario};
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

/// One part of the recording estimate.
#[derive(Debug, Clone)]
pub struct Part {
    pub table: &'static str,
    pub rows: u128,
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

/// What recording will allocate, table by table (the sampled tables at their intervals as
/// resolved, events at their cap `metrics.max_event_rows` when any kind is recorded).
pub fn estimate(sc: &Scenario) -> Vec<Part> {
    let m = &sc.metrics;
    let n = PerSample::of(sc);
    let d = sc.max_end();
    let bins = samples(d, m.throughput_bin);
    let q = samples(d, m.queue_interval);
    let r = samples(d, m.rate_interval);
    let part = |table, rows: u128, row: u64, fields| Part {
        table,
        rows,
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

/// Refuse a run whose recording would exceed `metrics.memory_budget`.
pub fn check_memory(sc: &Scenario, budget: u64) -> Result<(), ScenarioError> {
    let mut parts = estimate(sc);
    let total: u128 = parts.iter().map(|p| p.bytes).sum();
    if total <= budget as u128 {
        return Ok(());
    }
    parts.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    let big: Vec<String> = parts
        .iter()
        .filter(|p| p.bytes > 0)
        .take(3)
        .map(|p| {
            format!(
                "{} {:.3e} rows, {} (set by {})",
                p.table,
                p.rows as f64,
                fmt_bytes(p.bytes),
                p.fields
            )
        })
        .collect();
    Err(ScenarioError::new(
        "metrics.memory_budget",
        format!("\"{}\"", fmt_bytes(budget as u128)),
        format!(
            "a budget that holds what this run would record, about {}: {}; record less \
             (those fields, or metrics.max_sample_rows) or raise metrics.memory_budget",
            fmt_bytes(total),
            big.join("; ")
        ),
    ))
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
            *iv = new;
            m.put(key, Json::String(units::fmt_time(new)));
        }
    }
    check_memory(sc, budget)?;
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
