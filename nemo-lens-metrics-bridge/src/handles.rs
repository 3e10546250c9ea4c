//! The series behind the facade's handles. Counters and gauges are atomics
//! with the facade's own semantics (`absolute` is a `fetch_max`, gauge
//! updates compare-and-swap the f64 bits), read by an observable instrument
//! at each collection; histograms record into a nemo-lens histogram bound
//! to the series' attributes. All three expire alike when idle.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use metrics::{CounterFn, GaugeFn, HistogramFn};
use nemo_lens_core::cells::Sum;
use nemo_lens_core::owned::BoundHistogram;
use opentelemetry::KeyValue;

use super::summary::SummarySeries;

/// When a series was last updated, for `idle_timeout`: updates only raise
/// a flag; the collection that sees it notes the time.
pub(crate) struct Recency {
    touched: AtomicBool,
    seen: Mutex<Instant>,
}

impl Recency {
    fn new() -> Self {
        Recency {
            touched: AtomicBool::new(true),
            seen: Mutex::new(Instant::now()),
        }
    }

    #[inline]
    fn touch(&self) {
        // Read first: once a collection has seen the flag down, one update
        // raises it, and every later one only reads the shared line.
        if !self.touched.load(Ordering::Relaxed) {
            self.touched.store(true, Ordering::Relaxed);
        }
    }

    /// How long the series has gone without an update, as of `now`.
    pub(crate) fn idle_for(&self, now: Instant) -> std::time::Duration {
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.touched.swap(false, Ordering::Relaxed) {
            *seen = now;
        }
        now.saturating_duration_since(*seen)
    }

    /// Whether the series was updated since a collection last looked,
    /// asked once its last handle was seen gone: the fence pairs with the
    /// release of that handle's drop, so an update made through it is
    /// seen here.
    pub(crate) fn touched_since_seen(&self) -> bool {
        std::sync::atomic::fence(Ordering::Acquire);
        self.touched.load(Ordering::Relaxed)
    }
}

/// A series that expires when idle: counters and gauges.
pub(crate) trait Idles {
    fn recency(&self) -> &Recency;
    fn attributes(&self) -> &[KeyValue];
}

impl Idles for CounterSeries {
    fn recency(&self) -> &Recency {
        &self.recency
    }

    fn attributes(&self) -> &[KeyValue] {
        &self.attributes
    }
}

impl Idles for GaugeSeries {
    fn recency(&self) -> &Recency {
        &self.recency
    }

    fn attributes(&self) -> &[KeyValue] {
        &self.attributes
    }
}

impl Idles for HistogramSeries {
    fn recency(&self) -> &Recency {
        &self.recency
    }

    fn attributes(&self) -> &[KeyValue] {
        &self.attributes
    }
}

/// A key a series is registered under, for removing it on expiry.
pub(crate) enum SeriesKey {
    V024(metrics::Key),
    #[cfg(feature = "metrics-023")]
    V023(metrics_023::Key),
}

/// A counter series: a sum striped when threads collide on it.
pub(crate) struct CounterSeries {
    pub(crate) attributes: Vec<KeyValue>,
    value: Sum<u64>,
    /// Serialises `absolute`, which reads the total and adds the rest.
    absolute: Mutex<()>,
    pub(crate) recency: Recency,
}

impl CounterSeries {
    pub(crate) fn new(attributes: Vec<KeyValue>) -> Self {
        CounterSeries {
            attributes,
            value: Sum::new(),
            absolute: Mutex::new(()),
            recency: Recency::new(),
        }
    }

    /// The total so far.
    pub(crate) fn value(&self) -> u64 {
        self.value.value()
    }
}

impl CounterFn for CounterSeries {
    #[inline]
    fn increment(&self, value: u64) {
        self.value.add(value);
        self.recency.touch();
    }

