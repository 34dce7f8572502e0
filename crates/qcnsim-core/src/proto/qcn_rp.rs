//! IEEE 802.1Qau reaction point (RP, rate limiter). See docs/models/qcn.md.
//!
//! One [`Rp`] is the rate-limiter state of one congestion-controlled flow: active/inactive,
//! current rate CR, target rate TR, the byte counter (`tx_bcount`, `si_count`) and the timer
//! stage count (`timer_scount`). It is sans-IO: it never reads a clock and never schedules
//! anything; it returns a [`TimerCmd`] for the caller's RP timer and says when CR changed so
//! the caller can re-pace the next departure.
//!
//! The rules are those of the QCN pseudo code v2.x (as its public line-by-line implementations
//! agree, docs/models/qcn.md) restated with TR/CR as in the QCN transient-response proposals:
//!
//! ```text
//! on_cnm(qntzFb > 0):
//!     if inactive: activate, CR = TR = LINE, counters 0, tx_bcount = BC*U
//!     if si_count != 0 (extra fast recovery; always if the option is off):
//!         TR = CR; tx_bcount = BC*U
//!     si_count = timer_scount = 0
//!     CR = max(CR * max(1 - Gd*qntzFb, MIN_DEC), MIN_RATE)
//!     arm timer at now + T*U
//! on_frame_sent(L):
//!     if release option and CR >= LINE and RL queue empty: release (inactive, cancel timer)
//!     tx_bcount -= L
//!     if tx_bcount < 0: si_count += 1; tx_bcount = (si_count < FRT ? BC : BC_after)*U; increase
//! on_timer():
//!     timer_scount += 1; increase; arm timer at now + (timer_scount < FRT ? T : T_after)*U
//! increase():
//!     stage and HAI cycle count n from (si, ts) by the stage gate (StageGate):
//!       both (pseudo code v2.x, default):
//!         FR  (si <= FRT and ts <= FRT), AI (exactly one > FRT), HAI (both > FRT), n = min(si,ts) - FRT
//!       byte_counter: HAI (si > FRT), n = si - FRT; AI (si <= FRT < ts); FR otherwise
//!       either:       HAI (si > FRT or ts > FRT), n = max(si,ts) - FRT; FR otherwise (no AI)
//!     FR: Ri = 0;  AI: Ri = R_AI;  HAI: Ri = R_HAI*n   [or R_HAI, HaiMode::Constant]
//!     if TRR option and (si == 1 or ts == 1) and TR > ratio*CR: TR = TR/divisor else TR += Ri
//!     if cap option: TR = min(TR, LINE)
//!     CR = min((CR + TR)/2, LINE)
//! ```
//!
//! One cycle counter (`one_cycle_counter`, the push-back reading of the transient-response
//! slides: "when timer or byte-counter expires: go to next cycle", "Fb99: go back one cycle"):
//! si_count and timer_scount are one counter, `cycle_cnt`; a byte-counter or timer expiry
//! advances both, an Fb99 steps both back, a CNM resets both. The byte counter and the timer
//! keep their own reloads (neither restarts the other). With equal counters every stage gate
//! gives the same stage: FR up to FRT cycles, then HAI with n = cycle_cnt - FRT.
//!
//! `U` is uniform in `[1 - jitter, 1 + jitter)`. Every reload draws exactly one number, also
//! with jitter 0, so the stream position never depends on the jitter setting.
//!
//! Link-level PAUSE (the 10G QCN hardware study's "Paused RPs", docs/models/pause.md): while the
//! RP's link is paused ([`Rp::pause`] .. [`Rp::resume`]) the timer is frozen: its remaining
//! time is kept and it cannot expire, so `timer_scount` does not advance; it runs on from where
//! it stopped at [`Rp::resume`]. CNMs are still obeyed in full (counters reset, CR cut, and the byte
//! counter reloaded even in the first cycle, where extra fast recovery would keep it: the
//! hardware study's paused RP resets `tx_bcount` on every Fb message); the timer they
//! restart is restarted frozen (a full `T*U` that starts running at the resume). The rate
//! limiter stops sending (the caller gates it), so the byte counter does not advance either;
//! its token bucket keeps filling at CR (the caller's pacer).
//!
//! ```text
//! pause():  paused = true; if timer armed: left = deadline - now, timer cancelled
//! resume(): paused = false; if left: arm timer at now + left
//! while paused: any timer (re)start stores left = period*U instead of arming; expiries are ignored
//! ```

use crate::engine::Rng;
use crate::proto::multicast::{McFeedback, NO_CPID};
use crate::units::{SimTime, MS};

/// How the hyper-active increase step is computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HaiMode {
    /// `R_HAI * (min(si_count, timer_scount) - FRT)`: the pseudo code v2.x (default).
    Multiplied,
    /// A constant `R_HAI` per HAI cycle: the hsr/qcn-emulator variant.
    Constant,
}

impl HaiMode {
    /// The option name used in scenario files.
    pub fn name(self) -> &'static str {
        match self {
            HaiMode::Multiplied => "multiplied",
            HaiMode::Constant => "constant",
        }
    }
}

/// How the two stage counters decide the RP's stage and the HAI cycle count n.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageGate {
    /// HAI when both counters are past FRT (n = min - FRT), AI when one is: pseudo code v2.x
    /// (default).
    Both,
    /// HAI when the byte counter is past FRT (n = si_count - FRT), whatever the timer stage;
    /// AI when only the timer is.
    ByteCounter,
    /// HAI when either counter is past FRT (n = max - FRT); no AI.
    Either,
    /// The timer stage alone (DCQCN as in HPCC's ns-3 Mellanox model, `RateIncEventMlx`,
    /// which tests the stage before counting the expiry): FR while timer_scount <= FRT, AI at
    /// FRT + 1, HAI beyond with n = timer_scount - FRT - 1.
    Timer,
}

impl StageGate {
    pub fn name(self) -> &'static str {
        match self {
            StageGate::Both => "both",
            StageGate::ByteCounter => "byte_counter",
            StageGate::Either => "either",
            StageGate::Timer => "timer",
        }
    }

    /// The stage of an active RP with these counters, and the HAI cycle count n (0 outside HAI).
    pub fn classify(self, frt: u32, si: u32, ts: u32) -> (RpStage, u32) {
        let (bs, tm) = (si > frt, ts > frt);
        match self {
            StageGate::Both => match (bs, tm) {
                (true, true) => (RpStage::HyperActiveIncrease, si.min(ts) - frt),
                (false, false) => (RpStage::FastRecovery, 0),
                _ => (RpStage::ActiveIncrease, 0),
            },
            StageGate::ByteCounter => match (bs, tm) {
                (true, _) => (RpStage::HyperActiveIncrease, si - frt),
                (false, true) => (RpStage::ActiveIncrease, 0),
                (false, false) => (RpStage::FastRecovery, 0),
            },
            StageGate::Either => {
                if bs || tm {
                    (RpStage::HyperActiveIncrease, si.max(ts) - frt)
                } else {
                    (RpStage::FastRecovery, 0)
                }
            }
            StageGate::Timer => match ts.saturating_sub(frt) {
                0 => (RpStage::FastRecovery, 0),
                1 => (RpStage::ActiveIncrease, 0),
                k => (RpStage::HyperActiveIncrease, k - 1),
            },
        }
    }
}

/// Which stage counters a push-back (Fb99) message steps back by one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fb99Step {
    /// Both si_count and timer_scount (default).
    Both,
    /// si_count only.
    ByteCounter,
    /// timer_scount only.
    Timer,
}

impl Fb99Step {
    pub fn name(self) -> &'static str {
        match self {
            Fb99Step::Both => "both",
            Fb99Step::ByteCounter => "byte_counter",
            Fb99Step::Timer => "timer",
        }
    }
}

/// When DCQCN's alpha is updated (docs/models/dcqcn.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlphaUpdate {
    /// At each decrease, after the cut: `RC = RC(1 - alpha/2); alpha = (1-g)alpha + g`; the
    /// K timer restarts at each decrease and decays alpha by (1-g) at each expiry (the
    /// paper's order, Zhu et al. SIGCOMM 2015 §3.1).
    CutThenUpdate,
    /// At each decrease, before the cut (ns3-rdma `rpr_cnm_received`); K timer as above.
    UpdateThenCut,
    /// On a fixed K grid from the first CNP: `alpha = (1-g)alpha + g` if a CNP arrived in the
    /// slot, else `(1-g)alpha` (HPCC's ns-3 `UpdateAlphaMlx`); decreases read alpha.
    Periodic,
}

impl AlphaUpdate {
    pub fn name(self) -> &'static str {
        match self {
            AlphaUpdate::CutThenUpdate => "cut_then_update",
            AlphaUpdate::UpdateThenCut => "update_then_cut",
            AlphaUpdate::Periodic => "periodic",
        }
    }
}

/// When a DCQCN decrease sets `RT = RC` (and restarts the byte counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetClamp {
    /// At every decrease (the paper; ns3-rdma `ClampTargetRate`).
    Always,
    /// Only if a byte-counter cycle completed since the last decrease (ns3-rdma with neither
    /// clamp option, QCN's extra fast recovery).
    ByteStage,
    /// Only if a timer cycle completed since the last decrease (HPCC's ns-3 Mellanox model
    /// with `ClampTargetRate` off).
    TimeStage,
    /// If either counter completed a cycle (ns3-rdma `ClampTargetRateAfterTimeInc`).
    AnyStage,
}

impl TargetClamp {
    pub fn name(self) -> &'static str {
        match self {
            TargetClamp::Always => "always",
            TargetClamp::ByteStage => "byte_stage",
            TargetClamp::TimeStage => "time_stage",
            TargetClamp::AnyStage => "any_stage",
        }
    }
}

/// The DCQCN options of a reaction point (Zhu et al., SIGCOMM 2015; docs/models/dcqcn.md):
/// CNPs instead of CNMs, a decrease by `alpha/2` instead of `Gd*Fb`. The increase (byte
/// counter, timer, FR/AI/HAI) is QCN's, configured through the other [`RpParams`] fields.
#[derive(Debug, Clone, PartialEq)]
pub struct DcqcnRp {
    /// g, the gain of the alpha average.
    pub g: f64,
    /// alpha when the rate limiter is allocated (first CNP).
    pub alpha_start: f64,
    /// K, the alpha timer, ps.
    pub alpha_interval_ps: SimTime,
    pub alpha_update: AlphaUpdate,
    /// Some(f): the first CNP sets `RC = RT = f*RC` (at least the minimum rate) and
    /// `alpha = alpha_start` without a cut (HPCC `RateOnFirstCnp`); None: the first CNP is an
    /// ordinary decrease from the line rate.
    pub first_cnp_rate: Option<f64>,
    /// 0: every CNP decreases at once. > 0: a CNP only sets a flag; the rate is cut once at
    /// the next point of a grid of this period started at the first CNP (HPCC
    /// `RateDecreaseInterval`).
    pub decrease_interval_ps: SimTime,
    pub clamp: TargetClamp,
}

/// RP parameters. Rates are bit/s, byte counts bytes, times picoseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct RpParams {
    /// Link rate of the NIC (max rate), bit/s.
    pub line_rate_bps: f64,
    /// BC_LIMIT, bytes: 150000 (MIB rpgByteReset).
    pub byte_counter_bytes: u64,
    /// Byte-counter reload once si_count >= FRT, bytes: default BC/2 (75000).
    pub byte_counter_after_frt_bytes: u64,
    /// T, the rate-increase timer period: default 15 ms (MIB rpgTimeReset); the reference
    /// experiments use 10 ms.
    pub timer_ps: SimTime,
    /// Timer reload once timer_scount >= FRT: default T/2.
    pub timer_after_frt_ps: SimTime,
    /// Fast recovery threshold (MIB rpgThreshold): 5.
    pub frt: u32,
    /// Active-increase step R_AI, bit/s: 5 Mb/s (MIB rpgAiRate).
    pub r_ai_bps: f64,
    /// Hyper-active-increase step R_HAI, bit/s: 50 Mb/s (MIB rpgHaiRate).
    pub r_hai_bps: f64,
    /// Gd: 1/128 (MIB rpgGd = 7, i.e. 2^-7).
    pub gd: f64,
    /// Minimum decrease factor: factor = max(1 - gd*qntz_fb, min_dec_factor). 0.5 (MIB
    /// rpgMinDecFac 50 %).
    pub min_dec_factor: f64,
    /// Minimum rate, bit/s: 5 Mb/s (MIB rpgMinRate).
    pub min_rate_bps: f64,
    /// Reloads of BC and T are multiplied by U(1-j, 1+j): 0.15.
    pub jitter: f64,
    /// true: at the end of the first cycle after a CNM (si_count==1 || timer_scount==1), if
    /// TR > trr_ratio*CR then TR /= trr_divisor (else TR += Ri); then CR = (CR+TR)/2.
    pub target_rate_reduction: bool,
    /// Target-rate-reduction threshold ratio: 10.
    pub trr_ratio: f64,
    /// Target-rate-reduction divisor: 8.
    pub trr_divisor: f64,
    /// true: TR = min(TR, line). false: TR may exceed line (CR is always capped).
    pub cap_target_rate: bool,
    /// true: on CNM, TR <- CR and tx_bcount reload only when si_count != 0; false: always.
    pub extra_fast_recovery: bool,
    /// How the HAI increment is computed.
    pub hai_mode: HaiMode,
    /// How the two stage counters gate AI and HAI.
    pub stage_gate: StageGate,
    /// One cycle counter for both the byte counter and the timer (the push-back reading of
    /// the transient-response slides); false: the two counters of the pseudo code.
    pub one_cycle_counter: bool,
    /// true: after a transmit, if CR >= line and the RL queue is empty, release the RL
    /// (inactive, CR = TR = line, counters reset, timer cancelled).
    pub release_at_line_rate: bool,
    /// false: the RL is allocated on the first CNM with qntz_fb > 0 (CR = TR = line, then the
    /// decrease). true: the RL is active from the start at CR = TR = line (or `start_rate_bps`).
    pub start_active: bool,
    /// With `start_active`: CR = TR = min(this, line) at the start instead of the line rate
    /// (`cc.qcn.rp.start_rate`, e.g. the fair share C/N so that a packet run starts where a
    /// fluid model does). `None` (default): the line rate.
    pub start_rate_bps: Option<f64>,
    /// How the RP treats CNMs: standard QCN (every CNM decreases with its own feedback), or
    /// the representative-CP scheme for multicast (Algorithm 1, see [`Rp::on_cnm_from`]).
    pub feedback: McFeedback,
    /// The largest quantised feedback, `2^fb_bits - 1` of the CPs (63): F̂b restarts at 0 when
    /// it reaches this value (representative feedback only).
    pub fb_max: u8,
    /// Representative feedback: F̂b and the representative CPID are forgotten this long after
    /// the last CNM (`cc.qcn.multicast_fbhat_hold`, a qcnsim extension); 0 = never.
    pub fbhat_hold_ps: SimTime,
    /// Push-back (Fb99): which stage counters one Fb99 message decrements.
    pub fb99_step: Fb99Step,
    /// false: no rate-increase timer at all (recovery by the byte counter only; the
    /// "drift timer disabled" of the transient-response runs). Default true.
    pub timer_enabled: bool,
    /// SONAR short fuse: byte-counter reload while the RP is in the SONAR-driven HAI (100
    /// packets of 1500 B).
    pub sonar_byte_counter_bytes: u64,
    /// false: no byte counter (the DCQCN timer-only increase). Default true.
    pub byte_counter_enabled: bool,
    /// DCQCN: the RP reacts to CNPs ([`Rp::on_cnp`]); None (default): QCN. (Boxed: QCN's
    /// parameters, carried by every flow, stay small.)
    pub dcqcn: Option<Box<DcqcnRp>>,
}

impl RpParams {
    /// The 802.1Q MIB defaults (pseudo code v2.x behaviour) for a NIC of the given line rate.
    pub fn standard(line_rate_bps: f64) -> RpParams {
        RpParams {
            line_rate_bps,
            byte_counter_bytes: 150_000,
            byte_counter_after_frt_bytes: 75_000,
            timer_ps: 15 * MS,
            timer_after_frt_ps: 15 * MS / 2,
            frt: 5,
            r_ai_bps: 5e6,
            r_hai_bps: 50e6,
            gd: 1.0 / 128.0,
            min_dec_factor: 0.5,
            min_rate_bps: 5e6,
            jitter: 0.15,
            target_rate_reduction: true,
            trr_ratio: 10.0,
            trr_divisor: 8.0,
            cap_target_rate: true,
            extra_fast_recovery: true,
            hai_mode: HaiMode::Multiplied,
            stage_gate: StageGate::Both,
            one_cycle_counter: false,
            release_at_line_rate: true,
            start_active: false,
            start_rate_bps: None,
            feedback: McFeedback::Standard,
            fb_max: 63,
            fbhat_hold_ps: 0,
            fb99_step: Fb99Step::Both,
            timer_enabled: true,
            sonar_byte_counter_bytes: 150_000,
            byte_counter_enabled: true,
            dcqcn: None,
        }
    }

