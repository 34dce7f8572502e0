//! RoCE-style go-back-N reliable delivery of a finite flow (docs/models/transport.md): the
//! sender's and the receiver's rules, sans-IO. Frames carry a sequence number (the frame's
//! index in the message, 0-based); a message of `n` frames is delivered when the receiver has
//! accepted frames `0..n` in order.
//!
//! Receiver (the InfiniBand responder's rule for a reliable connection, as RoCE NICs implement
//! it: IBTA InfiniBand Architecture Specification vol. 1, §9.7; described in Mittal et al.,
//! *Revisiting Network Support for RDMA*, SIGCOMM 2018, §2; HPCC's ns-3 `RdmaHw::ReceiverCheckSeq`
//! for the NACK pacing), for a frame with sequence `s` arriving at `t` while `e` frames have
//! been accepted (`e` is the next expected sequence):
//!
//! ```text
//! s == e:  accept (e <- e + 1). Count it towards the ACK: once `ack_interval` frames were
//!          counted, or when the message is complete (e == n), ACK(e) and restart the count.
//! s >  e:  discard (out of order). NACK(e), unless a NACK for this same e went out less
//!          than `nack_interval` ago.
//! s <  e:  discard (duplicate: a frame resent after a timeout). Count it towards the ACK as
//!          an accepted frame is (the responder acknowledges duplicates so the sender learns).
//! ```
//!
//! An ACK(a) or NACK(a) says "every frame below `a` arrived"; a NACK also asks to resend from
//! `a`.
//!
//! Sender, with `una` the lowest unacknowledged sequence and `wire` one past the highest
//! sequence that went on the wire; the retransmission timer (period `rto`) runs while
//! `una < wire`:
//!
//! ```text
//! a frame goes on the wire:   wire <- max(wire, s + 1); timer not running: start it
//! ACK(a), a > una:            una <- a; una == n or una >= wire: stop the timer;
//!                             otherwise restart it (progress)
//! NACK(a), a >= una:          una <- a; go back to a: wire <- a, stop the timer
//! timer expires, una < wire:  go back to una: wire <- una, timer stopped
//! ```
//!
//! (After going back, the frames from `a` on are sent again; the timer starts again when the
//! first of them reaches the wire, so time they spend queued behind other traffic in the source
//! NIC does not count.)
//!
//! "Go back to a" makes the source produce frame `a` next and every frame after it again;
//! frames of the flow not yet on the wire are withdrawn (sim/host/transport.rs). ACKs and NACKs
//! older than `una` are ignored.

use crate::proto::qcn_rp::TimerCmd;
use crate::units::SimTime;

/// The transport's parameters (`[transport]`, docs/parameters.md).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GbnParams {
    /// Retransmission timeout: time without progress before the sender goes back.
    pub rto: SimTime,
    /// The receiver acknowledges every this many accepted (or duplicate) frames.
    pub ack_interval: u32,
    /// Least time between two NACKs for the same expected sequence.
    pub nack_interval: SimTime,
}

/// What the receiver sends back after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    None,
    Ack(u32),
    Nack(u32),
}

/// The receiver's verdict on one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxVerdict {
    /// The frame is accepted (in order, first time).
    pub accepted: bool,
    /// This frame completed the message.
    pub complete: bool,
    pub reply: Reply,
}

/// The receiver of one go-back-N flow.
#[derive(Debug, Clone, Default)]
pub struct Receiver {
    /// Next expected sequence (frames accepted so far).
    pub expected: u32,
    since_ack: u32,
    /// The expected sequence the last NACK asked for, and when it went out.
    nack_for: Option<u32>,
    nack_at: SimTime,
    pub out_of_order: u64,
    pub duplicates: u64,
    pub acks_sent: u64,
    pub nacks_sent: u64,
}

impl Receiver {
    /// Frame `seq` of a message of `n` frames arrives at `t`.
    pub fn on_frame(&mut self, p: &GbnParams, seq: u32, n: u32, t: SimTime) -> RxVerdict {
        let e = self.expected;
        if seq > e {
            self.out_of_order += 1;
            let due = match self.nack_for {
                Some(a) if a == e => t >= self.nack_at.saturating_add(p.nack_interval),
                _ => true,
            };
            let reply = if due {
                self.nack_for = Some(e);
                self.nack_at = t;
                self.nacks_sent += 1;
                Reply::Nack(e)
            } else {
                Reply::None
            };
            return RxVerdict {
                accepted: false,
                complete: false,
                reply,
            };
        }
        let accepted = seq == e;
        if accepted {
            self.expected = e + 1;
        } else {
            self.duplicates += 1;
        }
        let complete = accepted && self.expected == n;
        self.since_ack += 1;
        let reply = if self.since_ack >= p.ack_interval || complete {
            self.since_ack = 0;
            self.acks_sent += 1;
            Reply::Ack(self.expected)
        } else {
            Reply::None
        };
        RxVerdict {
            accepted,
            complete,
            reply,
        }
    }
}

