//! The `summary` table: the headline numbers of a run, in long format (metric, value, unit,
//! detail). Recovery time (docs/tables.md#recovery-time): the time from the end of a hotspot
//! until the bottleneck throughput, binned at `metrics.throughput_bin`, first reaches
//! `analysis.recovery_fraction` of the restored capacity.

use crate::proto::nic_fb::Feedback;
use crate::scenario::{CcMode, Scenario};
use crate::table::{ColumnData, Table};
use crate::units::{self, SimTime};

#[derive(Default)]
struct Rows {
    metric: Vec<String>,
    value: Vec<f64>,
    unit: Vec<String>,
    detail: Vec<String>,
}

impl Rows {
    fn add(&mut self, metric: &str, value: f64, unit: &str, detail: String) {
        self.metric.push(metric.to_string());
        self.value.push(value);
        self.unit.push(unit.to_string());
        self.detail.push(detail);
    }
}

fn i64_col<'a>(t: &'a Table, c: &str) -> &'a [i64] {
    match t.column(c) {
        Some(ColumnData::I64(v)) => v,
        _ => &[],
    }
}

fn f64_col<'a>(t: &'a Table, c: &str) -> &'a [f64] {
    match t.column(c) {
        Some(ColumnData::F64(v)) => v,
        _ => &[],
    }
}

fn str_col<'a>(t: &'a Table, c: &str) -> &'a [String] {
    match t.column(c) {
        Some(ColumnData::Str(v)) => v,
        _ => &[],
    }
}

/// Recovery time after `t_end` given bins `(start, throughput)` of width `bin`: the end of the
/// first bin that starts at or after `t_end` and reaches `target`, minus `t_end`.
pub fn recovery_time(
    bins: &[(SimTime, f64)],
    bin: SimTime,
    t_end: SimTime,
    target: f64,
) -> Option<SimTime> {
    bins.iter()
        .filter(|(t, _)| *t >= t_end)
        .find(|(_, r)| *r >= target)
        .map(|(t, _)| t + bin - t_end)
}

