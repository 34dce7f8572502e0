//! `[cc]`: the congestion-management mode and its common options; the sections of the schemes
//! (`[cc.qcn]`, `[cc.bcn]`, `[cc.dcqcn]`, `[cc.dctcp]`, `[cc.hpcc]`) are read by qcn.rs, bcn.rs,
//! dcqcn.rs, dctcp.rs and hpcc.rs, and checked against the flows here once all are read.
//! `[cc.timely]` and `[cc.swift]` (timely.rs, swift.rs) likewise, for `cc.mode = "timely"` and
//! `"swift"`.

use super::reader::{Res, TableReader};
use super::{
    bcn, dcqcn, dctcp, hpcc, qcn, swift, timely, transport::Transport, CcMode, Scenario,
    ScenarioError,
};
use serde_json::{Map, Value as Json};

/// `[cc]` with its `qcn`, `bcn` and `dcqcn` sections (all read, whatever the mode), then the
/// checks of the chosen scheme's parameters against the flows.
pub(super) fn read(
    sc: &mut Scenario,
    r: &mut TableReader,
    resolved: &mut Map<String, Json>,
) -> Res<()> {
    let mut cc = r.sub("cc")?;
    sc.cc = match cc
        .choice(
            "mode",
            "none",
            &[
                "none", "qcn", "bcn", "dcqcn", "dctcp", "hpcc", "timely", "swift",
            ],
        )?
        .as_str()
    {
        "qcn" => CcMode::Qcn,
        "bcn" => CcMode::Bcn,
        "dcqcn" => CcMode::Dcqcn,
        "dctcp" => CcMode::Dctcp,
        "hpcc" => CcMode::Hpcc,
        "timely" => CcMode::Timely,
        "swift" => CcMode::Swift,
        _ => CcMode::None,
    };
    sc.feedback_latency = cc.time_or("feedback_latency", 0)?;
    sc.rl_start_full = cc.choice("rl_start", "full", &["full", "empty"])? == "full";
    sc.feedback_reverse =
        cc.choice("feedback_route", "shortest", &["shortest", "reverse"])? == "reverse";
    let mut q = cc.sub("qcn")?;
    sc.qcn = qcn::parse_qcn(sc, &mut q)?;
    let qj = q.finish()?;
    cc.put("qcn", Json::Object(qj));
    let bcn_given = cc.has("bcn");
    let mut b = cc.sub("bcn")?;
    sc.bcn = bcn::parse_bcn(sc, &mut b)?;
    let bj = b.finish()?;
    // The [cc.bcn] section appears in the resolved scenario when BCN is used or given.
    if sc.cc == CcMode::Bcn || bcn_given {
        cc.put("bcn", Json::Object(bj));
    }
    // likewise [cc.dcqcn]
    let dcqcn_given = cc.has("dcqcn");
    let mut dr = cc.sub("dcqcn")?;
    sc.dcqcn = dcqcn::parse_dcqcn(sc, &mut dr)?;
    let dj = dr.finish()?;
    if sc.cc == CcMode::Dcqcn || dcqcn_given {
        cc.put("dcqcn", Json::Object(dj));
    }
    // [cc.timely] and [cc.swift]: in the resolved scenario when their mode runs or given
    let timely_given = cc.has("timely");
    let mut tr = cc.sub("timely")?;
    sc.timely = timely::read(&mut tr)?;
    let tj = tr.finish()?;
    if sc.cc == CcMode::Timely || timely_given {
        cc.put("timely", Json::Object(tj));
    }
    let swift_given = cc.has("swift");
    let mut sr = cc.sub("swift")?;
    sc.swift = swift::read(&mut sr)?;
    let sj = sr.finish()?;
    if sc.cc == CcMode::Swift || swift_given {
        cc.put("swift", Json::Object(sj));
    }
    // likewise [cc.dctcp]
    let dctcp_given = cc.has("dctcp");
    let mut dr = cc.sub("dctcp")?;
    sc.dctcp = dctcp::parse_dctcp(sc, &mut dr)?;
    let dj = dr.finish()?;
    if sc.cc == CcMode::Dctcp || dctcp_given {
        cc.put("dctcp", Json::Object(dj));
    }
    // likewise [cc.hpcc]
    let hpcc_given = cc.has("hpcc");
    let mut hr = cc.sub("hpcc")?;
    sc.hpcc = hpcc::parse_hpcc(&mut hr)?;
    let hj = hr.finish()?;
    if sc.cc == CcMode::Hpcc || hpcc_given {
        cc.put("hpcc", Json::Object(hj));
    }
    resolved.insert("cc".into(), Json::Object(cc.finish()?));
    if sc.cc == CcMode::Qcn {
        qcn::check_rp(sc)?;
    }
    if sc.cc == CcMode::Bcn {
        bcn::check_bcn(sc)?;
    }
    if sc.cc == CcMode::Dcqcn {
        dcqcn::check_dcqcn(sc)?;
    }
    if sc.cc.acked() {
        check_acked(sc, sc.cc)?;
    }
    if sc.cc == CcMode::Hpcc {
        hpcc::check_hpcc(sc)?;
    }
    if sc.cc == CcMode::Timely {
        timely::check_timely(sc)?;
    }
    Ok(())
}

/// An end-to-end mode clocked by acknowledgements (`CcMode::acked`: DCTCP, HPCC, TIMELY, Swift):
/// every flow is a unicast
/// go-back-N flow (its sender reads go-back-N's acknowledgements).
fn check_acked(sc: &Scenario, cc: CcMode) -> Res<()> {
    let mode = format!("\"{}\"", cc.name());
    for f in &sc.flows {
        if f.group.is_some() {
            return Err(ScenarioError::new(
                "cc.mode",
                mode,
                format!(
                    "\"qcn\", \"bcn\" or \"none\" with multicast flow {:?} (the receiver of \
                     an acknowledged mode acknowledges one flow)",
                    f.name
                ),
            ));
        }
        if f.transport != Transport::Gbn {
            return Err(ScenarioError::new(
                "cc.mode",
                mode,
                format!(
                    "a mode without acknowledgements for flow {:?} (transport = \"udp\"), or \
                     transport = \"gbn\" with a size for it: the sender of {} reads \
                     go-back-N's acknowledgements (a long-lived flow: a size beyond what the run \
                     carries)",
                    f.name,
                    cc.name()
                ),
            ));
        }
    }
    Ok(())
}
