//! A service with its own trace pipeline (tracing-opentelemetry over
//! opentelemetry-otlp and the SDK, as such services declare them) and
//! nemo-lens's metrics over OTLP in the same build: both set up from the
//! service's async main (tonic's exporter needs its Tokio runtime), a span
//! traced while a set is recorded, the metrics read back, both shut down.

use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::testing::Capture;
use nemo_lens::{EnvLookup, Instruments, NemoLensConfig, SetupOptions};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use tracing_subscriber::layer::SubscriberExt as _;

#[tokio::main]
pub async fn main() {
    // The service's traces: its own provider and OTLP exporter (to a
    // collector that is not there; nothing here waits on it).
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_tonic()
        .with_endpoint("http://127.0.0.1:9")
        .build()
        .expect("an OTLP span exporter");
    let traces = opentelemetry_sdk::trace::SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(traces.tracer("service")));

    // nemo-lens's metrics over OTLP, configured as the environment would.
    let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([
        ("NEMO_LENS_ENABLED", "1"),
        ("NEMO_LENS_EXPORTER", "otlp"),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "3600000"),
    ]))
    .expect("the OTLP settings");
    let telemetry = SetupOptions::new()
        .env(EnvLookup::from_pairs([("X", "1")]))
        .probe_gpus(false)
        // The everything consumer sets up one telemetry per program it runs.
        .allow_reinit(true)
        .set_global(false)
        .setup(&config, 0, 1)
        .expect("nemo-lens over OTLP");

    let capture = Capture::new();
    tracing::subscriber::with_default(subscriber, || {
        let _step = tracing::info_span!("train_step", step = 1).entered();
        for meter in [&telemetry.meter, capture.meter()] {
            RlMetrics::default().reward_mean(0.75).record(meter);
        }
    });
    assert_eq!(capture.last_value("rl.reward.mean", &[]), Some(0.75));
    assert_eq!(capture.names(), ["rl.reward.mean"]);
    let _ = telemetry.shutdown();
    let _ = traces.shutdown();
    println!("otlp-tracing: traces and nemo-lens metrics side by side");
}
