//! IEEE 802.3x PAUSE and 802.1Qbb PFC: the sans-IO pieces. See docs/models/pause.md.
//!
//! - [`Watermark`]: XOFF/XON hysteresis on one occupancy (a switch's ingress port, egress queue
//!   or whole memory, per priority).
//! - [`PauseSender`]: the switch side of one (link, priority): which flow-control frame to send
//!   when a watermark above it crosses, and on refresh.
//! - [`PauseReceiver`]: the MAC-control side of one (egress port, priority) that receives the
//!   frames: the pause timer, XON, the response delay.
//! - [`quanta_to_ps`], [`response_quanta_8023`], [`headroom_bound`]: the numbers.
//!
//! The rules (IEEE 802.3 Annex 31B, IEEE 802.1Qbb; docs/models/pause.md):
//!
//! ```text
//! frames: PAUSE (opcode 0x0001) and PFC (0x0101) are 64 B; pause_time in quanta of 512 bit
//!         times at the link rate; 0 quanta = XON
//! sender (per link and priority), fed by every watermark that covers it:
//!     watermark occupancy > XOFF (was below)  -> demand += 1; 0 -> 1: send XOFF(quanta), arm refresh
//!     watermark occupancy < XON  (was above)  -> demand -= 1; 1 -> 0: send XON, cancel refresh
//!     refresh timer (refresh * pause time) while asserted -> send XOFF(quanta) again, re-arm
//!     xon_only: no refresh timer
//!     a frame still waiting to be sent carries the state at its transmission (coalescing)
//! receiver (per egress port and priority), acting on a frame `response` after its arrival:
//!     quanta > 0: until = arrival + quanta time (xon_only: until an XON); paused while now < until
//!     quanta = 0: resume now (XON cancels a pause at once)
//!     a frame in transmission always finishes; a paused priority blocks only itself
//! ```

use crate::units::{self, SimTime};

/// Size of a PAUSE or PFC frame (64 octets with the FCS).
pub const FRAME_BYTES: u32 = 64;
/// One pause quantum is 512 bit times (64 bytes' worth of transmission).
pub const QUANTUM_BYTES: u64 = 64;
/// The largest pause_time a frame can carry.
pub const MAX_QUANTA: u32 = 65535;
/// No deadline.
pub const NEVER: SimTime = SimTime::MAX;

/// The time `quanta` pause quanta last on a link of `rate_bps` (rounded up to a picosecond).
pub fn quanta_to_ps(quanta: u32, rate_bps: f64) -> SimTime {
    units::tx_time_f(quanta as u64 * QUANTUM_BYTES, rate_bps)
}

/// IEEE 802.3 31B.3.7: the longest time, in pause quanta, a MAC may take to stop transmitting
/// after a PAUSE frame has arrived, by link speed (as quoted in sonic-mgmt issue #6223).
pub const RESPONSE_QUANTA_8023: &[(f64, u32)] = &[
    (100e6, 1),
    (1e9, 2),
    (10e9, 67),
    (25e9, 80),
    (40e9, 118),
    (50e9, 147),
    (100e9, 394),
    (200e9, 453),
    (400e9, 905),
];

/// The 802.3 response quanta for a link of `rate_bps`: the entry of the fastest listed speed not
/// above the rate (1 quantum below 100 Mb/s).
pub fn response_quanta_8023(rate_bps: f64) -> u32 {
    RESPONSE_QUANTA_8023
        .iter()
        .rev()
        .find(|(r, _)| *r <= rate_bps)
        .map(|(_, q)| *q)
        .unwrap_or(1)
}

/// What the headroom above XOFF must absorb on one link (upstream sender -> this switch).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkHeadroom {
    /// Link rate, bit/s.
    pub rate_bps: f64,
    /// The lowest rate at which the switch's port back to the sender serialises (the link rate,
    /// or less while a `[[schedule]]` entry shapes that port), bit/s: the PAUSE and the frame it
    /// waits for are sent at that rate while the sender keeps sending at `rate_bps`.
    pub reverse_rate_bps: f64,
    /// One-way propagation delay including any extra delay line, ps.
    pub prop_ps: SimTime,
    /// The switch's forwarding latency (frames are counted when they reach the egress queue).
    pub latency_ps: SimTime,
    /// The upstream sender's response delay, ps.
    pub response_ps: SimTime,
    /// Largest frame the upstream sender sends on this link, bytes.
    pub sender_max_frame: u32,
    /// Largest frame the switch sends back on the reverse direction (the PAUSE frame waits for
    /// it to finish), bytes.
    pub reverse_max_frame: u32,
    /// Flow-control frames of other priorities that may be queued ahead of this one (PFC:
    /// lossless priorities - 1; PAUSE: 0).
    pub other_fc_frames: u32,
    /// Wire overhead of every frame on the link (preamble + IFG), bytes: it lengthens the
    /// reverse frame and the flow-control frames the PAUSE waits for.
    pub overhead_bytes: u32,
}

