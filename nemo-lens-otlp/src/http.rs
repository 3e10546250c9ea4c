//! The OTLP/HTTP exporter on a blocking reqwest client built here.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{
    HeaderMap, HeaderName, HeaderValue, CONTENT_ENCODING, CONTENT_TYPE, USER_AGENT,
};
use opentelemetry_http::{HttpClient, HttpError};
use opentelemetry_otlp::{MetricExporter, Protocol, WithExportConfig, WithHttpConfig};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use prost::Message as _;

use nemo_lens_core::owned::Pending;

use super::{build_error, retry_policy, user_agent, NoteAttempts, OtlpError, OtlpSettings};

pub(super) fn build(
    settings: &OtlpSettings,
    https: bool,
    attempts: NoteAttempts,
    owned: Arc<Pending>,
) -> Result<MetricExporter, OtlpError> {
    let headers = header_map(&settings.headers)?;
    let client = client(settings, https)?;
    MetricExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(settings.endpoint.clone())
        .with_timeout(settings.timeout)
        .with_http_client(ExactHeaders {
            client,
            headers: Arc::new(headers),
            attempts,
            owned,
        })
        .with_retry_policy(retry_policy())
        .with_temporality(settings.temporality)
        .build()
        .map_err(build_error(settings))
}

fn client(settings: &OtlpSettings, https: bool) -> Result<reqwest::blocking::Client, OtlpError> {
    let builder = reqwest::blocking::Client::builder().timeout(settings.timeout);
    // reqwest is built without a process-wide rustls provider, so it gets
    // a ready configuration even for http:// (where it is never used).
    #[cfg(feature = "otlp-tls")]
    let builder = {
        let plain = super::TlsFiles::default();
        let files = if https { &settings.tls } else { &plain };
        builder.tls_backend_preconfigured(super::tls::rustls_config(files, &settings.endpoint)?)
    };
    #[cfg(not(feature = "otlp-tls"))]
    let _ = https;
    // The blocking client owns a runtime of its own and refuses to be built
    // inside another, so it is built on a plain thread in case the caller
    // is async.
    std::thread::spawn(move || builder.build())
        .join()
        .map_err(|_| OtlpError::Build {
            protocol: settings.protocol.as_str(),
            endpoint: settings.endpoint.clone(),
            source: "building the HTTP client panicked".into(),
        })?
        .map_err(|source| OtlpError::Build {
            protocol: settings.protocol.as_str(),
            endpoint: settings.endpoint.clone(),
            source: source.into(),
        })
}

fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, OtlpError> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let key = HeaderName::from_bytes(name.as_bytes()).map_err(|_| OtlpError::Header {
            name: name.clone(),
            reason: "not a valid HTTP header name",
        })?;
        let value = HeaderValue::from_str(value).map_err(|_| OtlpError::Header {
            name: name.clone(),
            reason: "the value is not printable ASCII",
        })?;
        map.append(key, value);
    }
    Ok(map)
}

/// Sends each request with exactly the configured headers: the exporter
/// adds any it read from `OTEL_EXPORTER_OTLP_*HEADERS` in the process
/// environment, which would bypass validation and an injected environment.
/// Also keeps the transport's error, which the exporter reduces to
/// "network error". Adds the export's owned series to the body the
/// exporter encoded (each attempt of one export carries the same ones).
struct ExactHeaders {
    client: reqwest::blocking::Client,
    headers: Arc<HeaderMap>,
    attempts: NoteAttempts,
    owned: Arc<Pending>,
}

impl std::fmt::Debug for ExactHeaders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExactHeaders")
            .field("client", &self.client)
            .field("headers", &self.headers)
            .finish_non_exhaustive()
    }
}

#[async_trait::async_trait]
impl HttpClient for ExactHeaders {
    async fn send_bytes(
        &self,
        mut request: http::Request<Bytes>,
    ) -> Result<http::Response<Bytes>, HttpError> {
        let sent = request.headers_mut();
        let content_type = sent.remove(CONTENT_TYPE);
        let content_encoding = sent.remove(CONTENT_ENCODING);
        sent.clear();
        if let Some(v) = content_type {
            sent.insert(CONTENT_TYPE, v);
        }
        if let Some(v) = content_encoding {
            sent.insert(CONTENT_ENCODING, v);
        }
        if let Ok(agent) = HeaderValue::from_str(&user_agent()) {
            sent.insert(USER_AGENT, agent);
        }
        for (name, value) in self.headers.iter() {
            sent.append(name, value.clone());
        }
        // Uncompressed: this build sends nothing else.
        if !sent.contains_key(CONTENT_ENCODING)
            && let Ok(mut decoded) = ExportMetricsServiceRequest::decode(request.body().as_ref())
        {
            self.owned
                .with(|batch| super::owned::merge(&mut decoded, batch));
            if super::owned::is_empty(&decoded) {
                // Nothing recorded: no request, as the SDK sends none.
                return Ok(http::Response::new(Bytes::new()));
            }
            self.attempts.sending(super::owned::points(&decoded));
            *request.body_mut() = Bytes::from(decoded.encode_to_vec());
        }
        let sent = self.client.send_bytes(request).await;
        if let Err(error) = &sent {
            let cause = super::chain::chain(error.as_ref());
            // Certificate refusals carry their hint already (`verifier.rs`).
            #[cfg(feature = "otlp-tls")]
            let cause = match super::error::TlsHint::for_transport_error(&cause) {
                Some(hint) => format!("{cause}; {hint}"),
                None => cause,
            };
            self.attempts.failed(cause);
        }
        sent
    }
}
