//! TIMELY's rate computation (R. Mittal et al., "TIMELY: RTT-based Congestion Control for the
//! Datacenter", SIGCOMM 2015), sans-IO: the sender hands it each acknowledgement
//! ([`Timely::on_ack`]) or an RTT sample directly ([`Timely::on_rtt_sample`]) and applies the
//! [`Control`] it returns to the flow's rate limiter. TIMELY is rate-only: the window is
//! [`NO_WINDOW`]. See docs/models/timely.md.
//!
//! Algorithm 1 (TIMELY congestion control), run once per RTT sample `new_rtt`:
//!
//! ```text
//! new_rtt_diff        = new_rtt - prev_rtt
//! prev_rtt            = new_rtt
//! rtt_diff            = (1 - α) · rtt_diff + α · new_rtt_diff        α: EWMA weight
//! normalized_gradient = rtt_diff / minRTT
//! if new_rtt < T_low:        rate ← rate + δ                          δ: additive step
//! elif new_rtt > T_high:     rate ← rate · (1 - β · (1 - T_high / new_rtt))
//! elif normalized_gradient ≤ 0:
//!                            rate ← rate + N · δ    N = 5 from the HAI_threshold-th (5th)
//!                                                   consecutive sample with gradient ≤ 0
//!                                                   (hyperactive increase), else N = 1
//! else:                      rate ← rate · (1 - β · normalized_gradient)
//! rate ← clamp(rate, min_rate, max_rate)
//! ```
//!
//! The algorithm as reproduced in Zhu et al., "ECN or Delay" (CoNEXT 2016), Algorithm 1
//! (without the HAI factor), and in the first author's published code snippet
//! (`people.eecs.berkeley.edu/~radhika/timely-code-snippet.cc`, with HAI_Thresh = 5, N = 5).
//! Our readings, for what Algorithm 1 leaves open (docs/models/timely.md):
//!
//! * the first sample has no `prev_rtt`: it is taken as `new_rtt` (new_rtt_diff = 0), as the
//!   code snippet does (`if (prevRTT_ == 0) prevRTT_ = rtt`);
//! * the HAI count is the number of consecutive samples whose `normalized_gradient ≤ 0`
//!   (reset by one with a positive gradient), counted on every sample, the current one
//!   included, whichever branch it takes; N applies only in the gradient branch;
//! * the code snippet's `delta_factor` (the additive steps and the T_high decrease scaled by
//!   `min(1, time since the last update / minRTT)`) is not in Algorithm 1 as printed, but CoNEXT
//!   2016 says TIMELY's "rate updates are scaled by D_minRTT to ensure that rate update frequency
//!   is limited" (§5.2, its eq. 23 `τ* = max(Seg/R, D_minRTT)`): applied by default
//!   ([`StepScaling::MinRtt`]); [`StepScaling::None`] is Algorithm 1 as printed, where a flow
//!   sampling more often (with segment sampling, a faster flow) makes more increases per unit
//!   time without bound (docs/models/timely.md measures what that does to two flows).
//!
//! When a sample is taken ([`Sampling`]): once per completed segment of `seg_bytes` (the
//! paper's completion events; default), on every acknowledgement, or once per round trip as
//! HPCC's ns-3 TIMELY does (`RdmaHw::HandleAckTimely`: a full update when the acknowledgement
//! covers data sent after the previous update).

use super::ack::{Ack, Control, NO_WINDOW};
use crate::units::{SimTime, US};

/// When an acknowledgement yields an RTT sample for Algorithm 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// One sample per completion event: the acknowledgement that completes each `seg_bytes`
    /// of the flow (the paper: RTT is measured once per completion of a 16-64 KB segment).
    Segment,
    /// Every acknowledgement that acknowledges new data is a sample (a per-packet reading).
    Ack,
    /// One sample per round trip: the first acknowledgement of a frame sent after the previous
    /// sample was taken (HPCC's ns-3 TIMELY, `m_lastUpdateSeq = snd_nxt`).
    Rtt,
}

impl Sampling {
    pub const NAMES: &'static [&'static str] = &["segment", "ack", "rtt"];

    pub fn from_name(s: &str) -> Option<Sampling> {
        match s {
            "segment" => Some(Sampling::Segment),
            "ack" => Some(Sampling::Ack),
            "rtt" => Some(Sampling::Rtt),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Sampling::Segment => "segment",
            Sampling::Ack => "ack",
            Sampling::Rtt => "rtt",
        }
    }
}

