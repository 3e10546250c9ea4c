//! An explicit-bucket histogram series, striped on contention.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

#[cfg(not(nemo_lens_no_exemplars))]
use super::exemplars::Exemplars;
use super::owner::{self, Owner};
use super::probe::GOLDEN;
use super::stripes::{Padded, Stripes};
use super::sum::{touch, ATTEMPTS};
use super::sync::{spin_wait, AtomicBool, AtomicU64, Ordering};
use super::CellValue;
use crate::exemplar::{Exemplar, ExemplarFilter, SpanOnce};

const WORDS_PER_LINE: usize = 16;
/// The commons' lock: 1 while a thread records into it (unused in owned
/// cells, whose owners are kept apart: see [`Owner`]).
const LOCK: usize = 0;
const SUM: usize = 1;
const MIN: usize = 2;
const MAX: usize = 3;
const FIRST_BUCKET: usize = 4;

/// One copy of a histogram's state: a lock for the commons, sum, minimum,
/// maximum and the bucket counts, on cache lines of its own. The count is
/// not kept: it is the sum of the bucket counts, so the two always agree.
///
/// A cell has one writer at a time, so a record reads and writes each word
/// with plain loads and stores: its owner thread's (the series' first cell
/// belongs to the first thread that records, a stripe to the first that
/// lands on it), or, in the commons, whichever thread holds its lock.
/// Readers only read the words as they are, a record's bucket (released
/// last) bringing its sum and extremes with it; the one word a reader
/// writes is an extreme it resets (a delta reader's next interval): a
/// record racing that reset may leave its value as the extreme of either
/// interval, or, having read the old extreme first, of neither.
struct Cell {
    lines: Box<[Padded<[AtomicU64; WORDS_PER_LINE]>]>,
}

impl Cell {
    fn new<T: CellValue>(buckets: usize) -> Self {
        let words = FIRST_BUCKET + buckets;
        let lines = (0..words.div_ceil(WORDS_PER_LINE))
            .map(|_| Padded(std::array::from_fn(|_| AtomicU64::new(0))))
            .collect();
        let cell = Cell { lines };
        cell.word(SUM).store(T::ZERO.to_bits(), Ordering::Relaxed);
        cell.word(MIN).store(T::MAX.to_bits(), Ordering::Relaxed);
        cell.word(MAX).store(T::MIN.to_bits(), Ordering::Relaxed);
        cell
    }

    #[inline]
    fn word(&self, index: usize) -> &AtomicU64 {
        &self.lines[index / WORDS_PER_LINE].0[index % WORDS_PER_LINE]
    }

    /// Records `value` in `bucket` in the commons, waiting for its lock
    /// (held for a record's few stores, unless its holder was preempted).
    fn record_locked<T: CellValue>(&self, bucket: usize, value: T) {
        let lock = self.word(LOCK);
        let mut spins = 0_u32;
        while lock
            .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            spins = spins.saturating_add(1);
            spin_wait(spins);
        }
        self.write(bucket, value);
        lock.store(0, Ordering::Release);
    }

    /// The record itself, by the cell's one writer.
    #[inline]
    fn write<T: CellValue>(&self, bucket: usize, value: T) {
        let sum = self.word(SUM);
        let next = T::from_bits(sum.load(Ordering::Relaxed)).add(value);
        sum.store(next.to_bits(), Ordering::Relaxed);
        let min = self.word(MIN);
        if value < T::from_bits(min.load(Ordering::Relaxed)) {
            min.store(value.to_bits(), Ordering::Relaxed);
        }
        let max = self.word(MAX);
        if value > T::from_bits(max.load(Ordering::Relaxed)) {
            max.store(value.to_bits(), Ordering::Relaxed);
        }
        // Release: a collection that counts this observation (Acquire) also
        // sees its sum and extremes.
        let count = self.word(FIRST_BUCKET + bucket);
        count.store(count.load(Ordering::Relaxed) + 1, Ordering::Release);
    }
}

/// Bounds up to which [`bucket_of`] counts instead of searching.
const LINEAR_BOUNDS: usize = 32;

