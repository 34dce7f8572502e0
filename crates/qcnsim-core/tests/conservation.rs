//! Conservation and bound invariants on random small networks (proptest):
//! - every generated frame is delivered, dropped (switch / rate limiter / NIC) or in flight;
//! - the frames the flows table calls "in flight" are exactly the frames alive in the simulator
//!   at the end plus those whose last bit is still on the last link (delivered after the end);
//! - per-port drop counters agree with per-flow drop counters and with the events table;
//! - queues never exceed their capacity; CR stays in [min_rate, line rate];
//! - no port sends faster than its link; a CBR source emits exactly the frames its schedule says.

mod common;
use common::*;
use proptest::prelude::*;
use std::collections::HashSet;
use std::fmt::Write;

#[derive(Debug, Clone)]
enum Buf {
    Bytes(u64),
    Frames(u64),
    Infinite,
}

impl Buf {
    fn toml(&self) -> String {
        match self {
            Buf::Bytes(b) => format!("\"{b}B\""),
            Buf::Frames(n) => format!("\"{n}frames\""),
            Buf::Infinite => "\"infinite\"".into(),
        }
    }
}

fn buf() -> impl Strategy<Value = Buf> {
    prop_oneof![
        (3_000u64..300_000).prop_map(Buf::Bytes),
        (3u64..200).prop_map(Buf::Frames),
        Just(Buf::Infinite),
    ]
}

#[derive(Debug, Clone)]
struct FlowG {
    src: usize,
    dst_off: usize,
    traffic: usize,
    /// Offered rate as a fraction (per mille) of the NIC link rate.
    rate_pm: u64,
    frame: u32,
    size: Option<u64>,
    /// start and stop as fractions (per mille) of the duration
    start_pm: u64,
    len_pm: u64,
}

fn flow() -> impl Strategy<Value = FlowG> {
    (
        0usize..6,
        0usize..6,
        0usize..3,
        5u64..=1000,
        64u32..=1500,
        prop::option::weighted(0.3, 64u64..400_000),
        0u64..600,
        50u64..=1000,
    )
        .prop_map(
            |(src, dst_off, traffic, rate_pm, frame, size, start_pm, len_pm)| FlowG {
                src,
                dst_off,
                traffic,
                rate_pm,
                frame,
                size,
                start_pm,
                len_pm,
            },
        )
}

#[derive(Debug, Clone)]
struct Net {
    n_sw: usize,
    /// switch each host hangs off (mod n_sw); 2..=6 hosts
    host_sw: Vec<usize>,
    /// link rates in Mbps: hosts' links first, then the switch chain
    link_mbps: Vec<u64>,
    delay_ns: Vec<u64>,
    sw_buf: Vec<Buf>,
    nic_buf: Option<Buf>,
    flows: Vec<FlowG>,
    /// 0 none, 1 QCN, 2 BCN
    cc: u8,
    duration_us: u64,
    /// (switch port choice, at per mille, rate per mille)
    sched: Option<(usize, u64, u64)>,
    min_rate_mbps: u64,
    timer_us: u64,
    rl_queue: u64,
    rl_burst: Option<u64>,
    seed: u64,
    /// BCN: (sample window, Qsc, back-off Tmax in us)
    bcn: (u64, Option<u64>, Option<u64>),
    /// QCN with NIC-side feedback (ConMes) instead of CNMs.
    nic_fb: bool,
}

