//! Multicast (the multicast QCN study): replication of group frames along the flow's distribution
//! tree, per-member delivery counts, the representative-CP feedback hooks, and the multicast
//! metrics of the `summary` table. See docs/models/multicast.md.
//!
//! A multicast flow's `path` holds the nodes of its tree in breadth-first order (node 0 is the
//! source NIC port), so the children of a node are contiguous. A data frame's `hop` is the tree
//! node of the queue it is in. When a frame reaches a switch, the switch puts one frame on each
//! child port: copies come from the packet arena (no heap allocation once the arena has grown),
//! the original frame goes to the last child. Every copy is a data frame of the flow and is
//! counted as delivered, dropped or in flight like any other.

use crate::sim::prelude::*;
use crate::table::Table;

/// Per multicast flow: its tree's shape and what each member received.
pub(in crate::sim) struct McFlow {
    /// Children of each tree node: (first node, count).
    pub(in crate::sim) kids: Vec<(u16, u16)>,
    /// Member slot (index into the group's members) of a node whose port leads to a member,
    /// NONE otherwise.
    pub(in crate::sim) member_of: Vec<u32>,
    pub(in crate::sim) member_rx_frames: Vec<u64>,
    pub(in crate::sim) member_rx_bytes: Vec<u64>,
    /// Members that have received the whole finite flow.
    pub(in crate::sim) members_done: u32,
    /// Copies made by switches (frames beyond the one the source sent).
    pub(in crate::sim) copies: u64,
}

impl McFlow {
    pub(in crate::sim) fn new(sc: &Scenario, fi: usize) -> McFlow {
        let f = &sc.flows[fi];
        let g = &sc.groups[f.group.expect("multicast flow")];
        let n = f.path.len();
        let mut kids = vec![(0u16, 0u16); n];
        for (j, &p) in f.tree_parent.iter().enumerate().skip(1) {
            let k = &mut kids[p as usize];
            if k.1 == 0 {
                k.0 = j as u16;
            }
            k.1 += 1;
        }
        let member_of = f
            .path
            .iter()
            .map(|&p| {
                let to = sc.port_ends(p).1;
                g.members
                    .iter()
                    .position(|&m| m == to)
                    .map_or(NONE, |i| i as u32)
            })
            .collect();
        McFlow {
            kids,
            member_of,
            member_rx_frames: vec![0; g.members.len()],
            member_rx_bytes: vec![0; g.members.len()],
            members_done: 0,
            copies: 0,
        }
    }
}

/// Counters at the edges of the statistics window ([analysis] stats_from / stats_to).
#[derive(Default, Clone)]
pub(in crate::sim) struct McSnap {
    pub(in crate::sim) taken: bool,
    pub(in crate::sim) flow_sent_frames: Vec<u64>,
    pub(in crate::sim) flow_sent_bytes: Vec<u64>,
    pub(in crate::sim) port_drops: Vec<u64>,
    /// Congestion management's counters ([`crate::sim::cc::Cm::mc_counters`]): per port CNMs
    /// sent, data frames its CP saw enqueued, CP sample instants, samples with Fb < 0 at which
    /// the scheme lets the CP send feedback; per flow CNMs received.
    pub(in crate::sim) cm: [Vec<u64>; 5],
}

/// Indices into [`McSnap::cm`].
const CM_CNM: usize = 0;
const CM_ENQ: usize = 1;
const CM_SAMPLES: usize = 2;
const CM_NEG: usize = 3;
const CM_CNM_RX: usize = 4;

/// The multicast subsystem: each multicast flow's tree and member counters, and the counters at
/// the edges of the statistics window.
#[derive(Default)]
pub(in crate::sim) struct Multicast {
    flows: Vec<McFlow>,
    win: [McSnap; 2],
    /// The QCN CP ports on a multicast tree, whose feedback is traced at every queue sample
    /// (the `multicast_cp_fb` table); empty without QCN or without groups.
    fb_ports: Vec<usize>,
    fb_t: Vec<i64>,
    fb_port: Vec<u32>,
    fb_qlen: Vec<i64>,
    fb_bytes: Vec<f64>,
    fb_qntz: Vec<i64>,
}

