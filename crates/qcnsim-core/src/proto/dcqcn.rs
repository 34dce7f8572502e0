//! DCQCN's congestion point (RED-like ECN marking) and notification point (CNP pacing at the
//! receiver). See docs/models/dcqcn.md. The reaction point is QCN's ([`crate::proto::qcn_rp`])
//! with its DCQCN options ([`crate::proto::qcn_rp::DcqcnRp`]).
//!
//! Congestion point (Zhu et al., SIGCOMM 2015, §3.1; HPCC's ns-3 `SwitchMmu::ShouldSendCN`;
//! ns3-rdma `BroadcomNode::ShouldSendCN`), for the egress queue length `q` in bytes seen by a
//! data frame:
//!
//! ```text
//! q <= Kmin:         not marked                (no random draw)
//! Kmin < q <= Kmax:  marked with probability Pmax*(q - Kmin)/(Kmax - Kmin)   (one draw)
//! q > Kmax:          marked                    (no random draw)
//! ```
//!
//! Notification point (the paper's Fig. 6; htsim's DCQCN sink): a marked data frame arriving at
//! `t` for a flow whose last CNP went out at `last` (or is due at `last`):
//!
//! ```text
//! no CNP yet, or t >= last + N:  send a CNP at t            (last = t)
//! t <= last:                     nothing (the CNP due at last covers it)
//! last < t < last + N:           send a CNP at last + N     (last = last + N)
//! ```
//!
//! so a flow gets at most one CNP per N, the first marked frame after a quiet interval gets one
//! at once, and marked frames inside an interval get one at its end. N = 0 sends a CNP for
//! every marked frame.

use crate::engine::Rng;
use crate::proto::qcn_rp::{AlphaUpdate, DcqcnRp, HaiMode, RpParams, StageGate, TargetClamp};
use crate::units::{SimTime, US};

/// The three DCQCN variants in use (docs/models/dcqcn.md has their defaults side by side with
/// the source of each value).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DcqcnVariant {
    /// Zhu et al., SIGCOMM 2015, with the CoNEXT 2016 fluid model's parameters.
    Paper,
    /// `bobzhuyb/ns3-rdma` (the paper's first author's simulator), `mix/config.txt`.
    Ns3Rdma,
    /// HPCC's ns-3 (`alibaba-edu/High-Precision-Congestion-Control`), Mellanox's DCQCN
    /// (`rdma-hw.cc` `*Mlx`), `mix/config.txt`.
    Mellanox,
}

