//! The scheduling set and `ScheduledRequest`: the gauges routers read stay
//! right however a request ends, and the stage timings come from the
//! instants given.

mod support;

use std::time::{Duration, Instant};

use nemo_lens::instruments::serving::{FinishReason, ScheduledRequest, SchedulingMetrics};
use nemo_lens::Instruments;
use support::{AttrValue, Harness, Value};

fn gauge(harness: &Harness, name: &str) -> f64 {
    let points = harness.points_of(name);
    assert_eq!(points.len(), 1, "{name}: {points:#?}");
    points[0].number()
}

fn finished(harness: &Harness, reason: &str) -> f64 {
    harness
        .points_of("nemo.inference.requests.finished")
        .iter()
        .find(|p| {
            p.attr("nemo.inference.finish_reason") == Some(&AttrValue::from(reason.to_owned()))
        })
        .map_or(0.0, |p| p.number())
}

fn histogram_sum(harness: &Harness, name: &str) -> (u64, f64) {
    let points = harness.points_of(name);
    assert_eq!(points.len(), 1, "{name}: {points:#?}");
    match points[0].value {
        Value::Histogram { count, sum, .. } => (count, sum),
        Value::Number(_) => panic!("{name} is not a histogram"),
    }
}

#[test]
fn a_request_moves_through_the_gauges_and_records_its_stages() {
    let harness = Harness::new();
    let t0 = Instant::now();
    let ms = |n| t0 + Duration::from_millis(n);

    let mut request = ScheduledRequest::queued_at(&harness.meter, t0);
    assert_eq!(gauge(&harness, "nemo.inference.requests.waiting"), 1.0);
    request.prefix_cache(100, 60);
    request.start_at(ms(30));
    assert_eq!(gauge(&harness, "nemo.inference.requests.waiting"), 0.0);
    assert_eq!(gauge(&harness, "nemo.inference.requests.running"), 1.0);
    request.first_token_at(ms(80));
    request.first_token_at(ms(90)); // the first call wins
    request.finish_at(FinishReason::Length, ms(200));

    assert_eq!(gauge(&harness, "nemo.inference.requests.waiting"), 0.0);
    assert_eq!(gauge(&harness, "nemo.inference.requests.running"), 0.0);
    let close =
        |(count, sum): (u64, f64), expected: f64| count == 1 && (sum - expected).abs() < 1e-9;
    assert!(close(
        histogram_sum(&harness, "nemo.inference.request.queue.duration"),
        0.030
    ));
    assert!(close(
        histogram_sum(&harness, "nemo.inference.request.prefill.duration"),
        0.050
    ));
    assert!(close(
        histogram_sum(&harness, "nemo.inference.request.decode.duration"),
        0.120
    ));
    assert_eq!(finished(&harness, "length"), 1.0);
    assert_eq!(
        gauge(&harness, "nemo.inference.prefix_cache.queries"),
        100.0
    );
    assert_eq!(gauge(&harness, "nemo.inference.prefix_cache.hits"), 60.0);
    // The finish reason goes on the finished count only.
    for point in harness.points() {
        let expected = point.name == "nemo.inference.requests.finished";
        assert_eq!(
            point.attr("nemo.inference.finish_reason").is_some(),
            expected,
            "{}",
            point.name
        );
    }
}

#[test]
fn dropped_cancelled_or_panicking_requests_leave_the_gauges() {
    let harness = Harness::new();
    // Cancelled while queued: its task dropped.
    drop(ScheduledRequest::queued(&harness.meter));
    // Cancelled while running.
    let mut running = ScheduledRequest::queued(&harness.meter);
    running.start();
    running.first_token();
    drop(running);
    // A panic in the engine while the request runs.
    let meter = harness.meter.clone();
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let mut request = ScheduledRequest::queued(&meter);
        request.start();
        panic!("engine bug");
    }));
    assert!(panicked.is_err());
    // Overload: a thousand requests queued, most dropped before running.
    let queue: Vec<ScheduledRequest> = (0..1000)
        .map(|_| ScheduledRequest::queued(&harness.meter))
        .collect();
    assert_eq!(gauge(&harness, "nemo.inference.requests.waiting"), 1000.0);
    for (i, mut request) in queue.into_iter().enumerate() {
        if i % 10 == 0 {
            request.start();
            request.finish(FinishReason::Stop);
        }
    }

    assert_eq!(gauge(&harness, "nemo.inference.requests.waiting"), 0.0);
    assert_eq!(gauge(&harness, "nemo.inference.requests.running"), 0.0);
    assert_eq!(finished(&harness, "abort"), 2.0 + 900.0);
    assert_eq!(finished(&harness, "error"), 1.0);
    assert_eq!(finished(&harness, "stop"), 100.0);
    // Only the generations that finished with a first token have a decode
    // time; none of these noted one.
    assert!(harness
        .points_of("nemo.inference.request.decode.duration")
        .is_empty());
}

#[test]
fn the_kv_cache_gauges_and_prometheus_names() {
    let harness = Harness::new();
    SchedulingMetrics::default()
        .kv_cache_usage(0.25)
        .kv_cache_block_size(16)
        .kv_cache_blocks(1024)
        .record(&harness.meter);
    assert_eq!(gauge(&harness, "nemo.inference.kv_cache.usage"), 0.25);
    assert_eq!(gauge(&harness, "nemo.inference.kv_cache.blocks"), 1024.0);
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
