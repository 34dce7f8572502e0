//! Routing tables (docs/models/topology.md, "Routing" and "Route tables: memory").
//!
//! Memory scales with the fabric's ports, not with switches squared or hosts squared. A host
//! has one link, so every path towards a host crosses the switch it is attached to (its
//! *destination switch*); routes are kept per switch and per destination switch, and the next
//! port from any node towards any host is computed from them and the host's attachment.
//!
//! Per switch the tables hold *runs*: the destination switches, numbered in switch order, cut
//! into ranges over which the switch's routing entry stays the same. An entry is the
//! shortest-path port and the ECMP group (the equal-cost ports in port order), stored once in a
//! shared pool and referred to by every run that uses it. A fat-tree's edge switch has three
//! runs (everything up, itself, everything up), an aggregation switch one per edge switch of
//! its pod plus two, a core switch one per pod: k = 64 needs 5 MB where a switch ×
//! destination-switch table took 63 MB.
//!
//! Two builders give identical tables (a property test compares them):
//! - **from the structure**: a leaf-spine, two-tier Clos or k-ary fat-tree as the generators
//!   lay it out (every host, switch and link in its place, nothing cut, added or down; checked
//!   link by link, [`Fabric::detect`]) gets its runs written directly from its shape: up-down
//!   routing, one ECMP group per destination prefix (a destination pod or leaf), no search;
//! - **generic**, for any other graph: one breadth-first search per destination switch, whose
//!   column is folded into the runs as it is found (never a switch × switch array), stopping at
//!   the memory limit.
//!
//! Shortest path: fewest hops, ties to the port found first by a breadth-first search from the
//! destination over the ports in link order (the behaviour of the former tables, kept exactly).
//! Equal-cost multipath (ECMP): every port of a switch whose peer is one hop closer to the
//! destination is a candidate, in port order; [`Routes::ecmp_path`] picks one per switch by a
//! hash of the flow's identity and the switch's seed (as switches hash the 5-tuple with a
//! per-switch seed, RFC 2992 "hash-threshold"), so a flow keeps one path.

use super::{LinkSpec, NodeKind, NodeSpec, PortIx, Scenario};
use std::collections::HashMap;

const NONE: u32 = u32::MAX;
/// Run entries that are not offsets into the pool: the switch cannot reach the destination
/// switch, or is it.
const UNREACH: u32 = u32::MAX - 1;
const SELF: u32 = u32::MAX - 2;
const FAR: u32 = u32::MAX;

#[derive(Clone)]
pub struct Routes {
    /// Node -> switch index (NONE for hosts).
    sw_ix: Vec<u32>,
    n_sw: usize,
    /// Switch index -> its destination column when a host hangs off it, else NONE.
    col: Vec<u32>,
    /// Per switch index, its runs (CSR: run_start[u]..run_start[u + 1]): the first column of
    /// each run, in increasing order from 0, and its entry (an offset into `pool`, or
    /// UNREACH / SELF).
    run_start: Vec<u32>,
    run_col: Vec<u32>,
    run_ent: Vec<u32>,
    /// Entries: `[n, next port, n candidate ports...]` one after another.
    pool: Vec<u32>,
    /// Per node: its first port that is up (a host's NIC port), NONE without links.
    nic: Vec<u32>,
    /// Port -> receiving node.
    peer: Vec<u32>,
    /// The generated shape the tables were written from, if any.
    fabric: Option<Fabric>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Routes({} switches, {} runs{})",
            self.n_sw,
            self.run_col.len(),
            if self.fabric.is_some() {
                ", from the structure"
            } else {
                ""
            }
        )
    }
}

/// A generated fabric's shape, as the generators lay it out (docs/models/topology.md,
/// "Generators"): hosts first (numbered leaf by leaf), then the switches (edge / leaf, then
/// aggregation, then core / spine), then the host links in host order, then the fabric links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fabric {
    /// A k-ary fat-tree: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores.
    FatTree { k: usize },
    /// A leaf-spine (a two-tier Clos is one): every leaf linked to every spine `parallel`
    /// times.
    LeafSpine {
        leaves: usize,
        spines: usize,
        hosts_per_leaf: usize,
        parallel: usize,
    },
}

