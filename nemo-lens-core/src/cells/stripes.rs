//! Stripes a series gains when threads collide on it: a table of slots made
//! on the first collision, each slot's cell made when a thread first lands
//! on it, all freed with the series.

use std::ptr;

use super::owner::Owner;
use super::sync::{AtomicPtr, Ordering};

/// The most stripes one series ever has, however many cores: past a few
/// dozen, collisions are rare enough that more memory buys nothing.
pub const MAX_STRIPES: usize = 64;

/// The stripes a contended series may gain on this machine: twice the cores
/// (so that threads hashed at random seldom share one), rounded up to a
/// power of two, at most [`MAX_STRIPES`].
pub fn stripe_limit() -> usize {
    #[cfg(nemo_lens_loom)]
    {
        2
    }
    #[cfg(not(nemo_lens_loom))]
    {
        static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *LIMIT.get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            (cores * 2).next_power_of_two().min(MAX_STRIPES)
        })
    }
}

/// A cell on cache lines of its own (128 bytes: adjacent-line prefetch
/// pairs 64-byte lines on x86-64), so two stripes never share a line.
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

pub(crate) struct Table<C> {
    slots: Box<[AtomicPtr<Padded<C>>]>,
    /// Each slot's owner, where a cell's kind has one writer per cell
    /// (explicit histograms): apart from the cells, read by every thread
    /// that probes a slot and written once.
    owners: Box<[Owner]>,
    /// A cell every thread may write, taking turns: where a cell's kind
    /// keeps one for threads that find no stripe of their own.
    commons: AtomicPtr<Padded<C>>,
}

impl<C> Table<C> {
    /// The stripe `probe` selects, made with `make` if no thread has landed
    /// on it before.
    #[inline]
    pub(crate) fn cell(&self, probe: u32, make: impl FnOnce() -> C) -> &C {
        // The table's length is a power of two.
        let slot = &self.slots[probe as usize & (self.slots.len() - 1)];
        let cell = slot.load(Ordering::Acquire);
        if !cell.is_null() {
            // SAFETY: a published cell is freed only by `Stripes::drop`,
            // which `&self` (borrowed from the `Stripes`) rules out.
            return unsafe { &(*cell).0 };
        }
        Self::make_cell(slot, make)
    }

    /// Whether thread `me` owns the slot `probe` selects, claiming it if
    /// nobody does.
    #[inline]
    pub(crate) fn owned_by(&self, probe: u32, me: u32) -> bool {
        self.owners[probe as usize & (self.owners.len() - 1)].is(me, || 0)
    }

    /// The commons, made with `make` on first use.
    #[inline]
    pub(crate) fn commons(&self, make: impl FnOnce() -> C) -> &C {
        let cell = self.commons.load(Ordering::Acquire);
        if !cell.is_null() {
            // SAFETY: as in `cell`.
            return unsafe { &(*cell).0 };
        }
        Self::make_cell(&self.commons, make)
    }

    #[cold]
    #[inline(never)]
    fn make_cell(slot: &AtomicPtr<Padded<C>>, make: impl FnOnce() -> C) -> &C {
        let made = Box::into_raw(Box::new(Padded(make())));
        match slot.compare_exchange(ptr::null_mut(), made, Ordering::AcqRel, Ordering::Acquire) {
            // SAFETY: published just now; freed only with the series.
            Ok(_) => unsafe { &(*made).0 },
            Err(winner) => {
                // SAFETY: `made` was never published, so this thread owns it.
                drop(unsafe { Box::from_raw(made) });
                // SAFETY: as for any published cell.
                unsafe { &(*winner).0 }
            }
        }
    }
}

/// The stripes of one series: a null pointer until threads collide.
pub(crate) struct Stripes<C> {
    table: AtomicPtr<Table<C>>,
}

impl<C> Stripes<C> {
    pub(crate) fn new() -> Self {
        Stripes {
            table: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The table, once the series is striped.
    #[inline]
    pub(crate) fn table(&self) -> Option<&Table<C>> {
        let table = self.table.load(Ordering::Acquire);
        // SAFETY: a published table is freed only by `drop`.
        (!table.is_null()).then(|| unsafe { &*table })
    }

    /// The table, made now if no collision made it before.
    #[cold]
    #[inline(never)]
    pub(crate) fn inflate(&self) -> &Table<C> {
        if let Some(table) = self.table() {
            return table;
        }
        let slots = (0..stripe_limit())
            .map(|_| AtomicPtr::new(ptr::null_mut()))
            .collect();
        let owners = (0..stripe_limit()).map(|_| Owner::new()).collect();
        let made = Box::into_raw(Box::new(Table {
            slots,
            owners,
            commons: AtomicPtr::new(ptr::null_mut()),
        }));
        match self.table.compare_exchange(
            ptr::null_mut(),
            made,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            // SAFETY: published just now; freed only by `drop`.
            Ok(_) => unsafe { &*made },
            Err(winner) => {
                // SAFETY: never published, so still this thread's.
                drop(unsafe { Box::from_raw(made) });
                // SAFETY: as for any published table.
                unsafe { &*winner }
            }
        }
    }

    /// Runs `f` on every stripe made so far, the commons included.
    pub(crate) fn for_each(&self, mut f: impl FnMut(&C)) {
        let Some(table) = self.table() else { return };
        for slot in table.slots.iter().chain([&table.commons]) {
            let cell = slot.load(Ordering::Acquire);
            if !cell.is_null() {
                // SAFETY: as in `Table::cell`.
                f(unsafe { &(*cell).0 });
            }
        }
    }

    /// How many stripes have been made, the commons not counted.
    pub(crate) fn count(&self) -> usize {
        self.table().map_or(0, |table| {
            table
                .slots
                .iter()
                .filter(|slot| !slot.load(Ordering::Acquire).is_null())
                .count()
        })
    }
}

impl<C> Drop for Stripes<C> {
    fn drop(&mut self) {
        let table = self.table.load(Ordering::Acquire);
        if table.is_null() {
            return;
        }
        // SAFETY: `&mut self`: no thread holds a cell or the table.
        let table = unsafe { Box::from_raw(table) };
        for slot in table.slots.iter().chain([&table.commons]) {
            let cell = slot.load(Ordering::Acquire);
            if !cell.is_null() {
                // SAFETY: as above.
                drop(unsafe { Box::from_raw(cell) });
            }
        }
    }
}

// SAFETY: the stripes own their cells (shared between threads only as `&C`).
unsafe impl<C: Send + Sync> Send for Stripes<C> {}
// SAFETY: as above.
unsafe impl<C: Send + Sync> Sync for Stripes<C> {}
