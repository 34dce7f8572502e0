//! NIC-side Fb computation, the QCN hardware-study variant. See
//! docs/models/qcn-nic-feedback.md.
//!
//! The switch cannot compute Fb at line rate, so the work is split:
//!
//! ```text
//! switch (CP egress queue), on every data frame enqueued (Q including the frame, L):
//!     since += L
//!     if since >= conmes_interval:                  # one ConMes per conmes_interval bytes
//!         since -= conmes_interval                  # the remainder carries over
//!         if since >= conmes_interval: since %= conmes_interval   # (frames > interval)
//!         if Q - L > 0:                             # "only when Qlen > 0": a backlog
//!             send ConMes(Qlen = Q) to the source of this frame
//!
//! NIC (one state per flow), on every ConMes(Qlen):
//!     counted = conmes_interval                     # sample_count = "conmes" (default)
//!             | bytes this flow sent since the last ConMes   # sample_count = "sent"
//!     the CP's sampling rule (proto::qcn_cp::Cp::on_bytes) with Q = Qlen:
//!         time_to_mark -= counted
//!         if time_to_mark < 0:                      # sample instant
//!             Fb = -((Qlen - Qeq) + w*(Qlen - Qlen_old)); qntzFb = quantize(Fb)
//!             Qlen_old = Qlen
//!             time_to_mark = table[qntzFb >> (bits-3)] * base * U(1-j, 1+j)
//!             if qntzFb > 0: ding (the RP reacts exactly as to a CNM carrying qntzFb)
//! ```
//!
//! The Fb formula, quantiser, sampling table and jitter are the CP's own code
//! ([`crate::proto::qcn_cp`]) with the CP's parameters; only the input differs.

use crate::engine::Rng;
use crate::proto::qcn_cp::{Cp, CpParams, CpSample};

/// Where Fb is computed (`cc.qcn.feedback`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// Standard 802.1Qau: the CP samples, computes Fb and sends CNMs.
    Switch,
    /// The hardware-study variant: the switch sends ConMes with Qlen, the NIC computes Fb.
    Nic,
}

/// What the NIC's sampling countdown counts (`cc.qcn.nic.sample_count`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleCount {
    /// Each ConMes stands for `conmes_interval` bytes enqueued at the CP; the NIC counts those
    /// (it samples "the ConMes stream"). Bytes enqueued while the CP queue is empty produce no
    /// ConMes and do not count.
    ConMes,
    /// The NIC counts the bytes its flow has sent; the sample is taken at the first ConMes
    /// after the countdown expired.
    Sent,
}

/// Parameters of the NIC-side variant (`[cc.qcn.nic]`). Qeq, w, the quantiser width, the
/// sampling base, table and jitter are the CP's ([`CpParams`]).
#[derive(Debug, Clone, PartialEq)]
pub struct NicFbParams {
    /// Bytes enqueued at the CP between two ConMes (1 KB in the hardware study).
    pub conmes_interval_bytes: u64,
    /// Size of a ConMes frame on the wire, bytes.
    pub conmes_frame_bytes: u32,
    pub sample_count: SampleCount,
}

impl NicFbParams {
    /// The hardware study's values: a ConMes every 1 KB (1000 B), 64 B frames, the NIC
    /// counting the ConMes stream.
    pub fn standard() -> NicFbParams {
        NicFbParams {
            conmes_interval_bytes: 1000,
            conmes_frame_bytes: 64,
            sample_count: SampleCount::ConMes,
        }
    }
}

/// The switch side: the ConMes generator of one CP queue.
#[derive(Debug, Clone, Default)]
pub struct ConMesGen {
    /// Bytes enqueued since the last ConMes instant (always < the interval between calls).
    since: u64,
}

impl ConMesGen {
    /// A data frame of `frame_bytes` was enqueued; `qlen_bytes` is the queue including it (the
    /// same Q the standard CP uses). Returns `Some(Qlen)` when a ConMes carrying Qlen must go
    /// to the frame's source: at a `conmes_interval` boundary, and only when the frame found a
    /// backlog (`qlen_bytes - frame_bytes > 0`).
    #[inline]
    pub fn on_enqueue(
        &mut self,
        p: &NicFbParams,
        qlen_bytes: u64,
        frame_bytes: u32,
    ) -> Option<u64> {
        self.since += frame_bytes as u64;
        let iv = p.conmes_interval_bytes;
        if self.since < iv {
            return None;
        }
        self.since -= iv;
        if self.since >= iv {
            // a frame longer than the interval: one ConMes for it, the excess is not owed
            self.since %= iv;
        }
        (qlen_bytes > frame_bytes as u64).then_some(qlen_bytes)
    }

