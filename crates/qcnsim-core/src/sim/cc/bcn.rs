//! BCN glue: the BCN congestion point at a switch egress queue and the rate regulator's
//! reaction to BCN messages, on the shared congestion-management interface (sim/cc/mod.rs). The
//! rules are in proto/bcn.rs; see docs/models/bcn.md.

use crate::proto::bcn::{BcnKind, BcnRp, BcnRpParams};
use crate::scenario::Scenario;
use crate::sim::cc::CpState;
use crate::sim::cc::{Cm, Ctrl};
use crate::sim::prelude::*;

impl Cm {
    /// The BCN CP of port `pi` (CP slot `cpi`) sees data frame `pkt`: a negative BCN, a
    /// positive BCN (only to frames tagged with this CP) or a BCN(0,0) goes to its source.
    /// Returns the message sent, if any.
    pub(in crate::sim) fn bcn_cp_enqueue(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        pkt: u32,
        qlen: u64,
        size: u32,
    ) -> Option<Ctrl> {
        let pk = &core.pkts[pkt as usize];
        let tagged = pk.cpid == pi as u32;
        let flow = pk.flow;
        let CpState::Bcn(cp) = &mut self.cps[cpi] else {
            return None;
        };
        let p = &core.sc.bcn.cp;
        let s = cp.on_enqueue(p, qlen, size, tagged)?;
        match s.msg {
            None => None,
            Some(BcnKind::Severe) => self.send_feedback(core, pi, flow, KIND_BCN0, 0),
            Some(_) => {
                // Fb travels in bytes (exact for whole-byte queues and integral W).
                let fb = (s.fb_pages * p.page_bytes as f64).round() as i32;
                if fb != 0 {
                    self.send_feedback(core, pi, flow, KIND_BCN, fb)
                } else {
                    None
                }
            }
        }
    }

    /// The regulator's reaction to a BCN message `pk` (KIND_BCN or KIND_BCN0).
    pub(in crate::sim) fn bcn_react(
        sc: &Scenario,
        rp: &mut BcnRp,
        p: &BcnRpParams,
        now: SimTime,
        pk: &Pkt,
    ) -> RpOutput {
        if pk.kind == KIND_BCN0 {
            return rp.on_message(p, now, BcnKind::Severe, 0.0, pk.cpid);
        }
        let fb_pages = pk.fb as f64 / sc.bcn.cp.page_bytes as f64;
        let kind = if pk.fb < 0 {
            BcnKind::Negative
        } else {
            BcnKind::Positive
        };
        rp.on_message(p, now, kind, fb_pages, pk.cpid)
    }
}
