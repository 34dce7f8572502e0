//! IEEE 802.1Qau congestion point (CP). See docs/models/qcn.md.
//!
//! One [`Cp`] models the congestion-point state of one CP queue (egress port × CNPV): `Qold`,
//! the byte countdown `time_to_mark` to the next sample, and its own random stream for the
//! sampling jitter. The queue length itself belongs to the caller (the switch port); the CP is
//! told `Q` on every enqueue. The procedure follows the QCN pseudo code v2.x and the 802.1Q
//! clause-32 formulas as reproduced in vendor manuals (docs/models/qcn.md,
//! docs/sources.md#qcn-standard):
//!
//! ```text
//! on_enqueue(Q including the frame, L):
//!     Qoff = Q - Qeq; Qdelta = Q - Qold; Fb = -(Qoff + w*Qdelta)
//!     qntzFb = quantize(Fb)                       # 0 when Fb >= 0, saturates at 2^bits - 1
//!     time_to_mark -= L
//!     if time_to_mark < 0:                        # sample instant
//!         report (Fb, qntzFb, Qoff, Qdelta)       # caller sends a CNM iff qntzFb > 0
//!         Qold = Q                                # at EVERY sample
//!         time_to_mark = table[qntzFb >> (bits-3)] * base * U(1-j, 1+j)
//! ```
//!
//! Three readings of the multicast QCN study (Mliki et al.; docs/models/multicast.md) are options,
//! each off by default: `quantiser = Unit` (qntzFb = min(floor(|Fb| / fb_unit), 2^bits - 1), no scaling
//! by Qeq(2w+1)), `every_frame` (every enqueued frame is a sample instant) and `qold_at_feedback`
//! (Qold is the queue when the last feedback message was sent: the caller reports a sent CNM
//! with [`Cp::feedback_sent`]).
//!
//! Which frames the CP counts toward its next sample is a named reading too
//! (`cc.qcn.cp.samples`): the frames enqueued in its queue (the default: 802.1Q's
//! `cpMinSampleBase` is "the minimum number of octets to enqueue in the Congestion Point's queue
//! between transmissions of" CNMs, clause 32.8.11, and the pseudo code's `Q += L` precedes the
//! sample), or every arrival, also a frame discarded at the full queue
//! (`sample_discarded`, as htsim's `QcnQueue`, which runs its CP before its drop-tail test): the
//! caller then also reports a discarded frame with [`Cp::on_discard`], with `Q` the queue the
//! frame did not enter.

use crate::engine::Rng;

/// CP parameters. Queue quantities are bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct CpParams {
    /// Qeq, the equilibrium queue (set point), bytes. MIB cpQSp default 26000.
    pub q_eq_bytes: u64,
    /// w, the weight of the queue derivative. Pseudo code and MIB (2^1): 2.
    pub w: f64,
    /// Width of the quantised feedback in bits (6 in the standard: 0..63).
    pub fb_bits: u32,
    /// Base sampling interval, bytes. MIB cpMinSampleBase default 150000.
    pub sample_base_bytes: u64,
    /// Sampling table: interval for `qntz_fb >> (fb_bits-3)` as a multiple of the base
    /// (150, 75, 50, 37.5, 30, 25, 21.5, 18.5 KB at base 150 KB).
    pub sample_table: [f64; 8],
    /// Jitter of each new sampling interval: uniform in [1 - jitter, 1 + jitter]. 0.15.
    pub jitter: f64,
    /// Path-based push-back (the QCN transient-response proposals): the next sampling interval
    /// is chosen by the quantised |Fb| for both signs of Fb (same table), not only for Fb < 0.
    /// Default false.
    pub sample_both_signs: bool,
    /// How |Fb| becomes qntzFb (`cc.qcn.cp.quantiser`). Default [`Quantiser::Linear`].
    pub quantiser: Quantiser,
    /// [`Quantiser::Unit`]: bytes per quantisation step (`cc.qcn.cp.fb_unit`, one 1500-B frame).
    pub fb_unit_bytes: u64,
    /// Every enqueued frame is a sample instant (`cc.qcn.cp.sampling = "every_frame"`); the
    /// sampling table is not used. Default false.
    pub every_frame: bool,
    /// Qold is updated only when a CNM is sent ([`Cp::feedback_sent`]), not at every sample
    /// (`cc.qcn.cp.qold = "feedback"`). Default false.
    pub qold_at_feedback: bool,
    /// A data frame discarded at the CP's full queue also counts toward the next sample and
    /// may be sampled ([`Cp::on_discard`]; `cc.qcn.cp.samples = "arrivals"`). Default false:
    /// only enqueued frames are counted (802.1Q clause 32.8.11).
    pub sample_discarded: bool,
}

/// The quantiser of the CP's feedback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantiser {
    /// 802.1Q: `floor(|Fb| * (2^bits - 1) / (Qeq*(2w+1)))`, saturating at `2^bits - 1`.
    Linear,
    /// `floor(|Fb| / fb_unit)`, saturating at `2^bits - 1` (|Fb| counted in units of
    /// `fb_unit_bytes`, e.g. frames).
    Unit,
}

impl CpParams {
    /// The 802.1Q MIB / pseudo code v2.x defaults: Qeq 26000 B, w 2, 6-bit feedback, sample
    /// base 150000 B, the pseudo-code sampling table (150, 75, 50, 37.5, 30, 25, 21.5, 18.5 KB)
    /// and ±15 % jitter.
    pub fn standard() -> CpParams {
        CpParams {
            q_eq_bytes: 26_000,
            w: 2.0,
            fb_bits: 6,
            sample_base_bytes: 150_000,
            sample_table: [
                1.0,
                1.0 / 2.0,
                1.0 / 3.0,
                1.0 / 4.0,
                1.0 / 5.0,
                1.0 / 6.0,
                21.5 / 150.0,
                18.5 / 150.0,
            ],
            jitter: 0.15,
            sample_both_signs: false,
            quantiser: Quantiser::Linear,
            fb_unit_bytes: 1500,
            every_frame: false,
            qold_at_feedback: false,
            sample_discarded: false,
        }
    }

