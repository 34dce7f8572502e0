//! Shared-buffer switch memory (an MMU): the sans-IO admission state machine. See
//! docs/models/buffer.md.
//!
//! One switch has one packet memory of `size` cells. Every frame is charged twice, to the
//! (input port, priority group) it arrived on — *ingress* accounting — and to the (output port,
//! queue) it waits in — *egress* accounting; it occupies `ceil(bytes / cell)` cells of the pool.
//! The pool is split into three regions (the names follow the Broadcom-style MMU of the HPCC
//! simulator's `SwitchMmu` and SONiC's buffer profiles):
//!
//! ```text
//! size = Σ reserved(PG)  +  Σ headroom(PG)  +  shared
//! ```
//!
//! - **reserved** (guaranteed, "min") space per ingress PG: a PG holding less than it is always
//!   admitted;
//! - **headroom** per lossless PG: absorbs the frames still arriving after the switch asked the
//!   upstream to pause (IEEE 802.1Qbb);
//! - **shared**: everything else, used by all PGs above their reserved space, bounded per PG and
//!   per egress queue by a threshold:
//!   - static: a fixed number of cells of shared use;
//!   - dynamic (Choudhury & Hahne, "Dynamic queue length thresholds for shared-memory packet
//!     switches", IEEE/ACM ToN 1998): `T = alpha x (shared - shared in use)`, i.e. a multiple
//!     of the free shared space, which shrinks as the memory fills.
//!
//! Admission of a frame of `c` cells from PG `i` into egress queue `e` (F = free shared cells):
//!
//! ```text
//! egress:  unless i is lossless (and lossless_egress is off):
//!              used(e) + c <= reserved(e)  or  used(e) + c - reserved(e) <= T_e(F)
//!          else drop "egress"
//! ingress: not xoff(i) and used(i) + c <= reserved(i)                        -> reserved
//!          not xoff(i) and shared(i) after <= T_i(F) and the shared region fits -> shared
//!          lossless i (the shared check failed, or i is already XOFF):
//!              XOFF(i) if not yet;  hdrm(i) + c <= headroom(i)                 -> headroom
//!                                    else drop "headroom"
//!          lossy i: drop "pool" if the shared region is full, else "ingress"
//! release (the frame leaves its egress queue): its cells come off the PG's headroom first, then
//!          its shared use, then its reserved space (as SwitchMmu); used(e) -= c;
//!          XON(i) when xoff(i), hdrm(i) = 0 and shared(i) + xon_offset <= T_i(F)
//! ```
//!
//! With the XOFF threshold on the whole pool ([`XoffScope::Pool`]) the lossless PGs of one
//! priority are paused together when the memory that priority's frames use exceeds `xoff` and
//! resumed when it falls below `xon` (with one priority, 802.3x PAUSE: the whole memory): the
//! global watermark PAUSE of the BCN calibration study ("pause all inputs if memory exceeds
//! 140 KB, unpause below 130 KB") is this case with no reserved space, no headroom region and
//! each egress queue limited by its port's own buffer (`lossless_egress`).

/// A threshold on one PG's or queue's use of the shared region.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Threshold {
    /// No limit beyond the shared region itself.
    Unlimited,
    /// At most this many cells of shared use.
    Static(u64),
    /// At most `alpha` times the free shared cells (Choudhury–Hahne).
    Dynamic(f64),
}

impl Threshold {
    /// The limit, in cells, when `free` shared cells are unused.
    #[inline]
    pub fn limit(self, free: u64) -> u64 {
        match self {
            Threshold::Unlimited => u64::MAX,
            Threshold::Static(c) => c,
            // floor: a limit is whole cells
            Threshold::Dynamic(a) => (a * free as f64) as u64,
        }
    }
}

/// What the PFC XOFF/XON decision of a lossless PG looks at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum XoffScope {
    /// The PG's own shared use against its ingress threshold (frames beyond it go to headroom).
    Pg,
    /// The whole pool's use by each priority: XOFF for every lossless PG of priority `k` when
    /// the cells held by priority `k` exceed `xoff`, XON for them when they fall below `xon`
    /// (the global watermark). PG `i` has priority `i % classes`.
    Pool { xoff: u64, xon: u64, classes: u32 },
}

/// Why a frame was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropCause {
    /// The egress queue's threshold.
    Egress = 0,
    /// The ingress PG's threshold.
    Ingress = 1,
    /// The shared region (or the whole pool) is full.
    Pool = 2,
    /// A lossless PG's headroom is full.
    Headroom = 3,
}

pub const DROP_CAUSES: [&str; 4] = ["egress", "ingress", "pool", "headroom"];

/// A PFC action for the upstream of one PG (or, with [`XoffScope::Pool`], of all lossless PGs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PfcCmd {
    None,
    Xoff,
    Xon,
}

/// The region a frame was admitted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    Reserved,
    Shared,
    Headroom,
}

/// The outcome of an admission check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// `Ok(region)`: admitted and charged; `Err(cause)`: dropped, nothing charged.
    pub result: Result<Region, DropCause>,
    pub pfc: PfcCmd,
}

