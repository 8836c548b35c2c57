//! Cache hints for the records a step is about to visit.
//!
//! With tens of workers stepping in turn, a worker's sequences have left the CPU caches by
//! its next step, and its loops visit them one after another: each visit waited for its
//! own misses. Asking for all of them first lets the loads overlap.

/// Asks the CPU to load every cache line of `value` (a hint; nothing on other targets).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = value as *const T as *const i8;
        for offset in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch only hints the cache; the address lies inside `value`.
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(start.add(offset));
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