    /// Check ranges; the message names the offending field (the caller adds the path prefix).
    pub fn validate(&self) -> Result<(), String> {
        let pos = |name: &str, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(())
            } else {
                Err(format!("{name} must be finite and > 0, got {x}"))
            }
        };
        pos("line_rate_bps", self.line_rate_bps)?;
        pos("min_rate_bps", self.min_rate_bps)?;
        pos("trr_ratio", self.trr_ratio)?;
        pos("trr_divisor", self.trr_divisor)?;
        if self.min_rate_bps > self.line_rate_bps {
            return Err(format!(
                "min_rate_bps ({}) must not exceed line_rate_bps ({})",
                self.min_rate_bps, self.line_rate_bps
            ));
        }
        for (name, x) in [("r_ai_bps", self.r_ai_bps), ("r_hai_bps", self.r_hai_bps)] {
            if !(x.is_finite() && x >= 0.0) {
                return Err(format!("{name} must be finite and >= 0, got {x}"));
            }
        }
        if let Some(r) = self.start_rate_bps {
            if !(r.is_finite() && r >= self.min_rate_bps) {
                return Err(format!(
                    "start_rate_bps must be finite and >= min_rate_bps ({}), got {r}",
                    self.min_rate_bps
                ));
            }
        }
        if !(self.gd.is_finite() && self.gd >= 0.0) {
            return Err(format!("gd must be finite and >= 0, got {}", self.gd));
        }
        if !(self.min_dec_factor > 0.0 && self.min_dec_factor <= 1.0) {
            return Err(format!(
                "min_dec_factor must be in (0, 1], got {}",
                self.min_dec_factor
            ));
        }
        if !(self.jitter.is_finite() && (0.0..1.0).contains(&self.jitter)) {
            return Err(format!("jitter must be in [0, 1), got {}", self.jitter));
        }
        if self.byte_counter_bytes == 0
            || self.byte_counter_after_frt_bytes == 0
            || self.sonar_byte_counter_bytes == 0
        {
            return Err("byte_counter_bytes and byte_counter_after_frt_bytes must be > 0".into());
        }
        if self.timer_ps == 0 || self.timer_after_frt_ps == 0 {
            return Err("timer_ps and timer_after_frt_ps must be > 0".into());
        }
        if let Some(d) = &self.dcqcn {
            if !(d.g > 0.0 && d.g <= 1.0) {
                return Err(format!("g must be in (0, 1], got {}", d.g));
            }
            if !(0.0..=1.0).contains(&d.alpha_start) {
                return Err(format!(
                    "alpha_start must be in [0, 1], got {}",
                    d.alpha_start
                ));
            }
            if d.alpha_interval_ps == 0 {
                return Err("alpha_interval must be > 0".into());
            }
            if let Some(f) = d.first_cnp_rate {
                if !(f.is_finite() && (0.0..=1.0).contains(&f)) {
                    return Err(format!("first_cnp_rate must be in [0, 1], got {f}"));
                }
            }
        }
        Ok(())
    }
}

/// What the caller must do with the RP's timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerCmd {
    /// Leave the timer as it is.
    Keep,
    /// (Re)arm the timer to fire at this absolute time; any earlier arming is stale.
    Arm(SimTime),
    /// Cancel the timer (RL released).
    Cancel,
}

/// The actions of one RP input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RpOutput {
    pub timer: TimerCmd,
    /// CR changed: the caller re-paces the next departure.
    pub rate_changed: bool,
}

impl RpOutput {
    /// Nothing to do.
    pub const NONE: RpOutput = RpOutput {
        timer: TimerCmd::Keep,
        rate_changed: false,
    };
}

/// The rate-increase stage of an RP (derived from the two stage counters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpStage {
    /// No rate limiter: the flow sends at line rate.
    Inactive,
    /// Both si_count and timer_scount <= FRT.
    FastRecovery,
    /// Exactly one of them > FRT.
    ActiveIncrease,
    /// Both > FRT.
    HyperActiveIncrease,
}

/// The state of one reaction point (rate limiter).
#[derive(Debug, Clone)]
pub struct Rp {
    active: bool,
    /// Current rate CR, bit/s (line rate while inactive).
    cr: f64,
    /// Target rate TR, bit/s.
    tr: f64,
    /// Bytes left in the current byte-counter cycle.
    tx_bcount: f64,
    /// Completed byte-counter cycles since the last CNM (rpByteStage).
    si_count: u32,
    /// Completed timer cycles since the last CNM (rpTimeStage).
    timer_scount: u32,
    /// Deadline of the timer as last armed, if armed (never while paused).
    timer_deadline: Option<SimTime>,
    /// In the SONAR short fuse: HAI driven by the ping timer (the RP timer is stopped) and the
    /// byte counter reloads `sonar_byte_counter_bytes`.
    sonar_sf: bool,
    /// The RP's link is paused (PAUSE/PFC): the timer is frozen.
    paused: bool,
    /// While paused: the time the frozen timer still has to run, if it was running.
    frozen_left: Option<SimTime>,
    /// Stream for the BC and timer jitter.
    rng: Rng,
    /// F̂b, the largest feedback received since the last restart (representative feedback).
    fb_hat: u8,
    /// CPID of the representative CP ([`NO_CPID`] until the first CNM).
    rep_cpid: u32,
    /// When the last CNM with non-zero feedback arrived (representative feedback).
    last_cnm: SimTime,
    /// DCQCN's own state (None for a QCN RP; boxed so that a QCN RP, carried by every flow,
    /// stays as small as before).
    dc: Option<Box<DcqcnState>>,
}

/// The reaction point's DCQCN state.
#[derive(Debug, Clone, Default)]
struct DcqcnState {
    /// alpha, brought up to date lazily (its K timer needs no event: alpha is read only at
    /// decreases).
    alpha: f64,
    /// Alpha timer: when it last (re)started (cut_then_update, update_then_cut), or the next
    /// point of the K grid (periodic).
    alpha_t: SimTime,
    /// Periodic alpha: a CNP arrived in the current K slot.
    alpha_flag: bool,
    /// With a decrease interval: when the pending decrease happens (None: none pending).
    dec_deadline: Option<SimTime>,
    /// With a decrease interval: the origin of the decrease grid (the first CNP).
    dec_grid0: SimTime,
}

impl Rp {
    /// An RP at line rate: inactive, or (with `start_active`) active with CR = TR = line (or
    /// `start_rate_bps`, at most the line rate) and a full byte counter; the timer is armed by
    /// [`Rp::start`].
    pub fn new(p: &RpParams, rng: Rng) -> Rp {
        let mut rp = Rp {
            active: false,
            cr: p.line_rate_bps,
            tr: p.line_rate_bps,
            tx_bcount: 0.0,
            si_count: 0,
            timer_scount: 0,
            timer_deadline: None,
            sonar_sf: false,
            paused: false,
            frozen_left: None,
            rng,
            fb_hat: 0,
            rep_cpid: NO_CPID,
            last_cnm: 0,
            dc: p.dcqcn.as_ref().map(|d| {
                Box::new(DcqcnState {
                    alpha: d.alpha_start,
                    ..DcqcnState::default()
                })
            }),
        };
        if p.start_active {
            rp.activate(p);
            if let Some(r) = p.start_rate_bps {
                rp.cr = r.min(p.line_rate_bps);
                rp.tr = rp.cr;
            }
        }
        rp
    }

    /// Called once at the start of the flow. With `start_active` it arms the timer
    /// (now + T*U); otherwise nothing happens.
    pub fn start(&mut self, p: &RpParams, now: SimTime) -> RpOutput {
        if !(p.start_active && self.active) {
            return RpOutput::NONE;
        }
        RpOutput {
            timer: self.arm_timer(p, now, p.timer_ps),
            rate_changed: false,
        }
    }

    /// A CNM with quantised feedback `qntz_fb` arrived for this flow. `qntz_fb == 0` is
    /// ignored (the standard CP never sends one).
    pub fn on_cnm(&mut self, p: &RpParams, now: SimTime, qntz_fb: u8) -> RpOutput {
        if qntz_fb == 0 {
            return RpOutput::NONE;
        }
        let cr_before = self.cr;
        if !self.active {
            self.activate(p);
        }
        // Extra fast recovery: CNMs in the first byte-counter cycle after a CNM keep TR at the
        // pre-congestion value and do not restart the byte counter.
        if !p.extra_fast_recovery || self.si_count != 0 {
            self.tr = self.cr;
            self.tx_bcount = self.jittered(p.byte_counter_bytes as f64, p.jitter);
        } else if self.paused {
            // the hardware study's paused RP resets tx_bcount on every Fb message (TR kept)
            self.tx_bcount = self.jittered(p.byte_counter_bytes as f64, p.jitter);
        }
        self.si_count = 0;
        self.timer_scount = 0;
        self.sonar_sf = false;
        let factor = (1.0 - p.gd * qntz_fb as f64).max(p.min_dec_factor);
        self.cr = (self.cr * factor).max(p.min_rate_bps);
        let timer = self.arm_timer(p, now, p.timer_ps);
        RpOutput {
            timer,
            rate_changed: self.cr != cr_before,
        }
    }

    /// A CNM with quantised feedback `qntz_fb` from the CP whose identifier is `cpid`.
    ///
    /// Standard feedback: exactly [`Rp::on_cnm`]. Representative feedback (the multicast QCN
    /// study, Algorithm 1):
    ///
    /// ```text
    /// if Fb_hat < Fb: Fb_hat = Fb; rep_cpid = cpid
    /// adjust the rate with Fb_hat          (on_cnm(Fb_hat))
    /// if Fb_hat == fb_max: Fb_hat = 0       (restart the selection; rep_cpid is kept)
    /// ```
    ///
    /// With `fbhat_hold_ps > 0` (an extension), F̂b and the CPID expire first if the previous
    /// CNM is at least that old (see [`Rp::expire_fb_hat`]).
    ///
    /// A CNM with `qntz_fb == 0` is ignored in both modes, as by [`Rp::on_cnm`].
    pub fn on_cnm_from(&mut self, p: &RpParams, now: SimTime, qntz_fb: u8, cpid: u32) -> RpOutput {
        match p.feedback {
            McFeedback::Standard => self.on_cnm(p, now, qntz_fb),
            McFeedback::Representative => {
                if qntz_fb == 0 {
                    return RpOutput::NONE;
                }
                self.expire_fb_hat(p, now);
                self.last_cnm = now;
                if self.fb_hat < qntz_fb {
                    self.fb_hat = qntz_fb;
                    self.rep_cpid = cpid;
                }
                let out = self.on_cnm(p, now, self.fb_hat);
                if self.fb_hat >= p.fb_max {
                    self.fb_hat = 0;
                }
                out
            }
        }
    }

    /// `cc.qcn.multicast_fbhat_hold` (an extension of Algorithm 1): once `fbhat_hold_ps` have
    /// passed since the last CNM, F̂b = 0 and no representative, as if the selection restarted
    /// at that instant. Evaluated when F̂b is read (stamping a frame, the next CNM), which is
    /// exactly equivalent to a timer at `last CNM + hold`. No effect with a hold of 0.
    pub fn expire_fb_hat(&mut self, p: &RpParams, now: SimTime) {
        if p.fbhat_hold_ps > 0
            && self.rep_cpid != NO_CPID
            && now >= self.last_cnm.saturating_add(p.fbhat_hold_ps)
        {
            self.fb_hat = 0;
            self.rep_cpid = NO_CPID;
        }
    }

    /// F̂b as carried by the next data frame (0 under standard feedback).
    pub fn fb_hat(&self) -> u8 {
        self.fb_hat
    }

    /// The representative CPID carried by the next data frame ([`NO_CPID`] when unset).
    pub fn rep_cpid(&self) -> u32 {
        self.rep_cpid
    }

    /// Called after each data frame of `bytes` leaves the rate limiter; `rl_queue_empty` = no frame waiting in the RL queue.
    #[inline]
    pub fn on_frame_sent(
        &mut self,
        p: &RpParams,
        _now: SimTime,
        bytes: u32,
        rl_queue_empty: bool,
    ) -> RpOutput {
        if !self.active {
            return RpOutput::NONE;
        }
        if p.release_at_line_rate && self.cr >= p.line_rate_bps && rl_queue_empty {
            return self.release_at_line_rate(p);
        }
        self.tx_bcount -= bytes as f64;
        if self.tx_bcount >= 0.0 {
            return RpOutput::NONE;
        }
        self.byte_counter_cycle(p)
    }

    /// `on_frame_sent` at line rate with nothing waiting: the rate limiter is released.
    #[inline(never)]
    fn release_at_line_rate(&mut self, p: &RpParams) -> RpOutput {
        let cr_before = self.cr;
        self.release(p);
        RpOutput {
            timer: TimerCmd::Cancel,
            rate_changed: self.cr != cr_before,
        }
    }

    /// `on_frame_sent` completed a byte-counter cycle (out of line: most frames do not).
    #[inline(never)]
    fn byte_counter_cycle(&mut self, p: &RpParams) -> RpOutput {
        self.si_count = self.si_count.saturating_add(1);
        if p.one_cycle_counter {
            self.timer_scount = self.si_count;
        }
        let reload = if self.sonar_sf {
            p.sonar_byte_counter_bytes
        } else if self.si_count < p.frt {
            p.byte_counter_bytes
        } else {
            p.byte_counter_after_frt_bytes
        };
        self.tx_bcount = self.jittered(reload as f64, p.jitter);
        let cr_before = self.cr;
        self.self_increase(p);
        RpOutput {
            timer: TimerCmd::Keep,
            rate_changed: self.cr != cr_before,
        }
    }

    /// The timer armed by the last TimerCmd::Arm fired (the caller drops stale timer events itself).
    /// In the SONAR short fuse the RP timer is stopped; a late expiry is ignored.
    pub fn on_timer(&mut self, p: &RpParams, now: SimTime) -> RpOutput {
        if let Some(d) = &p.dcqcn {
            return self.dcqcn_timer(p, d, now);
        }
        // A frozen timer cannot expire (the caller cancelled it at `pause`).
        if !self.active || self.sonar_sf || self.paused {
            return RpOutput::NONE;
        }
        self.timer_scount = self.timer_scount.saturating_add(1);
        if p.one_cycle_counter {
            self.si_count = self.timer_scount;
        }
        let cr_before = self.cr;
        self.self_increase(p);
        let period = if self.timer_scount < p.frt {
            p.timer_ps
        } else {
            p.timer_after_frt_ps
        };
        let timer = self.arm_timer(p, now, period);
        RpOutput {
            timer,
            rate_changed: self.cr != cr_before,
        }
    }

    /// DCQCN: a CNP for this flow arrived (docs/models/dcqcn.md). Ignored by a QCN RP.
    ///
    /// ```text
    /// if inactive: allocate (CR = TR = line, counters 0), alpha = alpha_start, alpha timer
    ///     and decrease grid start now; with first_cnp_rate f: CR = TR = max(f*CR, MIN_RATE)
    /// else: bring alpha up to date; periodic alpha: note a CNP in this slot
    /// decrease_interval 0: decrease now (not on a first CNP with first_cnp_rate)
    /// else: if no decrease pending, one is due at the next grid point after now
    /// ```
    pub fn on_cnp(&mut self, p: &RpParams, now: SimTime) -> RpOutput {
        let (Some(d), Some(mut st)) = (&p.dcqcn, self.dc.take()) else {
            return RpOutput::NONE;
        };
        let cr_before = self.cr;
        let first = !self.active;
        if first {
            self.activate(p);
            *st = DcqcnState {
                alpha: d.alpha_start,
                alpha_t: if d.alpha_update == AlphaUpdate::Periodic {
                    now.saturating_add(d.alpha_interval_ps)
                } else {
                    now
                },
                alpha_flag: false,
                dec_deadline: None,
                dec_grid0: now,
            };
            self.timer_deadline = None;
            if let Some(f) = d.first_cnp_rate {
                self.cr = (self.cr * f).max(p.min_rate_bps);
                self.tr = self.cr;
            }
        } else {
            st.catch_up_alpha(d, now);
            if d.alpha_update == AlphaUpdate::Periodic {
                st.alpha_flag = true;
            }
        }
        if d.decrease_interval_ps == 0 {
            if !(first && d.first_cnp_rate.is_some()) {
                self.dcqcn_decrease(p, d, &mut st, now);
            }
        } else if st.dec_deadline.is_none() {
            let k = (now - st.dec_grid0) / d.decrease_interval_ps + 1;
            st.dec_deadline = Some(
                st.dec_grid0
                    .saturating_add(k.saturating_mul(d.decrease_interval_ps)),
            );
        }
        let timer = timer_cmd(self.timer_deadline, st.dec_deadline);
        self.dc = Some(st);
        RpOutput {
            timer,
            rate_changed: self.cr != cr_before,
        }
    }

