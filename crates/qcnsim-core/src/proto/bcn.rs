//! BCN (Backward Congestion Notification, the predecessor of QCN): congestion point and rate
//! regulator. See docs/models/bcn.md.
//!
//! Both machines are sans-IO like the QCN ones: the caller owns the queue, the rate limiter and
//! the timer, passes `now` and an input, and acts on what comes back. The rules are those of
//! the BCN calibration study (Loh, Fulcrum, 2006; it wins where the sources differ) and of the
//! Intel 82598 `bcn_config` managed object and the BCN/ECM literature (docs/models/bcn.md,
//! docs/sources.md#bcn-calibration-study):
//!
//! ```text
//! CP, on every data frame enqueued (Q including the frame, L its size, tagged = the frame's
//! CPID tag is this CP):
//!     if severe_check == every_frame and Q > Qsc:      report BCN(0,0)
//!     countdown -= L
//!     if countdown < 0:                                # sample instant
//!         Qoff = Q - Qeq; Qdelta = Q - Qold            # bytes
//!         Fb = clamp(-(Qoff + W*Qdelta) / page, -Fbmax, +Fbmax)     # 64-byte pages
//!         Qold = Q; countdown = window + U(-jitter, +jitter)
//!         if severe_check == sample and Q > Qsc:       report BCN(0,0)
//!         elif Fb < 0:                                 report negative BCN(Fb)
//!         elif Fb > 0 and tagged:                      report positive BCN(Fb)
//!
//! RP (rate regulator R), on a message from CP `cpid`:
//!     negative BCN(Fb): if inactive: activate at R = line
//!                       R = max(R*(1 + Gd*Fb), min_rate); tag = cpid
//!     positive BCN(Fb): ignored while inactive, and (check_cpid) unless cpid == tag
//!                       R = min(R + Gi*Fb*Ru, line); release at line rate (option)
//!     BCN(0,0):         if inactive: activate; tag = cpid; R = Rmin
//!                       with back-off (t_max > 0): send nothing for U(0, t_max), then at Rmin
//!     every message restarts the drift timer (drift on): R = min(R + Rd, line) every Td
//!     without messages; release at line rate (option)
//! ```

use super::qcn_rp::{RpOutput, TimerCmd};
use crate::engine::Rng;
use crate::units::SimTime;

/// No CPID (an untagged frame, or an inactive regulator).
pub const NO_CPID: u32 = u32::MAX;

/// When the CP compares Q with Qsc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SevereCheck {
    /// At sample instants only, instead of the Fb message (default).
    Sample,
    /// On every data frame enqueued while Q > Qsc.
    EveryFrame,
}

impl SevereCheck {
    pub fn name(self) -> &'static str {
        match self {
            SevereCheck::Sample => "sample",
            SevereCheck::EveryFrame => "every_frame",
        }
    }
}

/// BCN congestion-point parameters. Queue quantities are bytes; Fb is in pages.
#[derive(Debug, Clone, PartialEq)]
pub struct BcnCpParams {
    /// Qeq, the equilibrium queue, bytes (the study: 375 pages of 64 B = 24000 B).
    pub q_eq_bytes: u64,
    /// W, the weight of Qdelta: 2.
    pub w: f64,
    /// The unit of Fb, bytes: 64.
    pub page_bytes: u64,
    /// Mean sampling interval, bytes: 150000.
    pub sample_window_bytes: u64,
    /// Each interval is `window + U(-jitter, +jitter)`, bytes: 5000.
    pub sample_jitter_bytes: u64,
    /// |Fb| saturates here, pages (the width of the message's feedback field). Default
    /// `Qeq*(2W+1)/page` = 1875.
    pub fb_max_pages: f64,
    /// Qsc, the severe-congestion threshold, bytes; `None` = no BCN(0,0).
    pub q_sc_bytes: Option<u64>,
    pub severe_check: SevereCheck,
}

impl BcnCpParams {
    /// The calibration study's values: Qeq 375 pages, W 2, 150 KB ± 5 KB,
    /// no severe congestion messages.
    pub fn study() -> BcnCpParams {
        BcnCpParams {
            q_eq_bytes: 375 * 64,
            w: 2.0,
            page_bytes: 64,
            sample_window_bytes: 150_000,
            sample_jitter_bytes: 5_000,
            fb_max_pages: 375.0 * 5.0,
            q_sc_bytes: None,
            severe_check: SevereCheck::Sample,
        }
    }

    /// `Qeq*(2W+1)` in pages: the default saturation of |Fb| (the QCN quantiser's range).
    pub fn default_fb_max_pages(q_eq_bytes: u64, w: f64, page_bytes: u64) -> f64 {
        q_eq_bytes as f64 * (2.0 * w + 1.0) / page_bytes as f64
    }