/// The bucket of `value`: the first whose bound is at least `value` (the
/// SDK's rule), or the last. For the usual dozen or two bounds, counting the
/// bounds below `value` compiles to independent vector compares, where a
/// binary search waits on each load and compare in turn; a profile of the
/// inference set found the search half of a record's time.
#[inline]
pub(super) fn bucket_of(bounds: &[f64], value: f64) -> usize {
    if bounds.len() <= LINEAR_BOUNDS {
        bounds.iter().map(|bound| usize::from(*bound < value)).sum()
    } else {
        bounds.partition_point(|bound| *bound < value)
    }
}

/// What a histogram series holds at one collection.
#[derive(Debug, Clone, PartialEq)]
pub struct HistogramSnapshot<T> {
    /// Observations per bucket: one more than there are bounds, the last
    /// for values above every bound.
    pub bucket_counts: Vec<u64>,
    /// Observations in all: the sum of `bucket_counts`.
    pub count: u64,
    /// The sum of the observations.
    pub sum: T,
    /// The smallest observation; `None` before the first.
    pub min: Option<T>,
    /// The largest observation; `None` before the first.
    pub max: Option<T>,
}

/// One explicit-bucket histogram series: buckets `(-inf, b0]`, `(b0, b1]`,
/// ... `(bn, +inf)` as OpenTelemetry defines them.
///
/// ```
/// use nemo_lens::cells::Histogram;
///
/// let latency = Histogram::<f64>::new([0.3, 1.0].into());
/// latency.record(0.25);
/// latency.record(0.5);
/// latency.record(1.0);
/// latency.record(4.0);
/// let snapshot = latency.snapshot();
/// assert_eq!(snapshot.bucket_counts, [1, 2, 1]);
/// assert_eq!((snapshot.count, snapshot.sum), (4, 5.75));
/// assert_eq!((snapshot.min, snapshot.max), (Some(0.25), Some(4.0)));
/// ```
pub struct Histogram<T: CellValue> {
    bounds: Arc<[f64]>,
    // Beside the bounds every record reads; see `Sum::take_touched`.
    touched: AtomicBool,
    /// `None` unless the exemplar filter keeps some: a record then pays one
    /// predictable branch.
    #[cfg(not(nemo_lens_no_exemplars))]
    exemplars: Option<Box<Exemplars>>,
    /// The thread that records into `base`.
    owner: Owner,
    base: Cell,
    stripes: Stripes<Cell>,
    value: PhantomData<T>,
}

impl<T: CellValue> Histogram<T> {
    /// An empty series with these bucket bounds (ascending), without
    /// exemplars.
    pub fn new(bounds: Arc<[f64]>) -> Self {
        Self::with_exemplars(bounds, ExemplarFilter::AlwaysOff)
    }

    /// An empty series that keeps the latest exemplar of each bucket from
    /// the records `filter` keeps.
    ///
    /// ```
    /// use nemo_lens::cells::Histogram;
    /// use nemo_lens::exemplar::{self, ExemplarFilter, SpanIds};
    /// use nemo_lens::opentelemetry::trace::{SpanId, TraceId};
    ///
    /// let ttft = Histogram::<f64>::with_exemplars([0.1, 1.0].into(), ExemplarFilter::TraceBased);
    /// ttft.record(0.05); // no sampled span: no exemplar
    /// let request = SpanIds::new(TraceId::from(0xab_u128), SpanId::from(0xcd_u64));
    /// exemplar::in_span(Some(request), || ttft.record(0.4));
    /// let exemplars = ttft.exemplars();
    /// assert_eq!(exemplars.len(), 1);
    /// assert_eq!((exemplars[0].value, exemplars[0].span), (0.4, Some(request)));
    /// ```
    pub fn with_exemplars(bounds: Arc<[f64]>, filter: ExemplarFilter) -> Self {
        #[cfg(nemo_lens_no_exemplars)]
        let _ = filter;
        let buckets = bounds.len() + 1;
        Histogram {
            #[cfg(not(nemo_lens_no_exemplars))]
            exemplars: Exemplars::new(filter, buckets),
            bounds,
            touched: AtomicBool::new(false),
            owner: Owner::new(),
            base: Cell::new::<T>(buckets),
            stripes: Stripes::new(),
            value: PhantomData,
        }
    }