/// Bytes that can still reach the switch's queues from one link after a watermark crossed XOFF
/// (the headroom terms of IEEE 802.1Qbb Annex N as vendors' headroom guides list them:
/// D-MaxFrame + D-Pause + 2 x cable + D-Resp + a maximum frame from the peer):
///
/// ```text
/// ( reverse_max_frame          the PAUSE waits for the frame in progress on the reverse link
/// + 64 * (1 + other_fc_frames) the PAUSE frame itself (and PFC frames queued ahead of it)
/// + overhead * (2 + other_fc_frames)
///                              their preambles and inter-frame gaps (0 without overhead)
/// ) * rate / reverse_rate      sent at the reverse port's (possibly shaped) rate while the
///                              sender sends at the link rate
/// + rate * (2 * prop + latency + response) / 8
///                              in flight towards the switch while the PAUSE travels, the
///                              sender's response time, and the switch's forwarding latency
/// + sender_max_frame           the frame the sender had started when it stopped
/// ```
///
/// The occupancy that crossed XOFF may itself exceed XOFF by up to one frame (the frame whose
/// arrival made it cross); [`headroom_bound`] does not include that frame.
pub fn headroom_bound(h: &LinkHeadroom) -> u64 {
    let t = 2 * h.prop_ps + h.latency_ps + h.response_ps;
    let flight = (h.rate_bps * t as f64 / 8.0 / units::SEC as f64).ceil() as u64;
    let reverse = h.reverse_max_frame as u64
        + FRAME_BYTES as u64 * (1 + h.other_fc_frames as u64)
        + h.overhead_bytes as u64 * (2 + h.other_fc_frames as u64);
    let reverse = if h.reverse_rate_bps < h.rate_bps {
        (reverse as f64 * h.rate_bps / h.reverse_rate_bps).ceil() as u64
    } else {
        reverse
    };
    reverse + flight + h.sender_max_frame as u64
}

/// A crossing of a watermark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crossing {
    None,
    /// The occupancy rose above XOFF.
    Xoff,
    /// The occupancy fell below XON.
    Xon,
}

/// XOFF/XON hysteresis: above once the occupancy exceeds `xoff`, below again once it falls
/// under `xon` (`xon < xoff`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watermark {
    pub xoff: u64,
    pub xon: u64,
    above: bool,
}

impl Watermark {
    pub fn new(xoff: u64, xon: u64) -> Watermark {
        debug_assert!(xon < xoff);
        Watermark {
            xoff,
            xon,
            above: false,
        }
    }

    pub fn is_above(&self) -> bool {
        self.above
    }

    /// The occupancy is now `occ`.
    #[inline]
    pub fn update(&mut self, occ: u64) -> Crossing {
        if !self.above && occ > self.xoff {
            self.above = true;
            Crossing::Xoff
        } else if self.above && occ < self.xon {
            self.above = false;
            Crossing::Xon
        } else {
            Crossing::None
        }
    }
}

/// What the sender must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendCmd {
    Nothing,
    /// Queue a flow-control frame (it carries the state at its transmission, see
    /// [`PauseSender::quanta`]) and (re)arm the refresh timer, unless xon_only.
    Xoff,
    /// Queue a flow-control frame (XON) and cancel the refresh timer.
    Xon,
}

/// The switch side of one (link, priority): how many watermarks currently want the upstream
/// paused, and whether it is asserted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PauseSender {
    demand: u32,
}

impl PauseSender {
    /// Whether the upstream should be paused (some watermark covering it is above XOFF).
    pub fn is_asserted(&self) -> bool {
        self.demand > 0
    }

    pub fn demand(&self) -> u32 {
        self.demand
    }

