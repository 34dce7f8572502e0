//! The event loop's prefetch (engine/prefetch.rs; sim/core/datapath.rs, `prefetch_next`) and the
//! flows' hop records (`Core::hops`) change where state lies and when the processor loads it,
//! never what the simulation computes: tables are identical with the prefetch forced on and off,
//! on a fabric (ECMP paths of up to six ports, in hop records) and on a chain longer than a hop
//! record holds (its frames take the flow's own path). Likewise the QCN CPs' byte countdowns kept
//! in their ports (`Port::cp_left`) or in the CPs' own state.

mod common;
use common::*;
use qcnsim_core::api::RunOutput;

/// A k = 4 fat-tree under web-search load with QCN (`SEED`: the seed).
const FAT_TREE: &str = r#"
[meta]
name = "ft"
duration = "2ms"
seed = SEED

[defaults]
link_delay = "1us"
switch_latency = "500ns"
nic_buffer = "infinite"

[topology]
kind = "fat-tree"
k = 4
host_rate = "10Gbps"
agg_rate = "10Gbps"
core_rate = "10Gbps"
edge_buffer = "30KB"
agg_buffer = "30KB"
core_buffer = "30KB"

[routing]
mode = "ecmp"

[[workloads]]
name = "ws"
sizes = "websearch"
load = 0.8
pattern = "all-to-all"

[cc]
mode = "qcn"
"#;

fn same_with_and_without_prefetch(text: &str) -> RunOutput {
    let (on, ev_on) = run_sim(text, |sim| sim.set_prefetch(Some(true)), |s| s.events());
    let (off, ev_off) = run_sim(text, |sim| sim.set_prefetch(Some(false)), |s| s.events());
    let (default, _) = run_sim(text, |_| {}, |s| s.events());
    assert_eq!(ev_on, ev_off);
    assert!(
        tables_text(&on) == tables_text(&off),
        "tables differ with the prefetch on and off"
    );
    assert!(
        tables_text(&on) == tables_text(&default),
        "tables differ from the default's"
    );
    on
}

#[test]
fn fat_tree_tables_do_not_depend_on_the_prefetch() {
    let text = FAT_TREE.replace("SEED", "3");
    let out = same_with_and_without_prefetch(&text);
    let rx = i64s(table(&out, "flows"), "rx_bytes").iter().sum::<i64>();
    assert!(rx > 1_000_000, "the fabric delivered {rx} bytes");
}

#[test]
fn qcn_tables_do_not_depend_on_where_the_cp_countdown_lies() {
    let text = FAT_TREE.replace("SEED", "5");
    let (here, ev_here) = run_sim(
        &text,
        |sim| sim.set_cp_countdowns_in_ports(true),
        |s| s.events(),
    );
    let (cp, ev_cp) = run_sim(
        &text,
        |sim| sim.set_cp_countdowns_in_ports(false),
        |s| s.events(),
    );
    assert_eq!(ev_here, ev_cp);
    assert!(
        tables_text(&here) == tables_text(&cp),
        "tables differ with the CP countdowns in the ports and in the CPs"
    );
    // the CPs sampled (about every 150 KB a port queues: megabytes cross the countdowns many
    // times) and some of the samples sent feedback
    let rx = i64s(table(&here, "flows"), "rx_bytes").iter().sum::<i64>();
    assert!(rx > 1_000_000, "the fabric delivered {rx} bytes");
    let cnms = i64s(table(&here, "flows"), "cnm_received")
        .iter()
        .sum::<i64>();
    assert!(cnms > 0, "{cnms} CNMs received");
}

#[test]
fn a_path_longer_than_a_hop_record_is_followed() {
    // hosts a and b at the ends of a chain of eight switches: a path of nine ports, more than
    // a hop record holds inline
    let mut text = String::from(
        "[meta]\nname = \"chain\"\nduration = \"2ms\"\nseed = 1\n\n\
         [defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\n[cc]\nmode = \"qcn\"\n\n\
         [[hosts]]\nname = \"a\"\n\n[[hosts]]\nname = \"b\"\n\n",
    );
    for i in 0..8 {
        text += &format!("[[switches]]\nname = \"s{i}\"\n\n");
    }
    let mut ends = vec!["a".to_string()];
    ends.extend((0..8).map(|i| format!("s{i}")));
    ends.push("b".to_string());
    for w in ends.windows(2) {
        text += &format!("[[links]]\nbetween = [\"{}\", \"{}\"]\n\n", w[0], w[1]);
    }
    text += "[[flows]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\nrate = \"5Gbps\"\n";
    let out = same_with_and_without_prefetch(&text);
    let rx = i64s(table(&out, "flows"), "rx_bytes")[0];
    // 5 Gb/s for 2 ms, less the frames still on the nine links and eight switches
    assert!(rx > 1_150_000 && rx <= 1_250_000, "rx_bytes = {rx}");
}
