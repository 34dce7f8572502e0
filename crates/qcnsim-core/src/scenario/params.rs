//! The protocol parameters, each defined once: scenario key, kind and unit, default (with its
//! source), allowed range and help text. Scenario reading, `--set` overrides, validation and the
//! parameter reference (`qcnsim params`, docs/parameters.md) all come from this table.

use super::reader::{Res, TableReader};
use crate::proto::bcn::{BcnCpParams, BcnRpParams, SevereCheck};
use crate::proto::nic_fb::{Feedback, NicFbParams, SampleCount};
use crate::proto::qcn_ba::BaParams;
use crate::proto::qcn_cp::{CpParams, Quantiser};
use crate::proto::qcn_rp::{Fb99Step, HaiMode, RpParams, StageGate};
use crate::proto::sonar::WeStart;
use crate::units;
use crate::units::SimTime;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Bytes {
        min: u64,
        max: u64,
    },
    Time {
        min: u64,
    },
    Rate,
    Float {
        min: f64,
        max: f64,
    },
    Int {
        min: i64,
        max: i64,
    },
    Bool,
    Choice(&'static [&'static str]),
    /// A list of whole numbers, each in `[min, max]`.
    IntList {
        min: i64,
        max: i64,
    },
}

#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// Table the key lives in, e.g. `cc.qcn.cp`.
    pub section: &'static str,
    pub key: &'static str,
    pub kind: Kind,
    /// Default as written in a scenario file.
    pub default: &'static str,
    pub source: &'static str,
    pub help: &'static str,
}

const QCN: &str = "cc.qcn";
const NIC: &str = "cc.qcn.nic";
const CP: &str = "cc.qcn.cp";
const RP: &str = "cc.qcn.rp";
const BA: &str = "cc.qcn.ba";
const SONAR: &str = "cc.qcn.sonar";
const PUSHBACK: &str = "cc.qcn.pushback";
const TRP: &str = "QCN transient-response proposals";
const BCP: &str = "cc.bcn.cp";
const BRP: &str = "cc.bcn.rp";
const MIB: &str = "IEEE 802.1Q MIB (IEEE8021-CN-MIB)";
const STUDY: &str = "BCN calibration study";
const X82598: &str = "Intel 82598 bcn_config (Linux ixgbe_dcb.h)";
pub(super) const FC: &str = "flow_control";
pub(super) const SB: &str = "shared_buffer";
const PC: &str = "QCN pseudo code v2.x";
const HW: &str = "QCN hardware study (NIC-side feedback)";
pub(super) const FLUID: &str = "fluid";
pub(super) const FLUID_QCN: &str = "fluid.qcn";
pub(super) const FLUID_DCQCN: &str = "fluid.dcqcn";
pub(super) const FLUID_TIMELY: &str = "fluid.timely";
pub(super) const TM: &str = "cc.timely";
pub(super) const SW: &str = "cc.swift";
pub(super) const DC: &str = "cc.dcqcn";
pub(super) const DC_CP: &str = "cc.dcqcn.cp";
pub(super) const DC_NP: &str = "cc.dcqcn.np";
pub(super) const DC_RP: &str = "cc.dcqcn.rp";
pub(super) const TP: &str = "transport";
pub(super) const DCTCP: &str = "cc.dctcp";
/// The section of HPCC's keys (docs/models/hpcc.md).
pub const HPCC: &str = "cc.hpcc";
const DCTCP10: &str = "Alizadeh et al., Data Center TCP (DCTCP), SIGCOMM 2010";
const DCV: &str = "by variant: paper (Zhu et al. 2015; CoNEXT 2016 fluid-model script), ns3-rdma (mix/config.txt), mellanox (HPCC mix/config.txt, rdma-hw.cc); docs/models/dcqcn.md";
const DCQCN_FLUID: &str = "Zhu et al., CoNEXT 2016 (fluid model; authors' script dcqcn2.m)";
const TIMELY_REC: &str = "Zhu et al., CoNEXT 2016, TIMELY model validation (\"parameter values recommended in [TIMELY]\"); the same default in HPCC's ns-3 rdma-hw.cc";
const TIMELY_FLUID: &str = "Zhu et al., CoNEXT 2016, TIMELY fluid model (the validation's values, \"recommended in [TIMELY]\")";
const HTSIM_SWIFT: &str = "htsim sim/swift.cpp (Broadcom/csg-htsim), marked there as a guess; the Swift paper's own value not checked (docs/models/swift.md)";

