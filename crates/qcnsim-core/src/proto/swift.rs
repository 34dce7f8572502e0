//! Swift's window computation (G. Kumar et al., "Swift: Delay is Simple and Effective for
//! Congestion Control in the Datacenter", SIGCOMM 2020), sans-IO: the sender hands it each
//! acknowledgement ([`Swift::on_ack`]), retransmission timeout ([`Swift::on_timeout`]) and
//! fast-recovery loss ([`Swift::on_fast_recovery`]) and applies the [`Control`] it returns:
//! the window, and a pacing rate when the window is below one packet. See
//! docs/models/swift.md.
//!
//! Algorithm 1 (Swift reaction to congestion), windows in packets, for each window
//! (fabric: `fcwnd`, fabric delay, fabric target; endpoint: `ecwnd`, endpoint delay, endpoint
//! target):
//!
//! ```text
//! cwnd_prev    ← cwnd = min(fcwnd, ecwnd)
//! can_decrease ← (now - t_last_decrease ≥ rtt)             MD at most once per RTT
//! On receiving an ACK:
//!   retransmit_cnt ← 0
//!   if delay < target:                                     additive increase
//!     if w ≥ 1: w ← w + ai / w · num_acked
//!     else:     w ← w + ai · num_acked
//!   elif can_decrease:                                     multiplicative decrease
//!     w ← max(1 - β · (delay - target) / delay, 1 - max_mdf) · w
//! On a retransmit timeout:
//!   retransmit_cnt ← retransmit_cnt + 1
//!   if retransmit_cnt ≥ RETX_RESET_THRESHOLD: w ← min_cwnd
//!   elif can_decrease:                        w ← (1 - max_mdf) · w
//! On fast recovery:
//!   retransmit_cnt ← 0
//!   if can_decrease: w ← (1 - max_mdf) · w
//! Then: w ← clamp(min_cwnd, w, max_cwnd); cwnd = min(fcwnd, ecwnd)
//!   if cwnd < cwnd_prev: t_last_decrease ← now        (`last_decrease = "not_increase"`: ≤)
//!   if cwnd < 1: pacing_delay ← rtt / cwnd  (one packet per pacing_delay) else 0
//! ```
//!
//! Target delays (§3.5 of the paper): the fabric target is
//! `base_target + hops · h + clamp(α / sqrt(fcwnd) + β', 0, fs_range)` with
//! `α = fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd))`, `β' = -α / sqrt(fs_max_cwnd)`
//! (flow scaling: fs_range at fs_min_cwnd, 0 at fs_max_cwnd); the endpoint target is a
//! constant. The delays: the endpoint delay is the receiver's NIC-to-ACK delay (echoed in the
//! ACK) plus the sender's NIC-Rx-to-stack delay; the fabric delay is the RTT less the endpoint
//! delay. [`Ack`] (proto/ack.rs) carries the RTT and the hop count but no endpoint delay: the
//! caller passes it ([`Swift::on_ack`]'s `endpoint_delay`, 0 when hosts add no delay).
//!
//! The paper's text was not available to us: the rules above are the form public
//! implementations share (htsim `sim/swift.cpp`, INET `tcp/flavours/Swift.cc`); the two
//! differ on the `t_last_decrease` test (`<` in htsim, `≤` in INET), hence
//! [`LastDecrease`]. docs/models/swift.md lists what is sourced and what is not.

use super::ack::{Ack, Control};
use crate::units::{SimTime, SEC, US};

/// When `t_last_decrease` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LastDecrease {
    /// When the window went down (`cwnd < cwnd_prev`; htsim `applySwiftLimits`).
    Decrease,
    /// When the window did not go up (`cwnd ≤ cwnd_prev`; INET `set_final_cwnd_values`): an
    /// ACK whose decrease was refused (or a window held at a bound) restarts the interval too.
    NotIncrease,
}

impl LastDecrease {
    pub const NAMES: &'static [&'static str] = &["decrease", "not_increase"];

    pub fn from_name(s: &str) -> Option<LastDecrease> {
        match s {
            "decrease" => Some(LastDecrease::Decrease),
            "not_increase" => Some(LastDecrease::NotIncrease),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LastDecrease::Decrease => "decrease",
            LastDecrease::NotIncrease => "not_increase",
        }
    }
}