impl Fabric {
    /// Hosts, switches and links.
    pub fn counts(&self) -> (usize, usize, usize) {
        match *self {
            Fabric::FatTree { k } => {
                let h = k / 2;
                (k * h * h, 2 * k * h + h * h, k * h * h + 2 * k * h * h)
            }
            Fabric::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                parallel,
            } => (
                leaves * hosts_per_leaf,
                leaves + spines,
                leaves * hosts_per_leaf + leaves * spines * parallel,
            ),
        }
    }

    /// The two ends (a, b) of link `l`, as node indices.
    fn link(&self, l: usize) -> (usize, usize) {
        match *self {
            Fabric::FatTree { k } => {
                let h = k / 2;
                let (hn, e) = (k * h * h, k * h);
                if l < hn {
                    return (l, hn + l / h);
                }
                let r = l - hn;
                let (pod, q) = (r / (2 * h * h), r % (2 * h * h));
                if q < h * h {
                    (hn + pod * h + q / h, hn + e + pod * h + q % h)
                } else {
                    let q = q - h * h;
                    (hn + e + pod * h + q / h, hn + 2 * e + (q / h) * h + q % h)
                }
            }
            Fabric::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                parallel,
            } => {
                let hn = leaves * hosts_per_leaf;
                if l < hn {
                    return (l, hn + l / hosts_per_leaf);
                }
                let ls = (l - hn) / parallel;
                (hn + ls / spines, hn + leaves + ls % spines)
            }
        }
    }

    /// The shape `nodes` and `links` have, when they are exactly a generated fat-tree or
    /// leaf-spine (every link checked); `None` for anything else (a cut or added link, an added
    /// node, another order).
    pub fn detect(nodes: &[NodeSpec], links: &[LinkSpec]) -> Option<Fabric> {
        let hn = nodes
            .iter()
            .position(|n| n.kind == NodeKind::Switch)
            .unwrap_or(nodes.len());
        let sn = nodes.len() - hn;
        if hn == 0 || sn == 0 || nodes[hn..].iter().any(|n| n.kind != NodeKind::Switch) {
            return None;
        }
        let mut shapes = Vec::new();
        // fat-tree: 5k^2/4 switches
        let k = ((sn as f64 * 0.8).sqrt().round() as usize) & !1;
        if k >= 2 {
            shapes.push(Fabric::FatTree { k });
        }
        // leaf-spine: the hosts on leaf 0 (the first switch) come first
        let first = links.first()?;
        if first.a == 0 && first.b == hn {
            let hpl = links[..hn.min(links.len())]
                .iter()
                .take_while(|l| l.b == hn)
                .count();
            if hpl > 0 && hn % hpl == 0 && hn / hpl < sn {
                let (leaves, spines) = (hn / hpl, sn - hn / hpl);
                let rest = links.len().saturating_sub(hn);
                if rest > 0 && rest % (leaves * spines) == 0 {
                    shapes.push(Fabric::LeafSpine {
                        leaves,
                        spines,
                        hosts_per_leaf: hpl,
                        parallel: rest / (leaves * spines),
                    });
                }
            }
        }
        shapes.into_iter().find(|f| {
            f.counts() == (hn, sn, links.len())
                && links
                    .iter()
                    .enumerate()
                    .all(|(l, lk)| f.link(l) == (lk.a, lk.b))
        })
    }

    /// The runs and pool words its tables take (what [`Routes`] written from it holds).
    fn tables(&self) -> (u128, u128) {
        match *self {
            Fabric::FatTree { k } => {
                let (k, h) = (k as u128, k as u128 / 2);
                let e = k * h;
                // edges: up, self, up; aggregations: up, one per edge of the pod, up; cores:
                // one per pod
                let runs = (3 * e - 2) + (e * h + 2 * h * (k - 1)) + h * h * k;
                let pool = e * (2 + h) + e * (2 + h + 3 * h) + h * h * k * 3;
                (runs, pool)
            }
            Fabric::LeafSpine {
                leaves,
                spines,
                parallel,
                ..
            } => {
                let (l, s, m) = (leaves as u128, spines as u128, parallel as u128);
                ((3 * l - 2) + s * l, l * (2 + s * m) + s * l * (2 + m))
            }
        }
    }

    /// The bytes of the routing tables of this fabric, computed from its parameters alone.
    pub fn route_bytes(&self) -> u128 {
        let (hn, sn, ln) = self.counts();
        let (runs, pool) = self.tables();
        fixed_bytes(hn + sn, sn, ln) + runs * 8 + pool * 4
    }
}

/// The per-node, per-switch and per-port arrays every table holds.
fn fixed_bytes(n: usize, n_sw: usize, n_links: usize) -> u128 {
    (2 * n as u128 + 2 * n_sw as u128 + 1 + 2 * n_links as u128) * 4
}

