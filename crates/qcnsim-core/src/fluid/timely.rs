//! The TIMELY fluid model (Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: lessons learnt from
//! analysis of DCQCN and TIMELY", CoNEXT 2016, §5.2, Figure 7), per flow i, with the
//! authors' equation numbers (as numbered in their camera-ready LaTeX source,
//! `jitupadhye-zz/rdma: conext2016/timely-model.tex`; docs/models/fluid.md):
//!
//! ```text
//! (20) dq/dt    = Σ_i R_i(t) - C                                (q kept in [0, buffer])
//! (21) dR_i/dt  =  δ/τ_i*                                  q(t - τ') < C·T_low
//!               = -β/τ_i* · (1 - C·T_high/q(t - τ')) · R_i  q(t - τ') > C·T_high
//!               =  δ/τ_i*                                  g_i ≤ 0
//!               = -g_i β/τ_i* · R_i                        g_i > 0
//! (22) dg_i/dt  = α/τ_i* · ( -g_i + (q(t - τ') - q(t - τ' - τ_i*)) / (C·D_minRTT) )
//! (23) τ_i*     = max(Seg/R_i, D_minRTT)                   the rate-update interval
//! (24) τ'       = q/C + MTU/C + D_prop                     the feedback delay
//! ```
//!
//! The cases of (21) are taken in Algorithm 1's order (T_low, then T_high, then the gradient),
//! as the authors' MATLAB script (`fluidmodel/timely/timely2.m`) does. With
//! `fluid.timely.zero_gradient = "decrease"` the equality moves to the decrease term (g_i < 0
//! increases, g_i ≥ 0 applies -g_i β R_i/τ_i*: eq. 28, "the system ... has infinite fixed
//! points"). The hyperactive increase is not in the model ("For simplicity, we ignore the
//! hyperactive increase phase").
//!
//! Our readings: τ' is evaluated with the current queue (as the script's `DelayModel` does);
//! MTU/C + D_prop is the scenario's unloaded round trip (`fluid.tau`, or `"path"`: the flows'
//! path to the destination and a 64 B ACK back, which includes a frame's transmission at
//! every hop); the delayed queue is interpolated linearly between steps, and before t = 0 it
//! is the initial queue (0); a rate does not increase at the line rate (as in the script) and
//! stays within [`fluid.timely.min_rate`, line rate] (the model has no floor, but Seg/R in
//! (23) needs one). Units: bits and seconds.

use super::{steps, FlowTrace, Inputs, Trace};
use crate::scenario::fluid::StartRates;
use crate::scenario::{Scenario, ScenarioError};
use crate::units::{SimTime, SEC};
use std::collections::VecDeque;

/// The TIMELY fluid model's parameters in bits and seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelyFluid {
    /// The flows' names (the scenario's flows through the bottleneck).
    pub names: Vec<String>,
    /// C, bit/s.
    pub c: f64,
    /// Line rate (a rate's ceiling), bit/s.
    pub line: f64,
    /// A rate's floor, bit/s.
    pub min_rate: f64,
    pub alpha: f64,
    pub beta: f64,
    /// δ, bit/s.
    pub delta: f64,
    /// T_low, s.
    pub t_low: f64,
    /// T_high, s.
    pub t_high: f64,
    /// D_minRTT, s.
    pub min_rtt: f64,
    /// Seg, bits.
    pub seg: f64,
    /// MTU/C + D_prop, s.
    pub tau0: f64,
    /// Buffer, bits.
    pub q_max: f64,
    /// R_i(0), bit/s.
    pub start: Vec<f64>,
    /// At g_i = 0: increase (eq. 21) or not (eq. 28).
    pub increase_at_zero: bool,
}

/// The queue's past values, one per step, newest last; before t = 0 the initial value.
#[derive(Debug, Clone)]
struct History {
    buf: VecDeque<f64>,
    /// Values pushed so far.
    pushed: u64,
    /// Values kept (grows with the longest delay asked for).
    keep: usize,
    init: f64,
}

impl History {
    fn new(init: f64, keep: usize) -> History {
        History {
            buf: VecDeque::with_capacity(keep),
            pushed: 0,
            keep: keep.max(4),
            init,
        }
    }

