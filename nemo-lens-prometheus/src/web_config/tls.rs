//! `tls_server_config` as a rustls server configuration: the certificate
//! and key loaded (so a bad one fails here, naming its file), the cipher
//! suites, curves and versions exporter-toolkit names mapped onto what
//! rustls offers, and the client certificate policy.

use std::path::Path;
use std::sync::Arc;

use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{NamedGroup, RootCertStore, ServerConfig, SupportedProtocolVersion};

use super::client_auth;
use super::error::WebConfigError;
use super::settings::{ClientAuth, Pem, TlsSettings};

/// The rustls configuration `tls` describes; `config` names the web
/// configuration file in errors. Names exporter-toolkit accepts that rustls
/// does not implement (CBC suites, P-521) are left out with a warning.
pub(crate) fn server_config(
    config: &Path,
    tls: &TlsSettings,
) -> Result<Arc<ServerConfig>, WebConfigError> {
    let failed = |what: &'static str, pem: &Pem, reason: String| WebConfigError::Certificate {
        config: config.to_owned(),
        what,
        source_name: match pem {
            Pem::File(path) => path.display().to_string(),
            Pem::Inline(_) => "(inline)".to_owned(),
        },
        reason,
    };
    let read = |what: &'static str, pem: &Pem| -> Result<Vec<u8>, WebConfigError> {
        match pem {
            Pem::File(path) => std::fs::read(path).map_err(|e| failed(what, pem, e.to_string())),
            Pem::Inline(text) => Ok(text.as_bytes().to_vec()),
        }
    };
    let cert_pem = read("cert_file", &tls.cert)?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| failed("cert_file", &tls.cert, e.to_string()))?;
    if chain.is_empty() {
        return Err(failed(
            "cert_file",
            &tls.cert,
            "no PEM certificate in it".into(),
        ));
    }
    let key_pem = read("key_file", &tls.key)?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| failed("key_file", &tls.key, e.to_string()))?;
    let roots = match &tls.client_ca {
        None => None,
        Some(pem) => {
            let bytes = read("client_ca_file", pem)?;
            let mut roots = RootCertStore::empty();
            // As Go's AppendCertsFromPEM: what is not a certificate is skipped.
            for cert in CertificateDer::pem_slice_iter(&bytes).flatten() {
                let _ = roots.add(cert);
            }
            Some(roots)
        }
    };
    // Checked after the CA is read, as exporter-toolkit orders it.
    if roots.is_some() && tls.client_auth == ClientAuth::NoClientCert {
        return Err(super::error::invalid(
            config,
            "tls_server_config.client_auth_type",
            "NoClientCert",
            "a client auth type other than NoClientCert: client_ca_file is set without one",
        ));
    }

    let provider = Arc::new(provider(tls)?);
    let versions = versions(tls);
    let verifier = client_auth::verifier(
        tls.client_auth,
        roots,
        tls.client_allowed_sans.clone(),
        &provider,
    )
    .map_err(|reason| {
        let pem = tls.client_ca.clone().unwrap_or(Pem::Inline(String::new()));
        failed("client_ca_file", &pem, reason)
    })?;
    let builder = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions)
        .map_err(|e| failed("cert_file", &tls.cert, e.to_string()))?;
    let builder = match verifier {
        Some(verifier) => builder.with_client_cert_verifier(verifier),
        None => builder.with_no_client_auth(),
    };
    let mut server = builder.with_single_cert(chain, key).map_err(|e| {
        failed(
            "key_file",
            &tls.key,
            format!("it does not go with the certificate: {e}"),
        )
    })?;
    server.ignore_client_order = tls.prefer_server_cipher_suites;
    // HTTP/1.1 only, whatever `http2` says: Prometheus falls back to it.
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(server))
}

fn versions(tls: &TlsSettings) -> Vec<&'static SupportedProtocolVersion> {
    let mut versions = Vec::new();
    if tls.tls13 {
        versions.push(&rustls::version::TLS13);
    }
    if tls.tls12 {
        versions.push(&rustls::version::TLS12);
    }
    versions
}

/// ring's provider with the suites and groups asked for. As in Go, the list
/// of cipher suites governs TLS 1.2 only; TLS 1.3's are always on.
fn provider(tls: &TlsSettings) -> Result<CryptoProvider, WebConfigError> {
    let mut provider = ring::default_provider();
    let mut unsupported: Vec<String> = Vec::new();
    if let Some(names) = &tls.cipher_suites {
        let available = provider.cipher_suites.clone();
        provider.cipher_suites = available
            .iter()
            .filter(|suite| suite.version() == &rustls::version::TLS13)
            .copied()
            .collect();
        for name in names {
            match available
                .iter()
                .find(|suite| format!("{:?}", suite.suite()) == *name)
            {
                Some(suite) if suite.version() == &rustls::version::TLS12 => {
                    provider.cipher_suites.push(*suite)
                }
                // A TLS 1.3 name: on anyway.
                Some(_) => {}
                None if name.starts_with("TLS_AES") || name.starts_with("TLS_CHACHA20") => {}
                None => unsupported.push(name.clone()),
            }
        }
    }
    if let Some(curves) = &tls.curves {
        let available = provider.kx_groups.clone();
        provider.kx_groups = Vec::new();
        for curve in curves {
            let group = match curve.as_str() {
                "CurveP256" => Some(NamedGroup::secp256r1),
                "CurveP384" => Some(NamedGroup::secp384r1),
                "X25519" => Some(NamedGroup::X25519),
                _ => None,
            };
            match group.and_then(|g| available.iter().find(|kx| kx.name() == g)) {
                Some(kx) => provider.kx_groups.push(*kx),
                None => unsupported.push(curve.clone()),
            }
        }
        // Only curves rustls lacks (P-521): its own then, rather than none.
        if provider.kx_groups.is_empty() {
            provider.kx_groups = available;
        }
    }
    if !unsupported.is_empty() {
        nemo_lens_core::__internal::warnings::emit(
            nemo_lens_core::__internal::warnings::Warning::Setting,
            || {
                tracing::warn!(
                    target: "nemo_lens",
                    "the Prometheus web configuration names {} which rustls does not implement; \
                     they are left out (rustls's own curves are offered when no named one is left)",
                    unsupported.join(", ")
                );
            },
        );
    }
    Ok(provider)
}
