//! Routing tables (docs/models/topology.md, "Routing").
//!
//! Memory scales with what is routed, not with hosts squared: a host has one link, so every
//! path towards a host crosses the switch it is attached to. The tables hold, per switch and
//! per destination switch (a switch some host hangs off), the shortest-path next port and the
//! hop distance (switches × destination switches, column by column: one breadth-first search
//! fills one contiguous column), and per host its attachment (node and port); the next port
//! from any node towards any host is computed from them on demand. 100,000 hosts on a few
//! hundred switches take a few megabytes; a k = 64 fat-tree (5,120 switches, 2,048 edge
//! switches) 63 MB.
//!
//! Shortest path: fewest hops, ties to the port found first by a breadth-first search from the
//! destination over the ports in link order (the behaviour of the former hosts × nodes table,
//! kept exactly). Equal-cost multipath (ECMP): every port of a switch whose peer is one hop
//! closer to the destination is a candidate, in port order; [`Routes::ecmp_path`] picks one per
//! switch by a hash of the flow's identity and the switch's seed (as switches hash the 5-tuple
//! with a per-switch seed, RFC 2992 "hash-threshold"), so a flow keeps one path.

use super::{LinkSpec, NodeKind, NodeSpec, PortIx, Scenario};

const NONE: u32 = u32::MAX;
const FAR: u16 = u16::MAX;

#[derive(Clone)]
pub struct Routes {
    /// Node -> switch index (NONE for hosts).
    sw_ix: Vec<u32>,
    /// Switch index -> node.
    sw_node: Vec<u32>,
    /// Switch index -> its column in `next` / `dist` when a host hangs off it (a destination
    /// switch), else NONE: only paths towards hosts are routed, and they all end at one.
    col: Vec<u32>,
    /// next[c * n_sw + u]: the shortest-path port from switch u towards destination switch
    /// column c (NONE when u is that switch or cannot reach it). Column-major: the breadth-first
    /// search of one destination writes one contiguous column.
    next: Vec<u32>,
    /// dist[c * n_sw + u]: hops from switch u to destination switch column c through switches
    /// (FAR: unreachable).
    dist: Vec<u16>,
    /// Per node: its first port (a host's NIC port), NONE without links.
    nic: Vec<u32>,
    /// Per node: the ports it transmits on, in port order (CSR: out_start[node]..out_start[node+1]).
    out_start: Vec<u32>,
    out_ports: Vec<u32>,
    /// Port -> receiving node.
    peer: Vec<u32>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Routes({} switches)", self.sw_node.len())
    }
}

impl Routes {
    pub fn compute(nodes: &[NodeSpec], links: &[LinkSpec]) -> Routes {
        Routes::compute_without(nodes, links, &[])
    }

