//! The scheduling set and `ScheduledRequest`: the gauges routers read stay
//! right however a request ends, and the stage timings come from the
//! instants given.

use std::time::{Duration, Instant};

use nemo_lens::instruments::serving::{FinishReason, ScheduledRequest, SchedulingMetrics};
use nemo_lens::testing::Capture;
use nemo_lens::Instruments;

const WAITING: &str = "nemo.inference.requests.waiting";
const RUNNING: &str = "nemo.inference.requests.running";
const FINISHED: &str = "nemo.inference.requests.finished";

/// The count of one of the request gauges (up-down counters): one series.
fn gauge(c: &Capture, name: &str) -> f64 {
    let series = c.attribute_sets(name);
    assert_eq!(series, [Vec::new()], "{name}: one series, no attribute");
    c.sum(name, &[]).unwrap_or_default()
}

fn finished(c: &Capture, reason: &str) -> Option<f64> {
    c.sum(FINISHED, &[("nemo.inference.finish_reason", reason)])
}

/// Whether the histogram `name` recorded exactly one value, `expected`.
fn one_value(c: &Capture, name: &str, expected: f64) -> bool {
    let sum = c.sum(name, &[]).unwrap_or(f64::NAN);
    c.count(name, &[]) == Some(1) && (sum - expected).abs() < 1e-9
}

#[test]
fn a_request_moves_through_the_gauges_and_records_its_stages() {
    let c = Capture::new();
    let t0 = Instant::now();
    let ms = |n| t0 + Duration::from_millis(n);

    let mut request = ScheduledRequest::queued_at(c.meter(), t0);
    assert_eq!(gauge(&c, WAITING), 1.0);
    request.prefix_cache(100, 60);
    request.start_at(ms(30));
    assert_eq!(gauge(&c, WAITING), 0.0);
    assert_eq!(gauge(&c, RUNNING), 1.0);
    request.first_token_at(ms(80));
    request.first_token_at(ms(90)); // the first call wins
    request.finish_at(FinishReason::Length, ms(200));

    assert_eq!(gauge(&c, WAITING), 0.0);
    assert_eq!(gauge(&c, RUNNING), 0.0);
    assert!(one_value(
        &c,
        "nemo.inference.request.queue.duration",
        0.030
    ));
    assert!(one_value(
        &c,
        "nemo.inference.request.prefill.duration",
        0.050
    ));
    assert!(one_value(
        &c,
        "nemo.inference.request.decode.duration",
        0.120
    ));
    assert_eq!(finished(&c, "length"), Some(1.0));
    assert_eq!(c.sum(FINISHED, &[]), Some(1.0));
    assert_eq!(
        c.sum("nemo.inference.prefix_cache.queries", &[]),
        Some(100.0)
    );
    assert_eq!(c.sum("nemo.inference.prefix_cache.hits", &[]), Some(60.0));
    // The finish reason goes on the finished count only.
    let reason = vec![(
        "nemo.inference.finish_reason".to_owned(),
        "length".to_owned(),
    )];
    assert_eq!(c.attribute_sets(FINISHED), [reason]);
    for name in [
        "nemo.inference.request.queue.duration",
        "nemo.inference.request.decode.duration",
        "nemo.inference.prefix_cache.hits",
    ] {
        assert_eq!(c.attribute_sets(name), [Vec::new()], "{name}");
    }
}

#[test]
fn dropped_cancelled_or_panicking_requests_leave_the_gauges() {
    let c = Capture::new();
    // Cancelled while queued: its task dropped.
    drop(ScheduledRequest::queued(c.meter()));
    // Cancelled while running.
    let mut running = ScheduledRequest::queued(c.meter());
    running.start();
    running.first_token();
    drop(running);
    // A panic in the engine while the request runs.
    let meter = c.meter().clone();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut request = ScheduledRequest::queued(&meter);
        request.start();
        panic!("engine bug");
    }));
    assert!(panicked.is_err());
    // Overload: a thousand requests queued, most dropped before running.
    let queue: Vec<ScheduledRequest> = (0..1000)
        .map(|_| ScheduledRequest::queued(c.meter()))
        .collect();
    assert_eq!(gauge(&c, WAITING), 1000.0);
    for (i, mut request) in queue.into_iter().enumerate() {
        if i % 10 == 0 {
            request.start();
            request.finish(FinishReason::Stop);
        }
    }

    assert_eq!(gauge(&c, WAITING), 0.0);
    assert_eq!(gauge(&c, RUNNING), 0.0);
    assert_eq!(finished(&c, "abort"), Some(2.0 + 900.0));
    assert_eq!(finished(&c, "error"), Some(1.0));
    assert_eq!(finished(&c, "stop"), Some(100.0));
    assert_eq!(c.sum(FINISHED, &[]), Some(1003.0));
    // Only the generations that finished with a first token have a decode
    // time; none of these noted one.
    assert_eq!(c.count("nemo.inference.request.decode.duration", &[]), None);
}

#[test]
fn the_kv_cache_gauges_and_prometheus_names() {
    let c = Capture::new();
    SchedulingMetrics::default()
        .kv_cache_usage(0.25)
        .kv_cache_block_size(16)
        .kv_cache_blocks(1024)
        .record(c.meter());
    let gauge = |name| c.last_value(name, &[]);
    assert_eq!(gauge("nemo.inference.kv_cache.usage"), Some(0.25));
    assert_eq!(gauge("nemo.inference.kv_cache.block_size"), Some(16.0));
    assert_eq!(gauge("nemo.inference.kv_cache.blocks"), Some(1024.0));
    let names = |field: &str| {
        SchedulingMetrics::DESCRIPTORS
            .iter()
            .find(|d| d.field == field)
            .unwrap()
            .prometheus_names()
    };
    // The names and types the endpoint picker is pointed at.
    for (field, family, kind) in [
        (
            "requests_waiting",
            "nemo_inference_requests_waiting",
            "gauge",
        ),
        (
            "requests_running",
            "nemo_inference_requests_running",
            "gauge",
        ),
        (
            "kv_cache_usage",
            "nemo_inference_kv_cache_usage_ratio",
            "gauge",
        ),
        (
            "kv_cache_block_size",
            "nemo_inference_kv_cache_block_size",
            "gauge",
        ),
        ("kv_cache_blocks", "nemo_inference_kv_cache_blocks", "gauge"),
        (
            "finished",
            "nemo_inference_requests_finished_total",
            "counter",
        ),
    ] {
        let names = names(field);
        assert_eq!(names.family, family, "{field}");
        assert_eq!(names.metric_type, kind, "{field}");
    }
}