/// What the sender asks of its adapter after an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SndOut {
    pub timer: TimerCmd,
    /// Go back: the source's next frame is this sequence.
    pub rewind: Option<u32>,
}

impl SndOut {
    const KEEP: SndOut = SndOut {
        timer: TimerCmd::Keep,
        rewind: None,
    };
}

/// The sender of one go-back-N flow of `n` frames.
#[derive(Debug, Clone)]
pub struct Sender {
    pub n: u32,
    /// Lowest unacknowledged sequence.
    pub una: u32,
    /// One past the highest sequence that went on the wire.
    pub wire: u32,
    timer_on: bool,
    /// One past the highest sequence the source has made (frames below it made again are
    /// retransmissions).
    pub made: u32,
    pub retx_frames: u64,
    pub retx_bytes: u64,
    pub timeouts: u64,
    pub acks_rx: u64,
    pub nacks_rx: u64,
}

impl Sender {
    pub fn new(n: u32) -> Sender {
        Sender {
            n,
            una: 0,
            wire: 0,
            timer_on: false,
            made: 0,
            retx_frames: 0,
            retx_bytes: 0,
            timeouts: 0,
            acks_rx: 0,
            nacks_rx: 0,
        }
    }

    /// The source made frame `seq` of `size` bytes; true when it is a retransmission.
    pub fn on_made(&mut self, seq: u32, size: u32) -> bool {
        if seq < self.made {
            self.retx_frames += 1;
            self.retx_bytes += size as u64;
            true
        } else {
            self.made = seq + 1;
            false
        }
    }

    /// Frame `seq` went on the wire at `now`.
    pub fn on_wire(&mut self, p: &GbnParams, seq: u32, now: SimTime) -> TimerCmd {
        self.wire = self.wire.max(seq + 1);
        if self.timer_on || self.una >= self.wire {
            return TimerCmd::Keep;
        }
        self.timer_on = true;
        TimerCmd::Arm(now.saturating_add(p.rto))
    }

    /// The sender has nothing more to do: every frame is acknowledged.
    pub fn done(&self) -> bool {
        self.una >= self.n
    }

    fn restart(&mut self, p: &GbnParams, now: SimTime) -> TimerCmd {
        if self.done() || self.una >= self.wire {
            self.timer_on = false;
            TimerCmd::Cancel
        } else {
            self.timer_on = true;
            TimerCmd::Arm(now.saturating_add(p.rto))
        }
    }

    pub fn on_ack(&mut self, p: &GbnParams, a: u32, now: SimTime) -> SndOut {
        self.acks_rx += 1;
        if a <= self.una {
            return SndOut::KEEP;
        }
        self.una = a.min(self.n);
        SndOut {
            timer: self.restart(p, now),
            rewind: None,
        }
    }

    pub fn on_nack(&mut self, a: u32) -> SndOut {
        self.nacks_rx += 1;
        if a < self.una || a >= self.n {
            return SndOut::KEEP;
        }
        self.una = a;
        self.go_back(a)
    }

    /// Go back to `a`: nothing from `a` on counts as on the wire any more; the timer waits for
    /// the first frame sent again.
    fn go_back(&mut self, a: u32) -> SndOut {
        self.wire = a;
        self.timer_on = false;
        SndOut {
            timer: TimerCmd::Cancel,
            rewind: Some(a),
        }
    }

