//! Fabrics: generated topologies (counts and degrees), routing tables that scale with switches
//! rather than hosts squared, ECMP spread over equal-cost paths (chi-square), determinism per
//! seed, polarisation with one hash seed, per-packet spraying. docs/models/topology.md.

mod common;

use qcnsim_core::scenario::{self, NodeKind, Scenario};

fn load(text: &str, overrides: &[&str]) -> Scenario {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    scenario::load(text, &ov).unwrap_or_else(|e| panic!("scenario failed: {e}\n{text}"))
}

/// Links per node.
fn degrees(sc: &Scenario) -> Vec<usize> {
    let mut d = vec![0; sc.nodes.len()];
    for l in &sc.links {
        d[l.a] += 1;
        d[l.b] += 1;
    }
    d
}

fn node(sc: &Scenario, name: &str) -> usize {
    sc.node_index[name]
}

const LEAF_SPINE: &str = r#"
[meta]
duration = "1ms"
[topology]
kind = "leaf-spine"
leaves = 8
spines = 4
hosts_per_leaf = 16
host_rate = "10Gbps"
spine_rate = "40Gbps"
host_delay = "1us"
spine_delay = "2us"
"#;

#[test]
fn leaf_spine_counts_degrees_and_tier_settings() {
    let sc = load(
        &format!("{LEAF_SPINE}\n[[flows]]\nsrc = \"h0\"\ndst = \"h127\"\nrate = \"1Gbps\"\n"),
        &[],
    );
    let hosts = sc.nodes.iter().filter(|n| n.kind == NodeKind::Host).count();
    assert_eq!(
        (hosts, sc.nodes.len() - hosts, sc.links.len()),
        (128, 12, 160)
    );
    let d = degrees(&sc);
    for (i, n) in sc.nodes.iter().enumerate() {
        let want = match n.name.as_str() {
            s if s.starts_with("leaf") => 16 + 4,
            s if s.starts_with("spine") => 8,
            _ => 1,
        };
        assert_eq!(d[i], want, "{}", n.name);
    }
    for l in &sc.links {
        let up = sc.nodes[l.a].kind == NodeKind::Switch;
        assert_eq!(l.rate_bps, if up { 40e9 } else { 10e9 });
        assert_eq!(l.delay, if up { 2_000_000 } else { 1_000_000 });
    }
    // host -> leaf -> spine -> leaf -> host
    assert_eq!(sc.flows[0].path.len(), 4);
    // generated elements are addressable by name: a port in the tables, a switch by --set
    assert!(sc.port_by_name("leaf0->spine3").is_some());
    let sc2 = load(
        LEAF_SPINE,
        &["topology.switches.spine1.buffer=20KB", "topology.spines=2"],
    );
    assert_eq!(sc2.nodes.len(), 128 + 10);
    assert_eq!(
        sc2.nodes[node(&sc2, "spine0")].buffer,
        scenario::Capacity::Infinite
    );
    assert_eq!(
        sc2.nodes[node(&sc2, "spine1")].buffer,
        scenario::Capacity::Bytes(20_000)
    );
    let e =
        scenario::load(LEAF_SPINE, &["topology.switches.spine5.buffer=20KB".into()]).unwrap_err();
    assert_eq!(e.path, "topology.switches.spine5");
    assert!(load(LEAF_SPINE, &["topology.switches.spine2.buffer=20KB"])
        .nodes
        .iter()
        .any(|n| n.name == "spine2" && n.buffer == scenario::Capacity::Bytes(20_000)));
}

