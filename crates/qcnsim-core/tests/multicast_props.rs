//! Multicast invariants on random small networks (proptest), as `conservation.rs` checks them for
//! unicast:
//! - every generated frame and every copy made by a switch is delivered to a member, dropped
//!   (switch / rate limiter / NIC) or in flight; in flight = alive at the end + delivered after it;
//! - each member receives each frame at most once, and the members' counts add up to the flow's;
//! - only switch ports send CNMs, none without QCN; queues never exceed their capacity; CR stays
//!   in [min_rate, line rate];
//! - lazy generation gives exactly the tables of one event per generated frame.
//!
//! Networks: a chain of 1-3 switches, 3-6 hosts, 1-2 groups of 2+ members, 1-3 multicast flows
//! (any traffic type, optionally finite) and 0-2 unicast flows, finite buffers, no QCN, QCN with
//! standard or with representative-CP multicast feedback, feedback by the shortest path or the
//! reverse of the tree.

mod common;
use common::*;
use proptest::prelude::*;
use std::collections::HashSet;
use std::fmt::Write;

#[derive(Debug, Clone)]
struct McFlow {
    src: usize,
    /// group index (multicast) or destination offset (unicast)
    to: usize,
    traffic: usize,
    rate_pm: u64,
    frame: u32,
    size: Option<u64>,
    start_pm: u64,
}

#[derive(Debug, Clone)]
struct McNet {
    n_sw: usize,
    host_sw: Vec<usize>,
    link_mbps: Vec<u64>,
    delay_ns: Vec<u64>,
    /// per switch: buffer in bytes or (if Err) in frames
    sw_buf: Vec<Result<u64, u64>>,
    /// per group: a membership bit per host (at least two members are forced)
    groups: Vec<Vec<bool>>,
    mc: Vec<McFlow>,
    uc: Vec<McFlow>,
    /// 0 none, 1 QCN standard, 2 QCN representative
    cc: u8,
    duration_us: u64,
    min_rate_mbps: u64,
    seed: u64,
    /// feedback back along the reverse of the tree instead of the shortest path
    reverse: bool,
}

fn flow() -> impl Strategy<Value = McFlow> {
    (
        0usize..6,
        0usize..6,
        0usize..3,
        20u64..=1000,
        64u32..=1500,
        prop::option::weighted(0.25, 64u64..200_000),
        0u64..500,
    )
        .prop_map(
            |(src, to, traffic, rate_pm, frame, size, start_pm)| McFlow {
                src,
                to,
                traffic,
                rate_pm,
                frame,
                size,
                start_pm,
            },
        )
}

fn net() -> impl Strategy<Value = McNet> {
    (
        (
            1usize..=3,
            prop::collection::vec(0usize..3, 3..=6),
            prop::collection::vec(100u64..=10_000, 8),
            prop::collection::vec(0u64..=10_000, 8),
            prop::collection::vec(
                prop_oneof![(6_000u64..200_000).prop_map(Ok), (4u64..120).prop_map(Err)],
                3,
            ),
            prop::collection::vec(prop::collection::vec(any::<bool>(), 6), 1..=2),
        ),
        (
            prop::collection::vec(flow(), 1..=3),
            prop::collection::vec(flow(), 0..=2),
            0u8..3,
            2_000u64..=20_000,
            1u64..=50,
            any::<u64>(),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (n_sw, host_sw, link_mbps, delay_ns, sw_buf, groups),
                (mc, uc, cc, duration_us, min_rate_mbps, seed, reverse),
            )| McNet {
                n_sw,
                host_sw,
                link_mbps,
                delay_ns,
                sw_buf,
                groups,
                mc,
                uc,
                cc,
                duration_us,
                min_rate_mbps,
                seed,
                reverse,
            },
        )
}

struct Built {
    toml: String,
    /// per flow (in file order): (name, NIC line rate in b/s, multicast members or None)
    flows: Vec<(String, f64, Option<Vec<String>>)>,
    /// port name -> capacity in bytes, for switch ports
    sw_caps: Vec<(String, u64)>,
    cc: bool,
    min_rate_bps: f64,
}

