//! The request path allocates nothing: once a series is registered, each
//! `counter!`/`gauge!`/`histogram!` call with static labels (a look-up and
//! an update) makes no heap allocation, through `metrics` 0.24 or 0.23, for
//! a summarised histogram, and for a name that is not exported (used as a
//! second kind).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use metrics::{counter, gauge, histogram};
use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};

mod metrics_bridge_support;
use metrics_bridge_support::telemetry;

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, which is `System`'s.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    COUNTING.store(true, Ordering::SeqCst);
    for _ in 0..1_000 {
        all_calls(&recorder);
    }
    COUNTING.store(false, Ordering::SeqCst);
    assert_eq!(ALLOCATIONS.load(Ordering::SeqCst), 0);
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
