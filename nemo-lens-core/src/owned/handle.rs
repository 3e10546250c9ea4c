//! The histogram handles sets hold: owned series when the meter has a
//! [`Registry`], the SDK's otherwise, behind one type.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use opentelemetry::{InstrumentationScope, KeyValue};

use super::histogram::{ExponentialInstrument, HistogramInstrument};
use super::registry::Registry;
use crate::aggregation::{
    pinned_histogram_aggregation, HistogramAggregation, EXPONENTIAL_MAX_SCALE, EXPONENTIAL_MAX_SIZE,
};
use crate::cells::{self, CellValue};
use crate::exemplar::SpanOnce;
use crate::streams::Streams;
use crate::Meter;

/// The SDK's default explicit bucket bounds, for a histogram that declares
/// none.
const DEFAULT_BOUNDS: [f64; 15] = [
    0.0, 5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 2500.0, 5000.0, 7500.0,
    10000.0,
];

/// What a meter needs to build owned instruments: the registry its
/// exporters read, the scope its SDK meter has, and the provider's
/// aggregation settings (the same the provider's view applies).
#[derive(Clone)]
pub struct OwnedContext {
    /// The registry the exporters read.
    pub registry: Arc<Registry>,
    /// The scope of the meter's SDK instruments.
    pub scope: InstrumentationScope,
    /// The provider's aggregation settings.
    pub streams: Arc<Streams>,
}

impl OwnedContext {
    /// The bounds of `name` if it aggregates in explicit buckets, `None`
    /// if in exponential ones.
    fn explicit_bounds(&self, name: &str, declared: Option<&[f64]>) -> Option<Arc<[f64]>> {
        if let Some(overridden) = self
            .streams
            .buckets
            .iter()
            .find(|b| b.instrument.eq_ignore_ascii_case(name))
        {
            return Some(overridden.boundaries.as_slice().into());
        }
        // As the provider's view decides: a bridge's own choice first.
        let aggregation = crate::bridge::state(&self.scope)
            .and_then(|bridge| bridge.histogram_aggregation(name))
            .or_else(|| pinned_histogram_aggregation(name))
            .unwrap_or(self.streams.histogram_aggregation);
        (aggregation == HistogramAggregation::ExplicitBucket)
            .then(|| declared.unwrap_or(&DEFAULT_BOUNDS).into())
    }

    pub(crate) fn limit(&self) -> usize {
        self.streams
            .cardinality_limit
            .unwrap_or_else(crate::overflow::limit)
    }
}

/// A value a histogram records: `u64` or `f64`, as in the SDK.
pub trait HistogramValue: CellValue {
    #[doc(hidden)]
    fn sdk_histogram<'a>(
        meter: &'a opentelemetry::metrics::Meter,
        name: Cow<'static, str>,
    ) -> opentelemetry::metrics::HistogramBuilder<'a, opentelemetry::metrics::Histogram<Self>>;
    #[doc(hidden)]
    fn build_sdk(
        builder: opentelemetry::metrics::HistogramBuilder<
            '_,
            opentelemetry::metrics::Histogram<Self>,
        >,
    ) -> opentelemetry::metrics::Histogram<Self>;
}

macro_rules! histogram_value {
    ($($t:ty => $method:ident),*) => {$(
        impl HistogramValue for $t {
            fn sdk_histogram<'a>(
                meter: &'a opentelemetry::metrics::Meter,
                name: Cow<'static, str>,
            ) -> opentelemetry::metrics::HistogramBuilder<'a, opentelemetry::metrics::Histogram<Self>>
            {
                meter.$method(name)
            }

            fn build_sdk(
                builder: opentelemetry::metrics::HistogramBuilder<
                    '_,
                    opentelemetry::metrics::Histogram<Self>,
                >,
            ) -> opentelemetry::metrics::Histogram<Self> {
                builder.build()
            }
        }
    )*};
}

histogram_value!(u64 => u64_histogram, f64 => f64_histogram);

/// A histogram instrument: owned series, or the SDK's.
pub enum Histogram<T: HistogramValue> {
    /// Series in [`cells`](crate::cells), read by the registry's exporters.
    Owned(Arc<HistogramInstrument<T>>),
    /// Exponential series in [`cells`](crate::cells).
    OwnedExponential(Arc<ExponentialInstrument<T>>),
    /// The SDK's instrument.
    Sdk(opentelemetry::metrics::Histogram<T>),
}

impl<T: HistogramValue> Histogram<T> {
    /// A handle on the series of `attributes`, which records without
    /// looking them up again.
    pub fn bind(&self, attributes: &[KeyValue]) -> BoundHistogram<T> {
        match self {
            Histogram::Owned(instrument) => BoundHistogram::Owned(instrument.series(attributes)),
            Histogram::OwnedExponential(instrument) => {
                BoundHistogram::OwnedExponential(instrument.series(attributes))
            }
            Histogram::Sdk(histogram) => BoundHistogram::Sdk(histogram.bind(attributes)),
        }
    }

    /// Records `value` into the series of `attributes`.
    pub fn record(&self, value: T, attributes: &[KeyValue]) {
        match self {
            Histogram::Owned(instrument) => instrument.record(value, attributes),
            Histogram::OwnedExponential(instrument) => instrument.record(value, attributes),
            Histogram::Sdk(histogram) => histogram.record(value, attributes),
        }
    }

    /// Ends the series of `attributes` now, unless a bound handle holds it:
    /// gone from every exporter from the next collection, and new if
    /// recorded again. Whether it ended; an SDK histogram's series never do.
    pub fn remove(&self, attributes: &[KeyValue]) -> bool {
        match self {
            Histogram::Owned(instrument) => instrument.remove(attributes),
            Histogram::OwnedExponential(instrument) => instrument.remove(attributes),
            Histogram::Sdk(_) => false,
        }
    }
}

