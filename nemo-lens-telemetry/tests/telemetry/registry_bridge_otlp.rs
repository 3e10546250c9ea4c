//! Registries of the `prometheus` and `prometheus-client` crates over OTLP:
//! a receiver built on the official protobuf definitions decodes each
//! family as the registry bridge maps it (counters as monotonic cumulative
//! sums, gauges and info families as gauges, histograms as cumulative
//! explicit-bucket histograms with `+Inf` as the overflow bucket), each
//! registry under its own scope, each series with a start time that does
//! not move.

use crate::support::exclusive;

use std::sync::Arc;
use std::time::Duration;

use crate::support::otlp_receiver::*;
use nemo_lens::registry_bridge::{RegistryBridge, LIBRARY_ATTRIBUTE, SCOPE};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point, Metric, NumberDataPoint};
use prometheus::{Gauge, HistogramOpts, HistogramVec, IntCounterVec, Opts};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::metrics::info::Info;

/// A collector of the service's own: one summary, a type the crate's
/// metrics never make.
struct Collected(Vec<prometheus::core::Desc>);

impl prometheus::core::Collector for Collected {
    fn desc(&self) -> Vec<&prometheus::core::Desc> {
        self.0.iter().collect()
    }

    fn collect(&self) -> Vec<prometheus::proto::MetricFamily> {
        use prometheus::proto::{MetricFamily, MetricType, Quantile, Summary};
        let family = |name: &str, kind, metric| {
            let mut family = MetricFamily::default();
            family.set_name(name.into());
            family.set_help(name.into());
            family.set_field_type(kind);
            family.set_metric(vec![metric]);
            family
        };
        let mut summary = Summary::default();
        summary.set_sample_count(40);
        summary.set_sample_sum(2.5);
        let mut p99 = Quantile::default();
        p99.set_quantile(0.99);
        p99.set_value(0.4);
        summary.set_quantile(vec![p99]);
        let mut waited = prometheus::proto::Metric::default();
        waited.set_summary(summary);
        vec![family(
            "dynamo_frontend_queue_wait_seconds",
            MetricType::SUMMARY,
            waited,
        )]
    }
}

fn collected() -> Collected {
    let desc = |name: &str| {
        prometheus::core::Desc::new(name.into(), name.into(), Vec::new(), Default::default())
            .unwrap()
    };
    Collected(vec![desc("dynamo_frontend_queue_wait_seconds")])
}

const NAMES: [&str; 7] = [
    "dynamo_frontend_requests_total",
    "dynamo_frontend_inflight_requests",
    "dynamo_frontend_request_duration_seconds",
    "worker_requests_total",
    "worker_build_info",
    "worker_latency_seconds",
    "dynamo_frontend_queue_wait_seconds",
];

fn number(point: &NumberDataPoint) -> f64 {
    match point.value {
        Some(number_data_point::Value::AsDouble(d)) => d,
        Some(number_data_point::Value::AsInt(i)) => i as f64,
        None => f64::NAN,
    }
}

fn string_attribute(
    point_attributes: &[opentelemetry_proto::tonic::common::v1::KeyValue],
    key: &str,
) -> Option<String> {
    point_attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
        .map(any_string)
}

/// The library attribute of the scope holding metric `name`.
fn library_of(request: &ExportMetricsServiceRequest, name: &str) -> Option<(String, String)> {
    request
        .resource_metrics
        .iter()
        .flat_map(|rm| &rm.scope_metrics)
        .find(|sm| sm.metrics.iter().any(|m| m.name == name))
        .and_then(|sm| sm.scope.as_ref())
        .map(|scope| {
            let library =
                string_attribute(&scope.attributes, LIBRARY_ATTRIBUTE).unwrap_or_default();
            (scope.name.clone(), library)
        })
}

fn sum_points(metric: &Metric) -> &[NumberDataPoint] {
    match &metric.data {
        Some(metric::Data::Sum(sum)) => {
            assert!(sum.is_monotonic, "{}: monotonic", metric.name);
            assert_eq!(
                sum.aggregation_temporality, 2,
                "{}: cumulative",
                metric.name
            );
            &sum.data_points
        }
        other => panic!("{} is not a sum: {other:?}", metric.name),
    }
}

fn gauge_points(metric: &Metric) -> &[NumberDataPoint] {
    match &metric.data {
        Some(metric::Data::Gauge(gauge)) => &gauge.data_points,
        other => panic!("{} is not a gauge: {other:?}", metric.name),
    }
}

