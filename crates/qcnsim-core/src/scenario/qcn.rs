//! `[cc.qcn]`: QCN's congestion points and reaction points, their transient-response options
//! (BA sensor, SONAR, push-back) and NIC-side feedback, and the checks of the QCN parameters
//! against the flows and buffers (docs/models/qcn.md, docs/models/qcn-transient.md).

use super::links::port_selection;
use super::params;
use super::reader::{Res, TableReader};
use super::{Capacity, QcnSpec, Scenario, ScenarioError, TransientSpec};
use crate::proto::multicast::McFeedback;
use crate::proto::nic_fb::Feedback;
use crate::proto::qcn_cp::CpParams;
use crate::proto::qcn_rp::RpParams;
use crate::units;
use serde_json::Value as Json;

pub(super) fn parse_qcn(sc: &Scenario, q: &mut TableReader) -> Res<QcnSpec> {
    let mut cpr = q.sub("cp")?;
    let mut cp = params::read_cp(&mut cpr)?;
    q.put("cp", Json::Object(cpr.finish()?));
    let mut rpr = q.sub("rp")?;
    let (mut rp, rl_queue_bytes, rl_burst_bytes) = params::read_rp(&mut rpr)?;
    q.put("rp", Json::Object(rpr.finish()?));
    let transient = parse_transient(q, &mut cp, &mut rp)?;
    let feedback = params::read_feedback(q)?;
    let mut nicr = q.sub("nic")?;
    let nic = params::read_nic(&mut nicr)?;
    q.put("nic", Json::Object(nicr.finish()?));
    let cnm_bytes = q.bytes_or("cnm_frame", 128)?;
    if !(64..=1518).contains(&cnm_bytes) {
        return Err(q.err(
            "cnm_frame",
            format!("\"{cnm_bytes}B\""),
            "a frame size from 64B to 1518B",
        ));
    }
    let cp_ports = port_selection(sc, q, "cp_ports", "switches")?;
    let mf = params::spec("cc.qcn", "multicast_feedback");
    let multicast_feedback = match q
        .choice(mf.key, mf.default, &["standard", "representative"])?
        .as_str()
    {
        "representative" => McFeedback::Representative,
        _ => McFeedback::Standard,
    };
    let multicast_fbhat_hold_ps =
        params::read_time(q, params::spec("cc.qcn", "multicast_fbhat_hold"))?;
    if feedback == Feedback::Nic && multicast_feedback == McFeedback::Representative {
        return Err(q.err(
            "feedback",
            "\"nic\"",
            "\"switch\" while cc.qcn.multicast_feedback = \"representative\" (the representative \
             scheme needs CP-computed feedback)",
        ));
    }
    if feedback == Feedback::Nic && (cp.every_frame || cp.qold_at_feedback) {
        return Err(q.err(
            "feedback",
            "\"nic\"",
            "\"switch\" while cc.qcn.cp.sampling = \"every_frame\" or cc.qcn.cp.qold = \"feedback\" \
             (these readings are of a CP that computes Fb; the NIC samples ConMes reports)",
        ));
    }
    if feedback == Feedback::Nic && cp.sample_discarded {
        return Err(q.err(
            "feedback",
            "\"nic\"",
            "\"switch\" while cc.qcn.cp.samples = \"arrivals\" (the NIC samples the ConMes reports \
             of enqueued frames)",
        ));
    }
    if feedback == Feedback::Nic && transient.pushback {
        return Err(q.err(
            "feedback",
            "\"nic\"",
            "\"switch\" while cc.qcn.pushback.enabled = true (Fb99 messages are sent by CPs that \
             compute Fb)",
        ));
    }
    if let Some(p) = (0..sc.n_ports()).find(|&p| cp_ports[p] && !sc.is_switch_port(p)) {
        return Err(q.err(
            "cp_ports",
            format!("{:?}", sc.port_name(p)),
            "switch egress ports only (a CP lives in a bridge)",
        ));
    }
    Ok(QcnSpec {
        cp,
        rp,
        cnm_bytes: cnm_bytes as u32,
        rl_queue_bytes,
        rl_burst_bytes,
        cp_ports,
        multicast_feedback,
        multicast_fbhat_hold_ps,
        feedback,
        nic,
        transient,
    })
}

