//! Owned histograms, explicit and exponential: their series by attribute
//! set, each a striped cell, under the cardinality limit.

use std::sync::Arc;
use std::time::SystemTime;

use opentelemetry::{InstrumentationScope, KeyValue};

use super::collected::{ExponentialPoint, HistogramPoint, OwnedData, OwnedMetric};
use super::expiry::{Expiry, Forgotten};
use super::registry::Collect;
use super::series::{SeriesMap, Touched};
use crate::cells::{self, CellValue};

/// A histogram series of one aggregation, as its instrument reads it.
pub trait HistogramCell: Touched {
    /// The numbers recorded.
    type Value: CellValue;
    /// What one series exports.
    type Point;
    /// Records one observation.
    fn record(&self, value: Self::Value);
    /// The series' point now, `None` while it has no observation; with
    /// `reset`, for a delta reader, the interval starts over.
    fn point(&self, attributes: &[KeyValue], start: SystemTime, reset: bool)
        -> Option<Self::Point>;
    /// The points of an instrument, as exported.
    fn data(points: Vec<Self::Point>) -> OwnedData;
}

impl<T: CellValue> HistogramCell for cells::Histogram<T> {
    type Value = T;
    type Point = HistogramPoint;

    #[inline]
    fn record(&self, value: T) {
        cells::Histogram::record(self, value);
    }

    /// Explicit buckets stay cumulative; a delta reader subtracts
    /// ([`Delta`](super::Delta)) and only the extremes start over.
    fn point(
        &self,
        attributes: &[KeyValue],
        start: SystemTime,
        reset: bool,
    ) -> Option<HistogramPoint> {
        let snapshot = self.snapshot_and_reset_extremes(reset);
        (snapshot.count > 0).then(|| HistogramPoint {
            attributes: attributes.to_vec(),
            start_time: start,
            bounds: Arc::clone(self.bounds()),
            bucket_counts: snapshot.bucket_counts,
            count: snapshot.count,
            sum: snapshot.sum.to_f64(),
            min: snapshot.min.map(CellValue::to_f64),
            max: snapshot.max.map(CellValue::to_f64),
            exemplars: self.exemplars(),
        })
    }

    fn data(points: Vec<HistogramPoint>) -> OwnedData {
        OwnedData::Explicit(points)
    }
}

impl<T: CellValue> HistogramCell for cells::ExponentialHistogram<T> {
    type Value = T;
    type Point = ExponentialPoint;

    #[inline]
    fn record(&self, value: T) {
        cells::ExponentialHistogram::record(self, value);
    }

    /// Taken and started over for a delta reader, so each interval has the
    /// scale its own values need, as the SDK's.
    fn point(
        &self,
        attributes: &[KeyValue],
        start: SystemTime,
        reset: bool,
    ) -> Option<ExponentialPoint> {
        let snapshot = if reset { self.take() } else { self.snapshot() };
        (snapshot.count > 0).then(|| ExponentialPoint {
            attributes: attributes.to_vec(),
            start_time: start,
            count: snapshot.count,
            sum: snapshot.sum.to_f64(),
            min: snapshot.min.map(CellValue::to_f64),
            max: snapshot.max.map(CellValue::to_f64),
            scale: snapshot.scale,
            zero_count: snapshot.zero_count,
            positive: snapshot.positive,
            negative: snapshot.negative,
            exemplars: self.exemplars(),
        })
    }

    fn data(points: Vec<ExponentialPoint>) -> OwnedData {
        OwnedData::Exponential(points)
    }
}

/// An owned explicit-bucket histogram.
pub type HistogramInstrument<T> = OwnedHistogram<cells::Histogram<T>>;
/// An owned base-2 exponential histogram.
pub type ExponentialInstrument<T> = OwnedHistogram<cells::ExponentialHistogram<T>>;

/// One owned histogram instrument and its series.
pub struct OwnedHistogram<C: HistogramCell> {
    scope: InstrumentationScope,
    name: String,
    description: String,
    unit: String,
    fresh: Box<dyn Fn() -> C + Send + Sync>,
    series: SeriesMap<C>,
}

impl<C: HistogramCell> OwnedHistogram<C> {
    /// An instrument without series yet, each made by `fresh`, at most
    /// `limit` attribute sets before the overflow series.
    pub(crate) fn new(
        scope: InstrumentationScope,
        (name, description, unit): (String, String, String),
        limit: usize,
        expiry: Expiry,
        fresh: impl Fn() -> C + Send + Sync + 'static,
    ) -> Self {
        OwnedHistogram {
            series: SeriesMap::new(limit, expiry.for_instrument(&name), |_| false),
            scope,
            name,
            description,
            unit,
            fresh: Box::new(fresh),
        }
    }

    /// The instrument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The series of `attributes`, made on first use.
    pub fn series(&self, attributes: &[KeyValue]) -> Arc<C> {
        self.series.get(attributes, &self.fresh)
    }

    /// Records `value` into the series of `attributes`.
    pub fn record(&self, value: C::Value, attributes: &[KeyValue]) {
        self.series(attributes).record(value);
    }

    /// Ends the series of `attributes` now unless a bound handle holds it;
    /// whether it ended.
    pub fn remove(&self, attributes: &[KeyValue]) -> bool {
        self.series.remove(attributes)
    }
}

impl<C: HistogramCell> Collect for OwnedHistogram<C> {
    fn scope(&self) -> &InstrumentationScope {
        &self.scope
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn collect(&self, reset: bool) -> Option<OwnedMetric> {
        let mut points = Vec::new();
        self.series.for_each(|attributes, series, start| {
            points.extend(series.point(attributes, start, reset));
        });
        (!points.is_empty()).then(|| OwnedMetric {
            name: self.name.clone(),
            description: self.description.clone(),
            unit: self.unit.clone(),
            value_type: <C::Value as CellValue>::KIND,
            data: C::data(points),
        })
    }

    fn sweep(&self) {
        self.series.sweep();
    }

    fn forget(&self, attribute: &KeyValue) -> Forgotten {
        self.series.forget(attribute)
    }

    fn len(&self) -> usize {
        self.series.len()
    }
}
