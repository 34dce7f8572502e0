//! Flow completion times (docs/tables.md `fct`, docs/models/transport.md): the `fct` table of
//! finite flows, their ideal completion time alone on an idle fabric, slowdown, and the summary
//! rows per size bin.

use crate::scenario::FlowSpec;
use crate::sim::prelude::*;

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
    let hops = ideal_hops(sc, f);
    let full = f.frame_bytes as u64;
    // frames 0..n-2 are full; the last one carries the rest (at least 64 B)
    let n = total.div_ceil(full);
    let last_size = (total - (n - 1) * full).max(64);
    let gap = f.frame_bytes as f64 * 8.0 * units::SEC as f64 / f.rate_bps;
    // frame k is generated at start + round(k * gap), as a CBR source does
    let born = |k: u64| f.start as u128 + round_ps(units::u64_f64(k) * gap) as u128;
    // Start of transmission of frame n-2 (the last full one) at every hop, in closed form
    // (docs/tables.md, "fct"): a tandem of store-and-forward hops where every full frame takes
    // the same time, so start_h(k) = max over j <= k of born(j) + (k - j) * O_h + C_h, with
    // O_h the largest per-frame occupancy of hops 0..=h and C_h the transit (transmission +
    // delay) of a full frame over hops 0..h. born(j) - j * O_h is monotone in j (born(j + 1) -
    // born(j) is floor or ceil of the gap, and O_h a whole number), so j = 0 or j = k.
    let mut before: Vec<Option<u128>> = vec![None; hops.len()];
    if n >= 2 {
        let k = n - 2;
        let (mut occ, mut transit) = (0u128, 0u128);
        for (h, hop) in hops.iter().enumerate() {
            occ = occ.max(hop.occupancy(full) as u128);
            let first = born(0) + k as u128 * occ;
            before[h] = Some(first.max(born(k)) + transit);
            transit += (hop.tx(full) + hop.delay) as u128;
        }
    }
    // the last frame: it waits at each hop for the full frame ahead of it
    let mut t = born(n - 1);
    for (h, hop) in hops.iter().enumerate() {
        let free = before[h].map_or(0, |s| s + hop.occupancy(full) as u128);
        t = t.max(free) + (hop.tx(last_size) + hop.delay) as u128;
    }
    Some((t - f.start as u128).min(SimTime::MAX as u128) as SimTime)
}

/// One hop of a flow's path for [`ideal_fct`].
#[derive(Debug, Clone, Copy)]
struct IdealHop {
    rate: f64,
    /// Propagation, delay line and the next switch's forwarding latency.
    delay: SimTime,
    pre: u64,
    ifg: u64,
}

impl IdealHop {
    /// Time from the first to the last bit of a frame of `size` bytes.
    fn tx(&self, size: u64) -> SimTime {
        units::tx_time_f(size + self.pre, self.rate)
    }
    /// Time the port is busy with it (with the inter-frame gap).
    fn occupancy(&self, size: u64) -> SimTime {
        if self.ifg == 0 {
            self.tx(size)
        } else {
            units::tx_time_f(size + self.pre + self.ifg, self.rate)
        }
    }
}

fn ideal_hops(sc: &Scenario, f: &FlowSpec) -> Vec<IdealHop> {
    f.path
        .iter()
        .map(|&p| {
            let l = &sc.links[p / 2];
            let (_, to) = sc.port_ends(p);
            let lat = if sc.nodes[to].kind == NodeKind::Switch {
                sc.nodes[to].latency
            } else {
                0
            };
            IdealHop {
                rate: l.rate_bps,
                delay: l.delay + l.extra_delay + lat,
                pre: l.preamble_bytes as u64,
                ifg: l.ifg_bytes as u64,
            }
        })
        .collect()
}

/// Summary rows: (metric, value, unit, detail).
pub(in crate::sim) type Rows = Vec<(String, f64, String, String)>;

/// Percentile `q` (0..100) of sorted values, nearest rank.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((q / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted[rank.min(sorted.len()) - 1]
}

/// The slowdown statistics of a bin's flows (`members`: indices into the run's finite flows):
/// how many finished, and the mean and the p50, p95 and p99 of the values the statistics use
/// (`stat_slow`: NaN for a flow left out).
fn bin_stats(members: &[usize], slow: &[f64], stat_slow: &[f64]) -> (usize, [f64; 4]) {
    let mut v: Vec<f64> = members
        .iter()
        .map(|&k| stat_slow[k])
        .filter(|x| !x.is_nan())
        .collect();
    v.sort_by(f64::total_cmp);
    let done = members.iter().filter(|&&k| !slow[k].is_nan()).count();
    let mean = if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    };
    (
        done,
        [
            mean,
            percentile(&v, 50.0),
            percentile(&v, 95.0),
            percentile(&v, 99.0),
        ],
    )
}

