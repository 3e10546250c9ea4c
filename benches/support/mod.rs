//! What every bench builds on: a provider whose reader never exports during
//! a bench, so only recording is timed.

#![allow(dead_code)] // each bench uses part of this module

use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, MeterProviderBuilder, PeriodicReader, SdkMeterProvider,
};

/// A provider builder with an in-memory exporter behind a periodic reader:
/// its period is far longer than a bench, so export never runs.
pub fn provider_builder() -> MeterProviderBuilder {
    SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
}

/// [`provider_builder`], built.
pub fn provider() -> SdkMeterProvider {
    provider_builder().build()
}

/// Telemetry as `setup_telemetry` builds it for a server: a Prometheus
/// endpoint on a port of the system's choosing, whose scrapes read the
/// owned series (the metrics bridge's among them).
pub fn serving_telemetry() -> nemo_lens::TelemetryHandle {
    use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions};
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "true"),
        ("NEMO_LENS_EXPORTER", "prometheus"),
        ("OTEL_EXPORTER_PROMETHEUS_HOST", "127.0.0.1"),
        ("OTEL_EXPORTER_PROMETHEUS_PORT", "0"),
    ]))
    .expect("a valid configuration");
    SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .probe_gpus(false)
        .set_global(false)
        .setup(&config, 0, 1)
        .expect("telemetry set up")
}
