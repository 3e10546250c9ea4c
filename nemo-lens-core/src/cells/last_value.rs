//! The last value of a gauge series: one word, no lock.

use std::fmt;
use std::marker::PhantomData;

use super::sum::mark_recorded;
use super::sync::{AtomicBool, AtomicU64, Ordering};
use super::CellValue;

/// The last value recorded into one gauge series.
///
/// A write that would store the value already there is skipped, so threads
/// reporting the same reading share the cache line instead of taking it
/// from each other.
///
/// ```
/// use nemo_lens::cells::LastValue;
///
/// let depth = LastValue::new(0_i64);
/// depth.record(7);
/// assert_eq!(depth.value(), 7);
/// ```
// A cache line of its own, as `Sum`.
#[repr(align(64))]
pub struct LastValue<T: CellValue> {
    bits: AtomicU64,
    // Unset until the first record: a gauge series that was only bound
    // exports nothing (see `Sum`).
    recorded: AtomicBool,
    // See `Sum::take_touched`.
    touched: AtomicBool,
    value: PhantomData<T>,
}

impl<T: CellValue> LastValue<T> {
    /// A cell holding `initial`, as if it had been recorded.
    pub fn new(initial: T) -> Self {
        LastValue {
            bits: AtomicU64::new(initial.to_bits()),
            recorded: AtomicBool::new(true),
            touched: AtomicBool::new(true),
            value: PhantomData,
        }
    }

    /// A cell that holds no value until its first record.
    ///
    /// ```
    /// use nemo_lens::cells::LastValue;
    ///
    /// let kl = LastValue::<f64>::unset();
    /// assert_eq!(kl.get(), None);
    /// kl.record(0.0);
    /// assert_eq!(kl.get(), Some(0.0));
    /// ```
    pub fn unset() -> Self {
        LastValue {
            bits: AtomicU64::new(T::ZERO.to_bits()),
            recorded: AtomicBool::new(false),
            touched: AtomicBool::new(false),
            value: PhantomData,
        }
    }

    /// Replaces the value.
    #[inline]
    pub fn record(&self, value: T) {
        let bits = value.to_bits();
        if self.bits.load(Ordering::Relaxed) != bits {
            self.bits.store(bits, Ordering::Relaxed);
        }
        mark_recorded(&self.recorded, &self.touched);
    }

    /// Whether a value was recorded since the last call, and lowers the
    /// mark (see [`Sum::take_touched`](super::Sum::take_touched)).
    pub fn take_touched(&self) -> bool {
        self.touched.swap(false, Ordering::Relaxed)
    }

    /// The value last recorded (0 for a cell made by [`unset`](Self::unset)
    /// and never recorded).
    pub fn value(&self) -> T {
        T::from_bits(self.bits.load(Ordering::Relaxed))
    }

    /// The value last recorded, `None` before the first record.
    pub fn get(&self) -> Option<T> {
        // Acquire: a reader that sees the flag sees the value that set it.
        self.recorded.load(Ordering::Acquire).then(|| self.value())
    }
}

impl<T: CellValue + fmt::Debug> fmt::Debug for LastValue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LastValue").field(&self.get()).finish()
    }
}