pub static PARAMS: &[ParamSpec] = &[
    ParamSpec { section: "cc.qcn", key: "multicast_feedback", kind: Kind::Choice(&["standard", "representative"]), default: "standard", source: "multicast QCN study (Mliki et al., Algorithms 1 and 2)", help: "CNMs for flows addressed to a group: every CP of the tree sends for its sampled copies (standard), or only the representative CP, with the RP decreasing by F̂b (representative, Algorithms 1 and 2). Unicast flows always use standard QCN." },
    ParamSpec { section: "cc.qcn", key: "multicast_fbhat_hold", kind: Kind::Time { min: 0 }, default: "0s", source: "qcnsim extension, not in the multicast study", help: "Representative feedback only: an RP that has received no CNM for this long forgets F̂b and the representative CPID (F̂b = 0), so the selection restarts; 0s = never, Algorithm 1 as specified (F̂b restarts only on reaching 63)." },
    ParamSpec { section: QCN, key: "feedback", kind: Kind::Choice(&["switch", "nic"]), default: "switch", source: HW, help: "Where Fb is computed: at the CP, which sends CNMs (switch, the standard), or at the NIC from the queue lengths the switch reports in ConMes frames (nic, the hardware-study variant; Qeq, w, quantiser, sampling table and jitter are those of cc.qcn.cp)." },
    ParamSpec { section: NIC, key: "conmes_interval", kind: Kind::Bytes { min: 64, max: 1 << 30 }, default: "1000B", source: HW, help: "With feedback = \"nic\": the CP queue sends one ConMes (carrying its Qlen) per this many bytes enqueued, to the source of the frame enqueued at that instant, only when that frame found a backlog." },
    ParamSpec { section: NIC, key: "conmes_frame", kind: Kind::Bytes { min: 64, max: 1518 }, default: "64B", source: "interpretation (minimum Ethernet frame; the study gives no size)", help: "Size of a ConMes control frame on the wire (strict-priority control queue, never sampled)." },
    ParamSpec { section: NIC, key: "sample_count", kind: Kind::Choice(&["conmes", "sent"]), default: "conmes", source: "interpretation (QCN hardware study: the NIC \"samples\" the Qlen reports)", help: "What the NIC's sampling countdown counts: conmes_interval bytes per ConMes received (conmes), or the bytes the flow has sent, sampling at the first ConMes after the countdown expired (sent)." },
    ParamSpec { section: CP, key: "q_eq", kind: Kind::Bytes { min: 100, max: u32::MAX as u64 }, default: "26000B", source: MIB, help: "Qeq, the equilibrium queue length (set point) of the CP (cpQSp)." },
    ParamSpec { section: CP, key: "w", kind: Kind::Float { min: 0.0, max: 64.0 }, default: "2.0", source: MIB, help: "w, the weight of the queue growth Qdelta in Fb = -(Qoff + w*Qdelta) (cpW = 1 means 2^1)." },
    ParamSpec { section: CP, key: "fb_bits", kind: Kind::Int { min: 3, max: 8 }, default: "6", source: MIB, help: "Width of the quantised feedback QntzFb (6 bits: 0..63)." },
    ParamSpec { section: CP, key: "sample_base", kind: Kind::Bytes { min: 1000, max: 1 << 40 }, default: "150000B", source: MIB, help: "Base sampling interval (cpMinSampleBase); the sampling table scales it." },
    ParamSpec { section: CP, key: "jitter", kind: Kind::Float { min: 0.0, max: 0.99 }, default: "0.15", source: PC, help: "Each new sampling interval is multiplied by U(1-jitter, 1+jitter) (the \"30 % randomness\")." },
    ParamSpec { section: CP, key: "quantiser", kind: Kind::Choice(&["linear", "unit"]), default: "linear", source: "linear: IEEE 802.1Q; unit: a reading of the multicast QCN study (Mliki et al., sec. 2.1: Fb quantised to 6 bits, maximum 63, queues counted in frames)", help: "How |Fb| becomes qntzFb: linear over Qeq*(2w+1) (the standard), or whole fb_unit steps of |Fb| saturating at 2^fb_bits - 1 (unit; Qeq does not scale it)." },
    ParamSpec { section: CP, key: "fb_unit", kind: Kind::Bytes { min: 1, max: 1 << 30 }, default: "1500B", source: "interpretation (multicast QCN study: queues in frames of 1500 B)", help: "quantiser = \"unit\": bytes per quantisation step of |Fb|." },
    ParamSpec { section: CP, key: "sampling", kind: Kind::Choice(&["table", "every_frame"]), default: "table", source: "table: IEEE 802.1Q; every_frame: a reading of the multicast QCN study (sec. 2.1 \"for every received data frame\" and Algorithm 2)", help: "Sample instants: after the bytes of the sampling table (the standard), or at every enqueued data frame (every_frame; the table, sample_base and jitter are then unused)." },
    ParamSpec { section: CP, key: "samples", kind: Kind::Choice(&["enqueued", "arrivals"]), default: "enqueued", source: "enqueued: IEEE 802.1Q clause 32.8.11 (cpMinSampleBase: octets to enqueue in the CP's queue between CNMs; IEEE8021-CN-MIB) and the pseudo code (Q += L before the sample); arrivals: htsim's QcnQueue (samples before its drop-tail test)", help: "Which data frames count toward the next sample: those enqueued in the CP's queue (the standard), or every arrival, also a frame discarded at the full queue (arrivals; a discarded frame is sampled with Q the queue it did not enter)." },
    ParamSpec { section: CP, key: "qold", kind: Kind::Choice(&["sample", "feedback"]), default: "sample", source: "sample: IEEE 802.1Q; feedback: a reading of the multicast QCN study (eq. 3: Qold is the queue size when the last feedback message was generated)", help: "When Qold is updated: at every sample instant (the standard), or only when the CP sends a CNM (feedback)." },
    ParamSpec { section: RP, key: "byte_counter", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "150000B", source: MIB, help: "BC_LIMIT, the byte-counter cycle while in fast recovery (rpgByteReset)." },
    ParamSpec { section: RP, key: "byte_counter_after_frt", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "75000B", source: PC, help: "Byte-counter reload once the byte stage has reached FRT (BC_LIMIT/2)." },
    ParamSpec { section: RP, key: "timer", kind: Kind::Time { min: 1 }, default: "15ms", source: MIB, help: "T, the rate-increase timer period while in fast recovery (rpgTimeReset; the reference experiments use 10ms)." },
    ParamSpec { section: RP, key: "timer_after_frt", kind: Kind::Time { min: 1 }, default: "7.5ms", source: PC, help: "Timer reload once the timer stage has reached FRT (T/2)." },
    ParamSpec { section: RP, key: "frt", kind: Kind::Int { min: 1, max: 1000 }, default: "5", source: MIB, help: "FRT, the fast recovery threshold: cycles of each counter spent in fast recovery (rpgThreshold)." },
    ParamSpec { section: RP, key: "r_ai", kind: Kind::Rate, default: "5Mbps", source: MIB, help: "R_AI, the active-increase step of the target rate (rpgAiRate)." },
    ParamSpec { section: RP, key: "r_hai", kind: Kind::Rate, default: "50Mbps", source: MIB, help: "R_HAI, the hyper-active increase step (rpgHaiRate)." },
    ParamSpec { section: RP, key: "gd", kind: Kind::Float { min: 1e-9, max: 1.0 }, default: "0.0078125", source: MIB, help: "Gd, the decrease gain: CR <- CR(1 - Gd*QntzFb) (rpgGd = 7 means 2^-7)." },
    ParamSpec { section: RP, key: "min_dec_factor", kind: Kind::Float { min: 0.01, max: 1.0 }, default: "0.5", source: MIB, help: "Smallest factor one CNM may multiply CR by (rpgMinDecFac = 50 %)." },
    ParamSpec { section: RP, key: "min_rate", kind: Kind::Rate, default: "5Mbps", source: MIB, help: "Lowest current rate a rate limiter may reach (rpgMinRate)." },
    ParamSpec { section: RP, key: "jitter", kind: Kind::Float { min: 0.0, max: 0.99 }, default: "0.15", source: PC, help: "Byte-counter and timer reloads are multiplied by U(1-jitter, 1+jitter)." },
    ParamSpec { section: RP, key: "target_rate_reduction", kind: Kind::Bool, default: "true", source: PC, help: "At the end of the first cycle after a CNM, if TR > trr_ratio*CR then TR <- TR/trr_divisor." },
    ParamSpec { section: RP, key: "trr_ratio", kind: Kind::Float { min: 1.0, max: 1e6 }, default: "10.0", source: PC, help: "Ratio TR/CR above which target-rate reduction applies." },
    ParamSpec { section: RP, key: "trr_divisor", kind: Kind::Float { min: 1.0, max: 1e6 }, default: "8.0", source: PC, help: "Divisor of TR in target-rate reduction." },
    ParamSpec { section: RP, key: "cap_target_rate", kind: Kind::Bool, default: "true", source: "interpretation (docs/sources.md, pitfall 5)", help: "Cap TR at the line rate (true), or let TR exceed it as in the TR/CR formulation (false). CR is always capped." },
    ParamSpec { section: RP, key: "extra_fast_recovery", kind: Kind::Bool, default: "true", source: PC, help: "On a CNM, set TR <- CR and reload the byte counter only when si_count != 0 (true), or on every CNM (false)." },
    ParamSpec { section: RP, key: "hai_mode", kind: Kind::Choice(&["multiplied", "constant"]), default: "multiplied", source: PC, help: "Hyper-active increase R_HAI*(min(si_count, timer_scount) - FRT) (multiplied, pseudo code) or a constant R_HAI (Linux emulator)." },
    ParamSpec { section: RP, key: "stage_gate", kind: Kind::Choice(&["both", "byte_counter", "either"]), default: "both", source: "QCN pseudo code v2.x (both); byte_counter and either: interpretation (the hardware study cites no pseudo-code version)", help: "Which stage counters gate the increase: both (HAI when si_count and timer_scount are past FRT, AI when one is; HAI step R_HAI*(min - FRT)), byte_counter (HAI when si_count is past FRT, step R_HAI*(si_count - FRT); AI when only the timer is) or either (HAI when one of them is past FRT, step R_HAI*(max - FRT); no AI)." },
    ParamSpec { section: RP, key: "release_at_line_rate", kind: Kind::Bool, default: "true", source: PC, help: "Release the rate limiter when CR reaches the line rate and its queue is empty." },
    ParamSpec { section: RP, key: "start_active", kind: Kind::Bool, default: "false", source: "interpretation", help: "Rate limiter active from the flow's start at CR = TR = line rate (true), or allocated on the first CNM (false, the standard)." },
    ParamSpec { section: RP, key: "start_rate", kind: Kind::Rate, default: "line", source: "qcnsim (for the fluid-model cross-check, docs/models/fluid.md)", help: "With start_active = true: CR = TR = this rate at the flow's start (e.g. the fair share C/N, the state a fluid model starts from); \"line\" = the line rate of the flow's NIC. At least min_rate, at most each flow's line rate." },
    ParamSpec { section: RP, key: "timer_enabled", kind: Kind::Bool, default: "true", source: "interpretation (QCN transient-response proposals: \"drift timer disabled\" in their hotspot runs)", help: "Run the RP's rate-increase timer (true, the standard). false: recovery by the byte counter only (SONAR's ping timer and push-back's recovery timer are separate; push-back turns the timer on with its own period)." },
    ParamSpec { section: RP, key: "rl_queue", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "150KB", source: "interpretation (BCN calibration study: 150 KB rate-limiter queue)", help: "Capacity of each flow's rate-limiter queue; frames beyond it are dropped at the source and counted." },
    ParamSpec { section: RP, key: "rl_burst", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "one frame of the flow", source: "QCN hardware study (bursty NIC rate limiter)", help: "Token-bucket depth of the rate limiter; the default (one frame) is smooth pacing, larger values model bursty NIC limiters." },
    ParamSpec { section: BA, key: "enabled", kind: Kind::Bool, default: "false", source: "qcnsim", help: "Run the bandwidth-available (BA) sensor at every CP (for its ba_change events) even without SONAR or push-back; both of those turn it on themselves." },
    ParamSpec { section: BA, key: "qlen_threshold", kind: Kind::Int { min: 1, max: 1_000_000 }, default: "6", source: TRP, help: "Queue length, in frames, at or above which BA = 0 (ba_qlen_threshold, 6 packets)." },
    ParamSpec { section: BA, key: "hold", kind: Kind::Time { min: 1 }, default: "10ms", source: TRP, help: "BA = 1 once the queue has stayed below qlen_threshold this long (ba_hold); the timer restarts at every drop below the threshold." },
    ParamSpec { section: SONAR, key: "enabled", kind: Kind::Bool, default: "false", source: TRP, help: "SONAR: the RP probes with special frames after each WP period; switches with BA = 0 echo them; no echo within WE puts the RP in the short fuse (HAI driven by the ping timer)." },
    ParamSpec { section: SONAR, key: "wp", kind: Kind::Time { min: 1 }, default: "10ms", source: "interpretation (the transient-response proposals give no period)", help: "Waiting-to-probe period: from a CNM (or an echo) to the next special frame." },
    ParamSpec { section: SONAR, key: "we_rtt_multiple", kind: Kind::Float { min: 0.0, max: 1e6 }, default: "4.0", source: "interpretation (the transient-response proposals give no period)", help: "Waiting-for-echo period WE = max(we_rtt_multiple x path RTT, we_min); the path RTT is twice the propagation, delay lines and switch latencies from source to destination." },
    ParamSpec { section: SONAR, key: "we_min", kind: Kind::Time { min: 1 }, default: "1ms", source: "interpretation (the transient-response proposals give no period)", help: "Lower bound of the waiting-for-echo period." },
    ParamSpec { section: SONAR, key: "sf", kind: Kind::Time { min: 1 }, default: "5ms", source: "interpretation (the transient-response proposals give no period)", help: "Short-fuse period: each expiry is one hyper-active increase of the RP." },
    ParamSpec { section: SONAR, key: "byte_counter", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "150000B", source: TRP, help: "Byte-counter cycle of the RP in the short fuse (100 packets of 1500 B)." },
    ParamSpec { section: SONAR, key: "we_starts", kind: Kind::Choice(&["special_sent", "wp_expiry"]), default: "special_sent", source: "interpretation (the transient-response proposals: the frame after WP is special, then WE)", help: "The WE period starts when the special frame leaves the rate limiter (special_sent) or when the WP timer expires (wp_expiry)." },
    ParamSpec { section: PUSHBACK, key: "enabled", kind: Kind::Bool, default: "false", source: TRP, help: "Path-based push-back: CPs sample for both signs of Fb and send Fb99 when Fb >= 0 and BA = 0; the RP's recovery timer (period pushback.timer) restarts on every CNM and Fb99, and Fb99 steps the RP back one cycle." },
    ParamSpec { section: PUSHBACK, key: "timer", kind: Kind::Time { min: 1 }, default: "5ms", source: TRP, help: "Recovery timer T of the push-back RP (5 ms or 7 ms in the reference runs); replaces cc.qcn.rp.timer and timer_after_frt while push-back is on." },
    ParamSpec { section: PUSHBACK, key: "cycle_counter", kind: Kind::Choice(&["one", "two"]), default: "one", source: "QCN transient-response slides: \"when timer or byte-counter expires: go to next cycle\", \"Fb99: go back one cycle\", HAI step R_HAI*cycle_cnt", help: "With push-back on: one cycle counter advanced by the timer or the byte counter, whichever expires, and stepped back by Fb99 (one, the slides' reading), or the two stage counters of the pseudo code (two; step_back chooses which an Fb99 decrements). Standard QCN and SONAR always use two." },
    ParamSpec { section: PUSHBACK, key: "step_back", kind: Kind::Choice(&["both", "byte_counter", "timer"]), default: "both", source: "interpretation (the transient-response proposals: \"go back one cycle\", counters not named)", help: "With cycle_counter = two: stage counters one Fb99 decrements by one (not below zero): both, si_count only, or timer_scount only." },
    ParamSpec { section: BCP, key: "q_eq", kind: Kind::Bytes { min: 64, max: u32::MAX as u64 }, default: "24000B", source: STUDY, help: "Qeq, the equilibrium queue of the BCN CP (the study: 375 pages of 64 B)." },
    ParamSpec { section: BCP, key: "w", kind: Kind::Float { min: 0.0, max: 64.0 }, default: "2.0", source: STUDY, help: "W, the weight of Qdelta in Fb = -(Qoff + W*Qdelta)." },
    ParamSpec { section: BCP, key: "page", kind: Kind::Bytes { min: 1, max: 65536 }, default: "64B", source: "interpretation (BCN calibration study: Qeq in 64-byte pages)", help: "The unit of Fb: Fb = -(Qoff + W*Qdelta) / page. Gd, Gi and fb_max are per page." },
    ParamSpec { section: BCP, key: "sample_window", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "150KB", source: STUDY, help: "Mean number of bytes enqueued between two samples; the frame that takes the countdown below zero is sampled." },
    ParamSpec { section: BCP, key: "sample_jitter", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "5KB", source: STUDY, help: "Each sampling interval is sample_window + U(-sample_jitter, +sample_jitter); must be below sample_window." },
    ParamSpec { section: BCP, key: "fb_max", kind: Kind::Float { min: 1e-3, max: 1e9 }, default: "q_eq*(2w+1)/page (1875)", source: "interpretation (the QCN quantiser's range; \"off\": Bergamasco et al., BCN patents US 7,961,621 / US 8,792,352: the message carries Qoff and Qdelta, the reaction point computes Fb)", help: "|Fb| saturates at fb_max pages (the range of the message's feedback field); the default is the QCN quantiser's range Qeq*(2W+1). \"off\": no saturation; a cut with Gd*|Fb| >= 1 sets R to min_rate." },
    ParamSpec { section: BCP, key: "q_sc", kind: Kind::Bytes { min: 1, max: 1 << 40 }, default: "off", source: STUDY, help: "Qsc: a queue above it sends BCN(0,0) (severe congestion) to the source; \"off\" sends none (data set 3 of the study uses 112.5KB)." },
    ParamSpec { section: BCP, key: "severe_check", kind: Kind::Choice(&["sample", "every_frame"]), default: "sample", source: "interpretation", help: "Compare Q with Qsc at sample instants only (instead of the Fb message), or on every enqueued frame." },
    ParamSpec { section: BRP, key: "gi", kind: Kind::Float { min: 0.0, max: 1e6 }, default: "0.53", source: STUDY, help: "Gi, the increase gain: positive BCN R <- min(R + Gi*Fb*Ru, line rate)." },
    ParamSpec { section: BRP, key: "gd", kind: Kind::Float { min: 0.0, max: 1.0 }, default: "0.00026", source: STUDY, help: "Gd, the decrease gain: negative BCN R <- max(R*(1 + Gd*Fb), min_rate); gd*fb_max must be below 1." },
    ParamSpec { section: BRP, key: "ru", kind: Kind::Rate, default: "1Mbps", source: STUDY, help: "Ru, the rate unit of the increase." },
    ParamSpec { section: BRP, key: "min_rate", kind: Kind::Rate, default: "5Mbps", source: "interpretation (the study gives no decrease floor; value by analogy with QCN rpgMinRate)", help: "Lowest rate a negative BCN may bring the regulator to." },
    ParamSpec { section: BRP, key: "r_min", kind: Kind::Rate, default: "1Gbps", source: STUDY, help: "Rmin, the severe-congestion restart rate: a BCN(0,0) sets R <- Rmin (82598 rp_rmin)." },
    ParamSpec { section: BRP, key: "t_max", kind: Kind::Time { min: 0 }, default: "0s", source: X82598, help: "Tmax: after a BCN(0,0) the regulator sends nothing for U(0, Tmax), then restarts at Rmin; 0s = no back-off (the study)." },
    ParamSpec { section: BRP, key: "drift", kind: Kind::Bool, default: "false", source: STUDY, help: "Drift: R <- min(R + drift_rate, line rate) every drift_interval without BCN messages (the study disables it)." },
    ParamSpec { section: BRP, key: "drift_interval", kind: Kind::Time { min: 1 }, default: "1ms", source: "interpretation (placeholder; 82598 rp_td, default not published)", help: "Td, the drift interval; restarted by every BCN message." },
    ParamSpec { section: BRP, key: "drift_rate", kind: Kind::Rate, default: "1Mbps", source: "interpretation (placeholder; 82598 rp_rd, default not published)", help: "Rd, the drift increase per interval." },
    ParamSpec { section: BRP, key: "check_cpid", kind: Kind::Bool, default: "true", source: "interpretation (BCN presentations: positive BCN only to a regulator this CP tagged)", help: "Apply a positive BCN only if its CPID is the regulator's tag (a tag may change while the message travels)." },
    ParamSpec { section: BRP, key: "release_at_line_rate", kind: Kind::Bool, default: "true", source: "interpretation (82598 drift: R rises until the regulator can be released)", help: "Release the regulator (untagged, unlimited) when R reaches the line rate." },
    ParamSpec { section: BRP, key: "rl_queue", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "150KB", source: STUDY, help: "Capacity of each flow's rate-limiter queue; frames beyond it are dropped at the source and counted." },
    ParamSpec { section: BRP, key: "rl_burst", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "one frame of the flow", source: "as cc.qcn.rp.rl_burst", help: "Token-bucket depth of the rate limiter (as cc.qcn.rp.rl_burst)." },
    // ---- link-level flow control (docs/models/pause.md)
    ParamSpec { section: "routing", key: "mode", kind: Kind::Choice(&["shortest", "ecmp", "spray"]), default: "shortest", source: "shortest: qcnsim's original routing; ecmp: hash-threshold multipath (RFC 2992); spray: per-packet spraying (Dixit et al., INFOCOM 2013)", help: "How flows without an explicit path are routed: one shortest path per destination (ties to the link listed first), ECMP (each switch hashes the flow's identity with its seed and keeps the flow on one of its equal-cost ports), or per-packet spraying (each data frame picks an equal-cost port at random at every switch; not with flow control)." },
    ParamSpec { section: "routing", key: "hash_seed", kind: Kind::Choice(&["per-switch", "same"]), default: "per-switch", source: "interpretation (switch vendors seed the ECMP hash per switch to avoid polarisation)", help: "ECMP: each switch hashes with its own seed derived from the run's seed (per-switch), or every switch with the same seed (same), which correlates the choices of successive tiers (polarisation)." },
    ParamSpec { section: FC, key: "mode", kind: Kind::Choice(&["none", "pause", "pfc"]), default: "none", source: "IEEE 802.3 Annex 31B (PAUSE), IEEE 802.1Qbb (PFC)", help: "Link-level flow control: none, 802.3x PAUSE (the whole link), or 802.1Qbb PFC (per priority, one queue per priority)." },
    ParamSpec { section: FC, key: "watermark", kind: Kind::Choice(&["ingress", "egress", "global"]), default: "ingress", source: "ingress: IEEE 802.1Qbb practice; egress: QCN hardware study; global: BCN calibration study", help: "What a switch measures against XOFF/XON: bytes it holds that arrived on each input port (ingress, pauses that input), each egress queue (egress, pauses the inputs that feed it), or its whole memory (global, pauses all inputs); per priority with PFC." },
    ParamSpec { section: FC, key: "xoff", kind: Kind::Bytes { min: 1, max: 1 << 40 }, default: "130KB", source: "QCN hardware study (four-RP runs: pause at 130 KB)", help: "Pause threshold: a PAUSE is sent when the occupancy exceeds it." },
    ParamSpec { section: FC, key: "xon", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "110KB", source: "QCN hardware study (four-RP runs: unpause at 110 KB)", help: "Resume threshold (below xoff): an XON (zero quanta) is sent when the occupancy falls below it." },
    ParamSpec { section: FC, key: "pause_quanta", kind: Kind::Int { min: 1, max: 65535 }, default: "65535", source: "IEEE 802.3 31B (pause_time, 512 bit times each)", help: "pause_time carried by a PAUSE/PFC frame, in quanta of 512 bit times at the link rate (65535 = 3.355 ms at 10 Gb/s)." },
    ParamSpec { section: FC, key: "refresh", kind: Kind::Float { min: 0.01, max: 1.0 }, default: "0.5", source: "interpretation (ns3-rdma re-checks at pausetime/2)", help: "While still above XON the switch re-sends the PAUSE every refresh * pause time." },
    ParamSpec { section: FC, key: "xon_only", kind: Kind::Bool, default: "false", source: "HPCC simulator model (docs/sources.md, pitfall 12)", help: "XON-only model, no timer: a receiver ignores pause_time and stays paused until an explicit XON; the switch sends no refreshes." },
    ParamSpec { section: FC, key: "response_delay", kind: Kind::Time { min: 0 }, default: "802.3 table by link rate", source: "IEEE 802.3 31B.3.7 (sonic-mgmt issue #6223): 67 quanta at 10 Gb/s", help: "Time a receiver takes to act on a PAUSE/PFC frame; frames that start before then still go out. The default is the 802.3 maximum for the link rate (1 quantum at 100 Mb/s, 2 at 1G, 67 at 10G, 80 at 25G, 118 at 40G, 147 at 50G, 394 at 100G, 453 at 200G, 905 at 400G)." },
    ParamSpec { section: FLUID, key: "model", kind: Kind::Choice(&["qcn", "dcqcn", "timely"]), default: "qcn", source: "docs/models/fluid.md", help: "Which fluid model the fluid solver integrates: QCN (Alizadeh et al., SIGMETRICS 2011; parameters from cc.qcn), DCQCN (Zhu et al., CoNEXT 2016; parameters from fluid.dcqcn) or TIMELY (Zhu et al., CoNEXT 2016; parameters from fluid.timely)." },
    ParamSpec { section: FLUID, key: "dt", kind: Kind::Time { min: 1 }, default: "0.1us", source: "qcnsim (fixed-step forward Euler)", help: "Integration step of the fluid solver; the feedback delay is rounded to a whole number of steps. At most meta.duration, and at least meta.duration / 10^9 (at most 10^9 steps)." },
    ParamSpec { section: FLUID, key: "tau", kind: Kind::Time { min: 0 }, default: "path", source: "qcnsim", help: "Feedback delay of the fluid model; \"path\" = the unloaded round trip of the flows' path: QCN from the source to the bottleneck's queue and a CNM back, DCQCN and TIMELY from the source to the destination and a 64 B CNP or ACK back (link delays, delay lines, switch latencies, one frame's transmission per hop, cc.feedback_latency)." },
    ParamSpec { section: FLUID, key: "record_interval", kind: Kind::Time { min: 1 }, default: "10us", source: "qcnsim", help: "Interval of the fluid solver's queue_samples and rp_rates rows (rounded to a whole number of steps; widened to a whole multiple when the rows would exceed metrics.max_sample_rows, with a warning_interval_widened row)." },
    ParamSpec { section: FLUID_QCN, key: "fb_saturate", kind: Kind::Bool, default: "false", source: "interpretation (the CP's quantiser saturates at Qeq(2w+1))", help: "QCN fluid: the feedback Fb of a decrease saturates at Qeq(2w+1), as the CP's 6-bit quantiser does (true), or is unbounded as in the published model (false)." },
    ParamSpec { section: FLUID_DCQCN, key: "k_min", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "5KB", source: DCQCN_FLUID, help: "Kmin: below this queue nothing is marked." },
    ParamSpec { section: FLUID_DCQCN, key: "k_max", kind: Kind::Bytes { min: 1, max: 1 << 40 }, default: "200KB", source: DCQCN_FLUID, help: "Kmax: from Kmin to Kmax the marking probability rises linearly to p_max; above Kmax every packet is marked." },
    ParamSpec { section: FLUID_DCQCN, key: "p_max", kind: Kind::Float { min: 0.0, max: 1.0 }, default: "0.01", source: DCQCN_FLUID, help: "Pmax: the marking probability at Kmax." },
    ParamSpec { section: FLUID_DCQCN, key: "g", kind: Kind::Float { min: 1e-9, max: 1.0 }, default: "0.00390625", source: DCQCN_FLUID, help: "g, the gain of the alpha average (1/256)." },
    ParamSpec { section: FLUID_DCQCN, key: "cnp_interval", kind: Kind::Time { min: 1 }, default: "50us", source: DCQCN_FLUID, help: "tau: at most one CNP (and one rate decrease) per flow per this interval." },
    ParamSpec { section: FLUID_DCQCN, key: "alpha_interval", kind: Kind::Time { min: 1 }, default: "55us", source: DCQCN_FLUID, help: "tau': the alpha update interval." },
    ParamSpec { section: FLUID_DCQCN, key: "timer", kind: Kind::Time { min: 1 }, default: "55us", source: DCQCN_FLUID, help: "T, the rate-increase timer." },
    ParamSpec { section: FLUID_DCQCN, key: "byte_counter", kind: Kind::Bytes { min: 1, max: 1 << 50 }, default: "10MB", source: DCQCN_FLUID, help: "B, the rate-increase byte counter." },
    ParamSpec { section: FLUID_DCQCN, key: "frt", kind: Kind::Int { min: 1, max: 1000 }, default: "5", source: DCQCN_FLUID, help: "F, the fast-recovery steps before additive increase." },
    ParamSpec { section: FLUID_DCQCN, key: "r_ai", kind: Kind::Rate, default: "40Mbps", source: DCQCN_FLUID, help: "R_AI, the additive-increase step of the target rate." },
    ParamSpec { section: FLUID_DCQCN, key: "unit", kind: Kind::Choice(&["packet", "bit"]), default: "packet", source: "interpretation (the authors' MATLAB counts bits; marking is per packet)", help: "What the marking probability, byte counter and rates count: packets of the flows' frame size (packet, the physical reading) or bits (bit, as the authors' MATLAB script evaluates the model)." },
    ParamSpec { section: FLUID_DCQCN, key: "start_rate", kind: Kind::Rate, default: "line", source: "DCQCN (no slow start: a flow starts at the line rate)", help: "R_C(0) = R_T(0) of every flow; \"line\" = the NIC line rate." },
    ParamSpec { section: FLUID_DCQCN, key: "alpha_start", kind: Kind::Float { min: 0.0, max: 1.0 }, default: "1.0", source: DCQCN_FLUID, help: "alpha(0)." },
    ParamSpec { section: FC, key: "queues", kind: Kind::Int { min: 1, max: 8 }, default: "8", source: "IEEE 802.1Qbb (eight priorities)", help: "PFC: data queues per port; priority p uses queue p, served in strict priority (highest first)." },
    ParamSpec { section: FC, key: "priorities", kind: Kind::IntList { min: 0, max: 7 }, default: "every queue", source: "IEEE 802.1Qbb (PFC enable vector)", help: "PFC: the lossless priorities (PFC enabled); other priorities are never paused and drop at full queues." },
    // ---- DCQCN (docs/models/dcqcn.md): defaults by `cc.dcqcn.variant`
    ParamSpec { section: FLUID_TIMELY, key: "alpha", kind: Kind::Float { min: 1e-6, max: 1.0 }, default: "0.875", source: TIMELY_FLUID, help: "alpha, the EWMA weight of the RTT gradient (eq. 22)." },
    ParamSpec { section: FLUID_TIMELY, key: "beta", kind: Kind::Float { min: 1e-6, max: 1.0 }, default: "0.8", source: TIMELY_FLUID, help: "beta, the multiplicative decrease factor (eq. 21)." },
    ParamSpec { section: FLUID_TIMELY, key: "delta", kind: Kind::Rate, default: "10Mbps", source: "Zhu et al., CoNEXT 2016 (\"delta = 10Mbps\")", help: "delta, the additive increase step per rate update (eq. 21)." },
    ParamSpec { section: FLUID_TIMELY, key: "t_low", kind: Kind::Time { min: 0 }, default: "50us", source: TIMELY_FLUID, help: "T_low: while the queue seen one feedback delay ago is below C*T_low, the rate increases by delta per update (eq. 21)." },
    ParamSpec { section: FLUID_TIMELY, key: "t_high", kind: Kind::Time { min: 1 }, default: "500us", source: TIMELY_FLUID, help: "T_high: above C*T_high the rate decreases by beta(1 - C*T_high/q) per update (eq. 21). Above t_low." },
    ParamSpec { section: FLUID_TIMELY, key: "min_rtt", kind: Kind::Time { min: 1 }, default: "20us", source: TIMELY_FLUID, help: "D_minRTT: normalises the gradient (eq. 22) and bounds the update interval from below (eq. 23)." },
    ParamSpec { section: FLUID_TIMELY, key: "seg", kind: Kind::Bytes { min: 1, max: 1 << 30 }, default: "64KB", source: "Zhu et al., CoNEXT 2016 (16-64 KB chunks; the patched model changes Seg to 16KB, so the original's is 64KB; authors' script timely2.m of 2016-01-12: Seg = 64 KB)", help: "Seg, the burst per RTT sample: a flow updates its rate every max(Seg/R, D_minRTT) (eq. 23)." },
    ParamSpec { section: FLUID_TIMELY, key: "zero_gradient", kind: Kind::Choice(&["increase", "decrease"]), default: "increase", source: "Zhu et al., CoNEXT 2016: eq. 21 (Algorithm 1, g <= 0 increases) and eq. 28 (g < 0 increases)", help: "At a gradient of exactly 0: increase by delta (increase: eq. 21, no fixed point) or apply the decrease term, which is 0 there (decrease: eq. 28, infinitely many fixed points)." },
    ParamSpec { section: FLUID_TIMELY, key: "start_rate", kind: Kind::Rate, default: "fair", source: "Zhu et al., CoNEXT 2016 (\"The starting rate for each flow is set to be 1/N of the link bandwidth\")", help: "R_i(0): \"fair\" = C/N each, \"line\" = the line rate, a rate for every flow, or a list with one rate per flow through the bottleneck (in the order of [[flows]] after expansion)." },
    ParamSpec { section: FLUID_TIMELY, key: "min_rate", kind: Kind::Rate, default: "10Mbps", source: "qcnsim (the model has no floor; Seg/R in eq. 23 needs one)", help: "Lowest rate of a flow in the TIMELY fluid model." },
    ParamSpec { section: DC, key: "variant", kind: Kind::Choice(&["paper", "ns3-rdma", "mellanox"]), default: "paper", source: "Zhu et al., SIGCOMM 2015 (paper); bobzhuyb/ns3-rdma mix/config.txt (ns3-rdma); HPCC's ns-3, rdma-hw.cc Mellanox model and mix/config.txt (mellanox)", help: "The DCQCN variant whose values are the defaults of every other cc.dcqcn key (the table in docs/models/dcqcn.md); any key set in the scenario overrides its variant's value." },
    ParamSpec { section: DC, key: "cnp_frame", kind: Kind::Bytes { min: 64, max: 1518 }, default: "64B", source: "interpretation (minimum Ethernet frame; a RoCEv2 CNP is a small frame)", help: "Size of a CNP on the wire; CNPs wait in the strict-priority control queue of each port they cross (with PFC: in the priority flow_control.cnm_priority)." },
    ParamSpec { section: DC_CP, key: "k_min", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "paper 5KB; ns3-rdma 41200B (40 cells of 1030 B); mellanox 100KB (HPCC's 25 Gb/s entry)", source: DCV, help: "Kmin: a frame that sees this many bytes or fewer in its egress queue is never marked." },
    ParamSpec { section: DC_CP, key: "k_max", kind: Kind::Bytes { min: 1, max: 1 << 40 }, default: "paper 200KB; ns3-rdma 1030000B; mellanox 400KB", source: DCV, help: "Kmax: between Kmin and Kmax the marking probability rises linearly to p_max; above Kmax every frame is marked." },
    ParamSpec { section: DC_CP, key: "p_max", kind: Kind::Float { min: 0.0, max: 1.0 }, default: "paper 0.01; ns3-rdma 1.0; mellanox 0.2", source: DCV, help: "Pmax, the marking probability at Kmax." },
    ParamSpec { section: DC_CP, key: "mark_at", kind: Kind::Choice(&["dequeue", "enqueue"]), default: "dequeue", source: "HPCC's ns-3 and ns3-rdma mark at dequeue (dequeue); enqueue: interpretation", help: "When a data frame is marked (CE): as it leaves the egress queue, against the bytes it leaves behind (dequeue), or as it is admitted, against the queue including it (enqueue). With PFC the queue is the frame's priority queue." },
    ParamSpec { section: DC_NP, key: "cnp_interval", kind: Kind::Time { min: 0 }, default: "paper 50us; ns3-rdma 50us; mellanox 0s", source: "Zhu et al. 2015 (N = 50 us); ns3-rdma CNP_INTERVAL; HPCC echoes every marked packet in its ACK (0s)", help: "N: the receiver sends at most one CNP per flow per interval: at once for the first marked frame after a quiet interval, else at the end of the interval; 0s = a CNP for every marked frame." },
    ParamSpec { section: DC_RP, key: "g", kind: Kind::Float { min: 1e-9, max: 1.0 }, default: "0.00390625 (all variants)", source: DCV, help: "g, the gain of alpha: alpha <- (1-g)alpha + g at a decrease (or per slot with a CNP), (1-g)alpha per K without." },
    ParamSpec { section: DC_RP, key: "alpha_start", kind: Kind::Float { min: 0.0, max: 1.0 }, default: "paper 1.0; ns3-rdma 0.5; mellanox 1.0", source: DCV, help: "alpha when the rate limiter is allocated by the first CNP." },
    ParamSpec { section: DC_RP, key: "alpha_interval", kind: Kind::Time { min: 1 }, default: "paper 55us; ns3-rdma 55us; mellanox 1us", source: DCV, help: "K, the alpha timer." },
    ParamSpec { section: DC_RP, key: "alpha_update", kind: Kind::Choice(&["cut_then_update", "update_then_cut", "periodic"]), default: "paper cut_then_update; ns3-rdma update_then_cut; mellanox periodic", source: DCV, help: "At a decrease, cut with alpha then update it (cut_then_update, the paper's order), or update first (update_then_cut, ns3-rdma; HPCC issue #52), the K timer restarting at each decrease; or update alpha on a fixed K grid from the first CNP, +g for slots with a CNP (periodic, HPCC UpdateAlphaMlx)." },
    ParamSpec { section: DC_RP, key: "first_cnp_rate", kind: Kind::Float { min: 0.0, max: 1.0 }, default: "paper off; ns3-rdma off; mellanox 1.0", source: "HPCC rdma-hw.cc RateOnFirstCnp (1.0; CX4 uses 0, HPCC issue #11)", help: "When set, the first CNP of a flow sets RC = RT = first_cnp_rate x RC and alpha = alpha_start without a cut (a decrease interval still schedules one); \"off\": the first CNP is an ordinary decrease from the line rate." },
    ParamSpec { section: DC_RP, key: "decrease_interval", kind: Kind::Time { min: 0 }, default: "paper 0s; ns3-rdma 0s; mellanox 4us", source: "HPCC rdma-hw.cc RateDecreaseInterval (RATE_DECREASE_INTERVAL 4)", help: "0s: every CNP cuts the rate at once. Otherwise CNPs set a flag and the rate is cut once at the next point of a grid of this period started at the first CNP." },
    ParamSpec { section: DC_RP, key: "clamp_target_rate", kind: Kind::Choice(&["always", "byte_stage", "time_stage", "any_stage"]), default: "paper always; ns3-rdma always; mellanox time_stage", source: "Zhu et al. 2015 (RT = RC); ns3-rdma ClampTargetRate / ClampTargetRateAfterTimeInc; HPCC CheckRateDecreaseMlx", help: "When a decrease sets RT = RC (and restarts the byte counter): always, only after a byte-counter cycle since the last decrease (byte_stage: ns3-rdma with both clamp options off), only after a timer cycle (time_stage: HPCC with ClampTargetRate off), or after either (any_stage: ns3-rdma ClampTargetRateAfterTimeInc)." },
    ParamSpec { section: DC_RP, key: "timer", kind: Kind::Time { min: 1 }, default: "paper 55us; ns3-rdma 60us; mellanox 900us", source: DCV, help: "T, the rate-increase timer (restarted by each decrease)." },
    ParamSpec { section: DC_RP, key: "byte_counter", kind: Kind::Bytes { min: 64, max: 1 << 50 }, default: "paper 10MB; ns3-rdma 300MB; mellanox (none)", source: "Zhu et al. 2015 (B = 10 MB); ns3-rdma BYTE_COUNTER (300 MB: effectively off, ns3-rdma issue #9); HPCC has no byte counter", help: "B, the rate-increase byte counter (with increase = \"timer_and_bytes\")." },
    ParamSpec { section: DC_RP, key: "increase", kind: Kind::Choice(&["timer_and_bytes", "timer_only"]), default: "paper timer_and_bytes; ns3-rdma timer_and_bytes; mellanox timer_only", source: DCV, help: "Rate increase driven by the timer and the byte counter (QCN's two counters), or by the timer only (HPCC's Mellanox model)." },
    ParamSpec { section: DC_RP, key: "frt", kind: Kind::Int { min: 1, max: 1000 }, default: "paper 5; ns3-rdma 4 (F = 5); mellanox 1", source: DCV, help: "F in QCN's stage rule: FR while both stage counters are <= frt, AI when one is past it, HAI when both are, step R_HAI*(min - frt). ns3-rdma's FR while both stages are < F, HAI R_HAI*(min - F + 1), is this rule with frt = F - 1; with stage_gate = \"timer\", FR while the timer stage is <= frt, AI at frt + 1, HAI beyond (HPCC)." },
    ParamSpec { section: DC_RP, key: "stage_gate", kind: Kind::Choice(&["both", "timer"]), default: "paper both; ns3-rdma both; mellanox timer", source: DCV, help: "Which stage counters decide FR/AI/HAI: both (QCN's rule, see frt) or the timer stage alone (HPCC RateIncEventMlx)." },
    ParamSpec { section: DC_RP, key: "hai_mode", kind: Kind::Choice(&["multiplied", "constant"]), default: "paper multiplied; ns3-rdma multiplied; mellanox constant", source: DCV, help: "HAI step R_HAI times the HAI cycle count (multiplied) or R_HAI (constant)." },
    ParamSpec { section: DC_RP, key: "r_ai", kind: Kind::Rate, default: "paper 40Mbps; ns3-rdma 40Mbps; mellanox 50Mbps", source: DCV, help: "R_AI, the active-increase step of RT." },
    ParamSpec { section: DC_RP, key: "r_hai", kind: Kind::Rate, default: "paper 200Mbps; ns3-rdma 200Mbps; mellanox 100Mbps", source: "ns3-rdma RATE_HAI (the paper gives no value; its first author's simulator); HPCC RATE_HAI", help: "R_HAI, the hyper-active increase step of RT." },
    ParamSpec { section: DC_RP, key: "target_rate_reduction", kind: Kind::Bool, default: "paper false; ns3-rdma true; mellanox false", source: "ns3-rdma AdjustRates (QCN's TR > 10 CR => TR/8 in the first cycle)", help: "QCN's target-rate reduction in the first cycle after a decrease (cc.qcn.rp.target_rate_reduction)." },
    ParamSpec { section: DC_RP, key: "cap_target_rate", kind: Kind::Bool, default: "paper true; ns3-rdma false; mellanox true", source: "HPCC caps RT at the line rate; ns3-rdma caps only the rate (docs/sources.md, pitfall 5)", help: "Cap RT at the line rate (RC is always capped)." },
    ParamSpec { section: DC_RP, key: "min_rate", kind: Kind::Rate, default: "100Mbps (all variants)", source: "ns3-rdma, HPCC and htsim MinRate", help: "Lowest rate a decrease may bring RC to." },
    ParamSpec { section: DC_RP, key: "rl_queue", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "150KB", source: "interpretation (as cc.qcn.rp.rl_queue)", help: "Capacity of each flow's rate-limiter queue; frames beyond it are dropped at the source and counted." },
    ParamSpec { section: DC_RP, key: "rl_burst", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "one frame of the flow", source: "as cc.qcn.rp.rl_burst", help: "Token-bucket depth of the rate limiter." },
    ParamSpec { section: FC, key: "cnm_priority", kind: Kind::Int { min: 0, max: 7 }, default: "the highest queue", source: "IEEE 802.1Q MIB cnmTransmitPriority (highest queue)", help: "PFC: priority of CNMs; they wait while that priority is paused (with PAUSE they wait while the link is paused)." },
    ParamSpec { section: FC, key: "deadlock_detection", kind: Kind::Time { min: 1 }, default: "off", source: "qcnsim (cyclic buffer dependency: Hu et al., HotNets 2016)", help: "Report a PFC deadlock (summary rows deadlocks, deadlock_detected; pause_events kind deadlock) when a cycle of switch egress ports has been paused with frames waiting and without sending a data frame for this long; \"off\" = no detection. Checked every tenth of the smaller of this and watchdog. At least one 64-byte frame at the fastest link's rate (51.2 ns at 10 Gb/s)." },
    ParamSpec { section: FC, key: "watchdog", kind: Kind::Time { min: 1 }, default: "off", source: "switch vendors' PFC watchdogs (e.g. SONiC pfcwd, action forward)", help: "Pause-storm watchdog of switch egress ports: a class paused continuously this long with frames waiting ignores PAUSE/PFC frames for watchdog_restore (it is resumed at once); \"off\" = none. At least one 64-byte frame at the fastest link's rate (51.2 ns at 10 Gb/s)." },
    ParamSpec { section: FC, key: "watchdog_restore", kind: Kind::Time { min: 1 }, default: "200ms", source: "SONiC pfcwd default restoration time (200 ms)", help: "How long a class the watchdog fired on ignores PAUSE/PFC frames." },
    // ---- shared-buffer switch memory (docs/models/buffer.md)
    ParamSpec { section: SB, key: "size", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "off", source: "qcnsim (shared-memory switches: Choudhury & Hahne 1998; HPCC ns-3 SwitchMmu)", help: "Size of each selected switch's packet memory, shared by all its ports; \"off\" keeps a private buffer per egress queue (the switches' and links' `buffer`). When on, the per-port `buffer` of those switches is not used." },
    ParamSpec { section: SB, key: "cell", kind: Kind::Bytes { min: 1, max: 4096 }, default: "1B", source: "qcnsim (switch memories allocate in cells, e.g. 64, 80, 208 B)", help: "Allocation unit: a frame of b bytes occupies ceil(b / cell) cells; sizes, reserves, thresholds and headroom are whole cells (rounded down; auto headroom rounded up)." },
    ParamSpec { section: SB, key: "ingress_reserved", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "0B", source: "SONiC buffer profiles (size), HPCC SwitchMmu (reserve)", help: "Guaranteed space of every ingress priority group (input port x priority): a PG holding less is always admitted. Taken out of the shared region." },
    ParamSpec { section: SB, key: "egress_reserved", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "0B", source: "SONiC buffer profiles (egress queue size)", help: "Space of every egress queue (output port x queue) that always passes the egress check (the ingress check still applies)." },
    ParamSpec { section: SB, key: "ingress_threshold", kind: Kind::Choice(&["dynamic", "static", "none"]), default: "dynamic", source: "Choudhury & Hahne 1998 (dynamic); SONiC static_th / dynamic_th", help: "Limit of one ingress PG's shared use: alpha x free shared space (dynamic), a fixed size (static, ingress_static), or none (only the shared region). For a lossless PG it is the XOFF threshold." },
    ParamSpec { section: SB, key: "ingress_alpha", kind: Kind::Float { min: 0.0, max: 1024.0 }, default: "1.0", source: "Choudhury & Hahne 1998 (alpha = 1); SONiC lossless profile dynamic_th = 0, i.e. 2^0", help: "alpha of the dynamic ingress threshold." },
    ParamSpec { section: SB, key: "ingress_static", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "required with ingress_threshold = \"static\"", source: "SONiC static_th", help: "Static ingress threshold: the shared bytes one PG may use." },
    ParamSpec { section: SB, key: "egress_threshold", kind: Kind::Choice(&["dynamic", "static", "none", "port"]), default: "dynamic", source: "Choudhury & Hahne 1998 (dynamic); SONiC static_th / dynamic_th; port: the BCN calibration study's per-port queues under a global watermark", help: "Limit of one egress queue's use beyond its reserve: alpha x free shared space (dynamic), a fixed size (static, egress_static), or none; frames of lossless priorities skip these. port: each queue holds at most its port's own `buffer` (egress_reserved unused), lossless frames included, as a private queue would; flow_control.watermark = \"global\" uses it." },
    ParamSpec { section: SB, key: "egress_alpha", kind: Kind::Float { min: 0.0, max: 1024.0 }, default: "1.0", source: "Choudhury & Hahne 1998 (alpha = 1)", help: "alpha of the dynamic egress threshold." },
    ParamSpec { section: SB, key: "egress_static", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "required with egress_threshold = \"static\"", source: "SONiC static_th", help: "Static egress threshold: the bytes beyond its reserve one egress queue may hold." },
    ParamSpec { section: SB, key: "headroom", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "auto", source: "IEEE 802.1Qbb headroom (docs/models/pause.md, Headroom)", help: "With flow control on: headroom of every lossless ingress PG, the frames that still arrive after XOFF. auto = the bound of the PG's input link plus one frame (docs/models/buffer.md); a smaller value is allowed and reported (summary row buffer_headroom_short)." },
    ParamSpec { section: SB, key: "xon_offset", kind: Kind::Bytes { min: 0, max: 1 << 40 }, default: "3000B", source: "interpretation (two 1500 B frames; SONiC profiles carry an xon_offset)", help: "XON hysteresis: a paused PG resumes when its headroom is empty and its shared use is at least this far below its threshold (or zero)." },
    ParamSpec { section: SB, key: "xoff_scope", kind: Kind::Choice(&["pg", "pool"]), default: "pg", source: "pg: 802.1Qbb per-PG thresholds (SwitchMmu); pool: the global watermark of the BCN calibration study", help: "What decides XOFF/XON: each lossless PG's shared use against its ingress threshold (pg), or the whole memory against flow_control.xoff / xon, pausing every input at once (pool)." },
    // ---- DCTCP (docs/models/dctcp.md)
    ParamSpec { section: DCTCP, key: "k", kind: Kind::Int { min: 0, max: 1 << 40 }, default: "65", source: "Alizadeh et al. 2010 (K = 65 packets at 10 Gb/s, 20 at 1 Gb/s; Linux Documentation/networking/dctcp.txt: 20 packets (30KB) at 1Gbps, 65 packets (~100KB) at 10Gbps)", help: "K, the marking threshold: a data frame is marked CE when the egress queue it joins holds more than K (in the unit of k_unit; with PFC, its priority queue)." },
    ParamSpec { section: DCTCP, key: "k_unit", kind: Kind::Choice(&["frames", "bytes"]), default: "frames", source: DCTCP10, help: "What K counts: frames (packets, as the paper gives K) or bytes." },
    ParamSpec { section: DCTCP, key: "mark_queue", kind: Kind::Choice(&["before", "with"]), default: "before", source: "before: the paper, sec. 3.1 (\"if the queue occupancy is greater than K upon its arrival\"); with: interpretation", help: "The occupancy compared with K: the queue the frame finds on arrival, without it (before), or with it (with)." },
    ParamSpec { section: DCTCP, key: "g", kind: Kind::Float { min: 1e-9, max: 1.0 }, default: "0.0625", source: "Alizadeh et al. 2010 (g = 1/16)", help: "g, the weight of the newest marked fraction F: alpha <- (1 - g) alpha + g F once per window of data (eq. 1)." },
    ParamSpec { section: DCTCP, key: "alpha_start", kind: Kind::Float { min: 0.0, max: 1.0 }, default: "1.0", source: "RFC 8257 sec. 3.3 and Linux tcp_dctcp (alpha starts at its maximum; the paper gives no value)", help: "alpha when a flow starts." },
    ParamSpec { section: DCTCP, key: "echo", kind: Kind::Choice(&["state_machine", "count"]), default: "state_machine", source: "state_machine: the paper's Figure 10; count: interpretation (an accurate-ECN reading)", help: "How the receiver echoes CE: one ECN-Echo bit per ACK, with an ACK at once when the CE bit of the arriving frames changes (state_machine; with transport.ack_interval = 1, every frame's own bit), or each ACK carrying how many of the frames it covers were marked (count)." },
    ParamSpec { section: DCTCP, key: "init_window", kind: Kind::Int { min: 1, max: 1 << 30 }, default: "10", source: "RFC 6928 (Linux's initial window since 2.6.39; the paper gives none)", help: "The window a flow starts with, in frames (MSS = the flow's frame size)." },
    ParamSpec { section: DCTCP, key: "min_window", kind: Kind::Int { min: 1, max: 1 << 30 }, default: "2", source: "Linux tcp_dctcp (dctcp_ssthresh keeps at least 2 packets)", help: "The least window, in frames: no cut, loss or timeout takes the window below it." },
    ParamSpec { section: DCTCP, key: "max_window", kind: Kind::Int { min: 1, max: 1 << 30 }, default: "10000", source: "interpretation (a receiver window that no reference experiment reaches)", help: "The largest window, in frames." },
    ParamSpec { section: DCTCP, key: "slow_start", kind: Kind::Bool, default: "true", source: "RFC 5681 (TCP's slow start; the paper's DCTCP is TCP with a new window cut)", help: "Slow start: below ssthresh (at first the largest window) the window grows by the bytes acknowledged; false: congestion avoidance from the start (one MSS per window of data)." },
    ParamSpec { section: DCTCP, key: "cwr_growth", kind: Kind::Choice(&["hold", "grow"]), default: "hold", source: "hold: Linux tcp_cong_control (no growth while the window is reduced; RFC 3168 sec. 6.1.2's congestion-window-reduced state); grow: the idealisation of the paper's sec. 3.3 analysis", help: "After a cut, until the data sent before it is acknowledged: the window holds (hold), or keeps growing by one MSS per window of data (grow). No second cut either way." },
    ParamSpec { section: DCTCP, key: "rl_queue", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "150KB", source: "interpretation (as cc.qcn.rp.rl_queue)", help: "Each flow's send queue: the frames its source made that wait for the window (its rate-limiter queue); a greedy source or a NIC holding a message waits for room, another source's frames beyond it are dropped at the source." },
    // ---- HPCC (docs/models/hpcc.md)
    ParamSpec { section: HPCC, key: "eta", kind: Kind::Float { min: 0.01, max: 1.0 }, default: "0.95", source: "Li et al., SIGCOMM 2019 (95 %, per the authors' project page); run.py --utgt 95", help: "eta, the target utilisation: the window is scaled by eta/U (the authors' later runs use 0.99, hpcc-group.github.io)." },
    ParamSpec { section: HPCC, key: "max_stage", kind: Kind::Int { min: 0, max: 1000 }, default: "0", source: "run.py MI_THRESH (--mi 0); hpcc-group.github.io: maxStage = 0 is the paper's simulation setting, its text's 5 a typo for the simulation (5 was used in the testbed, issue #24)", help: "maxStage: updates of additive increase (W = Wc + W_AI) while U < eta before a multiplicative one (W = Wc eta/U + W_AI); 0: always multiplicative. The paper's text says 5." },
    ParamSpec { section: HPCC, key: "w_ai", kind: Kind::Bytes { min: 0, max: 1 << 30 }, default: "auto", source: "the paper's rule of thumb W_AI = W_init (1 - eta) / N, as the HPCC++ draft restates it (Configuration Parameters)", help: "W_AI, the additive increase per update (bytes); \"auto\" = W_init (1 - eta) / n_flows, W_init = line rate x T of the sender." },
    ParamSpec { section: HPCC, key: "n_flows", kind: Kind::Int { min: 1, max: 1_000_000 }, default: "125", source: "qcnsim: with eta = 0.95 it gives run.py's RATE_AI = 10 x bw/25 Mb/s (B (1 - 0.95) / 125), W_AI = RATE_AI x T", help: "N of the rule W_AI = W_init (1 - eta) / N: the expected largest number of concurrent flows on a link (used with w_ai = \"auto\")." },
    ParamSpec { section: HPCC, key: "base_rtt", kind: Kind::Time { min: 1 }, default: "global", source: "run.py / config.txt GLOBAL_T 1 (third.cc maxRtt); Li et al. 2019: T, the base RTT", help: "T: \"global\" = the largest base RTT between two hosts of the scenario (ns-3 GLOBAL_T 1), \"path\" = each flow's own (GLOBAL_T 0), or a time. A base RTT is twice the path's propagation delay plus one full data frame's serialisation at each hop of the way there (third.cc)." },
    ParamSpec { section: HPCC, key: "min_rate", kind: Kind::Rate, default: "1Gbps", source: "run.py MIN_RATE 1000Mb/s (mix/config.txt: 100Mb/s)", help: "The lowest pacing rate: W is kept at or above min_rate x T (at most a sender's line rate)." },
    ParamSpec { section: HPCC, key: "u_init", kind: Kind::Float { min: 0.0, max: 100.0 }, default: "1.0", source: "ns-3 rdma-queue-pair.cc (hp.u = 1); the paper gives none", help: "U before the first telemetry sample." },
    ParamSpec { section: HPCC, key: "qlen", kind: Kind::Choice(crate::proto::hpcc::QlenSample::NAMES), default: "min", source: "Li et al. 2019, Algorithm 1 line 5 (min, as ns-3 UpdateRateHp); current: Eqn (2) with the new record only", help: "The queue length in u' = qlen/(B T) + txRate/B: the smaller of this and the previous record's (min) or this record's (current)." },
    ParamSpec { section: HPCC, key: "fast_react", kind: Kind::Bool, default: "true", source: "Li et al. 2019, Algorithm 1 (per-ACK W); ns-3 FAST_REACT 1", help: "React to every ACK (W from the reference window Wc); false: only the ACK that ends an RTT counts, the others change nothing." },
    ParamSpec { section: HPCC, key: "sample_feedback", kind: Kind::Bool, default: "false", source: "ns-3 SAMPLE_FEEDBACK (0 in run.py)", help: "Between updates, ignore the records of hops with an empty queue." },
    ParamSpec { section: HPCC, key: "multi_rate", kind: Kind::Bool, default: "false", source: "ns-3 MULTI_RATE (0 in run.py; Algorithm 1 has one)", help: "One U, Wc and incStage per hop, W the smallest of the hops' windows; false: one for the path (Algorithm 1)." },
    ParamSpec { section: HPCC, key: "rate_bound", kind: Kind::Bool, default: "true", source: "Li et al. 2019 (R = W/T); ns-3 RATE_BOUND 1", help: "Pace the sender at R = W/T; false: its rate limiter stays at line rate (the window alone limits it)." },
    ParamSpec { section: HPCC, key: "has_win", kind: Kind::Bool, default: "true", source: "Li et al. 2019 (window-based); ns-3 HAS_WIN 1, VAR_WIN 1", help: "Limit the bytes in flight to W; false: no window (pacing alone)." },
    ParamSpec { section: HPCC, key: "int_bytes", kind: Kind::Bytes { min: 0, max: 1024 }, default: "42B", source: "ns-3 int-header.h/.cc: 5 hop slots of 8 B + a 2 B hop count, in every data packet and ACK", help: "INT bytes every data frame carries whatever its hop count (ns-3 also puts them in every ACK)." },
    ParamSpec { section: HPCC, key: "int_bytes_per_hop", kind: Kind::Bytes { min: 0, max: 256 }, default: "0B", source: "interpretation (8 B per hop as ns-3's IntHop, with int_bytes = 2B: a header growing with the path)", help: "INT bytes added per switch hop crossed." },
    ParamSpec { section: HPCC, key: "rl_queue", kind: Kind::Bytes { min: 64, max: 1 << 40 }, default: "150KB", source: "interpretation (as cc.dctcp.rl_queue)", help: "Each flow's send queue: the frames its source made that wait for the window or the pacing rate (its rate-limiter queue); a greedy source or a NIC holding a message waits for room, another source's frames beyond it are dropped at the source." },
    // ---- go-back-N transport of finite flows (docs/models/transport.md)
    ParamSpec { section: TM, key: "alpha", kind: Kind::Float { min: 1e-6, max: 1.0 }, default: "0.875", source: TIMELY_REC, help: "alpha, the EWMA weight of new_rtt_diff in rtt_diff (Algorithm 1). The first author's code snippet recommends 0.02." },
    ParamSpec { section: TM, key: "beta", kind: Kind::Float { min: 1e-6, max: 1.0 }, default: "0.8", source: TIMELY_REC, help: "beta, the multiplicative decrement factor: rate(1 - beta(1 - T_high/new_rtt)) above T_high, rate(1 - beta*gradient) for a positive gradient." },
    ParamSpec { section: TM, key: "delta", kind: Kind::Rate, default: "10Mbps", source: "Zhu et al., CoNEXT 2016 (\"delta = 10Mbps\"); first author's code snippet (10Mbps for 10Gbps line rate); HPCC's ns-3 uses 10 Mb/s per 10 Gb/s", help: "delta, the additive increment step." },
    ParamSpec { section: TM, key: "t_low", kind: Kind::Time { min: 0 }, default: "50us", source: TIMELY_REC, help: "T_low: an RTT sample below it increases the rate by delta whatever the gradient. The code snippet: 0 with per-packet pacing, 50 us with 64 KB segments." },
    ParamSpec { section: TM, key: "t_high", kind: Kind::Time { min: 1 }, default: "500us", source: TIMELY_REC, help: "T_high: an RTT sample above it decreases the rate by beta(1 - T_high/new_rtt). Above t_low. The code snippet recommends 1 ms." },
    ParamSpec { section: TM, key: "min_rtt", kind: Kind::Time { min: 1 }, default: "20us", source: TIMELY_REC, help: "minRTT, the fixed RTT that normalises the gradient (normalized_gradient = rtt_diff / minRTT)." },
    ParamSpec { section: TM, key: "seg", kind: Kind::Bytes { min: 64, max: 1 << 30 }, default: "64KB", source: "TIMELY: RTT once per completion of a 16-64 KB segment (Zhu et al., CoNEXT 2016, sec. 4); 64 KB with T_low = 50 us in the first author's code snippet", help: "Seg: with sampling = \"segment\", the acknowledgement that completes each seg bytes of the flow gives the RTT sample." },
    ParamSpec { section: TM, key: "sampling", kind: Kind::Choice(&["segment", "ack", "rtt"]), default: "segment", source: "segment: TIMELY (one sample per completion event); ack: a per-packet reading; rtt: HPCC's ns-3 RdmaHw::HandleAckTimely (one update per round trip)", help: "Which acknowledgements are RTT samples: the one completing each segment, every acknowledgement of new data, or the first acknowledgement of a frame sent after the previous sample (once per round trip)." },
    ParamSpec { section: TM, key: "step_scaling", kind: Kind::Choice(&["none", "min_rtt"]), default: "min_rtt", source: "none: TIMELY Algorithm 1 as printed (Zhu et al., CoNEXT 2016, Algorithm 1); min_rtt: the first author's code snippet (delta_factor) and CoNEXT 2016 sec. 5.2 (\"rate updates are scaled by D_minRTT to ensure that rate update frequency is limited\", its eq. 23)", help: "none: every RTT sample is a full step, so a flow sampling more often (with segment sampling, a faster flow) makes more increases per unit time; min_rtt: each additive step (delta, N*delta) and the T_high decrease are scaled by min(1, time since the previous update / min_rtt), at most delta per min_rtt, as the fluid model's update interval max(Seg/R, D_minRTT)." },
    ParamSpec { section: TM, key: "hai_threshold", kind: Kind::Int { min: 1, max: 1_000_000 }, default: "5", source: "first author's code snippet (HAI_Thresh = 5); HPCC's ns-3 (5 increase stages)", help: "Hyperactive increase: from this many consecutive samples with gradient <= 0 (this one included), the gradient-branch increase is hai_factor*delta." },
    ParamSpec { section: TM, key: "hai_factor", kind: Kind::Float { min: 1.0, max: 1e6 }, default: "5.0", source: "TIMELY Algorithm 1 (N = 5); first author's code snippet; HPCC's ns-3 RATE_HAI = 5 x RATE_AI", help: "N, the multiple of delta in hyperactive increase." },
    ParamSpec { section: TM, key: "min_rate", kind: Kind::Rate, default: "100Mbps", source: "HPCC's ns-3 MIN_RATE (100 Mb/s); TIMELY gives none (\"minRate = optional\" in the code snippet)", help: "Lowest rate; the highest is the flow's NIC line rate." },
    ParamSpec { section: TM, key: "start_rate", kind: Kind::Rate, default: "line", source: "Zhu et al., CoNEXT 2016 sec. 4: a new flow starts at C/(N+1) with N flows active at its sender (one flow: the line rate); HPCC's ns-3 TIMELY starts every flow at its NIC rate (rdma-hw.cc)", help: "The rate of a flow at its start; \"line\" = the NIC line rate; or a list with one rate per flow (in the order of [[flows]] after expansion; qcnsim, for the fixed-point experiment)." },
    ParamSpec { section: SW, key: "ai", kind: Kind::Float { min: 1e-9, max: 1e6 }, default: "1.0", source: HTSIM_SWIFT, help: "ai, the additive increment: a window grows by ai/cwnd per acknowledged packet (ai per acknowledged packet below one packet), about ai packets per RTT." },
    ParamSpec { section: SW, key: "beta", kind: Kind::Float { min: 1e-9, max: 1e6 }, default: "0.8", source: HTSIM_SWIFT, help: "beta, the multiplicative decrease constant: cwnd(1 - beta(delay - target)/delay), at most max_mdf." },
    ParamSpec { section: SW, key: "max_mdf", kind: Kind::Float { min: 1e-6, max: 0.999999 }, default: "0.5", source: HTSIM_SWIFT, help: "max_mdf, the largest fraction of the window one decrease (or a loss) takes." },
    ParamSpec { section: SW, key: "base_target", kind: Kind::Time { min: 0 }, default: "20us", source: HTSIM_SWIFT, help: "base_target, the target delay of a one-hop path with few flows (propagation, serialization, a small queue, timestamp error)." },
    ParamSpec { section: SW, key: "h", kind: Kind::Time { min: 0 }, default: "3.05us", source: "htsim sim/swift.cpp (h = base_target/6.55, marked there as a guess)", help: "h, the per-hop scaling of the fabric target: base_target + hops*h + flow scaling (hops: the switch hops of the acknowledged frame)." },
    ParamSpec { section: SW, key: "fs_range", kind: Kind::Time { min: 0 }, default: "100us", source: "htsim sim/swift.cpp (fs_range = 5 x base_target, marked there as a guess)", help: "fs_range, the flow-scaling part of the fabric target at fs_min_cwnd: clamp(alpha/sqrt(fcwnd) + beta, 0, fs_range), alpha = fs_range/(1/sqrt(fs_min_cwnd) - 1/sqrt(fs_max_cwnd)), beta = -alpha/sqrt(fs_max_cwnd)." },
    ParamSpec { section: SW, key: "fs_min_cwnd", kind: Kind::Float { min: 1e-9, max: 1e9 }, default: "0.1", source: HTSIM_SWIFT, help: "fs_min_cwnd (packets): at and below it the flow-scaling term is fs_range. Below fs_max_cwnd." },
    ParamSpec { section: SW, key: "fs_max_cwnd", kind: Kind::Float { min: 1e-9, max: 1e9 }, default: "100.0", source: HTSIM_SWIFT, help: "fs_max_cwnd (packets): at and above it the flow-scaling term is 0." },
    ParamSpec { section: SW, key: "endpoint_target", kind: Kind::Time { min: 0 }, default: "20us", source: "interpretation (no public value found; the base target)", help: "The endpoint target delay of the endpoint window ecwnd (cwnd = min(fcwnd, ecwnd)); \"off\": no endpoint window. The endpoint delay is the hosts' part of the RTT (receiver NIC to ACK, sender NIC to stack)." },
    ParamSpec { section: SW, key: "retx_reset_threshold", kind: Kind::Int { min: 1, max: 1_000_000 }, default: "5", source: HTSIM_SWIFT, help: "RETX_RESET_THRESHOLD: this many consecutive retransmission timeouts set the windows to min_cwnd." },
    ParamSpec { section: SW, key: "min_cwnd", kind: Kind::Float { min: 1e-9, max: 1e9 }, default: "0.001", source: "Swift (Kumar et al., SIGCOMM 2020): the window may fall \"below one packet down to a minimum of 0.001 packets\" (quoted in public notes on the paper)", help: "min_cwnd (packets); below one packet the sender paces one packet per rtt/cwnd." },
    ParamSpec { section: SW, key: "max_cwnd", kind: Kind::Float { min: 1e-9, max: 1e9 }, default: "1000.0", source: "htsim sim/swift.cpp (1000 packets, marked there as a guess)", help: "max_cwnd (packets). At least min_cwnd." },
    ParamSpec { section: SW, key: "start_cwnd", kind: Kind::Float { min: 1e-9, max: 1e9 }, default: "12.0", source: "htsim SwiftSubflowSrc::_default_cwnd (12 packets)", help: "Both windows at the flow's start (packets), clamped to [min_cwnd, max_cwnd]." },
    ParamSpec { section: SW, key: "window_check", kind: Kind::Choice(&["after_send", "before_send"]), default: "after_send", source: "after_send: htsim sim/swift.cpp send_packets (sends while _last_acked + cwnd >= _highest_sent + mss) and Linux tcp_cwnd_test (in flight < an integer cwnd); before_send: qcnsim's transport check before (HPCC's ns-3 IsWinBound: on the fly >= win)", help: "When the transport lets a frame of a Swift flow leave: after_send, when the bytes in flight with it are at most the window (cwnd = 1.5 packets: one packet in flight); before_send, when the bytes in flight before it are below the window (cwnd = 1.5: two). With nothing in flight a frame always leaves." },
    ParamSpec { section: SW, key: "rx_delay", kind: Kind::Time { min: 0 }, default: "0us", source: "qcnsim (no public value of a NIC Rx-to-ACK delay found; the simulator models no host); the Swift paper's endpoint delay is the remote NIC Rx-to-ACK time echoed in the ACK plus the local NIC Rx delay, as quoted in public notes", help: "The receiving host's delay from a data frame's arrival to the ACK (or NACK) it makes leaving, constant; Swift reads it as the endpoint delay (fabric delay = RTT - rx_delay), so the endpoint window ecwnd binds when it exceeds endpoint_target. 0: the whole RTT is fabric delay." },
    ParamSpec { section: SW, key: "last_decrease", kind: Kind::Choice(&["decrease", "not_increase"]), default: "decrease", source: "decrease: htsim applySwiftLimits (cwnd < cwnd_prev); not_increase: INET Swift.cc set_final_cwnd_values (cwnd <= cwnd_prev)", help: "When t_last_decrease is set (the once-per-RTT decrease gate): when the window went down, or when it did not go up (then a refused decrease also restarts the RTT interval)." },
    ParamSpec { section: TP, key: "rto", kind: Kind::Time { min: 1 }, default: "320us", source: "IRN's fixed RTO_high (Mittal et al., SIGCOMM 2018); RoCE NICs configure 4.096 us x 2^n (IBTA local ACK timeout)", help: "Retransmission timeout of a go-back-N flow: when no acknowledgement has advanced for this long while frames are on the wire unacknowledged, the sender goes back to the first unacknowledged frame." },
    ParamSpec { section: TP, key: "ack_interval", kind: Kind::Int { min: 1, max: 1 << 20 }, default: "1", source: "HPCC's ns-3 L2_ACK_INTERVAL (1 in its configurations)", help: "The receiver of a go-back-N flow acknowledges every this many frames received in order (or duplicate), and always the last frame of the message." },
    ParamSpec { section: TP, key: "nack_interval", kind: Kind::Time { min: 0 }, default: "500us", source: "HPCC's ns-3 NACK_GENERATION_INTERVAL (500 us)", help: "Least time between two NACKs a receiver sends for the same missing frame (out-of-order frames in between are discarded silently)." },
    ParamSpec { section: TP, key: "ack_delay", kind: Kind::Time { min: 1 }, default: "40us", source: "interpretation (RFC 1122 sec. 4.2.3.2: an ACK may be delayed, not without bound; an eighth of transport.rto, as Linux's 40 ms delayed-ACK minimum is a fifth of its 200 ms minimum RTO)", help: "Flows of an acknowledged congestion control (cc.mode = \"dctcp\", \"hpcc\", \"timely\", \"swift\") with ack_interval > 1: frames received and not yet acknowledged are acknowledged at the latest this long after the first of them arrived (the delayed-ACK timer), so a window smaller than ack_interval does not wait for the retransmission timer." },
    ParamSpec { section: TP, key: "ack_frame", kind: Kind::Bytes { min: 64, max: 1518 }, default: "64B", source: "interpretation (minimum Ethernet frame; a RoCEv2 ACK is 62 B + FCS)", help: "Size of an ACK or NACK on the wire; they wait in the strict-priority control queue of each port on the way back to the source, as CNMs and CNPs do, or at the switches in the data queues (transport.ack_queue)." },
    ParamSpec { section: TP, key: "ack_queue", kind: Kind::Choice(&["control", "data"]), default: "data", source: "data: the device (a RoCE NIC sends an RC queue pair's ACKs in the QP's traffic class); ACKs at their flow's priority (ACK_HIGH_PRIO 0, the ns-3 default and run.py's hp, dctcp and the +window variants; switch-node.cc SendToDev, admitted and counted by switch-mmu.cc as data, qbb-net-device.cc RdmaEgressQueue); control: ACKs as a high-priority class, an idealisation (HPCC's ns-3 ACK_HIGH_PRIO 1, run.py's dcqcn and timely)", help: "Where go-back-N's ACKs and NACKs (and an acknowledged congestion control's) wait at the switches on their way back: in the strict-priority control queue, before any data frame (control), or in the data queue of their flow's priority, behind the data frames queued there and paused with that priority by PFC (data; at the receiver's NIC they still go before its own data frames, waiting while that priority is paused, as HPCC's ns-3 NIC does). Under data a switch admits and counts them as data frames of their flow's priority, as ns-3's MMU does: in the port's queue length (and so in INT and DCTCP's queue), against the port's capacity or its shared memory (charged while queued), in the PFC watermarks of their input port (the port they were last sent from) and egress queue, so ACKs alone can raise a PAUSE; one that does not fit is dropped (ports drop_frames and the summary's ack_drops, not the flows' data drops; go-back-N recovers it by a later cumulative ACK or its timer). No congestion point marks them (docs/models/transport.md)." },
];

