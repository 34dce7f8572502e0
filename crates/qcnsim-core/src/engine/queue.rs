//! The event queue, ordered by `(time, seq)`.
//!
//! `seq` is a counter incremented at every push, so two events at the same picosecond pop in
//! the order they were scheduled (FIFO tie-break). A run is therefore a pure function of the
//! scenario and the seed. The key is packed into one `u128` (time in the high 64 bits) so a
//! comparison is a single integer compare. Events are `Copy` values of a small enum; nothing is
//! boxed and, once the structures have grown to their working size, nothing is allocated.
//!
//! Two structures hold the events, and every pop takes the smaller of their two minima, so the
//! pop order is exactly `(time, seq)` whichever structure an event sits in:
//!
//! - a **calendar** for the events of the near future: a ring of `nb` buckets of `2^shift` ps
//!   (512 of 131 ns by default; [`EventQueue::with_buckets`] sizes the ring for a fabric),
//!   each a linked list sorted by key, with a bitmap of the non-empty buckets. In a packet
//!   simulation nearly every event is scheduled a few microseconds ahead (a transmission end,
//!   an arrival one link later, the next departure of a paced flow), so a push is a shift and,
//!   nearly always, an append to a short list, and a pop is a `trailing_zeros` over the bitmap
//!   and an unlink: few data-dependent branches, where a heap's sift comparisons mispredict
//!   about half of the time when many flows run at different rates. The list nodes live in a
//!   fixed slab of `CAP` nodes with a free list, reused last-in first-out, so the working set
//!   stays small and hot; fixed-size arrays indexed through masks need no bounds checks;
//! - a **wheel** for the events of the middle future, from the calendar's window to 256
//!   calendar windows ahead (17 ms by default: the next generation event of each of a thousand
//!   slow sources, samplers, timers): a ring of `NW` buckets of half the calendar's window
//!   (33.6 µs by default), each an unsorted vector. A wheel bucket is never popped from: when
//!   the time reaches one wheel bucket before it, its events move into the calendar, where they
//!   now fit, each placed by its whole key (the calendar may already hold events of the same
//!   picosecond scheduled after it);
//! - a 4-ary **heap** for everything else: events beyond the wheel, near events while all
//!   `CAP` nodes are in use, and events earlier than the calendar's base.
//!
//! The wheel costs the pop nothing: the earliest non-empty wheel bucket contributes a
//! *trigger* key to `far_min`, the minimum the pop already compares the calendar's head
//! against: the start of the wheel bucket before it, earlier than all of that bucket's events.
//! When the trigger is the smallest key of all, the pop's slow path moves the bucket into the
//! calendar and pops again. A push goes to the wheel only when it is beyond the calendar's
//! window (already the slow path).
//!
//! The initial bucket width and window were chosen by measurement on the reference benchmarks
//! (docs/performance.md). A dense schedule (a large fabric: hundreds of events per simulated
//! microsecond) puts dozens of events in one bucket, and pushes out of time order then walk long
//! lists; [`EventQueue::adapt`], called by the simulator every 65,536 events, halves the width
//! (rebuilding the calendar and the wheel) when the sorted inserts walk more than two nodes per
//! push, and doubles it back when pushes fall beyond the window while the lists are short. A
//! fabric of thousands of hosts needs buckets of a few hundred picoseconds and a window of a few
//! microseconds at once: the simulator sizes the ring from the number of ports (one bucket per
//! four ports, 512 to `NB_MAX`). Any width and size give the same pop order.
//!
//! The simulator keeps one transmission-done event outside the queue (sim/core/datapath.rs, the
//! transmission-done slot) with a sequence number taken by [`EventQueue::reserve_seq`] when it is
//! scheduled, compares it with each popped event ([`EventQueue::last_seq`]) and, when needed,
//! puts it into the queue with its number ([`EventQueue::push_keyed`]): the order stays that of
//! one sorted queue.
//!
//! Cancellation is lazy: a model that re-arms a timer bumps a generation counter and the stale
//! event is dropped when it pops (see `sim`). Searching the queue is never needed.

use crate::units::SimTime;

/// Initial (and widest) bucket width: `2^SHIFT` ps (131 ns). [`EventQueue::adapt`] narrows it
/// (down to `2^MIN_SHIFT` ps) when buckets hold many events, and widens it back.
const SHIFT: u32 = 17;
const MIN_SHIFT: u32 = 11;
/// Number of buckets in the ring by default (a power of two): the window is `NB << SHIFT` ps
/// (67 µs). [`EventQueue::with_buckets`] sizes it for a denser schedule, up to `NB_MAX`.
const NB: usize = 512;
const NB_MAX: usize = 1 << 14;
/// Wheel bucket width: `2^WSHIFT` ps (33.6 µs) at the initial calendar width and ring; always
/// half the calendar's window (`nb / 2` calendar buckets), so a wheel bucket moved into the
/// calendar one wheel bucket before its start fits in it.
const WSHIFT: u32 = SHIFT + 8;
const _: () = assert!((NB as u64) << SHIFT == 2u64 << WSHIFT);
/// Number of wheel buckets (a power of two): the wheel reaches `NW << WSHIFT` ps (17 ms).
const NW: usize = 512;
const WWORDS: usize = NW / 64;
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    ev: E,
}

#[inline]
fn key_time(key: u128) -> SimTime {
    (key >> 64) as SimTime
}

