//! A base-2 exponential histogram series: the OpenTelemetry SDK's
//! aggregation (0.33, Apache-2.0; its `record`, `get_bin`, `scale_change`
//! and `downscale` are followed step for step, so the buckets are the same),
//! held in stripes that are small locks: a thread that finds one held takes
//! another rather than wait, and stripes merge at collection to the scale
//! one histogram of all the observations would have.

use std::fmt;
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

#[cfg(not(nemo_lens_no_exemplars))]
use super::exemplars::Exemplars;
use super::probe;
use super::stripes::{Stripes, Table};
use super::sum::{touch, ATTEMPTS};
use super::sync::{AtomicBool, Ordering};
use super::CellValue;
use crate::exemplar::{Exemplar, ExemplarFilter, SpanOnce};

/// The finest scale the SDK uses, and the coarsest.
const MIN_SCALE: i8 = -10;

/// Buckets a side holds room for from its first observation: 128 bytes.
const BUCKETS_RESERVED: usize = 16;

/// One side of an exponential histogram: `counts[i]` counts magnitudes in
/// bucket `offset + i`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExponentialBuckets {
    /// The index of the first bucket.
    pub offset: i32,
    /// Counts from `offset` on.
    pub counts: Vec<u64>,
}

impl ExponentialBuckets {
    fn record(&mut self, bin: i32) {
        if self.counts.is_empty() {
            // Room for a cache line and more: the buckets of two stripes,
            // allocated apart, then never share a line (a 2-thread bench
            // measured one series at 1.2x with one-bucket allocations side
            // by side, 1.9x without).
            let mut counts = Vec::with_capacity(BUCKETS_RESERVED);
            counts.push(1);
            self.counts = counts;
            self.offset = bin;
            return;
        }
        let end = self.offset + self.counts.len() as i32 - 1;
        if bin < self.offset {
            let mut grown = vec![0; (end - bin + 1) as usize];
            grown[(self.offset - bin) as usize..].copy_from_slice(&self.counts);
            self.counts = grown;
            self.offset = bin;
        } else if bin > end {
            self.counts.resize((bin - self.offset + 1) as usize, 0);
        }
        self.counts[(bin - self.offset) as usize] += 1;
    }

    /// Halves the resolution `delta` times, adding counts that share a
    /// coarser bucket.
    fn downscale(&mut self, delta: u32) {
        if self.counts.len() <= 1 || delta < 1 {
            self.offset >>= delta;
            return;
        }
        let steps = 1_i32 << delta;
        let offset = self.offset.rem_euclid(steps);
        for i in 1..self.counts.len() {
            let idx = i + offset as usize;
            if idx.is_multiple_of(steps as usize) {
                self.counts[idx / steps as usize] = self.counts[i];
            } else {
                self.counts[idx / steps as usize] += self.counts[i];
            }
        }
        let last = (self.counts.len() as i32 - 1 + offset) / steps;
        self.counts.truncate(last as usize + 1);
        self.offset >>= delta;
    }

    /// The first and last bucket after `delta` halvings, if any.
    fn range(&self, delta: u32) -> Option<(i32, i32)> {
        (!self.counts.is_empty()).then(|| {
            (
                self.offset >> delta,
                (self.offset + self.counts.len() as i32 - 1) >> delta,
            )
        })
    }

    /// Adds `other`'s counts, at the same scale.
    fn add(&mut self, other: &ExponentialBuckets) {
        let Some((start, end)) = other.range(0) else {
            return;
        };
        if self.counts.is_empty() {
            *self = other.clone();
            return;
        }
        let (own_start, own_end) = self.range(0).unwrap_or((start, end));
        let (low, high) = (own_start.min(start), own_end.max(end));
        if low < own_start {
            let mut grown = vec![0; (own_end - low + 1) as usize];
            grown[(own_start - low) as usize..].copy_from_slice(&self.counts);
            self.counts = grown;
            self.offset = low;
        }
        self.counts.resize((high - self.offset + 1) as usize, 0);
        for (i, count) in other.counts.iter().enumerate() {
            self.counts[(other.offset - self.offset) as usize + i] += count;
        }
    }
}

