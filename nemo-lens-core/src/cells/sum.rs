//! A running sum (counters and up-down counters), striped on contention.

use std::fmt;
use std::marker::PhantomData;

use super::probe;
use super::stripes::{Stripes, Table};
use super::sync::{AtomicBool, AtomicU64, Ordering};
use super::CellValue;

/// Stripes a thread tries, moving on at each collision, before it waits
/// its turn on the last one.
pub(crate) const ATTEMPTS: usize = 3;

/// The running sum of one counter or up-down counter series.
///
/// ```
/// use nemo_lens::cells::Sum;
///
/// let tokens = Sum::<u64>::new();
/// std::thread::scope(|scope| {
///     for _ in 0..4 {
///         scope.spawn(|| (0..1000).for_each(|_| tokens.add(2)));
///     }
/// });
/// assert_eq!(tokens.value(), 8000);
/// ```
// A cache line of its own: two series recorded by two threads must not
// share one, or each write takes the line from the other (false sharing,
// which no compare-and-swap fails on, so it would never stripe).
#[repr(align(64))]
pub struct Sum<T: CellValue> {
    base: AtomicU64,
    // Set by the first addition, so a series that was only bound (a set's
    // instruments are bound when it is first built) exports nothing.
    recorded: AtomicBool,
    // Raised by every addition, lowered by each sweep for idle series
    // (`take_touched`).
    touched: AtomicBool,
    stripes: Stripes<AtomicU64>,
    value: PhantomData<T>,
}

impl<T: CellValue> Sum<T> {
    /// Zero, in one cell.
    pub fn new() -> Self {
        Sum {
            base: AtomicU64::new(T::ZERO.to_bits()),
            recorded: AtomicBool::new(false),
            touched: AtomicBool::new(false),
            stripes: Stripes::new(),
            value: PhantomData,
        }
    }

    /// Adds `value`. Integers wrap at their bounds.
    #[inline]
    pub fn add(&self, value: T) {
        if let Some(table) = self.stripes.table() {
            add_striped::<T>(table, value);
        } else {
            let current = self.base.load(Ordering::Relaxed);
            let next = T::from_bits(current).add(value).to_bits();
            if self
                .base
                .compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
            {
                self.add_contended(value);
            }
        }
        mark_recorded(&self.recorded, &self.touched);
    }

    /// Whether anything was added since the last call (the first call:
    /// since the cell was made), and lowers the mark: how a sweep for idle
    /// series tells a series in use.
    ///
    /// ```
    /// use nemo_lens::cells::Sum;
    ///
    /// let requests = Sum::<u64>::new();
    /// requests.add(1);
    /// assert!(requests.take_touched());
    /// assert!(!requests.take_touched());
    /// ```
    pub fn take_touched(&self) -> bool {
        self.touched.swap(false, Ordering::Relaxed)
    }

    /// Whether anything was added, 0 included: a series exports from its
    /// first addition, not from its creation.
    ///
    /// ```
    /// use nemo_lens::cells::Sum;
    ///
    /// let errors = Sum::<u64>::new();
    /// assert!(!errors.is_recorded());
    /// errors.add(0);
    /// assert!(errors.is_recorded());
    /// ```
    #[inline]
    pub fn is_recorded(&self) -> bool {
        // Acquire pairs with the release in `mark_recorded`: a reader that
        // sees the flag sees the addition that set it.
        self.recorded.load(Ordering::Acquire)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn add_contended(&self, value: T) {
        add_striped::<T>(self.stripes.inflate(), value);
    }

    /// The sum of everything added so far (an addition running meanwhile
    /// may or may not be in it, and is in the next reading).
    pub fn value(&self) -> T {
        let mut sum = T::from_bits(self.base.load(Ordering::Relaxed));
        self.stripes
            .for_each(|cell| sum = sum.add(T::from_bits(cell.load(Ordering::Relaxed))));
        sum
    }

    /// How many stripes contention has made (0 while uncontended).
    pub fn stripes(&self) -> usize {
        self.stripes.count()
    }
}

/// Marks a write: `recorded` for good, `touched` until the next sweep.
/// Only the first write after a sweep stores: later ones read a shared
/// line, so threads do not take it from each other. `touched` implies
/// `recorded`, so one load decides.
#[inline]
pub(super) fn mark_recorded(recorded: &AtomicBool, touched: &AtomicBool) {
    if !touched.load(Ordering::Relaxed) {
        mark_slow(recorded, touched);
    }
}

#[cold]
fn mark_slow(recorded: &AtomicBool, touched: &AtomicBool) {
    if !recorded.load(Ordering::Relaxed) {
        recorded.store(true, Ordering::Release);
    }
    touched.store(true, Ordering::Relaxed);
}

/// Raises `touched` unless it is up: one load per write, a store once per
/// sweep.
#[inline]
pub(super) fn touch(touched: &AtomicBool) {
    if !touched.load(Ordering::Relaxed) {
        touched.store(true, Ordering::Relaxed);
    }
}

#[inline]
fn add_striped<T: CellValue>(table: &Table<AtomicU64>, value: T) {
    let fresh = || AtomicU64::new(T::ZERO.to_bits());
    let mut probe = probe::current();
    for _ in 0..ATTEMPTS {
        let cell = table.cell(probe, fresh);
        let current = cell.load(Ordering::Relaxed);
        let next = T::from_bits(current).add(value).to_bits();
        if cell
            .compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
        probe = probe::advance();
    }
    let cell = table.cell(probe, fresh);
    let mut current = cell.load(Ordering::Relaxed);
    loop {
        let next = T::from_bits(current).add(value).to_bits();
        match cell.compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return,
            Err(now) => current = now,
        }
    }
}

impl<T: CellValue> Default for Sum<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: CellValue + fmt::Debug> fmt::Debug for Sum<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sum")
            .field("value", &self.value())
            .field("recorded", &self.is_recorded())
            .field("stripes", &self.stripes())
            .finish()
    }
}
