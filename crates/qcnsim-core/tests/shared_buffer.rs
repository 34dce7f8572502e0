//! Shared-buffer switches (docs/models/buffer.md): the memory model in the network.

mod common;
use common::*;

/// Three 1 Gb/s senders into one switch whose port to the sink is served at 500 Mb/s.
const INCAST: &str = r#"
[meta]
duration = "20ms"
[defaults]
link_rate = "1Gbps"
link_delay = "1us"
switch_latency = "1us"
buffer = "30KB"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[hosts]]
name = "c"
[[hosts]]
name = "sink"
[[hosts]]
name = "other"
[[switches]]
name = "sw"
[[links]]
between = ["a", "sw"]
[[links]]
between = ["b", "sw"]
[[links]]
between = ["c", "sw"]
[[links]]
between = ["sw", "sink"]
rate = "500Mbps"
[[links]]
between = ["sw", "other"]
[[flows]]
name = "fa"
src = "a"
dst = "sink"
rate = "400Mbps"
[[flows]]
name = "fb"
src = "b"
dst = "sink"
rate = "400Mbps"
traffic = "poisson"
[[flows]]
name = "fc"
src = "c"
dst = "other"
rate = "300Mbps"
traffic = "bernoulli"
"#;

fn flows_cols(out: &qcnsim_core::api::RunOutput) -> (Vec<i64>, Vec<i64>, Vec<i64>) {
    let f = table(out, "flows");
    (
        i64s(f, "rx_frames").to_vec(),
        i64s(f, "dropped_frames").to_vec(),
        i64s(f, "gen_frames").to_vec(),
    )
}

#[test]
fn a_pool_without_thresholds_is_the_private_buffer_for_the_congested_port() {
    // Only sw->sink congests; a pool of 30 KB with no thresholds (complete sharing) drops the
    // incast flows' frames exactly when that port's private 30 KB queue would. The flow to the
    // idle port "other" is the victim of complete sharing: it finds the pool full.
    let private = run(INCAST, &[], None);
    let shared = run(
        &format!(
            "{INCAST}[shared_buffer]\nsize = \"30KB\"\ningress_threshold = \"none\"\negress_threshold = \"none\"\n"
        ),
        &[],
        None,
    );
    let (rx_p, drop_p, gen_p) = flows_cols(&private);
    let (rx_s, drop_s, gen_s) = flows_cols(&shared);
    assert!(
        drop_p[..2].iter().sum::<i64>() > 100,
        "the port congests: {drop_p:?}"
    );
    assert_eq!(gen_p, gen_s);
    assert_eq!(&rx_p[..2], &rx_s[..2]);
    assert_eq!(&drop_p[..2], &drop_s[..2]);
    assert_eq!(
        drop_p[2], 0,
        "a private buffer protects the idle port's flow"
    );
    assert!(drop_s[2] > 10, "complete sharing starves it: {drop_s:?}");
    let sb = table(&shared, "switch_buffer");
    assert_eq!(i64s(sb, "size_bytes"), &[30_000]);
    assert_eq!(i64s(sb, "drop_pool_frames")[0], drop_s.iter().sum::<i64>());
    assert!(i64s(sb, "max_used_bytes")[0] <= 30_000);
    assert!(
        private.table("switch_buffer").is_none(),
        "no table without a shared buffer"
    );
    // a dynamic egress threshold (alpha = 1) keeps half the free space for other queues: the
    // victim loses nothing, the hog's queue is held to about half the pool
    let dynamic = run(
        &format!("{INCAST}[shared_buffer]\nsize = \"30KB\"\ningress_threshold = \"none\"\n"),
        &[],
        None,
    );
    let (_, drop_d, _) = flows_cols(&dynamic);
    assert_eq!(drop_d[2], 0, "{drop_d:?}");
    let sb = table(&dynamic, "switch_buffer");
    assert_eq!(
        i64s(sb, "drop_egress_frames")[0],
        drop_d.iter().sum::<i64>()
    );
    let q = i64s(table(&dynamic, "ports"), "max_qlen_bytes")
        [row_of(strs(table(&dynamic, "ports"), "port"), "sw->sink")];
    assert!((13_500..=16_500).contains(&q), "about half of 30 KB: {q}");
}