    fn absolute(&self, value: u64) {
        // Never lowers the counter, as the facade's own atomics. An
        // increment racing with it lands after it, as with `fetch_max`
        // followed by `fetch_add`.
        let _one_at_a_time = self
            .absolute
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let total = self.value.value();
        if value > total {
            self.value.add(value - total);
        }
        self.recency.touch();
    }
}

/// A gauge series: the f64's bits.
pub(crate) struct GaugeSeries {
    pub(crate) attributes: Vec<KeyValue>,
    pub(crate) bits: AtomicU64,
    pub(crate) recency: Recency,
}

impl GaugeSeries {
    pub(crate) fn new(attributes: Vec<KeyValue>) -> Self {
        GaugeSeries {
            attributes,
            bits: AtomicU64::new(0f64.to_bits()),
            recency: Recency::new(),
        }
    }

    pub(crate) fn value(&self) -> f64 {
        f64::from_bits(self.bits.load(Ordering::Relaxed))
    }

    #[inline]
    fn add(&self, delta: f64) {
        let mut current = self.bits.load(Ordering::Relaxed);
        loop {
            let next = (f64::from_bits(current) + delta).to_bits();
            match self.bits.compare_exchange_weak(
                current,
                next,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(actual) => current = actual,
            }
        }
        self.recency.touch();
    }
}

impl GaugeFn for GaugeSeries {
    #[inline]
    fn increment(&self, value: f64) {
        self.add(value);
    }

    #[inline]
    fn decrement(&self, value: f64) {
        self.add(-value);
    }

    #[inline]
    fn set(&self, value: f64) {
        self.bits.store(value.to_bits(), Ordering::Relaxed);
        self.recency.touch();
    }
}

/// A histogram series: an SDK histogram bound to its attributes, so a
/// record skips the SDK's attribute look-up.
pub(crate) struct HistogramSeries {
    /// `None` for a key of a name that is not exported: its records go
    /// nowhere, but its look-up entry spares the registration path.
    bound: Option<BoundHistogram<f64>>,
    /// The Prometheus summary of an opted-in name.
    pub(crate) summary: Option<Arc<SummarySeries>>,
    pub(crate) attributes: Vec<KeyValue>,
    pub(crate) recency: Recency,
}

impl HistogramSeries {
    pub(crate) fn new(
        bound: BoundHistogram<f64>,
        summary: Option<Arc<SummarySeries>>,
        attributes: Vec<KeyValue>,
    ) -> Self {
        HistogramSeries {
            bound: Some(bound),
            summary,
            attributes,
            recency: Recency::new(),
        }
    }

    /// A series recording nowhere.
    pub(crate) fn unexported() -> Self {
        HistogramSeries {
            bound: None,
            summary: None,
            attributes: Vec::new(),
            recency: Recency::new(),
        }
    }
}

impl HistogramFn for HistogramSeries {
    #[inline]
    fn record(&self, value: f64) {
        if let Some(bound) = &self.bound {
            bound.record(value);
        }
        if let Some(summary) = &self.summary {
            summary.record(value);
        }
        self.recency.touch();
    }

    fn record_many(&self, value: f64, count: usize) {
        // The SDK has no weighted record, so this costs `count` records: the
        // facade's own default `record_many`, which
        // `metrics-exporter-prometheus` keeps. Not capped: a cap would
        // change the count the caller asked for.
        for _ in 0..count {
            self.record(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absolute_never_lowers_a_counter() {
        let counter = CounterSeries::new(Vec::new());
        counter.increment(5);
        counter.absolute(3);
        assert_eq!(counter.value(), 5);
        counter.absolute(9);
        counter.increment(1);
        assert_eq!(counter.value(), 10);
    }

    #[test]
    fn gauges_add_and_set() {
        let gauge = GaugeSeries::new(Vec::new());
        gauge.increment(1.5);
        gauge.increment(1.0);
        gauge.decrement(0.5);
        assert_eq!(gauge.value(), 2.0);
        gauge.set(-4.0);
        gauge.increment(1.0);
        assert_eq!(gauge.value(), -3.0);
    }
}