pub fn summarize(
    sc: &Scenario,
    tables: &[Table],
    events_dropped: u64,
    pause_rows_dropped: u64,
) -> Table {
    let get = |n: &str| tables.iter().find(|t| t.name == n).expect("table present");
    let mut rows = Rows::default();
    let flows = get("flows");
    let ports = get("ports");
    let sum = |c: &str| i64_col(flows, c).iter().sum::<i64>() as f64;
    rows.add("delivered_bytes", sum("rx_bytes"), "B", "all flows".into());
    rows.add(
        "generated_frames",
        sum("gen_frames"),
        "frames",
        "all flows".into(),
    );
    rows.add(
        "dropped_frames",
        sum("dropped_frames"),
        "frames",
        "at switch queues".into(),
    );
    rows.add(
        "rl_dropped_frames",
        sum("rl_dropped_frames"),
        "frames",
        "at rate-limiter queues".into(),
    );
    rows.add(
        "nic_dropped_frames",
        sum("nic_dropped_frames"),
        "frames",
        "at host NIC queues".into(),
    );
    rows.add(
        "cnm_sent",
        i64_col(ports, "cnm_sent").iter().sum::<i64>() as f64,
        "frames",
        "all CPs".into(),
    );
    if sc.cc == crate::scenario::CcMode::Bcn {
        for (metric, col, what) in [
            ("bcn_negative_sent", "bcn_negative_sent", "negative BCN"),
            ("bcn_positive_sent", "bcn_positive_sent", "positive BCN"),
            ("bcn0_sent", "bcn0_sent", "BCN(0,0)"),
        ] {
            rows.add(
                metric,
                i64_col(ports, col).iter().sum::<i64>() as f64,
                "frames",
                format!("{what} messages, all CPs"),
            );
        }
    }
    if sc.cc == CcMode::Qcn && sc.qcn.feedback == Feedback::Nic {
        rows.add(
            "conmes_sent",
            i64_col(ports, "conmes_sent").iter().sum::<i64>() as f64,
            "frames",
            "all CPs (NIC-side feedback)".into(),
        );
        rows.add(
            "nic_dings",
            sum("cnm_received"),
            "frames",
            "negative quantised Fb computed at the NICs".into(),
        );
    }
    if events_dropped > 0 {
        rows.add(
            "events_not_recorded",
            events_dropped as f64,
            "rows",
            "beyond metrics.max_event_rows".into(),
        );
    }

    if sc.fc.is_on() {
        flow_control_rows(sc, ports, pause_rows_dropped, &mut rows);
    }
    if sc.analysis.victims {
        victim_rows(sc, flows, &mut rows);
    }

    if let Some(b) = sc.analysis.bottleneck {
        let name = sc.port_name(b);
        let pi = str_col(ports, "port")
            .iter()
            .position(|p| *p == name)
            .unwrap_or(b);
        rows.add(
            "bottleneck_max_queue",
            i64_col(ports, "max_qlen_bytes")[pi] as f64,
            "B",
            name.clone(),
        );
        rows.add(
            "bottleneck_mean_queue",
            f64_col(ports, "mean_qlen_bytes")[pi],
            "B",
            name.clone(),
        );
        rows.add(
            "bottleneck_drops",
            i64_col(ports, "drop_frames")[pi] as f64,
            "frames",
            name.clone(),
        );

        let tp = get("port_throughput");
        let bin = sc.metrics.throughput_bin;
        let bins: Vec<(SimTime, f64)> = str_col(tp, "port")
            .iter()
            .zip(
                i64_col(tp, "t_ps")
                    .iter()
                    .zip(f64_col(tp, "throughput_bps")),
            )
            .filter(|(p, _)| **p == name)
            .map(|(_, (t, r))| (*t as SimTime, *r))
            .collect();
        if bins.is_empty() {
            rows.add(
                "recovery_time",
                f64::NAN,
                "s",
                format!("{name} is not in metrics.throughput_ports: no throughput to measure"),
            );
        } else {
            // service-rate periods of the bottleneck
            let mut changes: Vec<(SimTime, f64)> = vec![(0, sc.links[b / 2].rate_bps)];
            for s in sc.schedule.iter().filter(|s| s.port == b) {
                changes.push((s.at, s.rate_bps));
            }
            for (i, &(t0, rate)) in changes.iter().enumerate() {
                let t1 = changes.get(i + 1).map(|c| c.0).unwrap_or(sc.duration);
                if t1 > t0 {
                    let inside: Vec<f64> = bins
                        .iter()
                        .filter(|(t, _)| *t >= t0 && *t + bin <= t1)
                        .map(|(_, r)| *r)
                        .collect();
                    let mean = if inside.is_empty() {
                        f64::NAN
                    } else {
                        inside.iter().sum::<f64>() / inside.len() as f64
                    };
                    rows.add(
                        "mean_throughput",
                        mean,
                        "bps",
                        format!(
                            "{name} from {} to {} (service rate {})",
                            units::fmt_time(t0),
                            units::fmt_time(t1),
                            units::fmt_rate(rate)
                        ),
                    );
                }
                if i > 0 && rate > changes[i - 1].1 {
                    let target = sc.analysis.recovery_fraction * rate;
                    let rt = recovery_time(&bins, bin, t0, target);
                    rows.add(
                        "recovery_time",
                        rt.map(units::secs).unwrap_or(f64::NAN),
                        "s",
                        format!(
                            "{name} after the rate rose to {} at {}; resolution {}, fraction {}{}",
                            units::fmt_rate(rate),
                            units::fmt_time(t0),
                            units::fmt_time(bin),
                            sc.analysis.recovery_fraction,
                            if rt.is_none() {
                                "; not recovered before the end of the run"
                            } else {
                                ""
                            }
                        ),
                    );
                }
            }
        }
    }
    transient_rows(sc, tables, &mut rows);
    Table::new("summary")
        .col("metric", ColumnData::Str(rows.metric))
        .col("value", ColumnData::F64(rows.value))
        .col("unit", ColumnData::Str(rows.unit))
        .col("detail", ColumnData::Str(rows.detail))
}