/// Whether a rate update's step depends on the time since the previous update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepScaling {
    /// Every sample is a full step (Algorithm 1 as printed): the increases a flow makes per
    /// unit time grow with its sample rate (with segment sampling, with its rate).
    None,
    /// Each additive step (δ, N·δ) and the T_high decrease are scaled by
    /// `min(1, Δt / minRTT)`, Δt the time since the previous update (the first author's code
    /// snippet, `delta_factor`; CoNEXT 2016 §5.2: "rate updates are scaled by D_minRTT to ensure
    /// that rate update frequency is limited", the `max(Seg/R, D_minRTT)` of its eq. 23).
    MinRtt,
}

impl StepScaling {
    pub const NAMES: &'static [&'static str] = &["none", "min_rtt"];

    pub fn from_name(s: &str) -> Option<StepScaling> {
        match s {
            "none" => Some(StepScaling::None),
            "min_rtt" => Some(StepScaling::MinRtt),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            StepScaling::None => "none",
            StepScaling::MinRtt => "min_rtt",
        }
    }
}

/// TIMELY's parameters (docs/models/timely.md has each default's source).
#[derive(Debug, Clone, PartialEq)]
pub struct TimelyParams {
    /// α, the EWMA weight of the RTT difference.
    pub alpha: f64,
    /// β, the multiplicative decrement factor.
    pub beta: f64,
    /// δ, the additive increment step, bit/s.
    pub delta_bps: f64,
    /// T_low: below it the rate increases by δ whatever the gradient.
    pub t_low_ps: SimTime,
    /// T_high: above it the rate decreases by β(1 - T_high/new_rtt).
    pub t_high_ps: SimTime,
    /// minRTT, the fixed RTT that normalises the gradient (D_minRTT in CoNEXT 2016).
    pub min_rtt_ps: SimTime,
    /// Seg: the segment whose completion gives one RTT sample ([`Sampling::Segment`]).
    pub seg_bytes: u64,
    /// Consecutive samples with gradient ≤ 0 from which the increase is N·δ (HAI).
    pub hai_threshold: u32,
    /// N in hyperactive increase.
    pub hai_factor: f64,
    /// Lowest rate, bit/s.
    pub min_rate_bps: f64,
    /// Highest rate (the NIC line rate), bit/s.
    pub max_rate_bps: f64,
    pub sampling: Sampling,
    /// Whether a step is scaled by the time since the previous update ([`StepScaling`]).
    pub step_scaling: StepScaling,
}

impl TimelyParams {
    /// The defaults for a NIC of `line_rate_bps`: α 0.875, β 0.8, T_low 50 µs, T_high 500 µs,
    /// minRTT 20 µs, δ 10 Mb/s (the values CoNEXT 2016 uses as "recommended in [TIMELY]"; the
    /// same in HPCC's ns-3), Seg 64 KB, HAI after 5 samples with N = 5 (the code snippet),
    /// min rate 100 Mb/s (HPCC's MIN_RATE), max rate the line rate, one sample per segment,
    /// steps scaled by the time since the last update over minRTT (the code snippet; CoNEXT
    /// 2016 §5.2).
    pub fn paper(line_rate_bps: f64) -> TimelyParams {
        TimelyParams {
            alpha: 0.875,
            beta: 0.8,
            delta_bps: 10e6,
            t_low_ps: 50 * US,
            t_high_ps: 500 * US,
            min_rtt_ps: 20 * US,
            seg_bytes: 64_000,
            hai_threshold: 5,
            hai_factor: 5.0,
            min_rate_bps: 100e6,
            max_rate_bps: line_rate_bps,
            sampling: Sampling::Segment,
            step_scaling: StepScaling::MinRtt,
        }
    }

    /// Consistency of the parameters (ranges of single values are the scenario reader's).
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0 && self.alpha <= 1.0) {
            return Err(format!("alpha must be in (0, 1], got {}", self.alpha));
        }
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(format!("beta must be in (0, 1], got {}", self.beta));
        }
        if self.t_low_ps >= self.t_high_ps {
            return Err(format!(
                "t_low ({} ps) must be below t_high ({} ps)",
                self.t_low_ps, self.t_high_ps
            ));
        }
        if self.min_rtt_ps == 0 {
            return Err("min_rtt must be above 0".into());
        }
        if self.seg_bytes == 0 {
            return Err("seg must be above 0".into());
        }
        if !(self.min_rate_bps > 0.0 && self.min_rate_bps <= self.max_rate_bps) {
            return Err(format!(
                "min_rate ({} bit/s) must be above 0 and at most the line rate ({} bit/s)",
                self.min_rate_bps, self.max_rate_bps
            ));
        }
        Ok(())
    }
}

