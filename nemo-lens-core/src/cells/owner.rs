//! A small number per live thread, so that a histogram cell can belong to
//! one thread: its owner writes it with plain loads and stores (no locked
//! instruction), and no other thread writes it.
//!
//! A thread draws its number on its first record and gives it back when
//! it exits, so numbers stay small and a later thread takes one over with
//! the cells it owned (the release and the draw take one lock in turn, so
//! the old owner's writes come before the new owner's). A thread whose
//! locals are being torn down records as a thread without a number.

use std::cell::Cell;

use super::sync::{AtomicU32, Ordering};

/// No number drawn yet.
pub(crate) const NONE: u32 = 0;
/// A thread that owns nothing: one that has given its number back, or
/// cannot keep one.
pub(crate) const NOBODY: u32 = u32::MAX;

#[cfg(not(nemo_lens_loom))]
mod numbers {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Mutex, PoisonError};

    use super::{Cell, NOBODY};

    static FREE: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    static NEXT: AtomicU32 = AtomicU32::new(1);

    /// Gives the thread's number back when its locals are dropped.
    pub(super) struct Release;

    impl Drop for Release {
        fn drop(&mut self) {
            let id = super::ID.with(|id| id.replace(NOBODY));
            if id != super::NONE && id != NOBODY {
                FREE.lock().unwrap_or_else(PoisonError::into_inner).push(id);
            }
        }
    }

    std::thread_local! {
        pub(super) static ID: Cell<u32> = const { Cell::new(super::NONE) };
        pub(super) static RELEASE: Release = const { Release };
    }

    #[cold]
    pub(super) fn draw() -> u32 {
        // Registers the release first: a thread that cannot (its locals are
        // going) owns nothing.
        if RELEASE.try_with(|_| ()).is_err() {
            return NOBODY;
        }
        let reused = FREE.lock().unwrap_or_else(PoisonError::into_inner).pop();
        // Past four billion numbers held at once, no more owners: the count
        // stops at NOBODY rather than wrap to numbers live threads hold.
        let id = reused.unwrap_or_else(|| {
            NEXT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < NOBODY).then_some(n + 1)
            })
            .unwrap_or(NOBODY)
        });
        ID.with(|cell| cell.set(id));
        id
    }
}

#[cfg(nemo_lens_loom)]
mod numbers {
    use super::Cell;
    use crate::cells::sync::{AtomicU32, Ordering};

    loom::thread_local! {
        pub(super) static ID: Cell<u32> = Cell::new(super::NONE);
    }
    loom::lazy_static! {
        static ref NEXT: AtomicU32 = AtomicU32::new(1);
    }

    pub(super) fn draw() -> u32 {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        ID.with(|cell| cell.set(id));
        id
    }
}

use numbers::ID;

/// This thread's number, drawn on first use; [`NOBODY`] while its locals
/// are torn down.
#[inline]
pub(crate) fn id() -> u32 {
    match ID.try_with(Cell::get) {
        Ok(NONE) => numbers::draw(),
        Ok(id) => id,
        Err(_) => NOBODY,
    }
}

/// Which thread owns a cell: kept apart from the cell's own words, so that
/// other threads checking it do not read the line its owner writes.
pub(crate) struct Owner(AtomicU32);

impl Owner {
    pub(crate) fn new() -> Self {
        Owner(AtomicU32::new(NONE))
    }

    /// Whether thread `me` owns the cell, claiming it if nobody does: one
    /// compare-and-swap in the cell's life, a load on every later record.
    #[inline]
    pub(crate) fn is(&self, me: u32) -> bool {
        match self.0.load(Ordering::Relaxed) {
            owner if owner == me => true,
            NONE if me != NOBODY => self
                .0
                .compare_exchange(NONE, me, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok(),
            _ => false,
        }
    }
}
