//! TLS for OTLP (`otlp-tls`): rustls with the ring provider on both
//! transports. Trusted roots: only the CA certificates of
//! `OTEL_EXPORTER_OTLP_CERTIFICATE` when it is set, else Mozilla's root
//! program as shipped by `webpki-roots` (the set Python's `certifi` and
//! grpcio bundle too, and independent of the host's certificate store).
//! A server certificate that is itself in the file is trusted too, even
//! when marked CA (see `verifier.rs`).

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::ServerCertVerifier;
use rustls::client::WebPkiServerVerifier;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::verifier::TrustedFileVerifier;
use super::OtlpError;
use super::{NamedPath, TlsFiles};

fn tls_error(
    (variable, path): &NamedPath,
) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> OtlpError + '_ {
    move |source| OtlpError::Tls {
        variable: variable.clone(),
        path: path.clone(),
        source,
    }
}

fn read(file: &NamedPath) -> Result<Vec<u8>, OtlpError> {
    std::fs::read(&file.1).map_err(|e| tls_error(file)(e.into()))
}

fn certificates(file: &NamedPath) -> Result<Vec<CertificateDer<'static>>, OtlpError> {
    let certificates = CertificateDer::pem_file_iter(Path::new(&file.1))
        .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
        .map_err(|e| tls_error(file)(e.into()))?;
    if certificates.is_empty() {
        return Err(tls_error(file)("no PEM certificate in the file".into()));
    }
    Ok(certificates)
}

/// The client identity, when both halves are configured (the configuration
/// rejects one without the other).
fn identity(tls: &TlsFiles) -> Option<(&NamedPath, &NamedPath)> {
    tls.client_certificate.as_ref().zip(tls.client_key.as_ref())
}

/// The gRPC channel's TLS settings: the client identity, and the server
/// certificate check (which carries the trusted roots).
pub(super) fn tonic_config(tls: &TlsFiles, endpoint: &str) -> Result<TonicTls, OtlpError> {
    use tonic::transport::{ClientTlsConfig, Identity};
    let verifier = verifier(tls, endpoint)?;
    // tonic checks the client identity only when connecting: building the
    // same configuration with rustls first turns a bad one into an error at
    // setup, naming the file.
    config_with(tls, endpoint, verifier.clone())?;
    let mut config = ClientTlsConfig::new();
    if let Some((certificate, key)) = identity(tls) {
        config = config.identity(Identity::from_pem(read(certificate)?, read(key)?));
    }
    Ok((config, verifier))
}

/// What tonic's `Endpoint::tls_config_with_verifier` takes.
pub(super) type TonicTls = (
    tonic::transport::ClientTlsConfig,
    Arc<dyn ServerCertVerifier>,
);

/// The HTTP client's TLS settings.
pub(super) fn rustls_config(
    tls: &TlsFiles,
    endpoint: &str,
) -> Result<rustls::ClientConfig, OtlpError> {
    config_with(tls, endpoint, verifier(tls, endpoint)?)
}

// rustls 0.23.48 deprecates its ring provider for want of post-quantum key
// exchange. ring is kept because aws-lc-rs, the provider with it, needs a C
// and CMake build that the `otlp-tls` feature should not impose; the
// consumer crates (consumers/) build against the newest rustls, where the
// deprecation would otherwise warn in every user's build.
#[allow(deprecated)]
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn config_error<E>(endpoint: &str) -> impl FnOnce(E) -> OtlpError + '_
where
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    move |e| OtlpError::TlsConfig {
        endpoint: endpoint.to_owned(),
        source: e.into(),
    }
}

/// The server certificate check: webpki's against the trusted roots, also
/// accepting a server certificate that is one of the file's (see
/// [`TrustedFileVerifier`]).
fn verifier(tls: &TlsFiles, endpoint: &str) -> Result<Arc<dyn ServerCertVerifier>, OtlpError> {
    let mut roots = RootCertStore::empty();
    let (pinned, variable) = match &tls.ca {
        Some(ca) => {
            let certificates = certificates(ca)?;
            for certificate in &certificates {
                roots
                    .add(certificate.clone())
                    .map_err(|e| tls_error(ca)(e.into()))?;
            }
            (certificates, Some(ca.0.clone()))
        }
        None => {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
            (Vec::new(), None)
        }
    };
    let inner = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider())
        .build()
        .map_err(config_error(endpoint))?;
    Ok(Arc::new(TrustedFileVerifier::new(inner, pinned, variable)))
}

fn config_with(
    tls: &TlsFiles,
    endpoint: &str,
    verifier: Arc<dyn ServerCertVerifier>,
) -> Result<rustls::ClientConfig, OtlpError> {
    // `dangerous` only names the API: the verifier checks as much as
    // webpki's own (see `verifier.rs`).
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(config_error(endpoint))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    match identity(tls) {
        Some((certificate, key)) => {
            let chain = certificates(certificate)?;
            let private =
                PrivateKeyDer::from_pem_file(&key.1).map_err(|e| tls_error(key)(e.into()))?;
            builder
                .with_client_auth_cert(chain, private)
                .map_err(|e| tls_error(key)(e.into()))
        }
        None => Ok(builder.with_no_client_auth()),
    }
}