    /// Largest quantised feedback value, `2^fb_bits - 1` (63 for the standard 6 bits).
    pub fn max_qntz_fb(&self) -> u8 {
        ((1u32 << self.fb_bits) - 1) as u8
    }

    /// Fbmax = Qeq * (2w + 1), the |Fb| at which the quantiser saturates, bytes.
    pub fn fb_max(&self) -> f64 {
        self.q_eq_bytes as f64 * (2.0 * self.w + 1.0)
    }

    /// Check ranges; the message names the offending field (the caller adds the path prefix).
    pub fn validate(&self) -> Result<(), String> {
        if !(3..=8).contains(&self.fb_bits) {
            return Err(format!(
                "fb_bits must be in 3..=8 (the sampling table is indexed by the top 3 bits and \
                 the feedback is carried in one octet), got {}",
                self.fb_bits
            ));
        }
        if !(self.w.is_finite() && self.w >= 0.0) {
            return Err(format!("w must be a finite number >= 0, got {}", self.w));
        }
        if self.sample_base_bytes == 0 {
            return Err("sample_base_bytes must be > 0".into());
        }
        if let Some(x) = self
            .sample_table
            .iter()
            .find(|x| !(x.is_finite() && **x > 0.0))
        {
            return Err(format!(
                "sample_table entries must be finite and > 0, got {x}"
            ));
        }
        if !(self.jitter.is_finite() && (0.0..1.0).contains(&self.jitter)) {
            return Err(format!("jitter must be in [0, 1), got {}", self.jitter));
        }
        if self.fb_unit_bytes == 0 {
            return Err("fb_unit_bytes must be > 0".into());
        }
        Ok(())
    }
}

/// What the CP saw at a sample instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpSample {
    /// Fb = -(Qoff + w*Qdelta), bytes, before clamping (may be positive).
    pub fb_raw: f64,
    /// Quantised |Fb| of the clamped negative feedback, 0..=2^fb_bits - 1.
    pub qntz_fb: u8,
    /// Qoff = Q - Qeq, bytes.
    pub q_off: i64,
    /// Qdelta = Q - Qold, bytes.
    pub q_delta: i64,
}

impl CpSample {
    /// The standard sends a CNM at a sample instant only when the quantised feedback is > 0.
    pub fn sends_cnm(&self) -> bool {
        self.qntz_fb > 0
    }

    /// Representative feedback (the multicast QCN study, Algorithm 2): a CNM only when the standard
    /// one would be sent and this CP (`cpid`) is the representative for a frame carrying
    /// `frame_fb_hat` and `frame_rep_cpid`.
    pub fn sends_cnm_representative(
        &self,
        cpid: u32,
        frame_fb_hat: u8,
        frame_rep_cpid: u32,
    ) -> bool {
        self.sends_cnm()
            && crate::proto::multicast::is_representative(
                self.qntz_fb,
                cpid,
                frame_fb_hat,
                frame_rep_cpid,
            )
    }
}

/// The standard linear quantiser (802.1Qau, as the HPE FlexFabric 5940 manual's "QCN algorithm"
/// gives it):
/// `Fbmax = Qeq*(2w+1)`; the result is `max_q = 2^fb_bits - 1` when `-fb >= Fbmax`,
/// `floor(-fb * max_q / Fbmax)` otherwise, and 0 when `fb >= 0`. It never exceeds `max_q`
/// (the ×64 variant of some simulators yields 64 at saturation; this one cannot).
///
/// With [`Quantiser::Unit`]: `floor(-fb / fb_unit)`, saturating at `max_q`, 0 when `fb >= 0`.
pub fn quantize(p: &CpParams, fb: f64) -> u8 {
    let max_q = p.max_qntz_fb();
    if fb.is_nan() || fb >= 0.0 {
        return 0;
    }
    let neg = -fb;
    if p.quantiser == Quantiser::Unit {
        let q = (neg / p.fb_unit_bytes as f64).floor();
        return if q >= max_q as f64 { max_q } else { q as u8 };
    }
    let fb_max = p.fb_max();
    if neg >= fb_max {
        return max_q;
    }
    // Multiply first, then divide: exact for integral byte counts below 2^53 / 255.
    let q = (neg * max_q as f64 / fb_max).floor();
    if q >= max_q as f64 {
        max_q
    } else {
        q as u8
    }
}

/// The state of one congestion point. `repr(C)`, the byte countdown first: the field every
/// enqueue reads, on the line of the simulator's CP slot tag (docs/performance.md, "Cost per
/// event by fabric size").
#[derive(Debug, Clone)]
#[repr(C)]
pub struct Cp {
    /// Bytes still to be enqueued before the next sample; a sample happens when it goes < 0.
    time_to_mark: f64,
    /// Q at the previous sample instant, bytes (0 before the first sample).
    q_old: u64,
    /// Stream for the sampling jitter.
    rng: Rng,
    /// Sample instants so far, and those whose Fb was negative (the multicast study's readings
    /// of its feedback rate count them; docs/models/multicast.md).
    samples: u64,
    neg_samples: u64,
    /// qntzFb of the last sample.
    last_qntz: u8,
}

impl Cp {
    /// A CP with `Qold = 0` whose first sampling interval is the table entry for qntzFb = 0
    /// (`table[0] * base`, 150 KB by default) with jitter.
    pub fn new(p: &CpParams, rng: Rng) -> Cp {
        let mut cp = Cp {
            q_old: 0,
            time_to_mark: 0.0,
            rng,
            samples: 0,
            neg_samples: 0,
            last_qntz: 0,
        };
        cp.time_to_mark = cp.next_interval(p, 0);
        cp
    }