pub fn spec(section: &str, key: &str) -> &'static ParamSpec {
    PARAMS
        .iter()
        .find(|p| p.section == section && p.key == key)
        .unwrap_or_else(|| panic!("parameter {section}.{key} is not in the PARAMS table"))
}

pub(super) fn read_bytes(t: &mut TableReader, s: &'static ParamSpec) -> Res<u64> {
    read_bytes_or(t, s, units::parse_bytes(s.default).expect("default parses"))
}

/// [`read_bytes`] with a default given by the caller (a key whose default depends on another,
/// e.g. `cc.dcqcn.variant`).
pub(super) fn read_bytes_or(t: &mut TableReader, s: &'static ParamSpec, default: u64) -> Res<u64> {
    let Kind::Bytes { min, max } = s.kind else {
        unreachable!()
    };
    let v = t.bytes_or(s.key, default)?;
    if !(min..=max).contains(&v) {
        return Err(t.err(
            s.key,
            format!("\"{v}B\""),
            format!("a size from {min}B to {max}B"),
        ));
    }
    Ok(v)
}

/// A size parameter that may also be a word (`"off"`, `"auto"`): `None` for the word.
pub(super) fn read_bytes_or_word(
    t: &mut TableReader,
    s: &'static ParamSpec,
    word: &str,
    example: &str,
) -> Res<Option<u64>> {
    let Kind::Bytes { min, max } = s.kind else {
        unreachable!()
    };
    let allowed = format!("\"{word}\" or a size from {min}B to {max}B (e.g. \"{example}\")");
    let v = match t.raw(s.key) {
        None => None,
        Some(toml::Value::String(v)) if v == word => None,
        Some(toml::Value::String(v)) => match units::parse_bytes(v) {
            Ok(b) if (min..=max).contains(&b) => Some(b),
            _ => return Err(t.err(s.key, format!("{v:?}"), allowed)),
        },
        Some(v) => return Err(t.err(s.key, super::reader::show(v), allowed)),
    };
    t.put(
        s.key,
        serde_json::Value::String(v.map_or(word.into(), |b| format!("{b}B"))),
    );
    Ok(v)
}