fn net() -> impl Strategy<Value = Net> {
    (
        (
            1usize..=3,
            prop::collection::vec(0usize..3, 2..=6),
            prop::collection::vec(1_000u64..=10_000, 8),
            prop::collection::vec(0u64..=20_000, 8),
            prop::collection::vec(buf(), 3),
            prop::option::of(buf()),
            prop::collection::vec(flow(), 1..=5),
        ),
        (
            0u8..3,
            2_000u64..=20_000,
            prop::option::of((0usize..16, 0u64..1000, 1u64..=1000)),
            1u64..=100,
            200u64..=5_000,
            64u64..=150_000,
            prop::option::weighted(0.3, 64u64..=20_000),
            any::<u64>(),
            (
                2_000u64..=100_000,
                prop::option::of(1_000u64..=200_000),
                prop::option::weighted(0.3, 1u64..=2_000),
            ),
            prop::bool::weighted(0.3),
        ),
    )
        .prop_map(
            |(
                (n_sw, host_sw, link_mbps, delay_ns, sw_buf, nic_buf, flows),
                (
                    cc,
                    duration_us,
                    sched,
                    min_rate_mbps,
                    timer_us,
                    rl_queue,
                    rl_burst,
                    seed,
                    bcn,
                    nic_fb,
                ),
            )| Net {
                n_sw,
                host_sw,
                link_mbps,
                delay_ns,
                sw_buf,
                nic_buf,
                flows,
                cc,
                duration_us,
                sched,
                min_rate_mbps,
                timer_us,
                rl_queue,
                rl_burst,
                seed,
                bcn,
                nic_fb,
            },
        )
}

/// What the checks need to know about the generated network.
struct Built {
    toml: String,
    hosts: Vec<String>,
    /// port name -> (capacity, link rate bps)
    ports: Vec<(String, Buf, f64)>,
    /// per flow: (name, nic rate bps, cbr params if an unbounded CBR flow: (start, stop, frame, rate))
    #[allow(clippy::type_complexity)]
    flows: Vec<(String, f64, Option<(u64, u64, u64, f64)>)>,
    max_frame: u64,
    duration_ps: u64,
    min_rate_bps: f64,
    /// congestion control on (QCN or BCN)
    cc: bool,
    bcn: bool,
    /// QCN with NIC-side feedback
    nic_fb: bool,
    /// BCN with a BCN(0,0) back-off: a held regulator reports rate 0
    bcn_backoff: bool,
    /// ports allowed to send CNMs
    cp_ports: HashSet<String>,
}

