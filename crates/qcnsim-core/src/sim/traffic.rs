//! Traffic sources and the per-flow rate limiter (the reaction point's pacer).

use super::*;

impl<'a> Sim<'a> {
    // ---------------------------------------------------------------- traffic sources

    /// Create the flow's next frame, born at `t` (its scheduled generation time), and advance
    /// the generator to the following one.
    pub(super) fn make_frame(&mut self, fi: usize, t: SimTime) -> u32 {
        let f = &mut self.flows[fi];
        let size = Self::next_size(f);
        Self::advance(f, t, size);
        self.live_data += 1;
        self.alloc(Pkt {
            born: t,
            size,
            flow: fi as u32,
            hop: 0,
            kind: KIND_DATA,
            fb: 0,
            cpid: NO_CPID,
            at: 0,
            special: false,
        })
    }

    /// Size of the flow's next frame: a full frame, or a finite flow's remainder (at least 64 B).
    #[inline(always)]
    fn next_size(f: &Flow) -> u32 {
        match f.size {
            Some(total) if total - f.gen_bytes < f.frame as u64 => {
                ((total - f.gen_bytes) as u32).max(64)
            }
            _ => f.frame,
        }
    }

    /// Count a frame of `size` bytes generated at `t` and set the time of the next one.
    #[inline(always)]
    fn advance(f: &mut Flow, t: SimTime, size: u32) {
        f.gen_bytes += size as u64;
        f.gen_frames += 1;
        f.gen_k += 1;
        let more = f.size.is_none_or(|total| f.gen_bytes < total);
        f.next_gen = NEVER;
        if more {
            let next = match f.traffic {
                // k-th frame at start + k*frame*8/rate, computed without accumulating error
                Traffic::Cbr => Self::cbr_due(f, f.gen_k),
                Traffic::Bernoulli => t + (1 + f.rng.geometric(f.p)) * f.slot_ps,
                Traffic::Poisson => t + Self::poisson_gap(f),
                // one frame time after this frame entered (it may have waited, see `refill`)
                Traffic::Greedy => t + round_ps(f.cbr_gap_ps),
            };
            if next < f.stop {
                f.next_gen = next;
            }
        }
    }

    /// Generation instant of a CBR flow's frame `k`.
    #[inline]
    fn cbr_due(f: &Flow, k: u64) -> SimTime {
        f.start + round_ps(units::u64_f64(k) * f.cbr_gap_ps)
    }

    pub(super) fn on_gen(&mut self, fi: usize) {
        let pkt = self.make_frame(fi, self.now);
        self.rl_offer(fi, pkt);
        self.schedule_gen(fi);
    }

    /// Schedule the next generation event, unless the rate limiter is backlogged: then the
    /// generator runs lazily (see [`Sim::catch_up`]), which saves one event per frame.
    #[inline]
    pub(super) fn schedule_gen(&mut self, fi: usize) {
        let f = &mut self.flows[fi];
        // A greedy source is always generated lazily: it waits at a full queue (see `catch_up`
        // and `refill`), so a generation event only ever finds its queue empty.
        if (self.lazy_gen || f.traffic == Traffic::Greedy) && !f.rl_q.is_empty() {
            f.gen_lazy = true;
        } else {
            f.gen_lazy = false;
            if f.next_gen != NEVER {
                self.q.push(f.next_gen, Ev::Gen { flow: fi as u32 });
            }
        }
    }

    /// While a flow's rate-limiter queue is not empty, nothing but its own departures removes
    /// frames from it, so frames generated since the last departure can be appended (or
    /// dropped, when the queue is full) in generation order at the next departure, with the
    /// same outcome as one event per frame. Frames generated at the departure instant itself
    /// are taken first.
    #[inline]
    pub(super) fn catch_up(&mut self, fi: usize, now: SimTime) {
        while self.flows[fi].gen_lazy && self.flows[fi].next_gen <= now {
            let f = &self.flows[fi];
            if !Self::rl_room(f) {
                if f.traffic == Traffic::Greedy {
                    // a greedy source waits for room instead of losing the frame
                    return;
                }
                if self.count_drops && self.skip_dropped(fi, now) {
                    continue;
                }
            }
            let t = self.flows[fi].next_gen;
            let pkt = self.make_frame(fi, t);
            self.rl_enqueue(fi, pkt);
        }
    }

    /// The flow's next frame fits in its rate-limiter queue.
    #[inline]
    fn rl_room(f: &Flow) -> bool {
        f.rl_q_bytes + Self::next_size(f) as u64 <= f.rl_cap
    }

