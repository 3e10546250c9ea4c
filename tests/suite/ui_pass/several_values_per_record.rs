//! A histogram field holding several values: each is recorded, into one
//! series, with one look-up.

use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::{Instruments, Meter};

#[derive(Instruments, Default)]
struct Stream {
    /// Time between two chunks of one stream.
    #[histogram("app.chunk.gap", unit = "s", buckets = [0.01, 0.05, 0.1])]
    gaps_s: Option<Vec<f64>>,
    /// The model streamed from.
    #[attribute("app.model")]
    model: Option<&'static str>,
}

#[test]
fn several_values_per_record() {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    let meter = Meter::new(provider.meter("test"));
    // An array converts into the Vec; a NaN is dropped, the others kept.
    Stream::default()
        .gaps_s([0.02, 0.07, f64::NAN, 0.2])
        .model("m")
        .record(&meter);
    provider.force_flush().unwrap();
    let batches = exporter.get_finished_metrics().unwrap();
    let metric = batches[0]
        .scope_metrics()
        .next()
        .unwrap()
        .metrics()
        .next()
        .unwrap();
    let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() else {
        panic!("a histogram");
    };
    let point = histogram.data_points().next().unwrap();
    assert_eq!(point.count(), 3);
    assert_eq!(point.bucket_counts().collect::<Vec<_>>(), [0, 1, 1, 1]);
    assert_eq!(
        meter
            .instruments::<Stream>()
            .unwrap()
            .dropped_measurements(),
        1
    );
}