/// Swift's parameters, named as in the paper (docs/models/swift.md has each default's
/// source). Windows are in packets of `mss_bytes`.
#[derive(Debug, Clone, PartialEq)]
pub struct SwiftParams {
    /// ai, the additive increment (packets per RTT).
    pub ai: f64,
    /// β, the multiplicative decrease constant.
    pub beta: f64,
    /// max_mdf, the largest fraction one decrease may take.
    pub max_mdf: f64,
    /// base_target: the target delay of a one-hop path with few flows.
    pub base_target_ps: SimTime,
    /// h, the per-hop scaling of the target, ps.
    pub h_ps: f64,
    /// fs_range: the flow-scaling part of the target at fs_min_cwnd, ps.
    pub fs_range_ps: f64,
    pub fs_min_cwnd: f64,
    pub fs_max_cwnd: f64,
    /// The endpoint target delay (`None`: no endpoint window, cwnd = fcwnd).
    pub endpoint_target_ps: Option<SimTime>,
    /// RETX_RESET_THRESHOLD: consecutive timeouts after which the window drops to min_cwnd.
    pub retx_reset_threshold: u32,
    pub min_cwnd: f64,
    pub max_cwnd: f64,
    pub last_decrease: LastDecrease,
    /// Packet size the windows count, bytes (the flow's frame payload; filled per flow).
    pub mss_bytes: u32,
    /// The NIC line rate (the rate when not pacing), bit/s (filled per flow).
    pub line_rate_bps: f64,
}

impl SwiftParams {
    /// The defaults for a flow of `mss_bytes` packets on a NIC of `line_rate_bps`
    /// (docs/models/swift.md): ai 1, β 0.8, max_mdf 0.5, base_target 20 µs, h 3.05 µs,
    /// fs_range 100 µs over fs_min_cwnd 0.1 .. fs_max_cwnd 100, endpoint target 20 µs,
    /// RETX_RESET_THRESHOLD 5, min_cwnd 0.001, max_cwnd 1000.
    pub fn defaults(mss_bytes: u32, line_rate_bps: f64) -> SwiftParams {
        SwiftParams {
            ai: 1.0,
            beta: 0.8,
            max_mdf: 0.5,
            base_target_ps: 20 * US,
            h_ps: 3.05e6,
            fs_range_ps: 100e6,
            fs_min_cwnd: 0.1,
            fs_max_cwnd: 100.0,
            endpoint_target_ps: Some(20 * US),
            retx_reset_threshold: 5,
            min_cwnd: 0.001,
            max_cwnd: 1000.0,
            last_decrease: LastDecrease::Decrease,
            mss_bytes,
            line_rate_bps,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if !(self.min_cwnd > 0.0 && self.min_cwnd <= self.max_cwnd) {
            return Err(format!(
                "min_cwnd ({}) must be above 0 and at most max_cwnd ({})",
                self.min_cwnd, self.max_cwnd
            ));
        }
        if !(self.fs_min_cwnd > 0.0 && self.fs_min_cwnd < self.fs_max_cwnd) {
            return Err(format!(
                "fs_min_cwnd ({}) must be above 0 and below fs_max_cwnd ({})",
                self.fs_min_cwnd, self.fs_max_cwnd
            ));
        }
        if !(self.max_mdf > 0.0 && self.max_mdf < 1.0) {
            return Err(format!("max_mdf must be in (0, 1), got {}", self.max_mdf));
        }
        if self.mss_bytes == 0 {
            return Err("mss must be above 0".into());
        }
        Ok(())
    }

    /// α of flow scaling, ps: fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd)).
    pub fn fs_alpha(&self) -> f64 {
        self.fs_range_ps / (1.0 / self.fs_min_cwnd.sqrt() - 1.0 / self.fs_max_cwnd.sqrt())
    }

    /// β of flow scaling, ps: -α / sqrt(fs_max_cwnd).
    pub fn fs_beta(&self) -> f64 {
        -self.fs_alpha() / self.fs_max_cwnd.sqrt()
    }

    /// The flow-scaling part of the target for a fabric window `fcwnd`:
    /// clamp(α/sqrt(fcwnd) + β, 0, fs_range), ps.
    pub fn fs_delay(&self, fcwnd: f64) -> f64 {
        (self.fs_alpha() / fcwnd.sqrt() + self.fs_beta()).clamp(0.0, self.fs_range_ps)
    }

    /// The fabric target delay for a path of `hops` switch hops and a window `fcwnd`, ps.
    pub fn fabric_target(&self, hops: u8, fcwnd: f64) -> f64 {
        self.base_target_ps as f64 + hops as f64 * self.h_ps + self.fs_delay(fcwnd)
    }
}

/// Which rule an event applied to a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// delay < target, w ≥ 1: w + ai/w · num_acked.
    Increase,
    /// delay < target, w < 1: w + ai · num_acked.
    IncreaseBelowOne,
    /// delay ≥ target and can_decrease: max(1 - β(delay - target)/delay, 1 - max_mdf) · w.
    Decrease,
    /// delay ≥ target, but a decrease happened less than an RTT ago: unchanged.
    Held,
    /// Timeout or fast recovery: (1 - max_mdf) · w.
    LossDecrease,
    /// RETX_RESET_THRESHOLD consecutive timeouts: min_cwnd.
    Reset,
}