impl Multicast {
    /// One [`McFlow`] per multicast flow; marks those flows in the data path (`Flow::mc`).
    pub(in crate::sim) fn build(sc: &Scenario, core: &mut Core) -> Multicast {
        let mut m = Multicast::default();
        for (i, f) in sc.flows.iter().enumerate() {
            if f.group.is_some() {
                core.flows[i].mc = m.flows.len() as u32;
                m.flows.push(McFlow::new(sc, i));
            }
        }
        if sc.cc == CcMode::Qcn && sc.qcn.feedback == crate::proto::nic_fb::Feedback::Switch {
            let mut on_tree = vec![false; sc.n_ports()];
            for f in sc.flows.iter().filter(|f| f.group.is_some()) {
                for &p in &f.path {
                    on_tree[p] = sc.qcn.cp_ports[p];
                }
            }
            m.fb_ports = (0..sc.n_ports()).filter(|&p| on_tree[p]).collect();
        }
        m
    }

    /// Whether the CPs' feedback is traced (QCN CPs on a multicast tree).
    #[inline]
    pub(in crate::sim) fn traces_fb(&self) -> bool {
        !self.fb_ports.is_empty()
    }

    /// One point of the `multicast_cp_fb` trace: for each traced CP port, the feedback its CP
    /// would compute now (`fb_now(port)`: Fb bytes and qntzFb; not a sample, no state changes).
    #[inline(never)]
    pub(in crate::sim) fn sample_fb(
        &mut self,
        core: &Core,
        fb_now: impl Fn(usize) -> Option<(f64, u8)>,
    ) {
        for &p in &self.fb_ports {
            if let Some((fb, q)) = fb_now(p) {
                self.fb_t.push(core.now as i64);
                self.fb_port.push(p as u32);
                self.fb_qlen.push(core.ports[p].q_bytes as i64);
                self.fb_bytes.push(fb);
                self.fb_qntz.push(q as i64);
            }
        }
    }

    /// The `multicast_cp_fb` table (None when nothing is traced).
    pub(in crate::sim) fn cp_fb_table(&self, sc: &Scenario) -> Option<Table> {
        if self.fb_ports.is_empty() {
            return None;
        }
        Some(
            Table::new("multicast_cp_fb")
                .col("t_ps", ColumnData::I64(self.fb_t.clone()))
                .col(
                    "port",
                    ColumnData::Str(
                        self.fb_port
                            .iter()
                            .map(|&p| sc.port_name(p as usize))
                            .collect(),
                    ),
                )
                .col("qlen_bytes", ColumnData::I64(self.fb_qlen.clone()))
                .col("fb_bytes", ColumnData::F64(self.fb_bytes.clone()))
                .col("qntz_fb", ColumnData::I64(self.fb_qntz.clone())),
        )
    }

    /// A data frame `pkt` of a multicast flow reached the switch at the end of its tree node:
    /// the first of its tree children and how many there are, or `None` at a dead end (then the
    /// frame was dropped).
    pub(in crate::sim) fn children(&mut self, core: &mut Core, pkt: u32) -> Option<(u16, u16)> {
        let pk = &core.pkts[pkt as usize];
        let fi = pk.flow as usize;
        let m = core.flows[fi].mc as usize;
        let (first, n) = self.flows[m].kids[pk.hop as usize];
        if n == 0 {
            // validated trees have no dead ends; never reached
            core.flows[fi].net_drops += 1;
            core.release(pkt);
            return None;
        }
        Some((first, n))
    }

    /// The frame for tree node `j` of frame `pk` (arena index `pkt`): a new copy, or for the
    /// last child the frame itself; returns the port it is queued at and its index.
    pub(in crate::sim) fn copy_for(
        &mut self,
        core: &mut Core,
        pkt: u32,
        pk: Pkt,
        j: u16,
        last: bool,
    ) -> (usize, u32) {
        let fi = pk.flow as usize;
        let port = core.flows[fi].path[j as usize] as usize;
        if last {
            core.pkts[pkt as usize].hop = j;
            return (port, pkt);
        }
        let mut c = pk;
        c.hop = j;
        core.live_data += 1;
        self.flows[core.flows[fi].mc as usize].copies += 1;
        (port, core.alloc(c))
    }