fn build(n: &McNet) -> Built {
    let nh = n.host_sw.len();
    let hosts: Vec<String> = (0..nh).map(|i| format!("h{i}")).collect();
    let sws: Vec<String> = (0..n.n_sw).map(|i| format!("s{i}")).collect();
    let mut t = String::new();
    writeln!(
        t,
        "[meta]\nname = \"mcprop\"\nduration = \"{}us\"\nseed = {}\n",
        n.duration_us,
        n.seed % (i64::MAX as u64)
    )
    .unwrap();
    for h in &hosts {
        writeln!(t, "[[hosts]]\nname = \"{h}\"").unwrap();
    }
    let max_frame =
        n.mc.iter()
            .chain(&n.uc)
            .map(|f| f.frame as u64)
            .max()
            .unwrap();
    let mut caps = Vec::new();
    for (i, s) in sws.iter().enumerate() {
        let (buf, cap) = match n.sw_buf[i] {
            Ok(b) => (format!("{b}B"), b),
            Err(k) => (format!("{k}frames"), k * max_frame),
        };
        writeln!(t, "[[switches]]\nname = \"{s}\"\nbuffer = \"{buf}\"").unwrap();
        caps.push(cap);
    }
    let mut links: Vec<(String, String)> = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        links.push((h.clone(), sws[n.host_sw[i] % n.n_sw].clone()));
    }
    for i in 1..n.n_sw {
        links.push((sws[i - 1].clone(), sws[i].clone()));
    }
    let mut sw_caps = Vec::new();
    for (i, (a, b)) in links.iter().enumerate() {
        writeln!(
            t,
            "[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{}Mbps\"\ndelay = \"{}ns\"",
            n.link_mbps[i], n.delay_ns[i]
        )
        .unwrap();
        for (x, y) in [(a, b), (b, a)] {
            if let Some(k) = x.strip_prefix('s') {
                sw_caps.push((format!("{x}->{y}"), caps[k.parse::<usize>().unwrap()]));
            }
        }
    }
    let mut members: Vec<Vec<String>> = Vec::new();
    for (g, bits) in n.groups.iter().enumerate() {
        let mut m: Vec<usize> = (0..nh).filter(|&h| bits[h]).collect();
        // at least two members, so every source has a receiver other than itself
        for extra in [g % nh, (g + 1) % nh] {
            if m.len() < 2 && !m.contains(&extra) {
                m.push(extra);
            }
        }
        m.sort_unstable();
        let names: Vec<String> = m.iter().map(|&h| hosts[h].clone()).collect();
        let list: Vec<String> = names.iter().map(|h| format!("\"{h}\"")).collect();
        writeln!(
            t,
            "[[groups]]\nname = \"g{g}\"\nmembers = [{}]",
            list.join(", ")
        )
        .unwrap();
        members.push(names);
    }
    let stop_ns = n.duration_us * 1000 * 4 / 5;
    let mut flows = Vec::new();
    let all =
        n.mc.iter()
            .map(|f| (f, true))
            .chain(n.uc.iter().map(|f| (f, false)));
    for (i, (f, multicast)) in all.enumerate() {
        let src = f.src % nh;
        let nic_mbps = n.link_mbps[src];
        let rate_mbps = (nic_mbps * f.rate_pm / 1000).max(1);
        let traffic = ["cbr", "bernoulli", "poisson"][f.traffic];
        let start_ns = n.duration_us * f.start_pm;
        let to = if multicast {
            format!("group = \"g{}\"", f.to % members.len())
        } else {
            format!("dst = \"{}\"", hosts[(src + 1 + f.to % (nh - 1)) % nh])
        };
        writeln!(
            t,
            "[[flows]]\nname = \"f{i}\"\nsrc = \"{}\"\n{to}\ntraffic = \"{traffic}\"\nrate = \"{rate_mbps}Mbps\"\nframe = \"{}B\"\nstart = \"{start_ns}ns\"\nstop = \"{stop_ns}ns\"",
            hosts[src], f.frame
        )
        .unwrap();
        if let Some(s) = f.size {
            writeln!(t, "size = \"{s}B\"").unwrap();
        }
        let m = multicast.then(|| {
            members[f.to % members.len()]
                .iter()
                .filter(|h| **h != hosts[src])
                .cloned()
                .collect()
        });
        flows.push((format!("f{i}"), nic_mbps as f64 * 1e6, m));
    }
    let q_eq = (caps.iter().min().unwrap() / 3).max(100);
    writeln!(
        t,
        "[cc]\nmode = \"{}\"\nfeedback_route = \"{}\"\n[cc.qcn]\nmulticast_feedback = \"{}\"\n[cc.qcn.cp]\nq_eq = \"{q_eq}B\"\n[cc.qcn.rp]\nmin_rate = \"{}Mbps\"",
        if n.cc == 0 { "none" } else { "qcn" },
        if n.reverse { "reverse" } else { "shortest" },
        if n.cc == 2 { "representative" } else { "standard" },
        n.min_rate_mbps
    )
    .unwrap();
    writeln!(
        t,
        "[metrics]\nqueue_interval = \"10us\"\nqueue_ports = \"all\"\nrate_interval = \"20us\""
    )
    .unwrap();
    Built {
        toml: t,
        flows,
        sw_caps,
        cc: n.cc != 0,
        min_rate_bps: n.min_rate_mbps as f64 * 1e6,
    }
}

