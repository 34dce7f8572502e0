//! Golden tests: the `summary` table of small scenarios is snapshotted in
//! `tests/golden/<name>.summary.csv`. A change in results must be a reviewed change of the
//! snapshot: rerun with `QCNSIM_UPDATE_GOLDEN=1` to rewrite it, then inspect the diff.
//! Comparison: strings exactly, integral values exactly, other floats to a relative 1e-12.

mod common;
use common::*;
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn quote(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn parse_csv_line(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut inq = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, inq) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', true) => inq = false,
            ('"', false) if cur.is_empty() => inq = true,
            (',', false) => out.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The summary table as CSV; floats in Rust's shortest round-trip form.
fn summary_csv(out: &qcnsim_core::api::RunOutput) -> String {
    let s = table(out, "summary");
    let (m, v, u, d) = (
        strs(s, "metric"),
        f64s(s, "value"),
        strs(s, "unit"),
        strs(s, "detail"),
    );
    let mut csv = String::from("metric,value,unit,detail\n");
    for i in 0..s.rows() {
        csv.push_str(&format!(
            "{},{:?},{},{}\n",
            quote(&m[i]),
            v[i],
            quote(&u[i]),
            quote(&d[i])
        ));
    }
    csv
}

fn value_matches(want: &str, got: &str) -> bool {
    if want == got {
        return true;
    }
    let (Ok(w), Ok(g)) = (want.parse::<f64>(), got.parse::<f64>()) else {
        return false;
    };
    if w.is_nan() || g.is_nan() {
        return w.is_nan() && g.is_nan();
    }
    // Counts (integral values in the snapshot) must match exactly.
    if w.fract() == 0.0 && w.abs() < 9e15 {
        return w == g;
    }
    (w - g).abs() <= 1e-12 * w.abs().max(g.abs())
}

fn check_golden(name: &str) {
    let dir = golden_dir();
    let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).expect("scenario");
    let out = run(&text, &[], None);
    let got = summary_csv(&out);
    let snap = dir.join(format!("{name}.summary.csv"));
    if std::env::var("QCNSIM_UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::write(&snap, &got).expect("write snapshot");
        eprintln!("golden: rewrote {}", snap.display());
        return;
    }
    let want = std::fs::read_to_string(&snap).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with QCNSIM_UPDATE_GOLDEN=1 cargo test -p qcnsim-core --release --test golden",
            snap.display()
        )
    });
    let w: Vec<Vec<String>> = want.lines().map(parse_csv_line).collect();
    let g: Vec<Vec<String>> = got.lines().map(parse_csv_line).collect();
    let mut diff = Vec::new();
    for i in 0..w.len().max(g.len()) {
        match (w.get(i), g.get(i)) {
            (Some(a), Some(b)) => {
                let same = a.len() == b.len()
                    && a.iter().zip(b).enumerate().all(|(k, (x, y))| {
                        if k == 1 && i > 0 {
                            value_matches(x, y)
                        } else {
                            x == y
                        }
                    });
                if !same {
                    diff.push(format!("- {}\n+ {}", a.join(","), b.join(",")));
                }
            }
            (Some(a), None) => diff.push(format!("- {}", a.join(","))),
            (None, Some(b)) => diff.push(format!("+ {}", b.join(","))),
            (None, None) => {}
        }
    }
    assert!(
        diff.is_empty(),
        "summary of {name} differs from {} (- snapshot, + now); if the change is intended, \
         rerun with QCNSIM_UPDATE_GOLDEN=1 and review the diff:\n{}",
        snap.display(),
        diff.join("\n")
    );
}

#[test]
fn golden_two_src_hotspot() {
    check_golden("two-src-hotspot");
}

#[test]
fn csv_round_trip_and_tolerance() {
    // The comparison itself must be able to fail.
    assert_eq!(
        parse_csv_line("a,\"x, \"\"y\"\"\",3"),
        vec!["a", "x, \"y\"", "3"]
    );
    assert_eq!(parse_csv_line(&quote("p, q")), vec!["p, q"]);
    assert!(value_matches("1.0", "1.0"));
    assert!(value_matches("NaN", "NaN"));
    assert!(!value_matches("NaN", "1.0"));
    assert!(!value_matches("100.0", "101.0"));
    assert!(
        !value_matches("12.0", "12.000000000001"),
        "integral values are exact"
    );
    assert!(value_matches("0.1", "0.10000000000000002"));
    assert!(!value_matches("0.1", "0.1000000001"));
}
