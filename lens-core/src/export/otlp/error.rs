//! Why the OTLP exporter could not be built.

use std::path::PathBuf;

/// Why the OTLP exporter could not be built; [`source`](std::error::Error::source)
/// gives the underlying error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// The exporter's runtime thread could not be started.
    #[error("cannot start the OTLP exporter's runtime thread")]
    Runtime(#[source] std::io::Error),
    /// The endpoint is not a URL the transport accepts.
    #[error("invalid OTLP endpoint {endpoint:?}")]
    Endpoint {
        /// The endpoint as configured.
        endpoint: String,
        /// What the transport said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An `https://` endpoint in a build without TLS.
    #[error(
        "OTLP endpoint {endpoint} uses https, which needs the `otlp-tls` cargo feature of nemo-lens"
    )]
    TlsDisabled {
        /// The endpoint as configured.
        endpoint: String,
    },
    /// A header name or value that cannot be sent (the value is never shown).
    #[error("OTLP header {name:?} cannot be sent: {reason}")]
    Header {
        /// The header name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A certificate or key file could not be used.
    #[error("cannot use {path:?} ({variable}) for TLS")]
    Tls {
        /// The variable that named the file.
        variable: String,
        /// The file.
        path: PathBuf,
        /// What reading or parsing it said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The TLS configuration as a whole was refused.
    #[error("cannot set up TLS for OTLP endpoint {endpoint}")]
    TlsConfig {
        /// The endpoint as configured.
        endpoint: String,
        /// What the TLS library said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// `opentelemetry-otlp` refused to build the exporter.
    #[error("cannot build the OTLP {protocol} exporter for {endpoint}")]
    Build {
        /// `grpc` or `http/protobuf`.
        protocol: &'static str,
        /// The endpoint as configured.
        endpoint: String,
        /// The builder's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