    /// DCQCN's multiplicative decrease:
    ///
    /// ```text
    /// bring alpha up to date
    /// update_then_cut: alpha = (1-g)alpha + g
    /// if the clamp rule holds: TR = CR; reload the byte counter
    /// CR = max(CR*(1 - alpha/2), MIN_RATE)
    /// cut_then_update: alpha = (1-g)alpha + g
    /// alpha timer restarts (not periodic); si_count = timer_scount = 0; timer at now + T
    /// ```
    fn dcqcn_decrease(&mut self, p: &RpParams, d: &DcqcnRp, st: &mut DcqcnState, now: SimTime) {
        st.catch_up_alpha(d, now);
        if d.alpha_update == AlphaUpdate::UpdateThenCut {
            st.alpha = (1.0 - d.g) * st.alpha + d.g;
        }
        let clamp = match d.clamp {
            TargetClamp::Always => true,
            TargetClamp::ByteStage => self.si_count != 0,
            TargetClamp::TimeStage => self.timer_scount != 0,
            TargetClamp::AnyStage => self.si_count != 0 || self.timer_scount != 0,
        };
        if clamp {
            self.tr = self.cr;
            self.tx_bcount = self.byte_counter_reload(p, p.byte_counter_bytes);
        }
        self.cr = (self.cr * (1.0 - st.alpha / 2.0)).max(p.min_rate_bps);
        if d.alpha_update == AlphaUpdate::CutThenUpdate {
            st.alpha = (1.0 - d.g) * st.alpha + d.g;
        }
        if d.alpha_update != AlphaUpdate::Periodic {
            st.alpha_t = now;
        }
        self.si_count = 0;
        self.timer_scount = 0;
        self.arm_timer(p, now, p.timer_ps);
    }

    /// DCQCN: the caller's timer fired: the pending decrease if due (it restarts the increase
    /// timer), else the increase timer if due (QCN's timer cycle: timer_scount += 1, increase,
    /// re-arm with T, or T after FRT once timer_scount >= FRT).
    fn dcqcn_timer(&mut self, p: &RpParams, d: &DcqcnRp, now: SimTime) -> RpOutput {
        let Some(mut st) = self.dc.take() else {
            return RpOutput::NONE;
        };
        let cr_before = self.cr;
        if !self.active {
        } else if st.dec_deadline.is_some_and(|t| t <= now) {
            st.dec_deadline = None;
            self.dcqcn_decrease(p, d, &mut st, now);
        } else if self.timer_deadline.is_some_and(|t| t <= now) {
            self.timer_scount = self.timer_scount.saturating_add(1);
            self.self_increase(p);
            let period = if self.timer_scount < p.frt {
                p.timer_ps
            } else {
                p.timer_after_frt_ps
            };
            self.arm_timer(p, now, period);
        }
        let timer = if self.active {
            timer_cmd(self.timer_deadline, st.dec_deadline)
        } else {
            TimerCmd::Keep
        };
        self.dc = Some(st);
        RpOutput {
            timer,
            rate_changed: self.cr != cr_before,
        }
    }

    /// DCQCN's alpha as of its last update (it decays lazily: see [`Rp::on_cnp`]); 0 for a QCN
    /// RP.
    pub fn alpha(&self) -> f64 {
        self.dc.as_ref().map_or(0.0, |st| st.alpha)
    }

    /// DCQCN with a decrease interval: when the pending decrease happens.
    pub fn decrease_due(&self) -> Option<SimTime> {
        self.dc.as_ref().and_then(|st| st.dec_deadline)
    }

    /// A push-back message (Fb99: the CP saw Fb >= 0 while its bandwidth was not available)
    /// arrived: TR and CR unchanged, the stage counters selected by `fb99_step` go back one
    /// cycle (not below zero; with `one_cycle_counter` the one counter, whatever `fb99_step`),
    /// and the recovery timer restarts. Ignored while inactive and in
    /// the SONAR short fuse (when both schemes are on, the short fuse wins until the next CNM).
    pub fn on_fb99(&mut self, p: &RpParams, now: SimTime) -> RpOutput {
        if !self.active || self.sonar_sf {
            return RpOutput::NONE;
        }
        if p.one_cycle_counter || p.fb99_step != Fb99Step::Timer {
            self.si_count = self.si_count.saturating_sub(1);
        }
        if p.one_cycle_counter || p.fb99_step != Fb99Step::ByteCounter {
            self.timer_scount = self.timer_scount.saturating_sub(1);
        }
        let period = if self.timer_scount < p.frt {
            p.timer_ps
        } else {
            p.timer_after_frt_ps
        };
        RpOutput {
            timer: self.arm_timer(p, now, period),
            rate_changed: false,
        }
    }

    /// SONAR short fuse (the echo did not come back): the RP jumps to hyper-active increase
    /// (both stage counters FRT + 1) without changing CR or TR; from now on the ping timer
    /// drives the time-based increases ([`Rp::sonar_hai_tick`]), so the RP timer stops, and the
    /// byte counter reloads `sonar_byte_counter_bytes`. Ignored while inactive.
    pub fn sonar_short_fuse(&mut self, p: &RpParams) -> RpOutput {
        if !self.active {
            return RpOutput::NONE;
        }
        self.sonar_sf = true;
        self.si_count = self.si_count.max(p.frt + 1);
        self.timer_scount = self.timer_scount.max(p.frt + 1);
        self.timer_deadline = None;
        self.frozen_left = None;
        RpOutput {
            timer: TimerCmd::Cancel,
            rate_changed: false,
        }
    }

    /// One SF expiry of the ping timer in the short fuse: a timer cycle of HAI (timer_scount
    /// += 1, then the usual increase). Ignored unless in the short fuse, and while paused.
    pub fn sonar_hai_tick(&mut self, p: &RpParams) -> RpOutput {
        // while the link is paused the timer stage is frozen (the hardware study's paused RPs)
        if !(self.active && self.sonar_sf) || self.paused {
            return RpOutput::NONE;
        }
        self.timer_scount = self.timer_scount.saturating_add(1);
        if p.one_cycle_counter {
            self.si_count = self.timer_scount;
        }
        let cr_before = self.cr;
        self.self_increase(p);
        RpOutput {
            timer: TimerCmd::Keep,
            rate_changed: self.cr != cr_before,
        }
    }

    /// In the SONAR short fuse (see [`Rp::sonar_short_fuse`]).
    pub fn in_sonar_short_fuse(&self) -> bool {
        self.sonar_sf
    }

    /// The RP's link has been paused (PAUSE or PFC on its priority): freeze the timer. The
    /// caller stops the rate limiter (its tokens keep accumulating at CR). Pausing a paused RP
    /// does nothing.
    pub fn pause(&mut self, now: SimTime) -> RpOutput {
        if self.paused {
            return RpOutput::NONE;
        }
        self.paused = true;
        match self.timer_deadline.take() {
            Some(d) => {
                self.frozen_left = Some(d.saturating_sub(now));
                RpOutput {
                    timer: TimerCmd::Cancel,
                    rate_changed: false,
                }
            }
            None => RpOutput::NONE,
        }
    }

    /// The link resumed: a frozen timer runs on for the time it had left. Resuming an RP that
    /// is not paused does nothing.
    pub fn resume(&mut self, now: SimTime) -> RpOutput {
        if !self.paused {
            return RpOutput::NONE;
        }
        self.paused = false;
        match self.frozen_left.take() {
            Some(left) => {
                let deadline = now.saturating_add(left);
                self.timer_deadline = Some(deadline);
                RpOutput {
                    timer: TimerCmd::Arm(deadline),
                    rate_changed: false,
                }
            }
            None => RpOutput::NONE,
        }
    }

    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// While paused: the time the frozen timer will still run after the resume (None when no
    /// timer was running, or when not paused).
    pub fn frozen_timer_left(&self) -> Option<SimTime> {
        self.frozen_left
    }

    pub fn is_active(&self) -> bool {
        self.active
    }

    /// CR, bit/s; equal to the line rate while inactive.
    pub fn current_rate(&self) -> f64 {
        self.cr
    }

    /// TR, bit/s; equal to the line rate while inactive.
    pub fn target_rate(&self) -> f64 {
        self.tr
    }

    pub fn si_count(&self) -> u32 {
        self.si_count
    }

    pub fn timer_scount(&self) -> u32 {
        self.timer_scount
    }

    /// Bytes left in the current byte-counter cycle.
    pub fn tx_bcount(&self) -> f64 {
        self.tx_bcount
    }

    /// Deadline of the timer as last armed (None when never armed or cancelled). The timer is
    /// not cleared when it fires; the next `on_timer` re-arms it.
    pub fn timer_deadline(&self) -> Option<SimTime> {
        self.timer_deadline
    }

    pub fn stage(&self, p: &RpParams) -> RpStage {
        if !self.active {
            return RpStage::Inactive;
        }
        p.stage_gate
            .classify(p.frt, self.si_count, self.timer_scount)
            .0
    }

    // ---- internals ------------------------------------------------------------------------

    fn activate(&mut self, p: &RpParams) {
        self.active = true;
        self.sonar_sf = false;
        self.cr = p.line_rate_bps;
        self.tr = p.line_rate_bps;
        self.si_count = 0;
        self.timer_scount = 0;
        self.tx_bcount = self.byte_counter_reload(p, p.byte_counter_bytes);
    }

    /// A byte-counter reload of `bytes` (times U); without a byte counter the count never
    /// runs out. Draws one number either way.
    fn byte_counter_reload(&mut self, p: &RpParams, bytes: u64) -> f64 {
        let b = self.jittered(bytes as f64, p.jitter);
        if p.byte_counter_enabled {
            b
        } else {
            f64::INFINITY
        }
    }

    fn release(&mut self, p: &RpParams) {
        self.active = false;
        self.sonar_sf = false;
        self.cr = p.line_rate_bps;
        self.tr = p.line_rate_bps;
        self.si_count = 0;
        self.timer_scount = 0;
        self.tx_bcount = 0.0;
        self.timer_deadline = None;
        self.frozen_left = None;
        if let Some(dc) = self.dc.as_mut() {
            dc.dec_deadline = None;
            dc.alpha_flag = false;
        }
    }

    fn jittered(&mut self, x: f64, jitter: f64) -> f64 {
        x * self.rng.uniform(1.0 - jitter, 1.0 + jitter)
    }

    /// Arm the rate-increase timer at now + period*U; with `timer_enabled` off the RP has no
    /// timer (byte counter only) and the command is Cancel.
    fn arm_timer(&mut self, p: &RpParams, now: SimTime, period: SimTime) -> TimerCmd {
        if !p.timer_enabled {
            self.timer_deadline = None;
            return TimerCmd::Cancel;
        }
        let d = self.jittered(period as f64, p.jitter).round().max(1.0) as SimTime;
        if self.paused {
            // restarted frozen: the full period runs from the resume
            self.frozen_left = Some(d);
            self.timer_deadline = None;
            return TimerCmd::Keep;
        }
        let deadline = now.saturating_add(d);
        self.timer_deadline = Some(deadline);
        TimerCmd::Arm(deadline)
    }

    /// The increase at the end of a byte-counter or timer cycle (both counters already
    /// incremented by the caller).
    fn self_increase(&mut self, p: &RpParams) {
        let si = self.si_count;
        let ts = self.timer_scount;
        let ri = match p.stage_gate.classify(p.frt, si, ts) {
            (RpStage::HyperActiveIncrease, n) => match p.hai_mode {
                HaiMode::Multiplied => p.r_hai_bps * n as f64,
                HaiMode::Constant => p.r_hai_bps,
            },
            (RpStage::ActiveIncrease, _) => p.r_ai_bps,
            _ => 0.0,
        };
        let first_cycle = si == 1 || ts == 1;
        if p.target_rate_reduction && first_cycle && self.tr > p.trr_ratio * self.cr {
            self.tr /= p.trr_divisor;
        } else {
            self.tr += ri;
        }
        if p.cap_target_rate {
            self.tr = self.tr.min(p.line_rate_bps);
        }
        self.cr = ((self.cr + self.tr) / 2.0).min(p.line_rate_bps);
    }
}

/// DCQCN: the one caller timer carries both the increase timer and the pending decrease.
fn timer_cmd(inc: Option<SimTime>, dec: Option<SimTime>) -> TimerCmd {
    match (inc, dec) {
        (None, None) => TimerCmd::Cancel,
        (a, b) => TimerCmd::Arm(a.unwrap_or(SimTime::MAX).min(b.unwrap_or(SimTime::MAX))),
    }
}

impl DcqcnState {
    /// Apply the alpha timer's expiries up to `now` (inclusive): (1-g) per K since the last
    /// restart; periodic: the first grid point adds g if a CNP arrived in its slot.
    fn catch_up_alpha(&mut self, d: &DcqcnRp, now: SimTime) {
        let keep = 1.0 - d.g;
        let k = d.alpha_interval_ps;
        let pow = |n: u64| keep.powi(n.min(i32::MAX as u64) as i32);
        if d.alpha_update == AlphaUpdate::Periodic {
            if now < self.alpha_t {
                return;
            }
            let n = (now - self.alpha_t) / k + 1;
            self.alpha = keep * self.alpha + if self.alpha_flag { d.g } else { 0.0 };
            self.alpha_flag = false;
            if n > 1 {
                self.alpha *= pow(n - 1);
            }
            self.alpha_t = self.alpha_t.saturating_add(n.saturating_mul(k));
        } else {
            let n = now.saturating_sub(self.alpha_t) / k;
            if n > 0 {
                self.alpha *= pow(n);
                self.alpha_t += n * k;
            }
        }
    }
}

#[cfg(test)]
// Each rule is a table of wide (state before, input, state after) tuples, by design.
#[allow(clippy::type_complexity)]
mod tests {
    use super::*;
    use crate::engine::Rng;
    use crate::units::SEC;
    use proptest::prelude::*;

    const LINE: f64 = 10e9;
    const T: SimTime = 10 * MS;

    /// Standard parameters, 10 Gb/s, the reference experiments' 10 ms timer, no jitter.
    fn exact() -> RpParams {
        RpParams {
            timer_ps: T,
            timer_after_frt_ps: T / 2,
            jitter: 0.0,
            ..RpParams::standard(LINE)
        }
    }

    /// The RP state visible to the rules.
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct St {
        active: bool,
        cr: f64,
        tr: f64,
        tx_bcount: f64,
        si: u32,
        ts: u32,
    }

    impl St {
        fn active(cr: f64, tr: f64, si: u32, ts: u32) -> St {
            St {
                active: true,
                cr,
                tr,
                tx_bcount: 150_000.0,
                si,
                ts,
            }
        }
        fn inactive() -> St {
            St {
                active: false,
                cr: LINE,
                tr: LINE,
                tx_bcount: 0.0,
                si: 0,
                ts: 0,
            }
        }
        fn bc(self, tx_bcount: f64) -> St {
            St { tx_bcount, ..self }
        }
    }

    fn rp_in(p: &RpParams, s: St) -> Rp {
        let mut rp = Rp::new(p, Rng::from_seed(42));
        rp.active = s.active;
        rp.cr = s.cr;
        rp.tr = s.tr;
        rp.tx_bcount = s.tx_bcount;
        rp.si_count = s.si;
        rp.timer_scount = s.ts;
        rp
    }

