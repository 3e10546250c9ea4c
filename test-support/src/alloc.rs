//! A counting allocator for the tests that check what recording allocates:
//! a test binary installs [`Counting`] as its `#[global_allocator]`, and a
//! test counts in a process of its own (`own_process!`), since every thread
//! of the process allocates through it. Counts only while switched on, so
//! the binary's other tests pay one relaxed load per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicUsize, Ordering};

static ON: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, counting bytes live and allocations made while
/// [`counting`] is on.
pub struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if ON.load(Ordering::Relaxed) {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: `ptr` came from `alloc` above, which is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Switches counting on or off.
pub fn counting(on: bool) {
    ON.store(on, Ordering::SeqCst);
}

/// Bytes allocated and not freed while counting was on (negative when more
/// was freed than allocated in that time).
pub fn live_bytes() -> isize {
    LIVE.load(Ordering::SeqCst)
}

/// Allocations made while counting was on.
pub fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::SeqCst)
}
