//! The built-in endpoint: a reader on the provider, and the scrape server
//! that renders what it collects at `/metrics`.

use std::net::SocketAddr;
use std::sync::Arc;

use nemo_lens_core::owned::Registry;
use nemo_lens_core::PrometheusResourceLabels;

use crate::error::PrometheusError;
use crate::reader::PrometheusReader;
use crate::renderer::PrometheusRenderer;
use crate::scrape_server::{Render, ScrapeServer};

/// The pull reader to install on the provider and the server, started on
/// `addr`, that exposes what it collects with `registry`'s owned series.
pub fn serve(
    addr: SocketAddr,
    resource_labels: &PrometheusResourceLabels,
    registry: Arc<Registry>,
) -> Result<(PrometheusReader, ScrapeServer), PrometheusError> {
    serve_under(addr, resource_labels, registry, None)
}

/// [`serve`], answering under the web configuration `web` (TLS, client
/// certificates, basic auth, headers, a rate limit).
#[cfg(feature = "web-config")]
pub fn serve_with_web_config(
    addr: SocketAddr,
    resource_labels: &PrometheusResourceLabels,
    registry: Arc<Registry>,
    web: Arc<crate::web_config::WebConfig>,
) -> Result<(PrometheusReader, ScrapeServer), PrometheusError> {
    serve_under(addr, resource_labels, registry, Some(web))
}

fn serve_under(
    addr: SocketAddr,
    resource_labels: &PrometheusResourceLabels,
    registry: Arc<Registry>,
    web: crate::scrape_server::Web,
) -> Result<(PrometheusReader, ScrapeServer), PrometheusError> {
    let (reader, renderer) = PrometheusRenderer::new(resource_labels)?;
    let _ = reader.registry.set(registry);
    let render: Render = Arc::new(move |accept: Option<&str>| {
        renderer
            .render_for(accept)
            .map(|e| (e.content_type, e.body))
            .map_err(|e| e.to_string())
    });
    let server = ScrapeServer::start(addr, render, web)
        .map_err(|source| PrometheusError::Bind { addr, source })?;
    Ok((reader, server))
}
