//! OTLP over TLS with the certificates users actually make: a self-signed
//! one from `openssl req -x509` (marked CA:TRUE by Debian's openssl) given
//! as `OTEL_EXPORTER_OTLP_CERTIFICATE`, and a leaf signed by a CA. Both must
//! work over gRPC and HTTP/protobuf; a certificate that is not the trusted
//! one, or that does not name 127.0.0.1, must still be refused, with a hint
//! saying what to change.
//!
//! Needs the `openssl` command; every server binds 127.0.0.1 and every wait
//! is bounded.

use crate::support::{exclusive, Exclusive};

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::otlp_receiver::{free_port, int_total, otlp_config, Proto, Received, Receiver};
use crate::support::tls::{openssl_says_ca, openssl_self_signed, ScratchDir, TestPki};
use nemo_lens::telemetry::{EnvLookup, SetupOptions, TelemetryHandle};

/// One export pipeline at a time: the machines running this have few cores.
fn serial() -> Exclusive {
    exclusive()
}

const WAIT: Duration = Duration::from_secs(15);
const PROTOS: [Proto; 2] = [Proto::Grpc, Proto::Http];

const ISSUER_HINT: &str = "OTEL_EXPORTER_OTLP_CERTIFICATE must name the CA that signed the \
     server's certificate (or the server's own self-signed certificate)";
const NAME_HINT: &str = "the certificate's subjectAltName does not cover 127.0.0.1; use a \
     name it lists in OTEL_EXPORTER_OTLP_ENDPOINT";

fn receiver(proto: Proto, port: u16, received: &Received, cert: &str, key: &str) -> Receiver {
    Receiver::start_tls(proto, port, received, (cert, key), None)
}

/// An OTLP pipeline to `https://127.0.0.1:{port}` trusting `ca_file`,
/// exporting every 200 ms with a 1 s export timeout.
fn setup(proto: Proto, port: u16, ca_file: &Path) -> TelemetryHandle {
    let config = otlp_config(
        proto,
        &format!("https://127.0.0.1:{port}"),
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", ca_file.to_str().unwrap()),
            ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
            ("OTEL_METRIC_EXPORT_TIMEOUT", "1000"),
        ],
    );
    SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .probe_gpus(false)
        .set_global(false)
        .shutdown_timeout(Duration::from_secs(3))
        .setup(&config, 0, 1)
        .unwrap()
}

/// The server presents `cert`/`key`, the client trusts `ca_file`: a
/// recorded value must arrive, decoded, with no failed export.
fn export_arrives(proto: Proto, cert: &str, key: &str, ca_file: &Path, what: &str) {
    let port = free_port();
    let received = Received::default();
    let _receiver = receiver(proto, port, &received, cert, key);
    let handle = setup(proto, port, ca_file);
    let value = 7 + proto as i64;
    handle
        .meter
        .otel()
        .u64_counter("tls.self_signed")
        .build()
        .add(value as u64, &[]);
    let begun = Instant::now();
    let request = received.wait_for(WAIT, |r| int_total(r, "tls.self_signed") == Some(value));
    assert!(
        request.is_some(),
        "{proto:?}, {what}: no export arrived within {WAIT:?}; last error: {:?}",
        handle.last_export_error()
    );
    eprintln!(
        "{proto:?}, {what}: value {value} decoded at the receiver {:?} after recording",
        begun.elapsed()
    );
    assert_eq!(handle.failed_exports(), 0, "{proto:?}, {what}");
    handle.shutdown().unwrap();
}

/// The server presents `cert`/`key`, the client trusts `ca_file`: nothing
/// may arrive, and the error of the failed export is returned.
fn export_fails(proto: Proto, cert: &str, key: &str, ca_file: &Path, what: &str) -> String {
    let port = free_port();
    let received = Received::default();
    let _receiver = receiver(proto, port, &received, cert, key);
    let handle = setup(proto, port, ca_file);
    handle
        .meter
        .otel()
        .u64_counter("tls.self_signed")
        .build()
        .add(1, &[]);
    let error = first_error(&handle, &format!("{proto:?}, {what}"));
    assert_eq!(
        received.count(),
        0,
        "{proto:?}, {what}: an export got through"
    );
    let _ = handle.shutdown();
    error
}

