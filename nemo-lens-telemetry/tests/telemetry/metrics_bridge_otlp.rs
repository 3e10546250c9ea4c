//! The `metrics` facade bridge over OTLP: every bridged series reaches a
//! receiver built on the official protobuf definitions, under a name the
//! SDK accepts (a `:` name is not silently dropped), with its description,
//! its unit in UCUM, counters as monotonic cumulative sums, gauges as
//! gauges, matched histograms with exactly their buckets and the others as
//! exponential histograms.

use crate::support::exclusive;

use std::time::Duration;

use crate::support::otlp_receiver::*;
use metrics::{counter, describe_counter, describe_histogram, gauge, histogram, Unit};
use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point, Metric};

const BUCKETS: [f64; 4] = [0.1, 0.5, 1.0, 5.0];

fn attributes(attributes: &[KeyValue]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = attributes
        .iter()
        .map(|kv| {
            let value = kv
                .value
                .as_ref()
                .and_then(|v| v.value.as_ref())
                .map(any_string)
                .unwrap_or_default();
            (kv.key.clone(), value)
        })
        .collect();
    pairs.sort();
    pairs
}

fn number(point: &opentelemetry_proto::tonic::metrics::v1::NumberDataPoint) -> f64 {
    match point.value {
        Some(number_data_point::Value::AsInt(i)) => i as f64,
        Some(number_data_point::Value::AsDouble(d)) => d,
        None => f64::NAN,
    }
}

fn complete(request: &ExportMetricsServiceRequest) -> bool {
    [
        "smg_router_requests_total",
        "smg.requests.by_model",
        "smg_worker_health",
        "tgi_request_duration",
        "smg_worker_retry_backoff_seconds",
    ]
    .iter()
    .all(|name| metric(request, name).is_some())
}

fn sampled_span() -> nemo_lens::exemplar::SpanIds {
    nemo_lens::exemplar::SpanIds::new(
        nemo_lens::opentelemetry::trace::TraceId::from(0x0af7_6519_16cd_43dd_8448_eb21_1c80_319c),
        nemo_lens::opentelemetry::trace::SpanId::from(0xb7ad_6b71_6920_3331),
    )
}

