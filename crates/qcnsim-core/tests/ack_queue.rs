//! `transport.ack_queue` (docs/models/transport.md, "ACK frames are honest traffic"): under
//! `"data"` (the default) an ACK waits at a switch behind the data frames queued for its way
//! back (and with PFC in its flow's class queue); under `"control"` it goes before them. Without
//! data in its way the two are the same run. The scenarios below set `"control"` and override
//! it with `"data"`.

mod common;
use common::*;

/// A probe DCTCP flow `p` a -> b of 150 KB starting at `start`; with `cross`, two greedy
/// DCTCP flows c -> a and d -> a from 0 whose queue at sw->a (about K = 200 frames, 300 KB,
/// 240 us of its link) lies on the probe's ACK path. Every link 10 Gb/s, 1 us; a retransmission
/// timeout (5 ms) beyond the run's round trips.
fn scenario(cross: bool, start: &str, extra: &str) -> String {
    let mut s = String::from(
        "[meta]\nduration = \"6ms\"\n[defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\n\
         switch_latency = \"0us\"\nbuffer = \"infinite\"\nnic_buffer = \"infinite\"\n\
         [[switches]]\nname = \"sw\"\n",
    );
    for h in ["a", "b", "c", "d"] {
        s += &format!("[[hosts]]\nname = \"{h}\"\n[[links]]\nbetween = [\"{h}\", \"sw\"]\n");
    }
    s += &format!(
        "[[flows]]\nname = \"p\"\nsrc = \"a\"\ndst = \"b\"\ntraffic = \"greedy\"\nsize = \"150KB\"\n\
         transport = \"gbn\"\nframe = \"1500B\"\nstart = \"{start}\"\npriority = 3\n"
    );
    if cross {
        for h in ["c", "d"] {
            s += &format!(
                "[[flows]]\nname = \"x{h}\"\nsrc = \"{h}\"\ndst = \"a\"\ntraffic = \"greedy\"\n\
                 size = \"1GB\"\ntransport = \"gbn\"\nframe = \"1500B\"\npriority = 3\n"
            );
        }
    }
    s + "[cc]\nmode = \"dctcp\"\n[cc.dctcp]\nk = 200\nrl_queue = \"1GB\"\n\
         [transport]\nrto = \"5ms\"\nack_queue = \"control\"\n"
        + extra
}

/// The probe's FCT, seconds (it must finish).
fn probe_fct(out: &qcnsim_core::api::RunOutput) -> f64 {
    let t = table(out, "fct");
    let i = row_of(strs(t, "flow"), "p");
    assert!(bools(t, "finished")[i], "the probe finished");
    f64s(t, "fct_ps")[i] * 1e-12
}

const PFC: &str = "[flow_control]\nmode = \"pfc\"\npriorities = [3]\n";

#[test]
fn an_ack_waits_behind_the_data_queue_under_data_only() {
    for extra in ["", PFC] {
        let text = scenario(true, "2ms", extra);
        let control = run(&text, &[], None);
        let data = run(&text, &["transport.ack_queue=\"data\""], None);
        // the default is "data"
        let default = run(&text.replace("ack_queue = \"control\"\n", ""), &[], None);
        assert_eq!(tables_text(&default), tables_text(&data), "{extra:?}");
        let (fc, fd) = (probe_fct(&control), probe_fct(&data));
        // control: the ACKs go before the queue at sw->a; 100 frames in a few RTTs of ~10 us
        assert!(fc < 200e-6, "control: probe FCT {fc} s ({extra:?})");
        // data: every ACK waits behind up to 240 us of data at sw->a (the queue oscillates
        // below K), and slow start from 10 frames needs four round trips for 100 frames
        // (measured: 707 us against 128 us without PFC)
        assert!(
            fd > fc + 400e-6,
            "data: probe FCT {fd} s vs {fc} s ({extra:?})"
        );
        // the queue at sw->a held the ACKs under data (its frames) and none under control
        let ports = table(&data, "ports");
        let sw_a = row_of(strs(ports, "port"), "sw->a");
        let tx_d = i64s(ports, "tx_frames")[sw_a];
        let tx_c = i64s(table(&control, "ports"), "tx_frames")[sw_a];
        assert!(tx_d > 0 && tx_c > 0);
        // nothing is dropped or resent either way
        for out in [&control, &data] {
            let fl = table(out, "fct");
            assert!(i64s(fl, "retransmitted_bytes").iter().all(|&b| b == 0));
        }
    }
}

