//! The data path's shortcuts and what each subsystem needs of them.
//!
//! Six shortcuts make the common path cheap (docs/performance.md): a frame sent straight to
//! the wire at an idle, empty port (`send_direct`: no enqueue, no dequeue), the
//! transmission-done slot beside the event queue (`txdone_at!`), a delivery that only counts
//! (`deliver`), departures fixed at enqueue (`enqueue_fixed`: at a FIFO switch port towards
//! a host whose order nothing can change, a frame's start, end and delivery are computed when it
//! is queued, so it makes no event there), switch arrivals folded into their frames' start at
//! the source NIC (`fold_arrival`: at such a port whose every input has the same lead, the
//! arrival is handled when the frame starts, so it makes no event), and an event loop that
//! does not ask, at a frame's departure from its rate limiter, whether a window lets it leave
//! (`Sim::event_loop::<false>`, in runs where no flow has a window or INT bytes). Each bypasses
//! something a mechanism may act on. So every subsystem answers, in its own file, the
//! questions of [`Needs`]; [`Sim::prepare_ports`] combines the answers of every subsystem at
//! the start of the run (the list in `Sim::needs_of`, the only place that names them all) and
//! sets the per-port and per-flow flags the data path reads. A subsystem
//! that answers nothing takes no part in the shortcuts' decisions; one that watches a queue
//! must say so, or frames would bypass it at an idle port: tests/fast_path.rs drops each
//! subsystem's answers in turn and shows that the tables then change.

use crate::sim::prelude::*;

/// What a subsystem needs of the data path's shortcuts. Asked once, at the start of a run (no
/// call on the per-frame path); every answer defaults to "nothing".
pub(super) trait Needs {
    /// The subsystem's name (for `Sim::ignore_needs_of`, a test switch).
    fn name(&self) -> &'static str;
    /// It acts where frames enter or leave port `pi`'s queue (a congestion point, a sensor,
    /// marking at dequeue, class queues, a shared memory): no frame goes straight to the wire
    /// there.
    fn watches_queue(&self, _core: &Core, _pi: usize) -> bool {
        false
    }
    /// Starting a transmission at port `pi` may make events of its own (a sensor's timer, a
    /// mark that becomes a notification): its transmission-done does not use the slot.
    fn send_makes_events(&self, _core: &Core, _pi: usize) -> bool {
        false
    }
    /// Data frames of flow `fi` need more than counting when they arrive (`deliver` hands them
    /// over).
    fn receives(&self, _core: &Core, _fi: usize) -> bool {
        false
    }
    /// Delivering a data frame may make events (whatever its flow): no slot anywhere.
    fn deliveries_make_events(&self, _core: &Core) -> bool {
        false
    }
    /// Every port takes the slow path (`slow_start_next`), and none sends straight to the wire.
    fn slow_path(&self) -> bool {
        false
    }
    /// It may change when a data frame queued at port `pi` leaves, or acts when one leaves (a
    /// pause, a shared memory's release, a failing link, a sensor or a mark at dequeue): the
    /// frames' departures there are not computed when they are queued.
    fn moves_departures(&self, _core: &Core, _pi: usize) -> bool {
        false
    }
    /// It may send control frames (feedback, acknowledgements, pauses) to the source host of
    /// flow `fi`: they go before waiting data frames at the ports towards that host, whose
    /// departures are then not computed when the data frames are queued.
    fn sends_control(&self, _core: &Core, _fi: usize) -> bool {
        false
    }
    /// It decides when flow `fi`'s frames may leave its rate limiter (a window beside it), or
    /// its data frames carry more bytes on the wire than its source made (INT): the event loop
    /// asks at every departure from a rate limiter. Without such a flow in the run, the loop
    /// that never asks runs (`Sim::event_loop::<false>`).
    fn gates_departures(&self, _core: &Core, _fi: usize) -> bool {
        false
    }
    /// What it does at a data frame's arrival at port `pi` reads or changes more than the port,
    /// its congestion point and the frame, or sends more than the CP's feedback frame (a
    /// sensor, marks that make notifications, counters read elsewhere): arrivals there are not
    /// handled before their instant (`Sim::fold_arrival`).
    fn acts_beyond_arrival(&self, _core: &Core, _pi: usize) -> bool {
        false
    }
}

