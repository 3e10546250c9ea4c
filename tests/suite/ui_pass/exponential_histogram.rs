//! One histogram pinned to exponential aggregation, one following the
//! provider's default: a provider built with `histogram_view` exports each as
//! declared.

use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::telemetry::{histogram_view, HistogramAggregation};
use nemo_lens::{Instruments, Meter};

#[derive(Instruments, Default)]
struct Latency {
    /// Time to the first token, milliseconds to minutes.
    #[histogram(
        "app.time_to_first_token",
        unit = "s",
        aggregation = "base2_exponential_bucket_histogram"
    )]
    ttft: Option<f64>,
    /// Time in the queue.
    #[histogram("app.queue_time", unit = "s", buckets = [0.1, 1.0])]
    queue: Option<f64>,
}

#[test]
fn exponential_histogram() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .with_view(histogram_view(HistogramAggregation::ExplicitBucket))
        .build();
    let meter = Meter::new(provider.meter("test"));
    Latency::default().ttft(0.25).queue(0.5).record(&meter);
    provider.force_flush().unwrap();

    let batches = exporter.get_finished_metrics().unwrap();
    let mut kinds: Vec<(String, &str)> = batches
        .last()
        .unwrap()
        .scope_metrics()
        .flat_map(|scope| scope.metrics())
        .map(|metric| {
            let kind = match metric.data() {
                AggregatedMetrics::F64(MetricData::ExponentialHistogram(h)) => {
                    assert_eq!(h.data_points().next().unwrap().sum(), 0.25);
                    "exponential"
                }
                AggregatedMetrics::F64(MetricData::Histogram(h)) => {
                    let point = h.data_points().next().unwrap();
                    assert_eq!(point.bounds().collect::<Vec<_>>(), [0.1, 1.0]);
                    "explicit"
                }
                _ => "other",
            };
            (metric.name().to_owned(), kind)
        })
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            ("app.queue_time".to_owned(), "explicit"),
            ("app.time_to_first_token".to_owned(), "exponential"),
        ]
    );
}