    /// The flow's rate-limiter queue is full for its next frame: count that frame and every
    /// following one due by `limit` as dropped at the source without building them, exactly as
    /// generating and dropping them one by one would (same counters, same random draws, same
    /// next generation instant). Only full-size frames are skipped (a finite flow's shorter
    /// last frame may still fit; the caller builds it). Returns false when nothing was skipped.
    #[inline(never)]
    fn skip_dropped(&mut self, fi: usize, limit: SimTime) -> bool {
        let f = &mut self.flows[fi];
        let frame = f.frame as u64;
        // full-size frames the source has left to generate
        let full_left = f
            .size
            .map_or(u64::MAX, |total| (total - f.gen_bytes) / frame);
        if full_left == 0 {
            return false;
        }
        if f.traffic == Traffic::Cbr {
            // CBR: frame k is due at cbr_due(k), non-decreasing in k; the last one due by the
            // limit (and before `stop`, as the next instant always is) in O(1)
            let lim = limit.min(f.stop - 1);
            let k0 = f.gen_k;
            let est = (units::u64_f64(lim - f.start) / f.cbr_gap_ps) as u64;
            let mut k = est.max(k0);
            while k > k0 && Self::cbr_due(f, k) > lim {
                k -= 1;
            }
            while Self::cbr_due(f, k + 1) <= lim {
                k += 1;
            }
            let n = (k - k0 + 1).min(full_left);
            // every frame but the last is followed by another due before `stop`
            f.gen_bytes += (n - 1) * frame;
            f.gen_frames += n - 1;
            f.gen_k += n - 1;
            f.rl_drops += n - 1;
            let t = f.next_gen;
            Self::advance(f, t, frame as u32);
            f.rl_drops += 1;
        } else {
            // random arrivals: one draw per frame, as when each is generated
            let mut n = 0;
            while f.next_gen <= limit && n < full_left {
                let t = f.next_gen;
                Self::advance(f, t, frame as u32);
                f.rl_drops += 1;
                n += 1;
            }
        }
        true
    }

    /// A departure freed room: a greedy source's waiting frame (due by `now`) enters the
    /// queue now, born now; its next frame is due one frame time later. (It is added before the
    /// RP hears of the departure: an always-backlogged source never leaves the queue empty.)
    fn refill(&mut self, fi: usize, now: SimTime) {
        while self.flows[fi].gen_lazy
            && self.flows[fi].next_gen <= now
            && Self::rl_room(&self.flows[fi])
        {
            let pkt = self.make_frame(fi, now);
            let f = &mut self.flows[fi];
            f.rl_q_bytes += self.pkts[pkt as usize].size as u64;
            f.rl_q.push_back(pkt);
        }
    }

    // ---------------------------------------------------------------- rate limiter

    pub(super) fn rl_limited(f: &Flow) -> bool {
        f.rp.as_ref().is_some_and(|rp| rp.is_active())
    }

    /// No frame leaves the rate limiter before this time (a BCN(0,0) back-off; 0 = none).
    #[inline]
    pub(super) fn rl_hold(f: &Flow) -> SimTime {
        f.rp.as_ref().map_or(0, |rp| rp.hold_until())
    }