/// Which line of Algorithm 1 a sample took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// new_rtt < T_low: rate + δ.
    BelowTLow,
    /// new_rtt > T_high: rate · (1 - β(1 - T_high/new_rtt)).
    AboveTHigh,
    /// gradient ≤ 0: rate + N·δ (N = 1, or the HAI factor).
    Increase { n: f64 },
    /// gradient > 0: rate · (1 - β·gradient).
    Decrease,
}

/// One flow's TIMELY state.
#[derive(Debug, Clone, PartialEq)]
pub struct Timely {
    /// The rate, bit/s.
    rate: f64,
    /// The previous RTT sample (None before the first).
    prev_rtt: Option<SimTime>,
    /// The EWMA of RTT differences, ps.
    rtt_diff: f64,
    /// Consecutive samples with gradient ≤ 0, this one included.
    neg_count: u32,
    /// Bytes acknowledged since the last segment completed (Sampling::Segment).
    seg_acc: u64,
    /// When the last sample was taken (Sampling::Rtt; StepScaling::MinRtt's Δt).
    last_sample_at: Option<SimTime>,
    /// Samples taken.
    samples: u64,
    /// The rule of the last sample.
    last_rule: Option<Rule>,
}

impl Timely {
    /// A flow starting at `start_rate_bps` (clamped to [min_rate, max_rate]). CoNEXT 2016, §4:
    /// "a new flow starts at rate C/(N+1)" with N flows already active at the sender: the
    /// caller chooses.
    pub fn new(p: &TimelyParams, start_rate_bps: f64) -> Timely {
        Timely {
            rate: start_rate_bps.clamp(p.min_rate_bps, p.max_rate_bps),
            prev_rtt: None,
            rtt_diff: 0.0,
            neg_count: 0,
            seg_acc: 0,
            last_sample_at: None,
            samples: 0,
            last_rule: None,
        }
    }

    pub fn rate_bps(&self) -> f64 {
        self.rate
    }

    /// The EWMA of RTT differences, ps.
    pub fn rtt_diff_ps(&self) -> f64 {
        self.rtt_diff
    }

