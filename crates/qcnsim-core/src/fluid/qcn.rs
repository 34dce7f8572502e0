//! The QCN fluid model (Alizadeh et al., "Stability analysis of QCN: the averaging
//! principle", SIGMETRICS 2011), per source, in packets and seconds (docs/models/fluid.md):
//!
//! ```text
//! Fb(t)   = q(t) - Qeq + w/(C p) (N R_C(t) - C)            (> 0: congestion; the CP's -Fb)
//! p_r(t)  = p 1{Fb(t) > 0}                                  (probability a packet draws a CNM)
//! dq/dt   = N R_C(t) - C                                    (q kept in [0, buffer])
//! dR_T/dt = -(R_T - R_C) R_C(t-τ) p_r(t-τ)
//!           + R_AI R_C(t-τ) p_r(t-τ) (1 - p_r(t-τ))^(F BC) / ((1 - p_r(t-τ))^(-BC) - 1)
//! dR_C/dt = -Gd Fb(t-τ) R_C(t) R_C(t-τ) p_r(t-τ)
//!           + (R_T - R_C)/2 · R_C(t-τ) p_r(t-τ) / ((1 - p_r(t-τ))^(-BC) - 1)
//! ```
//!
//! Each CNM (rate R_C(t-τ) p_r(t-τ)) sets R_T to R_C and cuts R_C by Gd·Fb·R_C; each
//! byte-counter expiry (rate R_C p_r / ((1 - p_r)^(-BC) - 1), R_C/BC without marking) moves R_C
//! half-way to R_T; R_T grows by R_AI only after F·BC packets without a CNM. The timer and
//! hyper-active increase are not in the model. Parameters come from the scenario's `cc.qcn`:
//! p = frame / cp.sample_base; BC = rp.byte_counter / frame; F = rp.frt; R_AI = rp.r_ai;
//! Gd per packet of Fb = rp.gd · (2^fb_bits - 1) / (Qeq(2w+1)), the CP quantiser's scale.

use super::{expiry_rate, pow1m, steps, Delay, Inputs, Trace};
use crate::scenario::Scenario;
use crate::units::{SimTime, SEC};

/// The QCN fluid model's parameters in packets (of `packet_bytes`) and seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct QcnFluid {
    pub n: f64,
    /// Capacity, packets/s.
    pub c: f64,
    /// Line rate (cap of R_C), packets/s.
    pub line: f64,
    /// Floor of R_C and R_T, packets/s.
    pub min_rate: f64,
    pub q_eq: f64,
    pub w: f64,
    /// Sampling probability per packet.
    pub p: f64,
    /// Byte-counter cycle, packets.
    pub bc: f64,
    pub frt: f64,
    /// R_AI, packets/s.
    pub r_ai: f64,
    /// Decrease gain per packet of Fb.
    pub gd: f64,
    /// Fb saturates here (packets) when set (`fluid.qcn.fb_saturate`).
    pub fb_max: Option<f64>,
    /// Buffer, packets.
    pub q_max: f64,
    /// R_T <= line.
    pub cap_tr: bool,
    /// R_C(0) = R_T(0), packets/s.
    pub start: f64,
    pub packet_bytes: f64,
}

impl QcnFluid {
    pub fn from_scenario(sc: &Scenario, inp: &Inputs) -> QcnFluid {
        let pk = inp.packet_bytes;
        let pps = |bps: f64| bps / (8.0 * pk);
        let cp = &sc.qcn.cp;
        let rp = &sc.qcn.rp;
        let q_eq = cp.q_eq_bytes as f64 / pk;
        let fb_max = cp.fb_max() / pk;
        let start = match (rp.start_active, rp.start_rate_bps) {
            (true, Some(r)) => r.min(inp.line_bps),
            _ => inp.line_bps,
        };
        QcnFluid {
            n: inp.n as f64,
            c: pps(inp.c_bps),
            line: pps(inp.line_bps),
            min_rate: pps(rp.min_rate_bps),
            q_eq,
            w: cp.w,
            p: (pk / cp.sample_base_bytes as f64).min(1.0),
            bc: rp.byte_counter_bytes as f64 / pk,
            frt: rp.frt as f64,
            r_ai: pps(rp.r_ai_bps),
            gd: rp.gd * cp.max_qntz_fb() as f64 / fb_max,
            fb_max: sc.fluid.fb_saturate.then_some(fb_max),
            q_max: inp.q_max_bytes / pk,
            cap_tr: rp.cap_target_rate,
            start: pps(start),
            packet_bytes: pk,
        }
    }

