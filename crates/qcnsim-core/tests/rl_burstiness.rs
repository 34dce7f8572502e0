//! Rate-limiter burstiness (the QCN hardware study's bursty NIC limiter): the rate limiter is a
//! token bucket `rl_burst` bytes deep. A one-frame bucket (the default) paces frames at CR; a
//! deeper bucket saves the tokens earned while the source is quiet and lets the next burst
//! through at line rate, as the bursty NIC limiter of the hardware study did.
//!
//! Set-up that isolates the limiter: a Bernoulli source (5 Gb/s average, frames back to back at
//! 10 Gb/s within a burst) through a rate limiter pinned at CR = 7 Gb/s into a 7 Gb/s
//! bottleneck. The pin: Qeq is tiny so the first CNMs cut CR, `min_rate` = 7 Gb/s stops the cut
//! there, and the byte counter and timer are so long that CR never increases in the run.
//! Paced at CR = the service rate, frames never find a backlog; bursts at 10 Gb/s into 7 Gb/s
//! do build one, of about 30 % of the burst.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

const SCENARIO: &str = r#"
[meta]
name = "rl-burst"
duration = "30ms"
seed = 2

[defaults]
link_rate = "10Gbps"
link_delay = "1us"
switch_latency = "300ns"
buffer = "300KB"

[[hosts]]
name = "src"
[[hosts]]
name = "dst"
[[switches]]
name = "sw1"
[[links]]
between = ["src", "sw1"]
[[links]]
between = ["sw1", "dst"]
rate = "7Gbps"

[[flows]]
name = "f0"
src = "src"
dst = "dst"
traffic = "bernoulli"
rate = "5Gbps"
frame = "1500B"

[cc]
mode = "qcn"
[cc.qcn]
cp_ports = ["sw1->dst"]
[cc.qcn.cp]
q_eq = "1KB"
[cc.qcn.rp]
min_rate = "7Gbps"
timer = "1s"
byte_counter = "1000000000000B"

[metrics]
throughput_bin = "1ms"
queue_interval = "10us"
queue_ports = ["sw1->dst"]
rate_interval = "100us"
"#;

const WARMUP_PS: i64 = 5_000_000_000; // 5 ms: CR is pinned well before

/// (mean, standard deviation, max) of the bottleneck queue samples after the warm-up, and
/// (min, max) CR after the warm-up.
fn stats(out: &RunOutput) -> (f64, f64, i64, (f64, f64)) {
    let q = table(out, "queue_samples");
    let t = i64s(q, "t_ps");
    let b = i64s(q, "qlen_bytes");
    let v: Vec<f64> = (0..q.rows())
        .filter(|&k| t[k] >= WARMUP_PS)
        .map(|k| b[k] as f64)
        .collect();
    assert!(v.len() > 2_000);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
    let max = v.iter().cloned().fold(0.0, f64::max) as i64;
    let r = table(out, "rp_rates");
    let rt = i64s(r, "t_ps");
    let cr: Vec<f64> = (0..r.rows())
        .filter(|&k| rt[k] >= WARMUP_PS)
        .map(|k| f64s(r, "cr_bps")[k])
        .collect();
    let crmin = cr.iter().cloned().fold(f64::INFINITY, f64::min);
    let crmax = cr.iter().cloned().fold(0.0, f64::max);
    (mean, sd, max, (crmin, crmax))
}

#[test]
fn a_deeper_rate_limiter_bucket_gives_a_burstier_queue() {
    for seed in [1u64, 2, 3] {
        let smooth = run(SCENARIO, &[], Some(seed));
        let bursty = run(SCENARIO, &["cc.qcn.rp.rl_burst=16KB"], Some(seed));
        let deep = run(SCENARIO, &["cc.qcn.rp.rl_burst=64KB"], Some(seed));
        let s = stats(&smooth);
        let b = stats(&bursty);
        let d = stats(&deep);
        // The limiter is pinned at 7 Gb/s in all three runs, so only the bucket differs.
        for (name, x) in [("smooth", &s), ("16KB", &b), ("64KB", &d)] {
            assert_eq!(x.3, (7e9, 7e9), "seed {seed} {name}: CR not pinned at 7G");
        }
        // Smooth pacing at the service rate: frames never find a backlog, so every queue
        // sample after the warm-up (before it, the source ran unlimited) is empty.
        assert_eq!((s.0, s.2), (0.0, 0), "seed {seed}: smooth queue not empty");
        // A 16 KB bucket lets bursts through at 10 Gb/s: a queue of several frames builds
        // (16 KB at 10G into 7G leaves ~4.8 KB) and fluctuates.
        assert!(b.2 >= 4_500, "seed {seed}: bursty max queue {}", b.2);
        assert!(b.1 > 300.0, "seed {seed}: bursty queue sd {}", b.1);
        assert!(b.0 > 100.0, "seed {seed}: bursty mean queue {}", b.0);
        // Deeper still is at least as bursty (the source's bursts, not the bucket, bound it).
        assert!(
            d.2 >= b.2 && d.1 >= 0.99 * b.1,
            "seed {seed}: {d:?} vs {b:?}"
        );
        // The same traffic got through: bursts do not change the long-run rate.
        let rx = |o: &RunOutput| i64s(table(o, "flows"), "rx_bytes")[0] as f64;
        assert!((rx(&bursty) / rx(&smooth) - 1.0).abs() < 0.01);
    }
}