/// What an exponential histogram series holds at one collection.
#[derive(Debug, Clone, PartialEq)]
pub struct ExponentialSnapshot<T> {
    /// Observations in all.
    pub count: u64,
    /// Their sum.
    pub sum: T,
    /// The smallest; `None` before the first.
    pub min: Option<T>,
    /// The largest; `None` before the first.
    pub max: Option<T>,
    /// Buckets are `2^(2^-scale)` wide.
    pub scale: i8,
    /// Observations equal to zero.
    pub zero_count: u64,
    /// Positive observations.
    pub positive: ExponentialBuckets,
    /// Negative observations, by magnitude.
    pub negative: ExponentialBuckets,
}

#[derive(Clone)]
struct State<T> {
    count: u64,
    sum: T,
    min: T,
    max: T,
    scale: i8,
    zero_count: u64,
    positive: ExponentialBuckets,
    negative: ExponentialBuckets,
}

impl<T: CellValue> State<T> {
    fn new(max_scale: i8) -> Self {
        State {
            count: 0,
            sum: T::ZERO,
            min: T::MAX,
            max: T::MIN,
            scale: max_scale,
            zero_count: 0,
            positive: ExponentialBuckets::default(),
            negative: ExponentialBuckets::default(),
        }
    }

    fn record(&mut self, value: T, max_size: i32) {
        self.count += 1;
        if value < self.min {
            self.min = value;
        }
        if value > self.max {
            self.max = value;
        }
        self.sum = self.sum.add(value);
        let magnitude = value.to_f64().abs();
        if magnitude == 0.0 {
            self.zero_count += 1;
            return;
        }
        let negative = value < T::ZERO;
        let mut bin = bin(magnitude, self.scale);
        let side = if negative {
            &self.negative
        } else {
            &self.positive
        };
        let delta = match side.range(0) {
            Some((start, end)) => scale_change(max_size, bin.min(start), bin.max(end)),
            None => 0,
        };
        if delta > 0 {
            if self.scale - (delta as i8) < MIN_SCALE {
                // Only with a max size of 1; the SDK drops the value too.
                return;
            }
            self.scale -= delta as i8;
            self.positive.downscale(delta);
            self.negative.downscale(delta);
            bin = self::bin(magnitude, self.scale);
        }
        if negative {
            self.negative.record(bin);
        } else {
            self.positive.record(bin);
        }
    }

    /// Adds `other`'s observations, at the finest scale that holds both
    /// within `max_size` buckets a side.
    fn merge(&mut self, other: &State<T>, max_size: i32) {
        if other.count == 0 {
            return;
        }
        self.count += other.count;
        self.sum = self.sum.add(other.sum);
        if other.min < self.min {
            self.min = other.min;
        }
        if other.max > self.max {
            self.max = other.max;
        }
        self.zero_count += other.zero_count;
        let scale = self.scale.min(other.scale);
        let (own_delta, other_delta) = ((self.scale - scale) as u32, (other.scale - scale) as u32);
        let more = [
            (&self.positive, &other.positive),
            (&self.negative, &other.negative),
        ]
        .into_iter()
        .map(|(own, theirs)| {
            let ranges = [own.range(own_delta), theirs.range(other_delta)];
            let low = ranges.iter().flatten().map(|r| r.0).min();
            let high = ranges.iter().flatten().map(|r| r.1).max();
            match (low, high) {
                (Some(low), Some(high)) => scale_change(max_size, low, high),
                _ => 0,
            }
        })
        .max()
        .unwrap_or(0);
        let mut theirs = other.clone();
        theirs.positive.downscale(other_delta + more);
        theirs.negative.downscale(other_delta + more);
        self.positive.downscale(own_delta + more);
        self.negative.downscale(own_delta + more);
        self.scale = scale - more as i8;
        self.positive.add(&theirs.positive);
        self.negative.add(&theirs.negative);
    }

