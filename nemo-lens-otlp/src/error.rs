//! Why the OTLP exporter could not be built.

use std::path::PathBuf;

/// Why the OTLP exporter could not be built; [`source`](std::error::Error::source)
/// gives the underlying error.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum OtlpError {
    /// The exporter's runtime thread could not be started.
    #[error("cannot start the OTLP exporter's runtime thread")]
    Runtime(#[source] std::io::Error),
    /// The endpoint is not a URL the transport accepts.
    #[error("invalid OTLP endpoint {endpoint:?}")]
    Endpoint {
        /// The endpoint as configured.
        endpoint: String,
        /// What the transport said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An `https://` endpoint in a build without TLS.
    #[error(
        "OTLP endpoint {endpoint} uses https, which needs the `otlp-tls` cargo feature of nemo-lens"
    )]
    TlsDisabled {
        /// The endpoint as configured.
        endpoint: String,
    },
    /// A header name or value that cannot be sent (the value is never shown).
    #[error("OTLP header {name:?} cannot be sent: {reason}")]
    Header {
        /// The header name.
        name: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A certificate or key file could not be used.
    #[error("cannot use {path:?} ({variable}) for TLS")]
    Tls {
        /// The variable that named the file.
        variable: String,
        /// The file.
        path: PathBuf,
        /// What reading or parsing it said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The TLS configuration as a whole was refused.
    #[error("cannot set up TLS for OTLP endpoint {endpoint}")]
    TlsConfig {
        /// The endpoint as configured.
        endpoint: String,
        /// What the TLS library said.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// `opentelemetry-otlp` refused to build the exporter.
    #[error("cannot build the OTLP {protocol} exporter for {endpoint}")]
    Build {
        /// `grpc` or `http/protobuf`.
        protocol: &'static str,
        /// The endpoint as configured.
        endpoint: String,
        /// The builder's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// What to do about a TLS failure, appended to its error text: the TLS
/// library says what failed, not which setting to change.
#[cfg(feature = "otlp-tls")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum TlsHint {
    /// No trusted certificate signed the server's; holds the variable that
    /// named the trusted file, `None` with the built-in roots.
    UnknownIssuer(Option<String>),
    /// The server presents a CA certificate (CA:TRUE) that is not in the
    /// trusted file: usually a self-signed certificate trusted by mistake.
    CaAsServer(Option<String>),
    /// The certificate's subjectAltName does not cover this host.
    Name(String),
    /// The certificate's validity ended.
    Expired,
    /// The certificate's validity has not begun.
    NotYetValid,
    /// The certificate's extendedKeyUsage lacks serverAuth.
    Purpose,
    /// The endpoint answered the TLS handshake with something else.
    NotTls,
    /// The server wants a client certificate.
    ClientCertificate,
}

#[cfg(feature = "otlp-tls")]
const DEFAULT_CA_VARIABLE: &str = "OTEL_EXPORTER_OTLP_CERTIFICATE";

#[cfg(feature = "otlp-tls")]
impl std::fmt::Display for TlsHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let must_name = |f: &mut std::fmt::Formatter<'_>, variable: &Option<String>| match variable
        {
            Some(variable) => write!(
                f,
                "{variable} must name the CA that signed the server's certificate \
                 (or the server's own self-signed certificate)"
            ),
            None => write!(
                f,
                "{DEFAULT_CA_VARIABLE} is not set, so only Mozilla's root CAs are trusted: \
                 set it to the CA that signed the server's certificate \
                 (or to the server's own self-signed certificate)"
            ),
        };
        match self {
            TlsHint::UnknownIssuer(variable) => must_name(f, variable),
            TlsHint::CaAsServer(variable) => {
                f.write_str(
                    "the server presents a CA certificate (CA:TRUE) as its own, which is \
                     trusted only when it is itself in the trusted file; ",
                )?;
                must_name(f, variable)
            }
            TlsHint::Name(host) => write!(
                f,
                "the certificate's subjectAltName does not cover {host}; \
                 use a name it lists in OTEL_EXPORTER_OTLP_ENDPOINT"
            ),
            TlsHint::Expired => f.write_str(
                "the server's certificate has expired: renew it (or correct this host's clock)",
            ),
            TlsHint::NotYetValid => {
                f.write_str("the server's certificate is not valid yet: check this host's clock")
            }
            TlsHint::Purpose => f.write_str(
                "the server's certificate is not for server authentication: reissue it \
                 with extendedKeyUsage serverAuth (or none)",
            ),
            TlsHint::NotTls => f.write_str(
                "the endpoint does not speak TLS on this port: use http:// or the \
                 collector's TLS port",
            ),
            TlsHint::ClientCertificate => f.write_str(
                "the server requires a client certificate: set \
                 OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY",
            ),
        }
    }
}

#[cfg(feature = "otlp-tls")]
impl TlsHint {
    /// The hint for a transport failure known only by its text (the
    /// certificate failures already carry theirs, from the verifier).
    pub(super) fn for_transport_error(text: &str) -> Option<TlsHint> {
        // rustls' wording when the first bytes back are not a TLS record
        // (a plain-text HTTP or h2c server).
        const NOT_TLS: [&str; 3] = [
            "received corrupt message of type InvalidContentType",
            "received corrupt message of type UnknownProtocolVersion",
            "received corrupt message of type InvalidEmptyPayload",
        ];
        if NOT_TLS.iter().any(|t| text.contains(t)) {
            Some(TlsHint::NotTls)
        } else if text.contains("received fatal alert: CertificateRequired") {
            Some(TlsHint::ClientCertificate)
        } else {
            None
        }
    }
}

#[cfg(all(test, feature = "otlp-tls"))]
mod tests {
    use super::TlsHint;

    #[test]
    fn transport_errors_get_a_hint_only_when_their_cause_is_known() {
        let plain = "client error (Connect): received corrupt message of type InvalidContentType";
        assert_eq!(TlsHint::for_transport_error(plain), Some(TlsHint::NotTls));
        let mtls = "received fatal alert: CertificateRequired";
        assert_eq!(
            TlsHint::for_transport_error(mtls),
            Some(TlsHint::ClientCertificate)
        );
        assert_eq!(TlsHint::for_transport_error("connection refused"), None);
    }

    #[test]
    fn issuer_hints_name_the_variable_that_was_set() {
        let set = TlsHint::UnknownIssuer(Some("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE".into()));
        assert!(set
            .to_string()
            .starts_with("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE must name the CA"));
        let unset = TlsHint::UnknownIssuer(None).to_string();
        assert!(unset.contains("is not set"), "{unset}");
    }
}

nemo_lens_core::__debug_as_sentence!(OtlpError);