/// Routing tables that would exceed the memory limit: what they had taken when the build
/// stopped, and the estimate at that rate for all of them.
#[derive(Debug, Clone)]
pub struct OverLimit {
    pub estimate: u128,
    pub columns_done: usize,
    pub n_sw: usize,
    pub n_dst: usize,
}

/// What the builders share: the switch numbering, each host's attachment and each switch's
/// destination column.
struct Frame {
    sw_ix: Vec<u32>,
    n_sw: usize,
    nic: Vec<u32>,
    peer: Vec<u32>,
    col: Vec<u32>,
    n_dst: usize,
}

impl Frame {
    fn new(nodes: &[NodeSpec], links: &[LinkSpec], down: &[bool]) -> Frame {
        let n = nodes.len();
        let mut sw_ix = vec![NONE; n];
        let mut n_sw = 0u32;
        for (i, nd) in nodes.iter().enumerate() {
            if nd.kind == NodeKind::Switch {
                sw_ix[i] = n_sw;
                n_sw += 1;
            }
        }
        let n_sw = n_sw as usize;
        let mut peer = vec![0u32; links.len() * 2];
        let mut nic = vec![NONE; n];
        for (p, pe) in peer.iter_mut().enumerate() {
            let l = &links[p / 2];
            let (from, to) = if p % 2 == 0 { (l.a, l.b) } else { (l.b, l.a) };
            *pe = to as u32;
            if nic[from] == NONE && !down.get(p / 2).copied().unwrap_or(false) {
                nic[from] = p as u32;
            }
        }
        let mut is_dst = vec![false; n_sw];
        for (h, nd) in nodes.iter().enumerate() {
            if nd.kind == NodeKind::Switch || nic[h] == NONE {
                continue;
            }
            let s = sw_ix[peer[nic[h] as usize] as usize];
            if s != NONE {
                is_dst[s as usize] = true;
            }
        }
        let mut col = vec![NONE; n_sw];
        let mut n_dst = 0u32;
        for (c, d) in col.iter_mut().zip(&is_dst) {
            if *d {
                *c = n_dst;
                n_dst += 1;
            }
        }
        Frame {
            sw_ix,
            n_sw,
            nic,
            peer,
            col,
            n_dst: n_dst as usize,
        }
    }

    fn into_routes(
        self,
        run_start: Vec<u32>,
        run_col: Vec<u32>,
        run_ent: Vec<u32>,
        pool: Vec<u32>,
        fabric: Option<Fabric>,
    ) -> Routes {
        Routes {
            sw_ix: self.sw_ix,
            n_sw: self.n_sw,
            col: self.col,
            run_start,
            run_col,
            run_ent,
            pool,
            nic: self.nic,
            peer: self.peer,
            fabric,
        }
    }
}

/// Append an entry `[n, next, candidates...]` to the pool; its offset.
fn push_entry(pool: &mut Vec<u32>, next: u32, cand: impl ExactSizeIterator<Item = u32>) -> u32 {
    let off = pool.len() as u32;
    pool.push(cand.len() as u32);
    pool.push(next);
    pool.extend(cand);
    off
}

impl Routes {
    pub fn compute(nodes: &[NodeSpec], links: &[LinkSpec]) -> Routes {
        Routes::compute_without(nodes, links, &[])
    }

    /// The tables with the links marked in `down` (indexed by link; shorter = the rest up)
    /// left out: nothing is routed over them, and a host whose link is down is unreachable.
    /// Port indices stay those of the full topology.
    pub fn compute_without(nodes: &[NodeSpec], links: &[LinkSpec], down: &[bool]) -> Routes {
        Routes::compute_within(nodes, links, down, u128::MAX).expect("no limit")
    }

    /// The tables by the generic search whatever the graph (to compare with those written from
    /// the structure).
    #[doc(hidden)]
    pub fn compute_generic(nodes: &[NodeSpec], links: &[LinkSpec]) -> Routes {
        Routes::generic(Frame::new(nodes, links, &[]), nodes, links, &[], u128::MAX)
            .expect("no limit")
    }

    /// The tables, written from the structure when the network is a generated fabric with
    /// every link up, else by the generic search, which stops once its tables exceed `limit`
    /// bytes.
    pub fn compute_within(
        nodes: &[NodeSpec],
        links: &[LinkSpec],
        down: &[bool],
        limit: u128,
    ) -> Result<Routes, OverLimit> {
        let fr = Frame::new(nodes, links, down);
        if !down.iter().any(|&d| d) {
            if let Some(f) = Fabric::detect(nodes, links) {
                return Ok(Routes::structural(fr, f));
            }
        }
        Routes::generic(fr, nodes, links, down, limit)
    }