/// The error of the first failed export, waited for at most [`WAIT`].
fn first_error(handle: &TelemetryHandle, what: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(error) = handle.last_export_error() {
            eprintln!("{what}: {error}");
            return error;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: no failed export within {WAIT:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The issue's case: `openssl req -x509 ... -addext subjectAltName=IP:127.0.0.1`
/// (CA:TRUE), the same file on both ends.
#[test]
fn openssl_self_signed_ca_true_certificate_is_trusted_over_grpc_and_http() {
    let _serial = serial();
    let dir = ScratchDir::new("tls-self-signed");
    let server = openssl_self_signed(&dir.0, "server", "IP:127.0.0.1");
    assert!(
        openssl_says_ca(&server.cert_file),
        "this openssl did not mark the certificate CA:TRUE, so the test would not cover the issue"
    );
    for proto in PROTOS {
        export_arrives(
            proto,
            &server.cert,
            &server.key,
            &server.cert_file,
            "openssl self-signed CA:TRUE",
        );
    }
}

/// The usual setup: a leaf (CA:FALSE, from rcgen) signed by a CA, the CA in
/// the file.
#[test]
fn ca_signed_leaf_is_trusted_over_grpc_and_http() {
    let _serial = serial();
    let pki = TestPki::generate("tls-ca-signed");
    for proto in PROTOS {
        export_arrives(
            proto,
            &pki.server_cert,
            &pki.server_key,
            &pki.ca_file,
            "CA-signed leaf",
        );
    }
}

/// The file holds another self-signed certificate than the server's: the
/// exception for the file's own certificates must not let it through.
#[test]
fn a_different_self_signed_certificate_in_the_file_is_refused_with_the_hint() {
    let _serial = serial();
    let dir = ScratchDir::new("tls-self-signed-other");
    let server = openssl_self_signed(&dir.0, "server", "IP:127.0.0.1");
    let other = openssl_self_signed(&dir.0, "other", "IP:127.0.0.1");
    for proto in PROTOS {
        let error = export_fails(
            proto,
            &server.cert,
            &server.key,
            &other.cert_file,
            "another self-signed certificate trusted",
        );
        assert!(error.contains("CaUsedAsEndEntity"), "{proto:?}: {error}");
        assert!(error.contains(ISSUER_HINT), "{proto:?}: {error}");
    }
}

/// The server's own CA:TRUE certificate is trusted, but its
/// subjectAltName does not cover 127.0.0.1: the name is still checked.
#[test]
fn a_trusted_self_signed_certificate_for_another_name_is_refused_with_the_name_hint() {
    let _serial = serial();
    let dir = ScratchDir::new("tls-self-signed-name");
    let server = openssl_self_signed(&dir.0, "server", "DNS:example.com");
    assert!(openssl_says_ca(&server.cert_file));
    for proto in PROTOS {
        let error = export_fails(
            proto,
            &server.cert,
            &server.key,
            &server.cert_file,
            "trusted self-signed certificate for example.com",
        );
        assert!(
            error.contains("certificate not valid for name \"127.0.0.1\""),
            "{proto:?}: {error}"
        );
        assert!(error.contains(NAME_HINT), "{proto:?}: {error}");
    }
}

/// A plain-text HTTP server on 127.0.0.1 that answers whatever it is sent
/// with `400 Bad Request`, as web servers do to a TLS ClientHello.
struct PlainHttp {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl PlainHttp {
    fn start() -> (Self, u16) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(20));
                    continue;
                };
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
                let _ = stream.read(&mut [0u8; 4096]);
                let _ = stream.write_all(
                    b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        let server = PlainHttp {
            stop,
            thread: Some(thread),
        };
        (server, port)
    }
}

impl Drop for PlainHttp {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `https://` to a port that speaks plain HTTP: over HTTP/protobuf the
/// error says so. (Over gRPC the transport's error text reaches the report
/// without passing through code of ours, so it has no hint.)
#[test]
fn https_to_a_plain_text_port_says_the_port_does_not_speak_tls() {
    let _serial = serial();
    let dir = ScratchDir::new("tls-plain-port");
    let trusted = openssl_self_signed(&dir.0, "trusted", "IP:127.0.0.1");
    let (_server, port) = PlainHttp::start();
    let handle = setup(Proto::Http, port, &trusted.cert_file);
    handle
        .meter
        .otel()
        .u64_counter("tls.plain")
        .build()
        .add(1, &[]);
    let error = first_error(&handle, "Http, https:// to a plain-text port");
    assert!(
        error.contains("the endpoint does not speak TLS on this port"),
        "{error}"
    );
    let _ = handle.shutdown();
}
