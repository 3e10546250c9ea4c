//! The atomics the cells use: the standard library's, or loom's when the
//! protocol is model-checked (`RUSTFLAGS="--cfg nemo_lens_loom"`, see `loom_tests`).

#[cfg(nemo_lens_loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(not(nemo_lens_loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};

/// One turn of a wait for a lock held by another thread: a pause while the
/// holder is likely running, then a yield in case it was preempted.
#[inline]
pub(crate) fn spin_wait(spins: u32) {
    #[cfg(nemo_lens_loom)]
    {
        let _ = spins;
        loom::thread::yield_now();
    }
    #[cfg(not(nemo_lens_loom))]
    {
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}
