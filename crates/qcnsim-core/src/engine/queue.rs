//! The event queue: a 4-ary min-heap keyed by `(time, seq)`.
//!
//! `seq` is a counter incremented at every push, so two events at the same picosecond pop in
//! the order they were scheduled (FIFO tie-break). A run is therefore a pure function of the
//! scenario and the seed. The key is packed into one `u128` (time in the high 64 bits) so a
//! comparison is a single integer compare. Events are `Copy` values of a small enum; nothing is
//! boxed and, once the heap has grown to its working size, nothing is allocated.
//!
//! Cancellation is lazy: a model that re-arms a timer bumps a generation counter and the stale
//! event is dropped when it pops (see `sim`). Searching the heap is never needed.

use crate::units::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    ev: E,
}

pub struct EventQueue<E: Copy> {
    heap: Vec<Entry<E>>,
    seq: u64,
}

const ARITY: usize = 4;

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
            seq: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Number of events ever pushed.
    pub fn pushed(&self) -> u64 {
        self.seq
    }

    #[inline]
    pub fn push(&mut self, t: SimTime, ev: E) {
        let key = ((t as u128) << 64) | self.seq as u128;
        self.seq += 1;
        let mut i = self.heap.len();
        self.heap.push(Entry { key, ev });
        // sift up
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = Entry { key, ev };
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| (e.key >> 64) as SimTime)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let n = self.heap.len();
        if n == 0 {
            return None;
        }
        let top = self.heap[0];
        let last = self.heap.pop().unwrap();
        let n = n - 1;
        if n > 0 {
            // sift `last` down from the root
            let mut i = 0;
            loop {
                let first = i * ARITY + 1;
                if first >= n {
                    break;
                }
                let end = (first + ARITY).min(n);
                let mut best = first;
                let mut best_key = self.heap[first].key;
                for c in first + 1..end {
                    let k = self.heap[c].key;
                    if k < best_key {
                        best = c;
                        best_key = k;
                    }
                }
                if best_key >= last.key {
                    break;
                }
                self.heap[i] = self.heap[best];
                i = best;
            }
            self.heap[i] = last;
        }
        Some(((top.key >> 64) as SimTime, top.ev))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.push(5, i);
        }
        q.push(1, 1000);
        assert_eq!(q.pop(), Some((1, 1000)));
        for i in 0..100u32 {
            assert_eq!(q.pop(), Some((5, i)));
        }
        assert!(q.pop().is_none());
    }

    proptest! {
        #[test]
        fn pops_sorted_by_time_then_seq(times in proptest::collection::vec(0u64..50, 0..300)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() {
                q.push(*t, i);
            }
            let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
            expected.sort();
            let mut got = Vec::new();
            while let Some(x) = q.pop() {
                got.push(x);
            }
            prop_assert_eq!(got, expected);
        }
    }
}
