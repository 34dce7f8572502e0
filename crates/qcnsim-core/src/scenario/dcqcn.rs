//! `[cc.dcqcn]`: DCQCN's congestion point, notification point and reaction point
//! (docs/models/dcqcn.md). Every key's default is its variant's value
//! ([`DcqcnVariant`], one definition per variant in proto/dcqcn.rs); the keys are defined in
//! the parameter table (params.rs, `cc.dcqcn*`).

use super::links::port_selection;
use super::params::{self, spec, Kind, DC, DC_CP, DC_NP, DC_RP};
use super::qcn::check_rp_params;
use super::reader::{Res, TableReader};
use super::{Json, Scenario, ScenarioError};
use crate::proto::dcqcn::{DcqcnVariant, EcnParams, MarkAt};
use crate::proto::qcn_rp::{AlphaUpdate, HaiMode, RpParams, StageGate, TargetClamp};
use crate::units::SimTime;

/// The DCQCN configuration of a scenario.
#[derive(Debug, Clone)]
pub struct DcqcnSpec {
    pub variant: DcqcnVariant,
    pub ecn: EcnParams,
    /// N, the NP's CNP interval (0 = a CNP per marked frame).
    pub cnp_interval_ps: SimTime,
    pub cnp_bytes: u32,
    /// RP parameters (with their DCQCN options); `line_rate_bps` is filled in per flow.
    pub rp: RpParams,
    pub rl_queue_bytes: u64,
    pub rl_burst_bytes: Option<u64>,
    /// Egress ports that mark.
    pub cp_ports: Vec<bool>,
}

impl DcqcnSpec {
    pub fn off() -> DcqcnSpec {
        let v = DcqcnVariant::Paper;
        DcqcnSpec {
            variant: v,
            ecn: v.ecn(),
            cnp_interval_ps: v.cnp_interval(),
            cnp_bytes: 64,
            rp: v.rp(10e9),
            rl_queue_bytes: 0,
            rl_burst_bytes: None,
            cp_ports: Vec::new(),
        }
    }
}

fn key(section: &str, k: &str) -> &'static str {
    spec(section, k).key
}

fn bytes(t: &mut TableReader, section: &str, k: &str, default: u64) -> Res<u64> {
    params::read_bytes_or(t, spec(section, k), default)
}

fn time(t: &mut TableReader, section: &str, k: &str, default: SimTime) -> Res<SimTime> {
    params::read_time_or(t, spec(section, k), default)
}

fn float(t: &mut TableReader, section: &str, k: &str, default: f64) -> Res<f64> {
    let s = spec(section, k);
    let Kind::Float { min, max } = s.kind else {
        unreachable!()
    };
    t.f64_in(s.key, default, min, max)
}

fn int(t: &mut TableReader, section: &str, k: &str, default: i64) -> Res<i64> {
    let s = spec(section, k);
    let Kind::Int { min, max } = s.kind else {
        unreachable!()
    };
    t.int_in(s.key, default, min, max)
}

fn choice(t: &mut TableReader, section: &str, k: &str, default: &str) -> Res<String> {
    let s = spec(section, k);
    let Kind::Choice(c) = s.kind else {
        unreachable!()
    };
    t.choice(s.key, default, c)
}