#[test]
fn fat_tree_every_switch_has_k_ports() {
    for k in [4usize, 6, 8] {
        let sc = load(
            &format!("[meta]\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = {k}\n"),
            &[],
        );
        let hosts = sc.nodes.iter().filter(|n| n.kind == NodeKind::Host).count();
        assert_eq!(hosts, k * k * k / 4);
        assert_eq!(sc.nodes.len() - hosts, 5 * k * k / 4);
        let d = degrees(&sc);
        for (i, n) in sc.nodes.iter().enumerate() {
            let want = if n.kind == NodeKind::Switch { k } else { 1 };
            assert_eq!(d[i], want, "k={k} {}", n.name);
        }
        // hosts in different pods are 6 hops apart
        let far = format!("h{}", hosts - 1);
        let p = sc
            .routes
            .path(&sc, node(&sc, "h0"), node(&sc, &far))
            .unwrap();
        assert_eq!(p.len(), 6);
    }
}

#[test]
fn explicit_elements_combine_with_a_generator() {
    let text = format!(
        "{LEAF_SPINE}\n[topology.links.\"leaf0-spine0\"]\ncut = true\n\
         [[hosts]]\nname = \"probe\"\n[[links]]\nbetween = [\"probe\", \"spine0\"]\nrate = \"1Gbps\"\n\
         [[flows]]\nsrc = \"probe\"\ndst = \"h0\"\nrate = \"1Gbps\"\n"
    );
    let sc = load(&text, &[]);
    assert_eq!(sc.links.len(), 160 - 1 + 1);
    assert!(sc.port_by_name("leaf0->spine0").is_none());
    // probe -> spine0 -> (not leaf0 directly: cut) -> leafX -> spineY -> leaf0 -> h0
    let names: Vec<String> = sc.flows[0].path.iter().map(|&p| sc.port_name(p)).collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert_eq!(names[0], "probe->spine0");
    assert_eq!(names.last().unwrap(), "leaf0->h0");
}

/// `n` flows from every host of leaf0 to hosts of leaf1 over `spines` spines.
fn two_leaves(spines: usize, flows: usize, extra: &str) -> String {
    let mut s = format!(
        "[meta]\nduration = \"1ms\"\n[topology]\nleaves = 2\nspines = {spines}\nhosts_per_leaf = 8\n{extra}\n"
    );
    for i in 0..flows {
        s += &format!(
            "[[flows]]\nsrc = \"h{}\"\ndst = \"h{}\"\nrate = \"1Mbps\"\n",
            i % 8,
            8 + (i / 8) % 8
        );
    }
    s
}

fn spine_counts(sc: &Scenario, spines: usize) -> Vec<usize> {
    let mut c = vec![0; spines];
    for f in &sc.flows {
        let (_, sp) = sc.port_ends(f.path[1]);
        let name = &sc.nodes[sp].name;
        c[name.trim_start_matches("spine").parse::<usize>().unwrap()] += 1;
    }
    c
}

#[test]
fn ecmp_spreads_flows_over_all_equal_cost_paths() {
    let spines = 4;
    let n = 2000;
    let text = two_leaves(spines, n, "[routing]\nmode = \"ecmp\"");
    let sc = load(&text, &[]);
    let c = spine_counts(&sc, spines);
    let e = n as f64 / spines as f64;
    let chi2: f64 = c.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
    // 3 degrees of freedom: P(chi2 > 16.27) = 0.001
    assert!(chi2 < 16.27, "counts {c:?}, chi2 {chi2}");
    assert!(c.iter().all(|&o| o > 0));
    // shortest path puts them all on one spine
    let sc = load(&two_leaves(spines, 64, ""), &[]);
    assert_eq!(
        spine_counts(&sc, spines).iter().filter(|&&o| o > 0).count(),
        1
    );
}

#[test]
fn ecmp_is_deterministic_per_seed() {
    let text = two_leaves(4, 200, "[routing]\nmode = \"ecmp\"");
    let paths = |seed: Option<u64>| -> Vec<Vec<usize>> {
        scenario::load_seeded(&text, &[], seed)
            .unwrap()
            .flows
            .iter()
            .map(|f| f.path.clone())
            .collect()
    };
    assert_eq!(paths(None), paths(None));
    assert_eq!(paths(Some(7)), paths(Some(7)));
    assert_ne!(paths(Some(7)), paths(Some(8)));
    // a run's tables are identical for one seed
    let a = common::run(&text, &[], Some(3));
    let b = common::run(&text, &[], Some(3));
    assert_eq!(format!("{:?}", a.tables), format!("{:?}", b.tables));
}

