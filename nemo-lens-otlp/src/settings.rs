//! What the exporter is built from: plain settings, independent of where
//! they came from (the environment, through `nemo-lens-telemetry`, or
//! code).

use std::path::PathBuf;
use std::time::Duration;

use nemo_lens_core::OtlpProtocol;

/// Everything the OTLP exporter is built from. Nothing else is read: the
/// exporter builders get each value explicitly, so `opentelemetry-otlp`
/// never falls back to a variable of its own.
#[derive(Debug, Clone)]
pub struct OtlpSettings {
    /// The full URL requests go to (for HTTP, with `/v1/metrics`).
    pub endpoint: String,
    /// gRPC or HTTP/protobuf.
    pub protocol: OtlpProtocol,
    /// Sent with every export, names and values already validated.
    pub headers: Vec<(String, String)>,
    /// How long one export request may take.
    pub timeout: Duration,
    /// Cumulative, delta or low-memory, as the SDK's readers take it.
    pub temporality: opentelemetry_sdk::metrics::Temporality,
    /// Only read for `https://` endpoints, which need `otlp-tls`.
    #[cfg_attr(not(feature = "otlp-tls"), allow(dead_code))]
    pub tls: TlsFiles,
}

/// A file and the variable that named it (for errors).
pub type NamedPath = (String, PathBuf);

/// PEM files for TLS, each with the variable that named it (for errors).
#[derive(Debug, Clone, Default)]
#[cfg_attr(not(feature = "otlp-tls"), allow(dead_code))]
pub struct TlsFiles {
    /// CA certificates to trust instead of the built-in roots.
    pub ca: Option<NamedPath>,
    /// Client certificate chain for mutual TLS.
    pub client_certificate: Option<NamedPath>,
    /// The client certificate's private key.
    pub client_key: Option<NamedPath>,
}
