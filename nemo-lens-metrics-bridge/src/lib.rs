//! A recorder for the [`metrics`](https://docs.rs/metrics) facade
//! (`counter!`, `gauge!`, `histogram!`) that exports through nemo-lens, for
//! services written against `metrics` and `metrics-exporter-prometheus`
//! (smg, vllm-project/router, text-embeddings-inference, TGI).
//!
//! Migrating is: replace `PrometheusBuilder::new()` with
//! [`MetricsBridge::new()`] and `install()` with
//! [`install(&telemetry)`](MetricsBridge::install), `telemetry` being the
//! [`TelemetryHandle`](nemo_lens_telemetry::TelemetryHandle) of
//! [`setup_telemetry`](nemo_lens_telemetry::setup_telemetry). Every call site stays.
//!
//! - On nemo-lens's Prometheus endpoint (text and protobuf) bridged series
//!   keep the names `metrics-exporter-prometheus` writes: no `_total`, unit
//!   suffix or `_ratio` added, `:` kept, `TYPE counter` whatever a counter's
//!   name ends with, and no `otel_scope_*` labels. Every other instrument
//!   keeps nemo-lens's naming.
//! - Over OTLP each name goes out as one the SDK accepts (`:` becomes `.`;
//!   a name not starting with a letter gets `m-` in front), with its unit in
//!   UCUM (`Unit::Seconds` is `s`, `Unit::Microseconds` `us`).
//! - Histograms a [`Matcher`] selects get exactly its buckets; the others
//!   are exponential histograms: native ones on a protobuf scrape, buckets
//!   at powers of two in the text format. Names given to
//!   [`set_summary_for_metric`](MetricsBridge::set_summary_for_metric) are
//!   Prometheus summaries instead, with `metrics-exporter-prometheus`'s
//!   quantiles and window, for dashboards that query `{quantile="0.99"}`.
//! - The facade's semantics: `absolute` never lowers a counter, gauge
//!   `increment`/`decrement`/`set` act on one value whatever handle they go
//!   through, label order does not split a series, the last of duplicate
//!   label keys wins, describing never creates a series and gives HELP
//!   whenever it comes (OTLP carries the description and unit only when the
//!   description came before the name's first use).
//! - `NEMO_LENS_CARDINALITY_LIMIT` and its overflow warning apply to each
//!   bridged name; a name used as two kinds is exported as the first and
//!   warned about once; [`idle_timeout`](MetricsBridge::idle_timeout) never
//!   expires a series whose handle the application holds.
//! - Registration, which the macros make on every call, is a lock-free
//!   look-up comparing whole keys; a key's first use builds its series
//!   under a lock.
//!
//! The guide chapter `nemo_lens::guides::metrics_bridge` lists every
//! difference from `metrics-exporter-prometheus` (no push gateway, Unix socket listener or
//! IP allow-list, among others).
//!
//! With the `metrics-bridge-023` feature the same recorder also implements
//! `metrics` 0.23's `Recorder`: pass it to that version's
//! `set_global_recorder`.
//!
//! ```
//! # #[cfg(feature = "prometheus")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use nemo_lens::metrics_bridge::{Matcher, MetricsBridge};
//! use nemo_lens::prometheus::PrometheusRenderer;
//! use nemo_lens::telemetry::PrometheusResourceLabels;
//! use nemo_lens::{EnvLookup, NemoLensConfig, SetupOptions};
//!
//! let config = NemoLensConfig::from_lookup(EnvLookup::from_pairs([("NEMO_LENS_ENABLED", "true")]))?;
//! // Your Prometheus endpoint as usual; a renderer here, to print it.
//! let (reader, renderer) = PrometheusRenderer::new(&PrometheusResourceLabels::None)?;
//! let telemetry = SetupOptions::new().metric_reader(reader).setup(&config, 0, 1)?;
//!
//! let recorder = MetricsBridge::new()
//!     .set_buckets_for_metric(Matcher::Suffix("duration_seconds".into()), &[0.1, 0.5, 1.0])?
//!     .add_global_label("service", "router")
//!     .build(&telemetry); // or `.install(&telemetry)?` for the global recorder
//! metrics::with_local_recorder(&recorder, || {
//!     metrics::describe_counter!("smg_http_requests_total", "HTTP requests");
//!     metrics::counter!("smg_http_requests_total", "method" => "GET").increment(1);
//!     metrics::histogram!("smg_http_request_duration_seconds").record(0.3);
//! });
//!
//! let text = String::from_utf8(renderer.render()?.body)?;
//! assert!(text.contains("# TYPE smg_http_requests_total counter\n"));
//! assert!(text.contains("smg_http_requests_total{method=\"GET\",service=\"router\"} 1\n"));
//! assert!(text.contains("smg_http_request_duration_seconds_bucket{service=\"router\",le=\"0.5\"} 1\n"));
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "prometheus"))]
//! # fn main() {}
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// First: the modules after it use its macro.
#[macro_use]
mod facade_impl;

mod builder;
#[cfg(feature = "metrics-023")]
mod compat_023;
mod error;
mod family;
mod handles;
mod matcher;
mod names;
mod recorder;
mod registry;
mod summary;
mod timeouts;

pub use builder::MetricsBridge;
pub use error::BridgeError;
pub use matcher::Matcher;
/// Which kinds of metric [`MetricsBridge::idle_timeout`] applies to
/// (`metrics_util`'s type, as in `metrics-exporter-prometheus`).
pub use metrics_util::MetricKindMask;
pub use recorder::BridgeRecorder;
