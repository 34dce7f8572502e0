//! PFC deadlock detection and the pause-storm watchdog in the simulator (rules in
//! [`crate::proto::deadlock`]; docs/models/pause.md, "Deadlock and the watchdog"). Both are off
//! by default and then cost nothing: no check event is scheduled, and the only per-frame work is
//! one store of the last data transmission time on the flow-control path.

use crate::proto::deadlock;
use crate::sim::prelude::*;
use crate::sim::switch::flow_control::{Fc, PauseRec, EV_DEADLOCK, EV_WATCHDOG};

#[derive(Default)]
pub(in crate::sim) struct Guard {
    pub(in crate::sim) detect: Option<SimTime>,
    pub(in crate::sim) watchdog: Option<SimTime>,
    restore: SimTime,
    pub(in crate::sim) period: SimTime,
    /// Per port: start of its last data frame (flow-control path).
    pub(in crate::sim) last_data: Vec<SimTime>,
    /// Per slot: PAUSE/PFC frames are ignored until then (watchdog).
    pub(in crate::sim) ignore_until: Vec<SimTime>,
    /// Per port: the switch egress ports of the switch it transmits into (wait-for edges), for
    /// switch-to-switch ports only.
    succ: Vec<Vec<u32>>,
    /// Per port: switch-to-switch.
    inter: Vec<bool>,
    in_deadlock: bool,
    /// (detection time, stalled since, ports of the cycle)
    pub(in crate::sim) deadlocks: Vec<(SimTime, SimTime, Vec<u32>)>,
    pub(in crate::sim) watchdog_fired: u64,
}

impl Guard {
    pub(in crate::sim) fn build(sc: &Scenario) -> Guard {
        let fc = &sc.fc;
        let np = sc.n_ports();
        let mut g = Guard {
            detect: fc.deadlock_detect,
            watchdog: fc.watchdog,
            restore: fc.watchdog_restore,
            last_data: vec![0; np],
            ignore_until: vec![0; np * fc.classes()],
            ..Guard::default()
        };
        let smaller = match (g.detect, g.watchdog) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return g,
        };
        g.period = (smaller / 10).max(1);
        let is_sw = |n: usize| sc.nodes[n].kind == NodeKind::Switch;
        g.inter = (0..np)
            .map(|p| {
                let (a, b) = sc.port_ends(p);
                is_sw(a) && is_sw(b)
            })
            .collect();
        g.succ = (0..np)
            .map(|p| {
                if !g.inter[p] {
                    return Vec::new();
                }
                let peer = sc.port_ends(p).1;
                (0..np)
                    .filter(|&q| g.inter[q] && sc.port_ends(q).0 == peer)
                    .map(|q| q as u32)
                    .collect()
            })
            .collect();
        g
    }

    pub(in crate::sim) fn is_on(&self) -> bool {
        self.period > 0
    }

    /// Summary rows: deadlocks found (and when), watchdog firings.
    pub(in crate::sim) fn rows(&self, sc: &Scenario) -> Vec<(String, f64, String, String)> {
        let mut rows = Vec::new();
        if let Some(d) = self.detect {
            rows.push((
                "deadlocks".into(),
                self.deadlocks.len() as f64,
                "".into(),
                format!(
                    "cycles of switch ports paused with frames waiting and no data sent for {}",
                    units::fmt_time(d)
                ),
            ));
            for (t, since, ports) in self.deadlocks.iter().take(16) {
                let names: Vec<String> = ports.iter().map(|&p| sc.port_name(p as usize)).collect();
                rows.push((
                    "deadlock_detected".into(),
                    units::secs(*t),
                    "s".into(),
                    format!(
                        "cycle {} stalled since {} s",
                        names.join(", "),
                        units::secs(*since)
                    ),
                ));
            }
        }
        if self.watchdog.is_some() {
            rows.push((
                "watchdog_triggers".into(),
                self.watchdog_fired as f64,
                "".into(),
                "paused classes the PFC watchdog resumed".into(),
            ));
        }
        rows
    }
}

impl Fc {
    /// Whether egress port `p` has frames waiting in class `c`.
    fn class_waiting(core: &Core, p: usize, c: usize) -> bool {
        let port = &core.ports[p];
        if port.pq.is_empty() {
            !port.q.is_empty()
        } else {
            !port.pq[c].is_empty()
        }
    }

    /// The periodic check, first part: deadlock cycles (recorded once per deadlock).
    pub(in crate::sim) fn check_deadlock(&mut self, core: &Core) {
        let now = core.now;
        let nc = self.nc;
        let Some(d) = self.guard.detect else {
            return;
        };
        let np = core.ports.len();
        let mut stalled = vec![false; np];
        for (p, st) in stalled.iter_mut().enumerate() {
            if !self.guard.inter[p] {
                continue;
            }
            let mask = self.ports[p].paused_mask;
            let waiting = (0..nc).any(|c| mask >> c & 1 == 1 && Self::class_waiting(core, p, c));
            let since = self.guard.last_data[p].max(self.ports[p].any_since);
            *st = deadlock::stalled(waiting, since, now, d);
        }
        match deadlock::find_cycle(&stalled, &self.guard.succ) {
            Some(cyc) => {
                if !self.guard.in_deadlock {
                    self.guard.in_deadlock = true;
                    let since = cyc
                        .iter()
                        .map(|&p| self.guard.last_data[p].max(self.ports[p].any_since))
                        .max()
                        .unwrap_or(now);
                    self.record(PauseRec {
                        t: now,
                        port: cyc[0] as u32,
                        class: 0,
                        kind: EV_DEADLOCK,
                        quanta: cyc.len() as u32,
                        duration: (now - since) as i64,
                    });
                    self.guard.deadlocks.push((
                        now,
                        since,
                        cyc.iter().map(|&p| p as u32).collect(),
                    ));
                }
            }
            None => self.guard.in_deadlock = false,
        }
    }

    /// The periodic check, second part, for one slot: the pause-storm watchdog resumes a class
    /// paused too long with frames waiting; the resumed port to kick.
    pub(in crate::sim) fn check_watchdog(&mut self, core: &mut Core, slot: usize) -> Option<usize> {
        let now = core.now;
        let w = self.guard.watchdog?;
        let (p, c) = (slot / self.nc, slot % self.nc);
        if !core.ports[p].from_switch {
            return None;
        }
        let rx = self.slots[slot].rx;
        if !deadlock::watchdog_fires(
            Self::class_waiting(core, p, c),
            rx.is_paused(),
            rx.since(),
            now,
            w,
        ) {
            return None;
        }
        let s = &mut self.slots[slot];
        let change = s.rx.force_resume(now);
        s.expiry.cancel();
        self.guard.ignore_until[slot] = now + self.guard.restore;
        self.guard.watchdog_fired += 1;
        self.record(PauseRec {
            t: now,
            port: p as u32,
            class: c as u8,
            kind: EV_WATCHDOG,
            quanta: 0,
            duration: self.guard.restore as i64,
        });
        self.apply(core, slot, change, 0, 0)
    }

    /// The next periodic check, within the run.
    pub(in crate::sim) fn next_check(&self, core: &mut Core) {
        let next = core.now + self.guard.period;
        if next <= core.end {
            core.q.push(next, Ev::FcCheck);
        }
    }
}