/// A time parameter that may also be the word `"off"`: `None` for it.
pub(super) fn read_time_or_off(t: &mut TableReader, s: &'static ParamSpec) -> Res<Option<u64>> {
    let Kind::Time { min } = s.kind else {
        unreachable!()
    };
    let allowed = format!("\"off\" or a time of at least {}", units::fmt_time(min));
    let v = match t.raw(s.key) {
        None => None,
        Some(toml::Value::String(v)) if v == "off" => None,
        Some(toml::Value::String(v)) => match units::parse_time(v) {
            Ok(x) if x >= min => Some(x),
            _ => return Err(t.err(s.key, format!("{v:?}"), allowed)),
        },
        Some(v) => return Err(t.err(s.key, super::reader::show(v), allowed)),
    };
    t.put(
        s.key,
        serde_json::Value::String(v.map_or("off".into(), units::fmt_time)),
    );
    Ok(v)
}

pub(super) fn read_time(t: &mut TableReader, s: &'static ParamSpec) -> Res<u64> {
    read_time_or(t, s, units::parse_time(s.default).expect("default parses"))
}

/// [`read_time`] with a default given by the caller.
pub(super) fn read_time_or(t: &mut TableReader, s: &'static ParamSpec, default: u64) -> Res<u64> {
    let Kind::Time { min } = s.kind else {
        unreachable!()
    };
    let v = t.time_or(s.key, default)?;
    if v < min {
        return Err(t.err(
            s.key,
            format!("{:?}", units::fmt_time(v)),
            format!("a time of at least {}", units::fmt_time(min)),
        ));
    }
    Ok(v)
}