impl<T: HistogramValue> Clone for Histogram<T> {
    fn clone(&self) -> Self {
        match self {
            Histogram::Owned(instrument) => Histogram::Owned(Arc::clone(instrument)),
            Histogram::OwnedExponential(instrument) => {
                Histogram::OwnedExponential(Arc::clone(instrument))
            }
            Histogram::Sdk(histogram) => Histogram::Sdk(histogram.clone()),
        }
    }
}

impl<T: HistogramValue> fmt::Debug for Histogram<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Histogram::Owned(instrument) => {
                f.debug_tuple("Owned").field(&instrument.name()).finish()
            }
            Histogram::OwnedExponential(instrument) => f
                .debug_tuple("OwnedExponential")
                .field(&instrument.name())
                .finish(),
            Histogram::Sdk(_) => f.write_str("Sdk"),
        }
    }
}

/// One series of a [`Histogram`].
pub enum BoundHistogram<T: HistogramValue> {
    /// An owned series.
    Owned(Arc<cells::Histogram<T>>),
    /// An owned exponential series.
    OwnedExponential(Arc<cells::ExponentialHistogram<T>>),
    /// The SDK's bound handle.
    Sdk(opentelemetry::metrics::BoundHistogram<T>),
}

impl<T: HistogramValue> BoundHistogram<T> {
    /// Records one observation.
    #[inline]
    pub fn record(&self, value: T) {
        match self {
            BoundHistogram::Owned(series) => series.record(value),
            BoundHistogram::OwnedExponential(series) => series.record(value),
            BoundHistogram::Sdk(bound) => bound.record(value),
        }
    }

    /// Records one observation made in `span`, which a record call shares
    /// among its histograms so the context is read once (the SDK's
    /// histograms read it themselves).
    #[inline]
    pub fn record_in(&self, value: T, span: &SpanOnce) {
        match self {
            BoundHistogram::Owned(series) => series.record_in(value, span),
            BoundHistogram::OwnedExponential(series) => series.record_in(value, span),
            BoundHistogram::Sdk(bound) => bound.record(value),
        }
    }
}

impl<T: HistogramValue> fmt::Debug for BoundHistogram<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BoundHistogram::Owned(_) => "Owned",
            BoundHistogram::OwnedExponential(_) => "OwnedExponential",
            BoundHistogram::Sdk(_) => "Sdk",
        })
    }
}

/// Builds a [`Histogram`]; see [`Meter::u64_histogram`] and
/// [`Meter::f64_histogram`].
#[must_use]
pub struct HistogramBuilder<'a, T> {
    meter: &'a Meter,
    name: Cow<'static, str>,
    description: Option<Cow<'static, str>>,
    unit: Option<Cow<'static, str>>,
    boundaries: Option<Vec<f64>>,
    value: PhantomData<T>,
}

impl<'a, T: HistogramValue> HistogramBuilder<'a, T> {
    pub(crate) fn new(meter: &'a Meter, name: Cow<'static, str>) -> Self {
        HistogramBuilder {
            meter,
            name,
            description: None,
            unit: None,
            boundaries: None,
            value: PhantomData,
        }
    }

    /// The description (HELP on Prometheus).
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The unit (UCUM).
    pub fn with_unit(mut self, unit: impl Into<Cow<'static, str>>) -> Self {
        self.unit = Some(unit.into());
        self
    }

    /// Explicit bucket bounds, ascending.
    pub fn with_boundaries(mut self, boundaries: Vec<f64>) -> Self {
        self.boundaries = Some(boundaries);
        self
    }

    /// The histogram: owned when the meter has a registry, the SDK's
    /// otherwise.
    pub fn build(self) -> Histogram<T> {
        if let Some(owned) = self.meter.owned() {
            let limit = owned.limit();
            let name = self.name.clone().into_owned();
            let description = self.description.clone().unwrap_or_default().into_owned();
            let unit = self.unit.clone().unwrap_or_default().into_owned();
            let (registry, scope) = (&owned.registry, &owned.scope);
            let described = (name.clone(), description, unit);
            let exemplars = registry.exemplar_filter();
            return match owned.explicit_bounds(&self.name, self.boundaries.as_deref()) {
                Some(bounds) => Histogram::Owned(registry.instrument(scope, &name, || {
                    Arc::new(HistogramInstrument::new(
                        scope.clone(),
                        described,
                        limit,
                        registry.expiry().clone(),
                        move || cells::Histogram::with_exemplars(Arc::clone(&bounds), exemplars),
                    ))
                })),
                None => Histogram::OwnedExponential(registry.instrument(scope, &name, || {
                    Arc::new(ExponentialInstrument::new(
                        scope.clone(),
                        described,
                        limit,
                        registry.expiry().clone(),
                        move || {
                            cells::ExponentialHistogram::with_exemplars(
                                EXPONENTIAL_MAX_SIZE,
                                EXPONENTIAL_MAX_SCALE,
                                exemplars,
                            )
                        },
                    ))
                })),
            };
        }
        let mut builder = T::sdk_histogram(self.meter.otel(), self.name);
        if let Some(description) = self.description {
            builder = builder.with_description(description);
        }
        if let Some(unit) = self.unit {
            builder = builder.with_unit(unit);
        }
        if let Some(boundaries) = self.boundaries {
            builder = builder.with_boundaries(boundaries);
        }
        Histogram::Sdk(T::build_sdk(builder))
    }
}
