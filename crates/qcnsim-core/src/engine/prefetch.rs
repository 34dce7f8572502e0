//! A software prefetch: ask the processor to bring the cache line holding an address into the
//! cache, without waiting for it. The simulator's event loop uses it on the next event's state
//! while the current event runs (docs/performance.md, "Cost per event by fabric size").

/// Start loading the cache line of `p` into every cache level. Never faults, whatever `p` is
/// (an address past the end of an array is fine: nothing is read), and changes nothing the
/// program can observe but time. A no-op on targets other than x86-64.
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is a hint: it reads no memory the program sees, cannot fault on any
    // address, and SSE, the feature it needs, is part of every x86-64 processor.
    unsafe {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