/// The smallest and largest data frame flow `f` sends (a finite flow's last frame is its
/// remainder, at least 64 B: `next_size`).
fn frame_sizes(f: &Flow) -> (u32, u32) {
    if f.size.is_some() {
        (f.frame.min(64), f.frame.max(64))
    } else {
        (f.frame, f.frame)
    }
}

/// The absent subsystem (link failures off).
struct Absent;

impl Needs for Absent {
    fn name(&self) -> &'static str {
        "absent"
    }
}

impl<'a> Sim<'a> {
    /// Every subsystem, as the fast path asks it. A new subsystem is added here.
    fn needs_of(&self) -> [&dyn Needs; 6] {
        let links: &dyn Needs = match &self.links {
            Some(l) => l,
            None => &Absent,
        };
        [&self.cm, &self.fc, &self.buf, &self.gbn, &self.mcast, links]
    }

    /// The subsystems the shortcuts listen to (all but the one a test switch drops).
    fn heard(&self) -> impl Iterator<Item = &dyn Needs> {
        let ignored = self.core.ignore_needs;
        self.needs_of()
            .into_iter()
            .filter(move |n| Some(n.name()) != ignored)
    }

    /// The shortcuts, from the subsystems' answers (what does not change during the run). A
    /// port may send a frame straight to the wire when idle and empty (`send_direct`) when no
    /// subsystem watches its queue, no subsystem asked for the slow path, and its capacity is its
    /// own. A port's transmission-done may use the slot beside the event queue when it is a
    /// switch port towards a host, no subsystem makes events when it sends, no delivery anywhere
    /// makes events, and no port takes the slow path. A port's departures are fixed at enqueue
    /// under the same conditions as the slot, when moreover no subsystem moves its departures or
    /// sends control frames to its host, and the order of equal-time events allows it
    /// ([`Sim::fixed_ports`]). A flow's arrivals are handed over when a subsystem receives them.
    pub(super) fn prepare_ports(&mut self) {
        let slow = self.heard().any(|n| n.slow_path());
        let core = &self.core;
        let rx: Vec<bool> = (0..core.flows.len())
            .map(|fi| self.heard().any(|n| n.receives(core, fi)))
            .collect();
        // the run allows ports that make no event at a transmission's start or end
        let quiet = !slow
            && !rx.iter().any(|&r| r)
            && !self.heard().any(|n| n.deliveries_make_events(core));
        let run_ok = core.slot_on && quiet;
        let fixed = if core.fixed_on && quiet {
            self.fixed_ports()
        } else {
            vec![false; core.ports.len()]
        };
        let ports: Vec<(bool, bool)> = (0..core.ports.len())
            .map(|pi| {
                let p = &core.ports[pi];
                let watched = self.heard().any(|n| n.watches_queue(core, pi));
                let events = self.heard().any(|n| n.send_makes_events(core, pi));
                // (a congestion point acts at enqueue: the slot, at a transmission-done, does
                // not bypass it)
                let slot_ok = run_ok && p.from_switch && !p.peer_is_switch && !events && !fixed[pi];
                // (a failing link changes its ports' capacity: such runs are slow)
                let direct_ok = core.direct_on
                    && !watched
                    && !slow
                    && !fixed[pi]
                    && match p.cap {
                        Capacity::Infinite | Capacity::Bytes(_) => true,
                        Capacity::Frames(n) => n > 0,
                        Capacity::Shared => false,
                    };
                (slot_ok, direct_ok)
            })
            .collect();
        // the event loop that asks at departures from rate limiters (`Flow::e2e`, `int_bytes`)
        let gated = !core.gate_skip_on
            || (0..core.flows.len()).any(|fi| self.heard().any(|n| n.gates_departures(core, fi)));
        let core = &mut self.core;
        core.gated_run = gated;
        core.slow = slow;
        for (f, r) in core.flows.iter_mut().zip(rx) {
            f.rx_special = r;
        }
        core.fixed_ports.clear();
        for (pi, (p, (slot_ok, direct_ok))) in core.ports.iter_mut().zip(ports).enumerate() {
            p.slot_ok = slot_ok;
            p.direct_ok = direct_ok;
            p.fixed = fixed[pi];
            if fixed[pi] {
                core.fixed_ports.push(pi as u32);
            }
        }
        let fold = if self.core.fold.on {
            self.fold_ports(&fixed)
        } else {
            vec![false; fixed.len()]
        };
        self.core.fold.set_ports(&fold);
    }