fn exported(proto: Proto) {
    let _serial = exclusive();
    let port = free_port();
    let received = Received::default();
    let _receiver = Receiver::start(proto, port, &received);
    let telemetry = otlp_telemetry(proto, port, &[("OTEL_METRIC_EXPORT_INTERVAL", "200")]);

    // A registry shaped like Dynamo's frontend (the `prometheus` crate).
    let frontend = prometheus::Registry::new();
    let requests = IntCounterVec::new(
        Opts::new(
            "dynamo_frontend_requests_total",
            "Total LLM requests processed",
        ),
        &["model"],
    )
    .unwrap();
    let inflight = Gauge::new("dynamo_frontend_inflight_requests", "Requests in flight").unwrap();
    let duration = HistogramVec::new(
        HistogramOpts::new(
            "dynamo_frontend_request_duration_seconds",
            "LLM request duration",
        )
        .buckets(vec![0.1, 1.0, 10.0]),
        &["model"],
    )
    .unwrap();
    frontend.register(Box::new(requests.clone())).unwrap();
    frontend.register(Box::new(inflight.clone())).unwrap();
    frontend.register(Box::new(duration.clone())).unwrap();
    frontend.register(Box::new(collected())).unwrap();
    requests.with_label_values(&["llama"]).inc_by(3);
    inflight.set(2.0);
    for value in [0.05, 0.5, 20.0] {
        duration.with_label_values(&["llama"]).observe(value);
    }

    // A `prometheus-client` registry.
    let mut worker = prometheus_client::registry::Registry::with_prefix("worker");
    let worker_requests: Counter = Counter::default();
    worker.register("requests", "Requests served", worker_requests.clone());
    worker.register("build", "Build", Info::new(vec![("version", "1.2.3")]));
    let latency = Histogram::new([0.5, 1.0]);
    worker.register("latency_seconds", "Latency", latency.clone());
    worker_requests.inc_by(5);
    latency.observe(0.2);
    latency.observe(3.0);

    RegistryBridge::new()
        .prometheus(frontend)
        .prometheus_client(Arc::new(worker))
        .install(&telemetry)
        .unwrap();

    let complete = |request: &ExportMetricsServiceRequest| {
        NAMES.iter().all(|name| metric(request, name).is_some())
    };
    let first = received
        .wait_for(Duration::from_secs(20), complete)
        .unwrap_or_else(|| panic!("{proto:?}: not every bridged family arrived"));
    // Another export after more was recorded: the start stays, the value moves.
    requests.with_label_values(&["llama"]).inc();
    let again = received
        .wait_for(Duration::from_secs(20), |request| {
            complete(request)
                && metric(request, "dynamo_frontend_requests_total")
                    .map(|m| number(&sum_points(m)[0]) == 4.0)
                    .unwrap_or(false)
        })
        .unwrap_or_else(|| panic!("{proto:?}: the second value never arrived"));
    telemetry.shutdown().unwrap();

    // Each registry under its own scope.
    assert_eq!(
        library_of(&first, "dynamo_frontend_requests_total"),
        Some((SCOPE.to_owned(), "prometheus".to_owned()))
    );
    assert_eq!(
        library_of(&first, "worker_requests_total"),
        Some((SCOPE.to_owned(), "prometheus-client".to_owned()))
    );

    let counter = metric(&first, "dynamo_frontend_requests_total").unwrap();
    assert_eq!(counter.description, "Total LLM requests processed");
    let point = &sum_points(counter)[0];
    assert_eq!(number(point), 3.0);
    assert_eq!(
        string_attribute(&point.attributes, "model").as_deref(),
        Some("llama")
    );
    assert!(point.start_time_unix_nano > 0);
    let later = &sum_points(metric(&again, "dynamo_frontend_requests_total").unwrap())[0];
    assert_eq!(
        later.start_time_unix_nano, point.start_time_unix_nano,
        "start does not move"
    );
    assert!(later.time_unix_nano > point.time_unix_nano);

    let gauge = metric(&first, "dynamo_frontend_inflight_requests").unwrap();
    assert_eq!(number(&gauge_points(gauge)[0]), 2.0);

    let histogram = metric(&first, "dynamo_frontend_request_duration_seconds").unwrap();
    let Some(metric::Data::Histogram(data)) = &histogram.data else {
        panic!("{histogram:?}");
    };
    assert_eq!(data.aggregation_temporality, 2);
    let point = &data.data_points[0];
    assert_eq!(point.explicit_bounds, [0.1, 1.0, 10.0]);
    assert_eq!(point.bucket_counts, [1, 1, 0, 1], "de-cumulated, +Inf last");
    assert_eq!((point.count, point.sum), (3, Some(20.55)));

    // Summaries as OTLP summary points.
    let wait = metric(&first, "dynamo_frontend_queue_wait_seconds").unwrap();
    let Some(metric::Data::Summary(summary)) = &wait.data else {
        panic!("{wait:?}");
    };
    let point = &summary.data_points[0];
    assert_eq!((point.count, point.sum), (40, 2.5));
    assert_eq!(
        (
            point.quantile_values[0].quantile,
            point.quantile_values[0].value
        ),
        (0.99, 0.4)
    );

    let worker_requests = metric(&first, "worker_requests_total").unwrap();
    assert_eq!(worker_requests.description, "Requests served.");
    assert_eq!(number(&sum_points(worker_requests)[0]), 5.0);

    let info = metric(&first, "worker_build_info").unwrap();
    let point = &gauge_points(info)[0];
    assert_eq!(number(point), 1.0);
    assert_eq!(
        string_attribute(&point.attributes, "version").as_deref(),
        Some("1.2.3")
    );

    let latency = metric(&first, "worker_latency_seconds").unwrap();
    let Some(metric::Data::Histogram(data)) = &latency.data else {
        panic!("{latency:?}");
    };
    let point = &data.data_points[0];
    assert_eq!(point.explicit_bounds, [0.5, 1.0]);
    assert_eq!(point.bucket_counts, [1, 0, 1]);
    assert_eq!(point.count, 2);
}

