//! `metrics` 0.23's `Recorder` on the same recorder, for services still on
//! 0.23 (TEI, TGI). Its keys have their own look-up: converting each one to
//! a 0.24 key would allocate on every macro call.

use metrics_023::{Counter, Gauge, Histogram, Key, KeyName, Metadata, SharedString, Unit};

use super::handles::{CounterSeries, GaugeSeries, HistogramSeries, SeriesKey};
use super::recorder::{BridgeRecorder, KeyParts};

impl metrics_023::CounterFn for CounterSeries {
    #[inline]
    fn increment(&self, value: u64) {
        metrics::CounterFn::increment(self, value);
    }

    #[inline]
    fn absolute(&self, value: u64) {
        metrics::CounterFn::absolute(self, value);
    }
}

impl metrics_023::GaugeFn for GaugeSeries {
    #[inline]
    fn increment(&self, value: f64) {
        metrics::GaugeFn::increment(self, value);
    }

    #[inline]
    fn decrement(&self, value: f64) {
        metrics::GaugeFn::decrement(self, value);
    }

    #[inline]
    fn set(&self, value: f64) {
        metrics::GaugeFn::set(self, value);
    }
}

impl metrics_023::HistogramFn for HistogramSeries {
    #[inline]
    fn record(&self, value: f64) {
        metrics::HistogramFn::record(self, value);
    }
}

/// The same unit in 0.24, by its name.
fn unit(unit: Option<Unit>) -> Option<metrics::Unit> {
    unit.and_then(|u| metrics::Unit::from_string(u.as_str()))
}

fn parts(key: &Key) -> KeyParts<'_> {
    KeyParts {
        name: key.name(),
        labels: key.labels().map(|l| (l.key(), l.value())).collect(),
    }
}

impl metrics_023::Recorder for BridgeRecorder {
    fn describe_counter(&self, key: KeyName, unit_: Option<Unit>, description: SharedString) {
        self.inner.describe(key.as_str(), unit(unit_), &description);
    }

    fn describe_gauge(&self, key: KeyName, unit_: Option<Unit>, description: SharedString) {
        self.inner.describe(key.as_str(), unit(unit_), &description);
    }

    fn describe_histogram(&self, key: KeyName, unit_: Option<Unit>, description: SharedString) {
        self.inner.describe(key.as_str(), unit(unit_), &description);
    }

    #[inline]
    fn register_counter(&self, key: &Key, _metadata: &Metadata<'_>) -> Counter {
        let inner = &self.inner;
        inner
            .counter(&inner.counters_023, key, parts, SeriesKey::V023)
            .map_or_else(Counter::noop, Counter::from_arc)
    }

    #[inline]
    fn register_gauge(&self, key: &Key, _metadata: &Metadata<'_>) -> Gauge {
        let inner = &self.inner;
        inner
            .gauge(&inner.gauges_023, key, parts, SeriesKey::V023)
            .map_or_else(Gauge::noop, Gauge::from_arc)
    }

    #[inline]
    fn register_histogram(&self, key: &Key, _metadata: &Metadata<'_>) -> Histogram {
        let inner = &self.inner;
        inner
            .histogram(&inner.histograms_023, key, parts)
            .map_or_else(Histogram::noop, Histogram::from_arc)
    }
}