    fn state(rp: &Rp) -> St {
        St {
            active: rp.active,
            cr: rp.cr,
            tr: rp.tr,
            tx_bcount: rp.tx_bcount,
            si: rp.si_count,
            ts: rp.timer_scount,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    fn assert_state(name: &str, got: St, want: St) {
        assert_eq!(got.active, want.active, "{name}: active");
        assert!(
            close(got.cr, want.cr),
            "{name}: CR {} want {}",
            got.cr,
            want.cr
        );
        assert!(
            close(got.tr, want.tr),
            "{name}: TR {} want {}",
            got.tr,
            want.tr
        );
        assert!(
            close(got.tx_bcount, want.tx_bcount),
            "{name}: tx_bcount {} want {}",
            got.tx_bcount,
            want.tx_bcount
        );
        assert_eq!(got.si, want.si, "{name}: si_count");
        assert_eq!(got.ts, want.ts, "{name}: timer_scount");
    }

    /// One input to the RP.
    #[derive(Debug, Clone, Copy)]
    enum In {
        Cnm(u8),
        Sent(u32, bool),
        Timer,
        Start,
        Fb99,
        ShortFuse,
        PingTick,
        Pause,
        Resume,
    }

    fn apply(rp: &mut Rp, p: &RpParams, now: SimTime, input: In) -> RpOutput {
        match input {
            In::Cnm(q) => rp.on_cnm(p, now, q),
            In::Sent(b, empty) => rp.on_frame_sent(p, now, b, empty),
            In::Timer => rp.on_timer(p, now),
            In::Start => rp.start(p, now),
            In::Fb99 => rp.on_fb99(p, now),
            In::ShortFuse => rp.sonar_short_fuse(p),
            In::PingTick => rp.sonar_hai_tick(p),
            In::Pause => rp.pause(now),
            In::Resume => rp.resume(now),
        }
    }

    const NOW: SimTime = 3 * MS;

    #[test]
    fn standard_params_are_the_mib_defaults() {
        let p = RpParams::standard(LINE);
        assert_eq!(p.line_rate_bps, LINE);
        assert_eq!(p.byte_counter_bytes, 150_000);
        assert_eq!(p.byte_counter_after_frt_bytes, 75_000);
        assert_eq!(p.timer_ps, 15 * MS);
        assert_eq!(p.timer_after_frt_ps, 7_500_000_000);
        assert_eq!(p.frt, 5);
        assert_eq!(p.r_ai_bps, 5e6);
        assert_eq!(p.r_hai_bps, 50e6);
        assert_eq!(p.gd, 1.0 / 128.0);
        assert_eq!(p.min_dec_factor, 0.5);
        assert_eq!(p.min_rate_bps, 5e6);
        assert_eq!(p.jitter, 0.15);
        assert!(p.target_rate_reduction);
        assert_eq!((p.trr_ratio, p.trr_divisor), (10.0, 8.0));
        assert!(p.cap_target_rate);
        assert!(p.extra_fast_recovery);
        assert_eq!(p.hai_mode, HaiMode::Multiplied);
        assert!(p.release_at_line_rate);
        assert!(!p.start_active);
        assert!(p.validate().is_ok());
    }

    #[test]
    fn params_validation_rejects_bad_values() {
        let s = RpParams::standard(LINE);
        #[rustfmt::skip]
        let cases: &[(&str, RpParams, bool)] = &[
            ("standard", s.clone(), true),
            ("zero line rate", RpParams { line_rate_bps: 0.0, ..s.clone() }, false),
            ("min rate above line", RpParams { min_rate_bps: 2.0 * LINE, ..s.clone() }, false),
            ("zero min rate", RpParams { min_rate_bps: 0.0, ..s.clone() }, false),
            ("negative R_AI", RpParams { r_ai_bps: -1.0, ..s.clone() }, false),
            ("min dec 0", RpParams { min_dec_factor: 0.0, ..s.clone() }, false),
            ("min dec 1", RpParams { min_dec_factor: 1.0, ..s.clone() }, true),
            ("jitter 1", RpParams { jitter: 1.0, ..s.clone() }, false),
            ("zero BC", RpParams { byte_counter_bytes: 0, ..s.clone() }, false),
            ("zero T/2", RpParams { timer_after_frt_ps: 0, ..s.clone() }, false),
            ("zero trr divisor", RpParams { trr_divisor: 0.0, ..s.clone() }, false),
        ];
        for (name, p, ok) in cases {
            assert_eq!(p.validate().is_ok(), *ok, "{name}: {:?}", p.validate());
        }
    }

    #[test]
    fn new_rp_is_inactive_at_line_rate_unless_start_active() {
        // (name, start_active, expected after new, expected start() output, state after start)
        let p_off = exact();
        let p_on = RpParams {
            start_active: true,
            ..exact()
        };
        let on = St::active(LINE, LINE, 0, 0);
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, St, RpOutput)] = &[
            ("allocated on first CNM", &p_off, St::inactive(), RpOutput::NONE),
            ("active from the start, timer armed", &p_on, on, RpOutput { timer: TimerCmd::Arm(NOW + T), rate_changed: false }),
        ];
        for (name, p, want, out) in cases {
            let mut rp = Rp::new(p, Rng::from_seed(1));
            assert_state(name, state(&rp), *want);
            assert_eq!(rp.current_rate(), LINE, "{name}");
            assert_eq!(rp.start(p, NOW), *out, "{name}");
            assert_state(name, state(&rp), *want);
        }
    }

    #[test]
    fn start_rate_sets_cr_and_tr_of_a_rate_limiter_active_from_the_start() {
        // (name, start_active, start_rate, state after new: CR = TR, active)
        #[rustfmt::skip]
        let cases: &[(&str, bool, Option<f64>, St)] = &[
            ("default: line rate, inactive", false, None, St::inactive()),
            ("active, no start rate: line", true, None, St::active(LINE, LINE, 0, 0)),
            ("active at the fair share", true, Some(LINE / 10.0), St::active(LINE / 10.0, LINE / 10.0, 0, 0)),
            ("active at the minimum rate", true, Some(5e6), St::active(5e6, 5e6, 0, 0)),
            ("above the line rate: capped", true, Some(2.0 * LINE), St::active(LINE, LINE, 0, 0)),
        ];
        for (name, active, rate, want) in cases {
            let p = RpParams {
                start_active: *active,
                start_rate_bps: *rate,
                ..exact()
            };
            let mut rp = Rp::new(&p, Rng::from_seed(1));
            assert_state(name, state(&rp), *want);
            let out = rp.start(&p, NOW);
            let timer = if *active {
                TimerCmd::Arm(NOW + T)
            } else {
                TimerCmd::Keep
            };
            assert_eq!(
                out,
                RpOutput {
                    timer,
                    rate_changed: false
                },
                "{name}"
            );
            // the first CNM decreases from the start rate (no re-activation at line rate)
            if *active {
                rp.on_cnm(&p, NOW, 32);
                let cr = want.cr * (1.0 - 32.0 / 128.0);
                assert_eq!(
                    rp.current_rate(),
                    cr.max(p.min_rate_bps),
                    "{name}: first CNM"
                );
            }
        }
    }

    #[test]
    fn start_rate_below_min_rate_is_rejected() {
        #[rustfmt::skip]
        let cases: &[(&str, Option<f64>, bool)] = &[
            ("unset", None, true),
            ("at min rate", Some(5e6), true),
            ("below min rate", Some(4e6), false),
            ("not a number", Some(f64::NAN), false),
        ];
        for (name, r, ok) in cases {
            let p = RpParams {
                start_active: true,
                start_rate_bps: *r,
                ..RpParams::standard(LINE)
            };
            assert_eq!(p.validate().is_ok(), *ok, "{name}: {:?}", p.validate());
        }
    }

    #[test]
    fn cnm_with_zero_feedback_is_ignored() {
        let p = exact();
        #[rustfmt::skip]
        let cases: &[(&str, St)] = &[
            ("inactive stays inactive", St::inactive()),
            ("active state untouched", St::active(3e9, 6e9, 3, 2).bc(1234.0)),
        ];
        for (name, before) in cases {
            let mut rp = rp_in(&p, *before);
            assert_eq!(rp.on_cnm(&p, NOW, 0), RpOutput::NONE, "{name}");
            assert_state(name, state(&rp), *before);
            assert_eq!(rp.timer_deadline(), None, "{name}");
        }
    }

    #[test]
    fn first_cnm_activates_rate_limiter_at_line_rate_then_decreases() {
        let p = exact();
        // (qntzFb, expected CR after); TR = line, counters 0, BC full, timer armed at now + T.
        #[rustfmt::skip]
        let cases: &[(u8, f64)] = &[
            (1, LINE * (1.0 - 1.0 / 128.0)),
            (11, LINE * (1.0 - 11.0 / 128.0)),
            (32, LINE * (1.0 - 32.0 / 128.0)),
            (63, LINE * (1.0 - 63.0 / 128.0)),
        ];
        for (q, cr) in cases {
            let name = format!("qntzFb {q}");
            let mut rp = rp_in(&p, St::inactive());
            let out = rp.on_cnm(&p, NOW, *q);
            assert_eq!(
                out,
                RpOutput {
                    timer: TimerCmd::Arm(NOW + T),
                    rate_changed: true
                },
                "{name}"
            );
            assert_state(&name, state(&rp), St::active(*cr, LINE, 0, 0).bc(150_000.0));
            assert_eq!(rp.stage(&p), RpStage::FastRecovery, "{name}");
        }
    }

