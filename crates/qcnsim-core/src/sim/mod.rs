//! The simulator: network elements, traffic sources and congestion management wired to the
//! event engine. One single-threaded loop over [`Ev`]; frames live in an arena and move by
//! index; nothing is allocated per frame once queues have reached their working size.
//!
//! Timing model (see docs/models/network.md):
//! - an egress port serialises a frame at its current service rate; the frame leaves the queue
//!   when its transmission starts; control frames (CNMs) wait in a separate strict-priority
//!   queue that the CP never sees;
//! - a frame arrives at the next node `prop + extra_delay` after its last bit left, and enters a
//!   switch's egress queue `latency` later (store and forward);
//! - delivery of a data frame to its destination host is resolved when its transmission starts
//!   (the arrival instant is known exactly then), which saves one event per frame; frames whose
//!   arrival falls after the end of the run count as in flight.
//!
//! Code layout (docs/code-layout.md): `core/` the data path's state and steps, `cc/` congestion
//! management, `switch/` flow control, shared buffers and multicast replication, `host/` the
//! transport, `topology/` link failures, `record/` the recorder and the output tables;
//! `build.rs` builds a run, `wiring.rs` routes what the subsystems return, `fastpath.rs`
//! combines their needs of the data path's shortcuts.

use crate::sim::prelude::*;
use std::time::Instant;

mod build;
mod cc;
mod core;
mod error;
mod fastpath;
mod host;
#[cfg(test)]
mod int_tests;
mod prelude;
mod record;
mod switch;
mod topology;
mod wiring;
pub use cc::transient::path_rtt;
pub use error::RunError;

/// Ports from which a run's event loop prefetches the next events' state: a fat-tree of 1,024
/// hosts has 6,144; the reference benchmarks and the 1,000-source dumbbell fewer than 2,100.
const PREFETCH_PORTS: usize = 4096;

pub struct Sim<'a> {
    core: Core<'a>,
    /// Congestion management: QCN, BCN, DCQCN, NIC-side feedback, transient variants (sim/cc/mod.rs).
    cm: cc::Cm,
    mcast: multicast::Multicast,
    fc: flow_control::Fc,
    /// Shared-buffer switch memories (sim/switch/buffer.rs).
    buf: buffer::Buffers,
    /// Go-back-N senders and receivers (sim/host/transport.rs); empty without gbn flows.
    gbn: transport::GbnState,
    /// Link failures: which links are down and the routes of the moment (sim/topology/links.rs).
    links: Option<links::LinkState>,
}

