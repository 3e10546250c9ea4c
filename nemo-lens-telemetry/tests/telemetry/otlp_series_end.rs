//! Series that end, over OTLP to a receiver built on the official protobuf
//! definitions: an idle counter and histogram leave the export, and when
//! their attributes come back they are new series: a later start time and
//! counts from zero in cumulative, a whole first point and nothing for the
//! gap in delta. Time is a manual clock; exports are forced.

use crate::support::{exclusive, Exclusive};

use std::sync::Arc;
use std::time::Duration;

use crate::support::otlp_receiver::*;
use nemo_lens::telemetry::{EnvLookup, SetupOptions};
use nemo_lens::testing::ManualClock;
use opentelemetry::KeyValue;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};

fn serial() -> Exclusive {
    exclusive()
}

/// `(start, value)` of each point of counter `name` and `(start, count,
/// sum)` of each point of histogram `name`, for the backend `10.0.0.7`.
#[derive(Debug, Default, PartialEq)]
struct Seen {
    counter: Vec<(u64, f64)>,
    histogram: Vec<(u64, u64, f64)>,
}

fn seen(request: &ExportMetricsServiceRequest) -> Seen {
    let mut seen = Seen::default();
    let ours = |attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue]| {
        attributes.iter().any(|kv| kv.key == "server.address")
    };
    if let Some(m) = metric(request, "router.requests") {
        let Some(metric::Data::Sum(sum)) = &m.data else {
            panic!("{m:?}");
        };
        for p in sum.data_points.iter().filter(|p| ours(&p.attributes)) {
            let value = match p.value {
                Some(number_data_point::Value::AsInt(i)) => i as f64,
                Some(number_data_point::Value::AsDouble(d)) => d,
                None => f64::NAN,
            };
            seen.counter.push((p.start_time_unix_nano, value));
        }
    }
    if let Some(m) = metric(request, "router.duration") {
        let Some(metric::Data::Histogram(h)) = &m.data else {
            panic!("{m:?}");
        };
        for p in h.data_points.iter().filter(|p| ours(&p.attributes)) {
            seen.histogram
                .push((p.start_time_unix_nano, p.count, p.sum.unwrap_or(f64::NAN)));
        }
    }
    seen
}

fn comes_back_new(temporality: &str) {
    let _serial = serial();
    let port = free_port();
    let received = Received::default();
    let _receiver = Receiver::start(Proto::Http, port, &received);
    let clock = Arc::new(ManualClock::new());
    let config = otlp_config(
        Proto::Http,
        &format!("http://127.0.0.1:{port}"),
        &[
            // Exports come when forced, not meanwhile.
            ("OTEL_METRIC_EXPORT_INTERVAL", "3600000"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
                temporality,
            ),
            ("NEMO_LENS_SERIES_IDLE_TIMEOUT", "1m"),
        ],
    );
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .allow_reinit(true)
        .probe_gpus(false)
        .set_global(false)
        .series_clock(clock.clone())
        .setup(&config, 0, 1)
        .unwrap();
    let meter = &telemetry.meter;
    let requests = meter.u64_counter("router.requests").build();
    let duration = meter
        .f64_histogram("router.duration")
        .with_boundaries(vec![0.1, 1.0])
        .build();
    let backend = [KeyValue::new("server.address", "10.0.0.7:8000")];
    // What the forced export sent, if it sent anything: the receiver has
    // a request before the exporter's call returns.
    let export = || {
        let before = received.count();
        telemetry.force_flush().unwrap();
        assert_eq!(telemetry.last_export_error(), None);
        (received.count() > before).then(|| seen(&received.last().unwrap()))
    };
    requests.add(2, &backend);
    duration.record(0.5, &backend);
    let first = export().expect("the first export");
    assert_eq!(first.counter.iter().map(|p| p.1).collect::<Vec<_>>(), [2.0]);
    assert_eq!(
        first
            .histogram
            .iter()
            .map(|p| (p.1, p.2))
            .collect::<Vec<_>>(),
        [(1, 0.5)]
    );
    // Idle for two minutes: the series end, and no point says otherwise.
    clock.advance(Duration::from_secs(120));
    // Nothing else was recorded, so nothing is sent at all.
    assert_eq!(export(), None, "{temporality}: ended");
    requests.add(1, &backend);
    duration.record(0.05, &backend);
    let back = export().expect("an export");
    assert_eq!(back.counter.len(), 1, "{temporality}: {back:?}");
    assert_eq!(back.histogram.len(), 1, "{temporality}: {back:?}");
    // Counted from nothing: the old series' 2 and 0.5 are not in it, and in
    // delta the whole new point is there (not left out for a lower count).
    assert_eq!(back.counter[0].1, 1.0, "{temporality}");
    assert_eq!(
        (back.histogram[0].1, back.histogram[0].2),
        (1, 0.05),
        "{temporality}"
    );
    if temporality == "cumulative" {
        // A new start, after the old series' last point: a reset, never a
        // drop within one series.
        assert!(
            back.counter[0].0 > first.counter[0].0,
            "{back:?} after {first:?}"
        );
        assert!(
            back.histogram[0].0 > first.histogram[0].0,
            "{back:?} after {first:?}"
        );
    }
    telemetry.shutdown().unwrap();
}

#[test]
fn a_series_that_comes_back_is_new_in_cumulative() {
    comes_back_new("cumulative");
}

#[test]
fn a_series_that_comes_back_is_new_in_delta() {
    comes_back_new("delta");
}

/// Collections sweep from inside the SDK's collection while other threads
/// build instruments (which takes the SDK's pipeline lock under the
/// registry's): neither waits on the other for good.
#[test]
fn sweeps_during_collections_never_deadlock_with_new_instruments() {
    let _serial = serial();
    let port = free_port();
    let received = Received::default();
    let _receiver = Receiver::start(Proto::Http, port, &received);
    let telemetry = Arc::new(otlp_telemetry(
        Proto::Http,
        port,
        &[
            ("OTEL_METRIC_EXPORT_INTERVAL", "3600000"),
            ("NEMO_LENS_SERIES_IDLE_TIMEOUT", "1ms"),
        ],
    ));
    let (done, finished) = std::sync::mpsc::channel();
    let building = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let builder = {
        let (telemetry, building) = (Arc::clone(&telemetry), Arc::clone(&building));
        let done = done.clone();
        std::thread::spawn(move || {
            for i in 0..2_000 {
                let counter = telemetry.meter.u64_counter(format!("app.c{i}")).build();
                counter.add(1, &[KeyValue::new("n", i64::from(i))]);
            }
            building.store(false, std::sync::atomic::Ordering::Relaxed);
            let _ = done.send(());
        })
    };
    let flusher = {
        let telemetry = Arc::clone(&telemetry);
        std::thread::spawn(move || {
            // Collections for as long as instruments are being built.
            for _ in 0..20_000 {
                if !building.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                telemetry.force_flush().unwrap();
            }
            let _ = done.send(());
        })
    };
    for _ in 0..2 {
        finished
            .recv_timeout(Duration::from_secs(60))
            .expect("building and collecting at once finished (no deadlock)");
    }
    builder.join().unwrap();
    flusher.join().unwrap();
    telemetry.shutdown().unwrap();
}