    /// Check ranges; the message names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.page_bytes == 0 {
            return Err("page must be > 0".into());
        }
        if !(self.w.is_finite() && self.w >= 0.0) {
            return Err(format!("w must be a finite number >= 0, got {}", self.w));
        }
        if self.sample_window_bytes == 0 {
            return Err("sample_window must be > 0".into());
        }
        if self.sample_jitter_bytes >= self.sample_window_bytes {
            return Err(format!(
                "sample_jitter ({} B) must be below sample_window ({} B)",
                self.sample_jitter_bytes, self.sample_window_bytes
            ));
        }
        // +infinity is the "off" reading (no saturation)
        if self.fb_max_pages.is_nan() || self.fb_max_pages <= 0.0 {
            return Err(format!("fb_max must be > 0, got {}", self.fb_max_pages));
        }
        Ok(())
    }
}

/// What a BCN message says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BcnKind {
    /// Fb < 0: slow down.
    Negative,
    /// Fb > 0, only to frames tagged with this CP: speed up.
    Positive,
    /// BCN(0,0): severe congestion, restart at Rmin.
    Severe,
}

impl BcnKind {
    /// Index into per-kind counters (`[negative, positive, severe]`).
    pub fn index(self) -> usize {
        match self {
            BcnKind::Negative => 0,
            BcnKind::Positive => 1,
            BcnKind::Severe => 2,
        }
    }
}

/// What the CP did with one enqueued frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BcnSample {
    /// The message to send to the frame's source, if any.
    pub msg: Option<BcnKind>,
    /// Fb in pages after saturation (0 for a BCN(0,0) sent outside a sample instant).
    pub fb_pages: f64,
    /// This was a sample instant (Qold and the countdown were updated).
    pub sampled: bool,
}

/// The state of one BCN congestion point (one egress queue).
#[derive(Debug, Clone)]
pub struct BcnCp {
    /// Q at the previous sample instant, bytes.
    q_old: u64,
    /// Bytes still to be enqueued before the next sample (sample when it goes below 0).
    countdown: f64,
    rng: Rng,
}

impl BcnCp {
    /// Qold = 0; the first interval is drawn like every other one.
    pub fn new(p: &BcnCpParams, rng: Rng) -> BcnCp {
        let mut cp = BcnCp {
            q_old: 0,
            countdown: 0.0,
            rng,
        };
        cp.countdown = cp.next_interval(p);
        cp
    }

    /// Called on every data frame enqueued at the CP queue, with Q *including* the frame and
    /// `tagged` = the frame carries this CP's CPID. Returns None when nothing happened.
    pub fn on_enqueue(
        &mut self,
        p: &BcnCpParams,
        qlen_bytes: u64,
        frame_bytes: u32,
        tagged: bool,
    ) -> Option<BcnSample> {
        let severe = p.q_sc_bytes.is_some_and(|sc| qlen_bytes > sc);
        self.countdown -= frame_bytes as f64;
        if self.countdown >= 0.0 {
            if severe && p.severe_check == SevereCheck::EveryFrame {
                return Some(BcnSample {
                    msg: Some(BcnKind::Severe),
                    fb_pages: 0.0,
                    sampled: false,
                });
            }
            return None;
        }
        let q = qlen_bytes as f64;
        let q_off = q - p.q_eq_bytes as f64;
        let q_delta = q - self.q_old as f64;
        let fb =
            (-(q_off + p.w * q_delta) / p.page_bytes as f64).clamp(-p.fb_max_pages, p.fb_max_pages);
        self.q_old = qlen_bytes;
        self.countdown = self.next_interval(p);
        let msg = if severe {
            Some(BcnKind::Severe)
        } else if fb < 0.0 {
            Some(BcnKind::Negative)
        } else if fb > 0.0 && tagged {
            Some(BcnKind::Positive)
        } else {
            None
        };
        Some(BcnSample {
            msg,
            fb_pages: fb,
            sampled: true,
        })
    }

    pub fn q_old(&self) -> u64 {
        self.q_old
    }

    pub fn countdown(&self) -> f64 {
        self.countdown
    }

    /// `window + U(-jitter, +jitter)`: one draw per interval, also with jitter 0.
    fn next_interval(&mut self, p: &BcnCpParams) -> f64 {
        let j = p.sample_jitter_bytes as f64;
        p.sample_window_bytes as f64 + self.rng.uniform(-j, j)
    }
}