impl DcqcnVariant {
    pub const NAMES: &'static [&'static str] = &["paper", "ns3-rdma", "mellanox"];

    pub fn from_name(s: &str) -> Option<DcqcnVariant> {
        match s {
            "paper" => Some(DcqcnVariant::Paper),
            "ns3-rdma" => Some(DcqcnVariant::Ns3Rdma),
            "mellanox" => Some(DcqcnVariant::Mellanox),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            DcqcnVariant::Paper => "paper",
            DcqcnVariant::Ns3Rdma => "ns3-rdma",
            DcqcnVariant::Mellanox => "mellanox",
        }
    }

    /// The variant's ECN marking.
    pub fn ecn(self) -> EcnParams {
        match self {
            DcqcnVariant::Paper => EcnParams::paper(),
            // KMIN 40, KMAX 1000 (cells of 1030 B), PMAX 1.0
            DcqcnVariant::Ns3Rdma => EcnParams {
                k_min_bytes: 40 * 1030,
                k_max_bytes: 1000 * 1030,
                p_max: 1.0,
                mark_at: MarkAt::Dequeue,
            },
            // the 25 Gb/s entry of KMIN_MAP / KMAX_MAP / PMAX_MAP
            DcqcnVariant::Mellanox => EcnParams {
                k_min_bytes: 100_000,
                k_max_bytes: 400_000,
                p_max: 0.2,
                mark_at: MarkAt::Dequeue,
            },
        }
    }

    /// The NP's CNP interval N (0: a CNP for every marked frame).
    pub fn cnp_interval(self) -> SimTime {
        match self {
            DcqcnVariant::Paper | DcqcnVariant::Ns3Rdma => 50 * US,
            // HPCC's receiver echoes the mark in the ACK of every marked packet
            DcqcnVariant::Mellanox => 0,
        }
    }

    /// The variant's reaction point for a NIC of `line_rate_bps`.
    pub fn rp(self, line_rate_bps: f64) -> RpParams {
        let base = RpParams {
            jitter: 0.0,
            release_at_line_rate: false,
            min_rate_bps: 100e6,
            target_rate_reduction: false,
            cap_target_rate: true,
            hai_mode: HaiMode::Multiplied,
            stage_gate: StageGate::Both,
            ..RpParams::standard(line_rate_bps)
        };
        match self {
            DcqcnVariant::Paper => RpParams {
                byte_counter_bytes: 10_000_000,
                byte_counter_after_frt_bytes: 10_000_000,
                timer_ps: 55 * US,
                timer_after_frt_ps: 55 * US,
                frt: 5,
                r_ai_bps: 40e6,
                r_hai_bps: 200e6,
                dcqcn: Some(Box::new(DcqcnRp {
                    g: 1.0 / 256.0,
                    alpha_start: 1.0,
                    alpha_interval_ps: 55 * US,
                    alpha_update: AlphaUpdate::CutThenUpdate,
                    first_cnp_rate: None,
                    decrease_interval_ps: 0,
                    clamp: TargetClamp::Always,
                })),
                ..base
            },
            // FR while both stages < F, AI while one is, HAI R_HAI*(min - F + 1): the pseudo
            // code's gate with FRT = F - 1
            DcqcnVariant::Ns3Rdma => RpParams {
                byte_counter_bytes: 300_000_000,
                byte_counter_after_frt_bytes: 300_000_000,
                timer_ps: 60 * US,
                timer_after_frt_ps: 60 * US,
                frt: 4,
                r_ai_bps: 40e6,
                r_hai_bps: 200e6,
                target_rate_reduction: true,
                cap_target_rate: false,
                dcqcn: Some(Box::new(DcqcnRp {
                    g: 1.0 / 256.0,
                    alpha_start: 0.5,
                    alpha_interval_ps: 55 * US,
                    alpha_update: AlphaUpdate::UpdateThenCut,
                    first_cnp_rate: None,
                    decrease_interval_ps: 0,
                    clamp: TargetClamp::Always,
                })),
                ..base
            },
            DcqcnVariant::Mellanox => RpParams {
                byte_counter_bytes: 10_000_000,
                byte_counter_after_frt_bytes: 10_000_000,
                byte_counter_enabled: false,
                timer_ps: 900 * US,
                timer_after_frt_ps: 900 * US,
                frt: 1,
                r_ai_bps: 50e6,
                r_hai_bps: 100e6,
                hai_mode: HaiMode::Constant,
                stage_gate: StageGate::Timer,
                dcqcn: Some(Box::new(DcqcnRp {
                    g: 1.0 / 256.0,
                    alpha_start: 1.0,
                    alpha_interval_ps: US,
                    alpha_update: AlphaUpdate::Periodic,
                    first_cnp_rate: Some(1.0),
                    decrease_interval_ps: 4 * US,
                    clamp: TargetClamp::TimeStage,
                })),
                ..base
            },
        }
    }
}

/// Where the CP looks at the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkAt {
    /// When the frame leaves the egress queue, with the queue it leaves behind (HPCC's ns-3,
    /// ns3-rdma: default).
    Dequeue,
    /// When the frame is admitted, with the queue including it.
    Enqueue,
}

impl MarkAt {
    pub fn name(self) -> &'static str {
        match self {
            MarkAt::Dequeue => "dequeue",
            MarkAt::Enqueue => "enqueue",
        }
    }
}

/// ECN marking parameters of a DCQCN congestion point.
#[derive(Debug, Clone, PartialEq)]
pub struct EcnParams {
    /// Kmin, bytes: no marking at or below.
    pub k_min_bytes: u64,
    /// Kmax, bytes: every frame marked above.
    pub k_max_bytes: u64,
    /// Pmax: the marking probability just below Kmax.
    pub p_max: f64,
    pub mark_at: MarkAt,
}

impl EcnParams {
    /// The paper's values: Kmin 5 KB, Kmax 200 KB, Pmax 1 %, marking at dequeue.
    pub fn paper() -> EcnParams {
        EcnParams {
            k_min_bytes: 5_000,
            k_max_bytes: 200_000,
            p_max: 0.01,
            mark_at: MarkAt::Dequeue,
        }
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.k_min_bytes >= self.k_max_bytes {
            return Err(format!(
                "k_min ({}B) must be below k_max ({}B)",
                self.k_min_bytes, self.k_max_bytes
            ));
        }
        if !(0.0..=1.0).contains(&self.p_max) {
            return Err(format!("p_max must be in [0, 1], got {}", self.p_max));
        }
        Ok(())
    }

    /// The marking probability for a queue of `q` bytes.
    pub fn probability(&self, q: u64) -> f64 {
        if q <= self.k_min_bytes {
            0.0
        } else if q > self.k_max_bytes {
            1.0
        } else {
            self.p_max * (q - self.k_min_bytes) as f64
                / (self.k_max_bytes - self.k_min_bytes) as f64
        }
    }
}

