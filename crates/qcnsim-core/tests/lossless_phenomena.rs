//! Lossless-network phenomena under PFC (docs/models/pause.md, docs/models/buffer.md): the
//! deadlock of a ring with its detector and the watchdog, and the victim flow of congestion
//! spreading. Runs the reference scenarios in scenarios/.

mod common;
use common::*;

fn scenario(name: &str) -> String {
    let path = format!("{}/../../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).expect("scenario file")
}

fn rows(out: &qcnsim_core::api::RunOutput, metric: &str) -> Vec<(f64, String)> {
    let s = table(out, "summary");
    let (m, v, d) = (strs(s, "metric"), f64s(s, "value"), strs(s, "detail"));
    (0..m.len())
        .filter(|&i| m[i] == metric)
        .map(|i| (v[i], d[i].clone()))
        .collect()
}

#[test]
fn the_ring_deadlocks_and_the_detector_reports_it_golden() {
    let out = run(&scenario("pfc-deadlock"), &["meta.variant=deadlock"], None);
    let found = rows(&out, "deadlock_detected");
    assert_eq!(rows(&out, "deadlocks")[0].0, 1.0, "{found:?}");
    // golden: the cycle stalls 68.48 us into the run (every ring port paused with frames
    // waiting); 1 ms later, at the next check (every 100 us), the detector reports it. A change
    // of these numbers is a reviewed change of this test.
    let (t, detail) = &found[0];
    assert_eq!(*t, 0.0011, "{detail}");
    assert_eq!(
        detail,
        "cycle s0->s1, s1->s2, s2->s3, s3->s0 stalled since 0.0000684816 s"
    );
    let pe = table(&out, "pause_events");
    let k = row_of(strs(pe, "event"), "deadlock");
    assert_eq!(i64s(pe, "t_ps")[k], 1_100_000_000);
    assert_eq!(strs(pe, "port")[k], "s0->s1");
    assert_eq!(i64s(pe, "quanta")[k], 4, "four ports on the cycle");
    // nothing is delivered once deadlocked: the 20 ms run delivers what a run ending at the
    // detection does
    let rx = |o: &qcnsim_core::api::RunOutput| i64s(table(o, "flows"), "rx_bytes").to_vec();
    let short = run(
        &scenario("pfc-deadlock"),
        &["meta.variant=deadlock", "meta.duration=1100us"],
        None,
    );
    assert_eq!(rx(&out), rx(&short));
    assert!(
        rx(&out).iter().all(|&b| b > 0),
        "every flow got going first"
    );
}

#[test]
fn no_cycle_no_deadlock_report() {
    // The same ring and load, but three flows converge on h2 along the chain s3 -> s0 -> s1 ->
    // s2 and the fourth leaves at s3: pauses spread up the chain, nothing closes a cycle.
    let text = scenario("pfc-deadlock")
        .replace(
            r#"dst = "h3"
path = ["h0", "s0", "s1", "s2", "s3", "h3"]"#,
            r#"dst = "h2"
path = ["h0", "s0", "s1", "s2", "h2"]"#,
        )
        .replace(
            r#"dst = "h0"
path = ["h1", "s1", "s2", "s3", "s0", "h0"]"#,
            r#"dst = "h2"
path = ["h1", "s1", "s2", "h2"]"#,
        )
        .replace(
            r#"dst = "h1"
path = ["h2", "s2", "s3", "s0", "s1", "h1"]"#,
            r#"dst = "h3"
path = ["h2", "s2", "s3", "h3"]"#,
        );
    assert!(text.contains(r#"path = ["h3", "s3", "s0", "s1", "s2", "h2"]"#));
    let out = run(&text, &["meta.variant=deadlock"], None);
    assert_eq!(rows(&out, "deadlocks")[0].0, 0.0);
    let pp = table(&out, "pause_priorities");
    let paused = |name: &str| i64s(pp, "paused_ps")[row_of(strs(pp, "port"), name)];
    assert!(
        paused("s0->s1") > 0 && paused("s3->s0") > 0,
        "pauses spread up the chain"
    );
    let rx: i64 = i64s(table(&out, "flows"), "rx_bytes").iter().sum();
    assert!(rx > 10_000_000, "the chain keeps delivering: {rx} B");
}

#[test]
fn the_watchdog_breaks_the_deadlock() {
    let out = run(&scenario("pfc-deadlock"), &["meta.variant=watchdog"], None);
    let fired = rows(&out, "watchdog_triggers")[0].0;
    assert!(fired > 0.0);
    let dead = run(&scenario("pfc-deadlock"), &["meta.variant=deadlock"], None);
    let rx =
        |o: &qcnsim_core::api::RunOutput| i64s(table(o, "flows"), "rx_bytes").iter().sum::<i64>();
    assert!(
        rx(&out) > 2 * rx(&dead),
        "watchdog {} vs deadlock {}",
        rx(&out),
        rx(&dead)
    );
    // forwarding into full buffers costs frames: the lossless class loses some at the headroom
    let sb = table(&out, "switch_buffer");
    assert!(i64s(sb, "drop_headroom_frames").iter().sum::<i64>() > 0);
}

#[test]
fn congestion_spreading_makes_a_victim_and_qcn_relieves_it() {
    let text = scenario("pfc-victim");
    let loss = |variant: &str| {
        let out = run(&text, &[&format!("meta.variant={variant}")], None);
        let v = rows(&out, "victim_loss");
        assert_eq!(v.len(), 1, "one victim flow: {v:?}");
        (v[0].0, out)
    };
    let (no_pfc, _) = loss("no-pfc");
    let (pfc, out) = loss("pfc");
    let (pfc_qcn, _) = loss("pfc-qcn");
    assert!(
        no_pfc < 1.0,
        "without PFC the victim is untouched: {no_pfc} %"
    );
    assert!(pfc > 20.0, "PFC pauses the victim with the incast: {pfc} %");
    assert!(
        pfc_qcn < pfc / 2.0,
        "QCN relieves it: {pfc_qcn} % vs {pfc} %"
    );
    // the victim never crosses the congested port, and nothing is dropped with PFC
    let drops: i64 = i64s(table(&out, "flows"), "dropped_frames").iter().sum();
    assert_eq!(drops, 0);
    let pp = table(&out, "pause_priorities");
    let row = row_of(strs(pp, "port"), "t1->t2");
    assert_eq!(i64s(pp, "priority")[row], 3);
    assert!(i64s(pp, "paused_ps")[row] > 0);
}
