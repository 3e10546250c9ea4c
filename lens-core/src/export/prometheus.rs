//! The Prometheus exporter: the well-kept `opentelemetry-prometheus` reader
//! (which applies the OTel-to-Prometheus naming rules: unit suffixes such as
//! `_milliseconds`, `_total` on counters, `target_info`, `otel_scope_*`
//! labels) over a `prometheus` registry, served by [`ScrapeServer`].

use std::net::SocketAddr;
use std::sync::Arc;

use opentelemetry_prometheus::PrometheusExporter;
use prometheus::{Encoder, TextEncoder};

use super::scrape_server::{Render, ScrapeServer};

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

/// The pull reader to install on the provider and the server that exposes it.
pub(crate) fn build(
    addr: SocketAddr,
) -> Result<(PrometheusExporter, ScrapeServer), PrometheusError> {
    let registry = prometheus::Registry::new();
    let reader = opentelemetry_prometheus::exporter()
        .with_registry(registry.clone())
        .build()
        .map_err(PrometheusError::Reader)?;
    let render: Render = Arc::new(move || {
        let mut body = Vec::new();
        TextEncoder::new()
            .encode(&registry.gather(), &mut body)
            .map_err(|e| e.to_string())?;
        Ok(body)
    });
    let server = ScrapeServer::start(addr, render)
        .map_err(|source| PrometheusError::Bind { addr, source })?;
    Ok((reader, server))
}