    /// A copy of multicast flow `f` reached its member at `t <= end`.
    #[inline]
    pub(in crate::sim) fn delivered(&mut self, f: &mut Flow, hop: u16, size: u32, t: SimTime) {
        let mc = &mut self.flows[f.mc as usize];
        let slot = mc.member_of[hop as usize];
        if slot == NONE {
            return;
        }
        let s = slot as usize;
        mc.member_rx_frames[s] += 1;
        let before = mc.member_rx_bytes[s];
        mc.member_rx_bytes[s] += size as u64;
        if let Some(total) = f.size {
            if before < total && mc.member_rx_bytes[s] >= total {
                mc.members_done += 1;
                if mc.members_done as usize == mc.member_rx_bytes.len() && f.finish.is_none() {
                    f.finish = Some(t);
                }
            }
        }
    }

    /// Take the counters at an edge of the statistics window (`cm`: congestion management's
    /// counters so far, [`crate::sim::cc::Cm::mc_counters`]).
    #[inline(never)]
    pub(in crate::sim) fn snapshot(&mut self, core: &Core, edge: usize, cm: [Vec<u64>; 5]) {
        let s = &mut self.win[edge];
        s.taken = true;
        s.flow_sent_frames = core.flows.iter().map(|f| f.sent_frames).collect();
        s.flow_sent_bytes = core.flows.iter().map(|f| f.sent_bytes).collect();
        s.port_drops = core.ports.iter().map(|p| p.drop_frames).collect();
        s.cm = cm;
    }

    /// Extra columns of the flows table: dst names a multicast flow's group.
    pub(in crate::sim) fn flow_dst(sc: &Scenario, fi: usize) -> Option<String> {
        sc.flows[fi].group.map(|g| sc.groups[g].name.clone())
    }

    /// Copies made by replication for flow `fi` (0 for unicast flows).
    pub(in crate::sim) fn copies(&self, core: &Core, fi: usize) -> u64 {
        let m = core.flows[fi].mc;
        if m == NONE {
            0
        } else {
            self.flows[m as usize].copies
        }
    }

    /// The `multicast_members` table: what each member received from each multicast flow.
    pub(in crate::sim) fn members_table(&self, core: &Core) -> Table {
        let sc = core.sc;
        let (mut group, mut flow, mut member, mut rx_f, mut rx_b) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (fi, f) in core.flows.iter().enumerate() {
            if f.mc == NONE {
                continue;
            }
            let g = &sc.groups[sc.flows[fi].group.unwrap_or(0)];
            let mc = &self.flows[f.mc as usize];
            for (k, &m) in g.members.iter().enumerate() {
                if m == f.src as usize {
                    continue;
                }
                group.push(g.name.clone());
                flow.push(sc.flows[fi].name.clone());
                member.push(sc.nodes[m].name.clone());
                rx_f.push(mc.member_rx_frames[k] as i64);
                rx_b.push(mc.member_rx_bytes[k] as i64);
            }
        }
        Table::new("multicast_members")
            .col("group", ColumnData::Str(group))
            .col("flow", ColumnData::Str(flow))
            .col("member", ColumnData::Str(member))
            .col("rx_frames", ColumnData::I64(rx_f))
            .col("rx_bytes", ColumnData::I64(rx_b))
    }

