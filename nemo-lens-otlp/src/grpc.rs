//! The OTLP/gRPC exporter on a channel built here.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::metrics::v1::metrics_service_client::MetricsServiceClient;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;
use tonic::metadata::{AsciiMetadataValue, MetadataKey, MetadataMap};
use tonic::transport::Channel;

use super::runtime::OtlpRuntime;
use super::OtlpSettings;
use super::{user_agent, NoteAttempts, OtlpError};
use nemo_lens_core::owned::Pending;

pub(super) fn build(
    settings: &OtlpSettings,
    https: bool,
    owned: Arc<Pending>,
    attempts: NoteAttempts,
) -> Result<(GrpcExporter, OtlpRuntime), OtlpError> {
    let metadata = metadata(&settings.headers)?;
    let endpoint_error = |source: tonic::transport::Error| OtlpError::Endpoint {
        endpoint: settings.endpoint.clone(),
        source: source.into(),
    };
    // Our own channel: the builder would read OTEL_EXPORTER_OTLP_*ENDPOINT
    // and OTEL_EXPORTER_OTLP_*INSECURE to make one.
    let endpoint = tonic::transport::Endpoint::from_shared(settings.endpoint.clone())
        .map_err(endpoint_error)?
        .user_agent(user_agent())
        .map_err(endpoint_error)?
        .timeout(settings.timeout)
        .connect_timeout(settings.timeout);
    #[cfg(feature = "otlp-tls")]
    let endpoint = if https {
        let (config, verifier) = super::tls::tonic_config(&settings.tls, &settings.endpoint)?;
        // The verifier carries the trusted roots: tonic's own check would
        // refuse a trusted self-signed certificate marked CA.
        endpoint
            .tls_config_with_verifier(config, verifier)
            .map_err(|e| OtlpError::TlsConfig {
                endpoint: settings.endpoint.clone(),
                source: e.into(),
            })?
    } else {
        endpoint
    };
    #[cfg(not(feature = "otlp-tls"))]
    let _ = https;
    let (runtime, handle) = OtlpRuntime::start()?;
    // The lazily connected channel spawns its worker on the runtime that is
    // current while it is built.
    let _entered = handle.enter();
    let channel = endpoint.connect_lazy();
    let exporter = GrpcExporter {
        client: Mutex::new(Some(MetricsServiceClient::new(channel))),
        metadata,
        timeout: settings.timeout,
        temporality: settings.temporality,
        owned,
        attempts,
    };
    Ok((exporter, runtime))
}

/// Sends the SDK's data and the owned series of each export in one
/// `ExportMetricsServiceRequest`, with exactly the configured metadata,
/// retried as [`retry`](super::retry) says.
pub(crate) struct GrpcExporter {
    // Taken at shutdown: later exports fail as opentelemetry-otlp's do.
    client: Mutex<Option<MetricsServiceClient<Channel>>>,
    metadata: MetadataMap,
    timeout: Duration,
    temporality: Temporality,
    owned: Arc<Pending>,
    attempts: NoteAttempts,
}

impl fmt::Debug for GrpcExporter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the metadata: it holds credentials.
        f.debug_struct("GrpcExporter").finish_non_exhaustive()
    }
}

impl PushMetricExporter for GrpcExporter {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        let mut request = ExportMetricsServiceRequest::from(metrics);
        self.owned
            .with(|batch| super::owned::merge(&mut request, batch));
        if super::owned::is_empty(&request) {
            return Ok(());
        }
        self.attempts.sending(super::owned::points(&request));
        let client = self
            .client
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or(OTelSdkError::AlreadyShutdown)?;
        let sent = super::retry::with_backoff(self.timeout, || {
            let mut client = client.clone();
            let request = tonic::Request::from_parts(
                self.metadata.clone(),
                tonic::Extensions::default(),
                request.clone(),
            );
            async move { client.export(request).await.map(drop) }
        })
        .await;
        sent.map_err(|status| {
            // The code and the transport's own error, never the server's
            // message, which may echo credentials back.
            let mut message = format!(
                "TonicMetricsClient export failed with gRPC code: {:?}",
                status.code()
            );
            super::chain::causes_into(&mut message, std::error::Error::source(&status));
            OTelSdkError::InternalFailure(message)
        })
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.client
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        Ok(())
    }

    fn temporality(&self) -> Temporality {
        self.temporality
    }
}

fn metadata(headers: &[(String, String)]) -> Result<MetadataMap, OtlpError> {
    let mut metadata = MetadataMap::new();
    for (name, value) in headers {
        let key = MetadataKey::from_bytes(name.to_ascii_lowercase().as_bytes()).map_err(|_| {
            OtlpError::Header {
                name: name.clone(),
                reason: "not a valid gRPC metadata name",
            }
        })?;
        let value: AsciiMetadataValue = value.parse().map_err(|_| OtlpError::Header {
            name: name.clone(),
            reason: "the value is not printable ASCII",
        })?;
        metadata.append(key, value);
    }
    Ok(metadata)
}
