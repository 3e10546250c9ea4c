//! An owned explicit-bucket histogram: its series by attribute set, each a
//! striped [`cells::Histogram`], under the cardinality limit.

use std::sync::Arc;

use opentelemetry::{InstrumentationScope, KeyValue};

use super::collected::{ExponentialPoint, HistogramPoint, OwnedData, OwnedMetric};
use super::registry::Collect;
use super::series::SeriesMap;
use crate::cells::{self, CellValue};

type Series<T> = Arc<cells::Histogram<T>>;

/// One owned histogram instrument and its series.
pub struct HistogramInstrument<T: CellValue> {
    scope: InstrumentationScope,
    name: String,
    description: String,
    unit: String,
    bounds: Arc<[f64]>,
    series: SeriesMap<cells::Histogram<T>>,
}

impl<T: CellValue> HistogramInstrument<T> {
    /// An instrument without series yet, at most `limit` attribute sets
    /// before the overflow series.
    pub(crate) fn new(
        scope: InstrumentationScope,
        name: String,
        description: String,
        unit: String,
        bounds: Arc<[f64]>,
        limit: usize,
    ) -> Self {
        HistogramInstrument {
            scope,
            name,
            description,
            unit,
            bounds,
            series: SeriesMap::new(limit),
        }
    }

    /// The instrument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The series of `attributes`, made on first use.
    pub fn series(&self, attributes: &[KeyValue]) -> Series<T> {
        self.series.get(attributes, || {
            cells::Histogram::new(Arc::clone(&self.bounds))
        })
    }

    /// Records `value` into the series of `attributes`.
    pub fn record(&self, value: T, attributes: &[KeyValue]) {
        self.series(attributes).record(value);
    }
}

impl<T: CellValue> Collect for HistogramInstrument<T> {
    fn scope(&self) -> &InstrumentationScope {
        &self.scope
    }

    fn collect(&self, reset_extremes: bool) -> Option<OwnedMetric> {
        let mut points = Vec::new();
        self.series.for_each(|attributes, series| {
            let snapshot = series.snapshot_and_reset_extremes(reset_extremes);
            if snapshot.count > 0 {
                points.push(HistogramPoint {
                    attributes: attributes.to_vec(),
                    bounds: Arc::clone(&self.bounds),
                    bucket_counts: snapshot.bucket_counts,
                    count: snapshot.count,
                    sum: snapshot.sum.to_f64(),
                    min: snapshot.min.map(CellValue::to_f64),
                    max: snapshot.max.map(CellValue::to_f64),
                });
            }
        });
        if points.is_empty() {
            return None;
        }
        Some(OwnedMetric {
            name: self.name.clone(),
            description: self.description.clone(),
            unit: self.unit.clone(),
            value_type: T::KIND,
            data: OwnedData::Explicit(points),
        })
    }
}

/// One owned base-2 exponential histogram instrument and its series.
pub struct ExponentialInstrument<T: CellValue> {
    scope: InstrumentationScope,
    name: String,
    description: String,
    unit: String,
    max_size: u32,
    max_scale: i8,
    series: SeriesMap<cells::ExponentialHistogram<T>>,
}

impl<T: CellValue> ExponentialInstrument<T> {
    /// An instrument without series yet, at most `limit` attribute sets
    /// before the overflow series.
    pub(crate) fn new(
        scope: InstrumentationScope,
        name: String,
        description: String,
        unit: String,
        (max_size, max_scale): (u32, i8),
        limit: usize,
    ) -> Self {
        ExponentialInstrument {
            scope,
            name,
            description,
            unit,
            max_size,
            max_scale,
            series: SeriesMap::new(limit),
        }
    }

    /// The instrument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The series of `attributes`, made on first use.
    pub fn series(&self, attributes: &[KeyValue]) -> Arc<cells::ExponentialHistogram<T>> {
        self.series.get(attributes, || {
            cells::ExponentialHistogram::new(self.max_size, self.max_scale)
        })
    }

    /// Records `value` into the series of `attributes`.
    pub fn record(&self, value: T, attributes: &[KeyValue]) {
        self.series(attributes).record(value);
    }
}

impl<T: CellValue> Collect for ExponentialInstrument<T> {
    fn scope(&self) -> &InstrumentationScope {
        &self.scope
    }

    /// With `reset` (a delta reader) each series is read and starts over.
    fn collect(&self, reset: bool) -> Option<OwnedMetric> {
        let mut points = Vec::new();
        self.series.for_each(|attributes, series| {
            let snapshot = if reset {
                series.take()
            } else {
                series.snapshot()
            };
            if snapshot.count > 0 {
                points.push(ExponentialPoint {
                    attributes: attributes.to_vec(),
                    count: snapshot.count,
                    sum: snapshot.sum.to_f64(),
                    min: snapshot.min.map(CellValue::to_f64),
                    max: snapshot.max.map(CellValue::to_f64),
                    scale: snapshot.scale,
                    zero_count: snapshot.zero_count,
                    positive: snapshot.positive,
                    negative: snapshot.negative,
                });
            }
        });
        if points.is_empty() {
            return None;
        }
        Some(OwnedMetric {
            name: self.name.clone(),
            description: self.description.clone(),
            unit: self.unit.clone(),
            value_type: T::KIND,
            data: OwnedData::Exponential(points),
        })
    }
}
