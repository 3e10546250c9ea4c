//! The server certificate check of OTLP over TLS, on both transports.
//!
//! It is webpki's check, with one exception that OpenSSL and Go make as
//! well: a server certificate byte-identical to one in the trusted file
//! (`OTEL_EXPORTER_OTLP_CERTIFICATE`) is trusted as it is, after its name
//! and purpose are checked. Without it, the self-signed certificate
//! `openssl req -x509` makes (CA:TRUE) is refused with `CaUsedAsEndEntity`
//! even when it is the very certificate the user trusts. Refusals get a
//! [`TlsHint`] saying which setting to change.

use std::fmt;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, OtherError, SignatureScheme};

use super::error::TlsHint;

/// webpki's verifier, plus trust in the exact certificates of the file.
#[derive(Debug)]
pub(super) struct TrustedFileVerifier {
    inner: Arc<WebPkiServerVerifier>,
    /// The certificates of the trusted file; empty with the built-in roots.
    pinned: Vec<CertificateDer<'static>>,
    /// The variable that named the trusted file, for hints.
    variable: Option<String>,
}

impl TrustedFileVerifier {
    /// `inner` must trust (at least) `pinned`, the certificates of the file
    /// `variable` names; with the built-in roots, both are empty/`None`.
    pub(super) fn new(
        inner: Arc<WebPkiServerVerifier>,
        pinned: Vec<CertificateDer<'static>>,
        variable: Option<String>,
    ) -> Self {
        TrustedFileVerifier {
            inner,
            pinned,
            variable,
        }
    }

    fn is_pinned(&self, end_entity: &CertificateDer<'_>) -> bool {
        self.pinned
            .iter()
            .any(|p| p.as_ref() == end_entity.as_ref())
    }

    fn hint(&self, error: &Error, server_name: &ServerName<'_>) -> Option<TlsHint> {
        let Error::InvalidCertificate(error) = error else {
            return None;
        };
        Some(match error {
            CertificateError::UnknownIssuer => TlsHint::UnknownIssuer(self.variable.clone()),
            CertificateError::Other(other) if is_ca_used_as_end_entity(other) => {
                TlsHint::CaAsServer(self.variable.clone())
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                TlsHint::Name(server_name.to_str().into_owned())
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => TlsHint::Expired,
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                TlsHint::NotYetValid
            }
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
                TlsHint::Purpose
            }
            _ => return None,
        })
    }
}

/// Checks a server certificate that is byte-identical to a trusted one
/// webpki refused only for being a CA or for lacking an issuer. webpki
/// checks validity, basicConstraints and extendedKeyUsage of the server
/// certificate before anything else (rustls-webpki `verify_cert.rs`,
/// `check_issuer_independent_properties`), so its validity has been checked
/// either way; the name has not, and with `CaUsedAsEndEntity` the purpose
/// has not.
fn verify_pinned(
    end_entity: &CertificateDer<'_>,
    server_name: &ServerName<'_>,
) -> Result<(), Error> {
    // Parsing as an end entity does not look at basicConstraints.
    let certificate = rustls::server::ParsedCertificate::try_from(end_entity)?;
    // subjectAltName only, like webpki, Go and curl: the CN is ignored.
    rustls::client::verify_server_name(&certificate, server_name)?;
    if allows_server_auth(end_entity.as_ref()).ok_or(CertificateError::BadEncoding)? {
        Ok(())
    } else {
        Err(CertificateError::InvalidPurpose.into())
    }
}

/// Whether webpki's error is "CA certificate used as end entity"; it has
/// no variant of rustls' own, so it comes wrapped in `Other`.
fn is_ca_used_as_end_entity(other: &OtherError) -> bool {
    matches!(
        other.0.downcast_ref::<webpki::Error>(),
        Some(webpki::Error::CaUsedAsEndEntity)
    )
}

/// Whether a refusal by webpki is one a certificate of the file overrides.
fn pinnable(error: &Error) -> bool {
    match error {
        Error::InvalidCertificate(CertificateError::UnknownIssuer) => true,
        Error::InvalidCertificate(CertificateError::Other(other)) => {
            is_ca_used_as_end_entity(other)
        }
        _ => false,
    }
}