/// Configuration of one switch's memory; every size in cells.
#[derive(Debug, Clone, PartialEq)]
pub struct MmuConfig {
    pub cell_bytes: u32,
    pub size: u64,
    /// Per ingress PG (input port x priority): reserved cells, headroom cells (0 = lossy or no
    /// headroom), and whether the PG is lossless (PFC).
    pub pg_reserved: Vec<u64>,
    pub pg_headroom: Vec<u64>,
    pub pg_lossless: Vec<bool>,
    pub pg_threshold: Threshold,
    /// Per egress queue (output port x queue): reserved cells.
    pub q_reserved: Vec<u64>,
    pub q_threshold: Threshold,
    /// The egress check applies to lossless PGs too (a port's own buffer as the queue's limit);
    /// otherwise lossless frames skip it, their upstream being paused instead.
    pub lossless_egress: bool,
    /// XON when the PG's shared use is at least this far below its threshold.
    pub xon_offset: u64,
    pub xoff_scope: XoffScope,
}

impl MmuConfig {
    /// Cells a frame of `bytes` occupies.
    #[inline]
    pub fn cells(&self, bytes: u32) -> u64 {
        bytes.div_ceil(self.cell_bytes) as u64
    }

    /// Cells of the shared region: what reserved space and headroom leave of the pool
    /// (`None` if they do not fit).
    pub fn shared_size(&self) -> Option<u64> {
        let r: u64 = self.pg_reserved.iter().sum();
        let h: u64 = self.pg_headroom.iter().sum();
        self.size.checked_sub(r + h)
    }
}

/// Counters of one switch's memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MmuStats {
    /// Frames and bytes dropped, by [`DropCause`].
    pub drop_frames: [u64; 4],
    pub drop_bytes: [u64; 4],
    /// Largest number of cells in use, of the shared region in use, of headroom in use.
    pub max_used: u64,
    pub max_shared: u64,
    pub max_headroom: u64,
    pub xoff: u64,
    pub xon: u64,
}

/// The memory of one switch.
#[derive(Debug, Clone)]
pub struct Mmu {
    cfg: MmuConfig,
    shared_size: u64,
    /// Per PG: cells in its reserved space and the shared region; cells in its headroom.
    pg_used: Vec<u64>,
    pg_hdrm: Vec<u64>,
    pg_xoff: Vec<bool>,
    q_used: Vec<u64>,
    /// Cells of the shared region in use (Σ max(0, pg_used - pg_reserved)).
    shared_used: u64,
    hdrm_used: u64,
    used: u64,
    /// Pool scope: cells held per priority, and whether that priority is above the watermark.
    class_used: Vec<u64>,
    class_above: Vec<bool>,
    pub stats: MmuStats,
}

impl Mmu {
    /// `Err` if reserved space and headroom exceed the pool.
    pub fn new(cfg: MmuConfig) -> Result<Mmu, String> {
        assert_eq!(cfg.pg_reserved.len(), cfg.pg_headroom.len());
        assert_eq!(cfg.pg_reserved.len(), cfg.pg_lossless.len());
        assert!(cfg.cell_bytes > 0);
        let Some(shared_size) = cfg.shared_size() else {
            return Err(format!(
                "reserved space ({} cells) and headroom ({} cells) exceed the pool ({} cells)",
                cfg.pg_reserved.iter().sum::<u64>(),
                cfg.pg_headroom.iter().sum::<u64>(),
                cfg.size
            ));
        };
        let np = cfg.pg_reserved.len();
        let nq = cfg.q_reserved.len();
        let nc = match cfg.xoff_scope {
            XoffScope::Pool { classes, .. } => classes.max(1) as usize,
            XoffScope::Pg => 0,
        };
        Ok(Mmu {
            shared_size,
            pg_used: vec![0; np],
            pg_hdrm: vec![0; np],
            pg_xoff: vec![false; np],
            q_used: vec![0; nq],
            shared_used: 0,
            hdrm_used: 0,
            used: 0,
            class_used: vec![0; nc],
            class_above: vec![false; nc],
            stats: MmuStats::default(),
            cfg,
        })
    }

    pub fn config(&self) -> &MmuConfig {
        &self.cfg
    }

    pub fn shared_size(&self) -> u64 {
        self.shared_size
    }

    /// Cells in use in the whole pool.
    pub fn used(&self) -> u64 {
        self.used
    }

    pub fn shared_used(&self) -> u64 {
        self.shared_used
    }

    pub fn headroom_used(&self) -> u64 {
        self.hdrm_used
    }

    /// Free cells of the shared region.
    #[inline]
    pub fn free_shared(&self) -> u64 {
        self.shared_size - self.shared_used
    }

    /// Cells PG `i` holds (reserved + shared, headroom).
    pub fn pg_use(&self, i: usize) -> (u64, u64) {
        (self.pg_used[i], self.pg_hdrm[i])
    }

    pub fn pg_shared(&self, i: usize) -> u64 {
        self.pg_used[i].saturating_sub(self.cfg.pg_reserved[i])
    }