pub(super) fn read_rate(t: &mut TableReader, s: &'static ParamSpec) -> Res<f64> {
    t.rate_or(s.key, units::parse_rate(s.default).expect("default parses"))
}

pub(super) fn read_f64(t: &mut TableReader, s: &'static ParamSpec) -> Res<f64> {
    let Kind::Float { min, max } = s.kind else {
        unreachable!()
    };
    t.f64_in(s.key, s.default.parse().expect("default parses"), min, max)
}

pub(super) fn read_int(t: &mut TableReader, s: &'static ParamSpec) -> Res<i64> {
    let Kind::Int { min, max } = s.kind else {
        unreachable!()
    };
    t.int_in(s.key, s.default.parse().expect("default parses"), min, max)
}

pub(super) fn read_bool(t: &mut TableReader, s: &'static ParamSpec) -> Res<bool> {
    t.bool_or(s.key, s.default == "true")
}

pub(super) fn read_choice(t: &mut TableReader, s: &'static ParamSpec) -> Res<String> {
    let Kind::Choice(choices) = s.kind else {
        unreachable!()
    };
    t.choice(s.key, s.default, choices)
}

/// Read `cc.qcn.cp`.
pub fn read_cp(t: &mut TableReader) -> Res<CpParams> {
    let mut p = CpParams::standard();
    p.q_eq_bytes = read_bytes(t, spec(CP, "q_eq"))?;
    p.w = read_f64(t, spec(CP, "w"))?;
    p.fb_bits = read_int(t, spec(CP, "fb_bits"))? as u32;
    p.sample_base_bytes = read_bytes(t, spec(CP, "sample_base"))?;
    p.jitter = read_f64(t, spec(CP, "jitter"))?;
    p.quantiser = match read_choice(t, spec(CP, "quantiser"))?.as_str() {
        "unit" => Quantiser::Unit,
        _ => Quantiser::Linear,
    };
    p.fb_unit_bytes = read_bytes(t, spec(CP, "fb_unit"))?;
    p.every_frame = read_choice(t, spec(CP, "sampling"))? == "every_frame";
    p.qold_at_feedback = read_choice(t, spec(CP, "qold"))? == "feedback";
    p.sample_discarded = read_choice(t, spec(CP, "samples"))? == "arrivals";
    Ok(p)
}

