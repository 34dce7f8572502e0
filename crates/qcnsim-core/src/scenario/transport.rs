//! `[transport]` and `flows.*.transport`: how a finite flow is delivered
//! (docs/models/transport.md). `udp` (the default) is open loop: frames lost are lost. `gbn` is
//! RoCE-style go-back-N (proto/gbn.rs); its timers and ACK pacing are the `[transport]` keys
//! defined in the parameter table (params.rs, `transport.*`).

use super::params::{self, TP};
use super::reader::{Res, TableReader};
use super::{FlowSpec, MAX_GBN_FRAMES};
use crate::proto::gbn::GbnParams;

/// A flow's transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Open loop: every frame is sent once.
    Udp,
    /// Go-back-N: the receiver acknowledges, a NACK or a timeout makes the sender resend from
    /// the first missing frame.
    Gbn,
}

/// `transport.ack_queue`: where ACKs and NACKs wait at the switches on their way back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckQueue {
    /// The strict-priority control queue, before every data frame (HPCC's ns-3 with
    /// `ACK_HIGH_PRIO 1`; an idealisation of the device).
    Control,
    /// The data queue of their flow's priority, behind its data frames (the default: a RoCE
    /// NIC's RC queue pair sends its ACKs in the QP's traffic class; HPCC's ns-3 with
    /// `ACK_HIGH_PRIO 0`).
    Data,
}

/// The scenario's go-back-N parameters.
#[derive(Debug, Clone)]
pub struct TransportSpec {
    pub gbn: GbnParams,
    /// ACK/NACK size on the wire, bytes.
    pub ack_bytes: u32,
    /// The delayed-ACK timer of an acknowledged congestion control's receiver (sim/cc/e2e.rs).
    pub ack_delay: crate::units::SimTime,
    /// Where ACKs and NACKs wait at the switches (`transport.ack_queue`).
    pub ack_queue: AckQueue,
}

impl TransportSpec {
    /// Before `[transport]` is read (the reader always reads it: its defaults are in params.rs).
    pub fn unset() -> TransportSpec {
        TransportSpec {
            gbn: GbnParams {
                rto: 0,
                ack_interval: 1,
                nack_interval: 0,
            },
            ack_bytes: 64,
            ack_delay: 0,
            ack_queue: AckQueue::Data,
        }
    }
}

/// `transport` of a `[[flows]]` or `[[workloads]]` entry: recorded in the resolved scenario only
/// when written (the default leaves existing scenarios' resolved form unchanged).
pub fn read_kind(t: &mut TableReader) -> Res<Transport> {
    match t.opt_str("transport")?.as_deref() {
        None | Some("udp") => Ok(Transport::Udp),
        Some("gbn") => Ok(Transport::Gbn),
        Some(s) => Err(t.err(
            "transport",
            format!("{s:?}"),
            "one of: udp (open loop), gbn (RoCE-style go-back-N)",
        )),
    }
}

/// A go-back-N flow must be a finite unicast flow of fewer than 2^31 frames.
pub fn check_flow(t: &TableReader, f: &FlowSpec) -> Res<()> {
    if f.transport != Transport::Gbn {
        return Ok(());
    }
    if f.group.is_some() {
        return Err(t.err(
            "transport",
            "\"gbn\"",
            "udp for a multicast flow (go-back-N is point to point)",
        ));
    }
    let Some(size) = f.size_bytes else {
        return Err(t.err(
            "transport",
            "\"gbn\" without size",
            "gbn with a finite flow (give size), or udp",
        ));
    };
    let frames = size.div_ceil(f.frame_bytes as u64);
    if frames >= MAX_GBN_FRAMES {
        return Err(t.err(
            "size",
            format!("\"{size}B\" ({frames} frames)"),
            format!(
                "a go-back-N flow of fewer than {MAX_GBN_FRAMES} frames (2^31; sequence numbers are 31 bits)"
            ),
        ));
    }
    Ok(())
}

/// Read `[transport]`.
pub fn parse(t: &mut TableReader) -> Res<TransportSpec> {
    let gbn = GbnParams {
        rto: params::read_time(t, params::spec(TP, "rto"))?,
        ack_interval: params::read_int(t, params::spec(TP, "ack_interval"))? as u32,
        nack_interval: params::read_time(t, params::spec(TP, "nack_interval"))?,
    };
    let ack_bytes = params::read_bytes(t, params::spec(TP, "ack_frame"))? as u32;
    let ack_delay = params::read_time(t, params::spec(TP, "ack_delay"))?;
    let ack_queue = match params::read_choice(t, params::spec(TP, "ack_queue"))?.as_str() {
        "data" => AckQueue::Data,
        _ => AckQueue::Control,
    };
    Ok(TransportSpec {
        gbn,
        ack_bytes,
        ack_delay,
        ack_queue,
    })
}
