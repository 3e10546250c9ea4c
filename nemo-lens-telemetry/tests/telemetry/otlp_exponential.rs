//! Exponential histograms over OTLP: with
//! `OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION` set, every
//! histogram reaches a receiver built on the official protobuf definitions as
//! an `ExponentialHistogram` whose buckets hold exactly the recorded values.

use crate::support::{exclusive, Exclusive};

use std::time::Duration;

use crate::support::otlp_receiver::*;
use nemo_lens::telemetry::{EnvLookup, SetupOptions};
use opentelemetry_proto::tonic::metrics::v1::{metric, ExponentialHistogramDataPoint};

fn serial() -> Exclusive {
    exclusive()
}

/// Values over six orders of magnitude, none on a bucket boundary at the
/// scales the SDK can settle on.
fn samples() -> Vec<f64> {
    (0..60).map(|i| 0.000_7 * 1.3_f64.powi(i)).collect()
}

/// The point of the exponential histogram called `name`.
fn exponential(
    request: &opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest,
    name: &str,
) -> Option<ExponentialHistogramDataPoint> {
    match &metric(request, name)?.data {
        Some(metric::Data::ExponentialHistogram(h)) => h.data_points.first().cloned(),
        _ => None,
    }
}

fn exported_exponentially(proto: Proto) {
    let _serial = serial();
    let port = free_port();
    let received = Received::default();
    let _receiver = Receiver::start(proto, port, &received);
    let config = otlp_config(
        proto,
        &format!("http://127.0.0.1:{port}"),
        &[
            (
                "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
                "base2_exponential_bucket_histogram",
            ),
            ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
        ],
    );
    let handle = SetupOptions::new()
        .env(EnvLookup::from_pairs::<&str, &str>([]))
        .allow_reinit(true)
        .probe_gpus(false)
        .setup(&config, 0, 1)
        .unwrap();
    let ttft = handle
        .meter
        .otel()
        .f64_histogram("test.time_to_first_token")
        .with_unit("s")
        .build();
    let values = samples();
    for &value in &values {
        ttft.record(value, &[]);
    }
    ttft.record(0.0, &[]);
    handle.shutdown().unwrap();

    let request = received
        .wait_for(Duration::from_secs(20), |r| {
            exponential(r, "test.time_to_first_token").is_some_and(|p| p.count == 61)
        })
        .unwrap_or_else(|| panic!("{proto:?}: no exponential histogram of 61 values"));
    let point = exponential(&request, "test.time_to_first_token").unwrap();
    assert_eq!(point.zero_count, 1);
    assert_eq!(point.min, Some(0.0));
    assert_eq!(point.max, Some(*values.last().unwrap()));
    let sum: f64 = values.iter().sum();
    assert!((point.sum.unwrap() - sum).abs() < 1e-9 * sum);
    // The values span 22.3 powers of two: 4 buckets per power fit in the 160
    // (90 used), 8 would not (179).
    assert_eq!(point.scale, 2);
    let positive = point.positive.unwrap();
    let base = 2f64.powf(2f64.powi(-point.scale));
    let mut expected = vec![0u64; positive.bucket_counts.len()];
    for value in &values {
        // Bucket i covers (base^i, base^(i+1)].
        let index = (value.ln() / base.ln()).ceil() as i32 - 1;
        expected[(index - positive.offset) as usize] += 1;
    }
    assert_eq!(positive.bucket_counts, expected);
}

#[test]
fn grpc_carries_exponential_histograms_bucket_by_bucket() {
    exported_exponentially(Proto::Grpc);
}

#[test]
fn http_carries_exponential_histograms_bucket_by_bucket() {
    exported_exponentially(Proto::Http);
}