#[test]
fn grpc_receives_every_bridged_family() {
    exported(Proto::Grpc);
}

#[test]
fn http_receives_every_bridged_family() {
    exported(Proto::Http);
}

/// With delta temporality, a bridged counter and histogram go out as what
/// they gained: over the run, the deltas received add up to the registry's
/// totals, and none is negative.
#[test]
fn delta_exports_of_a_bridged_registry_add_up_to_its_totals() {
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
    let frontend = prometheus::Registry::new();
    let requests =
        IntCounterVec::new(Opts::new("frontend_requests_total", "Requests"), &["model"]).unwrap();
    let duration = HistogramVec::new(
        HistogramOpts::new("frontend_duration_seconds", "Duration").buckets(vec![1.0]),
        &["model"],
    )
    .unwrap();
    frontend.register(Box::new(requests.clone())).unwrap();
    frontend.register(Box::new(duration.clone())).unwrap();
    RegistryBridge::new()
        .prometheus(frontend)
        .install(&telemetry)
        .unwrap();
    // Bounded: 30 rounds of recording, each seen by at least one export.
    let (mut total, mut observed) = (0u64, 0u64);
    for round in 1..=30u64 {
        requests.with_label_values(&["llama"]).inc_by(round);
        duration.with_label_values(&["llama"]).observe(0.5);
        total += round;
        observed += 1;
        next_export(&received);
    }
    // The last round's values in at least one more export.
    let before = received.count();
    received
        .wait_for(Duration::from_secs(10), |_| received.count() > before + 1)
        .expect("two more exports");
    let (counted, histogram_count) = delta_totals(
        &received,
        "frontend_requests_total",
        "frontend_duration_seconds",
    );
    assert_eq!(counted, total as f64);
    assert_eq!(histogram_count, observed);
    telemetry.shutdown().unwrap();
}

/// A bridged family with the Prometheus name of a nemo-lens instrument's
/// family is left out over OTLP too, as on a scrape: the instrument's is
/// sent, the registry's other families as well.
#[test]
fn a_bridged_family_never_shadows_a_nemo_lens_instrument_over_otlp() {
    let _serial = exclusive();
    let port = free_port();
    let received = Received::default();
    let _receiver = Receiver::start(Proto::Grpc, port, &received);
    let telemetry = otlp_telemetry(Proto::Grpc, port, &[("OTEL_METRIC_EXPORT_INTERVAL", "100")]);
    telemetry
        .meter
        .u64_counter("dynamo.frontend.requests")
        .build()
        .add(2, &[]);
    let frontend = prometheus::Registry::new();
    let requests = IntCounterVec::new(
        Opts::new("dynamo_frontend_requests_total", "Requests"),
        &["model"],
    )
    .unwrap();
    let inflight = Gauge::new("dynamo_frontend_inflight_requests", "In flight").unwrap();
    frontend.register(Box::new(requests.clone())).unwrap();
    frontend.register(Box::new(inflight.clone())).unwrap();
    requests.with_label_values(&["llama"]).inc_by(5);
    inflight.set(1.0);
    RegistryBridge::new()
        .prometheus(frontend)
        .install(&telemetry)
        .unwrap();
    let request = received
        .wait_for(Duration::from_secs(20), |request| {
            metric(request, "dynamo.frontend.requests").is_some()
                && metric(request, "dynamo_frontend_inflight_requests").is_some()
        })
        .expect("the instrument and the registry's gauge");
    assert!(metric(&request, "dynamo_frontend_requests_total").is_none());
    let own = metric(&request, "dynamo.frontend.requests").unwrap();
    assert_eq!(number(&sum_points(own)[0]), 2.0);
    telemetry.shutdown().unwrap();
}
