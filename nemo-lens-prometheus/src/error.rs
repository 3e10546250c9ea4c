//! Why the Prometheus exporter could not be built.

use std::net::SocketAddr;

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
    /// The web configuration file cannot be used: it names the file.
    #[cfg(feature = "web-config")]
    #[error(transparent)]
    WebConfig(#[from] crate::web_config::WebConfigError),
}

nemo_lens_core::__debug_as_sentence!(PrometheusError);
