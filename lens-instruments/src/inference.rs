//! Inference-server metrics following the OpenTelemetry GenAI semantic
//! conventions.

use lens_core::{Instruments, Meter};
use lens_macros::Instruments;
use opentelemetry::StringValue;

/// One inference request, as `record_inference_metrics` takes it in Python
/// nemo-lens.
///
/// Every measurement carries `gen_ai.operation.name` (default
/// `text_completion`), `gen_ai.provider.name` (default `nemo`) and, when the
/// model is set and not empty, `gen_ai.request.model`.
///
/// ```
/// use nemo_lens::instruments::InferenceMetrics;
/// use nemo_lens::{Instruments, Meter};
///
/// let meter = Meter::noop();
/// InferenceMetrics::default()
///     .request_duration_s(0.42)
///     .model("llama-3-8b")
///     .input_tokens(128)
///     .output_tokens(256)
///     .record(&meter);
/// ```
#[derive(Instruments, Default, Debug, Clone)]
#[instruments(crate = "lens_core")]
pub struct InferenceMetrics {
    /// GenAI server request duration.
    #[histogram(
        "gen_ai.server.request.duration",
        unit = "s",
        buckets = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
    )]
    pub request_duration_s: Option<f64>,

    /// Number of input and output tokens used.
    #[histogram(
        "gen_ai.client.token.usage",
        unit = "{token}",
        buckets = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
        attr("gen_ai.token.type" = "input")
    )]
    pub input_tokens: Option<u64>,

    /// Output tokens of the request, recorded into the same instrument as
    /// the input tokens with `gen_ai.token.type = output`.
    #[histogram("gen_ai.client.token.usage", attr("gen_ai.token.type" = "output"))]
    pub output_tokens: Option<u64>,

    /// The requested model, attached as `gen_ai.request.model`.
    #[attribute("gen_ai.request.model")]
    pub model: Option<StringValue>,

    /// The operation, attached as `gen_ai.operation.name`.
    #[attribute("gen_ai.operation.name", default = "text_completion")]
    pub operation_name: Option<StringValue>,

    /// The serving provider, attached as `gen_ai.provider.name`.
    #[attribute("gen_ai.provider.name", default = "nemo")]
    pub provider_name: Option<StringValue>,
}

/// Records `metrics` on `meter`: the Python `record_inference_metrics`.
#[inline]
pub fn record_inference_metrics(meter: &Meter, metrics: &InferenceMetrics) {
    metrics.record(meter);
}