    #[test]
    fn cnm_decrease_with_min_decrease_clamp_and_min_rate() {
        let std = exact();
        // gd 1/64, min_dec 0.7: 1 - q/64 < 0.7 for q > 19.2, so the clamp binds from q = 20.
        let clamp = RpParams {
            gd: 1.0 / 64.0,
            min_dec_factor: 0.7,
            ..exact()
        };
        // (name, params, CR before, qntzFb, CR after)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, f64, u8, f64)] = &[
            ("standard cut 63/128 (clamp 0.5 never binds)", &std, 4e9, 63, 4e9 * 65.0 / 128.0),
            ("standard small cut", &std, 4e9, 8, 4e9 * 120.0 / 128.0),
            ("clamp not binding at q=19", &clamp, 1e9, 19, 1e9 * (1.0 - 19.0 / 64.0)),
            ("clamp binds at q=20", &clamp, 1e9, 20, 0.7e9),
            ("clamp binds at q=63", &clamp, 1e9, 63, 0.7e9),
            ("min rate floor", &std, 8e6, 63, 5e6),
            ("just above min rate", &std, 10e6, 63, 10e6 * 65.0 / 128.0),
            ("already at min rate stays", &std, 5e6, 30, 5e6),
            ("clamp and min rate: min rate wins", &clamp, 6e6, 63, 5e6),
        ];
        for (name, p, cr, q, want) in cases {
            let mut rp = rp_in(p, St::active(*cr, 9e9, 2, 2));
            let out = rp.on_cnm(p, NOW, *q);
            assert!(
                close(rp.current_rate(), *want),
                "{name}: {}",
                rp.current_rate()
            );
            assert_eq!(out.rate_changed, !close(*cr, *want), "{name}");
        }
    }

    #[test]
    fn cnm_resets_stage_counters_and_always_restarts_timer() {
        let p = exact();
        // (name, si, ts) before; after: both 0, timer at now + T (full T even after FRT).
        #[rustfmt::skip]
        let cases: &[(&str, u32, u32)] = &[
            ("first FR cycle", 0, 0),
            ("FR", 3, 1),
            ("AI by bytes", 7, 2),
            ("AI by timer", 0, 9),
            ("HAI", 12, 8),
        ];
        for (name, si, ts) in cases {
            let mut rp = rp_in(&p, St::active(2e9, 5e9, *si, *ts));
            rp.timer_deadline = Some(NOW + 1);
            let out = rp.on_cnm(&p, NOW, 10);
            assert_eq!(out.timer, TimerCmd::Arm(NOW + T), "{name}");
            assert_eq!(rp.timer_deadline(), Some(NOW + T), "{name}");
            assert_eq!((rp.si_count(), rp.timer_scount()), (0, 0), "{name}");
            assert_eq!(rp.stage(&p), RpStage::FastRecovery, "{name}");
        }
    }

    #[test]
    fn extra_fast_recovery_keeps_target_rate_in_first_cycle() {
        let on = exact();
        let off = RpParams {
            extra_fast_recovery: false,
            ..exact()
        };
        let cr = 4e9;
        let cut = cr * (1.0 - 16.0 / 128.0);
        // (name, params, si before, ts before, expected TR after, expected tx_bcount after)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, u32, u32, f64, f64)] = &[
            ("on, si 0: TR and BC kept", &on, 0, 0, 8e9, 1234.0),
            ("on, si 0 even after timer cycles: kept", &on, 0, 3, 8e9, 1234.0),
            ("on, si 1: TR <- CR, BC reloaded", &on, 1, 0, cr, 150_000.0),
            ("on, si 7: TR <- CR, BC reloaded full", &on, 7, 7, cr, 150_000.0),
            ("off, si 0: TR <- CR, BC reloaded", &off, 0, 0, cr, 150_000.0),
            ("off, si 4: TR <- CR, BC reloaded", &off, 4, 1, cr, 150_000.0),
        ];
        for (name, p, si, ts, tr, bc) in cases {
            let mut rp = rp_in(p, St::active(cr, 8e9, *si, *ts).bc(1234.0));
            rp.on_cnm(p, NOW, 16);
            assert_state(name, state(&rp), St::active(cut, *tr, 0, 0).bc(*bc));
        }
    }

    #[test]
    fn byte_counter_cycle_completes_when_count_goes_below_zero() {
        let p = exact();
        // (name, tx_bcount before, frame bytes, cycle completed?, tx_bcount after)
        #[rustfmt::skip]
        let cases: &[(&str, f64, u32, bool, f64)] = &[
            ("partial", 10_000.0, 1_500, false, 8_500.0),
            ("reaching exactly 0 is not a cycle", 1_500.0, 1_500, false, 0.0),
            ("one byte below 0 completes", 1_500.0, 1_501, true, 150_000.0),
            ("from 0 any byte completes", 0.0, 64, true, 150_000.0),
            ("remainder is not carried over", 100.0, 9_000, true, 150_000.0),
        ];
        for (name, bc, bytes, done, bc_after) in cases {
            let mut rp = rp_in(&p, St::active(1e9, 2e9, 2, 2).bc(*bc));
            let out = rp.on_frame_sent(&p, NOW, *bytes, false);
            let want_si = if *done { 3 } else { 2 };
            assert_eq!(rp.si_count(), want_si, "{name}");
            assert!(
                close(rp.tx_bcount(), *bc_after),
                "{name}: {}",
                rp.tx_bcount()
            );
            assert_eq!(
                out.timer,
                TimerCmd::Keep,
                "{name}: frames never touch the timer"
            );
            assert_eq!(out.rate_changed, *done, "{name}");
        }
    }

    #[test]
    fn byte_counter_reload_halved_from_frt_th_cycle() {
        let p = exact();
        // (si before, si after, reload)
        #[rustfmt::skip]
        let cases: &[(u32, u32, f64)] = &[
            (0, 1, 150_000.0),
            (1, 2, 150_000.0),
            (3, 4, 150_000.0),
            (4, 5, 75_000.0), // the FRT-th completed cycle already reloads BC/2
            (5, 6, 75_000.0),
            (10, 11, 75_000.0),
        ];
        for (si, si_after, reload) in cases {
            let mut rp = rp_in(&p, St::active(1e9, 2e9, *si, 0).bc(0.0));
            rp.on_frame_sent(&p, NOW, 1, false);
            assert_eq!(rp.si_count(), *si_after);
            assert!(
                close(rp.tx_bcount(), *reload),
                "si {si}: {}",
                rp.tx_bcount()
            );
        }
    }

    #[test]
    fn timer_reload_halved_from_frt_th_cycle() {
        let p = exact();
        // (ts before, ts after, period of the re-armed timer)
        #[rustfmt::skip]
        let cases: &[(u32, u32, SimTime)] = &[
            (0, 1, T),
            (1, 2, T),
            (3, 4, T),
            (4, 5, T / 2), // the FRT-th expiry already re-arms T/2
            (5, 6, T / 2),
            (20, 21, T / 2),
        ];
        for (ts, ts_after, period) in cases {
            let mut rp = rp_in(&p, St::active(1e9, 2e9, 0, *ts));
            let out = rp.on_timer(&p, NOW);
            assert_eq!(rp.timer_scount(), *ts_after);
            assert_eq!(out.timer, TimerCmd::Arm(NOW + period), "ts {ts}");
            assert_eq!(rp.timer_deadline(), Some(NOW + period));
        }
    }

    #[test]
    fn reloads_use_their_own_configured_after_frt_values() {
        let p = RpParams {
            byte_counter_after_frt_bytes: 20_000,
            timer_after_frt_ps: 2 * MS,
            ..exact()
        };
        let mut rp = rp_in(&p, St::active(1e9, 2e9, 4, 4).bc(0.0));
        rp.on_frame_sent(&p, NOW, 1, false);
        assert!(close(rp.tx_bcount(), 20_000.0));
        // The timer's reload depends on timer_scount only (4 -> 5), not on si_count.
        assert_eq!(rp.on_timer(&p, NOW).timer, TimerCmd::Arm(NOW + 2 * MS));
        // And a low timer_scount keeps the full T even when si_count is past FRT.
        let mut rp = rp_in(&p, St::active(1e9, 2e9, 9, 0));
        assert_eq!(rp.on_timer(&p, NOW).timer, TimerCmd::Arm(NOW + T));
    }

    #[test]
    fn stage_classification_at_frt_boundaries() {
        let p = exact();
        #[rustfmt::skip]
        let cases: &[(u32, u32, RpStage)] = &[
            (0, 0, RpStage::FastRecovery),
            (5, 0, RpStage::FastRecovery),
            (0, 5, RpStage::FastRecovery),
            (5, 5, RpStage::FastRecovery),
            (6, 5, RpStage::ActiveIncrease),
            (5, 6, RpStage::ActiveIncrease),
            (6, 0, RpStage::ActiveIncrease),
            (0, 30, RpStage::ActiveIncrease),
            (6, 6, RpStage::HyperActiveIncrease),
            (8, 7, RpStage::HyperActiveIncrease),
        ];
        for (si, ts, want) in cases {
            let rp = rp_in(&p, St::active(1e9, 2e9, *si, *ts));
            assert_eq!(rp.stage(&p), *want, "si {si} ts {ts}");
        }
        assert_eq!(rp_in(&p, St::inactive()).stage(&p), RpStage::Inactive);
    }

    #[test]
    fn increase_step_per_stage_at_frt_boundaries() {
        let p = exact();
        let constant = RpParams {
            hai_mode: HaiMode::Constant,
            ..exact()
        };
        let (cr, tr) = (1e9, 2e9);
        // Next frame completes a byte-counter cycle.
        let bc0 = |s: St| s.bc(0.0);
        // (name, params, si, ts before, input, si/ts after, expected Ri)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, u32, u32, In, (u32, u32), f64)] = &[
            ("FR at 1,0", &p, 0, 0, In::Sent(1, false), (1, 0), 0.0),
            ("FR at 5,5 (bytes)", &p, 4, 5, In::Sent(1, false), (5, 5), 0.0),
            ("FR at 5,5 (timer)", &p, 5, 4, In::Timer, (5, 5), 0.0),
            ("AI at 6,5", &p, 5, 5, In::Sent(1, false), (6, 5), 5e6),
            ("AI at 5,6", &p, 5, 5, In::Timer, (5, 6), 5e6),
            ("AI at 6,0", &p, 5, 0, In::Sent(1, false), (6, 0), 5e6),
            ("AI at 0,9", &p, 0, 8, In::Timer, (0, 9), 5e6),
            ("HAI at 6,6: R_HAI*1", &p, 6, 5, In::Timer, (6, 6), 50e6),
            ("HAI at 8,7: R_HAI*2", &p, 7, 7, In::Sent(1, false), (8, 7), 100e6),
            ("HAI at 8,7 by timer: R_HAI*2", &p, 8, 6, In::Timer, (8, 7), 100e6),
            ("HAI at 10,12: R_HAI*5", &p, 10, 11, In::Timer, (10, 12), 250e6),
            ("constant HAI at 6,6", &constant, 6, 5, In::Timer, (6, 6), 50e6),
            ("constant HAI at 8,7", &constant, 7, 7, In::Sent(1, false), (8, 7), 50e6),
            ("constant HAI at 10,12", &constant, 10, 11, In::Timer, (10, 12), 50e6),
            ("constant mode leaves AI alone", &constant, 5, 5, In::Timer, (5, 6), 5e6),
        ];
        for (name, p, si, ts, input, (si2, ts2), ri) in cases {
            let mut rp = rp_in(p, bc0(St::active(cr, tr, *si, *ts)));
            let out = apply(&mut rp, p, NOW, *input);
            let want_tr = tr + ri;
            let want_cr = (cr + want_tr) / 2.0;
            let got = state(&rp);
            assert_eq!((got.si, got.ts), (*si2, *ts2), "{name}");
            assert!(
                close(got.tr, want_tr),
                "{name}: TR {} want {want_tr}",
                got.tr
            );
            assert!(
                close(got.cr, want_cr),
                "{name}: CR {} want {want_cr}",
                got.cr
            );
            assert!(out.rate_changed, "{name}");
        }
    }

    #[test]
    fn stage_gate_classification() {
        use RpStage::{ActiveIncrease as AI, FastRecovery as FR, HyperActiveIncrease as HAI};
        // (si, ts) -> (stage, n) for each gate, FRT = 5
        #[rustfmt::skip]
        let cases: &[(u32, u32, (RpStage, u32), (RpStage, u32), (RpStage, u32))] = &[
            //  si  ts   both        byte_counter  either
            (0, 0,   (FR, 0),    (FR, 0),     (FR, 0)),
            (5, 5,   (FR, 0),    (FR, 0),     (FR, 0)),
            (6, 0,   (AI, 0),    (HAI, 1),    (HAI, 1)),
            (9, 2,   (AI, 0),    (HAI, 4),    (HAI, 4)),
            (0, 6,   (AI, 0),    (AI, 0),     (HAI, 1)),
            (5, 8,   (AI, 0),    (AI, 0),     (HAI, 3)),
            (6, 6,   (HAI, 1),   (HAI, 1),    (HAI, 1)),
            (8, 7,   (HAI, 2),   (HAI, 3),    (HAI, 3)),
            (7, 12,  (HAI, 2),   (HAI, 2),    (HAI, 7)),
        ];
        for (si, ts, both, bytes, either) in cases {
            for (gate, want) in [
                (StageGate::Both, both),
                (StageGate::ByteCounter, bytes),
                (StageGate::Either, either),
            ] {
                assert_eq!(
                    gate.classify(5, *si, *ts),
                    *want,
                    "{} si {si} ts {ts}",
                    gate.name()
                );
                let p = RpParams {
                    stage_gate: gate,
                    ..exact()
                };
                let rp = rp_in(&p, St::active(1e9, 2e9, *si, *ts));
                assert_eq!(rp.stage(&p), want.0, "{} si {si} ts {ts}", gate.name());
            }
        }
    }

    #[test]
    fn stage_gate_sets_the_increase_step() {
        let gate = |g| RpParams {
            stage_gate: g,
            ..exact()
        };
        let (both, bytes, either) = (
            gate(StageGate::Both),
            gate(StageGate::ByteCounter),
            gate(StageGate::Either),
        );
        let (cr, tr) = (1e9, 2e9);
        // (name, params, si, ts before, input, expected Ri): the input completes a cycle
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, u32, u32, In, f64)] = &[
            ("both: bytes past FRT, timer not: AI", &both, 5, 2, In::Sent(1, false), 5e6),
            ("byte_counter: bytes past FRT: HAI n=1", &bytes, 5, 2, In::Sent(1, false), 50e6),
            ("byte_counter: bytes at 9: HAI n=4", &bytes, 8, 0, In::Sent(1, false), 200e6),
            ("byte_counter: timer past FRT only: AI", &bytes, 3, 7, In::Timer, 5e6),
            ("byte_counter: FR", &bytes, 3, 4, In::Timer, 0.0),
            ("either: timer past FRT: HAI n=3", &either, 3, 7, In::Timer, 150e6),
            ("either: bytes past FRT: HAI n=1", &either, 5, 0, In::Sent(1, false), 50e6),
            ("either: FR", &either, 4, 4, In::Sent(1, false), 0.0),
            ("both: HAI n=min-FRT", &both, 7, 9, In::Sent(1, false), 150e6),
            ("either: HAI n=max-FRT", &either, 7, 9, In::Sent(1, false), 200e6),
        ];
        for (name, p, si, ts, input, ri) in cases {
            let mut rp = rp_in(p, St::active(cr, tr, *si, *ts).bc(0.0));
            apply(&mut rp, p, NOW, *input);
            assert_increased(name, &rp, cr, tr, *ri);
        }
    }

    /// After a cycle end from (CR, TR): TR grew by `ri` and CR is the average of the two.
    fn assert_increased(name: &str, rp: &Rp, cr: f64, tr: f64, ri: f64) {
        let want_tr = tr + ri;
        assert!(
            close(rp.target_rate(), want_tr),
            "{name}: TR {} want {want_tr}",
            rp.target_rate()
        );
        assert!(close(rp.current_rate(), (cr + want_tr) / 2.0), "{name}: CR");
    }

    #[test]
    fn one_cycle_counter_advances_on_either_expiry_and_steps_back_on_fb99() {
        let one = RpParams {
            one_cycle_counter: true,
            ..exact()
        };
        // every Fb99 step rule gives the same with one counter
        let one_timer_step = RpParams {
            fb99_step: Fb99Step::Timer,
            ..one.clone()
        };
        let (cr, tr) = (1e9, 2e9);
        // (name, params, cycle before, input, cycle after, expected Ri, TR/CR change)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, u32, In, u32, f64, bool)] = &[
            ("byte counter: FR 1 -> 2", &one, 1, In::Sent(1, false), 2, 0.0, true),
            ("timer: FR 1 -> 2", &one, 1, In::Timer, 2, 0.0, true),
            ("byte counter: FR 5 -> HAI 6 (n=1)", &one, 5, In::Sent(1, false), 6, 50e6, true),
            ("timer: FR 5 -> HAI 6 (n=1)", &one, 5, In::Timer, 6, 50e6, true),
            ("timer: HAI 8 -> 9 (n=4)", &one, 8, In::Timer, 9, 200e6, true),
            ("Fb99: 7 -> 6, rates kept", &one, 7, In::Fb99, 6, 0.0, false),
            ("Fb99: 6 -> 5 (back in FR)", &one_timer_step, 6, In::Fb99, 5, 0.0, false),
            ("Fb99 at 0 stays 0", &one, 0, In::Fb99, 0, 0.0, false),
            ("CNM resets", &one, 9, In::Cnm(8), 0, 0.0, false),
        ];
        for (name, p, c, input, c2, ri, increase) in cases {
            let mut rp = rp_in(p, St::active(cr, tr, *c, *c).bc(0.0));
            apply(&mut rp, p, NOW, *input);
            assert_eq!((rp.si_count(), rp.timer_scount()), (*c2, *c2), "{name}");
            if *increase {
                assert_increased(name, &rp, cr, tr, *ri);
            } else if !matches!(input, In::Cnm(_)) {
                assert_eq!((rp.current_rate(), rp.target_rate()), (cr, tr), "{name}");
            }
        }
        // The two triggers keep their own reloads: a timer expiry does not restart the byte
        // counter, a byte-counter expiry does not re-arm the timer.
        let mut rp = rp_in(&one, St::active(cr, tr, 2, 2).bc(5_000.0));
        rp.on_timer(&one, NOW);
        assert_eq!(rp.tx_bcount(), 5_000.0);
        let out = rp.on_frame_sent(&one, NOW, 6_000, false);
        assert_eq!(out.timer, TimerCmd::Keep);
        assert_eq!((rp.si_count(), rp.timer_scount()), (4, 4));
        // Two counters (the default): the timer alone never moves si_count.
        let two = exact();
        let mut rp = rp_in(&two, St::active(cr, tr, 2, 2));
        rp.on_timer(&two, NOW);
        assert_eq!((rp.si_count(), rp.timer_scount()), (2, 3));
    }

    #[test]
    fn fast_recovery_averages_towards_target_rate() {
        // Five FR byte-counter cycles halve the CR-TR gap each time: 1/32 of it remains.
        let p = exact();
        let (cr0, tr) = (2e9, 6e9);
        let mut rp = rp_in(&p, St::active(cr0, tr, 0, 0).bc(0.0));
        let mut want = cr0;
        for cycle in 1..=5u32 {
            rp.tx_bcount = 0.0;
            let out = rp.on_frame_sent(&p, NOW, 1, false);
            want = (want + tr) / 2.0;
            assert!(out.rate_changed);
            assert_eq!(rp.si_count(), cycle);
            assert!(close(rp.current_rate(), want), "cycle {cycle}");
            assert_eq!(rp.target_rate(), tr, "FR never changes TR");
            assert_eq!(rp.stage(&p), RpStage::FastRecovery);
        }
        assert!(close(tr - rp.current_rate(), (tr - cr0) / 32.0));
    }

    #[test]
    fn target_rate_reduction_in_first_cycle_after_cnm() {
        let on = exact();
        let off = RpParams {
            target_rate_reduction: false,
            ..exact()
        };
        // (name, params, CR, TR, si, ts before, input, TR after, CR after)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, f64, f64, u32, u32, In, f64, f64)] = &[
            ("on: TR > 10 CR at first BC cycle -> TR/8", &on, 0.5e9, 8e9, 0, 0, In::Sent(1, false), 1e9, 0.75e9),
            ("on: TR > 10 CR at first timer cycle -> TR/8", &on, 0.5e9, 8e9, 0, 0, In::Timer, 1e9, 0.75e9),
            ("on: timer first cycle while si already 3", &on, 0.5e9, 8e9, 3, 0, In::Timer, 1e9, 0.75e9),
            ("on: TR == 10 CR is not reduced (strict >)", &on, 0.5e9, 5e9, 0, 0, In::Sent(1, false), 5e9, 2.75e9),
            ("on: not the first cycle -> no reduction", &on, 0.5e9, 8e9, 1, 2, In::Sent(1, false), 8e9, 4.25e9),
            ("off: never reduced", &off, 0.5e9, 8e9, 0, 0, In::Sent(1, false), 8e9, 4.25e9),
            ("on: first cycle but AI: TR += R_AI when not > 10 CR", &on, 1e9, 2e9, 0, 6, In::Sent(1, false), 2.005e9, 1.5025e9),
        ];
        for (name, p, cr, tr, si, ts, input, tr2, cr2) in cases {
            let mut rp = rp_in(p, St::active(*cr, *tr, *si, *ts).bc(0.0));
            apply(&mut rp, p, NOW, *input);
            assert!(
                close(rp.target_rate(), *tr2),
                "{name}: TR {}",
                rp.target_rate()
            );
            assert!(
                close(rp.current_rate(), *cr2),
                "{name}: CR {}",
                rp.current_rate()
            );
        }
    }

    /// Seed 003 ("QCN: stably improving transient response", slide "Rules for changing TR and
    /// CR"): during FR1 "CR goes down with every Fb < 0 signal, TR remains unchanged"; "at the
    /// end of the FR1, if TR > 10*CR then TR <- TR/8; CR <- (TR + CR)/2". A rate drop seen as a
    /// burst of k CNMs within FR1 (the first one, in AI, sets TR <- CR = 1 Gb/s): at the end of
    /// FR1 target-rate reduction divides TR by 8 exactly when the burst took CR below TR/10, and
    /// the first CNM after FR1 then starts from that TR (TR <- CR). The RP timer is off, as in
    /// og-hotspot-10src ("drift timer disabled"), so FR1 ends at the byte counter.
    #[test]
    fn target_rate_reduction_after_a_burst_of_cnms_at_a_rate_drop() {
        let on = RpParams {
            timer_enabled: false,
            ..exact()
        };
        let off = RpParams {
            target_rate_reduction: false,
            ..on.clone()
        };
        let r0 = 1e9;
        // (name, params, qntzFb of every CNM of the burst, CNMs in FR1, TRR fires at FR1's end)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, u8, u32, bool)] = &[
            ("on: one saturated CNM (CR = 0.51 TR)", &on, 63, 1, false),
            ("on: three (CR = 0.13 TR)", &on, 63, 3, false),
            ("on: four (CR = 0.067 TR < TR/10)", &on, 63, 4, true),
            ("on: six", &on, 63, 6, true),
            ("on: eight 25 % cuts (CR = 0.1001 TR, not below TR/10)", &on, 32, 8, false),
            ("on: nine 25 % cuts (CR = 0.075 TR)", &on, 32, 9, true),
            ("off: four saturated", &off, 63, 4, false),
            ("off: six", &off, 63, 6, false),
        ];
        for (name, p, fb, k, fires) in cases {
            // in AI at 1 Gb/s (si past FRT, timer stage 0), mid-cycle
            let mut rp = rp_in(p, St::active(r0, r0, 6, 0).bc(40_000.0));
            for _ in 0..*k {
                apply(&mut rp, p, NOW, In::Cnm(*fb));
            }
            let factor = (1.0 - p.gd * *fb as f64).max(p.min_dec_factor);
            let cr_k = r0 * factor.powi(*k as i32);
            assert!(
                close(rp.current_rate(), cr_k),
                "{name}: CR {}",
                rp.current_rate()
            );
            assert_eq!(rp.target_rate(), r0, "{name}: TR kept in FR1");
            assert_eq!(rp.si_count(), 0, "{name}");
            // the end of FR1: the byte counter (reloaded to 150 KB by the first CNM) runs out
            apply(&mut rp, p, NOW, In::Sent(150_001, false));
            assert_eq!(rp.si_count(), 1, "{name}");
            let tr1 = if *fires { r0 / 8.0 } else { r0 };
            assert!(
                close(rp.target_rate(), tr1),
                "{name}: TR {}",
                rp.target_rate()
            );
            assert!(
                close(rp.current_rate(), (cr_k + tr1) / 2.0),
                "{name}: CR {}",
                rp.current_rate()
            );
            // the first CNM after FR1 (FR2): TR <- CR, then the cut
            let cr1 = rp.current_rate();
            apply(&mut rp, p, NOW, In::Cnm(*fb));
            assert!(
                close(rp.target_rate(), cr1),
                "{name}: TR after the next CNM"
            );
            assert!(close(rp.current_rate(), cr1 * factor), "{name}");
        }
    }

    #[test]
    fn target_rate_reduction_after_deep_cut_sequence() {
        // Several saturated CNMs during the first FR cycle keep TR = line (extra fast recovery)
        // while CR falls below line/10; the first completed cycle then divides TR by 8.
        let p = exact();
        let mut rp = Rp::new(&p, Rng::from_seed(1));
        for _ in 0..4 {
            rp.on_cnm(&p, NOW, 63);
        }
        let cr = LINE * (65.0f64 / 128.0).powi(4);
        assert!(close(rp.current_rate(), cr));
        assert_eq!(rp.target_rate(), LINE);
        assert!(LINE > 10.0 * cr);
        rp.on_timer(&p, NOW + T);
        assert!(close(rp.target_rate(), LINE / 8.0));
        assert!(close(rp.current_rate(), (cr + LINE / 8.0) / 2.0));
    }

    #[test]
    fn target_rate_cap_option() {
        let cap = exact();
        let nocap = RpParams {
            cap_target_rate: false,
            ..exact()
        };
        // (name, params, CR, TR, si, ts before (next timer expiry increments ts), TR after, CR after)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, f64, f64, u32, u32, f64, f64)] = &[
            ("cap on, AI at line: TR stays line", &cap, LINE, LINE, 6, 4, LINE, LINE),
            ("cap off, AI at line: TR above line", &nocap, LINE, LINE, 6, 4, LINE + 5e6, LINE),
            ("cap on, HAI: TR clamped", &cap, 9.9e9, 9.95e9, 10, 9, LINE, (9.9e9 + LINE) / 2.0),
            ("cap off, HAI: TR grows, CR capped", &nocap, 9.99e9, 10.15e9, 10, 9, 10.4e9, LINE),
        ];
        for (name, p, cr, tr, si, ts, tr2, cr2) in cases {
            let mut rp = rp_in(p, St::active(*cr, *tr, *si, *ts));
            rp.on_timer(p, NOW);
            assert!(
                close(rp.target_rate(), *tr2),
                "{name}: TR {}",
                rp.target_rate()
            );
            assert!(
                close(rp.current_rate(), *cr2),
                "{name}: CR {}",
                rp.current_rate()
            );
            assert!(rp.current_rate() <= LINE, "{name}: CR above line");
        }
    }

    #[test]
    fn release_at_line_rate_only_with_empty_rl_queue() {
        let on = exact();
        let off = RpParams {
            release_at_line_rate: false,
            ..exact()
        };
        // (name, params, CR, RL queue empty, released?)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, f64, bool, bool)] = &[
            ("CR at line, queue empty: released", &on, LINE, true, true),
            ("CR at line, queue busy: kept", &on, LINE, false, false),
            ("CR just below line: kept", &on, LINE - 1.0, true, false),
            ("option off: kept", &off, LINE, true, false),
        ];
        for (name, p, cr, empty, released) in cases {
            let before = St::active(*cr, LINE, 7, 8).bc(50_000.0);
            let mut rp = rp_in(p, before);
            rp.timer_deadline = Some(NOW + T);
            let out = rp.on_frame_sent(p, NOW, 1_500, *empty);
            if *released {
                assert_eq!(
                    out,
                    RpOutput {
                        timer: TimerCmd::Cancel,
                        rate_changed: false
                    },
                    "{name}"
                );
                assert_state(name, state(&rp), St::inactive());
                assert_eq!(rp.stage(p), RpStage::Inactive, "{name}");
                assert_eq!(rp.timer_deadline(), None, "{name}");
            } else {
                assert_eq!(out.timer, TimerCmd::Keep, "{name}");
                assert_state(name, state(&rp), before.bc(48_500.0));
            }
        }
    }

    #[test]
    fn release_works_because_cr_is_clamped_to_line() {
        // With TR above line (cap off), averaging overshoots line; the clamp makes CR == line
        // exactly, so the >= test releases on the next transmit.
        let p = RpParams {
            cap_target_rate: false,
            ..exact()
        };
        let mut rp = rp_in(&p, St::active(LINE - 1e6, LINE + 5e6, 6, 3));
        rp.on_timer(&p, NOW);
        assert_eq!(rp.current_rate(), LINE);
        let out = rp.on_frame_sent(&p, NOW, 1_500, true);
        assert_eq!(out.timer, TimerCmd::Cancel);
        assert!(!rp.is_active());
        // With the cap on, averaging towards TR = line converges to line exactly in f64 and the
        // RL is released too.
        let p = exact();
        let mut rp = rp_in(&p, St::active(1e9, LINE, 6, 6));
        let mut t = NOW;
        for _ in 0..200 {
            if rp.on_frame_sent(&p, t, 1_500, true).timer == TimerCmd::Cancel {
                break;
            }
            t += T;
            rp.on_timer(&p, t);
        }
        assert!(!rp.is_active(), "CR {}", rp.current_rate());
    }

    #[test]
    fn released_rp_reactivates_with_fresh_state_on_next_cnm() {
        let p = exact();
        let mut rp = rp_in(&p, St::active(LINE, LINE, 9, 9));
        rp.on_frame_sent(&p, NOW, 1_500, true);
        assert!(!rp.is_active());
        let out = rp.on_cnm(&p, NOW + MS, 20);
        assert_eq!(out.timer, TimerCmd::Arm(NOW + MS + T));
        assert_state(
            "reactivated",
            state(&rp),
            St::active(LINE * (1.0 - 20.0 / 128.0), LINE, 0, 0),
        );
    }

    #[test]
    fn timer_armed_on_cnm_and_rearmed_on_each_expiry() {
        let p = exact();
        let mut rp = Rp::new(&p, Rng::from_seed(7));
        let t0 = 100 * MS;
        let mut t = t0;
        let out = rp.on_cnm(&p, t, 30);
        assert_eq!(out.timer, TimerCmd::Arm(t + T));
        // Expiries 1..=4 re-arm T; from the 5th on, T/2.
        let periods = [T, T, T, T, T / 2, T / 2, T / 2];
        for (i, period) in periods.iter().enumerate() {
            t = rp.timer_deadline().unwrap();
            let out = rp.on_timer(&p, t);
            assert_eq!(rp.timer_scount(), i as u32 + 1);
            assert_eq!(out.timer, TimerCmd::Arm(t + period), "expiry {}", i + 1);
        }
        assert_eq!(t, t0 + 5 * T + 2 * (T / 2));
        // A CNM resets the period to T.
        let out = rp.on_cnm(&p, t + 1, 5);
        assert_eq!(out.timer, TimerCmd::Arm(t + 1 + T));
    }

    #[test]
    fn inactive_rp_ignores_timer_and_frames() {
        let p = exact();
        #[rustfmt::skip]
        let inputs: &[(&str, In)] = &[
            ("timer", In::Timer),
            ("frame, queue empty", In::Sent(1_500, true)),
            ("frame, queue busy", In::Sent(1_500, false)),
            ("huge frame", In::Sent(u32::MAX, false)),
            ("start without start_active", In::Start),
            ("zero CNM", In::Cnm(0)),
        ];
        for (name, input) in inputs {
            let mut rp = rp_in(&p, St::inactive());
            let out = apply(&mut rp, &p, NOW, *input);
            assert_eq!(out, RpOutput::NONE, "{name}");
            assert_state(name, state(&rp), St::inactive());
            assert_eq!(rp.current_rate(), LINE, "{name}");
        }
    }

    #[test]
    fn rate_changed_flag_tracks_cr() {
        let p = exact();
        // (name, state, input, rate_changed)
        #[rustfmt::skip]
        let cases: &[(&str, St, In, bool)] = &[
            ("CNM cut", St::active(2e9, 4e9, 2, 2), In::Cnm(10), true),
            ("CNM at min rate", St::active(5e6, 4e9, 2, 2), In::Cnm(10), false),
            ("frame inside a cycle", St::active(2e9, 4e9, 2, 2), In::Sent(100, false), false),
            ("cycle end, CR < TR", St::active(2e9, 4e9, 2, 2).bc(0.0), In::Sent(1, false), true),
            ("cycle end, CR == TR in FR", St::active(2e9, 2e9, 2, 2).bc(0.0), In::Sent(1, false), false),
            ("timer, CR == TR in FR", St::active(2e9, 2e9, 2, 2), In::Timer, false),
            ("timer, CR < TR", St::active(2e9, 3e9, 2, 2), In::Timer, true),
            ("timer at line in AI with cap", St::active(LINE, LINE, 7, 2), In::Timer, false),
        ];
        for (name, s, input, changed) in cases {
            let mut rp = rp_in(&p, *s);
            let out = apply(&mut rp, &p, NOW, *input);
            assert_eq!(out.rate_changed, *changed, "{name}");
            assert_eq!(out.rate_changed, rp.current_rate() != s.cr, "{name}");
        }
    }

    #[test]
    fn reloads_with_jitter_lie_within_15_percent_and_vary() {
        let p = RpParams {
            timer_ps: T,
            timer_after_frt_ps: T / 2,
            ..RpParams::standard(LINE)
        };
        assert_eq!(p.jitter, 0.15);
        let mut bc = Vec::new();
        let mut bc_after = Vec::new();
        let mut periods = Vec::new();
        let mut periods_after = Vec::new();
        let mut cnm_periods = Vec::new();
        let mut rp = Rp::new(&p, Rng::from_seed(11));
        for i in 0..300u64 {
            let now = i * SEC;
            if let TimerCmd::Arm(d) = rp.on_cnm(&p, now, 40).timer {
                cnm_periods.push((d - now) as f64);
            }
            // Byte-counter reloads: si 0 -> 1 (BC) and, forced, 4 -> 5 (BC/2).
            rp.tx_bcount = 0.0;
            rp.on_frame_sent(&p, now, 1, false);
            bc.push(rp.tx_bcount());
            rp.si_count = 4;
            rp.tx_bcount = 0.0;
            rp.on_frame_sent(&p, now, 1, false);
            bc_after.push(rp.tx_bcount());
            // Timer reloads: ts 0 -> 1 (T) and 4 -> 5 (T/2).
            rp.timer_scount = 0;
            if let TimerCmd::Arm(d) = rp.on_timer(&p, now).timer {
                periods.push((d - now) as f64);
            }
            rp.timer_scount = 4;
            if let TimerCmd::Arm(d) = rp.on_timer(&p, now).timer {
                periods_after.push((d - now) as f64);
            }
        }
        let check = |name: &str, xs: &[f64], nominal: f64| {
            assert_eq!(xs.len(), 300, "{name}");
            let lo = xs.iter().cloned().fold(f64::INFINITY, f64::min);
            let hi = xs.iter().cloned().fold(0.0, f64::max);
            assert!(lo >= 0.85 * nominal - 1.0, "{name}: min {lo}");
            assert!(hi <= 1.15 * nominal + 1.0, "{name}: max {hi}");
            assert!(
                hi - lo > 0.2 * nominal,
                "{name}: too little spread {lo}..{hi}"
            );
        };
        check("BC", &bc, 150_000.0);
        check("BC after FRT", &bc_after, 75_000.0);
        check("T", &periods, T as f64);
        check("T after FRT", &periods_after, (T / 2) as f64);
        check("T on CNM", &cnm_periods, T as f64);
    }

    #[test]
    fn same_seed_same_trajectory() {
        let p = RpParams::standard(LINE);
        let run = |seed| {
            let mut rp = Rp::new(&p, Rng::from_seed(seed));
            let mut out = Vec::new();
            rp.on_cnm(&p, 0, 50);
            for i in 1..2_000u64 {
                let o = rp.on_frame_sent(&p, i * 1_000_000, 1_500, false);
                if i % 97 == 0 {
                    rp.on_timer(&p, i * 1_000_000);
                }
                out.push((o, rp.current_rate().to_bits(), rp.tx_bcount().to_bits()));
            }
            out
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }

    #[test]
    fn tr_cr_formulation_step_by_step() {
        // The transient-response proposals' TR/CR rules step by step, cap off (TR may exceed line),
        // TRR on.
        let p = RpParams {
            cap_target_rate: false,
            ..exact()
        };
        let mut rp = rp_in(&p, St::active(4e9, 6e9, 3, 0));
        // Fb < 0 during FR2 or later: back to FR1, TR <- CR, CR <- CR(1 - Gd|Fb|).
        rp.on_cnm(&p, NOW, 32);
        assert_state("ding in FR3", state(&rp), St::active(3e9, 4e9, 0, 0));
        // Fb < 0 during FR1: CR cut, TR unchanged.
        rp.on_cnm(&p, NOW, 32);
        assert_state("ding in FR1", state(&rp), St::active(2.25e9, 4e9, 0, 0));
        // End of FR1: TR > 10 CR? no (4 < 22.5): CR <- (CR + TR)/2, TR unchanged.
        rp.on_timer(&p, NOW);
        assert_state("end of FR1", state(&rp), St::active(3.125e9, 4e9, 0, 1));
        // End of an AI cycle: TR <- TR + R_AI, CR <- (CR + TR)/2.
        let mut rp = rp_in(&p, St::active(9e9, 9.99e9, 6, 3).bc(0.0));
        rp.on_frame_sent(&p, NOW, 1, false);
        assert!(close(rp.target_rate(), 9.995e9));
        assert!(close(rp.current_rate(), (9e9 + 9.995e9) / 2.0));
        // End of an HAI cycle: TR <- TR + R_HAI * cycle_cnt; TR may pass the line rate, CR not.
        let mut rp = rp_in(&p, St::active(9.9e9, 10.2e9, 8, 7));
        rp.on_timer(&p, NOW);
        assert!(close(rp.target_rate(), 10.2e9 + 3.0 * 50e6));
        assert_eq!(rp.current_rate(), LINE);
        // Downward transience: end of FR1 with TR > 10 CR: TR <- TR/8, CR <- (TR + CR)/2.
        let mut rp = rp_in(&p, St::active(0.1e9, 8e9, 0, 0));
        rp.on_timer(&p, NOW);
        assert_state("TRR", state(&rp), St::active(0.55e9, 1e9, 0, 1));
    }

    #[test]
    fn fb99_steps_back_one_cycle_and_restarts_the_timer() {
        let both = exact();
        let bytes = RpParams {
            fb99_step: Fb99Step::ByteCounter,
            ..exact()
        };
        let timer = RpParams {
            fb99_step: Fb99Step::Timer,
            ..exact()
        };
        // (name, params, si, ts before, si, ts after, timer period re-armed)
        #[rustfmt::skip]
        let cases: &[(&str, &RpParams, u32, u32, u32, u32, SimTime)] = &[
            ("FR3: back to FR2", &both, 3, 3, 2, 2, T),
            ("first FR cycle: stays at 0", &both, 0, 0, 0, 0, T),
            ("one counter at 0: the other steps", &both, 0, 4, 0, 3, T),
            ("AI by bytes 6,2 -> 5,1: back in FR", &both, 6, 2, 5, 1, T),
            ("HAI 7,7 -> 6,6: still HAI", &both, 7, 7, 6, 6, T / 2),
            ("ts 5 -> 4: timer period back to T", &both, 5, 5, 4, 4, T),
            ("byte counter only", &bytes, 3, 3, 2, 3, T),
            ("byte counter only, ts past FRT", &bytes, 3, 6, 2, 6, T / 2),
            ("timer only", &timer, 3, 3, 3, 2, T),
        ];
        for (name, p, si, ts, si2, ts2, period) in cases {
            let before = St::active(2e9, 6e9, *si, *ts).bc(777.0);
            let mut rp = rp_in(p, before);
            let out = rp.on_fb99(p, NOW);
            assert_eq!(
                out,
                RpOutput {
                    timer: TimerCmd::Arm(NOW + period),
                    rate_changed: false
                },
                "{name}"
            );
            // TR, CR and the byte count unchanged; only the stages move.
            assert_state(
                name,
                state(&rp),
                St {
                    si: *si2,
                    ts: *ts2,
                    ..before
                },
            );
        }
        // Inactive: ignored.
        let mut rp = rp_in(&both, St::inactive());
        assert_eq!(rp.on_fb99(&both, NOW), RpOutput::NONE);
        assert_state("inactive", state(&rp), St::inactive());
        // SONAR short fuse: ignored.
        let mut rp = rp_in(&both, St::active(2e9, 6e9, 3, 3));
        rp.sonar_short_fuse(&both);
        let before = state(&rp);
        assert_eq!(rp.on_fb99(&both, NOW), RpOutput::NONE);
        assert_state("short fuse", state(&rp), before);
    }

    #[test]
    fn fb99_holds_the_rp_in_fast_recovery() {
        // One Fb99 per timer cycle: the RP never leaves FR, and CR converges to TR without
        // TR ever increasing.
        let p = exact();
        let mut rp = rp_in(&p, St::active(1e9, 2e9, 0, 0));
        let mut t = NOW;
        for _ in 0..50 {
            t += T;
            rp.on_timer(&p, t);
            rp.on_fb99(&p, t);
            assert_eq!(rp.stage(&p), RpStage::FastRecovery);
        }
        assert_eq!(rp.target_rate(), 2e9);
        assert!(close(rp.current_rate(), 2e9));
    }

    #[test]
    fn sonar_short_fuse_jumps_to_hai_and_the_ping_timer_drives_it() {
        let p = exact();
        // (name, si, ts before, si, ts after)
        #[rustfmt::skip]
        let cases: &[(&str, u32, u32, u32, u32)] = &[
            ("from FR", 2, 1, 6, 6),
            ("from AI", 9, 3, 9, 6),
            ("already HAI", 8, 7, 8, 7),
        ];
        for (name, si, ts, si2, ts2) in cases {
            let before = St::active(2e9, 3e9, *si, *ts).bc(900.0);
            let mut rp = rp_in(&p, before);
            rp.timer_deadline = Some(NOW + T);
            let out = rp.sonar_short_fuse(&p);
            assert_eq!(
                out,
                RpOutput {
                    timer: TimerCmd::Cancel,
                    rate_changed: false
                },
                "{name}"
            );
            assert_state(
                name,
                state(&rp),
                St {
                    si: *si2,
                    ts: *ts2,
                    ..before
                },
            );
            assert_eq!(rp.stage(&p), RpStage::HyperActiveIncrease, "{name}");
            assert!(rp.in_sonar_short_fuse(), "{name}");
            assert_eq!(rp.timer_deadline(), None, "{name}");
            // The RP timer is stopped: a late expiry does nothing.
            assert_eq!(rp.on_timer(&p, NOW), RpOutput::NONE, "{name}");
        }
        // Ping ticks: timer_scount += 1 and an HAI increase R_HAI * (min - FRT).
        let mut rp = rp_in(&p, St::active(2e9, 3e9, 2, 1));
        rp.sonar_short_fuse(&p);
        let out = rp.sonar_hai_tick(&p);
        assert!(out.rate_changed);
        assert_eq!(out.timer, TimerCmd::Keep);
        assert_state("tick 1", state(&rp), St::active(2.525e9, 3.05e9, 6, 7));
        // The byte counter: HAI cycle with the SONAR reload (100 packets).
        let p2 = RpParams {
            sonar_byte_counter_bytes: 120_000,
            ..exact()
        };
        let mut rp = rp_in(&p2, St::active(2e9, 3e9, 2, 1).bc(0.0));
        rp.sonar_short_fuse(&p2);
        rp.on_frame_sent(&p2, NOW, 1, false);
        // si 6 -> 7, ts 6: min 6 -> R_HAI * 1
        assert_state(
            "bc",
            state(&rp),
            St::active(2.525e9, 3.05e9, 7, 6).bc(120_000.0),
        );
        // A CNM ends the short fuse and restarts the RP timer.
        let out = rp.on_cnm(&p2, NOW, 10);
        assert_eq!(out.timer, TimerCmd::Arm(NOW + T));
        assert!(!rp.in_sonar_short_fuse());
        assert_eq!(rp.sonar_hai_tick(&p2), RpOutput::NONE);
        // Inactive RP: the short fuse is ignored.
        let mut rp = rp_in(&p, St::inactive());
        assert_eq!(rp.sonar_short_fuse(&p), RpOutput::NONE);
        assert!(!rp.in_sonar_short_fuse());
    }

    #[test]
    fn without_timer_the_rp_recovers_by_the_byte_counter_only() {
        let p = RpParams {
            timer_enabled: false,
            ..exact()
        };
        // (name, input, command)
        #[rustfmt::skip]
        let cases: &[(&str, In, TimerCmd)] = &[
            ("CNM does not arm a timer", In::Cnm(20), TimerCmd::Cancel),
            ("Fb99 does not arm a timer", In::Fb99, TimerCmd::Cancel),
            ("the byte counter still works", In::Sent(1, false), TimerCmd::Keep),
        ];
        for (name, input, cmd) in cases {
            let mut rp = rp_in(&p, St::active(1e9, 2e9, 2, 0).bc(0.0));
            let out = apply(&mut rp, &p, NOW, *input);
            assert_eq!(out.timer, *cmd, "{name}");
            assert_eq!(rp.timer_deadline(), None, "{name}");
        }
        let mut rp = rp_in(&p, St::active(1e9, 2e9, 2, 0).bc(0.0));
        rp.on_frame_sent(&p, NOW, 1, false);
        assert_eq!(rp.si_count(), 3);
        assert!(close(rp.current_rate(), 1.5e9));
        // start_active: no timer either
        let p2 = RpParams {
            start_active: true,
            ..p.clone()
        };
        let mut rp = Rp::new(&p2, Rng::from_seed(1));
        assert_eq!(rp.start(&p2, NOW).timer, TimerCmd::Cancel);
    }

    #[test]
    fn release_ends_the_short_fuse() {
        let p = exact();
        let mut rp = rp_in(&p, St::active(LINE, LINE, 9, 9));
        rp.sonar_short_fuse(&p);
        rp.on_frame_sent(&p, NOW, 1_500, true);
        assert!(!rp.is_active());
        assert!(!rp.in_sonar_short_fuse());
    }

    // ---- link-level PAUSE (the hardware study's paused RPs) ----------------------------------

    #[test]
    fn pause_freezes_the_timer_and_resume_runs_it_on() {
        let p = exact();
        // (name, active, timer deadline before, pause at, resume at,
        //  pause output, frozen left, resume output, deadline after)
        #[rustfmt::skip]
        let cases: &[(&str, bool, Option<SimTime>, SimTime, SimTime, TimerCmd, Option<SimTime>, TimerCmd, Option<SimTime>)] = &[
            ("running timer: 7 ms left, resumed 20 ms later", true, Some(NOW + 7 * MS), NOW, NOW + 20 * MS,
                TimerCmd::Cancel, Some(7 * MS), TimerCmd::Arm(NOW + 27 * MS), Some(NOW + 27 * MS)),
            ("timer due at the pause instant: fires at the resume", true, Some(NOW), NOW, NOW + MS,
                TimerCmd::Cancel, Some(0), TimerCmd::Arm(NOW + MS), Some(NOW + MS)),
            ("resume at the same instant: deadline unchanged", true, Some(NOW + 5 * MS), NOW, NOW,
                TimerCmd::Cancel, Some(5 * MS), TimerCmd::Arm(NOW + 5 * MS), Some(NOW + 5 * MS)),
            ("inactive RP: nothing to freeze", false, None, NOW, NOW + MS,
                TimerCmd::Keep, None, TimerCmd::Keep, None),
        ];
        for (name, active, deadline, t_pause, t_resume, out_p, left, out_r, after) in cases {
            let s = if *active {
                St::active(2e9, 4e9, 2, 3)
            } else {
                St::inactive()
            };
            let mut rp = rp_in(&p, s);
            rp.timer_deadline = *deadline;
            let o = rp.pause(*t_pause);
            assert_eq!(
                o,
                RpOutput {
                    timer: *out_p,
                    rate_changed: false
                },
                "{name}: pause"
            );
            assert!(rp.is_paused(), "{name}");
            assert_eq!(rp.frozen_timer_left(), *left, "{name}: left");
            assert_eq!(
                rp.timer_deadline(),
                None,
                "{name}: no running timer while paused"
            );
            assert_state(name, state(&rp), s);
            let o = rp.resume(*t_resume);
            assert_eq!(
                o,
                RpOutput {
                    timer: *out_r,
                    rate_changed: false
                },
                "{name}: resume"
            );
            assert!(!rp.is_paused(), "{name}");
            assert_eq!(rp.frozen_timer_left(), None, "{name}");
            assert_eq!(rp.timer_deadline(), *after, "{name}: deadline after");
            assert_state(name, state(&rp), s);
        }
    }

    #[test]
    fn pause_and_resume_are_idempotent() {
        let p = exact();
        let mut rp = rp_in(&p, St::active(2e9, 4e9, 1, 1));
        rp.timer_deadline = Some(NOW + 4 * MS);
        assert_eq!(rp.resume(NOW).timer, TimerCmd::Keep, "resume while running");
        assert_eq!(rp.timer_deadline(), Some(NOW + 4 * MS));
        assert_eq!(rp.pause(NOW).timer, TimerCmd::Cancel);
        // a second pause later must not shorten what is left
        assert_eq!(rp.pause(NOW + 3 * MS), RpOutput::NONE, "second pause");
        assert_eq!(rp.frozen_timer_left(), Some(4 * MS));
        assert_eq!(rp.resume(NOW + 10 * MS).timer, TimerCmd::Arm(NOW + 14 * MS));
        assert_eq!(rp.resume(NOW + 11 * MS), RpOutput::NONE, "second resume");
        assert_eq!(rp.timer_deadline(), Some(NOW + 14 * MS));
    }

    #[test]
    fn timer_expiry_while_paused_is_ignored_so_the_stage_is_frozen() {
        let p = exact();
        // (name, si, ts) while paused: an expiry changes nothing
        #[rustfmt::skip]
        let cases: &[(&str, u32, u32)] = &[
            ("fast recovery", 1, 2),
            ("at FRT", 0, 5),
            ("AI by timer", 0, 7),
        ];
        for (name, si, ts) in cases {
            let s = St::active(2e9, 4e9, *si, *ts);
            let mut rp = rp_in(&p, s);
            rp.timer_deadline = Some(NOW + MS);
            rp.pause(NOW);
            assert_eq!(rp.on_timer(&p, NOW + MS), RpOutput::NONE, "{name}");
            assert_state(name, state(&rp), s);
            assert_eq!(rp.frozen_timer_left(), Some(MS), "{name}");
            // after the resume the timer fires normally and the stage advances
            let TimerCmd::Arm(d) = rp.resume(NOW + 5 * MS).timer else {
                panic!("{name}: resume must re-arm")
            };
            assert_eq!(d, NOW + 6 * MS, "{name}");
            rp.on_timer(&p, d);
            assert_eq!(rp.timer_scount(), ts + 1, "{name}");
        }
    }

    #[test]
    fn cnm_while_paused_is_obeyed_and_restarts_the_timer_frozen() {
        let p = exact();
        // (name, state before, qntzFb, CR after, TR after, BC after): counters reset, CR cut,
        // the restarted timer is frozen with a full T and arms T after the resume.
        let cr = 4e9;
        #[rustfmt::skip]
        let cases: &[(&str, St, u8, f64, f64, f64)] = &[
            // the hardware study: a paused RP resets tx_bcount on every Fb message, also in the
            // first cycle (where extra fast recovery keeps it when not paused); TR is kept
            ("active, first cycle: TR kept, BC reloaded", St::active(cr, 8e9, 0, 3).bc(999.0), 16,
                cr * (1.0 - 16.0 / 128.0), 8e9, 150_000.0),
            ("active, later cycle: TR <- CR, BC reloaded", St::active(cr, 8e9, 4, 6).bc(999.0), 16,
                cr * (1.0 - 16.0 / 128.0), cr, 150_000.0),
            ("inactive: allocated at line rate then cut", St::inactive(), 32,
                LINE * (1.0 - 32.0 / 128.0), LINE, 150_000.0),
        ];
        for (name, before, q, cr2, tr2, bc2) in cases {
            let mut rp = rp_in(&p, *before);
            if before.active {
                rp.timer_deadline = Some(NOW + 2 * MS);
            }
            rp.pause(NOW);
            let out = rp.on_cnm(&p, NOW + MS, *q);
            assert_eq!(
                out.timer,
                TimerCmd::Keep,
                "{name}: no timer runs while paused"
            );
            assert!(out.rate_changed, "{name}");
            assert_state(name, state(&rp), St::active(*cr2, *tr2, 0, 0).bc(*bc2));
            assert_eq!(rp.frozen_timer_left(), Some(T), "{name}: full T, frozen");
            assert_eq!(rp.timer_deadline(), None, "{name}");
            assert_eq!(
                rp.resume(NOW + 9 * MS).timer,
                TimerCmd::Arm(NOW + 9 * MS + T),
                "{name}"
            );
        }
    }

    #[test]
    fn frames_sent_while_paused_still_count_and_release_clears_the_frozen_timer() {
        // The caller gates the rate limiter while paused, so this does not happen in the
        // simulator; the state machine still keeps its rules: only the timer is frozen.
        let p = exact();
        let mut rp = rp_in(&p, St::active(1e9, 2e9, 2, 2).bc(1000.0));
        rp.timer_deadline = Some(NOW + MS);
        rp.pause(NOW);
        rp.on_frame_sent(&p, NOW, 1500, false);
        assert_eq!(rp.si_count(), 3, "byte counter is not frozen");
        assert_eq!(
            rp.frozen_timer_left(),
            Some(MS),
            "frame events keep the frozen timer"
        );
        let mut rp = rp_in(&p, St::active(LINE, LINE, 7, 7));
        rp.timer_deadline = Some(NOW + MS);
        rp.pause(NOW);
        assert_eq!(
            rp.on_frame_sent(&p, NOW, 1500, true).timer,
            TimerCmd::Cancel
        );
        assert!(!rp.is_active());
        assert_eq!(rp.frozen_timer_left(), None);
        assert_eq!(
            rp.resume(NOW + MS),
            RpOutput::NONE,
            "nothing to re-arm after a release"
        );
    }

    #[test]
    fn sonar_short_fuse_while_paused() {
        // The short fuse stops the RP timer (also a frozen one); its ping-driven HAI ticks
        // advance the timer stage, which is frozen while the link is paused.
        let p = exact();
        let mut rp = rp_in(&p, St::active(2e9, 3e9, 2, 1));
        rp.timer_deadline = Some(NOW + MS);
        rp.pause(NOW);
        assert_eq!(rp.sonar_short_fuse(&p).timer, TimerCmd::Cancel);
        assert_eq!(rp.frozen_timer_left(), None);
        let before = state(&rp);
        assert_eq!(rp.sonar_hai_tick(&p), RpOutput::NONE, "tick while paused");
        assert_state("tick while paused", state(&rp), before);
        assert_eq!(
            rp.resume(NOW + MS),
            RpOutput::NONE,
            "no RP timer to restart"
        );
        assert!(
            rp.sonar_hai_tick(&p).rate_changed,
            "ticks count again after the resume"
        );
        assert_eq!(rp.timer_scount(), before.ts + 1);
    }

    #[test]
    fn start_active_while_paused_starts_the_timer_frozen() {
        let p = RpParams {
            start_active: true,
            ..exact()
        };
        let mut rp = Rp::new(&p, Rng::from_seed(1));
        rp.pause(0);
        assert_eq!(rp.start(&p, NOW).timer, TimerCmd::Keep);
        assert_eq!(rp.frozen_timer_left(), Some(T));
        assert_eq!(rp.resume(NOW + MS).timer, TimerCmd::Arm(NOW + MS + T));
    }

    fn input_strategy() -> impl Strategy<Value = In> {
        prop_oneof![
            (0u8..=63).prop_map(In::Cnm),
            (64u32..=9_000, any::<bool>()).prop_map(|(b, e)| In::Sent(b, e)),
            Just(In::Timer),
            Just(In::Fb99),
            Just(In::ShortFuse),
            Just(In::PingTick),
            Just(In::Pause),
            Just(In::Resume),
        ]
    }

    proptest! {
        /// Invariants over arbitrary input sequences and option combinations: CR within
        /// [min_rate, line]; TR <= line when capped; inactive means CR = TR = line and zero
        /// counters; the stage agrees with the counters.
        #[test]
        fn rates_stay_within_bounds(
            inputs in proptest::collection::vec(input_strategy(), 1..400),
            seed in any::<u64>(),
            cap in any::<bool>(),
            efr in any::<bool>(),
            trr in any::<bool>(),
            release in any::<bool>(),
            start_active in any::<bool>(),
            constant in any::<bool>(),
            gate in 0u8..3,
            one_counter in any::<bool>(),
        ) {
            let p = RpParams {
                cap_target_rate: cap,
                extra_fast_recovery: efr,
                target_rate_reduction: trr,
                release_at_line_rate: release,
                start_active,
                hai_mode: if constant { HaiMode::Constant } else { HaiMode::Multiplied },
                stage_gate: [StageGate::Both, StageGate::ByteCounter, StageGate::Either][gate as usize],
                one_cycle_counter: one_counter,
                byte_counter_bytes: 20_000,
                byte_counter_after_frt_bytes: 10_000,
                ..RpParams::standard(1e9)
            };
            let mut rp = Rp::new(&p, Rng::from_seed(seed));
            let mut now = 0;
            rp.start(&p, now);
            for input in inputs {
                now += 10_000_000;
                let cr_before = rp.current_rate();
                let out = apply(&mut rp, &p, now, input);
                prop_assert_eq!(out.rate_changed, rp.current_rate() != cr_before);
                if rp.is_active() {
                    prop_assert!(rp.current_rate() >= p.min_rate_bps);
                    prop_assert!(rp.current_rate() <= p.line_rate_bps);
                    if cap {
                        prop_assert!(rp.target_rate() <= p.line_rate_bps);
                    }
                    prop_assert!(rp.tx_bcount() >= 0.0);
                    if one_counter {
                        prop_assert_eq!(rp.si_count(), rp.timer_scount());
                    }
                    // the RP timer runs, except in the SONAR short fuse (the ping timer drives);
                    // while paused it is frozen
                    if rp.in_sonar_short_fuse() {
                        prop_assert_eq!(rp.timer_deadline(), None);
                        prop_assert_eq!(rp.frozen_timer_left(), None);
                    } else if rp.is_paused() {
                        prop_assert_eq!(rp.timer_deadline(), None);
                        prop_assert!(rp.frozen_timer_left().is_some());
                    } else {
                        prop_assert!(rp.timer_deadline().is_some());
                        prop_assert_eq!(rp.frozen_timer_left(), None);
                    }
                } else {
                    prop_assert_eq!(rp.current_rate(), p.line_rate_bps);
                    prop_assert_eq!(rp.target_rate(), p.line_rate_bps);
                    prop_assert_eq!((rp.si_count(), rp.timer_scount()), (0, 0));
                    prop_assert_eq!(rp.stage(&p), RpStage::Inactive);
                    prop_assert_eq!(rp.timer_deadline(), None);
                    prop_assert!(!rp.in_sonar_short_fuse());
                    prop_assert_eq!(rp.frozen_timer_left(), None);
                }
            }
        }
    }
}