impl<'a> Sim<'a> {
    /// The `fct` table (finite unicast flows only), the `fct_stats` table and the summary rows;
    /// `None` without finite flows.
    pub(in crate::sim) fn fct_table(&self) -> Option<(Table, Table, Rows)> {
        let sc = self.core.sc;
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
        // what the statistics use for an unfinished flow: NaN (excluded), or the lower bound of
        // its slowdown (it ran at least until the end of the run)
        let mut stat_slow = Vec::with_capacity(ix.len());
        let bound = sc.analysis.fct_unfinished_bound;
        for &i in &ix {
            let f = &self.core.flows[i];
            let id = ideal_fct(sc, &sc.flows[i]).unwrap_or(0);
            ideal.push(id as f64);
            match f.finish {
                Some(t) => {
                    let d = (t - f.start) as f64;
                    fct.push(d);
                    finish.push(t as f64);
                    slow.push(if id > 0 { d / id as f64 } else { f64::NAN });
                    stat_slow.push(slow[slow.len() - 1]);
                }
                None => {
                    fct.push(f64::NAN);
                    finish.push(f64::NAN);
                    slow.push(f64::NAN);
                    // (the run's actual end: in drain mode the cap)
                    let ran = self.core.end.saturating_sub(f.start) as f64;
                    stat_slow.push(if bound && id > 0 {
                        ran / id as f64
                    } else {
                        f64::NAN
                    });
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
                ColumnData::Bool(
                    ix.iter()
                        .map(|&i| self.core.flows[i].finish.is_some())
                        .collect(),
                ),
            )
            .col("finish_ps", ColumnData::F64(finish))
            .col("fct_ps", ColumnData::F64(fct))
            .col("ideal_fct_ps", ColumnData::F64(ideal))
            .col("slowdown", ColumnData::F64(slow.clone()))
            .col(
                "delivered_bytes",
                ColumnData::I64(
                    ix.iter()
                        .map(|&i| self.core.flows[i].rx_bytes as i64)
                        .collect(),
                ),
            );
        // the transport and its recovery counters (zeros for open-loop flows)
        let counts: Vec<[u64; 5]> = ix.iter().map(|&i| self.gbn.counts(&self.core, i)).collect();
        let col = |k: usize| ColumnData::I64(counts.iter().map(|c| c[k] as i64).collect());
        let table = table
            .col(
                "transport",
                ColumnData::Str(
                    ix.iter()
                        .map(|&i| {
                            if self.core.flows[i].gbn == NONE {
                                "udp"
                            } else {
                                "gbn"
                            }
                            .to_string()
                        })
                        .collect(),
                ),
            )
            .col("retransmitted_bytes", col(0))
            .col("timeouts", col(1))
            .col("nacks", col(2))
            .col("discarded_frames", col(3));
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
        let as_word = if bound {
            "included as lower bounds"
        } else {
            "excluded"
        };
        for (label, members) in groups {
            let (done, stats) = bin_stats(&members, &slow, &stat_slow);
            let unfinished = members.len() - done;
            // the same text whatever the run's counts (they are rows of their own), so that a
            // sweep aggregates each bin's rows over seeds
            let detail = format!("{label} (unfinished flows {as_word})");
            for (name, value) in ["mean", "p50", "p95", "p99"].iter().zip(stats) {
                rows.push((
                    format!("fct_slowdown_{name}"),
                    value,
                    "ratio".into(),
                    detail.clone(),
                ));
            }
            rows.push((
                "flows_unfinished".into(),
                unfinished as f64,
                "flows".into(),
                detail.clone(),
            ));
            rows.push((
                "fct_flows".into(),
                members.len() as f64,
                "flows".into(),
                detail,
            ));
        }
        if ix.iter().any(|&i| self.core.flows[i].gbn != NONE) {
            let total = |k: usize| counts.iter().map(|c| c[k]).sum::<u64>() as f64;
            let detail = "go-back-N flows".to_string();
            rows.push((
                "retransmitted_bytes".into(),
                total(0),
                "B".into(),
                detail.clone(),
            ));
            rows.push((
                "gbn_timeouts".into(),
                total(1),
                "timeouts".into(),
                detail.clone(),
            ));
            rows.push(("gbn_nacks".into(), total(2), "NACKs".into(), detail.clone()));
            rows.push((
                "gbn_withdrawn_frames".into(),
                total(4),
                "frames".into(),
                detail,
            ));
        }
        let stats = self.fct_stats(&ix, &slow, &stat_slow);
        Some((table, stats, rows))
    }

    /// The `fct_stats` table: slowdown statistics (mean, p50, p95, p99) per size bin, tidy: the
    /// fixed bins of the field (<100 KB, 100 KB-1 MB, >1 MB), 20 bins of 5 % of the finite
    /// flows each in size order (the HPCC paper's binning of its Figure 11, from the run's own
    /// flows), and all flows; with the flows, finished and unfinished flows, the bytes the
    /// unfinished ones have not delivered, and how unfinished flows enter the statistics.
    fn fct_stats(&self, ix: &[usize], slow: &[f64], stat_slow: &[f64]) -> Table {
        let sc = self.core.sc;
        let size = |k: usize| sc.flows[ix[k]].size_bytes.unwrap_or(0);
        let mut bins: Vec<(&str, String, u64, f64, Vec<usize>)> = BINS
            .iter()
            .map(|&(label, lo, hi)| {
                let members = (0..ix.len())
                    .filter(|&k| size(k) >= lo && size(k) < hi)
                    .collect();
                let hi = if hi == u64::MAX {
                    f64::INFINITY
                } else {
                    hi as f64
                };
                ("fixed", label.to_string(), lo, hi, members)
            })
            .collect();
        // 20 bins of (about) 5 % of the flows each, by size (ties broken by flow order)
        let mut order: Vec<usize> = (0..ix.len()).collect();
        order.sort_by_key(|&k| (size(k), k));
        let n = order.len();
        for q in 0..20 {
            let members: Vec<usize> = order[q * n / 20..(q + 1) * n / 20].to_vec();
            let (lo, hi) = match (members.first(), members.last()) {
                (Some(&a), Some(&b)) => (size(a), size(b) as f64),
                _ => continue,
            };
            bins.push((
                "quantile",
                format!("p{}-{}", q * 5, q * 5 + 5),
                lo,
                hi,
                members,
            ));
        }
        bins.push((
            "all",
            "all sizes".into(),
            0,
            f64::INFINITY,
            (0..n).collect(),
        ));
        let as_word = if sc.analysis.fct_unfinished_bound {
            "lower_bound"
        } else {
            "excluded"
        };
        let mut t = TidyFct::default();
        for (binning, label, lo, hi, members) in &bins {
            let (done, values) = bin_stats(members, slow, stat_slow);
            let missing: u64 = members
                .iter()
                .filter(|&&k| slow[k].is_nan())
                .map(|&k| size(k).saturating_sub(self.core.flows[ix[k]].rx_bytes))
                .sum();
            let stats = ["mean", "p50", "p95", "p99"].into_iter().zip(values);
            for (stat, value) in stats {
                t.binning.push(binning.to_string());
                t.bin.push(label.clone());
                t.lo.push(*lo as i64);
                t.hi.push(*hi);
                t.stat.push(stat.to_string());
                t.value.push(value);
                t.flows.push(members.len() as i64);
                t.finished.push(done as i64);
                t.unfinished.push((members.len() - done) as i64);
                t.missing.push(missing as i64);
                t.unfinished_as.push(as_word.to_string());
            }
        }
        Table::new("fct_stats")
            .col("binning", ColumnData::Str(t.binning))
            .col("size_bin", ColumnData::Str(t.bin))
            .col("size_bin_lo", ColumnData::I64(t.lo))
            .col("size_bin_hi", ColumnData::F64(t.hi))
            .col("stat", ColumnData::Str(t.stat))
            .col("slowdown", ColumnData::F64(t.value))
            .col("flows", ColumnData::I64(t.flows))
            .col("finished", ColumnData::I64(t.finished))
            .col("unfinished", ColumnData::I64(t.unfinished))
            .col("unfinished_bytes", ColumnData::I64(t.missing))
            .col("unfinished_as", ColumnData::Str(t.unfinished_as))
    }
}

/// The `fct_stats` table's columns.
#[derive(Default)]
struct TidyFct {
    binning: Vec<String>,
    bin: Vec<String>,
    lo: Vec<i64>,
    hi: Vec<f64>,
    stat: Vec<String>,
    value: Vec<f64>,
    flows: Vec<i64>,
    finished: Vec<i64>,
    unfinished: Vec<i64>,
    missing: Vec<i64>,
    unfinished_as: Vec<String>,
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

    /// The frame-by-frame schedule the closed form of [`ideal_fct`] must equal.
    fn ideal_fct_by_frames(sc: &Scenario, f: &FlowSpec) -> SimTime {
        let hops = ideal_hops(sc, f);
        let total = f.size_bytes.unwrap();
        let mut free = vec![0 as SimTime; hops.len()];
        let gap = f.frame_bytes as f64 * 8.0 * units::SEC as f64 / f.rate_bps;
        let (mut sent, mut k, mut last) = (0u64, 0u64, 0);
        while sent < total {
            let size = (f.frame_bytes as u64).min(total - sent).max(64);
            sent += size;
            let mut t = f.start + round_ps(units::u64_f64(k) * gap);
            k += 1;
            for (h, hop) in hops.iter().enumerate() {
                let start = t.max(free[h]);
                free[h] = start + hop.occupancy(size);
                t = start + hop.tx(size) + hop.delay;
            }
            last = t;
        }
        last - f.start
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256), ..Default::default() })]
        /// The closed form equals the frame-by-frame schedule: random chains of 1 to 4 links
        /// of random rates (slower or faster than the source), delays, latencies, preambles
        /// and gaps, random flow sizes (a shorter last frame, a last frame below 64 B) and
        /// source rates.
        #[test]
        fn ideal_fct_closed_form_equals_the_frame_schedule(
            n_sw in 0usize..4,
            rates in proptest::collection::vec(1u64..=400, 4),
            delays in proptest::collection::vec(0u64..5_000_000, 4),
            latency in 0u64..2_000_000,
            overhead in proptest::sample::select(vec![(0u32, 0u32), (8, 12), (0, 20), (7, 0)]),
            frame in 64u32..=9216,
            size in 1u64..400_000,
            src_pm in 1u64..=1000,
            start in 0u64..1_000_000,
        ) {
            let mut t = format!(
                "[meta]\nduration = \"1s\"\n[defaults]\npreamble = \"{}B\"\nifg = \"{}B\"\nswitch_latency = \"{latency}ps\"\n\
                 [[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n",
                overhead.0, overhead.1
            );
            let nodes: Vec<String> = std::iter::once("a".to_string())
                .chain((0..=n_sw).map(|i| format!("s{i}")))
                .chain(std::iter::once("b".to_string()))
                .collect();
            for i in 0..=n_sw {
                t.push_str(&format!("[[switches]]\nname = \"s{i}\"\n"));
            }
            for w in 0..nodes.len() - 1 {
                t.push_str(&format!(
                    "[[links]]\nbetween = [\"{}\", \"{}\"]\nrate = \"{}00Mbps\"\ndelay = \"{}ps\"\n",
                    nodes[w], nodes[w + 1], rates[w % 4], delays[w % 4]
                ));
            }
            let src_rate = rates[0] * 100 * src_pm / 1000;
            t.push_str(&format!(
                "[[flows]]\nsrc = \"a\"\ndst = \"b\"\nrate = \"{}Mbps\"\nframe = \"{frame}B\"\nsize = \"{size}B\"\nstart = \"{start}ps\"\n",
                src_rate.max(1)
            ));
            let (sc, f) = flow0(&t);
            proptest::prop_assert_eq!(ideal_fct(&sc, &f), Some(ideal_fct_by_frames(&sc, &f)), "{}", t);
        }
    }

    #[test]
    fn ideal_fct_of_a_huge_flow_is_immediate() {
        // a petabyte in 64 B frames: 1.6e13 frames; the closed form does not loop over them
        let text = "[meta]\nduration = \"1s\"\n[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[links]]\nbetween = [\"a\", \"b\"]\n\
                    rate = \"10Gbps\"\ndelay = \"1us\"\n[[flows]]\nsrc = \"a\"\ndst = \"b\"\nrate = \"10Gbps\"\n\
                    frame = \"64B\"\nsize = \"1000000000000000B\"\n";
        let (sc, f) = flow0(text);
        // 10^15 B at 10 Gb/s back to back: 8e5 s, plus one link delay
        assert_eq!(ideal_fct(&sc, &f), Some(800_000 * units::SEC + 1_000_000));
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
