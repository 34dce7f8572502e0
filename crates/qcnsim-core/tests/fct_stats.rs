//! The `fct_stats` table (docs/tables.md): slowdown statistics per size bin as tidy columns,
//! unfinished flows counted with their undelivered bytes, excluded or included as lower bounds.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

/// 16 senders of 500 KB into one 40 Gb/s host under DCQCN and PFC, sent by traffic generators:
/// they lose frames at their senders and never finish; 4 messages of 20 KB to another host do.
fn incast() -> String {
    format!(
        "{INCAST_40G}sender = \"generator\"\n[[workloads]]\nname = \"small\"\nkind = \"incast\"\n\
         senders = [\"h9\", \"h10\", \"h11\", \"h12\"]\ndst = \"h1\"\nsize = \"20KB\"\n\
         start = \"100us\"\n"
    )
}

/// (slowdown, flows, finished, unfinished, unfinished bytes, unfinished_as) of a row.
fn row(out: &RunOutput, binning: &str, bin: &str, stat: &str) -> (f64, i64, i64, i64, i64, String) {
    let t = table(out, "fct_stats");
    let (b, s, st) = (strs(t, "binning"), strs(t, "size_bin"), strs(t, "stat"));
    let i = (0..t.rows())
        .find(|&i| b[i] == binning && s[i] == bin && st[i] == stat)
        .unwrap_or_else(|| panic!("no row {binning} {bin} {stat}"));
    (
        f64s(t, "slowdown")[i],
        i64s(t, "flows")[i],
        i64s(t, "finished")[i],
        i64s(t, "unfinished")[i],
        i64s(t, "unfinished_bytes")[i],
        strs(t, "unfinished_as")[i].clone(),
    )
}

#[test]
fn unfinished_flows_are_counted_and_excluded_or_bounded() {
    let ex = run(&incast(), &[], None);
    let fct = table(&ex, "fct");
    let done = bools(fct, "finished");
    let size = i64s(fct, "size_bytes");
    let got = i64s(fct, "delivered_bytes");
    let unfinished = done.iter().filter(|d| !**d).count() as i64;
    let missing: i64 = (0..done.len())
        .filter(|&i| !done[i])
        .map(|i| size[i] - got[i])
        .sum();
    assert!(unfinished > 0 && unfinished < 20, "{unfinished}");
    let (mean_ex, flows, fin, unf, bytes, how) = row(&ex, "all", "all sizes", "mean");
    assert_eq!(
        (flows, fin, unf, bytes),
        (20, 20 - unfinished, unfinished, missing)
    );
    assert_eq!(how, "excluded");
    // the mean over the finished flows' slowdowns
    let sl = f64s(fct, "slowdown");
    let fin_mean = (0..20).filter(|&i| done[i]).map(|i| sl[i]).sum::<f64>() / fin as f64;
    assert!((mean_ex - fin_mean).abs() < 1e-9 * fin_mean);
    // included as lower bounds: each unfinished flow counts with (end - start) / ideal
    let lb = run(
        &incast(),
        &["analysis.fct_unfinished=\"lower_bound\""],
        None,
    );
    let (mean_lb, .., how) = row(&lb, "all", "all sizes", "mean");
    assert_eq!(how, "lower_bound");
    let ideal = f64s(fct, "ideal_fct_ps");
    let start = i64s(fct, "start_ps");
    let bound: f64 = (0..20)
        .filter(|&i| !done[i])
        .map(|i| (5e9 - start[i] as f64) / ideal[i])
        .sum();
    let want = (fin_mean * fin as f64 + bound) / 20.0;
    assert!((mean_lb - want).abs() < 1e-9 * want, "{mean_lb} {want}");
}

#[test]
fn bins_are_tidy_columns() {
    let text = incast().replace("sender = \"generator\"\n", "");
    let out = run(&text, &[], None);
    let t = table(&out, "fct_stats");
    // the three fixed bins, the quantile bins (20 flows: one each) and all, four statistics each
    assert_eq!(t.rows(), (3 + 20 + 1) * 4);
    let (p50, flows, fin, unf, bytes, _) = row(&out, "fixed", "100KB-1MB", "p50");
    assert_eq!((flows, fin, unf, bytes), (16, 16, 0, 0));
    assert!(p50 >= 1.0, "{p50}");
    // 20 flows in 20 bins of 5 %: each flow in one bin
    let binning = strs(t, "binning");
    let quantile_flows: i64 = (0..t.rows())
        .filter(|&i| binning[i] == "quantile" && strs(t, "stat")[i] == "mean")
        .map(|i| i64s(t, "flows")[i])
        .sum();
    assert_eq!(quantile_flows, 20);
    let (small, ..) = row(&out, "quantile", "p0-5", "mean");
    assert!(small >= 1.0);
    let lo = i64s(t, "size_bin_lo");
    let hi = f64s(t, "size_bin_hi");
    let fixed_hi: Vec<f64> = (0..t.rows())
        .filter(|&i| binning[i] == "fixed" && strs(t, "stat")[i] == "mean")
        .map(|i| hi[i])
        .collect();
    assert_eq!(fixed_hi, [100_000.0, 1_000_000.0, f64::INFINITY]);
    assert!(lo.iter().all(|&l| l >= 0));
}
