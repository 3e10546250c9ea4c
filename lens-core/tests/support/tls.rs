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
        }
    }
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A rustls server configuration (ring provider) presenting `cert`.
pub fn server_config(cert: &str, key: &str) -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .unwrap();
    // gRPC needs HTTP/2 negotiated; the HTTP receiver speaks HTTP/1.1.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Arc::new(config)
}
