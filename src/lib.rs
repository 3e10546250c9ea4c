//! # nemo-lens
//!
//! Opinionated OpenTelemetry metrics for inference servers, RL trainers and
//! environment ("gym") servers: the Rust counterpart of the Python package
//! nemo-lens, with the same instrument names on the wire.
//!
//! Declare a set of measurements as a struct of `Option<..>` fields and derive
//! [`Instruments`]; record only the fields that are `Some`:
//!
//! ```
//! use nemo_lens::opentelemetry::metrics::MeterProvider as _;
//! use nemo_lens::opentelemetry_sdk::metrics::SdkMeterProvider;
//! use nemo_lens::instruments::rl::RlMetrics;
//! use nemo_lens::{Instruments, Meter};
//!
//! let provider = SdkMeterProvider::builder().build();
//! let meter = Meter::from(provider.meter("nemo.lens"));
//! RlMetrics::default().reward_mean(0.75).policy_loss(0.3).record(&meter);
//! ```
//!
//! See the README for the derive reference and the built-in instruments.

#![doc = include_str!("derive.md")]
#![warn(missing_docs)]

pub use lens_core::{
    get_meter, prometheus_label, AttributeValue, Descriptor, InstrumentKind, Instruments, KeyPart,
    Meter, PrometheusNames, SemconvGate, SemconvOptIn, SetSlot, ValueType, WeakMeter,
    GEN_AI_LATEST_EXPERIMENTAL, SEMCONV_STABILITY_OPT_IN,
};

/// The console exporter, for custom pipelines.
#[cfg(feature = "console")]
pub use lens_core::export::console::ConsoleExporter;
/// Serving `/metrics` from your own HTTP server: [`PrometheusRenderer`](prometheus::PrometheusRenderer)
/// renders the exposition and its content type (see `examples/axum_metrics.rs`).
#[cfg(feature = "prometheus")]
pub mod prometheus {
    pub use lens_core::export::prometheus::{
        Exposition, Format, PrometheusReader, PrometheusRenderer, RenderError, CONTENT_TYPE,
        PROTOBUF_CONTENT_TYPE,
    };
}
/// A tower layer recording the GenAI server metrics of an OpenAI-compatible
/// HTTP API (axum or any tower service): [`OpenAiLayer`](openai::OpenAiLayer).
#[cfg(feature = "openai")]
pub mod openai {
    pub use lens_openai::{
        MeteredBody, OpenAiLayer, OpenAiService, RequestBody, ResponseFuture, BODY_ERROR,
        CANCELLED, ERROR_EVENT, UNDECLARED_MODEL,
    };
}
/// Runtime metric groups: Lens's `MetricSpec` registry and spec files.
pub use lens_core::groups;
/// Telemetry setup: configuration from the environment, rank selection,
/// resource and exporters.
pub use lens_core::telemetry;
pub use lens_core::{
    register_export_strategy, setup_telemetry, ConfigError, EnvLookup, ExportStrategy,
    ExporterKind, NemoLensConfig, OtlpProtocol, PrometheusResourceLabels, RankContext, SetupError,
    SetupOptions, ShutdownError, TelemetryHandle,
};

/// Derives [`Instruments`](trait@Instruments) for a struct of `Option<..>`
/// fields; see the [crate documentation](crate#the-derive) for every key.
pub use lens_macros::Instruments;

/// The built-in instrument sets, matching Python nemo-lens.
pub mod instruments {
    pub use lens_instruments::{gym, rl, serving};
    pub use lens_instruments::{
        record_inference_metrics, InferenceMetrics, InferenceMetricsSet, InferenceRequest,
        ModelCall, ModelCallMetrics, ModelCallMetricsSet, TokenModality, DROPPED_ERROR_TYPE,
    };
}

/// The `opentelemetry` crate this crate was built with.
pub use opentelemetry;
/// The `opentelemetry_sdk` crate this crate was built with.
pub use opentelemetry_sdk;

#[doc(hidden)]
pub use lens_core::__private;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
