//! Departures fixed at enqueue (sim/core/datapath.rs, `enqueue_fixed`; sim/fastpath.rs,
//! `fixed_ports`): at a FIFO switch port towards a host whose order nothing can change, each
//! data frame's start, end and delivery are computed when it is queued, so the frame makes no
//! transmission-done event there. Tables must be exactly those of a run without it, and of a run
//! with every shortcut off: random networks (a chain of one to three switches, hosts on random
//! switches, random rates, delays, latencies, buffers and flows, synchronised sources so that
//! many events share a picosecond, QCN on and off, queue samples at intervals on both sides of
//! a frame's time, rate changes), and fixed cases.

mod common;
use common::random_net::{case, toml};
use common::*;
use proptest::prelude::*;

/// Tables with fixed departures on (the default), off, and with every shortcut off must be
/// equal, and with the switch arrivals folded into their frames' start at the source
/// (`Sim::set_fold_arrivals`, on by default) as without; returns (departures fixed at enqueue,
/// events with them, events without them).
fn same_with_and_without(text: &str) -> (u64, u64, u64) {
    same_with_and_without_folds(text).0
}

/// [`same_with_and_without`], and (arrivals folded, events with them, events without them).
fn same_with_and_without_folds(text: &str) -> ((u64, u64, u64), (u64, u64, u64)) {
    let read =
        |sim: &qcnsim_core::sim::Sim| (sim.events(), sim.fixed_departures(), sim.folded_arrivals());
    let (on, (ev_on, fixed, folded)) = run_sim(text, |_| {}, read);
    let (unfolded, (ev_unfolded, fixed_unfolded, folded_off)) =
        run_sim(text, |sim| sim.set_fold_arrivals(false), read);
    let (off, (ev_off, fixed_off, folded_fixed_off)) =
        run_sim(text, |sim| sim.set_fixed_departures(false), read);
    let (none, _) = run_sim(
        text,
        |sim| {
            sim.set_fixed_departures(false);
            sim.set_txdone_slot(false);
            sim.set_direct_send(false);
        },
        read,
    );
    assert_eq!(fixed_off, 0);
    // (arrivals fold only at ports whose departures are fixed)
    assert_eq!((folded_off, folded_fixed_off), (0, 0));
    assert_eq!(fixed, fixed_unfolded);
    assert!(
        tables_text(&on) == tables_text(&unfolded),
        "tables differ with switch arrivals folded and not:\n{text}"
    );
    // a folded arrival saves its event, and makes one only for its CP's feedback
    assert!(ev_on <= ev_unfolded);
    assert!(
        tables_text(&on) == tables_text(&off),
        "tables differ with fixed departures on and off:\n{text}"
    );
    assert!(
        tables_text(&on) == tables_text(&none),
        "tables differ from those with every shortcut off:\n{text}"
    );
    ((fixed, ev_unfolded, ev_off), (folded, ev_on, ev_unfolded))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(48), max_shrink_iters: 100, .. ProptestConfig::default() })]

    #[test]
    fn fixed_departures_give_the_tables_without_them(c in case()) {
        let ((_fixed, ev_on, ev_off), _) = same_with_and_without_folds(&toml(&c));
        // a departure fixed at enqueue saves its transmission-done, if it had one, and nothing
        // else changes
        prop_assert!(ev_on <= ev_off);
    }
}

/// The random networks fold arrivals in some cases (one switch's port whose every input has
/// the same lead): the property above is not vacuous for folding.
#[test]
fn random_networks_fold_arrivals() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strat = case();
    let mut folding = 0;
    for _ in 0..40 {
        let c = strat.new_tree(&mut runner).expect("a case").current();
        if same_with_and_without_folds(&toml(&c)).1 .0 > 0 {
            folding += 1;
        }
    }
    assert!(
        folding >= 3,
        "{folding} of 40 random networks folded arrivals"
    );
}

/// htsim's QCN scenario (ten greedy sources into one bottleneck, the sink sends nothing): the
/// bottleneck's departures are fixed at enqueue, every frame makes two events (its departure
/// from the rate limiter, its arrival at the switch) instead of three; with its arrival folded
/// into its departure from the NIC, one.
#[test]
fn greedy_dumbbell_fixes_the_bottleneck_with_identical_tables() {
    let text = &format!(
        "{HTSIM_QCN}[metrics]\nqueue_interval = \"100us\"\nqueue_ports = [\"sw->sink\"]\n\
         throughput_ports = [\"sw->sink\"]\n"
    );
    let ((fixed, ev_on, ev_off), (folded, ev_folded, _)) = same_with_and_without_folds(text);
    // 20 ms of a busy 10 Gb/s bottleneck: about 16,700 frames
    assert!(fixed > 16_000, "{fixed} departures fixed");
    // (a frame that finds the port idle left at its arrival without an event in either run)
    assert!(
        ev_off - ev_on >= fixed * 99 / 100,
        "{ev_on} events with, {ev_off} without, {fixed} departures fixed"
    );
    // every source reaches the bottleneck the same time after its frame starts: the arrivals
    // are folded into the starts (all but those of the last lead of the run); each saves its
    // event unless it leaves a CNM or an event record (a drop, a CNM sent) for its instant
    assert!(folded > 16_000, "{folded} arrivals folded");
    assert!(
        ev_on - ev_folded >= folded * 7 / 10,
        "{ev_folded} events folded, {ev_on} not, {folded} arrivals folded"
    );
}

