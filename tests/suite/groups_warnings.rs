//! One `tracing` warning per recording problem, in a process of its own:
//! tracing caches whether a call site is wanted process-wide, so a warning
//! first hit by another test's thread (no subscriber) would be filtered
//! here.

use crate::support::log_lines::Lines;
use nemo_lens::groups::{record_metrics, register_metric_group, MetricKind, MetricSpec};
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::Meter;

#[test]
fn each_problem_warns_once() {
    crate::support::own_process!(each_problem_warns_once);
    register_metric_group(
        "warned",
        [
            MetricSpec::new("loss", "warned.loss", MetricKind::Gauge).description("Loss."),
            MetricSpec::new("steps", "warned.steps", MetricKind::Counter)
                .description("Steps.")
                .attributes(["gym.env.name"]),
            MetricSpec::new("mem", "warned.mem", MetricKind::ObservableGauge)
                .unit("By")
                .description("Memory.")
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
        // Undeclared attributes: left off, the value recorded, one warning
        // per key and attribute however often they come.
        for step in 0..3 {
            record_metrics(
                &meter,
                "warned",
                [("steps", 1.0)],
                &[
                    KeyValue::new("gym.env.name", "math"),
                    KeyValue::new("oops", step),
                    KeyValue::new("pid", 7),
                ],
            );
            record_metrics(
                &meter,
                "warned",
                [("loss", 0.5)],
                &[KeyValue::new("oops", step)],
            );
        }
    });
    let text = lines.text();
    let warned: Vec<&str> = text
        .lines()
        .filter(|line| line.contains(" WARN nemo_lens:"))
        .collect();
    assert_eq!(warned.len(), 8, "{warned:#?}");
    for expected in [
        "metric group `warned` has no key `lost`",
        "`loss` of metric group `warned` got NaN",
        "`steps` of metric group `warned` is a counter and got -1",
        "`mem` of metric group `warned` is observable_gauge",
        "metric group `nobody` is not registered",
        "metric group `warned`: `steps` was recorded with attribute `oops`, which its spec does \
         not declare (it declares gym.env.name); the attribute is left off and the value \
         recorded without it",
        "metric group `warned`: `steps` was recorded with attribute `pid`, which its spec does \
         not declare (it declares gym.env.name); the attribute is left off and the value \
         recorded without it",
        "metric group `warned`: `loss` was recorded with attribute `oops`, which its spec does \
         not declare (it declares none); the attribute is left off and the value recorded \
         without it",
    ] {
        assert_eq!(
            warned.iter().filter(|w| w.contains(expected)).count(),
            1,
            "{expected}: {warned:#?}"
        );
    }
    // The good values and those with undeclared attributes were recorded,
    // the latter without them; the bad values were not.
    provider.force_flush().unwrap();
    let batches = exporter.get_finished_metrics().unwrap();
    let attributes = |it: &mut dyn Iterator<Item = &KeyValue>| -> Vec<String> {
        it.map(|kv| format!("{}={}", kv.key, kv.value)).collect()
    };
    let mut values: Vec<(String, Vec<String>, f64)> = Vec::new();
    for m in batches
        .last()
        .unwrap()
        .scope_metrics()
        .flat_map(|s| s.metrics())
    {
        let name = m.name().to_owned();
        match m.data() {
            AggregatedMetrics::F64(MetricData::Gauge(g)) => values.extend(
                g.data_points()
                    .map(|p| (name.clone(), attributes(&mut p.attributes()), p.value())),
            ),
            AggregatedMetrics::F64(MetricData::Sum(s)) => values.extend(
                s.data_points()
                    .map(|p| (name.clone(), attributes(&mut p.attributes()), p.value())),
            ),
            _ => {}
        }
    }
    values.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(
        values,
        [
            ("warned.loss".to_owned(), vec![], 0.5),
            ("warned.steps".to_owned(), vec![], 2.0),
            (
                "warned.steps".to_owned(),
                vec!["gym.env.name=math".to_owned()],
                3.0
            ),
        ]
    );
}
