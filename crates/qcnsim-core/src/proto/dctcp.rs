//! DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; docs/models/dctcp.md): the
//! switch's marking rule, the receiver's ECN echo and the sender's window, sans-IO. The sender
//! reads the generic acknowledgement of [`crate::proto::ack`] and answers a
//! [`crate::proto::ack::Control`] (a window; DCTCP does not pace).
//!
//! **Switch** (§3.1, "Simple Marking at the Switch"): an arriving packet is marked with the CE
//! codepoint "if the queue occupancy is greater than K upon its arrival":
//!
//! ```text
//! q > K:   mark CE          (q: the egress queue the packet joins, counted without it by
//! q <= K:  leave it            default; in packets or in bytes as K is given)
//! ```
//!
//! **Receiver** (§3.1, "ECN-Echo at the Receiver", Figure 10): with per-packet ACKs every ACK
//! echoes its packet's CE bit. With delayed ACKs (one ACK per m packets) the receiver keeps one
//! bit of state, the CE bit of the last packet, and
//!
//! ```text
//! a packet arrives with CE = s, the state is s:     count it; every m packets, ACK with ECE = s
//! a packet arrives with CE = s, the state is not s: ACK the packets not yet acknowledged at
//!                                                   once with ECE = the old state; state <- s;
//!                                                   count the packet
//! ```
//!
//! so every ACK covers packets of one CE state and the sender can count the marked bytes exactly
//! ([`Echo::StateMachine`]). [`Echo::Count`] instead carries the number of CE packets an ACK
//! covers (no extra ACK; an accurate-ECN reading).
//!
//! **Sender** (§3.1, "Controller at the Sender"; the update points are RFC 8257 §3.3's, which
//! documents DCTCP as implemented): `F` is the fraction of the bytes acknowledged in the last
//! window of data that were marked, and once per window of data
//!
//! ```text
//! (1)  α <- (1 - g) α + g F
//! ```
//!
//! and on an ACK carrying ECN-Echo, at most once per window of data,
//!
//! ```text
//! (2)  cwnd <- cwnd (1 - α/2)
//! ```
//!
//! (the paper: "DCTCP ... reduces its window ... cwnd <- cwnd × (1 - α/2)"). Otherwise the window
//! grows as TCP's (RFC 5681): by the bytes acknowledged while `cwnd < ssthresh` (slow start,
//! [`DctcpParams::slow_start`]), else by `MSS · acked / cwnd` (one MSS per window of data:
//! congestion avoidance). It does not grow on an ACK that carries ECN-Echo, nor before the
//! window of data sent before a cut is acknowledged (the congestion-window-reduced state of
//! RFC 3168 §6.1.2, as Linux keeps it). A loss signal of the transport (a NACK: go-back-N's
//! fast retransmit) halves the window at most once per window; a timeout sets it to the least
//! window (RFC 5681 §3.1 and §5; `ssthresh <- cwnd/2` for both). Every update ends with `cwnd`
//! clamped into `[min_window, max_window]`.
//!
//! Windows are kept in bytes (`f64`, the equations' real values); the window the transport
//! enforces is the whole number of MSS below `cwnd` ([`Sender::window_bytes`]), which with the
//! transport's rule "send while the bytes in flight are below the window" lets exactly
//! `floor(cwnd / MSS)` packets be in flight, as a TCP with an integer window in packets.

use crate::proto::ack::{Ack, Control};

/// How the receiver echoes CE marks (`cc.dctcp.echo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Echo {
    /// The paper's Figure 10: one ECN-Echo bit per ACK; an ACK at once when the CE state of the
    /// arriving packets changes.
    StateMachine,
    /// Each ACK carries how many of the packets it covers were marked.
    Count,
}

impl Echo {
    pub fn name(self) -> &'static str {
        match self {
            Echo::StateMachine => "state_machine",
            Echo::Count => "count",
        }
    }
}

/// What the marking threshold K counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threshold {
    /// K packets (frames) in the queue.
    Frames(u64),
    /// K bytes in the queue.
    Bytes(u64),
}

/// The queue a marking decision reads (`cc.dctcp.mark_queue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkQueue {
    /// The occupancy the packet finds on arrival (the packet not counted): the paper's wording.
    Before,
    /// The occupancy with the packet.
    With,
}

