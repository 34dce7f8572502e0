//! Building a run: the data path's state from the scenario, then each subsystem by its own
//! `build`, then the events that start the run. The order of the start events is part of the
//! model (equal-time events run in the order they were scheduled).

use crate::sim::prelude::*;

impl Recorder {
    fn build(sc: &Scenario) -> Recorder {
        Recorder {
            nbins: (sc.max_end() / sc.metrics.throughput_bin) as usize + 1,
            bin: sc.metrics.throughput_bin,
            tput_ports: Vec::new(),
            tput_bytes: Vec::new(),
            tput_frames: Vec::new(),
            tput_cache: Vec::new(),
            queue_ports: Vec::new(),
            mem_switches: {
                // each recorded switch's output ports in port order, in one pass over the ports
                let mut ports: Vec<Vec<u32>> = vec![Vec::new(); sc.nodes.len()];
                for p in 0..sc.n_ports() {
                    let n = sc.port_ends(p).0;
                    if sc.metrics.memory_switches[n] {
                        ports[n].push(p as u32);
                    }
                }
                (0..sc.nodes.len())
                    .filter(|&n| sc.metrics.memory_switches[n])
                    .map(|n| (n as u32, std::mem::take(&mut ports[n])))
                    .collect()
            },
            m_t: Vec::new(),
            m_sw: Vec::new(),
            m_bytes: Vec::new(),
            q_t: Vec::new(),
            q_port: Vec::new(),
            q_bytes: Vec::new(),
            q_frames: Vec::new(),
            r_t: Vec::new(),
            r_flow: Vec::new(),
            r_cr: Vec::new(),
            r_tr: Vec::new(),
            r_active: Vec::new(),
            events: Vec::new(),
            max_events: sc.metrics.max_event_rows,
            events_dropped: 0,
            mask: sc.metrics.record_mask,
            rec_switch_drop: sc.metrics.record_switch_drops,
        }
    }
}

/// What the data path takes from the subsystems when it is built: each port's congestion-point
/// slots (from congestion management) and each flow's go-back-N index (from the transport).
pub(super) struct Parts<'p> {
    pub(super) port_cps: &'p [(u32, u32)],
    pub(super) gbn_ix: &'p [u32],
    /// PFC's per-priority queues per port (0: one FIFO).
    pub(super) pfc_classes: usize,
}