    /// The fixed ports whose arrivals may be handled when their frames start at the source NIC
    /// (`Sim::fold_arrival`): every data frame that comes to the port comes straight from a
    /// source NIC (a unicast flow on its fixed path of two ports, into the switch and out of
    /// it; no flow that is routed, sprayed or multicast may reach the port's host), the same
    /// time from its start there to its arrival (`lead`: one frame size, every NIC's rate,
    /// preamble and delay to the switch's queue alike; no NIC whose rate a schedule changes),
    /// so that arrivals handled at their starts come in the order of their events, ties
    /// included; and what the arrival does is the port's own (`Needs::acts_beyond_arrival`: its
    /// CP's feedback waits for the arrival's instant, as do its event records: `Core::record`;
    /// no link failures, which would change routes, leave a port fixed). The queue samples read
    /// the port: with a sampling interval longer than `lead`, an arrival folded before its instant passes at
    /// most the pending sample, which then reads the queue as it was (`Core::fold_snapshot`).
    fn fold_ports(&self, fixed: &[bool]) -> Vec<bool> {
        let core = &self.core;
        let n = core.ports.len();
        let none = vec![false; n];
        // (link failures and multicast flows leave no port fixed: the slow path, receivers)
        if core.hops.len() != core.flows.len() {
            return none;
        }
        let scheduled = |u: usize| core.sc.schedule.iter().any(|s| s.port == u);
        let mut lead = vec![NEVER; n];
        let mut ok: Vec<bool> = (0..n)
            .map(|pi| fixed[pi] && !self.heard().any(|s| s.acts_beyond_arrival(core, pi)))
            .collect();
        for (fi, f) in core.flows.iter().enumerate() {
            if f.route != ROUTE_PATH {
                // it may reach its host by any port into it
                for (pi, p) in core.ports.iter().enumerate() {
                    if p.from_switch && p.peer == f.dst {
                        ok[pi] = false;
                    }
                }
                continue;
            }
            let last = *f.path.last().expect("a path") as usize;
            let (lo, hi) = frame_sizes(f);
            if f.path.len() != 2 || core.hops[fi].n != 2 || lo != hi {
                ok[last] = false;
                continue;
            }
            let u = f.path[0] as usize;
            let p = &core.ports[u];
            if p.from_switch || !p.peer_is_switch || scheduled(u) {
                ok[last] = false;
                continue;
            }
            let l = p.to_peer_queue + units::tx_time_f((hi + p.preamble) as u64, p.rate);
            if lead[last] == NEVER {
                lead[last] = l;
            } else if lead[last] != l {
                ok[last] = false;
            }
        }
        // a folded arrival after the pending sample affects that sample alone (it was pushed
        // at most one interval before the arrival's event would have been)
        let sampling = !core.rec.queue_ports.is_empty() || !core.rec.mem_switches.is_empty();
        for (pi, o) in ok.iter_mut().enumerate() {
            if sampling && lead[pi] != NEVER && core.sc.metrics.queue_interval <= lead[pi] {
                *o = false;
            }
        }
        ok
    }