#[test]
fn one_hash_seed_everywhere_polarises_a_fat_tree() {
    // k = 4: flows from pod 0 to pod 1 pick an aggregation switch at the edge and a core at the
    // aggregation switch. With one seed both picks are the same function of the flow, so
    // only cores j*2+j (0 and 3) carry traffic; per-switch seeds use all four.
    let mut text = "[meta]\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 4\n[routing]\nmode = \"ecmp\"\n".to_string();
    for i in 0..400 {
        text += &format!(
            "[[flows]]\nsrc = \"h{}\"\ndst = \"h{}\"\nrate = \"1Mbps\"\n",
            i % 4,
            4 + (i / 4) % 4
        );
    }
    let cores = |hash: &str| -> Vec<usize> {
        let sc = load(&text, &[&format!("routing.hash_seed={hash}")]);
        let mut c = vec![0; 4];
        for f in &sc.flows {
            let (_, core) = sc.port_ends(f.path[2]);
            c[sc.nodes[core]
                .name
                .trim_start_matches("core")
                .parse::<usize>()
                .unwrap()] += 1;
        }
        c
    };
    let same = cores("\"same\"");
    assert_eq!(same[1] + same[2], 0, "{same:?}");
    let per = cores("\"per-switch\"");
    assert!(per.iter().all(|&c| c > 50), "{per:?}");
}

#[test]
fn spraying_uses_every_spine_and_delivers_everything() {
    let text = format!(
        "{}\n[routing]\nmode = \"spray\"\n[metrics]\nthroughput_ports = \"switches\"\n",
        "[meta]\nduration = \"2ms\"\n[topology]\nleaves = 2\nspines = 4\nhosts_per_leaf = 1\nspine_rate = \"10Gbps\"\n[[flows]]\nsrc = \"h0\"\ndst = \"h1\"\nrate = \"8Gbps\"\nsize = \"500KB\"\n"
    );
    let (out, live, _) = common::run_with_live(&text);
    let flows = common::table(&out, "flows");
    assert_eq!(common::i64s(flows, "rx_bytes")[0], 500_000);
    assert_eq!(live, 0);
    let ports = common::table(&out, "ports");
    let names = common::strs(ports, "port");
    let tx = common::i64s(ports, "tx_frames");
    for s in 0..4 {
        let i = names
            .iter()
            .position(|n| n == &format!("leaf0->spine{s}"))
            .unwrap();
        // 334 frames over 4 spines: each well used
        assert!(tx[i] > 40, "spine{s}: {}", tx[i]);
    }
    // refused with flow control
    let e = scenario::load(&format!("{text}\n[flow_control]\nmode = \"pfc\"\n"), &[]).unwrap_err();
    assert_eq!(e.path, "routing.mode");
}