fn build(n: &Net) -> Built {
    let nh = n.host_sw.len();
    let hosts: Vec<String> = (0..nh).map(|i| format!("h{i}")).collect();
    let sws: Vec<String> = (0..n.n_sw).map(|i| format!("s{i}")).collect();
    let dur_ps = n.duration_us * 1_000_000;
    let mut t = String::new();
    writeln!(
        t,
        "[meta]\nname = \"prop\"\nduration = \"{}us\"\nseed = {}\n",
        n.duration_us,
        n.seed % (i64::MAX as u64)
    )
    .unwrap();
    if let Some(b) = &n.nic_buf {
        writeln!(t, "[defaults]\nnic_buffer = {}\n", b.toml()).unwrap();
    }
    for h in &hosts {
        writeln!(t, "[[hosts]]\nname = \"{h}\"").unwrap();
    }
    for (i, s) in sws.iter().enumerate() {
        writeln!(
            t,
            "[[switches]]\nname = \"{s}\"\nbuffer = {}",
            n.sw_buf[i].toml()
        )
        .unwrap();
    }
    // links: host i <-> its switch, then the chain s0-s1-s2
    let mut links: Vec<(String, String)> = Vec::new();
    for (i, h) in hosts.iter().enumerate() {
        links.push((h.clone(), sws[n.host_sw[i] % n.n_sw].clone()));
    }
    for i in 1..n.n_sw {
        links.push((sws[i - 1].clone(), sws[i].clone()));
    }
    let mut ports = Vec::new();
    let nic_cap = n.nic_buf.clone().unwrap_or(Buf::Bytes(1_000_000));
    let cap_of = |node: &str| -> Buf {
        match node.strip_prefix('s') {
            Some(k) => n.sw_buf[k.parse::<usize>().unwrap()].clone(),
            None => nic_cap.clone(),
        }
    };
    for (i, (a, b)) in links.iter().enumerate() {
        let rate = n.link_mbps[i] as f64 * 1e6;
        writeln!(
            t,
            "[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{}Mbps\"\ndelay = \"{}ns\"",
            n.link_mbps[i], n.delay_ns[i]
        )
        .unwrap();
        ports.push((format!("{a}->{b}"), cap_of(a), rate));
        ports.push((format!("{b}->{a}"), cap_of(b), rate));
    }
    let switch_ports: Vec<usize> = (0..ports.len())
        .filter(|&p| ports[p].0.starts_with('s'))
        .collect();
    if let Some((pc, at_pm, rate_pm)) = n.sched {
        let p = switch_ports[pc % switch_ports.len()];
        let rate_mbps = (ports[p].2 / 1e6 * rate_pm as f64 / 1000.0)
            .floor()
            .max(1.0);
        writeln!(
            t,
            "[[schedule]]\nat = \"{}ns\"\nport = \"{}\"\nrate = \"{}Mbps\"",
            n.duration_us * at_pm,
            ports[p].0,
            rate_mbps
        )
        .unwrap();
    }
    let mut flows = Vec::new();
    let mut max_frame = 64;
    for (i, f) in n.flows.iter().enumerate() {
        let src = f.src % nh;
        let dst = (src + 1 + f.dst_off % (nh - 1)) % nh;
        let nic_mbps = n.link_mbps[src];
        let rate_mbps = (nic_mbps * f.rate_pm / 1000).max(1);
        let traffic = ["cbr", "bernoulli", "poisson"][f.traffic];
        let start_ns = n.duration_us * f.start_pm; // duration_us * 1000 * pm / 1000
        let stop_ns = (start_ns + n.duration_us * f.len_pm).min(n.duration_us * 1000);
        writeln!(
            t,
            "[[flows]]\nname = \"f{i}\"\nsrc = \"{}\"\ndst = \"{}\"\ntraffic = \"{traffic}\"\nrate = \"{rate_mbps}Mbps\"\nframe = \"{}B\"\nstart = \"{start_ns}ns\"\nstop = \"{stop_ns}ns\"",
            hosts[src], hosts[dst], f.frame
        )
        .unwrap();
        if let Some(s) = f.size {
            // a traffic generator's message (a sized flow's default is a NIC, which never
            // drops its own frames: tests/sender.rs); these invariants count a generator's drops
            writeln!(t, "size = \"{s}B\"\nsender = \"generator\"").unwrap();
        }
        max_frame = max_frame.max(f.frame as u64);
        let cbr = (f.traffic == 0 && f.size.is_none()).then_some((
            start_ns * 1000,
            stop_ns * 1000,
            f.frame as u64,
            rate_mbps as f64 * 1e6,
        ));
        flows.push((format!("f{i}"), nic_mbps as f64 * 1e6, cbr));
    }
    // Qeq below every finite CP buffer (CP on all switch ports).
    let min_cap = switch_ports
        .iter()
        .filter_map(|&p| match ports[p].1 {
            Buf::Bytes(b) => Some(b),
            Buf::Frames(k) => Some(k * max_frame),
            Buf::Infinite => None,
        })
        .min()
        .unwrap_or(60_000);
    let q_eq = (min_cap / 3).max(100);
    writeln!(
        t,
        "[cc]\nmode = \"{}\"\n[cc.qcn.cp]\nq_eq = \"{q_eq}B\"\n[cc.qcn.rp]\nmin_rate = \"{}Mbps\"\ntimer = \"{}us\"\nrl_queue = \"{}B\"",
        ["none", "qcn", "bcn"][n.cc as usize],
        n.min_rate_mbps,
        n.timer_us,
        n.rl_queue
    )
    .unwrap();
    if let Some(b) = n.rl_burst {
        writeln!(t, "rl_burst = \"{b}B\"").unwrap();
    }
    if n.nic_fb {
        writeln!(t, "[cc.qcn.nic]\nconmes_interval = \"1000B\"").unwrap();
        t = t.replacen(
            "[cc.qcn.cp]",
            "[cc.qcn]\nfeedback = \"nic\"\n[cc.qcn.cp]",
            1,
        );
    }
    let (window, q_sc, t_max) = n.bcn;
    writeln!(
        t,
        "[cc.bcn.cp]\nq_eq = \"{q_eq}B\"\nsample_window = \"{window}B\"\nsample_jitter = \"{}B\"\nfb_max = 1900.0\nq_sc = \"{}\"\n[cc.bcn.rp]\nmin_rate = \"{}Mbps\"\nr_min = \"500Mbps\"\nrl_queue = \"{}B\"\nt_max = \"{}us\"",
        window / 3,
        q_sc.map_or("off".to_string(), |b| format!("{b}B")),
        n.min_rate_mbps,
        n.rl_queue,
        t_max.unwrap_or(0),
    )
    .unwrap();
    if let Some(b) = n.rl_burst {
        writeln!(t, "rl_burst = \"{b}B\"").unwrap();
    }
    writeln!(
        t,
        "[metrics]\nthroughput_bin = \"100us\"\nthroughput_ports = \"all\"\nqueue_interval = \"10us\"\nqueue_ports = \"all\"\nrate_interval = \"20us\""
    )
    .unwrap();
    let cp_ports = switch_ports.iter().map(|&p| ports[p].0.clone()).collect();
    Built {
        toml: t,
        hosts,
        ports,
        flows,
        max_frame,
        duration_ps: dur_ps,
        min_rate_bps: n.min_rate_mbps as f64 * 1e6,
        cc: n.cc != 0,
        bcn: n.cc == 2,
        nic_fb: n.cc == 1 && n.nic_fb,
        bcn_backoff: n.cc == 2 && t_max.is_some(),
        cp_ports,
    }
}