    /// The tables with the links marked in `down` (indexed by link; shorter = the rest up)
    /// left out: nothing is routed over them, and a host whose link is down is unreachable.
    /// Port indices stay those of the full topology.
    pub fn compute_without(nodes: &[NodeSpec], links: &[LinkSpec], down: &[bool]) -> Routes {
        let n = nodes.len();
        let np = links.len() * 2;
        let is_down = |p: usize| down.get(p / 2).copied().unwrap_or(false);
        let ends = |p: usize| {
            let l = &links[p / 2];
            if p % 2 == 0 {
                (l.a, l.b)
            } else {
                (l.b, l.a)
            }
        };
        let mut sw_ix = vec![NONE; n];
        let mut sw_node = Vec::new();
        for (i, nd) in nodes.iter().enumerate() {
            if nd.kind == NodeKind::Switch {
                sw_ix[i] = sw_node.len() as u32;
                sw_node.push(i as u32);
            }
        }
        let n_sw = sw_node.len();
        let mut peer = vec![0u32; np];
        let mut nic = vec![NONE; n];
        let mut out_count = vec![0u32; n + 1];
        let mut in_count = vec![0u32; n + 1];
        for (p, pe) in peer.iter_mut().enumerate() {
            let (from, to) = ends(p);
            *pe = to as u32;
            if is_down(p) {
                continue;
            }
            if nic[from] == NONE {
                nic[from] = p as u32;
            }
            out_count[from + 1] += 1;
            in_count[to + 1] += 1;
        }
        let csr = |count: &mut Vec<u32>, key: &dyn Fn(usize) -> usize| {
            for i in 0..n {
                count[i + 1] += count[i];
            }
            let mut fill = count.clone();
            let mut list = vec![0u32; count[n] as usize];
            for p in (0..np).filter(|&p| !is_down(p)) {
                let k = key(p);
                list[fill[k] as usize] = p as u32;
                fill[k] += 1;
            }
            list
        };
        let out_ports = csr(&mut out_count, &|p| ends(p).0);
        let in_ports = csr(&mut in_count, &|p| ends(p).1);
        // the search only follows ports between switches (hosts never forward, and only
        // switches are ever reached): per switch (by switch index), the ports arriving from
        // switches in port order, each with its transmitter's switch index
        let mut sw_in_start = vec![0u32; n_sw + 1];
        let mut sw_in_port = Vec::new();
        let mut sw_in_from = Vec::new();
        for (v, &node) in sw_node.iter().enumerate() {
            let node = node as usize;
            for &p in &in_ports[in_count[node] as usize..in_count[node + 1] as usize] {
                let from = sw_ix[ends(p as usize).0];
                if from != NONE {
                    sw_in_port.push(p);
                    sw_in_from.push(from);
                }
            }
            sw_in_start[v + 1] = sw_in_port.len() as u32;
        }
        drop(in_ports);
        let (col, n_dst) = dest_columns(nodes, &sw_ix, &nic, &peer);
        let mut next = vec![NONE; n_dst * n_sw];
        let mut dist = vec![FAR; n_dst * n_sw];
        let mut frontier: Vec<u32> = Vec::new();
        let mut following: Vec<u32> = Vec::new();
        for s in 0..n_sw {
            if col[s] == NONE {
                continue;
            }
            // breadth-first from switch s over the ports arriving at each switch, in port
            // order; only switches forward
            let base = col[s] as usize * n_sw;
            let (dist, next) = (&mut dist[base..base + n_sw], &mut next[base..base + n_sw]);
            dist[s] = 0;
            frontier.clear();
            frontier.push(s as u32);
            let mut d = 0u16;
            while !frontier.is_empty() {
                d = d.saturating_add(1);
                following.clear();
                for &v in &frontier {
                    let (lo, hi) = (
                        sw_in_start[v as usize] as usize,
                        sw_in_start[v as usize + 1] as usize,
                    );
                    for (&p, &ui) in sw_in_port[lo..hi].iter().zip(&sw_in_from[lo..hi]) {
                        if dist[ui as usize] == FAR {
                            dist[ui as usize] = d;
                            next[ui as usize] = p;
                            following.push(ui);
                        }
                    }
                }
                std::mem::swap(&mut frontier, &mut following);
            }
        }
        Routes {
            sw_ix,
            sw_node,
            col,
            next,
            dist,
            nic,
            out_start: out_count,
            out_ports,
            peer,
        }
    }

    /// Bytes held by the tables (for the memory test and docs/performance.md).
    pub fn bytes(&self) -> usize {
        self.next.len() * 4
            + self.dist.len() * 2
            + (self.sw_ix.len() + self.sw_node.len() + self.col.len() + self.nic.len()) * 4
            + (self.out_start.len() + self.out_ports.len() + self.peer.len()) * 4
    }