    /// The bucket bounds.
    pub fn bounds(&self) -> &Arc<[f64]> {
        &self.bounds
    }

    /// Records one observation.
    #[inline]
    pub fn record(&self, value: T) {
        self.record_spanned(value, None);
    }

    /// Records one observation made in `span`: what a set recording
    /// several histograms at once calls, so the context is read once.
    #[inline]
    pub fn record_in(&self, value: T, span: &SpanOnce) {
        self.record_spanned(value, Some(span));
    }

    /// A record, and the span read for it if the series keeps exemplars:
    /// `span`'s, or the context's now.
    ///
    /// The usual record (this thread owns the first cell, and either no
    /// span can be current here or the series keeps no exemplars) is told
    /// by one compare of the thread's word with the owner word: see
    /// [`owner`]. Everything else goes the long way.
    #[inline]
    fn record_spanned(&self, value: T, span: Option<&SpanOnce>) {
        let bucket = bucket_of(&self.bounds, value.to_f64());
        let word = owner::word();
        if self.owner.is_plainly(word) {
            self.base.write(bucket, value);
            touch(&self.touched);
            if !owner::FLAGGED {
                // Thread words without flags: the exemplar is this record's
                // to check.
                self.offer(bucket, value, span);
            }
        } else {
            // Whole, exemplar included, so that no path keeps the value
            // across a call: that made every record save it (and registers
            // beside), exemplar or not.
            self.record_long_way(word, bucket, value, span);
        }
    }

    /// Offers the exemplar of a record, where the series keeps them.
    #[inline(always)]
    fn offer(&self, bucket: usize, value: T, span: Option<&SpanOnce>) {
        // Built with `--cfg nemo_lens_no_exemplars` (what the exemplar
        // benchmark compares against), a record has no exemplar code at all.
        #[cfg(not(nemo_lens_no_exemplars))]
        if let Some(exemplars) = &self.exemplars {
            exemplars.offer_at(bucket, value.to_f64(), span);
        }
        #[cfg(nemo_lens_no_exemplars)]
        let _ = (bucket, value, span);
    }

    /// The flags this series' owner word carries: [`owner::ALWAYS`] where
    /// every record keeps an exemplar.
    fn owner_flags(&self) -> u32 {
        #[cfg(not(nemo_lens_no_exemplars))]
        if owner::FLAGGED
            && self
                .exemplars
                .as_ref()
                .is_some_and(|e| e.filter() == ExemplarFilter::AlwaysOn)
        {
            return owner::ALWAYS;
        }
        0
    }

    /// The exemplars held, oldest first: at most one per bucket, the
    /// latest there. Kept across collections (a scraper that reads them
    /// again sees the same ones, which Prometheus stores once).
    pub fn exemplars(&self) -> Vec<Exemplar> {
        #[cfg(not(nemo_lens_no_exemplars))]
        return self
            .exemplars
            .as_deref()
            .map(Exemplars::read)
            .unwrap_or_default();
        #[cfg(nemo_lens_no_exemplars)]
        Vec::new()
    }

    /// Whether anything was recorded since the last call, and lowers the
    /// mark (see [`Sum::take_touched`](super::Sum::take_touched)).
    pub fn take_touched(&self) -> bool {
        self.touched.swap(false, Ordering::Relaxed)
    }

    /// A record by a thread that does not own the first cell (`record`
    /// by any other thread than the first to record).
    #[cfg(test)]
    pub(super) fn record_contended(&self, bucket: usize, value: T) {
        self.record_in_stripes(owner::id(), bucket, value);
        touch(&self.touched);
        self.offer(bucket, value, None);
    }

    /// A record into the commons, as a thread that finds no stripe of its
    /// own makes.
    #[cfg(test)]
    pub(super) fn record_in_commons(&self, bucket: usize, value: T) {
        let buckets = self.bounds.len() + 1;
        let table = self.stripes.inflate();
        table
            .commons(|| Cell::new::<T>(buckets))
            .record_locked(bucket, value);
    }