    /// The tables of a generated fabric from its shape: up-down routing, an ECMP group per
    /// destination prefix. Identical to what [`Routes::generic`] finds for it (the breadth-first
    /// search from an edge switch or leaf reaches, in order, its aggregations / spines by their
    /// first link, then every other switch of the tier below by its first up port).
    fn structural(fr: Frame, f: Fabric) -> Routes {
        let (runs, pool_n) = f.tables();
        let mut t = Runs::with_capacity(fr.n_sw, runs as usize);
        let mut pool = Vec::with_capacity(pool_n as usize);
        match f {
            Fabric::FatTree { k } => {
                let h = k / 2;
                let (hn, e_n) = (k * h * h, k * h);
                // the port from a to b of link l (the lower tier is a), and back
                let up = |l: usize| 2 * l as u32;
                let down = |l: usize| 2 * l as u32 + 1;
                let edge_agg = |pod: usize, i: usize, j: usize| hn + pod * 2 * h * h + i * h + j;
                let agg_core =
                    |pod: usize, j: usize, c: usize| hn + pod * 2 * h * h + h * h + j * h + c;
                for e in 0..e_n {
                    let (pod, i) = (e / h, e % h);
                    let u = push_entry(
                        &mut pool,
                        up(edge_agg(pod, i, 0)),
                        (0..h).map(|j| up(edge_agg(pod, i, j))),
                    );
                    if e > 0 {
                        t.run(0, u);
                    }
                    t.run(e, SELF);
                    if e + 1 < e_n {
                        t.run(e + 1, u);
                    }
                    t.end_switch();
                }
                for a in 0..e_n {
                    let (pod, j) = (a / h, a % h);
                    let u = push_entry(
                        &mut pool,
                        up(agg_core(pod, j, 0)),
                        (0..h).map(|c| up(agg_core(pod, j, c))),
                    );
                    if pod > 0 {
                        t.run(0, u);
                    }
                    for i in 0..h {
                        let p = down(edge_agg(pod, i, j));
                        t.run(pod * h + i, push_entry(&mut pool, p, std::iter::once(p)));
                    }
                    if pod + 1 < k {
                        t.run((pod + 1) * h, u);
                    }
                    t.end_switch();
                }
                for c in 0..h * h {
                    let (j, cc) = (c / h, c % h);
                    for pod in 0..k {
                        let p = down(agg_core(pod, j, cc));
                        t.run(pod * h, push_entry(&mut pool, p, std::iter::once(p)));
                    }
                    t.end_switch();
                }
            }
            Fabric::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                parallel,
            } => {
                let hn = leaves * hosts_per_leaf;
                let link = |l: usize, s: usize, m: usize| hn + (l * spines + s) * parallel + m;
                for l in 0..leaves {
                    let u = push_entry(
                        &mut pool,
                        2 * link(l, 0, 0) as u32,
                        (0..spines * parallel)
                            .map(|x| 2 * link(l, x / parallel, x % parallel) as u32),
                    );
                    if l > 0 {
                        t.run(0, u);
                    }
                    t.run(l, SELF);
                    if l + 1 < leaves {
                        t.run(l + 1, u);
                    }
                    t.end_switch();
                }
                for s in 0..spines {
                    for l in 0..leaves {
                        let first = 2 * link(l, s, 0) as u32 + 1;
                        let e = push_entry(
                            &mut pool,
                            first,
                            (0..parallel).map(|m| 2 * link(l, s, m) as u32 + 1),
                        );
                        t.run(l, e);
                    }
                    t.end_switch();
                }
            }
        }
        debug_assert_eq!(t.col.len() as u128, runs);
        debug_assert_eq!(pool.len() as u128, pool_n);
        fr.into_routes(t.start, t.col, t.ent, pool, Some(f))
    }

    /// The tables of any graph: per destination switch (in switch order) a breadth-first search
    /// over the ports between switches that are up, each switch's entry found from the
    /// distances (its shortest-path port and the ports to switches one hop closer) and added
    /// to its runs when it differs from the one before. Entries are kept once (interned by
    /// content) and shared. Stops with [`OverLimit`] once the tables exceed `limit` bytes.
    fn generic(
        fr: Frame,
        nodes: &[NodeSpec],
        links: &[LinkSpec],
        down: &[bool],
        limit: u128,
    ) -> Result<Routes, OverLimit> {
        let n_sw = fr.n_sw;
        let np = links.len() * 2;
        let is_down = |p: usize| down.get(p / 2).copied().unwrap_or(false);
        // per switch, the ports between switches it transmits on (with the receiving switch)
        // and those it receives on (with the transmitting switch), in port order
        let ends = |p: usize| {
            (
                fr.sw_ix[fr.peer[p ^ 1] as usize],
                fr.sw_ix[fr.peer[p] as usize],
            )
        };
        let mut out_start = vec![0u32; n_sw + 1];
        let mut in_start = vec![0u32; n_sw + 1];
        for p in (0..np).filter(|&p| !is_down(p)) {
            let (f, t) = ends(p);
            if f != NONE && t != NONE {
                out_start[f as usize + 1] += 1;
                in_start[t as usize + 1] += 1;
            }
        }
        for i in 0..n_sw {
            out_start[i + 1] += out_start[i];
            in_start[i + 1] += in_start[i];
        }
        let m = out_start[n_sw] as usize;
        let (mut out_port, mut out_to) = (vec![0u32; m], vec![0u32; m]);
        let (mut in_port, mut in_from) = (vec![0u32; m], vec![0u32; m]);
        {
            let (mut of, mut inf) = (out_start.clone(), in_start.clone());
            for p in (0..np).filter(|&p| !is_down(p)) {
                let (f, t) = ends(p);
                if f != NONE && t != NONE {
                    let k = of[f as usize] as usize;
                    (out_port[k], out_to[k]) = (p as u32, t);
                    of[f as usize] += 1;
                    let k = inf[t as usize] as usize;
                    (in_port[k], in_from[k]) = (p as u32, f);
                    inf[t as usize] += 1;
                }
            }
        }
        let fixed = fixed_bytes(nodes.len(), n_sw, links.len())
            + (2 * n_sw as u128 + 2 + 4 * m as u128) * 4
            + n_sw as u128 * (3 * 4 + 24);
        let n_dst = fr.n_dst;
        let mut dist = vec![FAR; n_sw];
        let mut nxt = vec![NONE; n_sw];
        let mut last = vec![NONE; n_sw];
        let mut runs: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_sw];
        let mut n_runs = 0u128;
        let mut pool: Vec<u32> = Vec::new();
        let mut index: HashMap<u64, u32> = HashMap::new();
        let mut buf: Vec<u32> = Vec::new();
        let mut frontier: Vec<u32> = Vec::new();
        let mut following: Vec<u32> = Vec::new();
        let mut c = 0u32;
        for s in 0..n_sw {
            if fr.col[s] == NONE {
                continue;
            }
            // breadth-first from switch s over the ports arriving at each switch, in port
            // order; only switches forward
            dist.fill(FAR);
            dist[s] = 0;
            frontier.clear();
            frontier.push(s as u32);
            let mut d = 0u32;
            while !frontier.is_empty() {
                d += 1;
                following.clear();
                for &v in &frontier {
                    let (lo, hi) = (
                        in_start[v as usize] as usize,
                        in_start[v as usize + 1] as usize,
                    );
                    for (&p, &u) in in_port[lo..hi].iter().zip(&in_from[lo..hi]) {
                        if dist[u as usize] == FAR {
                            dist[u as usize] = d;
                            nxt[u as usize] = p;
                            following.push(u);
                        }
                    }
                }
                std::mem::swap(&mut frontier, &mut following);
            }
            for u in 0..n_sw {
                let e = if u == s {
                    SELF
                } else if dist[u] == FAR {
                    UNREACH
                } else {
                    let du = dist[u];
                    buf.clear();
                    buf.push(nxt[u]);
                    let (lo, hi) = (out_start[u] as usize, out_start[u + 1] as usize);
                    for (&p, &v) in out_port[lo..hi].iter().zip(&out_to[lo..hi]) {
                        let dv = dist[v as usize];
                        if dv != FAR && dv + 1 == du {
                            buf.push(p);
                        }
                    }
                    let cur = last[u];
                    if cur < SELF && entry_is(&pool, cur, &buf) {
                        cur
                    } else {
                        intern(&mut pool, &mut index, &buf)
                    }
                };
                if e != last[u] {
                    runs[u].push((c, e));
                    last[u] = e;
                    n_runs += 1;
                }
            }
            c += 1;
            // the runs while they grow and once gathered, the pool, its index
            let var = n_runs * 24 + pool.capacity() as u128 * 4 + index.capacity() as u128 * 13;
            if fixed + var > limit {
                return Err(OverLimit {
                    estimate: fixed + var * n_dst as u128 / c as u128,
                    columns_done: c as usize,
                    n_sw,
                    n_dst,
                });
            }
        }
        drop(index);
        let mut t = Runs::with_capacity(n_sw, n_runs as usize);
        for r in runs {
            for (c, e) in r {
                t.run(c as usize, e);
            }
            t.end_switch();
        }
        pool.shrink_to_fit();
        Ok(fr.into_routes(t.start, t.col, t.ent, pool, None))
    }

    /// Bytes held by the tables (for the memory test and docs/performance.md).
    pub fn bytes(&self) -> usize {
        (self.sw_ix.len()
            + self.col.len()
            + self.run_start.len()
            + self.run_col.len()
            + self.run_ent.len()
            + self.pool.len()
            + self.nic.len()
            + self.peer.len())
            * 4
    }

    /// The generated shape the tables were written from (`None`: the generic search).
    pub fn structure(&self) -> Option<Fabric> {
        self.fabric
    }

    /// The tables as lists, for comparing two builds: per switch index, its runs as (first
    /// destination column, shortest-path port, ECMP ports); the port is `u32::MAX` for
    /// unreachable, `u32::MAX - 1` at the destination switch itself.
    #[doc(hidden)]
    pub fn runs(&self) -> Vec<Vec<(u32, u32, Vec<u32>)>> {
        (0..self.n_sw)
            .map(|u| {
                (self.run_start[u] as usize..self.run_start[u + 1] as usize)
                    .map(|i| {
                        let e = self.run_ent[i];
                        let (next, cand) = match e {
                            UNREACH => (u32::MAX, Vec::new()),
                            SELF => (u32::MAX - 1, Vec::new()),
                            _ => (self.pool[e as usize + 1], self.group(e).to_vec()),
                        };
                        (self.run_col[i], next, cand)
                    })
                    .collect()
            })
            .collect()
    }

    /// The entry of switch index `u` for destination column `c`.
    #[inline]
    fn entry(&self, u: usize, c: u32) -> u32 {
        let (lo, hi) = (self.run_start[u] as usize, self.run_start[u + 1] as usize);
        let i = self.run_col[lo..hi].partition_point(|&x| x <= c);
        if i == 0 {
            UNREACH
        } else {
            self.run_ent[lo + i - 1]
        }
    }

    #[inline]
    fn group(&self, e: u32) -> &[u32] {
        let e = e as usize;
        &self.pool[e + 2..e + 2 + self.pool[e] as usize]
    }

    /// The switch a host hangs off (its switch index), that switch's destination column, and
    /// the port from it to the host, if the host's link goes to a switch.
    #[inline]
    fn attach(&self, host: usize) -> Option<(usize, u32, u32)> {
        let p = self.nic[host];
        if p == NONE {
            return None;
        }
        let s = self.sw_ix[self.peer[p as usize] as usize];
        if s == NONE {
            return None;
        }
        Some((s as usize, self.col[s as usize], p ^ 1))
    }

    /// Shortest-path egress port from `node` towards host `dst`.
    #[inline]
    pub fn next(&self, node: usize, dst: usize) -> Option<PortIx> {
        if node == dst {
            return None;
        }
        let ui = self.sw_ix[node];
        if ui == NONE {
            // a host sends on its only link, if that leads towards dst
            let p = self.nic[node];
            if p == NONE {
                return None;
            }
            let w = self.peer[p as usize] as usize;
            return (w == dst || self.next(w, dst).is_some()).then_some(p as usize);
        }
        let (s, c, last) = self.attach(dst)?;
        if s == ui as usize {
            return Some(last as usize);
        }
        let e = self.entry(ui as usize, c);
        (e < SELF).then(|| self.pool[e as usize + 1] as usize)
    }

    pub fn path(&self, sc: &Scenario, src: usize, dst: usize) -> Option<Vec<PortIx>> {
        let mut path = Vec::new();
        let mut at = src;
        while at != dst {
            let p = self.next(at, dst)?;
            path.push(p);
            at = sc.port_ends(p).1;
            if path.len() > sc.nodes.len() {
                return None;
            }
        }
        Some(path)
    }

    /// The equal-cost egress ports of switch `node` towards host `dst`, in port order, written
    /// into `out` (cleared first). Empty for a host or when `dst` is unreachable.
    #[inline]
    pub fn candidates(&self, node: usize, dst: usize, out: &mut Vec<u32>) {
        out.clear();
        let ui = self.sw_ix[node];
        if ui == NONE || node == dst {
            return;
        }
        let Some((s, c, last)) = self.attach(dst) else {
            return;
        };
        if ui as usize == s {
            out.push(last);
            return;
        }
        let e = self.entry(ui as usize, c);
        if e < SELF {
            out.extend_from_slice(self.group(e));
        }
    }

    /// Hops from switch `node` to the switch host `dst` hangs off (0 at that switch); `None`
    /// for a host or when unreachable. Walks the shortest-path ports.
    pub fn hops_to(&self, node: usize, dst: usize) -> Option<u16> {
        let ui = self.sw_ix[node];
        let (s, c, _) = self.attach(dst)?;
        if ui == NONE {
            return None;
        }
        let mut at = ui as usize;
        let mut h = 0u32;
        while at != s {
            let e = self.entry(at, c);
            if e >= SELF || h as usize > self.n_sw {
                return None;
            }
            at = self.sw_ix[self.peer[self.pool[e as usize + 1] as usize] as usize] as usize;
            h += 1;
        }
        u16::try_from(h).ok()
    }

    /// The ECMP path of a flow: at the source its NIC port, at each switch the candidate picked
    /// by `hash_pick(switch seed, flow key, candidates)`. `seeds` gives each switch's hash
    /// seed (indexed by node).
    pub fn ecmp_path(
        &self,
        sc: &Scenario,
        src: usize,
        dst: usize,
        key: u64,
        seeds: &dyn Fn(usize) -> u64,
    ) -> Option<Vec<PortIx>> {
        let first = self.next(src, dst)?;
        let mut path = vec![first];
        let mut at = sc.port_ends(first).1;
        let mut cand = Vec::new();
        while at != dst {
            self.candidates(at, dst, &mut cand);
            if cand.is_empty() {
                return None;
            }
            let p = cand[hash_pick(seeds(at), key, cand.len())] as usize;
            path.push(p);
            at = sc.port_ends(p).1;
            if path.len() > sc.nodes.len() {
                return None;
            }
        }
        Some(path)
    }
}

