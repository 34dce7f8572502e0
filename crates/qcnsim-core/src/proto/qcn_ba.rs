//! Bandwidth-available (BA) sensor of a QCN congestion point (the QCN transient-response
//! proposals; see docs/models/qcn-transient.md).
//!
//! ```text
//! BA = 1 when the queue has stayed below `qlen_threshold` frames for at least `hold`:
//! on every change of Qlen (enqueue and dequeue):
//!     if Qlen >= threshold: BA = 0; cancel the hold timer
//!     elif BA == 0 and the hold timer is not running: start it (now + hold)
//! hold timer expires: BA = 1
//! ```
//!
//! `Fb < 0` implies BA = 0 (a queue above Qeq is above the threshold), not the converse.
//! The sensor is sans-IO: it returns a [`TimerCmd`] for the caller's hold timer and whether BA
//! changed. At construction the queue is empty, so the hold timer starts at once.

use crate::proto::qcn_rp::TimerCmd;
use crate::units::{SimTime, MS};

/// BA sensor parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct BaParams {
    /// Queue length, in frames, at or above which BA = 0: 6 packets.
    pub qlen_threshold_frames: u64,
    /// How long the queue must stay below the threshold before BA = 1: 10 ms.
    pub hold_ps: SimTime,
}

impl BaParams {
    /// The transient-response proposal's values: 6 packets, 10 ms.
    pub fn standard() -> BaParams {
        BaParams {
            qlen_threshold_frames: 6,
            hold_ps: 10 * MS,
        }
    }
}

/// What one input did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaOutput {
    pub timer: TimerCmd,
    /// BA flipped (the new value is [`BaSensor::ba`]).
    pub changed: bool,
}

impl BaOutput {
    pub const NONE: BaOutput = BaOutput {
        timer: TimerCmd::Keep,
        changed: false,
    };
}

/// The state of one BA sensor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaSensor {
    ba: bool,
    /// Deadline of the running hold timer.
    deadline: Option<SimTime>,
}

impl BaSensor {
    /// BA = 0 with the hold timer running from `now` (the queue starts empty). The caller arms
    /// its timer with the returned command.
    pub fn new(p: &BaParams, now: SimTime) -> (BaSensor, TimerCmd) {
        let at = now.saturating_add(p.hold_ps);
        (
            BaSensor {
                ba: false,
                deadline: Some(at),
            },
            TimerCmd::Arm(at),
        )
    }

    /// The queue length changed to `qlen_frames` (after an enqueue or a dequeue).
    #[inline]
    pub fn on_qlen(&mut self, p: &BaParams, now: SimTime, qlen_frames: u64) -> BaOutput {
        if qlen_frames >= p.qlen_threshold_frames {
            let changed = self.ba;
            self.ba = false;
            if self.deadline.take().is_some() {
                return BaOutput {
                    timer: TimerCmd::Cancel,
                    changed,
                };
            }
            return BaOutput {
                timer: TimerCmd::Keep,
                changed,
            };
        }
        if !self.ba && self.deadline.is_none() {
            let at = now.saturating_add(p.hold_ps);
            self.deadline = Some(at);
            return BaOutput {
                timer: TimerCmd::Arm(at),
                changed: false,
            };
        }
        BaOutput::NONE
    }

    /// The hold timer armed by the last `Arm` fired (the caller drops stale timer events).
    pub fn on_timer(&mut self, now: SimTime) -> BaOutput {
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                let changed = !self.ba;
                self.ba = true;
                BaOutput {
                    timer: TimerCmd::Keep,
                    changed,
                }
            }
            _ => BaOutput::NONE,
        }
    }

    /// Bandwidth available.
    #[inline]
    pub fn ba(&self) -> bool {
        self.ba
    }

    /// Deadline of the running hold timer.
    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }
}

