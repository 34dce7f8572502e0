//! QCN feedback: CNMs from congestion points to reaction points.

use super::*;

impl<'a> Sim<'a> {
    // ---------------------------------------------------------------- QCN feedback

    pub(super) fn send_cnm(&mut self, cp_port: usize, flow: u32, qntz: u8) {
        let now = self.now;
        let sw = self.ports[cp_port].node as usize;
        let src = self.flows[flow as usize].src;
        let Some(out) = self.routes.next(sw, src as usize) else {
            return;
        };
        self.ports[cp_port].cnm_sent += 1;
        if self.rec.rec_cnm_sent {
            self.rec.event(EvRec {
                t: now,
                kind: REC_CNM_SENT,
                node: cp_port as u32,
                flow,
                value: qntz as i64,
            });
        }
        let pkt = self.alloc(Pkt {
            born: now,
            size: self.sc.qcn.cnm_bytes,
            flow,
            hop: 0,
            kind: KIND_CNM,
            qntz,
            cpid: cp_port as u32,
            dst: src,
            at: sw as u32,
            special: false,
        });
        self.enqueue_ctrl(out, pkt);
    }

    pub(super) fn on_host_control(&mut self, pkt: u32) {
        let pk = self.pkts[pkt as usize];
        self.release(pkt);
        if pk.kind != KIND_CNM {
            self.transient_control(pk);
            return;
        }
        let fi = pk.flow as usize;
        let now = self.now;
        let f = &mut self.flows[fi];
        f.cnm_rx += 1;
        if self.rec.rec_cnm_rx {
            self.rec.event(EvRec {
                t: now,
                kind: REC_CNM_RX,
                node: f.src,
                flow: pk.flow,
                value: pk.qntz as i64,
            });
        }
        if let Some(rp) = f.rp.as_mut() {
            let was_active = rp.is_active();
            let out = rp.on_cnm_from(&f.rpp, now, pk.qntz, pk.cpid);
            if !was_active && rp.is_active() {
                // a newly allocated rate limiter starts with a full bucket
                f.bucket.set_rate(now, rp.current_rate());
                f.bucket.fill(now);
            }
            self.rp_output(fi, out, now);
        }
        if self.flows[fi].tx.sonar_on() {
            self.sonar_on_cnm(fi);
        }
    }
}
