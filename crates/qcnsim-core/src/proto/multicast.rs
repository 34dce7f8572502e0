//! QCN for multicast traffic (the multicast QCN study, docs/models/multicast.md): the feedback
//! mode option, the congestion-point
//! identifier, and the representative-CP test of the enhanced scheme (Algorithm 2).
//!
//! Standard QCN with multicast needs nothing new in the state machines: every CP of the
//! distribution tree runs [`crate::proto::qcn_cp::Cp`] and the source's
//! [`crate::proto::qcn_rp::Rp`] reacts to each CNM. The representative scheme changes only CNM
//! generation and the RP's choice of the feedback it decreases with:
//!
//! - the RP keeps F̂b and the representative CPID ([`crate::proto::qcn_rp::Rp::on_cnm_from`],
//!   Algorithm 1) and stamps both into every data frame it sends;
//! - a CP that reaches a sample instant with quantised feedback `|Fb| > 0` sends a CNM only if
//!   it is the representative for that frame ([`is_representative`], Algorithm 2).

/// "No CP": the representative CPID of a frame before its source has received any CNM.
pub const NO_CPID: u32 = u32::MAX;

/// `cc.qcn.multicast_feedback`: how CNMs for multicast flows are generated and used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McFeedback {
    /// Every CP sends CNMs for its sampled copies; the RP reacts to each with its own Fb.
    Standard,
    /// Only the representative CP sends; the RP decreases with F̂b (Algorithms 1 and 2).
    Representative,
}

impl McFeedback {
    /// The option name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            McFeedback::Standard => "standard",
            McFeedback::Representative => "representative",
        }
    }
}