/// Issue 10: routing tables scale with switches, not hosts squared. 100,000 hosts on one
/// switch, and 100,000 hosts on a 2,000-leaf fabric, validate with tables of a few MB.
#[test]
fn hundred_thousand_hosts_validate_in_bounded_memory() {
    let star = "[meta]\nduration = \"1ms\"\n[[switches]]\nname = \"sw\"\n[[hosts]]\nname = \"h{i}\"\ncount = 100000\n\
                [[links]]\nbetween = [\"h{i}\", \"sw\"]\ncount = 100000\n\
                [[flows]]\nsrc = \"h0\"\ndst = \"h99999\"\nrate = \"1Gbps\"\n";
    let sc = load(star, &[]);
    assert_eq!(sc.nodes.len(), 100_001);
    assert!(sc.routes.bytes() < 4_000_000, "{} bytes", sc.routes.bytes());
    let fabric = "[meta]\nduration = \"1ms\"\n[topology]\nleaves = 2000\nspines = 16\nhosts_per_leaf = 50\n\
                  [routing]\nmode = \"ecmp\"\n[[flows]]\nsrc = \"h0\"\ndst = \"h99999\"\nrate = \"1Gbps\"\n";
    let sc = load(fabric, &[]);
    assert_eq!(sc.nodes.len(), 100_000 + 2016);
    // written from the structure: 3 runs per leaf, 2,000 per spine, plus the per-node and
    // per-port arrays: about 2 MB, where a nodes x nodes table would take 41 GB (a switch x
    // destination-switch table took 24 MB)
    assert!(sc.routes.structure().is_some());
    assert!(sc.routes.bytes() < 4_000_000, "{} bytes", sc.routes.bytes());
    assert_eq!(sc.flows[0].path.len(), 4);
}

/// The complete example of docs/scenario.md ("Build your own fabric") validates and runs.
#[test]
fn the_documented_fabric_example_runs() {
    let doc = include_str!("../../../docs/scenario.md");
    let at = doc.find("## Build your own fabric").expect("section");
    let start = doc[at..].find("```toml\n").unwrap() + at + 8;
    let end = doc[start..].find("```").unwrap() + start;
    let text = &doc[start..end];
    let sc = load(text, &[]);
    assert_eq!(
        sc.nodes.iter().filter(|n| n.kind == NodeKind::Host).count(),
        33
    );
    // the flows from leaf1 use both spines (ECMP) and leaf3 only spine0 (cut)
    assert!(sc.port_by_name("leaf3->spine1").is_none());
    let out = common::run(text, &["meta.duration=\"2ms\""], None);
    let flows = common::table(&out, "flows");
    assert!(common::i64s(flows, "rx_bytes").iter().all(|&b| b > 0));
}

/// Brute force: hops from every node to host `dst` where only switches forward (breadth-first
/// over the reversed ports), `u32::MAX` where unreachable.
fn hops_to_host(sc: &Scenario, dst: usize) -> Vec<u32> {
    let mut d = vec![u32::MAX; sc.nodes.len()];
    d[dst] = 0;
    let mut frontier = vec![dst];
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for p in 0..sc.n_ports() {
            let (u, w) = sc.port_ends(p);
            let forwards = w == dst || sc.nodes[w].kind == NodeKind::Switch;
            if forwards && frontier.contains(&w) && d[u] == u32::MAX {
                d[u] = d[w] + 1;
                next.push(u);
            }
        }
        next.sort_unstable();
        next.dedup();
        frontier = next;
    }
    d
}

/// Every switch's ECMP candidates, next port and hop count towards every host agree with a
/// brute-force shortest-path computation (candidates: the ports whose peer is one hop closer).
fn routes_agree_with_brute_force(sc: &Scenario) {
    let hosts: Vec<usize> = (0..sc.nodes.len())
        .filter(|&h| sc.nodes[h].kind == NodeKind::Host)
        .collect();
    let mut cand = Vec::new();
    let mut checked = 0;
    for &dst in &hosts {
        let d = hops_to_host(sc, dst);
        for u in 0..sc.nodes.len() {
            if u == dst {
                assert_eq!(sc.routes.next(u, dst), None);
                continue;
            }
            let want: Vec<u32> = (0..sc.n_ports())
                .filter(|&p| {
                    let (a, w) = sc.port_ends(p);
                    a == u && d[u] != u32::MAX && d[w] != u32::MAX && d[w] + 1 == d[u]
                })
                .map(|p| p as u32)
                .collect();
            let next = sc.routes.next(u, dst);
            if sc.nodes[u].kind == NodeKind::Host {
                // a host sends on its NIC when that leads to dst
                assert_eq!(next.is_some(), d[u] != u32::MAX, "host {u} -> {dst}");
                continue;
            }
            sc.routes.candidates(u, dst, &mut cand);
            assert_eq!(cand, want, "candidates of {u} towards {dst}");
            match next {
                Some(p) => assert!(want.contains(&(p as u32)), "next of {u} towards {dst}"),
                None => assert!(want.is_empty(), "{u} reaches {dst}"),
            }
            let hops = sc.routes.hops_to(u, dst).map(|h| h as u32 + 1);
            assert_eq!(hops, (d[u] != u32::MAX).then_some(d[u]), "{u} -> {dst}");
            checked += want.len();
        }
    }
    assert!(checked > 0);
}

