//! Traffic sources and the per-flow rate limiter (the reaction point's pacer).

use crate::sim::prelude::*;

impl<'a> Sim<'a> {
    // ---------------------------------------------------------------- traffic sources

    /// Make the flow's next frame, born at `t` (its scheduled generation time), and advance
    /// the generator to the following one. It enters the arena when it leaves the rate limiter
    /// ([`Sim::admit`]).
    #[inline(always)]
    pub(in crate::sim) fn make_frame(&mut self, fi: usize, t: SimTime) -> Made {
        let f = &mut self.core.flows[fi];
        let size = Self::next_size(f);
        // a go-back-N frame's sequence number (< 2^31, bounded by the reader)
        let seq = if f.gbn != NONE { f.gen_k as u32 } else { NONE };
        Self::advance(f, t, size);
        if seq != NONE {
            // the sender counts retransmissions
            self.hook_made(fi, seq, size);
        }
        Made { born: t, size, seq }
    }

    /// A made frame of flow `fi` leaves its rate limiter: a data frame in the arena. A go-back-N
    /// frame carries its sequence number and [`FLAG_GBN`]; in a gated run (`GATED`: sim/fastpath.rs)
    /// an HPCC frame its INT bytes. A frame leaving through the limiter (`tagged`: `leave_rl`
    /// follows) takes the RP's tag (BCN's CPID; a new data frame is untagged otherwise,
    /// NO_CPID == NONE). The flow counts it sent (it goes to the NIC, [`Sim::hand_to_nic`],
    /// next: nothing between reads the counts). Returns the frame, its size and its NIC.
    #[inline(always)]
    pub(in crate::sim) fn admit<const GATED: bool>(
        &mut self,
        fi: usize,
        m: Made,
        tagged: bool,
    ) -> Admitted {
        let gbn = m.seq != NONE;
        self.core.live_data += 1;
        let f = &mut self.core.flows[fi];
        // a round-robin flow's frame goes to the NIC: the next waits until it starts
        let qp = if f.rr {
            f.at_nic = true;
            FLAG_QP
        } else {
            0
        };
        // (an ungated run has no INT bytes: `Needs::gates_departures`; a test that drops that
        // answer sees the frames without them, `Sim::fast_path_bypasses`)
        let int_bytes = if GATED { f.int_bytes } else { 0 };
        let size = m.size + int_bytes;
        let cpid = match f.rp.as_ref() {
            Some(rp) if tagged => rp.tag(),
            _ => NO_CPID,
        };
        f.sent_frames += 1;
        f.sent_bytes += size as u64;
        let (nic, rep_fb) = (f.path[0] as usize, f.rep_fb);
        let pkt = self.core.alloc(Pkt {
            born: m.born,
            size,
            flow: fi as u32,
            hop: 0,
            kind: KIND_DATA,
            fb: if gbn { m.seq as i32 } else { 0 },
            cpid,
            at: 0,
            flags: if gbn { FLAG_GBN | qp } else { qp },
        });
        Admitted {
            pkt,
            size,
            nic,
            rep_fb,
        }
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

    /// A Poisson source's gap to its next frame (exponential with the mean frame time at its
    /// rate, rounded to the picosecond, at least 1 ps).
    pub(in crate::sim) fn poisson_gap(f: &mut Flow) -> SimTime {
        let mean = f.frame as f64 * 8.0 * units::SEC as f64 / f.rate_bps;
        (f.rng.exponential(mean).round() as SimTime).max(1)
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
                Traffic::Greedy => t + f.greedy_gap,
            };
            if next < f.stop {
                f.next_gen = next;
            }
        }
    }

    /// Generation instant of a CBR flow's frame `k`.
    #[inline]
    fn cbr_due(f: &Flow, k: u64) -> SimTime {
        f.cbr_t0 + round_ps(units::u64_f64(k) * f.cbr_gap_ps)
    }

    /// The departure timer of flow `fi`'s rate limiter may fire.
    #[inline(always)]
    pub(in crate::sim) fn on_rl_timer<const GATED: bool>(&mut self, flow: u32, gen: u32) {
        match self.core.flows[flow as usize]
            .rl_timer
            .popped(self.core.now, gen)
        {
            Popped::Fire => self.on_rl_release::<GATED>(flow as usize),
            Popped::Requeue(t) => self.core.q.push(t, Ev::RlRelease { flow, gen }),
            Popped::Stale => {}
        }
    }

    pub(in crate::sim) fn on_gen<const GATED: bool>(&mut self, fi: usize) {
        if self.core.flows[fi].next_gen != self.core.now {
            // this instant's frame was already generated by a departure at the same instant
            // (`eager_catch_up`); the next generation event is queued
            return;
        }
        let m = self.make_frame(fi, self.core.now);
        self.rl_offer::<GATED>(fi, m);
        self.schedule_gen(fi);
    }

    /// Schedule the next generation event, unless the rate limiter is backlogged: then the
    /// generator runs lazily (see [`Sim::catch_up`]), which saves one event per frame.
    #[inline]
    pub(in crate::sim) fn schedule_gen(&mut self, fi: usize) {
        let f = &mut self.core.flows[fi];
        // A waiting source (greedy, or a NIC holding a message) is always generated lazily: it
        // waits at a full queue (see `catch_up` and `refill`), so a generation event only ever
        // finds its queue empty.
        if (self.core.lazy_gen || f.waits) && !f.rl_q.is_empty() {
            f.gen_lazy = true;
        } else {
            f.gen_lazy = false;
            if f.next_gen != NEVER {
                self.core.q.push(f.next_gen, Ev::Gen { flow: fi as u32 });
            }
        }
    }

    /// While a flow's rate-limiter queue is not empty, nothing but its own departures removes
    /// frames from it, so frames generated since the last departure can be appended (or
    /// dropped, when the queue is full) in generation order at the next departure, with the
    /// same outcome as one event per frame. Frames generated at the departure instant itself
    /// are taken first.
    #[inline]
    pub(in crate::sim) fn catch_up(&mut self, fi: usize, now: SimTime) {
        while self.core.flows[fi].gen_lazy && self.core.flows[fi].next_gen <= now {
            let f = &self.core.flows[fi];
            if !Self::rl_room(f) {
                if f.waits {
                    // a greedy source or a NIC holding a message waits for room instead of
                    // losing the frame
                    return;
                }
                if self.core.count_drops && self.skip_dropped(fi, now) {
                    continue;
                }
            }
            let t = self.core.flows[fi].next_gen;
            let m = self.make_frame(fi, t);
            self.rl_enqueue(fi, m);
        }
    }

    /// One event per frame (the check of [`Sim::catch_up`]): a frame due at the instant of a
    /// departure enters the queue before the departure, whatever the order in which the two
    /// events were queued — the tie rule the lazy generator follows. Its generation event,
    /// still queued for this instant, finds the frame made and does nothing (`on_gen`).
    fn eager_catch_up(&mut self, fi: usize, now: SimTime) {
        let f = &self.core.flows[fi];
        if f.waits {
            // a waiting source is generated lazily in both modes (it waits at a full queue)
            if f.gen_lazy && f.next_gen <= now && Self::rl_room(f) {
                self.catch_up(fi, now);
            }
            return;
        }
        if f.waits || f.gen_lazy || f.next_gen != now {
            return;
        }
        while self.core.flows[fi].next_gen == now {
            let m = self.make_frame(fi, now);
            self.rl_enqueue(fi, m);
        }
        let next = self.core.flows[fi].next_gen;
        if next != NEVER {
            self.core.q.push(next, Ev::Gen { flow: fi as u32 });
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
        let f = &mut self.core.flows[fi];
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
            let est = (units::u64_f64(lim - f.cbr_t0) / f.cbr_gap_ps) as u64;
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

    /// A departure freed room: a waiting source's frame (due by `now`) enters the queue now,
    /// born now; a greedy source's next frame is due one frame time later, another source's at
    /// its own schedule. (It is added before the RP hears of the departure: an always-backlogged
    /// source never leaves the queue empty.)
    #[inline(always)]
    fn refill(&mut self, fi: usize, now: SimTime) {
        while self.core.flows[fi].gen_lazy
            && self.core.flows[fi].next_gen <= now
            && Self::rl_room(&self.core.flows[fi])
        {
            let m = self.make_frame(fi, now);
            let f = &mut self.core.flows[fi];
            f.rl_q_bytes += m.size as u64;
            f.rl_q.push_back(m);
        }
    }

    // ---------------------------------------------------------------- rate limiter

    /// A new frame from the source enters the flow's rate limiter. (`GATED`: an acknowledged
    /// flow's window may hold it; without, no flow has one: sim/fastpath.rs.)
    pub(in crate::sim) fn rl_offer<const GATED: bool>(&mut self, fi: usize, m: Made) {
        let now = self.core.now;
        if GATED && self.core.flows[fi].e2e && !self.hook_window(fi, m.seq) {
            return self.rl_enqueue(fi, m);
        }
        let f = &mut self.core.flows[fi];
        if !Core::rl_limited(f) && f.rl_q.is_empty() && !f.at_nic {
            let a = self.admit::<GATED>(fi, m, false);
            self.hand_to_nic(fi, a);
            return;
        }
        if !f.gated
            && !f.at_nic
            && f.rl_q.is_empty()
            && Core::rl_hold(f) <= now
            && f.bucket.try_take(now, m.size)
        {
            let a = self.admit::<GATED>(fi, m, true);
            self.leave_rl(fi, a, true);
            return;
        }
        self.rl_enqueue(fi, m);
    }

    /// Append a frame to the rate-limiter queue, or drop it when the queue is full.
    pub(in crate::sim) fn rl_enqueue(&mut self, fi: usize, m: Made) {
        let f = &mut self.core.flows[fi];
        if f.rl_q_bytes + m.size as u64 > f.rl_cap {
            f.rl_drops += 1;
            return;
        }
        f.rl_q.push_back(m);
        f.rl_q_bytes += m.size as u64;
        // A new head needs a departure time. (While the queue is not empty a departure is
        // always pending, except inside `on_rl_release`, which schedules the next one itself.)
        if f.rl_q.len() == 1 && !f.rl_timer.is_armed() && !f.gated {
            self.core.schedule_rl(fi);
        }
    }

    pub(in crate::sim) fn on_rl_release<const GATED: bool>(&mut self, fi: usize) {
        let now = self.core.now;
        if self.core.lazy_gen {
            // the loop's first test, without the call: a greedy source at its full queue (the
            // common case of `traffic = "greedy"`) makes nothing here
            let f = &self.core.flows[fi];
            if f.gen_lazy && f.next_gen <= now && (!f.waits || Self::rl_room(f)) {
                self.catch_up(fi, now);
            }
        } else {
            self.eager_catch_up(fi, now);
        }
        let f = &self.core.flows[fi];
        if GATED && f.e2e && !self.hook_window(fi, f.rl_q.front().map_or(0, |m| m.seq)) {
            // the window is full: the ACK that opens it wakes the rate limiter (sim/cc/e2e.rs)
            return;
        }
        let f = &mut self.core.flows[fi];
        let Some(m) = f.rl_q.pop_front() else {
            return;
        };
        let size = Core::queued_size(f, &m);
        f.rl_q_bytes -= size as u64;
        if Core::rl_limited(f) {
            f.bucket.take(now, size);
        }
        if f.waits {
            self.refill(fi, now);
        }
        let empty = self.core.flows[fi].rl_q.is_empty();
        let a = self.admit::<GATED>(fi, m, true);
        self.leave_rl(fi, a, empty);
        // (the flow read once: `schedule_gen` leaves the queue as it is)
        let f = &self.core.flows[fi];
        if f.rl_q.is_empty() {
            if f.gen_lazy {
                self.schedule_gen(fi);
            }
        } else if !f.rl_timer.is_armed() {
            if Core::rl_limited(f) {
                self.core.schedule_rl_inline(fi);
            } else {
                // limiter released with frames waiting: drain at once
                self.core.arm_rl(fi, now);
            }
        }
    }

    /// A frame leaves the rate limiter: the departure hook, the NIC (and, where arrivals are
    /// folded, the switch's queue: its feedback waits for an event), then the RP counts it.
    #[inline(always)]
    pub(in crate::sim) fn leave_rl(&mut self, fi: usize, a: Admitted, rl_empty: bool) {
        let now = self.core.now;
        let size = a.size;
        // (the RP's tag is in the frame: `admit`)
        self.hook_departure(fi, a.pkt);
        self.hand_to_nic(fi, a);
        let f = &mut self.core.flows[fi];
        if let Some(rp) = f.rp.as_mut() {
            let out = rp.on_frame_sent(now, size, rl_empty);
            self.core.rp_output(fi, out, now);
        }
    }
}

/// The rate limiter's pacing and the reaction point's commands to it: the data path's own
/// (they touch the flow's bucket, its timers and the event queue only).
impl Core<'_> {
    pub(in crate::sim) fn rl_limited(f: &Flow) -> bool {
        f.rp.as_ref().is_some_and(|rp| rp.is_active())
    }

    /// No frame leaves the rate limiter before this time (a BCN(0,0) back-off; 0 = none).
    #[inline]
    pub(in crate::sim) fn rl_hold(f: &Flow) -> SimTime {
        f.rp.as_ref().map_or(0, |rp| rp.hold_until())
    }

    /// Schedule the departure of the head of the RL queue from the token balance and CR.
    #[inline(never)]
    pub(in crate::sim) fn schedule_rl(&mut self, fi: usize) {
        self.schedule_rl_inline(fi)
    }

    /// [`Core::schedule_rl`] inlined into its caller (a departure's own re-pacing).
    #[inline(always)]
    fn schedule_rl_inline(&mut self, fi: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        let Some(head) = f.rl_q.front() else {
            f.rl_timer.cancel();
            return;
        };
        let size = Self::queued_size(f, head);
        let at = f.bucket.ready_at(now, size).max(Self::rl_hold(f));
        Self::arm_flow(&mut self.q, f, fi, at);
    }

    /// The size of a frame in the flow's rate-limiter queue. Every frame of an open-ended source
    /// is a full frame: its size is taken from the flow, so the departure time does not wait for
    /// the queue's ring to be read (its next line comes from the second-level cache once per
    /// four frames of a full queue; docs/performance.md, "Greedy sources, fifth round").
    #[inline(always)]
    fn queued_size(f: &Flow, m: &Made) -> u32 {
        // (what `next_size` made it)
        debug_assert!(f.size.is_some() || m.size == f.frame);
        if f.size.is_none() {
            f.frame
        } else {
            m.size
        }
    }

    #[inline(always)]
    pub(in crate::sim) fn arm_rl(&mut self, fi: usize, at: SimTime) {
        Self::arm_flow(&mut self.q, &mut self.flows[fi], fi, at);
    }

    /// [`Core::arm_rl`] with flow `fi` (`f`) already at hand (read once).
    #[inline(always)]
    fn arm_flow(q: &mut EventQueue<Ev>, f: &mut Flow, fi: usize, at: SimTime) {
        if (f.gated && Self::rl_limited(f)) || f.at_nic {
            // the NIC is paused: the rate limiter sends nothing until the resume; or the NIC
            // holds this round-robin flow's last frame: the next waits until it starts
            f.rl_timer.cancel();
            return;
        }
        if let Some(gen) = f.rl_timer.arm(at) {
            q.push(
                at,
                Ev::RlRelease {
                    flow: fi as u32,
                    gen,
                },
            );
        }
    }

    /// Apply what the RP asked for: re-arm or cancel its timer, re-pace on a rate change.
    #[inline]
    pub(in crate::sim) fn rp_output(&mut self, fi: usize, out: RpOutput, now: SimTime) {
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

    /// A frame of round-robin flow `fi` started its transmission at the source NIC: the
    /// flow's next frame may leave its rate limiter now (or when the limiter allows), and
    /// joins the NIC's queue behind the other flows' frames (round-robin service).
    #[inline(never)]
    pub(in crate::sim) fn qp_sent(&mut self, fi: usize) {
        let now = self.now;
        let f = &mut self.flows[fi];
        f.at_nic = false;
        if !f.rl_q.is_empty() && !f.rl_timer.is_armed() {
            if Self::rl_limited(f) {
                self.schedule_rl(fi);
            } else {
                self.arm_rl(fi, now);
            }
        }
    }
}