#[test]
fn a_huge_pool_is_an_infinite_buffer() {
    let text = INCAST.replace("buffer = \"30KB\"", "buffer = \"infinite\"");
    let inf = run(&text, &[], None);
    let shared = run(
        &format!("{text}[shared_buffer]\nsize = \"100GB\"\n"),
        &[],
        None,
    );
    assert_eq!(flows_cols(&inf), flows_cols(&shared));
    let p = |o: &qcnsim_core::api::RunOutput| i64s(table(o, "ports"), "tx_bytes").to_vec();
    assert_eq!(p(&inf), p(&shared));
    let q = |o: &qcnsim_core::api::RunOutput| i64s(table(o, "ports"), "max_qlen_bytes").to_vec();
    // the shared memory never takes the idle-port shortcut, so max_qlen can only differ on
    // ports that never queued (they then see their frame at the queue)
    let (qi, qs) = (q(&inf), q(&shared));
    for (k, (a, b)) in qi.iter().zip(&qs).enumerate() {
        assert!(a == b || *a <= 1500 && *b <= 1500, "port {k}: {a} vs {b}");
    }
}

#[test]
fn dynamic_thresholds_share_the_pool_between_two_congested_ports() {
    // Two egress ports congest at once; with alpha = 1 on the egress queues each may hold
    // T = (S - used) at most: two equal queues settle at S/3 each (Choudhury & Hahne), so the
    // pool is never full and the drops are at the egress threshold.
    let text = INCAST
        .replace(
            "rate = \"300Mbps\"\ntraffic = \"bernoulli\"",
            "rate = \"900Mbps\"",
        )
        .replace(
            "between = [\"sw\", \"other\"]",
            "between = [\"sw\", \"other\"]\nrate = \"500Mbps\"",
        );
    let out = run(
        &format!(
            "{text}[shared_buffer]\nsize = \"90KB\"\ningress_threshold = \"none\"\negress_threshold = \"dynamic\"\negress_alpha = 1.0\n"
        ),
        &[],
        None,
    );
    let sb = table(&out, "switch_buffer");
    assert!(i64s(sb, "drop_egress_frames")[0] > 100);
    assert_eq!(i64s(sb, "drop_pool_frames")[0], 0);
    let maxq = i64s(table(&out, "ports"), "max_qlen_bytes");
    let ports = strs(table(&out, "ports"), "port");
    for name in ["sw->sink", "sw->other"] {
        let q = maxq[row_of(ports, name)];
        // one queue alone could reach S/2 = 45 KB; with both full, 30 KB each (+ one frame)
        assert!(q <= 45_000 + 1500, "{name}: {q}");
    }
    let used = i64s(sb, "max_used_bytes")[0];
    assert!(used < 90_000 - 1500, "alpha = 1 keeps free space: {used}");
    assert!(
        used > 55_000,
        "both queues fill to about 2/3 of the pool: {used}"
    );
}

#[test]
fn cells_round_each_frame_up() {
    // 1000-byte frames in 208-byte cells take 5 cells (1040 B each): the 30 KB pool is 144
    // cells, so it holds 28 such frames (140 cells) and never more than 144 cells
    let text = INCAST.replace(
        "[[flows]]\nname = \"fa\"",
        "[[flows]]\nframe = \"1000B\"\nname = \"fa\"",
    );
    let out = run(
        &format!(
            "{text}[shared_buffer]\nsize = \"30KB\"\ncell = \"208B\"\ningress_threshold = \"none\"\negress_threshold = \"none\"\n"
        ),
        &[],
        None,
    );
    let sb = table(&out, "switch_buffer");
    assert_eq!(i64s(sb, "size_bytes")[0], 144 * 208);
    let max = i64s(sb, "max_used_bytes")[0];
    assert!((140 * 208..=144 * 208).contains(&max), "{max}");
}

