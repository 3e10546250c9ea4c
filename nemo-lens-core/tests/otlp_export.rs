//! OTLP export through `setup_telemetry` against in-test receivers built on
//! the official protobuf definitions, over gRPC and HTTP/protobuf: the
//! decoded request, then a receiver that is down at start, goes down
//! mid-run and comes back, and a shutdown against a dead receiver.

mod support;

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use nemo_lens_core::telemetry::{EnvLookup, SetupOptions, TelemetryHandle};
use opentelemetry::KeyValue;
use support::otlp_receiver::*;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const WAIT: Duration = Duration::from_secs(20);

fn setup(proto: Proto, port: u16, shutdown_timeout: Duration) -> TelemetryHandle {
    let config = otlp_config(
        proto,
        &format!("http://127.0.0.1:{port}"),
        &[
            ("NEMO_LENS_RUN_ID", "otlp-run"),
            ("OTEL_SERVICE_NAME", "rust_peer"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-team=rl"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
            ("OTEL_METRIC_EXPORT_TIMEOUT", "1000"),
        ],
    );
    SetupOptions::new()
        .env(EnvLookup::from_pairs([("SLURM_JOB_NAME", "grpo")]))
        .allow_reinit(true)
        .probe_gpus(false)
        .shutdown_timeout(shutdown_timeout)
        .setup(&config, 1, 2)
        .unwrap()
}

/// Records, with the receiver down at start, then up, then down and back,
/// and checks the decoded request and the exact final cumulative totals.
fn restart_scenario(proto: Proto) {
    let port = free_port();
    let received = Received::default();
    let handle = setup(proto, port, Duration::from_secs(5));
    assert!(handle.is_exporting);
    let meter = handle.meter.otel();
    let steps = meter
        .u64_counter("test.steps")
        .with_unit("{step}")
        .with_description("Training steps.")
        .build();
    let latency = meter
        .f64_histogram("test.latency")
        .with_unit("ms")
        .with_boundaries(vec![10.0, 100.0, 1000.0])
        .build();
    let reward = meter.f64_gauge("test.reward").build();
    let train = [KeyValue::new("phase", "train")];

    // Receiver down at start: recording must stay fast.
    let start = Instant::now();
    for _ in 0..5 {
        steps.add(1, &train);
    }
    latency.record(50.0, &[]);
    reward.record(0.5, &[]);
    for _ in 0..10_000 {
        steps.add(0, &train);
    }
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "recording took {:?} with the receiver down",
        start.elapsed()
    );
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(received.count(), 0);

    let mut receiver = Receiver::start(proto, port, &received);
    let request = received
        .wait_for(WAIT, |r| int_total(r, "test.steps") == Some(5))
        .unwrap_or_else(|| panic!("{proto:?}: no export of 5 steps after the receiver came up"));

    // OTEL_EXPORTER_OTLP_HEADERS reaches the receiver.
    assert_eq!(received.team_header().as_deref(), Some("rl"));
    let steps_metric = metric(&request, "test.steps").unwrap();
    assert_eq!(steps_metric.unit, "{step}");
    assert_eq!(steps_metric.description, "Training steps.");
    assert_eq!(
        int_sum_points(steps_metric),
        vec![(vec![("phase".to_owned(), "train".to_owned())], 5)]
    );
    let (count, sum, buckets, bounds) = histogram(metric(&request, "test.latency").unwrap());
    assert_eq!((count, sum), (1, 50.0));
    assert_eq!(buckets, vec![0, 1, 0, 0]);
    assert_eq!(bounds, vec![10.0, 100.0, 1000.0]);
    assert_eq!(metric(&request, "test.latency").unwrap().unit, "ms");
    assert_eq!(double_gauge(metric(&request, "test.reward").unwrap()), 0.5);
    assert_eq!(
        scope_of(&request, "test.steps").as_deref(),
        Some("nemo.lens")
    );
    for (key, value) in [
        ("service.name", "rust_peer"),
        ("nemo.run.id", "otlp-run"),
        ("service.instance.id", "otlp-run-rank1"),
        ("dl.rank", "1"),
        ("dl.world_size", "2"),
        ("slurm.job.name", "grpo"),
        ("telemetry.sdk.language", "rust"),
    ] {
        assert_eq!(
            resource_attr(&request, key).as_deref(),
            Some(value),
            "{key}"
        );
    }

    // Down mid-run.
    receiver.stop();
    let seen = received.count();
    for _ in 0..7 {
        steps.add(1, &train);
    }
    latency.record(500.0, &[]);
    reward.record(0.75, &[]);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(received.count(), seen, "the stopped receiver got requests");

    // Back again.
    let _receiver = Receiver::start(proto, port, &received);
    received
        .wait_for(WAIT, |r| int_total(r, "test.steps") == Some(12))
        .unwrap_or_else(|| panic!("{proto:?}: exports did not resume"));
    steps.add(3, &train);
    latency.record(5.0, &[]);
    let begun = Instant::now();
    handle.shutdown().unwrap();
    assert!(begun.elapsed() < Duration::from_secs(5));

    let last = received.last().unwrap();
    assert_eq!(int_total(&last, "test.steps"), Some(15));
    let (count, sum, buckets, _) = histogram(metric(&last, "test.latency").unwrap());
    assert_eq!((count, sum), (3, 555.0));
    assert_eq!(buckets, vec![1, 1, 1, 0]);
    assert_eq!(double_gauge(metric(&last, "test.reward").unwrap()), 0.75);
}