impl ServerCertVerifier for TrustedFileVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let mut error = match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(verified) => return Ok(verified),
            Err(error) => error,
        };
        if pinnable(&error) && self.is_pinned(end_entity) {
            match verify_pinned(end_entity, server_name) {
                Ok(()) => return Ok(ServerCertVerified::assertion()),
                Err(pinned_error) => error = pinned_error,
            }
        }
        // A hinted refusal reaches the server as a generic handshake_failure
        // alert rather than, say, unknown_ca: a small price, as the alert
        // only shows in the server's log, while the text is all our users
        // see on either transport.
        Err(match self.hint(&error, server_name) {
            Some(hint) => Error::Other(OtherError(Arc::new(Hinted { error, hint }))),
            None => error,
        })
    }

    // The handshake signature is checked with the certificate's own key,
    // whatever its basicConstraints: parsing it for that does not look.
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// A refusal with what to do about it. Both transports show only the text
/// of the TLS error, so the hint has to be part of it.
#[derive(Debug)]
struct Hinted {
    error: Error,
    hint: TlsHint,
}

impl fmt::Display for Hinted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}; {}", self.error, self.hint)
    }
}

impl std::error::Error for Hinted {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// Whether the certificate may authenticate a server, by webpki's rule:
/// no extendedKeyUsage, or one listing serverAuth. `None` when the DER
/// cannot be read.
fn allows_server_auth(certificate: &[u8]) -> Option<bool> {
    const EXT_KEY_USAGE: &[u8] = &[0x55, 0x1d, 0x25]; // 2.5.29.37
    const SERVER_AUTH: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01]; // 1.3.6.1.5.5.7.3.1
    let (certificate, _) = der(certificate, SEQUENCE)?;
    let (tbs, _) = der(certificate, SEQUENCE)?;
    // version, serial, signature, issuer, validity, subject, key, and the
    // optional unique ids come before the [3] extensions.
    let mut fields = tbs;
    let extensions = loop {
        if fields.is_empty() {
            return Some(true);
        }
        let (tag, value, rest) = element(fields)?;
        if tag == EXTENSIONS {
            break der(value, SEQUENCE)?.0;
        }
        fields = rest;
    };
    let mut extensions = extensions;
    while !extensions.is_empty() {
        let (extension, rest) = der(extensions, SEQUENCE)?;
        extensions = rest;
        let (oid, extension) = der(extension, OID)?;
        if oid != EXT_KEY_USAGE {
            continue;
        }
        let extension = match element(extension)? {
            (BOOLEAN, _, rest) => rest, // critical
            _ => extension,
        };
        let (value, _) = der(extension, OCTET_STRING)?;
        let (mut purposes, _) = der(value, SEQUENCE)?;
        while !purposes.is_empty() {
            let (purpose, rest) = der(purposes, OID)?;
            if purpose == SERVER_AUTH {
                return Some(true);
            }
            purposes = rest;
        }
        // Also an empty list, which webpki refuses too.
        return Some(false);
    }
    Some(true)
}

const BOOLEAN: u8 = 0x01;
const OCTET_STRING: u8 = 0x04;
const OID: u8 = 0x06;
const SEQUENCE: u8 = 0x30;
const EXTENSIONS: u8 = 0xa3;

/// The contents of a DER element with tag `tag` at the start of `input`,
/// and what follows it.
fn der(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    match element(input)? {
        (t, value, rest) if t == tag => Some((value, rest)),
        _ => None,
    }
}