    /// Fb (positive under congestion), packets.
    #[inline]
    pub fn fb(&self, q: f64, rc: f64) -> f64 {
        q - self.q_eq + self.w / (self.c * self.p) * (self.n * rc - self.c)
    }

    /// (dq/dt, dR_C/dt, dR_T/dt) given the state and the delayed R_C and Fb.
    #[inline]
    pub fn deriv(&self, q: f64, rc: f64, rt: f64, rc_d: f64, fb_d: f64) -> (f64, f64, f64) {
        let pr = if fb_d > 0.0 { self.p } else { 0.0 };
        let fb_d = match self.fb_max {
            Some(m) => fb_d.min(m),
            None => fb_d,
        };
        let cnm = rc_d * pr;
        let bc = expiry_rate(rc_d, pr, self.bc);
        let gate = pow1m(pr, self.frt * self.bc);
        let drt = -(rt - rc) * cnm + self.r_ai * bc * gate;
        let drc = -self.gd * fb_d * rc * cnm + (rt - rc) / 2.0 * bc;
        let mut dq = self.n * rc - self.c;
        if (q <= 0.0 && dq < 0.0) || (q >= self.q_max && dq > 0.0) {
            dq = 0.0;
        }
        (dq, drc, drt)
    }

    /// Integrate from q = 0, R_C = R_T = start with step `dt_ps` and feedback delay `tau_ps`
    /// (rounded to whole steps) over `duration` ps; record every `rec_ps` (whole steps).
    /// Returns the trace and the number of steps.
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
        let (mut q, mut rc, mut rt) = (0.0f64, self.start, self.start);
        let mut hist = Delay::new(steps(tau_ps, dt_ps, 0), (rc, self.fb(q, rc)));
        let mut tr = Trace::default();
        let bps = 8.0 * self.packet_bytes;
        for k in 0..=nsteps {
            if k % rec == 0 {
                tr.t_ps.push((k as u64 * dt_ps) as i64);
                tr.q_bytes.push(q * self.packet_bytes);
                tr.cr_bps.push(rc * bps);
                tr.tr_bps.push(rt * bps);
            }
            if k == nsteps {
                break;
            }
            tick.check(k, nsteps, progress)?;
            let (rc_d, fb_d) = hist.push((rc, self.fb(q, rc)));
            let (dq, drc, drt) = self.deriv(q, rc, rt, rc_d, fb_d);
            q = (q + dt * dq).clamp(0.0, self.q_max);
            rc = (rc + dt * drc).clamp(self.min_rate, self.line);
            rt = (rt + dt * drt).max(self.min_rate);
            if self.cap_tr {
                rt = rt.min(self.line);
            }
        }
        Ok((tr, nsteps))
    }

    /// The model's inputs as (name, value, unit), in scenario units.
    pub fn describe(&self) -> Vec<(String, f64, String)> {
        let pk = self.packet_bytes;
        let bps = 8.0 * pk;
        let mut v: Vec<(String, f64, String)> = [
            ("q_eq", self.q_eq * pk, "B"),
            ("w", self.w, ""),
            ("sample_p", self.p, "1/packet"),
            ("byte_counter", self.bc * pk, "B"),
            ("frt", self.frt, ""),
            ("r_ai", self.r_ai * bps, "bps"),
            ("gd_per_packet", self.gd, "1/packet"),
            ("min_rate", self.min_rate * bps, "bps"),
            ("start_rate", self.start * bps, "bps"),
        ]
        .into_iter()
        .map(|(a, b, c)| (a.to_string(), b, c.to_string()))
        .collect();
        if let Some(m) = self.fb_max {
            v.push(("fb_max".into(), m * pk, "B".into()));
        }
        v
    }

    /// The equilibrium: Fb = 0 with N R_C = C, i.e. q = Qeq and R_C = C/N (on the sliding
    /// surface of the feedback switch; in the model R_T does not settle, it saws about R_C).
    pub fn fixed_point(&self) -> Vec<(&'static str, f64, &'static str)> {
        vec![
            ("fixed_queue", self.q_eq * self.packet_bytes, "B"),
            (
                "fixed_rate",
                self.c / self.n * 8.0 * self.packet_bytes,
                "bps",
            ),
        ]
    }
}
