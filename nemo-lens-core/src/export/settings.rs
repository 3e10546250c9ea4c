//! What each exporter is built from: plain settings, independent of where
//! they came from (the environment, through `telemetry`, or code).

#[cfg(feature = "otlp")]
use std::path::PathBuf;
#[cfg(feature = "otlp")]
use std::time::Duration;

/// OTLP transport (`OTEL_EXPORTER_OTLP_METRICS_PROTOCOL`, else
/// `OTEL_EXPORTER_OTLP_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// `grpc`, the default.
    Grpc,
    /// `http/protobuf`.
    HttpProtobuf,
}

impl OtlpProtocol {
    /// The value of `OTEL_EXPORTER_OTLP_PROTOCOL` that selects this transport.
    pub fn as_str(self) -> &'static str {
        match self {
            OtlpProtocol::Grpc => "grpc",
            OtlpProtocol::HttpProtobuf => "http/protobuf",
        }
    }
}

/// Everything the OTLP exporter is built from. Nothing else is read: the
/// exporter builders get each value explicitly, so `opentelemetry-otlp`
/// never falls back to a variable of its own.
#[cfg(feature = "otlp")]
#[derive(Debug, Clone)]
pub(crate) struct OtlpSettings {
    /// The full URL requests go to (for HTTP, with `/v1/metrics`).
    pub endpoint: String,
    pub protocol: OtlpProtocol,
    /// Sent with every export, names and values already validated.
    pub headers: Vec<(String, String)>,
    /// How long one export request may take.
    pub timeout: Duration,
    pub temporality: opentelemetry_sdk::metrics::Temporality,
    /// Only read for `https://` endpoints, which need `otlp-tls`.
    #[cfg_attr(not(feature = "otlp-tls"), allow(dead_code))]
    pub tls: TlsFiles,
}

/// A file and the variable that named it (for errors).
#[cfg(feature = "otlp")]
pub(crate) type NamedPath = (String, PathBuf);

/// PEM files for TLS, each with the variable that named it (for errors).
#[cfg(feature = "otlp")]
#[derive(Debug, Clone, Default)]
#[cfg_attr(not(feature = "otlp-tls"), allow(dead_code))]
pub(crate) struct TlsFiles {
    /// CA certificates to trust instead of the built-in roots.
    pub ca: Option<NamedPath>,
    /// Client certificate chain for mutual TLS.
    pub client_certificate: Option<NamedPath>,
    /// The client certificate's private key.
    pub client_key: Option<NamedPath>,
}
