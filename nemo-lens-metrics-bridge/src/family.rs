//! One metric name of the facade: its kind, the OpenTelemetry instrument
//! exporting it and its series. Built on the name's first registration,
//! under the recorder's registration lock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::Instant;

use metrics::Unit;
use nemo_lens_core::owned::Histogram;
use nemo_lens_core::Meter;
use opentelemetry::metrics::{AsyncInstrument, ObservableCounter, ObservableGauge};

use super::handles::{CounterSeries, GaugeSeries, HistogramSeries, Idles, SeriesKey};
use super::names::ucum;
use super::timeouts::Timeouts;

/// The kind a name was first registered with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// Sanitized label names and values, sorted by name, each name once: what
/// tells two series of a name apart, however their keys were written.
pub(crate) type Labels = Vec<(String, String)>;

/// A series of an observable instrument and the look-up keys reaching it:
/// two keys reach one series when they differ only in label order (which
/// `metrics` 0.23's keys compare) or reduce to the same labels.
pub(crate) struct Entry<T> {
    pub(crate) series: Arc<T>,
    pub(crate) keys: Vec<SeriesKey>,
}

/// Every series of an observable instrument.
pub(crate) struct Series<T> {
    pub(crate) by_labels: HashMap<Labels, Entry<T>>,
    /// Where keys past the cardinality limit go; reached by no key (an
    /// unbounded number of keys would otherwise stay in the look-up).
    pub(crate) overflow: Option<Arc<T>>,
}

/// The series of an observable instrument, read at each collection; those
/// idle past the timeout and held by no handle are handed to `expire`.
/// Registration and expiry both hold `series`, so a key is never
/// registered to a series being expired.
pub(crate) struct Observed<T> {
    series: Mutex<Series<T>>,
    timeouts: Timeouts,
}

