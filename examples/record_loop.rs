//! A plain loop of inference records, for profilers:
//! `cargo build --profile bench --example record_loop` then
//! `valgrind --tool=callgrind target/release/examples/record_loop 100000 [MODELS]`,
//! cycling through MODELS distinct model names (default 1). With `hand` as a
//! third argument it runs the hand-written SDK calls of the benchmarks'
//! baseline instead, so both can be compared in instructions per request.
//! The derive records through a test capture's meter: series in nemo-lens's
//! own cells, as `setup_telemetry` gives them.

use nemo_lens::instruments::InferenceMetrics;
use nemo_lens::opentelemetry::metrics::MeterProvider as _;
use nemo_lens::opentelemetry::KeyValue;
use nemo_lens::opentelemetry_sdk::metrics::{
    InMemoryMetricExporter, PeriodicReader, SdkMeterProvider,
};
use nemo_lens::testing::Capture;
use nemo_lens::{Instruments, Meter};

fn main() {
    let iterations: u64 = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();
    let capture = Capture::new();
    let models: usize = std::env::args()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let requests: Vec<InferenceMetrics> = (0..models.max(1))
        .map(|i| {
            InferenceMetrics::default()
                .request_duration_s(0.42)
                .model(format!("model-{i:05}"))
                .input_tokens(128)
                .output_tokens(256)
        })
        .collect();
    if std::env::args().nth(3).as_deref() == Some("hand") {
        hand_written(
            &Meter::from(provider.meter("nemo.lens")),
            &requests,
            iterations,
        );
    } else {
        let meter = capture.meter();
        for i in 0..iterations {
            std::hint::black_box(&requests[i as usize % requests.len()]).record(meter);
        }
    }
    println!("recorded {iterations} requests");
}

/// The benchmarks' baseline: instruments built once, attributes per call.
fn hand_written(meter: &Meter, requests: &[InferenceMetrics], iterations: u64) {
    let duration = meter
        .otel()
        .f64_histogram("gen_ai.server.request.duration")
        .with_unit("s")
        .with_description("GenAI server request duration.")
        .build();
    let tokens = meter
        .otel()
        .u64_histogram("gen_ai.client.token.usage")
        .with_unit("{token}")
        .with_description("Number of input and output tokens used.")
        .build();
    for i in 0..iterations {
        let request = std::hint::black_box(&requests[i as usize % requests.len()]);
        let model = request.base.model.clone().unwrap_or_else(|| "".into());
        let base = [
            KeyValue::new("gen_ai.operation.name", "text_completion"),
            KeyValue::new("gen_ai.provider.name", "nemo"),
            KeyValue::new("gen_ai.request.model", model.clone()),
        ];
        duration.record(0.42, &base);
        let input = [
            KeyValue::new("gen_ai.operation.name", "text_completion"),
            KeyValue::new("gen_ai.provider.name", "nemo"),
            KeyValue::new("gen_ai.request.model", model.clone()),
            KeyValue::new("gen_ai.token.type", "input"),
        ];
        tokens.record(128, &input);
        let output = [
            KeyValue::new("gen_ai.operation.name", "text_completion"),
            KeyValue::new("gen_ai.provider.name", "nemo"),
            KeyValue::new("gen_ai.request.model", model),
            KeyValue::new("gen_ai.token.type", "output"),
        ];
        tokens.record(256, &output);
    }
}
