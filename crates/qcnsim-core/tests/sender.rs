//! `sender`: a NIC sending a message from host memory never drops it (docs/models/network.md,
//! "Senders"). The issue's case: a 4-leaf / 2-spine leaf-spine, 40 Gb/s hosts, a 16-to-1 incast
//! of 500 KB into one host, PFC and DCQCN with their defaults. With a traffic generator as the
//! sender, DCQCN's rate cut overflows each flow's 150 KB rate-limiter queue and the flows never
//! finish; with the NIC (the default of generated flows) every flow finishes.

mod common;
use common::*;

use common::INCAST_40G as INCAST;

/// Hosts `a` and `b` through switch `s` at 10 Gb/s, 1 us links, with `defaults` added to
/// `[defaults]`, and one flow from `a` to `b` at line rate per (name, size, extra keys).
fn a_to_b(duration: &str, defaults: &str, flows: &[(&str, &str, &str)]) -> String {
    let mut t = format!(
        "[meta]\nduration = \"{duration}\"\n[defaults]\nlink_delay = \"1us\"\n{defaults}\
         [[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[switches]]\nname = \"s\"\n\
         [[links]]\nbetween = [\"a\", \"s\"]\nrate = \"10Gbps\"\n\
         [[links]]\nbetween = [\"s\", \"b\"]\nrate = \"10Gbps\"\n"
    );
    for (name, size, extra) in flows {
        t += &format!(
            "[[flows]]\nname = \"{name}\"\nsrc = \"a\"\ndst = \"b\"\nrate = \"10Gbps\"\n\
             size = \"{size}\"\n{extra}"
        );
    }
    t
}

fn finished(out: &qcnsim_core::api::RunOutput) -> usize {
    i64s(table(out, "flows"), "fct_ps")
        .iter()
        .filter(|&&t| t >= 0)
        .count()
}

fn sum(out: &qcnsim_core::api::RunOutput, col: &str) -> i64 {
    i64s(table(out, "flows"), col).iter().sum()
}

#[test]
fn a_nic_never_drops_its_own_message() {
    let nic = run(INCAST, &[], None);
    assert_eq!(table(&nic, "flows").rows(), 16);
    // DCQCN did cut the rates (CNPs reached the sources), and nothing was dropped anywhere
    assert!(sum(&nic, "cnp_received") > 0);
    assert_eq!(sum(&nic, "rl_dropped_frames"), 0);
    assert_eq!(sum(&nic, "nic_dropped_frames"), 0);
    assert_eq!(sum(&nic, "dropped_frames"), 0);
    assert_eq!(finished(&nic), 16, "every message completes");
    // the same incast from traffic generators: frames dropped at the senders' rate limiters,
    // and flows that cannot complete
    let gen = run(INCAST, &["workloads.0.sender=\"generator\""], None);
    assert!(sum(&gen, "rl_dropped_frames") > 0);
    assert!(finished(&gen) < 16);
    // ... which the summary says, not only a NaN: every flow that lost frames is counted
    let lost = i64s(table(&gen, "flows"), "rl_dropped_frames")
        .iter()
        .filter(|&&d| d > 0)
        .count();
    assert_eq!(
        summary_value(&gen, "warning_unrecovered_loss", "at their senders"),
        Some(lost as f64)
    );
    assert_eq!(summary_value(&nic, "warning_unrecovered_loss", ""), None);
}

/// A PFC deadlock, detected or not, leaves frames stuck: the summary says so.
#[test]
fn frames_stuck_behind_pfc_are_reported() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/pfc-deadlock.toml"
    ))
    .unwrap();
    for (variant, found) in [
        ("meta.variant=\"deadlock\"", "found 1 cycle"),
        (
            "flow_control.deadlock_detection=\"off\"",
            "detection is off",
        ),
    ] {
        let out = run(&text, &[variant], None);
        let stuck = summary_value(&out, "warning_frames_stuck_behind_pause", found);
        assert!(stuck.is_some_and(|v| v > 0.0), "{variant}: {stuck:?}");
    }
}