    /// The multicast metrics (as the multicast QCN study defines them) over the statistics
    /// window, as summary rows (metric, value, unit, detail).
    pub(in crate::sim) fn summary_rows(
        &self,
        sc: &Scenario,
        flows: &[Flow],
        tables: &[Table],
    ) -> Vec<(String, f64, String, String)> {
        let mc_win = &self.win;
        let mut rows: Vec<(String, f64, String, String)> = Vec::new();
        let (t0, t1) = (sc.analysis.stats_from, sc.analysis.stats_to);
        let win = format!("{} to {}", units::fmt_time(t0), units::fmt_time(t1));
        let [a, b] = mc_win;
        if !(a.taken && b.taken) {
            return rows;
        }
        let span = units::secs(t1 - t0);
        let sent: u64 = (0..flows.len())
            .map(|i| b.flow_sent_frames[i] - a.flow_sent_frames[i])
            .sum();
        let d = |k: usize, i: usize| b.cm[k][i] - a.cm[k][i];
        let cnm: u64 = (0..sc.n_ports()).map(|p| d(CM_CNM, p)).sum();
        let cp_drops: u64 = (0..sc.n_ports())
            .filter(|&p| sc.qcn.cp_ports[p])
            .map(|p| b.port_drops[p] - a.port_drops[p])
            .sum();
        let pct = |x: u64| {
            if sent == 0 {
                f64::NAN
            } else {
                100.0 * x as f64 / sent as f64
            }
        };
        rows.push((
            "mc_feedback_rate".into(),
            pct(cnm),
            "%".into(),
            format!("CNMs generated by all CPs / data frames sent by all sources ({cnm} / {sent}), {win}"),
        ));
        rows.push((
            "mc_loss_rate".into(),
            pct(cp_drops),
            "%".into(),
            format!(
                "data frames dropped at CP queues / data frames sent ({cp_drops} / {sent}), {win}"
            ),
        ));
        // the counters behind the study's metrics, per CP port and per source, in the window
        // (the experiments compute each reading of the metrics from them; docs/models/multicast.md)
        let mut on_tree = vec![false; sc.n_ports()];
        for f in sc.flows.iter().filter(|f| f.group.is_some()) {
            for &p in &f.path {
                on_tree[p] = sc.qcn.cp_ports[p];
            }
        }
        for p in (0..sc.n_ports()).filter(|&p| on_tree[p]) {
            let name = sc.port_name(p);
            let drops = b.port_drops[p] - a.port_drops[p];
            for (metric, v, what) in [
                ("mc_cp_enqueued", d(CM_ENQ, p), "data frames enqueued"),
                ("mc_cp_dropped", drops, "data frames dropped"),
                (
                    "mc_cp_arrivals",
                    d(CM_ENQ, p) + drops,
                    "data frames arriving (enqueued + dropped)",
                ),
                (
                    "mc_cp_samples",
                    d(CM_SAMPLES, p),
                    "sample instants of the CP",
                ),
                (
                    "mc_cp_fb_negative",
                    d(CM_NEG, p),
                    "samples with Fb < 0 at which the scheme lets the CP send feedback",
                ),
                ("mc_cp_cnm", d(CM_CNM, p), "CNMs sent"),
            ] {
                rows.push((
                    metric.into(),
                    v as f64,
                    "frames".into(),
                    format!("{name}: {what}, {win}"),
                ));
            }
        }
        for (fi, f) in sc
            .flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.group.is_some())
        {
            let sent_f = b.flow_sent_frames[fi] - a.flow_sent_frames[fi];
            rows.push((
                "mc_rp_sent".into(),
                sent_f as f64,
                "frames".into(),
                format!("{}: data frames sent by the source, {win}", f.name),
            ));
            rows.push((
                "mc_rp_cnm_received".into(),
                d(CM_CNM_RX, fi) as f64,
                "frames".into(),
                format!("{}: CNMs received by the source, {win}", f.name),
            ));
        }

        // per RP: CR samples in the window (rp_rates, every metrics.rate_interval)
        let find = |n: &str| tables.iter().find(|t| t.name == n);
        let mut cr_mean = vec![f64::NAN; flows.len()];
        if let Some(rr) = find("rp_rates") {
            if let (
                Some(ColumnData::Cat { codes: fl, .. }),
                Some(ColumnData::I64(t)),
                Some(ColumnData::F64(cr)),
            ) = (rr.column("flow"), rr.column("t_ps"), rr.column("cr_bps"))
            {
                for (fi, f) in sc.flows.iter().enumerate() {
                    if f.group.is_none() || flows[fi].rp.is_none() {
                        continue;
                    }
                    let xs: Vec<f64> = (0..fl.len())
                        .filter(|&i| {
                            fl[i] as usize == fi && (t[i] as u64) >= t0 && (t[i] as u64) < t1
                        })
                        .map(|i| cr[i])
                        .collect();
                    let (m, sd) = mean_std(&xs);
                    cr_mean[fi] = m;
                    let d = format!("{}, {} samples, {win}", f.name, xs.len());
                    rows.push(("mc_cr_mean".into(), m, "bps".into(), d.clone()));
                    rows.push(("mc_cr_std".into(), sd, "bps".into(), d));
                }
            }
        }
        let rps: Vec<f64> = (0..sc.flows.len())
            .filter(|&fi| sc.flows[fi].group.is_some() && !cr_mean[fi].is_nan())
            .map(|fi| cr_mean[fi])
            .collect();
        if !rps.is_empty() {
            rows.push((
                "mc_avg_cr".into(),
                rps.iter().sum::<f64>() / rps.len() as f64,
                "bps".into(),
                format!(
                    "mean over the {} multicast RPs of their mean CR, {win}",
                    rps.len()
                ),
            ));
        }