    fn push(&mut self, q: f64) {
        self.buf.push_back(q);
        self.pushed += 1;
        while self.buf.len() > self.keep {
            self.buf.pop_front();
        }
    }

    /// Keep at least twice `back` steps from now on (delays change little per step, so the
    /// values a longer delay will ask for are still there).
    fn reserve(&mut self, back: f64, cap: usize) {
        let need = (2.0 * back.min(cap as f64)).ceil() as usize + 4;
        if need > self.keep {
            self.keep = need;
        }
    }

    /// The value `j` steps before the newest.
    fn get(&self, j: usize) -> f64 {
        let n = self.buf.len();
        if j < n {
            self.buf[n - 1 - j]
        } else if j as u64 >= self.pushed {
            self.init
        } else {
            // older than what was kept (not expected: `reserve` keeps twice the delay)
            self.buf.front().copied().unwrap_or(self.init)
        }
    }

    /// The value `back` (fractional) steps before the newest, linearly interpolated.
    fn at(&self, back: f64) -> f64 {
        let back = back.max(0.0);
        let i = back.floor();
        let fr = back - i;
        let a = self.get(i as usize);
        if fr == 0.0 {
            return a;
        }
        let b = self.get(i as usize + 1);
        a + (b - a) * fr
    }
}

impl TimelyFluid {
    pub fn from_scenario(sc: &Scenario, inp: &Inputs) -> Result<TimelyFluid, ScenarioError> {
        let k = &sc.fluid.timely;
        let s = |ps: SimTime| ps as f64 / SEC as f64;
        let n = inp.n;
        let min_rate = k.min_rate_bps.min(inp.line_bps);
        let start = match &k.start {
            StartRates::Fair => vec![inp.c_bps / n as f64; n],
            StartRates::Line => vec![inp.line_bps; n],
            StartRates::All(r) => vec![*r; n],
            StartRates::Each(v) => {
                if v.len() != n {
                    return Err(ScenarioError::new(
                        "fluid.timely.start_rate",
                        format!("a list of {} rates", v.len()),
                        format!(
                            "one rate per flow through {} ({n}: {})",
                            inp.port,
                            inp.flow_names.join(", ")
                        ),
                    ));
                }
                v.clone()
            }
        };
        Ok(TimelyFluid {
            names: inp.flow_names.clone(),
            c: inp.c_bps,
            line: inp.line_bps,
            min_rate,
            alpha: k.alpha,
            beta: k.beta,
            delta: k.delta_bps,
            t_low: s(k.t_low_ps),
            t_high: s(k.t_high_ps),
            min_rtt: s(k.min_rtt_ps),
            seg: 8.0 * k.seg_bytes as f64,
            tau0: s(inp.tau_ps),
            q_max: 8.0 * inp.q_max_bytes,
            start: start
                .into_iter()
                .map(|r| r.clamp(min_rate, inp.line_bps))
                .collect(),
            increase_at_zero: k.increase_at_zero,
        })
    }

    /// τ_i* of eq. 23, s.
    #[inline]
    pub fn tau_star(&self, r: f64) -> f64 {
        (self.seg / r).max(self.min_rtt)
    }

    /// τ' of eq. 24, s, for a queue of `q` bits.
    #[inline]
    pub fn tau_prime(&self, q: f64) -> f64 {
        q / self.c + self.tau0
    }

    /// dR_i/dt of eq. 21 for a flow at `r` with gradient `g`, given q(t - τ') = `q1`.
    #[inline]
    pub fn rate_deriv(&self, r: f64, g: f64, q1: f64) -> f64 {
        let ts = self.tau_star(r);
        let d = if q1 < self.c * self.t_low {
            self.delta / ts
        } else if q1 > self.c * self.t_high {
            -self.beta / ts * (1.0 - self.c * self.t_high / q1) * r
        } else if g < 0.0 || (g == 0.0 && self.increase_at_zero) {
            self.delta / ts
        } else {
            -g * self.beta / ts * r
        };
        // no increase at the line rate (the authors' script)
        if r >= self.line && d > 0.0 {
            0.0
        } else {
            d
        }
    }