/// A calendar list node (its link is in [`EventQueue::links`]). Nodes that were never used
/// hold `E::default()`, so the slab can be allocated without an event value at hand (and a pop
/// needs no check for an empty `Option`).
#[derive(Clone, Copy)]
struct Node<E> {
    time: SimTime,
    seq: u64,
    ev: E,
}

impl<E> Node<E> {
    #[inline]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

/// A calendar bucket's last node (`EventQueue::tails`).
#[derive(Clone, Copy, Default)]
struct Tail {
    time: SimTime,
    link: u32,
}

/// Calendar nodes (a power of two). When all are in use, further near events go to the heap.
/// (A large fabric has tens of thousands of events pending; the free list is reused last in,
/// first out, so a small run touches only the first nodes.)
const CAP: usize = 1 << 15;
/// Link slots: bucket heads at `0..nb`, the `next` field of node `n` at `CAP + n`.
const LINKS: usize = 2 * CAP;
const _: () = assert!(NB_MAX <= CAP);

#[inline]
fn next_of(n: usize) -> usize {
    CAP + (n & (CAP - 1))
}

pub struct EventQueue<E: Copy + Default> {
    /// The list links: `links[i]` (`i < nb`) is the first node of bucket `i`,
    /// `links[next_of(n)]` the node after node `n` (or the next free node), `NIL` at the end.
    /// Putting the heads and the `next` fields in one array makes an append the same store
    /// whether the bucket is empty or not. Lists are sorted by key. Fixed-size arrays indexed
    /// through masks need no bounds checks.
    links: Box<[u32; LINKS]>,
    /// Per bucket `i`: the time of its last node and the link slot to write when appending to
    /// it (0 and `i` itself when it is empty); an event not earlier than that time appends.
    tails: Box<[Tail; NB_MAX]>,
    /// Bit `i` set: bucket `i` is not empty.
    bits: [u64; NB_MAX / 64],
    nodes: Box<[Node<E>; CAP]>,
    /// Buckets in the ring (a power of two, `NB` to `NB_MAX`; the arrays above are indexed
    /// through `nb - 1` and then `NB_MAX - 1`, so that no index is bounds-checked).
    nb: usize,
    /// Free list of nodes, through `links`. Never empty: a push writes its event straight
    /// into the first free node, and the last free node is never taken.
    free: u32,
    /// Number of events in the calendar.
    near: usize,
    /// Absolute bucket number (`time >> shift`) of the calendar's base. Every calendar event
    /// lies in buckets `cur .. cur + nb`, so ring slot `b % nb` holds absolute bucket `b` only.
    cur: u64,
    far: Heap<E>,
    wheel: Wheel<E>,
    /// The smaller of the heap's smallest key and the wheel's trigger (`u128::MAX` when both
    /// are empty).
    far_min: u128,
    seq: u64,
    /// The sequence number of the event last popped (`last_seq`).
    last_seq: u64,
    /// Bucket width `2^shift` ps (the wheel's is `2^(shift + 8)`).
    shift: u32,
    /// Since the last [`EventQueue::adapt`]: nodes stepped over by sorted inserts, pushes
    /// beyond the calendar's window, and `seq` then.
    walked: u64,
    beyond: u64,
    seq_mark: u64,
}

/// The middle tier (see the module doc).
struct Wheel<E> {
    /// Ring slot `b % NW` holds the events of absolute wheel bucket `b` (`time >> WSHIFT`).
    slots: Vec<Vec<Entry<E>>>,
    /// Bit `i` set: slot `i` is not empty.
    bits: [u64; WWORDS],
    len: usize,
    /// Every wheel event lies in absolute buckets `base .. base + NW`.
    base: u64,
    /// The earliest non-empty bucket (meaningful when `len > 0`).
    first: u64,
    /// Bucket width `2^wshift` ps.
    wshift: u32,
}

impl<E: Copy> Wheel<E> {
    fn new(wshift: u32) -> Self {
        Wheel {
            slots: (0..NW).map(|_| Vec::new()).collect(),
            bits: [0; WWORDS],
            len: 0,
            base: 0,
            first: 0,
            wshift,
        }
    }

    /// The key that moves bucket `first` into the calendar: the start of the bucket before it
    /// (`u128::MAX` when empty).
    #[inline]
    fn trigger(&self) -> u128 {
        if self.len == 0 {
            u128::MAX
        } else {
            ((self.first.saturating_sub(1) << self.wshift) as u128) << 64
        }
    }

    /// Earliest non-empty bucket at or after `base` (the wheel must not be empty).
    fn scan_first(&self) -> u64 {
        let s = self.base as usize & (NW - 1);
        for k in 0..=WWORDS {
            let ww = (s / 64 + k) % WWORDS;
            let mut m = self.bits[ww];
            if k == 0 {
                m &= !0u64 << (s % 64);
            }
            if m != 0 {
                let slot = ww * 64 + m.trailing_zeros() as usize;
                return self.base + ((slot + NW - s) % NW) as u64;
            }
        }
        unreachable!("wheel count and bitmap disagree")
    }
}

impl<E: Copy + Default> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// A boxed array of `N` copies of `x`, built on the heap.
fn boxed_array<T: Copy, const N: usize>(x: T) -> Box<[T; N]> {
    match vec![x; N].into_boxed_slice().try_into() {
        Ok(a) => a,
        Err(_) => unreachable!("length is N"),
    }
}

impl<E: Copy + Default> EventQueue<E> {
    pub fn new() -> Self {
        Self::with_buckets(NB)
    }

