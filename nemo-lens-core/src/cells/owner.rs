//! A small number per live thread, so that a histogram cell can belong to
//! one thread: its owner writes it with plain loads and stores (no locked
//! instruction), and no other thread writes it.
//!
//! A thread draws its number on its first record and gives it back when
//! it exits, so numbers stay small and a later thread takes one over with
//! the cells it owned (the release and the draw take one lock in turn, so
//! the old owner's writes come before the new owner's). A thread whose
//! locals are being torn down records as a thread without a number.
//!
//! A thread's word and a series' owner word carry a flag each beside the
//! number, so that one compare, the one that tells the owner, also tells
//! that a record needs nothing more: [`LOOK`] on a thread that may be in a
//! span, [`ALWAYS`] on a series that keeps every record's exemplar. The
//! owner's record with neither flag is the whole record; any flag sends it
//! the long way, which strips them.

use std::cell::Cell;

use super::sync::{AtomicU32, Ordering};

/// The bits of a word that number a thread.
pub(crate) const NUMBER: u32 = (1 << 30) - 1;
/// A thread word's flag: a span may be current or named on this thread, so
/// its histogram records look for an exemplar. It mirrors what the exemplar
/// module knows of the thread's context (set unless it knows of no span),
/// once a histogram keeps exemplars; before that it is clear, and a series
/// made to keep them is first recorded the long way, which learns.
pub(crate) const LOOK: u32 = 1 << 30;
/// An owner word's flag: the series keeps an exemplar of every record.
pub(crate) const ALWAYS: u32 = 1 << 31;
/// No number drawn yet.
pub(crate) const NONE: u32 = 0;
/// A thread that owns nothing: one that has given its number back, or
/// cannot keep one.
pub(crate) const NOBODY: u32 = NUMBER;
/// Whether thread words carry [`LOOK`]: where the span observer keeps it
/// (the `span-observer` feature) and records keep exemplars. Elsewhere a
/// thread word is its number alone, and the owner's record checks its
/// series' exemplars itself.
pub(crate) const FLAGGED: bool = cfg!(all(
    feature = "span-observer",
    not(nemo_lens_no_exemplars),
    not(nemo_lens_loom)
));
/// An owner word no thread has claimed: no thread word equals it (none has
/// [`ALWAYS`]).
const UNCLAIMED: u32 = u32::MAX;

#[cfg(not(nemo_lens_loom))]
mod numbers {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::{Mutex, PoisonError};

    use super::{Cell, LOOK, NOBODY};

    static FREE: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    static NEXT: AtomicU32 = AtomicU32::new(1);

    /// Gives the thread's number back when its locals are dropped.
    pub(super) struct Release;

    impl Drop for Release {
        fn drop(&mut self) {
            let word = super::ID.with(|id| id.replace(NOBODY | (id.get() & super::LOOK)));
            let id = word & super::NUMBER;
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
        // Past a billion numbers held at once, no more owners: the count
        // stops at NOBODY rather than wrap to numbers live threads hold.
        let id = reused.unwrap_or_else(|| {
            NEXT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < NOBODY).then_some(n + 1)
            })
            .unwrap_or(NOBODY)
        });
        ID.with(|cell| cell.set(id | (cell.get() & LOOK)));
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
        ID.with(|cell| cell.set(id | (cell.get() & super::LOOK)));
        id
    }
}

use numbers::ID;

/// This thread's word: its number (or [`NONE`] before its first record)
/// and [`LOOK`]. What a record compares with its series' owner word.
#[inline]
pub(crate) fn word() -> u32 {
    ID.try_with(Cell::get).unwrap_or(NOBODY)
}

/// The number in this thread's `word`, drawn if it has none yet.
#[inline]
pub(crate) fn number(word: u32) -> u32 {
    match word & NUMBER {
        NONE => numbers::draw(),
        id => id,
    }
}

/// This thread's number, drawn on first use; [`NOBODY`] while its locals
/// are torn down.
#[cfg(test)]
pub(crate) fn id() -> u32 {
    number(word())
}

/// Sets or clears this thread's [`LOOK`] flag.
#[inline]
pub(crate) fn look(on: bool) {
    if !FLAGGED {
        return;
    }
    let _ = ID.try_with(|id| id.set((id.get() & !LOOK) | if on { LOOK } else { 0 }));
}

/// Which thread owns a cell, and with the series' first cell whether every
/// record keeps an exemplar ([`ALWAYS`]): kept apart from the cell's own
/// words, so that other threads checking it do not read the line its owner
/// writes.
pub(crate) struct Owner(AtomicU32);

impl Owner {
    pub(crate) fn new() -> Self {
        Owner(AtomicU32::new(UNCLAIMED))
    }

    /// Whether this owner word is thread word `word`: the owner, no flag on
    /// either side (the record needs nothing but its write).
    #[inline]
    pub(crate) fn is_plainly(&self, word: u32) -> bool {
        self.0.load(Ordering::Relaxed) == word
    }

    /// Whether thread `me` (a number) owns the cell, claiming it with
    /// `flags()` if nobody does: one compare-and-swap in the cell's life, a
    /// load on every later record.
    #[inline]
    pub(crate) fn is(&self, me: u32, flags: impl FnOnce() -> u32) -> bool {
        match self.0.load(Ordering::Relaxed) {
            UNCLAIMED => {
                me != NOBODY
                    && self
                        .0
                        .compare_exchange(
                            UNCLAIMED,
                            me | flags(),
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        )
                        .is_ok()
            }
            owner => owner & NUMBER == me,
        }
    }
}