    /// A watermark covering this link rose above XOFF.
    pub fn raise(&mut self) -> SendCmd {
        self.demand += 1;
        if self.demand == 1 {
            SendCmd::Xoff
        } else {
            SendCmd::Nothing
        }
    }

    /// A watermark covering this link fell below XON.
    pub fn lower(&mut self) -> SendCmd {
        debug_assert!(self.demand > 0);
        self.demand = self.demand.saturating_sub(1);
        if self.demand == 0 {
            SendCmd::Xon
        } else {
            SendCmd::Nothing
        }
    }

    /// The refresh timer fired.
    pub fn on_refresh(&self) -> SendCmd {
        if self.is_asserted() {
            SendCmd::Xoff
        } else {
            SendCmd::Nothing
        }
    }

    /// pause_time of a frame for this link transmitted now: `pause_quanta` while asserted,
    /// else 0 (XON).
    pub fn quanta(&self, pause_quanta: u32) -> u32 {
        if self.is_asserted() {
            pause_quanta
        } else {
            0
        }
    }
}

/// A change of a receiver's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxChange {
    None,
    /// Transmission (of this priority) stops from now on.
    Paused,
    /// Already paused: the pause now lasts until the new deadline.
    Extended,
    /// Transmission resumes now after having been paused this long.
    Resumed {
        paused_for: SimTime,
    },
}

/// What to do with the receiver's expiry timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpiryCmd {
    Keep,
    Arm(SimTime),
    Cancel,
}

/// The MAC-control receiver of one (egress port, priority).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PauseReceiver {
    paused: bool,
    since: SimTime,
    until: SimTime,
}

impl PauseReceiver {
    #[inline]
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Start of the current pause.
    pub fn since(&self) -> SimTime {
        self.since
    }

    /// End of the current pause ([`NEVER`]: until an XON).
    pub fn until(&self) -> SimTime {
        self.until
    }

    /// Act at `now` on a frame that arrived at `arrival` (`now - arrival` is the response
    /// delay) carrying a pause of `pause_ps` (0 = XON). `xon_only`: the time is ignored and a
    /// non-zero frame pauses until an XON.
    pub fn on_frame(
        &mut self,
        now: SimTime,
        arrival: SimTime,
        pause_ps: SimTime,
        xon_only: bool,
    ) -> (RxChange, ExpiryCmd) {
        debug_assert!(arrival <= now);
        if pause_ps == 0 {
            return match self.resume(now) {
                RxChange::None => (RxChange::None, ExpiryCmd::Keep),
                r => (r, ExpiryCmd::Cancel),
            };
        }
        // The pause timer runs from the arrival; the response delay only lets frames that
        // start before `now` go out.
        let until = if xon_only {
            NEVER
        } else {
            arrival.saturating_add(pause_ps)
        };
        if until <= now {
            // expired before the receiver acted on it (response delay >= pause time): it
            // reloads an expired timer, which ends a running pause
            self.until = until;
            return match self.resume(now) {
                RxChange::None => (RxChange::None, ExpiryCmd::Keep),
                r => (r, ExpiryCmd::Cancel),
            };
        }
        self.until = until;
        let change = if self.paused {
            RxChange::Extended
        } else {
            self.paused = true;
            self.since = now;
            RxChange::Paused
        };
        let cmd = if until == NEVER {
            ExpiryCmd::Cancel
        } else {
            ExpiryCmd::Arm(until)
        };
        (change, cmd)
    }

    /// The expiry timer fired at `now`.
    pub fn on_expiry(&mut self, now: SimTime) -> RxChange {
        if self.paused && now >= self.until {
            self.resume(now)
        } else {
            RxChange::None
        }
    }

    /// A PFC watchdog ends the pause at `now` whatever its timer (proto/deadlock.rs).
    pub fn force_resume(&mut self, now: SimTime) -> RxChange {
        self.resume(now)
    }