    pub fn queue_use(&self, e: usize) -> u64 {
        self.q_used[e]
    }

    pub fn is_xoff(&self, i: usize) -> bool {
        self.pg_xoff[i]
    }

    /// Pool scope: whether priority `k` is above the watermark (its PGs' upstreams paused).
    pub fn pool_above(&self, k: usize) -> bool {
        self.class_above.get(k).copied().unwrap_or(false)
    }

    /// Admit (and charge) or drop a frame of `bytes` from ingress PG `i` into egress queue `e`.
    pub fn admit(&mut self, i: usize, e: usize, bytes: u32) -> Verdict {
        let c = self.cfg.cells(bytes);
        let free = self.free_shared();
        let lossless = self.cfg.pg_lossless[i];
        let pool_scope = matches!(self.cfg.xoff_scope, XoffScope::Pool { .. });
        // egress: lossless traffic is never dropped at an egress threshold (its upstream is
        // paused instead)
        if !lossless || self.cfg.lossless_egress {
            let q = self.q_used[e] + c;
            let r = self.cfg.q_reserved[e];
            if q > r && q - r > self.cfg.q_threshold.limit(free) {
                return self.dropped(DropCause::Egress, bytes);
            }
        }
        // ingress
        let used = self.pg_used[i];
        let res = self.cfg.pg_reserved[i];
        // with the pool scope, XOFF does not divert frames to headroom (there is none to
        // speak of: the region is whatever the configuration gives)
        let diverted = self.pg_xoff[i] && !pool_scope;
        let mut region = None;
        let mut cause = DropCause::Ingress;
        if !diverted {
            if used + c <= res {
                region = Some(Region::Reserved);
            } else {
                let before = used.saturating_sub(res);
                let after = used + c - res;
                let delta = after - before;
                if delta > free {
                    cause = DropCause::Pool;
                } else if after > self.cfg.pg_threshold.limit(free) {
                    cause = DropCause::Ingress;
                } else {
                    region = Some(Region::Shared);
                }
            }
        }
        let mut pfc = PfcCmd::None;
        if region.is_none() && lossless {
            if !self.pg_xoff[i] && !pool_scope {
                self.pg_xoff[i] = true;
                self.stats.xoff += 1;
                pfc = PfcCmd::Xoff;
            }
            if self.pg_hdrm[i] + c <= self.cfg.pg_headroom[i] {
                region = Some(Region::Headroom);
            } else {
                cause = if self.cfg.pg_headroom[i] > 0 || !pool_scope {
                    DropCause::Headroom
                } else {
                    cause
                };
            }
        }
        let Some(region) = region else {
            let mut v = self.dropped(cause, bytes);
            v.pfc = pfc;
            return v;
        };
        match region {
            Region::Headroom => {
                self.pg_hdrm[i] += c;
                self.hdrm_used += c;
                self.stats.max_headroom = self.stats.max_headroom.max(self.hdrm_used);
            }
            _ => {
                let before = used.saturating_sub(res);
                self.pg_used[i] = used + c;
                let after = (used + c).saturating_sub(res);
                self.shared_used += after - before;
                self.stats.max_shared = self.stats.max_shared.max(self.shared_used);
            }
        }
        self.q_used[e] += c;
        self.used += c;
        self.stats.max_used = self.stats.max_used.max(self.used);
        if let XoffScope::Pool { xoff, classes, .. } = self.cfg.xoff_scope {
            let k = i % classes.max(1) as usize;
            self.class_used[k] += c;
            if lossless && !self.class_above[k] && self.class_used[k] > xoff {
                self.class_above[k] = true;
                self.stats.xoff += 1;
                pfc = PfcCmd::Xoff;
            }
        } else if pfc == PfcCmd::None
            && lossless
            && !self.pg_xoff[i]
            && region == Region::Shared
            && self.pg_shared(i) >= self.cfg.pg_threshold.limit(self.free_shared())
        {
            // at its threshold: the next frame could not enter the shared region
            self.pg_xoff[i] = true;
            self.stats.xoff += 1;
            pfc = PfcCmd::Xoff;
        }
        Verdict {
            result: Ok(region),
            pfc,
        }
    }

    fn dropped(&mut self, cause: DropCause, bytes: u32) -> Verdict {
        self.stats.drop_frames[cause as usize] += 1;
        self.stats.drop_bytes[cause as usize] += bytes as u64;
        Verdict {
            result: Err(cause),
            pfc: PfcCmd::None,
        }
    }

