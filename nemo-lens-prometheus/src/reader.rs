//! The pull reader installed on the meter provider, where its renderer
//! finds it, and the scrape server setup starts on it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, ManualReader, Pipeline, Temporality};

use nemo_lens_core::owned::Registry;
use nemo_lens_core::PrometheusResourceLabels;

use crate::renderer::{PrometheusRenderer, RenderError, RenderFailure};
use crate::scrape_server::{Render, ScrapeServer};

/// Why the Prometheus exporter could not be built.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum PrometheusError {
    /// The endpoint could not be bound.
    #[error("cannot serve Prometheus metrics on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

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

    pub(crate) fn check(&self) -> Result<(), RenderError> {
        match self.0.load(Ordering::Acquire) {
            Self::NOT_INSTALLED => Err(RenderError(RenderFailure::NotInstalled)),
            Self::SHUT_DOWN => Err(RenderError(RenderFailure::ShutDown)),
            _ => Ok(()),
        }
    }
}

/// Where setup puts the registry of the provider a reader is installed on.
pub type RegistrySlot = Arc<OnceLock<Arc<Registry>>>;

/// Where setup puts the registry of the provider `reader` is on (a
/// reader handed to `SetupOptions::metric_reader`).
pub fn registry_slot(reader: &PrometheusReader) -> RegistrySlot {
    Arc::clone(&reader.registry)
}

/// The pull reader behind a [`PrometheusRenderer`]: install it on the meter
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

/// The pull reader to install on the provider and the server, started on
/// `addr`, that exposes what it collects with `registry`'s owned series.
pub fn serve(
    addr: SocketAddr,
    resource_labels: &PrometheusResourceLabels,
    registry: Arc<Registry>,
) -> Result<(PrometheusReader, ScrapeServer), PrometheusError> {
    let (reader, renderer) = PrometheusRenderer::new(resource_labels)?;
    let _ = reader.registry.set(registry);
    let render: Render = Arc::new(move |accept: Option<&str>| {
        renderer
            .render_for(accept)
            .map(|e| (e.content_type, e.body))
            .map_err(|e| e.to_string())
    });
    let server = ScrapeServer::start(addr, render)
        .map_err(|source| PrometheusError::Bind { addr, source })?;
    Ok((reader, server))
}

nemo_lens_core::__debug_as_sentence!(PrometheusError);
