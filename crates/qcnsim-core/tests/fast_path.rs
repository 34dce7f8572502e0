//! The data path's shortcuts never bypass a subsystem (sim/fastpath.rs). Every subsystem states
//! what it needs of the shortcuts in its own file; the fast path combines the answers. Two
//! checks per reference scenario that exercises a subsystem:
//! - with every shortcut off (no direct send at idle ports, no transmission-done slot, no
//!   departure fixed at enqueue, the event loop that asks windows at every departure from a
//!   rate limiter) the tables are identical to the default run, and no port lets a frame bypass
//!   a subsystem that watches its queue or fixes departures a subsystem moves or that its
//!   control frames would go before, and no flow's window is left unasked;
//! - with one subsystem's answers dropped (as a new subsystem that forgot to state its needs
//!   would be ignored), the run is no longer faithful: the tables change, or a watched port
//!   sends straight to the wire. So the first check would catch a missing answer.

mod common;

use common::HTSIM_QCN;
use qcnsim_core::api::RunOutput;
use qcnsim_core::scenario;
use qcnsim_core::sim::Sim;
use std::path::Path;

/// Two leaves, two spines, four hosts per leaf; h0 sends CBR to h4 and its own link fails
/// from 1 ms to 3 ms (no congestion management: no port is watched).
const HOST_LINK: &str = "host-link";

/// htsim's QCN scenario, 20 ms: ten greedy sources into one bottleneck towards a sink that sends
/// nothing, whose departures are fixed at enqueue; the switch's ports towards the sources carry
/// QCN's feedback (with congestion management's answers dropped they are fixed too, and the
/// CNMs would wait behind data frames there).
const GREEDY: &str = "greedy-dumbbell";

