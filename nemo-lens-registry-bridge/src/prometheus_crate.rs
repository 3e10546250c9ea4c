//! A `prometheus` 0.14 registry as a source: what its own `TextEncoder`
//! writes, copied as it is into text scrapes and read back for protobuf
//! scrapes and OTLP, as for `prometheus-client`.
//!
//! Why the encoder and not `gather()`'s families: their types change with
//! the crate's `protobuf` feature (plain structs without it, rust-protobuf
//! messages with other accessors with it, the default), and Cargo unifies
//! features across the user's graph, so a bridge that reads the structs
//! builds for one of the two shapes only. The encoder takes the families of
//! either shape and writes the same text, which is exactly what the
//! crate's own `/metrics` serves.

use std::sync::atomic::{AtomicUsize, Ordering};

use nemo_lens_core::__internal::warnings::{emit, Warning};
use nemo_lens_core::owned::{Gather, GatheredFamily};
use opentelemetry::InstrumentationScope;
use prometheus::TextEncoder;

pub(crate) struct PrometheusSource {
    registry: prometheus::Registry,
    scope: InstrumentationScope,
    /// The last text's length: the next one is sized once.
    last_len: AtomicUsize,
}

impl PrometheusSource {
    pub(crate) fn new(registry: prometheus::Registry) -> Self {
        PrometheusSource {
            registry,
            scope: crate::scope::next("prometheus", "0.14"),
            last_len: AtomicUsize::new(0),
        }
    }
}

impl Gather for PrometheusSource {
    fn scope(&self) -> &InstrumentationScope {
        &self.scope
    }

    fn gather(&self) -> Vec<GatheredFamily> {
        self.text()
            .map(|text| crate::text::parse(&text))
            .unwrap_or_default()
    }

    fn text(&self) -> Option<String> {
        let mut families = self.registry.gather();
        // The encoder panics on an untyped family (`unimplemented!()`, in
        // both shapes), and its value cannot be read in a way both shapes
        // share: left out, and named once.
        families.retain(|family| {
            let untyped = family.get_field_type() == prometheus::proto::MetricType::UNTYPED;
            if untyped {
                let name = family.name().to_owned();
                emit(Warning::Export, || {
                    tracing::warn!(
                        target: "nemo_lens",
                        family = %name,
                        "the untyped family {name} of a prometheus registry is not exported: \
                         the crate's text encoder cannot write untyped families; register it \
                         as a gauge"
                    )
                });
            }
            !untyped
        });
        let mut text = String::with_capacity(self.last_len.load(Ordering::Relaxed));
        // Fails only on a family the encoder cannot write (no metrics, or
        // a type it does not know), which `Registry::gather` never returns.
        if let Err(error) = TextEncoder::new().encode_utf8(&families, &mut text) {
            emit(Warning::Export, || {
                tracing::warn!(
                    target: "nemo_lens",
                    "a prometheus registry could not be encoded ({error}), so this scrape or \
                     export has none of its families"
                )
            });
            return None;
        }
        self.last_len.store(text.len(), Ordering::Relaxed);
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::Encoder as _;

    /// Reads the registry through its encoder: counters, gauges,
    /// histograms and labels, named as the crate's endpoint names them.
    #[test]
    fn families_are_read_back_from_the_crates_own_text() {
        let registry = prometheus::Registry::new();
        let requests = prometheus::IntCounterVec::new(
            prometheus::Opts::new("http_requests_total", "Requests."),
            &["route"],
        )
        .unwrap();
        registry.register(Box::new(requests.clone())).unwrap();
        requests.with_label_values(&["/v1"]).inc_by(3);
        let latency = prometheus::Histogram::with_opts(
            prometheus::HistogramOpts::new("latency_seconds", "Latency.").buckets(vec![0.1, 1.0]),
        )
        .unwrap();
        registry.register(Box::new(latency.clone())).unwrap();
        latency.observe(0.5);
        let source = PrometheusSource::new(registry);
        let families = source.gather();
        let names: Vec<&str> = families.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["http_requests_total", "latency_seconds"]);
        assert_eq!(families[0].help, "Requests.");
        assert_eq!(
            families[0].series[0].labels,
            [("route".to_owned(), "/v1".to_owned())]
        );
        let text = source.text().unwrap();
        assert!(
            text.contains("http_requests_total{route=\"/v1\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("latency_seconds_bucket{le=\"1\"} 1\n"),
            "{text}"
        );
        assert_eq!(
            TextEncoder::new().format_type(),
            "text/plain; version=0.0.4"
        );
    }

    /// A collector of the application's own with a summary and an
    /// untyped family: the encoder would panic on the latter, so it is
    /// left out and the summary served.
    struct Uptime;

    impl prometheus::core::Collector for Uptime {
        fn desc(&self) -> Vec<&prometheus::core::Desc> {
            Vec::new()
        }

        fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
            use prometheus::proto::{MetricFamily, MetricType, Summary};
            let family = |name: &str, kind, metric| {
                let mut family = MetricFamily::default();
                family.set_name(name.into());
                family.set_help(name.into());
                family.set_field_type(kind);
                family.set_metric(vec![metric]);
                family
            };
            let mut summary = Summary::default();
            summary.set_sample_count(4);
            summary.set_sample_sum(2.5);
            let mut waited = prometheus::proto::Metric::default();
            waited.set_summary(summary);
            vec![
                family("queue_wait_seconds", MetricType::SUMMARY, waited),
                family("uptime_seconds", MetricType::UNTYPED, untyped(3600.5)),
            ]
        }
    }

    /// A metric holding an untyped value, in the shape the crate's types
    /// have in this build: plain structs (setter deprecated, with no
    /// replacement) or rust-protobuf messages (a public field).
    #[cfg(not(feature = "test-prometheus-protobuf"))]
    #[allow(deprecated)]
    fn untyped(value: f64) -> prometheus::proto::Metric {
        let mut untyped = prometheus::proto::Untyped::default();
        untyped.set_value(value);
        let mut metric = prometheus::proto::Metric::default();
        metric.set_untyped(untyped);
        metric
    }

    #[cfg(feature = "test-prometheus-protobuf")]
    fn untyped(value: f64) -> prometheus::proto::Metric {
        let mut untyped = prometheus::proto::Untyped::default();
        untyped.set_value(value);
        prometheus::proto::Metric {
            untyped: Some(untyped).into(),
            ..Default::default()
        }
    }

    #[test]
    fn an_untyped_family_is_left_out_and_the_rest_served() {
        let registry = prometheus::Registry::new();
        registry.register(Box::new(Uptime)).unwrap();
        let source = PrometheusSource::new(registry);
        let text = source.text().unwrap();
        assert!(text.contains("queue_wait_seconds_count 4\n"), "{text}");
        assert!(!text.contains("uptime_seconds"), "{text}");
        let names: Vec<String> = source.gather().into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["queue_wait_seconds"]);
    }
}