#[test]
fn without_data_in_their_way_the_two_queues_are_the_same_run() {
    for extra in ["", PFC] {
        let text = scenario(false, "10us", extra);
        let control = run(&text, &[], None);
        let data = run(&text, &["transport.ack_queue=\"data\""], None);
        // the same run; only the queue's maximum at sw->a sees the ACK (64 B) under data, and
        // the summary counts the ACKs dropped (none)
        assert_eq!(summary_value(&data, "ack_drops", "ACKs"), Some(0.0));
        for name in ["fct", "flows", "queue_samples"] {
            assert_eq!(
                format!("{:?}", table(&control, name)),
                format!("{:?}", table(&data, name)),
                "{name} {extra:?}"
            );
        }
        let ports = |o| i64s(table(o, "ports"), "max_qlen_bytes").to_vec();
        let sw_a = row_of(strs(table(&data, "ports"), "port"), "sw->a");
        assert_eq!(ports(&control)[sw_a], 0);
        assert_eq!(ports(&data)[sw_a], 64);
        assert!(probe_fct(&data) < 300e-6);
    }
}

#[test]
fn a_bad_ack_queue_names_the_field_the_value_and_the_choices() {
    let text = scenario(false, "10us", "");
    let err = qcnsim_core::api::validate(&text, &["transport.ack_queue=\"high\"".to_string()])
        .err()
        .expect("refused");
    let msg = err.to_string();
    for part in ["ack_queue", "\"high\"", "control", "data"] {
        assert!(msg.contains(part), "{msg}");
    }
}

#[test]
fn at_the_nic_an_ack_waits_while_its_flows_priority_is_paused_under_data_only() {
    // b receives the probe a -> b and itself sends on priority 3 into c, with d: sw->c (1 Gb/s)
    // is overloaded twentyfold, its egress watermark pauses priority 3 at b and d for about
    // 80 us at a time (10 KB between XOFF and XON at 1 Gb/s). The probe's ACKs leave b's NIC
    // before b's data either way; under "data" they also wait while b's priority 3 is paused,
    // under "control" only while the control priority (the highest) is.
    let mut text = scenario(false, "1ms", "").replace(
        "between = [\"c\", \"sw\"]\n",
        "between = [\"c\", \"sw\"]\nrate = \"1Gbps\"\n",
    );
    for (name, src) in [("xb", "b"), ("xd", "d")] {
        text += &format!(
            "[[flows]]\nname = \"{name}\"\nsrc = \"{src}\"\ndst = \"c\"\ntraffic = \"greedy\"\n\
             size = \"1GB\"\ntransport = \"gbn\"\nframe = \"1500B\"\npriority = 3\n"
        );
    }
    text += "[flow_control]\nmode = \"pfc\"\npriorities = [3]\nwatermark = \"egress\"\n\
             xoff = \"30KB\"\nxon = \"20KB\"\n";
    let control = run(&text, &[], None);
    let data = run(&text, &["transport.ack_queue=\"data\""], None);
    let ports = table(&data, "ports");
    let b_sw = row_of(strs(ports, "port"), "b->sw");
    for out in [&control, &data] {
        assert!(i64s(table(out, "ports"), "pause_received")[b_sw] > 10);
    }
    let (fc, fd) = (probe_fct(&control), probe_fct(&data));
    assert!(fc < 200e-6, "control: probe FCT {fc} s");
    // (measured: 649 us against 123 us)
    assert!(fd > fc + 100e-6, "data: probe FCT {fd} s vs {fc} s");
}

/// Greedy flows c -> a and d -> a on `priority`, whose queue at sw->a lies on the probe's ACK
/// path.
fn cross(priority: u32) -> String {
    let mut s = String::new();
    for h in ["c", "d"] {
        s += &format!(
            "[[flows]]\nname = \"x{h}\"\nsrc = \"{h}\"\ndst = \"a\"\ntraffic = \"greedy\"\n\
             size = \"1GB\"\ntransport = \"gbn\"\nframe = \"1500B\"\npriority = {priority}\n"
        );
    }
    s
}

