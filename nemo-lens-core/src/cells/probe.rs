//! Which stripe a thread writes: a per-thread probe, moved on a collision
//! so that two threads sharing a stripe soon part.

use std::cell::Cell;

/// Spreads thread numbers over the probe space (Fibonacci hashing).
pub(super) const GOLDEN: u32 = 0x9e37_79b9;

#[cfg(not(nemo_lens_loom))]
std::thread_local! {
    static PROBE: Cell<u32> = const { Cell::new(0) };
}
#[cfg(nemo_lens_loom)]
loom::thread_local! {
    static PROBE: Cell<u32> = Cell::new(0);
}

fn seed() -> u32 {
    use super::sync::{AtomicUsize, Ordering};
    #[cfg(not(nemo_lens_loom))]
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    #[cfg(nemo_lens_loom)]
    loom::lazy_static! {
        static ref NEXT: AtomicUsize = AtomicUsize::new(1);
    }
    let n = NEXT.fetch_add(1, Ordering::Relaxed) as u32;
    // Never zero: zero means "not drawn yet".
    n.wrapping_mul(GOLDEN) | 1
}

/// This thread's probe. A thread whose locals are being torn down gets a
/// fixed probe rather than a panic.
#[inline]
pub(crate) fn current() -> u32 {
    PROBE
        .try_with(|probe| match probe.get() {
            0 => {
                let drawn = seed();
                probe.set(drawn);
                drawn
            }
            drawn => drawn,
        })
        .unwrap_or(1)
}

/// Moves this thread's probe after a collision (xorshift), and returns it.
#[cold]
pub(crate) fn advance() -> u32 {
    let mut x = current();
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    let _ = PROBE.try_with(|probe| probe.set(x));
    x
}