/// Read `[cc.dcqcn]` (with its `cp`, `np` and `rp` tables).
pub(super) fn parse_dcqcn(sc: &Scenario, t: &mut TableReader) -> Res<DcqcnSpec> {
    let vname = choice(t, DC, "variant", "paper")?;
    let v = DcqcnVariant::from_name(&vname).expect("a listed variant");
    let cnp_bytes = bytes(t, DC, "cnp_frame", 64)? as u32;
    let cp_ports = port_selection(sc, t, "cp_ports", "switches")?;
    if let Some(p) = (0..sc.n_ports()).find(|&p| cp_ports[p] && !sc.is_switch_port(p)) {
        return Err(t.err(
            "cp_ports",
            format!("{:?}", sc.port_name(p)),
            "switch egress ports only (ECN marking happens in switches)",
        ));
    }

    let mut c = t.sub("cp")?;
    let d = v.ecn();
    let ecn = EcnParams {
        k_min_bytes: bytes(&mut c, DC_CP, "k_min", d.k_min_bytes)?,
        k_max_bytes: bytes(&mut c, DC_CP, "k_max", d.k_max_bytes)?,
        p_max: float(&mut c, DC_CP, "p_max", d.p_max)?,
        mark_at: match choice(&mut c, DC_CP, "mark_at", d.mark_at.name())?.as_str() {
            "enqueue" => MarkAt::Enqueue,
            _ => MarkAt::Dequeue,
        },
    };
    if ecn.k_min_bytes >= ecn.k_max_bytes {
        return Err(c.err(
            "k_max",
            format!("\"{}B\"", ecn.k_max_bytes),
            format!("a size above k_min ({}B)", ecn.k_min_bytes),
        ));
    }
    t.put("cp", Json::Object(c.finish()?));

    let mut n = t.sub("np")?;
    let cnp_interval_ps = time(&mut n, DC_NP, "cnp_interval", v.cnp_interval())?;
    t.put("np", Json::Object(n.finish()?));

    let mut r = t.sub("rp")?;
    let mut rp = v.rp(10e9);
    let dd = rp.dcqcn.clone().expect("a DCQCN preset");
    let mut dn = dd.clone();
    dn.g = float(&mut r, DC_RP, "g", dd.g)?;
    dn.alpha_start = float(&mut r, DC_RP, "alpha_start", dd.alpha_start)?;
    dn.alpha_interval_ps = time(&mut r, DC_RP, "alpha_interval", dd.alpha_interval_ps)?;
    dn.alpha_update = match choice(&mut r, DC_RP, "alpha_update", dd.alpha_update.name())?.as_str()
    {
        "update_then_cut" => AlphaUpdate::UpdateThenCut,
        "periodic" => AlphaUpdate::Periodic,
        _ => AlphaUpdate::CutThenUpdate,
    };
    dn.first_cnp_rate = read_first_cnp_rate(&mut r, dd.first_cnp_rate)?;
    dn.decrease_interval_ps = time(&mut r, DC_RP, "decrease_interval", dd.decrease_interval_ps)?;
    dn.clamp = match choice(&mut r, DC_RP, "clamp_target_rate", dd.clamp.name())?.as_str() {
        "byte_stage" => TargetClamp::ByteStage,
        "time_stage" => TargetClamp::TimeStage,
        "any_stage" => TargetClamp::AnyStage,
        _ => TargetClamp::Always,
    };
    rp.timer_ps = time(&mut r, DC_RP, "timer", rp.timer_ps)?;
    rp.timer_after_frt_ps = rp.timer_ps;
    rp.byte_counter_bytes = bytes(&mut r, DC_RP, "byte_counter", rp.byte_counter_bytes)?;
    rp.byte_counter_after_frt_bytes = rp.byte_counter_bytes;
    let inc_default = if rp.byte_counter_enabled {
        "timer_and_bytes"
    } else {
        "timer_only"
    };
    rp.byte_counter_enabled = choice(&mut r, DC_RP, "increase", inc_default)? == "timer_and_bytes";
    rp.frt = int(&mut r, DC_RP, "frt", rp.frt as i64)? as u32;
    rp.stage_gate = match choice(&mut r, DC_RP, "stage_gate", rp.stage_gate.name())?.as_str() {
        "timer" => StageGate::Timer,
        _ => StageGate::Both,
    };
    rp.hai_mode = match choice(&mut r, DC_RP, "hai_mode", rp.hai_mode.name())?.as_str() {
        "constant" => HaiMode::Constant,
        _ => HaiMode::Multiplied,
    };
    rp.r_ai_bps = r.rate_or(key(DC_RP, "r_ai"), rp.r_ai_bps)?;
    rp.r_hai_bps = r.rate_or(key(DC_RP, "r_hai"), rp.r_hai_bps)?;
    rp.target_rate_reduction = r.bool_or(
        key(DC_RP, "target_rate_reduction"),
        rp.target_rate_reduction,
    )?;
    rp.cap_target_rate = r.bool_or(key(DC_RP, "cap_target_rate"), rp.cap_target_rate)?;
    rp.min_rate_bps = r.rate_or(key(DC_RP, "min_rate"), rp.min_rate_bps)?;
    rp.dcqcn = Some(dn);
    let rl_queue_bytes = bytes(&mut r, DC_RP, "rl_queue", 150_000)?;
    let rl_burst_bytes = r.opt_bytes("rl_burst")?;
    if let Some(b) = rl_burst_bytes {
        if b < 64 {
            return Err(r.err("rl_burst", format!("\"{b}B\""), "a depth of at least 64B"));
        }
    } else {
        r.put("rl_burst", Json::String("one frame".into()));
    }
    t.put("rp", Json::Object(r.finish()?));
    Ok(DcqcnSpec {
        variant: v,
        ecn,
        cnp_interval_ps,
        cnp_bytes,
        rp,
        rl_queue_bytes,
        rl_burst_bytes,
        cp_ports,
    })
}

/// `first_cnp_rate`: `"off"` or a number in [0, 1].
fn read_first_cnp_rate(t: &mut TableReader, default: Option<f64>) -> Res<Option<f64>> {
    let k = key(DC_RP, "first_cnp_rate");
    let allowed = "\"off\" or a number from 0 to 1";
    let v = match t.raw(k) {
        None => default,
        Some(toml::Value::String(s)) if s == "off" => None,
        Some(toml::Value::Float(f)) if (0.0..=1.0).contains(f) => Some(*f),
        Some(toml::Value::Integer(i)) if (0..=1).contains(i) => Some(*i as f64),
        Some(v) => return Err(t.err(k, super::reader::show(v), allowed)),
    };
    t.put(
        k,
        match v {
            Some(f) => serde_json::json!(f),
            None => Json::String("off".into()),
        },
    );
    Ok(v)
}

/// DCQCN: unicast flows only (the NP answers a flow's receiver), and RP parameters that make
/// sense for every flow's line rate.
pub(super) fn check_dcqcn(sc: &Scenario) -> Res<()> {
    if let Some(f) = sc.flows.iter().find(|f| f.group.is_some()) {
        return Err(ScenarioError::new(
            "cc.mode",
            "\"dcqcn\"",
            format!(
                "\"qcn\", \"bcn\" or \"none\" with multicast flow {:?} (DCQCN's notification \
                 point answers one receiver per flow)",
                f.name
            ),
        ));
    }
    check_rp_params(sc, &sc.dcqcn.rp, "cc.dcqcn.rp")
}
