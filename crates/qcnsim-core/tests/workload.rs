//! Workloads and flow completion times: Poisson arrivals at a target load with sizes from a
//! CDF, the traffic patterns, incast, the `fct` table and its summary rows.
//! docs/models/workload.md, docs/tables.md.

mod common;

use qcnsim_core::scenario::{self, Scenario};

const FABRIC: &str = r#"
[meta]
duration = "20ms"
[topology]
leaves = 2
spines = 2
hosts_per_leaf = 4
host_rate = "10Gbps"
spine_rate = "40Gbps"
[routing]
mode = "ecmp"
"#;

fn load(text: &str) -> Scenario {
    scenario::load(text, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn poisson_arrivals_offer_the_target_load() {
    // each of 8 hosts offers 0.4 x 10 Gb/s of web-search flows over 1 s of arrivals
    let text = format!(
        "{}\n[[workloads]]\nname = \"ws\"\nsizes = \"websearch\"\nload = 0.4\nstop = \"1s\"\n",
        FABRIC.replace("20ms", "1s")
    );
    let sc = load(&text);
    let bytes: u64 = sc.flows.iter().map(|f| f.size_bytes.unwrap()).sum();
    let offered = bytes as f64 * 8.0 / 8.0 / 1.0; // per host, per second
    let want = 0.4 * 10e9;
    // about 2,400 flows with a heavy tail: within 10 %
    assert!((offered / want - 1.0).abs() < 0.1, "{offered} vs {want}");
    // all-to-all: never to itself, every other host used
    assert!(sc.flows.iter().all(|f| f.src != f.dst));
    let mut dsts: Vec<usize> = sc.flows.iter().map(|f| f.dst).collect();
    dsts.sort();
    dsts.dedup();
    assert_eq!(dsts.len(), 8);
    // sorted by start, named by workload
    assert!(sc.flows.windows(2).all(|w| w[0].start <= w[1].start));
    assert_eq!(sc.flows[0].name, "ws.0");
    // inter-arrival times of one source are exponential: coefficient of variation near 1
    let src0 = sc.flows[0].src;
    let t: Vec<f64> = sc
        .flows
        .iter()
        .filter(|f| f.src == src0)
        .map(|f| f.start as f64)
        .collect();
    let gaps: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
    let m = gaps.iter().sum::<f64>() / gaps.len() as f64;
    let sd = (gaps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
    assert!((sd / m - 1.0).abs() < 0.15, "cv {}", sd / m);
}

#[test]
fn patterns_and_incast() {
    let perm = load(&format!(
        "{FABRIC}\n[[workloads]]\nsizes = \"hadoop\"\nload = 0.3\npattern = \"permutation\"\n"
    ));
    // a permutation: each source always sends to the same destination, and no two sources
    // share one
    let mut pairs: Vec<(usize, usize)> = perm.flows.iter().map(|f| (f.src, f.dst)).collect();
    pairs.sort();
    pairs.dedup();
    assert_eq!(pairs.len(), 8, "{pairs:?}");
    let mut d: Vec<usize> = pairs.iter().map(|p| p.1).collect();
    d.sort();
    d.dedup();
    assert_eq!(d.len(), 8);
    let m2o = load(&format!(
        "{FABRIC}\n[[workloads]]\ncdf = [[1000, 0.0], [1000, 1.0]]\nload = 0.1\npattern = \"many-to-one\"\ndst = \"h3\"\n"
    ));
    assert!(m2o
        .flows
        .iter()
        .all(|f| f.dst == m2o.node_index["h3"] && f.size_bytes == Some(1000)));
    let inc = load(&format!(
        "{FABRIC}\n[[workloads]]\nname = \"incast\"\nkind = \"incast\"\nsenders = 5\ndst = \"h0\"\nsize = \"64KB\"\nperiod = \"5ms\"\nstart = \"1ms\"\n"
    ));
    // 20ms run, every 5ms from 1ms: 4 rounds of 5 senders
    assert_eq!(inc.flows.len(), 20);
    assert!(inc.flows.iter().all(|f| f.size_bytes == Some(64_000)));
    assert_eq!(inc.flows[5].start, 6_000_000_000);
    let at = load(&format!(
        "{FABRIC}\n[[workloads]]\nkind = \"incast\"\nsenders = [\"h4\", \"h5\"]\ndst = \"h0\"\nsize = \"1KB\"\nat = [\"1ms\", \"2ms\"]\n"
    ));
    assert_eq!(at.flows.len(), 4);
}

#[test]
fn workloads_follow_the_run_seed() {
    let text = format!("{FABRIC}\n[[workloads]]\nsizes = \"websearch\"\nload = 0.3\n");
    let sizes = |seed: Option<u64>| -> Vec<Option<u64>> {
        scenario::load_seeded(&text, &[], seed)
            .unwrap()
            .flows
            .iter()
            .map(|f| f.size_bytes)
            .collect()
    };
    assert_eq!(sizes(Some(4)), sizes(Some(4)));
    assert_ne!(sizes(Some(4)), sizes(Some(5)));
}

#[test]
fn bad_workloads() {
    // (workload body, error path, shows)
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        ("sizes = \"facebook\"", "workloads.0.sizes", "websearch"),
        ("load = 0.5", "workloads.0.sizes", "missing"),
        ("sizes = \"websearch\"\nload = 1.5", "workloads.0.load", "1.5"),
        ("cdf = [[0, 0.0], [10, 0.5]]", "workloads.0.cdf", "to 1"),
        ("cdf = [[0, 0.0], [\"x\", 1.0]]", "workloads.0.cdf", "pairs"),
        ("sizes = \"websearch\"\npattern = \"many-to-one\"", "workloads.0.dst", "missing"),
        ("sizes = \"websearch\"\nhosts = [\"h0\", \"nobody\"]", "workloads.0.hosts", "nobody"),
        ("kind = \"incast\"\ndst = \"h0\"\nsize = \"1KB\"\nsenders = 9", "workloads.0.senders", "9"),
        ("kind = \"incast\"\ndst = \"h0\"\nsize = \"1KB\"\nsenders = [\"h0\"]", "workloads.0.senders", "other than dst"),
        ("kind = \"incast\"\ndst = \"h0\"\nsenders = 2", "workloads.0.size", "missing"),
        ("kind = \"incast\"\ndst = \"h0\"\nsenders = 2\nsize = \"2000000GB\"", "workloads.0.size", "1 PB"),
        ("kind = \"incast\"\ndst = \"h0\"\nsize = \"1KB\"\nsenders = 2\nat = [\"1s\"]", "workloads.0.at.0", "1s"),
        ("sizes = \"websearch\"\nspeed = 3", "workloads.0.speed", "unknown"),
        ("sizes = \"websearch\"\nload_on = \"core*\"", "workloads.0.load_on", "leaf*-spine*"),
        ("sizes = \"websearch\"\nload = 0.9\nload_on = \"leaf*-spine*\"\npattern = \"permutation\"\nhosts = [\"h0\", \"h1\"]", "workloads.0.load_on", "cross"),
        ("sizes = \"websearch\"\nload = 0.9\nload_on = \"leaf*-spine*\"", "workloads.0.load", "at most"),
    ];
    for (body, path, shows) in cases {
        let text = format!("{FABRIC}\n[[workloads]]\n{body}\n");
        let e = scenario::load(&text, &[])
            .err()
            .unwrap_or_else(|| panic!("accepted: {body}"));
        assert_eq!(e.path, *path, "{body}: {e}");
        assert!(e.to_string().contains(shows), "{body}: {e}");
    }
}

#[test]
fn fct_table_on_an_idle_path_equals_the_ideal() {
    // one flow at a time (far apart): every slowdown is exactly 1
    let text = format!(
        "{FABRIC}\n[[workloads]]\nkind = \"incast\"\nsenders = [\"h4\"]\ndst = \"h0\"\nsize = \"150KB\"\nperiod = \"2ms\"\n"
    );
    let out = common::run(&text, &[], None);
    let fct = common::table(&out, "fct");
    let s = common::f64s(fct, "slowdown");
    assert_eq!(s.len(), 10);
    assert!(s.iter().all(|&x| x == 1.0), "{s:?}");
    assert!(common::bools(fct, "finished").iter().all(|&b| b));
    let p99 = common::summary_value(&out, "fct_slowdown_p99", "100KB-1MB").unwrap();
    assert_eq!(p99, 1.0);
    let unfinished = common::summary_value(&out, "flows_unfinished", "all sizes").unwrap();
    assert_eq!(unfinished, 0.0);
}

#[test]
fn unfinished_flows_are_reported_never_negative() {
    // 16 senders of 1 MB into one host with a 100 KB buffer, no flow control: frames are
    // dropped, open-loop flows cannot finish
    let text = format!(
        "{}\n[[workloads]]\nkind = \"incast\"\nsenders = 7\ndst = \"h0\"\nsize = \"1MB\"\nat = [\"1ms\"]\n",
        FABRIC.replace("spine_rate = \"40Gbps\"", "spine_rate = \"40Gbps\"\nleaf_buffer = \"100KB\"")
    );
    let out = common::run(&text, &[], None);
    let fct = common::table(&out, "fct");
    let fin = common::bools(fct, "finished");
    let f = common::f64s(fct, "fct_ps");
    let s = common::f64s(fct, "slowdown");
    assert!(fin.iter().any(|&b| !b), "some flow lost frames");
    for i in 0..fin.len() {
        if fin[i] {
            assert!(f[i] > 0.0 && s[i] >= 1.0);
        } else {
            assert!(f[i].is_nan() && s[i].is_nan());
        }
    }
    let unfinished = common::summary_value(&out, "flows_unfinished", "all sizes").unwrap();
    assert_eq!(unfinished, fin.iter().filter(|&&b| !b).count() as f64);
}

/// `load_on`: the arrival rates are scaled so that a class of links carries the target load.
#[test]
fn load_on_a_link_class() {
    // 4 leaves x 2 spines, 4 hosts per leaf, 10 Gb/s everywhere (2:1 oversubscribed): with
    // all-to-all traffic 12 of every host's 15 destinations are behind another leaf, so the
    // uplinks (both directions, 8 links x 2 x 10 Gb/s) carry 2 x 16 x 10 x 12/15 Gb/s = 1.6 x
    // the host load: 50 % on them is a host load of 0.3125
    let fabric = |mode: &str, extra: &str| {
        format!(
            "[meta]\nduration = \"20ms\"\n[topology]\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\n\
             host_rate = \"10Gbps\"\nspine_rate = \"10Gbps\"\n[routing]\nmode = \"{mode}\"\n\
             [[workloads]]\ncdf = [[50000, 0.0], [50000, 1.0]]\nload = 0.5\nstop = \"15ms\"\n{extra}"
        )
    };
    let host_load = |sc: &Scenario| sc.resolved["workloads"][0]["host_load"].as_f64();
    for mode in ["shortest", "ecmp", "spray"] {
        let sc = load(&fabric(mode, "load_on = \"leaf*-spine*\"\n"));
        let u = host_load(&sc).expect("host_load in the resolved scenario");
        assert!((u - 0.3125).abs() < 1e-12, "{mode}: {u}");
        // the host links themselves: load_on = their class gives the load as written
        let sc = load(&fabric(mode, "load_on = \"h*-leaf*\"\n"));
        assert!((host_load(&sc).unwrap() - 0.5).abs() < 1e-12, "{mode}");
    }
    // without load_on nothing changes (no host_load key)
    assert_eq!(host_load(&load(&fabric("ecmp", ""))), None);
    // run it: the uplinks carry about half their capacity over the arrival window
    let out = common::run(&fabric("ecmp", "load_on = \"leaf*-spine*\"\n"), &[], None);
    let ports = common::table(&out, "ports");
    let names = common::strs(ports, "port");
    let tx = common::i64s(ports, "tx_bytes");
    let up: i64 = (0..names.len())
        .filter(|&i| names[i].contains("spine"))
        .map(|i| tx[i])
        .sum();
    let carried = up as f64 * 8.0 / (16.0 * 10e9 * 0.015);
    assert!(
        (carried - 0.5).abs() < 0.05,
        "uplinks carried {carried} of their capacity"
    );
}

/// Senders and participating hosts chosen by place: a switch's name stands for the hosts
/// attached to it.
#[test]
fn senders_by_place() {
    let names = |sc: &Scenario| -> Vec<String> {
        sc.flows
            .iter()
            .map(|f| sc.nodes[f.src].name.clone())
            .collect()
    };
    // every host of leaf1 (h4..h7), plus h1 by name
    let sc = load(&format!(
        "{FABRIC}\n[[workloads]]\nkind = \"incast\"\nsenders = [\"leaf1\", \"h1\"]\ndst = \"h0\"\nsize = \"1KB\"\n"
    ));
    assert_eq!(names(&sc), ["h1", "h4", "h5", "h6", "h7"]);
    // 2 random senders among leaf1's hosts
    let sc = load(&format!(
        "{FABRIC}\n[[workloads]]\nkind = \"incast\"\nhosts = [\"leaf1\", \"h0\"]\nsenders = 2\ndst = \"h0\"\nsize = \"1KB\"\n"
    ));
    let got = names(&sc);
    assert_eq!(got.len(), 2);
    assert!(
        got.iter()
            .all(|n| ["h4", "h5", "h6", "h7"].contains(&n.as_str())),
        "{got:?}"
    );
    // a spine has no host attached: refused, naming the field
    let err = scenario::load(
        &format!(
            "{FABRIC}\n[[workloads]]\nkind = \"incast\"\nsenders = [\"spine0\"]\ndst = \"h0\"\nsize = \"1KB\"\n"
        ),
        &[],
    )
    .unwrap_err();
    assert_eq!(err.path, "workloads.0.senders", "{err}");
    assert!(err.allowed.contains("switch with hosts attached"), "{err}");
}

/// A k = 4 fat-tree: 16 hosts, pods of 4 (`pod1`: h4..h7, the hosts of edge2 and edge3).
const FAT_TREE: &str = r#"
[meta]
duration = "2ms"
[topology]
kind = "fat-tree"
k = 4
host_rate = "10Gbps"
"#;

#[test]
fn senders_drawn_at_random_from_a_place() {
    let srcs = |sc: &Scenario| -> Vec<String> {
        let mut v: Vec<String> = sc
            .flows
            .iter()
            .map(|f| sc.nodes[f.src].name.clone())
            .collect();
        v.sort();
        v
    };
    let incast = |senders: &str| {
        format!(
            "{FAT_TREE}\n[[workloads]]\nkind = \"incast\"\nsenders = {senders}\ndst = \"h0\"\nsize = \"1KB\"\n"
        )
    };
    // a pod by name: its four hosts
    let sc = load(&incast("[\"pod1\"]"));
    assert_eq!(srcs(&sc), ["h4", "h5", "h6", "h7"]);
    // 3 of a pod's hosts, drawn from the run's seed: distinct, in the pod, the same for the
    // same seed, and written into the resolved scenario
    let text = incast("{ from = [\"pod1\"], count = 3 }");
    let a = load(&text);
    let got = srcs(&a);
    assert_eq!(got.len(), 3);
    assert!(got.windows(2).all(|w| w[0] != w[1]), "{got:?}");
    assert!(
        got.iter()
            .all(|n| ["h4", "h5", "h6", "h7"].contains(&n.as_str())),
        "{got:?}"
    );
    assert_eq!(srcs(&load(&text)), got);
    let drawn = &a.resolved["workloads"][0]["senders"]["drawn"];
    assert_eq!(drawn.as_array().map(|v| v.len()), Some(3), "{drawn}");
    // other seeds draw other hosts (over 20 seeds, more than one set)
    let sets: std::collections::HashSet<Vec<String>> = (0..20)
        .map(|seed| {
            srcs(&scenario::load_seeded(&text, &[], Some(seed)).unwrap_or_else(|e| panic!("{e}")))
        })
        .collect();
    assert!(sets.len() > 1, "{sets:?}");
    // several places, the dst left out: pods 0 and 1 without h0
    let sc = load(&incast("{ from = [\"pod0\", \"pod1\"], count = 7 }"));
    let got = srcs(&sc);
    assert_eq!(got.len(), 7);
    assert!(!got.contains(&"h0".to_string()));
    // Poisson participants drawn from two leaves of a leaf-spine
    let sc = load(&format!(
        "{FABRIC}\n[[workloads]]\nsizes = \"websearch\"\nload = 0.2\nhosts = {{ from = [\"leaf0\", \"leaf1\"], count = 3 }}\n"
    ));
    let mut used: Vec<usize> = sc.flows.iter().flat_map(|f| [f.src, f.dst]).collect();
    used.sort();
    used.dedup();
    assert_eq!(used.len(), 3, "{used:?}");
    // bad selections, each naming its field
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        ("{ from = [\"pod1\"], count = 5 }", "workloads.0.senders.count", "from 1 to 4"),
        ("{ from = [\"pod0\"], count = 4 }", "workloads.0.senders.count", "from 1 to 3 (the hosts of from other than dst)"),
        ("{ from = [\"pod0\"], count = 0 }", "workloads.0.senders.count", "from 1 to 3"),
        ("{ from = [\"pod1\"] }", "workloads.0.senders.count", "missing"),
        ("{ from = [\"pod1\"], k = 2 }", "workloads.0.senders.k", "unknown key"),
        ("{ from = [\"pod4\"], count = 1 }", "workloads.0.senders.from", "pod4"),
        ("[\"pod9\"]", "workloads.0.senders", "fat-tree's pod"),
        ("\"pod1\"", "workloads.0.senders", "{ from = [places], count = k }"),
    ];
    for (senders, path, shows) in cases {
        let e = scenario::load(&incast(senders), &[])
            .err()
            .unwrap_or_else(|| panic!("accepted: {senders}"));
        assert_eq!(e.path, *path, "{senders}: {e}");
        assert!(e.to_string().contains(shows), "{senders}: {e}");
    }
    // a leaf-spine has no pods
    let e = scenario::load(
        &format!("{FABRIC}\n[[workloads]]\nkind = \"incast\"\nsenders = [\"pod0\"]\ndst = \"h0\"\nsize = \"1KB\"\n"),
        &[],
    )
    .unwrap_err();
    assert_eq!(e.path, "workloads.0.senders", "{e}");
}

/// `--set` addresses workloads by name (`workloads.NAME.KEY`) and the flows a workload
/// generates by the workload's name (`flows.NAME.FIELD`, the fields it sets on each).
#[test]
fn overrides_address_workloads_and_their_flows_by_name() {
    let text = format!(
        "{FABRIC}\n[[flows]]\nname = \"bg\"\nsrc = \"h1\"\ndst = \"h2\"\nrate = \"1Gbps\"\n\
         [[workloads]]\nname = \"ws\"\nsizes = \"websearch\"\nload = 0.2\n\
         [[workloads]]\nkind = \"incast\"\nsenders = 3\ndst = \"h0\"\nsize = \"10KB\"\n"
    );
    let with = |sets: &[&str]| {
        let v: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        scenario::load(&text, &v).unwrap_or_else(|e| panic!("{e}"))
    };
    let of = |sc: &Scenario, prefix: &str| -> Vec<usize> {
        (0..sc.flows.len())
            .filter(|&i| sc.flows[i].name.starts_with(prefix))
            .collect()
    };
    // by name = by index, for a named workload and for the default name of an unnamed one
    let by_name = with(&["workloads.ws.load=0.4", "workloads.w1.size=20KB"]);
    let by_ix = with(&["workloads.0.load=0.4", "workloads.1.size=20KB"]);
    let plain = with(&[]);
    assert_eq!(by_name.flows.len(), by_ix.flows.len());
    assert!(by_name.flows.len() > plain.flows.len());
    assert!(of(&by_name, "w1.")
        .iter()
        .all(|&i| by_name.flows[i].size_bytes == Some(20_000)));
    assert_eq!(by_name.resolved["workloads"], by_ix.resolved["workloads"]);
    // the generated flows by their workload's name: only that workload's flows change
    let sc = with(&["flows.ws.sender=generator", "flows.ws.transport=gbn"]);
    let ws = of(&sc, "ws.");
    assert!(!ws.is_empty());
    assert!(ws
        .iter()
        .all(|&i| !sc.flows[i].holds && sc.flows[i].transport != plain.flows[i].transport));
    assert!(of(&sc, "w1.").iter().all(|&i| sc.flows[i].holds));
    // a written flow by its name
    let sc = with(&["flows.bg.rate=2Gbps"]);
    assert_eq!(sc.flows[0].rate_bps, 2e9);
    // unknown names and fields the workload draws itself are refused, naming the field
    #[rustfmt::skip]
    let cases: &[(&str, &str, &str)] = &[
        ("workloads.nosuch.load=0.1", "workloads.nosuch", "ws, w1"),
        ("flows.nosuch.rate=1Gbps", "flows.nosuch", "or of a workload"),
        ("flows.ws.size=1KB", "flows.ws.size", "rate, frame, priority, transport, sender"),
        ("flows.ws.0.rate=1Gbps", "flows.ws.0.rate", "workloads.ws"),
        ("flows.ws.sender=fast", "workloads.0.sender", "fast"),
    ];
    for (set, path, shows) in cases {
        let e = scenario::load(&text, &[set.to_string()])
            .err()
            .unwrap_or_else(|| panic!("accepted: {set}"));
        assert_eq!(e.path, *path, "{set}: {e}");
        assert!(e.to_string().contains(shows), "{set}: {e}");
    }
    // without written flows, an unknown name says which workloads there are
    let e = scenario::load(
        &format!("{FABRIC}\n[[workloads]]\nname = \"ws\"\nsizes = \"websearch\"\n"),
        &["flows.wz.rate=1Gbps".to_string()],
    )
    .unwrap_err();
    assert_eq!(e.path, "flows.wz", "{e}");
    assert!(e.to_string().contains("workloads: ws"), "{e}");
}