/// Algorithm 2: is the CP `cpid`, whose quantised feedback for this frame is `qntz_fb`, the
/// representative for a frame carrying `frame_fb_hat` and `frame_rep_cpid`?
///
/// `representative = |Fb| >= F̂b`, where a tie (`|Fb| == F̂b`) counts only for the CP whose
/// CPID is the frame's representative CPID, or for any CP while that CPID is unset.
#[inline]
pub fn is_representative(qntz_fb: u8, cpid: u32, frame_fb_hat: u8, frame_rep_cpid: u32) -> bool {
    qntz_fb > frame_fb_hat
        || (qntz_fb == frame_fb_hat && (frame_rep_cpid == NO_CPID || frame_rep_cpid == cpid))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use crate::proto::qcn_cp::{Cp, CpParams};
    use crate::proto::qcn_rp::{Rp, RpParams};
    use crate::units::MS;

    const LINE: f64 = 1e9;
    const GD: f64 = 1.0 / 128.0;

    fn rp_params(feedback: McFeedback) -> RpParams {
        RpParams {
            jitter: 0.0,
            start_active: true,
            feedback,
            ..RpParams::standard(LINE)
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn algorithm_2_representative_test_with_cpid_tie_break() {
        // (name, |Fb| at this CP, this CPID, frame F̂b, frame rep CPID, representative)
        #[rustfmt::skip]
        let cases: &[(&str, u8, u32, u8, u32, bool)] = &[
            ("no feedback yet: any CP",                5, 1, 0, NO_CPID, true),
            ("larger than F̂b",                        5, 1, 4, 2, true),
            ("larger than F̂b, own CPID",              5, 2, 4, 2, true),
            ("tie, this CP is the representative",     5, 1, 5, 1, true),
            ("tie, another CP is the representative",  5, 1, 5, 2, false),
            ("tie, representative unset",              5, 1, 5, NO_CPID, true),
            ("smaller than F̂b, even if representative", 4, 1, 5, 1, false),
            ("smaller than F̂b, other CP",             4, 1, 5, 2, false),
            ("saturated tie, own CPID",                63, 2, 63, 2, true),
            ("saturated tie, other CPID",              63, 3, 63, 2, false),
            ("zero feedback ties F̂b = 0",             0, 1, 0, 7, false),
        ];
        for (name, q, cpid, fb_hat, rep, want) in cases {
            assert_eq!(is_representative(*q, *cpid, *fb_hat, *rep), *want, "{name}");
        }
    }

    #[test]
    fn algorithm_2_cnm_only_when_negative_feedback_representative_and_sampled() {
        // A CP with no jitter, a 1500 B sampling base and a flat sampling table samples every
        // second 1500 B frame (time_to_mark goes below 0); Qeq 15000 B, w 2 (Fbmax = 75000 B).
        let p = CpParams {
            q_eq_bytes: 15_000,
            sample_base_bytes: 1_500,
            sample_table: [1.0; 8],
            jitter: 0.0,
            ..CpParams::standard()
        };
        let mut cp = Cp::new(&p, Rng::from_seed(1));
        // (name, queue incl. frame, frame F̂b, frame rep CPID, sample?, CNM sent?) for CPID 4
        #[rustfmt::skip]
        let steps: &[(&str, u64, u8, u32, bool, bool)] = &[
            ("1st frame: no sample instant yet",        60_000, 0, NO_CPID, false, false),
            ("sample, Fb = -(45000+2*60000) -> 63, F̂b 0", 60_000, 0, NO_CPID, true, true),
            ("no sample instant",                        60_000, 63, 4, false, false),
            ("sample, Qdelta 0: |Fb| = 37, F̂b 63: silent", 60_000, 63, 4, true, false),
            ("no sample instant",                        60_000, 20, 9, false, false),
            ("sample, 37 > F̂b 20 of CP 9: send",        60_000, 20, 9, true, true),
            ("no sample instant",                        60_000, 37, 9, false, false),
            ("sample, tie 37 with CP 9's F̂b: silent",   60_000, 37, 9, true, false),
            ("no sample instant",                        60_000, 37, 4, false, false),
            ("sample, tie 37, this CP is rep: send",     60_000, 37, 4, true, true),
            ("no sample instant",                        10_000, 0, NO_CPID, false, false),
            ("sample, Q below Qeq: Fb > 0, never a CNM", 10_000, 0, NO_CPID, true, false),
        ];
        for (name, q, fb_hat, rep, sample, send) in steps {
            let s = cp.on_enqueue(&p, *q, 1_500);
            assert_eq!(s.is_some(), *sample, "{name}: sample instant");
            let sent = s.is_some_and(|s| s.sends_cnm_representative(4, *fb_hat, *rep));
            assert_eq!(sent, *send, "{name}: CNM ({s:?})");
        }
    }

    #[test]
    fn algorithm_1_rp_keeps_the_largest_feedback_and_restarts_at_63() {
        let p = rp_params(McFeedback::Representative);
        let mut rp = Rp::new(&p, Rng::from_seed(3));
        assert_eq!((rp.fb_hat(), rp.rep_cpid()), (0, NO_CPID), "init");
        let mut cr = LINE;
        // (name, CNM |Fb|, CNM CPID, F̂b after, rep CPID after, |Fb| the rate decrease uses)
        #[rustfmt::skip]
        let steps: &[(&str, u8, u32, u8, u32, u8)] = &[
            ("first CNM selects its CP",                10, 7, 10, 7, 10),
            ("smaller Fb: keep F̂b, decrease with F̂b",  5, 3, 10, 7, 10),
            ("equal Fb from another CP: no change",     10, 3, 10, 7, 10),
            ("larger Fb: new representative",           20, 3, 20, 3, 20),
            ("Fb from the representative, smaller",     12, 3, 20, 3, 20),
            ("saturated Fb: decrease with 63, restart", 63, 9, 0, 9, 63),
            ("after the restart any Fb is selected",     1, 3, 1, 3, 1),
            ("zero feedback is ignored",                 0, 5, 1, 3, 0),
        ];
        for (k, (name, fb, cpid, hat, rep, used)) in steps.iter().enumerate() {
            rp.on_cnm_from(&p, k as u64 * MS, *fb, *cpid);
            if *used > 0 {
                cr *= (1.0 - GD * *used as f64).max(p.min_dec_factor);
            }
            assert_eq!(rp.fb_hat(), *hat, "{name}: F̂b");
            assert_eq!(rp.rep_cpid(), *rep, "{name}: rep CPID");
            assert!(
                close(rp.current_rate(), cr),
                "{name}: CR {} want {cr}",
                rp.current_rate()
            );
        }
    }

    #[test]
    fn fb_hat_hold_forgets_the_selection_after_a_silence() {
        const US: u64 = MS / 1000;
        // (name, t in us, CNM (|Fb|, CPID) or None = a frame is stamped, F̂b and CPID after
        // with a hold of 2 ms, and without a hold (Algorithm 1 as specified))
        type Step = (&'static str, u64, Option<(u8, u32)>, (u8, u32), (u8, u32));
        #[rustfmt::skip]
        let steps: &[Step] = &[
            ("first CNM selects its CP",           0,     Some((30, 1)), (30, 1),        (30, 1)),
            ("1 ms later: kept",                   1_000, None,          (30, 1),        (30, 1)),
            ("smaller Fb: kept, silence restarts", 1_500, Some((20, 2)), (30, 1),        (30, 1)),
            ("just under 2 ms after it: kept",     3_499, None,          (30, 1),        (30, 1)),
            ("2 ms after the last CNM: forgotten", 3_500, None,          (0, NO_CPID),   (30, 1)),
            ("a smaller Fb is now selected",       4_000, Some((12, 3)), (12, 3),        (30, 1)),
            ("expired at the next CNM itself",     9_000, Some((5, 2)),  (5, 2),         (30, 1)),
        ];
        for hold in [2 * MS, 0] {
            let p = RpParams {
                fbhat_hold_ps: hold,
                ..rp_params(McFeedback::Representative)
            };
            let mut rp = Rp::new(&p, Rng::from_seed(3));
            let mut cr = LINE;
            for (name, t_us, cnm, with_hold, without) in steps {
                let now = t_us * US;
                match cnm {
                    Some((fb, cpid)) => {
                        rp.on_cnm_from(&p, now, *fb, *cpid);
                        // the decrease uses F̂b after the update
                        cr *= (1.0 - GD * rp.fb_hat() as f64).max(p.min_dec_factor);
                    }
                    None => rp.expire_fb_hat(&p, now),
                }
                let want = if hold > 0 { with_hold } else { without };
                assert_eq!((rp.fb_hat(), rp.rep_cpid()), *want, "hold {hold}: {name}");
                assert!(close(rp.current_rate(), cr), "hold {hold}: {name}: CR");
            }
        }
    }

    #[test]
    fn algorithm_1_restart_value_follows_the_feedback_width() {
        // 4-bit feedback: F̂b restarts at 15.
        let p = RpParams {
            fb_max: 15,
            ..rp_params(McFeedback::Representative)
        };
        let mut rp = Rp::new(&p, Rng::from_seed(3));
        rp.on_cnm_from(&p, 0, 14, 1);
        assert_eq!(rp.fb_hat(), 14);
        rp.on_cnm_from(&p, MS, 15, 2);
        assert_eq!((rp.fb_hat(), rp.rep_cpid()), (0, 2));
    }

    #[test]
    fn standard_feedback_decreases_with_each_cnm_and_keeps_no_selection() {
        let p = rp_params(McFeedback::Standard);
        let mut a = Rp::new(&p, Rng::from_seed(3));
        let mut b = Rp::new(&p, Rng::from_seed(3));
        for (k, (fb, cpid)) in [(10u8, 7u32), (5, 3), (63, 9), (1, 3)].iter().enumerate() {
            let t = k as u64 * MS;
            let oa = a.on_cnm_from(&p, t, *fb, *cpid);
            let ob = b.on_cnm(&p, t, *fb);
            assert_eq!(oa, ob);
            assert_eq!(a.current_rate(), b.current_rate());
            assert_eq!((a.fb_hat(), a.rep_cpid()), (0, NO_CPID));
        }
    }
}