/// Append (metric, value, unit, detail) rows to a summary table made by [`summarize`].
pub fn append_rows(t: &mut Table, rows: Vec<(String, f64, String, String)>) {
    for (metric, value, unit, detail) in rows {
        for c in t.columns.iter_mut() {
            match (c.name.as_str(), &mut c.data) {
                ("metric", ColumnData::Str(v)) => v.push(metric.clone()),
                ("value", ColumnData::F64(v)) => v.push(value),
                ("unit", ColumnData::Str(v)) => v.push(unit.clone()),
                ("detail", ColumnData::Str(v)) => v.push(detail.clone()),
                _ => {}
            }
        }
    }
}

/// SONAR and push-back counters (only when those schemes are on) and the downward transient
/// time (only with `analysis.downward_factor`). See docs/models/qcn-transient.md.
fn transient_rows(sc: &Scenario, tables: &[Table], rows: &mut Rows) {
    let get = |n: &str| tables.iter().find(|t| t.name == n).expect("table present");
    let qcn = sc.cc == crate::scenario::CcMode::Qcn;
    let flows = get("flows");
    let ports = get("ports");
    let fsum = |c: &str| i64_col(flows, c).iter().sum::<i64>() as f64;
    if qcn && sc.qcn.transient.sonar.is_some() {
        rows.add(
            "sonar_special_sent",
            fsum("sonar_special_sent"),
            "frames",
            "all RPs".into(),
        );
        rows.add(
            "sonar_echo_sent",
            i64_col(ports, "sonar_echo_sent").iter().sum::<i64>() as f64,
            "frames",
            "all CPs".into(),
        );
        rows.add(
            "sonar_short_fuse",
            fsum("sonar_short_fuse"),
            "transitions",
            "all RPs: waiting-for-echo periods that ended without an echo".into(),
        );
        rows.add(
            "sonar_false_alarms",
            fsum("sonar_false_alarms"),
            "transitions",
            "short-fuse transitions while a CP on the flow's path had BA = 0".into(),
        );
    }
    if sc.cc == crate::scenario::CcMode::Dcqcn {
        rows.add(
            "ecn_marked",
            fsum("ecn_marked"),
            "frames",
            "data frames marked CE, all flows".into(),
        );
        rows.add(
            "cnp_sent",
            fsum("cnp_sent"),
            "frames",
            "CNPs sent by the receivers' notification points".into(),
        );
        rows.add(
            "cnp_received",
            fsum("cnp_received"),
            "frames",
            "CNPs delivered to the sources".into(),
        );
    }
    if qcn && sc.qcn.transient.pushback {
        rows.add(
            "fb99_sent",
            i64_col(ports, "fb99_sent").iter().sum::<i64>() as f64,
            "frames",
            "all CPs".into(),
        );
    }
    let (Some(factor), Some(b)) = (sc.analysis.downward_factor, sc.analysis.bottleneck) else {
        return;
    };
    let name = sc.port_name(b);
    let rates = get("rp_rates");
    // the flow column's codes are flow indices (sim/record/output.rs)
    let flow_ix: &[u32] = match rates.column("flow") {
        Some(ColumnData::Cat { codes, .. }) => codes,
        _ => &[],
    };
    // aggregate sending rate per sample time: sum over flows through b of min(CR, offered)
    let mut agg: Vec<(SimTime, f64)> = Vec::new();
    for ((&i, t), cr) in flow_ix
        .iter()
        .zip(i64_col(rates, "t_ps"))
        .zip(f64_col(rates, "cr_bps"))
    {
        let t = *t as SimTime;
        let Some(f) = sc.flows.get(i as usize) else {
            continue;
        };
        let e = if f.path.contains(&b) && t >= f.start && t < f.stop {
            cr.min(f.rate_bps)
        } else {
            0.0
        };
        match agg.last_mut() {
            Some((lt, sum)) if *lt == t => *sum += e,
            _ => agg.push((t, e)),
        }
    }
    let mut changes: Vec<(SimTime, f64)> = vec![(0, sc.links[b / 2].rate_bps)];
    for s in sc.schedule.iter().filter(|s| s.port == b) {
        changes.push((s.at, s.rate_bps));
    }
    for i in 1..changes.len() {
        let (t0, c) = changes[i];
        if c >= changes[i - 1].1 {
            continue;
        }
        let t1 = changes.get(i + 1).map(|x| x.0).unwrap_or(sc.duration);
        let dt = downward_transient(&agg, sc.metrics.rate_interval, t0, t1, factor * c);
        rows.add(
            "downward_transient_time",
            dt.map(units::secs).unwrap_or(f64::NAN),
            "s",
            format!(
                "{name} after the rate fell to {} at {}: aggregate sending rate of its flows at or \
                 below {factor} x {} from then on; rates sampled every {}{}",
                units::fmt_rate(c),
                units::fmt_time(t0),
                units::fmt_rate(c),
                units::fmt_time(sc.metrics.rate_interval),
                if dt.is_none() {
                    "; not settled before the rate rose again"
                } else {
                    ""
                }
            ),
        );
    }
}

