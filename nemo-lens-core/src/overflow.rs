//! Instruments past their cardinality limit. The SDK keeps the first
//! `limit` attribute sets of an instrument and merges every later one into a
//! single series marked `otel.metric.overflow=true`, silently; this module
//! spots that series in what is exported and says so, once per instrument.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};

/// The attribute the SDK puts on the overflow series.
pub const OVERFLOW_ATTRIBUTE: &str = "otel.metric.overflow";

/// The SDK's limit when none is configured.
const SDK_DEFAULT_LIMIT: usize = 2000;

static LIMIT: AtomicUsize = AtomicUsize::new(SDK_DEFAULT_LIMIT);
static OVERFLOWING: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Remembers the limit setup configured, for the warning's text.
pub fn set_limit(limit: Option<usize>) {
    LIMIT.store(limit.unwrap_or(SDK_DEFAULT_LIMIT), Ordering::Relaxed);
}

/// The limit setup configured (the SDK's 2000 when none was).
pub fn limit() -> usize {
    LIMIT.load(Ordering::Relaxed)
}

/// Instruments of this process that have overflowed their cardinality limit
/// since it started, in the order they did.
pub fn overflowing_instruments() -> Vec<String> {
    OVERFLOWING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Notes every instrument of `metrics` with an overflow series, warning
/// through `tracing` the first time each one does.
pub fn note(metrics: &ResourceMetrics) {
    for (scope, metric) in metrics
        .scope_metrics()
        .flat_map(|scope| scope.metrics().map(move |metric| (scope.scope(), metric)))
    {
        let name = warned_name(scope.name(), metric.name());
        let overflowed = match metric.data() {
            AggregatedMetrics::F64(data) => has_overflow(data),
            AggregatedMetrics::U64(data) => has_overflow(data),
            AggregatedMetrics::I64(data) => has_overflow(data),
        };
        if overflowed {
            warn_once(name);
        }
    }
}

/// [`note`] for nemo-lens's own series.
pub fn note_owned(owned: &[crate::owned::OwnedScope]) {
    for scope in owned {
        for metric in &scope.metrics {
            let overflowed = metric.totals().iter().any(|(attributes, _, _)| {
                attributes
                    .iter()
                    .any(|kv| kv.key.as_str() == OVERFLOW_ATTRIBUTE)
            });
            if overflowed {
                warn_once(warned_name(scope.scope.name(), &metric.name));
            }
        }
    }
}

/// Bridged instruments are warned about under the name their users wrote
/// (and their dashboards query), not the OpenTelemetry one.
fn warned_name(scope: &str, instrument: &str) -> String {
    if scope == crate::bridge::SCOPE {
        crate::bridge::prometheus_name(instrument)
    } else {
        instrument.to_owned()
    }
}

/// Says once per instrument that `name` overflowed.
pub fn warn_once(name: String) {
    {
        let mut known = OVERFLOWING.lock().unwrap_or_else(PoisonError::into_inner);
        if known.contains(&name) {
            return;
        }
        known.push(name.clone());
    }
    // Warned with the lock released: a subscriber may ask for the list.
    let limit = LIMIT.load(Ordering::Relaxed);
    crate::warnings::emit(crate::warnings::Warning::CardinalityOverflow, || {
        tracing::warn!(
            target: "nemo_lens",
            instrument = name.as_str(),
            limit,
            "instrument `{name}` has more than {limit} attribute sets; every new one is \
             merged into a single series marked {OVERFLOW_ATTRIBUTE}=true. Bound the attribute \
             values (model names, adapters, routes) or raise NEMO_LENS_CARDINALITY_LIMIT"
        );
    });
}

fn has_overflow<T>(data: &MetricData<T>) -> bool {
    fn marked<'a>(mut attributes: impl Iterator<Item = &'a opentelemetry::KeyValue>) -> bool {
        attributes.any(|kv| kv.key.as_str() == OVERFLOW_ATTRIBUTE)
    }
    match data {
        MetricData::Gauge(g) => g.data_points().any(|p| marked(p.attributes())),
        MetricData::Sum(s) => s.data_points().any(|p| marked(p.attributes())),
        MetricData::Histogram(h) => h.data_points().any(|p| marked(p.attributes())),
        MetricData::ExponentialHistogram(h) => h.data_points().any(|p| marked(p.attributes())),
    }
}
