//! The rate limiter's pacer: a token bucket filled at the current rate CR.
//!
//! A frame of `size` bytes may leave when the bucket holds `size` tokens (bytes). The depth
//! `burst` bounds how many tokens an idle limiter can save: one frame (the default) gives smooth
//! pacing at CR, a deeper bucket lets back-to-back bursts through (the bursty NIC limiter of the
//! QCN hardware study, docs/models/qcn-nic-feedback.md). When CR changes, the tokens earned so
//! far are banked at the old rate and the bucket continues at the new one, so a cut or a rise
//! takes effect in the middle of a gap rather than one frame late (docs/sources.md, pitfalls of
//! public implementations, 13).

use crate::units::{ceil_ps, u64_f64, SimTime, SEC};

/// Tokens within this many bytes of a frame's size count as enough (float rounding).
const EPS: f64 = 1e-6;

#[derive(Debug, Clone, PartialEq)]
pub struct TokenBucket {
    tokens: f64,
    /// When `tokens` was last brought up to date.
    t: SimTime,
    rate_bps: f64,
    ps_per_byte: f64,
    burst: f64,
    /// The last wait `ready_at` computed, for a frame of `wait_size` bytes with `tokens` (as
    /// bits) `wait_tokens`: the same balance, size and rate give the same wait, and a source
    /// paced at a constant rate asks with the same balance frame after frame (the sliver a
    /// departure leaves repeats), so the stored integer is the answer, exact, without the
    /// multiplication and the rounding up. Empty: size 0 with 0 tokens, whose wait is 0
    /// (`ready_at` gives `now` for it, as computed); `set_rate` empties it when the rate
    /// changes.
    wait_tokens: u64,
    wait_size: u32,
    wait: SimTime,
}

impl TokenBucket {
    /// A full bucket at `rate_bps`, `burst` bytes deep.
    pub fn new(rate_bps: f64, burst: f64, now: SimTime) -> TokenBucket {
        TokenBucket {
            tokens: burst,
            t: now,
            rate_bps,
            ps_per_byte: 8.0 * SEC as f64 / rate_bps,
            burst,
            wait_tokens: 0,
            wait_size: 0,
            wait: 0,
        }
    }

    pub fn rate(&self) -> f64 {
        self.rate_bps
    }

    /// Tokens (bytes) at `now`.
    #[inline]
    pub fn tokens_at(&self, now: SimTime) -> f64 {
        let earned = u64_f64(now - self.t) / self.ps_per_byte;
        // `(self.tokens + earned).min(self.burst)`: the burst is a number, so this is the same
        // value (a NaN sum gives the burst) in one instruction instead of a NaN fix-up sequence
        let tok = self.tokens + earned;
        if tok < self.burst {
            tok
        } else {
            self.burst
        }
    }

    /// Bring `tokens` up to `now`. At the instant it was last settled (a departure's `take`
    /// followed by the next frame's `ready_at`) nothing was earned: the division is skipped, with
    /// the same value (the tokens never exceed the burst).
    #[inline]
    fn settle(&mut self, now: SimTime) {
        if now != self.t {
            self.tokens = self.tokens_at(now);
            self.t = now;
        }
    }

    /// Fill the bucket (a newly allocated rate limiter starts full, `cc.rl_start = "full"`).
    pub fn fill(&mut self, now: SimTime) {
        self.tokens = self.burst;
        self.t = now;
    }

    /// Empty the bucket (`cc.rl_start = "empty"`).
    pub fn empty(&mut self, now: SimTime) {
        self.tokens = 0.0;
        self.t = now;
    }

    /// Change the fill rate at `now`, keeping the tokens earned at the old rate.
    #[inline]
    pub fn set_rate(&mut self, now: SimTime, rate_bps: f64) {
        self.settle(now);
        self.rate_bps = rate_bps;
        let ps_per_byte = 8.0 * SEC as f64 / rate_bps;
        if ps_per_byte.to_bits() != self.ps_per_byte.to_bits() {
            (self.wait_tokens, self.wait_size, self.wait) = (0, 0, 0);
        }
        self.ps_per_byte = ps_per_byte;
    }

    /// Take `size` tokens if the bucket holds them at `now`.
    #[inline]
    pub fn try_take(&mut self, now: SimTime, size: u32) -> bool {
        let tok = self.tokens_at(now);
        if tok + EPS >= size as f64 {
            self.tokens = tok - size as f64;
            self.t = now;
            true
        } else {
            false
        }
    }

    /// Take `size` tokens at a departure time computed by [`TokenBucket::ready_at`]. Rounding
    /// the departure up to a whole picosecond can leave a sliver above zero; a sliver below is
    /// not carried over.
    #[inline]
    pub fn take(&mut self, now: SimTime, size: u32) {
        self.settle(now);
        self.tokens = (self.tokens - size as f64).max(0.0f64.min(self.tokens));
    }