/// BCN rate-regulator parameters. Rates bit/s, times picoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct BcnRpParams {
    /// Link rate of the NIC, bit/s.
    pub line_rate_bps: f64,
    /// Gi, the increase gain: 0.53.
    pub gi: f64,
    /// Gd, the decrease gain: 2.6e-4 (per page).
    pub gd: f64,
    /// Ru, the rate unit of the increase: 1 Mb/s.
    pub ru_bps: f64,
    /// Lowest rate a negative BCN may bring R to (the decrease floor), bit/s.
    pub min_rate_bps: f64,
    /// Rmin, the severe-congestion restart rate after a BCN(0,0): 1 Gb/s.
    pub r_min_bps: f64,
    /// Tmax: after a BCN(0,0) the regulator sends nothing for U(0, Tmax); 0 = no back-off.
    pub t_max_ps: SimTime,
    /// Drift: R += Rd every Td without messages.
    pub drift: bool,
    /// Td, ps.
    pub drift_interval_ps: SimTime,
    /// Rd, bit/s.
    pub drift_rate_bps: f64,
    /// Apply a positive BCN only when its CPID is the regulator's tag.
    pub check_cpid: bool,
    /// Release the regulator (untag, unlimited) when R reaches the line rate.
    pub release_at_line_rate: bool,
}

impl BcnRpParams {
    /// The calibration study's values: Gi 0.53, Gd 2.6e-4, Ru 1 Mb/s,
    /// Rmin 1 Gb/s, drift and back-off off.
    pub fn study(line_rate_bps: f64) -> BcnRpParams {
        BcnRpParams {
            line_rate_bps,
            gi: 0.53,
            gd: 2.6e-4,
            ru_bps: 1e6,
            min_rate_bps: 5e6,
            r_min_bps: 1e9,
            t_max_ps: 0,
            drift: false,
            drift_interval_ps: crate::units::MS,
            drift_rate_bps: 1e6,
            check_cpid: true,
            release_at_line_rate: true,
        }
    }

    /// Check ranges. `fb_max_pages` is the CP's saturation: a negative BCN multiplies R by
    /// `1 + Gd*Fb >= 1 - Gd*fb_max`, which must stay above 0. Without saturation
    /// (`fb_max_pages` infinite, `cc.bcn.cp.fb_max = "off"`) a larger cut floors R at
    /// `min_rate` (> 0), so only a finite saturation is checked.
    pub fn validate(&self, fb_max_pages: f64) -> Result<(), String> {
        let pos = |name: &str, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be finite and > 0, got {x}"))
            }
        };
        pos("line_rate", self.line_rate_bps)?;
        pos("min_rate", self.min_rate_bps)?;
        pos("r_min", self.r_min_bps)?;
        for (name, x) in [
            ("gi", self.gi),
            ("gd", self.gd),
            ("ru", self.ru_bps),
            ("drift_rate", self.drift_rate_bps),
        ] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(format!("{name} must be finite and >= 0, got {x}"));
            }
        }
        if fb_max_pages.is_finite() && self.gd * fb_max_pages >= 1.0 {
            return Err(format!(
                "gd * fb_max = {} * {} = {} must be below 1, or a negative BCN at full \
                 feedback makes the rate negative",
                self.gd,
                fb_max_pages,
                self.gd * fb_max_pages
            ));
        }
        if self.drift && self.drift_interval_ps == 0 {
            return Err("drift_interval must be > 0".into());
        }
        Ok(())
    }
}

/// The state of one BCN rate regulator.
#[derive(Debug, Clone)]
pub struct BcnRp {
    active: bool,
    /// R, bit/s (the line rate while inactive).
    rate: f64,
    /// CPID of the CP that limits this flow (NO_CPID while inactive).
    tag: u32,
    /// End of the current BCN(0,0) back-off (0 = none).
    hold_until: SimTime,
    rng: Rng,
}

impl BcnRp {
    /// An inactive regulator (line rate, untagged).
    pub fn new(p: &BcnRpParams, rng: Rng) -> BcnRp {
        BcnRp {
            active: false,
            rate: p.line_rate_bps,
            tag: NO_CPID,
            hold_until: 0,
            rng,
        }
    }

