//! Certificates generated per test run (rcgen) and the receivers' rustls
//! server configuration.

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

/// A directory of the test's own, removed when dropped.
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("nemo-lens-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        ScratchDir(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A certificate and its key as PEM, and the file holding the certificate.
pub struct CertAndKey {
    pub cert: String,
    pub key: String,
    pub cert_file: PathBuf,
}

/// Runs the `openssl` CLI, failing the test clearly when it is missing,
/// fails or hangs (it is given 30 s).
pub fn openssl(args: &[&str]) -> String {
    use std::io::Read;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let mut child = Command::new("openssl")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "this test needs the `openssl` command (Debian: apt-get install openssl) \
                 to make certificates the way users do; running it failed: {e}"
            )
        });
    // Drained on threads so that a chatty openssl cannot block on a full
    // pipe while we wait for it.
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("openssl {args:?} did not finish within 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(status.success(), "openssl {args:?} failed: {stderr}");
    stdout
}

/// A self-signed certificate made as users make one, with the `openssl`
/// CLI and its configuration (Debian's marks it CA:TRUE):
/// `openssl req -x509 -newkey rsa:2048 -nodes -keyout KEY -out CERT -days 2
/// -subj /CN=localhost -addext subjectAltName=<san>`.
pub fn openssl_self_signed(dir: &std::path::Path, name: &str, san: &str) -> CertAndKey {
    let cert_file = dir.join(format!("{name}.pem"));
    let key_file = dir.join(format!("{name}-key.pem"));
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        key_file.to_str().unwrap(),
        "-out",
        cert_file.to_str().unwrap(),
        "-days",
        "2",
        "-subj",
        "/CN=localhost",
        "-addext",
        &format!("subjectAltName={san}"),
    ]);
    CertAndKey {
        cert: std::fs::read_to_string(&cert_file).unwrap(),
        key: std::fs::read_to_string(&key_file).unwrap(),
        cert_file,
    }
}

/// Whether the certificate in `file` is marked CA (basicConstraints CA:TRUE).
pub fn openssl_says_ca(file: &std::path::Path) -> bool {
    openssl(&["x509", "-in", file.to_str().unwrap(), "-noout", "-text"]).contains("CA:TRUE")
}

/// What an HTTPS exchange gave: the status, the head (lower-case header
/// lines) and the body; or why the TLS handshake failed.
#[derive(Debug)]
pub struct Exchange {
    pub status: u16,
    pub head: String,
    pub body: String,
}

/// `GET /metrics` over TLS to `127.0.0.1:port`, trusting `ca_pem`, with a
/// client certificate and key (PEM) when given and basic auth when given;
/// `Err` with rustls's reason when the handshake or the exchange fails.
pub fn https_get(
    port: u16,
    ca_pem: &str,
    client: Option<(&str, &str)>,
    basic_auth: Option<(&str, &str)>,
) -> Result<Exchange, String> {
    use rustls::pki_types::ServerName;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let config = client_config(ca_pem, client)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let exchange = async {
            let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .map_err(|e| e.to_string())?;
            let connector = tokio_rustls::TlsConnector::from(config);
            let name = ServerName::try_from("127.0.0.1").map_err(|e| e.to_string())?;
            let mut tls = connector
                .connect(name, tcp)
                .await
                .map_err(|e| e.to_string())?;
            let mut request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n".to_owned();
            if let Some((user, password)) = basic_auth {
                request.push_str(&format!(
                    "Authorization: Basic {}\r\n",
                    base64_encode(format!("{user}:{password}").as_bytes())
                ));
            }
            request.push_str("\r\n");
            tls.write_all(request.as_bytes())
                .await
                .map_err(|e| e.to_string())?;
            let mut response = Vec::new();
            // A server that refuses the client certificate says so when
            // the client first reads.
            tls.read_to_end(&mut response)
                .await
                .map_err(|e| e.to_string())?;
            let response = String::from_utf8_lossy(&response).into_owned();
            let (head, body) = response.split_once("\r\n\r\n").ok_or("no response head")?;
            let status = head
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .ok_or("no status")?;
            Ok(Exchange {
                status,
                head: head.to_ascii_lowercase(),
                body: body.to_owned(),
            })
        };
        tokio::time::timeout(std::time::Duration::from_secs(10), exchange)
            .await
            .map_err(|_| "timed out".to_owned())?
    })
}

/// A rustls client configuration (ring) trusting `ca_pem`, presenting
/// `client` (certificate chain and key, PEM) when given.
pub fn client_config(
    ca_pem: &str,
    client: Option<(&str, &str)>,
) -> Result<Arc<rustls::ClientConfig>, String> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots
            .add(cert.map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots);
    let config = match client {
        Some((cert, key)) => {
            let chain: Vec<CertificateDer<'static>> =
                CertificateDer::pem_slice_iter(cert.as_bytes())
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.to_string())?;
            let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).map_err(|e| e.to_string())?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| e.to_string())?
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// Standard base64 with padding, for a basic-auth header.
pub fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
