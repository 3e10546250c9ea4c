//! The atomics the cells use: the standard library's, or loom's when the
//! protocol is model-checked (`RUSTFLAGS="--cfg nemo_lens_loom"`, see `loom_tests`).

#[cfg(nemo_lens_loom)]
pub(crate) use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(not(nemo_lens_loom))]
pub(crate) use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering,
};