/// One flow's Swift state.
#[derive(Debug, Clone, PartialEq)]
pub struct Swift {
    /// Fabric window, packets.
    fcwnd: f64,
    /// Endpoint window, packets.
    ecwnd: f64,
    t_last_decrease: Option<SimTime>,
    retransmit_cnt: u32,
    /// The latest RTT sample (None before the first).
    rtt: Option<SimTime>,
    /// Pacing delay between packets while cwnd < 1 (0: not pacing).
    pacing_delay_ps: f64,
    decreases: u64,
    last_steps: (Option<Step>, Option<Step>),
}

impl Swift {
    /// A flow whose windows start at `start_cwnd` packets (clamped to [min_cwnd, max_cwnd]).
    pub fn new(p: &SwiftParams, start_cwnd: f64) -> Swift {
        let w = start_cwnd.clamp(p.min_cwnd, p.max_cwnd);
        let mut s = Swift {
            fcwnd: w,
            ecwnd: w,
            t_last_decrease: None,
            retransmit_cnt: 0,
            rtt: None,
            pacing_delay_ps: 0.0,
            decreases: 0,
            last_steps: (None, None),
        };
        s.set_pacing(p);
        s
    }

    /// The effective window, packets: min(fcwnd, ecwnd) (fcwnd without an endpoint target).
    pub fn cwnd(&self, p: &SwiftParams) -> f64 {
        if p.endpoint_target_ps.is_some() {
            self.fcwnd.min(self.ecwnd)
        } else {
            self.fcwnd
        }
    }

    pub fn fcwnd(&self) -> f64 {
        self.fcwnd
    }

    pub fn ecwnd(&self) -> f64 {
        self.ecwnd
    }

    pub fn t_last_decrease(&self) -> Option<SimTime> {
        self.t_last_decrease
    }

    pub fn retransmit_cnt(&self) -> u32 {
        self.retransmit_cnt
    }

    /// How many events lowered the effective window.
    pub fn decreases(&self) -> u64 {
        self.decreases
    }

    /// Pacing delay between packets, ps (0 when cwnd ≥ 1).
    pub fn pacing_delay_ps(&self) -> f64 {
        self.pacing_delay_ps
    }

    /// The rules the last event applied to (fabric, endpoint).
    pub fn last_steps(&self) -> (Option<Step>, Option<Step>) {
        self.last_steps
    }

    /// The RTT the pacing and the once-per-RTT test use: the latest sample, or base_target
    /// before the first.
    fn rtt_or_base(&self, p: &SwiftParams) -> SimTime {
        self.rtt.unwrap_or(p.base_target_ps)
    }

    /// `now - t_last_decrease ≥ rtt` (true before the first decrease).
    pub fn can_decrease(&self, p: &SwiftParams, now: SimTime) -> bool {
        match self.t_last_decrease {
            None => true,
            Some(t) => now.saturating_sub(t) >= self.rtt_or_base(p),
        }
    }

    /// What the sender applies: the window in bytes (cwnd · mss, at least one packet) and the
    /// rate: mss · cwnd / rtt (one packet per rtt/cwnd) while cwnd < 1, the line rate
    /// otherwise.
    pub fn control(&self, p: &SwiftParams) -> Control {
        let cwnd = self.cwnd(p);
        let mss = p.mss_bytes as f64;
        if cwnd < 1.0 {
            Control {
                window_bytes: p.mss_bytes as u64,
                rate_bps: (8.0 * mss * SEC as f64 / self.pacing_delay_ps).min(p.line_rate_bps),
            }
        } else {
            Control {
                window_bytes: (cwnd * mss).floor() as u64,
                rate_bps: p.line_rate_bps,
            }
        }
    }