    /// A queue whose calendar has `nb` buckets (rounded to a power of two within `NB` ..
    /// `NB_MAX`): more for a denser schedule (a large fabric), so that the window still spans
    /// the next few microseconds when [`EventQueue::adapt`] narrows the buckets. Any size gives
    /// the same pop order.
    pub fn with_buckets(nb: usize) -> Self {
        let nb = nb.clamp(NB, NB_MAX).next_power_of_two();
        let mut links = boxed_array::<u32, LINKS>(NIL);
        for n in 0..CAP - 1 {
            links[next_of(n)] = (n + 1) as u32;
        }
        let mut tails = boxed_array::<Tail, NB_MAX>(Tail::default());
        for (i, t) in tails.iter_mut().enumerate() {
            t.link = i as u32;
        }
        EventQueue {
            links,
            tails,
            bits: [0; NB_MAX / 64],
            nodes: boxed_array(Node {
                time: 0,
                seq: 0,
                ev: E::default(),
            }),
            nb,
            free: 0,
            near: 0,
            cur: 0,
            far: Heap::new(),
            wheel: Wheel::new(SHIFT + nb.trailing_zeros() - 1),
            far_min: u128::MAX,
            seq: 0,
            last_seq: 0,
            shift: SHIFT,
            walked: 0,
            beyond: 0,
            seq_mark: 0,
        }
    }

    #[inline(always)]
    fn bucket_of(&self, t: SimTime) -> u64 {
        t >> self.shift
    }

    /// Ring slot of absolute bucket `b` (below `NB_MAX` by the second mask, which the compiler
    /// sees: no bounds check).
    #[inline(always)]
    fn ring(&self, b: u64) -> usize {
        (b as usize & (self.nb - 1)) & (NB_MAX - 1)
    }

    /// Buckets in the calendar's ring.
    pub fn buckets(&self) -> usize {
        self.nb
    }

    /// The bucket width, ps.
    pub fn bucket_width(&self) -> SimTime {
        1 << self.shift
    }

    /// Fit the bucket width to the event population (call it now and then, e.g. every 65,536
    /// events; `now` is the time of the last pop). Dense schedules (a large fabric: hundreds of
    /// events per microsecond) put many events in one bucket, and a push out of time order walks
    /// the bucket's list: when the sorted inserts since the last call stepped over more than two
    /// nodes per push, the width halves. When more than a quarter of the pushes fell beyond the
    /// window and the lists are short, it doubles back (up to the initial width, tuned on the
    /// reference benchmarks). Either way the pop order stays `(time, seq)`.
    #[cold]
    #[inline(never)]
    pub fn adapt(&mut self, now: SimTime) {
        let pushes = self.seq - self.seq_mark;
        if pushes < 4096 {
            return;
        }
        let walk = self.walked as f64 / pushes as f64;
        let beyond = self.beyond as f64 / pushes as f64;
        self.walked = 0;
        self.beyond = 0;
        self.seq_mark = self.seq;
        if walk > 2.0 && self.shift > MIN_SHIFT {
            self.reshape(now, self.shift - 1);
        } else if beyond > 0.25 && walk < 0.25 && self.shift < SHIFT {
            self.reshape(now, self.shift + 1);
        }
    }