impl<'a> Core<'a> {
    /// The ports, the flows with their sources and rate limiters, the recorder.
    fn build(sc: &'a Scenario, seed: u64, parts: Parts) -> Core<'a> {
        let Parts {
            port_cps,
            gbn_ix,
            pfc_classes,
        } = parts;
        let mut rec = Recorder::build(sc);
        let mut ports = Vec::with_capacity(sc.n_ports());
        for (p, &(cp, ecn)) in port_cps.iter().enumerate() {
            let (from, to) = sc.port_ends(p);
            let link = &sc.links[p / 2];
            let peer_is_switch = sc.nodes[to].kind == NodeKind::Switch;
            let prop = link.delay + link.extra_delay;
            let tput_slot = if sc.metrics.throughput_ports[p] {
                rec.tput_ports.push(p as u32);
                (rec.tput_ports.len() - 1) as u32
            } else {
                NONE
            };
            if sc.metrics.queue_ports[p] {
                rec.queue_ports.push(p as u32);
            }
            ports.push(Port {
                node: from as u32,
                peer: to as u32,
                peer_is_switch,
                to_peer_queue: prop
                    + if peer_is_switch {
                        sc.nodes[to].latency
                    } else {
                        0
                    },
                prop,
                rate: link.rate_bps,
                last_size: 0,
                last_tx: 0,
                last_gap: 0,
                preamble: link.preamble_bytes,
                ifg: link.ifg_bytes,
                from_switch: sc.nodes[from].kind == NodeKind::Switch,
                cap: sc.port_capacity(p),
                q: VecDeque::with_capacity(if pfc_classes > 0 { 0 } else { 64 }),
                ctrl: VecDeque::new(),
                pq: (0..pfc_classes).map(|_| VecDeque::new()).collect(),
                pfc: pfc_classes > 0,
                pq_bytes: vec![0; pfc_classes],
                fc_waiting: 0,
                q_bytes: 0,
                busy_until: 0,
                txdone_pending: false,
                cp,
                ecn,
                ba: NONE,
                tput_slot,
                tx_frames: 0,
                tx_bytes: 0,
                drop_frames: 0,
                drop_bytes: 0,
                max_q_bytes: 0,
                q_area: 0,
                q_last_t: 0,
                slot_ok: false,
                direct_ok: false,
                fixed: false,
                fq: VecDeque::new(),
                cp_here: false,
                cp_left: 0.0,
            });
        }
        rec.tput_bytes = vec![0; rec.tput_ports.len() * rec.nbins];
        rec.tput_frames = vec![0; rec.tput_ports.len() * rec.nbins];
        rec.tput_cache = vec![TputBin::default(); rec.tput_ports.len()];

        // Round-robin NICs: under `nic_scheduler = "round_robin"` a NIC that sends messages
        // (a `sender = "nic"` flow) serves every unicast flow it sends, its generators' too, as
        // a queue pair each (docs/models/network.md, "The NIC's scheduler")
        let mut rr_nic = vec![false; sc.nodes.len()];
        if sc.nic_round_robin {
            for f in sc.flows.iter().filter(|f| f.holds && f.group.is_none()) {
                rr_nic[f.src] = true;
            }
        }
        let mut flows = Vec::with_capacity(sc.flows.len());
        for (i, f) in sc.flows.iter().enumerate() {
            let nic_rate = sc.links[f.path[0] / 2].rate_bps;
            let r = cc::Cm::reaction(sc, seed, i, nic_rate);
            let (rp, rep_fb, mut rl_cap, rl_burst) = (r.rp, r.rep_fb, r.rl_cap, r.rl_burst);
            // a generator served as a queue pair: its frames wait for their turn in its own send
            // queue (the rate limiter's), which holds what the NIC's buffer would have held
            // when no rate limiter gives it a size; a frame that finds it full is dropped there
            let rr_generator = !f.holds && f.group.is_none() && rr_nic[f.src];
            if rr_generator && rp.is_none() {
                rl_cap = match ports[f.path[0]].cap {
                    Capacity::Bytes(b) => b,
                    Capacity::Frames(n) => n.saturating_mul(f.frame_bytes as u64),
                    Capacity::Infinite | Capacity::Shared => u64::MAX,
                };
            }
            let slot_ps = units::tx_time_f(f.frame_bytes as u64, nic_rate);
            let cbr_gap_ps = f.frame_bytes as f64 * 8.0 * units::SEC as f64 / f.rate_bps;
            // the rate limiter's start rate: the NIC rate, or CR of a QCN RP active from the
            // start (`cc.qcn.rp.start_rate`; the line rate unless set)
            let start_rate = match &rp {
                Some(Reaction::Qcn { rp, .. }) => rp.current_rate(),
                Some(Reaction::E2e { rate }) => *rate,
                _ => nic_rate,
            };
            flows.push(Flow {
                src: f.src as u32,
                dst: f.dst as u32,
                path: f.path.iter().map(|&p| p as u32).collect(),
                frame: f.frame_bytes,
                int_bytes: cc::hpcc::int_wire_bytes(sc, i),
                traffic: f.traffic,
                rate_bps: f.rate_bps,
                start: f.start,
                stop: f.stop,
                size: f.size_bytes,
                slot_ps,
                p: (f.rate_bps / nic_rate).min(1.0),
                rng: Rng::stream(seed, StreamId::new(kinds::SOURCE, i as u32, 0)),
                gen_k: 0,
                next_gen: f.start,
                gen_lazy: false,
                gen_bytes: 0,
                rp,
                rl_q: VecDeque::new(),
                rl_q_bytes: 0,
                rl_cap,
                bucket: {
                    let mut b = TokenBucket::new(
                        start_rate,
                        rl_burst.unwrap_or(f.frame_bytes as u64) as f64,
                        0,
                    );
                    if !sc.rl_start_full {
                        b.empty(0); // a rate limiter active from the start (`start_active`)
                    }
                    b
                },
                rl_timer: LazyTimer::default(),
                rp_timer: LazyTimer::default(),
                cbr_gap_ps,
                greedy_gap: round_ps(cbr_gap_ps),
                cbr_t0: f.start,
                gbn: gbn_ix[i],
                // set by `prepare_ports` from the subsystems' answers (sim/fastpath.rs)
                rx_special: false,
                gen_frames: 0,
                sent_frames: 0,
                sent_bytes: 0,
                rl_drops: 0,
                nic_drops: 0,
                net_drops: 0,
                rx_frames: 0,
                rx_bytes: 0,
                late_frames: 0,
                delay_sum: 0.0,
                finish: None,
                mc: NONE,
                rep_fb,
                class: sc.fc.class_of(f.priority) as u8,
                gated: false,
                e2e: sc.cc.acked() && f.group.is_none(),
                waits: f.traffic == Traffic::Greedy || f.holds,
                holds: f.holds,
                rr: (f.holds && sc.nic_round_robin) || rr_generator,
                at_nic: false,
                route: if !sc.link_events.is_empty() && f.group.is_none() {
                    ROUTE_LOOKUP
                } else if f.spray {
                    ROUTE_SPRAY
                } else {
                    ROUTE_PATH
                },
            });
        }

        let finite = sc
            .flows
            .iter()
            .filter(|f| f.size_bytes.is_some() && f.group.is_none())
            .count() as u64;
        Core {
            sc,
            now: 0,
            // drain mode without a finite unicast flow to wait for ends at `duration`
            end: if finite > 0 {
                sc.max_end()
            } else {
                sc.duration
            },
            unfinished: finite,
            // a calendar sized for the fabric: about one bucket per four ports (512 up to a
            // 2,048-port network, 16,384 from 65,536 ports; engine/queue.rs)
            q: EventQueue::with_buckets(sc.n_ports() / 4),
            pkts: Vec::with_capacity(4096),
            free: Vec::with_capacity(4096),
            ports,
            flows,
            rec,
            events: 0,
            frames_forwarded: 0,
            ack_drops: 0,
            ctrl_unroutable: 0,
            ack_drop_bytes: 0,
            live_data: 0,
            lazy_gen: true,
            count_drops: true,
            spray_rng: Rng::stream(seed, StreamId::new(kinds::SPRAY, 0, 0)),
            spray_cand: Vec::with_capacity(64),
            slow: false,
            slot_t: NEVER,
            slot_seq: 0,
            slot_port: NONE,
            slot_on: true,
            slot_fires: 0,
            link_down: if sc.link_events.is_empty() {
                Vec::new()
            } else {
                vec![false; sc.links.len()]
            },
            routes_now: (!sc.link_events.is_empty()).then(|| sc.routes.clone()),
            rev_route: if sc.feedback_reverse {
                ReverseRoutes::of(sc)
            } else {
                ReverseRoutes::default()
            },
            direct_on: true,
            ignore_needs: None,
            fixed_on: true,
            fixed_ports: Vec::new(),
            fold: Fold::new(),
            next_qsample: NEVER,
            hops: Vec::new(),
            prefetch: None,
            gated_run: true,
            gate_skip_on: true,
        }
    }
}

impl<'a> Sim<'a> {
    /// A run of scenario `sc` with `seed`: the data path, each subsystem, and the start events.
    pub fn new(sc: &'a Scenario, seed: u64) -> Sim<'a> {
        let fc = flow_control::Fc::build(sc);
        let (cm, port_cps) = cc::Cm::build(sc, seed);
        let (gbn, gbn_ix) = transport::GbnState::build(sc);
        let pfc_classes = if sc.fc.mode == FcMode::Pfc { fc.nc } else { 0 };
        let mut core = Core::build(
            sc,
            seed,
            Parts {
                port_cps: &port_cps,
                gbn_ix: &gbn_ix,
                pfc_classes,
            },
        );
        let mcast = multicast::Multicast::build(sc, &mut core);
        let mut sim = Sim {
            core,
            cm,
            mcast,
            fc,
            buf: buffer::Buffers::build(sc),
            gbn,
            links: links::LinkState::build(sc),
        };
        sim.core.build_hops();
        sim.cm.place_countdowns(&mut sim.core);
        sim.start();
        sim
    }

    /// The events that start the run, in the order that makes it deterministic: the multicast
    /// statistics window, the BA sensors' timers, each flow's first frame and reaction point,
    /// the scheduled rate changes and link changes, the flow-control check, the samplers.
    fn start(&mut self) {
        let sc = self.core.sc;
        if !sc.groups.is_empty() {
            self.core
                .q
                .push(sc.analysis.stats_from, Ev::McStats { edge: 0 });
            self.core
                .q
                .push(sc.analysis.stats_to, Ev::McStats { edge: 1 });
        }
        self.cm.transient_init(&mut self.core);
        for i in 0..self.core.flows.len() {
            let f = &mut self.core.flows[i];
            let start = f.start;
            let t0 = match f.traffic {
                Traffic::Bernoulli => start + f.rng.geometric(f.p) * f.slot_ps,
                Traffic::Poisson => start + Self::poisson_gap(f),
                Traffic::Cbr | Traffic::Greedy => start,
            };
            if t0 < f.stop {
                f.next_gen = t0;
                self.core.q.push(t0, Ev::Gen { flow: i as u32 });
            } else {
                f.next_gen = NEVER;
            }
            let f = &mut self.core.flows[i];
            if let Some(rp) = f.rp.as_mut() {
                let out = rp.start(start);
                self.core.rp_output(i, out, start);
            }
        }
        for (i, s) in sc.schedule.iter().enumerate() {
            self.core.q.push(s.at, Ev::PortRate { entry: i as u32 });
        }
        for e in &sc.link_events {
            self.core.q.push(
                e.at,
                Ev::LinkChange {
                    link: e.link as u32,
                    up: e.up as u32,
                },
            );
        }
        if self.fc.guard.is_on() {
            self.core.q.push(self.fc.guard.period, Ev::FcCheck);
        }
        if !self.core.rec.queue_ports.is_empty() || !self.core.rec.mem_switches.is_empty() {
            self.core.q.push(0, Ev::SampleQueues);
            self.core.next_qsample = 0;
        }
        if (sc.cc != CcMode::None || sc.metrics.host_queues) && !self.core.flows.is_empty() {
            self.core.q.push(0, Ev::SampleRates);
        }
    }
}
