//! The last value of a gauge series: one word, no lock.

use std::fmt;
use std::marker::PhantomData;

use super::sync::{AtomicU64, Ordering};
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
    value: PhantomData<T>,
}

impl<T: CellValue> LastValue<T> {
    /// A cell holding `initial`.
    pub fn new(initial: T) -> Self {
        LastValue {
            bits: AtomicU64::new(initial.to_bits()),
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
    }

    /// The value last recorded.
    pub fn value(&self) -> T {
        T::from_bits(self.bits.load(Ordering::Relaxed))
    }
}

impl<T: CellValue + fmt::Debug> fmt::Debug for LastValue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("LastValue").field(&self.value()).finish()
    }
}