    /// The ports whose departures may be fixed at enqueue (`enqueue_fixed`), in a run where no
    /// port takes the slow path and no delivery makes events or is handed over. A switch port
    /// towards a host, FIFO (no PFC classes, no shared memory), whose rate no schedule changes,
    /// where no subsystem moves departures or acts at them, and whose host no control frame
    /// reaches (a control frame would go before the waiting data frames); not in drain mode
    /// (whose end moves with the deliveries). Then nothing but arrivals and the samplers reads
    /// the port during the run, and the order of equal-time events must be the one the
    /// transmission-done events would have had:
    /// - an arrival at the instant a queued frame starts came first: its event was scheduled
    ///   when the frame started its transmission at the previous node, at least `lead` before
    ///   (the shortest delay from that start to the arrival over the frames that come to the
    ///   port: by the port before the last on their path, by any port into the switch for
    ///   sprayed flows; their smallest frame, the highest rate a schedule gives), and the
    ///   transmission-done of the queued frame when the frame before it started (or, when it
    ///   found the port busy and empty, when it arrived), at most `w` before (the longest
    ///   frame's time on the port's wire, gap included). So `lead > w` is required;
    /// - a queue sample at that instant came first when the sampling interval exceeds `w`
    ///   (it was scheduled one interval before), required of sampled ports.
    ///
    /// A frame that starts at its own arrival (an idle port) leaves within that event, as it
    /// did. tests/fixed_departures.rs checks the tables against runs without fixed departures.
    fn fixed_ports(&self) -> Vec<bool> {
        let core = &self.core;
        let sc = core.sc;
        let n = core.ports.len();
        if sc.drain_until.is_some() || core.flows.is_empty() {
            return vec![false; n];
        }
        // hosts that control frames reach
        let mut control_to = vec![false; sc.nodes.len()];
        for fi in 0..core.flows.len() {
            if self.heard().any(|s| s.sends_control(core, fi)) {
                control_to[core.flows[fi].src as usize] = true;
            }
        }
        // per port: the highest rate it may have (scheduled changes), and whether one changes
        let mut top_rate: Vec<f64> = core.ports.iter().map(|p| p.rate).collect();
        let mut scheduled = vec![false; n];
        for s in &sc.schedule {
            top_rate[s.port] = top_rate[s.port].max(s.rate_bps);
            scheduled[s.port] = true;
        }
        // the shortest time from the start of a frame of `bytes` at port `u` to its arrival at
        // the next switch (the scheduling of that arrival)
        let lead_from = |u: usize, bytes: u32| {
            let p = &core.ports[u];
            p.to_peer_queue + units::tx_time_f((bytes + p.preamble) as u64, top_rate[u])
        };
        // per switch: the shortest over every port into it and the smallest frame (for flows
        // whose frames may come in by any of them: spraying)
        let small_all = core.flows.iter().map(frame_sizes).map(|s| s.0).min();
        let mut lead_any = vec![NEVER; sc.nodes.len()];
        for (u, p) in core.ports.iter().enumerate() {
            if p.peer_is_switch {
                let l = &mut lead_any[p.peer as usize];
                *l = (*l).min(lead_from(u, small_all.unwrap_or(0)));
            }
        }
        // per port towards a host: the shortest lead of the frames that come to it (by the
        // port before the last on their path), and the largest of them
        let (mut lead, mut large) = (vec![NEVER; n], vec![0u32; n]);
        let mut into = vec![Vec::new(); sc.nodes.len()];
        for (pi, p) in core.ports.iter().enumerate() {
            if p.from_switch && !p.peer_is_switch {
                into[p.peer as usize].push(pi);
            }
        }
        for f in &core.flows {
            let (lo, hi) = frame_sizes(f);
            let last = *f.path.last().expect("a path") as usize;
            let reach: &[usize] = if f.route == ROUTE_PATH {
                std::slice::from_ref(&last)
            } else {
                &into[f.dst as usize]
            };
            for &pi in reach {
                let d = if f.route == ROUTE_PATH && f.path.len() >= 2 {
                    lead_from(f.path[f.path.len() - 2] as usize, lo)
                } else {
                    lead_any[core.ports[pi].node as usize]
                };
                lead[pi] = lead[pi].min(d);
                large[pi] = large[pi].max(hi);
            }
        }
        let mut sampled = vec![false; n];
        for &p in &core.rec.queue_ports {
            sampled[p as usize] = true;
        }
        for (_, ps) in &core.rec.mem_switches {
            for &p in ps {
                sampled[p as usize] = true;
            }
        }
        (0..n)
            .map(|pi| {
                let p = &core.ports[pi];
                if !p.from_switch
                    || p.peer_is_switch
                    || !p.pq.is_empty()
                    || p.cap == Capacity::Shared
                    || scheduled[pi]
                    || control_to[p.peer as usize]
                    || self
                        .heard()
                        .any(|s| s.moves_departures(core, pi) || s.send_makes_events(core, pi))
                {
                    return false;
                }
                let w = units::tx_time_f((large[pi] + p.preamble + p.ifg) as u64, p.rate);
                lead[pi] > w && (!sampled[pi] || sc.metrics.queue_interval > w)
            })
            .collect()
    }

