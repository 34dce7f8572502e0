//! The data path's shortcuts and what each subsystem needs of them.
//!
//! Three shortcuts make the common path cheap (docs/performance.md): a frame sent straight to
//! the wire at an idle, empty port (`send_direct`: no enqueue, no dequeue), the
//! transmission-done slot beside the event queue (`txdone_at!`), and a delivery that only counts
//! (`deliver`). Each bypasses something a mechanism may act on. So every subsystem answers, in
//! its own file, the questions of [`Needs`]; [`Sim::prepare_ports`] combines the answers of
//! every subsystem at the start of the run (the list in `Sim::needs_of`, the only place that
//! names them all) and sets the per-port and per-flow flags the data path reads. A subsystem
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
    /// makes events, and no port takes the slow path. A flow's
    /// arrivals are handed over when a subsystem receives them.
    pub(super) fn prepare_ports(&mut self) {
        let slow = self.heard().any(|n| n.slow_path());
        let core = &self.core;
        let rx: Vec<bool> = (0..core.flows.len())
            .map(|fi| self.heard().any(|n| n.receives(core, fi)))
            .collect();
        let run_ok = core.slot_on
            && !slow
            && !rx.iter().any(|&r| r)
            && !self.heard().any(|n| n.deliveries_make_events(core));
        let ports: Vec<(bool, bool)> = (0..core.ports.len())
            .map(|pi| {
                let p = &core.ports[pi];
                let watched = self.heard().any(|n| n.watches_queue(core, pi));
                let events = self.heard().any(|n| n.send_makes_events(core, pi));
                // (a congestion point acts at enqueue: the slot, at a transmission-done, does
                // not bypass it)
                let slot_ok = run_ok && p.from_switch && !p.peer_is_switch && !events;
                // (a failing link changes its ports' capacity: such runs are slow)
                let direct_ok = core.direct_on
                    && !watched
                    && !slow
                    && match p.cap {
                        Capacity::Infinite | Capacity::Bytes(_) => true,
                        Capacity::Frames(n) => n > 0,
                        Capacity::Shared => false,
                    };
                (slot_ok, direct_ok)
            })
            .collect();
        let core = &mut self.core;
        core.slow = slow;
        for (f, r) in core.flows.iter_mut().zip(rx) {
            f.rx_special = r;
        }
        for (p, (slot_ok, direct_ok)) in core.ports.iter_mut().zip(ports) {
            p.slot_ok = slot_ok;
            p.direct_ok = direct_ok;
        }
    }

    /// Ports where a frame may go straight to the wire although a subsystem watches the port's
    /// queue, asked of every subsystem now (none unless a test switch dropped an answer).
    pub fn fast_path_bypasses(&self) -> usize {
        (0..self.core.ports.len())
            .filter(|&pi| {
                self.core.ports[pi].direct_ok
                    && self
                        .needs_of()
                        .iter()
                        .any(|n| n.watches_queue(&self.core, pi))
            })
            .count()
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
}