    fn snapshot(&self) -> ExponentialSnapshot<T> {
        let seen = self.count > 0;
        ExponentialSnapshot {
            count: self.count,
            sum: self.sum,
            min: seen.then_some(self.min),
            max: seen.then_some(self.max),
            scale: self.scale,
            zero_count: self.zero_count,
            positive: self.positive.clone(),
            negative: self.negative.clone(),
        }
    }
}

/// The bucket of `magnitude` at `scale`, as the SDK computes it.
fn bin(magnitude: f64, scale: i8) -> i32 {
    let (fraction, exponent) = frexp(magnitude);
    if scale <= 0 {
        // An exact power of two has a fraction of 0.5 and belongs one
        // bucket lower.
        let correction = if fraction == 0.5 { 2 } else { 1 };
        return (exponent - correction) >> -scale;
    }
    let factor = std::f64::consts::LOG2_E * f64::from(1_u32 << scale);
    (exponent << scale) + (fraction.ln() * factor) as i32 - 1
}

/// Halvings needed for buckets `low..=high` to fit `max_size`.
fn scale_change(max_size: i32, mut low: i32, mut high: i32) -> u32 {
    let mut count = 0;
    while high - low >= max_size {
        low >>= 1;
        high >>= 1;
        count += 1;
        if count > (20 - MIN_SCALE) as u32 {
            break;
        }
    }
    count
}

/// `x` as a fraction in [0.5, 1) and a power of two.
fn frexp(x: f64) -> (f64, i32) {
    let mut bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    if biased == 0 {
        if x != 0.0 {
            // Subnormal: scale into the normal range first.
            let (fraction, exponent) = frexp(x * f64::from_bits(0x43f0_0000_0000_0000));
            return (fraction, exponent - 64);
        }
        return (x, 0);
    }
    if biased == 0x7ff {
        return (x, 0);
    }
    bits &= 0x800f_ffff_ffff_ffff;
    bits |= 0x3fe0_0000_0000_0000;
    (f64::from_bits(bits), biased - 0x3fe)
}

type Cell<T> = Mutex<State<T>>;

/// One base-2 exponential histogram series.
///
/// ```
/// use nemo_lens::cells::ExponentialHistogram;
///
/// let ttft = ExponentialHistogram::<f64>::new(160, 20);
/// for value in [0.25, 0.5, 1.0, 2.0] {
///     ttft.record(value);
/// }
/// let snapshot = ttft.snapshot();
/// assert_eq!((snapshot.count, snapshot.sum), (4, 3.75));
/// assert_eq!(snapshot.positive.counts.iter().sum::<u64>(), 4);
/// ```
// Cache lines of its own, as `Sum`.
#[repr(align(128))]
pub struct ExponentialHistogram<T: CellValue> {
    max_size: i32,
    max_scale: i8,
    // See `Sum::take_touched`.
    touched: AtomicBool,
    /// `None` unless the exemplar filter keeps some.
    #[cfg(not(nemo_lens_no_exemplars))]
    exemplars: Option<Box<Exemplars>>,
    base: Cell<T>,
    stripes: Stripes<Cell<T>>,
}

impl<T: CellValue> ExponentialHistogram<T> {
    /// An empty series of at most `max_size` buckets a side, starting at
    /// `max_scale`.
    pub fn new(max_size: u32, max_scale: i8) -> Self {
        Self::with_exemplars(max_size, max_scale, ExemplarFilter::AlwaysOff)
    }

    /// An empty series that keeps the latest
    /// [`EXPONENTIAL_RESERVOIR`](crate::exemplar::EXPONENTIAL_RESERVOIR)
    /// exemplars (fewer with fewer buckets) of the records `filter` keeps.
    pub fn with_exemplars(max_size: u32, max_scale: i8, filter: ExemplarFilter) -> Self {
        #[cfg(nemo_lens_no_exemplars)]
        let _ = filter;
        #[cfg(not(nemo_lens_no_exemplars))]
        let reservoir = crate::exemplar::EXPONENTIAL_RESERVOIR.min(max_size.max(1) as usize);
        ExponentialHistogram {
            #[cfg(not(nemo_lens_no_exemplars))]
            exemplars: Exemplars::new(filter, reservoir),
            max_size: max_size.clamp(1, i32::MAX as u32) as i32,
            max_scale: max_scale.clamp(MIN_SCALE, 20),
            touched: AtomicBool::new(false),
            base: Mutex::new(State::new(max_scale)),
            stripes: Stripes::new(),
        }
    }

