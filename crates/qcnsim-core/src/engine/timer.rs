//! A re-armable timer that keeps at most one live event in the queue in the common case.
//!
//! Rate-limiter departures and RP timers are re-armed far more often than they fire (every CNM
//! restarts the RP timer). Pushing a new event at each re-arm would leave a trail of stale
//! events in the heap for a whole timer period, making every heap operation slower. Instead the
//! timer remembers its deadline and the time of the one event it has queued: a re-arm to a
//! later deadline only moves the deadline (the queued event, when it pops early, re-queues
//! itself at the deadline); a re-arm to an earlier deadline queues a new event and makes the old
//! one stale through a generation counter (lazy cancellation).

use crate::units::SimTime;

pub const NEVER: SimTime = SimTime::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LazyTimer {
    deadline: SimTime,
    queued_at: SimTime,
    gen: u32,
}

/// What to do with a popped timer event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Popped {
    /// The timer expires now.
    Fire,
    /// Push the event again at this time (same generation).
    Requeue(SimTime),
    /// An outdated event: ignore it.
    Stale,
}

impl Default for LazyTimer {
    fn default() -> Self {
        LazyTimer {
            deadline: NEVER,
            queued_at: NEVER,
            gen: 0,
        }
    }
}

impl LazyTimer {
    /// Arm (or re-arm) for `at`. Returns `Some(gen)` when an event must be pushed at `at`.
    #[inline]
    pub fn arm(&mut self, at: SimTime) -> Option<u32> {
        self.deadline = at;
        if at < self.queued_at {
            self.gen = self.gen.wrapping_add(1);
            self.queued_at = at;
            Some(self.gen)
        } else {
            None
        }
    }

    #[inline]
    pub fn cancel(&mut self) {
        self.deadline = NEVER;
    }

    #[inline]
    pub fn is_armed(&self) -> bool {
        self.deadline != NEVER
    }

    #[inline]
    pub fn deadline(&self) -> SimTime {
        self.deadline
    }

    /// An event of this timer with generation `gen` popped at `now`.
    #[inline]
    pub fn popped(&mut self, now: SimTime, gen: u32) -> Popped {
        if gen != self.gen {
            return Popped::Stale;
        }
        self.queued_at = NEVER;
        if self.deadline == NEVER {
            Popped::Stale
        } else if self.deadline > now {
            self.queued_at = self.deadline;
            Popped::Requeue(self.deadline)
        } else {
            self.deadline = NEVER;
            Popped::Fire
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// At time t, arm for Some(deadline) or cancel (None).
    type Ops<'a> = &'a [(SimTime, Option<SimTime>)];

    /// Drive a LazyTimer against a tiny event list and return the times it fired.
    fn drive(ops: &[(SimTime, Option<SimTime>)], until: SimTime) -> Vec<SimTime> {
        // ops: at time t, arm for Some(deadline) or cancel (None)
        let mut timer = LazyTimer::default();
        let mut queue: Vec<(SimTime, u32)> = Vec::new();
        let mut fired = Vec::new();
        let mut op = 0;
        let mut now = 0;
        while now <= until {
            while op < ops.len() && ops[op].0 == now {
                match ops[op].1 {
                    Some(d) => {
                        if let Some(g) = timer.arm(d) {
                            queue.push((d, g));
                        }
                    }
                    None => timer.cancel(),
                }
                op += 1;
            }
            let due: Vec<(SimTime, u32)> = queue.iter().copied().filter(|e| e.0 == now).collect();
            queue.retain(|e| e.0 != now);
            for (_, g) in due {
                match timer.popped(now, g) {
                    Popped::Fire => fired.push(now),
                    Popped::Requeue(t) => queue.push((t, g)),
                    Popped::Stale => {}
                }
            }
            now += 1;
        }
        fired
    }

    #[test]
    fn fires_at_the_last_deadline_set() {
        let cases: &[(Ops, &[SimTime])] = &[
            (&[(0, Some(10))], &[10]),
            // pushed later: moves the deadline, no new event
            (&[(0, Some(10)), (5, Some(20))], &[20]),
            // pulled earlier: new event, old one stale
            (&[(0, Some(10)), (5, Some(7))], &[7]),
            // cancelled
            (&[(0, Some(10)), (5, None)], &[]),
            // cancelled then re-armed later than the queued event
            (&[(0, Some(10)), (5, None), (6, Some(15))], &[15]),
            // re-armed after firing
            (&[(0, Some(3)), (4, Some(8))], &[3, 8]),
            // many re-arms, alternating direction
            (
                &[(0, Some(30)), (1, Some(20)), (2, Some(40)), (3, Some(25))],
                &[25],
            ),
        ];
        for (ops, want) in cases {
            assert_eq!(drive(ops, 100), want.to_vec(), "ops {ops:?}");
        }
    }
}