/// `[cc.qcn.ba]`, `[cc.qcn.sonar]`, `[cc.qcn.pushback]`. Push-back turns on both-signs sampling
/// at the CPs and sets the RP timer (both periods) to the push-back recovery timer.
fn parse_transient(
    q: &mut TableReader,
    cp: &mut CpParams,
    rp: &mut RpParams,
) -> Res<TransientSpec> {
    let mut bar = q.sub("ba")?;
    let (ba_on, ba) = params::read_ba(&mut bar)?;
    q.put("ba", Json::Object(bar.finish()?));
    let mut sr = q.sub("sonar")?;
    let sonar = params::read_sonar(&mut sr)?;
    q.put("sonar", Json::Object(sr.finish()?));
    let mut pr = q.sub("pushback")?;
    let (pb_on, pb_timer, one_counter, step) = params::read_pushback(&mut pr)?;
    q.put("pushback", Json::Object(pr.finish()?));
    rp.sonar_byte_counter_bytes = sonar.byte_counter_bytes;
    rp.fb99_step = step;
    if pb_on {
        cp.sample_both_signs = true;
        rp.timer_ps = pb_timer;
        rp.timer_after_frt_ps = pb_timer;
        rp.timer_enabled = true;
        rp.one_cycle_counter = one_counter;
    }
    Ok(TransientSpec {
        ba: (ba_on || sonar.enabled || pb_on).then_some(ba),
        sonar: sonar.enabled.then_some(sonar),
        pushback: pb_on,
    })
}

/// Qeq must lie below the buffer of every port that runs a CP.
pub(super) fn check_qeq(sc: &Scenario) -> Res<()> {
    let max_frame = sc
        .flows
        .iter()
        .map(|f| f.frame_bytes as u64)
        .max()
        .unwrap_or(1500);
    for p in 0..sc.n_ports() {
        if !sc.qcn.cp_ports[p] {
            continue;
        }
        let cap = match sc.queue_limit(p) {
            Capacity::Bytes(b) => b,
            Capacity::Frames(n) => n * max_frame,
            Capacity::Infinite | Capacity::Shared => continue,
        };
        if sc.qcn.cp.q_eq_bytes >= cap {
            return Err(ScenarioError::new(
                "cc.qcn.cp.q_eq",
                format!("\"{}B\"", sc.qcn.cp.q_eq_bytes),
                format!(
                    "a set point below the buffer of CP port {:?} ({} = {cap} bytes)",
                    sc.port_name(p),
                    sc.queue_limit(p).describe()
                ),
            ));
        }
    }
    Ok(())
}

/// The RP parameters must make sense for every flow's line rate.
pub(super) fn check_rp(sc: &Scenario) -> Res<()> {
    sc.qcn
        .cp
        .validate()
        .map_err(|e| ScenarioError::new("cc.qcn.cp", "these parameters", e))?;
    check_rp_params(sc, &sc.qcn.rp, "cc.qcn.rp")
}

/// Reaction-point parameters `rp` (read from table `key`) against every flow's line rate:
/// the minimum rate, the start rate, then the parameters' own ranges.
pub(super) fn check_rp_params(sc: &Scenario, rp: &RpParams, key: &str) -> Res<()> {
    for f in &sc.flows {
        let line = sc.links[f.path[0] / 2].rate_bps;
        if rp.min_rate_bps > line {
            return Err(ScenarioError::new(
                format!("{key}.min_rate"),
                format!("{:?}", units::fmt_rate(rp.min_rate_bps)),
                format!(
                    "a rate up to the line rate {} of flow {:?}",
                    units::fmt_rate(line),
                    f.name
                ),
            ));
        }
        if let Some(r) = rp.start_rate_bps {
            if r > line || r < rp.min_rate_bps {
                return Err(ScenarioError::new(
                    format!("{key}.start_rate"),
                    format!("{:?}", units::fmt_rate(r)),
                    format!(
                        "a rate from {key}.min_rate ({}) up to the line rate {} of flow {:?}",
                        units::fmt_rate(rp.min_rate_bps),
                        units::fmt_rate(line),
                        f.name
                    ),
                ));
            }
        }
        let mut p = rp.clone();
        p.line_rate_bps = line;
        p.validate()
            .map_err(|e| ScenarioError::new(key, "these parameters", e))?;
    }
    Ok(())
}
