//! PFC deadlock detection and the pause-storm watchdog: the sans-IO pieces. See
//! docs/models/pause.md ("Deadlock and the watchdog").
//!
//! A lossless network deadlocks when a cycle of switch egress ports are all paused by the next
//! switch of the cycle while holding frames for it: none can send, so none of the next switch's
//! buffers drains (a cyclic buffer dependency; Hu et al., "Deadlocks in datacenter networks:
//! why do they form, and how to avoid them", HotNets 2016). Here:
//!
//! ```text
//! stalled(p)   = p is paused in a class that has frames waiting, and p has started no data
//!                frame for at least `detect` (since max(last data frame, start of the pause))
//! wait-for     p -> q when q is an egress port of the switch p transmits into
//! deadlock     a cycle of stalled ports in the wait-for graph (reported once per episode)
//! watchdog     a class paused continuously for `watchdog` with frames waiting: ignore PAUSE/PFC
//!              for that class during `restore` (the "forward" action of switch vendors'
//!              PFC watchdogs)
//! ```

use crate::units::SimTime;

/// Whether port state `(waiting, since, now)` is stalled for `detect`: frames wait in a paused
/// class and nothing moved since `since`.
#[inline]
pub fn stalled(waiting: bool, since: SimTime, now: SimTime, detect: SimTime) -> bool {
    waiting && now.saturating_sub(since) >= detect
}

/// A cycle among the `stalled` nodes of a graph given by its successor lists (`succ[k]`), as the
/// nodes in cycle order starting from the smallest index on it; `None` if there is none.
pub fn find_cycle(stalled: &[bool], succ: &[Vec<u32>]) -> Option<Vec<usize>> {
    const WHITE: u8 = 0;
    const GREY: u8 = 1;
    const BLACK: u8 = 2;
    let n = stalled.len();
    let mut colour = vec![WHITE; n];
    let mut parent = vec![usize::MAX; n];
    for root in 0..n {
        if !stalled[root] || colour[root] != WHITE {
            continue;
        }
        // iterative DFS: (node, next successor index)
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        colour[root] = GREY;
        while let Some(&mut (u, ref mut k)) = stack.last_mut() {
            if *k < succ[u].len() {
                let v = succ[u][*k] as usize;
                *k += 1;
                if !stalled[v] {
                    continue;
                }
                if colour[v] == GREY {
                    // back edge u -> v: the cycle is v .. u
                    let mut cyc = vec![u];
                    let mut w = u;
                    while w != v {
                        w = parent[w];
                        cyc.push(w);
                    }
                    cyc.reverse();
                    let m = (0..cyc.len()).min_by_key(|&i| cyc[i]).expect("non-empty");
                    cyc.rotate_left(m);
                    return Some(cyc);
                }
                if colour[v] == WHITE {
                    colour[v] = GREY;
                    parent[v] = u;
                    stack.push((v, 0));
                }
            } else {
                colour[u] = BLACK;
                stack.pop();
            }
        }
    }
    None
}

/// The watchdog's decision for one paused class: frames waiting, paused since `since`.
#[inline]
pub fn watchdog_fires(
    waiting: bool,
    paused: bool,
    since: SimTime,
    now: SimTime,
    after: SimTime,
) -> bool {
    paused && waiting && now.saturating_sub(since) >= after
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalled_needs_frames_and_time() {
        // (waiting, since, now, detect, stalled)
        #[rustfmt::skip]
        let cases: &[(bool, SimTime, SimTime, SimTime, bool)] = &[
            (true, 0, 100, 100, true),
            (true, 1, 100, 100, false),
            (false, 0, 1000, 100, false),
            (true, 500, 400, 100, false),   // since after now (a frame just started): not stalled
        ];
        for (k, (w, s, n, d, want)) in cases.iter().enumerate() {
            assert_eq!(stalled(*w, *s, *n, *d), *want, "case {k}");
        }
    }

    #[test]
    #[allow(clippy::type_complexity)]
    fn cycles_among_stalled_nodes() {
        let ring =
            |n: usize| -> Vec<Vec<u32>> { (0..n).map(|k| vec![((k + 1) % n) as u32]).collect() };
        // (name, stalled, successors, cycle)
        #[rustfmt::skip]
        let cases: Vec<(&str, Vec<bool>, Vec<Vec<u32>>, Option<Vec<usize>>)> = vec![
            ("ring of four, all stalled", vec![true; 4], ring(4), Some(vec![0, 1, 2, 3])),
            ("one not stalled breaks it", vec![true, true, false, true], ring(4), None),
            ("no edges", vec![true; 3], vec![vec![], vec![], vec![]], None),
            ("self loop", vec![true], vec![vec![0]], Some(vec![0])),
            ("a chain into a cycle", vec![true; 5],
                vec![vec![1], vec![2], vec![3], vec![4], vec![2]], Some(vec![2, 3, 4])),
            ("two branches, the cycle is on one", vec![true; 4],
                vec![vec![1, 2], vec![], vec![3], vec![2]], Some(vec![2, 3])),
            ("a cycle through a non-stalled node is none", vec![true, false, true],
                vec![vec![1], vec![2], vec![0]], None),
            ("cycle starting from its smallest node", vec![false, true, true, true],
                vec![vec![], vec![3], vec![1], vec![2]], Some(vec![1, 3, 2])),
        ];
        for (name, st, succ, want) in &cases {
            assert_eq!(find_cycle(st, succ), *want, "{name}");
        }
    }

    #[test]
    fn watchdog_after_a_continuous_pause_with_frames_waiting() {
        // (waiting, paused, since, now, after, fires)
        #[rustfmt::skip]
        let cases: &[(bool, bool, SimTime, SimTime, SimTime, bool)] = &[
            (true, true, 0, 200, 200, true),
            (true, true, 0, 199, 200, false),
            (false, true, 0, 1000, 200, false),   // paused but nothing to send: no storm
            (true, false, 0, 1000, 200, false),
        ];
        for (k, (w, p, s, n, a, want)) in cases.iter().enumerate() {
            assert_eq!(watchdog_fires(*w, *p, *s, *n, *a), *want, "case {k}");
        }
    }
}
