//! Client certificates as Go's `tls.ClientAuthType` asks for them, on
//! rustls: requested or required without verification (which webpki's
//! verifier does not do), verified against the client CA, and the
//! `client_allowed_sans` check after any of them.

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, SignatureScheme};

use super::settings::ClientAuth;

/// The verifier for `auth`; `None` for `NoClientCert` without allowed SANs.
pub(super) fn verifier(
    auth: ClientAuth,
    roots: Option<RootCertStore>,
    allowed_sans: Option<Vec<String>>,
    provider: &Arc<CryptoProvider>,
) -> Result<Option<Arc<dyn ClientCertVerifier>>, String> {
    let base: Arc<dyn ClientCertVerifier> = match auth {
        ClientAuth::NoClientCert => return Ok(None),
        ClientAuth::RequestClientCert => Arc::new(Unverified::new(false, provider)),
        ClientAuth::RequireAnyClientCert => Arc::new(Unverified::new(true, provider)),
        ClientAuth::VerifyClientCertIfGiven | ClientAuth::RequireAndVerifyClientCert => {
            // Without a client CA, Go verifies against the system's roots.
            let roots = roots.unwrap_or_else(|| RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            });
            let builder =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone());
            let builder = if auth == ClientAuth::VerifyClientCertIfGiven {
                builder.allow_unauthenticated()
            } else {
                builder
            };
            builder.build().map_err(|e| e.to_string())?
        }
    };
    Ok(Some(match allowed_sans {
        Some(allowed) => Arc::new(SanChecked {
            inner: base,
            allowed,
        }),
        None => base,
    }))
}

/// Asks for a certificate and takes any (Go's `RequestClientCert` and
/// `RequireAnyClientCert`): the handshake's signature is still checked, so
/// the client holds the key of what it presents.
struct Unverified {
    mandatory: bool,
    provider: Arc<CryptoProvider>,
}

impl Unverified {
    fn new(mandatory: bool, provider: &Arc<CryptoProvider>) -> Self {
        Unverified {
            mandatory,
            provider: provider.clone(),
        }
    }
}

impl fmt::Debug for Unverified {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Unverified")
            .field("mandatory", &self.mandatory)
            .finish_non_exhaustive()
    }
}

impl ClientCertVerifier for Unverified {
    fn client_auth_mandatory(&self) -> bool {
        self.mandatory
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// exporter-toolkit's `VerifyPeerCertificate`: the client certificate must
/// carry one of the allowed names among its DNS names, email addresses, IP
/// addresses and URIs.
#[derive(Debug)]
struct SanChecked {
    inner: Arc<dyn ClientCertVerifier>,
    allowed: Vec<String>,
}

impl ClientCertVerifier for SanChecked {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        let verified = self
            .inner
            .verify_client_cert(end_entity, intermediates, now)?;
        let names = subject_alt_names(end_entity).map_err(rustls::Error::General)?;
        if names.iter().any(|name| self.allowed.contains(name)) {
            Ok(verified)
        } else {
            tracing::debug!(
                target: "nemo_lens",
                allowed = ?self.allowed,
                presented = ?names,
                "client certificate refused: none of the allowed SANs"
            );
            // Not valid for the names allowed: the alert Go's server sends,
            // bad certificate.
            Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName,
            ))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The DNS names, email addresses, IP addresses and URIs of `cert`, in
/// Go's spelling (an IP as `127.0.0.1`, a URI whole).
fn subject_alt_names(cert: &CertificateDer<'_>) -> Result<Vec<String>, String> {
    use x509_parser::extensions::GeneralName;
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref())
        .map_err(|e| format!("error parsing client certificate: {e}"))?;
    let Ok(Some(san)) = parsed.subject_alternative_name() else {
        return Ok(Vec::new());
    };
    Ok(san
        .value
        .general_names
        .iter()
        .filter_map(|name| match name {
            GeneralName::DNSName(dns) => Some((*dns).to_owned()),
            GeneralName::RFC822Name(email) => Some((*email).to_owned()),
            GeneralName::URI(uri) => Some((*uri).to_owned()),
            GeneralName::IPAddress(bytes) => match bytes.len() {
                4 => Some(
                    std::net::Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string(),
                ),
                16 => <[u8; 16]>::try_from(*bytes)
                    .ok()
                    .map(|b| std::net::Ipv6Addr::from(b).to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect())
}