    /// A frame of `bytes` admitted from PG `i` into queue `e` leaves the memory. Returns XON
    /// when PG `i` (pool scope: every PG) may resume.
    pub fn release(&mut self, i: usize, e: usize, bytes: u32) -> PfcCmd {
        let c = self.cfg.cells(bytes);
        debug_assert!(self.pg_used[i] + self.pg_hdrm[i] >= c, "release of PG {i}");
        debug_assert!(self.q_used[e] >= c, "release of queue {e}");
        let from_h = self.pg_hdrm[i].min(c);
        self.pg_hdrm[i] -= from_h;
        self.hdrm_used -= from_h;
        let rest = c - from_h;
        let res = self.cfg.pg_reserved[i];
        let before = self.pg_used[i].saturating_sub(res);
        self.pg_used[i] -= rest;
        let after = self.pg_used[i].saturating_sub(res);
        self.shared_used -= before - after;
        self.q_used[e] -= c;
        self.used -= c;
        match self.cfg.xoff_scope {
            XoffScope::Pool { xon, classes, .. } => {
                let k = i % classes.max(1) as usize;
                self.class_used[k] -= c;
                if self.class_above[k] && self.class_used[k] < xon {
                    self.class_above[k] = false;
                    self.stats.xon += 1;
                    return PfcCmd::Xon;
                }
            }
            XoffScope::Pg => {
                if self.pg_xoff[i] && self.pg_hdrm[i] == 0 {
                    let s = self.pg_shared(i);
                    let limit = self.cfg.pg_threshold.limit(self.free_shared());
                    if s == 0 || s.saturating_add(self.cfg.xon_offset) <= limit {
                        self.pg_xoff[i] = false;
                        self.stats.xon += 1;
                        return PfcCmd::Xon;
                    }
                }
            }
        }
        PfcCmd::None
    }