/// Runs gathered switch by switch into the CSR arrays.
struct Runs {
    start: Vec<u32>,
    col: Vec<u32>,
    ent: Vec<u32>,
}

impl Runs {
    fn with_capacity(n_sw: usize, runs: usize) -> Runs {
        let mut start = Vec::with_capacity(n_sw + 1);
        start.push(0);
        Runs {
            start,
            col: Vec::with_capacity(runs),
            ent: Vec::with_capacity(runs),
        }
    }

    fn run(&mut self, c: usize, e: u32) {
        self.col.push(c as u32);
        self.ent.push(e);
    }

    fn end_switch(&mut self) {
        self.start.push(self.col.len() as u32);
    }
}

/// The entry at `off` is `[next, candidates...]` of `key`.
#[inline]
fn entry_is(pool: &[u32], off: u32, key: &[u32]) -> bool {
    let off = off as usize;
    pool[off] as usize + 1 == key.len() && pool[off + 1..off + 1 + key.len()] == *key
}

/// The offset of entry `key` (`[next, candidates...]`) in the pool, appended when new.
fn intern(pool: &mut Vec<u32>, index: &mut HashMap<u64, u32>, key: &[u32]) -> u32 {
    let mut h = key
        .iter()
        .fold(0x51_7cc1_b727_220a_u64, |h, &x| mix64(h ^ x as u64));
    loop {
        match index.get(&h) {
            Some(&off) if entry_is(pool, off, key) => return off,
            // another entry with this hash: the next slot
            Some(_) => h = h.wrapping_add(1),
            None => {
                let off = push_entry(pool, key[0], key[1..].iter().copied());
                index.insert(h, off);
                return off;
            }
        }
    }
}

