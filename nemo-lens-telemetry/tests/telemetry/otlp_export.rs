//! OTLP export through `setup_telemetry` against in-test receivers built on
//! the official protobuf definitions, over gRPC and HTTP/protobuf: the
//! decoded request, then a receiver that is down at start, goes down
//! mid-run and comes back, and a shutdown against a dead receiver.

use crate::support::{exclusive, Exclusive};

use std::time::{Duration, Instant};

use crate::support::otlp_receiver::*;
use nemo_lens::owned::Histogram;
use nemo_lens::telemetry::{EnvLookup, SetupOptions, TelemetryHandle};
use opentelemetry::KeyValue;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;

fn serial() -> Exclusive {
    exclusive()
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
    // The same histogram with its series in nemo-lens's own cells: it must
    // reach the receiver exactly as the SDK's does.
    let owned = handle
        .meter
        .f64_histogram("test.owned.latency")
        .with_unit("ms")
        .with_boundaries(vec![10.0, 100.0, 1000.0])
        .build();
    assert!(matches!(owned, Histogram::Owned(_)), "{owned:?}");
    let record = |value: f64| {
        latency.record(value, &[]);
        owned.record(value, &[]);
    };

    // Receiver down at start: recording must stay fast.
    let start = Instant::now();
    for _ in 0..5 {
        steps.add(1, &train);
    }
    record(50.0);
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
    assert_same_histograms(&request);
    let started = start_time(&request, "test.owned.latency");
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
    record(500.0);
    reward.record(0.75, &[]);
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(received.count(), seen, "the stopped receiver got requests");

    // Back again.
    let _receiver = Receiver::start(proto, port, &received);
    received
        .wait_for(WAIT, |r| int_total(r, "test.steps") == Some(12))
        .unwrap_or_else(|| panic!("{proto:?}: exports did not resume"));
    steps.add(3, &train);
    record(5.0);
    let begun = Instant::now();
    handle.shutdown().unwrap();
    assert!(begun.elapsed() < Duration::from_secs(5));

    let last = received.last().unwrap();
    assert_eq!(int_total(&last, "test.steps"), Some(15));
    let (count, sum, buckets, _) = histogram(metric(&last, "test.latency").unwrap());
    assert_eq!((count, sum), (3, 555.0));
    assert_eq!(buckets, vec![1, 1, 1, 0]);
    assert_eq!(double_gauge(metric(&last, "test.reward").unwrap()), 0.75);
    assert_same_histograms(&last);
    // Cumulative: the start time never moves.
    assert_eq!(start_time(&last, "test.owned.latency"), started);
}

/// The owned histogram went out as the SDK's did: same scope, unit,
/// temporality, count, sum, buckets, bounds, min and max.
fn assert_same_histograms(request: &ExportMetricsServiceRequest) {
    let (sdk, owned) = (
        metric(request, "test.latency").unwrap(),
        metric(request, "test.owned.latency").unwrap(),
    );
    assert_eq!(histogram(owned), histogram(sdk));
    assert_eq!(owned.unit, sdk.unit);
    assert_eq!(
        scope_of(request, "test.owned.latency"),
        scope_of(request, "test.latency")
    );
    let (Some(Data::Histogram(sdk)), Some(Data::Histogram(owned))) = (&sdk.data, &owned.data)
    else {
        panic!("not two histograms: {sdk:?} {owned:?}");
    };
    assert_eq!(owned.aggregation_temporality, sdk.aggregation_temporality);
    let extremes = |h: &opentelemetry_proto::tonic::metrics::v1::Histogram| {
        (h.data_points[0].min, h.data_points[0].max)
    };
    assert_eq!(extremes(owned), extremes(sdk));
}

fn start_time(request: &ExportMetricsServiceRequest, name: &str) -> u64 {
    match &metric(request, name).unwrap().data {
        Some(Data::Histogram(h)) => h.data_points[0].start_time_unix_nano,
        other => panic!("{name} is not a histogram: {other:?}"),
    }
}

/// With delta temporality an owned histogram sends what each interval
/// added, with that interval's extremes and start, as the SDK's does.
#[test]
fn owned_histograms_follow_delta_temporality() {
    let _serial = serial();
    for proto in [Proto::Grpc, Proto::Http] {
        let port = free_port();
        let received = Received::default();
        let _receiver = Receiver::start(proto, port, &received);
        let config = otlp_config(
            proto,
            &format!("http://127.0.0.1:{port}"),
            &[
                ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
                ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta"),
            ],
        );
        let handle = SetupOptions::new()
            .allow_reinit(true)
            .probe_gpus(false)
            .setup(&config, 0, 1)
            .unwrap();
        let sdk = handle
            .meter
            .otel()
            .u64_histogram("test.sdk.tokens")
            .with_boundaries(vec![10.0, 100.0])
            .build();
        let owned = handle
            .meter
            .u64_histogram("test.owned.tokens")
            .with_boundaries(vec![10.0, 100.0])
            .build();
        let model = [KeyValue::new("model", "m")];
        for value in [5, 50] {
            sdk.record(value, &model);
            owned.record(value, &model);
        }
        // Exports may split a batch of records: add up the points sent
        // since `from`.
        let sent_since = |from: usize, name: &str| {
            let mut total = (0, 0.0, vec![0; 3], None::<f64>, None::<f64>);
            for request in &received.all()[from..] {
                let Some(Data::Histogram(h)) = metric(request, name).and_then(|m| m.data.clone())
                else {
                    continue;
                };
                assert_eq!(h.aggregation_temporality, 1, "{proto:?}: delta");
                for point in h.data_points {
                    total.0 += point.count;
                    total.1 += point.sum.unwrap_or_default();
                    for (sum, count) in total.2.iter_mut().zip(&point.bucket_counts) {
                        *sum += count;
                    }
                    let pick = |held: Option<f64>, new: Option<f64>, f: fn(f64, f64) -> f64| match (
                        held, new,
                    ) {
                        (Some(a), Some(b)) => Some(f(a, b)),
                        (a, b) => a.or(b),
                    };
                    total.3 = pick(total.3, point.min, f64::min);
                    total.4 = pick(total.4, point.max, f64::max);
                }
            }
            total
        };
        let wait = |from: usize, count: u64| {
            let deadline = Instant::now() + WAIT;
            while sent_since(from, "test.owned.tokens").0 < count
                || sent_since(from, "test.sdk.tokens").0 < count
            {
                assert!(
                    Instant::now() < deadline,
                    "{proto:?}: no export of {count} records"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        wait(0, 2);
        assert_eq!(
            sent_since(0, "test.owned.tokens"),
            (2, 55.0, vec![1, 1, 0], Some(5.0), Some(50.0))
        );
        let seen = received.count();
        for value in [500, 7] {
            sdk.record(value, &model);
            owned.record(value, &model);
        }
        wait(seen, 2);
        let owned_sent = sent_since(seen, "test.owned.tokens");
        assert_eq!(
            owned_sent,
            (2, 507.0, vec![1, 0, 1], Some(7.0), Some(500.0)),
            "{proto:?}: only what the interval added"
        );
        assert_eq!(owned_sent, sent_since(seen, "test.sdk.tokens"));
        let last = received.last().unwrap();
        if let Some(Data::Histogram(h)) =
            metric(&last, "test.owned.tokens").and_then(|m| m.data.clone())
        {
            let point = &h.data_points[0];
            assert!(point.start_time_unix_nano > 0);
            assert!(point.start_time_unix_nano < point.time_unix_nano);
        }
        handle.shutdown().unwrap();
    }
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