    /// An acknowledgement: AI or MD on each window. `endpoint_delay` is the host part of the
    /// RTT (the receiver's NIC-Rx-to-ACK delay echoed in the ACK plus the sender's NIC-Rx
    /// delay); the fabric delay is `ack.rtt() - endpoint_delay`.
    pub fn on_ack(&mut self, p: &SwiftParams, ack: &Ack, endpoint_delay: SimTime) -> Control {
        let now = ack.now;
        let rtt = ack.rtt();
        self.rtt = Some(rtt);
        let cwnd_prev = self.cwnd(p);
        let can_decrease = self.can_decrease(p, now);
        self.retransmit_cnt = 0;
        let num_acked = if ack.acked_bytes == 0 {
            0.0
        } else {
            ack.acked_frames as f64
        };
        let fabric_delay = rtt.saturating_sub(endpoint_delay) as f64;
        let target = p.fabric_target(ack.hops, self.fcwnd);
        let (f, fs) = aimd(p, self.fcwnd, fabric_delay, target, num_acked, can_decrease);
        self.fcwnd = f;
        let es = match p.endpoint_target_ps {
            Some(et) => {
                let (e, es) = aimd(
                    p,
                    self.ecwnd,
                    endpoint_delay as f64,
                    et as f64,
                    num_acked,
                    can_decrease,
                );
                self.ecwnd = e;
                Some(es)
            }
            None => None,
        };
        self.last_steps = (Some(fs), es);
        self.finish(p, now, cwnd_prev)
    }

    /// A retransmission timeout at `now`.
    pub fn on_timeout(&mut self, p: &SwiftParams, now: SimTime) -> Control {
        let cwnd_prev = self.cwnd(p);
        let can_decrease = self.can_decrease(p, now);
        self.retransmit_cnt = self.retransmit_cnt.saturating_add(1);
        let step = if self.retransmit_cnt >= p.retx_reset_threshold {
            self.fcwnd = p.min_cwnd;
            self.ecwnd = p.min_cwnd;
            Some(Step::Reset)
        } else if can_decrease {
            self.fcwnd *= 1.0 - p.max_mdf;
            self.ecwnd *= 1.0 - p.max_mdf;
            Some(Step::LossDecrease)
        } else {
            None
        };
        self.last_steps = (step, step.filter(|_| p.endpoint_target_ps.is_some()));
        self.finish(p, now, cwnd_prev)
    }

    /// A loss found by fast recovery (selective acknowledgement or NACK) at `now`.
    pub fn on_fast_recovery(&mut self, p: &SwiftParams, now: SimTime) -> Control {
        let cwnd_prev = self.cwnd(p);
        let can_decrease = self.can_decrease(p, now);
        self.retransmit_cnt = 0;
        let step = if can_decrease {
            self.fcwnd *= 1.0 - p.max_mdf;
            self.ecwnd *= 1.0 - p.max_mdf;
            Some(Step::LossDecrease)
        } else {
            None
        };
        self.last_steps = (step, step.filter(|_| p.endpoint_target_ps.is_some()));
        self.finish(p, now, cwnd_prev)
    }

    /// Clamp, the once-per-RTT bookkeeping and pacing (the end of Algorithm 1).
    fn finish(&mut self, p: &SwiftParams, now: SimTime, cwnd_prev: f64) -> Control {
        self.fcwnd = self.fcwnd.clamp(p.min_cwnd, p.max_cwnd);
        self.ecwnd = self.ecwnd.clamp(p.min_cwnd, p.max_cwnd);
        let cwnd = self.cwnd(p);
        let decreased = match p.last_decrease {
            LastDecrease::Decrease => cwnd < cwnd_prev,
            LastDecrease::NotIncrease => cwnd <= cwnd_prev,
        };
        if decreased {
            self.t_last_decrease = Some(now);
        }
        if cwnd < cwnd_prev {
            self.decreases += 1;
        }
        self.set_pacing(p);
        self.control(p)
    }

    fn set_pacing(&mut self, p: &SwiftParams) {
        let cwnd = self.cwnd(p);
        self.pacing_delay_ps = if cwnd < 1.0 {
            self.rtt_or_base(p) as f64 / cwnd
        } else {
            0.0
        };
    }
}

