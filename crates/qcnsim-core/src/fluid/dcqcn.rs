//! The DCQCN fluid model (Zhu, Ghobadi, Misra, Padhye, "ECN or Delay: lessons learnt from
//! analysis of DCQCN and TIMELY", CoNEXT 2016), per flow, with feedback delay τ*
//! (docs/models/fluid.md):
//!
//! ```text
//! p(t)    = 0 (q <= Kmin); (q - Kmin)/(Kmax - Kmin) Pmax (Kmin < q <= Kmax); 1 (q > Kmax)
//! dq/dt   = N R_C - C                                            (q kept in [0, buffer])
//! dα/dt   = g/τ' [ (1 - (1 - p*)^(τ' R*)) - α ]
//! dR_T/dt = -(R_T - R_C)/τ · (1 - (1 - p*)^(τ R*))
//!           + R_AI R* (b(p*) (1 - p*)^(F B) + d(p*) (1 - p*)^(F T R*))
//! dR_C/dt = -R_C α/(2τ) · (1 - (1 - p*)^(τ R*)) + (R_T - R_C)/2 · R* (b(p*) + d(p*))
//! b(p) = p / ((1 - p)^(-B) - 1),  d(p) = p / ((1 - p)^(-T R*) - 1)
//! ```
//!
//! with p* = p(q(t - τ*)), R* = R_C(t - τ*). τ is the CNP interval, τ' the α update interval,
//! T the rate-increase timer, B the byte counter, F the fast-recovery steps. At p = 0:
//! b = 1/B, d = 1/(T R*); at p = 1 every increase term is 0. The rate increase stops while
//! R* is at the line rate, and R_C, R_T are kept at or below it. Units: packets of the flows'
//! frame size (default) or bits (`fluid.dcqcn.unit = "bit"`, as the authors' script evaluates
//! the model).

use super::{expiry_rate, pow1m, steps, Delay, Inputs, Trace};
use crate::scenario::Scenario;
use crate::units::{SimTime, SEC};

/// The DCQCN fluid model's parameters in units of `unit_bytes` (a packet or a bit) and seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct DcqcnFluid {
    pub n: f64,
    /// Capacity, units/s.
    pub c: f64,
    /// Line rate, units/s.
    pub line: f64,
    pub k_min: f64,
    pub k_max: f64,
    pub p_max: f64,
    pub g: f64,
    /// τ, the CNP interval, s.
    pub tau: f64,
    /// τ', the α update interval, s.
    pub tau_a: f64,
    /// T, the rate-increase timer, s.
    pub timer: f64,
    /// B, units.
    pub b: f64,
    pub frt: f64,
    /// R_AI, units/s.
    pub r_ai: f64,
    /// Buffer, units.
    pub q_max: f64,
    /// R_C(0) = R_T(0), units/s.
    pub start: f64,
    pub alpha0: f64,
    /// Bytes per unit (the packet, or 1/8).
    pub unit_bytes: f64,
}

impl DcqcnFluid {
    pub fn from_scenario(sc: &Scenario, inp: &Inputs) -> DcqcnFluid {
        let k = &sc.fluid.dcqcn;
        let u = if k.per_bit { 0.125 } else { inp.packet_bytes };
        let ups = |bps: f64| bps / (8.0 * u);
        let s = |ps: SimTime| ps as f64 / SEC as f64;
        DcqcnFluid {
            n: inp.n as f64,
            c: ups(inp.c_bps),
            line: ups(inp.line_bps),
            k_min: k.k_min_bytes as f64 / u,
            k_max: k.k_max_bytes as f64 / u,
            p_max: k.p_max,
            g: k.g,
            tau: s(k.cnp_interval_ps),
            tau_a: s(k.alpha_interval_ps),
            timer: s(k.timer_ps),
            b: k.byte_counter_bytes as f64 / u,
            frt: k.frt as f64,
            r_ai: ups(k.r_ai_bps),
            q_max: inp.q_max_bytes / u,
            start: ups(k.start_rate_bps.unwrap_or(inp.line_bps).min(inp.line_bps)),
            alpha0: k.alpha_start,
            unit_bytes: u,
        }
    }

    /// The marking probability at queue q (units).
    #[inline]
    pub fn mark(&self, q: f64) -> f64 {
        if q <= self.k_min {
            0.0
        } else if q <= self.k_max {
            (q - self.k_min) / (self.k_max - self.k_min) * self.p_max
        } else {
            1.0
        }
    }

    /// (dq/dt, dR_C/dt, dR_T/dt, dα/dt) given the state and the delayed R_C and q.
    #[inline]
    pub fn deriv(
        &self,
        q: f64,
        rc: f64,
        rt: f64,
        alpha: f64,
        rc_d: f64,
        q_d: f64,
    ) -> (f64, f64, f64, f64) {
        let p = self.mark(q_d);
        let a = 1.0 - pow1m(p, self.tau * rc_d);
        let b = expiry_rate(1.0, p, self.b);
        let c = b * pow1m(p, self.frt * self.b);
        let tr = self.timer * rc_d;
        let d = expiry_rate(1.0, p, tr);
        let e = d * pow1m(p, self.frt * tr);
        let dalpha = self.g / self.tau_a * ((1.0 - pow1m(p, self.tau_a * rc_d)) - alpha);
        let at_line = rc_d >= self.line;
        let inc_t = if at_line {
            0.0
        } else {
            self.r_ai * rc_d * (c + e)
        };
        let drt = -(rt - rc) * a / self.tau + inc_t;
        let mut drc = -rc * alpha * a / (2.0 * self.tau) + (rt - rc) / 2.0 * rc_d * (b + d);
        if at_line && drc > 0.0 {
            drc = 0.0;
        }
        let mut dq = self.n * rc - self.c;
        if (q <= 0.0 && dq < 0.0) || (q >= self.q_max && dq > 0.0) {
            dq = 0.0;
        }
        (dq, drc, drt, dalpha)
    }