/// DCTCP's parameters (`[cc.dctcp]`, docs/parameters.md); sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DctcpParams {
    /// K, the marking threshold.
    pub k: Threshold,
    pub mark_queue: MarkQueue,
    /// g, the weight of the newest fraction in α.
    pub g: f64,
    /// α when a flow starts.
    pub alpha_start: f64,
    pub echo: Echo,
    /// The window a flow starts with, bytes.
    pub init_window: f64,
    pub min_window: f64,
    pub max_window: f64,
    /// Slow start below ssthresh (else congestion avoidance from the start).
    pub slow_start: bool,
}

/// The switch's rule for threshold `k` read against `mq`: mark a packet joining a queue of
/// `q_frames` frames and `q_bytes` bytes (both counting the packet itself) of which the packet
/// is `size` bytes.
pub fn marks(k: Threshold, mq: MarkQueue, q_frames: u64, q_bytes: u64, size: u32) -> bool {
    let without = mq == MarkQueue::Before;
    match k {
        Threshold::Frames(k) => q_frames - without as u64 > k,
        Threshold::Bytes(k) => q_bytes - if without { size as u64 } else { 0 } > k,
    }
}

/// One ACK the receiver sends: everything below `next_expected` has arrived; it covers
/// `frames` packets, `ce` of them marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EchoAck {
    pub next_expected: u32,
    pub frames: u32,
    pub ce: u32,
}

/// The ACKs one arriving packet makes: at most two (the state change's, then the regular one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EchoOut {
    pub first: Option<EchoAck>,
    pub second: Option<EchoAck>,
}

/// The receiver's echo state of one flow.
#[derive(Debug, Clone, Copy, Default)]
pub struct Receiver {
    /// The CE bit of the last packet counted (Figure 10's state).
    pub state: bool,
    /// Packets counted and not yet acknowledged, and how many of them were marked.
    pub pending: u32,
    pub pending_ce: u32,
    /// The next expected sequence after the last packet.
    pub next: u32,
}

impl Receiver {
    /// A packet arrives (in order or a duplicate: the transport counts both towards its ACKs)
    /// with CE bit `ce`; the receiver expected `e_before` before it and `e_after` after it; the
    /// transport acknowledges every `m` packets, and at once when `flush` (the message is
    /// complete).
    pub fn on_packet(
        &mut self,
        echo: Echo,
        m: u32,
        ce: bool,
        e_before: u32,
        e_after: u32,
        flush: bool,
    ) -> EchoOut {
        let mut out = EchoOut::default();
        self.next = e_after;
        if echo == Echo::StateMachine && ce != self.state {
            if self.pending > 0 {
                out.first = Some(EchoAck {
                    next_expected: e_before,
                    frames: self.pending,
                    ce: if self.state { self.pending } else { 0 },
                });
                self.pending = 0;
                self.pending_ce = 0;
            }
            self.state = ce;
        }
        self.pending += 1;
        self.pending_ce += ce as u32;
        if self.pending >= m || flush {
            let marked = match echo {
                Echo::StateMachine if self.state => self.pending,
                Echo::StateMachine => 0,
                Echo::Count => self.pending_ce,
            };
            out.second = Some(EchoAck {
                next_expected: e_after,
                frames: self.pending,
                ce: marked,
            });
            self.pending = 0;
            self.pending_ce = 0;
        }
        out
    }

    /// The delayed-ACK timer expired (RFC 1122 §4.2.3.2: an ACK is not delayed without bound):
    /// the packets pending are acknowledged now, with the ECN-Echo of the current state (or
    /// their count); nothing when none is pending.
    pub fn flush(&mut self, echo: Echo) -> Option<EchoAck> {
        if self.pending == 0 {
            return None;
        }
        let ce = match echo {
            Echo::StateMachine if self.state => self.pending,
            Echo::StateMachine => 0,
            Echo::Count => self.pending_ce,
        };
        let a = EchoAck {
            next_expected: self.next,
            frames: self.pending,
            ce,
        };
        self.pending = 0;
        self.pending_ce = 0;
        Some(a)
    }
}

/// The sender of one flow: its window and α.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sender {
    /// The congestion window, bytes.
    pub cwnd: f64,
    pub ssthresh: f64,
    pub alpha: f64,
    /// The maximum segment size: the flow's frame, bytes.
    pub mss: f64,
    /// α is next updated when an ACK acknowledges past this sequence (a window of data).
    pub window_end: u32,
    /// Bytes acknowledged and marked since the last α update.
    pub acked: u64,
    pub marked: u64,
    /// No cut, and no growth, until an ACK acknowledges past this sequence (set at a cut to the
    /// sequence sent next: the window of data the cut answers).
    pub cwr_end: u32,
    pub in_cwr: bool,
    /// Window cuts (marks and losses) and α updates so far.
    pub cuts: u64,
    pub alpha_updates: u64,
}

