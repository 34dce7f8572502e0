//! Flow completion times (docs/tables.md `fct`, docs/models/transport.md): the `fct` table of
//! finite flows, their ideal completion time alone on an idle fabric, slowdown, and the summary
//! rows per size bin.

use super::*;
use crate::scenario::FlowSpec;

/// Size bins of the summary rows: (label, lower bound inclusive, upper bound exclusive), bytes.
pub const BINS: &[(&str, u64, u64)] = &[
    ("<100KB", 0, 100_000),
    ("100KB-1MB", 100_000, 1_000_000),
    (">1MB", 1_000_000, u64::MAX),
];

/// The completion time of finite flow `f` alone on an idle fabric: its frames (full frames,
/// then the remainder, at least 64 bytes, as the source cuts them) leave the source at the
/// flow's rate from its start, and cross every hop of its path store-and-forward at the link
/// rate (with the link's preamble and inter-frame gap), propagation delay, delay line and the
/// next switch's forwarding latency, never waiting for another flow. The flow completes when
/// its last byte reaches the destination. Exact to the picosecond for the engine's timing model
/// (docs/models/network.md) on an idle fabric, whatever the rates along the path.
pub fn ideal_fct(sc: &Scenario, f: &FlowSpec) -> Option<SimTime> {
    let total = f.size_bytes?;
    let hops: Vec<(f64, SimTime, u32, u32)> = f
        .path
        .iter()
        .map(|&p| {
            let l = &sc.links[p / 2];
            let (_, to) = sc.port_ends(p);
            let lat = if sc.nodes[to].kind == NodeKind::Switch {
                sc.nodes[to].latency
            } else {
                0
            };
            (
                l.rate_bps,
                l.delay + l.extra_delay + lat,
                l.preamble_bytes,
                l.ifg_bytes,
            )
        })
        .collect();
    let mut free = vec![0 as SimTime; hops.len()];
    let gap = f.frame_bytes as f64 * 8.0 * units::SEC as f64 / f.rate_bps;
    let mut sent = 0u64;
    let mut k = 0u64;
    let mut last = 0;
    while sent < total {
        let size = (f.frame_bytes as u64).min(total - sent).max(64) as u32;
        sent += size as u64;
        // the k-th frame is generated at start + round(k * gap), as a CBR source does
        let mut t = f.start + round_ps(units::u64_f64(k) * gap);
        k += 1;
        for (h, &(rate, delay, pre, ifg)) in hops.iter().enumerate() {
            let start = t.max(free[h]);
            let tx = units::tx_time_f((size + pre) as u64, rate);
            let end = start + tx;
            free[h] = if ifg == 0 {
                end
            } else {
                start + units::tx_time_f((size + pre + ifg) as u64, rate)
            };
            t = end + delay;
        }
        last = t;
    }
    Some(last - f.start)
}

/// Summary rows: (metric, value, unit, detail).
type Rows = Vec<(String, f64, String, String)>;

/// Percentile `q` (0..100) of sorted values, nearest rank.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