    /// Called on every data frame enqueued at the CP queue, with Q *including* the frame.
    /// Returns Some(sample) at a sample instant (time_to_mark went below 0), None otherwise.
    /// Qold is updated at EVERY sample. Next interval = table[qntz_fb >> (fb_bits-3)] * base * U(1-j, 1+j).
    #[inline]
    pub fn on_enqueue(
        &mut self,
        p: &CpParams,
        qlen_bytes: u64,
        frame_bytes: u32,
    ) -> Option<CpSample> {
        // on_bytes(p, qlen_bytes, frame_bytes as u64), with the cheaper u32 -> f64 conversion
        // (the same value)
        self.time_to_mark -= frame_bytes as f64;
        if self.time_to_mark >= 0.0 {
            return None;
        }
        Some(self.sample(p, qlen_bytes))
    }

    /// A data frame of `frame_bytes` was discarded at the CP's full queue, whose length (without
    /// the frame) is `qlen_bytes`. With `sample_discarded` it counts toward the next sample
    /// exactly as an enqueued frame does ([`Cp::on_enqueue`], with Q the queue it did not
    /// enter); otherwise (the default) the CP does not see it: None, no state change.
    #[inline]
    pub fn on_discard(
        &mut self,
        p: &CpParams,
        qlen_bytes: u64,
        frame_bytes: u32,
    ) -> Option<CpSample> {
        if !p.sample_discarded {
            return None;
        }
        self.on_enqueue(p, qlen_bytes, frame_bytes)
    }

    /// The sampling rule on its own: count `bytes` toward the next sample, then, if
    /// `time_to_mark` went below 0, sample with queue length `qlen_bytes` (Fb, quantiser, Qold
    /// and the next interval from the table exactly as [`Cp::on_enqueue`]). The NIC-side
    /// feedback (`proto::nic_fb`) samples a stream of reported queue lengths with it.
    #[inline]
    pub fn on_bytes(&mut self, p: &CpParams, qlen_bytes: u64, bytes: u64) -> Option<CpSample> {
        self.time_to_mark -= bytes as f64;
        if self.time_to_mark >= 0.0 {
            return None;
        }
        Some(self.sample(p, qlen_bytes))
    }

    /// A sample instant (out of line: most frames are not sampled).
    #[inline(never)]
    fn sample(&mut self, p: &CpParams, qlen_bytes: u64) -> CpSample {
        // Fb only matters at a sample instant, so it is computed only there.
        let q = qlen_bytes as i64;
        let q_off = q - p.q_eq_bytes as i64;
        let q_delta = q - self.q_old as i64;
        let fb_raw = -(q_off as f64 + p.w * q_delta as f64);
        let qntz_fb = quantize(p, fb_raw);
        self.samples += 1;
        self.neg_samples += (fb_raw < 0.0) as u64;
        self.last_qntz = qntz_fb;
        if !p.qold_at_feedback {
            self.q_old = qlen_bytes;
        }
        let table_fb = if p.sample_both_signs {
            quantize(p, -fb_raw.abs())
        } else {
            qntz_fb
        };
        self.time_to_mark = self.next_interval(p, table_fb);
        CpSample {
            fb_raw,
            qntz_fb,
            q_off,
            q_delta,
        }
    }

    /// The caller sent a CNM for the sample just taken with queue length `qlen_bytes`: with
    /// `qold_at_feedback`, Qold becomes that queue length (otherwise nothing: Qold was set at
    /// the sample).
    #[inline]
    pub fn feedback_sent(&mut self, p: &CpParams, qlen_bytes: u64) {
        if p.qold_at_feedback {
            self.q_old = qlen_bytes;
        }
    }

    /// Q at the previous sample instant (or, with `qold_at_feedback`, at the last CNM), bytes.
    pub fn q_old(&self) -> u64 {
        self.q_old
    }

    /// Sample instants so far and, of those, the ones whose Fb was negative (Fb < 0, whatever it
    /// quantised to).
    pub fn sample_counts(&self) -> (u64, u64) {
        (self.samples, self.neg_samples)
    }

    /// qntzFb of the last sample (0 before the first).
    pub fn last_sample_qntz(&self) -> u8 {
        self.last_qntz
    }

    /// The feedback a sample at queue length `qlen_bytes` would compute now, without sampling
    /// (no state changes): (Fb in bytes, qntzFb). For traces.
    pub fn fb_now(&self, p: &CpParams, qlen_bytes: u64) -> (f64, u8) {
        let q = qlen_bytes as i64;
        let fb = -((q - p.q_eq_bytes as i64) as f64 + p.w * (q - self.q_old as i64) as f64);
        (fb, quantize(p, fb))
    }

    /// Bytes still to be enqueued before the next sample (for tests / inspection).
    pub fn time_to_mark(&self) -> f64 {
        self.time_to_mark
    }

    /// Set the bytes still to be enqueued before the next sample: a simulator that keeps the
    /// countdown beside the queue (where every arrival already looks) hands it back before
    /// [`Cp::on_enqueue`] and reads it again after ([`Cp::time_to_mark`]).
    #[inline]
    pub fn set_time_to_mark(&mut self, bytes: f64) {
        self.time_to_mark = bytes;
    }