/// Issue 27: routes of a small fat-tree (one link cut), a leaf-spine with parallel links and
/// an arbitrary random graph of switches agree with a brute-force shortest-path ECMP
/// computation.
#[test]
fn routes_agree_with_brute_force_shortest_paths() {
    let ft = "[meta]\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 4\n\
              [topology.links.\"agg0-core0\"]\ncut = true\n\
              [[flows]]\nsrc = \"h0\"\ndst = \"h15\"\nrate = \"1Gbps\"\n";
    routes_agree_with_brute_force(&load(ft, &[]));
    let ls = "[meta]\nduration = \"1ms\"\n[topology]\nleaves = 4\nspines = 3\nhosts_per_leaf = 2\n\
              links_per_spine = 2\n[[flows]]\nsrc = \"h0\"\ndst = \"h7\"\nrate = \"1Gbps\"\n";
    routes_agree_with_brute_force(&load(ls, &[]));
    // arbitrary graphs: 9 switches with random links (parallel ones too), 10 single-homed
    // hosts, one host on a switch cut off from the rest
    for seed in 1..=4u64 {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let mut t = String::from(
            "[meta]\nduration = \"1ms\"\n[[switches]]\nname = \"s{i}\"\ncount = 9\n\
                                   [[hosts]]\nname = \"h{i}\"\ncount = 10\n",
        );
        for _ in 0..14 {
            let (a, b) = (rnd(8), rnd(8));
            if a != b {
                t += &format!("[[links]]\nbetween = [\"s{a}\", \"s{b}\"]\n");
            }
        }
        for h in 0..9 {
            t += &format!("[[links]]\nbetween = [\"h{h}\", \"s{}\"]\n", rnd(8));
        }
        t += "[[links]]\nbetween = [\"h9\", \"s8\"]\n";
        routes_agree_with_brute_force(&load(&t, &[]));
    }
}