impl<'a> Sim<'a> {
    /// The `fct` table (finite unicast flows only) and its summary rows; `None` without
    /// finite flows.
    pub(super) fn fct_table(&self) -> Option<(Table, Rows)> {
        let sc = self.sc;
        let ix: Vec<usize> = (0..sc.flows.len())
            .filter(|&i| sc.flows[i].size_bytes.is_some() && sc.flows[i].group.is_none())
            .collect();
        if ix.is_empty() {
            return None;
        }
        let mut fct = Vec::with_capacity(ix.len());
        let mut ideal = Vec::with_capacity(ix.len());
        let mut slow = Vec::with_capacity(ix.len());
        let mut finish = Vec::with_capacity(ix.len());
        for &i in &ix {
            let f = &self.flows[i];
            let id = ideal_fct(sc, &sc.flows[i]).unwrap_or(0);
            ideal.push(id as f64);
            match f.finish {
                Some(t) => {
                    let d = (t - f.start) as f64;
                    fct.push(d);
                    finish.push(t as f64);
                    slow.push(if id > 0 { d / id as f64 } else { f64::NAN });
                }
                None => {
                    fct.push(f64::NAN);
                    finish.push(f64::NAN);
                    slow.push(f64::NAN);
                }
            }
        }
        let name = |n: usize| sc.nodes[n].name.clone();
        let table = Table::new("fct")
            .col(
                "flow",
                ColumnData::Str(ix.iter().map(|&i| sc.flows[i].name.clone()).collect()),
            )
            .col(
                "src",
                ColumnData::Str(ix.iter().map(|&i| name(sc.flows[i].src)).collect()),
            )
            .col(
                "dst",
                ColumnData::Str(ix.iter().map(|&i| name(sc.flows[i].dst)).collect()),
            )
            .col(
                "size_bytes",
                ColumnData::I64(
                    ix.iter()
                        .map(|&i| sc.flows[i].size_bytes.unwrap_or(0) as i64)
                        .collect(),
                ),
            )
            .col(
                "start_ps",
                ColumnData::I64(ix.iter().map(|&i| sc.flows[i].start as i64).collect()),
            )
            .col(
                "finished",
                ColumnData::Bool(ix.iter().map(|&i| self.flows[i].finish.is_some()).collect()),
            )
            .col("finish_ps", ColumnData::F64(finish))
            .col("fct_ps", ColumnData::F64(fct))
            .col("ideal_fct_ps", ColumnData::F64(ideal))
            .col("slowdown", ColumnData::F64(slow.clone()))
            .col(
                "delivered_bytes",
                ColumnData::I64(ix.iter().map(|&i| self.flows[i].rx_bytes as i64).collect()),
            );
        // summary rows: per size bin and overall
        let mut rows = Vec::new();
        let mut groups: Vec<(String, Vec<usize>)> = BINS
            .iter()
            .map(|(label, lo, hi)| {
                let members = (0..ix.len())
                    .filter(|&k| {
                        let s = sc.flows[ix[k]].size_bytes.unwrap_or(0);
                        s >= *lo && s < *hi
                    })
                    .collect();
                (format!("size {label}"), members)
            })
            .collect();
        groups.push(("all sizes".to_string(), (0..ix.len()).collect()));
        for (label, members) in groups {
            let mut v: Vec<f64> = members
                .iter()
                .map(|&k| slow[k])
                .filter(|x| !x.is_nan())
                .collect();
            v.sort_by(f64::total_cmp);
            let unfinished = members.len() - v.len();
            let detail = format!(
                "{label}: {} flows, {} finished, {unfinished} unfinished (excluded)",
                members.len(),
                v.len()
            );
            let mean = if v.is_empty() {
                f64::NAN
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            };
            rows.push((
                "fct_slowdown_mean".into(),
                mean,
                "ratio".into(),
                detail.clone(),
            ));
            for q in [50.0, 95.0, 99.0] {
                rows.push((
                    format!("fct_slowdown_p{q:.0}"),
                    percentile(&v, q),
                    "ratio".into(),
                    detail.clone(),
                ));
            }
            rows.push((
                "flows_unfinished".into(),
                unfinished as f64,
                "flows".into(),
                detail,
            ));
        }
        Some((table, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario;

    fn flow0(text: &str) -> (Scenario, FlowSpec) {
        let sc = scenario::load(text, &[]).unwrap();
        let f = sc.flows[0].clone();
        (sc, f)
    }

    #[test]
    fn ideal_fct_matches_a_hand_computation() {
        // h0 -10G, 1us- sw (latency 500ns) -40G, 2us- h1; 3000 B + 100 B at 10 Gb/s
        let text = r#"
            [meta]
            duration = "1ms"
            [[hosts]]
            name = "h0"
            [[hosts]]
            name = "h1"
            [[switches]]
            name = "sw"
            latency = "500ns"
            [[links]]
            between = ["h0", "sw"]
            rate = "10Gbps"
            delay = "1us"
            [[links]]
            between = ["sw", "h1"]
            rate = "40Gbps"
            delay = "2us"
            [[flows]]
            src = "h0"
            dst = "h1"
            rate = "10Gbps"
            size = "3100B"
            "#;
        let (sc, f) = flow0(text);
        // frames 1500, 1500, 100: at 10G 1.2us, 1.2us, 0.08us; at 40G 0.3us, 0.3us, 0.02us.
        // Frame 2 is generated at 1.2us, leaves h0 at 2.4us, is queued at sw at 3.9us and sent
        // 3.9..4.2us. Frame 3 is generated at 2.4us, leaves h0 at 2.48us, is queued at 3.98us,
        // waits for frame 2 until 4.2us, ends 4.22us and arrives 2us later: 6.22us.
        assert_eq!(ideal_fct(&sc, &f), Some(6_220_000));
        // a single 64 B frame: 51.2ns + 1us + 0.5us + 12.8ns + 2us
        let (sc, f) = flow0(&text.replace("3100B", "64B"));
        assert_eq!(
            ideal_fct(&sc, &f),
            Some(51_200 + 1_500_000 + 12_800 + 2_000_000)
        );
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(|x| x as f64).collect();
        assert_eq!(percentile(&v, 50.0), 50.0);
        assert_eq!(percentile(&v, 99.0), 99.0);
        assert_eq!(percentile(&[3.0], 95.0), 3.0);
        assert!(percentile(&[], 50.0).is_nan());
    }
}