/// Read `cc.qcn.feedback` (from the `cc.qcn` table).
pub fn read_feedback(t: &mut TableReader) -> Res<Feedback> {
    Ok(match read_choice(t, spec(QCN, "feedback"))?.as_str() {
        "nic" => Feedback::Nic,
        _ => Feedback::Switch,
    })
}

/// Read `cc.qcn.nic`.
pub fn read_nic(t: &mut TableReader) -> Res<NicFbParams> {
    let mut p = NicFbParams::standard();
    p.conmes_interval_bytes = read_bytes(t, spec(NIC, "conmes_interval"))?;
    p.conmes_frame_bytes = read_bytes(t, spec(NIC, "conmes_frame"))? as u32;
    p.sample_count = match read_choice(t, spec(NIC, "sample_count"))?.as_str() {
        "sent" => SampleCount::Sent,
        _ => SampleCount::ConMes,
    };
    Ok(p)
}

/// Read `cc.qcn.rp`: the RP parameters (line rate filled in per flow later), the rate-limiter
/// queue size and the token-bucket depth.
pub fn read_rp(t: &mut TableReader) -> Res<(RpParams, u64, Option<u64>)> {
    let mut p = RpParams::standard(10e9);
    p.byte_counter_bytes = read_bytes(t, spec(RP, "byte_counter"))?;
    // The after-FRT reloads default to half of whatever the FR values are.
    let bc2 = spec(RP, "byte_counter_after_frt");
    p.byte_counter_after_frt_bytes = if t.has(bc2.key) {
        read_bytes(t, bc2)?
    } else {
        let v = (p.byte_counter_bytes / 2).max(64);
        t.bytes_or(bc2.key, v)?
    };
    p.timer_ps = read_time(t, spec(RP, "timer"))?;
    let t2 = spec(RP, "timer_after_frt");
    p.timer_after_frt_ps = if t.has(t2.key) {
        read_time(t, t2)?
    } else {
        t.time_or(t2.key, (p.timer_ps / 2).max(1))?
    };
    p.frt = read_int(t, spec(RP, "frt"))? as u32;
    p.r_ai_bps = read_rate(t, spec(RP, "r_ai"))?;
    p.r_hai_bps = read_rate(t, spec(RP, "r_hai"))?;
    p.gd = read_f64(t, spec(RP, "gd"))?;
    p.min_dec_factor = read_f64(t, spec(RP, "min_dec_factor"))?;
    p.min_rate_bps = read_rate(t, spec(RP, "min_rate"))?;
    p.jitter = read_f64(t, spec(RP, "jitter"))?;
    p.target_rate_reduction = read_bool(t, spec(RP, "target_rate_reduction"))?;
    p.trr_ratio = read_f64(t, spec(RP, "trr_ratio"))?;
    p.trr_divisor = read_f64(t, spec(RP, "trr_divisor"))?;
    p.cap_target_rate = read_bool(t, spec(RP, "cap_target_rate"))?;
    p.extra_fast_recovery = read_bool(t, spec(RP, "extra_fast_recovery"))?;
    p.hai_mode = match read_choice(t, spec(RP, "hai_mode"))?.as_str() {
        "constant" => HaiMode::Constant,
        _ => HaiMode::Multiplied,
    };
    p.stage_gate = match read_choice(t, spec(RP, "stage_gate"))?.as_str() {
        "byte_counter" => StageGate::ByteCounter,
        "either" => StageGate::Either,
        _ => StageGate::Both,
    };
    p.release_at_line_rate = read_bool(t, spec(RP, "release_at_line_rate"))?;
    p.start_active = read_bool(t, spec(RP, "start_active"))?;
    p.timer_enabled = read_bool(t, spec(RP, "timer_enabled"))?;
    p.start_rate_bps = read_start_rate(t, p.start_active)?;
    let rl_queue = read_bytes(t, spec(RP, "rl_queue"))?;
    let burst = read_burst(t)?;
    Ok((p, rl_queue, burst))
}

