//! The scrape endpoint's web configuration: loaded at setup (so a bad file
//! stops setup, naming the file or the key), then served under.

use std::net::SocketAddr;
use std::sync::Arc;

use nemo_lens_core::owned::Registry;
use nemo_lens_core::PrometheusResourceLabels;
use nemo_lens_prometheus::{PrometheusError, PrometheusReader, ScrapeServer};

use super::config::NemoLensConfig;
use super::error::SetupError;

#[cfg(feature = "prometheus-tls")]
pub(super) type Web = Option<Arc<nemo_lens_prometheus::web_config::WebConfig>>;
#[cfg(not(feature = "prometheus-tls"))]
pub(super) type Web = Option<std::convert::Infallible>;

/// The configured file, loaded; an error names the file, or the key and
/// value at fault (a `ConfigError`).
pub(super) fn load(config: &NemoLensConfig) -> Result<Web, SetupError> {
    let Some(path) = &config.prometheus_web_config else {
        return Ok(None);
    };
    #[cfg(feature = "prometheus-tls")]
    {
        use nemo_lens_prometheus::web_config::{WebConfig, WebConfigError};
        match WebConfig::load(path) {
            Ok(web) => Ok(Some(web)),
            Err(WebConfigError::Invalid(error)) => Err(SetupError::Config(error)),
            Err(error) => Err(SetupError::Exporter(PrometheusError::from(error).into())),
        }
    }
    #[cfg(not(feature = "prometheus-tls"))]
    Err(SetupError::FeatureMissing {
        setting: format!("{}_PROMETHEUS_WEB_CONFIG={}", config.prefix, path.display()),
        feature: "prometheus-tls",
    })
}

/// Whether the endpoint will speak TLS.
pub(super) fn tls(web: &Web) -> bool {
    #[cfg(feature = "prometheus-tls")]
    return web.as_ref().is_some_and(|web| web.tls());
    #[cfg(not(feature = "prometheus-tls"))]
    {
        let _ = web;
        false
    }
}

/// The endpoint, under `web` when there is one.
pub(super) fn serve(
    addr: SocketAddr,
    labels: &PrometheusResourceLabels,
    registry: Arc<Registry>,
    web: Web,
) -> Result<(PrometheusReader, ScrapeServer), PrometheusError> {
    match web {
        #[cfg(feature = "prometheus-tls")]
        Some(web) => nemo_lens_prometheus::serve_with_web_config(addr, labels, registry, web),
        #[allow(unreachable_patterns)]
        _ => nemo_lens_prometheus::serve(addr, labels, registry),
    }
}