    /// The normalised gradient of the last sample (rtt_diff / minRTT).
    pub fn gradient(&self, p: &TimelyParams) -> f64 {
        self.rtt_diff / p.min_rtt_ps as f64
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    pub fn last_rule(&self) -> Option<Rule> {
        self.last_rule
    }

    /// What the sender applies: no window, the current rate.
    pub fn control(&self) -> Control {
        Control {
            window_bytes: NO_WINDOW,
            rate_bps: self.rate,
        }
    }

    /// An acknowledgement arrives: take an RTT sample (`ack.rtt()`) when the sampling rule
    /// says so and run Algorithm 1 on it. A duplicate (nothing newly acknowledged) is never a
    /// sample.
    pub fn on_ack(&mut self, p: &TimelyParams, ack: &Ack) -> Control {
        if ack.acked_bytes == 0 {
            return self.control();
        }
        let take = match p.sampling {
            Sampling::Ack => true,
            Sampling::Segment => {
                self.seg_acc += ack.acked_bytes as u64;
                if self.seg_acc >= p.seg_bytes {
                    // one completion event, however many segment boundaries it crossed
                    self.seg_acc %= p.seg_bytes;
                    true
                } else {
                    false
                }
            }
            Sampling::Rtt => match self.last_sample_at {
                None => true,
                Some(t) => ack.sent_at > t,
            },
        };
        if take {
            self.on_rtt_sample(p, ack.now, ack.rtt());
        }
        self.control()
    }

    /// The factor of this update's steps: 1, or with [`StepScaling::MinRtt`]
    /// `min(1, (now - previous update) / minRTT)` (1 at the first update).
    pub fn step_factor(&self, p: &TimelyParams, now: SimTime) -> f64 {
        match (p.step_scaling, self.last_sample_at) {
            (StepScaling::MinRtt, Some(t)) => {
                (now.saturating_sub(t) as f64 / p.min_rtt_ps as f64).min(1.0)
            }
            _ => 1.0,
        }
    }

    /// Algorithm 1 on one RTT sample taken at `now`.
    pub fn on_rtt_sample(&mut self, p: &TimelyParams, now: SimTime, new_rtt: SimTime) -> Control {
        let k = self.step_factor(p, now);
        self.last_sample_at = Some(now);
        let prev = self.prev_rtt.unwrap_or(new_rtt);
        let new_rtt_diff = new_rtt as f64 - prev as f64;
        self.prev_rtt = Some(new_rtt);
        self.rtt_diff = (1.0 - p.alpha) * self.rtt_diff + p.alpha * new_rtt_diff;
        let gradient = self.rtt_diff / p.min_rtt_ps as f64;
        if gradient <= 0.0 {
            self.neg_count = self.neg_count.saturating_add(1);
        } else {
            self.neg_count = 0;
        }
        let rule = if new_rtt < p.t_low_ps {
            self.rate += k * p.delta_bps;
            Rule::BelowTLow
        } else if new_rtt > p.t_high_ps {
            self.rate *= 1.0 - k * p.beta * (1.0 - p.t_high_ps as f64 / new_rtt as f64);
            Rule::AboveTHigh
        } else if gradient <= 0.0 {
            let n = if self.neg_count >= p.hai_threshold {
                p.hai_factor
            } else {
                1.0
            };
            self.rate += k * n * p.delta_bps;
            Rule::Increase { n }
        } else {
            self.rate *= 1.0 - p.beta * gradient;
            Rule::Decrease
        };
        // 1 - β·gradient < 0 for a gradient above 1/β: the floor catches it
        self.rate = self.rate.clamp(p.min_rate_bps, p.max_rate_bps);
        self.samples += 1;
        self.last_rule = Some(rule);
        self.control()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: f64 = 10e9;

    fn p() -> TimelyParams {
        TimelyParams::paper(LINE)
    }

    /// A flow at `rate` whose previous sample was `prev` with EWMA `rtt_diff`, HAI count `neg`.
    fn at(rate: f64, prev: Option<SimTime>, rtt_diff: f64, neg: u32) -> Timely {
        Timely {
            rate,
            prev_rtt: prev,
            rtt_diff,
            neg_count: neg,
            ..Timely::new(&p(), rate)
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// Algorithm 1, one row per rule: (state before, new_rtt) -> (rule, rate after, rtt_diff
    /// after). α = 0.875, β = 0.8, δ = 10 Mb/s, T_low 50 µs, T_high 500 µs, minRTT 20 µs.
    #[test]
    fn algorithm_1_rule_table() {
        struct Row {
            what: &'static str,
            before: Timely,
            new_rtt: SimTime,
            rule: Rule,
            rate: f64,
            rtt_diff: f64,
        }
        let rows = [
            Row {
                // "if new_rtt < T_low: rate <- rate + δ" (whatever the gradient: here +)
                what: "below T_low",
                before: at(5e9, Some(20 * US), 0.0, 0),
                new_rtt: 30 * US,
                rule: Rule::BelowTLow,
                rate: 5e9 + 10e6,
                // rtt_diff = 0.125·0 + 0.875·10 µs
                rtt_diff: 0.875 * 10e6,
            },
            Row {
                // "rate <- rate·(1 - β·(1 - T_high/new_rtt))": 1 - 0.8·(1 - 500/1000) = 0.6
                what: "above T_high",
                before: at(5e9, Some(1000 * US), 0.0, 0),
                new_rtt: 1000 * US,
                rule: Rule::AboveTHigh,
                rate: 3e9,
                rtt_diff: 0.0,
            },
            Row {
                // T_high itself is not above T_high: the gradient decides (0: increase)
                what: "at T_high, zero gradient",
                before: at(5e9, Some(500 * US), 0.0, 0),
                new_rtt: 500 * US,
                rule: Rule::Increase { n: 1.0 },
                rate: 5e9 + 10e6,
                rtt_diff: 0.0,
            },
            Row {
                // T_low itself is not below T_low: gradient ≤ 0 -> rate + δ
                what: "at T_low, negative gradient",
                before: at(5e9, Some(60 * US), 0.0, 0),
                new_rtt: 50 * US,
                rule: Rule::Increase { n: 1.0 },
                rate: 5e9 + 10e6,
                rtt_diff: -0.875 * 10e6,
            },
            Row {
                // "elif normalized_gradient ≤ 0: rate <- rate + N·δ", N = 5 from the 5th
                // consecutive sample with gradient ≤ 0 (4 before this one)
                what: "hyperactive increase",
                before: at(5e9, Some(100 * US), 0.0, 4),
                new_rtt: 100 * US,
                rule: Rule::Increase { n: 5.0 },
                rate: 5e9 + 50e6,
                rtt_diff: 0.0,
            },
            Row {
                what: "4th consecutive: still N = 1",
                before: at(5e9, Some(100 * US), 0.0, 3),
                new_rtt: 100 * US,
                rule: Rule::Increase { n: 1.0 },
                rate: 5e9 + 10e6,
                rtt_diff: 0.0,
            },
            Row {
                // "else: rate <- rate·(1 - β·normalized_gradient)":
                // rtt_diff = 0.125·2 µs + 0.875·4 µs = 3.75 µs, gradient 3.75/20 = 0.1875,
                // rate·(1 - 0.8·0.1875) = 0.85·rate
                what: "positive gradient",
                before: at(5e9, Some(100 * US), 2e6, 7),
                new_rtt: 104 * US,
                rule: Rule::Decrease,
                rate: 5e9 * 0.85,
                rtt_diff: 3.75e6,
            },
            Row {
                // a gradient above 1/β would make the rate negative: floored at min_rate
                what: "huge gradient floors at min rate",
                before: at(5e9, Some(100 * US), 0.0, 0),
                new_rtt: 400 * US,
                rule: Rule::Decrease,
                rate: 100e6,
                rtt_diff: 0.875 * 300e6,
            },
            Row {
                // the increase stops at the line rate
                what: "capped at the line rate",
                before: at(LINE - 1e6, Some(30 * US), 0.0, 0),
                new_rtt: 30 * US,
                rule: Rule::BelowTLow,
                rate: LINE,
                rtt_diff: 0.0,
            },
            Row {
                // first sample: prev_rtt := new_rtt, so new_rtt_diff = 0
                what: "first sample",
                before: at(5e9, None, 0.0, 0),
                new_rtt: 200 * US,
                rule: Rule::Increase { n: 1.0 },
                rate: 5e9 + 10e6,
                rtt_diff: 0.0,
            },
        ];
        for r in rows {
            let mut t = r.before.clone();
            let c = t.on_rtt_sample(&p(), 0, r.new_rtt);
            assert_eq!(t.last_rule(), Some(r.rule), "{}", r.what);
            assert!(
                close(t.rate_bps(), r.rate),
                "{}: rate {}",
                r.what,
                t.rate_bps()
            );
            assert!(
                close(t.rtt_diff_ps(), r.rtt_diff),
                "{}: rtt_diff {}",
                r.what,
                t.rtt_diff_ps()
            );
            assert_eq!(c.window_bytes, NO_WINDOW, "{}", r.what);
            assert_eq!(c.rate_bps, t.rate_bps(), "{}", r.what);
            assert_eq!(t.prev_rtt, Some(r.new_rtt), "{}", r.what);
        }
    }

    #[test]
    fn hai_count_resets_on_a_positive_gradient() {
        let p = p();
        let mut t = Timely::new(&p, 5e9);
        // five flat samples in the gradient band: N = 1, 1, 1, 1, 5
        let ns: Vec<f64> = (0..5)
            .map(|_| {
                t.on_rtt_sample(&p, 0, 100 * US);
                match t.last_rule() {
                    Some(Rule::Increase { n }) => n,
                    r => panic!("{r:?}"),
                }
            })
            .collect();
        assert_eq!(ns, vec![1.0, 1.0, 1.0, 1.0, 5.0]);
        // a rise: decrease, and the count starts again
        t.on_rtt_sample(&p, 0, 110 * US);
        assert_eq!(t.last_rule(), Some(Rule::Decrease));
        // falling back: gradient still > 0 for a while (EWMA), then ≤ 0 with N = 1
        let mut saw_increase = false;
        for _ in 0..10 {
            t.on_rtt_sample(&p, 0, 100 * US);
            if let Some(Rule::Increase { n }) = t.last_rule() {
                assert_eq!(n, 1.0, "the first increases after a decrease are plain");
                saw_increase = true;
                break;
            }
        }
        assert!(saw_increase);
    }

    /// The step scaling, one row per case: (scaling, time since the previous update (None: the
    /// first), state, new_rtt) -> (rule, rate after). CoNEXT 2016 §5.2: "rate updates are
    /// scaled by D_minRTT to ensure that rate update frequency is limited"; the code snippet's
    /// `delta_factor = min(1, Δt / minRTT)` on the additive steps and the T_high decrease.
    #[test]
    fn step_scaling_rule_table() {
        struct Row {
            what: &'static str,
            scaling: StepScaling,
            since: Option<SimTime>,
            before: Timely,
            new_rtt: SimTime,
            rule: Rule,
            rate: f64,
        }
        use StepScaling::{MinRtt, None as Unscaled};
        let rows = [
            Row {
                // Δt = 5 µs = minRTT/4: a quarter of δ
                what: "below T_low, a quarter of minRTT after the last update",
                scaling: MinRtt,
                since: Some(5 * US),
                before: at(5e9, Some(20 * US), 0.0, 0),
                new_rtt: 30 * US,
                rule: Rule::BelowTLow,
                rate: 5e9 + 0.25 * 10e6,
            },
            Row {
                what: "below T_low, a full minRTT after: the whole δ",
                scaling: MinRtt,
                since: Some(20 * US),
                before: at(5e9, Some(20 * US), 0.0, 0),
                new_rtt: 30 * US,
                rule: Rule::BelowTLow,
                rate: 5e9 + 10e6,
            },
            Row {
                what: "longer than minRTT: still one δ (the factor is at most 1)",
                scaling: MinRtt,
                since: Some(70 * US),
                before: at(5e9, Some(20 * US), 0.0, 0),
                new_rtt: 30 * US,
                rule: Rule::BelowTLow,
                rate: 5e9 + 10e6,
            },
            Row {
                what: "the first update: the whole δ",
                scaling: MinRtt,
                since: None,
                before: at(5e9, None, 0.0, 0),
                new_rtt: 30 * US,
                rule: Rule::BelowTLow,
                rate: 5e9 + 10e6,
            },
            Row {
                what: "none: every sample the whole δ (Algorithm 1 as printed)",
                scaling: Unscaled,
                since: Some(5 * US),
                before: at(5e9, Some(20 * US), 0.0, 0),
                new_rtt: 30 * US,
                rule: Rule::BelowTLow,
                rate: 5e9 + 10e6,
            },
            Row {
                // 10 µs: half of N·δ = 5 · 10 Mb/s
                what: "hyperactive increase, half a minRTT after",
                scaling: MinRtt,
                since: Some(10 * US),
                before: at(5e9, Some(100 * US), 0.0, 4),
                new_rtt: 100 * US,
                rule: Rule::Increase { n: 5.0 },
                rate: 5e9 + 0.5 * 50e6,
            },
            Row {
                // 1 - 0.5 · 0.8 · (1 - 500/1000) = 0.8
                what: "above T_high, half a minRTT after: half the cut",
                scaling: MinRtt,
                since: Some(10 * US),
                before: at(5e9, Some(1000 * US), 0.0, 0),
                new_rtt: 1000 * US,
                rule: Rule::AboveTHigh,
                rate: 4e9,
            },
            Row {
                // the gradient spans the time since the previous sample already: 0.85 as in
                // the unscaled table
                what: "positive gradient: not scaled",
                scaling: MinRtt,
                since: Some(5 * US),
                before: at(5e9, Some(100 * US), 2e6, 7),
                new_rtt: 104 * US,
                rule: Rule::Decrease,
                rate: 5e9 * 0.85,
            },
        ];
        let t0 = 1000 * US;
        for r in rows {
            let p = TimelyParams {
                step_scaling: r.scaling,
                ..p()
            };
            let mut t = r.before.clone();
            t.last_sample_at = r.since.map(|d| t0 - d);
            t.on_rtt_sample(&p, t0, r.new_rtt);
            assert_eq!(t.last_rule(), Some(r.rule), "{}", r.what);
            assert!(
                close(t.rate_bps(), r.rate),
                "{}: rate {}",
                r.what,
                t.rate_bps()
            );
            assert_eq!(t.last_sample_at, Some(t0), "{}", r.what);
        }
    }

    /// Sampling faster than once per minRTT gains nothing more with the scaling: over 2 ms
    /// below T_low, a flow sampling every 2 µs and one sampling every 20 µs (= minRTT) both
    /// gain 100·δ; unscaled, the fast sampler gains 1000·δ.
    #[test]
    fn sampling_faster_than_min_rtt_gains_nothing_more() {
        let gain = |scaling: StepScaling, every: SimTime| {
            // a line rate the unscaled gain does not reach
            let p = TimelyParams {
                step_scaling: scaling,
                max_rate_bps: 100e9,
                ..p()
            };
            let mut t = Timely::new(&p, 1e9);
            // the first update is a whole step; count the 2 ms after it
            t.on_rtt_sample(&p, 0, 30 * US);
            let r0 = t.rate_bps();
            for k in 1..=(2000 * US / every) {
                t.on_rtt_sample(&p, k * every, 30 * US);
            }
            (t.rate_bps() - r0) / p.delta_bps
        };
        assert!((gain(StepScaling::MinRtt, 2 * US) - 100.0).abs() < 1e-6);
        assert!((gain(StepScaling::MinRtt, 20 * US) - 100.0).abs() < 1e-6);
        assert!((gain(StepScaling::None, 2 * US) - 1000.0).abs() < 1e-6);
        assert!((gain(StepScaling::None, 20 * US) - 100.0).abs() < 1e-6);
    }

    fn ack(now: SimTime, sent_at: SimTime, bytes: u32) -> Ack {
        Ack::plain(now, 0, bytes, sent_at)
    }

    #[test]
    fn sampling_per_segment_per_ack_and_per_rtt() {
        // 1000 B per ACK; Seg = 4000 B -> every 4th ACK is a sample
        let mut p = p();
        p.seg_bytes = 4000;
        let mut t = Timely::new(&p, 5e9);
        let taken: Vec<u64> = (1..=9)
            .map(|i| {
                t.on_ack(&p, &ack(i * 10 * US + 30 * US, i * 10 * US, 1000));
                t.samples()
            })
            .collect();
        assert_eq!(taken, vec![0, 0, 0, 1, 1, 1, 1, 2, 2]);
        // a duplicate acknowledges nothing and is never a sample
        p.sampling = Sampling::Ack;
        let mut t = Timely::new(&p, 5e9);
        t.on_ack(&p, &ack(10 * US, 0, 0));
        assert_eq!(t.samples(), 0);
        for i in 1..=3 {
            t.on_ack(&p, &ack(i * 10 * US, 0, 1000));
        }
        assert_eq!(t.samples(), 3);
        // per RTT: a sample at 100 us; ACKs of frames sent before it are not samples, the
        // first ACK of a frame sent after it is
        p.sampling = Sampling::Rtt;
        let mut t = Timely::new(&p, 5e9);
        let rows: &[(SimTime, SimTime, u64)] = &[
            (100 * US, 70 * US, 1),
            (101 * US, 71 * US, 1),
            (129 * US, 99 * US, 1),
            (130 * US, 100 * US, 1), // sent at the sample instant: not after it
            (131 * US, 101 * US, 2),
            (140 * US, 110 * US, 2),
            (162 * US, 132 * US, 3),
        ];
        for &(now, sent, want) in rows {
            t.on_ack(&p, &ack(now, sent, 1000));
            assert_eq!(t.samples(), want, "ack at {now}");
        }
    }

    #[test]
    fn segment_sample_uses_the_completing_acks_rtt() {
        let mut p = p();
        p.seg_bytes = 2000;
        let mut t = Timely::new(&p, 5e9);
        // first segment completes with an RTT of 30 us (< T_low): + δ
        t.on_ack(&p, &ack(10 * US, 0, 1000));
        t.on_ack(&p, &ack(40 * US, 10 * US, 1000));
        assert_eq!(t.last_rule(), Some(Rule::BelowTLow));
        assert_eq!(t.prev_rtt, Some(30 * US));
    }

    #[test]
    fn params_validation() {
        assert!(p().validate().is_ok());
        let bad = [
            TimelyParams {
                t_low_ps: 500 * US,
                ..p()
            },
            TimelyParams { alpha: 0.0, ..p() },
            TimelyParams { beta: 1.5, ..p() },
            TimelyParams {
                min_rtt_ps: 0,
                ..p()
            },
            TimelyParams {
                min_rate_bps: 2.0 * LINE,
                ..p()
            },
        ];
        for b in bad {
            assert!(b.validate().is_err(), "{b:?}");
        }
    }

    #[test]
    fn start_rate_is_clamped() {
        let p = p();
        assert_eq!(Timely::new(&p, 1e12).rate_bps(), LINE);
        assert_eq!(Timely::new(&p, 1.0).rate_bps(), 100e6);
    }

    /// Below T_low a flow gains δ per completion event, and completion events come every
    /// Seg/R: the rate grows as dR/dt = δ·R/Seg (the fluid model's eq. 21 with τ* = Seg/R),
    /// e-folding every Seg/δ = 51.2 ms at the defaults (64 KB, 10 Mb/s). From the 100 Mb/s
    /// floor a flow is at about 0.7 Gb/s after 100 ms, and HAI never applies (Algorithm 1 gives
    /// the T_low branch δ, not N·δ). docs/models/timely.md, "Ten greedy flows".
    #[test]
    fn recovery_from_the_floor_below_t_low_takes_seg_over_delta_per_e_fold() {
        for scaling in [StepScaling::MinRtt, StepScaling::None] {
            let p = TimelyParams {
                step_scaling: scaling,
                ..p()
            };
            let mut t = Timely::new(&p, p.min_rate_bps);
            let mut now: SimTime = 0;
            let end: SimTime = 100_000 * US;
            while now < end {
                // the next segment completes Seg/R later; the queue is empty (10 µs RTT)
                now += (p.seg_bytes as f64 * 8.0 / t.rate_bps() * 1e12) as SimTime;
                t.on_rtt_sample(&p, now, 10 * US);
                assert_eq!(t.last_rule(), Some(Rule::BelowTLow));
            }
            let e_fold_s = p.seg_bytes as f64 * 8.0 / p.delta_bps;
            assert!((e_fold_s - 0.0512).abs() < 1e-12);
            let fluid = p.min_rate_bps * (0.1 / e_fold_s).exp(); // 0.705 Gb/s
            let r = t.rate_bps();
            // discrete steps of δ at R: ln(1 + δ/R) per step, a little below δ/R at the floor
            assert!(
                r <= fluid && r >= 0.93 * fluid,
                "{scaling:?}: {r} vs {fluid}"
            );
            assert!(r < 0.1 * LINE, "{r}");
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Under arbitrary RTT sequences (and every sampling rule and HAI setting) the
            /// rate stays within [min_rate, max_rate] and the window is never set.
            #[test]
            fn rate_stays_within_bounds(
                rtts in proptest::collection::vec(0u64..5_000_000_000, 1..300),
                start in 0.0f64..20e9,
                sampling in 0usize..3,
                alpha in 0.01f64..1.0,
                beta in 0.01f64..1.0,
                hai in 1u32..10,
            ) {
                let p = TimelyParams {
                    alpha,
                    beta,
                    hai_threshold: hai,
                    seg_bytes: 3000,
                    sampling: [Sampling::Segment, Sampling::Ack, Sampling::Rtt][sampling],
                    ..TimelyParams::paper(LINE)
                };
                let mut t = Timely::new(&p, start);
                let mut now = 0;
                for (i, &rtt) in rtts.iter().enumerate() {
                    now += 1 + rtt / 7;
                    let c = if i % 2 == 0 {
                        t.on_rtt_sample(&p, now, rtt)
                    } else {
                        t.on_ack(&p, &ack(now + rtt, now, 1000))
                    };
                    prop_assert!(c.rate_bps >= p.min_rate_bps && c.rate_bps <= p.max_rate_bps,
                        "rate {} after rtt {}", c.rate_bps, rtt);
                    prop_assert_eq!(c.window_bytes, NO_WINDOW);
                }
            }
        }

        proptest! {
            /// With `step_scaling = "min_rtt"` a flow's additive increase over any stretch is
            /// at most N·δ per minRTT (plus one step), however often it samples: the increase
            /// per unit time no longer grows with the sample rate (the fluid model's update
            /// interval max(Seg/R, D_minRTT), CoNEXT 2016 eq. 23). Without the scaling, every
            /// sample adds at least a whole step. The RTT never rises (from 400 µs, down to
            /// 10 µs), so every rule is an increase: below T_low, or the gradient's (with HAI).
            #[test]
            fn scaled_increase_is_at_most_n_delta_per_min_rtt(
                steps in proptest::collection::vec((0u64..60_000_000, 0u64..20_000_000), 2..400),
            ) {
                for scaling in [StepScaling::MinRtt, StepScaling::None] {
                    let p = TimelyParams {
                        step_scaling: scaling,
                        max_rate_bps: 1e12,
                        ..TimelyParams::paper(LINE)
                    };
                    let mut t = Timely::new(&p, 1e9);
                    let (mut now, mut rtt) = (0, 400 * US);
                    for &(gap, drop) in &steps {
                        now += gap;
                        rtt = rtt.saturating_sub(drop).max(10 * US);
                        t.on_rtt_sample(&p, now, rtt);
                    }
                    let gained = t.rate_bps() - 1e9;
                    let cap = p.hai_factor * p.delta_bps * (1.0 + now as f64 / p.min_rtt_ps as f64);
                    match scaling {
                        StepScaling::MinRtt => prop_assert!(gained <= cap * (1.0 + 1e-9),
                            "gained {} over {} ps, cap {}", gained, now, cap),
                        // unscaled: each sample adds at least δ, so n samples add n·δ
                        StepScaling::None => prop_assert!(
                            gained >= steps.len() as f64 * p.delta_bps * (1.0 - 1e-9),
                            "gained {} from {} samples", gained, steps.len()),
                    }
                }
            }
        }

        #[test]
        fn random_rtt_walk_stays_within_bounds() {
            // a long random walk around the thresholds (seeded, deterministic)
            let p = p();
            let mut t = Timely::new(&p, 5e9);
            let mut rng = crate::engine::Rng::from_seed(11);
            let mut rtt = 100.0 * US as f64;
            let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
            for _ in 0..100_000 {
                rtt = (rtt + rng.uniform(-10.0, 10.0) * US as f64).clamp(US as f64, 2e9);
                let r = t.on_rtt_sample(&p, 0, rtt as SimTime).rate_bps;
                lo = lo.min(r);
                hi = hi.max(r);
            }
            assert!(lo >= p.min_rate_bps && hi <= p.max_rate_bps, "{lo} {hi}");
        }
    }
}
