//! The source NIC's egress port: an idle port with nothing queued sends a new frame straight to
//! the wire (`send_direct`, docs/performance.md) only when its buffer could hold the frame, so
//! a NIC buffer smaller than a frame drops every frame, one of exactly a frame sends them all,
//! with or without a rate limiter in front of it.

mod common;
use common::*;

/// One CBR flow of `frame`-byte frames at 5 Gb/s from `a` through one switch to `b`, the
/// source NIC's buffer `nic_buffer`, QCN on or off.
fn text(nic_buffer: &str, frame: u32, qcn: bool) -> String {
    format!(
        "[meta]\nduration = \"200us\"\n\
         [defaults]\nlink_rate = \"10Gbps\"\nlink_delay = \"1us\"\nbuffer = \"300KB\"\n\
         nic_buffer = \"{nic_buffer}\"\n\
         [cc]\nmode = \"{}\"\n\
         [[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[switches]]\nname = \"s\"\n\
         [[links]]\nbetween = [\"a\", \"s\"]\n[[links]]\nbetween = [\"s\", \"b\"]\n\
         [[flows]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\nrate = \"5Gbps\"\nframe = \"{frame}B\"\n",
        if qcn { "qcn" } else { "none" }
    )
}

#[test]
fn a_frame_goes_to_the_wire_only_if_the_nic_buffer_could_hold_it() {
    // (nic_buffer, frame bytes, every frame dropped at the NIC)
    let cases: &[(&str, u32, bool)] = &[
        ("1499B", 1500, true),
        ("1500B", 1500, false),
        ("63B", 64, true),
        ("64B", 64, false),
        ("65B", 64, false),
        ("1frames", 1500, false),
        ("100frames", 9000, false),
        ("infinite", 1500, false),
    ];
    for &(buf, frame, all_dropped) in cases {
        for qcn in [false, true] {
            let t = text(buf, frame, qcn);
            let out = run(&t, &[], None);
            let flows = table(&out, "flows");
            let sent = i64s(flows, "tx_frames")[0];
            let nic = i64s(flows, "nic_dropped_frames")[0];
            let rx = i64s(flows, "rx_frames")[0];
            let what = format!("nic_buffer {buf}, {frame} B frames, qcn {qcn}");
            // at 5 Gb/s for 200 µs: dozens of frames, whatever the size
            assert!(sent >= 13, "{what}: only {sent} frames handed to the NIC");
            if all_dropped {
                assert_eq!((nic, rx), (sent, 0), "{what}");
            } else {
                // the NIC is idle at every frame (5 Gb/s on a 10 Gb/s link): none waits, none
                // is lost, and all but those still on the wires at the end arrive
                let net = i64s(flows, "dropped_frames")[0];
                assert_eq!((nic, net), (0, 0), "{what}");
                assert!(
                    rx > 0 && rx >= sent * 4 / 5,
                    "{what}: {rx} of {sent} received"
                );
            }
        }
    }
}
