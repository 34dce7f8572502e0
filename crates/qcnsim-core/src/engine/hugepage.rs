//! Large pages for the large arrays of a large fabric: ask the kernel to back them with 2 MiB
//! pages instead of 4 KiB ones. A frame-hop in a fabric of thousands of hosts touches a port, a
//! frame, a hop record and a flow spread over a hundred megabytes: with 4 KiB pages nearly each of
//! those lines is also a miss of the processor's address-translation cache (its second level
//! maps a few megabytes), and the page walk comes on top of the cache miss, also for the event
//! loop's prefetches. 2 MiB pages map the whole working set with a few dozen entries
//! (docs/performance.md, "Cost per event by fabric size, fourth round").
//!
//! Linux only (`madvise`; elsewhere nothing is done). A hint in both directions: what the
//! program computes is the same whether the kernel follows it or not, and a refusal (an older
//! kernel, huge pages switched off) is ignored. Only the whole, aligned 2 MiB pages inside an
//! array are advised: an array smaller than 2 MiB never is, so small runs are untouched.

/// Advise the memory of `v` (its whole capacity when `spare` is given: the array may grow into
/// it) for large pages: `MADV_HUGEPAGE`, so that pages touched from now on are large ones, and
/// `MADV_COLLAPSE`, so that those already touched become large ones now (Linux 6.1 and later).
pub fn advise<T>(v: &[T], spare: usize) {
    let start = v.as_ptr() as usize;
    advise_span(start, start + std::mem::size_of::<T>() * (v.len() + spare));
}

/// [`advise`] for the addresses `start..end`, which hold many small allocations made one after
/// another (e.g. the ports' queue buffers, allocated in order when the ports are built).
pub fn advise_span(start: usize, end: usize) {
    #[cfg(target_os = "linux")]
    {
        const LARGE: usize = 2 << 20;
        let (a, b) = ((start + LARGE - 1) & !(LARGE - 1), end & !(LARGE - 1));
        if b > a {
            sys::advise(a, b - a);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, end);
}

#[cfg(target_os = "linux")]
mod sys {
    use std::ffi::{c_int, c_void};

    const MADV_HUGEPAGE: c_int = 14;
    const MADV_COLLAPSE: c_int = 25;

    extern "C" {
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }

    /// `addr` and `len`: whole 2 MiB pages of this process's memory (a live array, or the heap
    /// span of many small allocations).
    pub(super) fn advise(addr: usize, len: usize) {
        // SAFETY: `madvise` with these two advices changes how the kernel backs the range (the
        // page size), never the contents or the mapping of any page in it: every byte of the
        // range reads the same before, during and after the call, whoever owns it, so no
        // reference anywhere in the program is affected. A range that is not wholly mapped gives
        // ENOMEM; that and the other errors (EINVAL on kernels without the advice, EAGAIN) leave
        // the pages as they were and are ignored.
        unsafe {
            madvise(addr as *mut c_void, len, MADV_HUGEPAGE);
            madvise(addr as *mut c_void, len, MADV_COLLAPSE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The advice moves no byte: an array of 8 MiB (three whole large pages at least) reads the
    /// same after it, also once the pages already touched were collapsed into large ones, and
    /// after writes to it; a small array and an empty one are left alone.
    #[test]
    fn advised_memory_reads_the_same() {
        let n = (8 << 20) / 8;
        let mut v: Vec<u64> = (0..n as u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        advise(&v, 0);
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, &x)| x == (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        for x in v.iter_mut().step_by(4096) {
            *x = !*x;
        }
        assert!(v.iter().enumerate().all(|(i, &x)| {
            let want = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            x == if i % 4096 == 0 { !want } else { want }
        }));
        let small = vec![7u8; 1000];
        advise(&small, 0);
        assert!(small.iter().all(|&x| x == 7));
        let empty: Vec<u32> = Vec::with_capacity(1 << 20);
        advise(&empty, empty.capacity());
        assert!(empty.is_empty());
    }
}
