//! The INT stamp of HPCC's switch egress ports as the simulator writes it (docs/models/hpcc.md,
//! "The packet model"): a test that runs a `Sim` and reads congestion management's per-frame
//! telemetry store (a top file: it may know every room).

use crate::proto::ack::IntHop;
use crate::sim::{cc, Sim};
use crate::units::{tx_time_f, US};

/// One flow of 1500 B in frames of 1000 B: two data frames of 1000 and 500 B (+ 42 B of INT
/// each) through one switch egress port (sw->r). The records stamped at sw->r: `qlen` without the frame, `tx_bytes` the port's bytes
/// with the frame, `ts` the start of the frame's transmission there, the port's rate.
#[test]
fn the_stamp_counts_the_frame_in_tx_bytes_and_not_in_qlen() {
    let sc = crate::scenario::load(cc::hpcc::tests::TWO_FRAMES, &[]).unwrap();
    let mut sim = Sim::new(&sc, 1);
    sim.run(&mut |_| true).unwrap();
    let mut recs: Vec<IntHop> = (0..64)
        .flat_map(|s| sim.cm.e2e.int_at(s).to_vec())
        .collect();
    recs.sort_by_key(|r| r.ts);
    recs.dedup();
    // 1042 B and 542 B on the wire; the first starts at the switch when it has arrived
    // (1042 B at 100 Gb/s plus 1 us); the second arrives while the first is sent there and
    // waits alone (its queue, without it, is empty), then starts when the first has left
    let t1 = tx_time_f(1042, 1e11) + US;
    let want = [
        IntHop {
            qlen: 0,
            tx_bytes: 1042,
            ts: t1,
            rate_bps: 100_000_000_000,
        },
        IntHop {
            qlen: 0,
            tx_bytes: 1042 + 542,
            ts: t1 + tx_time_f(1042, 1e11),
            rate_bps: 100_000_000_000,
        },
    ];
    assert_eq!(recs, want);
}
