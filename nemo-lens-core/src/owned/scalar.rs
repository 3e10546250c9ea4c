//! Owned counters, up-down counters and gauges: series in cells, reported
//! at each collection by an observable instrument of the same name that the
//! instrument registers once, so every reader of the provider (Prometheus,
//! OTLP, console, a test capture) gets them through the SDK's own
//! aggregation: temporality, start times and the cardinality limit as for
//! any SDK instrument.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Weak};

use opentelemetry::metrics::Meter as OtelMeter;
use opentelemetry::{InstrumentationScope, KeyValue};

use super::expiry::Forgotten;
use super::registry::Collect;
use super::series::{SeriesMap, Touched};
use super::OwnedMetric;
use crate::cells::{CellValue, LastValue, Sum};
use crate::Meter;

/// A cell whose value an observable instrument reports.
pub trait ScalarCell: Touched {
    /// The number reported.
    type Value: CellValue;
    /// A cell holding nothing yet.
    fn fresh() -> Self;
    /// Its value now, `None` until the first record: a series exists on
    /// the wire only once a record has carried its value.
    fn read(&self) -> Option<Self::Value>;
}

impl<T: CellValue> ScalarCell for Sum<T> {
    type Value = T;
    fn fresh() -> Self {
        Sum::new()
    }
    fn read(&self) -> Option<T> {
        self.is_recorded().then(|| self.value())
    }
}

impl<T: CellValue> ScalarCell for LastValue<T> {
    type Value = T;
    fn fresh() -> Self {
        LastValue::unset()
    }
    fn read(&self) -> Option<T> {
        self.get()
    }
}

/// The series of one owned counter, up-down counter or gauge.
pub struct ScalarInstrument<C: ScalarCell> {
    scope: InstrumentationScope,
    name: String,
    series: SeriesMap<C>,
}

impl<C: ScalarCell> ScalarInstrument<C> {
    /// The series of `attributes`, made on first use.
    pub fn series(&self, attributes: &[KeyValue]) -> Arc<C> {
        self.series.get(attributes, C::fresh)
    }

    /// The instrument's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Reports every series recorded so far to `observe`.
    fn report(&self, observe: &mut dyn FnMut(C::Value, &[KeyValue])) {
        self.series.for_each(|attributes, cell, _| {
            if let Some(value) = cell.read() {
                observe(value, attributes);
            }
        });
    }
}

impl<C: ScalarCell> Collect for ScalarInstrument<C> {
    fn scope(&self) -> &InstrumentationScope {
        &self.scope
    }

    fn name(&self) -> &str {
        &self.name
    }