    /// The retransmission timer expired.
    pub fn on_timeout(&mut self) -> SndOut {
        self.timer_on = false;
        if self.done() || self.una >= self.wire {
            return SndOut::KEEP;
        }
        self.timeouts += 1;
        self.go_back(self.una)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    fn params(ack_interval: u32) -> GbnParams {
        GbnParams {
            rto: 100 * US,
            ack_interval,
            nack_interval: 50 * US,
        }
    }

    #[test]
    fn receiver_rules() {
        // (ack_interval, frames (seq, t in us) fed in order, n, expected verdicts, final expected)
        type Case = (
            u32,
            &'static [(u32, u64)],
            u32,
            &'static [(bool, bool, Reply)],
            u32,
        );
        let cases: &[Case] = &[
            // in order, ACK per frame, the last completes
            (
                1,
                &[(0, 0), (1, 1), (2, 2)],
                3,
                &[
                    (true, false, Reply::Ack(1)),
                    (true, false, Reply::Ack(2)),
                    (true, true, Reply::Ack(3)),
                ],
                3,
            ),
            // ACK every 2 frames, and always at completion
            (
                2,
                &[(0, 0), (1, 1), (2, 2)],
                3,
                &[
                    (true, false, Reply::None),
                    (true, false, Reply::Ack(2)),
                    (true, true, Reply::Ack(3)),
                ],
                3,
            ),
            // a gap: NACK(1) once, the next out-of-order frame within nack_interval is silent,
            // one after it NACKs again; the resent frame 1 is accepted
            (
                1,
                &[(0, 0), (2, 1), (3, 2), (4, 60), (1, 70), (2, 71)],
                5,
                &[
                    (true, false, Reply::Ack(1)),
                    (false, false, Reply::Nack(1)),
                    (false, false, Reply::None),
                    (false, false, Reply::Nack(1)),
                    (true, false, Reply::Ack(2)),
                    (true, false, Reply::Ack(3)),
                ],
                3,
            ),
            // a new gap (a different expected sequence) NACKs at once
            (
                1,
                &[(1, 0), (0, 1), (1, 2), (0, 3), (2, 4)],
                3,
                &[
                    (false, false, Reply::Nack(0)),
                    (true, false, Reply::Ack(1)),
                    (true, false, Reply::Ack(2)),
                    (false, false, Reply::Ack(2)),
                    (true, true, Reply::Ack(3)),
                ],
                3,
            ),
            // duplicates are discarded and count towards the ACK
            (
                2,
                &[(0, 0), (1, 1), (0, 2), (1, 3)],
                5,
                &[
                    (true, false, Reply::None),
                    (true, false, Reply::Ack(2)),
                    (false, false, Reply::None),
                    (false, false, Reply::Ack(2)),
                ],
                2,
            ),
        ];
        for (ci, &(ai, frames, n, want, exp)) in cases.iter().enumerate() {
            let p = params(ai);
            let mut r = Receiver::default();
            for (k, (&(s, t), &(acc, comp, reply))) in frames.iter().zip(want).enumerate() {
                let v = r.on_frame(&p, s, n, t * US);
                assert_eq!(
                    v,
                    RxVerdict {
                        accepted: acc,
                        complete: comp,
                        reply
                    },
                    "case {ci} frame {k}"
                );
            }
            assert_eq!(r.expected, exp, "case {ci}");
        }
    }

    #[test]
    fn receiver_counts() {
        let p = params(1);
        let mut r = Receiver::default();
        for &(s, t) in &[(0, 0), (2, 1), (3, 2), (1, 3), (1, 4), (0, 5)] {
            r.on_frame(&p, s, 10, t * US);
        }
        assert_eq!((r.out_of_order, r.duplicates), (2, 2));
        assert_eq!((r.acks_sent, r.nacks_sent), (4, 1));
    }

    #[test]
    fn sender_rules() {
        let p = params(1);
        let t = |us: u64| us * US;
        // timer starts with the first frame on the wire, not again while running
        let mut s = Sender::new(4);
        assert_eq!(s.on_wire(&p, 0, t(0)), TimerCmd::Arm(t(100)));
        assert_eq!(s.on_wire(&p, 1, t(1)), TimerCmd::Keep);
        assert_eq!(s.wire, 2);
        // progress restarts it; an old ACK changes nothing
        assert_eq!(
            s.on_ack(&p, 1, t(5)),
            SndOut {
                timer: TimerCmd::Arm(t(105)),
                rewind: None
            }
        );
        assert_eq!(s.on_ack(&p, 1, t(6)), SndOut::KEEP);
        // everything on the wire acknowledged: stop; the next frame on the wire starts it
        assert_eq!(s.on_ack(&p, 2, t(7)).timer, TimerCmd::Cancel);
        assert_eq!(s.on_wire(&p, 2, t(8)), TimerCmd::Arm(t(108)));
        // a NACK goes back and stops the timer until a frame is sent again; an older NACK is
        // ignored
        let back = SndOut {
            timer: TimerCmd::Cancel,
            rewind: Some(2),
        };
        assert_eq!(s.on_nack(2), back);
        assert_eq!(s.wire, 2);
        assert_eq!(s.on_nack(1), SndOut::KEEP);
        assert_eq!(s.nacks_rx, 2);
        // nothing on the wire: an expiry does nothing; the resent frame starts the timer
        assert_eq!(s.on_timeout(), SndOut::KEEP);
        assert_eq!(s.on_wire(&p, 2, t(12)), TimerCmd::Arm(t(112)));
        // the timer expires with frame 2 unacknowledged: go back to it
        assert_eq!(s.on_timeout(), back);
        assert_eq!(s.timeouts, 1);
        s.on_wire(&p, 2, t(113));
        // made again: retransmissions counted
        assert!(!s.on_made(0, 1500) && !s.on_made(1, 1500) && !s.on_made(2, 1500));
        assert!(s.on_made(2, 1500));
        assert_eq!((s.retx_frames, s.retx_bytes), (1, 1500));
        // the last ACK completes: the timer stops, a late timeout does nothing
        s.on_wire(&p, 3, t(120));
        assert_eq!(s.on_ack(&p, 4, t(130)).timer, TimerCmd::Cancel);
        assert!(s.done());
        assert_eq!(s.on_timeout(), SndOut::KEEP);
        assert_eq!(s.timeouts, 1);
        // a NACK beyond the message is ignored
        let mut s = Sender::new(2);
        s.on_wire(&p, 0, 0);
        assert_eq!(s.on_nack(2), SndOut::KEEP);
    }
}
