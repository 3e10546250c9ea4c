//! OTLP over TLS against receivers serving certificates generated for the
//! run: the right CA, a wrong CA, the built-in roots, mutual TLS.

use std::time::{Duration, Instant};

use crate::capture::Captured;
use crate::otlp::{otlp, FAILED};
use crate::serial;
use crate::support::otlp_receiver::{free_port, int_total, Proto, Received, Receiver};
use crate::support::tls::TestPki;

fn tls_receiver(proto: Proto, port: u16, received: &Received, pki: &TestPki) -> Receiver {
    tls_receiver_with(proto, port, received, pki, None)
}

fn tls_receiver_with(
    proto: Proto,
    port: u16,
    received: &Received,
    pki: &TestPki,
    client_ca: Option<&str>,
) -> Receiver {
    Receiver::start_tls(
        proto,
        port,
        received,
        (&pki.server_cert, &pki.server_key),
        client_ca,
    )
}

/// Exports over TLS to a receiver whose certificate was generated for this
/// run: trusted through `OTEL_EXPORTER_OTLP_CERTIFICATE`, the export
/// arrives; with another CA, nothing arrives and the warning says why.
#[test]
fn tls_exports_arrive_with_the_right_ca_and_fail_loudly_with_a_wrong_one() {
    let _serial = serial();
    let captured = Captured::get();
    let pki = TestPki::generate("faults");
    for proto in [Proto::Grpc, Proto::Http] {
        let port = free_port();
        let received = Received::default();
        let _receiver = tls_receiver(proto, port, &received, &pki);
        let ca = pki.ca_file.to_str().unwrap();
        let (endpoint, handle) = otlp(
            proto,
            &format!("https://127.0.0.1:{port}"),
            &[("OTEL_EXPORTER_OTLP_CERTIFICATE", ca)],
            Duration::from_secs(5),
        );
        handle
            .meter
            .otel()
            .u64_counter("fault.tls")
            .build()
            .add(11, &[]);
        let begun = Instant::now();
        received
            .wait_for(Duration::from_secs(10), |r| {
                int_total(r, "fault.tls") == Some(11)
            })
            .unwrap_or_else(|| panic!("{proto:?}: no export over TLS to {endpoint}"));
        eprintln!(
            "{proto:?} TLS: export of 11 verified at the receiver {:?} after recording, {} failed exports",
            begun.elapsed(),
            handle.failed_exports()
        );
        assert_eq!(handle.failed_exports(), 0);
        handle.shutdown().unwrap();

        let port = free_port();
        let received = Received::default();
        let _receiver = tls_receiver(proto, port, &received, &pki);
        let wrong = pki.other_ca_file.to_str().unwrap();
        let (endpoint, handle) = otlp(
            proto,
            &format!("https://127.0.0.1:{port}"),
            &[("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", wrong)],
            Duration::from_secs(2),
        );
        handle
            .meter
            .otel()
            .u64_counter("fault.tls")
            .build()
            .add(1, &[]);
        let begun = Instant::now();
        let (at, line) = captured
            .wait_for(&endpoint, FAILED, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{proto:?}: no warning with a wrong CA"));
        eprintln!(
            "{proto:?} TLS with a wrong CA: warned after {:?}: {line}",
            at.duration_since(begun)
        );
        assert!(
            line.contains("invalid peer certificate: UnknownIssuer"),
            "{line}"
        );
        assert_eq!(received.count(), 0);
        assert!(handle.failed_exports() >= 1);
        let _ = handle.shutdown();
    }
}

/// Without the CA variable the built-in (Mozilla) roots are used, which do
/// not include a test CA: the export must fail, not silently succeed.
#[test]
fn tls_uses_the_built_in_roots_when_no_ca_is_configured() {
    let _serial = serial();
    let captured = Captured::get();
    let pki = TestPki::generate("roots");
    let port = free_port();
    let received = Received::default();
    let _receiver = tls_receiver(Proto::Http, port, &received, &pki);
    let (endpoint, handle) = otlp(
        Proto::Http,
        &format!("https://127.0.0.1:{port}"),
        &[],
        Duration::from_secs(2),
    );
    handle
        .meter
        .otel()
        .u64_counter("fault.roots")
        .build()
        .add(1, &[]);
    let (_, line) = captured
        .wait_for(&endpoint, FAILED, Duration::from_secs(10))
        .expect("a warning");
    assert!(
        line.contains("invalid peer certificate: UnknownIssuer"),
        "{line}"
    );
    assert_eq!(received.count(), 0);
    let _ = handle.shutdown();
}

/// Mutual TLS: a receiver that demands a client certificate gets exports
/// only when `OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE` and `_CLIENT_KEY` are
/// set.
#[test]
fn client_certificates_are_presented_for_mutual_tls() {
    let _serial = serial();
    let captured = Captured::get();
    let pki = TestPki::generate("mtls");
    let ca = pki.ca_file.to_str().unwrap();
    let client_cert = pki.client_cert_file.to_str().unwrap();
    let client_key = pki.client_key_file.to_str().unwrap();
    for proto in [Proto::Grpc, Proto::Http] {
        let port = free_port();
        let received = Received::default();
        let _receiver = tls_receiver_with(proto, port, &received, &pki, Some(&pki.ca_cert));
        let (endpoint, handle) = otlp(
            proto,
            &format!("https://127.0.0.1:{port}"),
            &[
                ("OTEL_EXPORTER_OTLP_CERTIFICATE", ca),
                ("OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE", client_cert),
                ("OTEL_EXPORTER_OTLP_CLIENT_KEY", client_key),
            ],
            Duration::from_secs(5),
        );
        handle
            .meter
            .otel()
            .u64_counter("fault.mtls")
            .build()
            .add(5, &[]);
        received
            .wait_for(Duration::from_secs(10), |r| {
                int_total(r, "fault.mtls") == Some(5)
            })
            .unwrap_or_else(|| {
                panic!("{proto:?}: no export with a client certificate to {endpoint}")
            });
        assert_eq!(handle.failed_exports(), 0);
        handle.shutdown().unwrap();

        // The same receiver refuses a client without a certificate.
        let (endpoint, handle) = otlp(
            proto,
            &format!("https://127.0.0.1:{port}"),
            &[("OTEL_EXPORTER_OTLP_CERTIFICATE", ca)],
            Duration::from_secs(2),
        );
        let before = received.count();
        handle
            .meter
            .otel()
            .u64_counter("fault.mtls")
            .build()
            .add(1, &[]);
        let (_, line) = captured
            .wait_for(&endpoint, FAILED, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{proto:?}: no warning without a client certificate"));
        eprintln!(
            "{proto:?} mutual TLS: export verified with a client certificate; without one: {line}"
        );
        // The server's refusal arrives as a TLS alert or, when the client
        // has already sent its request (TLS 1.3), as a broken connection:
        // which one depends on who reads first.
        assert!(
            line.contains("CertificateRequired")
                || line.contains("broken pipe")
                || line.contains("reset")
                || line.contains("connection closed"),
            "{line}"
        );
        assert_eq!(received.count(), before);
        let _ = handle.shutdown();
    }
}