#[test]
fn bad_shared_buffer_input_names_the_field() {
    // (overrides, field, part of the message)
    #[rustfmt::skip]
    let cases: &[(&[&str], &str, &str)] = &[
        (&["shared_buffer.size=12"], "shared_buffer.size", "\"off\" or a size"),
        (&["shared_buffer.size=10KB", "shared_buffer.ingress_reserved=4KB"], "shared_buffer.size", "exceed the pool"),
        (&["shared_buffer.size=1MB", "shared_buffer.ingress_threshold=static"], "shared_buffer.ingress_static", "required"),
        (&["shared_buffer.size=1MB", "shared_buffer.xoff_scope=pool"], "shared_buffer.xoff_scope", "flow_control.mode"),
        (&["shared_buffer.size=1MB", "shared_buffer.switches=[\"a\"]"], "shared_buffer.switches.0", "the name of a switch"),
        (&["shared_buffer.size=1MB", "shared_buffer.cell=0B"], "shared_buffer.cell", "from 1B"),
        (&["shared_buffer.size=1MB", "shared_buffer.egress_alpha=-1"], "shared_buffer.egress_alpha", "from 0"),
        (&["shared_buffer.size=1MB", "shared_buffer.colour=1"], "shared_buffer.colour", "unknown"),
        (&["flow_control.mode=pfc", "flow_control.deadlock_detection=soon"], "flow_control.deadlock_detection", "\"off\" or a time"),
        (&["flow_control.mode=pfc", "flow_control.watchdog=0s"], "flow_control.watchdog", "at least 1"),
        (&["analysis.victims=true"], "analysis.victims", "analysis.bottleneck"),
    ];
    for (ov, field, part) in cases {
        let ov: Vec<String> = ov.iter().map(|s| s.to_string()).collect();
        let err = qcnsim_core::scenario::load(INCAST, &ov).expect_err("bad input");
        let msg = err.to_string();
        assert!(msg.contains(field) && msg.contains(part), "{ov:?}: {msg}");
    }
}

/// Every table of two runs, column by column.
fn assert_same_tables(
    a: &qcnsim_core::api::RunOutput,
    b: &qcnsim_core::api::RunOutput,
    skip: &[&str],
) {
    for t in &a.tables {
        if skip.contains(&t.name.as_str()) {
            continue;
        }
        let u = table(b, &t.name);
        for c in &t.columns {
            // compared as text: NaN equals NaN
            assert_eq!(
                format!("{:?}", Some(&c.data)),
                format!("{:?}", u.column(&c.name)),
                "table {} column {}",
                t.name,
                c.name
            );
        }
    }
}

#[test]
fn the_global_pause_watermark_is_the_pool_scope_of_the_shared_memory() {
    // BCN calibration study: "pause all inputs if memory exceeds 140 KB, unpause below 130 KB",
    // no limit on queue lengths. As flow_control.watermark = "global" (per-port infinite
    // buffers; the reader makes it a memory whose queues keep their ports' buffers) and as an
    // explicit shared memory with the pool scope, no reserve, no headroom, no thresholds: the
    // same tables.
    let path = format!(
        "{}/../../scenarios/bcn-calibration.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(path).expect("scenario");
    let global = run(&text, &["meta.duration=8ms"], None);
    let pool = run(
        &text,
        &[
            "meta.duration=8ms",
            // the global watermark is this memory; an explicit one replaces the meters
            "flow_control.watermark=ingress",
            "shared_buffer.size=1099511627776B", // 1 TiB, as the reader gives infinite ports
            "shared_buffer.xoff_scope=pool",
            "shared_buffer.ingress_threshold=none",
            "shared_buffer.egress_threshold=none",
        ],
        None,
    );
    let paused: i64 = i64s(table(&global, "ports"), "paused_ps").iter().sum();
    assert!(paused > 0, "the watermark pauses in this window");
    assert_same_tables(&global, &pool, &["summary"]);
    let sb = table(&pool, "switch_buffer");
    assert!(i64s(sb, "xoff").iter().sum::<i64>() > 0);
    // XON follows every XOFF (one may still be open at the end)
    for (f, n) in i64s(sb, "xoff").iter().zip(i64s(sb, "xon")) {
        assert!(f - n == 0 || f - n == 1, "{f} XOFF, {n} XON");
    }
}
