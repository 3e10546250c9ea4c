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
}

nemo_lens_core::__debug_as_sentence!(PrometheusError);
