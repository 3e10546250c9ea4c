//! One `tracing` warning per recording problem, in a test binary of its
//! own: tracing caches whether a call site is wanted process-wide, so a
//! warning first hit by another test's thread (no subscriber) would be
//! filtered here.

use std::sync::{Arc, Mutex};

use lens_core::groups::{record_metrics, register_metric_group, MetricKind, MetricSpec};
use lens_core::Meter;
use opentelemetry::metrics::MeterProvider as _;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};

/// Counts `nemo_lens` warnings by message.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<String>>>);

struct Message<'a>(&'a mut String);

impl tracing::field::Visit for Message<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Warnings {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let meta = event.metadata();
        if meta.target() == "nemo_lens" && *meta.level() == tracing::Level::WARN {
            let mut message = String::new();
            event.record(&mut Message(&mut message));
            self.0.lock().unwrap().push(message);
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn each_problem_warns_once_and_records_nothing() {
    register_metric_group(
        "warned",
        [
            MetricSpec::new("loss", "warned.loss", MetricKind::Gauge),
            MetricSpec::new("steps", "warned.steps", MetricKind::Counter),
            MetricSpec::new("mem", "warned.mem", MetricKind::ObservableGauge)
                .unit("By")
                .callback(|_| {}),
        ],
    )
    .unwrap();
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    let meter = Meter::new(provider.meter("nemo.lens"));
    let warnings = Warnings::default();
    tracing::subscriber::with_default(warnings.clone(), || {
        for _ in 0..3 {
            record_metrics(&meter, "warned", [("lost", 1.0)], &[]);
            record_metrics(&meter, "warned", [("loss", f64::NAN)], &[]);
            record_metrics(&meter, "warned", [("steps", -1.0)], &[]);
            record_metrics(&meter, "warned", [("mem", 5.0)], &[]);
            record_metrics(&meter, "nobody", [("x", 1.0)], &[]);
        }
        record_metrics(&meter, "warned", [("loss", 0.25), ("steps", 2.0)], &[]);
    });
    let warned = warnings.0.lock().unwrap().clone();
    assert_eq!(warned.len(), 5, "{warned:#?}");
    for expected in [
        "metric group `warned` has no key `lost`",
        "`loss` of metric group `warned` got NaN",
        "`steps` of metric group `warned` is a counter and got -1",
        "`mem` of metric group `warned` is observable_gauge",
        "metric group `nobody` is not registered",
    ] {
        assert!(
            warned.iter().any(|w| w.contains(expected)),
            "{expected}: {warned:#?}"
        );
    }
    // Only the good values were recorded.
    provider.force_flush().unwrap();
    let batches = exporter.get_finished_metrics().unwrap();
    let mut values: Vec<(String, f64)> = batches
        .last()
        .unwrap()
        .scope_metrics()
        .flat_map(|s| s.metrics())
        .filter_map(|m| match m.data() {
            AggregatedMetrics::F64(MetricData::Gauge(g)) => {
                Some((m.name().to_owned(), g.data_points().next()?.value()))
            }
            AggregatedMetrics::F64(MetricData::Sum(s)) => {
                Some((m.name().to_owned(), s.data_points().next()?.value()))
            }
            _ => None,
        })
        .collect();
    values.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        values,
        [
            ("warned.loss".to_owned(), 0.25),
            ("warned.steps".to_owned(), 2.0)
        ]
    );
}
