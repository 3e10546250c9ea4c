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
