//! A metric renamed by newer conventions: one field, the old name until the
//! meter opts in, the new one once it does, both with `/dup`.

use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::{Instruments, Meter, SemconvGate, SemconvOptIn};

#[derive(Instruments, Default)]
struct Usage {
    /// Tokens used.
    #[histogram("app.token.usage", unit = "{token}", until_opt_in = "app_latest")]
    #[counter(
        "app.usage.tokens",
        unit = "{token}",
        description = "Tokens used, as a sum.",
        opt_in = "app_latest"
    )]
    tokens: Option<u64>,
    /// The modality, on the new counter only.
    #[attribute("app.modality", default = "text", only("app.usage.tokens"))]
    modality: Option<&'static str>,
}

fn exported(opt_in: &str) -> Vec<(String, usize)> {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    let meter = Meter::new(provider.meter("test")).with_semconv_opt_in(SemconvOptIn::parse(opt_in));
    Usage::default().tokens(7).record(&meter);
    provider.force_flush().unwrap();
    let batches = exporter.get_finished_metrics().unwrap();
    let mut names: Vec<(String, usize)> = batches
        .last()
        .unwrap()
        .scope_metrics()
        .flat_map(|scope| scope.metrics())
        .map(|metric| {
            let attributes = match metric.data() {
                nemo_lens::opentelemetry_sdk::metrics::data::AggregatedMetrics::U64(
                    nemo_lens::opentelemetry_sdk::metrics::data::MetricData::Sum(sum),
                ) => sum.data_points().next().unwrap().attributes().count(),
                _ => 0,
            };
            (metric.name().to_owned(), attributes)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn renamed_metric() {
    let d = Usage::DESCRIPTORS;
    assert_eq!(d.len(), 2);
    assert_eq!(d[0].semconv, SemconvGate::UntilOptIn("app_latest"));
    assert_eq!(d[1].semconv, SemconvGate::OptIn("app_latest"));
    assert_eq!(d[1].attribute_keys, ["app.modality"]);
    assert!(d[0].attribute_keys.is_empty());

    let old = ("app.token.usage".to_owned(), 0);
    let new = ("app.usage.tokens".to_owned(), 1);
    assert_eq!(exported(""), std::slice::from_ref(&old));
    assert_eq!(exported("app_latest"), std::slice::from_ref(&new));
    assert_eq!(exported("app_latest/dup"), [old, new]);
}
