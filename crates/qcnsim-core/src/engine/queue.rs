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
    /// The root has been taken by [`EventQueue::take_min`] and not yet removed: the next push
    /// replaces it (one sift-down instead of a pop plus a push), or [`EventQueue::settle`]
    /// removes it.
    hole: bool,
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
            hole: false,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len() - self.hole as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of events ever pushed.
    pub fn pushed(&self) -> u64 {
        self.seq
    }

    #[inline]
    pub fn push(&mut self, t: SimTime, ev: E) {
        let key = ((t as u128) << 64) | self.seq as u128;
        self.seq += 1;
        if self.hole {
            // The new event takes the root's place: it sinks only as far as its rank.
            self.hole = false;
            self.sift_down(Entry { key, ev });
            return;
        }
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
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.settle();
        self.heap.first().map(|e| (e.key >> 64) as SimTime)
    }

    /// Put `e` at the root and sift it down (the heap keeps its length).
    #[inline]
    fn sift_down(&mut self, e: Entry<E>) {
        let n = self.heap.len();
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
            if best_key >= e.key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = e;
    }

    /// Remove the root taken by [`EventQueue::take_min`], if no push has replaced it.
    #[inline]
    pub fn settle(&mut self) {
        if self.hole {
            self.hole = false;
            let last = self.heap.pop().unwrap();
            if !self.heap.is_empty() {
                self.sift_down(last);
            }
        }
    }

    /// The earliest event. It is removed lazily: the next push takes its place in the heap
    /// (the common case of an event scheduling a successor), or [`EventQueue::settle`] (also
    /// called by every other method that needs it) removes it. Pop order is the same as with
    /// [`EventQueue::pop`].
    #[inline]
    pub fn take_min(&mut self) -> Option<(SimTime, E)> {
        self.settle();
        let top = *self.heap.first()?;
        self.hole = true;
        Some(((top.key >> 64) as SimTime, top.ev))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let r = self.take_min();
        self.settle();
        r
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

        /// `take_min` + pushes (which fill the hole) + `settle` behave like `pop` + pushes.
        #[test]
        fn take_min_then_push_matches_a_sorted_model(
            steps in proptest::collection::vec((0u64..40, 0usize..3), 1..300)
        ) {
            let mut q = EventQueue::new();
            let mut model: Vec<(u64, u64)> = Vec::new();
            let mut seq = 0u64;
            let mut now = 0u64;
            for &(dt, pushes) in &steps {
                for _ in 0..pushes.max(usize::from(model.is_empty())) {
                    q.push(now + dt, seq);
                    model.push((now + dt, seq));
                    seq += 1;
                }
                model.sort();
                let want = model.remove(0);
                let got = q.take_min();
                prop_assert_eq!(got, Some(want));
                now = want.0;
                prop_assert_eq!(q.len(), model.len());
            }
            q.settle();
            model.sort();
            let mut rest = Vec::new();
            while let Some(x) = q.pop() {
                rest.push(x);
            }
            prop_assert_eq!(rest, model);
        }
    }
}
