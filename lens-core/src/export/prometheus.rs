//! The Prometheus exporter: the well-kept `opentelemetry-prometheus` reader
//! (which applies the OTel-to-Prometheus naming rules: unit suffixes such as
//! `_milliseconds`, `_total` on counters, `target_info`, `otel_scope_*`
//! labels) over a `prometheus` registry, served by the built-in scrape
//! server or rendered by [`PrometheusRenderer`] for an HTTP server of your
//! own.
//!
//! ```
//! use lens_core::export::prometheus::PrometheusRenderer;
//! use lens_core::telemetry::PrometheusResourceLabels;
//! use opentelemetry::metrics::MeterProvider as _;
//! use opentelemetry_sdk::metrics::SdkMeterProvider;
//!
//! let (reader, renderer) = PrometheusRenderer::new(&PrometheusResourceLabels::default())?;
//! let provider = SdkMeterProvider::builder().with_reader(reader).build();
//! provider.meter("app").u64_counter("app.requests").build().add(1, &[]);
//! // In a `GET /metrics` handler:
//! let exposition = renderer.render()?;
//! assert_eq!(exposition.content_type, "text/plain; version=0.0.4; charset=utf-8");
//! assert!(String::from_utf8(exposition.body)?.contains("app_requests_total{"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use opentelemetry::Key;
use opentelemetry_prometheus::ResourceSelector;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::reader::MetricReader;
use opentelemetry_sdk::metrics::{InstrumentKind, Pipeline, Temporality};
use prometheus::{Encoder, TextEncoder};

use super::scrape_server::{Render, ScrapeServer};
// The one telemetry type the exporter reads: which resource attributes to
// label with (parsed from the environment there).
use crate::telemetry::PrometheusResourceLabels;

/// Why the Prometheus exporter could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrometheusError {
    /// The reader could not be built.
    #[error("cannot build the Prometheus exporter")]
    Reader(#[source] opentelemetry_sdk::error::OTelSdkError),
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

/// The content type of the text exposition format, version 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A rendered scrape: the body and the `Content-Type` to send it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposition {
    /// [`CONTENT_TYPE`].
    pub content_type: &'static str,
    /// The text exposition.
    pub body: Vec<u8>,
}

/// Why a scrape could not be rendered; answer it with a 500.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rendering Prometheus metrics failed: {0}")]
pub struct RenderError(String);

/// Renders what a [`PrometheusReader`] collects, for mounting `GET /metrics`
/// on an application's own router (axum, hyper, actix, ...). Cheap to
/// clone; each [`render`](Self::render) collects from the meter provider.
#[derive(Clone)]
pub struct PrometheusRenderer {
    registry: prometheus::Registry,
}

impl std::fmt::Debug for PrometheusRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrometheusRenderer").finish_non_exhaustive()
    }
}

impl PrometheusRenderer {
    /// A reader to install on the meter provider (for example with
    /// [`SetupOptions::metric_reader`](crate::telemetry::SetupOptions::metric_reader),
    /// which keeps the resource, the rank selection and shutdown of
    /// `setup_telemetry`) and the renderer of what it collects, with the
    /// resource attributes `resource_labels` selects as labels on every
    /// series.
    pub fn new(
        resource_labels: &PrometheusResourceLabels,
    ) -> Result<(PrometheusReader, PrometheusRenderer), PrometheusError> {
        let registry = prometheus::Registry::new();
        let exporter = opentelemetry_prometheus::exporter()
            .with_registry(registry.clone())
            .with_resource_selector(selector(resource_labels))
            .build()
            .map_err(PrometheusError::Reader)?;
        Ok((PrometheusReader(exporter), PrometheusRenderer { registry }))
    }

    /// The current exposition in the text format.
    pub fn render(&self) -> Result<Exposition, RenderError> {
        let mut body = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut body)
            .map_err(|e| RenderError(e.to_string()))?;
        Ok(Exposition {
            content_type: CONTENT_TYPE,
            body,
        })
    }
}

fn selector(labels: &PrometheusResourceLabels) -> ResourceSelector {
    match labels {
        PrometheusResourceLabels::All => ResourceSelector::All,
        PrometheusResourceLabels::None => ResourceSelector::None,
        PrometheusResourceLabels::Keys(keys) => ResourceSelector::KeyAllowList(
            keys.iter()
                .map(|k| Key::new(k.clone()))
                .collect::<HashSet<_>>(),
        ),
    }
}

/// The pull reader behind a [`PrometheusRenderer`]: install it on the meter
/// provider; it collects when the renderer renders.
#[derive(Debug)]
pub struct PrometheusReader(opentelemetry_prometheus::PrometheusExporter);

impl MetricReader for PrometheusReader {
    fn register_pipeline(&self, pipeline: Weak<Pipeline>) {
        self.0.register_pipeline(pipeline)
    }

    fn collect(&self, rm: &mut ResourceMetrics) -> OTelSdkResult {
        self.0.collect(rm)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.0.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }

    fn temporality(&self, kind: InstrumentKind) -> Temporality {
        self.0.temporality(kind)
    }
}

/// The pull reader to install on the provider and the server that exposes it.
pub(crate) fn build(
    addr: SocketAddr,
    resource_labels: &PrometheusResourceLabels,
) -> Result<(PrometheusReader, ScrapeServer), PrometheusError> {
    let (reader, renderer) = PrometheusRenderer::new(resource_labels)?;
    let render: Render =
        Arc::new(move || renderer.render().map(|e| e.body).map_err(|e| e.to_string()));
    let server = ScrapeServer::start(addr, render)
        .map_err(|source| PrometheusError::Bind { addr, source })?;
    Ok((reader, server))
}