/// `(tag, contents, rest)` of the DER element at the start of `input`
/// (single-byte tags, which is all a certificate uses up to here).
fn element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, input) = input.split_first()?;
    let (&first, input) = input.split_first()?;
    let (length, input) = if first < 0x80 {
        (usize::from(first), input)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || input.len() < count {
            return None;
        }
        let (bytes, input) = input.split_at(count);
        let length = bytes.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b));
        (length, input)
    };
    if input.len() < length {
        return None;
    }
    let (value, rest) = input.split_at(length);
    Some((tag, value, rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, KeyPair};

    const VARIABLE: &str = "OTEL_EXPORTER_OTLP_CERTIFICATE";

    fn params(names: &[&str], ca: bool) -> CertificateParams {
        let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        if ca {
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        }
        params
    }

    fn self_signed(params: CertificateParams) -> CertificateDer<'static> {
        params
            .self_signed(&KeyPair::generate().unwrap())
            .unwrap()
            .der()
            .clone()
    }

    fn inner(roots: rustls::RootCertStore) -> Arc<WebPkiServerVerifier> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .unwrap()
    }

    /// The verifier for a trusted file holding `trusted`.
    fn trusting(trusted: &[CertificateDer<'static>]) -> TrustedFileVerifier {
        let mut roots = rustls::RootCertStore::empty();
        for certificate in trusted {
            roots.add(certificate.clone()).unwrap();
        }
        TrustedFileVerifier::new(inner(roots), trusted.to_vec(), Some(VARIABLE.into()))
    }

    fn verify(
        verifier: &dyn ServerCertVerifier,
        chain: &[CertificateDer<'static>],
        name: &str,
    ) -> Result<(), String> {
        let name = ServerName::try_from(name.to_owned()).unwrap();
        verifier
            .verify_server_cert(&chain[0], &chain[1..], &name, &[], UnixTime::now())
            .map(|_| ())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn webpki_refuses_a_trusted_ca_certificate_as_server_and_we_recognise_why() {
        // Guards the downcast: if rustls moved to another webpki, this
        // error would no longer be recognised and the exception would
        // silently stop applying.
        let cert = self_signed(params(&["127.0.0.1"], true));
        let mut roots = rustls::RootCertStore::empty();
        roots.add(cert.clone()).unwrap();
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let error = inner(roots)
            .verify_server_cert(&cert, &[], &name, &[], UnixTime::now())
            .unwrap_err();
        assert!(pinnable(&error), "{error}");
    }

    #[test]
    fn a_trusted_self_signed_ca_certificate_is_accepted_for_its_names_only() {
        let cert = self_signed(params(&["127.0.0.1", "localhost"], true));
        let verifier = trusting(std::slice::from_ref(&cert));
        let chain = [cert];
        assert_eq!(verify(&verifier, &chain, "127.0.0.1"), Ok(()));
        assert_eq!(verify(&verifier, &chain, "localhost"), Ok(()));
        let error = verify(&verifier, &chain, "10.0.0.1").unwrap_err();
        assert!(
            error.contains("certificate not valid for name \"10.0.0.1\""),
            "{error}"
        );
        assert!(
            error.contains(
                "the certificate's subjectAltName does not cover 10.0.0.1; \
                 use a name it lists in OTEL_EXPORTER_OTLP_ENDPOINT"
            ),
            "{error}"
        );
    }

    #[test]
    fn a_self_signed_ca_certificate_not_in_the_file_is_refused_with_the_hint() {
        let cert = self_signed(params(&["127.0.0.1"], true));
        let other = self_signed(params(&["127.0.0.1"], true));
        let error = verify(&trusting(&[other]), &[cert], "127.0.0.1").unwrap_err();
        assert!(error.contains("CaUsedAsEndEntity"), "{error}");
        assert!(
            error.contains(
                "OTEL_EXPORTER_OTLP_CERTIFICATE must name the CA that signed the server's \
                 certificate (or the server's own self-signed certificate)"
            ),
            "{error}"
        );
    }

    #[test]
    fn an_expired_trusted_self_signed_certificate_is_refused() {
        let mut expired = params(&["127.0.0.1"], true);
        expired.not_before = rcgen::date_time_ymd(2020, 1, 1);
        expired.not_after = rcgen::date_time_ymd(2021, 1, 1);
        let cert = self_signed(expired);
        let error =
            verify(&trusting(std::slice::from_ref(&cert)), &[cert], "127.0.0.1").unwrap_err();
        assert!(error.contains("certificate expired"), "{error}");
        assert!(error.contains("has expired: renew it"), "{error}");
    }

    #[test]
    fn a_trusted_self_signed_certificate_must_allow_server_authentication() {
        let mut client_only = params(&["127.0.0.1"], true);
        client_only.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = self_signed(client_only);
        let error =
            verify(&trusting(std::slice::from_ref(&cert)), &[cert], "127.0.0.1").unwrap_err();
        assert!(error.contains("InvalidPurpose"), "{error}");
        assert!(error.contains("extendedKeyUsage serverAuth"), "{error}");

        let mut server = params(&["127.0.0.1"], true);
        server.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ClientAuth,
            ExtendedKeyUsagePurpose::ServerAuth,
        ];
        let cert = self_signed(server);
        let verifier = trusting(std::slice::from_ref(&cert));
        assert_eq!(verify(&verifier, &[cert], "127.0.0.1"), Ok(()));
    }

    #[test]
    fn a_self_signed_certificate_not_marked_ca_is_accepted_as_before() {
        let cert = self_signed(params(&["127.0.0.1"], false));
        let verifier = trusting(std::slice::from_ref(&cert));
        assert_eq!(verify(&verifier, &[cert], "127.0.0.1"), Ok(()));
    }

    #[test]
    fn ca_signed_leaves_verify_against_the_ca_or_as_themselves() {
        // rcgen gives every certificate the same subject unless told: a
        // leaf named as its issuer would look self-issued to webpki.
        let named = |mut params: CertificateParams, name: &str| {
            params
                .distinguished_name
                .push(rcgen::DnType::CommonName, name);
            params
        };
        let ca = rcgen::CertifiedIssuer::self_signed(
            named(params(&[], true), "test CA"),
            KeyPair::generate().unwrap(),
        )
        .unwrap();
        let leaf = named(params(&["127.0.0.1"], false), "test server")
            .signed_by(&KeyPair::generate().unwrap(), &ca)
            .unwrap()
            .der()
            .clone();
        let chain = [leaf];
        assert_eq!(
            verify(&trusting(&[ca.der().clone()]), &chain, "127.0.0.1"),
            Ok(())
        );
        // The leaf itself in the file, as Go accepts it.
        assert_eq!(verify(&trusting(&chain), &chain, "127.0.0.1"), Ok(()));
        let unrelated = self_signed(params(&[], true));
        let error = verify(&trusting(&[unrelated]), &chain, "127.0.0.1").unwrap_err();
        assert!(
            error.contains("invalid peer certificate: UnknownIssuer"),
            "{error}"
        );
        assert!(error.contains("must name the CA"), "{error}");
    }

    #[test]
    fn without_a_file_the_hint_says_to_set_the_variable() {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        let verifier = TrustedFileVerifier::new(inner(roots), Vec::new(), None);
        let cert = self_signed(params(&["127.0.0.1"], false));
        let error = verify(&verifier, &[cert], "127.0.0.1").unwrap_err();
        assert!(error.contains("UnknownIssuer"), "{error}");
        assert!(
            error.contains("OTEL_EXPORTER_OTLP_CERTIFICATE is not set, so only Mozilla's"),
            "{error}"
        );
    }

    #[test]
    fn server_authentication_is_read_from_the_extended_key_usage() {
        let with = |purposes: Vec<ExtendedKeyUsagePurpose>| {
            let mut p = params(&["127.0.0.1"], true);
            p.extended_key_usages = purposes;
            allows_server_auth(self_signed(p).as_ref())
        };
        assert_eq!(with(vec![]), Some(true));
        assert_eq!(with(vec![ExtendedKeyUsagePurpose::ServerAuth]), Some(true));
        assert_eq!(with(vec![ExtendedKeyUsagePurpose::ClientAuth]), Some(false));
        assert_eq!(with(vec![ExtendedKeyUsagePurpose::Any]), Some(false));
        let cert = self_signed(params(&["127.0.0.1"], true));
        assert_eq!(allows_server_auth(&cert.as_ref()[..cert.len() / 2]), None);
        assert_eq!(allows_server_auth(&[]), None);
    }
}
