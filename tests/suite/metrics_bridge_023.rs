//! The bridge through `metrics` 0.23 (feature `metrics-bridge-023`) against
//! `metrics-exporter-prometheus` 0.15 (the version on `metrics` 0.23), with
//! TGI's and TEI's names: counters without `_total`, units declared, gauges
//! incremented then set.

use metrics_023::{
    counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram, Unit,
};
use metrics_exporter_prometheus_015::{Matcher as PromMatcher, PrometheusBuilder};
use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};

use crate::support::metrics_bridge::*;

/// TEI's duration buckets: 35 geometric ones from 1.5e-5.
fn duration_buckets() -> Vec<f64> {
    (0..35).map(|k| 1.5e-5 * 1.5f64.powi(k)).collect()
}

const SIZE_BUCKETS: [f64; 8] = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

fn program() {
    // TGI: units on durations and counts, a name described twice, one
    // described and never recorded.
    describe_counter!("tgi_request_count", Unit::Count, "Total number of requests");
    describe_counter!("tgi_request_success", Unit::Count, "Successful requests");
    describe_counter!("tgi_request_success", Unit::Count, "Described again");
    describe_gauge!("tgi_queue_size", Unit::Count, "Requests in the queue");
    describe_histogram!("tgi_request_duration", Unit::Seconds, "Request duration");
    describe_counter!("tgi_request_never", Unit::Count, "Never recorded");
    for (ok, seconds, queue) in [(true, 0.8, 0.01), (true, 2.4, 0.2), (false, 0.1, 0.002)] {
        counter!("tgi_request_count").increment(1);
        gauge!("tgi_queue_size").increment(1.0);
        if ok {
            counter!("tgi_request_success").increment(1);
            histogram!("tgi_request_duration").record(seconds);
            histogram!("tgi_request_queue_duration").record(queue);
        } else {
            counter!("tgi_request_failure", "err" => "validation").increment(1);
        }
    }
    gauge!("tgi_queue_size").set(1.0);
    counter!("tgi_batch_concat", "reason" => "backpressure").increment(2);
    histogram!("tgi_batch_next_size").record(4.0);
    histogram!("tgi_batch_next_size").record(17.0);

    // TEI: no describes at all.
    for method in ["embed", "embed", "rerank"] {
        counter!("te_request_count", "method" => method).increment(1);
        counter!("te_request_success", "method" => method).increment(1);
        histogram!("te_request_duration").record(0.012);
        histogram!("te_request_inference_duration").record(0.009);
        histogram!("te_request_input_length").record(24.0);
    }
    counter!("te_request_failure", "err" => "tokenizer").increment(1);
    counter!("te_embed_count").increment(2);
    gauge!("te_queue_size").increment(1.0);
    gauge!("te_queue_size").set(3.0);
    histogram!("te_batch_next_size").record(8.0);
}

#[test]
fn tgi_and_tei_families_match_metrics_exporter_prometheus_015() {
    let buckets = duration_buckets();
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(PromMatcher::Suffix("duration".into()), &buckets)
        .unwrap()
        .set_buckets_for_metric(
            PromMatcher::Full("te_request_input_length".into()),
            &SIZE_BUCKETS,
        )
        .unwrap()
        .set_buckets_for_metric(
            PromMatcher::Full("te_batch_next_size".into()),
            &SIZE_BUCKETS,
        )
        .unwrap()
        .set_buckets_for_metric(
            PromMatcher::Full("tgi_batch_next_size".into()),
            &SIZE_BUCKETS,
        )
        .unwrap()
        .build_recorder();
    let handle = recorder.handle();
    metrics_023::with_local_recorder(&recorder, program);
    let oracle = handle.render();

    let rendered = telemetry(&[]);
    let bridge = MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Suffix("duration".into()), &buckets)
        .unwrap()
        .set_buckets_for_metric(
            Matcher::Full("te_request_input_length".into()),
            &SIZE_BUCKETS,
        )
        .unwrap()
        .set_buckets_for_metric(Matcher::Full("te_batch_next_size".into()), &SIZE_BUCKETS)
        .unwrap()
        .set_buckets_for_metric(Matcher::Full("tgi_batch_next_size".into()), &SIZE_BUCKETS)
        .unwrap()
        .build(&rendered.telemetry);
    metrics_023::with_local_recorder(&bridge, program);
    let text = rendered.text();

    let compared = assert_same_families(&oracle, &text);
    assert_eq!(compared, 17, "compared {compared}: {oracle}");
    // What TGI's dashboard queries, as written.
    for line in [
        "# TYPE tgi_request_success counter\n",
        "# TYPE tgi_queue_size gauge\n",
        "tgi_queue_size 1\n",
        "# HELP tgi_request_success Successful requests\n",
        "# TYPE tgi_request_duration histogram\n",
        "te_queue_size 3\n",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    assert!(text.contains("tgi_request_duration_bucket{le=\""), "{text}");
    assert!(!text.contains("tgi_request_duration_seconds"), "{text}");
    assert!(!text.contains("tgi_queue_size_ratio"), "{text}");
    assert!(!text.contains("tgi_request_never"), "{text}");
}

/// `metrics` 0.23's keys compare labels in order, so two call sites with
/// one label set in two orders are two keys: they reach one series, which
/// a 0.24 call with the same labels reaches too, and its value is the sum.
#[test]
fn both_label_orders_and_both_versions_reach_one_series() {
    let rendered = telemetry(&[]);
    let bridge = MetricsBridge::new()
        .set_buckets(&[1.0])
        .unwrap()
        .build(&rendered.telemetry);
    metrics_023::with_local_recorder(&bridge, || {
        counter!("order_total", "a" => "1", "b" => "2").increment(1);
        counter!("order_total", "b" => "2", "a" => "1").increment(2);
        gauge!("order_gauge", "a" => "1", "b" => "2").increment(1.0);
        gauge!("order_gauge", "b" => "2", "a" => "1").increment(2.0);
        histogram!("order_seconds", "a" => "1", "b" => "2").record(0.5);
        histogram!("order_seconds", "b" => "2", "a" => "1").record(0.5);
    });
    metrics::with_local_recorder(&bridge, || {
        metrics::counter!("order_total", "b" => "2", "a" => "1").increment(4);
        metrics::gauge!("order_gauge", "b" => "2", "a" => "1").increment(4.0);
    });
    let text = rendered.text();
    let families = families(&text);
    let labels = [("a", "1"), ("b", "2")];
    assert_eq!(families["order_total"].samples.len(), 1, "{text}");
    assert_eq!(
        families["order_total"].value("order_total", &labels),
        Some(7.0),
        "{text}"
    );
    assert_eq!(families["order_gauge"].samples.len(), 1, "{text}");
    assert_eq!(
        families["order_gauge"].value("order_gauge", &labels),
        Some(7.0),
        "{text}"
    );
    assert_eq!(
        families["order_seconds"].value("order_seconds_count", &labels),
        Some(2.0),
        "{text}"
    );
}
