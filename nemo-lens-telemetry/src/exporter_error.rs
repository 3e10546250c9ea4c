//! Why an exporter could not be built: each exporter crate fails with its
//! own error, sources kept, and setup wraps it in this one.

#[cfg(feature = "otlp")]
use nemo_lens_otlp::OtlpError;
#[cfg(feature = "prometheus")]
use nemo_lens_prometheus::PrometheusError;

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

nemo_lens_core::__debug_as_sentence!(ExporterError);