/// Issue 27: routing tables that alone exceed `metrics.memory_budget` are refused, with the
/// estimate and the budget in the message: a generated fabric's before it is generated (its size
/// follows from its parameters), any other graph's once the search has passed the budget (here
/// 300 switches linked at random, whose tables do not compress, under 200 KB).
#[test]
fn routing_tables_over_the_budget_are_refused_before_allocating() {
    let mut t = String::from(
        "[meta]\nduration = \"1ms\"\n[[switches]]\nname = \"s{i}\"\ncount = 300\n\
         [[hosts]]\nname = \"h{i}\"\ncount = 300\n[[links]]\nbetween = [\"h{i}\", \"s{i}\"]\n\
         count = 300\n[[flows]]\nsrc = \"h0\"\ndst = \"h299\"\nrate = \"1Gbps\"\n",
    );
    let mut x = 7u64;
    let mut seen = std::collections::HashSet::new();
    for a in 0..300u64 {
        // a ring, so that every switch is reached, and two random chords each
        let mut ends = vec![(a, (a + 1) % 300)];
        for _ in 0..2 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ends.push((a, x % 300));
        }
        for (u, v) in ends {
            if u != v && seen.insert((u.min(v), u.max(v))) {
                t += &format!("[[links]]\nbetween = [\"s{u}\", \"s{v}\"]\n");
            }
        }
    }
    let e = scenario::load(&t, &["metrics.memory_budget=200KB".to_string()])
        .err()
        .expect("routes over 200 KB refused");
    assert_eq!(e.path, "metrics.memory_budget");
    let msg = e.to_string();
    assert!(msg.contains("routing tables"), "{msg}");
    assert!(msg.contains("300 switches, 300 with hosts"), "{msg}");
    assert!(msg.contains("searched from"), "{msg}");
    // and within a budget that holds them: the generic search, tables of that size
    let sc = load(&t, &[]);
    assert!(sc.routes.structure().is_none());
    assert!(sc.routes.bytes() > 200_000, "{}", sc.routes.bytes());
    // a generated fabric's tables: the estimate is what they take
    let ft = "[meta]\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 16\n\
              [[flows]]\nsrc = \"h0\"\ndst = \"h1023\"\nrate = \"1Gbps\"\n";
    let sc = load(ft, &[]);
    let est = scenario::routes::estimate(&sc.nodes, &sc.links);
    assert_eq!((est.n_sw, est.n_dst), (320, 128));
    assert_eq!(est.bytes, sc.routes.bytes() as u128);
    assert!(est.bytes < 100_000, "{}", est.bytes);
}

/// Issue 27: a generated fabric too large for the memory budget is refused from its parameters,
/// before the generator writes anything, with the estimate by part and the budget: a k = 128
/// fat-tree (524,288 hosts) under the default 2 GiB, a leaf-spine of 100,000 leaves under 512 MB.
#[test]
fn a_fabric_over_the_budget_is_refused_before_it_is_generated() {
    let ft = "[meta]\nduration = \"1ms\"\n[topology]\nkind = \"fat-tree\"\nk = 128\n";
    let e = scenario::load(ft, &[]).err().expect("k = 128 refused");
    assert_eq!(e.path, "metrics.memory_budget");
    let msg = e.to_string();
    for want in [
        "\"2.0 GiB\"",
        "a k = 128 fat-tree of 524288 hosts, 20480 switches and 1572864 links",
        "before generating it",
        "network (nodes and ports)",
        "routing tables",
        "topology.k",
    ] {
        assert!(msg.contains(want), "{want}: {msg}");
    }
    let ls = "[meta]\nduration = \"1ms\"\n[topology]\nleaves = 100000\nspines = 2\n\
              hosts_per_leaf = 1\n[[flows]]\nsrc = \"h0\"\ndst = \"h99999\"\nrate = \"1Gbps\"\n";
    let e = scenario::load(ls, &["metrics.memory_budget=\"512MB\"".to_string()])
        .err()
        .expect("100,000 leaves under 512 MB refused");
    assert_eq!(e.path, "metrics.memory_budget");
    let msg = e.to_string();
    assert!(msg.contains("\"488.3 MiB\""), "{msg}");
    assert!(
        msg.contains("a leaf-spine of 100000 leaves and 2 spines of 100000 hosts"),
        "{msg}"
    );
    // the figures are those of the parameters' estimate
    let f = scenario::routes::Fabric::LeafSpine {
        leaves: 100_000,
        spines: 2,
        hosts_per_leaf: 1,
        parallel: 1,
    };
    let routes = scenario::budget::fmt_bytes(f.route_bytes());
    assert!(msg.contains(&format!("routing tables {routes}")), "{msg}");
}

