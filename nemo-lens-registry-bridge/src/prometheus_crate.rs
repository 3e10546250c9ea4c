//! A `prometheus` 0.14 registry as a source: its `gather()`, whose
//! families are already what its `TextEncoder` writes.

use nemo_lens_core::owned::{Gather, GatheredFamily, GatheredKind, GatheredSeries, GatheredValue};
use opentelemetry::InstrumentationScope;
use prometheus::proto::{Metric, MetricFamily, MetricType};

pub(crate) struct PrometheusSource {
    registry: prometheus::Registry,
    scope: InstrumentationScope,
}

impl PrometheusSource {
    pub(crate) fn new(registry: prometheus::Registry) -> Self {
        PrometheusSource {
            registry,
            scope: crate::scope::next("prometheus", "0.14"),
        }
    }
}

impl Gather for PrometheusSource {
    fn scope(&self) -> &InstrumentationScope {
        &self.scope
    }

    fn gather(&self) -> Vec<GatheredFamily> {
        self.registry.gather().iter().map(family).collect()
    }
}

fn family(family: &MetricFamily) -> GatheredFamily {
    let kind = match family.get_field_type() {
        MetricType::COUNTER => GatheredKind::Counter,
        MetricType::GAUGE => GatheredKind::Gauge,
        MetricType::UNTYPED => GatheredKind::Untyped,
        MetricType::HISTOGRAM => GatheredKind::Histogram,
        MetricType::SUMMARY => GatheredKind::Summary,
    };
    GatheredFamily {
        name: family.name().to_owned(),
        help: family.help().to_owned(),
        unit: String::new(),
        kind,
        series: family
            .get_metric()
            .iter()
            .map(|metric| GatheredSeries::new(labels(metric), value(kind, metric)))
            .collect(),
    }
}

fn labels(metric: &Metric) -> Vec<(String, String)> {
    metric
        .get_label()
        .iter()
        .map(|pair| (pair.name().to_owned(), pair.value().to_owned()))
        .collect()
}

fn value(kind: GatheredKind, metric: &Metric) -> GatheredValue {
    match kind {
        GatheredKind::Counter => GatheredValue::Number(metric.get_counter().get_value()),
        GatheredKind::Gauge => GatheredValue::Number(metric.get_gauge().get_value()),
        GatheredKind::Untyped => GatheredValue::Number(untyped(metric)),
        GatheredKind::Histogram => {
            let histogram = metric.get_histogram();
            GatheredValue::Histogram {
                count: histogram.get_sample_count(),
                sum: histogram.get_sample_sum(),
                // `+Inf` is the count; a collector of the application's own
                // may list it as a bucket, which the encoder skips too.
                buckets: histogram
                    .get_bucket()
                    .iter()
                    .filter(|bucket| bucket.upper_bound() != f64::INFINITY)
                    .map(|bucket| (bucket.upper_bound(), bucket.cumulative_count()))
                    .collect(),
            }
        }
        GatheredKind::Summary => {
            let summary = metric.get_summary();
            GatheredValue::Summary {
                quantiles: summary
                    .get_quantile()
                    .iter()
                    .map(|q| (q.quantile(), q.value()))
                    .collect(),
                sum: summary.sample_sum(),
                count: summary.sample_count(),
            }
        }
    }
}

/// An untyped value, which a collector of the application's own can make.
// Deprecated in 0.14 as protobuf-specific with no replacement; the text
// encoder of the same release still reads it this way.
#[allow(deprecated)]
fn untyped(metric: &Metric) -> f64 {
    metric.get_untyped().get_value()
}
