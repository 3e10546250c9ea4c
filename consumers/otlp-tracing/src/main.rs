//! A service with its own trace pipeline (tracing-opentelemetry over
//! opentelemetry-otlp and the SDK, as such services declare them) and
//! nemo-lens's metrics over OTLP in the same build: both set up from the
//! service's async main (tonic's exporter needs its Tokio runtime), a span
//! traced while a set is recorded, the metrics read back, both shut down.

use nemo_lens::instruments::rl::RlMetrics;
use nemo_lens::testing::Capture;
use nemo_lens::{EnvLookup, Instruments, NemoLensConfig, SetupOptions};
use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
use tracing_opentelemetry::OpenTelemetrySpanExt as _;
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
    let trace_id = tracing::subscriber::with_default(subscriber, || {
        let step = tracing::info_span!("train_step", step = 1);
        let _entered = step.enter();
        for meter in [&telemetry.meter, capture.meter()] {
            RlMetrics::default()
                .reward_mean(0.75)
                .generation_duration_ms(1234.5)
                .record(meter);
        }
        // The span's OpenTelemetry ids, as tracing-opentelemetry gives them.
        step.context().span().span_context().trace_id()
    });
    assert_eq!(capture.last_value("rl.reward.mean", &[]), Some(0.75));
    // tracing-opentelemetry 0.34 makes the entered span's context current
    // (its context activation), so the histogram recorded inside it has
    // that span as its exemplar: one `opentelemetry` in this build.
    let exemplars = capture.exemplars("rl.generation.duration_ms", &[]);
    assert_eq!(exemplars.len(), 1, "{exemplars:?}");
    assert_eq!(exemplars[0].trace_id(), Some(trace_id));
    let _ = telemetry.shutdown();
    let _ = traces.shutdown();
    println!("otlp-tracing: traces and nemo-lens metrics side by side, exemplars linking them");
}
