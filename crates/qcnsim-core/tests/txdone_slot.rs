//! The transmission-done slot (docs/performance.md, "Greedy sources, fourth round"): one `TxDone` of a
//! switch port towards a host is kept beside the event queue, with the sequence number it would
//! have had in the queue, and fired where the queue would have popped it. Tables and event counts
//! must be exactly those of keeping every `TxDone` in the queue: the random networks of
//! tests/common/random_net.rs (synchronised sources, so that many events share a picosecond;
//! several host-facing ports competing for the slot; QCN feedback frames queued at host-facing
//! ports), and fixed cases.

mod common;
use common::random_net::{case, toml};
use common::*;
use proptest::prelude::*;

/// The tables with the slot on and off must be equal, and the event counts; returns how many
/// transmission-dones fired from the slot. (Departures fixed at enqueue are off in both: they
/// would take the slot's ports; tests/fixed_departures.rs checks them.)
fn same_with_and_without(text: &str) -> u64 {
    let (on, (ev_on, fires)) = run_sim(
        text,
        |sim| sim.set_fixed_departures(false),
        |sim| (sim.events(), sim.slot_fires()),
    );
    let (off, (ev_off, fires_off)) = run_sim(
        text,
        |sim| {
            sim.set_fixed_departures(false);
            sim.set_txdone_slot(false);
        },
        |sim| (sim.events(), sim.slot_fires()),
    );
    assert_eq!(fires_off, 0);
    assert_eq!(ev_on, ev_off, "event counts differ:\n{text}");
    assert!(
        tables_text(&on) == tables_text(&off),
        "tables differ:\n{text}"
    );
    fires
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32), max_shrink_iters: 100, .. ProptestConfig::default() })]

    #[test]
    fn slot_gives_the_tables_of_the_queue(c in case()) {
        same_with_and_without(&toml(&c));
    }
}

/// htsim's QCN scenario (ten greedy sources into one bottleneck): the bottleneck's
/// transmission-dones go through the slot, and QCN's feedback frames wait at the switch's ports
/// towards the sources (a control frame moves a slot `TxDone` back into the queue).
#[test]
fn greedy_dumbbell_uses_the_slot_with_identical_tables() {
    let text = HTSIM_QCN;
    let fires = same_with_and_without(text);
    // 20 ms of a busy 10 Gb/s bottleneck: about 16,700 frames, nearly all sent back to back
    assert!(fires > 15_000, "{fires} slot fires");
}

/// With flow control the ports take the slow path and the slot is not used.
#[test]
fn pause_leaves_the_slot_unused() {
    let text = "[meta]\nname = \"p\"\nduration = \"5ms\"\nseed = 2\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\nbuffer = \"150KB\"\n\
        [[hosts]]\nname = \"h{i}\"\ncount = 3\n[[hosts]]\nname = \"sink\"\n[[switches]]\nname = \"sw\"\n\
        [[links]]\nbetween = [\"h{i}\", \"sw\"]\ncount = 3\n[[links]]\nbetween = [\"sw\", \"sink\"]\n\
        [[flows]]\nname = \"f{i}\"\nsrc = \"h{i}\"\ndst = \"sink\"\ntraffic = \"cbr\"\nrate = \"5Gbps\"\nframe = \"1500B\"\ncount = 3\n\
        [flow_control]\nmode = \"pause\"\nwatermark = \"egress\"\nxoff = \"60KB\"\nxon = \"40KB\"\n";
    assert_eq!(same_with_and_without(text), 0);
}
