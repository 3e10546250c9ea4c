//! Exporters behind cargo features: `otlp` (with `otlp-tls`), `prometheus`,
//! `console`. Each is built from its own settings and fails with its own
//! error, sources kept.

#[doc(hidden)]
pub mod bridge;
#[cfg(feature = "console")]
#[cfg_attr(docsrs, doc(cfg(feature = "console")))]
pub mod console;
// Shared by the Prometheus exporter and `testing`'s capture.
#[cfg(any(feature = "prometheus", feature = "testing"))]
// The protobuf exposition's parts of `native` serve only the exporter.
#[cfg_attr(not(feature = "prometheus"), allow(dead_code))]
pub(crate) mod exposition;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
pub mod overflow;
#[cfg(feature = "prometheus")]
#[cfg_attr(docsrs, doc(cfg(feature = "prometheus")))]
pub mod prometheus;
#[cfg_attr(not(any(feature = "otlp", feature = "console")), allow(dead_code))]
pub(crate) mod report;
#[cfg(feature = "prometheus")]
pub(crate) mod scrape_server;
pub(crate) mod settings;

#[cfg(feature = "otlp")]
#[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
pub use otlp::OtlpError;
#[cfg(feature = "prometheus")]
#[cfg_attr(docsrs, doc(cfg(feature = "prometheus")))]
pub use prometheus::PrometheusError;
pub use settings::OtlpProtocol;

/// Why an exporter could not be built; [`source`](std::error::Error::source)
/// gives the underlying error.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum ExporterError {
    /// The OTLP exporter.
    #[cfg(feature = "otlp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
    #[error(transparent)]
    Otlp(#[from] OtlpError),
    /// The Prometheus exporter.
    #[cfg(feature = "prometheus")]
    #[cfg_attr(docsrs, doc(cfg(feature = "prometheus")))]
    #[error(transparent)]
    Prometheus(#[from] PrometheusError),
}

crate::error_debug::debug_as_sentence!(ExporterError);