impl Sender {
    pub fn new(p: &DctcpParams, mss: u32) -> Sender {
        Sender {
            cwnd: p.init_window.clamp(p.min_window, p.max_window),
            ssthresh: if p.slow_start { p.max_window } else { 0.0 },
            alpha: p.alpha_start,
            mss: mss as f64,
            window_end: 0,
            acked: 0,
            marked: 0,
            cwr_end: 0,
            in_cwr: false,
            cuts: 0,
            alpha_updates: 0,
        }
    }

    /// The window the transport enforces: the whole MSS below cwnd (at least one).
    pub fn window_bytes(&self) -> u64 {
        ((self.cwnd / self.mss).floor().max(1.0) * self.mss) as u64
    }

    fn control(&self) -> Control {
        Control {
            window_bytes: self.window_bytes(),
            rate_bps: f64::INFINITY,
        }
    }

    fn clamp(&mut self, p: &DctcpParams) {
        self.cwnd = self.cwnd.clamp(p.min_window, p.max_window);
    }

    /// An acknowledgement arrives; `snd_nxt` is the sequence the sender sends next (one past
    /// the highest sent).
    pub fn on_ack(&mut self, p: &DctcpParams, ack: &Ack, snd_nxt: u32) -> Control {
        let una = ack.next_expected;
        // the bytes it acknowledges, marked when it echoes CE (a share of them with Echo::Count)
        let bytes = ack.acked_bytes as u64;
        self.acked += bytes;
        if ack.ce_frames > 0 && ack.acked_frames > 0 {
            self.marked +=
                bytes * ack.ce_frames.min(ack.acked_frames) as u64 / ack.acked_frames as u64;
        }
        // (1) once per window of data
        if una > self.window_end {
            let f = if self.acked > 0 {
                self.marked as f64 / self.acked as f64
            } else {
                0.0
            };
            self.alpha = (1.0 - p.g) * self.alpha + p.g * f;
            self.alpha_updates += 1;
            self.acked = 0;
            self.marked = 0;
            self.window_end = snd_nxt;
        }
        if self.in_cwr && una > self.cwr_end {
            self.in_cwr = false;
        }
        if ack.ce_frames > 0 {
            // (2) at most once per window of data
            if !self.in_cwr {
                self.cwnd *= 1.0 - self.alpha / 2.0;
                self.ssthresh = self.cwnd.max(p.min_window);
                self.enter_cwr(snd_nxt);
            }
        } else if !self.in_cwr && bytes > 0 {
            if self.cwnd < self.ssthresh {
                self.cwnd += bytes as f64;
            } else {
                self.cwnd += self.mss * bytes as f64 / self.cwnd;
            }
        }
        self.clamp(p);
        self.control()
    }

    fn enter_cwr(&mut self, snd_nxt: u32) {
        self.in_cwr = true;
        self.cwr_end = snd_nxt;
        self.cuts += 1;
    }

    /// The transport detected a loss (a NACK): halve the window, at most once per window.
    pub fn on_loss(&mut self, p: &DctcpParams, snd_nxt: u32) -> Control {
        if !self.in_cwr {
            self.ssthresh = (self.cwnd / 2.0).max(p.min_window);
            self.cwnd = self.ssthresh;
            self.enter_cwr(snd_nxt);
        }
        self.clamp(p);
        self.control()
    }

    /// The retransmission timer expired: the least window, ssthresh half the window.
    pub fn on_timeout(&mut self, p: &DctcpParams, snd_nxt: u32) -> Control {
        self.ssthresh = (self.cwnd / 2.0).max(p.min_window);
        self.cwnd = p.min_window;
        self.enter_cwr(snd_nxt);
        self.clamp(p);
        self.control()
    }
}

/// The analysis of §3.3 (N synchronised long flows of one RTT at a bottleneck of capacity C,
/// marking at K, all in packets): the window at which the queue reaches K,
/// `W* = (C·RTT + K)/N`; α ≈ sqrt(2/W*) (eq. 7); the queue's oscillation amplitude
/// `A = N·D ≈ ½·sqrt(2N(C·RTT + K))` (eq. 10), its period `T_C = D ≈ ½·sqrt(2(C·RTT + K)/N)`
/// RTTs (eq. 11), its maximum `Q_max = K + N` (eq. 12) and minimum `Q_min = Q_max − A` (eq. 13).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sawtooth {
    pub w_star: f64,
    pub alpha: f64,
    pub amplitude: f64,
    pub period_rtts: f64,
    pub q_max: f64,
    pub q_min: f64,
}