/// DCQCN's rules of the reaction point (docs/models/dcqcn.md), one table per rule.
#[cfg(test)]
mod dcqcn_tests {
    use super::*;
    use crate::engine::Rng;
    use crate::proto::dcqcn::DcqcnVariant;
    use crate::units::US;

    const LINE: f64 = 40e9;
    const G: f64 = 1.0 / 256.0;
    const T0: SimTime = 1_000 * US;

    fn params(v: DcqcnVariant) -> RpParams {
        v.rp(LINE)
    }

    fn dc(p: &RpParams) -> &DcqcnRp {
        p.dcqcn.as_ref().expect("a DCQCN RP")
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    /// An active RP in a given state (alpha timer restarted at `T0`).
    fn rp_at(p: &RpParams, cr: f64, tr: f64, si: u32, ts: u32, alpha: f64) -> Rp {
        let mut rp = Rp::new(p, Rng::from_seed(1));
        rp.on_cnp(p, T0);
        rp.dc.as_mut().unwrap().dec_deadline = None;
        rp.cr = cr;
        rp.tr = tr;
        rp.si_count = si;
        rp.timer_scount = ts;
        rp.dc.as_mut().unwrap().alpha = alpha;
        rp
    }

    #[test]
    fn first_cnp_allocates_the_rate_limiter_per_variant() {
        // (variant, CR after, TR after, alpha after, decrease due)
        let a_ns3 = (1.0 - G) * 0.5 + G;
        let table: &[(DcqcnVariant, f64, f64, f64, Option<SimTime>)] = &[
            // the paper: RT = RC = line, RC = RC(1 - 1/2), then alpha = (1-g)1 + g = 1
            (DcqcnVariant::Paper, LINE / 2.0, LINE, 1.0, None),
            // ns3-rdma: alpha updated first, from 0.5
            (
                DcqcnVariant::Ns3Rdma,
                LINE * (1.0 - a_ns3 / 2.0),
                LINE,
                a_ns3,
                None,
            ),
            // Mellanox: RC = RT = 1.0*RC, alpha = 1, the cut waits for the decrease grid
            (DcqcnVariant::Mellanox, LINE, LINE, 1.0, Some(T0 + 4 * US)),
        ];
        for &(v, cr, tr, alpha, due) in table {
            let p = params(v);
            let mut rp = Rp::new(&p, Rng::from_seed(1));
            assert!(!rp.is_active());
            let out = rp.on_cnp(&p, T0);
            assert!(rp.is_active(), "{v:?}");
            assert!(
                close(rp.current_rate(), cr),
                "{v:?}: CR {}",
                rp.current_rate()
            );
            assert!(
                close(rp.target_rate(), tr),
                "{v:?}: TR {}",
                rp.target_rate()
            );
            assert!(close(rp.alpha(), alpha), "{v:?}: alpha {}", rp.alpha());
            assert_eq!(rp.decrease_due(), due, "{v:?}");
            assert_eq!(out.rate_changed, cr != LINE, "{v:?}");
            let want_timer = match due {
                Some(d) => d,
                None => T0 + p.timer_ps,
            };
            assert_eq!(out.timer, TimerCmd::Arm(want_timer), "{v:?}");
        }
    }

    #[test]
    fn first_cnp_rate_sets_rc_and_rt_without_a_cut() {
        // (first_cnp_rate, CR = TR after)
        for &(f, want) in &[(1.0, LINE), (0.5, LINE / 2.0), (0.0, 100e6)] {
            let mut p = params(DcqcnVariant::Paper);
            p.dcqcn.as_mut().unwrap().first_cnp_rate = Some(f);
            let mut rp = Rp::new(&p, Rng::from_seed(1));
            rp.on_cnp(&p, T0);
            assert!(close(rp.current_rate(), want), "f = {f}");
            assert!(close(rp.target_rate(), want), "f = {f}");
            assert!(close(rp.alpha(), 1.0));
            // the next CNP is an ordinary decrease
            rp.on_cnp(&p, T0 + 10 * US);
            assert!(close(rp.current_rate(), (want / 2.0).max(100e6)), "f = {f}");
        }
    }

    #[test]
    fn decrease_clamp_rules() {
        // (clamp, si, ts, TR after): CR 10G, TR 30G before; alpha 0.5 -> CR 7.5G
        let table: &[(TargetClamp, u32, u32, f64)] = &[
            (TargetClamp::Always, 0, 0, 10e9),
            (TargetClamp::ByteStage, 0, 3, 30e9),
            (TargetClamp::ByteStage, 1, 0, 10e9),
            (TargetClamp::TimeStage, 2, 0, 30e9),
            (TargetClamp::TimeStage, 0, 1, 10e9),
            (TargetClamp::AnyStage, 0, 0, 30e9),
            (TargetClamp::AnyStage, 1, 0, 10e9),
            (TargetClamp::AnyStage, 0, 1, 10e9),
        ];
        for &(clamp, si, ts, tr) in table {
            let mut p = params(DcqcnVariant::Paper);
            p.dcqcn.as_mut().unwrap().clamp = clamp;
            let mut rp = rp_at(&p, 10e9, 30e9, si, ts, 0.5);
            rp.on_cnp(&p, T0 + US);
            assert!(close(rp.target_rate(), tr), "{clamp:?} si {si} ts {ts}");
            assert!(close(rp.current_rate(), 7.5e9), "{clamp:?}");
            assert_eq!((rp.si_count(), rp.timer_scount()), (0, 0), "{clamp:?}");
        }
    }

    #[test]
    fn alpha_order_at_a_decrease() {
        // (alpha update, CR after, alpha after), CR 10G and alpha 0.5 before
        let up = (1.0 - G) * 0.5 + G;
        let table: &[(AlphaUpdate, f64, f64)] = &[
            (AlphaUpdate::CutThenUpdate, 7.5e9, up),
            (AlphaUpdate::UpdateThenCut, 10e9 * (1.0 - up / 2.0), up),
        ];
        for &(order, cr, alpha) in table {
            let mut p = params(DcqcnVariant::Paper);
            p.dcqcn.as_mut().unwrap().alpha_update = order;
            let mut rp = rp_at(&p, 10e9, 10e9, 0, 0, 0.5);
            rp.on_cnp(&p, T0 + US);
            assert!(close(rp.current_rate(), cr), "{order:?}");
            assert!(close(rp.alpha(), alpha), "{order:?}");
        }
    }

    #[test]
    fn alpha_decays_every_k_without_cnps() {
        let p = params(DcqcnVariant::Paper);
        let k = dc(&p).alpha_interval_ps;
        // (time of the next CNP after T0, K expiries before it)
        let table: &[(SimTime, i32)] = &[
            (T0 + 1, 0),
            (T0 + k - 1, 0),
            (T0 + k, 1),
            (T0 + 3 * k + k / 2, 3),
            (T0 + 100 * k, 100),
        ];
        for &(t, n) in table {
            let mut rp = rp_at(&p, 10e9, 10e9, 0, 0, 0.8);
            rp.on_cnp(&p, t);
            let decayed = 0.8 * (1.0 - G).powi(n);
            assert!(
                close(rp.current_rate(), 10e9 * (1.0 - decayed / 2.0)),
                "t - T0 = {}",
                t - T0
            );
            assert!(close(rp.alpha(), (1.0 - G) * decayed + G));
        }
        // the K timer restarts at each decrease: two CNPs 0.6 K apart after one at T0 see no
        // expiry in between
        let mut rp = rp_at(&p, 10e9, 10e9, 0, 0, 0.8);
        rp.on_cnp(&p, T0 + k / 2);
        let a1 = rp.alpha();
        rp.on_cnp(&p, T0 + k / 2 + 6 * k / 10);
        assert!(close(rp.alpha(), (1.0 - G) * a1 + G));
    }

    #[test]
    fn periodic_alpha_adds_g_for_slots_with_a_cnp() {
        let p = params(DcqcnVariant::Mellanox);
        let k = dc(&p).alpha_interval_ps; // 1 us
        let mut rp = Rp::new(&p, Rng::from_seed(1));
        rp.on_cnp(&p, T0); // alpha = 1, grid T0 + k, T0 + 2k, ...
        assert!(close(rp.alpha(), 1.0));
        // a CNP inside the first slot: the update at T0 + k adds g
        rp.on_cnp(&p, T0 + k / 2);
        // two empty slots, read at the decrease at T0 + 4 us
        let out = rp.on_timer(&p, T0 + 4 * US);
        // updates at T0+k (CNP: +g), T0+2k, T0+3k, T0+4k (decays)
        let alpha = 1.0 * (1.0 - G) + G;
        let alpha = alpha * (1.0 - G).powi(3);
        assert!(close(rp.alpha(), alpha), "alpha {}", rp.alpha());
        // the cut used that alpha; TR not clamped (no timer cycle yet)
        assert!(close(rp.current_rate(), LINE * (1.0 - alpha / 2.0)));
        assert!(close(rp.target_rate(), LINE));
        assert!(out.rate_changed);
        assert_eq!(rp.decrease_due(), None);
        assert_eq!(out.timer, TimerCmd::Arm(T0 + 4 * US + p.timer_ps));
    }

    #[test]
    fn decrease_interval_merges_cnps_into_one_cut_on_the_grid() {
        let p = params(DcqcnVariant::Mellanox);
        let d = dc(&p).decrease_interval_ps; // 4 us
        let mut rp = Rp::new(&p, Rng::from_seed(1));
        rp.on_cnp(&p, T0);
        rp.on_timer(&p, T0 + d); // first cut
        let cr1 = rp.current_rate();
        // (CNP time, decrease due after it)
        let table: &[(SimTime, SimTime)] = &[
            (T0 + d + 1, T0 + 2 * d),
            (T0 + d + 2 * US, T0 + 2 * d), // merged
            (T0 + 2 * d - 1, T0 + 2 * d),
        ];
        for &(t, due) in table {
            let out = rp.on_cnp(&p, t);
            assert_eq!(rp.decrease_due(), Some(due));
            assert!(!out.rate_changed);
            assert_eq!(rp.current_rate(), cr1);
        }
        let out = rp.on_timer(&p, T0 + 2 * d);
        assert!(out.rate_changed);
        assert!(rp.current_rate() < cr1);
        // a CNP exactly on a grid point waits for the next one
        rp.on_cnp(&p, T0 + 5 * d);
        assert_eq!(rp.decrease_due(), Some(T0 + 6 * d));
    }

    #[test]
    fn increase_stages_of_the_paper_and_ns3_rdma() {
        // (variant, si, ts, stage, TR step): paper FR while max <= 5, HAI min > 5 with
        // R_HAI*(min - 5); ns3-rdma FR while both < 5, HAI R_HAI*(min - 5 + 1)
        let table: &[(DcqcnVariant, u32, u32, RpStage, f64)] = &[
            (DcqcnVariant::Paper, 5, 5, RpStage::FastRecovery, 0.0),
            (DcqcnVariant::Paper, 6, 0, RpStage::ActiveIncrease, 40e6),
            (DcqcnVariant::Paper, 0, 6, RpStage::ActiveIncrease, 40e6),
            (
                DcqcnVariant::Paper,
                6,
                8,
                RpStage::HyperActiveIncrease,
                200e6,
            ),
            (DcqcnVariant::Ns3Rdma, 4, 4, RpStage::FastRecovery, 0.0),
            (DcqcnVariant::Ns3Rdma, 5, 1, RpStage::ActiveIncrease, 40e6),
            (
                DcqcnVariant::Ns3Rdma,
                5,
                5,
                RpStage::HyperActiveIncrease,
                200e6,
            ),
            (
                DcqcnVariant::Ns3Rdma,
                7,
                6,
                RpStage::HyperActiveIncrease,
                400e6,
            ),
        ];
        for &(v, si, ts, stage, step) in table {
            let p = params(v);
            // the timer expiry counts ts up by one first
            let mut rp = rp_at(&p, 10e9, 20e9, si, ts - ts.min(1), 0.5);
            let ts_before = rp.timer_scount();
            if ts == 0 {
                continue;
            }
            rp.timer_deadline = Some(T0 + 10 * US);
            rp.on_timer(&p, T0 + 10 * US);
            assert_eq!(rp.timer_scount(), ts_before + 1);
            assert_eq!(rp.stage(&p), stage, "{v:?} si {si} ts {ts}");
            assert!(
                close(rp.target_rate(), 20e9 + step),
                "{v:?} si {si} ts {ts}"
            );
            assert!(close(rp.current_rate(), (10e9 + 20e9 + step) / 2.0));
        }
        // ts == 0 rows: through the byte counter
        let p = params(DcqcnVariant::Paper);
        let mut rp = rp_at(&p, 10e9, 20e9, 5, 0, 0.5);
        rp.tx_bcount = 100.0;
        rp.on_frame_sent(&p, T0 + US, 1000, true);
        assert_eq!(rp.si_count(), 6);
        assert!(close(rp.target_rate(), 20e9 + 40e6));
        assert!(close(rp.tx_bcount(), 10_000_000.0));
    }

    #[test]
    fn mellanox_increase_is_timer_only_with_a_constant_hai() {
        let p = params(DcqcnVariant::Mellanox);
        // (timer_scount after the expiry, stage, TR step): F = 1
        let table: &[(u32, RpStage, f64)] = &[
            (1, RpStage::FastRecovery, 0.0),
            (2, RpStage::ActiveIncrease, 50e6),
            (3, RpStage::HyperActiveIncrease, 100e6),
            (9, RpStage::HyperActiveIncrease, 100e6),
        ];
        for &(ts, stage, step) in table {
            let mut rp = rp_at(&p, 10e9, 20e9, 0, ts - 1, 0.5);
            rp.timer_deadline = Some(T0 + 10 * US);
            rp.on_timer(&p, T0 + 10 * US);
            assert_eq!(rp.stage(&p), stage, "ts {ts}");
            assert!(close(rp.target_rate(), 20e9 + step), "ts {ts}");
        }
        // no byte counter: frames never complete a cycle
        let mut rp = rp_at(&p, 10e9, 20e9, 0, 0, 0.5);
        for _ in 0..100_000 {
            rp.on_frame_sent(&p, T0, 1500, false);
        }
        assert_eq!(rp.si_count(), 0);
        assert_eq!(rp.current_rate(), 10e9);
    }

    #[test]
    fn stage_gate_timer_classification() {
        // (frt, ts, stage, n); si is ignored
        let table: &[(u32, u32, RpStage, u32)] = &[
            (1, 0, RpStage::FastRecovery, 0),
            (1, 1, RpStage::FastRecovery, 0),
            (1, 2, RpStage::ActiveIncrease, 0),
            (1, 3, RpStage::HyperActiveIncrease, 1),
            (5, 5, RpStage::FastRecovery, 0),
            (5, 6, RpStage::ActiveIncrease, 0),
            (5, 9, RpStage::HyperActiveIncrease, 3),
        ];
        for &(frt, ts, stage, n) in table {
            assert_eq!(
                StageGate::Timer.classify(frt, 99, ts),
                (stage, n),
                "frt {frt} ts {ts}"
            );
        }
    }

    #[test]
    fn decrease_stops_at_the_minimum_rate_and_rates_stay_below_line() {
        let p = params(DcqcnVariant::Paper);
        let mut rp = Rp::new(&p, Rng::from_seed(3));
        let mut t = T0;
        for _ in 0..200 {
            rp.on_cnp(&p, t);
            t += US;
        }
        assert_eq!(rp.current_rate(), p.min_rate_bps);
        for _ in 0..10_000 {
            t = rp.timer_deadline().unwrap();
            rp.on_timer(&p, t);
            assert!(rp.current_rate() <= LINE && rp.target_rate() <= LINE);
        }
        assert!(close(rp.current_rate(), LINE));
        // no release: the RP stays allocated at the line rate
        assert!(rp.is_active());
    }

    #[test]
    fn qcn_rp_ignores_cnps() {
        let p = RpParams::standard(LINE);
        let mut rp = Rp::new(&p, Rng::from_seed(1));
        assert_eq!(rp.on_cnp(&p, T0), RpOutput::NONE);
        assert!(!rp.is_active());
    }

    #[test]
    fn dcqcn_params_validation() {
        let ok = params(DcqcnVariant::Paper);
        assert!(ok.validate().is_ok());
        let bad: &[fn(&mut DcqcnRp)] = &[
            |d| d.g = 0.0,
            |d| d.g = 1.5,
            |d| d.alpha_start = -0.1,
            |d| d.alpha_interval_ps = 0,
            |d| d.first_cnp_rate = Some(2.0),
        ];
        for f in bad {
            let mut p = ok.clone();
            f(p.dcqcn.as_mut().unwrap());
            assert!(p.validate().is_err(), "{:?}", p.dcqcn);
        }
    }
}
