//! OTLP export against receivers that are down, killed, hanging or
//! rejecting: each failure must be reported while it happens.

use std::time::{Duration, Instant};

use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupOptions, TelemetryHandle};

use crate::capture::Captured;
use crate::serial;
use crate::support::otlp_receiver::{free_port, int_total, Proto, Received, Receiver};

pub(crate) const FAILED: &str = "metrics export failed";
pub(crate) const RECOVERED: &str = "metrics export recovered";

/// `(endpoint as reported, setup)` of an OTLP pipeline exporting every
/// 200 ms with a 1 s export timeout.
pub(crate) fn otlp(
    proto: Proto,
    scheme_host_port: &str,
    extra: &[(&str, &str)],
    shutdown: Duration,
) -> (String, TelemetryHandle) {
    let (protocol, endpoint) = match proto {
        Proto::Grpc => ("grpc", scheme_host_port.to_owned()),
        Proto::Http => ("http/protobuf", format!("{scheme_host_port}/v1/metrics")),
    };
    let mut pairs = vec![
        ("NEMO_LENS_ENABLED", "true"),
        ("NEMO_LENS_EXPORTER", "otlp"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", scheme_host_port),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
        ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
        ("OTEL_METRIC_EXPORT_TIMEOUT", "1000"),
    ];
    pairs.extend_from_slice(extra);
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs(pairs)).unwrap();
    let handle = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .allow_reinit(true)
        .probe_gpus(false)
        .set_global(false)
        .shutdown_timeout(shutdown)
        .setup(&config, 0, 1)
        .unwrap();
    (endpoint, handle)
}

/// The receiver dies mid-run: a warning naming the endpoint appears within
/// seconds, failures are counted, and the recovery is logged once.
fn killed_receiver(proto: Proto) {
    let captured = Captured::get();
    let port = free_port();
    let received = Received::default();
    let mut receiver = Receiver::start(proto, port, &received);
    let (endpoint, handle) = otlp(
        proto,
        &format!("http://127.0.0.1:{port}"),
        &[],
        Duration::from_secs(5),
    );
    let steps = handle.meter.otel().u64_counter("fault.steps").build();
    steps.add(3, &[]);
    received
        .wait_for(Duration::from_secs(10), |r| {
            int_total(r, "fault.steps") == Some(3)
        })
        .expect("a first export");
    assert_eq!(handle.failed_exports(), 0);

    receiver.stop();
    let killed = Instant::now();
    steps.add(4, &[]);
    let (warned, line) = captured
        .wait_for(&endpoint, FAILED, Duration::from_secs(10))
        .unwrap_or_else(|| panic!("{proto:?}: no warning within 10 s of the receiver dying"));
    let latency = warned.duration_since(killed);
    assert!(line.contains("WARN") && line.contains("error="), "{line}");

    // An outage of ~3 s at 5 exports a second: many failures, one warning.
    std::thread::sleep(Duration::from_secs(3));
    let failed = handle.failed_exports();
    let warnings = captured.lines(&endpoint, FAILED).len();
    let receiver = Receiver::start(proto, port, &received);
    let back = Instant::now();
    received
        .wait_for(Duration::from_secs(10), |r| {
            int_total(r, "fault.steps") == Some(7)
        })
        .unwrap_or_else(|| panic!("{proto:?}: exports did not resume with the exact total"));
    let (recovered, _) = captured
        .wait_for(&endpoint, RECOVERED, Duration::from_secs(5))
        .expect("a recovery line");
    std::thread::sleep(Duration::from_millis(600));
    let after = handle.failed_exports();
    eprintln!(
        "{proto:?} receiver killed: first warning {latency:?} after the kill; {failed} failed \
         exports in {:?} of outage, {warnings} warning line(s); recovery logged {:?} after \
         restart; failures after recovery: {}",
        back.duration_since(killed),
        recovered.saturating_duration_since(back),
        after - failed.min(after),
    );
    assert!(
        latency < Duration::from_secs(3),
        "{proto:?}: warning after {latency:?}"
    );
    assert!(failed >= 3, "{proto:?}: only {failed} failures counted");
    assert_eq!(warnings, 1, "{proto:?}: rate limit");
    assert_eq!(captured.lines(&endpoint, RECOVERED).len(), 1);
    // Exports succeed again: the count stops (the export in flight at
    // restart may still fail).
    assert!(after <= failed + 1, "{proto:?}: {failed} -> {after}");
    handle.shutdown().unwrap();
    drop(receiver);
}

