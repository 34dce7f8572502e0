//! NIC-side Fb computation (the QCN hardware study, docs/models/qcn-nic-feedback.md): every QCN CP
//! port sends ConMes frames carrying its Qlen; each flow's NIC samples them and computes Fb
//! itself (the state machines are in `proto::nic_fb`). A negative quantised Fb becomes a CNM
//! handled by the source exactly like one from a switch (`Cm::host_react`). With
//! `cc.qcn.feedback = "switch"` nothing here runs and the state is empty.

use crate::proto::nic_fb::{ConMesGen, Feedback, NicFb};
use crate::sim::cc::{Cm, Ctrl};
use crate::sim::prelude::*;

/// State of the NIC-side variant.
#[derive(Default)]
pub(in crate::sim) struct NicFbState {
    /// `cc.mode = "qcn"` and `cc.qcn.feedback = "nic"`.
    pub(in crate::sim) on: bool,
    /// One ConMes generator per CP slot (indexed like `Cm::cps`).
    gens: Vec<ConMesGen>,
    /// One NIC sampler per flow.
    nics: Vec<NicFb>,
    /// ConMes sent, per port (empty when off).
    pub(in crate::sim) conmes_sent: Vec<u64>,
    /// ConMes received, per flow (empty when off).
    pub(in crate::sim) conmes_rx: Vec<u64>,
}

impl NicFbState {
    pub(in crate::sim) fn new(sc: &Scenario, seed: u64, n_cps: usize) -> NicFbState {
        if !(sc.cc == CcMode::Qcn && sc.qcn.feedback == Feedback::Nic) {
            return NicFbState::default();
        }
        NicFbState {
            on: true,
            gens: vec![ConMesGen::default(); n_cps],
            nics: (0..sc.flows.len())
                .map(|i| {
                    NicFb::new(
                        &sc.qcn.cp,
                        Rng::stream(seed, StreamId::new(kinds::NIC_FB, i as u32, 0)),
                    )
                })
                .collect(),
            conmes_sent: vec![0; sc.n_ports()],
            conmes_rx: vec![0; sc.flows.len()],
        }
    }

    /// A per-port or per-flow counter column: the counts, or zeros when the variant is off.
    pub(in crate::sim) fn column(counts: &[u64], n: usize) -> Vec<i64> {
        if counts.is_empty() {
            vec![0; n]
        } else {
            counts.iter().map(|&c| c as i64).collect()
        }
    }
}

impl Cm {
    /// Data frame `pkt` of `size` bytes was enqueued at CP port `pi` (CP slot `cpi`); the queue
    /// holds `qlen` bytes including it. Send a ConMes when the generator says so.
    pub(in crate::sim) fn conmes_on_enqueue(
        &mut self,
        core: &mut Core,
        pi: usize,
        cpi: usize,
        pkt: u32,
        qlen: u64,
        size: u32,
    ) -> Option<Ctrl> {
        let q = self.nicfb.gens[cpi].on_enqueue(&core.sc.qcn.nic, qlen, size)?;
        let flow = core.pkts[pkt as usize].flow;
        self.send_feedback(core, pi, flow, KIND_CONMES, q.min(i32::MAX as u64) as i32)
    }

    /// A ConMes from CP port `cpid` reporting `qlen` bytes reached flow `fi`'s NIC: sample,
    /// compute Fb, and on a quantised Fb > 0 hand the source a CNM (the "ding") carrying it.
    pub(in crate::sim) fn on_conmes(&mut self, core: &mut Core, fi: usize, qlen: i32, cpid: u32) {
        self.nicfb.conmes_rx[fi] += 1;
        let sent = core.flows[fi].sent_bytes;
        let sample =
            self.nicfb.nics[fi].on_conmes(&core.sc.qcn.cp, &core.sc.qcn.nic, qlen as u64, sent);
        if let Some(s) = sample {
            if s.sends_cnm() {
                self.host_react(
                    core,
                    Pkt {
                        flow: fi as u32,
                        kind: KIND_CNM,
                        fb: s.qntz_fb as i32,
                        cpid,
                        ..Pkt::default()
                    },
                );
            }
        }
    }
}