impl<'a> Sim<'a> {
    /// Run to the end. `progress` gets the fraction done; `false` cancels.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64) -> bool) -> Result<(), RunError> {
        let wall = Instant::now();
        let mut last_report = 0.0f64;
        self.prepare_ports();
        self.core.advise_large_pages();
        // a fabric whose state outgrows the caches prefetches the next events' (engine/prefetch.rs)
        let prefetch = self
            .core
            .prefetch
            .unwrap_or(self.core.ports.len() >= PREFETCH_PORTS);
        loop {
            // the loop that asks windows at departures from rate limiters only when a flow has
            // one (sim/fastpath.rs)
            if self.core.gated_run {
                self.event_loop::<true>(prefetch, progress, wall, &mut last_report)?;
            } else {
                self.event_loop::<false>(prefetch, progress, wall, &mut last_report)?;
            }
            // the queue is empty or beyond the end: the slot's last transmissions within it (a
            // loop only for the guard: they never make events)
            if !self.fire_slot(self.core.end, u64::MAX) {
                break;
            }
        }
        self.core.now = self.core.end;
        for fi in 0..self.core.flows.len() {
            self.catch_up(fi, self.core.end);
        }
        // the fixed ports' frames that started within the run have left
        for i in 0..self.core.fixed_ports.len() {
            let p = self.core.fixed_ports[i] as usize;
            self.core.settle(p, self.core.end.saturating_add(1));
        }
        for p in self.core.ports.iter_mut() {
            p.track_q(self.core.end);
        }
        progress(1.0);
        Ok(())
    }

    /// The event loop: every event up to the end, in `(time, seq)` order, with the
    /// transmission-done slot's events in theirs. A function of its own, called once (again only
    /// if the slot's guard fired at the end): inside a loop in `run` the compiler kept fewer
    /// values in registers (1.6 % more instructions on benchmark 1). `GATED`: some flow's
    /// departures from its rate limiter are gated by a window (or its frames carry INT bytes):
    /// `Core::gated_run`; the loop without it tests neither per frame.
    ///
    /// With `prefetch` (a large fabric) each event first prefetches what the next events will
    /// touch (`prefetch_next`, out of line, behind a flag: a small run pays one test of a
    /// register per event; a copy of the loop with it inlined stopped the compiler inlining the
    /// pop and the sources, 8 % more instructions on the greedy dumbbell).
    #[inline(never)]
    fn event_loop<const GATED: bool>(
        &mut self,
        prefetch: bool,
        progress: &mut dyn FnMut(f64) -> bool,
        wall: Instant,
        last_report: &mut f64,
    ) -> Result<(), RunError> {
        while let Some((t, ev)) = self.core.q.take_min() {
            if prefetch {
                self.prefetch_next();
            }
            // the slot's transmission-done, when it comes first
            if self.core.slot_t <= t && self.fire_slot_inline(t, self.core.q.last_seq()) {
                // it made events: this one may no longer be the earliest
                self.core.q.push_keyed(t, self.core.q.last_seq(), ev);
                continue;
            }
            if t > self.core.end {
                break;
            }
            self.core.now = t;
            self.core.events += 1;
            self.dispatch::<GATED>(ev);
            if self.core.events & 0xFFFF == 0 {
                self.every_65536(progress, wall, last_report)?;
            }
        }
        Ok(())
    }

    /// Every 65,536 events: fit the calendar's bucket width to the event density
    /// (engine/queue.rs), check the memory budget, report progress. Out of line: with the
    /// memory check's error built inside the event loop, the loop ran about 1 % more
    /// instructions (docs/performance.md, 2026-11-27).
    #[cold]
    #[inline(never)]
    fn every_65536(
        &mut self,
        progress: &mut dyn FnMut(f64) -> bool,
        wall: Instant,
        last_report: &mut f64,
    ) -> Result<(), RunError> {
        self.core.q.adapt(self.core.now);
        // what bounds queues with an infinite buffer: the memory budget
        let held = (self.core.pkts.len() + self.core.q.len()) as u64 + self.fixed_held();
        if held > self.core.sc.metrics.frames_cap {
            return Err(self.memory_exceeded(held).into());
        }
        let el = wall.elapsed().as_secs_f64();
        if el - *last_report >= 0.2 {
            *last_report = el;
            if !progress(self.core.now as f64 / self.core.end as f64) {
                return Err(RunError::Cancelled);
            }
        }
        Ok(())
    }

    /// Frames waiting at fixed ports (`Port::fq`: they left the arena when their departure was
    /// fixed).
    fn fixed_held(&self) -> u64 {
        let core = &self.core;
        core.fixed_ports
            .iter()
            .map(|&p| core.ports[p as usize].fq.len() as u64)
            .sum()
    }

    /// The error of a run that holds more frames and events than its memory budget allows.
    #[cold]
    fn memory_exceeded(&self, held: u64) -> crate::scenario::ScenarioError {
        use crate::scenario::budget::{fmt_bytes, FRAME_IN_FLIGHT};
        let m = &self.core.sc.metrics;
        crate::scenario::ScenarioError::new(
            "metrics.memory_budget",
            format!("\"{}\"", fmt_bytes(m.memory_limit as u128)),
            format!(
                "a budget that holds what this run holds: at t = {} it held {held} frames and \
                 pending events (about {} at {FRAME_IN_FLIGHT} B each, beside its recording), \
                 more than the {} the budget leaves; its queues with an infinite buffer grow \
                 without bound: give them a finite buffer (defaults.buffer, switches.*.buffer, \
                 links.*.buffer), lower the flows' rates or shorten the run, or raise \
                 metrics.memory_budget (at most the memory this machine has available)",
                crate::units::fmt_time(self.core.now),
                fmt_bytes(held as u128 * FRAME_IN_FLIGHT as u128),
                m.frames_cap
            ),
        )
    }

    // Always inlined into the event loop: as a call it costs about 6 % more instructions per
    // event (docs/performance.md, "Shared-buffer switches").
    #[inline(always)]
    fn dispatch<const GATED: bool>(&mut self, ev: Ev) {
        match ev {
            Ev::Gen { flow } => self.on_gen::<GATED>(flow as usize),
            Ev::RlRelease { flow, gen } => self.on_rl_timer::<GATED>(flow, gen),
            Ev::SwitchArrive { pkt, .. } => self.on_switch_arrive(pkt),
            Ev::TxDone { port } => {
                self.core.ports[port as usize].txdone_pending = false;
                self.start_next(port as usize);
            }
            Ev::HostControl { pkt } => self.on_host_control(pkt),
            Ev::RpTimer { flow, gen } => self.core.on_rp_timer(flow, gen),
            Ev::PortRate { entry } => self.core.on_port_rate(entry as usize),
            Ev::McStats { edge } => {
                let counts = self.cm.mc_counters(&self.core);
                self.mcast.snapshot(&self.core, edge as usize, counts)
            }
            Ev::PauseRx { slot, quanta } => self.on_pause_rx(slot as usize, quanta),
            Ev::PauseExpire { slot, gen } => self.on_pause_expire(slot as usize, gen),
            Ev::PauseRefresh { slot, gen } => self.on_pause_refresh(slot as usize, gen),
            Ev::FcCheck => self.on_fc_check(),
            Ev::SampleQueues => {
                self.core.sample_queues();
                if self.mcast.traces_fb() {
                    let cm = &self.cm;
                    let core = &self.core;
                    self.mcast.sample_fb(core, |pi| cm.qcn_fb_now(core, pi));
                }
            }
            Ev::SampleRates => self.sample_rates(),
            Ev::BaTimer { ba, gen } => self.cm.on_ba_timer(&mut self.core, ba, gen),
            Ev::PingTimer { flow, gen } => self.cm.on_ping_timer(&mut self.core, flow, gen),
            Ev::Cnp { flow } => self.send_cnp(flow),
            Ev::GbnReply { flow, code } => self.gbn_send_reply(flow, code),
            Ev::GbnRto { flow, gen } => self.on_gbn_rto(flow, gen),
            Ev::LinkChange { link, up } => self.on_link_change(link, up != 0),
            Ev::Arrive { pkt } => self.on_arrive(pkt),
            Ev::AckOut { pkt } => self.ack_out(pkt),
            Ev::AckTimer { flow, gen } => self.cm.e2e_ack_timer(&mut self.core, flow, gen),
            Ev::CtrlOut { port, pkt } => self.enqueue_ctrl(port as usize, pkt),
            Ev::FoldRec { slot } => self.core.fold_rec_out(slot),
        }
    }
}
