//! The OTLP exporter of [nemo-lens](https://crates.io/crates/nemo-lens):
//! push export over gRPC (tonic) or HTTP/protobuf (blocking reqwest), with
//! TLS behind the `otlp-tls` feature. It sends what the SDK collected and
//! nemo-lens's own series (`nemo_lens::owned`) in one request.
//!
//! Depend on the `nemo-lens` facade crate (feature `otlp`) rather than on
//! this one: setup (`nemo-lens-telemetry`) builds this exporter from the
//! environment, wraps it in its failure report and installs it.
//!
//! Every setting is handed to the `opentelemetry-otlp` builders explicitly:
//! the gRPC channel and the HTTP client are built here, and the headers
//! sent are exactly the configured ones (the builders would otherwise merge
//! in `OTEL_EXPORTER_OTLP_*HEADERS` from the process environment, bypassing
//! validation and any injected environment).

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod chain;
mod error;
mod gathered;
mod grpc;
mod http;
mod owned;
mod retry;
mod runtime;
mod settings;
#[cfg(feature = "otlp-tls")]
mod tls;
#[cfg(feature = "otlp-tls")]
mod verifier;

use std::sync::Arc;
use std::time::Duration;

use opentelemetry_otlp::{MetricExporter, RetryPolicy};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;

use nemo_lens_core::owned::Pending;
use nemo_lens_core::OtlpProtocol;

pub use error::OtlpError;
pub use runtime::OtlpRuntime;
pub use settings::{NamedPath, OtlpSettings, TlsFiles};

/// What each export attempt tells the failure report.
pub trait Attempts: Send + Sync {
    /// An attempt is about to send `points` data points: what is lost if
    /// it fails.
    fn sending(&self, points: usize);
    /// The transport's own error of a failed attempt, which the HTTP
    /// exporter reduces to "network error".
    fn failed(&self, cause: String);
}

/// Where the exporter reports its attempts.
pub type NoteAttempts = Arc<dyn Attempts>;

/// The OTLP exporter as built, and the runtime its gRPC channel runs on.
pub struct Built {
    /// The exporter, to install on a periodic reader.
    pub exporter: Exporter,
    /// The gRPC channel's runtime, stopped at shutdown.
    pub runtime: Option<OtlpRuntime>,
}

/// The OTLP exporter of either protocol.
#[derive(Debug)]
pub struct Exporter(Transport);

#[derive(Debug)]
enum Transport {
    /// gRPC: nemo-lens's own client, which sends the SDK's data and the
    /// owned series in one request.
    Grpc(grpc::GrpcExporter),
    /// HTTP: opentelemetry-otlp's exporter, the owned series added by its
    /// HTTP client.
    Http(MetricExporter),
}

impl PushMetricExporter for Exporter {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        match &self.0 {
            Transport::Grpc(e) => e.export(metrics).await,
            Transport::Http(e) => e.export(metrics).await,
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        match &self.0 {
            Transport::Grpc(e) => e.force_flush(),
            Transport::Http(e) => e.force_flush(),
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        match &self.0 {
            Transport::Grpc(e) => e.shutdown_with_timeout(timeout),
            Transport::Http(e) => e.shutdown_with_timeout(timeout),
        }
    }

