//! QCN glue on the shared congestion-management interface (sim/cc/mod.rs): the CP hook sends a CNM
//! (`KIND_CNM`, payload qntzFb, the CP's CPID) when the sampled feedback quantises above 0 (and,
//! with representative multicast feedback, only as the representative: `cnm_wanted`), and the
//! RP reacts with `Rp::on_cnm_from`. The rules are in proto/qcn_cp.rs and proto/qcn_rp.rs; the
//! transient-response messages (echo, Fb99) are in sim/cc/transient.rs.

use crate::proto::qcn_cp::{Cp, CpParams, CpSample};
use crate::sim::cc::CpState;
use crate::sim::cc::{Cm, Ctrl};
use crate::sim::prelude::*;

impl Cm {
    /// The QCN CP of port `pi` (CP slot `cpi`) sees data frame `pkt`: at a sample instant
    /// with qntzFb > 0 a CNM goes to the frame's source (with push-back, a sample without a
    /// CNM may send an Fb99 instead). Returns the message sent, if any. Always inlined: the
    /// data path's CP hook and the multicast counters' variant both call it.
    #[inline(always)]
    pub(in crate::sim) fn qcn_cp_enqueue(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        pkt: u32,
        qlen: u64,
        size: u32,
    ) -> Option<Ctrl> {
        if self.nicfb.on {
            // NIC-side feedback: the CP port only reports its queue length (sim/cc/nicfb.rs)
            return self.conmes_on_enqueue(core, pi, cpi, pkt, qlen, size);
        }
        let s = self.qcn_cp_step(core, pi, cpi, |cp, p| cp.on_enqueue(p, qlen, size))?;
        self.qcn_cp_sampled(core, pi, cpi, pkt, qlen, s)
    }

    /// Run `step` (the CP's enqueue or discard rule) on the QCN CP of port `pi` (slot `cpi`),
    /// with the byte countdown the port keeps for it (`Port::cp_left`, where `cp_here`) copied
    /// in before and out after; `None` for a slot that is not a QCN CP.
    #[inline(always)]
    fn qcn_cp_step(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        step: impl FnOnce(&mut Cp, &CpParams) -> Option<CpSample>,
    ) -> Option<CpSample> {
        let CpState::Qcn(cp) = &mut self.cps[cpi] else {
            return None;
        };
        let port = &mut core.ports[pi];
        if port.cp_here {
            cp.set_time_to_mark(port.cp_left);
        }
        let s = step(cp, &core.sc.qcn.cp);
        if port.cp_here {
            port.cp_left = cp.time_to_mark();
        }
        s
    }

    /// The QCN CP of port `pi` (CP slot `cpi`) sees data frame `pkt` discarded at its full
    /// queue (`qlen` bytes, without the frame): with `cc.qcn.cp.samples = "arrivals"` it counts
    /// toward the next sample and, sampled, gets feedback as an enqueued frame would (the CNM
    /// goes to its source). The caller checks the option.
    pub(in crate::sim) fn qcn_cp_discard(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        pkt: u32,
        qlen: u64,
        size: u32,
    ) -> Option<Ctrl> {
        if self.nicfb.on {
            return None;
        }
        let s = self.qcn_cp_step(core, pi, cpi, |cp, p| cp.on_discard(p, qlen, size))?;
        self.qcn_cp_sampled(core, pi, cpi, pkt, qlen, s)
    }

    /// A sample `s` of the CP of port `pi` taken at frame `pkt` (queue `qlen`): the CNM, or
    /// with push-back the Fb99, it asks for. Out of line: most frames are not sampled.
    #[inline(never)]
    fn qcn_cp_sampled(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        pkt: u32,
        qlen: u64,
        s: CpSample,
    ) -> Option<Ctrl> {
        let flow = core.pkts[pkt as usize].flow;
        if s.sends_cnm() && self.cnm_wanted(core, pi, pkt, &s) {
            let msg = self.send_feedback(core, pi, flow, KIND_CNM, s.qntz_fb as i32);
            if core.sc.qcn.cp.qold_at_feedback {
                if let CpState::Qcn(cp) = &mut self.cps[cpi] {
                    cp.feedback_sent(&core.sc.qcn.cp, qlen);
                }
            }
            msg
        } else if self.tr.pushback && !s.sends_cnm() {
            self.pushback_sample(core, pi, flow)
        } else {
            None
        }
    }

    /// Representative feedback: the source stamps F̂b and the representative CPID into each
    /// data frame it sends.
    #[inline]
    pub(in crate::sim) fn mc_stamp(core: &mut Core, fi: usize, pkt: u32) {
        let now = core.now;
        let f = &mut core.flows[fi];
        if let Some(Reaction::Qcn { rp, p: rpp }) = f.rp.as_mut() {
            rp.expire_fb_hat(rpp, now);
            let p = &mut core.pkts[pkt as usize];
            p.fb = rp.fb_hat() as i32;
            p.cpid = rp.rep_cpid();
        }
    }

    /// Whether the CP of port `pi` sends the CNM its sample asks for: always for standard
    /// feedback, only as the representative (Algorithm 2) for representative feedback. The
    /// CPID of a CP is its port index.
    #[inline]
    fn cnm_wanted(&self, core: &Core, pi: usize, pkt: u32, s: &CpSample) -> bool {
        let pk = &core.pkts[pkt as usize];
        !core.flows[pk.flow as usize].rep_fb
            || s.sends_cnm_representative(pi as u32, pk.fb as u8, pk.cpid)
    }
}