/// Downward transient time from samples `(t, aggregate rate)` taken every `interval`: the end
/// of the interval of the last sample in `[t0, t1)` whose rate exceeds `limit`, minus `t0`
/// (0 if none does); None when the last sample of the period still exceeds it.
pub fn downward_transient(
    agg: &[(SimTime, f64)],
    interval: SimTime,
    t0: SimTime,
    t1: SimTime,
    limit: f64,
) -> Option<SimTime> {
    let inside: Vec<&(SimTime, f64)> = agg.iter().filter(|(t, _)| *t >= t0 && *t < t1).collect();
    let last_above = inside.iter().rposition(|(_, r)| *r > limit);
    match last_above {
        None => Some(0),
        Some(k) if k + 1 == inside.len() => None,
        Some(k) => Some((inside[k].0 + interval).min(t1) - t0),
    }
}

/// Victim flows (`analysis.victims`): every unicast flow whose path does not cross the
/// bottleneck, its throughput and the share of its offered rate it lost
/// (docs/models/buffer.md, congestion spreading).
fn victim_rows(sc: &Scenario, flows: &Table, rows: &mut Rows) {
    let Some(b) = sc.analysis.bottleneck else {
        return;
    };
    let rx = i64_col(flows, "rx_bytes");
    let mut lost_sum = 0.0;
    let mut n = 0;
    for (k, f) in sc.flows.iter().enumerate() {
        if f.group.is_some() || f.path.contains(&b) || f.start >= sc.duration {
            continue;
        }
        let active = units::secs(sc.duration.min(f.stop) - f.start);
        let thr = rx[k] as f64 * 8.0 / active;
        let offered = match f.size_bytes {
            Some(s) => (s as f64 * 8.0 / active).min(f.rate_bps),
            None => f.rate_bps,
        };
        let lost = (1.0 - thr / offered).max(0.0) * 100.0;
        lost_sum += lost;
        n += 1;
        rows.add(
            "victim_throughput",
            thr,
            "bps",
            format!(
                "{} (offered {:.4e} bps; does not cross {})",
                f.name,
                offered,
                sc.port_name(b)
            ),
        );
        rows.add(
            "victim_loss",
            lost,
            "%",
            format!("{}: offered rate not delivered", f.name),
        );
    }
    rows.add(
        "victim_flows",
        n as f64,
        "flows",
        format!(
            "flows that do not cross {}; mean loss {:.2} %",
            sc.port_name(b),
            if n > 0 { lost_sum / n as f64 } else { 0.0 }
        ),
    );
}

/// At most this many `paused_time` rows (the ports paused longest, in port order).
const MAX_PAUSED_ROWS: usize = 16;