/// `cc.qcn.rp.start_rate`: `"line"` (the default: `None`) or a rate, which needs
/// `start_active = true` (a rate limiter allocated on the first CNM starts at the line rate).
fn read_start_rate(t: &mut TableReader, start_active: bool) -> Res<Option<f64>> {
    let s = spec(RP, "start_rate");
    let allowed = "\"line\" or a rate such as \"1Gbps\"";
    let r = match t.raw(s.key) {
        None => None,
        Some(toml::Value::String(v)) if v == "line" => None,
        Some(toml::Value::String(v)) => match units::parse_rate(v) {
            Ok(r) if r > 0.0 => Some(r),
            _ => return Err(t.err(s.key, format!("{v:?}"), allowed)),
        },
        Some(v) => return Err(t.err(s.key, super::reader::show(v), allowed)),
    };
    match r {
        Some(r) => {
            if !start_active {
                return Err(t.err(
                    s.key,
                    format!("{:?}", units::fmt_rate(r)),
                    "\"line\" unless start_active = true (a rate limiter allocated on the first \
                     CNM starts at the line rate)",
                ));
            }
            t.put(s.key, serde_json::Value::String(units::fmt_rate(r)));
        }
        None => t.put(s.key, serde_json::Value::String("line".into())),
    }
    Ok(r)
}