/// Number of frames an unbounded CBR flow generates: frame k at start + round(k*frame*8/rate)
/// for every k with that instant < stop (stop <= duration, so all are processed).
fn cbr_count(start: u64, stop: u64, frame: u64, rate: f64) -> i64 {
    let mut k = 0u64;
    loop {
        let at = start + (k as f64 * frame as f64 * 8.0 * 1e12 / rate).round() as u64;
        if at >= stop {
            return k as i64;
        }
        k += 1;
    }
}

fn check(n: &Net) -> Result<(), TestCaseError> {
    let b = build(n);
    let (out, live, late) = run_with_live(&b.toml);
    let fl = table(&out, "flows");
    let names = strs(fl, "flow");
    let gen = i64s(fl, "gen_frames");
    let tx = i64s(fl, "tx_frames");
    let txb = i64s(fl, "tx_bytes");
    let rx = i64s(fl, "rx_frames");
    let rxb = i64s(fl, "rx_bytes");
    let drop = i64s(fl, "dropped_frames");
    let rl = i64s(fl, "rl_dropped_frames");
    let nic = i64s(fl, "nic_dropped_frames");
    let infl = i64s(fl, "in_flight_frames");
    let cnm_rx = i64s(fl, "cnm_received");
    let fct = i64s(fl, "fct_ps");
    let size = i64s(fl, "size_bytes");

    // -- per flow conservation
    for i in 0..names.len() {
        prop_assert!(
            infl[i] >= 0,
            "flow {}: negative in flight {}",
            names[i],
            infl[i]
        );
        prop_assert_eq!(
            gen[i],
            rx[i] + drop[i] + rl[i] + nic[i] + infl[i],
            "flow {}",
            &names[i]
        );
        // frames reach the NIC only through the rate limiter
        prop_assert!(
            tx[i] + rl[i] <= gen[i],
            "flow {}: tx {} + rl drops {} > gen {}",
            names[i],
            tx[i],
            rl[i],
            gen[i]
        );
        prop_assert!(
            rx[i] + drop[i] + nic[i] <= tx[i],
            "flow {}: more frames out than into the NIC",
            names[i]
        );
        prop_assert!(rxb[i] <= txb[i]);
        if !b.cc {
            prop_assert_eq!(
                tx[i],
                gen[i],
                "flow {}: without QCN every frame goes to the NIC",
                &names[i]
            );
            prop_assert_eq!(rl[i], 0);
            prop_assert_eq!(cnm_rx[i], 0);
        }
        if size[i] >= 0 {
            // a finite flow generates ceil(size / frame) frames at most (the last may be short)
            let frame = n.flows[i].frame as i64;
            prop_assert!(
                gen[i] <= (size[i] + frame - 1) / frame,
                "flow {}: {} frames for size {}",
                names[i],
                gen[i],
                size[i]
            );
            if fct[i] >= 0 {
                prop_assert!(
                    rxb[i] >= size[i],
                    "flow {} finished with {} of {} bytes",
                    names[i],
                    rxb[i],
                    size[i]
                );
            } else {
                prop_assert!(
                    rxb[i] < size[i],
                    "flow {} got all {} bytes but has no FCT",
                    names[i],
                    size[i]
                );
            }
        } else {
            prop_assert_eq!(fct[i], -1);
        }
        if let Some((start, stop, frame, rate)) = b.flows[i].2 {
            prop_assert_eq!(
                gen[i],
                cbr_count(start, stop, frame, rate),
                "CBR flow {} frame count",
                &names[i]
            );
        }
    }

    // -- ports
    let pt = table(&out, "ports");
    let pname = strs(pt, "port");
    let ptx = i64s(pt, "tx_frames");
    let ptxb = i64s(pt, "tx_bytes");
    let pdrop = i64s(pt, "drop_frames");
    let pcnm = i64s(pt, "cnm_sent");
    // BCN messages sent per port (negative + positive + BCN(0,0))
    let pbcn: Vec<i64> = (0..pt.rows())
        .map(|i| {
            ["bcn_negative_sent", "bcn_positive_sent", "bcn0_sent"]
                .iter()
                .map(|c| i64s(pt, c)[i])
                .sum()
        })
        .collect();
    let pconmes = i64s(pt, "conmes_sent");
    let conmes_rx: i64 = i64s(fl, "conmes_received").iter().sum();
    let pmax = i64s(pt, "max_qlen_bytes");
    let pmean = f64s(pt, "mean_qlen_bytes");
    let prate = f64s(pt, "link_rate_bps");
    prop_assert_eq!(pname.len(), b.ports.len());
    let hosts: HashSet<&str> = b.hosts.iter().map(|s| s.as_str()).collect();
    let into_host = |p: &str| hosts.contains(p.split("->").nth(1).unwrap());
    let from_host = |p: &str| hosts.contains(p.split("->").next().unwrap());
    let mut sw_drops = 0;
    let mut nic_drops = 0;
    let mut to_hosts_tx = 0;
    for (name, cap, rate) in &b.ports {
        let i = row_of(pname, name);
        prop_assert_eq!(prate[i], *rate);
        if from_host(name) {
            nic_drops += pdrop[i];
            prop_assert_eq!(
                pcnm[i] + pbcn[i] + pconmes[i],
                0,
                "host port {} sent CNMs",
                name
            );
        } else {
            sw_drops += pdrop[i];
        }
        if into_host(name) {
            to_hosts_tx += ptx[i];
        }
        if !b.cp_ports.contains(name) || !b.cc || b.bcn || b.nic_fb {
            prop_assert_eq!(pcnm[i], 0, "port {} is not a QCN CP but sent CNMs", name);
        }
        if !b.cp_ports.contains(name) || !b.bcn {
            prop_assert_eq!(pbcn[i], 0, "port {} is not a BCN CP but sent BCN", name);
        }
        if !b.cp_ports.contains(name) || !b.nic_fb {
            prop_assert_eq!(pconmes[i], 0, "port {} sent ConMes", name);
        }
        let cap_bytes = match cap {
            Buf::Bytes(x) => Some(*x as i64),
            Buf::Frames(k) => Some(*k as i64 * b.max_frame as i64),
            Buf::Infinite => None,
        };
        if let Some(c) = cap_bytes {
            prop_assert!(
                pmax[i] <= c,
                "port {}: max queue {} > capacity {}",
                name,
                pmax[i],
                c
            );
        }
        prop_assert!(
            pmean[i] >= 0.0 && pmean[i] <= pmax[i] as f64 + 1e-6,
            "port {}: mean queue {} outside [0, max {}]",
            name,
            pmean[i],
            pmax[i]
        );
        // A port never sends more than its link rate allows over the run (+1 frame in progress).
        let limit = rate * (b.duration_ps as f64 / 1e12) / 8.0 + 1518.0;
        prop_assert!(
            ptxb[i] as f64 <= limit,
            "port {}: {} bytes in {} ps at {} bps",
            name,
            ptxb[i],
            b.duration_ps,
            rate
        );
    }
    prop_assert_eq!(
        sw_drops,
        drop.iter().sum::<i64>(),
        "switch port drops vs flow drops"
    );
    prop_assert_eq!(
        nic_drops,
        nic.iter().sum::<i64>(),
        "NIC port drops vs flow NIC drops"
    );

    // -- in flight == alive in the simulator + delivered after the end.
    // Ports into hosts carry each data frame's last hop (and CNMs to sources). A data frame that
    // started its last hop counts as rx if it arrives by the end, else it is "late" and no longer
    // alive; so late data frames = tx into hosts - rx - CNMs into hosts.
    let total_infl: i64 = infl.iter().sum();
    let total_rx: i64 = rx.iter().sum();
    // control messages received by sources: CNMs and BCN messages (as recorded in events), or,
    // with NIC-side feedback, ConMes (the NIC's dings count as cnm_received but travel no link)
    let msg_rx_events: i64 = cnm_rx.iter().sum::<i64>()
        + [
            "bcn_negative_received",
            "bcn_positive_received",
            "bcn0_received",
        ]
        .iter()
        .map(|c| i64s(fl, c).iter().sum::<i64>())
        .sum::<i64>();
    let total_cnm_rx = if b.nic_fb { conmes_rx } else { msg_rx_events };
    prop_assert!(conmes_rx <= pconmes.iter().sum::<i64>());
    let late_upper = to_hosts_tx - total_rx - total_cnm_rx; // = late data + late CNMs
    prop_assert!(
        late_upper >= 0,
        "more frames received ({} data + {} CNM) than sent into hosts ({})",
        total_rx,
        total_cnm_rx,
        to_hosts_tx
    );
    // exact: every frame the flows table calls in flight is alive or arrives after the end
    prop_assert_eq!(
        total_infl,
        live as i64 + late as i64,
        "in flight vs alive {} + late {}",
        live,
        late
    );
    prop_assert!(
        late as i64 <= late_upper,
        "late data frames {} > tx into hosts - rx - CNM rx = {}",
        late,
        late_upper
    );
    // Late frames are those whose last hop ends after the end: at most the frames that fit in
    // one max-delay + max-frame window per host port.
    let max_delay_ps = 20_000_000u64;
    let window: f64 = b
        .ports
        .iter()
        .filter(|p| into_host(&p.0))
        .map(|p| (max_delay_ps as f64 / 1e12 + 1518.0 * 8.0 / p.2) * p.2 / (64.0 * 8.0) + 1.0)
        .sum();
    prop_assert!(
        (late_upper as f64) <= window,
        "{} frames still on last links, window {}",
        late_upper,
        window
    );

    // -- queue samples
    let qs = table(&out, "queue_samples");
    let qp = strs(qs, "port");
    let qb = i64s(qs, "qlen_bytes");
    let qf = i64s(qs, "qlen_frames");
    prop_assert!(qs.rows() > 0);
    for k in 0..qs.rows() {
        let (_, cap, _) = b.ports.iter().find(|p| p.0 == qp[k]).unwrap();
        prop_assert!(qb[k] >= 0 && qf[k] >= 0);
        prop_assert!(
            qf[k] * 64 <= qb[k] && qb[k] <= qf[k] * b.max_frame as i64,
            "sample {}: {} bytes in {} frames",
            k,
            qb[k],
            qf[k]
        );
        match cap {
            Buf::Bytes(c) => prop_assert!(qb[k] <= *c as i64, "{}: {} > {}", qp[k], qb[k], c),
            Buf::Frames(c) => {
                prop_assert!(qf[k] <= *c as i64, "{}: {} frames > {}", qp[k], qf[k], c)
            }
            Buf::Infinite => {}
        }
        let i = row_of(pname, &qp[k]);
        prop_assert!(qb[k] <= pmax[i], "sample above the port's max_qlen_bytes");
    }

    // -- RP rates
    let rr = table(&out, "rp_rates");
    if b.cc {
        let rf = common::names(rr, "flow");
        let cr = f64s(rr, "cr_bps");
        let tr = f64s(rr, "tr_bps");
        let act = bools(rr, "rl_active");
        prop_assert!(rr.rows() > 0);
        for k in 0..rr.rows() {
            let (_, line, _) = b.flows.iter().find(|f| f.0 == rf[k]).unwrap();
            if cr[k] == 0.0 && b.bcn_backoff {
                continue; // held by a BCN(0,0) back-off
            }
            prop_assert!(
                cr[k] >= b.min_rate_bps && cr[k] <= *line,
                "flow {}: CR {} outside [{}, {}]",
                rf[k],
                cr[k],
                b.min_rate_bps,
                line
            );
            prop_assert!(tr[k] <= *line, "TR {} above line {}", tr[k], line);
            if !act[k] {
                prop_assert!(
                    cr[k] == *line && tr[k] == *line,
                    "inactive RL with CR {} TR {}",
                    cr[k],
                    tr[k]
                );
            }
        }
    } else {
        prop_assert_eq!(rr.rows(), 0);
    }

    // -- throughput bins: never above link rate * bin + one frame
    let tp = table(&out, "port_throughput");
    let tpp = strs(tp, "port");
    let tpb = i64s(tp, "bytes");
    let bin = i64s(tp, "bin_ps");
    for k in 0..tp.rows() {
        let (_, _, rate) = b.ports.iter().find(|p| p.0 == tpp[k]).unwrap();
        let limit = rate * bin[k] as f64 / 1e12 / 8.0 + 1518.0;
        prop_assert!(
            tpb[k] as f64 <= limit,
            "{} bin {}: {} bytes > {}",
            tpp[k],
            k,
            tpb[k],
            limit
        );
    }
    // every transmitted frame ending within the run lands in a bin of its port
    for (i, name) in pname.iter().enumerate() {
        let binned: i64 = (0..tp.rows())
            .filter(|&k| tpp[k] == *name)
            .map(|k| tpb[k])
            .sum();
        prop_assert!(
            binned <= ptxb[i],
            "{}: binned {} > sent {}",
            name,
            binned,
            ptxb[i]
        );
        prop_assert!(
            binned + 1518 >= ptxb[i],
            "{}: binned {} bytes of {} sent",
            name,
            binned,
            ptxb[i]
        );
    }

    if std::env::var_os("QCNSIM_PROP_STATS").is_some() {
        eprintln!(
            "stats: cc={} bcn={} nic_fb={} conmes={} flows={} gen={} sw_drops={} nic_drops={} rl_drops={} cnm={} bcn_msgs={} live={} late<={} infl={}",
            b.cc, b.bcn, b.nic_fb, conmes_rx, names.len(), gen.iter().sum::<i64>(), sw_drops, nic_drops, rl.iter().sum::<i64>(),
            pcnm.iter().sum::<i64>(), pbcn.iter().sum::<i64>(), live, late_upper, total_infl
        );
    }

    // -- events agree with counters
    let ev = table(&out, "events");
    let kind = strs(ev, "kind");
    let node = strs(ev, "node");
    let count = |k: &str| kind.iter().filter(|x| *x == k).count() as i64;
    prop_assert_eq!(count("drop"), sw_drops + nic_drops);
    prop_assert_eq!(count("cnm_sent"), pcnm.iter().sum::<i64>());
    prop_assert_eq!(
        count("cnm_received") + count("bcn_received") + count("bcn0_received"),
        msg_rx_events
    );
    prop_assert_eq!(
        count("bcn_sent") + count("bcn0_sent"),
        pbcn.iter().sum::<i64>()
    );
    prop_assert_eq!(
        count("bcn0_sent"),
        i64s(pt, "bcn0_sent").iter().sum::<i64>()
    );
    for k in 0..ev.rows() {
        if kind[k] == "cnm_sent" || kind[k] == "bcn_sent" || kind[k] == "bcn0_sent" {
            prop_assert!(b.cp_ports.contains(&node[k]), "CNM from non-CP {}", node[k]);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24), max_shrink_iters: 200, .. ProptestConfig::default() })]

    #[test]
    fn conservation_and_bounds_on_random_networks(n in net()) {
        check(&n)?;
    }
}