    /// A BCN message from CP `cpid` with feedback `fb_pages` (0 for BCN(0,0)).
    pub fn on_message(
        &mut self,
        p: &BcnRpParams,
        now: SimTime,
        kind: BcnKind,
        fb_pages: f64,
        cpid: u32,
    ) -> RpOutput {
        let before = self.rate;
        match kind {
            BcnKind::Negative => {
                if fb_pages >= 0.0 {
                    return RpOutput::NONE;
                }
                self.activate(p);
                self.tag = cpid;
                self.rate = (self.rate * (1.0 + p.gd * fb_pages)).max(p.min_rate_bps);
            }
            BcnKind::Positive => {
                if !self.active || fb_pages <= 0.0 || (p.check_cpid && cpid != self.tag) {
                    return RpOutput::NONE;
                }
                self.rate = (self.rate + p.gi * fb_pages * p.ru_bps).min(p.line_rate_bps);
                if p.release_at_line_rate && self.rate >= p.line_rate_bps {
                    self.release(p);
                    return RpOutput {
                        timer: TimerCmd::Cancel,
                        rate_changed: self.rate != before,
                    };
                }
            }
            BcnKind::Severe => {
                self.activate(p);
                self.tag = cpid;
                self.rate = p.r_min_bps;
                if p.t_max_ps > 0 {
                    let d = self.rng.uniform(0.0, p.t_max_ps as f64).round() as SimTime;
                    self.hold_until = now + d.max(1);
                    return RpOutput {
                        timer: TimerCmd::Arm(self.hold_until),
                        rate_changed: true,
                    };
                }
            }
        }
        RpOutput {
            timer: self.drift_timer(p, now),
            rate_changed: self.rate != before,
        }
    }

    /// The timer armed by the last TimerCmd::Arm fired: the end of a back-off, or a drift step.
    pub fn on_timer(&mut self, p: &BcnRpParams, now: SimTime) -> RpOutput {
        if !self.active {
            return RpOutput::NONE;
        }
        if self.hold_until != 0 {
            if now < self.hold_until {
                return RpOutput::NONE;
            }
            self.hold_until = 0;
            return RpOutput {
                timer: self.drift_timer(p, now),
                rate_changed: true,
            };
        }
        if !p.drift {
            return RpOutput::NONE;
        }
        let before = self.rate;
        self.rate = (self.rate + p.drift_rate_bps).min(p.line_rate_bps);
        if p.release_at_line_rate && self.rate >= p.line_rate_bps {
            self.release(p);
            return RpOutput {
                timer: TimerCmd::Cancel,
                rate_changed: self.rate != before,
            };
        }
        RpOutput {
            timer: self.drift_timer(p, now),
            rate_changed: self.rate != before,
        }
    }

    pub fn is_active(&self) -> bool {
        self.active
    }

    /// R, bit/s (the line rate while inactive; Rmin during a back-off).
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// CPID tag carried by the flow's data frames (NO_CPID while inactive).
    pub fn tag(&self) -> u32 {
        self.tag
    }

    /// No frame may leave before this time (a BCN(0,0) back-off); 0 = no hold.
    pub fn hold_until(&self) -> SimTime {
        self.hold_until
    }

    fn activate(&mut self, p: &BcnRpParams) {
        if !self.active {
            self.active = true;
            self.rate = p.line_rate_bps;
        }
    }

    fn release(&mut self, p: &BcnRpParams) {
        self.active = false;
        self.rate = p.line_rate_bps;
        self.tag = NO_CPID;
        self.hold_until = 0;
    }

    /// Every message restarts the drift timer (while a back-off runs, its end is the timer).
    fn drift_timer(&self, p: &BcnRpParams, now: SimTime) -> TimerCmd {
        if self.hold_until != 0 {
            TimerCmd::Keep
        } else if p.drift && self.active {
            TimerCmd::Arm(now + p.drift_interval_ps)
        } else {
            TimerCmd::Keep
        }
    }
}

