//! `qcnsim-bench --json` prints one JSON object per benchmark with the same keys whatever the
//! run's length: the CPU figures are `null` when they cannot be measured, never left out.

use std::process::Command;

fn bench_json(duration: &str) -> serde_json::Map<String, serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_qcnsim-bench"))
        .args(["--only", "dumbbell-10g", "--duration", duration, "--json"])
        .output()
        .expect("qcnsim-bench runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with('{'))
        .expect("a JSON line");
    match serde_json::from_str(line).expect("valid JSON") {
        serde_json::Value::Object(m) => m,
        v => panic!("not an object: {v}"),
    }
}

#[test]
fn json_keys_do_not_depend_on_the_run_length() {
    let short = bench_json("1ps");
    let long = bench_json("2ms");
    let keys =
        |m: &serde_json::Map<String, serde_json::Value>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&short), keys(&long));
    for m in [&short, &long] {
        for k in ["cpu_s", "sim_s_per_cpu_s", "events", "wall_s"] {
            assert!(m.contains_key(k), "{k} missing from {m:?}");
        }
        // a CPU time is a number or null, and the rate is null exactly when the time is 0 or null
        let cpu = m["cpu_s"].as_f64();
        assert!(cpu.is_some() || m["cpu_s"].is_null());
        assert_eq!(
            m["sim_s_per_cpu_s"].is_null(),
            cpu.is_none_or(|c| c == 0.0),
            "{m:?}"
        );
    }
    assert!(long["events"].as_u64().unwrap() > short["events"].as_u64().unwrap());
}