    /// dg_i/dt of eq. 22 for a flow at `r` with gradient `g`, given q(t - τ') and
    /// q(t - τ' - τ_i*).
    #[inline]
    pub fn gradient_deriv(&self, r: f64, g: f64, q1: f64, q2: f64) -> f64 {
        self.alpha / self.tau_star(r) * (-g + (q1 - q2) / (self.c * self.min_rtt))
    }

    /// Integrate from q = 0, g_i = 0, R_i = start with step `dt_ps` over `duration` ps,
    /// recording every `rec_ps`.
    pub fn solve(
        &self,
        dt_ps: SimTime,
        duration: SimTime,
        rec_ps: SimTime,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<(Trace, usize), super::Cancelled> {
        let dt = dt_ps as f64 / SEC as f64;
        let mut tick = super::Tick::new();
        let rec = steps(rec_ps, dt_ps, 1);
        let nsteps = (duration / dt_ps) as usize;
        let n = self.start.len();
        let mut q = 0.0f64;
        let mut r = self.start.clone();
        let mut g = vec![0.0f64; n];
        let mut dr = vec![0.0f64; n];
        let mut dg = vec![0.0f64; n];
        let longest = |rate: f64, q: f64| (self.tau_prime(q) + self.tau_star(rate)) / dt;
        let init_keep = r.iter().map(|&x| longest(x, 0.0)).fold(0.0f64, f64::max);
        let cap = nsteps + 2;
        let mut hist = History::new(0.0, (2.0 * init_keep.min(cap as f64)) as usize + 4);
        let mut tr = Trace {
            flows: self
                .names
                .iter()
                .map(|nm| FlowTrace {
                    name: nm.clone(),
                    ..FlowTrace::default()
                })
                .collect(),
            ..Trace::default()
        };
        for k in 0..=nsteps {
            if k % rec == 0 {
                tr.t_ps.push((k as u64 * dt_ps) as i64);
                tr.q_bytes.push(q / 8.0);
                let total: f64 = r.iter().sum();
                tr.cr_bps.push(total / n as f64);
                tr.tr_bps.push(total / n as f64);
                for (i, f) in tr.flows.iter_mut().enumerate() {
                    f.rate_bps.push(r[i]);
                    f.gradient.push(g[i]);
                }
            }
            if k == nsteps {
                break;
            }
            tick.check(k, nsteps, progress)?;
            hist.push(q);
            let back1 = self.tau_prime(q) / dt;
            let q1 = hist.at(back1);
            for i in 0..n {
                let back2 = back1 + self.tau_star(r[i]) / dt;
                hist.reserve(back2, cap);
                let q2 = hist.at(back2);
                dr[i] = self.rate_deriv(r[i], g[i], q1);
                dg[i] = self.gradient_deriv(r[i], g[i], q1, q2);
            }
            let mut dq = r.iter().sum::<f64>() - self.c;
            if (q <= 0.0 && dq < 0.0) || (q >= self.q_max && dq > 0.0) {
                dq = 0.0;
            }
            for i in 0..n {
                r[i] = (r[i] + dt * dr[i]).clamp(self.min_rate, self.line);
                g[i] += dt * dg[i];
            }
            q = (q + dt * dq).clamp(0.0, self.q_max);
        }
        Ok((tr, nsteps))
    }

    pub fn describe(&self) -> Vec<(String, f64, String)> {
        let mut v: Vec<(String, f64, String)> = [
            ("alpha", self.alpha, ""),
            ("beta", self.beta, ""),
            ("delta", self.delta, "bps"),
            ("t_low", self.t_low, "s"),
            ("t_high", self.t_high, "s"),
            ("min_rtt", self.min_rtt, "s"),
            ("seg", self.seg / 8.0, "B"),
            ("tau0", self.tau0, "s"),
            ("min_rate", self.min_rate, "bps"),
            (
                "increase_at_zero_gradient",
                if self.increase_at_zero { 1.0 } else { 0.0 },
                "",
            ),
        ]
        .into_iter()
        .map(|(a, b, c)| (a.to_string(), b, c.to_string()))
        .collect();
        for (nm, r) in self.names.iter().zip(&self.start) {
            v.push((format!("start_rate:{nm}"), *r, "bps".into()));
        }
        v
    }

    /// TIMELY's fluid model has no fixed point (CoNEXT 2016, Theorem 1), or, with eq. 28,
    /// infinitely many: nothing to report but the band of queues where eq. 28's fixed points
    /// lie (C·T_low < q* < C·T_high).
    pub fn fixed_point(&self) -> Vec<(&'static str, f64, &'static str)> {
        if self.increase_at_zero {
            Vec::new()
        } else {
            vec![
                ("fixed_queue_band_low", self.c * self.t_low / 8.0, "B"),
                ("fixed_queue_band_high", self.c * self.t_high / 8.0, "B"),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> TimelyFluid {
        TimelyFluid {
            names: vec!["a".into(), "b".into()],
            c: 10e9,
            line: 10e9,
            min_rate: 10e6,
            alpha: 0.875,
            beta: 0.8,
            delta: 10e6,
            t_low: 50e-6,
            t_high: 500e-6,
            min_rtt: 20e-6,
            seg: 8.0 * 64_000.0,
            tau0: 4e-6,
            q_max: f64::INFINITY,
            start: vec![5e9, 5e9],
            increase_at_zero: true,
        }
    }

    #[test]
    fn rate_equation_cases() {
        // eq. 21 with τ* = max(Seg/R, D_minRTT): R = 5 Gb/s -> Seg/R = 512 kbit / 5 Gb/s =
        // 102.4 us; R = 40 Gb/s (line 100G) -> 12.8 us < 20 us -> τ* = 20 us
        let m = model();
        let ts = 102.4e-6;
        let (lo, hi) = (m.c * m.t_low, m.c * m.t_high);
        // (r, g, q1, dR/dt)
        let rows: &[(f64, f64, f64, f64)] = &[
            (5e9, 0.3, 0.5 * lo, 10e6 / ts), // below C·T_low: δ/τ* whatever g
            (5e9, -0.3, 2.0 * hi, -0.8 / ts * 0.5 * 5e9), // above C·T_high
            (5e9, -0.3, 2.0 * lo, 10e6 / ts), // g < 0
            (5e9, 0.0, 2.0 * lo, 10e6 / ts), // g = 0: Algorithm 1's ≤
            (5e9, 0.25, 2.0 * lo, -0.25 * 0.8 / ts * 5e9), // g > 0
            (10e9, -0.3, 0.0, 0.0),          // at the line rate: no increase
        ];
        for &(r, g, q1, want) in rows {
            let got = m.rate_deriv(r, g, q1);
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{r} {g} {q1}: {got} {want}"
            );
        }
        let m28 = TimelyFluid {
            increase_at_zero: false,
            ..model()
        };
        assert_eq!(
            m28.rate_deriv(5e9, 0.0, 2.0 * lo),
            0.0,
            "eq. 28: g = 0 holds the rate"
        );
        let fast = TimelyFluid {
            line: 100e9,
            ..model()
        };
        assert!((fast.tau_star(40e9) - 20e-6).abs() < 1e-15);
        // eq. 22: α/τ* (-g + Δq/(C·D_minRTT)); Δq = 100 kbit: 100e3/(10e9·20e-6) = 0.5
        let dg = m.gradient_deriv(5e9, 0.1, 2e5, 1e5);
        assert!((dg - 0.875 / ts * (0.5 - 0.1)).abs() < 1e-6, "{dg}");
        // eq. 24
        assert!((m.tau_prime(1e5) - (1e5 / 10e9 + 4e-6)).abs() < 1e-18);
    }

    #[test]
    fn history_interpolates_and_starts_from_the_initial_queue() {
        let mut h = History::new(0.0, 8);
        for q in [10.0, 20.0, 30.0] {
            h.push(q);
        }
        // newest 30 (back 0), 20 (back 1), 10 (back 2), then the initial 0
        let rows = [
            (0.0, 30.0),
            (0.5, 25.0),
            (1.0, 20.0),
            (2.0, 10.0),
            (2.5, 5.0),
            (9.0, 0.0),
        ];
        for (back, want) in rows {
            assert_eq!(h.at(back), want, "back {back}");
        }
        // keeps growing with the delay asked for
        h.reserve(100.0, 1000);
        for i in 0..300 {
            h.push(i as f64);
        }
        assert_eq!(h.at(150.0), 299.0 - 150.0);
    }
}