    /// Rebuild the calendar and the wheel with bucket width `2^shift` ps; every event is at or
    /// after `now`. (The heap keeps its events: the pop compares all structures.)
    #[cold]
    #[inline(never)]
    pub fn reshape(&mut self, now: SimTime, shift: u32) {
        let shift = shift.clamp(MIN_SHIFT, SHIFT);
        let mut all: Vec<(SimTime, u64, E)> = Vec::with_capacity(self.near + self.wheel.len);
        for i in 0..self.nb {
            let mut c = self.links[i];
            while c != NIL {
                let n = self.nodes[c as usize & (CAP - 1)];
                all.push((n.time, n.seq, n.ev));
                c = self.links[next_of(c as usize)];
            }
        }
        for slot in self.wheel.slots.iter_mut() {
            for e in slot.drain(..) {
                all.push((key_time(e.key), e.key as u64, e.ev));
            }
        }
        // an empty calendar and wheel
        for i in 0..self.nb {
            self.links[i] = NIL;
            self.tails[i] = Tail {
                time: 0,
                link: i as u32,
            };
        }
        for n in 0..CAP - 1 {
            self.links[next_of(n)] = (n + 1) as u32;
        }
        self.links[next_of(CAP - 1)] = NIL;
        self.free = 0;
        self.bits = [0; NB_MAX / 64];
        self.near = 0;
        self.wheel.bits = [0; WWORDS];
        self.wheel.len = 0;
        self.shift = shift;
        self.wheel.wshift = shift + self.nb.trailing_zeros() - 1;
        self.cur = self.bucket_of(now);
        self.far_min = self.far.min_key();
        for (t, seq, ev) in all {
            self.push_moved(t, seq, ev);
        }
        self.far_min = self.far.min_key().min(self.wheel.trigger());
        self.walked = 0;
        self.beyond = 0;
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.near + self.far.len() + self.wheel.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of events ever pushed.
    pub fn pushed(&self) -> u64 {
        self.seq
    }

    #[inline(always)]
    pub fn push(&mut self, t: SimTime, ev: E) {
        let seq = self.seq;
        self.seq += 1;
        self.push_seq(t, seq, ev);
    }

    /// Push with a new sequence number, larger than every other event's: among equal times it
    /// goes last, so a bucket's list takes it by comparing times only.
    #[inline(always)]
    fn push_seq(&mut self, t: SimTime, seq: u64, ev: E) {
        // The event goes straight from registers into the first free node; no path takes it
        // by reference, which would make the compiler build it on the stack and read it back
        // wider than it was written (a store-forwarding stall on every push).
        let n = self.free as usize & (CAP - 1);
        let node = &mut self.nodes[n];
        node.time = t;
        node.seq = seq;
        node.ev = ev;
        let b = self.bucket_of(t);
        let next_free = self.links[next_of(n)];
        if b.wrapping_sub(self.cur) >= self.nb as u64 || next_free == NIL {
            self.push_far(n);
            return;
        }
        self.free = next_free;
        self.near += 1;
        let i = self.ring(b);
        if self.tails[i].time <= t {
            // Not earlier than the last node (whose seq is smaller), or the bucket is empty:
            // append.
            self.links[next_of(n)] = NIL;
            let tl = self.tails[i].link as usize & (LINKS - 1);
            self.links[tl] = n as u32;
            self.tails[i] = Tail {
                time: t,
                link: next_of(n) as u32,
            };
            self.bits[i / 64] |= 1 << (i % 64);
        } else {
            self.insert_sorted(i, n);
        }
    }

    /// Push an event that keeps its own, older sequence number (moved from the wheel into the
    /// calendar, or by a reshape): the calendar may already hold events at the same time with
    /// larger numbers (pushed straight into the calendar while this one waited in the wheel),
    /// so its place is found by the whole key. (Comparing times only, as a new push may, put
    /// such an event after the later-scheduled ones of its picosecond: fixed 2026-11-27.)
    #[inline(never)]
    fn push_moved(&mut self, t: SimTime, seq: u64, ev: E) {
        let n = self.free as usize & (CAP - 1);
        let node = &mut self.nodes[n];
        node.time = t;
        node.seq = seq;
        node.ev = ev;
        let b = self.bucket_of(t);
        let next_free = self.links[next_of(n)];
        if b.wrapping_sub(self.cur) >= self.nb as u64 || next_free == NIL {
            self.push_far(n);
            return;
        }
        self.free = next_free;
        self.near += 1;
        let i = self.ring(b);
        let key = self.nodes[n].key();
        // before the first node with a larger key, or last
        let mut prev = i;
        let mut c = self.links[i];
        while c != NIL && self.nodes[c as usize & (CAP - 1)].key() < key {
            prev = next_of(c as usize);
            c = self.links[prev];
        }
        self.links[next_of(n)] = c;
        self.links[prev & (LINKS - 1)] = n as u32;
        if c == NIL {
            self.tails[i] = Tail {
                time: t,
                link: next_of(n) as u32,
            };
            self.bits[i / 64] |= 1 << (i % 64);
        }
    }

    /// Insert node `n` into bucket `i` before the first node with a later time (there is one:
    /// the last).
    #[inline(never)]
    fn insert_sorted(&mut self, i: usize, n: usize) {
        let t = self.nodes[n].time;
        let mut prev = i;
        let mut c = self.links[i] as usize & (CAP - 1);
        let mut steps = 0;
        while self.nodes[c].time <= t {
            prev = next_of(c);
            c = self.links[prev] as usize & (CAP - 1);
            steps += 1;
        }
        self.walked += steps;
        self.links[next_of(n)] = c as u32;
        self.links[prev] = n as u32;
    }

    /// Move the event just written into free node `n` to the wheel if it lies beyond the
    /// calendar's window and within the wheel's, else to the heap (the node stays free).
    #[cold]
    #[inline(never)]
    fn push_far(&mut self, n: usize) {
        let node = self.nodes[n];
        let e = Entry {
            key: node.key(),
            ev: node.ev,
        };
        let b = self.bucket_of(node.time);
        self.beyond += 1;
        let w = &mut self.wheel;
        if b >= self.cur.saturating_add(self.nb as u64) {
            let wb = node.time >> w.wshift;
            if w.len == 0 {
                // an empty wheel may start anywhere up to the present
                w.base = self.cur >> (w.wshift - self.shift);
                w.first = wb;
            }
            if wb >= w.base && wb - w.base < NW as u64 {
                let i = wb as usize & (NW - 1);
                w.slots[i].push(e);
                w.bits[i / 64] |= 1 << (i % 64);
                w.len += 1;
                w.first = w.first.min(wb);
                self.far_min = self.far.min_key().min(w.trigger());
                return;
            }
        }
        self.far.push(e);
        self.far_min = self.far.min_key().min(self.wheel.trigger());
    }

    /// Move the wheel's earliest bucket into the calendar (its trigger is the smallest key of
    /// all: the calendar holds nothing earlier, so its base may move up to the trigger).
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        let w = &mut self.wheel;
        let wb = w.first;
        let start = (wb.saturating_sub(1) << w.wshift) >> self.shift;
        self.cur = if self.near == 0 {
            start
        } else {
            self.cur.max(start)
        };
        let i = wb as usize & (NW - 1);
        let mut events = std::mem::take(&mut w.slots[i]);
        w.bits[i / 64] &= !(1u64 << (i % 64));
        w.len -= events.len();
        w.base = wb + 1;
        if w.len > 0 {
            w.first = w.scan_first();
        }
        self.far_min = self.far.min_key().min(self.wheel.trigger());
        for e in events.drain(..) {
            // within the window from the new base: to the calendar (or the heap when its
            // nodes are all in use), never back to the wheel
            self.push_moved(key_time(e.key), e.key as u64, e.ev);
        }
        // keep the bucket's capacity: no allocation once the wheel has grown
        self.wheel.slots[i] = events;
    }