#[test]
fn grpc_export_survives_receiver_outages_with_exact_totals() {
    let _serial = serial();
    restart_scenario(Proto::Grpc);
}

#[test]
fn http_export_survives_receiver_outages_with_exact_totals() {
    let _serial = serial();
    restart_scenario(Proto::Http);
}

/// A receiver that accepts connections and never answers.
fn black_hole() -> (std::net::TcpListener, u16) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// Records one value, then asserts `shutdown` returns within the bound.
fn assert_bounded_shutdown(proto: Proto, port: u16, receiver: &str) {
    let handle = setup(proto, port, Duration::from_millis(1500));
    handle
        .meter
        .otel()
        .u64_counter("test.lost")
        .build()
        .add(1, &[]);
    let begun = Instant::now();
    let _ = handle.shutdown();
    let took = begun.elapsed();
    assert!(
        took < Duration::from_millis(2500),
        "{proto:?} against a {receiver} receiver: shutdown took {took:?}"
    );
}

#[test]
fn shutdown_against_a_dead_receiver_is_bounded() {
    let _serial = serial();
    for proto in [Proto::Grpc, Proto::Http] {
        let (_hole, port) = black_hole();
        assert_bounded_shutdown(proto, port, "black-hole");
        assert_bounded_shutdown(proto, free_port(), "refusing");
    }
}

/// Setup, recording and shutdown all inside the user's current-thread
/// runtime, where a blocking call on the runtime's only thread would
/// deadlock if the exporter depended on that runtime.
#[test]
fn works_inside_a_current_thread_tokio_runtime() {
    let _serial = serial();
    for proto in [Proto::Grpc, Proto::Http] {
        let port = free_port();
        let received = Received::default();
        let _receiver = Receiver::start(proto, port, &received);
        let user_runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        user_runtime.block_on(async {
            let handle = setup(proto, port, Duration::from_secs(5));
            handle
                .meter
                .otel()
                .u64_counter("test.async")
                .build()
                .add(4, &[]);
            tokio::time::sleep(Duration::from_millis(50)).await;
            handle.shutdown().unwrap();
            // Dropping the handle inside the runtime must not panic either.
            drop(handle);
        });
        let last = received.last().expect("an export from inside the runtime");
        assert_eq!(int_total(&last, "test.async"), Some(4), "{proto:?}");
    }
}
