#![doc = include_str!("guide.md")]
#![doc = include_str!("derive.md")]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

pub use nemo_lens_core::{
    get_meter, prometheus_label, AttributeDescriptor, AttributeValue, Attributes, Descriptor,
    ExemplarFilter, FixedAttributeValue, Guarded, InstrumentKind, Instruments, KeyPart, Meter,
    Observation, ObserveError, PrometheusNames, SemconvGate, SemconvOptIn, SeriesExpiry, SetSlot,
    ValueType, WeakMeter, GEN_AI_LATEST_EXPERIMENTAL, SEMCONV_STABILITY_OPT_IN,
};
/// Derives [`AttributeValue`](trait@AttributeValue) and
/// [`FixedAttributeValue`] for a field-less enum; see the
/// [crate documentation](crate#enum-attribute-values).
pub use nemo_lens_macros::AttributeValue;
/// Derives [`Attributes`](trait@Attributes) for a struct of
/// `#[attribute("key")]` fields that `Instruments` structs `#[flatten]`; see
/// the [crate documentation](crate#attribute-groups-flatten).
pub use nemo_lens_macros::Attributes;

/// The console exporter, for custom pipelines.
#[cfg(feature = "console")]
#[cfg_attr(docsrs, doc(cfg(feature = "console")))]
pub use nemo_lens_telemetry::console::ConsoleExporter;
/// Serving `/metrics` from your own HTTP server: [`PrometheusRenderer`](prometheus::PrometheusRenderer)
/// renders the exposition and its content type (see `examples/axum_metrics.rs`).
#[cfg(feature = "prometheus")]
#[cfg_attr(docsrs, doc(cfg(feature = "prometheus")))]
pub mod prometheus {
    /// The scrape endpoint's web configuration file (Prometheus's
    /// exporter-toolkit format): TLS, client certificates, basic auth.
    #[cfg(feature = "prometheus-tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "prometheus-tls")))]
    pub use nemo_lens_prometheus::web_config::{WebConfig, WebConfigError};
    pub use nemo_lens_prometheus::{
        proto, Exposition, Format, PrometheusReader, PrometheusRenderer, RenderError, CONTENT_TYPE,
        OPENMETRICS_CONTENT_TYPE, PROTOBUF_CONTENT_TYPE,
    };
}
/// A tower layer recording the GenAI server metrics of an OpenAI-compatible
/// HTTP API (axum or any tower service): [`OpenAiLayer`](openai::OpenAiLayer).
#[cfg(feature = "openai")]
#[cfg_attr(docsrs, doc(cfg(feature = "openai")))]
pub mod openai {
    pub use nemo_lens_openai::{
        MeteredBody, OpenAiLayer, OpenAiService, RequestBody, ResponseFuture, BODY_ERROR,
        CANCELLED, ERROR_EVENT, UNDECLARED_MODEL,
    };
}
/// The cells one series records into, striped when threads collide on it.
pub use nemo_lens_core::cells;
/// Exemplars: the trace and span of a request beside the histogram bucket
/// it landed in.
pub use nemo_lens_core::exemplar;
/// Runtime metric groups: Lens's `MetricSpec` registry and spec files.
pub use nemo_lens_core::groups;
/// Instruments whose series nemo-lens keeps in [`cells`], read by the
/// exporters `setup_telemetry` builds.
pub use nemo_lens_core::owned;
/// Latency objectives in aiperf's `--goodput` syntax and the judge of one
/// request: goodput, counted where requests are served.
pub use nemo_lens_core::slo;
/// A recorder for the `metrics` facade that exports through nemo-lens,
/// keeping the names `metrics-exporter-prometheus` writes.
#[cfg(feature = "metrics-bridge")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics-bridge")))]
pub use nemo_lens_metrics_bridge as metrics_bridge;
/// Testing what your sets emit: [`Capture`](testing::Capture) reads back
/// what a meter recorded, or its Prometheus text exposition for a snapshot;
/// [`declared`](testing::declared) writes what a set declares.
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use nemo_lens_prometheus::testing;
#[cfg(any(
    feature = "prometheus-crate-bridge",
    feature = "prometheus-client-bridge"
))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(
        feature = "prometheus-crate-bridge",
        feature = "prometheus-client-bridge"
    )))
)]
pub use nemo_lens_registry_bridge as registry_bridge;
/// Telemetry setup: configuration from the environment, rank selection,
/// resource and exporters.
pub use nemo_lens_telemetry::telemetry;
pub use nemo_lens_telemetry::{
    register_export_strategy, setup_telemetry, setup_telemetry_from_launcher, ConfigError,
    EnvLookup, ExportStrategy, ExporterKind, JobRank, NemoLensConfig, OtlpProtocol,
    PrometheusResourceLabels, RankContext, SetupError, SetupOptions, ShutdownError,
    TelemetryHandle,
};

/// Derives [`Instruments`](trait@Instruments) for a struct of `Option<..>`
/// fields; see the [crate documentation](crate#the-derive) for every key.
pub use nemo_lens_macros::Instruments;

