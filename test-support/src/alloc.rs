//! A counting allocator for the tests that check what recording allocates:
//! a test binary installs [`Counting`] as its `#[global_allocator]`.
//!
//! Two counts: the bytes the whole process holds ([`counting`],
//! [`live_bytes`]), which a test reads in a process of its own
//! (`own_process!`), since every thread allocates through it; and the
//! allocations one thread makes while it runs a closure ([`allocations_in`]),
//! which no other thread's work can add to (the test harness's own
//! bookkeeping would). Off, either costs the binary's other tests one
//! relaxed load (and a thread-local read) per allocation.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

static ON: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);

thread_local! {
    /// Allocations of this thread while [`allocations_in`] runs on it.
    static HERE: Cell<Option<usize>> = const { Cell::new(None) };
}

/// The system allocator, counting bytes live while [`counting`] is on and
/// a thread's allocations while [`allocations_in`] runs on it.
pub struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; the
// counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.load(Ordering::Relaxed) {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        // `try_with`: a thread being torn down has no locals left.
        let _ = HERE.try_with(|here| {
            if let Some(n) = here.get() {
                here.set(Some(n + 1));
            }
        });
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

/// What `f` returns, and how many allocations this thread made while it
/// ran.
pub fn allocations_in<R>(f: impl FnOnce() -> R) -> (R, usize) {
    HERE.with(|here| here.set(Some(0)));
    let out = f();
    let made = HERE.with(|here| here.replace(None)).unwrap_or(0);
    (out, made)
}