/// Issue 27: a generated fabric's routes are written from its structure (up-down, one ECMP
/// group per destination pod or leaf), and they equal those of the generic search, run by run
/// (first destination, shortest-path port, ECMP ports in order), and a brute-force
/// shortest-path computation; a cut link falls back to the generic search.
fn structural_equals_generic(text: &str) {
    let sc = load(text, &[]);
    let f = sc
        .routes
        .structure()
        .unwrap_or_else(|| panic!("not recognised as generated:\n{text}"));
    let generic = scenario::Routes::compute_generic(&sc.nodes, &sc.links);
    assert!(generic.structure().is_none());
    assert_eq!(sc.routes.runs(), generic.runs(), "{f:?}");
    // and the queries agree node by node, towards every host
    let mut a = Vec::new();
    let mut b = Vec::new();
    for dst in (0..sc.nodes.len()).filter(|&h| sc.nodes[h].kind == NodeKind::Host) {
        for u in 0..sc.nodes.len() {
            assert_eq!(sc.routes.next(u, dst), generic.next(u, dst), "{u} -> {dst}");
            assert_eq!(sc.routes.hops_to(u, dst), generic.hops_to(u, dst));
            sc.routes.candidates(u, dst, &mut a);
            generic.candidates(u, dst, &mut b);
            assert_eq!(a, b, "{u} -> {dst}");
        }
    }
    // the size estimated from the shape is what the tables take
    let est = scenario::routes::estimate(&sc.nodes, &sc.links);
    assert_eq!(est.fabric, Some(f));
    assert_eq!(est.bytes, sc.routes.bytes() as u128, "{f:?}");
    assert_eq!(f.route_bytes(), sc.routes.bytes() as u128);
}

mod structural {
    use super::*;
    use proptest::prelude::*;

    fn with_flow(topology: String, last_host: usize) -> String {
        format!(
            "[meta]\nduration = \"1ms\"\n[topology]\n{topology}\n[[flows]]\nsrc = \"h0\"\n\
             dst = \"h{last_host}\"\nrate = \"1Gbps\"\n"
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24), max_shrink_iters: 100, .. ProptestConfig::default() })]

        #[test]
        fn fat_tree_routes_from_the_structure_equal_the_generic_ones(h in 1usize..=5) {
            let k = 2 * h;
            structural_equals_generic(&with_flow(format!("kind = \"fat-tree\"\nk = {k}"), k * h * h - 1));
        }

        #[test]
        fn leaf_spine_routes_from_the_structure_equal_the_generic_ones(
            leaves in 1usize..=7, spines in 1usize..=4, hpl in 1usize..=3, par in 1usize..=3,
        ) {
            prop_assume!(leaves * hpl >= 2);
            structural_equals_generic(&with_flow(
                format!("leaves = {leaves}\nspines = {spines}\nhosts_per_leaf = {hpl}\nlinks_per_spine = {par}"),
                leaves * hpl - 1,
            ));
        }

        #[test]
        fn clos_routes_from_the_structure_equal_the_generic_ones(half in 1usize..=5, par in 1usize..=2) {
            let r = 2 * half;
            structural_equals_generic(&with_flow(
                format!("kind = \"clos\"\nradix = {r}\nlinks_per_spine = {par}"),
                r * half - 1,
            ));
        }
    }

    #[test]
    fn a_cut_or_added_link_is_routed_by_the_generic_search() {
        let cut = with_flow(
            "kind = \"fat-tree\"\nk = 4\n[topology.links.\"agg0-core0\"]\ncut = true".into(),
            15,
        );
        assert!(load(&cut, &[]).routes.structure().is_none());
        let added = with_flow("leaves = 3\nspines = 2\nhosts_per_leaf = 2".into(), 5)
            + "[[hosts]]\nname = \"probe\"\n[[links]]\nbetween = [\"probe\", \"spine0\"]\n";
        let sc = load(&added, &[]);
        assert!(sc.routes.structure().is_none());
        routes_agree_with_brute_force(&sc);
        let whole = with_flow("kind = \"fat-tree\"\nk = 6".into(), 53);
        let sc = load(&whole, &[]);
        assert_eq!(
            sc.routes.structure(),
            Some(scenario::routes::Fabric::FatTree { k: 6 })
        );
        routes_agree_with_brute_force(&sc);
    }
}
