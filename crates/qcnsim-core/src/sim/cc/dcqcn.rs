//! DCQCN glue (docs/models/dcqcn.md): the congestion point marks data frames (CE) at dequeue
//! (`Port::ecn`, called from the ports' dequeue) or at enqueue (the CP hook, `CpState::Ecn`);
//! the notification point of each flow's receiver turns marked arrivals into CNPs
//! (`KIND_CNP`), which leave the receiver's NIC through its strict-priority control queue and
//! are routed back to the source like every feedback message; the source's QCN reaction point
//! reacts with its DCQCN options (`Rp::on_cnp`, sim/cc/mod.rs). The rules are in proto/dcqcn.rs and
//! proto/qcn_rp.rs.

use crate::proto::dcqcn::Np;
use crate::sim::cc::CpState;
use crate::sim::cc::{Cm, Ctrl};
use crate::sim::prelude::*;

/// The notification points (one per flow, at its receiver) and DCQCN's counters.
pub(in crate::sim) struct DcqcnState {
    pub(in crate::sim) np: Vec<Np>,
    pub(in crate::sim) cnp_interval: SimTime,
    /// Per flow: data frames marked CE, CNPs sent by its receiver, CNPs received by its source.
    pub(in crate::sim) marked: Vec<u64>,
    pub(in crate::sim) cnp_sent: Vec<u64>,
    pub(in crate::sim) cnp_rx: Vec<u64>,
}

impl DcqcnState {
    pub(in crate::sim) fn new(sc: &Scenario) -> DcqcnState {
        // the counters exist for every run (flows table columns), the NPs only with DCQCN
        let n = sc.flows.len();
        let on = sc.cc == CcMode::Dcqcn;
        DcqcnState {
            np: if on {
                vec![Np::default(); n]
            } else {
                Vec::new()
            },
            cnp_interval: sc.dcqcn.cnp_interval_ps,
            marked: vec![0; n],
            cnp_sent: vec![0; n],
            cnp_rx: vec![0; n],
        }
    }
}

impl Cm {
    /// The DCQCN marker `cpi` of port `pi` sees data frame `pkt`: against the frame's egress
    /// queue as it is now (at dequeue: without the frame; at enqueue: with it). With PFC the
    /// queue is the frame's priority queue.
    #[inline(never)]
    pub(in crate::sim) fn ecn_mark(&mut self, core: &mut Core, pi: usize, cpi: usize, pkt: u32) {
        let flow = core.pkts[pkt as usize].flow as usize;
        let port = &core.ports[pi];
        let q = if port.pq.is_empty() {
            port.q_bytes
        } else {
            port.pq_bytes[core.flows[flow].class as usize]
        };
        let CpState::Ecn(cp) = &mut self.cps[cpi] else {
            return;
        };
        if cp.mark(&core.sc.dcqcn.ecn, q) {
            let pk = &mut core.pkts[pkt as usize];
            if pk.flags & FLAG_CE == 0 {
                pk.flags |= FLAG_CE;
                self.dc.marked[flow] += 1;
            }
        }
    }

    /// A CE-marked data frame of `flow` reaches its receiver at `t` (resolved when its last
    /// transmission starts: `t` >= now, and one flow's arrivals are in order): the NP decides
    /// whether and when a CNP leaves.
    #[inline(never)]
    pub(in crate::sim) fn np_marked(&mut self, core: &mut Core, flow: u32, t: SimTime) {
        let Some(np) = self.dc.np.get_mut(flow as usize) else {
            return;
        };
        if let Some(at) = np.on_marked(self.dc.cnp_interval, t) {
            core.q.push(at, Ev::Cnp { flow });
        }
    }

    /// The receiver of `flow` sends a CNP towards the flow's source through its NIC's control
    /// queue: the CNP to queue (none without a route).
    #[inline(never)]
    pub(in crate::sim) fn send_cnp(&mut self, core: &mut Core, flow: u32) -> Option<Ctrl> {
        let now = core.now;
        let dst = core.flows[flow as usize].dst as usize;
        let out = core.feedback_next(dst, flow)?;
        self.dc.cnp_sent[flow as usize] += 1;
        let pkt = core.alloc(Pkt {
            born: now,
            size: core.sc.dcqcn.cnp_bytes,
            flow,
            hop: 0,
            kind: KIND_CNP,
            fb: 0,
            cpid: NONE,
            at: dst as u32,
            flags: 0,
        });
        Some(Ctrl { port: out, pkt })
    }
}
