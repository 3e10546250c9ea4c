//! Per macro call: the metrics bridge against `metrics-exporter-prometheus`
//! 0.18 (the recorder it replaces), on one thread and on two threads
//! recording the same series. Each call is the whole macro: the
//! registration look-up `counter!` makes on every call, then the update.
//!
//! Cases (smg's shapes): a counter with two static labels, a gauge
//! increment, a histogram with a bucket matcher. Each figure is the median
//! of seven rounds; a round times `OPS` calls per thread. The exporter's
//! histograms are drained between rounds (its upkeep), so memory stays
//! bounded; the bridge's reader never collects during a round.

use std::hint::black_box;
use std::time::Instant;

use metrics::{counter, gauge, histogram, Recorder};
use metrics_exporter_prometheus::{Matcher as PromMatcher, PrometheusBuilder};
use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};

mod support;

const OPS: u64 = 2_000_000;
const ROUNDS: usize = 7;
const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
const VALUES: [f64; 8] = [0.0004, 0.003, 0.02, 0.07, 0.3, 0.8, 2.0, 7.0];

fn counter_call(_: u64) {
    counter!("smg_http_requests_total", "method" => "POST", "path" => "/v1/chat/completions")
        .increment(1);
}

fn gauge_call(_: u64) {
    gauge!("smg_admission_inflight").increment(1.0);
}

fn histogram_call(i: u64) {
    histogram!("smg_http_request_duration_seconds", "method" => "POST", "path" => "/v1/chat/completions")
        .record(VALUES[(i & 7) as usize]);
}

/// Nanoseconds per call on each of `threads` threads recording through
/// `recorder` at once.
fn per_call<R: Recorder + Sync>(recorder: &R, threads: usize, call: fn(u64)) -> f64 {
    let start = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                metrics::with_local_recorder(recorder, || {
                    for i in 0..OPS {
                        call(black_box(i));
                    }
                })
            });
        }
    });
    start.elapsed().as_nanos() as f64 / OPS as f64
}

fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let telemetry = support::serving_telemetry();
    let bridge = MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Suffix("duration_seconds".into()), &BUCKETS)
        .expect("buckets")
        .build(&telemetry);
    let exporter = PrometheusBuilder::new()
        .set_buckets_for_metric(PromMatcher::Suffix("duration_seconds".into()), &BUCKETS)
        .expect("buckets")
        .build_recorder();
    let handle = exporter.handle();

    println!("| case | threads | metrics-exporter-prometheus | bridge | bridge / exporter |");
    println!("|---|---|---|---|---|");
    for (name, call) in [
        ("counter, two static labels", counter_call as fn(u64)),
        ("gauge increment", gauge_call),
        ("histogram record (matched buckets)", histogram_call),
    ] {
        for threads in [1, 2] {
            let mut theirs = Vec::new();
            let mut ours = Vec::new();
            // Alternating, so drift on a shared machine hits both alike.
            for _ in 0..ROUNDS {
                theirs.push(per_call(&exporter, threads, call));
                handle.run_upkeep();
                ours.push(per_call(&bridge, threads, call));
            }
            let (theirs, ours) = (median(theirs), median(ours));
            println!(
                "| {name} | {threads} | {theirs:.1} ns | {ours:.1} ns | {:.2}x |",
                ours / theirs
            );
        }
    }
}