    fn temporality(&self) -> Temporality {
        match &self.0 {
            Transport::Grpc(e) => e.temporality(),
            Transport::Http(e) => e.temporality(),
        }
    }
}

/// Builds the exporter `settings` describe, sending the owned series of
/// `owned` with each export and telling `attempts` what each attempt
/// carries and what the transport said when one fails.
pub fn build(
    settings: &OtlpSettings,
    owned: Arc<Pending>,
    attempts: NoteAttempts,
) -> Result<Built, OtlpError> {
    let uri: ::http::Uri = settings
        .endpoint
        .parse()
        .map_err(|e: ::http::uri::InvalidUri| OtlpError::Endpoint {
            endpoint: settings.endpoint.clone(),
            source: e.into(),
        })?;
    let https = uri.scheme_str() == Some("https");
    if https && !cfg!(feature = "otlp-tls") {
        return Err(OtlpError::TlsDisabled {
            endpoint: settings.endpoint.clone(),
        });
    }
    let (exporter, runtime) = match settings.protocol {
        OtlpProtocol::Grpc => {
            let (exporter, runtime) = grpc::build(settings, https, owned, attempts)?;
            (Transport::Grpc(exporter), Some(runtime))
        }
        OtlpProtocol::HttpProtobuf => (
            Transport::Http(http::build(settings, https, attempts, owned)?),
            None,
        ),
    };
    Ok(Built {
        exporter: Exporter(exporter),
        runtime,
    })
}

/// Retries are kept short: a later export carries the same cumulative
/// totals, so a lost export costs nothing but freshness.
/// The HTTP exporter's retries, on the schedule the gRPC one follows.
fn retry_policy() -> RetryPolicy {
    RetryPolicy::recommended()
        .with_max_retries(retry::MAX_RETRIES)
        .with_initial_delay(retry::INITIAL_DELAY)
        .with_max_delay(retry::MAX_DELAY)
        .with_max_jitter(retry::MAX_JITTER)
}

fn build_error(
    settings: &OtlpSettings,
) -> impl FnOnce(opentelemetry_otlp::ExporterBuildError) -> OtlpError + '_ {
    |source| OtlpError::Build {
        protocol: settings.protocol.as_str(),
        endpoint: settings.endpoint.clone(),
        source: source.into(),
    }
}

/// The `User-Agent` sent with exports.
fn user_agent() -> String {
    format!("nemo-lens-rs/{}", env!("CARGO_PKG_VERSION"))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Ignore;

    impl Attempts for Ignore {
        fn sending(&self, _: usize) {}
        fn failed(&self, _: String) {}
    }

    fn ignore() -> NoteAttempts {
        Arc::new(Ignore)
    }

    fn settings(endpoint: &str, protocol: OtlpProtocol) -> OtlpSettings {
        OtlpSettings {
            endpoint: endpoint.to_owned(),
            protocol,
            headers: Vec::new(),
            timeout: Duration::from_secs(1),
            temporality: opentelemetry_sdk::metrics::Temporality::Cumulative,
            tls: TlsFiles::default(),
        }
    }

    #[test]
    fn headers_that_cannot_be_sent_are_named_without_their_value() {
        for protocol in [OtlpProtocol::Grpc, OtlpProtocol::HttpProtobuf] {
            let mut s = settings("http://127.0.0.1:4317", protocol);
            s.headers = vec![("x-token".into(), "secret\nvalue".into())];
            let Err(err) = build(&s, Arc::default(), ignore()) else {
                panic!("{protocol:?}: accepted")
            };
            assert!(matches!(&err, OtlpError::Header { name, .. } if name == "x-token"));
            assert!(!format!("{err} {err:?}").contains("secret"), "{err:?}");
        }
    }

    #[cfg(not(feature = "otlp-tls"))]
    #[test]
    fn https_needs_the_tls_feature() {
        for protocol in [OtlpProtocol::Grpc, OtlpProtocol::HttpProtobuf] {
            let Err(err) = build(
                &settings("https://collector:4317", protocol),
                Arc::default(),
                ignore(),
            ) else {
                panic!("{protocol:?}: accepted");
            };
            assert!(matches!(err, OtlpError::TlsDisabled { .. }), "{err}");
            assert!(err.to_string().contains("otlp-tls"), "{err}");
        }
    }

    #[cfg(feature = "otlp-tls")]
    #[test]
    fn an_unusable_certificate_file_is_named_with_its_variable() {
        let path = std::env::temp_dir().join(format!("nemo-lens-bad-{}.pem", std::process::id()));
        std::fs::write(
            &path,
            "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        for protocol in [OtlpProtocol::Grpc, OtlpProtocol::HttpProtobuf] {
            let mut s = settings("https://127.0.0.1:4317", protocol);
            s.tls.ca = Some(("OTEL_EXPORTER_OTLP_CERTIFICATE".into(), path.clone()));
            let Err(err) = build(&s, Arc::default(), ignore()) else {
                panic!("{protocol:?}: accepted");
            };
            assert!(
                matches!(&err, OtlpError::Tls { variable, .. } if variable == "OTEL_EXPORTER_OTLP_CERTIFICATE"),
                "{protocol:?}: {err}"
            );
            assert!(std::error::Error::source(&err).is_some());
        }
        std::fs::remove_file(&path).unwrap();
    }
}