/// What [`Routes::compute`] will hold for `nodes` and `links`, known before it runs.
#[derive(Debug, Clone)]
pub struct Estimate {
    /// Bytes: exact for a generated fabric; for any other graph the per-node, per-port and
    /// search arrays, the part known before the search (the runs are checked while it goes).
    pub bytes: u128,
    pub n_sw: usize,
    /// Switches with hosts (the destinations the search starts from).
    pub n_dst: usize,
    pub fabric: Option<Fabric>,
}

pub fn estimate(nodes: &[NodeSpec], links: &[LinkSpec]) -> Estimate {
    let fr = Frame::new(nodes, links, &[]);
    let fabric = Fabric::detect(nodes, links);
    let bytes = match fabric {
        Some(f) => f.route_bytes(),
        None => {
            let m = fr.peer.len() as u128;
            fixed_bytes(nodes.len(), fr.n_sw, links.len())
                + (2 * fr.n_sw as u128 + 2 + 2 * m) * 4
                + fr.n_sw as u128 * (3 * 4 + 24 + 3 * 8)
        }
    };
    Estimate {
        bytes,
        n_sw: fr.n_sw,
        n_dst: fr.n_dst,
        fabric,
    }
}

/// `metrics.memory_budget` as written in the document (before `[metrics]` is read; a value
/// that does not parse is reported by `[metrics]`'s reader and counts as the default here),
/// clamped to the memory this machine has available: the limit the routes are built within,
/// and the budget as written.
pub fn document_limit(root: &toml::Table) -> (u64, u64) {
    let budget = root
        .get("metrics")
        .and_then(|m| m.get("memory_budget"))
        .and_then(|b| b.as_str())
        .and_then(|b| crate::units::parse_bytes(b).ok())
        .unwrap_or(super::budget::DEFAULT_MEMORY_BUDGET);
    let limit = super::budget::machine_memory().map_or(budget, |(m, _)| budget.min(m));
    (limit, budget)
}