    fn resume(&mut self, now: SimTime) -> RxChange {
        if !self.paused {
            return RxChange::None;
        }
        self.paused = false;
        self.until = now;
        RxChange::Resumed {
            paused_for: now - self.since,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{NS, US};

    #[test]
    fn quanta_are_512_bit_times_at_the_link_rate() {
        // (quanta, rate, ps)
        #[rustfmt::skip]
        let cases: &[(u32, f64, SimTime)] = &[
            (1, 10e9, 51_200),                    // 51.2 ns at 10 GbE
            (1, 100e9, 5_120),                    // 5.12 ns at 100 GbE
            (1, 1e9, 512_000),
            (65535, 10e9, 3_355_392_000),         // ~3.355 ms, the longest pause at 10 GbE
            (65535, 100e9, 335_539_200),          // ~0.335 ms at 100 GbE
            (0, 10e9, 0),
            (3, 9.5e9, 161_685),                  // rounded up: 1536 bits / 9.5 Gb/s = 161684.2 ps
        ];
        for (q, rate, want) in cases {
            assert_eq!(quanta_to_ps(*q, *rate), *want, "{q} quanta at {rate}");
        }
    }

    #[test]
    fn response_delay_follows_the_8023_table() {
        // (rate, quanta, time)
        #[rustfmt::skip]
        let cases: &[(f64, u32)] = &[
            (10e6, 1), (100e6, 1), (1e9, 2), (2.5e9, 2), (10e9, 67), (25e9, 80), (40e9, 118),
            (50e9, 147), (100e9, 394), (200e9, 453), (400e9, 905), (800e9, 905),
        ];
        for (rate, q) in cases {
            assert_eq!(response_quanta_8023(*rate), *q, "rate {rate}");
        }
        // 67 quanta at 10 GbE: 3.4304 us
        assert_eq!(quanta_to_ps(response_quanta_8023(10e9), 10e9), 3_430_400);
    }

    #[test]
    fn headroom_bound_adds_frames_flight_and_response() {
        let base = LinkHeadroom {
            rate_bps: 10e9,
            reverse_rate_bps: 10e9,
            prop_ps: 500 * NS,
            latency_ps: 300 * NS,
            response_ps: 3_430_400,
            sender_max_frame: 1500,
            reverse_max_frame: 64,
            other_fc_frames: 0,
            overhead_bytes: 0,
        };
        // (name, inputs, bytes)
        #[rustfmt::skip]
        let cases: &[(&str, LinkHeadroom, u64)] = &[
            // 10 Gb/s * (1 us + 0.3 us + 3.4304 us) = 5913 B; + 64 + 64 + 1500
            ("hw-4rp link", base, 64 + 64 + 5913 + 1500),
            ("reverse data frames", LinkHeadroom { reverse_max_frame: 1500, ..base }, 1500 + 64 + 5913 + 1500),
            ("7 PFC frames ahead", LinkHeadroom { other_fc_frames: 7, ..base }, 64 + 8 * 64 + 5913 + 1500),
            ("no delays at all", LinkHeadroom { prop_ps: 0, latency_ps: 0, response_ps: 0, ..base }, 64 + 64 + 1500),
            // 100 us delay line each way: 2 * 125000 B in flight
            ("delay line", LinkHeadroom { prop_ps: 100 * US + 500 * NS, ..base }, 64 + 64 + 255_913 + 1500),
            // 100 GbE, 100 m cable (0.5 us), 394 quanta response = 201728 bit = 25216 B:
            // the simpler form MTU_S + MTU_R + 2 rate prop + response (vendor PFC guidance) + 64
            ("100G", LinkHeadroom { rate_bps: 100e9, reverse_rate_bps: 100e9, prop_ps: 500 * NS, latency_ps: 0,
                response_ps: quanta_to_ps(394, 100e9), sender_max_frame: 1500, reverse_max_frame: 1500,
                other_fc_frames: 0, overhead_bytes: 0 }, 1500 + 64 + 12_500 + 25_216 + 1500),
            // Ethernet preamble + IFG (20 B) on the reverse frame and the PAUSE frame
            ("wire overhead", LinkHeadroom { overhead_bytes: 20, ..base }, 64 + 64 + 2 * 20 + 5913 + 1500),
            ("wire overhead, 7 PFC frames ahead", LinkHeadroom { overhead_bytes: 20, other_fc_frames: 7, ..base },
                64 + 8 * 64 + 9 * 20 + 5913 + 1500),
            // reverse port shaped to 1 Gb/s: its frame and the PAUSE take 10x as long, during
            // which the sender sends 10x their bytes: (1500 + 64) * 10
            ("reverse port shaped to 1/10", LinkHeadroom { reverse_rate_bps: 1e9, reverse_max_frame: 1500, ..base },
                15_640 + 5913 + 1500),
            // a faster reverse rate never shortens the bound below the unshaped one
            ("reverse faster than the link", LinkHeadroom { reverse_rate_bps: 40e9, ..base }, 64 + 64 + 5913 + 1500),
        ];
        for (name, h, want) in cases {
            assert_eq!(headroom_bound(h), *want, "{name}");
        }
    }

    #[test]
    fn watermark_hysteresis() {
        // a sequence of occupancies and the crossings expected (xoff 130, xon 110)
        #[rustfmt::skip]
        let seq: &[(u64, Crossing)] = &[
            (100, Crossing::None),
            (130, Crossing::None),   // not above XOFF yet: "exceeds"
            (131, Crossing::Xoff),
            (200, Crossing::None),
            (120, Crossing::None),   // between: stays above
            (110, Crossing::None),   // not below XON yet
            (109, Crossing::Xon),
            (120, Crossing::None),   // between: stays below
            (131, Crossing::Xoff),
            (0, Crossing::Xon),
        ];
        let mut w = Watermark::new(130, 110);
        let mut above = false;
        for (i, (occ, want)) in seq.iter().enumerate() {
            assert_eq!(w.update(*occ), *want, "step {i}: occupancy {occ}");
            match want {
                Crossing::Xoff => above = true,
                Crossing::Xon => above = false,
                Crossing::None => {}
            }
            assert_eq!(w.is_above(), above, "step {i}");
        }
    }

    #[test]
    fn sender_counts_the_watermarks_that_want_the_link_paused() {
        #[derive(Clone, Copy, Debug)]
        enum Op {
            Raise,
            Lower,
            Refresh,
        }
        // (op, command, asserted after, quanta of a frame sent now with pause_quanta 1000)
        #[rustfmt::skip]
        let seq: &[(Op, SendCmd, bool, u32)] = &[
            (Op::Refresh, SendCmd::Nothing, false, 0),  // nothing asserted: no refresh
            (Op::Raise, SendCmd::Xoff, true, 1000),     // 0 -> 1: XOFF
            (Op::Refresh, SendCmd::Xoff, true, 1000),   // refresh while asserted
            (Op::Raise, SendCmd::Nothing, true, 1000),  // second watermark (e.g. two egress queues)
            (Op::Lower, SendCmd::Nothing, true, 1000),  // one still wants it paused
            (Op::Refresh, SendCmd::Xoff, true, 1000),
            (Op::Lower, SendCmd::Xon, false, 0),        // 1 -> 0: XON
            (Op::Refresh, SendCmd::Nothing, false, 0),  // a stale refresh sends nothing
        ];
        let mut s = PauseSender::default();
        for (i, (op, cmd, asserted, q)) in seq.iter().enumerate() {
            let got = match op {
                Op::Raise => s.raise(),
                Op::Lower => s.lower(),
                Op::Refresh => s.on_refresh(),
            };
            assert_eq!(got, *cmd, "step {i} {op:?}");
            assert_eq!(s.is_asserted(), *asserted, "step {i}");
            assert_eq!(s.quanta(1000), *q, "step {i}");
        }
    }

    /// One frame or expiry for the receiver.
    #[derive(Clone, Copy, Debug)]
    enum Rx {
        /// (arrival, response delay, pause time)
        Frame(SimTime, SimTime, SimTime),
        Expiry(SimTime),
    }

    fn drive(rx: &mut PauseReceiver, input: Rx, xon_only: bool) -> (RxChange, ExpiryCmd) {
        match input {
            Rx::Frame(a, d, p) => rx.on_frame(a + d, a, p, xon_only),
            Rx::Expiry(t) => (rx.on_expiry(t), ExpiryCmd::Keep),
        }
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn receiver_rules() {
        const P: SimTime = 100 * US;
        const D: SimTime = 3 * US;
        use ExpiryCmd::*;
        use RxChange::*;
        // (name, inputs with the expected change and timer command, paused after, until after)
        #[rustfmt::skip]
        let cases: &[(&str, bool, &[(Rx, RxChange, ExpiryCmd)], bool, SimTime)] = &[
            ("pause: timer from the arrival, acted on after the response delay", false,
                &[(Rx::Frame(0, D, P), Paused, Arm(P))], true, P),
            ("expires at arrival + pause time", false,
                &[(Rx::Frame(0, D, P), Paused, Arm(P)), (Rx::Expiry(P), Resumed { paused_for: P - D }, Keep)], false, P),
            ("an early expiry event does nothing", false,
                &[(Rx::Frame(0, D, P), Paused, Arm(P)), (Rx::Expiry(P - 1), None, Keep)], true, P),
            ("XON cancels at once", false,
                &[(Rx::Frame(0, D, P), Paused, Arm(P)), (Rx::Frame(10 * US, 0, 0), Resumed { paused_for: 7 * US }, Cancel)], false, 10 * US),
            ("XON when not paused does nothing", false,
                &[(Rx::Frame(0, D, 0), None, Keep)], false, 0),
            ("refresh before expiry extends", false,
                &[(Rx::Frame(0, D, P), Paused, Arm(P)), (Rx::Frame(50 * US, D, P), Extended, Arm(50 * US + P))], true, 50 * US + P),
            ("a shorter pause shortens the running one (timer reloaded)", false,
                &[(Rx::Frame(0, D, P), Paused, Arm(P)), (Rx::Frame(10 * US, D, 20 * US), Extended, Arm(30 * US))], true, 30 * US),
            ("pause shorter than the response delay has no effect", false,
                &[(Rx::Frame(0, D, 2 * US), None, Keep)], false, 2 * US),
            ("an already expired reload ends a running pause", false,
                &[(Rx::Frame(0, D, P), Paused, Arm(P)), (Rx::Frame(10 * US, D, US), Resumed { paused_for: 10 * US }, Cancel)], false, 13 * US),
            ("after an expiry a new pause starts a new episode", false,
                &[(Rx::Frame(0, D, P), Paused, Arm(P)), (Rx::Expiry(P), Resumed { paused_for: P - D }, Keep),
                  (Rx::Frame(2 * P, D, P), Paused, Arm(3 * P))], true, 3 * P),
            ("xon_only: the time is ignored", true,
                &[(Rx::Frame(0, D, P), Paused, Cancel), (Rx::Expiry(10 * P), None, Keep)], true, NEVER),
            ("xon_only: tiny pause still pauses", true,
                &[(Rx::Frame(0, D, 1), Paused, Cancel)], true, NEVER),
            ("xon_only: XON resumes", true,
                &[(Rx::Frame(0, D, P), Paused, Cancel), (Rx::Frame(P, D, 0), Resumed { paused_for: P }, Cancel)], false, P + D),
        ];
        for (name, xon_only, steps, paused, until) in cases {
            let mut rx = PauseReceiver::default();
            for (i, (input, change, cmd)) in steps.iter().enumerate() {
                assert_eq!(
                    drive(&mut rx, *input, *xon_only),
                    (*change, *cmd),
                    "{name}: step {i}"
                );
            }
            assert_eq!(rx.is_paused(), *paused, "{name}: paused");
            assert_eq!(rx.until(), *until, "{name}: until");
        }
    }

    #[test]
    fn force_resume_ends_any_pause_at_once() {
        // (pause first?, xon_only, force at, change)
        #[rustfmt::skip]
        let cases: &[(bool, bool, SimTime, RxChange)] = &[
            (true, false, 50 * US, RxChange::Resumed { paused_for: 45 * US }),
            (true, true, 50 * US, RxChange::Resumed { paused_for: 45 * US }),
            (false, false, 50 * US, RxChange::None),
        ];
        for (k, (pause, xon_only, at, want)) in cases.iter().enumerate() {
            let mut rx = PauseReceiver::default();
            if *pause {
                rx.on_frame(5 * US, 2 * US, 100 * US, *xon_only);
            }
            assert_eq!(rx.force_resume(*at), *want, "case {k}");
            assert!(!rx.is_paused(), "case {k}");
        }
    }

    #[test]
    fn receiver_since_is_when_the_pause_took_effect() {
        let mut rx = PauseReceiver::default();
        rx.on_frame(5 * US, 2 * US, 100 * US, false);
        assert_eq!(rx.since(), 5 * US);
        rx.on_frame(60 * US, 57 * US, 100 * US, false);
        assert_eq!(rx.since(), 5 * US, "a refresh continues the episode");
    }
}
