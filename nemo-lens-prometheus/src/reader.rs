//! The pull reader installed on the meter provider: where it is in its life
//! (its renderer's error says why nothing is served) and where setup puts
//! the provider's owned series for it.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, Temporality};

use nemo_lens_core::owned::Registry;

/// Where a [`PrometheusReader`] is in its life, for the renderer's error.
#[derive(Debug, Default)]
pub(crate) struct ReaderState(AtomicU8);

impl ReaderState {
    pub(crate) const NOT_INSTALLED: u8 = 0;
    pub(crate) const INSTALLED: u8 = 1;
    pub(crate) const SHUT_DOWN: u8 = 2;

    pub(crate) fn set(&self, state: u8) {
        self.0.store(state, Ordering::Release);
    }

    pub(crate) fn get(&self) -> u8 {
        self.0.load(Ordering::Acquire)
    }
}

/// Where setup puts the registry of the provider a reader is installed on.
pub type RegistrySlot = Arc<OnceLock<Arc<Registry>>>;

/// Where setup puts the registry of the provider `reader` is on (a
/// reader handed to `SetupOptions::metric_reader`).
pub fn registry_slot(reader: &PrometheusReader) -> RegistrySlot {
    Arc::clone(&reader.registry)
}

/// The pull reader behind a [`PrometheusRenderer`](crate::PrometheusRenderer): install it on the meter
/// provider; it collects when the renderer renders.
#[derive(Debug)]
pub struct PrometheusReader {
    pub(crate) reader: Arc<ManualReader>,
    pub(crate) registry: RegistrySlot,
    pub(crate) state: Arc<ReaderState>,
}

impl MetricReader for PrometheusReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.reader.register_pipeline(pipeline);
        self.state.set(ReaderState::INSTALLED);
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.reader.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.reader.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.state.set(ReaderState::SHUT_DOWN);
        self.reader.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, _kind: InstrumentKind) -> Temporality {
        Temporality::Cumulative
    }
}