#[test]
fn a_message_is_a_nic_by_default_and_holds_frames_its_egress_queue_cannot_take() {
    // two 200 KB messages at line rate into a 4 KB NIC buffer: a flow with a size is a NIC's
    // message by default and keeps them; as a traffic generator it loses frames at its NIC
    let text = a_to_b(
        "2ms",
        "nic_buffer = \"4KB\"\n",
        &[("m1", "200KB", ""), ("m2", "200KB", "")],
    );
    let nic = run(&text, &[], None);
    assert_eq!(sum(&nic, "nic_dropped_frames"), 0);
    assert_eq!(sum(&nic, "rl_dropped_frames"), 0);
    assert_eq!(sum(&nic, "rx_bytes"), 400_000);
    assert_eq!(finished(&nic), 2);
    let explicit = run(
        &text,
        &["flows.0.sender=\"nic\"", "flows.1.sender=\"nic\""],
        None,
    );
    assert_eq!(tables_text(&nic), tables_text(&explicit));
    let gen = run(
        &text,
        &[
            "flows.0.sender=\"generator\"",
            "flows.1.sender=\"generator\"",
        ],
        None,
    );
    assert!(sum(&gen, "nic_dropped_frames") > 0);
    assert!(finished(&gen) < 2);
    // an open-ended flow is a traffic generator by default: the same two flows without a size
    // lose frames at the NIC, as explicit generators do
    let open = text.replace("size = \"200KB\"\n", "");
    let open_gen = run(&open, &[], None);
    assert!(sum(&open_gen, "nic_dropped_frames") > 0);
    let explicit = run(
        &open,
        &[
            "flows.0.sender=\"generator\"",
            "flows.1.sender=\"generator\"",
        ],
        None,
    );
    assert_eq!(tables_text(&open_gen), tables_text(&explicit));
}

#[test]
fn a_waiting_sender_needs_room_for_one_frame() {
    let err = qcnsim_core::api::validate(INCAST, &["cc.dcqcn.rp.rl_queue=\"1000B\"".to_string()])
        .unwrap_err();
    assert_eq!(err.path, "cc.dcqcn.rp.rl_queue");
    assert!(err.allowed.contains("incast.0"), "{err}");
    let err = qcnsim_core::api::validate(INCAST, &["workloads.0.sender=\"tcp\"".to_string()])
        .unwrap_err();
    assert_eq!(err.path, "workloads.0.sender");
}

/// A NIC's waiting frames come out the same whether the source's frames are made lazily (the
/// default) or one event per frame (the test switch), and every frame is accounted for.
#[test]
fn a_waiting_nic_is_the_same_with_one_event_per_frame() {
    let ov = "[cc.dcqcn.rp]\nrl_queue = \"30KB\"\n";
    let text = format!("{INCAST}{ov}");
    let (lazy, live) = run_sim(&text, |_| {}, |s| s.live_data_frames());
    let (eager, _) = run_sim(&text, |s| s.set_lazy_generation(false), |_| ());
    assert!(tables_text(&lazy) == tables_text(&eager));
    let f = table(&lazy, "flows");
    let col = |c: &str| i64s(f, c).iter().sum::<i64>();
    assert_eq!(col("rl_dropped_frames") + col("nic_dropped_frames"), 0);
    assert_eq!(
        col("gen_frames"),
        col("rx_frames") + col("dropped_frames") + col("in_flight_frames")
    );
    assert_eq!(col("in_flight_frames"), live as i64);
}