#[test]
fn acks_in_the_data_queue_alone_raise_a_pause_under_data_only() {
    // the cross traffic into a is on priority 5, served before priority 3 at sw->a (strict
    // priority) and lossy; the probe's ACKs (priority 3) wait there, alone in their queue and
    // in their input's (b->sw) priority-3 watermark: 5 ACKs of 64 B cross XOFF (the probe's
    // data, 1500 B frames, pauses a at once at sw->b; b sends nothing else)
    let text = scenario(false, "1ms", "")
        + &cross(5)
        + "[flow_control]\nmode = \"pfc\"\npriorities = [3]\nwatermark = \"ingress\"\n\
           xoff = \"300B\"\nxon = \"100B\"\n";
    let control = run(&text, &[], None);
    let data = run(&text, &["transport.ack_queue=\"data\""], None);
    let pauses = |o| {
        let ports = table(o, "ports");
        i64s(ports, "pause_received")[row_of(strs(ports, "port"), "b->sw")]
    };
    // b sends nothing but the probe's ACKs: only they can have paused it
    assert_eq!(pauses(&control), 0);
    assert!(pauses(&data) > 0, "data: {} PAUSEs at b", pauses(&data));
}

/// The ACKs dropped in a switch's data queue (`ack_drops`), every frame the ports dropped,
/// and the data frames the flows lost in the network.
/// `text` run under `cc` (a `cc.mode` override) with a 1 ms retransmission timer, ACKs in the
/// control queue and in the data queue.
fn control_and_data(
    text: &str,
    cc: &str,
) -> (qcnsim_core::api::RunOutput, qcnsim_core::api::RunOutput) {
    let over = [cc, "transport.rto=\"1ms\""];
    let control = run(
        text,
        &[over[0], over[1], "transport.ack_queue=\"control\""],
        None,
    );
    let data = run(
        text,
        &[over[0], over[1], "transport.ack_queue=\"data\""],
        None,
    );
    (control, data)
}

fn ack_drops(out: &qcnsim_core::api::RunOutput) -> (i64, i64, i64) {
    let acks = summary_value(out, "ack_drops", "ACKs").expect("ack_drops under data") as i64;
    let ports = table(out, "ports");
    let all: i64 = i64s(ports, "drop_frames").iter().sum();
    let fl = table(out, "flows");
    let data: i64 = i64s(fl, "dropped_frames").iter().sum();
    (acks, all, data)
}

#[test]
fn a_lossy_finite_buffer_drops_acks_and_the_probe_still_finishes() {
    // sw->a holds 4 frames (an ACK is a frame); the greedy cross flows fill it (DCTCP's K, 300 KB, is beyond it) and
    // the probe's ACKs arriving at a full queue are dropped; cumulative ACKs (or the
    // retransmission timer) recover them
    let text = scenario(false, "1ms", "").replace(
        "[[links]]\nbetween = [\"a\", \"sw\"]\n",
        "[[links]]\nbetween = [\"a\", \"sw\"]\nbuffer = \"4frames\"\n",
    ) + &cross(3);
    // DCTCP's ACKs (sim/cc/e2e.rs) and plain go-back-N's (cc.mode = "none", sim/host/transport.rs)
    for cc in ["cc.mode=\"dctcp\"", "cc.mode=\"none\""] {
        let (control, data) = control_and_data(&text, cc);
        assert!(summary_value(&control, "ack_drops", "ACKs").is_none());
        let (acks, at, frames) = ack_drops(&data);
        assert!(acks > 0, "data: no ACK dropped ({cc})");
        assert_eq!(
            at,
            frames + acks,
            "the ports count data frames and ACKs ({cc})"
        );
        probe_fct(&data);
        probe_fct(&control);
    }
}

#[test]
fn a_shared_memory_admits_and_drops_acks_as_data_frames() {
    // the same with a 30 KB shared memory, no thresholds: the pool is full, and an ACK
    // arriving then is refused at the pool check, as a data frame
    let text = scenario(false, "10us", "")
        + &cross(3)
        + "[shared_buffer]\nsize = \"30KB\"\ningress_threshold = \"none\"\n\
           egress_threshold = \"none\"\n";
    // DCTCP's ACKs and plain go-back-N's (the memory keys an ACK by the port it came from)
    for cc in ["cc.mode=\"dctcp\"", "cc.mode=\"none\""] {
        let (control, data) = control_and_data(&text, cc);
        let (acks, at, frames) = ack_drops(&data);
        assert!(acks > 0, "data: no ACK dropped");
        assert_eq!(at, frames + acks);
        let pool = |o| i64s(table(o, "switch_buffer"), "drop_pool_frames")[0];
        assert_eq!(pool(&data), at, "the memory counted the ACKs it refused");

        // under control the pool refuses data frames only
        let fl = table(&control, "flows");
        let data_c: i64 = i64s(fl, "dropped_frames").iter().sum();
        assert_eq!(pool(&control), data_c);
        if cc.contains("dctcp") {
            // (without congestion control the greedy flows keep the pool full and starve it)
            probe_fct(&data);
        }
    }
}
