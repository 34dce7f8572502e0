//! Turning the recorder and counters into result tables.

use crate::sim::prelude::*;

impl<'a> Sim<'a> {
    // ---------------------------------------------------------------- results

    /// Generate every frame with its own event (slower; the default lazy generator must give
    /// identical results, which a test checks).
    pub fn set_lazy_generation(&mut self, on: bool) {
        self.core.lazy_gen = on;
    }

    /// Build every frame that a full rate-limiter queue drops and drop it (slower; the default
    /// counts them without building them and must give identical results, which a test checks).
    pub fn set_counted_drops(&mut self, on: bool) {
        self.core.count_drops = on;
    }

    /// Keep every transmission-done as an event in the queue (slower; the default keeps one in
    /// a slot beside the queue and must give identical results, which a test checks).
    pub fn set_txdone_slot(&mut self, on: bool) {
        self.core.slot_on = on;
    }

    /// Transmission-dones that were fired from the slot instead of popped from the queue.
    pub fn slot_fires(&self) -> u64 {
        self.core.slot_fires
    }

    /// Events handled: popped from the queue or fired from the transmission-done slot.
    pub fn events(&self) -> u64 {
        self.core.events + self.core.slot_fires
    }

    /// Data frames alive in the network (queues, links, rate limiters) right now.
    pub fn live_data_frames(&self) -> u64 {
        // frames in the arena, and those not yet there (made, in a rate-limiter queue)
        self.core.live_data
            + self
                .core
                .flows
                .iter()
                .map(|f| f.rl_q.len() as u64)
                .sum::<u64>()
    }

    /// Data frames whose arrival at their destination falls after the end of the run.
    pub fn late_data_frames(&self) -> u64 {
        self.core.flows.iter().map(|f| f.late_frames).sum()
    }