    /// The earliest time at or after `now` when `size` tokens will be there at the current rate.
    #[inline]
    pub fn ready_at(&mut self, now: SimTime, size: u32) -> SimTime {
        self.settle(now);
        if size == self.wait_size && self.tokens.to_bits() == self.wait_tokens {
            return now + self.wait;
        }
        let need = size as f64 - self.tokens;
        if need <= EPS {
            now
        } else {
            let wait = ceil_ps(need * self.ps_per_byte);
            (self.wait_tokens, self.wait_size, self.wait) = (self.tokens.to_bits(), size, wait);
            now + wait
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{MS, US};

    /// Departure times of `n` back-to-back frames of `size` bytes offered at t = 0 to a bucket
    /// at `rate` with depth `burst`, the way the simulator drives it.
    fn departures(rate: f64, burst: f64, size: u32, n: usize) -> Vec<SimTime> {
        let mut b = TokenBucket::new(rate, burst, 0);
        let mut now = 0;
        let mut out = Vec::new();
        for _ in 0..n {
            now = b.ready_at(now, size);
            b.take(now, size);
            out.push(now);
        }
        out
    }

    #[test]
    fn paces_at_the_rate_with_the_burst_allowance() {
        // (rate, burst, frame, expected departures)
        let cases: &[(f64, f64, u32, &[SimTime])] = &[
            // one-frame bucket: the first frame goes at once, then one per 12 us at 1 Gb/s
            (1e9, 1500.0, 1500, &[0, 12 * US, 24 * US, 36 * US]),
            // 0.5 Gb/s: 24 us apart
            (0.5e9, 1500.0, 1500, &[0, 24 * US, 48 * US]),
            // three-frame bucket: a burst of three, then the rate
            (1e9, 4500.0, 1500, &[0, 0, 0, 12 * US, 24 * US]),
            // small frames at 10 Gb/s: 312 B -> 249.6 ns, rounded up to whole ps per gap
            (10e9, 312.0, 312, &[0, 249_600, 499_200]),
        ];
        for (rate, burst, size, want) in cases {
            assert_eq!(
                departures(*rate, *burst, *size, want.len()),
                want.to_vec(),
                "rate {rate} burst {burst}"
            );
        }
    }

    #[test]
    fn a_rate_change_mid_gap_moves_the_departure() {
        // (new rate at 6 us, expected departure of the second frame)
        let cases: &[(f64, SimTime)] = &[
            (2e9, 9 * US),    // 750 B earned at 1G, the other 750 B at 2G take 3 us
            (0.5e9, 18 * US), // the other 750 B at 0.5G take 12 us
            (1e9, 12 * US),   // no change
        ];
        for (new_rate, want) in cases {
            let mut b = TokenBucket::new(1e9, 1500.0, 0);
            assert_eq!(b.ready_at(0, 1500), 0);
            b.take(0, 1500);
            assert_eq!(b.ready_at(0, 1500), 12 * US);
            b.set_rate(6 * US, *new_rate);
            assert_eq!(b.ready_at(6 * US, 1500), *want, "new rate {new_rate}");
        }
    }

    #[test]
    fn the_kept_wait_is_forgotten_when_the_rate_changes() {
        // the same balance (0) and size ask again after a cut to 0.5 Gb/s: 24 us, not the
        // 12 us kept at 1 Gb/s; the same rate set again keeps the answer
        let mut b = TokenBucket::new(1e9, 1500.0, 0);
        b.take(0, 1500);
        assert_eq!(b.ready_at(0, 1500), 12 * US);
        assert_eq!(b.ready_at(0, 1500), 12 * US);
        b.set_rate(0, 0.5e9);
        assert_eq!(b.ready_at(0, 1500), 24 * US);
        b.set_rate(0, 0.5e9);
        assert_eq!(b.ready_at(0, 1500), 24 * US);
        // another size with the same balance is computed, not taken from the kept wait
        assert_eq!(b.ready_at(0, 750), 12 * US);
        assert_eq!(b.ready_at(0, 1500), 24 * US);
        // a size of 0 with an empty bucket (the empty keeper's key) leaves at once
        b.set_rate(0, 1e9);
        assert_eq!(b.ready_at(0, 0), 0);
    }

    #[test]
    fn an_idle_bucket_saves_at_most_its_depth() {
        let mut b = TokenBucket::new(1e9, 3000.0, 0);
        b.take(0, 1500);
        b.take(0, 1500);
        assert!(b.tokens_at(0).abs() < 1e-9);
        // after a long idle time, only `burst` tokens are there
        assert_eq!(b.tokens_at(10 * MS), 3000.0);
        assert!(b.try_take(10 * MS, 1500));
        assert!(b.try_take(10 * MS, 1500));
        assert!(!b.try_take(10 * MS, 1500));
        assert_eq!(b.ready_at(10 * MS, 1500), 10 * MS + 12 * US);
    }
}