/// Inputs whose frames take different times from their start to the bottleneck (one link
/// longer), a queue sampled more often than that time, or a CP that acts beyond the port
/// (BCN): no arrival is folded, and the tables are those without.
#[test]
fn unequal_leads_or_fast_samples_fold_nothing() {
    let base = "[meta]\nname = \"u\"\nduration = \"5ms\"\nseed = 2\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"10us\"\nswitch_latency = \"0ns\"\nbuffer = \"100frames\"\n\
        [[hosts]]\nname = \"h{i}\"\ncount = 4\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
        [[links]]\nbetween = [\"h{i}\", \"sw\"]\ncount = 4\nDELAY[[links]]\nbetween = [\"sw\", \"sink\"]\n\
        [[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"sink\"\ntraffic = \"greedy\"\nrate = \"10Gbps\"\nframe = \"1500B\"\ncount = 4\n\
        [cc]\nmode = \"MODE\"\n[metrics]\nqueue_interval = \"INTERVAL\"\nqueue_ports = [\"sw->sink\"]\n";
    let run_cc = |delay: &str, interval: &str, mode: &str| {
        let text = base
            .replace("DELAY", delay)
            .replace("INTERVAL", interval)
            .replace("MODE", mode);
        let ((fixed, _, _), (folded, _, _)) = same_with_and_without_folds(&text);
        // (the bottleneck's departures are fixed in every case)
        assert!(fixed > 1_000, "{fixed} departures fixed");
        folded
    };
    let run = |delay: &str, interval: &str| run_cc(delay, interval, "qcn");
    assert!(run("", "100us") > 1_000);
    // 11.2 us from a frame's start to its arrival: a sample every 11.2 us or less folds nothing
    assert_eq!(run("", "11200ns"), 0);
    assert!(run("", "11201ns") > 1_000);
    // a CP other than QCN's (BCN: its sensor and messages; `Needs::acts_beyond_arrival`)
    assert_eq!(run_cc("", "100us", "bcn"), 0);
    // a fifth source whose link is 1 ps longer
    assert_eq!(
        run(
            "[[hosts]]\nname = \"x\"\n[[links]]\nbetween = [\"x\", \"sw\"]\ndelay = \"10000001ps\"\n\
             [[flows]]\nname = \"fx\"\nsrc = \"x\"\ndst = \"sink\"\ntraffic = \"greedy\"\nrate = \"10Gbps\"\nframe = \"1500B\"\n",
            "100us"
        ),
        0
    );
}

/// A port whose host receives QCN's feedback (a sending host) keeps its transmission-dones: a
/// control frame goes before the data frames waiting there. Two hosts sending to each other
/// through one switch: no departure is fixed.
#[test]
fn a_host_that_receives_feedback_keeps_its_events() {
    let text = "[meta]\nname = \"x\"\nduration = \"2ms\"\nseed = 1\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"10us\"\nbuffer = \"100frames\"\n\
        [[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[switches]]\nname = \"sw\"\n\
        [[links]]\nbetween = [\"a\", \"sw\"]\n[[links]]\nbetween = [\"b\", \"sw\"]\nrate = \"5Gbps\"\n\
        [[flows]]\nname = \"ab\"\nsrc = \"a\"\ndst = \"b\"\ntraffic = \"greedy\"\nrate = \"10Gbps\"\n\
        [[flows]]\nname = \"ba\"\nsrc = \"b\"\ndst = \"a\"\ntraffic = \"greedy\"\nrate = \"5Gbps\"\n\
        [cc]\nmode = \"qcn\"\n";
    assert_eq!(same_with_and_without(text).0, 0);
    // without congestion management nothing goes back: both ports towards the hosts are fixed
    let (fixed, _, _) = same_with_and_without(&text.replace("mode = \"qcn\"", "mode = \"none\""));
    assert!(fixed > 1_000, "{fixed}");
}

/// Equal-time events: ten CBR sources at one rate, started together, into one port whose frames
/// leave back to back, on links whose delays make arrivals fall at the instants queued frames
/// start (and queue samples at them). The tables must still be those without fixed departures.
#[test]
fn synchronised_arrivals_at_departure_instants() {
    for delay in ["0ns", "1200ns", "1216ns", "2432ns", "10us"] {
        for interval in ["1216ns", "1217ns", "12160ns"] {
            let text = format!(
                "[meta]\nname = \"s\"\nduration = \"1ms\"\nseed = 3\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"{delay}\"\nswitch_latency = \"0ns\"\nbuffer = \"20frames\"\n\
                 [[hosts]]\nname = \"h{{i}}\"\ncount = 10\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
                 [[links]]\nbetween = [\"h{{i}}\", \"sw\"]\ncount = 10\n[[links]]\nbetween = [\"sw\", \"sink\"]\n\
                 [[flows]]\nname = \"f{{i}}\"\nsrc = \"h{{i}}\"\ndst = \"sink\"\ntraffic = \"cbr\"\nrate = \"1.25Gbps\"\nframe = \"1500B\"\ncount = 10\n\
                 [metrics]\nqueue_interval = \"{interval}\"\nqueue_ports = [\"sw->sink\"]\nthroughput_ports = [\"sw->sink\"]\nmax_sample_rows = 10000000\n"
            );
            same_with_and_without(&text);
        }
    }
}
