//! What a per-packet acknowledgement tells an end-to-end congestion-control sender (HPCC, TIMELY,
//! DCTCP, Swift), and what the sender answers. The algorithms' rules (`proto/dctcp.rs`,
//! `proto/hpcc.rs`, `proto/timely.rs`, `proto/swift.rs`) take an [`Ack`] and return a
//! [`Control`]; the simulator's transport fills the [`Ack`] (sim/cc/) and applies the
//! [`Control`] to the flow's window and rate limiter. Nothing here reads a clock.
//!
//! Units: times in picoseconds ([`SimTime`]), sizes in bytes, rates in bit/s.

use crate::units::SimTime;

/// The most switch hops whose telemetry one acknowledgement carries (a three-tier fat-tree path
/// has 5 switch hops). A path longer than this is refused for algorithms that read telemetry.
pub const MAX_INT_HOPS: usize = 8;

/// One hop's in-band network telemetry, stamped by a switch egress port as the data frame leaves
/// it (HPCC §3.2, Figure 4: `qLen`, `txBytes`, `ts`, `B`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IntHop {
    /// The egress queue's length in bytes when the frame left (the frame itself not counted).
    pub qlen: u64,
    /// Bytes the egress port had transmitted when the frame left (cumulative, frame included).
    pub tx_bytes: u64,
    /// When the frame left the port.
    pub ts: SimTime,
    /// The port's link rate, bit/s.
    pub rate_bps: u64,
}

/// One acknowledgement as its sender sees it when it arrives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ack {
    /// When the acknowledgement reached the sender.
    pub now: SimTime,
    /// The next sequence number (frame index) the receiver expects: everything below it has
    /// arrived (cumulative).
    pub next_expected: u32,
    /// Bytes this acknowledgement newly acknowledges (0 for a duplicate).
    pub acked_bytes: u32,
    /// Data frames this acknowledgement covers (1 per packet; more with delayed ACKs).
    pub acked_frames: u32,
    /// ECN echo: how many of the covered data frames arrived with Congestion Experienced.
    pub ce_frames: u32,
    /// When the acknowledged data frame (the newest one covered) left its sender's NIC
    /// (the timestamp echo): the RTT sample is `now - sent_at`.
    pub sent_at: SimTime,
    /// Switch hops the acknowledged data frame crossed.
    pub hops: u8,
    /// How many records of `int` are filled (0 when no switch stamps telemetry).
    pub n_int: u8,
    /// The data frame's telemetry, first hop first.
    pub int: [IntHop; MAX_INT_HOPS],
}

impl Ack {
    /// An acknowledgement with no telemetry and no CE mark (fields set by the caller after).
    pub fn plain(now: SimTime, next_expected: u32, acked_bytes: u32, sent_at: SimTime) -> Ack {
        Ack {
            now,
            next_expected,
            acked_bytes,
            acked_frames: 1,
            ce_frames: 0,
            sent_at,
            hops: 0,
            n_int: 0,
            int: [IntHop::default(); MAX_INT_HOPS],
        }
    }

    /// The RTT sample this acknowledgement gives.
    pub fn rtt(&self) -> SimTime {
        self.now.saturating_sub(self.sent_at)
    }

    /// The telemetry records that are filled.
    pub fn int_records(&self) -> &[IntHop] {
        &self.int[..self.n_int as usize]
    }
}

/// A window of [`Control::window_bytes`] that does not limit the sender (a rate-only algorithm
/// such as TIMELY).
pub const NO_WINDOW: u64 = u64::MAX;

/// What the sender's algorithm sets after an event: the window (bytes in flight allowed) and the
/// pacing rate of its rate limiter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Control {
    /// Bytes the flow may have sent and not had acknowledged ([`NO_WINDOW`]: no limit).
    pub window_bytes: u64,
    /// The rate limiter's rate, bit/s (the line rate when the algorithm does not pace).
    pub rate_bps: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    #[test]
    fn rtt_is_arrival_minus_send_time_and_never_negative() {
        let a = Ack::plain(12 * US, 3, 1000, 2 * US);
        assert_eq!(a.rtt(), 10 * US);
        let b = Ack::plain(US, 3, 1000, 2 * US);
        assert_eq!(b.rtt(), 0);
    }

    #[test]
    fn int_records_are_the_filled_prefix() {
        let mut a = Ack::plain(0, 0, 0, 0);
        assert!(a.int_records().is_empty());
        a.int[0].qlen = 5;
        a.int[1].qlen = 7;
        a.n_int = 2;
        let q: Vec<u64> = a.int_records().iter().map(|h| h.qlen).collect();
        assert_eq!(q, vec![5, 7]);
    }
}