    /// Integrate from q = 0, R_C = R_T = start, α = α0 (constant history) with step `dt_ps`
    /// and feedback delay `tau_ps` over `duration` ps, recording every `rec_ps`.
    pub fn solve(
        &self,
        dt_ps: SimTime,
        tau_ps: SimTime,
        duration: SimTime,
        rec_ps: SimTime,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> Result<(Trace, usize), super::Cancelled> {
        let dt = dt_ps as f64 / SEC as f64;
        let mut tick = super::Tick::new();
        let rec = steps(rec_ps, dt_ps, 1);
        let nsteps = (duration / dt_ps) as usize;
        let (mut q, mut rc, mut rt, mut al) = (0.0f64, self.start, self.start, self.alpha0);
        let mut hist = Delay::new(steps(tau_ps, dt_ps, 0), (rc, q));
        let mut tr = Trace::default();
        let bps = 8.0 * self.unit_bytes;
        for k in 0..=nsteps {
            if k % rec == 0 {
                tr.t_ps.push((k as u64 * dt_ps) as i64);
                tr.q_bytes.push(q * self.unit_bytes);
                tr.cr_bps.push(rc * bps);
                tr.tr_bps.push(rt * bps);
                tr.alpha.push(al);
            }
            if k == nsteps {
                break;
            }
            tick.check(k, nsteps, progress)?;
            let (rc_d, q_d) = hist.push((rc, q));
            let (dq, drc, drt, da) = self.deriv(q, rc, rt, al, rc_d, q_d);
            q = (q + dt * dq).clamp(0.0, self.q_max);
            rc = (rc + dt * drc).clamp(0.0, self.line);
            rt = (rt + dt * drt).clamp(0.0, self.line);
            al = (al + dt * da).clamp(0.0, 1.0);
        }
        Ok((tr, nsteps))
    }

    /// The marking probability at the fixed point R_C = C/N: the root in (0, 1) of
    /// α a² = τ² R_AI r (c + e)(b + d) (dR_T/dt = dR_C/dt = 0 with α at its equilibrium
    /// 1 - (1 - p)^(τ' r)), by bisection.
    pub fn fixed_p(&self) -> f64 {
        let r = self.c / self.n;
        let f = |p: f64| {
            let alpha = 1.0 - pow1m(p, self.tau_a * r);
            let a = 1.0 - pow1m(p, self.tau * r);
            let b = expiry_rate(1.0, p, self.b);
            let c = b * pow1m(p, self.frt * self.b);
            let d = expiry_rate(1.0, p, self.timer * r);
            let e = d * pow1m(p, self.frt * self.timer * r);
            alpha * a * a - self.tau * self.tau * self.r_ai * r * (c + e) * (b + d)
        };
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// The published small-p approximation of the fixed point (CoNEXT 2016):
    /// p* ≈ [R_AI N² / (τ' C²) · (1/B + N/(T C))²]^(1/3).
    pub fn fixed_p_approx(&self) -> f64 {
        let (n, c) = (self.n, self.c);
        (self.r_ai * n * n / (self.tau_a * c * c) * (1.0 / self.b + n / (self.timer * c)).powi(2))
            .cbrt()
    }

    /// The queue at which the marking probability is `p` (NaN above Pmax).
    pub fn queue_for(&self, p: f64) -> f64 {
        if p > self.p_max {
            f64::NAN
        } else {
            self.k_min + p / self.p_max * (self.k_max - self.k_min)
        }
    }

    pub fn describe(&self) -> Vec<(String, f64, String)> {
        let u = self.unit_bytes;
        let bps = 8.0 * u;
        [
            ("unit", u, "B"),
            ("k_min", self.k_min * u, "B"),
            ("k_max", self.k_max * u, "B"),
            ("p_max", self.p_max, ""),
            ("g", self.g, ""),
            ("cnp_interval", self.tau, "s"),
            ("alpha_interval", self.tau_a, "s"),
            ("timer", self.timer, "s"),
            ("byte_counter", self.b * u, "B"),
            ("frt", self.frt, ""),
            ("r_ai", self.r_ai * bps, "bps"),
            ("start_rate", self.start * bps, "bps"),
            ("alpha_start", self.alpha0, ""),
        ]
        .into_iter()
        .map(|(a, b, c)| (a.to_string(), b, c.to_string()))
        .collect()
    }

    pub fn fixed_point(&self) -> Vec<(&'static str, f64, &'static str)> {
        let p = self.fixed_p();
        let pa = self.fixed_p_approx();
        vec![
            ("fixed_p", p, ""),
            ("fixed_p_approx", pa, ""),
            ("fixed_queue", self.queue_for(p) * self.unit_bytes, "B"),
            (
                "fixed_queue_approx",
                self.queue_for(pa) * self.unit_bytes,
                "B",
            ),
            ("fixed_rate", self.c / self.n * 8.0 * self.unit_bytes, "bps"),
        ]
    }
}