    /// `table[qntz_fb >> (fb_bits-3)] * base * U(1-j, 1+j)`. One draw per call, also with
    /// jitter 0, so the stream position never depends on the jitter setting. With
    /// `every_frame`: 0 (the next frame takes the countdown below 0), no draw.
    fn next_interval(&mut self, p: &CpParams, qntz_fb: u8) -> f64 {
        if p.every_frame {
            return 0.0;
        }
        let idx = (qntz_fb >> (p.fb_bits - 3)) as usize;
        let u = self.rng.uniform(1.0 - p.jitter, 1.0 + p.jitter);
        p.sample_table[idx.min(7)] * p.sample_base_bytes as f64 * u
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact() -> CpParams {
        CpParams {
            jitter: 0.0,
            ..CpParams::standard()
        }
    }

    /// Qeq 12600 B, w 2: Fbmax = 63000 B, so qntzFb = k exactly for -Fb in [1000k, 1000k+999].
    fn round_params() -> CpParams {
        CpParams {
            q_eq_bytes: 12_600,
            ..exact()
        }
    }

    fn cp_with(p: &CpParams, q_old: u64, time_to_mark: f64) -> Cp {
        let mut cp = Cp::new(p, Rng::from_seed(1));
        cp.q_old = q_old;
        cp.time_to_mark = time_to_mark;
        cp
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-6 * b.abs().max(1.0)
    }

    #[test]
    fn standard_params_are_the_mib_defaults() {
        let p = CpParams::standard();
        assert_eq!(p.q_eq_bytes, 26_000);
        assert_eq!(p.w, 2.0);
        assert_eq!(p.fb_bits, 6);
        assert_eq!(p.sample_base_bytes, 150_000);
        assert_eq!(p.jitter, 0.15);
        assert_eq!(p.max_qntz_fb(), 63);
        assert_eq!(p.fb_max(), 130_000.0);
        let kb: Vec<f64> = p
            .sample_table
            .iter()
            .map(|x| x * p.sample_base_bytes as f64)
            .collect();
        let want = [
            150_000.0, 75_000.0, 50_000.0, 37_500.0, 30_000.0, 25_000.0, 21_500.0, 18_500.0,
        ];
        for (got, want) in kb.iter().zip(want) {
            assert!(close(*got, want), "{got} vs {want}");
        }
        assert!(p.validate().is_ok());
    }

    #[test]
    fn params_validation_rejects_bad_values() {
        #[rustfmt::skip]
        let cases: &[(&str, CpParams, bool)] = &[
            ("standard", CpParams::standard(), true),
            ("fb_bits 2", CpParams { fb_bits: 2, ..CpParams::standard() }, false),
            ("fb_bits 9", CpParams { fb_bits: 9, ..CpParams::standard() }, false),
            ("fb_bits 8", CpParams { fb_bits: 8, ..CpParams::standard() }, true),
            ("w negative", CpParams { w: -1.0, ..CpParams::standard() }, false),
            ("base 0", CpParams { sample_base_bytes: 0, ..CpParams::standard() }, false),
            ("jitter 1", CpParams { jitter: 1.0, ..CpParams::standard() }, false),
            ("jitter 0", CpParams { jitter: 0.0, ..CpParams::standard() }, true),
            ("table zero", CpParams { sample_table: [1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], ..CpParams::standard() }, false),
        ];
        for (name, p, ok) in cases {
            assert_eq!(p.validate().is_ok(), *ok, "{name}: {:?}", p.validate());
        }
    }

    #[test]
    fn quantiser_bounds_floor_and_saturation() {
        let std = exact();
        let round = round_params();
        let bits8 = CpParams {
            fb_bits: 8,
            ..round_params()
        };
        // (name, params, Fb, expected qntzFb)
        #[rustfmt::skip]
        let cases: &[(&str, &CpParams, f64, u8)] = &[
            ("zero feedback", &std, 0.0, 0),
            ("negative zero", &std, -0.0, 0),
            ("positive feedback", &std, 5_000.0, 0),
            ("huge positive feedback", &std, 1e12, 0),
            ("tiny congestion quantises to 0", &std, -1.0, 0),
            ("just below one step", &std, -2_063.0, 0), // 2063*63/130000 = 0.9998
            ("first step", &std, -2_064.0, 1),          // 2064*63/130000 = 1.0002
            ("worked example -24 KB", &std, -24_000.0, 11),
            ("just below Fbmax", &std, -129_999.0, 62),
            ("exactly Fbmax", &std, -130_000.0, 63),
            ("beyond Fbmax", &std, -130_001.0, 63),
            ("far beyond Fbmax", &std, -1e12, 63),
            ("exact step 1", &round, -1_000.0, 1),
            ("floor below step 1", &round, -999.0, 0),
            ("exact step 31", &round, -31_000.0, 31),
            ("floor below step 32", &round, -31_999.0, 31),
            ("floor below saturation", &round, -62_999.0, 62),
            ("saturation at Fbmax", &round, -63_000.0, 63),
            ("8-bit quantiser saturates at 255", &bits8, -63_000.0, 255),
            ("8-bit quantiser floor", &bits8, -31_500.0, 127), // 31500*255/63000 = 127.5
            ("NaN is no congestion", &std, f64::NAN, 0),
        ];
        for (name, p, fb, want) in cases {
            assert_eq!(quantize(p, *fb), *want, "{name}: Fb = {fb}");
        }
    }

    #[test]
    fn quantiser_is_monotone_and_never_reaches_64() {
        let p = exact();
        let mut prev = 0u8;
        // Sweep -Fb from 0 to 3*Fbmax in 7-byte steps (covers every step boundary region).
        let mut neg = 0u64;
        while neg <= 390_000 {
            let q = quantize(&p, -(neg as f64));
            assert!(q <= 63, "-Fb = {neg} gave {q}");
            assert!(q >= prev, "not monotone at -Fb = {neg}");
            prev = q;
            neg += 7;
        }
        assert_eq!(prev, 63);
        // Every value 0..=63 is reachable.
        let mut seen = [false; 64];
        for neg in 0..=131_000u64 {
            seen[quantize(&p, -(neg as f64)) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn worked_example_from_reference_1_11() {
        // Qeq 26 KB, Q = 40 KB, grown by 5 KB since the last sample:
        // Fb = -(14 + 2*5) KB = -24 KB -> qntzFb = floor(24*63/130) = 11; next sample 75 KB.
        let p = exact();
        let mut cp = cp_with(&p, 35_000, 100.0);
        let s = cp.on_enqueue(&p, 40_000, 1_500).expect("sample instant");
        assert_eq!(
            s,
            CpSample {
                fb_raw: -24_000.0,
                qntz_fb: 11,
                q_off: 14_000,
                q_delta: 5_000
            }
        );
        assert!(s.sends_cnm());
        assert_eq!(cp.q_old(), 40_000);
        assert!(close(cp.time_to_mark(), 75_000.0));
    }

    #[test]
    fn first_sampling_interval_is_table0_times_base() {
        // (name, params, expected first time_to_mark)
        #[rustfmt::skip]
        let cases: &[(&str, CpParams, f64)] = &[
            ("standard 150 KB", exact(), 150_000.0),
            ("base 10 KB", CpParams { sample_base_bytes: 10_000, ..exact() }, 10_000.0),
            ("table[0] = 2", CpParams { sample_table: [2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], ..exact() }, 300_000.0),
        ];
        for (name, p, want) in cases {
            let cp = Cp::new(p, Rng::from_seed(3));
            assert!(close(cp.time_to_mark(), *want), "{name}");
            assert_eq!(cp.q_old(), 0, "{name}");
        }
    }

    #[test]
    fn first_sampling_interval_is_jittered_within_15_percent() {
        let p = CpParams::standard();
        let firsts: Vec<f64> = (0..200)
            .map(|seed| Cp::new(&p, Rng::from_seed(seed)).time_to_mark())
            .collect();
        for t in &firsts {
            assert!((127_500.0..=172_500.0).contains(t), "{t}");
        }
        let lo = firsts.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = firsts.iter().cloned().fold(0.0, f64::max);
        assert!(
            hi - lo > 30_000.0,
            "first intervals barely vary: {lo}..{hi}"
        );
    }

    #[test]
    fn sample_instant_when_time_to_mark_goes_below_zero() {
        let p = exact();
        // (name, time_to_mark before, frame sizes, index of the frame that samples (if any))
        #[rustfmt::skip]
        let cases: &[(&str, f64, &[u32], Option<usize>)] = &[
            ("reaching exactly 0 is not a sample", 3_000.0, &[1_500, 1_500], None),
            ("one byte past 0 samples", 3_000.0, &[1_500, 1_500, 1], Some(2)),
            ("single large frame", 1_000.0, &[1_500], Some(0)),
            ("small frames count down", 200.0, &[64, 64, 64, 64], Some(3)),
            ("zero-length frames never sample", 0.0, &[0, 0, 0], None),
            ("already at 0: next byte samples", 0.0, &[0, 1], Some(1)),
        ];
        for (name, ttm, frames, want) in cases {
            let mut cp = cp_with(&p, 0, *ttm);
            let mut got = None;
            for (i, f) in frames.iter().enumerate() {
                if cp.on_enqueue(&p, 10_000, *f).is_some() {
                    assert!(got.is_none(), "{name}: sampled twice");
                    got = Some(i);
                }
            }
            assert_eq!(got, *want, "{name}");
        }
    }

    #[test]
    fn full_first_interval_of_1500_byte_frames() {
        // 150000 / 1500 = 100 frames bring time_to_mark to exactly 0; the 101st samples.
        let p = exact();
        let mut cp = Cp::new(&p, Rng::from_seed(9));
        for i in 0..100 {
            assert!(cp.on_enqueue(&p, 1_500, 1_500).is_none(), "frame {i}");
        }
        assert_eq!(cp.time_to_mark(), 0.0);
        assert!(cp.on_enqueue(&p, 1_500, 1_500).is_some());
    }

    #[test]
    fn sampling_table_every_bucket() {
        // Qeq 12600, w 2, static queue (Q == Qold): qntzFb = (Q - Qeq) / 1000.
        let p = round_params();
        // (qntzFb, expected next interval in bytes)
        #[rustfmt::skip]
        let cases: &[(u8, f64)] = &[
            (0, 150_000.0),
            (1, 150_000.0),
            (7, 150_000.0),
            (8, 75_000.0),
            (15, 75_000.0),
            (16, 50_000.0),
            (23, 50_000.0),
            (24, 37_500.0),
            (31, 37_500.0),
            (32, 30_000.0),
            (39, 30_000.0),
            (40, 25_000.0),
            (47, 25_000.0),
            (48, 21_500.0),
            (55, 21_500.0),
            (56, 18_500.0),
            (63, 18_500.0),
        ];
        for (qntz, want) in cases {
            let q = 12_600 + 1_000 * *qntz as u64;
            let mut cp = cp_with(&p, q, 0.0);
            let s = cp.on_enqueue(&p, q, 100).expect("sample");
            assert_eq!(s.qntz_fb, *qntz);
            assert_eq!(s.q_delta, 0);
            assert!(
                close(cp.time_to_mark(), *want),
                "qntzFb {qntz}: interval {} want {want}",
                cp.time_to_mark()
            );
        }
        // Saturation far beyond Fbmax still uses the last bucket (index 7, never 8).
        let mut cp = cp_with(&p, 0, 0.0);
        let s = cp.on_enqueue(&p, 10_000_000, 100).unwrap();
        assert_eq!(s.qntz_fb, 63);
        assert!(close(cp.time_to_mark(), 18_500.0));
    }

    #[test]
    fn sampling_table_index_uses_top_three_bits_for_other_widths() {
        // fb_bits 8: index = qntz >> 5.  Fbmax = 63000 B, qntz = floor(-Fb*255/63000).
        let p = CpParams {
            fb_bits: 8,
            ..round_params()
        };
        #[rustfmt::skip]
        let cases: &[(u64, u8, f64)] = &[
            // (-Fb bytes, expected qntz, expected interval)
            (7_000, 28, 150_000.0),  // 28 >> 5 = 0
            (8_000, 32, 75_000.0),   // 32 >> 5 = 1
            (63_000, 255, 18_500.0), // 255 >> 5 = 7
        ];
        for (neg, qntz, want) in cases {
            let q = 12_600 + neg;
            let mut cp = cp_with(&p, q, 0.0);
            let s = cp.on_enqueue(&p, q, 1).unwrap();
            assert_eq!(s.qntz_fb, *qntz, "-Fb {neg}");
            assert!(close(cp.time_to_mark(), *want), "-Fb {neg}");
        }
    }

    #[test]
    fn sampling_intervals_are_jittered_within_15_percent_and_vary() {
        let p = CpParams {
            q_eq_bytes: 12_600,
            ..CpParams::standard()
        };
        // For each bucket, 300 samples at a static queue: every interval within ±15 % of the
        // table value, and they spread over most of the range.
        for bucket in 0..8u64 {
            let q = 12_600 + 1_000 * (bucket * 8 + 4);
            let nominal = p.sample_table[bucket as usize] * 150_000.0;
            let mut cp = Cp::new(&p, Rng::from_seed(100 + bucket));
            cp.q_old = q;
            let mut got = Vec::new();
            while got.len() < 300 {
                if cp.on_enqueue(&p, q, 1_500).is_some() {
                    got.push(cp.time_to_mark());
                }
            }
            let lo = got.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = got.iter().cloned().fold(0.0, f64::max);
            assert!(lo >= 0.85 * nominal - 1e-6, "bucket {bucket}: {lo}");
            assert!(hi <= 1.15 * nominal + 1e-6, "bucket {bucket}: {hi}");
            assert!(
                hi - lo > 0.2 * nominal,
                "bucket {bucket}: too little spread"
            );
        }
    }

    #[test]
    fn qold_updated_at_every_sample_even_without_cnm() {
        let p = exact();
        // (name, Qold before, Q, time_to_mark before, sample?, CNM?, Qold after)
        #[rustfmt::skip]
        let cases: &[(&str, u64, u64, f64, bool, bool, u64)] = &[
            ("congested sample sends CNM", 30_000, 60_000, 10.0, true, true, 60_000),
            ("queue below Qeq: sample, no CNM", 30_000, 10_000, 10.0, true, false, 10_000),
            ("tiny congestion: qntz 0, no CNM", 26_000, 26_500, 10.0, true, false, 26_500),
            ("empty queue sample", 5_000, 1_500, 10.0, true, false, 1_500),
            ("not a sample: Qold kept", 30_000, 60_000, 1e6, false, false, 30_000),
        ];
        for (name, q_old, q, ttm, sample, cnm, q_old_after) in cases {
            let mut cp = cp_with(&p, *q_old, *ttm);
            let s = cp.on_enqueue(&p, *q, 1_500);
            assert_eq!(s.is_some(), *sample, "{name}");
            assert_eq!(s.is_some_and(|s| s.sends_cnm()), *cnm, "{name}");
            assert_eq!(cp.q_old(), *q_old_after, "{name}");
        }
    }

    #[test]
    fn cnm_only_when_quantised_feedback_positive() {
        let p = exact();
        // (name, Qold, Q, expected Fb, expected qntz, CNM?)
        #[rustfmt::skip]
        let cases: &[(&str, u64, u64, f64, u8, bool)] = &[
            ("queue below Qeq and falling: Fb > 0", 20_000, 10_000, 36_000.0, 0, false),
            ("queue at Qeq and static: Fb = 0", 26_000, 26_000, 0.0, 0, false),
            ("above Qeq but draining fast: Fb > 0", 60_000, 40_000, 26_000.0, 0, false),
            ("slightly negative Fb rounds to 0", 27_000, 27_000, -1_000.0, 0, false),
            ("negative Fb of one step", 28_064, 28_064, -2_064.0, 1, true),
            ("below Qeq but growing fast", 0, 20_000, -34_000.0, 16, true),
            ("saturated", 100_000, 156_000, -242_000.0, 63, true),
        ];
        for (name, q_old, q, fb, qntz, cnm) in cases {
            let mut cp = cp_with(&p, *q_old, 0.0);
            let s = cp.on_enqueue(&p, *q, 64).expect("sample");
            assert_eq!(s.fb_raw, *fb, "{name}");
            assert_eq!(s.qntz_fb, *qntz, "{name}");
            assert_eq!(s.sends_cnm(), *cnm, "{name}");
            assert_eq!(s.q_off, *q as i64 - 26_000, "{name}");
            assert_eq!(s.q_delta, *q as i64 - *q_old as i64, "{name}");
        }
    }

    #[test]
    fn qdelta_is_measured_from_the_previous_sample_not_the_previous_frame() {
        let p = exact();
        let mut cp = cp_with(&p, 0, 3_000.0);
        // Three non-sampling frames while the queue grows, then a sample.
        assert!(cp.on_enqueue(&p, 30_000, 1_000).is_none());
        assert!(cp.on_enqueue(&p, 31_000, 1_000).is_none());
        assert!(cp.on_enqueue(&p, 32_000, 1_000).is_none());
        let s = cp.on_enqueue(&p, 33_000, 1_000).unwrap();
        assert_eq!(s.q_delta, 33_000);
        // Next sample: delta relative to 33000.
        cp.time_to_mark = 0.0;
        let s = cp.on_enqueue(&p, 35_000, 1).unwrap();
        assert_eq!(s.q_delta, 2_000);
        assert_eq!(s.q_off, 9_000);
        assert_eq!(s.fb_raw, -13_000.0);
    }

    #[test]
    fn both_signs_sampling_uses_the_quantised_absolute_feedback() {
        let std = round_params();
        let both = CpParams {
            sample_both_signs: true,
            ..round_params()
        };
        // Qeq 12600, w 2, Fbmax 63000: |Fb| = 1000 k gives k. (name, params, Qold, Q, qntzFb,
        // next interval)
        #[rustfmt::skip]
        let cases: &[(&str, &CpParams, u64, u64, u8, f64)] = &[
            ("std, Fb < 0 uses |Fb|", &std, 28_600, 28_600, 16, 50_000.0),
            ("both, Fb < 0 unchanged", &both, 28_600, 28_600, 16, 50_000.0),
            ("std, Fb > 0: table entry 0", &std, 20_000, 4_600, 0, 150_000.0),
            // Fb = -(4600 - 12600) - 2 * (4600 - 20000) = 8000 + 30800 = 38800 -> 38 -> 30 KB
            ("both, Fb > 0: table by |Fb|", &both, 20_000, 4_600, 0, 30_000.0),
            // empty static queue: Fb = Qeq = 12600 -> 12 -> 75 KB
            ("both, empty queue: Fb = Qeq", &both, 0, 0, 0, 75_000.0),
            ("both, Fb = 0", &both, 12_600, 12_600, 0, 150_000.0),
            ("both, Fb far above Fbmax saturates", &both, 500_000, 0, 0, 18_500.0),
        ];
        for (name, p, q_old, q, qntz, next) in cases {
            let mut cp = cp_with(p, *q_old, 0.0);
            let s = cp.on_enqueue(p, *q, 1).expect("sample");
            assert_eq!(s.qntz_fb, *qntz, "{name}");
            assert!(
                close(cp.time_to_mark(), *next),
                "{name}: {}",
                cp.time_to_mark()
            );
        }
    }

    #[test]
    fn same_seed_same_samples() {
        let p = CpParams::standard();
        let run = |seed| {
            let mut cp = Cp::new(&p, Rng::from_seed(seed));
            let mut out = Vec::new();
            for i in 0..2_000u64 {
                let q = 20_000 + (i * 37) % 50_000;
                if let Some(s) = cp.on_enqueue(&p, q, 1_500) {
                    out.push((i, s.qntz_fb, cp.time_to_mark()));
                }
            }
            out
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    #[test]
    fn unit_quantiser_counts_whole_units_and_saturates() {
        let unit = CpParams {
            quantiser: Quantiser::Unit,
            ..exact()
        };
        let kb = CpParams {
            fb_unit_bytes: 1000,
            ..unit.clone()
        };
        let bits4 = CpParams {
            fb_bits: 4,
            ..unit.clone()
        };
        // (name, params, Fb, expected qntzFb): frames of 1500 B unless said otherwise
        #[rustfmt::skip]
        let cases: &[(&str, &CpParams, f64, u8)] = &[
            ("positive feedback", &unit, 3_000.0, 0),
            ("zero feedback", &unit, 0.0, 0),
            ("less than one frame", &unit, -1_499.0, 0),
            ("one frame", &unit, -1_500.0, 1),
            ("floor between frames", &unit, -4_499.0, 2),
            ("30 frames", &unit, -45_000.0, 30),
            ("62 frames and a bit", &unit, -94_499.0, 62),
            ("63 frames saturates", &unit, -94_500.0, 63),
            ("far beyond", &unit, -1e12, 63),
            ("Qeq does not scale it", &CpParams { q_eq_bytes: 112_500, ..unit.clone() }, -45_000.0, 30),
            ("unit 1000 B", &kb, -31_999.0, 31),
            ("4 bits saturate at 15", &bits4, -30_000.0, 15),
            ("NaN", &unit, f64::NAN, 0),
        ];
        for (name, p, fb, want) in cases {
            assert_eq!(quantize(p, *fb), *want, "{name}: Fb = {fb}");
        }
        // the linear quantiser gives another value for the same Fb (the option is in effect)
        assert_eq!(quantize(&exact(), -45_000.0), 21); // 45000*63/130000 = 21.8
        assert!(CpParams {
            fb_unit_bytes: 0,
            ..unit
        }
        .validate()
        .is_err());
    }

    #[test]
    fn sample_counts_count_samples_and_negative_feedback() {
        // every frame a sample: (Q after the enqueue, Fb < 0?) with Qeq 26000, w 2, Qold = Q
        let p = CpParams {
            every_frame: true,
            ..CpParams::standard()
        };
        let mut cp = Cp::new(&p, Rng::from_seed(3));
        assert_eq!(cp.sample_counts(), (0, 0));
        // Fb = -(Qoff + 2 Qdelta): -(-24500 + 2*1500) > 0; -(1000 + 2*25500) < 0;
        // -(0 + 2*(-1000)) > 0; -(1 + 2*1) = -3 < 0 (negative although it quantises to 0)
        for q in [1_500u64, 27_000, 26_000, 26_001] {
            cp.on_enqueue(&p, q, 1);
        }
        assert_eq!(cp.sample_counts(), (4, 2));
        assert_eq!(cp.last_sample_qntz(), 0); // |Fb| = 3 B quantises to 0
                                              // fb_now computes without sampling: no count, no Qold change
        let (fb, qz) = cp.fb_now(&p, 30_001);
        assert!(close(fb, -(4_001.0 + 2.0 * 4_000.0)) && qz == quantize(&p, fb));
        assert_eq!((cp.sample_counts(), cp.q_old()), ((4, 2), 26_001));
        // with the table, frames between samples are not counted
        let mut table = Cp::new(&CpParams::standard(), Rng::from_seed(3));
        for _ in 0..10 {
            table.on_enqueue(&CpParams::standard(), 60_000, 1_500);
        }
        assert_eq!(table.sample_counts(), (0, 0));
    }

    #[test]
    fn every_frame_sampling_samples_each_enqueue() {
        let p = CpParams {
            every_frame: true,
            ..CpParams::standard()
        };
        let mut cp = Cp::new(&p, Rng::from_seed(3));
        assert_eq!(cp.time_to_mark(), 0.0);
        // (Q after the enqueue, frame size, expected qntzFb): a sample at every frame, whatever
        // the feedback (no interval from the table), Qold = Q at each one
        #[rustfmt::skip]
        let cases: &[(u64, u32, u8)] = &[
            (1_500, 1_500, 0),   // Fb = -(1500 - 26000 + 2*1500) > 0
            (30_000, 64, 29),    // Fb = -(4000 + 2*28500) = -61000 -> floor(29.56)
            (30_064, 64, 2),     // Fb = -(4064 + 2*64) = -4192 -> floor(2.03)
            (90_000, 1_500, 63), // Fb = -(64000 + 2*59936) -> saturated
        ];
        for (q, size, want) in cases {
            let s = cp
                .on_enqueue(&p, *q, *size)
                .expect("every frame is a sample instant");
            assert_eq!(s.qntz_fb, *want, "Q = {q}");
            assert_eq!(cp.q_old(), *q);
            assert_eq!(cp.time_to_mark(), 0.0);
        }
        // the table's 150 KB countdown would have sampled none of these 4 frames
        let mut table = Cp::new(&CpParams::standard(), Rng::from_seed(3));
        assert!(cases
            .iter()
            .all(|(q, size, _)| table.on_enqueue(&CpParams::standard(), *q, *size).is_none()));
    }

    #[test]
    // a rule table of wide (state before, input, state after) tuples, by design
    #[allow(clippy::type_complexity)]
    fn discarded_frames_are_sampled_only_under_the_arrivals_reading() {
        let enq = exact();
        let arr = CpParams {
            sample_discarded: true,
            ..exact()
        };
        // Q of the full queue the frame did not enter: 150 KB, Qold 140 KB ->
        // Fb = -(124000 + 2*10000) -> saturated, 63
        // (name, params, time_to_mark before, discarded frame, sampled?, qntzFb,
        //  time_to_mark after, Qold after)
        #[rustfmt::skip]
        let cases: &[(&str, &CpParams, f64, u32, bool, u8, f64, u64)] = &[
            ("enqueued: a discard is not counted", &enq, 1_000.0, 1_500, false, 0, 1_000.0, 140_000),
            ("enqueued: nor sampled at the countdown's end", &enq, 0.0, 1_500, false, 0, 0.0, 140_000),
            ("arrivals: counted toward the next sample", &arr, 2_000.0, 1_500, false, 0, 500.0, 140_000),
            ("arrivals: reaching 0 is not a sample", &arr, 1_500.0, 1_500, false, 0, 0.0, 140_000),
            ("arrivals: below 0 samples the full queue", &arr, 1_000.0, 1_500, true, 63, 18_500.0, 150_000),
        ];
        for (name, p, ttm, size, sampled, qntz, ttm2, qold2) in cases {
            let mut cp = cp_with(p, 140_000, *ttm);
            let s = cp.on_discard(p, 150_000, *size);
            assert_eq!(s.is_some(), *sampled, "{name}");
            if let Some(s) = s {
                assert_eq!(s.qntz_fb, *qntz, "{name}");
                assert!(s.sends_cnm(), "{name}");
                assert_eq!(s.q_off, 150_000 - 26_000, "{name}");
            }
            assert!(
                close(cp.time_to_mark(), *ttm2),
                "{name}: {}",
                cp.time_to_mark()
            );
            assert_eq!(cp.q_old(), *qold2, "{name}");
        }
        // an enqueued frame is counted the same way under both readings
        for p in [&enq, &arr] {
            let mut cp = cp_with(p, 140_000, 1_000.0);
            let s = cp.on_enqueue(p, 150_000, 1_500).expect("a sample");
            assert_eq!(s.qntz_fb, 63);
        }
    }

    #[test]
    fn qold_at_feedback_moves_only_when_a_cnm_is_sent() {
        let p = CpParams {
            qold_at_feedback: true,
            every_frame: true,
            ..exact()
        };
        let mut cp = Cp::new(&p, Rng::from_seed(1));
        // (Q, CNM sent by the caller?, Qold used for this sample's Qdelta, Qold afterwards)
        #[rustfmt::skip]
        let cases: &[(u64, bool, u64, u64)] = &[
            (10_000, false, 0, 0),          // below Qeq, no CNM: Qold stays 0
            (20_000, false, 0, 0),
            (40_000, true, 0, 40_000),      // CNM sent: Qold = 40000
            (41_500, false, 40_000, 40_000),
            (43_000, true, 40_000, 43_000),
            (30_000, false, 43_000, 43_000),
        ];
        for (q, sent, old_used, old_after) in cases {
            let s = cp.on_enqueue(&p, *q, 1_500).expect("sample");
            assert_eq!(s.q_delta, *q as i64 - *old_used as i64, "Q = {q}");
            if *sent {
                cp.feedback_sent(&p, *q);
            }
            assert_eq!(cp.q_old(), *old_after, "Q = {q}");
        }
        // without the option feedback_sent changes nothing and every sample sets Qold
        let std = CpParams {
            every_frame: true,
            ..exact()
        };
        let mut cp = Cp::new(&std, Rng::from_seed(1));
        cp.on_enqueue(&std, 40_000, 1_500).expect("sample");
        cp.feedback_sent(&std, 99_999);
        assert_eq!(cp.q_old(), 40_000);
    }
}
