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

/// What a plain `fmt` subscriber writes, one line per event.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
    let lines = Lines::default();
    let writer = lines.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        for _ in 0..3 {
            record_metrics(&meter, "warned", [("lost", 1.0)], &[]);
            record_metrics(&meter, "warned", [("loss", f64::NAN)], &[]);
            record_metrics(&meter, "warned", [("steps", -1.0)], &[]);
            record_metrics(&meter, "warned", [("mem", 5.0)], &[]);
            record_metrics(&meter, "nobody", [("x", 1.0)], &[]);
        }
        record_metrics(&meter, "warned", [("loss", 0.25), ("steps", 2.0)], &[]);
    });
    let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
    let warned: Vec<&str> = text
        .lines()
        .filter(|line| line.contains(" WARN nemo_lens:"))
        .collect();
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