    /// Ring index of the calendar's earliest non-empty bucket (the calendar must not be empty).
    #[inline]
    fn first_bucket(&self) -> usize {
        let s = self.ring(self.cur);
        let w = s / 64;
        let m = self.bits[w] & (!0u64 << (s % 64));
        if m != 0 {
            return w * 64 + m.trailing_zeros() as usize;
        }
        self.first_bucket_after(w)
    }

    /// [`EventQueue::first_bucket`] beyond word `w` of the bitmap: the following words, then
    /// the low part of word `w` (the ring wraps around).
    #[inline(never)]
    fn first_bucket_after(&self, w: usize) -> usize {
        let words = self.nb / 64;
        for k in 1..=words {
            let ww = ((w + k) & (words - 1)) & (NB_MAX / 64 - 1);
            let m = self.bits[ww];
            if m != 0 {
                return ww * 64 + m.trailing_zeros() as usize;
            }
        }
        unreachable!("calendar count and bitmap disagree")
    }

    /// Time of the earliest event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        loop {
            let far = self.far.min_key();
            let near = if self.near > 0 {
                self.head().2.key()
            } else {
                u128::MAX
            };
            if self.wheel.len > 0 && self.wheel.trigger() <= near.min(far) {
                self.refill();
                continue;
            }
            let key = near.min(far);
            return (key != u128::MAX).then(|| key_time(key));
        }
    }

    /// The calendar's first `N` events, as far as it holds them: the first (the next to pop,
    /// unless the heap or the wheel holds an earlier one or an event is pushed before it) and
    /// those after it (in its bucket, then at the heads of later buckets of the same bitmap
    /// word); `None` beyond. Prefetches the node after them, read at the next call. A hint for
    /// prefetching: no order is promised.
    #[inline(always)]
    pub fn peek<const N: usize>(&self) -> [Option<E>; N] {
        let mut out = [None; N];
        if self.near == 0 {
            return out;
        }
        let (mut b, mut n, node) = self.head();
        out[0] = Some(node.ev);
        for slot in out.iter_mut().skip(1) {
            let Some(m) = self.node_after(&mut b, n) else {
                return out;
            };
            n = m;
            *slot = Some(self.nodes[n].ev);
        }
        if let Some(m) = self.node_after(&mut b, n) {
            crate::engine::prefetch(&self.nodes[m]);
        }
        out
    }

    /// The calendar node after node `n` of bucket `b`: the next in its list, or the first of
    /// the next non-empty bucket in the same word of the bitmap (then `b` becomes that bucket);
    /// `None` beyond (for [`EventQueue::peek`]).
    #[inline(always)]
    fn node_after(&self, b: &mut usize, n: usize) -> Option<usize> {
        let next = self.links[next_of(n)];
        if next != NIL {
            return Some(next as usize & (CAP - 1));
        }
        let m = self.bits[*b / 64] & (!1u64).wrapping_shl(*b as u32 % 64);
        if m == 0 {
            return None;
        }
        *b = (*b & !63) + m.trailing_zeros() as usize;
        Some(self.links[*b & (NB_MAX - 1)] as usize & (CAP - 1))
    }

    /// Kept for API compatibility: the earliest event is always removed at once.
    #[inline]
    pub fn settle(&mut self) {}

    /// The earliest event (same as [`EventQueue::pop`]). Always inlined: the simulator has two
    /// event loops (sim/mod.rs), and as a call it cost 7 % more instructions.
    #[inline(always)]
    pub fn take_min(&mut self) -> Option<(SimTime, E)> {
        self.pop()
    }

    /// The next sequence number, taken as a push would take it, for an event the caller keeps
    /// outside the queue (the simulator's transmission-done slot, docs/performance.md): it
    /// orders among equal times exactly where the pushed event would have.
    #[inline(always)]
    pub fn reserve_seq(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    /// Push an event with a sequence number taken earlier ([`EventQueue::reserve_seq`], or a
    /// popped event's own to put it back). It goes to the heap, which orders by time and
    /// sequence number (the calendar's lists assume each new number is the largest); rare.
    #[cold]
    #[inline(never)]
    pub fn push_keyed(&mut self, t: SimTime, seq: u64, ev: E) {
        self.far.push(Entry {
            key: ((t as u128) << 64) | seq as u128,
            ev,
        });
        self.far_min = self.far.min_key().min(self.wheel.trigger());
    }

    /// The sequence number of the event last popped.
    #[inline]
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        loop {
            if self.near > 0 {
                let (i, n, node) = self.head();
                if node.key() < self.far_min {
                    self.unlink_head(i, n, node.time);
                    self.last_seq = node.seq;
                    return Some((node.time, node.ev));
                }
            }
            // The wheel's trigger is the earliest key: move its bucket into the calendar and
            // look again (a call that returns no event, so that both returns stay in
            // registers once `pop` is inlined into the event loop).
            if !self.wheel_first() {
                break;
            }
            self.refill();
        }
        self.pop_heap()
    }

    /// The calendar's earliest node: its bucket, index and value (the calendar must not be
    /// empty).
    #[inline(always)]
    fn head(&self) -> (usize, usize, Node<E>) {
        let i = self.first_bucket() & (NB_MAX - 1);
        let n = self.links[i] as usize & (CAP - 1);
        (i, n, self.nodes[n])
    }

    /// Remove node `n`, the head of bucket `i`, whose event is at `time`.
    #[inline(always)]
    fn unlink_head(&mut self, i: usize, n: usize, time: SimTime) {
        let next = self.links[next_of(n)];
        self.links[i] = next;
        // The bucket may have become empty (a branch: cheaper than updating with masks,
        // measured on the reference benchmarks, docs/performance.md).
        if next == NIL {
            self.tails[i] = Tail {
                time: 0,
                link: i as u32,
            };
            self.bits[i / 64] &= !(1u64 << (i % 64));
        }
        self.links[next_of(n)] = self.free;
        self.free = n as u32;
        self.near -= 1;
        self.cur = self.bucket_of(time);
    }

    /// Whether the wheel's trigger is the earliest key outside the calendar.
    #[inline(always)]
    fn wheel_first(&self) -> bool {
        self.wheel.len > 0 && self.wheel.trigger() <= self.far.min_key()
    }

    /// Pop the heap's earliest event (the earliest of all).
    #[inline(always)]
    fn pop_heap(&mut self) -> Option<(SimTime, E)> {
        let e = self.far.pop()?;
        self.far_min = self.far.min_key().min(self.wheel.trigger());
        let t = key_time(e.key);
        if self.near == 0 {
            // An empty calendar may move its base anywhere: start the window here.
            self.cur = self.bucket_of(t);
        }
        self.last_seq = e.key as u64;
        Some((t, e.ev))
    }
}