/// The routing tables of `nodes` and `links`, refused with a [`super::ScenarioError`] on
/// `metrics.memory_budget` when they exceed `limit` (the budget `budget`, clamped to the
/// machine): before allocating for a generated fabric (its size is known from its shape) and
/// for the per-node and per-port arrays, while the search goes for any other graph.
pub fn build(
    nodes: &[NodeSpec],
    links: &[LinkSpec],
    limit: u64,
    budget: u64,
) -> Result<Routes, super::ScenarioError> {
    let est = estimate(nodes, links);
    let refuse = |bytes: u128, how: String| {
        let show = super::budget::fmt_bytes;
        let clamp = if limit < budget {
            format!(
                " (clamped to the {} this machine has available)",
                show(limit as u128)
            )
        } else {
            match super::budget::machine_memory() {
                Some((m, from)) => {
                    format!(" (this machine has {} available, {from})", show(m as u128))
                }
                None => String::new(),
            }
        };
        super::ScenarioError::new(
            "metrics.memory_budget",
            format!("\"{}\"", show(budget as u128)),
            format!(
                "a budget{clamp} that holds this network's routing tables, about {} ({how}, \
                 docs/models/topology.md \"Route tables: memory\"), before anything else the \
                 run needs: raise metrics.memory_budget or build a smaller network",
                show(bytes)
            ),
        )
    };
    if est.bytes > limit as u128 {
        let how = match est.fabric {
            Some(f) => format!("{} from its structure", describe(f)),
            None => format!(
                "{} switches, {} with hosts, {} links: the per-node and per-port arrays alone",
                est.n_sw,
                est.n_dst,
                links.len()
            ),
        };
        return Err(refuse(est.bytes, how));
    }
    Routes::compute_within(nodes, links, &[], limit as u128).map_err(|o| {
        refuse(
            o.estimate,
            format!(
                "{} switches, {} with hosts, searched from {} of them when the tables passed \
                 the limit; the estimate extrapolates",
                o.n_sw, o.n_dst, o.columns_done
            ),
        )
    })
}

/// "a k = 64 fat-tree" / "a leaf-spine of 100000 leaves and 2 spines".
pub fn describe(f: Fabric) -> String {
    match f {
        Fabric::FatTree { k } => format!("a k = {k} fat-tree"),
        Fabric::LeafSpine { leaves, spines, .. } => {
            format!("a leaf-spine of {leaves} leaves and {spines} spines")
        }
    }
}

/// SplitMix64's finaliser: a well-mixed 64-bit hash of one word.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Pick one of `n` candidates for a flow `key` at a switch with hash seed `seed`
/// (hash-threshold: the hash's range split into `n` equal parts).
#[inline]
pub fn hash_pick(seed: u64, key: u64, n: usize) -> usize {
    let h = mix64(seed ^ mix64(key));
    ((h as u128 * n as u128) >> 64) as usize
}

/// A flow's identity for hashing: source, destination and the flow's index (standing in for
/// the transport ports of a 5-tuple).
pub fn flow_key(src: usize, dst: usize, flow: usize) -> u64 {
    mix64(((src as u64) << 40) ^ ((dst as u64) << 20) ^ flow as u64)
}
