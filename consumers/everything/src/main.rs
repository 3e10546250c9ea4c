//! Every nemo-lens feature beside every peer crate of the other consumers,
//! in one build: each of their programs run again here, where Cargo has
//! unified every feature of the graph at once.

#[path = "../../axum-openai/src/main.rs"]
mod axum_openai;
#[path = "../../metrics-024/src/main.rs"]
#[macro_use]
mod metrics_024;
#[path = "../../otlp-tracing/src/main.rs"]
mod otlp_tracing;
#[path = "../../prometheus-client-registry/src/main.rs"]
mod prometheus_client_registry;
#[path = "../../prometheus-frontend/src/main.rs"]
mod prometheus_frontend;

/// `metrics` 0.23 beside 0.24: the one recorder serves both facades.
fn metrics_023() {
    let (telemetry, renderer) = metrics_024::router::telemetry();
    let recorder = metrics_024::router::bridge(&telemetry);
    record_router!(metrics_023, &recorder);
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