    /// Check the accounting invariants (tests): the regions add up and stay within their sizes.
    pub fn check(&self) -> Result<(), String> {
        let res = &self.cfg.pg_reserved;
        let shared: u64 = (0..self.pg_used.len())
            .map(|i| self.pg_used[i].saturating_sub(res[i]))
            .sum();
        let hdrm: u64 = self.pg_hdrm.iter().sum();
        let pg_total: u64 = self.pg_used.iter().sum::<u64>() + hdrm;
        let q_total: u64 = self.q_used.iter().sum();
        if shared != self.shared_used {
            return Err(format!("shared {shared} != {}", self.shared_used));
        }
        if hdrm != self.hdrm_used {
            return Err(format!("headroom {hdrm} != {}", self.hdrm_used));
        }
        if pg_total != self.used || q_total != self.used {
            return Err(format!(
                "ingress {pg_total}, egress {q_total}, pool {}",
                self.used
            ));
        }
        if self.shared_used > self.shared_size {
            return Err(format!(
                "shared {} above its size {}",
                self.shared_used, self.shared_size
            ));
        }
        for i in 0..self.pg_hdrm.len() {
            if self.pg_hdrm[i] > self.cfg.pg_headroom[i] {
                return Err(format!(
                    "PG {i} headroom {} above its size",
                    self.pg_hdrm[i]
                ));
            }
        }
        if !self.class_used.is_empty() && self.class_used.iter().sum::<u64>() != self.used {
            return Err(format!(
                "per-priority use {:?} does not add up to the pool's {}",
                self.class_used, self.used
            ));
        }
        if self.used > self.cfg.size {
            return Err(format!(
                "pool {} above its size {}",
                self.used, self.cfg.size
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two ingress PGs (0 lossy, 1 lossless) and two egress queues, 1-byte cells.
    fn cfg() -> MmuConfig {
        MmuConfig {
            cell_bytes: 1,
            size: 10_000,
            pg_reserved: vec![1000, 1000],
            pg_headroom: vec![0, 2000],
            pg_lossless: vec![false, true],
            pg_threshold: Threshold::Static(3000),
            q_reserved: vec![500, 500],
            q_threshold: Threshold::Static(4000),
            lossless_egress: false,
            xon_offset: 1000,
            xoff_scope: XoffScope::Pg,
        }
    }

    use DropCause as D;
    use PfcCmd::{None as N, Xoff, Xon};
    use Region::*;

    #[derive(Clone, Copy, Debug)]
    enum Op {
        /// (pg, queue, bytes)
        Admit(usize, usize, u32),
        Release(usize, usize, u32),
    }

    /// Run a sequence of operations, each with its expected verdict (releases: only the PFC
    /// command is checked), and check the invariants after every step.
    #[allow(clippy::type_complexity)]
    fn run(name: &str, c: MmuConfig, ops: &[(Op, Result<Region, DropCause>, PfcCmd)]) -> Mmu {
        let mut m = Mmu::new(c).expect("fits");
        for (k, (op, want, pfc)) in ops.iter().enumerate() {
            match *op {
                Op::Admit(i, e, b) => {
                    let v = m.admit(i, e, b);
                    assert_eq!(
                        v,
                        Verdict {
                            result: *want,
                            pfc: *pfc
                        },
                        "{name}: step {k} {op:?}"
                    );
                }
                Op::Release(i, e, b) => {
                    assert_eq!(m.release(i, e, b), *pfc, "{name}: step {k} {op:?}");
                }
            }
            m.check()
                .unwrap_or_else(|e| panic!("{name}: step {k}: {e}"));
        }
        m
    }

    #[test]
    fn regions_add_up_and_a_pool_too_small_is_refused() {
        let m = Mmu::new(cfg()).unwrap();
        assert_eq!(m.shared_size(), 10_000 - 2000 - 2000);
        let mut c = cfg();
        c.size = 3999;
        assert!(Mmu::new(c).unwrap_err().contains("exceed the pool"));
    }

    #[test]
    fn cells_round_up() {
        // (cell, bytes, cells)
        #[rustfmt::skip]
        let cases: &[(u32, u32, u64)] = &[
            (1, 1500, 1500), (64, 64, 1), (64, 65, 2), (64, 1500, 24), (80, 1500, 19),
            (208, 1500, 8), (208, 64, 1), (208, 1, 1), (256, 1500, 6),
        ];
        for (cell, bytes, want) in cases {
            let c = MmuConfig {
                cell_bytes: *cell,
                ..cfg()
            };
            assert_eq!(c.cells(*bytes), *want, "{bytes} B in {cell} B cells");
        }
        // a 65-byte frame in 64-byte cells takes 128 bytes of memory
        let c = MmuConfig {
            cell_bytes: 64,
            size: 4,
            pg_reserved: vec![0, 0],
            pg_headroom: vec![0, 0],
            pg_threshold: Threshold::Unlimited,
            q_reserved: vec![0, 0],
            q_threshold: Threshold::Unlimited,
            ..cfg()
        };
        run(
            "cells",
            c,
            &[
                (Op::Admit(0, 0, 65), Ok(Shared), N),
                (Op::Admit(0, 0, 128), Ok(Shared), N),
                (Op::Admit(0, 0, 1), Err(D::Pool), N),
                (Op::Release(0, 0, 65), Ok(Shared), N),
                (Op::Admit(0, 1, 100), Ok(Shared), N),
            ],
        );
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn admission_rules() {
        // (name, config, steps)
        let lossy_only = MmuConfig {
            pg_lossless: vec![false, false],
            pg_headroom: vec![0, 0],
            ..cfg()
        };
        #[rustfmt::skip]
        let cases: Vec<(&str, MmuConfig, Vec<(Op, Result<Region, DropCause>, PfcCmd)>)> = vec![
            ("reserved first, then shared", cfg(), vec![
                (Op::Admit(0, 0, 1000), Ok(Reserved), N),
                (Op::Admit(0, 0, 1), Ok(Shared), N),
            ]),
            ("a frame that straddles reserved and shared is shared", cfg(), vec![
                (Op::Admit(0, 0, 600), Ok(Reserved), N),
                (Op::Admit(0, 0, 600), Ok(Shared), N),   // 200 cells of shared use
            ]),
            ("static ingress threshold: shared use up to 3000", lossy_only.clone(), vec![
                (Op::Admit(0, 0, 1000), Ok(Reserved), N),
                (Op::Admit(0, 0, 3000), Ok(Shared), N),  // shared 3000: at the threshold
                (Op::Admit(0, 1, 1), Err(D::Ingress), N),
                (Op::Admit(1, 1, 1000), Ok(Reserved), N), // another PG's reserve is still there
            ]),
            ("static egress threshold counts above the queue's reserve", MmuConfig {
                    pg_threshold: Threshold::Unlimited, q_threshold: Threshold::Static(1500), ..lossy_only.clone() }, vec![
                (Op::Admit(0, 0, 2000), Ok(Shared), N),  // queue 0: 2000 = 500 reserved + 1500
                (Op::Admit(1, 0, 1), Err(D::Egress), N),
                (Op::Admit(1, 1, 2000), Ok(Shared), N),
            ]),
            ("egress reserved space always passes the egress check", MmuConfig {
                    q_threshold: Threshold::Static(0), ..lossy_only.clone() }, vec![
                (Op::Admit(0, 0, 500), Ok(Reserved), N),
                (Op::Admit(0, 0, 1), Err(D::Egress), N),
                (Op::Admit(0, 1, 500), Ok(Reserved), N),
            ]),
            ("the shared region full: pool drop", MmuConfig {
                    pg_threshold: Threshold::Unlimited, q_threshold: Threshold::Unlimited, ..lossy_only.clone() }, vec![
                (Op::Admit(0, 0, 1000), Ok(Reserved), N),
                (Op::Admit(0, 0, 8000), Ok(Shared), N),  // shared region 10000 - 2000 = 8000
                (Op::Admit(0, 0, 1), Err(D::Pool), N),
                (Op::Admit(1, 1, 1000), Ok(Reserved), N), // reserved space is guaranteed
                (Op::Admit(1, 1, 1), Err(D::Pool), N),
            ]),
            ("lossless: beyond the threshold to headroom with XOFF, XON after draining", cfg(), vec![
                (Op::Admit(1, 0, 1000), Ok(Reserved), N),
                (Op::Admit(1, 0, 2000), Ok(Shared), N),   // shared 2000 < 3000
                (Op::Admit(1, 0, 1500), Ok(Headroom), Xoff), // 3500 > 3000: headroom
                (Op::Admit(1, 0, 400), Ok(Headroom), N),  // after XOFF: headroom
                (Op::Admit(1, 0, 200), Err(D::Headroom), N), // 1900 + 200 > 2000
                (Op::Release(1, 0, 1500), Ok(Headroom), N), // headroom first: 400 left
                (Op::Release(1, 0, 400), Ok(Headroom), Xon), // headroom empty, shared 2000 + 1000 <= 3000
            ]),
            ("lossless: at the threshold exactly XOFFs", cfg(), vec![
                (Op::Admit(1, 0, 4000), Ok(Shared), Xoff), // shared 3000 = threshold
                (Op::Admit(1, 0, 100), Ok(Headroom), N),
                (Op::Release(1, 0, 100), Ok(Headroom), N), // shared 3000 + 1000 > 3000: still XOFF
                (Op::Release(1, 0, 1000), Ok(Headroom), Xon), // shared 2000 + 1000 <= 3000
            ]),
            ("lossless frames are not dropped at the egress threshold", MmuConfig {
                    q_threshold: Threshold::Static(0), ..cfg() }, vec![
                (Op::Admit(1, 0, 2000), Ok(Shared), N),
            ]),
            ("no headroom configured: XOFF and a headroom drop", MmuConfig { pg_headroom: vec![0, 0], ..cfg() }, vec![
                (Op::Admit(1, 0, 1000), Ok(Reserved), N),
                (Op::Admit(1, 0, 3000), Ok(Shared), Xoff),
                (Op::Admit(1, 0, 1), Err(D::Headroom), N),
            ]),
        ];
        for (name, c, steps) in &cases {
            run(name, c.clone(), steps);
        }
    }

    #[test]
    fn dynamic_threshold_is_alpha_times_the_free_shared_space() {
        // (alpha, free cells, limit)
        #[rustfmt::skip]
        let cases: &[(f64, u64, u64)] = &[
            (1.0, 8000, 8000), (0.5, 8000, 4000), (2.0, 8000, 16000), (1.0 / 16.0, 8000, 500),
            (1.0, 0, 0), (8.0, 100, 800), (0.25, 3, 0),
        ];
        for (a, free, want) in cases {
            assert_eq!(
                Threshold::Dynamic(*a).limit(*free),
                *want,
                "alpha {a}, free {free}"
            );
        }
        // occupancies: one PG alone with alpha = 1 takes half the shared region (T = F - T)
        let c = MmuConfig {
            pg_reserved: vec![0, 0],
            pg_headroom: vec![0, 0],
            pg_lossless: vec![false, false],
            pg_threshold: Threshold::Dynamic(1.0),
            q_reserved: vec![0, 0],
            q_threshold: Threshold::Unlimited,
            ..cfg()
        };
        let mut m = Mmu::new(c.clone()).unwrap();
        let mut admitted = 0;
        while m.admit(0, 0, 100).result.is_ok() {
            admitted += 100;
        }
        // shared 10000: admitted while s + 100 <= 10000 - s, i.e. s <= 4950: 5000 in all
        assert_eq!(admitted, 5000);
        // a second PG then gets alpha x what is left: s2 + 100 <= 5000 - s2 -> 2500
        let mut second = 0;
        while m.admit(1, 1, 100).result.is_ok() {
            second += 100;
        }
        assert_eq!(second, 2500);
        assert_eq!(m.stats.drop_frames[DropCause::Ingress as usize], 2);
        // with alpha = 2 one PG alone gets 2/3 of the region
        let mut m = Mmu::new(MmuConfig {
            pg_threshold: Threshold::Dynamic(2.0),
            ..c.clone()
        })
        .unwrap();
        let mut a2 = 0;
        while m.admit(0, 0, 10).result.is_ok() {
            a2 += 10;
        }
        assert_eq!(a2, 6670, "s + 10 <= 2 (10000 - s) while s <= 6660");
        // the egress threshold is dynamic in the same way
        let mut m = Mmu::new(MmuConfig {
            pg_threshold: Threshold::Unlimited,
            q_threshold: Threshold::Dynamic(0.5),
            ..c
        })
        .unwrap();
        let mut e = 0;
        while m.admit(0, 0, 10).result.is_ok() {
            e += 10;
        }
        // q + 10 <= 0.5 (10000 - q): q <= 3326.6 -> 3330
        assert_eq!(e, 3330);
        assert_eq!(m.stats.drop_frames[DropCause::Egress as usize], 1);
    }

    #[test]
    fn dynamic_xon_waits_for_the_offset_below_the_threshold() {
        // one lossless PG, alpha 1, no reserve: XOFF at s >= 10000 - s (5000)
        let c = MmuConfig {
            size: 12_000,
            pg_reserved: vec![0],
            pg_headroom: vec![2000],
            pg_lossless: vec![true],
            pg_threshold: Threshold::Dynamic(1.0),
            q_reserved: vec![0],
            q_threshold: Threshold::Unlimited,
            xon_offset: 1000,
            ..cfg()
        };
        let mut m = Mmu::new(c).unwrap();
        for _ in 0..49 {
            assert_eq!(m.admit(0, 0, 100).pfc, N);
        }
        assert_eq!(
            m.admit(0, 0, 100),
            Verdict {
                result: Ok(Shared),
                pfc: Xoff
            },
            "5000 >= 10000 - 5000"
        );
        assert_eq!(m.admit(0, 0, 100).result, Ok(Headroom));
        assert_eq!(
            m.release(0, 0, 100),
            N,
            "headroom empty, shared 5000 + 1000 > 5000"
        );
        // XON once s + 1000 <= 10000 - s, s <= 4500
        let mut released = 0;
        loop {
            released += 100;
            if m.release(0, 0, 100) == Xon {
                break;
            }
        }
        assert_eq!((released, m.pg_shared(0)), (500, 4500));
    }

    #[test]
    fn pool_scope_is_the_global_watermark() {
        // no reserve, no headroom, 140/130 watermark on the whole memory, infinite-ish pool
        let c = MmuConfig {
            size: 1 << 40,
            pg_reserved: vec![0, 0],
            pg_headroom: vec![0, 0],
            pg_lossless: vec![true, true],
            pg_threshold: Threshold::Unlimited,
            q_reserved: vec![0, 0],
            q_threshold: Threshold::Unlimited,
            xon_offset: 0,
            xoff_scope: XoffScope::Pool {
                xoff: 140_000,
                xon: 130_000,
                classes: 1,
            },
            ..cfg()
        };
        #[rustfmt::skip]
        let steps: Vec<(Op, Result<Region, DropCause>, PfcCmd)> = vec![
            (Op::Admit(0, 0, 70_000), Ok(Shared), N),
            (Op::Admit(1, 1, 70_000), Ok(Shared), N),   // 140000: not above yet
            (Op::Admit(1, 0, 1), Ok(Shared), Xoff),     // 140001 > 140000
            (Op::Admit(0, 1, 5000), Ok(Shared), N),     // frames keep being admitted
            (Op::Release(0, 0, 10_000), Ok(Shared), N), // 135001
            (Op::Release(1, 1, 5001), Ok(Shared), N),   // 130000: not below yet
            (Op::Release(1, 1, 1), Ok(Shared), Xon),    // 129999 < 130000
            (Op::Release(0, 1, 1), Ok(Shared), N),
        ];
        run("pool scope", c, &steps);
    }

    #[test]
    fn pool_scope_counts_each_priority_apart() {
        // PFC with two priorities (PG i has priority i % 2): PGs 0, 2 are priority 0 (lossy),
        // PGs 1, 3 priority 1 (lossless). The watermark is on each priority's own use; a lossy
        // priority never pauses. Queues 0, 1 belong to port 0 and are limited by its own buffer
        // (reserved 1000, threshold 0, checked for lossless frames too).
        let c = MmuConfig {
            size: 1 << 30,
            pg_reserved: vec![0; 4],
            pg_headroom: vec![0; 4],
            pg_lossless: vec![false, true, false, true],
            pg_threshold: Threshold::Unlimited,
            q_reserved: vec![1000, 1000, 1 << 20, 1 << 20],
            q_threshold: Threshold::Static(0),
            lossless_egress: true,
            xon_offset: 0,
            xoff_scope: XoffScope::Pool {
                xoff: 1500,
                xon: 1000,
                classes: 2,
            },
            ..cfg()
        };
        #[rustfmt::skip]
        let steps: Vec<(Op, Result<Region, DropCause>, PfcCmd)> = vec![
            (Op::Admit(0, 2, 1600), Ok(Shared), N),        // priority 0 above 1500: lossy, no XOFF
            (Op::Admit(1, 3, 1000), Ok(Shared), N),        // priority 1: 1000
            (Op::Admit(3, 1, 1000), Ok(Shared), Xoff),     // priority 1: 2000 > 1500
            (Op::Admit(3, 1, 1), Err(D::Egress), N),       // lossless too: port 0's queue 1 is full
            (Op::Admit(2, 0, 1000), Ok(Shared), N),        // queue 0 fits exactly its 1000
            (Op::Release(0, 2, 1600), Ok(Shared), N),      // priority 0's use does not XON 1
            (Op::Release(3, 1, 1000), Ok(Shared), N),      // priority 1: 1000, not below
            (Op::Release(1, 3, 1), Ok(Shared), Xon),       // 999 < 1000
        ];
        let m = run("per-priority pool scope", c, &steps);
        assert!(!m.pool_above(1) && !m.pool_above(0));
        assert_eq!(m.stats.drop_frames[D::Egress as usize], 1);
    }

    mod props {
        use super::super::*;
        use proptest::prelude::*;

        #[derive(Debug, Clone)]
        enum Step {
            /// (pg, queue, bytes)
            Admit(usize, usize, u32),
            /// Release the k-th frame still held (modulo their number).
            Release(usize),
        }

        fn step() -> impl Strategy<Value = Step> {
            prop_oneof![
                3 => (0usize..6, 0usize..4, 1u32..=3000).prop_map(|(i, e, b)| Step::Admit(i, e, b)),
                2 => any::<usize>().prop_map(Step::Release),
            ]
        }

        fn threshold() -> impl Strategy<Value = Threshold> {
            prop_oneof![
                Just(Threshold::Unlimited),
                (0u64..20_000).prop_map(Threshold::Static),
                (0.0f64..8.0).prop_map(Threshold::Dynamic),
            ]
        }

        fn config() -> impl Strategy<Value = MmuConfig> {
            (
                prop_oneof![Just(1u32), Just(64), Just(80), Just(208)],
                0u64..40_000,
                prop::collection::vec((0u64..3000, 0u64..6000, any::<bool>()), 6),
                threshold(),
                prop::collection::vec(0u64..3000, 4),
                threshold(),
                0u64..5000,
                prop::option::of((0u64..40_000, 0u64..40_000, 1u32..=3)),
                any::<bool>(),
            )
                .prop_map(|(cell, extra, pgs, pt, qr, qt, xo, pool, le)| {
                    let c = cell as u64;
                    let pg_reserved: Vec<u64> = pgs.iter().map(|p| p.0 / c).collect();
                    let pg_headroom: Vec<u64> =
                        pgs.iter().map(|p| if p.2 { p.1 / c } else { 0 }).collect();
                    let size = pg_reserved.iter().sum::<u64>()
                        + pg_headroom.iter().sum::<u64>()
                        + extra / c;
                    MmuConfig {
                        cell_bytes: cell,
                        size,
                        pg_reserved,
                        pg_headroom,
                        pg_lossless: pgs.iter().map(|p| p.2).collect(),
                        pg_threshold: pt,
                        q_reserved: qr.iter().map(|r| r / c).collect(),
                        q_threshold: qt,
                        lossless_egress: le,
                        xon_offset: xo / c,
                        xoff_scope: match pool {
                            Some((a, b, k)) => XoffScope::Pool {
                                xoff: a.max(b) / c,
                                xon: a.min(b) / c,
                                classes: k,
                            },
                            None => XoffScope::Pg,
                        },
                    }
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

            /// The pool never goes negative or above its size, the regions add up after every
            /// step, every admitted byte is released exactly once (all counters return to zero
            /// when everything held is released), XOFF/XON alternate per PG, and lossless PGs
            /// are only dropped for lack of headroom.
            #[test]
            fn accounting_is_conserved(cfg in config(), steps in prop::collection::vec(step(), 1..400)) {
                let mut m = Mmu::new(cfg.clone()).expect("fits by construction");
                let mut held: Vec<(usize, usize, u32)> = Vec::new();
                let mut paused = [false; 6];
                let mut pool_paused = [false; 3];
                let (pool, nk) = match cfg.xoff_scope {
                    XoffScope::Pool { classes, .. } => (true, classes as usize),
                    XoffScope::Pg => (false, 1),
                };
                for s in &steps {
                    match *s {
                        Step::Admit(i, e, b) => {
                            let v = m.admit(i, e, b);
                            match v.result {
                                Ok(_) => {
                                    held.push((i, e, b));
                                }
                                Err(cause) => {
                                    if cfg.pg_lossless[i] && !pool && !cfg.lossless_egress {
                                        prop_assert_eq!(cause, DropCause::Headroom);
                                    }
                                    if cfg.pg_lossless[i] && !pool {
                                        prop_assert!(matches!(cause, DropCause::Headroom | DropCause::Egress));
                                    }
                                }
                            }
                            if v.pfc == PfcCmd::Xoff {
                                if pool {
                                    prop_assert!(cfg.pg_lossless[i] && !pool_paused[i % nk]);
                                    pool_paused[i % nk] = true;
                                } else {
                                    prop_assert!(cfg.pg_lossless[i] && !paused[i]);
                                    paused[i] = true;
                                }
                            }
                            prop_assert_ne!(v.pfc, PfcCmd::Xon);
                        }
                        Step::Release(k) => {
                            if held.is_empty() {
                                continue;
                            }
                            let (i, e, b) = held.swap_remove(k % held.len());
                            let cmd = m.release(i, e, b);
                            if cmd == PfcCmd::Xon {
                                if pool {
                                    prop_assert!(pool_paused[i % nk]);
                                    pool_paused[i % nk] = false;
                                } else {
                                    prop_assert!(paused[i]);
                                    paused[i] = false;
                                }
                            }
                            prop_assert_ne!(cmd, PfcCmd::Xoff);
                        }
                    }
                    prop_assert!(m.check().is_ok(), "{:?}", m.check());
                    let cells: u64 = held.iter().map(|h| cfg.cells(h.2)).sum();
                    prop_assert_eq!(m.used(), cells);
                }
                for (i, e, b) in held.drain(..) {
                    m.release(i, e, b);
                    prop_assert!(m.check().is_ok(), "{:?}", m.check());
                }
                prop_assert_eq!(m.used(), 0);
                prop_assert_eq!(m.shared_used(), 0);
                prop_assert_eq!(m.headroom_used(), 0);
                for i in 0..6 {
                    prop_assert_eq!(m.pg_use(i), (0, 0));
                }
                for e in 0..4 {
                    prop_assert_eq!(m.queue_use(e), 0);
                }
            }
        }
    }
}
