//! Deterministic random-number streams.
//!
//! Every model that draws random numbers owns its own stream, derived from the master seed and a
//! [`StreamId`] (entity kind, entity index, purpose). Adding a draw in one model therefore never
//! shifts another model's draws, and the same scenario and seed always give the same run. The
//! generator is xoshiro256++ (Blackman & Vigna), seeded through SplitMix64; both are
//! public-domain algorithms, written here from their published descriptions.

/// Identifies one random stream: which kind of entity, which instance, which purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId {
    pub kind: u32,
    pub index: u32,
    pub purpose: u32,
}

impl StreamId {
    pub const fn new(kind: u32, index: u32, purpose: u32) -> Self {
        StreamId {
            kind,
            index,
            purpose,
        }
    }
}

/// Stream kinds (the `kind` of a [`StreamId`]). Append only: renumbering changes every run.
pub mod kinds {
    pub const CP: u32 = 1;
    pub const RP: u32 = 2;
    pub const SOURCE: u32 = 3;
    pub const BCN_CP: u32 = 4;
    pub const BCN_RP: u32 = 5;
    pub const NIC_FB: u32 = 6;
    /// Per-packet spraying: the equal-cost port of each data frame at each switch.
    pub const SPRAY: u32 = 7;
    /// Generated workloads (flow arrivals, sizes, destinations), one stream per workload.
    pub const WORKLOAD: u32 = 8;
    /// DCQCN ECN marking, one stream per marking port.
    pub const ECN: u32 = 9;
}

#[inline]
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A stream derived from the master seed and a stream id.
    pub fn stream(master_seed: u64, id: StreamId) -> Rng {
        let mut sm = master_seed;
        let mut mix = splitmix64(&mut sm);
        for part in [id.kind as u64, id.index as u64, id.purpose as u64] {
            let mut t = mix ^ part.wrapping_mul(0xD6E8_FEB8_6659_FD93);
            mix = splitmix64(&mut t);
        }
        Rng::from_seed(mix)
    }

    pub fn from_seed(seed: u64) -> Rng {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    #[inline]
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// Exponential with the given mean.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so the log is finite.
        -mean * (1.0 - self.next_f64()).ln()
    }

    /// True with probability p.
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }

    /// Number of failures before the first success of a Bernoulli(p) trial sequence.
    #[inline]
    pub fn geometric(&mut self, p: f64) -> u64 {
        if p >= 1.0 {
            return 0;
        }
        let u = 1.0 - self.next_f64();
        (u.ln() / (1.0 - p).ln()).floor() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a1: Vec<u64> = {
            let mut r = Rng::stream(7, StreamId::new(1, 0, 0));
            (0..5).map(|_| r.next_u64()).collect()
        };
        let a2: Vec<u64> = {
            let mut r = Rng::stream(7, StreamId::new(1, 0, 0));
            (0..5).map(|_| r.next_u64()).collect()
        };
        let b: Vec<u64> = {
            let mut r = Rng::stream(7, StreamId::new(1, 1, 0));
            (0..5).map(|_| r.next_u64()).collect()
        };
        let c: Vec<u64> = {
            let mut r = Rng::stream(8, StreamId::new(1, 0, 0));
            (0..5).map(|_| r.next_u64()).collect()
        };
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }

    #[test]
    fn uniform_stays_in_range_with_the_right_mean() {
        let mut r = Rng::from_seed(1);
        let n = 100_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let x = r.uniform(0.85, 1.15);
            assert!((0.85..1.15).contains(&x));
            sum += x;
        }
        let mean = sum / n as f64;
        assert!((mean - 1.0).abs() < 0.002, "mean {mean}");
    }

    #[test]
    fn geometric_mean_matches() {
        let mut r = Rng::from_seed(3);
        let p = 0.25;
        let n = 200_000;
        let s: u64 = (0..n).map(|_| r.geometric(p)).sum();
        let mean = s as f64 / n as f64;
        // mean failures = (1-p)/p = 3
        assert!((mean - 3.0).abs() < 0.05, "mean {mean}");
    }
}
