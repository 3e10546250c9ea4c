//! Nothing reaches the exporter from the process environment behind the
//! configuration's back: with every `OTEL_EXPORTER_OTLP_*` variable the
//! `opentelemetry-otlp` builders would read set to a wrong value in the
//! process, a configuration read from an injected environment is exported
//! exactly as configured. In a process of its own, because it sets
//! process variables.

use std::time::Duration;

use crate::support::otlp_receiver::*;
use nemo_lens::telemetry::{EnvLookup, NemoLensConfig, SetupOptions};
use opentelemetry_proto::tonic::metrics::v1::AggregationTemporality;

/// Variables `opentelemetry-otlp` 0.33 reads for metrics, with values that
/// would break or change the export if anything read them.
const POISON: &[(&str, &str)] = &[
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
    ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://127.0.0.1:9"),
    ("OTEL_EXPORTER_OTLP_HEADERS", "x-leak=general,x-team=env"),
    (
        "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
        "x-leak=metrics,x-team=env",
    ),
    ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
    ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json"),
    ("OTEL_EXPORTER_OTLP_TIMEOUT", "1"),
    ("OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "1"),
    ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
    ("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "gzip"),
    ("OTEL_EXPORTER_OTLP_INSECURE", "false"),
    ("OTEL_EXPORTER_OTLP_METRICS_INSECURE", "false"),
    ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "delta"),
];

#[test]
fn process_variables_do_not_reach_the_exporter() {
    // The process environment is written: a process of its own.
    crate::support::own_process!(process_variables_do_not_reach_the_exporter);
    for (key, value) in POISON {
        // SAFETY: this process runs this test alone, and sets its variables
        // before the test starts any thread that could read them.
        unsafe { std::env::set_var(key, value) };
    }
    for protocol in ["grpc", "http/protobuf"] {
        let port = free_port();
        let received = Received::default();
        let _receiver = match protocol {
            "grpc" => Ok(GrpcReceiver::start(port, received.clone())),
            _ => Err(HttpReceiver::start(port, received.clone())),
        };
        let endpoint = format!("http://127.0.0.1:{port}");
        let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
            ("NEMO_LENS_ENABLED", "true"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-team=rl"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "200"),
        ]))
        .unwrap();
        let handle = SetupOptions::new()
            .env(EnvLookup::from_pairs([("X", "1")]))
            .allow_reinit(true)
            .probe_gpus(false)
            .set_global(false)
            .setup(&config, 0, 1)
            .unwrap();
        let counter = handle.meter.otel().u64_counter("isolation.count").build();
        counter.add(2, &[]);
        received
            .wait_for(Duration::from_secs(10), |r| {
                int_total(r, "isolation.count") == Some(2)
            })
            .unwrap_or_else(|| panic!("{protocol}: nothing arrived at the configured endpoint"));
        // Cumulative, as configured, not delta as the process asked.
        counter.add(3, &[]);
        let last = received
            .wait_for(Duration::from_secs(10), |r| {
                int_total(r, "isolation.count") == Some(5)
            })
            .unwrap_or_else(|| panic!("{protocol}: the total is not cumulative"));
        let Some(opentelemetry_proto::tonic::metrics::v1::metric::Data::Sum(sum)) =
            &metric(&last, "isolation.count").unwrap().data
        else {
            panic!("not a sum")
        };
        assert_eq!(
            sum.aggregation_temporality,
            AggregationTemporality::Cumulative as i32
        );
        let headers = received.headers();
        eprintln!("{protocol}: headers received {headers:?}");
        assert!(
            !headers.iter().any(|(name, _)| name == "x-leak"),
            "{protocol}: {headers:?}"
        );
        let teams: Vec<&str> = headers
            .iter()
            .filter(|(name, _)| name == "x-team")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(teams, ["rl"], "{protocol}");
        assert!(
            !headers
                .iter()
                .any(|(name, v)| name == "content-encoding" && v == "gzip"),
            "{protocol}: {headers:?}"
        );
        assert_eq!(handle.failed_exports(), 0);
        handle.shutdown().unwrap();
    }
}