/// Read `cc.bcn.cp`.
pub fn read_bcn_cp(t: &mut TableReader) -> Res<BcnCpParams> {
    let mut p = BcnCpParams::study();
    p.q_eq_bytes = read_bytes(t, spec(BCP, "q_eq"))?;
    p.w = read_f64(t, spec(BCP, "w"))?;
    p.page_bytes = read_bytes(t, spec(BCP, "page"))?;
    p.sample_window_bytes = read_bytes(t, spec(BCP, "sample_window"))?;
    p.sample_jitter_bytes = read_bytes(t, spec(BCP, "sample_jitter"))?;
    if p.sample_jitter_bytes >= p.sample_window_bytes {
        return Err(t.err(
            "sample_jitter",
            format!("\"{}B\"", p.sample_jitter_bytes),
            format!(
                "a jitter below sample_window ({}B), so every interval stays above zero",
                p.sample_window_bytes
            ),
        ));
    }
    let fb = spec(BCP, "fb_max");
    p.fb_max_pages = if matches!(t.raw(fb.key), Some(toml::Value::String(s)) if s == "off") {
        t.put(fb.key, serde_json::json!("off"));
        f64::INFINITY
    } else if t.has(fb.key) {
        let Kind::Float { min, max } = fb.kind else {
            unreachable!()
        };
        if let Some(toml::Value::String(s)) = t.raw(fb.key) {
            return Err(t.err(
                fb.key,
                format!("{s:?}"),
                format!("\"off\" or a number of pages from {min} to {max}"),
            ));
        }
        t.f64_in(fb.key, 0.0, min, max)?
    } else {
        let v = BcnCpParams::default_fb_max_pages(p.q_eq_bytes, p.w, p.page_bytes);
        t.put(fb.key, serde_json::json!(v));
        v
    };
    p.q_sc_bytes = read_bytes_or_word(t, spec(BCP, "q_sc"), "off", "112.5KB")?;
    p.severe_check = match read_choice(t, spec(BCP, "severe_check"))?.as_str() {
        "every_frame" => SevereCheck::EveryFrame,
        _ => SevereCheck::Sample,
    };
    Ok(p)
}

/// Read `cc.bcn.rp`: the regulator parameters (line rate filled in per flow later), the
/// rate-limiter queue size and the token-bucket depth.
pub fn read_bcn_rp(t: &mut TableReader) -> Res<(BcnRpParams, u64, Option<u64>)> {
    let mut p = BcnRpParams::study(10e9);
    p.gi = read_f64(t, spec(BRP, "gi"))?;
    p.gd = read_f64(t, spec(BRP, "gd"))?;
    p.ru_bps = read_rate(t, spec(BRP, "ru"))?;
    p.min_rate_bps = read_rate(t, spec(BRP, "min_rate"))?;
    p.r_min_bps = read_rate(t, spec(BRP, "r_min"))?;
    p.t_max_ps = read_time(t, spec(BRP, "t_max"))?;
    p.drift = read_bool(t, spec(BRP, "drift"))?;
    p.drift_interval_ps = read_time(t, spec(BRP, "drift_interval"))?;
    p.drift_rate_bps = read_rate(t, spec(BRP, "drift_rate"))?;
    p.check_cpid = read_bool(t, spec(BRP, "check_cpid"))?;
    p.release_at_line_rate = read_bool(t, spec(BRP, "release_at_line_rate"))?;
    let rl_queue = read_bytes(t, spec(BRP, "rl_queue"))?;
    let burst = read_burst(t)?;
    Ok((p, rl_queue, burst))
}

fn read_burst(t: &mut TableReader) -> Res<Option<u64>> {
    let burst = t.opt_bytes("rl_burst")?;
    if let Some(b) = burst {
        if b < 64 {
            return Err(t.err("rl_burst", format!("\"{b}B\""), "a depth of at least 64B"));
        }
    } else {
        t.put("rl_burst", serde_json::Value::String("one frame".into()));
    }
    Ok(burst)
}

/// `[cc.qcn.ba]`: (enabled, parameters).
pub fn read_ba(t: &mut TableReader) -> Res<(bool, BaParams)> {
    let enabled = read_bool(t, spec(BA, "enabled"))?;
    let p = BaParams {
        qlen_threshold_frames: read_int(t, spec(BA, "qlen_threshold"))? as u64,
        hold_ps: read_time(t, spec(BA, "hold"))?,
    };
    Ok((enabled, p))
}

/// `[cc.qcn.sonar]` as read; the WE period is resolved per flow by the simulator.
#[derive(Debug, Clone, PartialEq)]
pub struct SonarSpec {
    pub enabled: bool,
    pub wp_ps: SimTime,
    pub we_rtt_multiple: f64,
    pub we_min_ps: SimTime,
    pub sf_ps: SimTime,
    pub byte_counter_bytes: u64,
    pub we_starts: WeStart,
}

pub fn read_sonar(t: &mut TableReader) -> Res<SonarSpec> {
    Ok(SonarSpec {
        enabled: read_bool(t, spec(SONAR, "enabled"))?,
        wp_ps: read_time(t, spec(SONAR, "wp"))?,
        we_rtt_multiple: read_f64(t, spec(SONAR, "we_rtt_multiple"))?,
        we_min_ps: read_time(t, spec(SONAR, "we_min"))?,
        sf_ps: read_time(t, spec(SONAR, "sf"))?,
        byte_counter_bytes: read_bytes(t, spec(SONAR, "byte_counter"))?,
        we_starts: match read_choice(t, spec(SONAR, "we_starts"))?.as_str() {
            "wp_expiry" => WeStart::WpExpiry,
            _ => WeStart::SpecialSent,
        },
    })
}

/// `[cc.qcn.pushback]`: (enabled, recovery timer, one cycle counter, step-back rule).
pub fn read_pushback(t: &mut TableReader) -> Res<(bool, SimTime, bool, Fb99Step)> {
    let enabled = read_bool(t, spec(PUSHBACK, "enabled"))?;
    let timer = read_time(t, spec(PUSHBACK, "timer"))?;
    let one = read_choice(t, spec(PUSHBACK, "cycle_counter"))? == "one";
    let step = match read_choice(t, spec(PUSHBACK, "step_back"))?.as_str() {
        "byte_counter" => Fb99Step::ByteCounter,
        "timer" => Fb99Step::Timer,
        _ => Fb99Step::Both,
    };
    Ok((enabled, timer, one, step))
}

/// The kind, unit and allowed range of a parameter in words ("size (bytes), 64B to 1518B"); with
/// `code` the choices are Markdown code spans. Used by `params_markdown` and `qcnsim params`.
pub fn kind_text(k: &Kind, code: bool) -> String {
    match k {
        Kind::Bytes { min, max } => format!("size (bytes), {min}B to {max}B"),
        Kind::Time { min } => format!("time, at least {}", units::fmt_time(*min)),
        Kind::Rate => "bit rate, above 0".to_string(),
        Kind::Float { min, max } => format!("number, {min} to {max}"),
        Kind::Int { min, max } => format!("whole number, {min} to {max}"),
        Kind::Bool => "true or false".to_string(),
        Kind::Choice(c) => format!(
            "one of {}",
            c.iter()
                .map(|s| if code {
                    format!("`\"{s}\"`")
                } else {
                    format!("\"{s}\"")
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Kind::IntList { min, max } => format!("list of whole numbers, {min} to {max}"),
    }
}

/// The `PARAMS` table as a Markdown table (one row per parameter: `section.key`, kind with unit
/// and allowed range, default, source, help). `docs/parameters.md` holds exactly this text
/// between `<!-- params:begin -->` and `<!-- params:end -->`; a unit test keeps the two equal
/// (regenerate with `QCNSIM_UPDATE_DOCS=1 cargo test -p qcnsim-core params`).
pub fn params_markdown() -> String {
    fn cell(s: &str) -> String {
        s.replace('\\', "\\\\")
            .replace('|', "\\|")
            .replace('*', "\\*")
            .replace('\n', " ")
    }
    let mut out = String::from("| Parameter | Kind, unit and range | Default | Source | Help |\n");
    out.push_str("|---|---|---|---|---|\n");
    for p in PARAMS {
        out.push_str(&format!(
            "| `{}.{}` | {} | `{}` | {} | {} |\n",
            p.section,
            p.key,
            cell(&kind_text(&p.kind, true)),
            p.default,
            cell(p.source),
            cell(p.help)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/parameters.md");
    const BEGIN: &str = "<!-- params:begin -->\n";
    const END: &str = "<!-- params:end -->";

    /// docs/parameters.md must contain exactly `params_markdown()` between the markers.
    /// With `QCNSIM_UPDATE_DOCS=1` the block is rewritten instead of checked.
    #[test]
    fn params_doc_matches_params_table() {
        let text = std::fs::read_to_string(DOC).expect("docs/parameters.md is readable");
        let b = text
            .find(BEGIN)
            .expect("docs/parameters.md has <!-- params:begin -->");
        let start = b + BEGIN.len();
        let end = start
            + text[start..]
                .find(END)
                .expect("docs/parameters.md has <!-- params:end --> after the begin marker");
        let want = params_markdown();
        if std::env::var("QCNSIM_UPDATE_DOCS").as_deref() == Ok("1") {
            let new = format!("{}{}{}", &text[..start], want, &text[end..]);
            if new != text {
                std::fs::write(DOC, new).expect("docs/parameters.md is writable");
            }
            return;
        }
        assert!(
            text[start..end] == want,
            "docs/parameters.md is stale: regenerate it with \
             `QCNSIM_UPDATE_DOCS=1 cargo test -p qcnsim-core params`"
        );
    }

    #[test]
    fn params_markdown_has_one_row_per_parameter() {
        let md = params_markdown();
        assert_eq!(md.lines().count(), PARAMS.len() + 2);
        for p in PARAMS {
            assert!(md.contains(&format!("`{}.{}`", p.section, p.key)));
        }
    }
}