    /// The switch a host hangs off (its switch index), the offset of that switch's column in
    /// `next` / `dist`, and the port from it to the host, if the host's link goes to a switch.
    #[inline]
    fn attach(&self, host: usize) -> Option<(usize, usize, u32)> {
        let p = self.nic[host];
        if p == NONE {
            return None;
        }
        let s = self.sw_ix[self.peer[p as usize] as usize];
        if s == NONE {
            return None;
        }
        let c = self.col[s as usize] as usize * self.sw_node.len();
        Some((s as usize, c, p ^ 1))
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
        let p = self.next[c + ui as usize];
        (p != NONE).then_some(p as usize)
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
    pub fn candidates(&self, node: usize, dst: usize, out: &mut Vec<u32>) {
        out.clear();
        let ui = self.sw_ix[node];
        if ui == NONE || node == dst {
            return;
        }
        let Some((s, c, last)) = self.attach(dst) else {
            return;
        };
        let ui = ui as usize;
        if ui == s {
            out.push(last);
            return;
        }
        let d = self.dist[c + ui];
        if d == FAR {
            return;
        }
        let ports =
            &self.out_ports[self.out_start[node] as usize..self.out_start[node + 1] as usize];
        for &p in ports {
            let v = self.peer[p as usize] as usize;
            let vi = self.sw_ix[v];
            if vi != NONE && self.dist[c + vi as usize] + 1 == d {
                out.push(p);
            }
        }
    }

    /// Hops from switch `node` to the switch host `dst` hangs off (0 at that switch); `None`
    /// for a host or when unreachable.
    pub fn hops_to(&self, node: usize, dst: usize) -> Option<u16> {
        let ui = self.sw_ix[node];
        let (_, c, _) = self.attach(dst)?;
        if ui == NONE {
            return None;
        }
        let d = self.dist[c + ui as usize];
        (d != FAR).then_some(d)
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

/// The bytes [`Routes::compute`] allocates for `nodes` and `links`, counted before allocating:
/// the switches, the destination switches (those a host's first link leads to) and the
/// tables' `switches × destination switches × 6 B` plus the per-node and per-port arrays.
/// Returns (bytes, switches, destination switches).
pub fn estimate(nodes: &[NodeSpec], links: &[LinkSpec]) -> (u128, usize, usize) {
    let n = nodes.len();
    let is_sw = |i: usize| nodes[i].kind == NodeKind::Switch;
    let n_sw = (0..n).filter(|&i| is_sw(i)).count();
    // a host's first port is on the first link that names it (ports 2l: a -> b, 2l+1: b -> a)
    let mut first = vec![NONE; n];
    for k in links {
        for (from, to) in [(k.a, k.b), (k.b, k.a)] {
            if first[from] == NONE {
                first[from] = to as u32;
            }
        }
    }
    let mut is_dst = vec![false; n];
    for h in (0..n).filter(|&h| !is_sw(h)) {
        if first[h] != NONE && is_sw(first[h] as usize) {
            is_dst[first[h] as usize] = true;
        }
    }
    let n_dst = is_dst.iter().filter(|&&d| d).count();
    let np = links.len() as u128 * 2;
    let bytes = n_dst as u128 * n_sw as u128 * 6
        + (2 * n as u128 + 2 * n_sw as u128) * 4
        + (n as u128 + 1 + 2 * np) * 4;
    (bytes, n_sw, n_dst)
}

/// `metrics.memory_budget` as written in the document (before `[metrics]` is read; a value
/// that does not parse is reported by `[metrics]`'s reader and counts as the default here).
pub fn document_budget(root: &toml::Table) -> u64 {
    root.get("metrics")
        .and_then(|m| m.get("memory_budget"))
        .and_then(|b| b.as_str())
        .and_then(|b| crate::units::parse_bytes(b).ok())
        .unwrap_or(super::budget::DEFAULT_MEMORY_BUDGET)
}

/// Refuse, before allocating them, routing tables larger than `budget` (`metrics.memory_budget`).
pub fn check_budget(
    nodes: &[NodeSpec],
    links: &[LinkSpec],
    budget: u64,
) -> Result<(), super::ScenarioError> {
    let (bytes, n_sw, n_dst) = estimate(nodes, links);
    if bytes <= budget as u128 {
        return Ok(());
    }
    let show = super::budget::fmt_bytes;
    Err(super::ScenarioError::new(
        "metrics.memory_budget",
        format!("\"{}\"", show(budget as u128)),
        format!(
            "a budget that holds this network's routing tables, about {} ({n_sw} switches × \
             {n_dst} switches with hosts × 6 B, docs/models/topology.md \"Route tables: memory\"), before \
             anything else the run needs: raise metrics.memory_budget or build a smaller network",
            show(bytes)
        ),
    ))
}

/// Per switch index, its column among the destination switches (those a host's first link
/// leads to, as [`Routes::attach`] finds them), in switch order, else NONE; and their number.
fn dest_columns(nodes: &[NodeSpec], sw_ix: &[u32], nic: &[u32], peer: &[u32]) -> (Vec<u32>, usize) {
    let n_sw = sw_ix.iter().filter(|&&s| s != NONE).count();
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
    let mut n = 0u32;
    for (c, d) in col.iter_mut().zip(&is_dst) {
        if *d {
            *c = n;
            n += 1;
        }
    }
    (col, n as usize)
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
