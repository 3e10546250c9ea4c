//! Every nemo-lens feature beside every peer crate of the other consumers,
//! in one build: each of their programs run again here, where Cargo has
//! unified every feature of the graph at once.

#[path = "../../axum-openai/src/main.rs"]
mod axum_openai;
#[path = "../../metrics-024/src/main.rs"]
mod metrics_024;
#[path = "../../otlp-tracing/src/main.rs"]
mod otlp_tracing;
#[path = "../../prometheus-client-registry/src/main.rs"]
mod prometheus_client_registry;
#[path = "../../prometheus-frontend/src/main.rs"]
mod prometheus_frontend;

/// `metrics` 0.23 beside 0.24: the one recorder serves both facades.
fn metrics_023() {
    use metrics_023 as metrics;
    let (telemetry, renderer) = metrics_024::router::telemetry();
    let recorder = nemo_lens::metrics_bridge::MetricsBridge::new()
        .set_buckets_for_metric(
            nemo_lens::metrics_bridge::Matcher::Suffix("duration_seconds".into()),
            &[0.5, 1.0],
        )
        .unwrap()
        .build(&telemetry);
    metrics::with_local_recorder(&recorder, || {
        for seconds in [0.3, 0.7] {
            metrics::counter!("router_requests_total", "worker" => "w1").increment(1);
            metrics::histogram!("router_request_duration_seconds").record(seconds);
        }
        metrics::gauge!("router_workers_healthy").set(4.0);
    });
    metrics_024::router::check(&renderer, "metrics 0.23 beside 0.24");
    telemetry.shutdown().unwrap();
}

fn main() {
    prometheus_frontend::main();
    prometheus_client_registry::main();
    metrics_024::main();
    metrics_023();
    otlp_tracing::main();
    axum_openai::main();
    println!("everything: every consumer again with every feature on");
}
