//! TLS for OTLP (`otlp-tls`): rustls with the ring provider on both
//! transports. Trusted roots: only the CA certificates of
//! `OTEL_EXPORTER_OTLP_CERTIFICATE` when it is set, else Mozilla's root
//! program as shipped by `webpki-roots` (the set Python's `certifi` and
//! grpcio bundle too, and independent of the host's certificate store).

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::OtlpError;
use crate::export::settings::{NamedPath, TlsFiles};

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

/// The gRPC channel's TLS settings.
pub(super) fn tonic_config(
    tls: &TlsFiles,
    endpoint: &str,
) -> Result<tonic::transport::ClientTlsConfig, OtlpError> {
    use tonic::transport::{Certificate, ClientTlsConfig, Identity};
    // tonic skips CA certificates it cannot parse, and checks the client
    // identity only when connecting: building the same configuration with
    // rustls first turns both into errors at setup, naming the file.
    rustls_config(tls, endpoint)?;
    let mut config = ClientTlsConfig::new();
    config = match &tls.ca {
        Some(ca) => config.ca_certificate(Certificate::from_pem(read(ca)?)),
        None => config.with_webpki_roots(),
    };
    if let Some((certificate, key)) = identity(tls) {
        config = config.identity(Identity::from_pem(read(certificate)?, read(key)?));
    }
    Ok(config)
}

/// The HTTP client's TLS settings.
pub(super) fn rustls_config(
    tls: &TlsFiles,
    endpoint: &str,
) -> Result<rustls::ClientConfig, OtlpError> {
    let mut roots = RootCertStore::empty();
    match &tls.ca {
        Some(ca) => {
            for certificate in certificates(ca)? {
                roots
                    .add(certificate)
                    .map_err(|e| tls_error(ca)(e.into()))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| OtlpError::TlsConfig {
            endpoint: endpoint.to_owned(),
            source: e.into(),
        })?
        .with_root_certificates(roots);
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