/// A 4-ary min-heap of entries.
struct Heap<E> {
    heap: Vec<Entry<E>>,
}

const ARITY: usize = 4;

impl<E: Copy> Heap<E> {
    fn new() -> Self {
        Heap {
            heap: Vec::with_capacity(64),
        }
    }

    #[inline]
    fn len(&self) -> usize {
        self.heap.len()
    }

    /// The smallest key, or `u128::MAX` when empty (no real key is `u128::MAX`: that would
    /// need `seq == u64::MAX`).
    #[inline]
    fn min_key(&self) -> u128 {
        self.heap.first().map_or(u128::MAX, |e| e.key)
    }

    fn push(&mut self, e: Entry<E>) {
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if self.heap[parent].key <= e.key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = e;
    }

    fn pop(&mut self) -> Option<Entry<E>> {
        let top = *self.heap.first()?;
        let last = self.heap.pop().unwrap();
        let n = self.heap.len();
        if n > 0 {
            let mut i = 0;
            loop {
                let first = i * ARITY + 1;
                if first >= n {
                    break;
                }
                let end = (first + ARITY).min(n);
                let mut best = first;
                for c in first + 1..end {
                    if self.heap[c].key < self.heap[best].key {
                        best = c;
                    }
                }
                if self.heap[best].key >= last.key {
                    break;
                }
                self.heap[i] = self.heap[best];
                i = best;
            }
            self.heap[i] = last;
        }
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    const W: SimTime = 1 << SHIFT;
    const WINDOW: SimTime = (NB as SimTime) << SHIFT;

    /// Pop everything.
    fn drain(q: &mut EventQueue<u32>) -> Vec<(SimTime, u32)> {
        let mut out = Vec::new();
        while let Some(x) = q.pop() {
            out.push(x);
        }
        out
    }

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

    /// An event kept outside the queue with a reserved sequence number, pushed back later with
    /// `push_keyed`, pops where a push at the reservation would have put it among equal times,
    /// wherever the other events sit (calendar, wheel, heap); `last_seq` names each popped
    /// event's number.
    #[test]
    fn reserved_sequence_numbers_keep_their_place() {
        for t in [5, W * 3 + 7, WINDOW + 11, 40 * WINDOW] {
            let mut q = EventQueue::new();
            q.push(t, 0u32);
            let reserved = q.reserve_seq();
            q.push(t, 2);
            q.push(t, 3);
            q.push_keyed(t, reserved, 1);
            let mut seqs = Vec::new();
            let mut out = Vec::new();
            while let Some((tt, e)) = q.pop() {
                assert_eq!(tt, t);
                out.push(e);
                seqs.push(q.last_seq());
            }
            assert_eq!(out, vec![0, 1, 2, 3], "at {t}");
            assert_eq!(seqs, vec![0, 1, 2, 3], "at {t}");
        }
    }

    /// Push batches of (time, id), then pop everything: the result is sorted by (time, id),
    /// ids being in push order. Each case puts events in a different part of the structure.
    #[test]
    fn push_then_drain_cases() {
        let cases: &[(&str, &[SimTime])] = &[
            ("empty", &[]),
            ("one bucket, reverse times", &[30, 20, 10, 0]),
            (
                "one bucket, mixed order and ties",
                &[7, 3, 3, 9, 1, 3, 0, 8, 3],
            ),
            ("many ties", &[5, 5, 5, 5, 5, 5, 5, 5]),
            ("adjacent buckets", &[W, W - 1, 2 * W, W + 1, 0, 2 * W - 1]),
            (
                "last bucket of the window and just beyond it",
                &[WINDOW - 1, WINDOW, WINDOW + 1, WINDOW - W, 0],
            ),
            (
                "far future (timers) before near events",
                &[10_000 * W, 5 * WINDOW, 3, 5 * WINDOW, 1],
            ),
            (
                "times near u64::MAX",
                &[u64::MAX, u64::MAX - 1, 0, u64::MAX],
            ),
        ];
        for (name, times) in cases {
            let mut q = EventQueue::new();
            for (i, &t) in times.iter().enumerate() {
                q.push(t, i as u32);
            }
            assert_eq!(q.len(), times.len(), "{name}");
            let mut want: Vec<(SimTime, u32)> = times.iter().copied().zip(0..).collect();
            want.sort();
            assert_eq!(drain(&mut q), want, "{name}");
            assert!(q.is_empty(), "{name}");
        }
    }

    /// Interleaved: the calendar base moves with the pops, and the ring wraps around many
    /// times; events keep coming a few buckets ahead of the last pop.
    #[test]
    fn window_slides_and_wraps() {
        let mut q = EventQueue::new();
        let mut model = BTreeMap::new();
        let mut id = 0u32;
        let mut now = 0;
        // deltas cycle through: same instant, sub-bucket, a few buckets, almost a window,
        // exactly a window, beyond
        let deltas = [
            0,
            1,
            W / 3,
            3 * W,
            WINDOW - W,
            WINDOW,
            3 * WINDOW,
            2 * W + 7,
        ];
        for step in 0..20_000usize {
            for k in 0..(1 + step % 3) {
                let t = now + deltas[(step + k) % deltas.len()];
                q.push(t, id);
                model.insert((t, id), ());
                id += 1;
            }
            let (&(t, i), _) = model.iter().next().unwrap();
            model.remove(&(t, i));
            assert_eq!(q.pop(), Some((t, i)), "step {step}");
            assert_eq!(q.peek_time(), model.keys().next().map(|k| k.0));
            now = t;
        }
        let rest: Vec<_> = model.into_keys().collect();
        assert_eq!(drain(&mut q), rest);
    }

    /// More near events than calendar nodes: the rest go to the heap, and the order holds
    /// (also for ties split between the two).
    #[test]
    fn calendar_full_spills_to_the_heap() {
        let mut q = EventQueue::new();
        let n = 2 * CAP + 10;
        let mut want = Vec::new();
        for i in 0..n {
            // reverse order within the window, with many ties
            let t = (n - i) as SimTime % 97 * (W / 2);
            q.push(t, i as u32);
            want.push((t, i as u32));
        }
        assert_eq!(q.len(), n);
        want.sort();
        // pop half, push more into the freed nodes, then drain
        let mut got = Vec::new();
        for _ in 0..n / 2 {
            got.push(q.pop().unwrap());
        }
        let now = got.last().unwrap().0;
        for i in 0..100u32 {
            q.push(now + (i as SimTime % 3), n as u32 + i);
            want.push((now + (i as SimTime % 3), n as u32 + i));
        }
        want.sort();
        got.extend(drain(&mut q));
        assert_eq!(got, want);
    }

    /// Events of a thousand slow sources and samplers 1-17 ms ahead (the wheel), beside near
    /// events, timers beyond the wheel and ties, against a BTreeMap; `peek_time` between pops.
    #[test]
    fn wheel_holds_the_middle_future() {
        let mut q = EventQueue::new();
        let mut model = BTreeMap::new();
        let mut id = 0u32;
        let mut now: SimTime;
        let wheel = (NW as SimTime) << WSHIFT;
        let mut x: u64 = 12345;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for k in 0..1000 {
            let t = 1_000_000_000 + rnd(16_000_000_000);
            q.push(t, id);
            model.insert((t, id), ());
            id += 1;
            if k % 100 == 0 {
                // beyond the wheel, and exactly at wheel bucket edges
                for t in [wheel + 5, 3 << WSHIFT, (3 << WSHIFT) - 1, 2 * wheel] {
                    q.push(t, id);
                    model.insert((t, id), ());
                    id += 1;
                }
            }
        }
        assert_eq!(q.wheel.len + q.far.len() + q.near, model.len());
        assert!(q.wheel.len > 900, "most go to the wheel: {}", q.wheel.len);
        for step in 0..60_000usize {
            let Some((&(t, i), _)) = model.iter().next() else {
                break;
            };
            assert_eq!(q.peek_time(), Some(t), "step {step}");
            model.remove(&(t, i));
            assert_eq!(q.pop(), Some((t, i)), "step {step}");
            now = t;
            // a popped source schedules its next frame 1.1 ms on, some near events, a tie
            if step % 3 == 0 && now < 40_000_000_000 {
                for d in [1_100_000_000, rnd(WINDOW), 0, (rnd(4) + 1) << WSHIFT] {
                    q.push(now + d, id);
                    model.insert((now + d, id), ());
                    id += 1;
                }
            }
            assert_eq!(q.len(), model.len());
        }
        let rest: Vec<_> = model.into_keys().collect();
        assert_eq!(drain(&mut q), rest);
        assert!(q.is_empty());
    }

    /// An event earlier than the calendar's base (not produced by the simulator, whose events
    /// are never in the past, but allowed by the API) still pops first.
    #[test]
    fn event_before_the_calendar_base() {
        let mut q = EventQueue::new();
        q.push(10 * W, 0);
        q.push(20 * W, 1);
        assert_eq!(q.pop(), Some((10 * W, 0)));
        q.push(W, 2);
        q.push(10 * W, 3);
        assert_eq!(q.peek_time(), Some(W));
        assert_eq!(drain(&mut q), vec![(W, 2), (10 * W, 3), (20 * W, 1)]);
    }

    /// A dense schedule narrows the buckets, a sparse one widens them back; the pops stay in
    /// order throughout.
    #[test]
    fn adapt_narrows_dense_buckets_and_widens_sparse_ones() {
        let mut q = EventQueue::new();
        let mut model = BTreeMap::new();
        let mut id = 0u32;
        let mut now = 0;
        let mut rng = 12345u64;
        let mut step = |q: &mut EventQueue<u32>,
                        model: &mut BTreeMap<(u64, u32), ()>,
                        now: &mut u64,
                        spread: u64| {
            // keep about 2,000 events pending, each pushed `spread` ps ahead at random
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = *now + (rng >> 33) % spread;
            q.push(t, id);
            model.insert((t, id), ());
            id += 1;
            if model.len() > 2_000 {
                let k = *model.keys().next().unwrap();
                model.remove(&k);
                assert_eq!(q.pop(), Some(k));
                *now = k.0;
            }
        };
        // 2,000 events within 2 us: ~125 per 131 ns bucket
        for k in 0..200_000 {
            step(&mut q, &mut model, &mut now, 2_000_000);
            if k % 4096 == 0 {
                q.adapt(now);
            }
        }
        assert!(q.bucket_width() < 1 << SHIFT, "{}", q.bucket_width());
        // 2,000 events within 10 ms: sparse again
        for k in 0..400_000 {
            step(&mut q, &mut model, &mut now, 10_000_000_000);
            if k % 4096 == 0 {
                q.adapt(now);
            }
        }
        assert_eq!(q.bucket_width(), 1 << SHIFT);
        let rest: Vec<_> = model.into_keys().collect();
        assert_eq!(drain(&mut q), rest);
    }

    /// One operation of the model test: push at `now + delta`, or pop.
    #[derive(Debug, Clone, Copy)]
    enum Op {
        Push(SimTime),
        /// Push at this absolute time (or now, if later): equal times far apart in scheduling,
        /// one in the wheel, one pushed straight into the calendar later.
        PushAt(SimTime),
        Pop,
        /// Change the bucket width to `2^shift` ps.
        Reshape(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u64..4).prop_map(Op::Push),
            3 => (0..4 * W).prop_map(Op::Push),
            3 => (0..WINDOW + 2 * W).prop_map(Op::Push),
            1 => (0..100 * WINDOW).prop_map(Op::Push),
            2 => (WINDOW..(NW as SimTime + 4) << WSHIFT).prop_map(Op::Push),
            2 => prop::sample::select(vec![WINDOW + 7, WINDOW * 3 / 2 + 7, 2 * WINDOW + 7, 5 * WINDOW])
                .prop_map(Op::PushAt),
            6 => Just(Op::Pop),
            1 => (MIN_SHIFT - 1..=SHIFT + 1).prop_map(Op::Reshape),
        ]
    }