#[test]
fn grpc_receiver_killed_mid_run_is_reported_within_seconds() {
    let _serial = serial();
    killed_receiver(Proto::Grpc);
}

#[test]
fn http_receiver_killed_mid_run_is_reported_within_seconds() {
    let _serial = serial();
    killed_receiver(Proto::Http);
}

#[test]
fn down_hanging_and_rejecting_receivers_are_reported_with_the_cause() {
    let _serial = serial();
    let captured = Captured::get();
    for proto in [Proto::Grpc, Proto::Http] {
        // Down from the start: nothing listens.
        let port = free_port();
        let (endpoint, handle) = otlp(
            proto,
            &format!("http://127.0.0.1:{port}"),
            &[],
            Duration::from_secs(2),
        );
        handle
            .meter
            .otel()
            .u64_counter("fault.down")
            .build()
            .add(1, &[]);
        let begun = Instant::now();
        let (at, line) = captured
            .wait_for(&endpoint, FAILED, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{proto:?}: no warning for a receiver that is down"));
        eprintln!(
            "{proto:?} receiver down: warned after {:?}: {line}",
            at.duration_since(begun)
        );
        assert!(at.duration_since(begun) < Duration::from_secs(3));
        // The shutdown error says what failed and where.
        let err = handle.shutdown().unwrap_err();
        eprintln!("{proto:?} receiver down: shutdown error: {err}");
        let message = err.to_string();
        assert!(message.contains(&endpoint), "{message}");
        assert!(handle.failed_exports() >= 1);

        // Hanging: accepts connections and never answers.
        let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = hole.local_addr().unwrap().port();
        let (endpoint, handle) = otlp(
            proto,
            &format!("http://127.0.0.1:{port}"),
            &[],
            Duration::from_millis(1500),
        );
        let counter = handle.meter.otel().u64_counter("fault.hang").build();
        let begun = Instant::now();
        for _ in 0..100_000 {
            counter.add(1, &[]);
        }
        let recording = begun.elapsed();
        let (at, line) = captured
            .wait_for(&endpoint, FAILED, Duration::from_secs(15))
            .unwrap_or_else(|| panic!("{proto:?}: no warning for a hanging receiver"));
        let shutdown_begun = Instant::now();
        let shutdown_error = handle.shutdown().unwrap_err().to_string();
        let shutdown = shutdown_begun.elapsed();
        eprintln!("{proto:?} receiver hanging: shutdown error: {shutdown_error}");
        assert!(shutdown_error.contains(&endpoint), "{shutdown_error}");
        eprintln!(
            "{proto:?} receiver hanging: 100000 records took {recording:?}; warned after {:?}; \
             shutdown took {shutdown:?} (timeout 1.5 s): {line}",
            at.duration_since(begun)
        );
        assert!(recording < Duration::from_secs(1));
        // 1 s timeout per attempt, 3 attempts with short backoff.
        assert!(at.duration_since(begun) < Duration::from_secs(8));
        assert!(
            // One deadline for every step (it used to be the timeout plus ~1 s).
            shutdown < Duration::from_millis(1900),
            "shutdown took {shutdown:?}"
        );
        drop(hole);

        // Rejecting: the receiver answers with an error status.
        let port = free_port();
        let received = Received::default();
        received.reject_with(Some(401));
        let _receiver = Receiver::start(proto, port, &received);
        let (endpoint, handle) = otlp(
            proto,
            &format!("http://127.0.0.1:{port}"),
            &[],
            Duration::from_secs(2),
        );
        handle
            .meter
            .otel()
            .u64_counter("fault.rejected")
            .build()
            .add(1, &[]);
        let (_, line) = captured
            .wait_for(&endpoint, FAILED, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{proto:?}: no warning for a rejecting receiver"));
        eprintln!("{proto:?} receiver rejecting: {line}");
        let cause = match proto {
            Proto::Grpc => "Unauthenticated",
            Proto::Http => "401",
        };
        assert!(line.contains(cause), "{line}");
        assert_eq!(received.count(), 0);
        let _ = handle.shutdown();
    }
}