fn scenario_text(name: &str) -> String {
    if name == GREEDY {
        return format!(
            "{HTSIM_QCN}[metrics]\nqueue_interval = \"100us\"\nqueue_ports = [\"sw->sink\"]\n"
        );
    }
    if name == HOST_LINK {
        return "[meta]\nduration = \"5ms\"\n[defaults]\nlink_delay = \"10us\"\nbuffer = \"200KB\"\n\
                [topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 2\nhosts_per_leaf = 4\n\
                host_rate = \"10Gbps\"\nspine_rate = \"10Gbps\"\n\
                [[flows]]\nname = \"f0\"\nsrc = \"h0\"\ndst = \"h4\"\nrate = \"4Gbps\"\n\
                [[schedule]]\nlink = \"h0-leaf0\"\nat = \"1ms\"\nstate = \"down\"\n\
                [[schedule]]\nlink = \"h0-leaf0\"\nat = \"3ms\"\nstate = \"up\"\n"
            .to_string();
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(format!("{name}.toml"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Run reference scenario `name` with `overrides` and `configure` applied: the tables and the
/// ports that bypass a watcher.
fn run(name: &str, overrides: &[&str], configure: impl FnOnce(&mut Sim)) -> (RunOutput, usize) {
    let ov: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let sc = scenario::load(&scenario_text(name), &ov)
        .unwrap_or_else(|e| panic!("{name} {overrides:?}: {e}"));
    let mut sim = Sim::new(&sc, sc.seed);
    configure(&mut sim);
    sim.run(&mut |_| true).expect("run");
    let bypasses = sim.fast_path_bypasses();
    (sim.into_output(sc.seed, 0.0), bypasses)
}

/// The hotspot of the hardware study, its rate changes moved into a 20 ms run.
const HOTSPOT: &[&str] = &[
    "meta.duration=20ms",
    "schedule.0.at=5ms",
    "schedule.1.at=15ms",
];

/// (scenario, overrides, the subsystems whose answers decide a shortcut in it: in a run on the
/// slow path, say, a congestion point's answer changes nothing, since no port sends directly)
const CASES: &[(&str, &[&str], &[&str])] = &[
    // QCN congestion points
    ("hw-hotspot-1src", HOTSPOT, &["cm"]),
    // a CP that samples arrivals, also the frames discarded at its full queue
    (
        "og-hotspot-10src",
        &[
            "meta.duration=30ms",
            "schedule.0.at=10ms",
            "schedule.1.at=20ms",
            "cc.qcn.cp.samples=arrivals",
        ],
        &["cm"],
    ),
    // NIC-side feedback
    (
        "hw-hotspot-1src",
        &[
            "meta.duration=20ms",
            "schedule.0.at=5ms",
            "schedule.1.at=15ms",
            "meta.variant=nic-hw-1G",
        ],
        &["cm"],
    ),
    // BA sensors, SONAR and push-back
    (
        "og-hotspot-10src",
        &[
            "meta.duration=30ms",
            "schedule.0.at=10ms",
            "schedule.1.at=20ms",
            "cc.qcn.sonar.enabled=true",
            "cc.qcn.pushback.enabled=true",
        ],
        &["cm"],
    ),
    // BCN
    (
        "bcn-calibration",
        &["meta.duration=30ms", "flow_control.mode=none"],
        &["cm"],
    ),
    // DCQCN (ECN marking, notification points) with PFC
    (
        "dcqcn-incast",
        &["meta.duration=4ms", "meta.variant=dcqcn"],
        &["fc"],
    ),
    // PFC with shared-buffer switches and QCN (both flow control and the memories ask for the
    // slow path: neither answer alone decides)
    (
        "pfc-victim",
        &["meta.duration=2ms", "meta.variant=pfc-qcn"],
        &[],
    ),
    // the PFC watchdog (shared-buffer switches too)
    (
        "pfc-deadlock",
        &["meta.duration=4ms", "meta.variant=watchdog"],
        &[],
    ),
    // multicast with representative feedback
    (
        "multicast-star",
        &["meta.duration=600ms", "meta.variant=representative-qeq25"],
        &["cm", "multicast"],
    ),
    // go-back-N over failing links (every flow routed hop by hop: the links' answers cover
    // go-back-N's; the congestion points keep every switch port off the direct send)
    (
        "fabric-websearch",
        &["meta.duration=6ms", "meta.variant=qcn-gbn-linkfail-50"],
        &[],
    ),
    // a sending host's link fails: only the slow path holds the host's frames while its link
    // is down
    (HOST_LINK, &[], &["links"]),
    // go-back-N and QCN, no flow control
    (
        "fabric-websearch",
        &["meta.duration=1ms", "meta.variant=qcn-gbn-shallow-50"],
        &["cm", "gbn"],
    ),
    // DCQCN without flow control
    (
        "dcqcn-fluid",
        &["meta.duration=60ms", "meta.variant=n10"],
        &["cm"],
    ),
    // shared-buffer switches without flow control
    (
        "pfc-victim",
        &["meta.duration=2ms", "meta.variant=no-pfc"],
        &["buffer"],
    ),
    // DCTCP: marking above K at enqueue, the ACK/window transport (sim/cc/e2e.rs)
    (
        "dctcp-analysis",
        &[
            "meta.duration=3ms",
            "meta.variant=n2",
            "analysis.stats_from=1ms",
        ],
        &["cm"],
    ),
    // TIMELY: the rate limiter paced at the RTT-gradient rate (sim/cc/delay.rs). No switch takes
    // part: cm's answers (the ACK receivers) are go-back-N's too, so dropping either one's alone
    // changes nothing; the shortcuts-off check is the one that applies
    (
        "dctcp-analysis",
        &[
            "meta.duration=3ms",
            "meta.variant=n2",
            "analysis.stats_from=1ms",
            "cc.mode=timely",
        ],
        &[],
    ),
    // Swift: a window from the fabric delay, paced below one packet (n40)
    (
        "dctcp-analysis",
        &[
            "meta.duration=2ms",
            "meta.variant=n40",
            "analysis.stats_from=1ms",
            "cc.mode=swift",
        ],
        &[],
    ),
    // DCTCP with delayed ACKs over a lossless fabric
    (
        "dctcp-analysis",
        &[
            "meta.duration=2ms",
            "analysis.stats_from=1ms",
            "meta.variant=n10",
            "transport.ack_interval=2",
            "flow_control.mode=pfc",
            "defaults.buffer=1MB",
        ],
        &[],
    ),
    // HPCC: INT stamped at every switch egress port (the dequeue action), per-packet ACKs,
    // the window and the pacing rate (sim/cc/hpcc.rs)
    (
        "hpcc-micro",
        &["meta.duration=1600us", "analysis.stats_from=1ms"],
        &["cm"],
    ),
    // HPCC's incast with PFC (the slow path)
    ("hpcc-incast", &["meta.variant=hpcc"], &[]),
    // departures fixed at enqueue at the bottleneck; QCN's feedback towards the sources
    (GREEDY, &[], &["cm"]),
];

#[test]
fn every_shortcut_off_gives_the_same_tables() {
    for &(name, ov, _) in CASES {
        let (fast, bypasses) = run(name, ov, |_| {});
        let (slow, _) = run(name, ov, |s| {
            s.set_direct_send(false);
            s.set_txdone_slot(false);
            s.set_fixed_departures(false);
            s.set_gate_skip(false);
        });
        assert_eq!(bypasses, 0, "{name} {ov:?}: a watched port sends directly");
        assert!(
            common::tables_text(&fast) == common::tables_text(&slow),
            "{name} {ov:?}: the shortcuts changed the tables"
        );
    }
}

#[test]
fn a_subsystem_whose_answers_are_dropped_is_bypassed() {
    for &(name, ov, subsystems) in CASES {
        let (reference, _) = run(name, ov, |_| {});
        for &sub in subsystems {
            let (out, bypasses) = run(name, ov, |s| s.ignore_needs_of(sub));
            let differs = common::tables_text(&out) != common::tables_text(&reference);
            assert!(
                differs || bypasses > 0,
                "{name} {ov:?}: dropping the answers of `{sub}` went unnoticed"
            );
        }
    }
}

/// The congestion point watches its queue: with its answer dropped, the first frames reach the
/// CP's idle port straight from the wire, the CP never samples them, and its feedback changes.
#[test]
fn a_congestion_point_is_never_bypassed_at_an_idle_port() {
    let (reference, b0) = run("hw-hotspot-1src", HOTSPOT, |_| {});
    let (dropped, b1) = run("hw-hotspot-1src", HOTSPOT, |s| s.ignore_needs_of("cm"));
    assert_eq!(b0, 0);
    assert!(b1 > 0, "the CP port is not reported as bypassed");
    let cnms = |o: &RunOutput| {
        common::i64s(common::table(o, "ports"), "cnm_sent")
            .iter()
            .sum::<i64>()
    };
    assert!(cnms(&reference) > 0);
    assert_ne!(cnms(&reference), cnms(&dropped));
}

/// Congestion management sends CNMs to the greedy sources: with its answers dropped, the
/// switch's ports towards them are fixed at enqueue, and reported.
#[test]
fn feedback_keeps_the_ports_towards_its_destinations_unfixed() {
    let (_, b0) = run(GREEDY, &[], |_| {});
    let (_, b1) = run(GREEDY, &[], |s| s.ignore_needs_of("cm"));
    assert_eq!(b0, 0);
    assert!(b1 >= 10, "{b1} ports reported");
}

/// An acknowledged flow's window is asked at every departure from its rate limiter: the run
/// takes the event loop that asks (`Sim::departures_gated`); a run without windows the loop
/// that does not. With congestion management's answers dropped, the DCTCP run takes the loop
/// that does not ask, its flows are reported, and the tables change (the windows never close).
#[test]
fn a_window_is_never_skipped() {
    const DCTCP: &[&str] = &[
        "meta.duration=3ms",
        "meta.variant=n2",
        "analysis.stats_from=1ms",
    ];
    let (reference, b0) = run("dctcp-analysis", DCTCP, |_| {});
    let (dropped, b1) = run("dctcp-analysis", DCTCP, |s| s.ignore_needs_of("cm"));
    assert_eq!(b0, 0);
    assert!(b1 >= 2, "{b1} flows or ports reported");
    assert!(common::tables_text(&reference) != common::tables_text(&dropped));
    let ov: Vec<String> = DCTCP.iter().map(|s| s.to_string()).collect();
    let sc = scenario::load(&scenario_text("dctcp-analysis"), &ov).expect("scenario");
    let mut sim = Sim::new(&sc, sc.seed);
    sim.run(&mut |_| true).expect("run");
    assert!(sim.departures_gated());
    let sc = scenario::load(&scenario_text(GREEDY), &[]).expect("scenario");
    let mut sim = Sim::new(&sc, sc.seed);
    sim.run(&mut |_| true).expect("run");
    assert!(!sim.departures_gated());
}