    /// A record the owner's compare did not settle: by another thread, by
    /// the owner while a span may be current, into a series that keeps
    /// every exemplar, or this thread's first.
    #[inline(never)]
    fn record_long_way(&self, word: u32, bucket: usize, value: T, span: Option<&SpanOnce>) {
        if owner::FLAGGED {
            crate::exemplar::learn_context();
        }
        let me = owner::number(word);
        if self.owner.is(me, || self.owner_flags()) {
            self.base.write(bucket, value);
        } else {
            self.record_in_stripes(me, bucket, value);
        }
        touch(&self.touched);
        self.offer(bucket, value, span);
    }

    /// Records into a stripe thread `me` owns or claims (it tries a few,
    /// starting from one its number picks), else the commons.
    #[inline]
    fn record_in_stripes(&self, me: u32, bucket: usize, value: T) {
        let table = match self.stripes.table() {
            Some(table) => table,
            None => self.stripes.inflate(),
        };
        let buckets = self.bounds.len() + 1;
        let fresh = || Cell::new::<T>(buckets);
        let mut probe = me.wrapping_mul(GOLDEN);
        let mut owned = None;
        for _ in 0..ATTEMPTS {
            if table.owned_by(probe, me) {
                owned = Some(probe);
                break;
            }
            probe = probe.wrapping_add(1);
        }
        match owned {
            Some(stripe) => table.cell(stripe, fresh).write(bucket, value),
            None => table.commons(fresh).record_locked(bucket, value),
        }
    }

    /// Everything recorded so far. A record running meanwhile may be in the
    /// sum and not yet in the buckets; it is in both at the next snapshot.
    pub fn snapshot(&self) -> HistogramSnapshot<T> {
        self.snapshot_and_reset_extremes(false)
    }

    /// [`snapshot`](Self::snapshot), and with `reset` the minimum and
    /// maximum start over: a delta reader's next interval has its own.
    pub fn snapshot_and_reset_extremes(&self, reset: bool) -> HistogramSnapshot<T> {
        let buckets = self.bounds.len() + 1;
        let mut snapshot = HistogramSnapshot {
            bucket_counts: vec![0; buckets],
            count: 0,
            sum: T::ZERO,
            min: None,
            max: None,
        };
        let (mut min, mut max) = (T::MAX, T::MIN);
        let mut add = |cell: &Cell| {
            for (i, count) in snapshot.bucket_counts.iter_mut().enumerate() {
                *count += cell.word(FIRST_BUCKET + i).load(Ordering::Acquire);
            }
            snapshot.sum = snapshot
                .sum
                .add(T::from_bits(cell.word(SUM).load(Ordering::Relaxed)));
            let (cell_min, cell_max) = if reset {
                (
                    T::from_bits(cell.word(MIN).swap(T::MAX.to_bits(), Ordering::Relaxed)),
                    T::from_bits(cell.word(MAX).swap(T::MIN.to_bits(), Ordering::Relaxed)),
                )
            } else {
                (
                    T::from_bits(cell.word(MIN).load(Ordering::Relaxed)),
                    T::from_bits(cell.word(MAX).load(Ordering::Relaxed)),
                )
            };
            if cell_min < min {
                min = cell_min;
            }
            if cell_max > max {
                max = cell_max;
            }
        };
        add(&self.base);
        self.stripes.for_each(&mut add);
        snapshot.count = snapshot.bucket_counts.iter().sum();
        // With extremes reset and nothing since, neither is known.
        if snapshot.count > 0 && min <= max {
            snapshot.min = Some(min);
            snapshot.max = Some(max);
        }
        snapshot
    }

    /// How many stripes contention has made (0 while uncontended).
    pub fn stripes(&self) -> usize {
        self.stripes.count()
    }
}

impl<T: CellValue + fmt::Debug> fmt::Debug for Histogram<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Histogram")
            .field("bounds", &self.bounds)
            .field("snapshot", &self.snapshot())
            .field("stripes", &self.stripes())
            .finish()
    }
}
