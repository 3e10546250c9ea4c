//! The per-meter cache of instrument sets.
//!
//! Every type that derives [`Instruments`](crate::Instruments) owns one
//! process-wide [`SetSlot`]: a small integer handed out on first use. A meter's
//! cache is a segmented array indexed by that integer, so a lookup is two
//! atomic loads and a type check: no hashing, no lock, no allocation.
//! Segments double in size and are allocated on demand, so the cache never
//! moves a set once it is built and never needs a lock to grow.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Sets held by the first segment; later segments double.
const FIRST_SEGMENT: usize = 16;
/// Enough segments for more set types than any process declares.
const SEGMENTS: usize = 24;

type Entry = OnceLock<Box<dyn Any + Send + Sync>>;

/// The process-wide cache index of one instrument-set type.
///
/// Declare one `static` per type and return it from
/// [`Instruments::slot`](crate::Instruments::slot); the derive does this for
/// you.
#[derive(Debug)]
pub struct SetSlot(AtomicUsize);

impl SetSlot {
    /// A slot that takes its index on first use.
    #[allow(clippy::new_without_default)] // only ever used in a `static`
    pub const fn new() -> Self {
        SetSlot(AtomicUsize::new(0))
    }

    /// The slot's index, assigned on first call.
    #[inline]
    pub fn index(&self) -> usize {
        match self.0.load(Ordering::Relaxed) {
            0 => self.assign(),
            id => id - 1,
        }
    }

    #[cold]
    fn assign(&self) -> usize {
        static NEXT: AtomicUsize = AtomicUsize::new(1);
        let fresh = NEXT.fetch_add(1, Ordering::Relaxed);
        // Two threads may race here; the first to store wins and the loser's
        // number is simply never used.
        match self
            .0
            .compare_exchange(0, fresh, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => fresh - 1,
            Err(winner) => winner - 1,
        }
    }
}

/// Sets built for one meter, each built once and kept until the meter's last
/// handle is dropped.
pub(crate) struct SetCache {
    /// Segment 0, inline: the sets of a typical process are found with one
    /// atomic load fewer.
    first: [Entry; FIRST_SEGMENT],
    /// Segments 1.. (segment 0 of this array is unused).
    segments: [OnceLock<Box<[Entry]>>; SEGMENTS],
}

impl SetCache {
    pub(crate) fn new() -> Self {
        SetCache {
            first: std::array::from_fn(|_| OnceLock::new()),
            segments: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// The set in `slot`, built by `build` if this is the first use.
    ///
    /// Concurrent first uses block on one builder, so a set is built once.
    #[inline]
    pub(crate) fn get_or_build<S: Any + Send + Sync>(
        &self,
        slot: &SetSlot,
        build: impl FnOnce() -> S,
    ) -> Option<&S> {
        let entry = self.entry(slot.index())?;
        let set = entry.get_or_init(|| Box::new(build()));
        set.downcast_ref::<S>()
    }

    /// How many sets this cache holds.
    pub(crate) fn len(&self) -> usize {
        self.segments
            .iter()
            .filter_map(OnceLock::get)
            .flat_map(|segment| segment.iter())
            .chain(self.first.iter())
            .filter(|entry| entry.get().is_some())
            .count()
    }

    #[inline]
    fn entry(&self, index: usize) -> Option<&Entry> {
        if let Some(entry) = self.first.get(index) {
            return Some(entry);
        }
        self.later_entry(index)
    }

    #[cold]
    fn later_entry(&self, index: usize) -> Option<&Entry> {
        let (segment, offset) = locate(index);
        let segment = self.segments.get(segment)?.get_or_init(|| {
            let len = FIRST_SEGMENT << segment;
            (0..len).map(|_| OnceLock::new()).collect()
        });
        segment.get(offset)
    }
}

/// Segment `k` holds indices `[F·(2^k − 1), F·(2^(k+1) − 1))` for `F = FIRST_SEGMENT`.
#[inline]
fn locate(index: usize) -> (usize, usize) {
    let biased = index / FIRST_SEGMENT + 1;
    let segment = (usize::BITS - 1 - biased.leading_zeros()) as usize;
    let offset = index - FIRST_SEGMENT * ((1 << segment) - 1);
    (segment, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_covers_every_index_once() {
        let mut expected = (0, 0);
        for index in 0..FIRST_SEGMENT * 15 {
            assert_eq!(locate(index), expected, "index {index}");
            expected.1 += 1;
            if expected.1 == FIRST_SEGMENT << expected.0 {
                expected = (expected.0 + 1, 0);
            }
        }
    }

    #[test]
    fn builds_once_and_returns_the_same_set() {
        static SLOT: SetSlot = SetSlot::new();
        let cache = SetCache::new();
        let mut builds = 0;
        let first = cache.get_or_build(&SLOT, || {
            builds += 1;
            7_u32
        });
        assert_eq!(first, Some(&7));
        let second = cache.get_or_build(&SLOT, || 8_u32);
        assert_eq!(second, Some(&7));
        assert_eq!(builds, 1);
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn slots_far_apart_live_in_later_segments() {
        let cache = SetCache::new();
        let slot = SetSlot(AtomicUsize::new(1_000));
        assert_eq!(cache.get_or_build(&slot, || "far"), Some(&"far"));
        assert_eq!(cache.len(), 1);
    }
}