    /// Ports where a frame may go straight to the wire although a subsystem watches the port's
    /// queue, whose departures are fixed although a subsystem moves them or sends control
    /// frames to the port's host, or whose arrivals are folded although a subsystem acts
    /// beyond them, and flows whose departures a subsystem gates in a run whose
    /// event loop does not ask, asked of every subsystem now (none unless a test switch dropped
    /// an answer).
    pub fn fast_path_bypasses(&self) -> usize {
        let core = &self.core;
        let mut control_to = vec![false; core.sc.nodes.len()];
        for fi in 0..core.flows.len() {
            if self.needs_of().iter().any(|s| s.sends_control(core, fi)) {
                control_to[core.flows[fi].src as usize] = true;
            }
        }
        // flows whose departures a subsystem gates, in a run whose loop does not ask
        let ungated = if core.gated_run {
            0
        } else {
            (0..core.flows.len())
                .filter(|&fi| self.needs_of().iter().any(|n| n.gates_departures(core, fi)))
                .count()
        };
        ungated
            + (0..core.ports.len())
                .filter(|&pi| {
                    let p = &core.ports[pi];
                    let needs = self.needs_of();
                    (p.direct_ok && needs.iter().any(|n| n.watches_queue(core, pi)))
                        || (p.fixed
                            && (control_to[p.peer as usize]
                                || needs.iter().any(|n| n.moves_departures(core, pi))))
                        || (core.fold.folds_at(pi)
                            && needs.iter().any(|n| n.acts_beyond_arrival(core, pi)))
                })
                .count()
    }

    /// Switch arrivals folded into their frames' start at the source NIC
    /// (`Sim::fold_arrival`), so far.
    pub fn folded_arrivals(&self) -> u64 {
        self.core.fold.count
    }

    /// Fold no switch arrival into its frame's start at the source NIC (slower; the default
    /// must give identical results, which a test checks).
    pub fn set_fold_arrivals(&mut self, on: bool) {
        self.core.fold.on = on;
    }

    /// Data frames whose departure was fixed at enqueue (`enqueue_fixed`), so far.
    pub fn fixed_departures(&self) -> u64 {
        let core = &self.core;
        core.fixed_ports
            .iter()
            .map(|&p| core.ports[p as usize].tx_frames)
            .sum()
    }

    /// Test switch: the shortcuts ignore the answers of subsystem `name` ("cm", "fc",
    /// "buffer", "gbn", "multicast", "links"), as a subsystem that forgot to state its needs
    /// would be ignored. Tables then differ from a run with every shortcut off
    /// (tests/fast_path.rs).
    pub fn ignore_needs_of(&mut self, name: &'static str) {
        self.core.ignore_needs = Some(name);
    }

    /// Send no frame straight to the wire (slower; the default must give identical results,
    /// which a test checks).
    pub fn set_direct_send(&mut self, on: bool) {
        self.core.direct_on = on;
    }

    /// Prefetch the next events' state in the event loop (`Some(true)`), or not
    /// (`Some(false)`), whatever the fabric's size (`None`, the default: from
    /// `PREFETCH_PORTS` ports). Tables are the same either way, which a test checks.
    pub fn set_prefetch(&mut self, on: Option<bool>) {
        self.core.prefetch = on;
    }

    /// Keep each QCN CP's byte countdown in its port (`true`, the default where it applies:
    /// `Cm::place_countdowns`) or only in the CP's own state (`false`). Tables are the same
    /// either way, which a test checks. Call it before the run.
    pub fn set_cp_countdowns_in_ports(&mut self, on: bool) {
        if on {
            self.cm.place_countdowns(&mut self.core);
        } else {
            self.cm.take_countdowns(&mut self.core);
        }
    }

    /// Run the event loop that asks at every departure from a rate limiter whether a window
    /// lets the frame leave, even when no flow has one (slower; the default must give identical
    /// results, which a test checks).
    pub fn set_gate_skip(&mut self, on: bool) {
        self.core.gate_skip_on = on;
    }

    /// Whether the run took the event loop that asks windows at departures from rate limiters
    /// (set when the run starts).
    pub fn departures_gated(&self) -> bool {
        self.core.gated_run
    }

    /// Fix no departure at enqueue: every frame waits in its queue and leaves by a
    /// transmission-done (slower; the default must give identical results, which a test
    /// checks).
    pub fn set_fixed_departures(&mut self, on: bool) {
        self.core.fixed_on = on;
    }
}