/// What a program that records needs in scope: `use nemo_lens::prelude::*;`.
///
/// The traits matter most: [`Instruments`](trait@Instruments) gives a set
/// its `record`, and [`Guarded`] gives a prepared set its `start`. Without
/// `Guarded` in scope, `SandboxStartup::default().provider("docker").start(&meter)`
/// does not compile, and the compiler's first suggestion,
/// `SandboxStartup::start(&meter)`, starts a guard on an empty set: the
/// provider would be lost.
///
/// ```
/// use nemo_lens::instruments::gym::SandboxStartup;
/// use nemo_lens::prelude::*;
///
/// let meter = Meter::noop();
/// let startup = SandboxStartup::default().provider("docker").start(&meter);
/// startup.finish();
/// ```
pub mod prelude {
    pub use crate::{AttributeValue, Attributes, Guarded, Instruments, Meter};
}

/// The built-in instrument sets, matching Python nemo-lens.
pub mod instruments {
    pub use nemo_lens_instruments::{goodput, gym, rl, serving};
    pub use nemo_lens_instruments::{
        record_inference_metrics, GenAiAttributes, InferenceMetrics, InferenceMetricsSet,
        InferenceRequest, ModelCall, ModelCallMetrics, ModelCallMetricsSet, TokenModality,
        DROPPED_ERROR_TYPE, EMBEDDINGS, FETCH_RESPONSE,
    };
}

/// The `opentelemetry` crate this crate was built with.
pub use opentelemetry;
/// The `opentelemetry_sdk` crate this crate was built with.
pub use opentelemetry_sdk;

#[doc(hidden)]
pub use nemo_lens_core::__private;

/// The guide, one chapter per topic: the crate's front page is the overview
/// and [the derive](crate#the-derive) its reference; each chapter here is the
/// one home of its topic. Their examples are compiled as doc tests (with the
/// `openai`, `prometheus` and `testing` features, which several use).
pub mod guides {
    // The chapters' doc tests need those features; their text is always
    // there for `cargo doc`.
    macro_rules! chapter {
        ($(#[$meta:meta])* $name:ident, $file:literal) => {
            $(#[$meta])*
            #[cfg_attr(
                any(
                    not(doctest),
                    all(feature = "openai", feature = "prometheus", feature = "testing")
                ),
                doc = include_str!($file)
            )]
            pub mod $name {}
        };
    }

    chapter!(
        /// Telemetry setup: the environment, ranks, resource attributes,
        /// histogram boundaries, the cardinality limit, configuration checks.
        setup,
        "guides/setup.md"
    );
    chapter!(
        /// Exporters and transport: Prometheus (resource labels, your own
        /// route, the endpoint), exponential histograms, OTLP failures and TLS.
        exporters,
        "guides/exporters.md"
    );
    chapter!(
        /// Exemplars: the trace of a request beside the latency bucket it
        /// landed in, on Prometheus, OTLP and the console.
        exemplars,
        "guides/exemplars.md"
    );
    chapter!(
        /// The built-in sets, their tables, the request guards and the GenAI
        /// conventions' versions.
        builtin_sets,
        "guides/builtin_sets.md"
    );
    chapter!(
        /// Testing what your sets emit: `testing::Capture` and snapshots.
        testing,
        "guides/testing.md"
    );
    chapter!(
        /// Serving: the OpenAI layer, the gauges routers read, the inference
        /// gateway, the example server under aiperf, the metering proxy.
        serving,
        "guides/serving.md"
    );
    chapter!(
        /// Goodput: latency objectives in aiperf's syntax, every request
        /// judged where it is served, the PromQL, burn-rate alerts, top.
        goodput,
        "guides/goodput.md"
    );
    chapter!(
        /// Services on the `metrics` crate (smg, vllm-router, TEI, TGI): the
        /// metrics bridge.
        metrics_bridge,
        "guides/metrics_bridge.md"
    );
    chapter!(
        /// Runtime metric groups and spec files: metrics known at run time.
        runtime_groups,
        "guides/runtime_groups.md"
    );
    chapter!(
        /// Dashboards, alert rules and a catalog: the `nemo-lens` command.
        dashboards,
        "guides/dashboards.md"
    );
    chapter!(
        /// Performance: what recording costs, and where the benchmarks are.
        performance,
        "guides/performance.md"
    );
    chapter!(
        /// What to check when metrics do not show up, and an FAQ.
        troubleshooting,
        "guides/troubleshooting.md"
    );
    chapter!(
        /// Moving hand-written `opentelemetry` code or Python nemo-lens over.
        migration,
        "guides/migration.md"
    );
}

// The doc examples of the internal crates are written against `nemo_lens`
// (what their pages show once re-exported here), so they run as this
// crate's doc tests, merged into one binary with the rest; the crates
// themselves then need no dev-dependency on the facade, which would rebuild
// the model and the built-in sets with every edit to an exporter.
#[cfg(all(
    doctest,
    feature = "openai",
    feature = "prometheus",
    feature = "testing"
))]
nemo_lens_doc_examples::doc_examples!(
    "nemo-lens-core/src",
    "nemo-lens-prometheus/src",
    "nemo-lens-otlp/src",
    "nemo-lens-telemetry/src",
    "nemo-lens-instruments/src",
    "nemo-lens-openai/src",
    "nemo-lens-metrics-bridge/src",
    "nemo-lens-registry-bridge/src",
);

/// The README's examples, compiled and run as doc tests (`no_run` where they
/// serve or export). Its snippets use the `openai`, `prometheus` and
/// `testing` features.
#[cfg(all(
    doctest,
    feature = "openai",
    feature = "prometheus",
    feature = "testing"
))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