#[cfg(test)]
// Each rule is a table of (state before, input, expected) tuples, by design.
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;
    use crate::units::MS;

    const LINE: f64 = 10e9;
    const ME: u32 = 7;
    const OTHER: u32 = 3;

    /// Study parameters without jitter, with Qsc 112.5 KB where asked.
    fn cpp() -> BcnCpParams {
        BcnCpParams {
            sample_jitter_bytes: 0,
            ..BcnCpParams::study()
        }
    }

    fn cp_with(p: &BcnCpParams, q_old: u64, countdown: f64) -> BcnCp {
        let mut cp = BcnCp::new(p, Rng::from_seed(1));
        cp.q_old = q_old;
        cp.countdown = countdown;
        cp
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn study_params_are_the_calibration_values() {
        let p = BcnCpParams::study();
        assert_eq!(p.q_eq_bytes, 24_000); // 375 pages of 64 B
        assert_eq!(p.w, 2.0);
        assert_eq!(p.page_bytes, 64);
        assert_eq!(p.sample_window_bytes, 150_000);
        assert_eq!(p.sample_jitter_bytes, 5_000);
        assert_eq!(
            p.fb_max_pages,
            BcnCpParams::default_fb_max_pages(24_000, 2.0, 64)
        );
        assert_eq!(p.fb_max_pages, 1875.0);
        assert_eq!(p.q_sc_bytes, None);
        assert!(p.validate().is_ok());
        let r = BcnRpParams::study(LINE);
        assert_eq!(
            (r.gi, r.gd, r.ru_bps, r.r_min_bps),
            (0.53, 2.6e-4, 1e6, 1e9)
        );
        assert!(!r.drift && r.t_max_ps == 0);
        assert!(r.validate(p.fb_max_pages).is_ok());
    }

    #[test]
    fn params_validation_rejects_bad_values() {
        let s = BcnCpParams::study;
        #[rustfmt::skip]
        let cp_cases: &[(&str, BcnCpParams, bool)] = &[
            ("study", s(), true),
            ("page 0", BcnCpParams { page_bytes: 0, ..s() }, false),
            ("w negative", BcnCpParams { w: -1.0, ..s() }, false),
            ("w NaN", BcnCpParams { w: f64::NAN, ..s() }, false),
            ("window 0", BcnCpParams { sample_window_bytes: 0, sample_jitter_bytes: 0, ..s() }, false),
            ("jitter = window", BcnCpParams { sample_window_bytes: 5_000, ..s() }, false),
            ("jitter just below window", BcnCpParams { sample_window_bytes: 5_001, ..s() }, true),
            ("fb_max 0", BcnCpParams { fb_max_pages: 0.0, ..s() }, false),
            ("fb_max off (infinite)", BcnCpParams { fb_max_pages: f64::INFINITY, ..s() }, true),
            ("fb_max NaN", BcnCpParams { fb_max_pages: f64::NAN, ..s() }, false),
        ];
        for (name, p, ok) in cp_cases {
            assert_eq!(p.validate().is_ok(), *ok, "{name}: {:?}", p.validate());
        }
        let r = || BcnRpParams::study(LINE);
        #[rustfmt::skip]
        let rp_cases: &[(&str, BcnRpParams, f64, bool)] = &[
            ("study", r(), 1875.0, true),
            ("gd*fbmax just below 1", BcnRpParams { gd: 0.999 / 1875.0, ..r() }, 1875.0, true),
            ("gd*fbmax = 1", BcnRpParams { gd: 1.0 / 1875.0, ..r() }, 1875.0, false),
            ("gd*fbmax > 1", r(), 4000.0, false),
            ("fb_max off: any gd, R floors at min_rate", BcnRpParams { gd: 0.01, ..r() }, f64::INFINITY, true),
            ("gd negative", BcnRpParams { gd: -1e-4, ..r() }, 1875.0, false),
            ("gi NaN", BcnRpParams { gi: f64::NAN, ..r() }, 1875.0, false),
            ("min_rate 0", BcnRpParams { min_rate_bps: 0.0, ..r() }, 1875.0, false),
            ("r_min 0", BcnRpParams { r_min_bps: 0.0, ..r() }, 1875.0, false),
            ("drift with Td 0", BcnRpParams { drift: true, drift_interval_ps: 0, ..r() }, 1875.0, false),
            ("no drift, Td 0", BcnRpParams { drift_interval_ps: 0, ..r() }, 1875.0, true),
        ];
        for (name, p, fbmax, ok) in rp_cases {
            assert_eq!(
                p.validate(*fbmax).is_ok(),
                *ok,
                "{name}: {:?}",
                p.validate(*fbmax)
            );
        }
    }

    #[test]
    fn cp_samples_when_the_countdown_goes_below_zero() {
        let p = cpp();
        // (countdown before, frame, sampled, countdown after)
        #[rustfmt::skip]
        let cases: &[(f64, u32, bool, f64)] = &[
            (3000.0, 1500, false, 1500.0),
            (1500.0, 1500, false, 0.0),       // reaching 0 is not yet a sample
            (0.0, 1500, true, 150_000.0),     // going below 0 is; the interval restarts (no carry)
            (100.0, 1500, true, 150_000.0),
            (-5.0, 64, true, 150_000.0),
        ];
        for &(before, frame, sampled, after) in cases {
            let mut cp = cp_with(&p, 24_000, before);
            let s = cp.on_enqueue(&p, 24_000, frame, false);
            assert_eq!(s.is_some(), sampled, "countdown {before}, frame {frame}");
            assert_eq!(cp.countdown(), after, "countdown {before}, frame {frame}");
        }
    }

    #[test]
    fn cp_intervals_are_window_plus_uniform_jitter() {
        let p = BcnCpParams {
            sample_window_bytes: 10_000,
            ..BcnCpParams::study()
        };
        let mut cp = BcnCp::new(&p, Rng::from_seed(9));
        let (mut lo, mut hi, mut sum, mut n) = (f64::MAX, f64::MIN, 0.0, 0);
        for _ in 0..20_000 {
            let c = cp.countdown();
            assert!((5_000.0..=15_000.0).contains(&c), "{c}");
            lo = lo.min(c);
            hi = hi.max(c);
            sum += c;
            n += 1;
            cp.countdown = 0.0;
            cp.on_enqueue(&p, 0, 64, false);
        }
        assert!(lo < 5_100.0 && hi > 14_900.0, "range {lo}..{hi}");
        assert!(
            (sum / n as f64 - 10_000.0).abs() < 60.0,
            "mean {}",
            sum / n as f64
        );
        // jitter 0 still draws one number per interval, so the stream does not depend on it
        let p0 = BcnCpParams {
            sample_jitter_bytes: 0,
            ..p.clone()
        };
        let mut a = BcnCp::new(&p, Rng::from_seed(4));
        let mut b = BcnCp::new(&p0, Rng::from_seed(4));
        a.countdown = 0.0;
        b.countdown = 0.0;
        a.on_enqueue(&p, 0, 64, false);
        b.on_enqueue(&p0, 0, 64, false);
        assert_eq!(a.rng.next_u64(), b.rng.next_u64());
    }

    #[test]
    fn cp_feedback_sign_tag_and_saturation() {
        let p = cpp();
        let sc = BcnCpParams {
            q_sc_bytes: Some(112_500),
            ..cpp()
        };
        let every = BcnCpParams {
            severe_check: SevereCheck::EveryFrame,
            ..sc.clone()
        };
        let off = BcnCpParams {
            fb_max_pages: f64::INFINITY,
            ..cpp()
        };
        use BcnKind::*;
        // (name, params, Qold, Q, tagged, expected Fb pages, expected message)
        #[rustfmt::skip]
        let cases: &[(&str, &BcnCpParams, u64, u64, bool, f64, Option<BcnKind>)] = &[
            ("at Qeq, steady: Fb 0, nothing", &p, 24_000, 24_000, true, 0.0, None),
            ("above Qeq, steady", &p, 30_400, 30_400, false, -100.0, Some(Negative)),
            ("above Qeq, steady, tagged", &p, 30_400, 30_400, true, -100.0, Some(Negative)),
            ("at Qeq but growing", &p, 23_680, 24_000, false, -10.0, Some(Negative)),
            ("below Qeq, untagged: no positive", &p, 17_600, 17_600, false, 100.0, None),
            ("below Qeq, tagged: positive", &p, 17_600, 17_600, true, 100.0, Some(Positive)),
            ("below Qeq but growing fast", &p, 10_000, 20_000, true, -250.0, Some(Negative)),
            ("draining above Qeq", &p, 40_000, 30_400, true, 200.0, Some(Positive)),
            ("negative saturates at -Fbmax", &p, 0, 500_000, false, -1875.0, Some(Negative)),
            ("positive saturates at +Fbmax", &p, 500_000, 0, true, 1875.0, Some(Positive)),
            ("fractional pages", &p, 24_032, 24_032, false, -0.5, Some(Negative)),
            ("fb_max off: no negative saturation", &off, 0, 500_000, false, -(476_000.0 + 1_000_000.0) / 64.0, Some(Negative)),
            ("fb_max off: no positive saturation", &off, 500_000, 0, true, (24_000.0 + 1_000_000.0) / 64.0, Some(Positive)),
            ("fb_max off: below the old saturation unchanged", &off, 30_400, 30_400, false, -100.0, Some(Negative)),
            ("Q = Qsc is not severe", &sc, 112_500, 112_500, false, -1382.8125, Some(Negative)),
            ("Q > Qsc: BCN(0,0)", &sc, 112_564, 112_564, false, -1383.8125, Some(Severe)),
            ("Q > Qsc while draining: BCN(0,0)", &sc, 200_000, 112_564, true, 1348.5625, Some(Severe)),
            ("every_frame, at a sample", &every, 112_564, 112_564, false, -1383.8125, Some(Severe)),
        ];
        for &(name, p, q_old, q, tagged, fb, msg) in cases {
            let mut cp = cp_with(p, q_old, 0.0);
            let s = cp.on_enqueue(p, q, 64, tagged).expect(name);
            assert!(s.sampled, "{name}");
            assert!(close(s.fb_pages, fb), "{name}: Fb {} vs {fb}", s.fb_pages);
            assert_eq!(s.msg, msg, "{name}");
            assert_eq!(cp.q_old(), q, "{name}: Qold is updated at every sample");
        }
    }

    #[test]
    fn cp_severe_check_between_samples() {
        let sc = BcnCpParams {
            q_sc_bytes: Some(112_500),
            ..cpp()
        };
        let every = BcnCpParams {
            severe_check: SevereCheck::EveryFrame,
            ..sc.clone()
        };
        // (name, params, Q, expected) with 100 KB still to go before the next sample
        #[rustfmt::skip]
        let cases: &[(&str, &BcnCpParams, u64, Option<BcnSample>)] = &[
            ("sample mode: nothing between samples", &sc, 200_000, None),
            ("every_frame: BCN(0,0) on every frame above Qsc", &every, 200_000,
             Some(BcnSample { msg: Some(BcnKind::Severe), fb_pages: 0.0, sampled: false })),
            ("every_frame: nothing at Qsc", &every, 112_500, None),
        ];
        for &(name, p, q, want) in cases {
            let mut cp = cp_with(p, 1000, 100_000.0);
            assert_eq!(cp.on_enqueue(p, q, 1500, false), want, "{name}");
            assert_eq!(cp.q_old(), 1000, "{name}: Qold only changes at samples");
            assert_eq!(cp.countdown(), 98_500.0, "{name}");
        }
    }

    // ---- rate regulator --------------------------------------------------------------------

    fn rpp() -> BcnRpParams {
        BcnRpParams::study(LINE)
    }

    /// (active, rate, tag, hold_until)
    type St = (bool, f64, u32, SimTime);

    fn rp_with(st: St) -> BcnRp {
        let mut rp = BcnRp::new(&rpp(), Rng::from_seed(2));
        (rp.active, rp.rate, rp.tag, rp.hold_until) = st;
        rp
    }

    fn st(rp: &BcnRp) -> St {
        (rp.active, rp.rate, rp.tag, rp.hold_until)
    }

    const IDLE: St = (false, LINE, NO_CPID, 0);

    #[test]
    fn rp_rate_rules() {
        use BcnKind::*;
        let p = rpp();
        let no_release = BcnRpParams {
            release_at_line_rate: false,
            ..rpp()
        };
        let no_check = BcnRpParams {
            check_cpid: false,
            ..rpp()
        };
        let now = 5 * MS;
        // (name, params, before, message, Fb, cpid, after, timer, rate_changed)
        #[rustfmt::skip]
        let cases: &[(&str, &BcnRpParams, St, BcnKind, f64, u32, St, TimerCmd, bool)] = &[
            ("negative activates at line, then decreases, tags",
             &p, IDLE, Negative, -1000.0, ME, (true, LINE * (1.0 - 0.26), ME, 0), TimerCmd::Keep, true),
            ("negative: R(1 + Gd Fb)",
             &p, (true, 4e9, ME, 0), Negative, -100.0, ME, (true, 4e9 * (1.0 - 0.026), ME, 0), TimerCmd::Keep, true),
            ("negative floors at min_rate",
             &p, (true, 5.1e6, ME, 0), Negative, -1875.0, ME, (true, 5e6, ME, 0), TimerCmd::Keep, true),
            ("negative with Gd|Fb| >= 1 (fb_max off) floors at min_rate",
             &p, (true, 4e9, ME, 0), Negative, -5000.0, ME, (true, 5e6, ME, 0), TimerCmd::Keep, true),
            ("negative from another CP retags",
             &p, (true, 4e9, OTHER, 0), Negative, -100.0, ME, (true, 4e9 * (1.0 - 0.026), ME, 0), TimerCmd::Keep, true),
            ("negative with Fb >= 0 is ignored",
             &p, (true, 4e9, ME, 0), Negative, 0.0, ME, (true, 4e9, ME, 0), TimerCmd::Keep, false),
            ("positive: R + Gi Fb Ru",
             &p, (true, 4e9, ME, 0), Positive, 100.0, ME, (true, 4e9 + 53e6, ME, 0), TimerCmd::Keep, true),
            ("positive while inactive is ignored",
             &p, IDLE, Positive, 100.0, ME, IDLE, TimerCmd::Keep, false),
            ("positive from a CP that is not the tag is ignored",
             &p, (true, 4e9, OTHER, 0), Positive, 100.0, ME, (true, 4e9, OTHER, 0), TimerCmd::Keep, false),
            ("positive from another CP with check_cpid off",
             &no_check, (true, 4e9, OTHER, 0), Positive, 100.0, ME, (true, 4e9 + 53e6, OTHER, 0), TimerCmd::Keep, true),
            ("positive reaching line releases",
             &p, (true, 9.99e9, ME, 0), Positive, 1000.0, ME, IDLE, TimerCmd::Cancel, true),
            ("positive reaching line without release: capped, still tagged",
             &no_release, (true, 9.99e9, ME, 0), Positive, 1000.0, ME, (true, LINE, ME, 0), TimerCmd::Keep, true),
            ("BCN(0,0) activates and restarts at Rmin",
             &p, IDLE, Severe, 0.0, ME, (true, 1e9, ME, 0), TimerCmd::Keep, true),
            ("BCN(0,0) raises a rate below Rmin to Rmin",
             &p, (true, 2e8, OTHER, 0), Severe, 0.0, ME, (true, 1e9, ME, 0), TimerCmd::Keep, true),
        ];
        for &(name, p, before, kind, fb, cpid, after, timer, changed) in cases {
            let mut rp = rp_with(before);
            let out = rp.on_message(p, now, kind, fb, cpid);
            let got = st(&rp);
            assert!(
                got.0 == after.0 && close(got.1, after.1) && got.2 == after.2 && got.3 == after.3,
                "{name}: {got:?} vs {after:?}"
            );
            assert_eq!(out.timer, timer, "{name}");
            assert_eq!(out.rate_changed, changed, "{name}");
        }
    }

    #[test]
    fn rp_severe_backoff_holds_then_restarts_at_rmin() {
        let p = BcnRpParams {
            t_max_ps: 2 * MS,
            ..rpp()
        };
        let now = 10 * MS;
        let mut seen_lo = SimTime::MAX;
        let mut seen_hi = 0;
        for seed in 0..200 {
            let mut rp = BcnRp::new(&p, Rng::from_seed(seed));
            let out = rp.on_message(&p, now, BcnKind::Severe, 0.0, ME);
            let h = rp.hold_until();
            assert!(h > now && h <= now + 2 * MS, "hold {h}");
            assert_eq!(out.timer, TimerCmd::Arm(h));
            assert!(out.rate_changed, "the caller must re-pace (hold)");
            assert_eq!(rp.rate(), 1e9);
            seen_lo = seen_lo.min(h - now);
            seen_hi = seen_hi.max(h - now);
            // a negative BCN during the back-off cuts R but keeps the back-off timer
            let out = rp.on_message(&p, now + 1, BcnKind::Negative, -100.0, ME);
            assert_eq!(out.timer, TimerCmd::Keep);
            assert_eq!(rp.hold_until(), h);
            // the timer at the end of the back-off lifts the hold
            let out = rp.on_timer(&p, h);
            assert_eq!(rp.hold_until(), 0);
            assert!(out.rate_changed);
            assert_eq!(out.timer, TimerCmd::Keep, "drift is off");
            assert!(close(rp.rate(), 1e9 * (1.0 - 0.026)));
        }
        assert!(
            seen_lo < MS / 10 && seen_hi > 2 * MS - MS / 10,
            "{seen_lo} {seen_hi}"
        );
    }

    #[test]
    fn rp_drift_rules() {
        let p = BcnRpParams {
            drift: true,
            drift_interval_ps: MS,
            drift_rate_bps: 100e6,
            ..rpp()
        };
        let now = 3 * MS;
        // (name, before, on_timer at now: after, timer, changed)
        #[rustfmt::skip]
        let cases: &[(&str, St, St, TimerCmd, bool)] = &[
            ("drift step: R + Rd, re-armed", (true, 4e9, ME, 0), (true, 4.1e9, ME, 0), TimerCmd::Arm(now + MS), true),
            ("drift to line releases", (true, 9.95e9, ME, 0), IDLE, TimerCmd::Cancel, true),
            ("inactive: nothing", IDLE, IDLE, TimerCmd::Keep, false),
        ];
        for &(name, before, after, timer, changed) in cases {
            let mut rp = rp_with(before);
            let out = rp.on_timer(&p, now);
            assert_eq!(st(&rp), after, "{name}");
            assert_eq!(out.timer, timer, "{name}");
            assert_eq!(out.rate_changed, changed, "{name}");
        }
        // every message restarts the drift timer
        let mut rp = rp_with((true, 4e9, ME, 0));
        for (kind, fb) in [
            (BcnKind::Negative, -10.0),
            (BcnKind::Positive, 10.0),
            (BcnKind::Severe, 0.0),
        ] {
            let out = rp.on_message(&p, now, kind, fb, ME);
            assert_eq!(out.timer, TimerCmd::Arm(now + MS), "{kind:?}");
        }
        // drift off: the timer does nothing and messages never arm it
        let off = rpp();
        let mut rp = rp_with((true, 4e9, ME, 0));
        assert_eq!(rp.on_timer(&off, now), RpOutput::NONE);
        assert_eq!(
            rp.on_message(&off, now, BcnKind::Negative, -10.0, ME).timer,
            TimerCmd::Keep
        );
    }
}