    /// Reported through the SDK instead.
    fn collect(&self, _reset_extremes: bool) -> Option<OwnedMetric> {
        None
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

    fn starts(&self, each: &mut dyn FnMut(&[KeyValue], std::time::SystemTime)) {
        self.series
            .for_each(|attributes, _, start| each(attributes, start));
    }
}

/// What an instrument is described with.
#[doc(hidden)]
pub struct Spec {
    name: Cow<'static, str>,
    description: Option<Cow<'static, str>>,
    unit: Option<Cow<'static, str>>,
}

type Report<T> = Box<dyn Fn(&mut dyn FnMut(T, &[KeyValue])) + Send + Sync>;

/// How one kind of owned instrument of one number type is built: the SDK's
/// instrument for a meter without a registry, and the observable that
/// reports the owned one.
pub trait ScalarKind: Sized {
    /// The cell a series records into.
    type Cell: ScalarCell;
    /// The SDK's synchronous instrument.
    type Sdk;
    #[doc(hidden)]
    fn build_sdk(meter: &OtelMeter, spec: Spec) -> Self::Sdk;
    #[doc(hidden)]
    fn observe(meter: &OtelMeter, spec: Spec, report: Report<<Self::Cell as ScalarCell>::Value>);
    /// Whether a series holds live state, which keeps it however long it
    /// goes unrecorded: an up-down counter away from zero (requests in
    /// flight, sandboxes held).
    #[doc(hidden)]
    fn holds_state(cell: &Self::Cell) -> bool;
}

macro_rules! scalar_kind {
    ($marker:ident, $cell:ident, $t:ty, $sync:ident, $sdk:ident, $observable:ident $(, $state:expr)?) => {
        impl ScalarKind for $marker<$t> {
            type Cell = $cell<$t>;
            type Sdk = opentelemetry::metrics::$sdk<$t>;
            #[allow(unused_variables)]
            fn holds_state(cell: &Self::Cell) -> bool {
                false $(|| ($state)(cell))?
            }
            fn build_sdk(meter: &OtelMeter, spec: Spec) -> Self::Sdk {
                let mut builder = meter.$sync(spec.name);
                if let Some(description) = spec.description {
                    builder = builder.with_description(description);
                }
                if let Some(unit) = spec.unit {
                    builder = builder.with_unit(unit);
                }
                builder.build()
            }
            fn observe(meter: &OtelMeter, spec: Spec, report: Report<$t>) {
                let mut builder = meter.$observable(spec.name);
                if let Some(description) = spec.description {
                    builder = builder.with_description(description);
                }
                if let Some(unit) = spec.unit {
                    builder = builder.with_unit(unit);
                }
                // The SDK keeps the callback for the provider's life.
                let _registered = builder
                    .with_callback(move |observer| {
                        report(&mut |value, attributes| observer.observe(value, attributes))
                    })
                    .build();
            }
        }
    };
}

/// Marks a counter of `T` (`u64` or `f64`).
#[derive(Debug)]
pub struct CounterOf<T>(PhantomData<T>);
/// Marks an up-down counter of `T` (`i64` or `f64`).
#[derive(Debug)]
pub struct UpDownCounterOf<T>(PhantomData<T>);
/// Marks a gauge of `T` (`u64`, `i64` or `f64`).
#[derive(Debug)]
pub struct GaugeOf<T>(PhantomData<T>);

scalar_kind!(
    CounterOf,
    Sum,
    u64,
    u64_counter,
    Counter,
    u64_observable_counter
);
scalar_kind!(
    CounterOf,
    Sum,
    f64,
    f64_counter,
    Counter,
    f64_observable_counter
);
scalar_kind!(
    UpDownCounterOf,
    Sum,
    i64,
    i64_up_down_counter,
    UpDownCounter,
    i64_observable_up_down_counter,
    |cell: &Sum<i64>| cell.value() != 0
);
scalar_kind!(
    UpDownCounterOf,
    Sum,
    f64,
    f64_up_down_counter,
    UpDownCounter,
    f64_observable_up_down_counter,
    |cell: &Sum<f64>| cell.value() != 0.0
);
scalar_kind!(
    GaugeOf,
    LastValue,
    u64,
    u64_gauge,
    Gauge,
    u64_observable_gauge
);
scalar_kind!(
    GaugeOf,
    LastValue,
    i64,
    i64_gauge,
    Gauge,
    i64_observable_gauge
);
scalar_kind!(
    GaugeOf,
    LastValue,
    f64,
    f64_gauge,
    Gauge,
    f64_observable_gauge
);

/// An owned counter, up-down counter or gauge, or the SDK's.
pub enum Scalar<K: ScalarKind> {
    /// Series in [`cells`](crate::cells).
    Owned(Arc<ScalarInstrument<K::Cell>>),
    /// The SDK's instrument.
    Sdk(K::Sdk),
}

impl<K: ScalarKind> fmt::Debug for Scalar<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Owned(instrument) => f.debug_tuple("Owned").field(&instrument.name()).finish(),
            Scalar::Sdk(_) => f.write_str("Sdk"),
        }
    }
}

/// One series of a [`Scalar`].
pub enum BoundScalar<K: ScalarKind, B> {
    /// An owned series.
    Owned(Arc<K::Cell>),
    /// The SDK's bound handle.
    Sdk(B),
}

impl<K: ScalarKind, B> fmt::Debug for BoundScalar<K, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BoundScalar::Owned(_) => "Owned",
            BoundScalar::Sdk(_) => "Sdk",
        })
    }
}

/// A counter: owned series, or the SDK's.
pub type Counter<T> = Scalar<CounterOf<T>>;
/// An up-down counter: owned series, or the SDK's.
pub type UpDownCounter<T> = Scalar<UpDownCounterOf<T>>;
/// A gauge: owned series, or the SDK's.
pub type Gauge<T> = Scalar<GaugeOf<T>>;
/// One series of a [`Counter`].
pub type BoundCounter<T> = BoundScalar<CounterOf<T>, opentelemetry::metrics::BoundCounter<T>>;
/// One series of an [`UpDownCounter`].
pub type BoundUpDownCounter<T> =
    BoundScalar<UpDownCounterOf<T>, opentelemetry::metrics::BoundUpDownCounter<T>>;
/// One series of a [`Gauge`].
pub type BoundGauge<T> = BoundScalar<GaugeOf<T>, opentelemetry::metrics::BoundGauge<T>>;