fn exported(proto: Proto) {
    let _serial = exclusive();
    let port = free_port();
    let received = Received::default();
    let _receiver = Receiver::start(proto, port, &received);
    let telemetry = otlp_telemetry(proto, port, &[("OTEL_METRIC_EXPORT_INTERVAL", "200")]);
    let recorder = MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Suffix("duration".into()), &BUCKETS)
        .unwrap()
        .add_global_label("gateway", "smg-0")
        .build(&telemetry);
    metrics::with_local_recorder(&recorder, || {
        describe_counter!("smg_router_requests_total", "Router requests");
        describe_histogram!("tgi_request_duration", Unit::Seconds, "Request duration");
        counter!("smg_router_requests_total", "model" => "llama", "streaming" => "true")
            .increment(3);
        counter!("smg:requests:by_model", "model" => "llama").absolute(7);
        gauge!("smg_worker_health", "worker" => "http://10.0.0.1:8000").set(1.0);
        for value in [0.05, 0.3, 0.3] {
            histogram!("tgi_request_duration").record(value);
        }
        // In a sampled span: a call site that knows nothing of exemplars
        // leaves one.
        nemo_lens::exemplar::in_span(Some(sampled_span()), || {
            histogram!("tgi_request_duration").record(2.0)
        });
        histogram!("smg_worker_retry_backoff_seconds", "attempt" => "2").record(0.2);
    });
    telemetry.shutdown().unwrap();

    let request = received
        .wait_for(Duration::from_secs(20), complete)
        .unwrap_or_else(|| panic!("{proto:?}: not every bridged metric arrived"));
    let scope = scope_of(&request, "smg_router_requests_total");
    assert_eq!(scope.as_deref(), Some("nemo_lens.metrics_bridge"));

    let requests: &Metric = metric(&request, "smg_router_requests_total").unwrap();
    assert_eq!(requests.description, "Router requests");
    let Some(metric::Data::Sum(sum)) = &requests.data else {
        panic!("{requests:?}");
    };
    assert!(sum.is_monotonic);
    // Cumulative.
    assert_eq!(sum.aggregation_temporality, 2);
    assert_eq!(sum.data_points.len(), 1);
    assert_eq!(number(&sum.data_points[0]), 3.0);
    assert_eq!(
        attributes(&sum.data_points[0].attributes),
        [
            ("gateway".to_owned(), "smg-0".to_owned()),
            ("model".to_owned(), "llama".to_owned()),
            ("streaming".to_owned(), "true".to_owned()),
        ]
    );

    // `:` is no valid instrument name: `.` instead, never a silent no-op.
    let by_model = metric(&request, "smg.requests.by_model").unwrap();
    let Some(metric::Data::Sum(sum)) = &by_model.data else {
        panic!("{by_model:?}");
    };
    assert_eq!(number(&sum.data_points[0]), 7.0);

    let health = metric(&request, "smg_worker_health").unwrap();
    let Some(metric::Data::Gauge(gauge)) = &health.data else {
        panic!("{health:?}");
    };
    assert_eq!(number(&gauge.data_points[0]), 1.0);

    let duration = metric(&request, "tgi_request_duration").unwrap();
    assert_eq!(duration.unit, "s", "Unit::Seconds in UCUM");
    assert_eq!(duration.description, "Request duration");
    let Some(metric::Data::Histogram(histogram)) = &duration.data else {
        panic!("{duration:?}");
    };
    let point = &histogram.data_points[0];
    assert_eq!(point.explicit_bounds, BUCKETS);
    assert_eq!(point.bucket_counts, [1, 2, 0, 1, 0]);
    assert_eq!(point.count, 4);
    assert_eq!(point.exemplars.len(), 1, "{proto:?}: {:?}", point.exemplars);
    let exemplar = &point.exemplars[0];
    let span = sampled_span();
    assert_eq!(exemplar.trace_id, span.trace_id().to_bytes());
    assert_eq!(exemplar.span_id, span.span_id().to_bytes());
    assert_eq!(
        exemplar.value,
        Some(opentelemetry_proto::tonic::metrics::v1::exemplar::Value::AsDouble(2.0))
    );
    assert!(exemplar.time_unix_nano > 0);

    let backoff = metric(&request, "smg_worker_retry_backoff_seconds").unwrap();
    let Some(metric::Data::ExponentialHistogram(exponential)) = &backoff.data else {
        panic!("unmatched histograms are exponential: {backoff:?}");
    };
    assert_eq!(exponential.data_points[0].count, 1);
}

#[test]
fn grpc_receives_every_bridged_series() {
    exported(Proto::Grpc);
}

#[test]
fn http_receives_every_bridged_series() {
    exported(Proto::Http);
}

/// With delta temporality, the bridge's counters and histograms go out as
/// what they gained: over the run, the deltas add up to what was recorded.
#[test]
fn delta_exports_of_bridged_series_add_up_to_what_was_recorded() {
    let _serial = exclusive();
    let port = free_port();
    let received = Received::default();
    let _receiver = Receiver::start(Proto::Grpc, port, &received);
    let telemetry = otlp_telemetry(
        Proto::Grpc,
        port,
        &[
            ("OTEL_METRIC_EXPORT_INTERVAL", "100"),
            ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta"),
        ],
    );
    let recorder = MetricsBridge::new()
        .set_buckets_for_metric(Matcher::Suffix("duration".into()), &BUCKETS)
        .unwrap()
        .build(&telemetry);
    // Bounded: 20 rounds, each followed by an export.
    let (mut total, mut recorded) = (0u64, 0u64);
    for round in 1..=20u64 {
        metrics::with_local_recorder(&recorder, || {
            counter!("router_requests_total").increment(round);
            histogram!("router_duration").record(0.3);
        });
        total += round;
        recorded += 1;
        next_export(&received);
    }
    telemetry.shutdown().unwrap();
    let (counted, histogram_count) =
        delta_totals(&received, "router_requests_total", "router_duration");
    assert_eq!(counted, total as f64);
    assert_eq!(histogram_count, recorded);
}