/// docs/scenario.md, "Build your own fabric": what the page says to expect.
#[test]
fn the_docs_fabric_example_finishes_every_message() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/scenario.md"
    ))
    .unwrap();
    let at = doc.find("## Build your own fabric").expect("section");
    let start = at + doc[at..].find("```toml\n").expect("block") + "```toml\n".len();
    let text = &doc[start..start + doc[start..].find("```").unwrap()];
    let out = run(text, &[], None);
    let fct = table(&out, "fct");
    assert!(
        bools(fct, "finished").iter().all(|&d| d),
        "every message finishes"
    );
    let last = f64s(fct, "finish_ps").iter().cloned().fold(0.0, f64::max);
    assert!(last < 7e9, "{last}");
    let sl = f64s(fct, "slowdown");
    assert!(sl.iter().all(|&s| (15.0..40.0).contains(&s)), "{sl:?}");
    assert!(i64s(fct, "retransmitted_bytes").iter().sum::<i64>() > 10_000_000);
    // the same messages without go-back-N: unfinished, and the summary says so
    let udp = text.replace("transport = \"gbn\"", "transport = \"udp\"");
    let out = run(&udp, &[], None);
    assert!(bools(table(&out, "fct"), "finished").iter().all(|&d| !d));
    assert!(summary_value(&out, "warning_unrecovered_loss", "").is_some());
}

/// Two 2 MB messages at line rate share one 10 Gb/s NIC; a 50 KB message joins 1 ms later. In
/// one FIFO the small message waits behind the backlog the two built; a NIC serving its queue
/// pairs round-robin sends it at a third of the link at once, and holds one frame per flow.
#[test]
fn a_nic_serves_its_queue_pairs_round_robin() {
    let nic = "sender = \"nic\"\n";
    let text = a_to_b(
        "5ms",
        "",
        &[
            ("big1", "2MB", nic),
            ("big2", "2MB", nic),
            ("small", "50KB", "sender = \"nic\"\nstart = \"1ms\"\n"),
        ],
    );
    let fct = |o: &qcnsim_core::api::RunOutput| {
        let f = table(o, "fct");
        f64s(f, "fct_ps")[row_of(strs(f, "flow"), "small")]
    };
    let nic_queue = |o: &qcnsim_core::api::RunOutput| {
        let p = table(o, "ports");
        i64s(p, "max_qlen_bytes")[row_of(strs(p, "port"), "a->s")]
    };
    let rr = run(&text, &[], None);
    let fifo = run(&text, &["defaults.nic_scheduler=\"fifo\""], None);
    // round-robin: 50 KB at a third of 10 Gb/s is 120 us (+ the path)
    assert!(fct(&rr) < 150e6, "{}", fct(&rr));
    // FIFO: behind the 1 ms backlog of the two big messages (1.25 MB at 10 Gb/s: 1 ms)
    assert!(fct(&fifo) > 900e6, "{}", fct(&fifo));
    // one frame per queue pair in the NIC's queue, against the FIFO's backlog
    assert!(nic_queue(&rr) <= 3 * 1500, "{}", nic_queue(&rr));
    assert!(nic_queue(&fifo) > 1_000_000, "{}", nic_queue(&fifo));
    // every message completes either way, nothing lost
    for o in [&rr, &fifo] {
        assert!(bools(table(o, "fct"), "finished").iter().all(|&d| d));
    }
}

/// Hosts `a` and `c` to `b` through switch `s` (10 Gb/s, 1 us links): at `a` a generator (an
/// open-loop CBR source at line rate, no size) beside two `"nic"` messages of 10 MB; at `c`
/// (with `c_gen`) another line-rate generator to `b`.
fn generator_beside_nics(extra: &str, c_gen: bool) -> String {
    let mut t = format!(
        "[meta]\nduration = \"3ms\"\n[defaults]\nlink_delay = \"1us\"\n\
         [[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[hosts]]\nname = \"c\"\n\
         [[switches]]\nname = \"s\"\n\
         [[links]]\nbetween = [\"a\", \"s\"]\nrate = \"10Gbps\"\n\
         [[links]]\nbetween = [\"c\", \"s\"]\nrate = \"10Gbps\"\n\
         [[links]]\nbetween = [\"s\", \"b\"]\nrate = \"10Gbps\"\n\
         [[flows]]\nname = \"gen\"\nsrc = \"a\"\ndst = \"b\"\nrate = \"10Gbps\"\n\
         [[flows]]\nname = \"nic1\"\nsrc = \"a\"\ndst = \"b\"\nrate = \"10Gbps\"\nsize = \"10MB\"\nsender = \"nic\"\n\
         [[flows]]\nname = \"nic2\"\nsrc = \"a\"\ndst = \"b\"\nrate = \"10Gbps\"\nsize = \"10MB\"\nsender = \"nic\"\n{extra}"
    );
    if c_gen {
        t += "[[flows]]\nname = \"other\"\nsrc = \"c\"\ndst = \"b\"\nrate = \"10Gbps\"\n";
    }
    t
}