fn check(n: &McNet) -> Result<(), TestCaseError> {
    let b = build(n);
    let (out, live, late) = run_with_live(&b.toml);
    let fl = table(&out, "flows");
    let names = strs(fl, "flow");
    let gen = i64s(fl, "gen_frames");
    let copies = i64s(fl, "replicated_frames");
    let rx = i64s(fl, "rx_frames");
    let drop = i64s(fl, "dropped_frames");
    let rl = i64s(fl, "rl_dropped_frames");
    let nic = i64s(fl, "nic_dropped_frames");
    let infl = i64s(fl, "in_flight_frames");
    prop_assert_eq!(names.len(), b.flows.len());
    for i in 0..names.len() {
        prop_assert!(infl[i] >= 0, "flow {}: in flight {}", names[i], infl[i]);
        prop_assert_eq!(
            gen[i] + copies[i],
            rx[i] + drop[i] + rl[i] + nic[i] + infl[i],
            "flow {}",
            &names[i]
        );
        if b.flows[i].2.is_none() {
            prop_assert_eq!(copies[i], 0, "unicast flow {} replicated", &names[i]);
        }
    }
    prop_assert_eq!(
        infl.iter().sum::<i64>(),
        (live + late) as i64,
        "in flight vs alive {} + late {}",
        live,
        late
    );

    // members: each frame at most once; the members' receptions are the flow's
    let mm = table(&out, "multicast_members");
    let mf = strs(mm, "flow");
    let who = strs(mm, "member");
    let mrx = i64s(mm, "rx_frames");
    for (i, (name, _, members)) in b.flows.iter().enumerate() {
        let rows: Vec<usize> = (0..mm.rows()).filter(|&k| mf[k] == *name).collect();
        let Some(members) = members else {
            prop_assert!(
                rows.is_empty(),
                "unicast flow {} in multicast_members",
                name
            );
            continue;
        };
        let listed: HashSet<&str> = rows.iter().map(|&k| who[k].as_str()).collect();
        let want: HashSet<&str> = members.iter().map(|s| s.as_str()).collect();
        prop_assert_eq!(&listed, &want, "members of {}", name);
        for &k in &rows {
            prop_assert!(
                mrx[k] <= gen[i],
                "{} got {} frames of {}",
                who[k],
                mrx[k],
                gen[i]
            );
        }
        prop_assert_eq!(rows.iter().map(|&k| mrx[k]).sum::<i64>(), rx[i]);
    }

    // ports: CNMs only from switch ports and only with QCN; queues within capacity
    let pt = table(&out, "ports");
    let pname = strs(pt, "port");
    let pcnm = i64s(pt, "cnm_sent");
    let pmax = i64s(pt, "max_qlen_bytes");
    let caps: std::collections::HashMap<&str, u64> =
        b.sw_caps.iter().map(|(p, c)| (p.as_str(), *c)).collect();
    for k in 0..pt.rows() {
        match caps.get(pname[k].as_str()) {
            Some(&c) => {
                prop_assert!(pmax[k] as u64 <= c, "{}: {} > {}", pname[k], pmax[k], c);
                if !b.cc {
                    prop_assert_eq!(pcnm[k], 0, "CNMs from {} without QCN", &pname[k]);
                }
            }
            None => prop_assert_eq!(pcnm[k], 0, "host port {} sent CNMs", &pname[k]),
        }
    }

    // every CNM received was sent (shortest or reverse route alike)
    let cnm_rx: i64 = i64s(fl, "cnm_received").iter().sum();
    prop_assert!(
        cnm_rx <= pcnm.iter().sum::<i64>(),
        "{} CNMs received",
        cnm_rx
    );

    // RP rates within [min_rate, line rate]
    let rr = table(&out, "rp_rates");
    if b.cc {
        let rf = common::names(rr, "flow");
        let cr = f64s(rr, "cr_bps");
        for k in 0..rr.rows() {
            let line = b.flows.iter().find(|f| f.0 == rf[k]).unwrap().1;
            prop_assert!(
                cr[k] >= b.min_rate_bps && cr[k] <= line,
                "flow {}: CR {} outside [{}, {}]",
                rf[k],
                cr[k],
                b.min_rate_bps,
                line
            );
        }
    } else {
        prop_assert_eq!(rr.rows(), 0);
    }

    if std::env::var_os("QCNSIM_PROP_STATS").is_some() {
        eprintln!(
            "stats: cc={} flows={} gen={} copies={} rx={} drops={} rl_drops={} cnm={} live={} late={}",
            b.cc,
            names.len(),
            gen.iter().sum::<i64>(),
            copies.iter().sum::<i64>(),
            rx.iter().sum::<i64>(),
            drop.iter().sum::<i64>(),
            rl.iter().sum::<i64>(),
            pcnm.iter().sum::<i64>(),
            live,
            late
        );
    }

    // lazy generation is exact
    let (eager, _, _) = run_with_live_opts(&b.toml, false);
    prop_assert!(
        format!("{:?}", out.tables) == format!("{:?}", eager.tables),
        "lazy and eager generation differ"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24), max_shrink_iters: 200, .. ProptestConfig::default() })]

    #[test]
    fn multicast_conservation_and_bounds_on_random_networks(n in net()) {
        check(&n)?;
    }
}
