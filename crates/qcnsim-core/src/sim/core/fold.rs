//! The state of switch arrivals folded into their frame's start at the source NIC
//! (`Sim::fold_arrival` in datapath.rs; which ports fold: `fold_ports` in sim/fastpath.rs).

use crate::sim::prelude::*;

use super::NEVER;

/// What folding keeps on [`Core`] (`Core::fold`).
pub(in crate::sim) struct Fold {
    /// Per port: `NEVER` where arrivals are not folded, else the instant from which they may be
    /// (one past the last arrival there left as an event). Empty until the run starts.
    pub(in crate::sim) from: Vec<SimTime>,
    /// Some port folds (decided once per run).
    pub(in crate::sim) run: bool,
    /// The test switch (`Sim::set_fold_arrivals`).
    pub(in crate::sim) on: bool,
    /// Inside a folded arrival: its feedback and event records wait for the arrival's instant
    /// (`Ev::CtrlOut`, `Ev::FoldRec`).
    pub(in crate::sim) active: bool,
    /// Arrivals folded so far.
    pub(in crate::sim) count: u64,
    /// Per port (with folding ports): the queue, bytes and frames, that the pending sample at
    /// the time given reads, taken before a folded arrival at or after it was handled
    /// (`Core::fold_snapshot`).
    pub(in crate::sim) snap: Vec<(SimTime, u64, u64)>,
    /// Event records of folded arrivals waiting for their instant, and the free slots among
    /// them.
    recs: Vec<EvRec>,
    free: Vec<u32>,
}

impl Fold {
    pub(in crate::sim) fn new() -> Self {
        Fold {
            from: Vec::new(),
            run: false,
            on: true,
            active: false,
            count: 0,
            snap: Vec::new(),
            recs: Vec::new(),
            free: Vec::new(),
        }
    }

    /// Which ports fold (`fold[port]`), at the start of the run.
    pub(in crate::sim) fn set_ports(&mut self, fold: &[bool]) {
        self.run = fold.iter().any(|&f| f);
        self.snap = if self.run {
            vec![(NEVER, 0, 0); fold.len()]
        } else {
            Vec::new()
        };
        self.from = fold.iter().map(|&f| if f { 0 } else { NEVER }).collect();
    }

    /// Whether port `pi` folds arrivals at some time of the run.
    pub(in crate::sim) fn folds_at(&self, pi: usize) -> bool {
        self.from.get(pi).is_some_and(|&f| f != NEVER)
    }

    /// Keep record `r` until its instant; the slot that `Ev::FoldRec` names.
    #[inline]
    pub(in crate::sim) fn keep(&mut self, r: EvRec) -> u32 {
        match self.free.pop() {
            Some(s) => {
                self.recs[s as usize] = r;
                s
            }
            None => {
                self.recs.push(r);
                (self.recs.len() - 1) as u32
            }
        }
    }

    /// The record kept in `slot`, which is free again.
    #[inline]
    pub(in crate::sim) fn take(&mut self, slot: u32) -> EvRec {
        self.free.push(slot);
        self.recs[slot as usize]
    }
}

/// What folding does on the data path's state: the pending sample's queue kept before a folded
/// arrival changes it, and event records held back until the arrival's instant.
impl Core<'_> {
    /// Port `pi`'s queue as the pending sample at `t` will read it, before a folded arrival at
    /// or after `t` is handled (`Sim::fold_arrival`): its frames that started before `t` have
    /// left (as the sample's own settling would have them), the rest is kept for the sample.
    #[cold]
    #[inline(never)]
    pub(in crate::sim) fn fold_snapshot(&mut self, pi: usize, t: SimTime) {
        self.settle(pi, t);
        let port = &self.ports[pi];
        self.fold.snap[pi] = (t, port.q_bytes, port.q_frames() as u64);
    }

    /// Record event `r`; inside a folded arrival (`Sim::fold_arrival`) at the arrival's instant,
    /// by an event that takes the rank the arrival's own would have had (`Ev::FoldRec`), so
    /// that the events table keeps its order.
    #[inline]
    pub(in crate::sim) fn record(&mut self, r: EvRec) {
        if !self.fold.active {
            return self.rec.event(r);
        }
        let slot = self.fold.keep(r);
        self.q.push(r.t, Ev::FoldRec { slot });
    }

    /// The record a folded arrival left for this instant (`Core::record`).
    #[inline(never)]
    pub(in crate::sim) fn fold_rec_out(&mut self, slot: u32) {
        let r = self.fold.take(slot);
        self.rec.event(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t: SimTime) -> EvRec {
        EvRec {
            t,
            kind: 0,
            node: 0,
            flow: 0,
            value: 0,
        }
    }

    #[test]
    fn kept_records_come_back_and_their_slots_are_reused() {
        let mut f = Fold::new();
        let (a, b) = (f.keep(rec(5)), f.keep(rec(7)));
        assert_ne!(a, b);
        assert_eq!(f.take(a).t, 5);
        let c = f.keep(rec(9));
        assert_eq!(c, a, "a freed slot is taken before the store grows");
        assert_eq!((f.take(b).t, f.take(c).t), (7, 9));
        assert_eq!(f.recs.len(), 2);
    }

    #[test]
    fn ports_that_fold_start_folding_at_zero() {
        let mut f = Fold::new();
        f.set_ports(&[false, true, false]);
        assert!(f.run && f.folds_at(1) && !f.folds_at(0) && !f.folds_at(7));
        assert_eq!((f.from[1], f.snap.len()), (0, 3));
        f.set_ports(&[false, false]);
        assert!(!f.run && f.snap.is_empty() && !f.folds_at(1));
    }
}