    /// Bytes enqueued since the last ConMes instant.
    pub fn since(&self) -> u64 {
        self.since
    }
}

/// The NIC side for one flow: its own `Qlen_old` and sampling countdown (a [`Cp`] fed with
/// reported queue lengths), and the flow's sent-byte total at the previous ConMes.
#[derive(Debug, Clone)]
pub struct NicFb {
    sampler: Cp,
    sent_at_last: u64,
}

impl NicFb {
    /// `Qlen_old = 0`; the first sampling interval is `table[0] * base` with jitter, as the CP.
    pub fn new(cp: &CpParams, rng: Rng) -> NicFb {
        NicFb {
            sampler: Cp::new(cp, rng),
            sent_at_last: 0,
        }
    }

    /// A ConMes reporting `qlen_bytes` reached the NIC; `sent_total` is the flow's byte total
    /// handed to the NIC so far (used by `SampleCount::Sent`). Returns the sample at a sample
    /// instant; the RP gets a ding iff [`CpSample::sends_cnm`] (quantised Fb > 0).
    pub fn on_conmes(
        &mut self,
        cp: &CpParams,
        p: &NicFbParams,
        qlen_bytes: u64,
        sent_total: u64,
    ) -> Option<CpSample> {
        let counted = match p.sample_count {
            SampleCount::ConMes => p.conmes_interval_bytes,
            SampleCount::Sent => sent_total.saturating_sub(self.sent_at_last),
        };
        self.sent_at_last = sent_total;
        self.sampler.on_bytes(cp, qlen_bytes, counted)
    }

    /// The NIC's Qlen at its previous sample, bytes.
    pub fn qlen_old(&self) -> u64 {
        self.sampler.q_old()
    }