    pub fn into_output(mut self, seed: u64, wall_s: f64) -> RunOutput {
        let sc = self.core.sc;
        let events = self.events();
        // the run's actual end (drain mode: when the last finite flow finished, or the cap)
        let end = self.core.end;
        self.fc.set_end(end);
        let port_name: Vec<String> = (0..sc.n_ports()).map(|p| sc.port_name(p)).collect();
        let flow_name: Vec<&str> = sc.flows.iter().map(|f| f.name.as_str()).collect();
        let node_name = |n: u32| sc.nodes[n as usize].name.clone();
        // the recorder's columns move into the tables (no copy of large sample vectors)
        let mc_dst: Vec<Option<String>> = (0..self.core.flows.len())
            .map(|i| multicast::Multicast::flow_dst(sc, i))
            .collect();
        let mc_copies: Vec<u64> = (0..self.core.flows.len())
            .map(|i| self.mcast.copies(&self.core, i))
            .collect();
        let gbn_counts: Vec<[u64; 5]> = (0..self.core.flows.len())
            .map(|i| self.gbn.counts(&self.core, i))
            .collect();
        let mc_members = (!sc.groups.is_empty()).then(|| self.mcast.members_table(&self.core));
        // each subsystem's columns of the shared flows and ports tables
        let cm_flow_cols = self.cm.flow_columns(&self.core);
        let (cm_port_cols, cm_port_cols_transient) = self.cm.port_columns(&self.core);
        let fc_port_cols = self.fc.port_columns(self.core.ports.len(), end);
        let fct = self.fct_table();
        let link_out = self
            .links
            .as_ref()
            .map(|l| l.outputs(sc, self.core.ctrl_unroutable));
        // what a reader of the results must not miss: flows that cannot complete, frames stuck
        let mut warnings = self.gbn.loss_warnings(&self.core);
        warnings.extend(self.fc.stuck_warnings(&self.core));
        warnings.extend(crate::scenario::budget::widened_warnings(sc));
        let drain_rows = self.drain_rows();
        let mut rec = self.core.rec;
        let mut tables = Vec::new();

        // port_throughput
        {
            let n = rec.tput_ports.len() * rec.nbins;
            let (mut port, mut t, mut bytes, mut frames, mut bps) = (
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(n),
            );
            let nbins_in_run = (end.div_ceil(rec.bin)) as usize;
            for (slot, &p) in rec.tput_ports.iter().enumerate() {
                for b in 0..nbins_in_run.min(rec.nbins) {
                    let k = slot * rec.nbins + b;
                    port.push(port_name[p as usize].clone());
                    t.push((b as u64 * rec.bin) as i64);
                    bytes.push(rec.tput_bytes[k] as i64);
                    frames.push(rec.tput_frames[k] as i64);
                    bps.push(rec.tput_bytes[k] as f64 * 8.0 / units::secs(rec.bin));
                }
            }
            tables.push(
                Table::new("port_throughput")
                    .col("port", ColumnData::Str(port))
                    .col("t_ps", ColumnData::I64(t))
                    .col("bin_ps", ColumnData::I64(vec![rec.bin as i64; bytes.len()]))
                    .col("bytes", ColumnData::I64(bytes))
                    .col("frames", ColumnData::I64(frames))
                    .col("throughput_bps", ColumnData::F64(bps)),
            );
        }
        tables.push(
            Table::new("queue_samples")
                .col(
                    "port",
                    ColumnData::Str(
                        rec.q_port
                            .iter()
                            .map(|&p| port_name[p as usize].clone())
                            .collect(),
                    ),
                )
                .col("t_ps", ColumnData::I64(std::mem::take(&mut rec.q_t)))
                .col(
                    "qlen_bytes",
                    ColumnData::I64(std::mem::take(&mut rec.q_bytes)),
                )
                .col(
                    "qlen_frames",
                    ColumnData::I64(std::mem::take(&mut rec.q_frames)),
                ),
        );
        tables.push(
            Table::new("switch_memory")
                .col(
                    "switch",
                    ColumnData::Str(rec.m_sw.iter().map(|&n| node_name(n)).collect()),
                )
                .col("t_ps", ColumnData::I64(std::mem::take(&mut rec.m_t)))
                .col("bytes", ColumnData::I64(std::mem::take(&mut rec.m_bytes))),
        );
        tables.push(
            Table::new("rp_rates")
                .col(
                    "flow",
                    // codes are flow indices: no string per sample (docs/performance.md)
                    ColumnData::Cat {
                        codes: std::mem::take(&mut rec.r_flow),
                        values: flow_name.iter().map(|s| s.to_string()).collect(),
                    },
                )
                .col("t_ps", ColumnData::I64(std::mem::take(&mut rec.r_t)))
                .col("cr_bps", ColumnData::F64(std::mem::take(&mut rec.r_cr)))
                .col("tr_bps", ColumnData::F64(std::mem::take(&mut rec.r_tr)))
                .col(
                    "rl_active",
                    ColumnData::Bool(std::mem::take(&mut rec.r_active)),
                ),
        );
        {
            let ev = &rec.events;
            tables.push(
                Table::new("events")
                    .col(
                        "t_ps",
                        ColumnData::I64(ev.iter().map(|e| e.t as i64).collect()),
                    )
                    .col(
                        "kind",
                        ColumnData::Str(
                            ev.iter()
                                .map(|e| REC_KIND_NAMES[e.kind as usize].to_string())
                                .collect(),
                        ),
                    )
                    .col(
                        "node",
                        ColumnData::Str(
                            ev.iter()
                                .map(|e| {
                                    if REC_AT_HOST & (1 << e.kind) != 0 {
                                        node_name(e.node)
                                    } else {
                                        port_name[e.node as usize].clone()
                                    }
                                })
                                .collect(),
                        ),
                    )
                    .col(
                        "flow",
                        ColumnData::Str(
                            ev.iter()
                                .map(|e| {
                                    flow_name
                                        .get(e.flow as usize)
                                        .map(|s| s.to_string())
                                        .unwrap_or_default()
                                })
                                .collect(),
                        ),
                    )
                    .col(
                        "value",
                        ColumnData::I64(ev.iter().map(|e| e.value).collect()),
                    ),
            );
        }
        // flows
        {
            let fl = &self.core.flows;
            let spec = &sc.flows;
            let dur = units::secs(end);
            tables.push(
                Table::new("flows")
                    .col(
                        "flow",
                        ColumnData::Str(flow_name.iter().map(|s| s.to_string()).collect()),
                    )
                    .col(
                        "src",
                        ColumnData::Str(fl.iter().map(|f| node_name(f.src)).collect()),
                    )
                    .col(
                        "dst",
                        ColumnData::Str(
                            (0..fl.len())
                                .map(|i| mc_dst[i].clone().unwrap_or_else(|| node_name(fl[i].dst)))
                                .collect(),
                        ),
                    )
                    .col(
                        "traffic",
                        ColumnData::Str(
                            spec.iter()
                                .map(|f| match f.traffic {
                                    Traffic::Cbr => "cbr",
                                    Traffic::Bernoulli => "bernoulli",
                                    Traffic::Poisson => "poisson",
                                    Traffic::Greedy => "greedy",
                                })
                                .map(str::to_string)
                                .collect(),
                        ),
                    )
                    .col(
                        "offered_bps",
                        ColumnData::F64(fl.iter().map(|f| f.rate_bps).collect()),
                    )
                    .col(
                        "start_t_ps",
                        ColumnData::I64(fl.iter().map(|f| f.start as i64).collect()),
                    )
                    .col(
                        "size_bytes",
                        ColumnData::I64(
                            fl.iter()
                                .map(|f| f.size.map(|s| s as i64).unwrap_or(-1))
                                .collect(),
                        ),
                    )
                    .col(
                        "gen_frames",
                        ColumnData::I64(fl.iter().map(|f| f.gen_frames as i64).collect()),
                    )
                    .col(
                        "tx_frames",
                        ColumnData::I64(fl.iter().map(|f| f.sent_frames as i64).collect()),
                    )
                    .col(
                        "tx_bytes",
                        ColumnData::I64(fl.iter().map(|f| f.sent_bytes as i64).collect()),
                    )
                    .col(
                        "rx_frames",
                        ColumnData::I64(fl.iter().map(|f| f.rx_frames as i64).collect()),
                    )
                    .col(
                        "rx_bytes",
                        ColumnData::I64(fl.iter().map(|f| f.rx_bytes as i64).collect()),
                    )
                    .col(
                        "rl_dropped_frames",
                        ColumnData::I64(fl.iter().map(|f| f.rl_drops as i64).collect()),
                    )
                    .col(
                        "nic_dropped_frames",
                        ColumnData::I64(fl.iter().map(|f| f.nic_drops as i64).collect()),
                    )
                    .col(
                        "dropped_frames",
                        ColumnData::I64(fl.iter().map(|f| f.net_drops as i64).collect()),
                    )
                    .col(
                        "in_flight_frames",
                        ColumnData::I64(
                            fl.iter()
                                .enumerate()
                                .map(|(i, f)| {
                                    // go-back-N: frames the receiver discarded and frames
                                    // withdrawn before the wire are not in flight
                                    let g = gbn_counts[i];
                                    (f.gen_frames + mc_copies[i]
                                        - f.rx_frames
                                        - f.rl_drops
                                        - f.nic_drops
                                        - f.net_drops
                                        - g[3]
                                        - g[4]) as i64
                                })
                                .collect(),
                        ),
                    )
                    .col(
                        "replicated_frames",
                        ColumnData::I64(mc_copies.iter().map(|&c| c as i64).collect()),
                    )
                    .cols(cm_flow_cols)
                    .col(
                        "fct_ps",
                        ColumnData::I64(
                            fl.iter()
                                .map(|f| f.finish.map(|t| (t - f.start) as i64).unwrap_or(-1))
                                .collect(),
                        ),
                    )
                    .col(
                        "mean_delay_ps",
                        ColumnData::F64(
                            fl.iter()
                                .map(|f| {
                                    if f.rx_frames > 0 {
                                        f.delay_sum / f.rx_frames as f64
                                    } else {
                                        f64::NAN
                                    }
                                })
                                .collect(),
                        ),
                    )
                    .col(
                        "throughput_bps",
                        ColumnData::F64(
                            fl.iter()
                                .map(|f| {
                                    f.rx_bytes as f64 * 8.0
                                        / (dur - units::secs(f.start)).max(1e-12)
                                })
                                .collect(),
                        ),
                    ),
            );
        }
        tables.extend(self.fc.tables(&port_name, &flow_name));
        tables.extend(self.buf.table(sc));
        // ports
        {
            let ps = &self.core.ports;
            let dur = end as f64;
            tables.push(
                Table::new("ports")
                    .col("port", ColumnData::Str(port_name.clone()))
                    .col(
                        "link_rate_bps",
                        ColumnData::F64((0..ps.len()).map(|p| sc.links[p / 2].rate_bps).collect()),
                    )
                    .col(
                        "tx_frames",
                        ColumnData::I64(ps.iter().map(|p| p.tx_frames as i64).collect()),
                    )
                    .col(
                        "tx_bytes",
                        ColumnData::I64(ps.iter().map(|p| p.tx_bytes as i64).collect()),
                    )
                    .col(
                        "drop_frames",
                        ColumnData::I64(ps.iter().map(|p| p.drop_frames as i64).collect()),
                    )
                    .col(
                        "drop_bytes",
                        ColumnData::I64(ps.iter().map(|p| p.drop_bytes as i64).collect()),
                    )
                    .cols(cm_port_cols)
                    .col(
                        "max_qlen_bytes",
                        ColumnData::I64(ps.iter().map(|p| p.max_q_bytes as i64).collect()),
                    )
                    .col(
                        "mean_qlen_bytes",
                        ColumnData::F64(ps.iter().map(|p| p.q_area as f64 / dur).collect()),
                    )
                    .cols(cm_port_cols_transient)
                    .cols(fc_port_cols),
            );
        }
        let mut summary =
            crate::summary::summarize(sc, &tables, rec.events_dropped, self.fc.recs_dropped);
        if let Some((fct, stats, rows)) = fct {
            crate::summary::append_rows(&mut summary, rows);
            tables.push(fct);
            tables.push(stats);
        }
        if let Some((t, rows)) = link_out {
            crate::summary::append_rows(&mut summary, rows);
            tables.push(t);
        }
        crate::summary::append_rows(&mut summary, self.buf.summary_rows(sc));
        if sc.transport.ack_queue == AckQueue::Data && self.core.flows.iter().any(|f| f.gbn != NONE)
        {
            // with go-back-N flows, whose ACKs these are (in the ports' drops too, not in any
            // flow's)
            let rows = vec![
                (
                    "ack_drops".to_string(),
                    self.core.ack_drops as f64,
                    "frames".to_string(),
                    "ACKs and NACKs dropped in a switch's data queue (transport.ack_queue = \"data\")"
                        .to_string(),
                ),
                (
                    "ack_drop_bytes".to_string(),
                    self.core.ack_drop_bytes as f64,
                    "bytes".to_string(),
                    "bytes of those ACKs and NACKs".to_string(),
                ),
            ];
            crate::summary::append_rows(&mut summary, rows);
        }
        crate::summary::append_rows(&mut summary, self.fc.guard.rows(sc));
        crate::summary::append_rows(&mut summary, warnings);
        crate::summary::append_rows(&mut summary, drain_rows);
        if let Some(members) = mc_members {
            let rows = self.mcast.summary_rows(sc, &self.core.flows, &tables);
            crate::summary::append_rows(&mut summary, rows);
            tables.push(members);
            if let Some(fb) = self.mcast.cp_fb_table(sc) {
                tables.push(fb);
            }
        }
        tables.push(summary);
        RunOutput {
            tables,
            resolved_json: serde_json::to_string_pretty(&sc.resolved).unwrap_or_default(),
            seed,
            events,
            sim_time_ps: end,
            wall_s,
            frames_forwarded: self.core.frames_forwarded,
        }
    }

    /// Drain mode's summary rows: the cap, the run's actual end and whether the cap ended it
    /// (`meta.drain_until`; none without drain mode).
    fn drain_rows(&self) -> crate::sim::record::fct::Rows {
        let sc = self.core.sc;
        let Some(cap) = sc.drain_until else {
            return Vec::new();
        };
        let end = self.core.end;
        let left = self.core.unfinished;
        let detail = format!(
            "drain mode: arrivals until meta.duration = {}, then on until every finite flow \
             finished, at the latest meta.drain_until = {}",
            units::fmt_time(sc.duration),
            units::fmt_time(cap)
        );
        vec![
            (
                "drain_until".into(),
                units::secs(cap),
                "s".into(),
                detail.clone(),
            ),
            (
                "run_end".into(),
                units::secs(end),
                "s".into(),
                detail.clone(),
            ),
            (
                "drain_cap_reached".into(),
                (left > 0) as u8 as f64,
                "bool".into(),
                if left > 0 {
                    format!("{detail}: {left} finite flows unfinished at the cap")
                } else {
                    format!("{detail}: every finite flow finished")
                },
            ),
        ]
    }
}
