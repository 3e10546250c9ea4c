//! The request path allocates nothing: once a series is registered, each
//! `counter!`/`gauge!`/`histogram!` call with static labels (a look-up and
//! an update) makes no heap allocation, through `metrics` 0.24 or 0.23, for
//! a summarised histogram, and for a name that is not exported (used as a
//! second kind). Counted on the recording thread alone: the test harness's
//! own threads allocate when they will.

use metrics::{counter, gauge, histogram};
use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};

use crate::support::alloc;
use crate::support::metrics_bridge::telemetry;

fn calls() {
    counter!("smg_http_requests_total", "method" => "POST", "path" => "/v1/chat").increment(1);
    gauge!("smg_admission_inflight").increment(1.0);
    histogram!("smg_http_request_duration_seconds", "method" => "POST").record(0.3);
    histogram!("smg_worker_retry_backoff_seconds").record(0.2);
    histogram!("smg_worker_queue_seconds", "worker" => "w0").record(0.2);
    // Already a counter: not exported, and still no allocation.
    gauge!("smg_http_requests_total", "method" => "POST").set(1.0);
    histogram!("smg_http_requests_total").record(1.0);
}

#[cfg(feature = "metrics-bridge-023")]
fn calls_023() {
    metrics_023::counter!("tgi_request_count", "method" => "POST", "path" => "/generate")
        .increment(1);
    metrics_023::gauge!("tgi_queue_size").increment(1.0);
    metrics_023::histogram!("tgi_request_duration").record(0.3);
    metrics_023::gauge!("tgi_request_count").set(1.0);
}

#[cfg(not(feature = "metrics-bridge-023"))]
fn calls_023() {}

fn all_calls(recorder: &nemo_lens::metrics_bridge::BridgeRecorder) {
    metrics::with_local_recorder(recorder, calls);
    #[cfg(feature = "metrics-bridge-023")]
    metrics_023::with_local_recorder(recorder, calls_023);
    #[cfg(not(feature = "metrics-bridge-023"))]
    calls_023();
}

#[test]
fn recording_through_registered_series_allocates_nothing() {
    let rendered = telemetry(&[]);
    let recorder = MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Suffix("duration_seconds".into()), &[0.1, 1.0])
        .unwrap()
        .set_buckets_for_metric(Matcher::Full("tgi_request_duration".into()), &[0.1, 1.0])
        .unwrap()
        .set_summary_for_metric(Matcher::Full("smg_worker_queue_seconds".into()))
        .build(&rendered.telemetry);
    // The first calls register (and allocate).
    all_calls(&recorder);
    let ((), allocations) = alloc::allocations_in(|| {
        for _ in 0..1_000 {
            all_calls(&recorder);
        }
    });
    assert_eq!(allocations, 0);
    let text = rendered.text();
    assert!(
        text.contains("smg_http_requests_total{method=\"POST\",path=\"/v1/chat\"} 1001\n"),
        "{text}"
    );
    assert!(
        text.contains("smg_worker_queue_seconds_count{worker=\"w0\"} 1001\n"),
        "{text}"
    );
    if cfg!(feature = "metrics-bridge-023") {
        assert!(
            text.contains("tgi_request_count{method=\"POST\",path=\"/generate\"} 1001\n"),
            "{text}"
        );
    }
}