/// One marking queue (egress port, or one priority queue of it with PFC) with its own stream.
#[derive(Debug, Clone)]
pub struct EcnCp {
    rng: Rng,
}

impl EcnCp {
    pub fn new(rng: Rng) -> EcnCp {
        EcnCp { rng }
    }

    /// A data frame sees a queue of `q` bytes: mark it (set CE)? Draws one number only when
    /// Kmin < q <= Kmax.
    #[inline]
    pub fn mark(&mut self, p: &EcnParams, q: u64) -> bool {
        if q <= p.k_min_bytes {
            false
        } else if q > p.k_max_bytes {
            true
        } else {
            self.rng.next_f64() < p.probability(q)
        }
    }
}

/// The notification point's per-flow state at the receiver.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Np {
    /// When the last CNP was sent or is due (None before the first).
    last: Option<SimTime>,
}

impl Np {
    /// A marked data frame of this flow arrives at `t` (arrival times of one flow never
    /// decrease). Returns when a CNP must leave for it, if one must.
    pub fn on_marked(&mut self, interval: SimTime, t: SimTime) -> Option<SimTime> {
        let at = match self.last {
            None => t,
            Some(l) if t >= l.saturating_add(interval) => t,
            Some(l) if t <= l => return None,
            Some(l) => l + interval,
        };
        self.last = Some(at);
        Some(at)
    }

    pub fn last(&self) -> Option<SimTime> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

    #[test]
    fn marking_probability_is_red_like() {
        let p = EcnParams::paper();
        // (queue bytes, probability)
        let table: &[(u64, f64)] = &[
            (0, 0.0),
            (5_000, 0.0),
            (5_001, 0.01 * 1.0 / 195_000.0),
            (102_500, 0.005),
            (200_000, 0.01),
            (200_001, 1.0),
            (1_000_000, 1.0),
        ];
        for &(q, want) in table {
            let got = p.probability(q);
            assert!((got - want).abs() < 1e-15, "q = {q}: {got} want {want}");
        }
    }

    #[test]
    fn marking_draws_only_between_kmin_and_kmax() {
        let p = EcnParams {
            p_max: 0.5,
            ..EcnParams::paper()
        };
        // below Kmin never, above Kmax always, and neither moves the stream
        let mut a = EcnCp::new(Rng::from_seed(7));
        let mut b = EcnCp::new(Rng::from_seed(7));
        for _ in 0..100 {
            assert!(!a.mark(&p, 5_000));
            assert!(a.mark(&p, 200_001));
        }
        for _ in 0..100 {
            assert_eq!(a.mark(&p, 150_000), b.mark(&p, 150_000));
        }
    }

    #[test]
    fn marking_frequency_follows_the_probability() {
        let p = EcnParams {
            p_max: 0.2,
            ..EcnParams::paper()
        };
        let mut cp = EcnCp::new(Rng::from_seed(1));
        let q = 5_000 + 195_000 / 2; // p = 0.1
        let n = 20_000;
        let marked = (0..n).filter(|_| cp.mark(&p, q)).count() as f64 / n as f64;
        assert!((marked - 0.1).abs() < 0.01, "marked fraction {marked}");
    }

    #[test]
    fn params_validation() {
        let bad = [
            EcnParams {
                k_min_bytes: 200_000,
                ..EcnParams::paper()
            },
            EcnParams {
                p_max: 1.5,
                ..EcnParams::paper()
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
        assert!(EcnParams::paper().validate().is_ok());
    }

    #[test]
    fn np_sends_at_most_one_cnp_per_interval() {
        let n = 50 * US;
        // (marked frame arrival, CNP time wanted)
        let table: &[(SimTime, Option<SimTime>)] = &[
            (10 * US, Some(10 * US)), // first marked frame: at once
            (10 * US, None),          // same instant: covered
            (30 * US, Some(60 * US)), // inside the interval: at its end
            (40 * US, None),          // covered by the CNP due at 60 us
            (60 * US, None),          // at the due time: covered
            (61 * US, Some(110 * US)),
            (200 * US, Some(200 * US)), // after a quiet interval: at once
            (250 * US, Some(250 * US)), // exactly one interval later: at once
        ];
        let mut np = Np::default();
        for (i, &(t, want)) in table.iter().enumerate() {
            assert_eq!(np.on_marked(n, t), want, "row {i}: t = {t}");
        }
        assert_eq!(np.last(), Some(250 * US));
    }

    #[test]
    fn np_with_zero_interval_answers_every_marked_frame() {
        let mut np = Np::default();
        for t in [1, 1, 2, 5] {
            // a second frame at the same instant gets its own CNP too
            assert_eq!(np.on_marked(0, t), Some(t));
        }
    }
}