    /// An event that waited in the wheel and one at the same picosecond pushed later straight
    /// into the calendar (its window had moved over that time, but not yet over the wheel's
    /// trigger): the wheel's event, scheduled first, pops first. (Before 2026-11-27 the move
    /// into the calendar compared times only and put it second.)
    #[test]
    fn a_moved_event_keeps_its_place_among_equal_times() {
        let mut q = EventQueue::new();
        let t = (3 << WSHIFT) + 5;
        q.push(t, 1); // beyond the window: the wheel's bucket 3
        q.push((2 << WSHIFT) - 10, 0); // the last calendar bucket
        assert_eq!(q.pop(), Some(((2 << WSHIFT) - 10, 0)));
        q.push(t, 2); // within the window now: straight into the calendar
        assert_eq!(drain(&mut q), vec![(t, 1), (t, 2)]);
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

        /// Against a BTreeMap keyed by (time, push index), with pushes relative to the time of
        /// the last pop at every scale (ties, within a bucket, across the window, far beyond).
        #[test]
        fn matches_a_btreemap(
            ops in proptest::collection::vec(op(), 1..600),
            nb in prop::sample::select(vec![NB, 2 * NB, 8 * NB, NB_MAX]),
            scale in prop::sample::select(vec![1u64, 8, 32]),
        ) {
            let mut q = EventQueue::with_buckets(nb);
            prop_assert_eq!(q.buckets(), nb);
            // (pushes up to `scale` times further: the window of `nb` buckets)
            let ops: Vec<Op> = ops
                .iter()
                .map(|&op| match op {
                    Op::Push(d) => Op::Push(d * scale),
                    Op::PushAt(t) => Op::PushAt(t * scale),
                    op => op,
                })
                .collect();
            let mut model = BTreeMap::new();
            let mut now = 0u64;
            let mut id = 0u32;
            for op in &ops {
                match *op {
                    Op::Push(d) => {
                        q.push(now + d, id);
                        model.insert((now + d, id), ());
                        id += 1;
                    }
                    Op::PushAt(t) => {
                        let t = t.max(now);
                        q.push(t, id);
                        model.insert((t, id), ());
                        id += 1;
                    }
                    Op::Pop => {
                        let want = model.keys().next().copied();
                        if let Some(k) = want {
                            model.remove(&k);
                            now = k.0;
                        }
                        prop_assert_eq!(q.pop(), want);
                    }
                    Op::Reshape(shift) => {
                        q.reshape(now, shift);
                        prop_assert_eq!(q.bucket_width(), 1 << shift.clamp(MIN_SHIFT, SHIFT));
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.peek_time(), model.keys().next().map(|k| k.0));
            }
            let rest: Vec<_> = model.into_keys().collect();
            prop_assert_eq!(drain(&mut q), rest);
        }
    }
}