/// [`Sawtooth`] for `n` flows, a bandwidth-delay product `c_rtt` and a threshold `k` (packets).
pub fn sawtooth(n: f64, c_rtt: f64, k: f64) -> Sawtooth {
    let w_star = (c_rtt + k) / n;
    let amplitude = 0.5 * (2.0 * n * (c_rtt + k)).sqrt();
    let q_max = k + n;
    Sawtooth {
        w_star,
        alpha: (2.0 / w_star).sqrt(),
        amplitude,
        period_rtts: 0.5 * (2.0 * (c_rtt + k) / n).sqrt(),
        q_max,
        q_min: q_max - amplitude,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    const MSS: u32 = 1000;

    fn p() -> DctcpParams {
        DctcpParams {
            k: Threshold::Frames(65),
            mark_queue: MarkQueue::Before,
            g: 1.0 / 16.0,
            alpha_start: 1.0,
            echo: Echo::StateMachine,
            init_window: 10.0 * MSS as f64,
            min_window: 2.0 * MSS as f64,
            max_window: 1000.0 * MSS as f64,
            slow_start: true,
        }
    }

    fn ack(next: u32, frames: u32, ce: u32) -> Ack {
        let mut a = Ack::plain(10 * US, next, frames * MSS, 0);
        a.acked_frames = frames;
        a.ce_frames = ce;
        a
    }

    // ---- switch: "mark ... if the queue occupancy is greater than K upon its arrival"

    #[test]
    fn switch_marks_above_k_counting_the_queue_the_packet_finds() {
        let mut q = p();
        q.k = Threshold::Frames(3);
        // (frames with the packet, bytes with it, marked?)
        for (frames, bytes, want) in [(1, 1000, false), (4, 4000, false), (5, 5000, true)] {
            assert_eq!(
                marks(q.k, q.mark_queue, frames, bytes, 1000),
                want,
                "{frames} frames"
            );
        }
        q.mark_queue = MarkQueue::With;
        assert!(
            marks(q.k, q.mark_queue, 4, 4000, 1000),
            "with the packet: 4 > 3"
        );
        assert!(!marks(q.k, q.mark_queue, 3, 3000, 1000));
        q.k = Threshold::Bytes(3000);
        q.mark_queue = MarkQueue::Before;
        assert!(
            !marks(q.k, q.mark_queue, 4, 4000, 1000),
            "3000 B found: not above K"
        );
        assert!(marks(q.k, q.mark_queue, 5, 4001, 1), "4000 B found");
    }

    // ---- receiver, Figure 10

    #[test]
    fn per_packet_acks_echo_each_packets_ce() {
        let mut r = Receiver::default();
        for (i, ce) in [false, true, true, false].into_iter().enumerate() {
            let i = i as u32;
            let o = r.on_packet(Echo::StateMachine, 1, ce, i, i + 1, false);
            assert_eq!(o.first, None);
            let want = EchoAck {
                next_expected: i + 1,
                frames: 1,
                ce: ce as u32,
            };
            assert_eq!(o.second, Some(want));
        }
    }

    #[test]
    fn delayed_acks_follow_the_two_state_machine() {
        // m = 2; the packets' CE bits and the ACKs the paper's Figure 10 sends
        let mut r = Receiver::default();
        let m = 2;
        // (ce, first ACK (next, frames, ce), second ACK)
        type A = Option<(u32, u32, u32)>;
        let rows: [(bool, A, A); 7] = [
            (false, None, None),            // 1 counted in state 0
            (false, None, Some((2, 2, 0))), // m reached: ACK ECE=0
            (false, None, None),            // 1 counted
            (true, Some((3, 1, 0)), None),  // 0 -> 1: immediate ACK ECE=0 of 1 packet
            (true, None, Some((5, 2, 2))),  // m reached in state 1: ECE=1
            (true, None, None),             // counted
            (false, Some((6, 1, 1)), None), // 1 -> 0: immediate ACK ECE=1
        ];
        for (i, (ce, first, second)) in rows.into_iter().enumerate() {
            let i = i as u32;
            let o = r.on_packet(Echo::StateMachine, m, ce, i, i + 1, false);
            let f = |a: Option<EchoAck>| a.map(|a| (a.next_expected, a.frames, a.ce));
            assert_eq!((f(o.first), f(o.second)), (first, second), "packet {i}");
        }
        assert!(!r.state);
        assert_eq!(r.pending, 1);
    }

    #[test]
    fn count_echo_sends_no_extra_ack_and_counts_marks() {
        let mut r = Receiver::default();
        assert_eq!(
            r.on_packet(Echo::Count, 3, false, 0, 1, false),
            EchoOut::default()
        );
        assert_eq!(
            r.on_packet(Echo::Count, 3, true, 1, 2, false),
            EchoOut::default()
        );
        let o = r.on_packet(Echo::Count, 3, false, 2, 3, false);
        assert_eq!(
            o.second,
            Some(EchoAck {
                next_expected: 3,
                frames: 3,
                ce: 1
            })
        );
    }

    #[test]
    fn the_delayed_ack_timer_flushes_what_is_pending() {
        let mut r = Receiver::default();
        assert_eq!(r.flush(Echo::StateMachine), None);
        r.on_packet(Echo::StateMachine, 4, true, 0, 1, false);
        r.on_packet(Echo::StateMachine, 4, true, 1, 2, false);
        let want = EchoAck {
            next_expected: 2,
            frames: 2,
            ce: 2,
        };
        assert_eq!(r.flush(Echo::StateMachine), Some(want));
        assert_eq!(r.flush(Echo::StateMachine), None);
    }

    #[test]
    fn the_last_packet_is_acknowledged_at_once() {
        let mut r = Receiver::default();
        r.on_packet(Echo::StateMachine, 4, false, 0, 1, false);
        let o = r.on_packet(Echo::StateMachine, 4, false, 1, 2, true);
        assert_eq!(o.second.map(|a| (a.next_expected, a.frames)), Some((2, 2)));
    }

    // ---- sender, eq. (1) and (2)

    #[test]
    fn alpha_is_updated_once_per_window_with_the_marked_fraction() {
        let q = p();
        let mut s = Sender::new(&q, MSS);
        s.alpha = 0.5;
        s.window_end = 4;
        s.in_cwr = true; // (keeps the window out of this test)
        s.cwr_end = 100;
        // three ACKs inside the window: no update
        s.on_ack(&q, &ack(2, 2, 1), 10);
        s.on_ack(&q, &ack(4, 2, 0), 10);
        assert_eq!((s.alpha, s.alpha_updates), (0.5, 0));
        // the ACK past window_end: F = 2 marked of 6 acknowledged (eq. 1)
        s.on_ack(&q, &ack(6, 2, 1), 10);
        let f = 2.0 / 6.0;
        assert!((s.alpha - ((1.0 - q.g) * 0.5 + q.g * f)).abs() < 1e-12);
        assert_eq!((s.window_end, s.acked, s.marked), (10, 0, 0));
    }

    #[test]
    fn a_marked_ack_cuts_by_half_alpha_at_most_once_per_window() {
        let q = p();
        let mut s = Sender::new(&q, MSS);
        s.cwnd = 100.0 * MSS as f64;
        s.alpha = 0.25;
        s.window_end = 1000;
        let c = s.on_ack(&q, &ack(1, 1, 1), 50);
        // (2): cwnd (1 - α/2)
        assert_eq!(s.cwnd, 100.0 * MSS as f64 * (1.0 - 0.125));
        assert_eq!(c.window_bytes, 87 * MSS as u64);
        assert_eq!((s.cuts, s.cwr_end, s.ssthresh), (1, 50, s.cwnd));
        // another mark in the same window: no cut, no growth
        let before = s.cwnd;
        s.on_ack(&q, &ack(2, 1, 1), 60);
        s.on_ack(&q, &ack(50, 1, 0), 60);
        assert_eq!((s.cwnd, s.cuts), (before, 1));
        // past the window of the cut: a mark cuts again
        s.on_ack(&q, &ack(51, 1, 1), 70);
        assert_eq!(s.cuts, 2);
    }

    #[test]
    fn slow_start_adds_the_bytes_acknowledged_then_one_mss_per_window() {
        let q = p();
        let mut s = Sender::new(&q, MSS);
        s.window_end = u32::MAX;
        s.on_ack(&q, &ack(2, 2, 0), 20);
        assert_eq!(s.cwnd, 12.0 * MSS as f64);
        // congestion avoidance: a window of data's ACKs adds about one MSS
        s.ssthresh = s.cwnd;
        let w0 = s.cwnd;
        for i in 0..12 {
            s.on_ack(&q, &ack(3 + i, 1, 0), 40);
        }
        assert!(
            (s.cwnd - w0 - MSS as f64).abs() < 0.05 * MSS as f64,
            "{}",
            s.cwnd
        );
        // without slow start the flow is in congestion avoidance from the start
        let mut q2 = q;
        q2.slow_start = false;
        let mut t = Sender::new(&q2, MSS);
        t.window_end = u32::MAX;
        t.on_ack(&q2, &ack(1, 1, 0), 20);
        assert!((t.cwnd - 10.1 * MSS as f64).abs() < 1e-9);
    }

    #[test]
    fn a_duplicate_ack_changes_nothing_but_may_cut() {
        let q = p();
        let mut s = Sender::new(&q, MSS);
        s.window_end = u32::MAX;
        let mut d = ack(0, 1, 0);
        d.acked_bytes = 0;
        s.on_ack(&q, &d, 5);
        assert_eq!(s.cwnd, 10.0 * MSS as f64);
    }

    #[test]
    fn losses_halve_once_per_window_and_a_timeout_falls_to_the_least_window() {
        let q = p();
        let mut s = Sender::new(&q, MSS);
        s.cwnd = 40.0 * MSS as f64;
        s.on_loss(&q, 30);
        assert_eq!(s.cwnd, 20.0 * MSS as f64);
        s.on_loss(&q, 31);
        assert_eq!(s.cwnd, 20.0 * MSS as f64, "once per window");
        s.on_timeout(&q, 31);
        assert_eq!((s.cwnd, s.ssthresh), (q.min_window, 10.0 * MSS as f64));
    }

    #[test]
    fn the_window_stays_within_its_bounds() {
        let q = p();
        let mut s = Sender::new(&q, MSS);
        s.cwnd = q.min_window;
        s.alpha = 1.0;
        s.on_ack(&q, &ack(1, 1, 1), 2);
        assert_eq!(s.cwnd, q.min_window);
        s.cwnd = q.max_window;
        s.in_cwr = false;
        s.window_end = u32::MAX;
        s.on_ack(&q, &ack(5, 4, 0), 9);
        assert_eq!(s.cwnd, q.max_window);
        assert_eq!(s.window_bytes(), 1000 * MSS as u64);
    }

    #[test]
    fn the_sawtooth_of_section_3_3() {
        // N = 2, C·RTT = 100 packets, K = 40: W* = 70, A = ½ sqrt(2·2·140), Q_max = 42
        let s = sawtooth(2.0, 100.0, 40.0);
        assert_eq!(s.w_star, 70.0);
        assert!((s.amplitude - 0.5 * 560f64.sqrt()).abs() < 1e-12);
        assert!((s.period_rtts - 0.5 * 140f64.sqrt()).abs() < 1e-12);
        assert_eq!(s.q_max, 42.0);
        assert!((s.q_min - (42.0 - s.amplitude)).abs() < 1e-12);
    }

    /// Property: whatever ACKs, marks and losses come, the window stays in its bounds and α in
    /// [0, 1].
    #[test]
    fn window_and_alpha_stay_bounded_under_random_inputs() {
        use crate::engine::rng::kinds;
        use crate::engine::{Rng, StreamId};
        let q = p();
        for seed in 0..50u64 {
            let mut rng = Rng::stream(seed, StreamId::new(kinds::SOURCE, 0, 0));
            let mut s = Sender::new(&q, MSS);
            let mut una = 0u32;
            let mut nxt = 10u32;
            for _ in 0..2000 {
                let r = rng.next_u64();
                match r % 10 {
                    0 => {
                        s.on_loss(&q, nxt);
                    }
                    1 => {
                        s.on_timeout(&q, nxt);
                    }
                    _ => {
                        let k = (r >> 8) as u32 % 4;
                        una += k;
                        nxt = nxt.max(una) + (r >> 16) as u32 % 5;
                        let mut a = ack(una, k.max(1), ((r >> 24) % 2) as u32 * k.max(1));
                        a.acked_bytes = k * MSS;
                        s.on_ack(&q, &a, nxt);
                    }
                }
                assert!(
                    s.cwnd >= q.min_window && s.cwnd <= q.max_window,
                    "{}",
                    s.cwnd
                );
                assert!((0.0..=1.0).contains(&s.alpha));
                let w = s.window_bytes() as f64;
                assert!(w >= MSS as f64 && w <= q.max_window);
            }
        }
    }
}
