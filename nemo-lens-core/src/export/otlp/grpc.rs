//! The OTLP/gRPC exporter on a channel built here.

use opentelemetry_otlp::{MetricExporter, WithExportConfig, WithTonicConfig};
use tonic::metadata::{AsciiMetadataValue, MetadataKey, MetadataMap};

use super::runtime::OtlpRuntime;
use super::{build_error, retry_policy, user_agent, OtlpError};
use crate::export::settings::OtlpSettings;

pub(super) fn build(
    settings: &OtlpSettings,
    https: bool,
) -> Result<(MetricExporter, OtlpRuntime), OtlpError> {
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
    let exporter = MetricExporter::builder()
        .with_tonic()
        .with_channel(channel)
        .with_timeout(settings.timeout)
        // Replaces whatever the builder added from the process environment
        // (OTEL_EXPORTER_OTLP_*HEADERS) with exactly the configured headers.
        .with_interceptor(move |mut request: tonic::Request<()>| {
            *request.metadata_mut() = metadata.clone();
            Ok(request)
        })
        .with_retry_policy(retry_policy())
        .with_temporality(settings.temporality)
        .build()
        .map_err(build_error(settings))?;
    Ok((exporter, runtime))
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
