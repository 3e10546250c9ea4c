//! Certificates generated per test run (rcgen) and the receivers' rustls
//! server configuration.

#![allow(dead_code)] // each test target uses part of this module

use std::path::PathBuf;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};

/// A CA, a server certificate it signed for 127.0.0.1, and an unrelated CA,
/// as PEM strings and files in a fresh directory.
pub struct TestPki {
    pub dir: PathBuf,
    pub ca_file: PathBuf,
    pub other_ca_file: PathBuf,
    pub server_cert: String,
    pub server_key: String,
    /// The CA's certificate, for receivers that check client certificates.
    pub ca_cert: String,
    /// A client certificate the CA signed, and its key.
    pub client_cert_file: PathBuf,
    pub client_key_file: PathBuf,
}

fn new_ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

impl TestPki {
    pub fn generate(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("nemo-lens-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca = new_ca("nemo-lens test CA");
        let other = new_ca("unrelated test CA");
        let key = KeyPair::generate().unwrap();
        let server = CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
            .unwrap()
            .signed_by(&key, &ca)
            .unwrap();
        let client_key = KeyPair::generate().unwrap();
        let client = CertificateParams::new(vec!["nemo-lens-client".to_owned()])
            .unwrap()
            .signed_by(&client_key, &ca)
            .unwrap();
        let client_cert_file = dir.join("client.pem");
        std::fs::write(&client_cert_file, client.pem()).unwrap();
        let client_key_file = dir.join("client-key.pem");
        std::fs::write(&client_key_file, client_key.serialize_pem()).unwrap();
        let ca_file = dir.join("ca.pem");
        std::fs::write(&ca_file, ca.pem()).unwrap();
        let other_ca_file = dir.join("other-ca.pem");
        std::fs::write(&other_ca_file, other.pem()).unwrap();
        TestPki {
            dir,
            ca_file,
            other_ca_file,
            server_cert: server.pem(),
            server_key: key.serialize_pem(),
            ca_cert: ca.pem(),
            client_cert_file,
            client_key_file,
        }
    }
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A rustls server configuration (ring provider) presenting `cert`; with
/// `client_ca`, clients must present a certificate that CA signed.
pub fn server_config(cert: &str, key: &str, client_ca: Option<&str>) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .unwrap();
    let builder = match client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for cert in CertificateDer::pem_slice_iter(ca.as_bytes()) {
                roots.add(cert.unwrap()).unwrap();
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .unwrap();
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key).unwrap();
    // gRPC needs HTTP/2 negotiated; the HTTP receiver speaks HTTP/1.1.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(config)
}