/// PAUSE/PFC rows: frames sent, the ports' paused time, and the bottleneck's headroom.
fn flow_control_rows(sc: &Scenario, ports: &Table, rows_dropped: u64, rows: &mut Rows) {
    use crate::scenario::flow_control::{needed_headroom, FcMode};
    let what = if sc.fc.mode == FcMode::Pfc {
        "PFC"
    } else {
        "PAUSE"
    };
    rows.add(
        "pause_frames_sent",
        i64_col(ports, "pause_sent").iter().sum::<i64>() as f64,
        "frames",
        format!("{what} frames sent by all switches (XOFF, refreshes and XON)"),
    );
    let names = str_col(ports, "port");
    let paused = i64_col(ports, "paused_ps");
    let mut order: Vec<usize> = (0..paused.len()).filter(|&p| paused[p] > 0).collect();
    let n_paused = order.len();
    order.sort_by_key(|&p| std::cmp::Reverse(paused[p]));
    order.truncate(MAX_PAUSED_ROWS);
    order.sort_unstable();
    for p in order {
        rows.add(
            "paused_time",
            units::secs(paused[p] as SimTime),
            "s",
            format!("{} (time with at least one priority paused)", names[p]),
        );
    }
    if n_paused > MAX_PAUSED_ROWS {
        rows.add(
            "paused_ports",
            n_paused as f64,
            "ports",
            format!("ports that were paused (paused_time rows for the {MAX_PAUSED_ROWS} paused longest)"),
        );
    }
    if rows_dropped > 0 {
        rows.add(
            "pause_events_not_recorded",
            rows_dropped as f64,
            "rows",
            "beyond metrics.max_event_rows".into(),
        );
    }
    if let Some(b) = sc.analysis.bottleneck {
        let (sw, _) = sc.port_ends(b);
        let cap = match sc.queue_limit(b) {
            crate::scenario::Capacity::Bytes(c) => Some(c),
            crate::scenario::Capacity::Frames(n) => {
                Some(n * crate::scenario::flow_control::max_frame(sc) as u64)
            }
            crate::scenario::Capacity::Infinite | crate::scenario::Capacity::Shared => None,
        };
        if sc.is_switch_port(b) && sc.fc.switches[sw] {
            let name = sc.port_name(b);
            if let Some(cap) = cap {
                rows.add(
                    "pause_headroom",
                    cap.saturating_sub(sc.fc.xoff_bytes) as f64,
                    "B",
                    format!("{name}: buffer above XOFF"),
                );
            }
            rows.add(
                "pause_headroom_needed",
                needed_headroom(sc, b) as f64,
                "B",
                format!(
                    "{name}: buffer above XOFF that guarantees no loss ({} watermark; docs/models/pause.md)",
                    sc.fc.watermark.name()
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[allow(clippy::type_complexity)]
    fn downward_transient_is_the_end_of_the_last_excursion_above_the_limit() {
        let ms = MS;
        // samples every 1 ms from 0 to 9 ms
        let mk = |v: &[f64]| -> Vec<(SimTime, f64)> {
            v.iter()
                .enumerate()
                .map(|(k, r)| (k as SimTime * ms, *r))
                .collect()
        };
        // (name, rates, t0, t1, limit, expected)
        #[rustfmt::skip]
        let cases: &[(&str, Vec<(SimTime, f64)>, SimTime, SimTime, f64, Option<SimTime>)] = &[
            ("settles after one excursion", mk(&[9.0, 9.0, 5.0, 1.0, 1.0, 1.0]), 0, 6 * ms, 2.0, Some(3 * ms)),
            ("bounces back up once", mk(&[9.0, 1.0, 1.0, 3.0, 1.0, 1.0]), 0, 6 * ms, 2.0, Some(4 * ms)),
            ("at the limit is settled", mk(&[2.0, 2.0, 1.0]), 0, 3 * ms, 2.0, Some(0)),
            ("never above", mk(&[1.0, 1.0]), 0, 2 * ms, 2.0, Some(0)),
            ("still above at the end", mk(&[9.0, 1.0, 9.0]), 0, 3 * ms, 2.0, None),
            ("only samples inside [t0, t1)", mk(&[9.0, 9.0, 1.0, 9.0, 1.0, 9.0]), 2 * ms, 5 * ms, 2.0, Some(2 * ms)),
        ];
        for (name, agg, t0, t1, limit, want) in cases {
            assert_eq!(
                downward_transient(agg, ms, *t0, *t1, *limit),
                *want,
                "{name}"
            );
        }
    }

    use super::*;
    use crate::units::MS;

    #[test]
    fn recovery_is_the_end_of_the_first_bin_reaching_the_target() {
        let bins: Vec<(SimTime, f64)> = (0..10)
            .map(|k| (k * 10 * MS, if k < 6 { 1e9 } else { 9.5e9 }))
            .collect();
        // hotspot ends at 30 ms; bins from 30 ms on: 30..40 (1G), 40, 50 (1G), 60 (9.5G) -> ends at 70 ms
        assert_eq!(recovery_time(&bins, 10 * MS, 30 * MS, 9e9), Some(40 * MS));
        assert_eq!(recovery_time(&bins, 10 * MS, 30 * MS, 9.9e9), None);
    }
}
