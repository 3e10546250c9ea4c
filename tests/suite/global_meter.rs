//! `get_meter`: one cache per name on the global provider, renewed when the
//! global provider is replaced. Its own test binary, since it sets the global
//! provider.

use crate::support::exclusive;

use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::opentelemetry::global;
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::{
    get_meter, EnvLookup, Instruments, NemoLensConfig, SetupOptions, GEN_AI_LATEST_EXPERIMENTAL,
};

fn install() -> (SdkMeterProvider, InMemoryMetricExporter) {
    let exporter = InMemoryMetricExporter::default();
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(exporter.clone()).build())
        .build();
    global::set_meter_provider(provider.clone());
    (provider, exporter)
}

fn exported_reward(provider: &SdkMeterProvider, exporter: &InMemoryMetricExporter) -> Option<f64> {
    exporter.reset();
    provider.force_flush().unwrap();
    let batches = exporter.get_finished_metrics().unwrap();
    let metric = batches
        .last()?
        .scope_metrics()
        .flat_map(|s| s.metrics())
        .find(|m| m.name() == "rl.reward.mean")?;
    match metric.data() {
        nemo_lens::opentelemetry_sdk::metrics::data::AggregatedMetrics::F64(
            nemo_lens::opentelemetry_sdk::metrics::data::MetricData::Gauge(g),
        ) => g.data_points().next().map(|p| p.value()),
        _ => None,
    }
}

#[test]
fn same_name_shares_a_cache_until_the_provider_is_replaced() {
    let _serial = exclusive();
    let (first_provider, first_exporter) = install();
    let a = get_meter("nemo.lens");
    let b = get_meter("nemo.lens");
    let other = get_meter("other.scope");
    assert!(a.same_cache(&b));
    assert!(!a.same_cache(&other));
    RlMetrics::default().reward_mean(1.5).record(&a);
    assert_eq!(b.cached_sets(), 1);
    assert_eq!(exported_reward(&first_provider, &first_exporter), Some(1.5));

    let (second_provider, second_exporter) = install();
    let c = get_meter("nemo.lens");
    assert!(!a.same_cache(&c), "a new provider gets a new cache");
    assert_eq!(c.cached_sets(), 0);
    RlMetrics::default().reward_mean(2.5).record(&c);
    assert_eq!(
        exported_reward(&second_provider, &second_exporter),
        Some(2.5)
    );
    assert_eq!(exported_reward(&first_provider, &first_exporter), Some(1.5));
}

#[test]
fn get_meter_follows_the_opt_in_of_the_setup_that_installed_the_provider() {
    let _serial = exclusive();
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        (
            "OTEL_SEMCONV_STABILITY_OPT_IN",
            "gen_ai_latest_experimental",
        ),
    ]))
    .unwrap();
    let handle = SetupOptions::new()
        .allow_reinit(true)
        .probe_gpus(false)
        .push_exporter(InMemoryMetricExporter::default())
        .setup(&config, 0, 1)
        .unwrap();
    let meter = get_meter("nemo.lens");
    assert!(meter
        .semconv_opt_in()
        .records_new(GEN_AI_LATEST_EXPERIMENTAL));
    assert!(!meter
        .semconv_opt_in()
        .records_old(GEN_AI_LATEST_EXPERIMENTAL));
    assert_eq!(meter.semconv_opt_in(), handle.meter.semconv_opt_in());
    handle.shutdown().unwrap();
}

/// Before a provider is installed the global one is OpenTelemetry's no-op
/// provider: `get_meter` gives a disabled meter (a record costs what a
/// disabled one does, and builds no set); once a provider is installed,
/// the next call gives a meter that records.
#[test]
fn before_a_provider_is_installed_the_meter_is_disabled() {
    let _serial = exclusive();
    global::set_meter_provider(nemo_lens::opentelemetry::metrics::noop::NoopMeterProvider::new());
    let early = get_meter("nemo.lens");
    assert!(!early.is_enabled());
    RlMetrics::default().reward_mean(0.5).record(&early);
    assert_eq!(early.cached_sets(), 0);

    let (provider, exporter) = install();
    let late = get_meter("nemo.lens");
    assert!(late.is_enabled());
    RlMetrics::default().reward_mean(0.75).record(&late);
    assert_eq!(exported_reward(&provider, &exporter), Some(0.75));
}