#[cfg(test)]
// Each rule is a table of wide (state before, input, state after) tuples, by design.
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;

    const HOLD: SimTime = 10 * MS;
    const NOW: SimTime = 100 * MS;

    fn p() -> BaParams {
        BaParams::standard()
    }

    fn sensor(ba: bool, deadline: Option<SimTime>) -> BaSensor {
        BaSensor { ba, deadline }
    }

    #[test]
    fn standard_params() {
        assert_eq!(p().qlen_threshold_frames, 6);
        assert_eq!(p().hold_ps, 10 * MS);
    }

    #[test]
    fn starts_with_ba_0_and_the_hold_timer_running() {
        let (s, cmd) = BaSensor::new(&p(), 0);
        assert!(!s.ba());
        assert_eq!(cmd, TimerCmd::Arm(HOLD));
        assert_eq!(s.deadline(), Some(HOLD));
    }

    #[test]
    fn queue_length_rules() {
        let run = Some(NOW - MS + HOLD);
        // (name, BA before, timer before, Qlen, BA after, timer after, command, changed)
        #[rustfmt::skip]
        let cases: &[(&str, bool, Option<SimTime>, u64, bool, Option<SimTime>, TimerCmd, bool)] = &[
            ("BA 1, queue reaches the threshold: BA 0", true, None, 6, false, None, TimerCmd::Keep, true),
            ("BA 1, queue far above: BA 0", true, None, 90, false, None, TimerCmd::Keep, true),
            ("BA 1, queue below: unchanged", true, None, 5, true, None, TimerCmd::Keep, false),
            ("BA 1, empty queue: unchanged", true, None, 0, true, None, TimerCmd::Keep, false),
            ("BA 0 timing, queue reaches threshold: timer cancelled", false, run, 6, false, None, TimerCmd::Cancel, false),
            ("BA 0 timing, queue still below: timer kept", false, run, 5, false, run, TimerCmd::Keep, false),
            ("BA 0 idle, queue drops below: timer started", false, None, 5, false, Some(NOW + HOLD), TimerCmd::Arm(NOW + HOLD), false),
            ("BA 0 idle, queue empty: timer started", false, None, 0, false, Some(NOW + HOLD), TimerCmd::Arm(NOW + HOLD), false),
            ("BA 0 idle, queue above: nothing", false, None, 7, false, None, TimerCmd::Keep, false),
        ];
        for (name, ba, dl, q, ba2, dl2, cmd, changed) in cases {
            let mut s = sensor(*ba, *dl);
            let out = s.on_qlen(&p(), NOW, *q);
            assert_eq!(
                out,
                BaOutput {
                    timer: *cmd,
                    changed: *changed
                },
                "{name}"
            );
            assert_eq!(s, sensor(*ba2, *dl2), "{name}");
        }
    }

    #[test]
    fn hold_timer_expiry() {
        // (name, BA before, timer before, fires at, BA after, changed)
        #[rustfmt::skip]
        let cases: &[(&str, bool, Option<SimTime>, SimTime, bool, bool)] = &[
            ("expiry sets BA 1", false, Some(NOW), NOW, true, true),
            ("stale expiry after cancel: nothing", false, None, NOW, false, false),
            ("early (stale) event: nothing", false, Some(NOW + 1), NOW, false, false),
        ];
        for (name, ba, dl, t, ba2, changed) in cases {
            let mut s = sensor(*ba, *dl);
            let out = s.on_timer(*t);
            assert_eq!(out.changed, *changed, "{name}");
            assert_eq!(s.ba(), *ba2, "{name}");
            if *changed {
                assert_eq!(s.deadline(), None, "{name}");
            }
        }
    }

    #[test]
    fn timer_restarts_each_time_the_queue_drops_below_again() {
        // The queue oscillates around the threshold: each drop below restarts a full hold.
        let pp = p();
        let (mut s, _) = BaSensor::new(&pp, 0);
        assert_eq!(s.on_qlen(&pp, MS, 6).timer, TimerCmd::Cancel);
        assert_eq!(
            s.on_qlen(&pp, 2 * MS, 5).timer,
            TimerCmd::Arm(2 * MS + HOLD)
        );
        assert_eq!(s.on_qlen(&pp, 9 * MS, 8).timer, TimerCmd::Cancel);
        assert_eq!(
            s.on_qlen(&pp, 11 * MS, 2).timer,
            TimerCmd::Arm(11 * MS + HOLD)
        );
        // A stale event of the first arming does nothing.
        assert!(!s.on_timer(HOLD).changed);
        assert!(!s.ba());
        assert!(s.on_timer(11 * MS + HOLD).changed);
        assert!(s.ba());
        // Once BA = 1, further small queues keep it without a timer.
        assert_eq!(s.on_qlen(&pp, 30 * MS, 3), BaOutput::NONE);
        assert!(s.ba());
    }

    #[test]
    fn other_threshold_and_hold() {
        let pp = BaParams {
            qlen_threshold_frames: 1,
            hold_ps: 3 * MS,
        };
        let mut s = sensor(true, None);
        // With threshold 1 any queued frame clears BA.
        assert!(s.on_qlen(&pp, NOW, 1).changed);
        assert_eq!(s.on_qlen(&pp, NOW, 0).timer, TimerCmd::Arm(NOW + 3 * MS));
    }
}