macro_rules! sum_methods {
    ($marker:ident, $bound:ident, $($t:ty),*) => {$(
        impl Scalar<$marker<$t>> {
            /// A handle on the series of `attributes`.
            pub fn bind(&self, attributes: &[KeyValue]) -> $bound<$t> {
                match self {
                    Scalar::Owned(i) => BoundScalar::Owned(i.series(attributes)),
                    Scalar::Sdk(s) => BoundScalar::Sdk(s.bind(attributes)),
                }
            }

            /// Adds `value` to the series of `attributes`.
            pub fn add(&self, value: $t, attributes: &[KeyValue]) {
                match self {
                    Scalar::Owned(i) => i.series(attributes).add(value),
                    Scalar::Sdk(s) => s.add(value, attributes),
                }
            }
        }

        impl $bound<$t> {
            /// Adds `value`.
            #[inline]
            pub fn add(&self, value: $t) {
                match self {
                    BoundScalar::Owned(cell) => cell.add(value),
                    BoundScalar::Sdk(bound) => bound.add(value),
                }
            }
        }
    )*};
}

sum_methods!(CounterOf, BoundCounter, u64, f64);
sum_methods!(UpDownCounterOf, BoundUpDownCounter, i64, f64);

macro_rules! gauge_methods {
    ($($t:ty),*) => {$(
        impl Gauge<$t> {
            /// A handle on the series of `attributes`.
            pub fn bind(&self, attributes: &[KeyValue]) -> BoundGauge<$t> {
                match self {
                    Scalar::Owned(i) => BoundScalar::Owned(i.series(attributes)),
                    Scalar::Sdk(s) => BoundScalar::Sdk(s.bind(attributes)),
                }
            }

            /// Sets the series of `attributes` to `value`.
            pub fn record(&self, value: $t, attributes: &[KeyValue]) {
                match self {
                    Scalar::Owned(i) => i.series(attributes).record(value),
                    Scalar::Sdk(s) => s.record(value, attributes),
                }
            }
        }

        impl BoundGauge<$t> {
            /// Sets the value.
            #[inline]
            pub fn record(&self, value: $t) {
                match self {
                    BoundScalar::Owned(cell) => cell.record(value),
                    BoundScalar::Sdk(bound) => bound.record(value),
                }
            }
        }
    )*};
}

gauge_methods!(u64, i64, f64);

/// Builds a counter, up-down counter or gauge; see [`Meter::u64_counter`]
/// and its siblings.
#[must_use]
pub struct ScalarBuilder<'a, K> {
    meter: &'a Meter,
    spec: Spec,
    kind: PhantomData<K>,
}

impl<'a, K: ScalarKind> ScalarBuilder<'a, K> {
    pub(crate) fn new(meter: &'a Meter, name: Cow<'static, str>) -> Self {
        ScalarBuilder {
            meter,
            spec: Spec {
                name,
                description: None,
                unit: None,
            },
            kind: PhantomData,
        }
    }

    /// The description (HELP on Prometheus).
    pub fn with_description(mut self, description: impl Into<Cow<'static, str>>) -> Self {
        self.spec.description = Some(description.into());
        self
    }

    /// The unit (UCUM).
    pub fn with_unit(mut self, unit: impl Into<Cow<'static, str>>) -> Self {
        self.spec.unit = Some(unit.into());
        self
    }

    /// The instrument: owned when the meter has a registry, the SDK's
    /// otherwise.
    pub fn build(self) -> Scalar<K> {
        let Some(owned) = self.meter.owned() else {
            return Scalar::Sdk(K::build_sdk(self.meter.otel(), self.spec));
        };
        let limit = owned.limit();
        let otel = self.meter.otel();
        let spec = self.spec;
        Scalar::Owned(
            owned
                .registry
                .instrument(&owned.scope, &spec.name.clone(), || {
                    let instrument = Arc::new(ScalarInstrument {
                        scope: owned.scope.clone(),
                        name: spec.name.clone().into_owned(),
                        series: SeriesMap::new(
                            limit,
                            owned.registry.expiry().for_instrument(&spec.name),
                            K::holds_state,
                        ),
                    });
                    let weak: Weak<ScalarInstrument<K::Cell>> = Arc::downgrade(&instrument);
                    K::observe(
                        otel,
                        spec,
                        Box::new(move |observe| {
                            if let Some(instrument) = weak.upgrade() {
                                instrument.report(observe);
                            }
                        }),
                    );
                    instrument
                }),
        )
    }
}