    /// A new frame from the source enters the flow's rate limiter.
    pub(super) fn rl_offer(&mut self, fi: usize, pkt: u32) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let size = self.pkts[pkt as usize].size;
        if !Self::rl_limited(f) && f.rl_q.is_empty() {
            self.hand_to_nic(fi, pkt);
            return;
        }
        if !f.gated && f.rl_q.is_empty() && Self::rl_hold(f) <= now && f.bucket.try_take(now, size)
        {
            self.leave_rl(fi, pkt, true);
            return;
        }
        self.rl_enqueue(fi, pkt);
    }

    /// Append a frame to the rate-limiter queue, or drop it when the queue is full.
    pub(super) fn rl_enqueue(&mut self, fi: usize, pkt: u32) {
        let f = &mut self.flows[fi];
        let size = self.pkts[pkt as usize].size;
        if f.rl_q_bytes + size as u64 > f.rl_cap {
            f.rl_drops += 1;
            self.release(pkt);
            return;
        }
        f.rl_q.push_back(pkt);
        f.rl_q_bytes += size as u64;
        // A new head needs a departure time. (While the queue is not empty a departure is
        // always pending, except inside `on_rl_release`, which schedules the next one itself.)
        if f.rl_q.len() == 1 && !f.rl_timer.is_armed() && !f.gated {
            self.schedule_rl(fi);
        }
    }

    /// Schedule the departure of the head of the RL queue from the token balance and CR.
    pub(super) fn schedule_rl(&mut self, fi: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let Some(&head) = f.rl_q.front() else {
            f.rl_timer.cancel();
            return;
        };
        let at = f
            .bucket
            .ready_at(now, self.pkts[head as usize].size)
            .max(Self::rl_hold(f));
        self.arm_rl(fi, at);
    }

    #[inline]
    pub(super) fn arm_rl(&mut self, fi: usize, at: SimTime) {
        let f = &mut self.flows[fi];
        if f.gated && Self::rl_limited(f) {
            // the NIC is paused: the rate limiter sends nothing until the resume
            f.rl_timer.cancel();
            return;
        }
        if let Some(gen) = self.flows[fi].rl_timer.arm(at) {
            self.q.push(
                at,
                Ev::RlRelease {
                    flow: fi as u32,
                    gen,
                },
            );
        }
    }

    pub(super) fn on_rl_release(&mut self, fi: usize) {
        let now = self.now;
        self.catch_up(fi, now);
        let f = &mut self.flows[fi];
        let Some(pkt) = f.rl_q.pop_front() else {
            return;
        };
        let size = self.pkts[pkt as usize].size;
        f.rl_q_bytes -= size as u64;
        if Self::rl_limited(f) {
            f.bucket.take(now, size);
        }
        if f.traffic == Traffic::Greedy {
            self.refill(fi, now);
        }
        let f = &self.flows[fi];
        let empty = f.rl_q.is_empty();
        self.leave_rl(fi, pkt, empty);
        if self.flows[fi].gen_lazy && self.flows[fi].rl_q.is_empty() {
            self.schedule_gen(fi);
        }
        let f = &self.flows[fi];
        if !f.rl_q.is_empty() && !f.rl_timer.is_armed() {
            if Self::rl_limited(f) {
                self.schedule_rl(fi);
            } else {
                // limiter released with frames waiting: drain at once
                self.arm_rl(fi, now);
            }
        }
    }

    /// A frame leaves the rate limiter: tell the RP, then hand it to the NIC.
    pub(super) fn leave_rl(&mut self, fi: usize, pkt: u32, rl_empty: bool) {
        let now = self.now;
        let size = self.pkts[pkt as usize].size;
        if let Some(rp) = self.flows[fi].rp.as_ref() {
            // a new data frame is untagged (NO_CPID == NONE): only a tag is written
            let tag = rp.tag();
            if tag != NONE {
                self.pkts[pkt as usize].cpid = tag;
            }
        }
        if self.flows[fi].tx.sonar_on() {
            self.sonar_on_send(fi, pkt);
        }
        self.hand_to_nic(fi, pkt);
        let f = &mut self.flows[fi];
        if let Some(rp) = f.rp.as_mut() {
            let out = rp.on_frame_sent(now, size, rl_empty);
            self.rp_output(fi, out, now);
        }
    }

    /// Apply what the RP asked for: re-arm or cancel its timer, re-pace on a rate change.
    #[inline]
    pub(super) fn rp_output(&mut self, fi: usize, out: RpOutput, now: SimTime) {
        // most outputs (a frame sent within a byte-counter cycle) ask for nothing
        if out.timer != TimerCmd::Keep || out.rate_changed {
            self.rp_apply(fi, out, now);
        }
    }

    #[inline(never)]
    fn rp_apply(&mut self, fi: usize, out: RpOutput, now: SimTime) {
        let f = &mut self.flows[fi];
        match out.timer {
            TimerCmd::Keep => {}
            TimerCmd::Arm(at) => {
                let at = at.max(now);
                if let Some(gen) = f.rp_timer.arm(at) {
                    self.q.push(
                        at,
                        Ev::RpTimer {
                            flow: fi as u32,
                            gen,
                        },
                    );
                }
            }
            TimerCmd::Cancel => f.rp_timer.cancel(),
        }
        if out.rate_changed {
            let Some(rp) = f.rp.as_ref() else { return };
            // the tokens earned so far are banked at the old rate
            f.bucket.set_rate(now, rp.current_rate());
            if f.rl_timer.is_armed() && !f.rl_q.is_empty() {
                self.schedule_rl(fi);
            }
        }
    }
}
