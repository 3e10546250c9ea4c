//! `metrics` 0.23's `Recorder` on the same recorder, for services still on
//! 0.23 (TEI, TGI). Its keys have their own look-up: converting each one to
//! a 0.24 key would allocate on every macro call.

use metrics_023::Unit;

use super::handles::{CounterSeries, GaugeSeries, HistogramSeries, SeriesKey};

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

recorder_for!(
    metrics_023,
    registries: (counters_023, gauges_023, histograms_023),
    series_key: SeriesKey::V023,
    unit: unit,
);