        // per CP queue on a multicast tree: samples in the window (queue_samples)
        let qs = find("queue_samples");
        for p in (0..sc.n_ports()).filter(|&p| on_tree[p]) {
            let name = sc.port_name(p);
            let xs: Vec<f64> =
                match qs.map(|q| (q.column("port"), q.column("t_ps"), q.column("qlen_bytes"))) {
                    Some((
                        Some(ColumnData::Str(pn)),
                        Some(ColumnData::I64(t)),
                        Some(ColumnData::I64(qb)),
                    )) => (0..pn.len())
                        .filter(|&i| pn[i] == name && (t[i] as u64) >= t0 && (t[i] as u64) < t1)
                        .map(|i| qb[i] as f64)
                        .collect(),
                    _ => Vec::new(),
                };
            let (m, sd) = mean_std(&xs);
            let d = if xs.is_empty() {
                format!("{name}: not in metrics.queue_ports, no samples")
            } else {
                format!("{name}, {} samples, {win}", xs.len())
            };
            rows.push(("mc_queue_mean".into(), m, "B".into(), d.clone()));
            rows.push(("mc_queue_std".into(), sd, "B".into(), d.clone()));
            rows.push((
                "mc_queue_dev_qeq".into(),
                m - sc.qcn.cp.q_eq_bytes as f64,
                "B".into(),
                format!("mean queue - Qeq ({} B); {d}", sc.qcn.cp.q_eq_bytes),
            ));
        }

        // per group: sources' throughput (frames handed to the NIC) and Jain's index
        for (gi, g) in sc.groups.iter().enumerate() {
            let fis: Vec<usize> = (0..sc.flows.len())
                .filter(|&fi| sc.flows[fi].group == Some(gi))
                .collect();
            if fis.is_empty() {
                continue;
            }
            let tput: Vec<f64> = fis
                .iter()
                .map(|&fi| (b.flow_sent_bytes[fi] - a.flow_sent_bytes[fi]) as f64 * 8.0 / span)
                .collect();
            for (k, &fi) in fis.iter().enumerate() {
                rows.push((
                    "mc_source_throughput".into(),
                    tput[k],
                    "bps".into(),
                    format!(
                        "{} (group {}), sent by the source, {win}",
                        sc.flows[fi].name, g.name
                    ),
                ));
            }
            rows.push((
                "mc_jain_throughput".into(),
                jain(&tput),
                "".into(),
                format!(
                    "group {}: Jain's index over its {} sources' throughputs, {win}",
                    g.name,
                    fis.len()
                ),
            ));
            let crs: Vec<f64> = fis
                .iter()
                .map(|&fi| cr_mean[fi])
                .filter(|x| !x.is_nan())
                .collect();
            if crs.len() == fis.len() {
                rows.push((
                    "mc_jain_cr".into(),
                    jain(&crs),
                    "".into(),
                    format!(
                        "group {}: Jain's index over its {} sources' mean CR, {win}",
                        g.name,
                        fis.len()
                    ),
                ));
            }
        }
        rows
    }
}

/// Mean and population standard deviation (NaN for no samples).
pub(crate) fn mean_std(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    (m, v.sqrt())
}

/// Jain's fairness index (sum x)^2 / (n * sum x^2); 1 = all equal. NaN when all are zero.
pub(crate) fn jain(xs: &[f64]) -> f64 {
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || s2 == 0.0 {
        f64::NAN
    } else {
        s * s / (xs.len() as f64 * s2)
    }
}

impl Needs for Multicast {
    fn name(&self) -> &'static str {
        "multicast"
    }
    /// Each member's copies are counted.
    fn receives(&self, core: &Core, fi: usize) -> bool {
        core.flows[fi].mc != NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_index_and_mean_std() {
        // (values, Jain)
        let cases: &[(&[f64], f64)] = &[
            (&[1.0, 1.0, 1.0], 1.0),
            (&[1.0, 0.0], 0.5),
            (&[3.0, 1.0], 16.0 / 20.0),
            (&[5.0], 1.0),
        ];
        for (xs, want) in cases {
            assert!((jain(xs) - want).abs() < 1e-12, "{xs:?}");
        }
        assert!(jain(&[0.0, 0.0]).is_nan());
        let (m, sd) = mean_std(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!((m, sd), (5.0, 2.0));
        assert!(mean_std(&[]).0.is_nan());
    }
}