/// One window's reaction to an ACK (Algorithm 1's AI / MD lines).
fn aimd(
    p: &SwiftParams,
    w: f64,
    delay: f64,
    target: f64,
    num_acked: f64,
    can_decrease: bool,
) -> (f64, Step) {
    if delay < target {
        if w >= 1.0 {
            (w + p.ai / w * num_acked, Step::Increase)
        } else {
            (w + p.ai * num_acked, Step::IncreaseBelowOne)
        }
    } else if can_decrease {
        // delay ≥ target ≥ 0; delay = 0 only with a zero target: no overshoot, no cut
        let over = if delay > 0.0 {
            (delay - target) / delay
        } else {
            0.0
        };
        (
            w * (1.0 - p.beta * over).max(1.0 - p.max_mdf),
            Step::Decrease,
        )
    } else {
        (w, Step::Held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 4096;
    const LINE: f64 = 100e9;

    /// Defaults without the endpoint window (so the tables below show the fabric rules).
    fn pf() -> SwiftParams {
        SwiftParams {
            endpoint_target_ps: None,
            ..SwiftParams::defaults(MSS, LINE)
        }
    }

    fn ack(now: SimTime, rtt: SimTime, frames: u32, hops: u8) -> Ack {
        let mut a = Ack::plain(now, 0, frames * MSS, now - rtt);
        a.acked_frames = frames;
        a.hops = hops;
        a
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn flow_scaling_spans_fs_range_over_the_window_range() {
        let p = SwiftParams::defaults(MSS, LINE);
        // "α = fs_range / (1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd))": 100 µs / (3.1623 - 0.1)
        let alpha = 100e6 / (1.0 / 0.1f64.sqrt() - 0.1);
        assert!(close(p.fs_alpha(), alpha));
        // "β = -α / sqrt(fs_max_cwnd)"
        assert!(close(p.fs_beta(), -alpha / 10.0));
        // (fcwnd, fs_delay): fs_range at and below fs_min_cwnd, 0 at and above fs_max_cwnd
        let rows: &[(f64, f64)] = &[
            (0.001, 100e6),
            (0.1, 100e6),
            (1.0, alpha - alpha / 10.0),
            (25.0, alpha / 5.0 - alpha / 10.0),
            (100.0, 0.0),
            (1000.0, 0.0),
        ];
        for &(w, want) in rows {
            let got = p.fs_delay(w);
            assert!((got - want).abs() < 1e-3, "fcwnd {w}: {got} want {want}");
        }
        // "target = base_target + hops·h + fs_delay": 20 µs + 3·3.05 µs + fs_delay(100) = 0
        assert!(close(p.fabric_target(3, 100.0), 20e6 + 3.0 * 3.05e6));
    }

    /// Algorithm 1 on an ACK, one row per rule (fabric window only; hops 0, fcwnd ≥ 100 so
    /// the fabric target is base_target = 20 µs; ai 1, β 0.8, max_mdf 0.5).
    #[test]
    fn on_ack_rule_table() {
        struct Row {
            what: &'static str,
            fcwnd: f64,
            last_dec: Option<SimTime>,
            prev_rtt: Option<SimTime>,
            now: SimTime,
            rtt: SimTime,
            frames: u32,
            step: Step,
            after: f64,
        }
        let rows = [
            Row {
                // "if delay < target: if cwnd ≥ 1: cwnd ← cwnd + ai/cwnd · num_acked"
                what: "AI above one packet",
                fcwnd: 200.0,
                last_dec: None,
                prev_rtt: None,
                now: 100 * US,
                rtt: 15 * US,
                frames: 2,
                step: Step::Increase,
                after: 200.0 + 2.0 / 200.0,
            },
            Row {
                // "else: cwnd ← cwnd + ai · num_acked" (below one packet); fcwnd 0.05 has
                // target 20 + 100 µs, the delay 50 µs is below it
                what: "AI below one packet",
                fcwnd: 0.05,
                last_dec: None,
                prev_rtt: None,
                now: 100 * US,
                rtt: 50 * US,
                frames: 1,
                step: Step::IncreaseBelowOne,
                after: 1.05,
            },
            Row {
                // "cwnd ← max(1 - β·(delay - target)/delay, 1 - max_mdf) · cwnd":
                // delay 25 µs, target 20: 1 - 0.8·5/25 = 0.84
                what: "MD proportional to the overshoot",
                fcwnd: 200.0,
                last_dec: None,
                prev_rtt: None,
                now: 100 * US,
                rtt: 25 * US,
                frames: 1,
                step: Step::Decrease,
                after: 200.0 * 0.84,
            },
            Row {
                // delay 100 µs: 1 - 0.8·80/100 = 0.36 < 1 - max_mdf = 0.5 -> 0.5
                what: "MD capped at max_mdf",
                fcwnd: 200.0,
                last_dec: None,
                prev_rtt: None,
                now: 200 * US,
                rtt: 100 * US,
                frames: 1,
                step: Step::Decrease,
                after: 100.0,
            },
            Row {
                // delay = target is not below it: a decrease by 1 - 0 = no change
                what: "delay at the target",
                fcwnd: 200.0,
                last_dec: None,
                prev_rtt: None,
                now: 100 * US,
                rtt: 20 * US,
                frames: 1,
                step: Step::Decrease,
                after: 200.0,
            },
            Row {
                // "can_decrease ← (now - t_last_decrease ≥ rtt)": 10 µs < rtt 25 µs
                what: "MD held within an RTT of the last",
                fcwnd: 200.0,
                last_dec: Some(90 * US),
                prev_rtt: Some(25 * US),
                now: 100 * US,
                rtt: 25 * US,
                frames: 1,
                step: Step::Held,
                after: 200.0,
            },
            Row {
                // exactly one RTT later: allowed
                what: "MD one RTT after the last",
                fcwnd: 200.0,
                last_dec: Some(75 * US),
                prev_rtt: Some(25 * US),
                now: 100 * US,
                rtt: 25 * US,
                frames: 1,
                step: Step::Decrease,
                after: 200.0 * 0.84,
            },
            Row {
                // "cwnd ← clamp(min_cwnd, cwnd, max_cwnd)"
                what: "AI clamped at max_cwnd",
                fcwnd: 1000.0,
                last_dec: None,
                prev_rtt: None,
                now: 100 * US,
                rtt: 10 * US,
                frames: 5,
                step: Step::Increase,
                after: 1000.0,
            },
        ];
        let p = pf();
        for r in rows {
            let mut s = Swift::new(&p, r.fcwnd);
            s.fcwnd = r.fcwnd;
            s.t_last_decrease = r.last_dec;
            s.rtt = r.prev_rtt;
            s.retransmit_cnt = 3;
            s.on_ack(&p, &ack(r.now, r.rtt, r.frames, 0), 0);
            assert_eq!(s.last_steps().0, Some(r.step), "{}", r.what);
            assert!(close(s.fcwnd(), r.after), "{}: {}", r.what, s.fcwnd());
            // "On Receiving ACK: retransmit_cnt ← 0"
            assert_eq!(s.retransmit_cnt(), 0, "{}", r.what);
            let lowered = r.after < r.fcwnd.min(p.max_cwnd);
            assert_eq!(
                s.t_last_decrease() == Some(r.now),
                lowered,
                "{}: t_last_decrease {:?}",
                r.what,
                s.t_last_decrease()
            );
        }
    }

    #[test]
    fn hops_raise_the_target() {
        // delay 25 µs is above base_target 20 µs but below 20 + 2·3.05 µs
        let p = pf();
        let mut s = Swift::new(&p, 200.0);
        s.on_ack(&p, &ack(100 * US, 25 * US, 1, 2), 0);
        assert_eq!(s.last_steps().0, Some(Step::Increase));
        let mut s = Swift::new(&p, 200.0);
        s.on_ack(&p, &ack(100 * US, 25 * US, 1, 1), 0);
        assert_eq!(s.last_steps().0, Some(Step::Decrease));
    }

    #[test]
    fn timeout_and_fast_recovery_rules() {
        let p = pf();
        // "if retransmit_cnt ≥ RETX_RESET_THRESHOLD: cwnd ← min_cwnd
        //  elif can_decrease: cwnd ← (1 - max_mdf)·cwnd"
        let mut s = Swift::new(&p, 64.0);
        s.rtt = Some(10 * US);
        let mut t = 0;
        let mut got = Vec::new();
        for _ in 0..5 {
            t += 100 * US; // each timeout more than an RTT after the last
            s.on_timeout(&p, t);
            got.push((s.retransmit_cnt(), s.fcwnd(), s.last_steps().0));
        }
        assert_eq!(
            got,
            vec![
                (1, 32.0, Some(Step::LossDecrease)),
                (2, 16.0, Some(Step::LossDecrease)),
                (3, 8.0, Some(Step::LossDecrease)),
                (4, 4.0, Some(Step::LossDecrease)),
                (5, 0.001, Some(Step::Reset)),
            ]
        );
        // below one packet: paced, one packet per rtt/cwnd = 10 µs / 0.001 = 10 ms
        assert!(close(s.pacing_delay_ps(), 10e6 / 0.001));
        let c = s.control(&p);
        assert_eq!(c.window_bytes, MSS as u64);
        assert!(close(c.rate_bps, 8.0 * MSS as f64 / 10e-3));
        // a timeout within an RTT of the last decrease changes nothing (count still rises)
        let mut s = Swift::new(&p, 64.0);
        s.rtt = Some(10 * US);
        s.on_timeout(&p, 100 * US);
        s.on_timeout(&p, 105 * US);
        assert_eq!((s.retransmit_cnt(), s.fcwnd()), (2, 32.0));
        // "On Fast Recovery: retransmit_cnt ← 0; if can_decrease: cwnd ← (1 - max_mdf)·cwnd"
        s.on_fast_recovery(&p, 200 * US);
        assert_eq!((s.retransmit_cnt(), s.fcwnd()), (0, 16.0));
        s.on_fast_recovery(&p, 201 * US);
        assert_eq!(s.fcwnd(), 16.0, "held within an RTT");
    }

    #[test]
    fn endpoint_window_and_effective_cwnd() {
        // endpoint target 20 µs; fabric below target, endpoint above: only ecwnd decreases,
        // cwnd = min(fcwnd, ecwnd)
        let p = SwiftParams::defaults(MSS, LINE);
        let mut s = Swift::new(&p, 50.0);
        s.on_ack(&p, &ack(100 * US, 60 * US, 1, 0), 45 * US);
        // fabric delay 15 µs < target (20 + fs_delay(50) µs): AI; endpoint 45 µs ≥ 20 µs:
        // 1 - 0.8·25/45 = 0.5556
        assert_eq!(s.last_steps(), (Some(Step::Increase), Some(Step::Decrease)));
        assert!(close(s.fcwnd(), 50.0 + 1.0 / 50.0));
        assert!(close(s.ecwnd(), 50.0 * (1.0 - 0.8 * 25.0 / 45.0)));
        assert_eq!(s.cwnd(&p), s.ecwnd());
        assert_eq!(s.t_last_decrease(), Some(100 * US));
        assert_eq!(
            s.control(&p).window_bytes,
            (s.ecwnd() * MSS as f64).floor() as u64
        );
        // without an endpoint target the effective window is the fabric one
        let q = pf();
        let mut s = Swift::new(&q, 50.0);
        s.on_ack(&q, &ack(100 * US, 60 * US, 1, 0), 45 * US);
        assert_eq!(s.last_steps(), (Some(Step::Increase), None));
        assert_eq!(s.cwnd(&q), s.fcwnd());
    }

    #[test]
    fn last_decrease_rule_variants() {
        // an ACK whose decrease is refused: `decrease` keeps t_last_decrease, `not_increase`
        // restarts it (the window did not go up)
        for (rule, want) in [
            (LastDecrease::Decrease, Some(100 * US)),
            (LastDecrease::NotIncrease, Some(110 * US)),
        ] {
            let p = SwiftParams {
                last_decrease: rule,
                ..pf()
            };
            let mut s = Swift::new(&p, 200.0);
            s.on_ack(&p, &ack(100 * US, 40 * US, 1, 0), 0);
            assert_eq!(s.t_last_decrease(), Some(100 * US));
            s.on_ack(&p, &ack(110 * US, 40 * US, 1, 0), 0);
            assert_eq!(s.last_steps().0, Some(Step::Held));
            assert_eq!(s.t_last_decrease(), want, "{rule:?}");
        }
    }

    #[test]
    fn duplicate_ack_does_not_increase() {
        let p = pf();
        let mut s = Swift::new(&p, 10.0);
        let mut a = ack(100 * US, 10 * US, 1, 0);
        a.acked_bytes = 0;
        s.on_ack(&p, &a, 0);
        assert_eq!(s.fcwnd(), 10.0);
    }

    #[test]
    fn params_validation() {
        assert!(SwiftParams::defaults(MSS, LINE).validate().is_ok());
        let d = SwiftParams::defaults(MSS, LINE);
        for b in [
            SwiftParams {
                min_cwnd: 0.0,
                ..d.clone()
            },
            SwiftParams {
                fs_min_cwnd: 200.0,
                ..d.clone()
            },
            SwiftParams {
                max_mdf: 1.0,
                ..d.clone()
            },
            SwiftParams {
                mss_bytes: 0,
                ..d.clone()
            },
        ] {
            assert!(b.validate().is_err(), "{b:?}");
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Ev {
            Ack {
                gap: u64,
                rtt: u64,
                frames: u32,
                hops: u8,
                ep: u64,
            },
            Timeout {
                gap: u64,
            },
            Loss {
                gap: u64,
            },
        }

        fn ev() -> impl Strategy<Value = Ev> {
            prop_oneof![
                6 => (0u64..50_000_000, 1u64..500_000_000, 0u32..4, 0u8..6, 0u64..60_000_000)
                    .prop_map(|(gap, rtt, frames, hops, ep)| Ev::Ack { gap, rtt, frames, hops, ep }),
                1 => (0u64..500_000_000).prop_map(|gap| Ev::Timeout { gap }),
                1 => (0u64..50_000_000).prop_map(|gap| Ev::Loss { gap }),
            ]
        }

        proptest! {
            /// Whatever the events: both windows within [min_cwnd, max_cwnd]; the effective
            /// window never goes down twice within one RTT (the RTT of the sample in force at
            /// the second decrease); a window below one packet always paces.
            #[test]
            fn windows_bounded_and_one_decrease_per_rtt(
                evs in proptest::collection::vec(ev(), 1..300),
                start in 0.0f64..2000.0,
                endpoint in any::<bool>(),
                not_increase in any::<bool>(),
            ) {
                let p = SwiftParams {
                    endpoint_target_ps: if endpoint { Some(20 * US) } else { None },
                    last_decrease: if not_increase {
                        LastDecrease::NotIncrease
                    } else {
                        LastDecrease::Decrease
                    },
                    ..SwiftParams::defaults(MSS, LINE)
                };
                let mut s = Swift::new(&p, start);
                let mut now: SimTime = 1_000_000_000;
                let mut last_down: Option<SimTime> = None;
                for e in evs {
                    let before = s.cwnd(&p);
                    let is_reset_timeout;
                    match e {
                        Ev::Ack { gap, rtt, frames, hops, ep } => {
                            now += gap;
                            let mut a = Ack::plain(now, 0, frames * MSS, now - rtt);
                            a.acked_frames = frames;
                            a.hops = hops;
                            s.on_ack(&p, &a, ep.min(rtt));
                            is_reset_timeout = false;
                        }
                        Ev::Timeout { gap } => {
                            now += gap;
                            s.on_timeout(&p, now);
                            is_reset_timeout = s.last_steps().0 == Some(Step::Reset);
                        }
                        Ev::Loss { gap } => {
                            now += gap;
                            s.on_fast_recovery(&p, now);
                            is_reset_timeout = false;
                        }
                    }
                    for w in [s.fcwnd(), s.ecwnd()] {
                        prop_assert!(w >= p.min_cwnd && w <= p.max_cwnd, "window {}", w);
                    }
                    let after = s.cwnd(&p);
                    if after < before {
                        // the reset after RETX_RESET_THRESHOLD timeouts is not rate-limited
                        if let (Some(t), false) = (last_down, is_reset_timeout) {
                            let rtt = s.rtt.unwrap_or(p.base_target_ps);
                            prop_assert!(now - t >= rtt,
                                "two decreases {} ps apart, rtt {}", now - t, rtt);
                        }
                        last_down = Some(now);
                    }
                    if after < 1.0 {
                        prop_assert!(s.pacing_delay_ps() > 0.0);
                        prop_assert!(s.control(&p).rate_bps <= p.line_rate_bps);
                    } else {
                        prop_assert_eq!(s.pacing_delay_ps(), 0.0);
                    }
                }
            }
        }

        #[test]
        fn sustained_congestion_decreases_once_per_rtt() {
            // every ACK (one per µs) sees 40 µs against a 20 µs target for 1 ms: with an RTT
            // of 40 µs the window goes down at most 1 ms / 40 µs + 1 = 26 times
            let p = pf();
            let mut s = Swift::new(&p, 1000.0);
            let mut rng = crate::engine::Rng::from_seed(3);
            for i in 1..=1000u64 {
                let rtt = 40 * US + (rng.next_f64() * 10.0) as u64;
                s.on_ack(&p, &ack(i * US + 100 * US, rtt, 1, 0), 0);
            }
            assert!(s.decreases() <= 26, "{}", s.decreases());
            assert!(s.decreases() >= 20, "{}", s.decreases());
        }
    }
}