    /// Bytes still to be counted before the next sample.
    pub fn time_to_mark(&self) -> f64 {
        self.sampler.time_to_mark()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::qcn_cp::quantize;

    fn cp_exact() -> CpParams {
        CpParams {
            jitter: 0.0,
            ..CpParams::standard()
        }
    }

    /// Qeq 12600 B, w 2: Fbmax = 63000 B, so qntzFb = k exactly for -Fb in [1000k, 1000k+999].
    fn cp_round() -> CpParams {
        CpParams {
            q_eq_bytes: 12_600,
            ..cp_exact()
        }
    }

    fn nic(count: SampleCount) -> NicFbParams {
        NicFbParams {
            sample_count: count,
            ..NicFbParams::standard()
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn standard_params_are_the_hardware_study_values() {
        let p = NicFbParams::standard();
        assert_eq!(p.conmes_interval_bytes, 1000);
        assert_eq!(p.conmes_frame_bytes, 64);
        assert_eq!(p.sample_count, SampleCount::ConMes);
    }

    #[test]
    fn conmes_every_interval_bytes_only_with_a_backlog() {
        let p = NicFbParams::standard();
        // (name, frames as (Q including the frame, L), expected Some(Qlen) per frame)
        type Case = (&'static str, &'static [(u64, u32)], &'static [Option<u64>]);
        let cases: &[Case] = &[
            (
                "312 B frames: the 4th frame crosses 1000 B",
                &[(5_000, 312), (5_312, 312), (5_624, 312), (5_936, 312)],
                &[None, None, None, Some(5_936)],
            ),
            (
                "exactly 1000 B is an instant",
                &[(3_000, 500), (3_500, 500)],
                &[None, Some(3_500)],
            ),
            ("999 B is not", &[(3_000, 499), (3_499, 500)], &[None, None]),
            (
                "no backlog at the instant: no ConMes",
                &[(500, 500), (500, 500)],
                &[None, None],
            ),
            (
                "backlog of one byte is enough",
                &[(500, 500), (501, 500)],
                &[None, Some(501)],
            ),
            (
                "empty-queue instants still consume the interval",
                &[(1_000, 1_000), (2_000, 1_000), (1_000, 1_000)],
                &[None, Some(2_000), None],
            ),
            (
                "a frame longer than the interval sends one ConMes",
                &[(9_000, 9_000), (12_000, 3_000)],
                &[None, Some(12_000)],
            ),
        ];
        for (name, frames, want) in cases {
            let mut g = ConMesGen::default();
            let got: Vec<Option<u64>> = frames
                .iter()
                .map(|(q, l)| g.on_enqueue(&p, *q, *l))
                .collect();
            assert_eq!(&got[..], *want, "{name}");
        }
    }

    #[test]
    fn conmes_remainder_carries_over() {
        // 312 B frames: one ConMes per 1000 B on average, not one per 4 frames (1248 B).
        let p = NicFbParams::standard();
        let mut g = ConMesGen::default();
        let n = (0..10_000)
            .filter(|_| g.on_enqueue(&p, 100_000, 312).is_some())
            .count();
        assert_eq!(n, 3_120); // floor(10000 * 312 / 1000)
        assert_eq!(g.since(), (10_000 * 312) % 1000);
        // Frames longer than the interval: at most one ConMes per frame, remainder bounded.
        let mut g = ConMesGen::default();
        for _ in 0..10 {
            assert!(g.on_enqueue(&p, 100_000, 2_500).is_some());
            assert!(g.since() < 1000);
        }
        // A different interval.
        let p4 = NicFbParams {
            conmes_interval_bytes: 4_000,
            ..p
        };
        let mut g = ConMesGen::default();
        let n = (0..1_000)
            .filter(|_| g.on_enqueue(&p4, 100_000, 1_500).is_some())
            .count();
        assert_eq!(n, 375);
    }

    #[test]
    fn nic_samples_the_conmes_stream_by_the_cp_table() {
        // sample_count = conmes: each ConMes counts 1000 B; the first interval is 150 KB, so
        // 150 ConMes bring the countdown to exactly 0 and the 151st samples.
        let cp = cp_exact();
        let p = nic(SampleCount::ConMes);
        let mut n = NicFb::new(&cp, Rng::from_seed(1));
        for i in 0..150 {
            assert!(n.on_conmes(&cp, &p, 60_000, 0).is_none(), "ConMes {i}");
        }
        assert_eq!(n.time_to_mark(), 0.0);
        let s = n
            .on_conmes(&cp, &p, 60_000, 0)
            .expect("151st ConMes samples");
        // Fb = -((60000 - 26000) + 2*(60000 - 0)) = -154000 -> saturated 63
        assert_eq!(s.fb_raw, -154_000.0);
        assert_eq!(s.qntz_fb, 63);
        assert!(s.sends_cnm());
        assert_eq!(n.qlen_old(), 60_000);
        // next interval from the table for qntzFb 63: 18.5 KB -> 19 ConMes to go below 0
        assert!(close(n.time_to_mark(), 18_500.0));
        let mut k = 0;
        while n.on_conmes(&cp, &p, 60_000, 0).is_none() {
            k += 1;
        }
        assert_eq!(k, 18);
    }

    #[test]
    fn nic_fb_uses_its_own_qlen_old_and_the_cp_quantiser() {
        let cp = cp_round();
        let p = nic(SampleCount::ConMes);
        // (name, Qlen_old, reported Qlen, expected Fb, qntzFb, ding?)
        #[rustfmt::skip]
        let cases: &[(&str, u64, u64, f64, u8, bool)] = &[
            ("static queue at Qeq: Fb 0, no ding", 12_600, 12_600, 0.0, 0, false),
            ("above Qeq, static: one step", 13_600, 13_600, -1_000.0, 1, true),
            ("below Qeq and falling: positive Fb", 20_000, 5_000, 37_600.0, 0, false),
            ("above Qeq but draining fast: no ding", 40_000, 20_000, 32_600.0, 0, false),
            ("below Qeq but growing: ding", 0, 10_000, -17_400.0, 17, true),
            ("just below one step: quantises to 0", 13_599, 13_599, -999.0, 0, false),
            ("saturated", 0, 100_000, -287_400.0, 63, true),
        ];
        for (name, q_old, q, fb, qntz, ding) in cases {
            let mut n = NicFb::new(&cp, Rng::from_seed(2));
            // bring Qlen_old to q_old with a first sample (1 ConMes past a 150 KB countdown)
            let mut first = None;
            while first.is_none() {
                first = n.on_conmes(&cp, &p, *q_old, 0);
            }
            assert_eq!(n.qlen_old(), *q_old, "{name}");
            let mut s = None;
            while s.is_none() {
                s = n.on_conmes(&cp, &p, *q, 0);
            }
            let s = s.unwrap();
            assert_eq!(s.fb_raw, *fb, "{name}");
            assert_eq!(s.qntz_fb, *qntz, "{name}");
            assert_eq!(s.qntz_fb, quantize(&cp, *fb), "{name}: the CP's quantiser");
            assert_eq!(s.sends_cnm(), *ding, "{name}");
            assert_eq!(n.qlen_old(), *q, "{name}: Qlen_old updated at every sample");
        }
    }

    #[test]
    fn nic_sampling_interval_follows_the_table_for_every_bucket() {
        let cp = cp_round();
        let p = nic(SampleCount::ConMes);
        // static reported Qlen: qntzFb = (Qlen - 12600) / 1000; (qntzFb, next interval B)
        #[rustfmt::skip]
        let cases: &[(u8, f64)] = &[
            (0, 150_000.0), (7, 150_000.0), (8, 75_000.0), (16, 50_000.0), (24, 37_500.0),
            (32, 30_000.0), (40, 25_000.0), (48, 21_500.0), (56, 18_500.0), (63, 18_500.0),
        ];
        for (qntz, want) in cases {
            let q = 12_600 + 1_000 * *qntz as u64;
            let mut n = NicFb::new(&cp, Rng::from_seed(3));
            while n.on_conmes(&cp, &p, q, 0).is_none() {}
            let s = loop {
                if let Some(s) = n.on_conmes(&cp, &p, q, 0) {
                    break s;
                }
            };
            assert_eq!(s.qntz_fb, *qntz);
            assert!(
                close(n.time_to_mark(), *want),
                "qntzFb {qntz}: {}",
                n.time_to_mark()
            );
        }
    }

    #[test]
    fn nic_sampling_jitter_is_the_cp_jitter() {
        let cp = CpParams::standard();
        let p = nic(SampleCount::ConMes);
        let firsts: Vec<f64> = (0..200)
            .map(|s| NicFb::new(&cp, Rng::from_seed(s)).time_to_mark())
            .collect();
        assert!(firsts.iter().all(|t| (127_500.0..=172_500.0).contains(t)));
        let lo = firsts.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = firsts.iter().cloned().fold(0.0, f64::max);
        assert!(hi - lo > 30_000.0);
        // jitter 0: exactly 150 ConMes to reach 0
        let cp0 = cp_exact();
        let mut n = NicFb::new(&cp0, Rng::from_seed(7));
        for _ in 0..150 {
            assert!(n.on_conmes(&cp0, &p, 1, 0).is_none());
        }
        assert!(n.on_conmes(&cp0, &p, 1, 0).is_some());
    }

    #[test]
    fn sent_mode_counts_the_flows_own_bytes() {
        let cp = cp_exact();
        let p = nic(SampleCount::Sent);
        // (name, ConMes as (Qlen, flow's sent total), index of the sampling ConMes)
        type Case = (&'static str, &'static [(u64, u64)], Option<usize>);
        let cases: &[Case] = &[
            (
                "countdown 150 KB not yet spent",
                &[(50_000, 10_000), (50_000, 150_000)],
                None,
            ),
            (
                "one byte past 150 KB samples",
                &[(50_000, 10_000), (50_000, 150_001)],
                Some(1),
            ),
            (
                "bytes sent with no ConMes count at the next ConMes",
                &[(50_000, 1_000_000)],
                Some(0),
            ),
            (
                "ConMes themselves count nothing",
                &[(50_000, 0), (50_000, 0), (50_000, 0)],
                None,
            ),
            (
                "total below the last one counts 0",
                &[(50_000, 100_000), (50_000, 90_000)],
                None,
            ),
        ];
        for (name, msgs, want) in cases {
            let mut n = NicFb::new(&cp, Rng::from_seed(4));
            let mut got = None;
            for (i, (q, sent)) in msgs.iter().enumerate() {
                if n.on_conmes(&cp, &p, *q, *sent).is_some() {
                    assert!(got.is_none(), "{name}: sampled twice");
                    got = Some(i);
                }
            }
            assert_eq!(got, *want, "{name}");
        }
        // After a sample the next countdown starts from that ConMes' total.
        let mut n = NicFb::new(&cp, Rng::from_seed(4));
        let s = n.on_conmes(&cp, &p, 60_000, 200_000).unwrap();
        assert_eq!(s.qntz_fb, 63);
        assert!(n.on_conmes(&cp, &p, 60_000, 218_500).is_none());
        assert!(n.on_conmes(&cp, &p, 60_000, 218_501).is_some());
    }

    #[test]
    fn conmes_mode_ignores_the_sent_total() {
        let cp = cp_exact();
        let p = nic(SampleCount::ConMes);
        let mut n = NicFb::new(&cp, Rng::from_seed(5));
        // a huge sent total does not shorten the countdown in conmes mode
        assert!(n.on_conmes(&cp, &p, 60_000, 10_000_000).is_none());
        assert!(close(n.time_to_mark(), 149_000.0));
    }

    #[test]
    fn same_seed_same_samples() {
        let cp = CpParams::standard();
        let p = nic(SampleCount::ConMes);
        let run = |seed| {
            let mut n = NicFb::new(&cp, Rng::from_seed(seed));
            (0..5_000u64)
                .filter_map(|i| {
                    n.on_conmes(&cp, &p, 20_000 + (i * 37) % 50_000, 0)
                        .map(|s| (i, s.qntz_fb))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }
}
