//! An explicit-bucket histogram series, striped on contention.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use super::exemplars::Exemplars;
use super::probe;
use super::stripes::{Padded, Stripes, Table};
use super::sum::{touch, ATTEMPTS};
use super::sync::{AtomicBool, AtomicU64, Ordering};
use super::CellValue;
use crate::exemplar::{Exemplar, ExemplarFilter};

const WORDS_PER_LINE: usize = 16;
const SUM: usize = 0;
const MIN: usize = 1;
const MAX: usize = 2;
const FIRST_BUCKET: usize = 3;

/// One copy of a histogram's state: sum, minimum, maximum and the bucket
/// counts, on cache lines of its own. The count is not kept: it is the sum
/// of the bucket counts, so the two always agree.
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

    /// Records `value` in `bucket` unless another thread is writing the
    /// sum at the same moment (a collision); `false` then, and nothing
    /// recorded.
    #[inline]
    fn try_record<T: CellValue>(&self, bucket: usize, value: T) -> bool {
        let sum = self.word(SUM);
        let current = sum.load(Ordering::Relaxed);
        let next = T::from_bits(current).add(value).to_bits();
        if sum
            .compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        self.finish(bucket, value);
        true
    }

    /// Records `value` whatever other threads do.
    fn record<T: CellValue>(&self, bucket: usize, value: T) {
        let sum = self.word(SUM);
        let mut current = sum.load(Ordering::Relaxed);
        loop {
            let next = T::from_bits(current).add(value).to_bits();
            match sum.compare_exchange_weak(current, next, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => current = now,
            }
        }
        self.finish(bucket, value);
    }

    #[inline]
    fn finish<T: CellValue>(&self, bucket: usize, value: T) {
        extreme(self.word(MIN), value, |value, held| value < held);
        extreme(self.word(MAX), value, |value, held| value > held);
        // Release: a collection that counts this observation (Acquire) also
        // sees its sum and extremes.
        self.word(FIRST_BUCKET + bucket)
            .fetch_add(1, Ordering::Release);
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

/// Moves an extreme to `value` if `beats` says it is further out; reads
/// without writing when it is not, which is nearly always.
#[inline]
fn extreme<T: CellValue>(word: &AtomicU64, value: T, beats: impl Fn(T, T) -> bool) {
    let mut held = word.load(Ordering::Relaxed);
    while beats(value, T::from_bits(held)) {
        match word.compare_exchange_weak(
            held,
            value.to_bits(),
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return,
            Err(now) => held = now,
        }
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
    exemplars: Option<Box<Exemplars>>,
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
        let buckets = bounds.len() + 1;
        Histogram {
            exemplars: Exemplars::new(filter, buckets),
            bounds,
            touched: AtomicBool::new(false),
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
        let as_f64 = value.to_f64();
        let bucket = bucket_of(&self.bounds, as_f64);
        match self.stripes.table() {
            None => {
                if !self.base.try_record(bucket, value) {
                    self.record_contended(bucket, value);
                }
            }
            Some(table) => self.record_striped(table, bucket, value),
        }
        touch(&self.touched);
        if let Some(exemplars) = &self.exemplars {
            exemplars.offer_at(bucket, as_f64);
        }
    }

    /// The exemplars held, oldest first: at most one per bucket, the
    /// latest there. Kept across collections (a scraper that reads them
    /// again sees the same ones, which Prometheus stores once).
    pub fn exemplars(&self) -> Vec<Exemplar> {
        self.exemplars
            .as_deref()
            .map(Exemplars::read)
            .unwrap_or_default()
    }

    /// Whether anything was recorded since the last call, and lowers the
    /// mark (see [`Sum::take_touched`](super::Sum::take_touched)).
    pub fn take_touched(&self) -> bool {
        self.touched.swap(false, Ordering::Relaxed)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn record_contended(&self, bucket: usize, value: T) {
        self.record_striped(self.stripes.inflate(), bucket, value);
    }

    #[inline]
    fn record_striped(&self, table: &Table<Cell>, bucket: usize, value: T) {
        let buckets = self.bounds.len() + 1;
        let fresh = || Cell::new::<T>(buckets);
        let mut probe = probe::current();
        for _ in 0..ATTEMPTS {
            if table.cell(probe, fresh).try_record(bucket, value) {
                return;
            }
            probe = probe::advance();
        }
        table.cell(probe, fresh).record(bucket, value);
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