impl<T> Observed<T> {
    fn new(timeouts: Timeouts) -> Self {
        Observed {
            series: Mutex::new(Series {
                by_labels: HashMap::new(),
                overflow: None,
            }),
            timeouts,
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Series<T>> {
        self.series.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What exports a name.
pub(crate) enum Instrument {
    Counter {
        observed: Arc<Observed<CounterSeries>>,
        // Kept so the callback's instrument lives as long as the name.
        _instrument: ObservableCounter<u64>,
    },
    Gauge {
        observed: Arc<Observed<GaugeSeries>>,
        _instrument: ObservableGauge<f64>,
    },
    Histogram {
        histogram: Histogram<f64>,
        /// Its series are also summarised for Prometheus.
        summarised: bool,
        series: HistogramSet,
    },
}

/// Every series of a histogram, so keys reducing to one label set share
/// one (and one summary); idle ones expire at the sweeps of the meter's
/// registry.
#[derive(Default)]
pub(crate) struct HistogramSet {
    pub(crate) by_labels: HashMap<Labels, Entry<HistogramSeries>>,
    /// Where keys past the cardinality limit go, reached by no key.
    pub(crate) overflow: Option<Arc<HistogramSeries>>,
}

/// What `describe_*` said of a name.
#[derive(Debug, Clone, Default)]
pub(crate) struct Described {
    pub(crate) unit: Option<Unit>,
    pub(crate) description: String,
}

/// A name's state.
#[derive(Default)]
pub(crate) struct Family {
    pub(crate) described: Option<Described>,
    pub(crate) exported: Option<(Kind, Instrument)>,
    /// Warned that it was registered as another kind, or that the SDK
    /// cannot take its name.
    pub(crate) warned: bool,
}

/// What a collection calls with an idle entry nobody else holds: takes its
/// keys out of the look-up and returns `true`, or puts them back and returns
/// `false` when a handle to the series was taken meanwhile. Called with the
/// series lock held.
pub(crate) type Expire<T> = Box<dyn Fn(&Entry<T>) -> bool + Send + Sync>;

/// The collection callback of an observable counter or gauge: `observe`
/// on each series of `observed` for as long as it lives (the callback holds
/// it weakly, so a name's series go when the recorder does).
fn reporter<T, V>(
    observed: &Arc<Observed<T>>,
    expire: Expire<T>,
    observe: fn(&dyn AsyncInstrument<V>, &T),
) -> impl Fn(&dyn AsyncInstrument<V>) + Send + Sync + 'static + use<T, V>
where
    T: Idles + Send + Sync + 'static,
    V: 'static,
{
    let weak: Weak<Observed<T>> = Arc::downgrade(observed);
    move |observer| {
        let Some(observed) = weak.upgrade() else {
            return;
        };
        collect(&observed, Instant::now(), |s| observe(observer, s), &expire);
    }
}

/// Exports the series of `observed`; the idle ones nobody holds leave it
/// through `expire`. A series is held when anything besides its look-up
/// entries and `observed` has it: a handle the application kept (metrics-rs
/// #372: such a series must never expire).
fn collect<T: Idles>(
    observed: &Observed<T>,
    now: Instant,
    mut export: impl FnMut(&T),
    expire: &Expire<T>,
) {
    let mut series = observed.lock();
    let Series {
        by_labels,
        overflow,
    } = &mut *series;
    let idle = |s: &Arc<T>, references: usize| {
        observed.timeouts.of(s.attributes()).is_some_and(|timeout| {
            s.recency().idle_for(now) > timeout && Arc::strong_count(s) <= references
        })
    };
    by_labels.retain(|_, entry| {
        if idle(&entry.series, 1 + entry.keys.len()) && expire(entry) {
            return false;
        }
        export(&entry.series);
        true
    });
    if let Some(s) = overflow {
        if idle(s, 1) {
            *overflow = None;
        } else {
            export(s);
        }
    }
}

pub(crate) struct NewInstrument<'a> {
    pub(crate) meter: &'a Meter,
    pub(crate) otel_name: String,
    pub(crate) described: Option<&'a Described>,
}

impl NewInstrument<'_> {
    fn description(&self) -> String {
        self.described
            .map(|d| d.description.clone())
            .unwrap_or_default()
    }

    fn unit(&self) -> Option<&'static str> {
        self.described
            .and_then(|d| d.unit)
            .and_then(|u| ucum(u.as_str()))
    }

    pub(crate) fn counter(self, timeouts: Timeouts, expire: Expire<CounterSeries>) -> Instrument {
        let observed = Arc::new(Observed::new(timeouts));
        let mut builder = self
            .meter
            .otel()
            .u64_observable_counter(self.otel_name.clone())
            .with_description(self.description());
        if let Some(unit) = self.unit() {
            builder = builder.with_unit(unit);
        }
        let report = reporter(&observed, expire, |observer, s: &CounterSeries| {
            observer.observe(s.value(), &s.attributes)
        });
        Instrument::Counter {
            observed,
            _instrument: builder.with_callback(report).build(),
        }
    }

    pub(crate) fn gauge(self, timeouts: Timeouts, expire: Expire<GaugeSeries>) -> Instrument {
        let observed = Arc::new(Observed::new(timeouts));
        let mut builder = self
            .meter
            .otel()
            .f64_observable_gauge(self.otel_name.clone())
            .with_description(self.description());
        if let Some(unit) = self.unit() {
            builder = builder.with_unit(unit);
        }
        let report = reporter(&observed, expire, |observer, s: &GaugeSeries| {
            observer.observe(s.value(), &s.attributes)
        });
        Instrument::Gauge {
            observed,
            _instrument: builder.with_callback(report).build(),
        }
    }

    /// A histogram with `buckets`, or exponential without.
    pub(crate) fn histogram(self, buckets: Option<&[f64]>, summarised: bool) -> Instrument {
        let mut builder = self
            .meter
            .f64_histogram(self.otel_name.clone())
            .with_description(self.description());
        if let Some(unit) = self.unit() {
            builder = builder.with_unit(unit);
        }
        if let Some(buckets) = buckets {
            builder = builder.with_boundaries(buckets.to_vec());
        }
        Instrument::Histogram {
            histogram: builder.build(),
            summarised,
            series: HistogramSet::default(),
        }
    }
}