    /// Records one observation.
    #[inline]
    pub fn record(&self, value: T) {
        self.record_spanned(value, None);
    }

    /// Records one observation made in `span` (see
    /// [`Histogram::record_in`](super::Histogram::record_in)).
    #[inline]
    pub fn record_in(&self, value: T, span: &SpanOnce) {
        self.record_spanned(value, Some(span));
    }

    /// A record, and the span read for it if the series keeps exemplars:
    /// `span`'s, or the context's now. Not inlined: beside its lock a call
    /// is little, and inlined where a set's records dispatch between the
    /// two kinds of histogram, its exemplar's call made the explicit one's
    /// record save a register more.
    #[inline(never)]
    fn record_spanned(&self, value: T, span: Option<&SpanOnce>) {
        match self.stripes.table() {
            None => match self.base.try_lock() {
                Ok(mut state) => state.record(value, self.max_size),
                Err(TryLockError::Poisoned(held)) => held.into_inner().record(value, self.max_size),
                Err(TryLockError::WouldBlock) => self.record_contended(value),
            },
            Some(table) => self.record_striped(table, value),
        }
        touch(&self.touched);
        // Built with `--cfg nemo_lens_no_exemplars` (what the exemplar
        // benchmark compares against), a record has no exemplar code at all.
        #[cfg(not(nemo_lens_no_exemplars))]
        if let Some(exemplars) = &self.exemplars {
            exemplars.offer(value.to_f64(), span);
        }
        #[cfg(nemo_lens_no_exemplars)]
        let _ = span;
    }

    /// The exemplars held, oldest first: the latest few recorded.
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

    #[cold]
    #[inline(never)]
    pub(super) fn record_contended(&self, value: T) {
        self.record_striped(self.stripes.inflate(), value);
    }

    fn record_striped(&self, table: &Table<Cell<T>>, value: T) {
        let fresh = || Mutex::new(State::new(self.max_scale));
        let mut probe = probe::current();
        for _ in 0..ATTEMPTS {
            match table.cell(probe, fresh).try_lock() {
                Ok(mut state) => return state.record(value, self.max_size),
                Err(TryLockError::Poisoned(held)) => {
                    return held.into_inner().record(value, self.max_size)
                }
                Err(TryLockError::WouldBlock) => probe = probe::advance(),
            }
        }
        lock(table.cell(probe, fresh)).record(value, self.max_size);
    }

    /// Everything recorded so far.
    pub fn snapshot(&self) -> ExponentialSnapshot<T> {
        let mut merged = lock(&self.base).clone();
        self.stripes
            .for_each(|cell| merged.merge(&lock(cell), self.max_size));
        merged.snapshot()
    }

    /// Everything recorded since the last `take`, and the series starts
    /// over: a delta reader's interval, at the scale its own values need.
    pub fn take(&self) -> ExponentialSnapshot<T> {
        let fresh = || State::new(self.max_scale);
        let mut merged = std::mem::replace(&mut *lock(&self.base), fresh());
        self.stripes.for_each(|cell| {
            let taken = std::mem::replace(&mut *lock(cell), fresh());
            merged.merge(&taken, self.max_size);
        });
        merged.snapshot()
    }

    /// How many stripes contention has made (0 while uncontended).
    pub fn stripes(&self) -> usize {
        self.stripes.count()
    }
}

fn lock<T>(cell: &Mutex<T>) -> MutexGuard<'_, T> {
    cell.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<T: CellValue + fmt::Debug> fmt::Debug for ExponentialHistogram<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExponentialHistogram")
            .field("snapshot", &self.snapshot())
            .field("stripes", &self.stripes())
            .finish()
    }
}