/// Bytes received per flow of `a` (gen, nic1, nic2).
fn shares(out: &qcnsim_core::api::RunOutput) -> [f64; 3] {
    let fl = table(out, "flows");
    let names = strs(fl, "flow");
    let rx = i64s(fl, "rx_bytes");
    ["gen", "nic1", "nic2"].map(|n| rx[row_of(names, n)] as f64)
}

#[test]
fn a_generator_joins_the_round_robin_of_a_nic_that_sends_messages() {
    let text = generator_beside_nics("", false);
    let rr = run(&text, &[], None);
    let s = shares(&rr);
    // 3 ms of a 10 Gb/s NIC shared by three queue pairs: about 1.25 MB each (minus the path)
    for x in s {
        assert!((x / 1.25e6 - 1.0).abs() < 0.02, "{s:?}");
    }
    // the generator's excess waits in its own send queue and overflows there: the NIC's
    // buffer never drops (a queue pair has one frame in the NIC's queue at a time)
    let fl = table(&rr, "flows");
    let k = row_of(strs(fl, "flow"), "gen");
    assert!(i64s(fl, "rl_dropped_frames")[k] > 0);
    assert_eq!(sum(&rr, "nic_dropped_frames"), 0);
    let p = table(&rr, "ports");
    assert!(i64s(p, "max_qlen_bytes")[row_of(strs(p, "port"), "a->s")] <= 3 * 1500);
    // FIFO: no shares (the messages, which wait at a full NIC queue where the generator's
    // frames are dropped, take most of the NIC)
    let fifo = run(&text, &["defaults.nic_scheduler=\"fifo\""], None);
    let f = shares(&fifo);
    assert!(f[1] > 2.0 * f[0], "{f:?}");
    // a NIC with generators only keeps one FIFO queue: the same tables with either scheduler
    let gens = text.replace("sender = \"nic\"\n", "sender = \"generator\"\n");
    assert_eq!(
        tables_text(&run(&gens, &[], None)),
        tables_text(&run(&gens, &["defaults.nic_scheduler=\"fifo\""], None))
    );
}

#[test]
fn round_robin_flows_resume_in_turn_after_pfc_pauses() {
    // a and c overload s->b twice over: PFC pauses a's NIC again and again; a's three queue
    // pairs keep their turns across the pauses and share what a gets equally
    let text = generator_beside_nics("[flow_control]\nmode = \"pfc\"\n", true);
    let out = run(&text, &[], None);
    let p = table(&out, "ports");
    let paused = i64s(p, "paused_ps")[row_of(strs(p, "port"), "a->s")];
    assert!(paused > 1_000_000_000, "a's NIC paused for {paused} ps");
    let s = shares(&out);
    let mean = s.iter().sum::<f64>() / 3.0;
    // a gets about half of 10 Gb/s for 3 ms (1.9 MB), a third each
    assert!(mean > 0.5e6 && mean < 0.75e6, "{s:?}");
    for x in s {
        assert!((x / mean - 1.0).abs() < 0.03, "{s:?}");
    }
    // lossless in the network, and the messages lose nothing at their NIC
    assert_eq!(sum(&out, "dropped_frames"), 0);
    let fl = table(&out, "flows");
    for n in ["nic1", "nic2"] {
        let k = row_of(strs(fl, "flow"), n);
        assert_eq!(i64s(fl, "rl_dropped_frames")[k], 0);
        assert_eq!(i64s(fl, "nic_dropped_frames")[k], 0);
    }
}
