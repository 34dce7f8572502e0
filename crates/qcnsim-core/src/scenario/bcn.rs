//! `[cc.bcn]`: BCN's congestion points and regulators, and the check of the BCN parameters
//! against the flows (docs/models/bcn.md).

use super::links::port_selection;
use super::params;
use super::reader::{Res, TableReader};
use super::{BcnSpec, NodeKind, Scenario, ScenarioError};
use crate::units;
use serde_json::{json, Value as Json};

pub(super) fn parse_bcn(sc: &Scenario, b: &mut TableReader) -> Res<BcnSpec> {
    let mut cpr = b.sub("cp")?;
    let cp = params::read_bcn_cp(&mut cpr)?;
    b.put("cp", Json::Object(cpr.finish()?));
    let mut rpr = b.sub("rp")?;
    let (rp, rl_queue_bytes, rl_burst_bytes) = params::read_bcn_rp(&mut rpr)?;
    b.put("rp", Json::Object(rpr.finish()?));
    let msg_bytes = b.bytes_or("frame", 64)?;
    if !(64..=1518).contains(&msg_bytes) {
        return Err(b.err(
            "frame",
            format!("\"{msg_bytes}B\""),
            "a frame size from 64B to 1518B",
        ));
    }
    let mut cp_ports = port_selection(sc, b, "cp_ports", "switches")?;
    if let Some(p) = (0..sc.n_ports()).find(|&p| cp_ports[p] && !sc.is_switch_port(p)) {
        return Err(b.err(
            "cp_ports",
            format!("{:?}", sc.port_name(p)),
            "switch egress ports only (a CP lives in a bridge)",
        ));
    }
    // BCN detection switched off per switch.
    let off = b.opt_str_list("detection_off")?.unwrap_or_default();
    for (i, name) in off.iter().enumerate() {
        let Some(n) = sc
            .nodes
            .iter()
            .position(|x| &x.name == name && x.kind == NodeKind::Switch)
        else {
            let switches: Vec<&str> = sc
                .nodes
                .iter()
                .filter(|n| n.kind == NodeKind::Switch)
                .map(|n| n.name.as_str())
                .collect();
            return Err(ScenarioError::new(
                format!("{}.{i}", b.field("detection_off")),
                format!("{name:?}"),
                format!("the name of a switch ({})", switches.join(", ")),
            ));
        };
        for (p, on) in cp_ports.iter_mut().enumerate() {
            if sc.port_ends(p).0 == n {
                *on = false;
            }
        }
    }
    b.put("detection_off", json!(off));
    Ok(BcnSpec {
        cp,
        rp,
        msg_bytes: msg_bytes as u32,
        rl_queue_bytes,
        rl_burst_bytes,
        cp_ports,
    })
}

/// The BCN parameters together: gains that keep every rate positive, rates within every
/// flow's line rate.
pub(super) fn check_bcn(sc: &Scenario) -> Res<()> {
    let (cp, rp) = (&sc.bcn.cp, &sc.bcn.rp);
    cp.validate()
        .map_err(|e| ScenarioError::new("cc.bcn.cp", "these parameters", e))?;
    if cp.fb_max_pages.is_finite() && rp.gd * cp.fb_max_pages >= 1.0 {
        return Err(ScenarioError::new(
            "cc.bcn.rp.gd",
            format!("{}", rp.gd),
            format!(
                "a decrease gain with gd * fb_max < 1, i.e. below {:.6e} (cc.bcn.cp.fb_max = {} \
                 pages): a negative BCN multiplies the rate by 1 + gd*Fb >= 1 - gd*fb_max, \
                 which would not be positive",
                1.0 / cp.fb_max_pages,
                cp.fb_max_pages
            ),
        ));
    }
    for f in &sc.flows {
        let line = sc.links[f.path[0] / 2].rate_bps;
        for (key, r) in [("r_min", rp.r_min_bps), ("min_rate", rp.min_rate_bps)] {
            if r > line {
                return Err(ScenarioError::new(
                    format!("cc.bcn.rp.{key}"),
                    format!("{:?}", units::fmt_rate(r)),
                    format!(
                        "a rate up to the line rate {} of flow {:?}",
                        units::fmt_rate(line),
                        f.name
                    ),
                ));
            }
        }
        let mut p = rp.clone();
        p.line_rate_bps = line;
        p.validate(cp.fb_max_pages)
            .map_err(|e| ScenarioError::new("cc.bcn.rp", "these parameters", e))?;
    }
    Ok(())
}
