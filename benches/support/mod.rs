//! What every bench builds on: a provider whose reader never exports during
//! a bench, so only recording is timed.

#![allow(dead_code)] // each bench uses part of this module

use nemo_lens::opentelemetry::metrics::{Histogram, Meter as OtelMeter};
use nemo_lens::opentelemetry::{KeyValue, StringValue};
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

/// What a careful user writes by hand for one inference request.
pub struct HandInference {
    duration: Histogram<f64>,
    tokens: Histogram<u64>,
}

impl HandInference {
    pub fn new(meter: &OtelMeter) -> Self {
        HandInference {
            duration: meter
                .f64_histogram("gen_ai.server.request.duration")
                .with_unit("s")
                .with_description("GenAI server request duration.")
                .with_boundaries(vec![
                    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92,
                ])
                .build(),
            tokens: token_usage(meter),
        }
    }

    pub fn record(&self, model: &StringValue) {
        let attributes = [
            KeyValue::new("gen_ai.operation.name", "text_completion"),
            KeyValue::new("gen_ai.provider.name", "nemo"),
            KeyValue::new("gen_ai.request.model", model.clone()),
        ];
        self.duration.record(0.42, &attributes);
        let input = [
            KeyValue::new("gen_ai.operation.name", "text_completion"),
            KeyValue::new("gen_ai.provider.name", "nemo"),
            KeyValue::new("gen_ai.request.model", model.clone()),
            KeyValue::new("gen_ai.token.type", "input"),
        ];
        self.tokens.record(128, &input);
        let output = [
            KeyValue::new("gen_ai.operation.name", "text_completion"),
            KeyValue::new("gen_ai.provider.name", "nemo"),
            KeyValue::new("gen_ai.request.model", model.clone()),
            KeyValue::new("gen_ai.token.type", "output"),
        ];
        self.tokens.record(256, &output);
    }
}

/// `gen_ai.client.token.usage` by hand, with the GenAI buckets.
pub fn token_usage(meter: &OtelMeter) -> Histogram<u64> {
    meter
        .u64_histogram("gen_ai.client.token.usage")
        .with_unit("{token}")
        .with_description("Number of input and output tokens used.")
        .with_boundaries(vec![
            1.0, 4.0, 16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0,
            4194304.0, 16777216.0, 67108864.0,
        ])
        .build()
}
